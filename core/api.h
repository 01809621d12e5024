// api.h: the one façade of the core, shared by the CLI and the WASM module. Each call reads a
// config (JSON text), resolves it once (core/resolved.h) and answers in two forms:
//   - typed (`Answer<T>`): the CLI draws its tables from these;
//   - JSON text: {"ok": true, "result": …} or {"ok": false, "errors": [{"code", "path", "message"}, …],
//     "config": the config as read, whenever it could be read}. `cutlab … --json` prints exactly this.
// Nothing throws.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/disaggregation.h"
#include "core/disaggregation_search.h"
#include "core/error.h"
#include "core/estimate.h"
#include "core/placement.h"
#include "core/scene.h"
#include "core/search.h"
#include "core/serving_search.h"
#include "core/stage_balance.h"

namespace cutlab::api {

// A value, or the errors that prevented it and the config as far as it could be read.
template <class T>
struct Answer {
  Result<T> result;
  std::optional<Config> config;
  // Not priced by this build (the page's first module, below): its errors say why, and its JSON
  // carries "pending": true, which the page reads as "ask the full module".
  bool pending = false;
  bool ok() const { return result.ok(); }
};

struct Evaluated {
  Resolved resolved;
  Estimate estimate;
};

// Typed calls.
Answer<Config> read(const std::string& config_text);       // reading errors and broken rules
Answer<Resolved> resolve(const std::string& config_text);  // read, then validated and resolved
// The last config's answer is kept: asking again for the same text (the page's estimate, then its
// figure) does not evaluate again.
Answer<Evaluated> evaluate(const std::string& config_text);
std::size_t evaluations();  // evaluations run so far on this thread (tests, the page's timing)
// What GPUs first … first + count − 1 hold (count ≤ 4,096).
Answer<std::vector<GpuPlacement>> gpus(const std::string& config_text, int first, int count);
Answer<SearchResult> search(const std::string& config_text, const SearchOptions& options);
// One shard of that search (search.h: search_part; the same fixed keys).
Answer<SearchPart> search_part(const std::string& config_text, const SearchOptions& options, long long first, long long count,
                               bool memory_prune, double budget_s = 0);
Answer<StageBalance> balance(const std::string& config_text, const StageBalanceOptions& options);
// Serving plans ranked under latency limits, and their Pareto front (serving_search.h).
Answer<ServingSearchResult> serving_search(const std::string& config_text, const ServingSearchOptions& options);
// Disaggregated deployments ranked under the same limits, and their front (disaggregation_search.h).
Answer<DisaggregatedSearchResult> disaggregated_search(const std::string& config_text, const ServingSearchOptions& options);
// Prefill and decode on separate pools (disaggregation.h). The config holds a top-level section
//   "disaggregation": {"prefill": POOL, "decode": POOL},
//   POOL = {"gpus": N, "plan": {…}, "batch": N, "max_num_tokens": N}
// each pool's plan merged over the config's plan without its mesh axes (tp, pp, cp, ep, dp, etp,
// vpp, layers_per_stage), its batch and max_num_tokens over the workload's (prefill's batch
// defaults to max(1, max_num_tokens / prompt_len): whole prompts filling one step; a mix of lengths:
// its mean prompt). A problem in a
// pool is reported at its path in the section (/disaggregation/decode/plan/tp).
struct DisaggregationRun {
  Disaggregated result;
  Config prefill, decode;  // each pool's config as evaluated
};
Answer<DisaggregationRun> disaggregate(const std::string& config_text);
bool has_disaggregation(const std::string& config_text);  // the text is an object with that section

// Scenes (core/scene.h). Training: the simulated schedule with each stage's DP tail and optimizer
// step; serving: three decode steps walking the stages.
Scene timeline(const Evaluated& e, const TimelineLayout& layout);

// JSON text of a typed answer (the CLI's --json).
std::string to_json_text(const Answer<Evaluated>& a);
std::string schedule_json_text(const Answer<Evaluated>& a);
std::string to_json_text(const Answer<std::vector<GpuPlacement>>& a);
std::string to_json_text(const Answer<SearchResult>& a);
std::string to_json_text(const Answer<StageBalance>& a);
std::string to_json_text(const Answer<ServingSearchResult>& a);
std::string to_json_text(const Answer<DisaggregatedSearchResult>& a);
std::string to_json_text(const Answer<DisaggregationRun>& a);

// JSON text in, JSON text out (the WASM module binds these).
std::string evaluate_json(const std::string& config_text);  // result: the estimate (README schema)
// The page's first module (web/core.js: wasm/bindings.cpp built with CUTLAB_WASM_FIRST_VIEW) prices
// training only, so that the serving model (core/inference.h and what it calls, about 10 KB of its
// 150 KB gzip) stays out of its code: these answer as evaluate_json and cuts_scene_json do, byte for
// byte, for every config but a valid serving one, which answers {"ok": false, "pending": true,
// "errors": [at /workload/mode], "config": …}: the full module (core-full.js) prices it.
std::string training_evaluate_json(const std::string& config_text);
std::string training_cuts_scene_json(const std::string& config_text, double width, int layer);
std::string schedule_json(const std::string& config_text);  // result: the schedule with every op
// result: the pipeline timeline's geometry for `width` × `height` pixels (height 0: rows of 22 px).
std::string timeline_json(const std::string& config_text, double width, double height);
std::string gpus_json(const std::string& config_text, int first, int count);
std::string gpu_json(const std::string& config_text, int rank);  // result: what one GPU holds
// result: the fastest plans that fit for the config's model, cluster.gpus and workload (search.h).
std::string search_json(const std::string& config_text, int top);
// The same search in pieces, for a caller that must stay responsive (the page): result: items
// [first, first + count) of the space (search.h: search_part), the keys of search_json's result and
// "order" (the enumeration order of each plan of "best"), "items" (in the whole space; count 0 asks
// only for that) and "next" (the first item not searched: with budget_ms > 0 the part stops once
// that much time has passed, after at least one item). memory_prune false: the second pass (below).
// step_bound_s: the search's step-time bound (search.h SearchOptions::step_bound_s): < 0 finds it
// (the first part), which the answer gives back as "step_bound_s" (0: none) for the next parts.
std::string search_part_json(const std::string& config_text, int top, int first, int count, bool memory_prune, double budget_ms,
                             double step_bound_s);
// result: the parts (a JSON array of search_part_json results, or of merges) merged: search_json's
// result (the same for any partition of the items once all are in), with "order", "items" and
// "second_pass": true when no plan fit and the memory bound pruned some, so that every item must be
// searched again with memory_prune false and those parts be merged instead (search.h).
std::string search_merge_json(const std::string& parts_text, int top);
// result: the serving search (serving_search.h) under a TTFT and a TPOT limit in milliseconds (0:
// none), and with `width` ≥ 200 its Pareto plot laid out for that many pixels ("figure",
// core/scene_pareto.h); `top` plans in "best". With `disaggregated`, the disaggregated search
// (disaggregation_search.h) too: its result under "disaggregated" and its front in the figure, or,
// when the workload cannot be served disaggregated, its errors under "disaggregated_errors".
std::string serving_search_json(const std::string& config_text, int top, double max_ttft_ms, double max_tpot_ms, double width,
                                bool disaggregated);
// result: the disaggregated deployment (disaggregate() above).
std::string disaggregation_json(const std::string& config_text);
// result: a split of the layers over the stages that shortens the step and fits (stage_balance.h).
std::string balance_json(const std::string& config_text);
std::string options_json(const std::string& config_text);  // result: valid values per axis
std::string presets_json();                                // result: models and clusters
// result: the launch configuration of the config for `format` (core/launch.h: megatron,
// megatron-bridge, torchtitan, deepspeed, vllm, sglang): {format, file_name, text, unexpressed, notes}.
std::string launch_json(const std::string& config_text, const std::string& format);
// result: the Placement view's figure (core/figure.h, core/scene_placement.h) laid out for `width`
// pixels (200 to 20,000); its height follows from the content.
std::string placement_scene_json(const std::string& config_text, double width);
// result: the Cuts view's figure (core/scene_cuts.h) for `width` pixels with layer `layer` opened
// (0-based; −1: the default, the first MoE layer of an MoE model, else the first).
std::string cuts_scene_json(const std::string& config_text, double width, int layer);

}  // namespace cutlab::api
