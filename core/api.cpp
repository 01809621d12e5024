#include "core/api.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "core/launch.h"
#include "core/options.h"
#include "core/scene_cuts.h"
#include "core/scene_placement.h"

namespace cutlab::api {

using nlohmann::json;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

template <class T>
std::string failure(const Answer<T>& a) {
  json out = {{"ok", false}, {"errors", to_json(a.result.errors)}};
  if (a.config) out["config"] = to_json(*a.config);
  return dump(out);
}

std::string success(json result) { return dump({{"ok", true}, {"result", std::move(result)}}); }

template <class T, class U>
Answer<T> failed(const Answer<U>& from) {
  Answer<T> a;
  a.result.errors = from.result.errors;
  a.config = from.config;
  return a;
}

template <class T>
Answer<T> failed(Errors errors, std::optional<Config> config = std::nullopt) {
  Answer<T> a;
  a.result.errors = std::move(errors);
  a.config = std::move(config);
  return a;
}

}  // namespace

Answer<Config> read(const std::string& text) {
  Answer<Config> a;
  const json j = parse_strict(text, a.result.errors);
  if (j.is_discarded()) return a;
  a.result = config_from_json(j);
  if (a.result.ok() || sections_resolved(a.result.errors)) a.config = a.result.value;
  return a;
}

Answer<Resolved> resolve(const std::string& text) {
  const Answer<Config> cfg = read(text);
  if (!cfg.ok()) return failed<Resolved>(cfg);
  Answer<Resolved> a;
  a.config = cfg.result.value;
  a.result = cutlab::resolve(cfg.result.value);
  return a;
}

namespace {

// The last config evaluated and its answer: the page asks for the estimate, then the current
// view's figure, of the same config; the second call reuses the first's evaluation. One entry per
// thread (the WASM module and the CLI have one).
struct LastEvaluation {
  std::string text;
  Answer<Evaluated> answer;
  std::size_t evaluations = 0;
  bool valid = false;
};
LastEvaluation& last_evaluation() {
  thread_local LastEvaluation last;
  return last;
}

Answer<Evaluated> evaluate_uncached(const std::string& text) {
  ++last_evaluation().evaluations;
  Answer<Resolved> r = resolve(text);
  if (!r.ok()) return failed<Evaluated>(r);
  Result<Estimate> e = cutlab::evaluate(r.result.value);
  if (!e.ok()) return failed<Evaluated>(std::move(e.errors), r.config);
  Answer<Evaluated> a;
  a.config = r.config;
  a.result.value = {std::move(r.result.value), std::move(e.value)};
  return a;
}

}  // namespace

Answer<Evaluated> evaluate(const std::string& text) {
  LastEvaluation& last = last_evaluation();
  if (!(last.valid && last.text == text)) {
    last.answer = evaluate_uncached(text);
    last.text = text;
    last.valid = true;
  }
  return last.answer;
}

std::size_t evaluations() { return last_evaluation().evaluations; }

Answer<std::vector<GpuPlacement>> gpus(const std::string& text, int first, int count) {
  const Answer<Resolved> r = resolve(text);
  if (!r.ok()) return failed<std::vector<GpuPlacement>>(r);
  const Resolved& res = r.result.value;
  const int n = res.placement.gpus;
  if (first < 0 || first >= n)
    return failed<std::vector<GpuPlacement>>({{ErrorCode::OutOfRange, "/first", "first must be in [0, " + std::to_string(n) + ")"}});
  if (count < 1 || count > 4096)
    return failed<std::vector<GpuPlacement>>({{ErrorCode::OutOfRange, "/count", "count must be between 1 and 4096"}});
  Answer<std::vector<GpuPlacement>> a;
  a.config = r.config;
  for (int rank = first; rank < std::min(n, first + count); ++rank) a.result.value.push_back(gpu_placement(res, rank));
  return a;
}

Answer<SearchResult> search(const std::string& text, const SearchOptions& options) {
  const Answer<Config> cfg = read(text);
  if (!cfg.ok()) return failed<SearchResult>(cfg);
  Answer<SearchResult> a;
  a.result = search_plans(cfg.result.value, options);
  return a;
}

Answer<StageBalance> balance(const std::string& text, const StageBalanceOptions& options) {
  const Answer<Config> cfg = read(text);
  if (!cfg.ok()) return failed<StageBalance>(cfg);
  Answer<StageBalance> a;
  a.config = cfg.config;
  a.result = balance_stages(cfg.result.value, options);
  return a;
}

Scene timeline(const Evaluated& e, const TimelineLayout& layout) {
  if (const auto* s = std::get_if<ServingEstimate>(&e.estimate))
    return serving_walk_scene(s->serving.decode_stage_s, s->serving.pp_send_s, s->serving.micro_batches, 3, layout);
  const auto* t = std::get_if<TrainingEstimate>(&e.estimate);
  if (!t) return {};
  std::vector<StageTail> tails;
  for (const StageTime& st : t->stages) tails.push_back({st.dp_exposed_s, st.optimizer_s});
  return timeline_scene(t->schedule, layout, tails);
}

std::string to_json_text(const Answer<Evaluated>& a) {
  if (!a.ok()) return failure(a);
  return success(to_json(a.result.value.estimate, a.result.value.resolved.config));
}

std::string schedule_json_text(const Answer<Evaluated>& a) {
  if (!a.ok()) return failure(a);
  const auto* t = std::get_if<TrainingEstimate>(&a.result.value.estimate);
  return success(to_json(t ? t->schedule : ScheduleResult{}, true));
}

std::string to_json_text(const Answer<std::vector<GpuPlacement>>& a) {
  if (!a.ok()) return failure(a);
  json out = json::array();
  for (const GpuPlacement& g : a.result.value) out.push_back(to_json(g));
  return success(std::move(out));
}

std::string to_json_text(const Answer<SearchResult>& a) {
  if (!a.ok()) return failure(a);
  return success(to_json(a.result.value));
}

std::string to_json_text(const Answer<StageBalance>& a) {
  if (!a.ok()) return failure(a);
  return success(to_json(a.result.value));
}

std::string evaluate_json(const std::string& text) { return to_json_text(evaluate(text)); }

std::string schedule_json(const std::string& text) { return schedule_json_text(evaluate(text)); }

std::string timeline_json(const std::string& text, double width, double height) {
  const Answer<Evaluated> a = evaluate(text);
  if (!a.ok()) return failure(a);
  if (!(width >= 200 && width <= 20000))
    return failure(failed<Evaluated>({{ErrorCode::OutOfRange, "/width", "width must be between 200 and 20000 pixels"}}));
  if (!(height == 0 || (height >= 50 && height <= 20000)))
    return failure(
        failed<Evaluated>({{ErrorCode::OutOfRange, "/height", "height must be 0 (automatic) or between 50 and 20000 pixels"}}));
  TimelineLayout layout;
  layout.width = width;
  layout.height = height;
  const Evaluated& e = a.result.value;
  json out = to_json(timeline(e, layout));
  if (const auto* t = std::get_if<TrainingEstimate>(&e.estimate)) {
    out["schedule"] = to_json(t->schedule, false);
    out["step_s"] = t->step_s;
  } else {
    out["tokens"] = 3;
  }
  return success(std::move(out));
}

std::string gpus_json(const std::string& text, int first, int count) { return to_json_text(gpus(text, first, count)); }

std::string gpu_json(const std::string& text, int rank) {
  const Answer<std::vector<GpuPlacement>> a = gpus(text, rank, 1);
  if (!a.ok()) {
    Answer<std::vector<GpuPlacement>> b = a;
    for (Error& e : b.result.errors)
      if (e.path == "/first") e = {ErrorCode::OutOfRange, "/rank", "rank" + e.message.substr(5)};
    return failure(b);
  }
  return success(to_json(a.result.value.front()));
}

std::string search_json(const std::string& text, int top) {
  SearchOptions options;
  options.top = top;
  return to_json_text(search(text, options));
}

std::string balance_json(const std::string& text) { return to_json_text(balance(text, StageBalanceOptions{})); }

std::string options_json(const std::string& text) {
  const Answer<Config> cfg = read(text);
  if (!cfg.ok()) return failure(cfg);
  return success(json(axis_options(cfg.result.value)));
}

std::string presets_json() { return success(cutlab::presets_json()); }

std::string launch_json(const std::string& text, const std::string& format_name) {
  LaunchFormat format{};
  if (!launch_format_from_name(format_name, format))
    return dump({{"ok", false},
                 {"errors", to_json(Errors{{ErrorCode::OutOfRange, "format", "format takes one of " + launch_format_list()}})}});
  const Answer<Resolved> r = resolve(text);
  if (!r.ok()) return failure(r);
  const Result<LaunchConfig> l = export_launch(r.result.value.config, format);
  if (!l.ok()) return dump({{"ok", false}, {"errors", to_json(l.errors)}});
  return success({{"format", name_of(l.value.format)},
                  {"file_name", l.value.file_name},
                  {"text", l.value.text},
                  {"unexpressed", l.value.unexpressed},
                  {"notes", l.value.notes}});
}

namespace {

// A figure `width` pixels wide of the evaluated config; on failure the JSON answer.
template <class Draw>
std::string figure_answer(const std::string& text, double width, Draw draw) {
  const Answer<Evaluated> a = evaluate(text);
  if (!a.ok()) return failure(a);
  if (!(width >= 200 && width <= 20000))
    return failure(failed<Evaluated>({{ErrorCode::OutOfRange, "/width", "width must be between 200 and 20000 pixels"}}));
  return "{\"ok\":true,\"result\":" + figure_json(draw(a.result.value)) + "}";
}

}  // namespace

std::string placement_scene_json(const std::string& text, double width) {
  return figure_answer(text, width, [&](const Evaluated& e) { return placement_scene(e.resolved, e.estimate, width); });
}

std::string cuts_scene_json(const std::string& text, double width, int layer) {
  return figure_answer(text, width, [&](const Evaluated& e) { return cuts_scene(e.resolved, e.estimate, width, layer); });
}

}  // namespace cutlab::api
