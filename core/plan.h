// plan.h: how the model is cut (Plan) and what is run (Workload), and the rules they must obey.
// Mesh (Megatron-Core): GPUs = TP × PP × CP × EP × DP. With MoE Parallel Folding (Liu et al. 2025,
// arXiv:2504.14960) `etp` is set and the attention mesh TP × CP × DP × PP and the expert mesh
// ETP × EP × EDP × PP cover the same GPUs.
// validate() returns every broken rule at once, each with its JSON path.
#pragma once
#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/choices.h"
#include "core/error.h"
#include "core/hardware.h"
#include "core/model.h"

namespace cutlab {

struct Plan {
  int tp = 1, pp = 1, cp = 1, ep = 1, dp = 1;
  int etp = 0;                    // 0: no folding (experts use TP = tp); ≥ 1: folding, GPUs = tp·cp·dp·pp
  bool sp = false;                // sequence parallel (Korthikanti et al. 2022)
  CpComm cp_comm = CpComm::Ring;  // how context-parallel attention exchanges K/V (core/choices.h)
  int zero = 0;                   // 0–3 (ZeRO stage; "fsdp" in JSON = 3)
  // ZeRO-3 / FSDP: free each unit's gathered weights after its forward and gather them again for its
  // backward (FSDP2 fully_shard reshard_after_forward, torchtitan's default for every block but the
  // last); false keeps every unit's gathered weights from the forward to the backward of a
  // micro-batch: one all-gather per micro-batch instead of two, all of a stage's weights unsharded at
  // the end of the forward. Read with ZeRO-3 only.
  bool reshard_after_forward = true;
  bool distributed_optimizer = false;  // Megatron's: shards optimizer state over DP (= ZeRO-1)
  int vpp = 1;                         // virtual pipeline chunks per stage
  Schedule schedule = Schedule::OneFOneB;
  int micro_batch = 1;  // sequences per micro-batch
  Recompute recompute = Recompute::None;
  // With recompute "selective": the modules re-run in the backward (Megatron-Core's default: core_attn).
  std::vector<RecomputeModule> recompute_modules = {RecomputeModule::CoreAttn};
  // The activation function's input kept in fp8 for its backward (Megatron-Core
  // activation_func_fp8_input_store; DeepSeek-V3 §3.3.2 caches the SwiGLU inputs of its experts in fp8).
  bool activation_func_fp8_input_store = false;
  // Layers of each stage whose stored activations wait in host memory between their forward and
  // their backward: copied out as the forward runs, back in ahead of the backward, over the cluster's
  // host link (Megatron-Core cpu_offloading, cpu_offloading_num_layers, cpu_offloading_activations;
  // Transformer Engine's CPU offload context). The first layers of each stage; 0: none.
  int activation_offload_layers = 0;
  bool flash_attention = true;      // the s×s score matrix is never stored
  bool fused_cross_entropy = true;  // Megatron's in-place vocab-parallel loss; false: PyTorch's on fp32 logits
  // Elementwise ops as fused kernels (Megatron-Core and Transformer Engine, Apex, torch.compile);
  // false: PyTorch eager composite ops, one HBM pass each (RMSNorm, rotary, SwiGLU, GQA's repeat_kv;
  // torchtitan without torch.compile): core/ops.cpp memory_ops.
  bool fused_elementwise = true;
  std::string rank_order = "tp-cp-ep-dp-pp";  // innermost first (Megatron-Core default)
  bool overlap_grad_reduce = true;            // DP gradient reduction overlapped with backward
  bool overlap_param_gather = true;           // distributed-optimizer / ZeRO-3 parameter gathers overlapped with forward
  bool tp_comm_overlap = false;               // TP collectives overlapped with GEMMs (Megatron --tp-comm-overlap)
  int tp_comm_overlap_sms = 16;  // SMs its pipeline and bulk overlaps take from their GEMMs (core/ops.cpp OpList::window):
                                 // Transformer Engine's userbuffers 16; torch's async TP (copy engines) 0
  EpDispatcher ep_dispatcher = EpDispatcher::AllToAll;
  EpDispatchDtype ep_dispatch_dtype = EpDispatchDtype::BF16;  // fp8: needs workload.dtype fp8
  bool ep_comm_overlap = false;                               // EP all-to-alls of one micro-batch overlapped with another's compute
                                                              // (Megatron-Core --overlap-moe-expert-parallel-comm, moe_a2a_overlap)
  // Routing load of the MoE layers (training). Capacity factor (GShard, Lepikhin et al. 2020 §2.2;
  // Switch Transformer, Fedus et al. 2021 §2.2; Megatron-Core moe_expert_capacity_factor): each
  // expert takes at most cf · tokens · top_k / experts token copies and drops the rest; 0: dropless.
  // With moe_pad_to_capacity (Megatron-Core moe_pad_expert_input_to_capacity) every expert computes
  // exactly its capacity, padded: expert GEMMs, all-to-all volume and routed activations scale by cf.
  double moe_capacity_factor = 0;
  bool moe_pad_to_capacity = false;
  // Dropless load imbalance: the hottest EP rank receives moe_imbalance × the mean token copies, and
  // the EP group waits for it (its expert GEMMs, permutes and all-to-all receive side set the layer's
  // time; its routed activations the memory peak). 1: balanced, as the published benchmarks
  // force-balance the routing; capped at the capacity factor when one is set (moe_load()).
  double moe_imbalance = 1;
  // The shared experts' forward (and backward) run beside the same layer's dispatch and combine
  // all-to-alls (Megatron-Core moe_shared_expert_overlap: a side stream during the token
  // dispatcher's communication), hiding η_overlap × their compute of the EP time. Under DualPipe
  // the pair's window already holds the shared experts (estimate.cpp layer_comm).
  bool moe_shared_expert_overlap = false;
  std::vector<int> layers_per_stage;  // empty: even split, first and last stages take the remainder's shortfall
  // Megatron-Core account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split
  // (megatron/core/transformer/transformer_block.py get_num_layers_to_build): the input embedding
  // and the output layer with the loss each count as one layer of the pipeline split, which cuts
  // layers + those evenly into pp × vpp chunks; the first chunk of stage 0 builds one transformer
  // layer fewer, the last chunk of the last stage one fewer (a chunk may hold none).
  bool embedding_in_pipeline_split = false;
  bool loss_in_pipeline_split = false;
};

// One class of requests in a serving stream of mixed lengths (Workload::length_mix).
inline constexpr int kMaxLengthClasses = 8;
struct LengthClass {
  int prompt_len = 0;
  int output_len = 0;
  double share = 0;  // of the requests, relative to the other classes' (normalised to sum 1)
  bool operator==(const LengthClass&) const = default;
};

// At most kMaxLengthClasses values held in place (a Workload copies without allocating, and pricing a
// step allocates nothing): the classes of a length mix, and what is found for each. One pushed beyond
// them is not kept but marked (`overflow`), which the rules report.
template <class T>
struct ClassList {
  std::array<T, kMaxLengthClasses> items{};
  int count = 0;
  bool overflow = false;
  ClassList() = default;
  ClassList(std::initializer_list<T> list) {
    for (const T& x : list) push_back(x);
  }
  const T* begin() const { return items.data(); }
  const T* end() const { return items.data() + count; }
  T* begin() { return items.data(); }
  T* end() { return items.data() + count; }
  std::size_t size() const { return std::size_t(count); }
  bool empty() const { return count == 0; }
  const T& operator[](std::size_t i) const { return items[i]; }
  void push_back(const T& x) {
    if (count < kMaxLengthClasses) items[std::size_t(count++)] = x;
    else overflow = true;
  }
  bool operator==(const ClassList&) const = default;
};

struct Workload {
  Mode mode = Mode::Train;
  int seq_len = 4096;
  int global_batch = 0;       // sequences per step
  Dtype dtype = Dtype::BF16;  // GEMM precision
  GradDtype grad_dtype = GradDtype::FP32;
  Optimizer optimizer = Optimizer::Adam;
  MomentDtype moment_dtype = MomentDtype::FP32;  // Adam's two moments
  Ema ema = Ema::None;                           // an exponential moving average of the weights
  // Serving (mode infer):
  Batching batching = Batching::InFlight;
  // Most sequences in one engine step (TensorRT-LLM max_batch_size, vLLM max_num_seqs). With
  // pipeline parallelism each of the pp micro-batches in flight holds up to `batch`, so a replica
  // keeps pp × batch sequences (TensorRT-LLM getMaxNumSequences = max_batch_size × micro-batches;
  // vLLM's one scheduler per virtual engine). Static batching: the batch each replica serves.
  int batch = 1;
  int prompt_len = 1024;  // tokens prefilled per sequence (input sequence length)
  int output_len = 256;   // tokens generated per sequence, the first (from the prefill) included
  // A stream of mixed lengths (in-flight batching, an endless stream): each request one of these
  // classes, drawn in proportion to its share (at most kMaxLengthClasses); prompt_len and output_len
  // are then not read. Empty: every request prompt_len / output_len.
  ClassList<LengthClass> length_mix;
  WeightDtype weight_dtype = WeightDtype::BF16;
  // The routed experts' weights, stored and read (same: weight_dtype). Their GEMMs run at the peak
  // weight_dtype gives (core/precision.h): the activations' precision, as W4A8 and W4A16 MoE kernels
  // upcast 4-bit experts in the kernel.
  ExpertWeightDtype expert_weight_dtype = ExpertWeightDtype::Same;
  KvDtype kv_dtype = KvDtype::BF16;
  LocalKvCache local_kv_cache = LocalKvCache::Window;  // a local-attention layer's KV cache (core/choices.h)
  // In-flight batching: tokens one engine step may process, decode and prefill chunks together
  // (TensorRT-LLM max_num_tokens, vLLM max_num_batched_tokens).
  int max_num_tokens = 8192;
  // Paged KV cache: tokens per block (TensorRT-LLM tokens_per_block 32; vLLM block_size 16). A
  // sequence holds whole blocks (Kwon et al. 2023, PagedAttention, SOSP'23).
  int kv_block_tokens = 32;
  // The share of the memory left beside the weights and the step's workspace that the engine gives
  // its KV cache: TensorRT-LLM's kv_cache_config.free_gpu_memory_fraction (trtllm-bench
  // --kv_cache_free_gpu_mem_fraction; its default 0.9, 0.95 in its published performance runs). 1:
  // all of it. (vLLM's gpu_memory_utilization is a share of the whole memory instead.)
  double kv_cache_free_fraction = 1.0;
  // Requests per second arriving at the whole deployment (all replicas); 0: offline, every request
  // queued from the start (the maximum-throughput operating point).
  double request_rate_per_s = 0;
  // Offline run of a fixed number of requests over the whole deployment, all queued at the start
  // (trtllm-bench throughput --num_requests, vLLM benchmark_throughput --num-prompts); 0: an endless
  // stream, throughput at steady state. With uniform lengths such a run proceeds in waves: the first
  // `concurrency` requests start together and finish together, then the next; the last wave holds
  // what is left and runs as long as a full one with fewer sequences (core/inference.h run_s).
  int num_requests = 0;
  // Speculative decoding: tokens drafted per step (0: off) by a one-block draft head of the target's
  // shape sharing its output layer (DeepSeek-V3 §2.2 MTP module; EAGLE, Li et al. 2024), each
  // accepted with probability spec_acceptance (Leviathan et al. 2023, eq. 1).
  int spec_draft_tokens = 0;
  double spec_acceptance = 0.8;
};

// The request classes of a serving workload: length_mix with its shares normalised to sum 1, or one
// class of prompt_len / output_len.
using RequestClasses = ClassList<LengthClass>;
RequestClasses request_classes(const Workload& w);
// Their means over requests (Σ share · length: prompt_len and output_len of the mean request, not
// whole tokens) and the longest context one reaches (prompt + output).
struct MeanLengths {
  double prompt_len = 0, output_len = 0;
};
MeanLengths mean_lengths(const Workload& w);
long long longest_context(const Workload& w);
// "prompt 1024 · output 256", or the mix: "lengths 1000/200 70%, 8000/500 30%" (shares as percentages).
std::string lengths_text(const Workload& w);

// What is evaluated: the model, the machines, how the model is cut and what is run.
struct Config {
  ModelSpec model;
  Cluster cluster;
  Plan plan;
  Workload workload;
};

// Derived sizes of the two meshes and the plan's derived choices. Built once per evaluation
// (core/resolved.h); nothing else re-derives them.
struct Mesh {
  int gpus = 1;
  int dp_attn = 1;            // data-parallel replicas of attention/dense weights (= ep·dp without folding)
  int etp = 1;                // expert tensor parallel
  int edp = 1;                // expert data parallel = gpus / (etp·ep·pp)
  int num_micro_batches = 1;  // per pipeline per step
  int zero = 0;               // effective ZeRO stage (the distributed optimizer is ZeRO-1)
  int chunks = 1;             // model chunks per stage (interleaved: vpp; DualPipe: 2, one per direction)
};
Mesh derive_mesh(const Plan& plan, const Workload& w);

// GPUs = tp × pp × cp × ep × dp (with folding, ep lives inside tp × cp × dp: tp × pp × cp × dp).
// In double: absurd axes must not overflow on the way to being rejected.
double mesh_gpus(const Plan& plan);
// dp that makes the mesh cover `gpus` GPUs, or 0 when the rest of the mesh does not divide them.
int dp_for_gpus(const Plan& plan, long long gpus);
// The rest of the mesh, tp × pp × cp (× ep without folding).
long long mesh_without_dp(const Plan& plan);
// The five mesh axes in rank order, innermost first ("tp-cp-ep-dp-pp"); false (and `out` untouched)
// unless `order` is a permutation of tp, cp, ep, dp and pp.
bool rank_order_axes(const std::string& order, std::array<Axis, 5>& out);
// The recompute modules re-run in the backward as module_bit()s: plan.recompute_modules with
// recompute "selective", none otherwise (full recompute re-runs everything, per-op SAC its own list).
unsigned recompute_mask(const Plan& plan);
// Whether selective recompute re-runs `module` (recompute_mask has its bit).
bool recomputes(const Plan& plan, RecomputeModule module);
// Token copies an MoE layer's GPU handles, as multiples of the balanced, dropless mean
// (Plan::moe_capacity_factor, moe_pad_to_capacity, moe_imbalance):
//   recv: what the hottest EP rank's experts compute and receive (it sets the layer's time):
//         dropless imbalance; padded cf; otherwise min(imbalance, cf) (copies above capacity drop);
//   send: what each GPU sends (its own tokens): 1 dropless; padded cf; otherwise min(1, cf).
struct MoeLoad {
  double recv = 1, send = 1;
};
MoeLoad moe_load(const Plan& plan);
// ZeRO stage in effect: Megatron's distributed optimizer shards optimizer state over DP (ZeRO-1).
int effective_zero(const Plan& plan);

// Layers of the pipeline split: the transformer layers, plus one for the embedding and one for the
// loss when the plan counts them (Plan::embedding_in_pipeline_split, loss_in_pipeline_split).
int pipeline_split_layers(const ModelSpec& m, const Plan& plan);
// Transformer layers on each pipeline stage (size pp); plan.layers_per_stage when given.
std::vector<int> stage_layers(const ModelSpec& m, const Plan& plan);
// Transformer layers of each virtual stage of an interleaved pipeline (size pp·vpp; virtual stage
// k·pp + s is chunk k of stage s). Consecutive virtual stages hold consecutive layers.
std::vector<int> virtual_stage_layers(const ModelSpec& m, const Plan& plan);

Errors validate(const ModelSpec& m, const Cluster& c, const Plan& plan, const Workload& w);
// The same rules with the mesh already derived (core/resolved.cpp).
Errors validate(const Config& config, const Mesh& mesh);

}  // namespace cutlab
