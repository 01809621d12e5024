// stage_balance.h: a split of the layers over the pipeline stages (plan.layers_per_stage, Megatron's
// num_layers_in_first/last_pipeline_stage generalised) that shortens the step and fits in memory.
// The stages of a split pipeline do unequal work: the first holds the input embedding, the last the
// output layer, the loss (and DeepSeek-V3's MTP module), dense and MoE layers cost differently, and
// under 1F1B the first stage keeps the most micro-batches in flight. A split is judged by the
// whole cost model (step time from the simulated schedule, peak memory per stage), not by a proxy:
// starting from the plan's split, each round moves one layer off the stage that limits the plan
// (the most memory while the plan does not fit, else the longest busy time) onto whichever stage
// gives the best evaluated plan, until no move helps. It is a local search over single-layer moves;
// a move of one layer is the smallest change a split allows, so the result is balanced to within a
// layer.
#pragma once
#include <vector>

#include "core/error.h"
#include "core/resolved.h"

namespace cutlab {

struct StageBalanceOptions {
  double max_memory_fraction = 1.0;  // of usable HBM a stage may use to count as fitting
  int max_evaluations = 400;         // evaluations of candidate splits (bounds the time: a page click); fewer for
                                     // long schedules: ≤ 2,000,000 simulated (micro-batch, chunk) pairs in all
};

// One split, evaluated.
struct StageSplit {
  std::vector<int> layers_per_stage;  // transformer layers per stage
  std::vector<double> busy_s;         // per stage, over the step
  std::vector<double> memory_bytes;   // peak per stage
  double capacity_bytes = 0;
  double step_s = 0;
  double tokens_per_s = 0;
  bool fits = false;
};

struct StageBalance {
  StageSplit current;    // the plan's own split
  StageSplit suggested;  // the best split found (the current one when no move helps)
  bool improved = false;
  int evaluations = 0;
};

// Errors: the config's own, and /plan/pp when there is no pipeline, /workload/mode when serving,
// /plan/embedding_in_pipeline_split (or loss_…) when the split counts them (Megatron-Core does not
// combine those with per-stage layer counts).
Result<StageBalance> balance_stages(const Config& base, const StageBalanceOptions& options = {});

}  // namespace cutlab
