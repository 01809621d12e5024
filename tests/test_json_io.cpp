#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "core/api.h"
#include "core/json_io.h"
#include "core/presets.h"
#include "core/resolved.h"

using namespace cutlab;
using nlohmann::json;

namespace {
bool has(const Errors& errors, const std::string& path, ErrorCode code) {
  return std::any_of(errors.begin(), errors.end(), [&](const Error& e) { return e.path == path && e.code == code; });
}
}  // namespace

TEST_CASE("presets resolve by name and accept overrides", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({
    "model": {"preset": "llama3-70b", "layers": 40},
    "cluster": {"preset": "dgx-h100", "hbm_GiB": 96, "efficiency": {"gemm": 0.7}},
    "plan": {"tp": 8, "zero": "fsdp"}, "workload": {"global_batch": 8}})"));
  REQUIRE(r.ok());
  REQUIRE(r.value.model.layers == 40);
  REQUIRE(r.value.model.hidden == 8192);
  REQUIRE(r.value.cluster.hbm_bytes == 96.0 * 1024 * 1024 * 1024);
  REQUIRE(r.value.cluster.efficiency.gemm == 0.7);
  REQUIRE(r.value.plan.zero == 3);
}

TEST_CASE("every bad field is reported with its path and kind", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({
    "model": {"hidden": 4096}, "cluster": "dgx-z", "plan": {"tp": "eight", "bogus": 1, "zero": 9.5},
    "workload": {"seq_len": 4096.5}, "extra": true})"));
  const Errors& e = r.errors;
  REQUIRE(has(e, "/model/layers", ErrorCode::MissingKey));
  REQUIRE(has(e, "/model/heads", ErrorCode::MissingKey));
  REQUIRE(has(e, "/cluster", ErrorCode::OutOfRange));  // unknown preset
  REQUIRE(has(e, "/plan/tp", ErrorCode::WrongType));
  REQUIRE(has(e, "/plan/bogus", ErrorCode::UnknownKey));
  REQUIRE(has(e, "/plan/zero", ErrorCode::WrongType));
  REQUIRE(has(e, "/workload/seq_len", ErrorCode::WrongType));
  REQUIRE(has(e, "/extra", ErrorCode::UnknownKey));
}

TEST_CASE("dp is derived from cluster.gpus when it is left out", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({
    "model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384},
    "plan": {"tp": 8, "pp": 16}, "workload": {"global_batch": 2048}})"));
  REQUIRE(r.ok());
  REQUIRE(r.value.plan.dp == 128);
}

TEST_CASE("a mesh that does not divide cluster.gpus names the GPU counts it fills", "[json]") {
  // TP 8 on 12 GPUs (the serving search's "8 of 12"): 8 and 16 are the multiples of 8 around 12.
  auto dp_message = [](const char* text) {
    const Result<Config> r = config_from_json(json::parse(text));
    for (const Error& e : r.errors)
      if (e.path == "/plan/dp") return e.message;
    return std::string();
  };
  const std::string twelve = dp_message(R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 12},
    "plan": {"tp": 8}, "workload": {"mode": "infer"}})");
  REQUIRE(twelve.find("set cluster.gpus to 8 or 16") != std::string::npos);
  // Fewer GPUs than the mesh: only the count above.
  const std::string four = dp_message(R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 4},
    "plan": {"tp": 8}, "workload": {"mode": "infer"}})");
  REQUIRE(four.find("set cluster.gpus to 8") != std::string::npos);
  REQUIRE(four.find("to 8 or") == std::string::npos);
}

TEST_CASE("a written config reads back to the same config", "[json]") {
  const Result<Config> a = config_from_json(json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 16, "ep": 64, "dp": 2, "distributed_optimizer": true}, "workload": {"global_batch": 1920}})"));
  REQUIRE(a.ok());
  const json written = to_json(a.value);
  const Result<Config> b = config_from_json(written);
  REQUIRE(b.ok());
  REQUIRE(to_json(b.value) == written);
}

TEST_CASE("the API returns the documented result keys", "[json][api]") {
  const json out = json::parse(api::evaluate_json(R"({"model": "llama3-70b", "cluster": "dgx-h100",
    "plan": {"tp": 8, "pp": 2, "dp": 1}, "workload": {"seq_len": 8192, "global_batch": 16}})"));
  REQUIRE(out["ok"] == true);
  const json& r = out["result"];
  for (const char* key : {"gpus", "params", "flops", "memory", "comm", "time", "throughput", "mfu", "schedule"})
    REQUIRE(r.contains(key));
  REQUIRE(r["params"].contains("total"));
  REQUIRE(r["params"].contains("active"));
  REQUIRE(r["flops"].contains("model_per_step"));
  for (const char* key :
       {"weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "total_bytes", "capacity_bytes", "fits"})
    REQUIRE(r["memory"]["per_stage"][0].contains(key));
  for (const char* key : {"axis", "collective", "bytes", "group_size", "link", "time_s", "exposed_s"})
    REQUIRE(r["comm"][0].contains(key));
  REQUIRE(r["time"].contains("step_s"));
  REQUIRE(r["time"].contains("breakdown"));
  REQUIRE(r["throughput"].contains("tokens_per_s"));
  REQUIRE(r["gpus"] == 16);
}

TEST_CASE("the API reports malformed JSON and invalid plans as errors", "[json][api]") {
  const json bad = json::parse(api::evaluate_json("{not json"));
  REQUIRE(bad["ok"] == false);
  REQUIRE(bad["errors"][0]["code"] == "parse_error");
  const json invalid = json::parse(api::evaluate_json(R"({"model": "llama3-70b", "cluster": "dgx-h100",
    "plan": {"tp": 3}, "workload": {"global_batch": 16}})"));
  REQUIRE(invalid["ok"] == false);
  REQUIRE(invalid["errors"][0]["path"] == "/plan/tp");
  const json gpu = json::parse(api::gpu_json(R"({"model": "llama3-70b", "cluster": "dgx-h100",
    "plan": {"tp": 8, "pp": 2}, "workload": {"global_batch": 16}})",
                                             99));
  REQUIRE(gpu["ok"] == false);
  REQUIRE(gpu["errors"][0]["path"] == "/rank");
}

TEST_CASE("axis options list only values that keep the plan valid", "[json][api]") {
  const json out = json::parse(api::options_json(R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 16},
    "plan": {"tp": 8, "pp": 2}, "workload": {"seq_len": 8192, "global_batch": 16}})"));
  REQUIRE(out["ok"] == true);
  // With PP 2 fixed on 16 GPUs, TP can take 1–8 (dp = 16/(2·tp)); with TP 8 fixed, PP 1 or 2.
  REQUIRE(out["result"]["tp"] == json({1, 2, 4, 8}));
  REQUIRE(out["result"]["pp"] == json({1, 2}));
  REQUIRE(out["result"]["cp"] == json({1}));
  REQUIRE(out["result"]["ep"] == json({1}));  // dense model
  REQUIRE(out["result"]["micro_batch"] == json({1, 2, 4, 8, 16}));
}

TEST_CASE("recompute modules, moment dtype and EMA read by name, bad ones name their path", "[json]") {
  const Result<Config> ok = config_from_json(json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 16, "ep": 64, "dp": 2, "recompute": "selective", "recompute_modules": ["layernorm", "mla_up_proj", "moe_act"],
             "activation_func_fp8_input_store": true},
    "workload": {"global_batch": 1920, "dtype": "fp8", "moment_dtype": "bf16", "ema": "cpu"}})"));
  REQUIRE(ok.ok());
  REQUIRE(ok.value.plan.recompute_modules ==
          std::vector<RecomputeModule>{RecomputeModule::LayerNorm, RecomputeModule::MlaUpProj, RecomputeModule::MoeAct});
  REQUIRE(ok.value.workload.moment_dtype == MomentDtype::BF16);
  REQUIRE(ok.value.workload.ema == Ema::Cpu);
  const json written = to_json(ok.value);
  REQUIRE(written["plan"]["recompute_modules"] == json::array({"layernorm", "mla_up_proj", "moe_act"}));
  REQUIRE(to_json(config_from_json(written).value) == written);
  // Unknown and repeated names, a module list without selective recompute, an empty list.
  const Result<Config> bad = config_from_json(json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 16, "ep": 64, "dp": 2, "recompute_modules": ["attention", "moe", "moe", 3]},
    "workload": {"global_batch": 1920, "moment_dtype": "fp16", "ema": "disk"}})"));
  REQUIRE(has(bad.errors, "/plan/recompute_modules/0", ErrorCode::OutOfRange));
  REQUIRE(has(bad.errors, "/plan/recompute_modules/2", ErrorCode::Incompatible));
  REQUIRE(has(bad.errors, "/plan/recompute_modules/3", ErrorCode::OutOfRange));
  REQUIRE(has(bad.errors, "/workload/moment_dtype", ErrorCode::OutOfRange));
  REQUIRE(has(bad.errors, "/workload/ema", ErrorCode::OutOfRange));
  const Result<Config> unread = config_from_json(json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 16, "ep": 64, "dp": 2, "recompute": "full", "recompute_modules": ["moe"]}, "workload": {"global_batch": 1920}})"));
  const Config& u = unread.value;
  REQUIRE(has(unread.errors.empty() ? validate(u.model, u.cluster, u.plan, u.workload) : unread.errors, "/plan/recompute_modules",
              ErrorCode::Incompatible));
  const Result<Config> empty = config_from_json(json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 16, "ep": 64, "dp": 2, "recompute": "selective", "recompute_modules": []}, "workload": {"global_batch": 1920}})"));
  const Config& x = empty.value;
  REQUIRE(has(empty.errors.empty() ? validate(x.model, x.cluster, x.plan, x.workload) : empty.errors, "/plan/recompute_modules",
              ErrorCode::OutOfRange));
}

TEST_CASE("a pasted Hugging Face config.json becomes a model", "[json]") {
  // meta-llama/Meta-Llama-3-70B config.json (abridged: keys the model does not use are ignored).
  const Result<Config> llama = config_from_json(json::parse(R"({"model": {"hf_config": {
    "architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "hidden_size": 8192, "intermediate_size": 28672,
    "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 64, "num_hidden_layers": 80,
    "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16", "vocab_size": 128256}}, "cluster": "dgx-h100", "workload": {"global_batch": 8}})"));
  REQUIRE(llama.ok());
  REQUIRE(count_params(llama.value.model).total == count_params(*find_model_preset("llama3-70b")).total);
  // deepseek-ai/DeepSeek-V3 config.json (abridged).
  const Result<Config> ds = config_from_json(json::parse(R"({"model": {"hf_config": {
    "hidden_act": "silu", "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
    "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "q_lora_rank": 1536,
    "kv_lora_rank": 512, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
    "n_group": 8, "topk_group": 4,
    "tie_word_embeddings": false, "vocab_size": 129280}}, "cluster": "hgx-h800", "workload": {"global_batch": 8}})"));
  REQUIRE(ds.ok());
  REQUIRE(ds.value.model.route_groups == 8);  // n_group, topk_group: node-limited routing
  REQUIRE(ds.value.model.route_group_limit == 4);
  REQUIRE(count_params(ds.value.model).total == count_params(*find_model_preset("deepseek-v3")).total);
  REQUIRE(count_params(ds.value.model).active == count_params(*find_model_preset("deepseek-v3")).active);
  // Missing essentials are reported with their paths.
  const Result<Config> bad = config_from_json(json::parse(R"({"model": {"hf_config": {"hidden_size": 4096}},
    "cluster": "dgx-h100"})"));
  REQUIRE(has(bad.errors, "/model/hf_config/num_hidden_layers", ErrorCode::MissingKey));
  REQUIRE(has(bad.errors, "/model/hf_config/vocab_size", ErrorCode::MissingKey));
}

TEST_CASE("reading errors and rule errors are reported together", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({"model": "llama3-8b", "cluster": "dgx-h100",
    "plan": {"tp": "x", "pp": -1}, "workload": {"global_batch": 8}})"));
  REQUIRE(has(r.errors, "/plan/tp", ErrorCode::WrongType));
  REQUIRE(has(r.errors, "/plan/pp", ErrorCode::OutOfRange));
  REQUIRE(r.errors.size() == 2);
}

TEST_CASE("node-limited routing is read from the model and checked at its path", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({"model": {"preset": "deepseek-v3", "route_groups": 16,
    "route_group_limit": 2}, "cluster": "hgx-h800", "plan": {"pp": 16, "ep": 64, "dp": 2}, "workload": {"global_batch": 1920}})"));
  REQUIRE(r.ok());
  REQUIRE(r.value.model.route_groups == 16);
  REQUIRE(r.value.model.route_group_limit == 2);
  REQUIRE(to_json(r.value)["model"]["route_group_limit"] == 2);
  const Result<Config> bad = config_from_json(json::parse(R"({"model": {"preset": "deepseek-v3", "route_groups": 6,
    "route_group_limit": 7}, "cluster": "hgx-h800", "plan": {"pp": 16, "ep": 64, "dp": 2}, "workload": {"global_batch": 1920}})"));
  REQUIRE(bad.ok());  // read; the rules are checked when it is resolved
  const Result<Resolved> rules = resolve(bad.value);
  REQUIRE(has(rules.errors, "/model/route_groups", ErrorCode::Incompatible));       // 6 does not divide 256
  REQUIRE(has(rules.errors, "/model/route_group_limit", ErrorCode::Incompatible));  // 7 > 6
}

TEST_CASE("the dispatch precision is a named choice of the plan", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 16, "ep": 64, "dp": 2, "ep_dispatch_dtype": "fp8"}, "workload": {"global_batch": 1920, "dtype": "fp8"}})"));
  REQUIRE(r.ok());
  REQUIRE(r.value.plan.ep_dispatch_dtype == EpDispatchDtype::FP8);
  REQUIRE(to_json(r.value)["plan"]["ep_dispatch_dtype"] == "fp8");
  const Result<Config> bad = config_from_json(json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 16, "ep": 64, "dp": 2, "ep_dispatch_dtype": "fp6"}, "workload": {"global_batch": 1920, "dtype": "fp8"}})"));
  REQUIRE_FALSE(bad.errors.empty());
  REQUIRE(bad.errors[0].path == "/plan/ep_dispatch_dtype");
  // fp8 dispatch in bf16 training: the rule error names the plan field.
  const Result<Config> bf16 = config_from_json(json::parse(R"({"model": "deepseek-v3", "cluster": "hgx-h800",
    "plan": {"pp": 16, "ep": 64, "dp": 2, "ep_dispatch_dtype": "fp8"}, "workload": {"global_batch": 1920}})"));
  REQUIRE(bf16.ok());
  REQUIRE(has(resolve(bf16.value).errors, "/plan/ep_dispatch_dtype", ErrorCode::Incompatible));
}

TEST_CASE("the MoE routing load is read from the plan and written back", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({"model": "qwen2-57b-a14b", "cluster": "dgx-h100",
    "plan": {"ep": 8, "moe_capacity_factor": 1.25, "moe_pad_to_capacity": true, "moe_imbalance": 1.3,
             "moe_shared_expert_overlap": true}, "workload": {"global_batch": 64}})"));
  REQUIRE(r.ok());
  REQUIRE(r.value.plan.moe_capacity_factor == 1.25);
  REQUIRE(r.value.plan.moe_pad_to_capacity);
  REQUIRE(r.value.plan.moe_imbalance == 1.3);
  REQUIRE(r.value.plan.moe_shared_expert_overlap);
  const json back = to_json(r.value)["plan"];
  REQUIRE(back["moe_capacity_factor"] == 1.25);
  REQUIRE(back["moe_imbalance"] == 1.3);
  REQUIRE(back["moe_pad_to_capacity"] == true);
  REQUIRE(back["moe_shared_expert_overlap"] == true);
  REQUIRE(resolve(r.value).ok());
  // Defaults: dropless, balanced, no overlap.
  const json d = to_json(Plan{});
  REQUIRE(d["moe_capacity_factor"] == 0);
  REQUIRE(d["moe_imbalance"] == 1);
  // Wrong types and broken rules, each at its path.
  const Result<Config> typed = config_from_json(json::parse(R"({"model": "qwen2-57b-a14b", "cluster": "dgx-h100",
    "plan": {"ep": 8, "moe_imbalance": "high", "moe_pad_to_capacity": 1}, "workload": {"global_batch": 64}})"));
  REQUIRE(has(typed.errors, "/plan/moe_imbalance", ErrorCode::WrongType));
  REQUIRE(has(typed.errors, "/plan/moe_pad_to_capacity", ErrorCode::WrongType));
  const Result<Config> ruled = config_from_json(json::parse(R"({"model": "llama3-8b", "cluster": "dgx-h100",
    "plan": {"moe_imbalance": 0.5, "moe_capacity_factor": -1}, "workload": {"global_batch": 64}})"));
  REQUIRE(ruled.ok());
  const Errors e = resolve(ruled.value).errors;
  REQUIRE(has(e, "/plan/moe_imbalance", ErrorCode::Incompatible));  // a dense model
  REQUIRE(has(e, "/plan/moe_capacity_factor", ErrorCode::Incompatible));
  const Result<Config> neg = config_from_json(json::parse(R"({"model": "qwen2-57b-a14b", "cluster": "dgx-h100",
    "plan": {"ep": 8, "moe_imbalance": 0.5, "moe_capacity_factor": -1}, "workload": {"global_batch": 64}})"));
  REQUIRE(neg.ok());
  const Errors n = resolve(neg.value).errors;
  REQUIRE(has(n, "/plan/moe_imbalance", ErrorCode::OutOfRange));
  REQUIRE(has(n, "/plan/moe_capacity_factor", ErrorCode::OutOfRange));
}

TEST_CASE("the CP communication is a named choice of the plan, Ulysses needs heads divisible by tp × cp", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({"model": "llama3-8b", "cluster": "dgx-h100",
    "plan": {"cp": 4, "dp": 4, "cp_comm": "allgather"}, "workload": {"seq_len": 65536, "global_batch": 4}})"));
  REQUIRE(r.ok());
  REQUIRE(r.value.plan.cp_comm == CpComm::AllGather);
  REQUIRE(to_json(r.value)["plan"]["cp_comm"] == "allgather");
  REQUIRE(choices_json()["cp_comm"].size() == 3);
  const Result<Config> bad = config_from_json(json::parse(R"({"model": "llama3-8b", "cluster": "dgx-h100",
    "plan": {"cp": 4, "dp": 4, "cp_comm": "p2p"}, "workload": {"seq_len": 65536, "global_batch": 4}})"));
  REQUIRE_FALSE(bad.errors.empty());
  REQUIRE(bad.errors[0].path == "/plan/cp_comm");
  // Llama 3 8B has 8 KV heads: a2a with tp 2 × cp 8 = 16 cannot split them (ring and allgather can).
  const Result<Config> ulysses = config_from_json(json::parse(R"({"model": "llama3-8b", "cluster": "dgx-h100",
    "plan": {"tp": 2, "cp": 8, "cp_comm": "a2a"}, "workload": {"seq_len": 65536, "global_batch": 1}})"));
  REQUIRE(ulysses.ok());
  REQUIRE(has(resolve(ulysses.value).errors, "/plan/cp_comm", ErrorCode::Incompatible));
  Config ok = ulysses.value;
  ok.plan.tp = 1;
  REQUIRE(resolve(ok).errors.empty());
}

TEST_CASE("activation offload reads its plan count and the cluster's host link", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({"model": "llama3-8b",
    "cluster": {"preset": "dgx-h100", "host_link_GBps": 32, "efficiency": {"host_link": 0.7}},
    "plan": {"dp": 8, "activation_offload_layers": 8, "reshard_after_forward": false}, "workload": {"global_batch": 8}})"));
  REQUIRE(r.ok());
  REQUIRE(r.value.cluster.host_link_bytes_per_s == 32e9);
  REQUIRE(r.value.cluster.efficiency.host_link == 0.7);
  REQUIRE(r.value.plan.activation_offload_layers == 8);
  REQUIRE_FALSE(r.value.plan.reshard_after_forward);
  const json back = to_json(r.value);
  REQUIRE(back["cluster"]["host_link_GBps"] == 32.0);
  REQUIRE(back["plan"]["activation_offload_layers"] == 8);
  const Result<Config> bad = config_from_json(json::parse(R"({"model": "llama3-8b", "cluster": "dgx-h100",
    "plan": {"dp": 8, "activation_offload_layers": "all"}, "workload": {"global_batch": 8}})"));
  REQUIRE_FALSE(bad.errors.empty());
  REQUIRE(bad.errors[0].path == "/plan/activation_offload_layers");
}

TEST_CASE("serving fields are read, written back, and bad ones reported together", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({"model": "llama3-70b", "cluster": "dgx-h100",
    "plan": {"tp": 8}, "workload": {"mode": "infer", "batching": "static", "max_num_tokens": 4096, "kv_block_tokens": 64,
    "spec_draft_tokens": 2, "spec_acceptance": 0.7}})"));
  REQUIRE(r.ok());
  REQUIRE(r.value.workload.batching == Batching::Static);
  REQUIRE(r.value.workload.max_num_tokens == 4096);
  REQUIRE(r.value.workload.kv_block_tokens == 64);
  REQUIRE(r.value.workload.spec_draft_tokens == 2);
  const json back = to_json(r.value)["workload"];
  REQUIRE(back["batching"] == "static");
  REQUIRE(back["spec_acceptance"] == 0.7);
  REQUIRE(Workload{}.batching == Batching::InFlight);  // the default
  // Output length 0 and an unknown KV dtype: both paths in one answer, no estimate.
  const json answer = json::parse(api::evaluate_json(R"({"model": "llama3-70b", "cluster": "dgx-h100", "plan": {"tp": 8},
    "workload": {"mode": "infer", "output_len": 0, "kv_dtype": "fp6"}})"));
  REQUIRE(answer["ok"] == false);
  std::set<std::string> paths;
  for (const json& e : answer["errors"]) paths.insert(e["path"].get<std::string>());
  REQUIRE(paths.count("/workload/kv_dtype") == 1);
  REQUIRE(paths.count("/workload/output_len") == 1);
}

TEST_CASE("a length mix is read, written back, and its bad entries named by index and key", "[json]") {
  const Result<Config> r = config_from_json(json::parse(R"({"model": "llama3-70b", "cluster": "dgx-h100",
    "plan": {"tp": 8}, "workload": {"mode": "infer", "length_mix": [
      {"prompt_len": 1000, "output_len": 200, "share": 7}, {"prompt_len": 8000, "output_len": 500, "share": 3}]}})"));
  REQUIRE(r.ok());
  REQUIRE(r.value.workload.length_mix == ClassList<LengthClass>{{1000, 200, 7.0}, {8000, 500, 3.0}});
  const json back = to_json(r.value)["workload"]["length_mix"];
  REQUIRE(back.size() == 2);
  REQUIRE(back[1]["prompt_len"] == 8000);
  REQUIRE(back[1]["share"] == 3.0);
  REQUIRE(config_from_json(to_json(r.value)).value.workload.length_mix == r.value.workload.length_mix);
  // The result lists each class's latencies.
  const json ok = json::parse(api::evaluate_json(to_json(r.value).dump()));
  REQUIRE(ok["ok"] == true);
  const json& classes = ok["result"]["inference"]["length_classes"];
  REQUIRE(classes["ttft_s"].size() == 2);
  REQUIRE(classes["e2e_latency_s"].size() == 2);
  REQUIRE(classes["prefill_steps"].size() == 2);
  REQUIRE(classes["ttft_s"][1].get<double>() > classes["ttft_s"][0].get<double>());  // the 8,000-token prompts'
  REQUIRE(ok["result"]["config"]["workload"]["length_mix"][0]["share"] == 7.0);      // as given
  // Every bad entry at once: not an object, a string length, an unknown key, a missing share, too many.
  const json answer = json::parse(api::evaluate_json(R"({"model": "llama3-70b", "cluster": "dgx-h100", "plan": {"tp": 8},
    "workload": {"mode": "infer", "length_mix": [3, {"prompt_len": "long", "output_len": 9, "share": 1},
      {"prompt_len": 10, "output_len": 9, "share": 1, "weight": 2}, {"prompt_len": 10, "output_len": 9}]}})"));
  REQUIRE(answer["ok"] == false);
  std::set<std::string> paths;
  for (const json& e : answer["errors"]) paths.insert(e["path"].get<std::string>());
  REQUIRE(paths == std::set<std::string>{"/workload/length_mix/0", "/workload/length_mix/1", "/workload/length_mix/2",
                                         "/workload/length_mix/3"});
  json many = json::array();
  for (int i = 0; i < 1000; ++i) many.push_back({{"prompt_len", 10}, {"output_len", 9}, {"share", 1}});
  const json too_many = json::parse(api::evaluate_json(json{
      {"model", "llama3-70b"}, {"cluster", "dgx-h100"}, {"plan", {{"tp", 8}}}, {"workload", {{"mode", "infer"}, {"length_mix", many}}}}
                                                           .dump()));
  REQUIRE(too_many["ok"] == false);
  REQUIRE(too_many["errors"].size() == 1);
  REQUIRE(too_many["errors"][0]["path"] == "/workload/length_mix");
}
