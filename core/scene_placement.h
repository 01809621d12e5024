// scene_placement.h: the Placement figure, where the weights land. Nodes are boxes of GPUs (8,
// or 72 for NVL72); each GPU shows what it holds; NVLink inside a node and scale-out between nodes
// are drawn with a width that grows with the bytes each GPU moves (estimate.comm). Three levels of
// detail, by GPU count: every GPU labelled (≤ 64 GPUs), every GPU a cell coloured by the axis
// that varies inside a node (≤ 1,024), and above that one row per pipeline stage with each
// distinct kind of node drawn once with its count (16,384 GPUs: one row per stage). Serving adds a
// load balancer in front of the data-parallel replicas.
// The figure is bounded for any input: at most 64 stage rows and 16,384 cells in the aggregated
// view; every GPU is asked about through gpu_placement() (placement.h), never recomputed here.
#pragma once
#include "core/choices.h"
#include "core/estimate.h"
#include "core/figure.h"
#include "core/scene_input.h"

namespace cutlab {

// `width` in pixels (≥ 200); the height follows from the content. `e` is evaluate(c).
Figure placement_scene(const Resolved& r, const Estimate& e, double width);

// The level of detail for `gpus` GPUs: full, cells or stages.
const char* placement_level(int gpus);

// Does a collective on `axis` run between data-parallel replicas (GPUs holding different copies
// of the weights)? From the replicas of rank 0's group on that axis (gpu_placement().replica).
bool crosses_replicas(const Resolved& r, Axis axis);

}  // namespace cutlab
