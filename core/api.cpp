#include "core/api.h"

#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "core/options.h"

namespace cutlab::api {

using nlohmann::json;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string failure(const Errors& errors) { return dump({{"ok", false}, {"errors", to_json(errors)}}); }

std::string success(json result) { return dump({{"ok", true}, {"result", std::move(result)}}); }

// Parses and validates the config, then evaluates it; on failure `errors` holds every problem.
Result<Config> read_config(const std::string& text) {
  Result<Config> r;
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    r.errors.push_back({ErrorCode::ParseError, "", "the input is not valid JSON"});
    return r;
  }
  return config_from_json(j);
}

}  // namespace

std::string evaluate_json(const std::string& text) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors);
  const Result<Estimate> e = evaluate(cfg.value);
  if (!e.ok()) return failure(e.errors);
  return success(to_json(e.value, cfg.value));
}

std::string schedule_json(const std::string& text) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors);
  const Result<Estimate> e = evaluate(cfg.value);
  if (!e.ok()) return failure(e.errors);
  return success(to_json(e.value.schedule, true));
}

std::string timeline_json(const std::string& text, double width) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors);
  const Result<Estimate> e = evaluate(cfg.value);
  if (!e.ok()) return failure(e.errors);
  if (!(width >= 200 && width <= 20000))
    return failure({{ErrorCode::OutOfRange, "/width", "width must be between 200 and 20000 pixels"}});
  TimelineLayout layout;
  layout.width = width;
  json out = to_json(timeline_scene(e.value.schedule, layout));
  out["schedule"] = to_json(e.value.schedule, false);
  return success(std::move(out));
}

std::string gpu_json(const std::string& text, int rank) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors);
  const Config& c = cfg.value;
  Errors errors = validate(c.model, c.cluster, c.plan, c.workload);
  if (!errors.empty()) return failure(errors);
  const Placement pl = place(c.model, c.cluster, c.plan, c.workload);
  if (rank < 0 || rank >= pl.gpus)
    return failure({{ErrorCode::OutOfRange, "/rank", "rank must be in [0, " + std::to_string(pl.gpus) + ")"}});
  return success(to_json(gpu_placement(c.model, c.plan, c.workload, pl, rank)));
}

std::string options_json(const std::string& text) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors);
  return success(json(axis_options(cfg.value)));
}

std::string presets_json() { return success(cutlab::presets_json()); }

}  // namespace cutlab::api
