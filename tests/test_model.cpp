#include <catch2/catch.hpp>

#include "core/model.h"
#include "core/presets.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

TEST_CASE("model FLOPs of a GPT shape equal 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h))", "[model]") {
  // Narayanan et al. 2021 (arXiv:2104.04473) §5.1, without the recompute forward (96 → 72).
  const auto [L, h, a, s, B] = GENERATE(table<int, int, int, double, double>(
      {{24, 2304, 24, 2048, 512}, {96, 12288, 96, 2048, 1536}, {105, 20480, 128, 2048, 2520}, {32, 4096, 32, 8192, 64}}));
  const ModelSpec m = test::gpt_shape(L, h, a);
  const double V = m.vocab, hh = h;
  const double expected = 72.0 * B * s * L * hh * hh * (1.0 + s / (6.0 * hh) + V / (12.0 * L * hh));
  REQUIRE_THAT(model_flops_per_step(m, B, s), WithinRel(expected, 1e-12));
}

TEST_CASE("model FLOPs of GQA with SwiGLU follow Megatron's generalised formula", "[model]") {
  // Narayanan et al. 2021 (arXiv:2104.04473) §5.1, generalised as in Megatron-LM's
  // megatron/training/training.py num_floating_point_operations: 12·B·s·L·h²·((1 + g/a)·(a·d/h) + (f/h)·k·3/2 + s/h + V/(2·L·h)).
  const ModelSpec m = *find_model_preset("llama3-70b");
  const double B = 16, s = 8192, L = m.layers, h = m.hidden, a = m.heads, g = m.kv_heads, d = m.head_dim, f = m.ffn_hidden,
               V = m.vocab;
  const double expected = 12.0 * B * s * L * h * h *
                          ((1 + g / a) * (a * d / h) + (f / h) * 1.0 * 1.5 + (s / h) * (a * d / h) + V / (2 * L * h));
  REQUIRE_THAT(model_flops_per_step(m, B, s), WithinRel(expected, 1e-12));
}

TEST_CASE("preset parameter counts match their published sizes", "[model][presets]") {
  for (const ModelPreset& p : model_presets()) {
    INFO(p.spec.name);
    REQUIRE_THAT(count_params(p.spec).total, WithinRel(p.published_params, 0.015));
  }
}

TEST_CASE("active parameters of MoE presets match their published figures", "[model][presets]") {
  // DeepSeek-V3 report abstract: 37B activated; Mixtral: 39B active; Qwen2-57B-A14B: 14B.
  REQUIRE_THAT(count_params(*find_model_preset("deepseek-v3")).active, WithinRel(37e9, 0.03));
  REQUIRE_THAT(count_params(*find_model_preset("mixtral-8x22b")).active, WithinRel(39e9, 0.03));
  REQUIRE_THAT(count_params(*find_model_preset("qwen2-57b-a14b")).active, WithinRel(14e9, 0.05));
  const ParamCounts dense = count_params(*find_model_preset("llama3-405b"));
  REQUIRE(dense.active == dense.total);
}

TEST_CASE("Llama 3 405B layer weights counted by hand", "[model]") {
  const ModelSpec m = *find_model_preset("llama3-405b");
  const LayerParams p = dense_layer_params(m);
  REQUIRE(p.attention == 16384.0 * 128 * (2 * 128 + 2 * 8));  // W_Q, W_O: h×(a·d); W_K, W_V: h×(g·d)
  REQUIRE(p.dense_mlp == 3.0 * 16384 * 53248);                // gate, up, down
}

TEST_CASE("DeepSeek-V3 MLA projection weights counted by hand", "[model]") {
  // q: 7168·1536 + 1536·128·192; kv: 7168·(512 + 64) + 512·128·(128 + 128); o: 128·128·7168.
  const LayerParams p = dense_layer_params(*find_model_preset("deepseek-v3"));
  REQUIRE(p.attention == 11010048.0 + 37748736.0 + 4128768.0 + 16777216.0 + 117440512.0);
  const LayerParams e = moe_layer_params(*find_model_preset("deepseek-v3"));
  REQUIRE(e.routed_expert == 3.0 * 7168 * 2048);
  REQUIRE(e.router == 7168.0 * 256);
}

TEST_CASE("an MTP module adds its block, its projection and the output layer to the FLOPs", "[model]") {
  // DeepSeek-V3's MTP module (§2.2) per token, forward: the MoE block's active weights (MLA 187,105,280,
  // router 1,835,008, 9 experts of 44,040,192 = 396,361,728), the 2h×h projection 102,760,448 and the
  // output layer 129,280 · 7168 = 926,679,040: 1,614,741,504 weights, 2 FLOPs each; attention of one
  // more block 2·s²·a·(192 + 128). Training is 3× the forward.
  ModelSpec with = *find_model_preset("deepseek-v3");
  ModelSpec without = with;
  without.mtp_layers = 0;
  REQUIRE(with.mtp_layers == 1);
  const double s = 4096, tokens = 8 * s;
  const double extra = 3.0 * (tokens * 2.0 * 1614741504.0 + 8 * 2.0 * s * s * 128 * 320);
  REQUIRE_THAT(model_flops_per_step(with, 8, s) - model_flops_per_step(without, 8, s), WithinRel(extra, 1e-9));
  REQUIRE(count_params(with).total == count_params(without).total);  // 671B, as DeepSeek reports
}

TEST_CASE("Llama 4 Maverick has experts in every other layer and matches its published size", "[model]") {
  // config.json interleave_moe_layer_step 2: layers 1, 3, …, 47 (0-based) are MoE, the others dense.
  const ModelSpec m = *find_model_preset("llama4-maverick-17b-128e");
  REQUIRE_FALSE(is_moe_layer(m, 0));
  REQUIRE(is_moe_layer(m, 1));
  REQUIRE(is_moe_layer(m, 47));
  REQUIRE(moe_layer_count(m) == 24);
  REQUIRE(dense_layer_count(m) == 24);
  REQUIRE(moe_layers_between(m, 0, 0) == 0);
  REQUIRE(moe_layers_between(m, 0, 1) == 1);
  REQUIRE(moe_layers_between(m, 2, 7) == 3);  // 3, 5, 7
  REQUIRE(moe_layers_between(m, 24, 47) == 12);
  // By hand: attention 48 · 5120·128·(80 + 16) = 3,019,898,880; dense MLPs 24 · 3·5120·16384 =
  // 6,039,797,760; MoE layers 24 · (129 experts (128 routed + 1 shared) · 3·5120·8192 + router 5120·128)
  // = 389,560,221,696; embedding and output 2 · 202,048·5120 = 2,068,971,520; norms 48·2·5120 + 5120.
  const double total = 3019898880.0 + 6039797760.0 + 24 * (129 * 3.0 * 5120 * 8192 + 5120.0 * 128) + 2068971520.0 + 48 * 2 * 5120.0 +
                       5120;
  REQUIRE_THAT(count_params(m).total, WithinRel(total, 1e-12));
  REQUIRE_THAT(count_params(m).total, WithinRel(400e9, 0.01));  // Meta: 400B total
  // Active: 17B (Meta), one routed and the shared expert per MoE layer.
  REQUIRE_THAT(count_params(m).active, WithinRel(17.2e9, 0.01));
  // Scout: every layer MoE (step 1), 16 experts.
  const ModelSpec s = *find_model_preset("llama4-scout-17b-16e");
  REQUIRE(moe_layer_count(s) == 48);
  // A step with leading dense layers: dense_layers 3, step 2 → MoE at 3, 5, 7 (i + 1 even and i ≥ 3).
  ModelSpec d = s;
  d.dense_layers = 3, d.moe_layer_step = 2, d.layers = 8;
  REQUIRE(moe_layer_count(d) == 3);
  REQUIRE_FALSE(is_moe_layer(d, 1));
  REQUIRE(is_moe_layer(d, 3));
}

TEST_CASE("attended_tokens follows sliding windows, chunks and global layers", "[model]") {
  // gpt-oss: layer_types alternate sliding (128) and full, sliding first.
  const ModelSpec g = *find_model_preset("gpt-oss-120b");
  REQUIRE(attended_tokens(g, 0, 100) == 100);
  REQUIRE(attended_tokens(g, 0, 1000) == 128);
  REQUIRE(attended_tokens(g, 1, 1000) == 1000);
  REQUIRE(attended_tokens(g, 35, 5000) == 5000);
  // Llama 4: 8,192-token chunks, every fourth layer (3, 7, …) global.
  const ModelSpec l = *find_model_preset("llama4-scout-17b-16e");
  REQUIRE(attended_tokens(l, 0, 8192) == 8192);
  REQUIRE(attended_tokens(l, 0, 8193) == 1);      // the first token of the second chunk sees itself
  REQUIRE(attended_tokens(l, 0, 10000) == 1808);  // 10,000 − 8,192
  REQUIRE(attended_tokens(l, 3, 10000) == 10000);
  // No window: every layer global.
  const ModelSpec q = *find_model_preset("qwen3-30b-a3b");
  REQUIRE(attended_tokens(q, 0, 32768) == 32768);
}

TEST_CASE("the serving presets match their published sizes", "[model]") {
  // The model cards' totals: gpt-oss 116.8B and 20.9B, Qwen3 30.5B and 235B (the Qwen3 report),
  // DeepSeek-R1 671B, Llama 4 Scout 109B (with its vision encoder, which cutlab leaves out: 107.8B).
  for (const auto& [name, published, tolerance] : {std::tuple{"gpt-oss-120b", 116.8e9, 0.005},
                                                   {"gpt-oss-20b", 20.9e9, 0.005},
                                                   {"qwen3-30b-a3b", 30.5e9, 0.005},
                                                   {"qwen3-235b-a22b", 235e9, 0.005},
                                                   {"deepseek-r1", 671e9, 0.005},
                                                   {"llama4-scout-17b-16e", 109e9, 0.015}}) {
    INFO(name);
    REQUIRE_THAT(count_params(*find_model_preset(name)).total, WithinRel(published, tolerance));
  }
}
