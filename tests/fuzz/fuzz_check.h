// fuzz_check.h: what every input must give, whatever it is (issue 15): each façade call answers one
// JSON document {"ok": true, "result": …} or {"ok": false, "errors": [{code, path, message}, …]}; an
// answer with ok true holds no null (a NaN or infinity printed by nlohmann) and its step and latency
// figures are finite and non-negative; errors each have a path beginning with '/' (or empty for the
// document) and a message. Nothing throws (-fno-exceptions), nothing aborts. Used by the libFuzzer
// target (fuzz_api.cpp, scripts/fuzz) and by the replay test over tests/fuzz/corpus in ctest.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace cutlab::fuzz {

// Runs `text` through the façade (evaluate, options, gpus, the three figures, balance); returns an
// empty string when every answer keeps the rules above, else what broke (the call and the rule).
std::string check_input(const std::string& text);

}  // namespace cutlab::fuzz
