#include "core/model.h"

#include <algorithm>
#include <cmath>

namespace cutlab {

bool is_moe(const ModelSpec& m) { return m.experts > 0; }
bool is_mla(const ModelSpec& m) { return m.kv_lora_rank > 0; }
int moe_layer_count(const ModelSpec& m) { return moe_layers_between(m, 0, m.layers - 1); }
int dense_layer_count(const ModelSpec& m) { return m.layers - moe_layer_count(m); }

bool is_moe_layer(const ModelSpec& m, int i) {
  const int step = std::max(1, m.moe_layer_step);
  return is_moe(m) && i >= m.dense_layers && (i + 1) % step == 0;
}

int moe_layers_between(const ModelSpec& m, int first, int last) {
  // Layers i in [max(first, dense_layers), last] with (i + 1) a multiple of the step: the multiples
  // of the step in [a + 1, last + 1].
  const int a = std::max(first, m.dense_layers), step = std::max(1, m.moe_layer_step);
  if (!is_moe(m) || last < a) return 0;
  return (last + 1) / step - a / step;
}

double attended_tokens(const ModelSpec& m, int i, double context) {
  return global_attention_layers(m, i, i) == 1 ? context : local_attended_tokens(m, context);
}

double local_attended_tokens(const ModelSpec& m, double context) {
  const double W = m.attention_window;
  if (W <= 0 || context <= W) return context;
  if (!m.attention_chunked) return W;                  // sliding window: the last W tokens
  return context - W * std::floor((context - 1) / W);  // chunked: the query's own chunk so far
}

int global_attention_layers(const ModelSpec& m, int first, int last) {
  if (last < first) return 0;
  if (m.attention_window <= 0) return last - first + 1;
  const int every = m.global_attention_every;  // layers every−1, 2·every−1, … (0-based)
  return every > 0 ? (last + 1) / every - first / every : 0;
}

double local_attention_share(const ModelSpec& m) {
  if (m.attention_window <= 0 || m.layers <= 0) return 0.0;
  return double(m.layers - global_attention_layers(m, 0, m.layers - 1)) / m.layers;
}

double local_attention_pairs(const ModelSpec& m, double s) {
  const double W = m.attention_window;
  if (W <= 0 || s <= W) return 0.5 * s * s;
  if (!m.attention_chunked) return W * s - 0.5 * W * W;
  const double full = std::floor(s / W), r = s - full * W;
  return full * 0.5 * W * W + 0.5 * r * r;
}

double qk_head_dim(const ModelSpec& m) { return is_mla(m) ? double(m.head_dim) + m.qk_rope_head_dim : double(m.head_dim); }
double v_head_dim_of(const ModelSpec& m) { return is_mla(m) && m.v_head_dim > 0 ? double(m.v_head_dim) : double(m.head_dim); }

// Attention projection weights.
// GQA: W_Q h×(a·d), W_K and W_V h×(g·d), W_O (a·d)×h  →  h·d·(2a + 2g).
// MLA (DeepSeek-V2 arXiv:2405.04434 §2.1, V3 config): W_DQ h×r_q, W_UQ r_q×a(d_nope+d_rope),
// W_DKV h×(r_kv + d_rope), W_UKV r_kv×a(d_nope + d_v), W_O (a·d_v)×h; plus the two latent norms.
static double attention_params(const ModelSpec& m, double* norm_params) {
  const double h = m.hidden, a = m.heads, g = m.kv_heads, d = m.head_dim;
  if (!is_mla(m)) {
    *norm_params = 0;
    return h * d * (2 * a + 2 * g);
  }
  const double r_q = m.q_lora_rank, r_kv = m.kv_lora_rank, d_rope = m.qk_rope_head_dim;
  const double d_v = v_head_dim_of(m), d_qk = d + d_rope;
  const double q = r_q > 0 ? h * r_q + r_q * a * d_qk : h * a * d_qk;
  const double kv = h * (r_kv + d_rope) + r_kv * a * (d + d_v);
  const double o = a * d_v * h;
  *norm_params = r_q + r_kv;
  return q + kv + o;
}

// MLP weights: 2·h·f, or 3·h·f with a gate (SwiGLU, Shazeer 2020).
static double mlp_params(const ModelSpec& m, double f) { return (m.gated_mlp ? 3.0 : 2.0) * m.hidden * f; }

LayerParams dense_layer_params(const ModelSpec& m) {
  LayerParams p;
  double latent_norms = 0;
  p.attention = attention_params(m, &latent_norms);
  if (!is_mla(m)) p.kv_projections = 2.0 * m.hidden * m.kv_heads * m.head_dim;
  p.norms = 2.0 * m.hidden + latent_norms;  // pre-attention and pre-MLP norms
  p.dense_mlp = mlp_params(m, m.ffn_hidden);
  return p;
}

double attention_params_per_gpu(const LayerParams& p, const ModelSpec& m, double tp) {
  const double kv_split = std::min(tp, std::max(1.0, double(m.kv_heads)));
  return (p.attention - p.kv_projections) / tp + p.kv_projections / kv_split;
}

LayerParams moe_layer_params(const ModelSpec& m) {
  LayerParams p = dense_layer_params(m);
  p.dense_mlp = 0;
  p.router = double(m.hidden) * m.experts;
  p.routed_expert = mlp_params(m, m.expert_ffn_hidden);
  p.shared_experts = m.shared_experts * p.routed_expert;
  return p;
}

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts c;
  const double nd = dense_layer_count(m), ne = moe_layer_count(m);
  const LayerParams d = dense_layer_params(m), e = moe_layer_params(m);
  c.embedding = double(m.vocab) * m.hidden;
  c.output = m.tied_embeddings ? 0.0 : double(m.vocab) * m.hidden;
  c.attention = (nd + ne) * d.attention;
  c.dense_mlp = nd * d.dense_mlp;
  c.experts = ne * (e.router + m.experts * e.routed_expert + e.shared_experts);
  const double norms = (nd + ne) * d.norms + m.hidden;  // + final norm
  c.total = c.embedding + c.output + c.attention + c.dense_mlp + c.experts + norms;
  const double active_experts = ne * (e.router + m.top_k * e.routed_expert + e.shared_experts);
  c.active = c.total - c.experts + active_experts;
  // MTP modules (DeepSeek-V3 §2.2: 14B on top of the 671B): a block, the h×2h projection, three norms
  // (the two inputs' and the module's final norm); embedding and output layer shared.
  const LayerParams& b = is_moe(m) ? e : d;
  c.mtp = m.mtp_layers * (b.attention + b.norms + b.dense_mlp + b.router + m.experts * b.routed_expert + b.shared_experts +
                          2.0 * m.hidden * double(m.hidden) + 3.0 * m.hidden);
  return c;
}

double forward_matmul_flops_per_token(const ModelSpec& m) {
  const double nd = dense_layer_count(m), ne = moe_layer_count(m);
  const LayerParams d = dense_layer_params(m), e = moe_layer_params(m);
  // 2 FLOPs per multiply-add per weight used by the token; the router is counted with the
  // experts (it is a GEMM too). The output layer counts even when tied (Megatron's V/(2·L·h) term).
  const double moe_block = e.attention + e.router + m.top_k * e.routed_expert + e.shared_experts;
  const double per_token = nd * (d.attention + d.dense_mlp) + ne * moe_block + double(m.vocab) * m.hidden;
  // Each MTP module: its block, the h×2h projection and the shared output layer once more (Megatron
  // num_floating_point_operations with mtp_num_layers).
  const double mtp = m.mtp_layers * ((is_moe(m) ? moe_block : d.attention + d.dense_mlp) + 2.0 * m.hidden * double(m.hidden) +
                                     double(m.vocab) * m.hidden);
  return 2.0 * (per_token + mtp);
}

double forward_attention_flops_per_sequence(const ModelSpec& m, double seq_len) {
  // QK^T: 2·s²·a·d_qk, softmax·V: 2·s²·a·d_v per layer (Narayanan et al. 2021 §5.1 counts the full
  // s×s matrix, causal mask or not; so do the published MFU figures).
  const double s = seq_len, a = m.heads;
  return (m.layers + m.mtp_layers) * 2.0 * s * s * a * (qk_head_dim(m) + v_head_dim_of(m));
}

double model_flops_per_step(const ModelSpec& m, double sequences, double seq_len) {
  // Training = forward + backward (2× forward) = 3× forward (Narayanan et al. 2021 §5.1).
  return 3.0 * sequences * (seq_len * forward_matmul_flops_per_token(m) + forward_attention_flops_per_sequence(m, seq_len));
}

double op_sac_recomputed_matmul_fraction(const ModelSpec& m) {
  const double h = m.hidden, a = m.heads, g = m.kv_heads, f = m.ffn_hidden, d_qk = qk_head_dim(m), d_v = v_head_dim_of(m);
  const double q = h * a * d_qk, k = h * g * d_qk, v = h * g * d_v, o = a * d_v * h;
  const double mlp = (m.gated_mlp ? 3.0 : 2.0) * h * f;
  const double total = q + k + v + o + mlp;
  return total > 0 ? (k + o + h * f) / total : 0.0;
}

}  // namespace cutlab
