// ops.h: one transformer layer (and the output layer with the loss, and the embedding) as the list of
// kernels it runs on one GPU for one micro-batch, each with its FLOPs, HBM bytes and its forward (F),
// input-gradient (B) and weight-gradient (W) time. compute.h's LayerTimes are these ops summed, so
// `cutlab ops` and the step breakdown add up to the same time.
//
// Every op is costed on a roofline (Williams et al. 2009): time = max(FLOPs / (peak · efficiency),
// bytes / (HBM bandwidth · hbm efficiency)) + kernels · kernel floor. The efficiency of a GEMM depends
// on its shape (gemm_efficiency below); attention on its head dimension and key length; the kernel
// floor (launch, ramp-up and tail of one kernel) is what makes many small kernels slow.
// Backward: a GEMM Y = X·W (M×K by K×N) runs two GEMMs of its own shape, the input gradient
// dX = dY·Wᵀ (M×K output, reduction over N) and the weight gradient dW = Xᵀ·dY (K×N output,
// reduction over M: small for experts that receive few tokens) (Narayanan et al. 2021 §5.1); flash
// attention's backward does 2.5× the forward FLOPs (FlashAttention-2, Dao 2023 §3.1: 5 GEMMs for the
// forward's 2); memory-bound ops move twice their forward bytes (read the saved input and the output
// gradient, write the input gradient).
#pragma once
#include <string_view>
#include <vector>

#include "core/choices.h"
#include "core/resolved.h"

namespace cutlab {

// Host: time the GPU waits for the host (CPU) to issue work, no FLOPs or bytes of its own.
enum class OpClass { Gemm, Attention, Memory, Host };

template <>
struct ChoiceTable<OpClass> {
  static constexpr const char* key = "class";
  static constexpr std::array<Named<OpClass>, 4> entries{{{OpClass::Gemm, "gemm", "GEMM"},
                                                          {OpClass::Attention, "attention", "attention"},
                                                          {OpClass::Memory, "memory", "memory-bound"},
                                                          {OpClass::Host, "host", "host-bound"}}};
};

// The four TP collectives of a layer (Korthikanti et al. 2022 §4.2.2, Figure 5: with sequence parallelism
// an all-gather before each block's first GEMMs and a reduce-scatter after its last) and the GEMMs each is
// pipelined with under TP communication overlap (Transformer Engine's userbuffers; torch's async TP fuses
// the same pairs, all-gather + matmul and matmul + reduce-scatter): a collective hides only behind its own
// GEMMs, not behind the whole layer's.
enum TpWindow : int { kTpNone = 0, kTpAttnIn = 1, kTpAttnOut = 2, kTpMlpIn = 3, kTpMlpOut = 4 };

struct LayerOp {
  std::string_view name;  // e.g. "QKV projection": a literal, no allocation on the hot path
  OpClass op_class = OpClass::Gemm;
  double count = 1;             // instances (local experts, or batch × heads of unfused attention); figures are for all
  double m = 0, n = 0, k = 0;   // GEMM shape of one instance (M×K)·(K×N); 0 for other ops
  double flops = 0;             // forward
  double bytes = 0;             // forward HBM traffic (GEMMs: operands read and result written once)
  double efficiency = 0;        // forward: fraction of the compute peak reached (GEMMs, attention); 0 for memory ops
  bool memory_bound = false;    // forward: the byte term of the roofline is the larger
  bool core_attention = false;  // part of core attention (scores, softmax, values): what selective recompute repeats
  bool weights = false;         // a GEMM with a weight: its W time is the weight gradient (zero-bubble schedules defer it)
  unsigned modules = 0;         // module_bit()s of the recompute modules that contain it (Plan::recompute_modules)
  int tp_window = 0;            // TpWindow: the TP collective this GEMM hides under --tp-comm-overlap, 0 none
  double f_s = 0, b_s = 0, w_s = 0;
};

// What bounds an op's time: "compute", "memory" or "host" (`cutlab ops`, the JSON op list, the page).
inline const char* op_bound(const LayerOp& op) {
  return op.op_class == OpClass::Host ? "host" : op.memory_bound ? "memory" : "compute";
}

// Fraction of the dtype's dense peak a GEMM of `count` instances of (M×K)·(K×N) reaches on `sms`
// streaming multiprocessors:
//   gemm · tiles(M, N) · waves · x/(x + gemm_half_dim), x = min(M, N, K).
// tiles: output tiles with edges of 128, 64, 32 or 16, each edge the one that pads its dimension least
// (the larger on a tie), the padded part of the last tile row and column wasted (tile quantization):
// the engines pick among such tile shapes per GEMM shape (cuBLAS's heuristics; TensorRT-LLM's CUTLASS
// MoE GEMMs profile tactics from 64×16 to 128×256 CTA tiles, cutlass_heuristic.cpp, with A and B
// swapped so that few tokens are the narrow edge), so 65 tokens pad to 80, not to one tile of 128:
// with a single power of two covering the dimension (before 2026-12-04) the grouped GEMM's time
// doubled between 64 and 65 tokens per expert. Waves: a GEMM (all
// instances of a grouped GEMM together) with fewer tiles than SMs leaves SMs idle, after splitting
// K (split-K) over up to the idle SMs in slices of at least 256 (wave quantization of a partial
// wave). Both effects follow NVIDIA's "Matrix Multiplication Background" guide (Deep Learning
// Performance documentation, §"Tile quantization", §"Wave quantization"). The partly idle last wave
// of a GEMM with more than one wave is not charged: libraries balance it by their choice of tile
// shape and split-K (and stream-K on Hopper, Osama et al. 2023), and the published A100 runs fit
// better without it (docs/validation.md). The x/(x + half) term is the loss of thin GEMMs (low
// arithmetic intensity per tile), fitted within bounds: thin in any dimension, as a small K (the
// row-parallel projections after a TP split, K = f/t or a·d/t) leaves each tile few steps of its main
// loop to amortize its prologue and the write of its output (since 2026-12-01; before, min(M, N): the
// 500 W H100's mean error went 2.2% → 1.8% with the change, the others within 0.1 point).
// sms = 0: no quantization.
double gemm_efficiency(double M, double N, double K, double count, int sms, double gemm, double half_dim);

// gemm_efficiency for a grouped GEMM whose instances are experts fed by a router: `mean_rows` tokens
// per expert on average (uniform routing), the counts spread about it (multinomial routing: a standard
// deviation near √mean_rows, 3 or more from about 9 rows), so the last 16-row tile of each expert is
// on average half full: mean_rows + 7.5 rows padded, and at least one tile (16). The narrowest tile
// pads least; the lower operand reuse of narrow tiles is not charged (serving passes no thin-GEMM
// term, see core/serving_step.cpp). With the rows of the mean exactly, the time of a decode step's
// experts would step by a quarter between 64 and 65 tokens per expert, which no engine shows.
double routed_gemm_efficiency(double mean_rows, double N, double K, double count, int sms, double gemm);

// The x/(x + half) term's half dimension on cluster c: gemm_half_balance times the GPU's machine
// balance, bf16 FLOP per HBM byte (peak ÷ bandwidth; Williams et al. 2009, the roofline's ridge
// point). A thin GEMM loses throughput where its tiles' arithmetic intensity nears the ridge, and the
// ridge moves with the GPU (A100 153 FLOP per byte, H100 SXM 295), so the fitted multiple carries from
// one GPU to another where an element count would not. 0 when the cluster gives no bandwidth.
double gemm_half_dim(const Cluster& c);

// Fraction of the bf16 peak flash attention reaches: `attention` is the efficiency at head dimension
// 128 on long sequences; shorter key lengths s_k and smaller heads lose throughput as
//   d(128 + 54)/(128(d + 54)) · s_k/(s_k + 850),
// a fit by eye to the shape of FlashAttention-3's forward curves on H100 (Shah et al. 2024, Figure 5,
// causal): the curve gives 0.58, 0.74, 0.87, 0.95 of the 16k-key throughput at 1k, 2k, 4k, 8k keys,
// and 0.77 (head dim 64) and 1.17 (head dim 256) of head dim 128. FlashAttention-2 on A100 (Dao 2023,
// Figure 4) rises more flatly; the fitted `attention` absorbs the level of each GPU family.
double attention_efficiency(double head_dim, double key_len, double attention);

// The ops of one transformer layer (dense MLP or MoE) on one GPU, one micro-batch, in the order they run.
std::vector<LayerOp> layer_ops(const Resolved& r, bool moe);
// The output layer and the loss (on the last stage). Serving (workload.mode infer, the static batch's
// prefill): the logits of each sequence's last prompt token only, and their sampling.
std::vector<LayerOp> output_ops(const Resolved& r);

// Bytes one GPU moves to sample from the logits of `sampled` tokens over `vocab` entries, gathered
// over TP: the output layer writes them in 16-bit (2), the sampler casts them to fp32 (read 2, write
// 4; vLLM's Sampler: logits.to(torch.float32)) and reads them to pick the token (4, greedy argmax):
// 12 per logit. Top-k/top-p sampling's sort and extra passes are left out.
double logits_sampling_bytes(double vocab, double sampled);
// The embedding lookup (on the first stage).
std::vector<LayerOp> input_ops(const Resolved& r);
// One multi-token-prediction module besides its transformer block: embedding, norms, projection,
// the shared output layer and its loss (on the last stage; empty without MTP).
std::vector<LayerOp> mtp_head_ops(const Resolved& r);

}  // namespace cutlab
