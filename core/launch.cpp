// launch.cpp: export and import of launch configurations (launch.h).
// [SECTION] names and small helpers · Megatron-LM · Megatron-Bridge · torchtitan · DeepSpeed ·
// vLLM and SGLang · export · import
#include "core/launch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "core/inference.h"
#include "core/json_io.h"
#include "core/presets.h"
#include "core/toml.h"

namespace cutlab {

using nlohmann::json;

// [SECTION] names and small helpers

namespace {

struct FormatName {
  LaunchFormat format;
  const char* name;
};
constexpr FormatName k_formats[] = {{LaunchFormat::Megatron, "megatron"},
                                    {LaunchFormat::MegatronBridge, "megatron-bridge"},
                                    {LaunchFormat::Torchtitan, "torchtitan"},
                                    {LaunchFormat::DeepSpeed, "deepspeed"},
                                    {LaunchFormat::Vllm, "vllm"},
                                    {LaunchFormat::Sglang, "sglang"}};

bool serving_format(LaunchFormat f) { return f == LaunchFormat::Vllm || f == LaunchFormat::Sglang; }

// Hugging Face repositories of the model presets (the checkpoints vLLM and SGLang load).
struct HfRepo {
  const char* preset;
  const char* repo;
};
constexpr HfRepo k_hf_repos[] = {{"llama3-8b", "meta-llama/Meta-Llama-3-8B"},
                                 {"llama3-70b", "meta-llama/Meta-Llama-3-70B"},
                                 {"llama3-405b", "meta-llama/Llama-3.1-405B"},
                                 {"mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1"},
                                 {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
                                 {"deepseek-r1", "deepseek-ai/DeepSeek-R1"},
                                 {"qwen2-57b-a14b", "Qwen/Qwen2-57B-A14B"},
                                 {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"},
                                 {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},
                                 {"llama4-scout-17b-16e", "meta-llama/Llama-4-Scout-17B-16E"},
                                 {"llama4-maverick-17b-128e", "meta-llama/Llama-4-Maverick-17B-128E"},
                                 {"gpt-oss-120b", "openai/gpt-oss-120b"},
                                 {"gpt-oss-20b", "openai/gpt-oss-20b"}};

// torchtitan's model names and flavors (torchtitan/models/*/__init__.py) of the presets it ships.
struct TitanModel {
  const char* preset;
  const char* name;
  const char* flavor;
};
constexpr TitanModel k_titan_models[] = {{"llama3-8b", "llama3", "8B"},
                                         {"llama3-70b", "llama3", "70B"},
                                         {"llama3-405b", "llama3", "405B"},
                                         {"deepseek-v3", "deepseek_v3", "671B"},
                                         {"llama4-scout-17b-16e", "llama4", "17bx16e"},
                                         {"llama4-maverick-17b-128e", "llama4", "17bx128e"}};

std::string str(int v) { return std::to_string(v); }
std::string str(long long v) { return std::to_string(v); }
std::string str(double v) {  // as `std::ostream << v` writes it (%g, 6 digits), without iostreams
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The model (or cluster) as the "# cutlab:" line carries it: its preset name when it is that preset
// unchanged, else every field.
// (A cluster's GPU count is not part of its preset.)
json preset_or_object(const ModelSpec& spec) {
  const auto preset = find_model_preset(spec.name);
  if (preset && to_json(*preset) == to_json(spec)) return spec.name;
  return to_json(spec);
}
json preset_or_object(const Cluster& spec) {
  auto preset = find_cluster_preset(spec.name);
  if (preset) preset->gpus = spec.gpus;
  if (preset && to_json(*preset) == to_json(spec)) return spec.name;
  return to_json(spec);
}

// The GPUs of a config: the cluster's count, else the plan's mesh.
long long config_gpus(const Config& c) { return c.cluster.gpus > 0 ? c.cluster.gpus : static_cast<long long>(mesh_gpus(c.plan)); }

// The keys of `full` whose values differ from `read` (what a framework's reading lost).
json differing(const json& full, const json& read) {
  json out = json::object();
  for (auto it = full.begin(); it != full.end(); ++it)
    if (!read.contains(it.key()) || read[it.key()] != it.value()) out[it.key()] = it.value();
  return out;
}

const char* mcore_cp_comm(CpComm c) {
  switch (c) {
    case CpComm::Ring: return "p2p";
    case CpComm::AllGather: return "all_gather";
    case CpComm::AllToAll: return "a2a";
  }
  return "p2p";
}

// [SECTION] Megatron-LM (core_r0.13.0 megatron/training/arguments.py)

struct Flag {
  std::string name;
  std::vector<std::string> values;
};

std::vector<Flag> megatron_flags(const Config& c) {
  const ModelSpec& m = c.model;
  const Plan& p = c.plan;
  const Workload& w = c.workload;
  std::vector<Flag> f;
  auto add = [&](const char* name, std::vector<std::string> values = {}) { f.push_back({name, std::move(values)}); };
  // The model (_add_network_size_args, _add_moe_args, _add_mla_args).
  add("--num-layers", {str(m.layers)});
  add("--hidden-size", {str(m.hidden)});
  if (m.ffn_hidden > 0) add("--ffn-hidden-size", {str(m.ffn_hidden)});
  add("--num-attention-heads", {str(m.heads)});
  if (is_mla(m)) {
    add("--multi-latent-attention");
    if (m.q_lora_rank > 0) add("--q-lora-rank", {str(m.q_lora_rank)});
    add("--kv-lora-rank", {str(m.kv_lora_rank)});
    add("--qk-head-dim", {str(m.head_dim)});
    add("--qk-pos-emb-head-dim", {str(m.qk_rope_head_dim)});
    add("--v-head-dim", {str(m.v_head_dim)});
  } else {
    if (m.kv_heads != m.heads) {
      add("--group-query-attention");
      add("--num-query-groups", {str(m.kv_heads)});
    }
    if (m.heads > 0 && m.head_dim * m.heads != m.hidden) add("--kv-channels", {str(m.head_dim)});
  }
  if (m.gated_mlp) add("--swiglu");
  if (!m.tied_embeddings) add("--untie-embeddings-and-output-weights");
  add("--vocab-size", {str(m.vocab)});
  if (is_moe(m)) {
    add("--num-experts", {str(m.experts)});
    add("--moe-router-topk", {str(m.top_k)});
    add("--moe-ffn-hidden-size", {str(m.expert_ffn_hidden)});
    if (m.shared_experts > 0)
      add("--moe-shared-expert-intermediate-size", {str(static_cast<long long>(m.shared_experts) * m.expert_ffn_hidden)});
  }
  if (m.mtp_layers > 0) add("--mtp-num-layers", {str(m.mtp_layers)});
  // The cut (_add_distributed_args).
  add("--tensor-model-parallel-size", {str(p.tp)});
  add("--pipeline-model-parallel-size", {str(p.pp)});
  if (p.schedule == Schedule::Interleaved && p.vpp > 1) add("--num-virtual-stages-per-pipeline-rank", {str(p.vpp)});
  if (!p.layers_per_stage.empty() && p.pp >= 2 && p.vpp == 1) {
    const std::vector<int>& l = p.layers_per_stage;
    const bool middle_even = std::all_of(l.begin() + 1, l.end() - 1, [&](int n) { return n == l[1]; });
    if (middle_even) {
      add("--decoder-first-pipeline-num-layers", {str(l.front())});
      add("--decoder-last-pipeline-num-layers", {str(l.back())});
    }
  }
  if (p.embedding_in_pipeline_split) add("--account-for-embedding-in-pipeline-split");
  if (p.loss_in_pipeline_split) add("--account-for-loss-in-pipeline-split");
  if (p.cp > 1) {
    add("--context-parallel-size", {str(p.cp)});
    add("--cp-comm-type", {mcore_cp_comm(p.cp_comm)});
  }
  if (p.ep > 1) add("--expert-model-parallel-size", {str(p.ep)});
  if (p.etp > 0) add("--expert-tensor-parallel-size", {str(p.etp)});
  if (p.sp) add("--sequence-parallel");
  // Memory (_add_training_args).
  if (p.recompute == Recompute::Full) {
    add("--recompute-granularity", {"full"});
    add("--recompute-method", {"uniform"});
    add("--recompute-num-layers", {"1"});
  } else if (p.recompute == Recompute::Selective) {
    add("--recompute-granularity", {"selective"});
    if (p.recompute_modules != std::vector<RecomputeModule>{RecomputeModule::CoreAttn}) {
      std::vector<std::string> names;
      for (RecomputeModule r : p.recompute_modules) names.push_back(name_of(r));
      add("--recompute-modules", names);
    }
  }
  if (p.activation_offload_layers > 0) {
    add("--cpu-offloading");
    add("--cpu-offloading-num-layers", {str(p.activation_offload_layers)});
  }
  if (p.zero == 3) add("--use-torch-fsdp2");
  else if (effective_zero(p) == 1) add("--use-distributed-optimizer");
  if (p.overlap_grad_reduce) add("--overlap-grad-reduce");
  if (p.overlap_param_gather && effective_zero(p) == 1) add("--overlap-param-gather");
  if (p.tp_comm_overlap) add("--tp-comm-overlap");
  if (p.ep_comm_overlap) add("--overlap-moe-expert-parallel-comm");
  if (p.moe_shared_expert_overlap) add("--moe-shared-expert-overlap");
  if (!p.flash_attention) add("--attention-backend", {"unfused"});
  if (p.fused_cross_entropy) add("--cross-entropy-loss-fusion");
  // Precision (_add_mixed_precision_args, the precision-aware optimizer).
  add("--bf16");
  if (w.dtype == Dtype::FP8) add("--fp8-format", {"hybrid"});
  if (w.grad_dtype == GradDtype::BF16) add("--grad-reduce-in-bf16");
  if (w.moment_dtype == MomentDtype::BF16) {
    add("--use-precision-aware-optimizer");
    add("--exp-avg-dtype", {"bf16"});
    add("--exp-avg-sq-dtype", {"bf16"});
  }
  // MoE routing (_add_moe_args).
  if (is_moe(m)) {
    if (p.ep_dispatcher == EpDispatcher::DeepEp) {
      add("--moe-token-dispatcher-type", {"flex"});
      add("--moe-enable-deepep");
    } else if (p.ep_dispatcher == EpDispatcher::AllGather) {
      add("--moe-token-dispatcher-type", {"allgather"});
    } else {
      add("--moe-token-dispatcher-type", {"alltoall"});
    }
    if (p.moe_capacity_factor > 0) add("--moe-expert-capacity-factor", {str(p.moe_capacity_factor)});
    if (p.moe_pad_to_capacity) add("--moe-pad-expert-input-to-capacity");
  }
  // The batch.
  add("--micro-batch-size", {str(p.micro_batch)});
  add("--global-batch-size", {str(w.global_batch)});
  add("--seq-length", {str(w.seq_len)});
  return f;
}

std::string flags_text(const std::vector<Flag>& flags, const char* indent) {
  std::string out;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    out += indent + flags[i].name;
    for (const std::string& v : flags[i].values) out += " " + v;
    out += i + 1 < flags.size() ? " \\\n" : "\n";
  }
  return out;
}

// [SECTION] Megatron-Bridge (v0.1 ConfigContainer overrides: model.*, train.*, ddp.*, optimizer.*)

std::vector<std::string> bridge_overrides(const std::vector<Flag>& flags) {
  static const std::vector<std::pair<const char*, std::vector<const char*>>> keys = {
      {"--tensor-model-parallel-size", {"model.tensor_model_parallel_size"}},
      {"--pipeline-model-parallel-size", {"model.pipeline_model_parallel_size"}},
      {"--num-virtual-stages-per-pipeline-rank", {"model.virtual_pipeline_model_parallel_size"}},
      {"--decoder-first-pipeline-num-layers", {"model.num_layers_in_first_pipeline_stage"}},
      {"--decoder-last-pipeline-num-layers", {"model.num_layers_in_last_pipeline_stage"}},
      {"--account-for-embedding-in-pipeline-split", {"model.account_for_embedding_in_pipeline_split"}},
      {"--account-for-loss-in-pipeline-split", {"model.account_for_loss_in_pipeline_split"}},
      {"--context-parallel-size", {"model.context_parallel_size"}},
      {"--cp-comm-type", {"model.cp_comm_type"}},
      {"--expert-model-parallel-size", {"model.expert_model_parallel_size"}},
      {"--expert-tensor-parallel-size", {"model.expert_tensor_parallel_size"}},
      {"--sequence-parallel", {"model.sequence_parallel"}},
      {"--recompute-granularity", {"model.recompute_granularity"}},
      {"--recompute-method", {"model.recompute_method"}},
      {"--recompute-num-layers", {"model.recompute_num_layers"}},
      {"--recompute-modules", {"model.recompute_modules"}},
      {"--cpu-offloading", {"model.cpu_offloading"}},
      {"--cpu-offloading-num-layers", {"model.cpu_offloading_num_layers"}},
      {"--use-torch-fsdp2", {"dist.use_torch_fsdp2"}},
      {"--use-distributed-optimizer", {"ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer"}},
      {"--overlap-grad-reduce", {"ddp.overlap_grad_reduce"}},
      {"--overlap-param-gather", {"ddp.overlap_param_gather"}},
      {"--tp-comm-overlap", {"model.tp_comm_overlap"}},
      {"--overlap-moe-expert-parallel-comm", {"model.overlap_moe_expert_parallel_comm"}},
      {"--moe-shared-expert-overlap", {"model.moe_shared_expert_overlap"}},
      {"--attention-backend", {"model.attention_backend"}},
      {"--cross-entropy-loss-fusion", {"model.cross_entropy_loss_fusion"}},
      {"--use-precision-aware-optimizer", {"optimizer.use_precision_aware_optimizer"}},
      {"--exp-avg-dtype", {"optimizer.exp_avg_dtype"}},
      {"--exp-avg-sq-dtype", {"optimizer.exp_avg_sq_dtype"}},
      {"--moe-token-dispatcher-type", {"model.moe_token_dispatcher_type"}},
      {"--moe-enable-deepep", {"model.moe_enable_deepep"}},
      {"--moe-expert-capacity-factor", {"model.moe_expert_capacity_factor"}},
      {"--moe-pad-expert-input-to-capacity", {"model.moe_pad_expert_input_to_capacity"}},
      {"--micro-batch-size", {"train.micro_batch_size"}},
      {"--global-batch-size", {"train.global_batch_size"}},
      {"--seq-length", {"model.seq_length", "dataset.sequence_length"}}};
  std::vector<std::string> out;
  bool fp8 = false, grad_bf16 = false;
  for (const Flag& f : flags) {
    if (f.name == "--fp8-format") fp8 = true;
    if (f.name == "--grad-reduce-in-bf16") grad_bf16 = true;
    for (const auto& [flag, targets] : keys) {
      if (f.name != flag) continue;
      std::string value = "true";
      if (f.values.size() == 1) value = f.values[0];
      if (f.values.size() > 1) {
        value = "[";
        for (std::size_t i = 0; i < f.values.size(); ++i) value += (i ? "," : "") + f.values[i];
        value += "]";
      }
      for (const char* t : targets) out.push_back(std::string(t) + "=" + value);
    }
  }
  out.push_back(std::string("mixed_precision=") + (fp8 ? "bf16_with_fp8_delayed_scaling_mixed" : "bf16_mixed"));
  if (grad_bf16) out.push_back("ddp.grad_reduce_in_fp32=false");
  return out;
}

// [SECTION] torchtitan (v0.1.0 torchtitan/config/job_config.py)

const char* titan_schedule(Schedule s) {
  switch (s) {
    case Schedule::GPipe: return "GPipe";
    case Schedule::OneFOneB: return "1F1B";
    case Schedule::Interleaved: return "Interleaved1F1B";
    case Schedule::ZbH1: return "1F1B";  // no ZB-H1 of one chunk per stage: carried in the # cutlab: line
    case Schedule::DualPipe: return "DualPipeV";
  }
  return "1F1B";
}

// The job config as tables of (key, TOML value text), in torchtitan's order.
using TomlTables = std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>;

std::string toml_quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

TomlTables titan_tables(const Config& c, const Mesh& mesh) {
  const ModelSpec& m = c.model;
  const Plan& p = c.plan;
  const Workload& w = c.workload;
  TomlTables t;
  std::string name = "MODEL", flavor = "FLAVOR";
  for (const TitanModel& tm : k_titan_models)
    if (m.name == tm.preset) name = tm.name, flavor = tm.flavor;
  std::vector<std::pair<std::string, std::string>> model = {{"name", toml_quoted(name)}, {"flavor", toml_quoted(flavor)}};
  if (w.dtype == Dtype::FP8) model.push_back({"converters", "[\"float8\"]"});
  t.push_back({"model", model});
  const int dp_total = p.etp > 0 ? p.dp : p.ep * p.dp;
  const long long local_batch = static_cast<long long>(p.micro_batch) * (p.pp > 1 ? mesh.num_micro_batches : 1);
  t.push_back({"training",
               {{"local_batch_size", str(local_batch)},
                {"global_batch_size", str(static_cast<long long>(w.global_batch))},
                {"seq_len", str(static_cast<long long>(w.seq_len))},
                {"mixed_precision_param", toml_quoted("bfloat16")},
                {"mixed_precision_reduce", toml_quoted(w.grad_dtype == GradDtype::BF16 ? "bfloat16" : "float32")}}});
  std::vector<std::pair<std::string, std::string>> par;
  if (p.zero == 3) {
    par.push_back({"data_parallel_replicate_degree", "1"});
    par.push_back({"data_parallel_shard_degree", str(static_cast<long long>(dp_total))});
    par.push_back({"fsdp_reshard_after_forward", toml_quoted(p.reshard_after_forward ? "always" : "never")});
  } else {
    par.push_back({"data_parallel_replicate_degree", str(static_cast<long long>(dp_total))});
    par.push_back({"data_parallel_shard_degree", "1"});
  }
  par.push_back({"tensor_parallel_degree", str(static_cast<long long>(p.tp))});
  if (p.tp_comm_overlap) par.push_back({"enable_async_tensor_parallel", "true"});
  par.push_back({"pipeline_parallel_degree", str(static_cast<long long>(p.pp))});
  if (p.pp > 1) {
    par.push_back({"pipeline_parallel_schedule", toml_quoted(titan_schedule(p.schedule))});
    par.push_back({"pipeline_parallel_microbatch_size", str(static_cast<long long>(p.micro_batch))});
    const int split = pipeline_split_layers(m, p);
    if (p.schedule == Schedule::Interleaved && p.layers_per_stage.empty() && split % (p.pp * p.vpp) == 0)
      par.push_back({"pipeline_parallel_layers_per_stage", str(static_cast<long long>(split / (p.pp * p.vpp)))});
  }
  par.push_back({"context_parallel_degree", str(static_cast<long long>(p.cp))});
  if (p.cp > 1)
    par.push_back({"context_parallel_rotate_method", toml_quoted(p.cp_comm == CpComm::AllGather ? "allgather" : "alltoall")});
  if (is_moe(m)) {
    par.push_back({"expert_parallel_degree", str(static_cast<long long>(p.ep))});
    if (p.etp > 0) par.push_back({"expert_tensor_parallel_degree", str(static_cast<long long>(p.etp))});
  }
  t.push_back({"parallelism", par});
  std::vector<std::pair<std::string, std::string>> ac;
  switch (p.recompute) {
    case Recompute::None: ac.push_back({"mode", toml_quoted("none")}); break;
    case Recompute::Full: ac.push_back({"mode", toml_quoted("full")}); break;
    case Recompute::Selective:  // torchtitan's nearest: per-op SAC (the # cutlab: line keeps selective)
    case Recompute::OpSac:
      ac.push_back({"mode", toml_quoted("selective")});
      ac.push_back({"selective_ac_option", toml_quoted("op")});
      break;
  }
  t.push_back({"activation_checkpoint", ac});
  return t;
}

std::string toml_text(const TomlTables& tables) {
  std::string out;
  for (const auto& [name, keys] : tables) {
    out += "\n[" + name + "]\n";
    for (const auto& [k, v] : keys) out += k + " = " + v + "\n";
  }
  return out;
}

// [SECTION] DeepSpeed (v0.17 config JSON)

json deepspeed_config(const Config& c, const Mesh& mesh) {
  const Plan& p = c.plan;
  const Workload& w = c.workload;
  json j = {{"train_batch_size", w.global_batch},
            {"train_micro_batch_size_per_gpu", p.micro_batch},
            {"gradient_accumulation_steps", mesh.num_micro_batches},
            {"bf16", {{"enabled", true}}},
            {"zero_optimization",
             {{"stage", effective_zero(p)},
              {"overlap_comm", p.overlap_grad_reduce},
              {"contiguous_gradients", true},
              {"reduce_scatter", true}}}};
  if (w.grad_dtype == GradDtype::BF16) j["data_types"] = {{"grad_accum_dtype", "bf16"}};
  if (p.tp > 1) j["tensor_parallel"] = {{"autotp_size", p.tp}};
  if (p.recompute != Recompute::None)
    j["activation_checkpointing"] = {{"partition_activations", p.sp},
                                     {"cpu_checkpointing", p.activation_offload_layers > 0},
                                     {"contiguous_memory_optimization", false}};
  return j;
}

// [SECTION] vLLM (v0.10 `vllm serve`) and SGLang (v0.4.9 `python -m sglang.launch_server`)

std::string hf_repo(const ModelSpec& m) {
  for (const HfRepo& r : k_hf_repos)
    if (m.name == r.preset) return r.repo;
  return "MODEL";
}

// vLLM's and SGLang's --quantization (both name the same methods) and what the checkpoint decides.
void weight_quantization(const Workload& w, const char* engine, std::vector<Flag>& f, std::vector<std::string>& notes) {
  const char* method = w.weight_dtype == WeightDtype::FP8     ? "fp8"
                       : w.weight_dtype == WeightDtype::FP4   ? "modelopt_fp4"
                       : w.weight_dtype == WeightDtype::MXFP4 ? "mxfp4"
                                                              : nullptr;
  if (method) f.push_back({"--quantization", {method}});
  if (w.weight_dtype == WeightDtype::INT4)
    notes.push_back(std::string("int4 weights: serve an AWQ or GPTQ checkpoint; ") + engine + " reads the quantization from it.");
  if (w.expert_weight_dtype != ExpertWeightDtype::Same)
    notes.push_back(std::string("experts in ") + name_of(w.expert_weight_dtype) +
                    ": serve a checkpoint that stores them so (gpt-oss: MXFP4); " + engine + " reads it from the checkpoint.");
}

// The engines' memory-share flags that give their KV pools cutlab's size: the pool per GPU
// (InferenceEstimate::kv_pool_bytes, workload.kv_cache_free_fraction × what the weights and the
// workspace leave) of the stage that bounds the sequences in flight, with its weights W and
// workspace A; HBM the GPU's memory, R the reserve cutlab keeps (CUDA context, NCCL), C = HBM − R.
// - vLLM v0.10 (v1/worker/gpu_worker.py determine_available_memory): KV = gpu_memory_utilization ×
//   the device's total memory − (weights + peak activations + non-torch memory), so
//   gpu_memory_utilization = (W + A + R + pool) / HBM; 1 when cutlab gives the KV cache all of it.
// - SGLang v0.4.9 (srt/model_executor/model_runner.py profile_max_num_token): KV = the memory free
//   after the weights load − (1 − mem_fraction_static) × the memory free before, so
//   mem_fraction_static = (W + pool) / C.
// Rounded down to 3 decimals: the engine's pool is then at most cutlab's (by < 0.001 × HBM).
struct MemoryShares {
  bool fits = false;  // the weights and workspace leave a pool
  double vllm_gpu_memory_utilization = 0;
  double sglang_mem_fraction_static = 0;
};

MemoryShares memory_shares(const Config& c) {
  MemoryShares m;
  const Result<Resolved> r = resolve(c);
  if (!r.ok()) return m;
  const InferenceEstimate e = estimate_inference(r.value);
  const std::size_t s = static_cast<std::size_t>(e.kv_bound_stage);
  if (!(e.kv_pool_bytes > 0) || s >= e.memory.per_stage.size()) return m;
  const StageMemory& sm = e.memory.per_stage[s];
  const double hbm = c.cluster.hbm_bytes, capacity = sm.capacity_bytes, pool = e.kv_pool_bytes;
  auto down = [](double x) { return std::floor(std::min(1.0, x) * 1000.0) / 1000.0; };
  m.fits = true;
  m.vllm_gpu_memory_utilization = down((sm.weights_bytes + sm.activations_bytes + (hbm - capacity) + pool) / hbm);
  m.sglang_mem_fraction_static = down((sm.weights_bytes + pool) / capacity);
  return m;
}

std::string memory_share_note(const char* engine, const char* flag, double value, double engine_default) {
  return std::string(engine) + "'s " + flag + " " + str(value) + " sizes its KV cache as cutlab's plan does (kv_cache_free_fraction " +
         "of what the weights and workspace leave); its default " + str(engine_default) +
         " leaves room for CUDA graphs and other buffers: lower kv_cache_free_fraction for such headroom.";
}

std::vector<Flag> vllm_flags(const Config& c, std::vector<std::string>& notes) {
  const Plan& p = c.plan;
  const Workload& w = c.workload;
  std::vector<Flag> f;
  auto add = [&](const char* name, std::vector<std::string> values = {}) { f.push_back({name, std::move(values)}); };
  add("--tensor-parallel-size", {str(p.tp)});
  if (p.pp > 1) add("--pipeline-parallel-size", {str(p.pp)});
  // EP in vLLM spans TP × DP of the attention (--enable-expert-parallel): cutlab's EP without
  // folding is data-parallel attention over ep replicas.
  const int dp = p.etp > 0 ? p.dp : p.ep * p.dp;
  if (dp > 1) add("--data-parallel-size", {str(dp)});
  if (p.ep > 1) add("--enable-expert-parallel");
  add("--max-num-seqs", {str(w.batch)});
  add("--max-num-batched-tokens", {str(w.max_num_tokens)});
  add("--max-model-len", {str(longest_context(w))});
  const int block = w.kv_block_tokens;
  if (block == 1 || block == 8 || block == 16 || block == 32 || block == 64 || block == 128) add("--block-size", {str(block)});
  else notes.push_back("vLLM's --block-size takes 1, 8, 16, 32, 64 or 128 tokens, not " + str(static_cast<long long>(block)) + ".");
  if (w.kv_dtype == KvDtype::FP8) add("--kv-cache-dtype", {"fp8"});
  const MemoryShares shares = memory_shares(c);
  if (shares.fits) {
    add("--gpu-memory-utilization", {str(shares.vllm_gpu_memory_utilization)});
    if (shares.vllm_gpu_memory_utilization > 0.95)
      notes.push_back(memory_share_note("vLLM", "--gpu-memory-utilization", shares.vllm_gpu_memory_utilization, 0.9));
  }
  weight_quantization(w, "vLLM", f, notes);
  if (w.spec_draft_tokens > 0)
    add("--speculative-config", {"'{\"method\": \"" + std::string(is_mla(c.model) ? "deepseek_mtp" : "eagle") +
                                 "\", \"num_speculative_tokens\": " + str(w.spec_draft_tokens) + "}'"});
  if (w.batching == Batching::Static) notes.push_back("vLLM always batches in flight; cutlab's static batch has no vLLM setting.");
  return f;
}

std::vector<Flag> sglang_flags(const Config& c, std::vector<std::string>& notes) {
  const Plan& p = c.plan;
  const Workload& w = c.workload;
  std::vector<Flag> f;
  auto add = [&](const char* name, std::vector<std::string> values = {}) { f.push_back({name, std::move(values)}); };
  // SGLang's --tp-size counts every GPU of an engine; with --enable-dp-attention the attention runs
  // as --dp-size copies of TP tp-size/dp-size, and --ep-size splits the experts over the engine.
  if (p.ep > 1 && p.etp == 0) {
    add("--tp-size", {str(static_cast<long long>(p.tp) * p.ep)});
    add("--dp-size", {str(p.ep)});
    add("--enable-dp-attention");
    add("--ep-size", {str(static_cast<long long>(p.tp) * p.ep)});
    if (p.tp > 1)
      notes.push_back("SGLang's EP splits whole experts over the engine's " + str(static_cast<long long>(p.tp) * p.ep) +
                      " GPUs; cutlab's experts keep TP " + str(p.tp) + " inside EP " + str(p.ep) + ".");
  } else {
    add("--tp-size", {str(p.tp)});
    if (p.ep > 1) add("--ep-size", {str(p.ep)});
  }
  if (p.pp > 1) add("--pp-size", {str(p.pp)});
  if (p.dp > 1) notes.push_back("Run " + str(p.dp) + " engines behind SGLang's router (python -m sglang_router.launch_router).");
  add("--max-running-requests", {str(static_cast<long long>(w.batch) * p.pp)});
  add("--chunked-prefill-size", {str(w.max_num_tokens)});
  add("--context-length", {str(longest_context(w))});
  add("--page-size", {str(w.kv_block_tokens)});
  if (w.kv_dtype == KvDtype::FP8) add("--kv-cache-dtype", {"fp8_e4m3"});
  const MemoryShares shares = memory_shares(c);
  if (shares.fits) add("--mem-fraction-static", {str(shares.sglang_mem_fraction_static)});
  weight_quantization(w, "SGLang", f, notes);
  if (w.spec_draft_tokens > 0) {
    add("--speculative-algorithm", {is_mla(c.model) ? "NEXTN" : "EAGLE"});
    add("--speculative-num-steps", {str(w.spec_draft_tokens)});
    add("--speculative-num-draft-tokens", {str(w.spec_draft_tokens + 1)});
  }
  if (w.batching == Batching::Static) notes.push_back("SGLang always batches in flight; cutlab's static batch has no SGLang setting.");
  return f;
}

// A name as one line of a comment: control characters (a newline would end the comment) become spaces.
std::string one_line(std::string s) {
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
  return s;
}

std::string describe(const Config& c) {
  return one_line(c.model.name + " on " + str(config_gpus(c)) + " × " + c.cluster.gpu + " (" + c.cluster.name + ")");
}

// The "# cutlab:" line: the model, the cluster and what the framework's own settings lost.
json cutlab_line(const Config& c, const json& read_plan, const json& read_workload, std::vector<std::string>& unexpressed) {
  json line = {{"model", preset_or_object(c.model)}};
  json cluster = preset_or_object(c.cluster);
  if (cluster.is_string()) cluster = json{{"preset", cluster}};
  cluster["gpus"] = config_gpus(c);
  line["cluster"] = cluster;
  const json plan = differing(to_json(c.plan), read_plan), workload = differing(to_json(c.workload), read_workload);
  for (auto it = plan.begin(); it != plan.end(); ++it) unexpressed.push_back("/plan/" + it.key());
  for (auto it = workload.begin(); it != workload.end(); ++it) unexpressed.push_back("/workload/" + it.key());
  if (!plan.empty()) line["plan"] = plan;
  if (!workload.empty()) line["workload"] = workload;
  return line;
}

// What a framework's file alone says, read back through cutlab's reader on top of the config's
// own model and cluster (so that unit defaults and derived dp come out as they would).
std::pair<json, json> reread(const Config& c, const json& file_config) {
  json full = {{"model", to_json(c.model)}, {"cluster", to_json(c.cluster)}};
  if (file_config.contains("plan")) full["plan"] = file_config["plan"];
  if (file_config.contains("workload")) full["workload"] = file_config["workload"];
  const Result<Config> r = config_from_json(full);
  return {to_json(r.value.plan), to_json(r.value.workload)};
}

// [SECTION] import: Megatron-LM arguments

struct Token {
  std::string text;
  int line = 0;
};

// Shell-like words with their lines: quotes, backslash-newline continuations, # comments (the
// "# cutlab:" line is kept aside).
bool tokenize(const std::string& text, std::vector<Token>& out, std::string& cutlab, int& cutlab_line, Errors& errors) {
  int line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    const char ch = text[i];
    if (ch == '\n') {
      ++line, ++i;
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\r') {
      ++i;
      continue;
    }
    if (ch == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      ++i;
      continue;
    }
    if (ch == '#') {
      const std::size_t end = std::min(text.find('\n', i), text.size());
      const std::string comment = text.substr(i, end - i);
      if (comment.rfind("# cutlab:", 0) == 0) {
        cutlab = comment.substr(9);
        cutlab_line = line;
      }
      i = end;
      continue;
    }
    Token t{"", line};
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r') {
      const char q = text[i];
      if (q == '"' || q == '\'') {
        const std::size_t close = text.find(q, i + 1);
        if (close == std::string::npos) {
          errors.push_back({ErrorCode::ParseError, "line " + std::to_string(line), "unterminated quote"});
          return false;
        }
        t.text += text.substr(i + 1, close - i - 1);
        line += static_cast<int>(std::count(text.begin() + static_cast<long>(i), text.begin() + static_cast<long>(close), '\n'));
        i = close + 1;
      } else if (q == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
        break;
      } else {
        t.text += q;
        ++i;
      }
    }
    out.push_back(t);
    if (out.size() > 100000) {
      errors.push_back({ErrorCode::ParseError, "line " + std::to_string(line), "more than 100,000 words"});
      return false;
    }
  }
  return true;
}

struct ReadFlag {
  std::vector<std::string> values;
  int line = 0;
};

// Reads an integer (or number) value of a flag, with an error naming the line and the flag.
bool flag_int(const std::map<std::string, ReadFlag>& flags, const std::string& name, long long& out, Errors& errors) {
  const auto it = flags.find(name);
  if (it == flags.end()) return false;
  const std::string where = "line " + std::to_string(it->second.line) + ": " + name;
  if (it->second.values.size() != 1) {
    errors.push_back({ErrorCode::WrongType, where, name + " takes one integer"});
    return false;
  }
  char* end = nullptr;
  const long long v = std::strtoll(it->second.values[0].c_str(), &end, 10);
  if (*end != '\0' || it->second.values[0].empty() || v < 0 || v > (1LL << 31)) {
    errors.push_back({ErrorCode::WrongType, where, name + " must be a non-negative integer, got '" + it->second.values[0] + "'"});
    return false;
  }
  out = v;
  return true;
}

std::string flag_word(const std::map<std::string, ReadFlag>& flags, const std::string& name, const std::vector<std::string>& allowed,
                      Errors& errors) {
  const auto it = flags.find(name);
  if (it == flags.end()) return "";
  const std::string v = it->second.values.size() == 1 ? it->second.values[0] : "";
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    std::string list;
    for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
    errors.push_back({ErrorCode::OutOfRange, "line " + std::to_string(it->second.line) + ": " + name,
                      name + " takes one of " + list + (v.empty() ? "" : ", got '" + v + "'")});
    return "";
  }
  return v;
}

json read_megatron(const std::map<std::string, ReadFlag>& flags, Errors& errors) {
  json plan = json::object(), workload = json::object(), model = json::object();
  auto has = [&](const char* n) { return flags.count(n) > 0; };
  long long v = 0;
  auto integer = [&](const char* flag, json& section, const char* key) {
    if (flag_int(flags, flag, v, errors)) section[key] = v;
  };
  // The model, where the file gives it.
  integer("--num-layers", model, "layers");
  integer("--hidden-size", model, "hidden");
  integer("--ffn-hidden-size", model, "ffn_hidden");
  integer("--num-attention-heads", model, "heads");
  integer("--num-query-groups", model, "kv_heads");
  integer("--kv-channels", model, "head_dim");
  integer("--qk-head-dim", model, "head_dim");
  integer("--vocab-size", model, "vocab");
  integer("--num-experts", model, "experts");
  integer("--moe-router-topk", model, "top_k");
  integer("--moe-ffn-hidden-size", model, "expert_ffn_hidden");
  integer("--q-lora-rank", model, "q_lora_rank");
  integer("--kv-lora-rank", model, "kv_lora_rank");
  integer("--qk-pos-emb-head-dim", model, "qk_rope_head_dim");
  integer("--v-head-dim", model, "v_head_dim");
  integer("--mtp-num-layers", model, "mtp_layers");
  if (flag_int(flags, "--moe-shared-expert-intermediate-size", v, errors) && model.contains("expert_ffn_hidden") &&
      model["expert_ffn_hidden"].get<long long>() > 0)
    model["shared_experts"] = v / model["expert_ffn_hidden"].get<long long>();
  if (model.contains("heads") && !has("--group-query-attention") && !has("--multi-latent-attention"))
    model["kv_heads"] = model["heads"];
  if (!model.empty()) {
    model["gated_mlp"] = has("--swiglu");
    model["tied_embeddings"] = !has("--untie-embeddings-and-output-weights");
  }
  // The cut.
  integer("--tensor-model-parallel-size", plan, "tp");
  integer("--pipeline-model-parallel-size", plan, "pp");
  integer("--context-parallel-size", plan, "cp");
  integer("--expert-model-parallel-size", plan, "ep");
  integer("--expert-tensor-parallel-size", plan, "etp");
  if (flag_int(flags, "--num-virtual-stages-per-pipeline-rank", v, errors) && v > 1) {
    plan["vpp"] = v;
    plan["schedule"] = "interleaved";
  }
  if (has("--num-layers-per-virtual-pipeline-stage")) plan["schedule"] = "interleaved";  // vpp set once the layers are known
  const std::string cp_comm = flag_word(flags, "--cp-comm-type", {"p2p", "all_gather", "a2a"}, errors);
  if (!cp_comm.empty()) plan["cp_comm"] = cp_comm == "p2p" ? "ring" : cp_comm == "all_gather" ? "allgather" : "a2a";
  plan["sp"] = has("--sequence-parallel");
  plan["embedding_in_pipeline_split"] = has("--account-for-embedding-in-pipeline-split");
  plan["loss_in_pipeline_split"] = has("--account-for-loss-in-pipeline-split");
  const std::string granularity = flag_word(flags, "--recompute-granularity", {"full", "selective"}, errors);
  plan["recompute"] = granularity.empty() ? "none" : granularity;
  if (has("--recompute-modules")) plan["recompute_modules"] = flags.at("--recompute-modules").values;
  if (has("--cpu-offloading")) {
    long long n = 1;
    flag_int(flags, "--cpu-offloading-num-layers", n, errors);
    plan["activation_offload_layers"] = n;
  }
  const bool distributed_optimizer = has("--use-distributed-optimizer");
  if (has("--use-torch-fsdp2")) plan["zero"] = 3;
  plan["distributed_optimizer"] = distributed_optimizer;
  plan["overlap_grad_reduce"] = has("--overlap-grad-reduce");
  if (distributed_optimizer) plan["overlap_param_gather"] = has("--overlap-param-gather");
  plan["tp_comm_overlap"] = has("--tp-comm-overlap");
  plan["ep_comm_overlap"] = has("--overlap-moe-expert-parallel-comm");
  plan["moe_shared_expert_overlap"] = has("--moe-shared-expert-overlap");
  const std::string backend = flag_word(flags, "--attention-backend", {"flash", "fused", "unfused", "local", "auto"}, errors);
  plan["flash_attention"] = backend != "unfused" && backend != "local";
  plan["fused_cross_entropy"] = has("--cross-entropy-loss-fusion");
  const std::string dispatcher = flag_word(flags, "--moe-token-dispatcher-type", {"allgather", "alltoall", "flex"}, errors);
  plan["ep_dispatcher"] = dispatcher == "flex" && has("--moe-enable-deepep") ? "deepep"
                          : dispatcher == "allgather"                        ? "allgather"
                                                                             : "alltoall";
  if (has("--moe-expert-capacity-factor")) {
    const std::string& s = flags.at("--moe-expert-capacity-factor").values.empty()
                               ? ""
                               : flags.at("--moe-expert-capacity-factor").values[0];
    char* end = nullptr;
    const double cf = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !(cf >= 0 && cf < 1e6))
      errors.push_back({ErrorCode::WrongType,
                        "line " + std::to_string(flags.at("--moe-expert-capacity-factor").line) + ": --moe-expert-capacity-factor",
                        "--moe-expert-capacity-factor must be a number, got '" + s + "'"});
    else plan["moe_capacity_factor"] = cf;
  }
  plan["moe_pad_to_capacity"] = has("--moe-pad-expert-input-to-capacity");
  integer("--micro-batch-size", plan, "micro_batch");
  // Precision and the batch.
  workload["mode"] = "train";
  workload["dtype"] = has("--fp8-format") ? "fp8" : "bf16";
  workload["grad_dtype"] = has("--grad-reduce-in-bf16") ? "bf16" : "fp32";
  const std::string avg = flag_word(flags, "--exp-avg-dtype", {"fp32", "fp16", "bf16", "fp8"}, errors);
  workload["moment_dtype"] = has("--use-precision-aware-optimizer") && avg == "bf16" ? "bf16" : "fp32";
  integer("--global-batch-size", workload, "global_batch");
  integer("--seq-length", workload, "seq_len");
  json out = {{"plan", plan}, {"workload", workload}};
  if (!model.empty()) out["model"] = model;
  return out;
}

// Uneven first and last stages (--decoder-first/last-pipeline-num-layers): the rest split evenly.
void megatron_stages(const std::map<std::string, ReadFlag>& flags, int layers, json& plan, Errors& errors) {
  long long first = -1, last = -1, pp = plan.value("pp", 1), per_chunk = 0;
  flag_int(flags, "--decoder-first-pipeline-num-layers", first, errors);
  flag_int(flags, "--decoder-last-pipeline-num-layers", last, errors);
  if (flag_int(flags, "--num-layers-per-virtual-pipeline-stage", per_chunk, errors) && per_chunk > 0) {
    const long long split = layers + (plan.value("embedding_in_pipeline_split", false) ? 1 : 0) +
                            (plan.value("loss_in_pipeline_split", false) ? 1 : 0);
    if (split % (pp * per_chunk) != 0)
      errors.push_back({ErrorCode::Incompatible,
                        "line " + std::to_string(flags.at("--num-layers-per-virtual-pipeline-stage").line) +
                            ": --num-layers-per-virtual-pipeline-stage",
                        std::to_string(per_chunk) + " layers per virtual stage do not divide " + std::to_string(split) +
                            " layers over " + std::to_string(pp) + " stages"});
    else plan["vpp"] = split / (pp * per_chunk);
  }
  if (first < 0 && last < 0) return;
  const int given = (first >= 0) + (last >= 0);
  const long long rest = layers - std::max(first, 0LL) - std::max(last, 0LL);
  const long long others = pp - given;
  const std::string where = "line " +
                            std::to_string(
                                flags.at(first >= 0 ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers")
                                    .line) +
                            ": " + (first >= 0 ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers");
  if (pp < 2 || rest < 0 || (others == 0 && rest != 0) || (others > 0 && rest % others != 0)) {
    errors.push_back({ErrorCode::Incompatible, where,
                      "the first and last stages' layers leave " + std::to_string(rest) + " of " + std::to_string(layers) +
                          " layers, which do not split evenly over the other " + std::to_string(others) + " stages"});
    return;
  }
  json l = json::array();
  for (long long s = 0; s < pp; ++s)
    l.push_back(s == 0 && first >= 0 ? first : s == pp - 1 && last >= 0 ? last : (others > 0 ? rest / others : 0));
  plan["layers_per_stage"] = l;
}

// Flags every launch script carries that say nothing about the cut (not reported as ignored).
bool quiet_flag(const std::string& name) {
  static const char* prefixes[] = {"--lr",          "--min-lr",      "--train-",    "--data-",        "--save",  "--load",
                                   "--log",         "--eval",        "--tokenizer", "--weight-decay", "--adam-", "--clip-grad",
                                   "--init-method", "--tensorboard", "--wandb",     "--split",        "--nproc", "--nnodes",
                                   "--node-rank",   "--master",      "--rdzv",      "--seed",         "--exit-"};
  for (const char* p : prefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

// Layers of the model a config names (a preset name, {"preset": …} or an object with "layers").
int model_layers(const json& model) {
  if (model.is_string()) {
    const auto m = find_model_preset(model.get<std::string>());
    return m ? m->layers : 0;
  }
  if (!model.is_object()) return 0;
  if (model.contains("layers") && model["layers"].is_number_integer()) return model["layers"].get<int>();
  if (model.contains("preset") && model["preset"].is_string()) return model_layers(model["preset"]);
  return 0;
}

// The model a file's own settings describe, over the "# cutlab:" line's preset: a preset with the
// fields the file changes, or the file's model alone.
json merge_model(const json& line_model, const json& file_model) {
  if (line_model.is_null()) {
    if (file_model.empty()) return json();
    for (const ModelPreset& p : model_presets()) {  // a preset whose every field the file gives as it is
      const json spec = to_json(p.spec);
      bool same = true;
      for (auto it = file_model.begin(); it != file_model.end() && same; ++it)
        same = spec.contains(it.key()) && spec[it.key()] == it.value();
      if (same) return p.spec.name;
    }
    return file_model;
  }
  std::string preset;
  if (line_model.is_string()) preset = line_model.get<std::string>();
  else if (line_model.is_object() && line_model.contains("preset") && line_model["preset"].is_string()) preset = line_model["preset"];
  const auto spec = preset.empty() ? std::nullopt : find_model_preset(preset);
  json out = line_model.is_string() ? json{{"preset", preset}} : line_model;
  const json base = spec ? to_json(*spec) : out;
  bool changed = false;
  for (auto it = file_model.begin(); it != file_model.end(); ++it)
    if (!base.contains(it.key()) || base[it.key()] != it.value()) out[it.key()] = it.value(), changed = true;
  return changed || !line_model.is_string() ? out : line_model;
}

// [SECTION] import: torchtitan TOML

json read_torchtitan(const TomlDocument& doc, Errors& errors, std::vector<std::string>& notes) {
  json plan = json::object(), workload = {{"mode", "train"}}, out = json::object();
  auto where = [&](const std::string& table, const std::string& key) {
    const auto it = doc.lines.find(table + "." + key);
    return "line " + std::to_string(it == doc.lines.end() ? 0 : it->second) + ": [" + table + "] " + key;
  };
  auto get = [&](const std::string& table, const std::string& key) -> const json* {
    if (!doc.tables.contains(table) || !doc.tables[table].contains(key)) return nullptr;
    return &doc.tables[table][key];
  };
  auto integer = [&](const std::string& table, const std::string& key, long long fallback) {
    const json* v = get(table, key);
    if (!v) return fallback;
    if (!v->is_number_integer() || v->get<long long>() < -1 || v->get<long long>() > (1LL << 31)) {
      errors.push_back({ErrorCode::WrongType, where(table, key), key + " must be an integer"});
      return fallback;
    }
    return v->get<long long>();
  };
  auto word = [&](const std::string& table, const std::string& key, const std::vector<std::string>& allowed) -> std::string {
    const json* v = get(table, key);
    if (!v) return "";
    if (v->is_string() && std::find(allowed.begin(), allowed.end(), v->get<std::string>()) != allowed.end()) return *v;
    std::string list;
    for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
    errors.push_back({ErrorCode::OutOfRange, where(table, key), key + " takes one of " + list});
    return "";
  };
  // [model]
  const std::string name = word("model", "name", {"llama3", "llama4", "deepseek_v3", "qwen3", "MODEL"});
  const json* flavor = get("model", "flavor");
  if (!name.empty() && flavor && flavor->is_string())
    for (const TitanModel& tm : k_titan_models)
      if (name == tm.name && *flavor == tm.flavor) out["model"] = tm.preset;
  if (const json* conv = get("model", "converters"); conv && conv->is_array())
    workload["dtype"] = std::find(conv->begin(), conv->end(), json("float8")) != conv->end() ? "fp8" : "bf16";
  // [parallelism]
  const long long tp = integer("parallelism", "tensor_parallel_degree", 1), pp = integer("parallelism", "pipeline_parallel_degree", 1);
  const long long cp = integer("parallelism", "context_parallel_degree", 1), ep = integer("parallelism", "expert_parallel_degree", 1);
  const long long replicate = integer("parallelism", "data_parallel_replicate_degree", 1);
  const long long shard = integer("parallelism", "data_parallel_shard_degree", -1);
  plan["tp"] = tp, plan["pp"] = pp, plan["cp"] = cp, plan["ep"] = ep;
  if (get("parallelism", "expert_tensor_parallel_degree")) plan["etp"] = integer("parallelism", "expert_tensor_parallel_degree", 1);
  plan["zero"] = shard != 1 ? 3 : 0;
  if (replicate > 1 && shard > 1) notes.push_back("HSDP (replicate × shard): cutlab shards over the whole data-parallel group");
  if (shard != -1) {
    const long long total = replicate * shard;
    const long long per = plan.contains("etp") ? 1 : ep;
    if (per > 0 && total % per == 0) plan["dp"] = total / per;
    else
      errors.push_back({ErrorCode::Incompatible, where("parallelism", "expert_parallel_degree"),
                        "expert_parallel_degree must divide the data-parallel degree " + std::to_string(total)});
  }
  const std::string reshard = word("parallelism", "fsdp_reshard_after_forward", {"default", "always", "never"});
  if (shard != 1) plan["reshard_after_forward"] = reshard == "never" ? false : reshard == "always" ? true : pp == 1;
  plan["sp"] = tp > 1;  // torchtitan's TP plan shards the norms' activations by sequence (SequenceParallel)
  if (const json* v = get("parallelism", "enable_async_tensor_parallel")) {
    plan["tp_comm_overlap"] = v->is_boolean() && v->get<bool>();
    plan["tp_comm_overlap_sms"] = 0;  // torch's async TP copies with the copy engines (core/plan.h)
  }
  const std::string schedule = word("parallelism", "pipeline_parallel_schedule",
                                    {"GPipe", "1F1B", "Interleaved1F1B", "DualPipeV", "InterleavedZeroBubble", "ZBVZeroBubble",
                                     "LoopedBFS"});
  if (schedule == "GPipe") plan["schedule"] = "gpipe";
  else if (schedule == "Interleaved1F1B" || schedule == "LoopedBFS" || schedule == "InterleavedZeroBubble")
    plan["schedule"] = "interleaved";
  else if (schedule == "DualPipeV" || schedule == "ZBVZeroBubble") plan["schedule"] = "dualpipe";
  else plan["schedule"] = "1f1b";
  if (!schedule.empty() && schedule != "GPipe" && schedule != "1F1B" && schedule != "Interleaved1F1B" && schedule != "DualPipeV")
    notes.push_back("pipeline_parallel_schedule " + schedule + " read as cutlab's " + plan["schedule"].get<std::string>());
  const long long micro = pp > 1 ? integer("parallelism", "pipeline_parallel_microbatch_size", 1)
                                 : integer("training", "local_batch_size", 8);
  plan["micro_batch"] = micro;
  if (cp > 1) {
    const std::string rotate = word("parallelism", "context_parallel_rotate_method", {"allgather", "alltoall"});
    plan["cp_comm"] = rotate == "alltoall" ? "ring" : "allgather";
  }
  // [activation_checkpoint]
  const std::string mode = word("activation_checkpoint", "mode", {"none", "selective", "full"});
  const json* option = get("activation_checkpoint", "selective_ac_option");
  if (mode == "selective" && option && *option != json("op"))
    notes.push_back("selective_ac_option " + option->dump() + " (every n-th layer) read as per-op SAC");
  plan["recompute"] = mode == "full" ? "full" : mode == "selective" ? "op_sac" : "none";
  // [training]
  plan["fused_cross_entropy"] = false;  // torchtitan's loss: PyTorch cross entropy on fp32 logits
  const std::string reduce = word("training", "mixed_precision_reduce", {"float32", "bfloat16"});
  workload["grad_dtype"] = reduce == "bfloat16" ? "bf16" : "fp32";
  if (get("training", "seq_len")) workload["seq_len"] = integer("training", "seq_len", 2048);
  const long long global = integer("training", "global_batch_size", -1);
  if (global > 0) workload["global_batch"] = global;
  else if (plan.contains("dp"))
    workload["global_batch"] = integer("training", "local_batch_size", 8) * plan["dp"].get<long long>() *
                               (plan.contains("etp") ? 1 : ep);
  out["plan"] = plan;
  out["workload"] = workload;
  const long long layers_per_stage = integer("parallelism", "pipeline_parallel_layers_per_stage", 0);
  if (layers_per_stage > 0) out["layers_per_virtual_stage"] = layers_per_stage;  // resolved once the model is known
  return out;
}

}  // namespace

const char* name_of(LaunchFormat f) {
  for (const FormatName& n : k_formats)
    if (n.format == f) return n.name;
  return "";
}

bool launch_format_from_name(const std::string& name, LaunchFormat& out) {
  for (const FormatName& n : k_formats)
    if (name == n.name) {
      out = n.format;
      return true;
    }
  return false;
}

std::string launch_format_list() {
  std::string s;
  for (const FormatName& n : k_formats) s += (s.empty() ? "" : ", ") + std::string(n.name);
  return s;
}

// [SECTION] export

Result<LaunchConfig> export_launch(const Config& c, LaunchFormat format) {
  Result<LaunchConfig> r;
  LaunchConfig& out = r.value;
  out.format = format;
  const bool serving = c.workload.mode == Mode::Infer;
  if (serving != serving_format(format)) {
    r.errors.push_back({ErrorCode::Incompatible, "/workload/mode",
                        std::string(name_of(format)) + (serving ? " launches training; a serving plan exports --to vllm or sglang"
                                                                : " serves a model; a training plan exports --to megatron, "
                                                                  "megatron-bridge, torchtitan or deepspeed")});
    return r;
  }
  const Mesh mesh = derive_mesh(c.plan, c.workload);
  const std::string what = describe(c);
  switch (format) {
    case LaunchFormat::Megatron: {
      const std::vector<Flag> flags = megatron_flags(c);
      json file = {{"plan", json::object()}, {"workload", json::object()}};
      std::map<std::string, ReadFlag> read;
      for (const Flag& f : flags) read[f.name] = {f.values, 0};
      Errors ignored;
      json cfg = read_megatron(read, ignored);
      megatron_stages(read, c.model.layers, cfg["plan"], ignored);
      const auto [plan, workload] = reread(c, cfg);
      const json line = cutlab_line(c, plan, workload, out.unexpressed);
      out.file_name = "megatron-args.sh";
      out.text = "# Megatron-LM arguments (core_r0.13.0 megatron/training/arguments.py) for " + what +
                 ":\n# torchrun --nproc-per-node " + str(static_cast<long long>(c.cluster.gpus_per_node)) + " --nnodes " +
                 str((config_gpus(c) + c.cluster.gpus_per_node - 1) / c.cluster.gpus_per_node) +
                 " pretrain_gpt.py \\ (then these; data, tokenizer and learning rate are yours)\n# cutlab: " +
                 line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n" + flags_text(flags, "  ");
      break;
    }
    case LaunchFormat::MegatronBridge: {
      out.file_name = "megatron-bridge-overrides.txt";
      out.text = "# Megatron-Bridge (v0.1) config overrides for " + what + ",\n# after the recipe's arguments, e.g.\n" +
                 "# torchrun --nproc-per-node " + str(static_cast<long long>(c.cluster.gpus_per_node)) +
                 " scripts/training/run_recipe.py --recipe RECIPE \\\n";
      const std::vector<std::string> overrides = bridge_overrides(megatron_flags(c));
      for (std::size_t i = 0; i < overrides.size(); ++i) out.text += "  " + overrides[i] + (i + 1 < overrides.size() ? " \\\n" : "\n");
      break;
    }
    case LaunchFormat::Torchtitan: {
      const TomlTables tables = titan_tables(c, mesh);
      const std::string body = toml_text(tables);
      const Result<TomlDocument> doc = parse_toml(body);
      Errors ignored;
      std::vector<std::string> notes;
      json cfg = read_torchtitan(doc.value, ignored, notes);
      if (cfg.contains("layers_per_virtual_stage")) {
        const long long per = cfg["layers_per_virtual_stage"];
        cfg["plan"]["vpp"] = pipeline_split_layers(c.model, c.plan) / (c.plan.pp * per);
      }
      const auto [plan, workload] = reread(c, cfg);
      const json line = cutlab_line(c, plan, workload, out.unexpressed);
      out.file_name = "torchtitan.toml";
      out.text = "# torchtitan job config (v0.1.0 torchtitan/config/job_config.py; DualPipeV: main after v0.1.0) for " + what +
                 "\n# cutlab: " + line.dump(-1, ' ', false, json::error_handler_t::replace) +
                 "\n\n[job]\ndescription = " + toml_quoted("cutlab: " + what) + "\n" + body;
      break;
    }
    case LaunchFormat::DeepSpeed: {
      out.file_name = "ds_config.json";
      out.text = deepspeed_config(c, mesh).dump(2) + "\n";
      if (c.plan.pp > 1)
        out.notes.push_back("PP " + str(c.plan.pp) + ": deepspeed.pipe.PipelineModule(layers, num_stages=" + str(c.plan.pp) +
                            ") in the model code.");
      if (c.plan.cp > 1)
        out.notes.push_back("CP " + str(c.plan.cp) + ": DeepSpeed-Ulysses sequence_parallel_size in the model's process groups.");
      if (c.plan.ep > 1)
        out.notes.push_back("EP " + str(c.plan.ep) + ": deepspeed.moe.layer.MoE(..., ep_size=" + str(c.plan.ep) + ").");
      if (c.workload.dtype == Dtype::FP8)
        out.notes.push_back("fp8 GEMMs: Transformer Engine layers in the model; the config stays bf16.");
      if (c.plan.recompute != Recompute::None)
        out.notes.push_back("recompute: deepspeed.checkpointing.checkpoint around each layer (full recompute).");
      break;
    }
    case LaunchFormat::Vllm: {
      const std::vector<Flag> flags = vllm_flags(c, out.notes);
      out.file_name = "vllm-serve.sh";
      out.text = "# vllm serve (vLLM v0.10) for " + what + "\nvllm serve " + hf_repo(c.model) + " \\\n" + flags_text(flags, "  ");
      break;
    }
    case LaunchFormat::Sglang: {
      const std::vector<Flag> flags = sglang_flags(c, out.notes);
      out.file_name = "sglang-launch.sh";
      out.text = "# SGLang (v0.4.9 srt/server_args.py) for " + what + "\npython -m sglang.launch_server --model-path " +
                 hf_repo(c.model) + " \\\n" + flags_text(flags, "  ");
      break;
    }
  }
  if ((serving_format(format)) && hf_repo(c.model) == "MODEL")
    out.notes.push_back("MODEL: the Hugging Face repository of " + c.model.name + ".");
  if (format == LaunchFormat::Torchtitan && out.text.find("\"MODEL\"") != std::string::npos)
    out.notes.push_back("[model] name and flavor: torchtitan ships no " + c.model.name + "; write its model definition.");
  for (const std::string& path : out.unexpressed)
    out.notes.push_back(path.substr(1) + ": no " + std::string(name_of(format)) + " setting; kept in the # cutlab: line");
  return r;
}

// [SECTION] import

Result<ImportedConfig> import_launch(const std::string& text, LaunchFormat format) {
  Result<ImportedConfig> r;
  Errors& errors = r.errors;
  if (format != LaunchFormat::Megatron && format != LaunchFormat::Torchtitan) {
    errors.push_back({ErrorCode::OutOfRange, "--from", "import reads megatron or torchtitan, not " + std::string(name_of(format))});
    return r;
  }
  if (text.size() > k_max_toml_bytes || text.find('\0') != std::string::npos) {
    errors.push_back({ErrorCode::ParseError, "line 1", "not a launch file: larger than 1 MiB or holding a NUL byte"});
    return r;
  }
  // The "# cutlab:" line, wherever it is.
  std::string line_text;
  int line_no = 0;
  {
    // Line by line as std::getline splits (no line after a final '\n'), without iostreams.
    std::size_t at = 0;
    for (int n = 1; at < text.size(); ++n) {
      const std::size_t end = std::min(text.find('\n', at), text.size());
      if (text.compare(at, 9, "# cutlab:") == 0) {
        line_text = text.substr(at + 9, end - at - 9);
        line_no = n;
      }
      at = end + 1;
    }
  }
  json line = json::object();
  if (!line_text.empty()) {
    Errors parse;
    line = parse_strict(line_text, parse);
    if (!parse.empty() || !line.is_object()) {
      errors.push_back({ErrorCode::ParseError, "line " + std::to_string(line_no) + ": # cutlab:",
                        "the # cutlab: line must hold one JSON object" + (parse.empty() ? "" : " (" + parse[0].message + ")")});
      return r;
    }
  }
  json cfg;
  if (format == LaunchFormat::Megatron) {
    std::vector<Token> tokens;
    std::string ignored_line;
    int ignored_no = 0;
    if (!tokenize(text, tokens, ignored_line, ignored_no, errors)) return r;
    std::map<std::string, ReadFlag> flags;
    std::size_t i = 0;
    while (i < tokens.size() && tokens[i].text.rfind("--", 0) != 0) ++i;  // torchrun … pretrain_gpt.py
    for (; i < tokens.size(); ++i) {
      std::string name = tokens[i].text;
      if (name.rfind("--", 0) != 0) {
        if (name == "\"" || name.empty()) continue;
        errors.push_back(
            {ErrorCode::ParseError, "line " + std::to_string(tokens[i].line) + ": " + name, "a value without a flag before it"});
        continue;
      }
      ReadFlag f{{}, tokens[i].line};
      if (const std::size_t eq = name.find('='); eq != std::string::npos) {
        f.values.push_back(name.substr(eq + 1));
        name = name.substr(0, eq);
      }
      while (i + 1 < tokens.size() && tokens[i + 1].text.rfind("--", 0) != 0) f.values.push_back(tokens[++i].text);
      if (flags.count(name)) {
        errors.push_back({ErrorCode::ParseError, "line " + std::to_string(f.line) + ": " + name,
                          name + " is given twice (first on line " + std::to_string(flags[name].line) + ")"});
        continue;
      }
      flags[name] = f;
    }
    cfg = read_megatron(flags, errors);
    static const char* read_flags[] = {"--num-layers",
                                       "--hidden-size",
                                       "--ffn-hidden-size",
                                       "--num-attention-heads",
                                       "--num-query-groups",
                                       "--kv-channels",
                                       "--qk-head-dim",
                                       "--vocab-size",
                                       "--num-experts",
                                       "--moe-router-topk",
                                       "--moe-ffn-hidden-size",
                                       "--q-lora-rank",
                                       "--kv-lora-rank",
                                       "--qk-pos-emb-head-dim",
                                       "--v-head-dim",
                                       "--mtp-num-layers",
                                       "--moe-shared-expert-intermediate-size",
                                       "--group-query-attention",
                                       "--multi-latent-attention",
                                       "--swiglu",
                                       "--untie-embeddings-and-output-weights",
                                       "--tensor-model-parallel-size",
                                       "--pipeline-model-parallel-size",
                                       "--context-parallel-size",
                                       "--expert-model-parallel-size",
                                       "--expert-tensor-parallel-size",
                                       "--num-virtual-stages-per-pipeline-rank",
                                       "--num-layers-per-virtual-pipeline-stage",
                                       "--decoder-first-pipeline-num-layers",
                                       "--decoder-last-pipeline-num-layers",
                                       "--cp-comm-type",
                                       "--sequence-parallel",
                                       "--account-for-embedding-in-pipeline-split",
                                       "--account-for-loss-in-pipeline-split",
                                       "--recompute-granularity",
                                       "--recompute-method",
                                       "--recompute-num-layers",
                                       "--recompute-modules",
                                       "--cpu-offloading",
                                       "--cpu-offloading-num-layers",
                                       "--use-distributed-optimizer",
                                       "--use-torch-fsdp2",
                                       "--overlap-grad-reduce",
                                       "--overlap-param-gather",
                                       "--tp-comm-overlap",
                                       "--overlap-moe-expert-parallel-comm",
                                       "--moe-shared-expert-overlap",
                                       "--attention-backend",
                                       "--cross-entropy-loss-fusion",
                                       "--moe-token-dispatcher-type",
                                       "--moe-enable-deepep",
                                       "--moe-expert-capacity-factor",
                                       "--moe-pad-expert-input-to-capacity",
                                       "--micro-batch-size",
                                       "--bf16",
                                       "--fp8-format",
                                       "--grad-reduce-in-bf16",
                                       "--use-precision-aware-optimizer",
                                       "--exp-avg-dtype",
                                       "--exp-avg-sq-dtype",
                                       "--global-batch-size",
                                       "--seq-length"};
    for (const auto& [name, f] : flags)
      if (std::find(std::begin(read_flags), std::end(read_flags), name) == std::end(read_flags) && !quiet_flag(name))
        r.value.notes.push_back("line " + std::to_string(f.line) + ": " + name + " is not read (no cutlab setting)");
    const json file_model = cfg.contains("model") ? cfg["model"] : json::object();
    const json model = merge_model(line.contains("model") ? line["model"] : json(), file_model);
    if (!model.is_null()) cfg["model"] = model;
    else cfg.erase("model");
    megatron_stages(flags, model_layers(cfg.contains("model") ? cfg["model"] : json()), cfg["plan"], errors);
  } else {
    const Result<TomlDocument> doc = parse_toml(text);
    if (!doc.ok()) {
      r.errors = doc.errors;
      return r;
    }
    cfg = read_torchtitan(doc.value, errors, r.value.notes);
    if (line.contains("model")) cfg["model"] = line["model"];
    if (cfg.contains("layers_per_virtual_stage")) {
      const long long per = cfg["layers_per_virtual_stage"];
      cfg.erase("layers_per_virtual_stage");
      const long long pp = cfg["plan"].value("pp", 1LL);
      const int layers = cfg.contains("model") ? model_layers(cfg["model"]) : 0;
      const json& lp = line.contains("plan") ? line["plan"] : json::object();
      const long long split = layers + (lp.value("embedding_in_pipeline_split", false) ? 1 : 0) +
                              (lp.value("loss_in_pipeline_split", false) ? 1 : 0);
      if (layers > 0 && split % (pp * per) == 0) cfg["plan"]["vpp"] = split / (pp * per);
    }
  }
  if (line.contains("cluster")) cfg["cluster"] = line["cluster"];
  // The line's cluster carries the GPU count: dp follows from it unless the file or the line sets it.
  for (const char* section : {"plan", "workload"})
    if (line.contains(section) && line[section].is_object()) cfg[section].merge_patch(line[section]);
  // Only what differs from cutlab's defaults (dp stays: beside a GPU count it is not a default).
  const json plan_defaults = to_json(Plan{}), workload_defaults = to_json(Workload{});
  for (auto [section, defaults] : {std::pair{"plan", &plan_defaults}, std::pair{"workload", &workload_defaults}}) {
    json kept = json::object();
    for (auto it = cfg[section].begin(); it != cfg[section].end(); ++it)
      if (it.key() == "dp" || !defaults->contains(it.key()) || (*defaults)[it.key()] != it.value()) kept[it.key()] = it.value();
    cfg[section] = kept;
  }
  r.value.config = cfg;
  return r;
}

}  // namespace cutlab
