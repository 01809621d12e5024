#include <catch2/catch.hpp>

#include <cmath>

#include "core/comm.h"
#include "core/compute.h"
#include "core/estimate.h"
#include "core/json_io.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
TrainingEstimate run(const Config& c) {
  const Result<Estimate> r = evaluate(c);
  const TrainingEstimate* t = test::training(r);
  REQUIRE(t);
  return *t;
}
}  // namespace

TEST_CASE("the time breakdown adds up to the step time", "[estimate]") {
  Config c = GENERATE(test::config("llama3-70b", "dgx-h100", 8, 2, 4, 8192, 64),
                      test::config("llama3-405b", "dgx-h100", 8, 16, 128, 8192, 2048),
                      test::config("gpt3-175b", "dgx-a100", 8, 8, 16, 2048, 1536),
                      test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 64));
  c.plan.sp = c.plan.tp > 1;
  c.plan.recompute = Recompute::Selective;
  const TrainingEstimate e = run(c);
  REQUIRE_THAT(e.breakdown.total_s(), WithinRel(e.step_s, 1e-9));
  REQUIRE(e.breakdown.pp_bubble_s >= 0);
  REQUIRE(e.breakdown.dp_exposed_s >= 0);
}

TEST_CASE("MFU, tokens/s and model FLOPs are consistent", "[estimate]") {
  const Config c = test::config("llama3-70b", "dgx-h100", 8, 2, 4, 8192, 64);
  const TrainingEstimate e = run(c);
  REQUIRE_THAT(e.tokens_per_s, WithinRel(64.0 * 8192 / e.step_s, 1e-12));
  REQUIRE_THAT(e.mfu, WithinRel(e.model_flops_per_step / (e.step_s * 64 * 989e12), 1e-12));
  REQUIRE(e.mfu > 0.05);
  REQUIRE(e.mfu < 1.0);
  REQUIRE(e.peak_name == "bf16 dense 989 TFLOP/s");
}

TEST_CASE("without a pipeline or peers the step is the compute plus the optimizer", "[estimate]") {
  const Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 1, 4096, 4);
  const TrainingEstimate e = run(c);
  const StageTime& s = e.stages[0];
  REQUIRE_THAT(e.step_s, WithinRel(4 * (s.f_s + s.b_s + s.w_s) + e.breakdown.optimizer_s, 1e-12));
  REQUIRE(e.comm.empty());
  REQUIRE_THAT(e.breakdown.pp_bubble_s, WithinAbs(0.0, 1e-12));
}

TEST_CASE("the pipeline bubble shrinks with more micro-batches", "[estimate]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 4, 1, 4096, 8);
  const double few = run(c).schedule.bubble_fraction;
  c.workload.global_batch = 64;
  const double many = run(c).schedule.bubble_fraction;
  REQUIRE(many < few);
  // 1F1B with nearly equal stages: (p − 1)/(m + p − 1).
  REQUIRE_THAT(many, WithinAbs(3.0 / 67.0, 0.03));
}

TEST_CASE("keeping TP inside the NVLink domain is faster than crossing nodes", "[estimate]") {
  Config inside = test::config("llama3-70b", "dgx-h100", 8, 2, 1, 4096, 16);
  Config across = inside;
  across.plan.rank_order = "pp-tp-cp-ep-dp";  // TP strided over both nodes, 4 GPUs in each
  // Inside: 2(n−1)/n·S over NVLink at 360 GB/s. Across: the inter-node half of the ring moves
  // S/4 per NIC at 40 GB/s (= S/160 GB/s vs S/206 GB/s) plus 15 hops of scale-out latency.
  REQUIRE(run(across).breakdown.tp_exposed_s > 1.25 * run(inside).breakdown.tp_exposed_s);
}

TEST_CASE("a plan that does not fit is a result, not an error", "[estimate]") {
  const Config c = test::config("llama3-405b", "dgx-h100", 8, 1, 1, 8192, 8);
  const TrainingEstimate e = run(c);
  REQUIRE_FALSE(e.memory.fits);
  REQUIRE(e.memory.overflow_bytes > 0);
}

TEST_CASE("invalid input returns every error and no estimate", "[estimate]") {
  Config c = test::config("llama3-70b", "dgx-h100", 3, 2, 4, 8192, 63);
  Result<Estimate> r = evaluate(c);
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.errors.size() >= 2);
}

TEST_CASE("data-parallel traffic of ZeRO-3 exceeds ZeRO-1's", "[estimate]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 64, 4096, 256);
  c.plan.zero = 1;
  auto dp_bytes = [](const TrainingEstimate& e) {
    double b = 0;
    for (const CommOp& op : e.comm)
      if (op.axis == Axis::DP) b += op.bytes;
    return b;
  };
  const double z1 = dp_bytes(run(c));
  c.plan.zero = 3;
  const double z3 = dp_bytes(run(c));
  // ZeRO-1: reduce-scatter 4Ψ + all-gather 2Ψ; ZeRO-3 with m = 4 micro-batches:
  // 4 × reduce-scatter 4Ψ + 8 × all-gather 2Ψ.
  REQUIRE_THAT(z3 / z1, WithinRel((4 * 4.0 + 8 * 2.0) / 6.0, 1e-9));
  // FSDP2 reshard_after_forward false: the forward's gather serves the backward, 4 × all-gather 2Ψ.
  c.plan.reshard_after_forward = false;
  REQUIRE_THAT(dp_bytes(run(c)) / z1, WithinRel((4 * 4.0 + 4 * 2.0) / 6.0, 1e-9));
}

TEST_CASE("without reshard_after_forward each micro-batch gathers the weights once, behind its forward", "[estimate]") {
  // Llama 3 8B, FSDP over 64 GPUs (8 nodes), 4 micro-batches, no overlap: the all-gather row is
  // 8 calls of 2Ψ (the gathered weights) resharding, 4 without, and its time and exposed time halve.
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 64, 4096, 256);
  c.plan.zero = 3;
  c.plan.overlap_param_gather = false;
  auto gather = [](const TrainingEstimate& e) {
    for (const CommOp& op : e.comm)
      if (op.axis == Axis::DP && op.collective == Collective::AllGather) return op;
    return CommOp{};
  };
  const TrainingEstimate twice = run(c);
  c.plan.reshard_after_forward = false;
  const TrainingEstimate once = run(c);
  const CommOp a = gather(twice), b = gather(once);
  REQUIRE(a.calls == 8.0);
  REQUIRE(b.calls == 4.0);
  REQUIRE(a.message_bytes == b.message_bytes);
  REQUIRE_THAT(b.time_s, WithinRel(a.time_s / 2, 1e-12));
  REQUIRE_THAT(b.exposed_s, WithinRel(a.exposed_s / 2, 1e-12));
  REQUIRE_THAT(twice.breakdown.dp_exposed_s - once.breakdown.dp_exposed_s, WithinRel(a.exposed_s / 2, 1e-9));
  // With overlap the kept gather hides behind the forward only: exposed max(0, ag − η·F) per micro-batch.
  c.plan.overlap_param_gather = true;
  const TrainingEstimate hidden = run(c);
  const CommOp h = gather(hidden);
  const double ag = h.time_s / 4, f = hidden.stages[0].f_s, ov = c.cluster.efficiency.overlap;
  REQUIRE_THAT(h.exposed_s, WithinAbs(4 * std::max(0.0, ag - ov * f), 1e-12));
}

TEST_CASE("the interleaved schedule widens the distributed optimizer's windows to (p·(v−1) + 1)/v passes", "[estimate]") {
  // GPT-3 175B at TP 8 × PP 8, 24 DP replicas over the scale-out network, distributed optimizer with both
  // overlaps. 1F1B: the reduce-scatter hides behind one micro-batch's backward through the stage, the
  // all-gather behind its forward. Interleaved with v = 4 chunks of 3 layers (stage times as 1F1B's: the
  // same layers): Megatron-Core launches each chunk's collectives as that chunk finishes (or starts), over
  // (8·3 + 1)/4 = 6.25 such passes. Exposed: max(0, t − η·window); exposed in both here.
  Config c = test::config("gpt3-175b", "dgx-h100", 8, 8, 24, 2048, 1536);
  c.plan.distributed_optimizer = true;
  c.cluster.nvlink_bytes_per_s = 1e16, c.cluster.nvlink_latency_s = 0;  // TP all but free: stage times are compute
  auto dp = [](const TrainingEstimate& e, Collective k) {
    for (const CommOp& op : e.comm)
      if (op.axis == Axis::DP && op.collective == k) return op;
    return CommOp{};
  };
  const double ov = c.cluster.efficiency.overlap;
  for (const int v : {1, 4}) {
    c.plan.schedule = v == 1 ? Schedule::OneFOneB : Schedule::Interleaved;
    c.plan.vpp = v;
    const TrainingEstimate e = run(c);
    const StageTime& st = e.stages[static_cast<size_t>(e.comm_stage)];
    const double widen = v == 1 ? 1.0 : 6.25;
    const CommOp rs = dp(e, Collective::ReduceScatter), ag = dp(e, Collective::AllGather);
    REQUIRE(rs.exposed_s > 0);
    REQUIRE(ag.exposed_s > 0);
    REQUIRE_THAT(rs.exposed_s, WithinRel(rs.time_s - ov * widen * (st.b_s + st.w_s), 1e-4));
    REQUIRE_THAT(ag.exposed_s, WithinRel(ag.time_s - ov * widen * st.f_s, 1e-4));
  }
}

TEST_CASE("every schedule's breakdown adds up and its busiest stage does each micro-batch once", "[estimate]") {
  Config c = test::config("llama3-70b", "dgx-h100", 8, 4, 1, 4096, 16);
  c.plan.sp = true;
  const auto [name, vpp] = GENERATE(table<Schedule, int>(
      {{Schedule::GPipe, 1}, {Schedule::OneFOneB, 1}, {Schedule::Interleaved, 2}, {Schedule::ZbH1, 1}, {Schedule::DualPipe, 1}}));
  c.plan.schedule = name;
  c.plan.vpp = vpp;
  const TrainingEstimate e = run(c);
  INFO(name);
  REQUIRE_THAT(e.breakdown.total_s(), WithinRel(e.step_s, 1e-9));
  REQUIRE(e.breakdown.pp_bubble_s >= 0);
  // Busy time of a stage = micro-batches × (F + B + W) of all its layers: 20 layers per stage
  // (DualPipe: 40 layers, each micro-batch through half of them).
  const StageTime& s = e.stages[1];
  const double per_pass = s.f_s + s.b_s + s.w_s;
  REQUIRE_THAT(s.busy_s, WithinRel((name == Schedule::DualPipe ? 8.0 : 16.0) * per_pass, 1e-12));
  REQUIRE(e.schedule.makespan_s >= s.busy_s);
}

TEST_CASE("full recompute repeats the EP all-to-alls and the CP ring of the recomputed forward", "[estimate]") {
  // Mixtral 8x22B, EP 8 × PP 2, 16 GPUs: per MoE layer 2 all-to-alls forward and 2 backward, plus 2 in
  // the recomputed forward with full recompute (6, not 4); the same message, so 1.5× the calls and time.
  Config c = test::config("mixtral-8x22b", "dgx-h100", 1, 2, 1, 4096, 16);
  c.plan.ep = 8;
  auto op_of = [](const TrainingEstimate& e, Axis axis) {
    for (const CommOp& op : e.comm)
      if (op.axis == axis) return op;
    return CommOp{};
  };
  c.plan.recompute = Recompute::Selective;
  const CommOp ep_sel = op_of(run(c), Axis::EP);
  c.plan.recompute = Recompute::Full;
  const CommOp ep_full = op_of(run(c), Axis::EP);
  REQUIRE(ep_sel.calls > 0);
  REQUIRE_THAT(ep_full.calls, WithinRel(1.5 * ep_sel.calls, 1e-12));
  REQUIRE_THAT(ep_full.time_s, WithinRel(1.5 * ep_sel.time_s, 1e-12));
  // Selective recompute of the MoE block (Megatron's module "moe") re-runs its dispatch and combine too.
  c.plan.recompute = Recompute::Selective;
  c.plan.recompute_modules = {RecomputeModule::Moe};
  REQUIRE_THAT(op_of(run(c), Axis::EP).calls, WithinRel(1.5 * ep_sel.calls, 1e-12));
  c.plan.recompute_modules = {RecomputeModule::CoreAttn};
  // CP 2 on Llama 3 8B: K/V passes forward 1 and backward 2, plus 1 with full recompute (4, not 3).
  Config d = test::config("llama3-8b", "dgx-h100", 1, 1, 4, 8192, 16);
  d.plan.cp = 2;
  d.plan.dp = 4;
  d.plan.recompute = Recompute::None;
  const CommOp cp_none = op_of(run(d), Axis::CP);
  d.plan.recompute = Recompute::Full;
  const CommOp cp_full = op_of(run(d), Axis::CP);
  REQUIRE(cp_none.calls > 0);
  REQUIRE_THAT(cp_full.calls, WithinRel(4.0 / 3.0 * cp_none.calls, 1e-12));
  // Selective recompute of core attention (Megatron's default module) re-runs the CP exchange as well.
  d.plan.recompute = Recompute::Selective;
  REQUIRE_THAT(op_of(run(d), Axis::CP).calls, WithinRel(cp_full.calls, 1e-12));
}

TEST_CASE("under folding an MoE layer's TP collectives are the attention's, its experts' ETP collectives are their own",
          "[estimate]") {
  // Mixtral 8x22B (56 MoE layers), TP 2 × PP 2 × DP 8 = 32 GPUs; experts ETP × EP. Selective recompute:
  // 2 TP pairs per layer forward and 2 backward without folding (etp = tp), 1 and 1 under folding.
  auto op_of = [](const TrainingEstimate& e, Axis axis, Collective k) {
    for (const CommOp& op : e.comm)
      if (op.axis == axis && op.collective == k) return op;
    return CommOp{};
  };
  Config c = test::config("mixtral-8x22b", "dgx-h100", 2, 2, 8, 4096, 64);
  c.plan.sp = true;
  c.plan.ep = 8;
  c.plan.etp = 2;  // classic: the experts are TP-sliced like attention (ETP = TP), EP 8 over DP
  const CommOp classic = op_of(run(c), Axis::TP, Collective::AllGather);
  c.plan.etp = 1;  // folding: attention TP 2, experts ETP 1 × EP 8
  const TrainingEstimate folded = run(c);
  const CommOp fold = op_of(folded, Axis::TP, Collective::AllGather);
  REQUIRE(classic.calls > 0);
  REQUIRE_THAT(fold.calls, WithinRel(0.5 * classic.calls, 1e-12));
  REQUIRE(op_of(folded, Axis::ETP, Collective::AllGather).calls == 0);  // ETP 1: no expert collectives
  // Folding with ETP 2 under TP 4: the experts' all-gather and reduce-scatter over their ETP group, once per
  // MoE layer forward and once backward, of the k token copies the group's experts received.
  Config d = test::config("mixtral-8x22b", "dgx-h100", 4, 2, 4, 4096, 64);
  d.plan.sp = true;
  d.plan.ep = 8;
  d.plan.etp = 2;
  const TrainingEstimate e = run(d);
  const CommOp etp = op_of(e, Axis::ETP, Collective::AllGather);
  const double micro_batches = 64.0 / 4, layers_per_stage = 28;
  REQUIRE_THAT(etp.calls, WithinRel(micro_batches * layers_per_stage * 2, 1e-12));
  REQUIRE_THAT(etp.message_bytes, WithinRel(2.0 * 4096 * 2 * 6144 * 2 / 4, 1e-12));  // 2 bytes·s·k·h·etp/tp
}

TEST_CASE("DeepSeek-V3 as published fits H800 80 GB with DeepSeek's own levers, without full recompute", "[estimate][memory]") {
  // DeepSeek-V3 §3.2-3.3: PP 16 × EP 64 × ZeRO-1 (DP 2 of the expert mesh), no TP, DualPipe, fp8,
  // 2,048 H800, sequence 4,096, batch 15,360; the norms and MLA's up-projections recomputed, the
  // experts' SwiGLU inputs cached in fp8 and their outputs recomputed, bf16 Adam moments, the EMA on
  // the CPU, the MTP module on the last stage.
  Config c = test::config("deepseek-v3", "hgx-h800", 1, 16, 2, 4096, 15360);
  c.plan.ep = 64;
  c.plan.zero = 1;
  c.plan.schedule = Schedule::DualPipe;
  c.plan.ep_dispatcher = EpDispatcher::DeepEp;
  c.workload.dtype = Dtype::FP8;
  c.plan.recompute = Recompute::Selective;
  const TrainingEstimate plain = run(c);  // Megatron's default selective recompute (core attention) only
  REQUIRE_FALSE(plain.memory.fits);
  c.plan.recompute_modules = {RecomputeModule::LayerNorm, RecomputeModule::MlaUpProj, RecomputeModule::MoeAct};
  c.plan.activation_func_fp8_input_store = true;
  c.workload.moment_dtype = MomentDtype::BF16;
  c.workload.ema = Ema::Cpu;
  const TrainingEstimate e = run(c);
  REQUIRE(e.memory.fits);
  // The recipe keeps less than half the activations of core-attention recompute in fp8 (177,280 bytes per
  // token of an MoE layer, test_memory.cpp), and re-runs only memory-bound ops and two small GEMMs.
  const StageMemory& a = plain.memory.per_stage[2];
  const StageMemory& b = e.memory.per_stage[2];
  REQUIRE(b.activations_bytes < 0.5 * a.activations_bytes);
  REQUIRE(e.breakdown.recompute_s < 0.1 * plain.breakdown.compute_s);
}

TEST_CASE("DeepEP counts the nodes a DeepSeek-V3 token reaches under node-limited routing", "[estimate]") {
  // EP 64 on 8 nodes of 8 H800s, one micro-batch of 4,096 tokens: each dispatch sends S = 2 bytes ·
  // 4096 · 8 · 7168 (all top-8 copies) over NVLink and one copy per remote node reached over the NIC.
  // Routing limited to 4 of 8 groups (one group per node): 7 · 0.5 · (1 − Π_{i<8}(96 − i)/(128 − i))
  // = 3.17538 remote nodes (test_comm.cpp), not the 4.63282 of unrestricted routing.
  Config c = test::config("deepseek-v3", "hgx-h800", 1, 1, 1, 4096, 64);
  c.plan.ep = 64;
  c.plan.ep_dispatcher = EpDispatcher::DeepEp;
  const TrainingEstimate e = run(c);
  const Cluster& h = c.cluster;
  const double Bs = h.scaleout_bytes_per_s * h.efficiency.scaleout, Bn = h.nvlink_bytes_per_s * h.efficiency.nvlink;
  const double S = 2.0 * 4096 * 8 * 7168;
  // DeepEP's 20 SMs copy both the scale-out and the NVLink bytes.
  const double copy = 20 * h.efficiency.deepep_sm_bytes_per_s;
  const double one = std::max({S / 8 * 3.17538 / Bs, 63.0 / 64 * S / Bn, (S / 8 * 3.17538 + 63.0 / 64 * S) / copy}) +
                     h.scaleout_latency_s;
  for (const CommOp& op : e.comm)
    if (op.axis == Axis::EP) REQUIRE_THAT(op.time_s / op.calls, WithinRel(one, 1e-5));
}

TEST_CASE("fp8 dispatch sends 1 byte per value plus a scale per 128, the combine stays bf16", "[estimate]") {
  // DeepSeek-V3 §3.3.2: tokens quantised to fp8 (1×128 scales) before dispatch, combine in bf16.
  // EP 64 over 8 nodes, one micro-batch of 4,096 tokens, top-8 of h = 7168: 4096 · 8 · 7168 =
  // 234,881,024 values per all-to-all: dispatch 234,881,024 · (1 + 4/128) = 242,221,056 bytes,
  // combine 2 · 234,881,024 = 469,762,048 bytes. Selective recompute: per MoE layer one of each
  // shape forward and one backward (the backward's gradient dispatch also fp8), 58 MoE layers and the
  // MTP module's MoE block: 118 calls each.
  const Result<Config> r = config_from_json(nlohmann::json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 1, "ep": 64, "dp": 1, "recompute": "selective", "ep_dispatcher": "deepep", "ep_dispatch_dtype": "fp8"},
    "workload": {"seq_len": 4096, "global_batch": 64, "dtype": "fp8"}})"));
  REQUIRE(r.ok());
  const TrainingEstimate e = run(r.value);
  std::vector<CommOp> ep;
  for (const CommOp& op : e.comm)
    if (op.axis == Axis::EP) ep.push_back(op);
  REQUIRE(ep.size() == 2);
  REQUIRE_THAT(ep[0].message_bytes, WithinRel(242221056.0, 1e-12));
  REQUIRE_THAT(ep[1].message_bytes, WithinRel(469762048.0, 1e-12));
  REQUIRE(ep[0].calls == 118);
  REQUIRE(ep[1].calls == 118);
  // Each call's time is DeepEP's: max(S/8 · 3.17538 / B_so, 63/64 · S / B_nv, both through 20 SMs) + α,
  // S the row's message.
  const Cluster& h = r.value.cluster;
  const double Bs = h.scaleout_bytes_per_s * h.efficiency.scaleout, Bn = h.nvlink_bytes_per_s * h.efficiency.nvlink;
  const double copy = 20 * h.efficiency.deepep_sm_bytes_per_s;
  for (const CommOp& op : ep) {
    const double S = op.message_bytes;
    const double want = std::max({S / 8 * 3.17538 / Bs, 63.0 / 64 * S / Bn, (S / 8 * 3.17538 + 63.0 / 64 * S) / copy});
    REQUIRE_THAT(op.time_s / op.calls, WithinRel(want + h.scaleout_latency_s, 1e-5));
  }
  REQUIRE_THAT(e.breakdown.ep_exposed_s, WithinRel(ep[0].exposed_s + ep[1].exposed_s, 1e-12));
}

namespace {
std::vector<CommOp> ep_rows(const TrainingEstimate& e) {
  std::vector<CommOp> ep;
  for (const CommOp& op : e.comm)
    if (op.axis == Axis::EP) ep.push_back(op);
  return ep;
}
}  // namespace

TEST_CASE("DualPipe hides both directions' all-to-alls behind the pair's compute, DeepEP's SMs slow the compute", "[estimate]") {
  // DeepSeek-V3 §3.2.1: a forward and a backward chunk overlap as a pair and both all-to-alls are
  // hidden. Per MoE layer and micro-batch here EP F ≈ EP B ≈ 7.7 ms against F + B + W ≈ 29 ms of
  // compute: 15.4 ms < η_overlap · 29 ms = 19 ms, nothing stalls: no EP time is exposed. What the
  // overlap costs is DeepEP's 20 SMs slowing the compute beside the hidden all-to-alls: 20/(132 − 20)
  // = 0.178571 of the EP time, reported as its own part of the step.
  // (DeepEP's copy rate set high, so the links set the EP time.)
  const Result<Config> r = config_from_json(nlohmann::json::parse(R"({"model": "deepseek-v3",
    "cluster": {"preset": "hgx-h800", "efficiency": {"deepep_sm_GBps": 1000}},
    "plan": {"pp": 2, "ep": 64, "dp": 1, "schedule": "dualpipe", "recompute": "selective", "ep_dispatcher": "deepep",
             "ep_dispatch_dtype": "fp8"},
    "workload": {"seq_len": 4096, "global_batch": 512, "dtype": "fp8"}})"));
  REQUIRE(r.ok());
  const TrainingEstimate e = run(r.value);
  double ep_s = 0;
  for (const CommOp& op : e.comm)
    if (op.axis == Axis::EP) ep_s += op.time_s;
  REQUIRE(ep_s > 0);
  REQUIRE(e.breakdown.ep_exposed_s == 0);
  REQUIRE_THAT(e.breakdown.ep_sm_slowdown_s, WithinRel(20.0 / 112.0 * ep_s, 1e-9));
  REQUIRE_THAT(e.breakdown.total_s(), WithinRel(e.step_s, 1e-9));
}

TEST_CASE("DeepSeek-V3 as published: EP hidden under DualPipe, about 1:1 communication to computation without it", "[estimate]") {
  // DeepSeek-V3 (arXiv:2412.19437) §3.2.1: cross-node expert parallelism gives "an inefficient
  // computation-to-communication ratio of approximately 1:1", which DualPipe hides: "both all-to-all
  // and PP communication can be fully hidden during execution". The published plan: 2,048 H800,
  // PP 16 × EP 64 × ZeRO-1, no TP, DualPipe, fp8 with fp8 dispatch, DeepEP, sequence 4,096.
  const Result<Config> r = config_from_json(nlohmann::json::parse(R"({"model": "deepseek-v3",
    "cluster": {"preset": "hgx-h800", "gpus": 2048},
    "plan": {"tp": 1, "pp": 16, "ep": 64, "zero": 1, "schedule": "dualpipe", "ep_dispatcher": "deepep", "ep_dispatch_dtype": "fp8",
             "recompute": "selective", "recompute_modules": ["layernorm", "mla_up_proj", "moe_act"],
             "activation_func_fp8_input_store": true},
    "workload": {"seq_len": 4096, "global_batch": 15360, "dtype": "fp8", "moment_dtype": "bf16", "ema": "cpu"}})"));
  REQUIRE(r.ok());
  const TrainingEstimate e = run(r.value);
  // Per MoE layer and micro-batch, the forward's dispatch and combine against the forward's compute.
  const std::vector<CommOp> ep = ep_rows(e);
  REQUIRE(ep.size() == 2);
  const double a2a_f = ep[0].time_s / ep[0].calls + ep[1].time_s / ep[1].calls;
  const double compute_f = layer_times(test::resolved(r.value), true).f_s();
  REQUIRE(a2a_f / compute_f > 0.7);
  REQUIRE(a2a_f / compute_f < 1.3);
  // Hidden under DualPipe: what is exposed is a small part of the step (the all-to-all time is about
  // a fifth of it); DeepEP's SMs slowing the compute beside it is reported apart.
  double ep_s = 0;
  for (const CommOp& op : ep) ep_s += op.time_s;
  REQUIRE(ep_s > 0.15 * e.step_s);
  REQUIRE(e.breakdown.ep_exposed_s < 0.02 * e.step_s);
  REQUIRE(e.breakdown.ep_sm_slowdown_s > 0);
}

TEST_CASE("Llama 3 405B on PP 16 × VP 8 with the embedding and the loss as pipeline layers", "[estimate][schedule]") {
  // Megatron-Bridge's Llama 3.1 405B GB200 layout: 126 layers + embedding + loss in 128 chunks of
  // one; 2,048 GB200 = TP 4 × PP 16 × DP 32, 64 micro-batches per pipeline.
  Config c = test::config("llama3-405b", "gb200-nvl72", 4, 16, 32, 8192, 2048);
  c.plan.vpp = 8;
  c.plan.schedule = Schedule::Interleaved;
  c.plan.sp = true;
  c.plan.recompute = Recompute::Selective;
  c.plan.distributed_optimizer = true;
  c.plan.embedding_in_pipeline_split = c.plan.loss_in_pipeline_split = true;
  const Resolved r = test::resolved(c);
  const LayerCompute k = layer_compute(r);
  // Chunk 0 of stage 0 runs the embedding alone; stage 0 in all: 7 layers + the embedding; stage 1:
  // 8 layers; stage 15: 7 layers + the output layer and the loss (its chunk 7 alone).
  const StageCompute emb = chunk_compute(r, k, r.placement.stages[0], 0);
  REQUIRE(emb.f_s == k.input.f_s);
  REQUIRE(emb.b_s == k.input.b_s);
  const StageCompute loss = chunk_compute(r, k, r.placement.stages[15], 7);
  REQUIRE(loss.f_s == k.output.f_s);
  REQUIRE_THAT(stage_compute(r, r.placement.stages[0]).f_s, WithinRel(7 * k.dense.f_s() + k.input.f_s, 1e-12));
  REQUIRE_THAT(stage_compute(r, r.placement.stages[1]).f_s, WithinRel(8 * k.dense.f_s(), 1e-12));
  REQUIRE_THAT(stage_compute(r, r.placement.stages[15]).f_s, WithinRel(7 * k.dense.f_s() + k.output.f_s, 1e-12));
  // Memory: stage 0 warms up with 2(p − 1) + (v − 1)·p + 1 = 30 + 112 + 1 = 143 chunk forwards
  // (17.875 stages' worth at 1/8 each), 31 of them (micro-batches 0–30) through chunk 0, which
  // stores no layer's activations: 112 one-layer pairs = 112/7 = 16 micro-batches of its 7 layers.
  const TrainingEstimate e = run(c);
  REQUIRE(e.schedule.peak_alive_micro_batches[0] == 143);
  REQUIRE_THAT(e.memory.per_stage[0].in_flight_micro_batches, WithinRel(16.0, 1e-12));
  REQUIRE_THAT(e.memory.per_stage[0].activations_bytes,
               WithinRel(16.0 * e.memory.per_stage[0].activation_bytes_per_micro_batch, 1e-12));
  REQUIRE(std::isfinite(e.step_s));
  REQUIRE(e.step_s > 0);
}

TEST_CASE("the EP group waits for its hottest rank: imbalance and capacity scale the all-to-alls", "[estimate]") {
  // Mixtral 8x22B (h 6144, top-2) at EP 8 on one DGX H100, s 4096, b 1, TP 1: each GPU sends
  // 4096 · 2 · 6144 = 50,331,648 values per all-to-all, 100,663,296 bytes in bf16. The hottest rank
  // receives (dispatch) and sends back (combine) imbalance × that, and every all-to-all lasts as long
  // as its part: the rows report the hottest rank's message and its alpha-beta time.
  Config c = test::config("mixtral-8x22b", "dgx-h100", 1, 1, 1, 4096, 64);
  c.plan.ep = 8;
  const TrainingEstimate balanced = run(c);
  REQUIRE(ep_rows(balanced).size() == 2);
  REQUIRE(ep_rows(balanced)[0].message_bytes == 100663296.0);
  auto check = [&](double load) {
    const TrainingEstimate e = run(c);
    const std::vector<CommOp> ep = ep_rows(e);
    REQUIRE(ep.size() == 2);
    const GroupInfo* g = find_group(e.placement, Axis::EP);
    REQUIRE(g);
    for (size_t i = 0; i < 2; ++i) {
      REQUIRE_THAT(ep[i].message_bytes, WithinRel(load * 100663296.0, 1e-12));
      REQUIRE(ep[i].calls == ep_rows(balanced)[i].calls);
      REQUIRE_THAT(ep[i].time_s / ep[i].calls,
                   WithinRel(collective_time_s(Collective::AllToAll, load * 100663296.0, *g, c.cluster), 1e-12));
    }
    // The hottest rank's expert GEMMs are longer too, and the step with them.
    REQUIRE(e.breakdown.compute_s > balanced.breakdown.compute_s);
    REQUIRE(e.step_s > balanced.step_s);
    const TimeBreakdown& b = e.breakdown;
    REQUIRE_THAT(b.compute_s + b.recompute_s + b.tp_exposed_s + b.cp_exposed_s + b.ep_exposed_s + b.ep_sm_slowdown_s + b.pp_bubble_s +
                     b.dp_exposed_s + b.optimizer_s,
                 WithinRel(e.step_s, 1e-9));
  };
  SECTION("dropless, imbalance 1.5") {
    c.plan.moe_imbalance = 1.5;
    check(1.5);
  }
  SECTION("padded to capacity factor 1.25, whatever the imbalance") {
    c.plan.moe_capacity_factor = 1.25;
    c.plan.moe_pad_to_capacity = true;
    c.plan.moe_imbalance = 3;
    check(1.25);
  }
  SECTION("capacity factor 1.25 without padding caps an imbalance of 3: the rest is dropped") {
    c.plan.moe_capacity_factor = 1.25;
    c.plan.moe_imbalance = 3;
    check(1.25);
  }
}

TEST_CASE("shared experts overlapped with dispatch hide the EP all-to-alls behind their compute", "[estimate]") {
  // Qwen2-57B-A14B (28 MoE layers, 64 experts top-8, 8 shared experts of 2560 = 20480) at EP 8 on
  // one DGX H100, no recompute: per MoE layer and micro-batch EP_f = EP_b = dispatch + combine.
  // With moe_shared_expert_overlap the exposed EP time of a layer is
  //   max(0, EP_f − η·S_f) + max(0, EP_b − η·(S_b + S_w)),
  // S the shared expert's forward, input-gradient and weight-gradient times, η = efficiency.overlap;
  // 8 micro-batches × 28 layers of it per step.
  Config c = test::config("qwen2-57b-a14b", "dgx-h100", 1, 1, 1, 4096, 64);
  c.plan.ep = 8;
  const TrainingEstimate off = run(c);
  std::vector<CommOp> ep = ep_rows(off);
  REQUIRE(ep.size() == 2);
  const double passes = off.mesh.num_micro_batches, layers = 28;
  REQUIRE(passes == 8);
  const double ep_f = (ep[0].time_s + ep[1].time_s) / (2.0 * passes * layers);
  REQUIRE_THAT(off.breakdown.ep_exposed_s, WithinRel(2.0 * passes * layers * ep_f, 1e-12));  // all exposed without it
  c.plan.moe_shared_expert_overlap = true;
  const TrainingEstimate on = run(c);
  const LayerTimes lt = layer_times(test::resolved(c), true);
  const double eta = c.cluster.efficiency.overlap;
  const double per_layer = std::max(0.0, ep_f - eta * lt.shared_experts.f_s) +
                           std::max(0.0, ep_f - eta * (lt.shared_experts.b_s + lt.shared_experts.w_s));
  REQUIRE(per_layer < 2.0 * ep_f);
  REQUIRE_THAT(on.breakdown.ep_exposed_s, WithinRel(passes * layers * per_layer, 1e-9));
  REQUIRE(on.step_s < off.step_s);
  // The collectives themselves are unchanged; only their exposed part.
  REQUIRE(ep_rows(on)[0].time_s == ep[0].time_s);
}

TEST_CASE("under DualPipe the shared expert is already part of the pair's window: overlapping it changes nothing", "[estimate]") {
  // DualPipe hides both directions' all-to-alls behind the pair's F + B + W; the shared expert's
  // compute is part of it. Hiding EP behind the shared expert first and then behind the rest of the
  // window (F + B + W − the shared compute used) exposes the same time: the compute is counted once.
  const Result<Config> r = config_from_json(nlohmann::json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 2, "ep": 64, "dp": 1, "schedule": "dualpipe", "recompute": "selective"},
    "workload": {"seq_len": 4096, "global_batch": 512}})"));
  REQUIRE(r.ok());
  Config c = r.value;
  c.cluster.efficiency.overlap = 0.2;  // a small window, so that some EP time stays exposed
  const TrainingEstimate off = run(c);
  REQUIRE(off.breakdown.ep_exposed_s > 0);
  c.plan.moe_shared_expert_overlap = true;
  REQUIRE_THAT(run(c).breakdown.ep_exposed_s, WithinRel(off.breakdown.ep_exposed_s, 1e-9));
}

namespace {
std::vector<CommOp> cp_ops(const TrainingEstimate& e) {
  std::vector<CommOp> out;
  for (const CommOp& op : e.comm)
    if (op.axis == Axis::CP) out.push_back(op);
  return out;
}
}  // namespace

TEST_CASE("CP with all-gathered K/V: one exposed all-gather forward, an all-gather and a reduce-scatter backward", "[estimate]") {
  // Llama 3 8B (32 layers, 8 KV heads of 128), CP 4 × DP 4 on 16 H100, seq 64k, one micro-batch.
  // K and V of the whole sequence: 2 bytes · 65,536 tokens · 8 heads · (128 + 128) = 256 MiB. Ring
  // all-gather inside a node (H100 preset: NVLink 450 GB/s × 0.8, α 1.5 µs): 3/4 · S/B + 3α.
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 4, 65536, 4);
  c.plan.cp = 4;
  c.plan.recompute = Recompute::None;  // (selective core_attn would re-run the exchange once more)
  c.plan.cp_comm = CpComm::AllGather;
  const double S = 268435456.0, ag = 0.75 * S / 360e9 + 3 * 1.5e-6;
  const TrainingEstimate e = run(c);
  const std::vector<CommOp> ops = cp_ops(e);
  REQUIRE(ops.size() == 2);
  REQUIRE(ops[0].collective == Collective::AllGather);
  REQUIRE(ops[0].message_bytes == S);
  REQUIRE(ops[0].calls == 64.0);  // 32 layers × (forward + backward)
  REQUIRE_THAT(ops[0].time_s, WithinRel(64 * ag, 1e-9));
  REQUIRE(ops[0].exposed_s == ops[0].time_s);  // Llama 3 §3.3.2: exposed
  REQUIRE(ops[1].collective == Collective::ReduceScatter);
  REQUIRE(ops[1].calls == 32.0);
  REQUIRE_THAT(ops[1].time_s, WithinRel(32 * ag, 1e-9));  // same size and ring cost as the all-gather
  REQUIRE_THAT(e.breakdown.cp_exposed_s, WithinRel(96 * ag, 1e-9));
  REQUIRE_THAT(e.breakdown.total_s(), WithinRel(e.step_s, 1e-9));
  // The ring passes the same bytes in 3 steps of 64 MiB per pass, hidden behind attention.
  c.plan.cp_comm = CpComm::Ring;
  const TrainingEstimate ring = run(c);
  REQUIRE(cp_ops(ring)[0].message_bytes == S / 4);
  REQUIRE(ring.breakdown.cp_exposed_s < e.breakdown.cp_exposed_s);
  // Full recompute re-gathers K/V for the recomputed forward: 3 all-gathers per layer, 1 reduce-scatter.
  c.plan.cp_comm = CpComm::AllGather;
  c.plan.recompute = Recompute::Full;
  const std::vector<CommOp> full = cp_ops(run(c));
  REQUIRE(full[0].calls == 96.0);
  REQUIRE(full[1].calls == 32.0);
}

TEST_CASE("CP as Ulysses all-to-alls moves Q, K, V and the output, exposed", "[estimate]") {
  // Same plan: per GPU 16,384 tokens; Q, K, V = 2 · 16,384 · (32·128 + 8·256) = 192 MiB, O = 2 ·
  // 16,384 · 4,096 = 128 MiB. All-to-all of 4 GPUs in a node: 3/4 · S/B + α (grouped sends).
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 4, 65536, 4);
  c.plan.cp = 4;
  c.plan.recompute = Recompute::None;  // (selective core_attn would re-run the exchange once more)
  c.plan.cp_comm = CpComm::AllToAll;
  const TrainingEstimate e = run(c);
  const std::vector<CommOp> ops = cp_ops(e);
  REQUIRE(ops.size() == 2);
  const double qkv = 201326592.0, out = 134217728.0;
  REQUIRE(ops[0].message_bytes == qkv);
  REQUIRE(ops[1].message_bytes == out);
  REQUIRE(ops[0].calls == 64.0);
  REQUIRE_THAT(ops[0].time_s, WithinRel(64 * (0.75 * qkv / 360e9 + 1.5e-6), 1e-9));
  REQUIRE_THAT(ops[1].time_s, WithinRel(64 * (0.75 * out / 360e9 + 1.5e-6), 1e-9));
  REQUIRE_THAT(e.breakdown.cp_exposed_s, WithinRel(ops[0].time_s + ops[1].time_s, 1e-9));
  // Attention over the whole sequence with 32/4 heads: the FLOPs of the ring's s/cp queries × s keys.
  c.plan.cp_comm = CpComm::Ring;
  const TrainingEstimate ring = run(c);
  auto attention = [](const TrainingEstimate& t) {
    for (const LayerOp& op : t.dense_layer_ops)
      if (op.op_class == OpClass::Attention) return op;
    return LayerOp{};
  };
  REQUIRE_THAT(attention(e).flops, WithinRel(attention(ring).flops, 1e-12));
  // Ulysses reads K and V of its 2 KV heads over 64k tokens, the ring of all 8 heads.
  REQUIRE(attention(e).bytes < attention(ring).bytes);
}

TEST_CASE("activation offload copies out in the forward and back in the backward, hidden behind compute", "[estimate]") {
  // Llama 3 8B, DP 8, one micro-batch of 8k tokens, 16 layers offloaded: 16 · 34·s·b·h = 18.25 GB
  // each way over PCIe Gen5 (64 GB/s × 0.8) = 0.3565 s. With no overlap both copies are exposed.
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 8);
  c.plan.recompute = Recompute::Selective;
  c.cluster.efficiency.overlap = 0;
  const TrainingEstimate base = run(c);
  c.plan.activation_offload_layers = 16;
  const TrainingEstimate off = run(c);
  const double copy_s = 16 * 34.0 * 8192 * 4096 / (64e9 * 0.8);
  REQUIRE(c.cluster.host_link_bytes_per_s == 64e9);
  REQUIRE(base.breakdown.offload_exposed_s == 0.0);
  REQUIRE_THAT(off.breakdown.offload_exposed_s, WithinRel(2 * copy_s, 1e-9));
  REQUIRE_THAT(off.step_s - base.step_s, WithinRel(2 * copy_s, 1e-9));
  REQUIRE_THAT(off.breakdown.total_s(), WithinRel(off.step_s, 1e-9));
  // The preset's overlap hides each copy behind its pass: exposed max(0, copy − η·F) + max(0, copy − η·(B + W)).
  c.cluster.efficiency.overlap = find_cluster_preset("dgx-h100")->efficiency.overlap;
  const TrainingEstimate hidden = run(c);
  const double ov = c.cluster.efficiency.overlap, f = base.stages[0].f_s, bw = base.stages[0].b_s + base.stages[0].w_s;
  REQUIRE_THAT(hidden.breakdown.offload_exposed_s, WithinAbs(std::max(0.0, copy_s - ov * f) + std::max(0.0, copy_s - ov * bw), 1e-9));
  // Over NVLink-C2C (GB200's 450 GB/s) the copies hide entirely.
  c.cluster.host_link_bytes_per_s = 450e9;
  REQUIRE(run(c).breakdown.offload_exposed_s == 0.0);
}

TEST_CASE("activation offload is checked against each stage's layers and the host link", "[estimate]") {
  Config c = test::config("llama3-8b", "dgx-h100", 1, 1, 8, 8192, 8);
  c.plan.activation_offload_layers = 33;  // 32 layers on the one stage
  auto has = [](const Errors& errors, const std::string& path) {
    for (const Error& e : errors)
      if (e.path == path) return true;
    return false;
  };
  REQUIRE(has(validate(c.model, c.cluster, c.plan, c.workload), "/plan/activation_offload_layers"));
  c.plan.activation_offload_layers = 16;
  REQUIRE(validate(c.model, c.cluster, c.plan, c.workload).empty());
  c.plan.pp = 2, c.plan.dp = 4;  // Megatron-Core refuses CPU offloading with pipeline parallelism
  REQUIRE(has(validate(c.model, c.cluster, c.plan, c.workload), "/plan/activation_offload_layers"));
  c.plan.pp = 1, c.plan.dp = 8;
  c.plan.activation_offload_layers = -1;
  REQUIRE(has(validate(c.model, c.cluster, c.plan, c.workload), "/plan/activation_offload_layers"));
  c.plan.activation_offload_layers = 4;
  c.cluster.host_link_bytes_per_s = 0;
  REQUIRE(has(validate(c.model, c.cluster, c.plan, c.workload), "/cluster/host_link_GBps"));
  REQUIRE(find_cluster_preset("gb200-nvl72")->host_link_bytes_per_s == 450e9);
  REQUIRE(find_cluster_preset("dgx-a100")->host_link_bytes_per_s == 32e9);
}

TEST_CASE("TP overlap hides each collective behind its own GEMMs only", "[estimate]") {
  // Llama 3 8B at TP 8 with SP: per block an all-gather before the first GEMMs and a reduce-scatter after
  // the last (Korthikanti et al. 2022 Figure 5), each pipelined with those GEMMs. The QKV (768 columns per
  // GPU) and output projections (K 512) are short beside their collectives, the MLP's are long: with a
  // full window (overlap 1) the attention block's collectives stay partly exposed and the MLP's vanish.
  Config c = test::config("llama3-8b", "dgx-h100", 8, 1, 1, 8192, 1);
  c.plan.sp = true;
  c.plan.tp_comm_overlap = true;
  c.cluster.efficiency.overlap = 1.0;
  const Resolved r = test::resolved(c);
  const LayerTimes lt = layer_times(r, false);
  const GroupInfo* tp = find_group(r.placement, Axis::TP);
  REQUIRE(tp);
  const double msg = 2.0 * 8192 * 4096;  // s·b·h in bf16
  const double ag = collective_time_s(Collective::AllGather, msg, *tp, c.cluster);
  const double rs = collective_time_s(Collective::ReduceScatter, msg, *tp, c.cluster);
  const double half = 0.5 * (ag + rs);  // each of the four collectives, as the estimate splits a block's pair
  double fwd = 0, bwd = 0;
  for (int w : {kTpAttnIn, kTpAttnOut, kTpMlpIn, kTpMlpOut}) {
    fwd += std::max(0.0, half - lt.tp_window[w].f_s);
    bwd += std::max(0.0, half - (lt.tp_window[w].b_s + lt.tp_window[w].w_s));
  }
  REQUIRE(lt.tp_window[kTpAttnIn].f_s < half);  // the attention block's GEMMs leave some exposed
  REQUIRE(lt.tp_window[kTpMlpIn].f_s > half);   // the MLP's hide theirs
  const TrainingEstimate e = run(c);
  REQUIRE_THAT(e.breakdown.tp_exposed_s, WithinRel(32 * (fwd + bwd), 1e-9));
  // The whole layer's GEMMs would have hidden all of it: 4·half < the four GEMMs' forward.
  REQUIRE(4 * half < lt.weight_gemms.f_s);
  REQUIRE(fwd > 0);
}
