#include "core/api.h"

#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "core/options.h"
#include "core/scene_cuts.h"
#include "core/scene_placement.h"

namespace cutlab::api {

using nlohmann::json;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Errors, and the config as read when it could be read (so a UI can show every field's value
// beside the errors).
std::string failure(const Errors& errors, const Config* config = nullptr) {
  json out = {{"ok", false}, {"errors", to_json(errors)}};
  if (config) out["config"] = to_json(*config);
  return dump(out);
}

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
  if (!cfg.ok()) return failure(cfg.errors, sections_resolved(cfg.errors) ? &cfg.value : nullptr);
  const Result<Estimate> e = evaluate(cfg.value);
  if (!e.ok()) return failure(e.errors, &cfg.value);
  return success(to_json(e.value, cfg.value));
}

std::string schedule_json(const std::string& text) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors, sections_resolved(cfg.errors) ? &cfg.value : nullptr);
  const Result<Estimate> e = evaluate(cfg.value);
  if (!e.ok()) return failure(e.errors);
  return success(to_json(e.value.schedule, true));
}

std::string timeline_json(const std::string& text, double width, double height) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors, sections_resolved(cfg.errors) ? &cfg.value : nullptr);
  if (!(width >= 200 && width <= 20000))
    return failure({{ErrorCode::OutOfRange, "/width", "width must be between 200 and 20000 pixels"}});
  if (!(height == 0 || (height >= 50 && height <= 20000)))
    return failure({{ErrorCode::OutOfRange, "/height", "height must be 0 (automatic) or between 50 and 20000 pixels"}});
  const Result<Estimate> e = evaluate(cfg.value);
  if (!e.ok()) return failure(e.errors, &cfg.value);
  TimelineLayout layout;
  layout.width = width;
  layout.height = height;
  if (e.value.mode == "infer") {
    json out = to_json(decode_walk_scene(e.value.inference.decode_stage_s, 3, layout));
    out["tokens"] = 3;
    return success(std::move(out));
  }
  std::vector<StageTail> tails;
  for (const StageTime& st : e.value.stages) tails.push_back({st.dp_exposed_s, st.optimizer_s});
  json out = to_json(timeline_scene(e.value.schedule, layout, tails));
  out["schedule"] = to_json(e.value.schedule, false);
  out["step_s"] = e.value.step_s;
  return success(std::move(out));
}

std::string gpus_json(const std::string& text, int first, int count) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors, sections_resolved(cfg.errors) ? &cfg.value : nullptr);
  const Config& c = cfg.value;
  Errors errors = validate(c.model, c.cluster, c.plan, c.workload);
  if (!errors.empty()) return failure(errors, &c);
  const Placement pl = place(c.model, c.cluster, c.plan, c.workload);
  if (first < 0 || first >= pl.gpus)
    return failure({{ErrorCode::OutOfRange, "/first", "first must be in [0, " + std::to_string(pl.gpus) + ")"}});
  if (count < 1 || count > 4096)
    return failure({{ErrorCode::OutOfRange, "/count", "count must be between 1 and 4096"}});
  json out = json::array();
  for (int r = first; r < std::min(pl.gpus, first + count); ++r) out.push_back(to_json(gpu_placement(c.model, c.plan, c.workload, pl, r)));
  return success(std::move(out));
}

std::string gpu_json(const std::string& text, int rank) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors, sections_resolved(cfg.errors) ? &cfg.value : nullptr);
  const Config& c = cfg.value;
  Errors errors = validate(c.model, c.cluster, c.plan, c.workload);
  if (!errors.empty()) return failure(errors);
  const Placement pl = place(c.model, c.cluster, c.plan, c.workload);
  if (rank < 0 || rank >= pl.gpus)
    return failure({{ErrorCode::OutOfRange, "/rank", "rank must be in [0, " + std::to_string(pl.gpus) + ")"}});
  return success(to_json(gpu_placement(c.model, c.plan, c.workload, pl, rank)));
}

std::string search_json(const std::string& text, int top) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors, sections_resolved(cfg.errors) ? &cfg.value : nullptr);
  SearchOptions options;
  options.top = top;
  const Result<SearchResult> r = search_plans(cfg.value, options);
  if (!r.ok()) return failure(r.errors);
  return success(to_json(r.value));
}

std::string options_json(const std::string& text) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) return failure(cfg.errors, sections_resolved(cfg.errors) ? &cfg.value : nullptr);
  return success(json(axis_options(cfg.value)));
}

std::string presets_json() { return success(cutlab::presets_json()); }

namespace {

// The config read, validated and evaluated for a figure `width` pixels wide; on failure the JSON answer.
bool figure_input(const std::string& text, double width, Config& config, Estimate& estimate, std::string& answer) {
  const Result<Config> cfg = read_config(text);
  if (!cfg.ok()) {
    answer = failure(cfg.errors, sections_resolved(cfg.errors) ? &cfg.value : nullptr);
    return false;
  }
  if (!(width >= 200 && width <= 20000)) {
    answer = failure({{ErrorCode::OutOfRange, "/width", "width must be between 200 and 20000 pixels"}});
    return false;
  }
  Result<Estimate> e = evaluate(cfg.value);
  if (!e.ok()) {
    answer = failure(e.errors, &cfg.value);
    return false;
  }
  config = cfg.value;
  estimate = std::move(e.value);
  return true;
}

}  // namespace

std::string placement_scene_json(const std::string& text, double width) {
  Config c;
  Estimate e;
  std::string answer;
  if (!figure_input(text, width, c, e, answer)) return answer;
  return "{\"ok\":true,\"result\":" + figure_json(placement_scene(c, e, width)) + "}";
}

std::string cuts_scene_json(const std::string& text, double width, int layer) {
  Config c;
  Estimate e;
  std::string answer;
  if (!figure_input(text, width, c, e, answer)) return answer;
  return "{\"ok\":true,\"result\":" + figure_json(cuts_scene(c, e, width, layer)) + "}";
}

}  // namespace cutlab::api
