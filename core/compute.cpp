#include "core/compute.h"

#include <algorithm>

namespace cutlab {

double peak_flops_per_s(const Cluster& c, const Workload& w) { return w.dtype == Dtype::FP8 ? c.fp8_flops_per_s : c.bf16_flops_per_s; }

double gemm_time_s(double M, double N, double K, double peak, const Efficiencies& e) {
  if (M <= 0 || N <= 0 || K <= 0) return 0.0;
  const double x = std::min({M, N, K});
  const double efficiency = e.gemm * x / (x + e.gemm_half_dim);
  return 2.0 * M * N * K / (peak * efficiency);
}

LayerTimes layer_times(const Resolved& r, bool moe) {
  const ModelSpec& m = r.config.model;
  const Cluster& c = r.config.cluster;
  const Plan& plan = r.config.plan;
  const Workload& w = r.config.workload;
  const Mesh& mesh = r.mesh;
  LayerTimes lt;
  const Efficiencies& e = c.efficiency;
  const double peak = peak_flops_per_s(c, w);
  Efficiencies ge = e;  // GEMM efficiency of the workload's dtype
  if (w.dtype == Dtype::FP8) ge.gemm = e.gemm_fp8;
  const double bf16 = c.bf16_flops_per_s;  // attention runs in bf16 even in fp8 training (Transformer Engine)
  const double s = double(w.seq_len) / plan.cp, b = plan.micro_batch, M = s * b;
  const double h = m.hidden, t = plan.tp, ts = plan.sp ? t : 1.0;
  const double a_gpu = double(m.heads) / t, g_gpu = std::max(1.0, double(m.kv_heads) / t);
  const double d = m.head_dim, d_qk = qk_head_dim(m), d_v = v_head_dim_of(m);
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  auto gemm = [&](double M_, double N_, double K_) { return gemm_time_s(M_, N_, K_, peak, ge); };

  // Attention projections.
  if (is_mla(m)) {
    const double r_q = m.q_lora_rank, r_kv = m.kv_lora_rank, d_rope = m.qk_rope_head_dim;
    lt.gemm_f_s += r_q > 0 ? gemm(M, r_q, h) + gemm(M, a_gpu * d_qk, r_q) : gemm(M, a_gpu * d_qk, h);
    lt.gemm_f_s += gemm(M, r_kv + d_rope, h) + gemm(M, a_gpu * (d + d_v), r_kv);
  } else {
    lt.gemm_f_s += gemm(M, a_gpu * d + 2.0 * g_gpu * d, h);
  }
  lt.gemm_f_s += gemm(M, h, a_gpu * d_v);
  // Scores and values: 2·b·s_q·s_k·a·(d_qk + d_v); flash attention computes only the causal half.
  const double causal = plan.flash_attention ? 0.5 : 1.0;
  const double attn_flops = 2.0 * b * s * (s * plan.cp) * a_gpu * (d_qk + d_v) * causal;
  lt.attention_f_s = attn_flops / (bf16 * e.attention);

  // MLP or experts.
  double f_act = 0;  // activation-function width processed on this GPU, per token
  if (!moe) {
    const double f = m.ffn_hidden / t;
    lt.gemm_f_s += gemm(M, gate * f, h) + gemm(M, h, f);
    f_act = f;
  } else {
    const double local_experts = double(m.experts) / plan.ep;
    // Tokens reaching this GPU's experts: the stage's tokens spread over its GPUs, s·b·etp/(tp·cp)
    // (expert TP ranks share tokens, attention TP ranks split them); per local expert, balanced routing.
    const double M_moe = M * mesh.etp / t;
    const double M_e = M_moe * m.top_k / local_experts;
    const double fe = double(m.expert_ffn_hidden) / mesh.etp;
    lt.gemm_f_s += gemm(M, m.experts, h);  // router
    lt.gemm_f_s += local_experts * (gemm(M_e, gate * fe, h) + gemm(M_e, h, fe));
    f_act = M_e * local_experts / M * fe;
    if (m.shared_experts > 0) {
      const double fs = double(m.shared_experts) * m.expert_ffn_hidden / t;
      lt.gemm_f_s += gemm(M, gate * fs, h) + gemm(M, h, fs);
      f_act += fs;
    }
  }
  // Memory-bound traffic per token (2-byte elements): two norms (read + write h), two residual adds
  // (2 reads + 1 write), dropout (read + write) twice if used, the activation function (read gate·f,
  // write f), rotary embedding on q and k, and the softmax when it is not fused into flash attention.
  const double drop = m.dropout ? 2.0 * 2.0 : 0.0;
  double bytes_per_token = 2.0 * ((2.0 * 2.0 + 2.0 * 3.0 + drop) * h / ts + (gate + 1.0) * f_act + 2.0 * (a_gpu + g_gpu) * d_qk);
  if (!plan.flash_attention) bytes_per_token += 2.0 * 2.0 * a_gpu * (s * plan.cp) * (m.dropout ? 2.0 : 1.0);
  lt.memory_f_s = M * bytes_per_token / (c.hbm_bytes_per_s * e.hbm);
  return lt;
}

StageCompute chunk_compute(const Resolved& r, int first_layer, int last_layer) {
  const ModelSpec& m = r.config.model;
  const Cluster& c = r.config.cluster;
  const Plan& plan = r.config.plan;
  const Workload& w = r.config.workload;
  StageCompute sc;
  const int first_moe = is_moe(m) ? m.dense_layers : m.layers;
  const double layers = last_layer - first_layer + 1;
  const double ne = std::max(0, last_layer - std::max(first_layer, first_moe) + 1), nd = layers - ne;
  const LayerTimes dense = layer_times(r, false);
  const LayerTimes moe = ne > 0 ? layer_times(r, true) : LayerTimes{};
  sc.f_s = nd * dense.f_s() + ne * moe.f_s();
  sc.b_s = nd * dense.b_s() + ne * moe.b_s();
  sc.w_s = nd * dense.w_s() + ne * moe.w_s();
  if (plan.recompute == Recompute::Full) sc.recompute_s = sc.f_s;
  if (plan.recompute == Recompute::Selective) sc.recompute_s = nd * dense.attention_f_s + ne * moe.attention_f_s;
  if (last_layer == m.layers - 1) {
    // Output layer and loss: logits GEMM (forward, input and weight gradients; in bf16 even in fp8
    // training, as Transformer Engine keeps the output layer) and the fp32 softmax / cross-entropy
    // passes over s·b·V/t logits.
    const double s = double(w.seq_len) / plan.cp, b = plan.micro_batch, t = plan.tp;
    const double logits = gemm_time_s(s * b, m.vocab / t, m.hidden, c.bf16_flops_per_s, c.efficiency);
    const double softmax = 3.0 * 4.0 * s * b * m.vocab / t / (c.hbm_bytes_per_s * c.efficiency.hbm);
    sc.f_s += logits + softmax;
    sc.b_s += logits + softmax;
    sc.w_s += logits;
  }
  sc.b_s += sc.recompute_s;
  return sc;
}

StageCompute stage_compute(const Resolved& r, const StageInfo& st) {
  StageCompute sum;
  sum.stage = st.stage;
  for (const auto& [first, last] : st.chunks) {
    const StageCompute ch = chunk_compute(r, first, last);
    sum.f_s += ch.f_s;
    sum.b_s += ch.b_s;
    sum.w_s += ch.w_s;
    sum.recompute_s += ch.recompute_s;
  }
  return sum;
}

}  // namespace cutlab
