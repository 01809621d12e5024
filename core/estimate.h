// estimate.h: one training plan evaluated end to end. Composes placement → memory → compute and
// communication → the simulated pipeline schedule → step time, throughput and MFU.
// Step time = makespan of the simulated schedule (per-stage F/B/W with exposed TP/CP/EP
// communication folded in, p2p between stages) + the exposed data-parallel tail of the slowest
// stage + the optimizer step. The breakdown adds up to the step time exactly.
// MFU = model FLOPs per step / (step time × GPUs × dense peak of the GEMM dtype), Narayanan et al.
// 2021 §5.1 convention (no recompute); HFU adds the recomputed forward.
#pragma once
#include <string>
#include <variant>
#include <vector>

#include "core/comm.h"
#include "core/compute.h"
#include "core/error.h"
#include "core/hardware.h"
#include "core/inference.h"
#include "core/memory.h"
#include "core/model.h"
#include "core/ops.h"
#include "core/placement.h"
#include "core/plan.h"
#include "core/resolved.h"
#include "core/schedule.h"

namespace cutlab {

struct TimeBreakdown {
  double compute_s = 0;          // F + B + W of the busiest stage over all micro-batches, without recompute
  double recompute_s = 0;        // re-running forward passes in the backward
  double tp_exposed_s = 0;       // TP collectives not hidden behind GEMMs
  double cp_exposed_s = 0;       // CP K/V exchange not hidden behind attention
  double ep_exposed_s = 0;       // EP all-to-all not hidden
  double ep_sm_slowdown_s = 0;   // compute slowed while DeepEP's kernels hold SMs (core/estimate.cpp layer_comm)
  double offload_exposed_s = 0;  // activation copies to and from host memory not hidden behind compute
  double pp_bubble_s = 0;        // pipeline fill, drain and p2p on the critical path
  double dp_exposed_s = 0;       // gradient reduction and parameter gathers after the last backward
  double optimizer_s = 0;        // the Adam step (memory-bound)
  double total_s() const {
    return compute_s + recompute_s + tp_exposed_s + cp_exposed_s + ep_exposed_s + ep_sm_slowdown_s + offload_exposed_s + pp_bubble_s +
           dp_exposed_s + optimizer_s;
  }
};

struct StageTime {
  int stage = 0;
  double f_s = 0, b_s = 0, w_s = 0;  // per micro-batch, with exposed TP/CP/EP communication
  double busy_s = 0;                 // over the step
  double end_s = 0;                  // when its last backward ends
  double dp_exposed_s = 0;
  double optimizer_s = 0;
};

// A training plan evaluated: one optimizer step.
struct TrainingEstimate {
  Mesh mesh;
  // One layer as its ops (core/ops.h), per micro-batch on one GPU: a dense layer (when the model has
  // one), an MoE layer (when it has experts) and the output layer with the loss.
  std::vector<LayerOp> dense_layer_ops, moe_layer_ops, output_layer_ops, input_layer_ops;
  ParamCounts params;
  double model_flops_per_step = 0;
  double hardware_flops_per_step = 0;
  Placement placement;
  MemoryResult memory;
  std::vector<CommOp> comm;  // for a GPU of comm_stage
  int comm_stage = 0;        // the busiest stage
  ScheduleResult schedule;
  std::vector<StageTime> stages;
  double step_s = 0;
  TimeBreakdown breakdown;
  double tokens_per_s = 0;
  double peak_flops_per_s = 0;  // per GPU, dense, of the GEMM dtype
  std::string peak_name;        // e.g. "bf16 dense 989 TFLOP/s"
  double model_flops_per_s_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
};

// A serving plan evaluated: prefill of a batch, then decode steps (core/inference.h).
struct ServingEstimate {
  Mesh mesh;
  ParamCounts params;
  Placement placement;
  InferenceEstimate serving;
};

// The result of either mode; which one follows from workload.mode.
using Estimate = std::variant<TrainingEstimate, ServingEstimate>;

// `with_ops` false: the schedule is simulated without its op list (simulate_schedule_summary, the
// search's fast path): schedule.ops and schedule.idle stay empty, every other number is the same.
Result<TrainingEstimate> evaluate_training(const Resolved& r, bool with_ops = true);
// The search's evaluation: evaluate_training(r, false), unless the step cannot be shorter than
// step_bound_s: the schedule's makespan_lower_bound_s (core/schedule.h), found before the schedule
// is simulated, is above it (the DP tail and the optimizer step only add to the makespan). Then
// `pruned` is set and the estimate is empty (no errors).
Result<TrainingEstimate> evaluate_training_within(const Resolved& r, double step_bound_s, bool& pruned);
ServingEstimate evaluate_serving(const Resolved& r);
Result<Estimate> evaluate(const Resolved& r);
Result<Estimate> evaluate(const Config& config);  // resolve(), then evaluate()

}  // namespace cutlab
