// Launch configurations out and in (core/launch.h): export → import gives the same config for
// the README's training examples and the training examples of web/examples.js; the Megatron-LM
// arguments of the README's Llama 3 70B plan are the ones a Megatron-LM user writes.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <sstream>

#include "core/api.h"
#include "core/json_io.h"
#include "core/launch.h"
#include "core/toml.h"

using namespace cutlab;
using nlohmann::json;

namespace {

Config resolved_config(const std::string& text) {
  const api::Answer<Resolved> r = api::resolve(text);
  INFO(text);
  for (const Error& e : r.result.errors) INFO(e.path + ": " + e.message);
  REQUIRE(r.ok());
  return r.result.value.config;
}

// The flags of an exported argument list: every line that is not a comment, without its "\".
std::set<std::string> flag_lines(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l[0] == '#') continue;
    if (l.size() >= 2 && l.substr(l.size() - 2) == " \\") l.resize(l.size() - 2);
    out.insert(l.substr(l.find_first_not_of(' ')));
  }
  return out;
}

// README: Llama 3 70B on 64 H100s, TP 8 × PP 2 × DP 4, SP, selective recompute, distributed optimizer, 8k.
const char* k_readme_70b =
    R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 64}, "plan": {"tp": 8, "pp": 2, "sp": true,
        "distributed_optimizer": true, "recompute": "selective"}, "workload": {"seq_len": 8192, "global_batch": 64}})";

}  // namespace

TEST_CASE("export then import gives the same config for every training example", "[launch]") {
  // The README's examples (evaluate, the input section's 405B, search, balance's suggestion) and the
  // training examples of web/examples.js, as the page sends them (cluster.gpus from the GPU count).
  const std::vector<std::string> examples = {
      k_readme_70b,
      R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384}, "plan": {"tp": 8, "pp": 16, "sp": true,
          "recompute": "selective", "distributed_optimizer": true}, "workload": {"mode": "train", "seq_len": 8192, "global_batch": 2048, "dtype": "bf16"}})",
      R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 64}, "plan": {"tp": 8, "pp": 1, "sp": true,
          "distributed_optimizer": true, "recompute": "full", "micro_batch": 2}, "workload": {"seq_len": 8192, "global_batch": 64}})",
      R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 8}, "plan": {"pp": 4, "layers_per_stage": [8, 9, 9, 6]},
          "workload": {"seq_len": 8192, "global_batch": 32}})",
      // web/examples.js: tp8pp2, llama3-405b, llama3-405b-cp, deepseek-v3, mixtral-folding, ep8, zero3.
      R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 16}, "plan": {"tp": 8, "pp": 2, "sp": true, "recompute": "full"},
          "workload": {"seq_len": 8192, "global_batch": 16, "grad_dtype": "bf16"}})",
      R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384}, "plan": {"tp": 8, "pp": 16, "sp": true,
          "distributed_optimizer": true, "recompute": "none", "schedule": "interleaved", "vpp": 8, "embedding_in_pipeline_split": true,
          "loss_in_pipeline_split": true}, "workload": {"seq_len": 8192, "global_batch": 2048, "grad_dtype": "bf16"}})",
      R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100", "gpus": 16384}, "plan": {"tp": 8, "pp": 16, "cp": 16, "cp_comm": "allgather",
          "sp": true, "distributed_optimizer": true, "recompute": "none", "schedule": "interleaved", "vpp": 8, "embedding_in_pipeline_split": true,
          "loss_in_pipeline_split": true}, "workload": {"seq_len": 131072, "global_batch": 128, "grad_dtype": "bf16"}})",
      R"({"model": "deepseek-v3", "cluster": {"preset": "hgx-h800", "gpus": 2048}, "plan": {"tp": 1, "pp": 16, "ep": 64, "zero": 1,
          "schedule": "dualpipe", "ep_dispatcher": "deepep", "ep_dispatch_dtype": "fp8", "recompute": "selective",
          "recompute_modules": ["layernorm", "mla_up_proj", "moe_act"], "activation_func_fp8_input_store": true},
          "workload": {"seq_len": 4096, "global_batch": 15360, "dtype": "fp8", "moment_dtype": "bf16", "ema": "cpu"}})",
      R"({"model": "mixtral-8x22b", "cluster": {"preset": "dgx-h100", "gpus": 128}, "plan": {"tp": 2, "pp": 8, "ep": 8, "etp": 1, "sp": true,
          "distributed_optimizer": true, "recompute": "none", "schedule": "interleaved", "vpp": 7},
          "workload": {"seq_len": 4096, "global_batch": 256, "grad_dtype": "bf16"}})",
      R"({"model": "qwen2-57b-a14b", "cluster": {"preset": "dgx-h100", "gpus": 32}, "plan": {"pp": 4, "ep": 8, "distributed_optimizer": true,
          "recompute": "selective", "recompute_modules": ["core_attn", "moe_act"]}, "workload": {"seq_len": 4096, "global_batch": 128}})",
      R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100", "gpus": 64}, "plan": {"zero": 3, "recompute": "selective"},
          "workload": {"seq_len": 8192, "global_batch": 64}})",
      // Megatron-Core's allgather token dispatcher.
      R"({"model": "qwen2-57b-a14b", "cluster": {"preset": "dgx-h100", "gpus": 32}, "plan": {"pp": 4, "ep": 8, "ep_dispatcher": "allgather"},
          "workload": {"seq_len": 4096, "global_batch": 32}})",
  };
  const LaunchFormat format = GENERATE(LaunchFormat::Megatron, LaunchFormat::Torchtitan);
  for (const std::string& text : examples) {
    const Config c = resolved_config(text);
    const Result<LaunchConfig> out = export_launch(c, format);
    REQUIRE(out.ok());
    const Result<ImportedConfig> in = import_launch(out.value.text, format);
    INFO(name_of(format) << "\n" << out.value.text);
    for (const Error& e : in.errors) INFO(e.path + ": " + e.message);
    REQUIRE(in.ok());
    const Config back = resolved_config(in.value.config.dump());
    CHECK(to_json(back.plan) == to_json(c.plan));
    CHECK(to_json(back.workload) == to_json(c.workload));
    CHECK(to_json(back.model) == to_json(c.model));
    CHECK(to_json(back.cluster) == to_json(c.cluster));
  }
}

TEST_CASE("the README's Llama 3 70B plan exports the Megatron-LM arguments a user writes", "[launch]") {
  const Result<LaunchConfig> out = export_launch(resolved_config(k_readme_70b), LaunchFormat::Megatron);
  REQUIRE(out.ok());
  // Written by hand from Megatron-LM core_r0.13.0 arguments.py and examples/llama/train_llama3_70b*.sh.
  const std::set<std::string> expected = {"--num-layers 80",
                                          "--hidden-size 8192",
                                          "--ffn-hidden-size 28672",
                                          "--num-attention-heads 64",
                                          "--group-query-attention",
                                          "--num-query-groups 8",
                                          "--swiglu",
                                          "--untie-embeddings-and-output-weights",
                                          "--vocab-size 128256",
                                          "--tensor-model-parallel-size 8",
                                          "--pipeline-model-parallel-size 2",
                                          "--sequence-parallel",
                                          "--recompute-granularity selective",
                                          "--use-distributed-optimizer",
                                          "--overlap-grad-reduce",
                                          "--overlap-param-gather",
                                          "--cross-entropy-loss-fusion",
                                          "--bf16",
                                          "--micro-batch-size 1",
                                          "--global-batch-size 64",
                                          "--seq-length 8192"};
  CHECK(flag_lines(out.value.text) == expected);
  CHECK(out.value.unexpressed.empty());  // every setting of this plan is a Megatron-LM argument
}

TEST_CASE("what a framework cannot say is listed and carried in the cutlab line", "[launch]") {
  const Result<LaunchConfig> titan = export_launch(resolved_config(k_readme_70b), LaunchFormat::Torchtitan);
  REQUIRE(titan.ok());
  // torchtitan: no distributed optimizer (FSDP or DDP), no selective core-attention recompute, its
  // own unfused loss.
  CHECK(titan.value.unexpressed ==
        std::vector<std::string>{"/plan/distributed_optimizer", "/plan/fused_cross_entropy", "/plan/recompute"});
  CHECK(titan.value.text.find("tensor_parallel_degree = 8") != std::string::npos);
  CHECK(titan.value.text.find("name = \"llama3\"\nflavor = \"70B\"") != std::string::npos);
  const Config dsv3 = resolved_config(
      R"({"model": "deepseek-v3", "cluster": {"preset": "hgx-h800", "gpus": 2048}, "plan": {"pp": 16, "ep": 64, "distributed_optimizer": true,
          "schedule": "dualpipe"}, "workload": {"seq_len": 4096, "global_batch": 4096}})");
  const Result<LaunchConfig> mega = export_launch(dsv3, LaunchFormat::Megatron);
  REQUIRE(mega.ok());
  CHECK(mega.value.unexpressed == std::vector<std::string>{"/plan/schedule"});  // Megatron-LM has no DualPipe
  CHECK(mega.value.text.find("--multi-latent-attention") != std::string::npos);
}

TEST_CASE("a hand-written Megatron-LM launch script imports", "[launch]") {
  const std::string script = R"(#!/bin/bash
# a user's script: torchrun flags and training flags are skipped or noted
torchrun --nproc-per-node 8 --nnodes 4 pretrain_gpt.py \
  --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 \
  --group-query-attention --num-query-groups 8 --swiglu --untie-embeddings-and-output-weights --vocab-size 128256 \
  --tensor-model-parallel-size=2 --pipeline-model-parallel-size 4 \
  --decoder-first-pipeline-num-layers 7 --decoder-last-pipeline-num-layers 7 \
  --recompute-granularity selective --recompute-modules core_attn mlp \
  --bf16 --fp8-format hybrid --lr 3e-4 --position-embedding-type rope \
  --micro-batch-size 2 --global-batch-size 128 --seq-length 4096
)";
  const Result<ImportedConfig> in = import_launch(script, LaunchFormat::Megatron);
  for (const Error& e : in.errors) INFO(e.path + ": " + e.message);
  REQUIRE(in.ok());
  const json& c = in.value.config;
  CHECK(c["model"] == "llama3-8b");  // the architecture flags are that preset's
  CHECK(c["plan"]["tp"] == 2);
  CHECK(c["plan"]["layers_per_stage"] == json::array({7, 9, 9, 7}));
  CHECK(c["plan"]["recompute_modules"] == json::array({"core_attn", "mlp"}));
  CHECK(c["workload"]["dtype"] == "fp8");
  CHECK(c["workload"]["global_batch"] == 128);
  CHECK(!c.contains("cluster"));  // the caller adds --cluster
  REQUIRE(in.value.notes.size() == 1);
  CHECK(in.value.notes[0] == "line 9: --position-embedding-type is not read (no cutlab setting)");
}

TEST_CASE("a torchtitan job config imports", "[launch]") {
  // After torchtitan v0.1.0 torchtitan/models/llama3/train_configs/llama3_70b.toml.
  const std::string toml = R"([job]
dump_folder = "./outputs"
description = "Llama 3 70B training"

[model]
name = "llama3"
flavor = "70B"

[training]
local_batch_size = 8
seq_len = 8192
steps = 1000

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = 8 # FSDP
tensor_parallel_degree = 8
pipeline_parallel_degree = 1

[activation_checkpoint]
mode = 'full'
)";
  const Result<ImportedConfig> in = import_launch(toml, LaunchFormat::Torchtitan);
  for (const Error& e : in.errors) INFO(e.path + ": " + e.message);
  REQUIRE(in.ok());
  const json& c = in.value.config;
  CHECK(c["model"] == "llama3-70b");
  CHECK(c["plan"]["tp"] == 8);
  CHECK(c["plan"]["dp"] == 8);
  CHECK(c["plan"]["zero"] == 3);
  CHECK(c["plan"]["recompute"] == "full");
  CHECK(c["plan"]["micro_batch"] == 8);
  CHECK(c["workload"]["global_batch"] == 64);
}

TEST_CASE("launch files with errors name the line and the flag or key", "[launch]") {
  SECTION("a Megatron-LM value that is not a number") {
    const Result<ImportedConfig> in = import_launch(
        "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100\n--tensor-model-parallel-size eight\n",
        LaunchFormat::Megatron);
    REQUIRE(in.errors.size() == 1);
    CHECK(in.errors[0].path == "line 2: --tensor-model-parallel-size");
  }
  SECTION("a model that is no preset is imported field by field") {
    const Result<ImportedConfig> in = import_launch("--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100\n",
                                                    LaunchFormat::Megatron);
    REQUIRE(in.ok());
    CHECK(in.value.config["model"]["layers"] == 2);
    CHECK(in.value.config["model"]["kv_heads"] == 4);
  }
  SECTION("a flag given twice") {
    const Result<ImportedConfig> in = import_launch("--bf16\n--bf16\n", LaunchFormat::Megatron);
    REQUIRE(!in.ok());
    CHECK(in.errors[0].path == "line 2: --bf16");
  }
  SECTION("a TOML value of the wrong type") {
    const Result<ImportedConfig> in = import_launch("[parallelism]\ntensor_parallel_degree = \"8\"\n", LaunchFormat::Torchtitan);
    REQUIRE(!in.ok());
    CHECK(in.errors[0].path == "line 2: [parallelism] tensor_parallel_degree");
  }
  SECTION("TOML outside the subset") {
    const Result<TomlDocument> a = parse_toml("[training]\nseq_len = 1\nseq_len = 2\n");
    REQUIRE(a.errors.size() == 1);
    CHECK(a.errors[0].path == "line 3: [training] seq_len");
    const Result<TomlDocument> b = parse_toml("[x]\nk = {a = 1}\n[[y]]\nz = \"unterminated\n");
    CHECK(b.errors.size() == 3);
    CHECK(b.errors[0].path == "line 2: [x] k");
  }
}

// The value a flag line "NAME VALUE" of an export carries (NaN when absent).
double flag_value(const std::string& text, const std::string& name) {
  for (const std::string& line : flag_lines(text))
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  return std::nan("");
}

TEST_CASE("vLLM's and SGLang's memory shares give their KV pools cutlab's size", "[launch]") {
  // Llama 3 8B on one H100 (79.6 GiB, 2 GiB reserved), in flight, KV share 0.5. By hand:
  // weights: 2 B × (2 × 128,256 × 4,096 embeddings and head + 32 × (2 × 4,096² + 2 × 4,096 × 1,024
  // attention + 3 × 4,096 × 14,336 MLP + 2 × 4,096 norms) + 4,096) = 2 × 8,030,261,248 bytes;
  // workspace: 8,192 tokens × 2 B × (3 × 4,096 + (32 + 2 × 8) × 128 + 3 × 14,336) + 16 sequences ×
  // 4 B × 128,256 logits.
  const Config serve = resolved_config(
      R"({"model": "llama3-8b", "cluster": "dgx-h100", "plan": {"tp": 1}, "workload": {"mode": "infer", "batch": 16, "prompt_len": 2048,
          "output_len": 512, "kv_cache_free_fraction": 0.5}})");
  const double GiB = 1024.0 * 1024 * 1024, hbm = 79.6 * GiB, reserved = 2 * GiB, capacity = hbm - reserved;
  const double weights = 2.0 * (2.0 * 128256 * 4096 +
                                32.0 * (2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336 + 2.0 * 4096) + 4096);
  const double workspace = 8192.0 * 2 * (3 * 4096 + (32 + 2 * 8) * 128 + 3 * 14336) + 16.0 * 4 * 128256;
  const double pool = 0.5 * (capacity - weights - workspace);
  const Result<LaunchConfig> vllm = export_launch(serve, LaunchFormat::Vllm);
  REQUIRE(vllm.ok());
  // vLLM: pool = utilization × HBM − weights − workspace − reserve; rounded down to 0.001.
  const double util = flag_value(vllm.value.text, "--gpu-memory-utilization");
  CHECK(util == Approx((weights + workspace + reserved + pool) / hbm).margin(0.001));
  CHECK(util <= (weights + workspace + reserved + pool) / hbm);
  // SGLang: pool = mem_fraction_static × (HBM − reserve) − weights.
  const Result<LaunchConfig> sglang = export_launch(serve, LaunchFormat::Sglang);
  REQUIRE(sglang.ok());
  const double frac = flag_value(sglang.value.text, "--mem-fraction-static");
  CHECK(frac == Approx((weights + pool) / capacity).margin(0.001));
  CHECK(frac <= (weights + pool) / capacity);
  // The whole free memory (the default share 1): vLLM at 1, with a note on its default 0.9.
  const Config all = resolved_config(
      R"({"model": "llama3-8b", "cluster": "dgx-h100", "plan": {"tp": 1}, "workload": {"mode": "infer", "batch": 16}})");
  const Result<LaunchConfig> full = export_launch(all, LaunchFormat::Vllm);
  REQUIRE(full.ok());
  CHECK(flag_value(full.value.text, "--gpu-memory-utilization") == 1.0);
  bool noted = false;
  for (const std::string& n : full.value.notes) noted = noted || n.find("its default 0.9") != std::string::npos;
  CHECK(noted);
  // Weights that leave no pool: no share to give.
  const Config over = resolved_config(
      R"({"model": "llama3-405b", "cluster": "dgx-h100", "plan": {"tp": 1}, "workload": {"mode": "infer", "batch": 16}})");
  const Result<LaunchConfig> none = export_launch(over, LaunchFormat::Vllm);
  REQUIRE(none.ok());
  CHECK(none.value.text.find("--gpu-memory-utilization") == std::string::npos);
}

TEST_CASE("serving plans export vLLM and SGLang commands, and only those", "[launch]") {
  const Config serve = resolved_config(
      R"({"model": "llama3-70b", "cluster": "dgx-h100", "plan": {"tp": 8}, "workload": {"mode": "infer", "batch": 16, "prompt_len": 2048,
          "output_len": 512, "kv_dtype": "fp8"}})");
  const Result<LaunchConfig> vllm = export_launch(serve, LaunchFormat::Vllm);
  REQUIRE(vllm.ok());
  const std::set<std::string> v = flag_lines(vllm.value.text);
  for (const char* f : {"--tensor-parallel-size 8", "--max-num-seqs 16", "--max-num-batched-tokens 8192", "--max-model-len 2560",
                        "--kv-cache-dtype fp8", "--block-size 32"})
    CHECK(v.count(f) == 1);
  const Result<LaunchConfig> sglang = export_launch(serve, LaunchFormat::Sglang);
  REQUIRE(sglang.ok());
  CHECK(flag_lines(sglang.value.text).count("--tp-size 8") == 1);
  CHECK(export_launch(serve, LaunchFormat::Megatron).errors.at(0).path == "/workload/mode");
  CHECK(export_launch(resolved_config(k_readme_70b), LaunchFormat::Vllm).errors.at(0).path == "/workload/mode");
}
