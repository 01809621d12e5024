#include "core/options.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace cutlab {

namespace {

std::set<std::string> error_paths(const Config& c) {
  std::set<std::string> paths;
  for (const Error& e : validate(c.model, c.cluster, c.plan, c.workload)) paths.insert(e.path);
  return paths;
}

std::vector<int> divisors(long long n, int limit) {
  std::vector<int> d;
  for (long long i = 1; i <= n && i <= limit; ++i)
    if (n % i == 0) d.push_back(static_cast<int>(i));
  return d;
}

}  // namespace

std::map<std::string, std::vector<int>> axis_options(const Config& base) {
  std::map<std::string, std::vector<int>> out;
  const Plan& p = base.plan;
  const bool folding = p.etp > 0;
  const long long gpus = base.cluster.gpus > 0 ? base.cluster.gpus : derive_mesh(p, base.workload).gpus;
  struct AxisValues {
    const char* name;
    int Plan::*field;
    std::vector<int> candidates;
  };
  const int layers = std::clamp(base.model.layers, 1, 10000);  // an invalid config's layers too (README "Input limits")
  std::vector<int> vpp;
  for (int v = 1; v <= std::min(16, layers); ++v) vpp.push_back(v);
  const long long per_replica = std::max<long long>(1,
                                                    base.workload.global_batch / std::max(1, derive_mesh(p, base.workload).dp_attn));
  std::vector<AxisValues> axes = {{"tp", &Plan::tp, divisors(gpus, 256)},
                                  {"pp", &Plan::pp, divisors(gpus, layers)},
                                  {"cp", &Plan::cp, divisors(gpus, 256)},
                                  {"ep", &Plan::ep, divisors(gpus, 1024)},
                                  {"vpp", &Plan::vpp, vpp},
                                  {"micro_batch", &Plan::micro_batch, divisors(per_replica, 256)}};
  if (is_moe(base.model)) axes.push_back({"etp", &Plan::etp, divisors(gpus, 64)});

  for (const AxisValues& a : axes) {
    const std::string own = std::string("/plan/") + a.name;
    std::set<std::string> baseline = error_paths(base);
    baseline.erase(own);
    std::vector<int>& ok = out[a.name];
    for (int v : a.candidates) {
      Config c = base;
      c.plan.*a.field = v;
      if (a.field == &Plan::vpp)
        c.plan.schedule = v > 1 ? Schedule::Interleaved : (p.schedule == Schedule::Interleaved ? Schedule::OneFOneB : p.schedule);
      if (base.cluster.gpus > 0) {
        // The GPU count is fixed: dp takes what the rest of the mesh leaves.
        // In double: the config may break a rule (options of an invalid plan), its axes any int.
        const double rest = double(c.plan.tp) * c.plan.pp * c.plan.cp * (folding ? 1 : c.plan.ep);
        if (!(rest > 0) || rest > double(gpus) || std::fmod(double(gpus), rest) != 0) continue;  // no dp to derive
        c.plan.dp = static_cast<int>(double(gpus) / rest);
      }
      const std::set<std::string> paths = error_paths(c);
      if (std::all_of(paths.begin(), paths.end(), [&](const std::string& s) { return baseline.count(s) > 0; })) ok.push_back(v);
    }
  }
  return out;
}

}  // namespace cutlab
