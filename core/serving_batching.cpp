#include "core/serving_batching.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace cutlab {

double spec_tokens_per_step(int drafts, double a) {
  if (drafts <= 0) return 1.0;
  if (a >= 1.0) return drafts + 1.0;
  return (1.0 - std::pow(a, drafts + 1.0)) / (1.0 - a);  // Leviathan et al. 2023, eq. 1
}

double pipeline_cycle_s(const StepCost& step, double draft_s) {
  if (step.stage_s.empty()) return draft_s;
  double slowest = 0;
  for (size_t i = 0; i < step.stage_s.size(); ++i)
    slowest = std::max(slowest, step.stage_s[i] + (i + 1 == step.stage_s.size() ? draft_s : 0.0));
  return std::max(step.walk_s() + draft_s, double(step.stage_s.size()) * slowest);
}

namespace {

// A step's prompt chunks (serving_batching.h): each of the c sequences of a micro-batch is prefilling a
// prompt of class i with probability π_i = held_i / c (its n_pf,i steps of a request's n_pf,i +
// n_dec,i), else decoding; a prefilling one puts its chunk_i tokens in the step. So the step's prompt
// tokens X are a compound binomial, N ~ Binomial(c, π) prefilling sequences, each a chunk of class i
// with probability π_i/π, whose distribution on a lattice of the room (what the decodes leave of the
// budget) follows Panjer's recursion for the (a, b, 0) class (Panjer 1981, "Recursive evaluation of a
// family of compound distributions", ASTIN Bulletin 12: binomial a = −π/(1−π), b = (c+1)·π/(1−π)).
// Tokens past the room wait for a later step (first come, first served): mass moves from the emptiest
// steps to full ones until the mean is the mean load's. Each point's step is priced (step_cost, at most
// kLumpPoints of them, linear between), and averaged as a decoding sequence meets the steps (weighted
// by the decodes each runs: its TPOT) and as a prompt meets its own (its chunk beside the others':
// given one prefilling sequence, the others are distributed as before, Palm).
struct LumpySteps {
  bool ok = false;
  StepCost decode_step;
  double decode_draft_s = 0, decode_cycle_s = 0;
  std::array<StepCost, kMaxLengthClasses> own_step{};
  std::array<double, kMaxLengthClasses> own_cycle_s{};
  double residual_s = 0;  // what is left of the step in progress at a random time: E[τ²] / (2·E[τ]) over the steps
};

LumpySteps lumpy_steps(const ServingSetup& S, const StepLoad& mean, double room, double c, const double* held, const double* chunk,
                       const double* prompts, int K, double open) {
  LumpySteps out;
  constexpr int kBins = 64, kLumpPoints = 12;
  const double E = mean.prefill_tokens;  // prompt tokens in the mean step
  double lambda = 0;                     // prefilling sequences in the mean step
  for (int i = 0; i < K; ++i) lambda += held[i];
  const double pi = c > 0 ? lambda / c : 0.0;
  if (!(E > 0) || !(lambda > 0) || !(pi < 1.0 - 1e-9) || !(room >= 1.0)) return out;  // every sequence prefilling: no lumps
  // P(N = 0) = (1 − π)^c as 1 / Σ_k C(c, k)·(π/(1 − π))^k, by the terms' ratio: arithmetic alone, so
  // that the page's WebAssembly and the CLI agree to the last bit (no libm pow). A fractional count (at
  // a request rate, Little's law's C) takes the series' positive terms, k up to ⌈c⌉: cut at ⌊c⌋ the
  // steady state jumped at each whole count (Llama 3 70B, 4 slots of 2048/2: end to end 2.5% longer at
  // 3.99 in flight than at 4).
  double terms = 1.0, term = 1.0;
  const double odds = pi / (1.0 - pi);
  for (double k = 1; k < c + 1.0 && terms < 1e250; ++k) {
    term *= (c - k + 1.0) / k * odds;
    terms += term;
    if (k > lambda && term < 1e-17 * terms) break;  // past the mode, the rest is below the sum's last bit
  }
  if (!(terms < 1e250)) return out;  // hundreds of prompts a step: their chunks average out (CV 1/√λ)
  const double p0 = 1.0 / terms;
  // The chunk sizes on the lattice (a chunk of the room or more fills the step), and the tokens of
  // each point, scaled so that the lattice's mean is the mean load's. A prompt of n_pf,i chunks puts
  // its chunk_i (the room) in n_pf,i − 1 of its steps and the rest of its prompt in the last: each
  // chunk size with its share of the class's prefilling sequences.
  const double bin = room / kBins;
  std::array<double, kBins + 1> f{}, p{}, x{};
  std::array<std::array<double, 2>, kMaxLengthClasses> sizes{}, weights{};  // each class's chunk sizes, and their shares
  double lattice_mean = 0;
  for (int i = 0; i < K; ++i) {
    if (!(held[i] > 0)) continue;
    const double steps = std::max(1.0, std::ceil(prompts[i] / chunk[i] - 1e-9));  // ⌈ISL_i / chunk_i⌉
    sizes[std::size_t(i)] = {chunk[i], prompts[i] - (steps - 1.0) * chunk[i]};
    weights[std::size_t(i)] = {(steps - 1.0) / steps, 1.0 / steps};
    for (int e = 0; e < 2; ++e) {
      const double w = weights[std::size_t(i)][std::size_t(e)];
      if (!(w > 0)) continue;
      const int j = int(std::clamp(std::round(sizes[std::size_t(i)][std::size_t(e)] / bin), 1.0, double(kBins)));
      f[std::size_t(j)] += w * held[i] / lambda;
      lattice_mean += w * held[i] * j * bin;
    }
  }
  const double scale = E / lattice_mean;
  for (int n = 0; n <= kBins; ++n) x[std::size_t(n)] = n == kBins ? room : std::min(room, n * bin * scale);
  const double a = -pi / (1.0 - pi), b = (c + 1.0) * pi / (1.0 - pi);
  std::array<int, 2 * kMaxLengthClasses> sizes_at{};  // the lattice points a chunk lands on, ascending
  int landed = 0;
  for (int j = 1; j <= kBins; ++j)
    if (f[std::size_t(j)] > 0) sizes_at[std::size_t(landed++)] = j;
  p[0] = p0;
  double below = p0;
  for (int n = 1; n < kBins; ++n) {
    double sum = 0;
    for (int u = 0; u < landed && sizes_at[std::size_t(u)] <= n; ++u) {
      const int j = sizes_at[std::size_t(u)];
      sum += (a + b * j / n) * f[std::size_t(j)] * p[std::size_t(n - j)];
    }
    p[std::size_t(n)] = std::max(0.0, sum);
    below += p[std::size_t(n)];
  }
  p[kBins] = std::max(0.0, 1.0 - below);  // the room or more: a full step
  double capped = 0;
  for (int n = 0; n <= kBins; ++n) capped += p[std::size_t(n)] * x[std::size_t(n)];
  double deficit = E - capped;  // the tokens past the room, which fill later steps
  for (int n = 0; n < kBins && deficit > 1e-12 * E; ++n) {
    const double gain = room - x[std::size_t(n)];
    if (!(gain > 0)) continue;
    const double moved = std::min(p[std::size_t(n)], deficit / gain);
    p[std::size_t(n)] -= moved, p[kBins] += moved, deficit -= moved * gain;
  }
  // The steps priced, at most kLumpPoints of them, evenly through the points a decoding sequence meets
  // (those with mass) and a prompt its own (each with a chunk of its class beside it), both ends kept;
  // linear between. A prompt's own step is the step of those tokens with one prefilling sequence
  // more, its own context and earlier chunks: the curve there plus that difference, priced once with
  // no other prompt beside it.
  std::vector<double> at;
  for (int n = 0; n <= kBins; ++n) {
    if (!(p[std::size_t(n)] > 1e-9)) continue;
    at.push_back(x[std::size_t(n)]);
    for (int i = 0; i < K; ++i)
      for (int e = 0; e < 2; ++e)
        if (held[i] > 0 && weights[std::size_t(i)][std::size_t(e)] > 0)
          at.push_back(std::min(room, x[std::size_t(n)] + sizes[std::size_t(i)][std::size_t(e)]));
  }
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end(), [&](double u, double v) { return v - u <= 1e-9 * room; }), at.end());
  if (at.size() > std::size_t(kLumpPoints)) {
    std::vector<double> few;
    for (int j = 0; j < kLumpPoints; ++j)
      few.push_back(at[std::size_t(std::llround(double(j) * double(at.size() - 1) / (kLumpPoints - 1)))]);
    at.swap(few);
  }
  auto others = [&](double tokens) { return lambda * tokens / E; };  // prefilling sequences with `tokens`
  // Decoding sequences beside `seqs` prefilling ones. Closed (every slot refilled at once), a prompt
  // takes the slot of one that left: c − seqs. Open (requests arriving at random), the prompts are
  // arrivals beside the sequences already in flight, whose count an arrival finds at its mean (Poisson
  // arrivals see time averages, Wolff 1982; the phases of an M/G/∞ system are independent): c − λ.
  auto decoding = [&](double seqs) { return std::max(0.0, c - (open * lambda + (1.0 - open) * seqs)); };
  struct Priced {
    StepCost step;
    double draft_s = 0, cycle_s = 0;
  };
  // The step of `tokens` of the others' chunks, and of a tagged chunk of `own` tokens (its context
  // `own_context`, reading `own_kv` tokens of its prompt's earlier chunks) when own > 0.
  auto price = [&](double tokens, double own, double own_context, double own_kv) {
    StepLoad load = mean;
    const double seqs = others(tokens) + (own > 0 ? 1.0 : 0.0);
    load.prefill_tokens = std::min(room, tokens + own);
    load.prefill_context = tokens + own > 0 ? (tokens * mean.prefill_context + own * own_context) / (tokens + own) : 0.0;
    load.prefill_seqs = mean.prefill_seqs * tokens / E + (own > 0 ? 1.0 : 0.0);
    load.prefill_kv_tokens = mean.prefill_kv_tokens * tokens / E + own_kv;
    load.decode_seqs = decoding(seqs);
    Priced q;
    q.step = step_cost(S, load);
    q.draft_s = drafts_s(S, load.decode_seqs, load.decode_context);
    q.cycle_s = pipeline_cycle_s(q.step, q.draft_s);
    return q;
  };
  std::vector<Priced> priced;
  for (double tokens : at) priced.push_back(price(tokens, 0.0, 0.0, 0.0));
  // into += weight · (the curve at `tokens`, linear between its points)
  // the priced points either side of `tokens` and their weights
  auto bracket = [&](double tokens) {
    const std::size_t hi = std::size_t(std::lower_bound(at.begin(), at.end(), tokens) - at.begin());
    const std::size_t j = std::min(hi, at.size() - 1), i = j > 0 && at[j] > tokens ? j - 1 : j;
    const double t = j > i ? (tokens - at[i]) / (at[j] - at[i]) : 0.0;
    return std::array{std::pair{i, 1.0 - t}, std::pair{j, t}};
  };
  auto add_at = [&](StepCost& into, double& draft_s, double& cycle_s, double tokens, double weight) {
    for (const auto& [k, u] : bracket(tokens)) {
      if (!(u > 0)) continue;
      add_scaled(into, priced[k].step, weight * u);
      draft_s += weight * u * priced[k].draft_s, cycle_s += weight * u * priced[k].cycle_s;
    }
  };
  auto cycle_at = [&](double tokens) {  // the curve's cycle alone at `tokens`
    double cycle = 0;
    for (const auto& [k, u] : bracket(tokens))
      if (u > 0) cycle += u * priced[k].cycle_s;
    return cycle;
  };
  double decoded = 0, mass = 0;  // over the points with mass
  for (int n = 0; n <= kBins; ++n)
    if (p[std::size_t(n)] > 1e-9) decoded += p[std::size_t(n)] * decoding(others(x[std::size_t(n)])), mass += p[std::size_t(n)];
  if (!(decoded > 0)) return out;
  // The residual of a step at a random time (renewal theory's inspection paradox, Kleinrock 1975 §5.2):
  // a long step with prompts is more likely to be in progress than its share of the steps.
  double cycle_mean = 0, cycle_square = 0;
  for (int n = 0; n <= kBins; ++n) {
    const double pn = p[std::size_t(n)];
    if (!(pn > 1e-9)) continue;
    const double cycle = cycle_at(x[std::size_t(n)]);
    cycle_mean += pn * cycle / mass, cycle_square += pn * cycle * cycle / mass;
  }
  out.residual_s = cycle_mean > 0 ? cycle_square / (2.0 * cycle_mean) : 0.0;
  // A prompt that arrived at random shares its first step with the prompts that arrived during the
  // step in progress, a length-biased step: E[τ²]/E[τ] long, E[τ²]/E[τ]² times the mean step, so its
  // others' chunks are that many times a random step's (the same inspection paradox). Against the
  // simulated schedule (Llama 3 70B TP 8, 2048/512 at 1–4 requests/s) a completing prompt's step held
  // 0.026–0.252 other prompts, 2.1–2.6 times a random step's 0.012–0.108; E[τ²]/E[τ]² is 1.7–2.1.
  const double arrived = cycle_mean > 0 ? cycle_square / (cycle_mean * cycle_mean) : 1.0;
  const std::size_t stages = priced[0].step.stage_s.size();
  out.decode_step.stage_s.assign(stages, 0.0);
  for (int n = 0; n <= kBins; ++n) {
    const double pn = p[std::size_t(n)], xn = x[std::size_t(n)];
    if (pn > 1e-9) add_at(out.decode_step, out.decode_draft_s, out.decode_cycle_s, xn, pn * decoding(others(xn)) / decoded);
  }
  for (int i = 0; i < K; ++i) {
    out.own_step[std::size_t(i)].stage_s.assign(stages, 0.0);
    const double steps = weights[std::size_t(i)][1] > 0 ? 1.0 / weights[std::size_t(i)][1] : 1.0;  // its prompt's chunks
    for (int e = 0; e < 2; ++e) {
      const double w = weights[std::size_t(i)][std::size_t(e)];
      if (!(held[i] > 0) || !(w > 0)) continue;
      // a full chunk is one of the first n − 1 (reading (n − 2)/2 chunks before it on average), the
      // rest the last (reading n − 1); each attends causally to its prompt before it and half itself
      const double size = sizes[std::size_t(i)][std::size_t(e)], before = e == 0 ? (steps - 2.0) / 2.0 : steps - 1.0;
      const double kv = std::max(0.0, before) * chunk[i];
      const Priced alone = price(0.0, size, kv + size / 2.0, kv);
      StepCost curve;  // the curve at its own chunk alone, to take from `alone`
      curve.stage_s.assign(stages, 0.0);
      double curve_draft = 0, curve_cycle = 0;
      add_at(curve, curve_draft, curve_cycle, std::min(room, size), 1.0);
      StepCost& own = out.own_step[std::size_t(i)];
      double unused = 0;
      for (int n = 0; n <= kBins; ++n) {
        const double pn = p[std::size_t(n)], xn = x[std::size_t(n)];
        if (!(pn > 1e-9)) continue;
        add_at(own, unused, out.own_cycle_s[std::size_t(i)], std::min(room, xn + size), (1.0 - open) * w * pn / mass);
        if (open > 0) add_at(own, unused, out.own_cycle_s[std::size_t(i)], std::min(room, arrived * xn + size), open * w * pn / mass);
      }
      add_scaled(own, alone.step, w), add_scaled(own, curve, -w);
      out.own_cycle_s[std::size_t(i)] += w * (alone.cycle_s - curve_cycle);
    }
  }
  out.ok = true;
  return out;
}

}  // namespace

double count_spread(double lambda_B, double headroom) {
  return std::min(lambda_B < 1.0 ? 1.0 / (1.0 - lambda_B) : std::numeric_limits<double>::infinity(), std::max(0.0, headroom));
}

BatchingState inflight_state(const ServingSetup& S, double concurrency, double rate_per_s, double slots, double full_e2e_s) {
  const Workload& w = S.w;
  const RequestClasses classes = request_classes(w);  // shares sum to 1
  const int K = classes.count;
  const double p = S.plan.pp, c = concurrency / p, M = w.max_num_tokens;
  const double q = 1.0 + w.spec_draft_tokens;  // tokens a decoding sequence runs per step
  BatchingState b;
  b.concurrency = concurrency;
  b.tokens_per_step = spec_tokens_per_step(w.spec_draft_tokens, w.spec_acceptance);
  // Per class: decode steps (the first token comes out of the prefill) and, Sarathi-Serve §4.2, the
  // steps of its prompt's chunks in the budget the decodes leave, at most c·q of it. Their means
  // over requests: D decode steps, F prefill steps, ISL prompt tokens.
  const double room = M - c * q;
  const DecodeMix decoding = decode_mix(w, b.tokens_per_step);  // each class's decodes, and D
  std::array<double, kMaxLengthClasses> n_pf{};
  double F = 0, ISL = 0;
  const double D = decoding.steps;
  for (int i = 0; i < K; ++i) {
    const LengthClass& k = classes[std::size_t(i)];
    n_pf[i] = room >= 1.0 ? std::ceil(k.prompt_len / room) : 0.0;
    F += k.share * n_pf[i], ISL += k.share * k.prompt_len;
  }
  double r = room >= 1.0 ? c / (F + D) : 0.0;
  const double r_budget = M / (ISL + q * D);  // every step full: r·ISL + r·D·q = M
  b.token_budget_bound = room < 1.0 || r > r_budget;
  if (b.token_budget_bound) r = r_budget;
  b.requests_per_step = r;
  b.decode_seqs = r * D;
  b.prefill_tokens = r * ISL;
  // Each class's decoding sequences read their own contexts, prompt + output/2 on average, and its
  // prompt tokens attend causally to half their prompt; chunk j of a prompt reads the K/V of the
  // j − 1 before it, ISL·(n − 1)/2 tokens in all. Token-bound, the admitted prompts wait in the batch
  // for their chunks: a request spends c/r − D steps beside its decode, the same wait beyond each
  // class's chunks (F − n_pf,i is the other classes').
  const double budget_left = M - b.decode_seqs * q, beside = c / r - D;
  std::array<ContextPart, kMaxLengthClasses> prefill_parts{};
  std::array<double, kMaxLengthClasses> pf{}, chunk{};
  StepLoad load;
  load.decode_seqs = b.decode_seqs;
  load.decode_tokens = q;
  load.prefill_tokens = b.prefill_tokens;
  load.prompt_len = ISL;  // the step completes r prompts: prefill_tokens / ISL
  load.decode_parts = decoding.parts.begin(), load.prefill_parts = prefill_parts.data();
  load.decode_context = decoding.context;
  load.decode_part_count = load.prefill_part_count = K;
  for (int i = 0; i < K; ++i) {
    const LengthClass& k = classes[std::size_t(i)];
    pf[i] = std::max(1.0, b.token_budget_bound ? beside - (F - n_pf[i]) : n_pf[i]);
    b.prefill_steps += k.share * pf[i];
    chunk[i] = std::clamp(budget_left, 1.0, double(k.prompt_len));
    prefill_parts[i] = {k.share * k.prompt_len / ISL, k.prompt_len / 2.0, 0.0};
    load.prefill_context += prefill_parts[i].share * prefill_parts[i].context;
    load.prefill_kv_tokens += r * k.share * k.prompt_len * (std::ceil(k.prompt_len / chunk[i]) - 1.0) / 2.0;
    load.prefill_seqs += r * k.share * k.prompt_len / chunk[i];  // prompts with a chunk in the step
  }
  // Prompts come in whole chunks: a step carries the chunks of the prompts admitted before it, or
  // none, not the mean's share of every prompt (header). Every step full (token-bound), or lumps that
  // average out: the mean step.
  std::array<double, kMaxLengthClasses> held{}, prompts{};  // prefilling sequences of each class per step, r·s_i·n_pf,i
  for (int i = 0; i < K; ++i) held[i] = r * classes[std::size_t(i)].share * n_pf[i], prompts[i] = classes[std::size_t(i)].prompt_len;
  // At a request rate a prompt arrives beside the sequences in flight unless it waited for a slot,
  // where it takes the slot of one that left (slot_queue's P_wait): the share of prompts that are open.
  const double open = rate_per_s > 0 ? 1.0 - slot_queue(rate_per_s, slots, concurrency, full_e2e_s).wait_probability : 0.0;
  const LumpySteps lumps = b.token_budget_bound
                               ? LumpySteps{}
                               : lumpy_steps(S, load, budget_left, c, held.data(), chunk.data(), prompts.data(), K, open);
  if (lumps.ok) {
    b.step = lumps.decode_step, b.draft_s = lumps.decode_draft_s, b.cycle_s = lumps.decode_cycle_s;
  } else {
    b.step = step_cost(S, load);
    b.draft_s = drafts_s(S, b.decode_seqs, load.decode_context);
    b.cycle_s = pipeline_cycle_s(b.step, b.draft_s);
  }
  // An open system: with requests arriving at random (Poisson) the sequences in flight are not held at
  // C but wander about it, and a decoding sequence meets more steps of many than of few. For a step
  // τ(n) = a + β·n of n in flight, the steps weighted by their decodes average
  // E[n·τ(n)] / E[n] = τ(C) + β·Var(n)/C. Var(n)/C is 1 for independent sequences (M/G/∞: the count is
  // Poisson, Takács 1962), and more when each one in flight slows the others: a sequence held
  // E2E(n) = A + B·n leaves at n/E2E(n), and the birth–death chain's spread about its mean
  // (a diffusion approximation, Kingman 1961) is Var(n)/C = E2E/A = 1/(1 − λ·B); at most C_max − C
  // (a count in [0, C_max] has Var ≤ (C_max − C)·C, Bhatia & Davis 2000). β: one more sequence in the
  // replica, 1/pp of one in each micro-batch, in a step of decodes at their mean contexts (at least 0:
  // a tile boundary can make the finite difference negative). Llama 3 70B on 8 H100 at 1, 2 and 4
  // requests/s of 2048/512: the simulated schedule's TPOT (Poisson arrivals, 8 seeds) had been 2.8%,
  // 3.0% and 2.0% above the steps at the mean count, now 1.5%, 1.7% and 0.5%; with evenly spaced
  // arrivals it is 1.1% and −0.1% above them at 1 and 4 (tests/test_serving_simulation.cpp).
  if (rate_per_s > 0 && b.cycle_s > 0) {
    StepLoad d0;
    d0.decode_seqs = c, d0.decode_tokens = q, d0.decode_context = decoding.context;
    d0.decode_parts = decoding.parts.begin(), d0.decode_part_count = K;
    StepLoad d1 = d0;
    d1.decode_seqs = c + 1.0;
    const StepCost s0 = step_cost(S, d0), s1 = step_cost(S, d1);
    const double beta = std::max(0.0, (pipeline_cycle_s(s1, drafts_s(S, c + 1.0, decoding.context)) -
                                       pipeline_cycle_s(s0, drafts_s(S, c, decoding.context))) /
                                          p);
    const double spread = count_spread(rate_per_s * D * beta, slots - concurrency);
    if (beta > 0 && spread > 0) {
      add_scaled(b.step, s1, spread / p);
      add_scaled(b.step, s0, -spread / p);
      b.cycle_s += spread * beta;
    }
    b.inflight_spread = spread;
  }
  b.tpot_s = b.cycle_s / b.tokens_per_step;
  // An arriving request that finds a free slot waits for the step in progress to end, the residual of
  // a step at a random time (lumpy: over the steps' distribution; else half the cycle); with pp
  // micro-batches the next one is scheduled a pp-th of a cycle later. One that waited for a slot is
  // admitted as a step ends (its wait is slot_queue's).
  if (rate_per_s > 0) b.step_wait_s = open * (lumps.ok ? lumps.residual_s : b.cycle_s / 2.0) / p;
  // A prompt's own steps carry its chunk, min(ISL, what the decodes leave), beside the decodes: lumpy,
  // beside the others' (lumpy_steps); at the mean step, when the mean step holds less prefill than that
  // (not token-bound), they are heavier than the mean. With mixed lengths each class's own step;
  // prefill_step is their mean over the requests' prefill steps.
  b.prefill_step.stage_s.assign(b.step.stage_s.size(), 0.0);
  for (int i = 0; i < K; ++i) {
    const LengthClass& k = classes[std::size_t(i)];
    StepCost own_step = lumps.ok ? lumps.own_step[std::size_t(i)] : b.step;
    if (!lumps.ok && chunk[i] > load.prefill_tokens) {
      StepLoad own = load;
      own.prefill_tokens = chunk[i];
      own.prefill_kv_tokens = std::max(load.prefill_kv_tokens,
                                       k.prompt_len * (std::ceil(k.prompt_len / chunk[i]) - 1.0) / 2.0 / pf[i]);
      own.prefill_seqs = std::max(load.prefill_seqs, 1.0);
      const ContextPart mine{1.0, k.prompt_len / 2.0, 0.0};
      own.prefill_parts = &mine, own.prefill_part_count = 1;
      own.prefill_context = mine.context;
      own_step = step_cost(S, own);
    }
    const double own_cycle_s = lumps.ok ? lumps.own_cycle_s[std::size_t(i)] : pipeline_cycle_s(own_step, b.draft_s);
    const double ttft_s = pf[i] * own_cycle_s, e2e_s = ttft_s + (k.output_len - 1.0) * b.tpot_s;
    b.classes.push_back({k, pf[i], ttft_s, e2e_s});
    const double u = k.share * pf[i] / b.prefill_steps;  // its part of the prefill steps
    add_scaled(b.prefill_step, own_step, u);
    b.prefill_cycle_s += u * own_cycle_s;
    b.ttft_s += k.share * ttft_s;
    b.e2e_s += k.share * e2e_s;
  }
  for (const ClassLatency& k : b.classes) {
    const double d = b.e2e_s > 0 ? k.e2e_latency_s / b.e2e_s - 1.0 : 0.0;
    b.e2e_cs2 += k.lengths.share * d * d;
  }
  // Little's law (Little 1961): C sequences each held for E2E finish C/E2E per second. (It counts the
  // prompts' own, heavier, steps, which p·r/cycle at the mean step would not.)
  b.requests_per_s = b.e2e_s > 0 ? concurrency / b.e2e_s : 0.0;
  return b;
}

DecodeMix decode_mix(const Workload& w, double tokens_per_step) {
  DecodeMix mix;
  const RequestClasses classes = request_classes(w);
  for (const LengthClass& k : classes) mix.steps += k.share * ((k.output_len - 1.0) / tokens_per_step);
  for (const LengthClass& k : classes) {
    const double n = (k.output_len - 1.0) / tokens_per_step;
    mix.parts.push_back({mix.steps > 0 ? k.share * n / mix.steps : k.share, k.prompt_len + k.output_len / 2.0, double(k.prompt_len)});
    if (mix.steps > 0) mix.cs2 += k.share * (n / mix.steps - 1.0) * (n / mix.steps - 1.0);
  }
  for (const ContextPart& x : mix.parts) mix.context += x.share * x.context;
  return mix;
}

namespace {

// The cycle of one micro-batch step carrying `decodes` decoding sequences and `prefill` prompt tokens
// (as inflight_state prices its mean step): prompts cut into chunks of at most `prefill` tokens, chunk
// j reading the K/V of the j − 1 before it.
double step_cycle_s(const ServingSetup& S, double decodes, double prefill) {
  const Workload& w = S.w;
  const MeanLengths L = mean_lengths(w);  // uniform lengths, or a mix of one class
  const double ISL = L.prompt_len, q = 1.0 + w.spec_draft_tokens;
  StepLoad load;
  load.decode_seqs = decodes;
  load.decode_tokens = q;
  load.decode_context = ISL + L.output_len / 2.0;
  load.prefill_tokens = prefill;
  load.prefill_context = ISL / 2.0;
  if (prefill > 0) {
    const double chunk = std::clamp(prefill, 1.0, ISL);
    load.prefill_kv_tokens = prefill * (std::ceil(ISL / chunk) - 1.0) / 2.0;
    load.prefill_seqs = std::max(1.0, prefill / chunk);
  }
  const double draft_s = drafts_s(S, decodes, load.decode_context);
  return pipeline_cycle_s(step_cost(S, load), draft_s);
}

}  // namespace

double offline_waves(double concurrency, double requests) { return std::max(1.0, std::ceil(requests / concurrency - 1e-9)); }

double offline_run_s(const ServingSetup& S, double concurrency, double requests) {
  const Workload& w = S.w;
  const MeanLengths L = mean_lengths(w);  // uniform lengths, or a mix of one class
  const double p = S.plan.pp, ISL = L.prompt_len, M = w.max_num_tokens, q = 1.0 + w.spec_draft_tokens;
  const double n_dec = (L.output_len - 1.0) / spec_tokens_per_step(w.spec_draft_tokens, w.spec_acceptance);
  const double waves = offline_waves(concurrency, requests);
  const double last = requests - (waves - 1.0) * concurrency;
  // The steady state's end-to-end latency: the prefill-heavy runs (a burst longer than a sequence's
  // decode, every step full) and a budget the decodes alone fill.
  auto steady_s = [&](double k) { return inflight_state(S, k).e2e_s; };
  const double c = concurrency / p;
  // The first wave: every prompt queued at once. The scheduler gives each step's budget to the decodes
  // first and the rest to prompt chunks, so the prompts go through in a burst of c·ISL / (M − c·q/2)
  // steps while the sequences prefilled so far decode (c/2 of them on average); the last one prefilled
  // then decodes n_dec steps, all c decoding until the first ones finish.
  const double room_cold = M - c * q / 2.0, burst_cold = c * ISL / room_cold;
  if (room_cold < 1.0 || burst_cold > n_dec) return (waves - 1.0) * steady_s(concurrency) + steady_s(last);
  const double full_s = step_cycle_s(S, c, 0.0);
  double run_s = burst_cold * step_cycle_s(S, c / 2.0, room_cold) + (n_dec - burst_cold) * full_s;
  // Each later wave takes the slots of the one finishing: its prompts come in a burst as the slots
  // free, beside the c sequences decoding, then it decodes; a wave of k sequences lasts its burst and
  // n_dec + ⌈ISL / room⌉ steps from its last admission.
  auto warm_s = [&](double k) {
    const double ck = k / p, room = M - c * q, burst = ck * ISL / room;
    if (room < 1.0 || burst > n_dec) return steady_s(k);
    return burst * step_cycle_s(S, c, room) + (n_dec + std::ceil(ISL / room) - burst) * step_cycle_s(S, ck, 0.0);
  };
  if (waves == 1.0) return run_s + burst_cold * step_cycle_s(S, c / 2.0, 0.0);  // its last ones finish: c/2 decoding
  return run_s + (waves - 2.0) * warm_s(concurrency) + warm_s(last);
}

SlotQueue slot_queue(double rate_per_s, double slots, double concurrency, double full_e2e_s, double cs2) {
  const double c = std::floor(slots), lambda = rate_per_s, C = concurrency;
  if (!(lambda > 0) || !(C > 0) || c < 1) return {};
  const double e_full = full_e2e_s > 0 ? full_e2e_s : C / lambda;  // unknown: every count served as the mean
  const double r = lambda * e_full / c;                            // the queue's ratio with every slot taken
  if (C >= c || r >= 1.0) return {1.0, std::numeric_limits<double>::infinity()};
  // E2E(n) = A + B·n through (C, C/λ) and (c, e_full); A = C·(c/λ − e_full)/(c − C) > 0 as r < 1.
  const double B = (e_full - C / lambda) / (c - C), A = C / lambda - B * C;
  double p = 1.0, below = 0.0;  // p(n), Σ p(k < n); rescaled together (only their ratios count)
  for (double n = 1; n <= c; ++n) {
    below += p;
    p *= lambda * (A + B * n) / n;
    if (p > 1e250 || below > 1e250) p *= 1e-250, below *= 1e-250;
  }
  const double waiting = p / (1.0 - r), z = below + waiting;  // P(n ≥ c)·z, and the normaliser
  const double lq = p * r / ((1.0 - r) * (1.0 - r)) / z;
  return {waiting / z, lq / lambda * (1.0 + cs2) / 2.0};
}

Concurrency inflight_concurrency(const ServingSetup& S, long long kv_capacity_sequences, double lambda, double requests_per_replica) {
  Concurrency out;
  const double asked = double(S.plan.pp) * S.w.batch;
  if (kv_capacity_sequences < 1) {
    out.limit = ConcurrencyLimit::Memory;
    return out;
  }
  out.value = asked;
  if (double(kv_capacity_sequences) < asked) {
    out.value = double(kv_capacity_sequences);
    out.limit = ConcurrencyLimit::KvCache;
  }
  if (requests_per_replica > 0 && requests_per_replica < out.value) {
    out.value = requests_per_replica;
    out.limit = ConcurrencyLimit::Requests;
  }
  out.slots = out.value;
  if (!(lambda > 0)) return out;
  // Little's law: C = λ · E2E(C). E2E grows with C, so g(C) = λ·E2E(C) − C is positive near 0; at the
  // cap it is ≥ 0 when the replica cannot keep up (saturated), else the root lies below the cap.
  const double cap = out.value;
  // With every slot taken the prompts take the slots of those that left: the cap's state is closed,
  // and its end to end the service a queue for a slot meets (slot_queue).
  out.full_e2e_s = inflight_state(S, cap, lambda, cap).e2e_s;
  auto g = [&](double C) { return lambda * inflight_state(S, C, lambda, cap, out.full_e2e_s).e2e_s - C; };
  const double g_cap = lambda * out.full_e2e_s - cap;
  if (g_cap >= 0) {
    out.saturated = true;
    return out;
  }
  // g is smooth between the steps' few kinks, and each g prices a steady state (a few dozen steps).
  out.value = falling_root(g, cap, g(0.0), g_cap);
  out.limit = ConcurrencyLimit::RequestRate;
  return out;
}

}  // namespace cutlab
