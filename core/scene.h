// scene.h: geometry of the figures, computed once in the core and drawn by every front end
// (the CLI's SVG and text Gantt chart, the web page's canvas). Pure layout: no colours, no fonts;
// each item has a kind that the renderer maps to a style, and ids to look up details.
#pragma once
#include <string>
#include <vector>

#include "core/schedule.h"

namespace cutlab {

struct SceneRect {
  std::string kind;  // F, B, W, FB, idle, dp (exposed gradient reduction), optimizer, decode
  int stage = 0;
  int micro_batch = -1;           // -1 for idle (decode: the token)
  int chunk = 0;                  // model chunk (serving: the engine step)
  int backward_micro_batch = -1;  // FB: the micro-batch of the backward half
  double x = 0, y = 0, w = 0, h = 0;
  double start_s = 0, end_s = 0;
};

struct SceneLabel {
  std::string kind;  // stage, tick, title
  std::string text;
  double x = 0, y = 0;
  std::string anchor;  // start | middle | end
  int stage = -1;      // stage labels: the stage (0-based)
};

struct Scene {
  double width = 0, height = 0;
  // The timelines' geometry, which every rect follows: x = x0 + start_s·px_per_s, w = (end_s −
  // start_s)·px_per_s, y = stage·row_pitch, h = row_height (0: not set). The JSON sends these four
  // instead of a rect's x, y, w and h when every rect agrees with them (core/json_io.h).
  double x0 = 0, px_per_s = 0, row_pitch = 0, row_height = 0;
  std::vector<SceneRect> rects;
  std::vector<SceneLabel> labels;
  std::vector<SceneRect> grid;  // tick lines (kind "tick")
};

struct TimelineLayout {
  double width = 960;  // total, including the stage labels
  double height = 0;   // > 0: rows shrink or grow to fill it (row_height between 3 and 28)
  double row_height = 22;
  double row_gap = 4;
  double label_width = 64;
  double axis_height = 22;
};

// What a stage does after its last backward: exposed data-parallel communication, then the optimizer.
struct StageTail {
  double dp_s = 0;
  double optimizer_s = 0;
};

// Pipeline timeline: one row per stage, a rect per op and per idle interval, then (when `tails` is
// given, one per stage) each stage's exposed DP tail and the optimizer step; time ticks in round
// units of the whole step.
Scene timeline_scene(const ScheduleResult& s, const TimelineLayout& layout = {}, const std::vector<StageTail>& tails = {});

// Serving: `steps` engine steps of each of `micro_batches` micro-batches walking the stages (stage i
// busy for stage_s[i], a hand-off of send_s between stages): one micro-batch shows why PP alone does
// not cut decode latency; pp of them in flight keep every stage busy. Rects of kind "decode" carry the
// micro-batch in micro_batch and the step in chunk.
Scene serving_walk_scene(const std::vector<double>& stage_s, double send_s, int micro_batches, int steps,
                         const TimelineLayout& layout = {});

}  // namespace cutlab
