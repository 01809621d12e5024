// toml.h: a strict reader for the subset of TOML that torchtitan's job configs use
// (torchtitan/models/*/train_configs/*.toml): [table] headers (dotted names allowed), key = value
// with bare keys, values that are basic or literal strings, integers, floats, booleans, and
// one-line arrays of those; # comments. Anything else (inline tables, multi-line strings or arrays,
// dates, keys named twice) is an error naming its line and key. Bounded: at most
// k_max_toml_bytes of text, k_max_toml_lines lines and k_max_toml_array values per array.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"

namespace cutlab {

inline constexpr std::size_t k_max_toml_bytes = 1 << 20;
inline constexpr int k_max_toml_lines = 20000;
inline constexpr int k_max_toml_array = 1024;

struct TomlDocument {
  nlohmann::json tables = nlohmann::json::object();  // {"table": {"key": value}}; keys before any header under ""
  std::map<std::string, int> lines;                  // "table.key" → its line (1-based)
};

// Errors carry the path "line N: [table] key".
Result<TomlDocument> parse_toml(const std::string& text);

}  // namespace cutlab
