#include "core/ops.h"

#include <algorithm>

#include "core/compute.h"

namespace cutlab {

namespace {

// Builds the op list: GEMMs, attention and memory-bound ops with their times by class.
struct OpList {
  const Resolved& r;
  double peak, elem_bytes;
  Efficiencies ge;  // GEMM efficiency of the workload's dtype
  double hbm_bps;
  std::vector<LayerOp> ops;

  explicit OpList(const Resolved& res) : r(res), ge(res.config.cluster.efficiency) {
    const Cluster& c = r.config.cluster;
    peak = peak_flops_per_s(c, r.config.workload);
    if (r.config.workload.dtype == Dtype::FP8) ge.gemm = c.efficiency.gemm_fp8;
    elem_bytes = r.config.workload.dtype == Dtype::FP8 ? 1.0 : 2.0;
    hbm_bps = c.hbm_bytes_per_s * c.efficiency.hbm;
  }
  void gemm(std::string_view name, double M, double N, double K, double count = 1) {
    LayerOp op;
    op.name = name, op.op_class = OpClass::Gemm, op.count = count, op.m = M, op.n = N, op.k = K;
    op.flops = count * 2.0 * M * N * K;
    op.bytes = count * elem_bytes * (M * K + K * N + M * N);
    op.f_s = count * gemm_time_s(M, N, K, peak, ge);
    op.b_s = op.f_s;  // input gradient: one GEMM of the same size
    op.w_s = op.f_s;  // weight gradient: one GEMM of the same size
    ops.push_back(op);
  }
  void attention(std::string_view name, double flops, double bytes) {
    const Cluster& c = r.config.cluster;
    LayerOp op;
    op.name = name, op.op_class = OpClass::Attention, op.flops = flops, op.bytes = bytes;
    // bf16 even in fp8 training (Transformer Engine keeps attention in bf16).
    op.f_s = flops / (c.bf16_flops_per_s * c.efficiency.attention);
    op.b_s = 2.5 * op.f_s;
    ops.push_back(op);
  }
  void memory(std::string_view name, double bytes) {
    if (bytes <= 0) return;
    LayerOp op;
    op.name = name, op.op_class = OpClass::Memory, op.bytes = bytes;
    op.f_s = bytes / hbm_bps;
    op.b_s = 2.0 * op.f_s;
    ops.push_back(op);
  }
};

void attention_ops(OpList& L) {
  const ModelSpec& m = L.r.config.model;
  const Plan& plan = L.r.config.plan;
  const double s = double(L.r.config.workload.seq_len) / plan.cp, b = plan.micro_batch, M = s * b;
  const double h = m.hidden, t = plan.tp;
  const double a_gpu = double(m.heads) / t, g_gpu = std::max(1.0, double(m.kv_heads) / t);
  const double d = m.head_dim, d_qk = qk_head_dim(m), d_v = v_head_dim_of(m);
  if (is_mla(m)) {
    // MLA (DeepSeek-V2 §2.1): low-rank Q and KV projections, decompressed per head.
    const double r_q = m.q_lora_rank, r_kv = m.kv_lora_rank, d_rope = m.qk_rope_head_dim;
    if (r_q > 0) {
      L.gemm("Q down-projection", M, r_q, h);
      L.gemm("Q up-projection", M, a_gpu * d_qk, r_q);
    } else {
      L.gemm("Q projection", M, a_gpu * d_qk, h);
    }
    L.gemm("KV down-projection and rope key", M, r_kv + d_rope, h);
    L.gemm("KV up-projection", M, a_gpu * (d + d_v), r_kv);
  } else {
    L.gemm("QKV projection", M, a_gpu * d + 2.0 * g_gpu * d, h);
  }
  L.gemm("attention output projection", M, h, a_gpu * d_v);
  // Scores and values: 2·b·s_q·s_k·a·(d_qk + d_v); flash attention computes only the causal half.
  // Bytes: Q and O of this rank's tokens, K and V of every token it attends to (read once, flash).
  const double causal = plan.flash_attention ? 0.5 : 1.0;
  const double kv_heads = is_mla(m) ? a_gpu : g_gpu;
  const double flops = 2.0 * b * s * (s * plan.cp) * a_gpu * (d_qk + d_v) * causal;
  const double bytes = 2.0 * b * (s * a_gpu * (d_qk + d_v) + s * plan.cp * kv_heads * (d_qk + d_v));
  L.attention(plan.flash_attention ? "attention scores and values (flash, causal half)" : "attention scores and values", flops, bytes);
}

// The MLP (dense) or the router, routed and shared experts (MoE); returns the activation-function
// width processed per token on this GPU.
double mlp_ops(OpList& L, bool moe) {
  const ModelSpec& m = L.r.config.model;
  const Plan& plan = L.r.config.plan;
  const double M = double(L.r.config.workload.seq_len) / plan.cp * plan.micro_batch;
  const double h = m.hidden, t = plan.tp, gate = m.gated_mlp ? 2.0 : 1.0;
  if (!moe) {
    const double f = m.ffn_hidden / t;
    L.gemm(m.gated_mlp ? "MLP gate and up projection" : "MLP up projection", M, gate * f, h);
    L.gemm("MLP down projection", M, h, f);
    return f;
  }
  const double local_experts = double(m.experts) / plan.ep;
  // Tokens reaching this GPU's experts: the stage's tokens spread over its GPUs, s·b·etp/(tp·cp)
  // (expert TP ranks share tokens, attention TP ranks split them); per local expert, balanced routing.
  const double M_moe = M * L.r.mesh.etp / t;
  const double M_e = M_moe * m.top_k / local_experts;
  const double fe = double(m.expert_ffn_hidden) / L.r.mesh.etp;
  L.gemm("router", M, m.experts, h);
  L.gemm(m.gated_mlp ? "expert gate and up projection" : "expert up projection", M_e, gate * fe, h, local_experts);
  L.gemm("expert down projection", M_e, h, fe, local_experts);
  double f_act = M_e * local_experts / M * fe;
  if (m.shared_experts > 0) {
    const double fs = double(m.shared_experts) * m.expert_ffn_hidden / t;
    L.gemm(m.gated_mlp ? "shared expert gate and up projection" : "shared expert up projection", M, gate * fs, h);
    L.gemm("shared expert down projection", M, h, fs);
    f_act += fs;
  }
  return f_act;
}

// Memory-bound traffic (2-byte elements): two norms (read + write h), two residual adds (2 reads + 1
// write), dropout (read + write) twice if used, the activation function (read gate·f, write f), rotary
// embedding on q and k, and the softmax when it is not fused into flash attention.
void memory_ops(OpList& L, double f_act) {
  const ModelSpec& m = L.r.config.model;
  const Plan& plan = L.r.config.plan;
  const double s = double(L.r.config.workload.seq_len) / plan.cp, M = s * plan.micro_batch;
  const double h = m.hidden, t = plan.tp, ts = plan.sp ? t : 1.0;
  const double a_gpu = double(m.heads) / t, g_gpu = std::max(1.0, double(m.kv_heads) / t);
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  L.memory("norms (2)", M * 2.0 * (2.0 * 2.0) * h / ts);
  L.memory("residual adds (2)", M * 2.0 * (2.0 * 3.0) * h / ts);
  L.memory("dropout (2)", m.dropout ? M * 2.0 * (2.0 * 2.0) * h / ts : 0.0);
  L.memory(m.gated_mlp ? "activation (SwiGLU)" : "activation (GeLU)", M * 2.0 * (gate + 1.0) * f_act);
  L.memory("rotary embedding (q, k)", M * 2.0 * 2.0 * (a_gpu + g_gpu) * qk_head_dim(m));
  if (!plan.flash_attention) L.memory("softmax (unfused)", M * 2.0 * 2.0 * a_gpu * (s * plan.cp) * (m.dropout ? 2.0 : 1.0));
}

}  // namespace

std::vector<LayerOp> layer_ops(const Resolved& r, bool moe) {
  OpList L(r);
  attention_ops(L);
  const double f_act = mlp_ops(L, moe);
  memory_ops(L, f_act);
  return std::move(L.ops);
}

std::vector<LayerOp> output_ops(const Resolved& r) {
  // Output layer and loss: logits GEMM (forward, input and weight gradients; in bf16 even in fp8
  // training, as Transformer Engine keeps the output layer) and the fp32 softmax / cross-entropy
  // passes over s·b·V/t logits (three passes of 4 bytes; the backward repeats them once).
  const ModelSpec& m = r.config.model;
  const Plan& plan = r.config.plan;
  const Cluster& c = r.config.cluster;
  const double M = double(r.config.workload.seq_len) / plan.cp * plan.micro_batch, V = m.vocab / double(plan.tp);
  std::vector<LayerOp> ops;
  LayerOp logits;
  logits.name = "output layer (logits)", logits.op_class = OpClass::Gemm, logits.m = M, logits.n = V, logits.k = m.hidden;
  logits.flops = 2.0 * M * V * m.hidden;
  logits.bytes = 2.0 * (M * m.hidden + m.hidden * V + M * V);
  logits.f_s = logits.b_s = logits.w_s = gemm_time_s(M, V, m.hidden, c.bf16_flops_per_s, c.efficiency);
  ops.push_back(logits);
  LayerOp loss;
  loss.name = "softmax and cross-entropy (fp32)", loss.op_class = OpClass::Memory;
  loss.bytes = 3.0 * 4.0 * M * V;
  loss.f_s = loss.b_s = loss.bytes / (c.hbm_bytes_per_s * c.efficiency.hbm);
  ops.push_back(loss);
  return ops;
}

}  // namespace cutlab
