#include "core/disaggregation.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/comm.h"
#include "core/json_io.h"
#include "core/serving_batching.h"
#include "core/serving_instances.h"
#include "core/serving_step.h"

namespace cutlab {

Errors disaggregation_workload_errors(const Workload& w) {
  Errors errors;
  if (w.mode != Mode::Infer)
    errors.push_back({ErrorCode::Incompatible, "/workload/mode", "disaggregation serves: workload.mode must be \"infer\""});
  if (w.length_mix.empty() && w.output_len < 2)
    errors.push_back({ErrorCode::OutOfRange, "/workload/output_len",
                      "disaggregation needs a decode phase: output_len ≥ 2 (the first token comes out of the prefill)"});
  for (std::size_t i = 0; i < w.length_mix.size(); ++i)
    if (w.length_mix[i].output_len < 2)
      errors.push_back(
          {ErrorCode::OutOfRange, "/workload/length_mix/" + std::to_string(i),
           "disaggregation needs a decode phase: every class's output_len ≥ 2 (the first token comes out of the prefill)"});
  if (w.batching != Batching::InFlight)
    errors.push_back({ErrorCode::Incompatible, "/workload/batching", "disaggregated pools run in-flight batching"});
  if (w.num_requests > 0)
    errors.push_back({ErrorCode::Incompatible, "/workload/num_requests",
                      "disaggregated pools are modelled at steady state: leave num_requests out"});
  return errors;
}

bool instances_fit(long long N, int C, int ga, long long na, int gb, long long nb) {
  if (na < 0 || nb < 0 || C < 1 || ga < 1 || gb < 1) return false;
  // The larger instances (L) first, then the smaller (S) in what they leave.
  const bool a_first = ga >= gb;
  const long long gL = a_first ? ga : gb, nL = a_first ? na : nb, gS = a_first ? gb : ga, nS = a_first ? nb : na;
  const long long K = N / C, rem = N % C;                               // whole nodes, and a last one of rem GPUs
  auto held = [&](long long gap) { return gS <= gap ? gap / gS : 0; };  // S instances in a node's free GPUs
  long long slots = 0;                                                  // S instances the GPUs left hold
  if (gL <= C) {
    const long long k = C / gL, full = std::min(K, nL / k);
    long long left = nL - full * k, untouched = K - full, last = rem;
    if (left > 0 && untouched > 0) {  // the last few share a node
      slots += held(C - left * gL);
      --untouched;
      left = 0;
    }
    if (left > 0) {  // or go on the last, smaller node
      if (left * gL > rem) return false;
      last = rem - left * gL;
    }
    // gS ≤ gL ≤ C: S fits in a node.
    slots += full * held(C - k * gL) + untouched * (C / gS) + held(last);
  } else {
    const long long m = (gL + C - 1) / C;  // whole nodes per L instance
    if (nL > K / m) return false;
    const long long untouched = K - nL * m;
    if (gS <= C) slots += nL * held(m * C - gL) + untouched * (C / gS) + held(rem);
    else slots += untouched / ((gS + C - 1) / C);
  }
  return slots >= nS;
}

namespace {

// The most decode instances beside x prefill ones.
long long decode_beside(long long N, int C, int gp, int gd, long long x) {
  return last_true(N / gd, [&](long long y) { return instances_fit(N, C, gp, x, gd, y); });
}

}  // namespace

DeploymentSplit split_at(long long N, int C, int gp, int gd, double rp, double rd, double link_per_gpu, long long x) {
  if (gp < 1 || gd < 1 || x < 1) return {};
  const long long y = decode_beside(N, C, gp, gd, x);
  const double a = std::min(rp, gp * link_per_gpu), b = std::min(rd, gd * link_per_gpu);
  return DeploymentSplit{static_cast<int>(x), static_cast<int>(y), std::min(double(x) * a, double(y) * b)};
}

DeploymentSplit best_split(long long N, int C, int gp, int gd, double rp, double rd, double link_per_gpu) {
  DeploymentSplit best;
  if (gp < 1 || gd < 1) return best;
  // The most prefill instances with a decode instance beside them.
  const long long x_max = last_true(N / gp, [&](long long x) { return x == 0 || instances_fit(N, C, gp, x, gd, 1); });
  if (x_max < 1) return best;
  const double a = std::min(rp, gp * link_per_gpu), b = std::min(rd, gd * link_per_gpu);
  // The last x where the rising term is still the smaller: x·a ≤ y(x)·b (0 when not even x = 1).
  const long long lo = last_true(x_max, [&](long long x) { return double(x) * a <= double(decode_beside(N, C, gp, gd, x)) * b; });
  for (long long x : {lo, lo + 1}) {  // the fewest prefill instances among equals
    if (x < 1 || x > x_max) continue;
    const DeploymentSplit s = split_at(N, C, gp, gd, rp, rd, link_per_gpu, x);
    if (s.requests_per_s > best.requests_per_s * (1 + 1e-12)) best = s;
  }
  return best;
}

double balanced_prefill_fraction(double rho_p, double rho_d) { return rho_p > 0 && rho_d > 0 ? rho_d / (rho_p + rho_d) : 0.0; }

namespace {

int instance_gpus(const Plan& p) { return static_cast<int>(std::max(1LL, mesh_without_dp(p))); }

void pool_memory(const InferenceEstimate& s, PoolResult& pool) {
  const StageMemory& peak = s.memory.per_stage[static_cast<size_t>(s.memory.peak_stage)];
  pool.peak_memory_bytes = peak.total_bytes;
  pool.capacity_bytes = peak.capacity_bytes;
  pool.max_batch_that_fits = s.max_batch_that_fits;
  pool.fits = s.memory.fits && s.concurrency > 0;
  pool.concurrency = s.concurrency;
}

PoolResult base_pool(const Resolved& r) {
  PoolResult pool;
  pool.gpus = r.mesh.gpus;
  pool.plan = r.config.plan;
  pool.batch = r.config.workload.batch;
  pool.gpus_per_instance = instance_gpus(r.config.plan);
  pool.instances = pool.gpus / pool.gpus_per_instance;
  return pool;
}

// Instances of a pool per one instance: what one instance serves scales by it.
double copies(const Resolved& pool, const Resolved& one) { return double(pool.mesh.gpus) / one.mesh.gpus; }

// KV of one request in a stage: ISL tokens in each of its layers (a local layer at most its window);
// of the classes `ks`, the mean over their requests (shares summing to 1; uniform lengths: one class).
double stage_kv_bytes(const Resolved& r, const StageInfo& st, const RequestClasses& ks) {
  const ModelSpec& m = r.config.model;
  const Workload& w = r.config.workload;
  double keys = 0;
  for (const LengthClass& k : ks) keys += k.share * stage_attended_keys(m, st, k.prompt_len, held(w));
  return kv_bytes_per_token_layer(m, 1.0, dtype_bytes(w.kv_dtype)) * keys;
}
double stage_kv_bytes(const Resolved& r, const StageInfo& st) { return stage_kv_bytes(r, st, request_classes(r.config.workload)); }

// The stage whose GPUs send (or receive) the most KV per request, the mean request of a mix: a
// stage's KV leaves over its tp GPUs' links, the stages in parallel.
const StageInfo& busiest_kv_stage(const Resolved& r) {
  const auto& stages = r.placement.stages;
  return *std::max_element(stages.begin(), stages.end(),
                           [&](const StageInfo& a, const StageInfo& b) { return stage_kv_bytes(r, a) < stage_kv_bytes(r, b); });
}

// The prefill pool's workload: every request (every class of a mix) with one output token.
void prefill_only(Workload& w) {
  w.output_len = 1;
  for (LengthClass& k : w.length_mix) k.output_len = 1;
}

}  // namespace

// The prefill pool: the serving model with one output token per request.
PoolResult evaluate_prefill_pool(const Resolved& resolved) {
  Resolved r = one_instance(resolved);
  prefill_only(r.config.workload);
  r.config.workload.request_rate_per_s = 0;  // its capacity: every request queued
  const InferenceEstimate s = evaluate_serving(r).serving;
  PoolResult pool = base_pool(resolved);
  pool_memory(s, pool);
  pool.ttft_s = s.ttft_s;
  pool.length_classes = s.length_classes;
  pool.step_s = s.step_s;
  pool.requests_per_s = pool.fits ? s.requests_per_s * copies(resolved, r) : 0.0;
  pool.requests_per_s_per_gpu = pool.gpus > 0 ? pool.requests_per_s / pool.gpus : 0.0;
  return pool;
}

// The decode pool: decode-only steps at steady state (header).
namespace {

// The cycle between two decode-only steps of a replica holding C sequences (its pp micro-batches).
double decode_cycle_s(const ServingSetup& S, double C) {
  const Workload& w = S.w;
  const DecodeMix mix = decode_mix(w, spec_tokens_per_step(w.spec_draft_tokens, w.spec_acceptance));
  StepLoad load;
  load.decode_seqs = C / S.plan.pp;
  load.decode_tokens = 1.0 + w.spec_draft_tokens;
  load.decode_context = mix.context;  // mean context over the decode, and each class's (a mix)
  load.decode_parts = mix.parts.begin(), load.decode_part_count = mix.parts.count;
  const double draft_s = drafts_s(S, load.decode_seqs, load.decode_context);
  return pipeline_cycle_s(step_cost(S, load), draft_s);
}

}  // namespace

PoolResult evaluate_decode_pool(const Resolved& resolved) {
  Resolved r = one_instance(resolved);
  r.config.workload.request_rate_per_s = 0;                 // its capacity: every request queued
  const InferenceEstimate s = evaluate_serving(r).serving;  // memory and what the KV cache holds
  PoolResult pool = base_pool(resolved);
  pool_memory(s, pool);
  if (!pool.fits) return pool;
  r.config.model.mtp_layers = 0;  // served without its MTP modules, as core/inference.cpp does
  const ServingSetup S(r);
  const Workload& w = S.w;
  const double C = s.concurrency;
  const double cycle = decode_cycle_s(S, C);
  const double q = spec_tokens_per_step(w.spec_draft_tokens, w.spec_acceptance);
  const double steps = decode_mix(w, q).steps;  // a request's decode steps, the mean over requests
  pool.step_s = cycle;
  pool.tpot_s = cycle / q;
  const double per_replica = cycle > 0 && steps > 0 ? C / (steps * cycle) : 0.0;
  pool.requests_per_s = per_replica * r.mesh.dp_attn * copies(resolved, r);
  pool.requests_per_s_per_gpu = pool.gpus > 0 ? pool.requests_per_s / pool.gpus : 0.0;
  return pool;
}

PoolLoad prefill_at(const Resolved& resolved, double requests_per_s, bool random) {
  Resolved r = one_instance(resolved);
  prefill_only(r.config.workload);
  r.config.workload.request_rate_per_s = requests_per_s / copies(resolved, r);  // this instance's share
  const InferenceEstimate s = estimate_inference(r, random ? Arrivals::Random : Arrivals::Paced);
  // Offline, prompts reach the pool as the other pool frees room for them, not at random (paced): no
  // wait for a free slot, nor for the step in progress (a prompt arrives as a step ends), and the steady
  // state prices its step. At a request rate they arrive at random, and the instance is the
  // bulk-service queue of core/serving_prompt_queue.h (the steady state's slot_queue for prompts of
  // several chunks or lengths): its waits stay in its TTFT, both in queue_s.
  const double waits = s.prefill.queue_s + s.prefill.step_wait_s;
  if (random) return {s.concurrency, s.ttft_s, waits, s.length_classes};
  PoolLoad load{s.concurrency, s.ttft_s - waits, 0.0, s.length_classes};
  for (ClassLatency& k : load.classes) k.ttft_s -= waits;  // every class waited as long
  return load;
}

PoolLoad decode_at(const Resolved& resolved, double requests_per_s, double most_in_flight, bool random) {
  Resolved r = one_instance(resolved);
  r.config.model.mtp_layers = 0;  // as evaluate_decode_pool
  const ServingSetup S(r);
  const Workload& w = S.w;
  const double q = spec_tokens_per_step(w.spec_draft_tokens, w.spec_acceptance);
  const DecodeMix mix = decode_mix(w, q);
  const double steps = mix.steps;                                               // a sequence's decode steps (mean)
  const double lambda = requests_per_s / copies(resolved, r) / r.mesh.dp_attn;  // per replica
  // At random arrivals the count in flight wanders about its mean C, and a decoding sequence meets the
  // step at C plus β·Var(n)/C (count_spread, core/serving_batching.h; as the co-located model): β is
  // one more sequence in each micro-batch over pp, Var(n)/C = 1/(1 − λ·steps·β), at most the slots left.
  auto cycle_s = [&](double C) {
    const double at_C = decode_cycle_s(S, C);
    if (!random || lambda <= 0) return at_C;
    const double pp = S.plan.pp, beta = std::max(0.0, (decode_cycle_s(S, C + pp) - at_C) / pp);
    return at_C + beta * count_spread(lambda * steps * beta, most_in_flight - C);
  };
  // Little's law: C = λ · steps · cycle(C); the cycle grows with C, so g(C) = λ·steps·cycle(C) − C falls
  // through 0 once, at most at the pool's batch (its rate there is at least λ).
  auto g = [&](double C) { return lambda * steps * cycle_s(C) - C; };
  double C = most_in_flight;
  const double full_e2e_s = lambda > 0 ? steps * cycle_s(most_in_flight) : 0.0;  // every slot taken: what a queue meets
  const double g_most = lambda > 0 ? lambda * full_e2e_s - most_in_flight : 0.0;
  if (g_most < 0) C = falling_root(g, most_in_flight, g(0.0), g_most);
  const double cycle = cycle_s(C);
  // At random arrivals a request's KV waits for one of the replica's most_in_flight slots when all
  // are taken, each held for its decode (steps · cycle, at its count: slot_queue, as the co-located
  // model; a mix: with the spread of the classes' decodes, Allen–Cunneen); one that finds a slot free
  // waits for the decode step in progress, half a cycle, a pp-th of it with micro-batches (as the
  // co-located step_wait_s; decode steps are alike, no lumps).
  if (!random || !(lambda > 0)) return {C, cycle / q, 0.0, {}};
  const SlotQueue slot = slot_queue(lambda, most_in_flight, C, full_e2e_s, mix.cs2);
  if (!std::isfinite(slot.wait_s)) return {C, cycle / q, 0.0, {}};
  return {C, cycle / q, slot.wait_s + (1.0 - slot.wait_probability) * cycle / 2.0 / S.plan.pp, {}};
}

double kv_bytes_per_request(const Resolved& r) {
  double bytes = 0;
  for (const StageInfo& st : r.placement.stages) bytes += stage_kv_bytes(r, st);
  return bytes;
}

// A stage's KV leaves over its tp GPUs' links (or arrives over the decode stage's).
double kv_bytes_per_gpu(const Resolved& r) {
  return r.placement.stages.empty() ? 0.0 : stage_kv_bytes(r, busiest_kv_stage(r)) / r.config.plan.tp;
}

double kv_bytes_per_gpu(const Resolved& r, const LengthClass& k) {
  LengthClass one = k;
  one.share = 1.0;
  return r.placement.stages.empty() ? 0.0 : stage_kv_bytes(r, busiest_kv_stage(r), RequestClasses{one}) / r.config.plan.tp;
}

bool kv_in_one_node(int gpus, const Cluster& c) { return gpus <= c.gpus_per_node; }

double kv_link_bytes_per_s(bool one_node, const Cluster& c) {
  return one_node ? c.nvlink_bytes_per_s * c.efficiency.nvlink : c.scaleout_bytes_per_s * c.efficiency.scaleout;
}

double kv_transfer_s(double bytes_per_gpu, bool one_node, const Cluster& c) {
  GroupInfo link;
  link.axis = Axis::PP;
  link.size = 2;
  link.nodes_spanned = one_node ? 1 : 2;
  link.link = one_node ? Link::NVLink : Link::ScaleOut;
  return collective_time_s(Collective::SendRecv, bytes_per_gpu, link, c);
}

namespace {

// A mix of lengths: each class's TTFT and end to end (header). The busier end is the mean request's,
// so the classes' mean transfer is the mean request's, d.kv_transfer_s (affine in the bytes), and
// their mean TTFT and end to end are d's (the prefill pool's TTFT is its classes' mean).
void class_latencies(const Resolved& prefill, const Resolved& decode, const PoolLoad& pl, bool one_node, const Cluster& c,
                     double decode_queue_s, Disaggregated& d) {
  const Resolved& busier = kv_bytes_per_gpu(prefill) >= kv_bytes_per_gpu(decode) ? prefill : decode;
  const RequestClasses classes = request_classes(prefill.config.workload);
  for (std::size_t i = 0; i < classes.size() && i < pl.classes.size(); ++i) {
    const LengthClass& k = classes[i];
    const double transfer = kv_transfer_s(kv_bytes_per_gpu(busier, k), one_node, c);
    const double ttft = pl.classes[i].ttft_s + transfer + decode_queue_s;
    const double e2e = ttft + (k.output_len - 1.0) * d.tpot_s;
    d.length_classes.push_back({k, pl.classes[i].prefill_steps, ttft, e2e});
    d.length_class_kv_transfer_s.push_back(transfer);
  }
}

}  // namespace

Disaggregated evaluate_disaggregated(const Resolved& prefill, const Resolved& decode) {
  Disaggregated d;
  d.prefill = evaluate_prefill_pool(prefill);
  d.decode = evaluate_decode_pool(decode);
  const Cluster &cp = prefill.config.cluster, &cd = decode.config.cluster;
  const Workload& w = prefill.config.workload;
  const double OSL = mean_lengths(w).output_len;  // output tokens of a request (mixed lengths: the mean)
  d.kv_bytes_per_request = kv_bytes_per_request(prefill);
  // The busier side of the transfer sets its time.
  d.kv_bytes_per_gpu = std::max(kv_bytes_per_gpu(prefill), kv_bytes_per_gpu(decode));
  // Pools on different systems meet over the scale-out network, at the slower side's NICs.
  d.same_cluster = cp.name == cd.name;
  const Cluster& c = d.same_cluster ||
                             cp.scaleout_bytes_per_s * cp.efficiency.scaleout <= cd.scaleout_bytes_per_s * cd.efficiency.scaleout
                         ? cp
                         : cd;
  const bool one_node = d.same_cluster && kv_in_one_node(d.prefill.gpus + d.decode.gpus, c);
  d.kv_link = one_node ? Link::NVLink : Link::ScaleOut;
  d.kv_transfer_s = kv_transfer_s(d.kv_bytes_per_gpu, one_node, c);
  // Every request's KV leaves through the prefill GPUs' links and arrives through the decode GPUs':
  // the pool with fewer GPUs carries the most per link.
  const double link_bytes_per_s = kv_link_bytes_per_s(one_node, c);
  const int ends = std::min(d.prefill.gpus, d.decode.gpus);
  d.kv_requests_per_s = d.kv_bytes_per_request > 0 ? ends * link_bytes_per_s / d.kv_bytes_per_request : 0.0;
  d.capacity_requests_per_s = std::min({d.prefill.requests_per_s, d.decode.requests_per_s, d.kv_requests_per_s});
  d.bound = d.capacity_requests_per_s == d.prefill.requests_per_s  ? "prefill"
            : d.capacity_requests_per_s == d.decode.requests_per_s ? "decode"
                                                                   : "kv_transfer";
  // Offline every request is queued and the deployment runs at its capacity; at a request rate it
  // serves what arrives, unless that is more than it can (saturated: the queue grows without bound).
  d.request_rate_per_s = w.request_rate_per_s;
  d.saturated = d.request_rate_per_s > 0 && d.request_rate_per_s >= d.capacity_requests_per_s;
  const bool random = d.request_rate_per_s > 0 && !d.saturated;
  d.requests_per_s = random ? d.request_rate_per_s : d.capacity_requests_per_s;
  d.kv_link_utilization = d.kv_requests_per_s > 0 ? d.requests_per_s / d.kv_requests_per_s : 0.0;
  // Each pool at the deployment's rate: the pools that do not bound it run below their batch, with
  // the sequences Little's law puts in flight (Little 1961), and their latency is what users see.
  const PoolLoad pl = d.requests_per_s < d.prefill.requests_per_s
                          ? prefill_at(prefill, d.requests_per_s, random)
                          : PoolLoad{d.prefill.concurrency, d.prefill.ttft_s, 0.0, d.prefill.length_classes};
  const PoolLoad dl = d.requests_per_s < d.decode.requests_per_s ? decode_at(decode, d.requests_per_s, d.decode.concurrency, random)
                                                                 : PoolLoad{d.decode.concurrency, d.decode.tpot_s, 0.0, {}};
  d.prefill_in_flight = pl.in_flight, d.decode_in_flight = dl.in_flight;
  d.prefill_queue_s = pl.queue_s, d.decode_queue_s = dl.queue_s;
  d.ttft_s = pl.latency_s + d.kv_transfer_s + dl.queue_s;
  d.tpot_s = dl.latency_s;
  d.e2e_latency_s = d.ttft_s + (OSL - 1.0) * d.tpot_s;
  if (!w.length_mix.empty()) class_latencies(prefill, decode, pl, one_node, c, dl.queue_s, d);
  d.output_tokens_per_s_total = d.requests_per_s * OSL;
  const int gpus = d.prefill.gpus + d.decode.gpus;
  d.output_tokens_per_s_per_gpu = gpus > 0 ? d.output_tokens_per_s_total / gpus : 0.0;
  d.output_tokens_per_s_per_user = d.tpot_s > 0 ? 1.0 / d.tpot_s : 0.0;
  // Balance: the pools' rates per GPU, each at most what one GPU's link carries (L / bytes); GPUs of
  // one kind only (on different systems the pools' GPUs are not one count to share).
  if (!d.same_cluster) return d;
  const double link_rate = d.kv_bytes_per_request > 0 ? link_bytes_per_s / d.kv_bytes_per_request : 0.0;
  const double rho_p = std::min(d.prefill.requests_per_s_per_gpu, link_rate);
  const double rho_d = std::min(d.decode.requests_per_s_per_gpu, link_rate);
  d.balanced_prefill_fraction = balanced_prefill_fraction(rho_p, rho_d);
  d.balanced_output_tokens_per_s_per_gpu = rho_p > 0 && rho_d > 0 ? OSL * rho_p * rho_d / (rho_p + rho_d) : 0.0;
  // The suggested split of the same GPUs: one GPU's rate each (ρ; the links are in them already).
  const DeploymentSplit split = best_split(gpus, c.gpus_per_node, d.prefill.gpus_per_instance, d.decode.gpus_per_instance,
                                           rho_p * d.prefill.gpus_per_instance, rho_d * d.decode.gpus_per_instance, 1e300);
  const double best = split.requests_per_s;
  d.suggested_prefill_instances = split.x, d.suggested_decode_instances = split.y;
  d.suggested_output_tokens_per_s_per_gpu = gpus > 0 ? best * OSL / gpus : 0.0;
  return d;
}

nlohmann::json to_json(const PoolResult& p) {
  return {{"gpus", p.gpus},
          {"gpus_per_instance", p.gpus_per_instance},
          {"instances", p.instances},
          {"plan", to_json(p.plan)},
          {"batch", p.batch},
          {"concurrency", p.concurrency},
          {"max_batch_that_fits", p.max_batch_that_fits},
          {"peak_memory_bytes", p.peak_memory_bytes},
          {"capacity_bytes", p.capacity_bytes},
          {"fits", p.fits},
          {"requests_per_s", p.requests_per_s},
          {"requests_per_s_per_gpu", p.requests_per_s_per_gpu},
          {"ttft_s", p.ttft_s},
          {"tpot_s", p.tpot_s},
          {"step_s", p.step_s}};
}

nlohmann::json to_json(const Disaggregated& d) {
  nlohmann::json j = {{"prefill", to_json(d.prefill)},
                      {"decode", to_json(d.decode)},
                      {"kv_transfer",
                       {{"bytes_per_request", d.kv_bytes_per_request},
                        {"bytes_per_gpu", d.kv_bytes_per_gpu},
                        {"link", name_of(d.kv_link)},
                        {"time_s", d.kv_transfer_s},
                        {"requests_per_s", d.kv_requests_per_s},
                        {"link_utilization", d.kv_link_utilization}}},
                      {"capacity_requests_per_s", d.capacity_requests_per_s},
                      {"bound", d.bound},
                      {"request_rate_per_s", d.request_rate_per_s},
                      {"saturated", d.saturated},
                      {"requests_per_s", d.requests_per_s},
                      {"same_cluster", d.same_cluster},
                      {"prefill_in_flight", d.prefill_in_flight},
                      {"decode_in_flight", d.decode_in_flight},
                      {"prefill_queue_s", d.prefill_queue_s},
                      {"decode_queue_s", d.decode_queue_s},
                      {"ttft_s", d.ttft_s},
                      {"tpot_s", d.tpot_s},
                      {"e2e_latency_s", d.e2e_latency_s},
                      {"output_tokens_per_s_total", d.output_tokens_per_s_total},
                      {"output_tokens_per_s_per_gpu", d.output_tokens_per_s_per_gpu},
                      {"output_tokens_per_s_per_user", d.output_tokens_per_s_per_user},
                      {"balance",
                       {{"prefill_fraction", d.balanced_prefill_fraction},
                        {"output_tokens_per_s_per_gpu", d.balanced_output_tokens_per_s_per_gpu},
                        {"suggested_prefill_instances", d.suggested_prefill_instances},
                        {"suggested_decode_instances", d.suggested_decode_instances},
                        {"suggested_output_tokens_per_s_per_gpu", d.suggested_output_tokens_per_s_per_gpu}}}};
  // A mix of lengths: each class's latencies (as the co-located result's) and its KV transfer.
  if (!d.length_classes.empty()) {
    j["length_classes"] = to_json(d.length_classes);
    j["length_classes"]["kv_transfer_s"] = std::vector<double>(d.length_class_kv_transfer_s.begin(),
                                                               d.length_class_kv_transfer_s.end());
  }
  return j;
}

}  // namespace cutlab
