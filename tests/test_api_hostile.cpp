// Hostile input to the string API and the validation-cases reader: wrong types in every field,
// huge and non-finite numbers, deep nesting, non-objects, broken UTF-8. The core is built without
// exceptions and with JSON_NOEXCEPTION, so a would-be throw anywhere on these paths aborts this
// test; every call must instead answer JSON with "ok" and, when not ok, a list of errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/api.h"
#include "core/json_io.h"
#include "core/schedule.h"
#include "core/validation.h"
#include "tests/helpers.h"

using nlohmann::json;

namespace {

using cutlab::test::has_null;

// Raw JSON text substituted for one value; kept as text so that deep nesting never becomes a
// deep json object in the test itself.
std::vector<std::string> hostile_values() {
  return {"null",
          "true",
          "false",
          "\"\"",
          "\"x\"",
          "\"\\u0000\"",
          "[]",
          "{}",
          "[1, 2]",
          "{\"a\": 1}",
          "0",
          "-1",
          "0.5",
          "-0.0",
          "1e308",
          "-1e308",
          "1e400",
          "-1e400",
          "2147483647",
          "2147483648",
          "-2147483649",
          "9223372036854775807",
          "-9223372036854775808",
          "18446744073709551615",
          "123456789012345678901234567890",
          std::string(200, '[') + std::string(200, ']')};
}

std::string deep(int depth, const std::string& open, const std::string& close) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

// "a b c" → {"a", "b", "c"}.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The text of `doc` with its "@@HOSTILE@@" string replaced by the raw text `value`.
std::string substitute(const json& doc, const std::string& value) {
  std::string text = doc.dump();
  const std::string marker = "\"@@HOSTILE@@\"";
  text.replace(text.find(marker), marker.size(), value);
  return text;
}

// `doc` with the value at `path` (object keys) replaced by the raw text `value`.
std::string with_value(json doc, const std::vector<std::string>& path, const std::string& value) {
  json* at = &doc;
  for (const std::string& k : path) at = &(*at)[k];
  *at = "@@HOSTILE@@";
  return substitute(doc, value);
}

// Every answer is a JSON object with a boolean "ok"; a success holds no NaN or infinity, a
// failure lists at least one error, each with a code, a path and a message.
void check_answer(const std::string& out, const std::string& input) {
  INFO("input: " << input.substr(0, 300));
  INFO("output: " << out.substr(0, 300));
  const json j = json::parse(out, nullptr, false);
  REQUIRE(j.is_object());
  REQUIRE(j.contains("ok"));
  REQUIRE(j["ok"].is_boolean());
  if (j["ok"].get<bool>()) {
    REQUIRE(j.contains("result"));
    REQUIRE_FALSE(has_null(j["result"]));  // nlohmann writes NaN and infinities as null
    return;
  }
  REQUIRE(j.contains("errors"));
  REQUIRE(j["errors"].is_array());
  REQUIRE_FALSE(j["errors"].empty());
  for (const json& e : j["errors"]) {
    REQUIRE(e.is_object());
    REQUIRE(e.contains("code"));
    REQUIRE(e.contains("path"));
    REQUIRE(e.contains("message"));
  }
}

void check_failure(const std::string& out, const std::string& input) {
  check_answer(out, input);
  INFO("input: " << input.substr(0, 300));
  REQUIRE(json::parse(out, nullptr, false)["ok"] == false);
}

const json kBase = {{"model", "llama3-8b"},
                    {"cluster", {{"preset", "dgx-h100"}, {"gpus", 8}}},
                    {"plan", {{"tp", 8}}},
                    {"workload", {{"seq_len", 4096}, {"global_batch", 8}}}};

}  // namespace

TEST_CASE("the API answers documents that are not config objects with errors", "[api][hostile]") {
  const std::vector<std::string> inputs = {"",
                                           " ",
                                           "{",
                                           "}",
                                           "[",
                                           "null",
                                           "true",
                                           "0",
                                           "-1e400",
                                           "\"llama3-8b\"",
                                           "[]",
                                           "[{}]",
                                           "{}",
                                           "{\"model\": }",
                                           "{\"model\": \"llama3-8b\",}",
                                           "{} {}",
                                           "\xff\xfe",
                                           "{\"model\": \"\xff\"}",
                                           "{\"model\": \"llama3-8b\"\xc3}",
                                           std::string("{\"model\": \"a\0b\"}", sizeof "{\"model\": \"a\0b\"}" - 1),
                                           "{\"model\": \"\\ud800\"}"};
  // Deep nesting: nlohmann parses and frees without recursion. Every entry point reads its input
  // through the same parser, so evaluate stands for all of them here.
  for (const std::string& in :
       {deep(100000, "[", "]"), deep(100000, "{\"a\":", "}").replace(100000 * 5, 0, "1"), deep(100000, "[", "")})
    check_failure(cutlab::api::evaluate_json(in), in);
  for (const std::string& in : inputs) {
    check_failure(cutlab::api::evaluate_json(in), in);
    check_failure(cutlab::api::schedule_json(in), in);
    check_failure(cutlab::api::timeline_json(in, 800, 0), in);
    check_failure(cutlab::api::gpus_json(in, 0, 8), in);
    check_failure(cutlab::api::gpu_json(in, 0), in);
    check_failure(cutlab::api::search_json(in, 10), in);
    check_failure(cutlab::api::options_json(in), in);
  }
}

TEST_CASE("the API answers a hostile value in any field of any section with errors, not an abort", "[api][hostile]") {
  // Every field the config reads (its JSON with the defaults, so a new field is swept as soon as it
  // exists), plus the keys that select presets and one unknown key.
  const json defaults = cutlab::to_json(cutlab::Config{});
  auto keys_of = [](const json& section, std::vector<std::string> extra) {
    for (const auto& [k, v] : section.items())
      if (!v.is_object()) extra.push_back(k);
    return extra;
  };
  const std::vector<std::string> model_keys = keys_of(defaults["model"], {"preset", "hf_config", "bogus"});
  const std::vector<std::string> cluster_keys = keys_of(defaults["cluster"], {"preset", "efficiency", "bogus"});
  const std::vector<std::string> efficiency_keys = keys_of(defaults["cluster"]["efficiency"], {"bogus"});
  const std::vector<std::string> plan_keys = keys_of(defaults["plan"], {"bogus"});
  const std::vector<std::string> workload_keys = keys_of(defaults["workload"], {"bogus"});
  REQUIRE(plan_keys.size() > 30);  // the sweep reaches today's fields (tp … moe_shared_expert_overlap)
  const std::vector<std::string> hf_keys = words(
      "num_hidden_layers hidden_size num_attention_heads num_key_value_heads vocab_size head_dim intermediate_size hidden_act "
      "tie_word_embeddings num_local_experts num_experts_per_tok moe_intermediate_size n_shared_experts "
      "shared_expert_intermediate_size first_k_dense_replace kv_lora_rank q_lora_rank qk_rope_head_dim v_head_dim _name_or_path "
      "model_type");

  json with_model_object = kBase;
  with_model_object["model"] = {{"preset", "llama3-8b"}};
  json with_hf = kBase;
  with_hf["model"] = {{"hf_config",
                       {{"num_hidden_layers", 32},
                        {"hidden_size", 4096},
                        {"num_attention_heads", 32},
                        {"num_key_value_heads", 8},
                        {"vocab_size", 128256},
                        {"intermediate_size", 14336},
                        {"hidden_act", "silu"},
                        {"num_local_experts", 8},
                        {"num_experts_per_tok", 2},
                        {"kv_lora_rank", 512},
                        {"qk_rope_head_dim", 64}}}};
  json with_efficiency = kBase;
  with_efficiency["cluster"]["efficiency"] = json::object();
  json infer = kBase;
  infer["workload"] = {{"mode", "infer"}, {"batch", 4}};

  struct Target {
    const json* doc;
    std::vector<std::string> prefix;
    const std::vector<std::string>* keys;
  };
  const std::vector<Target> targets = {{&with_model_object, {"model"}, &model_keys},
                                       {&kBase, {"cluster"}, &cluster_keys},
                                       {&with_efficiency, {"cluster", "efficiency"}, &efficiency_keys},
                                       {&kBase, {"plan"}, &plan_keys},
                                       {&kBase, {"workload"}, &workload_keys},
                                       {&infer, {"workload"}, &workload_keys},
                                       {&with_hf, {"model", "hf_config"}, &hf_keys}};
  const std::vector<std::string> values = hostile_values();
  int calls = 0, failures = 0;
  for (const Target& t : targets)
    for (const std::string& key : *t.keys)
      for (size_t v = 0; v < values.size(); ++v) {
        std::vector<std::string> path = t.prefix;
        path.push_back(key);
        const std::string in = with_value(*t.doc, path, values[v]);
        const std::string out = cutlab::api::evaluate_json(in);
        check_answer(out, in);
        failures += json::parse(out)["ok"] == false;
        ++calls;
        // The other entry points on a sample (search is the slow one).
        if ((calls % 5) == 0) {
          check_answer(cutlab::api::schedule_json(in), in);
          check_answer(cutlab::api::timeline_json(in, 800, 0), in);
          check_answer(cutlab::api::gpus_json(in, 0, 8), in);
          check_answer(cutlab::api::gpu_json(in, 7), in);
          check_answer(cutlab::api::options_json(in), in);
        }
        if ((calls % 37) == 0) check_answer(cutlab::api::search_json(in, 3), in);
      }
  // Whole sections replaced by hostile values.
  for (const char* section : {"model", "cluster", "plan", "workload"})
    for (const std::string& value : values) {
      const std::string in = with_value(kBase, {section}, value);
      check_answer(cutlab::api::evaluate_json(in), in);
      check_answer(cutlab::api::search_json(in, 3), in);
      check_answer(cutlab::api::options_json(in), in);
    }
  CHECK(failures > calls / 2);  // most are errors; a few values are valid for some keys (e.g. "dp": 1)
}

TEST_CASE("the API's numeric arguments are checked, whatever their value", "[api][hostile]") {
  const std::string ok = kBase.dump();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double w : {nan, inf, -inf, -1.0, 0.0, 1e300, 199.0})
    for (double h : {nan, inf, -inf, -1.0, 1.0, 1e300}) check_failure(cutlab::api::timeline_json(ok, w, h), ok);
  for (int first : {INT_MIN, -1, 8, INT_MAX})
    for (int count : {INT_MIN, -1, 0, 1, INT_MAX}) check_failure(cutlab::api::gpus_json(ok, first, count), ok);
  for (int count : {INT_MIN, -1, 0, 4097, INT_MAX}) check_failure(cutlab::api::gpus_json(ok, 0, count), ok);
  for (int rank : {INT_MIN, -1, 8, INT_MAX}) check_failure(cutlab::api::gpu_json(ok, rank), ok);
  for (int top : {INT_MIN, -1, 0, 1, INT_MAX}) check_answer(cutlab::api::search_json(ok, top), ok);
}

TEST_CASE("the validation-cases reader answers hostile files with errors", "[validation][hostile]") {
  std::vector<std::string> inputs = {"", "[]", "null", "{}", "{\"cases\": {}}", "{\"cases\": 1}", "{\"cases\": [1, \"x\", null, []]}",
                                     "{\"cases\": [{}], \"bogus\": 1}", "\xff", deep(100000, "[", "]"),
                                     // a memory case copies its plan: deep nesting there must not overflow the stack
                                     "{\"cases\": [{\"kind\": \"memory\", \"plan\": " + deep(100000, "[", "]") + "}]}"};
  for (const std::string& v : hostile_values()) {
    inputs.push_back("{\"cases\": [" + v + "]}");
    for (const char* key : {"id", "family", "kind", "metric", "measured", "resolution", "num_params", "dp_shards", "source", "quote",
                            "settings_note", "config", "plan", "workload"}) {
      json c = {{"id", "x"},      {"family", "f"}, {"kind", "training"},   {"metric", "mfu_percent"},
                {"measured", 40}, {"source", "s"}, {"settings_note", "n"}, {"config", kBase}};
      c[key] = "@@HOSTILE@@";
      inputs.push_back(substitute(json{{"cases", json::array({c})}}, v));
    }
  }
  for (const std::string& in : inputs) {
    INFO("input: " << in.substr(0, 300));
    const cutlab::Result<std::vector<cutlab::ValidationCase>> r = cutlab::cases_from_json(in);
    if (in.empty() || in[0] != '{') CHECK_FALSE(r.ok());
    for (const cutlab::Error& e : r.errors) CHECK_FALSE(e.message.empty());
  }
}

// ---- issue 15: each reproducer, with the error at the path of the field the user wrote ----------

namespace {

// The paths of the errors of a failed answer ({} when it succeeded).
std::vector<std::string> error_paths(const std::string& out) {
  const json j = json::parse(out, nullptr, false);
  std::vector<std::string> paths;
  if (j.is_object() && j.contains("errors"))
    for (const json& e : j["errors"]) paths.push_back(e["path"].get<std::string>());
  return paths;
}

// The message of the first error at `path` ("" when none).
std::string message_at(const std::string& out, const std::string& path) {
  const json j = json::parse(out, nullptr, false);
  if (j.is_object() && j.contains("errors"))
    for (const json& e : j["errors"])
      if (e["path"] == path) return e["message"].get<std::string>();
  return "";
}

bool is_ok(const std::string& out) { return json::parse(out, nullptr, false).value("ok", false); }

}  // namespace

TEST_CASE("a global batch that would simulate more pairs than the limit is an error at /workload/global_batch",
          "[api][hostile][limits]") {
  json c = kBase;
  c["cluster"]["gpus"] = 16;
  c["plan"] = {{"tp", 8}, {"pp", 2}};
  // pp 2 × 1 chunk × 65,536 micro-batches = 131,072 pairs: the limit itself is accepted
  c["workload"]["global_batch"] = 65536;
  REQUIRE(is_ok(cutlab::api::evaluate_json(c.dump())));
  for (long long gb : {65538LL, 1000000LL, 2000000000LL}) {
    c["workload"]["global_batch"] = gb;
    const std::string out = cutlab::api::evaluate_json(c.dump());
    INFO(out.substr(0, 400));
    REQUIRE(error_paths(out) == std::vector<std::string>{"/workload/global_batch"});
    CHECK(message_at(out, "/workload/global_batch").find(std::to_string(cutlab::k_max_schedule_pairs)) != std::string::npos);
    CHECK(error_paths(cutlab::api::timeline_json(c.dump(), 800, 0)) == std::vector<std::string>{"/workload/global_batch"});
    CHECK(error_paths(cutlab::api::schedule_json(c.dump())) == std::vector<std::string>{"/workload/global_batch"});
  }
  // DualPipe counts its two directions as chunks
  c["plan"] = {{"tp", 8}, {"pp", 2}, {"schedule", "dualpipe"}};
  c["workload"]["global_batch"] = 65536 + 2;
  CHECK(error_paths(cutlab::api::evaluate_json(c.dump())) == std::vector<std::string>{"/workload/global_batch"});
}

TEST_CASE("search without a global batch says so, at /workload/global_batch", "[api][hostile][search]") {
  json c = kBase;
  c["workload"].erase("global_batch");
  const std::string out = cutlab::api::search_json(c.dump(), 10);
  REQUIRE(error_paths(out) == std::vector<std::string>{"/workload/global_batch"});
  CHECK(message_at(out, "/workload/global_batch").find("search needs the global batch") != std::string::npos);
}

TEST_CASE("a huge hidden size is one error at /model/hidden, never an int overflow of 4h", "[api][hostile][ub]") {
  json hf = {{"hidden_act", "silu"},    {"hidden_size", 1073741824}, {"num_attention_heads", 32},
             {"num_hidden_layers", 32}, {"num_key_value_heads", 8},  {"vocab_size", 128256}};
  json c = kBase;
  c["model"] = {{"hf_config", hf}};
  CHECK(error_paths(cutlab::api::evaluate_json(c.dump())) == std::vector<std::string>{"/model/hidden"});
  c["model"] = {{"layers", 32}, {"hidden", 1900000000}, {"heads", 32}, {"vocab", 1000}};
  CHECK(error_paths(cutlab::api::evaluate_json(c.dump())) == std::vector<std::string>{"/model/hidden"});
}

TEST_CASE("integers beyond 2^31 are errors at their path, never wrapped", "[api][hostile][ub]") {
  json c = kBase;
  c["plan"]["zero"] = 4294967297LL;
  CHECK(error_paths(cutlab::api::evaluate_json(c.dump())) == std::vector<std::string>{"/plan/zero"});
  c = kBase;
  c["cluster"]["gpus"] = 16;
  c["plan"] = {{"tp", 8}, {"pp", 2}, {"layers_per_stage", {4294967336LL, 40}}};
  const std::vector<std::string> lps = error_paths(cutlab::api::evaluate_json(c.dump()));
  CHECK(std::find(lps.begin(), lps.end(), "/plan/layers_per_stage/0") != lps.end());
  json hf = {{"hidden_act", "silu"},
             {"hidden_size", 4096},
             {"intermediate_size", 14336},
             {"num_attention_heads", 32},
             {"num_hidden_layers", 4294967328LL},
             {"num_key_value_heads", 8},
             {"vocab_size", 128256}};
  c = kBase;
  c["model"] = {{"hf_config", hf}};
  CHECK(error_paths(cutlab::api::evaluate_json(c.dump())) == std::vector<std::string>{"/model/hf_config/num_hidden_layers"});
}

TEST_CASE("every cluster quantity outside its documented range is an error at its own path", "[api][hostile][ranges]") {
  const char* fields[] = {"hbm_GiB", "hbm_GBps", "bf16_TFLOPs", "fp8_TFLOPs", "nvlink_GBps", "scaleout_GBps"};
  for (const char* f : fields)
    for (double v : {5e-324, 1e-320, 1e-6, -1.0, -1e308, 1e290, 1e308}) {
      json c = kBase;
      c["cluster"][f] = v;
      const std::string out = cutlab::api::evaluate_json(c.dump());
      INFO(f << " = " << v << ": " << out.substr(out.find("\"errors\""), 300));
      CHECK(error_paths(out) == std::vector<std::string>{std::string("/cluster/") + f});
    }
  for (const char* f : {"nvlink_latency_us", "scaleout_latency_us", "reserved_GiB"})
    for (double v : {-1e-3, -1.0, 1e290}) {  // (-1e-320 µs is -0 s: accepted, harmless)
      json c = kBase;
      c["cluster"][f] = v;
      const std::string out = cutlab::api::evaluate_json(c.dump());
      INFO(f << " = " << v);
      CHECK(error_paths(out) == std::vector<std::string>{std::string("/cluster/") + f});
    }
  // in range, the answer is finite everywhere (check_answer: no null from NaN or inf)
  for (const char* f : fields)
    for (double v : {1e-3, 1e6}) {
      json c = kBase;
      c["cluster"][f] = v;
      const std::string out = cutlab::api::evaluate_json(c.dump());
      check_answer(out, c.dump());
    }
}

TEST_CASE("a serving context too long is reported at the longer of prompt_len and output_len", "[api][hostile]") {
  json c = kBase;
  c["workload"] = {{"mode", "infer"}, {"batch", 1}, {"prompt_len", 1024}, {"output_len", 1e9}};
  CHECK(error_paths(cutlab::api::evaluate_json(c.dump())) == std::vector<std::string>{"/workload/output_len"});
  c["workload"] = {{"mode", "infer"}, {"batch", 1}, {"prompt_len", 100000000}, {"output_len", 16}};
  CHECK(error_paths(cutlab::api::evaluate_json(c.dump())) == std::vector<std::string>{"/workload/prompt_len"});
}

TEST_CASE("strict JSON: a NUL byte, a key twice or nesting too deep is a parse error with a path", "[api][hostile][json]") {
  const std::string ok = kBase.dump();
  REQUIRE(is_ok(cutlab::api::evaluate_json(ok)));
  const std::string nul = ok + std::string(1, '\0') + "GARBAGE{{{";
  for (const std::string& out : {cutlab::api::evaluate_json(nul), cutlab::api::schedule_json(nul), cutlab::api::search_json(nul, 3),
                                 cutlab::api::options_json(nul), cutlab::api::timeline_json(nul, 800, 0)}) {
    INFO(out.substr(0, 300));
    REQUIRE(error_paths(out) == std::vector<std::string>{""});
    CHECK(message_at(out, "").find("NUL byte at offset " + std::to_string(ok.size())) != std::string::npos);
  }
  CHECK_FALSE(is_ok(cutlab::api::evaluate_json(ok + " x")));  // trailing bytes
  // the second of two equal keys, at its JSON pointer (RFC 6901 escapes)
  std::string dup = ok;
  dup.replace(dup.find("\"tp\":8"), 6, "\"tp\":8,\"tp\":4");
  CHECK(error_paths(cutlab::api::evaluate_json(dup)) == std::vector<std::string>{"/plan/tp"});
  CHECK(error_paths(cutlab::api::evaluate_json(R"({"model": {"hf_config": {"a/b": [0, {"x~": 1, "x~": 2}]}}})")) ==
        std::vector<std::string>{"/model/hf_config/a~1b/1/x~0"});
  // the same key in two objects is fine
  CHECK(is_ok(cutlab::api::evaluate_json(R"({"model": {"preset": "llama3-8b"}, "cluster": {"preset": "dgx-h100", "gpus": 8},
      "plan": {"tp": 8}, "workload": {"seq_len": 4096, "global_batch": 8}})")));
  // nesting: 64 levels are read (and rejected by the reader), 65 are a parse error
  const std::string deep64 = "{\"model\": " + deep(63, "[", "]") + "}";
  const std::string deep65 = "{\"model\": " + deep(64, "[", "]") + "}";
  const std::vector<std::string> p64 = error_paths(cutlab::api::evaluate_json(deep64));
  CHECK(std::find(p64.begin(), p64.end(), "/model") != p64.end());
  const std::string out65 = cutlab::api::evaluate_json(deep65);
  CHECK(message_at(out65, error_paths(out65).at(0)).find("nested deeper than 64") != std::string::npos);
}
