#include "core/ops.h"

#include <algorithm>
#include <cmath>

#include "core/compute.h"
#include "core/precision.h"

namespace cutlab {

namespace {

// Tile edge: the one of 128, 64, 32 and 16 that pads the dimension least (the larger on a tie).
double least_padding_edge(double d) {
  double best = 128.0;
  for (double cand : {64.0, 32.0, 16.0})
    if (std::ceil(d / cand) * cand < std::ceil(d / best) * best) best = cand;
  return best;
}

// The efficiency of `count` GEMMs whose M rows pad to `padded_m` (on average) in tiles `tm` high.
double tiled_efficiency(double M, double padded_m, double tm, double N, double K, double count, int sms, double e) {
  const double tn = least_padding_edge(N), cols = std::ceil(N / tn);
  const double rows = padded_m / tm;
  const double tile_use = (M * N) / (padded_m * cols * tn);
  double tiles = rows * cols * count;
  if (tiles >= sms) return e * tile_use;  // more than one wave: the tail is balanced (see ops.h)
  // Split-K: a GEMM with fewer tiles than SMs cuts K into slices of at least 256.
  tiles *= std::max(1.0, std::min(std::floor(sms / tiles), std::floor(K / 256.0)));
  return e * tile_use * std::min(1.0, tiles / sms);
}

}  // namespace

double gemm_efficiency(double M, double N, double K, double count, int sms, double gemm, double half_dim) {
  if (M <= 0 || N <= 0 || K <= 0 || count <= 0) return gemm;
  const double x = std::min({M, N, K});
  const double e = gemm * x / (x + half_dim);
  if (sms <= 0) return e;
  const double tm = least_padding_edge(M);
  return tiled_efficiency(M, std::ceil(M / tm) * tm, tm, N, K, count, sms, e);
}

double routed_gemm_efficiency(double mean_rows, double N, double K, double count, int sms, double gemm) {
  if (mean_rows <= 0 || N <= 0 || K <= 0 || count <= 0 || sms <= 0) return gemm;
  constexpr double tm = 16.0;
  return tiled_efficiency(mean_rows, std::max(tm, mean_rows + (tm - 1.0) / 2.0), tm, N, K, count, sms, gemm);
}

double attention_efficiency(double head_dim, double key_len, double attention) {
  const double d0 = 54, s0 = 850;
  const double d = std::max(1.0, head_dim), s = std::max(1.0, key_len);
  return attention * d * (128 + d0) / (128 * (d + d0)) * s / (s + s0);
}

double gemm_half_dim(const Cluster& c) {
  return c.hbm_bytes_per_s > 0 ? c.efficiency.gemm_half_balance * c.bf16_flops_per_s / c.hbm_bytes_per_s : 0.0;
}

namespace {

// Builds the op list of one layer with the roofline time of every op.
struct OpList {
  const Resolved& r;
  const Cluster& c;
  const Efficiencies& e;
  GemmPath dense;         // GEMMs with weights: fp8 (Transformer Engine, with its casts) or bf16 (core/precision.h)
  GemmPath experts;       // the routed experts' grouped GEMMs (their own dtype when serving)
  double hbm_bps;         // achieved HBM bandwidth
  double grad_acc_bytes;  // weight gradient accumulated into the main gradient: read + write
  double half_dim;        // core/ops.h gemm_half_dim
  double fp8_cast_f = 0, fp8_cast_b = 0, fp8_gemms = 0;
  std::vector<LayerOp> ops;

  explicit OpList(const Resolved& res)
      : r(res),
        c(res.config.cluster),
        e(res.config.cluster.efficiency),
        dense(ops_gemm_path(res.config, false)),
        experts(ops_gemm_path(res.config, true)) {
    hbm_bps = c.hbm_bytes_per_s * e.hbm;
    grad_acc_bytes = r.config.workload.grad_dtype == GradDtype::FP32 ? 8.0 : 4.0;
    half_dim = gemm_half_dim(c);
  }
  // Roofline of one pass: the larger of the compute and the memory time, plus the kernels' floor.
  double roofline(double flops, double flops_per_s, double bytes, double kernels) const {
    return std::max(flops_per_s > 0 ? flops / flops_per_s : 0.0, bytes / hbm_bps) + kernels * e.kernel_floor_s;
  }
  double gemm_pass(double M, double N, double K, double count, double peak, double ge, double bytes) const {
    return roofline(count * 2.0 * M * N * K, peak * gemm_efficiency(M, N, K, count, c.sms, ge, half_dim), bytes, 1);
  }
  // `count` GEMMs of (M×K)·(K×N) run as one (grouped) kernel. weights: the second operand is a weight
  // (its gradient is the W pass); otherwise both gradients are input gradients (B).
  LayerOp& gemm(std::string_view name, double M, double N, double K, double count = 1, bool weights = true, bool fp8_ok = true) {
    return gemm_on(dense, name, M, N, K, count, weights, fp8_ok);
  }
  // The same on the GEMM path `path` (the dense weights' or the routed experts').
  LayerOp& gemm_on(const GemmPath& path, std::string_view name, double M, double N, double K, double count = 1, bool weights = true,
                   bool fp8_ok = true) {
    const bool q = path.quantized && fp8_ok && weights;
    // The GEMM efficiencies are fractions of the sustained rate (core/hardware.h Cluster::gemm_sustained);
    // ge, and op.efficiency, are fractions of the datasheet peak.
    const double peak = q ? path.peak_flops_per_s : c.bf16_flops_per_s, a = q ? 1.0 : 2.0;
    const double ge = (q ? e.gemm_fp8 : e.gemm) * c.gemm_sustained;
    LayerOp op;
    op.name = name, op.op_class = OpClass::Gemm, op.count = count, op.m = M, op.n = N, op.k = K, op.weights = weights;
    op.flops = count * 2.0 * M * N * K;
    op.bytes = count * (a * (M * K + K * N) + 2.0 * M * N);  // output in bf16
    op.efficiency = gemm_efficiency(M, N, K, count, c.sms, ge, half_dim);
    op.memory_bound = op.bytes / hbm_bps > op.flops / (peak * op.efficiency);
    op.f_s = roofline(op.flops, peak * op.efficiency, op.bytes, 1);
    // dX = dY·Wᵀ: M×K output, reduction over N.  dW = Xᵀ·dY: K×N output, reduction over M.
    const double dgrad = gemm_pass(M, K, N, count, peak, ge, count * (a * (M * N + N * K) + 2.0 * M * K));
    const double wgrad = gemm_pass(K, N, M, count, peak, ge, count * (a * (K * M + M * N) + (weights ? grad_acc_bytes : 2.0) * K * N));
    op.b_s = weights ? dgrad : dgrad + wgrad;
    op.w_s = weights ? wgrad : 0.0;
    if (q) {
      // Transformer Engine quantizes each fp8 GEMM's input in the forward (read bf16, write fp8 and
      // its transpose for the weight gradient: 4 bytes per element) and its output gradient in the
      // backward (the same 4 bytes); weights are quantized once per step (cached across
      // micro-batches), not here.
      fp8_cast_f += count * 4.0 * M * K;
      fp8_cast_b += count * 4.0 * M * N;
      fp8_gemms += 1;
    }
    ops.push_back(op);
    return ops.back();
  }
  // A GEMM pipelined with its TP collective (TpWindow) under TP communication overlap runs in chunks, each
  // reading the whole weight shard, so that one chunk computes while the next travels; chunks are thinner
  // GEMMs with fewer tiles (gemm_efficiency's thin-GEMM and wave losses) and one kernel floor each.
  // Transformer Engine's defaults (TE pytorch/module/base.py initialize_ub, which Megatron's
  // --tp-comm-overlap calls): "ring_exchange", t chunks of M/t rows, for the all-gather GEMMs (QKV and
  // FC1 forward; the input gradients of the row-parallel projection and FC2); "pipeline" with 4 splits of
  // M/4 for the reduce-scatter GEMMs (projection and FC2 forward); "bulk", unchunked, for the
  // column-parallel layers' backward. torch's fused all-gather-matmul and matmul-reduce-scatter (async TP)
  // split by the group size on both sides; the TE split is used for every engine. Weight gradients are not
  // chunked. (docs/validation.md §2.) The pipeline and bulk overlaps run their communication on num_sm = 16
  // SMs and start the GEMM beside them with that margin (set_sm_margin; the ring exchange copies with the
  // copy engines): those GEMMs run on sms − plan.tp_comm_overlap_sms SMs (torch's async TP copies with
  // the copy engines: 0).
  LayerOp& window(LayerOp& op, int w) {
    op.tp_window = w;
    const Plan& p = r.config.plan;
    if (!p.tp_comm_overlap || p.tp <= 1) return op;
    const bool reduce_scatter = w == kTpAttnOut || w == kTpMlpOut;
    const bool q = dense.quantized;
    const double n = reduce_scatter ? 4.0 : double(p.tp), M = op.m / n, N = op.n, K = op.k, a = q ? 1.0 : 2.0;
    const double peak = q ? dense.peak_flops_per_s : c.bf16_flops_per_s;
    const double ge = (q ? e.gemm_fp8 : e.gemm) * c.gemm_sustained;
    op.bytes = n * (a * (M * K + K * N) + 2.0 * M * N);
    op.efficiency = gemm_efficiency(M, N, K, 1, c.sms, ge, half_dim);
    op.memory_bound = op.bytes / hbm_bps > op.flops / (peak * op.efficiency);
    op.f_s = n * roofline(op.flops / n, peak * op.efficiency, op.bytes / n, 1);
    const double margin = c.sms > 0 ? c.sms / (c.sms - double(p.tp_comm_overlap_sms)) : 1.0;
    if (reduce_scatter) {  // forward pipelined; dX = dY·Wᵀ after the ring exchange of dY: t chunks
      const double Mt = op.m / p.tp;
      op.f_s *= margin;
      op.b_s = p.tp * gemm_pass(Mt, K, N, 1, peak, ge, a * (Mt * N + N * K) + 2.0 * Mt * K);
    } else {  // backward bulk
      op.b_s *= margin, op.w_s *= margin;
    }
    return op;
  }
  // The host's work for `gemms` GEMMs run one per expert (the routed experts' grouped GEMMs): Transformer
  // Engine's GroupedLinear (Megatron-Core TEGroupedMLP) splits the input by the per-expert token counts, a
  // list on the host, and issues one quantization and one cuBLAS GEMM per expert in each of F, B and W;
  // the counts reach the host by a synchronization (Megatron-Core moe/token_dispatcher.py,
  // cuda_sync_point), so the GPU waits while the host issues them: expert_gemm_host_s per GEMM and pass,
  // on top of the GPU's time (docs/validation.md §5).
  LayerOp& host(std::string_view name, double gemms) {
    LayerOp op;
    op.name = name, op.op_class = OpClass::Host, op.count = gemms;
    op.f_s = op.b_s = op.w_s = gemms * e.expert_gemm_host_s;
    ops.push_back(op);
    return ops.back();
  }
  // Flash attention: one fused kernel forward, one backward with 2.5× the FLOPs and 2× the bytes.
  // `kernels`: the share of the layers that run it (local attention, attention_ops), 1 otherwise.
  // Attention dropout (ModelSpec::dropout) draws a random keep/drop for every score, in the forward and
  // again in the backward (the mask is regenerated, not stored): Philox4x32-10 on the CUDA cores, about
  // 7 integer instructions per draw (10 rounds of ~6 instructions for 16 8-bit draws, then a compare and a
  // select) at 64 per clock per SM (Ampere, Hopper and Blackwell SMs alike): 16 billion draws per second
  // per SM at 1.75 GHz, on top of the tensor-core work, which it does not overlap. Not fitted: fitted to
  // the H100 runs it moves to 12 billion and changes their mean error by 0.05 points (docs/validation.md §2).
  void flash_attention(std::string_view name, double flops, double bytes, double head_dim, double key_len, double kernels = 1) {
    LayerOp op;
    op.name = name, op.op_class = OpClass::Attention, op.flops = flops, op.bytes = bytes, op.core_attention = true;
    op.modules = module_bit(RecomputeModule::CoreAttn);
    // bf16 even in fp8 training (Transformer Engine keeps attention in bf16).
    op.efficiency = attention_efficiency(head_dim, key_len, e.attention);
    const double peak = c.bf16_flops_per_s * op.efficiency;
    op.memory_bound = bytes / hbm_bps > flops / peak;
    op.f_s = roofline(flops, peak, bytes, kernels);
    op.b_s = roofline(2.5 * flops, peak, 2.0 * bytes, kernels);
    if (r.config.model.dropout && c.sms > 0) {
      const double draws = flops / (2.0 * (qk_head_dim(r.config.model) + v_head_dim_of(r.config.model)));
      const double rng_s = draws / (c.sms * 16e9);
      op.f_s += rng_s, op.b_s += rng_s;
    }
    ops.push_back(op);
  }
  // A memory-bound op: forward bytes in `kernels` kernels; backward `bwd` × the bytes in as many kernels.
  LayerOp* memory(std::string_view name, double bytes, double kernels, double bwd = 2.0) {
    if (bytes <= 0) return nullptr;
    LayerOp op;
    op.name = name, op.op_class = OpClass::Memory, op.bytes = bytes, op.memory_bound = true;
    op.f_s = bytes / hbm_bps + kernels * e.kernel_floor_s;
    op.b_s = bwd * bytes / hbm_bps + kernels * e.kernel_floor_s;
    ops.push_back(op);
    return &ops.back();
  }
  // The activation function over `width` outputs (tokens × columns): read gate·width, write width
  // (2-byte elements); one kernel. Eager PyTorch (plan.fused_elementwise false) runs SwiGLU as
  // F.silu(gate) (read 2, write 2 bytes per element) and the product with up (read 4, write 2):
  // 10 bytes per element in 2 kernels (torchtitan models/llama/model.py FeedForward); GeLU is one
  // ATen kernel either way.
  void activation(std::string_view name, double width, unsigned modules) {
    const bool gated = r.config.model.gated_mlp, eager = !r.config.plan.fused_elementwise;
    const double gate = gated ? 2.0 : 1.0;
    const double bytes = eager && gated ? 10.0 * width : 2.0 * (gate + 1.0) * width;
    if (LayerOp* op = memory(name, bytes, eager && gated ? 2 : 1)) op->modules = modules;
  }
  void fp8_casts() {
    if (fp8_gemms == 0) return;
    if (LayerOp* op = memory("fp8 quantize and transpose (GEMM inputs, output gradients)", fp8_cast_f, fp8_gemms, 0.0))
      op->b_s = fp8_cast_b / hbm_bps + fp8_gemms * e.kernel_floor_s;
  }
};

struct Shape {
  double s, b, M, h, t, ts, a_gpu, g_gpu;
};

Shape shape(const Resolved& r) {
  const ModelSpec& m = r.config.model;
  const Plan& plan = r.config.plan;
  Shape z;
  z.s = double(r.config.workload.seq_len) / plan.cp, z.b = plan.micro_batch, z.M = z.s * z.b;
  z.h = m.hidden, z.t = plan.tp, z.ts = plan.sp ? z.t : 1.0;
  z.a_gpu = double(m.heads) / z.t, z.g_gpu = std::max(1.0, double(m.kv_heads) / z.t);
  return z;
}

void attention_ops(OpList& L) {
  const ModelSpec& m = L.r.config.model;
  const Plan& plan = L.r.config.plan;
  const Shape z = shape(L.r);
  const double M = z.M, h = z.h, a_gpu = z.a_gpu, g_gpu = z.g_gpu;
  const double d = m.head_dim, d_qk = qk_head_dim(m), d_v = v_head_dim_of(m);
  if (is_mla(m)) {
    // MLA (DeepSeek-V2 §2.1): low-rank Q and KV projections, decompressed per head.
    const double r_q = m.q_lora_rank, r_kv = m.kv_lora_rank, d_rope = m.qk_rope_head_dim;
    if (r_q > 0) {
      L.window(L.gemm("Q down-projection", M, r_q, h), kTpAttnIn);
      LayerOp& up = L.gemm("Q up-projection", M, a_gpu * d_qk, r_q);
      up.modules = module_bit(RecomputeModule::MlaUpProj), L.window(up, kTpAttnIn);
    } else {
      L.window(L.gemm("Q projection", M, a_gpu * d_qk, h), kTpAttnIn);
    }
    L.window(L.gemm("KV down-projection and rope key", M, r_kv + d_rope, h), kTpAttnIn);
    LayerOp& kv_up = L.gemm("KV up-projection", M, a_gpu * (d + d_v), r_kv);
    kv_up.modules = module_bit(RecomputeModule::MlaUpProj), L.window(kv_up, kTpAttnIn);
  } else {
    L.window(L.gemm("QKV projection", M, a_gpu * d + 2.0 * g_gpu * d, h), kTpAttnIn);
  }
  const double s_k = z.s * plan.cp;  // keys each query attends to (all chunks of the sequence)
  // Context parallel (plan.cp_comm): the ring and the all-gather attend with this rank's s/cp
  // queries and all heads of its TP rank; the all-to-all (Ulysses) with the whole sequence and
  // 1/cp of those heads, the same FLOPs. Key length of one kernel call (attention_efficiency): a ring
  // step's key chunk of s/cp; s for allgather and a2a. A causal kernel over s keys loops over s/2 keys
  // per query tile on average, and so do the all-gather's two calls (chunks i and 2cp−1−i against
  // their causal prefixes of the gathered keys: (2cp + 1)/(4cp)·s), so both read the curve at s.
  const bool ulysses = plan.cp > 1 && plan.cp_comm == CpComm::AllToAll;
  const double s_q = ulysses ? s_k : z.s, heads = ulysses ? a_gpu / plan.cp : a_gpu;
  const double key_len = plan.cp_comm == CpComm::Ring ? z.s : s_k;
  if (plan.flash_attention) {
    // Scores and values: 2·b·s_q·s_k·a·(d_qk + d_v), the causal half only. Bytes: Q and O of this
    // rank's tokens, K and V of every token it attends to (read once). Each CP ring step is one call
    // on a key chunk of s/cp.
    const double kv_heads = (is_mla(m) ? a_gpu : g_gpu) / (ulysses ? plan.cp : 1.0);
    const double flops = 0.5 * 2.0 * z.b * s_q * s_k * heads * (d_qk + d_v);
    const double bytes = 2.0 * z.b * (s_q * heads * (d_qk + d_v) + s_k * kv_heads * (d_qk + d_v));
    // Local attention (ModelSpec::attention_window: gpt-oss's sliding window of 128 in every other
    // layer, Llama 4's chunks of 8,192 in three of four): a local layer's kernel skips the key tiles
    // outside the window, and its (query, key) pairs are local_attention_pairs(s) instead of s²/2. The
    // op list stands for the model's average layer: the global and the local layers' attention each
    // weighted by their share of the layers (their kernels too). The efficiency curve is read at the
    // length of a causal sequence whose query tiles loop over as many keys: a chunk is a causal
    // sequence of W; a sliding window's query tile of 128 loops over about W + 128 keys, which a
    // causal sequence of 2·(W + 128) does on average.
    const double local = local_attention_share(m);
    if (local <= 0) {
      L.flash_attention("attention scores and values (flash, causal half)", flops, bytes, d_qk, key_len);
    } else {
      const double pairs = local_attention_pairs(m, s_k) / (0.5 * s_k * s_k), W = m.attention_window;
      const double window_key_len = m.attention_chunked ? W : 2.0 * (W + 128.0);
      if (local < 1)
        L.flash_attention("attention of the global layers (flash, causal half; by their share of layers)", (1 - local) * flops,
                          (1 - local) * bytes, d_qk, key_len, 1 - local);
      L.flash_attention("attention of the local layers (flash, window; by their share of layers)", local * pairs * flops,
                        local * bytes, d_qk, std::min(key_len, window_key_len), local);
    }
  } else {
    // Unfused (Megatron before flash attention): per sequence and head, the scores Q·Kᵀ (s×d_qk by
    // d_qk×s_k) and the values P·V (s×s_k by s_k×d_v) as batched GEMMs over the full s×s_k matrix,
    // and the softmax (read and write the scores, again for the dropout mask).
    const double batch = z.b * heads;
    const unsigned core = module_bit(RecomputeModule::CoreAttn);
    LayerOp& qk = L.gemm("attention scores Q·Kᵀ (batched)", s_q, s_k, d_qk, batch, false, false);
    qk.core_attention = true, qk.modules = core;
    if (LayerOp* op = L.memory("softmax (unfused)", z.b * s_q * 2.0 * 2.0 * heads * s_k * (m.dropout ? 2.0 : 1.0), m.dropout ? 2 : 1))
      op->core_attention = true, op->modules = core;
    LayerOp& pv = L.gemm("attention values P·V (batched)", s_q, d_v, s_k, batch, false, false);
    pv.core_attention = true, pv.modules = core;
  }
  L.window(L.gemm("attention output projection", M, h, a_gpu * d_v), kTpAttnOut);
}

// The MLP (dense) or the router, token permutation, routed and shared experts (MoE), each with its
// activation function.
void mlp_ops(OpList& L, bool moe) {
  const ModelSpec& m = L.r.config.model;
  const Plan& plan = L.r.config.plan;
  const Shape z = shape(L.r);
  const double M = z.M, h = z.h, t = z.t, gate = m.gated_mlp ? 2.0 : 1.0;
  if (!moe) {
    const double f = m.ffn_hidden / t;
    const unsigned mlp = module_bit(RecomputeModule::Mlp);
    LayerOp& up = L.gemm(m.gated_mlp ? "MLP gate and up projection" : "MLP up projection", M, gate * f, h);
    up.modules = mlp, L.window(up, kTpMlpIn);
    LayerOp& down = L.gemm("MLP down projection", M, h, f);
    down.modules = mlp, L.window(down, kTpMlpOut);
    L.activation(m.gated_mlp ? "activation (SwiGLU)" : "activation (GeLU)", M * f, mlp);
    return;
  }
  const double local_experts = double(m.experts) / plan.ep, k = m.top_k;
  // Tokens this GPU routes: its sequence shard with SP (Megatron routes the sharded tokens).
  const double M_send = M / z.ts;
  // Tokens reaching this GPU's experts: the stage's tokens spread over its GPUs, s·b·etp/(tp·cp)
  // (expert TP ranks share tokens, attention TP ranks split them); per local expert, the balanced
  // mean (the published MoE benchmarks force-balance the routing) times the load of the hottest EP
  // rank, which the EP group waits for (moe_load: imbalance, capacity factor, padding); the copies
  // this GPU sends scale by its send load (padded or dropped at the source).
  const MoeLoad load = moe_load(plan);
  const double M_moe = M * L.r.mesh.etp / t * load.recv;
  const double M_e = M_moe * k / local_experts, k_send = k * load.send;
  const double fe = double(m.expert_ffn_hidden) / L.r.mesh.etp;
  const unsigned moe_bit = module_bit(RecomputeModule::Moe), act = module_bit(RecomputeModule::MoeAct);
  L.gemm("router", M_send, m.experts, h, 1, true, false).modules = moe_bit;  // bf16/fp32 in Megatron, not fp8
  // Router scores: softmax (or sigmoid), top-k and the load-balancing loss in fp32 over M × experts
  // (read logits, write probabilities, read them for top-k: three passes of 4 bytes), Megatron-Core
  // moe/router.py; unfused, about four kernels.
  if (LayerOp* op = L.memory("router softmax, top-k, aux loss (fp32)", M_send * m.experts * 4.0 * 3.0, 4)) op->modules = moe_bit;
  // Dispatch: gather the k copies of each token into expert order (read h, write k·h), then after
  // the all-to-all sort the received rows by local expert (read and write each); combine: the
  // reverse, and the sum of the k copies (Megatron-Core moe/token_dispatcher.py: permute,
  // sort_chunks_by_idxs, unpermute). A permutation's backward moves the same bytes.
  if (LayerOp* op = L.memory("token permute and sort (dispatch)", 2.0 * h * (M_send * (1.0 + k_send) + 2.0 * M_moe * k), 3, 1.0))
    op->modules = moe_bit;
  // The routed experts' grouped GEMMs hide TP collectives whole, unchunked (TE's GroupedLinear has no
  // userbuffers overlap).
  LayerOp& up = L.gemm_on(L.experts, m.gated_mlp ? "expert gate and up projection" : "expert up projection", M_e, gate * fe, h,
                          local_experts);
  up.modules = moe_bit, up.tp_window = kTpMlpIn;
  LayerOp& down = L.gemm_on(L.experts, "expert down projection", M_e, h, fe, local_experts);
  down.modules = moe_bit, down.tp_window = kTpMlpOut;
  L.host("expert GEMMs issued by the host (one per expert)", 2.0 * local_experts).modules = moe_bit;
  // The routing probabilities scale the activation's output (Megatron-Core experts.py
  // weighted_bias_swiglu_impl / activation_func_with_probs), so the combine needs no expert output.
  L.activation(m.gated_mlp ? "expert activation (SwiGLU, weighted)" : "expert activation (GeLU, weighted)", M_e * local_experts * fe,
               moe_bit | act);
  if (LayerOp* op = L.memory("token unsort and unpermute (combine)", 2.0 * h * (2.0 * M_moe * k + M_send * (k_send + 1.0)), 3, 1.0))
    op->modules = moe_bit;
  if (m.shared_experts > 0) {
    const double fs = double(m.shared_experts) * m.expert_ffn_hidden / t;
    const unsigned shared = moe_bit | module_bit(RecomputeModule::SharedExperts);
    LayerOp& s_up = L.gemm(m.gated_mlp ? "shared expert gate and up projection" : "shared expert up projection", M, gate * fs, h);
    s_up.modules = shared, L.window(s_up, kTpMlpIn);
    LayerOp& s_down = L.gemm("shared expert down projection", M, h, fs);
    s_down.modules = shared, L.window(s_down, kTpMlpOut);
    L.activation(m.gated_mlp ? "shared expert activation (SwiGLU)" : "shared expert activation (GeLU)", M * fs, shared | act);
  }
}

// Memory-bound traffic (2-byte elements): two norms (read + write h), two residual adds (2 reads + 1
// write), dropout (read + write) twice if used (fused with the residual adds into Megatron's
// bias-dropout-add kernels: no kernels of its own), rotary embedding on q and k (MLA: part of the
// up-projections Megatron's mla_up_proj recomputes). The activation functions are with their MLPs.
//
// Eager PyTorch (plan.fused_elementwise false: torchtitan without torch.compile; models/llama/model.py
// and torch.nn.RMSNorm at the benchmark's commit b5bcd76c66) runs each elementwise op of a composite
// as its own kernel, one HBM pass each, bytes per element:
//  - RMSNorm (x·rsqrt(mean(x²) + ε) on x.float(), then ·weight: torchtitan's RMSNorm and ATen's
//    composite rms_norm behind torch.nn.RMSNorm run the same passes): x.float() read 2 write 4, pow
//    4 + 4, mean 4, ·rsqrt 4 + 4, type_as 4 + 2, ·weight 2 + 2: 36 bytes in 7 kernels, against 4 in
//    one fused kernel. (LayerNorm is one ATen kernel even in eager mode; cutlab's unfused norms are
//    RMSNorm's.)
//  - rotary (apply_rotary_emb on q and k): .float() 2 + 4, the complex product 4 + 4, type_as 4 + 2:
//    20 bytes in 3 kernels per tensor, against 4.
//  - repeat_kv (GQA): K and V expanded from g to a heads per GPU (expand + reshape copies): read 2·g·d,
//    write 2·a·d bytes per token each; fused attention kernels index the KV heads instead.
// Their backward moves twice the bytes, as every memory-bound op here.
void memory_ops(OpList& L) {
  const ModelSpec& m = L.r.config.model;
  const Shape z = shape(L.r);
  const double M = z.M, h = z.h, ts = z.ts;
  const bool eager = !L.r.config.plan.fused_elementwise;
  const double norm_bytes = eager ? 36.0 : 4.0, rotary_bytes = eager ? 20.0 : 4.0;
  if (LayerOp* op = L.memory("norms (2)", M * 2.0 * norm_bytes * h / ts, eager ? 14 : 2))
    op->modules = module_bit(RecomputeModule::LayerNorm);
  L.memory("residual adds (2)", M * 2.0 * (2.0 * 3.0) * h / ts, 2);
  L.memory("dropout (2, fused with the adds)", m.dropout ? M * 2.0 * (2.0 * 2.0) * h / ts : 0.0, 0);
  if (LayerOp* op = L.memory("rotary embedding (q, k)", M * rotary_bytes * (z.a_gpu + z.g_gpu) * qk_head_dim(m), eager ? 6 : 2))
    op->modules = is_mla(m) ? module_bit(RecomputeModule::MlaUpProj) : 0u;
  if (eager && !is_mla(m) && z.g_gpu < z.a_gpu)
    L.memory("repeat_kv (GQA keys and values to all heads)", M * 2.0 * 2.0 * (z.g_gpu + z.a_gpu) * m.head_dim, 2);
}

}  // namespace

std::vector<LayerOp> layer_ops(const Resolved& r, bool moe) {
  OpList L(r);
  attention_ops(L);
  mlp_ops(L, moe);
  memory_ops(L);
  L.fp8_casts();
  return std::move(L.ops);
}

std::vector<LayerOp> output_ops(const Resolved& r) {
  // Output layer and loss: the logits GEMM (in bf16 even in fp8 training, as Transformer Engine
  // keeps the output layer) and the fp32 softmax / cross-entropy over s·b·V/t logits (three passes
  // of 4 bytes; the backward writes the logits' gradient in one more pass of the same size).
  const ModelSpec& m = r.config.model;
  const Shape z = shape(r);
  OpList L(r);
  if (r.config.workload.mode == Mode::Infer) {
    // A serving prefill samples one token per sequence, from its last prompt token's logits: the
    // engines run the output layer on those rows only (vLLM gathers logits_indices before its LM head;
    // TensorRT-LLM returns context logits only with gather_context_logits, off by default).
    L.gemm("output layer (logits of each sequence's last token)", z.b, m.vocab / z.t, z.h, 1, true, false);
    L.memory("logits to fp32 and sampling", logits_sampling_bytes(m.vocab, z.b), 2, 1.0);
    return std::move(L.ops);
  }
  L.gemm("output layer (logits)", z.M, m.vocab / z.t, z.h, 1, true, false);
  L.memory("softmax and cross-entropy (fp32)", 3.0 * 4.0 * z.M * m.vocab / z.t, 3, 1.0);
  return std::move(L.ops);
}

double logits_sampling_bytes(double vocab, double sampled) { return 12.0 * vocab * sampled; }

std::vector<LayerOp> input_ops(const Resolved& r) {
  // Embedding lookup: gather s·b rows of h (read and write 2 bytes each); backward: zero the table's
  // V/t × h gradient and add the s·b rows into it (PyTorch's dense embedding backward).
  const ModelSpec& m = r.config.model;
  const Shape z = shape(r);
  OpList L(r);
  if (LayerOp* op = L.memory("embedding lookup", 4.0 * z.M * z.h, 1))
    op->b_s = (2.0 * m.vocab / z.t * z.h + 4.0 * z.M * z.h) / L.hbm_bps + 2 * L.e.kernel_floor_s;
  return std::move(L.ops);
}

std::vector<LayerOp> mtp_head_ops(const Resolved& r) {
  // One MTP module around its block (DeepSeek-V3 §2.2, Figure 3): the embedding of the shifted
  // tokens, RMSNorm of it and of the previous depth's hidden state, the projection of their
  // concatenation 2h → h, the module's final norm, then the shared output layer and a second loss.
  const ModelSpec& m = r.config.model;
  const Shape z = shape(r);
  OpList L(r);
  L.memory("MTP norms (3)", 3.0 * z.M * 2.0 * 2.0 * z.h / z.ts, 3);
  L.gemm("MTP projection [h; embedding] → h", z.M, z.h / z.t, 2.0 * z.h);
  L.fp8_casts();
  std::vector<LayerOp> ops = std::move(L.ops);
  for (auto part : {input_ops(r), output_ops(r)}) ops.insert(ops.end(), part.begin(), part.end());
  if (m.mtp_layers <= 0) ops.clear();
  return ops;
}

}  // namespace cutlab
