#include <catch2/catch.hpp>

#include "core/inference.h"
#include "core/precision.h"
#include "core/presets.h"
#include "core/units.h"

using namespace cutlab;

TEST_CASE("NVFP4 weights cost half a byte plus an fp8 scale per 16", "[precision]") {
  // NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference": E2M1 values in
  // blocks of 16 with one E4M3 scale each: 4 + 8/16 = 4.5 bits.
  REQUIRE(dtype_bytes(WeightDtype::FP4) == 0.5625);
  REQUIRE(dtype_bytes(WeightDtype::FP8) == 1.0);
  REQUIRE(dtype_bytes(WeightDtype::INT4) == 0.5);
  REQUIRE(dtype_bytes(WeightDtype::BF16) == 2.0);
  REQUIRE(dtype_bytes(KvDtype::FP8) == 1.0);
}

TEST_CASE("serving GEMMs run at the peak of the weight dtype when the GPU has it", "[precision]") {
  const Cluster b200 = *find_cluster_preset("dgx-b200"), h100 = *find_cluster_preset("dgx-h100");
  Workload w;
  w.mode = Mode::Infer;
  w.weight_dtype = WeightDtype::FP4;
  REQUIRE(serving_gemm_peak_flops_per_s(b200, w) == 9000 * units::TFLOPs);  // HGX B200: 18 PFLOPS fp4 sparse
  REQUIRE(serving_gemm_peak_flops_per_s(h100, w) == 989 * units::TFLOPs);   // no fp4 tensor cores: dequantised to bf16
  w.weight_dtype = WeightDtype::FP8;
  REQUIRE(serving_gemm_peak_flops_per_s(b200, w) == 4500 * units::TFLOPs);
  REQUIRE(serving_gemm_peak_flops_per_s(h100, w) == 1979 * units::TFLOPs);
  w.weight_dtype = WeightDtype::INT4;
  REQUIRE(serving_gemm_peak_flops_per_s(b200, w) == 2250 * units::TFLOPs);  // weight-only
  REQUIRE(find_cluster_preset("gb200-nvl72")->fp4_flops_per_s == 10000 * units::TFLOPs);
  REQUIRE(h100.fp4_flops_per_s == 0);

  // The prefill's training ops take the quantized path at the serving peak, the routed experts at
  // their own dtype's; training GEMMs follow workload.dtype whatever the serving fields say.
  Config c;
  c.cluster = b200;
  c.workload = w;
  c.workload.weight_dtype = WeightDtype::FP4;
  REQUIRE(ops_gemm_path(c, false).quantized);
  REQUIRE(ops_gemm_path(c, false).peak_flops_per_s == 9000 * units::TFLOPs);
  c.cluster = h100;
  REQUIRE_FALSE(ops_gemm_path(c, false).quantized);
  REQUIRE(ops_gemm_path(c, false).peak_flops_per_s == 989 * units::TFLOPs);
  c.workload.weight_dtype = WeightDtype::FP8;
  c.workload.expert_weight_dtype = ExpertWeightDtype::MXFP4;
  REQUIRE(ops_gemm_path(c, false).peak_flops_per_s == 1979 * units::TFLOPs);
  REQUIRE_FALSE(ops_gemm_path(c, true).quantized);  // Hopper: mxfp4 experts dequantised to bf16
  REQUIRE(ops_gemm_path(c, true).peak_flops_per_s == 989 * units::TFLOPs);
  c.cluster = b200;
  REQUIRE(ops_gemm_path(c, true).quantized);
  REQUIRE(ops_gemm_path(c, true).peak_flops_per_s == 9000 * units::TFLOPs);
  c.workload.mode = Mode::Train;
  c.workload.dtype = Dtype::FP8;
  REQUIRE(ops_gemm_path(c, true).peak_flops_per_s == 4500 * units::TFLOPs);
  c.workload.dtype = Dtype::BF16;
  REQUIRE_FALSE(ops_gemm_path(c, false).quantized);
  REQUIRE(ops_gemm_path(c, true).peak_flops_per_s == 2250 * units::TFLOPs);
}

TEST_CASE("the RTX PRO 6000 Blackwell preset has its datasheet memory and no NVLink", "[precision][presets]") {
  const Cluster r = *find_cluster_preset("rtx-pro-6000-server");
  REQUIRE(r.hbm_bytes_per_s == 1597 * units::GBps);
  REQUIRE(r.nvlink_bytes_per_s == 64 * units::GBps);  // PCIe Gen5 x16 per direction
  REQUIRE(r.sms == 188);
  REQUIRE(r.fp4_flops_per_s == 2 * r.fp8_flops_per_s);
  REQUIRE(r.fp8_flops_per_s == 2 * r.bf16_flops_per_s);
}

TEST_CASE("serving attention runs at the bf16 peak, or fp8 with an fp8 KV cache, whatever the weights", "[precision]") {
  const Cluster b200 = *find_cluster_preset("dgx-b200"), h100 = *find_cluster_preset("dgx-h100");
  Workload w;
  w.mode = Mode::Infer;
  w.weight_dtype = WeightDtype::FP4;  // the weights' fp4 peak never applies to attention
  w.kv_dtype = KvDtype::FP8;
  REQUIRE(serving_attention_peak_flops_per_s(b200, w) == 4500 * units::TFLOPs);
  REQUIRE(serving_attention_peak_flops_per_s(h100, w) == 1979 * units::TFLOPs);
  w.kv_dtype = KvDtype::BF16;
  REQUIRE(serving_attention_peak_flops_per_s(b200, w) == 2250 * units::TFLOPs);
  REQUIRE(serving_attention_peak_flops_per_s(h100, w) == 989 * units::TFLOPs);
}
