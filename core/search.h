// search.h: the plans worth considering for a model, a cluster of a given size and a workload.
// Enumerates TP (within the NVLink domain), PP, CP, EP (MoE), DP (what the GPU count leaves),
// schedule (1F1B, interleaved with 2 or 4 chunks, ZB-H1), micro-batch, recompute and the
// distributed optimizer; keeps the valid plans (validate()), evaluates each, and ranks those that
// fit by tokens/s. Sequence parallelism is on whenever TP > 1 (it only saves memory and never costs
// more in this model). Fixed from the base config: model, cluster, workload, rank order, overlap flags.
#pragma once
#include <vector>

#include "core/estimate.h"

namespace cutlab {

struct SearchOptions {
  int top = 10;                      // plans returned
  double max_memory_fraction = 1.0;  // of usable HBM a plan may use to count as fitting
};

struct RankedPlan {
  Plan plan;
  double step_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  double peak_memory_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
};

struct SearchResult {
  std::vector<RankedPlan> best;  // fitting plans, fastest first; if none fits, the smallest-memory ones
  long long candidates = 0;      // plans enumerated
  long long valid = 0;           // that passed validate()
  long long fitting = 0;         // that fit in memory
};

// `base.cluster.gpus` must be set (the GPU count to fill).
Result<SearchResult> search_plans(const Config& base, const SearchOptions& options = {});

}  // namespace cutlab
