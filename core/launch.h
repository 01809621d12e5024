// launch.h: a plan as the launch configuration of the framework that runs it, and back.
// Training: Megatron-LM arguments (core_r0.13.0 megatron/training/arguments.py), Megatron-Bridge
// config overrides (v0.1 ConfigContainer: model.*, train.*, ddp.*, optimizer.*), a torchtitan job
// TOML (torchtitan v0.1.0 torchtitan/config/job_config.py) and a DeepSpeed config JSON (DeepSpeed
// v0.17 docs/_pages/config-json.md). Serving: `vllm serve` flags (vLLM v0.10 engine/arg_utils.py) and
// `python -m sglang.launch_server` flags (SGLang v0.4.9 srt/server_args.py).
// Each framework expresses only part of a cutlab plan. What it cannot say (a DualPipe schedule
// in Megatron-LM, ZeRO-1 in torchtitan, the modelled load imbalance) is listed in `unexpressed`
// and, for the formats that have comments, carried in one "# cutlab: {json}" line that the
// framework ignores and import_launch() reads back, with the model and cluster presets, so that
// export → import gives the same plan. Ignores: optimizer hyper-parameters, data, checkpoints,
// logging; a model's architecture is written where the framework needs it, not every detail
// (normalisation, rope) that cutlab does not model.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/plan.h"

namespace cutlab {

enum class LaunchFormat { Megatron, MegatronBridge, Torchtitan, DeepSpeed, Vllm, Sglang };

const char* name_of(LaunchFormat f);  // "megatron", "megatron-bridge", "torchtitan", "deepspeed", "vllm", "sglang"
bool launch_format_from_name(const std::string& name, LaunchFormat& out);
std::string launch_format_list();  // "megatron, megatron-bridge, …" for messages

struct LaunchConfig {
  LaunchFormat format = LaunchFormat::Megatron;
  std::string file_name;                 // a name to save it under ("megatron-args.sh", "torchtitan.toml", …)
  std::string text;                      // the arguments or file
  std::vector<std::string> unexpressed;  // JSON paths of settings the framework has no setting for ("/plan/schedule")
  std::vector<std::string> notes;        // sentences: what the framework does differently, what to add by hand
};

// The launch configuration of a valid config (training formats need mode train, serving formats
// mode infer: otherwise an error at /workload/mode).
Result<LaunchConfig> export_launch(const Config& config, LaunchFormat format);

struct ImportedConfig {
  nlohmann::json config;           // a cutlab config: model, cluster, plan, workload
  std::vector<std::string> notes;  // flags or keys read but not used (learning rate, data paths, …)
};

// Reads Megatron-LM arguments (a launch script or a list of flags; text before the first flag,
// such as `torchrun … pretrain_gpt.py`, is skipped) or a torchtitan TOML. Errors name the line and
// the flag or key ("line 12: --tensor-model-parallel-size"). The model comes from the "# cutlab:"
// line, else from the architecture flags (Megatron) or [model] name and flavor (torchtitan); the
// cluster and the GPU count only from that line: without it the config has no "cluster", which the
// caller adds (`cutlab import … --cluster NAME --gpus N`).
Result<ImportedConfig> import_launch(const std::string& text, LaunchFormat format);

}  // namespace cutlab
