#include "core/plan.h"

#include "core/precision.h"
#include "core/schedule.h"
#include "core/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace cutlab {

double mesh_gpus(const Plan& p) { return double(p.tp) * p.cp * p.dp * p.pp * (p.etp > 0 ? 1.0 : p.ep); }

RequestClasses request_classes(const Workload& w) {
  RequestClasses out;
  if (w.length_mix.empty()) out.push_back({w.prompt_len, w.output_len, 1.0});
  double total = 0;
  for (const LengthClass& k : w.length_mix) {
    out.push_back(k);
    total += k.share;
  }
  for (LengthClass& k : out) k.share = total > 0 ? k.share / total : k.share;
  return out;
}

MeanLengths mean_lengths(const Workload& w) {
  MeanLengths m;
  for (const LengthClass& k : request_classes(w)) m.prompt_len += k.share * k.prompt_len, m.output_len += k.share * k.output_len;
  return m;
}

long long longest_context(const Workload& w) {
  long long most = 0;
  for (const LengthClass& k : request_classes(w)) most = std::max(most, static_cast<long long>(k.prompt_len) + k.output_len);
  return most;
}

std::string lengths_text(const Workload& w) {
  if (w.length_mix.empty()) return "prompt " + std::to_string(w.prompt_len) + " · output " + std::to_string(w.output_len);
  std::string out = "lengths";
  for (const LengthClass& k : request_classes(w)) {
    char share[32];
    std::snprintf(share, sizeof share, "%.3g%%", 100.0 * k.share);
    out += (out == "lengths" ? " " : ", ") + std::to_string(k.prompt_len) + "/" + std::to_string(k.output_len) + " " + share;
  }
  return out;
}

long long mesh_without_dp(const Plan& p) { return static_cast<long long>(p.tp) * p.pp * p.cp * (p.etp > 0 ? 1 : p.ep); }

int dp_for_gpus(const Plan& p, long long gpus) {
  const long long rest = mesh_without_dp(p);
  if (rest <= 0 || gpus <= 0 || gpus % rest != 0 || gpus / rest > 2147483647LL) return 0;
  return static_cast<int>(gpus / rest);
}

bool rank_order_axes(const std::string& order, std::array<Axis, 5>& out) {
  std::array<Axis, 5> axes{};
  size_t n = 0, start = 0;
  for (;;) {
    const size_t dash = order.find('-', start);
    const std::string part = order.substr(start, dash == std::string::npos ? std::string::npos : dash - start);
    Axis a{};
    const bool mesh_axis = choice_from_name(part, a) &&
                           (a == Axis::TP || a == Axis::CP || a == Axis::EP || a == Axis::DP || a == Axis::PP);
    if (!mesh_axis || n == axes.size() || std::find(axes.begin(), axes.begin() + n, a) != axes.begin() + n) return false;
    axes[n++] = a;
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  if (n != axes.size()) return false;
  out = axes;
  return true;
}

int effective_zero(const Plan& p) { return std::max(p.zero, p.distributed_optimizer ? 1 : 0); }

MoeLoad moe_load(const Plan& p) {
  const double cf = p.moe_capacity_factor;
  if (!(cf > 0)) return {p.moe_imbalance, 1.0};  // dropless: the hottest rank takes all it is sent
  if (p.moe_pad_to_capacity) return {cf, cf};    // every expert computes (and is sent) its full capacity
  return {std::min(p.moe_imbalance, cf), std::min(1.0, cf)};
}

Mesh derive_mesh(const Plan& p, const Workload& w) {
  // Products in double: absurd axes (rejected by validate()) must not overflow an int on the way.
  // A mesh beyond 2^31 GPUs reads as 0 GPUs.
  auto to_int = [](double v) { return v >= 0 && v <= 2147483647.0 ? static_cast<int>(v) : 0; };
  Mesh mesh;
  const bool folding = p.etp > 0;
  const double gpus = mesh_gpus(p);
  mesh.gpus = to_int(gpus);
  mesh.dp_attn = to_int(folding ? double(p.dp) : double(p.ep) * p.dp);
  mesh.etp = folding ? p.etp : p.tp;
  const double expert_denominator = double(mesh.etp) * p.ep * p.pp;
  mesh.edp = expert_denominator > 0 ? std::max(1, to_int(std::floor(gpus / expert_denominator))) : 1;
  const long long per_step = static_cast<long long>(p.micro_batch) * mesh.dp_attn;
  mesh.num_micro_batches = per_step > 0 ? static_cast<int>(std::max<long long>(1, w.global_batch / per_step)) : 1;
  mesh.zero = effective_zero(p);
  mesh.chunks = p.schedule == Schedule::DualPipe ? 2 : std::max(1, p.vpp);
  return mesh;
}

unsigned recompute_mask(const Plan& plan) {
  unsigned mask = 0;
  if (plan.recompute == Recompute::Selective)
    for (RecomputeModule m : plan.recompute_modules) mask |= module_bit(m);
  return mask;
}

bool recomputes(const Plan& plan, RecomputeModule module) { return (recompute_mask(plan) & module_bit(module)) != 0; }

int pipeline_split_layers(const ModelSpec& m, const Plan& plan) {
  return m.layers + (plan.embedding_in_pipeline_split ? 1 : 0) + (plan.loss_in_pipeline_split ? 1 : 0);
}

namespace {

// `split` layers cut into `parts` even parts, the first (split mod parts) one larger (Megatron-Core
// requires an even cut; validate() rejects the rest), less the embedding's layer in the first part
// and the loss's in the last.
std::vector<int> even_split(const ModelSpec& m, const Plan& plan, int parts) {
  const int n = pipeline_split_layers(m, plan);
  std::vector<int> out(parts);
  for (int i = 0; i < parts; ++i) out[i] = n / parts + (i < n % parts ? 1 : 0);
  if (plan.embedding_in_pipeline_split) out.front() = std::max(0, out.front() - 1);
  if (plan.loss_in_pipeline_split) out.back() = std::max(0, out.back() - 1);
  return out;
}

bool counts_embedding_or_loss(const Plan& plan) { return plan.embedding_in_pipeline_split || plan.loss_in_pipeline_split; }

}  // namespace

std::vector<int> stage_layers(const ModelSpec& m, const Plan& plan) {
  if (!plan.layers_per_stage.empty()) return plan.layers_per_stage;
  const int p = std::max(1, plan.pp), L = m.layers;
  // Megatron-Core (get_num_layers_to_build): layers + embedding + loss divide evenly.
  if (counts_embedding_or_loss(plan)) return even_split(m, plan, p);
  std::vector<int> out(p, L / p);
  // Uneven split: every stage gets ceil(L/p) except the first and last ones, which carry the
  // embedding and the output layer + loss; Llama 3 (arXiv:2407.21783 §3.3.2) removed one layer from
  // each of those (126 layers on 16 stages: 7, 8 × 14, 7).
  int shortfall = p * ((L + p - 1) / p) - L;
  for (int& n : out) n = (L + p - 1) / p;
  for (int i = 0; shortfall > 0 && i < p; ++i) {
    const int stage = (i % 2 == 0) ? i / 2 : p - 1 - i / 2;  // 0, p-1, 1, p-2, ...
    --out[stage];
    --shortfall;
  }
  return out;
}

std::vector<int> virtual_stage_layers(const ModelSpec& m, const Plan& plan) {
  const int p = std::max(1, plan.pp), v = std::max(1, plan.vpp);
  // Megatron-Core: every virtual stage builds (layers + embedding + loss)/(pp·vpp) layers, the
  // first one less the embedding, the last one less the loss.
  if (counts_embedding_or_loss(plan) && plan.layers_per_stage.empty()) return even_split(m, plan, p * v);
  // Otherwise each stage's layers are cut evenly into its v chunks (Narayanan et al. 2021 §2.2).
  const std::vector<int> per_stage = stage_layers(m, plan);
  std::vector<int> out(static_cast<size_t>(p) * v);
  for (int q = 0; q < p; ++q)
    for (int k = 0; k < v; ++k) out[static_cast<size_t>(k) * p + q] = per_stage[q] / v + (k < per_stage[q] % v ? 1 : 0);
  return out;
}

namespace {

struct Checker {
  Errors& errors;
  void add(ErrorCode code, const std::string& path, const std::string& msg) { errors.push_back({code, path, msg}); }
  void positive(const std::string& path, double v) {
    if (!(v > 0)) add(ErrorCode::OutOfRange, path, "must be positive, got " + fmt(v));
  }
  void at_most(const std::string& path, double v, double limit, const char* why) {
    if (v > limit) add(ErrorCode::OutOfRange, path, fmt(v) + " exceeds " + fmt(limit) + " (" + why + ")");
  }
  void fraction(const std::string& path, double v) {
    if (!(v > 0 && v <= 1)) add(ErrorCode::OutOfRange, path, "must be in (0, 1], got " + fmt(v));
  }
  // A quantity held in SI (`v`) and written in the unit `scale` (GiB, GB/s, …): lo ≤ v/scale ≤ hi.
  // The bounds keep every product of the model finite and reject denormals, which would turn a
  // duration into inf deep inside the simulation.
  void between(const std::string& path, double v, double scale, double lo, double hi, const char* unit) {
    if (!(v >= lo * scale && v <= hi * scale))
      add(ErrorCode::OutOfRange, path, "must be between " + fmt(lo) + " and " + fmt(hi) + " " + unit + ", got " + fmt(v / scale));
  }
  void non_negative(const std::string& path, double v) {
    if (!(v >= 0)) add(ErrorCode::OutOfRange, path, "must be ≥ 0, got " + fmt(v));
  }
  static std::string fmt(double v) {
    if (v < 1e15 && v > -1e15 && v == static_cast<double>(static_cast<long long>(v))) return std::to_string(static_cast<long long>(v));
    if (!std::isfinite(v) || std::fabs(v) >= 1e15 || (v != 0 && std::fabs(v) < 1e-4)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", v);  // 1e+308, 4.94066e-324, inf, nan
      return buf;
    }
    std::string s = std::to_string(v);
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
};

// Node-limited routing (DeepSeek-V3 §2.1.2): equal groups of experts, a token's top_k drawn from
// route_group_limit of them, so those groups must hold at least top_k experts.
void validate_routing(const ModelSpec& m, Checker& c) {
  const std::string P = "/model/";
  c.non_negative(P + "route_groups", m.route_groups);
  c.non_negative(P + "route_group_limit", m.route_group_limit);
  if (m.route_groups <= 0 || m.route_group_limit < 0) {
    if (m.route_groups == 0 && m.route_group_limit > 0)
      c.add(ErrorCode::Incompatible, P + "route_group_limit", "route_group_limit is set but route_groups = 0 (unrestricted routing)");
    return;
  }
  if (m.experts % m.route_groups != 0)
    c.add(ErrorCode::Incompatible, P + "route_groups",
          "route_groups = " + c.fmt(m.route_groups) + " does not divide experts = " + c.fmt(m.experts));
  else if (m.route_group_limit > 0 && double(m.route_group_limit) * (m.experts / m.route_groups) < m.top_k)
    c.add(ErrorCode::Incompatible, P + "route_group_limit",
          "route_group_limit = " + c.fmt(m.route_group_limit) + " groups of " + c.fmt(m.experts / m.route_groups) +
              " experts hold fewer than top_k = " + c.fmt(m.top_k));
  if (m.route_group_limit > m.route_groups)
    c.add(ErrorCode::Incompatible, P + "route_group_limit",
          "route_group_limit = " + c.fmt(m.route_group_limit) + " exceeds route_groups = " + c.fmt(m.route_groups));
}

// When counting the embedding and/or the loss as pipeline layers would split the model evenly into
// `pp_chunks` model chunks, a hint naming the plan keys that do it.
std::string split_hint(int layers, long long pp_chunks, const Checker& c) {
  const char* keys = nullptr;
  if ((layers + 2LL) % pp_chunks == 0) keys = "plan.embedding_in_pipeline_split and plan.loss_in_pipeline_split";
  else if ((layers + 1LL) % pp_chunks == 0) keys = "plan.embedding_in_pipeline_split (or plan.loss_in_pipeline_split)";
  if (!keys) return "";
  return "; Megatron-Core counts the embedding and the loss as layers of the split with " + std::string(keys) + " (" + c.fmt(layers) +
         " + " + ((layers + 2LL) % pp_chunks == 0 ? "2" : "1") + " = " + c.fmt(double(pp_chunks)) + " × " +
         c.fmt(double(((layers + 2LL) % pp_chunks == 0 ? layers + 2LL : layers + 1LL) / pp_chunks)) + ")";
}

void validate_model(const ModelSpec& m, Checker& c) {
  const std::string P = "/model/";
  c.positive(P + "layers", m.layers);
  c.at_most(P + "layers", m.layers, 10000, "no published model is that deep");
  c.positive(P + "hidden", m.hidden);
  c.at_most(P + "hidden", m.hidden, 1 << 20, "absurd width");
  c.positive(P + "heads", m.heads);
  c.positive(P + "kv_heads", m.kv_heads);
  c.positive(P + "head_dim", m.head_dim);
  c.positive(P + "vocab", m.vocab);
  c.at_most(P + "vocab", m.vocab, 1 << 24, "absurd vocabulary");
  if (m.heads > 0 && m.kv_heads > 0 && m.heads % m.kv_heads != 0)
    c.add(ErrorCode::Incompatible, P + "kv_heads", "kv_heads = " + c.fmt(m.kv_heads) + " must divide heads = " + c.fmt(m.heads));
  if (m.kv_heads > m.heads)
    c.add(ErrorCode::Incompatible, P + "kv_heads", "kv_heads = " + c.fmt(m.kv_heads) + " exceeds heads = " + c.fmt(m.heads));
  if (dense_layer_count(m) > 0) c.positive(P + "ffn_hidden", m.ffn_hidden);
  c.non_negative(P + "experts", m.experts);  // 0: a dense model
  if (m.experts > 0) {
    c.positive(P + "top_k", m.top_k);
    if (m.top_k > m.experts)
      c.add(ErrorCode::Incompatible, P + "top_k", "top_k = " + c.fmt(m.top_k) + " exceeds experts = " + c.fmt(m.experts));
    c.positive(P + "expert_ffn_hidden", m.expert_ffn_hidden);
    c.non_negative(P + "shared_experts", m.shared_experts);
    c.between(P + "dense_layers", m.dense_layers, 1, 0, m.layers, "(the model's layers)");
    c.between(P + "moe_layer_step", m.moe_layer_step, 1, 1, std::max(1, m.layers), "(the model's layers)");
    validate_routing(m, c);
  } else {
    if (m.moe_layer_step != 1)
      c.add(ErrorCode::Incompatible, P + "moe_layer_step", "moe_layer_step is set but experts = 0 (a dense model)");
    for (auto [key, v] : {std::pair{"top_k", m.top_k},
                          {"shared_experts", m.shared_experts},
                          {"expert_ffn_hidden", m.expert_ffn_hidden},
                          {"dense_layers", m.dense_layers},
                          {"route_groups", m.route_groups},
                          {"route_group_limit", m.route_group_limit}})
      if (v != 0) c.add(ErrorCode::Incompatible, P + key, std::string(key) + " is set but experts = 0 (a dense model)");
  }
  if (m.kv_lora_rank < 0 || m.q_lora_rank < 0 || m.qk_rope_head_dim < 0 || m.v_head_dim < 0)
    c.add(ErrorCode::OutOfRange, P + "kv_lora_rank", "MLA ranks and head dims must be ≥ 0");
  c.non_negative(P + "attention_window", m.attention_window);
  c.non_negative(P + "global_attention_every", m.global_attention_every);
  if (m.attention_window == 0 && (m.attention_chunked || m.global_attention_every != 0))
    c.add(ErrorCode::Incompatible, m.attention_chunked ? P + "attention_chunked" : P + "global_attention_every",
          "local attention needs attention_window > 0 (the window or chunk in tokens)");
  if (m.kv_lora_rank == 0 && (m.q_lora_rank > 0 || m.qk_rope_head_dim > 0))
    c.add(ErrorCode::Incompatible, P + "kv_lora_rank", "MLA fields are set but kv_lora_rank = 0");
  c.between(P + "mtp_layers", m.mtp_layers, 1, 0, 16, "(DeepSeek-V3 trains with 1)");
}

void validate_cluster(const Cluster& cl, Checker& c) {
  const std::string P = "/cluster/";
  c.positive(P + "gpus_per_node", cl.gpus_per_node);
  c.at_most(P + "gpus_per_node", cl.gpus_per_node, 576, "largest NVLink domain built is 576 GPUs");
  bool printable = !cl.node_link.empty() && cl.node_link.size() <= 24;
  for (unsigned char ch : cl.node_link) printable = printable && ch >= 0x20 && ch != 0x7f;
  if (!printable) c.add(ErrorCode::OutOfRange, P + "node_link", "must be 1 to 24 bytes, no control character");
  c.non_negative(P + "sms", cl.sms);
  c.at_most(P + "sms", cl.sms, 1024, "no GPU has more than 1,024 streaming multiprocessors");
  // Documented ranges (README, "Input ranges"): wide enough for any accelerator, narrow enough
  // that no product overflows and no denormal divides.
  c.between(P + "hbm_GiB", cl.hbm_bytes, units::GiB, 1e-3, 1e6, "GiB");
  c.between(P + "hbm_GBps", cl.hbm_bytes_per_s, units::GBps, 1e-3, 1e7, "GB/s");
  c.between(P + "bf16_TFLOPs", cl.bf16_flops_per_s, units::TFLOPs, 1e-3, 1e7, "TFLOP/s");
  if (cl.fp8_flops_per_s != 0) c.between(P + "fp8_TFLOPs", cl.fp8_flops_per_s, units::TFLOPs, 1e-3, 1e7, "TFLOP/s (or 0: none)");
  if (cl.fp4_flops_per_s != 0) c.between(P + "fp4_TFLOPs", cl.fp4_flops_per_s, units::TFLOPs, 1e-3, 1e7, "TFLOP/s (or 0: none)");
  c.between(P + "nvlink_GBps", cl.nvlink_bytes_per_s, units::GBps, 1e-3, 1e7, "GB/s");
  c.between(P + "scaleout_GBps", cl.scaleout_bytes_per_s, units::GBps, 1e-3, 1e7, "GB/s");
  c.between(P + "nvlink_latency_us", cl.nvlink_latency_s, units::us, 0, 1e6, "µs");
  c.between(P + "scaleout_latency_us", cl.scaleout_latency_s, units::us, 0, 1e6, "µs");
  c.between(P + "reserved_GiB", cl.reserved_bytes, units::GiB, 0, 1e6, "GiB");
  c.between(P + "host_link_GBps", cl.host_link_bytes_per_s, units::GBps, 0, 1e7, "GB/s (or 0: none)");
  c.between(P + "allocator_fragmentation", cl.allocator_fragmentation, 1, 0, 1, "(a fraction of the allocated bytes)");
  if (cl.reserved_bytes >= cl.hbm_bytes && cl.hbm_bytes >= 1e-3 * units::GiB && cl.reserved_bytes <= 1e6 * units::GiB)
    c.add(ErrorCode::Incompatible, P + "reserved_GiB", "reserved memory must be smaller than hbm_GiB");
  c.non_negative(P + "gpus", cl.gpus);  // 0: from the plan
  c.fraction(P + "gemm_sustained", cl.gemm_sustained);
  const std::string E = P + "efficiency/";
  const Efficiencies& e = cl.efficiency;
  c.fraction(E + "gemm", e.gemm);
  c.fraction(E + "gemm_fp8", e.gemm_fp8);
  c.between(E + "gemm_half_balance", e.gemm_half_balance, 1, 0, 100, "multiples of the GPU's machine balance");
  c.fraction(E + "attention", e.attention);
  c.fraction(E + "hbm", e.hbm);
  c.fraction(E + "hbm_stream", e.hbm_stream);
  c.fraction(E + "nvlink", e.nvlink);
  c.fraction(E + "scaleout", e.scaleout);
  c.between(E + "overlap", e.overlap, 1, 0, 1, "(a fraction of the window)");
  c.fraction(E + "host_link", e.host_link);
  c.between(E + "kernel_floor_us", e.kernel_floor_s, units::us, 0, 1000, "µs");
  c.between(E + "deepep_sm_GBps", e.deepep_sm_bytes_per_s, units::GBps, 0.1, 1000, "GB/s per SM");
  c.between(E + "expert_gemm_host_us", e.expert_gemm_host_s, units::us, 0, 1000, "µs");
  c.fraction(E + "serving_gemm", e.serving_gemm);
  c.fraction(E + "serving_expert_gemm", e.serving_expert_gemm);
  c.fraction(E + "serving_expert_stream", e.serving_expert_stream);
  c.fraction(E + "serving_attention", e.serving_attention);
  c.between(E + "host_seq_us", e.host_seq_s, units::us, 0, 10000, "µs");
  c.between(E + "serving_seq_layer_us", e.serving_seq_layer_s, units::us, 0, 1000, "µs");
  c.between(E + "serving_moe_layer_us", e.serving_moe_layer_s, units::us, 0, 10000, "µs");
  c.between(E + "serving_rank_cv", e.serving_rank_cv, 1, 0, 1, "(a coefficient of variation)");
}

// Every axis in [1, 2^20] (etp ≥ 0); false when one is not, so the rules below are meaningless.
bool validate_axes(const Plan& p, Checker& c) {
  const std::string P = "/plan/";
  bool axes_ok = true;
  for (auto [key, v] : {std::pair{"tp", p.tp},
                        {"pp", p.pp},
                        {"cp", p.cp},
                        {"ep", p.ep},
                        {"dp", p.dp},
                        {"vpp", p.vpp},
                        {"micro_batch", p.micro_batch}}) {
    if (v < 1) {
      c.add(ErrorCode::OutOfRange, P + key, std::string(key) + " must be ≥ 1, got " + c.fmt(v));
      axes_ok = false;
    }
    if (v > (1 << 20)) {
      c.add(ErrorCode::OutOfRange, P + key, std::string(key) + " = " + c.fmt(v) + " is absurd (more than 2^20)");
      axes_ok = false;
    }
  }
  if (p.etp < 0) {
    c.add(ErrorCode::OutOfRange, P + "etp", "etp must be ≥ 1 (or absent: experts use tp)");
    axes_ok = false;
  }
  return axes_ok;
}

// The routing load of an MoE model (Plan::moe_capacity_factor, moe_pad_to_capacity, moe_imbalance,
// moe_shared_expert_overlap): training only.
void validate_moe_load(const ModelSpec& m, const Plan& p, const Workload& w, Checker& c) {
  const std::string P = "/plan/";
  if (w.mode == Mode::Infer) {
    const Plan d;
    for (const auto& [key, set] : {std::pair{"moe_capacity_factor", p.moe_capacity_factor != d.moe_capacity_factor},
                                   {"moe_pad_to_capacity", p.moe_pad_to_capacity},
                                   {"moe_imbalance", p.moe_imbalance != d.moe_imbalance},
                                   {"moe_shared_expert_overlap", p.moe_shared_expert_overlap}})
      if (set) c.add(ErrorCode::Incompatible, P + key, std::string(key) + " is modelled for training only; leave it out to serve");
    return;
  }
  const double k = m.top_k, E = m.experts;
  c.non_negative(P + "moe_capacity_factor", p.moe_capacity_factor);
  // An expert receives at most every token once: capacity cf·T·k/E ≤ T.
  if (k > 0 && p.moe_capacity_factor > E / k)
    c.add(ErrorCode::OutOfRange, P + "moe_capacity_factor",
          c.fmt(p.moe_capacity_factor) + " exceeds experts / top_k = " + c.fmt(E / k) +
              ": a capacity above every token routed cannot fill (0 means dropless)");
  // Megatron-Core (transformer_config.py): padding to capacity needs a capacity factor.
  if (p.moe_pad_to_capacity && !(p.moe_capacity_factor > 0))
    c.add(ErrorCode::Incompatible, P + "moe_pad_to_capacity",
          "padding to capacity needs moe_capacity_factor > 0 (Megatron-Core refuses moe_pad_expert_input_to_capacity without "
          "moe_expert_capacity_factor)");
  if (!(p.moe_imbalance >= 1)) {
    c.add(ErrorCode::OutOfRange, P + "moe_imbalance",
          "must be ≥ 1 (the hottest EP rank's tokens over the mean; 1 is balanced), got " + c.fmt(p.moe_imbalance));
  } else if (p.ep >= 1 && k > 0 && E > 0) {
    // The hottest rank receives at most min(top_k, local experts) copies of every token: ep ·
    // min(k, E/ep)/k times the mean (1 with ep = 1: one rank holds every expert).
    const double most = p.ep * std::min(k, E / p.ep) / k;
    if (p.moe_imbalance > most)
      c.add(ErrorCode::OutOfRange, P + "moe_imbalance",
            c.fmt(p.moe_imbalance) + " exceeds " + c.fmt(most) + ", the load of an EP rank that every token sends min(top_k, " +
                "experts/ep) copies to (ep = " + c.fmt(p.ep) + ")");
  }
  if (p.moe_shared_expert_overlap && m.shared_experts <= 0)
    c.add(ErrorCode::Incompatible, P + "moe_shared_expert_overlap", "the model has no shared expert to overlap with the all-to-alls");
}

// The mesh covers the cluster; TP splits heads, KV heads and the MLP evenly; EP splits the experts.
void validate_cuts(const ModelSpec& m, const Cluster& cl, const Plan& p, const Workload& w, const Mesh& mesh, Checker& c) {
  const std::string P = "/plan/";
  const double product = mesh_gpus(p);
  if (product > 1e7) c.add(ErrorCode::OutOfRange, P + "dp", "the mesh has " + c.fmt(product) + " GPUs, more than 10^7");
  if (cl.gpus > 0 && product != cl.gpus) {
    const std::string eq = p.etp > 0 ? "tp × cp × dp × pp = " : "tp × pp × cp × ep × dp = ";
    c.add(ErrorCode::Incompatible, "/cluster/gpus", "cluster.gpus = " + c.fmt(cl.gpus) + " but " + eq + c.fmt(product));
  }
  // Tensor parallel: heads split evenly; KV heads split, or replicated when tp is a multiple of them.
  if (m.heads > 0 && m.heads % p.tp != 0)
    c.add(ErrorCode::Incompatible, P + "tp", "tp = " + c.fmt(p.tp) + " does not divide heads = " + c.fmt(m.heads));
  if (m.kv_heads > 0 && m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
    c.add(ErrorCode::Incompatible, P + "tp",
          "tp = " + c.fmt(p.tp) + " neither divides kv_heads = " + c.fmt(m.kv_heads) + " nor is a multiple of it");
  if (dense_layer_count(m) > 0 && m.ffn_hidden > 0 && m.ffn_hidden % p.tp != 0)
    c.add(ErrorCode::Incompatible, P + "tp", "tp = " + c.fmt(p.tp) + " does not divide ffn_hidden = " + c.fmt(m.ffn_hidden));
  if (p.sp && p.tp == 1) c.add(ErrorCode::Incompatible, P + "sp", "sequence parallel splits along the TP group; it needs tp > 1");
  c.between(P + "tp_comm_overlap_sms", p.tp_comm_overlap_sms, 1, 0, cl.sms > 0 ? cl.sms - 1 : 1024, "SMs (fewer than the GPU's)");
  // Experts.
  if (!is_moe(m)) {
    if (p.ep > 1) c.add(ErrorCode::Incompatible, P + "ep", "ep = " + c.fmt(p.ep) + " but the model has no experts");
    if (p.etp > 0) c.add(ErrorCode::Incompatible, P + "etp", "etp is set but the model has no experts");
    const Plan d;
    if (p.moe_capacity_factor != d.moe_capacity_factor)
      c.add(ErrorCode::Incompatible, P + "moe_capacity_factor", "moe_capacity_factor is set but the model has no experts");
    if (p.moe_pad_to_capacity) c.add(ErrorCode::Incompatible, P + "moe_pad_to_capacity", "the model has no experts to pad");
    if (p.moe_imbalance != d.moe_imbalance)
      c.add(ErrorCode::Incompatible, P + "moe_imbalance", "moe_imbalance is set but the model has no experts");
    if (p.moe_shared_expert_overlap)
      c.add(ErrorCode::Incompatible, P + "moe_shared_expert_overlap", "the model has no experts (and no shared expert)");
  } else {
    // Megatron-LM (training/arguments.py): "When using expert parallelism and tensor parallelism,
    // sequence parallelism must be used."
    if (w.mode == Mode::Train && p.ep > 1 && p.tp > 1 && !p.sp)
      c.add(ErrorCode::Incompatible, P + "sp", "expert parallel with tp > 1 needs sequence parallel (Megatron-LM refuses it without)");
    if (m.experts % p.ep != 0)
      c.add(ErrorCode::Incompatible, P + "ep", "ep = " + c.fmt(p.ep) + " does not divide experts = " + c.fmt(m.experts));
    if (m.expert_ffn_hidden > 0 && m.expert_ffn_hidden % mesh.etp != 0)
      c.add(ErrorCode::Incompatible, P + (p.etp > 0 ? "etp" : "tp"),
            "expert tensor parallel " + c.fmt(mesh.etp) + " does not divide expert_ffn_hidden = " + c.fmt(m.expert_ffn_hidden));
    validate_moe_load(m, p, w, c);
    std::array<Axis, 5> order{};
    if (p.etp > 0 && rank_order_axes(p.rank_order, order) && order.back() != Axis::PP)
      c.add(ErrorCode::Incompatible, P + "rank_order",
            "MoE Parallel Folding lays out both meshes inside a stage: pp must be last (outermost)");
    if (p.etp > 0) {
      const long long per_stage = static_cast<long long>(mesh.gpus) / p.pp;
      if (per_stage % (static_cast<long long>(p.etp) * p.ep) != 0)
        c.add(ErrorCode::Incompatible, P + "ep",
              "folding: etp × ep = " + c.fmt(double(p.etp) * p.ep) +
                  " must divide the GPUs of a stage, tp × cp × dp = " + c.fmt(double(per_stage)));
    }
  }
}

// Pipeline stages, chunks, the schedule's rules, the batch split and what each mode allows.
void validate_pipeline(const ModelSpec& m, const Plan& p, const Workload& w, const Mesh& mesh, Checker& c) {
  const std::string P = "/plan/";
  const int chunks = p.vpp;
  const long long pp_chunks = static_cast<long long>(p.pp) * chunks;
  const bool counted = p.embedding_in_pipeline_split || p.loss_in_pipeline_split;
  if (!counted && p.pp > m.layers && m.layers > 0)
    c.add(ErrorCode::Incompatible, P + "pp",
          "pp = " + c.fmt(p.pp) + " exceeds layers = " + c.fmt(m.layers) + split_hint(m.layers, pp_chunks, c));
  // Batch: global batch = micro batch × micro-batches × data-parallel replicas.
  const long long per_step = static_cast<long long>(p.micro_batch) * mesh.dp_attn;
  const long long micro_batches = w.mode == Mode::Train && w.global_batch > 0 && per_step > 0 ? w.global_batch / per_step : 0;
  for (Error& e : schedule_rules(p.schedule, p.pp, p.vpp, micro_batches)) c.errors.push_back(std::move(e));
  if (!counted && pp_chunks > m.layers && m.layers > 0 && p.pp <= m.layers)
    c.add(ErrorCode::Incompatible, P + "vpp",
          "pp × chunks = " + c.fmt(double(pp_chunks)) + " model chunks exceed layers = " + c.fmt(m.layers) +
              split_hint(m.layers, pp_chunks, c));
  if (counted && m.layers > 0) {
    // Megatron-Core (transformer_config.py __post_init__; transformer_block.py
    // get_num_layers_to_build): with the embedding and/or the loss counted as layers, layers + those
    // must divide evenly by pp (by pp × vpp when interleaved); uneven first and last stages
    // (num_layers_in_first/last_pipeline_stage, here layers_per_stage) cannot be combined with them.
    const int n = pipeline_split_layers(m, p);
    if (n % pp_chunks != 0) {
      std::string sum = c.fmt(m.layers);
      if (p.embedding_in_pipeline_split) sum += " + 1 (embedding)";
      if (p.loss_in_pipeline_split) sum += " + 1 (loss)";
      c.add(ErrorCode::Incompatible, P + (chunks > 1 ? "vpp" : "pp"),
            "layers " + sum + " = " + c.fmt(n) + " must divide evenly into pp × vpp = " + c.fmt(double(pp_chunks)) +
                " model chunks (Megatron-Core's rule with the embedding or loss in the pipeline split)");
    }
    if (!p.layers_per_stage.empty())
      c.add(ErrorCode::Incompatible, P + "layers_per_stage",
            "layers_per_stage cannot be combined with embedding_in_pipeline_split or loss_in_pipeline_split (Megatron-Core "
            "refuses num_layers_in_first/last_pipeline_stage with account_for_embedding/loss_in_pipeline_split)");
  }
  if (!p.layers_per_stage.empty()) {
    if (static_cast<int>(p.layers_per_stage.size()) != p.pp)
      c.add(ErrorCode::Incompatible, P + "layers_per_stage",
            "has " + c.fmt(double(p.layers_per_stage.size())) + " entries but pp = " + c.fmt(p.pp));
    long long sum = 0;
    for (size_t i = 0; i < p.layers_per_stage.size(); ++i) {
      sum += p.layers_per_stage[i];
      if (p.layers_per_stage[i] < chunks)
        c.add(ErrorCode::OutOfRange, P + "layers_per_stage/" + std::to_string(i),
              "a stage needs at least " + c.fmt(chunks) + " layer(s), got " + c.fmt(p.layers_per_stage[i]));
    }
    if (sum != m.layers)
      c.add(ErrorCode::Incompatible, P + "layers_per_stage",
            "sums to " + c.fmt(double(sum)) + " but the model has " + c.fmt(m.layers) + " layers");
  }
  // Activation offload: a count of each stage's layers (Megatron-Core requires
  // 0 ≤ cpu_offloading_num_layers < num_layers and refuses it with pipeline parallelism,
  // TransformerConfig: "no support for Pipeline parallelism with CPU offloading"), over a host link
  // the cluster gives.
  c.non_negative(P + "activation_offload_layers", p.activation_offload_layers);
  if (p.activation_offload_layers > 0) {
    if (w.mode == Mode::Infer)
      c.add(ErrorCode::Incompatible, P + "activation_offload_layers", "activation offload is modelled for training only");
    if (p.pp > 1)
      c.add(ErrorCode::Incompatible, P + "activation_offload_layers",
            "Megatron-Core's CPU offloading does not run with pipeline parallelism (pp = " + c.fmt(p.pp) + ")");
    const std::vector<int> per_stage = stage_layers(m, p);
    int fewest = m.layers;
    for (int n : per_stage) fewest = std::min(fewest, n);
    if (p.activation_offload_layers > fewest)
      c.add(ErrorCode::OutOfRange, P + "activation_offload_layers",
            c.fmt(p.activation_offload_layers) + " layers to offload, but a stage holds only " + c.fmt(fewest) +
                " (the count is per pipeline stage)");
  }
  if (w.mode == Mode::Infer && p.cp > 1)
    c.add(ErrorCode::Incompatible, P + "cp", "context parallel is modelled for training only; use cp = 1 to serve");
  if (w.mode == Mode::Train) {
    // Context parallel: the load-balanced causal split gives each rank 2 chunks of s/(2·cp).
    if (p.cp > 1 && w.seq_len > 0 && w.seq_len % (2 * p.cp) != 0)
      c.add(ErrorCode::Incompatible, P + "cp", "seq_len = " + c.fmt(w.seq_len) + " is not divisible by 2 × cp = " + c.fmt(2.0 * p.cp));
    // Ulysses splits each TP rank's heads over the CP group: Transformer Engine's
    // AttnFuncWithCPAndQKVOA2A requires the query and the key/value heads divisible by the CP size
    // ("The number of attention heads needs to be divisible by CP size!"). MLA's K and V are per query head.
    if (p.cp > 1 && p.cp_comm == CpComm::AllToAll && m.heads > 0 && p.tp > 0) {
      const long long split = static_cast<long long>(p.tp) * p.cp;
      if (m.heads % split != 0)
        c.add(ErrorCode::Incompatible, P + "cp_comm",
              "a2a (Ulysses) splits heads over tp × cp = " + c.fmt(double(split)) +
                  ", which does not divide heads = " + c.fmt(m.heads));
      else if (!is_mla(m) && m.kv_heads > 0 && m.kv_heads % split != 0)
        c.add(ErrorCode::Incompatible, P + "cp_comm",
              "a2a (Ulysses) splits KV heads over tp × cp = " + c.fmt(double(split)) +
                  ", which does not divide kv_heads = " + c.fmt(m.kv_heads) + " (use ring or allgather)");
    }
    if (w.global_batch > 0 && w.global_batch % per_step != 0)
      c.add(ErrorCode::Incompatible, "/workload/global_batch",
            "global_batch = " + c.fmt(w.global_batch) +
                " is not a multiple of micro_batch × data-parallel replicas = " + c.fmt(p.micro_batch) + " × " + c.fmt(mesh.dp_attn));
  }
}

void validate_plan(const ModelSpec& m, const Cluster& cl, const Plan& p, const Workload& w, const Mesh& mesh, Checker& c) {
  const std::string P = "/plan/";
  if (!validate_axes(p, c)) return;
  validate_cuts(m, cl, p, w, mesh, c);
  validate_pipeline(m, p, w, mesh, c);
  if (p.zero < 0 || p.zero > 3) c.add(ErrorCode::OutOfRange, P + "zero", "must be 0, 1, 2, 3 or \"fsdp\"");
  // ZeRO-2/3 with pipeline parallelism. DeepSpeed's PipelineEngine refuses it
  // (deepspeed/runtime/pipe/engine.py: assert zero_optimization_stage() < ZeroStageEnum.gradients,
  // "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"). torchtitan does compose FSDP2
  // with PP, but then keeps each stage's parameters unsharded from a micro-batch's forward to its
  // backward (torchtitan parallelize apply_fsdp: reshard_after_forward False when PP is enabled,
  // "to avoid per-microbatch all-gathers"): another memory and traffic profile than the ZeRO-3
  // cutlab prices (gathered before every forward and every backward, one layer unsharded at a
  // time), so it is an error here rather than a different model under the same name. Megatron's
  // distributed optimizer (ZeRO-1) runs with PP.
  if (w.mode == Mode::Train && (p.zero == 2 || p.zero == 3) && p.pp > 1)
    c.add(ErrorCode::Incompatible, P + "zero",
          "zero = " + c.fmt(p.zero) + " with pp = " + c.fmt(p.pp) +
              ": DeepSpeed refuses ZeRO-2 and ZeRO-3 with pipeline parallelism (\"ZeRO-2 and ZeRO-3 are incompatible with "
              "pipeline parallelism\", deepspeed/runtime/pipe/engine.py), and torchtitan's FSDP with PP keeps each stage's "
              "weights unsharded between forward and backward, which cutlab does not model; use zero ≤ 1 (or "
              "distributed_optimizer) with pp > 1");
  if (p.recompute == Recompute::OpSac && (is_moe(m) || is_mla(m)))
    c.add(ErrorCode::Incompatible, P + "recompute",
          "op_sac (torchtitan's per-op checkpointing of a dense layer's matmuls) is defined for dense, non-MLA models");
  // Megatron-Core reads recompute_modules only with recompute_granularity "selective"; a module the
  // model does not have (mla_up_proj without MLA, moe without experts) re-runs nothing.
  if (p.recompute == Recompute::Selective && p.recompute_modules.empty())
    c.add(ErrorCode::OutOfRange, P + "recompute_modules",
          "recompute selective needs at least one module (Megatron's default: core_attn)");
  if (p.recompute != Recompute::Selective && p.recompute_modules != std::vector<RecomputeModule>{RecomputeModule::CoreAttn})
    c.add(ErrorCode::Incompatible, P + "recompute_modules",
          std::string("are read with recompute \"selective\" only (recompute is \"") + name_of(p.recompute) + "\")");
  // Rank order: a permutation of the five axes.
  std::array<Axis, 5> order{};
  if (!rank_order_axes(p.rank_order, order))
    c.add(ErrorCode::OutOfRange, P + "rank_order",
          "'" + p.rank_order + "' must order all of tp, cp, ep, dp, pp, innermost first (e.g. tp-cp-ep-dp-pp)");
}

// Mixed lengths: at most kMaxLengthClasses classes, each a positive length pair with a positive
// share, served by in-flight batching as a stream or an offline run of num_requests (a static batch
// has one length). A class that breaks a rule is named whole.
void validate_length_mix(const Workload& w, Checker& c) {
  const std::string P = "/workload/length_mix";
  if (w.length_mix.overflow) c.add(ErrorCode::OutOfRange, P, "more than 8 classes");
  if (!w.length_mix.empty() && w.batching == Batching::Static)
    c.add(ErrorCode::Incompatible, P, "a mix is served by in-flight batching: batching \"inflight\"");
  for (std::size_t i = 0; i < w.length_mix.size(); ++i) {
    const LengthClass& k = w.length_mix[i];
    if (!(k.prompt_len > 0 && k.output_len > 0 && double(k.prompt_len) + k.output_len <= 1 << 24 && k.share > 0 && k.share <= 1e9))
      c.add(ErrorCode::OutOfRange, P + "/" + std::to_string(i), "needs lengths ≥ 1, together ≤ 16M tokens, and a share in (0, 1e9]");
  }
}

void validate_workload(const Workload& w, Checker& c) {
  const std::string P = "/workload/";
  if (w.mode == Mode::Infer) {
    c.positive(P + "batch", w.batch);
    c.at_most(P + "batch", w.batch, 1 << 20, "more than a million concurrent sequences");
    c.positive(P + "prompt_len", w.prompt_len);
    c.positive(P + "output_len", w.output_len);
    // the longer of the two is the one to shorten
    c.at_most(P + (w.output_len > w.prompt_len ? "output_len" : "prompt_len"), double(w.prompt_len) + w.output_len, 1 << 24,
              "prompt_len + output_len: context longer than 16M tokens");
    c.positive(P + "max_num_tokens", w.max_num_tokens);
    c.at_most(P + "max_num_tokens", w.max_num_tokens, 1 << 24, "more than 16M tokens in one engine step");
    c.positive(P + "kv_block_tokens", w.kv_block_tokens);
    c.at_most(P + "kv_block_tokens", w.kv_block_tokens, 1 << 16, "KV blocks of more than 65,536 tokens");
    c.fraction(P + "kv_cache_free_fraction", w.kv_cache_free_fraction);
    c.non_negative(P + "request_rate_per_s", w.request_rate_per_s);
    c.at_most(P + "request_rate_per_s", w.request_rate_per_s, 1e9, "more than a billion requests per second");
    c.non_negative(P + "num_requests", w.num_requests);
    c.at_most(P + "num_requests", w.num_requests, 1e9, "more than a billion requests in one run");
    if (w.num_requests > 0 && w.request_rate_per_s > 0)
      c.add(ErrorCode::Incompatible, P + "num_requests",
            "a fixed number of requests is an offline run (every request queued at the start): leave request_rate_per_s at 0");
    if (w.num_requests > 0 && w.batching == Batching::Static)
      c.add(ErrorCode::Incompatible, P + "num_requests", "an offline run of num_requests is modelled with batching \"inflight\"");
    c.non_negative(P + "spec_draft_tokens", w.spec_draft_tokens);
    c.at_most(P + "spec_draft_tokens", w.spec_draft_tokens, 64, "more than 64 draft tokens per step");
    if (!(w.spec_acceptance >= 0 && w.spec_acceptance <= 1))
      c.add(ErrorCode::OutOfRange, P + "spec_acceptance", "is a probability, between 0 and 1; got " + c.fmt(w.spec_acceptance));
    else if (w.spec_draft_tokens == 0 && w.spec_acceptance != Workload{}.spec_acceptance)
      c.add(ErrorCode::Incompatible, P + "spec_acceptance", "is read only with spec_draft_tokens ≥ 1 (speculative decoding)");
    // In-flight batching runs every step under the token budget: a step must hold at least the
    // decode tokens of one sequence (1 + drafts verified).
    if (w.batching == Batching::InFlight && w.max_num_tokens > 0 && w.max_num_tokens < 1 + w.spec_draft_tokens)
      c.add(ErrorCode::OutOfRange, P + "max_num_tokens",
            "must hold one sequence's step, 1 + spec_draft_tokens = " + c.fmt(1.0 + w.spec_draft_tokens) + " tokens");
    if (w.batching == Batching::Static && w.request_rate_per_s > 0)
      c.add(ErrorCode::Incompatible, P + "request_rate_per_s",
            "an arrival rate is read with batching \"inflight\"; a static batch serves `batch` sequences at once");
    validate_length_mix(w, c);
    return;
  }
  c.positive(P + "seq_len", w.seq_len);
  c.at_most(P + "seq_len", w.seq_len, 1 << 24, "longer than 16M tokens");
  c.positive(P + "global_batch", w.global_batch);
}

Errors validate_all(const ModelSpec& m, const Cluster& cl, const Plan& p, const Workload& w, const Mesh& mesh) {
  Errors errors;
  Checker c{errors};
  validate_model(m, c);
  validate_cluster(cl, c);
  validate_workload(w, c);
  if (w.mode == Mode::Infer && w.expert_weight_dtype != ExpertWeightDtype::Same && !(m.experts > 0))
    c.add(ErrorCode::Incompatible, "/workload/expert_weight_dtype", "the model has no routed experts: leave it \"same\"");
  validate_plan(m, cl, p, w, mesh, c);
  if (p.activation_offload_layers > 0 && !(cl.host_link_bytes_per_s > 0))
    c.add(ErrorCode::Incompatible, "/cluster/host_link_GBps",
          "plan.activation_offload_layers = " + c.fmt(p.activation_offload_layers) +
              " copies activations to host memory: the cluster needs host_link_GBps > 0 (PCIe Gen5 x16: 64)");
  if (w.dtype == Dtype::FP8 && !(cl.fp8_flops_per_s > 0))
    c.add(ErrorCode::Incompatible, "/workload/dtype", "dtype fp8 but the GPU has no fp8 peak (fp8_TFLOPs = 0)");
  // fp8 dispatch quantises the tokens for the experts' fp8 GEMMs (DeepSeek-V3 §3.3.2): only in fp8 training.
  // Serving: the experts' GEMMs run in fp8 with fp8 weights.
  if (w.mode == Mode::Infer && p.ep_dispatch_dtype == EpDispatchDtype::FP8 && w.weight_dtype != WeightDtype::FP8)
    c.add(ErrorCode::Incompatible, "/plan/ep_dispatch_dtype",
          "ep_dispatch_dtype fp8 feeds the experts' fp8 GEMMs: serving needs workload.weight_dtype fp8, got " +
              std::string(name_of(w.weight_dtype)));
  if (p.ep_dispatch_dtype == EpDispatchDtype::FP4 &&
      (w.mode == Mode::Train || !(cl.fp4_flops_per_s > 0) || serving_expert_gemm_peak_flops_per_s(cl, w) != cl.fp4_flops_per_s))
    c.add(ErrorCode::Incompatible, "/plan/ep_dispatch_dtype",
          "ep_dispatch_dtype fp4 feeds the experts' fp4 GEMMs: it needs serving (workload.mode infer) with the routed experts in "
          "fp4 or mxfp4 on a GPU with an fp4 peak (cluster.fp4_TFLOPs > 0)");
  if (w.mode == Mode::Train && p.ep_dispatch_dtype == EpDispatchDtype::FP8 && w.dtype != Dtype::FP8)
    c.add(ErrorCode::Incompatible, "/plan/ep_dispatch_dtype",
          "ep_dispatch_dtype fp8 feeds the experts' fp8 GEMMs: it needs workload.dtype fp8, got " + std::string(name_of(w.dtype)));
  return errors;
}

}  // namespace

Errors validate(const ModelSpec& m, const Cluster& cl, const Plan& p, const Workload& w) {
  return validate_all(m, cl, p, w, derive_mesh(p, w));
}

Errors validate(const Config& c, const Mesh& mesh) { return validate_all(c.model, c.cluster, c.plan, c.workload, mesh); }

}  // namespace cutlab
