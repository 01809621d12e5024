// bench_schedule.cpp: time to generate and simulate a schedule (target: well under 1 ms for p = 16,
// m = 256, v = 2 interleaved, so the web page can redraw the timeline on every slider move).
#include <benchmark/benchmark.h>

#include <string>

#include "core/schedule.h"

namespace {

cutlab::ScheduleInput make_input(cutlab::Schedule name, int p, int m, int v) {
  cutlab::ScheduleInput in;
  in.name = name;
  in.stages = p;
  in.micro_batches = m;
  in.chunks = v;
  // Slightly uneven stages (heavier first and last), as the cost model produces them.
  for (int s = 0; s < p; ++s)
    for (int c = 0; c < v; ++c) {
      const double extra = (s == 0 || s == p - 1) ? 0.1 : 0.0;
      in.times.push_back({(1.0 + extra) / v, (1.0 + extra) / v, (1.0 + extra) / v});
    }
  in.p2p_s = 0.01;
  return in;
}

void run(benchmark::State& state, const cutlab::ScheduleInput& in) {
  std::size_t ops = 0;
  for (auto _ : state) {
    auto result = cutlab::simulate_schedule(in);
    ops = result.value.ops.size();
    benchmark::DoNotOptimize(result);
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * ops));
}

void BM_interleaved_p16_m256_v2(benchmark::State& state) { run(state, make_input(cutlab::Schedule::Interleaved, 16, 256, 2)); }
void BM_1f1b_p16_m256(benchmark::State& state) { run(state, make_input(cutlab::Schedule::OneFOneB, 16, 256, 1)); }
void BM_zb_h1_p16_m256(benchmark::State& state) { run(state, make_input(cutlab::Schedule::ZbH1, 16, 256, 1)); }
void BM_dualpipe_p16_m32(benchmark::State& state) { run(state, make_input(cutlab::Schedule::DualPipe, 16, 32, 2)); }

}  // namespace

BENCHMARK(BM_interleaved_p16_m256_v2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_1f1b_p16_m256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_zb_h1_p16_m256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_dualpipe_p16_m32)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
