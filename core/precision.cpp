#include "core/precision.h"

#include "core/plan.h"

namespace cutlab {

double dtype_bytes(WeightDtype dtype) {
  switch (dtype) {
    case WeightDtype::FP8: return 1.0;
    case WeightDtype::INT4: return 0.5;
    case WeightDtype::FP4: return 0.5 + 1.0 / 16.0;  // E2M1 values + one E4M3 scale per 16 (NVFP4)
    case WeightDtype::BF16: break;
  }
  return 2.0;
}

double dtype_bytes(KvDtype dtype) { return dtype == KvDtype::FP8 ? 1.0 : 2.0; }

double serving_gemm_peak_flops_per_s(const Cluster& c, const Workload& w) {
  if (w.weight_dtype == WeightDtype::FP4 && c.fp4_flops_per_s > 0) return c.fp4_flops_per_s;
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
