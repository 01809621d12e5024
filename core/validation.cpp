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
      {Metric::OutputTokensPerSPerGpu, "tokens/s", CaseKind::Serving,
       "output tokens per second per GPU at the engine's operating point (trtllm-bench 'Per GPU Output Throughput')"},
      {Metric::OutputTokensPerSTotal, "tokens/s", CaseKind::Serving,
       "output tokens per second of all GPUs together (trtllm-bench 'Total Output Throughput')"},
  };
  return m;
}

bool is_time_metric(Metric metric) {
  return metric == Metric::HardwareTflopsPerGpu || metric == Metric::ModelTflopsPerGpu || metric == Metric::MfuPercent ||
         metric == Metric::TokensPerSPerGpu || metric == Metric::StepTimeS;
}

bool is_fitted_run(const ValidationCase& c) { return c.kind == CaseKind::Training && is_time_metric(c.metric) && c.calibrated; }

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
  // The cross-validation leaves out one source group at a time: every training run needs one.
  r.text("source_group", c.source_group, kind == "training");
  if (j.contains("source_group") && j["source_group"].is_string() && c.source_group.empty())
    errors.push_back({ErrorCode::OutOfRange, path + "/source_group", "must not be empty"});
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

// A training or serving case: its 'config' (model, cluster, plan, workload), and none of the memory case's keys.
void read_training_config(const json& j, const std::string& path, ValidationCase& c, Errors& errors) {
  const std::string kind = name_of(c.kind);
  for (const char* k : {"plan", "workload", "num_params", "dp_shards", "resolution"})
    if (j.contains(k))
      errors.push_back({ErrorCode::Incompatible, path + "/" + k,
                        std::string("'") + k + "' belongs to memory cases; a " + kind + " case has 'config'"});
  if (!j.contains("config")) {
    errors.push_back({ErrorCode::MissingKey, path + "/config", "a " + kind + " case needs 'config' (model, cluster, plan, workload)"});
    return;
  }
  Result<Config> cfg = config_from_json(j["config"]);
  nest_errors(cfg.errors, path + "/config", errors);
  c.config = cfg.value;
  if (c.kind == CaseKind::Serving && cfg.ok() && c.config.workload.mode != Mode::Infer)
    errors.push_back({ErrorCode::Incompatible, path + "/config/workload/mode", "a serving case needs workload.mode \"infer\""});
  if (c.kind == CaseKind::Training && cfg.ok() && c.config.workload.mode != Mode::Train)
    errors.push_back({ErrorCode::Incompatible, path + "/config/workload/mode", "a training case needs workload.mode \"train\""});
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
  static const char* known[] = {"id",         "family",     "source_group", "kind",      "metric", "measured",
                                "resolution", "num_params", "dp_shards",    "source",    "quote",  "settings_note",
                                "config",     "plan",       "workload",     "calibrated"};
  if (!j.is_object()) {
    errors.push_back({ErrorCode::WrongType, path, "a case must be an object"});
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }))
      errors.push_back({ErrorCode::UnknownKey, path + "/" + it.key(), "unknown key '" + it.key() + "' in a validation case"});
  const std::string kind = read_case_fields(j, path, c, errors);
  check_case_values(j, path, c, kind, errors);
  if (c.kind == CaseKind::Memory) read_memory_config(j, path, c, errors);
  else read_training_config(j, path, c, errors);
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

// A serving case: the config evaluated as the engine serves it (in-flight batching caps the sequences
// in flight at what the KV cache holds: InferenceEstimate::concurrency).
void run_serving_case(const ValidationCase& c, const Efficiencies* efficiency, CaseResult& r) {
  Config cfg = c.config;
  if (efficiency) cfg.cluster.efficiency = *efficiency;
  r.model = cfg.model.name;
  const Result<Resolved> resolved = resolve(cfg);
  if (!resolved.ok()) {
    r.errors = resolved.errors;
    return;
  }
  const InferenceEstimate e = evaluate_serving(resolved.value).serving;
  if (!(e.concurrency >= 1)) {
    r.errors.push_back({ErrorCode::Incompatible, "/config/workload/batch",
                        "cutlab: not one sequence of prompt_len + output_len fits beside the weights"});
    return;
  }
  r.ok = true;
  r.batch = static_cast<int>(std::lround(e.concurrency));
  r.predicted = serving_metric_value(e, c.metric);
  r.fits = e.memory.fits;
  r.ttft_s = e.ttft_s;
  r.tpot_s = e.tpot_s;
}

}  // namespace

double serving_metric_value(const InferenceEstimate& e, Metric metric) {
  switch (metric) {
    case Metric::OutputTokensPerSPerGpu: return e.output_tokens_per_s_per_gpu;
    case Metric::OutputTokensPerSTotal: return e.output_tokens_per_s_total;
    default: break;
  }
  return 0.0;
}

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
  r.source_group = c.source_group;
  r.metric = c.metric;
  r.kind = c.kind;
  r.calibrated = c.calibrated;
  r.measured = c.measured;
  if (c.kind == CaseKind::Serving) {
    run_serving_case(c, efficiency, r);
    if (!r.ok) return r;
  } else if (c.kind == CaseKind::Memory) {
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
  double serving_sum = 0;
  auto add_to = [&](std::vector<FamilyError>& v, const std::string& key, const CaseResult& r, double a) {
    auto f = std::find_if(v.begin(), v.end(), [&](const FamilyError& x) { return x.family == key; });
    if (f == v.end()) f = v.insert(v.end(), FamilyError{key, 0, 0, 0, ""});
    add(*f, r, a);
  };
  for (const ValidationCase& c : cases) {
    CaseResult r = run_case(c);
    const double a = std::fabs(r.error_percent);
    if (c.kind == CaseKind::Serving) {
      if (!r.ok) {
        ++s.serving_failed_cases;
      } else {
        ++s.serving_cases;
        serving_sum += a;
        if (a > s.serving_max_abs_error_percent || s.serving_worst_id.empty()) {
          s.serving_max_abs_error_percent = a;
          s.serving_worst_id = r.id;
        }
        add_to(s.serving_models, r.model, r, a);
        add_to(s.serving_gpus, r.family, r, a);
      }
    } else if (c.kind == CaseKind::Memory) {
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
  if (s.serving_cases > 0) s.serving_mean_abs_error_percent = serving_sum / s.serving_cases;
  for (std::vector<FamilyError>* v : {&s.serving_models, &s.serving_gpus})
    for (FamilyError& f : *v) f.mean_abs_error_percent /= f.cases;
  return s;
}

// [Calibration]

const std::vector<CalibrationParam>& calibration_params() {
  // Bounds are physically plausible ranges; priors (value ± spread) are what kernel benchmarks reach,
  // so that a parameter the runs do not determine stays near its physical value instead of drifting
  // to a bound (the calibration is a maximum a posteriori fit: mean |error| + Σ prior_weight·z²).
  // - gemm: a fraction of the GPU's sustained GEMM rate (Cluster::gemm_sustained, the best shape's
  //   rate: 0.86 of the A100's datasheet peak, 0.80 of the H100 SXM's). cuBLAS bf16 GEMMs of the large
  //   shapes of training sustain about 0.6–0.8 of the datasheet peak on A100 and H100, 0.75–1.0 of the
  //   best shape's rate: 0.87 ± 0.10, bounds 0.6–1.
  // - gemm_fp8: a ratio to gemm. fp8 and bf16 GEMMs share the tensor cores, clocks and memory system;
  //   large fp8 GEMMs with per-tensor scaling run about 1.8–1.9× as fast as bf16 ones (cuBLASLt and
  //   Transformer Engine benchmarks on H100), so gemm_fp8 ≈ 0.92 ± 0.05 of gemm.
  // - gemm_half_balance (core/ops.h gemm_half_dim): square bf16 GEMMs of side 1,024 and 2,048 reach
  //   roughly 0.65–0.8 (A100) and 0.5–0.8 (H100) of their large-size rate, x/(x + half) with half
  //   between 0 and about 512 elements on an H100 SXM (ridge point 295 FLOP per byte): 0.43 ± 0.43
  //   of the ridge point, bounds 0–1.75.
  // - attention (flash, head dim 128, long sequences; core/ops.h attention_efficiency): 0.35 (FA2 on
  //   H100) to 0.75 (FA3) of the bf16 peak: 0.55 ± 0.12.
  // - hbm: streaming kernels reach 0.7–0.93 of the datasheet bandwidth: 0.85 ± 0.07.
  // - nvlink, scaleout: NCCL bus bandwidth 0.5–0.95 of the link (nccl-tests): 0.80 ± 0.1.
  // - overlap: a fraction of the window: 0.8 ± 0.2.
  // - kernel floor: 1–8 µs per kernel (launch, ramp-up, tail; Gray 2019): 3 ± 2 µs.
  // - deepep_sm_GBps: what one of DeepEP's 20 SMs copies. DeepSeek-V3 §3.2.2: 20 SMs saturate an H800's
  //   InfiniBand (50 GB/s) and NVLink (160 GB/s), about 8–10 GB/s per SM; DeepEP's README measures
  //   153–158 GB/s intranode on H800: 8 ± 4 GB/s, bounds 3–30.
  // - expert_gemm_host_us: the host's work for one expert's GEMM in one pass (core/ops.cpp OpList::host):
  //   PyTorch's eager dispatch costs about 5–20 µs per op on a server CPU, and Transformer Engine's
  //   GroupedLinear runs a quantizer and a cuBLAS call per expert: 10 ± 10 µs, bounds 0–60.
  static const std::vector<CalibrationParam> p = {
      {"gemm", &Efficiencies::gemm, 0.60, 1.0, 0.87, 0.10},
      {"gemm_fp8", &Efficiencies::gemm_fp8, 0.50, 1.0, 0.92, 0.05, &Efficiencies::gemm},
      {"gemm_half_balance", &Efficiencies::gemm_half_balance, 0.0, 1.75, 0.43, 0.43},
      {"attention", &Efficiencies::attention, 0.30, 0.90, 0.55, 0.12},
      {"hbm", &Efficiencies::hbm, 0.70, 0.95, 0.85, 0.07},
      {"nvlink", &Efficiencies::nvlink, 0.50, 0.95, 0.80, 0.10},
      {"scaleout", &Efficiencies::scaleout, 0.50, 0.95, 0.80, 0.10},
      {"overlap", &Efficiencies::overlap, 0.0, 1.0, 0.8, 0.2},
      {"kernel_floor_us", &Efficiencies::kernel_floor_s, 1e-6, 8e-6, 3e-6, 2e-6, nullptr, 1e-6, "kernel_floor_s"},
      {"deepep_sm_GBps", &Efficiencies::deepep_sm_bytes_per_s, 3e9, 30e9, 8e9, 4e9, nullptr, 1e9, "deepep_sm_bytes_per_s"},
      {"expert_gemm_host_us", &Efficiencies::expert_gemm_host_s, 0, 60e-6, 10e-6, 10e-6, nullptr, 1e-6, "expert_gemm_host_s"},
  };
  return p;
}

const std::vector<FamilyFit>& family_fits() {
  // Every efficiency that the family's runs determine (docs/validation.md §2, "Which parameters are fitted").
  // nvlink is left out of both: fitting it moves neither family's error by more than 0.06 points. A100 has no
  // fp8 run (gemm_fp8), no flash attention (attention: its unfused attention is batched GEMMs) and no run that
  // overlaps communication (overlap).
  static const std::vector<FamilyFit> f = {
      {"a100", {"gemm", "gemm_half_balance", "hbm", "scaleout", "kernel_floor_us"}},
      {"h100",
       {"gemm", "gemm_fp8", "gemm_half_balance", "attention", "hbm", "scaleout", "overlap", "kernel_floor_us", "deepep_sm_GBps",
        "expert_gemm_host_us"}},
      // Grand Teton's H100 runs at 500 W of the SXM part's 700 W: its sustained clocks, and so its fractions
      // of the datasheet peaks, are its own (core/presets.cpp gt_fitted), and it does not stand in for other GPUs.
      {"h100-gt", {"gemm", "gemm_fp8", "gemm_half_balance", "attention", "hbm", "scaleout", "overlap", "kernel_floor_us"}, false},
  };
  return f;
}

bool family_transfers(const std::string& family) {
  for (const FamilyFit& f : family_fits())
    if (family == f.family) return f.transfers;
  return true;
}

std::vector<std::string> fit_keys(const std::string& family) {
  for (const FamilyFit& f : family_fits())
    if (family == f.family) return f.keys;
  std::vector<std::string> all;
  for (const CalibrationParam& p : calibration_params()) all.push_back(p.key);
  return all;
}

double family_mape_percent(const std::vector<ValidationCase>& cases, const std::string& family, const Efficiencies& e) {
  double sum = 0;
  int n = 0;
  for (const ValidationCase& c : cases) {
    if (!is_fitted_run(c) || c.family != family) continue;
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

// A search over the parameters of `table` that options.fit names (all when empty), from options.start
// with every parameter of the table brought within its bounds (those outside the fit keep that value);
// an unknown key in options.fit is an error at /fit.
Search make_search(const std::vector<CalibrationParam>& table, const CalibrationOptions& options, Errors& errors,
                   const std::string& what) {
  Search s;
  s.base = options.start;
  for (const CalibrationParam& p : table) {
    const bool wanted = options.fit.empty() || std::find(options.fit.begin(), options.fit.end(), p.key) != options.fit.end();
    if (wanted) s.params.push_back(&p);
    s.base.*(p.member) = std::clamp(s.base.*(p.member), p.lo, p.hi);
  }
  for (const std::string& k : options.fit)
    if (std::none_of(table.begin(), table.end(), [&](const CalibrationParam& p) { return k == p.key; }))
      errors.push_back({ErrorCode::OutOfRange, "/fit", "unknown " + what + " '" + k + "'"});
  return s;
}

// Σ prior_weight·z² of the fitted parameters at `e` (the Gaussian priors of the MAP fit).
double prior_cost(const std::vector<const CalibrationParam*>& params, const Efficiencies& e) {
  double prior = 0;
  for (const CalibrationParam* p : params) {
    const double v = p->relative_to ? e.*(p->member) / e.*(p->relative_to) : e.*(p->member);
    const double z = (v - p->prior) / p->prior_sd;
    prior += prior_weight_percent * z * z;
  }
  return prior;
}

// The search's rounds from s.base: Nelder–Mead then compass, restarted from the best point while a
// restart improves; the best point in the unit cube.
std::vector<double> searched(Search& s, const CalibrationOptions& options) {
  std::vector<double> u(s.params.size());
  for (size_t i = 0; i < u.size(); ++i) u[i] = (s.base.*(s.params[i]->member) - s.params[i]->lo) / (s.params[i]->hi - s.params[i]->lo);
  double best = s.f(u);
  const int rounds = std::max(1, options.restarts + 1);
  for (int k = 0; k < rounds && !u.empty(); ++k) {
    const double before = best;
    const int left = options.max_evaluations - s.evaluations;
    if (left <= static_cast<int>(u.size()) + 1) break;
    nelder_mead(s, u, best, left / (rounds - k) * 3 / 4);
    compass(s, u, best, left / (rounds - k) / 4);
    if (k > 0 && before - best < 1e-6) break;  // a restart that finds nothing better ends the search
  }
  return u;
}

}  // namespace

Result<CalibrationResult> calibrate_family(const std::vector<ValidationCase>& cases, const std::string& family,
                                           const CalibrationOptions& options) {
  Result<CalibrationResult> out;
  CalibrationResult& r = out.value;
  r.family = family;
  for (const ValidationCase& c : cases)
    if (is_fitted_run(c) && c.family == family) r.case_ids.push_back(c.id);
  if (r.case_ids.empty()) {
    out.errors.push_back({ErrorCode::OutOfRange, "/family", "no training case has family '" + family + "'"});
    return out;
  }
  Search s = make_search(calibration_params(), options, out.errors, "efficiency");
  if (!out.ok()) return out;
  const std::vector<const CalibrationParam*> fitted_params = s.params;
  s.objective = [&cases, &family, fitted_params](const Efficiencies& e) {
    return family_mape_percent(cases, family, e) + prior_cost(fitted_params, e);
  };
  r.start = s.base;
  r.start_mape_percent = family_mape_percent(cases, family, s.base);
  const std::vector<double> u = searched(s, options);
  r.fitted = s.at(u);
  r.fitted_mape_percent = family_mape_percent(cases, family, r.fitted);
  for (const ValidationCase& c : cases)
    if (is_fitted_run(c) && c.family == family) {
      const CaseResult cr = run_case(c, &r.fitted);
      r.fitted_max_abs_percent = std::max(r.fitted_max_abs_percent, cr.ok ? std::fabs(cr.error_percent) : 1000.0);
    }
  r.evaluations = s.evaluations;
  return out;
}

// [Serving calibration]

const std::vector<CalibrationParam>& serving_calibration_params() {
  // Priors and bounds (kernel benchmarks; docs/validation.md §8):
  // - hbm_stream: large sequential reads (weights, KV cache) reach 0.8–0.93 of the datasheet bandwidth
  //   (NVIDIA nvbandwidth / STREAM-like copies on H100 and H200; FlashMLA's 3,000 of the H800's 3,350 GB/s
  //   in its memory-bound decode): 0.85 ± 0.07, bounds 0.6–0.95.
  // - serving_gemm: as `gemm`, a fraction of the sustained rate (Cluster::gemm_sustained; cuBLAS/CUTLASS
  //   GEMMs of large shapes at 0.6–0.8 of the dense peak, the same for fp8 and NVFP4 kernels against
  //   their own peaks): 0.87 ± 0.125, bounds 0.375–1 (0.30–0.80 of an H100 SXM's datasheet peak).
  // - serving_expert_gemm: the grouped GEMM of the routed experts against serving_gemm, the dense
  //   projections' rate at the same shape. MegaBlocks' block-sparse expert kernels reach 98.6% of cuBLAS
  //   batched GEMMs on the same problems (Gale et al. 2023, §6); an engine's fused MoE kernel also runs
  //   experts of uneven token counts in one launch, each padded to its tiles, and permutes rows on the way
  //   in and out: 0.8 ± 0.15, bounds 0.3–1. Apart from serving_gemm so that what the MoE cases ask of the
  //   expert GEMMs does not move the dense models' GEMMs (the serving cases hold no dense model).
  // - serving_expert_stream: the routed experts' weights as the grouped GEMM reads them, against
  //   hbm_stream (the dense weights' and the KV cache's long sequential reads). An expert is a few
  //   small matrices (Qwen3-30B-A3B: 3 of 2,048 × 768, 2.6 MB in NVFP4), read tile by tile by a
  //   launch that also walks the expert offsets, with each expert's last wave of tiles part-empty;
  //   no kernel benchmark is cited here, so the prior mirrors serving_expert_gemm's: 0.8 ± 0.15,
  //   bounds 0.3–1. Apart from hbm_stream so that what the MoE cases ask of the expert reads does not
  //   move the dense models' weight and KV reads (the serving cases hold no dense model).
  // - serving_attention: flash attention at 0.35 (FA2 on H100) to 0.75 (FA3) of the bf16 peak; FlashMLA's
  //   absorbed decode 580–660 of the H800's 989 TFLOP/s (deepseek-ai/FlashMLA README): 0.55 ± 0.12,
  //   bounds 0.2–0.9.
  // - host_seq_us: no kernel benchmark: the engine's Python per-request work each step (scheduling,
  //   sampler bookkeeping, stop checks, responses), some µs to tens of µs per request on a server CPU
  //   (vLLM's profiling of its v0.5 engine, "vLLM v0.6.0: 2.7x Throughput Improvement", vLLM blog,
  //   Sept. 2024, found CPU work a majority of each step for small models): 20 ± 20 µs, bounds 0–150 µs.
  // - serving_seq_layer_us: GPU time per sequence per layer that the roofline's bytes and FLOPs miss: each
  //   sequence's decode attention runs as its own thread blocks (query load, the split-K softmax
  //   reduction, the output write) over its paged KV blocks (a block-table walk), and its K/V append,
  //   rotary and routing (top-k, expert offsets) touch a few hundred bytes at scattered addresses:
  //   latency-bound work, a fraction of a µs per sequence at full occupancy. No kernel benchmark isolates
  //   it: 0.3 ± 0.3 µs, bounds 0–3 µs.
  // - serving_moe_layer_us: an MoE layer runs about ten small kernels beyond the four the step lists
  //   (routing scores and top-k, token counts per expert and their prefix sums, activation quantization,
  //   the dispatch's layout), a few µs each back to back in a CUDA graph (Gray 2019, "Getting Started
  //   with CUDA Graphs"; the training fit's kernel_floor_us, 3.2 µs on H100), and with EP the exchange of
  //   the counts: 30 ± 30 µs, bounds 0–300 µs.
  // - serving_rank_cv: the spread (coefficient of variation) of a rank's GPU time per MoE layer across its
  //   EP group, which each layer's exchange waits out (core/serving_step.h expected_max_normal). No kernel
  //   benchmark measures it; synchronous GPU jobs show per-step spreads of a few percent: 0.05 ± 0.05,
  //   bounds 0–0.3.
  static const std::vector<CalibrationParam> p = {
      {"hbm_stream", &Efficiencies::hbm_stream, 0.60, 0.95, 0.85, 0.07},
      {"serving_gemm", &Efficiencies::serving_gemm, 0.375, 1.0, 0.87, 0.125},
      {"serving_expert_gemm", &Efficiencies::serving_expert_gemm, 0.3, 1.0, 0.8, 0.15},
      {"serving_expert_stream", &Efficiencies::serving_expert_stream, 0.3, 1.0, 0.8, 0.15},
      {"serving_attention", &Efficiencies::serving_attention, 0.20, 0.90, 0.55, 0.12},
      {"host_seq_us", &Efficiencies::host_seq_s, 0.0, 150e-6, 20e-6, 20e-6, nullptr, 1e-6, "host_seq_s"},
      {"serving_seq_layer_us", &Efficiencies::serving_seq_layer_s, 0.0, 3e-6, 0.3e-6, 0.3e-6, nullptr, 1e-6, "serving_seq_layer_s"},
      {"serving_moe_layer_us", &Efficiencies::serving_moe_layer_s, 0.0, 300e-6, 30e-6, 30e-6, nullptr, 1e-6, "serving_moe_layer_s"},
      {"serving_rank_cv", &Efficiencies::serving_rank_cv, 0.0, 0.3, 0.05, 0.05},
  };
  return p;
}

const std::vector<MeasuredPrior>& measured_serving_priors() {
  // Kernel rates measured on one H200 SXM (bench/gpu/kernel_rates.py, torch 2.11 / CUDA 13.0, 2026-12-04;
  // validation/kernel-rates-h200.json; bench/gpu/implied.py turns them into cutlab's terms;
  // docs/validation.md §8, "Kernel rates measured on an H200"). fp8, the weights of 49 of the 54 H200 cases:
  // - hbm_stream: a decode GEMM of 16 rows streams 235 MB of fp8 weights at 0.718 of 4.8 TB/s beyond one
  //   kernel floor, 470 MB of bf16 at 0.791 (smaller matrices less: a fixed cost per GEMM beyond the floor):
  //   0.75 ± 0.05;
  // - serving_gemm: cuBLASLt fp8 GEMMs, M 1,024 to 16,384, 0.755–0.810 of the sustained rate (mean 0.789;
  //   bf16 0.868): 0.79 ± 0.04;
  // - serving_expert_gemm: CUTLASS grouped fp8 GEMMs (torch._scaled_grouped_mm) of one EP rank's experts of
  //   DeepSeek-R1, Llama 4 Scout and Maverick and Qwen3-235B, 256 and 1,024 tokens per expert, 0.41–0.80 of
  //   serving_gemm's rate (Qwen3's 1,536-wide experts the lowest): 0.67 ± 0.14;
  // - serving_expert_stream: the same at 16 and 64 tokens per expert stream the experts at 0.64–0.78 of the
  //   dense fp8 stream (Qwen3-30B-A3B's 24 MoE layers back to back in a CUDA graph: 0.66): 0.72 ± 0.06;
  // - serving_attention: cuDNN's fused attention (torch's SDPA cuDNN backend, the class of Hopper kernel
  //   the engines run), causal bf16 prefill of 2,048 to 32,768 tokens, 64 heads of 128: 461–600 TFLOP/s,
  //   0.62–0.66 of the bf16 peak after cutlab's key-length factor (core/ops.cpp attention_efficiency);
  //   flash attention 2 reaches 0.36: 0.63 ± 0.05.
  // The decode GEMMs of Llama 3 8B (TP 1) and 70B (TP 8) back to back in a CUDA graph stream their
  // weights at 0.68–0.84 beyond the 3.167 µs floor per GEMM, the hbm_stream prior's range.
  // The H100 is the same GH100 die with the same SMs and clocks but HBM3 at 3.35 TB/s: the GEMM and
  // attention rates carry over, the stream fractions are not assumed to.
  static const char* h200 = "measured on an H200";
  static const char* die = "measured on an H200 (the same die)";
  static const std::vector<MeasuredPrior> p = {
      {"h200", "hbm_stream", 0.75, 0.05, h200},          {"h200", "serving_gemm", 0.79, 0.04, h200},
      {"h200", "serving_expert_gemm", 0.67, 0.14, h200}, {"h200", "serving_expert_stream", 0.72, 0.06, h200},
      {"h200", "serving_attention", 0.63, 0.05, h200},   {"h100", "serving_gemm", 0.79, 0.04, die},
      {"h100", "serving_expert_gemm", 0.67, 0.14, die},  {"h100", "serving_attention", 0.63, 0.05, die},
  };
  return p;
}

namespace {
// The prior measured for `key` on `family`'s GPU, or null.
const MeasuredPrior* measured_prior(const std::string& family, const std::string& key) {
  for (const MeasuredPrior& m : measured_serving_priors())
    if (family == m.family && key == m.key) return &m;
  return nullptr;
}
}  // namespace

std::string serving_prior_source(const std::string& family, const std::string& key) {
  const MeasuredPrior* m = measured_prior(family, key);
  return m ? m->source : "general (core/validation.cpp)";
}

std::vector<CalibrationParam> serving_calibration_params(const std::string& family) {
  std::vector<CalibrationParam> v = serving_calibration_params();
  for (CalibrationParam& p : v)
    if (const MeasuredPrior* m = measured_prior(family, p.key)) p.prior = m->prior, p.prior_sd = m->prior_sd;
  return v;
}

Efficiencies serving_fit_start(const Efficiencies& preset, const std::string& family) {
  Efficiencies e = preset;
  const Efficiencies defaults;
  for (const CalibrationParam& p : serving_calibration_params()) {
    const MeasuredPrior* m = measured_prior(family, p.key);
    e.*(p.member) = m ? m->prior : defaults.*(p.member);
  }
  return e;
}

std::string serving_die_family(const std::string& family) { return family == "gb200" ? "b200" : ""; }

bool is_serving_kernel_rate(const std::string& key) {
  return key == "hbm_stream" || key == "serving_expert_stream" || key == "serving_gemm" || key == "serving_expert_gemm" ||
         key == "serving_attention";
}

std::vector<std::string> serving_fit_keys(const std::string& family) {
  std::vector<std::string> keys;
  for (const CalibrationParam& p : serving_calibration_params())
    if (serving_die_family(family).empty() || !is_serving_kernel_rate(p.key)) keys.push_back(p.key);
  return keys;
}

Efficiencies with_kernel_rates(Efficiencies start, const Efficiencies& die) {
  for (const CalibrationParam& p : serving_calibration_params())
    if (is_serving_kernel_rate(p.key)) start.*(p.member) = die.*(p.member);
  return start;
}

namespace {
// A serving case run with the serving efficiencies of `e` (serving_calibration_params) over its own cluster's
// others (its links, kernel floor, training GEMM rates): a fit pooled over GPU families sets only what it fits.
CaseResult run_serving_case_with(const ValidationCase& c, const Efficiencies& e) {
  Efficiencies mine = c.config.cluster.efficiency;
  for (const CalibrationParam& p : serving_calibration_params()) mine.*(p.member) = e.*(p.member);
  return run_case(c, &mine);
}

// (Σ|eᵢ| + excess_weight · Σ max(0, |eᵢ| − serving_excess_percent)) / n; a case that does not evaluate counts as 1000%.
double serving_error_percent(const std::vector<const ValidationCase*>& cases, const Efficiencies& e, double excess_weight) {
  double sum = 0, excess = 0;
  for (const ValidationCase* c : cases) {
    const CaseResult r = run_serving_case_with(*c, e);
    const double a = r.ok ? std::fabs(r.error_percent) : 1000.0;
    sum += a;
    excess += std::max(0.0, a - serving_excess_percent);
  }
  return cases.empty() ? 0.0 : (sum + excess_weight * excess) / double(cases.size());
}
}  // namespace

std::string shared_family(const std::vector<const ValidationCase*>& cases) {
  std::string family = cases.empty() ? "" : cases.front()->family;
  for (const ValidationCase* c : cases)
    if (c->family != family) return "";
  return family;
}

double serving_mape_percent(const std::vector<const ValidationCase*>& cases, const Efficiencies& e) {
  return serving_error_percent(cases, e, 0.0);
}

double serving_fit_objective_percent(const std::vector<const ValidationCase*>& cases, const Efficiencies& e) {
  return serving_error_percent(cases, e, serving_excess_weight);
}

Result<CalibrationResult> calibrate_serving(const std::vector<const ValidationCase*>& cases, const CalibrationOptions& options) {
  Result<CalibrationResult> out;
  CalibrationResult& r = out.value;
  for (const ValidationCase* c : cases) r.case_ids.push_back(c->id);
  if (cases.empty()) {
    out.errors.push_back({ErrorCode::OutOfRange, "/cases", "no serving case to fit"});
    return out;
  }
  const std::vector<CalibrationParam> params = serving_calibration_params(shared_family(cases));
  Search s = make_search(params, options, out.errors, "serving efficiency");
  if (!out.ok()) return out;
  const std::vector<const CalibrationParam*> fitted_params = s.params;
  s.objective = [&cases, fitted_params](const Efficiencies& e) {
    return serving_fit_objective_percent(cases, e) + prior_cost(fitted_params, e);
  };
  r.start = s.base;
  r.start_mape_percent = serving_mape_percent(cases, s.base);
  const std::vector<double> u = searched(s, options);
  r.fitted = s.at(u);
  r.fitted_mape_percent = serving_mape_percent(cases, r.fitted);
  for (const ValidationCase* c : cases) {
    const CaseResult cr = run_serving_case_with(*c, r.fitted);
    r.fitted_max_abs_percent = std::max(r.fitted_max_abs_percent, cr.ok ? std::fabs(cr.error_percent) : 1000.0);
  }
  r.evaluations = s.evaluations;
  return out;
}

ServingCrossValidation serving_cross_validate(const std::vector<ValidationCase>& cases, const CalibrationOptions& options) {
  ServingCrossValidation cv;
  std::vector<const ValidationCase*> serving;
  std::vector<std::string> families;
  for (const ValidationCase& c : cases)
    if (c.kind == CaseKind::Serving) {
      serving.push_back(&c);
      if (std::find(families.begin(), families.end(), c.family) == families.end()) families.push_back(c.family);
    }
  for (const ValidationCase* c : serving) {
    ServingHeldOut h;
    h.id = c->id, h.model = c->config.model.name, h.family = c->family, h.source_group = c->source_group, h.measured = c->measured;
    const CaseResult r = run_case(*c);
    h.in_sample_error_percent = r.ok ? r.error_percent : 1000.0;
    cv.cases.push_back(h);
  }
  auto select = [&](auto keep) {
    std::vector<const ValidationCase*> v;
    for (const ValidationCase* c : serving)
      if (keep(*c)) v.push_back(c);
    return v;
  };
  // The fit of `fit_on` from `start` (its keys: `keys`, unless the options name some), or the start when it fails.
  auto fitted = [&](const std::vector<const ValidationCase*>& fit_on, const Efficiencies& start,
                    const std::vector<std::string>& keys) {
    CalibrationOptions o = options;
    o.start = start;
    if (o.fit.empty()) o.fit = keys;
    const Result<CalibrationResult> f = calibrate_serving(fit_on, o);
    return f.ok() ? f.value.fitted : o.start;
  };
  auto predict = [&](const Efficiencies& e, auto held, double ServingHeldOut::*field) {
    for (size_t i = 0; i < serving.size(); ++i)
      if (held(*serving[i])) {
        const CaseResult r = run_serving_case_with(*serving[i], e);
        cv.cases[i].*field = r.ok ? r.error_percent : 1000.0;
      }
  };
  // Within each family, leave out the cases sharing one value of `key` (a source, a model); with no
  // other cases to fit on, the fit's start (the priors) predicts them. A family on another's die takes the
  // kernel rates of that family's fit without the same cases (nothing of the held-out value reaches it).
  auto leave_one_out = [&](auto key, double ServingHeldOut::*field) {
    for (const std::string& fam : families) {
      std::vector<std::string> values;
      for (const ValidationCase* c : select([&](const ValidationCase& x) { return x.family == fam; }))
        if (std::find(values.begin(), values.end(), key(*c)) == values.end()) values.push_back(key(*c));
      const std::string die = serving_die_family(fam);
      const std::vector<const ValidationCase*> die_cases = select([&](const ValidationCase& c) { return c.family == die; });
      for (const std::string& v : values) {
        auto held = [&](const ValidationCase& c) { return c.family == fam && key(c) == v; };
        const std::vector<const ValidationCase*> rest = select(
            [&](const ValidationCase& c) { return c.family == fam && key(c) != v; });
        // nothing of the held-out cases' in-sample fit; the general priors when no case is left to fit
        Efficiencies start = serving_fit_start(select(held).front()->config.cluster.efficiency, shared_family(rest));
        if (!die.empty() && !die_cases.empty()) {
          const std::vector<const ValidationCase*> die_rest = select(
              [&](const ValidationCase& c) { return c.family == die && key(c) != v; });
          const Efficiencies die_start = serving_fit_start(die_cases.front()->config.cluster.efficiency, die);
          start = with_kernel_rates(start, fitted(die_rest, die_start, serving_fit_keys(die)));
        }
        predict(fitted(rest, start, serving_fit_keys(fam)), held, field);
      }
    }
  };
  leave_one_out([](const ValidationCase& c) { return c.source_group; }, &ServingHeldOut::source_out_error_percent);
  leave_one_out([](const ValidationCase& c) { return c.config.model.name; }, &ServingHeldOut::model_out_error_percent);
  // Leave one GPU family out: the other families' cases, pooled.
  for (const std::string& fam : families) {
    auto held = [&](const ValidationCase& c) { return c.family == fam; };
    const std::vector<const ValidationCase*> rest = select([&](const ValidationCase& c) { return c.family != fam; });
    const Efficiencies start = serving_fit_start(select(held).front()->config.cluster.efficiency, shared_family(rest));
    predict(fitted(rest, start, {}), held, &ServingHeldOut::gpu_out_error_percent);
  }
  const double n = std::max<double>(1.0, double(cv.cases.size()));
  for (const ServingHeldOut& h : cv.cases) {
    cv.in_sample_mean_percent += std::fabs(h.in_sample_error_percent) / n;
    cv.source_out_mean_percent += std::fabs(h.source_out_error_percent) / n;
    cv.model_out_mean_percent += std::fabs(h.model_out_error_percent) / n;
    cv.gpu_out_mean_percent += std::fabs(h.gpu_out_error_percent) / n;
    cv.in_sample_max_percent = std::max(cv.in_sample_max_percent, std::fabs(h.in_sample_error_percent));
    cv.model_out_max_percent = std::max(cv.model_out_max_percent, std::fabs(h.model_out_error_percent));
    cv.gpu_out_max_percent = std::max(cv.gpu_out_max_percent, std::fabs(h.gpu_out_error_percent));
    cv.source_out_max_percent = std::max(cv.source_out_max_percent, std::fabs(h.source_out_error_percent));
  }
  return cv;
}

// [Cross-validation]

namespace {

bool contains(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

void add_unique(std::vector<std::string>& v, const std::string& x) {
  if (!contains(v, x)) v.push_back(x);
}

const CalibrationParam* find_param(const std::string& key) {
  for (const CalibrationParam& p : calibration_params())
    if (key == p.key) return &p;
  return nullptr;
}

// True when no run of `runs` (all of family `pool`) depends on parameter `p`: their mean |error| is the
// same, bit for bit, with p at either bound as at the start (`at_start`).
bool undetermined(const std::vector<ValidationCase>& runs, const std::string& pool, const Efficiencies& start, double at_start,
                  const CalibrationParam& p) {
  Efficiencies lo = start, hi = start;
  lo.*(p.member) = p.lo;
  hi.*(p.member) = p.hi;
  return family_mape_percent(runs, pool, lo) == at_start && family_mape_percent(runs, pool, hi) == at_start;
}

// Fits `keys` on the runs `train` (indices into `cases`), pooled as one family, as calibrate_family does;
// fills the rest of `fit`.
Result<CvFit> fit_runs(const std::vector<ValidationCase>& cases, const std::vector<size_t>& train,
                       const std::vector<std::string>& keys, const CalibrationOptions& options, CvFit fit) {
  Result<CvFit> out;
  const std::string pool = "cross-validation";
  std::vector<ValidationCase> runs;
  for (size_t i : train) {
    runs.push_back(cases[i]);
    runs.back().family = pool;
    add_unique(fit.fitted_families, cases[i].family);
    add_unique(fit.fitted_groups, cases[i].source_group);
    fit.case_ids.push_back(cases[i].id);
  }
  Efficiencies start = options.start;  // within bounds, as calibrate_family starts
  for (const CalibrationParam& p : calibration_params()) start.*(p.member) = std::clamp(start.*(p.member), p.lo, p.hi);
  fit.efficiency = start;
  if (!runs.empty()) {
    const double at_start = family_mape_percent(runs, pool, start);
    for (const std::string& k : keys) {
      const CalibrationParam* p = find_param(k);
      if (p && undetermined(runs, pool, start, at_start, *p)) fit.undetermined.push_back(k);
      else fit.keys.push_back(k);
    }
  }
  if (!fit.keys.empty()) {
    CalibrationOptions o = options;
    o.fit = fit.keys;
    const Result<CalibrationResult> r = calibrate_family(runs, pool, o);
    if (!r.ok()) {
      out.errors = r.errors;
      return out;
    }
    fit.efficiency = r.value.fitted;
    fit.evaluations = r.value.evaluations;
  }
  // No fp8 run among the fitted ones: an fp8 GEMM is taken to reach the prior's ratio (calibration_params) of
  // the fraction of the peak that the fitted bf16 GEMMs reach.
  if (contains(fit.undetermined, "gemm_fp8") && contains(fit.keys, "gemm")) {
    const CalibrationParam* p = find_param("gemm_fp8");
    fit.efficiency.gemm_fp8 = p->prior * fit.efficiency.gemm;
  }
  fit.fit_mape_percent = runs.empty() ? 0.0 : family_mape_percent(runs, pool, fit.efficiency);
  out.value = std::move(fit);
  return out;
}

void add_error(CvError& e, const CvCase& x) {
  const double a = std::fabs(x.in_sample_error_percent), b = std::fabs(x.held_out_error_percent);
  ++e.cases;
  e.in_sample_mean_percent += a;
  e.held_out_mean_percent += b;
  if (a > e.in_sample_max_percent || e.in_sample_worst_id.empty()) e.in_sample_max_percent = a, e.in_sample_worst_id = x.id;
  if (b > e.held_out_max_percent || e.held_out_worst_id.empty()) e.held_out_max_percent = b, e.held_out_worst_id = x.id;
}

void finish_error(CvError& e) {
  if (e.cases == 0) return;
  e.in_sample_mean_percent /= e.cases;
  e.held_out_mean_percent /= e.cases;
}

}  // namespace

Result<CrossValidation> cross_validate(const std::vector<ValidationCase>& cases, const CalibrationOptions& options) {
  Result<CrossValidation> out;
  CrossValidation& cv = out.value;
  // The runs calibration fits (is_fitted_run): peak-memory cases and runs with calibrated = false are
  // neither fitted nor predicted held-out.
  auto training = [&](size_t i) { return is_fitted_run(cases[i]); };
  std::vector<std::string> groups;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!training(i)) continue;
    if (cases[i].source_group.empty())
      out.errors.push_back({ErrorCode::MissingKey, "/cases/" + std::to_string(i) + "/source_group",
                            "training case '" + cases[i].id + "' has no source_group"});
    else add_unique(groups, cases[i].source_group);
  }
  for (const std::string& k : options.fit)
    if (!find_param(k)) out.errors.push_back({ErrorCode::OutOfRange, "/fit", "unknown efficiency '" + k + "'"});
  if (!out.ok()) return out;

  std::vector<int> fit_of(cases.size(), -1);
  for (const std::string& g : groups) {
    std::vector<std::string> families;
    for (size_t i = 0; i < cases.size(); ++i)
      if (training(i) && cases[i].source_group == g) add_unique(families, cases[i].family);
    for (const std::string& f : families) {
      CvFit fit;
      fit.held_out_group = g;
      fit.family = f;
      std::vector<size_t> train;
      for (size_t i = 0; i < cases.size(); ++i)
        if (training(i) && cases[i].family == f && cases[i].source_group != g) train.push_back(i);
      std::vector<std::string> keys = options.fit.empty() ? fit_keys(f) : options.fit;
      if (train.empty()) {
        // Transfer: the other families' runs outside G (of families that transfer: family_fits()), with the
        // union of their fit keys.
        fit.transfer = true;
        std::vector<std::string> pool_families;
        for (size_t i = 0; i < cases.size(); ++i)
          if (training(i) && cases[i].family != f && cases[i].source_group != g && family_transfers(cases[i].family))
            train.push_back(i), add_unique(pool_families, cases[i].family);
        if (options.fit.empty()) {
          keys.clear();
          for (const CalibrationParam& p : calibration_params())
            if (std::any_of(pool_families.begin(), pool_families.end(),
                            [&](const std::string& pf) { return contains(fit_keys(pf), p.key); }))
              keys.push_back(p.key);
        }
      }
      Result<CvFit> r = fit_runs(cases, train, keys, options, std::move(fit));
      if (!r.ok()) {
        out.errors = r.errors;
        return out;
      }
      for (size_t i = 0; i < cases.size(); ++i)
        if (training(i) && cases[i].source_group == g && cases[i].family == f) fit_of[i] = static_cast<int>(cv.fits.size());
      cv.fits.push_back(std::move(r.value));
    }
  }

  cv.overall.group = "all";
  cv.within_family.group = "within family";
  cv.transfer.group = "transfer";
  for (const std::string& g : groups) cv.groups.push_back(CvError{g, 0, 0, 0, 0, 0, "", ""});
  for (size_t i = 0; i < cases.size(); ++i) {
    const ValidationCase& c = cases[i];
    if (c.kind != CaseKind::Memory && !training(i)) continue;  // serving cases and runs reported apart
    CvCase x;
    x.id = c.id;
    x.family = c.family;
    x.group = c.source_group;
    x.kind = c.kind;
    x.metric = c.metric;
    x.measured = c.measured;
    const CaseResult in = run_case(c);
    x.in_sample_predicted = in.predicted;
    x.in_sample_error_percent = in.error_percent;
    if (c.kind == CaseKind::Memory) {
      ++cv.memory_cases;
      cv.memory_exact = cv.memory_exact && in.ok && in.within_resolution;
      x.ok = in.ok;
      x.held_out_predicted = in.predicted;
      x.held_out_error_percent = in.error_percent;
    } else {
      x.fit = fit_of[i];
      const CaseResult held = run_case(c, &cv.fits[static_cast<size_t>(x.fit)].efficiency);
      x.ok = in.ok && held.ok;
      x.held_out_predicted = held.predicted;
      x.held_out_error_percent = held.error_percent;
      if (!x.ok) {
        ++cv.failed_cases;
      } else {
        add_error(cv.overall, x);
        add_error(cv.fits[static_cast<size_t>(x.fit)].transfer ? cv.transfer : cv.within_family, x);
        for (CvError& e : cv.groups)
          if (e.group == x.group) add_error(e, x);
      }
    }
    cv.cases.push_back(std::move(x));
  }
  finish_error(cv.overall);
  finish_error(cv.within_family);
  finish_error(cv.transfer);
  for (CvError& e : cv.groups) finish_error(e);
  return out;
}

}  // namespace cutlab
