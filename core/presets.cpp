#include "core/presets.h"

#include "core/units.h"

namespace cutlab {

namespace {

ModelSpec gpt(const char* name, int layers, int hidden, int heads) {
  // Megatron GPT family (Shoeybi et al. 2019; Narayanan et al. 2021 Table 1; Korthikanti et al.
  // 2022 Table 3): f = 4h, d_head = h/a, V = 51,200 (GPT-2 BPE padded), tied embeddings, dropout.
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = 51200;
  m.tied_embeddings = true;
  m.dropout = true;
  return m;
}

ModelSpec llama(const char* name, int layers, int hidden, int heads, int ffn) {
  // Llama 3 (Dubey et al. 2024, arXiv:2407.21783, Table 3): 8 KV heads, SwiGLU, V = 128,256,
  // untied embeddings, no dropout.
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn_hidden = ffn;
  m.gated_mlp = true;
  m.vocab = 128256;
  return m;
}

std::vector<ModelPreset> make_models() {
  std::vector<ModelPreset> v;
  v.push_back({gpt("gpt3-175b", 96, 12288, 96),
               "Brown et al. 2020 (GPT-3) Table 2.1: 96 layers, d_model 12288, 96 heads; V padded to 51,200 as in Megatron", 175e9});
  v.push_back({gpt("megatron-22b", 48, 6144, 64), "Korthikanti et al. 2022 (arXiv:2205.05198) Table 3: 22B", 22e9});
  v.push_back(
      {gpt("megatron-530b", 105, 20480, 128), "Korthikanti et al. 2022 Table 3; Narayanan et al. 2021 Table 1 (529.6B)", 529.6e9});
  v.push_back({gpt("megatron-1t", 128, 25600, 160), "Narayanan et al. 2021 (arXiv:2104.04473) Table 1: 1008B", 1008e9});
  v.push_back({llama("llama3-8b", 32, 4096, 32, 14336), "Llama 3 paper (arXiv:2407.21783) Table 3: 8B", 8.03e9});
  v.push_back({llama("llama3-70b", 80, 8192, 64, 28672), "Llama 3 paper Table 3: 70B", 70.6e9});
  v.push_back({llama("llama3-405b", 126, 16384, 128, 53248), "Llama 3 paper Table 3: 405B", 405e9});
  {
    ModelSpec m;  // Mixtral 8x22B: Hugging Face mistralai/Mixtral-8x22B-v0.1 config.json
    m.name = "mixtral-8x22b";
    m.layers = 56, m.hidden = 6144, m.heads = 48, m.kv_heads = 8, m.head_dim = 128;
    m.ffn_hidden = 16384, m.gated_mlp = true, m.vocab = 32768;
    m.experts = 8, m.top_k = 2, m.expert_ffn_hidden = 16384;
    v.push_back({m, "mistralai/Mixtral-8x22B-v0.1 config.json; Mistral AI: 141B total, 39B active", 141e9});
  }
  {
    ModelSpec m;  // DeepSeek-V3: config.json of deepseek-ai/DeepSeek-V3 and arXiv:2412.19437 §4.2
    m.name = "deepseek-v3";
    m.layers = 61, m.dense_layers = 3, m.hidden = 7168, m.heads = 128, m.kv_heads = 128, m.head_dim = 128;
    m.q_lora_rank = 1536, m.kv_lora_rank = 512, m.qk_rope_head_dim = 64, m.v_head_dim = 128;
    m.ffn_hidden = 18432, m.gated_mlp = true, m.vocab = 129280;
    m.experts = 256, m.top_k = 8, m.shared_experts = 1, m.expert_ffn_hidden = 2048;
    m.mtp_layers = 1;                             // config.json num_nextn_predict_layers; §2.2: one MTP module (11.6B here; the
                                                  // checkpoint's 14B includes its copies of the embedding and output layer)
    m.route_groups = 8, m.route_group_limit = 4;  // config.json n_group, topk_group; §2.1.2: at most 4 nodes per token
    v.push_back({m, "DeepSeek-V3 report (arXiv:2412.19437) §4.2 and config.json: 671B total, 37B active (+14B MTP)", 671e9});
    // DeepSeek-R1 (and R1-0528): the V3 architecture (deepseek-ai/DeepSeek-R1 config.json:
    // DeepseekV3ForCausalLM with V3's dimensions), trained from the V3 base (arXiv:2501.12948 §2).
    m.name = "deepseek-r1";
    v.push_back(
        {m, "DeepSeek-R1 (arXiv:2501.12948): DeepSeek-V3-Base architecture, config.json as V3's; 671B total, 37B active", 671e9});
  }
  {
    ModelSpec m;  // Qwen2-57B-A14B: config.json of Qwen/Qwen2-57B-A14B (Qwen2 report arXiv:2407.10671 Table 1)
    m.name = "qwen2-57b-a14b";
    m.layers = 28, m.hidden = 3584, m.heads = 28, m.kv_heads = 4, m.head_dim = 128;
    m.ffn_hidden = 18944, m.gated_mlp = true, m.vocab = 151936;
    m.experts = 64, m.top_k = 8, m.shared_experts = 8, m.expert_ffn_hidden = 2560;  // shared: 20480 = 8 × 2560
    v.push_back({m, "Qwen/Qwen2-57B-A14B config.json; Qwen2 report (arXiv:2407.10671): 57B total, 14B active", 57e9});
  }
  // Qwen3 MoE (Qwen3 technical report arXiv:2505.09388 Table 2; config.json of Qwen/Qwen3-30B-A3B and
  // Qwen/Qwen3-235B-A22B): every layer MoE, 128 SwiGLU experts, top-8, no shared expert, 4 KV heads of
  // 128, V = 151,936, untied. QK-norm is not modelled (two small RMSNorms per layer).
  auto qwen3_moe = [](const char* name, int layers, int hidden, int heads, int ffn, int expert_ffn) {
    ModelSpec m;
    m.name = name;
    m.layers = layers, m.hidden = hidden, m.heads = heads, m.kv_heads = 4, m.head_dim = 128;
    m.ffn_hidden = ffn, m.gated_mlp = true, m.vocab = 151936;
    m.experts = 128, m.top_k = 8, m.expert_ffn_hidden = expert_ffn;
    return m;
  };
  v.push_back({qwen3_moe("qwen3-30b-a3b", 48, 2048, 32, 6144, 768),
               "Qwen/Qwen3-30B-A3B config.json; Qwen3 report (arXiv:2505.09388) Table 2: 30.5B total, 3.3B active", 30.5e9});
  v.push_back({qwen3_moe("qwen3-235b-a22b", 94, 4096, 64, 12288, 1536),
               "Qwen/Qwen3-235B-A22B config.json; Qwen3 report Table 2: 235B total, 22B active", 235e9});
  // Llama 4 (meta-llama/Llama-4-Scout-17B-16E and -Maverick-17B-128E config.json text_config): h 5120,
  // 40 query heads of 128, 8 KV heads, V = 202,048, untied; SwiGLU routed experts of 8,192, top-1, plus
  // one shared expert of 8,192 in every MoE layer; Maverick interleaves dense layers (intermediate_size_mlp
  // 16,384) with MoE layers (interleave_moe_layer_step 2). Attention: chunks of 8,192 tokens
  // (attention_chunk_size) in three of every four layers, every fourth (the NoPE layers,
  // no_rope_layer_interval 4) global. Not modelled: the QK L2 norm and attention temperature tuning
  // of the NoPE layers (memory-bound, per token), the vision encoder (text serving).
  auto llama4 = [](const char* name, int experts, int moe_step) {
    ModelSpec m;
    m.name = name;
    m.layers = 48, m.hidden = 5120, m.heads = 40, m.kv_heads = 8, m.head_dim = 128;
    m.ffn_hidden = 16384, m.gated_mlp = true, m.vocab = 202048;
    m.experts = experts, m.top_k = 1, m.shared_experts = 1, m.expert_ffn_hidden = 8192, m.moe_layer_step = moe_step;
    m.attention_window = 8192, m.attention_chunked = true, m.global_attention_every = 4;
    return m;
  };
  v.push_back({llama4("llama4-scout-17b-16e", 16, 1),
               "meta-llama/Llama-4-Scout-17B-16E config.json (text); Meta model card: 109B total, 17B active", 109e9});
  v.push_back({llama4("llama4-maverick-17b-128e", 128, 2),
               "meta-llama/Llama-4-Maverick-17B-128E config.json (text); Meta model card: 400B total, 17B active", 400e9});
  // gpt-oss (OpenAI gpt-oss model card, arXiv:2508.10925 §2; openai/gpt-oss-120b and -20b config.json):
  // h 2880, 64 query heads of 64, 8 KV heads, V = 201,088 (o200k_harmony), untied; SwiGLU experts of
  // 2,880, top-4, no shared expert, every layer MoE; attention alternates a 128-token sliding window
  // and full attention (layer_types, sliding first). Not modelled: the attention sinks (one learned
  // logit per head) and the biases of the QKV, output, router and expert projections (0.1% of weights).
  auto gpt_oss = [](const char* name, int layers, int experts) {
    ModelSpec m;
    m.name = name;
    m.layers = layers, m.hidden = 2880, m.heads = 64, m.kv_heads = 8, m.head_dim = 64;
    m.ffn_hidden = 2880, m.gated_mlp = true, m.vocab = 201088;
    m.experts = experts, m.top_k = 4, m.expert_ffn_hidden = 2880;
    m.attention_window = 128, m.global_attention_every = 2;
    return m;
  };
  v.push_back(
      {gpt_oss("gpt-oss-120b", 36, 128), "openai/gpt-oss-120b config.json; gpt-oss model card: 116.8B total, 5.1B active", 116.8e9});
  v.push_back(
      {gpt_oss("gpt-oss-20b", 24, 32), "openai/gpt-oss-20b config.json; gpt-oss model card: 20.9B total, 3.6B active", 20.9e9});
  return v;
}

Cluster node(const char* name, const char* gpu, int per_node, double hbm_GiB, double hbm_GBps, double bf16, double fp8,
             double nvlink_GBps, double scaleout_GBps, int sms, double host_GBps, double gemm_sustained) {
  Cluster c;
  c.gemm_sustained = gemm_sustained;
  c.host_link_bytes_per_s = host_GBps * units::GBps;
  c.sms = sms;
  c.name = name;
  c.gpu = gpu;
  c.gpus_per_node = per_node;
  c.hbm_bytes = hbm_GiB * units::GiB;
  c.hbm_bytes_per_s = hbm_GBps * units::GBps;
  c.bf16_flops_per_s = bf16 * units::TFLOPs;
  c.fp8_flops_per_s = fp8 * units::TFLOPs;
  c.nvlink_bytes_per_s = nvlink_GBps * units::GBps;
  c.scaleout_bytes_per_s = scaleout_GBps * units::GBps;
  // Per-step latencies α of the alpha-beta model: a small all-reduce on 8 NVLink GPUs then costs
  // 2·log2(8)·α ≈ 9 µs, the order of NCCL's LL protocol and of the custom all-reduces of serving
  // stacks; across nodes α = 8 µs per step (InfiniBand NDR round trips plus NCCL proxy overhead).
  c.nvlink_latency_s = 1.5 * units::us;
  c.scaleout_latency_s = 8 * units::us;
  c.reserved_bytes = 2 * units::GiB;  // CUDA context, NCCL buffers, allocator slack
  return c;
}

// Calibrated efficiencies, 2026-12-01, H100 and 500 W H100 refitted 2026-12-02 after TP-overlapped GEMMs
// were priced in chunks (core/ops.cpp OpList::window; issue 10; docs/validation.md). GEMM efficiencies are fractions of
// each GPU's sustained GEMM rate (Cluster::gemm_sustained, kA100Mamf / kH100Mamf below) and the thin-GEMM
// half dimension a multiple of its machine balance (core/ops.h gemm_half_dim), so that they carry across
// GPUs. Method: `cutlab calibrate
// validation/cases.json --family F` (the family's keys: core/validation.cpp family_fits): bounded
// Nelder–Mead, then a compass search, from the Efficiencies defaults, minimising the mean absolute
// percentage error over the family's published training runs plus a Gaussian prior on each fitted
// value at what kernel benchmarks reach (a maximum a posteriori fit; values, spreads and bounds with
// their sources in calibration_params); one set per GPU family, no per-case factors. At a bound:
// attention 0.30 on the 500 W H100 (below the prior 0.55): torchtitan calls PyTorch's SDPA, whose
// flash kernel is FlashAttention-2's, about 0.35 of the H100's peak (the prior's low end, Shah et al.
// 2024 Figure 5 for FA2), and at 500 W the clocks sit lower still; it stayed at the bound once the
// eager rows were priced by their unfused elementwise passes (plan.fused_elementwise, 2026-12-01). (On
// the H100 SXM it sat at 0.30 too until DeepEP's SM-bound copy rate was modelled: the fine-grained MoE
// runs had been pulling it down; it is 0.33 now.) Overlap is 0.15 on the 500 W H100 (torchtitan's async
// TP hides little of the TP collectives: 1.10× the vanilla TP rows' throughput, where hiding them all
// would give about 1.3× in this model; it sat at 0 before the GEMM half dimension was scaled by the
// machine balance). nvlink keeps its default 0.8 in all families: the runs barely determine it.
// A100, KEYS gemm,gemm_half_balance,hbm,scaleout,kernel_floor_us (no A100 run uses flash attention or
// fp8 or overlaps communication, so attention, gemm_fp8 and overlap keep their defaults); 10 runs:
// megatron_a100_weak_1.7B, _3.6B, _7.5B, _18B, _39B, _76B, _145B, _310B, _530B, _1T
// (Narayanan et al. 2021 Table 1).
Efficiencies a100_fitted() {
  Efficiencies e;
  e.gemm = 0.785;
  e.gemm_half_balance = 0.182;
  e.hbm = 0.875;
  e.nvlink = 0.8;
  e.scaleout = 0.805;
  e.overlap = 0.9;
  e.kernel_floor_s = 2.181 * units::us;
  return e;
}

// H100 (refitted 2026-12-02 with the chunked TP-overlap GEMMs; the serving efficiencies fitted before it
// do not depend on these keys),
// KEYS gemm,gemm_fp8,gemm_half_balance,attention,hbm,scaleout,overlap,kernel_floor_us,deepep_sm_GBps,
// expert_gemm_host_us; 32 runs:
// mcore_h100_weak_1.7B, _7.1B, _16B, _32B, _70B, _119B, _177B, _314B, _462B and
// mcore_h100_strong_gpt3_175b_96gpu, _4608gpu (Megatron-Core 2024, bf16); nemo2407_h100_fp8_GPT3-5B_64gpu,
// _GPT3-20B_64gpu, _GPT3-175B_128gpu, _GPT3-175B_512gpu, _LLAMA2-7B_8gpu, _LLAMA2-13B_16gpu,
// _LLAMA2-70B_64gpu, _Nemotron-340B_128gpu, _LLAMA3-8B_8gpu, _LLAMA3-70B_64gpu (NeMo 24.07, fp8).
// and the 11 Megatron-Bridge Qwen3 MoE runs (2026; 2 more reported apart, docs/validation.md §1).
// gemm 0.754 of the sustained rate (0.60 of the datasheet peak) sits below the prior's 0.87: the runs ask
// for less than kernel benchmarks of large GEMMs (what the model leaves out: stragglers, data loading).
// Refitted 2026-12-02 after the TP overlap's SM margin, attention dropout and the interleaved schedule's
// data-parallel windows (docs/validation.md §2).
// H800, H200, B200 and GB200 inherit these values: no published run on them is in the cases; their
// peaks, bandwidths, SM counts, sustained GEMM rates and machine balances are their own. The A100 held
// out and predicted from the H100 runs is 6% off (docs/validation.md §6; 12% before the chunked
// TP-overlap GEMMs): expect errors of that order on other GPU families.
Efficiencies h100_fitted() {
  Efficiencies e;
  e.gemm = 0.754;
  e.gemm_fp8 = 0.715;
  e.gemm_half_balance = 0.278;
  e.attention = 0.327;
  e.hbm = 0.830;
  e.nvlink = 0.8;
  e.scaleout = 0.757;
  e.overlap = 0.820;
  e.kernel_floor_s = 3.167 * units::us;
  // Below DeepSeek's 8–10 GB/s per SM (core/validation.cpp), less so since the experts' host work is
  // priced apart (6.4 before): what is left of the dispatcher's kernels beyond the bytes it copies.
  e.deepep_sm_bytes_per_s = 7.425 * units::GBps;
  // The host's work per expert GEMM and pass (core/ops.cpp OpList::host), near the prior's 10 µs.
  e.expert_gemm_host_s = 12.30 * units::us;
  return e;
}

// H100 96GB HBM2e at a 500 W power limit (Meta's Grand Teton, the torchtitan benchmarks), KEYS as H100:
// its own family. It is another SKU (HBM2e at 2.4 TB/s) held to 500 W instead of 700 W, which lowers
// its sustained clocks, so the H100 SXM values do not carry over. Runs: the 10 torchtitan Llama 3.1 8B
// runs of validation/cases.json (FSDP, torch.compile, Float8, async TP).
Efficiencies gt_fitted() {
  Efficiencies e = h100_fitted();
  e.gemm = 0.641;
  e.gemm_fp8 = 0.546;
  e.gemm_half_balance = 1.302;
  // At its lower bound: torchtitan calls PyTorch's SDPA, whose flash kernel is FlashAttention-2's, about
  // 0.35 of an H100's peak at 700 W (the prior's low end), lower at 500 W (docs/validation.md §2).
  e.attention = 0.300;
  e.hbm = 0.839;
  e.scaleout = 0.800;
  e.overlap = 0.157;
  e.kernel_floor_s = 3.085 * units::us;
  return e;
}

Cluster calibrated(Cluster c, const Efficiencies& e) {
  c.efficiency = e;
  return c;
}

// Serving efficiencies (core/hardware.h; fitted to each GPU family's serving cases by `cutlab calibrate
// --serving validation/serving-cases.json`, docs/validation.md §8: hbm_stream, serving_expert_stream,
// serving_gemm, serving_expert_gemm, serving_attention, host_seq_us, serving_seq_layer_us, serving_moe_layer_us, serving_rank_cv;
// priors and bounds in core/validation.cpp serving_calibration_params); the training efficiencies stay as they are. Refitted
// 2026-12-02 with the memory-bound ops between the GEMMs, the offline runs' prompt bursts, a fixed cost per MoE layer, the cases' EP
// exchange as TensorRT-LLM runs it (all-gather and reduce-scatter) and the EP group's wait for its slowest rank; again after the H100
// training refit and the chunked layers' exact mean reads (core/serving_step.h stage_attended_keys), with the cases' KV pool at 95% of
// the free memory (workload.kv_cache_free_fraction), and with the errors past 25% in the fit's objective
// (serving_fit_objective_percent, core/validation.h), and with the routed experts' grouped GEMM apart
// from the dense projections (serving_expert_gemm: 0.31–0.65 of serving_gemm's rate, near its lower
// bound on B200; serving_gemm 0.57–0.77 as last fitted), with the output layer run only on the tokens
// that sample (core/serving_step.cpp), with the experts' weight reads apart from the dense stream
// (serving_expert_stream 0.50–0.84 of hbm_stream, which returned hbm_stream to 0.72–0.86 from the H100's lower
// bound), and with gpt-oss on Hopper read as its published checkpoint (MXFP4 experts, bf16 the rest;
// 2026-12-03, H100 and H200 refitted), and with a GPU time per sequence per layer (serving_seq_layer_us, 2026-12-04, every
// family refitted: 0.46 µs on GB200 and 0.51 on H100, where the host's time per sequence falls to 0; 0.13 on B200 beside
// 6.8 µs of host; about 0 on H200 and the RTX server, which keep 11–17 µs of host). serving_rank_cv sits at 0.04–0.17,
// and the MoE layer's fixed cost at 44–64 µs, up to 2.1× its prior: the runs ask for more GPU time than the modelled
// kernels explain (the hottest expert's load beyond the group's spread and prompt chunks landing on some attention-DP
// ranks only are not modelled), and the fit takes it from these (docs/validation.md §8). H200 and H100 refitted
// 2026-12-04 around the kernel rates measured on an H200 (core/validation.cpp measured_serving_priors: GEMM,
// grouped GEMM and attention rates for both, the stream fractions for the H200 only): serving_attention 0.31 →
// 0.60 (H200) and 0.52 → 0.63 (H100), where cuDNN's attention measured 0.63. All five refitted 2026-12-04 once
// more with GEMM tiles that pad least and the routed experts' last tile half full on average (core/ops.h
// gemm_efficiency, routed_gemm_efficiency): family means 0.1–1.0 point lower, cases over 30% 5 → 1; the H100's
// host time per sequence moved 2.8 → 15.0 µs along a direction its MoE cases hardly constrain (the GPU time
// per sequence and layer trades with it), nearer its prior of 20. Since 2026-12-05 the GB200 takes the B200's
// kernel rates and fits only the engine's costs beside them (the same die: kGB200Serving below), the H800
// takes the H100's fit, and the A100 and the 500 W H100 a fit pooled over the five families.

// One GPU family's serving efficiencies, in the order `cutlab calibrate --serving` prints them.
struct ServingFit {
  double hbm_stream, expert_stream, gemm, expert_gemm, attention, host_seq_us, seq_layer_us, moe_layer_us, rank_cv;
  bool operator==(const ServingFit&) const = default;
};

// The H100 SXM's fit, which the H800 also takes: the same GH100 die with the same HBM3 at 3.35 TB/s and
// the same host class, its NVLink cut to 400 GB/s (which no serving efficiency holds: the links' own
// efficiency prices it), as it takes the H100's training efficiencies.
constexpr ServingFit kH100Serving{0.783, 0.672, 0.775, 0.415, 0.628, 15.0, 0.629, 55.8, 0.159};

// The B200's fit, and the GB200's on its die: the B200's kernel rates (the first five; core/validation.h
// serving_die_family) with the engine's costs fitted to the GB200 cases (2026-12-05): 11.2% mean, largest
// 41.3%, against 12.0% and 41.3% for nine efficiencies fitted apart.
constexpr ServingFit kB200Serving{0.776, 0.870, 0.579, 0.301, 0.309, 5.7, 0.129, 62.0, 0.111};
constexpr ServingFit on_die(const ServingFit& die, double host_seq_us, double seq_layer_us, double moe_layer_us, double rank_cv) {
  return {die.hbm_stream, die.expert_stream, die.gemm,     die.expert_gemm, die.attention,
          host_seq_us,    seq_layer_us,      moe_layer_us, rank_cv};
}
constexpr ServingFit kGB200Serving = on_die(kB200Serving, 0.0, 0.458, 47.7, 0.032);

// A GPU without serving cases (A100, the 500 W H100 96GB): one set fitted to all 308 serving cases of the
// five families together (`cutlab calibrate --serving validation/serving-cases.json --pooled`, 2026-12-05):
// 14.5% mean in-sample. Left out in turn, such a pooled fit predicts each family at 17.1% mean (the
// leave-one-GPU-family-out column of docs/validation.md §8), against 25.3% for the priors these GPUs
// kept before.
constexpr ServingFit kPooledServing{0.855, 0.694, 0.684, 0.381, 0.289, 3.0, 0.369, 72.3, 0.127};

// The serving efficiencies of `e` (the inverse of serving() below).
ServingFit serving_fit_of(const Efficiencies& e) {
  return {e.hbm_stream,
          e.serving_expert_stream,
          e.serving_gemm,
          e.serving_expert_gemm,
          e.serving_attention,
          e.host_seq_s / units::us,
          e.serving_seq_layer_s / units::us,
          e.serving_moe_layer_s / units::us,
          e.serving_rank_cv};
}

Cluster serving(Cluster c, const ServingFit& f) {
  c.efficiency.hbm_stream = f.hbm_stream;
  c.efficiency.serving_expert_stream = f.expert_stream;
  c.efficiency.serving_gemm = f.gemm;
  c.efficiency.serving_expert_gemm = f.expert_gemm;
  c.efficiency.serving_attention = f.attention;
  c.efficiency.host_seq_s = f.host_seq_us * units::us;
  c.efficiency.serving_seq_layer_s = f.seq_layer_us * units::us;
  c.efficiency.serving_moe_layer_s = f.moe_layer_us * units::us;
  c.efficiency.serving_rank_cv = f.rank_cv;
  return c;
}

// A node whose GPUs are joined by something other than NVLink (the label of Cluster::node_link).
Cluster joined_by(Cluster c, const char* node_link) {
  c.node_link = node_link;
  return c;
}

// The share of the node link's datasheet rate a collective reaches (Efficiencies::nvlink), where it is not
// the NVLink value the training runs fitted.
Cluster link_efficiency(Cluster c, double e) {
  c.efficiency.nvlink = e;
  return c;
}

// The dense fp4 (NVFP4) tensor-core peak of a Blackwell GPU, TFLOP/s.
Cluster with_fp4(Cluster c, double fp4) {
  c.fp4_flops_per_s = fp4 * units::TFLOPs;
  return c;
}

// Sustained GEMM rate as a fraction of the datasheet's dense peak (core/hardware.h
// Cluster::gemm_sustained): the maximum achievable matmul FLOPS (MAMF) of Bekman, "Machine Learning
// Engineering", Accelerators chapter (bf16, CUDA 12.1): A100 SXM 267.9 of 312 TFLOP/s, H100 SXM 792.1
// of 989. The other presets' GPUs take the H100 SXM's fraction: the H800, H200 and the 500 W H100 are
// the same GH100 die (GH200 at 900 W measured 821.0 of 989, 0.830, in the same table); for B200,
// GB200 and the RTX PRO 6000 it is an assumption, stated here, until a measured MAMF replaces it.
constexpr double kA100Mamf = 267.9 / 312.0;
constexpr double kH100Mamf = 792.1 / 989.0;

std::vector<ClusterPreset> make_clusters() {
  std::vector<ClusterPreset> v;
  // Host link per GPU per direction (activation offload): PCIe Gen4 x16 32 GB/s on A100 (datasheet:
  // "PCIe Gen4 64 GB/s", both directions), PCIe Gen5 x16 64 GB/s on H100, H800, H200 and B200
  // ("PCIe Gen5 128 GB/s"), NVLink-C2C 450 GB/s on GB200 (900 GB/s both directions, as the GH200
  // datasheet gives it; docs/hardware-sources.md).
  // SMs: A100 108, H100/H800/H200 SXM 132 (NVIDIA A100 and H100 architecture whitepapers); B200 148
  // (2 dies × 74, as CUDA's multiProcessorCount reports; the datasheet does not list SMs).
  const char* sheet = "NVIDIA datasheets (dense peaks; docs/hardware-sources.md)";
  v.push_back({serving(calibrated(node("dgx-a100", "A100 SXM 80GB", 8, 80, 2039, 312, 0, 300, 25, 108, 32, kA100Mamf), a100_fitted()),
                       kPooledServing),
               std::string(sheet) + "; NVLink 3 600 GB/s total; 8× HDR 200 Gb/s IB per node", "A100 runs / pooled", "pooled", 17.1});
  v.push_back({serving(calibrated(node("dgx-h100", "H100 SXM", 8, 79.6, 3350, 989, 1979, 450, 50, 132, 64, kH100Mamf), h100_fitted()),
                       kH100Serving),
               std::string(sheet) + "; 81,559 MiB usable; NVLink 4 900 GB/s total; 8× NDR 400 Gb/s per node", "H100 runs / H100 cases",
               "h100", 13.7});
  v.push_back(
      {serving(calibrated(node("grand-teton-h100", "H100 96GB HBM2e (500 W)", 8, 95.5, 2400, 989, 1979, 450, 50, 132, 64, kH100Mamf),
                          gt_fitted()),
               kPooledServing),
       std::string(sheet) + "; Meta Grand Teton (torchtitan benchmarks): 96 GB HBM2e at 2.4 TB/s, 500 W power limit, "
                            "NVLink 4, 400 Gb/s RDMA per GPU",
       "its runs / pooled", "pooled", 17.1});
  v.push_back({serving(calibrated(node("hgx-h800", "H800 SXM", 8, 79.6, 3350, 989, 1979, 200, 50, 132, 64, kH100Mamf), h100_fitted()),
                       kH100Serving),
               std::string(sheet) + "; NVLink 400 GB/s total (DeepSeek-V3 §3.2.2: ~160 GB/s achievable), 400 Gb/s IB",
               "H100 runs / H100 cases", "h100", 13.7});
  v.push_back({serving(calibrated(node("hgx-h200", "H200 SXM", 8, 140.4, 4800, 989, 1979, 450, 50, 132, 64, kH100Mamf), h100_fitted()),
                       {0.682, 0.615, 0.771, 0.324, 0.615, 0.2, 0.042, 24.0, 0.197}),
               std::string(sheet) + "; 141 GB HBM3e (143,771 MiB usable); NVLink 4; 400 Gb/s per GPU", "H100 runs / H200 cases",
               "h200", 15.3});
  // fp4: dense NVFP4 peaks, half the datasheets' sparse figures (HGX B200 18 PFLOPS, GB200 NVL72
  // 1,440 PFLOPS per 72 GPUs = 20 PFLOPS per GPU).
  v.push_back({serving(calibrated(with_fp4(node("dgx-b200", "B200", 8, 179, 8000, 2250, 4500, 900, 50, 148, 64, kH100Mamf), 9000),
                                  h100_fitted()),
                       kB200Serving),
               std::string(sheet) + "; 180 GB HBM3e; NVLink 5 1.8 TB/s total; 400 Gb/s per GPU", "H100 runs / B200 cases", "b200",
               9.9});
  v.push_back(
      {serving(calibrated(with_fp4(node("gb200-nvl72", "GB200", 72, 184, 8000, 2500, 5000, 900, 50, 148, 450, kH100Mamf), 10000),
                          h100_fitted()),
               kGB200Serving),
       std::string(sheet) + "; 186 GB HBM3e; 72 GPUs in one NVLink 5 domain; 400 Gb/s per GPU scale-out",
       "H100 runs / GB200 cases, B200 rates", "gb200", 13.1});
  // RTX PRO 6000 Blackwell Server Edition (NVIDIA datasheet): 96 GB GDDR7 at 1.6 TB/s (1,597 GB/s),
  // 188 SMs, PCIe Gen5 x16 and no NVLink: the GPUs of a server talk over PCIe (64 GB/s per direction,
  // in the "nvlink" tier of 8 GPUs). Peaks: the datasheet's 4,000 FP4 AI TOPS (sparse) halved for
  // dense, and halved again per precision step as on every Blackwell tensor core (fp8 1,000, bf16 500;
  // docs/hardware-sources.md gives the uncertainty). Usable memory 95.5 GiB (as the 96 GB H100:
  // the share the 80 GB part exposes). Scale-out not stated; 400 Gb/s as the others (no run spans servers).
  // GPU to GPU over PCIe, the EP exchange's all-gather and reduce-scatter reach 0.6 of the 64 GB/s (38 GB/s),
  // not NVLink's 0.8: the serving cases give it (docs/validation.md §8). Qwen3-30B-A3B at 128/128, 2,048
  // sequences per GPU at EP 1, 2, 4 and 8, takes 35.7, 61.3, 108.6 and 202.6 µs per output token per GPU,
  // 23.8 µs more per further EP rank (least squares), for 2 tokens × 48 MoE layers × 8 KiB (bf16 hidden
  // states out and back) = 768 KiB per output token and rank: 33 GB/s, the group's wait included. The
  // family refitted at 0.5, 0.55, 0.6, 0.65, 0.7 and 0.8 of the link: 12.2%, 12.0%, 11.8%, 12.2%, 12.5% and
  // 13.2% mean. No bus measurement of the server is at hand; a measured all-gather rate should replace it.
  v.push_back(
      {serving(link_efficiency(calibrated(with_fp4(joined_by(node("rtx-pro-6000-server", "RTX PRO 6000 Blackwell Server Edition", 8,
                                                                  95.5, 1597, 500, 1000, 64, 50, 188, 64, kH100Mamf),
                                                             "PCIe"),
                                                   2000),
                                          h100_fitted()),
                               0.6),
               {0.892, 0.718, 0.502, 0.714, 0.584, 4.7, 0.000, 33.6, 0.141}),
       std::string(sheet) + "; 96 GB GDDR7 at 1.6 TB/s; PCIe Gen5 x16, no NVLink (GPU to GPU over PCIe)",
       "H100 runs / RTX PRO 6000 cases", "rtx-pro-6000", 16.9});
  return v;
}

}  // namespace

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = make_models();
  return presets;
}

const std::vector<ClusterPreset>& cluster_presets() {
  static const std::vector<ClusterPreset> presets = make_clusters();
  return presets;
}

std::optional<ModelSpec> find_model_preset(const std::string& name) {
  for (const ModelPreset& p : model_presets())
    if (p.spec.name == name) return p.spec;
  return std::nullopt;
}

std::optional<Cluster> find_cluster_preset(const std::string& name) {
  for (const ClusterPreset& p : cluster_presets())
    if (p.spec.name == name) return p.spec;
  return std::nullopt;
}

const ClusterPreset* serving_preset_as_given(const Cluster& c) {
  for (const ClusterPreset& p : cluster_presets())
    if (p.spec.name == c.name && serving_fit_of(p.spec.efficiency) == serving_fit_of(c.efficiency)) return &p;
  return nullptr;
}

}  // namespace cutlab
