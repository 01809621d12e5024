// timeline.h: the pipeline timeline drawn from the core's scene (core/scene.h) as a terminal Gantt
// chart (the SVG is native/draw.h's pipeline figure).
#pragma once
#include <string>

#include "core/scene.h"
#include "core/schedule.h"

namespace cutlab::cli {

// One row per stage: F, B, W as letters, X for DualPipe's overlapped F&B, '·' idle.
std::string gantt_text(const ScheduleResult& s, int columns);

}  // namespace cutlab::cli
