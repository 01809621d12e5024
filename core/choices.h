// choices.h: every named choice of a config (schedule, recompute, dtypes, mode, process-group axis,
// collective, link) as an enum class, each with ONE name table. json_io reads and writes the names
// through these tables, the page receives them from the core (options_json → "choices") and builds
// its menus from them; nothing else compares a choice by its name.
#pragma once
#include <array>
#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace cutlab {

enum class Mode { Train, Infer };
// Pipeline schedules: GPipe (Huang et al. 2019), 1F1B (PipeDream-Flush, Narayanan et al. 2021),
// interleaved 1F1B (Narayanan et al. 2021 §2.2), ZB-H1 (Qi et al. 2024), DualPipe (DeepSeek-V3 §3.2.1).
enum class Schedule { GPipe, OneFOneB, Interleaved, ZbH1, DualPipe };
// Recompute: none, selective and full of Korthikanti et al. 2022 §4-5; op_sac: torchtitan's per-op
// selective checkpointing (model.h op_sac_recomputed_matmul_fraction, memory.cpp).
enum class Recompute { None, Selective, Full, OpSac };
// What selective recompute re-runs (Megatron-Core TransformerConfig.recompute_modules, with
// recompute_granularity "selective"; default core_attn): core attention, MLA's up-projections and
// rotary, the two norms, the dense MLP, the experts' activation function, the whole MoE block, the
// shared experts. Each op of a layer (core/ops.h) belongs to the modules that contain it.
enum class RecomputeModule { CoreAttn, MlaUpProj, LayerNorm, Mlp, MoeAct, Moe, SharedExperts };
constexpr unsigned module_bit(RecomputeModule m) { return 1u << static_cast<unsigned>(m); }
// Adam's moments: fp32, or bf16 (Megatron-Core's precision-aware optimizer, --exp-avg-dtype and
// --exp-avg-sq-dtype; DeepSeek-V3 §3.3.2 "Low-Precision Optimizer States").
enum class MomentDtype { FP32, BF16 };
// Exponential moving average of the weights: none, an fp32 copy on the GPU (sharded as the
// optimizer state), or on the CPU, updated asynchronously (DeepSeek-V3 §3.2.3 "Exponential Moving
// Average in CPU").
enum class Ema { None, Gpu, Cpu };
// MoE token dispatch: alltoall (Megatron's all-to-all dispatcher: every copy of a token is sent to its
// expert's GPU) or deepep (DeepEP, Megatron's flex dispatcher with DeepEP or HybridEP: one copy per
// remote node over the scale-out network, fanned out over NVLink there; DeepSeek-V3 §3.2.2).
enum class EpDispatcher { AllToAll, DeepEp, AllGather };
// Precision of the tokens sent by the MoE dispatch: bf16, fp8 with one fp32 scale per 128 values
// (DeepSeek-V3 §3.3.2 "Low-Precision Communication"; DeepEP's fp8 dispatch), or NVFP4 for the experts'
// fp4 GEMMs when serving (core/comm.h). The combine stays bf16.
enum class EpDispatchDtype { BF16, FP8, FP4 };
// How context-parallel attention moves K and V (Megatron-Core cp_comm_type, Transformer Engine
// context_parallel.py): ring (p2p: Liu et al. 2023 ring attention; each of the cp − 1 steps passes a
// K/V chunk, overlapped with the attention of the chunk already received), allgather (Llama 3,
// arXiv:2407.21783 §3.3.2: K and V of the whole sequence all-gathered, then attention of the local
// query chunks; not overlapped) or a2a (DeepSpeed-Ulysses, Jacobs et al. 2023, arXiv:2309.14509: Q, K,
// V all-to-all from sequence shards to head shards and the output back; not overlapped).
enum class CpComm { Ring, AllGather, AllToAll };
enum class Dtype { BF16, FP8 };                          // GEMM precision of training
enum class GradDtype { FP32, BF16, FP16 };               // gradient buffer (Megatron main_grad fp32; ZeRO paper fp16)
enum class WeightDtype { BF16, FP8, INT4, FP4, MXFP4 };  // serving weights (core/precision.h)
// The routed experts' weights when they differ from the rest (gpt-oss's checkpoint: MXFP4 experts,
// bf16 attention): same (as weight_dtype) or a weight dtype.
enum class ExpertWeightDtype { Same, BF16, FP8, INT4, FP4, MXFP4 };
enum class KvDtype { BF16, FP8 };  // serving KV cache
// What the serving KV cache holds for a local-attention layer (ModelSpec::attention_window): window,
// only its window or chunk (vLLM's hybrid KV cache manager, SGLang's sliding-window pool), or full,
// the whole context as in every other layer (TensorRT-LLM's KV cache manager unless
// kv_cache_config.max_attention_window lists the layers' windows). The keys read are the window's
// either way: the attention kernel skips the rest.
enum class LocalKvCache { Window, Full };
// How a serving replica batches requests: inflight (continuous batching: iteration-level scheduling,
// Yu et al. 2022, Orca, OSDI'22; prefill chunks beside decode tokens under a token budget per step,
// Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310) or static (one batch prefilled, then decoded
// to the end, before the next batch starts).
enum class Batching { InFlight, Static };
enum class Optimizer { Adam };  // fp32 master weights and two fp32 moments
// Process groups: the five mesh axes, the expert mesh (etp, edp) and the group that reduces dense
// gradients (dp_grad = DP × CP × EP without folding).
enum class Axis { TP, CP, EP, DP, PP, ETP, EDP, DPGrad };
enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };
enum class Link { NVLink, ScaleOut };

template <class E>
struct Named {
  E value;
  const char* name;   // the JSON spelling
  const char* label;  // how people name it (menus, tables)
};

// ChoiceTable<E>::entries: every value of E with its name and label; ::key: the JSON key (or kind)
// the names belong to, for messages and for the page's menus.
template <class E>
struct ChoiceTable;

#define CUTLAB_CHOICES(E, KEY, ...)                                                                                    \
  template <>                                                                                                          \
  struct ChoiceTable<E> {                                                                                              \
    static constexpr const char* key = KEY;                                                                            \
    static constexpr std::array<Named<E>, std::initializer_list<Named<E>>{__VA_ARGS__}.size()> entries{{__VA_ARGS__}}; \
  };

CUTLAB_CHOICES(Mode, "mode", {Mode::Train, "train", "train (one step)"}, {Mode::Infer, "infer", "serve (inference)"})
CUTLAB_CHOICES(Schedule, "schedule", {Schedule::GPipe, "gpipe", "GPipe"}, {Schedule::OneFOneB, "1f1b", "1F1B"},
               {Schedule::Interleaved, "interleaved", "interleaved 1F1B"}, {Schedule::ZbH1, "zb-h1", "zero bubble ZB-H1"},
               {Schedule::DualPipe, "dualpipe", "DualPipe"})
CUTLAB_CHOICES(Recompute, "recompute", {Recompute::None, "none", "none"}, {Recompute::Selective, "selective", "selective"},
               {Recompute::Full, "full", "full"}, {Recompute::OpSac, "op_sac", "per-op SAC (torchtitan)"})
CUTLAB_CHOICES(RecomputeModule, "recompute_modules", {RecomputeModule::CoreAttn, "core_attn", "core attention"},
               {RecomputeModule::MlaUpProj, "mla_up_proj", "MLA up-proj"}, {RecomputeModule::LayerNorm, "layernorm", "norms"},
               {RecomputeModule::Mlp, "mlp", "dense MLP"}, {RecomputeModule::MoeAct, "moe_act", "expert act."},
               {RecomputeModule::Moe, "moe", "MoE block"}, {RecomputeModule::SharedExperts, "shared_experts", "shared experts"})
CUTLAB_CHOICES(MomentDtype, "moment_dtype", {MomentDtype::FP32, "fp32", "fp32"}, {MomentDtype::BF16, "bf16", "bf16"})
CUTLAB_CHOICES(Ema, "ema", {Ema::None, "none", "none"}, {Ema::Gpu, "gpu", "on the GPU"}, {Ema::Cpu, "cpu", "on the CPU"})
CUTLAB_CHOICES(EpDispatcher, "ep_dispatcher", {EpDispatcher::AllToAll, "alltoall", "all-to-all"},
               {EpDispatcher::DeepEp, "deepep", "DeepEP (one copy per node)"},
               {EpDispatcher::AllGather, "allgather", "all-gather + reduce-scatter"})
CUTLAB_CHOICES(EpDispatchDtype, "ep_dispatch_dtype", {EpDispatchDtype::BF16, "bf16", "bf16"},
               {EpDispatchDtype::FP8, "fp8", "fp8 (1×128 scales; combine bf16)"},
               {EpDispatchDtype::FP4, "fp4", "fp4 (NVFP4, 1×16 scales; combine bf16)"})
CUTLAB_CHOICES(CpComm, "cp_comm", {CpComm::Ring, "ring", "ring (p2p, overlapped)"},
               {CpComm::AllGather, "allgather", "all-gather K/V (Llama 3)"},
               {CpComm::AllToAll, "a2a", "all-to-all of heads (Ulysses)"})
CUTLAB_CHOICES(Dtype, "dtype", {Dtype::BF16, "bf16", "bf16"}, {Dtype::FP8, "fp8", "fp8"})
CUTLAB_CHOICES(GradDtype, "grad_dtype", {GradDtype::FP32, "fp32", "fp32 (Megatron)"}, {GradDtype::BF16, "bf16", "bf16"},
               {GradDtype::FP16, "fp16", "fp16"})
CUTLAB_CHOICES(WeightDtype, "weight_dtype", {WeightDtype::BF16, "bf16", "bf16"}, {WeightDtype::FP8, "fp8", "fp8"},
               {WeightDtype::INT4, "int4", "int4"}, {WeightDtype::FP4, "fp4", "fp4 (NVFP4)"},
               {WeightDtype::MXFP4, "mxfp4", "mxfp4 (OCP MX)"})
CUTLAB_CHOICES(ExpertWeightDtype, "expert_weight_dtype", {ExpertWeightDtype::Same, "same", "as the weights"},
               {ExpertWeightDtype::BF16, "bf16", "bf16"}, {ExpertWeightDtype::FP8, "fp8", "fp8"},
               {ExpertWeightDtype::INT4, "int4", "int4"}, {ExpertWeightDtype::FP4, "fp4", "fp4 (NVFP4)"},
               {ExpertWeightDtype::MXFP4, "mxfp4", "mxfp4 (OCP MX)"})
CUTLAB_CHOICES(KvDtype, "kv_dtype", {KvDtype::BF16, "bf16", "bf16"}, {KvDtype::FP8, "fp8", "fp8"})
CUTLAB_CHOICES(LocalKvCache, "local_kv_cache", {LocalKvCache::Window, "window", "the window (vLLM, SGLang)"},
               {LocalKvCache::Full, "full", "the whole context (TensorRT-LLM default)"})
CUTLAB_CHOICES(Batching, "batching", {Batching::InFlight, "inflight", "in-flight (continuous)"},
               {Batching::Static, "static", "static batch"})
CUTLAB_CHOICES(Optimizer, "optimizer", {Optimizer::Adam, "adam", "Adam"})
CUTLAB_CHOICES(Axis, "axis", {Axis::TP, "tp", "TP"}, {Axis::CP, "cp", "CP"}, {Axis::EP, "ep", "EP"}, {Axis::DP, "dp", "DP"},
               {Axis::PP, "pp", "PP"}, {Axis::ETP, "etp", "ETP"}, {Axis::EDP, "edp", "EDP"}, {Axis::DPGrad, "dp_grad", "DP gradients"})
CUTLAB_CHOICES(Collective, "collective", {Collective::AllReduce, "all-reduce", "all-reduce"},
               {Collective::AllGather, "all-gather", "all-gather"}, {Collective::ReduceScatter, "reduce-scatter", "reduce-scatter"},
               {Collective::AllToAll, "all-to-all", "all-to-all"}, {Collective::SendRecv, "send-recv", "send-recv"})
CUTLAB_CHOICES(Link, "link", {Link::NVLink, "nvlink", "NVLink"}, {Link::ScaleOut, "scaleout", "scale-out"})

#undef CUTLAB_CHOICES

// The name of a value ("" for a value outside the table, which cannot be constructed from input).
template <class E>
const char* name_of(E v) {
  for (const auto& n : ChoiceTable<E>::entries)
    if (n.value == v) return n.name;
  return "";
}

// Reads a name; false when it is not in the table.
template <class E>
bool choice_from_name(std::string_view name, E& out) {
  for (const auto& n : ChoiceTable<E>::entries)
    if (name == n.name) {
      out = n.value;
      return true;
    }
  return false;
}

// Every name, in table order.
template <class E>
std::vector<std::string> choice_names() {
  std::vector<std::string> out;
  for (const auto& n : ChoiceTable<E>::entries) out.emplace_back(n.name);
  return out;
}

// A named choice prints as its name.
template <class E, class = decltype(ChoiceTable<E>::key)>
std::ostream& operator<<(std::ostream& os, E value) {
  return os << name_of(value);
}

// "a, b, c" for messages.
template <class E>
std::string choice_list() {
  std::string s;
  for (const auto& n : ChoiceTable<E>::entries) s += (s.empty() ? "" : ", ") + std::string(n.name);
  return s;
}

}  // namespace cutlab
