// disaggregation.h: prefill and decode served by separate pools of GPUs (xPyD), each with its own
// plan (DistServe, Zhong et al. OSDI'24; Splitwise, Patel et al. ISCA'24). A request is prefilled on
// the prefill pool, its KV cache sent to a decode instance over the network, then decoded there; the
// two phases no longer share a step, so neither slows the other (DistServe §2.2), and each pool's
// plan and batch are chosen for its phase.
//   prefill pool: the serving model (core/inference.h) of the config with output_len 1 (one token
//     out of the prefill), in-flight batching with chunked prefill; its requests/s and TTFT.
//   KV transfer: bytes = prompt_len × KV bytes per token (whole model; a local-attention layer keeps
//     at most its window), each prefill GPU sending its stage's KV shard over its own link, the
//     stages in parallel: T = (ISL · KV bytes per token of the largest stage) / (tp_prefill · B · η)
//     + α (DistServe §4.1 sizes the same transfer); B the scale-out bandwidth per GPU, NVLink when
//     both pools fit in one node. Its load on the prefill GPUs' links bounds the deployment too.
//     Each pool may run on its own system (prefill on compute-rich GPUs, decode on ones with more
//     HBM bandwidth and capacity; Splitwise §5 mixes H100 and A100): the KV then crosses the
//     scale-out network at the slower side's bandwidth.
//   decode pool: decode-only steps of the serving step model (core/serving_step.h step_cost) with
//     C = min(pp × batch, what the KV cache holds) sequences per replica of context
//     prompt_len + output_len/2 on average, pp micro-batches in flight (pipeline_cycle_s); TPOT =
//     cycle / tokens per step; requests/s per replica = C · tokens per step / ((OSL − 1) · cycle).
//   deployment: capacity = min(prefill pool, decode pool, transfer) requests/s; served at it
//     offline (every request queued), else at the request rate λ (workload.request_rate_per_s,
//     Poisson arrivals) when it is below the capacity (at or above it: saturated, served at the
//     capacity while the queue grows without bound). TTFT = prefill TTFT + transfer (the decode
//     instance emits the first token once the KV has arrived; DistServe §3 counts the transfer in
//     the second token's latency instead); TPOT = the decode pool's; each at the deployment's rate:
//     a pool that does not bound it holds fewer sequences than its batch, C = λ · its time per
//     request (Little 1961), and is faster there. At a request rate each pool's requests also wait:
//     a prompt for a prefill step (a prefill instance is a bulk-service queue, each step taking the
//     prompts waiting when it starts: core/serving_prompt_queue.h; prompts of several chunks or a
//     mix of lengths: the co-located model's slot_queue), then its KV for a decode slot when all are
//     taken (serving_batching.h slot_queue, each count in flight served at its own speed) and for
//     the decode step in progress, both before the first token; offline the pools feed each other as
//     slots free, and no request waits.
//     output tokens/s per GPU = requests/s × OSL / (prefill + decode GPUs).
//   placement: a pool's instances are placed whole, each within one node when it fits in one
//     (instances_fit below), so each serves as one instance alone does: a pool of x instances is one
//     instance evaluated (core/serving_instances.h one_instance), its requests/s times x, at its latency.
//   balance (Splitwise §5, DistServe §4.3 replicate instances until the rates match): with ρ_p, ρ_d
//     requests/s per GPU of each pool, the pools match when N_p·ρ_p = N_d·ρ_d: a prefill share
//     f_p = ρ_d / (ρ_p + ρ_d) of the GPUs and OSL · ρ_p·ρ_d/(ρ_p + ρ_d) output tokens/s per GPU;
//     the best whole numbers of instances for the same GPUs, placed in the cluster's nodes, are
//     best_split's.
//   mixed lengths (workload.length_mix): the prefill pool serves every class's prompt (each with one
//     output token) as the serving model serves a mix; a request's KV bytes are the mean over the
//     requests of each class's; the decode pool's sequences are each class's in proportion to the
//     steps it decodes, s_i·(OSL_i − 1), at its own context prompt_i + output_i/2 (serving_batching.h
//     decode_mix), a request holding a slot for the mean steps; OSL above is the mean output, and
//     TTFT, TPOT and end to end are means over requests. Each class's TTFT is its prompt's on the
//     prefill pool (the serving model's per class) + its own KV's transfer + the wait for a decode slot
//     (every class's); its end to end adds (OSL_i − 1) · TPOT. Its transfer is its KV over the busier
//     end's links, that end (pool and stage) chosen by the mean request, so that the classes' mean is
//     the mean request's transfer (the transfer is affine in its bytes).
// Ignores: arrivals burstier than Poisson, the transfer's own queue on a busy link, and the transfer
// overlapped with the prefill layer by layer (Splitwise §4.3; here it follows the prefill).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/estimate.h"

namespace cutlab {

// One pool of a deployment, its phase evaluated.
struct PoolResult {
  int gpus = 0;
  int gpus_per_instance = 1;  // tp × pp × ep: one copy of the model
  int instances = 0;          // gpus / gpus_per_instance
  Plan plan;
  int batch = 0;           // workload.batch the pool runs
  double concurrency = 0;  // sequences in flight per replica
  long long max_batch_that_fits = 0;
  double peak_memory_bytes = 0, capacity_bytes = 0;
  bool fits = false;
  double requests_per_s = 0;          // the pool
  double requests_per_s_per_gpu = 0;  // ρ
  double ttft_s = 0;                  // prefill: to the first token, before the transfer
  double tpot_s = 0;                  // decode: between output tokens
  double step_s = 0;                  // between two steps of a micro-batch
  // Prefill, a mix of lengths (workload.length_mix): each class's steps to its first token and TTFT
  // (its lengths with one output token); empty for uniform lengths and for the decode pool.
  ClassList<ClassLatency> length_classes;
};

struct Disaggregated {
  PoolResult prefill, decode;
  double kv_bytes_per_request = 0;  // prompt_len tokens, whole model
  double kv_bytes_per_gpu = 0;      // the most one prefill GPU sends per request
  Link kv_link = Link::ScaleOut;
  double kv_transfer_s = 0;
  double kv_requests_per_s = 0;  // what the prefill GPUs' links carry at most
  double kv_link_utilization = 0;
  double capacity_requests_per_s = 0;  // the smallest of the pools' and the transfer's rates
  std::string bound;                   // prefill, decode or kv_transfer: that smallest rate
  double request_rate_per_s = 0;       // offered (workload.request_rate_per_s); 0: offline
  bool saturated = false;              // offered at or above the capacity: the queue grows without bound
  double requests_per_s = 0;           // served: the capacity offline or saturated, else the offered rate
  bool same_cluster = true;            // both pools on one kind of system (else no balance: their GPUs are not one count)
  // Sequences in flight per replica of each pool at the deployment's rate (below the pool's batch in
  // the pools that do not bound it), and the latencies there.
  double prefill_in_flight = 0, decode_in_flight = 0;
  // At a request rate below the capacity: the wait for a prefill step (prompt_queue), and then for a
  // decode slot (slot_queue) and the decode step in progress, all in TTFT.
  double prefill_queue_s = 0, decode_queue_s = 0;
  double ttft_s = 0, tpot_s = 0, e2e_latency_s = 0;
  // A mix of lengths (workload.length_mix): each class's own, class i of the mix at index i: its
  // lengths (share normalised), its prompt's steps on the prefill pool, its TTFT (its prefill + its own
  // KV transfer + the wait for a decode slot) and end to end (TPOT is every class's); and its KV
  // transfer. ttft_s, e2e_latency_s and kv_transfer_s are their means over requests. Empty for uniform
  // lengths.
  ClassList<ClassLatency> length_classes;
  ClassList<double> length_class_kv_transfer_s;
  double output_tokens_per_s_total = 0, output_tokens_per_s_per_gpu = 0, output_tokens_per_s_per_user = 0;
  // Balance.
  double balanced_prefill_fraction = 0;  // of the GPUs, f_p = ρ_d / (ρ_p + ρ_d)
  double balanced_output_tokens_per_s_per_gpu = 0;
  int suggested_prefill_instances = 0, suggested_decode_instances = 0;  // for prefill.gpus + decode.gpus
  double suggested_output_tokens_per_s_per_gpu = 0;
};

// Where the instances go (both pools on nodes of C GPUs): an instance is placed whole, within one node
// when it fits in one (an instance straddling two nodes would run its TP and EP collectives over the
// scale-out links), else on ⌈g/C⌉ whole nodes of its own; the larger instances first, node by node, the
// smaller ones in the GPUs they leave and on the nodes they leave free (first-fit decreasing). GPUs
// that fit no instance stay idle: 2 instances of 32 GPUs on a 72-GPU NVL72 node leave 8, which hold 2
// of 4 but none of 12. Whether `na` instances of `ga` GPUs and `nb` of `gb` fit in `gpus` GPUs.
bool instances_fit(long long gpus, int per_node, int ga, long long na, int gb, long long nb);

// The last n in [0, hi] where `holds(n)`, true at 0 and false from some n on (bisection; holds(0) is
// not asked).
template <class Holds>
long long last_true(long long hi, Holds holds) {
  long long lo = 0;
  while (lo < hi) {
    const long long mid = lo + (hi - lo + 1) / 2;
    if (holds(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The whole numbers of instances x, y (each ≥ 1, placed as instances_fit places them) that serve the
// most requests/s, min(x·rp, y·rd, min(x·gp, y·gd)·link): rp, rd one instance's requests/s, link what
// one GPU's link carries in requests/s; the fewest prefill instances among equals. x = 0 when no split
// exists. That is min(x·a, y(x)·b), a = min(rp, gp·link), b = min(rd, gd·link), y(x) the most decode
// instances beside x prefill ones: the first term rises with x and the second falls, so the best x is
// the last one where x·a ≤ y(x)·b or the next.
struct DeploymentSplit {
  int x = 0, y = 0;
  double requests_per_s = 0;
};
DeploymentSplit best_split(long long gpus, int per_node, int gp, int gd, double rp, double rd, double link_per_gpu);
// The split with x prefill instances and the most decode instances beside them (y = 0 when none fits),
// serving min(x·a, y·b) as above.
DeploymentSplit split_at(long long gpus, int per_node, int gp, int gd, double rp, double rd, double link_per_gpu, long long x);

// What a workload needs to be served disaggregated: mode infer, output_len ≥ 2 (a mix: each class's),
// in-flight batching, at steady state (no num_requests); each error at its /workload path.
Errors disaggregation_workload_errors(const Workload& w);

// The prefill share of the GPUs that matches the pools' rates per GPU: ρ_d / (ρ_p + ρ_d).
double balanced_prefill_fraction(double prefill_requests_per_s_per_gpu, double decode_requests_per_s_per_gpu);

// `prefill` and `decode` are the config resolved with each pool's GPUs, plan and batch (the same
// model, cluster and workload; output_len ≥ 2, request_rate_per_s 0).
Disaggregated evaluate_disaggregated(const Resolved& prefill, const Resolved& decode);

// The parts evaluate_disaggregated combines, for the search over deployments (disaggregation_search.h).
PoolResult evaluate_prefill_pool(const Resolved& r);  // its requests/s, TTFT and memory
PoolResult evaluate_decode_pool(const Resolved& r);   // its requests/s, TPOT and memory
// A pool run at `requests_per_s` (at most what it serves): the sequences in flight per replica by
// Little's law and its latency there (prefill: TTFT, the serving model at that request rate; decode:
// TPOT, C = λ · decode steps · cycle(C), at most `most_in_flight`, its batch). With `random` arrivals
// (a request rate) also the waits: prefill, for a step (prompt_queue, core/serving_prompt_queue.h;
// its own step then holds the prompts that queued with it); decode, for a free slot (slot_queue) and
// the step in progress; `queue_s`, and the decode step as the
// wandering count in flight meets it (+ β·Var(n)/C, count_spread in core/serving_batching.h); fed as
// slots free (offline), neither.
struct PoolLoad {
  double in_flight = 0, latency_s = 0, queue_s = 0;
  ClassList<ClassLatency> classes;  // prefill of a mix: each class's TTFT (latency_s is their mean)
};
PoolLoad prefill_at(const Resolved& r, double requests_per_s, bool random = false);
PoolLoad decode_at(const Resolved& r, double requests_per_s, double most_in_flight, bool random = false);
double kv_bytes_per_request(const Resolved& r);                    // prompt_len tokens, whole model (a mix: the mean over requests)
double kv_bytes_per_gpu(const Resolved& r);                        // the largest stage's share over its tp GPUs
double kv_bytes_per_gpu(const Resolved& r, const LengthClass& k);  // one request of class k, at that stage
// Whether two pools of `gpus` GPUs together sit in one node (the KV crosses NVLink), the link's
// bandwidth per GPU (η applied) and the transfer of `bytes_per_gpu` over it.
bool kv_in_one_node(int gpus, const Cluster& c);
double kv_link_bytes_per_s(bool one_node, const Cluster& c);
double kv_transfer_s(double bytes_per_gpu, bool one_node, const Cluster& c);

// JSON of a result: keys = field names; plans as core/json_io.h writes them.
nlohmann::json to_json(const PoolResult& p);
nlohmann::json to_json(const Disaggregated& d);

}  // namespace cutlab
