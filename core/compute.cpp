#include "core/compute.h"

#include "core/ops.h"

#include <algorithm>

namespace cutlab {

double peak_flops_per_s(const Cluster& c, const Workload& w) { return w.dtype == Dtype::FP8 ? c.fp8_flops_per_s : c.bf16_flops_per_s; }

namespace {

StageCompute sum_ops(const std::vector<LayerOp>& ops) {
  StageCompute sc;
  for (const LayerOp& op : ops) sc.f_s += op.f_s, sc.b_s += op.b_s, sc.w_s += op.w_s;
  return sc;
}

void add(PassTimes& p, const LayerOp& op) { p.f_s += op.f_s, p.b_s += op.b_s, p.w_s += op.w_s; }

}  // namespace

LayerTimes layer_times(const std::vector<LayerOp>& ops, unsigned recompute_mask) {
  LayerTimes lt;
  for (const LayerOp& op : ops) {
    add(lt.all, op);
    if (op.weights) add(lt.weight_gemms, op);
    if (op.tp_window > 0 && op.tp_window < 5) add(lt.tp_window[op.tp_window], op);
    if (op.core_attention) add(lt.core_attention, op);
    if (op.modules & recompute_mask) add(lt.recomputed, op);
    if (op.modules & module_bit(RecomputeModule::SharedExperts)) add(lt.shared_experts, op);
  }
  return lt;
}

LayerTimes layer_times(const Resolved& r, bool moe) { return layer_times(layer_ops(r, moe), recompute_mask(r.config.plan)); }

LayerCompute layer_compute(const Resolved& r) {
  // Each op list is built once per evaluation; the estimate shows the same lists.
  LayerCompute k;
  if (dense_layer_count(r.config.model) > 0) k.dense_ops = layer_ops(r, false);
  if (is_moe(r.config.model)) k.moe_ops = layer_ops(r, true);
  k.output_ops = output_ops(r);
  k.input_ops = input_ops(r);
  const unsigned mask = recompute_mask(r.config.plan);
  k.dense = layer_times(k.dense_ops, mask);
  k.moe = layer_times(k.moe_ops, mask);
  k.output = sum_ops(k.output_ops);
  k.input = sum_ops(k.input_ops);
  k.mtp_head = sum_ops(mtp_head_ops(r));
  return k;
}

ChunkLayers chunk_layers(const ModelSpec& m, const StageInfo& st, size_t chunk) {
  ChunkLayers c;
  const auto [first_layer, last_layer] = st.chunks[chunk];
  c.moe = moe_layers_between(m, first_layer, last_layer);
  c.dense = std::max(0, last_layer - first_layer + 1) - c.moe;
  c.input = static_cast<int>(chunk) == st.embedding_chunk;
  c.output = static_cast<int>(chunk) == st.output_chunk;
  if (c.output) (is_moe(m) ? c.moe : c.dense) += m.mtp_layers;
  return c;
}

StageCompute chunk_compute(const Resolved& r, const LayerCompute& k, const StageInfo& st, size_t chunk) {
  const ModelSpec& m = r.config.model;
  const Plan& plan = r.config.plan;
  StageCompute sc;
  sc.stage = st.stage;
  const ChunkLayers cl = chunk_layers(m, st, chunk);
  const double ne = cl.moe, nd = cl.dense;
  const LayerTimes& dense = k.dense;
  const LayerTimes& moe = k.moe;
  sc.f_s = nd * dense.f_s() + ne * moe.f_s();
  sc.b_s = nd * dense.b_s() + ne * moe.b_s();
  sc.w_s = nd * dense.w_s() + ne * moe.w_s();
  if (plan.recompute == Recompute::Full) sc.recompute_s = sc.f_s;
  if (plan.recompute == Recompute::Selective) sc.recompute_s = nd * dense.recomputed.f_s + ne * moe.recomputed.f_s;
  if (plan.recompute == Recompute::OpSac)  // dense layers only (plan.cpp): the unsaved weight GEMMs and every other op but attention's
    sc.recompute_s = nd * (op_sac_recomputed_matmul_fraction(m) * dense.weight_gemms.f_s +
                           (dense.all.f_s - dense.weight_gemms.f_s - dense.core_attention.f_s));
  const double mtp = cl.output ? m.mtp_layers : 0.0;
  for (const auto& [part, times] :
       {std::pair{&k.input, cl.input ? 1.0 : 0.0}, {&k.output, cl.output ? 1.0 : 0.0}, {&k.mtp_head, mtp}}) {
    sc.f_s += times * part->f_s;
    sc.b_s += times * part->b_s;
    sc.w_s += times * part->w_s;
  }
  sc.b_s += sc.recompute_s;
  return sc;
}

StageCompute stage_compute(const Resolved& r, const StageInfo& st) {
  StageCompute sum;
  sum.stage = st.stage;
  const LayerCompute k = layer_compute(r);
  for (size_t c = 0; c < st.chunks.size(); ++c) {
    const StageCompute ch = chunk_compute(r, k, st, c);
    sum.f_s += ch.f_s;
    sum.b_s += ch.b_s;
    sum.w_s += ch.w_s;
    sum.recompute_s += ch.recompute_s;
  }
  return sum;
}

}  // namespace cutlab
