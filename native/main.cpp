// cutlab: the command-line face of the core. What it says about itself (cutlab --help, cutlab
// COMMAND --help, suggestions, missing inputs) is native/help.h; export and import native/launch_cli.h.
// Exit codes: 0 ok, 1 usage or I/O error, 2 invalid input, 3 does not fit (with --require-fit).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/api.h"
#include "core/json_io.h"
#include "core/presets.h"
#include "core/scene_pareto.h"
#include "native/draw.h"
#include "native/format.h"
#include "native/help.h"
#include "native/launch_cli.h"
#include "native/timeline.h"
#include "native/validate.h"

using nlohmann::json;
using namespace cutlab;
using namespace cutlab::cli;

namespace {

constexpr int kOk = 0, kUsage = 1, kInvalid = 2, kNoFit = 3;

struct Args {
  std::string command, file;
  bool as_json = false, require_fit = false;
  double max_fraction = 1.0;
  std::string svg_path;
  int columns = 100;
  int top = 10;
  double max_ttft_ms = 0, max_tpot_ms = 0;  // serving search limits (0: none)
  bool disaggregated = false;               // serving search: the disaggregated deployments too
  int threads = 0;                          // search: 0 = every hardware thread
  std::vector<int> ranks;
  std::vector<std::pair<std::string, std::string>> overrides;  // flag, value
};

// Sets `section/key` in the config; a preset name in the section becomes {"preset": name}.
void set_field(json& cfg, const std::string& section, const std::string& key, const json& value) {
  json& s = cfg[section];
  if (s.is_string()) s = json{{"preset", s}};
  if (!s.is_object()) s = json::object();
  s[key] = value;
}

// Integers stay integers so that validation reports types faithfully.
json parse_value(const std::string& v) {
  json j = json::parse(v, nullptr, false);
  if (!j.is_discarded() && (j.is_number() || j.is_boolean())) return j;
  return v;
}

// --length-mix "1000/200 70%, 8000/500 30%": classes prompt/output, each with a share of the requests
// (70%, 0.7, ×3 or :0.7; none: 1), as the page's Length mix control reads them (web/state.js parseMix).
// One class: digits, '/', digits, then optionally a separator (×, x, *, :) and a number with an optional %.
bool parse_length_class(const std::string& part, json& mix) {
  std::size_t i = 0;
  auto spaces = [&] {
    while (i < part.size() && part[i] == ' ') ++i;
  };
  auto digits = [&](long long& v) {
    const std::size_t from = i;
    for (v = 0; i < part.size() && std::isdigit(static_cast<unsigned char>(part[i])) && i - from < 9; ++i)
      v = v * 10 + (part[i] - '0');
    return i > from;
  };
  long long prompt = 0, output = 0;
  spaces();
  if (!digits(prompt)) return false;
  spaces();
  if (i >= part.size() || part[i++] != '/') return false;
  spaces();
  if (!digits(output)) return false;
  spaces();
  double share = 1.0;
  if (part.compare(i, 2, "×") == 0) i += 2;
  else if (i < part.size() && (part[i] == 'x' || part[i] == '*' || part[i] == ':')) ++i;
  spaces();
  if (i < part.size()) {
    const std::size_t from = i;
    while (i < part.size() && (std::isdigit(static_cast<unsigned char>(part[i])) || part[i] == '.') && i - from < 12) ++i;
    if (i == from) return false;
    char* end = nullptr;
    const std::string number = part.substr(from, i - from);
    share = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size()) return false;
    if (i < part.size() && part[i] == '%') ++i;
    spaces();
  }
  if (i != part.size()) return false;
  mix.push_back({{"prompt_len", prompt}, {"output_len", output}, {"share", share}});
  return true;
}

bool parse_length_mix(const std::string& text, json& mix, std::string& problem) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.find(';', start));
    const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (mix.size() > 64 || part.size() > 64 || !parse_length_class(part, mix)) {  // bounded
      problem = "--length-mix: '" + part.substr(0, 40) + "' is not prompt/output [share], as in \"1000/200 70%, 8000/500 30%\"";
      return false;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return true;
}

bool apply_overrides(json& cfg, const Args& a, std::string& problem) {
  if (!cfg.is_object()) return true;  // config_from_json reports that the config must be an object
  static const std::map<std::string, std::pair<std::string, std::string>> fields = {
      {"--gpus", {"cluster", "gpus"}},
      {"--tp", {"plan", "tp"}},
      {"--pp", {"plan", "pp"}},
      {"--cp", {"plan", "cp"}},
      {"--ep", {"plan", "ep"}},
      {"--dp", {"plan", "dp"}},
      {"--etp", {"plan", "etp"}},
      {"--vpp", {"plan", "vpp"}},
      {"--micro-batch", {"plan", "micro_batch"}},
      {"--zero", {"plan", "zero"}},
      {"--recompute", {"plan", "recompute"}},
      {"--cp-comm", {"plan", "cp_comm"}},
      {"--schedule", {"plan", "schedule"}},
      {"--rank-order", {"plan", "rank_order"}},
      {"--seq-len", {"workload", "seq_len"}},
      {"--global-batch", {"workload", "global_batch"}},
      {"--dtype", {"workload", "dtype"}},
      {"--grad-dtype", {"workload", "grad_dtype"}},
      {"--mode", {"workload", "mode"}},
      {"--batch", {"workload", "batch"}},
      {"--prompt-len", {"workload", "prompt_len"}},
      {"--output-len", {"workload", "output_len"}},
      {"--weight-dtype", {"workload", "weight_dtype"}},
      {"--kv-dtype", {"workload", "kv_dtype"}},
      {"--local-kv-cache", {"workload", "local_kv_cache"}},
      {"--batching", {"workload", "batching"}},
      {"--max-num-tokens", {"workload", "max_num_tokens"}},
      {"--kv-block-tokens", {"workload", "kv_block_tokens"}},
      {"--kv-cache-free-fraction", {"workload", "kv_cache_free_fraction"}},
      {"--request-rate", {"workload", "request_rate_per_s"}},
      {"--num-requests", {"workload", "num_requests"}},
      {"--spec-draft-tokens", {"workload", "spec_draft_tokens"}},
      {"--spec-acceptance", {"workload", "spec_acceptance"}},
      {"--ep-dispatch-dtype", {"plan", "ep_dispatch_dtype"}},
      {"--ep-dispatcher", {"plan", "ep_dispatcher"}}};
  for (const auto& [flag, value] : a.overrides) {
    if (flag == "--model" || flag == "--cluster") {
      const std::string section = flag.substr(2);
      json& s = cfg[section];
      if (s.is_object()) s["preset"] = value;  // keep the file's overrides on top of the new preset
      else s = value;
    } else if (flag == "--length-mix") {
      json mix = json::array();
      if (!parse_length_mix(value, mix, problem)) return false;
      set_field(cfg, "workload", "length_mix", mix);
    } else if (flag == "--sp") {
      set_field(cfg, "plan", "sp", true);
    } else if (flag == "--distributed-optimizer") {
      set_field(cfg, "plan", "distributed_optimizer", true);
    } else if (auto it = fields.find(flag); it != fields.end()) {
      set_field(cfg, it->second.first, it->second.second, parse_value(value));
    } else {
      const std::string near = closest(flag, option_names());
      problem = "unknown option " + flag + (near.empty() ? "" : " (did you mean " + near + "?)") + "; cutlab --help lists the flags";
      return false;
    }
  }
  return true;
}

bool parse_args(int argc, char** argv, Args& a, std::string& problem) {
  if (argc < 2) return false;
  a.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--json") a.as_json = true;
    else if (s == "--require-fit") a.require_fit = true;
    else if (s == "--disaggregated") a.disaggregated = true;
    else if (s == "--sp" || s == "--distributed-optimizer") a.overrides.push_back({s, ""});
    else if (s == "--rank" && i + 1 < argc) {
      char* end = nullptr;
      const long r = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || r < 0 || r > (1L << 30)) {
        problem = "--rank must be a GPU index";
        return false;
      }
      a.ranks.push_back(static_cast<int>(r));
    } else if ((s == "--svg" || s == "--columns" || s == "--top" || s == "--threads") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (s == "--svg") a.svg_path = v;
      else if (s == "--top") a.top = std::atoi(v.c_str());
      else if (s == "--threads") a.threads = std::atoi(v.c_str());
      else a.columns = std::atoi(v.c_str());
      if (s == "--threads" && (a.threads < 1 || a.threads > 1024)) {
        problem = "--threads must be between 1 and 1024";
        return false;
      }
      if (s == "--top" && (a.top < 1 || a.top > 1000)) {
        problem = "--top must be between 1 and 1000";
        return false;
      }
      if (s == "--columns" && (a.columns < 20 || a.columns > 1000)) {
        problem = "--columns must be between 20 and 1000";
        return false;
      }
    } else if (s == "--max-memory-fraction" || (s.rfind("--", 0) == 0 && s.size() > 2)) {
      if (i + 1 >= argc) {
        const auto& known = option_names();
        const std::string near = closest(s, known);
        problem = std::find(known.begin(), known.end(), s) != known.end()
                      ? s + " needs a value"
                      : "unknown option " + s + (near.empty() ? "" : " (did you mean " + near + "?)") +
                            "; cutlab --help lists the flags";
        return false;
      }
      const std::string v = argv[++i];
      if (s == "--max-ttft-ms" || s == "--max-tpot-ms") {
        char* end = nullptr;
        const double ms = std::strtod(v.c_str(), &end);
        if (*end != '\0' || !(ms > 0 && ms <= 1e9)) {
          problem = s + " must be a positive number of milliseconds";
          return false;
        }
        (s == "--max-ttft-ms" ? a.max_ttft_ms : a.max_tpot_ms) = ms;
      } else if (s == "--max-memory-fraction") {
        char* end = nullptr;
        a.max_fraction = std::strtod(v.c_str(), &end);
        if (*end != '\0' || !(a.max_fraction > 0 && a.max_fraction <= 1)) {
          problem = "--max-memory-fraction must be in (0, 1]";
          return false;
        }
        a.require_fit = true;
      } else {
        a.overrides.push_back({s, v});
      }
    } else if (a.file.empty()) {
      a.file = s;
    } else {
      problem = "unexpected argument " + s;
      return false;
    }
  }
  return true;
}

bool read_file(const std::string& path, std::string& text) {
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
    return true;
  }
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

int report_errors(const Errors& errors, bool as_json) {
  if (as_json) {
    std::cout << json{{"errors", to_json(errors)}}.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    std::cerr << "invalid input (" << errors.size() << (errors.size() == 1 ? " problem" : " problems") << "):\n";
    for (const Error& e : errors) std::cerr << "  " << error_line(e) << "\n";
  }
  return kInvalid;
}

std::string pct(double f) { return fixed(100.0 * f, 1) + "%"; }

// core/plan.h lengths_text, a mix with its means: "lengths 1000/200 70%, 8000/500 30% (mean prompt 3,100 · output 290)".
std::string lengths_with_means(const Workload& w) {
  if (w.length_mix.empty()) return lengths_text(w);
  const MeanLengths mean = mean_lengths(w);
  return lengths_text(w) + " (mean prompt " + with_commas(mean.prompt_len) + " · output " + with_commas(mean.output_len) + ")";
}

void print_tables(const TrainingEstimate& e, const Config& c) {
  const Plan& p = c.plan;
  const Workload& w = c.workload;
  std::cout << "cutlab · " << c.model.name << " on " << c.cluster.name << " (" << c.cluster.gpu << ")\n";
  std::cout << with_commas(e.mesh.gpus) << " GPUs = ";
  if (p.etp > 0)
    std::cout << "TP " << p.tp << " × CP " << p.cp << " × DP " << p.dp << " × PP " << p.pp << "  |  experts: ETP " << e.mesh.etp
              << " × EP " << p.ep << " × EDP " << e.mesh.edp << " × PP " << p.pp;
  else std::cout << "TP " << p.tp << " × PP " << p.pp << " × CP " << p.cp << " × EP " << p.ep << " × DP " << p.dp;
  std::cout << "  (" << with_commas(e.placement.nodes) << (e.placement.nodes == 1 ? " node of " : " nodes of ")
            << e.placement.gpus_per_node << ")\n";
  std::cout << "params " << count(e.params.total) << " total, " << count(e.params.active) << " active"
            << (e.params.mtp > 0 ? " (+" + count(e.params.mtp) + " MTP)" : std::string()) << " · seq " << w.seq_len
            << " · global batch " << w.global_batch << " = micro-batch " << p.micro_batch << " × " << e.mesh.num_micro_batches << " × "
            << e.mesh.dp_attn << " replicas · " << w.dtype << " · ZeRO " << e.mesh.zero << (p.sp ? " · SP" : "") << " · recompute "
            << p.recompute << "\n\n";

  Table groups{{"group", "size", "groups", "per node", "nodes", "link"}, {}};
  const GroupInfo* dp = find_group(e.placement, Axis::DP);
  for (const GroupInfo& g : e.placement.groups) {
    if (g.size <= 1) continue;
    if (g.axis == Axis::DPGrad && dp && dp->size == g.size) continue;  // the same GPUs as dp
    groups.rows.push_back(
        {name_of(g.axis), std::to_string(g.size), with_commas(double(g.count)), std::to_string(g.members_per_node),
         std::to_string(g.nodes_spanned),
         std::string(name_of(g.link)) + (g.axis == Axis::TP && g.link == Link::ScaleOut ? "  ⚠ TP crosses nodes" : "")});
  }
  std::cout << "Placement (rank order " << p.rank_order << ", innermost first)\n";
  if (groups.rows.empty()) std::cout << " one GPU: nothing is cut\n";
  else std::cout << groups.render();
  std::cout << "\n";

  Table mem{{"stage", "layers", "weights", "grads", "optimizer", "activations", "in flight", "allocator", "total GiB", "usable",
             "fits"},
            {}};
  for (size_t i = 0; i < e.memory.per_stage.size(); ++i) {
    const StageMemory& s = e.memory.per_stage[i];
    const StageInfo& st = e.placement.stages[i];
    std::string layers;
    for (auto [a, b] : st.chunks)
      if (b >= a) layers += (layers.empty() ? "" : ",") + std::to_string(a + 1) + (b > a ? "–" + std::to_string(b + 1) : "");
    if (st.embedding) layers += " +emb";
    if (st.output) layers += " +out";
    mem.rows.push_back({std::to_string(s.stage + 1) + (int(i) == e.memory.peak_stage ? " *" : ""), layers, gib(s.weights_bytes),
                        gib(s.grads_bytes), gib(s.optimizer_bytes), gib(s.activations_bytes), fixed(s.in_flight_micro_batches, 2),
                        gib(s.allocator_bytes), gib(s.total_bytes), gib(s.capacity_bytes),
                        s.fits ? "yes" : "NO +" + gib(s.total_bytes - s.capacity_bytes)});
  }
  std::cout << "Memory per GPU, GiB (* peak stage)\n" << mem.render();
  if (e.memory.fits)
    std::cout << " fits: peak " << gib(e.memory.per_stage[e.memory.peak_stage].total_bytes) << " of "
              << gib(e.memory.per_stage[0].capacity_bytes) << " GiB usable\n\n";
  else
    std::cout << " DOES NOT FIT: stage " << e.memory.peak_stage + 1 << " overflows by " << gib(e.memory.overflow_bytes) << " GiB\n\n";
  if (p.activation_offload_layers > 0) {
    double host = 0;
    for (const StageMemory& s : e.memory.per_stage) host = std::max(host, s.offloaded_activations_bytes);
    std::cout << " activations of " << p.activation_offload_layers << " layer(s) per stage in host memory: up to " << gib(host)
              << " GiB per GPU\n\n";
  }

  Table comm{{"#", "axis", "collective", "group", "link", "message", "calls", "bytes", "time", "exposed"}, {}};
  for (const CommOp& op : e.comm)
    comm.rows.push_back({std::to_string(comm.rows.size() + 1), name_of(op.axis), name_of(op.collective), std::to_string(op.group_size),
                         link_label(c.cluster, op.link), human_bytes(op.message_bytes), with_commas(op.calls), human_bytes(op.bytes),
                         human_time(op.time_s), human_time(op.exposed_s)});
  std::cout << "Communication per step, one GPU of stage " << e.comm_stage + 1 << "\n";
  if (comm.rows.empty()) {
    std::cout << " none\n\n";
  } else {
    std::cout << comm.render();
    for (size_t i = 0; i < e.comm.size(); ++i) std::cout << " " << i + 1 << " " << e.comm[i].what << "\n";
    if (p.pp > 1) std::cout << " (pp hand-offs on the critical path are part of the simulated pipeline time)\n";
    std::cout << "\n";
  }

  const TimeBreakdown& b = e.breakdown;
  Table time{{"part", "time", "share"}, {}};
  auto row = [&](const char* name, double s) {
    if (s > 0) time.rows.push_back({name, human_time(s), pct(s / e.step_s)});
  };
  row("compute (F, B, W)", b.compute_s);
  row("recompute", b.recompute_s);
  row("TP exposed", b.tp_exposed_s);
  row("CP exposed", b.cp_exposed_s);
  row("EP exposed", b.ep_exposed_s);
  row("slowed by EP kernels' SMs", b.ep_sm_slowdown_s);
  row("offload exposed", b.offload_exposed_s);
  row("pipeline bubble + p2p", b.pp_bubble_s);
  row("DP exposed", b.dp_exposed_s);
  row("optimizer step", b.optimizer_s);
  time.rows.push_back({"step", human_time(e.step_s), "100%"});
  std::cout << "Time per step (schedule " << e.schedule.name << ", bubble " << pct(e.schedule.bubble_fraction) << ")\n"
            << time.render();
  std::cout << " " << with_commas(e.tokens_per_s) << " tokens/s · " << fixed(e.model_flops_per_s_per_gpu / 1e12, 0)
            << " TFLOP/s per GPU · MFU " << pct(e.mfu) << " of " << e.peak_name << " · HFU " << pct(e.hfu) << "\n";
}

// A mix of lengths: each class's latencies (TPOT is every class's), and served disaggregated its KV
// transfer (`transfers`, class i at index i).
void print_length_classes(const ClassList<ClassLatency>& classes, double tpot_s, const ClassList<double>* transfers = nullptr) {
  if (classes.empty()) return;
  Table k{{"prompt", "output", "share", "first token after", "TTFT", "end to end"}, {}};
  if (transfers) k.header.insert(k.header.begin() + 4, "KV transfer");
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const ClassLatency& x = classes[i];
    std::vector<std::string> row = {with_commas(x.lengths.prompt_len),
                                    with_commas(x.lengths.output_len),
                                    pct(x.lengths.share),
                                    fixed(x.prefill_steps, 1) + " steps",
                                    human_time(x.ttft_s),
                                    human_time(x.e2e_latency_s)};
    if (transfers) row.insert(row.begin() + 4, i < transfers->size() ? human_time((*transfers)[i]) : "");
    k.rows.push_back(row);
  }
  std::cout << "\nBy length class (TPOT " << human_time(tpot_s) << " for every class; the figures above are means over requests)\n"
            << k.render();
}

void print_inference(const ServingEstimate& e, const Config& c) {
  const Plan& p = c.plan;
  const Workload& w = c.workload;
  const InferenceEstimate& r = e.serving;
  std::cout << "cutlab · serving " << c.model.name << " on " << c.cluster.name << " (" << c.cluster.gpu << ")\n";
  std::cout << with_commas(e.mesh.gpus) << " GPUs = TP " << p.tp << " × PP " << p.pp << " × EP " << p.ep << " × DP " << p.dp << "  ("
            << r.replicas << (r.replicas == 1 ? " replica" : " replicas") << ", " << with_commas(e.placement.nodes)
            << (e.placement.nodes == 1 ? " node of " : " nodes of ") << e.placement.gpus_per_node << ")\n";
  if (r.instances > 1) {
    const int across = r.instances - r.instances_whole;
    const long long g = e.mesh.gpus / r.instances;
    const char* whole = g > e.placement.gpus_per_node ? "on whole nodes of its own" : "within one node";
    std::cout << r.instances << " instances of " << g << (g == 1 ? " GPU" : " GPUs") << ": ";
    if (across == 0) std::cout << "each " << whole << "\n";
    else
      std::cout << r.instances_whole << " each " << whole << ", " << across << " straddling a node boundary (the nodes cannot hold "
                << (across == 1 ? "it" : "them")
                << " whole)\n latencies, step and communication below: a straddling instance's; throughput: all " << r.instances
                << "\n";
  }
  const bool inflight = r.batching == Batching::InFlight;
  std::cout << (inflight ? "in-flight batching · batch " : "static batch ") << w.batch
            << (inflight ? (r.micro_batches > 1 ? " per micro-batch × " + std::to_string(r.micro_batches) : std::string(" per step"))
                         : std::string(" per replica"))
            << " · " << lengths_with_means(w) << " · weights " << w.weight_dtype
            << (w.expert_weight_dtype != ExpertWeightDtype::Same ? std::string(" (experts ") + name_of(w.expert_weight_dtype) + ")"
                                                                 : std::string())
            << " · KV cache " << w.kv_dtype << " (" << human_bytes(r.kv_cache_bytes_per_token) << " per token)";
  if (inflight)
    std::cout << "\nmax_num_tokens " << with_commas(w.max_num_tokens) << " · KV blocks of " << w.kv_block_tokens << " tokens · "
              << (w.kv_cache_free_fraction < 1 ? "KV cache " + fixed(100 * w.kv_cache_free_fraction, 0) + "% of the free memory · "
                                               : std::string())
              << (w.request_rate_per_s > 0 ? fixed(w.request_rate_per_s, 2) + " requests/s"
                  : w.num_requests > 0     ? "offline run of " + with_commas(w.num_requests) + " requests (all queued at the start)"
                                           : std::string("offline (all requests queued)"));
  if (w.spec_draft_tokens > 0)
    std::cout << "\nspeculative decoding: " << w.spec_draft_tokens << " draft tokens, acceptance " << fixed(w.spec_acceptance, 2)
              << " → " << fixed(r.spec_tokens_per_step, 2) << " tokens per step";
  std::cout << "\n\n";
  Table mem{{"stage", "weights", "KV cache", "workspace", "total GiB", "usable", "fits"}, {}};
  for (const StageMemory& s : r.memory.per_stage)
    mem.rows.push_back({std::to_string(s.stage + 1) + (s.stage == r.memory.peak_stage ? " *" : ""), gib(s.weights_bytes),
                        gib(s.kv_cache_bytes), gib(s.activations_bytes), gib(s.total_bytes), gib(s.capacity_bytes),
                        s.fits ? "yes" : "NO +" + gib(s.total_bytes - s.capacity_bytes)});
  std::cout << "Memory per GPU, GiB (* peak stage)\n" << mem.render();
  if (!r.memory.fits)
    std::cout << " does not fit: the largest batch that fits is " << r.max_batch_that_fits << " sequences"
              << (inflight && r.micro_batches > 1 ? " per micro-batch" : " per replica") << "\n\n";
  else
    std::cout << " largest batch that fits: " << r.max_batch_that_fits << " sequences"
              << (inflight && r.micro_batches > 1 ? " per micro-batch" : " per replica") << " · KV cache " << pct(r.kv_cache_occupancy)
              << " occupied (" << gib(r.kv_cache_used_bytes) << " GiB of the peak stage)\n\n";
  Table comm{{"axis", "collective", "group", "link", "message", "calls", "time"}, {}};
  for (const CommOp& op : r.comm)
    comm.rows.push_back({name_of(op.axis), name_of(op.collective), std::to_string(op.group_size), link_label(c.cluster, op.link),
                         human_bytes(op.message_bytes), with_commas(op.calls), human_time(op.time_s)});
  if (!comm.rows.empty()) std::cout << "Communication per step, one GPU of stage 1\n" << comm.render() << "\n";
  if (inflight) {
    std::cout << "Steady state per replica: " << fixed(r.concurrency, 1) << " sequences in flight (limited by "
              << ChoiceTable<ConcurrencyLimit>::entries[static_cast<size_t>(r.concurrency_limit)].label << ")"
              << (r.saturated ? ", saturated: requests arrive faster than they are served" : "") << "\n"
              << " each step: " << fixed(r.decode_seqs_per_step, 1) << " decoding sequences + "
              << with_commas(r.prefill_tokens_per_step) << " prompt tokens" << (r.token_budget_bound ? " (token budget full)" : "")
              << " · step " << human_time(r.step_s) << " · first token after " << fixed(r.prefill_steps, 1) << " steps\n";
    auto waves = [](double n) { return fixed(n, 0) + (n == 1 ? " wave" : " waves"); };
    if (r.run_s > 0 && r.run_waves > 0)
      std::cout << " the run: " << human_time(r.run_s) << " per replica in " << waves(r.run_waves) << " of sequences started together"
                << (r.run_waves > 1 ? " (the last one partly full)" : "") << "; the throughputs below are the run's\n";
    else if (r.run_s > 0)  // mixed lengths: no waves (core/serving_offline_mix.h)
      std::cout
          << " the run: " << human_time(r.run_s) << " per replica, its mixed lengths finishing apart (no waves: each slot takes"
          << " the next request as it frees; the engine's schedule replayed step by step); the throughputs below are the run's\n";
    if (r.run_s > 0 && r.run_one_more_wave_s > 0)
      std::cout << " the KV pool holds " << with_commas(r.run_spare_sequences)
                << (r.run_spare_sequences == 1 ? " sequence" : " sequences") << " beyond the fewest that finish in "
                << waves(r.run_waves) << "; with fewer, " << waves(r.run_waves + 1) << ": " << human_time(r.run_one_more_wave_s)
                << " per replica, throughput " << signed_percent(100.0 * (r.run_s / r.run_one_more_wave_s - 1.0)) << "\n";
    std::cout << "\n";
  }
  Table t{{"part", "prefill (TTFT)", "decode (TPOT)"}, {}};
  const LatencyParts &pf = r.prefill, &dc = r.decode;
  t.rows.push_back({"weights read", human_time(pf.weights_s), human_time(dc.weights_s)});
  t.rows.push_back({"KV cache read", human_time(pf.kv_s), human_time(dc.kv_s)});
  t.rows.push_back({"compute", human_time(pf.compute_s), human_time(dc.compute_s)});
  t.rows.push_back({"TP collectives", human_time(pf.tp_s), human_time(dc.tp_s)});
  t.rows.push_back({"EP dispatch + combine", human_time(pf.ep_s), human_time(dc.ep_s)});
  if (pf.ep_wait_s > 0 || dc.ep_wait_s > 0)
    t.rows.push_back({"EP wait (slowest rank)", human_time(pf.ep_wait_s), human_time(dc.ep_wait_s)});
  t.rows.push_back({"PP hand-offs + waits", human_time(pf.pp_s), human_time(dc.pp_s)});
  if (w.spec_draft_tokens > 0) t.rows.push_back({"draft head", human_time(pf.draft_s), human_time(dc.draft_s)});
  if (pf.host_s > 0 || dc.host_s > 0) t.rows.push_back({"host (per sequence)", human_time(pf.host_s), human_time(dc.host_s)});
  if (pf.queue_s > 0) t.rows.push_back({"queue (waiting for a slot)", human_time(pf.queue_s), human_time(dc.queue_s)});
  if (pf.step_wait_s > 0)
    t.rows.push_back({"waiting for the step in progress", human_time(pf.step_wait_s), human_time(dc.step_wait_s)});
  t.rows.push_back({"total", human_time(r.ttft_s), human_time(r.tpot_s)});
  std::cout << "Latency\n" << t.render();
  std::cout << " end to end " << human_time(r.e2e_latency_s) << " · " << fixed(r.output_tokens_per_s_per_user, 1)
            << " output tokens/s per user · " << with_commas(r.output_tokens_per_s_total) << " total · "
            << fixed(r.output_tokens_per_s_per_gpu, 1) << " per GPU · " << fixed(r.requests_per_s, 2) << " requests/s";
  if (p.pp > 1) std::cout << " · each stage idle " << pct(r.stage_idle_fraction);
  std::cout << "\n";
  // How far such figures are off for a model the serving fit has not seen, when the cluster is a preset's
  // serving efficiencies as given (core/presets.h ClusterPreset::serving_held_out_percent).
  if (const ClusterPreset* cp = serving_preset_as_given(c.cluster)) {
    const bool pooled = cp->serving_held_out_family == "pooled";
    std::cout << " calibrated: " << cp->fitted_to << " (training / serving); for " << (pooled ? "a GPU" : "a model")
              << " the serving fit has not seen, " << fixed(cp->serving_held_out_percent, 1) << "% off on average ("
              << (pooled ? "each GPU family held out in turn" : cp->serving_held_out_family + " cases held out by model")
              << ", docs/validation.md §8)\n";
  }
  print_length_classes(r.length_classes, r.tpot_s);
}

int cmd_presets(const Args& a) {
  if (a.as_json) {
    std::cout << api::presets_json() << "\n";
    return kOk;
  }
  Table models{{"model", "layers", "hidden", "heads/kv", "experts", "params", "source"}, {}};
  for (const ModelPreset& p : model_presets()) {
    const ModelSpec& m = p.spec;
    models.rows.push_back({m.name, std::to_string(m.layers), std::to_string(m.hidden),
                           std::to_string(m.heads) + "/" + std::to_string(m.kv_heads),
                           m.experts ? std::to_string(m.experts) + " top-" + std::to_string(m.top_k) : "-",
                           count(count_params(m).total), p.source.substr(0, 60)});
  }
  Table clusters{{"cluster", "gpu", "per node", "HBM GiB", "bf16 TFLOP/s", "in-node link GB/s", "scale-out GB/s",
                  "fitted to: training / serving", "serving held out"},
                 {}};
  for (const ClusterPreset& p : cluster_presets()) {
    const Cluster& c = p.spec;
    clusters.rows.push_back({c.name, c.gpu, std::to_string(c.gpus_per_node), fixed(c.hbm_bytes / 1073741824.0, 1),
                             fixed(c.bf16_flops_per_s / 1e12, 0),
                             link_label(c, Link::NVLink) + " " + fixed(c.nvlink_bytes_per_s / 1e9, 0),
                             fixed(c.scaleout_bytes_per_s / 1e9, 0), p.fitted_to, fixed(p.serving_held_out_percent, 1) + "%"});
  }
  std::cout << "Models\n"
            << models.render() << "\nClusters\n"
            << clusters.render()
            << " fitted to: the published runs and serving cases each GPU's efficiencies were fitted to (docs/validation.md);\n"
               " the H800 and H200 take the H100's training fit (the same die), the H800 its serving fit too, the GB200 the\n"
               " B200's serving kernel rates; pooled: one serving fit to the cases of all five GPU families. serving held out:\n"
               " the mean |error| of its serving family's cases for a model the fit has not seen (pooled: each family left out)\n";
  return kOk;
}

// The config file with the flags applied, as JSON text for the façade (core/api.h); on failure
// returns false and the exit code to use.
bool load_text(const Args& a, std::string& out, int& rc) {
  json cfg = json::object();
  if (!a.file.empty()) {
    std::string text;
    if (!read_file(a.file, text)) {
      std::cerr << "cutlab: cannot read " << a.file << "\n";
      rc = kUsage;
      return false;
    }
    Errors strict;  // NUL bytes, duplicate keys, deep nesting: the façade reports them too
    cfg = parse_strict(text, strict);
    if (cfg.is_discarded()) {  // the façade reports it, as it would to the page
      out = text;
      return true;
    }
  }
  std::string problem;
  if (!apply_overrides(cfg, a, problem)) {
    std::cerr << "cutlab: " << problem << "\n";
    rc = kUsage;
    return false;
  }
  out = cfg.dump(-1, ' ', false, json::error_handler_t::replace);  // bytes that are not UTF-8 become U+FFFD
  return true;
}

// An answer of the façade that failed: its JSON (--json) or its errors on stderr; exit code 2.
template <class T>
int report(const api::Answer<T>& answer, const std::string& json_text, bool as_json) {
  if (as_json) {
    std::cout << json_text << "\n";
    return kInvalid;
  }
  return report_errors(answer.result.errors, false);
}

int cmd_schedule(const Args& a) {
  std::string text;
  int rc = kOk;
  if (!load_text(a, text, rc)) return rc;
  const api::Answer<api::Evaluated> answer = api::evaluate(text);
  if (!answer.ok()) return report(answer, api::schedule_json_text(answer), a.as_json);
  const Config& c = answer.result.value.resolved.config;
  const auto* e = std::get_if<TrainingEstimate>(&answer.result.value.estimate);
  if (!e) {
    std::cerr << "cutlab: a serving plan has no pipeline schedule (see `cutlab evaluate`)\n";
    return kUsage;
  }
  const ScheduleResult& s = e->schedule;
  if (!a.svg_path.empty()) {
    // The pipeline figure, as `cutlab draw --view pipeline` and the page's SVG export draw it.
    std::ofstream out(a.svg_path);
    out << figure_svg(pipeline_figure(answer.result.value.resolved, answer.result.value.estimate, 1100));
    if (!out) {
      std::cerr << "cutlab: cannot write " << a.svg_path << "\n";
      return kUsage;
    }
  }
  if (a.as_json) {
    std::cout << api::schedule_json_text(answer) << "\n";
    return kOk;
  }
  std::cout << "schedule " << s.name << " · " << c.plan.pp << " stages · " << e->mesh.num_micro_batches << " micro-batches · makespan "
            << human_time(s.makespan_s) << " · bubble " << pct(s.bubble_fraction) << "\n";
  std::cout << gantt_text(s, a.columns);
  std::cout << "peak micro-batches alive per stage:";
  for (int n : s.peak_alive_micro_batches) std::cout << " " << n;
  std::cout << (e->mesh.chunks > 1 ? " (model chunks)" : "") << "\n";
  return kOk;
}

// The disaggregated deployments of `cutlab search --mode infer --disaggregated`: the best under the
// limits, then their front.
void print_disaggregated(const DisaggregatedSearchResult& d, const Config& c) {
  std::cout << "\nDisaggregated deployments (prefill pool → decode pool, disaggregation_search.h): " << with_commas(double(d.meshes))
            << " instance meshes, " << with_commas(double(d.prefill_options)) << " prefill and "
            << with_commas(double(d.decode_options)) << " decode options that fit, " << with_commas(double(d.pairs)) << " pairs, "
            << with_commas(double(d.within_limits)) << " within the limits" << (d.truncated ? " (stopped at the search's bound)" : "")
            << "\n";
  auto table = [](const std::vector<DisaggregatedPoint>& points) {
    Table t{{"#", "prefill", "decode", "GPUs", "TTFT", "TPOT", "tok/s/user", "tok/s/GPU", "total tok/s", "req/s", "bound", "limits"},
            {}};
    int i = 0;
    for (const DisaggregatedPoint& p : points)
      t.rows.push_back({std::to_string(++i),
                        std::to_string(p.prefill_instances) + " × " + serving_plan_label(p.prefill_plan, p.prefill_batch),
                        std::to_string(p.decode_instances) + " × " + serving_plan_label(p.decode_plan, p.decode_batch),
                        std::to_string(p.prefill_gpus) + " + " + std::to_string(p.decode_gpus) +
                            (p.idle_gpus > 0 ? " (" + std::to_string(p.idle_gpus) + " idle)" : ""),
                        human_time(p.ttft_s), human_time(p.tpot_s), fixed(p.output_tokens_per_s_per_user, 1),
                        fixed(p.output_tokens_per_s_per_gpu, 1), with_commas(p.output_tokens_per_s_total), fixed(p.requests_per_s, 2),
                        p.bound == "kv_transfer" ? "KV link" : p.bound,
                        p.within_limits ? "met"
                        : p.saturated   ? "saturated"
                                        : "missed"});
    return t.render();
  };
  if (d.best.empty()) {
    std::cout << "No disaggregated deployment fits on " << c.cluster.gpus << " GPUs.\n";
    return;
  }
  const double rate = c.workload.request_rate_per_s;
  std::cout << (!d.front_within_limits && d.best.front().saturated
                    ? "None keeps up with " + figure::sig(rate) + " requests/s; the deployments that serve the most:\n"
                : !d.front_within_limits ? "None meets the limits; the closest:\n"
                : rate > 0               ? "Fewest GPUs that serve " + figure::sig(rate) + " requests/s (the rest idle):\n"
                                         : std::string("Best by output tokens/s per GPU (of all the GPUs):\n"))
            << table(d.best) << "\nTheir Pareto front" << (d.front_within_limits ? "" : " (none meets the limits)")
            << ", most per user first\n"
            << table(d.front);
  std::cout << " prefill, decode: instances × one instance's mesh and batch; TTFT includes the KV transfer"
            << (rate > 0 ? " and the waits for a slot" : "") << "; tokens/s per GPU\n over "
            << (rate > 0 ? "the GPUs each uses" : "all the GPUs given")
            << "; `cutlab evaluate` of a \"disaggregation\" section gives each in full\n";
}

int cmd_serving_search(const Args& a, const std::string& text) {
  ServingSearchOptions options;
  options.top = a.top;
  options.max_ttft_s = a.max_ttft_ms / 1e3;
  options.max_tpot_s = a.max_tpot_ms / 1e3;
  const api::Answer<ServingSearchResult> answer = api::serving_search(text, options);
  if (!answer.ok()) return report(answer, api::to_json_text(answer), a.as_json);
  const Config& c = *answer.config;
  const ServingSearchResult& s = answer.result.value;
  api::Answer<DisaggregatedSearchResult> split;
  if (a.disaggregated) {
    split = api::disaggregated_search(text, options);
    if (!split.ok()) return report(split, api::to_json_text(split), a.as_json);
  }
  if (!a.svg_path.empty()) {
    std::ofstream out(a.svg_path);
    out << figure_svg(pareto_scene(s, options, pareto_title(c), 900, a.disaggregated ? &split.result.value : nullptr));
    if (!out) {
      std::cerr << "cutlab: cannot write " << a.svg_path << "\n";
      return kUsage;
    }
  }
  if (a.as_json) {
    if (!a.disaggregated) std::cout << api::to_json_text(answer) << "\n";
    else {
      json out = json::parse(api::to_json_text(answer));
      out["result"]["disaggregated"] = json::parse(api::to_json_text(split))["result"];
      std::cout << out.dump() << "\n";
    }
    return kOk;
  }
  const Workload& w = c.workload;
  std::cout << "cutlab search · serving " << c.model.name << " on " << with_commas(c.cluster.gpus) << " × " << c.cluster.gpu << " · "
            << lengths_with_means(w) << " · weights " << w.weight_dtype << " · KV cache " << w.kv_dtype << " · "
            << (w.batching == Batching::InFlight ? "in-flight batching" : "static batches") << "\n";
  std::cout << "limits: TTFT " << (options.max_ttft_s > 0 ? "≤ " + human_time(options.max_ttft_s) : std::string("none")) << " · TPOT "
            << (options.max_tpot_s > 0 ? "≤ " + human_time(options.max_tpot_s) : std::string("none")) << "\n";
  std::cout << with_commas(double(s.candidates)) << " plan × batch points enumerated, " << with_commas(double(s.valid)) << " valid, "
            << with_commas(double(s.fitting)) << " fit in memory, " << with_commas(double(s.within_limits)) << " within the limits"
            << (s.truncated ? " (stopped at the search's bound)" : "") << "\n\n";
  // At a request rate a plan may use fewer GPUs than searched (the rest idle): a GPUs column.
  const bool at_rate = s.request_rate_per_s > 0;
  auto table = [at_rate](const std::vector<ServingPoint>& points) {
    Table t{{"#", "TP", "PP", "EP", "DP", "batch", "TTFT", "TPOT", "tok/s/user", "tok/s/GPU", "total tok/s", "req/s", "in flight",
             "peak GiB", "limits"},
            {}};
    if (at_rate) t.header.insert(t.header.begin() + 5, "GPUs");
    int i = 0;
    for (const ServingPoint& p : points) {
      t.rows.push_back({std::to_string(++i), std::to_string(p.plan.tp), std::to_string(p.plan.pp), std::to_string(p.plan.ep),
                        std::to_string(p.plan.dp), std::to_string(p.batch), human_time(p.ttft_s), human_time(p.tpot_s),
                        fixed(p.output_tokens_per_s_per_user, 1), fixed(p.output_tokens_per_s_per_gpu, 1),
                        with_commas(p.output_tokens_per_s_total), fixed(p.requests_per_s, 2), fixed(p.concurrency, 1),
                        gib(p.peak_memory_bytes) + " / " + gib(p.capacity_bytes),
                        p.within_limits ? "met"
                        : p.saturated   ? "saturated"
                                        : "missed"});
      if (at_rate) t.rows.back().insert(t.rows.back().begin() + 5, std::to_string(p.gpus));
    }
    return t.render();
  };
  if (s.best.empty()) {
    std::cout << "No plan fits in memory on " << c.cluster.gpus << " GPUs: try more GPUs, fp8 weights or a shorter context.\n";
    if (a.disaggregated) print_disaggregated(split.result.value, c);
    return kOk;
  }
  if (s.within_limits == 0 && !s.best.empty() && s.best.front().saturated)
    std::cout << "No plan keeps up with " << figure::sig(c.workload.request_rate_per_s)
              << " requests/s (each one's queue grows without bound); the plans that serve the most:\n";
  else if (s.within_limits == 0) std::cout << "No plan meets the limits; the plans closest to them:\n";
  else if (at_rate)
    std::cout << "Fewest GPUs that serve " << figure::sig(s.request_rate_per_s) << " requests/s"
              << (options.max_ttft_s > 0 || options.max_tpot_s > 0 ? " within the limits" : "") << " (of " << with_commas(s.gpus)
              << "; the rest idle), then the shortest end-to-end latency\n";
  else
    std::cout << "Best plans by output tokens/s per GPU"
              << (options.max_ttft_s > 0 || options.max_tpot_s > 0 ? " within the limits" : "") << "\n";
  std::cout << table(s.best) << "\n";
  std::cout << "Pareto front: output tokens/s per GPU against per user"
            << (s.front_within_limits ? "" : " (of the plans that fit; none meets the limits)") << ", most per user first\n"
            << table(s.front);
  std::cout << " batch: most sequences per engine step (per micro-batch with PP); in flight: sequences per replica; with EP the\n"
               " attention replicas are EP × DP (TP 1 × EP n: attention data parallel, expert parallel)\n";
  if (at_rate)
    std::cout << " GPUs: what the plan uses (TP × PP × EP × DP), the fewest replicas that meet the limits and all of them;\n"
                 " tokens/s per GPU over those GPUs (`cutlab evaluate` takes that count as --gpus)\n";
  if (a.disaggregated) print_disaggregated(split.result.value, c);
  return kOk;
}

int cmd_search(const Args& a) {
  std::string text;
  int rc = kOk;
  if (!load_text(a, text, rc)) return rc;
  {
    const api::Answer<Config> cfg = api::read(text);
    if (cfg.config && cfg.config->workload.mode == Mode::Infer) return cmd_serving_search(a, text);
  }
  if (a.disaggregated) {
    std::cerr << "cutlab: --disaggregated searches serving deployments: add --mode infer (or workload.mode \"infer\")\n";
    return kUsage;
  }
  SearchOptions options;
  options.top = a.top;
  options.max_memory_fraction = a.max_fraction;
  options.threads = a.threads > 0 ? a.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const api::Answer<SearchResult> answer = api::search(text, options);
  if (!answer.ok()) return report(answer, api::to_json_text(answer), a.as_json);
  if (a.as_json) {
    std::cout << api::to_json_text(answer) << "\n";
    return kOk;
  }
  const Config c = *api::read(text).config;  // the search ran, so the config reads
  const SearchResult& s = answer.result.value;
  std::cout << "cutlab search · " << c.model.name << " on " << with_commas(c.cluster.gpus) << " × " << c.cluster.gpu << " · seq "
            << c.workload.seq_len << " · global batch " << c.workload.global_batch << "\n";
  const double pruned = double(s.pruned_invalid + s.pruned_equivalent + s.pruned_memory + s.pruned_bound);
  std::cout << with_commas(double(s.candidates)) << " plans in the space, " << with_commas(pruned) << " pruned ("
            << pct(s.candidates > 0 ? pruned / double(s.candidates) : 0.0) << ": " << with_commas(double(s.pruned_invalid))
            << " invalid, " << with_commas(double(s.pruned_equivalent)) << " equivalent or dominated, "
            << with_commas(double(s.pruned_memory)) << " model states too large, " << with_commas(double(s.pruned_bound))
            << " unable to beat the step bound" << (s.step_bound_s > 0 ? " of " + human_time(s.step_bound_s) : std::string()) << "), "
            << with_commas(double(s.evaluated)) << " simulated, " << with_commas(double(s.fitting)) << " of them fit in memory\n\n";
  Table t{{"#", "TP", "PP", "CP", "EP", "DP", "schedule", "mb", "recompute", "step", "tokens/s", "MFU", "peak GiB", "fits"}, {}};
  int i = 0;
  for (const RankedPlan& p : s.best) {
    const Plan& q = p.plan;
    t.rows.push_back({std::to_string(++i), std::to_string(q.tp), std::to_string(q.pp), std::to_string(q.cp), std::to_string(q.ep),
                      std::to_string(q.dp), name_of(q.schedule) + (q.vpp > 1 ? " v" + std::to_string(q.vpp) : ""),
                      std::to_string(q.micro_batch), name_of(q.recompute), human_time(p.step_s), with_commas(p.tokens_per_s),
                      pct(p.mfu), gib(p.peak_memory_bytes) + " / " + gib(p.capacity_bytes), p.fits ? "yes" : "no"});
  }
  std::cout << t.render();
  std::cout << " each plan's ZeRO stage, SP, overlaps and recompute modules in --json; rank order " << c.plan.rank_order << "\n";
  return kOk;
}

int cmd_balance(const Args& a) {
  std::string text;
  int rc = kOk;
  if (!load_text(a, text, rc)) return rc;
  StageBalanceOptions options;
  options.max_memory_fraction = a.max_fraction;
  const api::Answer<StageBalance> answer = api::balance(text, options);
  if (!answer.ok()) return report(answer, api::to_json_text(answer), a.as_json);
  if (a.as_json) {
    std::cout << api::to_json_text(answer) << "\n";
    return kOk;
  }
  const StageBalance& b = answer.result.value;
  const StageSplit &now = b.current, &to = b.suggested;
  std::cout << "Stage balance (" << b.evaluations << " splits evaluated)\n";
  Table t{{"stage", "layers", "busy", "memory GiB", "→ layers", "busy", "memory GiB"}, {}};
  for (size_t s = 0; s < now.layers_per_stage.size(); ++s)
    t.rows.push_back({std::to_string(s + 1), std::to_string(now.layers_per_stage[s]), human_time(now.busy_s[s]),
                      gib(now.memory_bytes[s]), std::to_string(to.layers_per_stage[s]), human_time(to.busy_s[s]),
                      gib(to.memory_bytes[s])});
  std::cout << t.render();
  auto line = [](const StageSplit& s) {
    return human_time(s.step_s) + " step, " + with_commas(s.tokens_per_s) + " tokens/s, " + (s.fits ? "fits" : "does not fit");
  };
  std::cout << " now:       " << line(now) << "\n";
  if (!b.improved) {
    std::cout << " no single-layer move shortens the step" << (now.fits ? "" : " or lowers the peak memory")
              << ": the split is balanced\n";
    return kOk;
  }
  std::cout << " suggested: " << line(to) << " (" << (to.step_s <= now.step_s ? "−" : "+") << pct(std::abs(to.step_s / now.step_s - 1))
            << " step)\n \"layers_per_stage\": [";
  for (size_t s = 0; s < to.layers_per_stage.size(); ++s) std::cout << (s ? ", " : "") << to.layers_per_stage[s];
  std::cout << "]\n";
  return kOk;
}

std::string range(int a, int b) { return std::to_string(a) + "–" + std::to_string(b - 1); }

void print_gpu(const GpuPlacement& g, const ModelSpec& m) {
  std::cout << "GPU " << g.rank << " · node " << g.node << " (local " << g.local << ") · TP " << g.tp << " · CP " << g.cp << " · EP "
            << g.ep << " · DP " << g.dp << " · PP " << g.pp << " · replica " << g.replica << "\n";
  if (g.last_layer >= g.first_layer)
    std::cout << "  layers " << g.first_layer + 1 << "–" << g.last_layer + 1 << (g.embedding ? " + embedding" : "")
              << (g.output ? " + output layer" : "");
  else  // a stage of only the embedding and/or the output layer (counted as pipeline layers)
    std::cout << "  no transformer layer" << (g.embedding ? " · embedding" : "") << (g.output ? " · output layer" : "");
  std::cout << " · heads " << range(g.heads_begin, g.heads_end) << " of " << m.heads << " · KV heads "
            << range(g.kv_heads_begin, g.kv_heads_end) << " of " << m.kv_heads;
  if (dense_layer_count(m) > 0) std::cout << " · FFN columns " << range(g.ffn_begin, g.ffn_end) << " of " << m.ffn_hidden;
  std::cout << "\n";
  if (is_moe(m))
    std::cout << "  experts " << range(g.experts_begin, g.experts_end) << " of " << m.experts << " (ETP rank " << g.etp
              << ", expert FFN columns " << range(g.expert_ffn_begin, g.expert_ffn_end) << ") · EDP " << g.edp << "\n";
  std::cout << "  tokens";
  for (auto [b, e] : g.seq_chunks) std::cout << " " << range(b, e);
  std::cout << " of every sequence\n";
}

int cmd_gpu(const Args& a) {
  std::string text;
  int rc = kOk;
  if (!load_text(a, text, rc)) return rc;
  std::vector<int> ranks = a.ranks;
  if (ranks.empty()) ranks.push_back(0);
  std::vector<GpuPlacement> held;
  for (int r : ranks) {
    const api::Answer<std::vector<GpuPlacement>> answer = api::gpus(text, r, 1);
    if (!answer.ok()) return report(answer, api::to_json_text(answer), a.as_json);
    held.push_back(answer.result.value.front());
  }
  if (a.as_json) {
    api::Answer<std::vector<GpuPlacement>> all;
    all.result.value = held;
    std::cout << api::to_json_text(all) << "\n";
    return kOk;
  }
  const ModelSpec m = api::read(text).config->model;
  for (const GpuPlacement& g : held) print_gpu(g, m);
  return kOk;
}

// One table of ops with their totals; the totals are what the step breakdown charges per layer.
void print_ops(const char* title, const std::vector<LayerOp>& ops) {
  if (ops.empty()) return;
  Table t{{"op", "count", "GEMM M×N×K", "GFLOP", "MB", "bound", "eff", "F", "B", "W"}, {}};
  double flops = 0, bytes = 0, f = 0, b = 0, w = 0;
  for (const LayerOp& op : ops) {
    const std::string shape = op.op_class == OpClass::Gemm ? fixed(op.m, 0) + "×" + fixed(op.n, 0) + "×" + fixed(op.k, 0) : "";
    t.rows.push_back({std::string(op.name), op.count == 1 ? "" : fixed(op.count, 0), shape, fixed(op.flops / 1e9, 1),
                      fixed(op.bytes / 1e6, 1), op_bound(op), op.efficiency > 0 ? fixed(100 * op.efficiency, 0) + "%" : "",
                      human_time(op.f_s), human_time(op.b_s), human_time(op.w_s)});
    flops += op.flops, bytes += op.bytes, f += op.f_s, b += op.b_s, w += op.w_s;
  }
  t.rows.push_back(
      {"total", "", "", fixed(flops / 1e9, 1), fixed(bytes / 1e6, 1), "", "", human_time(f), human_time(b), human_time(w)});
  std::cout << title << "\n" << t.render() << "\n";
}

int cmd_ops(const Args& a) {
  std::string text;
  int rc = kOk;
  if (!load_text(a, text, rc)) return rc;
  const api::Answer<api::Evaluated> answer = api::evaluate(text);
  if (!answer.ok()) return report(answer, api::to_json_text(answer), a.as_json);
  const auto* e = std::get_if<TrainingEstimate>(&answer.result.value.estimate);
  if (!e) {
    std::cerr << "cutlab: ops lists a training layer; set --mode train\n";
    return kUsage;
  }
  if (a.as_json) {
    std::cout << api::to_json_text(answer) << "\n";  // the estimate; its \"ops\" section holds these tables
    return kOk;
  }
  const Config& c = answer.result.value.resolved.config;
  std::cout << "cutlab ops · " << c.model.name << " on " << c.cluster.gpu << " · TP " << c.plan.tp << " · CP " << c.plan.cp
            << " · micro-batch " << c.plan.micro_batch << " × seq " << c.workload.seq_len << " · " << c.workload.dtype
            << " · per micro-batch on one GPU (B: input gradients, W: weight gradients; recompute not included)\n\n";
  print_ops("Dense layer", e->dense_layer_ops);
  print_ops("MoE layer", e->moe_layer_ops);
  print_ops("Output layer and loss (last stage)", e->output_layer_ops);
  print_ops("Input embedding (first stage)", e->input_layer_ops);
  return kOk;
}

void print_pool(const char* name, const PoolResult& p) {
  std::cout << " " << name << ": " << p.gpus << " GPUs = " << p.instances << " × (TP " << p.plan.tp << " × PP " << p.plan.pp
            << " × EP " << p.plan.ep << ") · batch " << p.batch << " · " << fixed(p.concurrency, 1) << " in flight per replica · "
            << (p.fits ? "fits (" + gib(p.peak_memory_bytes) + " of " + gib(p.capacity_bytes) + " GiB)"
                       : "DOES NOT FIT: largest batch " + std::to_string(p.max_batch_that_fits))
            << "\n";
}

int cmd_disaggregated(const Args& a, const std::string& text) {
  const api::Answer<api::DisaggregationRun> answer = api::disaggregate(text);
  if (!answer.ok()) return report(answer, api::to_json_text(answer), a.as_json);
  if (a.as_json) {
    std::cout << api::to_json_text(answer) << "\n";
    return kOk;
  }
  const Disaggregated& d = answer.result.value.result;
  const Config& c = answer.result.value.prefill;
  const Cluster& dc = answer.result.value.decode.cluster;
  const Workload& w = c.workload;
  if (d.same_cluster)
    std::cout << "cutlab · disaggregated serving of " << c.model.name << " on " << c.cluster.name << " (" << c.cluster.gpu
              << "): " << d.prefill.gpus << " prefill + " << d.decode.gpus << " decode GPUs\n";
  else
    std::cout << "cutlab · disaggregated serving of " << c.model.name << ": " << d.prefill.gpus << " prefill GPUs on "
              << c.cluster.name << " (" << c.cluster.gpu << ") + " << d.decode.gpus << " decode GPUs on " << dc.name << " (" << dc.gpu
              << ")\n";
  std::cout << lengths_with_means(w) << " · weights " << w.weight_dtype << " · KV cache " << w.kv_dtype << " · "
            << (w.request_rate_per_s > 0 ? fixed(w.request_rate_per_s, 2) + " requests/s (Poisson arrivals)"
                                         : "offline (all requests queued)")
            << "\n\n";
  print_pool("prefill", d.prefill);
  print_pool("decode ", d.decode);
  std::cout << "\n";
  Table t{{"part", "requests/s", "per GPU", "latency"}, {}};
  t.rows.push_back({"prefill pool", fixed(d.prefill.requests_per_s, 2), fixed(d.prefill.requests_per_s_per_gpu, 3),
                    "TTFT " + human_time(d.prefill.ttft_s)});
  t.rows.push_back({"KV transfer (" + link_label(c.cluster, d.kv_link) + ")", fixed(d.kv_requests_per_s, 2),
                    fixed(d.kv_requests_per_s / std::max(1, std::min(d.prefill.gpus, d.decode.gpus)), 3),
                    human_time(d.kv_transfer_s)});
  t.rows.push_back({"decode pool", fixed(d.decode.requests_per_s, 2), fixed(d.decode.requests_per_s_per_gpu, 3),
                    "TPOT " + human_time(d.decode.tpot_s)});
  std::cout << t.render();
  std::cout << " KV cache of a request: " << human_bytes(d.kv_bytes_per_request) << " (" << human_bytes(d.kv_bytes_per_gpu)
            << " per GPU at the busier end) · links " << pct(d.kv_link_utilization) << " busy\n";
  if (d.request_rate_per_s > 0 && !d.saturated)
    std::cout << " deployment: " << fixed(d.requests_per_s, 2) << " requests/s as they arrive, of a capacity of "
              << fixed(d.capacity_requests_per_s, 2) << " (bound by " << d.bound << ") · TTFT " << human_time(d.ttft_s)
              << " (prefill with " << human_time(d.prefill_queue_s) << " waiting for a prefill step + transfer + "
              << human_time(d.decode_queue_s) << " waiting for a decode slot and step) · TPOT " << human_time(d.tpot_s)
              << " · end to end " << human_time(d.e2e_latency_s) << "\n";
  else
    std::cout << " deployment: " << fixed(d.requests_per_s, 2) << " requests/s (bound by " << d.bound << ") · TTFT "
              << human_time(d.ttft_s) << " (prefill + transfer) · TPOT " << human_time(d.tpot_s) << " · end to end "
              << human_time(d.e2e_latency_s) << "\n";
  if (d.saturated)
    std::cout << " saturated: " << fixed(d.request_rate_per_s, 2) << " requests/s arrive, more than the "
              << fixed(d.capacity_requests_per_s, 2)
              << " it serves; the queue grows without bound (the latencies are those at its capacity, before any wait)\n";
  std::cout << " at that rate, in flight per replica: " << fixed(d.prefill_in_flight, 1) << " prefilling, "
            << fixed(d.decode_in_flight, 1) << " decoding (Little's law; a pool that does not bound the rate runs below its batch)\n";
  std::cout << " " << fixed(d.output_tokens_per_s_per_user, 1) << " output tokens/s per user · "
            << with_commas(d.output_tokens_per_s_total) << " total · " << fixed(d.output_tokens_per_s_per_gpu, 1) << " per GPU\n";
  if (!d.same_cluster) {
    std::cout << " pools on different systems: no balance of one GPU count between them\n";
    print_length_classes(d.length_classes, d.tpot_s, &d.length_class_kv_transfer_s);
    return kOk;
  }
  std::cout << " balanced: " << pct(d.balanced_prefill_fraction) << " of the GPUs prefilling → "
            << fixed(d.balanced_output_tokens_per_s_per_gpu, 1) << " output tokens/s per GPU; with "
            << with_commas(double(d.prefill.gpus + d.decode.gpus)) << " GPUs: " << d.suggested_prefill_instances << "P"
            << d.suggested_decode_instances << "D (" << d.suggested_prefill_instances * d.prefill.gpus_per_instance << " + "
            << d.suggested_decode_instances * d.decode.gpus_per_instance << " GPUs) → "
            << fixed(d.suggested_output_tokens_per_s_per_gpu, 1) << " per GPU\n";
  print_length_classes(d.length_classes, d.tpot_s, &d.length_class_kv_transfer_s);
  return kOk;
}

int cmd_evaluate(const Args& a) {
  std::string text;
  int rc = kOk;
  if (!load_text(a, text, rc)) return rc;
  if (api::has_disaggregation(text)) return cmd_disaggregated(a, text);
  const api::Answer<api::Evaluated> answer = api::evaluate(text);
  if (!answer.ok()) return report(answer, api::to_json_text(answer), a.as_json);
  const Config& cfg = answer.result.value.resolved.config;
  const Estimate& e = answer.result.value.estimate;
  const auto* train = std::get_if<TrainingEstimate>(&e);
  const auto* serve = std::get_if<ServingEstimate>(&e);
  if (a.as_json) std::cout << api::to_json_text(answer) << "\n";
  else if (serve) print_inference(*serve, cfg);
  else print_tables(*train, cfg);
  if (a.require_fit) {
    const MemoryResult& mem = serve ? serve->serving.memory : train->memory;
    const StageMemory& peak = mem.per_stage[mem.peak_stage];
    if (peak.total_bytes > a.max_fraction * peak.capacity_bytes) {
      std::cerr << "cutlab: stage " << mem.peak_stage + 1 << " needs " << gib(peak.total_bytes) << " GiB, over "
                << fixed(a.max_fraction * 100, 0) << "% of " << gib(peak.capacity_bytes) << " GiB usable\n";
      return kNoFit;
    }
  }
  return kOk;
}

// cutlab draw: the figure of a view (native/draw.h), laid out by the core as for the explorer.
// --view, --width and --layer are its own; the config and flags are those of every command.
int cmd_draw(int argc, char** argv) {
  std::string view;
  double width = 1000;
  int layer = -1;
  std::vector<char*> rest = {argv[0], argv[1]};
  for (int i = 2; i < argc; ++i) {
    const std::string s = argv[i];
    if ((s == "--view" || s == "--width" || s == "--layer") && i + 1 < argc) {
      const std::string v = argv[++i];
      char* end = nullptr;
      if (s == "--view") view = v;
      else if (s == "--width") width = std::strtod(v.c_str(), &end);
      else layer = static_cast<int>(std::strtol(v.c_str(), &end, 10));
      if (end && *end != '\0') {
        std::cerr << "cutlab: " << s << " needs a number\n";
        return kUsage;
      }
    } else {
      rest.push_back(argv[i]);
    }
  }
  Args a;
  std::string problem;
  if (!parse_args(static_cast<int>(rest.size()), rest.data(), a, problem) || view.empty() || (a.svg_path.empty() && !a.as_json)) {
    std::cerr << "cutlab: " << (problem.empty() ? "draw needs --view cuts|placement|pipeline and --svg FILE (or --json)" : problem)
              << "\n(cutlab draw --help)\n";
    return kUsage;
  }
  if (!(width >= 200 && width <= 20000)) {
    std::cerr << "cutlab: --width must be between 200 and 20000 pixels\n";
    return kUsage;
  }
  std::string text;
  int rc = kOk;
  if (!load_text(a, text, rc)) return rc;
  const api::Answer<api::Evaluated> answer = api::evaluate(text);
  if (!answer.ok()) return report(answer, api::to_json_text(answer), a.as_json);
  bool known = false;
  const Figure f = view_figure(answer.result.value.resolved, answer.result.value.estimate, view, width, layer, known);
  if (!known) {
    std::cerr << "cutlab: unknown view " << view << " (cuts, placement, pipeline)\n";
    return kUsage;
  }
  if (!a.svg_path.empty()) {
    std::ofstream out(a.svg_path);
    out << figure_svg(f);
    if (!out) {
      std::cerr << "cutlab: cannot write " << a.svg_path << "\n";
      return kUsage;
    }
  }
  if (a.as_json) std::cout << figure_json(f) << "\n";
  return kOk;
}

// cutlab export --to FORMAT and cutlab import --from FORMAT FILE: --to/--from are their own, the
// rest are the flags of every command (for import: applied over the imported config).
int cmd_launch(int argc, char** argv) {
  const bool is_export = std::string(argv[1]) == "export";
  const std::string option = is_export ? "--to" : "--from";
  std::string format_name;
  std::vector<char*> rest = {argv[0], argv[1]};
  for (int i = 2; i < argc; ++i) {
    if (argv[i] == option && i + 1 < argc) format_name = argv[++i];
    else rest.push_back(argv[i]);
  }
  LaunchFormat format{};
  if (!launch_format_from_name(format_name, format) ||
      (!is_export && format != LaunchFormat::Megatron && format != LaunchFormat::Torchtitan)) {
    std::cerr << "cutlab: " << argv[1] << " needs " << option << " "
              << (is_export ? launch_format_list() : std::string("megatron, torchtitan"))
              << (format_name.empty() ? "" : " (got '" + format_name + "')") << "\n";
    return kUsage;
  }
  Args a;
  std::string problem;
  if (!parse_args(static_cast<int>(rest.size()), rest.data(), a, problem)) {
    std::cerr << "cutlab: " << problem << "\n";
    return kUsage;
  }
  if (is_export) {
    std::string text;
    int rc = kOk;
    if (!load_text(a, text, rc)) return rc;
    return export_launch_text(text, format, a.as_json);
  }
  if (a.file.empty()) {
    std::cerr << "cutlab: import needs the file to read: cutlab import --from " << format_name << " FILE\n";
    return kUsage;
  }
  struct Ctx {
    const Args& a;
  } ctx{a};
  auto apply = +[](json& cfg, void* p) {
    std::string why;
    if (apply_overrides(cfg, static_cast<Ctx*>(p)->a, why)) return true;
    std::cerr << "cutlab: " << why << "\n";
    return false;
  };
  return import_launch_file(a.file, format, a.as_json, apply, &ctx);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc >= 2 ? argv[1] : "";
  if (command == "validate") return run_validate({argv + 2, argv + argc});
  if (command == "calibrate") return run_calibrate({argv + 2, argv + argc});
  // --help: the overview, or one command's (cutlab help COMMAND, cutlab COMMAND --help).
  std::string text;
  if (command.empty() || command == "--help" || command == "-h" || command == "help") {
    if (command == "help" && argc >= 3 && command_help(argv[2], text)) return std::cout << text, kOk;
    (command.empty() ? std::cerr : std::cout) << usage_text();
    return command.empty() ? kUsage : kOk;
  }
  for (int i = 2; i < argc; ++i)
    if ((std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") && command_help(command, text))
      return std::cout << text, kOk;
  if (command == "draw") return cmd_draw(argc, argv);
  if (command == "export" || command == "import") return cmd_launch(argc, argv);
  Args a;
  std::string problem;
  if (!parse_args(argc, argv, a, problem)) {
    std::cerr << "cutlab: " << problem << "\n";
    return kUsage;
  }
  if (a.command == "evaluate") return cmd_evaluate(a);
  if (a.command == "presets") return cmd_presets(a);
  if (a.command == "schedule") return cmd_schedule(a);
  if (a.command == "search") return cmd_search(a);
  if (a.command == "balance") return cmd_balance(a);
  if (a.command == "gpu") return cmd_gpu(a);
  if (a.command == "ops") return cmd_ops(a);
  const std::string near = closest(a.command, command_names());
  std::cerr << "cutlab: unknown command " << a.command << (near.empty() ? "" : " (did you mean " + near + "?)")
            << "; cutlab --help lists the commands\n";
  return kUsage;
}
