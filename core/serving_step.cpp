#include "core/serving_step.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "core/memory.h"
#include "core/ops.h"

namespace cutlab {

double kv_bytes_per_token_layer(const ModelSpec& m, double t, double bytes) {
  if (is_mla(m)) return (m.kv_lora_rank + m.qk_rope_head_dim) * bytes;  // the latent is not split by TP
  const double g_gpu = std::max(1.0, double(m.kv_heads) / t);           // replicated when t > g
  return 2.0 * g_gpu * m.head_dim * bytes;
}

double stage_attended_keys(const ModelSpec& m, const StageInfo& st, double context, Attended how, double from) {
  // Mean: contexts uniform on [from, hi], whose mean is `context`; local_attention_pairs(s) is the
  // integral of attended_tokens over contexts 0..s, so its difference over the range is the mean's sum.
  // Every local layer attends alike (attended_tokens depends on the layer only through whether it is
  // global), so the stage's layers count as global ones at `context` and local ones at one value.
  const double hi = 2.0 * context - from, W = m.attention_window;
  double layers = 0, global = 0;
  for (const auto& [first, last] : st.chunks)
    if (last >= first) layers += last - first + 1, global += global_attention_layers(m, first, last);
  const double local = layers - global;
  // A local layer attends to fewer keys than the context once its contexts pass the window.
  const bool windowed = how == Attended::Mean ? hi > W : context > W;
  if (local == 0 || !windowed || how == Attended::HeldFull) return layers * context;
  double one = 0;  // the keys of one local layer
  if (how == Attended::Held) one = std::min(context, W);
  else if (hi > from) one = (local_attention_pairs(m, hi) - local_attention_pairs(m, from)) / (hi - from);
  else one = local_attended_tokens(m, context);
  return global * context + local * one;
}

Attended held(const Workload& w) { return w.local_kv_cache == LocalKvCache::Full ? Attended::HeldFull : Attended::Held; }

double expected_max_normal(int n) {
  // Blom's approximation (Blom 1958, "Statistical Estimates and Transformed Beta-Variables"):
  // E[max of n] ≈ Φ⁻¹((n − 0.375)/(n + 0.25)), within 0.025 of Tippett's table (n = 2: 0.589 for
  // 0.564; n = 8: 1.434 for 1.424); Φ⁻¹ by Abramowitz & Stegun 26.2.23 (|error| < 4.5e-4), with the
  // natural log as ln 2 · log2: no libm function the page's first module lacks (tests/js/size.test.mjs).
  if (n <= 1) return 0.0;
  const double q = 0.625 / (n + 0.25);  // 1 − (n − 0.375)/(n + 0.25), the upper tail
  const double t = std::sqrt(-2.0 * std::numbers::ln2 * std::log2(q));
  return t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
}

double sampled_tokens(double decode_tokens, double prefill_tokens, double prompt_len) {
  return decode_tokens + prefill_tokens / std::max(1.0, prompt_len);
}

double experts_touched(double local, double experts, double routings) {
  if (!(experts > 0) || !(routings > 0)) return 0.0;
  return local * (1.0 - std::pow(1.0 - 1.0 / experts, routings));
}

ServingSetup::ServingSetup(const Resolved& r) : ServingSetup(r, r.placement) {}

ServingSetup::ServingSetup(const Resolved& r, const Placement& groups)
    : m(r.config.model),
      c(r.config.cluster),
      plan(r.config.plan),
      w(r.config.workload),
      pl(r.placement),
      mesh(r.mesh),
      t(plan.tp),
      h(m.hidden),
      wb(dtype_bytes(w.weight_dtype)),
      expert_wb(expert_weight_bytes(w)),
      kv_layer(kv_bytes_per_token_layer(m, t, dtype_bytes(w.kv_dtype))),
      peak(serving_gemm_peak_flops_per_s(c, w)),  // core/precision.h
      expert_peak(serving_expert_gemm_peak_flops_per_s(c, w)),
      attention_peak(serving_attention_peak_flops_per_s(c, w)),
      group_replicas(std::max(1.0, double(plan.ep) * mesh.etp / (double(plan.tp) * plan.cp))),
      tp(find_group(groups, Axis::TP)),
      ep(find_group(groups, Axis::EP)),
      pp(find_group(groups, Axis::PP)),
      ep_wait_z(ep ? expected_max_normal(ep->size) : 0.0),
      moe_layer(moe_layer_params(m)) {
  // A stage's step depends on it through its layer counts, its ends and its parameters (stage_step).
  struct Kind {
    int layers, moe_layers, global_layers;
    bool embedding, output;
    StageParams params;
    bool operator==(const Kind& o) const {
      return layers == o.layers && moe_layers == o.moe_layers && global_layers == o.global_layers && embedding == o.embedding &&
             output == o.output && params.dense == o.params.dense && params.experts == o.params.experts &&
             params.embedding == o.params.embedding;
    }
  };
  std::vector<Kind> kinds;
  for (const StageInfo& st : pl.stages) {
    stage_params.push_back(cutlab::stage_params(m, plan, mesh, st));
    int global = 0;
    for (const auto& [first, last] : st.chunks) global += global_attention_layers(m, first, last);
    const Kind k{st.layers, st.moe_layers, global, st.embedding, st.output, stage_params.back()};
    const auto same = std::find(kinds.begin(), kinds.end(), k);
    if (same != kinds.end()) stage_kind.push_back(int(same - kinds.begin()));
    else if (int(kinds.size()) < kMaxStageKinds) stage_kind.push_back(int(kinds.size())), kinds.push_back(k);
    else stage_kind.push_back(kNoKind);
  }
}

double ServingSetup::tp_allreduce(double bytes) const {
  return tp && tp->size > 1 ? collective_time_s(Collective::AllReduce, bytes, *tp, c) : 0.0;
}

double ServingSetup::tp_logits_gather(double sampled) const {
  // Each TP rank's output layer holds vocab/t columns; the sampler needs every column (vLLM's
  // LogitsProcessor gathers them, TensorRT-LLM's LMHead with gather_output all-gathers them): 16-bit.
  return tp && tp->size > 1 && sampled > 0 ? collective_time_s(Collective::AllGather, 2.0 * double(m.vocab) * sampled, *tp, c) : 0.0;
}

double ServingSetup::ep_exchange(double bytes) const {
  return ep && ep->size > 1 ? ep_exchange_time_s(plan.ep_dispatcher, bytes, routing_of(m), *ep, c) : 0.0;
}

double ServingSetup::pp_send(double bytes) const {
  return pp && pp->size > 1 ? collective_time_s(Collective::SendRecv, bytes, *pp, c) : 0.0;
}

double StepCost::walk_s() const {
  double s = 0;
  for (double x : stage_s) s += x;
  return s + (stage_s.empty() ? 0.0 : double(stage_s.size() - 1) * pp_send_s);
}

void add_scaled(StepCost& into, const StepCost& x, double a) {
  for (std::size_t i = 0; i < x.stage_s.size(); ++i) into.stage_s[i] += a * x.stage_s[i];
  into.weights_s += a * x.weights_s, into.kv_s += a * x.kv_s, into.compute_s += a * x.compute_s, into.tp_s += a * x.tp_s;
  into.ep_s += a * x.ep_s, into.ep_wait_s += a * x.ep_wait_s, into.elementwise_s += a * x.elementwise_s, into.host_s += a * x.host_s;
  into.pp_send_s += a * x.pp_send_s, into.local_experts_read += a * x.local_experts_read;
}

namespace {

// One stage (or the draft head, posed as a stage of one block with the output layer) for `load`.
struct StageStep {
  double weights_s = 0, kv_s = 0, compute_s = 0, floor_s = 0, elementwise_s = 0, tp_s = 0, ep_s = 0, ep_wait_s = 0, host_s = 0,
         experts_read = 0;
  double total_s() const { return weights_s + kv_s + compute_s + floor_s + elementwise_s + tp_s + ep_s + ep_wait_s + host_s; }
};

// One roofline term of a kernel class (Williams et al. 2009): the larger of its reads and its math.
double roofline_s(double bytes, double hbm_bps, double flops, double flops_per_s) {
  return std::max(bytes / hbm_bps, flops > 0 ? flops / flops_per_s : 0.0);
}

// Keys the stage's layers attend to, per decoding sequence (or prompt token), over a load's parts.
double part_keys(const ModelSpec& m, const StageInfo& st, const ContextPart* parts, int n, double context, double from) {
  if (n == 0) return stage_attended_keys(m, st, context, Attended::Mean, from);
  double keys = 0;
  for (int i = 0; i < n; ++i) keys += parts[i].share * stage_attended_keys(m, st, parts[i].context, Attended::Mean, parts[i].from);
  return keys;
}

// `sp`: the stage's parameters (stage_params); `experts_read`: the routed experts of this GPU the
// step's tokens touch (experts_touched; the same in every stage of a step).
StageStep stage_step(const ServingSetup& S, const StageInfo& st, const StageParams& sp, double experts_read, const StepLoad& L) {
  const ModelSpec& m = S.m;
  const Efficiencies& e = S.c.efficiency;
  const LayerParams& el = S.moe_layer;
  const double n_moe = st.moe_layers, n_layers = st.layers, T = L.tokens();
  const double hbm_bps = S.c.hbm_bytes_per_s * e.hbm_stream;
  StageStep r;
  // Weights: every shard once per step (Pope et al. 2022 §3: decode is bound by loading the weights),
  // except the embedding (a lookup of T rows) and the routed experts no token of the EP group chose:
  // the group's tokens are this replica's T times the replicas whose tokens reach the group.
  const double dense = sp.dense - (st.output && m.tied_embeddings ? 0.0 : sp.embedding);  // tied: the output reads it
  const double E = m.experts, k = m.top_k, local = is_moe(m) ? E / S.plan.ep : 0.0;
  const double group_routings = T * S.group_replicas * k;
  r.experts_read = experts_read;
  // The output layer stays 16-bit in a quantised checkpoint (core/precision.h kVocabWeightBytes).
  const double output = st.output ? double(m.vocab) * S.h / S.t : 0.0;
  const double dense_bytes = (dense - output) * S.wb + output * kVocabWeightBytes;
  const double expert_bytes = n_moe * r.experts_read * el.routed_expert / S.mesh.etp * S.expert_wb;
  // GEMM FLOPs: 2 per dense weight per token; this GPU's experts take group_routings/ep token copies
  // (local/E of them), 2 FLOPs per expert weight each.
  // The output layer runs only on the tokens that sample (sampled_tokens), not on every prompt token
  // as in training.
  const double prompt_len = L.prompt_len > 0 ? L.prompt_len : double(S.w.prompt_len);
  const double sampled = st.output ? sampled_tokens(L.decode_seqs * L.decode_tokens, L.prefill_tokens, prompt_len) : 0.0;
  const double dense_flops = 2.0 * T * (dense - output), output_flops = 2.0 * sampled * output;
  const double copies = group_routings / std::max(1, S.plan.ep);
  const double expert_flops = 2.0 * copies * n_moe * el.routed_expert / S.mesh.etp;
  // GEMM efficiency by shape (core/ops.h gemm_efficiency, the training ops' function): the dense
  // projections are (T × h/t)·(h/t × h)-like, M = T tokens of the step; the grouped expert GEMM runs
  // the experts read, each with the tokens routed to it (uniform routing), N = f_e/etp, K = h. Few
  // tokens per step, or per expert, pad the tiles and leave SMs idle (tile and wave quantization).
  // Its thin-GEMM term x/(x + gemm_half_dim) is left out (half_dim 0): it stands for a tile's low
  // arithmetic intensity, which the memory side of this roofline (the weights read) already charges;
  // with it a decode step of one sequence (M = 1) would run at 1/176 of its FLOP rate.
  // serving_gemm is a fraction of the sustained rate (core/hardware.h Cluster::gemm_sustained).
  const double serving_gemm = e.serving_gemm * S.c.gemm_sustained;
  const double dense_eff = gemm_efficiency(T, S.h, S.h / S.t, 1, S.c.sms, serving_gemm, 0.0);
  // Tokens per expert read: this GPU's token copies, group_routings·local/E, over the experts they touch.
  // The grouped GEMM runs at serving_expert_gemm of the dense projections' rate at its shape (uneven
  // experts in one launch, each padded to its tiles, the routed counts spread about the mean:
  // core/ops.h routed_gemm_efficiency; fitted apart, docs/validation.md §8).
  const double per_expert = r.experts_read > 0 ? group_routings * local / E / r.experts_read : 0.0;
  const double expert_eff = is_moe(m)
                                ? routed_gemm_efficiency(per_expert, m.expert_ffn_hidden / double(S.mesh.etp), S.h,
                                                         std::max(1.0, r.experts_read), S.c.sms, serving_gemm * e.serving_expert_gemm)
                                : 1.0;
  // KV cache: each decoding sequence reads its context once per step (its verified draft tokens
  // share the read); prefill chunks read the K/V of their prompt's earlier chunks.
  // (A local-attention layer reads only its window or chunk: stage_attended_keys.)
  const double decode_keys = part_keys(m, st, L.decode_parts, L.decode_part_count, L.decode_context, S.w.prompt_len);
  const double decode_kv = S.kv_layer * L.decode_seqs * decode_keys;
  const double prefill_kv = S.kv_layer * n_layers * L.prefill_kv_tokens;
  // Attention FLOPs per key per query token per layer, a/t heads:
  // - decode with MLA as engines run it, weights absorbed (DeepSeek-V2 §2.1.2 "absorb W^UK into W^UQ";
  //   FlashMLA, deepseek-ai/FlashMLA; TensorRT-LLM's MLA generation kernels): every head attends over
  //   the shared latent, Q·Kᵀ over r_kv + d_rope and P·V over r_kv: 2·(r_kv + d_rope) + 2·r_kv;
  // - otherwise (GQA, and MLA's prefill, which decompresses K and V per head): 2·(d_qk + d_v).
  const double heads = m.heads / S.t;
  const double per_key_prefill = 2.0 * heads * (qk_head_dim(m) + v_head_dim_of(m));
  const double per_key_decode = is_mla(m) ? 2.0 * heads * (2.0 * m.kv_lora_rank + m.qk_rope_head_dim) : per_key_prefill;
  const double decode_attn = per_key_decode * L.decode_seqs * L.decode_tokens * decode_keys;
  const double prefill_attn = per_key_prefill * L.prefill_tokens *
                              part_keys(m, st, L.prefill_parts, L.prefill_part_count, L.prefill_context, 0.0);
  // Attention math runs at the attention dtype's peak (S.attention_peak: bf16, or fp8 with an fp8 KV
  // cache), not at the GEMMs' fp8/fp4 peak; decode at serving_attention, prefill at serving_attention
  // shaped by head dimension and key length as flash attention's curves (core/ops.h attention_efficiency).
  const double prefill_key_len = std::max(1.0, 2.0 * L.prefill_context);
  const double decode_rate = S.attention_peak * e.serving_attention;
  const double prefill_rate = S.attention_peak * attention_efficiency(qk_head_dim(m), prefill_key_len, e.serving_attention);
  // Each kernel class is its own roofline (kernels run one after another): the dense projections and
  // the grouped expert GEMM against their weights, decode attention against the KV it reads, prefill
  // attention against the earlier chunks' K/V. The grouped GEMM reads its experts' weights at
  // serving_expert_stream of hbm_stream: each expert a few small matrices, not one long stream
  // (fitted apart, docs/validation.md §8).
  // The dense projections at the weights' peak, the output layer at the bf16 peak (core/precision.h),
  // one roofline against the dense weights.
  const double dense_math_s = (dense_flops > 0 ? dense_flops / (S.peak * dense_eff) : 0.0) +
                              (output_flops > 0 ? output_flops / (S.c.bf16_flops_per_s * dense_eff) : 0.0);
  const double gemm_s = std::max(dense_bytes / hbm_bps, dense_math_s) +
                        (n_moe > 0
                             ? roofline_s(expert_bytes, hbm_bps * e.serving_expert_stream, expert_flops, S.expert_peak * expert_eff)
                             : 0.0);
  const double attn_s = (decode_kv > 0 || decode_attn > 0 ? roofline_s(decode_kv, hbm_bps, decode_attn, decode_rate) : 0.0) +
                        (prefill_kv > 0 || prefill_attn > 0 ? roofline_s(prefill_kv, hbm_bps, prefill_attn, prefill_rate) : 0.0);
  // Memory-bound ops between the GEMMs, one HBM pass each over 16-bit activations (as the engines fuse
  // them): every layer's two residual adds with their RMSNorm (read the residual and the block's
  // output, write the new residual and the normalised input: 4·h values each; TensorRT-LLM's and
  // FlashInfer's fused add-RMSNorm), a dense MLP's activation (gated: read gate and up, write their
  // product, 3·f/t; else 2·f/t) and the shared experts' in an MoE layer; and on the expert side each
  // token copy this GPU's experts take is expanded into its expert's rows (read h, write h), goes
  // through the activation (3·f_e/etp gated) and is reduced back into its token (read h, write h;
  // TensorRT-LLM's CUTLASS MoE expand and finalize kernels). Left out: quantising activations before
  // fp8/fp4 GEMMs, rotary and the K/V append (fused into neighbouring kernels). On the last stage the
  // sampled tokens' logits are written, cast to fp32 and read by the sampler (core/ops.h
  // logits_sampling_bytes).
  const double act = m.gated_mlp ? 3.0 : 2.0, n_dense_layers = n_layers - n_moe;
  const double token_values = n_layers * 8.0 * S.h + n_dense_layers * act * m.ffn_hidden / S.t +
                              n_moe * act * m.shared_experts * m.expert_ffn_hidden / S.t;
  const double copy_values = 4.0 * S.h + act * m.expert_ffn_hidden / double(S.mesh.etp);
  r.elementwise_s = (2.0 * (T * token_values + n_moe * copies * copy_values) + logits_sampling_bytes(m.vocab, sampled)) / hbm_bps;
  r.weights_s = dense_bytes / hbm_bps + expert_bytes / (hbm_bps * e.serving_expert_stream);
  r.kv_s = (decode_kv + prefill_kv) / hbm_bps;
  r.compute_s = std::max(0.0, gemm_s + attn_s - r.weights_s - r.kv_s);  // what the math adds beyond the reads
  // Kernel floors: each kernel of a layer costs at least kernel_floor_s (launch, ramp-up and tail;
  // Gray 2019): CUDA graphs remove the CPU launches, not the ramp-up and tail of each kernel.
  // Kernels per layer, as engines fuse them (TensorRT-LLM's PyTorch decoder layers): 2 norms, QKV
  // projection, rotary + KV-cache append, attention, output projection, gate-up projection,
  // activation, down projection: 9; an MoE layer replaces the last three by router, top-k, permute,
  // two grouped GEMMs, activation and unpermute: 4 more; each TP all-reduce and EP all-to-all one more
  // (counted with their communication below).
  // An MoE layer also costs serving_moe_layer_s beyond the kernels listed: the small ones (routing
  // scores, token counts per expert and their offsets, activation quantization) and, with EP, the
  // exchange of those counts (fitted per GPU family, docs/validation.md §8); the wait for the group's
  // slowest rank is priced apart, below.
  r.floor_s = e.kernel_floor_s * (9.0 * n_layers + 4.0 * n_moe) + e.serving_moe_layer_s * n_moe;
  // Each sequence also costs serving_seq_layer_s in each layer beyond the bytes and FLOPs above: its own
  // attention blocks over its paged KV (block-table walk, split-K reduction, output write), its K/V append
  // and its routing touch a few hundred bytes at scattered addresses, latency- not bandwidth-bound.
  // Fitted per GPU family (docs/validation.md §8): the cases cost more per sequence the more layers a
  // model has (Qwen3-30B-A3B's 48 against gpt-oss-20b's 24, at like active parameters), which neither
  // the host's per-sequence time nor a per-layer time alone gives.
  r.floor_s += e.serving_seq_layer_s * (L.decode_seqs + L.prefill_seqs) * n_layers;
  // The EP group's wait: each MoE layer's exchange starts when the slowest rank of the group arrives,
  // cv·z(n) of a layer's mean GPU time after the mean (expected_max_normal): the stage's MoE layers'
  // share of its GPU time (exchanges and host excluded).
  if (n_moe > 0 && S.ep_wait_z > 0) {
    const double gpu_s = r.weights_s + r.kv_s + r.compute_s + r.floor_s + r.elementwise_s;
    r.ep_wait_s = e.serving_rank_cv * S.ep_wait_z * gpu_s * n_moe / n_layers;
  }
  // Host: the engine's per-request work each step (scheduling, sampling bookkeeping, stop checks,
  // responses), which the data of the serving cases show is not hidden behind the GPU's step: a
  // Grace-hosted GB200 serves small models more slowly than an x86-hosted B200 (docs/validation.md §8;
  // the fit splits the per-sequence cost between this and serving_seq_layer_s above).
  r.host_s = e.host_seq_s * (L.decode_seqs + L.prefill_seqs);
  // Two TP all-reduces per layer of the step's T hidden states, 16-bit (Shoeybi et al. 2019 §3); an
  // EP dispatch (Plan::ep_dispatch_dtype) and a bf16 combine of T·k copies per MoE layer (with the
  // allgather dispatcher, of the group's T tokens once each: core/comm.h ep_exchange_time_s).
  r.tp_s = n_layers * 2.0 * S.tp_allreduce(2.0 * T * S.h) + S.tp_logits_gather(sampled);
  if (n_moe > 0 && T > 0)
    r.ep_s = n_moe *
             (S.ep_exchange(ep_dispatch_bytes_per_value(S.plan.ep_dispatch_dtype) * T * k * S.h) + S.ep_exchange(2.0 * T * k * S.h));
  return r;
}

}  // namespace

namespace {

// The routed experts of one GPU the step's tokens touch: the EP group's tokens are this replica's T
// times the replicas whose tokens reach the group, each routed to top_k experts.
double experts_read(const ServingSetup& S, const StepLoad& load) {
  const ModelSpec& m = S.m;
  if (!is_moe(m)) return 0.0;
  const double E = m.experts;
  return experts_touched(E / S.plan.ep, E, load.tokens() * S.group_replicas * m.top_k);
}

}  // namespace

StepCost step_cost(const ServingSetup& S, const StepLoad& load) {
  StepCost c;
  c.stage_s.reserve(S.pl.stages.size());
  const double read = experts_read(S, load);
  std::array<StageStep, ServingSetup::kMaxStageKinds> of_kind;  // each kind's step, once priced
  std::array<bool, ServingSetup::kMaxStageKinds> priced{};
  for (std::size_t i = 0; i < S.pl.stages.size(); ++i) {
    const StageInfo& st = S.pl.stages[i];
    const int kind = S.stage_kind[i];
    if (kind != ServingSetup::kNoKind && !priced[std::size_t(kind)])
      of_kind[std::size_t(kind)] = stage_step(S, st, S.stage_params[i], read, load), priced[std::size_t(kind)] = true;
    const StageStep s = kind != ServingSetup::kNoKind ? of_kind[std::size_t(kind)] : stage_step(S, st, S.stage_params[i], read, load);
    c.stage_s.push_back(s.total_s());
    c.weights_s += s.weights_s, c.kv_s += s.kv_s, c.compute_s += s.compute_s + s.floor_s + s.elementwise_s, c.tp_s += s.tp_s,
        c.ep_s += s.ep_s, c.ep_wait_s += s.ep_wait_s;
    c.host_s += s.host_s, c.elementwise_s += s.elementwise_s;
    if (st.moe_layers > 0) c.local_experts_read = s.experts_read;
  }
  // The hidden states of the step's tokens, 16-bit, to the next stage.
  c.pp_send_s = S.pp_send(2.0 * load.tokens() * S.h);
  return c;
}

double draft_pass_s(const ServingSetup& S, double decode_seqs, double decode_context) {
  StageInfo head;
  head.layers = 1;
  head.moe_layers = is_moe(S.m) ? 1 : 0;
  head.output = true;
  StepLoad one;
  one.decode_seqs = decode_seqs;
  one.decode_context = decode_context;
  const StageStep d = stage_step(S, head, stage_params(S.m, S.plan, S.mesh, head), experts_read(S, one), one);
  return d.total_s() - d.host_s;  // the host's work is the step's, counted once there
}

double drafts_s(const ServingSetup& S, double decode_seqs, double decode_context) {
  return S.w.spec_draft_tokens > 0 ? S.w.spec_draft_tokens * draft_pass_s(S, decode_seqs, decode_context) : 0.0;
}

}  // namespace cutlab
