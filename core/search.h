// search.h: the plans worth considering for a model, a cluster of a given size and a workload.
// The space: TP (every divisor of the GPU count up to the heads; a TP group crossing nodes is priced
// as such), PP, CP (sequences ≥ 16k), EP and ETP (folding, experts without TP) for MoE, DP (what the
// GPU count leaves), every schedule with every VPP that divides the layers, every micro-batch that
// divides the batch of a replica, ZeRO 0–3 × the distributed optimizer, SP, recompute (none, full,
// per-op SAC, selective with the module sets the model has), TP-communication overlap and the DP
// overlap flags. A field given in SearchOptions::fixed keeps the base config's value; the others are
// searched (api::search fixes the keys present in the config's "plan"). Model, cluster, workload, rank
// order and the remaining plan fields always come from the base config.
// Before timing, a plan is pruned when it breaks a divisibility or schedule rule, when a choice is
// equivalent to one already taken (the same effective ZeRO stage) or dominated (SP, TP overlap and DP
// overlaps on never cost time or memory in this model), and when its model states alone (every
// activation left out) do not fit, and when its step cannot be shorter than the search's step-time
// bound (search_step_bound_s: a lower bound on its makespan, from its stages' op times without a
// simulation, above the top-th best of a seed of plans); the plans left are resolved, validated and
// simulated (the schedule's fast path) and those that fit ranked by tokens/s. Results do not depend on the thread count: ties are
// broken by the order of enumeration.
// The space is cut into items (a mesh, a schedule with its VPP, a ZeRO choice, a micro-batch and a
// recompute choice; every SP and overlap flag inside). search_part() searches a range of them, so that a caller that
// must not block (the page) can run the search piece by piece and show what it has so far;
// merge_search_parts() of the parts of any partition of the items is the one-shot search_plans()
// (which runs the items of each mesh and schedule on its threads the same way).
#pragma once
#include <string>
#include <vector>

#include "core/estimate.h"

namespace cutlab {

struct SearchOptions {
  int top = 10;                      // plans returned
  double max_memory_fraction = 1.0;  // of usable HBM a plan may use to count as fitting
  int threads = 1;                   // worker threads (≤ 1: the calling thread only; WASM: always 1)
  std::vector<std::string> fixed;    // plan keys (JSON names) kept from the base config
  bool prune = true;                 // false: evaluate every valid plan (the tests' reference)
  // The step-time bound (with prune): a plan whose step cannot be below it (makespan_lower_bound_s)
  // is not simulated. < 0: found by search_step_bound_s; 0: none; > 0: this one (a part of a search
  // takes the first part's, so that every part prunes alike).
  double step_bound_s = -1;
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
  std::vector<RankedPlan> best;     // fitting plans, fastest first; if none fits, the smallest-memory ones
  long long candidates = 0;         // plans in the space (every combination of the searched fields)
  long long pruned_invalid = 0;     // broke a divisibility or schedule rule, or failed validate()
  long long pruned_equivalent = 0;  // the same plan as one enumerated (equivalent or dominated choices)
  long long pruned_memory = 0;      // model states alone exceed the memory allowed
  long long pruned_bound = 0;       // valid, but cannot be faster than the step-time bound
  long long evaluated = 0;          // simulated
  long long valid = 0;              // plans that passed validate(): evaluated + pruned_bound
  long long fitting = 0;            // evaluated plans that fit in memory
  double step_bound_s = 0;          // the step-time bound the search pruned with (0: none)
};

// The divisors of n up to `limit`, ascending (the sizes an axis can take; the serving search too).
std::vector<int> divisors_up_to(long long n, long long limit);

// `base.cluster.gpus` must be set (the GPU count to fill).
Result<SearchResult> search_plans(const Config& base, const SearchOptions& options = {});

// A piece of the search: its counts and its best `top`, each with its enumeration order.
struct SearchPart {
  SearchResult result;           // counts of its items; best: its best `top`, best first
  std::vector<long long> order;  // the enumeration order of each of result.best (ties in the merge)
  long long items = 0;           // items in the whole space
  long long next = 0;            // the first item after those searched (the range's end unless the budget ran out)
};

// Items [first, first + count) of the space (clamped to it; search_items: how many there are).
// memory_prune false: no plan is pruned for its model states (the second pass, below). budget_s > 0:
// stop after the item during which that much time has passed since the call, the space's setup
// included, the items having had at least a quarter of it (at least one item is searched; `next` says
// where to go on): the only input that reads a clock, and it changes where the part ends, never what
// the merge of a partition gives.
Result<SearchPart> search_part(const Config& base, const SearchOptions& options, long long first, long long count,
                               bool memory_prune = true, double budget_s = 0);
long long search_items(const Config& base, const SearchOptions& options);  // 0 when the config cannot be searched

// The step-time bound: the `top`-th shortest step among the fitting seed plans: for each mesh with
// the space's first schedule (1F1B when searched), its first ZeRO choice with the distributed
// optimizer, micro-batches 1 and 2, no recompute and selective recompute of core attention (where
// the space has them), each with the flags a plan of the full pass takes. Those
// are plans of the space, so a plan that cannot be faster than the bound cannot enter the best
// `top`. 0 (none) when fewer than `top` seeds fit, or the config cannot be searched.
double search_step_bound_s(const Config& base, const SearchOptions& options);

// The parts of a partition of the items merged: the counts summed, the best `top` of all, ties
// broken by the enumeration order (the same ranking as search_plans for any partition). When no
// plan fit and the memory bound pruned some (needs_second_pass), search_plans answers with the plans
// closest to fitting: search every item again with memory_prune false and merge those parts instead.
// The merge is itself a part (its order kept): merging merges of disjoint shards gives the same.
SearchPart merge_search_parts(const std::vector<SearchPart>& parts, int top);
bool needs_second_pass(const SearchResult& merged);

}  // namespace cutlab
