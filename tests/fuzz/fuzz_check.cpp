#include "tests/fuzz/fuzz_check.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/api.h"

namespace cutlab::fuzz {

namespace {

using nlohmann::json;

bool has_null(const json& j) {
  if (j.is_null()) return true;
  if (j.is_structured())
    for (const json& v : j)
      if (has_null(v)) return true;
  return false;
}

// The rules every answer keeps; "" when it does.
std::string check_answer(const std::string& call, const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return call + ": the answer is not one JSON object";
  if (!j.contains("ok") || !j["ok"].is_boolean()) return call + ": the answer has no boolean 'ok'";
  if (!j["ok"].get<bool>()) {
    if (!j.contains("errors") || !j["errors"].is_array() || j["errors"].empty()) return call + ": a failure without errors";
    for (const json& e : j["errors"]) {
      if (!e.contains("path") || !e["path"].is_string() || !e.contains("message") || !e["message"].is_string())
        return call + ": an error without path or message";
      const std::string path = e["path"].get<std::string>();
      if (!path.empty() && path[0] != '/') return call + ": error path '" + path + "' is not a JSON pointer";
      if (e["message"].get<std::string>().empty()) return call + ": an empty error message";
    }
    return "";
  }
  if (!j.contains("result")) return call + ": ok without a result";
  if (has_null(j["result"])) return call + ": a null in the result (NaN or infinity)";
  const json& r = j["result"];
  if (call == "evaluate" && r.is_object()) {
    for (const char* key : {"step_s", "ttft_s", "tpot_s"}) {
      const json* v = nullptr;
      if (r.contains("time") && r["time"].contains(key)) v = &r["time"][key];
      if (r.contains("inference") && r["inference"].contains(key)) v = &r["inference"][key];
      // 0 is a result (a serving plan where no sequence fits runs no step); NaN, infinity or < 0 never.
      if (v && (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0))
        return call + ": " + key + " is not a finite non-negative number";
    }
  }
  return "";
}

}  // namespace

std::string check_input(const std::string& text) {
  const std::string evaluated = api::evaluate_json(text);
  std::string broke = check_answer("evaluate", evaluated);
  if (!broke.empty()) return broke;
  const bool ok = json::parse(evaluated, nullptr, false).value("ok", false);
  // The page's search merges the parts its worker sends back (search_merge_json): any text may reach it.
  for (const auto& [call, answer] : {std::pair<std::string, std::string>{"options", api::options_json(text)},
                                     std::pair<std::string, std::string>{"search_merge", api::search_merge_json(text, 3)}}) {
    broke = check_answer(call, answer);
    if (!broke.empty()) return broke;
  }
  if (!ok) return "";  // the rest ask the same config: they fail the same way
  const std::pair<std::string, std::string> calls[] = {
      {"gpus", api::gpus_json(text, 0, 4)},
      {"timeline", api::timeline_json(text, 800, 0)},
      {"placement", api::placement_scene_json(text, 800)},
      {"cuts", api::cuts_scene_json(text, 800, -1)},
      {"balance", api::balance_json(text)},
      {"search_part", api::search_part_json(text, 3, 0, 2, true, 0, -1)},  // the first two items of the space
  };
  for (const auto& [call, answer] : calls) {
    broke = check_answer(call, answer);
    if (!broke.empty()) return broke;
  }
  return "";
}

}  // namespace cutlab::fuzz
