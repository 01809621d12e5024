// figure.h: a figure laid out by the core (the Cuts and Placement views; the pipeline keeps its
// own columnar Scene, scene.h). Rects, lines and texts in pixels of a `width` × `height` frame,
// each with a `kind` (its role: the renderer maps kind → shape and style) and a `tone` (its colour
// role: an axis, a memory part, a link tier or an ink; the renderer maps tone → colour). No
// colours and no font families here: texts carry their size and weight because the layout was
// computed for them (measure_text()). Items that answer the pointer carry `hit` (what to show) and
// ids (rank, stage, layer, replica, …) to look the details up in the estimate.
// Every front end draws the same figure: the page's canvas and SVG export, `cutlab draw --svg`.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace cutlab {

// Colour roles: an axis (tp pp cp ep etp edp dp) with `tone_index` of `tone_count` picking the
// rank's shade; a memory part (weights grads optimizer activations kv free); a link (nvlink
// scaleout); ink (text muted faint rule warn).
struct FigureRect {
  std::string kind;  // gpu, node, cell, slice, expert, chunk, mem, cap, swatch, region (not drawn), …
  double x = 0, y = 0, w = 0, h = 0;
  std::string tone;
  int tone_index = -1, tone_count = 0;
  std::string hit;  // what the pointer shows here ("" = nothing): gpu, node, layer, slice, …
  // Ids (−1: not set).
  int rank = -1;  // a GPU (a node kind or a slice: its first / representative GPU)
  int ranks = 0;  // GPUs rank … rank + ranks − 1 covered (a node: gpus_per_node)
  int node = -1, stage = -1, layer = -1, replica = -1, expert = -1, head = -1;
  int count = -1;            // how many are like it (nodes of a kind, TP ranks sharing a KV head, …)
  int begin = -1, end = -1;  // a half-open range (tokens of a CP chunk)
  std::string name;          // a matrix (WQ, W up, …), the embedding or the output layer
};

struct FigureLine {
  std::string kind;  // link, bus, stub, spine, arrow (head at x2, y2), bracket, rule, key
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  double width = 1;  // stroke, pixels (links: thicker = more bytes)
  std::string tone;
  bool dash = false;
};

struct FigureText {
  std::string kind;  // title, subtitle, heading, label, value, legend, …
  std::string text;
  double x = 0, y = 0;           // baseline
  std::string anchor = "start";  // start | middle | end
  double font_px = 12;
  int weight = 400;  // 400 regular, 600 and 700 bold
  double max_w = 0;  // > 0: the renderer shortens it (…) to fit
  std::string tone = "text";
  int tone_index = -1, tone_count = 0;
  bool on_fill = false;  // drawn on a fill of tone/tone_index: ink readable on it
};

struct Figure {
  std::string view;   // cuts | placement
  std::string level;  // placement: full (every GPU), cells (a cell per GPU), stages (one row per stage)
  double width = 0, height = 0;
  std::vector<FigureRect> rects;  // in drawing order
  std::vector<FigureLine> lines;  // drawn after the rects
  std::vector<FigureText> texts;  // drawn last
};

// The figure as JSON, keys = field names (ids that are not set are left out). figure_json()
// writes the text directly (the API's answer, fast enough for every redraw); to_json() is the same
// document as a value.
std::string figure_json(const Figure& f);
nlohmann::json to_json(const Figure& f);

namespace figure {

// Width in pixels of UTF-8 `s` at `font_px` (advance widths of DejaVu Sans, the widest of the
// page's fonts, so that text laid out for it fits in the others).
double measure_text(const std::string& s, double font_px, int weight = 400);
// `s` shortened with "…" to fit `max_w` (as the renderers do).
std::string fit_text(const std::string& s, double max_w, double font_px, int weight = 400);
// The first of `options` that fits `max_w`, else the last.
std::string first_fit(const std::vector<std::string>& options, double max_w, double font_px, int weight = 400);

// Numbers as words, as the page's tables write them (en-US grouping; a narrow no-break space
// before units).
extern const char* const kNbsp;
std::string fixed(double x, int digits);  // 12,345.6
std::string integer(double x);            // 16,384
std::string sig(double x);                // 3 significant-ish digits
std::string bytes(double b);              // 8.21 GiB
std::string gib(double b, int digits);    // 57.9
std::string seconds(double s);            // 862 ms
std::string compact(double n);            // 25.1k
std::string short_count(double n);        // 1.96 M
std::string span(int begin, int end);     // half-open [b, e) shown inclusively: 0–7
std::string layers(int first, int last);  // 0-based inclusive → "layers 1–40" (numbered from 1)
std::string tokens(int begin, int end);   // 0–2k

// A legend laid out in rows within `max_w` from (x, y): a swatch (kind swatch, hatch, line, band,
// band2, ring or none) and a label per item; a heading starts a group. Returns the height used.
struct LegendItem {
  std::string label;
  std::string tone;
  std::string swatch = "swatch";
  bool heading = false;
  double line_width = 3;  // swatch "line"
  bool dash = false;      // swatch "line": dashed, as the line it names
};
double legend(Figure& f, const std::vector<LegendItem>& items, double x, double y, double max_w);

// Appends items to a figure; rect() and text() return the item for ids to be set at once (the
// reference is valid until the next item is added).
struct Pen {
  Figure& f;
  FigureRect& rect(const std::string& kind, double x, double y, double w, double h, const std::string& tone = "", int tone_index = -1,
                   int tone_count = 0);
  void line(const std::string& kind, double x1, double y1, double x2, double y2, double width, const std::string& tone,
            bool dash = false);
  FigureText& text(const std::string& kind, const std::string& s, double x, double y, double font_px, int weight,
                   const std::string& tone = "text", const std::string& anchor = "start", double max_w = 0);
  // `s` on as many lines of `line_h` as it needs (at most four) from baseline y: a narrow frame
  // wraps a sentence at its spaces instead of cutting it. Returns the height of the lines.
  double wrapped(const std::string& kind, const std::string& s, double x, double y, double font_px, int weight,
                 const std::string& tone, double max_w, double line_h);
};

}  // namespace figure
}  // namespace cutlab
