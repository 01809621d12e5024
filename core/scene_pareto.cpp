#include "core/scene_pareto.h"

#include <algorithm>
#include <cmath>

namespace cutlab {

using figure::Pen;

double nice_step(double max, int ticks) {
  if (!(max > 0) || ticks < 1) return 1;
  const double raw = max / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (raw <= f * mag) return f * mag;
  return 10 * mag;
}

std::string serving_plan_label(const Plan& p, int batch) {
  std::string s = "TP" + std::to_string(p.tp);
  if (p.pp > 1) s += " · PP" + std::to_string(p.pp);
  if (p.ep > 1) s += " · EP" + std::to_string(p.ep);
  if (p.dp > 1) s += " · DP" + std::to_string(p.dp);
  return s + " · b" + std::to_string(batch);
}

namespace {

// A text's or mark's extent on the figure, pixels.
struct Box {
  double x0, y0, x1, y1;
};

bool overlaps(const Box& a, const Box& b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }

// Whether a line segment passes through a box (Liang and Barsky 1984, parametric clipping).
bool crosses(const FigureLine& l, const Box& b) {
  const double dx = l.x2 - l.x1, dy = l.y2 - l.y1;
  const double p[4] = {-dx, dx, -dy, dy}, q[4] = {l.x1 - b.x0, b.x1 - l.x1, l.y1 - b.y0, b.y1 - l.y1};
  double t0 = 0, t1 = 1;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

// Whether two segments cross (each one's ends on either side of the other's line; touching ends do
// not count, as the front's segments meet at its dots).
bool segments_cross(const FigureLine& a, const FigureLine& b) {
  auto side = [](double x1, double y1, double x2, double y2, double x, double y) {
    return (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1);
  };
  const double d1 = side(a.x1, a.y1, a.x2, a.y2, b.x1, b.y1), d2 = side(a.x1, a.y1, a.x2, a.y2, b.x2, b.y2);
  const double d3 = side(b.x1, b.y1, b.x2, b.y2, a.x1, a.y1), d4 = side(b.x1, b.y1, b.x2, b.y2, a.x2, a.y2);
  return d1 * d2 < 0 && d3 * d4 < 0;
}

// A label's ink with a pixel or two around it: ascent 0.8 and descent 0.25 of the font size.
Box text_box(const FigureText& t) {
  const double w = figure::measure_text(t.text, t.font_px, t.weight);
  const double x0 = t.anchor == "end" ? t.x - w : t.anchor == "middle" ? t.x - w / 2 : t.x;
  return {x0 - 2, t.y - 0.8 * t.font_px - 1, x0 + w + 2, t.y + 0.25 * t.font_px + 1};
}

// What a label in `b` would cover of the figure drawn so far: leaving the plot outweighs all, then
// another label or its leader line, then a front's dot or line, then the TPOT limit's dashed line or a
// mark of the cloud.
double cover(const Figure& f, const Box& b, const Box& plot) {
  double c = b.x0 < plot.x0 || b.x1 > plot.x1 || b.y0 < plot.y0 || b.y1 > plot.y1 ? 1000 : 0;
  for (const FigureRect& r : f.rects)
    if (overlaps(b, {r.x, r.y, r.x + r.w, r.y + r.h})) c += r.kind == "dot" ? 20 : r.kind == "mark" ? 1 : 0;
  for (const FigureLine& l : f.lines)
    if (crosses(l, b)) c += l.kind == "leader" ? 100 : l.kind == "front" ? 20 : l.kind == "limit" ? 5 : 0;
  for (const FigureText& t : f.texts)
    if ((t.kind == "point_label" || t.kind == "limit_label") && overlaps(b, text_box(t))) c += 100;
  return c;
}

// What a leader line would cross of the figure drawn so far: a front's dot or line, another label.
double cover_line(const Figure& f, const FigureLine& leader) {
  double c = 0;
  for (const FigureRect& r : f.rects)
    if (r.kind == "dot" && crosses(leader, {r.x, r.y, r.x + r.w, r.y + r.h})) c += 20;
  for (const FigureLine& l : f.lines)
    if ((l.kind == "front" || l.kind == "limit" || l.kind == "leader") && segments_cross(leader, l)) c += 20;
  for (const FigureText& t : f.texts)
    if (t.kind == "point_label" && crosses(leader, text_box(t))) c += 100;
  return c;
}

}  // namespace

std::string pareto_title(const Config& c) {
  const Workload& w = c.workload;
  const double rate = w.request_rate_per_s;
  return c.model.name + " on " + (rate > 0 ? "up to " : "") + std::to_string(c.cluster.gpus) + " × " + c.cluster.gpu +
         (rate > 0 ? " · " + figure::sig(rate) + " requests/s" : "") + " · " + lengths_text(w);
}

Figure pareto_scene(const ServingSearchResult& r, const ServingSearchOptions& limits, const std::string& title, double width,
                    const DisaggregatedSearchResult* disaggregated) {
  const std::vector<DisaggregatedPoint> none;
  const std::vector<DisaggregatedPoint>& split = disaggregated ? disaggregated->front : none;
  Figure f;
  f.view = "pareto";
  f.width = std::max(200.0, width);
  f.height = std::clamp(0.55 * f.width, 260.0, 460.0);
  Pen o{f};
  const bool narrow = f.width < 480;
  // With the disaggregated front, a legend under the subtitle names the two lines (one row, or two
  // when narrow), and the plot starts below it.
  const double legend_h = disaggregated ? figure::legend(f,
                                                         {{"co-located plans", "dp", "line", false, 2},
                                                          {"disaggregated: prefill pool → decode pool", "pp", "line", false, 2, true}},
                                                         12, 44, f.width - 24)
                                        : 0.0;
  const double left = narrow ? 46 : 64, right = 16, top = disaggregated ? 44 + legend_h + 26 : 66, bottom = 46;
  const double pw = f.width - left - right, ph = f.height - top - bottom;
  // A narrow frame drops the title's last " · " parts (the lengths, then the GPUs) rather than cut it.
  std::vector<std::string> titles = {title};
  for (size_t cut = title.rfind(" · "); cut != std::string::npos && cut > 0; cut = title.rfind(" · ", cut - 1))
    titles.push_back(title.substr(0, cut));
  o.text("title", figure::first_fit(titles, f.width - 24, 13, 600), 12, 20, 13, 600, "text", "start", f.width - 24);
  // At a request rate a plan may use fewer GPUs than searched (serving_search.h): per GPU of its own,
  // said where the frame has room.
  const bool at_rate = r.request_rate_per_s > 0;
  const bool saturated = !r.front_within_limits && !r.best.empty() && r.best.front().saturated;
  const bool limited = limits.max_ttft_s > 0 || limits.max_tpot_s > 0;
  const std::string front = r.front_within_limits ? "the Pareto front of the plans that " + std::string(at_rate ? "keep up" : "fit") +
                                                        (limited ? " and meet the limits" : "")
                            : saturated ? "no plan keeps up with the rate: the front of the plans that fit"
                                        : "no plan meets the limits: the front of the plans that fit";
  const std::string shortest = !r.front_within_limits ? front
                               : limited              ? "the front of the plans within the limits"
                                                      : "the front of the plans that " + std::string(at_rate ? "keep up" : "fit");
  o.text("subtitle",
         figure::first_fit({at_rate ? front + "; tokens/s per GPU of the GPUs each uses" : front, front, shortest}, f.width - 24, 11,
                           400),
         12, 36, 11, 400, "muted", "start", f.width - 24);
  double x_max = 0, y_max = 0;
  for (const ServingPoint& p : r.points)
    x_max = std::max(x_max, p.output_tokens_per_s_per_user), y_max = std::max(y_max, p.output_tokens_per_s_per_gpu);
  for (const ServingPoint& p : r.front)
    x_max = std::max(x_max, p.output_tokens_per_s_per_user), y_max = std::max(y_max, p.output_tokens_per_s_per_gpu);
  for (const DisaggregatedPoint& p : split)
    x_max = std::max(x_max, p.output_tokens_per_s_per_user), y_max = std::max(y_max, p.output_tokens_per_s_per_gpu);
  const double tpot_x = limits.max_tpot_s > 0 ? 1.0 / limits.max_tpot_s : 0.0;
  if (tpot_x > 0) x_max = std::max(x_max, tpot_x);
  const double xs = nice_step(x_max * 1.05, narrow ? 4 : 8), ys = nice_step(y_max * 1.05, 5);
  const double x_top = std::max(xs, std::ceil(x_max * 1.05 / xs) * xs), y_top = std::max(ys, std::ceil(y_max * 1.05 / ys) * ys);
  auto X = [&](double v) { return left + pw * v / x_top; };
  auto Y = [&](double v) { return top + ph * (1 - v / y_top); };
  for (double v = 0; v <= y_top * 1.0001; v += ys) {
    o.line("grid", left, Y(v), left + pw, Y(v), 1, "rule");
    o.text("tick", figure::compact(v), left - 6, Y(v) + 4, 10.5, 400, "muted", "end");
  }
  for (double v = 0; v <= x_top * 1.0001; v += xs) {
    o.line("grid", X(v), top, X(v), top + ph, 1, "rule");
    o.text("tick", figure::compact(v), X(v), top + ph + 15, 10.5, 400, "muted", "middle");
  }
  o.text("axis", "output tokens/s per user (1 / TPOT) →", left + pw, f.height - 8, 11, 400, "muted", "end", pw);
  o.text("axis", "output tokens/s per GPU ↑", left - (narrow ? 40 : 58), top - 12, 11, 400, "muted", "start");
  if (tpot_x > 0) {
    o.line("limit", X(tpot_x), top, X(tpot_x), top + ph, 1.5, "warn", true);
    o.text("limit_label", "TPOT ≤ " + figure::seconds(limits.max_tpot_s), X(tpot_x) + 4, top + 12, 10.5, 600, "warn", "start");
  }
  // The cloud: at most 4,096 marks of 4 px.
  for (const ServingPoint& p : r.points) {
    const bool on_front = std::any_of(r.front.begin(), r.front.end(), [&](const ServingPoint& q) {
      return q.batch == p.batch && q.plan.tp == p.plan.tp && q.plan.pp == p.plan.pp && q.plan.ep == p.plan.ep &&
             q.plan.dp == p.plan.dp;
    });
    if (!on_front)
      o.rect("mark", X(p.output_tokens_per_s_per_user) - 2, Y(p.output_tokens_per_s_per_gpu) - 2, 4, 4,
             p.within_limits ? "faint" : "rule");
  }
  for (size_t i = 1; i < r.front.size(); ++i) {
    const ServingPoint &a = r.front[i - 1], &b = r.front[i];
    // Straight segments between neighbours on the front (the published curves join their points so).
    o.line("front", X(a.output_tokens_per_s_per_user), Y(a.output_tokens_per_s_per_gpu), X(b.output_tokens_per_s_per_user),
           Y(b.output_tokens_per_s_per_gpu), 2, "dp");
  }
  for (size_t i = 0; i < r.front.size(); ++i) {
    const ServingPoint& p = r.front[i];
    FigureRect& d = o.rect("dot", X(p.output_tokens_per_s_per_user) - 4.5, Y(p.output_tokens_per_s_per_gpu) - 4.5, 9, 9, "dp");
    d.hit = "point";
    d.begin = static_cast<int>(i), d.end = static_cast<int>(i) + 1;
  }
  // A point of a front labelled where its label covers the least of what is drawn (cover()). Beside
  // it first: above it toward the middle of the plot (below it near the top), else below, beside,
  // over or under it, or on its outer side. Else higher up, in the empty side of the front (no plan
  // beats a point of it on both axes), with a leader line down to it. `what` goes first and is
  // dropped when the label does not fit half the plot (a phone's width) or finds no free place.
  const Box plot{left, top, left + pw, top + ph};
  auto label = [&](const auto& p, const std::string& what, const std::string& plan, const char* tone) {
    const double x = X(p.output_tokens_per_s_per_user), y = Y(p.output_tokens_per_s_per_gpu);
    const double in = x > left + pw / 2 ? -1 : 1;  // toward the middle
    const char *inward = in < 0 ? "end" : "start", *outward = in < 0 ? "start" : "end";
    struct Spot {
      double dx, dy;
      const char* anchor;
    };
    std::vector<Spot> beside = {{8 * in, -9, inward}, {8 * in, 18, inward},   {10 * in, 4, inward},  {0, -12, "middle"},
                                {0, 20, "middle"},    {-8 * in, -9, outward}, {-8 * in, 18, outward}};
    if (y < top + 24) std::swap(beside[0], beside[1]);
    std::vector<Spot> above;
    for (const double dy : {-30.0, -46.0, -62.0, -78.0, -94.0})
      for (const Spot s : {Spot{4 * in, dy, inward}, Spot{0, dy, "middle"}, Spot{-4 * in, dy, outward}}) above.push_back(s);
    FigureText best;
    FigureLine best_leader;
    double best_cover = 0;
    bool found = false;
    const auto try_spots = [&](const std::string& text, const std::vector<Spot>& spots, bool leader) {
      if (found && best_cover == 0) return;
      if (text != plan && figure::measure_text(text, 10.5, 600) > pw / 2) return;
      for (const Spot& s : spots) {
        FigureText t;
        t.kind = "point_label", t.text = text, t.x = x + s.dx, t.y = y + s.dy, t.anchor = s.anchor;
        t.font_px = 10.5, t.weight = 600, t.tone = tone, t.max_w = pw / 2;
        const Box b = text_box(t);
        FigureLine l;
        l.kind = leader ? "leader" : "";
        l.x1 = x, l.y1 = y - 6, l.x2 = std::clamp(x, b.x0 + 4, b.x1 - 4), l.y2 = b.y1, l.width = 1, l.tone = "muted";
        const double c = cover(f, b, plot) + (leader ? cover_line(f, l) : 0.0);
        if (!found || c < best_cover) best = t, best_leader = l, best_cover = c, found = true;
        if (c == 0) return;
      }
    };
    try_spots(what + plan, beside, false);
    try_spots(what + plan, above, true);
    try_spots(plan, beside, false);
    try_spots(plan, above, true);
    if (!best_leader.kind.empty()) f.lines.push_back(best_leader);
    f.texts.push_back(best);
  };
  // The disaggregated front: its line and dots in the pipeline hue.
  for (size_t i = 1; i < split.size(); ++i) {
    const DisaggregatedPoint &a = split[i - 1], &b = split[i];
    o.line("front", X(a.output_tokens_per_s_per_user), Y(a.output_tokens_per_s_per_gpu), X(b.output_tokens_per_s_per_user),
           Y(b.output_tokens_per_s_per_gpu), 2, "pp", true);
  }
  for (size_t i = 0; i < split.size(); ++i) {
    const DisaggregatedPoint& p = split[i];
    FigureRect& d = o.rect("dot", X(p.output_tokens_per_s_per_user) - 4, Y(p.output_tokens_per_s_per_gpu) - 4, 8, 8, "pp");
    d.hit = "disaggregated";
    d.begin = static_cast<int>(i), d.end = static_cast<int>(i) + 1;
  }
  // The two ends of the front, labelled with their plans, inside the plot; then the disaggregated
  // front's densest point where there is room for a third label.
  if (!r.front.empty()) {
    const ServingPoint &fast = r.front.front(), &dense = r.front.back();
    label(dense, "most per GPU: ", serving_plan_label(dense.plan, dense.batch), "text");
    if (r.front.size() > 1) label(fast, "most per user: ", serving_plan_label(fast.plan, fast.batch), "text");
  }
  if (!split.empty() && !narrow) label(split.back(), "", disaggregated_label(split.back()), "pp");
  if (r.front.empty()) o.text("empty", "no plan fits", left + pw / 2, top + ph / 2, 13, 600, "warn", "middle");
  return f;
}

}  // namespace cutlab
