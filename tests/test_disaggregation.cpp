#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/api.h"
#include "core/disaggregation.h"
#include "core/serving_batching.h"
#include "tests/helpers.h"

using namespace cutlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// Llama 3 70B, prompt 2048, output 512, bf16 weights and KV: 8 H100s prefilling with TP 8, 8
// decoding with TP 8, batch 64 (two DGX H100 nodes: the KV crosses the scale-out network).
std::string llama_config(const std::string& prefill, const std::string& decode, const std::string& workload_extra = "") {
  return R"({"model":"llama3-70b","cluster":"dgx-h100","workload":{"prompt_len":2048,"output_len":512)" + workload_extra +
         R"(},"disaggregation":{"prefill":)" + prefill + R"(,"decode":)" + decode + "}}";
}

const std::string kPrefill = R"({"gpus":8,"plan":{"tp":8}})", kDecode = R"({"gpus":8,"plan":{"tp":8},"batch":64})";

std::vector<std::string> paths(const api::Answer<api::DisaggregationRun>& a) {
  std::vector<std::string> p;
  for (const Error& e : a.result.errors) p.push_back(e.path);
  return p;
}

}  // namespace

TEST_CASE("the balanced prefill share matches the pools' rates per GPU", "[disaggregation]") {
  // N_p·ρ_p = N_d·ρ_d: with ρ_p = 2 and ρ_d = 6 requests/s per GPU, 3 of 4 GPUs prefill.
  REQUIRE_THAT(balanced_prefill_fraction(2, 6), WithinRel(0.75, 1e-12));
  REQUIRE_THAT(balanced_prefill_fraction(5, 5), WithinRel(0.5, 1e-12));
  REQUIRE(balanced_prefill_fraction(0, 5) == 0);
}

TEST_CASE("the KV cache of a prompt crosses the scale-out link from the prefill GPUs", "[disaggregation]") {
  const api::Answer<api::DisaggregationRun> a = api::disaggregate(llama_config(kPrefill, kDecode));
  REQUIRE(a.ok());
  const Disaggregated& d = a.result.value.result;
  const Cluster& c = a.result.value.prefill.cluster;
  // KV per token: 2 (K, V) × 80 layers × 8 KV heads × 128 × 2 bytes = 327,680 bytes (320 KiB);
  // a 2,048-token prompt: 671,088,640 bytes (640 MiB), of which each of the 8 TP GPUs sends 1/8.
  REQUIRE_THAT(d.kv_bytes_per_request, WithinRel(671088640.0, 1e-12));
  REQUIRE_THAT(d.kv_bytes_per_gpu, WithinRel(83886080.0, 1e-12));
  REQUIRE(d.kv_link == Link::ScaleOut);  // 16 GPUs: more than one node of 8
  // 83,886,080 bytes over one NIC of 50 GB/s (400 Gb/s) at 0.8 of it, plus its latency: 2.10 ms.
  REQUIRE_THAT(c.scaleout_bytes_per_s, WithinRel(50e9, 1e-9));
  REQUIRE_THAT(d.kv_transfer_s,
               WithinRel(83886080.0 / (c.scaleout_bytes_per_s * c.efficiency.scaleout) + c.scaleout_latency_s, 1e-12));
  // The 8 prefill links carry at most 8 × 50 GB/s × 0.8 / 640 MiB = 476.8 requests/s.
  REQUIRE_THAT(d.kv_requests_per_s, WithinRel(8 * 50e9 * c.efficiency.scaleout / 671088640.0, 1e-9));
  // Both pools on one node: the KV goes over NVLink instead.
  const api::Answer<api::DisaggregationRun> one = api::disaggregate(
      llama_config(R"({"gpus":4,"plan":{"tp":4}})", R"({"gpus":4,"plan":{"tp":4}})"));
  REQUIRE(one.ok());
  REQUIRE(one.result.value.result.kv_link == Link::NVLink);
}

TEST_CASE("the deployment runs at its slowest pool, and the balance follows from the pools' rates", "[disaggregation]") {
  const api::Answer<api::DisaggregationRun> a = api::disaggregate(llama_config(kPrefill, kDecode));
  REQUIRE(a.ok());
  const Disaggregated& d = a.result.value.result;
  REQUIRE(d.prefill.fits);
  REQUIRE(d.decode.fits);
  REQUIRE(d.prefill.instances == 1);
  REQUIRE(d.decode.concurrency == 64);
  const double rate = std::min({d.prefill.requests_per_s, d.decode.requests_per_s, d.kv_requests_per_s});
  REQUIRE(d.requests_per_s == rate);
  REQUIRE_THAT(d.output_tokens_per_s_per_gpu, WithinRel(rate * 512 / 16, 1e-12));
  // Bound by decode: the prefill pool runs below its batch of 4 at the deployment's rate. Little's law
  // (Little 1961): its prompts in flight are the rate times each one's time there, its TTFT.
  REQUIRE(d.bound == "decode");
  REQUIRE(d.prefill_in_flight < d.prefill.concurrency);
  REQUIRE_THAT(d.prefill_in_flight, WithinRel(rate * (d.ttft_s - d.kv_transfer_s), 1e-6));
  REQUIRE(d.ttft_s < d.prefill.ttft_s + d.kv_transfer_s);
  REQUIRE(d.decode_in_flight == 64);
  REQUIRE(d.tpot_s == d.decode.tpot_s);
  REQUIRE_THAT(d.e2e_latency_s, WithinRel(d.ttft_s + 511 * d.tpot_s, 1e-12));
  // Decode pool: 64 sequences per step, each request 511 steps after its first token:
  // requests/s = 64 / (511 · TPOT).
  REQUIRE_THAT(d.decode.requests_per_s, WithinRel(64.0 / (511.0 * d.decode.tpot_s), 1e-12));
  const double rho_p = std::min(d.prefill.requests_per_s, d.kv_requests_per_s) / 8, rho_d = d.decode.requests_per_s / 8;
  REQUIRE_THAT(d.balanced_prefill_fraction, WithinRel(rho_d / (rho_p + rho_d), 1e-12));
  REQUIRE_THAT(d.balanced_output_tokens_per_s_per_gpu, WithinRel(512 * rho_p * rho_d / (rho_p + rho_d), 1e-12));
  // The suggested whole instances for 16 GPUs do at least as well as 1P1D.
  REQUIRE(d.suggested_prefill_instances + d.suggested_decode_instances == 2);
  REQUIRE(d.suggested_output_tokens_per_s_per_gpu >= d.output_tokens_per_s_per_gpu * (1 - 1e-12));
  // Decode steps without prompt chunks are no slower than the co-located engine's at the same batch.
  Config co = a.result.value.decode;
  const Result<Estimate> e = evaluate(co);
  REQUIRE(test::serving(e));
  REQUIRE(d.tpot_s <= test::serving(e)->serving.tpot_s * (1 + 1e-9));
}

TEST_CASE("a decode pool the prefill pool cannot fill runs fewer sequences, faster", "[disaggregation]") {
  // 2 H100s prefilling with TP 2 feed 16 decoding with TP 8 at batch 64: bound by prefill. Each
  // decode replica holds C = λ · 511 steps · cycle(C) sequences (Little 1961), λ its share of the
  // requests, fewer than its 64, and its steps are shorter than at 64.
  const api::Answer<api::DisaggregationRun> a = api::disaggregate(
      llama_config(R"({"gpus":2,"plan":{"tp":2}})", R"({"gpus":16,"plan":{"tp":8},"batch":64})"));
  REQUIRE(a.ok());
  const Disaggregated& d = a.result.value.result;
  REQUIRE(d.bound == "prefill");
  REQUIRE(d.decode_in_flight < 64);
  REQUIRE_THAT(d.decode_in_flight, WithinRel(d.requests_per_s / 2 * 511 * d.tpot_s, 1e-6));
  REQUIRE(d.tpot_s < d.decode.tpot_s);
  // The prefill pool bounds it: at its batch, its TTFT.
  REQUIRE(d.prefill_in_flight == d.prefill.concurrency);
  REQUIRE_THAT(d.ttft_s, WithinRel(d.prefill.ttft_s + d.kv_transfer_s, 1e-12));
}

TEST_CASE("at a request rate the deployment serves what arrives, each request waiting for a free slot", "[disaggregation]") {
  // The 8 + 8 H100 deployment of Llama 3 70B serves at most its decode pool's rate, about 6.9
  // requests/s (one TP8 replica of 64 sequences). Offline it runs at that capacity.
  const api::Answer<api::DisaggregationRun> off = api::disaggregate(llama_config(kPrefill, kDecode));
  REQUIRE(off.ok());
  const Disaggregated& o = off.result.value.result;
  REQUIRE(o.bound == "decode");
  REQUIRE(o.request_rate_per_s == 0);
  REQUIRE(!o.saturated);
  REQUIRE(o.requests_per_s == o.capacity_requests_per_s);
  REQUIRE(o.prefill_queue_s == 0);
  REQUIRE(o.decode_queue_s == 0);
  // At 6.5 requests/s (Poisson arrivals) it serves 6.5: 6.5 × 512 output tokens/s over 16 GPUs; the pools'
  // capacities are the offline ones.
  const api::Answer<api::DisaggregationRun> at6_5 = api::disaggregate(llama_config(kPrefill, kDecode, R"(,"request_rate_per_s":6.5)"));
  REQUIRE(at6_5.ok());
  const Disaggregated& d = at6_5.result.value.result;
  REQUIRE(!d.saturated);
  REQUIRE(d.request_rate_per_s == 6.5);
  REQUIRE(d.requests_per_s == 6.5);
  REQUIRE_THAT(d.capacity_requests_per_s, WithinRel(o.capacity_requests_per_s, 1e-12));
  REQUIRE_THAT(d.output_tokens_per_s_total, WithinRel(6.5 * 512, 1e-12));
  REQUIRE_THAT(d.output_tokens_per_s_per_gpu, WithinRel(6.5 * 512 / 16, 1e-12));
  // The decode replica holds C = 6.5 · 511 · TPOT sequences (Little 1961) of its 64 slots. A request
  // finding all 64 taken waits for one. Each is held 511 steps, E2E(n) = S + (n − C)·(F − S)/(64 − C)
  // through S = 511 · TPOT at C and F = 511 · TPOT with all 64 taken (the pool at its batch); the
  // count's birth–death chain p(n) = Π_{k ≤ n} λ·E2E(k)/k, geometric past 64 at ρ = λ·F/64:
  //   P(wait) = p64/(1 − ρ)/Σ, Lq = p64·ρ/(1 − ρ)²/Σ, W = Lq/λ · 1/2 (deterministic service).
  const double C = d.decode_in_flight, S = 511 * d.tpot_s, F = 511 * d.decode.tpot_s;
  REQUIRE_THAT(C, WithinRel(6.5 * S, 1e-6));
  REQUIRE(C < 64);
  REQUIRE(F > S);
  long double term = 1, sum = 0;  // p(n)
  for (int k = 1; k <= 64; ++k) {
    sum += term;
    term *= 6.5 * (S + (k - C) * (F - S) / (64 - C)) / k;
  }
  const long double rho = 6.5 * F / 64, z = sum + term / (1 - rho);
  // One that finds a slot free (1 − P(wait)) waits for the decode step in progress, half a step.
  const double p_wait = double(term / (1 - rho) / z);
  const double wait = double(term * rho / ((1 - rho) * (1 - rho)) / z) / 6.5 / 2 + (1 - p_wait) * d.tpot_s / 2;
  REQUIRE(wait > 0.01);  // 90% busy: hundreds of milliseconds
  REQUIRE_THAT(d.decode_queue_s, WithinRel(wait, 1e-6));
  // The prefill pool, well below its rate, waits little; both waits come before the first token.
  REQUIRE(d.prefill_queue_s >= 0);
  REQUIRE(d.prefill_queue_s < d.decode_queue_s);
  // (The prefill pool as the deployment configures it: 8 GPUs at TP 8, batch 8192 / 2048 = 4 prompts.)
  const api::Answer<Resolved> pool = api::resolve(R"({"model":"llama3-70b","cluster":{"preset":"dgx-h100","gpus":8},"plan":{"tp":8},
    "workload":{"mode":"infer","prompt_len":2048,"output_len":512,"batch":4}})");
  REQUIRE(pool.ok());
  const PoolLoad unqueued = prefill_at(pool.result.value, 6.5), queued = prefill_at(pool.result.value, 6.5, true);
  REQUIRE_THAT(d.ttft_s, WithinRel(queued.latency_s + d.kv_transfer_s + d.decode_queue_s, 1e-9));
  REQUIRE(d.prefill_queue_s == queued.queue_s);
  // At random, the prompts that arrived during a step share the next one: a prompt's own step is
  // longer than the paced steady state's (one prompt alone, as it arrives as a step ends).
  REQUIRE(queued.latency_s - queued.queue_s > unqueued.latency_s);
  REQUIRE_THAT(d.e2e_latency_s, WithinRel(d.ttft_s + 511 * d.tpot_s, 1e-12));
  // At 100 requests/s it is saturated: it serves its capacity, at the offline latencies.
  const api::Answer<api::DisaggregationRun> at100 = api::disaggregate(llama_config(kPrefill, kDecode, R"(,"request_rate_per_s":100)"));
  REQUIRE(at100.ok());
  const Disaggregated& s = at100.result.value.result;
  REQUIRE(s.saturated);
  REQUIRE_THAT(s.requests_per_s, WithinRel(o.requests_per_s, 1e-12));
  REQUIRE_THAT(s.ttft_s, WithinRel(o.ttft_s, 1e-12));
  REQUIRE(s.decode_queue_s == 0);
  const nlohmann::json j = nlohmann::json::parse(
      api::disaggregation_json(llama_config(kPrefill, kDecode, R"(,"request_rate_per_s":100)")));
  REQUIRE(j["result"]["saturated"] == true);
  REQUIRE(j["result"]["request_rate_per_s"] == 100.0);
}

TEST_CASE("pools on different systems run on their own GPUs and meet over the slower network", "[disaggregation]") {
  // 4 B200s prefilling, 4 H200s decoding whose NICs are cut to 25 GB/s. Each pool is what it is on
  // its own system; 4 + 4 GPUs would share a node of one system, but two systems meet over the
  // scale-out network, here at the H200 side's 25 GB/s; a balance over one GPU count means nothing.
  const std::string b200 = R"({"gpus":4,"plan":{"tp":4},"cluster":"dgx-b200"})";
  const std::string h200 = R"({"gpus":4,"plan":{"tp":4},"batch":64,"cluster":{"preset":"hgx-h200","scaleout_GBps":25}})";
  const std::string h200_prefill = R"({"gpus":4,"plan":{"tp":4},"cluster":{"preset":"hgx-h200","scaleout_GBps":25}})";
  const std::string b200_decode = R"({"gpus":4,"plan":{"tp":4},"batch":64,"cluster":"dgx-b200"})";
  const api::Answer<api::DisaggregationRun> mixed = api::disaggregate(llama_config(b200, h200));
  const api::Answer<api::DisaggregationRun> on_b200 = api::disaggregate(llama_config(b200, b200_decode));
  const api::Answer<api::DisaggregationRun> on_h200 = api::disaggregate(llama_config(h200_prefill, h200));
  REQUIRE(mixed.ok());
  REQUIRE(on_b200.ok());
  REQUIRE(on_h200.ok());
  const Disaggregated &d = mixed.result.value.result, &b = on_b200.result.value.result, &h = on_h200.result.value.result;
  REQUIRE(mixed.result.value.prefill.cluster.gpu != mixed.result.value.decode.cluster.gpu);
  REQUIRE_THAT(d.prefill.requests_per_s, WithinRel(b.prefill.requests_per_s, 1e-12));
  REQUIRE_THAT(d.decode.tpot_s, WithinRel(h.decode.tpot_s, 1e-12));
  REQUIRE(b.kv_link == Link::NVLink);
  REQUIRE(!d.same_cluster);
  REQUIRE(d.kv_link == Link::ScaleOut);
  const Cluster& slow = mixed.result.value.decode.cluster;
  REQUIRE(slow.scaleout_bytes_per_s == 25e9);
  REQUIRE_THAT(d.kv_transfer_s, WithinRel(kv_transfer_s(d.kv_bytes_per_gpu, false, slow), 1e-12));
  REQUIRE(d.kv_transfer_s > kv_transfer_s(d.kv_bytes_per_gpu, false, mixed.result.value.prefill.cluster));
  REQUIRE(d.balanced_prefill_fraction == 0);
  REQUIRE(d.suggested_prefill_instances == 0);
  // A pool's cluster errors are reported inside the pool.
  const auto p = paths(api::disaggregate(llama_config(R"({"gpus":4,"plan":{"tp":4},"cluster":{"preset":"nope"}})", kDecode)));
  REQUIRE(p == std::vector<std::string>{"/disaggregation/prefill/cluster/preset"});
  REQUIRE(paths(api::disaggregate(llama_config(R"({"gpus":4,"cluster":7})", kDecode))) ==
          std::vector<std::string>{"/disaggregation/prefill/cluster"});
}

TEST_CASE("bad disaggregation inputs are reported at their paths", "[disaggregation]") {
  auto p = paths(api::disaggregate(R"({"model":"llama3-70b","cluster":"dgx-h100","disaggregation":{"prefill":{"gpus":8}}})"));
  REQUIRE(p == std::vector<std::string>{"/disaggregation/decode"});
  p = paths(api::disaggregate(llama_config(R"({"gpus":8,"plan":{"tp":8},"colour":1})", R"({"gpus":0})")));
  REQUIRE(p == std::vector<std::string>{"/disaggregation/prefill/colour", "/disaggregation/decode/gpus"});
  // tp 3 does not divide 64 heads: the decode pool's plan.
  p = paths(api::disaggregate(llama_config(kPrefill, R"({"gpus":6,"plan":{"tp":3}})")));
  REQUIRE(std::find(p.begin(), p.end(), "/disaggregation/decode/plan/tp") != p.end());
  p = paths(api::disaggregate(llama_config(kPrefill, R"({"gpus":8,"plan":{"tp":8},"batch":0})")));
  REQUIRE(p == std::vector<std::string>{"/disaggregation/decode/batch"});
  p = paths(api::disaggregate(
      R"({"model":"llama3-70b","cluster":"dgx-h100","workload":{"output_len":1},"disaggregation":{"prefill":{"gpus":8,"plan":{"tp":8}},"decode":{"gpus":8,"plan":{"tp":8}}}})"));
  REQUIRE(p == std::vector<std::string>{"/workload/output_len"});
  p = paths(api::disaggregate(R"({"model":"llama3-70b","cluster":"dgx-h100"})"));
  REQUIRE(p == std::vector<std::string>{"/disaggregation"});
}

TEST_CASE("a decode pool that cannot hold its batch is a result naming the largest batch", "[disaggregation]") {
  // Llama 3 70B in bf16 on 2 H100s (TP 2): 70 GB of weights per GPU leave room for few sequences.
  const api::Answer<api::DisaggregationRun> a = api::disaggregate(
      llama_config(kPrefill, R"({"gpus":2,"plan":{"tp":2},"batch":4096})"));
  REQUIRE(a.ok());
  const PoolResult& d = a.result.value.result.decode;
  REQUIRE(d.concurrency == double(d.max_batch_that_fits));
  REQUIRE(d.max_batch_that_fits < 4096);
  const nlohmann::json j = nlohmann::json::parse(api::disaggregation_json(llama_config(kPrefill, kDecode)));
  REQUIRE(j["ok"] == true);
  REQUIRE(j["result"]["kv_transfer"]["bytes_per_request"] == 671088640.0);
  REQUIRE(j["result"]["decode"]["config"]["plan"]["tp"] == 8);
}

TEST_CASE("a mix of lengths served disaggregated: each class's KV, prompts and decodes, by hand", "[disaggregation]") {
  // Half the requests 1024/257, half 4096/513 (shares 1 and 1), Llama 3 70B, TP 8 pools, decode batch 64.
  const std::string
      mix = R"(,"length_mix":[{"prompt_len":1024,"output_len":257,"share":1},{"prompt_len":4096,"output_len":513,"share":1}])";
  const api::Answer<api::DisaggregationRun> a = api::disaggregate(llama_config(kPrefill, kDecode, mix));
  REQUIRE(a.ok());
  const Disaggregated& d = a.result.value.result;
  // KV of a request: the mean prompt, (1024 + 4096)/2 = 2,560 tokens × 327,680 bytes (every layer global).
  REQUIRE_THAT(d.kv_bytes_per_request, WithinRel(2560 * 327680.0, 1e-12));
  // The prefill pool's default batch: whole prompts of the mean length in a step's budget, 8192 / 2560 = 3.
  REQUIRE(a.result.value.prefill.workload.batch == 3);
  REQUIRE(a.result.value.prefill.workload.length_mix.size() == 2);
  // The decode pool: a request decodes 256 or 512 steps, 384 on average, so of the 64 sequences a
  // step holds 1/3 are of the first class (context 1024 + 128.5) and 2/3 of the second (4096 + 256.5):
  // a mean context of 3,285.83 tokens, in which Llama's keys are linear.
  const Result<Resolved> dec = resolve(a.result.value.decode);
  REQUIRE(dec.ok());
  const ServingSetup S(dec.value);
  StepLoad load;
  load.decode_seqs = 64;
  load.decode_context = (1152.5 + 2 * 4352.5) / 3;
  const double cycle = pipeline_cycle_s(step_cost(S, load), 0);
  REQUIRE(d.decode.concurrency == 64);
  REQUIRE_THAT(d.decode.tpot_s, WithinRel(cycle, 1e-9));
  REQUIRE_THAT(d.decode.requests_per_s, WithinRel(64 / (384 * cycle), 1e-9));
  // Output tokens: the mean output, (257 + 513)/2 = 385 a request; end to end with the mean decode.
  REQUIRE_THAT(d.output_tokens_per_s_total, WithinRel(d.requests_per_s * 385, 1e-12));
  REQUIRE_THAT(d.e2e_latency_s, WithinRel(d.ttft_s + 384 * d.tpot_s, 1e-12));
  // Each class's own latencies. Its KV per GPU: its prompt × 327,680 bytes over the 8 TP GPUs (every
  // layer global; both pools TP 8), over one NIC at η plus the link's latency (scale-out: 16 GPUs).
  const Cluster& c = a.result.value.prefill.cluster;
  const double nic = c.scaleout_bytes_per_s * c.efficiency.scaleout;
  const double transfer[2] = {1024 * 327680.0 / 8 / nic + c.scaleout_latency_s, 4096 * 327680.0 / 8 / nic + c.scaleout_latency_s};
  REQUIRE_THAT(transfer[1] - transfer[0], WithinRel(3072 * 40960.0 / nic, 1e-12));
  // Its prompt's TTFT on the prefill pool: the serving model of the prefill pool's config (each class
  // with one output token, every request queued), class by class.
  Config pool = a.result.value.prefill;
  pool.workload.output_len = 1;
  for (LengthClass& k : pool.workload.length_mix) k.output_len = 1;
  const Result<Resolved> pr = resolve(pool);
  REQUIRE(pr.ok());
  const InferenceEstimate alone = evaluate_serving(pr.value).serving;
  REQUIRE(alone.length_classes.size() == 2);
  REQUIRE(d.length_classes.size() == 2);
  REQUIRE(d.length_class_kv_transfer_s.size() == 2);
  const double decode_steps[2] = {256, 512}, share = 0.5;
  double mean_ttft = 0, mean_e2e = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    const ClassLatency& k = d.length_classes[i];
    REQUIRE(k.lengths.prompt_len == (i == 0 ? 1024 : 4096));
    REQUIRE(k.lengths.output_len == (i == 0 ? 257 : 513));
    REQUIRE_THAT(k.lengths.share, WithinRel(share, 1e-12));
    REQUIRE_THAT(d.length_class_kv_transfer_s[i], WithinRel(transfer[i], 1e-12));
    REQUIRE_THAT(k.prefill_steps, WithinRel(alone.length_classes[i].prefill_steps, 1e-12));
    REQUIRE_THAT(k.ttft_s, WithinRel(alone.length_classes[i].ttft_s + transfer[i], 1e-9));  // offline: no wait for a decode slot
    REQUIRE_THAT(k.e2e_latency_s, WithinRel(k.ttft_s + decode_steps[i] * d.tpot_s, 1e-12));
    mean_ttft += share * k.ttft_s, mean_e2e += share * k.e2e_latency_s;
  }
  // The longer prompt waits longer for its first token, and the deployment's figures are the means.
  REQUIRE(d.length_classes[1].ttft_s > d.length_classes[0].ttft_s);
  REQUIRE_THAT(mean_ttft, WithinRel(d.ttft_s, 1e-9));
  REQUIRE_THAT(mean_e2e, WithinRel(d.e2e_latency_s, 1e-9));
  REQUIRE_THAT(share * (transfer[0] + transfer[1]), WithinRel(d.kv_transfer_s, 1e-9));
  // In the JSON: class i of the mix at index i, beside the co-located result's keys.
  const nlohmann::json j = nlohmann::json::parse(api::to_json_text(a));
  const nlohmann::json& lc = j["result"]["length_classes"];
  REQUIRE(lc["ttft_s"].size() == 2);
  REQUIRE_THAT(lc["kv_transfer_s"][1].get<double>(), WithinRel(transfer[1], 1e-12));
  REQUIRE_THAT(lc["e2e_latency_s"][0].get<double>(), WithinRel(d.length_classes[0].e2e_latency_s, 1e-12));
  // Uniform lengths: no classes.
  const api::Answer<api::DisaggregationRun> uniform = api::disaggregate(llama_config(kPrefill, kDecode));
  REQUIRE(uniform.ok());
  REQUIRE(uniform.result.value.result.length_classes.empty());
  REQUIRE_FALSE(nlohmann::json::parse(api::to_json_text(uniform))["result"].contains("length_classes"));
  // At a request rate each class also waits for a decode slot, the same wait for every class.
  const api::Answer<api::DisaggregationRun> at_rate = api::disaggregate(
      llama_config(kPrefill, kDecode, mix + R"(,"request_rate_per_s":2)"));
  REQUIRE(at_rate.ok());
  const Disaggregated& r = at_rate.result.value.result;
  REQUIRE_FALSE(r.saturated);
  REQUIRE(r.length_classes.size() == 2);
  REQUIRE_THAT(0.5 * (r.length_classes[0].ttft_s + r.length_classes[1].ttft_s), WithinRel(r.ttft_s, 1e-9));
  for (std::size_t i = 0; i < 2; ++i) REQUIRE(r.length_classes[i].ttft_s >= r.length_class_kv_transfer_s[i] + r.decode_queue_s);
  // A class without a decode phase is named at its path.
  const std::string
      bad = R"(,"length_mix":[{"prompt_len":1024,"output_len":257,"share":1},{"prompt_len":4096,"output_len":1,"share":1}])";
  REQUIRE(paths(api::disaggregate(llama_config(kPrefill, kDecode, bad))) == std::vector<std::string>{"/workload/length_mix/1"});
}
