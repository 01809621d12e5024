#include "core/validation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/json_io.h"
#include "core/memory.h"
#include "core/units.h"

namespace cutlab {

using nlohmann::json;

const std::vector<MetricInfo>& case_metrics() {
  static const std::vector<MetricInfo> m = {
      {Metric::HardwareTflopsPerGpu, "TFLOP/s", CaseKind::Training,
       "FLOPs per step including the recomputed forward (Narayanan et al. 2021 §5.1) / step time / GPUs"},
      {Metric::ModelTflopsPerGpu, "TFLOP/s", CaseKind::Training,
       "model FLOPs per step, no recompute (Megatron num_floating_point_operations) / step time / GPUs"},
      {Metric::MfuPercent, "%", CaseKind::Training, "model FLOPs / (step time × GPUs × dense peak of the GEMM dtype)"},
      {Metric::TokensPerSPerGpu, "tokens/s", CaseKind::Training, "global batch × sequence length / step time / GPUs"},
      {Metric::StepTimeS, "s", CaseKind::Training, "time of one optimizer step"},
      {Metric::PeakMemoryGiB, "GiB", CaseKind::Training,
       "peak memory of the busiest GPU (cutlab's total per stage, allocator reserve included; not the CUDA context "
       "or NCCL buffers: torch.cuda max reserved memory)"},
      {Metric::ModelStateGBPerGpu, "GB", CaseKind::Memory,
       "weights + gradients + optimizer state of num_params parameters on one GPU, 1e9 bytes"},
      {Metric::StateBytesPerParam, "bytes", CaseKind::Memory, "model-state bytes per parameter on one GPU"},
  };
  return m;
}

bool is_time_metric(Metric metric) {
  return metric == Metric::HardwareTflopsPerGpu || metric == Metric::ModelTflopsPerGpu || metric == Metric::MfuPercent ||
         metric == Metric::TokensPerSPerGpu || metric == Metric::StepTimeS;
}

namespace {

const MetricInfo* find_metric(Metric metric) {
  for (const MetricInfo& m : case_metrics())
    if (m.metric == metric) return &m;
  return nullptr;
}

bool is_number(const json& v) { return v.is_number() && std::isfinite(v.get<double>()); }

// Reads the typed keys of a case object; errors carry "<path>/<key>".
struct CaseReader {
  const json& j;
  const std::string& path;
  Errors& errors;

  bool present(const char* key, bool required) {
    if (j.contains(key)) return true;
    if (required) errors.push_back({ErrorCode::MissingKey, path + "/" + key, std::string("missing required key '") + key + "'"});
    return false;
  }
  void text(const char* key, std::string& out, bool required) {
    if (!present(key, required)) return;
    if (!j[key].is_string()) {
      errors.push_back({ErrorCode::WrongType, path + "/" + key, "must be a string"});
      return;
    }
    out = j[key].get<std::string>();
  }
  void number(const char* key, double& out, bool required) {
    if (!present(key, required)) return;
    if (!is_number(j[key])) {
      errors.push_back({ErrorCode::WrongType, path + "/" + key, "must be a finite number"});
      return;
    }
    out = j[key].get<double>();
  }
};

// Reads the text and number keys of a case and its kind; returns the kind as written ("" when absent).
std::string read_case_fields(const json& j, const std::string& path, ValidationCase& c, Errors& errors) {
  CaseReader r{j, path, errors};
  r.text("id", c.id, true);
  r.text("family", c.family, true);
  std::string metric;
  r.text("metric", metric, true);
  if (!metric.empty() && !choice_from_name(metric, c.metric))
    errors.push_back({ErrorCode::OutOfRange, path + "/metric", "unknown metric '" + metric + "' (" + choice_list<Metric>() + ")"});
  r.text("source", c.source, true);
  r.text("quote", c.quote, false);
  r.text("settings_note", c.settings_note, true);
  r.number("measured", c.measured, true);
  r.number("resolution", c.resolution, false);
  r.number("num_params", c.num_params, false);
  r.number("dp_shards", c.dp_shards, false);
  if (r.present("calibrated", false)) {
    if (j["calibrated"].is_boolean()) c.calibrated = j["calibrated"].get<bool>();
    else errors.push_back({ErrorCode::WrongType, path + "/calibrated", "must be true or false"});
  }
  std::string kind;
  r.text("kind", kind, true);
  if (!kind.empty() && !choice_from_name(kind, c.kind))
    errors.push_back({ErrorCode::OutOfRange, path + "/kind", "unknown kind '" + kind + "' (" + choice_list<CaseKind>() + ")"});
  return kind;
}

// The rules on a case's values: a known metric of the case's kind, measured > 0, resolution ≥ 0, dp_shards ≥ 1.
void check_case_values(const json& j, const std::string& path, const ValidationCase& c, const std::string& kind, Errors& errors) {
  CaseKind k{};
  const MetricInfo* metric = j.contains("metric") ? find_metric(c.metric) : nullptr;
  if (metric && choice_from_name(kind, k) && metric->kind != c.kind)
    errors.push_back({ErrorCode::Incompatible, path + "/metric",
                      std::string("metric '") + name_of(c.metric) + "' does not belong to a " + kind + " case"});
  if (j.contains("measured") && !(c.measured > 0)) errors.push_back({ErrorCode::OutOfRange, path + "/measured", "must be positive"});
  if (c.resolution < 0) errors.push_back({ErrorCode::OutOfRange, path + "/resolution", "must be ≥ 0"});
  if (!(c.dp_shards >= 1)) errors.push_back({ErrorCode::OutOfRange, path + "/dp_shards", "must be ≥ 1"});
}

// Appends `inner` to `errors`, each path prefixed with `prefix`.
void nest_errors(const Errors& inner, const std::string& prefix, Errors& errors) {
  for (Error e : inner) {
    e.path = prefix + e.path;
    errors.push_back(e);
  }
}

// A training case: its 'config' (model, cluster, plan, workload), and none of the memory case's keys.
void read_training_config(const json& j, const std::string& path, ValidationCase& c, Errors& errors) {
  for (const char* k : {"plan", "workload", "num_params", "dp_shards", "resolution"})
    if (j.contains(k))
      errors.push_back(
          {ErrorCode::Incompatible, path + "/" + k, std::string("'") + k + "' belongs to memory cases; a training case has 'config'"});
  if (!j.contains("config")) {
    errors.push_back({ErrorCode::MissingKey, path + "/config", "a training case needs 'config' (model, cluster, plan, workload)"});
    return;
  }
  Result<Config> cfg = config_from_json(j["config"]);
  nest_errors(cfg.errors, path + "/config", errors);
  c.config = cfg.value;
}

// A memory case: its 'plan' and 'workload', no 'config'.
void read_memory_config(const json& j, const std::string& path, ValidationCase& c, Errors& errors) {
  if (j.contains("config"))
    errors.push_back({ErrorCode::Incompatible, path + "/config", "a memory case has 'plan' and 'workload', not 'config'"});
  if (c.metric == Metric::ModelStateGBPerGpu && !(c.num_params > 0))
    errors.push_back({ErrorCode::MissingKey, path + "/num_params", "model_state_GB_per_gpu needs num_params > 0"});
  // Only the plan and workload fields matter; a placeholder model and cluster let json_io read
  // them with its strict field tables.
  json wrapper = {{"model", "llama3-8b"},
                  {"cluster", "dgx-h100"},
                  {"plan", j.value("plan", json::object())},
                  {"workload", j.value("workload", json::object())}};
  Result<Config> cfg = config_from_json(wrapper);
  nest_errors(cfg.errors, path, errors);
  c.plan = cfg.value.plan;
  c.workload = cfg.value.workload;
}

// Strict reading of one case object; errors carry "/cases/<i>/<key>".
void read_case(const json& j, const std::string& path, ValidationCase& c, Errors& errors) {
  static const char* known[] = {"id",     "family", "kind",          "metric", "measured", "resolution", "num_params", "dp_shards",
                                "source", "quote",  "settings_note", "config", "plan",     "workload",   "calibrated"};
  if (!j.is_object()) {
    errors.push_back({ErrorCode::WrongType, path, "a case must be an object"});
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }))
      errors.push_back({ErrorCode::UnknownKey, path + "/" + it.key(), "unknown key '" + it.key() + "' in a validation case"});
  const std::string kind = read_case_fields(j, path, c, errors);
  check_case_values(j, path, c, kind, errors);
  if (c.kind == CaseKind::Training) read_training_config(j, path, c, errors);
  else read_memory_config(j, path, c, errors);
}

double training_metric(Metric metric, const TrainingEstimate& e) {
  const double gpus = e.mesh.gpus;
  switch (metric) {
    case Metric::HardwareTflopsPerGpu: return e.hardware_flops_per_step / (e.step_s * gpus) / 1e12;
    case Metric::ModelTflopsPerGpu: return e.model_flops_per_s_per_gpu / 1e12;
    case Metric::MfuPercent: return 100.0 * e.mfu;
    case Metric::TokensPerSPerGpu: return e.tokens_per_s / gpus;
    case Metric::StepTimeS: return e.step_s;
    case Metric::PeakMemoryGiB:
      return e.memory.per_stage.empty() ? 0.0 : e.memory.per_stage[static_cast<size_t>(e.memory.peak_stage)].total_bytes / units::GiB;
    default: break;
  }
  return 0.0;
}

}  // namespace

Result<std::vector<ValidationCase>> cases_from_json(const std::string& text) {
  Result<std::vector<ValidationCase>> r;
  bool too_deep = false;  // read_case copies a memory case's plan, recursively: refuse absurd nesting
  const json j = json::parse(
      text, [&](int depth, json::parse_event_t, json&) { return !(too_deep |= depth > 64); }, false);
  if (j.is_discarded() || too_deep) {
    r.errors.push_back(
        {ErrorCode::ParseError, "", too_deep ? "the cases file is nested too deeply" : "the cases file is not valid JSON"});
    return r;
  }
  if (!j.is_object() || !j.contains("cases") || !j["cases"].is_array()) {
    r.errors.push_back({ErrorCode::MissingKey, "/cases", "expected an object with a 'cases' array"});
    return r;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "cases" && it.key() != "about" && it.key() != "skipped")
      r.errors.push_back({ErrorCode::UnknownKey, "/" + it.key(), "unknown key '" + it.key() + "' (known: about, cases, skipped)"});
  const json& list = j["cases"];
  for (size_t i = 0; i < list.size(); ++i) {
    ValidationCase c;
    read_case(list[i], "/cases/" + std::to_string(i), c, r.errors);
    for (const ValidationCase& other : r.value)
      if (!c.id.empty() && other.id == c.id)
        r.errors.push_back({ErrorCode::Incompatible, "/cases/" + std::to_string(i) + "/id", "duplicate case id '" + c.id + "'"});
    r.value.push_back(std::move(c));
  }
  return r;
}

CaseResult run_case(const ValidationCase& c, const Efficiencies* efficiency) {
  CaseResult r;
  r.id = c.id;
  r.family = c.family;
  r.metric = c.metric;
  r.kind = c.kind;
  r.calibrated = c.calibrated;
  r.measured = c.measured;
  if (c.kind == CaseKind::Memory) {
    // ZeRO Figure 1 and Megatron's table count model states only: state_bytes_per_param.
    const StateBytesPerParam b = state_bytes_per_param(c.plan, c.workload, c.dp_shards);
    r.predicted = c.metric == Metric::ModelStateGBPerGpu ? b.total() * c.num_params / 1e9 : b.total();
    r.ok = true;
  } else {
    Config cfg = c.config;
    if (efficiency) cfg.cluster.efficiency = *efficiency;
    const Result<Resolved> resolved = resolve(cfg);
    Result<TrainingEstimate> e;
    e.errors = resolved.errors;
    if (resolved.ok()) e = evaluate_training(resolved.value);
    if (!e.ok()) {
      r.errors = e.errors;
      return r;
    }
    r.ok = true;
    r.predicted = training_metric(c.metric, e.value);
    r.fits = e.value.memory.fits;
    r.dtype = cfg.workload.dtype;
    r.step_s = e.value.step_s;
    r.mfu = e.value.mfu;
  }
  r.error_percent = (r.predicted - r.measured) / r.measured * 100.0;
  r.within_resolution = std::fabs(r.predicted - r.measured) <= c.resolution / 2 + 1e-9 * std::fabs(r.measured);
  return r;
}

ValidationSummary validate_cases(const std::vector<ValidationCase>& cases) {
  ValidationSummary s;
  double sum = 0;
  auto add = [](FamilyError& f, const CaseResult& r, double a) {
    f.mean_abs_error_percent += a;  // a sum until the end
    ++f.cases;
    if (a > f.max_abs_error_percent || f.worst_id.empty()) {
      f.max_abs_error_percent = a;
      f.worst_id = r.id;
    }
  };
  for (const ValidationCase& c : cases) {
    CaseResult r = run_case(c);
    const double a = std::fabs(r.error_percent);
    if (c.kind == CaseKind::Memory) {
      ++s.memory_cases;
      s.memory_exact = s.memory_exact && r.ok && r.within_resolution;
    } else if (!r.ok) {
      ++s.failed_cases;
    } else if (c.metric == Metric::PeakMemoryGiB) {
      ++s.peak_memory_cases;
      if (a > s.peak_memory_max_abs_error_percent || s.peak_memory_worst_id.empty()) {
        s.peak_memory_max_abs_error_percent = a;
        s.peak_memory_worst_id = r.id;
      }
    } else if (!c.calibrated) {
      add(s.uncalibrated, r, a);
    } else {
      ++s.training_cases;
      sum += a;
      if (a > s.max_abs_error_percent || s.worst_id.empty()) {
        s.max_abs_error_percent = a;
        s.worst_id = r.id;
      }
      auto f = std::find_if(s.families.begin(), s.families.end(), [&](const FamilyError& x) { return x.family == r.family; });
      if (f == s.families.end()) f = s.families.insert(s.families.end(), FamilyError{r.family, 0, 0, 0, ""});
      add(*f, r, a);
    }
    s.results.push_back(std::move(r));
  }
  if (s.training_cases > 0) s.mean_abs_error_percent = sum / s.training_cases;
  for (FamilyError& f : s.families) f.mean_abs_error_percent /= f.cases;
  if (s.uncalibrated.cases > 0) s.uncalibrated.mean_abs_error_percent /= s.uncalibrated.cases;
  return s;
}

// [Calibration]

const std::vector<CalibrationParam>& calibration_params() {
  // Physically plausible ranges. GEMMs: cuBLAS reaches 0.7–0.8 of the dense peak on large bf16
  // shapes (A100, H100), never the peak. Flash attention: 0.35–0.75 of peak on H100 (FA2 to FA3),
  // and cutlab's backward is 2× the forward time where the kernel does 2.5× the forward work, so the
  // effective value sits lower. HBM: streaming kernels reach 0.7–0.93 of the datasheet bandwidth.
  // NCCL bus bandwidth: 0.5–0.95 of the link. Overlap: a fraction.
  static const std::vector<CalibrationParam> p = {
      {"gemm", &Efficiencies::gemm, 0.50, 0.95},
      {"gemm_fp8", &Efficiencies::gemm_fp8, 0.40, 0.95},
      {"gemm_half_dim", &Efficiencies::gemm_half_dim, 0.0, 256.0},
      {"attention", &Efficiencies::attention, 0.30, 0.90},
      {"hbm", &Efficiencies::hbm, 0.70, 0.95},
      {"nvlink", &Efficiencies::nvlink, 0.50, 0.95},
      {"scaleout", &Efficiencies::scaleout, 0.50, 0.95},
      {"overlap", &Efficiencies::overlap, 0.0, 1.0},
  };
  return p;
}

double family_mape_percent(const std::vector<ValidationCase>& cases, const std::string& family, const Efficiencies& e) {
  double sum = 0;
  int n = 0;
  for (const ValidationCase& c : cases) {
    if (c.kind != CaseKind::Training || !is_time_metric(c.metric) || c.family != family) continue;
    const CaseResult r = run_case(c, &e);
    sum += r.ok ? std::fabs(r.error_percent) : 1000.0;
    ++n;
  }
  return n > 0 ? sum / n : 0.0;
}

namespace {

// Bounded Nelder–Mead (Nelder & Mead 1965; coefficients 1, 2, ½, ½) in the unit cube: each
// coordinate u ∈ [0, 1] maps to lo + u·(hi − lo) and points outside are projected onto the cube.
struct Search {
  std::vector<const CalibrationParam*> params;
  Efficiencies base;
  std::function<double(const Efficiencies&)> objective;
  int evaluations = 0;

  Efficiencies at(std::vector<double> u) const {
    Efficiencies e = base;
    for (size_t i = 0; i < params.size(); ++i) {
      const double x = std::clamp(u[i], 0.0, 1.0);
      e.*(params[i]->member) = params[i]->lo + x * (params[i]->hi - params[i]->lo);
    }
    return e;
  }
  double f(std::vector<double>& u) {
    for (double& x : u) x = std::clamp(x, 0.0, 1.0);
    ++evaluations;
    return objective(at(u));
  }
};

void nelder_mead(Search& s, std::vector<double>& best, double& best_f, int budget) {
  const size_t n = best.size();
  std::vector<std::vector<double>> x(n + 1, best);
  std::vector<double> fx(n + 1);
  fx[0] = best_f;
  for (size_t i = 0; i < n; ++i) {
    x[i + 1][i] += best[i] + 0.15 <= 1.0 ? 0.15 : -0.15;
    fx[i + 1] = s.f(x[i + 1]);
  }
  const int stop = s.evaluations + budget;
  while (s.evaluations < stop) {
    std::vector<size_t> order(n + 1);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return fx[a] < fx[b]; });
    std::vector<std::vector<double>> xs;
    std::vector<double> fs;
    for (size_t i : order) xs.push_back(x[i]), fs.push_back(fx[i]);
    x = xs, fx = fs;
    double size = 0;
    for (size_t i = 1; i <= n; ++i)
      for (size_t k = 0; k < n; ++k) size = std::max(size, std::fabs(x[i][k] - x[0][k]));
    if (size < 1e-5 || fx[n] - fx[0] < 1e-7) break;
    std::vector<double> centroid(n, 0.0);
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < n; ++k) centroid[k] += x[i][k] / static_cast<double>(n);
    auto along = [&](double t) {
      std::vector<double> p(n);
      for (size_t k = 0; k < n; ++k) p[k] = centroid[k] + t * (x[n][k] - centroid[k]);
      return p;
    };
    std::vector<double> r = along(-1.0);
    const double fr = s.f(r);
    if (fr < fx[0]) {
      std::vector<double> e = along(-2.0);
      const double fe = s.f(e);
      if (fe < fr) x[n] = e, fx[n] = fe;
      else x[n] = r, fx[n] = fr;
    } else if (fr < fx[n - 1]) {
      x[n] = r, fx[n] = fr;
    } else {
      std::vector<double> c = fr < fx[n] ? along(-0.5) : along(0.5);
      const double fc = s.f(c);
      if (fc < std::min(fr, fx[n])) {
        x[n] = c, fx[n] = fc;
      } else {
        for (size_t i = 1; i <= n; ++i) {
          for (size_t k = 0; k < n; ++k) x[i][k] = x[0][k] + 0.5 * (x[i][k] - x[0][k]);
          fx[i] = s.f(x[i]);
        }
      }
    }
  }
  for (size_t i = 0; i <= n; ++i)
    if (fx[i] < best_f) best_f = fx[i], best = x[i];
}

// Compass search (Kolda, Lewis & Torczon 2003): try ±step along each coordinate, keep any
// improvement, halve the step when none helps. Polishes the Nelder–Mead point, which can stall on
// the kinks of an absolute-error objective.
void compass(Search& s, std::vector<double>& best, double& best_f, int budget) {
  const int stop = s.evaluations + budget;
  for (double step = 0.05; step > 1e-4 && s.evaluations < stop;) {
    bool improved = false;
    for (size_t k = 0; k < best.size() && s.evaluations < stop; ++k)
      for (double sign : {1.0, -1.0}) {
        std::vector<double> u = best;
        u[k] += sign * step;
        if (u[k] < 0.0 || u[k] > 1.0) continue;
        const double fu = s.f(u);
        if (fu < best_f - 1e-9) {
          best_f = fu, best = u, improved = true;
          break;
        }
      }
    if (!improved) step /= 2;
  }
}

}  // namespace

Result<CalibrationResult> calibrate_family(const std::vector<ValidationCase>& cases, const std::string& family,
                                           const CalibrationOptions& options) {
  Result<CalibrationResult> out;
  CalibrationResult& r = out.value;
  r.family = family;
  for (const ValidationCase& c : cases)
    if (c.kind == CaseKind::Training && is_time_metric(c.metric) && c.family == family) r.case_ids.push_back(c.id);
  if (r.case_ids.empty()) {
    out.errors.push_back({ErrorCode::OutOfRange, "/family", "no training case has family '" + family + "'"});
    return out;
  }
  Search s;
  s.base = options.start;
  for (const CalibrationParam& p : calibration_params()) {
    const bool wanted = options.fit.empty() || std::find(options.fit.begin(), options.fit.end(), p.key) != options.fit.end();
    if (wanted) s.params.push_back(&p);
    // Parameters outside the fit keep their start value, brought within bounds.
    s.base.*(p.member) = std::clamp(s.base.*(p.member), p.lo, p.hi);
  }
  for (const std::string& k : options.fit)
    if (std::none_of(calibration_params().begin(), calibration_params().end(), [&](const CalibrationParam& p) { return k == p.key; }))
      out.errors.push_back({ErrorCode::OutOfRange, "/fit", "unknown efficiency '" + k + "'"});
  if (!out.ok()) return out;
  s.objective = [&](const Efficiencies& e) { return family_mape_percent(cases, family, e); };

  r.start = s.base;
  std::vector<double> u(s.params.size());
  for (size_t i = 0; i < u.size(); ++i) u[i] = (s.base.*(s.params[i]->member) - s.params[i]->lo) / (s.params[i]->hi - s.params[i]->lo);
  double best = s.f(u);
  r.start_mape_percent = best;
  const int rounds = std::max(1, options.restarts + 1);
  for (int k = 0; k < rounds && !u.empty(); ++k) {
    const double before = best;
    const int left = options.max_evaluations - s.evaluations;
    if (left <= static_cast<int>(u.size()) + 1) break;
    nelder_mead(s, u, best, left / (rounds - k) * 3 / 4);
    compass(s, u, best, left / (rounds - k) / 4);
    if (k > 0 && before - best < 1e-6) break;  // a restart that finds nothing better ends the search
  }
  r.fitted = s.at(u);
  r.fitted_mape_percent = best;
  for (const ValidationCase& c : cases)
    if (c.kind == CaseKind::Training && is_time_metric(c.metric) && c.family == family) {
      const CaseResult cr = run_case(c, &r.fitted);
      r.fitted_max_abs_percent = std::max(r.fitted_max_abs_percent, cr.ok ? std::fabs(cr.error_percent) : 1000.0);
    }
  r.evaluations = s.evaluations;
  return out;
}

}  // namespace cutlab
