// The bulk-service queue of a replica that only prefills (core/serving_prompt_queue.h), against
// queueing formulas worked by hand. (Against the engine's schedule simulated step by step:
// tests/test_serving_simulation.cpp.)
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "core/api.h"
#include "core/serving_prompt_queue.h"

using namespace cutlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("a replica that prefills one prompt a step is M/D/1", "[inference]") {
  // Llama 3 70B TP 8, batch 1, 2,048-token prompts and one output token: every step one prompt, τ
  // long. Poisson arrivals at λ: the Pollaczek–Khinchine mean wait, Wq = λτ²/(2(1 − ρ)), ρ = λτ
  // (Kleinrock 1975 §5.6, eq. 5.106 with a deterministic service). Of it, an arrival finds a step in
  // progress with probability ρ and waits half of it, ρτ/2 (step_wait); the rest, ρ²τ/(2(1 − ρ)), it
  // waits behind the prompts queued before it (queue).
  for (const double utilisation : {0.3, 0.6, 0.9}) {
    const std::string base =
        R"({"model":"llama3-70b","cluster":"dgx-h100","plan":{"tp":8},"workload":{"mode":"infer","batch":1,"prompt_len":2048,"output_len":1,"request_rate_per_s":)";
    const api::Answer<api::Evaluated> slow = api::evaluate(base + "0.001}}");
    REQUIRE(slow.ok());
    const InferenceEstimate& s = std::get<ServingEstimate>(slow.result.value.estimate).serving;
    const double tau = s.ttft_s - s.prefill.queue_s - s.prefill.step_wait_s;  // the step of one prompt
    REQUIRE(tau > 0.05);
    const double lambda = std::stod(std::to_string(utilisation / tau));  // as the config carries it
    const api::Answer<api::Evaluated> a = api::evaluate(base + std::to_string(lambda) + "}}");
    REQUIRE(a.ok());
    const InferenceEstimate& e = std::get<ServingEstimate>(a.result.value.estimate).serving;
    const double rho = lambda * tau;
    INFO("ρ " << rho << ": TTFT " << e.ttft_s << " s, step " << tau << " s");
    REQUIRE_THAT(e.ttft_s - e.prefill.queue_s - e.prefill.step_wait_s, WithinRel(tau, 1e-9));
    REQUIRE_THAT(e.prefill.step_wait_s, WithinRel(rho * tau / 2, 1e-9));
    REQUIRE_THAT(e.prefill.queue_s, WithinRel(rho * rho * tau / (2 * (1 - rho)), 1e-9));
    REQUIRE_THAT(e.ttft_s, WithinRel(tau + lambda * tau * tau / (2 * (1 - rho)), 1e-9));
    // Little's law: prompts in a step, λτ.
    REQUIRE_THAT(e.concurrency, WithinRel(rho, 1e-9));
  }
}

TEST_CASE("the bulk queue's chain: two prompts a step of one length", "[inference]") {
  // b = 2, every step τ whatever it holds, arrivals λτ = m per step. From q waiting a step takes
  // min(q, 2); q' = q − min(q, 2) + K, K ~ Poisson(m); from 0 the next arrival's step starts at once
  // (q' = 1). Balance at states 0, 1 (e^{−m} = p₀, m·e^{−m} = p₁ for K): π₀ = π₁·p₀ + π₂·p₀, and
  // π₁ = π₀ + π₁·p₁ + π₂·p₁ + π₃·p₀. With m = 1, checked against the chain's π, which sums to 1.
  const double tau = 0.1, lambda = 10.0;  // m = 1
  const PromptChain c = prompt_chain(lambda, {0.0, tau, tau});
  REQUIRE(c.pi.size() > 10);
  double total = 0;
  for (double x : c.pi) total += x;
  REQUIRE_THAT(total, WithinRel(1.0, 1e-12));
  const double p0 = std::exp(-1.0), p1 = std::exp(-1.0);
  const std::vector<double>& pi = c.pi;
  REQUIRE_THAT(pi[0], WithinRel((pi[1] + pi[2]) * p0, 1e-9));
  REQUIRE_THAT(pi[1], WithinRel(pi[0] + (pi[1] + pi[2]) * p1 + pi[3] * p0, 1e-9));
  // Past capacity (λτ ≥ b) there is no steady state.
  REQUIRE(prompt_chain(20.0, {0.0, tau, tau}).pi.empty());
  REQUIRE(prompt_chain(25.0, {0.0, tau, tau}).pi.empty());
}

TEST_CASE("the bulk queue is bounded: past 256 prompts a step the steady state prices them", "[inference]") {
  // The chain's states and work grow with the prompts a step (b² per state): at most
  // kMaxPromptQueueBatch, past which prompts of a step average out and slot_queue prices them.
  REQUIRE(prompt_chain(100.0, std::vector<double>(kMaxPromptQueueBatch + 1, 0.1)).pi.size() > 0);
  REQUIRE(prompt_chain(100.0, std::vector<double>(kMaxPromptQueueBatch + 2, 0.1)).pi.empty());
  // 6,777 one-token prompts a step (Llama 3 8B, a token budget of 65,536): the steady state's waits.
  const api::Answer<api::Evaluated> a = api::evaluate(
      R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":1},"workload":{"mode":"infer","batch":60000,"prompt_len":1,"output_len":1,"max_num_tokens":65536,"request_rate_per_s":1000}})");
  REQUIRE(a.ok());
  const InferenceEstimate& e = std::get<ServingEstimate>(a.result.value.estimate).serving;
  REQUIRE(e.kv_capacity_sequences > kMaxPromptQueueBatch);
  REQUIRE(std::isfinite(e.ttft_s));
  REQUIRE(e.ttft_s > 0);
}

TEST_CASE("the bulk queue's chain in units of two prompts", "[inference]") {
  // One unit (2 prompts) a step of τ, λτ = m = 1 prompt: K ~ Poisson(1) prompts arrive during a step
  // and count as K/2 units, rounded up with probability (K mod 2)/2, so the mean stays m/2: units
  // 0 with probability p₀ + p₁/2 = 1.5/e, 1 with p₁/2 + p₂ + p₃/2 = (1/2 + 1/2 + 1/12)/e = 13/(12e).
  // From q ≥ 1 units a step takes one; from 0 the next arrival's step starts at once (q' = 1).
  // Balance at 0: π₀ = π₁·u₀; at 1: π₁ = π₀ + π₁·u₁ + π₂·u₀.
  const double tau = 0.1, lambda = 10.0;
  const PromptChain c = prompt_chain(lambda, {0.0, tau}, 1, 2);
  REQUIRE(c.settled);
  const std::vector<double>& pi = c.pi;
  REQUIRE(pi.size() > 10);
  const double u0 = 1.5 / std::exp(1.0), u1 = 13.0 / 12.0 / std::exp(1.0);
  REQUIRE_THAT(pi[0], WithinRel(pi[1] * u0, 1e-9));
  REQUIRE_THAT(pi[1], WithinRel(pi[0] + pi[1] * u1 + pi[2] * u0, 1e-9));
  // Its capacity is a unit's: 2 prompts a step (λτ < 2).
  REQUIRE(prompt_chain(19.0, {0.0, tau}, 1, 2).pi.size() > 0);
  REQUIRE(prompt_chain(20.0, {0.0, tau}, 1, 2).pi.empty());
}

TEST_CASE("the pipelined chain's fixed point settles, and past its budget says so", "[inference]") {
  // Four stages of 0.2 + 3.2·a ms for a prompts, 16 and 32 a step, at 50% and 80% of the capacity:
  // with the passes carried to their limit (Aitken's δ²) the steps before settle to 1e-9 within the
  // 40 passes and the bound on work. (Plain passes, each moving 0.8 or more of the one before, had
  // stopped at the 40th 1e-7 to 4e-5 short of settling on Llama 3 8B PP 4's steps of 16 and 32
  // prompts at 20–95% of its capacity. Nearer the capacity the bound stops them: a pass within 1e-2
  // of the fixed point stands, or prompt_queue counts in units.)
  for (const int b : {16, 32})
    for (const double load : {0.5, 0.8}) {
      std::vector<double> interval(std::size_t(b + 1), 0.0);
      for (int a = 1; a <= b; ++a) interval[std::size_t(a)] = 0.0002 + 0.0032 * a;
      const double lambda = load * b / interval[std::size_t(b)];
      const PromptChain c = prompt_chain(lambda, interval, 4);
      INFO(b << " prompts a step at " << load << " of the capacity: work " << c.work << ", states " << c.pi.size());
      REQUIRE(c.settled);
      REQUIRE_FALSE(c.over_budget);
      REQUIRE(c.work <= kMaxPromptQueueWork);
      // a budget too small for its first passes: no π, and over_budget (the caller then tries units)
      const PromptChain small = prompt_chain(lambda, interval, 4, 1, 1e4);
      REQUIRE(small.pi.empty());
      REQUIRE(small.over_budget);
    }
}

TEST_CASE("the pipelined chain of steps of one length is the chain alone, its far states eliminated once", "[inference]") {
  // Every step τ whatever it holds: the longer of a step and the one before is as long, so the
  // pipelined chain's arrivals are the chain alone's and so is its π, whatever its steps before. Its
  // passes after the first eliminate only the states below b + up (KeptElimination); near the
  // capacity (97%: about 700 states, b + up about 40) the states above must come out as the whole
  // elimination gives them.
  const int b = 8;
  const double tau = 0.01, lambda = 0.97 * b / tau;
  const std::vector<double> interval(std::size_t(b + 1), tau);
  const PromptChain alone = prompt_chain(lambda, interval);
  const PromptChain pipelined = prompt_chain(lambda, interval, 2);
  REQUIRE(pipelined.settled);
  REQUIRE(alone.pi.size() > 256);
  REQUIRE(pipelined.pi.size() == alone.pi.size());
  for (std::size_t q = 0; q < alone.pi.size(); ++q) {
    INFO("state " << q);
    REQUIRE_THAT(pipelined.pi[q], WithinRel(alone.pi[q], 1e-12) || WithinAbs(alone.pi[q], 1e-300));
  }
}

TEST_CASE("the chain's room, kept from call to call, leaves nothing behind", "[inference]") {
  // solve_states works in one room a thread (the band and S, EliminationRoom), kept from evaluation to
  // evaluation so that its megabytes are not fresh pages each time. A chain solved after others of
  // more and fewer states, pipelined or not, must come out as it does in a room of its own: each
  // solved first in a thread of its own, then all in one thread, twice, in an order that leaves the
  // room larger and then smaller than each needs. Equal to the last bit.
  struct Chain {
    int b, stages;
    double load;
  };
  const std::vector<Chain> chains = {{16, 4, 0.99}, {8, 1, 0.3}, {16, 2, 0.9}, {4, 1, 0.97}, {32, 4, 0.5}};
  auto solve = [](const Chain& k) {
    std::vector<double> interval(std::size_t(k.b + 1), 0.0);
    for (int a = 1; a <= k.b; ++a) interval[std::size_t(a)] = 0.0002 + 0.0032 * a;
    return prompt_chain(k.load * k.b / interval[std::size_t(k.b)], interval, k.stages);
  };
  std::vector<PromptChain> fresh(chains.size());
  for (std::size_t i = 0; i < chains.size(); ++i) std::thread([&, i] { fresh[i] = solve(chains[i]); }).join();
  for (int round = 0; round < 2; ++round)
    for (std::size_t i = 0; i < chains.size(); ++i) {
      const PromptChain again = solve(chains[i]);
      INFO("round " << round << ", chain " << i << ": " << fresh[i].pi.size() << " states");
      REQUIRE(fresh[i].pi.size() > 1);
      REQUIRE(again.pi == fresh[i].pi);
      REQUIRE(again.before == fresh[i].before);
    }
}
