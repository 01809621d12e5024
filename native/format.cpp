#include "native/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cutlab::cli {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string signed_fixed(double v, int digits) {
  const std::string text = fixed(std::fabs(v), digits);
  return (text.find_first_not_of("0.") == std::string::npos ? "" : v < 0 ? "−" : "+") + text;
}

std::string signed_percent(double percent) { return signed_fixed(percent, 1) + "%"; }

std::string gib(double bytes) { return fixed(bytes / 1073741824.0, 2); }

std::string human_bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (std::fabs(b) >= 1024 && i < 4) b /= 1024, ++i;
  return fixed(b, b < 10 ? 2 : (b < 100 ? 1 : 0)) + " " + unit[i];
}

std::string human_time(double s) {
  if (s == 0) return "0";
  if (s >= 1) return fixed(s, s < 10 ? 2 : 1) + " s";
  if (s >= 1e-3) return fixed(s * 1e3, s < 1e-2 ? 2 : 1) + " ms";
  return fixed(s * 1e6, 1) + " µs";
}

std::string count(double v) {
  if (v >= 1e12) return fixed(v / 1e12, 2) + "T";
  if (v >= 1e9) return fixed(v / 1e9, 1) + "B";
  if (v >= 1e6) return fixed(v / 1e6, 1) + "M";
  if (v >= 1e3) return fixed(v / 1e3, 1) + "k";
  return fixed(v, 0);
}

std::string with_commas(double v) {
  std::string s = fixed(v, 0), out;
  const int n = static_cast<int>(s.size());
  for (int i = 0; i < n; ++i) {
    out += s[i];
    if (s[i] != '-' && (n - 1 - i) % 3 == 0 && i != n - 1) out += ',';
  }
  return out;
}

std::string xml_escape(const std::string& in) {
  std::string out;
  for (char c : in) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

// Display width of UTF-8 text (counts code points, not bytes).
static size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

std::string Table::render() const {
  std::vector<size_t> w(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) w[i] = width(header[i]);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = " ";
    for (size_t i = 0; i < w.size(); ++i) {
      const std::string c = i < cells.size() ? cells[i] : "";
      const std::string pad(w[i] - width(c), ' ');
      out += i == 0 ? c + pad : pad + c;
      out += i + 1 < w.size() ? "  " : "";
    }
    return out + "\n";
  };
  std::string out = line(header);
  size_t total = 1;
  for (size_t x : w) total += x + 2;
  out += " " + std::string(total - 3, '-') + "\n";
  for (const auto& r : rows) out += line(r);
  return out;
}

}  // namespace cutlab::cli
