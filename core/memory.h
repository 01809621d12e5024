// memory.h: memory per GPU for each pipeline stage of a training plan.
// Model states: mixed precision with Adam (Rajbhandari et al. 2019, ZeRO, arXiv:1910.02054 §3):
// 16-bit weights, gradients in grad_dtype, K = 12 bytes of fp32 master weights and moments, sharded
// by ZeRO stage over the data-parallel group (Megatron's distributed optimizer = ZeRO-1).
// Activations: Korthikanti et al. 2022 (arXiv:2205.05198) Table 2, generalised by counting the
// stored tensors for GQA, MLA, gated MLPs, MoE, CP, SP and recompute, times in-flight micro-batches.
// Output layer and loss: fp32 logit buffers, fused (Megatron) or unfused (PyTorch cross entropy).
// Activation offload: the offloaded layers' activations leave HBM but for one layer's in flight.
// Context parallel with all-gathered K/V: the gathered K, V and their gradients of the layer in its
// backward (transient, one layer).
// ZeRO-3 / FSDP: the gathered units and one layer's unsharded gradients. The caching allocator's
// reserve: total = allocated × (1 + cluster.allocator_fragmentation).
// Ignores: NCCL buffers and the CUDA context (cluster.reserved_GiB covers them), temporary buffers of
// a single op other than the loss's.
#pragma once
#include <vector>

#include "core/hardware.h"
#include "core/model.h"
#include "core/placement.h"
#include "core/plan.h"
#include "core/resolved.h"

namespace cutlab {

// Bytes per parameter of model states on one GPU, for a parameter sharded over a data-parallel
// group of `dp_shards` GPUs. ZeRO paper Figure 1: 16, 4 + 12/Nd, 2 + 14/Nd, 16/Nd with 16-bit grads;
// Megatron (theoretical_memory_usage.py): 18, or 6 + 12/d with the distributed optimizer.
struct StateBytesPerParam {
  double weights = 2;
  double grads = 4;
  double optimizer = 12;
  double total() const { return weights + grads + optimizer; }
};
StateBytesPerParam state_bytes_per_param(const Plan& plan, const Workload& w, double dp_shards);

// Parameters one GPU of a stage holds (TP-, EP- and ETP-sharded, before any ZeRO sharding):
// `dense` is replicated over data parallelism (attention, norms, dense MLPs, routers, shared experts,
// embedding and output layer); `experts` are the routed experts of this EP rank.
struct StageParams {
  double dense = 0;
  double experts = 0;
  double embedding = 0;  // the input embedding's share of `dense`, or the MTP modules' copy of it (a lookup, not a GEMM)
  double output = 0;     // an untied output layer's share of `dense` (tied on one stage: `embedding` is it)
};
StageParams stage_params(const ModelSpec& m, const Plan& plan, const Mesh& mesh, const StageInfo& stage);

// Transformer blocks a stage holds: its layers, and on a stage with the output layer the MTP
// modules' blocks (MoE blocks in an MoE model).
struct StageBlocks {
  double dense = 0, moe = 0, mtp = 0;
};
StageBlocks stage_blocks(const ModelSpec& m, const StageInfo& stage);

// Stored activations of one transformer layer for one micro-batch on one GPU, bytes.
// `moe` selects an MoE layer (routed experts replace the dense MLP).
double layer_activation_bytes(const ModelSpec& m, const Plan& plan, const Workload& w, const Mesh& mesh, bool moe);

// K and V of the whole sequence of one micro-batch on one GPU, 16-bit, bytes: what context
// parallelism's all-gather (plan.cp_comm "allgather") delivers, 2·s·b·kv_width with kv_width the
// K and V widths of this TP rank's KV heads, g/t·(d_qk + d_v) (MLA: decompressed per query head,
// a/t·(d_qk + d_v)); a ring step passes 1/cp of it.
double cp_kv_sequence_bytes(const ModelSpec& m, const Plan& plan, const Workload& w);

// Activation offload (Plan::activation_offload_layers): of `dense` then `moe` layers (dense layers come
// first in the models), the stored activations of the first `n` for one micro-batch, bytes, and the
// largest single layer's among them (what stays in HBM while it is copied out or back in).
struct OffloadedActivations {
  double bytes = 0;
  double largest_layer_bytes = 0;
};
OffloadedActivations offloaded_activations(double n, double dense, double moe, double act_dense, double act_moe);

// Micro-batches whose activations a stage holds at peak, in units of the stage's full layers,
// from the schedule's closed form (Narayanan et al. 2021 §2.2; replaced by the simulated count when available).
double in_flight_micro_batches(const Plan& plan, int num_micro_batches, int stage);

struct StageMemory {
  int stage = 0;
  double dense_params = 0;   // per GPU, before ZeRO sharding
  double expert_params = 0;  // per GPU, before ZeRO sharding
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double kv_cache_bytes = 0;     // serving: for `batch` sequences of prompt_len + output_len tokens
  double activations_bytes = 0;  // serving: workspace of one layer's prefill, and the logits
  double in_flight_micro_batches = 0;
  double activation_bytes_per_micro_batch = 0;  // kept in HBM (without the offloaded layers')
  double offloaded_activations_bytes = 0;       // in host memory: the offloaded layers' of the micro-batches in flight
  double allocator_bytes = 0;                   // training: reserved beyond the tensors (Cluster::allocator_fragmentation × the rest)
  double total_bytes = 0;
  double capacity_bytes = 0;  // HBM minus cluster.reserved_GiB
  bool fits = true;
};

struct MemoryResult {
  std::vector<StageMemory> per_stage;
  int peak_stage = 0;
  bool fits = true;
  double overflow_bytes = 0;  // peak total − capacity when it does not fit, else 0
};

// `in_flight` (optional, one per stage): peak alive micro-batches from a simulated schedule,
// in units of the stage's full layers; empty: closed forms.
MemoryResult memory_per_stage(const Resolved& r, const std::vector<double>& in_flight = {});

// Sets peak_stage (the first stage with the largest total), fits and overflow_bytes from per_stage.
void summarize_peak(MemoryResult& memory);

}  // namespace cutlab
