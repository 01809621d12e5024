// bench_search.cpp: the whole-space training search (core/search.h), as `cutlab search` runs it.
// GPT-3 175B on 1,024 A100s (seq 2048, global batch 1536, as Narayanan et al. 2021 trained it) and
// Llama 3 405B on 16,384 H100s (seq 8192, global batch 2048), on 1 thread and on every hardware thread.
// Counters: candidates/s (plans in the space per second, the pruned ones included) and simulated/s
// (plans that survived the pruning and were timed). On 1 thread the rates are per second of CPU time
// (per core, whatever else the machine runs); on every thread, per second of wall time.
// The serving searches (one thread): DeepSeek-V3 in fp4 on 72 and 16,128 GB200, prompt 8,192, output
// 1,024, TPOT ≤ 20 ms, co-located (core/serving_search.h) and disaggregated (core/disaggregation_search.h),
// offline and at a request rate (…AtRate: 10 requests/s per 72 GPUs, where each plan is also tried on
// the fewest replicas that serve it, and each disaggregated pair on the fewest instances).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <thread>

#include "core/disaggregation_search.h"
#include "core/presets.h"
#include "core/search.h"
#include "core/serving_search.h"

using namespace cutlab;

namespace {

Config base(const char* model, const char* cluster, int gpus, int seq_len, int global_batch) {
  Config c;
  c.model = *find_model_preset(model);
  c.cluster = *find_cluster_preset(cluster);
  c.cluster.gpus = gpus;
  c.workload.seq_len = seq_len, c.workload.global_batch = global_batch;
  return c;
}

void run(benchmark::State& state, const Config& c) {
  SearchOptions options;
  options.threads = static_cast<int>(state.range(0));
  long long candidates = 0, simulated = 0;
  for (auto _ : state) {
    const Result<SearchResult> r = search_plans(c, options);
    if (!r.ok()) {
      state.SkipWithError(r.errors.front().message.c_str());
      break;
    }
    candidates += r.value.candidates;
    simulated += r.value.evaluated;
    benchmark::DoNotOptimize(r);
  }
  state.counters["candidates/s"] = benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kIsRate);
  state.counters["simulated/s"] = benchmark::Counter(static_cast<double>(simulated), benchmark::Counter::kIsRate);
  state.counters["threads"] = static_cast<double>(options.threads);
}

int all_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void BM_SearchGpt3_1024A100(benchmark::State& state) { run(state, base("gpt3-175b", "dgx-a100", 1024, 2048, 1536)); }
void BM_SearchLlama405B_16384H100(benchmark::State& state) { run(state, base("llama3-405b", "dgx-h100", 16384, 8192, 2048)); }

Config deepseek_serving(int gpus, double requests_per_s = 0) {
  Config c;
  c.model = *find_model_preset("deepseek-v3");
  c.cluster = *find_cluster_preset("gb200-nvl72");
  c.cluster.gpus = gpus;
  c.workload.mode = Mode::Infer;
  c.workload.prompt_len = 8192, c.workload.output_len = 1024;
  c.workload.weight_dtype = WeightDtype::FP4, c.workload.kv_dtype = KvDtype::FP8;
  c.workload.request_rate_per_s = requests_per_s;
  return c;
}

// range(0): GPUs; range(1): 1 at 10 requests/s per 72 GPUs, 0 offline.
double rate_of(const benchmark::State& state) { return state.range(1) ? 10.0 * double(state.range(0)) / 72.0 : 0.0; }

void BM_ServingSearchDeepSeekV3_GB200(benchmark::State& state) {
  const Config c = deepseek_serving(static_cast<int>(state.range(0)), rate_of(state));
  ServingSearchOptions o;
  o.max_tpot_s = 0.020;
  for (auto _ : state) benchmark::DoNotOptimize(search_serving(c, o));
}

void BM_DisaggregatedSearchDeepSeekV3_GB200(benchmark::State& state) {
  const Config c = deepseek_serving(static_cast<int>(state.range(0)), rate_of(state));
  ServingSearchOptions o;
  o.max_tpot_s = 0.020;
  long long evaluations = 0, pairs = 0;
  for (auto _ : state) {
    const Result<DisaggregatedSearchResult> r = search_disaggregated(c, o);
    evaluations += r.value.evaluations, pairs += r.value.pairs;
    benchmark::DoNotOptimize(r);
  }
  state.counters["pool evaluations/s"] = benchmark::Counter(static_cast<double>(evaluations), benchmark::Counter::kIsRate);
  state.counters["pairs/s"] = benchmark::Counter(static_cast<double>(pairs), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_SearchGpt3_1024A100)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchGpt3_1024A100)->Arg(all_threads())->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchLlama405B_16384H100)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchLlama405B_16384H100)->Arg(all_threads())->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ServingSearchDeepSeekV3_GB200)
    ->ArgsProduct({{72, 16128}, {0, 1}})
    ->ArgNames({"gpus", "at_rate"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DisaggregatedSearchDeepSeekV3_GB200)
    ->ArgsProduct({{72, 16128}, {0, 1}})
    ->ArgNames({"gpus", "at_rate"})
    ->Unit(benchmark::kMillisecond);
