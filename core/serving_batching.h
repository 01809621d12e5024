// serving_batching.h: a serving replica at steady state under in-flight (continuous) batching.
// Iteration-level scheduling (Yu et al. 2022, Orca, OSDI'22): a sequence joins and leaves the running
// batch between engine steps. Chunked prefill (Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310
// §4): each step runs one token of every decoding sequence and fills what is left of the token budget
// (max_num_tokens) with prompt chunks. With pipeline parallelism pp micro-batches are in flight, each
// with its own running batch (vLLM's virtual engines, TensorRT-LLM's micro-batches), so stages do not
// wait for one another: a micro-batch steps once per max(walk, pp × slowest stage), its walk through
// every stage being what a user waits per step. Speculative decoding: each step verifies n drafted
// tokens and keeps (1 − a^(n+1))/(1 − a) of them on average (Leviathan et al. 2023, eq. 1).
// Flow balance at steady state (requests finish per step as they join): with c sequences per
// micro-batch, each spending n_pf prefill steps and n_dec = (OSL − 1)/tokens-per-step decode steps,
// r = c/(n_pf + n_dec) requests finish per step, the step runs r·n_dec decoding sequences and r·ISL
// prompt tokens; when those exceed the budget the step is token-bound: r = M/(ISL + q·n_dec) and the
// admitted prompts wait inside the batch for their chunks (TTFT grows).
// Mixed lengths (Workload::length_mix): the same balance over the classes' means, each class i of
// share s_i: r = c / Σ s_i·(n_pf,i + n_dec,i), the step runs r·Σ s_i·n_dec,i decoding sequences and
// r·Σ s_i·ISL_i prompt tokens; token-bound, r = M / Σ s_i·(ISL_i + q·n_dec,i) and every class's
// prompts wait the same steps in the batch (first come, first served); each class's attention reads
// its own contexts; TTFT and end-to-end are per class, their means over requests give Little's law.
// With a request rate, a request that finds every slot taken waits for one (slot_queue: the count's
// birth–death chain, each count served at its own speed).
// Steps are not all the mean step: a prompt's chunk goes whole into one step, so most steps carry
// none and a few carry one or more. Spread over every step, the prompts' math hid under the decodes'
// weight reads (a roofline is a max: the mean of the steps' maxima is more than the max at the mean
// step); Llama 3 70B on 8 H100 at 64 in flight, 1000/200, served 11.8% more than its engine schedule
// simulated step by step (tests/test_serving_simulation.cpp), 2048/1024 14.5%. So each of the c
// sequences of a micro-batch is prefilling, with probability its share of a request's steps, or
// decoding; the step's prompt tokens are the chunks of those prefilling (a compound binomial, on a
// lattice of the room; what passes the room waits for a later step), and the step's cost is averaged
// over that distribution: as the decoding sequences meet the steps for TPOT, as a prompt meets its own
// step (its chunk beside the others'; arriving at random, beside those that arrived during the
// length-biased step in progress) for TTFT. Every step full (token-bound) is the mean step.
// Ignores: preemption, the spread of lengths within a class, the class mix of a step's prompts
// (taken in proportion to its tokens). At a request rate (Poisson arrivals) the count in flight
// wanders, and a decoding sequence meets more steps of many than of few: TPOT adds β·Var(n)/C
// (inflight_state); and a prompt that did not wait for a slot arrives beside the sequences in flight
// rather than in the slot of one that left, so its step holds one more decoding sequence (lumpy
// steps, open). Against the schedule simulated with Poisson arrivals: within 0.1–0.5%; 2.0–3.0%
// without either, 0.5–1.7% with the spread alone.
#pragma once
#include "core/serving_step.h"

namespace cutlab {

// Expected tokens a sequence gains per step verifying `drafts` tokens each accepted with probability
// `a` (Leviathan et al. 2023, eq. 1): (1 − a^(n+1))/(1 − a); n + 1 at a = 1; 1 without drafts.
double spec_tokens_per_step(int drafts, double a);

// One micro-batch's step time seen by its sequences: the walk through every stage and the hand-offs,
// or pp × the slowest stage when that is longer (each stage serves pp micro-batches in turn).
// `draft_s` (speculative decoding) runs on the last stage.
double pipeline_cycle_s(const StepCost& step, double draft_s);

// The latencies of one request class of a stream (Workload::length_mix; one class for uniform lengths).
struct ClassLatency {
  LengthClass lengths;       // its share normalised (core/plan.h request_classes)
  double prefill_steps = 0;  // steps from admission to its first token
  double ttft_s = 0, e2e_latency_s = 0;
};

struct BatchingState {
  double concurrency = 0;        // sequences in flight per replica
  double decode_seqs = 0;        // per micro-batch step
  double prefill_tokens = 0;     // per micro-batch step
  double prefill_steps = 0;      // steps from admission to the first token (mean over requests)
  double requests_per_step = 0;  // per micro-batch
  double tokens_per_step = 1;    // tokens a decoding sequence gains per step
  bool token_budget_bound = false;
  StepCost step;       // one micro-batch step
  double draft_s = 0;  // the draft head's passes in one step
  double cycle_s = 0;  // between two steps of a micro-batch
  // A step carrying one prompt's chunk (what its prefill steps cost), and its cycle; with mixed
  // lengths, the classes' such steps averaged over the requests' prefill steps (so that
  // prefill_steps × prefill_cycle_s is the mean TTFT).
  StepCost prefill_step;
  double prefill_cycle_s = 0;
  double ttft_s = 0, tpot_s = 0, e2e_s = 0;  // TTFT and end-to-end: means over requests
  double e2e_cs2 = 0;                        // squared coefficient of variation of end-to-end over the classes
  ClassList<ClassLatency> classes;           // request_classes(w), in order
  double requests_per_s = 0;                 // per replica
  // Open systems: Var(n)/C of the sequences in flight, by which a decoding sequence's steps are
  // longer than the step at C (β·Var(n)/C, β the step's cost of one more sequence); 0 when closed.
  double inflight_spread = 0;
  // Open systems: an arrival's wait for the step in progress before its first step (not in ttft_s or
  // e2e_s, which count the time in a slot); 0 when closed.
  double step_wait_s = 0;
};

// The steady state of a replica holding `concurrency` sequences (> 0). With `rate_per_s` > 0 (an open
// system: requests arriving at random, λ per replica, at most `slots` in flight) the count in flight
// wanders about `concurrency`, and TPOT is the steps' mean over that spread (inflight_spread).
// `full_e2e_s`: the end-to-end latency with every slot taken (slot_queue), which sets how many prompts
// wait for a slot.
BatchingState inflight_state(const ServingSetup& S, double concurrency, double rate_per_s = 0.0, double slots = 0.0,
                             double full_e2e_s = 0.0);

// Var(n)/C of a count in flight about its mean C when requests arrive at random and each one in
// flight lengthens the others' stay by B (end to end A + B·n): 1/(1 − λ·B) for λ·B < 1 (a birth–death
// chain's spread, Kingman 1961; 1 for independent sequences, Takács 1962), at most `headroom` = C_max − C
// (Bhatia & Davis 2000); 0 when neither bounds it. A decoding sequence's step is then the step at C
// plus β·Var(n)/C, β the step's cost of one more sequence (inflight_state, and a disaggregated decode
// pool at a request rate, core/disaggregation.h).
double count_spread(double lambda_B, double headroom);

// The root of g on [0, cap], from g(0) = g_0 > 0 > g(cap) = g_cap, to 1e-9 of cap; the bracket's upper
// end (Little's law's C, where g(C) = λ·E2E(C) − C falls through 0). Regula falsi with the Illinois
// rule (Dowell & Jarratt 1971): a bracket kept as in bisection, its end that stays twice in a row
// halved in weight; superlinear where g is smooth, never slower than bisection's halving for long.
template <class G>
double falling_root(G&& g, double cap, double g_0, double g_cap) {
  double lo = 0, hi = cap, g_lo = g_0, g_hi = g_cap;
  int side = 0;
  for (int i = 0; i < 100 && hi - lo > 1e-9 * cap; ++i) {
    double mid = (lo * g_hi - hi * g_lo) / (g_hi - g_lo);
    if (!(mid > lo && mid < hi)) mid = 0.5 * (lo + hi);
    const double gm = g(mid);
    if (gm > 0) {
      lo = mid, g_lo = gm;
      if (side == 1) g_hi *= 0.5;
      side = 1;
    } else {
      hi = mid, g_hi = gm;
      if (side == -1) g_lo *= 0.5;
      side = -1;
    }
    if (gm == 0) break;
  }
  return hi;
}

// The decoding sequences of a stream (inflight_state's decode parts, and a disaggregated decode pool's,
// core/disaggregation.h), by length class (request_classes(w); one part for uniform lengths): class i
// holds s_i·n_i of them for n_i = (output_i − 1)/q steps (q: tokens per step), so its share of a step's
// sequences is s_i·n_i / Σ s_j·n_j, at its mean context prompt + output/2 from its prompt (Little's law
// per class).
struct DecodeMix {
  ClassList<ContextPart> parts;
  double context = 0;  // Σ share · context: the mean context of a decoding sequence
  double steps = 0;    // decode steps of a request, the mean over requests: Σ s_i·n_i
  double cs2 = 0;      // their squared coefficient of variation over the classes, Σ s_i·(n_i/steps − 1)²
};
DecodeMix decode_mix(const Workload& w, double tokens_per_step);

// An offline run (trtllm-bench, vLLM's benchmark_throughput): `requests` per replica of uniform
// lengths (or a mix of one class), all queued at the start, at most `concurrency` in flight. Sequences admitted together
// finish together, so the run goes in waves, and each wave's prompts arrive in a burst of full
// steps rather than spread over its steps as at steady state: the burst runs at the compute rate,
// the decodes after it read every weight with no prompt beside them. Seconds per replica.
double offline_run_s(const ServingSetup& S, double concurrency, double requests);

// The waves of that run: ⌈requests / concurrency⌉, at least one (the last holds what is left).
double offline_waves(double concurrency, double requests);

// Sequences in flight per replica: pp × batch, at most the KV cache's capacity, at most the requests
// of an offline run that reach the replica, and with a request rate λ per replica Little's law
// C = λ · E2E(C) (Little 1961) when that is smaller.
enum class ConcurrencyLimit { Batch, KvCache, RequestRate, Memory, Requests };
template <>
struct ChoiceTable<ConcurrencyLimit> {
  static constexpr const char* key = "concurrency_limit";
  static constexpr std::array<Named<ConcurrencyLimit>, 5> entries{{{ConcurrencyLimit::Batch, "batch", "pp × batch"},
                                                                   {ConcurrencyLimit::KvCache, "kv_cache", "the KV cache"},
                                                                   {ConcurrencyLimit::RequestRate, "request_rate", "the request rate"},
                                                                   {ConcurrencyLimit::Memory, "memory", "weights fill the memory"},
                                                                   {ConcurrencyLimit::Requests, "requests", "the run's requests"}}};
};
struct Concurrency {
  double value = 0;
  double slots = 0;  // the most in flight, whatever the rate: pp × batch, the KV cache, the run's requests
  ConcurrencyLimit limit = ConcurrencyLimit::Batch;
  bool saturated = false;  // the request rate exceeds what the replica serves: the queue grows without bound
  double full_e2e_s = 0;   // at a request rate: end to end with every slot taken (slot_queue)
};
// The queue for a slot at a request rate: Poisson arrivals at λ per replica, at most `slots` sequences
// in flight, `concurrency` of them on average (C = λ·E2E(C), Little's law), and `full_e2e_s` the
// end-to-end latency with every slot taken, the service a queue meets. Each sequence in flight slows
// the others, so a count n is served at n / E2E(n), E2E(n) = A + B·n through (C, C/λ) and
// (slots, full_e2e_s) (A > 0 whenever the replica keeps up). The birth–death chain of that service
// (Kleinrock 1975 §3.5, state-dependent rates): p(n) = p(n − 1)·λ·E2E(n)/n up to the slots, then
// geometric at r = λ·full_e2e_s/slots; an arrival waits with P_wait = P(n ≥ slots) (Poisson arrivals see
// time averages) and the queue's mean length is Lq = p(slots)·r/(1 − r)². The wait, W = Lq/λ for
// exponential service, scales by (1 + cs²)/2 (Allen–Cunneen, Allen 1990 §6; Whitt 1993), cs² the
// squared coefficient of variation of the service: 0 for requests of one length (M/D/c, half the
// M/M/c wait). With full_e2e_s = C/λ (every count served as the mean) it is Erlang C's M/G/c.
// Against the engine's schedule simulated with Poisson arrivals (tests/test_serving_simulation.cpp)
// Erlang C at the mean count's service had waited a third to a tenth of the simulation near the
// slots: the steps slow as the slots fill. 0 when a slot is always free; P_wait 1 and an infinite wait
// when concurrency ≥ slots or λ·full_e2e_s ≥ slots (the queue grows without bound).
struct SlotQueue {
  double wait_probability = 0;  // an arrival finds every slot taken
  double wait_s = 0;            // its mean wait for one
};
SlotQueue slot_queue(double rate_per_s, double slots, double concurrency, double full_e2e_s, double cs2 = 0.0);

// `requests_per_replica`: an offline run's requests per replica (0: an endless stream).
Concurrency inflight_concurrency(const ServingSetup& S, long long kv_capacity_sequences, double rate_per_replica_per_s,
                                 double requests_per_replica);

}  // namespace cutlab
