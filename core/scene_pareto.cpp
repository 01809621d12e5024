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
  o.text("subtitle",
         r.front_within_limits ? "the Pareto front of the plans that fit" +
                                     std::string(limits.max_ttft_s > 0 || limits.max_tpot_s > 0 ? " and meet the limits" : "")
                               : "no plan meets the limits: the front of the plans that fit",
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
  // A point of a front labelled beside it, inside the plot (toward the middle, below it near the top).
  // `what` goes first and is dropped when the label does not fit half the plot (a phone's width).
  auto label = [&](const auto& p, const std::string& what, const std::string& plan, const char* tone) {
    const double x = X(p.output_tokens_per_s_per_user), y = Y(p.output_tokens_per_s_per_gpu);
    const bool right_half = x > left + pw / 2;
    o.text("point_label", figure::first_fit({what + plan, plan}, pw / 2, 10.5, 600), right_half ? x - 8 : x + 8,
           y < top + 24 ? y + 18 : y - 9, 10.5, 600, tone, right_half ? "end" : "start", pw / 2);
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
  // Its densest point labelled where there is room for a second label beside the co-located ones.
  if (!split.empty() && !narrow) label(split.back(), "", disaggregated_label(split.back()), "pp");
  // The two ends of the front, labelled with their plans, inside the plot.
  if (!r.front.empty()) {
    const ServingPoint &fast = r.front.front(), &dense = r.front.back();
    label(dense, "most per GPU: ", serving_plan_label(dense.plan, dense.batch), "text");
    if (r.front.size() > 1) label(fast, "most per user: ", serving_plan_label(fast.plan, fast.batch), "text");
  }
  if (r.front.empty()) o.text("empty", "no plan fits", left + pw / 2, top + ph / 2, 13, 600, "warn", "middle");
  return f;
}

}  // namespace cutlab
