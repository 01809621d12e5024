// Helpers of the figure tests: a config from JSON text (as the API reads it) and its estimate,
// and checks that hold for every figure.
#pragma once
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "core/api.h"
#include "core/estimate.h"
#include "core/figure.h"
#include "core/json_io.h"

namespace cutlab::test {

// The resolved config and its estimate, through the façade.
inline api::Evaluated evaluated(const std::string& text) {
  const api::Answer<api::Evaluated> a = api::evaluate(text);
  REQUIRE(a.ok());
  return a.result.value;
}

inline size_t count_kind(const Figure& f, const std::string& kind) {
  size_t n = 0;
  for (const FigureRect& r : f.rects) n += r.kind == kind;
  return n;
}

inline bool has_text(const Figure& f, const std::string& s) {
  for (const FigureText& t : f.texts)
    if (t.text.find(s) != std::string::npos) return true;
  return false;
}

// Every rect, line and text anchor lies inside the figure's width × height (half a pixel of slack
// for strokes).
inline void require_inside(const Figure& f) {
  const double e = 0.5;
  REQUIRE(f.width > 0);
  REQUIRE(f.height > 0);
  for (const FigureRect& r : f.rects) {
    INFO(r.kind << " at " << r.x << "," << r.y << " " << r.w << "×" << r.h << " in " << f.width << "×" << f.height);
    REQUIRE(r.w >= 0);
    REQUIRE(r.h >= 0);
    REQUIRE(r.x >= -e);
    REQUIRE(r.y >= -e);
    REQUIRE(r.x + r.w <= f.width + e);
    REQUIRE(r.y + r.h <= f.height + e);
  }
  for (const FigureLine& l : f.lines) {
    INFO(l.kind << " " << l.x1 << "," << l.y1 << " → " << l.x2 << "," << l.y2);
    for (double x : {l.x1, l.x2}) REQUIRE((x >= -e && x <= f.width + e));
    for (double y : {l.y1, l.y2}) REQUIRE((y >= -e && y <= f.height + e));
  }
  for (const FigureText& t : f.texts) {
    INFO(t.kind << " '" << t.text << "' at " << t.x << "," << t.y << " in " << f.width << "×" << f.height);
    REQUIRE((t.y >= -e && t.y <= f.height + e));
    // its extent as laid out (shortened to max_w by the renderers)
    double w = figure::measure_text(t.text, t.font_px, t.weight);
    if (t.max_w > 0) w = std::min(w, t.max_w);
    const double left = t.anchor == "start" ? t.x : t.anchor == "middle" ? t.x - w / 2 : t.x - w;
    REQUIRE(left >= -e);
    REQUIRE(left + w <= f.width + 1);
  }
}

}  // namespace cutlab::test
