// schedule.cpp: generates each stage's op order for a pipeline schedule, then simulates it.
// Two steps, kept apart so each can be read against its source:
//   1. generate: per stage, the ORDER of ops (F, B, W, FB) as the reference implementation issues them;
//   2. simulate: every op starts as soon as its inputs have arrived and its stage is free, in that order.
// Timing model (p stages, v chunks per stage, m micro-batches; f, b, w from input.times[stage*v + chunk]):
//   F lasts f; B lasts b + w when the schedule does not split B and W (gpipe, 1f1b, interleaved, DualPipe's
//   non-zero-bubble backwards), else b and a later W lasts w; FB (DualPipe) lasts f + b + w of its two halves:
//   the overlap hides communication, not compute, so the F&B unit of DeepSeek-V3 Table 2 is F + B(full).
//   An op's outputs (activation or gradient) leave when the op ends and arrive p2p_s later on another stage.
// Activation memory: a (micro-batch, chunk) pair is alive on its stage from the start of its forward to the
//   end of its last backward op (W when split, else B or FB). peak_alive_micro_batches counts such pairs,
//   i.e. it is in chunk units: for gpipe, 1f1b, zb-h1 and dualpipe (each micro-batch meets one chunk per
//   stage) that is micro-batches; for interleaved each pair holds 1/v of a 1F1B stage's activations, so
//   the caller divides by v.
// Ignores: contention between p2p and compute, jitter, the optimizer step, DualPipe's comm ordering.
#include "core/schedule.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace cutlab {

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::F: return "F";
    case OpKind::B: return "B";
    case OpKind::W: return "W";
    case OpKind::FB: return "FB";
  }
  return "?";
}

namespace {

// JSON-pointer paths of the plan fields behind each input (the caller's JSON layout).
constexpr const char* k_path_schedule = "/plan/schedule";
constexpr const char* k_path_stages = "/plan/pp";
constexpr const char* k_path_chunks = "/plan/vpp";
constexpr const char* k_path_micro_batches = "/workload/global_batch";

// Upper bound on p * v * m, so a typo cannot ask for gigabytes of ops (schedule.h).
constexpr long long k_max_pairs = k_max_schedule_pairs;

// The limit's message, shared by the plan's rules and the simulation's own check.
std::string too_many_pairs(long long p, long long v, long long m) {
  return "pp × chunks × micro-batches = " + std::to_string(p) + " × " + std::to_string(v) + " × " + std::to_string(m) +
         " exceeds the limit of " + std::to_string(k_max_pairs) +
         " (micro-batch, chunk) pairs one step may simulate: lower global_batch or raise micro_batch";
}

// Appends one stage's ops, untimed, in issue order. The ops array is the result's (no copy); `split_w`
// runs beside it: for a B op, whether its W is a separate later op (then the B lasts b, not b + w, and
// the activations stay alive until the W). An FB op's backward half is always a full backward.
struct Emitter {
  std::vector<Op>& ops;
  std::vector<unsigned char>& split_w;
  int stage = 0;
  void operator()(OpKind kind, int micro_batch, int chunk, bool split = false, int backward_micro_batch = -1,
                  int backward_chunk = -1) {
    ops.push_back(Op{stage, kind, micro_batch, chunk, 0.0, 0.0, backward_micro_batch, backward_chunk});
    split_w.push_back(split ? 1 : 0);
  }
};

// The path of a micro-batch through the virtual stages, as neighbour lookups on (stage, chunk).
// 1 chunk per stage: stages 0..p-1. Interleaved (Narayanan et al. 2021 §2.2.2): chunk c of stage s is
// virtual stage c*p + s, so after stage p-1 of chunk c comes stage 0 of chunk c+1. DualPipe (DeepSeek-V3
// §3.2.1): micro-batches [0, m/2) run stages 0..p-1 on chunk 0; micro-batches [m/2, m) run the reverse
// direction, stages p-1..0 on chunk 1 (stage s's chunk 1 is the reverse pipeline's stage p-1-s).
// On a given stage the chunk fixes the direction, so no lookup needs the micro-batch.
struct Place {
  int stage = -1;  // -1: none (the micro-batch starts or ends here)
  int chunk = 0;
};

struct Topology {
  Schedule kind = Schedule::OneFOneB;
  int p = 1, v = 1, m = 1;

  Place previous(int s, int c) const {
    if (kind == Schedule::DualPipe) return c == 0 ? Place{s - 1, 0} : Place{s + 1 < p ? s + 1 : -1, 1};
    if (s > 0) return {s - 1, c};
    return c > 0 ? Place{p - 1, c - 1} : Place{};
  }
  Place next(int s, int c) const {
    if (kind == Schedule::DualPipe) return c == 0 ? Place{s + 1 < p ? s + 1 : -1, 0} : Place{s - 1, 1};
    if (s + 1 < p) return {s + 1, c};
    return c + 1 < v ? Place{0, c + 1} : Place{};
  }
  std::size_t slot(int j, int s, int c) const { return (static_cast<std::size_t>(j) * p + s) * v + c; }
};

// ---------------------------------------------------------------------------------------------------
// Generators: each appends one stage's ops, in issue order, through `emit`.

// GPipe (Huang et al. 2019, arXiv:1811.06965, Fig. 2c): all forwards, then all backwards, last micro-batch
// first (the last stage turns around without waiting).
void generate_gpipe(const Topology& t, Emitter& emit) {
  for (int j = 0; j < t.m; ++j) emit(OpKind::F, j, 0);
  for (int j = t.m - 1; j >= 0; --j) emit(OpKind::B, j, 0);
}

// 1F1B / PipeDream-Flush (Narayanan et al. 2021 §2.2.1; Megatron-LM forward_backward_pipelining_without_
// interleaving): stage s runs min(p-s-1, m) warm-up forwards, then pairs of F and B, then the remaining B.
void generate_1f1b(const Topology& t, int s, Emitter& emit) {
  const int warmup = std::min(t.p - s - 1, t.m);
  for (int j = 0; j < warmup; ++j) emit(OpKind::F, j, 0);
  for (int i = 0; i < t.m - warmup; ++i) {
    emit(OpKind::F, warmup + i, 0);
    emit(OpKind::B, i, 0);
  }
  for (int j = t.m - warmup; j < t.m; ++j) emit(OpKind::B, j, 0);
}

// Interleaved 1F1B (Narayanan et al. 2021 §2.2.2; Megatron-LM forward_backward_pipelining_with_interleaving):
// micro-batches run in groups of g; each group passes chunk 0, then chunk 1, ...: the k-th forward of a
// stage is chunk (k/g) % v of micro-batch (k/(g*v))*g + k%g, the k-th backward the same with the chunks
// in reverse. g = p when p divides m (the paper's schedule); otherwise the smallest divisor of m above p
// (Megatron-Core's microbatch_group_size_per_vp_stage; Llama 3 ran micro-batch counts that are not a
// multiple of PP with a tunable group of contiguous micro-batches, Dubey et al. 2024 §3.3.2): larger
// groups keep the order deadlock-free at the cost of more warm-up forwards in flight.
// Warm-up forwards: (p-s-1)*2 + (v-1)*g (all of them when m == p).
int interleaved_group(int p, int m) {
  if (m % p == 0) return p;
  int g = p + 1;
  while (m % g != 0) ++g;  // ends at m at the latest
  return g;
}

void generate_interleaved(const Topology& t, int s, Emitter& emit) {
  const int p = t.p, v = t.v, total = t.m * t.v, g = interleaved_group(p, t.m);
  int warmup = (p - s - 1) * 2 + (v - 1) * g;
  if (t.m == p || warmup > total) warmup = total;
  auto micro_batch = [&](int k) { return (k / (g * v)) * g + k % g; };
  auto forward = [&](int k) { emit(OpKind::F, micro_batch(k), (k / g) % v); };
  auto backward = [&](int k) { emit(OpKind::B, micro_batch(k), v - 1 - (k / g) % v); };
  for (int k = 0; k < warmup; ++k) forward(k);
  for (int i = 0; i < total - warmup; ++i) {
    forward(warmup + i);
    backward(i);
  }
  for (int k = total - warmup; k < total; ++k) backward(k);
}

// ZB-H1 (Qi et al. 2023, arXiv:2401.10241, handcrafted schedule ZB-H1): the 1F1B order with B split into B (input grad)
// and W (weight grad). Stage s postpones up to s W passes: it holds p-s micro-batches after warm-up plus s
// postponed, i.e. p, the 1F1B peak of stage 0, so no stage exceeds 1F1B's peak memory. Stage 0 postpones none
// (F... B W F B W ...); the last stage runs F B F B ... and its W fill the tail. In the cool-down each B is
// followed by one W (filling the gap until the next gradient arrives); the rest are flushed at the end.
// With m >= p and w <= b this reproduces the paper's bubble (p-1)(T_F + T_B - T_W) exactly (tests).
void generate_zb_h1(const Topology& t, int s, Emitter& emit) {
  const int warmup = std::min(t.p - s - 1, t.m);
  const int max_postponed = s;
  int next_w = 0;  // W run in micro-batch order, the order of the B passes
  auto backward = [&](int j) { emit(OpKind::B, j, 0, true); };
  auto weight = [&]() { emit(OpKind::W, next_w++, 0); };
  for (int j = 0; j < warmup; ++j) emit(OpKind::F, j, 0);
  for (int i = 0; i < t.m - warmup; ++i) {
    emit(OpKind::F, warmup + i, 0);
    backward(i);
    if (i + 1 - next_w > max_postponed) weight();
  }
  for (int j = t.m - warmup; j < t.m; ++j) {
    backward(j);
    weight();
  }
  while (next_w < t.m) weight();
}

// DualPipe (DeepSeek-V3 §3.2.1; the order of deepseek-ai/DualPipe dualpipe.py, DualPipe.step, steps 1-8).
// Stage s is at distance h = min(s, p-1-s) from the nearer end. "near" is the direction that enters at that
// end (chunk 0 on the first half of the stages, chunk 1 on the second half), "far" the other one.
// Backward ops marked zb split off their W, which a later W op runs (first in, first out).
// With F = b (any w <= F) the simulated bubble is exactly Table 2's (p/2 - 1)(F&B + B - 3W) with F&B = F + B;
// for F != b it departs from it (see tests/test_schedule.cpp). Needs m >= 2p, as the reference asserts.
void generate_dualpipe(const Topology& t, int s, Emitter& emit) {
  const int p = t.p, half_p = p / 2, half_m = t.m / 2;
  const int h = std::min(s, p - 1 - s);
  const bool middle = h == half_p - 1;
  const int near = s < half_p ? 0 : 1, far = 1 - near;
  int next_f[2] = {0, 0}, next_b[2] = {0, 0};
  // Postponed W passes run first in, first out: the queue is this stage's split B ops, found by scanning
  // its emitted ops forward (each W comes after the B that queued it, so the scan only advances).
  std::size_t w_scan = emit.ops.size();
  auto mb = [&](int c, int index) { return c * half_m + index; };
  auto forward = [&](int c) { emit(OpKind::F, mb(c, next_f[c]++), c); };
  auto backward = [&](int c, bool zb) { emit(OpKind::B, mb(c, next_b[c]++), c, zb); };
  auto weight = [&]() {
    while (!(emit.ops[w_scan].kind == OpKind::B && emit.split_w[w_scan])) ++w_scan;
    const int j = emit.ops[w_scan].micro_batch, c = emit.ops[w_scan].chunk;
    ++w_scan;
    emit(OpKind::W, j, c);
  };
  auto forward_backward = [&](int cf, int cb) {
    const int jf = mb(cf, next_f[cf]++);
    const int jb = mb(cb, next_b[cb]++);
    emit(OpKind::FB, jf, cf, false, jb, cb);
  };

  for (int i = 0; i < (half_p - h - 1) * 2; ++i) forward(near);  // step 1: nF0
  for (int i = 0; i < h + 1; ++i) {                              // step 2: nF0F1
    forward(near);
    forward(far);
  }
  for (int i = 0; i < half_p - h - 1; ++i) {  // step 3: nB1W1F1 (zero bubble)
    backward(far, true);
    weight();
    forward(far);
  }
  for (int i = 0; i < half_m - p + h + 1; ++i) {  // step 4 (main): nF0B1F1B0
    if (i == 0 && middle) {                       // the reference does not overlap this pair on the middle stages
      forward(near);
      backward(far, false);
    } else {
      forward_backward(near, far);
    }
    forward_backward(far, near);
  }
  for (int i = 0; i < half_p - h - 1; ++i) {  // step 5: nB1F1B0
    backward(far, false);
    forward_backward(far, near);
  }
  bool zb = false;  // step 6: nB1B0, the second half with zero bubble
  for (int i = 0; i < h + 1; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) zb = true;
    backward(far, zb);
    if (i == (h + 1) / 2 && h % 2 == 0) zb = true;
    backward(near, zb);
  }
  for (int i = 0; i < half_p - h - 1; ++i) {  // step 7: nWB0 (zero bubble)
    weight();
    backward(near, true);
  }
  for (int i = 0; i < h + 1; ++i) weight();  // step 8: nW
}

// ---------------------------------------------------------------------------------------------------
// Simulation, in three steps: generate every stage's ops, time them, then read the timeline.

// Step 1: generates each stage's op order into `ops`; returns the bounds, stage s owning [begin[s], begin[s+1]).
// Ops per stage: 2mv (F and B), 3m when every backward may be split (zb-h1; dualpipe has at most that).
std::vector<std::size_t> generate_ops(const Topology& t, std::vector<Op>& ops, std::vector<unsigned char>& split_w) {
  const int p = t.p;
  const bool may_split = t.kind == Schedule::ZbH1 || t.kind == Schedule::DualPipe;
  const std::size_t ops_bound = static_cast<std::size_t>(p) * t.m * (may_split ? 3 : 2 * t.v);
  ops.reserve(ops_bound);
  split_w.reserve(ops_bound);
  std::vector<std::size_t> begin(p + 1, 0);
  Emitter emit{ops, split_w, 0};
  for (int s = 0; s < p; ++s) {
    begin[s] = ops.size();
    emit.stage = s;
    switch (t.kind) {
      case Schedule::GPipe: generate_gpipe(t, emit); break;
      case Schedule::OneFOneB: generate_1f1b(t, s, emit); break;
      case Schedule::Interleaved: generate_interleaved(t, s, emit); break;
      case Schedule::ZbH1: generate_zb_h1(t, s, emit); break;
      case Schedule::DualPipe: generate_dualpipe(t, s, emit); break;
    }
  }
  begin[p] = ops.size();
  return begin;
}

// Step 2: times every op. f_end / b_end: when the forward / input-gradient output of (micro-batch, stage,
// chunk) is ready on its own stage; negative until that op has been timed. A stage runs its ops in order
// until one's input is not timed yet; it waits on `stack` until the producer of that input wakes it.
// `Source` gives stage s's k-th op (count(s) of them) as an OpRef; `Sink` hears each op as it is timed
// (the full simulation writes the times into the op list, the fast path only counts). The buffers live in
// `Scratch`, reused from one simulation to the next on the same thread.
struct OpRef {
  OpKind kind = OpKind::F;
  int micro_batch = 0;
  int chunk = 0;
  int backward_micro_batch = -1;
  int backward_chunk = -1;
  bool split = false;  // B only: its W is a separate later op
};

struct Scratch {
  std::vector<double> f_end, b_end, free_at;
  std::vector<std::size_t> cursor;
  std::vector<int> stack;
  std::vector<char> queued;
};

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

template <class Source, class Sink>
struct Timeline {
  const Topology& t;
  const ScheduleInput& input;
  const Source& source;
  Sink& sink;
  std::vector<double>& f_end;
  std::vector<double>& b_end;
  std::vector<std::size_t>& cursor;  // per stage: the index of its next op not yet timed
  std::vector<double>& free_at;      // per stage: when its last timed op ends
  std::vector<int>& stack;           // stages to run
  std::vector<char>& queued;         // per stage: whether it is on the stack

  Timeline(const Topology& topology, const ScheduleInput& in, const Source& src, Sink& out, Scratch& x)
      : t(topology),
        input(in),
        source(src),
        sink(out),
        f_end(x.f_end),
        b_end(x.b_end),
        cursor(x.cursor),
        free_at(x.free_at),
        stack(x.stack),
        queued(x.queued) {
    f_end.assign(static_cast<std::size_t>(t.m) * t.p * t.v, -1.0);
    b_end.assign(f_end.size(), -1.0);
    cursor.assign(t.p, 0);
    free_at.assign(t.p, 0.0);
    queued.assign(t.p, 1);
    stack.clear();
    for (int s = t.p - 1; s >= 0; --s) stack.push_back(s);
  }

  const OpTimes& times_of(int s, int c) const { return input.times[static_cast<std::size_t>(s) * t.v + c]; }

  // Earliest time the forward of (j, s, c) may start given its input, or -1 if the input is not yet timed.
  double forward_ready(int j, int s, int c) const {
    const Place from = t.previous(s, c);
    if (from.stage < 0) return 0.0;
    const double e = f_end[t.slot(j, from.stage, from.chunk)];
    if (e < 0) return -1.0;
    return from.stage == s ? e : e + input.p2p_s;
  }
  // Same for the backward: it needs its own forward and the gradient from the next virtual stage.
  double backward_ready(int j, int s, int c) const {
    const double own_f = f_end[t.slot(j, s, c)];
    if (own_f < 0) return -1.0;
    const Place from = t.next(s, c);
    if (from.stage < 0) return own_f;
    const double e = b_end[t.slot(j, from.stage, from.chunk)];
    if (e < 0) return -1.0;
    return std::max(own_f, from.stage == s ? e : e + input.p2p_s);
  }

  void wake(int s) {
    if (!queued[s]) {
      queued[s] = 1;
      stack.push_back(s);
    }
  }
  // After the forward output of (s, c) is timed, the next virtual stage may proceed; after its input
  // gradient is timed, the previous one may.
  void wake_forward_consumer(int s, int c) {
    const Place to = t.next(s, c);
    if (to.stage >= 0) wake(to.stage);
  }
  void wake_backward_consumer(int s, int c) {
    const Place to = t.previous(s, c);
    if (to.stage >= 0) wake(to.stage);
  }

  // The earliest start of `op` of stage s given its inputs (-1: an input is not timed yet), and its duration.
  void ready_and_duration(const OpRef& op, int s, double& ready, double& duration) const {
    switch (op.kind) {
      case OpKind::F:
        ready = forward_ready(op.micro_batch, s, op.chunk);
        duration = times_of(s, op.chunk).f_s;
        break;
      case OpKind::B: {
        ready = backward_ready(op.micro_batch, s, op.chunk);
        const OpTimes& ot = times_of(s, op.chunk);
        duration = op.split ? ot.b_s : ot.b_s + ot.w_s;
        break;
      }
      case OpKind::W:
        ready = b_end[t.slot(op.micro_batch, s, op.chunk)];
        duration = times_of(s, op.chunk).w_s;
        break;
      case OpKind::FB: {
        const double rf = forward_ready(op.micro_batch, s, op.chunk);
        const double rb = backward_ready(op.backward_micro_batch, s, op.backward_chunk);
        ready = (rf < 0 || rb < 0) ? -1.0 : std::max(rf, rb);
        const OpTimes& bt = times_of(s, op.backward_chunk);
        duration = times_of(s, op.chunk).f_s + bt.b_s + bt.w_s;
        break;
      }
    }
  }

  // Records the outputs of an op of stage s that ends at end_s and wakes the stages that consume them.
  void publish(const OpRef& op, int s, double end_s) {
    if (op.kind == OpKind::F || op.kind == OpKind::FB) {
      f_end[t.slot(op.micro_batch, s, op.chunk)] = end_s;
      wake_forward_consumer(s, op.chunk);
    }
    if (op.kind == OpKind::B) {
      b_end[t.slot(op.micro_batch, s, op.chunk)] = end_s;
      wake_backward_consumer(s, op.chunk);
    } else if (op.kind == OpKind::FB) {
      b_end[t.slot(op.backward_micro_batch, s, op.backward_chunk)] = end_s;
      wake_backward_consumer(s, op.backward_chunk);
    }
  }

  // Times stage s's ops in order until one's input is not timed yet (its producer wakes this stage).
  void run_stage(int s) {
    const std::size_t n = source.count(s);
    for (; cursor[s] < n; ++cursor[s]) {
      const OpRef op = source.at(s, cursor[s]);
      double ready = 0, duration = 0;
      ready_and_duration(op, s, ready, duration);
      if (ready < 0) break;
      const double start_s = std::max(free_at[s], ready);
      const double end_s = start_s + duration;
      sink.timed(s, cursor[s], op, free_at[s], start_s, end_s);
      free_at[s] = end_s;
      publish(op, s, end_s);
    }
  }

  // Runs the stages until none can proceed; returns the first stage left with untimed ops, or -1.
  int run() {
    while (!stack.empty()) {
      const int s = stack.back();
      stack.pop_back();
      queued[s] = 0;
      run_stage(s);
    }
    for (int s = 0; s < t.p; ++s)
      if (cursor[s] != source.count(s)) return s;
    return -1;
  }
};

// The generated op list as a Source (the full simulation and DualPipe's fast path), stage s owning
// [begin[s], begin[s+1]); the full simulation's Sink writes each op's times back into it.
struct ListSource {
  const std::vector<Op>& ops;
  const std::vector<unsigned char>& split_w;
  const std::vector<std::size_t>& begin;
  std::size_t count(int s) const { return begin[s + 1] - begin[s]; }
  OpRef at(int s, std::size_t k) const {
    const std::size_t i = begin[s] + k;
    const Op& op = ops[i];
    return {op.kind, op.micro_batch, op.chunk, op.backward_micro_batch, op.backward_chunk, split_w[i] != 0};
  }
};

struct ListSink {
  std::vector<Op>& ops;
  const std::vector<std::size_t>& begin;
  void timed(int s, std::size_t k, const OpRef&, double, double start_s, double end_s) {
    Op& op = ops[begin[s] + k];
    op.start_s = start_s;
    op.end_s = end_s;
  }
};

// Idle intervals of the timed ops: gaps longer than `tolerance_s` (shorter ones are rounding, not bubbles).
struct IdleRecorder {
  std::vector<Interval>& idle;
  double tolerance_s = 0;
  double idle_s = 0;  // total length of the recorded intervals
  void add(int s, double from_s, double to_s) {
    if (to_s - from_s > tolerance_s) {
      idle.push_back({s, from_s, to_s});
      idle_s += to_s - from_s;
    }
  }
};

// Number of idle intervals over all stages, counted first so the idle list is allocated once, at its size.
std::size_t count_gaps(const std::vector<Op>& ops, const std::vector<std::size_t>& begin, int p, double makespan_s,
                       double tolerance_s) {
  std::size_t num_gaps = 0;
  for (int s = 0; s < p; ++s) {
    double t_s = 0;
    for (std::size_t i = begin[s]; i < begin[s + 1]; ++i) {
      num_gaps += ops[i].start_s - t_s > tolerance_s;
      t_s = ops[i].end_s;
    }
    num_gaps += makespan_s - t_s > tolerance_s;
  }
  return num_gaps;
}

// Records stage s's idle intervals and returns its peak alive (micro-batch, chunk) pairs; with
// `weights` (index stage·v + chunk) also the peak of their summed weights, in `peak_weight`.
int sweep_stage(const ScheduleResult& out, const std::vector<unsigned char>& split_w, std::size_t first, std::size_t last, int s,
                IdleRecorder& idle, const std::vector<double>& weights, int v, double& peak_weight) {
  double t_s = 0;
  int alive = 0, peak = 0;
  double alive_w = 0;
  auto weight = [&](int chunk) { return weights.empty() ? 0.0 : weights[static_cast<std::size_t>(s) * v + chunk]; };
  for (std::size_t i = first; i < last; ++i) {
    const Op& op = out.ops[i];
    idle.add(s, t_s, op.start_s);
    t_s = op.end_s;
    // Ops of a stage run one at a time, so walking them in order is a sweep over time; a pair freed at
    // the end of one op and one allocated at the start of the next never coexist.
    if (op.kind == OpKind::F || op.kind == OpKind::FB) {
      peak = std::max(peak, ++alive);
      alive_w += weight(op.chunk);
      peak_weight = std::max(peak_weight, alive_w);
    }
    if (op.kind == OpKind::FB || op.kind == OpKind::W || (op.kind == OpKind::B && !split_w[i])) {
      --alive;
      alive_w -= weight(op.kind == OpKind::FB ? op.backward_chunk : op.chunk);
    }
  }
  idle.add(s, t_s, out.makespan_s);
  return peak;
}

// Step 3: makespan, idle intervals, bubble fraction, peak alive (micro-batch, chunk) pairs.
void summarize(ScheduleResult& out, const std::vector<unsigned char>& split_w, const std::vector<std::size_t>& begin,
               const std::vector<double>& free_at, const ScheduleInput& input) {
  const int p = static_cast<int>(free_at.size());
  double makespan_s = 0;
  for (int s = 0; s < p; ++s) makespan_s = std::max(makespan_s, free_at[s]);
  out.makespan_s = makespan_s;
  out.stage_end_s = free_at;
  const double tolerance_s = 1e-9 * makespan_s;  // gaps below this are rounding, not bubbles
  out.peak_alive_micro_batches.assign(p, 0);
  out.idle.reserve(count_gaps(out.ops, begin, p, makespan_s, tolerance_s));
  IdleRecorder idle{out.idle, tolerance_s};
  if (!input.alive_weights.empty()) out.peak_alive_weight.assign(p, 0.0);
  for (int s = 0; s < p; ++s) {
    double peak_weight = 0;
    out.peak_alive_micro_batches[s] = sweep_stage(out, split_w, begin[s], begin[s + 1], s, idle, input.alive_weights, input.chunks,
                                                  peak_weight);
    if (!input.alive_weights.empty()) out.peak_alive_weight[s] = peak_weight;
  }
  out.bubble_fraction = makespan_s > 0 ? idle.idle_s / (p * makespan_s) : 0.0;
}

// ---------------------------------------------------------------------------------------------------

Errors validate(const ScheduleInput& in, Schedule kind) {
  Errors errors;
  auto add = [&](ErrorCode code, const char* path, std::string message) { errors.push_back({code, path, std::move(message)}); };
  const int p = in.stages, m = in.micro_batches, v = in.chunks;
  if (p < 1) add(ErrorCode::OutOfRange, k_path_stages, "pp = " + std::to_string(p) + " must be at least 1");
  if (m < 1) add(ErrorCode::OutOfRange, k_path_micro_batches, "micro-batches = " + std::to_string(m) + " must be at least 1");
  if (v < 1) add(ErrorCode::OutOfRange, k_path_chunks, "vpp = " + std::to_string(v) + " must be at least 1");
  const bool sizes_ok = p >= 1 && m >= 1 && v >= 1;

  if (sizes_ok) {
    // DualPipe's two chunks per stage are its two directions, not virtual stages of the plan.
    if (kind == Schedule::DualPipe && v != 2)
      add(ErrorCode::Incompatible, k_path_chunks,
          "dualpipe holds 2 chunks per stage (one per direction), got vpp = " + std::to_string(v));
    for (Error& e : schedule_rules(kind, p, kind == Schedule::DualPipe ? 1 : v, m)) errors.push_back(std::move(e));
  }

  if (sizes_ok && static_cast<double>(p) * v * m > static_cast<double>(k_max_pairs))  // double: no overflow
    add(ErrorCode::OutOfRange, k_path_micro_batches, too_many_pairs(p, v, m));
  if (sizes_ok && static_cast<long long>(in.times.size()) != static_cast<long long>(p) * v)
    add(ErrorCode::Incompatible, k_path_stages,
        "times has " + std::to_string(in.times.size()) +
            " entries, expected pp * vpp = " + std::to_string(static_cast<long long>(p) * v));

  // Durations come from the cost model, not from the plan: their paths point into ScheduleInput.
  // The path is only written for a broken value (this check runs on every simulation).
  auto check_duration = [&](double value_s, auto path) {
    if (!(value_s >= 0) || !std::isfinite(value_s))
      add(ErrorCode::OutOfRange, path().c_str(), "duration " + std::to_string(value_s) + " s must be finite and non-negative");
  };
  for (std::size_t i = 0; i < in.times.size(); ++i) {
    auto at = [i](const char* field) { return [i, field] { return "/times/" + std::to_string(i) + field; }; };
    check_duration(in.times[i].f_s, at("/f_s"));
    check_duration(in.times[i].b_s, at("/b_s"));
    check_duration(in.times[i].w_s, at("/w_s"));
  }
  check_duration(in.p2p_s, [] { return std::string("/p2p_s"); });
  if (!in.alive_weights.empty() && in.alive_weights.size() != in.times.size())
    add(ErrorCode::Incompatible, "/alive_weights",
        "alive_weights has " + std::to_string(in.alive_weights.size()) + " entries, expected one per entry of times (" +
            std::to_string(in.times.size()) + ")");
  for (std::size_t i = 0; i < in.alive_weights.size(); ++i)
    if (!(in.alive_weights[i] >= 0) || !std::isfinite(in.alive_weights[i]))
      add(ErrorCode::OutOfRange, ("/alive_weights/" + std::to_string(i)).c_str(), "a weight must be finite and non-negative");
  return errors;
}

}  // namespace

Errors schedule_rules(Schedule s, int pp, int vpp, long long m) {
  Errors errors;
  auto add = [&](const char* path, std::string message) { errors.push_back({ErrorCode::Incompatible, path, std::move(message)}); };
  auto n = [](long long v) { return std::to_string(v); };
  if (vpp > 1 && s != Schedule::Interleaved) add(k_path_chunks, "vpp = " + n(vpp) + " needs schedule 'interleaved'");
  if (s == Schedule::Interleaved && vpp < 2) add(k_path_chunks, "schedule 'interleaved' needs vpp ≥ 2 (vpp = 1 is plain 1f1b)");
  if (s == Schedule::Interleaved && m > 0 && pp > 0 && m < pp)
    add(k_path_micro_batches, "interleaved 1F1B needs at least pp = " + n(pp) + " micro-batches per step, got " + n(m));
  if (s == Schedule::DualPipe) {
    if (pp % 2 != 0) add(k_path_stages, "dualpipe needs an even pp, got " + n(pp));
    if (m > 0 && (m % 2 != 0 || m < 2LL * pp))
      add(k_path_micro_batches,
          "dualpipe needs an even number of micro-batches per step, at least 2 × pp = " + n(2LL * pp) + ", got " + n(m));
  }
  const long long chunks = s == Schedule::DualPipe ? 2 : std::max(vpp, 1);
  if (m > 0 && pp > 0 &&
      static_cast<double>(pp) * static_cast<double>(chunks) * static_cast<double>(m) > static_cast<double>(k_max_pairs))
    errors.push_back({ErrorCode::OutOfRange, k_path_micro_batches, too_many_pairs(pp, chunks, m)});
  return errors;
}

namespace {

// The simulation's topology, checked first; errors when the input is not a valid schedule.
Result<Topology> topology_of(const ScheduleInput& input) {
  Result<Topology> result;
  result.errors = validate(input, input.name);
  Topology& t = result.value;
  t.kind = input.name;
  t.p = input.stages;
  t.v = input.chunks;
  t.m = input.micro_batches;
  return result;
}

Errors deadlock(Schedule name, int stuck) {
  // Cannot happen for a valid generator; reported rather than asserted so a bug never hangs the UI.
  return {{ErrorCode::Incompatible, k_path_schedule,
           "schedule " + std::string(name_of(name)) + " deadlocked on stage " + std::to_string(stuck) + " (internal error)"}};
}

// The k-th op of stage s of GPipe, 1F1B, interleaved and ZB-H1 in closed form: the same order as their
// generators above (tests compare the two simulations on every schedule).
struct FormulaSource {
  const Topology& t;
  int g = 1;  // interleaved group size

  int warmup(int s) const {
    if (t.kind == Schedule::Interleaved) {
      const int total = t.m * t.v;
      const int w = (t.p - s - 1) * 2 + (t.v - 1) * g;
      return (t.m == t.p || w > total) ? total : w;
    }
    return std::min(t.p - s - 1, t.m);
  }
  std::size_t count(int) const {
    const std::size_t m = static_cast<std::size_t>(t.m);
    return t.kind == Schedule::ZbH1 ? 3 * m : 2 * m * static_cast<std::size_t>(t.v);
  }
  // Warm-up forwards, then forward/backward pairs, then the remaining backwards (1F1B's shape): the
  // index of the forward (is_forward) or backward among `total` of each.
  static void one_f_one_b(long long k, long long w, long long total, bool& is_forward, long long& index) {
    if (k < w) {
      is_forward = true, index = k;
    } else if (k < 2 * total - w) {
      is_forward = (k - w) % 2 == 0;
      index = is_forward ? w + (k - w) / 2 : (k - w) / 2;
    } else {
      is_forward = false, index = k - total;
    }
  }
  OpRef at(int s, std::size_t kk) const {
    const long long k = static_cast<long long>(kk), m = t.m;
    bool fwd = false;
    long long i = 0;
    switch (t.kind) {
      case Schedule::GPipe:
        if (k < m) return {OpKind::F, static_cast<int>(k), 0};
        return {OpKind::B, static_cast<int>(2 * m - 1 - k), 0};
      case Schedule::OneFOneB: one_f_one_b(k, warmup(s), m, fwd, i); return {fwd ? OpKind::F : OpKind::B, static_cast<int>(i), 0};
      case Schedule::Interleaved: {
        const long long v = t.v;
        one_f_one_b(k, warmup(s), m * v, fwd, i);
        const int mb = static_cast<int>((i / (g * v)) * g + i % g), c = static_cast<int>((i / g) % v);
        return {fwd ? OpKind::F : OpKind::B, mb, fwd ? c : static_cast<int>(v - 1 - c)};
      }
      case Schedule::ZbH1: {
        // Warm-up forwards; main iterations i < s of F, B and i ≥ s of F, B, W (W number i − s); the
        // cool-down's B, W pairs; the remaining W.
        const long long w = warmup(s), main = m - w, n1 = std::min<long long>(s, main), n2 = main - n1;
        if (k < w) return {OpKind::F, static_cast<int>(k), 0};
        long long r = k - w;
        long long it = 0, sub = 0;
        if (r < 2 * n1) {
          it = r / 2, sub = r % 2;
        } else if ((r -= 2 * n1) < 3 * n2) {
          it = n1 + r / 3, sub = r % 3;
        } else if ((r -= 3 * n2) < 2 * w) {
          if (r % 2 == 0) return {OpKind::B, static_cast<int>(main + r / 2), 0, -1, -1, true};
          return {OpKind::W, static_cast<int>(n2 + r / 2), 0};
        } else {
          return {OpKind::W, static_cast<int>(n2 + w + (r - 2 * w)), 0};
        }
        if (sub == 0) return {OpKind::F, static_cast<int>(w + it), 0};
        if (sub == 1) return {OpKind::B, static_cast<int>(it), 0, -1, -1, true};
        return {OpKind::W, static_cast<int>(it - s), 0};
      }
      case Schedule::DualPipe: break;  // not in closed form (ListSource)
    }
    return {};
  }
};

// The fast path's Sink: per stage the alive pairs and weights (as sweep_stage counts them) and the gaps.
struct SummarySink {
  const ScheduleInput& input;
  ScheduleResult& out;
  std::vector<int> alive;
  std::vector<double> alive_w;
  double gaps_s = 0;
  void timed(int s, std::size_t, const OpRef& op, double free_s, double start_s, double) {
    gaps_s += start_s - free_s;
    const bool weighed = !input.alive_weights.empty();
    auto weight = [&](int chunk) { return weighed ? input.alive_weights[static_cast<std::size_t>(s) * input.chunks + chunk] : 0.0; };
    if (op.kind == OpKind::F || op.kind == OpKind::FB) {
      out.peak_alive_micro_batches[s] = std::max(out.peak_alive_micro_batches[s], ++alive[s]);
      alive_w[s] += weight(op.chunk);
      if (weighed) out.peak_alive_weight[s] = std::max(out.peak_alive_weight[s], alive_w[s]);
    }
    if (op.kind == OpKind::FB || op.kind == OpKind::W || (op.kind == OpKind::B && !op.split)) {
      --alive[s];
      alive_w[s] -= weight(op.kind == OpKind::FB ? op.backward_chunk : op.chunk);
    }
  }
};

template <class Source>
Errors run_summary(const Topology& t, const ScheduleInput& input, const Source& source, ScheduleResult& out) {
  const int p = t.p;
  out.peak_alive_micro_batches.assign(p, 0);
  if (!input.alive_weights.empty()) out.peak_alive_weight.assign(p, 0.0);
  SummarySink sink{input, out, std::vector<int>(p, 0), std::vector<double>(p, 0.0)};
  Timeline<Source, SummarySink> timeline(t, input, source, sink, thread_scratch());
  const int stuck = timeline.run();
  if (stuck >= 0) return deadlock(input.name, stuck);
  out.stage_end_s = timeline.free_at;
  double makespan_s = 0, tails_s = 0;
  for (int s = 0; s < p; ++s) makespan_s = std::max(makespan_s, timeline.free_at[s]);
  for (int s = 0; s < p; ++s) tails_s += makespan_s - timeline.free_at[s];
  out.makespan_s = makespan_s;
  out.bubble_fraction = makespan_s > 0 ? (sink.gaps_s + tails_s) / (p * makespan_s) : 0.0;
  return {};
}

// Validates the input, then runs `body(topology, result)`, which fills the result or returns errors
// (then the result is left empty).
template <class Body>
Result<ScheduleResult> checked(const ScheduleInput& input, Body body) {
  Result<ScheduleResult> result;
  const Result<Topology> topology = topology_of(input);
  result.errors = topology.errors;
  if (!result.ok()) return result;
  result.value.name = input.name;
  result.errors = body(topology.value, result.value);
  if (!result.ok()) result.value = ScheduleResult{};
  return result;
}

}  // namespace

Result<ScheduleResult> simulate_schedule(const ScheduleInput& input) {
  return checked(input, [&](const Topology& t, ScheduleResult& out) -> Errors {
    std::vector<unsigned char> split_w;
    const std::vector<std::size_t> begin = generate_ops(t, out.ops, split_w);
    const ListSource source{out.ops, split_w, begin};
    ListSink sink{out.ops, begin};
    Timeline<ListSource, ListSink> timeline(t, input, source, sink, thread_scratch());
    const int stuck = timeline.run();
    if (stuck >= 0) return deadlock(input.name, stuck);
    summarize(out, split_w, begin, timeline.free_at, input);
    return {};
  });
}

double makespan_lower_bound_s(const ScheduleInput& in) {
  const int p = in.stages, v = in.chunks;
  if (p < 1 || v < 1 || in.micro_batches < 1 || in.times.size() != static_cast<std::size_t>(p) * v) return 0;
  const bool dual = in.name == Schedule::DualPipe;
  const bool backward_last = in.name == Schedule::GPipe || in.name == Schedule::OneFOneB || in.name == Schedule::Interleaved;
  auto at = [&](int s, int c) -> const OpTimes& { return in.times[static_cast<std::size_t>(s) * v + c]; };
  const double per_chunk_micro_batches = dual ? in.micro_batches / 2.0 : in.micro_batches;
  // Entries from the right (DualPipe's chunk 1): Σ_{k>s} f + (p − 1 − s)·p2p, summed from the last stage.
  std::vector<double> from_right;  // DualPipe only: the other schedules need no allocation (the search calls this per plan)
  if (dual) {
    from_right.assign(static_cast<std::size_t>(p), 0.0);
    for (int s = p - 2; s >= 0; --s) from_right[s] = from_right[s + 1] + at(s + 1, 1).f_s + in.p2p_s;
  }
  double bound = 0, head = 0, tail = 0;  // head, tail: Σ over the stages before s
  for (int s = 0; s < p; ++s) {
    double work = 0;
    for (int c = 0; c < v; ++c) work += at(s, c).f_s + at(s, c).b_s + at(s, c).w_s;
    const double first = dual ? std::min(head, from_right[s]) : head;
    bound = std::max(bound, first + per_chunk_micro_batches * work + (backward_last ? tail : 0.0));
    head += at(s, 0).f_s + in.p2p_s;
    tail += at(s, 0).b_s + at(s, 0).w_s + in.p2p_s;
  }
  return bound;
}

Result<ScheduleResult> simulate_schedule_summary(const ScheduleInput& input) {
  return checked(input, [&](const Topology& t, ScheduleResult& out) -> Errors {
    if (t.kind != Schedule::DualPipe)
      return run_summary(t, input, FormulaSource{t, t.kind == Schedule::Interleaved ? interleaved_group(t.p, t.m) : 1}, out);
    std::vector<Op> ops;
    std::vector<unsigned char> split_w;
    const std::vector<std::size_t> begin = generate_ops(t, ops, split_w);
    return run_summary(t, input, ListSource{ops, split_w, begin}, out);
  });
}

}  // namespace cutlab
