#include <catch2/catch.hpp>

#include "core/search.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

TEST_CASE("search returns valid plans that fit, fastest first, each as evaluate() sees it", "[search]") {
  Config c = test::config("llama3-70b", "dgx-h100", 1, 1, 1, 8192, 64);
  c.cluster.gpus = 64;
  const Result<SearchResult> r = search_plans(c, {5, 1.0});
  REQUIRE(r.ok());
  const SearchResult& s = r.value;
  REQUIRE(s.best.size() == 5);
  REQUIRE(s.candidates >= s.valid);
  REQUIRE(s.valid >= s.fitting);
  for (size_t i = 0; i < s.best.size(); ++i) {
    const RankedPlan& p = s.best[i];
    REQUIRE(p.fits);
    if (i > 0) REQUIRE(p.tokens_per_s <= s.best[i - 1].tokens_per_s);
    REQUIRE(p.plan.tp * p.plan.pp * p.plan.cp * p.plan.ep * p.plan.dp == 64);
    Config again = c;
    again.plan = p.plan;
    const Result<Estimate> e = evaluate(again);
    REQUIRE(test::training(e));
    REQUIRE_THAT(test::training(e)->step_s, WithinRel(p.step_s, 1e-12));
    REQUIRE(p.peak_memory_bytes <= p.capacity_bytes);
  }
}

TEST_CASE("when nothing fits, search shows the plans closest to fitting", "[search]") {
  Config c = test::config("llama3-405b", "dgx-h100", 1, 1, 1, 8192, 8);
  c.cluster.gpus = 8;  // 405B needs ≥ 6.5 TB of model states with Adam: never fits 8 × 80 GB
  const Result<SearchResult> r = search_plans(c, {3, 1.0});
  REQUIRE(r.ok());
  REQUIRE(r.value.fitting == 0);
  REQUIRE(r.value.best.size() == 3);
  REQUIRE(r.value.best[0].peak_memory_bytes <= r.value.best[1].peak_memory_bytes);
}

TEST_CASE("search needs the GPU count and a training workload", "[search]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 1, 4096, 8);
  REQUIRE(search_plans(c).errors.front().path == "/cluster/gpus");
  c.cluster.gpus = 8;
  c.workload.mode = Mode::Infer;
  REQUIRE(search_plans(c).errors.front().path == "/workload/mode");
}
