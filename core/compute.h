// compute.h: time of one micro-batch's forward and backward on one GPU of a pipeline stage: the
// ops of core/ops.h (each on its roofline, with its kernel floor) summed per layer, and the layers
// of each model chunk summed, with the embedding on the first stage and the output layer and loss on
// the last. Forward (F), input gradients (B, including a recomputed forward) and weight gradients
// (W) separately, so zero-bubble schedules split them from the same numbers.
// Ignores: optimizer kernels (estimate.h adds the step), host-side stalls, data loading.
#pragma once
#include <vector>

#include "core/hardware.h"
#include "core/model.h"
#include "core/ops.h"
#include "core/placement.h"
#include "core/plan.h"
#include "core/resolved.h"

namespace cutlab {

struct PassTimes {
  double f_s = 0, b_s = 0, w_s = 0;  // forward, input gradients, weight gradients
};

struct LayerTimes {
  PassTimes all;             // every op of the layer
  PassTimes weight_gemms;    // GEMMs with weights
  PassTimes tp_window[5];    // by LayerOp::tp_window: the GEMMs each TP collective overlaps with (1–4)
  PassTimes core_attention;  // scores, softmax, values: what CP's ring steps overlap with
  PassTimes recomputed;      // ops of the plan's selective recompute modules: their forward is re-run in the backward
  PassTimes shared_experts;  // the shared experts' GEMMs and activation: what moe_shared_expert_overlap hides EP behind
  double f_s() const { return all.f_s; }
  double b_s() const { return all.b_s; }
  double w_s() const { return all.w_s; }
};

// One layer, one micro-batch, one GPU: its ops summed; `recompute_mask` (recompute_mask(plan))
// selects the ops selective recompute re-runs.
LayerTimes layer_times(const std::vector<LayerOp>& ops, unsigned recompute_mask);
LayerTimes layer_times(const Resolved& r, bool moe);

struct StageCompute {
  int stage = 0;
  double f_s = 0;          // forward of one micro-batch, all chunks of the stage
  double b_s = 0;          // backward for inputs, including recomputation
  double w_s = 0;          // backward for weights
  double recompute_s = 0;  // part of b_s spent re-running the forward
};

// Times of one dense layer, one MoE layer and the output layer with the loss, computed once per
// evaluation (from core/ops.h) and reused by every chunk.
struct LayerCompute {
  LayerTimes dense, moe;
  StageCompute output;    // f_s, b_s, w_s of the output layer and the loss
  StageCompute input;     // f_s, b_s, w_s of the embedding lookup
  StageCompute mtp_head;  // one MTP module besides its block (mtp_head_ops), on the last stage
  // The ops these times sum (dense_ops empty without dense layers, moe_ops without MoE layers).
  std::vector<LayerOp> dense_ops, moe_ops, output_ops, input_ops;
};
// The blocks chunk `chunk` of a stage runs: its dense and MoE layers, and in the chunk with the output
// layer the MTP modules' blocks (MoE blocks in an MoE model); whether it runs the embedding or the loss.
struct ChunkLayers {
  double dense = 0, moe = 0;
  bool input = false, output = false;
};
ChunkLayers chunk_layers(const ModelSpec& m, const StageInfo& stage, size_t chunk);
LayerCompute layer_compute(const Resolved& r);
// Model chunk `chunk` of a stage: its layers (none in a chunk of only the embedding or the loss),
// plus the embedding when it is the stage's embedding_chunk and the output layer and the loss when
// it is its output_chunk (core/placement.h).
StageCompute chunk_compute(const Resolved& r, const LayerCompute& layers, const StageInfo& stage, size_t chunk);
// All chunks of a stage.
StageCompute stage_compute(const Resolved& r, const StageInfo& stage);

// Peak dense FLOP/s of the workload's GEMM dtype.
double peak_flops_per_s(const Cluster& c, const Workload& w);

}  // namespace cutlab
