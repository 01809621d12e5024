#include <catch2/catch.hpp>

#include <algorithm>

#include "core/compute.h"
#include "core/ops.h"
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
  REQUIRE_THAT(gemm_time_s(8192, 1024, 8192, peak, e), WithinRel(2.0 * 8192 * 1024 * 8192 / (peak * 0.8 * 1024 / 1152), 1e-12));
  // Thin GEMMs are less efficient per FLOP than square ones.
  const double thin = gemm_time_s(64, 8192, 8192, peak, e) / (2.0 * 64 * 8192 * 8192);
  const double square = gemm_time_s(8192, 8192, 8192, peak, e) / (2.0 * 8192 * 8192 * 8192);
  REQUIRE(thin > square);
}

TEST_CASE("a layer's forward GEMM time is 2·tokens·weights/t over peak at ideal efficiency", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8);
  c.cluster.efficiency.gemm = 1.0;
  c.cluster.efficiency.gemm_half_dim = 0;
  const LayerTimes lt = layer_times(test::resolved(c), false);
  const LayerParams p = dense_layer_params(c.model);
  const double tokens = 4096;
  REQUIRE_THAT(lt.gemm_f_s, WithinRel(2.0 * tokens * (p.attention + p.dense_mlp) / 8 / c.cluster.bf16_flops_per_s, 1e-12));
  // Backward: input gradients and weight gradients each repeat the forward GEMMs.
  REQUIRE(lt.w_s() == lt.gemm_f_s);
}

TEST_CASE("flash attention does the causal half of the score FLOPs", "[compute]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 1, 8192, 8);
  const LayerTimes flash = layer_times(test::resolved(c), false);
  const double s = 8192, a = 32, d = 128;
  REQUIRE_THAT(flash.attention_f_s,
               WithinRel(0.5 * 2.0 * s * s * a * 2 * d / (c.cluster.bf16_flops_per_s * c.cluster.efficiency.attention), 1e-12));
}

TEST_CASE("fp8 GEMMs run at the fp8 peak with the fp8 efficiency", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8);
  const double bf16 = layer_times(test::resolved(c), false).gemm_f_s;
  c.workload.dtype = Dtype::FP8;
  const double fp8 = layer_times(test::resolved(c), false).gemm_f_s;
  const Efficiencies& e = c.cluster.efficiency;
  REQUIRE_THAT(bf16 / fp8, WithinRel(1979.0 * e.gemm_fp8 / (989.0 * e.gemm), 1e-9));
}

TEST_CASE("recompute adds the forward to the backward", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 1, 4096, 8);
  const StageInfo st{0, 0, 40, 0, true, false, {{0, 39}}};
  const StageCompute none = stage_compute(test::resolved(c), st);
  c.plan.recompute = Recompute::Full;
  const StageCompute full = stage_compute(test::resolved(c), st);
  REQUIRE(full.recompute_s == none.f_s);
  REQUIRE_THAT(full.b_s, WithinRel(none.b_s + none.f_s, 1e-12));
  c.plan.recompute = Recompute::Selective;
  const StageCompute sel = stage_compute(test::resolved(c), st);
  REQUIRE(sel.recompute_s > 0);
  REQUIRE(sel.recompute_s < full.recompute_s);
}

TEST_CASE("expert work per GPU does not depend on how the expert mesh is folded", "[compute]") {
  // Each GPU of a stage does s·b·k/(tp·cp) token-expert pairs: folding (attention TP 2, experts
  // ETP 1 × EP 8) and the classic mesh (ETP = TP 2 × EP 4) give the same expert GEMM FLOPs per GPU.
  Config fold = test::config("mixtral-8x22b", "dgx-h100", 2, 1, 8, 4096, 8);
  fold.plan.ep = 8;
  fold.plan.etp = 1;
  Config classic = test::config("mixtral-8x22b", "dgx-h100", 2, 1, 2, 4096, 8);
  classic.plan.ep = 4;
  for (Config* c : {&fold, &classic}) {
    c->cluster.efficiency.gemm = 1.0;
    c->cluster.efficiency.gemm_half_dim = 0;
  }
  const double f = layer_times(test::resolved(fold), true).gemm_f_s;
  const double c = layer_times(test::resolved(classic), true).gemm_f_s;
  REQUIRE_THAT(f, WithinRel(c, 1e-12));
  // … and equals attention + router + 2·(s·b/tp)·k·3·h·f_e FLOPs at peak.
  const ModelSpec& m = fold.model;
  const LayerParams p = moe_layer_params(m);
  const double tokens = 4096, expert_flops = 2.0 * tokens / 2 * m.top_k * 3.0 * m.hidden * m.expert_ffn_hidden;
  const double other = 2.0 * tokens * (p.attention / 2 + p.router);
  REQUIRE_THAT(f, WithinRel((expert_flops + other) / fold.cluster.bf16_flops_per_s, 1e-12));
}

TEST_CASE("a layer's ops add up to its times, and their shapes are the layer's", "[compute][ops]") {
  // Llama 3 70B (h 8192, 64 heads, 8 KV heads, d 128, f 28672) at TP 8, s 8192, b 1.
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 4, 8192, 64);
  c.plan.sp = true;
  const Resolved r = test::resolved(c);
  const std::vector<LayerOp> ops = layer_ops(r, false);
  const LayerTimes lt = layer_times(r, false);
  double f = 0, b = 0, w = 0;
  for (const LayerOp& op : ops) f += op.f_s, b += op.b_s, w += op.w_s;
  REQUIRE_THAT(f, WithinRel(lt.f_s(), 1e-12));
  REQUIRE_THAT(b, WithinRel(lt.b_s(), 1e-12));
  REQUIRE_THAT(w, WithinRel(lt.w_s(), 1e-12));
  // QKV on one TP rank: M = 8192 tokens, N = (64/8)·128 + 2·(8/8)·128 = 1280, K = 8192: 2·M·N·K FLOPs.
  REQUIRE(ops.front().name == "QKV projection");
  REQUIRE(ops.front().n == 1280);
  REQUIRE(ops.front().flops == 2.0 * 8192 * 1280 * 8192);
  // SwiGLU gate and up: N = 2·28672/8 = 7168.
  const auto up = std::find_if(ops.begin(), ops.end(), [](const LayerOp& op) { return op.name == "MLP gate and up projection"; });
  REQUIRE(up != ops.end());
  REQUIRE(up->n == 7168);
  SECTION("an MoE layer: routed experts as one op per kind, counted over the local experts") {
    Config d = test::config("deepseek-v3", "hgx-h800", 1, 16, 2, 4096, 64);
    d.plan.ep = 8;
    const Resolved rd = test::resolved(d);
    const std::vector<LayerOp> moe = layer_ops(rd, true);
    const LayerTimes mt = layer_times(rd, true);
    double mf = 0;
    for (const LayerOp& op : moe) mf += op.f_s;
    REQUIRE_THAT(mf, WithinRel(mt.f_s(), 1e-12));
    const auto down = std::find_if(moe.begin(), moe.end(), [](const LayerOp& op) { return op.name == "expert down projection"; });
    REQUIRE(down != moe.end());
    REQUIRE(down->count == 256.0 / 8);  // 256 routed experts over EP 8
    // Tokens per local expert: 4096 tokens × top-8 / 32 local experts = 1024.
    REQUIRE(down->m == 4096.0 * 8 / 32);
  }
}
