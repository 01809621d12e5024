#include <catch2/catch.hpp>

#include "core/placement.h"
#include "core/presets.h"
#include "tests/helpers.h"

using namespace cutlab;

namespace {
Placement placed(const Config& c) { return test::resolved(c).placement; }
}  // namespace

TEST_CASE("TP8 · PP2 on two nodes: TP stays on NVLink, PP crosses nodes", "[placement]") {
  const Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 1, 8192, 16);
  const Placement pl = placed(c);
  REQUIRE(pl.nodes == 2);
  REQUIRE(find_group(pl, Axis::TP)->link == Link::NVLink);
  REQUIRE(find_group(pl, Axis::TP)->nodes_spanned == 1);
  REQUIRE(find_group(pl, Axis::PP)->link == Link::ScaleOut);
  REQUIRE(find_group(pl, Axis::PP)->nodes_spanned == 2);
  // GPU 9 is on node 1: TP rank 1 of stage 1, layers 40–79, heads 8–15 of 64.
  const GpuPlacement g = gpu_placement(test::resolved(c), 9);
  REQUIRE(g.node == 1);
  REQUIRE(g.tp == 1);
  REQUIRE(g.pp == 1);
  REQUIRE(g.first_layer == 40);
  REQUIRE(g.last_layer == 79);
  REQUIRE(g.heads_begin == 8);
  REQUIRE(g.heads_end == 16);
  REQUIRE(g.kv_heads_begin == 1);
  REQUIRE(g.kv_heads_end == 2);
  REQUIRE(g.output);
  REQUIRE_FALSE(g.embedding);
}

TEST_CASE("TP wider than a node crosses the scale-out network", "[placement]") {
  Config c = test::config("llama3-405b", "dgx-h100", 16, 1, 1, 8192, 16);
  const Placement pl = placed(c);  // find_group points into it: keep it alive
  const GroupInfo* tp = find_group(pl, Axis::TP);
  REQUIRE(tp->link == Link::ScaleOut);
  REQUIRE(tp->members_per_node == 8);
  REQUIRE(tp->nodes_spanned == 2);
  SECTION("but not in an NVL72 domain") {
    c.cluster = *find_cluster_preset("gb200-nvl72");
    REQUIRE(find_group(placed(c), Axis::TP)->link == Link::NVLink);
  }
}

TEST_CASE("the rank order decides which groups cross nodes", "[placement]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 1, 8192, 16);
  c.plan.rank_order = "pp-tp-cp-ep-dp";  // PP innermost: a TP group strides over 2 GPUs
  const Placement pl = placed(c);
  REQUIRE(find_group(pl, Axis::PP)->link == Link::NVLink);
  REQUIRE(find_group(pl, Axis::TP)->link == Link::ScaleOut);
  REQUIRE(find_group(pl, Axis::TP)->members_per_node == 4);
}

TEST_CASE("experts are held whole, EP rank e holding E/ep consecutive experts", "[placement]") {
  Config c = test::config("deepseek-v3", "hgx-h800", 1, 16, 2, 4096, 1920);
  c.plan.ep = 64;
  const Placement pl = placed(c);
  REQUIRE(pl.gpus == 2048);
  REQUIRE(find_group(pl, Axis::EP)->link == Link::ScaleOut);
  const GpuPlacement g = gpu_placement(test::resolved(c), 13);
  REQUIRE(g.ep == 13);
  REQUIRE(g.experts_begin == 52);
  REQUIRE(g.experts_end == 56);
  REQUIRE(g.expert_ffn_begin == 0);
  REQUIRE(g.expert_ffn_end == 2048);
}

TEST_CASE("context parallel ranks hold two balanced chunks of the sequence", "[placement]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 1, 8192, 8);
  c.plan.cp = 2;
  const Placement pl = placed(c);
  const GpuPlacement g0 = gpu_placement(test::resolved(c), 0);
  const GpuPlacement g1 = gpu_placement(test::resolved(c), 1);
  REQUIRE(g0.seq_chunks == std::vector<std::pair<int, int>>{{0, 2048}, {6144, 8192}});
  REQUIRE(g1.seq_chunks == std::vector<std::pair<int, int>>{{2048, 4096}, {4096, 6144}});
}

TEST_CASE("interleaved stages hold v chunks of layers, round robin", "[placement]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 4, 1, 8192, 16);
  c.plan.schedule = Schedule::Interleaved;
  c.plan.vpp = 2;
  const Placement pl = placed(c);
  // 80 layers in 8 chunks of 10: stage 1 holds virtual stages 1 and 5.
  REQUIRE(pl.stages[1].chunks == std::vector<std::pair<int, int>>{{10, 19}, {50, 59}});
  REQUIRE(pl.stages[0].embedding);
  REQUIRE(pl.stages[3].output);
}

TEST_CASE("DualPipe stages hold their own stage and the mirrored one", "[placement]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 4, 1, 8192, 16);
  c.plan.schedule = Schedule::DualPipe;
  const Placement pl = placed(c);
  REQUIRE(pl.stages[0].chunks == std::vector<std::pair<int, int>>{{0, 19}, {60, 79}});
  REQUIRE(pl.stages[0].layers == 40);
  REQUIRE(pl.stages[0].embedding);
  REQUIRE(pl.stages[0].output);
}

TEST_CASE("placement of 16,384 GPUs is computed from strides", "[placement]") {
  Config c = test::config("llama3-405b", "dgx-h100", 8, 16, 128, 8192, 2048);
  const Placement pl = placed(c);
  REQUIRE(pl.nodes == 2048);
  REQUIRE(find_group(pl, Axis::DP)->count == 128);
  REQUIRE(find_group(pl, Axis::DP)->nodes_spanned == 128);
  const GpuPlacement last = gpu_placement(test::resolved(c), 16383);
  REQUIRE(last.pp == 15);
  REQUIRE(last.dp == 127);
  REQUIRE(last.tp == 7);
  REQUIRE(last.last_layer == 125);
}

TEST_CASE("a group's link is the worst group's, not rank 0's", "[placement]") {
  // GB200 NVL72, 144 GPUs, TP 16 × PP 9: TP groups are GPUs 16q … 16q + 15; the one of GPUs 64–79
  // spans the two racks (64–71 and 72–79), so every TP collective waits on the scale-out network.
  Config c = test::config("llama3-405b", "gb200-nvl72", 16, 9, 1, 8192, 72);
  const Placement pl = placed(c);
  const GroupInfo* tp = find_group(pl, Axis::TP);
  REQUIRE(tp->nodes_spanned == 2);
  REQUIRE(tp->members_per_node == 8);
  REQUIRE(tp->link == Link::ScaleOut);
  // TP 8 in 72-GPU racks: 72 = 9 × 8, every group inside one rack.
  Config d = test::config("llama3-405b", "gb200-nvl72", 8, 9, 2, 8192, 72);
  REQUIRE(find_group(placed(d), Axis::TP)->link == Link::NVLink);
}

TEST_CASE("a group over several axes is judged on its worst group, not rank 0's", "[placement]") {
  // GB200 NVL72 (72 GPUs a rack), 128 GPUs = TP 4 × CP 2 × DP 4 × PP 4, rank order tp-cp-ep-dp-pp:
  // strides tp 1, cp 4, dp 8, pp 32. A dense-gradient group (DP × CP) is the 8 ranks
  // b + {0, 4, 8, …, 28}, b = tp offset t (0–3) + 32·pp. Rank 0's (0–28) lies in rack 0, but the
  // group of b = 64 + t holds 64 + t and 68 + t in rack 0 (GPUs 0–71) and the other 6 in rack 1:
  // 2 racks, 2 members on the thinner one, scale-out.
  Config c = test::config("llama3-70b", "gb200-nvl72", 4, 4, 4, 8192, 64);
  c.plan.cp = 2;
  const Placement pl = placed(c);
  const GroupInfo* dpg = find_group(pl, Axis::DPGrad);
  REQUIRE(dpg->size == 8);
  REQUIRE(dpg->nodes_spanned == 2);
  REQUIRE(dpg->members_per_node == 2);
  REQUIRE(dpg->link == Link::ScaleOut);
  // The DP group alone: b + {0, 8, 16, 24} with b = 64 + t + 4·cp has one member (64 + t + 4·cp ≤ 71)
  // in rack 0 and three in rack 1.
  const GroupInfo* dp = find_group(pl, Axis::DP);
  REQUIRE(dp->nodes_spanned == 2);
  REQUIRE(dp->members_per_node == 1);
  // The estimate's dense-gradient reduction runs on that group's link.
  c.workload.global_batch = 64;
  const auto estimate = evaluate(c);  // kept alive: test::training points into it
  const TrainingEstimate* e = test::training(estimate);
  REQUIRE(e != nullptr);
  bool dp_rows = false;
  for (const CommOp& op : e->comm)
    if (op.axis == Axis::DP) {
      dp_rows = true;
      REQUIRE(op.link == Link::ScaleOut);
    }
  REQUIRE(dp_rows);
  // 8-GPU nodes: every DP × CP group (span 29 ranks) of the 16 lies on 4 nodes, 2 members on each
  // (b + {0, 4} on one node since b ≡ t mod 8, t ≤ 3).
  Config d = c;
  d.cluster = *find_cluster_preset("dgx-h100");
  const Placement pd = placed(d);  // find_group points into it: keep it alive
  const GroupInfo* h = find_group(pd, Axis::DPGrad);
  REQUIRE(h->nodes_spanned == 4);
  REQUIRE(h->members_per_node == 2);
}

TEST_CASE("with the embedding and the loss counted, PP 16 × VP 8 holds 126 layers in 128 chunks", "[placement]") {
  // Virtual stage k·16 + s is chunk k of stage s; virtual stage 0 is the embedding alone, virtual
  // stage j (1–126) layer j − 1, virtual stage 127 the loss alone.
  Config c = test::config("llama3-405b", "gb200-nvl72", 4, 16, 32, 8192, 2048);
  c.plan.vpp = 8;
  c.plan.schedule = Schedule::Interleaved;
  c.plan.embedding_in_pipeline_split = c.plan.loss_in_pipeline_split = true;
  const Placement pl = placed(c);
  const StageInfo& first = pl.stages[0];
  REQUIRE(first.chunks ==
          std::vector<std::pair<int, int>>{{0, -1}, {15, 15}, {31, 31}, {47, 47}, {63, 63}, {79, 79}, {95, 95}, {111, 111}});
  REQUIRE(first.layers == 7);
  REQUIRE(first.embedding_chunk == 0);
  REQUIRE(first.output_chunk == -1);
  REQUIRE(pl.stages[1].chunks.front() == std::pair<int, int>{0, 0});
  REQUIRE(pl.stages[1].layers == 8);
  const StageInfo& last = pl.stages[15];
  REQUIRE(last.chunks.back() == std::pair<int, int>{126, 125});  // empty: the loss alone
  REQUIRE(last.layers == 7);
  REQUIRE(last.output_chunk == 7);
  REQUIRE(last.output);
  // A GPU of stage 0 holds layers 15 … 111 (its first non-empty chunk to its last).
  const GpuPlacement g = gpu_placement(test::resolved(c), 0);
  REQUIRE(g.first_layer == 15);
  REQUIRE(g.last_layer == 111);
  REQUIRE(g.embedding);
}
