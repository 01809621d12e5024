#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/api.h"
#include "core/disaggregation_search.h"
#include "core/scene_pareto.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

namespace {

// Llama 3 8B, prompt 2048, output 256, bf16, on the GPUs of one DGX H100 (the KV crosses NVLink).
const char* const kLlama8b = R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":8},
  "workload":{"mode":"infer","prompt_len":2048,"output_len":256}})";

// A "disaggregation" section of x instances of one mesh prefilling and y of another decoding (on
// kLlama8b, or `base`).
std::string section(const Plan& p, int x, int pb, const Plan& d, int y, int db, const std::string& base = kLlama8b) {
  auto pool = [](const Plan& m, int n, int b) {
    return nlohmann::json{{"gpus", m.tp * m.pp * m.ep * n}, {"plan", {{"tp", m.tp}, {"pp", m.pp}, {"ep", m.ep}}}, {"batch", b}};
  };
  nlohmann::json c = nlohmann::json::parse(base);
  c["disaggregation"] = {{"prefill", pool(p, x, pb)}, {"decode", pool(d, y, db)}};
  return c.dump();
}

// Every deployment the search may build on 8 GPUs: instance meshes TP 1, 2, 4 × PP 1, 2, 4 of fewer
// than 8 GPUs, prefill batches 1, 2, 4, decode batches 1 to 64, and every x·g_p + y·g_d ≤ 8; each one
// whose GPUs `skip` does not rule out evaluated whole (on `base`) and handed to `visit`.
template <class Skip, class Visit>
void each_deployment(const std::string& base, Skip skip, Visit visit) {
  std::vector<Plan> meshes;
  for (int tp : {1, 2, 4})
    for (int pp : {1, 2, 4})
      if (tp * pp < 8) {
        Plan p;
        p.tp = tp, p.pp = pp;
        meshes.push_back(p);
      }
  for (const Plan& p : meshes)
    for (const Plan& d : meshes)
      for (int pb : {1, 2, 4})
        for (int db = 1; db <= 64; db *= 2)
          for (int x = 1; x * p.tp * p.pp + d.tp * d.pp <= 8; ++x)
            for (int y = 1; x * p.tp * p.pp + y * d.tp * d.pp <= 8; ++y) {
              const int gpus = x * p.tp * p.pp + y * d.tp * d.pp;
              if (skip(gpus)) continue;
              const api::Answer<api::DisaggregationRun> a = api::disaggregate(section(p, x, pb, d, y, db, base));
              REQUIRE(a.ok());
              visit(gpus, a.result.value.result);
            }
}

std::vector<std::string> paths(const Errors& errors) {
  std::vector<std::string> p;
  for (const Error& e : errors) p.push_back(e.path);
  return p;
}

}  // namespace

TEST_CASE("the best whole numbers of prefill and decode instances, by hand", "[disaggregation_search]") {
  // 16 GPUs, prefill instances of 2 at 1 request/s, decode instances of 8 at 3: one decode instance
  // leaves 8 GPUs, 4 prefill instances, min(x, 3) = 3 from x = 3 (the fewest); two decode instances
  // leave none.
  DeploymentSplit s = best_split(16, 8, 2, 8, 1.0, 3.0, 1e9);
  REQUIRE(s.x == 3);
  REQUIRE(s.y == 1);
  REQUIRE_THAT(s.requests_per_s, WithinRel(3.0, 1e-12));
  // 64 GPUs, prefill 1 GPU at 1/s, decode 4 GPUs at 10/s: min(x, 10·⌊(64 − x)/4⌋) is 43 at x = 43
  // (y = 5), 44 at x = 44 (y = 5), 40 at x = 45 (y = 4).
  s = best_split(64, 8, 1, 4, 1.0, 10.0, 1e9);
  REQUIRE(s.x == 44);
  REQUIRE(s.y == 5);
  REQUIRE_THAT(s.requests_per_s, WithinRel(44.0, 1e-12));
  // The links bound it: 8 GPUs of one each, 10/s per instance, a GPU's link 1 request/s:
  // min(10x, 10y, min(x, y)) is 4 at x = y = 4.
  s = best_split(8, 8, 1, 1, 10.0, 10.0, 1.0);
  REQUIRE(s.x == 4);
  REQUIRE(s.y == 4);
  REQUIRE_THAT(s.requests_per_s, WithinRel(4.0, 1e-12));
  // No room for both pools.
  REQUIRE(best_split(8, 8, 4, 8, 1.0, 1.0, 1.0).x == 0);
  // A split at a given x: 16 GPUs in nodes of 8, prefill instances of 2 at 1 request/s, decode instances
  // of 8 at 3. Two prefill instances take 4 GPUs of one node, the decode instance the other: min(2, 3).
  s = split_at(16, 8, 2, 8, 1.0, 3.0, 1e9, 2);
  REQUIRE(s.x == 2);
  REQUIRE(s.y == 1);
  REQUIRE_THAT(s.requests_per_s, WithinRel(2.0, 1e-12));
  // Five take a node and 2 GPUs of the other: no whole node for a decode instance.
  s = split_at(16, 8, 2, 8, 1.0, 3.0, 1e9, 5);
  REQUIRE(s.y == 0);
  REQUIRE(s.requests_per_s == 0);
  // Instances stay within a node: 144 GPUs in two 72-GPU nodes, prefill instances of 12 GPUs at
  // 10 requests/s, decode instances of 32 at 1. Four decode instances would fit in the GPUs (4 × 32 +
  // 12 = 140) but two per node leave 8 GPUs in each, too few for a prefill instance: three decode
  // instances (two in one node, one beside three prefill instances in the other), 3 requests/s.
  s = best_split(144, 72, 12, 32, 10.0, 1.0, 1e9);
  REQUIRE(s.x == 1);
  REQUIRE(s.y == 3);
  REQUIRE_THAT(s.requests_per_s, WithinRel(3.0, 1e-12));
  // In one node of 144 the fourth fits: 4 requests/s.
  s = best_split(144, 144, 12, 32, 10.0, 1.0, 1e9);
  REQUIRE(s.y == 4);
  REQUIRE_THAT(s.requests_per_s, WithinRel(4.0, 1e-12));
}

TEST_CASE("a pool of x instances serves x times one instance's requests at the same latency", "[disaggregation_search]") {
  // Each instance serves its own share of the offline queue at steady state, so one instance's rate
  // and latency give any number of them (what the search scales by; disaggregation_search.h step 1).
  Plan tp2;
  tp2.tp = 2;
  Plan tp4;
  tp4.tp = 4;
  const api::Answer<api::DisaggregationRun> one = api::disaggregate(section(tp2, 1, 2, tp4, 1, 32));
  const api::Answer<api::DisaggregationRun> more = api::disaggregate(section(tp2, 3, 2, tp4, 1, 32));
  REQUIRE(one.ok());
  REQUIRE(more.ok());
  const Disaggregated &a = one.result.value.result, &b = more.result.value.result;
  REQUIRE_THAT(b.prefill.requests_per_s, WithinRel(3 * a.prefill.requests_per_s, 1e-9));
  REQUIRE_THAT(b.prefill.ttft_s, WithinRel(a.prefill.ttft_s, 1e-9));
  REQUIRE_THAT(b.decode.requests_per_s, WithinRel(a.decode.requests_per_s, 1e-9));
}

TEST_CASE("instances are placed whole within nodes, the larger first", "[disaggregation_search]") {
  // Two 72-GPU nodes. Instances of 32: two per node, 8 GPUs left in each.
  REQUIRE(instances_fit(144, 72, 32, 4, 4, 4));  // each node's 8 left hold two of 4
  REQUIRE_FALSE(instances_fit(144, 72, 32, 4, 4, 5));
  REQUIRE_FALSE(instances_fit(144, 72, 32, 4, 12, 1));  // 8 GPUs hold no instance of 12
  // Three of 32: a node of two (8 left) and a node of one (40 left): 0 + 3 instances of 12.
  REQUIRE(instances_fit(144, 72, 12, 3, 32, 3));
  REQUIRE_FALSE(instances_fit(144, 72, 12, 4, 32, 3));
  // 140 of 144 GPUs would hold 4 + 1, but not without straddling a node.
  REQUIRE_FALSE(instances_fit(144, 72, 32, 4, 12, 1));
  // Larger than a node: 96 GPUs take two whole nodes (48 left in the second); a third node of 72
  // and a last one of 20 GPUs (236 in all): 48/16 + 72/16 + 20/16 = 3 + 4 + 1 instances of 16.
  REQUIRE(instances_fit(236, 72, 96, 1, 16, 8));
  REQUIRE_FALSE(instances_fit(236, 72, 96, 1, 16, 9));
  REQUIRE_FALSE(instances_fit(236, 72, 96, 2, 16, 0));  // two need four whole nodes
  // Eight GPUs per node and sizes that divide it: any mix that adds up fits.
  REQUIRE(instances_fit(64, 8, 1, 44, 4, 5));
  REQUIRE_FALSE(instances_fit(64, 8, 1, 45, 4, 5));
}

TEST_CASE("a pool's instances do not straddle nodes", "[disaggregation_search]") {
  // DeepSeek-V3 in fp4 on GB200 NVL72 (72 GPUs a node), decode instances of EP 32. Placed rank after
  // rank, a third instance would take GPUs 64 to 95 across two nodes and run its all-to-all over the
  // scale-out links; placed whole it sits in a node of its own, so three serve 3 × one instance's
  // requests at one instance's TPOT.
  auto run = [](int instances) {
    nlohmann::json c = {
        {"model", "deepseek-v3"},
        {"cluster", "gb200-nvl72"},
        {"workload", {{"mode", "infer"}, {"prompt_len", 1024}, {"output_len", 256}, {"weight_dtype", "fp4"}, {"kv_dtype", "fp8"}}}};
    c["disaggregation"] = {{"prefill", {{"gpus", 8}, {"plan", {{"tp", 1}, {"pp", 4}}}, {"batch", 1}}},
                           {"decode", {{"gpus", 32 * instances}, {"plan", {{"tp", 1}, {"ep", 32}}}, {"batch", 16}}}};
    const api::Answer<api::DisaggregationRun> a = api::disaggregate(c.dump());
    REQUIRE(a.ok());
    return a.result.value.result;
  };
  const Disaggregated one = run(1), three = run(3);
  REQUIRE(three.decode.instances == 3);
  REQUIRE_THAT(three.decode.tpot_s, WithinRel(one.decode.tpot_s, 1e-9));
  REQUIRE_THAT(three.decode.requests_per_s, WithinRel(3 * one.decode.requests_per_s, 1e-9));
}

TEST_CASE("the disaggregated search finds the best whole deployment of its space", "[disaggregation_search]") {
  // Every deployment the search may build on 8 GPUs (each_deployment; prefill batches 1, 2, 4:
  // 2,048-token prompts in the 8,192-token budget), each evaluated whole by `disaggregate` (the
  // evaluation of a "disaggregation" section). The best within TTFT ≤ 400 ms and TPOT ≤ 12 ms must
  // be the search's first row.
  ServingSearchOptions opt;
  opt.max_ttft_s = 0.4, opt.max_tpot_s = 0.012, opt.max_batch = 64, opt.top = 5;
  const api::Answer<DisaggregatedSearchResult> s = api::disaggregated_search(kLlama8b, opt);
  REQUIRE(s.ok());
  const DisaggregatedSearchResult& r = s.result.value;
  REQUIRE(!r.best.empty());
  double best = 0;
  int within = 0;
  each_deployment(
      kLlama8b, [](int) { return false; },
      [&](int, const Disaggregated& e) {
        if (!e.prefill.fits || !e.decode.fits || e.ttft_s > opt.max_ttft_s || e.tpot_s > opt.max_tpot_s) return;
        ++within;
        best = std::max(best, e.output_tokens_per_s_total / 8.0);
      });
  REQUIRE(within > 0);
  REQUIRE_THAT(r.best.front().output_tokens_per_s_per_gpu, WithinRel(best, 1e-9));
  // Its row is that deployment evaluated whole.
  const DisaggregatedPoint& top = r.best.front();
  const api::Answer<api::DisaggregationRun> again = api::disaggregate(
      section(top.prefill_plan, top.prefill_instances, top.prefill_batch, top.decode_plan, top.decode_instances, top.decode_batch));
  REQUIRE(again.ok());
  REQUIRE_THAT(top.ttft_s, WithinRel(again.result.value.result.ttft_s, 1e-12));
  REQUIRE_THAT(top.tpot_s, WithinRel(again.result.value.result.tpot_s, 1e-12));
  REQUIRE(top.prefill_gpus + top.decode_gpus + top.idle_gpus == 8);
}

TEST_CASE("at a request rate the disaggregated search finds the fewest GPUs that serve it within the limits",
          "[disaggregation_search]") {
  // Llama 3 8B, 2048/256, at 20 requests/s on up to 8 H100s, TTFT ≤ 400 ms and TPOT ≤ 12 ms: every
  // deployment that keeps up serves 20 × 256 = 5,120 output tokens/s, 5,120 / g per GPU on the g
  // GPUs it uses. Every deployment of the search's space evaluated whole at that rate
  // (each_deployment): the fewest GPUs of those within the limits are the search's first row's.
  const std::string base = R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":8},
    "workload":{"mode":"infer","prompt_len":2048,"output_len":256,"request_rate_per_s":20}})";
  ServingSearchOptions opt;
  opt.max_ttft_s = 0.4, opt.max_tpot_s = 0.012, opt.max_batch = 64, opt.top = 5;
  const api::Answer<DisaggregatedSearchResult> s = api::disaggregated_search(base, opt);
  REQUIRE(s.ok());
  const DisaggregatedSearchResult& r = s.result.value;
  REQUIRE(!r.best.empty());
  for (size_t i = 0; i < r.best.size(); ++i) {
    const DisaggregatedPoint& p = r.best[i];
    REQUIRE(p.within_limits);
    REQUIRE(!p.saturated);
    REQUIRE(p.ttft_s <= 0.4);
    REQUIRE(p.tpot_s <= 0.012);
    REQUIRE_THAT(p.output_tokens_per_s_total, WithinRel(5120.0, 1e-9));
    REQUIRE_THAT(p.output_tokens_per_s_per_gpu, WithinRel(5120.0 / (p.prefill_gpus + p.decode_gpus), 1e-9));
    REQUIRE(p.prefill_gpus + p.decode_gpus + p.idle_gpus == 8);
    if (i > 0) REQUIRE(p.prefill_gpus + p.decode_gpus >= r.best[i - 1].prefill_gpus + r.best[i - 1].decode_gpus);
  }
  int fewest = 9;
  each_deployment(
      base, [&](int gpus) { return gpus >= fewest; },
      [&](int gpus, const Disaggregated& e) {
        if (e.prefill.fits && e.decode.fits && !e.saturated && e.ttft_s <= opt.max_ttft_s && e.tpot_s <= opt.max_tpot_s) fewest = gpus;
      });
  REQUIRE(fewest < 8);
  REQUIRE(r.best.front().prefill_gpus + r.best.front().decode_gpus == fewest);
  // At 1,000 requests/s (256,000 output tokens/s, over 32,000 per GPU) none keeps up: the answer is
  // the deployments that serve the most, each saturated and serving fewer requests/s than arrive.
  nlohmann::json busy = nlohmann::json::parse(base);
  busy["workload"]["request_rate_per_s"] = 1000;
  const DisaggregatedSearchResult none = api::disaggregated_search(busy.dump(), opt).result.value;
  REQUIRE(!none.best.empty());
  REQUIRE(!none.front_within_limits);
  for (size_t i = 0; i < none.best.size(); ++i) {
    REQUIRE(none.best[i].saturated);
    REQUIRE(!none.best[i].within_limits);
    REQUIRE(none.best[i].requests_per_s < 1000);
    if (i > 0) REQUIRE(none.best[i].output_tokens_per_s_per_gpu <= none.best[i - 1].output_tokens_per_s_per_gpu);
  }
}

TEST_CASE("disaggregated deployments meet the limits and their front trades per user for per GPU", "[disaggregation_search]") {
  ServingSearchOptions opt;
  opt.max_tpot_s = 0.015;
  const api::Answer<DisaggregatedSearchResult> s = api::disaggregated_search(kLlama8b, opt);
  REQUIRE(s.ok());
  const DisaggregatedSearchResult& r = s.result.value;
  REQUIRE(r.best.size() > 1);
  for (size_t i = 0; i < r.best.size(); ++i) {
    REQUIRE(r.best[i].within_limits);
    REQUIRE(r.best[i].tpot_s <= 0.015);
    if (i > 0) REQUIRE(r.best[i].output_tokens_per_s_per_gpu <= r.best[i - 1].output_tokens_per_s_per_gpu);
  }
  REQUIRE(r.front.size() > 1);
  for (size_t i = 1; i < r.front.size(); ++i) {
    REQUIRE(r.front[i].output_tokens_per_s_per_user <= r.front[i - 1].output_tokens_per_s_per_user);
    REQUIRE(r.front[i].output_tokens_per_s_per_gpu > r.front[i - 1].output_tokens_per_s_per_gpu);
  }
  // The front's densest point is the best row.
  REQUIRE_THAT(r.front.back().output_tokens_per_s_per_gpu, WithinRel(r.best.front().output_tokens_per_s_per_gpu, 1e-12));
}

TEST_CASE("what cannot be served disaggregated is reported at its paths, every error at once", "[disaggregation_search]") {
  ServingSearchOptions opt;
  auto errors = [&](const std::string& text, const ServingSearchOptions& o) {
    return paths(api::disaggregated_search(text, o).result.errors);
  };
  using Catch::Matchers::VectorContains;
  const auto e1 = errors(R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":1},
    "workload":{"mode":"infer","output_len":1,"num_requests":100}})",
                         opt);
  REQUIRE_THAT(e1, VectorContains(std::string("/cluster/gpus")));
  REQUIRE_THAT(e1, VectorContains(std::string("/workload/output_len")));
  REQUIRE_THAT(e1, VectorContains(std::string("/workload/num_requests")));
  ServingSearchOptions bad;
  bad.top = 0;
  REQUIRE_THAT(errors(kLlama8b, bad), VectorContains(std::string("/search/top")));
  // The page's answer keeps the co-located search and lists the disaggregated one's errors.
  const nlohmann::json j = nlohmann::json::parse(api::serving_search_json(
      R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":8},"workload":{"mode":"infer","num_requests":100}})", 3, 0, 0, 0,
      true));
  REQUIRE(j["ok"] == true);
  REQUIRE(j["result"]["disaggregated_errors"][0]["path"] == "/workload/num_requests");
  REQUIRE(!j["result"].contains("disaggregated"));
}

TEST_CASE("the serving Pareto plot draws the disaggregated front beside the co-located one", "[disaggregation_search][scene]") {
  const nlohmann::json j = nlohmann::json::parse(api::serving_search_json(kLlama8b, 3, 0, 15, 900, true));
  REQUIRE(j["ok"] == true);
  const nlohmann::json& d = j["result"]["disaggregated"];
  REQUIRE(d["front"].size() > 1);
  int dots = 0, keys = 0;
  for (const auto& r : j["result"]["figure"]["rects"])
    if (r.value("hit", "") == "disaggregated") ++dots;
  for (const auto& l : j["result"]["figure"]["lines"])
    if (l["kind"] == "key") ++keys;
  REQUIRE(dots == static_cast<int>(d["front"].size()));
  REQUIRE(keys == 2);  // the legend: co-located and disaggregated
  const nlohmann::json plain = nlohmann::json::parse(api::serving_search_json(kLlama8b, 3, 0, 15, 900, false));
  for (const auto& l : plain["result"]["figure"]["lines"]) REQUIRE(l["kind"] != "key");
}
