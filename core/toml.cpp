#include "core/toml.h"

#include <cctype>
#include <cstdlib>

namespace cutlab {

namespace {

using nlohmann::json;

struct Cursor {
  const std::string& s;
  std::size_t i = 0;
  bool done() const { return i >= s.size(); }
  char peek() const { return done() ? '\0' : s[i]; }
  void skip_space() {
    while (!done() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
};

bool bare_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// A string starting at the cursor's quote; false with `problem` set when malformed.
bool read_string(Cursor& c, std::string& out, std::string& problem) {
  const char quote = c.s[c.i++];
  while (!c.done() && c.s[c.i] != quote) {
    char ch = c.s[c.i++];
    if (quote == '"' && ch == '\\') {
      if (c.done()) break;
      const char e = c.s[c.i++];
      switch (e) {
        case 'n': ch = '\n'; break;
        case 't': ch = '\t'; break;
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        default: problem = std::string("unsupported escape \\") + e; return false;
      }
    }
    out += ch;
  }
  if (c.done()) {
    problem = "unterminated string";
    return false;
  }
  ++c.i;
  return true;
}

bool read_scalar(Cursor& c, json& out, std::string& problem) {
  const char ch = c.peek();
  if (ch == '"' || ch == '\'') {
    std::string s;
    if (!read_string(c, s, problem)) return false;
    out = s;
    return true;
  }
  const std::size_t start = c.i;
  while (!c.done() && (bare_key_char(c.s[c.i]) || c.s[c.i] == '.' || c.s[c.i] == '+')) ++c.i;
  const std::string word = c.s.substr(start, c.i - start);
  if (word == "true" || word == "false") {
    out = word == "true";
    return true;
  }
  std::string digits;
  for (char d : word)
    if (d != '_') digits += d;
  if (digits.empty()) {
    problem = "expected a value";
    return false;
  }
  char* end = nullptr;
  if (digits.find_first_of(".eE") == std::string::npos) {
    const long long v = std::strtoll(digits.c_str(), &end, 10);
    if (*end == '\0' && v > -(1LL << 53) && v < (1LL << 53)) {
      out = v;
      return true;
    }
  } else {
    const double v = std::strtod(digits.c_str(), &end);
    if (*end == '\0' && v == v && v < 1e300 && v > -1e300) {
      out = v;
      return true;
    }
  }
  problem = "'" + word + "' is not a string, number or boolean";
  return false;
}

bool read_value(Cursor& c, json& out, std::string& problem) {
  if (c.peek() != '[') return read_scalar(c, out, problem);
  ++c.i;
  out = json::array();
  for (;;) {
    c.skip_space();
    if (c.peek() == ']') {
      ++c.i;
      return true;
    }
    if (c.done()) {
      problem = "an array must close on its line";
      return false;
    }
    if (c.peek() == '[' || c.peek() == '{') {
      problem = "nested arrays and inline tables are not read";
      return false;
    }
    json v;
    if (!read_scalar(c, v, problem)) return false;
    if (out.size() >= static_cast<std::size_t>(k_max_toml_array)) {
      problem = "an array holds more than " + std::to_string(k_max_toml_array) + " values";
      return false;
    }
    out.push_back(v);
    c.skip_space();
    if (c.peek() == ',') ++c.i;
    else if (c.peek() != ']') {
      problem = "expected , or ] in the array";
      return false;
    }
  }
}

}  // namespace

Result<TomlDocument> parse_toml(const std::string& text) {
  Result<TomlDocument> r;
  auto fail = [&](int line, const std::string& where, const std::string& message) {
    r.errors.push_back({ErrorCode::ParseError, "line " + std::to_string(line) + (where.empty() ? "" : ": " + where), message});
  };
  if (text.size() > k_max_toml_bytes) {
    fail(1, "", "the file is larger than " + std::to_string(k_max_toml_bytes) + " bytes");
    return r;
  }
  if (text.find('\0') != std::string::npos) {
    fail(1, "", "the file holds a NUL byte: not TOML text");
    return r;
  }
  std::string table;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos <= text.size() && r.errors.size() < 20) {
    const std::size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
    if (++line_no > k_max_toml_lines) {
      fail(line_no, "", "more than " + std::to_string(k_max_toml_lines) + " lines");
      break;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    Cursor c{line};
    c.skip_space();
    if (c.done() || c.peek() == '#') continue;
    if (c.peek() == '[') {
      ++c.i;
      if (c.peek() == '[') {
        fail(line_no, "", "arrays of tables ([[...]]) are not read");
        continue;
      }
      const std::size_t close = line.find(']', c.i);
      std::string name = close == std::string::npos ? "" : line.substr(c.i, close - c.i);
      while (!name.empty() && name.back() == ' ') name.pop_back();
      while (!name.empty() && name.front() == ' ') name.erase(0, 1);
      bool ok = !name.empty();
      for (char ch : name) ok = ok && (bare_key_char(ch) || ch == '.');
      c.i = close == std::string::npos ? line.size() : close + 1;
      c.skip_space();
      if (!ok || (!c.done() && c.peek() != '#')) {
        fail(line_no, "", "a table header is [name] with a bare name");
        continue;
      }
      if (r.value.tables.contains(name)) {
        fail(line_no, "[" + name + "]", "table [" + name + "] is defined twice");
        continue;
      }
      table = name;
      r.value.tables[table] = json::object();
      continue;
    }
    const std::size_t start = c.i;
    while (!c.done() && bare_key_char(c.peek())) ++c.i;
    const std::string key = line.substr(start, c.i - start);
    const std::string where = (table.empty() ? "" : "[" + table + "] ") + key;
    c.skip_space();
    if (key.empty() || c.peek() != '=') {
      fail(line_no, where, "expected key = value with a bare key");
      continue;
    }
    ++c.i;
    c.skip_space();
    json value;
    std::string problem;
    if (!read_value(c, value, problem)) {
      fail(line_no, where, problem);
      continue;
    }
    c.skip_space();
    if (!c.done() && c.peek() != '#') {
      fail(line_no, where, "unexpected text after the value");
      continue;
    }
    json& t = r.value.tables[table];
    if (t.contains(key)) {
      fail(line_no, where,
           "key '" + key + "' is set twice in [" + table + "] (first on line " + std::to_string(r.value.lines[table + "." + key]) +
               ")");
      continue;
    }
    t[key] = value;
    r.value.lines[table + "." + key] = line_no;
  }
  return r;
}

}  // namespace cutlab
