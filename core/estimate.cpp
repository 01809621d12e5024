#include "core/estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cutlab {

namespace {

// Communication of one layer for one micro-batch on one GPU: time and exposed part, forward and backward.
struct LayerComm {
  double tp_f = 0, tp_b = 0, tp_f_exposed = 0, tp_b_exposed = 0;
  double cp_f = 0, cp_b = 0, cp_f_exposed = 0, cp_b_exposed = 0;
  double ep_f = 0, ep_b = 0, ep_f_exposed = 0, ep_b_exposed = 0;
  double f_exposed() const { return tp_f_exposed + cp_f_exposed + ep_f_exposed; }
  double b_exposed() const { return tp_b_exposed + cp_b_exposed + ep_b_exposed; }
};

struct Sizes {
  double tp_message = 0;   // bytes of one TP collective (a layer's output activations)
  double cp_message = 0;   // bytes of one K/V chunk sent per ring step
  double ep_message = 0;   // bytes each GPU sends in one dispatch (or combine) all-to-all
  double pp_message = 0;   // bytes of one activation sent to the next stage
  int tp_calls_fwd = 2, tp_calls_bwd = 2;
};

Sizes message_sizes(const ModelSpec& m, const Plan& plan, const Workload& w) {
  Sizes z;
  const double s = double(w.seq_len) / plan.cp, b = plan.micro_batch, h = m.hidden, t = plan.tp;
  const double ts = plan.sp ? t : 1.0;
  // TP: Megatron's f/g operators, one all-reduce (or reduce-scatter + all-gather with SP) after
  // attention and one after the MLP, forward and backward (Shoeybi et al. 2019 §3, Figure 4).
  z.tp_message = 2.0 * s * b * h;
  z.tp_calls_bwd = plan.recompute == Recompute::Full ? 4 : 2;  // the recomputed forward repeats its two
  // CP (ring attention, Liu et al. 2023; Megatron-Core CP): each of the cp − 1 steps passes this
  // rank's K and V chunk; MLA passes decompressed per-head K and V.
  const double g_gpu = std::max(1.0, double(m.kv_heads) / t), a_gpu = double(m.heads) / t;
  const double kv_width = is_mla(m) ? a_gpu * (qk_head_dim(m) + v_head_dim_of(m)) : g_gpu * (qk_head_dim(m) + v_head_dim_of(m));
  z.cp_message = 2.0 * s * b * kv_width;
  // EP: every token's hidden state goes to its k experts and comes back (dispatch + combine).
  z.ep_message = 2.0 * (s * b / ts) * m.top_k * h;
  // PP: one activation tensor per micro-batch per boundary. Each TP rank sends 1/t of it: with SP
  // it is already scattered; without, Megatron's scatter/gather optimisation (Narayanan et al.
  // 2021 §4.1) splits it and all-gathers it over NVLink on arrival.
  z.pp_message = 2.0 * s * b * h / t;
  return z;
}

LayerComm layer_comm(const Cluster& c, const Plan& plan, const Placement& pl, const Sizes& z, const LayerTimes& lt,
                     bool moe) {
  LayerComm lc;
  const double ov = c.efficiency.overlap;
  if (const GroupInfo* tp = find_group(pl, Axis::TP); tp && tp->size > 1) {
    const double one = plan.sp ? collective_time_s(Collective::ReduceScatter, z.tp_message, *tp, c) +
                                     collective_time_s(Collective::AllGather, z.tp_message, *tp, c)
                               : collective_time_s(Collective::AllReduce, z.tp_message, *tp, c);
    lc.tp_f = z.tp_calls_fwd * one;
    lc.tp_b = z.tp_calls_bwd * one;
    // --tp-comm-overlap pipelines the collectives with the neighbouring GEMMs (Megatron / TE userbuffers).
    lc.tp_f_exposed = plan.tp_comm_overlap ? std::max(0.0, lc.tp_f - ov * lt.gemm_f_s) : lc.tp_f;
    lc.tp_b_exposed = plan.tp_comm_overlap ? std::max(0.0, lc.tp_b - ov * 2.0 * lt.gemm_f_s) : lc.tp_b;
  }
  if (const GroupInfo* cp = find_group(pl, Axis::CP); cp && cp->size > 1) {
    const double step = collective_time_s(Collective::SendRecv, z.cp_message, *cp, c);
    lc.cp_f = (cp->size - 1) * step;
    lc.cp_b = 2.0 * lc.cp_f;  // K/V again and their gradients
    // Each ring step overlaps with the attention of the chunk already received.
    lc.cp_f_exposed = std::max(0.0, lc.cp_f - ov * lt.attention_f_s);
    lc.cp_b_exposed = std::max(0.0, lc.cp_b - ov * 2.0 * lt.attention_f_s);
  }
  if (const GroupInfo* ep = find_group(pl, Axis::EP); moe && ep && ep->size > 1) {
    const double one = collective_time_s(Collective::AllToAll, z.ep_message, *ep, c);
    lc.ep_f = 2.0 * one;
    lc.ep_b = 2.0 * one;
    if (plan.schedule == Schedule::DualPipe) {
      // DualPipe overlaps one direction's all-to-all with the other direction's compute
      // (DeepSeek-V3 §3.2.1, Figure 4).
      lc.ep_f_exposed = std::max(0.0, lc.ep_f - ov * lt.b_s());
      lc.ep_b_exposed = std::max(0.0, lc.ep_b - ov * lt.f_s());
    } else {
      lc.ep_f_exposed = lc.ep_f;
      lc.ep_b_exposed = lc.ep_b;
    }
  }
  return lc;
}

CommOp make_op(Axis axis, Collective kind, const std::string& what, double message, double calls,
               const GroupInfo& g, double time_s, double exposed_s) {
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

}  // namespace

Result<Estimate> evaluate(const Config& cfg) {
  Result<Estimate> result;
  const ModelSpec& m = cfg.model;
  const Cluster& c = cfg.cluster;
  const Plan& plan = cfg.plan;
  const Workload& w = cfg.workload;
  result.errors = validate(m, c, plan, w);
  if (!result.ok()) return result;

  Estimate& e = result.value;
  e.mode = w.mode;
  e.mesh = derive_mesh(plan, w);
  e.params = count_params(m);
  e.placement = place(m, c, plan, w);
  if (w.mode == Mode::Infer) {
    e.inference = estimate_inference(m, c, plan, w, e.placement);
    return result;
  }
  e.model_flops_per_step = model_flops_per_step(m, w.global_batch, w.seq_len);
  const int p = plan.pp, mb = e.mesh.num_micro_batches;
  const int chunks = plan.schedule == Schedule::DualPipe ? 2 : plan.vpp;

  // Per-layer compute and communication, then per chunk for the schedule.
  const Sizes z = message_sizes(m, plan, w);
  const LayerTimes lt_dense = layer_times(m, c, plan, w, false);
  const LayerTimes lt_moe = is_moe(m) ? layer_times(m, c, plan, w, true) : LayerTimes{};
  const LayerComm lc_dense = layer_comm(c, plan, e.placement, z, lt_dense, false);
  const LayerComm lc_moe = is_moe(m) ? layer_comm(c, plan, e.placement, z, lt_moe, true) : LayerComm{};
  const int first_moe = is_moe(m) ? m.dense_layers : m.layers;

  ScheduleInput sin;
  sin.name = plan.schedule;
  sin.stages = p;
  sin.micro_batches = mb;
  sin.chunks = chunks;
  sin.times.reserve(static_cast<size_t>(p) * chunks);
  const GroupInfo* pp_group = find_group(e.placement, Axis::PP);
  sin.p2p_s = p > 1 && pp_group ? collective_time_s(Collective::SendRecv, z.pp_message, *pp_group, c) : 0.0;

  struct PerStage {
    StageCompute compute;
    double tp_exposed = 0, cp_exposed = 0, ep_exposed = 0;  // per micro-batch
    double tp = 0, cp = 0, ep = 0;                          // per micro-batch, total
    int dense_layers = 0, moe_layers = 0;
  };
  std::vector<PerStage> per(p);
  for (int s = 0; s < p; ++s) {
    const StageInfo& st = e.placement.stages[s];
    PerStage& ps = per[s];
    ps.compute.stage = s;
    for (int k = 0; k < chunks; ++k) {
      const auto [first, last] = st.chunks[std::min<size_t>(k, st.chunks.size() - 1)];
      const StageCompute ch = chunk_compute(m, c, plan, w, first, last);
      const double ne = std::max(0, last - std::max(first, first_moe) + 1), nd = (last - first + 1) - ne;
      const double f_exp = nd * lc_dense.f_exposed() + ne * lc_moe.f_exposed();
      const double b_exp = nd * lc_dense.b_exposed() + ne * lc_moe.b_exposed();
      sin.times.push_back({ch.f_s + f_exp, ch.b_s + b_exp, ch.w_s});
      ps.compute.f_s += ch.f_s;
      ps.compute.b_s += ch.b_s;
      ps.compute.w_s += ch.w_s;
      ps.compute.recompute_s += ch.recompute_s;
      ps.tp_exposed += nd * (lc_dense.tp_f_exposed + lc_dense.tp_b_exposed) + ne * (lc_moe.tp_f_exposed + lc_moe.tp_b_exposed);
      ps.cp_exposed += nd * (lc_dense.cp_f_exposed + lc_dense.cp_b_exposed) + ne * (lc_moe.cp_f_exposed + lc_moe.cp_b_exposed);
      ps.ep_exposed += ne * (lc_moe.ep_f_exposed + lc_moe.ep_b_exposed);
      ps.tp += nd * (lc_dense.tp_f + lc_dense.tp_b) + ne * (lc_moe.tp_f + lc_moe.tp_b);
      ps.cp += nd * (lc_dense.cp_f + lc_dense.cp_b) + ne * (lc_moe.cp_f + lc_moe.cp_b);
      ps.ep += ne * (lc_moe.ep_f + lc_moe.ep_b);
      ps.dense_layers += static_cast<int>(nd);
      ps.moe_layers += static_cast<int>(ne);
    }
  }

  Result<ScheduleResult> sched = simulate_schedule(sin);
  if (!sched.ok()) {
    result.errors = sched.errors;
    return result;
  }
  e.schedule = std::move(sched.value);

  // Memory, with the simulated peak of alive micro-batches (chunk units → stage units).
  std::vector<double> in_flight(p);
  for (int s = 0; s < p; ++s)
    in_flight[s] = static_cast<size_t>(s) < e.schedule.peak_alive_micro_batches.size()
                       ? double(e.schedule.peak_alive_micro_batches[s]) / chunks
                       : in_flight_micro_batches(plan, mb, s);
  e.memory = memory_per_stage(m, c, plan, w, e.placement, in_flight);

  // Data-parallel communication and the optimizer, per stage.
  const double ov = c.efficiency.overlap;
  const int zero = std::max(plan.zero, plan.distributed_optimizer ? 1 : 0);
  const double grad_bytes = w.grad_dtype == GradDtype::FP32 ? 4.0 : 2.0;
  const GroupInfo* dp_grad = find_group(e.placement, Axis::DPGrad);
  const GroupInfo* edp = find_group(e.placement, Axis::EDP);
  std::vector<double> stage_end(p, 0.0);
  for (const Op& op : e.schedule.ops) stage_end[op.stage] = std::max(stage_end[op.stage], op.end_s);

  struct DpCost {
    std::vector<CommOp> ops;
    double exposed_s = 0;
    double optimizer_s = 0;
  };
  auto dp_cost = [&](int s) {
    DpCost d;
    const StageMemory& sm = e.memory.per_stage[s];
    const PerStage& ps = per[s];
    const double f = ps.compute.f_s, bw = ps.compute.b_s + ps.compute.w_s;
    auto add_group = [&](const GroupInfo* g, double params, Axis axis, const char* whose) {
      if (!g || g->size <= 1 || params <= 0) return;
      const double grads = params * grad_bytes, weights = params * 2.0;
      const std::string w_ = whose;
      if (zero == 0) {
        const double t = collective_time_s(Collective::AllReduce, grads, *g, c);
        const double x = plan.overlap_grad_reduce ? std::max(0.0, t - ov * bw) : t;
        d.ops.push_back(make_op(axis, Collective::AllReduce, w_ + " gradients", grads, 1, *g, t, x));
        d.exposed_s += x;
        return;
      }
      const double rs = collective_time_s(Collective::ReduceScatter, grads, *g, c);
      const double ag = collective_time_s(Collective::AllGather, weights, *g, c);
      if (zero == 1) {
        const double xr = plan.overlap_grad_reduce ? std::max(0.0, rs - ov * bw) : rs;
        const double xa = plan.overlap_param_gather ? std::max(0.0, ag - ov * f) : ag;
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
        const double xa = plan.overlap_param_gather ? std::max(0.0, ag - ov * f) : ag;
        d.ops.push_back(make_op(axis, Collective::AllGather, w_ + " updated weights", weights, 1, *g, ag, xa));
        d.exposed_s += xa;
      } else {
        // ZeRO-3 / FSDP: weights gathered before each forward and each backward (prefetched).
        const double xa = plan.overlap_param_gather ? std::max(0.0, ag - ov * f) + std::max(0.0, ag - ov * bw) : 2 * ag;
        d.ops.push_back(make_op(axis, Collective::AllGather, w_ + " weights, forward and backward of every micro-batch", weights, 2.0 * mb, *g, 2.0 * mb * ag, mb * xa));
        d.exposed_s += mb * xa;
      }
    };
    add_group(dp_grad, sm.dense_params, Axis::DP, "dense");
    add_group(edp, sm.expert_params, Axis::EDP, "expert");
    // Adam step: read fp32 master, m, v and the gradient, write master, m, v and the 16-bit weights.
    const double dense_shard = zero >= 1 ? double(e.mesh.dp_attn) * plan.cp : 1.0;
    const double expert_shard = zero >= 1 ? double(e.mesh.edp) : 1.0;
    const double shard = sm.dense_params / dense_shard + sm.expert_params / expert_shard;
    d.optimizer_s = shard * (26.0 + grad_bytes) / (c.hbm_bytes_per_s * c.efficiency.hbm);
    return d;
  };

  double tail_end = 0, optimizer_s = 0;
  std::vector<DpCost> dp(p);
  for (int s = 0; s < p; ++s) {
    dp[s] = dp_cost(s);
    tail_end = std::max(tail_end, stage_end[s] + dp[s].exposed_s);
    optimizer_s = std::max(optimizer_s, dp[s].optimizer_s);
  }
  const double makespan = e.schedule.makespan_s;
  e.step_s = tail_end + optimizer_s;

  // Stages and the busiest one. `passes`: micro-batches that run through all of a stage's layers
  // (DualPipe sends half the micro-batches through each of a device's two chunks).
  const double passes = plan.schedule == Schedule::DualPipe ? mb / 2.0 : double(mb);
  int busiest = 0;
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
      busiest = s;
    }
    e.stages.push_back(st);
  }
  e.comm_stage = busiest;
  const PerStage& b = per[busiest];
  TimeBreakdown& br = e.breakdown;
  br.recompute_s = passes * b.compute.recompute_s;
  br.compute_s = passes * (b.compute.f_s + b.compute.b_s + b.compute.w_s) - br.recompute_s;
  br.tp_exposed_s = passes * b.tp_exposed;
  br.cp_exposed_s = passes * b.cp_exposed;
  br.ep_exposed_s = passes * b.ep_exposed;
  // The makespan is never below a stage's busy time but by rounding (−1e-16 when there is no pipeline).
  br.pp_bubble_s = std::max(0.0, makespan - busiest_busy);
  br.dp_exposed_s = tail_end - makespan;
  br.optimizer_s = optimizer_s;

  // Communication table for a GPU of the busiest stage.
  const double m_calls = passes;
  const double nd = b.dense_layers, ne = b.moe_layers;
  if (const GroupInfo* g = find_group(e.placement, Axis::TP); g && g->size > 1) {
    const double calls = m_calls * (nd + ne) * (z.tp_calls_fwd + z.tp_calls_bwd);
    const char* what = "layer outputs, 2 per layer forward and backward";
    if (plan.sp) {
      e.comm.push_back(make_op(Axis::TP, Collective::ReduceScatter, what, z.tp_message, calls, *g, passes * b.tp / 2, passes * b.tp_exposed / 2));
      e.comm.push_back(make_op(Axis::TP, Collective::AllGather, what, z.tp_message, calls, *g, passes * b.tp / 2, passes * b.tp_exposed / 2));
    } else {
      e.comm.push_back(make_op(Axis::TP, Collective::AllReduce, what, z.tp_message, calls, *g, passes * b.tp, passes * b.tp_exposed));
    }
  }
  if (const GroupInfo* g = find_group(e.placement, Axis::CP); g && g->size > 1)
    e.comm.push_back(make_op(Axis::CP, Collective::SendRecv, "K/V chunks around the ring (forward; twice in backward)",
                             z.cp_message, m_calls * (nd + ne) * 3.0 * (g->size - 1), *g, passes * b.cp, passes * b.cp_exposed));
  if (const GroupInfo* g = find_group(e.placement, Axis::EP); g && g->size > 1 && ne > 0)
    e.comm.push_back(make_op(Axis::EP, Collective::AllToAll, "token dispatch and combine, forward and backward",
                             z.ep_message, m_calls * ne * 4.0, *g, passes * b.ep, passes * b.ep_exposed));
  if (p > 1 && pp_group) {
    // Each chunk pass receives and sends one activation forward and one gradient backward, except
    // at the ends of the pipeline.
    const double sends = chunks > 1 || (busiest > 0 && busiest < p - 1) ? 2.0 : 1.0;
    const double calls = passes * chunks * sends;
    e.comm.push_back(make_op(Axis::PP, Collective::SendRecv, "activations forward, gradients backward", z.pp_message,
                             calls, *pp_group, calls * sin.p2p_s, 0.0));
    // p2p on the critical path is part of the simulated makespan (reported in the pipeline bubble).
  }
  for (const CommOp& op : dp[busiest].ops) e.comm.push_back(op);

  // Throughput and utilisation.
  e.peak_flops_per_s = peak_flops_per_s(c, w);
  e.peak_name = describe_peak(w, e.peak_flops_per_s);
  const double logit_flops = 6.0 * w.global_batch * double(w.seq_len) * m.vocab * double(m.hidden);
  double recompute_flops = 0;
  if (plan.recompute == Recompute::Full) recompute_flops = (e.model_flops_per_step - logit_flops) / 3.0;
  if (plan.recompute == Recompute::Selective)
    recompute_flops = w.global_batch * forward_attention_flops_per_sequence(m, w.seq_len);
  e.hardware_flops_per_step = e.model_flops_per_step + recompute_flops;
  e.tokens_per_s = w.global_batch * double(w.seq_len) / e.step_s;
  e.model_flops_per_s_per_gpu = e.model_flops_per_step / (e.step_s * e.mesh.gpus);
  e.mfu = e.model_flops_per_s_per_gpu / e.peak_flops_per_s;
  e.hfu = e.hardware_flops_per_step / (e.step_s * e.mesh.gpus * e.peak_flops_per_s);
  return result;
}

}  // namespace cutlab
