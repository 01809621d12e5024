#include "core/search.h"

#include <algorithm>

namespace cutlab {

namespace {

std::vector<int> divisors_up_to(long long n, long long limit) {
  std::vector<int> d;
  for (long long i = 1; i <= n && i <= limit; ++i)
    if (n % i == 0) d.push_back(static_cast<int>(i));
  return d;
}

}  // namespace

Result<SearchResult> search_plans(const Config& base, const SearchOptions& opt) {
  Result<SearchResult> out;
  if (base.cluster.gpus <= 0) {
    out.errors.push_back({ErrorCode::MissingKey, "/cluster/gpus", "search needs the GPU count to fill (cluster.gpus)"});
    return out;
  }
  if (base.workload.mode != Mode::Train) {
    out.errors.push_back(
        {ErrorCode::Incompatible, "/workload/mode", "search ranks training plans; serving plans are evaluated one by one"});
    return out;
  }
  // Without a global batch every plan fails validation: say so once rather than "0 valid".
  if (base.workload.global_batch <= 0) {
    out.errors.push_back({ErrorCode::MissingKey, "/workload/global_batch",
                          "search needs the global batch (workload.global_batch, sequences per step) to rank training plans"});
    return out;
  }
  if (opt.top < 1 || !(opt.max_memory_fraction > 0 && opt.max_memory_fraction <= 1)) {
    out.errors.push_back({ErrorCode::OutOfRange, "/search", "top must be ≥ 1 and max_memory_fraction in (0, 1]"});
    return out;
  }
  SearchResult& r = out.value;
  const ModelSpec& m = base.model;
  const long long N = base.cluster.gpus;
  const std::vector<int> tps = divisors_up_to(N, std::max(1, base.cluster.gpus_per_node));
  const std::vector<int> pps = divisors_up_to(N, m.layers);
  const std::vector<int> cps = base.workload.seq_len >= 16384 ? divisors_up_to(N, 32) : std::vector<int>{1};
  const std::vector<int> eps = is_moe(m) ? divisors_up_to(N, m.experts) : std::vector<int>{1};
  struct Sched {
    Schedule name;
    int vpp;
  };
  const Sched schedules[] = {{Schedule::OneFOneB, 1}, {Schedule::Interleaved, 2}, {Schedule::Interleaved, 4}, {Schedule::ZbH1, 1}};
  const int micro_batches[] = {1, 2, 4};
  const Recompute recomputes[] = {Recompute::None, Recompute::Selective, Recompute::Full};
  std::vector<RankedPlan> all;
  for (int tp : tps)
    for (int pp : pps)
      for (int cp : cps)
        for (int ep : eps) {
          const long long rest = static_cast<long long>(tp) * pp * cp * ep;
          if (N % rest != 0) continue;
          for (const Sched& sc : schedules) {
            if (pp == 1 && sc.name != Schedule::OneFOneB) continue;  // no pipeline, no schedule choice
            for (int mb : micro_batches)
              for (const Recompute rc : recomputes) {
                Config c = base;
                Plan& p = c.plan;
                p.tp = tp, p.pp = pp, p.cp = cp, p.ep = ep, p.dp = static_cast<int>(N / rest), p.etp = 0;
                p.sp = tp > 1;
                p.schedule = sc.name, p.vpp = sc.vpp, p.micro_batch = mb, p.recompute = rc;
                p.distributed_optimizer = true;
                p.layers_per_stage.clear();
                ++r.candidates;
                const Result<Resolved> resolved = resolve(c);
                if (!resolved.ok()) continue;
                ++r.valid;
                const Result<TrainingEstimate> e = evaluate_training(resolved.value, false);
                if (!e.ok()) continue;
                const StageMemory& peak = e.value.memory.per_stage[e.value.memory.peak_stage];
                RankedPlan rp;
                rp.plan = p;
                rp.step_s = e.value.step_s;
                rp.tokens_per_s = e.value.tokens_per_s;
                rp.mfu = e.value.mfu;
                rp.peak_memory_bytes = peak.total_bytes;
                rp.capacity_bytes = peak.capacity_bytes;
                rp.fits = peak.total_bytes <= opt.max_memory_fraction * peak.capacity_bytes;
                r.fitting += rp.fits;
                all.push_back(rp);
              }
          }
        }
  // Fitting plans by throughput; when none fits, the plans closest to fitting.
  std::sort(all.begin(), all.end(), [](const RankedPlan& a, const RankedPlan& b) {
    if (a.fits != b.fits) return a.fits;
    return a.fits ? a.tokens_per_s > b.tokens_per_s : a.peak_memory_bytes < b.peak_memory_bytes;
  });
  all.resize(std::min<size_t>(all.size(), opt.top));
  r.best = std::move(all);
  return out;
}

}  // namespace cutlab
