#include "native/draw.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/scene.h"
#include "core/scene_cuts.h"
#include "core/scene_placement.h"
#include "native/format.h"

namespace cutlab::cli {

namespace {

namespace fg = figure;

// ---- palette: the page's colours (web/palette.js) ----------------------------------------------
const std::map<std::string, std::string>& hues() {
  static const std::map<std::string, std::string> h = {{"tp", "#6741d9"},  {"pp", "#0b7d6e"},     {"cp", "#e8590c"},
                                                       {"ep", "#c2255c"},  {"dp", "#1971c2"},     {"etp", "#9c36b5"},
                                                       {"edp", "#4dabf7"}, {"dp_grad", "#1971c2"}};
  return h;
}
const std::map<std::string, std::string>& named() {
  static const std::map<std::string, std::string> n = {{"weights", "#343a40"},     {"grads", "#f0a800"},    {"optimizer", "#a0643a"},
                                                       {"activations", "#66a80f"}, {"kv", "#e03131"},       {"free", "#e9ecef"},
                                                       {"nvlink", "#2f9e44"},      {"scaleout", "#e67700"}, {"text", "#1f2328"},
                                                       {"muted", "#656d76"},       {"faint", "#8c959f"},    {"rule", "#d0d7de"},
                                                       {"warn", "#cf222e"},        {"panel", "#f6f8fa"},    {"white", "#ffffff"},
                                                       {"F", "#a3b8cc"},           {"B", "#3d5a76"},        {"W", "#f0a800"},
                                                       {"FB", "#6f8aa6"},          {"decode", "#a3b8cc"}};
  return n;
}

struct Rgb {
  double r = 0, g = 0, b = 0;
};
Rgb rgb_of(const std::string& hex) {
  const unsigned v = static_cast<unsigned>(std::stoul(hex.substr(1), nullptr, 16));
  return {double((v >> 16) & 255), double((v >> 8) & 255), double(v & 255)};
}
std::string css(Rgb c) {
  auto k = [](double x) { return static_cast<int>(std::lround(std::clamp(x, 0.0, 255.0))); };
  char buf[40];
  std::snprintf(buf, sizeof buf, "rgb(%d,%d,%d)", k(c.r), k(c.g), k(c.b));
  return buf;
}
// t in [0, 1]: 0 a light tint of the hue, 1 the hue darkened (palette.js tone()).
std::string tone(const std::string& hex, double t) {
  Rgb c = rgb_of(hex);
  if (t < 0.5) {
    const double k = 0.78 - 1.5 * t;
    return css({c.r + (255 - c.r) * k, c.g + (255 - c.g) * k, c.b + (255 - c.b) * k});
  }
  const double k = (t - 0.5) * 0.7;
  return css({c.r * (1 - k), c.g * (1 - k), c.b * (1 - k)});
}
// Rank i of n along an axis (palette.js rank()).
std::string rank(const std::string& hex, int i, int n) {
  if (n <= 1) return tone(hex, 0.5);
  return tone(hex, 0.12 + 0.76 * (static_cast<double>(i) / (n - 1)));
}
std::string alpha(const std::string& hex, double a) {
  const Rgb c = rgb_of(hex);
  char buf[48];
  std::snprintf(buf, sizeof buf, "rgba(%d,%d,%d,%g)", int(c.r), int(c.g), int(c.b), a);
  return buf;
}
// Ink readable on a fill (palette.js onFill()).
std::string on_fill(const std::string& fill) {
  Rgb c;
  if (fill[0] == '#') c = rgb_of(fill);
  else std::sscanf(fill.c_str(), "rgb(%lf,%lf,%lf)", &c.r, &c.g, &c.b);
  return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 150 ? "#1f2328" : "#ffffff";
}

std::string hue_of(const std::string& t) {
  auto it = hues().find(t);
  return it != hues().end() ? it->second : named().at("muted");
}
std::string color(const std::string& t, int index = -1, int count = 0) {
  if (t.empty()) return named().at("text");
  if (auto it = hues().find(t); it != hues().end()) return index >= 0 ? rank(it->second, index, count) : it->second;
  if (auto it = named().find(t); it != named().end()) return it->second;
  if (t == "shade") return tone(named().at("muted"), 0.9);
  return named().at("muted");
}

// ---- one SVG writer --------------------------------------------------------------------------
struct Style {
  std::string fill, stroke, under, band, band_color;
  double lw = 1, r = 0;
  std::string hatch;  // hatch colour ("" none)
  double hatch_step = 5, inset = 0;
  bool top = false, circle = false, exact = false, draw = true;
};

// kind → style, as web/figure.js STYLE.
Style style_of(const FigureRect& r) {
  Style s;
  const std::string& k = r.kind;
  const std::string frame = "rgba(31,35,40,0.35)", frame_light = "rgba(31,35,40,0.3)";
  const std::string dp = hues().at("dp");
  if (k == "region") s.draw = false;
  else if (k == "node") s.fill = named().at("panel"), s.stroke = named().at("rule"), s.r = 8;
  else if (k == "node_small") s.fill = named().at("panel"), s.stroke = named().at("rule"), s.r = 5;
  else if (k == "gpu") s.fill = "#fff", s.stroke = named().at("rule"), s.r = 5;
  else if (k == "stripe") s.fill = color(r.tone, r.tone_index, r.tone_count), s.r = 5, s.top = true;
  else if (k == "label_bg") s.fill = "#fff";
  else if (k == "tag_bg") s.fill = "rgba(255,255,255,0.85)";
  else if (k == "warn_pill") s.fill = "#ffebe9", s.stroke = named().at("warn"), s.r = 10;
  else if (k == "row_shade") s.fill = "#f8f9fa";
  else if (k == "dot") s.fill = "#fff", s.stroke = color(r.tone), s.lw = 1.5, s.circle = true;
  else if (k == "kind_box") s.fill = "#fff", s.stroke = named().at("rule"), s.r = 3;
  else if (k == "balancer") s.fill = "#fff", s.stroke = dp, s.lw = 1.5, s.r = 6;
  else if (k == "replica") s.under = "#fff", s.fill = alpha(dp, 0.06), s.stroke = dp, s.r = 5;
  else if (k == "replica_card")
    s.under = "#fff", s.fill = alpha(dp, r.tone_index == 0 ? 0.06 : 0.1 + 0.06 * r.tone_index), s.stroke = dp, s.r = 5;
  else if (k == "replica_stack")
    s.fill = tone(dp, r.tone_index == 0 ? 0.35 : 0.12 + 0.05 * r.tone_index), s.stroke = frame_light, s.r = 4;
  else if (k == "layer_tick") s.fill = "rgba(255,255,255,0.35)";
  else if (k == "seg_sep" || k == "slice_gap") s.fill = "#fff";
  else if (k == "selection") s.stroke = named().at("text"), s.lw = 1.5, s.exact = true;
  else if (k == "slice_shared") s.fill = color(r.tone, r.tone_index, r.tone_count), s.hatch = "rgba(255,255,255,0.55)";
  else if (k == "replicated") s.fill = tone(hue_of(r.tone), 0.15), s.hatch = "rgba(255,255,255,0.55)";
  else if (k == "matrix_frame") s.stroke = frame;
  else if (k == "expert_frame" || k == "bar_frame") s.stroke = frame_light;
  else if (k == "router")
    s.fill = tone(hue_of(r.tone), 0.08), s.stroke = "rgba(31,35,40,0.25)", s.hatch = alpha(hue_of(r.tone), 0.35), s.inset = 1;
  else if (k == "shared") s.fill = tone(hue_of(r.tone), 0.2), s.stroke = "rgba(31,35,40,0.25)";
  else if (k == "prompt") s.fill = tone(hue_of(r.tone), 0.3);
  else if (k == "decode") s.fill = tone(hue_of(r.tone), 0.7);
  else if (k == "legend_hatch") s.fill = "#fff", s.stroke = named().at("rule"), s.hatch = color(r.tone), s.hatch_step = 4, s.inset = 1;
  else if (k == "legend_band") s.fill = color(r.tone), s.band = "rgba(16,24,40,0.55)";
  else if (k == "legend_band2") s.fill = "#fff", s.stroke = named().at("rule"), s.band_color = color(r.tone);
  else if (k == "legend_ring") s.fill = "#fff", s.stroke = color(r.tone), s.lw = 2;
  else if (k == "idle") s.fill = "#fff", s.hatch = "#adb5bd";
  else if (k == "chunk_band") s.fill = "rgba(16,24,40,0.55)";
  else s.fill = color(r.tone, r.tone_index, r.tone_count);  // cells, slices, experts, memory parts, ops, …
  return s;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", std::round(v * 100) / 100);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

struct Writer {
  std::map<std::string, std::string> hatches;  // "colour|step" → pattern id
  std::string hatch(const std::string& colour, double step) {
    const std::string key = colour + "|" + num(step);
    auto it = hatches.find(key);
    if (it == hatches.end()) it = hatches.emplace(key, "h" + std::to_string(hatches.size())).first;
    return "url(#" + it->second + ")";
  }
  static std::string box(double x, double y, double w, double h, const std::string& extra) {
    return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.0, w)) + "\" height=\"" +
           num(std::max(0.0, h)) + "\"" + extra + "/>";
  }
  static std::string paint(const std::string& fill, const std::string& stroke, double lw) {
    std::string s = fill.empty() ? " fill=\"none\"" : " fill=\"" + fill + "\"";
    if (!stroke.empty()) s += " stroke=\"" + stroke + "\" stroke-width=\"" + num(lw) + "\"";
    return s;
  }
  std::string rect(const FigureRect& r) {
    const Style s = style_of(r);
    if (!s.draw) return "";
    if (s.circle)
      return "<circle cx=\"" + num(r.x + r.w / 2) + "\" cy=\"" + num(r.y + r.h / 2) + "\" r=\"" + num(r.w / 2) + "\"" +
             paint(s.fill, s.stroke, s.lw) + "/>";
    if (s.top) {
      const double rr = std::max(0.0, std::min({s.r, r.h, r.w / 2}));
      return "<path d=\"M" + num(r.x) + "," + num(r.y + r.h) + "V" + num(r.y + rr) + "Q" + num(r.x) + "," + num(r.y) + " " +
             num(r.x + rr) + "," + num(r.y) + "H" + num(r.x + r.w - rr) + "Q" + num(r.x + r.w) + "," + num(r.y) + " " +
             num(r.x + r.w) + "," + num(r.y + rr) + "V" + num(r.y + r.h) + "Z\" fill=\"" + s.fill + "\"/>";
    }
    std::string out;
    const std::string rx = s.r > 0 ? " rx=\"" + num(std::min({s.r, r.w / 2, r.h / 2})) + "\"" : "";
    if (!s.under.empty()) out += box(r.x, r.y, r.w, r.h, rx + " fill=\"" + s.under + "\"");
    if (s.r > 0) return out + box(r.x, r.y, r.w, r.h, rx + paint(s.fill, s.stroke, s.lw));
    if (!s.fill.empty()) out += box(r.x, r.y, r.w, r.h, " fill=\"" + s.fill + "\"");
    if (!s.hatch.empty())
      out += box(r.x + s.inset, r.y + s.inset, r.w - 2 * s.inset, r.h - 2 * s.inset, " fill=\"" + hatch(s.hatch, s.hatch_step) + "\"");
    if (!s.band.empty()) out += box(r.x, r.y, r.w, 4, " fill=\"" + s.band + "\"");
    if (!s.stroke.empty())
      out += s.exact ? box(r.x, r.y, r.w, r.h, paint("", s.stroke, s.lw))
                     : box(r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1, paint("", s.stroke, s.lw));
    if (!s.band_color.empty()) out += box(r.x, r.y, r.w, 4, " fill=\"" + s.band_color + "\"");
    return out;
  }
  static std::string line(const FigureLine& l) {
    const std::string c = color(l.tone);
    const bool arrow = l.kind == "arrow";
    const double len = std::max(1e-9, std::hypot(l.x2 - l.x1, l.y2 - l.y1)), ux = (l.x2 - l.x1) / len, uy = (l.y2 - l.y1) / len;
    const bool round = l.kind == "bus" || l.kind == "stub" || l.kind == "key_link";
    std::string s = "<line x1=\"" + num(l.x1) + "\" y1=\"" + num(l.y1) + "\" x2=\"" + num(arrow ? l.x2 - ux : l.x2) + "\" y2=\"" +
                    num(arrow ? l.y2 - uy : l.y2) + "\" stroke=\"" + c + "\" stroke-width=\"" + num(l.width) + "\"" +
                    (round ? " stroke-linecap=\"round\"" : "") + (l.dash ? " stroke-dasharray=\"4 4\"" : "") + "/>";
    if (arrow)
      s += "<path d=\"M" + num(l.x2) + "," + num(l.y2) + "L" + num(l.x2 - 6 * ux - 4 * uy) + "," + num(l.y2 - 6 * uy + 4 * ux) + "L" +
           num(l.x2 - 6 * ux + 4 * uy) + "," + num(l.y2 - 6 * uy - 4 * ux) + "Z\" fill=\"" + c + "\"/>";
    return s;
  }
  static std::string text(const FigureText& t) {
    const std::string s = t.max_w > 0 ? fg::fit_text(t.text, t.max_w, t.font_px, t.weight) : t.text;
    if (s.empty()) return "";
    const std::string fill = t.on_fill ? on_fill(color(t.tone, t.tone_index, t.tone_count))
                                       : color(t.tone, t.tone_index, t.tone_count);
    return "<text x=\"" + num(t.x) + "\" y=\"" + num(t.y) + "\" font-size=\"" + num(t.font_px) + "\"" +
           (t.weight != 400 ? " font-weight=\"" + std::to_string(t.weight) + "\"" : "") + " fill=\"" + fill + "\"" +
           (t.anchor != "start" ? " text-anchor=\"" + t.anchor + "\"" : "") + ">" + xml_escape(s) + "</text>";
  }
};

// ---- the pipeline view as a figure -------------------------------------------------------------
std::string pct(double f) { return f > 0 && f < 0.0005 ? "<0.1%" : fg::fixed(100 * f, 1) + "%"; }

}  // namespace

Figure pipeline_figure(const Resolved& resolved, const Estimate& estimate, double width) {
  const Config& c = resolved.config;
  const SceneInput e = scene_input(resolved, estimate);
  const double pad = 16, right = 76, top = 58, below = 34;
  const bool serve = e.serving;
  const Plan& p = c.plan;
  TimelineLayout L;
  L.width = std::max(200.0, std::round(width - 2 * pad - right));
  L.height = 440;
  Scene sc;
  if (serve) {
    sc = serving_walk_scene(e.inference.decode_stage_s, e.inference.pp_send_s, e.inference.micro_batches, 3, L);
  } else {
    std::vector<StageTail> tails;
    for (const StageTime& st : e.training.stages) tails.push_back({st.dp_exposed_s, st.optimizer_s});
    sc = timeline_scene(e.training.schedule, L, tails);
  }
  Figure f;
  f.view = "pipeline";
  f.width = width;
  fg::Pen o{f};
  int stages = 0;
  double row_h = 0, axis_y = 0;
  for (const SceneRect& r : sc.rects) stages = std::max(stages, r.stage + 1), row_h = r.h;
  for (const SceneRect& g : sc.grid) axis_y = g.y + g.h;
  // title and subtitle
  std::string title, sub;
  if (serve) {
    const InferenceEstimate& inf = e.inference;
    title = inf.micro_batches > 1 ? "Serving · " + std::to_string(inf.micro_batches) + " micro-batches in flight through " +
                                        std::to_string(p.pp) + " stages"
                                  : "Decode · one batch walks " + std::to_string(p.pp) + " stage" + (p.pp > 1 ? "s" : "") + " in turn";
    sub = "each stage idle " + pct(inf.stage_idle_fraction) + " of the time · TPOT " + fg::seconds(inf.tpot_s) + " · " +
          fg::sig(inf.output_tokens_per_s_per_user) + " tokens/s per user";
  } else {
    title = std::string(name_of(e.training.schedule.name)) + " · " + std::to_string(p.pp) + " stage" + (p.pp > 1 ? "s" : "") + " × " +
            fg::integer(e.mesh.num_micro_batches) + " micro-batches" + (p.vpp > 1 ? " × " + std::to_string(p.vpp) + " chunks" : "");
    sub = "bubble " + pct(e.training.schedule.bubble_fraction) + " of the pipeline (hatched) · makespan " +
          fg::seconds(e.training.schedule.makespan_s) + " · step " + fg::seconds(e.training.step_s);
  }
  const double tw = fg::measure_text(title, 13, 650);
  const bool one_line = fg::measure_text(sub, 12) <= width - 2 * pad - tw - 12;
  o.text("title", title, pad, 20, 13, 650);
  o.text("subtitle", sub, one_line ? pad + tw + 12 : pad, one_line ? 20 : 36, 12, 400, "muted", "start", width - 2 * pad);
  // rows, grid, bars
  for (int st = 0; st < stages; st += 2)
    o.rect("row_shade", pad - 4, top + st * (L.row_height + L.row_gap), width - 2 * pad + 8, row_h);
  for (const SceneRect& g : sc.grid) o.rect("grid", std::round(pad + g.x), top + g.y, 1, g.h + 4, "free");
  const double num_px = std::min(11.0, std::max(8.5, row_h - 8)), digit_w = fg::measure_text("0", num_px, 600);
  bool numbered = false;
  const bool several = serve && e.inference.micro_batches > 1;
  std::map<std::string, bool> kinds;
  bool chunks = false;
  for (const SceneRect& r : sc.rects) {
    kinds[r.kind] = true;
    const bool op = r.kind != "idle" && r.kind != "dp" && r.kind != "optimizer";
    const double w = r.kind == "idle" ? r.w : r.w >= 3 ? r.w - 0.5 : std::max(0.6, r.w);
    FigureRect& b = o.rect(r.kind == "idle" ? "idle" : "op", pad + r.x, top + r.y, w, r.h, r.kind);
    b.stage = r.stage;
    if (r.chunk > 0 && op && r.kind != "decode") {
      o.rect("chunk_band", pad + r.x, top + r.y, std::max(0.6, r.w - 0.5), std::max(2.0, r.h * 0.22));
      chunks = true;
    }
    // serving: the micro-batch when several are in flight, else the token (the decode step)
    const std::string n = std::to_string((serve && !several ? r.chunk : r.micro_batch) + 1);
    if (r.micro_batch >= 0 && r.w >= 13 && r.h >= 10 && static_cast<double>(n.size()) * digit_w <= r.w - 3) {
      FigureText& t = o.text("bar_number", n, pad + r.x + r.w / 2, top + r.y + r.h / 2 + num_px * 0.35, num_px, 600, r.kind, "middle");
      t.on_fill = true;
      numbered = true;
    }
  }
  o.rect("rule", pad + (sc.grid.empty() ? 0 : sc.grid[0].x), top + axis_y, sc.width - (sc.grid.empty() ? 0 : sc.grid[0].x), 1, "rule");
  // stage labels (from 1), ticks, and the right-hand column
  o.text("heading", serve ? "per token" : "in flight", width - pad, top - 8, 10, 700, "muted", "end");
  for (const SceneLabel& l : sc.labels) {
    if (l.kind == "stage") {
      o.text("stage_label", "stage " + std::to_string(l.stage + 1), pad + l.x, top + l.y, row_h >= 16 ? 11.5 : 10, 600, "pp",
             l.anchor);
      std::string v;
      if (serve && l.stage < static_cast<int>(e.inference.decode_stage_s.size())) v = fg::seconds(e.inference.decode_stage_s[l.stage]);
      else if (!serve && l.stage < static_cast<int>(e.training.schedule.peak_alive_micro_batches.size()))
        v = std::to_string(e.training.schedule.peak_alive_micro_batches[l.stage]) + (p.vpp > 1 ? " chunks" : "");
      if (!v.empty()) o.text("in_flight", v, width - pad, top + l.y, row_h >= 16 ? 10.5 : 9.5, 400, "muted", "end");
    } else {
      std::string s = l.text;
      if (const size_t sp = s.find(' '); sp != std::string::npos) s.replace(sp, 1, fg::kNbsp);
      o.text("tick", s, pad + l.x, top + l.y, 10.5, 400, "muted", l.anchor);
    }
  }
  o.text("axis", "time →", pad + sc.width, top + axis_y + 30, 10.5, 400, "faint", "end");
  // makespan (dashed) and the end of the step (solid) above the rows
  if (!serve && sc.grid.size() >= 2) {
    const SceneRect &g0 = sc.grid.front(), &g1 = sc.grid.back();
    const double k = (g1.x - g0.x) / (g1.start_s - g0.start_s);
    auto X = [&](double t) { return pad + g0.x + (t - g0.start_s) * k; };
    const double mx = std::round(X(e.training.schedule.makespan_s)) + 0.5, ex = std::round(X(e.training.step_s)) - 0.5;
    o.line("mark", mx, top - 4, mx, top + axis_y + 4, 1, "text", true);
    o.line("mark", ex, top - 4, ex, top + axis_y + 4, 1, "text");
    if (ex - mx > fg::measure_text("makespan", 10.5, 600) + 40) {
      o.text("mark_label", "makespan", mx - 4, top - 8, 10.5, 600, "text", "end");
      o.text("mark_label", "step", ex - 4, top - 8, 10.5, 600, "text", "end");
    } else {
      o.text("mark_label", "makespan | step", ex - 4, top - 8, 10.5, 600, "text", "end");
    }
  }
  // legend
  std::vector<fg::LegendItem> items;
  if (serve) {
    items = {{"decode of one token on a stage", "decode"}, {"idle (waiting for the token)", "", "hatch"}};
    if (numbered) items.push_back({several ? "numbers: micro-batch" : "numbers: token", "", "none"});
  } else {
    items = {{"F forward", "F"}, {kinds["W"] ? "B backward (inputs)" : "B backward", "B"}};
    if (kinds["W"]) items.push_back({"W weight gradients", "W"});
    if (kinds["FB"]) items.push_back({"F&B overlapped (DualPipe)", "FB"});
    if (chunks) items.push_back({"later model chunk (dark band)", "F", "band"});
    if (kinds["idle"]) items.push_back({"idle (bubble)", "faint", "hatch"});
    if (kinds["dp"]) items.push_back({"DP exposed", "dp"});
    if (kinds["optimizer"]) items.push_back({"optimizer step", "optimizer"});
    if (numbered) items.push_back({"numbers: micro-batch", "", "none"});
  }
  const double legend_y = top + axis_y + below + 12;
  o.rect("rule", pad, legend_y - 8, width - 2 * pad, 1, "rule");
  f.height = legend_y + fg::legend(f, items, pad, legend_y, width - 2 * pad);
  return f;
}

Figure view_figure(const Resolved& r, const Estimate& e, const std::string& view, double width, int layer, bool& ok) {
  ok = true;
  if (view == "cuts") return cuts_scene(r, e, width, layer);
  if (view == "placement") return placement_scene(r, e, width);
  if (view == "pipeline") return pipeline_figure(r, e, width);
  ok = false;
  return {};
}

std::string figure_svg(const Figure& f) {
  Writer w;
  std::string body;
  for (const FigureRect& r : f.rects) {
    const std::string s = w.rect(r);
    if (!s.empty()) body += s + "\n";
  }
  for (const FigureLine& l : f.lines) body += Writer::line(l) + "\n";
  for (const FigureText& t : f.texts) {
    const std::string s = Writer::text(t);
    if (!s.empty()) body += s + "\n";
  }
  std::string defs;
  for (const auto& [key, id] : w.hatches) {
    const size_t bar = key.rfind('|');
    const std::string d = num(std::stod(key.substr(bar + 1)) / std::sqrt(2.0));
    defs += "<pattern id=\"" + id + "\" width=\"" + d + "\" height=\"" + d +
            "\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"" +
            d + "\" stroke=\"" + key.substr(0, bar) + "\" stroke-width=\"1\"/></pattern>";
  }
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(f.width) + "\" height=\"" + num(f.height) + "\" viewBox=\"0 0 " +
         num(f.width) + " " + num(f.height) +
         "\" font-family=\"system-ui, -apple-system, Segoe UI, Roboto, Helvetica Neue, DejaVu Sans, Arial, sans-serif\" data-view=\"" +
         xml_escape(f.view) + "\">\n" + (defs.empty() ? "" : "<defs>" + defs + "</defs>\n") +
         "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n" + body + "</svg>\n";
}

}  // namespace cutlab::cli
