// json_io.h: the JSON edge of the core. Reads a config (model, cluster, plan, workload; each a
// preset name, a full object, or {"preset": name, ...overrides}) with strict keys, collecting every
// error with its JSON path; writes results. The only place where units are converted: JSON keys
// carry human units (hbm_GiB, nvlink_GBps, bf16_TFLOPs, *_us), structs hold SI base units.
#pragma once
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/estimate.h"
#include "core/scene.h"
#include "core/search.h"
#include "core/stage_balance.h"

namespace cutlab {

Result<Config> config_from_json(const nlohmann::json& j);

// Strict JSON: the whole text is one document (a NUL byte is an error, not its end), no object
// names a key twice (the error's path is the second one's), nesting at most k_max_json_depth
// deep. On any error returns a discarded value and appends the errors (ParseError).
inline constexpr int k_max_json_depth = 64;
nlohmann::json parse_strict(const std::string& text, Errors& errors);

// True when these reading errors left the model and the cluster resolved (no missing or unknown
// preset, no malformed section): the rest of the config is then meaningful beside the errors.
bool sections_resolved(const Errors& reading_errors);

// A named choice is written as its name (core/choices.h), never as its number: nlohmann finds this
// by argument-dependent lookup wherever a choice is put into a json value.
template <class E, class = decltype(ChoiceTable<E>::key)>
void to_json(nlohmann::json& j, E value) {
  j = name_of(value);
}

nlohmann::json to_json(const ModelSpec& m);
nlohmann::json to_json(const Cluster& c);
nlohmann::json to_json(const Plan& p);
nlohmann::json to_json(const Workload& w);
nlohmann::json to_json(const Config& c);
nlohmann::json to_json(const TrainingEstimate& e, const Config& c);
nlohmann::json to_json(const ServingEstimate& e, const Config& c);
nlohmann::json to_json(const Estimate& e, const Config& c);
nlohmann::json to_json(const ScheduleResult& s, bool with_ops);
// A mix of lengths' per-class latencies: {"ttft_s": [...], "e2e_latency_s": [...], "prefill_steps": [...]},
// class i of workload.length_mix at index i (arrays: the smallest code in the page's first module).
nlohmann::json to_json(const ClassList<ClassLatency>& classes);
nlohmann::json to_json(const GpuPlacement& g);
// The scene as JSON text, with `beside`'s members (an object) next to its own: width, height, grid,
// labels, and rects as one array per field (written by hand: a timeline has thousands). When every
// rect follows the scene's geometry (Scene::x0, px_per_s, row_pitch, row_height) the rects carry
// it as rects.geometry instead of their x, y, w and h arrays (web/derive.js rebuilds them). `before` and
// `after` wrap it (the API's {"ok": true, "result": …}) without another copy of the text.
std::string scene_json_text(const Scene& s, nlohmann::json beside, const std::string& before = "", const std::string& after = "");
nlohmann::json to_json(const SearchResult& s);
nlohmann::json to_json(const SearchPart& p);  // the result's keys, and "order" and "units"
nlohmann::json to_json(const StageBalance& b);
nlohmann::json to_json(const Errors& errors);
nlohmann::json choices_json();  // every named choice: [{name, label}] per key
nlohmann::json presets_json();  // models, clusters and choices

}  // namespace cutlab
