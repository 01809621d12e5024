#include <catch2/catch.hpp>

#include <tuple>

#include "core/search.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

namespace {
SearchOptions top(int n) {
  SearchOptions o;
  o.top = n;
  return o;
}
}  // namespace

TEST_CASE("search returns valid plans that fit, fastest first, each as evaluate() sees it", "[search]") {
  Config c = test::config("llama3-70b", "dgx-h100", 1, 1, 1, 8192, 64);
  c.cluster.gpus = 64;
  const Result<SearchResult> r = search_plans(c, top(5));
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
  const Result<SearchResult> r = search_plans(c, top(3));
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

TEST_CASE("pruning before timing keeps the same best plans as evaluating every valid plan", "[search][prune]") {
  const char* model = GENERATE("llama3-8b", "mixtral-8x22b");
  Config c = test::config(model, "dgx-h100", 1, 1, 1, 4096, 32);
  c.cluster.gpus = GENERATE(8, 16);
  CAPTURE(c.model.name, c.cluster.gpus);
  SearchOptions pruned = top(5);
  SearchOptions all = pruned;
  all.prune = false;
  const Result<SearchResult> a = search_plans(c, pruned), b = search_plans(c, all);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a.value.candidates == b.value.candidates);
  CHECK(a.value.candidates ==
        a.value.pruned_invalid + a.value.pruned_equivalent + a.value.pruned_memory + a.value.pruned_bound + a.value.evaluated);
  CHECK(a.value.evaluated < b.value.evaluated);
  CHECK(b.value.pruned_bound == 0);
  REQUIRE(a.value.best.size() == b.value.best.size());
  for (size_t i = 0; i < a.value.best.size(); ++i) {
    CHECK(a.value.best[i].fits == b.value.best[i].fits);
    // No better than the i-th of all (a subset), and the best equal: the plans pruned as equivalent or
    // dominated are twins of plans kept, at most as fast.
    if (a.value.best[i].fits) CHECK(a.value.best[i].step_s >= b.value.best[i].step_s * (1 - 1e-12));
  }
  if (a.value.best[0].fits) CHECK_THAT(a.value.best[0].step_s, WithinRel(b.value.best[0].step_s, 1e-12));
  else CHECK_THAT(a.value.best[0].peak_memory_bytes, WithinRel(b.value.best[0].peak_memory_bytes, 1e-12));
}

TEST_CASE("the step-time bound skips plans without changing the best ones", "[search][prune]") {
  const auto [model, gpus, batch] = GENERATE(std::make_tuple("llama3-70b", 64, 64), std::make_tuple("mixtral-8x22b", 16, 32),
                                             std::make_tuple("llama3-8b", 8, 32));
  Config c = test::config(model, "dgx-h100", 1, 1, 1, 8192, batch);
  c.cluster.gpus = gpus;
  CAPTURE(model, gpus);
  SearchOptions bounded = top(10), unbounded = bounded;
  unbounded.step_bound_s = 0;
  const Result<SearchResult> a = search_plans(c, bounded), b = search_plans(c, unbounded);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  // The bound is the 10th shortest step among fitting plans of the space: at least the 10th best's.
  // Mixtral 8x22B on 16 H100s: fewer than 10 of the seed plans fit, so no bound.
  const bool tight = std::string(model) == "mixtral-8x22b";
  CHECK((a.value.step_bound_s > 0) == !tight);
  CHECK(a.value.step_bound_s == search_step_bound_s(c, bounded));
  REQUIRE(b.value.best.size() == 10);
  if (!tight) CHECK(a.value.step_bound_s >= b.value.best.back().step_s);
  CHECK(b.value.step_bound_s == 0);
  CHECK(b.value.pruned_bound == 0);
  CHECK((a.value.pruned_bound > 0) == !tight);
  CHECK(a.value.evaluated + a.value.pruned_bound == b.value.evaluated);
  CHECK(a.value.valid == b.value.valid);
  REQUIRE(a.value.best.size() == b.value.best.size());
  for (size_t i = 0; i < a.value.best.size(); ++i) {
    CHECK(a.value.best[i].step_s == b.value.best[i].step_s);
    CHECK(a.value.best[i].peak_memory_bytes == b.value.best[i].peak_memory_bytes);
    const Plan &x = a.value.best[i].plan, &y = b.value.best[i].plan;
    CHECK(std::tie(x.tp, x.pp, x.dp, x.ep, x.vpp, x.micro_batch, x.zero, x.distributed_optimizer, x.sp) ==
          std::tie(y.tp, y.pp, y.dp, y.ep, y.vpp, y.micro_batch, y.zero, y.distributed_optimizer, y.sp));
    CHECK(x.schedule == y.schedule);
    CHECK(x.recompute == y.recompute);
  }
}

TEST_CASE("search ranks the same plans on 1 and 2 threads", "[search][threads]") {
  Config c = test::config("llama3-70b", "dgx-h100", 1, 1, 1, 8192, 64);
  c.cluster.gpus = 64;
  SearchOptions one = top(10);
  SearchOptions two = one;
  two.threads = 2;
  const Result<SearchResult> a = search_plans(c, one), b = search_plans(c, two);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a.value.candidates == b.value.candidates);
  CHECK(a.value.evaluated == b.value.evaluated);
  CHECK(a.value.fitting == b.value.fitting);
  REQUIRE(a.value.best.size() == b.value.best.size());
  for (size_t i = 0; i < a.value.best.size(); ++i) {
    const Plan &x = a.value.best[i].plan, &y = b.value.best[i].plan;
    CHECK(a.value.best[i].step_s == b.value.best[i].step_s);
    CHECK(std::tie(x.tp, x.pp, x.cp, x.ep, x.dp, x.etp, x.vpp, x.micro_batch, x.zero, x.distributed_optimizer, x.sp) ==
          std::tie(y.tp, y.pp, y.cp, y.ep, y.dp, y.etp, y.vpp, y.micro_batch, y.zero, y.distributed_optimizer, y.sp));
    CHECK(x.schedule == y.schedule);
    CHECK(x.recompute == y.recompute);
    CHECK(x.recompute_modules == y.recompute_modules);
  }
}

TEST_CASE("fields the config fixes stay fixed, the others are searched", "[search]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 1, 8192, 64);
  c.cluster.gpus = 64;
  c.plan.recompute = Recompute::Full;
  SearchOptions o = top(5);
  const long long everything = search_plans(c, o).value.candidates;
  o.fixed = {"tp", "pp", "recompute"};
  const Result<SearchResult> r = search_plans(c, o);
  REQUIRE(r.ok());
  CHECK(r.value.candidates < everything);
  REQUIRE_FALSE(r.value.best.empty());
  for (const RankedPlan& p : r.value.best)
    CHECK(std::tie(p.plan.tp, p.plan.pp, p.plan.recompute) == std::tie(c.plan.tp, c.plan.pp, c.plan.recompute));
}

TEST_CASE("the merge of the parts of any partition of the items is the one-shot search", "[search][shards]") {
  // 70B on 64 H100s: plans fit; 405B on 8: none fits, so the merge asks for the second pass.
  const auto [model, gpus, batch] = GENERATE(std::make_tuple("llama3-70b", 64, 64), std::make_tuple("mixtral-8x22b", 16, 32),
                                             std::make_tuple("llama3-405b", 8, 8));
  const int shards = GENERATE(1, 3, 7);
  Config c = test::config(model, "dgx-h100", 1, 1, 1, 8192, batch);
  c.cluster.gpus = gpus;
  CAPTURE(model, gpus, shards);
  const SearchOptions o = top(10);
  const Result<SearchResult> one = search_plans(c, o);
  REQUIRE(one.ok());
  const long long items = search_items(c, o);
  REQUIRE(items > shards);
  auto merged = [&](bool memory_prune) {
    std::vector<SearchPart> parts;
    for (int k = 0; k < shards; ++k) {  // shard k: items [k·I/n, (k+1)·I/n)
      const long long first = k * items / shards, last = (k + 1) * items / shards;
      const Result<SearchPart> p = search_part(c, o, first, last - first, memory_prune);
      REQUIRE(p.ok());
      REQUIRE(p.value.items == items);
      REQUIRE(p.value.order.size() == p.value.result.best.size());
      parts.push_back(p.value);
    }
    // Merging in two halves, then the halves, gives the same as merging all at once.
    const std::vector<SearchPart> first(parts.begin(), parts.begin() + shards / 2), second(parts.begin() + shards / 2, parts.end());
    const SearchPart all = merge_search_parts(parts, o.top);
    const SearchPart halves = merge_search_parts({merge_search_parts(first, o.top), merge_search_parts(second, o.top)}, o.top);
    CHECK(all.order == halves.order);
    return all;
  };
  SearchPart m = merged(true);
  CHECK(needs_second_pass(m.result) == (one.value.fitting == 0 && m.result.pruned_memory > 0));
  if (needs_second_pass(m.result)) m = merged(false);
  const SearchResult &a = one.value, &b = m.result;
  CHECK(a.candidates == b.candidates);
  CHECK(a.pruned_invalid == b.pruned_invalid);
  CHECK(a.pruned_equivalent == b.pruned_equivalent);
  CHECK(a.pruned_memory == b.pruned_memory);
  CHECK(a.evaluated == b.evaluated);
  CHECK(a.valid == b.valid);
  CHECK(a.fitting == b.fitting);
  REQUIRE(a.best.size() == b.best.size());
  for (size_t i = 0; i < a.best.size(); ++i) {
    const Plan &x = a.best[i].plan, &y = b.best[i].plan;
    CHECK(a.best[i].step_s == b.best[i].step_s);
    CHECK(a.best[i].peak_memory_bytes == b.best[i].peak_memory_bytes);
    CHECK(std::tie(x.tp, x.pp, x.cp, x.ep, x.dp, x.etp, x.vpp, x.micro_batch, x.zero, x.distributed_optimizer, x.sp,
                   x.tp_comm_overlap) == std::tie(y.tp, y.pp, y.cp, y.ep, y.dp, y.etp, y.vpp, y.micro_batch, y.zero,
                                                  y.distributed_optimizer, y.sp, y.tp_comm_overlap));
    CHECK(x.schedule == y.schedule);
    CHECK(x.recompute == y.recompute);
    CHECK(x.recompute_modules == y.recompute_modules);
  }
}

TEST_CASE("a negative range is an error, a range beyond the items an empty part", "[search][shards]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 1, 4096, 8);
  c.cluster.gpus = 8;
  REQUIRE(search_part(c, top(3), -1, 3).errors.front().path == "/first");
  REQUIRE(search_part(c, top(3), 0, -1).errors.front().path == "/first");
  const long long items = search_items(c, top(3));
  const Result<SearchPart> p = search_part(c, top(3), items, 10);
  REQUIRE(p.ok());
  CHECK(p.value.items == items);
  CHECK(p.value.result.candidates == 0);
  CHECK(p.value.result.best.empty());
  CHECK(search_part(c, top(3), 0, items + 100).value.result.candidates == search_plans(c, top(3)).value.candidates);
}

TEST_CASE("pieces cut by a time budget, each going on at its next item, merge to the one-shot search", "[search][shards]") {
  Config c = test::config("llama3-70b", "dgx-h100", 1, 1, 1, 8192, 64);
  c.cluster.gpus = 64;
  SearchOptions o = top(10);
  std::vector<SearchPart> parts;
  long long items = 1;
  for (long long first = 0; first < items;) {
    const Result<SearchPart> p = search_part(c, o, first, 1 << 30, true, 1e-9);  // a budget that has always run out: one item
    REQUIRE(p.ok());
    o.step_bound_s = p.value.result.step_bound_s;  // found by the first part, given to the next (search-run.js)
    items = p.value.items;
    REQUIRE(p.value.next > first);
    if (parts.size() < 3) CHECK(p.value.next == first + 1);
    first = p.value.next;
    parts.push_back(p.value);
  }
  CHECK(static_cast<long long>(parts.size()) == items);
  const SearchResult m = merge_search_parts(parts, o.top).result, one = search_plans(c, o).value;
  CHECK(m.candidates == one.candidates);
  CHECK(m.evaluated == one.evaluated);
  REQUIRE(m.best.size() == one.best.size());
  for (size_t i = 0; i < m.best.size(); ++i) CHECK(m.best[i].step_s == one.best[i].step_s);
}

TEST_CASE("divisors_up_to lists the divisors of n up to the limit, ascending", "[search]") {
  // By hand: 36 = 2² · 3²; 4,096 = 2¹²; 49 = 7²; 2,048 · 3 = 6,144 = 2¹¹ · 3.
  CHECK(divisors_up_to(36, 36) == std::vector<int>{1, 2, 3, 4, 6, 9, 12, 18, 36});
  CHECK(divisors_up_to(36, 12) == std::vector<int>{1, 2, 3, 4, 6, 9, 12});
  CHECK(divisors_up_to(36, 5) == std::vector<int>{1, 2, 3, 4});
  CHECK(divisors_up_to(49, 100) == std::vector<int>{1, 7, 49});
  CHECK(divisors_up_to(4096, 4096) == std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096});
  CHECK(divisors_up_to(6144, 128) == std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128});
  CHECK(divisors_up_to(1, 8) == std::vector<int>{1});
  CHECK(divisors_up_to(97, 96) == std::vector<int>{1});
  CHECK(divisors_up_to(12, 0).empty());
}
