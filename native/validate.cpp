#include "native/validate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/json_io.h"
#include "core/validation.h"
#include "native/format.h"

namespace cutlab::cli {

namespace {

using nlohmann::json;

constexpr int kOk = 0, kUsage = 1, kInvalid = 2, kOverLimit = 4;
const char* kDefaultCases = "validation/cases.json";

bool read_cases(const std::string& path, std::vector<ValidationCase>& cases) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cutlab: cannot read " << path << "\n";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Result<std::vector<ValidationCase>> r = cases_from_json(ss.str());
  if (!r.ok()) {
    std::cerr << "cutlab: invalid cases in " << path << " (" << r.errors.size() << " problems):\n";
    for (const Error& e : r.errors) std::cerr << "  " << e.path << ": " << e.message << "\n";
    return false;
  }
  cases = std::move(r.value);
  return true;
}

std::string unit_of(Metric metric) {
  for (const MetricInfo& m : case_metrics())
    if (metric == m.metric) return m.unit;
  return "";
}

std::string number(double v) {
  const double a = std::fabs(v);
  return fixed(v, a >= 100 ? 1 : (a >= 10 ? 2 : (a >= 1 ? 3 : 4)));
}

std::string signed_pct(double p) { return (p >= 0 ? "+" : "") + fixed(p, 1) + "%"; }

// A fitted efficiency within 0.5% of its range from a bound: the fit pinned there (what the cases ask
// lies past it, or the cost they show is one the step does not price).
std::string on_bound(double v, const CalibrationParam& p) {
  const double near = 0.005 * (p.hi - p.lo);
  return v <= p.lo + near ? "lower" : v >= p.hi - near ? "upper" : "";
}

// A fitted value against its prior: how many prior spreads from it (a minus sign, U+2212), and a bound
// it sits on: "−3.3 sd, at its lower bound".
std::string against_prior(double v, const CalibrationParam& p) {
  const double z = p.prior_sd > 0 ? (v - p.prior) / p.prior_sd : 0.0;
  const std::string bound = on_bound(v, p);
  return signed_fixed(z, 1) + " sd" + (bound.empty() ? "" : ", at its " + bound + " bound");
}

// [SVG] predicted against measured, one panel per family · dtype · metric.
std::string group_of(const CaseResult& r) {
  std::string label = r.family;
  std::transform(label.begin(), label.end(), label.begin(), [](unsigned char c) { return std::toupper(c); });
  label += " " + std::string(name_of(r.dtype)) + " · ";
  for (const Named<Metric>& n : ChoiceTable<Metric>::entries)
    if (n.value == r.metric) label += n.label;
  return label;
}

// The case id without its source prefix, for labels inside a panel.
std::string short_id(const std::string& id) {
  for (const char* prefix :
       {"megatron_a100_weak_", "mcore_h100_weak_", "mcore_h100_strong_", "nemo2407_h100_fp8_", "mbridge_", "torchtitan_"})
    if (id.rfind(prefix, 0) == 0) return id.substr(std::string(prefix).size());
  return id;
}

// One panel per family · dtype · metric (linear axes, each its own range), so that runs that
// sit close together stay readable; the ±10% band and y = x in each.
std::string scatter_svg(const ValidationSummary& s) {
  std::vector<std::string> names;
  std::map<std::string, std::vector<const CaseResult*>> groups;
  for (const CaseResult& r : s.results)
    if (r.kind == CaseKind::Training && r.ok) {
      const std::string g = group_of(r);
      if (!groups.count(g)) names.push_back(g);
      groups[g].push_back(&r);
    }
  const int cols = 2, rows = std::max(1, static_cast<int>((names.size() + 1) / 2));
  const double pw = 300, ph = 300, gap_x = 110, gap_y = 90, left = 70, top = 78;
  const double W = left + cols * pw + (cols - 1) * gap_x + 40, H = top + rows * ph + (rows - 1) * gap_y + 100;
  const char* palette[] = {"#1b6ca8", "#d1495b", "#edae49", "#00798c", "#6a4c93", "#30638e", "#8d6a9f"};
  auto f = [](double v) { return fixed(v, 1); };

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W << " " << H
    << "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  o << "<text x=\"" << left
    << "\" y=\"26\" font-size=\"16\" font-weight=\"bold\">cutlab against published training runs: predicted vs measured</text>\n";
  o << "<text x=\"" << left << "\" y=\"46\" fill=\"#444\">" << s.training_cases << " runs · mean |error| "
    << fixed(s.mean_abs_error_percent, 1) << "% · largest " << fixed(s.max_abs_error_percent, 1) << "% (" << xml_escape(s.worst_id)
    << ") · grey band: ±10% of measured · line: predicted = measured</text>\n";
  for (size_t gi = 0; gi < names.size(); ++gi) {
    const std::vector<const CaseResult*>& pts = groups[names[gi]];
    double lo = 1e300, hi = 0;
    for (const CaseResult* r : pts) lo = std::min({lo, r->predicted, r->measured}), hi = std::max({hi, r->predicted, r->measured});
    // Axis range: the data ± 12%, rounded outward to a tick step of 1, 2 or 5 × 10^k.
    const double span = std::max(hi * 1.12 - lo * 0.88, 1e-9);
    double step = std::pow(10.0, std::floor(std::log10(span / 5)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
      if (span / (m * step) <= 6) {
        step *= m;
        break;
      }
    const double a = std::floor(lo * 0.88 / step) * step, b = std::ceil(hi * 1.12 / step) * step;
    const double x0 = left + double(gi % cols) * (pw + gap_x), y0 = top + double(gi / cols) * (ph + gap_y);
    auto X = [&](double v) { return x0 + (v - a) / (b - a) * pw; };
    auto Y = [&](double v) { return y0 + ph - (v - a) / (b - a) * ph; };
    o << "<g>\n<text x=\"" << x0 << "\" y=\"" << y0 - 10 << "\" font-weight=\"bold\">" << xml_escape(names[gi]) << " (" << pts.size()
      << ")</text>\n";
    o << "<clipPath id=\"c" << gi << "\"><rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << pw << "\" height=\"" << ph
      << "\"/></clipPath>\n";
    o << "<g clip-path=\"url(#c" << gi << ")\"><polygon fill=\"#e6e6e6\" points=\"" << f(X(a)) << "," << f(Y(a * 0.9)) << " "
      << f(X(b)) << "," << f(Y(b * 0.9)) << " " << f(X(b)) << "," << f(Y(b * 1.1)) << " " << f(X(a)) << "," << f(Y(a * 1.1))
      << "\"/>\n";
    o << "<line x1=\"" << f(X(a)) << "\" y1=\"" << f(Y(a)) << "\" x2=\"" << f(X(b)) << "\" y2=\"" << f(Y(b))
      << "\" stroke=\"#333\"/></g>\n";
    o << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << pw << "\" height=\"" << ph
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
    for (double v = a; v <= b + step / 2; v += step) {
      const std::string t = step >= 1 ? fixed(v, 0) : fixed(v, 1);
      o << "<line x1=\"" << f(X(v)) << "\" y1=\"" << y0 + ph << "\" x2=\"" << f(X(v)) << "\" y2=\"" << y0 + ph + 5
        << "\" stroke=\"#333\"/>"
        << "<text x=\"" << f(X(v)) << "\" y=\"" << y0 + ph + 18 << "\" text-anchor=\"middle\">" << t << "</text>\n";
      o << "<line x1=\"" << x0 - 5 << "\" y1=\"" << f(Y(v)) << "\" x2=\"" << x0 << "\" y2=\"" << f(Y(v)) << "\" stroke=\"#333\"/>"
        << "<text x=\"" << x0 - 8 << "\" y=\"" << f(Y(v) + 4) << "\" text-anchor=\"end\">" << t << "</text>\n";
    }
    o << "<text x=\"" << x0 + pw / 2 << "\" y=\"" << y0 + ph + 38 << "\" text-anchor=\"middle\" fill=\"#444\">measured</text>\n";
    o << "<text transform=\"translate(" << x0 - 48 << "," << y0 + ph / 2
      << ") rotate(-90)\" text-anchor=\"middle\" fill=\"#444\">predicted</text>\n";
    struct Label {
      double x, y, y_text;
      std::string text;
    };
    std::vector<Label> labels;
    for (const CaseResult* r : pts) {
      o << "<circle cx=\"" << f(X(r->measured)) << "\" cy=\"" << f(Y(r->predicted)) << "\" r=\"4.5\" fill=\"" << palette[gi % 7]
        << "\" stroke=\"#222\" stroke-width=\"0.6\"><title>" << xml_escape(r->id) << ": predicted " << number(r->predicted)
        << ", measured " << number(r->measured) << " (" << signed_pct(r->error_percent) << ")</title></circle>\n";
      if (std::fabs(r->error_percent) > 5)
        labels.push_back({X(r->measured), Y(r->predicted), Y(r->predicted) + 4, short_id(r->id) + " " + signed_pct(r->error_percent)});
    }
    // Labels to the right of their points, pushed down until they no longer overlap; a leader
    // line joins a moved label to its point.
    std::sort(labels.begin(), labels.end(), [](const Label& p, const Label& q) { return p.y < q.y; });
    for (size_t i = 1; i < labels.size(); ++i) labels[i].y_text = std::max(labels[i].y_text, labels[i - 1].y_text + 12);
    for (const Label& l : labels) {
      const double tx = std::max(l.x + 8, x0 + pw * 0.55);
      o << "<line x1=\"" << f(l.x + 4) << "\" y1=\"" << f(l.y) << "\" x2=\"" << f(tx - 2) << "\" y2=\"" << f(l.y_text - 4)
        << "\" stroke=\"#999\" stroke-width=\"0.6\"/><text x=\"" << f(tx) << "\" y=\"" << f(l.y_text)
        << "\" font-size=\"10\" fill=\"#333\">" << xml_escape(l.text) << "</text>\n";
    }
    o << "</g>\n";
  }
  o << "<text x=\"" << left << "\" y=\"" << H - 30 << "\" fill=\"#555\" font-size=\"11\">Points more than 5% off carry their case id "
    << "(validation/cases.json; hover a point for its numbers).</text>\n";
  o << "<text x=\"" << left << "\" y=\"" << H - 14 << "\" fill=\"#555\" font-size=\"11\">The memory cases (ZeRO Figure 1, Megatron "
    << "bytes per parameter) match to the published rounding and are not plotted.</text>\n";
  o << "</svg>\n";
  return o.str();
}

json result_json(const CaseResult& r) {
  json j = {{"id", r.id},
            {"family", r.family},
            {"kind", r.kind == CaseKind::Memory ? "memory" : "training"},
            {"metric", name_of(r.metric)},
            {"unit", unit_of(r.metric)},
            {"ok", r.ok},
            {"predicted", r.predicted},
            {"measured", r.measured},
            {"error_percent", r.error_percent}};
  if (r.kind == CaseKind::Memory) j["within_resolution"] = r.within_resolution;
  else j["fits"] = r.fits, j["dtype"] = name_of(r.dtype), j["step_s"] = r.step_s, j["mfu"] = r.mfu, j["calibrated"] = r.calibrated;
  if (!r.ok) j["errors"] = to_json(r.errors);
  return j;
}

json summary_json(const ValidationSummary& s) {
  json results = json::array(), families = json::array();
  for (const CaseResult& r : s.results) results.push_back(result_json(r));
  for (const FamilyError& f : s.families)
    families.push_back({{"family", f.family},
                        {"cases", f.cases},
                        {"mean_abs_error_percent", f.mean_abs_error_percent},
                        {"max_abs_error_percent", f.max_abs_error_percent},
                        {"worst_id", f.worst_id}});
  return {{"results", results},
          {"training_cases", s.training_cases},
          {"failed_cases", s.failed_cases},
          {"mean_abs_error_percent", s.mean_abs_error_percent},
          {"max_abs_error_percent", s.max_abs_error_percent},
          {"worst_id", s.worst_id},
          {"families", families},
          {"uncalibrated",
           {{"cases", s.uncalibrated.cases},
            {"mean_abs_error_percent", s.uncalibrated.mean_abs_error_percent},
            {"max_abs_error_percent", s.uncalibrated.max_abs_error_percent},
            {"worst_id", s.uncalibrated.worst_id}}},
          {"memory_cases", s.memory_cases},
          {"memory_exact", s.memory_exact},
          {"peak_memory_cases", s.peak_memory_cases},
          {"peak_memory_max_abs_error_percent", s.peak_memory_max_abs_error_percent},
          {"peak_memory_worst_id", s.peak_memory_worst_id}};
}

std::string joined(const std::vector<std::string>& v, const char* sep = ",") {
  std::string out;
  for (const std::string& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

// [Cross-validation] How a held-out group's runs were predicted, in a few words.
std::string fit_label(const CvFit& f) {
  if (f.case_ids.empty()) return "no run to fit: Efficiencies defaults";
  if (f.transfer) return "transfer from " + joined(f.fitted_families, "+");
  return f.family + " refit on " +
         (f.fitted_groups.size() <= 2 ? joined(f.fitted_groups, ", ") : std::to_string(f.fitted_groups.size()) + " groups");
}

json cv_error_json(const CvError& e) {
  return {{"group", e.group},
          {"cases", e.cases},
          {"in_sample_mean_percent", e.in_sample_mean_percent},
          {"in_sample_max_percent", e.in_sample_max_percent},
          {"in_sample_worst_id", e.in_sample_worst_id},
          {"held_out_mean_percent", e.held_out_mean_percent},
          {"held_out_max_percent", e.held_out_max_percent},
          {"held_out_worst_id", e.held_out_worst_id}};
}

json cross_validation_json(const CrossValidation& cv) {
  json cases = json::array(), fits = json::array(), groups = json::array();
  for (const CvCase& c : cv.cases) {
    json j = {{"id", c.id},
              {"family", c.family},
              {"source_group", c.group},
              {"kind", c.kind == CaseKind::Memory ? "memory" : "training"},
              {"ok", c.ok},
              {"measured", c.measured},
              {"in_sample_predicted", c.in_sample_predicted},
              {"in_sample_error_percent", c.in_sample_error_percent},
              {"held_out_predicted", c.held_out_predicted},
              {"held_out_error_percent", c.held_out_error_percent}};
    if (c.fit >= 0) j["fit"] = c.fit;
    else j["fit"] = nullptr, j["note"] = "memory case: does not depend on the efficiencies";
    cases.push_back(j);
  }
  for (const CvFit& f : cv.fits) {
    json eff = json::object();
    for (const CalibrationParam& p : calibration_params()) eff[p.key] = f.efficiency.*(p.member) / p.unit;
    fits.push_back({{"held_out_group", f.held_out_group},
                    {"family", f.family},
                    {"transfer", f.transfer},
                    {"label", fit_label(f)},
                    {"fitted_families", f.fitted_families},
                    {"fitted_groups", f.fitted_groups},
                    {"fitted_cases", f.case_ids},
                    {"keys", f.keys},
                    {"undetermined_keys", f.undetermined},
                    {"efficiency", eff},
                    {"fit_mape_percent", f.fit_mape_percent},
                    {"evaluations", f.evaluations}});
  }
  for (const CvError& e : cv.groups) groups.push_back(cv_error_json(e));
  return {{"method", "leave one source group out"},
          {"cases", cases},
          {"fits", fits},
          {"groups", groups},
          {"overall", cv_error_json(cv.overall)},
          {"within_family", cv_error_json(cv.within_family)},
          {"transfer", cv_error_json(cv.transfer)},
          {"failed_cases", cv.failed_cases},
          {"memory_cases", cv.memory_cases},
          {"memory_exact", cv.memory_exact}};
}

void print_cross_validation(const CrossValidation& cv) {
  std::cout << "\ncross-validation, leave one source out: each source group's runs predicted with efficiencies\n"
               "refitted without that group (in-sample: the presets' efficiencies, as above)\n";
  Table t{{"case", "group", "in-sample", "held-out", "held-out fit"}, {}};
  for (const CvCase& c : cv.cases) {
    if (c.kind == CaseKind::Memory) continue;
    t.rows.push_back({c.id, c.group, c.ok ? signed_pct(c.in_sample_error_percent) : "-",
                      c.ok ? signed_pct(c.held_out_error_percent) : "-", fit_label(cv.fits[static_cast<size_t>(c.fit)])});
  }
  std::cout << t.render() << "\nheld-out fits (calibrate's start, bounds and search, on the runs outside the group):\n";
  for (const CvFit& f : cv.fits) {
    std::cout << "  " << f.held_out_group << " (" << f.family << "): ";
    if (f.case_ids.empty()) std::cout << fit_label(f);
    else
      std::cout << (f.transfer ? "transfer from " + joined(f.fitted_families, "+") + ", fitted on " : std::string("refit on "))
                << f.case_ids.size() << " runs of " << joined(f.fitted_groups, ", ") << ", mean |error| "
                << fixed(f.fit_mape_percent, 2) << "% on them";
    std::cout << "\n   ";
    for (const std::string& k : f.keys) {
      const auto p = std::find_if(calibration_params().begin(), calibration_params().end(),
                                  [&](const CalibrationParam& q) { return k == q.key; });
      std::cout << " " << k << " " << fixed(f.efficiency.*(p->member) / p->unit, p->hi / p->unit > 10 ? 0 : 3);
    }
    std::cout << "\n";
    for (const std::string& k : f.undetermined)
      std::cout << "    " << k << ": no fitted run depends on it, "
                << (k == "gemm_fp8" && std::find(f.keys.begin(), f.keys.end(), "gemm") != f.keys.end()
                        ? "takes the prior ratio of the fitted gemm (" + fixed(f.efficiency.gemm_fp8, 3) + ")"
                        : "keeps its start value")
                << "\n";
  }
  std::cout << "\n";
  Table g{{"group", "runs", "in-sample mean", "worst", "held-out mean", "worst"}, {}};
  auto row = [&](const CvError& e) {
    g.rows.push_back({e.group, std::to_string(e.cases), fixed(e.in_sample_mean_percent, 1) + "%",
                      fixed(e.in_sample_max_percent, 1) + "%", fixed(e.held_out_mean_percent, 1) + "%",
                      fixed(e.held_out_max_percent, 1) + "%"});
  };
  for (const CvError& e : cv.groups) row(e);
  row(cv.overall);
  if (cv.transfer.cases > 0) row(cv.within_family), row(cv.transfer);
  std::cout << g.render();
  std::cout << "held-out: mean |error| " << fixed(cv.overall.held_out_mean_percent, 1) << "% · largest "
            << fixed(cv.overall.held_out_max_percent, 1) << "% (" << cv.overall.held_out_worst_id << "); in-sample "
            << fixed(cv.overall.in_sample_mean_percent, 1) << "% · " << fixed(cv.overall.in_sample_max_percent, 1) << "%\n";
  if (cv.failed_cases) std::cout << cv.failed_cases << " runs do not evaluate in-sample or held-out\n";
  std::cout << "memory cases: " << cv.memory_cases << ", independent of the efficiencies (held-out = in-sample)\n";
}

// [Serving] The serving cases (validation/serving-cases.json, docs/validation.md §8): predicted against
// measured output tokens/s, and the errors per model and per GPU.
json serving_json(const ValidationSummary& s, const std::vector<ValidationCase>& cases) {
  json results = json::array();
  for (size_t i = 0; i < s.results.size(); ++i) {
    const CaseResult& r = s.results[i];
    const Plan& p = cases[i].config.plan;
    json j = {{"id", r.id},
              {"family", r.family},
              {"model", r.model},
              {"metric", name_of(r.metric)},
              {"unit", unit_of(r.metric)},
              {"ok", r.ok},
              {"predicted", r.predicted},
              {"measured", r.measured},
              {"error_percent", r.error_percent},
              {"tp", p.tp},
              {"pp", p.pp},
              {"ep", p.ep},
              {"batch", r.batch},
              {"ttft_s", r.ttft_s},
              {"tpot_s", r.tpot_s}};
    if (!r.ok) j["errors"] = to_json(r.errors);
    results.push_back(j);
  }
  auto groups = [](const std::vector<FamilyError>& v) {
    json out = json::array();
    for (const FamilyError& f : v)
      out.push_back({{"group", f.family},
                     {"cases", f.cases},
                     {"mean_abs_error_percent", f.mean_abs_error_percent},
                     {"max_abs_error_percent", f.max_abs_error_percent},
                     {"worst_id", f.worst_id}});
    return out;
  };
  return {{"results", results},
          {"cases", s.serving_cases},
          {"failed_cases", s.serving_failed_cases},
          {"mean_abs_error_percent", s.serving_mean_abs_error_percent},
          {"max_abs_error_percent", s.serving_max_abs_error_percent},
          {"worst_id", s.serving_worst_id},
          {"models", groups(s.serving_models)},
          {"gpus", groups(s.serving_gpus)}};
}

void print_serving(const ValidationSummary& s, const std::vector<ValidationCase>& cases, const std::string& path) {
  std::cout << "\nserving cases · " << path << " (not calibrated: the presets' efficiencies)\n";
  Table t{{"case", "plan", "batch", "metric", "predicted", "measured", "error"}, {}};
  for (size_t i = 0; i < s.results.size(); ++i) {
    const CaseResult& r = s.results[i];
    const Plan& p = cases[i].config.plan;
    const std::string plan = "TP" + std::to_string(p.tp) + (p.pp > 1 ? " PP" + std::to_string(p.pp) : "") +
                             (p.ep > 1 ? " EP" + std::to_string(p.ep) : "");
    t.rows.push_back(
        {r.id, plan, r.ok ? std::to_string(r.batch) : "-", name_of(r.metric), r.ok ? number(r.predicted) : "-", number(r.measured),
         r.ok ? signed_pct(r.error_percent) : "does not evaluate: " + (r.errors.empty() ? std::string() : r.errors.front().message)});
  }
  std::cout << t.render() << "\n";
  std::cout << "serving cases: " << s.serving_cases
            << (s.serving_failed_cases ? " (+" + std::to_string(s.serving_failed_cases) + " that do not evaluate)" : "")
            << " · mean |error| " << fixed(s.serving_mean_abs_error_percent, 1) << "% · largest "
            << fixed(s.serving_max_abs_error_percent, 1) << "% (" << s.serving_worst_id << ")\n";
  for (const auto* v : {&s.serving_models, &s.serving_gpus})
    for (const FamilyError& f : *v)
      std::cout << "  " << f.family << ": " << f.cases << " cases · mean |error| " << fixed(f.mean_abs_error_percent, 1)
                << "% · largest " << fixed(f.max_abs_error_percent, 1) << "% (" << f.worst_id << ")\n";
}

bool serving_over_limits(const ValidationSummary& s) {
  using L = ServingLimits;
  return s.serving_failed_cases > L::documented_failed_cases ||
         s.serving_mean_abs_error_percent > L::documented_mean_percent + L::margin_mean_percent ||
         s.serving_max_abs_error_percent > L::documented_worst_percent + L::margin_worst_percent;
}

// The limits of tests/test_validation.cpp (core/validation.h ValidationLimits).
bool over_limits(const ValidationSummary& s, const CrossValidation* cv) {
  using L = ValidationLimits;
  return s.failed_cases > 0 || !s.memory_exact || s.mean_abs_error_percent > L::documented_mean_percent + L::margin_mean_percent ||
         s.max_abs_error_percent > L::documented_worst_percent + L::margin_worst_percent ||
         s.peak_memory_max_abs_error_percent > L::peak_memory_percent ||
         s.uncalibrated.mean_abs_error_percent > L::documented_uncalibrated_mean_percent + L::margin_mean_percent ||
         s.uncalibrated.max_abs_error_percent > L::documented_uncalibrated_worst_percent + L::margin_worst_percent ||
         (cv &&
          (cv->failed_cases > 0 ||
           cv->overall.held_out_mean_percent > L::documented_held_out_mean_percent + L::margin_held_out_mean_percent ||
           cv->within_family.held_out_mean_percent > L::documented_within_family_mean_percent + L::margin_held_out_mean_percent));
}

std::string validate_usage() {
  using L = ValidationLimits;
  using S = ServingLimits;
  return "usage: cutlab validate [CASES.json] [--serving SERVING.json | --no-serving] [--json] [--svg OUT.svg] [--check]\n"
         "  runs every case of CASES.json (default validation/cases.json) through the cost model and prints\n"
         "  predicted against measured, then the leave-one-source-out cross-validation (docs/validation.md),\n"
         "  then the serving cases of SERVING.json (default: serving-cases.json beside CASES.json, when it exists).\n"
         "  --check exits 4 when the limits of tests/test_validation.cpp fail: the mean |error| over the training\n"
         "  runs exceeds " +
         fixed(L::documented_mean_percent + L::margin_mean_percent, 1) + "%, a run exceeds " +
         fixed(L::documented_worst_percent + L::margin_worst_percent, 1) + "%, the cross-validated (held-out) mean exceeds " +
         fixed(L::documented_held_out_mean_percent + L::margin_held_out_mean_percent, 1) +
         "%,\n"
         "  a memory case misses its published figure, a peak-memory case is off by more than " +
         fixed(L::peak_memory_percent, 0) +
         "%, or a case does not evaluate;\n"
         "  serving cases: their mean |error| exceeds " +
         fixed(S::documented_mean_percent + S::margin_mean_percent, 1) + "%, one exceeds " +
         fixed(S::documented_worst_percent + S::margin_worst_percent, 1) + "%, or more than " +
         std::to_string(S::documented_failed_cases) +
         " do not evaluate.\n"
         "  Runs with \"calibrated\": false (added after the last fit) are held to their own documented errors.\n";
}

std::string calibrate_usage() {
  std::string keys, table;
  for (const CalibrationParam& p : calibration_params()) keys += (keys.empty() ? "" : ", ") + std::string(p.key);
  for (const FamilyFit& f : family_fits()) table += "  " + std::string(f.family) + ": --fit " + joined(f.keys) + "\n";
  return "usage: cutlab calibrate [CASES.json] [--family F]... [--fit key,key,...] [--max-evaluations N] [--json]\n"
         "       cutlab calibrate --serving SERVING.json [--family F]... [--pooled] [--fit key,...] [--max-evaluations N] "
         "[--cross-validate] [--json]\n"
         "  (--serving: each GPU family's serving efficiencies fitted to its serving cases; --pooled: one set fitted\n"
         "   to the named families' cases together, from the general priors, the values of a GPU without serving\n"
         "   cases; --cross-validate adds the leave-one-source-out, leave-one-model-out and leave-one-GPU-family-out\n"
         "   errors; --json: the fits and every case's held-out errors as one object; a family on another's die,\n"
         "   gb200 on b200's, takes that family's kernel rates and fits only host_seq_us, serving_seq_layer_us,\n"
         "   serving_moe_layer_us and serving_rank_cv)\n"
         "  fits the cluster efficiencies of each family (default: every family with training runs) to its\n"
         "  training runs: bounded Nelder–Mead on the mean |error %|, starting from the Efficiencies defaults.\n"
         "  keys: " +
         keys +
         ".\n"
         "  default keys: the family's entry below (core/validation.cpp family_fits()), every key for another family:\n" +
         table;
}

}  // namespace

int run_validate(const std::vector<std::string>& args) {
  std::string path = kDefaultCases, svg, serving_path;
  bool as_json = false, check = false, no_serving = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") as_json = true;
    else if (a == "--serving" && i + 1 < args.size()) serving_path = args[++i];
    else if (a == "--no-serving") no_serving = true;
    else if (a == "--check") check = true;
    else if (a == "--svg" && i + 1 < args.size()) svg = args[++i];
    else if (a == "--help" || a == "-h") return std::cout << validate_usage(), kOk;
    else if (a.rfind("--", 0) != 0 && path == kDefaultCases) path = a;
    else return std::cerr << "cutlab: unexpected argument " << a << "\n" << validate_usage(), kUsage;
  }
  std::vector<ValidationCase> cases;
  if (!read_cases(path, cases)) return std::ifstream(path) ? kInvalid : kUsage;
  // The serving cases: --serving FILE, else serving-cases.json beside the training cases when it exists.
  if (no_serving && !serving_path.empty()) return std::cerr << "cutlab: --serving and --no-serving exclude each other\n", kUsage;
  if (serving_path.empty() && !no_serving) {
    const size_t slash = path.find_last_of('/');
    const std::string beside = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "serving-cases.json";
    if (std::ifstream(beside)) serving_path = beside;
  }
  std::vector<ValidationCase> serving_cases;
  if (!serving_path.empty() && !read_cases(serving_path, serving_cases)) return std::ifstream(serving_path) ? kInvalid : kUsage;
  const ValidationSummary s = validate_cases(cases);
  const ValidationSummary serving = validate_cases(serving_cases);
  const Result<CrossValidation> cv = cross_validate(cases);
  if (!cv.ok()) {
    std::cerr << "cutlab: cannot cross-validate " << path << ":\n";
    for (const Error& e : cv.errors) std::cerr << "  " << e.path << ": " << e.message << "\n";
    return kInvalid;
  }

  if (!svg.empty()) {
    std::ofstream out(svg);
    if (!(out << scatter_svg(s))) {
      std::cerr << "cutlab: cannot write " << svg << "\n";
      return kUsage;
    }
  }
  if (as_json) {
    json j = summary_json(s);
    j["cross_validation"] = cross_validation_json(cv.value);
    if (!serving_path.empty()) j["serving"] = serving_json(serving, serving_cases);
    std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    Table t{{"case", "metric", "predicted", "measured", "error", "note"}, {}};
    for (const CaseResult& r : s.results) {
      std::string note;
      if (!r.ok)
        note = "does not evaluate: " + (r.errors.empty() ? std::string() : r.errors.front().path + " " + r.errors.front().message);
      else if (r.kind == CaseKind::Memory)
        note = r.within_resolution ? "exact to the published rounding" : "MISSES the published figure";
      else if (r.metric == Metric::PeakMemoryGiB)
        note = std::fabs(r.error_percent) <= ValidationLimits::peak_memory_percent ? "within the limit" : "OFF BY MORE THAN THE LIMIT";
      else if (!r.fits) note = "cutlab: does not fit in HBM";
      if (r.ok && r.kind == CaseKind::Training && !r.calibrated) note = "not calibrated" + (note.empty() ? "" : " · " + note);
      t.rows.push_back({r.id,
                        std::string(name_of(r.metric)) + " (" + unit_of(r.metric) +
                            (r.kind == CaseKind::Training ? ", " + std::string(name_of(r.dtype)) : std::string()) + ")",
                        r.ok ? number(r.predicted) : "-", number(r.measured), r.ok ? signed_pct(r.error_percent) : "-", note});
    }
    std::cout << "cutlab validate · " << path << "\n" << t.render() << "\n";
    std::cout << "training runs: " << s.training_cases
              << (s.failed_cases ? " (+" + std::to_string(s.failed_cases) + " that do not evaluate)" : "") << " · mean |error| "
              << fixed(s.mean_abs_error_percent, 1) << "% · largest " << fixed(s.max_abs_error_percent, 1) << "% (" << s.worst_id
              << ")\n";
    for (const FamilyError& f : s.families)
      std::cout << "  " << f.family << ": " << f.cases << " runs · mean |error| " << fixed(f.mean_abs_error_percent, 1)
                << "% · largest " << fixed(f.max_abs_error_percent, 1) << "% (" << f.worst_id << ")\n";
    if (s.uncalibrated.cases > 0)
      std::cout << "runs added after the calibration: " << s.uncalibrated.cases << " · mean |error| "
                << fixed(s.uncalibrated.mean_abs_error_percent, 1) << "% · largest " << fixed(s.uncalibrated.max_abs_error_percent, 1)
                << "% (" << s.uncalibrated.worst_id << ")\n";
    std::cout << "memory cases: " << s.memory_cases << (s.memory_exact ? ", all exact to the published rounding\n" : ", SOME MISS\n");
    if (s.peak_memory_cases > 0)
      std::cout << "peak memory cases: " << s.peak_memory_cases << " · largest |error| "
                << fixed(s.peak_memory_max_abs_error_percent, 1) << "% (" << s.peak_memory_worst_id << "; limit "
                << fixed(ValidationLimits::peak_memory_percent, 0) << "%)\n";
    print_cross_validation(cv.value);
    if (!serving_path.empty()) print_serving(serving, serving_cases, serving_path);
    if (!svg.empty()) std::cout << "wrote " << svg << "\n";
  }
  return check && (over_limits(s, &cv.value) || (!serving_path.empty() && serving_over_limits(serving))) ? kOverLimit : kOk;
}

namespace {

// One family's fit as JSON: its cases, the start and fitted values of `params` (in their units), the
// errors and the evaluations.
json calibration_json(const std::string& family, const CalibrationResult& c, const std::vector<CalibrationParam>& params) {
  json fitted = json::object(), start = json::object();
  for (const CalibrationParam& p : params) fitted[p.key] = c.fitted.*(p.member) / p.unit, start[p.key] = c.start.*(p.member) / p.unit;
  return {{"family", family},
          {"cases", c.case_ids},
          {"start", start},
          {"fitted", fitted},
          {"start_mape_percent", c.start_mape_percent},
          {"fitted_mape_percent", c.fitted_mape_percent},
          {"fitted_max_abs_percent", c.fitted_max_abs_percent},
          {"evaluations", c.evaluations}};
}

// A family's serving priors as JSON: each key's prior, its spread and where it comes from.
json serving_priors_json(const std::string& family) {
  json priors = json::object();
  for (const CalibrationParam& p : serving_calibration_params(family))
    priors[p.key] = {{"prior", p.prior / p.unit}, {"prior_sd", p.prior_sd / p.unit}, {"source", serving_prior_source(family, p.key)}};
  return priors;
}

// The serving cross-validation as JSON: the summary and every case's in-sample and held-out errors.
json serving_cross_validation_json(const ServingCrossValidation& cv) {
  json cases = json::array();
  for (const ServingHeldOut& h : cv.cases)
    cases.push_back({{"id", h.id},
                     {"model", h.model},
                     {"family", h.family},
                     {"source_group", h.source_group},
                     {"measured", h.measured},
                     {"in_sample_error_percent", h.in_sample_error_percent},
                     {"source_out_error_percent", h.source_out_error_percent},
                     {"model_out_error_percent", h.model_out_error_percent},
                     {"gpu_out_error_percent", h.gpu_out_error_percent}});
  return {{"cases", cases},
          {"in_sample_mean_percent", cv.in_sample_mean_percent},
          {"in_sample_max_percent", cv.in_sample_max_percent},
          {"source_out_mean_percent", cv.source_out_mean_percent},
          {"source_out_max_percent", cv.source_out_max_percent},
          {"model_out_mean_percent", cv.model_out_mean_percent},
          {"model_out_max_percent", cv.model_out_max_percent},
          {"gpu_out_mean_percent", cv.gpu_out_mean_percent},
          {"gpu_out_max_percent", cv.gpu_out_max_percent}};
}

// `cutlab calibrate --serving FILE`: each GPU family's serving efficiencies fitted to its serving cases
// (core/validation.h calibrate_serving), or with --pooled one set fitted to the named families' cases together
// (labelled "pooled", from the general priors: what a GPU without serving cases takes, core/presets.cpp),
// then with --cross-validate the held-out errors; --json: both as one object, {"families": [...],
// "cross_validation": {...}} (the latter with --cross-validate).
int run_serving_calibrate(const std::string& path, std::vector<std::string> families, CalibrationOptions opt, bool cross, bool pooled,
                          bool as_json) {
  std::vector<ValidationCase> cases;
  if (!read_cases(path, cases)) return std::ifstream(path) ? kInvalid : kUsage;
  if (families.empty())
    for (const ValidationCase& c : cases)
      if (c.kind == CaseKind::Serving && std::find(families.begin(), families.end(), c.family) == families.end())
        families.push_back(c.family);
  // The groups fitted: each family's cases, or (--pooled) the named families' cases as one group.
  std::vector<std::pair<std::string, std::vector<const ValidationCase*>>> fitted_groups;
  for (const std::string& fam : families) {
    if (!pooled || fitted_groups.empty()) fitted_groups.push_back({pooled ? "pooled" : fam, {}});
    const size_t before = fitted_groups.back().second.size();
    for (const ValidationCase& c : cases)
      if (c.kind == CaseKind::Serving && c.family == fam) fitted_groups.back().second.push_back(&c);
    if (fitted_groups.back().second.size() == before)
      return std::cerr << "cutlab: no serving case has family '" << fam << "'\n", kInvalid;
  }
  json fits = json::array();
  for (const auto& [fam, mine] : fitted_groups) {
    CalibrationOptions o = opt;
    // A pooled group has no family of its own (shared_family is empty): it starts from the general priors.
    o.start = serving_fit_start(pooled ? Efficiencies{} : mine.front()->config.cluster.efficiency, shared_family(mine));
    // A family on another's die: that family's kernel rates (its preset, the cases' cluster), the rest fitted.
    const std::string die = pooled ? "" : serving_die_family(fam);
    const auto die_case = std::find_if(cases.begin(), cases.end(), [&](const ValidationCase& c) {
      return !die.empty() && c.kind == CaseKind::Serving && c.family == die;
    });
    if (die_case != cases.end()) {
      o.start = with_kernel_rates(o.start, die_case->config.cluster.efficiency);
      if (o.fit.empty()) o.fit = serving_fit_keys(fam);
    }
    const Result<CalibrationResult> r = calibrate_serving(mine, o);
    if (!r.ok()) {
      for (const Error& e : r.errors) std::cerr << "cutlab: " << e.path << ": " << e.message << "\n";
      return kInvalid;
    }
    const CalibrationResult& c = r.value;
    if (as_json) {
      fits.push_back(calibration_json(fam, c, serving_calibration_params(fam)));
      fits.back()["priors"] = serving_priors_json(fam);
      continue;
    }
    std::cout << "family " << fam << ": " << c.case_ids.size() << " serving cases, " << c.evaluations << " evaluations"
              << (die_case != cases.end() ? ", the kernel rates of " + die + " (the same die), fit " + joined(o.fit) : "") << "\n";
    std::cout << "  mean |error| " << fixed(c.start_mape_percent, 2) << "% at the start → " << fixed(c.fitted_mape_percent, 2)
              << "% fitted (largest " << fixed(c.fitted_max_abs_percent, 2) << "%)\n";
    Table t{{"efficiency", "start", "fitted", "prior", "fitted against it", "bounds", "prior from"}, {}};
    for (const CalibrationParam& p : serving_calibration_params(fam))
      t.rows.push_back({p.key, number(c.start.*(p.member) / p.unit), number(c.fitted.*(p.member) / p.unit),
                        number(p.prior / p.unit) + " ± " + number(p.prior_sd / p.unit), against_prior(c.fitted.*(p.member), p),
                        number(p.lo / p.unit) + " – " + number(p.hi / p.unit), serving_prior_source(fam, p.key)});
    std::cout << t.render() << "\n";
  }
  if (as_json) {
    json out = {{"families", fits}};
    if (cross) out["cross_validation"] = serving_cross_validation_json(serving_cross_validate(cases, opt));
    return std::cout << out.dump(1) << "\n", kOk;
  }
  if (!cross) return kOk;
  const ServingCrossValidation cv = serving_cross_validate(cases, opt);
  std::cout << "serving cross-validation (" << cv.cases.size() << " cases): in-sample mean " << fixed(cv.in_sample_mean_percent, 1)
            << "% (largest " << fixed(cv.in_sample_max_percent, 1) << "%) · leave one source out "
            << fixed(cv.source_out_mean_percent, 1) << "% (largest " << fixed(cv.source_out_max_percent, 1)
            << "%) · leave one model out " << fixed(cv.model_out_mean_percent, 1) << "% (largest "
            << fixed(cv.model_out_max_percent, 1) << "%) · leave one GPU family out " << fixed(cv.gpu_out_mean_percent, 1)
            << "% (largest " << fixed(cv.gpu_out_max_percent, 1) << "%)\n";
  constexpr double ServingHeldOut::*errors[] = {&ServingHeldOut::in_sample_error_percent, &ServingHeldOut::source_out_error_percent,
                                                &ServingHeldOut::model_out_error_percent, &ServingHeldOut::gpu_out_error_percent};
  auto table = [&](auto key, const char* what) {
    std::vector<std::string> groups;
    for (const ServingHeldOut& h : cv.cases)
      if (std::find(groups.begin(), groups.end(), key(h)) == groups.end()) groups.push_back(key(h));
    Table t{{what, "cases", "in-sample mean", "largest", "source out mean", "largest", "model out mean", "largest", "GPU out mean",
             "largest"},
            {}};
    for (const std::string& g : groups) {
      double n = 0, sum[4] = {}, most[4] = {};
      for (const ServingHeldOut& h : cv.cases) {
        if (key(h) != g) continue;
        n += 1;
        for (int i = 0; i < 4; ++i) sum[i] += std::fabs(h.*errors[i]), most[i] = std::max(most[i], std::fabs(h.*errors[i]));
      }
      std::vector<std::string> row{g, std::to_string(int(n))};
      for (int i = 0; i < 4; ++i) row.push_back(fixed(sum[i] / n, 1) + "%"), row.push_back(fixed(most[i], 1) + "%");
      t.rows.push_back(row);
    }
    std::cout << t.render();
  };
  table([](const ServingHeldOut& h) { return h.source_group; }, "source");
  table([](const ServingHeldOut& h) { return h.model; }, "model");
  table([](const ServingHeldOut& h) { return h.family; }, "GPU");
  return kOk;
}

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
  std::string path = kDefaultCases;
  std::vector<std::string> families;
  CalibrationOptions opt;
  bool as_json = false, serving_cv = false, pooled = false;
  std::string serving_path;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") as_json = true;
    else if (a == "--family" && i + 1 < args.size()) families.push_back(args[++i]);
    else if (a == "--fit" && i + 1 < args.size()) {
      std::stringstream ss(args[++i]);
      for (std::string k; std::getline(ss, k, ',');)
        if (!k.empty()) opt.fit.push_back(k);
    } else if (a == "--max-evaluations" && i + 1 < args.size()) {
      opt.max_evaluations = std::atoi(args[++i].c_str());
      if (opt.max_evaluations < 1) return std::cerr << "cutlab: --max-evaluations must be positive\n", kUsage;
    } else if (a == "--serving" && i + 1 < args.size()) serving_path = args[++i];
    else if (a == "--cross-validate") serving_cv = true;
    else if (a == "--pooled") pooled = true;
    else if (a == "--help" || a == "-h") return std::cout << calibrate_usage(), kOk;
    else if (a.rfind("--", 0) != 0 && path == kDefaultCases) path = a;
    else return std::cerr << "cutlab: unexpected argument " << a << "\n" << calibrate_usage(), kUsage;
  }
  if (pooled && serving_path.empty()) return std::cerr << "cutlab: --pooled fits serving cases: give --serving FILE\n", kUsage;
  if (!serving_path.empty()) return run_serving_calibrate(serving_path, families, opt, serving_cv, pooled, as_json);
  std::vector<ValidationCase> cases;
  if (!read_cases(path, cases)) return std::ifstream(path) ? kInvalid : kUsage;
  if (families.empty())
    for (const ValidationCase& c : cases)
      if (c.kind == CaseKind::Training && std::find(families.begin(), families.end(), c.family) == families.end())
        families.push_back(c.family);

  json out = json::array();
  for (const std::string& fam : families) {
    CalibrationOptions family_opt = opt;
    if (family_opt.fit.empty()) family_opt.fit = fit_keys(fam);
    const Result<CalibrationResult> r = calibrate_family(cases, fam, family_opt);
    if (!r.ok()) {
      for (const Error& e : r.errors) std::cerr << "cutlab: " << e.path << ": " << e.message << "\n";
      return kInvalid;
    }
    const CalibrationResult& c = r.value;
    if (as_json) {
      json fit = calibration_json(fam, c, calibration_params());
      fit["fit"] = family_opt.fit;
      out.push_back(fit);
      continue;
    }
    std::cout << "family " << fam << ": " << c.case_ids.size() << " training runs, " << c.evaluations << " evaluations, fit "
              << joined(family_opt.fit) << "\n";
    std::cout << "  mean |error| " << fixed(c.start_mape_percent, 2) << "% at the start → " << fixed(c.fitted_mape_percent, 2)
              << "% fitted (largest " << fixed(c.fitted_max_abs_percent, 2) << "%)\n";
    Table t{{"efficiency", "start", "fitted", "bounds", "fitted on a bound"}, {}};
    for (const CalibrationParam& p : calibration_params())
      t.rows.push_back({p.key, number(c.start.*(p.member) / p.unit), number(c.fitted.*(p.member) / p.unit),
                        number(p.lo / p.unit) + " – " + number(p.hi / p.unit), on_bound(c.fitted.*(p.member), p)});
    std::cout << t.render();
    std::cout << "  for core/presets.cpp:\n    Efficiencies e;\n";
    for (const CalibrationParam& p : calibration_params())
      std::cout << "    e." << p.member_name << " = " << fixed(c.fitted.*(p.member) / p.unit, 3)
                << (p.unit == 1e-6  ? " * units::us"
                    : p.unit == 1e9 ? " * units::GBps"
                                    : "")
                << ";\n";
    std::cout << "\n";
  }
  if (as_json) std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  return kOk;
}

}  // namespace cutlab::cli
