// serving_offline_mix.h: an offline run of mixed lengths, its engine schedule replayed step by step.
// trtllm-bench and vLLM's benchmark_throughput queue every request at once. With one length the run
// goes in waves (core/serving_batching.h offline_run_s); with several, requests finish apart and the
// run has three phases that no steady state describes: a start where every slot's prompt arrives at
// once (a burst of full steps at the compute rate), a middle where finished sequences' slots refill
// one by one (lumpy steps, serving_batching.h), and an end where the last sequences decode with
// fewer and fewer beside them and no prompt (steps that read every weight for a few tokens).
// Priced from the steady state's end-to-end latencies alone (list scheduling of N jobs on c slots,
// Graham 1969, as before 2026-12-05), the run came out 22–68% longer than the schedule an engine runs
// when it is one wave of the slots, 11–20% at four or five turnovers, 6–9% at ten (docs/validation.md
// §8, "An offline run of mixed lengths").
// So the schedule is replayed as the engine runs it (Yu et al. 2022, Orca, iteration-level scheduling;
// Agrawal et al. 2024, Sarathi-Serve §4, chunked prefill): each micro-batch holds at most its slots;
// before a step every free slot takes the next request; the step runs one token of each decoding
// sequence (1 + drafts with speculative decoding) and fills what is left of max_num_tokens with
// prompt chunks, first come, first served; each step is priced by step_cost with its own decodes,
// contexts and chunks (core/serving_step.h). Requests come in a fixed order that keeps every prefix
// of the queue in the classes' shares (smooth weighted round robin): the expected composition of a
// random order, without its luck. With pp micro-batches each runs its share of slots and requests.
// Bounded work: stretches with only decodes and no slot to free are priced at their two ends (a step's
// cost is linear in its contexts between roofline corners); and a run whose queue outlasts
// kMaxReplayedSteps priced steps and three times its slots in admissions stops admitting there, drains
// as the run's end does, and adds
// the requests it did not replay at the steady state's rate (`b`, requests per second, within 1% of the
// replayed middle: tests/test_serving_simulation.cpp).
// Ignores, as the steady state does: preemption and the spread of lengths within a class.
#pragma once
#include "core/serving_batching.h"

namespace cutlab {

// The most steps replayed before the middle of a long run is taken at the steady state's rate.
inline constexpr int kMaxReplayedSteps = 512;

// Seconds per replica of an offline run of `requests` per replica (Workload::length_mix of two or
// more lengths), at most `concurrency` in flight; `b` the steady state at that concurrency.
double offline_mix_run_s(const ServingSetup& S, const BatchingState& b, double concurrency, double requests);

}  // namespace cutlab
