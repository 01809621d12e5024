// validation.h: cutlab against published measurements, and the calibration of efficiencies.
// A case (validation/cases.json, docs/validation.md) is a cutlab config plus one published figure and
// the metric it is compared with: TFLOP/s per GPU with recompute (Narayanan et al. 2021 §5.1), model
// TFLOP/s per GPU or MFU (Megatron num_floating_point_operations), tokens/s per GPU, step time,
// peak memory per GPU (torchtitan's logged peak), or model-state memory (ZeRO Figure 1; Megatron's
// bytes per parameter). A serving case (validation/serving-cases.json) is a serving config and an
// engine's published output tokens/s (per GPU or in total); serving cases are reported apart and fit
// only the serving efficiencies (calibrate_serving). Calibration fits the
// Efficiencies of one GPU family to that family's training runs by a deterministic bounded
// Nelder–Mead search, polished by a compass search, on the mean absolute percentage error: one set
// of values per family, never a factor per case. Cross-validation leaves out one source (publication) at
// a time, refits without it and predicts it. Pure functions: JSON text in, values out; the CLI reads and
// writes the files.
#pragma once
#include <string>
#include <vector>

#include "core/error.h"
#include "core/estimate.h"
#include "core/inference.h"

namespace cutlab {

enum class CaseKind { Training, Memory, Serving };
// What a published figure measures (its unit and meaning: case_metrics()).
enum class Metric {
  HardwareTflopsPerGpu,
  ModelTflopsPerGpu,
  MfuPercent,
  TokensPerSPerGpu,
  StepTimeS,
  PeakMemoryGiB,
  ModelStateGBPerGpu,
  StateBytesPerParam,
  OutputTokensPerSPerGpu,
  OutputTokensPerSTotal
};

template <>
struct ChoiceTable<CaseKind> {
  static constexpr const char* key = "kind";
  static constexpr std::array<Named<CaseKind>, 3> entries{{{CaseKind::Training, "training", "training"},
                                                           {CaseKind::Memory, "memory", "memory"},
                                                           {CaseKind::Serving, "serving", "serving"}}};
};
template <>
struct ChoiceTable<Metric> {
  static constexpr const char* key = "metric";
  static constexpr std::array<Named<Metric>, 10> entries{{
      {Metric::HardwareTflopsPerGpu, "hardware_tflops_per_gpu", "TFLOP/s per GPU with recompute"},
      {Metric::ModelTflopsPerGpu, "model_tflops_per_gpu", "model TFLOP/s per GPU"},
      {Metric::MfuPercent, "mfu_percent", "MFU, %"},
      {Metric::TokensPerSPerGpu, "tokens_per_s_per_gpu", "tokens/s per GPU"},
      {Metric::StepTimeS, "step_time_s", "step time, s"},
      {Metric::PeakMemoryGiB, "peak_memory_GiB", "peak memory per GPU, GiB"},
      {Metric::ModelStateGBPerGpu, "model_state_GB_per_gpu", "model states per GPU, GB"},
      {Metric::StateBytesPerParam, "state_bytes_per_param", "model-state bytes per parameter"},
      {Metric::OutputTokensPerSPerGpu, "output_tokens_per_s_per_gpu", "output tokens/s per GPU"},
      {Metric::OutputTokensPerSTotal, "output_tokens_per_s_total", "output tokens/s in total"},
  }};
};

struct ValidationCase {
  std::string id;            // the published-runs.json id (or that id plus a suffix)
  std::string family;        // calibration group: "a100", "h100", ... ("memory" for memory cases)
  std::string source_group;  // the publication the case comes from, e.g. "nemo-24.07-fp8" (cross-validation)
  CaseKind kind = CaseKind::Training;
  Metric metric = Metric::HardwareTflopsPerGpu;
  double measured = 0;    // in the metric's unit
  double resolution = 0;  // memory cases: the rounding step of the published figure (0: exact)
  std::string source, quote, settings_note;
  // false: added after the family's efficiencies were fitted (core/presets.cpp); reported apart, not
  // held to the documented error limits, left out of calibrate and cross-validation until a refit sets
  // it true.
  bool calibrated = true;
  Config config;          // training and serving cases
  Plan plan;              // memory cases: zero / distributed_optimizer
  Workload workload;      // memory cases: grad_dtype
  double num_params = 0;  // memory cases with a per-GPU metric: Ψ
  double dp_shards = 1;   // memory cases: data-parallel size d (ZeRO's Nd)
};

// Metric names and their units, e.g. {"model_tflops_per_gpu", "TFLOP/s"}.
struct MetricInfo {
  Metric metric;
  const char* unit;
  CaseKind kind;
  const char* meaning;
};
const std::vector<MetricInfo>& case_metrics();

// Parses {"cases": [...], ...}; every error with its JSON path (strict keys, as json_io).
Result<std::vector<ValidationCase>> cases_from_json(const std::string& text);

struct CaseResult {
  std::string id, family, source_group;
  Metric metric = Metric::HardwareTflopsPerGpu;
  CaseKind kind = CaseKind::Training;
  bool ok = false;  // false: the config did not evaluate (errors says why)
  Errors errors;
  bool calibrated = true;  // as the case
  double predicted = 0, measured = 0;
  double error_percent = 0;        // (predicted − measured) / measured × 100
  bool within_resolution = false;  // memory cases: |predicted − measured| ≤ resolution / 2
  bool fits = true;                // training cases: the plan fits in HBM according to cutlab
  Dtype dtype = Dtype::BF16;       // training cases: GEMM dtype of the workload
  double step_s = 0, mfu = 0;      // training cases, for the report
  // Serving cases: the model, the sequences in flight per replica (InferenceEstimate::concurrency: the
  // config's batch, or what the KV cache holds), and the latencies behind the prediction.
  std::string model;
  int batch = 0;
  double ttft_s = 0, tpot_s = 0;
};

// One case; `efficiency` (optional) replaces the cluster's efficiencies (calibration).
CaseResult run_case(const ValidationCase& c, const Efficiencies* efficiency = nullptr);

struct FamilyError {
  std::string family;
  int cases = 0;
  double mean_abs_error_percent = 0;
  double max_abs_error_percent = 0;
  std::string worst_id;
};

struct ValidationSummary {
  std::vector<CaseResult> results;    // in case order
  int training_cases = 0;             // evaluated training runs (time metrics) the efficiencies were fitted to
  int failed_cases = 0;               // configs that did not evaluate
  double mean_abs_error_percent = 0;  // over those training runs
  double max_abs_error_percent = 0;
  std::string worst_id;
  std::vector<FamilyError> families;  // per calibration family, in order of first appearance (fitted runs)
  FamilyError uncalibrated;           // the evaluated training runs with calibrated = false (family "")
  int memory_cases = 0;
  bool memory_exact = true;  // every memory case within its resolution
  // Peak memory (training cases with metric peak_memory_GiB): none of the time statistics above.
  int peak_memory_cases = 0;
  double peak_memory_max_abs_error_percent = 0;
  std::string peak_memory_worst_id;
  // Serving cases (kind serving): none of the statistics above. Mean and largest |error| over the
  // serving cases that evaluate, and the same per model and per GPU family (in order of first appearance).
  int serving_cases = 0;
  int serving_failed_cases = 0;
  double serving_mean_abs_error_percent = 0, serving_max_abs_error_percent = 0;
  std::string serving_worst_id;
  std::vector<FamilyError> serving_models, serving_gpus;
};

// The value of a serving metric in an estimate: the one place that reads a serving prediction.
// Output tokens/s per GPU and in total: InferenceEstimate::output_tokens_per_s_per_gpu and
// output_tokens_per_s_total (the first token of each request included).
double serving_metric_value(const InferenceEstimate& e, Metric metric);

// A metric of step time (TFLOP/s, MFU, tokens/s, step time): the ones calibration fits.
bool is_time_metric(Metric metric);
// A run calibration fits (and cross-validation holds out): a training case of a time metric with
// calibrated = true.
bool is_fitted_run(const ValidationCase& c);

ValidationSummary validate_cases(const std::vector<ValidationCase>& cases);

// [Calibration] The fitted parameters and their physical bounds.
struct CalibrationParam {
  const char* key;  // JSON key of cluster.efficiency
  double Efficiencies::*member;
  double lo, hi;                                // in the member's unit (SI)
  double prior, prior_sd;                       // kernel-benchmark value and its spread: the fit's Gaussian prior
  double Efficiencies::*relative_to = nullptr;  // set: prior and spread are ratios to this member
  double unit = 1;                              // the JSON key's unit in SI (1e-6 for a key in µs)
  const char* member_name = key;                // the C++ member, when it differs from the key
};
const std::vector<CalibrationParam>& calibration_params();

// The efficiencies fitted for each family: those that the family's runs determine (docs/validation.md §2).
// `cutlab calibrate` fits these unless --fit says otherwise, and the cross-validation refits them.
struct FamilyFit {
  const char* family;
  std::vector<std::string> keys;  // calibration_params() keys, in that order
  // Its efficiencies may stand in for another GPU's (the cross-validation's transfer pool): false for a
  // GPU held below its datasheet power, whose fractions of the datasheet peaks are its own.
  bool transfers = true;
};
const std::vector<FamilyFit>& family_fits();
// family_fits()' transfers for `family` (true for a family without an entry).
bool family_transfers(const std::string& family);
// The fit keys of `family`: its family_fits() entry, or every calibration_params() key for a family without one.
std::vector<std::string> fit_keys(const std::string& family);

struct CalibrationOptions {
  Efficiencies start;            // default: the struct's defaults (independent of the presets)
  std::vector<std::string> fit;  // keys to fit; empty: every calibration_params() key (cross_validate: fit_keys())
  int max_evaluations = 3000;    // objective evaluations (each runs every case of the family)
  int restarts = 3;              // Nelder–Mead + compass restarts from the best point so far
};

struct CalibrationResult {
  std::string family;
  std::vector<std::string> case_ids;
  Efficiencies start, fitted;
  double start_mape_percent = 0;  // mean absolute percentage error at the start
  double fitted_mape_percent = 0;
  double fitted_max_abs_percent = 0;
  int evaluations = 0;
};

// The prior's cost: each fitted parameter z = (value − prior)/prior_sd standard deviations from its
// kernel-benchmark value adds prior_weight · z² percentage points to the objective.
constexpr double prior_weight_percent = 0.25;

// Mean absolute percentage error of the family's training runs with these efficiencies
// (a case that does not evaluate counts as 1000%).
double family_mape_percent(const std::vector<ValidationCase>& cases, const std::string& family, const Efficiencies& e);

Result<CalibrationResult> calibrate_family(const std::vector<ValidationCase>& cases, const std::string& family,
                                           const CalibrationOptions& options = {});

// [Serving calibration] The efficiencies only serving reads (docs/validation.md §8), fitted per GPU family to
// that family's serving cases, the same search (bounded Nelder–Mead and compass) on mean |error| + the
// Gaussian priors below; the training efficiencies are not touched (they keep `start`'s values).
const std::vector<CalibrationParam>& serving_calibration_params();

// A serving prior measured on a family's GPU (kernel rates in cutlab's terms, docs/validation.md §8 "Kernel
// rates measured on an H200"): it replaces the general prior of `key` in that family's fits.
struct MeasuredPrior {
  const char* family;
  const char* key;
  double prior, prior_sd;
  const char* source;  // where it was measured, as `cutlab calibrate --serving` prints it
};
const std::vector<MeasuredPrior>& measured_serving_priors();

// The source of `key`'s prior in `family`'s serving fits: the measured prior's, or the general priors'.
std::string serving_prior_source(const std::string& family, const std::string& key);

// serving_calibration_params() with the family's measured priors (none for "" or a family without any).
std::vector<CalibrationParam> serving_calibration_params(const std::string& family);

// The GPU family every case shares, or "" (none, or several: a pooled fit takes the general priors).
std::string shared_family(const std::vector<const ValidationCase*>& cases);

// Where a serving fit starts: `preset` (the training efficiencies of the family) with every serving
// parameter at its Efficiencies default, or at the family's measured prior where it has one, so that a
// fit does not depend on the values fitted before.
Efficiencies serving_fit_start(const Efficiencies& preset, const std::string& family);

// A GPU family on another family's die (GB200: the B200's die beside a Grace CPU, at its own power limit and
// peaks) takes that family's kernel rates, the efficiencies of the die's kernels (hbm_stream,
// serving_expert_stream, serving_gemm, serving_expert_gemm, serving_attention: fractions of each GPU's own
// peaks and bandwidth), and its fit fits only the rest, the engine's costs beside the kernels (the host's
// time per sequence, the time per sequence per layer and per MoE layer, the EP group's spread), which the
// host and the software set (docs/validation.md §8, "One die, one set of kernel rates").
// serving_die_family("gb200") is "b200"; "" for a family on a die of its own.
std::string serving_die_family(const std::string& family);
bool is_serving_kernel_rate(const std::string& key);
// The keys `family`'s serving fit fits: the engine's costs on another family's die, else every serving key.
std::vector<std::string> serving_fit_keys(const std::string& family);
// `start` with the kernel rates of `die` (the die family's efficiencies).
Efficiencies with_kernel_rates(Efficiencies start, const Efficiencies& die);

// Mean |error| of these serving cases (every one, whatever its family) with efficiencies `e`
// (a case that does not evaluate counts as 1000%).
double serving_mape_percent(const std::vector<const ValidationCase*>& cases, const Efficiencies& e);

// The serving fit's objective without its priors: the mean |error| plus serving_excess_weight × the
// mean excess of |error| over serving_excess_percent, Σ max(0, |eᵢ| − 25) / n (a case that does not
// evaluate counts as 1000%). The acceptance asks for a mean and a largest error (issue 12:
// ≤ 15% and ≤ 30%); the mean alone lets a fit trade a few large errors for many small ones. The excess
// term is an exact penalty (Nocedal & Wright 2006, §17.2: an ℓ1 penalty on the constraint
// |eᵢ| ≤ 25%, 5 points under the limit as the CI limits keep a margin) that steers the fit toward
// errors under the limit where the parameters can reach them (docs/validation.md §8).
inline constexpr double serving_excess_percent = 25.0;
inline constexpr double serving_excess_weight = 10.0;
double serving_fit_objective_percent(const std::vector<const ValidationCase*>& cases, const Efficiencies& e);

// Fits serving_calibration_params(shared_family(cases)) (or `options.fit`, a subset of their keys) to
// `cases`, from `options.start` (the family's preset efficiencies). `result.family` is left to the caller.
Result<CalibrationResult> calibrate_serving(const std::vector<const ValidationCase*>& cases, const CalibrationOptions& options);

// Held-out errors of the serving fit: leave one source out (each GPU family refitted without the cases
// of one publication, source_group, predicts them: the training runs' cross-validation), leave one model
// out (the same without one model's cases) and leave one GPU family out (one set fitted to every other
// family's cases, pooled, predicts the family's cases). Every fit starts from serving_fit_start() of the
// held-out cases' preset; a held-out group with no other case of its family to fit on is predicted by
// that start (the priors).
struct ServingHeldOut {
  std::string id, model, family, source_group;
  double measured = 0, in_sample_error_percent = 0, source_out_error_percent = 0, model_out_error_percent = 0,
         gpu_out_error_percent = 0;
};
struct ServingCrossValidation {
  std::vector<ServingHeldOut> cases;
  double in_sample_mean_percent = 0, in_sample_max_percent = 0;
  double source_out_mean_percent = 0, source_out_max_percent = 0;
  double model_out_mean_percent = 0, model_out_max_percent = 0;
  double gpu_out_mean_percent = 0, gpu_out_max_percent = 0;
};
ServingCrossValidation serving_cross_validate(const std::vector<ValidationCase>& cases, const CalibrationOptions& options);

// [Cross-validation] Leave one source out (docs/validation.md, "Cross-validation"). For each source group G of
// the training runs and each family F with runs in G, the efficiencies are refitted, exactly as the
// calibration does (same start, bounds, search and fit keys), on F's runs outside G and predict G's runs of F.
// - Transfer: when G is F's only source, no run of F is left. The fit then takes the runs of every other
//   family outside G, pooled, with the union of their fit keys: efficiencies are fractions of each GPU's
//   own datasheet peaks, so another GPU's fractions are the estimate that uses no run of F.
// - A fit key on which no fitted run depends (the objective is the same, bit for bit, at both bounds) is not
//   searched: gemm_fp8 then takes the fitted gemm (an fp8 GEMM at the fraction of its own peak that bf16 GEMMs
//   reach of theirs), any other key keeps its start value.
// In-sample figures are validate_cases()' (the presets' efficiencies). Memory cases do not depend on the
// efficiencies: held-out equals in-sample and they have no fit.
struct CvFit {
  std::string held_out_group;                // G: none of its runs is fitted
  std::string family;                        // F: the family whose runs of G this fit predicts
  bool transfer = false;                     // G is F's only source: fitted on the other families' runs
  std::vector<std::string> fitted_families;  // families of the fitted runs (F itself unless transfer)
  std::vector<std::string> fitted_groups;    // source groups of the fitted runs
  std::vector<std::string> case_ids;         // the fitted runs; empty: no run to fit, start values
  std::vector<std::string> keys;             // keys searched
  std::vector<std::string> undetermined;     // fit keys that no fitted run depends on (values by the rule above)
  Efficiencies efficiency;                   // what G's runs of F are predicted with
  double fit_mape_percent = 0;               // mean |error| of the fitted runs with `efficiency`
  int evaluations = 0;
};

struct CvCase {
  std::string id, family, group;
  CaseKind kind = CaseKind::Training;
  Metric metric = Metric::HardwareTflopsPerGpu;
  bool ok = false;  // both predictions evaluated
  double measured = 0;
  double in_sample_predicted = 0, in_sample_error_percent = 0;
  double held_out_predicted = 0, held_out_error_percent = 0;
  int fit = -1;  // index into CrossValidation::fits; -1: a memory case (no efficiencies involved)
};

// Mean and largest |error| of a set of training runs, in-sample and held-out.
struct CvError {
  std::string group;  // a source group, or "all"
  int cases = 0;      // runs that evaluated both ways
  double in_sample_mean_percent = 0, in_sample_max_percent = 0;
  double held_out_mean_percent = 0, held_out_max_percent = 0;
  std::string in_sample_worst_id, held_out_worst_id;
};

struct CrossValidation {
  std::vector<CvCase> cases;    // every case, in case order
  std::vector<CvFit> fits;      // one per (held-out group, family), in order of first appearance
  std::vector<CvError> groups;  // per source group of training runs, in order of first appearance
  CvError overall;              // over every training run
  CvError within_family;        // runs held out from a fit on other sources of their own GPU family
  CvError transfer;             // runs of a single-source family, predicted from the other families' fit
  int failed_cases = 0;         // training runs that did not evaluate in-sample or held-out
  int memory_cases = 0;
  bool memory_exact = true;  // every memory case within its resolution
};

// `options.fit` empty: each family's fit_keys(); otherwise these keys for every fit. Errors: a training case
// without source_group, an unknown key.
Result<CrossValidation> cross_validate(const std::vector<ValidationCase>& cases, const CalibrationOptions& options = {});

// [Limits] The errors docs/validation.md states (§3 and "Cross-validation"), and the margins past which
// tests/test_validation.cpp and `cutlab validate --check` fail. A change that moves the errors updates the
// document and these numbers together.
struct ValidationLimits {
  static constexpr double documented_mean_percent = 2.7;                // in-sample mean |error| over the training runs
  static constexpr double documented_worst_percent = 10.2;              // in-sample largest |error|
  static constexpr double documented_held_out_mean_percent = 7.2;       // leave-one-source-out held-out mean |error|
  static constexpr double documented_within_family_mean_percent = 7.7;  // the same, runs with another source of their family
  static constexpr double margin_mean_percent = 0.5, margin_worst_percent = 1.0, margin_held_out_mean_percent = 1.0;
  // Runs added after the last fit (calibrated = false): mean and largest |error| with the presets' efficiencies.
  static constexpr double documented_uncalibrated_mean_percent = 55.9, documented_uncalibrated_worst_percent = 166.4;
  // Peak memory per GPU (peak_memory_GiB): every case within this |error|.
  static constexpr double peak_memory_percent = 10.0;
};

// The errors docs/validation.md §8 states for the serving cases (validation/serving-cases.json), with the
// presets' efficiencies (serving efficiencies fitted per GPU family to these cases, in-sample), and the
// margins past which `cutlab validate --check` fails.
struct ServingLimits {
  static constexpr double documented_mean_percent = 9.9;    // mean |error| over the serving cases
  static constexpr double documented_worst_percent = 41.3;  // largest |error|
  static constexpr int documented_cases_over_30 = 2;        // cases with |error| > 30% (issue 12's limit)
  static constexpr int documented_failed_cases = 0;         // cases that do not evaluate (or do not fit)
  static constexpr double margin_mean_percent = 1.0, margin_worst_percent = 2.0;
};

}  // namespace cutlab
