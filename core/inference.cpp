#include "core/inference.h"

#include <algorithm>
#include <cmath>

#include "core/compute.h"
#include "core/memory.h"

namespace cutlab {

namespace {

// KV cache of one token in one layer on one GPU holding `t`-way TP shards.
double kv_bytes_per_token_layer(const ModelSpec& m, double t, double bytes) {
  if (is_mla(m)) return (m.kv_lora_rank + m.qk_rope_head_dim) * bytes;  // the latent is not split by TP
  const double g_gpu = std::max(1.0, double(m.kv_heads) / t);           // replicated when t > g
  return 2.0 * g_gpu * m.head_dim * bytes;
}

}  // namespace

double kv_cache_bytes_per_token(const ModelSpec& m, KvDtype kv_dtype) {
  return m.layers * kv_bytes_per_token_layer(m, 1.0, dtype_bytes(kv_dtype));
}

namespace {

// What every serving step reads from the resolved config.
struct Serving {
  const ModelSpec& m;
  const Cluster& c;
  const Plan& plan;
  const Workload& w;
  const Placement& pl;
  const Mesh& mesh;
  double t, h, V, B;    // tp, hidden, vocab, batch per replica
  double wb, kv_layer;  // bytes per weight; KV bytes per token per layer on one GPU
  double peak;          // GEMM peak of the weight dtype
  const GroupInfo *tp, *ep, *pp;
  explicit Serving(const Resolved& r)
      : m(r.config.model),
        c(r.config.cluster),
        plan(r.config.plan),
        w(r.config.workload),
        pl(r.placement),
        mesh(r.mesh),
        t(plan.tp),
        h(m.hidden),
        V(m.vocab),
        B(w.batch),
        wb(dtype_bytes(w.weight_dtype)),
        kv_layer(kv_bytes_per_token_layer(m, t, dtype_bytes(w.kv_dtype))),
        peak(serving_gemm_peak_flops_per_s(c, w)),  // core/precision.h
        tp(find_group(pl, Axis::TP)),
        ep(find_group(pl, Axis::EP)),
        pp(find_group(pl, Axis::PP)) {}
  double tp_allreduce(double bytes) const {
    return tp && tp->size > 1 ? collective_time_s(Collective::AllReduce, bytes, *tp, c) : 0.0;
  }
  double ep_alltoall(double bytes) const { return ep && ep->size > 1 ? collective_time_s(Collective::AllToAll, bytes, *ep, c) : 0.0; }
  double pp_send(double bytes) const { return pp && pp->size > 1 ? collective_time_s(Collective::SendRecv, bytes, *pp, c) : 0.0; }
};

// Memory per stage: weights, the KV cache of the batch, a prefill workspace; and the largest batch
// whose KV cache fits beside the weights.
void serving_memory(const Serving& S, InferenceEstimate& r) {
  const ModelSpec& m = S.m;
  const double t = S.t, h = S.h, B = S.B;
  const double ctx_max = double(S.w.prompt_len) + S.w.output_len;
  const double capacity = S.c.hbm_bytes - S.c.reserved_bytes;
  long long max_batch = -1;
  for (const StageInfo& st : S.pl.stages) {
    StageMemory sm;
    sm.stage = st.stage;
    const double n_moe = st.moe_layers, n_dense = st.layers - st.moe_layers;
    const StageParams sp = stage_params(m, S.plan, S.mesh, st);
    sm.dense_params = sp.dense;
    sm.expert_params = sp.experts;
    sm.weights_bytes = (sp.dense + sp.experts) * S.wb;
    const double kv_per_seq = st.layers * S.kv_layer * ctx_max;
    sm.kv_cache_bytes = B * kv_per_seq;
    // Workspace: one layer's prefill of one sequence at a time (residual, norm, QKV, attention output,
    // MLP intermediate, 16-bit), plus fp32 logits of the batch's last tokens on the output stage.
    const double f_gpu = std::max(double(m.ffn_hidden) * (n_dense > 0 ? 1 : 0),
                                  n_moe > 0 ? double(m.expert_ffn_hidden) * (m.top_k + m.shared_experts) : 0.0) /
                         t;
    const double per_token = 2.0 * (3.0 * h + (m.heads / t + 2.0 * std::max(1.0, m.kv_heads / t)) * m.head_dim +
                                    (m.gated_mlp ? 3.0 : 2.0) * f_gpu);
    const double workspace = S.w.prompt_len * per_token;
    const double logits_per_seq = st.output ? 4.0 * S.V / t : 0.0;
    sm.activations_bytes = workspace + B * logits_per_seq;
    sm.total_bytes = sm.weights_bytes + sm.kv_cache_bytes + sm.activations_bytes;
    sm.capacity_bytes = capacity;
    sm.fits = sm.total_bytes <= capacity;
    const double free_bytes = capacity - sm.weights_bytes - workspace;
    const long long fit = free_bytes > 0 ? static_cast<long long>(std::floor(free_bytes / (kv_per_seq + logits_per_seq))) : 0;
    max_batch = max_batch < 0 ? fit : std::min(max_batch, fit);
    r.memory.per_stage.push_back(sm);
  }
  summarize_peak(r.memory);
  r.max_batch_that_fits = std::max<long long>(0, max_batch);
}

// Prefill: every prompt token through every stage (seq_len = prompt_len, micro-batch = batch), on
// the same mesh and placement (serving has cp = 1, and the batch does not change the mesh).
void serving_prefill(const Resolved& resolved, const Serving& S, InferenceEstimate& r) {
  Resolved prefill = resolved;
  prefill.config.workload.seq_len = S.w.prompt_len;
  use_serving_gemm_precision(prefill.config);  // core/precision.h
  prefill.config.plan.micro_batch = S.w.batch;
  prefill.config.plan.cp = 1;
  const double prompt_tokens = S.B * S.w.prompt_len;
  const double tp_prefill_one = S.tp_allreduce(2.0 * prompt_tokens * S.h);
  const double ep_prefill_one = S.ep_alltoall(2.0 * prompt_tokens * std::max(1, S.m.top_k) * S.h);
  const LayerCompute layers = layer_compute(prefill);
  for (const StageInfo& st : S.pl.stages) {
    for (size_t c = 0; c < st.chunks.size(); ++c) r.prefill_compute_s += chunk_compute(prefill, layers, st, c).f_s;
    r.prefill_tp_s += st.layers * 2.0 * tp_prefill_one;
    r.prefill_ep_s += st.moe_layers * 2.0 * ep_prefill_one;
  }
  r.prefill_pp_s = (S.plan.pp - 1) * S.pp_send(2.0 * prompt_tokens * S.h);
  r.ttft_s = r.prefill_compute_s + r.prefill_tp_s + r.prefill_ep_s + r.prefill_pp_s;
}

// Decode: one token per sequence of the batch through every stage.
void serving_decode(const Serving& S, InferenceEstimate& r) {
  const ModelSpec& m = S.m;
  const Efficiencies& e = S.c.efficiency;
  const LayerParams el = moe_layer_params(m);
  const double t = S.t, B = S.B, peak = S.peak;
  const double ctx_mean = double(S.w.prompt_len) + S.w.output_len / 2.0;  // average context over the decode
  const double local_experts = is_moe(m) ? double(m.experts) / S.plan.ep : 0.0;
  const double hbm_bps = S.c.hbm_bytes_per_s * e.hbm_stream;
  // Experts touched by B·k routings of uniformly routed tokens: E·(1 − (1 − 1/E)^(B·k)).
  const double touched = is_moe(m) ? local_experts * (1.0 - std::pow(1.0 - 1.0 / m.experts, B * m.top_k)) : 0.0;
  const double tp_decode_one = S.tp_allreduce(2.0 * B * S.h);
  const double ep_decode_one = S.ep_alltoall(2.0 * B * std::max(1, m.top_k) * S.h);
  for (const StageInfo& st : S.pl.stages) {
    // Every weight shard is read once per step, except the embedding (a lookup of B rows) and the
    // routed experts that no token of the batch chose.
    const StageParams sp = stage_params(m, S.plan, S.mesh, st);
    const double n_moe = st.moe_layers;
    const double dense = sp.dense - (st.output && m.tied_embeddings ? 0.0 : sp.embedding);  // tied: the output reads it
    const double weights = (dense + n_moe * touched * el.routed_expert / S.mesh.etp) * S.wb;
    const double kv = B * st.layers * S.kv_layer * ctx_mean;
    // FLOPs: 2 per weight per token for dense weights; this GPU's experts see B·k·(local/E) of the
    // token-expert pairs; attention over the context: 2·a·(d_qk + d_v)·ctx per layer.
    const double expert_pairs = is_moe(m) ? B * m.top_k * local_experts / m.experts : 0.0;
    const double flops = 2.0 * B * dense + 2.0 * expert_pairs * n_moe * el.routed_expert / S.mesh.etp +
                         B * st.layers * 2.0 * (m.heads / t) * (qk_head_dim(m) + v_head_dim_of(m)) * ctx_mean;
    const double mem_s = (weights + kv) / hbm_bps, compute_s = flops / (peak * (peak == S.c.bf16_flops_per_s ? e.gemm : e.gemm_fp8));
    r.decode_stage_s.push_back(std::max(mem_s, compute_s) + st.layers * 2.0 * tp_decode_one + st.moe_layers * 2.0 * ep_decode_one);
    r.decode_weights_s += weights / hbm_bps;
    r.decode_kv_s += kv / hbm_bps;
    r.decode_compute_s += std::max(0.0, compute_s - mem_s);  // only what exceeds the reads
    r.decode_tp_s += st.layers * 2.0 * tp_decode_one;
    r.decode_ep_s += st.moe_layers * 2.0 * ep_decode_one;
  }
  r.decode_pp_s = (S.plan.pp - 1) * S.pp_send(2.0 * B * S.h);
  r.tpot_s = r.decode_weights_s + r.decode_kv_s + r.decode_compute_s + r.decode_tp_s + r.decode_ep_s + r.decode_pp_s;
  r.stage_idle_fraction = double(S.plan.pp - 1) / S.plan.pp;
  r.tokens_per_s_per_user = 1.0 / r.tpot_s;
  r.tokens_per_s_per_replica = B / r.tpot_s;
  r.tokens_per_s_total = r.replicas * r.tokens_per_s_per_replica;
  r.tokens_per_s_per_gpu = r.tokens_per_s_total / S.mesh.gpus;
}

// Communication per output token, one GPU of the first stage.
void serving_comm(const Serving& S, InferenceEstimate& r) {
  const StageInfo& s0 = S.pl.stages.front();
  const double B = S.B, h = S.h, k = std::max(1, S.m.top_k);
  auto op = [&](Axis axis, Collective kind, const std::string& what, double msg, double calls, const GroupInfo& g, double one) {
    CommOp o;
    o.axis = axis, o.collective = kind, o.what = what, o.message_bytes = msg, o.calls = calls, o.bytes = msg * calls;
    o.group_size = g.size, o.link = g.link, o.time_s = calls * one, o.exposed_s = calls * one;
    r.comm.push_back(o);
  };
  if (S.tp && S.tp->size > 1)
    op(Axis::TP, Collective::AllReduce, "attention and MLP outputs, 2 per layer", 2.0 * B * h, 2.0 * s0.layers, *S.tp,
       S.tp_allreduce(2.0 * B * h));
  if (S.ep && S.ep->size > 1 && s0.moe_layers > 0)
    op(Axis::EP, Collective::AllToAll, "token dispatch and combine", 2.0 * B * k * h, 2.0 * s0.moe_layers, *S.ep,
       S.ep_alltoall(2.0 * B * k * h));
  if (S.pp && S.pp->size > 1)
    op(Axis::PP, Collective::SendRecv, "hidden state to the next stage", 2.0 * B * h, 1, *S.pp, S.pp_send(2.0 * B * h));
}

}  // namespace

InferenceEstimate estimate_inference(const Resolved& resolved_with_mtp) {
  // Serving runs the model without its multi-token-prediction modules (a training objective;
  // DeepSeek-V3 §2.2 "we discard the MTP modules" at inference).
  Resolved resolved = resolved_with_mtp;
  resolved.config.model.mtp_layers = 0;
  const Serving S(resolved);
  InferenceEstimate r;
  r.replicas = S.mesh.dp_attn;
  r.kv_cache_bytes_per_token = kv_cache_bytes_per_token(S.m, S.w.kv_dtype);
  serving_memory(S, r);
  serving_prefill(resolved, S, r);
  serving_decode(S, r);
  serving_comm(S, r);
  return r;
}

}  // namespace cutlab
