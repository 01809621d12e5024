// scene_pareto.h: the serving search's Pareto plot (core/serving_search.h): output tokens/s per GPU
// (y) against output tokens/s per user (x, = 1/TPOT), the chart engine vendors publish for a model
// on a system (TensorRT-LLM and Dynamo "throughput vs interactivity"). Every fitting point of the
// search is a faint mark; the front is a line through dots, each dot answering the pointer with
// `hit` "point" and `begin` = its index in the result's front (end = begin + 1), its plan labelled
// at the two ends; a TPOT limit is a dashed vertical line at 1/limit. Linear axes from 0 with
// 1–2–5 steps. Drawn by every front end from this figure: the page's canvas, `cutlab search --svg`.
// With the disaggregated deployments (disaggregation_search.h) their front is a second line in the
// pipeline hue, its dots answering with `hit` "disaggregated" and `begin` = the index in its front,
// and a legend names the two.
#pragma once
#include "core/disaggregation_search.h"
#include "core/figure.h"
#include "core/serving_search.h"

namespace cutlab {

// `width` in pixels (≥ 200); the height is 0.55 × width, between 260 and 460. `title` heads it.
Figure pareto_scene(const ServingSearchResult& r, const ServingSearchOptions& limits, const std::string& title, double width,
                    const DisaggregatedSearchResult* disaggregated = nullptr);

// The plot's title for a search of `c`: "llama3-8b on 8 × H100 SXM · prompt 1024 · output 256"; at a
// request rate "… on up to 8 × H100 SXM · 20.0 requests/s · prompt 1024 · output 256" (plans may use
// fewer GPUs, serving_search.h).
std::string pareto_title(const Config& c);

// Short label of a serving plan: "TP8 · PP2 · EP8 · DP2 · b64" (axes of 1 left out but TP).
std::string serving_plan_label(const Plan& p, int batch);

// A 1–2–5 tick step giving about `ticks` intervals over [0, max].
double nice_step(double max, int ticks);

}  // namespace cutlab
