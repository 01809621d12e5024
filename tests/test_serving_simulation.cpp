// The in-flight steady state (core/serving_batching.h) against the engine's schedule simulated step by
// step: an independent check of the batching model, sharing only the price of one step (step_cost).
// The simulated engine (vLLM's and TensorRT-LLM's scheduler with chunked prefill, Sarathi-Serve §4):
// `slots` sequences in flight; each step runs one token of every decoding sequence and fills the rest of
// max_num_tokens with prompt chunks, first come first served; a sequence whose prompt ends emits its
// first token and decodes output_len − 1 steps; a freed slot takes the next request at once (every
// request queued: the replica at its capacity). It starts with every slot at a random point of a
// request's life and is measured after a warm-up.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <deque>
#include <random>

#include "core/api.h"
#include "core/disaggregation.h"
#include "core/serving_batching.h"
#include "core/serving_offline_mix.h"
#include "core/serving_step.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

namespace {

struct Simulated {
  double requests_per_s = 0;
  double tpot_s = 0;  // the steps as the decoding sequences meet them
};

struct Request {
  int cls = 0;
  double prompt_left = 0, prefilled = 0, decodes_left = 0, context = 0;
  double arrived_s = 0;  // when it arrived (an open system)
};

// The engine: its requests in flight, each step priced as it runs.
struct Engine {
  const ServingSetup S;
  const Workload& w;
  const RequestClasses classes;
  std::vector<Request> flight;
  std::vector<double> first_tokens;  // the arrival times of the requests whose prompt the last step completed
  explicit Engine(const Resolved& r) : S(r), w(r.config.workload), classes(request_classes(w)) {}

  void admit(int c) {
    flight.push_back({c, double(classes[std::size_t(c)].prompt_len), 0, classes[std::size_t(c)].output_len - 1.0, 0});
  }
  // A request whose prompt another pool prefilled (disaggregated decode): it arrives with its KV and
  // first token, and decodes output_len − 1 steps.
  void admit_prefilled(int c) {
    const LengthClass& k = classes[std::size_t(c)];
    flight.push_back({c, 0, double(k.prompt_len), k.output_len - 1.0, k.prompt_len + 1.0});
  }

  // One step: its cost, its decoding sequences, and the requests it finishes.
  struct Step {
    double cost_s = 0, decodes = 0, finished = 0;
  };
  Step step() {
    // The step: decodes first, then prompt chunks in the budget they leave.
    std::array<double, kMaxLengthClasses> decoding{}, context{}, prompt{}, prompt_context{};
    double budget = w.max_num_tokens, decodes = 0, tokens = 0, kv = 0, chunks = 0, completed = 0;
    for (const Request& q : flight)
      if (q.prompt_left <= 0) decoding[std::size_t(q.cls)] += 1, context[std::size_t(q.cls)] += q.context, decodes += 1, budget -= 1;
    std::vector<double> chunk(flight.size(), 0.0);
    for (std::size_t i = 0; i < flight.size() && budget >= 1; ++i) {
      Request& q = flight[i];
      if (q.prompt_left <= 0) continue;
      chunk[i] = std::min(q.prompt_left, budget);
      budget -= chunk[i];
      tokens += chunk[i], kv += q.prefilled, chunks += 1;
      prompt[std::size_t(q.cls)] += chunk[i], prompt_context[std::size_t(q.cls)] += chunk[i] * (q.prefilled + chunk[i] / 2);
      if (chunk[i] >= q.prompt_left) completed += 1;
    }
    std::array<ContextPart, kMaxLengthClasses> dparts{}, pparts{};
    StepLoad load;
    load.decode_seqs = decodes;
    for (std::size_t i = 0; i < classes.size(); ++i) {
      const double cx = decoding[i] > 0 ? context[i] / decoding[i] : 0.0;
      dparts[i] = {decodes > 0 ? decoding[i] / decodes : 0.0, cx, cx};  // these contexts exactly
      load.decode_context += dparts[i].share * cx;
      const double px = prompt[i] > 0 ? prompt_context[i] / prompt[i] : 0.0;
      pparts[i] = {tokens > 0 ? prompt[i] / tokens : 0.0, px, 0.0};
      load.prefill_context += pparts[i].share * px;
    }
    if (decodes > 0) load.decode_parts = dparts.data(), load.decode_part_count = int(classes.size());
    if (tokens > 0) load.prefill_parts = pparts.data(), load.prefill_part_count = int(classes.size());
    load.prefill_tokens = tokens, load.prefill_kv_tokens = kv, load.prefill_seqs = chunks;
    load.prompt_len = completed > 0 ? tokens / completed : 1e18;  // the prompts it completes sample
    const double cost = pipeline_cycle_s(step_cost(S, load), 0.0);
    // After it: decodes advance, chunks advance their prompts; finished requests leave.
    std::vector<Request> next;
    first_tokens.clear();
    double finished = 0;
    for (std::size_t i = 0; i < flight.size(); ++i) {
      Request q = flight[i];
      if (q.prompt_left <= 0) {
        q.decodes_left -= 1, q.context += 1;
        if (q.decodes_left <= 0) {
          finished += 1;
          continue;
        }
      } else {
        q.prompt_left -= chunk[i], q.prefilled += chunk[i];
        if (q.prompt_left <= 0) {
          q.context = q.prefilled + 1, first_tokens.push_back(q.arrived_s);
          if (q.decodes_left <= 0) {  // one output token (a prefill pool's): done with its first
            finished += 1;
            continue;
          }
        }
      }
      next.push_back(q);
    }
    flight.swap(next);
    return {cost, decodes, finished};
  }
};

std::discrete_distribution<int> class_draw(const RequestClasses& classes) {
  std::vector<double> shares;
  for (const LengthClass& k : classes) shares.push_back(k.share);
  return std::discrete_distribution<int>(shares.begin(), shares.end());
}

Simulated simulate(const Resolved& r, double slots, long long warmup_steps, long long steps) {
  Engine e(r);
  std::mt19937 rng(12345);
  std::discrete_distribution<int> draw = class_draw(e.classes);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < int(slots); ++i) {  // each slot at a random point of a request's decode
    const int c = draw(rng);
    const LengthClass& k = e.classes[std::size_t(c)];
    const double done = std::floor(unit(rng) * (k.output_len - 1));
    e.flight.push_back({c, 0, double(k.prompt_len), k.output_len - 1.0 - done, k.prompt_len + 1.0 + done});
  }
  double wall = 0, finished = 0, decoded = 0, decode_weighted = 0;
  for (long long step = 0; step < warmup_steps + steps; ++step) {
    while (double(e.flight.size()) < slots) e.admit(draw(rng));
    const Engine::Step x = e.step();
    if (step >= warmup_steps) wall += x.cost_s, finished += x.finished, decoded += x.decodes, decode_weighted += x.decodes * x.cost_s;
  }
  return {finished / wall, decode_weighted / decoded};
}

// An open system: requests arriving at random, `rate_per_s` (Poisson: the arrivals during a step are
// Poisson with mean rate × its length), waiting for one of `slots` in flight; the decode-weighted step
// (TPOT) after a warm-up; `seed` draws the arrivals and the classes. `prefilled`: a disaggregated
// decode pool's, each request arriving with its KV.
double simulate_open_tpot_s(const Resolved& r, double slots, double rate_per_s, long long warmup_steps, long long steps, unsigned seed,
                            bool prefilled = false) {
  Engine e(r);
  std::mt19937 rng(seed);
  std::discrete_distribution<int> draw = class_draw(e.classes);
  double waiting = 0, last_s = 0.01, decoded = 0, decode_weighted = 0;
  for (long long step = 0; step < warmup_steps + steps; ++step) {
    waiting += std::poisson_distribution<int>(rate_per_s * last_s)(rng);
    for (; double(e.flight.size()) < slots && waiting > 0; waiting -= 1) prefilled ? e.admit_prefilled(draw(rng)) : e.admit(draw(rng));
    const Engine::Step x = e.step();
    last_s = x.cost_s;
    if (step >= warmup_steps) decoded += x.decodes, decode_weighted += x.decodes * x.cost_s;
  }
  return decode_weighted / decoded;
}

// An offline run: `requests` queued at once in a random order of the classes (each class its share of
// them, shuffled), at most `slots` in flight, from the first step to the last token; the mean of
// `orders` orders.
double simulate_offline_s(const Resolved& r, double slots, long long requests, int orders) {
  double total = 0;
  for (int o = 0; o < orders; ++o) {
    Engine e(r);
    std::mt19937 rng(777 + unsigned(o));
    std::vector<int> queue;
    for (std::size_t i = 0; i < e.classes.size(); ++i)
      for (long long j = 0; j < std::llround(double(requests) * e.classes[i].share); ++j) queue.push_back(int(i));
    queue.resize(std::size_t(requests), 0);
    std::shuffle(queue.begin(), queue.end(), rng);
    std::size_t next = 0;
    while (next < queue.size() || !e.flight.empty()) {
      while (double(e.flight.size()) < slots && next < queue.size()) e.admit(queue[next++]);
      total += e.step().cost_s;
    }
  }
  return total / orders;
}

void check(const std::string& config) {
  const api::Answer<api::Evaluated> a = api::evaluate(config);
  REQUIRE(a.ok());
  const InferenceEstimate& r = std::get<ServingEstimate>(a.result.value.estimate).serving;
  REQUIRE_FALSE(r.token_budget_bound);
  const Simulated sim = simulate(a.result.value.resolved, r.concurrency, 5000, 40000);
  INFO(config << "\n simulated " << sim.requests_per_s << " requests/s, TPOT " << sim.tpot_s << " s; cutlab " << r.requests_per_s
              << ", " << r.tpot_s);
  REQUIRE_THAT(r.requests_per_s, WithinRel(sim.requests_per_s, 0.015));
  REQUIRE_THAT(r.tpot_s, WithinRel(sim.tpot_s, 0.015));
}

const char* kLlama = R"({"model":"llama3-70b","cluster":"dgx-h100","plan":{"tp":8},"workload":{"mode":"infer","batch":64,)";

}  // namespace

TEST_CASE("the steady state serves what the engine's schedule, simulated step by step, serves", "[inference][simulation]") {
  // Uniform lengths (the mean step priced these 11.8%, 14.5% and 6.3% faster than the schedule runs), a
  // prompt of two chunks, and a mix of lengths (4.9%).
  check(std::string(kLlama) + R"("prompt_len":1000,"output_len":200}})");
  check(std::string(kLlama) + R"("prompt_len":2048,"output_len":1024}})");
  check(std::string(kLlama) + R"("prompt_len":8192,"output_len":1024}})");
  check(std::string(kLlama) +
        R"("length_mix":[{"prompt_len":1000,"output_len":200,"share":0.7},{"prompt_len":8000,"output_len":500,"share":0.3}]}})");
  // An MoE model whose experts' reads grow with the step's tokens.
  check(
      R"({"model":"qwen3-30b-a3b","cluster":"hgx-h200","workload":{"mode":"infer","batch":512,"prompt_len":1024,"output_len":1024}})");
}

namespace {

void check_offline(const std::string& config, double tolerance) {
  const api::Answer<api::Evaluated> a = api::evaluate(config);
  REQUIRE(a.ok());
  const Resolved& r = a.result.value.resolved;
  const InferenceEstimate& e = std::get<ServingEstimate>(a.result.value.estimate).serving;
  const double simulated_s = simulate_offline_s(r, e.concurrency, r.config.workload.num_requests, 4);
  INFO(config << "\n simulated " << simulated_s << " s; cutlab " << e.run_s << " s");
  REQUIRE_THAT(e.run_s, WithinRel(simulated_s, tolerance));
}

}  // namespace

TEST_CASE("an offline run of mixed lengths takes what the engine's schedule, simulated, takes", "[inference][simulation]") {
  // A replayed schedule against random orders of the same requests. Priced from the steady state's
  // end-to-end latencies (before 2026-12-05) the first three runs came out 48%, 20% and 6% long: their
  // start (every prompt at once, in full steps) and their end (a few sequences decoding, no prompt)
  // are not the steady state. The last runs past kMaxReplayedSteps: its middle at the steady rate.
  const std::string
      mix = R"("length_mix":[{"prompt_len":1000,"output_len":200,"share":0.7},{"prompt_len":8000,"output_len":500,"share":0.3}]}})";
  check_offline(std::string(kLlama) + R"("num_requests":64,)" + mix, 0.01);
  check_offline(std::string(kLlama) + R"("num_requests":256,)" + mix, 0.01);
  check_offline(std::string(kLlama) + R"("num_requests":640,)" + mix, 0.01);
  check_offline(std::string(kLlama) + R"("num_requests":2560,)" + mix, 0.015);
  // Three classes, one of long prompts and short outputs, on 128 slots; and an MoE model.
  const std::string three =
      R"("length_mix":[{"prompt_len":128,"output_len":128,"share":0.4},{"prompt_len":1000,"output_len":1000,"share":0.4},{"prompt_len":8000,"output_len":200,"share":0.2}]}})";
  check_offline(R"({"model":"llama3-8b","cluster":"dgx-h100","workload":{"mode":"infer","batch":128,"num_requests":1280,)" + three,
                0.01);
  check_offline(R"({"model":"qwen3-30b-a3b","cluster":"hgx-h200","workload":{"mode":"infer","batch":512,"num_requests":2048,)" + three,
                0.015);
}

namespace {

// The Llama 3 70B replica of 64 slots at `rate` requests/s of 2048/512.
std::string at_rate(double rate) {
  return std::string(kLlama) + R"("request_rate_per_s":)" + std::to_string(rate) + R"(,"prompt_len":2048,"output_len":512}})";
}

// An open system: requests arriving at random (Poisson, `rate_per_s`), first come first served into
// `slots`; the means over 8 seeds of 10^5 steps, the first 2·10^4 a warm-up, of TTFT (from arrival to
// the end of the step that completes the prompt) and of the wait from arrival to admission (for a
// slot, then for the step in progress). An engine with nothing in flight or waiting idles until the
// next arrival, whose step starts at once. `prefilled`: a disaggregated decode pool's, each request
// arriving with its KV (no TTFT).
struct OpenWaits {
  double ttft_s = 0, admission_wait_s = 0;
};
OpenWaits simulate_open_waits(const Resolved& r, std::size_t slots, double rate_per_s, bool prefilled = false) {
  double ttft_s = 0, first_tokens = 0, wait_s = 0, admitted = 0;
  for (unsigned seed = 1; seed <= 8; ++seed) {
    Engine engine(r);
    std::mt19937 rng(seed);
    std::exponential_distribution<double> gap(rate_per_s);
    std::deque<double> waiting;  // arrival times
    double t = 0, next_arrival = 0;
    for (long long step = 0; step < 100000; ++step) {
      if (engine.flight.empty() && waiting.empty()) t = std::max(t, next_arrival);  // idle until the next arrival
      for (; next_arrival <= t; next_arrival += gap(rng)) waiting.push_back(next_arrival);
      for (; engine.flight.size() < slots && !waiting.empty(); waiting.pop_front()) {
        prefilled ? engine.admit_prefilled(0) : engine.admit(0);
        engine.flight.back().arrived_s = waiting.front();
        if (step >= 20000) wait_s += t - waiting.front(), admitted += 1;
      }
      t += engine.step().cost_s;
      if (step >= 20000)
        for (const double arrived : engine.first_tokens) ttft_s += t - arrived, first_tokens += 1;
    }
  }
  return {first_tokens > 0 ? ttft_s / first_tokens : 0.0, wait_s / admitted};
}

// A replica that only prefills (one output token), its pp stages simulated one by one: prompts arrive
// at random (Poisson, `rate_per_s`); a micro-batch starts when the first stage is free and one of the
// pp micro-batches' slots are (the one pp before it has left the last stage), and takes up to `batch`
// of the prompts waiting (or, none waiting, the next to arrive); it walks the stages, each starting
// after the hand-off from the one before and when it is free, each stage's time priced by step_cost
// for the micro-batch's prompts. TTFT: from arrival to the end of its walk; the mean over 8 seeds of
// 10^5 micro-batches, the first 2·10^4 a warm-up.
double simulate_pipelined_prefill_ttft_s(const Resolved& r, int batch, double rate_per_s) {
  const ServingSetup S(r);
  const double isl = double(r.config.workload.prompt_len);
  const ContextPart part{1.0, isl / 2.0, 0.0};
  std::vector<StepCost> steps(std::size_t(batch + 1));
  for (int a = 1; a <= batch; ++a) {
    StepLoad load;
    load.prefill_tokens = a * isl, load.prefill_seqs = a, load.prompt_len = isl;
    load.prefill_context = part.context, load.prefill_parts = &part, load.prefill_part_count = 1;
    steps[std::size_t(a)] = step_cost(S, load);
  }
  const std::size_t pp = steps[1].stage_s.size();
  double ttft_s = 0, served = 0;
  for (unsigned seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    std::exponential_distribution<double> gap(rate_per_s);
    std::deque<double> waiting;
    std::vector<double> stage_free(pp, 0.0), left(pp, 0.0);  // left: when each of the last pp micro-batches left
    double next_arrival = gap(rng);
    for (long long m = 0; m < 100000; ++m) {
      double t = std::max(stage_free[0], left[std::size_t(m) % pp]);
      for (; next_arrival <= t; next_arrival += gap(rng)) waiting.push_back(next_arrival);
      if (waiting.empty()) t = next_arrival, waiting.push_back(next_arrival), next_arrival += gap(rng);
      const int a = int(std::min<std::size_t>(std::size_t(batch), waiting.size()));
      const StepCost& c = steps[std::size_t(a)];
      double end = t;
      for (std::size_t j = 0; j < pp; ++j) {
        const double start = j == 0 ? t : std::max(end + c.pp_send_s, stage_free[j]);
        end = start + c.stage_s[j];
        stage_free[j] = end;
      }
      left[std::size_t(m) % pp] = end;
      for (int i = 0; i < a; ++i) {
        if (m >= 20000) ttft_s += end - waiting.front(), served += 1;
        waiting.pop_front();
      }
    }
  }
  return ttft_s / served;
}

}  // namespace

TEST_CASE("at a request rate, TPOT is the steps' mean over the sequences in flight as they wander", "[inference][simulation]") {
  // Llama 3 70B on 8 H100 (TP 8), 64 slots, 2048/512 arriving at random at 1, 2 and 4 requests/s; the
  // simulation's mean over 8 seeds (one run of 10^5 steps wanders by ±3% at 4 requests/s, where the
  // count in flight reaches the 64 slots). Its TPOT had been 2.8%, 3.0% and 2.0% above cutlab's, whose
  // steps were those of the mean count in flight; with the count's spread (β·Var(n)/C,
  // core/serving_batching.h) 1.5%, 1.7% and 0.5%; with a prompt arriving beside the sequences in flight
  // instead of in the slot of one that left (serving_batching.h), within 0.2%, 0.1% and 0.9% (0.2%, 0.1% and
  // 0.5% since the queue for a slot, slot_queue, sets which prompts are open). At 1 and 2
  // requests/s the steps of the mean count, closed, are further off; at 4, with the slots nearly full,
  // the closed system is the better picture (0.3%), which the prompts that wait for a slot carry over.
  for (const double rate : {1.0, 2.0, 4.0}) {
    const api::Answer<api::Evaluated> a = api::evaluate(at_rate(rate));
    REQUIRE(a.ok());
    const Resolved& r = a.result.value.resolved;
    const InferenceEstimate& e = std::get<ServingEstimate>(a.result.value.estimate).serving;
    REQUIRE(e.concurrency_limit == ConcurrencyLimit::RequestRate);
    double simulated = 0;
    for (unsigned seed = 1; seed <= 8; ++seed) simulated += simulate_open_tpot_s(r, 64, rate, 20000, 100000, seed) / 8;
    // The steady state at the same count in flight, closed: its steps at that count alone.
    const BatchingState closed = inflight_state(ServingSetup(r), e.concurrency);
    INFO(rate << " requests/s: simulated TPOT " << simulated << " s, cutlab " << e.tpot_s << " s, at the mean count "
              << closed.tpot_s);
    if (rate < 4) REQUIRE(std::abs(e.tpot_s - simulated) < std::abs(closed.tpot_s - simulated));
    REQUIRE_THAT(e.tpot_s, WithinRel(simulated, 0.01));
  }
}

TEST_CASE("a disaggregated decode pool at a request rate: TPOT over the sequences in flight as they wander",
          "[disaggregation][simulation]") {
  // The decode pool of Llama 3 70B on 8 H100 (TP 8, 64 slots), 2048/512, requests arriving prefilled
  // at random at 1, 2 and 4 requests/s (its capacity is about 6.9); the simulation's mean over 8 seeds.
  // decode_at prices the steps of the mean count in flight plus β·Var(n)/C, as the co-located model:
  // the simulation's 11.17, 11.96 and 13.93 ms had been 1.1% above the steps at the mean count, now
  // within 0.1%, 0.2% and 0.5% of cutlab's.
  const api::Answer<Resolved> pool = api::resolve(R"({"model":"llama3-70b","cluster":{"preset":"dgx-h100","gpus":8},"plan":{"tp":8},
    "workload":{"mode":"infer","prompt_len":2048,"output_len":512,"batch":64}})");
  REQUIRE(pool.ok());
  const Resolved& r = pool.result.value;
  for (const double rate : {1.0, 2.0, 4.0}) {
    const PoolLoad at_rate = decode_at(r, rate, 64, true), at_mean = decode_at(r, rate, 64, false);
    double simulated = 0;
    for (unsigned seed = 1; seed <= 8; ++seed) simulated += simulate_open_tpot_s(r, 64, rate, 20000, 100000, seed, true) / 8;
    INFO(rate << " requests/s: simulated TPOT " << simulated << " s, cutlab " << at_rate.latency_s << " s, at the mean count "
              << at_mean.latency_s);
    REQUIRE(at_rate.latency_s > at_mean.latency_s);
    REQUIRE(std::abs(at_rate.latency_s - simulated) < std::abs(at_mean.latency_s - simulated));
    REQUIRE_THAT(at_rate.latency_s, WithinRel(simulated, 0.01));
  }
}

TEST_CASE("at a request rate a request waits for the step in progress before its first", "[inference][simulation]") {
  // Llama 3 70B on 8 H100 (TP 8), 64 slots, 2048/512 arriving at random at 1 and 2 requests/s: the
  // simulated TTFT, from arrival to the end of the step that completes the prompt (8 seeds), against
  // cutlab's. Without the wait for the step in progress, the residual of a step at a random time
  // (E[τ²]/2E[τ]: the prompts' 101 ms steps are 1.2% of the steps but 9% of the time), TTFT had been
  // 10.0% and 16.0% under the simulation's 113.7 and 125.2 ms; with it 0.9% and 3.3%; and with the
  // prompts that arrived during that step beside the request's own chunk in its first step (a
  // length-biased step's arrivals, lumpy_steps), 0.2% and 0.8%, and 1.9% at 3 requests/s. (Near the
  // slots, the wait for one: the next test.)
  for (const double rate : {1.0, 2.0, 3.0}) {
    const api::Answer<api::Evaluated> a = api::evaluate(at_rate(rate));
    REQUIRE(a.ok());
    const Resolved& r = a.result.value.resolved;
    const InferenceEstimate& e = std::get<ServingEstimate>(a.result.value.estimate).serving;
    const double simulated = simulate_open_waits(r, 64, rate).ttft_s;
    INFO(rate << " requests/s: simulated TTFT " << simulated << " s, cutlab " << e.ttft_s << " s, of which the step in progress "
              << e.prefill.step_wait_s << " s");
    REQUIRE(e.prefill.step_wait_s > 0);
    REQUIRE(std::abs(e.ttft_s - simulated) < std::abs(e.ttft_s - e.prefill.step_wait_s - simulated));
    REQUIRE_THAT(e.ttft_s, WithinRel(simulated, 0.025));
  }
}

TEST_CASE("near its slots a request waits for one as the simulated schedule does", "[inference][simulation]") {
  // The same replica at 3.75, 4 and 4.1 requests/s (its 64 slots serve about 4.23): 48 to 60 of them in
  // flight, and an arrival finds all 64 taken 13–65% of the time. Erlang C with every count served at the
  // mean count's speed had waited a fraction of the simulation's (TTFT 50%, 68% and 61% under its 308 ms,
  // 1.21 s and 2.96 s): as the slots fill the steps slow, and the queue meets the slowest service.
  // slot_queue (core/serving_batching.h) serves each count at its own speed: 11%, 11% and 9% under.
  for (const double rate : {3.75, 4.0, 4.1}) {
    const api::Answer<api::Evaluated> a = api::evaluate(at_rate(rate));
    REQUIRE(a.ok());
    const InferenceEstimate& e = std::get<ServingEstimate>(a.result.value.estimate).serving;
    REQUIRE_FALSE(e.saturated);
    const double simulated = simulate_open_waits(a.result.value.resolved, 64, rate).ttft_s;
    // Erlang C: the count's chain with every count's service the mean's, C/λ.
    const double erlang_c = e.ttft_s - e.prefill.queue_s + slot_queue(rate, 64, e.concurrency, e.concurrency / rate).wait_s;
    INFO(rate << " requests/s: simulated TTFT " << simulated << " s, cutlab " << e.ttft_s << " s (" << e.prefill.queue_s
              << " s for a slot), with Erlang C " << erlang_c << " s");
    REQUIRE(std::abs(e.ttft_s - simulated) < 0.5 * std::abs(erlang_c - simulated));
    REQUIRE_THAT(e.ttft_s, WithinRel(simulated, 0.2));
  }
}

TEST_CASE("a disaggregated decode pool near its slots: the wait for one as the simulated schedule's", "[disaggregation][simulation]") {
  // The decode pool above (64 slots, capacity about 6.9 requests/s) at 6, 6.5 and 6.7 requests/s,
  // requests arriving prefilled at random: the simulated wait from arrival to admission (for a slot,
  // then for the step in progress) 59 ms, 0.53 s and 1.72 s. Erlang C at the mean count's service had
  // said 62%, 32% and 1% less (without the step in progress); slot_queue with it 32%, 13% and 6% more
  // (19, 69 and 104 ms).
  const api::Answer<Resolved> pool = api::resolve(R"({"model":"llama3-70b","cluster":{"preset":"dgx-h100","gpus":8},"plan":{"tp":8},
    "workload":{"mode":"infer","prompt_len":2048,"output_len":512,"batch":64}})");
  REQUIRE(pool.ok());
  const Resolved& r = pool.result.value;
  for (const double rate : {6.0, 6.5, 6.7}) {
    const PoolLoad at = decode_at(r, rate, 64, true);
    const double simulated = simulate_open_waits(r, 64, rate, true).admission_wait_s,
                 erlang_c = slot_queue(rate, 64, at.in_flight, at.in_flight / rate).wait_s;
    INFO(rate << " requests/s: simulated wait " << simulated << " s, cutlab " << at.queue_s << " s, Erlang C " << erlang_c << " s");
    REQUIRE(std::abs(at.queue_s / simulated - 1.0) < 0.35);
    if (rate < 6.7) REQUIRE(std::abs(at.queue_s - simulated) < std::abs(erlang_c - simulated));
  }
}

TEST_CASE("a prefill-only replica near its capacity: the wait for a slot as the simulated schedule's", "[inference][simulation]") {
  // A disaggregated prefill pool's instance: Llama 3 70B TP 8, 4 slots of 2,048-token prompts, one
  // output token (capacity about 10.4 prompts/s). Simulated TTFT at 4, 8, 9 and 9.5 prompts/s: 141,
  // 321, 493 and 691 ms. The count's birth–death chain (slot_queue) had been 16%, 39%, 37% and 32% under
  // (Erlang C at the mean count's service 18%, 62%, 76% and 84%): a prompt holds its slot for one step,
  // and its wait is set by the prompts that arrive during a step. The bulk-service queue
  // (core/serving_prompt_queue.h): within 0.5%.
  for (const double rate : {4.0, 8.0, 9.0, 9.5}) {
    const api::Answer<api::Evaluated> a = api::evaluate(
        std::string(kLlama).replace(std::string(kLlama).find("\"batch\":64"), 10, "\"batch\":4") + R"("request_rate_per_s":)" +
        std::to_string(rate) + R"(,"prompt_len":2048,"output_len":1}})");
    REQUIRE(a.ok());
    const InferenceEstimate& e = std::get<ServingEstimate>(a.result.value.estimate).serving;
    REQUIRE_FALSE(e.saturated);
    const double simulated = simulate_open_waits(a.result.value.resolved, 4, rate).ttft_s;
    INFO(rate << " prompts/s: simulated TTFT " << simulated << " s, cutlab " << e.ttft_s << " s");
    REQUIRE_THAT(e.ttft_s, WithinRel(simulated, 0.015));
  }
}

TEST_CASE("a prefill-only replica with pipeline stages: each micro-batch's step behind the ones before", "[inference][simulation]") {
  // Its stages simulated one by one (simulate_pipelined_prefill_ttft_s). Llama 3 70B at TP 4 × PP 2, 4
  // prompts of 2,048 tokens a micro-batch, 2 to 11 prompts/s (capacity about 13.2): simulated TTFT
  // 165–711 ms. A step's interval as its own batch's alone had been up to 27% under (a micro-batch
  // after a longer one starts no sooner than that one's next, and waits for it at the second stage);
  // with the step before's batch, 0.5% to 6.3% over. Llama 3 8B at TP 1 × PP 2, 16 prompts of 512
  // tokens, 30–95% of its capacity: 0.3% to 6.6% over. Llama 3 70B at TP 2 × PP 4 at 30%, 60% and 95%
  // (4.5, 9.1 and 14.4 prompts/s): the longest step within pp − 1 before, +8.5%, −3.6% and −2.2%
  // (with the step before alone +0.1%, −26.8% and −5.1%).
  auto check_pipelined = [](const std::string& config, double rate, double under, double over) {
    const api::Answer<api::Evaluated> a = api::evaluate(config + R"(,"request_rate_per_s":)" + std::to_string(rate) + "}}");
    REQUIRE(a.ok());
    const InferenceEstimate& e = std::get<ServingEstimate>(a.result.value.estimate).serving;
    REQUIRE_FALSE(e.saturated);
    REQUIRE(e.replicas == 1);
    const double simulated = simulate_pipelined_prefill_ttft_s(a.result.value.resolved, a.result.value.resolved.config.workload.batch,
                                                               rate);
    INFO(config << " at " << rate << " prompts/s: simulated TTFT " << simulated << " s, cutlab " << e.ttft_s << " s");
    REQUIRE(e.ttft_s > (1.0 - under) * simulated);
    REQUIRE(e.ttft_s < (1.0 + over) * simulated);
  };
  const std::string llama70 =
      R"({"model":"llama3-70b","cluster":"dgx-h100","plan":{"tp":4,"pp":2},"workload":{"mode":"infer","batch":4,"prompt_len":2048,"output_len":1)";
  for (const double rate : {2.0, 6.0, 8.0, 11.0}) check_pipelined(llama70, rate, 0.01, 0.08);
  const std::string llama8 =
      R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":2},"plan":{"tp":1,"pp":2},"workload":{"mode":"infer","batch":16,"prompt_len":512,"output_len":1)";
  for (const double rate : {23.0, 34.5}) check_pipelined(llama8, rate, 0.01, 0.08);
  const std::string deep =
      R"({"model":"llama3-70b","cluster":"dgx-h100","plan":{"tp":2,"pp":4},"workload":{"mode":"infer","batch":4,"prompt_len":2048,"output_len":1)";
  for (const double rate : {4.5, 9.1, 14.4}) check_pipelined(deep, rate, 0.08, 0.10);
}

TEST_CASE("a prefill-only replica of many prompts a step near its capacity: the chain in units where prompts cost too much",
          "[inference][simulation]") {
  // Llama 3 8B with a token budget of 65,536: 64 and 128 prompts of 512 tokens a step at PP 2, 256 of
  // 256 at PP 1, at 90% and 95% of its capacity. The chain in prompts would pass its bound on work
  // (kMaxPromptQueueWork), and the steady state (slot_queue) had priced them: 96% to 98% under the
  // simulated TTFT at PP 2, 73% and 71% at PP 1. In units of 2 or 4 prompts (prompt_queue), against
  // the simulation: PP 2 +0.3% to +2.7% (the chain in prompts, unbounded, +0.0% to +1.3%); PP 1 +1.5%
  // and +8.7%.
  auto check = [](int pp, int batch, int prompt, double load, double over) {
    const std::string head = R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":)" + std::to_string(pp) +
                             R"(},"plan":{"tp":1,"pp":)" + std::to_string(pp) + R"(},"workload":{"mode":"infer","batch":)" +
                             std::to_string(batch) + R"(,"prompt_len":)" + std::to_string(prompt) +
                             R"(,"output_len":1,"max_num_tokens":65536)";
    const api::Answer<api::Evaluated> offline = api::evaluate(head + "}}");
    REQUIRE(offline.ok());
    const double rate = load * std::get<ServingEstimate>(offline.result.value.estimate).serving.requests_per_s;
    const api::Answer<api::Evaluated> a = api::evaluate(head + R"(,"request_rate_per_s":)" + std::to_string(rate) + "}}");
    REQUIRE(a.ok());
    const InferenceEstimate& e = std::get<ServingEstimate>(a.result.value.estimate).serving;
    REQUIRE_FALSE(e.saturated);
    const double simulated = simulate_pipelined_prefill_ttft_s(a.result.value.resolved, batch, rate);
    INFO("PP " << pp << ", " << batch << " prompts a step at " << load << " of its capacity: simulated TTFT " << simulated
               << " s, cutlab " << e.ttft_s << " s");
    REQUIRE(e.ttft_s > 0.99 * simulated);
    REQUIRE(e.ttft_s < (1.0 + over) * simulated);
  };
  for (const double load : {0.9, 0.95}) {
    check(2, 64, 512, load, 0.04);
    check(2, 128, 512, load, 0.04);
    check(1, 256, 256, load, 0.10);
  }
}

TEST_CASE("a prefill-only replica's TTFT grows with its request rate, whatever prices it", "[inference]") {
  // Llama 3 8B PP 2, 128 prompts of 512 tokens a step: from 30% to 99% of its capacity the chain in
  // prompts, then in units as its work grows (18 ms at 30%, 437 ms at 90%, 2.07 s at 98%). Where the
  // bound on work had handed it to the steady state, TTFT fell between neighbouring rates: with 32
  // prompts a step from 200 ms at 85% of the capacity to 18 ms at 90%; with 128 the steady state had
  // priced every rate from 30% up, 16 to 64 ms.
  const std::string head =
      R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":2},"plan":{"tp":1,"pp":2},"workload":{"mode":"infer","batch":128,"prompt_len":512,"output_len":1,"max_num_tokens":65536)";
  const api::Answer<api::Evaluated> offline = api::evaluate(head + "}}");
  REQUIRE(offline.ok());
  const double capacity = std::get<ServingEstimate>(offline.result.value.estimate).serving.requests_per_s;
  double last = 0;
  for (double load = 0.3; load < 0.995; load += 0.01) {
    const api::Answer<api::Evaluated> a = api::evaluate(head + R"(,"request_rate_per_s":)" + std::to_string(load * capacity) + "}}");
    REQUIRE(a.ok());
    const double ttft = std::get<ServingEstimate>(a.result.value.estimate).serving.ttft_s;
    INFO(load << " of the capacity: TTFT " << ttft << " s, " << last << " s at the rate before");
    REQUIRE(ttft >= last);
    last = ttft;
  }
}
