#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/figure.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

TEST_CASE("text is measured with DejaVu Sans advance widths, as Chromium measures it", "[figure]") {
  // Chromium, canvas measureText with the page's fonts (DejaVu Sans here): 125.279 px and 139.236 px.
  REQUIRE_THAT(figure::measure_text("stage 1 · layers 1–40", 12, 400), WithinRel(125.279, 0.01));
  REQUIRE_THAT(figure::measure_text("stage 1 · layers 1–40", 12, 700), WithinRel(139.236, 0.01));
  REQUIRE(figure::measure_text("", 12) == 0);
  REQUIRE(figure::measure_text("WWW", 10) > figure::measure_text("iii", 10));
}

TEST_CASE("a text too wide is shortened with an ellipsis to fit", "[figure]") {
  const std::string s = "NVLink inside nodes · TP 256 GiB per GPU per step";
  const std::string fit = figure::fit_text(s, 120, 11.5, 600);
  REQUIRE(fit.size() < s.size());
  REQUIRE(fit.substr(fit.size() - 3) == "\u2026");
  REQUIRE(figure::measure_text(fit, 11.5, 600) <= 120);
  REQUIRE(figure::fit_text(s, 1000, 11.5) == s);
  REQUIRE(figure::first_fit({"replica 12", "r12"}, 30, 11, 700) == "r12");
  REQUIRE(figure::first_fit({"replica 12", "r12"}, 100, 11, 700) == "replica 12");
}

TEST_CASE("numbers are written as the page's tables write them", "[figure]") {
  REQUIRE(figure::integer(16384) == "16,384");
  REQUIRE(figure::integer(1234567) == "1,234,567");
  REQUIRE(figure::integer(-2048) == "-2,048");
  REQUIRE(figure::fixed(-0.01, 1) == "0.0");
  REQUIRE(figure::bytes(8.21 * 1024 * 1024 * 1024) == "8.21\u202fGiB");
  REQUIRE(figure::bytes(256.0 * 1024 * 1024) == "256\u202fMiB");
  REQUIRE(figure::gib(57.9 * 1024 * 1024 * 1024, 1) == "57.9");
  REQUIRE(figure::seconds(0.862) == "862\u202fms");
  REQUIRE(figure::compact(28672) == "28.7k");
  REQUIRE(figure::short_count(1961777) == "1.96\u202fM");
  REQUIRE(figure::span(0, 8) == "0–7");
  REQUIRE(figure::span(5, 6) == "5");
  REQUIRE(figure::layers(0, 39) == "layers 1–40");
  REQUIRE(figure::layers(3, 3) == "layer 4");
  REQUIRE(figure::tokens(0, 2048) == "0–2k");
}

TEST_CASE("a legend wraps its items into rows of 18 px within the width", "[figure]") {
  Figure f;
  std::vector<figure::LegendItem> items;
  for (int i = 0; i < 12; ++i) items.push_back({"item number " + std::to_string(i), "tp"});
  const double h = figure::legend(f, items, 16, 100, 300);
  REQUIRE(h > 18);
  REQUIRE(std::fmod(h, 18.0) == 0);
  REQUIRE(f.texts.size() == 12);
  REQUIRE(f.rects.size() == 12);
  for (const FigureText& t : f.texts) REQUIRE(t.x + figure::measure_text(t.text, t.font_px) <= 16 + 300 + 1e-9);
}

TEST_CASE("to_json writes a figure with the field names as keys, ids only when set", "[figure][json]") {
  Figure f;
  f.view = "placement", f.level = "full", f.width = 300, f.height = 100;
  FigureRect r;
  r.kind = "gpu", r.x = 1.234, r.y = 2, r.w = 3, r.h = 4, r.hit = "gpu", r.rank = 9, r.replica = 0;
  f.rects.push_back(r);
  f.lines.push_back({"bus", 0, 1, 2, 3, 4.5, "nvlink", true});
  f.texts.push_back({"title", "GPU 9", 5, 6, "middle", 12, 700, 80, "pp"});
  const nlohmann::json j = to_json(f);
  REQUIRE(j["view"] == "placement");
  REQUIRE(j["level"] == "full");
  REQUIRE(j["rects"][0]["kind"] == "gpu");
  REQUIRE(j["rects"][0]["x"] == 1.23);
  REQUIRE(j["rects"][0]["rank"] == 9);
  REQUIRE(j["rects"][0]["replica"] == 0);
  REQUIRE_FALSE(j["rects"][0].contains("stage"));
  REQUIRE(j["lines"][0]["dash"] == true);
  REQUIRE(j["lines"][0]["width"] == 4.5);
  REQUIRE(j["texts"][0]["anchor"] == "middle");
  REQUIRE(j["texts"][0]["max_w"] == 80);
  REQUIRE(j["texts"][0]["tone"] == "pp");
}

TEST_CASE("figure_json escapes text and replaces bytes that are not UTF-8", "[figure][json]") {
  Figure f;
  f.view = "cuts", f.width = 200, f.height = 100;
  f.texts.push_back({"label", "a \"quoted\" \\ line\nbreak · 1–2 \xff end", 1, 2});
  const nlohmann::json j = nlohmann::json::parse(figure_json(f));
  REQUIRE(j["texts"][0]["text"] == "a \"quoted\" \\ line\nbreak · 1–2 \uFFFD end");
  REQUIRE(j["rects"].empty());
  REQUIRE(j["width"] == 200);
}
