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

LayerTimes layer_times(const std::vector<LayerOp>& ops) {
  LayerTimes lt;
  for (const LayerOp& op : ops) {
    add(lt.all, op);
    if (op.weights) add(lt.weight_gemms, op);
    if (op.core_attention) add(lt.core_attention, op);
  }
  return lt;
}

LayerTimes layer_times(const Resolved& r, bool moe) { return layer_times(layer_ops(r, moe)); }

LayerCompute layer_compute(const Resolved& r) {
  // Each op list is built once per evaluation; the estimate shows the same lists.
  LayerCompute k;
  if (dense_layer_count(r.config.model) > 0) k.dense_ops = layer_ops(r, false);
  if (is_moe(r.config.model)) k.moe_ops = layer_ops(r, true);
  k.output_ops = output_ops(r);
  k.input_ops = input_ops(r);
  k.dense = layer_times(k.dense_ops);
  k.moe = layer_times(k.moe_ops);
  k.output = sum_ops(k.output_ops);
  k.input = sum_ops(k.input_ops);
  return k;
}

StageCompute chunk_compute(const Resolved& r, const LayerCompute& k, const StageInfo& st, size_t chunk) {
  const ModelSpec& m = r.config.model;
  const Plan& plan = r.config.plan;
  StageCompute sc;
  sc.stage = st.stage;
  const auto [first_layer, last_layer] = st.chunks[chunk];
  const int first_moe = is_moe(m) ? m.dense_layers : m.layers;
  const double layers = std::max(0, last_layer - first_layer + 1);
  const double ne = std::max(0, last_layer - std::max(first_layer, first_moe) + 1), nd = layers - ne;
  const LayerTimes& dense = k.dense;
  const LayerTimes& moe = k.moe;
  sc.f_s = nd * dense.f_s() + ne * moe.f_s();
  sc.b_s = nd * dense.b_s() + ne * moe.b_s();
  sc.w_s = nd * dense.w_s() + ne * moe.w_s();
  if (plan.recompute == Recompute::Full) sc.recompute_s = sc.f_s;
  if (plan.recompute == Recompute::Selective) sc.recompute_s = nd * dense.core_attention.f_s + ne * moe.core_attention.f_s;
  if (plan.recompute == Recompute::OpSac)  // dense layers only (plan.cpp): the unsaved weight GEMMs and every other op but attention's
    sc.recompute_s = nd * (op_sac_recomputed_matmul_fraction(m) * dense.weight_gemms.f_s +
                           (dense.all.f_s - dense.weight_gemms.f_s - dense.core_attention.f_s));
  const int c = static_cast<int>(chunk);
  for (const auto& [part, runs] : {std::pair{&k.input, c == st.embedding_chunk}, {&k.output, c == st.output_chunk}}) {
    if (!runs) continue;
    sc.f_s += part->f_s;
    sc.b_s += part->b_s;
    sc.w_s += part->w_s;
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
