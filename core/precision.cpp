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

double expert_weight_bytes(const Workload& w) {
  switch (w.expert_weight_dtype) {
    case ExpertWeightDtype::BF16: return dtype_bytes(WeightDtype::BF16);
    case ExpertWeightDtype::FP8: return dtype_bytes(WeightDtype::FP8);
    case ExpertWeightDtype::INT4: return dtype_bytes(WeightDtype::INT4);
    case ExpertWeightDtype::FP4: return dtype_bytes(WeightDtype::FP4);
    case ExpertWeightDtype::MXFP4: return dtype_bytes(WeightDtype::MXFP4);
    case ExpertWeightDtype::Same: break;
  }
  return dtype_bytes(w.weight_dtype);
}

double dtype_bytes(KvDtype dtype) { return dtype == KvDtype::FP8 ? 1.0 : 2.0; }

double serving_gemm_peak_flops_per_s(const Cluster& c, const Workload& w) {
  const bool four_bit_float = w.weight_dtype == WeightDtype::FP4 || w.weight_dtype == WeightDtype::MXFP4;
  if (four_bit_float && c.fp4_flops_per_s > 0) return c.fp4_flops_per_s;
  if (w.weight_dtype == WeightDtype::FP8 && c.fp8_flops_per_s > 0) return c.fp8_flops_per_s;
  return c.bf16_flops_per_s;
}

double serving_attention_peak_flops_per_s(const Cluster& c, const Workload& w) {
  return w.kv_dtype == KvDtype::FP8 && c.fp8_flops_per_s > 0 ? c.fp8_flops_per_s : c.bf16_flops_per_s;
}

void use_serving_gemm_precision(Config& config) {
  const double peak = serving_gemm_peak_flops_per_s(config.cluster, config.workload);
  const bool quantized = peak != config.cluster.bf16_flops_per_s;
  config.workload.dtype = quantized ? Dtype::FP8 : Dtype::BF16;
  if (quantized) config.cluster.fp8_flops_per_s = peak;
}

}  // namespace cutlab
