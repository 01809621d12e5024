#include "core/compute.h"

#include "core/ops.h"

#include <algorithm>

namespace cutlab {

double peak_flops_per_s(const Cluster& c, const Workload& w) { return w.dtype == Dtype::FP8 ? c.fp8_flops_per_s : c.bf16_flops_per_s; }

double gemm_time_s(double M, double N, double K, double peak, const Efficiencies& e) {
  if (M <= 0 || N <= 0 || K <= 0) return 0.0;
  const double x = std::min({M, N, K});
  const double efficiency = e.gemm * x / (x + e.gemm_half_dim);
  return 2.0 * M * N * K / (peak * efficiency);
}

LayerTimes layer_times(const Resolved& r, bool moe) {
  // The layer's ops (core/ops.h) summed by class.
  LayerTimes lt;
  for (const LayerOp& op : layer_ops(r, moe)) {
    switch (op.op_class) {
      case OpClass::Gemm: lt.gemm_f_s += op.f_s; break;
      case OpClass::Attention: lt.attention_f_s += op.f_s; break;
      case OpClass::Memory: lt.memory_f_s += op.f_s; break;
    }
  }
  return lt;
}

LayerCompute layer_compute(const Resolved& r) {
  LayerCompute k;
  k.dense = layer_times(r, false);
  if (is_moe(r.config.model)) k.moe = layer_times(r, true);
  for (const LayerOp& op : output_ops(r)) {
    k.output.f_s += op.f_s;
    k.output.b_s += op.b_s;
    k.output.w_s += op.w_s;
  }
  return k;
}

StageCompute chunk_compute(const Resolved& r, const LayerCompute& k, int first_layer, int last_layer) {
  const ModelSpec& m = r.config.model;
  const Plan& plan = r.config.plan;
  StageCompute sc;
  const int first_moe = is_moe(m) ? m.dense_layers : m.layers;
  const double layers = last_layer - first_layer + 1;
  const double ne = std::max(0, last_layer - std::max(first_layer, first_moe) + 1), nd = layers - ne;
  const LayerTimes& dense = k.dense;
  const LayerTimes& moe = k.moe;
  sc.f_s = nd * dense.f_s() + ne * moe.f_s();
  sc.b_s = nd * dense.b_s() + ne * moe.b_s();
  sc.w_s = nd * dense.w_s() + ne * moe.w_s();
  if (plan.recompute == Recompute::Full) sc.recompute_s = sc.f_s;
  if (plan.recompute == Recompute::Selective) sc.recompute_s = nd * dense.attention_f_s + ne * moe.attention_f_s;
  if (plan.recompute == Recompute::OpSac)  // dense layers only (plan.cpp): the unsaved matmuls and every memory-bound op
    sc.recompute_s = nd * (op_sac_recomputed_matmul_fraction(m) * dense.gemm_f_s + dense.memory_f_s);
  if (last_layer == m.layers - 1) {  // the output layer and the loss
    sc.f_s += k.output.f_s;
    sc.b_s += k.output.b_s;
    sc.w_s += k.output.w_s;
  }
  sc.b_s += sc.recompute_s;
  return sc;
}

StageCompute stage_compute(const Resolved& r, const StageInfo& st) {
  StageCompute sum;
  sum.stage = st.stage;
  const LayerCompute k = layer_compute(r);
  for (const auto& [first, last] : st.chunks) {
    const StageCompute ch = chunk_compute(r, k, first, last);
    sum.f_s += ch.f_s;
    sum.b_s += ch.b_s;
    sum.w_s += ch.w_s;
    sum.recompute_s += ch.recompute_s;
  }
  return sum;
}

}  // namespace cutlab
