#include "core/inference.h"

#include <algorithm>
#include <cmath>

#include "core/compute.h"
#include "core/memory.h"
#include "core/serving_instances.h"
#include "core/serving_offline_mix.h"
#include "core/serving_prompt_queue.h"

namespace cutlab {

double kv_cache_bytes_per_token(const ModelSpec& m, KvDtype kv_dtype) {
  return m.layers * kv_bytes_per_token_layer(m, 1.0, dtype_bytes(kv_dtype));
}

namespace {

// What a stage's memory holds besides the KV cache, and the KV cache of one sequence.
struct StageRoom {
  StageMemory sm;            // weights and workspace filled in
  double kv_per_seq = 0;     // bytes of one sequence's KV cache on one GPU of the stage
  double per_seq_extra = 0;  // static batching: fp32 logits of a sequence's last token
  double free_bytes = 0;     // usable memory the weights and workspace leave: the KV pool
};

std::vector<StageRoom> stage_rooms(const ServingSetup& S) {
  const ModelSpec& m = S.m;
  const Workload& w = S.w;
  const double t = S.t, h = S.h;
  const bool inflight = w.batching == Batching::InFlight;
  // Paged KV (Kwon et al. 2023): a sequence holds ⌈(ISL + OSL)/block⌉ whole blocks, reserved at
  // admission (TensorRT-LLM's default GUARANTEED_NO_EVICT capacity scheduler). Mixed lengths: the
  // mean over the sequences in flight, each class in proportion to its share × the steps it stays
  // (its decode steps and its prompt's chunks at the full budget; Little's law per class).
  struct Held {
    double part = 0, tokens = 0;  // of the sequences in flight (share × steps, normalised below); context held
  };
  ClassList<Held> held_ctx;
  double stays = 0;
  for (const LengthClass& k : request_classes(w)) {
    const double ctx = double(k.prompt_len) + k.output_len;
    const double part = k.share * ((k.output_len - 1.0) + std::ceil(double(k.prompt_len) / w.max_num_tokens));
    held_ctx.push_back({part, inflight ? std::ceil(ctx / w.kv_block_tokens) * w.kv_block_tokens : ctx});
    stays += part;
  }
  const double capacity = S.c.hbm_bytes - S.c.reserved_bytes;
  std::vector<StageRoom> rooms;
  for (const StageInfo& st : S.pl.stages) {
    StageRoom room;
    StageMemory& sm = room.sm;
    sm.stage = st.stage;
    const double n_moe = st.moe_layers, n_dense = st.layers - st.moe_layers;
    const StageParams sp = stage_params(m, S.plan, S.mesh, st);
    sm.dense_params = sp.dense;
    sm.expert_params = sp.experts;
    // The embedding and the output layer stay 16-bit in a quantised checkpoint (core/precision.h).
    const double vocab = sp.embedding + sp.output;
    sm.weights_bytes = (sp.dense - vocab) * S.wb + vocab * kVocabWeightBytes + sp.experts * S.expert_wb;
    for (const Held& k : held_ctx) room.kv_per_seq += k.part / stays * S.kv_layer * stage_attended_keys(m, st, k.tokens, held(w));
    // Workspace: one layer's activations of the tokens a step runs (residual, norm, QKV, attention
    // output, MLP intermediate, 16-bit): one prompt (static) or max_num_tokens (in-flight: TensorRT-LLM
    // sizes its activation buffers by max_num_tokens); fp32 logits of the step's last tokens on the
    // output stage.
    const double f_gpu = std::max(double(m.ffn_hidden) * (n_dense > 0 ? 1 : 0),
                                  n_moe > 0 ? double(m.expert_ffn_hidden) * (m.top_k + m.shared_experts) : 0.0) /
                         t;
    const double per_token = 2.0 * (3.0 * h + (m.heads / t + 2.0 * std::max(1.0, m.kv_heads / t)) * m.head_dim +
                                    (m.gated_mlp ? 3.0 : 2.0) * f_gpu);
    const double logits_per_seq = st.output ? 4.0 * double(m.vocab) / t : 0.0;
    const double step_seqs = std::min(double(w.batch), double(w.max_num_tokens));
    const double workspace = inflight ? w.max_num_tokens * per_token + step_seqs * logits_per_seq : w.prompt_len * per_token;
    room.per_seq_extra = inflight ? 0.0 : logits_per_seq;
    sm.activations_bytes = workspace;
    sm.capacity_bytes = capacity;
    // The KV pool: the engine's share of what the weights and the workspace leave (TensorRT-LLM
    // sizes it as free_gpu_memory_fraction × the memory free after loading the weights and a
    // forward pass of max_num_tokens).
    const double left = capacity - sm.weights_bytes - workspace;
    room.free_bytes = left > 0 ? w.kv_cache_free_fraction * left : left;
    rooms.push_back(room);
  }
  return rooms;
}

// Sequences whose KV cache fits on every stage; `bound`: the stage that holds the fewest (the first).
long long kv_capacity(const std::vector<StageRoom>& rooms, int& bound) {
  long long cap = -1;
  bound = 0;
  for (std::size_t i = 0; i < rooms.size(); ++i) {
    const StageRoom& room = rooms[i];
    const double per = room.kv_per_seq + room.per_seq_extra;
    const long long fit = room.free_bytes > 0 && per > 0 ? static_cast<long long>(std::min(1e15, std::floor(room.free_bytes / per)))
                                                         : 0;
    if (cap < 0 || fit < cap) {
      cap = fit;
      bound = static_cast<int>(i);
    }
  }
  return std::max<long long>(0, cap);
}

// The memory of `sequences` in flight per replica.
void fill_memory(std::vector<StageRoom> rooms, double sequences, InferenceEstimate& r) {
  double pool = 0;
  for (StageRoom& room : rooms) {
    StageMemory& sm = room.sm;
    sm.kv_cache_bytes = sequences * room.kv_per_seq;
    sm.activations_bytes += sequences * room.per_seq_extra;
    sm.total_bytes = sm.weights_bytes + sm.kv_cache_bytes + sm.activations_bytes;
    sm.fits = sm.total_bytes <= sm.capacity_bytes && room.free_bytes > 0;
    r.memory.per_stage.push_back(sm);
  }
  summarize_peak(r.memory);
  const StageRoom& peak = rooms[static_cast<size_t>(r.memory.peak_stage)];
  r.kv_cache_used_bytes = sequences * peak.kv_per_seq;
  pool = peak.free_bytes;
  r.kv_cache_occupancy = pool > 0 ? std::min(1e9, r.kv_cache_used_bytes / pool) : 0.0;
}

// Static prefill: every prompt token through every stage (seq_len = prompt_len, micro-batch =
// batch), on the same mesh and placement, costed op by op (core/ops.h), the GEMMs at the weights'
// serving peaks (core/precision.h ops_gemm_path).
LatencyParts static_prefill(const Resolved& resolved, const ServingSetup& S) {
  Resolved prefill = resolved;
  prefill.config.workload.seq_len = S.w.prompt_len;
  prefill.config.plan.micro_batch = S.w.batch;
  prefill.config.plan.cp = 1;
  const double prompt_tokens = double(S.w.batch) * S.w.prompt_len;
  const double k = std::max(1, S.m.top_k);
  const double tp_one = S.tp_allreduce(2.0 * prompt_tokens * S.h);
  const double ep_one = S.ep_exchange(ep_dispatch_bytes_per_value(S.plan.ep_dispatch_dtype) * prompt_tokens * k * S.h) +
                        S.ep_exchange(2.0 * prompt_tokens * k * S.h);
  const LayerCompute layers = layer_compute(prefill);
  LatencyParts p;
  for (const StageInfo& st : S.pl.stages) {
    for (size_t c = 0; c < st.chunks.size(); ++c) p.compute_s += chunk_compute(prefill, layers, st, c).f_s;
    p.tp_s += st.layers * 2.0 * tp_one;
    p.ep_s += st.moe_layers * ep_one;
    if (st.output) p.tp_s += S.tp_logits_gather(S.w.batch);  // one sampled token per sequence
  }
  p.pp_s = (S.plan.pp - 1) * S.pp_send(2.0 * prompt_tokens * S.h);
  return p;
}

// The parts of one step of a sequence (`cycle_s`: the step with its hand-offs and waits), scaled.
LatencyParts step_parts(const StepCost& c, double draft_s, double cycle_s, double scale) {
  LatencyParts p;
  p.weights_s = scale * c.weights_s, p.kv_s = scale * c.kv_s, p.compute_s = scale * c.compute_s;
  p.tp_s = scale * c.tp_s, p.ep_s = scale * c.ep_s, p.ep_wait_s = scale * c.ep_wait_s, p.draft_s = scale * draft_s,
  p.host_s = scale * c.host_s;
  double stages = 0;
  for (double s : c.stage_s) stages += s;
  p.pp_s = scale * std::max(0.0, cycle_s - stages - draft_s);
  return p;
}

void static_batch(const Resolved& resolved, const ServingSetup& S, InferenceEstimate& r) {
  const Workload& w = S.w;
  const double B = w.batch;
  r.concurrency = B;
  r.concurrency_limit = ConcurrencyLimit::Batch;
  r.prefill = static_prefill(resolved, S);
  r.ttft_s = r.prefill.total_s();
  StepLoad load;
  load.decode_seqs = B;
  load.decode_tokens = 1.0 + w.spec_draft_tokens;
  load.decode_context = double(w.prompt_len) + w.output_len / 2.0;  // mean context over the decode
  const StepCost step = step_cost(S, load);
  const double draft_s = drafts_s(S, B, load.decode_context);
  r.spec_tokens_per_step = spec_tokens_per_step(w.spec_draft_tokens, w.spec_acceptance);
  r.step_s = step.walk_s() + draft_s;  // one batch walks the stages
  r.decode = step_parts(step, draft_s, r.step_s, 1.0 / r.spec_tokens_per_step);
  r.tpot_s = r.decode.total_s();
  r.decode_stage_s = step.stage_s;
  r.pp_send_s = step.pp_send_s;
  r.local_experts_read = step.local_experts_read;
  r.decode_seqs_per_step = B;
  r.prefill_steps = 1;
  // A batch's B·OSL output tokens take TTFT + (OSL − 1)·TPOT: the first token comes out of the prefill.
  r.e2e_latency_s = r.ttft_s + (w.output_len - 1.0) * r.tpot_s;
  r.requests_per_s = r.e2e_latency_s > 0 ? B / r.e2e_latency_s : 0.0;  // per replica until scaled below
}

// An offline run of `requests` per replica, all queued at the start, at `full.concurrency` in flight
// (trtllm-bench and vLLM's benchmark_throughput queue every request at once): w = ⌈N / C⌉ waves, the
// last holding the N − (w − 1)·C requests left, each wave's prompts in a burst (core/serving_batching.h
// offline_run_s). A last wave of a few sequences still reads every weight on each step, which is what a
// steady-state rate misses.
void offline_run(const ServingSetup& S, const BatchingState& full, double requests, long long kv_cap, InferenceEstimate& r) {
  // mixed lengths finish apart: no waves, the schedule replayed (core/serving_offline_mix.h); classes of one length
  // are uniform lengths
  const ClassLatency& first = full.classes[0];
  const bool mixed = std::any_of(full.classes.begin(), full.classes.end(), [&](const ClassLatency& k) {
    return k.lengths.prompt_len != first.lengths.prompt_len || k.lengths.output_len != first.lengths.output_len;
  });
  if (mixed) {
    r.run_s = offline_mix_run_s(S, full, full.concurrency, requests);
    r.requests_per_s = r.run_s > 0 ? requests / r.run_s : 0.0;
    return;
  }
  r.run_waves = offline_waves(full.concurrency, requests);
  r.run_s = offline_run_s(S, full.concurrency, requests);
  r.requests_per_s = r.run_s > 0 ? requests / r.run_s : 0.0;       // per replica until scaled
  const double fewest = std::ceil(requests / r.run_waves - 1e-9);  // in flight for the same waves
  r.run_spare_sequences = std::max(0.0, double(kv_cap) - fewest);
  r.run_one_more_wave_s = fewest > 1.0 ? offline_run_s(S, fewest - 1.0, requests) : 0.0;
}

void inflight_batch(const ServingSetup& S, long long kv_cap, Arrivals arrivals, InferenceEstimate& r) {
  const double run_requests = double(S.w.num_requests) / r.replicas;  // offline run, per replica (0: endless)
  const Concurrency conc = inflight_concurrency(S, kv_cap, S.w.request_rate_per_s / r.replicas, run_requests);
  r.concurrency = conc.value;
  r.concurrency_limit = conc.limit;
  r.saturated = conc.saturated;
  if (!(conc.value > 0)) return;  // not even one sequence fits: a result, all rates 0
  // (an open system, unless saturated: its queue pins the slots full)
  const double rate = conc.limit == ConcurrencyLimit::RequestRate ? S.w.request_rate_per_s / r.replicas : 0.0;
  const BatchingState b = inflight_state(S, conc.value, rate, conc.slots, conc.full_e2e_s);
  r.token_budget_bound = b.token_budget_bound;
  r.decode_seqs_per_step = b.decode_seqs;
  r.prefill_tokens_per_step = b.prefill_tokens;
  r.prefill_steps = b.prefill_steps;
  r.spec_tokens_per_step = b.tokens_per_step;
  r.step_s = b.cycle_s;
  r.local_experts_read = b.step.local_experts_read;
  r.ttft_s = b.ttft_s;
  r.tpot_s = b.tpot_s;
  r.e2e_latency_s = b.e2e_s;
  r.prefill = step_parts(b.prefill_step, b.draft_s, b.prefill_cycle_s, b.prefill_steps);
  if (!S.w.length_mix.empty()) r.length_classes = b.classes;
  // At a request rate (not saturated: the queue then grows without bound, the `saturated` flag) a
  // replica that only prefills (one output token: a disaggregated prefill pool's instance) is a
  // bulk-service queue: each step takes the prompts waiting when it starts (prompt_queue,
  // core/serving_prompt_queue.h), which prices its wait and its own step. Otherwise a request that
  // finds every slot taken waits for one (slot_queue: each count in flight served at its own speed,
  // the slots full at full_e2e_s; uniform lengths: deterministic service; mixed lengths: the
  // service's spread over the classes), then for the step in progress.
  if (S.w.request_rate_per_s > 0 && !conc.saturated) {
    const PromptQueue pq = arrivals == Arrivals::Random ? prompt_queue(S, rate, conc.slots) : PromptQueue{};
    if (pq.ok) {
      r.prefill = step_parts(pq.step, 0.0, pq.service_s, 1.0);
      r.prefill.queue_s = pq.queue_s;
      r.prefill.step_wait_s = pq.step_wait_s;
      r.ttft_s = r.e2e_latency_s = pq.ttft_s();
      r.concurrency = rate * pq.service_s;  // in a step (Little's law); the others wait for one
    } else {
      const double wait = slot_queue(rate, conc.slots, conc.value, conc.full_e2e_s, b.e2e_cs2).wait_s;
      if (std::isfinite(wait)) {
        r.prefill.queue_s = wait;
        r.prefill.step_wait_s = b.step_wait_s;
        const double before_admission = wait + b.step_wait_s;
        r.ttft_s += before_admission;
        r.e2e_latency_s += before_admission;
        for (ClassLatency& k : r.length_classes) k.ttft_s += before_admission, k.e2e_latency_s += before_admission;
      }
    }
  }
  r.decode = step_parts(b.step, b.draft_s, b.cycle_s, 1.0 / b.tokens_per_step);
  r.decode_stage_s = b.step.stage_s;
  r.pp_send_s = b.step.pp_send_s;
  r.requests_per_s = b.requests_per_s;  // per replica until scaled below
  if (run_requests > 0) offline_run(S, b, run_requests, kv_cap, r);
}

// Communication of one step, one GPU of the first stage.
// `sampled`: the step's tokens that sample (core/serving_step.cpp), whose logits TP gathers.
void serving_comm(const ServingSetup& S, double tokens, double sampled, InferenceEstimate& r) {
  const StageInfo& s0 = S.pl.stages.front();
  const double h = S.h, k = std::max(1, S.m.top_k);
  auto op = [&](Axis axis, Collective kind, const std::string& what, double msg, double calls, const GroupInfo& g, double one) {
    CommOp o;
    o.axis = axis, o.collective = kind, o.what = what, o.message_bytes = msg, o.calls = calls, o.bytes = msg * calls;
    o.group_size = g.size, o.link = g.link, o.time_s = calls * one, o.exposed_s = calls * one;
    r.comm.push_back(o);
  };
  if (S.tp && S.tp->size > 1)
    op(Axis::TP, Collective::AllReduce, "attention and MLP outputs, 2 per layer", 2.0 * tokens * h, 2.0 * s0.layers, *S.tp,
       S.tp_allreduce(2.0 * tokens * h));
  if (S.tp && S.tp->size > 1 && s0.output && sampled > 0)
    op(Axis::TP, Collective::AllGather, "logits of the sampled tokens, vocab/tp each (16-bit)", 2.0 * double(S.m.vocab) * sampled, 1,
       *S.tp, S.tp_logits_gather(sampled));
  if (S.ep && S.ep->size > 1 && s0.moe_layers > 0) {
    const double dispatch = ep_dispatch_bytes_per_value(S.plan.ep_dispatch_dtype) * tokens * k * h, combine = 2.0 * tokens * k * h;
    const bool gather = S.plan.ep_dispatcher == EpDispatcher::AllGather;
    const EpExchange d = ep_exchange(S.plan.ep_dispatcher, dispatch, routing_of(S.m), *S.ep, true);
    const EpExchange b = ep_exchange(S.plan.ep_dispatcher, combine, routing_of(S.m), *S.ep, false);
    op(Axis::EP, d.collective,
       std::string(gather ? "dispatch: every token's hidden state to every EP rank ("
                          : "dispatch: each token's hidden state to its top-k experts (") +
           name_of(S.plan.ep_dispatch_dtype) + ")",
       d.message_bytes, s0.moe_layers, *S.ep, S.ep_exchange(dispatch));
    op(Axis::EP, b.collective,
       gather ? "combine: the experts' partial outputs summed back (bf16)" : "combine: the experts' outputs back (bf16)",
       b.message_bytes, s0.moe_layers, *S.ep, S.ep_exchange(combine));
  }
  if (S.pp && S.pp->size > 1)
    op(Axis::PP, Collective::SendRecv, "hidden states to the next stage", 2.0 * tokens * h, 1, *S.pp, S.pp_send(2.0 * tokens * h));
}

// The deployment's estimate with its TP, EP and PP groups as S lays them.
InferenceEstimate estimate_with(const Resolved& resolved, const ServingSetup& S, Arrivals arrivals) {
  const Workload& w = S.w;
  InferenceEstimate r;
  r.batching = w.batching;
  r.replicas = S.mesh.dp_attn;
  const bool inflight = w.batching == Batching::InFlight;
  r.micro_batches = inflight ? S.plan.pp : 1;
  r.kv_cache_bytes_per_token = kv_cache_bytes_per_token(S.m, w.kv_dtype);
  const std::vector<StageRoom> rooms = stage_rooms(S);
  r.kv_capacity_sequences = kv_capacity(rooms, r.kv_bound_stage);
  r.kv_pool_bytes = rooms[static_cast<std::size_t>(r.kv_bound_stage)].free_bytes;
  r.max_batch_that_fits = r.kv_capacity_sequences / r.micro_batches;
  if (inflight) inflight_batch(S, r.kv_capacity_sequences, arrivals, r);
  else static_batch(resolved, S, r);
  fill_memory(rooms, r.concurrency, r);
  // Throughput: OSL output tokens per request (the first, from the prefill, included; mixed lengths:
  // their mean over requests).
  r.output_tokens_per_s_per_user = r.tpot_s > 0 ? 1.0 / r.tpot_s : 0.0;
  r.output_tokens_per_s_per_replica = r.requests_per_s * mean_lengths(w).output_len;
  r.requests_per_s *= r.replicas;
  r.output_tokens_per_s_total = r.replicas * r.output_tokens_per_s_per_replica;
  r.output_tokens_per_s_per_gpu = r.output_tokens_per_s_total / S.mesh.gpus;
  // Each stage works Σ_i stage_i of every step, out of pp × the step for pp micro-batches (one batch: 1 ×).
  double busy = 0;
  for (double s : r.decode_stage_s) busy += s;
  const double span = r.step_s * double(S.pl.stages.size()) / r.micro_batches;
  r.stage_idle_fraction = span > 0 ? std::clamp(1.0 - busy / span, 0.0, 1.0) : 0.0;
  const double step_tokens = inflight ? r.decode_seqs_per_step * (1.0 + w.spec_draft_tokens) + r.prefill_tokens_per_step
                                      : double(w.batch) * (1.0 + w.spec_draft_tokens);
  // A static batch's step decodes every sequence: each of its tokens samples.
  const double sampled = inflight ? sampled_tokens(r.decode_seqs_per_step * (1.0 + w.spec_draft_tokens), r.prefill_tokens_per_step,
                                                   mean_lengths(w).prompt_len)
                                  : step_tokens;
  serving_comm(S, step_tokens, sampled, r);
  return r;
}

}  // namespace

InferenceEstimate estimate_inference(const Resolved& resolved_with_mtp, Arrivals arrivals) {
  // Serving runs the model without its multi-token-prediction modules (a training objective;
  // DeepSeek-V3 §2.2 "we discard the MTP modules" at inference); speculative decoding adds its
  // draft head's cost (core/serving_step.h draft_pass_s), not its memory.
  Resolved resolved = resolved_with_mtp;
  resolved.config.model.mtp_layers = 0;
  // Each instance placed whole where the nodes hold it (core/serving_instances.h): priced as one
  // instance alone on its node; the instances left over straddle a node boundary as the ranks lie,
  // priced on the deployment's own groups (their worst: the straddling one).
  const long long g = std::max(1LL, instance_gpus(resolved)), n = resolved.mesh.gpus / g;
  if (n == 1) return estimate_with(resolved, ServingSetup(resolved), arrivals);
  const Resolved one = one_instance(resolved);
  const long long whole = std::min(n, whole_instances(resolved.mesh.gpus, resolved.config.cluster.gpus_per_node, g));
  InferenceEstimate r = estimate_with(resolved, ServingSetup(resolved, one.placement), arrivals);
  r.instances = static_cast<int>(n);
  r.instances_whole = static_cast<int>(whole);
  if (whole >= n) return r;
  // Some straddle: the latencies, step and communication are a straddling instance's (the slowest:
  // a limit holds for every instance), the throughputs the sum of both kinds.
  InferenceEstimate s = estimate_with(resolved, ServingSetup(resolved), arrivals);
  s.instances = r.instances;
  s.instances_whole = r.instances_whole;
  const double a = double(whole) / double(n), b = 1.0 - a;
  s.requests_per_s = a * r.requests_per_s + b * s.requests_per_s;
  s.output_tokens_per_s_per_replica = a * r.output_tokens_per_s_per_replica + b * s.output_tokens_per_s_per_replica;
  s.output_tokens_per_s_total = a * r.output_tokens_per_s_total + b * s.output_tokens_per_s_total;
  s.output_tokens_per_s_per_gpu = a * r.output_tokens_per_s_per_gpu + b * s.output_tokens_per_s_per_gpu;
  return s;
}

}  // namespace cutlab
