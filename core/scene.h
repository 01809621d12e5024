// scene.h: geometry of the figures, computed once in the core and drawn by every front end
// (the CLI's SVG and text Gantt chart, the web page's canvas). Pure layout: no colours, no fonts;
// each item has a kind that the renderer maps to a style, and ids to look up details.
#pragma once
#include <string>
#include <vector>

#include "core/schedule.h"

namespace cutlab {

struct SceneRect {
  std::string kind;       // F, B, W, FB, idle
  int stage = 0;
  int micro_batch = -1;   // -1 for idle
  int chunk = 0;
  double x = 0, y = 0, w = 0, h = 0;
  double start_s = 0, end_s = 0;
};

struct SceneLabel {
  std::string kind;       // stage, tick, title
  std::string text;
  double x = 0, y = 0;
  std::string anchor;     // start | middle | end
};

struct Scene {
  double width = 0, height = 0;
  std::vector<SceneRect> rects;
  std::vector<SceneLabel> labels;
  std::vector<SceneRect> grid;  // tick lines (kind "tick")
};

struct TimelineLayout {
  double width = 960;         // total, including the stage labels
  double row_height = 22;
  double row_gap = 4;
  double label_width = 64;
  double axis_height = 22;
};

// Pipeline timeline: one row per stage, a rect per op and per idle interval, time ticks in
// round units of the makespan.
Scene timeline_scene(const ScheduleResult& s, const TimelineLayout& layout = {});

}  // namespace cutlab
