#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "core/compute.h"
#include "core/ops.h"
#include "core/presets.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

namespace {
// Efficiencies that make every op its ideal compute time: no shape loss, no quantization, no floor,
// memory traffic free.
void ideal(Config& c) {
  c.cluster.efficiency.gemm = 1.0;
  c.cluster.efficiency.gemm_fp8 = 1.0;
  c.cluster.efficiency.gemm_half_balance = 0;
  c.cluster.efficiency.kernel_floor_s = 0;
  c.cluster.efficiency.expert_gemm_host_s = 0;
  c.cluster.gemm_sustained = 1.0;
  c.cluster.sms = 0;
  c.cluster.hbm_bytes_per_s = 1e30;
}
}  // namespace

TEST_CASE("GEMM efficiency: thin GEMMs, tile and wave quantization", "[compute]") {
  // x = min(M, N) = 1024: 0.8 · 1024/1152; 64 × 8 = 512 tiles of 128×128 on 132 SMs: several
  // waves, the tail balanced by the library: no loss.
  REQUIRE_THAT(gemm_efficiency(8192, 1024, 8192, 1, 132, 0.8, 128), WithinRel(0.8 * 1024 / 1152, 1e-12));
  // Without SMs, no quantization.
  REQUIRE_THAT(gemm_efficiency(8192, 1024, 8192, 1, 0, 0.8, 128), WithinRel(0.8 * 1024 / 1152, 1e-12));
  // M = 100: tiles of 16 rows pad it least (112; 128 with edges of 32, 64 or 128), 100/112 of each
  // used; 7 × 2 = 14 tiles on 132 SMs split K = 4096 into min(9, 16) = 9 slices: 126 of 132 SMs busy.
  REQUIRE_THAT(gemm_efficiency(100, 256, 4096, 1, 132, 0.8, 0), WithinRel(0.8 * 100.0 / 112 * 126.0 / 132, 1e-12));
  // Tile quantization without a cliff: 64 rows fill one 64-row tile; 65 pad to 80 (5 of 16), not to
  // 128. Enough tiles (N = 32,768: 256 columns) that no wave is partial.
  REQUIRE_THAT(gemm_efficiency(64, 32768, 4096, 1, 132, 0.8, 0), WithinRel(0.8, 1e-12));
  REQUIRE_THAT(gemm_efficiency(65, 32768, 4096, 1, 132, 0.8, 0), WithinRel(0.8 * 65.0 / 80, 1e-12));
  // 192 rows: three tiles of 64 rows pad nothing (two of 128 would pad to 256).
  REQUIRE_THAT(gemm_efficiency(192, 32768, 4096, 1, 132, 0.8, 0), WithinRel(0.8, 1e-12));
  // Grouped: 8 experts of 256 × 256 tiles = 32 tiles, split K = 2048 by min(4, 8) = 4: 128 of 132 SMs.
  REQUIRE_THAT(gemm_efficiency(256, 256, 2048, 8, 132, 0.8, 0), WithinRel(0.8 * 128.0 / 132, 1e-12));
  // Thin GEMMs are less efficient than square ones.
  REQUIRE(gemm_efficiency(64, 8192, 8192, 1, 132, 0.8, 128) < gemm_efficiency(8192, 8192, 8192, 1, 132, 0.8, 128));
}

TEST_CASE("routed GEMM efficiency: each expert's last tile half full on average", "[compute]") {
  // 64 rows per expert on average, 8 experts of N = 4,096 (32 columns of 128): 71.5 rows padded, 64/71.5
  // used; 8 · 4.47 · 32 = 1,144 tiles on 132 SMs, no partial wave.
  REQUIRE_THAT(routed_gemm_efficiency(64, 4096, 2048, 8, 132, 0.5), WithinRel(0.5 * 64 / 71.5, 1e-12));
  // No step between 64 and 65 rows: 65/72.5.
  REQUIRE_THAT(routed_gemm_efficiency(65, 4096, 2048, 8, 132, 0.5), WithinRel(0.5 * 65 / 72.5, 1e-12));
  // A few rows fill one tile of 16 at least: 4/16; 8 · 32 = 256 tiles, still no partial wave.
  REQUIRE_THAT(routed_gemm_efficiency(4, 4096, 2048, 8, 132, 0.5), WithinRel(0.5 * 4 / 16, 1e-12));
}

TEST_CASE("attention efficiency: head dimension and key length", "[compute]") {
  // At head dim 128 the factor is s/(s + 850); head dim 64 reaches 64·182/(128·118) of head dim 128.
  REQUIRE_THAT(attention_efficiency(128, 4096, 0.6), WithinRel(0.6 * 4096 / 4946, 1e-12));
  REQUIRE_THAT(attention_efficiency(64, 4096, 0.6) / attention_efficiency(128, 4096, 0.6), WithinRel(64.0 * 182 / (128 * 118), 1e-12));
  REQUIRE(attention_efficiency(128, 1024, 0.6) < attention_efficiency(128, 8192, 0.6));
}

TEST_CASE("a layer's forward GEMM time is 2·tokens·weights/t over peak at ideal efficiency", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8);
  ideal(c);
  const LayerTimes lt = layer_times(test::resolved(c), false);
  const LayerParams p = dense_layer_params(c.model);
  const double tokens = 4096;
  REQUIRE_THAT(lt.weight_gemms.f_s, WithinRel(2.0 * tokens * (p.attention + p.dense_mlp) / 8 / c.cluster.bf16_flops_per_s, 1e-12));
  // Backward: input gradients and weight gradients each repeat the forward GEMMs' FLOPs.
  REQUIRE_THAT(lt.weight_gemms.b_s, WithinRel(lt.weight_gemms.f_s, 1e-12));
  REQUIRE_THAT(lt.w_s(), WithinRel(lt.weight_gemms.f_s, 1e-12));
}

TEST_CASE("GEMMs run at the sustained share of the peak, the thin-GEMM half dimension follows the machine balance", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8);
  ideal(c);
  const double at_peak = layer_times(test::resolved(c), false).weight_gemms.f_s;
  c.cluster.gemm_sustained = 0.8;
  REQUIRE_THAT(layer_times(test::resolved(c), false).weight_gemms.f_s, WithinRel(at_peak / 0.8, 1e-12));
  // Half dimension = multiple × bf16 peak / HBM bandwidth: 0.5 × 989e12 / 3.35e12 = 147.61 elements on an H100 SXM,
  // 0.5 × 312e12 / 2.039e12 = 76.51 on an A100.
  c.cluster.efficiency.gemm_half_balance = 0.5;
  c.cluster.hbm_bytes_per_s = 3.35e12;  // the H100 SXM's (ideal() made it endless)
  REQUIRE_THAT(gemm_half_dim(c.cluster), WithinRel(0.5 * 989.0 / 3.35, 1e-9));
  Config a = test::config("llama3-70b", "dgx-a100", 8, 1, 1, 4096, 8);
  a.cluster.efficiency.gemm_half_balance = 0.5;
  REQUIRE_THAT(gemm_half_dim(a.cluster), WithinRel(0.5 * 312.0 / 2.039, 1e-9));
  // The presets' sustained shares are the MAMF table's (Bekman, Machine Learning Engineering): 267.9 of
  // 312 TFLOP/s on A100 SXM, 792.1 of 989 on H100 SXM.
  REQUIRE_THAT(a.cluster.gemm_sustained, WithinRel(0.8587, 1e-4));
  REQUIRE_THAT(test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8).cluster.gemm_sustained, WithinRel(0.8009, 1e-4));
}

TEST_CASE("flash attention does the causal half of the score FLOPs", "[compute]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 1, 8192, 8);
  c.cluster.efficiency.kernel_floor_s = 0;
  const LayerTimes flash = layer_times(test::resolved(c), false);
  const double s = 8192, a = 32, d = 128;
  const double eff = attention_efficiency(d, s, c.cluster.efficiency.attention);
  REQUIRE_THAT(flash.core_attention.f_s, WithinRel(0.5 * 2.0 * s * s * a * 2 * d / (c.cluster.bf16_flops_per_s * eff), 1e-12));
  REQUIRE_THAT(flash.core_attention.b_s, WithinRel(2.5 * flash.core_attention.f_s, 1e-12));
}

TEST_CASE("local attention: sliding-window and chunked layers do their window's pairs, weighted by their share", "[compute]") {
  // gpt-oss-120b: a sliding window of 128 in every other layer (18 of 36). At s = 4096 a local layer
  // does W·s − W²/2 = 524,288 − 8,192 = 516,096 (query, key) pairs, a global one s²/2 = 8,388,608.
  ModelSpec g = *find_model_preset("gpt-oss-120b");
  REQUIRE_THAT(local_attention_share(g), WithinRel(0.5, 1e-12));
  REQUIRE_THAT(local_attention_pairs(g, 4096), WithinRel(516096.0, 1e-12));
  REQUIRE_THAT(local_attention_pairs(g, 100), WithinRel(5000.0, 1e-12));  // shorter than the window: causal
  // Llama 4 Scout: chunks of 8,192 in 3 of 4 layers (36 of 48); 16,384 tokens = 2 chunks of 8,192²/2.
  ModelSpec l4 = *find_model_preset("llama4-scout-17b-16e");
  REQUIRE_THAT(local_attention_share(l4), WithinRel(0.75, 1e-12));
  REQUIRE_THAT(local_attention_pairs(l4, 16384), WithinRel(2 * 0.5 * 8192.0 * 8192.0, 1e-12));
  REQUIRE_THAT(local_attention_pairs(l4, 10000), WithinRel(0.5 * 8192.0 * 8192 + 0.5 * 1808.0 * 1808, 1e-12));
  // The attention ops of an average gpt-oss layer: FLOPs 2·s²/2·a·(d_qk + d_v) · (0.5 + 0.5 · 516,096/8,388,608).
  Config c = test::config("gpt-oss-120b", "dgx-h100", 1, 4, 16, 4096, 1280);
  c.plan.ep = 8;
  double flops = 0;
  int attention_ops = 0;
  for (const LayerOp& op : layer_ops(test::resolved(c), true))
    if (op.op_class == OpClass::Attention) flops += op.flops, ++attention_ops;
  REQUIRE(attention_ops == 2);
  const double full = 2.0 * 0.5 * 4096.0 * 4096.0 * 64 * (64 + 64);
  REQUIRE_THAT(flops, WithinRel(full * (0.5 + 0.5 * 516096.0 / 8388608.0), 1e-12));
}

TEST_CASE("fp8 GEMMs run at the fp8 peak with the fp8 efficiency, and carry their casts", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8);
  c.cluster.sms = 0;
  c.cluster.efficiency.kernel_floor_s = 0;
  c.cluster.hbm_bytes_per_s = 1e30;
  const double bf16 = layer_times(test::resolved(c), false).weight_gemms.f_s;
  c.workload.dtype = Dtype::FP8;
  const double fp8 = layer_times(test::resolved(c), false).weight_gemms.f_s;
  const Efficiencies& e = c.cluster.efficiency;
  REQUIRE_THAT(bf16 / fp8, WithinRel(1979.0 * e.gemm_fp8 / (989.0 * e.gemm), 1e-9));
  // The casts: each of the 4 GEMMs quantizes its input (M×K, 4 bytes per element) forward and its
  // output gradient (M×N) backward. Llama 3 70B at TP 8: h 8192, QKV N 1280, MLP 2·3584, O K 1024.
  Config d = test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8);
  d.workload.dtype = Dtype::FP8;
  const std::vector<LayerOp> ops = layer_ops(test::resolved(d), false);
  const auto cast = std::find_if(ops.begin(), ops.end(), [](const LayerOp& op) { return op.name.rfind("fp8 quantize", 0) == 0; });
  REQUIRE(cast != ops.end());
  const double M = 4096;
  REQUIRE_THAT(cast->bytes, WithinRel(4.0 * M * (8192 + 1024 + 8192 + 3584), 1e-12));
}

TEST_CASE("recompute adds the forward to the backward", "[compute]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 1, 4096, 8);
  const StageInfo st{0, 0, 40, 0, true, false, {{0, 39}}, 0, -1};
  const StageCompute none = stage_compute(test::resolved(c), st);
  c.plan.recompute = Recompute::Full;
  const StageCompute full = stage_compute(test::resolved(c), st);
  // The 40 layers' forward again (not the embedding's).
  REQUIRE_THAT(full.recompute_s, WithinRel(40 * layer_times(test::resolved(c), false).f_s(), 1e-12));
  REQUIRE_THAT(full.b_s, WithinRel(none.b_s + full.recompute_s, 1e-12));
  c.plan.recompute = Recompute::Selective;
  const StageCompute sel = stage_compute(test::resolved(c), st);
  REQUIRE(sel.recompute_s > 0);
  REQUIRE(sel.recompute_s < full.recompute_s);
}

TEST_CASE("selective recompute re-runs the forward of its modules' ops", "[compute][ops]") {
  // DeepSeek-V3's recipe (DeepSeek-V3 §3.3.2): the norms, MLA's up-projections (with rotary) and the
  // experts' activation. One MoE layer: the re-run forward is those ops' forward times, named by hand.
  Config c = test::config("deepseek-v3", "hgx-h800", 1, 1, 64, 4096, 1024);
  c.plan.ep = 64;
  c.plan.dp = 1;
  c.plan.recompute = Recompute::Selective;
  c.plan.recompute_modules = {RecomputeModule::LayerNorm, RecomputeModule::MlaUpProj, RecomputeModule::MoeAct};
  const Resolved r = test::resolved(c);
  const std::vector<LayerOp> ops = layer_ops(r, true);
  double want = 0;
  int found = 0;
  for (const LayerOp& op : ops)
    for (const char* name : {"norms (2)", "Q up-projection", "KV up-projection", "rotary embedding (q, k)",
                             "expert activation (SwiGLU, weighted)", "shared expert activation (SwiGLU)"})
      if (op.name == name) want += op.f_s, ++found;
  REQUIRE(found == 6);
  const int moe_layer = c.model.dense_layers;  // a chunk of one MoE layer
  const StageInfo one{0, moe_layer, 1, 1, false, false, {{moe_layer, moe_layer}}, -1, -1};
  REQUIRE_THAT(chunk_compute(r, layer_compute(r), one, 0).recompute_s, WithinRel(want, 1e-12));
}

TEST_CASE("expert work per GPU does not depend on how the expert mesh is folded", "[compute]") {
  // Each GPU of a stage does s·b·k/(tp·cp) token-expert pairs: folding (attention TP 2, experts
  // ETP 1 × EP 8) and the classic mesh (ETP = TP 2 × EP 4) give the same expert GEMM FLOPs per GPU.
  Config fold = test::config("mixtral-8x22b", "dgx-h100", 2, 1, 8, 4096, 8);
  fold.plan.ep = 8;
  fold.plan.etp = 1;
  Config classic = test::config("mixtral-8x22b", "dgx-h100", 2, 1, 2, 4096, 8);
  classic.plan.ep = 4;
  for (Config* c : {&fold, &classic}) ideal(*c);
  const double f = layer_times(test::resolved(fold), true).weight_gemms.f_s;
  const double c = layer_times(test::resolved(classic), true).weight_gemms.f_s;
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

TEST_CASE("the step's compute is the ops of its layers", "[compute][ops]") {
  // Stage 0 of Llama 3 70B at PP 4 holds layers 0–19 and the embedding: its forward, backward and
  // weight-gradient times are 20 × the layer's ops plus the embedding's.
  Config c = test::config("llama3-70b", "dgx-h100", 8, 4, 1, 8192, 64);
  c.plan.sp = true;
  const Resolved r = test::resolved(c);
  double f = 0, b = 0, w = 0;
  for (const LayerOp& op : layer_ops(r, false)) f += 20 * op.f_s, b += 20 * op.b_s, w += 20 * op.w_s;
  for (const LayerOp& op : input_ops(r)) f += op.f_s, b += op.b_s, w += op.w_s;
  const StageCompute sc = stage_compute(r, StageInfo{0, 0, 20, 0, true, false, {{0, 19}}, 0, -1});
  REQUIRE_THAT(sc.f_s, WithinRel(f, 1e-12));
  REQUIRE_THAT(sc.b_s, WithinRel(b, 1e-12));
  REQUIRE_THAT(sc.w_s, WithinRel(w, 1e-12));
}

TEST_CASE("fine-grained MoE: a smaller micro-batch costs more per token", "[compute][ops]") {
  // Qwen3-30B-A3B shape (h 2048, 128 experts of 768, top-8) at EP 8: at micro-batch 1 of 1,024
  // tokens each of the 16 local experts gets 512 token copies; small grouped GEMMs and the kernel
  // floors of the router and permutation kernels make a token dearer than at micro-batch 8.
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 1024, 64);
  c.model.hidden = 2048, c.model.heads = 32, c.model.kv_heads = 4, c.model.head_dim = 128, c.model.layers = 48;
  c.model.experts = 128, c.model.top_k = 8, c.model.expert_ffn_hidden = 768, c.model.ffn_hidden = 6144;
  c.plan.ep = 8;
  auto per_token = [&](int mb) {
    c.plan.micro_batch = mb;
    const LayerTimes lt = layer_times(test::resolved(c), true);
    return (lt.f_s() + lt.b_s() + lt.w_s()) / (1024.0 * mb);
  };
  const double one = per_token(1), eight = per_token(8);
  REQUIRE(one > 1.2 * eight);
}

TEST_CASE("the hottest EP rank's token copies set an MoE layer's expert work", "[compute][ops]") {
  // DeepSeek-V3 (h 7168, 256 routed experts of 2048, top-8) at EP 8, s 4096, b 1, TP 1: balanced,
  // each of the 32 local experts gets 4096 · 8 / 32 = 1024 token copies (M of the expert GEMMs).
  Config c = test::config("deepseek-v3", "hgx-h800", 1, 16, 2, 4096, 64);
  c.plan.ep = 8;
  ideal(c);
  auto op = [](const std::vector<LayerOp>& ops, std::string_view name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == name; });
    REQUIRE(it != ops.end());
    return *it;
  };
  auto ops = [&] { return layer_ops(test::resolved(c), true); };
  const std::vector<LayerOp> balanced = ops();
  REQUIRE(op(balanced, "expert down projection").m == 1024);
  // Dispatch permute bytes, 2·h·(M_send·(1 + k) + 2·M_moe·k) = 2 · 7168 · (4096 · 9 + 2 · 4096 · 8)
  // = 2 · 7168 · 102,400 = 1,468,006,400.
  REQUIRE(op(balanced, "token permute and sort (dispatch)").bytes == 1468006400.0);
  SECTION("dropless with imbalance 1.5: the hottest rank computes and receives 1.5× the copies") {
    c.plan.moe_imbalance = 1.5;
    const std::vector<LayerOp> hot = ops();
    REQUIRE(op(hot, "expert down projection").m == 1536);  // 1024 · 1.5
    REQUIRE_THAT(op(hot, "expert down projection").flops, WithinRel(1.5 * op(balanced, "expert down projection").flops, 1e-12));
    // Its own tokens are sent as before; the received side 1.5×: 2 · 7168 · (36,864 + 98,304) = 1,937,768,448.
    REQUIRE(op(hot, "token permute and sort (dispatch)").bytes == 1937768448.0);
    // Attention, router and the shared expert do not change.
    REQUIRE(op(hot, "shared expert down projection").flops == op(balanced, "shared expert down projection").flops);
    REQUIRE(op(hot, "router").flops == op(balanced, "router").flops);
  }
  SECTION("padded to capacity factor 1.25: every expert computes 1.25× the mean, and sends padded copies") {
    c.plan.moe_capacity_factor = 1.25;
    c.plan.moe_pad_to_capacity = true;
    const std::vector<LayerOp> padded = ops();
    REQUIRE(op(padded, "expert gate and up projection").m == 1280);  // 1024 · 1.25
    // 2 · 7168 · (4096 · (1 + 8 · 1.25) + 2 · 4096 · 8 · 1.25) = 2 · 7168 · (45,056 + 81,920) = 1,820,327,936.
    REQUIRE(op(padded, "token permute and sort (dispatch)").bytes == 1820327936.0);
  }
  SECTION("capacity factor without padding caps the imbalance: copies above capacity drop") {
    c.plan.moe_capacity_factor = 1.25;
    c.plan.moe_imbalance = 2.0;
    REQUIRE(op(ops(), "expert down projection").m == 1280);  // min(2, 1.25) · 1024
    c.plan.moe_imbalance = 1.1;
    REQUIRE_THAT(op(ops(), "expert down projection").m, WithinRel(1126.4, 1e-12));  // below capacity: 1.1 · 1024
  }
}

TEST_CASE("a layer's shared-expert time is the sum of its shared-expert ops", "[compute][ops]") {
  // What moe_shared_expert_overlap hides the EP all-to-alls behind: the shared expert's two GEMMs and
  // its activation, forward, backward and weight gradient; the dense layer has none.
  Config c = test::config("deepseek-v3", "hgx-h800", 1, 16, 2, 4096, 64);
  c.plan.ep = 8;
  const Resolved r = test::resolved(c);
  PassTimes sum;
  for (const LayerOp& op : layer_ops(r, true))
    if (op.name.rfind("shared expert", 0) == 0) sum.f_s += op.f_s, sum.b_s += op.b_s, sum.w_s += op.w_s;
  const LayerTimes lt = layer_times(r, true);
  REQUIRE(sum.f_s > 0);
  REQUIRE_THAT(lt.shared_experts.f_s, WithinRel(sum.f_s, 1e-12));
  REQUIRE_THAT(lt.shared_experts.b_s, WithinRel(sum.b_s, 1e-12));
  REQUIRE_THAT(lt.shared_experts.w_s, WithinRel(sum.w_s, 1e-12));
  REQUIRE(layer_times(r, false).shared_experts.f_s == 0);
}

TEST_CASE("eager PyTorch elementwise ops move the bytes of their unfused passes", "[compute][ops]") {
  // Llama 3 8B (h 4096, 32 heads and 8 KV heads of 128, f 14336) at TP 1, s 8192, micro-batch 2:
  // M = 16,384 tokens. Forward bytes per token that eager kernels add (core/ops.cpp memory_ops):
  //   norms     2 × (36 − 4) × 4096            = 262,144
  //   rotary    (20 − 4) × (32 + 8) × 128       =  81,920
  //   repeat_kv 2 × 2 × (8 + 32) × 128          =  20,480
  //   SwiGLU    (10 − 6) × 14336                =  57,344
  //   total                                     = 421,888 = 103·h
  // and 12 + 4 + 2 + 1 = 19 more kernels (norms 7 instead of 1 each, rotary 3 per tensor instead of
  // 1, repeat_kv 2, SwiGLU 2 instead of 1).
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 16);
  c.plan.micro_batch = 2;
  c.cluster.efficiency.kernel_floor_s = 0;
  auto memory_bytes = [](const std::vector<LayerOp>& ops) {
    double sum = 0;
    for (const LayerOp& op : ops)
      if (op.op_class == OpClass::Memory) sum += op.bytes;
    return sum;
  };
  const double fused = memory_bytes(layer_ops(test::resolved(c), false));
  const LayerTimes fused_t = layer_times(test::resolved(c), false);
  c.plan.fused_elementwise = false;
  const double eager = memory_bytes(layer_ops(test::resolved(c), false));
  const LayerTimes eager_t = layer_times(test::resolved(c), false);
  const double extra = 421888.0 * 16384;
  REQUIRE_THAT(eager - fused, WithinRel(extra, 1e-12));
  // Memory-bound time: the bytes at the achieved HBM bandwidth, twice in the backward.
  const double hbm = c.cluster.hbm_bytes_per_s * c.cluster.efficiency.hbm;
  REQUIRE_THAT(eager_t.f_s() - fused_t.f_s(), WithinRel(extra / hbm, 1e-9));
  REQUIRE_THAT(eager_t.b_s() - fused_t.b_s(), WithinRel(2.0 * extra / hbm, 1e-9));
  REQUIRE(eager_t.w_s() == fused_t.w_s());
  SECTION("with HBM free, the extra kernels' floors remain") {
    c.cluster.hbm_bytes_per_s = 1e30;
    c.cluster.efficiency.kernel_floor_s = 1e-6;
    c.plan.fused_elementwise = true;
    const double f_fused = layer_times(test::resolved(c), false).f_s();
    c.plan.fused_elementwise = false;
    REQUIRE_THAT(layer_times(test::resolved(c), false).f_s() - f_fused, WithinRel(19e-6, 1e-6));
  }
}

TEST_CASE("each local expert's GEMMs add the host's per-expert time to every pass", "[compute]") {
  // Qwen3-30B-A3B at EP 8: 128/8 = 16 local experts, two grouped GEMMs (gate·up and down), each one GEMM
  // per expert in F, B and W: 16 · 2 = 32 expert GEMMs per pass, each adding expert_gemm_host_s.
  Config c = test::config("qwen3-30b-a3b", "dgx-h100", 1, 1, 8, 4096, 64);
  c.plan.ep = 8;
  c.cluster.efficiency.expert_gemm_host_s = 0;
  const LayerTimes none = layer_times(test::resolved(c), true);
  c.cluster.efficiency.expert_gemm_host_s = 20e-6;
  const LayerTimes host = layer_times(test::resolved(c), true);
  REQUIRE_THAT(host.all.f_s - none.all.f_s, WithinRel(32 * 20e-6, 1e-9));
  REQUIRE_THAT(host.all.b_s - none.all.b_s, WithinRel(32 * 20e-6, 1e-9));
  REQUIRE_THAT(host.all.w_s - none.all.w_s, WithinRel(32 * 20e-6, 1e-9));
  // It is one op of its own, bound by the host, with no FLOPs or bytes.
  const std::vector<LayerOp> ops = layer_ops(test::resolved(c), true);
  const auto it = std::find_if(ops.begin(), ops.end(), [](const LayerOp& op) { return op.op_class == OpClass::Host; });
  REQUIRE(it != ops.end());
  REQUIRE(it->count == 32);
  REQUIRE(std::string(op_bound(*it)) == "host");
  REQUIRE(it->flops == 0);
}

TEST_CASE("TP-overlapped GEMMs run in chunks: t for the all-gather GEMMs, 4 for the reduce-scatter ones", "[compute][ops]") {
  // Llama 3 70B at TP 8, one sequence of 4,096 tokens: QKV is 4096 × 1280 × 8192 (8 query heads and 1 KV
  // head of 128 per GPU), the attention output projection 4096 × 8192 × 1024. Ideal efficiencies except
  // 132 SMs and a 2 µs kernel floor.
  Config c = test::config("llama3-70b", "dgx-h100", 8, 1, 1, 4096, 8);
  ideal(c);
  c.cluster.sms = 132;
  c.cluster.efficiency.kernel_floor_s = 2e-6;
  c.plan.sp = true;
  auto op = [](const std::vector<LayerOp>& ops, std::string_view name) {
    return *std::find_if(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == name; });
  };
  const double peak = c.cluster.bf16_flops_per_s, floor_s = 2e-6;
  const double qkv_flops = 2.0 * 4096 * 1280 * 8192, proj_flops = 2.0 * 4096 * 8192 * 1024;
  const std::vector<LayerOp> plain = layer_ops(test::resolved(c), false);
  // Unchunked: 32 × 10 = 320 and 32 × 64 tiles, more than one wave each: no loss, one kernel.
  REQUIRE_THAT(op(plain, "QKV projection").f_s, WithinRel(qkv_flops / peak + floor_s, 1e-12));
  REQUIRE_THAT(op(plain, "attention output projection").f_s, WithinRel(proj_flops / peak + floor_s, 1e-12));
  c.plan.tp_comm_overlap = true;
  c.plan.tp_comm_overlap_sms = 0;  // torch's async TP: no SMs taken from the GEMMs
  const std::vector<LayerOp> chunked = layer_ops(test::resolved(c), false);
  const LayerOp qkv = op(chunked, "QKV projection"), proj = op(chunked, "attention output projection");
  // QKV forward (ring exchange): 8 chunks of 512 × 1280 × 8192, 4 × 10 = 40 tiles each, K split by
  // min(⌊132/40⌋, ⌊8192/256⌋) = 3: 120 of 132 SMs busy; 8 kernels.
  REQUIRE_THAT(qkv.f_s, WithinRel(qkv_flops / peak * 132.0 / 120.0 + 8 * floor_s, 1e-12));
  // Its input gradient overlaps in bulk: unchunked, as without overlap.
  REQUIRE_THAT(qkv.b_s, WithinRel(op(plain, "QKV projection").b_s, 1e-12));
  // Projection forward (pipeline, 4 splits): 1024 × 8192 × 1024, 8 × 64 = 512 tiles: no loss; 4 kernels.
  REQUIRE_THAT(proj.f_s, WithinRel(proj_flops / peak + 4 * floor_s, 1e-12));
  // Its input gradient (ring exchange of dY): 8 chunks of 512 × 1024 × 8192 (output 512 × 1024), 4 × 8 =
  // 32 tiles, K split by min(4, 32) = 4: 128 of 132 SMs.
  REQUIRE_THAT(proj.b_s, WithinRel(proj_flops / peak * 132.0 / 128.0 + 8 * floor_s, 1e-12));
  // Weight gradients are not chunked.
  REQUIRE_THAT(proj.w_s, WithinRel(op(plain, "attention output projection").w_s, 1e-12));

  // Transformer Engine's userbuffers (the default, 16 SMs): the pipeline and bulk overlaps run their GEMMs on
  // 132 − 16 = 116 SMs; the ring exchanges copy with the copy engines and keep all 132.
  c.plan.tp_comm_overlap_sms = 16;
  const std::vector<LayerOp> te = layer_ops(test::resolved(c), false);
  const LayerOp qkv_te = op(te, "QKV projection"), proj_te = op(te, "attention output projection");
  REQUIRE_THAT(qkv_te.f_s, WithinRel(qkv.f_s, 1e-12));
  REQUIRE_THAT(qkv_te.b_s, WithinRel(op(plain, "QKV projection").b_s * 132.0 / 116.0, 1e-12));
  REQUIRE_THAT(qkv_te.w_s, WithinRel(op(plain, "QKV projection").w_s * 132.0 / 116.0, 1e-12));
  REQUIRE_THAT(proj_te.f_s, WithinRel((proj_flops / peak + 4 * floor_s) * 132.0 / 116.0, 1e-12));
  REQUIRE_THAT(proj_te.b_s, WithinRel(proj.b_s, 1e-12));
}

TEST_CASE("attention dropout adds its random draws to the flash kernel, forward and backward", "[compute][ops]") {
  // GPT-3 175B (dropout) at TP 8, one sequence of 2,048 tokens: 12 heads per GPU, d = 128; the causal half
  // of the scores is 12 · 2048² / 2 = 25,165,824 draws, made again in the backward.
  Config c = test::config("gpt3-175b", "dgx-h100", 8, 1, 1, 2048, 8);
  ideal(c);
  c.cluster.sms = 132;
  auto attention = [](const Config& cfg) {
    const std::vector<LayerOp> ops = layer_ops(test::resolved(cfg), false);
    return *std::find_if(ops.begin(), ops.end(), [](const LayerOp& o) { return o.op_class == OpClass::Attention; });
  };
  const LayerOp with = attention(c);
  c.model.dropout = false;
  const LayerOp without = attention(c);
  const double draws_s = 12.0 * 2048 * 2048 / 2 / (132 * 16e9);  // 11.9 µs at 16 billion draws per s per SM
  REQUIRE_THAT(with.f_s - without.f_s, WithinRel(draws_s, 1e-9));
  REQUIRE_THAT(with.b_s - without.b_s, WithinRel(draws_s, 1e-9));
}
