#include "native/launch_cli.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/api.h"
#include "core/json_io.h"
#include "native/help.h"

namespace cutlab::cli {

using nlohmann::json;

namespace {

constexpr int kOk = 0, kUsage = 1, kInvalid = 2;

int print_errors(const Errors& errors, bool as_json, const json& config = json()) {
  if (as_json) {
    json out = {{"ok", false}, {"errors", to_json(errors)}};
    if (!config.is_null()) out["config"] = config;
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    std::cerr << "invalid input (" << errors.size() << (errors.size() == 1 ? " problem" : " problems") << "):\n";
    for (const Error& e : errors) std::cerr << "  " << error_line(e) << "\n";
  }
  return kInvalid;
}

}  // namespace

int export_launch_text(const std::string& config_text, LaunchFormat format, bool as_json) {
  const api::Answer<Resolved> resolved = api::resolve(config_text);
  if (as_json) {  // the page's call (core/api.h launch_json)
    std::cout << api::launch_json(config_text, name_of(format)) << "\n";
    if (!resolved.ok()) return kInvalid;
    return export_launch(resolved.result.value.config, format).ok() ? kOk : kUsage;
  }
  if (!resolved.ok()) return print_errors(resolved.result.errors, false);
  const Result<LaunchConfig> launch = export_launch(resolved.result.value.config, format);
  if (!launch.ok()) {
    print_errors(launch.errors, false);
    return kUsage;
  }
  std::cout << launch.value.text;
  for (const std::string& n : launch.value.notes) std::cerr << "note: " << n << "\n";
  return kOk;
}

int import_launch_file(const std::string& path, LaunchFormat format, bool as_json, bool (*apply)(json&, void*), void* ctx) {
  std::string text;
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(path);
    if (!in) {
      std::cerr << "cutlab: cannot read " << path << "\n";
      return kUsage;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  Result<ImportedConfig> imported = import_launch(text, format);
  if (!imported.ok()) {
    for (Error& e : imported.errors) e.path = path + " " + e.path;
    return print_errors(imported.errors, as_json);
  }
  json& cfg = imported.value.config;
  if (!apply(cfg, ctx)) return kUsage;
  if (!cfg.contains("model")) {
    const Error e{ErrorCode::MissingKey, "/model",
                  format == LaunchFormat::Megatron
                      ? "the file describes no model: add --model NAME (e.g. --model llama3-70b), or the flags --num-layers, "
                        "--hidden-size, --num-attention-heads and --vocab-size to the file"
                      : "[model] name and flavor are not a cutlab preset: add --model NAME (e.g. --model llama3-70b)"};
    return print_errors({e}, as_json, cfg);
  }
  if (!cfg.contains("cluster")) {
    const Error e{
        ErrorCode::MissingKey, "/cluster",
        "the file names no cluster: add --cluster NAME (e.g. --cluster dgx-h100) and --gpus N (`cutlab presets` lists them)"};
    return print_errors({e}, as_json, cfg);
  }
  const api::Answer<Resolved> resolved = api::resolve(cfg.dump());
  if (!resolved.ok()) return print_errors(resolved.result.errors, as_json, cfg);
  if (as_json) {
    std::cout << json{{"ok", true}, {"result", {{"config", cfg}, {"notes", imported.value.notes}}}}.dump(
                     2, ' ', false, json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << cfg.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    for (const std::string& n : imported.value.notes) std::cerr << "note: " << n << "\n";
  }
  return kOk;
}

}  // namespace cutlab::cli
