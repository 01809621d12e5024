// Shared test helpers: configs built from presets.
#pragma once
#include <nlohmann/json.hpp>

#include "core/estimate.h"
#include "core/presets.h"

namespace cutlab::test {

inline Config config(const char* model, const char* cluster, int tp, int pp, int dp, int seq_len, int global_batch) {
  Config c;
  c.model = *find_model_preset(model);
  c.cluster = *find_cluster_preset(cluster);
  c.plan.tp = tp;
  c.plan.pp = pp;
  c.plan.dp = dp;
  c.workload.seq_len = seq_len;
  c.workload.global_batch = global_batch;
  return c;
}

// The config with its mesh and placement derived, without validation (unit tests of one step).
inline Resolved resolved(const Config& c) {
  Resolved r{c, derive_mesh(c.plan, c.workload), {}};
  r.placement = place(c, r.mesh);
  return r;
}

// The training result of a config that must evaluate (nullptr-free: fails the test otherwise).
inline const TrainingEstimate* training(const Result<Estimate>& r) {
  return r.ok() ? std::get_if<TrainingEstimate>(&r.value) : nullptr;
}
inline const ServingEstimate* serving(const Result<Estimate>& r) { return r.ok() ? std::get_if<ServingEstimate>(&r.value) : nullptr; }
// The serving estimate of a config, or a default one (no throughput) when it does not evaluate.
inline InferenceEstimate inference(const Config& c) {
  const Result<Estimate> r = evaluate(c);
  const ServingEstimate* s = serving(r);
  return s ? s->serving : InferenceEstimate{};
}

// True when a JSON value holds a null anywhere (nlohmann writes NaN and infinities as null).
inline bool has_null(const nlohmann::json& j) {
  if (j.is_null()) return true;
  if (j.is_structured())
    for (const nlohmann::json& v : j)
      if (has_null(v)) return true;
  return false;
}

// A GPT-shaped model as in Korthikanti et al. 2022 (f = 4h, MHA, dropout, learned masks).
inline ModelSpec gpt_shape(int layers, int hidden, int heads, int vocab = 51200) {
  ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.tied_embeddings = true;
  m.dropout = true;
  return m;
}

}  // namespace cutlab::test
