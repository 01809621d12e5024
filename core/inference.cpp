#include "core/inference.h"

#include <algorithm>
#include <cmath>

#include "core/compute.h"
#include "core/memory.h"

namespace cutlab {

double dtype_bytes(WeightDtype dtype) {
  switch (dtype) {
    case WeightDtype::FP8: return 1.0;
    case WeightDtype::INT4: return 0.5;
    case WeightDtype::BF16: break;
  }
  return 2.0;
}

double dtype_bytes(KvDtype dtype) { return dtype == KvDtype::FP8 ? 1.0 : 2.0; }

namespace {

// KV cache of one token in one layer on one GPU holding `t`-way TP shards.
double kv_bytes_per_token_layer(const ModelSpec& m, double t, double bytes) {
  if (is_mla(m)) return (m.kv_lora_rank + m.qk_rope_head_dim) * bytes;  // the latent is not split by TP
  const double g_gpu = std::max(1.0, double(m.kv_heads) / t);         // replicated when t > g
  return 2.0 * g_gpu * m.head_dim * bytes;
}

}  // namespace

double kv_cache_bytes_per_token(const ModelSpec& m, KvDtype kv_dtype) {
  return m.layers * kv_bytes_per_token_layer(m, 1.0, dtype_bytes(kv_dtype));
}

InferenceEstimate estimate_inference(const ModelSpec& m, const Cluster& c, const Plan& plan, const Workload& w,
                                     const Placement& pl) {
  InferenceEstimate r;
  const Mesh mesh = derive_mesh(plan, w);
  const Efficiencies& e = c.efficiency;
  const LayerParams el = moe_layer_params(m);
  const double t = plan.tp, h = m.hidden, V = m.vocab, B = w.batch;
  const double wb = dtype_bytes(w.weight_dtype), kvb = dtype_bytes(w.kv_dtype);
  const double ctx_max = double(w.prompt_len) + w.output_len;
  const double ctx_mean = double(w.prompt_len) + w.output_len / 2.0;  // average context over the decode
  const double local_experts = is_moe(m) ? double(m.experts) / plan.ep : 0.0;
  const double hbm_bps = c.hbm_bytes_per_s * e.hbm_stream;
  // GEMMs run at the weight dtype's peak when the GPU has one (fp8); int4 weights are dequantised
  // to bf16 (weight-only quantisation).
  const double peak = w.weight_dtype == WeightDtype::FP8 && c.fp8_flops_per_s > 0 ? c.fp8_flops_per_s : c.bf16_flops_per_s;
  r.replicas = mesh.dp_attn;
  r.kv_cache_bytes_per_token = kv_cache_bytes_per_token(m, w.kv_dtype);

  // Memory per stage.
  const double kv_layer = kv_bytes_per_token_layer(m, t, kvb);
  const double capacity = c.hbm_bytes - c.reserved_bytes;
  double peak_total = -1;
  long long max_batch = -1;
  for (const StageInfo& st : pl.stages) {
    InferenceStageMemory sm;
    sm.stage = st.stage;
    const double n_moe = st.moe_layers, n_dense = st.layers - st.moe_layers;
    const StageParams sp = stage_params(m, plan, w, st);
    sm.weights_bytes = (sp.dense + sp.experts) * wb;
    const double kv_per_seq = st.layers * kv_layer * ctx_max;
    sm.kv_cache_bytes = B * kv_per_seq;
    // Workspace: one layer's prefill of one sequence at a time (residual, norm, QKV, attention output,
    // MLP intermediate, 16-bit), plus fp32 logits of the batch's last tokens on the output stage.
    const double f_gpu = std::max(double(m.ffn_hidden) * (n_dense > 0 ? 1 : 0),
                                  n_moe > 0 ? double(m.expert_ffn_hidden) * (m.top_k + m.shared_experts) : 0.0) / t;
    const double per_token = 2.0 * (3.0 * h + (m.heads / t + 2.0 * std::max(1.0, m.kv_heads / t)) * m.head_dim +
                                    (m.gated_mlp ? 3.0 : 2.0) * f_gpu);
    const double workspace = w.prompt_len * per_token;
    const double logits_per_seq = st.output ? 4.0 * V / t : 0.0;
    sm.activations_bytes = workspace + B * logits_per_seq;
    sm.total_bytes = sm.weights_bytes + sm.kv_cache_bytes + sm.activations_bytes;
    sm.capacity_bytes = capacity;
    sm.fits = sm.total_bytes <= capacity;
    const double free_bytes = capacity - sm.weights_bytes - workspace;
    const long long fit = free_bytes > 0 ? static_cast<long long>(std::floor(free_bytes / (kv_per_seq + logits_per_seq))) : 0;
    max_batch = max_batch < 0 ? fit : std::min(max_batch, fit);
    if (sm.total_bytes > peak_total) {
      peak_total = sm.total_bytes;
      r.peak_stage = st.stage;
    }
    r.memory.push_back(sm);
  }
  r.fits = peak_total <= capacity;
  r.overflow_bytes = r.fits ? 0.0 : peak_total - capacity;
  r.max_batch_that_fits = std::max<long long>(0, max_batch);

  // Communication groups.
  const GroupInfo* tp = find_group(pl, Axis::TP);
  const GroupInfo* ep = find_group(pl, Axis::EP);
  const GroupInfo* pp = find_group(pl, Axis::PP);
  auto tp_allreduce = [&](double bytes) { return tp && tp->size > 1 ? collective_time_s(Collective::AllReduce, bytes, *tp, c) : 0.0; };
  auto ep_alltoall = [&](double bytes) { return ep && ep->size > 1 ? collective_time_s(Collective::AllToAll, bytes, *ep, c) : 0.0; };
  auto pp_send = [&](double bytes) { return pp && pp->size > 1 ? collective_time_s(Collective::SendRecv, bytes, *pp, c) : 0.0; };

  // Prefill: every prompt token through every stage (Workload with seq_len = prompt_len, micro-batch = batch).
  Workload pw = w;
  pw.seq_len = w.prompt_len;
  pw.dtype = peak == c.fp8_flops_per_s && w.weight_dtype == WeightDtype::FP8 ? Dtype::FP8 : Dtype::BF16;
  Plan pplan = plan;
  pplan.micro_batch = w.batch;
  pplan.cp = 1;
  const double prompt_tokens = B * w.prompt_len;
  const double tp_prefill_one = tp_allreduce(2.0 * prompt_tokens * h);
  const double ep_prefill_one = ep_alltoall(2.0 * prompt_tokens * std::max(1, m.top_k) * h);
  for (const StageInfo& st : pl.stages) {
    for (const auto& [first, last] : st.chunks) r.prefill_compute_s += chunk_compute(m, c, pplan, pw, first, last).f_s;
    r.prefill_tp_s += st.layers * 2.0 * tp_prefill_one;
    r.prefill_ep_s += st.moe_layers * 2.0 * ep_prefill_one;
  }
  r.prefill_pp_s = (plan.pp - 1) * pp_send(2.0 * prompt_tokens * h);
  r.ttft_s = r.prefill_compute_s + r.prefill_tp_s + r.prefill_ep_s + r.prefill_pp_s;

  // Decode: one token per sequence of the batch through every stage.
  // Experts touched by B·k routings of uniformly routed tokens: E·(1 − (1 − 1/E)^(B·k)).
  const double touched = is_moe(m) ? local_experts * (1.0 - std::pow(1.0 - 1.0 / m.experts, B * m.top_k)) : 0.0;
  const double tp_decode_one = tp_allreduce(2.0 * B * h);
  const double ep_decode_one = ep_alltoall(2.0 * B * std::max(1, m.top_k) * h);
  for (const StageInfo& st : pl.stages) {
    // Every weight shard is read once per step, except the embedding (a lookup of B rows) and the
    // routed experts that no token of the batch chose.
    const StageParams sp = stage_params(m, plan, w, st);
    const double n_moe = st.moe_layers;
    const double dense = sp.dense - (st.output && m.tied_embeddings ? 0.0 : sp.embedding);  // tied: the output reads it
    const double weights = (dense + n_moe * touched * el.routed_expert / mesh.etp) * wb;
    const double kv = B * st.layers * kv_layer * ctx_mean;
    // FLOPs: 2 per weight per token for dense weights; this GPU's experts see B·k·(local/E) of the
    // token-expert pairs; attention over the context: 2·a·(d_qk + d_v)·ctx per layer.
    const double expert_pairs = is_moe(m) ? B * m.top_k * local_experts / m.experts : 0.0;
    const double flops = 2.0 * B * dense + 2.0 * expert_pairs * n_moe * el.routed_expert / mesh.etp +
                         B * st.layers * 2.0 * (m.heads / t) * (qk_head_dim(m) + v_head_dim_of(m)) * ctx_mean;
    const double mem_s = (weights + kv) / hbm_bps, compute_s = flops / (peak * (peak == c.bf16_flops_per_s ? e.gemm : e.gemm_fp8));
    r.decode_stage_s.push_back(std::max(mem_s, compute_s) + st.layers * 2.0 * tp_decode_one +
                               st.moe_layers * 2.0 * ep_decode_one);
    r.decode_weights_s += weights / hbm_bps;
    r.decode_kv_s += kv / hbm_bps;
    r.decode_compute_s += std::max(0.0, compute_s - mem_s);  // only what exceeds the reads
    r.decode_tp_s += st.layers * 2.0 * tp_decode_one;
    r.decode_ep_s += st.moe_layers * 2.0 * ep_decode_one;
  }
  r.decode_pp_s = (plan.pp - 1) * pp_send(2.0 * B * h);
  r.tpot_s = r.decode_weights_s + r.decode_kv_s + r.decode_compute_s + r.decode_tp_s + r.decode_ep_s + r.decode_pp_s;
  r.stage_idle_fraction = double(plan.pp - 1) / plan.pp;

  r.tokens_per_s_per_user = 1.0 / r.tpot_s;
  r.tokens_per_s_per_replica = B / r.tpot_s;
  r.tokens_per_s_total = r.replicas * r.tokens_per_s_per_replica;
  r.tokens_per_s_per_gpu = r.tokens_per_s_total / mesh.gpus;

  // Communication per output token, one GPU of the first stage.
  const StageInfo& s0 = pl.stages.front();
  auto op = [&](Axis axis, Collective kind, const std::string& what, double msg, double calls,
                const GroupInfo& g, double one) {
    CommOp o;
    o.axis = axis, o.collective = kind, o.what = what, o.message_bytes = msg, o.calls = calls, o.bytes = msg * calls;
    o.group_size = g.size, o.link = g.link, o.time_s = calls * one, o.exposed_s = calls * one;
    r.comm.push_back(o);
  };
  if (tp && tp->size > 1) op(Axis::TP, Collective::AllReduce, "attention and MLP outputs, 2 per layer", 2.0 * B * h, 2.0 * s0.layers, *tp, tp_decode_one);
  if (ep && ep->size > 1 && s0.moe_layers > 0)
    op(Axis::EP, Collective::AllToAll, "token dispatch and combine", 2.0 * B * std::max(1, m.top_k) * h, 2.0 * s0.moe_layers, *ep, ep_decode_one);
  if (pp && pp->size > 1) op(Axis::PP, Collective::SendRecv, "hidden state to the next stage", 2.0 * B * h, 1, *pp, pp_send(2.0 * B * h));
  return r;
}

}  // namespace cutlab
