// draw.h: `cutlab draw --view cuts|placement|pipeline --svg FILE`: the figure of any view of the
// explorer as SVG, from the core's scenes (core/scene_cuts.h, core/scene_placement.h, and the
// pipeline's timeline scene, core/scene.h, placed in a figure with its title and legend), written
// by one SVG writer in the colours of the page (web/palette.js, web/figure.js).
#pragma once
#include <string>

#include "core/estimate.h"
#include "core/figure.h"

namespace cutlab::cli {

// The pipeline view as a figure `width` pixels wide: the training schedule with each stage's DP
// tail and optimizer step, or (serving) three decode steps walking the stages.
Figure pipeline_figure(const Resolved& r, const Estimate& e, double width);

// The figure of `view` (cuts, placement or pipeline); `layer` opens a layer in the cuts (−1: the
// default). `ok` is false for an unknown view.
Figure view_figure(const Resolved& r, const Estimate& e, const std::string& view, double width, int layer, bool& ok);

// Any figure as a standalone SVG document.
std::string figure_svg(const Figure& f);

}  // namespace cutlab::cli
