#include "core/figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace cutlab {

namespace {

// Advance widths of DejaVu Sans (regular, bold) for ASCII 32–126, in thousandths of the font
// size, as Chromium measures them.
constexpr short kRegular[95] = {318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361,  318, 337, 636, 636, 636,
                                636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632,
                                575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635,  611, 732, 684, 989, 685,
                                611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352,  635, 634, 278, 278, 579,
                                278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592,  525, 636, 337, 636, 838};
constexpr short kBold[95] = {348, 456,  521, 838, 696, 1002, 872, 306, 457, 457, 523, 838, 380, 415,  380, 365, 696, 696,  696,
                             696, 696,  696, 696, 696, 696,  696, 400, 400, 838, 838, 838, 580, 1000, 774, 762, 734, 830,  683,
                             683, 821,  837, 372, 372, 775,  637, 995, 837, 850, 733, 850, 770, 720,  682, 812, 774, 1103, 771,
                             724, 725,  457, 365, 457, 838,  500, 500, 675, 716, 593, 716, 678, 435,  716, 712, 343, 343,  665,
                             343, 1042, 712, 687, 716, 716,  493, 595, 478, 712, 652, 924, 645, 652,  582, 712, 365, 712,  838};

// Next code point of UTF-8 `s` from `i` (advances i).
unsigned next_code_point(const std::string& s, size_t& i) {
  const unsigned char c = static_cast<unsigned char>(s[i++]);
  if (c < 0x80) return c;
  int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
  unsigned cp = c & (0x3F >> extra);
  while (extra-- > 0 && i < s.size()) cp = (cp << 6) | (static_cast<unsigned char>(s[i++]) & 0x3F);
  return cp;
}

double advance(unsigned cp, bool bold) {
  if (cp >= 32 && cp < 127) return (bold ? kBold : kRegular)[cp - 32] / 1000.0;
  switch (cp) {
    case 0x00B7: return bold ? 0.38 : 0.318;   // ·
    case 0x2013: return 0.5;                   // –
    case 0x202F: return 0.2;                   // narrow no-break space
    case 0x00B5: return bold ? 0.736 : 0.636;  // µ
    case 0x2014:
    case 0x2026: return 1.0;    // — …
    case 0x26A0: return 0.896;  // ⚠
    default: return 0.838;      // × → ↑ ↓ ≤ ≥ and the rest
  }
}

}  // namespace

namespace figure {

const char* const kNbsp = "\u202f";

double measure_text(const std::string& s, double font_px, int weight) {
  const bool bold = weight >= 600;
  double em = 0;
  for (size_t i = 0; i < s.size();) em += advance(next_code_point(s, i), bold);
  return em * font_px;
}

std::string fit_text(const std::string& s, double max_w, double font_px, int weight) {
  if (max_w <= 0) return "";
  if (measure_text(s, font_px, weight) <= max_w) return s;
  // Code-point boundaries, then the longest prefix that fits with the ellipsis.
  std::vector<size_t> cuts;
  for (size_t i = 0; i < s.size();) {
    next_code_point(s, i);
    cuts.push_back(i);
  }
  const double dots = measure_text("\u2026", font_px, weight);
  std::string best;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const std::string head = s.substr(0, cuts[k]);
    if (measure_text(head, font_px, weight) + dots > max_w) break;
    best = head;
  }
  return best.empty() ? "" : best + "\u2026";
}

std::string first_fit(const std::vector<std::string>& options, double max_w, double font_px, int weight) {
  for (const std::string& o : options)
    if (measure_text(o, font_px, weight) <= max_w) return o;
  return options.empty() ? "" : options.back();
}

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  std::string s = buf, out;
  if (s == "-0" || s.rfind("-0.", 0) == 0) {  // −0.0 rounds to 0
    bool zero = true;
    for (char c : s) zero = zero && (c == '-' || c == '0' || c == '.');
    if (zero) s = s.substr(1);
  }
  const size_t start = s[0] == '-' ? 1 : 0;
  size_t dot = s.find('.');
  if (dot == std::string::npos) dot = s.size();
  out = s.substr(0, start);
  for (size_t i = start; i < dot; ++i) {
    out += s[i];
    const size_t left = dot - 1 - i;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return out + s.substr(dot);
}

std::string integer(double x) { return fixed(x, 0); }

std::string sig(double x) {
  const double a = std::fabs(x);
  if (a == 0) return "0";
  if (a >= 100) return fixed(x, 0);
  if (a >= 10) return fixed(x, 1);
  return fixed(x, 2);
}

std::string bytes(double b) {
  const double a = std::fabs(b), k = 1024;
  if (a >= k * k * k * k) return sig(b / (k * k * k * k)) + kNbsp + "TiB";
  if (a >= k * k * k) return sig(b / (k * k * k)) + kNbsp + "GiB";
  if (a >= k * k) return sig(b / (k * k)) + kNbsp + "MiB";
  if (a >= k) return sig(b / k) + kNbsp + "KiB";
  return fixed(b, 0) + kNbsp + "B";
}

std::string gib(double b, int digits) { return fixed(b / (1024.0 * 1024.0 * 1024.0), digits); }

std::string seconds(double s) {
  const double a = std::fabs(s);
  if (a == 0) return "0";
  if (a >= 100) return fixed(s, 0) + kNbsp + "s";
  if (a >= 1) return fixed(s, 2) + kNbsp + "s";
  if (a >= 1e-3) return sig(s * 1e3) + kNbsp + "ms";
  return sig(s * 1e6) + kNbsp + "\u00b5s";
}

std::string compact(double n) {
  const double a = std::fabs(n);
  if (a >= 1e6) return sig(n / 1e6) + "M";
  if (a >= 1e4) return sig(n / 1e3) + "k";
  return fixed(n, 0);
}

std::string short_count(double n) {
  const double a = std::fabs(n);
  if (a >= 1e12) return sig(n / 1e12) + kNbsp + "T";
  if (a >= 1e9) return sig(n / 1e9) + kNbsp + "B";
  if (a >= 1e6) return sig(n / 1e6) + kNbsp + "M";
  if (a >= 1e4) return sig(n / 1e3) + kNbsp + "k";
  return fixed(n, 0);
}

std::string span(int begin, int end) { return end - begin <= 1 ? integer(begin) : integer(begin) + "\u2013" + integer(end - 1); }

std::string layers(int first, int last) {
  return first == last ? "layer " + std::to_string(first + 1)
                       : "layers " + std::to_string(first + 1) + "\u2013" + std::to_string(last + 1);
}

std::string tokens(int begin, int end) {
  auto k = [](int x) { return x >= 1024 && x % 1024 == 0 ? std::to_string(x / 1024) + "k" : integer(x); };
  return k(begin) + "\u2013" + k(end);
}

double legend(Figure& f, const std::vector<LegendItem>& items, double x, double y, double max_w) {
  const double size = 11.5, sw = 12, gap = 16, row_h = 18;
  double cx = x, cy = y;
  for (const LegendItem& it : items) {
    if (it.heading) {
      const double w = measure_text(it.label, size, 600);
      if (cx + w + 80 > x + max_w && cx > x) cx = x, cy += row_h;  // a heading stays with its first item
      f.texts.push_back({"legend_heading", it.label, cx, cy + 11, "start", size, 600, 0, "muted"});
      cx += w + 8;
      continue;
    }
    const bool bare = it.swatch == "none";
    const double w = (bare ? 0 : sw + 5) + measure_text(it.label, size);
    if (cx + w > x + max_w && cx > x) cx = x, cy += row_h;
    if (it.swatch == "line") {
      f.lines.push_back({"key", cx, cy + 7, cx + sw, cy + 7, it.line_width, it.tone, it.dash});
    } else if (!bare) {
      FigureRect r;
      r.kind = "legend_" + it.swatch;
      r.x = cx, r.y = cy + 1, r.w = sw, r.h = sw;
      r.tone = it.tone;
      f.rects.push_back(r);
    }
    f.texts.push_back({"legend", it.label, bare ? cx : cx + sw + 5, cy + 11, "start", size, 400, 0, bare ? "muted" : "text"});
    cx += w + gap;
  }
  return cy - y + row_h;
}

FigureRect& Pen::rect(const std::string& kind, double x, double y, double w, double h, const std::string& tone, int tone_index,
                      int tone_count) {
  FigureRect r;
  r.kind = kind, r.x = x, r.y = y, r.w = w, r.h = h, r.tone = tone, r.tone_index = tone_index, r.tone_count = tone_count;
  f.rects.push_back(std::move(r));
  return f.rects.back();
}

void Pen::line(const std::string& kind, double x1, double y1, double x2, double y2, double width, const std::string& tone, bool dash) {
  f.lines.push_back({kind, x1, y1, x2, y2, width, tone, dash});
}

FigureText& Pen::text(const std::string& kind, const std::string& s, double x, double y, double font_px, int weight,
                      const std::string& tone, const std::string& anchor, double max_w) {
  f.texts.push_back({kind, s, x, y, anchor, font_px, weight, max_w, tone});
  return f.texts.back();
}

double Pen::wrapped(const std::string& kind, const std::string& s, double x, double y, double size, int weight,
                    const std::string& tone, double max_w, double line_h) {
  double dy = 0;
  std::string rest = s;
  for (int line = 0; !rest.empty(); ++line) {
    std::size_t cut = rest.size();
    if (line < 3 && measure_text(rest, size, weight) > max_w) {
      std::size_t best = 0;  // the longest run of whole words that fits
      for (std::size_t sp = rest.find(' '); sp != std::string::npos; sp = rest.find(' ', sp + 1)) {
        if (measure_text(rest.substr(0, sp), size, weight) > max_w) break;
        best = sp;
      }
      if (best > 0) cut = best;
    }
    text(kind, rest.substr(0, cut), x, y + dy, size, weight, tone, "start", max_w);
    dy += line_h;
    rest = cut < rest.size() ? rest.substr(cut + 1) : std::string();
  }
  return dy;
}

}  // namespace figure

namespace {

// A JSON writer for figures: thousands of items, written straight to text (an order of magnitude
// faster than building nlohmann objects, which matters in WASM on every redraw).
struct JsonOut {
  std::string s;
  bool first = true;
  // Numbers are written right to left into a small buffer and appended once, strings in runs of
  // characters that need no escape: one append each, not one per character (the placement figure at
  // 64 GPUs, 615 texts and 536 rects, is 123 KB of JSON on every redraw).
  static char* digits_left(char* q, unsigned long long u) {
    do *--q = static_cast<char>('0' + u % 10), u /= 10;
    while (u);
    return q;
  }
  void integer(long long v) {
    char buf[24];
    char* end = buf + sizeof buf;
    const bool neg = v < 0;
    char* q = digits_left(end, neg ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v));
    if (neg) *--q = '-';
    s.append(q, static_cast<size_t>(end - q));
  }
  void number(double v) {  // pixels to 0.01 px: enough for any screen
    if (!std::isfinite(v) || std::fabs(v) > 1e15) v = 0;
    long long cents = std::llround(v * 100.0);
    const bool neg = cents < 0;
    if (neg) cents = -cents;
    char buf[32];
    char* end = buf + sizeof buf;
    char* q = end;
    const int frac = static_cast<int>(cents % 100);
    if (frac) {
      if (frac % 10) *--q = static_cast<char>('0' + frac % 10);
      *--q = static_cast<char>('0' + frac / 10);
      *--q = '.';
    }
    q = digits_left(q, static_cast<unsigned long long>(cents / 100));
    if (neg) *--q = '-';
    s.append(q, static_cast<size_t>(end - q));
  }
  void string(const std::string& v) {
    s += '"';
    size_t run = 0;  // the first character not yet written
    for (size_t i = 0; i < v.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(v[i]);
      if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') continue;
      s.append(v, run, i - run);
      if (c == '"' || c == '\\') s += '\\', s += static_cast<char>(c);
      else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        s += buf;
      } else {  // a valid UTF-8 sequence is copied, anything else becomes U+FFFD
        const int n = c >= 0xF5 ? -1 : c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC2 ? 1 : -1;  // continuation bytes
        bool ok = n > 0 && i + n < v.size();
        for (int k = 1; ok && k <= n; ++k) ok = (static_cast<unsigned char>(v[i + k]) & 0xC0) == 0x80;
        if (ok) {
          s.append(v, i, n + 1);
          i += n;
        } else {
          s += "\\ufffd";
        }
      }
      run = i + 1;
    }
    s.append(v, run, v.size() - run);
    s += '"';
  }
  void key(const char* k) {
    if (!first) s += ',';
    first = false;
    s += '"';
    s += k;
    s += "\":";
  }
  void field(const char* k, double v) { key(k), number(v); }
  void field(const char* k, const std::string& v) { key(k), string(v); }
  void id(const char* k, int v) {  // ids: left out when not set (−1)
    if (v != -1) key(k), integer(v);
  }
  void text_if(const char* k, const std::string& v) {
    if (!v.empty()) field(k, v);
  }
  void open() { s += '{', first = true; }
  void close() { s += '}', first = false; }
};

}  // namespace

// Keys are the field names; ids left at −1 and empty strings are left out (thousands of cells).
std::string figure_json(const Figure& f) {
  JsonOut o;
  o.s.reserve(96 * (f.rects.size() + f.lines.size() + f.texts.size()) + 256);
  o.open();
  o.field("view", f.view);
  o.field("level", f.level);
  o.field("width", f.width);
  o.field("height", f.height);
  o.key("rects");
  o.s += '[';
  for (size_t i = 0; i < f.rects.size(); ++i) {
    const FigureRect& r = f.rects[i];
    if (i) o.s += ',';
    o.open();
    o.field("kind", r.kind), o.field("x", r.x), o.field("y", r.y), o.field("w", r.w), o.field("h", r.h);
    o.text_if("tone", r.tone);
    if (r.tone_index >= 0) o.id("tone_index", r.tone_index), o.id("tone_count", r.tone_count);
    o.text_if("hit", r.hit);
    o.id("rank", r.rank);
    if (r.ranks > 0) o.id("ranks", r.ranks);
    o.id("node", r.node), o.id("stage", r.stage), o.id("layer", r.layer), o.id("replica", r.replica);
    o.id("expert", r.expert), o.id("head", r.head), o.id("count", r.count), o.id("begin", r.begin), o.id("end", r.end);
    o.text_if("name", r.name);
    o.close();
  }
  o.s += ']';
  o.key("lines");
  o.s += '[';
  for (size_t i = 0; i < f.lines.size(); ++i) {
    const FigureLine& l = f.lines[i];
    if (i) o.s += ',';
    o.open();
    o.field("kind", l.kind), o.field("x1", l.x1), o.field("y1", l.y1), o.field("x2", l.x2), o.field("y2", l.y2),
        o.field("width", l.width);
    o.text_if("tone", l.tone);
    if (l.dash) o.key("dash"), o.s += "true";
    o.close();
  }
  o.s += ']';
  o.key("texts");
  o.s += '[';
  for (size_t i = 0; i < f.texts.size(); ++i) {
    const FigureText& t = f.texts[i];
    if (i) o.s += ',';
    o.open();
    o.field("kind", t.kind), o.field("text", t.text), o.field("x", t.x), o.field("y", t.y), o.field("anchor", t.anchor);
    o.field("font_px", t.font_px), o.field("weight", t.weight), o.field("tone", t.tone);
    if (t.max_w > 0) o.field("max_w", t.max_w);
    if (t.tone_index >= 0) o.id("tone_index", t.tone_index), o.id("tone_count", t.tone_count);
    if (t.on_fill) o.key("on_fill"), o.s += "true";
    o.close();
  }
  o.s += ']';
  o.close();
  return std::move(o.s);
}

nlohmann::json to_json(const Figure& f) { return nlohmann::json::parse(figure_json(f)); }

}  // namespace cutlab
