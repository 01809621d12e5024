#include "core/serving_prompt_queue.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/serving_batching.h"

namespace cutlab {

namespace {

// Poisson(m) probabilities for k = 0, 1, …, until a term past the mode is under 1e-17 of the mode's:
// the terms' ratios from the mode (m/k up, k/m down), normalised by their sum. Arithmetic alone, so
// that the page's WebAssembly and the CLI agree to the last bit (no libm exp).
std::vector<double> poisson_terms(double m) {
  if (!(m > 0)) return {1.0};
  const std::size_t mode = std::size_t(std::floor(m));
  std::vector<double> p(mode + 1, 0.0);
  p[mode] = 1.0;
  for (std::size_t k = mode; k > 0; --k) p[k - 1] = p[k] * double(k) / m;
  for (std::size_t k = mode + 1;; ++k) {
    const double t = p.back() * m / double(k);
    if (t < 1e-17) break;
    p.push_back(t);
  }
  double sum = 0;
  for (double x : p) sum += x;
  for (double& x : p) x /= sum;
  return p;
}

// π on the states 0..Q (the last lumping everything above), `arrivals(q)` the distribution of the
// prompts arriving between the start of a step at q and the next; or empty when an elimination meets a
// state that cannot go down (its arrivals' terms underflowed: far past the replica's capacity). GTH on
// the band: a step lowers q by at most b and raises it by at most `up`.
template <class ArrivalsAt>
std::vector<double> solve_states(const ArrivalsAt& arrivals, int b, int up, int Q) {
  const int width = b + up + 1;  // row i holds columns i − b .. i + up
  std::vector<double> M(std::size_t(Q + 1) * std::size_t(width), 0.0);
  auto at = [&](int i, int j) -> double& { return M[std::size_t(i) * std::size_t(width) + std::size_t(j - i + b)]; };
  at(0, 1) = 1.0;  // idle until the next arrival, whose step starts at once
  for (int q = 1; q <= Q; ++q) {
    const int a = std::min(q, b);
    const std::vector<double>& k = arrivals(q);
    for (std::size_t n = 0; n < k.size(); ++n) at(q, std::min(Q, q - a + int(n))) += k[n];
  }
  // GTH: eliminate Q, Q − 1, …, 1; S_n is what state n sends below itself in the reduced chain.
  std::vector<double> S(std::size_t(Q + 1), 0.0);
  for (int n = Q; n >= 1; --n) {
    double s = 0;
    for (int j = std::max(0, n - b); j < n; ++j) s += at(n, j);
    if (!(s > 0)) return {};
    S[std::size_t(n)] = s;
    for (int i = std::max(0, n - up); i < n; ++i) {
      const double f = at(i, n) / s;
      if (!(f > 0)) continue;
      for (int j = std::max(0, n - b); j < n; ++j) at(i, j) += f * at(n, j);
    }
  }
  std::vector<double> pi(std::size_t(Q + 1), 0.0);
  pi[0] = 1.0;
  double total = 1.0;
  for (int n = 1; n <= Q; ++n) {
    double in = 0;
    for (int i = std::max(0, n - up); i < n; ++i) in += pi[std::size_t(i)] * at(i, n);
    pi[std::size_t(n)] = in / S[std::size_t(n)];
    total += pi[std::size_t(n)];
  }
  for (double& x : pi) x /= total;
  return pi;
}

}  // namespace

int PromptChain::longer(int q, int prior) const {
  const int a = std::min(q, int(interval_s.size()) - 1);
  return interval_s[std::size_t(prior)] > interval_s[std::size_t(a)] ? prior : a;
}

PromptChain prompt_chain(double rate_per_s, const std::vector<double>& interval_s, int stages) {
  const bool pipelined = stages > 1;
  const double keep = pipelined ? (stages - 2.0) / (stages - 1.0) : 0.0;
  PromptChain c;
  const int b = int(interval_s.size()) - 1;
  if (b < 1 || b > kMaxPromptQueueBatch || !(rate_per_s > 0)) return c;
  for (int a = 1; a <= b; ++a)
    if (!(interval_s[std::size_t(a)] > 0) || !std::isfinite(interval_s[std::size_t(a)])) return c;
  if (!(rate_per_s * interval_s[std::size_t(b)] < b)) return c;  // a full step takes fewer than arrive during it
  c.interval_s = interval_s;
  std::vector<std::vector<double>> poisson(static_cast<std::size_t>(b + 1));  // during the interval of a step of a
  int up = 1;
  for (int a = 1; a <= b; ++a) {
    poisson[std::size_t(a)] = poisson_terms(rate_per_s * interval_s[std::size_t(a)]);
    up = std::max(up, int(poisson[std::size_t(a)].size()) - 1);
  }
  // Pipelined, below b waiting a step's interval depends on the steps before; to start, its own batch
  // (no effect).
  if (pipelined) {
    c.before.assign(std::size_t(b), std::vector<double>(std::size_t(b + 1), 0.0));
    for (int q = 0; q < b; ++q) c.before[std::size_t(q)][std::size_t(std::max(q, 1))] = 1.0;
  }
  std::vector<std::vector<double>> mixed(static_cast<std::size_t>(b));  // the arrivals from q < b: over the steps before
  auto mix = [&] {
    for (int q = 1; q < b && pipelined; ++q) {
      std::vector<double>& m = mixed[std::size_t(q)];
      m.assign(poisson[std::size_t(b)].size(), 0.0);
      for (int a = 1; a <= b; ++a) {
        const double u = c.before[std::size_t(q)][std::size_t(a)];
        if (!(u > 0)) continue;
        const std::vector<double>& k = poisson[std::size_t(c.longer(q, a))];
        if (k.size() > m.size()) m.resize(k.size(), 0.0);
        for (std::size_t n = 0; n < k.size(); ++n) m[n] += u * k[n];
      }
    }
  };
  auto arrivals = [&](int q) -> const std::vector<double>& {
    return q < b && pipelined ? mixed[std::size_t(q)] : poisson[std::size_t(std::min(q, b))];
  };
  // States: from twice the band, doubled until the top band holds under 1e-12 of the mass; the
  // eliminations' work (Q · up · b each) bounded. Pipelined, a fixed point: the chain given the steps
  // before, then the steps before from its flows (Bayes: the states that lead to q, each with its
  // batch and the longest it carried), until they settle (to 1e-9; at most kPasses).
  constexpr int kPasses = 40;
  double work = 0;  // the eliminations' multiply-adds so far, at most kMaxPromptQueueWork
  for (int Q = 2 * (b + up) + 16; Q <= kMaxPromptQueueStates; Q *= 2) {
    for (int pass = 0; pass < (pipelined ? kPasses : 1); ++pass) {
      work += double(Q + 1) * double(up + 1) * double(b);
      if (work > kMaxPromptQueueWork) {
        c.pi.clear();
        return c;
      }
      mix();
      c.pi = solve_states(arrivals, b, up, Q);
      if (c.pi.empty() || !pipelined) break;
      std::vector<std::vector<double>> flow(std::size_t(b), std::vector<double>(std::size_t(b + 1), 0.0));
      for (int q0 = 1; q0 <= Q; ++q0) {
        const int a0 = std::min(q0, b);
        const double from = c.pi[std::size_t(q0)];
        if (q0 >= b) {
          const std::vector<double>& k = poisson[std::size_t(b)];
          for (std::size_t n = 0; n < k.size() && q0 - a0 + int(n) < b; ++n)
            flow[std::size_t(q0 - a0 + int(n))][std::size_t(b)] += from * k[n];
          continue;
        }
        for (int prior = 1; prior <= b; ++prior) {
          const double u = from * c.before[std::size_t(q0)][std::size_t(prior)];
          if (!(u > 0)) continue;
          const std::vector<double>& k = poisson[std::size_t(c.longer(q0, prior))];
          const int held = std::max(a0, prior);  // the longest within reach, kept with probability `keep`
          for (std::size_t n = 0; n < k.size() && q0 - a0 + int(n) < b; ++n) {
            std::vector<double>& f = flow[std::size_t(q0 - a0 + int(n))];
            f[std::size_t(a0)] += (1.0 - keep) * u * k[n];
            f[std::size_t(held)] += keep * u * k[n];
          }
        }
      }
      // an idle spell's step, at q = 1, follows the step that emptied the queue
      for (int a = 1; a <= b && b > 1; ++a) flow[1][std::size_t(a)] += flow[0][std::size_t(a)];
      double moved = 0;
      for (int q = 0; q < b; ++q) {
        double total = 0;
        for (double x : flow[std::size_t(q)]) total += x;
        if (!(total > 0)) continue;
        for (int a = 1; a <= b; ++a) {
          const double u = flow[std::size_t(q)][std::size_t(a)] / total;
          moved = std::max(moved, std::abs(u - c.before[std::size_t(q)][std::size_t(a)]));
          c.before[std::size_t(q)][std::size_t(a)] = u;
        }
      }
      if (moved < 1e-9) break;
    }
    if (c.pi.empty()) return c;
    double top = 0;
    for (int q = std::max(0, Q - up - b); q <= Q; ++q) top += c.pi[std::size_t(q)];
    if (top < 1e-12) return c;
    c.pi.clear();
  }
  return c;
}

PromptQueue prompt_queue(const ServingSetup& S, double rate_per_s, double slots) {
  PromptQueue out;
  const Workload& w = S.w;
  const RequestClasses classes = request_classes(w);
  const LengthClass& k = classes[0];
  for (const LengthClass& x : classes)
    if (x.prompt_len != k.prompt_len || x.output_len != 1) return out;  // one length, one output token
  const double pp = S.plan.pp, isl = k.prompt_len;
  if (!(isl > 0) || isl > w.max_num_tokens || !(rate_per_s > 0)) return out;  // a prompt in one step
  const int b = int(std::min(std::floor(slots / pp + 1e-9), std::floor(w.max_num_tokens / isl)));
  if (b < 1 || b > kMaxPromptQueueBatch) return out;
  // The step of a prompts, priced at most kPoints times (both ends kept), linear between.
  constexpr int kPoints = 12;
  std::vector<int> at;
  for (int j = 0; j < kPoints; ++j) at.push_back(1 + int(std::lround(double(j) * double(b - 1) / (kPoints - 1))));
  at.erase(std::unique(at.begin(), at.end()), at.end());
  const ContextPart part{1.0, isl / 2.0, 0.0};  // each token attends causally to half its prompt
  std::vector<StepCost> priced;
  for (int a : at) {
    StepLoad load;
    load.prefill_tokens = a * isl, load.prefill_seqs = a, load.prompt_len = isl;
    load.prefill_context = part.context, load.prefill_parts = &part, load.prefill_part_count = 1;
    priced.push_back(step_cost(S, load));
  }
  const std::size_t stages = priced[0].stage_s.size();
  std::vector<StepCost> step(std::size_t(b + 1));
  std::vector<double> interval(std::size_t(b + 1), 0.0), walk(std::size_t(b + 1), 0.0);
  for (int a = 1; a <= b; ++a) {
    const std::size_t hi = std::size_t(std::lower_bound(at.begin(), at.end(), a) - at.begin());
    const std::size_t lo = at[hi] == a ? hi : hi - 1;
    const double t = hi > lo ? double(a - at[lo]) / double(at[hi] - at[lo]) : 0.0;
    StepCost& s = step[std::size_t(a)];
    s.stage_s.assign(stages, 0.0);
    add_scaled(s, priced[lo], 1.0 - t);
    if (t > 0) add_scaled(s, priced[hi], t);
    interval[std::size_t(a)] = pipeline_cycle_s(s, 0.0) / pp;
    walk[std::size_t(a)] = s.walk_s();
  }
  // With pp stages, each micro-batch's step waits for the one before (PromptChain::before).
  const PromptChain chain = prompt_chain(rate_per_s, interval, int(pp));
  const std::vector<double>& pi = chain.pi;
  if (pi.empty()) return out;
  double time = pi[0] / rate_per_s, waiting = 0, residual = 0, prompts = 0, service = 0;  // idle: 1/λ
  std::vector<double> met(std::size_t(b + 1), 0.0);                                       // prompts that meet a step of a

  for (int q = 1; q < int(pi.size()); ++q) {
    const int a = std::min(q, b);
    const double u = pi[std::size_t(q)];
    // Its interval, to the next start, and its walk; a micro-batch that follows a longer one starts no
    // sooner than that one's next, and waits for it at each stage after the first (balanced stages, a
    // flow line's blocking): (pp − 1)·(I(a') − I(a)) more to its walk.
    double I = 0, I2 = 0, behind = 0;
    if (q < b && pp > 1) {
      for (int before = 1; before <= b; ++before) {
        const double v = chain.before[std::size_t(q)][std::size_t(before)], Ib = interval[std::size_t(chain.longer(q, before))];
        I += v * Ib, I2 += v * Ib * Ib, behind += v * (pp - 1.0) * (Ib - interval[std::size_t(a)]);
      }
    } else {
      I = interval[std::size_t(a)], I2 = I * I;
    }
    time += u * I;
    waiting += u * I * (double(q) - a);
    residual += u * I2 / 2.0;
    prompts += u * a, service += u * a * (walk[std::size_t(a)] + behind);
    met[std::size_t(a)] += u * a;
  }
  if (!(prompts > 0) || !(time > 0)) return out;
  out.queue_s = waiting / rate_per_s / time;
  out.step_wait_s = residual / time;
  out.service_s = service / prompts;
  out.step.stage_s.assign(stages, 0.0);
  for (int a = 1; a <= b; ++a)
    if (met[std::size_t(a)] > 0) add_scaled(out.step, step[std::size_t(a)], met[std::size_t(a)] / prompts);
  out.ok = std::isfinite(out.ttft_s());
  return out;
}

}  // namespace cutlab
