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
    std::snprintf(label, sizeof label, "stage %-3d ", r);
    out += label + cells[r] + "\n";
  }
  out += "          0" + std::string(std::max(0, columns - 1 - static_cast<int>(human_time(s.makespan_s).size())), ' ') +
         human_time(s.makespan_s) + "\n";
  out += "          F forward · B backward (inputs) · W backward (weights) · X overlapped F&B · . idle\n";
  return out;
}

std::string timeline_svg(const ScheduleResult& s, const std::string& title, const std::vector<StageTail>& tails) {
  TimelineLayout L;
  L.width = 1100;
  const double top = 40, legend = 34;
  const Scene sc = timeline_scene(s, L, tails);
  const std::map<std::string, std::string> fill = {{"F", "#4e79a7"},  {"B", "#f28e2b"},         {"W", "#59a14f"},
                                                   {"FB", "#b07aa1"}, {"idle", "url(#hatch)"}, {"dp", "#9c755f"},
                                                   {"optimizer", "#555555"}};
  std::string o;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                "font-family=\"system-ui, sans-serif\" font-size=\"12\">\n",
                sc.width, sc.height + top + legend, sc.width, sc.height + top + legend);
  o += buf;
  o += "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
       "<rect width=\"6\" height=\"6\" fill=\"#f4f4f4\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#bbb\" stroke-width=\"2\"/>"
       "</pattern></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  std::snprintf(buf, sizeof buf, "<text x=\"%.0f\" y=\"24\" font-size=\"15\" font-weight=\"600\">%s — makespan %s, bubble %.1f%%</text>\n",
                L.label_width, xml_escape(title).c_str(), human_time(s.makespan_s).c_str(), 100 * s.bubble_fraction);
  o += buf;
  o += "<g transform=\"translate(0," + std::to_string(static_cast<int>(top)) + ")\">\n";
  for (const SceneRect& g : sc.grid) {
    std::snprintf(buf, sizeof buf, "<line x1=\"%.2f\" y1=\"0\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e3e3e3\"/>\n", g.x, g.x, g.h);
    o += buf;
  }
  for (const SceneRect& r : sc.rects) {
    std::snprintf(buf, sizeof buf, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"%s/>\n", r.x, r.y,
                  std::max(0.0, r.w), r.h, fill.at(r.kind).c_str(), r.kind == "idle" ? "" : " stroke=\"white\" stroke-width=\"0.5\"");
    o += buf;
    if (r.micro_batch >= 0 && r.w > 16) {
      std::snprintf(buf, sizeof buf, "<text x=\"%.2f\" y=\"%.2f\" fill=\"white\" font-size=\"10\" text-anchor=\"middle\">%d</text>\n",
                    r.x + r.w / 2, r.y + r.h * 0.68, r.micro_batch);
      o += buf;
    }
  }
  for (const SceneLabel& l : sc.labels) {
    std::snprintf(buf, sizeof buf, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" fill=\"#333\">%s</text>\n", l.x, l.y,
                  l.anchor.c_str(), xml_escape(l.text).c_str());
    o += buf;
  }
  o += "</g>\n";
  double x = L.label_width;
  const double y = top + sc.height + 16;
  // The legend names only the kinds drawn; B is the whole backward unless W is split from it.
  std::map<std::string, bool> drawn;
  for (const SceneRect& r : sc.rects) drawn[r.kind] = r.w > 0 || drawn[r.kind];
  std::vector<std::pair<std::string, std::string>> legend_items = {{"F", "forward"}};
  legend_items.push_back({"B", drawn["W"] ? "backward (inputs)" : "backward"});
  for (const auto& item : std::vector<std::pair<std::string, std::string>>{
           {"W", "backward (weights)"}, {"FB", "overlapped F&B"}, {"dp", "DP exposed"}, {"optimizer", "optimizer"}, {"idle", "idle"}})
    if (drawn[item.first]) legend_items.push_back(item);
  for (const auto& [kind, name] : legend_items) {
    std::snprintf(buf, sizeof buf, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\" fill=\"%s\" stroke=\"#999\" stroke-width=\"0.5\"/>"
                  "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", x, y - 11, fill.at(kind).c_str(), x + 19, y, xml_escape(name).c_str());
    o += buf;
    x += 34 + 7.0 * static_cast<double>(name.size());
  }
  o += "</svg>\n";
  return o;
}

}  // namespace cutlab::cli
