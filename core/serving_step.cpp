#include "core/serving_step.h"

#include <algorithm>
#include <cmath>

#include "core/memory.h"
#include "core/ops.h"

namespace cutlab {

double kv_bytes_per_token_layer(const ModelSpec& m, double t, double bytes) {
  if (is_mla(m)) return (m.kv_lora_rank + m.qk_rope_head_dim) * bytes;  // the latent is not split by TP
  const double g_gpu = std::max(1.0, double(m.kv_heads) / t);           // replicated when t > g
  return 2.0 * g_gpu * m.head_dim * bytes;
}

double stage_attended_keys(const ModelSpec& m, const StageInfo& st, double context, Attended how) {
  double keys = 0;
  for (const auto& [first, last] : st.chunks)
    for (int i = first; i <= last; ++i) {
      const double full = attended_tokens(m, i, context);
      const bool local = full < context;  // a window or chunk caps this layer
      if (!local) keys += context;
      else if (how == Attended::Held || !m.attention_chunked) keys += std::min(context, double(m.attention_window));
      else keys += m.attention_window / 2.0;
    }
  return keys;
}

double experts_touched(double local, double experts, double routings) {
  if (!(experts > 0) || !(routings > 0)) return 0.0;
  return local * (1.0 - std::pow(1.0 - 1.0 / experts, routings));
}

ServingSetup::ServingSetup(const Resolved& r)
    : m(r.config.model),
      c(r.config.cluster),
      plan(r.config.plan),
      w(r.config.workload),
      pl(r.placement),
      mesh(r.mesh),
      t(plan.tp),
      h(m.hidden),
      wb(dtype_bytes(w.weight_dtype)),
      kv_layer(kv_bytes_per_token_layer(m, t, dtype_bytes(w.kv_dtype))),
      peak(serving_gemm_peak_flops_per_s(c, w)),  // core/precision.h
      gemm_eff(peak == c.bf16_flops_per_s ? c.efficiency.gemm : c.efficiency.gemm_fp8),
      group_replicas(std::max(1.0, double(plan.ep) * mesh.etp / (double(plan.tp) * plan.cp))),
      tp(find_group(pl, Axis::TP)),
      ep(find_group(pl, Axis::EP)),
      pp(find_group(pl, Axis::PP)) {}

double ServingSetup::tp_allreduce(double bytes) const {
  return tp && tp->size > 1 ? collective_time_s(Collective::AllReduce, bytes, *tp, c) : 0.0;
}

double ServingSetup::ep_all_to_all(double bytes) const {
  if (!ep || ep->size <= 1) return 0.0;
  return plan.ep_dispatcher == EpDispatcher::DeepEp ? deduplicated_all_to_all_time_s(bytes, routing_of(m), *ep, c)
                                                    : collective_time_s(Collective::AllToAll, bytes, *ep, c);
}

double ServingSetup::pp_send(double bytes) const {
  return pp && pp->size > 1 ? collective_time_s(Collective::SendRecv, bytes, *pp, c) : 0.0;
}

double StepCost::walk_s() const {
  double s = 0;
  for (double x : stage_s) s += x;
  return s + (stage_s.empty() ? 0.0 : double(stage_s.size() - 1) * pp_send_s);
}

namespace {

// One stage (or the draft head, posed as a stage of one block with the output layer) for `load`.
struct StageStep {
  double weights_s = 0, kv_s = 0, compute_s = 0, tp_s = 0, ep_s = 0, experts_read = 0;
  double total_s() const { return weights_s + kv_s + compute_s + tp_s + ep_s; }
};

StageStep stage_step(const ServingSetup& S, const StageInfo& st, const StepLoad& L) {
  const ModelSpec& m = S.m;
  const Efficiencies& e = S.c.efficiency;
  const LayerParams el = moe_layer_params(m);
  const StageParams sp = stage_params(m, S.plan, S.mesh, st);
  const double n_moe = st.moe_layers, n_layers = st.layers, T = L.tokens();
  const double hbm_bps = S.c.hbm_bytes_per_s * e.hbm_stream;
  StageStep r;
  // Weights: every shard once per step (Pope et al. 2022 §3: decode is bound by loading the weights),
  // except the embedding (a lookup of T rows) and the routed experts no token of the EP group chose:
  // the group's tokens are this replica's T times the replicas whose tokens reach the group.
  const double dense = sp.dense - (st.output && m.tied_embeddings ? 0.0 : sp.embedding);  // tied: the output reads it
  const double E = m.experts, k = m.top_k, local = is_moe(m) ? E / S.plan.ep : 0.0;
  const double group_routings = T * S.group_replicas * k;
  r.experts_read = is_moe(m) ? experts_touched(local, E, group_routings) : 0.0;
  const double weights = (dense + n_moe * r.experts_read * el.routed_expert / S.mesh.etp) * S.wb;
  // KV cache: each decoding sequence reads its context once per step (its verified draft tokens
  // share the read); prefill chunks read the K/V of their prompt's earlier chunks.
  // (A local-attention layer reads only its window or chunk: stage_attended_keys.)
  const double kv = S.kv_layer *
                    (L.decode_seqs * stage_attended_keys(m, st, L.decode_context, Attended::Mean) + n_layers * L.prefill_kv_tokens);
  // FLOPs: 2 per dense weight per token; this GPU's experts take group_routings/ep token copies
  // (local/E of them), 2 FLOPs per expert weight each; attention 2·a/t·(d_qk + d_v) per key per token
  // per layer (QKᵀ and AV).
  const double gemm_flops = 2.0 * T * dense + 2.0 * (group_routings / std::max(1, S.plan.ep)) * n_moe * el.routed_expert / S.mesh.etp;
  const double per_key = 2.0 * (m.heads / S.t) * (qk_head_dim(m) + v_head_dim_of(m));
  const double decode_attn = per_key * L.decode_seqs * L.decode_tokens * stage_attended_keys(m, st, L.decode_context, Attended::Mean);
  const double prefill_attn = per_key * L.prefill_tokens * stage_attended_keys(m, st, L.prefill_context, Attended::Mean);
  // Decode attention is memory-bound (a few FLOPs per KV byte) and runs at the GEMM rate here;
  // prefill attention at flash attention's efficiency for the prompt's key length (core/ops.h).
  const double prefill_key_len = std::max(1.0, 2.0 * L.prefill_context);
  const double compute_s = (gemm_flops + decode_attn) / (S.peak * S.gemm_eff) +
                           (prefill_attn > 0 ? prefill_attn / (S.c.bf16_flops_per_s *
                                                               attention_efficiency(qk_head_dim(m), prefill_key_len, e.attention))
                                             : 0.0);
  const double mem_s = (weights + kv) / hbm_bps;
  r.weights_s = weights / hbm_bps;
  r.kv_s = kv / hbm_bps;
  r.compute_s = std::max(0.0, compute_s - mem_s);  // only what exceeds the reads (roofline)
  // Two TP all-reduces per layer of the step's T hidden states, 16-bit (Shoeybi et al. 2019 §3); an
  // EP dispatch (Plan::ep_dispatch_dtype) and a bf16 combine of T·k copies per MoE layer.
  r.tp_s = n_layers * 2.0 * S.tp_allreduce(2.0 * T * S.h);
  if (n_moe > 0 && T > 0)
    r.ep_s = n_moe * (S.ep_all_to_all(ep_dispatch_bytes_per_value(S.plan.ep_dispatch_dtype) * T * k * S.h) +
                      S.ep_all_to_all(2.0 * T * k * S.h));
  return r;
}

}  // namespace

StepCost step_cost(const ServingSetup& S, const StepLoad& load) {
  StepCost c;
  for (const StageInfo& st : S.pl.stages) {
    const StageStep s = stage_step(S, st, load);
    c.stage_s.push_back(s.total_s());
    c.weights_s += s.weights_s, c.kv_s += s.kv_s, c.compute_s += s.compute_s, c.tp_s += s.tp_s, c.ep_s += s.ep_s;
    if (st.moe_layers > 0) c.local_experts_read = s.experts_read;
  }
  // The hidden states of the step's tokens, 16-bit, to the next stage.
  c.pp_send_s = S.pp_send(2.0 * load.tokens() * S.h);
  return c;
}

double draft_pass_s(const ServingSetup& S, double decode_seqs, double decode_context) {
  StageInfo head;
  head.layers = 1;
  head.moe_layers = is_moe(S.m) ? 1 : 0;
  head.output = true;
  StepLoad one;
  one.decode_seqs = decode_seqs;
  one.decode_context = decode_context;
  return stage_step(S, head, one).total_s();
}

}  // namespace cutlab
