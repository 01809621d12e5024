#include <catch2/catch.hpp>

#include "core/memory.h"
#include "core/presets.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("ZeRO model states per parameter are 16, 4 + 12/Nd, 2 + 14/Nd, 16/Nd with 16-bit gradients", "[memory]") {
  // Rajbhandari et al. 2019 (arXiv:1910.02054) §3 and Figure 1: Ψ = 7.5B, Nd = 64, K = 12.
  Plan plan;
  Workload w;
  w.grad_dtype = GradDtype::FP16;
  const double psi = 7.5e9, nd = 64;
  const double expected_bpp[] = {16.0, 4.0 + 12.0 / nd, 2.0 + 14.0 / nd, 16.0 / nd};
  const double expected_GB[] = {120.0, 31.4, 16.6, 1.9};  // as printed in Figure 1
  for (int stage = 0; stage <= 3; ++stage) {
    plan.zero = stage;
    const double bpp = state_bytes_per_param(plan, w, nd).total();
    REQUIRE_THAT(bpp, WithinRel(expected_bpp[stage], 1e-12));
    REQUIRE_THAT(bpp * psi / 1e9, WithinAbs(expected_GB[stage], 0.05));
  }
}

TEST_CASE("Megatron keeps 18 bytes per parameter, 6 + 12/d with the distributed optimizer", "[memory]") {
  // megatron/training/theoretical_memory_usage.py: bf16 params, fp32 main_grad, Adam.
  Plan plan;
  Workload w;  // grad_dtype fp32 by default
  REQUIRE(state_bytes_per_param(plan, w, 8).total() == 18.0);
  plan.distributed_optimizer = true;
  const double d = GENERATE(2.0, 8.0, 64.0);
  REQUIRE_THAT(state_bytes_per_param(plan, w, d).total(), WithinRel(6.0 + 12.0 / d, 1e-12));
}

namespace {
// Korthikanti et al. 2022 (arXiv:2205.05198) Table 2 setting: f = 4h, MHA, dropout, no flash attention.
struct Korthikanti {
  ModelSpec m = test::gpt_shape(96, 12288, 96);
  Workload w;
  Plan plan;
  double s = 2048, b = 1, h = 12288, a = 96;
  Korthikanti() {
    w.seq_len = 2048;
    plan.flash_attention = false;
  }
  double bytes(int t, bool sp, Recompute recompute) {
    plan.tp = t;
    plan.sp = sp;
    plan.recompute = recompute;
    return layer_activation_bytes(m, plan, w, derive_mesh(plan, w), false);
  }
};
}  // namespace

TEST_CASE("activations per layer reproduce Korthikanti et al. Table 2", "[memory]") {
  Korthikanti k;
  const double s = k.s, b = k.b, h = k.h, a = k.a, t = 8;
  SECTION("no parallelism: sbh(34 + 5as/h)") {
    REQUIRE_THAT(k.bytes(1, false, Recompute::None), WithinRel(s * b * h * (34 + 5 * a * s / h), 1e-12));
  }
  SECTION("tensor parallel: sbh(10 + 24/t + 5as/(ht))") {
    REQUIRE_THAT(k.bytes(8, false, Recompute::None), WithinRel(s * b * h * (10 + 24 / t + 5 * a * s / (h * t)), 1e-12));
  }
  SECTION("tensor + sequence parallel: sbh/t·(34 + 5as/h)") {
    REQUIRE_THAT(k.bytes(8, true, Recompute::None), WithinRel(s * b * h / t * (34 + 5 * a * s / h), 1e-12));
  }
  SECTION("tensor parallel + selective recompute: sbh(10 + 24/t)") {
    REQUIRE_THAT(k.bytes(8, false, Recompute::Selective), WithinRel(s * b * h * (10 + 24 / t), 1e-12));
  }
  SECTION("tensor + sequence parallel + selective recompute: 34·sbh/t") {
    REQUIRE_THAT(k.bytes(8, true, Recompute::Selective), WithinRel(34 * s * b * h / t, 1e-12));
  }
  SECTION("full recompute: 2sbh") { REQUIRE_THAT(k.bytes(8, false, Recompute::Full), WithinRel(2 * s * b * h, 1e-12)); }
}

TEST_CASE("flash attention stores no score matrix", "[memory]") {
  Korthikanti k;
  const double with_scores = k.bytes(8, true, Recompute::None);
  k.plan.flash_attention = true;
  REQUIRE_THAT(k.bytes(8, true, Recompute::None), WithinRel(34 * k.s * k.b * k.h / 8, 1e-12));
  REQUIRE(with_scores > k.bytes(8, true, Recompute::None));
}

TEST_CASE("context parallel divides the per-layer activations by cp", "[memory]") {
  Korthikanti k;
  k.plan.flash_attention = true;
  const double one = k.bytes(8, true, Recompute::Selective);
  k.plan.cp = 4;
  REQUIRE_THAT(k.bytes(8, true, Recompute::Selective), WithinRel(one / 4, 1e-12));
}

TEST_CASE("in-flight micro-batches on the first stage follow the schedule", "[memory]") {
  Plan plan;
  plan.pp = 8;
  plan.schedule = Schedule::GPipe;
  REQUIRE(in_flight_micro_batches(plan, 32, 0) == 32);
  plan.schedule = Schedule::OneFOneB;
  REQUIRE(in_flight_micro_batches(plan, 32, 0) == 8);
  REQUIRE(in_flight_micro_batches(plan, 32, 7) == 1);
  REQUIRE(in_flight_micro_batches(plan, 4, 0) == 4);
  plan.schedule = Schedule::Interleaved;
  plan.vpp = 4;  // Korthikanti et al. 2022 §4.2.3: p·(1 + (p − 1)/(p·v))
  REQUIRE_THAT(in_flight_micro_batches(plan, 32, 0), WithinRel(8.0 * (1 + 7.0 / 32), 1e-12));
}

TEST_CASE("model states of a data-parallel plan add up to bytes per parameter times parameters", "[memory]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 4096, 64);
  c.plan.distributed_optimizer = true;
  const MemoryResult mem = memory_per_stage(test::resolved(c));
  const double psi = count_params(c.model).total;
  REQUIRE_THAT(mem.per_stage[0].weights_bytes, WithinRel(2 * psi, 1e-12));
  REQUIRE_THAT(mem.per_stage[0].grads_bytes, WithinRel(4 * psi, 1e-12));
  REQUIRE_THAT(mem.per_stage[0].optimizer_bytes, WithinRel(12 * psi / 8, 1e-12));
}

TEST_CASE("weights on all stages and expert ranks add up to the model", "[memory]") {
  SECTION("dense, pipeline of 4") {
    Config c = test::config("llama3-70b", "dgx-h100", 1, 4, 2, 4096, 64);
    const MemoryResult mem = memory_per_stage(test::resolved(c));
    double sum = 0;
    for (const StageMemory& s : mem.per_stage) sum += s.dense_params + s.expert_params;
    REQUIRE_THAT(sum, WithinRel(count_params(c.model).total, 1e-12));
  }
  SECTION("DeepSeek-V3, PP 16 × EP 64") {
    Config c = test::config("deepseek-v3", "hgx-h800", 1, 16, 2, 4096, 1920);
    c.plan.ep = 64;
    const MemoryResult mem = memory_per_stage(test::resolved(c));
    double sum = 0;
    for (const StageMemory& s : mem.per_stage) sum += s.dense_params + s.expert_params * 64;
    // + the MTP module on the last stage, with its copy of the embedding (V·h).
    const ParamCounts n = count_params(c.model);
    REQUIRE_THAT(sum, WithinRel(n.total + n.mtp + double(c.model.vocab) * c.model.hidden, 1e-12));
    // The MTP module by hand: MLA attention 187,105,280 (q down 7168·1536, q up 1536·128·192, kv down
    // 7168·576, kv up 512·128·256, o 128·128·7168), router 7168·256, 257 experts of 3·7168·2048
    // (11,318,329,344), projection 2·7168², norms ≈ 40k: 11.61e9.
    REQUIRE_THAT(n.mtp, WithinRel(187105280.0 + 1835008 + 11318329344.0 + 102760448, 1e-5));
  }
}

TEST_CASE("a plan that does not fit is a result with the overflow", "[memory]") {
  Config c = test::config("llama3-405b", "dgx-h100", 8, 1, 1, 8192, 8);
  const MemoryResult mem = memory_per_stage(test::resolved(c));
  REQUIRE_FALSE(mem.fits);
  REQUIRE_THAT(mem.overflow_bytes, WithinRel(mem.per_stage[0].total_bytes - mem.per_stage[0].capacity_bytes, 1e-12));
  // 405.9B params × 18 bytes / 8 GPUs ≈ 913 GB of model states alone.
  REQUIRE(mem.per_stage[0].weights_bytes + mem.per_stage[0].grads_bytes + mem.per_stage[0].optimizer_bytes > 900e9);
}

TEST_CASE("K and V weights are replicated, not split, when TP exceeds the KV heads", "[memory]") {
  // Llama 3 70B: h 8192, 8 KV heads of 128: K and V are 2·8192·8·128 = 16,777,216 weights per layer.
  // At TP 16 each GPU holds one KV head (1/8 of K and V, as at TP 8), and 1/16 of Q and O.
  const ModelSpec m = *find_model_preset("llama3-70b");
  const LayerParams p = dense_layer_params(m);
  REQUIRE(p.kv_projections == 2.0 * 8192 * 8 * 128);
  REQUIRE_THAT(attention_params_per_gpu(p, m, 16), WithinRel((p.attention - p.kv_projections) / 16 + p.kv_projections / 8, 1e-15));
  REQUIRE_THAT(attention_params_per_gpu(p, m, 8), WithinRel(p.attention / 8, 1e-15));
  // A serving stage at TP 16 holds 80 × 16,777,216 × (1/8 − 1/16) more weights than an even split.
  Config c = test::config("llama3-70b", "dgx-h100", 16, 1, 1, 4096, 16);
  const Resolved r = test::resolved(c);
  const StageParams sp = stage_params(m, c.plan, r.mesh, r.placement.stages[0]);
  const double even = 80 * (p.attention / 16 + p.norms) + 80 * p.dense_mlp / 16 + 2.0 * m.vocab * m.hidden / 16 + m.hidden;
  REQUIRE_THAT(sp.dense - even, WithinRel(80 * p.kv_projections * (1.0 / 8 - 1.0 / 16), 1e-9));
}

TEST_CASE("an MoE layer keeps each routed token's input and its expert MLP activations, not the expert output", "[memory]") {
  // Mixtral 8x22B (h 6144, 8 experts, top-2, f_e 16384, SwiGLU) at TP 1, EP 8, s 4096, b 1, no recompute,
  // flash attention: the MoE part is s·b·k·(2h + 6·f_e) + 4·s·b·E (fp32 router logits), so an MoE layer
  // exceeds a dense-MLP layer of f = 0 by exactly that (the attention part is shared). The routing
  // probabilities scale the activation's output inside the experts (Megatron-Core
  // weighted_bias_swiglu_impl), so the combine keeps no 2h expert output per copy.
  Config c = test::config("mixtral-8x22b", "dgx-h100", 1, 1, 8, 4096, 64);
  c.plan.ep = 8;
  c.plan.dp = 1;
  const Mesh mesh = derive_mesh(c.plan, c.workload);
  ModelSpec no_mlp = c.model;
  no_mlp.ffn_hidden = 0;
  const double moe = layer_activation_bytes(c.model, c.plan, c.workload, mesh, true);
  const double attention_only = layer_activation_bytes(no_mlp, c.plan, c.workload, mesh, false);
  const double s = 4096, k = 2, h = 6144, fe = 16384, E = 8;
  REQUIRE_THAT(moe - attention_only, WithinRel(s * k * (2 * h + 6 * fe) + 4 * s * E, 1e-12));
}

TEST_CASE("DeepSeek-V3's memory levers: recompute modules, fp8 GEMM inputs, fp8 activation inputs", "[memory]") {
  // One MoE layer of DeepSeek-V3 (h 7168, 128 heads, q_lora 1536, kv_lora 512, rope 64, d_nope 128,
  // d_v 128, 256 experts top-8 of f_e 2048, one shared expert, SwiGLU, no dropout), TP 1, s 4096, b 1,
  // flash attention. Bytes per token:
  //   bf16, no recompute: norm inputs 4h = 28,672; norm outputs 4h = 28,672; latents 2·2112 = 4,224;
  //     Q, K, V per head 2·128·(192 + 192 + 128) = 131,072; O 2·128·128 = 32,768;
  //     routed 8·(2h + 6·2048) = 8·26,624 = 212,992; shared 6·2048 = 12,288; router 4·256 = 1,024
  //     → 451,712.
  //   fp8 with recompute of layernorm, mla_up_proj and moe_act and the activation input in fp8
  //   (DeepSeek-V3 §3.3.2): norm inputs 28,672; latents 4,224; O 2·16,384 + 16,384 (fp8 copy) = 49,152;
  //     routed 8·(h + 2·2048·1) = 8·11,264 = 90,112; shared 2·2048 = 4,096; router 1,024 → 177,280.
  Config c = test::config("deepseek-v3", "hgx-h800", 1, 1, 64, 4096, 1024);
  c.plan.dp = 1;
  const Mesh mesh = derive_mesh(c.plan, c.workload);
  const double s = 4096;
  REQUIRE_THAT(layer_activation_bytes(c.model, c.plan, c.workload, mesh, true), WithinRel(451712.0 * s, 1e-12));
  c.workload.dtype = Dtype::FP8;
  c.plan.recompute = Recompute::Selective;
  c.plan.recompute_modules = {RecomputeModule::LayerNorm, RecomputeModule::MlaUpProj, RecomputeModule::MoeAct};
  c.plan.activation_func_fp8_input_store = true;
  REQUIRE_THAT(layer_activation_bytes(c.model, c.plan, c.workload, mesh, true), WithinRel(177280.0 * s, 1e-12));
  // Recomputing the whole MoE block keeps its input only: the attention part and the norm inputs.
  c.plan.recompute_modules = {RecomputeModule::LayerNorm, RecomputeModule::MlaUpProj, RecomputeModule::Moe};
  REQUIRE_THAT(layer_activation_bytes(c.model, c.plan, c.workload, mesh, true), WithinRel((28672.0 + 4224 + 49152) * s, 1e-12));
}

TEST_CASE("bf16 Adam moments and an EMA on the GPU change the optimizer's bytes per parameter", "[memory]") {
  // fp32 master 4 + moments 8 (fp32) or 4 (bf16) + EMA 4 on the GPU, 0 on the CPU; ZeRO-1 over 8.
  Plan p;
  p.zero = 1;
  Workload w;
  REQUIRE_THAT(state_bytes_per_param(p, w, 8).optimizer, WithinRel(12.0 / 8, 1e-12));
  w.moment_dtype = MomentDtype::BF16;
  REQUIRE_THAT(state_bytes_per_param(p, w, 8).optimizer, WithinRel(8.0 / 8, 1e-12));
  w.ema = Ema::Gpu;
  REQUIRE_THAT(state_bytes_per_param(p, w, 8).optimizer, WithinRel(12.0 / 8, 1e-12));
  w.ema = Ema::Cpu;
  REQUIRE_THAT(state_bytes_per_param(p, w, 8).optimizer, WithinRel(8.0 / 8, 1e-12));
}

TEST_CASE("per-op SAC keeps Q, V, the attention output, the gate and the down projection of a layer", "[memory]") {
  // torchtitan parallelize_llama.py _custom_policy: every compute op's output but every second matmul.
  // Llama 3 8B, TP 1: input h, Q h, V h/4, attention output h (bf16) + log-sum-exp (fp32, a per token),
  // gate f, down h: 2·(4.25·h + f) + 4·a = 63,616 bytes per token.
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 16);
  c.plan.micro_batch = 2;
  c.plan.recompute = Recompute::OpSac;
  const Resolved r = test::resolved(c);
  const double tokens = 8192.0 * 2;
  REQUIRE_THAT(layer_activation_bytes(c.model, c.plan, c.workload, r.mesh, false), WithinRel(63616.0 * tokens, 1e-12));
  REQUIRE_THAT(op_sac_recomputed_matmul_fraction(c.model),
               WithinRel((1024.0 + 4096.0 + 14336.0) / (6144.0 + 4096.0 + 3 * 14336.0), 1e-12));
  // The backward rematerialises one layer's unsaved tensors on top.
  Config none = c;
  none.plan.recompute = Recompute::None;
  const double full = layer_activation_bytes(c.model, none.plan, c.workload, r.mesh, false);
  const MemoryResult sac = memory_per_stage(r), kept_all = memory_per_stage(test::resolved(none));
  REQUIRE_THAT(kept_all.per_stage[0].activations_bytes - sac.per_stage[0].activations_bytes,
               WithinRel(32 * (full - 63616.0 * tokens) - (full - 63616.0 * tokens), 1e-9));
}

TEST_CASE("unfused cross entropy holds three fp32 buffers of the logits, the fused one", "[memory]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 16);
  Config unfused = c;
  unfused.plan.fused_cross_entropy = false;
  const double logits = 8192.0 * 128256;
  REQUIRE_THAT(memory_per_stage(test::resolved(unfused)).per_stage[0].activations_bytes -
                   memory_per_stage(test::resolved(c)).per_stage[0].activations_bytes,
               WithinRel((12.0 - 4.0) * logits, 1e-12));
}

TEST_CASE("ZeRO-3 gathers the largest unit with the next layer and holds one layer's gradient buffers", "[memory]") {
  // PP 1: the root unit (embedding + output layer + final norm) is larger than a layer.
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 16);
  c.plan.zero = 3;
  const Resolved r = test::resolved(c);
  const StageMemory sm = memory_per_stage(r).per_stage[0];
  const ParamCounts pc = count_params(c.model);
  // A layer's gathered weights: its projections and MLP (cutlab leaves the two norm vectors out).
  const double layer = (pc.total - pc.embedding - pc.output - c.model.hidden) / c.model.layers - 2.0 * c.model.hidden;
  const double root = pc.embedding + pc.output + c.model.hidden;
  REQUIRE_THAT(sm.weights_bytes, WithinRel(2.0 * sm.dense_params / 8 + 2.0 * (root + layer), 1e-9));
  REQUIRE_THAT(sm.grads_bytes, WithinRel(4.0 * sm.dense_params / 8 + (2.0 + 4.0) * layer, 1e-9));
}

TEST_CASE("ZeRO-3 without reshard_after_forward holds every unit of the stage gathered", "[memory]") {
  // Llama 3 8B, FSDP over 8 GPUs, PP 1: reshard_after_forward false keeps all 32 layers and the root
  // unit unsharded at the end of the forward, 2 bytes per parameter of the stage (8.03B · 2 = 16.1 GB)
  // beside the 1/8 shard; the gradient buffers of one layer are unchanged.
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 16);
  c.plan.zero = 3;
  const StageMemory resharded = memory_per_stage(test::resolved(c)).per_stage[0];
  c.plan.reshard_after_forward = false;
  const StageMemory kept = memory_per_stage(test::resolved(c)).per_stage[0];
  REQUIRE_THAT(kept.weights_bytes, WithinRel(2.0 * kept.dense_params / 8 + 2.0 * kept.dense_params, 1e-12));
  REQUIRE(kept.grads_bytes == resharded.grads_bytes);
  REQUIRE(kept.weights_bytes > resharded.weights_bytes + 10e9);
  // Below ZeRO-3 the key changes nothing.
  c.plan.zero = 1;
  const double z1 = memory_per_stage(test::resolved(c)).per_stage[0].total_bytes;
  c.plan.reshard_after_forward = true;
  REQUIRE(memory_per_stage(test::resolved(c)).per_stage[0].total_bytes == z1);
}

TEST_CASE("the allocator's reserve is a fraction of the allocated bytes", "[memory]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 16);
  c.cluster.allocator_fragmentation = 0.0;
  const StageMemory exact = memory_per_stage(test::resolved(c)).per_stage[0];
  c.cluster.allocator_fragmentation = 0.25;
  const StageMemory reserved = memory_per_stage(test::resolved(c)).per_stage[0];
  REQUIRE(exact.allocator_bytes == 0.0);
  REQUIRE_THAT(reserved.allocator_bytes, WithinRel(0.25 * exact.total_bytes, 1e-12));
  REQUIRE_THAT(reserved.total_bytes, WithinRel(1.25 * exact.total_bytes, 1e-12));
  // The presets carry the value fitted to torchtitan's logged peaks (docs/validation.md).
  REQUIRE(find_cluster_preset("dgx-h100")->allocator_fragmentation == 0.02);
  c.cluster.allocator_fragmentation = 1.5;
  REQUIRE_FALSE(validate(c.model, c.cluster, c.plan, c.workload).empty());
}

TEST_CASE("the hottest EP rank holds imbalance × the routed tokens' activations", "[memory]") {
  // Mixtral 8x22B at TP 1, EP 8, s 4096, b 1 (as above): the routed part is s·b·k·(2h + 6·f_e) =
  // 4096 · 2 · (12,288 + 98,304) = 905,969,664 bytes per layer. Imbalance 1.5 adds half of it,
  // 452,984,832; padding to capacity factor 1.25 a quarter, 226,492,416. Attention, the router
  // logits and the layer input do not change.
  Config c = test::config("mixtral-8x22b", "dgx-h100", 1, 1, 8, 4096, 64);
  c.plan.ep = 8;
  c.plan.dp = 1;
  const Mesh mesh = derive_mesh(c.plan, c.workload);
  const Plan even = c.plan;
  const double balanced = layer_activation_bytes(c.model, c.plan, c.workload, mesh, true);
  c.plan.moe_imbalance = 1.5;
  REQUIRE_THAT(layer_activation_bytes(c.model, c.plan, c.workload, mesh, true) - balanced, WithinRel(452984832.0, 1e-12));
  c.plan.moe_imbalance = 1;
  c.plan.moe_capacity_factor = 1.25;
  c.plan.moe_pad_to_capacity = true;
  REQUIRE_THAT(layer_activation_bytes(c.model, c.plan, c.workload, mesh, true) - balanced, WithinRel(226492416.0, 1e-12));
  // A dense layer has no routed tokens.
  REQUIRE(layer_activation_bytes(c.model, c.plan, c.workload, mesh, false) ==
          layer_activation_bytes(c.model, even, c.workload, mesh, false));
}

TEST_CASE("CP with all-gathered K/V holds the gathered K, V and their gradients of one layer", "[memory]") {
  // Llama 3 8B, CP 4, seq 64k: K and V of the whole sequence are 256 MiB; the backward of one layer
  // holds them and dK, dV (TE re-gathers K/V in the backward): 512 MiB more than the ring, once per
  // stage. The stored activations per micro-batch are the same (local K/V chunks only).
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 4, 65536, 4);
  c.plan.cp = 4;
  c.plan.recompute = Recompute::Selective;
  const StageMemory ring = memory_per_stage(test::resolved(c)).per_stage[0];
  c.plan.cp_comm = CpComm::AllGather;
  REQUIRE(cp_kv_sequence_bytes(c.model, c.plan, c.workload) == 268435456.0);
  const StageMemory gathered = memory_per_stage(test::resolved(c)).per_stage[0];
  REQUIRE(gathered.activation_bytes_per_micro_batch == ring.activation_bytes_per_micro_batch);
  REQUIRE_THAT(gathered.activations_bytes - ring.activations_bytes, WithinRel(2 * 268435456.0, 1e-9));
  // Ulysses keeps the same tensors (whole sequence × 1/cp of the heads = s/cp × all heads).
  c.plan.cp_comm = CpComm::AllToAll;
  REQUIRE(memory_per_stage(test::resolved(c)).per_stage[0].activations_bytes == ring.activations_bytes);
}

TEST_CASE("offloaded layers' activations leave HBM but for one layer in flight", "[memory]") {
  // Llama 3 8B on one GPU per replica (DP 8), 8k tokens, selective recompute: a layer keeps
  // 34·s·b·h bytes (norm inputs 4sbh, norm outputs 4sbh, Q 2·4096, K and V 2·2·1024, O 2·4096,
  // SwiGLU 6·14,336 per token = 139,264·s·b = 34·s·b·h): 1.14 GB. Offloading 16 of 32 layers with
  // one micro-batch in flight: 16 layers in host memory, 15 fewer in HBM (one stays as the buffer).
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 8);
  c.plan.recompute = Recompute::Selective;
  const double a = 34.0 * 8192 * 4096;
  const Resolved r0 = test::resolved(c);
  REQUIRE(layer_activation_bytes(c.model, c.plan, c.workload, r0.mesh, false) == a);
  const StageMemory kept = memory_per_stage(r0).per_stage[0];
  c.plan.activation_offload_layers = 16;
  const StageMemory off = memory_per_stage(test::resolved(c)).per_stage[0];
  REQUIRE(kept.in_flight_micro_batches == 1.0);
  REQUIRE(kept.offloaded_activations_bytes == 0.0);
  REQUIRE_THAT(off.offloaded_activations_bytes, WithinRel(16 * a, 1e-12));
  REQUIRE_THAT(kept.activations_bytes - off.activations_bytes, WithinRel(15 * a, 1e-12));
  REQUIRE_THAT(kept.activation_bytes_per_micro_batch - off.activation_bytes_per_micro_batch, WithinRel(16 * a, 1e-12));
  // DeepSeek-style stages offload dense layers first: of 3 dense then MoE layers, the first 4 are 3 + 1.
  const OffloadedActivations o = offloaded_activations(4, 3, 58, 10.0, 100.0);
  REQUIRE(o.bytes == 3 * 10.0 + 100.0);
  REQUIRE(o.largest_layer_bytes == 100.0);
}
