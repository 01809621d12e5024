// Property test of the string API on random configs (fixed seed): every answer is JSON with `ok`,
// a successful one holds no null (nlohmann writes NaN and infinities as null), and nothing throws.
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "core/api.h"
#include "tests/helpers.h"

using nlohmann::json;

namespace {
using cutlab::test::has_null;
}  // namespace

TEST_CASE("the API answers random configs with JSON, errors as values, never NaN", "[api]") {
  std::mt19937 rng(20261130);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const char* models[] = {"llama3-8b", "llama3-405b", "deepseek-v3", "mixtral-8x22b", "qwen2-57b-a14b", "gpt3-175b"};
  const char* clusters[] = {"dgx-a100", "dgx-h100", "gb200-nvl72", "hgx-h800"};
  const char* schedules[] = {"gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe"};
  const int values[] = {0, 1, 2, 3, 4, 6, 8, 16, 32, 64, -1, 7, 128};
  int successes = 0;
  for (int i = 0; i < 300; ++i) {
    json plan;
    for (const char* k : {"tp", "pp", "cp", "ep", "dp", "vpp", "micro_batch"})
      if (pick(2)) plan[k] = values[pick(13)];
    if (pick(4) == 0) plan["etp"] = values[pick(6)];
    if (pick(2)) plan["schedule"] = schedules[pick(5)];
    json workload;
    if (pick(4) == 0)
      workload = {{"mode", "infer"}, {"batch", values[pick(13)]}, {"prompt_len", 1 + pick(9000)}, {"output_len", pick(3000)}};
    else workload = {{"seq_len", 1 << pick(17)}, {"global_batch", values[pick(13)] * (1 + pick(64))}};
    json cluster = pick(3) == 0 ? json{{"preset", clusters[pick(4)]}, {"gpus", values[pick(13)] * (1 << pick(8))}}
                                : json(clusters[pick(4)]);
    const std::string text = json{{"model", models[pick(6)]}, {"cluster", cluster}, {"plan", plan}, {"workload", workload}}.dump();
    for (const std::string& out : {cutlab::api::evaluate_json(text), cutlab::api::timeline_json(text, 800, 0),
                                   cutlab::api::options_json(text), cutlab::api::gpus_json(text, 0, 8)}) {
      const json j = json::parse(out, nullptr, false);
      INFO(text);
      REQUIRE_FALSE(j.is_discarded());
      REQUIRE(j.contains("ok"));
      if (j["ok"] == true) {
        REQUIRE_FALSE(has_null(j["result"]));
        ++successes;
      } else {
        REQUIRE_FALSE(j["errors"].empty());
      }
    }
  }
  REQUIRE(successes > 100);  // the generator reaches valid plans, not only errors
}

TEST_CASE("the page's calls for one state evaluate it once", "[api]") {
  const std::string text = R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 16},
    "plan": {"tp": 8, "pp": 2, "sp": true}, "workload": {"seq_len": 8192, "global_batch": 16}})";
  const std::size_t before = cutlab::api::evaluations();
  REQUIRE(cutlab::api::evaluate_json(text).rfind(R"({"ok":true)", 0) == 0);
  cutlab::api::timeline_json(text, 960, 0);
  cutlab::api::placement_scene_json(text, 1000);
  cutlab::api::cuts_scene_json(text, 1000, -1);
  cutlab::api::schedule_json(text);
  REQUIRE(cutlab::api::evaluations() == before + 1);
  // another state is evaluated again, and so is the first one after it
  const std::string other = R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 8},
    "plan": {"tp": 8}, "workload": {"seq_len": 4096, "global_batch": 8}})";
  cutlab::api::evaluate_json(other);
  cutlab::api::evaluate_json(text);
  REQUIRE(cutlab::api::evaluations() == before + 3);
}

TEST_CASE("the page's first module prices training as the full one does, and leaves a valid serving plan to it", "[api]") {
  using namespace cutlab::api;
  const std::string training = R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 16},
    "plan": {"tp": 8, "pp": 2, "sp": true}, "workload": {"seq_len": 8192, "global_batch": 16}})";
  const std::string serving = R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 8},
    "plan": {"tp": 8}, "workload": {"mode": "infer", "batch": 64, "prompt_len": 1000, "output_len": 200}})";
  const std::string bad_serving = R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 8},
    "plan": {"tp": 3}, "workload": {"mode": "infer", "batch": 64, "prompt_len": 1000, "output_len": 0}})";
  // training, and errors, byte for byte
  for (const std::string& text : {training, bad_serving, std::string("{"), std::string(R"({"model": "no-such-model"})")}) {
    INFO(text);
    REQUIRE(training_evaluate_json(text) == evaluate_json(text));
    REQUIRE(training_cuts_scene_json(text, 900, -1) == cuts_scene_json(text, 900, -1));
    REQUIRE(json::parse(training_evaluate_json(text)).contains("pending") == false);
  }
  REQUIRE(json::parse(evaluate_json(bad_serving))["errors"].size() >= 2);  // /plan/tp and /workload/output_len, not "pending"
  // a valid serving plan: pending, one error at /workload/mode, the config as read
  for (const std::string& out : {training_evaluate_json(serving), training_cuts_scene_json(serving, 900, -1)}) {
    const json j = json::parse(out);
    REQUIRE(j["ok"] == false);
    REQUIRE(j["pending"] == true);
    REQUIRE(j["errors"].size() == 1);
    REQUIRE(j["errors"][0]["path"] == "/workload/mode");
    REQUIRE(j["config"]["workload"]["batch"] == 64);
  }
  // the one-evaluation cache tells the two apart: the full answer after the first module's
  REQUIRE(json::parse(evaluate_json(serving))["ok"] == true);
  REQUIRE(json::parse(training_evaluate_json(serving))["pending"] == true);
  REQUIRE(json::parse(cuts_scene_json(serving, 900, -1))["ok"] == true);
}

TEST_CASE("the timeline's JSON holds the scene's rects: times to 1e-7 of the span, pixels from its geometry", "[api]") {
  const std::string text = R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 64},
    "plan": {"tp": 8, "pp": 4, "vpp": 2, "schedule": "interleaved"}, "workload": {"seq_len": 8192, "global_batch": 32}})";
  const json j = json::parse(cutlab::api::timeline_json(text, 960, 0));
  REQUIRE(j["ok"] == true);
  const json& R = j["result"]["rects"];
  const cutlab::api::Answer<cutlab::api::Evaluated> e = cutlab::api::evaluate(text);
  REQUIRE(e.ok());
  cutlab::TimelineLayout layout;
  layout.width = 960;
  const cutlab::Scene sc = cutlab::api::timeline(e.result.value, layout);
  REQUIRE(R["count"] == sc.rects.size());
  double span_s = 0;
  for (const auto& r : sc.rects) span_s = std::max(span_s, r.end_s);
  for (const char* key : {"kind", "stage", "micro_batch", "chunk", "backward_micro_batch", "start_s", "end_s"})
    REQUIRE(R[key].size() == sc.rects.size());
  // every rect of a timeline follows one geometry, sent instead of its pixels
  REQUIRE(R.contains("geometry"));
  REQUIRE_FALSE(R.contains("x"));
  const json& g = R["geometry"];
  REQUIRE(g["x0"].get<double>() == Approx(layout.label_width));
  REQUIRE(g["px_per_s"].get<double>() == Approx((960 - layout.label_width) / span_s).epsilon(1e-9));
  for (size_t i = 0; i < sc.rects.size(); ++i) {
    const cutlab::SceneRect& r = sc.rects[i];
    INFO(i);
    CHECK(R["kind"][i] == r.kind);
    CHECK(R["stage"][i] == r.stage);
    CHECK(R["micro_batch"][i] == r.micro_batch);
    CHECK(R["backward_micro_batch"][i] == r.backward_micro_batch);
    CHECK(R["chunk"][i] == r.chunk);
    // the pixels a reader rebuilds (web/derive.js withRectPixels) from the rounded times
    const double a = R["start_s"][i].get<double>(), b = R["end_s"][i].get<double>(), k = g["px_per_s"].get<double>();
    CHECK(g["x0"].get<double>() + a * k == Approx(r.x).margin(0.005));
    CHECK((b - a) * k == Approx(r.w).margin(0.005));
    CHECK(r.stage * g["row_pitch"].get<double>() == Approx(r.y).margin(0.005));
    CHECK(g["row_height"].get<double>() == Approx(r.h).margin(0.005));
    CHECK(R["start_s"][i].get<double>() == Approx(r.start_s).margin(span_s * 1e-6));
    CHECK(R["end_s"][i].get<double>() == Approx(r.end_s).margin(span_s * 1e-6));
  }
}

TEST_CASE("the search in parts: the merged parts' JSON is search_json's, bad parts are errors", "[api][search]") {
  const std::string text = json{{"model", "llama3-70b"},
                                {"cluster", {{"preset", "dgx-h100"}, {"gpus", 32}}},
                                {"workload", {{"seq_len", 4096}, {"global_batch", 32}}}}
                               .dump();
  const json one = json::parse(cutlab::api::search_json(text, 5));
  REQUIRE(one["ok"] == true);
  const json head = json::parse(cutlab::api::search_part_json(text, 5, 0, 0, true, 0, -1));
  REQUIRE(head["ok"] == true);
  const int items = head["result"]["items"];
  REQUIRE(items > 4);
  // The first part finds the step-time bound, the others take it from its answer (search-run.js).
  json parts = json::array();
  double bound = -1;
  for (int first = 0; first < items; first += items / 4) {
    const json p = json::parse(cutlab::api::search_part_json(text, 5, first, items / 4, true, 0, bound));
    REQUIRE(p["ok"] == true);
    parts.push_back(p["result"]);
    if (bound < 0) bound = p["result"]["step_bound_s"];
    CHECK(p["result"]["step_bound_s"] == one["result"]["step_bound_s"]);
  }
  CHECK(bound > 0);
  const json m = json::parse(cutlab::api::search_merge_json(parts.dump(), 5));
  REQUIRE(m["ok"] == true);
  const json& r = m["result"];
  CHECK(r["second_pass"] == false);
  for (const char* k : {"candidates", "pruned_invalid", "pruned_equivalent", "pruned_memory", "pruned_bound", "evaluated", "valid",
                        "fitting", "step_bound_s", "best"})
    CHECK(r[k] == one["result"][k]);
  // errors as values: not an array, a part without its counts, a shard out of range
  CHECK(json::parse(cutlab::api::search_merge_json("{}", 5))["ok"] == false);
  const json bad = json::parse(cutlab::api::search_merge_json("[{\"best\": []}]", 5));
  REQUIRE(bad["ok"] == false);
  CHECK(bad["errors"][0]["path"] == "/0/candidates");
  CHECK(json::parse(cutlab::api::search_merge_json("[", 5))["ok"] == false);
  CHECK(json::parse(cutlab::api::search_part_json(text, 5, -1, 4, true, 0, -1))["errors"][0]["path"] == "/first");
  CHECK(json::parse(cutlab::api::search_part_json(text, 5, 0, 4, true, 0, std::nan("")))["errors"][0]["path"] == "/step_bound_s");
}

TEST_CASE("options of a plan that breaks a rule: the axis values that would fix it", "[api]") {
  // 24 GPUs under TP 8 × PP 2 (16 per replica): invalid. With PP 2 fixed, TP t leaves 24/(2t) data-parallel
  // replicas: t must divide 12 and Llama 3 70B's 64 heads and 8 KV heads (1, 2, 4), 48 sequences must split
  // over the replicas (12, 6, 3: all do), and sequence parallelism needs t > 1: 2 and 4.
  const std::string text = R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 24},
    "plan": {"tp": 8, "pp": 2, "sp": true}, "workload": {"seq_len": 8192, "global_batch": 48}})";
  REQUIRE(json::parse(cutlab::api::evaluate_json(text))["ok"] == false);
  const json o = json::parse(cutlab::api::options_json(text));
  REQUIRE(o["ok"] == true);
  CHECK(o["result"]["tp"] == json::array({2, 4}));
  CHECK(o["result"]["cp"] == json::array());  // CP alone cannot fix it: 24 = 16·cp has no whole cp
  // A text that does not read has no options.
  CHECK(json::parse(cutlab::api::options_json("{\"model\": "))["ok"] == false);
}
