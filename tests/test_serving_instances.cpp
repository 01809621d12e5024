#include <catch2/catch.hpp>

#include <set>

#include "core/disaggregation.h"
#include "core/estimate.h"
#include "core/placement.h"
#include "core/serving_instances.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

namespace {

// DeepSeek-V3 in fp4 with an fp8 KV cache, attention data-parallel over EP `ep`, `gpus` GPUs of
// `cluster` in nodes of `per_node`.
Config deepseek(const char* cluster, int per_node, int ep, int gpus) {
  Config c = test::config("deepseek-v3", cluster, 1, 1, gpus / ep, 4096, 1);
  c.cluster.gpus_per_node = per_node;
  c.cluster.gpus = gpus;
  c.plan.ep = ep;
  c.workload.mode = Mode::Infer;
  c.workload.batch = 16;
  c.workload.prompt_len = 1024;
  c.workload.output_len = 256;
  c.workload.weight_dtype = WeightDtype::FP4;
  c.workload.kv_dtype = KvDtype::FP8;
  return c;
}

}  // namespace

TEST_CASE("whole instances: as many as each node holds, by hand", "[serving_instances]") {
  // 72-GPU racks (GB200 NVL72), instances of 16: 4 per rack, 8 GPUs left in each.
  REQUIRE(whole_instances(64, 72, 16) == 4);   // one partial rack of 64
  REQUIRE(whole_instances(128, 72, 16) == 7);  // 72 + 56: 4 + 3
  REQUIRE(whole_instances(144, 72, 16) == 8);  // two racks: 8 of the 9 a plan of 144 would run
  REQUIRE(whole_instances(144, 72, 32) == 4);  // 2 per rack
  REQUIRE(whole_instances(160, 72, 32) == 4);  // 72 + 72 + 16: 2 + 2 + 0
  REQUIRE(whole_instances(16, 8, 8) == 2);     // sizes that divide the node: every one
  REQUIRE(whole_instances(4, 8, 1) == 4);
  // Larger than a node: ⌈g/C⌉ whole nodes each.
  REQUIRE(whole_instances(288, 72, 144) == 2);  // two racks each
  REQUIRE(whole_instances(236, 72, 96) == 1);   // three whole racks (and 20 GPUs): one instance of two racks
  REQUIRE(whole_instances(0, 72, 16) == 0);
  // The disaggregated placement (instances_fit) agrees with one kind alone.
  for (long long N : {64, 128, 144, 160, 236, 288})
    for (int g : {1, 12, 16, 32, 96, 144}) {
      const long long w = whole_instances(N, 72, g);
      CHECK(instances_fit(N, 72, g, w, 1, 0));
      CHECK_FALSE(instances_fit(N, 72, g, w + 1, 1, 0));
    }
}

TEST_CASE("co-located serving instances are placed whole, and the ones left straddle", "[serving_instances]") {
  // EP 16 on GB200 NVL72. Four instances in one 64-GPU part of a rack: each within the rack, as one
  // instance alone.
  const InferenceEstimate one = test::inference(deepseek("gb200-nvl72", 72, 16, 16));
  const InferenceEstimate four = test::inference(deepseek("gb200-nvl72", 72, 16, 64));
  REQUIRE(four.instances == 4);
  REQUIRE(four.instances_whole == 4);
  REQUIRE_THAT(four.tpot_s, WithinRel(one.tpot_s, 1e-9));
  REQUIRE_THAT(four.output_tokens_per_s_total, WithinRel(4 * one.output_tokens_per_s_total, 1e-9));
  // 128 GPUs (a rack of 72 and 56 GPUs of the next) hold 4 + 3 instances whole; the eighth takes 8
  // GPUs of each rack, as an EP 16 instance does on two nodes of 8 GPUs, its all-to-all over the
  // scale-out network. The deployment serves 7 whole instances and that one; its latencies are
  // the straddling one's.
  const InferenceEstimate across = test::inference(deepseek("gb200-nvl72", 8, 16, 16));
  const InferenceEstimate eight = test::inference(deepseek("gb200-nvl72", 72, 16, 128));
  REQUIRE(eight.instances == 8);
  REQUIRE(eight.instances_whole == 7);
  REQUIRE(across.tpot_s > 1.5 * one.tpot_s);
  REQUIRE_THAT(eight.tpot_s, WithinRel(across.tpot_s, 1e-9));
  REQUIRE_THAT(eight.output_tokens_per_s_total, WithinRel(7 * one.output_tokens_per_s_total + across.output_tokens_per_s_total, 1e-9));
  REQUIRE_THAT(eight.output_tokens_per_s_per_gpu, WithinRel(eight.output_tokens_per_s_total / 128, 1e-9));
}

TEST_CASE("a serving instance's pipeline stages sit in its node", "[serving_instances]") {
  // Llama 3 70B at TP 4 × PP 2 × DP 2 on two DGX H100. In the training rank order (pp outermost) the
  // stages of a replica are 8 ranks apart, on two nodes; an engine runs each instance on the 8 GPUs
  // of one node, so the hand-off goes over NVLink and the deployment serves 2 × one instance.
  Config c = test::config("llama3-70b", "dgx-h100", 4, 2, 2, 4096, 1);
  c.cluster.gpus = 16;
  c.workload.mode = Mode::Infer;
  c.workload.batch = 32;
  c.workload.prompt_len = 1024;
  c.workload.output_len = 256;
  Config single = c;
  single.plan.dp = 1;
  single.cluster.gpus = 8;
  const InferenceEstimate two = test::inference(c), one = test::inference(single);
  REQUIRE(two.instances == 2);
  REQUIRE(two.instances_whole == 2);
  bool pp_seen = false;
  for (const CommOp& op : two.comm) {
    if (op.axis != Axis::PP) continue;
    pp_seen = true;
    CHECK(op.link == Link::NVLink);
  }
  REQUIRE(pp_seen);
  REQUIRE_THAT(two.tpot_s, WithinRel(one.tpot_s, 1e-9));
  REQUIRE_THAT(two.output_tokens_per_s_total, WithinRel(2 * one.output_tokens_per_s_total, 1e-9));
}

TEST_CASE("serving lays out one instance after another, as it prices them", "[serving_instances][placement]") {
  // The same deployment: the placement (the view, `cutlab gpu --rank`) puts instance 0 on GPUs 0–7 of
  // node 0 (stage 0 on GPUs 0–3, stage 1 on 4–7) and instance 1 on node 1, dp outermost; training keeps
  // Megatron's order, where GPU 4 is replica 1's first stage and the stages are 8 ranks apart.
  Config c = test::config("llama3-70b", "dgx-h100", 4, 2, 2, 4096, 1);
  c.cluster.gpus = 16;
  Config serve = c;
  serve.workload.mode = Mode::Infer;
  serve.workload.batch = 32;
  serve.workload.prompt_len = 1024;
  serve.workload.output_len = 256;
  REQUIRE(placed_rank_order(c) == "tp-cp-ep-dp-pp");
  REQUIRE(placed_rank_order(serve) == "tp-cp-ep-pp-dp");
  const Resolved r = test::resolved(serve);
  REQUIRE(r.placement.stride_pp == 4);
  REQUIRE(r.placement.stride_dp == 8);
  const GpuPlacement g4 = gpu_placement(r, 4), g8 = gpu_placement(r, 8);
  REQUIRE(g4.node == 0);
  REQUIRE(g4.dp == 0);
  REQUIRE(g4.pp == 1);
  REQUIRE(g4.first_layer == 40);
  REQUIRE(g8.node == 1);
  REQUIRE(g8.dp == 1);
  REQUIRE(g8.pp == 0);
  REQUIRE(find_group(r.placement, Axis::PP)->link == Link::NVLink);
  const GpuPlacement t4 = gpu_placement(test::resolved(c), 4);
  REQUIRE(t4.dp == 1);
  REQUIRE(t4.pp == 0);
  REQUIRE(find_group(test::resolved(c).placement, Axis::PP)->link == Link::ScaleOut);
  SECTION("the plan's order orders the axes inside an instance") {
    serve.plan.rank_order = "pp-dp-tp-cp-ep";
    REQUIRE(placed_rank_order(serve) == "pp-tp-cp-ep-dp");
    REQUIRE(find_group(test::resolved(serve).placement, Axis::TP)->link == Link::NVLink);
    REQUIRE(gpu_placement(test::resolved(serve), 1).pp == 1);
  }
  SECTION("experts folded over the data-parallel ranks make the mesh one instance: the plan's order stands") {
    Config moe = test::config("mixtral-8x22b", "dgx-h100", 2, 1, 4, 4096, 1);
    moe.workload.mode = Mode::Infer;
    moe.plan.ep = 4;
    moe.plan.etp = 1;
    moe.plan.sp = true;
    REQUIRE(placed_rank_order(moe) == moe.plan.rank_order);
  }
}

TEST_CASE("instances that do not tile the racks are laid out as a launcher places them", "[serving_instances][placement]") {
  // DeepSeek-V3 at EP 32 × 9 on four 72-GPU racks: each rack holds 2 instances from its first GPU
  // (GPUs 0–63 of rack 0 are instances 0 and 1) and leaves 8 GPUs over (64–71); the 9th instance takes
  // the 4 racks' leftovers, 8 on each. Laid out rank after rank instead, 3 instances would straddle.
  Config c = deepseek("gb200-nvl72", 72, 32, 288);
  const Resolved r = test::resolved(c);
  REQUIRE(r.placement.launch_instance_gpus == 32);
  struct Expect {
    int gpu, node, dp, ep;
  };
  for (const Expect& x : {Expect{0, 0, 0, 0}, Expect{63, 0, 1, 31}, Expect{64, 0, 8, 0}, Expect{71, 0, 8, 7}, Expect{72, 1, 2, 0},
                          Expect{136, 1, 8, 8}, Expect{287, 3, 8, 31}, Expect{216, 3, 6, 0}}) {
    const GpuPlacement g = gpu_placement(r, x.gpu);
    CHECK(g.rank == x.gpu);
    CHECK(g.node == x.node);
    CHECK(g.dp == x.dp);
    CHECK(g.ep == x.ep);
    CHECK(g.experts_begin == x.ep * 8);
  }
  // Every GPU holds a different (instance, EP rank): the layout is a permutation of the ranks.
  std::set<std::pair<int, int>> seen;
  for (int gpu = 0; gpu < 288; ++gpu) {
    const GpuPlacement g = gpu_placement(r, gpu);
    seen.insert({g.dp, g.ep});
  }
  REQUIRE(seen.size() == 288);
  // The worst EP group is the 9th instance's: 4 racks, 8 GPUs on each.
  const GroupInfo* ep = find_group(r.placement, Axis::EP);
  REQUIRE(ep->nodes_spanned == 4);
  REQUIRE(ep->members_per_node == 8);
  REQUIRE(ep->link == Link::ScaleOut);
  const InferenceEstimate s = test::inference(c);
  REQUIRE(s.instances == 9);
  REQUIRE(s.instances_whole == 8);
  SECTION("instances that tile the nodes keep the ranks in order") {
    REQUIRE(test::resolved(deepseek("gb200-nvl72", 8, 16, 144)).placement.launch_instance_gpus == 0);
    REQUIRE(test::resolved(deepseek("gb200-nvl72", 64, 32, 128)).placement.launch_instance_gpus == 0);
  }
}
