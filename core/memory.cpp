#include "core/memory.h"

#include <algorithm>

namespace cutlab {

StateBytesPerParam state_bytes_per_param(const Plan& plan, const Workload& w, double d) {
  StateBytesPerParam b;
  b.weights = 2.0;  // bf16/fp16 working copy
  b.grads = w.grad_dtype == GradDtype::FP32 ? 4.0 : 2.0;
  b.optimizer = 12.0;  // fp32 master weights, Adam momentum and variance (ZeRO paper K = 12)
  const int zero = effective_zero(plan);
  if (zero >= 1) b.optimizer /= d;
  if (zero >= 2) b.grads /= d;
  if (zero >= 3) b.weights /= d;
  return b;
}

StageParams stage_params(const ModelSpec& m, const Plan& plan, const Mesh& mesh, const StageInfo& st) {
  StageParams sp;
  const LayerParams dl = dense_layer_params(m), el = moe_layer_params(m);
  const double t = plan.tp, Vh = double(m.vocab) * m.hidden;
  const double n_moe = st.moe_layers, n_dense = st.layers - st.moe_layers;
  sp.dense = st.layers * (attention_params_per_gpu(dl, m, t) + dl.norms) + n_dense * dl.dense_mlp / t +
             n_moe * (el.router + el.shared_experts / t);
  if (st.embedding) sp.embedding = Vh / t;
  sp.dense += sp.embedding;
  if (st.output && !(m.tied_embeddings && st.embedding)) sp.dense += Vh / t;  // tied and PP = 1: one matrix
  if (st.output) sp.dense += m.hidden;                                        // final norm
  if (is_moe(m)) sp.experts = n_moe * (double(m.experts) / plan.ep) * el.routed_expert / mesh.etp;
  return sp;
}

double layer_activation_bytes(const ModelSpec& m, const Plan& plan, const Workload& w, const Mesh& mesh, bool moe) {
  // Korthikanti et al. 2022 §4.1 count, per layer, 16-bit unless noted (bytes):
  //   two norm inputs 4sbh, attention and MLP inputs 2sbh each, two dropout masks sbh each
  //   (1 byte), Q and K 4sbh, V 2sbh, projection input 2sbh, MLP 4sbf (GeLU input and output),
  //   scores 2as²b + mask as²b + dropout output 2as²b  →  s·b·h·(34 + 5·a·s/h) for f = 4h.
  // TP divides what lives between the split GEMMs; SP divides the rest; CP divides s.
  const double s = double(w.seq_len) / plan.cp, b = plan.micro_batch, h = m.hidden, t = plan.tp;
  const double ts = plan.sp ? t : 1.0;
  const double a_gpu = double(m.heads) / t;
  const double g_gpu = std::max(1.0, double(m.kv_heads) / t);  // KV heads are replicated when tp > g
  const double d_qk = qk_head_dim(m), d_v = v_head_dim_of(m);
  const double drop = m.dropout ? 1.0 : 0.0;

  if (plan.recompute == Recompute::Full) return 2.0 * s * b * h / ts;  // only the layer input is kept
  if (plan.recompute == Recompute::OpSac) {
    // torchtitan's per-op SAC (parallelisms/parallelize_llama.py @ 9dec370: _save_list and
    // _custom_policy) keeps the block's input (the checkpoint's argument), the outputs of the 1st,
    // 3rd, 5th and 7th matmul (Q, V, the gate (or up) projection, and with gating the down
    // projection, whose row-parallel output is the full h before its reduction), the attention
    // kernel's output and its fp32 log-sum-exp, and under TP with SP the two reduce-scatter outputs;
    // it recomputes K, O, the up projection and every memory-bound op. Dense layers only (plan.cpp).
    return 2.0 * s * b * h / ts + 2.0 * s * b * a_gpu * d_qk + 2.0 * s * b * g_gpu * d_v + 2.0 * s * b * a_gpu * d_v +
           4.0 * s * b * a_gpu + 2.0 * s * b * m.ffn_hidden / t + (m.gated_mlp ? 2.0 * s * b * h : 0.0) +
           (plan.sp && t > 1 ? 2.0 * 2.0 * s * b * h / t : 0.0);
  }

  const double outside_tp = s * b * h * (4 + 2 + 2 + 2 * drop) / ts;
  double attention;
  if (is_mla(m)) {
    // MLA: the latent projections' outputs (q latent, kv latent + rope key) are kept for the
    // up-projection backward, then decompressed per-head Q, K (d_nope + d_rope), V and O input.
    const double latents = 2.0 * s * b * (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim);
    attention = latents + 2.0 * s * b * a_gpu * (d_qk + d_qk + d_v + d_v);
  } else {
    attention = 2.0 * s * b * (a_gpu * d_qk + g_gpu * d_qk + g_gpu * d_v + a_gpu * d_v);
  }
  const bool keep_scores = plan.recompute == Recompute::None && !plan.flash_attention;
  // Scores of this rank's s/cp queries against all s keys (as²b when cp = 1).
  const double scores = keep_scores ? (2.0 + 3.0 * drop) * a_gpu * s * (s * plan.cp) * b : 0.0;
  // MLP: GeLU input and output (4sbf); SwiGLU (fused, Megatron's bias_swiglu_fusion) keeps the
  // 2f-wide gate/up output and the product fed to the down projection: 6sbf.
  const double per_f = m.gated_mlp ? 6.0 : 4.0;
  double mlp;
  if (!moe) {
    mlp = per_f * s * b * m.ffn_hidden / t;
  } else {
    // Routed tokens: with balanced routing each EP rank receives s·b·k token copies; it keeps
    // their permuted inputs (2h), the expert MLP activations split over the expert TP group, and the
    // experts' outputs (2h), kept for the weighted combine: its backward needs them for the gradient
    // of the routing probabilities (Megatron-Core moe_utils.unpermute with probs).
    const double k = m.top_k, fe = m.expert_ffn_hidden;
    // Tokens reaching this GPU's experts: s·b·etp/tp (= s·b without folding, where etp = tp).
    const double routed = s * b * mesh.etp / t * k * (2.0 * h + 2.0 * h + per_f * fe / mesh.etp);
    const double shared = per_f * s * b * fe * m.shared_experts / t;
    const double router = 4.0 * s * b * m.experts;  // fp32 router logits
    mlp = routed + shared + router;
  }
  return outside_tp + attention + scores + mlp;
}

double in_flight_micro_batches(const Plan& plan, int m, int i) {
  const double p = plan.pp;
  if (plan.schedule == Schedule::GPipe) return m;
  if (plan.schedule == Schedule::Interleaved && plan.vpp > 1) {
    // Megatron's interleaved warm-up runs 2(p−i−1) + (v−1)p chunk forwards before the first
    // backward; each chunk is 1/v of the stage. Stage 0: p + (p−1)/v = p·(1 + (p−1)/(p·v))
    // (Korthikanti et al. 2022 §4.2.3).
    const double v = plan.vpp;
    return std::min<double>(m, (2.0 * (p - i - 1) + (v - 1) * p + 1) / v);
  }
  if (plan.schedule == Schedule::DualPipe) {
    // DeepSeek-V3 Table 2: PP + 1 micro-batches of one stage's layers; a DualPipe device holds
    // two stages' layers, so in units of its own layers that is (p + 1)/2.
    return std::min<double>(m, p + 1) / 2.0;
  }
  return std::min<double>(m, p - i);  // 1F1B and ZB-H1 (Qi et al. 2023: same as 1F1B)
}

MemoryResult memory_per_stage(const Resolved& r, const std::vector<double>& in_flight) {
  const ModelSpec& m = r.config.model;
  const Cluster& c = r.config.cluster;
  const Plan& plan = r.config.plan;
  const Workload& w = r.config.workload;
  const Mesh& mesh = r.mesh;
  MemoryResult out;
  const LayerParams dl = dense_layer_params(m), el = moe_layer_params(m);
  const double t = plan.tp, V = m.vocab, h = m.hidden;
  const double dense_shards = double(mesh.dp_attn) * plan.cp;  // DP × CP (× EP) replicas of dense weights
  const double expert_shards = mesh.edp;
  const StateBytesPerParam dense_b = state_bytes_per_param(plan, w, dense_shards);
  const StateBytesPerParam expert_b = state_bytes_per_param(plan, w, expert_shards);
  const double act_dense = layer_activation_bytes(m, plan, w, mesh, false);
  const double act_moe = is_moe(m) ? layer_activation_bytes(m, plan, w, mesh, true) : 0.0;
  // With full recompute the backward of one layer rematerialises its activations in full; with
  // per-op SAC, the part it did not keep.
  Plan no_recompute = plan;
  no_recompute.recompute = Recompute::Selective;
  const double full_layer = std::max(layer_activation_bytes(m, no_recompute, w, mesh, false),
                                     is_moe(m) ? layer_activation_bytes(m, no_recompute, w, mesh, true) : 0.0);
  const double act_rematerialised = plan.recompute == Recompute::Full    ? full_layer
                                    : plan.recompute == Recompute::OpSac ? std::max(0.0, full_layer - act_dense)
                                                                         : 0.0;
  const double capacity = c.hbm_bytes - c.reserved_bytes;

  for (const StageInfo& st : r.placement.stages) {
    StageMemory sm;
    sm.stage = st.stage;
    const double n_moe = st.moe_layers, n_dense = st.layers - st.moe_layers;
    const StageParams sp = stage_params(m, plan, mesh, st);
    sm.dense_params = sp.dense;
    sm.expert_params = sp.experts;
    // fp8 training casts each weight to fp8 as its layer runs (Transformer Engine); the transient
    // copy is one layer's, not counted.
    sm.weights_bytes = sm.dense_params * dense_b.weights + sm.expert_params * expert_b.weights;
    sm.grads_bytes = sm.dense_params * dense_b.grads + sm.expert_params * expert_b.grads;
    if (mesh.zero >= 3) {
      // ZeRO-3 / FSDP units: each transformer layer, and the stage's remaining parameters (embedding,
      // output layer, final norm) as one root unit (torchtitan apply_fsdp: fully_shard per block, then
      // fully_shard(model); PyTorch FSDP, Zhao et al. 2023, arXiv:2304.11277 §3). The largest unit runs
      // with the next layer prefetched, both all-gathered in 16 bits; in the backward a layer's
      // unsharded 16-bit gradients and the reduce-scatter input in the gradient dtype (FSDP2
      // foreach_reduce copies them into one flat reduce_dtype buffer) are alive as well.
      const double layer = (n_moe > 0 ? attention_params_per_gpu(el, m, t) + el.shared_experts / t +
                                            (double(m.experts) / plan.ep) * el.routed_expert / mesh.etp
                                      : attention_params_per_gpu(dl, m, t) + dl.dense_mlp / t);
      const double root = sp.embedding + (st.output && !(m.tied_embeddings && st.embedding) ? V * h / t : 0.0) + (st.output ? h : 0.0);
      sm.weights_bytes += 2.0 * (std::max(layer, root) + layer);
      sm.grads_bytes += (2.0 + (w.grad_dtype == GradDtype::FP32 ? 4.0 : 2.0)) * layer;
    }
    sm.optimizer_bytes = sm.dense_params * dense_b.optimizer + sm.expert_params * expert_b.optimizer;
    sm.activation_bytes_per_micro_batch = n_dense * act_dense + n_moe * act_moe;
    sm.in_flight_micro_batches = static_cast<size_t>(st.stage) < in_flight.size()
                                     ? in_flight[st.stage]
                                     : in_flight_micro_batches(plan, mesh.num_micro_batches, st.stage);
    sm.activations_bytes = sm.in_flight_micro_batches * sm.activation_bytes_per_micro_batch + act_rematerialised;
    if (st.output) {
      // Output layer and loss of the micro-batch in flight, over this rank's vocabulary slice, plus
      // the final norm's input and output (4·s·b·h). Fused (Megatron's vocab-parallel cross entropy,
      // in place): one fp32 buffer of the logits, the softmax kept for the backward. Unfused
      // (PyTorch F.cross_entropy on logits.float(), torchtitan train.py): log_softmax keeps its fp32
      // output, and the backward starts with two more fp32 buffers of the same size, the loss's
      // gradient and log_softmax's input gradient (derivatives.yaml: _log_softmax_backward_data reads
      // the output): 12 bytes per logit at that moment, more than the forward's 10 (bf16 logits,
      // their fp32 copy and the log-softmax output).
      const double s = double(w.seq_len) / plan.cp, b = plan.micro_batch;
      sm.activations_bytes += (plan.fused_cross_entropy ? 4.0 : 12.0) * s * b * V / t + 4.0 * s * b * h / (plan.sp ? t : 1.0);
    }
    // The caching allocator reserves more than the tensors it holds (block rounding, segments
    // cached for reuse, fragmentation): Cluster::allocator_fragmentation (hardware.h).
    const double allocated = sm.weights_bytes + sm.grads_bytes + sm.optimizer_bytes + sm.activations_bytes;
    sm.allocator_bytes = c.allocator_fragmentation * allocated;
    sm.total_bytes = allocated + sm.allocator_bytes;
    sm.capacity_bytes = capacity;
    sm.fits = sm.total_bytes <= capacity;
    out.per_stage.push_back(sm);
  }
  summarize_peak(out);
  return out;
}

void summarize_peak(MemoryResult& out) {
  double peak = -1, capacity = 0;
  for (const StageMemory& sm : out.per_stage)
    if (sm.total_bytes > peak) {
      peak = sm.total_bytes;
      capacity = sm.capacity_bytes;
      out.peak_stage = sm.stage;
    }
  out.fits = peak <= capacity;
  out.overflow_bytes = out.fits ? 0.0 : peak - capacity;
}

}  // namespace cutlab
