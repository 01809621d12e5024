#include "native/timeline.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "core/scene.h"
#include "native/format.h"

namespace cutlab::cli {

std::string gantt_text(const ScheduleResult& s, int columns) {
  TimelineLayout L;
  L.width = columns, L.label_width = 0, L.row_height = 1, L.row_gap = 0;
  const Scene sc = timeline_scene(s, L);
  const int rows = static_cast<int>(std::lround(sc.height - L.axis_height));
  std::vector<std::string> cells(rows, std::string(columns, ' '));
  std::vector<std::vector<int>> owner(rows, std::vector<int>(columns, 0));  // 0 empty, 1 idle, 2 op
  for (const SceneRect& r : sc.rects) {
    const int row = static_cast<int>(std::lround(r.y));
    if (row < 0 || row >= rows) continue;
    const int a = static_cast<int>(std::floor(r.x)), b = std::max(a + 1, static_cast<int>(std::lround(r.x + r.w)));
    const bool idle = r.kind == "idle";
    const char c = idle ? '.' : r.kind == "FB" ? 'X' : r.kind[0];
    for (int x = std::max(0, a); x < std::min(columns, b); ++x) {
      if (idle && owner[row][x] == 2) continue;  // an op sharing the column wins
      cells[row][x] = c;
      owner[row][x] = idle ? 1 : 2;
    }
  }
  std::string out;
  for (int r = 0; r < rows; ++r) {
    char label[24];
    std::snprintf(label, sizeof label, "stage %-3d ", r + 1);  // stages from 1, as everywhere people read them
    out += label + cells[r] + "\n";
  }
  out += "          0" + std::string(std::max(0, columns - 1 - static_cast<int>(human_time(s.makespan_s).size())), ' ') +
         human_time(s.makespan_s) + "\n";
  out += "          F forward · B backward (inputs) · W backward (weights) · X overlapped F&B · . idle\n";
  return out;
}

}  // namespace cutlab::cli
