// scene_cuts.h: the Cuts figure, the cut directions on the model itself. Left: the depth of the
// model, layers in pipeline stages (PP). Right: one layer opened up, every matrix in TP slices, an
// MoE layer's experts whole on EP ranks (ETP slices inside under folding), the sequence in CP
// chunks, and the DP replicas of all of it. Every range drawn (heads, FFN columns, experts,
// tokens, layers) is gpu_placement() of rank 0's group on the axis (placement.h).
// Bounded for any input: at most 1,024 experts and 256 CP ranks drawn one by one.
#pragma once
#include "core/estimate.h"
#include "core/figure.h"
#include "core/scene_input.h"

namespace cutlab {

// The layer opened when none is chosen: the first MoE layer of an MoE model, else the first.
int default_cuts_layer(const ModelSpec& m);

// `width` in pixels (≥ 200); `layer` the layer opened (−1 or out of range: default_cuts_layer).
Figure cuts_scene(const Resolved& r, const Estimate& e, double width, int layer = -1);

}  // namespace cutlab
