#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "core/scene_cuts.h"
#include "scene_helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;
using cutlab::test::count_kind;
using cutlab::test::evaluated;
using cutlab::test::has_text;
using cutlab::test::require_inside;

namespace {

const char* kTp8Pp2 = R"({"model": "llama3-70b", "cluster": "dgx-h100",
  "plan": {"tp": 8, "pp": 2, "dp": 1, "sp": true, "recompute": "selective"},
  "workload": {"seq_len": 8192, "global_batch": 16}})";

const char* kDeepSeek = R"({"model": "deepseek-v3", "cluster": {"preset": "hgx-h800", "gpus": 2048},
  "plan": {"tp": 1, "pp": 16, "ep": 64, "zero": 1, "schedule": "dualpipe"},
  "workload": {"seq_len": 4096, "global_batch": 15360, "dtype": "fp8"}})";

}  // namespace

TEST_CASE("TP 8: every matrix in 8 slices, one per GPU of rank 0's TP group", "[scene][cuts]") {
  const auto [c, e] = evaluated(kTp8Pp2);
  const Figure f = cuts_scene(c, e, 1000);
  REQUIRE(f.view == "cuts");
  std::map<std::string, std::set<int>> tp_of;
  std::map<std::string, double> width_of;
  for (const FigureRect& r : f.rects)
    if (r.kind == "slice") {
      tp_of[r.name].insert(r.tone_index);
      width_of[r.name] += r.w;
      REQUIRE(r.rank == r.tone_index);  // TP innermost: TP rank i is GPU i
    }
  for (const char* m : {"WQ", "WK", "WV", "WO", "W gate", "W up", "W down"}) {
    INFO(m);
    REQUIRE(tp_of[m].size() == 8);
  }
  // WQ's slices cover its width: 64 heads over 8 ranks, 8 each
  size_t wq = 0;
  for (const FigureRect& r : f.rects) wq += r.kind == "slice" && r.name == "WQ";
  REQUIRE(wq == 8);
  REQUIRE(has_text(f, "Inside layer 1"));
  REQUIRE(has_text(f, "stage 2 · layers 41–80"));
  REQUIRE(has_text(f, "Sequence of 8,192 tokens"));
  // one hover region per layer, the selection on layer 1
  size_t layers = 0;
  for (const FigureRect& r : f.rects) layers += r.hit == "layer";
  REQUIRE(layers == 80);
  REQUIRE(count_kind(f, "selection") == 1);
  require_inside(f);
}

TEST_CASE("an MoE layer opens by default: 256 experts, 4 per EP rank", "[scene][cuts]") {
  const auto [c, e] = evaluated(kDeepSeek);
  REQUIRE(default_cuts_layer(c.config.model) == 3);  // three dense layers first
  REQUIRE(is_moe_layer(c.config.model, 3));
  REQUIRE_FALSE(is_moe_layer(c.config.model, 2));
  const Figure f = cuts_scene(c, e, 1000);
  REQUIRE(has_text(f, "Inside layer 4 (MoE)"));
  REQUIRE(count_kind(f, "expert") == 256);
  for (const FigureRect& r : f.rects)
    if (r.kind == "expert") {
      REQUIRE(r.tone == "ep");
      REQUIRE(r.tone_index == r.expert / 4);
      REQUIRE(r.tone_count == 64);
    }
  REQUIRE(count_kind(f, "router") == 1);
  REQUIRE(count_kind(f, "shared") == 1);
  REQUIRE(count_kind(f, "replicated") == 2);  // MLA's down-projections are not split
  REQUIRE(has_text(f, "128 copies of the dense weights"));
  require_inside(f);
  // a dense layer: no experts
  const Figure d = cuts_scene(c, e, 1000, 0);
  REQUIRE(count_kind(d, "expert") == 0);
  REQUIRE(has_text(d, "Inside layer 1"));
}

TEST_CASE("CP 2 cuts the sequence into 4 load-balanced chunks", "[scene][cuts]") {
  const auto [c, e] = evaluated(R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 32},
    "plan": {"tp": 8, "cp": 2, "pp": 2}, "workload": {"seq_len": 8192, "global_batch": 16}})");
  const Figure f = cuts_scene(c, e, 1000);
  std::map<int, int> tokens;
  for (const FigureRect& r : f.rects)
    if (r.kind == "chunk") tokens[r.tone_index] += r.end - r.begin;
  REQUIRE(tokens.size() == 2);
  REQUIRE(tokens[0] == 4096);  // chunks 0 and 3 of 2,048 tokens
  REQUIRE(tokens[1] == 4096);
  require_inside(f);
}

TEST_CASE("CP: the three ways ranks exchange K/V, the plan's in colour with its traffic", "[scene][cuts]") {
  // Llama 3 405B at 131k with CP 16 over nodes (ring, all-gather); Llama 3 8B with CP 8 in one node
  // (Ulysses needs the 8 KV heads to split over tp × cp).
  const std::string big = R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384},
      "plan": {"tp": 8, "cp": 16, "pp": 16, "sp": true, "cp_comm": "COMM"}, "workload": {"seq_len": 131072, "global_batch": 128}})";
  const std::string small = R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 8},
      "plan": {"cp": 8, "cp_comm": "a2a"}, "workload": {"seq_len": 65536, "global_batch": 8}})";
  struct Case {
    std::string comm, text;
    int last;          // the highest CP rank, drawn last
    const char* link;  // where the CP traffic goes
  };
  for (const Case& k : {Case{"ring", big, 15, "the scale-out network"}, Case{"allgather", big, 15, "the scale-out network"},
                        Case{"a2a", small, 7, "NVLink"}}) {
    std::string text = k.text;
    if (const size_t at = text.find("COMM"); at != std::string::npos) text.replace(at, 4, k.comm);
    const auto [c, e] = evaluated(text);
    const Figure f = cuts_scene(c, e, 1000);
    INFO(k.comm);
    REQUIRE(has_text(f, "How the CP ranks exchange K/V"));
    // the plan's panel in the CP colour, the other two greyed
    int coloured = 0, grey = 0;
    for (const FigureText& t : f.texts)
      if (t.kind == "block" &&
          (t.text == "ring (p2p)" || t.text == "all-gather K/V (Llama 3)" || t.text == "all-to-all of heads (Ulysses)"))
        (t.tone == "cp" ? coloured : grey) += 1;
    REQUIRE(coloured == 1);
    REQUIRE(grey == 2);
    // six ranks drawn: 0–3, "…" (in rank 4's colour), and the last
    std::vector<int> ranks;
    for (const FigureRect& r : f.rects)
      if (r.kind == "cp_rank") ranks.push_back(r.tone_index);
    REQUIRE(ranks == std::vector<int>{0, 1, 2, 3, 4, k.last});
    // ring: 5 hops and the way back; all-gather: 6 arrows up from the bus; all-to-all: none
    int arrows = 0;
    for (const FigureLine& l : f.lines)
      if (l.kind == "arrow" && l.tone == "cp") ++arrows;
    REQUIRE(arrows == (k.comm == "a2a" ? 0 : 6));
    // the traffic line sums the estimate's CP rows
    double bytes = 0;
    for (const CommOp& op : std::get<TrainingEstimate>(e).comm)
      if (op.axis == Axis::CP) bytes += op.bytes;
    REQUIRE(bytes > 0);
    REQUIRE(has_text(f, "this plan: " + figure::bytes(bytes) + " per GPU per step over " + k.link));
    require_inside(f);
  }
  // no CP: no such section
  const auto [c1, e1] = evaluated(kTp8Pp2);
  REQUIRE_FALSE(has_text(cuts_scene(c1, e1, 1000), "How the CP ranks exchange K/V"));
}

TEST_CASE("cuts figures fit their frame at every width, training and serving", "[scene][cuts]") {
  const double width = GENERATE(320.0, 700.0, 1280.0);
  for (const char* text : {kTp8Pp2, kDeepSeek,
                           R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384},
                               "plan": {"tp": 8, "cp": 16, "pp": 16, "sp": true}, "workload": {"seq_len": 131072, "global_batch": 128}})",
                           R"({"model": "mixtral-8x22b", "cluster": "dgx-h100", "plan": {"tp": 8, "ep": 8, "etp": 1},
                               "workload": {"mode": "infer", "batch": 8}})"}) {
    const auto [c, e] = evaluated(text);
    require_inside(cuts_scene(c, e, width));
  }
}

TEST_CASE("a model of 4,096 layers keeps one hover region per pixel row", "[scene][cuts]") {
  const auto [c, e] = evaluated(R"({"model": {"name": "deep", "layers": 4096, "hidden": 1024, "heads": 16, "vocab": 32000},
    "cluster": "dgx-h100", "plan": {"tp": 8, "pp": 8}, "workload": {"seq_len": 2048, "global_batch": 64}})");
  const Figure f = cuts_scene(c, e, 1000, 4000);
  size_t regions = 0, first = 0;
  for (const FigureRect& r : f.rects)
    if (r.hit == "layer") regions++, first += r.layer == 0;
  REQUIRE(first == 1);
  REQUIRE(static_cast<double>(regions) <= f.height);
  REQUIRE(has_text(f, "Inside layer 4001"));
  REQUIRE(f.rects.size() + f.lines.size() + f.texts.size() < 2000);
  require_inside(f);
}
