#include "core/estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

// A function off the search's hot path in this speed-compiled file (core/CMakeLists.txt): compiled for size,
// which keeps the WASM module's first script under its limit (tests/js/size.test.mjs).
#if defined(__clang__)
#define CUTLAB_SMALL __attribute__((minsize))
#else
#define CUTLAB_SMALL
#endif

namespace cutlab {

namespace {

// Communication of one layer for one micro-batch on one GPU: time and exposed part, forward and backward.
struct LayerComm {
  double tp_f = 0, tp_b = 0, tp_f_exposed = 0, tp_b_exposed = 0;
  double cp_f = 0, cp_b = 0, cp_f_exposed = 0, cp_b_exposed = 0;
  double ep_f = 0, ep_b = 0, ep_f_exposed = 0, ep_b_exposed = 0;
  double ep_dispatch = 0, ep_combine = 0;  // ep_f + ep_b split by shape (dispatch-shaped and combine-shaped all-to-alls)
  double etp_f = 0, etp_b = 0;             // expert-TP collectives under folding (not overlapped)
  double ep_sm_f = 0, ep_sm_b = 0;         // compute slowed while DeepEP's kernels hold SMs (the all-to-all itself hidden)
  double f_exposed() const { return tp_f_exposed + cp_f_exposed + ep_f_exposed + etp_f + ep_sm_f; }
  double b_exposed() const { return tp_b_exposed + cp_b_exposed + ep_b_exposed + etp_b + ep_sm_b; }
};

struct Sizes {
  double tp_message = 0;           // bytes of one TP collective (a layer's output activations)
  double cp_message = 0;           // bytes of one K/V chunk sent per ring step
  double cp_kv_sequence = 0;       // bytes of K and V of the whole sequence (cp_comm allgather: the all-gather's output)
  double cp_a2a_qkv = 0;           // bytes of this rank's Q, K, V sent to head shards (cp_comm a2a), per GPU
  double cp_a2a_out = 0;           // bytes of this rank's attention output returned to sequence shards (cp_comm a2a)
  double ep_dispatch_message = 0;  // bytes each GPU sends in one dispatch-shaped all-to-all (tokens to their experts)
  double ep_combine_message = 0;   // bytes each GPU sends in one combine-shaped all-to-all (expert outputs back)
  double etp_message = 0;          // bytes of one expert-TP collective under folding (the tokens of an ETP group's experts)
  double pp_message = 0;           // bytes of one activation sent to the next stage
  int tp_calls_fwd = 2, tp_calls_bwd = 2;
  // Full recompute re-runs each layer's forward in the backward, with its communication: the CP
  // ring passes once more (forward 1, backward 2 + 1) and the EP dispatch and combine once more
  // (forward 2, backward 2 + 2 all-to-alls per layer).
  int cp_passes_bwd = 2, ep_calls_bwd = 2;
};

Sizes message_sizes(const ModelSpec& m, const Plan& plan, const Workload& w) {
  Sizes z;
  const double s = double(w.seq_len) / plan.cp, b = plan.micro_batch, h = m.hidden, t = plan.tp;
  const double ts = plan.sp ? t : 1.0;
  // TP: Megatron's f/g operators, one all-reduce (or reduce-scatter + all-gather with SP) after
  // attention and one after the MLP, forward and backward (Shoeybi et al. 2019 §3, Figure 4).
  z.tp_message = 2.0 * s * b * h;
  z.tp_calls_bwd = plan.recompute == Recompute::Full ? 4 : 2;  // the recomputed forward repeats its two
  // Per-op SAC keeps the reduce-scatter outputs (torchtitan's _save_list) and re-runs the all-gathers.
  if (plan.recompute == Recompute::OpSac) z.tp_calls_bwd = 3;
  // Recomputing core attention (full recompute, or selective with core_attn) re-runs its CP exchange too.
  const bool attention_again = plan.recompute == Recompute::Full || recomputes(plan, RecomputeModule::CoreAttn);
  z.cp_passes_bwd = attention_again ? 3 : 2;
  // Recomputing the MoE block (selective module "moe") re-runs its dispatch and combine as well.
  const bool moe_again = plan.recompute == Recompute::Full || recomputes(plan, RecomputeModule::Moe);
  z.ep_calls_bwd = moe_again ? 4 : 2;
  // CP (ring attention, Liu et al. 2023; Megatron-Core CP): each of the cp − 1 steps passes this
  // rank's K and V chunk; MLA passes decompressed per-head K and V.
  const double g_gpu = std::max(1.0, double(m.kv_heads) / t), a_gpu = double(m.heads) / t;
  const double kv_width = is_mla(m) ? a_gpu * (qk_head_dim(m) + v_head_dim_of(m)) : g_gpu * (qk_head_dim(m) + v_head_dim_of(m));
  z.cp_message = 2.0 * s * b * kv_width;
  // CP all-gather (Llama 3 §3.3.2): K and V of the whole sequence, cp × the ring's chunk
  // (core/memory.h cp_kv_sequence_bytes); the backward reduce-scatters dK and dV of the same size.
  z.cp_kv_sequence = cp_kv_sequence_bytes(m, plan, w);
  // CP all-to-all (DeepSpeed-Ulysses, Jacobs et al. 2023 §3): this rank's s/cp tokens of Q, K and V
  // go to the ranks of their heads before attention and the output O comes back after it, 16-bit;
  // the backward sends dO and returns dQ, dK, dV (the same sizes).
  z.cp_a2a_qkv = 2.0 * s * b * (a_gpu * qk_head_dim(m) + kv_width);
  z.cp_a2a_out = 2.0 * s * b * a_gpu * v_head_dim_of(m);
  // EP: every token's hidden state goes to its k experts and comes back (dispatch + combine), in bf16;
  // with fp8 dispatch one byte per value plus one fp32 scale per 128 values (DeepSeek-V3 §3.3.2:
  // 1×128 tile-wise quantisation, §3.3.1), the combine in bf16. The backward runs the transposes:
  // combine's backward sends the output gradients to the experts (dispatch-shaped), dispatch's
  // backward sends the input gradients back (combine-shaped). DeepSeek-V3 §3.3.2 quantises "the
  // activation gradient before MoE down-projections" like the dispatched activations and keeps "both
  // the forward and backward combine components" in BF16: every dispatch-shaped send (forward,
  // backward, recomputed forward) takes the dispatch size, every combine-shaped one 2 bytes.
  // The EP group waits for its hottest rank: each all-to-all takes as long as that rank's receive
  // side (dispatch) or send side (combine), moe_load(plan).recv × the balanced copies (imbalance, or
  // the capacity when padded or dropping); the messages below are that rank's.
  const double load = moe_load(plan).recv;
  const double copies = (s * b / ts) * m.top_k * h * load;  // values sent per all-to-all
  z.ep_combine_message = 2.0 * copies;
  z.ep_dispatch_message = ep_dispatch_bytes_per_value(plan.ep_dispatch_dtype) * copies;
  // ETP under folding (Liu et al. 2025, MoE Parallel Folding): after the all-to-all an expert-TP group
  // all-gathers the token copies its experts received and reduce-scatters their outputs: the stage's
  // s·b tokens spread over its GPUs, etp/(tp) of them per group, k copies each.
  z.etp_message = 2.0 * s * b * m.top_k * h * (plan.etp > 0 ? double(plan.etp) : t) / t * load;
  // PP: one activation tensor per micro-batch per boundary. Each TP rank sends 1/t of it: with SP
  // it is already scattered; without, Megatron's scatter/gather optimisation (Narayanan et al.
  // 2021 §4.1) splits it and all-gathers it over NVLink on arrival.
  z.pp_message = 2.0 * s * b * h / t;
  return z;
}

// An MoE layer under folding (etp ≠ tp) runs its attention on the TP group and its experts on the
// expert mesh: the MLP half of the layer's TP collectives is not on the TP group.
bool folded_moe(const Plan& plan, bool moe) { return moe && plan.etp > 0 && plan.etp != plan.tp; }

LayerComm layer_comm(const ModelSpec& model, const Cluster& c, const Plan& plan, const Placement& pl, const Sizes& z,
                     const LayerTimes& lt, bool moe) {
  LayerComm lc;
  const double ov = c.efficiency.overlap;
  const double tp_share = folded_moe(plan, moe) ? 0.5 : 1.0;  // attention's pair only
  // A recomputed MLP (selective module "mlp"; "moe" in MoE layers) re-runs its TP (or ETP) pair.
  const bool mlp_again = recomputes(plan, moe ? RecomputeModule::Moe : RecomputeModule::Mlp);
  if (const GroupInfo* tp = find_group(pl, Axis::TP); tp && tp->size > 1) {
    const double one = plan.sp ? collective_time_s(Collective::ReduceScatter, z.tp_message, *tp, c) +
                                     collective_time_s(Collective::AllGather, z.tp_message, *tp, c)
                               : collective_time_s(Collective::AllReduce, z.tp_message, *tp, c);
    lc.tp_f = tp_share * z.tp_calls_fwd * one;
    lc.tp_b = tp_share * z.tp_calls_bwd * one + (mlp_again && !folded_moe(plan, moe) ? one : 0.0);
    lc.tp_f_exposed = lc.tp_f, lc.tp_b_exposed = lc.tp_b;
    if (plan.tp_comm_overlap) {
      // --tp-comm-overlap pipelines each collective with its own GEMMs (core/ops.h TpWindow: Megatron / TE
      // userbuffers, torch's async TP): what one GEMM leaves uncovered is exposed, however long the others.
      // With sequence parallelism each block all-gathers before its first GEMMs and reduce-scatters after its
      // last, forward and backward alike (the backward's all-gather feeds the input-gradient GEMM of the
      // block's last GEMMs and its reduce-scatter drains the first's: the same pairs); without, each block
      // all-reduces after its last GEMM in the forward and after its first in the backward.
      // Under folding (tp_share 0.5) only the attention block's collectives are on the TP group.
      const int blocks = tp_share < 1.0 ? 1 : 2;
      auto hidden = [&](const PassTimes& w, bool fwd) { return ov * (fwd ? w.f_s : w.b_s + w.w_s); };
      lc.tp_f_exposed = lc.tp_b_exposed = 0;
      for (int blk = 0; blk < blocks; ++blk) {
        const PassTimes& in = lt.tp_window[blk == 0 ? kTpAttnIn : kTpMlpIn];
        const PassTimes& out = lt.tp_window[blk == 0 ? kTpAttnOut : kTpMlpOut];
        const double cf = lc.tp_f / blocks, cb = lc.tp_b / blocks;
        if (plan.sp) {
          lc.tp_f_exposed += std::max(0.0, 0.5 * cf - hidden(in, true)) + std::max(0.0, 0.5 * cf - hidden(out, true));
          lc.tp_b_exposed += std::max(0.0, 0.5 * cb - hidden(in, false)) + std::max(0.0, 0.5 * cb - hidden(out, false));
        } else {
          lc.tp_f_exposed += std::max(0.0, cf - hidden(out, true));
          lc.tp_b_exposed += std::max(0.0, cb - hidden(in, false));
        }
      }
    }
  }
  if (const GroupInfo* etp = find_group(pl, Axis::ETP); folded_moe(plan, moe) && etp && etp->size > 1) {
    const double one = collective_time_s(Collective::AllGather, z.etp_message, *etp, c) +
                       collective_time_s(Collective::ReduceScatter, z.etp_message, *etp, c);
    lc.etp_f = 0.5 * z.tp_calls_fwd * one;
    lc.etp_b = 0.5 * z.tp_calls_bwd * one + (mlp_again ? one : 0.0);
  }
  if (const GroupInfo* cp = find_group(pl, Axis::CP); cp && cp->size > 1) {
    // Backward passes beyond the backward's own (the recomputed forward's under full recompute).
    const double again = z.cp_passes_bwd - 2.0;
    switch (plan.cp_comm) {
      case CpComm::Ring: {
        const double step = collective_time_s(Collective::SendRecv, z.cp_message, *cp, c);
        lc.cp_f = (cp->size - 1) * step;
        lc.cp_b = z.cp_passes_bwd * lc.cp_f;  // K/V again and their gradients (and the recomputed forward's)
        // Each ring step overlaps with the attention of the chunk already received.
        lc.cp_f_exposed = std::max(0.0, lc.cp_f - ov * lt.core_attention.f_s);
        lc.cp_b_exposed = std::max(0.0, lc.cp_b - ov * lt.core_attention.b_s);
        break;
      }
      case CpComm::AllGather: {
        // Forward: one all-gather of K, V; backward: K, V gathered again (TE saves the local chunks)
        // and dK, dV reduce-scattered (Transformer Engine AttnFuncWithCPAndKVAllGather). Exposed:
        // Llama 3 §3.3.2 puts the all-gather on the critical path ("the all-gather communication
        // latency is exposed"), small against attention at long context since K, V are GQA-narrow.
        const double ag = collective_time_s(Collective::AllGather, z.cp_kv_sequence, *cp, c);
        const double rs = collective_time_s(Collective::ReduceScatter, z.cp_kv_sequence, *cp, c);
        lc.cp_f = ag;
        lc.cp_b = (1.0 + again) * ag + rs;
        lc.cp_f_exposed = lc.cp_f;
        lc.cp_b_exposed = lc.cp_b;
        break;
      }
      case CpComm::AllToAll: {
        // Forward: Q, K, V to head shards and O back; backward: dO out, dQ, dK, dV back. Ulysses'
        // all-to-alls sit between the projections and attention, which waits for them: exposed.
        const double qkv = collective_time_s(Collective::AllToAll, z.cp_a2a_qkv, *cp, c);
        const double out = collective_time_s(Collective::AllToAll, z.cp_a2a_out, *cp, c);
        lc.cp_f = qkv + out;
        lc.cp_b = (1.0 + again) * (qkv + out);
        lc.cp_f_exposed = lc.cp_f;
        lc.cp_b_exposed = lc.cp_b;
        break;
      }
    }
  }
  if (const GroupInfo* ep = find_group(pl, Axis::EP); moe && ep && ep->size > 1) {
    auto one = [&](double S) { return ep_exchange_time_s(plan.ep_dispatcher, S, routing_of(model), *ep, c); };
    const double dispatch = one(z.ep_dispatch_message), combine = one(z.ep_combine_message);
    // Forward: one of each shape; backward: ep_calls_bwd / 2 of each (the recomputed forward's pair included).
    lc.ep_f = dispatch + combine;
    lc.ep_b = z.ep_calls_bwd / 2.0 * (dispatch + combine);
    lc.ep_dispatch = (1.0 + z.ep_calls_bwd / 2.0) * dispatch;
    lc.ep_combine = (1.0 + z.ep_calls_bwd / 2.0) * combine;
    // Shared experts beside the all-to-alls (moe_shared_expert_overlap; Megatron-Core runs them on a
    // side stream during dispatch and combine): first, each direction's EP time hides behind η_overlap
    // × the same layer's shared-expert compute of that direction (forward F; backward B + W). The
    // compute so used, hidden/η, is no longer a window for the rules below.
    double ep_f = lc.ep_f, ep_b = lc.ep_b, hidden_f = 0, hidden_b = 0, used_f = 0, used_b = 0;
    if (plan.moe_shared_expert_overlap && ov > 0) {
      const PassTimes& sh = lt.shared_experts;
      hidden_f = std::min(ep_f, ov * sh.f_s), hidden_b = std::min(ep_b, ov * (sh.b_s + sh.w_s));
      ep_f -= hidden_f, ep_b -= hidden_b, used_f = hidden_f / ov, used_b = hidden_b / ov;
    }
    // What is left of each direction's compute (the backward's input-gradient part, conservatively).
    const double win_f = std::max(0.0, lt.f_s() - used_f), win_b = std::max(0.0, lt.b_s() - used_b);
    if (plan.schedule == Schedule::DualPipe) {
      // DualPipe pairs a forward chunk with a backward chunk and interleaves their components
      // (DeepSeek-V3 §3.2.1, Figure 4: the forward's attention, dispatch, MLP, combine beside the
      // backward's MLP(B), MLP(W), attention(B), attention(W)), so the all-to-alls of both directions
      // run on one communication timeline hidden behind the pair's whole compute, F + B + W; the
      // paper reports both all-to-alls fully hidden. What exceeds η_overlap of it is exposed, shared
      // between the directions in proportion to their communication.
      const double pair = ep_f + ep_b;
      const double exposed = std::max(0.0, pair - ov * std::max(0.0, (lt.f_s() + lt.b_s() + lt.w_s()) - used_f - used_b));
      lc.ep_f_exposed = pair > 0 ? exposed * ep_f / pair : 0.0;
      lc.ep_b_exposed = pair > 0 ? exposed * ep_b / pair : 0.0;
    } else if (plan.ep_comm_overlap) {
      // Megatron-Core's EP overlap in 1F1B and interleaved schedules pairs one micro-batch's forward
      // with another's backward (--overlap-moe-expert-parallel-comm, after DualPipe); each direction's
      // all-to-alls hide behind the other direction's compute.
      lc.ep_f_exposed = std::max(0.0, ep_f - ov * win_b);
      lc.ep_b_exposed = std::max(0.0, ep_b - ov * win_f);
    } else {
      lc.ep_f_exposed = ep_f;
      lc.ep_b_exposed = ep_b;
    }
    if (plan.ep_dispatcher == EpDispatcher::DeepEp && c.sms > kDeepEpSms) {
      // DeepEP's kernels hold 20 SMs while they run (DeepSeek-V3 §3.2.2: 20 of the H800's 132 SMs;
      // DeepEP's Buffer default): the compute they overlap runs on the other SMs, sms/(sms − 20)
      // times longer. The extra time is charged as exposed communication.
      // The shared experts beside the all-to-alls are slowed the same way. This is not exposed
      // communication (the all-to-all is hidden, as DeepSeek reports) but slower compute: its own part
      // of the step (TimeBreakdown::ep_sm_slowdown_s).
      const double slow = kDeepEpSms / (c.sms - kDeepEpSms);
      if (plan.schedule == Schedule::DualPipe || plan.ep_comm_overlap) {
        lc.ep_sm_f += slow * std::min(ep_f - lc.ep_f_exposed, win_b);
        lc.ep_sm_b += slow * std::min(ep_b - lc.ep_b_exposed, win_f);
      }
      lc.ep_sm_f += slow * hidden_f;
      lc.ep_sm_b += slow * hidden_b;
    }
  }
  return lc;
}

CommOp make_op(Axis axis, Collective kind, const std::string& what, double message, double calls, const GroupInfo& g, double time_s,
               double exposed_s) {
  CommOp op;
  op.axis = axis;
  op.collective = kind;
  op.what = what;
  op.message_bytes = message;
  op.calls = calls;
  op.bytes = message * calls;
  op.group_size = g.size;
  op.link = g.link;
  op.time_s = time_s;
  op.exposed_s = exposed_s;
  return op;
}

std::string describe_peak(const Workload& w, double peak) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s dense %.0f TFLOP/s", name_of(w.dtype), peak / 1e12);
  return buf;
}

// Per-layer costs of one micro-batch on one GPU, dense and MoE layers.
struct LayerCosts {
  Sizes z;
  LayerCompute compute;  // dense, MoE and output-layer times, once per evaluation
  LayerComm lc_dense, lc_moe;
  double act_dense = 0, act_moe = 0;  // stored activations of one layer per micro-batch (with activation offload only)
};

LayerCosts layer_costs(const Resolved& r) {
  const ModelSpec& m = r.config.model;
  const Cluster& c = r.config.cluster;
  const Plan& plan = r.config.plan;
  LayerCosts k;
  k.z = message_sizes(m, plan, r.config.workload);
  k.compute = layer_compute(r);
  k.lc_dense = layer_comm(m, c, plan, r.placement, k.z, k.compute.dense, false);
  k.lc_moe = is_moe(m) ? layer_comm(m, c, plan, r.placement, k.z, k.compute.moe, true) : LayerComm{};
  if (plan.activation_offload_layers > 0) {
    k.act_dense = layer_activation_bytes(m, plan, r.config.workload, r.mesh, false);
    k.act_moe = is_moe(m) ? layer_activation_bytes(m, plan, r.config.workload, r.mesh, true) : 0.0;
  }
  return k;
}

// What one stage does per micro-batch: compute (all chunks) and TP/CP/EP communication.
struct PerStage {
  StageCompute compute;
  double tp_exposed = 0, cp_exposed = 0, ep_exposed = 0;  // per micro-batch (tp_exposed includes ETP)
  double ep_sm = 0;                                       // compute slowed by DeepEP's SMs, per micro-batch
  double tp = 0, cp = 0, ep = 0, etp = 0;                 // per micro-batch, total
  double ep_dispatch = 0, ep_combine = 0;                 // ep split by shape
  double offload = 0, offload_exposed = 0;                // activation copies to and from host memory, per micro-batch
  int dense_layers = 0, moe_layers = 0;
};

// The schedule's input (per chunk F/B/W with exposed communication folded in, p2p between stages)
// and each stage's sums.
ScheduleInput pipeline_input(const Resolved& r, const LayerCosts& k, std::vector<PerStage>& per) {
  const int p = r.config.plan.pp, chunks = r.mesh.chunks;
  ScheduleInput sin;
  sin.name = r.config.plan.schedule;
  sin.stages = p;
  sin.micro_batches = r.mesh.num_micro_batches;
  sin.chunks = chunks;
  sin.times.reserve(static_cast<size_t>(p) * chunks);
  const GroupInfo* pp_group = find_group(r.placement, Axis::PP);
  sin.p2p_s = p > 1 && pp_group ? collective_time_s(Collective::SendRecv, k.z.pp_message, *pp_group, r.config.cluster) : 0.0;
  const LayerComm &d = k.lc_dense, &e = k.lc_moe;
  const Cluster& cl_ = r.config.cluster;
  const double host_bps = cl_.host_link_bytes_per_s * cl_.efficiency.host_link, ov = cl_.efficiency.overlap;
  per.assign(p, PerStage{});
  for (int s = 0; s < p; ++s) {
    const StageInfo& st = r.placement.stages[s];
    PerStage& ps = per[s];
    ps.compute.stage = s;
    double offload_left = r.config.plan.activation_offload_layers;  // the stage's first layers, chunk by chunk
    for (int c = 0; c < chunks; ++c) {
      const size_t chunk = std::min<size_t>(c, st.chunks.size() - 1);
      const StageCompute ch = chunk_compute(r, k.compute, st, chunk);
      const ChunkLayers cl = chunk_layers(r.config.model, st, chunk);
      const double ne = cl.moe, nd = cl.dense;
      double f_exp = nd * d.f_exposed() + ne * e.f_exposed();
      double b_exp = nd * d.b_exposed() + ne * e.b_exposed();
      if (offload_left > 0 && host_bps > 0) {
        // Activation offload: the chunk's offloaded layers' activations go to host memory during its
        // forward and come back during its backward, each copy overlapped with that pass's compute
        // (TE's offload handler runs the copies on their own stream): exposed max(0, copy − η·compute).
        const double copy_s = offloaded_activations(offload_left, nd, ne, k.act_dense, k.act_moe).bytes / host_bps;
        const double out_exp = std::max(0.0, copy_s - ov * ch.f_s), in_exp = std::max(0.0, copy_s - ov * (ch.b_s + ch.w_s));
        f_exp += out_exp;
        b_exp += in_exp;
        ps.offload += 2.0 * copy_s;
        ps.offload_exposed += out_exp + in_exp;
        offload_left -= nd + ne;
      }
      sin.times.push_back({ch.f_s + f_exp, ch.b_s + b_exp, ch.w_s});
      ps.compute.f_s += ch.f_s;
      ps.compute.b_s += ch.b_s;
      ps.compute.w_s += ch.w_s;
      ps.compute.recompute_s += ch.recompute_s;
      ps.tp_exposed += nd * (d.tp_f_exposed + d.tp_b_exposed) + ne * (e.tp_f_exposed + e.tp_b_exposed + e.etp_f + e.etp_b);
      ps.etp += ne * (e.etp_f + e.etp_b);
      ps.cp_exposed += nd * (d.cp_f_exposed + d.cp_b_exposed) + ne * (e.cp_f_exposed + e.cp_b_exposed);
      ps.ep_exposed += ne * (e.ep_f_exposed + e.ep_b_exposed);
      ps.ep_sm += ne * (e.ep_sm_f + e.ep_sm_b);
      ps.tp += nd * (d.tp_f + d.tp_b) + ne * (e.tp_f + e.tp_b);
      ps.cp += nd * (d.cp_f + d.cp_b) + ne * (e.cp_f + e.cp_b);
      ps.ep += ne * (e.ep_f + e.ep_b);
      ps.ep_dispatch += ne * e.ep_dispatch;
      ps.ep_combine += ne * e.ep_combine;
      ps.dense_layers += static_cast<int>(nd);
      ps.moe_layers += static_cast<int>(ne);
    }
  }
  return sin;
}

// With the embedding or the loss counted as pipeline layers (core/plan.h) the chunks of a stage may
// differ by more than a layer, down to none: the schedule then weighs each alive (micro-batch,
// chunk) pair by the activation bytes of its chunk's layers (index stage·chunks + chunk). Empty
// otherwise: the chunks of a stage differ by at most one layer and count as equal shares.
std::vector<double> chunk_activation_weights(const Resolved& r) {
  const Plan& plan = r.config.plan;
  if (!plan.embedding_in_pipeline_split && !plan.loss_in_pipeline_split) return {};
  const ModelSpec& m = r.config.model;
  const double act_dense = layer_activation_bytes(m, plan, r.config.workload, r.mesh, false);
  const double act_moe = is_moe(m) ? layer_activation_bytes(m, plan, r.config.workload, r.mesh, true) : 0.0;
  std::vector<double> weights;
  for (const StageInfo& st : r.placement.stages)
    for (int c = 0; c < r.mesh.chunks; ++c) {
      const ChunkLayers cl = chunk_layers(m, st, std::min<size_t>(c, st.chunks.size() - 1));
      weights.push_back(cl.dense * act_dense + cl.moe * act_moe);
    }
  return weights;
}

// Memory, with the simulated peak of alive micro-batches (chunk units → stage units; weighed by
// each chunk's activations when the schedule had weights).
MemoryResult simulated_memory(const Resolved& r, const ScheduleInput& sin, const ScheduleResult& schedule) {
  const int p = r.config.plan.pp, chunks = r.mesh.chunks;
  std::vector<double> in_flight(p);
  for (int s = 0; s < p; ++s) {
    in_flight[s] = static_cast<size_t>(s) < schedule.peak_alive_micro_batches.size()
                       ? double(schedule.peak_alive_micro_batches[s]) / chunks
                       : in_flight_micro_batches(r.config.plan, r.mesh.num_micro_batches, s);
    if (static_cast<size_t>(s) >= schedule.peak_alive_weight.size()) continue;
    double stage_weight = 0;  // one micro-batch through all of the stage's chunks
    for (int c = 0; c < chunks; ++c) stage_weight += sin.alive_weights[static_cast<size_t>(s) * chunks + c];
    if (stage_weight > 0) in_flight[s] = schedule.peak_alive_weight[s] / stage_weight;  // none: no activations to weigh
  }
  return memory_per_stage(r, in_flight);
}

// Data-parallel communication after the last backward, and the optimizer step, of one stage.
struct DpCost {
  std::vector<CommOp> ops;
  double exposed_s = 0;
  double optimizer_s = 0;
};

// Gradient reduction and parameter gathers of `params` parameters over group `g` (ZeRO stage
// `zero`): ZeRO paper §5 (Rajbhandari et al. 2020) and Megatron's distributed optimizer.
CUTLAB_SMALL void add_dp_group(const Resolved& r, const PerStage& ps, const GroupInfo* g, double params, Axis axis, const char* whose,
                               DpCost& d) {
  if (!g || g->size <= 1 || params <= 0) return;
  const Cluster& c = r.config.cluster;
  const Plan& plan = r.config.plan;
  const int zero = r.mesh.zero, mb = r.mesh.num_micro_batches;
  const double ov = c.efficiency.overlap;
  // The windows: one micro-batch's backward through the stage for the gradient reduction (bucket by
  // bucket as the last backward produces them), its forward for the parameter gathers. The interleaved
  // schedule widens both: Megatron-Core launches chunk j's reduction when chunk j's last backward
  // ends (grad_sync_func) and chunk j+1's gathers at chunk j's first forward (param_sync_func), and its
  // cool-down and warm-up run p micro-batches per chunk (Narayanan et al. 2021 §2.2.2), so the last
  // chunk's reduction and the first chunk's gathers meet (p·(v−1) + 1)/v passes through the stage.
  const double v = r.mesh.chunks, widen = plan.schedule == Schedule::Interleaved ? (plan.pp * (v - 1) + 1) / v : 1.0;
  const double f = ps.compute.f_s, bw = ps.compute.b_s + ps.compute.w_s;  // every micro-batch's (ZeRO-2/3)
  const double f_last = widen * f, bw_last = widen * bw;                  // once a step
  const double grads = params * (r.config.workload.grad_dtype == GradDtype::FP32 ? 4.0 : 2.0), weights = params * 2.0;
  const std::string w_ = whose;
  if (zero == 0) {
    const double t = collective_time_s(Collective::AllReduce, grads, *g, c);
    const double x = plan.overlap_grad_reduce ? std::max(0.0, t - ov * bw_last) : t;
    d.ops.push_back(make_op(axis, Collective::AllReduce, w_ + " gradients", grads, 1, *g, t, x));
    d.exposed_s += x;
    return;
  }
  const double rs = collective_time_s(Collective::ReduceScatter, grads, *g, c);
  const double ag = collective_time_s(Collective::AllGather, weights, *g, c);
  if (zero == 1) {
    const double xr = plan.overlap_grad_reduce ? std::max(0.0, rs - ov * bw_last) : rs;
    const double xa = plan.overlap_param_gather ? std::max(0.0, ag - ov * f_last) : ag;
    d.ops.push_back(make_op(axis, Collective::ReduceScatter, w_ + " gradients", grads, 1, *g, rs, xr));
    d.ops.push_back(make_op(axis, Collective::AllGather, w_ + " updated weights", weights, 1, *g, ag, xa));
    d.exposed_s += xr + xa;
    return;
  }
  // ZeRO-2/3: gradients are reduce-scattered as each micro-batch's backward produces them.
  const double xr = plan.overlap_grad_reduce ? std::max(0.0, rs - ov * bw) : rs;
  d.ops.push_back(make_op(axis, Collective::ReduceScatter, w_ + " gradients, every micro-batch", grads, mb, *g, mb * rs, mb * xr));
  d.exposed_s += mb * xr;
  if (zero == 2) {
    const double xa = plan.overlap_param_gather ? std::max(0.0, ag - ov * f_last) : ag;
    d.ops.push_back(make_op(axis, Collective::AllGather, w_ + " updated weights", weights, 1, *g, ag, xa));
    d.exposed_s += xa;
  } else {
    // ZeRO-3 / FSDP: weights gathered before each forward and each backward (prefetched); without
    // reshard_after_forward (FSDP2) the forward's gathered weights stay for the backward: one
    // all-gather per micro-batch, hidden behind the forward only.
    const bool again = plan.reshard_after_forward;
    const double xf = plan.overlap_param_gather ? std::max(0.0, ag - ov * f) : ag;
    const double xb = !again ? 0.0 : plan.overlap_param_gather ? std::max(0.0, ag - ov * bw) : ag;
    const double calls = again ? 2.0 : 1.0;
    d.ops.push_back(make_op(axis, Collective::AllGather,
                            w_ + (again ? " weights, forward and backward of every micro-batch"
                                        : " weights, forward of every micro-batch (kept for the backward)"),
                            weights, calls * mb, *g, calls * mb * ag, mb * (xf + xb)));
    d.exposed_s += mb * (xf + xb);
  }
}

DpCost dp_tail(const Resolved& r, const StageMemory& sm, const PerStage& ps) {
  DpCost d;
  add_dp_group(r, ps, find_group(r.placement, Axis::DPGrad), sm.dense_params, Axis::DP, "dense", d);
  add_dp_group(r, ps, find_group(r.placement, Axis::EDP), sm.expert_params, Axis::EDP, "expert", d);
  // Adam step: read fp32 master, m, v and the gradient, write master, m, v and the 16-bit weights
  // (26 bytes + the gradient with fp32 moments, 18 with bf16 ones); an EMA on the GPU reads and
  // writes its fp32 copy (8 more); one on the CPU is updated asynchronously (DeepSeek-V3 §3.2.3).
  const Cluster& c = r.config.cluster;
  const Workload& w = r.config.workload;
  const double grad_bytes = w.grad_dtype == GradDtype::FP32 ? 4.0 : 2.0;
  const double step_bytes = 10.0 + (w.moment_dtype == MomentDtype::BF16 ? 8.0 : 16.0) + (w.ema == Ema::Gpu ? 8.0 : 0.0);
  const double dense_shard = r.mesh.zero >= 1 ? double(r.mesh.dp_attn) * r.config.plan.cp : 1.0;
  const double expert_shard = r.mesh.zero >= 1 ? double(r.mesh.edp) : 1.0;
  const double shard = sm.dense_params / dense_shard + sm.expert_params / expert_shard;
  d.optimizer_s = shard * (step_bytes + grad_bytes) / (c.hbm_bytes_per_s * c.efficiency.hbm);
  return d;
}

// Micro-batches that run through all of a stage's layers (DualPipe sends half of them through each
// of a device's two chunks).
double full_passes(const Resolved& r) {
  const int mb = r.mesh.num_micro_batches;
  return r.config.plan.schedule == Schedule::DualPipe ? mb / 2.0 : double(mb);
}

// Per-stage times and the busiest stage (whose GPU the breakdown and comm table describe).
void stage_times(const Resolved& r, const ScheduleInput& sin, const std::vector<double>& stage_end, const std::vector<DpCost>& dp,
                 TrainingEstimate& e) {
  const int p = r.config.plan.pp, chunks = r.mesh.chunks;
  const double passes = full_passes(r);
  double busiest_busy = -1;
  for (int s = 0; s < p; ++s) {
    StageTime st;
    st.stage = s;
    for (int k = 0; k < chunks; ++k) {
      const OpTimes& ot = sin.times[static_cast<size_t>(s) * chunks + k];
      st.f_s += ot.f_s;
      st.b_s += ot.b_s;
      st.w_s += ot.w_s;
    }
    st.busy_s = passes * (st.f_s + st.b_s + st.w_s);
    st.end_s = stage_end[s];
    st.dp_exposed_s = dp[s].exposed_s;
    st.optimizer_s = dp[s].optimizer_s;
    if (st.busy_s > busiest_busy) {
      busiest_busy = st.busy_s;
      e.comm_stage = s;
    }
    e.stages.push_back(st);
  }
}

// The step time split into parts that add up to it, for a GPU of the busiest stage.
void time_breakdown(const Resolved& r, const PerStage& b, double tail_end, double optimizer_s, TrainingEstimate& e) {
  const double passes = full_passes(r), makespan = e.schedule.makespan_s;
  TimeBreakdown& br = e.breakdown;
  br.recompute_s = passes * b.compute.recompute_s;
  br.compute_s = passes * (b.compute.f_s + b.compute.b_s + b.compute.w_s) - br.recompute_s;
  br.tp_exposed_s = passes * b.tp_exposed;
  br.cp_exposed_s = passes * b.cp_exposed;
  br.ep_exposed_s = passes * b.ep_exposed;
  br.ep_sm_slowdown_s = passes * b.ep_sm;
  br.offload_exposed_s = passes * b.offload_exposed;
  // The makespan is never below a stage's busy time but by rounding (−1e-16 when there is no pipeline).
  br.pp_bubble_s = std::max(0.0, makespan - e.stages[e.comm_stage].busy_s);
  br.dp_exposed_s = tail_end - makespan;
  br.optimizer_s = optimizer_s;
}

// Every collective of the step on a GPU of the busiest stage: TP, CP, EP, PP, then its DP tail.
void comm_table(const Resolved& r, const LayerCosts& k, const PerStage& b, double p2p_s, const DpCost& dp, TrainingEstimate& e) {
  const Plan& plan = r.config.plan;
  const Sizes& z = k.z;
  const int p = plan.pp, chunks = r.mesh.chunks, busiest = e.comm_stage;
  const double passes = full_passes(r);
  const double nd = b.dense_layers, ne = b.moe_layers;
  if (const GroupInfo* g = find_group(r.placement, Axis::TP); g && g->size > 1) {
    const double moe_share = folded_moe(plan, ne > 0) ? 0.5 : 1.0;
    const double calls = passes * (nd + moe_share * ne) * (z.tp_calls_fwd + z.tp_calls_bwd);
    const char* what = moe_share < 1 ? "layer outputs, 2 per dense layer and 1 per MoE layer (attention), forward and backward"
                                     : "layer outputs, 2 per layer forward and backward";
    const double tp_exposed = b.tp_exposed - b.etp;
    if (plan.sp) {
      e.comm.push_back(
          make_op(Axis::TP, Collective::ReduceScatter, what, z.tp_message, calls, *g, passes * b.tp / 2, passes * tp_exposed / 2));
      e.comm.push_back(
          make_op(Axis::TP, Collective::AllGather, what, z.tp_message, calls, *g, passes * b.tp / 2, passes * tp_exposed / 2));
    } else {
      e.comm.push_back(make_op(Axis::TP, Collective::AllReduce, what, z.tp_message, calls, *g, passes * b.tp, passes * tp_exposed));
    }
  }
  if (const GroupInfo* g = find_group(r.placement, Axis::ETP); g && b.etp > 0) {
    const double calls = passes * ne * 0.5 * (z.tp_calls_fwd + z.tp_calls_bwd);
    const char* what = "expert tokens gathered, expert outputs reduce-scattered (folding), per MoE layer";
    e.comm.push_back(
        make_op(Axis::ETP, Collective::AllGather, what, z.etp_message, calls, *g, passes * b.etp / 2, passes * b.etp / 2));
    e.comm.push_back(
        make_op(Axis::ETP, Collective::ReduceScatter, what, z.etp_message, calls, *g, passes * b.etp / 2, passes * b.etp / 2));
  }
  if (const GroupInfo* g = find_group(r.placement, Axis::CP); g && g->size > 1) {
    const bool full = z.cp_passes_bwd > 2;
    const double layers = passes * (nd + ne), fwd = 1.0 + (full ? 1.0 : 0.0);  // forward passes, the recomputed one included
    const Cluster& cl = r.config.cluster;
    if (plan.cp_comm == CpComm::Ring) {
      e.comm.push_back(make_op(Axis::CP, Collective::SendRecv,
                               full ? "K/V chunks around the ring (forward; three times in backward with recomputed attention)"
                                    : "K/V chunks around the ring (forward; twice in backward)",
                               z.cp_message, layers * (1.0 + z.cp_passes_bwd) * (g->size - 1), *g, passes * b.cp,
                               passes * b.cp_exposed));
    } else if (plan.cp_comm == CpComm::AllGather) {
      // Not overlapped: every row's exposed time is its time (layer_comm).
      const double ag = collective_time_s(Collective::AllGather, z.cp_kv_sequence, *g, cl);
      const double rs = collective_time_s(Collective::ReduceScatter, z.cp_kv_sequence, *g, cl);
      const double ag_calls = layers * (fwd + 1.0), rs_calls = layers;
      e.comm.push_back(make_op(Axis::CP, Collective::AllGather,
                               full ? "K/V of the whole sequence (forward, recomputed forward, backward)"
                                    : "K/V of the whole sequence (forward; again in backward)",
                               z.cp_kv_sequence, ag_calls, *g, ag_calls * ag, ag_calls * ag));
      e.comm.push_back(make_op(Axis::CP, Collective::ReduceScatter, "dK/dV of the whole sequence (backward)", z.cp_kv_sequence,
                               rs_calls, *g, rs_calls * rs, rs_calls * rs));
    } else {
      const double qkv = collective_time_s(Collective::AllToAll, z.cp_a2a_qkv, *g, cl);
      const double out = collective_time_s(Collective::AllToAll, z.cp_a2a_out, *g, cl);
      const double calls = layers * (fwd + 1.0);
      e.comm.push_back(make_op(Axis::CP, Collective::AllToAll,
                               full ? "Q, K, V to head shards (forward, recomputed forward), dQ, dK, dV back (backward)"
                                    : "Q, K, V to head shards (forward), dQ, dK, dV back (backward)",
                               z.cp_a2a_qkv, calls, *g, calls * qkv, calls * qkv));
      e.comm.push_back(make_op(Axis::CP, Collective::AllToAll,
                               full ? "attention output to sequence shards (forward, recomputed forward), dO back (backward)"
                                    : "attention output to sequence shards (forward), dO back (backward)",
                               z.cp_a2a_out, calls, *g, calls * out, calls * out));
    }
  }
  if (const GroupInfo* g = find_group(r.placement, Axis::EP); g && g->size > 1 && ne > 0) {
    // Dispatch-shaped and combine-shaped all-to-alls, one row each; the exposed part is shared in
    // proportion to their times.
    const bool full = z.ep_calls_bwd > 2;
    const double calls = passes * ne * (1.0 + z.ep_calls_bwd / 2.0), exposed = b.ep > 0 ? b.ep_exposed / b.ep : 0.0;
    // With the allgather dispatcher the forward's all-gather has a reduce-scatter for its gradient
    // and the other way round; the rows name the forward's collective.
    const Routing route = routing_of(r.config.model);
    const EpExchange d = ep_exchange(r.config.plan.ep_dispatcher, z.ep_dispatch_message, route, *g, true);
    const EpExchange cb = ep_exchange(r.config.plan.ep_dispatcher, z.ep_combine_message, route, *g, false);
    e.comm.push_back(
        make_op(Axis::EP, d.collective,
                full ? "EP dispatch: tokens to their experts (forward, recomputed forward), output gradients to them (backward)"
                     : "EP dispatch: tokens to their experts (forward), output gradients to them (backward)",
                d.message_bytes, calls, *g, passes * b.ep_dispatch, passes * b.ep_dispatch * exposed));
    e.comm.push_back(make_op(Axis::EP, cb.collective,
                             full ? "EP combine: expert outputs back (forward, recomputed forward), input gradients back (backward)"
                                  : "EP combine: expert outputs back (forward), input gradients back (backward)",
                             cb.message_bytes, calls, *g, passes * b.ep_combine, passes * b.ep_combine * exposed));
  }
  if (const GroupInfo* g = find_group(r.placement, Axis::PP); p > 1 && g) {
    // Each chunk pass receives and sends one activation forward and one gradient backward, except
    // at the ends of the pipeline. p2p on the critical path is part of the simulated makespan
    // (reported in the pipeline bubble).
    const double sends = chunks > 1 || (busiest > 0 && busiest < p - 1) ? 2.0 : 1.0;
    const double calls = passes * chunks * sends;
    e.comm.push_back(make_op(Axis::PP, Collective::SendRecv, "activations forward, gradients backward", z.pp_message, calls, *g,
                             calls * p2p_s, 0.0));
  }
  for (const CommOp& op : dp.ops) e.comm.push_back(op);
}

// Throughput and utilisation: MFU in the Narayanan et al. 2021 §5.1 convention (no recompute);
// HFU adds the recomputed forward (full) or attention (selective, Korthikanti et al. 2022 §5).
void utilisation(const Resolved& r, TrainingEstimate& e) {
  const ModelSpec& m = r.config.model;
  const Workload& w = r.config.workload;
  e.peak_flops_per_s = peak_flops_per_s(r.config.cluster, w);
  e.peak_name = describe_peak(w, e.peak_flops_per_s);
  const double logit_flops = 6.0 * w.global_batch * double(w.seq_len) * m.vocab * double(m.hidden);
  double recompute_flops = 0;
  if (r.config.plan.recompute == Recompute::Full) recompute_flops = (e.model_flops_per_step - logit_flops) / 3.0;
  if (r.config.plan.recompute == Recompute::Selective) {
    // The recomputed modules' forward FLOPs: core attention (Korthikanti et al. 2022 §5), MLA's
    // up-projections, the dense MLPs, the MoE blocks' or only their shared experts' GEMMs.
    auto again = [&](RecomputeModule x) { return recomputes(r.config.plan, x); };
    const LayerParams d = dense_layer_params(m), x = moe_layer_params(m);
    const double blocks = m.layers + m.mtp_layers, moe_blocks = moe_layer_count(m) + (is_moe(m) ? m.mtp_layers : 0);
    const double up = m.q_lora_rank * double(m.heads) * qk_head_dim(m) +
                      m.kv_lora_rank * double(m.heads) * (m.head_dim + v_head_dim_of(m));
    double per_token = 0;
    if (again(RecomputeModule::MlaUpProj) && is_mla(m)) per_token += blocks * up;
    if (again(RecomputeModule::Mlp)) per_token += (blocks - moe_blocks) * d.dense_mlp;
    if (again(RecomputeModule::Moe)) per_token += moe_blocks * (x.router + m.top_k * x.routed_expert + x.shared_experts);
    else if (again(RecomputeModule::SharedExperts)) per_token += moe_blocks * x.shared_experts;
    recompute_flops = w.global_batch * double(w.seq_len) * 2.0 * per_token;
    if (again(RecomputeModule::CoreAttn)) recompute_flops += w.global_batch * forward_attention_flops_per_sequence(m, w.seq_len);
  }
  if (r.config.plan.recompute == Recompute::OpSac)
    recompute_flops = op_sac_recomputed_matmul_fraction(m) * ((e.model_flops_per_step - logit_flops) / 3.0 -
                                                              w.global_batch * forward_attention_flops_per_sequence(m, w.seq_len));
  e.hardware_flops_per_step = e.model_flops_per_step + recompute_flops;
  e.tokens_per_s = w.global_batch * double(w.seq_len) / e.step_s;
  e.model_flops_per_s_per_gpu = e.model_flops_per_step / (e.step_s * e.mesh.gpus);
  e.mfu = e.model_flops_per_s_per_gpu / e.peak_flops_per_s;
  e.hfu = e.hardware_flops_per_step / (e.step_s * e.mesh.gpus * e.peak_flops_per_s);
}

}  // namespace

namespace {

// evaluate_training, stopping before the simulation when the makespan's lower bound is above
// step_bound_s (then `pruned` and an empty estimate).
Result<TrainingEstimate> training(const Resolved& r, bool with_ops, double step_bound_s, bool& pruned) {
  pruned = false;
  Result<TrainingEstimate> result;
  TrainingEstimate& e = result.value;
  const int p = r.config.plan.pp;
  e.mesh = r.mesh;
  e.params = count_params(r.config.model);
  e.placement = r.placement;
  e.model_flops_per_step = model_flops_per_step(r.config.model, r.config.workload.global_batch, r.config.workload.seq_len);
  LayerCosts costs = layer_costs(r);
  // The op lists move into the estimate; the times summed from them stay in `costs`.
  e.dense_layer_ops = std::move(costs.compute.dense_ops);
  e.moe_layer_ops = std::move(costs.compute.moe_ops);
  e.output_layer_ops = std::move(costs.compute.output_ops);
  e.input_layer_ops = std::move(costs.compute.input_ops);
  std::vector<PerStage> per;
  ScheduleInput sin = pipeline_input(r, costs, per);
  // The step is the makespan plus the exposed DP tail and the optimizer step (both ≥ 0): a plan
  // whose makespan cannot be below the bound cannot be either. (1 − 1e-9: the bound's sums are in
  // another order than the simulation's.)
  if (makespan_lower_bound_s(sin) * (1 - 1e-9) > step_bound_s) {
    pruned = true;
    return result;
  }
  sin.alive_weights = chunk_activation_weights(r);
  Result<ScheduleResult> sched = with_ops ? simulate_schedule(sin) : simulate_schedule_summary(sin);
  if (!sched.ok()) {
    result.errors = sched.errors;
    return result;
  }
  e.schedule = std::move(sched.value);
  e.memory = simulated_memory(r, sin, e.schedule);

  // Each stage's data-parallel tail starts when its last backward ends; the optimizer step waits
  // for the slowest.
  const std::vector<double>& stage_end = e.schedule.stage_end_s;
  double tail_end = 0, optimizer_s = 0;
  std::vector<DpCost> dp(p);
  for (int s = 0; s < p; ++s) {
    dp[s] = dp_tail(r, e.memory.per_stage[s], per[s]);
    tail_end = std::max(tail_end, stage_end[s] + dp[s].exposed_s);
    optimizer_s = std::max(optimizer_s, dp[s].optimizer_s);
  }
  e.step_s = tail_end + optimizer_s;

  stage_times(r, sin, stage_end, dp, e);
  time_breakdown(r, per[e.comm_stage], tail_end, optimizer_s, e);
  comm_table(r, costs, per[e.comm_stage], sin.p2p_s, dp[e.comm_stage], e);
  utilisation(r, e);
  return result;
}

}  // namespace

Result<TrainingEstimate> evaluate_training(const Resolved& r, bool with_ops) {
  bool pruned = false;
  return training(r, with_ops, std::numeric_limits<double>::infinity(), pruned);
}

Result<TrainingEstimate> evaluate_training_within(const Resolved& r, double step_bound_s, bool& pruned) {
  return training(r, false, step_bound_s, pruned);
}

ServingEstimate evaluate_serving(const Resolved& r) {
  ServingEstimate e;
  e.mesh = r.mesh;
  e.params = count_params(r.config.model);
  e.placement = r.placement;
  e.serving = estimate_inference(r);
  return e;
}

Result<Estimate> evaluate(const Resolved& r) {
  Result<Estimate> out;
  if (r.config.workload.mode == Mode::Infer) {
    out.value = evaluate_serving(r);
    return out;
  }
  Result<TrainingEstimate> t = evaluate_training(r);
  if (!t.ok()) {
    out.errors = std::move(t.errors);
    return out;
  }
  out.value = std::move(t.value);
  return out;
}

Result<Estimate> evaluate(const Config& config) {
  const Result<Resolved> r = resolve(config);
  if (!r.ok()) return {Estimate{}, r.errors};
  return evaluate(r.value);
}

}  // namespace cutlab
