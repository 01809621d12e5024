#include "native/help.h"

#include <algorithm>

namespace cutlab::cli {

namespace {

struct CommandText {
  const char* name;
  const char* summary;  // one line for the overview
  const char* synopsis;
  const char* what;  // lines of two-space indented prose, each ending in \n
};

// The config flags every command that reads a config takes (README "The CLI").
const char* k_config_flags = R"(config (a JSON file, - for stdin, or only flags; a flag overrides the file's field):
  --model NAME --cluster NAME --gpus N           required: a model and a cluster (`cutlab presets` lists them)
  --mode train|infer                             train (default): one optimizer step; infer: serving
  cut:      --tp N --pp N --cp N --ep N --dp N --etp N --vpp N --micro-batch N --sp --distributed-optimizer
            --zero 0-3|fsdp --recompute none|selective|full|op_sac --cp-comm ring|allgather|a2a
            --schedule gpipe|1f1b|interleaved|zb-h1|dualpipe --rank-order tp-cp-ep-dp-pp
            --ep-dispatcher alltoall|deepep|allgather --ep-dispatch-dtype bf16|fp8|fp4
  training: --seq-len N --global-batch N (required: sequences per step) --dtype bf16|fp8 --grad-dtype fp32|bf16|fp16
  serving:  --batch N --prompt-len N --output-len N --weight-dtype bf16|fp8|int4|fp4 --kv-dtype bf16|fp8
            --local-kv-cache window|full --batching inflight|static --max-num-tokens N --kv-block-tokens N
            --request-rate R --num-requests N (an offline run of N requests) --spec-draft-tokens N --spec-acceptance A
            --length-mix "1000/200 70%, 8000/500 30%" (requests of mixed lengths: prompt/output and each
            class's share of the requests; replaces --prompt-len and --output-len)
)";

const CommandText k_commands[] = {
    {"evaluate", "a plan: memory, communication, step time and MFU (train) or TTFT, TPOT, tokens/s (serve)",
     "cutlab evaluate [CONFIG.json | -] [flags] [--json] [--require-fit] [--max-memory-fraction F]",
     "  Training (--mode train): memory per GPU and stage, every collective, the pipeline schedule, the step\n"
     "  time in parts that add up, tokens/s and MFU. Serving (--mode infer): weights and KV cache per GPU,\n"
     "  the engine step, TTFT, TPOT and output tokens/s.\n"
     "  --json                    the page's answer as one JSON document\n"
     "  --require-fit             exit 3 when the peak stage does not fit in memory\n"
     "  --max-memory-fraction F   with --require-fit: the peak must stay under F × usable HBM\n"},
    {"schedule", "the simulated training pipeline: a text Gantt chart, --json every op, --svg the figure",
     "cutlab schedule [CONFIG.json | -] [flags] [--json] [--svg FILE] [--columns N]",
     "  The simulated pipeline of one training step as a text Gantt chart (F, B, W, X, . idle); --json\n"
     "  every op; --svg the figure (the page's Pipeline view). Training plans only.\n"},
    {"search", "the plans that fit --gpus, fastest first (--top N); serving: under latency limits, with the Pareto front",
     "cutlab search [CONFIG.json | -] [flags] [--top N] [--json] [--max-memory-fraction F] [--threads N]\n"
     "       cutlab search --mode infer [...] [--max-ttft-ms MS] [--max-tpot-ms MS] [--disaggregated] [--svg FILE]",
     "  Training: ranks the plans that fit --gpus for the model, cluster and workload, fastest first, over\n"
     "  the whole space (TP, PP, VPP, CP, EP, ETP, schedule, micro-batch, ZeRO, SP, recompute and modules,\n"
     "  overlap flags); plan fields the config gives stay fixed; prints the space and what was pruned.\n"
     "  Needs --global-batch N. --threads N (default: every hardware thread; the same ranking for any N).\n"
     "  Serving (--mode infer): TP × PP × EP × DP × batch by output tokens/s per GPU under the TTFT and\n"
     "  TPOT limits, with the Pareto front of tokens/s per GPU against per user (--svg FILE: its plot).\n"
     "  --disaggregated adds the prefill/decode deployments (xPyD): each pool's mesh and batch and the\n"
     "  instances of each, ranked the same way, their front drawn beside the co-located one.\n"},
    {"balance", "layers per pipeline stage that shorten the training step and fit",
     "cutlab balance [CONFIG.json | -] [flags] [--json] [--max-memory-fraction F]",
     "  A split of the layers over the pipeline stages (plan.layers_per_stage) that shortens the\n"
     "  training step and fits, one layer moved at a time off the stage that limits the plan.\n"},
    {"gpu", "what GPU N holds (--rank N): coordinates, node, layers, heads, experts",
     "cutlab gpu [CONFIG.json | -] [flags] --rank N [--rank M ...] [--json]",
     "  What GPU N holds: node, coordinates, layers, heads, FFN columns, experts, sequence chunks.\n"},
    {"ops", "one training layer as its ops with FLOPs, bytes and F/B/W time", "cutlab ops [CONFIG.json | -] [flags] [--json]",
     "  One training layer as its ops: GEMM shapes, attention, memory-bound ops with FLOPs, bytes, bound\n"
     "  and F/B/W time per micro-batch on one GPU.\n"},
    {"draw", "a view of the explorer as SVG: --view cuts|placement|pipeline --svg FILE",
     "cutlab draw [CONFIG.json | -] [flags] --view cuts|placement|pipeline --svg FILE [--width PX] [--layer N] [--json]",
     "  The explorer's figure of a view as SVG, laid out by the core (--width pixels, default 1000;\n"
     "  --layer N opens layer N, counted from 0, in the cuts; --json the figure itself).\n"},
    {"export", "the plan as a launch config: --to megatron|megatron-bridge|torchtitan|deepspeed|vllm|sglang",
     "cutlab export --to FORMAT [CONFIG.json | -] [flags] [--json]",
     "  The plan as the launch configuration of the framework that runs it, on stdout (notes on stderr):\n"
     "    training: megatron (Megatron-LM core_r0.13 arguments), megatron-bridge (config overrides),\n"
     "              torchtitan (job TOML, v0.1.0), deepspeed (config JSON, v0.17)\n"
     "    serving:  vllm (vllm serve, v0.10), sglang (sglang.launch_server, v0.4.9)\n"
     "  Settings a framework has no flag for travel in a '# cutlab:' comment that import reads back.\n"},
    {"import", "a Megatron-LM argument list or torchtitan TOML as a cutlab config: --from megatron|torchtitan FILE",
     "cutlab import --from megatron|torchtitan FILE [flags] [--json]",
     "  Reads Megatron-LM arguments (a launch script or a list of flags) or a torchtitan TOML and prints\n"
     "  the cutlab config (flags such as --cluster dgx-h100 --gpus 64 fill or override it). Errors name\n"
     "  the line and the flag or key.\n"},
    {"presets", "the model and cluster presets", "cutlab presets [--json]", "  The model and cluster presets with their sources.\n"},
    {"validate", "compare with published training runs and serving results",
     "cutlab validate [validation/cases.json] [--serving FILE | --no-serving] [--json] [--svg FILE] [--check]",
     "  Compares the model with published training runs and serving results (cutlab validate --help).\n"},
    {"calibrate", "fit cluster efficiencies to the published runs",
     "cutlab calibrate [validation/cases.json] [--family F] [--fit KEY,...] [--json]",
     "  Fits cluster efficiencies to the published runs (cutlab calibrate --help).\n"},
};

}  // namespace

const std::vector<std::string>& command_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const CommandText& c : k_commands) v.emplace_back(c.name);
    v.emplace_back("help");
    return v;
  }();
  return names;
}

const std::vector<std::string>& option_names() {
  static const std::vector<std::string> names = {"--model",
                                                 "--cluster",
                                                 "--gpus",
                                                 "--mode",
                                                 "--tp",
                                                 "--pp",
                                                 "--cp",
                                                 "--ep",
                                                 "--dp",
                                                 "--etp",
                                                 "--vpp",
                                                 "--micro-batch",
                                                 "--sp",
                                                 "--distributed-optimizer",
                                                 "--zero",
                                                 "--recompute",
                                                 "--cp-comm",
                                                 "--schedule",
                                                 "--rank-order",
                                                 "--ep-dispatcher",
                                                 "--ep-dispatch-dtype",
                                                 "--seq-len",
                                                 "--global-batch",
                                                 "--dtype",
                                                 "--grad-dtype",
                                                 "--batch",
                                                 "--prompt-len",
                                                 "--output-len",
                                                 "--length-mix",
                                                 "--weight-dtype",
                                                 "--kv-dtype",
                                                 "--local-kv-cache",
                                                 "--batching",
                                                 "--max-num-tokens",
                                                 "--kv-block-tokens",
                                                 "--request-rate",
                                                 "--num-requests",
                                                 "--spec-draft-tokens",
                                                 "--spec-acceptance",
                                                 "--json",
                                                 "--require-fit",
                                                 "--disaggregated",
                                                 "--max-memory-fraction",
                                                 "--svg",
                                                 "--columns",
                                                 "--top",
                                                 "--threads",
                                                 "--max-ttft-ms",
                                                 "--max-tpot-ms",
                                                 "--rank",
                                                 "--view",
                                                 "--width",
                                                 "--layer",
                                                 "--to",
                                                 "--from",
                                                 "--help"};
  return names;
}

std::string usage_text() {
  std::string out =
      "cutlab: how to cut an LLM across GPUs and what each cut costs, for training (one optimizer step,\n"
      "--mode train, the default) and for serving (engine steps of inference, --mode infer).\n\n"
      "usage: cutlab COMMAND [CONFIG.json | -] [flags]        cutlab COMMAND --help: one command\n\ncommands:\n";
  for (const CommandText& c : k_commands)
    out += "  " + std::string(c.name) + std::string(11 - std::string(c.name).size(), ' ') + c.summary + "\n";
  out += "\n";
  out += k_config_flags;
  out +=
      "\nStages and layers are numbered from 1 in tables and figures; GPUs (ranks), heads and experts from 0.\n"
      "Exit codes: 0 ok, 1 usage, 2 invalid input (each problem with its JSON path), 3 does not fit (--require-fit).\n";
  return out;
}

bool command_help(const std::string& command, std::string& out) {
  for (const CommandText& c : k_commands)
    if (command == c.name) {
      out = std::string("usage: ") + c.synopsis + "\n" + c.what;
      if (command != "presets" && command != "validate" && command != "calibrate") out += std::string("\n") + k_config_flags;
      return true;
    }
  return false;
}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = word.size() / 3 + 1;
  for (const std::string& c : candidates) {
    // Levenshtein distance, one row at a time.
    std::vector<std::size_t> row(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (word[i - 1] == c[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    if (row[c.size()] < best_d) best_d = row[c.size()], best = c;
  }
  return best;
}

std::string flag_for_path(const std::string& path) {
  static const std::pair<const char*, const char*> flags[] = {{"/model", "--model NAME (e.g. --model llama3-70b)"},
                                                              {"/cluster", "--cluster NAME (e.g. --cluster dgx-h100)"},
                                                              {"/cluster/gpus", "--gpus N"},
                                                              {"/workload/global_batch", "--global-batch N (sequences per step)"},
                                                              {"/workload/seq_len", "--seq-len N"},
                                                              {"/workload/batch", "--batch N"},
                                                              {"/workload/prompt_len", "--prompt-len N"},
                                                              {"/workload/output_len", "--output-len N"},
                                                              {"/workload/max_num_tokens", "--max-num-tokens N"},
                                                              {"/plan/tp", "--tp N"},
                                                              {"/plan/pp", "--pp N"},
                                                              {"/plan/cp", "--cp N"},
                                                              {"/plan/ep", "--ep N"},
                                                              {"/plan/dp", "--dp N"},
                                                              {"/plan/etp", "--etp N"},
                                                              {"/plan/vpp", "--vpp N"},
                                                              {"/plan/micro_batch", "--micro-batch N"},
                                                              {"/plan/schedule", "--schedule NAME"},
                                                              {"/plan/recompute", "--recompute NAME"},
                                                              {"/plan/zero", "--zero N"}};
  for (const auto& [p, f] : flags)
    if (path == p) return f;
  return "";
}

std::string error_line(const Error& e) {
  const std::string path = e.path.empty() ? "/" : e.path;
  const std::string flag = flag_for_path(e.path);
  const bool missing = e.code == ErrorCode::MissingKey && (e.path == "/model" || e.path == "/cluster");
  const bool no_batch = e.path == "/workload/global_batch" && e.message == "must be positive, got 0";
  if (!flag.empty() && (missing || no_batch)) return path + ": missing: add " + flag;
  return path + ": " + e.message;
}

}  // namespace cutlab::cli
