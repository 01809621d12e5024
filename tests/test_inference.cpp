#include <catch2/catch.hpp>

#include "core/estimate.h"
#include "core/serving_batching.h"
#include "tests/helpers.h"

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <set>
#include <utility>
#include <vector>

using namespace cutlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
Config serving(const char* model, int tp, int pp, int dp, int batch) {
  Config c = test::config(model, "dgx-h100", tp, pp, dp, 4096, 1);
  c.workload.mode = Mode::Infer;
  c.workload.batch = batch;
  c.workload.prompt_len = 1024;
  c.workload.output_len = 256;
  return c;
}
// DeepSeek-V3 with fp8 weights on H200, attention data-parallel over EP `ep`, one static decode step
// of `batch` tokens per replica.
Config deepseek_decode(int ep, int batch) {
  Config c = test::config("deepseek-v3", "hgx-h200", 1, 1, 1, 4096, 1);
  c.plan.ep = ep;
  c.workload.mode = Mode::Infer;
  c.workload.batch = batch;
  c.workload.weight_dtype = WeightDtype::FP8;
  c.workload.batching = Batching::Static;
  return c;
}
InferenceEstimate infer(const Config& c) {
  const Result<Estimate> r = evaluate(c);
  const ServingEstimate* s = test::serving(r);
  REQUIRE(s);
  return s->serving;
}
}  // namespace

TEST_CASE("Llama 3 70B on 8 H100 with TP 8 decodes near the weight-read bound", "[inference]") {
  const Config c = serving("llama3-70b", 8, 1, 1, 1);
  const InferenceEstimate r = infer(c);
  // Every GPU reads its 1/8 of the bf16 weights per token at the streaming bandwidth it reaches:
  // W / (8 × 3.35 TB/s × hbm_stream); the kernel floors (80 layers × 9 kernels × ~3 µs ≈ 2.2 ms) and
  // 160 small all-reduces of 16 KiB (each under 10 µs on NVLink) add to it, the KV read of one
  // 1k-token sequence and the host's work on it well under 0.2 ms. (Engines decode it in about 10–12
  // ms, docs/validation.md §8.)
  const double bound = count_params(c.model).total * 2.0 / (8 * c.cluster.hbm_bytes_per_s * c.cluster.efficiency.hbm_stream);
  REQUIRE(r.tpot_s >= bound);
  REQUIRE(r.tpot_s <= bound + 80 * 9 * c.cluster.efficiency.kernel_floor_s + 160 * 10e-6 + 0.2e-3);
}

TEST_CASE("TP cuts decode latency, PP does not", "[inference]") {
  const InferenceEstimate tp8 = infer(serving("llama3-70b", 8, 1, 1, 1));
  const InferenceEstimate tp4pp2 = infer(serving("llama3-70b", 4, 2, 1, 1));
  REQUIRE(tp8.tpot_s < tp4pp2.tpot_s);
  Config one_batch = serving("llama3-70b", 4, 2, 1, 1);
  one_batch.workload.batching = Batching::Static;
  // One batch walks 2 stages in turn: each waits about half the time (the hand-off adds a little).
  REQUIRE_THAT(infer(one_batch).stage_idle_fraction, Catch::Matchers::WithinAbs(0.5, 0.01));
}

TEST_CASE("doubling DP doubles total tokens/s and leaves TPOT unchanged", "[inference]") {
  const InferenceEstimate one = infer(serving("llama3-70b", 8, 1, 1, 16));
  const InferenceEstimate two = infer(serving("llama3-70b", 8, 1, 2, 16));
  REQUIRE(two.tpot_s == one.tpot_s);
  REQUIRE_THAT(two.output_tokens_per_s_total, WithinRel(2 * one.output_tokens_per_s_total, 1e-12));
  REQUIRE_THAT(two.output_tokens_per_s_per_gpu, WithinRel(one.output_tokens_per_s_per_gpu, 1e-12));
}

TEST_CASE("a static batch's throughput counts its prefill: B·OSL / (TTFT + (OSL − 1)·TPOT)", "[inference]") {
  Config c = serving("llama3-70b", 8, 1, 1, 16);
  c.workload.batching = Batching::Static;
  const InferenceEstimate r = infer(c);
  const double e2e = r.ttft_s + 255 * r.tpot_s;  // the first of the 256 tokens comes out of the prefill
  REQUIRE_THAT(r.e2e_latency_s, WithinRel(e2e, 1e-12));
  REQUIRE_THAT(r.output_tokens_per_s_total, WithinRel(16.0 * 256 / e2e, 1e-12));
  REQUIRE_THAT(r.requests_per_s, WithinRel(16.0 / e2e, 1e-12));
  REQUIRE(r.output_tokens_per_s_total < 16 / r.tpot_s);  // the old decode-only figure overstated it
}

TEST_CASE("KV cache per token is 2·L·g·d_head·bytes for GQA and the latent for MLA", "[inference]") {
  // Llama 3 70B: 2 · 80 · 8 · 128 · 2 bytes = 327,680; fp8 halves it.
  REQUIRE(kv_cache_bytes_per_token(*find_model_preset("llama3-70b"), KvDtype::BF16) == 2.0 * 80 * 8 * 128 * 2);
  REQUIRE(kv_cache_bytes_per_token(*find_model_preset("llama3-70b"), KvDtype::FP8) == 2.0 * 80 * 8 * 128);
  // DeepSeek-V3: 61 · (512 + 64) · 2 bytes (DeepSeek-V2 §2.1.2: (d_c + d_h^R)·l elements).
  REQUIRE(kv_cache_bytes_per_token(*find_model_preset("deepseek-v3"), KvDtype::BF16) == 61.0 * (512 + 64) * 2);
}

TEST_CASE("KV heads are replicated, not split, when TP exceeds them", "[inference]") {
  // Llama 3 70B has 8 KV heads: at TP 16 each GPU still holds one KV head, as at TP 8.
  Config c8 = serving("llama3-70b", 8, 1, 1, 4), c16 = serving("llama3-70b", 16, 1, 1, 4);
  REQUIRE(infer(c16).memory.per_stage[0].kv_cache_bytes == infer(c8).memory.per_stage[0].kv_cache_bytes);
  Config c4 = serving("llama3-70b", 4, 1, 1, 4);
  REQUIRE(infer(c4).memory.per_stage[0].kv_cache_bytes == 2 * infer(c8).memory.per_stage[0].kv_cache_bytes);
}

TEST_CASE("the largest batch that fits is where the KV cache fills the memory the weights leave", "[inference]") {
  Config c = serving("llama3-70b", 8, 1, 1, 1);
  c.workload.batching = Batching::Static;
  const InferenceEstimate r = infer(c);
  // ≈ (77.6 GiB − 16.4 GiB of weights) / (320 KiB / 8 GPUs × 1,280 tokens) ≈ 1,250 sequences.
  REQUIRE(r.max_batch_that_fits > 1000);
  c.workload.batch = static_cast<int>(r.max_batch_that_fits);
  REQUIRE(infer(c).memory.fits);
  c.workload.batch += 1;
  REQUIRE_FALSE(infer(c).memory.fits);
}

TEST_CASE("attention TP and expert EP on the same GPUs: experts are read whole, tokens travel", "[inference]") {
  Config c = serving("mixtral-8x22b", 8, 1, 1, 1);
  c.plan.etp = 1;
  c.plan.ep = 8;  // folding: attention TP 8, experts EP 8 on the same 8 GPUs
  const InferenceEstimate r = infer(c);
  bool all_to_all = false;
  for (const CommOp& op : r.comm) all_to_all |= op.axis == Axis::EP;
  REQUIRE(all_to_all);
  REQUIRE(r.decode.ep_s > 0);
  REQUIRE(r.replicas == 1);
}

TEST_CASE("serving rejects context parallel", "[inference]") {
  Config c = serving("llama3-70b", 8, 1, 1, 1);
  c.plan.cp = 2;
  const Errors e = validate(c.model, c.cluster, c.plan, c.workload);
  REQUIRE(e.size() == 1);
  REQUIRE(e[0].path == "/plan/cp");
}

TEST_CASE("Llama 3 70B on 8 H100, batch 64: TP4·PP2 with micro-batches in flight serves as DP2×TP4, and waits longer", "[inference]") {
  // Issue 12: with one batch in flight PP looked p× worse (3,672 against 7,346 tokens/s). With pp
  // micro-batches in flight each stage stays busy: throughput near the replicas', per-user latency
  // pays the walk through both stages and the hand-off.
  Config pp = serving("llama3-70b", 4, 2, 1, 64), dp = serving("llama3-70b", 4, 1, 2, 64);
  const InferenceEstimate a = infer(pp), b = infer(dp);
  REQUIRE(a.micro_batches == 2);
  REQUIRE(a.concurrency == 128);  // 2 micro-batches × 64, as 2 replicas × 64
  REQUIRE(b.concurrency == 64);
  REQUIRE_THAT(a.output_tokens_per_s_total, WithinRel(b.output_tokens_per_s_total, 0.15));
  REQUIRE(a.tpot_s > b.tpot_s);
  REQUIRE(a.ttft_s > b.ttft_s);
  REQUIRE(a.e2e_latency_s > b.e2e_latency_s);
  REQUIRE(a.stage_idle_fraction < 0.05);
}

TEST_CASE("DeepSeek-V3 EP8 decode reads nearly all local experts: every replica's tokens reach them", "[inference]") {
  Config c = deepseek_decode(8, 16);  // a pure decode step: 16 tokens per replica
  const InferenceEstimate r = infer(c);
  REQUIRE(r.replicas == 8);  // attention data parallel: 8 replicas, one EP group
  // By hand: E = 256 experts, 32 per GPU; the EP group's tokens B_group = 8 replicas × 16 = 128, top-8:
  // 32·(1 − (1 − 1/256)^(128·8)) = 32·(1 − 0.01817) = 31.42 (one replica's 16 tokens: 12.6).
  const double expected = 32.0 * (1.0 - std::pow(1.0 - 1.0 / 256, 128.0 * 8));
  REQUIRE_THAT(expected, WithinRel(31.42, 1e-3));
  REQUIRE_THAT(r.local_experts_read, WithinRel(expected, 1e-9));
  // In-flight steps add prompt chunks: still more tokens, all 32 experts read.
  c.workload.batching = Batching::InFlight;
  REQUIRE(infer(c).local_experts_read > expected);
}

TEST_CASE("gpt-oss's MXFP4 experts beside fp8 attention: the experts' bytes apart, read and held", "[inference]") {
  Config c = test::config("gpt-oss-120b", "hgx-h200", 1, 1, 1, 4096, 1);
  c.workload.mode = Mode::Infer;
  c.workload.batch = 8;
  c.workload.weight_dtype = WeightDtype::FP8;
  c.workload.batching = Batching::Static;
  const InferenceEstimate fp8 = infer(c);
  c.workload.expert_weight_dtype = ExpertWeightDtype::MXFP4;
  const InferenceEstimate mx = infer(c);
  // By hand: 36 layers × 128 experts × 3 matrices of 2,880 × 2,880 = 114.67 G weights; MXFP4 stores
  // each in 4 bits plus one 8-bit scale per 32 (OCP MX v1.0): 17/32 byte instead of 1.
  const double expert_weights = 36.0 * 128 * 3 * 2880.0 * 2880;
  REQUIRE_THAT(expert_weights, WithinRel(114.67e9, 1e-4));
  const double saved = fp8.memory.per_stage[0].weights_bytes - mx.memory.per_stage[0].weights_bytes;
  REQUIRE_THAT(saved, WithinRel(expert_weights * (1.0 - 17.0 / 32), 1e-9));
  REQUIRE(mx.max_batch_that_fits > fp8.max_batch_that_fits);  // the bytes saved hold KV cache
  REQUIRE(mx.tpot_s < fp8.tpot_s);                            // fewer expert bytes read per step
  // A dense model has no experts to store apart.
  c = test::config("llama3-8b", "hgx-h200", 1, 1, 1, 4096, 1);
  c.workload.mode = Mode::Infer;
  c.workload.expert_weight_dtype = ExpertWeightDtype::FP8;
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).at(0).path == "/workload/expert_weight_dtype");
}

TEST_CASE("a quantised checkpoint keeps its embedding and output layer in 16 bits", "[inference]") {
  // Llama 3 8B (arXiv:2407.21783 Table 3): 32 layers of h = 4,096, 32 query and 8 KV heads of 128,
  // an MLP of 14,336, vocabulary 128,256, untied. Per layer: Q and O 4,096², K and V 4,096 × 1,024,
  // gate, up and down 3 × 4,096 × 14,336, two norms of 4,096: 218,112,000 weights; the final norm
  // 4,096; the embedding and the output layer 128,256 × 4,096 = 525,336,576 each.
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 1, 4096, 1);
  c.workload.mode = Mode::Infer;
  c.workload.batching = Batching::Static;
  c.workload.batch = 1;
  const double blocks = 32.0 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336 + 2 * 4096) + 4096;
  const double vocab = 128256.0 * 4096;
  REQUIRE_THAT(blocks + 2 * vocab, WithinRel(8.03e9, 1e-3));
  // fp8: one byte per block weight; the two vocabulary matrices stay bf16 (core/precision.h).
  c.workload.weight_dtype = WeightDtype::FP8;
  REQUIRE_THAT(infer(c).memory.per_stage[0].weights_bytes, WithinRel(blocks * 1.0 + 2 * vocab * 2.0, 1e-12));
  // NVFP4 on a B200: 0.5 + 1/16 byte per block weight.
  c.cluster = *find_cluster_preset("dgx-b200");
  c.workload.weight_dtype = WeightDtype::FP4;
  REQUIRE_THAT(infer(c).memory.per_stage[0].weights_bytes, WithinRel(blocks * 0.5625 + 2 * vocab * 2.0, 1e-12));
  // Two pipeline stages of 16 layers: the embedding on the first, the output layer and final norm on the last.
  c.plan.pp = 2;
  const InferenceEstimate pp = infer(c);
  const double half = 16.0 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336 + 2 * 4096);
  REQUIRE_THAT(pp.memory.per_stage[0].weights_bytes, WithinRel(half * 0.5625 + vocab * 2.0, 1e-12));
  REQUIRE_THAT(pp.memory.per_stage[1].weights_bytes, WithinRel((half + 4096) * 0.5625 + vocab * 2.0, 1e-12));
}

TEST_CASE("local layers' KV cache: their window, or the whole context as TensorRT-LLM keeps it", "[inference]") {
  // Llama 4 Scout: 36 of 48 layers attend within 8,192-token chunks. At a context of 32,768 tokens a
  // sequence holds 12·32,768 + 36·8,192 token-layers of K/V with the window kept, 48·32,768 with the
  // whole context: 16/7 as much. The keys read per step are the chunk's either way.
  Config c = test::config("llama4-scout-17b-16e", "hgx-h200", 8, 1, 1, 4096, 1);
  c.workload.mode = Mode::Infer;
  c.workload.batching = Batching::Static;
  c.workload.batch = 4;
  c.workload.prompt_len = 32768 - 1024, c.workload.output_len = 1024;
  c.workload.weight_dtype = WeightDtype::FP8, c.workload.kv_dtype = KvDtype::FP8;
  const InferenceEstimate window = infer(c);
  c.workload.local_kv_cache = LocalKvCache::Full;
  const InferenceEstimate full = infer(c);
  const double w = window.memory.per_stage[0].kv_cache_bytes, f = full.memory.per_stage[0].kv_cache_bytes;
  REQUIRE_THAT(f / w, WithinRel(48.0 * 32768 / (12.0 * 32768 + 36.0 * 8192), 1e-9));
  REQUIRE_THAT(full.tpot_s, WithinRel(window.tpot_s, 1e-12));
  REQUIRE(full.max_batch_that_fits < window.max_batch_that_fits);
}

TEST_CASE("attention DP with expert EP is the same layout with or without folding (DEP8)", "[inference]") {
  Config plain = test::config("deepseek-v3", "hgx-h200", 1, 1, 1, 4096, 1), folded = plain;
  plain.plan.ep = 8;                                            // tp 1 × ep 8: 8 attention replicas
  folded.plan.dp = 8, folded.plan.ep = 8, folded.plan.etp = 1;  // tp 1 × dp 8, experts EP 8 on the same GPUs
  for (Config* c : {&plain, &folded}) {
    c->workload.mode = Mode::Infer;
    c->workload.batch = 32;
    c->workload.weight_dtype = WeightDtype::FP8;
  }
  const InferenceEstimate a = infer(plain), b = infer(folded);
  REQUIRE(b.replicas == 8);
  REQUIRE_THAT(b.local_experts_read, WithinRel(a.local_experts_read, 1e-12));
  REQUIRE_THAT(b.tpot_s, WithinRel(a.tpot_s, 1e-12));
  REQUIRE_THAT(b.output_tokens_per_s_total, WithinRel(a.output_tokens_per_s_total, 1e-12));
}

TEST_CASE("wide EP across nodes sends fp8 dispatches and bf16 combines over the scale-out link", "[inference]") {
  Config c = deepseek_decode(16, 8);  // EP 16: two nodes
  c.plan.ep_dispatch_dtype = EpDispatchDtype::FP8;
  const InferenceEstimate r = infer(c);
  // A step of 8 tokens per GPU, top-8, hidden 7168: 8·8·7168 values; fp8 with a 4-byte scale per 128
  // (DeepSeek-V3 §3.3.2): 1 + 1/32 bytes each; the combine 2 bytes each.
  const double values = 8.0 * 8 * 7168;
  int seen = 0;
  for (const CommOp& op : r.comm)
    if (op.axis == Axis::EP) {
      REQUIRE(op.link == Link::ScaleOut);
      REQUIRE(op.group_size == 16);
      const bool dispatch = op.what.rfind("dispatch", 0) == 0;
      REQUIRE_THAT(op.message_bytes, WithinRel(values * (dispatch ? 1.0 + 1.0 / 32 : 2.0), 1e-12));
      ++seen;
    }
  REQUIRE(seen == 2);
  c.plan.ep_dispatch_dtype = EpDispatchDtype::BF16;
  REQUIRE(infer(c).decode.ep_s > r.decode.ep_s);
}

TEST_CASE("the allgather dispatcher all-gathers every token of the EP group and reduce-scatters the outputs", "[inference]") {
  // DeepSeek-V3 (58 MoE layers after 3 dense ones; top-8, hidden 7168) at EP 8 in one H200 node, a
  // static step of 8 tokens per GPU. All-to-all: each GPU sends S = 8·8·7168·2 bytes, 7/8 of them
  // away, one latency. All-gather: a gathered tensor of 8 ranks × 8 tokens × 7168 × 2 bytes = S, 7/8
  // of it received, in 7 ring steps: the same bytes at top-8 = EP 8, six latencies more, and the same
  // again for the reduce-scatter that combines.
  Config c = deepseek_decode(8, 8);
  const InferenceEstimate a2a = infer(c);
  c.plan.ep_dispatcher = EpDispatcher::AllGather;
  const InferenceEstimate ag = infer(c);
  const double S = 8.0 * 8 * 7168 * 2;
  int seen = 0;
  for (const CommOp& op : ag.comm)
    if (op.axis == Axis::EP) {
      const bool dispatch = op.what.rfind("dispatch", 0) == 0;
      REQUIRE(op.collective == (dispatch ? Collective::AllGather : Collective::ReduceScatter));
      REQUIRE_THAT(op.message_bytes, WithinRel(S, 1e-12));
      ++seen;
    }
  REQUIRE(seen == 2);
  REQUIRE_THAT(ag.decode.ep_s - a2a.decode.ep_s, WithinRel(58 * 2 * 6 * c.cluster.nvlink_latency_s, 1e-9));
}

TEST_CASE("fp8 dispatch when serving needs fp8 weights", "[inference]") {
  Config c = test::config("deepseek-v3", "hgx-h200", 1, 1, 1, 4096, 1);
  c.plan.ep = 8;
  c.plan.ep_dispatch_dtype = EpDispatchDtype::FP8;
  c.workload.mode = Mode::Infer;
  const Errors e = validate(c.model, c.cluster, c.plan, c.workload);
  REQUIRE(e.size() == 1);
  REQUIRE(e[0].path == "/plan/ep_dispatch_dtype");
}

TEST_CASE("fp4 dispatch sends NVFP4 tokens to the experts' fp4 GEMMs, and the combine stays bf16", "[inference]") {
  // DeepSeek-V3 at attention DP 8 × EP 8 on one B200 node, fp4 weights, the allgather dispatcher, a
  // static step of 8 tokens per GPU: the gathered tensor holds 8 ranks × 8 tokens × 7168 values. NVFP4
  // stores 4-bit values in blocks of 16 sharing one fp8 scale: 0.5 + 1/16 bytes per value; the
  // reduce-scatter of the experts' outputs 2 bytes per value.
  Config c = deepseek_decode(8, 8);
  c.cluster = *find_cluster_preset("dgx-b200");
  c.plan.ep_dispatcher = EpDispatcher::AllGather;
  c.plan.ep_dispatch_dtype = EpDispatchDtype::FP4;
  c.workload.weight_dtype = WeightDtype::FP4;
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).empty());
  const InferenceEstimate r = infer(c);
  const double values = 8.0 * 8 * 7168;
  int seen = 0;
  for (const CommOp& op : r.comm)
    if (op.axis == Axis::EP) {
      const bool dispatch = op.what.rfind("dispatch", 0) == 0;
      REQUIRE_THAT(op.message_bytes, WithinRel(values * (dispatch ? 0.5625 : 2.0), 1e-12));
      ++seen;
    }
  REQUIRE(seen == 2);
  c.plan.ep_dispatch_dtype = EpDispatchDtype::BF16;
  REQUIRE(infer(c).decode.ep_s > r.decode.ep_s);
  // Without fp4 GEMMs for the experts there is nothing to feed: fp8 weights, a GPU without an fp4
  // peak, or training.
  c.plan.ep_dispatch_dtype = EpDispatchDtype::FP4;
  c.workload.weight_dtype = WeightDtype::FP8;
  Errors e = validate(c.model, c.cluster, c.plan, c.workload);
  REQUIRE(e.size() == 1);
  REQUIRE(e[0].path == "/plan/ep_dispatch_dtype");
  c.workload.expert_weight_dtype = ExpertWeightDtype::FP4;  // fp8 weights beside NVFP4 experts
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).empty());
  c.cluster = *find_cluster_preset("hgx-h200");
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).size() == 1);
  c.cluster = *find_cluster_preset("dgx-b200");
  c.workload.mode = Mode::Train;
  e = validate(c.model, c.cluster, c.plan, c.workload);
  REQUIRE(std::count_if(e.begin(), e.end(), [](const Error& x) { return x.path == "/plan/ep_dispatch_dtype"; }) == 1);
}

TEST_CASE("speculative decoding: expected tokens per step (1 − a^(n+1))/(1 − a)", "[inference]") {
  // Leviathan et al. 2023, eq. 1: n = 3, a = 0.8 → (1 − 0.4096)/0.2 = 2.952.
  REQUIRE_THAT(spec_tokens_per_step(3, 0.8), WithinRel(2.952, 1e-12));
  REQUIRE(spec_tokens_per_step(3, 1.0) == 4.0);
  REQUIRE(spec_tokens_per_step(3, 0.0) == 1.0);
  REQUIRE(spec_tokens_per_step(0, 0.8) == 1.0);
  // A memory-bound batch of 1: a step verifying 4 tokens costs about one plain step plus three passes
  // of a one-layer draft head (1/80 of the layers and the output layer), and yields 2.952 tokens.
  Config c = serving("llama3-70b", 8, 1, 1, 1);
  c.workload.batching = Batching::Static;
  const InferenceEstimate plain = infer(c);
  c.workload.spec_draft_tokens = 3;
  const InferenceEstimate spec = infer(c);
  REQUIRE(spec.spec_tokens_per_step == spec_tokens_per_step(3, 0.8));
  REQUIRE(spec.decode.draft_s > 0);
  REQUIRE(spec.tpot_s < plain.tpot_s / 2.5);
  REQUIRE(spec.tpot_s > plain.tpot_s / 2.952);
}

TEST_CASE("the paged KV cache holds whole blocks and bounds concurrency: a result, not an error", "[inference]") {
  Config c = serving("llama3-70b", 8, 1, 1, 100000);
  c.workload.prompt_len = 1000;
  c.workload.output_len = 30;
  const InferenceEstimate r = infer(c);
  // 1,030 tokens in blocks of 32: 33 blocks = 1,056 tokens; K and V of one KV head (TP 8 of 8) of
  // 128 dims in bf16 over 80 layers: 2·128·2·80 = 40,960 bytes a token on each GPU.
  const double per_seq = 1056.0 * 40960;
  const StageMemory& st = r.memory.per_stage[0];
  const double pool = c.cluster.hbm_bytes - c.cluster.reserved_bytes - st.weights_bytes - st.activations_bytes;
  REQUIRE(r.kv_capacity_sequences == static_cast<long long>(std::floor(pool / per_seq)));
  REQUIRE(r.concurrency == double(r.kv_capacity_sequences));
  REQUIRE(r.concurrency_limit == ConcurrencyLimit::KvCache);
  REQUIRE(r.max_batch_that_fits == r.kv_capacity_sequences);
  REQUIRE(r.memory.fits);
  REQUIRE_THAT(r.kv_cache_used_bytes, WithinRel(r.concurrency * per_seq, 1e-12));
  REQUIRE(r.kv_cache_occupancy <= 1.0);
  REQUIRE(r.kv_cache_occupancy > 0.99);
  // TensorRT-LLM's free_gpu_memory_fraction: the pool is that share of what is left.
  c.workload.kv_cache_free_fraction = 0.9;
  const InferenceEstimate f = infer(c);
  REQUIRE(f.kv_capacity_sequences == static_cast<long long>(std::floor(0.9 * pool / per_seq)));
  REQUIRE(f.kv_capacity_sequences < r.kv_capacity_sequences);
  REQUIRE(f.kv_bound_stage == 0);
  REQUIRE_THAT(f.kv_pool_bytes, WithinRel(0.9 * pool, 1e-12));
}

TEST_CASE("a static batch larger than memory does not fit and names the largest that does", "[inference]") {
  Config c = serving("llama3-70b", 8, 1, 1, 100000);
  c.workload.batching = Batching::Static;
  const Result<Estimate> e = evaluate(c);
  REQUIRE(e.ok());
  const InferenceEstimate& r = test::serving(e)->serving;
  REQUIRE_FALSE(r.memory.fits);
  REQUIRE(r.max_batch_that_fits > 1000);
  REQUIRE(r.max_batch_that_fits < 100000);
}

TEST_CASE("in-flight steady state: flow balance, the token budget and Little's law", "[inference]") {
  SECTION("offline: every slot full, each step's tokens within the budget") {
    const InferenceEstimate r = infer(serving("llama3-70b", 8, 1, 1, 64));
    REQUIRE(r.concurrency == 64);
    // Per step r requests finish: r·(OSL − 1) decode sequences and r·ISL prompt tokens.
    const double per_step = r.prefill_tokens_per_step / 1024;
    REQUIRE_THAT(r.decode_seqs_per_step, WithinRel(per_step * 255, 1e-12));
    REQUIRE_THAT(r.requests_per_s, WithinRel(64 / r.e2e_latency_s, 1e-12));  // Little's law
    REQUIRE_THAT(r.requests_per_s, WithinRel(per_step / r.step_s, 0.02));    // ≈ r per mean step
    REQUIRE_THAT(r.output_tokens_per_s_total, WithinRel(r.requests_per_s * 256, 1e-12));
    REQUIRE(r.decode_seqs_per_step + r.prefill_tokens_per_step <= 8192);
    REQUIRE_FALSE(r.token_budget_bound);
  }
  SECTION("long prompts fill every step to max_num_tokens") {
    Config c = serving("llama3-70b", 8, 1, 1, 256);
    c.workload.prompt_len = 8192;
    c.workload.output_len = 128;
    const InferenceEstimate r = infer(c);
    REQUIRE(r.token_budget_bound);
    REQUIRE_THAT(r.decode_seqs_per_step + r.prefill_tokens_per_step, WithinRel(8192.0, 1e-12));
    // r = M/(ISL + OSL − 1) requests per step: 8192/8319.
    REQUIRE_THAT(r.prefill_tokens_per_step, WithinRel(8192.0 / 8319 * 8192, 1e-12));
    REQUIRE(r.prefill_steps > 1);
  }
  SECTION("a request rate below capacity: C = λ·E2E, fewer sequences in flight") {
    Config c = serving("llama3-70b", 8, 1, 2, 64);
    const InferenceEstimate full = infer(c);
    c.workload.request_rate_per_s = full.requests_per_s / 4;
    const InferenceEstimate r = infer(c);
    REQUIRE(r.concurrency_limit == ConcurrencyLimit::RequestRate);
    REQUIRE_FALSE(r.saturated);
    // (E2E in a slot: without the waits before admission, for a slot and for the step in progress)
    const double in_slot = r.e2e_latency_s - r.prefill.queue_s - r.prefill.step_wait_s;
    REQUIRE(r.prefill.step_wait_s > 0);
    REQUIRE_THAT(r.concurrency, WithinRel(c.workload.request_rate_per_s / 2 * in_slot, 1e-6));
    REQUIRE_THAT(r.requests_per_s, WithinRel(c.workload.request_rate_per_s, 1e-6));
    REQUIRE(r.tpot_s < full.tpot_s);
    c.workload.request_rate_per_s = full.requests_per_s * 2;
    const InferenceEstimate over = infer(c);
    REQUIRE(over.saturated);
    REQUIRE(over.concurrency == 64);
  }
  SECTION("an offline run of N requests proceeds in waves, each wave's prompts in a burst") {
    // 2 replicas × 64 in flight; 288 requests = 144 per replica = 2 full waves of 64 and one of 16.
    // ISL 1024, OSL 256 (255 decode steps after the prefill), budget M = 8192 tokens a step.
    Config c = serving("llama3-70b", 8, 1, 2, 64);
    const InferenceEstimate full = infer(c);
    c.workload.num_requests = 288;
    const InferenceEstimate r = infer(c);
    const Result<Resolved> res = resolve(c);
    REQUIRE(res.ok());
    const ServingSetup S(res.value);
    // One step of `decodes` sequences beside `prefill` prompt tokens (whole 1024-token prompts).
    auto cycle = [&](double decodes, double prefill) {
      StepLoad load;
      load.decode_seqs = decodes;
      load.decode_context = 1024 + 128;
      load.prefill_tokens = prefill;
      load.prefill_context = 512;
      load.prefill_seqs = prefill > 0 ? prefill / 1024 : 0;
      return pipeline_cycle_s(step_cost(S, load), 0);
    };
    // First wave: 64 prompts while those already prefilled decode (32 on average): 64·1024 / (8192 − 32)
    // steps, then the last one prefilled decodes 255 steps, all 64 decoding until the first finish.
    const double burst1 = 64.0 * 1024 / (8192 - 32);
    const double wave1 = burst1 * cycle(32, 8192 - 32) + (255 - burst1) * cycle(64, 0);
    // Later waves take the freed slots: k prompts beside the 64 decoding, 8192 − 64 tokens a step, then
    // 255 + 1 steps from the last admission (its own prefill step and its decodes) with k decoding.
    auto warm = [&](double k) {
      const double burst = k * 1024 / (8192 - 64);
      return burst * cycle(64, 8192 - 64) + (256 - burst) * cycle(k, 0);
    };
    REQUIRE(r.run_waves == 3);
    REQUIRE_THAT(r.run_s, WithinRel(wave1 + warm(64) + warm(16), 1e-9));
    REQUIRE_THAT(r.requests_per_s, WithinRel(288 / r.run_s, 1e-9));  // both replicas
    REQUIRE_THAT(r.output_tokens_per_s_total, WithinRel(288.0 * 256 / r.run_s, 1e-9));
    REQUIRE(r.output_tokens_per_s_total < full.output_tokens_per_s_total);  // bursts and the partly full last wave
    REQUIRE(r.tpot_s == full.tpot_s);                                       // latencies: the steady state's
    // Three waves need ⌈144 / 3⌉ = 48 in flight: the KV pool's sequences beyond those are its spare.
    // With 47 in flight the run takes four waves (47, 47, 47 and 3), each burst beside 47 decoding.
    auto run_at = [&](double k, double last, int waves) {
      const double b1 = k * 1024 / (8192 - k / 2);
      double s = b1 * cycle(k / 2, 8192 - k / 2) + (255 - b1) * cycle(k, 0);
      auto later = [&](double n) {
        const double b = n * 1024 / (8192 - k);
        return b * cycle(k, 8192 - k) + (256 - b) * cycle(n, 0);
      };
      for (int i = 2; i < waves; ++i) s += later(k);
      return s + later(last);
    };
    REQUIRE_THAT(run_at(64, 16, 3), WithinRel(r.run_s, 1e-9));
    REQUIRE(r.run_spare_sequences == double(r.kv_capacity_sequences) - 48);
    REQUIRE_THAT(r.run_one_more_wave_s, WithinRel(run_at(47, 3, 4), 1e-9));
    REQUIRE(r.run_one_more_wave_s > r.run_s);
    // Fewer requests than slots: they all run at once, one wave: its burst, the decodes, and the last
    // steps as the first prefilled finish (10 decoding on average).
    c.workload.num_requests = 40;
    const InferenceEstimate few = infer(c);
    REQUIRE(few.concurrency == 20);
    REQUIRE(few.concurrency_limit == ConcurrencyLimit::Requests);
    REQUIRE(few.run_waves == 1);
    REQUIRE(few.run_spare_sequences == double(few.kv_capacity_sequences) - 20);  // all 20 at once
    const double burst = 20.0 * 1024 / (8192 - 10);
    REQUIRE_THAT(few.run_s, WithinRel(burst * cycle(10, 8192 - 10) + (255 - burst) * cycle(20, 0) + burst * cycle(10, 0), 1e-9));
    // The decode steps are weight-read bound: prompts spread over them (the steady state) ride on those
    // reads, a burst of whole prompts does not. The burst is the slower.
    REQUIRE(few.run_s > few.e2e_latency_s);
    // Long prompts, short outputs: a burst of 20 prompts of 8192 tokens (20 full steps) outlasts a
    // sequence's 15 decode steps, every step is full, and the run is the steady state's waves again.
    c.workload.prompt_len = 8192;
    c.workload.output_len = 16;
    c.workload.num_requests = 40;
    const InferenceEstimate prefill_heavy = infer(c);
    REQUIRE(prefill_heavy.run_waves == 1);
    REQUIRE_THAT(prefill_heavy.run_s, WithinRel(prefill_heavy.e2e_latency_s, 1e-12));
  }
}

TEST_CASE("bad serving inputs are reported together with their JSON paths", "[inference]") {
  Config c = serving("llama3-70b", 8, 1, 1, 1);
  c.workload.output_len = 0;
  c.workload.max_num_tokens = 0;
  c.workload.kv_block_tokens = -1;
  c.workload.kv_cache_free_fraction = 0;
  c.workload.request_rate_per_s = -1;
  c.workload.spec_acceptance = 1.5;
  c.workload.spec_draft_tokens = 2;
  const Errors e = validate(c.model, c.cluster, c.plan, c.workload);
  std::set<std::string> paths;
  for (const Error& x : e) paths.insert(x.path);
  for (const char* p : {"/workload/output_len", "/workload/max_num_tokens", "/workload/kv_block_tokens",
                        "/workload/kv_cache_free_fraction", "/workload/request_rate_per_s", "/workload/spec_acceptance"})
    REQUIRE(paths.count(p) == 1);
  c = serving("llama3-70b", 8, 1, 1, 1);
  c.workload.spec_acceptance = 0.5;  // without drafts
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).at(0).path == "/workload/spec_acceptance");
  c = serving("llama3-70b", 8, 1, 1, 1);
  c.workload.batching = Batching::Static;
  c.workload.request_rate_per_s = 3;
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).at(0).path == "/workload/request_rate_per_s");
  c = serving("llama3-70b", 8, 1, 1, 1);
  c.workload.request_rate_per_s = 3;
  c.workload.num_requests = 100;  // an offline run has no arrival rate
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).at(0).path == "/workload/num_requests");
  c.workload.request_rate_per_s = 0;
  c.workload.num_requests = -1;
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).at(0).path == "/workload/num_requests");
}

namespace {
// A one-GPU serving setup whose memory and kernel floors cost nothing, so a step's time is its math.
Config math_only(const char* model) {
  Config c = test::config(model, "hgx-h200", 1, 1, 1, 4096, 1);
  c.workload.mode = Mode::Infer;
  c.workload.kv_dtype = KvDtype::BF16;
  c.cluster.hbm_bytes_per_s = 1e16;  // the largest the checks allow (10^7 GB/s): reads cost ~nothing
  c.cluster.efficiency.kernel_floor_s = 0;
  c.cluster.efficiency.serving_moe_layer_s = 0;
  c.cluster.efficiency.serving_rank_cv = 0;
  c.cluster.efficiency.host_seq_s = 0;
  c.cluster.efficiency.serving_seq_layer_s = 0;
  c.cluster.efficiency.serving_attention = 0.5;
  return c;
}
// What `seqs` decoding sequences at context ctx_b cost beyond the same at ctx_a, one step.
double extra_context_s(const Config& c, double seqs, double ctx_a, double ctx_b) {
  const Result<Resolved> r = resolve(c);
  REQUIRE(r.ok());
  const ServingSetup S(r.value);
  StepLoad a, b;
  a.decode_seqs = b.decode_seqs = seqs;
  a.decode_context = ctx_a, b.decode_context = ctx_b;
  return step_cost(S, b).walk_s() - step_cost(S, a).walk_s();
}
// One step prefilling 8,192 prompt tokens (4 prompts of 2,048, 1,024 keys each on average): its walk.
// For Qwen3-30B-A3B its expert GEMMs take 8,192 · top-8 = 65,536 token copies through 48 MoE layers of
// 3 · 2,048 · 768 weights per expert, 2 FLOPs per weight each:
constexpr double kQwen3PrefillExpertFlops = 2.0 * 65536 * 48 * 3 * 2048 * 768;
double prefill_8192_walk_s(const Config& c) {
  const Result<Resolved> r = resolve(c);
  REQUIRE(r.ok());
  StepLoad load;
  load.prefill_tokens = 8192;
  load.prefill_seqs = 4;
  load.prefill_context = 1024;
  return step_cost(ServingSetup(r.value), load).walk_s();
}
// What MXFP4 experts cost by `cost` (seconds of a config), beside fp8 weights: (a) on c's GPU, beyond
// fp8 experts; (b) saved against fp8 experts on a B200 with c's efficiencies, SM count and sustained
// share, reads ~free.
template <class Cost>
std::pair<double, double> mxfp4_experts_delta_s(const Config& c, Cost cost) {
  Config fp8 = c;
  fp8.workload.weight_dtype = WeightDtype::FP8;
  Config b = fp8;
  b.cluster = find_cluster_preset("dgx-b200").value();
  b.cluster.hbm_bytes_per_s = 1e16;
  b.cluster.sms = c.cluster.sms;
  b.cluster.gemm_sustained = c.cluster.gemm_sustained;
  b.cluster.efficiency = c.cluster.efficiency;
  Config mx = fp8, bmx = b;
  mx.workload.expert_weight_dtype = bmx.workload.expert_weight_dtype = ExpertWeightDtype::MXFP4;
  return {cost(mx) - cost(fp8), cost(b) - cost(bmx)};
}
}  // namespace

TEST_CASE("MLA decode attends over the absorbed latent: 2·(r_kv + d_rope) + 2·r_kv FLOPs per key per head", "[inference]") {
  Config c = math_only("deepseek-v3");
  c.model.mtp_layers = 0;  // served without its MTP module, as estimate_inference does
  // 1,000 more keys in each of the 61 layers, 128 heads × (2·(512 + 64) + 2·512) = 278,528 FLOPs per key
  // (DeepSeek-V2 §2.1.2, FlashMLA), at the bf16 peak (bf16 KV) × 0.5: 278,528 · 1,000 · 61 / (989e12 · 0.5).
  const double expected = 278528.0 * 1000 * 61 / (989e12 * 0.5);
  REQUIRE_THAT(expected, WithinRel(34.36e-6, 1e-3));
  REQUIRE_THAT(extra_context_s(c, 1, 1000, 2000), WithinRel(expected, 1e-6));
}

TEST_CASE("GQA decode attention: 2·(a/t)·(d_qk + d_v) FLOPs per key, at the fp8 peak with an fp8 KV cache", "[inference]") {
  Config c = math_only("llama3-70b");
  c.workload.kv_dtype = KvDtype::FP8;
  // 4 sequences × 2,000 more keys × 80 layers × 2·64·(128 + 128) FLOPs, at 1,979 TFLOP/s × 0.5.
  const double expected = 4.0 * 2000 * 80 * 2 * 64 * 256 / (1979e12 * 0.5);
  REQUIRE_THAT(extra_context_s(c, 4, 1000, 3000), WithinRel(expected, 1e-6));
}

TEST_CASE(
    "the host adds host_seq_s per sequence of the step, each sequence serving_seq_layer_s per layer, and kernel floors 9 per layer",
    "[inference]") {
  Config c = math_only("llama3-8b");
  c.cluster.efficiency.host_seq_s = 30e-6;
  const Result<Resolved> r = resolve(c);
  REQUIRE(r.ok());
  const ServingSetup S(r.value);
  StepLoad load;
  load.decode_seqs = 100;
  load.decode_context = 500;
  load.prefill_tokens = 2000;
  load.prefill_seqs = 2;
  REQUIRE_THAT(step_cost(S, load).host_s, WithinRel(102 * 30e-6, 1e-12));
  // Kernel floors: 32 dense layers × 9 kernels × 3 µs.
  Config f = c;
  f.cluster.efficiency.kernel_floor_s = 3e-6;
  const Result<Resolved> rf = resolve(f);
  const ServingSetup Sf(rf.value);
  REQUIRE_THAT(step_cost(Sf, load).walk_s() - step_cost(S, load).walk_s(), WithinRel(32 * 9 * 3e-6, 1e-6));
  // serving_seq_layer_s: each of the step's 102 sequences in each of Llama 3 8B's 32 layers, 0.5 µs:
  // 102 × 32 × 0.5 µs = 1.632 ms of GPU time, host unchanged.
  Config sl = c;
  sl.cluster.efficiency.serving_seq_layer_s = 0.5e-6;
  const Result<Resolved> rs = resolve(sl);
  REQUIRE(rs.ok());
  const StepCost with_seq_layer = step_cost(ServingSetup(rs.value), load);
  REQUIRE_THAT(with_seq_layer.walk_s() - step_cost(S, load).walk_s(), WithinRel(1.632e-3, 1e-9));
  REQUIRE(with_seq_layer.host_s == step_cost(S, load).host_s);
  // A dense model has no MoE layer to pay serving_moe_layer_s.
  Config dense = c;
  dense.cluster.efficiency.serving_moe_layer_s = 50e-6;
  const Result<Resolved> rd = resolve(dense);
  REQUIRE(step_cost(ServingSetup(rd.value), load).walk_s() == step_cost(S, load).walk_s());
}

TEST_CASE("each MoE layer of a step adds serving_moe_layer_s", "[inference]") {
  // Qwen3-30B-A3B: 48 layers, every one MoE: 48 × 50 µs = 2.4 ms more per step, whatever the load.
  Config c = math_only("qwen3-30b-a3b");
  const Result<Resolved> r = resolve(c);
  REQUIRE(r.ok());
  c.cluster.efficiency.serving_moe_layer_s = 50e-6;
  const Result<Resolved> rm = resolve(c);
  REQUIRE(rm.ok());
  StepLoad load;
  load.decode_seqs = 64;
  load.decode_context = 1000;
  REQUIRE_THAT(step_cost(ServingSetup(rm.value), load).walk_s() - step_cost(ServingSetup(r.value), load).walk_s(),
               WithinRel(48 * 50e-6, 1e-9));
}

TEST_CASE("the routed experts' grouped GEMM runs at serving_expert_gemm of the dense projections' rate", "[inference]") {
  // Qwen3-30B-A3B (48 MoE layers, 128 experts of 3 · 2,048 · 768 weights, top-8) on one H200, bf16, one
  // prefill step of 8,192 tokens: 65,536 token copies, 512 for each expert on average; the routed counts
  // spread, so each expert's last tile of 16 rows is half full on average: 512 + 7.5 rows padded
  // (core/ops.h routed_gemm_efficiency), 128 · 32.5 · 6 tiles of 16 × 128 over 132 SMs, so the
  // grouped GEMM runs at 512/519.5 of the rate 989e12 · gemm_sustained 0.8 · serving_gemm 0.6 ·
  // serving_expert_gemm. Its FLOPs: 2 · 65,536 · 48 · 3 · 2,048 · 768 = 29.687 TFLOP: 63.4 ms at
  // serving_expert_gemm 1, twice at 0.5.
  Config c = math_only("qwen3-30b-a3b");
  c.cluster.gemm_sustained = 0.8;
  c.cluster.efficiency.serving_gemm = 0.6;
  const auto walk = prefill_8192_walk_s;
  const double flops = kQwen3PrefillExpertFlops;
  REQUIRE_THAT(flops, WithinRel(29.687e12, 1e-4));
  const double at_one = flops / (989e12 * 0.8 * 0.6 * 512.0 / 519.5);
  Config one = c, half = c;
  one.cluster.efficiency.serving_expert_gemm = 1.0;
  half.cluster.efficiency.serving_expert_gemm = 0.5;
  REQUIRE_THAT(walk(half) - walk(one), WithinRel(at_one, 1e-6));
  // A dense model has no grouped GEMM: the factor changes nothing.
  Config dense = math_only("llama3-8b"), dense_half = dense;
  dense_half.cluster.efficiency.serving_expert_gemm = 0.5;
  REQUIRE(walk(dense_half) == walk(dense));
}

TEST_CASE("the grouped GEMM reads its experts' weights at serving_expert_stream of hbm_stream", "[inference]") {
  // Qwen3-30B-A3B on one H200 (4.8 TB/s, hbm_stream 0.5), bf16, 10 decoding sequences: 80 routings touch
  // 128 · (1 − (127/128)^80) = 59.65 experts per layer, each 3 · 2,048 · 768 weights of 2 bytes, in 48
  // MoE layers: 27.0 GB read at 2.4 TB/s with serving_expert_stream 1, twice as long at 0.5.
  Config c = math_only("qwen3-30b-a3b");
  c.cluster.hbm_bytes_per_s = 4.8e12;
  c.cluster.efficiency.hbm_stream = 0.5;
  Config one = c, half = c;
  one.cluster.efficiency.serving_expert_stream = 1.0;
  half.cluster.efficiency.serving_expert_stream = 0.5;
  StepLoad load;
  load.decode_seqs = 10;
  load.decode_context = 100;
  const auto weights_s = [&](const Config& k) {
    const Result<Resolved> r = resolve(k);
    REQUIRE(r.ok());
    return step_cost(ServingSetup(r.value), load).weights_s;
  };
  const double touched = 128.0 * (1.0 - std::pow(127.0 / 128.0, 80.0));
  REQUIRE_THAT(touched, WithinRel(59.65, 1e-3));
  REQUIRE_THAT(48.0 * touched * 3.0 * 2048 * 768 * 2.0, WithinRel(27.02e9, 1e-3));
  const double expert_bytes = 48.0 * touched * 3.0 * 2048 * 768 * 2.0;
  REQUIRE_THAT(weights_s(half) - weights_s(one), WithinRel(expert_bytes / (4.8e12 * 0.5), 1e-9));
  // A dense model reads no routed experts: the factor changes nothing.
  Config dense = math_only("llama3-8b"), dense_half = dense;
  dense.cluster.hbm_bytes_per_s = dense_half.cluster.hbm_bytes_per_s = 4.8e12;
  dense_half.cluster.efficiency.serving_expert_stream = 0.5;
  REQUIRE(weights_s(dense_half) == weights_s(dense));
}

TEST_CASE("the routed experts' GEMM runs at the peak of their own dtype: mxfp4 experts dequantised on Hopper, fp4 on Blackwell",
          "[inference]") {
  // The step of the test above (29.687 TFLOP of expert GEMMs, reads free), fp8 weights on an H200:
  // experts stored as the weights (fp8) run at the fp8 peak, 1,979 TFLOP/s; MXFP4 experts, which
  // Hopper's tensor cores cannot run, are dequantised and run at the bf16 peak, 989 (precision.h).
  // Each at 0.8 sustained · serving_gemm 0.6 · serving_expert_gemm 1 · the padded tiles' 512/519.5.
  Config c = math_only("qwen3-30b-a3b");
  c.cluster.gemm_sustained = 0.8;
  c.cluster.efficiency.serving_gemm = 0.6;
  c.cluster.efficiency.serving_expert_gemm = 1.0;
  const double flops = kQwen3PrefillExpertFlops;
  const auto [h200_extra_s, b200_saved_s] = mxfp4_experts_delta_s(c, prefill_8192_walk_s);
  const double rate = 0.48 * 512.0 / 519.5;
  REQUIRE_THAT(h200_extra_s, WithinRel(flops / (989e12 * rate) - flops / (1979e12 * rate), 1e-6));
  // On a B200 (fp4 peak 9,000 TFLOP/s) the same MXFP4 experts run at the fp4 peak: against fp8 experts
  // (4,500) they save half the fp8 time.
  REQUIRE_THAT(b200_saved_s, WithinRel(flops / (4500e12 * rate) - flops / (9000e12 * rate), 1e-6));
}

TEST_CASE("a static batch's prefill, costed op by op, runs the routed experts at their own dtype's peak too", "[inference]") {
  // 4 prompts of 2,048 tokens of Qwen3-30B-A3B: the expert FLOPs of the step above (8,192 tokens, top-8),
  // fp8 weights on an H200 with tile and thin-GEMM losses off (no SM count; reads cost ~nothing, so
  // the thin-GEMM term x/(x + 0.04) is 1 within 1e-4) and both GEMM efficiencies 0.5 of the datasheet
  // peak: MXFP4 experts dequantised to bf16 (989 TFLOP/s) against fp8 experts (1,979).
  Config c = math_only("qwen3-30b-a3b");
  c.workload.batching = Batching::Static;
  c.workload.batch = 4;
  c.workload.prompt_len = 2048;
  c.workload.output_len = 16;
  c.cluster.sms = 0;
  c.cluster.gemm_sustained = 1.0;
  c.cluster.efficiency.gemm = c.cluster.efficiency.gemm_fp8 = 0.5;
  const auto prefill_compute_s = [](const Config& x) {
    const Result<Resolved> r = resolve(x);
    REQUIRE(r.ok());
    return estimate_inference(r.value).prefill.compute_s;
  };
  const double flops = kQwen3PrefillExpertFlops;
  const auto [h200_extra_s, b200_saved_s] = mxfp4_experts_delta_s(c, prefill_compute_s);
  REQUIRE_THAT(h200_extra_s, WithinRel(flops / (989e12 * 0.5) - flops / (1979e12 * 0.5), 1e-3));
  // On a B200 they run at the fp4 peak (9,000 TFLOP/s) and save half the fp8 experts' time (4,500).
  REQUIRE_THAT(b200_saved_s, WithinRel(flops / (4500e12 * 0.5) - flops / (9000e12 * 0.5), 1e-3));
}

TEST_CASE("expected_max_normal: Blom's approximation of the mean of the largest of n standard normals", "[inference]") {
  REQUIRE(expected_max_normal(1) == 0.0);
  REQUIRE(expected_max_normal(0) == 0.0);
  // Tippett 1925's exact values (n = 2: 1/√π), within Blom's documented 0.025.
  REQUIRE_THAT(expected_max_normal(2), WithinAbs(1.0 / std::sqrt(std::numbers::pi), 0.026));
  REQUIRE_THAT(expected_max_normal(4), WithinAbs(1.02938, 0.021));
  REQUIRE_THAT(expected_max_normal(8), WithinAbs(1.42360, 0.011));
  REQUIRE_THAT(expected_max_normal(16), WithinAbs(1.76599, 0.011));
  // Blom's formula itself, Φ⁻¹((n − 0.375)/(n + 0.25)), by hand: n = 8, p = 7.625/8.25 = 0.924242…,
  // Φ⁻¹(p) = 1.4342 (normal tables), to A&S 26.2.23's 4.5e-4.
  REQUIRE_THAT(expected_max_normal(8), WithinAbs(1.4342, 5e-4));
}

TEST_CASE("an EP group waits for its slowest rank: cv·z(ep) of the MoE layers' GPU time, nothing without EP", "[inference]") {
  // Qwen3-30B-A3B on 8 H200 at EP 8 (attention DP 8), every one of its 48 layers MoE: with a spread
  // cv = 0.1 the step grows by 0.1 · 1.4342 (E[max of 8 standard normals], Blom) × its GPU time (the
  // step less its TP and EP exchanges and the host's time).
  Config c = test::config("qwen3-30b-a3b", "hgx-h200", 1, 1, 1, 4096, 1);
  c.plan.ep = 8;
  c.workload.mode = Mode::Infer;
  c.cluster.efficiency.serving_rank_cv = 0;
  Config w = c;
  w.cluster.efficiency.serving_rank_cv = 0.1;
  const Result<Resolved> r0 = resolve(c), r1 = resolve(w);
  REQUIRE(r0.ok());
  REQUIRE(r1.ok());
  StepLoad load;
  load.decode_seqs = 64;
  load.decode_context = 1500;
  load.prefill_tokens = 512;
  load.prefill_context = 256;
  load.prefill_seqs = 1;
  const StepCost a = step_cost(ServingSetup(r0.value), load), b = step_cost(ServingSetup(r1.value), load);
  const double gpu_s = a.walk_s() - a.tp_s - a.ep_s - a.host_s;
  REQUIRE(gpu_s > 0);
  REQUIRE_THAT(b.walk_s() - a.walk_s(), WithinRel(0.1 * 1.4342 * gpu_s, 5e-4));
  REQUIRE(a.ep_wait_s == 0);
  REQUIRE_THAT(b.ep_wait_s, WithinRel(b.walk_s() - a.walk_s(), 1e-9));  // its own part of the step
  // One GPU, no EP group: no wait.
  Config one = w;
  one.plan.ep = 1;
  one.cluster.gpus = 1;
  Config one0 = one;
  one0.cluster.efficiency.serving_rank_cv = 0;
  const Result<Resolved> q1 = resolve(one), q0 = resolve(one0);
  REQUIRE(q1.ok());
  REQUIRE(q0.ok());
  REQUIRE(step_cost(ServingSetup(q1.value), load).walk_s() == step_cost(ServingSetup(q0.value), load).walk_s());
}

TEST_CASE("the memory-bound ops between the GEMMs move their activations once per token (and per routed copy)", "[inference]") {
  // Llama 3 8B on one H200, 10 decoding sequences: per token 32 layers × (two add-RMSNorms, 8·h =
  // 32,768 values, and SwiGLU's 3·f = 43,008) = 2,424,832 bf16 values, read or written once; and each
  // sequence's 128,256 logits written in 16-bit, cast to fp32 and read by the sampler, 12 bytes each.
  Config c = math_only("llama3-8b");
  c.cluster.hbm_bytes_per_s = 4.8e12;
  c.cluster.efficiency.hbm_stream = 0.5;
  const Result<Resolved> r = resolve(c);
  REQUIRE(r.ok());
  StepLoad load;
  load.decode_seqs = 10;
  load.decode_context = 100;
  const double dense = 2.0 * 10 * 32 * (8.0 * 4096 + 3.0 * 14336) + 12.0 * 10 * 128256;
  REQUIRE_THAT(dense, WithinRel(48.497e6 + 15.391e6, 1e-4));
  REQUIRE_THAT(step_cost(ServingSetup(r.value), load).elementwise_s, WithinRel(dense / (4.8e12 * 0.5), 1e-12));
  // Qwen3-30B-A3B on one GPU: 48 MoE layers of 128 experts, top-8, f_e 768, no dense MLP. Per token
  // the norms (8·2,048 values per layer); per routed copy (10 tokens × 8) the expand and finalize
  // (4·h = 8,192) and the activation (3·768 = 2,304); the 10 sequences' 151,936 logits, 12 bytes each.
  Config q = math_only("qwen3-30b-a3b");
  q.cluster.hbm_bytes_per_s = 4.8e12;
  q.cluster.efficiency.hbm_stream = 0.5;
  const Result<Resolved> rq = resolve(q);
  REQUIRE(rq.ok());
  const double moe = 2.0 * (10.0 * 48 * 8 * 2048 + 48.0 * 80 * (4.0 * 2048 + 3.0 * 768)) + 12.0 * 10 * 151936;
  REQUIRE_THAT(moe, WithinRel(96.338e6 + 18.232e6, 1e-4));
  REQUIRE_THAT(step_cost(ServingSetup(rq.value), load).elementwise_s, WithinRel(moe / (4.8e12 * 0.5), 1e-12));
}

TEST_CASE("the output layer runs only on the tokens that sample: each decoding token and each prompt's last", "[inference]") {
  // Llama 3 8B on one H200, reads ~free, two steps of T = 8,192 tokens each (the same GEMM shapes):
  // 8,192 decoding sequences sample 8,192 tokens; 8,192 prompt tokens of prompts of 2,048 complete 4
  // prompts, which sample 4. Growing the vocabulary by ΔV adds 2·n·ΔV·h FLOPs to the output layer
  // and 12·n·ΔV bytes to the sampling, both in proportion to the n tokens that sample: the prefill
  // step grows by 4/8,192 of what the decode step grows (training's output layer: 8,192/8,192).
  Config c = math_only("llama3-8b");
  c.workload.prompt_len = 2048;
  Config wide = c;
  wide.model.vocab += 64000;
  const Result<Resolved> r = resolve(c), rw = resolve(wide);
  REQUIRE(r.ok());
  REQUIRE(rw.ok());
  StepLoad decode, prefill;
  decode.decode_seqs = 8192;
  decode.decode_context = 2048;
  prefill.prefill_tokens = 8192;
  prefill.prefill_seqs = 4;
  prefill.prefill_context = 1024;
  const auto grows = [&](const StepLoad& load) {
    return step_cost(ServingSetup(rw.value), load).walk_s() - step_cost(ServingSetup(r.value), load).walk_s();
  };
  REQUIRE(grows(decode) > 0);
  REQUIRE_THAT(grows(prefill), WithinRel(grows(decode) * 4.0 / 8192.0, 1e-6));
  // The static batch's prefill (op by op): the output layer's GEMM has one row per sequence.
  Config s = c;
  s.workload.seq_len = 2048;
  s.plan.micro_batch = 4;
  const Result<Resolved> rs = resolve(s);
  REQUIRE(rs.ok());
  const std::vector<LayerOp> out = output_ops(rs.value);
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].m == 4);
  REQUIRE_THAT(out[0].flops, WithinRel(2.0 * 4 * 128256 * 4096, 1e-12));
  REQUIRE_THAT(out[1].bytes, WithinRel(12.0 * 4 * 128256, 1e-12));
}

TEST_CASE("chunked layers read the mean of their query's place in its chunk over the decode's contexts", "[inference]") {
  // Llama 4 Scout: 48 layers, every 4th global, the other 36 in chunks of 8,192. Decode from a prompt
  // of 8,192 to 9,216 tokens: a chunked layer's query sits 1 to 1,024 tokens into its second chunk,
  // 512 on average, not half a chunk; the 12 global layers read the mean context, 8,704.
  const ModelSpec m = *find_model_preset("llama4-scout-17b-16e");
  REQUIRE(m.layers == 48);
  StageInfo st;
  st.chunks = {{0, 47}};
  REQUIRE_THAT(stage_attended_keys(m, st, 8704, Attended::Mean, 8192), WithinRel(12.0 * 8704 + 36.0 * 512, 1e-12));
  // From 1,024 to 9,216: 7,168 contexts inside the first chunk (mean 4,608) and 1,024 in the second
  // (mean 512): (7,168·4,608 + 1,024·512)/8,192 = 4,096 in each chunked layer.
  REQUIRE_THAT(stage_attended_keys(m, st, 5120, Attended::Mean, 1024), WithinRel(12.0 * 5120 + 36.0 * 4096, 1e-12));
  // A prompt's tokens (from 0) within one chunk attend to half the prompt in every layer.
  REQUIRE_THAT(stage_attended_keys(m, st, 2048, Attended::Mean, 0), WithinRel(48.0 * 2048, 1e-12));
}

TEST_CASE("a request waits for a slot as Erlang C says", "[inference]") {
  // Every count served as the mean (full_e2e_s = C/λ): Erlang C's M/G/c. slot_queue(λ, slots, C, E2E).
  // M/D/1 (Pollaczek–Khinchine): W = ρ·S / (2(1 − ρ)); at ρ = 0.5 and S = 1 s, 0.5 s.
  REQUIRE_THAT(slot_queue(0.5, 1, 0.5, 1.0).wait_s, WithinRel(0.5, 1e-12));
  REQUIRE_THAT(slot_queue(0.5, 1, 0.5, 1.0).wait_probability, WithinRel(0.5, 1e-12));
  // M/M/2 at a = 1 Erlang: P_wait = 2ρ²/(1 + ρ) = 1/3 with ρ = 1/2, W = P·S/(c − a) = S/3; M/D/2 half.
  REQUIRE_THAT(slot_queue(1.0 / 6.0, 2, 1.0, 6.0, 1.0).wait_s, WithinRel(2.0, 1e-12));
  REQUIRE_THAT(slot_queue(1.0 / 6.0, 2, 1.0, 6.0).wait_s, WithinRel(1.0, 1e-12));
  REQUIRE_THAT(slot_queue(1.0 / 6.0, 2, 1.0, 6.0).wait_probability, WithinRel(1.0 / 3.0, 1e-12));
  // Erlang C for 10 servers at 8 Erlangs: 0.4092 (queueing tables); M/M/10: 0.4092·S/2.
  REQUIRE_THAT(slot_queue(8.0, 10, 8.0, 1.0, 1.0).wait_s, WithinRel(0.4092 / 2.0, 2e-4));
  REQUIRE(slot_queue(8.0, 64, 8.0, 1.0).wait_s < 1e-12);  // a slot is nearly always free
  REQUIRE(std::isinf(slot_queue(16.0, 16, 16.0, 1.0).wait_s));
  REQUIRE(slot_queue(16.0, 16, 16.0, 1.0).wait_probability == 1.0);
  REQUIRE(slot_queue(0.0, 16, 0.0, 1.0).wait_s == 0.0);
}

TEST_CASE("a request waits for a slot longer when each one in flight slows the others", "[inference]") {
  // Two slots, E2E(n) = 1 + n s, 0.5 requests/s: Little's law C = 0.5·(1 + C), C = 1 (E2E 2 s); with
  // both slots taken E2E is 3 s. The chain: p0 = 1, p1 = 0.5·2/1 = 1, p2 = 1·0.5·3/2 = 0.75, then
  // geometric at r = 0.5·3/2 = 0.75: Σ = 1 + 1 + 0.75/0.25 = 5, P_wait = 3/5; Lq = 0.75·0.75/0.25²/5 =
  // 1.8, W = Lq/λ = 3.6 s for exponential service, 1.8 s deterministic. Erlang C at the mean count (2 s
  // for every count): P_wait 1/3, W 2/3 s and 1/3 s.
  const SlotQueue q = slot_queue(0.5, 2, 1.0, 3.0);
  REQUIRE_THAT(q.wait_probability, WithinRel(0.6, 1e-12));
  REQUIRE_THAT(q.wait_s, WithinRel(1.8, 1e-12));
  REQUIRE_THAT(slot_queue(0.5, 2, 1.0, 3.0, 1.0).wait_s, WithinRel(3.6, 1e-12));
  REQUIRE_THAT(slot_queue(0.5, 2, 1.0, 2.0).wait_s, WithinRel(1.0 / 3.0, 1e-12));
  // Past what the full slots serve (λ·E2E_full ≥ slots) the queue grows without bound.
  REQUIRE(std::isinf(slot_queue(0.5, 2, 1.0, 4.0).wait_s));
  // Thousands of slots: no overflow (the chain is rescaled as it grows).
  const SlotQueue big = slot_queue(100.0, 4096, 3900.0, 40.0);
  REQUIRE(std::isfinite(big.wait_s));
  REQUIRE(big.wait_probability > 0.0);
  REQUIRE(big.wait_probability < 1.0);
}

TEST_CASE("near its slots a replica's requests queue before admission", "[inference]") {
  // Llama 3 70B on 8 H100 (TP 8), at most 16 sequences in flight, 4 requests/s: Little's law puts
  // about 12.7 of the 16 slots in use, and a request finds all 16 taken often enough to wait for one.
  Config c = serving("llama3-70b", 8, 1, 1, 16);
  const double full_s = infer(c).e2e_latency_s;  // all 16 slots taken: the service a queue meets
  c.workload.request_rate_per_s = 4.0;
  const InferenceEstimate r = infer(c);
  REQUIRE(r.concurrency_limit == ConcurrencyLimit::RequestRate);
  const double a = r.concurrency, service = r.e2e_latency_s - r.prefill.queue_s - r.prefill.step_wait_s;
  REQUIRE_THAT(service, WithinRel(a / 4.0, 1e-6));  // Little's law
  REQUIRE(full_s > service);
  // The count's birth–death chain from its sums: E2E(n) = service + (n − a)·(full − service)/(16 − a),
  // p(n) = Π_{k ≤ n} 4·E2E(k)/k up to 16, then geometric at ρ = 4·full/16; P_wait = p16/(1 − ρ)/Σ,
  // Lq = p16·ρ/(1 − ρ)²/Σ, the wait Lq/λ halved (one length: deterministic service).
  double term = 1.0, sum = 0.0;
  for (int k = 1; k <= 16; ++k) sum += term, term *= 4.0 * (service + (k - a) * (full_s - service) / (16.0 - a)) / k;
  const double rho = 4.0 * full_s / 16.0, z = sum + term / (1.0 - rho);
  const double p_wait = term / (1.0 - rho) / z, lq = term * rho / ((1.0 - rho) * (1.0 - rho)) / z;
  REQUIRE(p_wait > 0.1);
  REQUIRE_THAT(r.prefill.queue_s, WithinRel(lq / 4.0 / 2.0, 1e-6));
  // Erlang C at the mean count's service for every count waits less: the steps slow as the slots fill.
  REQUIRE(r.prefill.queue_s > 1.1 * slot_queue(4.0, 16, a, service).wait_s);  // 1.41 s against 1.18 s
  REQUIRE_THAT(r.ttft_s, WithinRel(r.prefill.total_s(), 1e-12));
  REQUIRE_THAT(r.requests_per_s, WithinRel(4.0, 1e-6));  // the wait delays requests, it does not drop them
  // Offline (every request queued at the start) has no such wait.
  c.workload.request_rate_per_s = 0;
  REQUIRE(infer(c).prefill.queue_s == 0.0);
}

TEST_CASE("the steady state is continuous in the count in flight", "[inference]") {
  // Llama 3 70B TP 8, at most 4 sequences of 2048/2 (each one prompt step and one decode step). A
  // request rate puts a fractional count in flight; its prompts per step are Binomial(c, π), whose
  // terms run to ⌈c⌉. Cut at ⌊c⌋, end to end at 3.99 in flight had been 2.5% above that at 4 (0.4427 s
  // against 0.4317 s): more in flight, less time each, and Little's law's root then sat at the 4 slots,
  // serving 9.27 requests/s of the 9 that arrive.
  Config c = serving("llama3-70b", 8, 1, 1, 4);
  c.workload.prompt_len = 2048, c.workload.output_len = 2;
  const Result<Resolved> r = resolve(c);
  REQUIRE(r.ok());
  const ServingSetup S(r.value);
  double last = 0;
  for (const double C : {3.0, 3.5, 3.9, 3.99, 3.999, 4.0}) {
    const double e2e = inflight_state(S, C).e2e_s;
    INFO(C << " in flight: end to end " << e2e << " s");
    REQUIRE(e2e > last);  // more in flight, longer each
    last = e2e;
  }
  REQUIRE_THAT(inflight_state(S, 3.999).e2e_s, WithinRel(inflight_state(S, 4.0).e2e_s, 1e-3));
  c.workload.request_rate_per_s = 9.0;
  const InferenceEstimate at9 = infer(c);
  REQUIRE_FALSE(at9.saturated);
  REQUIRE(at9.concurrency < 3.9);
  REQUIRE_THAT(at9.requests_per_s, WithinRel(9.0, 1e-6));
  REQUIRE(std::isfinite(at9.prefill.queue_s));
  REQUIRE(at9.prefill.queue_s > 0);
}

TEST_CASE("a GPU cut from another serves no faster than it: the H800 takes the H100's serving efficiencies", "[inference]") {
  // The H800 is the H100 SXM's GH100 die with the same HBM3 and half the NVLink (core/presets.cpp
  // kH100Serving): every serving efficiency the same, so a plan whose only difference is the link runs
  // no faster on it, and a TP 8 decode, whose all-reduces cross that link, strictly slower.
  const Cluster h100 = *find_cluster_preset("dgx-h100"), h800 = *find_cluster_preset("hgx-h800");
  for (double Efficiencies::*key :
       {&Efficiencies::hbm_stream, &Efficiencies::serving_gemm, &Efficiencies::serving_expert_gemm,
        &Efficiencies::serving_expert_stream, &Efficiencies::serving_attention, &Efficiencies::host_seq_s,
        &Efficiencies::serving_seq_layer_s, &Efficiencies::serving_moe_layer_s, &Efficiencies::serving_rank_cv})
    REQUIRE(h800.efficiency.*key == h100.efficiency.*key);
  Config c = serving("llama3-70b", 8, 1, 1, 64);
  const double on_h100 = infer(c).tpot_s;
  c.cluster = h800;
  REQUIRE(infer(c).tpot_s > on_h100);
  // A GPU with no serving case of its own takes the fit pooled over the five families, not the priors.
  const Efficiencies priors;
  for (const char* name : {"dgx-a100", "grand-teton-h100"})
    REQUIRE(find_cluster_preset(name)->efficiency.serving_expert_gemm != priors.serving_expert_gemm);
  // Every cluster preset says what its efficiencies were fitted to, training runs then serving cases, and
  // speaks for a cluster only while its serving efficiencies are the preset's.
  for (const ClusterPreset& p : cluster_presets()) REQUIRE(p.fitted_to.find(" / ") != std::string::npos);
  REQUIRE(serving_preset_as_given(h800) != nullptr);
  REQUIRE(serving_preset_as_given(h800)->spec.name == "hgx-h800");
  Cluster changed = h800;
  changed.efficiency.serving_gemm *= 0.9;
  REQUIRE(serving_preset_as_given(changed) == nullptr);
  changed = h800;
  changed.efficiency.nvlink *= 0.9;  // not a serving efficiency
  REQUIRE(serving_preset_as_given(changed) != nullptr);
}

TEST_CASE("a step carries whole prompts or none: TPOT and TTFT over the binomial of prompts a step holds, by hand", "[inference]") {
  // Llama 3 70B, TP 8 on 8 H100, 64 in flight, 1000/1000: a request spends 1 step prefilling (its
  // prompt whole, 1000 ≤ the room of 8192 − 64) and 999 decoding, so r = 64/1000 requests a step and
  // each of the 64 sequences is a prompt with probability π = r/64 = 1/1000, independently: k ~
  // Binomial(64, π) prompts a step, 1000·k tokens beside 64 − k decodes. The mean step (64·π = 0.064
  // prompts, 64 tokens, every step) hid the prompts' math under the weight reads.
  Config c = serving("llama3-70b", 8, 1, 1, 64);
  c.workload.prompt_len = 1000;
  c.workload.output_len = 1000;
  const InferenceEstimate r = infer(c);
  const Result<Resolved> res = resolve(c);
  REQUIRE(res.ok());
  const ServingSetup S(res.value);
  REQUIRE(r.concurrency == 64);
  REQUIRE_THAT(r.prefill_tokens_per_step, WithinRel(64.0, 1e-12));
  auto step_s = [&](double k) {  // k prompts (the mean step: 0.064)
    StepLoad l;
    l.decode_seqs = 64 - k;
    l.decode_context = 1000 + 500;
    l.prefill_tokens = 1000.0 * k;
    l.prefill_context = 500;
    l.prefill_seqs = k;
    l.prompt_len = 1000;
    return pipeline_cycle_s(step_cost(S, l), 0);
  };
  // TPOT: the steps as a decoding sequence meets them, Σ P(k)·(64 − k)·step(k) / Σ P(k)·(64 − k); a
  // prompt's first token: its step, with the others' k ~ Binomial(64, π) beside it (cutlab: every k
  // with P > 1e-9, 0 to 5; here all 64).
  double decoded = 0, tpot = 0, ttft = 0, p = std::pow(1 - 0.001, 64);
  for (int k = 0; k < 64; ++k) {
    decoded += p * (64 - k), tpot += p * (64 - k) * step_s(k), ttft += p * step_s(k + 1.0);
    p *= (64.0 - k) / (k + 1) * 0.001 / (1 - 0.001);
  }
  REQUIRE_THAT(r.tpot_s, WithinRel(tpot / decoded, 1e-6));
  REQUIRE_THAT(r.ttft_s, WithinRel(ttft, 1e-6));
  REQUIRE(r.tpot_s > 1.02 * step_s(0.064));
  REQUIRE_THAT(r.e2e_latency_s, WithinRel(r.ttft_s + 999 * r.tpot_s, 1e-12));
}

TEST_CASE("a stream of mixed lengths: each class's flow, contexts and latencies, by hand", "[inference]") {
  // Llama 3 70B, TP 8 on 8 H100, 64 in flight; 70% of the requests 1000/200, 30% 8000/500 (shares
  // given as 7 and 3). Budget M = 8192: room for prompts 8192 − 64 = 8128 a step, so each prompt is
  // one chunk (n_pf = 1); decode steps 199 and 499. Per request: D = 0.7·199 + 0.3·499 = 289 decode
  // steps, F = 1 prefill step, ISL = 0.7·1000 + 0.3·8000 = 3100 prompt tokens, OSL = 290.
  Config c = serving("llama3-70b", 8, 1, 1, 64);
  c.workload.length_mix = {{1000, 200, 7.0}, {8000, 500, 3.0}};
  const InferenceEstimate r = infer(c);
  const Result<Resolved> res = resolve(c);
  REQUIRE(res.ok());
  const ServingSetup S(res.value);
  REQUIRE(r.concurrency == 64);
  REQUIRE_FALSE(r.token_budget_bound);
  const double per_step = 64.0 / 290;  // r = c / (F + D)
  REQUIRE_THAT(r.decode_seqs_per_step, WithinRel(per_step * 289, 1e-12));
  REQUIRE_THAT(r.prefill_tokens_per_step, WithinRel(per_step * 3100, 1e-12));
  // Llama's layers all attend globally, so its keys are linear in the context: a step's decodes cost
  // what as many of the mean context cost. Decoding sequences: 139.3 of 289 at 1000 + 100, 149.7 at
  // 8000 + 250.
  // A step carries whole prompts: each of the 64 sequences is the prompt of a short request with
  // probability π_a = r·0.7/64 (its one prefill step of its 290), of a long one with π_b = r·0.3/64,
  // else decoding; j short and l long prompts: a multinomial. Their tokens, 1000·j + 8000·l, at most the
  // room (the rest waits for a later step), beside 64 − j − l decodes. TPOT: the steps as a decoding
  // sequence meets them (weighted by the decodes each runs); a prompt's first token: its own step,
  // its prompt beside the others'. Here the tokens past the room are dropped (two long prompts in one
  // step, 0.2% of the steps; a long and a short, 1%), where cutlab moves them to full steps, as the
  // engine carries them to the next; and each step has its own prompts' count and contexts, where
  // cutlab takes them in proportion to the step's tokens; cutlab prices the distribution on a lattice
  // of 1/64 of the room and at most 12 steps (a prompt's own, 6), linear between. TPOT within 2%; a
  // prompt's own step, which meets those overflows most, within 5%.
  // (tests/test_serving_simulation.cpp checks it against the engine's schedule step by step.)
  const double pa = per_step * 0.7 / 64, pb = per_step * 0.3 / 64, room = 8192 - 64 + per_step;
  auto step_s = [&](int j, int l) {
    StepLoad s;
    s.decode_seqs = 64 - j - l;
    s.decode_context = (139.3 * 1100 + 149.7 * 8250) / 289;
    const double tokens = 1000.0 * j + 8000.0 * l;
    if (tokens > 0) {
      s.prefill_tokens = std::min(tokens, room);
      s.prefill_context = (1000.0 * j * 500 + 8000.0 * l * 4000) / tokens;
      s.prefill_seqs = j + l;
      s.prompt_len = tokens / (j + l);
    }
    return pipeline_cycle_s(step_cost(S, s), 0);
  };
  double decoded = 0, tpot = 0, own_a = 0, own_b = 0;
  for (int j = 0; j <= 12; ++j)
    for (int l = 0; j + l <= 12; ++l) {
      const double p = std::tgamma(65.0) / (std::tgamma(j + 1.0) * std::tgamma(l + 1.0) * std::tgamma(65.0 - j - l)) *
                       std::pow(pa, j) * std::pow(pb, l) * std::pow(1 - pa - pb, 64 - j - l);
      decoded += p * (64 - j - l), tpot += p * (64 - j - l) * step_s(j, l);
      own_a += p * step_s(j + 1, l), own_b += p * step_s(j, l + 1);
    }
  REQUIRE_THAT(r.tpot_s, WithinRel(tpot / decoded, 0.02));
  // (The mean step, every prompt spread over every step, hid the prompts' math under the decodes'
  // weight reads: 10% less.)
  StepLoad mean;
  mean.decode_seqs = per_step * 289;
  mean.decode_context = (139.3 * 1100 + 149.7 * 8250) / 289;
  mean.prefill_tokens = per_step * 3100;
  mean.prefill_context = (700.0 * 500 + 2400.0 * 4000) / 3100;
  mean.prefill_seqs = per_step;
  mean.prompt_len = 3100;
  REQUIRE(r.tpot_s > 1.03 * pipeline_cycle_s(step_cost(S, mean), 0));
  REQUIRE(r.length_classes.size() == 2);
  const ClassLatency &a = r.length_classes[0], &b = r.length_classes[1];
  REQUIRE_THAT(a.lengths.share, WithinRel(0.7, 1e-12));
  REQUIRE_THAT(a.ttft_s, WithinRel(own_a, 0.05));
  REQUIRE_THAT(b.ttft_s, WithinRel(own_b, 0.05));
  REQUIRE(b.ttft_s > 3 * a.ttft_s);
  REQUIRE_THAT(a.e2e_latency_s, WithinRel(a.ttft_s + 199 * r.tpot_s, 1e-12));
  REQUIRE_THAT(b.e2e_latency_s, WithinRel(b.ttft_s + 499 * r.tpot_s, 1e-12));
  // Means over requests, Little's law on the mean residence, OSL the mean output.
  REQUIRE_THAT(r.ttft_s, WithinRel(0.7 * a.ttft_s + 0.3 * b.ttft_s, 1e-12));
  REQUIRE_THAT(r.e2e_latency_s, WithinRel(0.7 * a.e2e_latency_s + 0.3 * b.e2e_latency_s, 1e-12));
  REQUIRE_THAT(r.requests_per_s, WithinRel(64 / r.e2e_latency_s, 1e-12));
  REQUIRE_THAT(r.output_tokens_per_s_total, WithinRel(r.requests_per_s * 290, 1e-12));
  // The KV pool: each sequence in flight reserves its class's context in whole 32-token blocks (1,216
  // and 8,512 tokens), the classes in flight as share × steps held (0.7·200 : 0.3·500 = 140 : 150);
  // 40,960 bytes a token per GPU (80 layers × 2 × 1 KV head × 128 × 2 bytes).
  const double per_seq = 40960.0 * (140.0 * 1216 + 150.0 * 8512) / 290;
  REQUIRE(r.kv_capacity_sequences == static_cast<long long>(std::floor(r.kv_pool_bytes / per_seq)));
  REQUIRE_THAT(r.kv_cache_used_bytes, WithinRel(64 * per_seq, 1e-12));
}

TEST_CASE("a mix of one length, or of two classes of the same lengths, is uniform lengths", "[inference]") {
  for (const double rate : {0.0, 2.0}) {
    Config c = serving("llama3-70b", 8, 2, 1, 48);
    c.workload.prompt_len = 30000;  // token-bound: the prompts wait in the batch for their chunks
    c.workload.output_len = 20;
    c.workload.request_rate_per_s = rate;
    const InferenceEstimate u = infer(c);
    REQUIRE(u.token_budget_bound);
    REQUIRE(u.prefill_steps > 4);  // beyond its 4 chunks
    c.workload.length_mix = {{30000, 20, 2.0}, {30000, 20, 5.0}};
    c.workload.prompt_len = 17;  // not read with a mix
    const InferenceEstimate m = infer(c);
    REQUIRE(u.token_budget_bound == m.token_budget_bound);
    if (rate == 0) {  // an offline run too: in waves, as uniform lengths
      Config o = c;
      o.workload.num_requests = 500;
      const InferenceEstimate om = infer(o);
      o.workload.length_mix = {{30000, 20, 1.0}};
      const InferenceEstimate o1 = infer(o);
      o.workload.length_mix = {};
      o.workload.prompt_len = 30000;
      const InferenceEstimate ou = infer(o);
      REQUIRE(ou.run_waves >= 2);
      for (const InferenceEstimate* x : {&om, &o1}) {
        REQUIRE(x->run_waves == ou.run_waves);
        REQUIRE_THAT(x->run_s, WithinRel(ou.run_s, 1e-9));
        REQUIRE_THAT(x->run_one_more_wave_s, WithinRel(ou.run_one_more_wave_s, 1e-9));
      }
    }
    REQUIRE_THAT(m.ttft_s, WithinRel(u.ttft_s, 1e-9));
    REQUIRE_THAT(m.tpot_s, WithinRel(u.tpot_s, 1e-9));
    REQUIRE_THAT(m.output_tokens_per_s_total, WithinRel(u.output_tokens_per_s_total, 1e-9));
    REQUIRE(m.kv_capacity_sequences == u.kv_capacity_sequences);
    REQUIRE(u.length_classes.empty());
    REQUIRE(m.length_classes.size() == 2);
  }
}

TEST_CASE("an offline run of mixed lengths, replayed step by step: two slots, by hand", "[inference]") {
  // Llama 3 8B on one H100, 2 slots; classes A 100/3 and B 100/5, one request each (N = 2) or A, B, A
  // (N = 3: the queue keeps every prefix in the shares, ties to the first class). Budget 8192.
  // Step 0: both prompts in one step (200 tokens, 2 prompts, each its first token); A then decodes its
  // other 2 tokens in steps 1–2, B its 4 in steps 1–4, their contexts 101, 102, … (prompt + tokens so far).
  Config c = serving("llama3-8b", 1, 1, 1, 2);
  c.workload.length_mix = {{100, 3, 1.0}, {100, 5, 1.0}};
  const Result<Resolved> res = resolve(c);
  REQUIRE(res.ok());
  const ServingSetup S(res.value);
  // A step of decodes at these contexts (class, context) and of the whole prompts of these classes
  // (100 tokens each, from the start), priced as step_cost prices it.
  auto step_s = [&](std::vector<std::pair<int, double>> decodes, std::vector<int> prompts) {
    std::array<ContextPart, kMaxLengthClasses> d{}, pf{};
    d.fill({0.0, 0.0, 0.0}), pf.fill({0.0, 0.0, 0.0});  // (a part's share is 1 unless set)
    StepLoad L;
    for (const auto& [cls, context] : decodes) d[std::size_t(cls)] = {1.0 / double(decodes.size()), context, context};
    L.decode_seqs = double(decodes.size());
    for (const ContextPart& x : d) L.decode_context += x.share * x.context;
    if (!decodes.empty()) L.decode_parts = d.data(), L.decode_part_count = 2;
    L.prompt_len = std::numeric_limits<double>::infinity();  // no prompt completes: no token sampled
    if (!prompts.empty()) {
      for (const int cls : prompts) pf[std::size_t(cls)] = {1.0 / double(prompts.size()), 50.0, 0.0};  // causal: half of 100
      L.prefill_tokens = 100.0 * double(prompts.size()), L.prefill_context = 50, L.prefill_seqs = double(prompts.size());
      L.prompt_len = 100;
      L.prefill_parts = pf.data(), L.prefill_part_count = 2;
    }
    return pipeline_cycle_s(step_cost(S, L), 0.0);
  };
  const double step0 = step_s({}, {0, 1});
  SECTION("N = 2: one step of prompts, two of two decodes, two of B alone") {
    c.workload.num_requests = 2;
    const InferenceEstimate r = infer(c);
    const double expected = step0 + step_s({{0, 101}, {1, 101}}, {}) + step_s({{0, 102}, {1, 102}}, {}) + step_s({{1, 103}}, {}) +
                            step_s({{1, 104}}, {});
    REQUIRE_THAT(r.run_s, WithinRel(expected, 1e-9));
    REQUIRE(r.run_waves == 0);  // no waves: the lengths finish apart
  }
  SECTION("N = 3: the second A takes A's slot after step 2, its prompt beside B's decode in step 3") {
    c.workload.num_requests = 3;
    const InferenceEstimate r = infer(c);
    // Step 3: B at 103 and A's prompt (its first token); step 4: B's last (104) beside A's first decode
    // (101); step 5: A's last (102).
    const double expected = step0 + step_s({{0, 101}, {1, 101}}, {}) + step_s({{0, 102}, {1, 102}}, {}) + step_s({{1, 103}}, {0}) +
                            step_s({{0, 101}, {1, 104}}, {}) + step_s({{0, 102}}, {});
    REQUIRE_THAT(r.run_s, WithinRel(expected, 1e-9));
  }
}

TEST_CASE("an offline mix of two classes a token apart runs as one length does, in waves", "[inference]") {
  // The replayed schedule against offline_run_s (waves with a burst of prompts each, a separate model,
  // calibrated on the published runs): Llama 3 70B on 8 H100, 64 in flight per replica, 2048/1024
  // beside 2049/1024, over pipelines and speculative decoding; one wave, ten and 23.4, each replayed
  // whole (a replay that closes its queue takes the rest at the steady state's rate, which a mix this
  // near one length, whose waves persist, does not reach: at 62.5 waves −0.7% to −1.3%).
  for (const int pp : {1, 2, 4})
    for (const int drafts : {0, 3})
      for (const int n : {64, 640, 1500}) {
        Config c = serving("llama3-70b", 8 / pp, pp, 1, 64);
        c.workload.num_requests = n;
        c.workload.spec_draft_tokens = drafts;
        if (drafts > 0) c.workload.spec_acceptance = 0.7;
        c.workload.prompt_len = 2048, c.workload.output_len = 1024;
        INFO("pp " << pp << ", drafts " << drafts << ", " << n << " requests");
        {
          const Result<Estimate> e = evaluate(c);
          for (const Error& x : e.errors) FAIL(x.path << ": " << x.message);
        }
        const InferenceEstimate uniform = infer(c);
        c.workload.length_mix = {{2048, 1024, 1.0}, {2049, 1024, 1.0}};
        const InferenceEstimate mix = infer(c);
        REQUIRE(uniform.run_waves > 0);
        REQUIRE_THAT(mix.run_s, WithinRel(uniform.run_s, 0.01));
      }
}

TEST_CASE("an offline mix of far-apart lengths is replayed in bounded work", "[inference]") {
  // 1 output token beside 4M at a share of 1e-9, and 10^6 requests: the long class never comes up in
  // the queue's order, the run is finite and no shorter than the requests at the steady state's rate
  // allow; 300k-token prompts (one fits the KV cache) beside 100-token ones: each prompt's chunks are
  // steps of their own.
  Config c = serving("llama3-8b", 1, 1, 1, 8);
  c.workload.length_mix = {{100, 1, 1.0}, {100, 4000000, 1e-9}};
  c.workload.num_requests = 1000000;
  const InferenceEstimate r = infer(c);
  REQUIRE(std::isfinite(r.run_s));
  REQUIRE(r.run_s > 0);
  c.workload.length_mix = {{300000, 1, 1.0}, {100, 100, 1.0}};
  c.workload.num_requests = 20;
  const InferenceEstimate big = infer(c);
  REQUIRE(std::isfinite(big.run_s));
  REQUIRE(big.run_s > 0);
}

TEST_CASE("a mix of lengths spreads the service time: requests queue longer than at one length", "[inference]") {
  // Erlang C with the squared coefficient of variation of the classes' end-to-end latencies
  // (Allen–Cunneen): cs² = Σ s_i (E2E_i − E2E)² / E2E².
  Config c = serving("llama3-70b", 8, 1, 1, 8);
  c.workload.length_mix = {{500, 50, 1.0}, {500, 950, 1.0}};
  const InferenceEstimate full = infer(c);
  c.workload.request_rate_per_s = 0.9 * full.requests_per_s;
  const InferenceEstimate r = infer(c);
  REQUIRE_FALSE(r.saturated);
  const double waits = r.prefill.queue_s + r.prefill.step_wait_s, e = r.e2e_latency_s - waits;
  double cs2 = 0;
  for (const ClassLatency& k : r.length_classes) {
    const double d = k.e2e_latency_s - waits - e;
    cs2 += k.lengths.share * d * d / (e * e);
  }
  REQUIRE(cs2 > 0.5);
  // The service a queue meets: end to end with all 8 slots taken, the replica at its capacity.
  const double rate = c.workload.request_rate_per_s, all_taken_s = full.e2e_latency_s;
  REQUIRE_THAT(r.prefill.queue_s, WithinRel(slot_queue(rate, 8, r.concurrency, all_taken_s, cs2).wait_s, 1e-6));
  REQUIRE_THAT(r.prefill.queue_s, WithinRel(slot_queue(rate, 8, r.concurrency, all_taken_s).wait_s * (1 + cs2), 1e-6));
}

TEST_CASE("bad length mixes are reported with their JSON paths", "[inference]") {
  Config c = serving("llama3-70b", 8, 1, 1, 8);
  c.workload.length_mix = {{0, 10, 1.0}, {100, -1, 0.0}};
  c.workload.batching = Batching::Static;
  std::set<std::string> paths;
  for (const Error& x : validate(c.model, c.cluster, c.plan, c.workload)) paths.insert(x.path);
  for (const char* p : {"/workload/length_mix/0", "/workload/length_mix/1", "/workload/length_mix"}) REQUIRE(paths.count(p) == 1);
  c.workload.length_mix = {{100, 10, 1.0}};
  c.workload.batching = Batching::Static;
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).at(0).path == "/workload/length_mix");
  c.workload.batching = Batching::InFlight;
  c.workload.length_mix = {};
  for (int i = 0; i < kMaxLengthClasses; ++i) c.workload.length_mix.push_back({100 + i, 10, 1.0});
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).empty());
  c.workload.length_mix.push_back({100, 10, 1.0});  // a ninth: not kept, and reported
  REQUIRE(c.workload.length_mix.size() == std::size_t(kMaxLengthClasses));
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).at(0).path == "/workload/length_mix");
}

TEST_CASE("token-bound with mixed lengths, every class's prompts wait the same steps beyond their chunks", "[inference]") {
  // 48 in flight, room 8192 − 48 = 8144 tokens a step for prompts: 60,000 tokens take 8 chunks, 1,000
  // one (F = 4.5 a request). Per request D = 0.5·19 + 0.5·199 = 109 decode steps and ISL = 30,500
  // prompt tokens: the budget admits r = 8192 / (30,500 + 109) requests a step, fewer than the
  // 48 / (4.5 + 109) the slots would, and a request spends 48/r − D steps beside its decode.
  Config c = serving("llama3-70b", 8, 1, 1, 48);
  c.workload.length_mix = {{60000, 20, 1.0}, {1000, 200, 1.0}};
  const InferenceEstimate r = infer(c);
  REQUIRE(r.token_budget_bound);
  const double per_step = 8192.0 / (30500 + 109), wait = 48 / per_step - 109 - 4.5;
  REQUIRE_THAT(r.decode_seqs_per_step + r.prefill_tokens_per_step, WithinRel(8192.0, 1e-12));
  REQUIRE_THAT(r.length_classes[0].prefill_steps, WithinRel(8 + wait, 1e-9));
  REQUIRE_THAT(r.length_classes[1].prefill_steps, WithinRel(1 + wait, 1e-9));
  REQUIRE_THAT(r.prefill_steps, WithinRel(4.5 + wait, 1e-9));
  REQUIRE_THAT(r.concurrency, WithinRel(per_step * (r.prefill_steps + 109), 1e-9));  // flow balance
}
