#include "core/precision.h"

#include "core/plan.h"

namespace cutlab {

double dtype_bytes(WeightDtype dtype) {
  switch (dtype) {
    case WeightDtype::FP8: return 1.0;
    case WeightDtype::INT4: return 0.5;
    case WeightDtype::FP4: return 0.5 + 1.0 / 16.0;    // E2M1 values + one E4M3 scale per 16 (NVFP4)
    case WeightDtype::MXFP4: return 0.5 + 1.0 / 32.0;  // E2M1 values + one E8M0 scale per 32 (OCP MX)
    case WeightDtype::BF16: break;
  }
  return 2.0;
}

namespace {

// The routed experts' dtype: expert_weight_dtype's, or weight_dtype's when it is "same".
WeightDtype expert_dtype(const Workload& w) {
  switch (w.expert_weight_dtype) {
    case ExpertWeightDtype::BF16: return WeightDtype::BF16;
    case ExpertWeightDtype::FP8: return WeightDtype::FP8;
    case ExpertWeightDtype::INT4: return WeightDtype::INT4;
    case ExpertWeightDtype::FP4: return WeightDtype::FP4;
    case ExpertWeightDtype::MXFP4: return WeightDtype::MXFP4;
    case ExpertWeightDtype::Same: break;
  }
  return w.weight_dtype;
}

// The rule of precision.h for weights stored in `dtype`.
double gemm_peak_flops_per_s(const Cluster& c, WeightDtype dtype) {
  const bool four_bit_float = dtype == WeightDtype::FP4 || dtype == WeightDtype::MXFP4;
  if (four_bit_float && c.fp4_flops_per_s > 0) return c.fp4_flops_per_s;
  if (dtype == WeightDtype::FP8 && c.fp8_flops_per_s > 0) return c.fp8_flops_per_s;
  return c.bf16_flops_per_s;
}

}  // namespace

double expert_weight_bytes(const Workload& w) { return dtype_bytes(expert_dtype(w)); }

double dtype_bytes(KvDtype dtype) { return dtype == KvDtype::FP8 ? 1.0 : 2.0; }

double serving_gemm_peak_flops_per_s(const Cluster& c, const Workload& w) { return gemm_peak_flops_per_s(c, w.weight_dtype); }

double serving_expert_gemm_peak_flops_per_s(const Cluster& c, const Workload& w) { return gemm_peak_flops_per_s(c, expert_dtype(w)); }

double serving_attention_peak_flops_per_s(const Cluster& c, const Workload& w) {
  return w.kv_dtype == KvDtype::FP8 && c.fp8_flops_per_s > 0 ? c.fp8_flops_per_s : c.bf16_flops_per_s;
}

GemmPath ops_gemm_path(const Config& config, bool routed_experts) {
  const Cluster& c = config.cluster;
  const Workload& w = config.workload;
  if (w.mode == Mode::Train) return w.dtype == Dtype::FP8 ? GemmPath{true, c.fp8_flops_per_s} : GemmPath{false, c.bf16_flops_per_s};
  const double peak = routed_experts ? serving_expert_gemm_peak_flops_per_s(c, w) : serving_gemm_peak_flops_per_s(c, w);
  return {peak != c.bf16_flops_per_s, peak};
}

}  // namespace cutlab
