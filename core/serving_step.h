// serving_step.h: the time of one engine step of a serving replica: the decode tokens of the
// running sequences and the prefill chunks scheduled beside them (iteration-level scheduling, Yu et
// al. 2022, Orca, OSDI'22; chunked prefill, Agrawal et al. 2024, Sarathi-Serve, arXiv:2403.02310),
// on each pipeline stage. A stage's time is a roofline of the mixed batch (Williams et al. 2009;
// Pope et al. 2022, arXiv:2211.05102 §3): max(bytes / (HBM × hbm_stream), FLOPs / (peak ×
// efficiency)), bytes = every weight shard once per step (routed experts: those the step's tokens
// touch) + the KV cache the step's attention reads; FLOPs = 2 per weight per token (the output
// layer's: per sampled token) + attention;
// plus two TP all-reduces per layer and an EP dispatch and combine per MoE layer sized by the step's
// tokens (core/comm.h). With expert parallelism the tokens of every attention replica of the EP
// group reach each GPU's experts. Each kernel class is its own roofline (dense GEMMs, grouped expert
// GEMMs, decode attention, prefill attention), GEMMs at a shape-dependent efficiency (core/ops.h),
// attention at its own dtype's peak; the memory-bound ops between them (norms, activations, the MoE
// expand and finalize, the logits' sampling) in bytes; every kernel costs at least the kernel floor; each
// sequence costs serving_seq_layer_s of GPU time per layer; the host adds host_seq_s per sequence of the step
// (the engine's per-request work on the CPU each step).
// With EP, each MoE layer waits for the group's slowest rank (expected_max_normal, serving_rank_cv).
// Ignores: writes of the new K/V, overlap of communication with compute, top-k/top-p sampling's sorts,
// the hottest expert's load beyond that spread, prompt chunks landing on some attention-DP ranks only.
#pragma once
#include <vector>

#include "core/comm.h"
#include "core/hardware.h"
#include "core/memory.h"
#include "core/model.h"
#include "core/placement.h"
#include "core/plan.h"
#include "core/precision.h"
#include "core/resolved.h"

namespace cutlab {

// KV cache of one token in one layer on one GPU holding `t`-way TP shards: 2·g/t·d_head·bytes, KV heads
// replicated when t > g (vLLM QKVParallelLinear); MLA's latent (kv_lora_rank + qk_rope_head_dim)·bytes,
// not split by TP (DeepSeek-V2 §2.1.2).
double kv_bytes_per_token_layer(const ModelSpec& m, double t, double bytes);

// Keys the layers of a stage attend to, summed over them (model.h attended_tokens, layer by layer).
// Held: the K/V a sequence whose context holds `context` tokens keeps (a local layer at most its window
// or chunk). Mean: the mean over queries whose contexts spread uniformly from `from` to
// 2·context − from (decode: the prompt length to prompt + output; a prompt's tokens: 0 to the prompt),
// exact for every layer: a chunked layer averages its query's place in its chunk over that range
// (half a chunk over many chunks, but 512 of 8,192 for contexts of 8,192 to 9,216). HeldFull: what it
// keeps when the engine gives every layer the whole context (Workload::local_kv_cache full); held(w)
// picks Held or HeldFull.
enum class Attended { Held, HeldFull, Mean };
double stage_attended_keys(const ModelSpec& m, const StageInfo& st, double context, Attended how, double from = 0.0);
Attended held(const Workload& w);

// E[max of n independent standard normal variables] by Blom's approximation Φ⁻¹((n − 0.375)/(n + 0.25))
// (Blom 1958), within 0.025 of Tippett 1925's exact table (0.5642, 1.0294, 1.4236, 1.7660 for
// n = 2, 4, 8, 16). 0 for n ≤ 1. An EP group's MoE exchange waits for its slowest rank: ranks whose
// time per layer spreads by a coefficient of variation cv (their loads and their jitter) meet
// cv·expected_max_normal(n) of the mean after it (Efficiencies::serving_rank_cv).
double expected_max_normal(int n);

// What every step reads from the resolved config, derived once per evaluation.
struct ServingSetup {
  const ModelSpec& m;
  const Cluster& c;
  const Plan& plan;
  const Workload& w;
  const Placement& pl;
  const Mesh& mesh;
  double t, h;                     // tp, hidden
  double wb, expert_wb, kv_layer;  // bytes per weight and per routed-expert weight; KV bytes per token per layer on one GPU
  double peak;                     // GEMM peak of the weight dtype (core/precision.h)
  double expert_peak;              // the routed experts' GEMM peak, by their dtype (core/precision.h)
  double attention_peak;           // peak of the attention math's dtype (core/precision.h)
  // Attention replicas whose tokens reach one EP group's experts: the expert group of ep × etp GPUs
  // spans ep·etp/(tp·cp) attention replicas (attention data parallel with expert parallel, DeepSeek-V3
  // §3.4.2; TensorRT-LLM's "DEP"); 1 when attention TP covers the group (TensorRT-LLM's "TEP").
  double group_replicas;
  const GroupInfo *tp, *ep, *pp;
  double ep_wait_z;       // expected_max_normal(EP group size): how far the slowest rank lags, in spreads (0 without EP)
  LayerParams moe_layer;  // moe_layer_params(m)
  std::vector<StageParams> stage_params;  // stage_params of each of pl.stages, in order
  // Each stage's kind: stages of one kind (the same layers, MoE and global-attention layers, ends and
  // parameters) cost the same in every step, which step_cost prices once; kNoKind past kMaxStageKinds.
  static constexpr int kMaxStageKinds = 8, kNoKind = -1;
  std::vector<int> stage_kind;
  explicit ServingSetup(const Resolved& r);
  // The same, its TP, EP and PP groups as `groups` lays them (core/serving_instances.h: an instance
  // placed whole); the stages and the rest from `r`.
  ServingSetup(const Resolved& r, const Placement& groups);
  double tp_allreduce(double bytes) const;
  double tp_logits_gather(double sampled) const;  // the logits of `sampled` tokens gathered over TP
  double ep_exchange(double bytes) const;         // an EP dispatch or combine with Plan::ep_dispatcher (core/comm.h)
  double pp_send(double bytes) const;
};

// A share of a step's decoding sequences, or of its prompt tokens, whose requests are of one length
// class (Workload::length_mix), and their mean context: decode, the class's prompt + output/2, its
// contexts spreading from its prompt length; prefill, half its prompt, from 0 (stage_attended_keys Mean).
struct ContextPart {
  double share = 1;
  double context = 0;
  double from = 0;
};

// The work of one step of one micro-batch of a replica.
struct StepLoad {
  double decode_seqs = 0;        // sequences decoding
  double decode_tokens = 1;      // tokens each decoding sequence runs (1; 1 + drafts verified with speculative decoding)
  double decode_context = 0;     // mean context of a decoding sequence, tokens
  double prefill_tokens = 0;     // prompt tokens of the chunks scheduled
  double prefill_context = 0;    // mean context before a prefill token (causal attention over its prompt)
  double prefill_kv_tokens = 0;  // KV-cache tokens of earlier chunks the chunks read
  double prefill_seqs = 0;       // sequences whose prompt chunks the step runs
  // Lengths of mixed classes: the decoding sequences' and the prompt tokens' contexts class by class,
  // (their attention keys summed by share; decode_context and prefill_context are then their means),
  // in arrays the caller holds while it prices the step; none: decode_context over contexts from the
  // workload's prompt_len, prefill_context.
  const ContextPart* decode_parts = nullptr;
  const ContextPart* prefill_parts = nullptr;
  int decode_part_count = 0, prefill_part_count = 0;
  double prompt_len = 0;  // mean prompt of the prompts the step completes (sampled_tokens); 0: the workload's
  double tokens() const { return decode_seqs * decode_tokens + prefill_tokens; }
};

struct StepCost {
  std::vector<double> stage_s;  // each stage's time for the step
  // Parts, summed over the stages (the walk of one micro-batch): the roofline's memory side
  // (weights, KV), the compute beyond it (with the kernel floors and the memory-bound ops between the
  // GEMMs), and communication.
  double weights_s = 0, kv_s = 0, compute_s = 0, tp_s = 0, ep_s = 0;
  double ep_wait_s = 0;           // the MoE layers' wait for the EP group's slowest rank (serving_rank_cv)
  double elementwise_s = 0;       // of compute_s: the memory-bound ops between the GEMMs (norms, activations, MoE expand/finalize)
  double host_s = 0;              // the host's work on the step's sequences (every stage's process)
  double pp_send_s = 0;           // one hand-off between stages
  double local_experts_read = 0;  // routed experts of one GPU read per MoE layer
  double walk_s() const;          // Σ stage_s + (pp − 1) hand-offs
};

// into += a · x, field by field: a step cost averaged over steps of several loads (into has x's stages).
void add_scaled(StepCost& into, const StepCost& x, double a);

// One step: every stage's layers for `load`.
StepCost step_cost(const ServingSetup& S, const StepLoad& load);

// One pass of the speculative draft head for `decode_seqs` sequences (one token each): one block of
// the target's shape (MoE when the model is) and the output layer, on the last stage (DeepSeek-V3
// §2.2: the MTP module shares the embedding and output head).
double draft_pass_s(const ServingSetup& S, double decode_seqs, double decode_context);
// The draft head's passes of one step: Workload::spec_draft_tokens of them (0 without drafts).
double drafts_s(const ServingSetup& S, double decode_seqs, double decode_context);

// Tokens of a step that sample, the rows its output layer runs on: every decoding token (1 + drafts
// per sequence) and the last token of each prompt the step completes, prefill_tokens / prompt_len of
// them on average (vLLM's logits_indices; TensorRT-LLM without gather_context_logits).
double sampled_tokens(double decode_tokens, double prefill_tokens, double prompt_len);

// Expected local experts read when `routings` token-expert choices land uniformly on `experts`
// experts, `local` of them on this GPU: local·(1 − (1 − 1/E)^routings) (each expert missed by every
// choice with probability 1 − 1/E; top-k draws without replacement give (1 − k/E)^tokens, within 0.1%
// at DeepSeek-V3's shape). Balanced node-limited routing (DeepSeek-V3 §2.1.2) leaves each expert's
// marginal k/E unchanged, so it holds there too.
double experts_touched(double local, double experts, double routings);

}  // namespace cutlab
