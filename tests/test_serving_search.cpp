#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/api.h"
#include "core/figure.h"
#include "core/scene_pareto.h"
#include "core/serving_search.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

namespace {

ServingPoint pt(double per_user, double per_gpu, int batch) {
  ServingPoint p;
  p.output_tokens_per_s_per_user = per_user;
  p.output_tokens_per_s_per_gpu = per_gpu;
  p.batch = batch;
  return p;
}

// Llama 3 8B served on 8 H100s, prompt 1024, output 256 (in-flight, offline).
Config serving_config(const char* model, int gpus) {
  Config c = test::config(model, "dgx-h100", 1, 1, 1, 4096, 0);
  c.cluster.gpus = gpus;
  c.workload.mode = Mode::Infer;
  c.workload.prompt_len = 1024;
  c.workload.output_len = 256;
  return c;
}

bool dominated(const ServingPoint& p, const std::vector<ServingPoint>& all) {
  for (const ServingPoint& q : all)
    if (q.output_tokens_per_s_per_user >= p.output_tokens_per_s_per_user &&
        q.output_tokens_per_s_per_gpu >= p.output_tokens_per_s_per_gpu &&
        (q.output_tokens_per_s_per_user > p.output_tokens_per_s_per_user ||
         q.output_tokens_per_s_per_gpu > p.output_tokens_per_s_per_gpu))
      return true;
  return false;
}

}  // namespace

TEST_CASE("the Pareto front keeps the points no other point beats on both axes", "[serving_search]") {
  // By hand, most per user first: (100, 10) starts it; (60, 20) and (50, 30) each beat every point
  // before them per GPU; the second (50, 30) and (40, 25) do not; (10, 40) does.
  const std::vector<ServingPoint> points = {pt(100, 10, 1), pt(50, 30, 2), pt(60, 20, 3), pt(40, 25, 4), pt(50, 30, 5), pt(10, 40, 6)};
  const std::vector<ServingPoint> front = pareto_front(points);
  REQUIRE(front.size() == 4);
  const double user[] = {100, 60, 50, 10}, gpu[] = {10, 20, 30, 40};
  for (size_t i = 0; i < 4; ++i) {
    REQUIRE(front[i].output_tokens_per_s_per_user == user[i]);
    REQUIRE(front[i].output_tokens_per_s_per_gpu == gpu[i]);
  }
  REQUIRE(pareto_front(std::vector<ServingPoint>{}).empty());
}

TEST_CASE("nice_step picks 1-2-5 steps", "[serving_search]") {
  REQUIRE(nice_step(1234, 5) == 500.0);  // 246.8 per interval → 500
  REQUIRE(nice_step(100, 5) == 20.0);    // 20 exactly
  REQUIRE(nice_step(0.9, 4) == 0.5);     // 0.225 → 0.5
  REQUIRE(serving_plan_label(
              [] {
                Plan p;
                p.tp = 4;
                p.pp = 2;
                p.dp = 1;
                return p;
              }(),
              64) == "TP4 · PP2 · b64");
}

TEST_CASE("the serving search ranks fitting plans by tokens/s per GPU, each as evaluate() sees it", "[serving_search]") {
  const Config c = serving_config("llama3-8b", 8);
  const Result<ServingSearchResult> r = search_serving(c, {5, 0, 0, 2048, 20000});
  REQUIRE(r.ok());
  const ServingSearchResult& s = r.value;
  // tp ∈ {1, 2, 4, 8} × pp ∈ {1, 2, 4, 8} with tp·pp | 8: 10 plans × at most 12 batches (1 … 2048).
  REQUIRE(s.candidates <= 120);
  REQUIRE(s.candidates >= 10);
  REQUIRE(s.valid <= s.candidates);
  REQUIRE(s.fitting <= s.valid);
  REQUIRE(s.within_limits == s.fitting);  // no limits
  REQUIRE(s.best.size() == 5);
  for (size_t i = 0; i < s.best.size(); ++i) {
    const ServingPoint& p = s.best[i];
    REQUIRE(p.fits);
    REQUIRE(p.within_limits);
    if (i > 0) REQUIRE(p.output_tokens_per_s_per_gpu <= s.best[i - 1].output_tokens_per_s_per_gpu);
    REQUIRE(p.plan.tp * p.plan.pp * p.plan.ep * p.plan.dp == 8);
    Config again = c;
    again.plan = p.plan;
    again.workload.batch = p.batch;
    const Result<Estimate> e = evaluate(again);
    REQUIRE(test::serving(e));
    REQUIRE_THAT(test::serving(e)->serving.output_tokens_per_s_per_gpu, WithinRel(p.output_tokens_per_s_per_gpu, 1e-12));
    REQUIRE_THAT(test::serving(e)->serving.tpot_s, WithinRel(p.tpot_s, 1e-12));
  }
  // The front: no fitting point beats one of its points on both axes; per GPU rises as per user falls.
  REQUIRE(s.front.size() >= 2);
  for (size_t i = 0; i < s.front.size(); ++i) {
    REQUIRE_FALSE(dominated(s.front[i], s.points));
    if (i > 0) {
      REQUIRE(s.front[i].output_tokens_per_s_per_user < s.front[i - 1].output_tokens_per_s_per_user);
      REQUIRE(s.front[i].output_tokens_per_s_per_gpu > s.front[i - 1].output_tokens_per_s_per_gpu);
    }
  }
  // The best plan per GPU ends the front.
  REQUIRE(s.front.back().output_tokens_per_s_per_gpu == s.best.front().output_tokens_per_s_per_gpu);
}

TEST_CASE("latency limits filter the ranking and the front", "[serving_search]") {
  const Config c = serving_config("llama3-8b", 8);
  const ServingSearchResult all = search_serving(c).value;
  // A TPOT limit halfway along the front's range of TPOT.
  const double limit = 0.5 * (all.front.front().tpot_s + all.front.back().tpot_s);
  ServingSearchOptions o;
  o.max_tpot_s = limit;
  const ServingSearchResult s = search_serving(c, o).value;
  REQUIRE(s.within_limits > 0);
  REQUIRE(s.within_limits < s.fitting);
  REQUIRE(s.front_within_limits);
  for (const ServingPoint& p : s.best) REQUIRE(p.tpot_s <= limit);
  for (const ServingPoint& p : s.front) REQUIRE(p.tpot_s <= limit);
  // Ranked under the limit, the best per GPU is at most the unlimited best.
  REQUIRE(s.best.front().output_tokens_per_s_per_gpu <= all.best.front().output_tokens_per_s_per_gpu);
  // A limit nothing meets: the plans closest to it, and the front of every fitting point.
  o.max_tpot_s = 1e-6;
  const ServingSearchResult none = search_serving(c, o).value;
  REQUIRE(none.within_limits == 0);
  REQUIRE_FALSE(none.front_within_limits);
  REQUIRE(none.front.size() == all.front.size());
  for (size_t i = 1; i < none.best.size(); ++i) REQUIRE(none.best[i].tpot_s >= none.best[i - 1].tpot_s);
}

TEST_CASE("with a request rate, a batch past what the rate keeps in flight is tried again only while requests wait",
          "[serving_search]") {
  Config c = serving_config("llama3-8b", 8);
  c.workload.request_rate_per_s = 2;
  const ServingSearchResult s = search_serving(c).value;
  REQUIRE(s.fitting > 0);
  // Two points of one plan whose concurrency the rate limits: the smaller batch left a request
  // waiting over 1% of its TTFT for a slot, which a larger batch shortens.
  for (size_t i = 0; i < s.points.size(); ++i)
    for (size_t j = i + 1; j < s.points.size(); ++j) {
      const ServingPoint &a = s.points[i], &b = s.points[j];
      const bool same_plan = a.plan.tp == b.plan.tp && a.plan.pp == b.plan.pp && a.plan.ep == b.plan.ep && a.plan.dp == b.plan.dp;
      if (!same_plan || a.concurrency_limit != ConcurrencyLimit::RequestRate || b.concurrency_limit != ConcurrencyLimit::RequestRate)
        continue;
      Config again = c;
      again.plan = a.batch < b.batch ? a.plan : b.plan;
      again.cluster.gpus = a.gpus;  // at a rate a plan may use fewer GPUs than searched
      again.workload.batch = std::min(a.batch, b.batch);
      const Result<Estimate> e = evaluate(again);
      REQUIRE(test::serving(e));
      REQUIRE(test::serving(e)->serving.prefill.queue_s > 0.01 * test::serving(e)->serving.ttft_s);
    }
  // 2 requests/s of 256 output tokens: 512 output tokens/s in all, on every plan that keeps up.
  for (const ServingPoint& p : s.points)
    if (p.concurrency_limit == ConcurrencyLimit::RequestRate) REQUIRE_THAT(p.output_tokens_per_s_total, WithinRel(512.0, 1e-6));
}

TEST_CASE("an MoE model's serving search tries attention DP with expert parallel (tp 1, ep n)", "[serving_search]") {
  Config c = serving_config("mixtral-8x22b", 8);
  const ServingSearchResult s = search_serving(c, {1000, 0, 0, 2048, 20000}).value;
  bool dep = false;
  for (const ServingPoint& p : s.points) dep = dep || (p.plan.tp == 1 && p.plan.ep == 8);
  REQUIRE(dep);
}

TEST_CASE("serving search inputs are checked at their paths, too little memory is a result", "[serving_search]") {
  Config c = serving_config("llama3-8b", 8);
  c.workload.mode = Mode::Train;
  REQUIRE(search_serving(c).errors.at(0).path == "/workload/mode");
  c = serving_config("llama3-8b", 0);
  REQUIRE(search_serving(c).errors.at(0).path == "/cluster/gpus");
  c = serving_config("llama3-8b", 8);
  ServingSearchOptions o;
  o.max_ttft_s = -1;
  REQUIRE(search_serving(c, o).errors.at(0).path == "/search/max_ttft_ms");
  c.workload.output_len = 0;  // no plan serves it: said once, at its path
  REQUIRE(search_serving(c).errors.at(0).path == "/workload/output_len");
  // Llama 3 405B in bf16 (810 GB of weights) on one H100: nothing fits, and that is an answer.
  c = serving_config("llama3-405b", 1);
  const Result<ServingSearchResult> r = search_serving(c);
  REQUIRE(r.ok());
  REQUIRE(r.value.fitting == 0);
  REQUIRE(r.value.best.empty());
  REQUIRE(r.value.front.empty());
}

TEST_CASE("serving_search_json answers with the result and the Pareto figure", "[serving_search][api]") {
  const std::string cfg =
      R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":8},"workload":{"mode":"infer","prompt_len":1024,"output_len":256}})";
  const nlohmann::json j = nlohmann::json::parse(api::serving_search_json(cfg, 3, 0, 20, 800, false));
  REQUIRE(j["ok"] == true);
  REQUIRE(j["result"]["best"].size() == 3);
  REQUIRE(j["result"]["gpus"] == 8);
  REQUIRE(j["result"]["request_rate_per_s"] == 0);
  REQUIRE(j["result"]["best"][0]["gpus"] == 8);
  REQUIRE_THAT(j["result"]["max_tpot_s"].get<double>(), WithinRel(0.020, 1e-12));
  REQUIRE(j["result"]["figure"]["view"] == "pareto");
  size_t dots = 0;
  for (const auto& r : j["result"]["figure"]["rects"]) dots += r.value("hit", "") == "point";
  REQUIRE(dots == j["result"]["front"].size());
  const nlohmann::json bad = nlohmann::json::parse(api::serving_search_json(cfg, 3, 0, 0, 50, false));
  REQUIRE(bad["ok"] == false);
  REQUIRE(bad["errors"][0]["path"] == "/width");
}

TEST_CASE("at a request rate the search finds the fewest GPUs that meet the limits, then the shortest latency", "[serving_search]") {
  // Llama 3 8B on up to 8 H100s at 18 requests/s of 1024/256, TPOT ≤ 5 ms: every plan that keeps up
  // serves them all, 18 × 256 = 4,608 output tokens/s, that is 4,608 / g per GPU on g GPUs, so the
  // ranking is by the fewest GPUs, then by end-to-end latency.
  Config c = serving_config("llama3-8b", 8);
  c.workload.request_rate_per_s = 18;
  const Result<ServingSearchResult> r = search_serving(c, {8, 0, 0.005, 2048, 20000});
  REQUIRE(r.ok());
  const ServingSearchResult& s = r.value;
  REQUIRE(s.gpus == 8);
  REQUIRE(s.request_rate_per_s == 18);
  REQUIRE(s.best.size() == 8);
  for (size_t i = 0; i < s.best.size(); ++i) {
    const ServingPoint& p = s.best[i];
    INFO(serving_plan_label(p.plan, p.batch));
    REQUIRE(p.within_limits);
    REQUIRE(p.tpot_s <= 0.005);
    REQUIRE(p.gpus == p.plan.tp * p.plan.pp * p.plan.ep * p.plan.dp);
    REQUIRE_THAT(p.output_tokens_per_s_total, WithinRel(4608.0, 1e-9));
    REQUIRE_THAT(p.output_tokens_per_s_per_gpu, WithinRel(4608.0 / p.gpus, 1e-9));
    if (i > 0) {
      REQUIRE(p.gpus >= s.best[i - 1].gpus);
      if (p.gpus == s.best[i - 1].gpus) REQUIRE(p.e2e_latency_s >= s.best[i - 1].e2e_latency_s);
    }
  }
  // Fewer than 8: the other GPUs idle. Nothing on fewer GPUs meets the limits, and every mesh that
  // meets them on 8 GPUs was tried on fewer: the bisection's last failing count, one replica fewer
  // than its fewest that meet them (or none below one replica).
  const int fewest = s.best.front().gpus;
  REQUIRE(fewest < 8);
  for (const ServingPoint& p : s.points)
    if (p.gpus < fewest) REQUIRE_FALSE(p.within_limits);
  for (const ServingPoint& p : s.points) {
    if (!p.within_limits) continue;
    int least = p.gpus;
    for (const ServingPoint& q : s.points)
      if (q.within_limits && q.plan.tp == p.plan.tp && q.plan.pp == p.plan.pp && q.plan.ep == p.plan.ep)
        least = std::min(least, q.gpus);
    const int mesh = p.plan.tp * p.plan.pp * p.plan.ep;
    if (least == mesh) continue;
    bool below = false;
    for (const ServingPoint& q : s.points)
      below = below || (q.plan.tp == p.plan.tp && q.plan.pp == p.plan.pp && q.plan.ep == p.plan.ep && q.gpus == least - mesh);
    INFO(serving_plan_label(p.plan, p.batch) << " meets the limits on " << least << " GPUs at the fewest");
    REQUIRE(below);
  }
  // On all 8 GPUs TP 8 at batch 16 holds 14.5 of its 16 slots busy and a request waits long for one
  // (Erlang C); at batch 32 it waits almost nothing, so the search doubles the batch past the 16 the
  // rate keeps in flight.
  const ServingPoint *b16 = nullptr, *b32 = nullptr;
  for (const ServingPoint& p : s.points) {
    if (p.plan.tp == 8 && p.batch == 16) b16 = &p;
    if (p.plan.tp == 8 && p.batch == 32) b32 = &p;
  }
  REQUIRE(b16 != nullptr);
  REQUIRE(b32 != nullptr);
  REQUIRE(b16->concurrency_limit == ConcurrencyLimit::RequestRate);
  REQUIRE(b32->ttft_s < 0.5 * b16->ttft_s);
  // Offline every plan uses all the GPUs.
  c.workload.request_rate_per_s = 0;
  for (const ServingPoint& p : search_serving(c).value.points) REQUIRE(p.gpus == 8);
}

TEST_CASE("at a request rate a mesh need not divide the GPUs: TP 8 on 8 of 12", "[serving_search]") {
  // TPOT ≤ 2.8 ms at 10 requests/s of 1024/256 takes TP 8 (2.69 ms; three TP 4 replicas on all 12
  // GPUs take 2.92 ms); 8 does not divide 12, so TP 8 was never tried on 12 GPUs. Now it runs on 8 of them, 2,560 / 8 = 320
  // output tokens/s per GPU, and ranks first.
  Config c = serving_config("llama3-8b", 12);
  c.workload.request_rate_per_s = 10;
  const ServingSearchResult s = search_serving(c, {5, 0, 0.0028, 2048, 20000}).value;
  REQUIRE(s.within_limits > 0);
  const ServingPoint& first = s.best.front();
  REQUIRE(first.plan.tp == 8);
  REQUIRE(first.gpus == 8);
  REQUIRE_THAT(first.output_tokens_per_s_per_gpu, WithinRel(320.0, 1e-9));
  REQUIRE(first.tpot_s <= 0.0028);
  // Offline the GPUs are filled: every mesh divides 12.
  c.workload.request_rate_per_s = 0;
  for (const ServingPoint& p : search_serving(c).value.points) REQUIRE(12 % (p.plan.tp * p.plan.pp * p.plan.ep) == 0);
}

TEST_CASE("a plan that cannot keep up with the request rate meets no limit", "[serving_search]") {
  // 200 requests/s of 1024/256 on 8 H100s would be 200 × 256 / 8 = 6,400 output tokens/s per GPU of
  // Llama 3 8B; no plan serves that many, so every one is saturated: its queue grows without bound and
  // its TTFT with it, though the TTFT before the wait is under the 500 ms limit. The list is then the
  // plans that serve the most, each below 200 requests/s.
  Config c = serving_config("llama3-8b", 8);
  c.workload.request_rate_per_s = 200;
  ServingSearchOptions o;
  o.max_ttft_s = 0.5;
  const ServingSearchResult s = search_serving(c, o).value;
  REQUIRE(s.fitting > 0);
  REQUIRE(s.within_limits == 0);
  REQUIRE(!s.front_within_limits);
  REQUIRE(!s.best.empty());
  for (size_t i = 0; i < s.best.size(); ++i) {
    REQUIRE(s.best[i].saturated);
    REQUIRE(s.best[i].ttft_s < 0.5);
    REQUIRE(s.best[i].requests_per_s < 200);
    REQUIRE(s.best[i].output_tokens_per_s_per_gpu < 6400);
    if (i > 0) REQUIRE(s.best[i].output_tokens_per_s_per_gpu <= s.best[i - 1].output_tokens_per_s_per_gpu);
  }
  const nlohmann::json j = nlohmann::json::parse(api::serving_search_json(
      R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":8},"workload":{"mode":"infer","prompt_len":1024,"output_len":256,"request_rate_per_s":200}})",
      3, 500, 0, 0, false));
  REQUIRE(j["ok"] == true);
  REQUIRE(j["result"]["best"][0]["saturated"] == true);
  REQUIRE(j["result"]["best"][0]["within_limits"] == false);
}

TEST_CASE("the Pareto figure's end labels cover no dot of the front and no segment of its line", "[serving_search][api]") {
  // Llama 3 70B's front ends in five dots within 20 tokens/s per user: beside its last dot, above it
  // toward the middle as before, "most per user: TP8 · b1" lay on its neighbours. Each label's ink
  // (its measured width from its anchor, 10.5 px type: 9 px above the baseline, 3 below) is checked
  // against the dots' squares and against 400 points along each segment of the front.
  const std::string cfg = R"({"model":"llama3-70b","cluster":{"preset":"dgx-h100","gpus":8},
    "workload":{"mode":"infer","prompt_len":2048,"output_len":512}})";
  for (const int width : {340, 600, 800, 1100}) {
    const nlohmann::json fig = nlohmann::json::parse(api::serving_search_json(cfg, 3, 0, 0, width, false))["result"]["figure"];
    size_t labels = 0;
    for (const auto& t : fig["texts"]) {
      if (t["kind"] != "point_label") continue;
      ++labels;
      const double w = figure::measure_text(t["text"], t["font_px"], t["weight"]), x = t["x"], y = t["y"];
      const double x0 = t["anchor"] == "end" ? x - w : t["anchor"] == "middle" ? x - w / 2 : x, x1 = x0 + w, y0 = y - 9, y1 = y + 3;
      INFO(width << " px: " << t["text"].get<std::string>() << " at " << x0 << "–" << x1 << ", " << y0 << "–" << y1);
      for (const auto& r : fig["rects"])
        if (r["kind"] == "dot")
          CHECK_FALSE((r["x"].get<double>() < x1 && x0 < r["x"].get<double>() + r["w"].get<double>() && r["y"].get<double>() < y1 &&
                       y0 < r["y"].get<double>() + r["h"].get<double>()));
      for (const auto& l : fig["lines"]) {
        if (l["kind"] != "front") continue;
        bool inside = false;
        for (int i = 0; i <= 400; ++i) {
          const double px = l["x1"].get<double>() + (l["x2"].get<double>() - l["x1"].get<double>()) * i / 400.0;
          const double py = l["y1"].get<double>() + (l["y2"].get<double>() - l["y1"].get<double>()) * i / 400.0;
          inside = inside || (px > x0 && px < x1 && py > y0 && py < y1);
        }
        CHECK_FALSE(inside);
      }
    }
    CHECK(labels == 2);
  }
}

TEST_CASE("the Pareto figure on a phone says its title and labels whole", "[serving_search][api]") {
  // 340 px, the plot on a 390-px phone: the title drops its trailing parts and the end labels their
  // "most per …" rather than ending in "…"; at 800 px both stay whole.
  const std::string cfg = R"({"model":"llama3-70b","cluster":{"preset":"dgx-h100","gpus":8},
    "workload":{"mode":"infer","prompt_len":2048,"output_len":512}})";
  for (const int width : {340, 800}) {
    const nlohmann::json j = nlohmann::json::parse(api::serving_search_json(cfg, 3, 0, 0, width, false));
    REQUIRE(j["ok"] == true);
    size_t labels = 0;
    for (const auto& t : j["result"]["figure"]["texts"]) {
      const std::string text = t["text"];
      INFO(width << " px: " << text);
      if (t.value("max_w", 0.0) > 0) CHECK(figure::measure_text(text, t["font_px"], t["weight"]) <= t["max_w"].get<double>());
      if (t["kind"] == "point_label") {
        ++labels;
        CHECK((width < 400 || text.rfind("most per ", 0) == 0));
      }
      if (t["kind"] == "title") CHECK(text.rfind("llama3-70b on 8", 0) == 0);
    }
    CHECK(labels == 2);
  }
}
