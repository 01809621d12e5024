#include <catch2/catch.hpp>

#include "core/compute.h"
#include "core/presets.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

TEST_CASE("GEMM time is FLOPs over peak times a size-dependent efficiency", "[compute]") {
  Efficiencies e;
  e.gemm = 0.8;
  e.gemm_half_dim = 128;
  const double peak = 989e12;
  // x = min(M, N, K) = 1024: efficiency 0.8 · 1024/1152.
  REQUIRE_THAT(gemm_time_s(8192, 1024, 8192, peak, e),
               WithinRel(2.0 * 8192 * 1024 * 8192 / (peak * 0.8 * 1024 / 1152), 1e-12));
  // Thin GEMMs are less efficient per FLOP than square ones.
  const double thin = gemm_time_s(64, 8192, 8192, peak, e) / (2.0 * 64 * 8192 * 8192);
  const double square = gemm_time_s(8192, 8192, 8192, peak, e) / (2.0 * 8192 * 8192 * 8192);
  REQUIRE(thin > square);
}

TEST_CASE("a layer's forward GEMM time is 2·tokens·weights/t over peak at ideal efficiency", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8);
  c.cluster.efficiency.gemm = 1.0;
  c.cluster.efficiency.gemm_half_dim = 0;
  const LayerTimes lt = layer_times(c.model, c.cluster, c.plan, c.workload, false);
  const LayerParams p = dense_layer_params(c.model);
  const double tokens = 4096;
  REQUIRE_THAT(lt.gemm_f_s, WithinRel(2.0 * tokens * (p.attention + p.dense_mlp) / 8 / c.cluster.bf16_flops_per_s, 1e-12));
  // Backward: input gradients and weight gradients each repeat the forward GEMMs.
  REQUIRE(lt.w_s() == lt.gemm_f_s);
}

TEST_CASE("flash attention does the causal half of the score FLOPs", "[compute]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 1, 8192, 8);
  const LayerTimes flash = layer_times(c.model, c.cluster, c.plan, c.workload, false);
  const double s = 8192, a = 32, d = 128;
  REQUIRE_THAT(flash.attention_f_s,
               WithinRel(0.5 * 2.0 * s * s * a * 2 * d / (c.cluster.bf16_flops_per_s * c.cluster.efficiency.attention), 1e-12));
}

TEST_CASE("fp8 GEMMs run at the fp8 peak with the fp8 efficiency", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8);
  const double bf16 = layer_times(c.model, c.cluster, c.plan, c.workload, false).gemm_f_s;
  c.workload.dtype = "fp8";
  const double fp8 = layer_times(c.model, c.cluster, c.plan, c.workload, false).gemm_f_s;
  const Efficiencies& e = c.cluster.efficiency;
  REQUIRE_THAT(bf16 / fp8, WithinRel(1979.0 * e.gemm_fp8 / (989.0 * e.gemm), 1e-9));
}

TEST_CASE("recompute adds the forward to the backward", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 1, 4096, 8);
  const StageInfo st{0, 0, 40, 0, true, false, {{0, 39}}};
  const StageCompute none = stage_compute(c.model, c.cluster, c.plan, c.workload, st);
  c.plan.recompute = "full";
  const StageCompute full = stage_compute(c.model, c.cluster, c.plan, c.workload, st);
  REQUIRE(full.recompute_s == none.f_s);
  REQUIRE_THAT(full.b_s, WithinRel(none.b_s + none.f_s, 1e-12));
  c.plan.recompute = "selective";
  const StageCompute sel = stage_compute(c.model, c.cluster, c.plan, c.workload, st);
  REQUIRE(sel.recompute_s > 0);
  REQUIRE(sel.recompute_s < full.recompute_s);
}
