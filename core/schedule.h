// schedule.h: pipeline schedules generated and simulated op by op.
// Schedules: GPipe (Huang et al. 2019), 1F1B / PipeDream-Flush and interleaved 1F1B
// (Narayanan et al. 2021, arXiv:2104.04473 §2.2), ZB-H1 (Qi et al. 2023, arXiv:2401.10241),
// DualPipe (DeepSeek-V3 report, arXiv:2412.19437 §3.2.1, Table 2).
// Input: per stage and chunk the F, B, W durations of one micro-batch (from the cost model) and
// the point-to-point time between neighbouring stages. Output: every op with start and end,
// idle intervals, makespan, bubble fraction, and per stage the peak number of micro-batches
// whose activations are alive. Ignores: contention between p2p and compute, jitter.
#pragma once
#include <string>

#include <vector>
#include "core/choices.h"

#include "core/error.h"

namespace cutlab {

enum class OpKind { F, B, W, FB };  // FB: DualPipe's overlapped forward+backward pair
const char* op_kind_name(OpKind kind);

struct OpTimes {
  double f_s = 0;  // forward of one micro-batch through this chunk
  double b_s = 0;  // backward for inputs (the whole backward when the schedule does not split B and W)
  double w_s = 0;  // backward for weights (only used as a separate op by zb-h1 and dualpipe)
};

struct ScheduleInput {
  Schedule name = Schedule::OneFOneB;
  int stages = 1;              // p
  int micro_batches = 1;       // m
  int chunks = 1;              // v: model chunks per stage (interleaved: vpp; dualpipe: 2)
  std::vector<OpTimes> times;  // size stages*chunks, index stage*chunks + chunk
  double p2p_s = 0;            // transfer time of one activation (or gradient) between stages
  // Optional, size stages*chunks like `times`: what one alive (micro-batch, chunk) pair of that
  // chunk stores (e.g. its activation bytes), for chunks of unequal content; empty: not weighed.
  std::vector<double> alive_weights;
};

struct Op {
  int stage = 0;
  OpKind kind = OpKind::F;
  int micro_batch = 0;
  int chunk = 0;
  double start_s = 0;
  double end_s = 0;
  int backward_micro_batch = -1;  // FB only: the backward half (micro_batch and chunk name the forward half)
  int backward_chunk = -1;        // FB only
};

struct Interval {
  int stage = 0;
  double start_s = 0;
  double end_s = 0;
};

struct ScheduleResult {
  Schedule name = Schedule::OneFOneB;
  std::vector<Op> ops;         // sorted by stage, then start_s
  std::vector<Interval> idle;  // gaps in each stage's timeline within [0, makespan]
  double makespan_s = 0;
  double bubble_fraction = 0;                 // idle time / (stages * makespan)
  std::vector<int> peak_alive_micro_batches;  // per stage: max micro-batches with stored activations
                                              // (interleaved: (micro-batch, chunk) pairs; divide by chunks)
  std::vector<double> peak_alive_weight;      // per stage, when input.alive_weights is given: max Σ weight
                                              // of the alive pairs (else empty)
  std::vector<double> stage_end_s;            // per stage: when its last op ends
};

// Validates the combination (errors with paths under /plan) and simulates it.
Result<ScheduleResult> simulate_schedule(const ScheduleInput& input);

// The same simulation without the op list (the search's fast path): makespan, per-stage end times,
// peak alive pairs and weights equal simulate_schedule's bit for bit; ops and idle stay empty, and the
// bubble fraction counts every gap (simulate_schedule drops gaps below 1e-9 of the makespan as
// rounding, so the two differ by at most that per gap). GPipe, 1F1B, interleaved and ZB-H1 compute
// each stage's k-th op from k (closed forms of their generators), so nothing but one end time per
// (micro-batch, stage, chunk) is stored, in buffers reused by the calling thread; DualPipe, whose W
// queue follows the emitted order, still generates its order (untimed) first.
Result<ScheduleResult> simulate_schedule_summary(const ScheduleInput& input);

// A lower bound on simulate_schedule's makespan, without simulating (the search prunes with it):
// max over stages s of head_s + work_s + tail_s. work_s: every op of stage s, one at a time (m
// micro-batches × Σ over its chunks of f + b + w; DualPipe: m/2 per direction). head_s: the first
// op waits for micro-batch 0's forward through the stages before it (chunk 0: Σ_{k<s} f + s·p2p;
// DualPipe: the nearer of its two entries). tail_s (GPipe, 1F1B, interleaved, whose last op on a
// stage is a backward of chunk 0 lasting b + w): that gradient still goes through the stages
// before it, Σ_{k<s} (b + w) + s·p2p; none for ZB-H1 and DualPipe, whose W ops can come last.
// Uniform 1F1B stages (f, b, w, p2p 0): (m + p − 1)(f + b + w), the simulated makespan itself.
// The input must be valid (simulate_schedule's checks); an invalid one gives 0.
double makespan_lower_bound_s(const ScheduleInput& input);

// The rules a schedule puts on a plan: pp stages, vpp chunks per stage (as the plan gives it:
// DualPipe's two directions are not counted), m micro-batches per step (m ≤ 0: not known yet).
// Megatron's interleaved 1F1B runs micro-batches in groups of pp; DualPipe feeds both ends with half
// of them (DeepSeek-V3 §3.2.1; deepseek-ai/DualPipe needs m ≥ 2·pp). Paths are the plan's.
// Also bounds the work: pp × chunks × m ≤ k_max_schedule_pairs (error at /workload/global_batch).
Errors schedule_rules(Schedule schedule, int pp, int vpp, long long m);

// The most (micro-batch, chunk) pairs per stage summed over the stages (pp × chunks × micro-batches)
// one step may simulate. At the limit (measured on 2 cores, every schedule): evaluate 0.05–0.1 s and
// ≤ 41 MB natively; `schedule --json` 1.2–3.2 s and ≤ 440 MB; the timeline scene ≤ 4 rects per pair
// (≤ 524,288), 2.5–4.9 s in WASM. The largest published run among validation/cases.json (Megatron's
// 1T, pp 64 × 2 chunks × 512 micro-batches) holds 65,536.
inline constexpr long long k_max_schedule_pairs = 1LL << 17;

}  // namespace cutlab
