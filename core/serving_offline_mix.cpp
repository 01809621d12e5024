#include "core/serving_offline_mix.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>

namespace cutlab {

namespace {

// Sequences of one class admitted together whose prompts are at the same point: `count` of them, each
// with `left` prompt tokens to go after `done`.
struct Prompts {
  int cls = 0;
  double count = 0, left = 0, done = 0;
};

// One micro-batch's engine (header): its slots, queue, prompts in flight (first come, first served)
// and decoding sequences by class, with the steps at which they finish (in order, per class).
class Engine {
 public:
  Engine(const ServingSetup& S, const RequestClasses& classes, double slots, double requests)
      : S_(S), k_(classes), K_(classes.count), slots_(slots), queued_(requests) {
    const Workload& w = S.w;
    q_ = 1.0 + w.spec_draft_tokens;
    t_ = spec_tokens_per_step(w.spec_draft_tokens, w.spec_acceptance);
    M_ = w.max_num_tokens;
    // The first token comes out of the prompt's last chunk; the other output − 1 at t per step.
    for (int i = 0; i < K_; ++i)
      decode_steps_[std::size_t(i)] = std::max(0.0, std::ceil((k_[std::size_t(i)].output_len - 1.0) / t_ - 1e-9));
  }

  // Replays the run to its end, seconds; the queue closes once `step_cap` steps are priced and
  // `min_admitted` requests admitted (unreplayed(): the requests left in it).
  double run(long long step_cap, double min_admitted) {
    while (in_flight_ > 0 || (queued_ > 0 && !closed_)) {
      if (!closed_ && queued_ > 0 && priced_ >= step_cap && admitted_ >= min_admitted) closed_ = true;
      admit();
      if (prompts_.empty() && decoding_ > 0) {
        decode_stretch();
        continue;
      }
      step();
    }
    return wall_s_;
  }
  double unreplayed() const { return closed_ ? queued_ : 0.0; }

 private:
  const LengthClass& cls(int i) const { return k_[std::size_t(i)]; }

  // The step at which the next decoding sequence finishes (its class's sequences finish in the order
  // their prompts completed: one decode length per class).
  long long next_finish() const {
    long long next = std::numeric_limits<long long>::max();
    for (int i = 0; i < K_; ++i)
      if (!finishing_[std::size_t(i)].empty()) next = std::min(next, finishing_[std::size_t(i)].front().step);
    return next;
  }

  // Every free slot takes the next request; the classes in smooth weighted round robin (each class's
  // credit grows by its share per request, the largest credit is served and pays 1: every prefix of
  // the queue within one request of its shares per class).
  void admit() {
    if (closed_) return;
    while (in_flight_ < slots_ - 1e-9 && queued_ > 1e-9) {
      int pick = 0;
      for (int i = 0; i < K_; ++i) {
        credit_[std::size_t(i)] += cls(i).share;
        if (credit_[std::size_t(i)] > credit_[std::size_t(pick)]) pick = i;
      }
      credit_[std::size_t(pick)] -= 1.0;
      if (!prompts_.empty() && prompts_.back().cls == pick && prompts_.back().done == 0) ++prompts_.back().count;
      else prompts_.push_back({pick, 1.0, double(cls(pick).prompt_len), 0.0});
      in_flight_ += 1.0, queued_ -= 1.0, admitted_ += 1.0;
    }
  }

  // The decodes' part of a step's load, at their contexts `ahead` steps from now.
  void decode_load(StepLoad& L, std::array<ContextPart, kMaxLengthClasses>& parts, double ahead) const {
    L.decode_seqs = decoding_;
    L.decode_tokens = q_;
    L.decode_context = 0;
    for (int i = 0; i < K_; ++i) {
      const double n = decoders_[std::size_t(i)], x = n > 0 ? context_sum_[std::size_t(i)] / n + ahead * t_ : 0.0;
      parts[std::size_t(i)] = {decoding_ > 0 ? n / decoding_ : 0.0, x, x};
      L.decode_context += parts[std::size_t(i)].share * x;
    }
    if (decoding_ > 0) L.decode_parts = parts.data(), L.decode_part_count = K_;
  }

  double cycle_s(const StepLoad& L) const {
    const double draft_s = L.decode_seqs > 0 ? drafts_s(S_, L.decode_seqs, L.decode_context) : 0.0;
    return pipeline_cycle_s(step_cost(S_, L), draft_s);
  }

  // Steps with decodes alone until the next sequence finishes: the composition holds, the contexts
  // grow by t a step, and so the cost between the stretch's two ends is linear (between roofline
  // corners): priced at both, their mean for every step.
  void decode_stretch() {
    const long long last = std::max(step_, next_finish());  // (decodes in flight: one finishes)
    const double n = double(last - step_ + 1);
    std::array<ContextPart, kMaxLengthClasses> parts{};
    StepLoad first, end;
    decode_load(first, parts, 0.0);
    const double first_s = cycle_s(first);
    double end_s = first_s;
    if (n > 1) {
      decode_load(end, parts, n - 1.0);
      end_s = cycle_s(end);
    }
    wall_s_ += n * (first_s + end_s) / 2.0;
    priced_ += n > 1 ? 2 : 1;
    for (int i = 0; i < K_; ++i) context_sum_[std::size_t(i)] += decoders_[std::size_t(i)] * t_ * (n - 1.0);
    step_ = last;
    finish_step({});
  }

  // One step: the decodes first, then the budget they leave to the prompts in order (a prompt gets
  // min(what it has left, what the budget has left)).
  void step() {
    std::array<ContextPart, kMaxLengthClasses> dparts{}, pparts{};
    StepLoad L;
    decode_load(L, dparts, 0.0);
    double budget = M_ - decoding_ * q_, completions = 0;
    std::array<double, kMaxLengthClasses> tokens{}, attended{}, completed{};
    while (budget >= 1.0 && !prompts_.empty()) {
      Prompts& e = prompts_.front();
      const int i = e.cls;
      if (e.left <= budget) {  // whole prompts (or their last chunks) while the budget holds them
        const double j = std::min(e.count, std::floor(budget / e.left));
        budget -= j * e.left;
        tokens[std::size_t(i)] += j * e.left;
        attended[std::size_t(i)] += j * e.left * (e.done + e.left / 2.0);  // causal: half the chunk beyond what is done
        L.prefill_kv_tokens += j * e.done, L.prefill_seqs += j;
        completed[std::size_t(i)] += j, completions += j;
        e.count -= j;
        if (e.count <= 0) prompts_.pop_front();
        continue;
      }
      // One prompt takes the rest of the budget, a chunk; the others of its group wait.
      const double chunk = std::floor(budget);
      budget -= chunk;
      tokens[std::size_t(i)] += chunk;
      attended[std::size_t(i)] += chunk * (e.done + chunk / 2.0);
      L.prefill_kv_tokens += e.done, L.prefill_seqs += 1.0;
      const Prompts rest{i, 1.0, e.left - chunk, e.done + chunk};
      if (e.count > 1.0) {
        e.count -= 1.0;
        prompts_.push_front(rest);
      } else {
        e = rest;
      }
      break;
    }
    for (int i = 0; i < K_; ++i) L.prefill_tokens += tokens[std::size_t(i)];
    if (L.prefill_tokens > 0) {
      for (int i = 0; i < K_; ++i) {
        const double x = tokens[std::size_t(i)] > 0 ? attended[std::size_t(i)] / tokens[std::size_t(i)] : 0.0;
        pparts[std::size_t(i)] = {tokens[std::size_t(i)] / L.prefill_tokens, x, 0.0};
        L.prefill_context += pparts[std::size_t(i)].share * x;
      }
      L.prefill_parts = pparts.data(), L.prefill_part_count = K_;
    }
    // The prompts it completes sample a token each (serving_step.h sampled_tokens: prefill ÷ prompt_len).
    L.prompt_len = completions > 0 ? L.prefill_tokens / completions : std::numeric_limits<double>::infinity();
    wall_s_ += cycle_s(L);
    ++priced_;
    finish_step(completed);
  }

  // After step `step_`: the decodes gain t tokens, those at their last step leave (their slots free
  // for the next step), the prompts completed begin to decode.
  void finish_step(const std::array<double, kMaxLengthClasses>& completed) {
    for (int i = 0; i < K_; ++i) {
      const std::size_t u = std::size_t(i);
      context_sum_[u] += decoders_[u] * t_;
      std::deque<Finishing>& f = finishing_[u];
      if (f.empty() || f.front().step != step_) continue;
      const double out = f.front().count;
      f.pop_front();
      decoders_[u] -= out, decoding_ -= out, in_flight_ -= out;
      context_sum_[u] -= out * (cls(i).prompt_len + 1.0 + decode_steps_[u] * t_);
      if (decoders_[u] <= 0) decoders_[u] = 0, context_sum_[u] = 0;
    }
    for (int i = 0; i < K_; ++i) {
      const std::size_t u = std::size_t(i);
      const double j = completed[u];
      if (!(j > 0)) continue;
      if (decode_steps_[u] <= 0) {
        in_flight_ -= j;
        continue;
      }
      decoders_[u] += j, decoding_ += j;
      context_sum_[u] += j * (cls(i).prompt_len + 1.0);
      finishing_[u].push_back({step_ + (long long)decode_steps_[u], j});
    }
    if (decoding_ < 0.5) decoding_ = 0;
    if (in_flight_ < 0.5) in_flight_ = 0;
    ++step_;
  }

  const ServingSetup& S_;
  const RequestClasses& k_;
  const int K_;
  const double slots_;
  double queued_;
  double q_ = 1, t_ = 1, M_ = 1;
  std::array<double, kMaxLengthClasses> decode_steps_{}, decoders_{}, context_sum_{}, credit_{};
  struct Finishing {
    long long step = 0;
    double count = 0;
  };
  std::array<std::deque<Finishing>, kMaxLengthClasses> finishing_;
  std::deque<Prompts> prompts_;
  double in_flight_ = 0, decoding_ = 0, admitted_ = 0, wall_s_ = 0;
  long long step_ = 0, priced_ = 0;
  bool closed_ = false;
};

}  // namespace

double offline_mix_run_s(const ServingSetup& S, const BatchingState& b, double concurrency, double requests) {
  const RequestClasses classes = request_classes(S.w);
  const double p = S.plan.pp;
  if (classes.empty() || !(concurrency > 0) || !(requests > 0)) return 0.0;
  // Each micro-batch its share of the slots and of the requests, in whole sequences.
  const double n = std::max(1.0, std::round(requests / p)), slots = std::min(n, std::max(1.0, std::round(concurrency / p)));
  Engine engine(S, classes, slots, n);
  const double run_s = engine.run(kMaxReplayedSteps, 3.0 * slots);
  const double rate = b.requests_per_s / p;  // per micro-batch, per second
  return run_s + (rate > 0 ? engine.unreplayed() / rate : 0.0);
}

}  // namespace cutlab
