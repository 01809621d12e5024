#include "core/scene.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cutlab {

namespace {

// A round tick step (1, 2 or 5 × 10^k) giving about `target` ticks over `span`.
double tick_step(double span, int target) {
  if (!(span > 0)) return 1;
  const double raw = span / target, mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

std::string time_label(double s, double step) {
  char buf[32];
  if (step >= 1) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (step >= 0.1) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (step >= 1e-3) std::snprintf(buf, sizeof buf, "%.0f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  return buf;
}

}  // namespace

namespace {

// Rows, ticks and stage labels shared by both timelines, and the scene's geometry (x0, px_per_s, row_pitch).
void frame(Scene& sc, int stages, double span_s, TimelineLayout& L) {
  if (L.height > 0 && stages > 0) L.row_height = std::clamp((L.height - L.axis_height) / stages - L.row_gap, 3.0, 28.0);
  if (L.row_height < 8) L.row_gap = std::min(L.row_gap, 1.0);
  sc.width = L.width;
  sc.height = L.axis_height + stages * (L.row_height + L.row_gap);
  const double scale = span_s > 0 ? (L.width - L.label_width) / span_s : 0.0;
  sc.x0 = L.label_width, sc.px_per_s = scale, sc.row_pitch = L.row_height + L.row_gap, sc.row_height = L.row_height;
  const double axis_y = stages * (L.row_height + L.row_gap);
  const int label_every = L.row_height >= 10 ? 1 : static_cast<int>(std::ceil(10.0 / (L.row_height + L.row_gap)));
  for (int st = 0; st < stages; st += label_every)
    sc.labels.push_back({"stage", "stage " + std::to_string(st), L.label_width - 8,
                         st * (L.row_height + L.row_gap) + L.row_height * 0.5 + 4, "end", st});
  const double step = tick_step(span_s, 8);
  for (double t = 0; t <= span_s * (1 + 1e-9) && step > 0; t += step) {
    const double x = L.label_width + t * scale;
    sc.grid.push_back({"tick", -1, -1, 0, -1, x, 0, 0, axis_y, t, t});
    sc.labels.push_back({"tick", time_label(t, step), x, axis_y + L.axis_height * 0.75, "middle"});
  }
}

// A rect of a timeline from `a` to `b` seconds on `stage`, placed by the scene's geometry (frame()).
void add_rect(Scene& sc, const std::string& kind, int stage, int mb, int chunk, int bmb, double a, double b) {
  sc.rects.push_back(
      {kind, stage, mb, chunk, bmb, sc.x0 + a * sc.px_per_s, stage * sc.row_pitch, (b - a) * sc.px_per_s, sc.row_height, a, b});
}

}  // namespace

Scene timeline_scene(const ScheduleResult& s, const TimelineLayout& layout, const std::vector<StageTail>& tails) {
  Scene sc;
  TimelineLayout L = layout;
  int stages = static_cast<int>(s.peak_alive_micro_batches.size());
  for (const Op& op : s.ops) stages = std::max(stages, op.stage + 1);
  std::vector<double> end(stages, 0.0);
  for (const Op& op : s.ops) end[op.stage] = std::max(end[op.stage], op.end_s);
  double tail_end = s.makespan_s, optimizer = 0;
  for (size_t i = 0; i < tails.size() && static_cast<int>(i) < stages; ++i) {
    tail_end = std::max(tail_end, end[i] + tails[i].dp_s);
    optimizer = std::max(optimizer, tails[i].optimizer_s);
  }
  const double span = tail_end + optimizer;
  frame(sc, stages, span, L);
  auto rect = [&](const std::string& kind, int stage, int mb, int chunk, int bmb, double a, double b) {
    add_rect(sc, kind, stage, mb, chunk, bmb, a, b);
  };
  sc.rects.reserve(s.ops.size() + s.idle.size() + 3 * tails.size());  // a tail: DP, idle, optimizer
  for (const Interval& i : s.idle) rect("idle", i.stage, -1, 0, -1, i.start_s, i.end_s);
  for (const Op& op : s.ops)
    rect(op_kind_name(op.kind), op.stage, op.micro_batch, op.chunk, op.backward_micro_batch, op.start_s, op.end_s);
  for (size_t i = 0; i < tails.size() && static_cast<int>(i) < stages; ++i) {
    const int st = static_cast<int>(i);
    if (tails[i].dp_s > 0) rect("dp", st, -1, 0, -1, end[i], end[i] + tails[i].dp_s);
    const double idle_from = std::max(s.makespan_s, end[i] + tails[i].dp_s);
    if (idle_from < tail_end) rect("idle", st, -1, 0, -1, idle_from, tail_end);
    if (tails[i].optimizer_s > 0) rect("optimizer", st, -1, 0, -1, tail_end, tail_end + tails[i].optimizer_s);
  }
  return sc;
}

Scene serving_walk_scene(const std::vector<double>& stage_s, double send_s, int micro_batches, int steps,
                         const TimelineLayout& layout) {
  Scene sc;
  TimelineLayout L = layout;
  const int stages = static_cast<int>(stage_s.size());
  const int p = std::max(1, micro_batches);
  // Each stage serves the micro-batches in turn; a micro-batch enters a stage when the stage is free
  // and its hidden states have arrived from the one before; it enters stage 0 again when its last
  // stage is done (its next token depends on the one just sampled).
  struct Busy {
    int stage, mb, step;
    double a, b;
  };
  std::vector<Busy> busy;
  std::vector<double> stage_free(stages, 0.0), mb_ready(p, 0.0);
  for (int k = 0; k < steps; ++k)
    for (int j = 0; j < p; ++j) {
      double t = mb_ready[j];
      for (int st = 0; st < stages; ++st) {
        const double a = std::max(stage_free[st], t + (st > 0 ? send_s : 0.0)), b = a + stage_s[st];
        busy.push_back({st, j, k, a, b});
        stage_free[st] = t = b;
      }
      mb_ready[j] = t;
    }
  double span = 0;
  for (double f : stage_free) span = std::max(span, f);
  if (!(span > 0)) span = 1;  // nothing to draw (no sequence fits): an empty frame
  frame(sc, stages, span, L);
  auto rect = [&](const char* kind, int st, int mb, int step, double a, double b) { add_rect(sc, kind, st, mb, step, -1, a, b); };
  std::vector<double> last(stages, 0.0);
  for (const Busy& x : busy) {
    if (x.a > last[x.stage] * (1 + 1e-12) + 1e-18) rect("idle", x.stage, -1, 0, last[x.stage], x.a);
    rect("decode", x.stage, x.mb, x.step, x.a, x.b);
    last[x.stage] = x.b;
  }
  for (int st = 0; st < stages; ++st)
    if (last[st] < span * (1 - 1e-12)) rect("idle", st, -1, 0, last[st], span);
  return sc;
}

}  // namespace cutlab
