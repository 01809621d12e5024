// One full evaluation of Llama 3 405B on 16,384 H100s (TP 8 × PP 16 × DP 128, 8k context,
// global batch 2048 → 16 micro-batches), as a search would run it.
#include <benchmark/benchmark.h>

#include "core/api.h"
#include "core/estimate.h"
#include "core/presets.h"

using namespace cutlab;

static Config llama405b_16k() {
  Config c;
  c.model = *find_model_preset("llama3-405b");
  c.cluster = *find_cluster_preset("dgx-h100");
  c.plan.tp = 8, c.plan.pp = 16, c.plan.dp = 128, c.plan.sp = true, c.plan.recompute = Recompute::Selective;
  c.workload.seq_len = 8192, c.workload.global_batch = 2048;
  return c;
}

static void BM_EvaluateLlama405B_16384(benchmark::State& state) {
  const Config c = llama405b_16k();
  for (auto _ : state) benchmark::DoNotOptimize(evaluate(c));
}
BENCHMARK(BM_EvaluateLlama405B_16384);

// The search's evaluation of the same plan: resolve, then evaluate without the op list (the fast path).
static void BM_EvaluateFastLlama405B_16384(benchmark::State& state) {
  const Config c = llama405b_16k();
  for (auto _ : state) {
    const Result<Resolved> r = resolve(c);
    benchmark::DoNotOptimize(evaluate_training(r.value, false));
  }
}
BENCHMARK(BM_EvaluateFastLlama405B_16384);

// Two texts of the same plan taken in turn, so that api::evaluate's one-entry cache never answers:
// reading, resolving, evaluating and writing the JSON every time (a state change of the page).
static void BM_EvaluateJsonLlama405B_16384(benchmark::State& state) {
  const std::string texts[2] = {R"({"model": "llama3-405b", "cluster": "dgx-h100",
    "plan": {"tp": 8, "pp": 16, "dp": 128, "sp": true, "recompute": "selective"},
    "workload": {"seq_len": 8192, "global_batch": 2048}})",
                                R"({"model": "llama3-405b", "cluster": "dgx-h100",
    "plan": {"tp": 8, "pp": 16, "dp": 128, "sp": true, "recompute": "selective"},
    "workload": {"global_batch": 2048, "seq_len": 8192}})"};
  int i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(api::evaluate_json(texts[i++ & 1]));
}
BENCHMARK(BM_EvaluateJsonLlama405B_16384);

// The same text again: the cached answer, only the JSON written (the page's figure calls).
static void BM_EvaluateJsonCachedLlama405B_16384(benchmark::State& state) {
  const std::string text = R"({"model": "llama3-405b", "cluster": "dgx-h100",
    "plan": {"tp": 8, "pp": 16, "dp": 128, "sp": true, "recompute": "selective"},
    "workload": {"seq_len": 8192, "global_batch": 2048}})";
  for (auto _ : state) benchmark::DoNotOptimize(api::evaluate_json(text));
}
BENCHMARK(BM_EvaluateJsonCachedLlama405B_16384);

// The page's pipeline view at 16,384 GPUs (?ex=llama3-405b: interleaved, 8 chunks per stage): two
// texts of the plan in turn, so that each call evaluates, lays out the timeline and writes it.
static void BM_TimelineJsonLlama405B_16384(benchmark::State& state) {
  const std::string plan = R"("plan": {"tp": 8, "pp": 16, "sp": true, "distributed_optimizer": true, "recompute": "none",
    "schedule": "interleaved", "vpp": 8, "embedding_in_pipeline_split": true, "loss_in_pipeline_split": true})";
  const std::string texts[2] = {R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384}, )" + plan +
                                    R"(, "workload": {"seq_len": 8192, "global_batch": 2048}})",
                                R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384}, )" + plan +
                                    R"(, "workload": {"global_batch": 2048, "seq_len": 8192}})"};
  int i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(api::timeline_json(texts[i++ & 1], 1100, 440));
}
BENCHMARK(BM_TimelineJsonLlama405B_16384);

// An offline run of mixed lengths, its schedule replayed step by step (core/serving_offline_mix.h):
// Qwen3-30B-A3B on one H200, 377 slots (the KV cache), 2,048 requests of three classes.
static void BM_EvaluateOfflineMixQwen3_30B(benchmark::State& state) {
  Config c;
  c.model = *find_model_preset("qwen3-30b-a3b");
  c.cluster = *find_cluster_preset("hgx-h200");
  c.workload.mode = Mode::Infer, c.workload.batch = 512, c.workload.num_requests = 2048;
  c.workload.length_mix = {{128, 128, 0.4}, {1000, 1000, 0.4}, {8000, 200, 0.2}};
  for (auto _ : state) benchmark::DoNotOptimize(evaluate(c));
}
BENCHMARK(BM_EvaluateOfflineMixQwen3_30B)->Unit(benchmark::kMicrosecond);

// A prefill-only replica at a request rate, the bulk-service queue's chain (core/serving_prompt_queue.h):
// Llama 3 8B PP 2 and PP 4, 16 prompts of 512 tokens or 256 of 256 a step under a budget of 65,536,
// at 30%, 50%, 90% and 99% of its capacity (the pipelined fixed point, in prompts or in units near the
// capacity; its work bounded by kMaxPromptQueueWork). Arguments: pp, load in percent, prompts a step.
static void BM_EvaluatePrefillQueue(benchmark::State& state) {
  Config c;
  c.model = *find_model_preset("llama3-8b");
  c.cluster = *find_cluster_preset("dgx-h100");
  c.cluster.gpus = int(state.range(0));
  c.plan.pp = int(state.range(0));
  c.workload.mode = Mode::Infer, c.workload.batch = int(state.range(2)), c.workload.output_len = 1;
  c.workload.prompt_len = c.workload.batch > 128 ? 256 : 512;
  c.workload.max_num_tokens = 65536;
  const Result<Estimate> offline = evaluate(c);
  c.workload.request_rate_per_s = double(state.range(1)) / 100.0 * std::get<ServingEstimate>(offline.value).serving.requests_per_s;
  for (auto _ : state) benchmark::DoNotOptimize(evaluate(c));
}
BENCHMARK(BM_EvaluatePrefillQueue)->ArgsProduct({{2, 4}, {30, 50, 90, 99}, {16, 256}})->Unit(benchmark::kMillisecond);
