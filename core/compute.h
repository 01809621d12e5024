// compute.h: time of one micro-batch's forward and backward on one GPU of a pipeline stage.
// GEMMs: FLOPs / (peak × efficiency(shape)), efficiency = gemm · x/(x + gemm_half_dim) with x the
// smallest GEMM dimension (small or thin GEMMs under-use the tensor cores). Attention scores:
// flash attention skips the masked half of a causal s×s matrix, at the attention efficiency.
// Memory-bound ops (norms, activations, residuals, dropout, softmax of the loss): bytes / (HBM ×
// efficiency). Backward = input gradients (B: one GEMM per forward GEMM; attention 2.5× its forward,
// FlashAttention-2's backward recomputes QKᵀ and runs 5 GEMMs for the forward's 2, Dao 2023 §3.1) +
// weight gradients (W: one GEMM per forward GEMM), Narayanan et al. 2021 §5.1.
// Ignores: kernel launch gaps, the embedding lookup, optimizer kernels (estimate.h adds the step).
#pragma once
#include <vector>

#include "core/hardware.h"
#include "core/model.h"
#include "core/placement.h"
#include "core/plan.h"
#include "core/resolved.h"

namespace cutlab {

// Time of one GEMM of (M×K)·(K×N) at the given peak.
double gemm_time_s(double M, double N, double K, double peak_flops_per_s, const Efficiencies& e);

struct LayerTimes {
  double gemm_f_s = 0;       // forward GEMMs
  double attention_f_s = 0;  // forward score and value products
  double memory_f_s = 0;     // forward memory-bound ops
  double f_s() const { return gemm_f_s + attention_f_s + memory_f_s; }
  double b_s() const { return gemm_f_s + 2.5 * attention_f_s + 2.0 * memory_f_s; }  // input gradients
  double w_s() const { return gemm_f_s; }                                           // weight gradients
};

// One layer, one micro-batch, one GPU.
LayerTimes layer_times(const Resolved& r, bool moe);

struct StageCompute {
  int stage = 0;
  double f_s = 0;          // forward of one micro-batch, all chunks of the stage
  double b_s = 0;          // backward for inputs, including recomputation
  double w_s = 0;          // backward for weights
  double recompute_s = 0;  // part of b_s spent re-running the forward
};

// One model chunk: layers [first_layer, last_layer]; the chunk ending at the last layer also runs
// the output layer and the loss.
// Times of one dense layer, one MoE layer and the output layer with the loss, computed once per
// evaluation (from core/ops.h) and reused by every chunk.
struct LayerCompute {
  LayerTimes dense, moe;
  StageCompute output;  // f_s, b_s, w_s of the output layer and the loss
};
LayerCompute layer_compute(const Resolved& r);
StageCompute chunk_compute(const Resolved& r, const LayerCompute& layers, int first_layer, int last_layer);
// All chunks of a stage.
StageCompute stage_compute(const Resolved& r, const StageInfo& stage);

// Peak dense FLOP/s of the workload's GEMM dtype.
double peak_flops_per_s(const Cluster& c, const Workload& w);

}  // namespace cutlab
