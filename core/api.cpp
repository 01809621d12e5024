#include "core/api.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "core/launch.h"
#include "core/options.h"
#include "core/scene_cuts.h"
#include "core/scene_pareto.h"
#include "core/scene_placement.h"

namespace cutlab::api {

using nlohmann::json;

namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

template <class T>
std::string failure(const Answer<T>& a) {
  json out = {{"ok", false}, {"errors", to_json(a.result.errors)}};
  if (a.pending) out["pending"] = true;
  if (a.config) out["config"] = to_json(*a.config);
  return dump(out);
}

std::string success(json result) { return dump({{"ok", true}, {"result", std::move(result)}}); }

template <class T, class U>
Answer<T> failed(const Answer<U>& from) {
  Answer<T> a;
  a.result.errors = from.result.errors;
  a.config = from.config;
  a.pending = from.pending;
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

// What a build prices: every mode (the CLI, core-full.js), or training only (the page's first module,
// api.h training_evaluate_json). A template argument, so that the first module's code never calls
// the serving model and the linker leaves it out.
enum class Pricing { Every, Training };

// The last config evaluated and its answer: the page asks for the estimate, then the current
// view's figure, of the same config; the second call reuses the first's evaluation. One entry per
// thread (the WASM module and the CLI have one).
struct LastEvaluation {
  std::string text;
  Pricing pricing = Pricing::Every;
  Answer<Evaluated> answer;
  std::size_t evaluations = 0;
  bool valid = false;
};
LastEvaluation& last_evaluation() {
  thread_local LastEvaluation last;
  return last;
}

template <Pricing P>
Answer<Evaluated> evaluate_uncached(const std::string& text) {
  ++last_evaluation().evaluations;
  Answer<Resolved> r = resolve(text);
  if (!r.ok()) return failed<Evaluated>(r);
  Result<Estimate> e;
  if constexpr (P == Pricing::Every) {
    e = cutlab::evaluate(r.result.value);
  } else {
    if (r.result.value.config.workload.mode == Mode::Infer) {
      Answer<Evaluated> a = failed<Evaluated>({{ErrorCode::Incompatible, "/workload/mode",
                                                "a serving plan is priced by the full module (core-full.js), not the page's first"}},
                                              r.config);
      a.pending = true;
      return a;
    }
    Result<TrainingEstimate> t = evaluate_training(r.result.value);
    e.errors = std::move(t.errors);
    e.value = std::move(t.value);
  }
  if (!e.ok()) return failed<Evaluated>(std::move(e.errors), r.config);
  Answer<Evaluated> a;
  a.config = r.config;
  a.result.value = {std::move(r.result.value), std::move(e.value)};
  return a;
}

// The cached answer itself, valid until the next evaluation on this thread: the JSON functions below
// read it without copying it (a copy of a training answer copies every op of its schedule; about 0.2
// ms of the page's timeline call at 16,384 GPUs).
template <Pricing P = Pricing::Every>
const Answer<Evaluated>& evaluate_cached(const std::string& text) {
  LastEvaluation& last = last_evaluation();
  if (!(last.valid && last.pricing == P && last.text == text)) {
    last.answer = evaluate_uncached<P>(text);
    last.text = text;
    last.pricing = P;
    last.valid = true;
  }
  return last.answer;
}

}  // namespace

Answer<Evaluated> evaluate(const std::string& text) { return evaluate_cached(text); }

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

namespace {

// The plan keys the config gives are fixed; the search chooses the others (search.h).
SearchOptions with_fixed_keys(const std::string& text, const SearchOptions& options) {
  SearchOptions o = options;
  Errors ignored;
  const json j = parse_strict(text, ignored);
  if (j.is_object() && j.contains("plan") && j["plan"].is_object())
    for (const auto& [key, value] : j["plan"].items()) o.fixed.push_back(key);
  return o;
}

}  // namespace

Answer<SearchResult> search(const std::string& text, const SearchOptions& options) {
  const Answer<Config> cfg = read(text);
  if (!cfg.ok()) return failed<SearchResult>(cfg);
  Answer<SearchResult> a;
  a.result = search_plans(cfg.result.value, with_fixed_keys(text, options));
  return a;
}

Answer<SearchPart> search_part(const std::string& text, const SearchOptions& options, long long first, long long count,
                               bool memory_prune, double budget_s) {
  const Answer<Config> cfg = read(text);
  if (!cfg.ok()) return failed<SearchPart>(cfg);
  Answer<SearchPart> a;
  a.result = cutlab::search_part(cfg.result.value, with_fixed_keys(text, options), first, count, memory_prune, budget_s);
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

Answer<ServingSearchResult> serving_search(const std::string& text, const ServingSearchOptions& options) {
  const Answer<Config> cfg = read(text);
  if (!cfg.ok()) return failed<ServingSearchResult>(cfg);
  Answer<ServingSearchResult> a;
  a.config = cfg.config;
  a.result = search_serving(cfg.result.value, options);
  return a;
}

Answer<DisaggregatedSearchResult> disaggregated_search(const std::string& text, const ServingSearchOptions& options) {
  const Answer<Config> cfg = read(text);
  if (!cfg.ok()) return failed<DisaggregatedSearchResult>(cfg);
  Answer<DisaggregatedSearchResult> a;
  a.config = cfg.config;
  a.result = search_disaggregated(cfg.result.value, options);
  return a;
}

namespace {

// The mesh axes a pool's plan sets; the config's own are dropped.
const char* const kMeshKeys[] = {"tp", "pp", "cp", "ep", "dp", "etp", "vpp", "layers_per_stage"};

// A reading error of one pool's config, moved to where the user wrote the value.
std::string pool_path(const std::string& path, const std::string& pool, const json& spec) {
  const std::string at = "/disaggregation/" + pool;
  if (path == "/cluster/gpus") return at + "/gpus";
  for (const char* key : {"batch", "max_num_tokens"})
    if (path == std::string("/workload/") + key && spec.contains(key)) return at + "/" + key;
  if (path.rfind("/plan/", 0) == 0) {
    const std::string rest = path.substr(6), key = rest.substr(0, rest.find('/'));
    const bool axis = std::find(std::begin(kMeshKeys), std::end(kMeshKeys), key) != std::end(kMeshKeys);
    if ((spec.contains("plan") && spec["plan"].is_object() && spec["plan"].contains(key)) || axis) return at + "/plan/" + rest;
  }
  if (path == "/plan" && spec.contains("plan")) return at + "/plan";
  if (path.rfind("/cluster", 0) == 0 && spec.contains("cluster")) return at + path;  // the pool's own GPUs
  return path;
}

void add_unique(Errors& to, const Error& e) {
  for (const Error& x : to)
    if (x.path == e.path && x.message == e.message) return;
  to.push_back(e);
}

// The section's shape: {"prefill": POOL, "decode": POOL}, POOL = {"gpus", "plan", "batch", "max_num_tokens",
// "cluster"}: a pool's cluster (a preset name or an object, as the config's) puts it on other GPUs.
void check_section(const json& d, Errors& errors) {
  if (!d.is_object()) {
    errors.push_back({ErrorCode::WrongType, "/disaggregation", "must be an object {\"prefill\": {…}, \"decode\": {…}}"});
    return;
  }
  for (auto it = d.begin(); it != d.end(); ++it)
    if (it.key() != "prefill" && it.key() != "decode")
      errors.push_back(
          {ErrorCode::UnknownKey, "/disaggregation/" + it.key(), "unknown key '" + it.key() + "' (known: prefill, decode)"});
  for (const char* pool : {"prefill", "decode"}) {
    const std::string at = std::string("/disaggregation/") + pool;
    if (!d.contains(pool)) {
      errors.push_back({ErrorCode::MissingKey, at, std::string("the ") + pool + " pool is missing: {\"gpus\": N, \"plan\": {…}}"});
      continue;
    }
    const json& p = d[pool];
    if (!p.is_object()) {
      errors.push_back({ErrorCode::WrongType, at, "must be an object {\"gpus\": N, \"plan\": {…}, \"batch\": N}"});
      continue;
    }
    for (auto it = p.begin(); it != p.end(); ++it)
      if (it.key() != "gpus" && it.key() != "plan" && it.key() != "batch" && it.key() != "max_num_tokens" && it.key() != "cluster")
        errors.push_back({ErrorCode::UnknownKey, at + "/" + it.key(),
                          "unknown key '" + it.key() + "' (known: gpus, plan, batch, max_num_tokens, cluster)"});
    if (!p.contains("gpus")) errors.push_back({ErrorCode::MissingKey, at + "/gpus", "the pool's GPU count is missing"});
    else if (!p["gpus"].is_number_integer() || p["gpus"].get<long long>() < 1 || p["gpus"].get<long long>() > (1 << 20))
      errors.push_back({ErrorCode::OutOfRange, at + "/gpus", "must be a whole number of GPUs between 1 and 1,048,576"});
    if (p.contains("plan") && !p["plan"].is_object()) errors.push_back({ErrorCode::WrongType, at + "/plan", "must be an object"});
    if (p.contains("cluster") && !p["cluster"].is_object() && !p["cluster"].is_string())
      errors.push_back(
          {ErrorCode::WrongType, at + "/cluster", "must be a cluster preset's name or an object, as the config's cluster"});
  }
}

// One pool's config: the document without the section, the pool's GPUs, plan, batch and budget.
json pool_config(const json& base, const json& spec, bool prefill) {
  json c = base;
  if (spec.contains("cluster")) c["cluster"] = spec["cluster"];
  json& cluster = c["cluster"];
  if (cluster.is_string()) cluster = json{{"preset", cluster}};
  if (cluster.is_object()) cluster["gpus"] = spec["gpus"];
  json plan = c.contains("plan") && c["plan"].is_object() ? c["plan"] : json::object();
  for (const char* key : kMeshKeys) plan.erase(key);
  if (spec.contains("plan"))
    for (auto it = spec["plan"].begin(); it != spec["plan"].end(); ++it) plan[it.key()] = it.value();
  c["plan"] = plan;
  json& w = c["workload"];
  if (w.is_null()) w = json::object();
  if (w.is_object()) {
    if (!w.contains("mode")) w["mode"] = "infer";
    for (const char* key : {"batch", "max_num_tokens"})
      if (spec.contains(key)) w[key] = spec[key];
    // Prefill: whole prompts filling one step's token budget, unless the pool says (a mix of lengths:
    // prompts of its mean length, Σ share · prompt_len / Σ share).
    if (prefill && !spec.contains("batch")) {
      const Workload d;
      const json& m = w.contains("max_num_tokens") ? w["max_num_tokens"] : json(d.max_num_tokens);
      const json& l = w.contains("prompt_len") ? w["prompt_len"] : json(d.prompt_len);
      double prompt = l.is_number_integer() ? l.get<double>() : 0.0;
      if (w.contains("length_mix") && w["length_mix"].is_array()) {
        double tokens = 0, shares = 0;
        for (const json& k : w["length_mix"])
          if (k.is_object() && k.contains("prompt_len") && k["prompt_len"].is_number() && k.contains("share") &&
              k["share"].is_number())
            tokens += k["share"].get<double>() * k["prompt_len"].get<double>(), shares += k["share"].get<double>();
        prompt = shares > 0 && std::isfinite(tokens / shares) ? tokens / shares : 0.0;
      }
      if (m.is_number_integer() && prompt >= 1 && prompt < 1e18)
        w["batch"] = std::max<long long>(1, static_cast<long long>(m.get<double>() / prompt));
    }
  }
  return c;
}

}  // namespace

bool has_disaggregation(const std::string& text) {
  Errors ignored;
  const json j = parse_strict(text, ignored);
  return j.is_object() && j.contains("disaggregation");
}

Answer<DisaggregationRun> disaggregate(const std::string& text) {
  Errors errors;
  const json j = parse_strict(text, errors);
  if (j.is_discarded()) return failed<DisaggregationRun>(std::move(errors));
  if (!j.is_object()) return failed<DisaggregationRun>({{ErrorCode::WrongType, "", "the config must be an object"}});
  if (!j.contains("disaggregation"))
    return failed<DisaggregationRun>({{ErrorCode::MissingKey, "/disaggregation",
                                       "no disaggregation section: {\"prefill\": {\"gpus\": N, \"plan\": {…}}, \"decode\": {…}}"}});
  const json& d = j["disaggregation"];
  check_section(d, errors);
  if (!errors.empty()) return failed<DisaggregationRun>(std::move(errors));
  json base = j;
  base.erase("disaggregation");
  Resolved pools[2];
  std::optional<Config> seen;
  const char* names[] = {"prefill", "decode"};
  for (int i = 0; i < 2; ++i) {
    const json& spec = d[names[i]];
    const Answer<Resolved> r = resolve(dump(pool_config(base, spec, i == 0)));
    if (!seen && r.config) seen = r.config;
    if (!r.ok()) {
      for (const Error& e : r.result.errors) add_unique(errors, {e.code, pool_path(e.path, names[i], spec), e.message});
      continue;
    }
    pools[i] = r.result.value;
  }
  if (errors.empty())
    for (const Error& e : disaggregation_workload_errors(pools[0].config.workload)) errors.push_back(e);
  if (!errors.empty()) return failed<DisaggregationRun>(std::move(errors), seen);
  Answer<DisaggregationRun> a;
  a.config = seen;
  a.result.value.prefill = pools[0].config;
  a.result.value.decode = pools[1].config;
  a.result.value.result = evaluate_disaggregated(pools[0], pools[1]);
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

std::string to_json_text(const Answer<ServingSearchResult>& a) {
  if (!a.ok()) return failure(a);
  return success(to_json(a.result.value));
}

std::string to_json_text(const Answer<DisaggregatedSearchResult>& a) {
  if (!a.ok()) return failure(a);
  return success(to_json(a.result.value));
}

std::string to_json_text(const Answer<DisaggregationRun>& a) {
  if (!a.ok()) return failure(a);
  json out = to_json(a.result.value.result);
  out["prefill"]["config"] = to_json(a.result.value.prefill);
  out["decode"]["config"] = to_json(a.result.value.decode);
  return success(std::move(out));
}

std::string evaluate_json(const std::string& text) { return to_json_text(evaluate_cached(text)); }

std::string training_evaluate_json(const std::string& text) {
  const Answer<Evaluated>& a = evaluate_cached<Pricing::Training>(text);
  if (!a.ok()) return failure(a);
  // the training writer itself (to_json(Estimate) would visit the serving one too): the same text
  return success(to_json(std::get<TrainingEstimate>(a.result.value.estimate), a.result.value.resolved.config));
}

std::string schedule_json(const std::string& text) { return schedule_json_text(evaluate_cached(text)); }

std::string timeline_json(const std::string& text, double width, double height) {
  const Answer<Evaluated>& a = evaluate_cached(text);
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
  json beside = json::object();
  if (const auto* t = std::get_if<TrainingEstimate>(&e.estimate)) {
    beside["schedule"] = to_json(t->schedule, false);
    beside["step_s"] = t->step_s;
  } else {
    beside["tokens"] = 3;
  }
  return scene_json_text(timeline(e, layout), std::move(beside), "{\"ok\":true,\"result\":", "}");
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

std::string search_part_json(const std::string& text, int top, int first, int count, bool memory_prune, double budget_ms,
                             double step_bound_s) {
  SearchOptions options;
  options.top = top;
  if (!(budget_ms >= 0))
    return failure(failed<SearchPart>({{ErrorCode::OutOfRange, "/budget_ms", "budget_ms must be ≥ 0 (0: none)"}}));
  if (!std::isfinite(step_bound_s))
    return failure(
        failed<SearchPart>({{ErrorCode::OutOfRange, "/step_bound_s", "step_bound_s must be a number (< 0: find it, 0: none)"}}));
  options.step_bound_s = step_bound_s;
  const Answer<SearchPart> a = search_part(text, options, first, count, memory_prune, budget_ms / 1e3);
  if (!a.ok()) return failure(a);
  return success(to_json(a.result.value));
}

namespace {

// A count of a part: a non-negative integer at parts[i]/key, else an error.
long long part_count(const json& part, const char* key, const std::string& at, Errors& errors) {
  const auto it = part.find(key);
  if (it == part.end() || !it->is_number_integer() || it->get<long long>() < 0) {
    errors.push_back({ErrorCode::WrongType, at + "/" + key, std::string(key) + " must be a count (an integer ≥ 0)"});
    return 0;
  }
  return it->get<long long>();
}

}  // namespace

std::string search_merge_json(const std::string& text, int top) {
  Errors errors;
  const json j = parse_strict(text, errors);
  if (!errors.empty()) return failure(failed<SearchPart>(std::move(errors)));
  if (!j.is_array()) return failure(failed<SearchPart>({{ErrorCode::WrongType, "", "the parts must be an array of search parts"}}));
  if (top < 1) return failure(failed<SearchPart>({{ErrorCode::OutOfRange, "/top", "top must be ≥ 1"}}));
  // The merge ranks by what the search ranks by (fits, tokens/s, peak memory, order); each plan
  // keeps its JSON as the part gave it, found again by its order (unique in the space).
  std::vector<SearchPart> parts;
  std::vector<std::pair<long long, const json*>> entries;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const json& p = j[i];
    const std::string at = "/" + std::to_string(i);
    if (!p.is_object()) {
      errors.push_back({ErrorCode::WrongType, at, "a part must be an object (a search_part result)"});
      continue;
    }
    SearchPart part;
    SearchResult& r = part.result;
    r.candidates = part_count(p, "candidates", at, errors);
    r.pruned_invalid = part_count(p, "pruned_invalid", at, errors);
    r.pruned_equivalent = part_count(p, "pruned_equivalent", at, errors);
    r.pruned_memory = part_count(p, "pruned_memory", at, errors);
    r.pruned_bound = part_count(p, "pruned_bound", at, errors);
    const auto bound = p.find("step_bound_s");
    if (bound == p.end() || !bound->is_number() || !(bound->get<double>() >= 0))
      errors.push_back({ErrorCode::WrongType, at + "/step_bound_s", "step_bound_s must be a number ≥ 0 (0: none)"});
    else r.step_bound_s = bound->get<double>();
    r.evaluated = part_count(p, "evaluated", at, errors);
    r.fitting = part_count(p, "fitting", at, errors);
    part.items = part_count(p, "items", at, errors);
    const auto best = p.find("best"), order = p.find("order");
    if (best == p.end() || order == p.end() || !best->is_array() || !order->is_array() || best->size() != order->size()) {
      errors.push_back({ErrorCode::WrongType, at + "/best", "best and order must be arrays of the same length"});
      continue;
    }
    for (std::size_t k = 0; k < best->size(); ++k) {
      const json& b = (*best)[k];
      const json& o = (*order)[k];
      const std::string bat = at + "/best/" + std::to_string(k);
      if (!o.is_number_integer() || !b.is_object() || !b.contains("fits") || !b["fits"].is_boolean() || !b.contains("tokens_per_s") ||
          !b["tokens_per_s"].is_number() || !b.contains("peak_memory_bytes") || !b["peak_memory_bytes"].is_number()) {
        errors.push_back({ErrorCode::WrongType, bat, "a plan needs fits, tokens_per_s, peak_memory_bytes and an integer order"});
        continue;
      }
      RankedPlan rp;
      rp.fits = b["fits"].get<bool>();
      rp.tokens_per_s = b["tokens_per_s"].get<double>();
      rp.peak_memory_bytes = b["peak_memory_bytes"].get<double>();
      r.best.push_back(rp);
      part.order.push_back(o.get<long long>());
      entries.emplace_back(o.get<long long>(), &b);
    }
    parts.push_back(std::move(part));
  }
  if (!errors.empty()) return failure(failed<SearchPart>(std::move(errors)));
  const SearchPart merged = merge_search_parts(parts, top);
  json out = to_json(merged);
  json best = json::array();
  for (long long order : merged.order)
    for (const auto& [o, entry] : entries)
      if (o == order) {
        best.push_back(*entry);
        break;
      }
  out["best"] = std::move(best);
  out["second_pass"] = needs_second_pass(merged.result);
  return success(std::move(out));
}

std::string serving_search_json(const std::string& text, int top, double max_ttft_ms, double max_tpot_ms, double width,
                                bool disaggregated) {
  ServingSearchOptions options;
  options.top = top;
  options.max_ttft_s = max_ttft_ms / 1e3;
  options.max_tpot_s = max_tpot_ms / 1e3;
  if (!(width == 0 || (width >= 200 && width <= 20000)))
    return failure(failed<ServingSearchResult>(
        {{ErrorCode::OutOfRange, "/width", "width must be 0 (no figure) or between 200 and 20000 pixels"}}));
  const Answer<ServingSearchResult> a = serving_search(text, options);
  if (!a.ok()) return failure(a);
  json out = to_json(a.result.value);
  out["max_ttft_s"] = options.max_ttft_s;
  out["max_tpot_s"] = options.max_tpot_s;
  Answer<DisaggregatedSearchResult> split;
  if (disaggregated) {
    split.result = search_disaggregated(*a.config, options);
    if (split.ok()) out["disaggregated"] = to_json(split.result.value);
    else out["disaggregated_errors"] = to_json(split.result.errors);
  }
  if (width > 0) {
    out["figure"] = to_json(pareto_scene(a.result.value, options, pareto_title(*a.config), width,
                                         split.ok() && disaggregated ? &split.result.value : nullptr));
  }
  return success(std::move(out));
}

std::string disaggregation_json(const std::string& text) { return to_json_text(disaggregate(text)); }

std::string balance_json(const std::string& text) { return to_json_text(balance(text, StageBalanceOptions{})); }

std::string options_json(const std::string& text) {
  // A config that reads but breaks a rule still has options: the values that would fix it (a GPU
  // count the mesh does not divide: the TP or PP that does).
  const Answer<Config> cfg = read(text);
  if (!cfg.ok() && !cfg.config) return failure(cfg);
  return success(json(axis_options(cfg.ok() ? cfg.result.value : *cfg.config)));
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
template <Pricing P = Pricing::Every, class Draw>
std::string figure_answer(const std::string& text, double width, Draw draw) {
  const Answer<Evaluated>& a = evaluate_cached<P>(text);
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

std::string training_cuts_scene_json(const std::string& text, double width, int layer) {
  return figure_answer<Pricing::Training>(text, width,
                                          [&](const Evaluated& e) { return cuts_scene(e.resolved, e.estimate, width, layer); });
}

}  // namespace cutlab::api
