// options.h: for each parallel axis, the values that keep the plan valid with every other field
// fixed (dp re-derived from cluster.gpus when it is set), so a UI offers only choices that work.
// Each candidate is checked with validate(): no rule is restated here.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/estimate.h"

namespace cutlab {

// Keys: tp, pp, cp, ep, etp, vpp, micro_batch (etp only for MoE models).
std::map<std::string, std::vector<int>> axis_options(const Config& config);

}  // namespace cutlab
