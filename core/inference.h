// inference.h: serving a model with a plan (workload.mode = "infer"); Pope et al. 2022 (arXiv:2211.05102).
// Prefill (TTFT) is compute-bound: the prompts' GEMMs and causal attention, two TP all-reduces per
// layer, EP all-to-alls, and a hand-off per stage boundary, stage after stage. Decode (TPOT) reads
// every weight shard (for MoE, the experts the batch touches) and the batch's KV cache once per token:
// max(bytes / (HBM × efficiency), FLOPs / peak) per stage, plus per-layer TP all-reduces (small
// messages: latency-bound), EP all-to-alls and PP hand-offs; a token walks the stages in turn, so with
// one batch in flight each stage waits (p − 1)/p of the time. DP replicas serve separate requests and
// never talk. KV cache per token = 2·L·g·d_head·bytes (GQA; KV heads replicated when TP > g), or
// L·(kv_lora_rank + qk_rope_head_dim)·bytes for MLA's compressed latent (DeepSeek-V2 §2.1.2).
// Ignores: continuous batching dynamics, paged-attention fragmentation, speculative decoding,
// prefill/decode disaggregation and chunked prefill, pipelining several batches through PP stages.
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

// KV cache of one token for the whole model (all layers, all KV heads, unsharded).
double kv_cache_bytes_per_token(const ModelSpec& m, KvDtype kv_dtype);

struct InferenceEstimate {
  MemoryResult memory;                  // per stage: weights, KV cache, activations (workspace)
  long long max_batch_that_fits = 0;    // per replica; 0 when not even the weights fit
  int replicas = 1;                     // data-parallel replicas serving separate requests
  double kv_cache_bytes_per_token = 0;  // whole model
  // Time to first token: prefill of the batch's prompts, stage after stage.
  double ttft_s = 0;
  double prefill_compute_s = 0, prefill_tp_s = 0, prefill_ep_s = 0, prefill_pp_s = 0;
  // Time per output token: one decode step through every stage.
  double tpot_s = 0;
  double decode_weights_s = 0;  // reading weight shards (memory-bound part)
  double decode_kv_s = 0;       // reading the KV cache
  double decode_compute_s = 0;  // FLOPs at peak (counts where larger than the reads)
  double decode_tp_s = 0, decode_ep_s = 0, decode_pp_s = 0;
  double stage_idle_fraction = 0;      // (p − 1)/p: stages waiting while a token walks the pipeline
  std::vector<double> decode_stage_s;  // one decode step on each stage (the token's walk, in order)
  double tokens_per_s_per_user = 0;
  double tokens_per_s_per_replica = 0;
  double tokens_per_s_total = 0;
  double tokens_per_s_per_gpu = 0;
  std::vector<CommOp> comm;  // per output token, a GPU of the first stage
};

InferenceEstimate estimate_inference(const Resolved& r);

}  // namespace cutlab
