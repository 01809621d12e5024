#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/memory.h"
#include "core/ops.h"
#include "core/plan.h"
#include "core/presets.h"
#include "core/validation.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// validation/<name>, found from this file's path (CMake compiles it by absolute path), from
// CUTLAB_SOURCE_DIR when the build defines it, or from the working directory.
std::string validation_text(const std::string& name) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates = {fs::path(__FILE__).parent_path().parent_path() / "validation" / name};
#ifdef CUTLAB_SOURCE_DIR
  candidates.insert(candidates.begin(), fs::path(CUTLAB_SOURCE_DIR) / "validation" / name);
#endif
  for (const char* dir : {"validation/", "../validation/", "../../validation/"}) candidates.push_back(dir + name);
  for (const fs::path& p : candidates) {
    std::ifstream in(p);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  FAIL("validation/" + name + " not found");
  return "";
}

std::string cases_text() { return validation_text("cases.json"); }

const std::vector<ValidationCase>& cases() {
  static const std::vector<ValidationCase> c = [] {
    Result<std::vector<ValidationCase>> r = cases_from_json(cases_text());
    for (const Error& e : r.errors) UNSCOPED_INFO(e.path << ": " << e.message);
    REQUIRE(r.ok());
    return r.value;
  }();
  return c;
}

const ValidationCase& find_case(const std::string& id) {
  for (const ValidationCase& c : cases())
    if (c.id == id) return c;
  FAIL("no case " << id);
  return cases().front();
}

}  // namespace

// The figures docs/validation.md and the README state (31 training runs: mean |error| 2.4%, largest
// 7.1%; leave-one-source-out held-out mean 19.7%), with a small margin: a change that moves them must update
// the documents with the test. They live in ONE place, core/validation.h ValidationLimits, which
// `cutlab validate --check` reads too.
constexpr double kDocumentedMeanPercent = ValidationLimits::documented_mean_percent;
constexpr double kDocumentedWorstPercent = ValidationLimits::documented_worst_percent;
constexpr double kDocumentedHeldOutMeanPercent = ValidationLimits::documented_held_out_mean_percent;
constexpr double kMarginMeanPercent = ValidationLimits::margin_mean_percent,
                 kMarginWorstPercent = ValidationLimits::margin_worst_percent;
constexpr double kMarginHeldOutMeanPercent = ValidationLimits::margin_held_out_mean_percent;

TEST_CASE("the published training runs stay within the documented errors", "[validation]") {
  const ValidationSummary s = validate_cases(cases());
  REQUIRE(s.training_cases >= 30);
  REQUIRE(s.failed_cases == 0);
  for (const CaseResult& r : s.results) {
    // The runs the efficiencies were fitted to; later runs and peak memory have their own limits below.
    if (r.kind != CaseKind::Training || !is_time_metric(r.metric) || !r.calibrated) continue;
    INFO(r.id << ": predicted " << r.predicted << ", measured " << r.measured << " " << r.metric);
    CHECK(std::fabs(r.error_percent) <= kDocumentedWorstPercent + kMarginWorstPercent);
  }
  INFO("worst: " << s.worst_id);
  CHECK(s.max_abs_error_percent <= kDocumentedWorstPercent + kMarginWorstPercent);
  REQUIRE(s.mean_abs_error_percent <= kDocumentedMeanPercent + kMarginMeanPercent);
}

TEST_CASE("the runs added after the calibration stay within their documented errors", "[validation]") {
  // Two Megatron-Bridge Qwen3-30B runs whose container measured the same plan at about half the
  // throughput of the neighbouring containers, and the five GPT-OSS-120B runs, which cutlab over-predicts
  // by 21–38%, are "calibrated": false: reported apart, out of the fit (ValidationLimits: their mean and
  // largest error with the presets' efficiencies, docs/validation.md §1).
  const ValidationSummary s = validate_cases(cases());
  REQUIRE(s.uncalibrated.cases == 7);
  REQUIRE(s.failed_cases == 0);
  for (const CaseResult& r : s.results) {
    if (r.kind != CaseKind::Training || !is_time_metric(r.metric) || r.calibrated) continue;
    INFO(r.id << ": predicted " << r.predicted << ", measured " << r.measured);
    CHECK(std::fabs(r.error_percent) <= ValidationLimits::documented_uncalibrated_worst_percent + kMarginWorstPercent);
  }
  CHECK(s.uncalibrated.max_abs_error_percent <= ValidationLimits::documented_uncalibrated_worst_percent + kMarginWorstPercent);
  CHECK(s.uncalibrated.mean_abs_error_percent <= ValidationLimits::documented_uncalibrated_mean_percent + kMarginMeanPercent);
  // Not fitted: calibrate leaves them out, so the presets' fit is what it was.
  CalibrationOptions opt;
  opt.max_evaluations = 1;
  const Result<CalibrationResult> h100 = calibrate_family(cases(), "h100", opt);
  REQUIRE(h100.ok());
  CHECK(h100.value.case_ids.size() == 32);  // 21 Megatron / NeMo runs and 11 Megatron-Bridge runs
  for (const std::string& id : h100.value.case_ids)
    for (const CaseResult& r : s.results)
      if (r.id == id) CHECK(r.calibrated);
}

TEST_CASE("peak memory per GPU matches torchtitan's logged peak within the limit", "[validation][memory]") {
  // torchtitan benchmarks/llama3_h100_202412_torchtitan.md Tables 1 and 3: Llama 3.1 8B, FSDP on 8 and 128
  // H100, per-op SAC, eager / torch.compile / Float8: peak reserved memory, GiB.
  const ValidationSummary s = validate_cases(cases());
  REQUIRE(s.peak_memory_cases == 6);
  int n = 0;
  for (const ValidationCase& c : cases()) {
    if (c.metric != Metric::PeakMemoryGiB) continue;
    const CaseResult r = run_case(c);
    REQUIRE(r.ok);
    INFO(c.id << ": predicted " << r.predicted << " GiB, measured " << c.measured << " GiB");
    CHECK(std::fabs(r.error_percent) <= ValidationLimits::peak_memory_percent);
    // The metric is the peak stage's total per GPU, the allocator's reserve included.
    const Result<Estimate> e = evaluate(c.config);
    REQUIRE(test::training(e));
    const MemoryResult& mem = test::training(e)->memory;
    const StageMemory& peak = mem.per_stage[static_cast<size_t>(mem.peak_stage)];
    CHECK_THAT(r.predicted, WithinRel(peak.total_bytes / (1024.0 * 1024.0 * 1024.0), 1e-12));
    CHECK_THAT(peak.allocator_bytes,
               WithinRel(c.config.cluster.allocator_fragmentation * (peak.total_bytes - peak.allocator_bytes), 1e-12));
    ++n;
  }
  REQUIRE(n == 6);
  CHECK(s.peak_memory_max_abs_error_percent <= ValidationLimits::peak_memory_percent);
  // A case off by more than the limit fails: the same run with a published figure 15% higher.
  std::vector<ValidationCase> off = {find_case("torchtitan_202412_llama3.1_8b_8gpu_fsdp_compile_peak_memory")};
  off[0].measured *= 1.15;
  CHECK(validate_cases(off).peak_memory_max_abs_error_percent > ValidationLimits::peak_memory_percent);
}

TEST_CASE("the Megatron-Bridge model dimensions reproduce the published FLOPs per token", "[validation]") {
  // Megatron-Bridge docs/performance-summary-archive.md @ 067f987df0: model TFLOP/s per GPU ÷ tokens/s per GPU
  // is Megatron's num_floating_point_operations per token, which counts the causal half of the attention
  // scores; cutlab's model_flops_per_step counts all of them. Within the tables' rounding (3 digits): 0.7%.
  const std::map<std::string, double> model_tflops = {
      {"mbridge_26.06_DGX-H100_Qwen3_30B_a3B_FP8_16gpu_tp1pp1cp1ep16_gbs1024", 203},
      {"mbridge_26.04.01_DGX-H100_Qwen3_30B_a3B_FP8_16gpu_tp1pp1cp1ep16_gbs1024", 206},
      {"mbridge_26.04.01_DGX-H100_Qwen3_235B_a22B_FP8_256gpu_tp2pp8cp1ep32_gbs8192", 253},
      {"mbridge_26.02.01_DGX-H100_Qwen3_30B_a3B_FP8_16gpu_tp1pp2cp1ep8_gbs1024", 208},
      {"mbridge_25.11_DGX-H100_Qwen3_235B_a22B_FP8-CS_256gpu_tp2pp8cp1ep32_gbs2048", 233},
      {"mbridge_25.09_DGX-H100_Qwen3_30B_a3B_tokendrop_noprec_16gpu_tp1pp2cp1ep8_gbs512", 241}};
  for (const auto& [id, tflops] : model_tflops) {
    const ValidationCase& c = find_case(id);
    const Workload& w = c.config.workload;
    const double B = w.global_batch, s = w.seq_len;
    const double megatron = model_flops_per_step(c.config.model, B, s) -
                            1.5 * B * forward_attention_flops_per_sequence(c.config.model, s);
    INFO(id);
    CHECK_THAT(megatron / (B * s), WithinRel(tflops * 1e12 / c.measured, 0.007));
  }
}

TEST_CASE("ZeRO Figure 1 and Megatron's bytes per parameter are reproduced exactly", "[validation][memory]") {
  const ValidationSummary s = validate_cases(cases());
  REQUIRE(s.memory_cases == 7);
  for (const CaseResult& r : s.results)
    if (r.kind == CaseKind::Memory) {
      INFO(r.id << ": predicted " << r.predicted << ", published " << r.measured);
      CHECK(r.within_resolution);
    }
  REQUIRE(s.memory_exact);
  // Rajbhandari et al. 2019 (arXiv:1910.02054) Figure 1, Ψ = 7.5B, Nd = 64, K = 12, before rounding.
  const std::map<std::string, double> zero_bytes = {{"zero_7p5b_64gpu_stage0", 120e9},
                                                    {"zero_7p5b_64gpu_stage1", 31.40625e9},
                                                    {"zero_7p5b_64gpu_stage2", 16.640625e9},
                                                    {"zero_7p5b_64gpu_stage3", 1.875e9}};
  for (const auto& [id, bytes] : zero_bytes) {
    const ValidationCase& c = find_case(id);
    REQUIRE_THAT(state_bytes_per_param(c.plan, c.workload, c.dp_shards).total() * c.num_params, WithinRel(bytes, 1e-12));
  }
  // Megatron-LM README, distributed optimizer table: bf16 parameters, fp32 gradients: 18, 6 + 12/d.
  REQUIRE_THAT(run_case(find_case("megatron_bytes_per_param_bf16_nodist")).predicted, WithinAbs(18.0, 1e-12));
  REQUIRE_THAT(run_case(find_case("megatron_bytes_per_param_bf16_distopt_d64")).predicted, WithinAbs(6.0 + 12.0 / 64, 1e-12));
}

TEST_CASE("the A100 runs count FLOPs with recompute as Narayanan et al. 2021 do", "[validation]") {
  // arXiv:2104.04473 §5.1: F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) per iteration with full recompute.
  int n = 0;
  for (const ValidationCase& c : cases()) {
    if (c.metric != Metric::HardwareTflopsPerGpu) continue;
    const Result<Estimate> r = evaluate(c.config);
    REQUIRE(test::training(r));
    const TrainingEstimate& e = *test::training(r);
    const double B = c.config.workload.global_batch, s = c.config.workload.seq_len, l = c.config.model.layers,
                 h = c.config.model.hidden, V = c.config.model.vocab;
    INFO(c.id);
    CHECK_THAT(e.hardware_flops_per_step, WithinRel(96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)), 1e-12));
    ++n;
  }
  REQUIRE(n == 10);
}

TEST_CASE("the NeMo model dimensions reproduce the published FLOPs per token", "[validation]") {
  // NVIDIA/NeMo docs/source/performance/performance_summary.md @ 070a0bb168 (24.07, FP8, DGX-H100):
  // model TFLOP/s per GPU ÷ tokens/s per GPU = the FLOPs per token NeMo counted, which the model
  // dimensions in validation/cases.json must reproduce (to the rounding of the table).
  const std::map<std::string, double> tokens_per_s_per_gpu = {
      {"nemo2407_h100_fp8_GPT3-5B_64gpu", 22521},   {"nemo2407_h100_fp8_GPT3-20B_64gpu", 5851},
      {"nemo2407_h100_fp8_GPT3-175B_128gpu", 726},  {"nemo2407_h100_fp8_GPT3-175B_512gpu", 782},
      {"nemo2407_h100_fp8_LLAMA2-7B_8gpu", 16847},  {"nemo2407_h100_fp8_LLAMA2-13B_16gpu", 8646},
      {"nemo2407_h100_fp8_LLAMA2-70B_64gpu", 1707}, {"nemo2407_h100_fp8_Nemotron-340B_128gpu", 322},
      {"nemo2407_h100_fp8_LLAMA3-8B_8gpu", 12036},  {"nemo2407_h100_fp8_LLAMA3-70B_64gpu", 1533}};
  for (const auto& [id, tokens] : tokens_per_s_per_gpu) {
    const ValidationCase& c = find_case(id);
    const Workload& w = c.config.workload;
    const double per_token = model_flops_per_step(c.config.model, w.global_batch, w.seq_len) / (double(w.global_batch) * w.seq_len);
    INFO(id);
    CHECK_THAT(per_token, WithinRel(c.measured * 1e12 / tokens, 0.002));
  }
}

TEST_CASE("case files are read strictly, with the path of every problem", "[validation]") {
  const std::string good_config = R"({"model": "llama3-8b", "cluster": "dgx-h100", "plan": {"dp": 8},
                                      "workload": {"seq_len": 4096, "global_batch": 64}})";
  auto one = [&](const std::string& extra, const std::string& config) {
    return cases_from_json(
        R"({"cases": [{"id": "x", "family": "h100", "source_group": "g", "kind": "training", "metric": "model_tflops_per_gpu",
        "measured": 400, "source": "s", "settings_note": "n", "config": )" +
        config + extra + "}]}");
  };
  REQUIRE(one("", good_config).ok());
  const auto unknown = one(R"(, "fudge": 1.1)", good_config);
  REQUIRE(unknown.errors.size() == 1);
  CHECK(unknown.errors[0].code == ErrorCode::UnknownKey);
  CHECK(unknown.errors[0].path == "/cases/0/fudge");
  const auto bad_plan = one("", R"({"model": "llama3-8b", "cluster": "dgx-h100", "plan": {"tpp": 2}})");
  REQUIRE_FALSE(bad_plan.ok());
  CHECK(bad_plan.errors[0].path == "/cases/0/config/plan/tpp");
  const auto bad_metric = cases_from_json(
      R"({"cases": [{"id": "x", "family": "h100", "source_group": "g", "kind": "training", "metric": "speed",
      "measured": 1, "source": "s", "settings_note": "n", "config": )" +
      good_config + "}]}");
  REQUIRE_FALSE(bad_metric.ok());
  CHECK(bad_metric.errors[0].path == "/cases/0/metric");
  CHECK_FALSE(cases_from_json("[").ok());
  // "calibrated" is a boolean (default true); peak_memory_GiB belongs to training cases (a config).
  const std::string not_calibrated = R"(, "calibrated": false)", wrong_flag = R"(, "calibrated": "no")";
  const auto later_run = one(not_calibrated, good_config);
  REQUIRE(later_run.ok());
  CHECK_FALSE(later_run.value[0].calibrated);
  const auto bad_flag = one(wrong_flag, good_config);
  REQUIRE(bad_flag.errors.size() == 1);
  CHECK(bad_flag.errors[0].path == "/cases/0/calibrated");
  const std::string memory_case = R"({"cases": [{"id": "x", "family": "memory", "kind": "memory", "metric": "peak_memory_GiB",
      "measured": 80, "source": "s", "settings_note": "n", "plan": {}}]})";
  const auto memory_metric = cases_from_json(memory_case);
  REQUIRE_FALSE(memory_metric.ok());
  CHECK(memory_metric.errors[0].path == "/cases/0/metric");
  // A training run needs its source group (the unit the cross-validation leaves out), not empty.
  auto grouped = [&](const std::string& group) {
    return cases_from_json(R"({"cases": [{"id": "x", "family": "h100", )" + group +
                           R"("kind": "training", "metric": "model_tflops_per_gpu", "measured": 400, "source": "s",
                               "settings_note": "n", "config": )" +
                           good_config + "}]}");
  };
  const auto no_group = grouped("");
  REQUIRE(no_group.errors.size() == 1);
  CHECK(no_group.errors[0].code == ErrorCode::MissingKey);
  CHECK(no_group.errors[0].path == "/cases/0/source_group");
  const auto empty_group = grouped(R"("source_group": "", )");
  REQUIRE(empty_group.errors.size() == 1);
  CHECK(empty_group.errors[0].path == "/cases/0/source_group");
}

TEST_CASE("calibration is deterministic, bounded and never worse than its start", "[validation][calibration]") {
  CalibrationOptions opt;
  opt.fit = {"gemm", "attention"};
  opt.max_evaluations = 40;
  opt.restarts = 0;
  const Result<CalibrationResult> a = calibrate_family(cases(), "a100", opt);
  const Result<CalibrationResult> b = calibrate_family(cases(), "a100", opt);
  REQUIRE(a.ok());
  REQUIRE(a.value.case_ids.size() == 10);
  CHECK(a.value.fitted.gemm == b.value.fitted.gemm);
  CHECK(a.value.fitted.attention == b.value.fitted.attention);
  CHECK(a.value.fitted_mape_percent <= a.value.start_mape_percent);
  CHECK(a.value.fitted.gemm >= 0.5);
  CHECK(a.value.fitted.gemm <= 0.95);
  CHECK(a.value.fitted.nvlink == opt.start.nvlink);  // not fitted: kept
  CHECK_THAT(family_mape_percent(cases(), "a100", a.value.fitted), WithinRel(a.value.fitted_mape_percent, 1e-12));
  CHECK_FALSE(calibrate_family(cases(), "tpu", opt).ok());
}

TEST_CASE("the cluster presets carry the calibrated efficiencies", "[validation][calibration]") {
  // The values written into core/presets.cpp on 2026-11-30 fit their families as `cutlab calibrate` reported.
  // (docs/validation.md §3: A100 2.3%, H100 9.9%, H100 96GB at 500 W 5.1%.)
  CHECK(family_mape_percent(cases(), "a100", find_cluster_preset("dgx-a100")->efficiency) < 2.5);
  CHECK(family_mape_percent(cases(), "h100", find_cluster_preset("dgx-h100")->efficiency) < 10.0);
  CHECK(family_mape_percent(cases(), "h100-gt", find_cluster_preset("grand-teton-h100")->efficiency) < 5.5);
  for (const char* inherits : {"hgx-h800", "hgx-h200", "dgx-b200", "gb200-nvl72"})
    CHECK(find_cluster_preset(inherits)->efficiency.gemm == find_cluster_preset("dgx-h100")->efficiency.gemm);
}

TEST_CASE("leave-one-source-out cross-validation stays within its documented error", "[validation][cross-validation]") {
  const ValidationSummary in_sample = validate_cases(cases());
  const Result<CrossValidation> r = cross_validate(cases());
  for (const Error& e : r.errors) UNSCOPED_INFO(e.path << ": " << e.message);
  REQUIRE(r.ok());
  const CrossValidation& cv = r.value;
  REQUIRE(cv.failed_cases == 0);
  // Every case but the training cases calibration does not fit (peak memory, calibrated = false).
  const auto cross_validated = [](const ValidationCase& c) { return c.kind == CaseKind::Memory || is_fitted_run(c); };
  REQUIRE(cv.cases.size() == static_cast<size_t>(std::count_if(cases().begin(), cases().end(), cross_validated)));
  REQUIRE(cv.overall.cases == in_sample.training_cases);
  REQUIRE(cv.groups.size() >= 3);
  CHECK(cv.memory_cases == in_sample.memory_cases);
  CHECK(cv.memory_exact);
  // In-sample is validate_cases' figure (the presets' efficiencies).
  CHECK_THAT(cv.overall.in_sample_mean_percent, WithinRel(in_sample.mean_abs_error_percent, 1e-12));
  for (const CvCase& c : cv.cases) {
    INFO(c.id << " (" << c.group << "): in-sample " << c.in_sample_error_percent << "%, held-out " << c.held_out_error_percent << "%");
    if (c.kind == CaseKind::Memory) {
      CHECK(c.fit == -1);
      CHECK(c.held_out_predicted == c.in_sample_predicted);
      continue;
    }
    REQUIRE(c.fit >= 0);
    const CvFit& f = cv.fits[static_cast<size_t>(c.fit)];
    CHECK(f.held_out_group == c.group);
    CHECK(std::find(f.fitted_groups.begin(), f.fitted_groups.end(), c.group) == f.fitted_groups.end());
    CHECK(std::find(f.case_ids.begin(), f.case_ids.end(), c.id) == f.case_ids.end());
  }
  for (const CvFit& f : cv.fits)
    if (f.family == "a100") {
      CHECK(f.transfer);  // the A100 runs have one source: they take the H100 fit,
      // not the 500 W H100's, whose fractions of the datasheet peaks are its own (family_fits transfers)
      CHECK(f.fitted_families == std::vector<std::string>{"h100"});
    }
  for (const CvError& g : cv.groups)
    UNSCOPED_INFO(g.group << ": in-sample " << g.in_sample_mean_percent << "% / " << g.in_sample_max_percent << "%, held-out "
                          << g.held_out_mean_percent << "% / " << g.held_out_max_percent << "% (" << g.held_out_worst_id << ")");
  REQUIRE(cv.overall.held_out_mean_percent <= kDocumentedHeldOutMeanPercent + kMarginHeldOutMeanPercent);
  REQUIRE(cv.within_family.held_out_mean_percent <=
          ValidationLimits::documented_within_family_mean_percent + kMarginHeldOutMeanPercent);
  REQUIRE(cv.within_family.cases + cv.transfer.cases == cv.overall.cases);
}

namespace {

// A synthetic training run of llama3-8b whose published figure is what cutlab predicts with `truth`, so
// that the case's own efficiencies (the cluster's, set to `truth`) reproduce it exactly.
ValidationCase synthetic_run(const std::string& id, const std::string& family, const std::string& group, const std::string& plan,
                             const std::string& dtype, const Efficiencies& truth) {
  const std::string cluster = family == "a100" ? "dgx-a100" : "dgx-h100";
  const std::string text = R"({"cases": [{"id": ")" + id + R"(", "family": ")" + family + R"(", "source_group": ")" + group +
                           R"(", "kind": "training", "metric": "model_tflops_per_gpu", "measured": 1, "source": "synthetic",
      "settings_note": "synthetic", "config": {"model": "llama3-8b", "cluster": ")" +
                           cluster + R"(", "plan": )" + plan + R"(, "workload": {"seq_len": 4096, "global_batch": 64, "dtype": ")" +
                           dtype + R"("}}}]})";
  Result<std::vector<ValidationCase>> r = cases_from_json(text);
  for (const Error& e : r.errors) UNSCOPED_INFO(e.path << ": " << e.message);
  REQUIRE(r.ok());
  ValidationCase c = r.value.front();
  c.config.cluster.efficiency = truth;
  const CaseResult at_truth = run_case(c);
  REQUIRE(at_truth.ok);
  c.measured = at_truth.predicted;
  return c;
}

const CvFit& fit_for(const CrossValidation& cv, const std::string& group) {
  for (const CvFit& f : cv.fits)
    if (f.held_out_group == group) return f;
  FAIL("no fit for " << group);
  return cv.fits.front();
}

const CvCase& cv_case(const CrossValidation& cv, const std::string& id) {
  for (const CvCase& c : cv.cases)
    if (c.id == id) return c;
  FAIL("no case " << id);
  return cv.cases.front();
}

}  // namespace

TEST_CASE("cross-validation refits without the held-out group and predicts it", "[validation][cross-validation]") {
  // One truth for every run: gemm = 0.70 and gemm_fp8 = 0.92 × 0.70 (the priors: the MAP fit of exact runs is the truth), the rest the
  // defaults (= the search's start). Group A has two bf16 runs, group B a bf16 and an fp8 run (both of family h100); group C one A100
  // run, its family's only source. Fitting gemm and gemm_fp8 on either h100 group recovers the truth, so every held-out prediction is
  // (nearly) exact, as the in-sample ones are by construction.
  Efficiencies truth;
  truth.gemm = 0.70;
  truth.gemm_fp8 = 0.92 * 0.70;
  std::vector<ValidationCase> runs = {
      synthetic_run("a1", "h100", "A", R"({"dp": 8})", "bf16", truth),
      synthetic_run("a2", "h100", "A", R"({"tp": 2, "dp": 4})", "bf16", truth),
      synthetic_run("b1", "h100", "B", R"({"tp": 4, "dp": 2})", "bf16", truth),
      synthetic_run("b2", "h100", "B", R"({"dp": 8})", "fp8", truth),
      synthetic_run("c1", "a100", "C", R"({"tp": 2, "dp": 4})", "bf16", truth),
  };
  CalibrationOptions opt;
  opt.fit = {"gemm", "gemm_fp8"};
  opt.max_evaluations = 400;
  const Result<CrossValidation> r = cross_validate(runs, opt);
  for (const Error& e : r.errors) UNSCOPED_INFO(e.path << ": " << e.message);
  REQUIRE(r.ok());
  const CrossValidation& cv = r.value;
  REQUIRE(cv.fits.size() == 3);
  REQUIRE(cv.groups.size() == 3);
  CHECK(cv.groups[0].group == "A");
  CHECK(cv.overall.cases == 5);
  for (const CvCase& c : cv.cases) {
    INFO(c.id << ": in-sample " << c.in_sample_error_percent << "%, held-out " << c.held_out_error_percent << "%");
    CHECK(std::fabs(c.in_sample_error_percent) < 1e-9);
    CHECK(std::fabs(c.held_out_error_percent) < 0.05);
  }
  CHECK(cv.overall.held_out_mean_percent < 0.05);

  // A is fitted on B only: both keys searched, the truth recovered.
  const CvFit& fa = fit_for(cv, "A");
  CHECK_FALSE(fa.transfer);
  CHECK(fa.case_ids == std::vector<std::string>{"b1", "b2"});
  CHECK(fa.keys == std::vector<std::string>{"gemm", "gemm_fp8"});
  CHECK_THAT(fa.efficiency.gemm, WithinAbs(0.70, 2e-3));
  CHECK_THAT(fa.efficiency.gemm_fp8, WithinAbs(0.92 * 0.70, 2e-3));
  // B is fitted on A only: no fp8 run there, so gemm_fp8 is not searched and takes the prior's ratio of the fitted gemm.
  const CvFit& fb = fit_for(cv, "B");
  CHECK(fb.case_ids == std::vector<std::string>{"a1", "a2"});
  CHECK(fb.keys == std::vector<std::string>{"gemm"});
  CHECK(fb.undetermined == std::vector<std::string>{"gemm_fp8"});
  CHECK_THAT(fb.efficiency.gemm_fp8, WithinRel(0.92 * fb.efficiency.gemm, 1e-12));
  // C is A100's only source: transfer from the h100 runs of A and B.
  const CvFit& fc = fit_for(cv, "C");
  CHECK(fc.transfer);
  CHECK(fc.family == "a100");
  CHECK(fc.fitted_families == std::vector<std::string>{"h100"});
  CHECK(fc.fitted_groups == std::vector<std::string>{"A", "B"});
  CHECK(fc.case_ids.size() == 4);

  SECTION("a group's own figures never reach its own fit") {
    // A's published figures become absurd (×3). A's held-out predictions come from B alone and do not move;
    // B's (fitted on A alone) do. (C's, fitted on A and B, may stay: on the mean |error| two exact runs of B
    // hold the fit against two absurd ones of A.)
    std::vector<ValidationCase> absurd = runs;
    for (ValidationCase& c : absurd)
      if (c.source_group == "A") c.measured *= 3;
    const Result<CrossValidation> r2 = cross_validate(absurd, opt);
    REQUIRE(r2.ok());
    for (const char* id : {"a1", "a2"}) {
      INFO(id);
      CHECK(cv_case(r2.value, id).held_out_predicted == cv_case(cv, id).held_out_predicted);
      CHECK(std::fabs(cv_case(r2.value, id).held_out_error_percent) > 60);  // the absurd figure is 3× the truth
    }
    for (const char* id : {"b1", "b2"}) {
      INFO(id);
      CHECK(std::fabs(cv_case(r2.value, id).held_out_predicted / cv_case(cv, id).held_out_predicted - 1) > 0.01);
    }
  }
  SECTION("deterministic") {
    const Result<CrossValidation> again = cross_validate(runs, opt);
    REQUIRE(again.ok());
    for (size_t i = 0; i < runs.size(); ++i) CHECK(again.value.cases[i].held_out_predicted == cv.cases[i].held_out_predicted);
  }
  SECTION("a training run without a source group, or an unknown key, is an error") {
    std::vector<ValidationCase> ungrouped = runs;
    ungrouped[1].source_group.clear();
    const Result<CrossValidation> e1 = cross_validate(ungrouped, opt);
    REQUIRE(e1.errors.size() == 1);
    CHECK(e1.errors[0].path == "/cases/1/source_group");
    CalibrationOptions bad = opt;
    bad.fit = {"gemm", "fudge"};
    CHECK_FALSE(cross_validate(runs, bad).ok());
  }
}

TEST_CASE("every family in the fit-key table names known keys in calibration order", "[validation][calibration]") {
  for (const FamilyFit& f : family_fits()) {
    INFO(f.family);
    size_t last = 0;
    for (const std::string& k : f.keys) {
      const auto& p = calibration_params();
      const auto it = std::find_if(p.begin(), p.end(), [&](const CalibrationParam& q) { return k == q.key; });
      REQUIRE(it != p.end());
      const size_t at = static_cast<size_t>(it - p.begin());
      CHECK(at >= last);
      last = at;
    }
  }
  // No A100 run uses flash attention, fp8 or communication overlap: those keys cannot be fitted there.
  for (const char* k : {"attention", "gemm_fp8", "overlap"}) {
    const std::vector<std::string> a100 = fit_keys("a100");
    CHECK(std::find(a100.begin(), a100.end(), k) == a100.end());
  }
  CHECK(fit_keys("tpu").size() == calibration_params().size());  // a family without an entry: every key
}

TEST_CASE("the serving cases load, evaluate and stay within their documented errors", "[validation][serving]") {
  const Result<std::vector<ValidationCase>> cases = cases_from_json(validation_text("serving-cases.json"));
  INFO((cases.errors.empty() ? std::string() : cases.errors.front().path + ": " + cases.errors.front().message));
  REQUIRE(cases.ok());
  REQUIRE(cases.value.size() == 308);  // every entry of validation/serving-runs.json (docs/validation.md §8)
  for (const ValidationCase& c : cases.value) REQUIRE(c.kind == CaseKind::Serving);
  const ValidationSummary s = validate_cases(cases.value);
  // Serving cases stay out of the training statistics.
  REQUIRE(s.training_cases == 0);
  REQUIRE(s.results.size() == 308);
  using L = ServingLimits;
  CHECK(s.serving_failed_cases <= L::documented_failed_cases);
  CHECK(s.serving_mean_abs_error_percent <= L::documented_mean_percent + L::margin_mean_percent);
  CHECK(s.serving_max_abs_error_percent <= L::documented_worst_percent + L::margin_worst_percent);
  const auto over_30 = std::count_if(s.results.begin(), s.results.end(),
                                     [](const CaseResult& r) { return !r.ok || std::fabs(r.error_percent) > 30.0; });
  CHECK(over_30 <= L::documented_cases_over_30);
}

TEST_CASE("the serving cases cut their pipelines as TensorRT-LLM does", "[validation][serving]") {
  // TensorRT-LLM's Mapping.pp_layers: torch.tensor_split of the layers into pp parts, the first
  // layers mod pp ranks one layer more. Qwen3-235B-A22B's 94 layers over 4 stages: 24, 24, 23, 23
  // (cutlab's default, which shortens the first and last stages, would give 23, 24, 24, 23).
  const Result<std::vector<ValidationCase>> cases = cases_from_json(validation_text("serving-cases.json"));
  REQUIRE(cases.ok());
  int pipelined = 0, uneven = 0;
  for (const ValidationCase& c : cases.value) {
    const Plan& p = c.config.plan;
    if (p.pp <= 1) continue;
    ++pipelined;
    const int L = c.config.model.layers;
    std::vector<int> engine(static_cast<size_t>(p.pp));
    for (int i = 0; i < p.pp; ++i) engine[static_cast<size_t>(i)] = L / p.pp + (i < L % p.pp ? 1 : 0);
    INFO(c.id);
    CHECK(stage_layers(c.config.model, p) == engine);
    if (L % p.pp != 0) {
      ++uneven;
      if (L == 94 && p.pp == 4) CHECK(engine == std::vector<int>{24, 24, 23, 23});
    }
  }
  CHECK(pipelined == 40);  // Scout and Maverick TP4·PP2 and TP2·PP2, Qwen3 DEP2·PP2, Qwen3-235B TP2·PP4
  CHECK(uneven == 9);      // the 9 Qwen3-235B TP2·PP4 runs
}

namespace {
// The serving cases of one GPU family (validation/serving-cases.json, read once).
std::vector<const ValidationCase*> serving_family(const std::string& family) {
  static const Result<std::vector<ValidationCase>> all = cases_from_json(validation_text("serving-cases.json"));
  REQUIRE(all.ok());
  std::vector<const ValidationCase*> v;
  for (const ValidationCase& c : all.value)
    if (c.family == family) v.push_back(&c);
  return v;
}
}  // namespace

TEST_CASE("the serving fit's objective is the mean |error| plus ten times the mean excess over 25%",
          "[validation][serving][calibration]") {
  const std::vector<const ValidationCase*> h100 = serving_family("h100");
  REQUIRE(h100.size() == 35);
  // By hand from the cases' own errors, at the presets and at a slower HBM (most errors past 25%).
  Efficiencies slow = find_cluster_preset("dgx-h100")->efficiency;
  slow.hbm_stream *= 0.5;
  for (const Efficiencies& e : {find_cluster_preset("dgx-h100")->efficiency, slow}) {
    double sum = 0, excess = 0;
    for (const ValidationCase* c : h100) {
      const CaseResult r = run_case(*c, &e);
      REQUIRE(r.ok);
      sum += std::fabs(r.error_percent);
      excess += std::max(0.0, std::fabs(r.error_percent) - 25.0);
    }
    CHECK_THAT(serving_mape_percent(h100, e), WithinRel(sum / 35.0, 1e-12));
    CHECK_THAT(serving_fit_objective_percent(h100, e), WithinRel((sum + 10.0 * excess) / 35.0, 1e-12));
  }
  CHECK(serving_fit_objective_percent(h100, slow) > serving_mape_percent(h100, slow) + 10.0);  // the excess counts
}

TEST_CASE("the H200's measured serving priors are its kernel rates in cutlab's terms", "[validation][serving][calibration]") {
  // validation/kernel-rates-h200.json and graph-rates-h200.json: kernel rates measured on one H200
  // (bench/gpu/kernel_rates.py, graph_rates.py), and the same scripts again on a fresh machine (-repeat);
  // each prior's centre recomputed here from the raw times of each run.
  const Cluster h200 = *find_cluster_preset("hgx-h200");
  const double hbm = h200.hbm_bytes_per_s, floor_s = h200.efficiency.kernel_floor_s;
  const double fp8_sustained = h200.fp8_flops_per_s * h200.gemm_sustained;
  REQUIRE(hbm == 4.8e12);
  REQUIRE_THAT(fp8_sustained, WithinRel(1979e12 * 792.1 / 989.0, 1e-9));
  auto prior = [](const std::string& family, const std::string& key) {
    for (const CalibrationParam& p : serving_calibration_params(family))
      if (key == p.key) return std::make_pair(p.prior, p.prior_sd);
    FAIL("no serving parameter " + key);
    return std::make_pair(0.0, 0.0);
  };
  auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); };
  for (const std::string run : {"", "-repeat"}) {
    INFO("run " << run);
    const nlohmann::json k = nlohmann::json::parse(validation_text("kernel-rates-h200" + run + ".json"));
    const nlohmann::json g = nlohmann::json::parse(validation_text("graph-rates-h200" + run + ".json"));
    // serving_gemm: fp8 GEMMs of M >= 1,024 against the sustained fp8 rate.
    std::vector<double> gemm;
    for (const auto& d : k["dense"])
      if (d["dtype"] == "fp8" && d["M"].get<int>() >= 1024) gemm.push_back(d["flops_per_s"].get<double>() / fp8_sustained);
    REQUIRE(gemm.size() == 10);
    CHECK_THAT(prior("h200", "serving_gemm").first, WithinAbs(mean(gemm), 0.005));
    // hbm_stream: the largest thin GEMM of each dtype, its time less one kernel floor.
    double fp8_stream = 0, bf16_stream = 0;
    for (const auto& d : k["dense"])
      if (d["M"].get<int>() <= 16) {
        const double t = d["s"].get<double>(), e = d["weight_bytes_per_s"].get<double>() * t / ((t - floor_s) * hbm);
        (d["dtype"] == "fp8" ? fp8_stream : bf16_stream) = std::max(d["dtype"] == "fp8" ? fp8_stream : bf16_stream, e);
      }
    CHECK_THAT(fp8_stream, WithinAbs(0.717, 0.005));  // 234.9 MB in 71.3 µs
    CHECK_THAT(prior("h200", "hbm_stream").first, WithinAbs((fp8_stream + bf16_stream) / 2.0, 0.01));
    // serving_expert_gemm and serving_expert_stream: the grouped fp8 GEMMs, against the dense fp8 figures.
    std::vector<double> expert_gemm, expert_stream;
    for (const auto& d : k["grouped"]) {
      if (d["dtype"] != "fp8") continue;
      const double t = d["s"].get<double>();
      if (d["tokens_per_expert"].get<int>() >= 256)
        expert_gemm.push_back(d["flops_per_s"].get<double>() / (fp8_sustained * mean(gemm)));
      else expert_stream.push_back(d["weight_bytes_per_s"].get<double>() * t / ((t - 2.0 * floor_s) * hbm) / fp8_stream);
    }
    REQUIRE(expert_gemm.size() == 8);
    REQUIRE(expert_stream.size() == 8);
    CHECK_THAT(prior("h200", "serving_expert_gemm").first, WithinAbs(mean(expert_gemm), 0.01));
    CHECK_THAT(prior("h200", "serving_expert_stream").first, WithinAbs(mean(expert_stream), 0.01));
    // serving_attention: cuDNN's causal prefill against the bf16 peak and cutlab's shape factor.
    std::vector<double> attention;
    for (const auto& d : g["cudnn_attention"])
      if (d["backend"] == "CUDNN_ATTENTION")
        attention.push_back(d["flops_per_s"].get<double>() / h200.bf16_flops_per_s /
                            attention_efficiency(128, d["S"].get<double>(), 1.0));
    REQUIRE(attention.size() == 3);
    CHECK_THAT(prior("h200", "serving_attention").first, WithinAbs(mean(attention), 0.01));
    for (const std::vector<double>* v : {&gemm, &expert_gemm, &expert_stream, &attention})
      for (double x : *v) CHECK(x > 0.0);
    // Every measured value within two of its prior's standard deviations.
    for (double x : gemm) CHECK(std::fabs(x - prior("h200", "serving_gemm").first) <= 2.0 * prior("h200", "serving_gemm").second);
    for (double x : expert_stream)
      CHECK(std::fabs(x - prior("h200", "serving_expert_stream").first) <= 2.0 * prior("h200", "serving_expert_stream").second);
  }
  // The same die: the H100 takes the GEMM and attention rates, not the stream fractions; other GPUs the general priors.
  CHECK(prior("h100", "serving_attention") == prior("h200", "serving_attention"));
  CHECK(prior("h100", "serving_gemm") == prior("h200", "serving_gemm"));
  CHECK(prior("h100", "hbm_stream") == prior("", "hbm_stream"));
  for (const CalibrationParam& p : serving_calibration_params("b200")) CHECK(prior("", p.key) == std::make_pair(p.prior, p.prior_sd));
  CHECK(serving_prior_source("h200", "serving_attention") == "measured on an H200");
  CHECK(serving_prior_source("h100", "serving_attention") == "measured on an H200 (the same die)");
  CHECK(serving_prior_source("h100", "hbm_stream") == "general (core/validation.cpp)");
  CHECK(serving_prior_source("b200", "serving_gemm") == "general (core/validation.cpp)");
  // A fit of the family starts at its measured priors; a pooled fit takes the general ones.
  CHECK(serving_fit_start(h200.efficiency, "h200").serving_attention == prior("h200", "serving_attention").first);
  CHECK(serving_fit_start(h200.efficiency, "").serving_attention == Efficiencies{}.serving_attention);
  std::vector<const ValidationCase*> mixed = serving_family("h200");
  CHECK(shared_family(mixed) == "h200");
  mixed.push_back(serving_family("b200").front());
  CHECK(shared_family(mixed).empty());
}

TEST_CASE("the serving fit is deterministic, bounded and lowers its objective", "[validation][serving][calibration]") {
  const std::vector<const ValidationCase*> h100 = serving_family("h100");
  CalibrationOptions opt;
  opt.start = serving_fit_start(find_cluster_preset("dgx-h100")->efficiency, "h100");
  opt.fit = {"hbm_stream", "host_seq_us"};
  opt.max_evaluations = 40;
  opt.restarts = 0;
  const Result<CalibrationResult> a = calibrate_serving(h100, opt), b = calibrate_serving(h100, opt);
  REQUIRE(a.ok());
  CHECK(a.value.fitted.hbm_stream == b.value.fitted.hbm_stream);
  CHECK(a.value.fitted.host_seq_s == b.value.fitted.host_seq_s);
  CHECK(a.value.fitted.hbm_stream >= 0.60);
  CHECK(a.value.fitted.hbm_stream <= 0.95);
  CHECK(a.value.fitted.host_seq_s >= 0.0);
  CHECK(a.value.fitted.host_seq_s <= 150e-6);
  CHECK(a.value.fitted.serving_gemm == opt.start.serving_gemm);  // not fitted: kept
  CHECK(serving_fit_objective_percent(h100, a.value.fitted) < serving_fit_objective_percent(h100, opt.start));
}

TEST_CASE("the serving cross-validation refits without the held-out source, model or GPU family and predicts it",
          "[validation][serving][cross-validation]") {
  // Eight cases: on H100, Qwen3-235B from both sources (two each), Llama 4 Scout from one and gpt-oss-20b
  // from the other; on B200, Qwen3-235B from each source. A short fit of one parameter, so that each
  // held-out error can be recomputed here from a fit on exactly the other cases.
  const std::map<std::tuple<std::string, std::string, std::string>, int> wanted{
      {{"h100", "trtllm-perf-overview-00f3768", "qwen3-235b-a22b"}, 2},
      {{"h100", "trtllm-perf-overview-585c756", "qwen3-235b-a22b"}, 2},
      {{"h100", "trtllm-perf-overview-00f3768", "llama4-scout-17b-16e"}, 1},
      {{"h100", "trtllm-perf-overview-585c756", "gpt-oss-20b"}, 1},
      {{"b200", "trtllm-perf-overview-00f3768", "qwen3-235b-a22b"}, 1},
      {{"b200", "trtllm-perf-overview-585c756", "qwen3-235b-a22b"}, 1}};
  std::map<std::tuple<std::string, std::string, std::string>, int> taken;
  std::vector<ValidationCase> set;
  for (const std::string family : {"h100", "b200"})
    for (const ValidationCase* c : serving_family(family)) {
      const auto key = std::make_tuple(family, c->source_group, c->config.model.name);
      const auto it = wanted.find(key);
      if (it != wanted.end() && taken[key]++ < it->second) set.push_back(*c);
    }
  REQUIRE(set.size() == 8);
  CalibrationOptions opt;
  opt.fit = {"hbm_stream"};
  opt.max_evaluations = 12;
  opt.restarts = 0;
  const ServingCrossValidation cv = serving_cross_validate(set, opt);
  REQUIRE(cv.cases.size() == 8);
  // The error of case i under a fit on the cases `keep` selects, from its preset's start.
  auto refit_error = [&](size_t i, auto keep) {
    std::vector<const ValidationCase*> on;
    for (const ValidationCase& c : set)
      if (keep(c)) on.push_back(&c);
    CalibrationOptions o = opt;
    o.start = serving_fit_start(set[i].config.cluster.efficiency, shared_family(on));
    const Result<CalibrationResult> f = calibrate_serving(on, o);
    const Efficiencies e = f.ok() ? f.value.fitted : o.start;
    return run_case(set[i], &e).error_percent;
  };
  bool held_out_differs = false;
  for (size_t i = 0; i < set.size(); ++i) {
    const ValidationCase& h = set[i];
    CHECK(cv.cases[i].id == h.id);
    CHECK(cv.cases[i].source_group == h.source_group);
    CHECK(cv.cases[i].in_sample_error_percent == run_case(h).error_percent);
    CHECK(cv.cases[i].source_out_error_percent ==
          refit_error(i, [&](const ValidationCase& c) { return c.family == h.family && c.source_group != h.source_group; }));
    CHECK(cv.cases[i].model_out_error_percent ==
          refit_error(i, [&](const ValidationCase& c) { return c.family == h.family && c.config.model.name != h.config.model.name; }));
    CHECK(cv.cases[i].gpu_out_error_percent == refit_error(i, [&](const ValidationCase& c) { return c.family != h.family; }));
    held_out_differs = held_out_differs || cv.cases[i].source_out_error_percent != cv.cases[i].in_sample_error_percent;
  }
  CHECK(held_out_differs);
  double mean = 0, most = 0;
  for (const ServingHeldOut& h : cv.cases)
    mean += std::fabs(h.source_out_error_percent) / 8.0, most = std::max(most, std::fabs(h.source_out_error_percent));
  CHECK_THAT(cv.source_out_mean_percent, WithinRel(mean, 1e-12));
  CHECK(cv.source_out_max_percent == most);
}

TEST_CASE("a GPU family on another's die takes its kernel rates and fits only the engine's costs",
          "[validation][serving][calibration]") {
  REQUIRE(serving_die_family("gb200") == "b200");
  REQUIRE(serving_die_family("b200").empty());
  REQUIRE(serving_fit_keys("gb200") ==
          std::vector<std::string>{"host_seq_us", "serving_seq_layer_us", "serving_moe_layer_us", "serving_rank_cv"});
  REQUIRE(serving_fit_keys("b200").size() == serving_calibration_params().size());
  // The presets: the GB200's kernel rates are the B200's.
  const Efficiencies b200 = find_cluster_preset("dgx-b200")->efficiency, gb200 = find_cluster_preset("gb200-nvl72")->efficiency;
  int rates = 0;
  for (const CalibrationParam& p : serving_calibration_params())
    if (is_serving_kernel_rate(p.key)) {
      CHECK(gb200.*(p.member) == b200.*(p.member));
      ++rates;
    }
  CHECK(rates == 5);
  // with_kernel_rates copies those five and nothing else.
  Efficiencies start;
  start.host_seq_s = 7e-6, start.hbm_stream = 0.9;
  const Efficiencies w = with_kernel_rates(start, b200);
  CHECK(w.hbm_stream == b200.hbm_stream);
  CHECK(w.serving_attention == b200.serving_attention);
  CHECK(w.host_seq_s == 7e-6);
  // Held out by source, a GB200 case is predicted by the GB200 cases of the other source fitted on the
  // kernel rates of the B200 cases of the other source (nothing of the held-out source reaches either).
  std::vector<ValidationCase> set;
  for (const std::string family : {"gb200", "b200"})
    for (const std::string source : {"trtllm-perf-overview-00f3768", "trtllm-perf-overview-585c756"})
      for (const ValidationCase* c : serving_family(family))
        if (c->source_group == source) {
          set.push_back(*c);
          break;
        }
  REQUIRE(set.size() == 4);
  CalibrationOptions opt;
  opt.max_evaluations = 12;
  opt.restarts = 0;
  const ServingCrossValidation cv = serving_cross_validate(set, opt);
  auto fit = [&](const std::string& family, const std::string& source, const Efficiencies& from) {
    std::vector<const ValidationCase*> on;
    for (const ValidationCase& c : set)
      if (c.family == family && c.source_group != source) on.push_back(&c);
    CalibrationOptions o = opt;
    o.start = from;
    o.fit = serving_fit_keys(family);
    const Result<CalibrationResult> f = calibrate_serving(on, o);
    REQUIRE(f.ok());
    return f.value.fitted;
  };
  for (size_t i = 0; i < 2; ++i) {
    const ValidationCase& h = set[i];
    const Efficiencies die = fit("b200", h.source_group, serving_fit_start(b200, "b200"));
    const Efficiencies e = fit("gb200", h.source_group,
                               with_kernel_rates(serving_fit_start(h.config.cluster.efficiency, "gb200"), die));
    CHECK(e.serving_gemm == die.serving_gemm);
    CHECK(cv.cases[i].source_out_error_percent == run_case(h, &e).error_percent);
  }
}

TEST_CASE("a DEP4 FP4 serving case is the entry's engine, converted by hand", "[validation][serving]") {
  // validation/serving-runs.json, trtllm_585c756_deepseek_r1_b200_dep4_1000_1000: TensorRT-LLM
  // perf-overview @ 585c756, "DeepSeek R1 0528", column "B200 DEP4 (FP4)", row 1000/1000: 6,463 output
  // tokens/s per GPU; kv_cache_config dtype fp8; DEP4 = attention data-parallel 4 with expert-parallel 4.
  const Result<std::vector<ValidationCase>> cases = cases_from_json(validation_text("serving-cases.json"));
  REQUIRE(cases.ok());
  const auto it = std::find_if(cases.value.begin(), cases.value.end(),
                               [](const ValidationCase& c) { return c.id == "trtllm_585c756_deepseek_r1_b200_dep4_1000_1000"; });
  REQUIRE(it != cases.value.end());
  const ValidationCase& c = *it;
  CHECK(c.metric == Metric::OutputTokensPerSPerGpu);
  CHECK(c.measured == 6463);
  CHECK(c.family == "b200");
  const Config& k = c.config;
  CHECK(k.model.name == "deepseek-r1");
  CHECK(k.cluster.name == "dgx-b200");
  CHECK(k.plan.tp == 1);
  CHECK(k.plan.pp == 1);
  CHECK(k.plan.ep == 4);
  CHECK(k.plan.dp == 1);
  const Mesh mesh = derive_mesh(k.plan, k.workload);
  CHECK(mesh.gpus == 4);
  CHECK(mesh.dp_attn == 4);  // four attention replicas
  CHECK(k.workload.mode == Mode::Infer);
  CHECK(k.workload.weight_dtype == WeightDtype::FP4);
  CHECK(k.workload.kv_dtype == KvDtype::FP8);
  CHECK(k.workload.prompt_len == 1000);
  CHECK(k.workload.output_len == 1000);
  CHECK(k.workload.batch == 2048);  // TensorRT-LLM's default max_batch_size (not stated)
  // The prediction is read through serving_metric_value, at the concurrency the KV cache allows.
  const CaseResult r = run_case(c);
  REQUIRE(r.ok);
  CHECK(r.batch >= 1);
  CHECK(r.batch <= 2048);
  CHECK(r.model == "deepseek-r1");
  // Per GPU = total / 4 GPUs; the total is every replica's decode rate.
  ValidationCase total = c;
  total.metric = Metric::OutputTokensPerSTotal;
  CHECK_THAT(run_case(total).predicted, WithinRel(4 * r.predicted, 1e-12));
}

TEST_CASE("serving cases need a serving config and serving metrics", "[validation][serving]") {
  auto one = [](const std::string& kind, const std::string& metric, const std::string& mode) {
    return cases_from_json(R"({"cases": [{"id": "x", "family": "b200", "source_group": "g", "kind": ")" + kind + R"(", "metric": ")" +
                           metric +
                           R"(", "measured": 100, "source": "s", "settings_note": "n", "config": {"model": "qwen3-30b-a3b",
                           "cluster": "dgx-b200", "plan": {"tp": 1}, "workload": {"mode": ")" +
                           mode + R"(", "batch": 8, "weight_dtype": "fp4"}}}]})");
  };
  REQUIRE(one("serving", "output_tokens_per_s_per_gpu", "infer").ok());
  const auto train_mode = one("serving", "output_tokens_per_s_total", "train");
  REQUIRE(train_mode.errors.size() == 1);
  CHECK(train_mode.errors[0].path == "/cases/0/config/workload/mode");
  const auto wrong_metric = one("serving", "model_tflops_per_gpu", "infer");
  REQUIRE(wrong_metric.errors.size() == 1);
  CHECK(wrong_metric.errors[0].path == "/cases/0/metric");
  const auto training_metric = one("training", "output_tokens_per_s_per_gpu", "infer");
  REQUIRE_FALSE(training_metric.ok());
  CHECK(training_metric.errors[0].path == "/cases/0/metric");
}
