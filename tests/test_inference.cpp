#include <catch2/catch.hpp>

#include "core/estimate.h"
#include "tests/helpers.h"

using namespace cutlab;
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
  // Every GPU reads its 1/8 of the bf16 weights per token: W / (8 × 3.35 TB/s) ≈ 5.3 ms.
  const double bound = count_params(c.model).total * 2.0 / (8 * c.cluster.hbm_bytes_per_s);
  REQUIRE(r.tpot_s >= bound);
  REQUIRE(r.tpot_s <= 1.5 * bound);
}

TEST_CASE("TP cuts decode latency, PP does not", "[inference]") {
  const InferenceEstimate tp8 = infer(serving("llama3-70b", 8, 1, 1, 1));
  const InferenceEstimate tp4pp2 = infer(serving("llama3-70b", 4, 2, 1, 1));
  REQUIRE(tp8.tpot_s < tp4pp2.tpot_s);
  REQUIRE(tp4pp2.stage_idle_fraction == 0.5);  // a token walks 2 stages in turn
}

TEST_CASE("doubling DP doubles total tokens/s and leaves TPOT unchanged", "[inference]") {
  const InferenceEstimate one = infer(serving("llama3-70b", 8, 1, 1, 16));
  const InferenceEstimate two = infer(serving("llama3-70b", 8, 1, 2, 16));
  REQUIRE(two.tpot_s == one.tpot_s);
  REQUIRE_THAT(two.tokens_per_s_total, WithinRel(2 * one.tokens_per_s_total, 1e-12));
  REQUIRE_THAT(one.tokens_per_s_total, WithinRel(16 / one.tpot_s, 1e-12));
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
  REQUIRE(r.decode_ep_s > 0);
  REQUIRE(r.replicas == 1);
}

TEST_CASE("serving rejects context parallel", "[inference]") {
  Config c = serving("llama3-70b", 8, 1, 1, 1);
  c.plan.cp = 2;
  const Errors e = validate(c.model, c.cluster, c.plan, c.workload);
  REQUIRE(e.size() == 1);
  REQUIRE(e[0].path == "/plan/cp");
}
