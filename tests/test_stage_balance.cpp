#include <catch2/catch.hpp>

#include <numeric>

#include "core/stage_balance.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

TEST_CASE("stage balancing moves layers off the stage that holds the output layer", "[balance]") {
  // Llama 3 8B, PP 4, 1F1B, sequence 8,192: an even split gives 8 layers per stage, and the last
  // stage also runs the output layer and the loss. Forward FLOPs per token: a layer's GEMMs
  // 2·(h·(h + 2·g·d) + h² + 3·h·f) = 2·(4096·6144 + 4096² + 3·4096·14336) = 436.2M, plus causal
  // attention 2·s·h = 67.1M: 503M; the output layer 2·h·V = 2·4096·128,256 = 1,051M, 2.09 layers.
  // 34.09 layer-equivalents over 4 stages is 8.52 each: the best split gives the last stage 6 or 7
  // layers and the others 8 or 9 (e.g. 9, 9, 8, 6: the largest stage 9 against 10.09 now).
  Config c = test::config("llama3-8b", "dgx-h100", 1, 4, 2, 8192, 32);
  const Result<StageBalance> r = balance_stages(c);
  REQUIRE(r.ok());
  const StageBalance& b = r.value;
  REQUIRE(b.current.layers_per_stage == std::vector<int>{8, 8, 8, 8});
  REQUIRE(b.current.fits);
  REQUIRE(b.improved);
  const std::vector<int>& s = b.suggested.layers_per_stage;
  REQUIRE(std::accumulate(s.begin(), s.end(), 0) == 32);
  REQUIRE((s[3] == 6 || s[3] == 7));
  for (int i = 0; i < 3; ++i) REQUIRE((s[i] == 8 || s[i] == 9));
  REQUIRE(b.suggested.fits);
  // The step shrinks by about what the largest stage loses: from 10.09 to 9 layer-equivalents per
  // micro-batch over the 16 micro-batches' steady state, less the fill and drain the split also pays.
  REQUIRE(b.suggested.step_s < b.current.step_s * 0.95);
  REQUIRE(b.suggested.step_s > b.current.step_s * 9.0 / 10.09 * 0.97);
  // The split is what evaluate() gives for the plan with it.
  c.plan.layers_per_stage = s;
  const Result<Estimate> e = evaluate(c);
  REQUIRE(test::training(e));
  REQUIRE_THAT(test::training(e)->step_s, WithinRel(b.suggested.step_s, 1e-12));
  // And no single-layer move from it helps: balanced to within a layer (stage 0, with 4 micro-batches
  // in flight, has no room for a ninth layer: 9, 9, 8, 6 would be faster but does not fit).
  for (int from = 0; from < 4; ++from)
    for (int to = 0; to < 4; ++to) {
      if (from == to) continue;
      Config d = c;
      --d.plan.layers_per_stage[from];
      ++d.plan.layers_per_stage[to];
      const Result<Estimate> f = evaluate(d);
      if (const TrainingEstimate* t = test::training(f); t && t->memory.fits) REQUIRE(t->step_s >= b.suggested.step_s * (1 - 1e-9));
    }
}

TEST_CASE("stage balancing makes a plan that does not fit fit when a split can", "[balance]") {
  // Llama 3 70B, TP 8, PP 4, no recompute, 1F1B, micro-batch 2 at sequence 8,192: the first stage
  // keeps 4 micro-batches in flight, the last one; the even split (20 layers each) overflows the
  // first stage (about 81.5 of 77.6 GiB). Balancing first lowers the peak, moving layers off it.
  Config c = test::config("llama3-70b", "dgx-h100", 8, 4, 1, 8192, 16);
  c.plan.sp = true;
  c.plan.micro_batch = 2;
  c.plan.recompute = Recompute::None;
  const Result<StageBalance> r = balance_stages(c);
  REQUIRE(r.ok());
  const StageBalance& b = r.value;
  REQUIRE_FALSE(b.current.fits);
  REQUIRE(b.current.memory_bytes[0] > b.current.memory_bytes[3]);
  REQUIRE(b.improved);
  const std::vector<int>& s = b.suggested.layers_per_stage;
  REQUIRE(s[0] < 20);
  REQUIRE(s[0] <= s[3]);
  const double peak_now = *std::max_element(b.current.memory_bytes.begin(), b.current.memory_bytes.end());
  const double peak_then = *std::max_element(b.suggested.memory_bytes.begin(), b.suggested.memory_bytes.end());
  REQUIRE(peak_then < peak_now);
  REQUIRE(b.suggested.fits);
}

TEST_CASE("stage balancing: the rules it needs, as errors with paths", "[balance]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 32);
  Result<StageBalance> r = balance_stages(c);
  REQUIRE(r.errors.size() == 1);
  REQUIRE(r.errors[0].path == "/plan/pp");
  c = test::config("llama3-8b", "dgx-h100", 1, 2, 4, 8192, 32);  // 32 layers + embedding + loss = 2 × 17
  c.plan.embedding_in_pipeline_split = true;
  c.plan.loss_in_pipeline_split = true;
  r = balance_stages(c);
  REQUIRE(r.errors.size() == 1);
  REQUIRE(r.errors[0].path == "/plan/embedding_in_pipeline_split");
  c = test::config("llama3-8b", "dgx-h100", 1, 4, 2, 8192, 32);
  r = balance_stages(c, {0.0, 10});
  REQUIRE(r.errors.size() == 1);
  REQUIRE(r.errors[0].path == "/balance");
}
