#include "core/stage_balance.h"

#include <algorithm>
#include <cmath>

#include "core/estimate.h"

namespace cutlab {

namespace {

// The split evaluated by the whole model; false when the plan with it is not valid (a stage with
// fewer layers than its chunks, say) or does not evaluate.
bool evaluate_split(const Config& base, const std::vector<int>& layers, double max_fraction, StageSplit& out) {
  Config c = base;
  c.plan.layers_per_stage = layers;
  const Result<Resolved> r = resolve(c);
  if (!r.ok()) return false;
  const Result<TrainingEstimate> e = evaluate_training(r.value);
  if (!e.ok()) return false;
  out = StageSplit{};
  out.layers_per_stage = layers;
  for (const StageTime& st : e.value.stages) out.busy_s.push_back(st.busy_s);
  bool fits = true;
  for (const StageMemory& sm : e.value.memory.per_stage) {
    out.memory_bytes.push_back(sm.total_bytes);
    out.capacity_bytes = sm.capacity_bytes;
    fits = fits && sm.total_bytes <= max_fraction * sm.capacity_bytes;
  }
  out.fits = fits;
  out.step_s = e.value.step_s;
  out.tokens_per_s = e.value.tokens_per_s;
  return true;
}

double worst_memory(const StageSplit& s) { return *std::max_element(s.memory_bytes.begin(), s.memory_bytes.end()); }

// A fitting split beats one that does not; among fitting splits the shorter step wins, among the
// others the smaller peak memory.
bool better(const StageSplit& a, const StageSplit& b) {
  if (a.fits != b.fits) return a.fits;
  if (a.fits) return a.step_s < b.step_s * (1.0 - 1e-9);
  return worst_memory(a) < worst_memory(b) * (1.0 - 1e-9);
}

// The stage that limits the split: the fullest while it does not fit, else the busiest.
int limiting_stage(const StageSplit& s) {
  const std::vector<double>& v = s.fits ? s.busy_s : s.memory_bytes;
  return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

Result<StageBalance> balance_stages(const Config& base, const StageBalanceOptions& opt) {
  Result<StageBalance> out;
  const Result<Resolved> resolved = resolve(base);
  if (!resolved.ok()) {
    out.errors = resolved.errors;
    return out;
  }
  const Plan& plan = base.plan;
  if (base.workload.mode != Mode::Train)
    out.errors.push_back(
        {ErrorCode::Incompatible, "/workload/mode", "stage balancing splits a training pipeline; serving is evaluated as given"});
  if (plan.pp < 2)
    out.errors.push_back(
        {ErrorCode::Incompatible, "/plan/pp", "stage balancing needs a pipeline: pp ≥ 2, got " + std::to_string(plan.pp)});
  if (plan.embedding_in_pipeline_split || plan.loss_in_pipeline_split)
    out.errors.push_back({ErrorCode::Incompatible,
                          plan.embedding_in_pipeline_split ? "/plan/embedding_in_pipeline_split" : "/plan/loss_in_pipeline_split",
                          "the split already counts the embedding or the loss as layers; Megatron-Core does not combine that with "
                          "per-stage layer counts (layers_per_stage)"});
  if (!(opt.max_memory_fraction > 0 && opt.max_memory_fraction <= 1) || opt.max_evaluations < 1)
    out.errors.push_back({ErrorCode::OutOfRange, "/balance", "max_memory_fraction must be in (0, 1] and max_evaluations ≥ 1"});
  if (!out.ok()) return out;
  StageBalance& b = out.value;
  // Bounded work: at most 2,000,000 simulated (micro-batch, chunk) pairs over all evaluations (about
  // 1.5 s natively at the 131,072 pairs one step may simulate, core/schedule.h), and one round at least.
  const double pairs = double(plan.pp) * resolved.value.mesh.chunks * resolved.value.mesh.num_micro_batches;
  const int cap = std::min(opt.max_evaluations, std::max(plan.pp, static_cast<int>(2e6 / pairs)));
  if (!evaluate_split(base, stage_layers(base.model, plan), opt.max_memory_fraction, b.current)) {
    out.errors.push_back({ErrorCode::Incompatible, "/plan/layers_per_stage", "the plan's own split does not evaluate"});
    return out;
  }
  b.evaluations = 1;
  b.suggested = b.current;
  // Each round: one layer off the limiting stage onto the stage that gives the best plan; when no
  // such move helps, one layer from any stage to any other (the fill and drain of a schedule, or the
  // memory of another stage, can make the limiting stage not the one to relieve).
  bool everywhere = false;
  while (b.evaluations < cap) {
    const int limiting = limiting_stage(b.suggested);
    StageSplit best = b.suggested;
    bool moved = false;
    for (int from = everywhere ? 0 : limiting; from < (everywhere ? plan.pp : limiting + 1); ++from)
      for (int to = 0; to < plan.pp && b.evaluations < cap; ++to) {
        if (to == from || (everywhere && from == limiting)) continue;
        std::vector<int> layers = b.suggested.layers_per_stage;
        --layers[from];
        ++layers[to];
        StageSplit cand;
        ++b.evaluations;
        if (evaluate_split(base, layers, opt.max_memory_fraction, cand) && better(cand, best)) {
          best = std::move(cand);
          moved = true;
        }
      }
    if (moved) {
      b.suggested = std::move(best);
      everywhere = false;
    } else if (!everywhere) {
      everywhere = true;
    } else {
      break;
    }
  }
  b.improved = b.suggested.layers_per_stage != b.current.layers_per_stage;
  return out;
}

}  // namespace cutlab
