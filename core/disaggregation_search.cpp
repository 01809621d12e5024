#include "core/disaggregation_search.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/json_io.h"
#include "core/scene_pareto.h"
#include "core/search.h"

namespace cutlab {

namespace {

// The pairs combined at most (about 0.2 s natively; DeepSeek-V3 on 16,128 GB200 GPUs pairs 42,712).
constexpr long long kMaxPairs = 2000000;
// At a request rate, the deployments evaluated whole at most (growth steps included): each is two
// pool evaluations, about 50 µs natively.
constexpr long long kWholeAtRate = 1000;

// One instance mesh in one role at one batch, evaluated as a pool of one instance.
struct PoolOption {
  Plan plan;
  int batch = 0;
  int gpus = 0;               // of one instance
  double requests_per_s = 0;  // of one instance
  double latency_s = 0;       // TTFT (prefill) or TPOT (decode)
  double kv_bytes_per_gpu = 0;
  size_t first = 0;  // decode: where its mesh's options (batch 1, 2, 4, …) start in the unpruned list
};

// The instance meshes worth a pool: TP within the NVLink domain (divisors of a node's GPUs), PP and EP
// in powers of two (EP for MoE models), one instance leaving at least one GPU for the other pool.
std::vector<Plan> instance_meshes(const Config& base) {
  const ModelSpec& m = base.model;
  const long long N = base.cluster.gpus;
  std::vector<Plan> meshes;
  for (int tp : divisors_up_to(std::max(1, base.cluster.gpus_per_node), std::max(1, base.cluster.gpus_per_node)))
    for (long long pp = 1; pp <= std::max(1, m.layers) && tp * pp < N; pp *= 2)
      for (long long ep = 1; ep <= (is_moe(m) ? m.experts : 1) && tp * pp * ep < N; ep *= 2) {
        Plan p = base.plan;
        p.tp = tp, p.pp = static_cast<int>(pp), p.cp = 1, p.ep = static_cast<int>(ep), p.dp = 1, p.etp = 0;
        p.sp = false, p.vpp = 1, p.layers_per_stage.clear();
        meshes.push_back(p);
      }
  return meshes;
}

// The config of a pool of `instances` copies of `mesh` at `batch`.
Config pool_config(const Config& base, const Plan& mesh, int instances, int batch) {
  Config c = base;
  c.plan = mesh;
  c.plan.dp = instances;
  c.cluster.gpus = static_cast<int>(mesh_without_dp(mesh) * instances);
  c.workload.batch = batch;
  return c;
}

// Keeps the options no other of the same instance size beats on rate, latency and KV share at once.
std::vector<PoolOption> undominated(const std::vector<PoolOption>& v) {
  std::vector<PoolOption> kept;
  for (const PoolOption& a : v) {
    bool beaten = false;
    for (const PoolOption& b : v) {
      if (&a == &b || a.gpus != b.gpus) continue;
      const bool no_worse = b.requests_per_s >= a.requests_per_s && b.latency_s <= a.latency_s &&
                            b.kv_bytes_per_gpu <= a.kv_bytes_per_gpu;
      const bool better = b.requests_per_s > a.requests_per_s || b.latency_s < a.latency_s || b.kv_bytes_per_gpu < a.kv_bytes_per_gpu;
      // Equal options: the first one stays.
      if (no_worse && (better || &b < &a)) {
        beaten = true;
        break;
      }
    }
    if (!beaten) kept.push_back(a);
  }
  return kept;
}

// A candidate deployment before it is evaluated whole.
struct Candidate {
  const PoolOption* prefill = nullptr;
  const PoolOption* decode = nullptr;
  DeploymentSplit split;
  double ttft_s = 0, tpot_s = 0;
  double output_tokens_per_s_per_gpu = 0, output_tokens_per_s_per_user = 0;  // estimated from one instance of each
  bool valid() const { return prefill != nullptr; }
};

// At a request rate λ: the fewest instances of each pool that serve more than λ, x·min(rp, gp·link) > λ
// and y·min(rd, gd·link) > λ (each pool's instances and the links they send or receive on), the
// capacity the deployment then has; x = 0 when they do not fit in the GPUs (instances_fit).
DeploymentSplit fewest_split(long long N, int C, int gp, int gd, double rp, double rd, double link_per_gpu, double rate) {
  const double a = std::min(rp, gp * link_per_gpu), b = std::min(rd, gd * link_per_gpu);
  if (!(a > 0 && b > 0) || rate / a >= double(N) || rate / b >= double(N)) return {};
  const long long x = static_cast<long long>(std::floor(rate / a)) + 1, y = static_cast<long long>(std::floor(rate / b)) + 1;
  if (!instances_fit(N, C, gp, x, gd, y)) return {};
  return {static_cast<int>(x), static_cast<int>(y), std::min(double(x) * a, double(y) * b)};
}

}  // namespace

// The terms of min(x·rp, y·rd, min(x·gp, y·gd)·link) rise with x or fall with it (y = ⌊(N − x·gp)/gd⌋),
// so the best x is an end of its range or beside a crossing of a rising and a falling term.
Result<DisaggregatedSearchResult> search_disaggregated(const Config& base, const ServingSearchOptions& opt) {
  Result<DisaggregatedSearchResult> out;
  // Every error at once: the search's, then what disaggregation needs beyond them.
  out.errors = serving_search_errors(base, opt);
  auto add = [&](const Error& e) {
    for (const Error& x : out.errors)
      if (x.path == e.path) return;  // one error per field
    out.errors.push_back(e);
  };
  for (const Error& e : disaggregation_workload_errors(base.workload)) add(e);
  if (base.cluster.gpus == 1)
    add({ErrorCode::OutOfRange, "/cluster/gpus", "a disaggregated deployment needs at least 2 GPUs (one per pool)"});
  if (!out.errors.empty()) return out;
  DisaggregatedSearchResult& r = out.value;
  const long long N = base.cluster.gpus;
  const Workload& w = base.workload;
  const double rate = w.request_rate_per_s;  // > 0: the fewest GPUs that serve it, the rest idle
  // Prefill batches: whole prompts up to one step's token budget (the pool's default, api.h); a mix's
  // prompts of their mean length. Output tokens of a request: the mean over a mix's.
  const MeanLengths mean = mean_lengths(w);
  const int prefill_max = static_cast<int>(
      std::min<long long>(opt.max_batch,
                          std::max<long long>(1, static_cast<long long>(w.max_num_tokens / std::max(1.0, mean.prompt_len)))));
  std::vector<PoolOption> prefills, decodes;
  double kv_per_request = 0;
  // One more pool evaluation within the search's bound, or none (the search then says it stopped).
  auto may_evaluate = [&] {
    if (r.evaluations >= opt.max_evaluations) {
      r.truncated = true;
      return false;
    }
    ++r.evaluations;
    return true;
  };
  for (const Plan& mesh : instance_meshes(base)) {
    if (r.evaluations >= opt.max_evaluations) {
      r.truncated = true;
      break;
    }
    ++r.meshes;
    Result<Resolved> resolved = resolve(pool_config(base, mesh, 1, 1));
    if (!resolved.ok()) continue;
    Resolved& rs = resolved.value;
    const int g = static_cast<int>(mesh_without_dp(mesh));
    const double share = kv_bytes_per_gpu(rs);
    kv_per_request = kv_bytes_per_request(rs);
    for (int b = 1; may_evaluate(); b = b < prefill_max && 2 * b > prefill_max ? prefill_max : 2 * b) {
      rs.config.workload.batch = b;
      const PoolResult p = evaluate_prefill_pool(rs);
      if (!p.fits || p.requests_per_s <= 0) break;  // a larger batch does not fit either
      prefills.push_back({mesh, b, g, p.requests_per_s, p.ttft_s, share});
      if (b >= prefill_max) break;
    }
    const size_t first = decodes.size();
    for (int b = 1; b <= opt.max_batch && may_evaluate(); b *= 2) {
      rs.config.workload.batch = b;
      const PoolResult d = evaluate_decode_pool(rs);
      if (!d.fits || d.requests_per_s <= 0) break;
      decodes.push_back({mesh, b, g, d.requests_per_s, d.tpot_s, share, first});
      if (d.concurrency < double(mesh.pp) * b) break;  // the KV cache holds no more: a larger batch is the same
    }
  }
  r.prefill_options = static_cast<long long>(prefills.size());
  r.decode_options = static_cast<long long>(decodes.size());
  const std::vector<PoolOption> decode_ladder = decodes;  // every batch of each mesh, before the pruning
  prefills = undominated(prefills);
  decodes = undominated(decodes);
  // A decode pool that its prefill pool does not keep full runs below its batch, `fill` of it busy, and
  // steps faster than at its batch (the whole evaluation holds what the rate brings, disaggregation.h).
  // Its TPOT is estimated by the same mesh's option at the largest batch not above fill · batch (batch
  // 1 at the least): optimistic by at most one doubling of the batch, so that no deployment within the
  // limits is passed over; the whole evaluation then decides.
  auto decode_tpot_s = [&](const PoolOption& d, double fill) {
    if (!(fill < 1.0)) return d.latency_s;
    double tpot_s = d.latency_s;
    for (size_t i = d.first; i < decode_ladder.size() && decode_ladder[i].batch < d.batch; ++i)
      if (i == d.first || decode_ladder[i].batch <= fill * d.batch) tpot_s = std::min(d.latency_s, decode_ladder[i].latency_s);
    return tpot_s;
  };
  // Pairs. The link: NVLink when all N GPUs sit in one node (the whole evaluation below checks it).
  const Cluster& c = base.cluster;
  const bool one_node = kv_in_one_node(static_cast<int>(N), c);
  const double link_per_gpu = kv_per_request > 0 ? kv_link_bytes_per_s(one_node, c) / kv_per_request : 0.0;
  // Each candidate evaluated as a whole deployment; its numbers are the ones reported. At a request
  // rate the waits for a free slot (slot_queue) come in, and a deployment past the limits there gets one
  // more instance of a pool while the GPUs hold it: of the pool whose wait is the longer when TTFT is
  // over (of the one the rate saturates first), of the decode pool when TPOT is (fewer sequences in
  // flight per instance). The waits and the TPOT fall as a pool grows, so the first split within the
  // limits is the fewest GPUs along that path.
  long long wholes = 0;  // deployments evaluated whole
  auto whole = [&](const Candidate& k, int x, int y) -> std::optional<Disaggregated> {
    ++wholes;
    const Result<Resolved> rp = resolve(pool_config(base, k.prefill->plan, x, k.prefill->batch));
    const Result<Resolved> rd = resolve(pool_config(base, k.decode->plan, y, k.decode->batch));
    if (!rp.ok() || !rd.ok()) return std::nullopt;
    return evaluate_disaggregated(rp.value, rd.value);
  };
  auto evaluate = [&](const Candidate& k, DisaggregatedPoint& pt) {
    int x = k.split.x, y = k.split.y;
    std::optional<Disaggregated> got = whole(k, x, y);
    for (int grown = 0; rate > 0 && got && grown < 64; ++grown) {
      const Disaggregated& e = *got;
      const bool ttft_over = opt.max_ttft_s > 0 && e.ttft_s > opt.max_ttft_s;
      const bool tpot_over = opt.max_tpot_s > 0 && e.tpot_s > opt.max_tpot_s;
      if (!e.saturated && !ttft_over && !tpot_over) break;
      bool more_prefill = false;
      if (e.saturated) more_prefill = e.bound == "prefill" || (e.bound == "kv_transfer" && x * k.prefill->gpus <= y * k.decode->gpus);
      else if (ttft_over && e.prefill_queue_s + e.decode_queue_s > 0) more_prefill = e.prefill_queue_s > e.decode_queue_s;
      else if (!tpot_over) break;  // TTFT over with no wait: more instances do not shorten it
      const int nx = x + (more_prefill ? 1 : 0), ny = y + (more_prefill ? 0 : 1);
      if (!instances_fit(N, c.gpus_per_node, k.prefill->gpus, nx, k.decode->gpus, ny)) break;
      std::optional<Disaggregated> next = whole(k, nx, ny);
      if (!next) break;
      x = nx, y = ny, got = std::move(next);
    }
    if (!got) return false;
    const Disaggregated& d = *got;
    pt.prefill_plan = k.prefill->plan, pt.decode_plan = k.decode->plan;
    pt.prefill_batch = k.prefill->batch, pt.decode_batch = k.decode->batch;
    pt.prefill_instances = x, pt.decode_instances = y;
    pt.prefill_gpus = d.prefill.gpus, pt.decode_gpus = d.decode.gpus;
    pt.idle_gpus = static_cast<int>(N - d.prefill.gpus - d.decode.gpus);
    pt.ttft_s = d.ttft_s, pt.tpot_s = d.tpot_s, pt.e2e_latency_s = d.e2e_latency_s;
    pt.output_tokens_per_s_per_user = d.output_tokens_per_s_per_user;
    pt.output_tokens_per_s_total = d.output_tokens_per_s_total;
    // Of all N GPUs offline (as the co-located search fills them); at a rate, of the GPUs it uses.
    pt.output_tokens_per_s_per_gpu = d.output_tokens_per_s_total / double(rate > 0 ? d.prefill.gpus + d.decode.gpus : N);
    pt.requests_per_s = d.requests_per_s;
    pt.bound = d.bound;
    pt.saturated = d.saturated;
    pt.within_limits = !d.saturated && over_limits(pt.ttft_s, pt.tpot_s, opt) <= 1.0;
    return d.prefill.fits && d.decode.fits && d.requests_per_s > 0;
  };
  // Two decode batches the prefill pool never fills run the same deployment (the decode pool holds what
  // the rate brings, disaggregation.h): the first one listed stands for both. At a request rate both
  // pools run below their batches, and a larger batch of either only shortens a wait for a slot that
  // is already all but none: latencies within 0.1%.
  const double same_within = rate > 0 ? 1e-3 : 0.0;
  auto near = [same_within](double a, double b) { return std::abs(a - b) <= same_within * std::max(std::abs(a), std::abs(b)); };
  auto same_deployment = [&](const DisaggregatedPoint& a, const DisaggregatedPoint& b) {
    const int pa = rate > 0 ? 1 : a.prefill_batch, pb = rate > 0 ? 1 : b.prefill_batch;
    return a.prefill_instances == b.prefill_instances && a.decode_instances == b.decode_instances &&
           serving_plan_label(a.prefill_plan, pa) == serving_plan_label(b.prefill_plan, pb) &&
           serving_plan_label(a.decode_plan, 1) == serving_plan_label(b.decode_plan, 1) && near(a.tpot_s, b.tpot_s) &&
           near(a.ttft_s, b.ttft_s) && near(a.requests_per_s, b.requests_per_s);
  };
  if (rate > 0) {
    // At a request rate the pools run below their batches, and a request waits for a slot: neither
    // pool's latency at its batch bounds the deployment's. Every pair gets the fewest instances that
    // serve the rate, the pairs are evaluated whole, the fewest GPUs first (then the shortest estimated
    // end-to-end latency), each grown while past the limits, up to kWholeAtRate evaluations. A pair
    // that cannot serve the rate on the GPUs gets the split that serves the most (best_split): those
    // come last, the most served first, and are what the answer shows when no pair keeps up.
    struct Pair {
      Candidate k;
      bool keeps_up = true;
      int gpus = 0;
      double e2e_s = 0;
    };
    std::vector<Pair> pairs;
    for (const PoolOption& d : decodes)
      for (const PoolOption& p : prefills) {
        if (r.pairs >= kMaxPairs) {
          r.truncated = true;
          break;
        }
        ++r.pairs;
        Pair q;
        q.k.prefill = &p, q.k.decode = &d;
        q.k.split = fewest_split(N, c.gpus_per_node, p.gpus, d.gpus, p.requests_per_s, d.requests_per_s, link_per_gpu, rate);
        if (q.k.split.x < 1) {
          q.keeps_up = false;
          q.k.split = best_split(N, c.gpus_per_node, p.gpus, d.gpus, p.requests_per_s, d.requests_per_s, link_per_gpu);
          if (q.k.split.x < 1) continue;
        }
        q.gpus = q.k.split.x * p.gpus + q.k.split.y * d.gpus;
        q.e2e_s = p.latency_s + std::max(0.0, mean.output_len - 1.0) * d.latency_s;
        pairs.push_back(q);
      }
    std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
      if (a.keeps_up != b.keeps_up) return a.keeps_up;
      if (!a.keeps_up) return a.k.split.requests_per_s > b.k.split.requests_per_s;
      return a.gpus != b.gpus ? a.gpus < b.gpus : a.e2e_s < b.e2e_s;
    });
    std::vector<DisaggregatedPoint> done;
    for (const Pair& q : pairs) {
      if (wholes >= kWholeAtRate || r.evaluations >= opt.max_evaluations) {
        r.truncated = true;
        break;
      }
      DisaggregatedPoint pt;
      if (!evaluate(q.k, pt)) continue;
      if (std::any_of(done.begin(), done.end(), [&](const DisaggregatedPoint& x) { return same_deployment(x, pt); })) continue;
      r.within_limits += pt.within_limits;
      done.push_back(pt);
    }
    r.front_within_limits = rank_points(done, opt, r.best, r.front);
    return out;
  }
  struct PerDecode {
    Candidate fastest, within, closest;
    double closest_over = 0;
  };
  std::vector<PerDecode> per_decode(decodes.size());
  for (size_t i = 0; i < decodes.size(); ++i) {
    const PoolOption& d = decodes[i];
    PerDecode& best = per_decode[i];
    for (const PoolOption& p : prefills) {
      if (!instances_fit(N, c.gpus_per_node, p.gpus, 1, d.gpus, 1)) continue;
      if (r.pairs >= kMaxPairs) {
        r.truncated = true;
        break;
      }
      ++r.pairs;
      auto candidate = [&](const DeploymentSplit& split) {
        Candidate k;
        k.prefill = &p, k.decode = &d, k.split = split;
        k.ttft_s = p.latency_s + kv_transfer_s(std::max(p.kv_bytes_per_gpu, d.kv_bytes_per_gpu), one_node, c);
        k.tpot_s = decode_tpot_s(d, split.requests_per_s / (split.y * d.requests_per_s));
        k.output_tokens_per_s_per_gpu = split.requests_per_s * mean.output_len / double(N);
        k.output_tokens_per_s_per_user = k.tpot_s > 0 ? 1.0 / k.tpot_s : 0.0;
        return k;
      };
      auto consider = [&](const Candidate& k) {
        const double over = over_limits(k.ttft_s, k.tpot_s, opt);
        if (!best.fastest.valid() || k.output_tokens_per_s_per_gpu > best.fastest.output_tokens_per_s_per_gpu) best.fastest = k;
        if (over <= 1.0 && (!best.within.valid() || k.output_tokens_per_s_per_gpu > best.within.output_tokens_per_s_per_gpu))
          best.within = k;
        if (!best.closest.valid() || over < best.closest_over ||
            (over == best.closest_over && k.output_tokens_per_s_per_gpu > best.closest.output_tokens_per_s_per_gpu)) {
          best.closest = k;
          best.closest_over = over;
        }
        return over <= 1.0;
      };
      const DeploymentSplit most = best_split(N, c.gpus_per_node, p.gpus, d.gpus, p.requests_per_s, d.requests_per_s, link_per_gpu);
      if (most.x < 1) continue;
      const Candidate fullest = candidate(most);
      bool within = consider(fullest);
      // Fewer prefill instances than the split that serves the most leave the decode pool less full and
      // its steps shorter: where that split is past the TPOT limit alone, the most prefill instances
      // whose split is within it (the decode pool's fill, and so its estimated TPOT, rises with x) are
      // a candidate too.
      if (!within && opt.max_tpot_s > 0 && over_limits(fullest.ttft_s, 0.0, opt) <= 1.0) {
        auto split = [&](long long x) {
          return split_at(N, c.gpus_per_node, p.gpus, d.gpus, p.requests_per_s, d.requests_per_s, link_per_gpu, x);
        };
        const long long x = last_true(most.x - 1, [&](long long n) {  // 0 when no split is within
          const DeploymentSplit at = split(n);
          return at.y >= 1 && over_limits(0.0, candidate(at).tpot_s, opt) <= 1.0;
        });
        if (x >= 1) within = consider(candidate(split(x)));
      }
      r.within_limits += within;
    }
  }
  // A candidate that the whole evaluation puts past the limits (its KV transfer over another link than
  // the estimate's) is passed over when others are within them.
  auto evaluate_all = [&](const std::vector<Candidate>& ks, size_t most, bool within_only) {
    std::vector<DisaggregatedPoint> points;
    size_t tried = 0;
    for (const Candidate& k : ks) {
      if (points.size() >= most || tried >= 4 * most + 16) break;
      ++tried;
      DisaggregatedPoint pt;
      if (!evaluate(k, pt) || (!pt.within_limits && within_only)) continue;
      if (std::none_of(points.begin(), points.end(), [&](const DisaggregatedPoint& q) { return same_deployment(q, pt); }))
        points.push_back(pt);
    }
    return points;
  };
  std::vector<Candidate> within, closest, fastest;
  for (const PerDecode& b : per_decode) {
    if (b.within.valid()) within.push_back(b.within);
    if (b.closest.valid()) closest.push_back(b.closest);
    if (b.fastest.valid()) fastest.push_back(b.fastest);
  }
  const size_t top = static_cast<size_t>(opt.top);
  if (!within.empty()) {
    std::sort(within.begin(), within.end(), faster_per_gpu<Candidate>);
    r.best = evaluate_all(within, top, true);
    std::sort(r.best.begin(), r.best.end(), faster_per_gpu<DisaggregatedPoint>);
  }
  // None within the limits (or none stays within them evaluated whole): the closest to them.
  const bool front_within = !r.best.empty();
  if (!front_within) {
    std::sort(closest.begin(), closest.end(), [&](const Candidate& a, const Candidate& b) {
      const double x = over_limits(a.ttft_s, a.tpot_s, opt), y = over_limits(b.ttft_s, b.tpot_s, opt);
      return x != y ? x < y : faster_per_gpu(a, b);
    });
    r.best = evaluate_all(closest, top, false);
  }
  r.front_within_limits = front_within || r.best.empty();
  // The front: each decode option's fastest deployment (within the limits when any is), those on
  // the front of the estimates evaluated whole, and the front of what they give.
  const std::vector<Candidate> on_front = pareto_front(front_within ? within : fastest);
  r.front = pareto_front(evaluate_all(on_front, on_front.size(), front_within));
  return out;
}

std::string disaggregated_label(const DisaggregatedPoint& p) {
  return std::to_string(p.prefill_instances) + " × " + serving_plan_label(p.prefill_plan, p.prefill_batch) + " → " +
         std::to_string(p.decode_instances) + " × " + serving_plan_label(p.decode_plan, p.decode_batch);
}

nlohmann::json to_json(const DisaggregatedPoint& p) {
  return {{"prefill_plan", to_json(p.prefill_plan)},
          {"decode_plan", to_json(p.decode_plan)},
          {"prefill_batch", p.prefill_batch},
          {"decode_batch", p.decode_batch},
          {"prefill_instances", p.prefill_instances},
          {"decode_instances", p.decode_instances},
          {"prefill_gpus", p.prefill_gpus},
          {"decode_gpus", p.decode_gpus},
          {"idle_gpus", p.idle_gpus},
          {"ttft_s", p.ttft_s},
          {"tpot_s", p.tpot_s},
          {"e2e_latency_s", p.e2e_latency_s},
          {"output_tokens_per_s_per_user", p.output_tokens_per_s_per_user},
          {"output_tokens_per_s_per_gpu", p.output_tokens_per_s_per_gpu},
          {"output_tokens_per_s_total", p.output_tokens_per_s_total},
          {"requests_per_s", p.requests_per_s},
          {"bound", p.bound},
          {"saturated", p.saturated},
          {"within_limits", p.within_limits}};
}

nlohmann::json to_json(const DisaggregatedSearchResult& r) {
  auto list = [](const std::vector<DisaggregatedPoint>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const DisaggregatedPoint& p : v) a.push_back(to_json(p));
    return a;
  };
  return {{"best", list(r.best)},
          {"front", list(r.front)},
          {"front_within_limits", r.front_within_limits},
          {"meshes", r.meshes},
          {"prefill_options", r.prefill_options},
          {"decode_options", r.decode_options},
          {"pairs", r.pairs},
          {"within_limits", r.within_limits},
          {"evaluations", r.evaluations},
          {"truncated", r.truncated}};
}

}  // namespace cutlab
