// disaggregation_search.h: the best disaggregated deployments (xPyD, disaggregation.h) of a model on a
// given number of GPUs for a request mix, beside the co-located plans of serving_search.h: each pool's
// instance mesh (TP, PP, EP as the serving search enumerates them) and batch, and how many instances of
// each the GPUs hold, ranked by output tokens/s per GPU under the TTFT and TPOT limits, with their
// Pareto front of tokens/s per GPU against tokens/s per user. The throughput–interactivity chart of
// disaggregated against co-located serving is what NVIDIA's Dynamo and its AIConfigurator publish
// for a model on a system; DistServe (Zhong et al. OSDI'24 §4) searches each phase's parallelism and
// the instances' ratio the same way, to the most goodput per GPU.
// How (each step exact for the steady state of disaggregation.h):
//   1. every instance mesh is evaluated once as a prefill pool (batches 1, 2, 4, … up to the prompts
//      that fill one step's token budget) and once per decode batch (1, 2, 4, … up to the search's
//      largest); a pool's requests/s grows with its instances (each serves its share of an offline
//      queue), so one instance gives ρ per instance, TTFT or TPOT, and its KV share per GPU;
//   2. options no other of the same instance size beats on rate, latency and KV share are kept;
//   3. each prefill × decode pair gets its best whole numbers of instances x, y that the N GPUs hold,
//      each instance within a node (disaggregation.h best_split, instances_fit): the deployment runs at
//      min(x·ρ_p, y·ρ_d, the KV links' rate), which rises with x in its first term and falls in the
//      others, so the best x sits beside their crossing;
//   4. the fastest pairs and the front are evaluated again as whole deployments
//      (evaluate_disaggregated), and those numbers are the ones reported. The limits are
//      first checked on each pool's latency at its batch, an upper bound: the whole evaluation gives the
//      latencies at the deployment's rate, where the pool that does not bound it runs below its batch.
// Output tokens/s per GPU divides by all N GPUs (idle ones included), as the co-located search fills
// all N. At a request rate λ (Poisson arrivals, disaggregation.h) each pair gets instead the fewest
// instances of each pool that serve more than λ (x·ρ_p > λ, y·ρ_d > λ, and the KV links), grown one
// instance at a time while the whole evaluation, with its waits for a slot, is past the limits; tokens/s
// per GPU is then λ · output_len over the GPUs it uses, so the fewest GPUs rank first, as in the
// co-located search at a rate. No num_requests (an offline run of N requests).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/disaggregation.h"
#include "core/serving_search.h"

namespace cutlab {

struct DisaggregatedPoint {
  Plan prefill_plan, decode_plan;  // one instance's mesh (dp 1) on the base plan
  int prefill_batch = 0, decode_batch = 0;
  int prefill_instances = 0, decode_instances = 0;
  int prefill_gpus = 0, decode_gpus = 0, idle_gpus = 0;
  double ttft_s = 0, tpot_s = 0, e2e_latency_s = 0;
  double output_tokens_per_s_per_user = 0;
  double output_tokens_per_s_per_gpu = 0;  // of all N GPUs; at a request rate, of those it uses
  double output_tokens_per_s_total = 0;
  double requests_per_s = 0;
  std::string bound;       // prefill, decode or kv_transfer
  bool saturated = false;  // the request rate is more than it serves
  bool within_limits = false;
};

struct DisaggregatedSearchResult {
  // Deployments within the limits, most output tokens/s per GPU first (one per decode option, with
  // its best prefill pool); when none is, those closest to the limits.
  std::vector<DisaggregatedPoint> best;
  // Their Pareto front (most tokens/s per user first); of every deployment when none meets the limits.
  std::vector<DisaggregatedPoint> front;
  bool front_within_limits = true;
  long long meshes = 0;           // instance meshes tried
  long long prefill_options = 0;  // mesh × batch that fit as a prefill pool
  long long decode_options = 0;   // mesh × batch that fit as a decode pool
  long long pairs = 0;            // prefill × decode options combined (after pruning)
  long long within_limits = 0;    // pairs whose best split meets the limits
  long long evaluations = 0;      // pool evaluations, bounded by max_evaluations
  bool truncated = false;         // the enumeration reached max_evaluations, or the pairs 2,000,000
};

// `base.cluster.gpus` (at least 2) is the GPU count to fill; the workload as disaggregation.h needs it.
Result<DisaggregatedSearchResult> search_disaggregated(const Config& base, const ServingSearchOptions& options = {});

nlohmann::json to_json(const DisaggregatedPoint& p);
nlohmann::json to_json(const DisaggregatedSearchResult& r);

// Short label: "2 × TP4 b4 → 1 × TP8 b64" (prefill → decode, axes of 1 left out but TP).
std::string disaggregated_label(const DisaggregatedPoint& p);

}  // namespace cutlab
