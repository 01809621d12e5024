#include "core/serving_search.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "core/search.h"

namespace cutlab {

namespace {

ServingPoint point_of(const Plan& plan, int batch, const InferenceEstimate& r) {
  ServingPoint p;
  p.plan = plan;
  p.batch = batch;
  p.ttft_s = r.ttft_s, p.tpot_s = r.tpot_s, p.e2e_latency_s = r.e2e_latency_s;
  p.output_tokens_per_s_per_user = r.output_tokens_per_s_per_user;
  p.output_tokens_per_s_per_gpu = r.output_tokens_per_s_per_gpu;
  p.output_tokens_per_s_total = r.output_tokens_per_s_total;
  p.requests_per_s = r.requests_per_s;
  p.concurrency = r.concurrency;
  p.concurrency_limit = r.concurrency_limit;
  p.max_batch_that_fits = r.max_batch_that_fits;
  const StageMemory& peak = r.memory.per_stage[static_cast<size_t>(r.memory.peak_stage)];
  p.peak_memory_bytes = peak.total_bytes;
  p.capacity_bytes = peak.capacity_bytes;
  p.fits = r.memory.fits && r.concurrency > 0 && r.output_tokens_per_s_per_gpu > 0;
  p.saturated = r.saturated;
  return p;
}

}  // namespace

double over_limits(double ttft_s, double tpot_s, const ServingSearchOptions& o) {
  double x = 0;
  if (o.max_ttft_s > 0) x = std::max(x, ttft_s / o.max_ttft_s);
  if (o.max_tpot_s > 0) x = std::max(x, tpot_s / o.max_tpot_s);
  return x;
}

Errors serving_search_errors(const Config& base, const ServingSearchOptions& opt) {
  Errors errors;
  if (base.cluster.gpus <= 0) {
    errors.push_back({ErrorCode::MissingKey, "/cluster/gpus", "the serving search needs the GPU count to fill (cluster.gpus)"});
    return errors;
  }
  if (base.workload.mode != Mode::Infer)
    errors.push_back(
        {ErrorCode::Incompatible, "/workload/mode", "the serving search ranks serving plans: set workload.mode \"infer\""});
  if (opt.top < 1 || opt.top > 1000) errors.push_back({ErrorCode::OutOfRange, "/search/top", "top must be between 1 and 1000"});
  if (!(opt.max_ttft_s >= 0 && opt.max_ttft_s <= 1e6))
    errors.push_back({ErrorCode::OutOfRange, "/search/max_ttft_ms", "the TTFT limit must be ≥ 0 (0: none) and finite"});
  if (!(opt.max_tpot_s >= 0 && opt.max_tpot_s <= 1e6))
    errors.push_back({ErrorCode::OutOfRange, "/search/max_tpot_ms", "the TPOT limit must be ≥ 0 (0: none) and finite"});
  if (opt.max_batch < 1 || opt.max_batch > (1 << 20))
    errors.push_back({ErrorCode::OutOfRange, "/search/max_batch", "the largest batch must be between 1 and 1,048,576"});
  if (opt.max_evaluations < 1 || opt.max_evaluations > 1000000)
    errors.push_back({ErrorCode::OutOfRange, "/search/max_evaluations", "must be between 1 and 1,000,000"});
  if (!errors.empty()) return errors;
  // What no plan can fix (output_len 0, an unknown KV dtype read as a reading error upstream, a
  // batching that contradicts the request rate): the workload's rules on a one-GPU plan.
  Cluster one = base.cluster;
  one.gpus = 0;
  for (const Error& e : validate(base.model, one, Plan{}, base.workload))
    if (e.path.rfind("/workload/", 0) == 0 && e.path != "/workload/batch") errors.push_back(e);
  return errors;
}

Result<ServingSearchResult> search_serving(const Config& base, const ServingSearchOptions& opt) {
  Result<ServingSearchResult> out;
  out.errors = serving_search_errors(base, opt);
  if (!out.errors.empty()) return out;
  ServingSearchResult& r = out.value;
  const ModelSpec& m = base.model;
  const long long N = base.cluster.gpus;
  r.gpus = base.cluster.gpus;
  r.request_rate_per_s = base.workload.request_rate_per_s;
  // At a request rate a deployment needs only the replicas that keep up: each mesh is also tried on
  // fewer of them (the other GPUs left idle), and tokens/s per GPU counts the GPUs it uses, so the
  // fewest GPUs that meet the limits rank first. More replicas share the rate, so a request waits
  // less for a slot and each step holds fewer sequences: meeting the limits is monotone in the
  // replicas, and a bisection finds the fewest (about log2 of the replicas more meshes, each over
  // its batches). A mesh need not then divide the GPUs (TP 8 on 8 of 12): each axis also takes the
  // powers of two up to its bound.
  const bool at_rate = base.workload.request_rate_per_s > 0;
  auto axis = [&](long long bound) {
    std::vector<int> v = divisors_up_to(N, bound);
    if (at_rate)
      for (long long k = 1; k <= std::min(N, bound); k *= 2)
        if (std::find(v.begin(), v.end(), k) == v.end()) v.push_back(static_cast<int>(k));
    std::sort(v.begin(), v.end());
    return v;
  };
  const std::vector<int> tps = axis(std::max(1, base.cluster.gpus_per_node));
  const std::vector<int> pps = axis(m.layers);
  const std::vector<int> eps = is_moe(m) ? axis(m.experts) : std::vector<int>{1};
  std::vector<ServingPoint> all;
  for (int tp : tps)
    for (int pp : pps)
      for (int ep : eps) {
        const long long rest = static_cast<long long>(tp) * pp * ep;
        if (at_rate ? rest > N : N % rest != 0) continue;
        // This mesh on `replicas` replicas over its batches: whether one of them meets the limits.
        auto try_replicas = [&](long long replicas) {
          bool met = false;
          Config c = base;
          Plan& p = c.plan;
          p.tp = tp, p.pp = pp, p.cp = 1, p.ep = ep, p.dp = static_cast<int>(replicas), p.etp = 0;
          p.sp = false, p.vpp = 1, p.layers_per_stage.clear();
          c.cluster.gpus = static_cast<int>(replicas * rest);
          c.workload.batch = 1;
          Result<Resolved> resolved = resolve(c);
          double rate_wait_s = -1;  // the wait of the last batch the request rate limited
          for (int b = 1; b <= opt.max_batch; b *= 2) {
            if (r.candidates >= opt.max_evaluations) {
              r.truncated = true;
              break;
            }
            ++r.candidates;
            if (!resolved.ok()) continue;
            ++r.valid;
            resolved.value.config.workload.batch = b;
            const ServingEstimate e = evaluate_serving(resolved.value);
            ServingPoint pt = point_of(p, b, e.serving);
            if (!pt.fits) break;  // a larger batch does not fit either
            // Past what the request rate keeps in flight a larger batch runs the same sequences; only
            // more free slots can shorten a request's wait (slot_queue). One that shortens none (the
            // wait left is for the step in progress) is the same point again: it and any larger go.
            const bool rate_bound = e.serving.concurrency_limit == ConcurrencyLimit::RequestRate;
            if (rate_bound && rate_wait_s >= 0 && e.serving.prefill.queue_s >= rate_wait_s) break;
            ++r.fitting;
            pt.gpus = c.cluster.gpus;
            // A plan the request rate saturates waits without bound for a slot: it meets no limit,
            // whatever its latencies before the wait (inflight_concurrency, core/serving_batching.h).
            pt.within_limits = !pt.saturated && over_limits(pt.ttft_s, pt.tpot_s, opt) <= 1.0;
            r.within_limits += pt.within_limits;
            met = met || pt.within_limits;
            all.push_back(pt);
            // Past what the KV cache holds a larger batch runs the same sequences: the same point. Past
            // what the request rate keeps in flight the batch doubles on while the wait is over 1% of
            // TTFT (and falls, above).
            if (e.serving.concurrency_limit == ConcurrencyLimit::KvCache) break;
            if (rate_bound && e.serving.prefill.queue_s <= 0.01 * e.serving.ttft_s) break;
            if (rate_bound) rate_wait_s = e.serving.prefill.queue_s;
          }
          return met;
        };
        const long long most = N / rest;
        if (!try_replicas(most) || !at_rate) continue;
        long long fails = 0, meets = most;  // the fewest replicas that meet the limits are in (fails, meets]
        while (meets - fails > 1 && !r.truncated) {
          const long long mid = fails + (meets - fails) / 2;
          (try_replicas(mid) ? meets : fails) = mid;
        }
      }
  r.front_within_limits = rank_points(all, opt, r.best, r.front);
  std::sort(all.begin(), all.end(), faster_per_gpu<ServingPoint>);
  all.resize(std::min<size_t>(all.size(), 4096));
  r.points = std::move(all);
  return out;
}

nlohmann::json to_json(const ServingPoint& p) {
  return {{"plan", to_json(p.plan)},
          {"batch", p.batch},
          {"gpus", p.gpus},
          {"ttft_s", p.ttft_s},
          {"tpot_s", p.tpot_s},
          {"e2e_latency_s", p.e2e_latency_s},
          {"output_tokens_per_s_per_user", p.output_tokens_per_s_per_user},
          {"output_tokens_per_s_per_gpu", p.output_tokens_per_s_per_gpu},
          {"output_tokens_per_s_total", p.output_tokens_per_s_total},
          {"requests_per_s", p.requests_per_s},
          {"concurrency", p.concurrency},
          {"concurrency_limit", name_of(p.concurrency_limit)},
          {"max_batch_that_fits", p.max_batch_that_fits},
          {"peak_memory_bytes", p.peak_memory_bytes},
          {"capacity_bytes", p.capacity_bytes},
          {"fits", p.fits},
          {"saturated", p.saturated},
          {"within_limits", p.within_limits}};
}

nlohmann::json to_json(const ServingSearchResult& r) {
  auto list = [](const std::vector<ServingPoint>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const ServingPoint& p : v) a.push_back(to_json(p));
    return a;
  };
  // The cloud in short: [tokens/s per user, tokens/s per GPU, within limits] per point.
  nlohmann::json cloud = nlohmann::json::array();
  for (const ServingPoint& p : r.points)
    cloud.push_back({p.output_tokens_per_s_per_user, p.output_tokens_per_s_per_gpu, p.within_limits});
  return {{"gpus", r.gpus},
          {"request_rate_per_s", r.request_rate_per_s},
          {"candidates", r.candidates},
          {"valid", r.valid},
          {"fitting", r.fitting},
          {"within_limits", r.within_limits},
          {"truncated", r.truncated},
          {"front_within_limits", r.front_within_limits},
          {"best", list(r.best)},
          {"front", list(r.front)},
          {"points", cloud}};
}

}  // namespace cutlab
