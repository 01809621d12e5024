// inference.h: serving a model with a plan (workload.mode = "infer"); Pope et al. 2022 (arXiv:2211.05102).
// In-flight batching (the default, core/serving_batching.h): the steady state of each replica, its
// running sequences bounded by pp × batch, the paged KV cache and (with a request rate) Little's law,
// each engine step a roofline of its decode tokens and prefill chunks (core/serving_step.h), pp
// micro-batches in flight. Static batching (workload.batching "static"): one batch prefilled (TTFT:
// the prompts' GEMMs and causal attention, core/ops.h, two TP all-reduces per layer, EP all-to-alls, a
// hand-off per stage boundary, stage after stage), then decoded to the end, one batch walking the
// stages, each waiting (p − 1)/p of the time. DP replicas serve separate requests and never talk; the
// experts of an EP group see the tokens of every replica in it. KV cache per token = 2·L·g·d_head·bytes
// (GQA; KV heads replicated when TP > g), or L·(kv_lora_rank + qk_rope_head_dim)·bytes for MLA's
// compressed latent (DeepSeek-V2 §2.1.2).
// Mixed request lengths (workload.length_mix): core/serving_batching.h.
// Ignores: prefill/decode disaggregation (core/disaggregation.h).
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
#include "core/serving_batching.h"
#include "core/serving_step.h"

namespace cutlab {

// KV cache of one token for the whole model (all layers, all KV heads, unsharded).
double kv_cache_bytes_per_token(const ModelSpec& m, KvDtype kv_dtype);

// Where the time of a request goes: the parts add up to the total.
struct LatencyParts {
  double weights_s = 0;  // reading weight shards (memory-bound side of the roofline)
  double kv_s = 0;       // reading the KV cache
  double compute_s = 0;  // FLOPs beyond the reads (static prefill: all of its compute)
  double tp_s = 0, ep_s = 0;
  double ep_wait_s = 0;  // the MoE layers' wait for the EP group's slowest rank (in-flight serving)
  double pp_s = 0;       // hand-offs between stages, and (pp micro-batches) waiting for the slowest stage
  double draft_s = 0;    // speculative decoding's draft head
  double host_s = 0;     // the host's per-sequence work of each step (in-flight serving)
  // TTFT at a request rate: the wait for a free slot before admission (serving_batching.h slot_queue); a
  // replica that only prefills, behind the prompts that filled the steps before its own
  // (serving_prompt_queue.h)
  double queue_s = 0;
  double step_wait_s = 0;  // TTFT: the wait for the step in progress, with a free slot (a request rate)
  double total_s() const {
    return weights_s + kv_s + compute_s + tp_s + ep_s + ep_wait_s + pp_s + draft_s + host_s + queue_s + step_wait_s;
  }
};

struct InferenceEstimate {
  MemoryResult memory;  // per stage: weights, KV cache, activations (workspace)
  Batching batching = Batching::InFlight;
  // Largest `batch` whose sequences' KV cache fits beside the weights (in-flight: pp × batch
  // sequences of prompt_len + output_len tokens in whole KV blocks; static: batch sequences);
  // 0 when not even the weights fit.
  long long max_batch_that_fits = 0;
  long long kv_capacity_sequences = 0;  // per replica
  // The stage whose KV pool holds the fewest sequences (it bounds kv_capacity_sequences), and that
  // pool per GPU: kv_cache_free_fraction × what its weights and workspace leave (negative when they
  // do not fit).
  int kv_bound_stage = 0;
  double kv_pool_bytes = 0;
  int replicas = 1;  // data-parallel replicas serving separate requests
  // Instances: copies of the model (tp × cp × ep × pp GPUs; core/serving_instances.h), and how many
  // the nodes hold whole, each within one node (or on whole nodes of its own). The others straddle a
  // node boundary as the ranks lie; then the latencies, the step and the communication below are a
  // straddling instance's (the slowest), and the throughputs the sum over every instance.
  int instances = 1;
  int instances_whole = 1;
  int micro_batches = 1;                // in flight per replica (pp with in-flight batching)
  double kv_cache_bytes_per_token = 0;  // whole model
  // Steady state per replica.
  double concurrency = 0;  // sequences in flight
  ConcurrencyLimit concurrency_limit = ConcurrencyLimit::Batch;
  bool saturated = false;                                        // the request rate exceeds what the deployment serves
  bool token_budget_bound = false;                               // steps full to max_num_tokens
  double kv_cache_used_bytes = 0;                                // per GPU of the peak stage
  double kv_cache_occupancy = 0;                                 // of the KV pool (what the weights and workspace leave)
  double decode_seqs_per_step = 0, prefill_tokens_per_step = 0;  // one micro-batch step
  double prefill_steps = 0;                                      // steps from admission to the first token
  double spec_tokens_per_step = 1;                               // tokens a decoding sequence gains per step
  double step_s = 0;                                             // between two steps of a sequence
  double local_experts_read = 0;                                 // routed experts a GPU reads per MoE layer per step
  // Latency of a request.
  double ttft_s = 0;  // to the first token
  double tpot_s = 0;  // between output tokens (inter-token latency)
  double e2e_latency_s = 0;
  // With a mix of lengths (workload.length_mix), each class's own: its share of the requests, the steps
  // to its first token, its TTFT and end-to-end latency (ttft_s and e2e_latency_s above are their
  // means over requests; TPOT is every class's). Empty for uniform lengths.
  ClassList<ClassLatency> length_classes;
  // Offline run of workload.num_requests (0 when the workload is an endless stream): per replica,
  // from the start to the last token, and the waves of sequences it takes (0 for mixed lengths, which
  // finish apart: core/serving_offline_mix.h); the throughputs below are the run's
  // (requests ÷ run_s), not the steady state's.
  double run_s = 0;
  double run_waves = 0;
  // How near the run is to one more wave: the sequences the KV pool holds beyond the fewest in flight
  // that still finish the run in run_waves waves, ⌈N / waves⌉ (per replica), and the run's duration
  // with one sequence fewer than that in flight (waves + 1; 0 when that is one sequence). Uniform
  // requests make the run a step function of the pool: a pool a few sequences short adds a wave.
  // Both 0 for mixed lengths.
  double run_spare_sequences = 0;
  double run_one_more_wave_s = 0;
  LatencyParts prefill, decode;        // add up to ttft_s and tpot_s
  double stage_idle_fraction = 0;      // mean over the stages of the time each waits
  std::vector<double> decode_stage_s;  // one step on each stage (the walk, in order)
  double pp_send_s = 0;                // one hand-off of a step
  // Throughput: output tokens (the first included) and requests.
  double output_tokens_per_s_per_user = 0;  // 1 / TPOT
  double output_tokens_per_s_per_replica = 0;
  double output_tokens_per_s_total = 0;
  double output_tokens_per_s_per_gpu = 0;
  double requests_per_s = 0;  // all replicas
  std::vector<CommOp> comm;   // per step, a GPU of the first stage
};

// How requests reach a replica at a request rate: at random (Poisson: a user's workload), or paced by
// another pool (a disaggregated prefill pool in an offline run: each prompt arrives as the decode pool
// frees room for it, core/disaggregation.h), which a prefill-only replica prices at its steady state
// rather than as the bulk-service queue of random arrivals (core/serving_prompt_queue.h).
enum class Arrivals { Random, Paced };

InferenceEstimate estimate_inference(const Resolved& r, Arrivals arrivals = Arrivals::Random);

}  // namespace cutlab
