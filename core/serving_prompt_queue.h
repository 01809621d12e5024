// serving_prompt_queue.h: a replica that only prefills (one output token each: a disaggregated prefill
// pool's instance) at a request rate, as the bulk-service queue it is. Each step takes the prompts
// waiting when it starts, up to a step's worth, and is longer the more it takes; prompts that arrive
// during it wait for the next (M/G^b/1 with a batch-dependent service, Bailey 1954, "On queueing
// processes with bulk service", J. R. Stat. Soc. B 16; Chaudhry & Templeton 1983, "A First Course in
// Bulk Queues", ch. 4). The steady state's birth–death chain of the count in flight (slot_queue,
// core/serving_batching.h) does not fit it: a prompt's slot is held for one step, and what sets its
// wait is how many arrive during a step, not how many are in flight. Against the engine's schedule
// simulated step by step with Poisson arrivals (tests/test_serving_simulation.cpp), Llama 3 70B TP 8,
// 2,048-token prompts, 4 a step: the chain had been 16–39% under the simulated TTFT at 4–10 prompts/s,
// this queue is within 0.5%. With pipeline stages (pp micro-batches in flight, the stages simulated
// one by one) a step waits for the longer ones before it (prompt_chain's `before`): TP 4 × PP 2,
// 0.5–6.3% over at 2–11 prompts/s (27% under with each step's interval its own alone; 66% under with
// slot_queue); Llama 3 8B PP 2 with 16 prompts a step, 0.3–6.6% over; Llama 3 70B TP 2 × PP 4, −5.6%
// to +8.5% at 30–95% of its capacity. Many prompts a step near the capacity (short prompts under a
// large token budget) cost the chain in prompts more work than it may take; it then counts in units
// of 2 or more prompts: Llama 3 8B PP 2, 64 and 128 prompts of 512 tokens a step at 90% and 95% of
// its capacity, +0.3% to +2.7% (the steady state, which had priced them, 96–98% under). Not priced:
// a convoy in a deep pipeline of short steps, where a long micro-batch holds the short ones behind it
// at every stage and the prompts arriving meanwhile make the next ones long again: Llama 3 8B PP 4
// with 16 prompts of 512 tokens at 60% of its capacity (balanced stages, 3.2 ms a prompt each) walks
// a prompt in 150 ms where its steps alone take 71 ms; 70% under (slot_queue 91% under); at 90%, 5%
// under (docs/validation.md §8, "Why the convoy is left out").
#pragma once
#include "core/serving_step.h"

namespace cutlab {

// The embedded Markov chain at the steps' starts: q prompts waiting; a step takes a = min(q, b) of
// them and runs τ(a); q' = q − a + K, K ~ Poisson(λ·I(a)) arriving during it, I(a) = τ(a)/pp the time
// to the next step's start (pp micro-batches in flight: one starts per pp-th of a cycle). An empty
// queue idles until the next arrival, whose step starts at once (q' = 1). The stationary π is solved
// exactly on states 0..Q (Q grown until the flow that would pass Q, put on it, is under 1e-12) by the GTH
// elimination (Grassmann, Taksar & Heyman 1985, Operations Research 33: no subtractions, so stable
// however near its capacity the replica runs), banded: a step lowers q by at most b and raises it by
// at most the arrivals' truncation. Then, by the time each state lasts (I(a); the idle 1/λ):
// - the wait before the step that takes a prompt: W = L/λ (Little's law on the prompts waiting), L's
//   time average Σ π·I·(q − a + λ·I/2) / Σ π·I; its part λ·I/2 (the step in progress's arrivals) is
//   the residual of the step in progress, Σ π·I²/2 / Σ π·I (step_wait_s), the rest the steps before
//   it that were full (queue_s);
// - its own step: Σ π·a·walk(a) / Σ π·a (each step holds a prompts; walk: through every stage; with
//   pp stages, behind a longer step before it (I(a') > I(a)) (pp − 1)·(I(a') − I(a)) more, as a
//   flow line of balanced stages blocks).
// Where the chain in prompts would pass its bound on work, the chain in units of g prompts (g the
// least divisor of b that fits: the prompts waiting, taken and arriving counted in units, g³ less
// work; near the capacity, where it is needed, within 3% of the chain in prompts at g = 2 and 9% at
// g = 4). Not for prompts longer than the token budget (chunked over steps), mixed lengths, or
// outputs past the first token, nor past the chain's bounds (kMaxPromptQueueBatch, …States, …Work,
// with every unit): ok is false, and the steady state prices them (slot_queue,
// core/serving_batching.h).
struct PromptQueue {
  bool ok = false;
  double queue_s = 0;      // waiting behind prompts that filled the steps before
  double step_wait_s = 0;  // the residual of the step in progress at arrival (0 when idle)
  double service_s = 0;    // the prompt's own step, through every stage
  StepCost step;           // the prompt's own step, its parts averaged as the prompts meet them
  double ttft_s() const { return queue_s + step_wait_s + service_s; }
};

// `rate_per_s`: λ per replica; `slots`: the most in flight (pp × batch, the KV cache), so a step takes
// at most slots/pp prompts, and at most what the token budget holds.
PromptQueue prompt_queue(const ServingSetup& S, double rate_per_s, double slots);

// The chain alone, for a step's cost given: `interval_s[a]` the time from the start of a step of a
// prompts to the next start (a = 0..b; [0] unused) at `rate_per_s`. With `stages` > 1 (pipelined) a
// step starts no sooner than the next start of the longer steps still in the pipeline, so with fewer
// than b waiting its interval is max(I(a), I(a')), a' the longest step within reach before it: the
// step before's batch, or with probability (stages − 2)/(stages − 1) the one it carried (a longest
// step stays stages − 1 steps on average); its distribution (`before`) by Bayes from the chain's flows
// into q, a fixed point of the two (the stationary law of the chain on (q, a'), solved by parts).
// Where the bound on work (kMaxPromptQueueWork) stops that fixed point after a pass on enough states,
// that pass stands, unsettled. π over the states 0..Q, empty when it does not converge
// (λ·interval(b) ≥ b: the queue grows without bound), takes more than kMaxPromptQueueBatch prompts a
// step, or needs more than kMaxPromptQueueStates states or kMaxPromptQueueWork for a first pass.
inline constexpr int kMaxPromptQueueStates = 1 << 14;
inline constexpr double kMaxPromptQueueWork = 3e7;  // multiply-adds: tens of milliseconds at most
inline constexpr int kMaxPromptQueueBatch = 256;    // prompts a step: more average out (the steady state)
struct PromptChain {
  std::vector<double> pi;                   // q = 0..Q
  std::vector<std::vector<double>> before;  // [q][a'] for q < b (pipelined): the longest step within reach before
  std::vector<double> interval_s;
  bool settled = false;      // the fixed point settled (its π-weighted move under 1e-9); false where the bound on work stopped it
  bool over_budget = false;  // π is empty because the work would pass `work_budget`
  double work = 0;           // the multiply-adds it took (eliminations, mixes, flows)
  int longer(int q, int prior) const;  // the batch, of q's step and the one before, whose interval is longer
};
// `unit`: prompts per state (q, the batches and the arrivals, as K/unit rounded to keep its mean); the
// intervals are then those of a units' steps.
PromptChain prompt_chain(double rate_per_s, const std::vector<double>& interval_s, int stages = 1, int unit = 1,
                         double work_budget = kMaxPromptQueueWork);

}  // namespace cutlab
