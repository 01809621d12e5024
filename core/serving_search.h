// serving_search.h: the serving plans worth considering for a model, a cluster of a given size and a
// request mix (workload.mode "infer"). Enumerates TP (within the NVLink domain), PP, EP for MoE
// models (tp 1 × ep n is attention data parallel with expert parallel, DeepSeek-V3 §3.4.2 and
// TensorRT-LLM's "DEP"; tp n alone shards the experts with attention, "TEP"), DP replicas (what the
// GPU count leaves; at a request rate also the fewest that meet the limits, the other GPUs idle) and
// the batch (most sequences per engine step, powers of 2 from 1 to 2,048); evaluates each with the
// serving model (core/inference.h, a black box here) and ranks the plans that fit and meet the
// latency limits by output tokens/s per GPU of the GPUs they use (at a request rate every plan that
// keeps up serves λ · output_len over its GPUs: the fewest GPUs first, then the shortest end-to-end
// latency, faster_per_gpu below). The Pareto front of output tokens/s per GPU against output
// tokens/s per user (1/TPOT) is the curve engine vendors publish for an operating range (NVIDIA's
// TensorRT-LLM and Dynamo throughput–interactivity charts; SemiAnalysis InferenceMAX): a point is on
// it when no other fitting point is at least as good on both axes and better on one.
// Fixed from the base config: model, cluster, workload (lengths, dtypes, max_num_tokens, request
// rate), the plan's other fields (dispatcher, rank order). Ignores: CP (serving runs cp 1), expert
// TP folding, weight dtypes other than the config's.
#pragma once
#include <algorithm>
#include <cmath>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "core/estimate.h"

namespace cutlab {

struct ServingSearchOptions {
  int top = 10;                       // plans returned in `best`
  double max_ttft_s = 0;              // time to first token at most this (0: no limit)
  double max_tpot_s = 0;              // time per output token at most this (0: no limit)
  int max_batch = 2048;               // batches 1, 2, 4, … up to this
  long long max_evaluations = 20000;  // the enumeration's bound: past it the search stops and says so
};

struct ServingPoint {
  Plan plan;      // tp, pp, ep, dp (the search's choices) on the base plan
  int batch = 1;  // workload.batch
  int gpus = 0;   // the GPUs it uses (cluster.gpus of its config): tp × pp × ep × dp
  double ttft_s = 0, tpot_s = 0, e2e_latency_s = 0;
  double output_tokens_per_s_per_user = 0;
  double output_tokens_per_s_per_gpu = 0;
  double output_tokens_per_s_total = 0;
  double requests_per_s = 0;
  double concurrency = 0;  // sequences in flight per replica
  ConcurrencyLimit concurrency_limit = ConcurrencyLimit::Batch;
  long long max_batch_that_fits = 0;
  double peak_memory_bytes = 0, capacity_bytes = 0;
  bool fits = false;           // the weights and this batch's KV cache fit
  bool saturated = false;      // the request rate is more than it serves: its queue grows without bound
  bool within_limits = false;  // fits, keeps up with the request rate, and TTFT and TPOT meet the limits
};

struct ServingSearchResult {
  int gpus = 0;                   // the GPUs searched (cluster.gpus)
  double request_rate_per_s = 0;  // the rate searched at (0: offline, every plan on all the GPUs)
  // Plans that fit and meet the limits, most output tokens/s per GPU first (ties: faster_per_gpu);
  // when none does, the fitting plans closest to the limits (smallest max(TTFT/limit, TPOT/limit);
  // those that cannot keep up with the request rate last, the most requests/s per GPU first).
  std::vector<ServingPoint> best;
  // The Pareto front of the points that fit and meet the limits, most tokens/s per user first
  // (so tokens/s per GPU rises along it); when none meets the limits, the front of those that fit.
  std::vector<ServingPoint> front;
  // Every fitting point (the plot's cloud), at most 4,096 of them (the fastest per GPU kept).
  std::vector<ServingPoint> points;
  bool front_within_limits = true;  // false: no point meets the limits, `front` is of the fitting ones
  long long candidates = 0;         // plan × batch enumerated
  long long valid = 0;              // that passed validation
  long long fitting = 0;            // that fit in memory
  long long within_limits = 0;      // that also meet the TTFT and TPOT limits
  bool truncated = false;           // the enumeration reached max_evaluations
};

// The Pareto front of `points` (tokens/s per GPU against tokens/s per user, both larger is better),
// most tokens/s per user first; equal points appear once (the shortest end-to-end latency of them,
// where the point has one). Any point type with output_tokens_per_s_per_user and
// output_tokens_per_s_per_gpu (the disaggregated deployments too).
template <class Point>
std::vector<Point> pareto_front(std::vector<Point> points) {
  // Most tokens/s per user first (ties: most per GPU first); a point joins the front when it beats
  // every point before it on tokens/s per GPU (those are at least as fast per user).
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    if (a.output_tokens_per_s_per_user != b.output_tokens_per_s_per_user)
      return a.output_tokens_per_s_per_user > b.output_tokens_per_s_per_user;
    if (a.output_tokens_per_s_per_gpu != b.output_tokens_per_s_per_gpu)
      return a.output_tokens_per_s_per_gpu > b.output_tokens_per_s_per_gpu;
    if constexpr (requires { a.e2e_latency_s; }) return a.e2e_latency_s < b.e2e_latency_s;  // equal on both: the shorter wait
    return false;
  });
  std::vector<Point> front;
  double best_per_gpu = -1;
  for (const Point& p : points)
    if (p.output_tokens_per_s_per_gpu > best_per_gpu) {
      front.push_back(p);
      best_per_gpu = p.output_tokens_per_s_per_gpu;
    }
  return front;
}

// A rate to 24 significant bits (about 6e-8 of it): what its last bits hold is rounding, not a
// difference between two plans (at a request rate, Little's law's root is found to 1e-9 of the slots,
// so two plans serving the same rate differ by up to about that: 32 bits broke such ties by it).
inline double rate_key(double x) {
  int e = 0;
  const double m = std::frexp(x, &e);
  return std::ldexp(std::round(std::ldexp(m, 24)), e - 24);
}

// More output tokens/s per GPU first; ties: the shorter end-to-end latency where the point has one,
// then more per user. At a request rate every plan that keeps up serves the same tokens/s per GPU
// (λ · output_len / GPUs, up to rounding), and the tie decides: a plan near its last slot waits long
// for one (slot_queue) though its TPOT may be the shortest.
template <class Point>
bool faster_per_gpu(const Point& a, const Point& b) {
  const double ka = rate_key(a.output_tokens_per_s_per_gpu), kb = rate_key(b.output_tokens_per_s_per_gpu);
  if (ka != kb) return ka > kb;
  if constexpr (requires { a.e2e_latency_s; })
    if (a.e2e_latency_s != b.e2e_latency_s) return a.e2e_latency_s < b.e2e_latency_s;
  return a.output_tokens_per_s_per_user > b.output_tokens_per_s_per_user;
}

// How far a TTFT and a TPOT are past the limits: max(TTFT/limit, TPOT/limit), ≤ 1 within them.
double over_limits(double ttft_s, double tpot_s, const ServingSearchOptions& limits);

// The `top` best of `points` and their front, for a point type with within_limits, saturated,
// ttft_s and tpot_s: the points within the limits, most output tokens/s per GPU first
// (faster_per_gpu), and their Pareto front; when none is, the closest to the limits (smallest
// over_limits; those the request rate saturates last, the most per GPU first) and the front of them
// all. Whether any point is within the limits (or there is none).
template <class Point>
bool rank_points(const std::vector<Point>& points, const ServingSearchOptions& opt, std::vector<Point>& best,
                 std::vector<Point>& front) {
  std::vector<Point> within;
  for (const Point& pt : points)
    if (pt.within_limits) within.push_back(pt);
  front = pareto_front(within.empty() ? points : within);
  const bool any = !within.empty();
  best = any ? std::move(within) : points;
  if (any) std::sort(best.begin(), best.end(), faster_per_gpu<Point>);
  else
    std::sort(best.begin(), best.end(), [&](const Point& a, const Point& b) {
      if (a.saturated != b.saturated) return b.saturated;
      const double x = over_limits(a.ttft_s, a.tpot_s, opt), y = over_limits(b.ttft_s, b.tpot_s, opt);
      return x != y && !a.saturated ? x < y : faster_per_gpu(a, b);
    });
  best.resize(std::min<size_t>(best.size(), static_cast<size_t>(opt.top)));
  return any || points.empty();
}

// What makes a search impossible whatever the plan: no GPU count, a training workload, options out of
// range, a workload the serving model rejects (its paths: /cluster/gpus, /search/…, /workload/…).
Errors serving_search_errors(const Config& base, const ServingSearchOptions& options);

// `base.cluster.gpus` must be set (the GPU count to fill) and base.workload.mode be "infer".
Result<ServingSearchResult> search_serving(const Config& base, const ServingSearchOptions& options = {});

// JSON of a result: keys = field names; plans as core/json_io.h writes them.
nlohmann::json to_json(const ServingPoint& p);
nlohmann::json to_json(const ServingSearchResult& r);

}  // namespace cutlab
