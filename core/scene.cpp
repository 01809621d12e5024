#include "core/scene.h"

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

Scene timeline_scene(const ScheduleResult& s, const TimelineLayout& L) {
  Scene sc;
  int stages = static_cast<int>(s.peak_alive_micro_batches.size());
  for (const Op& op : s.ops) stages = std::max(stages, op.stage + 1);
  sc.width = L.width;
  sc.height = L.axis_height + stages * (L.row_height + L.row_gap);
  const double plot_w = L.width - L.label_width;
  const double scale = s.makespan_s > 0 ? plot_w / s.makespan_s : 0.0;
  auto row_y = [&](int stage) { return stage * (L.row_height + L.row_gap); };
  sc.rects.reserve(s.ops.size() + s.idle.size());
  for (const Interval& i : s.idle)
    sc.rects.push_back({"idle", i.stage, -1, 0, L.label_width + i.start_s * scale, row_y(i.stage),
                        (i.end_s - i.start_s) * scale, L.row_height, i.start_s, i.end_s});
  for (const Op& op : s.ops)
    sc.rects.push_back({op_kind_name(op.kind), op.stage, op.micro_batch, op.chunk, L.label_width + op.start_s * scale,
                        row_y(op.stage), (op.end_s - op.start_s) * scale, L.row_height, op.start_s, op.end_s});
  for (int st = 0; st < stages; ++st)
    sc.labels.push_back({"stage", "stage " + std::to_string(st), L.label_width - 8, row_y(st) + L.row_height * 0.7, "end"});
  const double step = tick_step(s.makespan_s, 8);
  const double axis_y = stages * (L.row_height + L.row_gap);
  for (double t = 0; t <= s.makespan_s * (1 + 1e-9) && step > 0; t += step) {
    const double x = L.label_width + t * scale;
    sc.grid.push_back({"tick", -1, -1, 0, x, 0, 0, axis_y, t, t});
    sc.labels.push_back({"tick", time_label(t, step), x, axis_y + L.axis_height * 0.75, "middle"});
  }
  return sc;
}

}  // namespace cutlab
