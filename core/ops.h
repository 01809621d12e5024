// ops.h: one transformer layer (and the output layer with the loss) as a list of ops on one GPU for
// one micro-batch, each with its FLOPs, HBM bytes and forward / input-gradient / weight-gradient
// time. compute.h's LayerTimes are these ops summed by class, so `cutlab ops` and the step
// breakdown add up to the same time.
// Time per class (compute.h): GEMMs at peak × efficiency(shape), backward one GEMM for the input
// gradient and one for the weight gradient (Narayanan et al. 2021 §5.1); attention at the attention
// efficiency, backward 2.5× the forward (FlashAttention-2, Dao 2023 §3.1); memory-bound ops at HBM
// bandwidth × efficiency, backward 2× the forward (read the saved input and the output gradient,
// write the input gradient).
#pragma once
#include <string_view>
#include <vector>

#include "core/choices.h"
#include "core/resolved.h"

namespace cutlab {

enum class OpClass { Gemm, Attention, Memory };

template <>
struct ChoiceTable<OpClass> {
  static constexpr const char* key = "class";
  static constexpr std::array<Named<OpClass>, 3> entries{
      {{OpClass::Gemm, "gemm", "GEMM"}, {OpClass::Attention, "attention", "attention"}, {OpClass::Memory, "memory", "memory-bound"}}};
};

struct LayerOp {
  std::string_view name;  // e.g. "QKV projection": a literal, no allocation on the hot path
  OpClass op_class = OpClass::Gemm;
  double count = 1;            // instances (local experts); the figures below are for all of them
  double m = 0, n = 0, k = 0;  // GEMM shape of one instance (M×K)·(K×N); 0 for other ops
  double flops = 0;            // forward
  double bytes = 0;            // forward HBM traffic (GEMMs: operands and result once)
  double f_s = 0, b_s = 0, w_s = 0;
  bool compute_bound() const { return op_class != OpClass::Memory; }
};

// The ops of one transformer layer (dense MLP or MoE) on one GPU, one micro-batch, in the order they run.
std::vector<LayerOp> layer_ops(const Resolved& r, bool moe);
// The output layer and the loss (on the last stage).
std::vector<LayerOp> output_ops(const Resolved& r);

}  // namespace cutlab
