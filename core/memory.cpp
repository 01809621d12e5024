#include "core/memory.h"

#include <algorithm>

namespace cutlab {

StateBytesPerParam state_bytes_per_param(const Plan& plan, const Workload& w, double d) {
  StateBytesPerParam b;
  b.weights = 2.0;  // bf16/fp16 working copy
  b.grads = w.grad_dtype == GradDtype::FP32 ? 4.0 : 2.0;
  // fp32 master weights, Adam momentum and variance (ZeRO paper K = 12); bf16 moments: 8. An EMA of
  // the weights on the GPU: one more fp32 copy, sharded with the optimizer state.
  b.optimizer = 4.0 + (w.moment_dtype == MomentDtype::BF16 ? 4.0 : 8.0) + (w.ema == Ema::Gpu ? 4.0 : 0.0);
  const int zero = effective_zero(plan);
  if (zero >= 1) b.optimizer /= d;
  if (zero >= 2) b.grads /= d;
  if (zero >= 3) b.weights /= d;
  return b;
}

StageParams stage_params(const ModelSpec& m, const Plan& plan, const Mesh& mesh, const StageInfo& st) {
  StageParams sp;
  const LayerParams dl = dense_layer_params(m), el = moe_layer_params(m);
  const double t = plan.tp, Vh = double(m.vocab) * m.hidden, h = m.hidden;
  const StageBlocks n = stage_blocks(m, st);
  sp.dense = (n.dense + n.moe) * (attention_params_per_gpu(dl, m, t) + dl.norms) + n.dense * dl.dense_mlp / t +
             n.moe * (el.router + el.shared_experts / t);
  // MTP modules: their projection and norms, and (on a last stage without the embedding) a copy of the
  // embedding for the shifted tokens, kept in sync as tied embeddings are (Megatron-Core MTP).
  if (st.embedding || n.mtp > 0) sp.embedding = Vh / t;
  sp.dense += sp.embedding + n.mtp * (2.0 * h * h / t + 3.0 * h);
  if (st.output && !(m.tied_embeddings && st.embedding)) sp.output = Vh / t;  // tied and PP = 1: one matrix
  sp.dense += sp.output;
  if (st.output) sp.dense += m.hidden;  // final norm
  if (is_moe(m)) sp.experts = n.moe * (double(m.experts) / plan.ep) * el.routed_expert / mesh.etp;
  return sp;
}

StageBlocks stage_blocks(const ModelSpec& m, const StageInfo& st) {
  StageBlocks n;
  n.mtp = st.output ? m.mtp_layers : 0;
  n.moe = st.moe_layers + (is_moe(m) ? n.mtp : 0);
  n.dense = st.layers - st.moe_layers + (is_moe(m) ? 0 : n.mtp);
  return n;
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

  // Selective recompute drops what its modules keep inside them; each module's input stays (the
  // checkpoint's argument). An fp8 GEMM keeps its input as the fp8 copy it multiplied (Transformer
  // Engine's Linear and LayerNormLinear save the quantized input for the weight gradient): 1 byte
  // where Korthikanti counts 2. Tensors another op keeps in bf16 (the norms' and flash attention's
  // inputs and outputs) stay 2 bytes.
  auto again = [&](RecomputeModule x) { return recomputes(plan, x); };
  const double gemm_in = w.dtype == Dtype::FP8 ? 1.0 : 2.0;
  const double act_in = plan.activation_func_fp8_input_store ? 1.0 : 2.0;  // the activation's saved input
  // Residual stream: the two norms' inputs (2 bytes), the dropout masks (1 byte each).
  double bytes = s * b * h * (4 + 2 * drop) / ts;
  // The norms' outputs, inputs of the first attention GEMM and of the MLP; recomputed with "layernorm".
  if (!again(RecomputeModule::LayerNorm)) bytes += 2.0 * gemm_in * s * b * h / ts;
  // Attention: what flash attention's backward reads (Q, K, V in bf16), and its output O, the
  // output projection's input (bf16 for flash attention; in fp8 training the projection keeps its
  // fp8 copy as well).
  const double o = s * b * a_gpu * d_v * (2.0 + (w.dtype == Dtype::FP8 ? 1.0 : 0.0));
  if (is_mla(m)) {
    // MLA: the latent projections' outputs (q latent, kv latent + rope key) are kept for the
    // up-projection backward; the decompressed per-head Q, K (d_nope + d_rope) and V unless the
    // up-projections are recomputed ("mla_up_proj").
    bytes += 2.0 * s * b * (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim);
    if (!again(RecomputeModule::MlaUpProj)) bytes += 2.0 * s * b * a_gpu * (d_qk + d_qk + d_v);
  } else {
    bytes += 2.0 * s * b * (a_gpu * d_qk + g_gpu * d_qk + g_gpu * d_v);
  }
  bytes += o;
  // Unfused attention keeps the scores of this rank's s/cp queries against all s keys (as²b when
  // cp = 1) unless core attention is recomputed.
  if (!plan.flash_attention && !again(RecomputeModule::CoreAttn)) bytes += (2.0 + 3.0 * drop) * a_gpu * s * (s * plan.cp) * b;
  // An MLP of width f per token: the activation's input (gate·f) and its output, the down
  // projection's input (f, its fp8 copy in fp8 training), unless the activation is recomputed.
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  auto mlp_bytes = [&](double f, bool act_again) { return f * (gate * act_in + (act_again ? 0.0 : gemm_in)); };
  if (!moe) {
    // GeLU: 4sbf, SwiGLU (Megatron's fused bias_swiglu): 6sbf in bf16 (Korthikanti et al. §4.1).
    if (!again(RecomputeModule::Mlp)) bytes += s * b * mlp_bytes(m.ffn_hidden / t, false);
    return bytes;
  }
  if (again(RecomputeModule::Moe)) return bytes;  // the whole block re-runs from its input
  // Routed tokens: with balanced routing each GPU's experts receive s·b·etp/tp token copies × k
  // (= s·b·k without folding, where etp = tp). Each keeps its permuted input (the first expert
  // GEMM's input) and its MLP activations over the expert TP group. The routing probabilities
  // scale the activation's output inside the experts (Megatron-Core experts.py,
  // weighted_bias_swiglu_impl), so the combine keeps no expert output. The hottest EP rank holds
  // moe_load(plan).recv × those copies (imbalance, or the capacity when padded or dropping).
  const double k = m.top_k, fe = m.expert_ffn_hidden;
  const bool act_again = again(RecomputeModule::MoeAct);
  bytes += s * b * mesh.etp / t * k * moe_load(plan).recv * (gemm_in * h + mlp_bytes(fe / mesh.etp, act_again));
  if (!again(RecomputeModule::SharedExperts)) bytes += s * b * mlp_bytes(fe * m.shared_experts / t, act_again);
  bytes += 4.0 * s * b * m.experts;  // fp32 router logits
  return bytes;
}

double cp_kv_sequence_bytes(const ModelSpec& m, const Plan& plan, const Workload& w) {
  const double s = w.seq_len, b = plan.micro_batch, t = plan.tp;
  const double g_gpu = std::max(1.0, double(m.kv_heads) / t), a_gpu = double(m.heads) / t;
  const double kv_width = (is_mla(m) ? a_gpu : g_gpu) * (qk_head_dim(m) + v_head_dim_of(m));
  return 2.0 * s * b * kv_width;
}

OffloadedActivations offloaded_activations(double n, double dense, double moe, double act_dense, double act_moe) {
  OffloadedActivations o;
  const double n_dense = std::clamp(n, 0.0, dense), n_moe = std::clamp(n - n_dense, 0.0, moe);
  o.bytes = n_dense * act_dense + n_moe * act_moe;
  o.largest_layer_bytes = std::max(n_dense > 0 ? act_dense : 0.0, n_moe > 0 ? act_moe : 0.0);
  return o;
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
  no_recompute.recompute_modules = {RecomputeModule::CoreAttn};
  const double full_layer = std::max(layer_activation_bytes(m, no_recompute, w, mesh, false),
                                     is_moe(m) ? layer_activation_bytes(m, no_recompute, w, mesh, true) : 0.0);
  const double act_rematerialised = plan.recompute == Recompute::Full    ? full_layer
                                    : plan.recompute == Recompute::OpSac ? std::max(0.0, full_layer - act_dense)
                                                                         : 0.0;
  // CP with all-gathered K/V (Transformer Engine AttnFuncWithCPAndKVAllGather, Megatron-Core
  // cp_comm_type "all_gather"): the forward saves only the local K and V chunks and the backward
  // all-gathers them again, so the gathered K and V are transient, alive during one layer's attention;
  // its backward adds the gradients dK, dV of the whole sequence (16-bit) before their
  // reduce-scatter: 2 × the gathered K/V at the peak, one layer at a time. Llama 3 (arXiv:2407.21783
  // §3.3.2) does not say what its backward keeps; TE's choice is taken. The ring's two K/V chunks in
  // flight are not counted.
  const double cp_gathered = plan.cp > 1 && plan.cp_comm == CpComm::AllGather ? 2.0 * cp_kv_sequence_bytes(m, plan, w) : 0.0;
  const double capacity = c.hbm_bytes - c.reserved_bytes;

  for (const StageInfo& st : r.placement.stages) {
    StageMemory sm;
    sm.stage = st.stage;
    const StageBlocks n = stage_blocks(m, st);
    const double n_moe = n.moe, n_dense = n.dense;
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
      // reshard_after_forward false (FSDP2; torchtitan's fsdp_reshard_after_forward "never"): no unit
      // frees its gathered weights after its forward, so at the end of the forward every unit of the
      // stage is unsharded in 16 bits, dense and expert weights alike (each is freed after its backward).
      sm.weights_bytes += plan.reshard_after_forward ? 2.0 * (std::max(layer, root) + layer) : 2.0 * (sp.dense + sp.experts);
      sm.grads_bytes += (2.0 + (w.grad_dtype == GradDtype::FP32 ? 4.0 : 2.0)) * layer;
    }
    sm.optimizer_bytes = sm.dense_params * dense_b.optimizer + sm.expert_params * expert_b.optimizer;
    sm.activation_bytes_per_micro_batch = n_dense * act_dense + n_moe * act_moe;
    sm.in_flight_micro_batches = static_cast<size_t>(st.stage) < in_flight.size()
                                     ? in_flight[st.stage]
                                     : in_flight_micro_batches(plan, mesh.num_micro_batches, st.stage);
    // Activation offload (Megatron-Core cpu_offloading_num_layers; Transformer Engine's CPU offload
    // handler copies a layer's saved tensors to pinned host memory after its forward and reloads
    // them before its backward): the first activation_offload_layers layers of the stage keep
    // nothing in HBM between their forward and backward, except the one layer whose tensors are
    // being copied out (forward) or were prefetched (backward).
    double offload_buffer = 0;
    if (plan.activation_offload_layers > 0) {
      const OffloadedActivations off = offloaded_activations(plan.activation_offload_layers, n_dense, n_moe, act_dense, act_moe);
      sm.activation_bytes_per_micro_batch -= off.bytes;
      sm.offloaded_activations_bytes = sm.in_flight_micro_batches * off.bytes;
      offload_buffer = off.largest_layer_bytes;
    }
    sm.activations_bytes = sm.in_flight_micro_batches * sm.activation_bytes_per_micro_batch + act_rematerialised + cp_gathered +
                           offload_buffer;
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
      // Each MTP module has its own loss over the same vocabulary, alive with the main one.
      sm.activations_bytes += (1.0 + n.mtp) *
                              ((plan.fused_cross_entropy ? 4.0 : 12.0) * s * b * V / t + 4.0 * s * b * h / (plan.sp ? t : 1.0));
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
