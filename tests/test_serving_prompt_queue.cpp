// The bulk-service queue of a replica that only prefills (core/serving_prompt_queue.h), against
// queueing formulas worked by hand. (Against the engine's schedule simulated step by step:
// tests/test_serving_simulation.cpp.)
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "core/api.h"
#include "core/serving_prompt_queue.h"

using namespace cutlab;
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
