#include "core/json_io.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <variant>

#include "core/choices.h"
#include "core/presets.h"
#include "core/units.h"

namespace cutlab {

using nlohmann::json;

namespace {

// [SECTION] Field tables: one row per JSON key; the struct member it fills and the factor from
// the key's unit to SI. Reading and writing both use these tables, so keys cannot drift.
template <class T>
using Member = std::variant<int T::*, double T::*, bool T::*, std::string T::*, std::vector<int> T::*, Mode T::*, Schedule T::*,
                            Recompute T::*, std::vector<RecomputeModule> T::*, MomentDtype T::*, Ema T::*, EpDispatcher T::*,
                            EpDispatchDtype T::*, CpComm T::*, Dtype T::*, GradDtype T::*, WeightDtype T::*, ExpertWeightDtype T::*,
                            KvDtype T::*, LocalKvCache T::*, Optimizer T::*, Batching T::*>;

template <class T>
struct Field {
  const char* key;
  Member<T> member;
  double scale = 1.0;  // JSON value × scale = SI value
};

const std::vector<Field<ModelSpec>>& model_fields() {
  static const std::vector<Field<ModelSpec>> f = {
      {"name", &ModelSpec::name},
      {"layers", &ModelSpec::layers},
      {"hidden", &ModelSpec::hidden},
      {"heads", &ModelSpec::heads},
      {"kv_heads", &ModelSpec::kv_heads},
      {"head_dim", &ModelSpec::head_dim},
      {"ffn_hidden", &ModelSpec::ffn_hidden},
      {"gated_mlp", &ModelSpec::gated_mlp},
      {"vocab", &ModelSpec::vocab},
      {"tied_embeddings", &ModelSpec::tied_embeddings},
      {"dropout", &ModelSpec::dropout},
      {"experts", &ModelSpec::experts},
      {"top_k", &ModelSpec::top_k},
      {"shared_experts", &ModelSpec::shared_experts},
      {"expert_ffn_hidden", &ModelSpec::expert_ffn_hidden},
      {"dense_layers", &ModelSpec::dense_layers},
      {"moe_layer_step", &ModelSpec::moe_layer_step},
      {"route_groups", &ModelSpec::route_groups},
      {"route_group_limit", &ModelSpec::route_group_limit},
      {"q_lora_rank", &ModelSpec::q_lora_rank},
      {"kv_lora_rank", &ModelSpec::kv_lora_rank},
      {"qk_rope_head_dim", &ModelSpec::qk_rope_head_dim},
      {"v_head_dim", &ModelSpec::v_head_dim},
      {"mtp_layers", &ModelSpec::mtp_layers},
      {"attention_window", &ModelSpec::attention_window},
      {"attention_chunked", &ModelSpec::attention_chunked},
      {"global_attention_every", &ModelSpec::global_attention_every},
  };
  return f;
}

const std::vector<Field<Cluster>>& cluster_fields() {
  static const std::vector<Field<Cluster>> f = {
      {"name", &Cluster::name},
      {"gpu", &Cluster::gpu},
      {"gpus", &Cluster::gpus},
      {"gpus_per_node", &Cluster::gpus_per_node},
      {"node_link", &Cluster::node_link},
      {"sms", &Cluster::sms},
      {"hbm_GiB", &Cluster::hbm_bytes, units::GiB},
      {"hbm_GBps", &Cluster::hbm_bytes_per_s, units::GBps},
      {"bf16_TFLOPs", &Cluster::bf16_flops_per_s, units::TFLOPs},
      {"fp8_TFLOPs", &Cluster::fp8_flops_per_s, units::TFLOPs},
      {"fp4_TFLOPs", &Cluster::fp4_flops_per_s, units::TFLOPs},
      {"gemm_sustained", &Cluster::gemm_sustained},
      {"nvlink_GBps", &Cluster::nvlink_bytes_per_s, units::GBps},
      {"nvlink_latency_us", &Cluster::nvlink_latency_s, units::us},
      {"scaleout_GBps", &Cluster::scaleout_bytes_per_s, units::GBps},
      {"scaleout_latency_us", &Cluster::scaleout_latency_s, units::us},
      {"host_link_GBps", &Cluster::host_link_bytes_per_s, units::GBps},
      {"reserved_GiB", &Cluster::reserved_bytes, units::GiB},
      {"allocator_fragmentation", &Cluster::allocator_fragmentation},
  };
  return f;
}

const std::vector<Field<Efficiencies>>& efficiency_fields() {
  static const std::vector<Field<Efficiencies>> f = {
      {"gemm", &Efficiencies::gemm},
      {"gemm_fp8", &Efficiencies::gemm_fp8},
      {"gemm_half_balance", &Efficiencies::gemm_half_balance},
      {"attention", &Efficiencies::attention},
      {"hbm", &Efficiencies::hbm},
      {"hbm_stream", &Efficiencies::hbm_stream},
      {"nvlink", &Efficiencies::nvlink},
      {"scaleout", &Efficiencies::scaleout},
      {"overlap", &Efficiencies::overlap},
      {"host_link", &Efficiencies::host_link},
      {"kernel_floor_us", &Efficiencies::kernel_floor_s, units::us},
      {"deepep_sm_GBps", &Efficiencies::deepep_sm_bytes_per_s, units::GBps},
      {"expert_gemm_host_us", &Efficiencies::expert_gemm_host_s, units::us},
      {"serving_gemm", &Efficiencies::serving_gemm},
      {"serving_expert_gemm", &Efficiencies::serving_expert_gemm},
      {"serving_expert_stream", &Efficiencies::serving_expert_stream},
      {"serving_attention", &Efficiencies::serving_attention},
      {"host_seq_us", &Efficiencies::host_seq_s, units::us},
      {"serving_seq_layer_us", &Efficiencies::serving_seq_layer_s, units::us},
      {"serving_moe_layer_us", &Efficiencies::serving_moe_layer_s, units::us},
      {"serving_rank_cv", &Efficiencies::serving_rank_cv},
  };
  return f;
}

const std::vector<Field<Plan>>& plan_fields() {
  static const std::vector<Field<Plan>> f = {
      {"tp", &Plan::tp},
      {"pp", &Plan::pp},
      {"cp", &Plan::cp},
      {"ep", &Plan::ep},
      {"dp", &Plan::dp},
      {"etp", &Plan::etp},
      {"sp", &Plan::sp},
      {"cp_comm", &Plan::cp_comm},
      {"distributed_optimizer", &Plan::distributed_optimizer},
      {"vpp", &Plan::vpp},
      {"schedule", &Plan::schedule},
      {"micro_batch", &Plan::micro_batch},
      {"recompute", &Plan::recompute},
      {"recompute_modules", &Plan::recompute_modules},
      {"activation_func_fp8_input_store", &Plan::activation_func_fp8_input_store},
      {"flash_attention", &Plan::flash_attention},
      {"fused_cross_entropy", &Plan::fused_cross_entropy},
      {"fused_elementwise", &Plan::fused_elementwise},
      {"rank_order", &Plan::rank_order},
      {"overlap_grad_reduce", &Plan::overlap_grad_reduce},
      {"overlap_param_gather", &Plan::overlap_param_gather},
      {"reshard_after_forward", &Plan::reshard_after_forward},
      {"activation_offload_layers", &Plan::activation_offload_layers},
      {"tp_comm_overlap", &Plan::tp_comm_overlap},
      {"tp_comm_overlap_sms", &Plan::tp_comm_overlap_sms},
      {"ep_comm_overlap", &Plan::ep_comm_overlap},
      {"ep_dispatcher", &Plan::ep_dispatcher},
      {"ep_dispatch_dtype", &Plan::ep_dispatch_dtype},
      {"moe_capacity_factor", &Plan::moe_capacity_factor},
      {"moe_pad_to_capacity", &Plan::moe_pad_to_capacity},
      {"moe_imbalance", &Plan::moe_imbalance},
      {"moe_shared_expert_overlap", &Plan::moe_shared_expert_overlap},
      {"layers_per_stage", &Plan::layers_per_stage},
      {"embedding_in_pipeline_split", &Plan::embedding_in_pipeline_split},
      {"loss_in_pipeline_split", &Plan::loss_in_pipeline_split},
  };  // "zero" is read by hand: an integer 0–3 or "fsdp"
  return f;
}

const std::vector<Field<Workload>>& workload_fields() {
  static const std::vector<Field<Workload>> f = {
      {"mode", &Workload::mode},
      {"seq_len", &Workload::seq_len},
      {"global_batch", &Workload::global_batch},
      {"dtype", &Workload::dtype},
      {"grad_dtype", &Workload::grad_dtype},
      {"optimizer", &Workload::optimizer},
      {"moment_dtype", &Workload::moment_dtype},
      {"ema", &Workload::ema},
      {"batch", &Workload::batch},
      {"prompt_len", &Workload::prompt_len},
      {"output_len", &Workload::output_len},
      {"weight_dtype", &Workload::weight_dtype},
      {"expert_weight_dtype", &Workload::expert_weight_dtype},
      {"kv_dtype", &Workload::kv_dtype},
      {"local_kv_cache", &Workload::local_kv_cache},
      {"batching", &Workload::batching},
      {"max_num_tokens", &Workload::max_num_tokens},
      {"kv_block_tokens", &Workload::kv_block_tokens},
      {"kv_cache_free_fraction", &Workload::kv_cache_free_fraction},
      {"request_rate_per_s", &Workload::request_rate_per_s},
      {"num_requests", &Workload::num_requests},
      {"spec_draft_tokens", &Workload::spec_draft_tokens},
      {"spec_acceptance", &Workload::spec_acceptance},
  };
  return f;
}

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_float: return "a number";
    default: return "an integer";
  }
}

bool is_integral(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 2e9;
}

// An integer that get<int>() reads without wrapping (is_integral lets integers of any size through).
bool fits_int(const json& v) { return is_integral(v) && std::fabs(v.get<double>()) < 2e9; }

// Request classes (Workload::length_mix): an array of at most kMaxLengthClasses objects, each of exactly
// prompt_len and output_len (integers) and share (a number); a class that is not is named whole.
ClassList<LengthClass> read_length_mix(const json& v, const std::string& path, Errors& errors) {
  static const char* const
      kShape = "must be an array of at most 8 {\"prompt_len\": integer, \"output_len\": integer, \"share\": number}";
  ClassList<LengthClass> list;
  if (!v.is_array() || v.size() > size_t(kMaxLengthClasses)) {
    errors.push_back({ErrorCode::WrongType, path, kShape});
    return list;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const json& o = v[i];
    const bool object = o.is_object() && o.size() == 3 && o.contains("prompt_len") && o.contains("output_len") && o.contains("share");
    if (object && fits_int(o["prompt_len"]) && fits_int(o["output_len"]) && o["share"].is_number())
      list.push_back({o["prompt_len"].get<int>(), o["output_len"].get<int>(), o["share"].get<double>()});
    else errors.push_back({ErrorCode::WrongType, path + "/" + std::to_string(i), kShape});
  }
  return list;
}

json length_class_json(const LengthClass& k) {
  json o = json::object();
  o["prompt_len"] = k.prompt_len, o["output_len"] = k.output_len, o["share"] = k.share;
  return o;
}

json length_mix_json(const ClassList<LengthClass>& mix) {
  json a = json::array();
  for (const LengthClass& k : mix) a.push_back(length_class_json(k));
  return a;
}

template <class T>
void read_field(const json& v, const Field<T>& f, T& out, const std::string& path, Errors& errors) {
  auto wrong = [&](const char* want) {
    errors.push_back({ErrorCode::WrongType, path, std::string("must be ") + want + ", got " + type_name(v)});
  };
  std::visit(
      [&](auto member) {
        using M = std::remove_reference_t<decltype(out.*member)>;
        if constexpr (std::is_same_v<M, int>) {
          if (!is_integral(v)) return wrong("an integer");
          const double d = v.get<double>();
          if (std::fabs(d) > 2e9) return wrong("an integer below 2^31");
          out.*member = static_cast<int>(d);
        } else if constexpr (std::is_same_v<M, double>) {
          if (!v.is_number()) return wrong("a number");
          const double d = v.get<double>();
          if (!std::isfinite(d * f.scale)) return wrong("a finite number");
          out.*member = d * f.scale;
        } else if constexpr (std::is_same_v<M, bool>) {
          if (!v.is_boolean()) return wrong("true or false");
          out.*member = v.get<bool>();
        } else if constexpr (std::is_same_v<M, std::string>) {
          if (!v.is_string()) return wrong("a string");
          out.*member = v.get<std::string>();
        } else if constexpr (std::is_enum_v<M>) {
          // A named choice (core/choices.h): one of its table's names.
          if (!v.is_string()) return wrong("a string");
          const std::string name = v.get<std::string>();
          if (!choice_from_name(name, out.*member))
            errors.push_back({ErrorCode::OutOfRange, path,
                              std::string("unknown ") + ChoiceTable<M>::key + " '" + name + "' (" + choice_list<M>() + ")"});
        } else if constexpr (std::is_same_v<M, std::vector<RecomputeModule>>) {
          // A set of named choices: each name once.
          using E = RecomputeModule;
          if (!v.is_array()) return wrong("an array of names");
          M list;
          for (size_t i = 0; i < v.size(); ++i) {
            E e{};
            if (!v[i].is_string() || !choice_from_name(v[i].template get<std::string>(), e)) {
              errors.push_back({ErrorCode::OutOfRange, path + "/" + std::to_string(i),
                                std::string("must be one of ") + choice_list<E>() + ", got " +
                                    (v[i].is_string() ? "'" + v[i].template get<std::string>() + "'" : type_name(v[i]))});
              continue;
            }
            if (std::find(list.begin(), list.end(), e) != list.end()) {
              errors.push_back(
                  {ErrorCode::Incompatible, path + "/" + std::to_string(i), "names '" + std::string(name_of(e)) + "' twice"});
              continue;
            }
            list.push_back(e);
          }
          out.*member = list;
        } else {
          if (!v.is_array()) return wrong("an array of integers");
          M list;
          for (size_t i = 0; i < v.size(); ++i) {
            if (!fits_int(v[i])) {
              errors.push_back({ErrorCode::WrongType, path + "/" + std::to_string(i), "must be an integer"});
              continue;
            }
            list.push_back(v[i].template get<int>());
          }
          out.*member = list;
        }
      },
      f.member);
}

template <class T>
json write_fields(const T& in, const std::vector<Field<T>>& fields) {
  json j = json::object();
  for (const Field<T>& f : fields) {
    std::visit(
        [&](auto member) {
          using M = std::remove_cvref_t<decltype(in.*member)>;
          if constexpr (std::is_same_v<M, double>) j[f.key] = in.*member / f.scale;
          else if constexpr (std::is_enum_v<M>) j[f.key] = name_of(in.*member);
          else j[f.key] = in.*member;
        },
        f.member);
  }
  return j;
}

// Reads every key of `j` into `out`; keys outside the table and `extra` are errors.
template <class T>
void read_fields(const json& j, const std::string& path, const std::vector<Field<T>>& fields, T& out, Errors& errors,
                 std::initializer_list<const char*> extra = {}) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    auto f = std::find_if(fields.begin(), fields.end(), [&](const Field<T>& x) { return key == x.key; });
    if (f != fields.end()) {
      read_field(it.value(), *f, out, path + "/" + key, errors);
      continue;
    }
    if (std::any_of(extra.begin(), extra.end(), [&](const char* e) { return key == e; })) continue;
    std::string known;
    for (const Field<T>& x : fields) known += (known.empty() ? "" : ", ") + std::string(x.key);
    for (const char* e : extra) known += std::string(", ") + e;
    errors.push_back({ErrorCode::UnknownKey, path + "/" + key, "unknown key '" + key + "' (known: " + known + ")"});
  }
}

void require(const json& j, const std::string& path, std::initializer_list<const char*> keys, Errors& errors) {
  for (const char* k : keys)
    if (!j.contains(k)) errors.push_back({ErrorCode::MissingKey, path + "/" + k, std::string("missing required key '") + k + "'"});
}

std::string preset_names(bool models) {
  std::string s;
  if (models)
    for (const ModelPreset& p : model_presets()) s += (s.empty() ? "" : ", ") + p.spec.name;
  else
    for (const ClusterPreset& p : cluster_presets()) s += (s.empty() ? "" : ", ") + p.spec.name;
  return s;
}

// A section that may be a preset name, a full object, or a preset with overrides.
// Returns false when the section cannot be read at all.
template <class T, class Find>
bool resolve_section(const json& j, const char* section, Find find, bool models, T& out, const json** overrides, Errors& errors) {
  const std::string path = std::string("/") + section;
  *overrides = nullptr;
  auto from_preset = [&](const json& name, const std::string& at) {
    if (!name.is_string()) {
      errors.push_back({ErrorCode::WrongType, at, std::string("must be a preset name (a string), got ") + type_name(name)});
      return false;
    }
    auto p = find(name.template get<std::string>());
    if (!p) {
      errors.push_back({ErrorCode::OutOfRange, at,
                        "unknown preset '" + name.template get<std::string>() + "' (presets: " + preset_names(models) + ")"});
      return false;
    }
    out = *p;
    return true;
  };
  if (j.is_string()) return from_preset(j, path);
  if (!j.is_object()) {
    errors.push_back({ErrorCode::WrongType, path, std::string("must be a preset name or an object, got ") + type_name(j)});
    return false;
  }
  *overrides = &j;
  if (j.contains("preset")) return from_preset(j["preset"], path + "/preset");
  return true;
}

// The dense MLP width a model gets when it names none: 4h (GPT-2, GPT-3). Computed in 64 bits from
// h clamped to the range validate() allows (1 ≤ h ≤ 2^20), so an absurd h is reported once, at
// /model/hidden, and never overflows an int here.
int default_ffn_hidden(int hidden) { return static_cast<int>(4LL * std::clamp(hidden, 0, 1 << 20)); }

// A Hugging Face config.json (transformers' LlamaConfig, MixtralConfig, Qwen2MoeConfig,
// DeepseekV3Config, GPT-2/NeoX style names) read into a ModelSpec. Keys the model does not need are
// ignored, since HF configs carry many; the ones it needs are required, with their paths.
void read_hf_config(const json& hf, const std::string& path, ModelSpec& m, Errors& errors) {
  if (!hf.is_object()) {
    errors.push_back({ErrorCode::WrongType, path, std::string("must be an object (a config.json), got ") + type_name(hf)});
    return;
  }
  auto get = [&](std::initializer_list<const char*> keys, int fallback, bool required) {
    for (const char* k : keys) {
      if (!hf.contains(k) || hf[k].is_null()) continue;
      if (!fits_int(hf[k])) {
        errors.push_back({ErrorCode::WrongType, path + "/" + k, "must be an integer"});
        return fallback;
      }
      return hf[k].get<int>();
    }
    if (required)
      errors.push_back(
          {ErrorCode::MissingKey, path + "/" + *keys.begin(), std::string("missing required key '") + *keys.begin() + "'"});
    return fallback;
  };
  m.name = hf.contains("_name_or_path") && hf["_name_or_path"].is_string() ? hf["_name_or_path"].get<std::string>()
           : hf.contains("model_type") && hf["model_type"].is_string()     ? hf["model_type"].get<std::string>()
                                                                           : "hf-model";
  m.layers = get({"num_hidden_layers", "n_layer"}, 0, true);
  m.hidden = get({"hidden_size", "n_embd"}, 0, true);
  m.heads = get({"num_attention_heads", "n_head"}, 0, true);
  m.kv_heads = get({"num_key_value_heads"}, m.heads, false);
  m.vocab = get({"vocab_size"}, 0, true);
  m.head_dim = get({"head_dim", "qk_nope_head_dim"}, m.heads > 0 ? m.hidden / m.heads : 0, false);
  m.ffn_hidden = get({"intermediate_size", "n_inner", "ffn_dim"}, default_ffn_hidden(m.hidden), false);
  const std::string act = hf.contains("hidden_act") && hf["hidden_act"].is_string() ? hf["hidden_act"].get<std::string>() : "";
  m.gated_mlp = act == "silu" || act == "swiglu" || act == "geglu";
  m.tied_embeddings = hf.contains("tie_word_embeddings") && hf["tie_word_embeddings"].is_boolean()
                          ? hf["tie_word_embeddings"].get<bool>()
                          : false;
  m.experts = get({"num_local_experts", "n_routed_experts", "num_experts"}, 0, false);
  if (m.experts > 0) {
    m.top_k = get({"num_experts_per_tok", "moe_topk"}, 0, true);
    m.expert_ffn_hidden = get({"moe_intermediate_size"}, m.ffn_hidden, false);
    m.shared_experts = get({"n_shared_experts"}, 0, false);
    const int shared_width = get({"shared_expert_intermediate_size"}, 0, false);
    if (shared_width > 0 && m.expert_ffn_hidden > 0) m.shared_experts = shared_width / m.expert_ffn_hidden;
    m.dense_layers = get({"first_k_dense_replace"}, 0, false);
    // DeepSeek-V2/V3 group-limited routing (modeling_deepseek.py MoEGate: n_group groups, topk_group kept).
    m.route_groups = get({"n_group"}, 0, false);
    m.route_group_limit = get({"topk_group"}, 0, false);
  }
  m.kv_lora_rank = get({"kv_lora_rank"}, 0, false);
  if (m.kv_lora_rank > 0) {
    m.q_lora_rank = get({"q_lora_rank"}, 0, false);
    m.qk_rope_head_dim = get({"qk_rope_head_dim"}, 0, true);
    m.v_head_dim = get({"v_head_dim"}, m.head_dim, false);
  }
  m.mtp_layers = get({"num_nextn_predict_layers"}, 0, false);
}

}  // namespace

bool sections_resolved(const Errors& errors) {
  return std::none_of(errors.begin(), errors.end(), [](const Error& e) {
    return e.path.empty() || e.path == "/model" || e.path == "/cluster" || e.code == ErrorCode::MissingKey ||
           e.path.rfind("/model/hf_config", 0) == 0 || e.path.rfind("/model/preset", 0) == 0 ||
           e.path.rfind("/cluster/preset", 0) == 0;
  });
}

namespace {

// The top-level keys: model, cluster, plan and workload, of which model and cluster are required.
void check_config_keys(const json& j, Errors& errors) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "model" && it.key() != "cluster" && it.key() != "plan" && it.key() != "workload")
      errors.push_back(
          {ErrorCode::UnknownKey, "/" + it.key(), "unknown key '" + it.key() + "' (known: model, cluster, plan, workload)"});
  require(j, "", {"model", "cluster"}, errors);
}

// "model": a preset name, an object (a preset with overrides, or every field), or {"hf_config": {...}}.
void read_model_section(const json& section, ModelSpec& model, Errors& errors) {
  const json* o = nullptr;
  const bool ok = resolve_section(section, "model", find_model_preset, true, model, &o, errors);
  if (ok && o && o->contains("hf_config")) {
    read_hf_config((*o)["hf_config"], "/model/hf_config", model, errors);
    for (auto it = o->begin(); it != o->end(); ++it)
      if (it.key() != "hf_config")
        errors.push_back({ErrorCode::UnknownKey, "/model/" + it.key(), "a model given as hf_config takes no other keys"});
  } else if (ok && o) {
    if (!o->contains("preset")) require(*o, "/model", {"layers", "hidden", "heads", "vocab"}, errors);
    read_fields(*o, "/model", model_fields(), model, errors, {"preset"});
    // Defaults that follow from other fields: MHA, and d_head = h / a.
    if (!o->contains("preset")) {
      if (!o->contains("kv_heads")) model.kv_heads = model.heads;
      if (!o->contains("head_dim") && model.heads > 0) model.head_dim = model.hidden / model.heads;
      if (!o->contains("ffn_hidden") && !o->contains("experts")) model.ffn_hidden = default_ffn_hidden(model.hidden);
    }
  }
}

// "cluster": a preset name or an object (a preset with overrides, or every field), with an optional
// "efficiency" object.
void read_cluster_section(const json& section, Cluster& cluster, Errors& errors) {
  const json* o = nullptr;
  if (resolve_section(section, "cluster", find_cluster_preset, false, cluster, &o, errors) && o) {
    if (!o->contains("preset"))
      require(*o, "/cluster", {"hbm_GiB", "hbm_GBps", "bf16_TFLOPs", "nvlink_GBps", "scaleout_GBps"}, errors);
    read_fields(*o, "/cluster", cluster_fields(), cluster, errors, {"preset", "efficiency"});
    if (o->contains("efficiency")) {
      const json& e = (*o)["efficiency"];
      if (e.is_object()) read_fields(e, "/cluster/efficiency", efficiency_fields(), cluster.efficiency, errors);
      else errors.push_back({ErrorCode::WrongType, "/cluster/efficiency", std::string("must be an object, got ") + type_name(e)});
    }
  }
}

// "plan": its fields, "zero" (0, 1, 2, 3 or "fsdp"), and dp from the cluster's `gpus` when dp is left out.
void read_plan_section(const json& p, int gpus, Plan& plan, Errors& errors) {
  if (!p.is_object()) {
    errors.push_back({ErrorCode::WrongType, "/plan", std::string("must be an object, got ") + type_name(p)});
    return;
  }
  read_fields(p, "/plan", plan_fields(), plan, errors, {"zero"});
  if (p.contains("zero")) {
    const json& z = p["zero"];
    if (z.is_string() && z.get<std::string>() == "fsdp") plan.zero = 3;
    else if (fits_int(z)) plan.zero = z.get<int>();
    else errors.push_back({ErrorCode::WrongType, "/plan/zero", std::string("must be 0, 1, 2, 3 or \"fsdp\", got ") + type_name(z)});
  }
  // dp may be left out when cluster.gpus is given: it is what the mesh leaves, if that is whole.
  if (!p.contains("dp") && gpus > 0) {
    const int dp = dp_for_gpus(plan, gpus);
    if (dp > 0) plan.dp = dp;
    else {
      // The nearest GPU counts the mesh fills (a serving mesh on fewer GPUs than the cluster has, as the
      // serving search proposes it: TP 8 on 8 of 12, is evaluated with cluster.gpus = 8).
      const long long rest = mesh_without_dp(plan), below = rest > 0 ? gpus / rest * rest : 0;
      std::string hint;
      if (rest > 0)
        hint = ": give dp, or set cluster.gpus to " + (below > 0 ? std::to_string(below) + " or " : "") + std::to_string(below + rest);
      errors.push_back({ErrorCode::Incompatible, "/plan/dp",
                        "dp is not given and cluster.gpus = " + std::to_string(gpus) + " is not a multiple of the rest of the mesh (" +
                            std::to_string(rest) + ")" + hint});
    }
  }
}

void read_workload_section(const json& w, Workload& workload, Errors& errors) {
  if (!w.is_object()) errors.push_back({ErrorCode::WrongType, "/workload", std::string("must be an object, got ") + type_name(w)});
  else {
    read_fields(w, "/workload", workload_fields(), workload, errors, {"length_mix"});
    // By hand, as plan.zero is: a field kind of its own in the tables would cost the page's first
    // module a branch in every table's reader.
    if (w.contains("length_mix")) workload.length_mix = read_length_mix(w["length_mix"], "/workload/length_mix", errors);
  }
}

// List every problem at once: when some fields could not be read but the model and cluster
// resolved, also report the rules that the fields which were read break. A rule on a field that
// already has a reading error is left out (that field holds its default, not the user's value).
void list_rule_errors(const Config& c, Errors& errors) {
  if (errors.empty() || !sections_resolved(errors)) return;
  const size_t reading_errors = errors.size();
  for (const Error& v : validate(c.model, c.cluster, c.plan, c.workload)) {
    bool shadowed = false;
    for (size_t i = 0; i < reading_errors && !shadowed; ++i) shadowed = errors[i].path == v.path;
    if (!shadowed) errors.push_back(v);
  }
}

}  // namespace

namespace {

// A JSON pointer token (RFC 6901): "~" → "~0", "/" → "~1".
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char ch : key) {
    if (ch == '~') out += "~0";
    else if (ch == '/') out += "~1";
    else out += ch;
  }
  return out;
}

}  // namespace

json parse_strict(const std::string& text, Errors& errors) {
  const std::size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    errors.push_back(
        {ErrorCode::ParseError, "", "the input holds a NUL byte at offset " + std::to_string(nul) + ": not one JSON document"});
    return json(json::value_t::discarded);
  }
  // Where the parser is: one frame per open object or array (its keys so far, or the index of its
  // last element), so a duplicate key is reported with its JSON pointer.
  struct Frame {
    bool object = false;
    std::vector<std::string> keys;
    long long index = -1;
  };
  std::vector<Frame> open;
  bool too_deep = false, duplicate = false;
  auto pointer = [&]() {
    std::string path;
    for (const Frame& f : open)
      path += "/" + (f.object ? (f.keys.empty() ? "" : pointer_token(f.keys.back())) : std::to_string(f.index));
    return path;
  };
  auto element = [&]() {
    if (!open.empty() && !open.back().object) ++open.back().index;
  };
  const json j = json::parse(
      text,
      [&](int depth, json::parse_event_t event, json& parsed) {
        if (too_deep || duplicate) return false;
        switch (event) {
          case json::parse_event_t::object_start:
          case json::parse_event_t::array_start:
            element();
            if (depth >= k_max_json_depth) {
              too_deep = true;
              errors.push_back(
                  {ErrorCode::ParseError, pointer(), "nested deeper than " + std::to_string(k_max_json_depth) + " levels"});
              return false;
            }
            open.push_back({event == json::parse_event_t::object_start, {}, -1});
            break;
          case json::parse_event_t::key: {
            const std::string key = parsed.get<std::string>();
            Frame& f = open.back();
            if (std::find(f.keys.begin(), f.keys.end(), key) != f.keys.end()) {
              f.keys.push_back(key);
              duplicate = true;
              errors.push_back({ErrorCode::ParseError, pointer(), "the key '" + key + "' appears twice in one object"});
              return false;
            }
            f.keys.push_back(key);
            break;
          }
          case json::parse_event_t::object_end:
          case json::parse_event_t::array_end:
            if (!open.empty()) open.pop_back();
            break;
          case json::parse_event_t::value: element(); break;
        }
        return true;
      },
      false);
  if (too_deep || duplicate) return json(json::value_t::discarded);
  if (j.is_discarded()) errors.push_back({ErrorCode::ParseError, "", "the input is not valid JSON"});
  return j;
}

Result<Config> config_from_json(const json& j) {
  Result<Config> r;
  Errors& errors = r.errors;
  Config& c = r.value;
  if (!j.is_object()) {
    errors.push_back({ErrorCode::WrongType, "", std::string("the config must be an object, got ") + type_name(j)});
    return r;
  }
  check_config_keys(j, errors);
  if (j.contains("model")) read_model_section(j["model"], c.model, errors);
  if (j.contains("cluster")) read_cluster_section(j["cluster"], c.cluster, errors);
  if (j.contains("plan")) read_plan_section(j["plan"], c.cluster.gpus, c.plan, errors);
  if (j.contains("workload")) read_workload_section(j["workload"], c.workload, errors);
  list_rule_errors(c, errors);
  return r;
}

// [SECTION] Output

json to_json(const ModelSpec& m) { return write_fields(m, model_fields()); }
json to_json(const Workload& w) {
  json j = write_fields(w, workload_fields());
  j["length_mix"] = length_mix_json(w.length_mix);
  return j;
}

json to_json(const Cluster& c) {
  json j = write_fields(c, cluster_fields());
  j["efficiency"] = write_fields(c.efficiency, efficiency_fields());
  return j;
}

json to_json(const Plan& p) {
  json j = write_fields(p, plan_fields());
  j["zero"] = p.zero;
  return j;
}

json to_json(const Config& c) {
  return {{"model", to_json(c.model)}, {"cluster", to_json(c.cluster)}, {"plan", to_json(c.plan)}, {"workload", to_json(c.workload)}};
}

json to_json(const Errors& errors) {
  json a = json::array();
  for (const Error& e : errors) a.push_back({{"code", error_code_name(e.code)}, {"path", e.path}, {"message", e.message}});
  return a;
}

json to_json(const ScheduleResult& s, bool with_ops) {
  json j = {{"name", s.name},
            {"makespan_s", s.makespan_s},
            {"bubble_fraction", s.bubble_fraction},
            {"peak_alive_micro_batches", s.peak_alive_micro_batches}};
  if (with_ops) {
    json ops = json::array();
    for (const Op& op : s.ops)
      ops.push_back({{"stage", op.stage},
                     {"kind", op_kind_name(op.kind)},
                     {"micro_batch", op.micro_batch},
                     {"chunk", op.chunk},
                     {"start_s", op.start_s},
                     {"end_s", op.end_s}});
    j["ops"] = std::move(ops);
    json idle = json::array();
    for (const Interval& i : s.idle) idle.push_back({{"stage", i.stage}, {"start_s", i.start_s}, {"end_s", i.end_s}});
    j["idle"] = std::move(idle);
  }
  return j;
}

namespace {

// `v` rounded to `digits` decimals, written at `p` as a plain decimal ("12.5", "-3", "0.0625"):
// exact, and several times quicker than nlohmann's shortest round-trip printing, which was most of
// the cost of a timeline of thousands of rects. At most kNumberChars characters; returns the end.
// Non-finite: null, as nlohmann writes it.
constexpr size_t kNumberChars = 32;
char* put_fixed(char* p, double v, int digits) {
  static constexpr long long kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
  const double scaled = std::round(v * double(kPow10[digits]));
  if (!std::isfinite(scaled) || std::fabs(scaled) > 9e15) {
    const std::string t = std::isfinite(v) ? json(v).dump() : "null";  // "1e+300": well under 32
    const size_t n = std::min(t.size(), kNumberChars);
    std::memcpy(p, t.data(), n);
    return p + n;
  }
  // Digits from the right into a small buffer, then one copy.
  char buf[kNumberChars];
  char* end = buf + sizeof buf;
  char* q = end;
  unsigned long long n = static_cast<unsigned long long>(std::fabs(scaled));
  int d = digits;
  while (d > 0 && n % 10 == 0) n /= 10, --d;  // trailing zeros of the fraction off
  for (; d > 0; --d, n /= 10) *--q = char('0' + n % 10);
  if (q != end) *--q = '.';
  do *--q = char('0' + n % 10), n /= 10;
  while (n > 0);
  if (scaled < 0) *--q = '-';
  const size_t len = static_cast<size_t>(end - q);
  std::memcpy(p, q, len);
  return p + len;
}

char* put_literal(char* p, const std::string& s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace

std::string scene_json_text(const Scene& s, json beside, const std::string& before, const std::string& after) {
  json grid = json::array(), labels = json::array();
  for (const SceneRect& r : s.grid) grid.push_back({{"kind", r.kind}, {"x", r.x}, {"y", r.y}, {"h", r.h}, {"t_s", r.start_s}});
  for (const SceneLabel& l : s.labels)
    labels.push_back({{"kind", l.kind}, {"text", l.text}, {"x", l.x}, {"y", l.y}, {"anchor", l.anchor}, {"stage", l.stage}});
  beside["width"] = s.width;
  beside["height"] = s.height;
  beside["grid"] = std::move(grid);
  beside["labels"] = std::move(labels);
  std::string head = beside.dump(-1, ' ', false, json::error_handler_t::replace);
  head.pop_back();  // the closing brace: the rects follow
  // Columnar (one array per field): a timeline has thousands of rects, and arrays of numbers are an
  // order of magnitude cheaper to build and parse than objects. Pixels to 0.01 px (enough for any
  // screen); times to the power of ten nearest 1e-7 of the figure's span (exact for a tooltip).
  // Written into one buffer sized for the worst case (size-optimised builds call every string
  // member, so appending number by number costs more than the digits).
  const std::vector<SceneRect>& R = s.rects;
  double span_s = 0;
  size_t kind_chars = 0;
  for (const SceneRect& r : R) span_s = std::max(span_s, std::fabs(r.end_s)), kind_chars = std::max(kind_chars, r.kind.size());
  const int digits = span_s > 0 ? int(std::clamp(-std::floor(std::log10(span_s * 1e-7)), 0.0, 9.0)) : 0;
  const size_t per_rect = 10 * (kNumberChars + 1) + 2 * kind_chars + 8;  // a kind may escape to twice its size
  const size_t room = before.size() + head.size() + R.size() * per_rect + 512 + after.size();
  const std::unique_ptr<char[]> buf(new char[room]);  // not zeroed: written once, then copied once
  char* p = put_literal(buf.get(), before);
  p = put_literal(p, head);
  p = put_literal(p, ",\"rects\":{\"count\":");
  p = put_fixed(p, double(R.size()), 0);
  auto field = [&](const char* key, auto put) {
    p = put_literal(p, std::string(",\"") + key + "\":[");
    for (size_t i = 0; i < R.size(); ++i) {
      if (i) *p++ = ',';
      p = put(p, R[i]);
    }
    *p++ = ']';
  };
  std::string kind, kind_text;  // the last kind and its JSON string: runs of rects share one
  field("kind", [&](char* q, const SceneRect& r) {
    if (r.kind != kind || kind_text.empty()) kind = r.kind, kind_text = json(r.kind).dump();
    return put_literal(q, kind_text);
  });
  field("stage", [](char* q, const SceneRect& r) { return put_fixed(q, r.stage, 0); });
  field("micro_batch", [](char* q, const SceneRect& r) { return put_fixed(q, r.micro_batch, 0); });
  field("chunk", [](char* q, const SceneRect& r) { return put_fixed(q, r.chunk, 0); });
  field("backward_micro_batch", [](char* q, const SceneRect& r) { return put_fixed(q, r.backward_micro_batch, 0); });
  // Pixels: the geometry alone when every rect follows it (a timeline's do: a third less text to
  // write, move and parse), else each rect's.
  const bool follows = s.px_per_s > 0 && std::all_of(R.begin(), R.end(), [&](const SceneRect& r) {
                         const double eps = 1e-6 * std::max(1.0, s.width);
                         return std::fabs(r.x - (s.x0 + r.start_s * s.px_per_s)) <= eps &&
                                std::fabs(r.w - (r.end_s - r.start_s) * s.px_per_s) <= eps &&
                                std::fabs(r.y - r.stage * s.row_pitch) <= eps && std::fabs(r.h - s.row_height) <= eps;
                       });
  if (follows) {
    p = put_literal(p, ",\"geometry\":{\"x0\":");
    p = put_fixed(p, s.x0, 6);
    p = put_literal(p, ",\"px_per_s\":");
    p = put_literal(p, json(s.px_per_s).dump());  // full precision: it multiplies every time
    p = put_literal(p, ",\"row_pitch\":");
    p = put_fixed(p, s.row_pitch, 6);
    p = put_literal(p, ",\"row_height\":");
    p = put_fixed(p, s.row_height, 6);
    *p++ = '}';
  } else {
    field("x", [](char* q, const SceneRect& r) { return put_fixed(q, r.x, 2); });
    field("y", [](char* q, const SceneRect& r) { return put_fixed(q, r.y, 2); });
    field("w", [](char* q, const SceneRect& r) { return put_fixed(q, r.w, 2); });
    field("h", [](char* q, const SceneRect& r) { return put_fixed(q, r.h, 2); });
  }
  field("start_s", [&](char* q, const SceneRect& r) { return put_fixed(q, r.start_s, digits); });
  field("end_s", [&](char* q, const SceneRect& r) { return put_fixed(q, r.end_s, digits); });
  p = put_literal(p, "}}");
  p = put_literal(p, after);
  return std::string(buf.get(), static_cast<size_t>(p - buf.get()));
}

json to_json(const SearchResult& s) {
  json best = json::array();
  for (const RankedPlan& p : s.best)
    best.push_back({{"plan", to_json(p.plan)},
                    {"step_s", p.step_s},
                    {"tokens_per_s", p.tokens_per_s},
                    {"mfu", p.mfu},
                    {"peak_memory_bytes", p.peak_memory_bytes},
                    {"capacity_bytes", p.capacity_bytes},
                    {"fits", p.fits}});
  return {{"candidates", s.candidates},
          {"pruned_invalid", s.pruned_invalid},
          {"pruned_equivalent", s.pruned_equivalent},
          {"pruned_memory", s.pruned_memory},
          {"pruned_bound", s.pruned_bound},
          {"evaluated", s.evaluated},
          {"valid", s.valid},
          {"fitting", s.fitting},
          {"step_bound_s", s.step_bound_s},
          {"best", best}};
}

json to_json(const SearchPart& p) {
  json out = to_json(p.result);
  out["order"] = p.order;
  out["items"] = p.items;
  out["next"] = p.next;
  return out;
}

json to_json(const StageBalance& b) {
  auto split = [](const StageSplit& s) {
    return json{{"layers_per_stage", s.layers_per_stage},
                {"busy_s", s.busy_s},
                {"memory_bytes", s.memory_bytes},
                {"capacity_bytes", s.capacity_bytes},
                {"step_s", s.step_s},
                {"tokens_per_s", s.tokens_per_s},
                {"fits", s.fits}};
  };
  return {{"current", split(b.current)}, {"suggested", split(b.suggested)}, {"improved", b.improved}, {"evaluations", b.evaluations}};
}

json to_json(const GpuPlacement& g) {
  json chunks = json::array();
  for (auto [a, b] : g.seq_chunks) chunks.push_back({a, b});
  return {{"rank", g.rank},
          {"node", g.node},
          {"local", g.local},
          {"tp", g.tp},
          {"cp", g.cp},
          {"ep", g.ep},
          {"dp", g.dp},
          {"pp", g.pp},
          {"etp", g.etp},
          {"edp", g.edp},
          {"replica", g.replica},
          {"first_layer", g.first_layer},
          {"last_layer", g.last_layer},
          {"heads", {g.heads_begin, g.heads_end}},
          {"kv_heads", {g.kv_heads_begin, g.kv_heads_end}},
          {"ffn", {g.ffn_begin, g.ffn_end}},
          {"experts", {g.experts_begin, g.experts_end}},
          {"expert_ffn", {g.expert_ffn_begin, g.expert_ffn_end}},
          {"seq_chunks", chunks},
          {"embedding", g.embedding},
          {"output", g.output}};
}

namespace {

json comm_json(const std::vector<CommOp>& ops) {
  json comm = json::array();
  for (const CommOp& c : ops)
    comm.push_back({{"axis", c.axis},
                    {"collective", c.collective},
                    {"what", c.what},
                    {"message_bytes", c.message_bytes},
                    {"calls", c.calls},
                    {"bytes", c.bytes},
                    {"group_size", c.group_size},
                    {"link", c.link},
                    {"time_s", c.time_s},
                    {"exposed_s", c.exposed_s}});
  return comm;
}

// Memory per stage: the same type in both modes; each mode writes the parts it has (training:
// gradients, optimizer state, activations per micro-batch in flight; serving: the KV cache).
json memory_json(const MemoryResult& mem, Mode mode) {
  json per_stage = json::array();
  for (const StageMemory& s : mem.per_stage) {
    json st = {{"stage", s.stage},
               {"dense_params", s.dense_params},
               {"expert_params", s.expert_params},
               {"weights_bytes", s.weights_bytes},
               {"activations_bytes", s.activations_bytes},
               {"total_bytes", s.total_bytes},
               {"capacity_bytes", s.capacity_bytes},
               {"fits", s.fits}};
    if (mode == Mode::Train) {
      st["grads_bytes"] = s.grads_bytes;
      st["optimizer_bytes"] = s.optimizer_bytes;
      st["activation_bytes_per_micro_batch"] = s.activation_bytes_per_micro_batch;
      st["offloaded_activations_bytes"] = s.offloaded_activations_bytes;
      st["in_flight_micro_batches"] = s.in_flight_micro_batches;
      st["allocator_bytes"] = s.allocator_bytes;
    } else {
      st["kv_cache_bytes"] = s.kv_cache_bytes;
    }
    per_stage.push_back(std::move(st));
  }
  return {{"peak_stage", mem.peak_stage}, {"fits", mem.fits}, {"overflow_bytes", mem.overflow_bytes}, {"per_stage", per_stage}};
}

// What both modes report: the mesh, the parameters and where every rank sits.
json layout_json(Mode mode, const Mesh& mesh, const ParamCounts& params, const Placement& pl, const Config& cfg) {
  json j;
  j["mode"] = mode;
  j["gpus"] = mesh.gpus;
  j["mesh"] = {{"gpus", mesh.gpus},
               {"dp_attn", mesh.dp_attn},
               {"etp", mesh.etp},
               {"edp", mesh.edp},
               {"num_micro_batches", mesh.num_micro_batches},
               {"zero", mesh.zero},
               {"chunks", mesh.chunks}};
  j["config"] = to_json(cfg);
  j["params"] = {{"total", params.total},         {"active", params.active},
                 {"embedding", params.embedding}, {"output", params.output},
                 {"attention", params.attention}, {"dense_mlp", params.dense_mlp},
                 {"experts", params.experts},     {"mtp", params.mtp}};
  json groups = json::array();
  for (const GroupInfo& g : pl.groups)
    groups.push_back({{"axis", g.axis},
                      {"size", g.size},
                      {"count", g.count},
                      {"members_per_node", g.members_per_node},
                      {"nodes_spanned", g.nodes_spanned},
                      {"link", g.link}});
  json stages = json::array();
  for (const StageInfo& s : pl.stages) {
    json chunks = json::array();
    for (auto [a, b] : s.chunks) chunks.push_back({a, b});
    stages.push_back({{"stage", s.stage},
                      {"layers", s.layers},
                      {"moe_layers", s.moe_layers},
                      {"embedding", s.embedding},
                      {"output", s.output},
                      {"chunks", chunks}});
  }
  // Rank = Σ coordinate × stride on the attention mesh; under folding the expert mesh inside each
  // stage is etp (innermost) × ep × edp.
  json expert_strides = cfg.plan.etp > 0 ? json{{"etp", 1}, {"ep", mesh.etp}, {"edp", mesh.etp * cfg.plan.ep}, {"pp", pl.stride_pp}}
                                         : json{{"etp", pl.stride_tp}, {"ep", pl.stride_ep}, {"pp", pl.stride_pp}};
  j["placement"] = {{"gpus", pl.gpus},
                    {"nodes", pl.nodes},
                    {"gpus_per_node", pl.gpus_per_node},
                    {"rank_order", placed_rank_order(cfg)},
                    {"strides",
                     {{"tp", pl.stride_tp}, {"cp", pl.stride_cp}, {"ep", pl.stride_ep}, {"dp", pl.stride_dp}, {"pp", pl.stride_pp}}},
                    {"expert_strides", expert_strides},
                    {"groups", groups},
                    {"stages", stages}};
  return j;
}

// The parts of a step by name: the JSON keys are name (share of the step) and name + "_s" (seconds); a
// table, as kLatencyParts below, so that the page's first module builds them in one loop.
struct StepPart {
  const char* name;
  double TimeBreakdown::*seconds;
};
constexpr StepPart kStepParts[] = {
    {"compute", &TimeBreakdown::compute_s},
    {"recompute", &TimeBreakdown::recompute_s},
    {"tp_exposed", &TimeBreakdown::tp_exposed_s},
    {"cp_exposed", &TimeBreakdown::cp_exposed_s},
    {"ep_exposed", &TimeBreakdown::ep_exposed_s},
    {"ep_sm_slowdown", &TimeBreakdown::ep_sm_slowdown_s},
    {"offload_exposed", &TimeBreakdown::offload_exposed_s},
    {"pp_bubble", &TimeBreakdown::pp_bubble_s},
    {"dp_exposed", &TimeBreakdown::dp_exposed_s},
    {"optimizer", &TimeBreakdown::optimizer_s},
};

json time_json(const TrainingEstimate& e) {
  const TimeBreakdown& b = e.breakdown;
  json st = json::array();
  for (const StageTime& s : e.stages)
    st.push_back({{"stage", s.stage},
                  {"f_s", s.f_s},
                  {"b_s", s.b_s},
                  {"w_s", s.w_s},
                  {"busy_s", s.busy_s},
                  {"end_s", s.end_s},
                  {"dp_exposed_s", s.dp_exposed_s},
                  {"optimizer_s", s.optimizer_s}});
  const double step = e.step_s > 0 ? e.step_s : 1.0;
  json shares = json::object(), breakdown = json::object();
  for (const StepPart& part : kStepParts) {
    shares[part.name] = b.*part.seconds / step;
    breakdown[std::string(part.name) + "_s"] = b.*part.seconds;
  }
  return {{"step_s", e.step_s}, {"shares", shares}, {"breakdown", breakdown}, {"stages", st}};
}

// The parts of a latency by name: the JSON keys are name + "_s" (seconds) and name (share of the total).
struct LatencyPart {
  const char* name;
  double LatencyParts::*seconds;
};
constexpr LatencyPart kLatencyParts[] = {{"weights", &LatencyParts::weights_s},
                                         {"kv_cache", &LatencyParts::kv_s},
                                         {"compute", &LatencyParts::compute_s},
                                         {"tp", &LatencyParts::tp_s},
                                         {"ep", &LatencyParts::ep_s},
                                         {"ep_wait", &LatencyParts::ep_wait_s},
                                         {"pp", &LatencyParts::pp_s},
                                         {"draft", &LatencyParts::draft_s},
                                         {"host", &LatencyParts::host_s},
                                         {"queue", &LatencyParts::queue_s},
                                         {"step_wait", &LatencyParts::step_wait_s}};

json latency_parts_json(const LatencyParts& p) {
  json j = json::object();
  for (const LatencyPart& part : kLatencyParts) j[std::string(part.name) + "_s"] = p.*part.seconds;
  return j;
}

json latency_shares_json(const LatencyParts& p) {
  const double total = p.total_s() > 0 ? p.total_s() : 1.0;
  json j = json::object();
  for (const LatencyPart& part : kLatencyParts) j[part.name] = p.*part.seconds / total;
  return j;
}

json inference_json(const InferenceEstimate& r) {
  // The plain numbers as a table (smaller code in the page's first WebAssembly module than one
  // initializer entry each); the object's keys sort the same either way.
  static const std::pair<const char*, double InferenceEstimate::*> numbers[] = {
      {"ttft_s", &InferenceEstimate::ttft_s},
      {"tpot_s", &InferenceEstimate::tpot_s},
      {"e2e_latency_s", &InferenceEstimate::e2e_latency_s},
      {"run_s", &InferenceEstimate::run_s},
      {"run_waves", &InferenceEstimate::run_waves},
      {"run_spare_sequences", &InferenceEstimate::run_spare_sequences},
      {"run_one_more_wave_s", &InferenceEstimate::run_one_more_wave_s},
      {"output_tokens_per_s_per_user", &InferenceEstimate::output_tokens_per_s_per_user},
      {"output_tokens_per_s_per_replica", &InferenceEstimate::output_tokens_per_s_per_replica},
      {"output_tokens_per_s_per_gpu", &InferenceEstimate::output_tokens_per_s_per_gpu},
      {"output_tokens_per_s_total", &InferenceEstimate::output_tokens_per_s_total},
      {"requests_per_s", &InferenceEstimate::requests_per_s},
      {"concurrency", &InferenceEstimate::concurrency},
      {"kv_pool_bytes", &InferenceEstimate::kv_pool_bytes},
      {"kv_cache_used_bytes", &InferenceEstimate::kv_cache_used_bytes},
      {"kv_cache_occupancy", &InferenceEstimate::kv_cache_occupancy},
      {"kv_cache_bytes_per_token", &InferenceEstimate::kv_cache_bytes_per_token},
      {"decode_seqs_per_step", &InferenceEstimate::decode_seqs_per_step},
      {"prefill_tokens_per_step", &InferenceEstimate::prefill_tokens_per_step},
      {"prefill_steps", &InferenceEstimate::prefill_steps},
      {"spec_tokens_per_step", &InferenceEstimate::spec_tokens_per_step},
      {"step_s", &InferenceEstimate::step_s},
      {"local_experts_read", &InferenceEstimate::local_experts_read},
      {"stage_idle_fraction", &InferenceEstimate::stage_idle_fraction},
      {"pp_send_s", &InferenceEstimate::pp_send_s},
  };
  json j = {{"batching", name_of(r.batching)},
            {"concurrency_limit", name_of(r.concurrency_limit)},
            {"saturated", r.saturated},
            {"token_budget_bound", r.token_budget_bound},
            {"max_batch_that_fits", r.max_batch_that_fits},
            {"kv_capacity_sequences", r.kv_capacity_sequences},
            {"kv_bound_stage", r.kv_bound_stage},
            {"replicas", r.replicas},
            {"instances", r.instances},
            {"instances_whole", r.instances_whole},
            {"micro_batches", r.micro_batches},
            {"decode_stage_s", r.decode_stage_s},
            {"prefill", latency_parts_json(r.prefill)},
            {"decode", latency_parts_json(r.decode)}};
  for (const auto& [key, member] : numbers) j[key] = r.*member;
  j["shares"] = {{"prefill", latency_shares_json(r.prefill)}, {"decode", latency_shares_json(r.decode)}};
  if (!r.length_classes.empty()) j["length_classes"] = to_json(r.length_classes);
  return j;
}

}  // namespace

json to_json(const ClassList<ClassLatency>& classes) {
  std::vector<double> ttft, e2e, steps;
  for (const ClassLatency& k : classes) ttft.push_back(k.ttft_s), e2e.push_back(k.e2e_latency_s), steps.push_back(k.prefill_steps);
  return {{"ttft_s", ttft}, {"e2e_latency_s", e2e}, {"prefill_steps", steps}};
}

namespace {

json ops_json(const std::vector<LayerOp>& ops) {
  json out = json::array();
  for (const LayerOp& op : ops)
    out.push_back({{"name", std::string(op.name)},
                   {"class", op.op_class},
                   {"count", op.count},
                   {"m", op.m},
                   {"n", op.n},
                   {"k", op.k},
                   {"flops", op.flops},
                   {"bytes", op.bytes},
                   {"efficiency", op.efficiency},
                   {"bound", op_bound(op)},
                   {"f_s", op.f_s},
                   {"b_s", op.b_s},
                   {"w_s", op.w_s}});
  return out;
}

}  // namespace

json to_json(const TrainingEstimate& e, const Config& cfg) {
  json j = layout_json(Mode::Train, e.mesh, e.params, e.placement, cfg);
  j["ops"] = {{"dense_layer", ops_json(e.dense_layer_ops)},
              {"moe_layer", ops_json(e.moe_layer_ops)},
              {"output_layer", ops_json(e.output_layer_ops)},
              {"input_layer", ops_json(e.input_layer_ops)}};
  j["flops"] = {{"model_per_step", e.model_flops_per_step}, {"hardware_per_step", e.hardware_flops_per_step}};
  j["memory"] = memory_json(e.memory, Mode::Train);
  j["comm"] = comm_json(e.comm);
  j["comm_stage"] = e.comm_stage;
  j["schedule"] = to_json(e.schedule, false);
  j["time"] = time_json(e);
  j["throughput"] = {{"tokens_per_s", e.tokens_per_s},
                     {"tokens_per_s_per_gpu", e.tokens_per_s / e.mesh.gpus},
                     {"model_flops_per_s_per_gpu", e.model_flops_per_s_per_gpu}};
  j["mfu"] = e.mfu;
  j["hfu"] = e.hfu;
  j["peak"] = {{"flops_per_s", e.peak_flops_per_s}, {"name", e.peak_name}};
  return j;
}

json to_json(const ServingEstimate& e, const Config& cfg) {
  json j = layout_json(Mode::Infer, e.mesh, e.params, e.placement, cfg);
  j["memory"] = memory_json(e.serving.memory, Mode::Infer);
  j["comm"] = comm_json(e.serving.comm);
  j["comm_stage"] = 0;  // the comm table is for a GPU of the first stage
  j["inference"] = inference_json(e.serving);
  // What the cluster's serving efficiencies were fitted to and how far off they are held out, when they
  // are a preset's as given (core/presets.h).
  if (const ClusterPreset* p = serving_preset_as_given(cfg.cluster))
    j["calibration"] = {{"fitted_to", p->fitted_to},
                        {"serving_held_out_family", p->serving_held_out_family},
                        {"serving_held_out_percent", p->serving_held_out_percent}};
  return j;
}

json to_json(const Estimate& e, const Config& cfg) {
  return std::visit([&](const auto& x) { return to_json(x, cfg); }, e);
}

namespace {

// What the page needs to know of a choice besides its name, so it never compares names: the
// default value (Plan's and Workload's defaults), serving modes, and the schedules' use of chunks.
template <class E>
void add_attributes(json&, E) {}
void add_attributes(json& j, Mode m) { j["serving"] = m == Mode::Infer; }
void add_attributes(json& j, Recompute r) { j["reads_modules"] = r == Recompute::Selective; }  // plan.recompute_modules
void add_attributes(json& j, Schedule s) {
  j["virtual_stages"] = s == Schedule::Interleaved;         // runs vpp ≥ 2 chunks per stage
  j["chunks_per_stage"] = s == Schedule::DualPipe ? 2 : 0;  // fixed chunks (DualPipe's two directions); 0: vpp
}

template <class E>
void add_choices(json& out, E default_value) {
  json list = json::array();
  for (const Named<E>& n : ChoiceTable<E>::entries) {
    json c = {{"name", n.name}, {"label", n.label}, {"default", n.value == default_value}};
    add_attributes(c, n.value);
    list.push_back(std::move(c));
  }
  out[ChoiceTable<E>::key] = std::move(list);
}

}  // namespace

// Every named choice with its label, from core/choices.h: the page builds its menus from these.
json choices_json() {
  json out = json::object();
  const Plan plan;
  const Workload w;
  add_choices(out, w.mode);
  add_choices(out, plan.schedule);
  add_choices(out, plan.recompute);
  add_choices(out, plan.cp_comm);
  add_choices(out, plan.ep_dispatcher);
  add_choices(out, plan.ep_dispatch_dtype);
  add_choices(out, w.dtype);
  add_choices(out, w.grad_dtype);
  add_choices(out, w.weight_dtype);
  add_choices(out, w.expert_weight_dtype);
  add_choices(out, w.kv_dtype);
  add_choices(out, w.local_kv_cache);
  add_choices(out, w.batching);
  add_choices(out, w.optimizer);
  add_choices(out, w.moment_dtype);
  add_choices(out, w.ema);
  add_choices(out, RecomputeModule::CoreAttn);
  add_choices(out, Axis::TP);
  add_choices(out, Collective::AllReduce);
  add_choices(out, Link::NVLink);
  return out;
}

json presets_json() {
  json models = json::array(), clusters = json::array();
  for (const ModelPreset& p : model_presets()) {
    json m = to_json(p.spec);
    m["source"] = p.source;
    m["published_params"] = p.published_params;
    models.push_back(m);
  }
  for (const ClusterPreset& p : cluster_presets()) {
    json c = to_json(p.spec);
    c["source"] = p.source;
    c["fitted_to"] = p.fitted_to;
    c["serving_held_out_family"] = p.serving_held_out_family;
    c["serving_held_out_percent"] = p.serving_held_out_percent;
    clusters.push_back(c);
  }
  return {{"models", models}, {"clusters", clusters}, {"choices", choices_json()}};
}

}  // namespace cutlab
