// bench_search.cpp: the whole-space training search (core/search.h), as `cutlab search` runs it.
// GPT-3 175B on 1,024 A100s (seq 2048, global batch 1536, as Narayanan et al. 2021 trained it) and
// Llama 3 405B on 16,384 H100s (seq 8192, global batch 2048), on 1 thread and on every hardware thread.
// Counters: candidates/s (plans in the space per second, the pruned ones included) and simulated/s
// (plans that survived the pruning and were timed). On 1 thread the rates are per second of CPU time
// (per core, whatever else the machine runs); on every thread, per second of wall time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <thread>

#include "core/presets.h"
#include "core/search.h"

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

}  // namespace

BENCHMARK(BM_SearchGpt3_1024A100)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchGpt3_1024A100)->Arg(all_threads())->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchLlama405B_16384H100)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchLlama405B_16384H100)->Arg(all_threads())->UseRealTime()->Unit(benchmark::kMillisecond);
