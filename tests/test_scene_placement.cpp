#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "core/scene_placement.h"
#include "scene_helpers.h"

using namespace cutlab;
using cutlab::test::count_kind;
using cutlab::test::evaluated;
using cutlab::test::has_text;
using cutlab::test::require_inside;

namespace {

// The README example: Llama 3 70B, TP 8 × PP 2 on two DGX H100 nodes.
const char* kTp8Pp2 = R"({"model": "llama3-70b", "cluster": "dgx-h100",
  "plan": {"tp": 8, "pp": 2, "dp": 1, "sp": true, "recompute": "selective"},
  "workload": {"seq_len": 8192, "global_batch": 16}})";

// Llama 3 405B on 16,384 H100: TP 8 × PP 16 × DP 128.
const char* k405b = R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384},
  "plan": {"tp": 8, "pp": 16, "sp": true, "recompute": "full", "distributed_optimizer": true},
  "workload": {"seq_len": 8192, "global_batch": 2048}})";

size_t items(const Figure& f) { return f.rects.size() + f.lines.size() + f.texts.size(); }

}  // namespace

TEST_CASE("16 GPUs: every GPU drawn once, with what it holds", "[scene][placement]") {
  const auto [c, e] = evaluated(kTp8Pp2);
  const Figure f = placement_scene(c, e, 1000);
  REQUIRE(f.view == "placement");
  REQUIRE(f.level == "full");
  REQUIRE(count_kind(f, "gpu") == 16);
  REQUIRE(count_kind(f, "node") == 2);
  std::set<int> ranks;
  for (const FigureRect& r : f.rects)
    if (r.kind == "gpu") {
      ranks.insert(r.rank);
      REQUIRE(r.hit == "gpu");
      REQUIRE(r.stage == r.rank / 8);  // TP innermost: GPUs 0–7 hold stage 0, 8–15 stage 1
      REQUIRE(r.node == r.rank / 8);
    }
  REQUIRE(ranks.size() == 16);
  REQUIRE(*ranks.rbegin() == 15);
  REQUIRE(has_text(f, "16 × H100 SXM in 2 nodes of 8"));
  REQUIRE(has_text(f, "GPU 0"));
  REQUIRE(has_text(f, "GPU 15"));
  REQUIRE(has_text(f, "node 1"));
  REQUIRE(has_text(f, "heads 56–63"));   // TP rank 7 of 64 heads
  REQUIRE(has_text(f, "layers 41–80"));  // stage 2
  REQUIRE(has_text(f, "NVLink · TP"));   // TP traffic inside the node
  REQUIRE(has_text(f, "scale-out network · PP"));
  require_inside(f);
}

TEST_CASE("the link inside a node goes by the cluster's name for it: PCIe on a server without NVLink", "[scene][placement]") {
  const auto [c, e] = evaluated(R"({"model": "llama3-8b", "cluster": "rtx-pro-6000-server", "plan": {"tp": 4, "pp": 2},
    "workload": {"seq_len": 4096, "global_batch": 16}})");
  REQUIRE(c.config.cluster.node_link == "PCIe");
  const Figure f = placement_scene(c, e, 1000);
  bool pcie = false, nvlink = false;
  for (const FigureText& t : f.texts) {
    pcie = pcie || t.text.find("PCIe") != std::string::npos;
    nvlink = nvlink || t.text.find("NVLink") != std::string::npos;
  }
  REQUIRE(pcie);
  REQUIRE_FALSE(nvlink);
  // and a preset with NVLink keeps its name
  const auto [c2, e2] = evaluated(kTp8Pp2);
  REQUIRE(has_text(placement_scene(c2, e2, 1000), "NVLink 450 GB/s per GPU inside a node"));
}

TEST_CASE("replica ids follow placement.cpp: dp·ep + ep without folding", "[scene][placement]") {
  // Qwen2-57B-A14B on 32 GPUs, TP 2 × EP 4 × DP 4, rank order tp-cp-ep-dp-pp: strides tp 1, ep 2, dp 8 (SP, as Megatron needs with EP
  // × TP).
  const auto [c, e] = evaluated(R"({"model": "qwen2-57b-a14b", "cluster": {"preset": "dgx-h100", "gpus": 32},
    "plan": {"tp": 2, "ep": 4, "dp": 4, "sp": true}, "workload": {"seq_len": 4096, "global_batch": 64}})");
  const Figure f = placement_scene(c, e, 1200);
  REQUIRE(f.level == "full");
  std::map<int, int> replica;
  for (const FigureRect& r : f.rects)
    if (r.kind == "gpu") replica[r.rank] = r.replica;
  REQUIRE(replica.size() == 32);
  // by hand: rank → (tp = r mod 2, ep = ⌊r/2⌋ mod 4, dp = ⌊r/8⌋) → replica = dp·4 + ep
  REQUIRE(replica[0] == 0);
  REQUIRE(replica[1] == 0);    // tp 1, ep 0, dp 0
  REQUIRE(replica[3] == 1);    // tp 1, ep 1, dp 0
  REQUIRE(replica[13] == 6);   // tp 1, ep 2, dp 1
  REQUIRE(replica[31] == 15);  // tp 1, ep 3, dp 3
  REQUIRE(has_text(f, "DP replica 6"));
  // EP all-to-all runs between replicas (different dense copies); TP never does.
  REQUIRE(crosses_replicas(c, Axis::EP));
  REQUIRE(crosses_replicas(c, Axis::DP));
  REQUIRE_FALSE(crosses_replicas(c, Axis::TP));
  REQUIRE_FALSE(crosses_replicas(c, Axis::ETP));
  require_inside(f);
}

TEST_CASE("512 GPUs: a cell per GPU coloured by the axis inside a node", "[scene][placement]") {
  const auto [c, e] = evaluated(R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 512},
    "plan": {"tp": 8, "pp": 4}, "workload": {"seq_len": 8192, "global_batch": 512}})");
  const Figure f = placement_scene(c, e, 1000);
  REQUIRE(f.level == "cells");
  REQUIRE(count_kind(f, "cell") == 512);
  REQUIRE(count_kind(f, "node_small") == 64);
  for (const FigureRect& r : f.rects)
    if (r.kind == "cell") {
      REQUIRE(r.tone == "tp");
      REQUIRE(r.tone_index == r.rank % 8);
      REQUIRE(r.tone_count == 8);
    }
  require_inside(f);
}

TEST_CASE("folding: the expert mesh drawn on the same GPUs as the attention mesh", "[scene][placement]") {
  // The Mixtral 8x22B folding example (web/examples.js): attention TP 2 × DP 8, experts ETP 1 × EP 8
  // × EDP 2, PP 8 on 128 H100. Rank order tp-cp-ep-dp-pp: inside a stage of 16 GPUs the attention
  // mesh's TP rank is r mod 2; the expert mesh's EP rank (ETP 1, innermost) is r mod 8.
  const auto [c, e] = evaluated(R"({"model": "mixtral-8x22b", "cluster": {"preset": "dgx-h100", "gpus": 128},
    "plan": {"tp": 2, "pp": 8, "ep": 8, "etp": 1, "sp": true, "vpp": 7, "schedule": "interleaved"},
    "workload": {"seq_len": 4096, "global_batch": 256}})");
  const Figure f = placement_scene(c, e, 1000);
  REQUIRE(f.level == "cells");
  REQUIRE(count_kind(f, "cell") == 128);
  REQUIRE(count_kind(f, "cell_strip") == 128);
  std::map<double, int> strip_ep;  // a strip's top-left corner → its EP rank
  for (const FigureRect& r : f.rects)
    if (r.kind == "cell_strip") {
      REQUIRE(r.tone == "ep");
      REQUIRE(r.tone_count == 8);
      strip_ep[r.x * 1e6 + r.y] = r.tone_index;
    }
  int checked = 0;
  for (const FigureRect& r : f.rects)
    if (r.kind == "cell") {
      REQUIRE(r.tone == "tp");
      REQUIRE(r.tone_index == r.rank % 2);
      // the strip along this cell's bottom carries the same GPU's EP rank
      for (const FigureRect& s : f.rects)
        if (s.kind == "cell_strip" && s.x == r.x && s.y > r.y && s.y + s.h == Approx(r.y + r.h)) {
          REQUIRE(s.tone_index == r.rank % 8);
          REQUIRE(s.w == r.w);
          ++checked;
        }
    }
  REQUIRE(checked == 128);
  REQUIRE(has_text(f, "TP rank inside a node (attention mesh)"));
  REQUIRE(has_text(f, "EP rank in the expert mesh (strip)"));
  require_inside(f);
}

TEST_CASE("folding, every GPU drawn: each card says where it sits in the expert mesh", "[scene][placement]") {
  // Mixtral 8x22B on 16 GPUs: attention TP 2 × DP 4 × PP 2, experts ETP 2 × EP 4 (EDP 1). Inside a
  // stage: TP rank r mod 2, ETP rank r mod 2, EP rank ⌊r/2⌋ mod 4, 2 of the 8 experts each.
  const auto [c, e] = evaluated(R"({"model": "mixtral-8x22b", "cluster": {"preset": "dgx-h100", "gpus": 16},
    "plan": {"tp": 2, "pp": 2, "ep": 4, "etp": 2, "sp": true}, "workload": {"seq_len": 4096, "global_batch": 64}})");
  // 950 px (the page at 1280): two nodes side by side, cards wide enough for the coordinates
  const Figure f = placement_scene(c, e, 950);
  REQUIRE(f.level == "full");
  REQUIRE(has_text(f, "experts 0–1 · EP 0 ETP 0"));
  REQUIRE(has_text(f, "experts 2–3 · EP 1 ETP 1"));  // GPU 3
  REQUIRE(has_text(f, "experts 6–7 · EP 3 ETP 1"));  // GPU 15
  require_inside(f);
  // narrower cards keep what the GPU holds and drop the coordinates (the hover still has them)
  const Figure narrow = placement_scene(c, e, 1200);
  REQUIRE(has_text(narrow, "experts 0–1"));
  require_inside(narrow);
}

TEST_CASE("a phone-wide placement says its header, node and link labels whole", "[scene][placement]") {
  // 358 px: the canvas of a 390-px phone. The labels pick a shorter form that fits rather than
  // being cut with "…" by the renderer.
  for (const char* text : {kTp8Pp2, R"({"model": "qwen2-57b-a14b", "cluster": {"preset": "dgx-h100", "gpus": 32},
    "plan": {"tp": 2, "ep": 4, "sp": true}, "workload": {"seq_len": 4096, "global_batch": 64}})"}) {
    const auto [c, e] = evaluated(text);
    const Figure f = placement_scene(c, e, 358);
    for (const FigureText& t : f.texts)
      if (t.kind == "subtitle" || t.kind == "node_stage" || (t.kind == "link_label" && t.text.rfind("scale-out", 0) == 0)) {
        INFO(t.kind << ": " << t.text);
        REQUIRE(t.max_w > 0);
        CHECK(figure::measure_text(t.text, t.font_px, t.weight) <= t.max_w);
      }
    REQUIRE(has_text(f, "per GPU: NVLink 450 GB/s, scale-out 50 GB/s"));
  }
}

TEST_CASE("a phone-wide aggregated view and load balancer say every label whole", "[scene][placement]") {
  // 358 px again: the 405B's interleaved stages (8 chunks each), its headings, link key and note, and
  // eight serving replicas' total, detail and count pick a shorter form or wrap, never "…".
  for (const char* text :
       {k405b, R"({"model": "llama3-8b", "cluster": "dgx-h100", "plan": {"dp": 8}, "workload": {"mode": "infer"}})",
        R"({"model": "llama3-8b", "cluster": "dgx-h100", "plan": {"tp": 8}, "workload": {"mode": "infer", "batch": 8}})"}) {
    const auto [c, e] = evaluated(text);
    const Figure f = placement_scene(c, e, 358);
    for (const FigureText& t : f.texts)
      if (t.max_w > 0) {
        INFO(t.kind << ": " << t.text);
        CHECK(figure::measure_text(t.text, t.font_px, t.weight) <= t.max_w);
      }
    require_inside(f);
  }
  // The page's example: interleaved, 8 chunks of one layer per stage (stage 2: layers 2, 18, …, 114),
  // too many to list at 358 px.
  const auto [c, e] = evaluated(R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384},
    "plan": {"tp": 8, "pp": 16, "sp": true, "distributed_optimizer": true, "schedule": "interleaved", "vpp": 8,
      "embedding_in_pipeline_split": true, "loss_in_pipeline_split": true},
    "workload": {"seq_len": 8192, "global_batch": 2048}})");
  const Figure f = placement_scene(c, e, 358);
  REQUIRE(has_text(f, "8 chunks"));
  REQUIRE_FALSE(has_text(f, "2, 18, 34"));
  for (const FigureText& t : f.texts)
    if (t.max_w > 0) {
      INFO(t.kind << ": " << t.text);
      CHECK(figure::measure_text(t.text, t.font_px, t.weight) <= t.max_w);
    }
  REQUIRE(has_text(placement_scene(c, e, 1000), "2, 18, 34, 50, 66, 82, 98, 114"));  // wide: the list
  // The link key: its two lines one under the other, the scale-out one naming its traffic.
  std::vector<const FigureText*> keys;
  for (const FigureText& t : f.texts)
    if (t.kind == "link_label") keys.push_back(&t);
  REQUIRE(keys.size() == 2);
  CHECK(keys[1]->y > keys[0]->y);
  CHECK(keys[1]->text.rfind("scale-out · DP ", 0) == 0);
}

TEST_CASE("16,384 GPUs aggregate to one row per stage, a few hundred items", "[scene][placement]") {
  const auto [c, e] = evaluated(k405b);
  const Figure f = placement_scene(c, e, 1000);
  REQUIRE(f.level == "stages");
  REQUIRE(count_kind(f, "stage_bar") == 16);
  REQUIRE(items(f) < 1000);
  // every stage: 2,048 / 16 = 128 nodes, all of one kind (TP fills each node)
  std::map<int, int> nodes;
  for (const FigureRect& r : f.rects)
    if (r.kind == "kind_box") nodes[r.stage] += r.count;
  REQUIRE(nodes.size() == 16);
  for (auto [stage, n] : nodes) REQUIRE(n == 128);
  REQUIRE(has_text(f, "stage 16"));
  REQUIRE(has_text(f, "× 128"));
  require_inside(f);
}

TEST_CASE("the aggregated view stays bounded for a million GPUs and 126 stages", "[scene][placement]") {
  auto [c, e] = evaluated(R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 129024},
    "plan": {"tp": 8, "pp": 126}, "workload": {"seq_len": 4096, "global_batch": 128}})");
  const Figure f = placement_scene(c, e, 1000);
  REQUIRE(f.level == "stages");
  REQUIRE(count_kind(f, "stage_bar") == 64);  // the first 64 rows, then one line for the rest
  REQUIRE(has_text(f, "+62 more stages"));
  REQUIRE(items(f) < 20000);
  require_inside(f);
}

TEST_CASE("serving: a load balancer with one box per replica landing on its GPUs", "[scene][placement]") {
  const auto [c, e] = evaluated(R"({"model": "llama3-70b", "cluster": "dgx-h100", "plan": {"tp": 8, "dp": 2},
    "workload": {"mode": "infer", "batch": 8}})");
  const Figure f = placement_scene(c, e, 1000);
  REQUIRE(count_kind(f, "balancer") == 1);
  REQUIRE(count_kind(f, "replica") == 2);
  for (const FigureRect& r : f.rects)
    if (r.kind == "replica") REQUIRE(r.name == "no traffic between replicas");
  REQUIRE(has_text(f, "2 replicas × "));
  require_inside(f);
  // 16,384 GPUs: one stacked card with the count, not 1,024 arrows
  const auto [c2, e2] = evaluated(R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384},
    "plan": {"tp": 8, "pp": 2}, "workload": {"mode": "infer", "batch": 8}})");
  const Figure g = placement_scene(c2, e2, 1000);
  REQUIRE(count_kind(g, "replica") == 0);
  REQUIRE(count_kind(g, "replica_card") == 3);
  REQUIRE(has_text(g, "× 1,024 replicas"));
  require_inside(g);
}

TEST_CASE("serving: each instance drawn in its node, and whose traffic each link carries", "[scene][placement]") {
  // TP 4 × PP 2 × DP 2 on two DGX H100: instance 0 (both stages) on node 0, instance 1 on node 1, the
  // PP hand-off inside the node, nothing between nodes (core/serving_instances.h places them so).
  const auto [c, e] = evaluated(R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 16},
    "plan": {"tp": 4, "pp": 2, "dp": 2}, "workload": {"mode": "infer", "batch": 32, "prompt_len": 1024, "output_len": 256}})");
  const Figure f = placement_scene(c, e, 1000);
  for (const FigureRect& r : f.rects)
    if (r.kind == "gpu") {
      REQUIRE(r.node == r.rank / 8);
      REQUIRE(r.stage == (r.rank / 4) % 2);
    }
  REQUIRE(has_text(f, "NVLink · TP"));
  REQUIRE(has_text(f, "scale-out network · no traffic"));
  // EP 16 × 9 on two 72-GPU racks: 8 instances each inside a rack (their all-gathers on NVLink), one
  // straddling both (its all-gathers on the scale-out network).
  const auto [c2, e2] = evaluated(R"({"model": "deepseek-v3", "cluster": {"preset": "gb200-nvl72", "gpus": 144},
    "plan": {"tp": 1, "ep": 16, "dp": 9}, "workload": {"mode": "infer", "batch": 16, "prompt_len": 1024, "output_len": 256,
    "weight_dtype": "fp4", "kv_dtype": "fp8"}})");
  const Figure g = placement_scene(c2, e2, 1280);
  bool nvlink = false, scaleout = false;
  for (const FigureText& t : g.texts) {
    if (t.kind != "link_label") continue;
    nvlink = nvlink || t.text.rfind("NVLink inside nodes · 8 instances: EP ", 0) == 0;
    scaleout = scaleout || t.text.rfind("scale-out between nodes · 1 instance: EP ", 0) == 0;
  }
  REQUIRE(nvlink);
  REQUIRE(scaleout);
  require_inside(g);
}

TEST_CASE("placement figures fit their frame at every width", "[scene][placement]") {
  const double width = GENERATE(320.0, 700.0, 1280.0);
  for (const char* text : {kTp8Pp2, k405b}) {
    const auto [c, e] = evaluated(text);
    require_inside(placement_scene(c, e, width));
  }
}
