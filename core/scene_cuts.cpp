#include "core/scene_cuts.h"

#include <algorithm>
#include <cmath>

// [SECTION] index: context · depth (PP) · matrices in TP slices · experts (EP, ETP) · sequence (CP)
// · replicas (DP) · legend.

namespace cutlab {

namespace {

namespace fg = figure;
using Pen = fg::Pen;
constexpr double kPad = 16, kHead = 26;
constexpr double k_stacked_below = 520;  // frames narrower than this stack the depth bar above the layer
constexpr int kMaxExperts = 1024;        // drawn one by one; more are counted in the heading
constexpr int kMaxCp = 256;              // CP ranks drawn one by one

struct Ctx {
  const Config& c;
  const SceneInput& e;
  const Placement& pl;
  bool serve;
  double depth_w;
  bool narrow;  // below 600 px: no room beside the matrices for their height
  Ctx(const Config& c_, const SceneInput& e_, double width)
      : c(c_),
        e(e_),
        pl(e_.placement),
        serve(e_.serving),
        depth_w(width < k_stacked_below ? width - 2 * kPad
                : width < 820           ? 184
                                        : 218),
        narrow(width < 600) {}
  GpuPlacement gpu(long long rank) const { return gpu_placement(e.resolved, static_cast<int>(rank)); }
  // The GPUs of rank 0's group on an axis, one per coordinate 0 … n − 1 (under folding the expert
  // mesh is etp (innermost) × ep inside each stage).
  std::vector<GpuPlacement> group(Axis axis) const {
    const bool folding = c.plan.etp > 0;
    int n = 1;
    long long stride = 1;
    switch (axis) {
      case Axis::TP: n = c.plan.tp, stride = pl.stride_tp; break;
      case Axis::CP: n = std::min(c.plan.cp, kMaxCp), stride = pl.stride_cp; break;
      case Axis::EP: n = c.plan.ep, stride = folding ? e.mesh.etp : pl.stride_ep; break;
      case Axis::ETP: n = e.mesh.etp, stride = folding ? 1 : pl.stride_tp; break;
      default: break;
    }
    std::vector<GpuPlacement> out;
    for (int i = 0; i < n; ++i) out.push_back(gpu(i * stride));
    return out;
  }
};

// A heading with a muted subtitle beside it, or below it on as many lines as it needs when it does
// not fit. Returns the height used past the heading's first line.
double section(Pen& o, double x, double y, const std::string& title, const std::string& sub, double max_w) {
  const double extra = o.wrapped("heading", title, x, y, 12.5, 650, "text", max_w, 16) - 16;  // lines past the first
  if (sub.empty()) return extra;
  const double w = std::min(fg::measure_text(title, 12.5, 650), max_w);
  if (extra == 0 && fg::measure_text(sub, 12) <= max_w - w - 8) {
    o.text("subheading", sub, x + w + 8, y, 12, 400, "muted");
    return 0;
  }
  return extra + o.wrapped("subheading", sub, x, y + extra + 15, 12, 400, "muted", max_w, 15);
}

// ---- depth (PP) ----------------------------------------------------------------------------------
constexpr double kBarW = 28, kCapH = 16;  // the depth bar's width, the embedding's and output's caps

// A run of layers [a, b] (0-based, inclusive): one chunk of a stage.
struct Seg {
  int stage, chunk, a, b;
};

// The layer rows of a bar `row_h` per layer from `top`.
struct DepthBar {
  double left, top, bottom, row_h;
};

// The embedding's cap above the layers and the output layer's below, each on its stage.
void depth_io(Pen& o, const Ctx& x, double left, double y, double bottom) {
  const int P = x.c.plan.pp;
  const StageInfo* emb = &x.pl.stages.front();
  const StageInfo* out = &x.pl.stages.back();
  for (const StageInfo& s : x.pl.stages)
    if (s.embedding) {
      emb = &s;
      break;
    }
  for (auto it = x.pl.stages.rbegin(); it != x.pl.stages.rend(); ++it)
    if (it->output) {
      out = &*it;
      break;
    }
  auto io = [&](const StageInfo& st, double yy, const std::string& name, const std::string& label, double hit_w) {
    o.rect("io", left, yy, kBarW, kCapH, "pp", st.stage, P);
    o.text("io_label", label, left + kBarW + 8, yy + 12, 11, 400, "muted");
    FigureRect& r = o.rect("region", left, yy, kBarW + hit_w, kCapH);
    r.hit = "io", r.name = name, r.stage = st.stage;
  };
  io(*emb, y + 4, "embedding", "embedding", 120);
  const bool serving = x.c.workload.mode == Mode::Infer;
  io(*out, bottom + 3, "output", serving ? "output layer + sampling" : "output layer + loss", serving ? 160 : 140);
}

// Every chunk of every stage, in layer order.
std::vector<Seg> depth_segments(const Ctx& x) {
  std::vector<Seg> segs;
  for (const StageInfo& st : x.pl.stages)
    for (size_t k = 0; k < st.chunks.size(); ++k)
      if (st.chunks[k].second >= st.chunks[k].first)  // a chunk of only the embedding or the loss has no row
        segs.push_back({st.stage, static_cast<int>(k), st.chunks[k].first, st.chunks[k].second});
  std::stable_sort(segs.begin(), segs.end(), [](const Seg& p, const Seg& q) { return p.a < q.a; });
  return segs;
}

// Labels: one per segment when they fit, else every k-th.
void depth_labels(Pen& o, const Ctx& x, const DepthBar& d, const std::vector<Seg>& segs) {
  const double label_h = 13.5;
  const int max_labels = std::max(1, static_cast<int>(std::floor((d.bottom - d.top) / label_h)));
  const size_t step = (segs.size() + max_labels - 1) / max_labels;
  double last_y = -1e9;
  for (size_t i = 0; i < segs.size(); ++i) {
    const Seg& s = segs[i];
    if (i % step != 0 && i != segs.size() - 1) continue;
    const double mid = d.top + (s.a + s.b + 1) / 2.0 * d.row_h;
    const double ly = std::max(mid + 4, last_y + label_h);
    if (ly > d.bottom + 2) continue;
    last_y = ly;
    o.text("stage_label", "stage " + std::to_string(s.stage + 1) + " · " + fg::layers(s.a, s.b), d.left + kBarW + 8, ly, 11, 500,
           "text", "start", x.depth_w - kBarW - 12);
  }
}

// A hover region per layer, or per pixel row when layers are thinner than a pixel (bounded by the
// height); and one per segment over its label.
void depth_regions(Pen& o, const Ctx& x, const DepthBar& d, const std::vector<Seg>& segs) {
  const int per_region = std::max(1, static_cast<int>(std::ceil(1.0 / d.row_h)));
  for (const Seg& s : segs)
    for (int i = s.a; i <= s.b; i += per_region) {
      const int n = std::min(per_region, s.b - i + 1);
      FigureRect& r = o.rect("region", d.left, d.top + i * d.row_h, kBarW + 6, std::max(n * d.row_h, 1.0));
      r.hit = "layer", r.layer = i, r.stage = s.stage;
      if (is_moe_layer(x.c.model, i)) r.name = "moe";
    }
  for (const Seg& s : segs) {
    const double y0 = d.top + s.a * d.row_h, y1 = d.top + (s.b + 1) * d.row_h;
    FigureRect& r = o.rect("region", d.left + kBarW + 6, y0, x.depth_w - kBarW - 6, y1 - y0);
    r.hit = "stage", r.stage = s.stage, r.begin = s.a, r.end = s.b + 1;
  }
}

void depth(Pen& o, const Ctx& x, double left, double y, double h, int layer) {
  const ModelSpec& m = x.c.model;
  const int P = x.c.plan.pp, L = m.layers;
  // the title and its subtitle on one line (the column has no room for two)
  o.text("heading", "Depth", left, y - 8, 12.5, 650);
  const double tw = fg::measure_text("Depth", 12.5, 650) + 8;
  o.text("subheading", "PP = " + std::to_string(P) + " stage" + (P > 1 ? "s" : ""), left + tw, y - 8, 12, 400, "muted", "start",
         x.depth_w - tw);
  const double top = y + 4 + kCapH + 3, bottom = y + h - kCapH - 3, row_h = (bottom - top) / L;
  const DepthBar d{left, top, bottom, row_h};
  depth_io(o, x, left, y, bottom);
  // layer rows by chunk
  const std::vector<Seg> segs = depth_segments(x);
  for (const Seg& s : segs) {
    const double y0 = top + s.a * row_h, y1 = top + (s.b + 1) * row_h;
    o.rect("layers", left, y0, kBarW, y1 - y0, "pp", s.stage, P).stage = s.stage;
    if (row_h >= 3)
      for (int i = s.a + 1; i <= s.b; ++i) o.rect("layer_tick", left, top + i * row_h, kBarW, 0.6);
    o.rect("seg_sep", left, y0, kBarW, 1);
  }
  // MoE layers: a thin mark on the right edge
  if (is_moe(m)) o.rect("moe_mark", left + kBarW + 1, top + m.dense_layers * row_h, 3, (L - m.dense_layers) * row_h, "ep");
  depth_labels(o, x, d, segs);
  depth_regions(o, x, d, segs);
  const double sy = top + layer * row_h;
  o.rect("selection", left - 2.5, sy - 1.5, kBarW + 5, std::max(row_h, 2.0) + 3).layer = layer;
}

// ---- one matrix with TP slices ---------------------------------------------------------------------
struct Piece {
  double from = 0, to = 1, y0 = 0, y1 = 1;  // fractions of the width and height
  FigureRect item;                          // kind, tone and ids (geometry filled in by matrix())
};
struct Matrix {
  std::string name;
  std::vector<std::string> sub;  // the first that fits the width
  double cols = 1;               // the split dimension, for the width
  std::vector<Piece> pieces;
  double x = 0, w = 0;
};

void matrix(Pen& o, const Matrix& mx, double y, double h, double gap) {
  const double x = mx.x, w = mx.w;
  for (const Piece& p : mx.pieces) {
    FigureRect r = p.item;
    r.x = x + p.from * w, r.w = (p.to - p.from) * w, r.y = y + p.y0 * h, r.h = (p.y1 - p.y0) * h;
    o.f.rects.push_back(std::move(r));
  }
  for (const Piece& p : mx.pieces)
    if (p.from > 0) {
      const double xx = std::round(x + p.from * w) + 0.5;
      o.line("slice_edge", xx, y, xx, y + h, 1, "white");
    }
  o.rect("matrix_frame", x, y, w, h);
  // labels may reach into the gap, not into the neighbour's
  o.text("matrix_name", mx.name, x + w / 2, y + h + 14, 12, 600, "text", "middle", w + std::min(6.0, gap));
  if (!mx.sub.empty())
    o.text("matrix_sub", fg::first_fit(mx.sub, w + 6, 10.5), x + w / 2, y + h + 27, 10.5, 400, "muted", "middle",
           w + std::min(8.0, gap));
}

// Widths proportional to the split dimension, but never narrower than the matrix's name.
void row_of_matrices(Pen& o, std::vector<Matrix>& list, double x, double y, double W, double h, double gap) {
  const double min_w = 34;
  double total = 0;
  for (const Matrix& m : list) total += m.cols;
  std::vector<double> mins, widths;
  double sum_mins = 0;
  for (const Matrix& m : list) mins.push_back(std::max(min_w, fg::measure_text(m.name, 12, 600) + 8)), sum_mins += mins.back();
  // A narrow frame: tighter gaps, then minimum widths shrunk to fit (the names are shortened).
  if (sum_mins + gap * static_cast<double>(list.size() - 1) > W) gap = 4;
  const double avail = W - gap * static_cast<double>(list.size() - 1);
  if (sum_mins > avail)
    for (double& m : mins) m *= avail / sum_mins;
  double fixed_w = 0, rest_cols = 0;
  std::vector<char> small;  // not vector<bool>: its push_back alone is 1.9 KB of the page's first module
  for (size_t i = 0; i < list.size(); ++i) {
    small.push_back(list[i].cols / total * avail < mins[i] ? 1 : 0);
    if (small[i]) fixed_w += mins[i];
    else rest_cols += list[i].cols;
  }
  double cx = x;
  for (size_t i = 0; i < list.size(); ++i) {
    list[i].x = cx;
    list[i].w = small[i] ? mins[i] : list[i].cols / rest_cols * (avail - fixed_w);
    matrix(o, list[i], y, h, gap);
    cx += list[i].w + gap;
  }
}

// What a TP slice of a matrix holds: query heads, KV heads or FFN columns.
enum class Range { Heads, KvHeads, Ffn };

std::pair<int, int> range_of(const GpuPlacement& g, Range key) {
  switch (key) {
    case Range::Heads: return {g.heads_begin, g.heads_end};
    case Range::KvHeads: return {g.kv_heads_begin, g.kv_heads_end};
    default: return {g.ffn_begin, g.ffn_end};
  }
}

// TP pieces of a matrix split along heads, KV heads or FFN columns.
std::vector<Piece> tp_pieces(const std::vector<GpuPlacement>& reps, Range key, int total, int T, const std::string& name) {
  std::vector<Piece> out;
  auto slice = [&](const GpuPlacement& g) {
    Piece p;
    p.item.kind = "slice", p.item.tone = "tp", p.item.tone_index = g.tp, p.item.tone_count = T;
    p.item.hit = "slice", p.item.name = name, p.item.rank = g.rank;
    return p;
  };
  if (key == Range::KvHeads) {
    // A KV head is held by every TP rank whose range contains it (replicated when tp > kv_heads).
    for (int k = 0; k < total; ++k) {
      std::vector<const GpuPlacement*> holders;
      for (const GpuPlacement& g : reps)
        if (g.kv_heads_begin <= k && k < g.kv_heads_end) holders.push_back(&g);
      for (size_t j = 0; j < holders.size(); ++j) {
        Piece p = slice(*holders[j]);
        p.from = static_cast<double>(k) / total, p.to = static_cast<double>(k + 1) / total;
        p.y0 = static_cast<double>(j) / static_cast<double>(holders.size()),
        p.y1 = static_cast<double>(j + 1) / static_cast<double>(holders.size());
        if (holders.size() > 1) p.item.kind = "slice_shared";
        p.item.head = k, p.item.count = static_cast<int>(holders.size());
        out.push_back(p);
      }
    }
    return out;
  }
  for (const GpuPlacement& g : reps) {
    Piece p = slice(g);
    const auto [a, b] = range_of(g, key);
    p.from = static_cast<double>(a) / total, p.to = static_cast<double>(b) / total;
    out.push_back(p);
  }
  return out;
}

std::vector<Piece> replicated(const std::string& name) {
  Piece p;
  p.item.kind = "replicated", p.item.tone = "tp", p.item.hit = "replicated", p.item.name = name;
  return {p};
}

// The TP rank numbers above a matrix's slices, when every slice has room.
void rank_labels(Pen& o, const Matrix& mx, const std::vector<GpuPlacement>& reps, Range key, int total, double y) {
  for (const GpuPlacement& g : reps) {
    const auto [a, b] = range_of(g, key);
    if ((b - a) * mx.w / total < 11) return;
  }
  for (const GpuPlacement& g : reps) {
    const auto [a, b] = range_of(g, key);
    o.text("rank_label", std::to_string(g.tp), mx.x + (a + b) / 2.0 / total * mx.w, y, 10.5, 600, "tp", "middle");
  }
}

// ---- experts (EP, ETP) ---------------------------------------------------------------------------
// The heading: how many experts, how EP and ETP (or TP) cut them. Returns the y below it.
double experts_heading(Pen& o, const Ctx& x, const std::vector<GpuPlacement>& ep, double left, double y, double W, int drawn) {
  const ModelSpec& m = x.c.model;
  const int E = m.experts, EP = x.c.plan.ep, ETP = x.e.mesh.etp;
  const bool folding = x.c.plan.etp > 0;
  std::string sub = EP > 1 ? "EP = " + std::to_string(EP) + ": whole experts, EP rank 0 holds " +
                                 fg::span(ep[0].experts_begin, ep[0].experts_end) + ", rank 1 holds " +
                                 fg::span(ep[1].experts_begin, ep[1].experts_end) + (EP > 2 ? ", …" : "")
                           : std::string("EP = 1: every GPU of the stage has every expert");
  if (ETP > 1) sub += " · " + std::string(folding ? "ETP" : "TP") + " = " + std::to_string(ETP) + " slices inside each expert";
  return y + (24 + section(o, left, y + 10,
                           "Experts: " + std::to_string(E) + " routed, top-" + std::to_string(m.top_k) +
                               (drawn < E ? " (first " + fg::integer(drawn) + " drawn)" : ""),
                           sub, W));
}

// The router and the shared experts, on every GPU: a column left of the experts' grid.
void router_and_shared(Pen& o, const Ctx& x, double left, double y, double side_w, double rh) {
  const ModelSpec& m = x.c.model;
  FigureRect& router = o.rect("router", left, y, side_w, rh, "ep");
  router.hit = "replicated", router.name = "router";
  o.text("router_label", "router", left + side_w / 2, y + 15, 11, 600, "text", "middle");
  o.text("router_sub", "on every GPU", left + side_w / 2, y + rh + 12, 10, 400, "muted", "middle");
  if (m.shared_experts > 0) {
    const double sy = y + rh + 22;
    FigureRect& r = o.rect("shared", left, sy, side_w, rh, "tp");
    r.hit = "shared", r.count = m.shared_experts;
    o.text("shared_label", "shared ×" + std::to_string(m.shared_experts), left + side_w / 2, sy + 15, 11, 600, "text", "middle",
           side_w - 4);
  }
}

// The experts' grid: up to 32 columns, fewer when a cell would be narrower than 3 px.
struct ExpertGrid {
  double x = 0, y = 0, gap = 0, cell_w = 0, cell_h = 0;
  int cols = 1, rows = 1;
};

ExpertGrid expert_grid(double grid_x, double y, double grid_w, int drawn) {
  ExpertGrid g;
  g.x = grid_x, g.y = y;
  g.gap = drawn > 32 ? 2 : 5;
  g.cols = std::max(1, std::min({drawn, drawn <= 16 ? drawn : 32, static_cast<int>((grid_w + g.gap) / (3 + g.gap))}));
  g.rows = (drawn + g.cols - 1) / g.cols;
  g.cell_w = (grid_w - g.gap * (g.cols - 1)) / g.cols;
  g.cell_h = g.rows == 1 ? 46 : std::max(11.0, std::min(22.0, 120.0 / g.rows));
  return g;
}

// Expert `e`: coloured by the EP rank that holds it, in ETP (or TP) slices when they cut it, with its name.
void expert_cell(Pen& o, const Ctx& x, const ExpertGrid& gr, int e, const std::vector<GpuPlacement>& ep,
                 const std::vector<GpuPlacement>& etp) {
  const int EP = x.c.plan.ep, ETP = x.e.mesh.etp;
  const bool folding = x.c.plan.etp > 0;
  const double expert_ffn = std::max(1, x.c.model.expert_ffn_hidden), cell_w = gr.cell_w, cell_h = gr.cell_h;
  const double cx = gr.x + (e % gr.cols) * (cell_w + gr.gap), cy = gr.y + (e / gr.cols) * (cell_h + gr.gap);
  const GpuPlacement* owner = nullptr;  // the EP rank whose range holds expert e
  for (const GpuPlacement& g : ep)
    if (g.experts_begin <= e && e < g.experts_end) owner = &g;
  const int ep_rank = owner ? owner->ep : 0;
  FigureRect& cell = o.rect(ETP > 1 ? "expert_band" : "expert", cx, cy, cell_w, ETP > 1 ? std::min(5.0, cell_h / 4) : cell_h, "ep",
                            ep_rank, EP);
  if (ETP <= 1) cell.hit = "expert", cell.expert = e, cell.rank = owner ? owner->rank : -1;
  if (ETP > 1) {
    const double band = std::min(5.0, cell_h / 4);
    for (const GpuPlacement& s : etp) {
      const double a = cx + s.expert_ffn_begin / expert_ffn * cell_w;
      const double b = cx + s.expert_ffn_end / expert_ffn * cell_w;
      o.rect("expert_slice", a, cy + band, b - a, cell_h - band, folding ? "etp" : "tp", folding ? s.etp : s.tp, ETP);
      if (a > cx) o.rect("slice_gap", a, cy + band, 1, cell_h - band);
    }
    FigureRect& r = o.rect("region", cx, cy, cell_w, cell_h);
    r.hit = "expert", r.expert = e, r.rank = owner ? owner->rank : -1;
  }
  o.rect("expert_frame", cx, cy, cell_w, cell_h);
  if (cell_w < 22 || cell_h < 14) return;
  const std::string label = "E" + std::to_string(e);
  const double px = cell_h >= 30 ? 11 : 9.5, tw = fg::measure_text(label, px, 600);
  if (tw >= cell_w - 4) return;
  if (ETP > 1) o.rect("label_bg", cx + cell_w / 2 - tw / 2 - 3, cy + cell_h / 2 - 6, tw + 6, 13);
  FigureText& t = o.text("expert_label", label, cx + cell_w / 2, cy + cell_h / 2 + 4, px, 600, ETP > 1 ? "text" : "ep", "middle");
  if (ETP <= 1) t.tone_index = ep_rank, t.tone_count = EP, t.on_fill = true;
}

// EP brackets under one row of experts, each with its owning rank. Returns the y below them.
double ep_brackets(Pen& o, const ExpertGrid& gr, const std::vector<GpuPlacement>& ep, double by) {
  for (const GpuPlacement& g : ep) {
    const double a = gr.x + g.experts_begin * (gr.cell_w + gr.gap), b = gr.x + (g.experts_end - 1) * (gr.cell_w + gr.gap) + gr.cell_w;
    o.line("bracket", a + 1, by + 1, a + 1, by + 5, 1.2, "ep");
    o.line("bracket", a + 1, by + 5, b - 1, by + 5, 1.2, "ep");
    o.line("bracket", b - 1, by + 5, b - 1, by + 1, 1.2, "ep");
    o.text("bracket_label", "EP " + std::to_string(g.ep), (a + b) / 2, by + 18, 10.5, 600, "ep", "middle", b - a + 4);
  }
  return by + 22;
}

double experts(Pen& o, const Ctx& x, double left, double y, double W) {
  const int drawn = std::min(x.c.model.experts, kMaxExperts);
  const std::vector<GpuPlacement> ep = x.group(Axis::EP), etp = x.group(Axis::ETP);
  y = experts_heading(o, x, ep, left, y, W, drawn);
  // router and shared experts at the left, the experts' grid on the right
  const double side_w = 70, grid_x = left + side_w + 12, grid_w = W - side_w - 12, rh = 22;
  const ExpertGrid gr = expert_grid(grid_x, y, grid_w, drawn);
  router_and_shared(o, x, left, y, side_w, rh);
  for (int e = 0; e < drawn; ++e) expert_cell(o, x, gr, e, ep, etp);
  double by = y + gr.rows * (gr.cell_h + gr.gap) + 2;
  if (x.c.plan.ep > 1 && gr.rows == 1) by = ep_brackets(o, gr, ep, by);
  return std::max(by, y + 80) + 6;
}

// ---- the opened layer --------------------------------------------------------------------------------
// The attention block's matrices: MLA's down- and up-projections, or WQ, WK, WV; and WO.
std::vector<Matrix> attention_matrices(const ModelSpec& m, const std::vector<GpuPlacement>& tp, int T) {
  const double qcols = static_cast<double>(m.heads) * m.head_dim, kvcols = static_cast<double>(m.kv_heads) * m.head_dim;
  std::vector<Matrix> attn;
  if (is_mla(m)) {
    attn.push_back({"WQ↓",
                    {"q-LoRA " + fg::integer(m.q_lora_rank), "q-LoRA"},
                    std::max(m.q_lora_rank, 1) * 2.0,
                    m.q_lora_rank > 0 ? replicated("WQ↓") : std::vector<Piece>{}});
    attn.push_back({"WQ↑", {std::to_string(m.heads) + " heads"}, qcols, tp_pieces(tp, Range::Heads, m.heads, T, "WQ↑")});
    attn.push_back({"WKV↓", {"KV latent " + fg::integer(m.kv_lora_rank), "latent"}, m.kv_lora_rank * 2.0, replicated("WKV↓")});
    attn.push_back({"WKV↑", {std::to_string(m.heads) + " heads"}, qcols, tp_pieces(tp, Range::Heads, m.heads, T, "WKV↑")});
    attn.push_back({"WO", {"row-parallel", "row-par."}, qcols, tp_pieces(tp, Range::Heads, m.heads, T, "WO")});
  } else {
    const std::vector<std::string> kv = {std::to_string(m.kv_heads) + " KV heads", std::to_string(m.kv_heads) + " KV"};
    attn.push_back({"WQ", {std::to_string(m.heads) + " heads"}, qcols, tp_pieces(tp, Range::Heads, m.heads, T, "WQ")});
    attn.push_back({"WK", kv, kvcols, tp_pieces(tp, Range::KvHeads, m.kv_heads, T, "WK")});
    attn.push_back({"WV", kv, kvcols, tp_pieces(tp, Range::KvHeads, m.kv_heads, T, "WV")});
    attn.push_back({"WO", {"row-parallel", "row-par."}, qcols, tp_pieces(tp, Range::Heads, m.heads, T, "WO")});
  }
  return attn;
}

// The dense MLP's matrices (none when the model has no dense MLP).
std::vector<Matrix> mlp_matrices(const ModelSpec& m, const std::vector<GpuPlacement>& tp, int T) {
  if (m.ffn_hidden <= 0) return {};
  const int f = m.ffn_hidden;
  const std::string ffn = "FFN " + fg::integer(f);
  auto p = [&](const std::string& name) { return tp_pieces(tp, Range::Ffn, f, T, name); };
  if (m.gated_mlp)
    return {{"W gate", {ffn}, double(f), p("W gate")},
            {"W up", {ffn}, double(f), p("W up")},
            {"W down", {"row-parallel"}, double(f), p("W down")}};
  return {{"W in", {ffn}, double(f), p("W in")}, {"W out", {"row-parallel"}, double(f), p("W out")}};
}

double opened_layer(Pen& o, const Ctx& x, double left, double y, double W, int i) {
  const ModelSpec& m = x.c.model;
  const int T = x.c.plan.tp;
  int stage = 0;
  for (const StageInfo& st : x.pl.stages)
    for (auto [a, b] : st.chunks)
      if (i >= a && i <= b) stage = st.stage;
  const bool moe = is_moe_layer(m, i);
  const std::string sub = "stage " + std::to_string(stage + 1) + " of " + std::to_string(x.c.plan.pp) +
                          " · TP = " + std::to_string(T) +
                          (T > 1 ? ": every matrix in " + std::to_string(T) + " vertical slices, one per TP rank"
                                 : ": matrices whole on one GPU");
  double cy = y + 22 + section(o, left, y, "Inside " + fg::layers(i, i) + (moe ? " (MoE)" : ""), sub, W);
  const std::vector<GpuPlacement> tp = x.group(Axis::TP);
  const double attn_h = 52;
  std::vector<Matrix> attn = attention_matrices(m, tp, T);
  std::vector<Matrix> mlp = moe ? std::vector<Matrix>{} : mlp_matrices(m, tp, T);
  // One row per block, each matrix's width proportional to its split dimension within the row.
  auto block = [&](std::vector<Matrix>& list, const std::string& caption, Range key, int total, size_t first_split) {
    const double cap_y = cy + 10;
    o.text("block", caption, left, cap_y, 11, 600, "muted");
    o.rect("rule", left, cap_y + 4, W, 1, "rule");
    const double box_y = cy + 30;  // room for the rank numbers above the slices
    row_of_matrices(o, list, left, box_y, W, attn_h, 12);
    if (T > 1) rank_labels(o, list[first_split], tp, key, total, box_y - 5);
    if (!x.narrow) o.text("hidden", "h = " + fg::integer(m.hidden), left - 6, box_y + attn_h / 2 + 4, 10, 400, "faint", "end");
    cy = box_y + attn_h + 34;
  };
  block(attn, "Attention", Range::Heads, m.heads, is_mla(m) ? 1 : 0);
  if (!mlp.empty()) block(mlp, m.gated_mlp ? "MLP (SwiGLU)" : "MLP", Range::Ffn, m.ffn_hidden, 0);
  if (moe) cy = experts(o, x, left, cy + 4, W);
  return cy;
}

// ---- sequence (CP) -----------------------------------------------------------------------------------
double sequence(Pen& o, const Ctx& x, double left, double y, double W) {
  const Workload& wl = x.c.workload;
  const double bh = 18;
  if (x.serve) {  // a sequence is its prompt (prefilled at once) and the tokens decoded one by one
    // A mix of lengths: the mean request (core/plan.h mean_lengths).
    const MeanLengths mean = mean_lengths(wl);
    const double prompt = mean.prompt_len, n = prompt + mean.output_len;
    const double by = y + 10 +
                      section(o, left, y,
                              (wl.length_mix.empty() ? "Each sequence: " : "The mean request: ") + fg::integer(prompt) + " prompt + " +
                                  fg::integer(n - prompt) + " output tokens",
                              "whole on every GPU (CP is modelled for training)", W);
    const double xp = left + prompt / n * W;
    o.rect("prompt", left, by, xp - left, bh, "cp");
    o.rect("decode", xp, by, left + W - xp, bh, "cp");
    const std::string a = "prompt: prefill (TTFT)", b = "decode (TPOT each)";
    if (fg::measure_text(a, 10.5, 600) <= xp - left - 6)
      o.text("bar_label", a, left + (xp - left) / 2, by + 13, 10.5, 600, "text", "middle");
    if (fg::measure_text(b, 10.5, 600) <= left + W - xp - 6)
      o.text("bar_label", b, xp + (left + W - xp) / 2, by + 13, 10.5, 600, "white", "middle");
    o.rect("bar_frame", left, by, W, bh);
    o.rect("region", left, by, W, bh).hit = "request";
    o.text("axis", "0", left, by + bh + 12, 10, 400, "faint");
    o.text("axis", fg::integer(n), left + W, by + bh + 12, 10, 400, "faint", "end");
    return by + bh + 18;
  }
  const int C = x.c.plan.cp, s = wl.seq_len;
  const std::vector<GpuPlacement> reps = x.group(Axis::CP);
  const std::string sub = C > 1 ? "CP = " + std::to_string(C) + ": each GPU holds " + std::to_string(reps[0].seq_chunks.size()) +
                                      " chunks of every sequence, all layers (load-balanced causal split)"
                                : std::string("CP = 1: every GPU sees whole sequences");
  const double by = y + 10 + section(o, left, y, "Sequence of " + fg::integer(s) + " tokens", sub, W);
  if (C <= kMaxCp) {
    for (const GpuPlacement& g : reps)
      for (auto [a, b] : g.seq_chunks) {
        const double x0 = left + static_cast<double>(a) / s * W, x1 = left + static_cast<double>(b) / s * W;
        FigureRect& r = o.rect("chunk", x0, by, x1 - x0, bh, "cp", g.cp, C);
        r.hit = "chunk", r.rank = g.rank, r.begin = a, r.end = b;
        if (x0 > left) o.rect("slice_gap", x0, by, 1, bh);
        if (x1 - x0 > 18 && C > 1) {
          FigureText& t = o.text("chunk_label", std::to_string(g.cp), (x0 + x1) / 2, by + 13, 10.5, 600, "cp", "middle");
          t.tone_index = g.cp, t.tone_count = C, t.on_fill = true;
        }
      }
  } else {
    o.rect("chunk", left, by, W, bh, "cp");
  }
  o.rect("bar_frame", left, by, W, bh);
  o.text("axis", "0", left, by + bh + 12, 10, 400, "faint");
  o.text("axis", fg::integer(s), left + W, by + bh + 12, 10, 400, "faint", "end");
  if (C > 1) o.text("axis", "numbers = CP rank", left + W / 2, by + bh + 12, 10, 400, "faint", "middle");
  return by + bh + 18;
}

// ---- how CP ranks exchange K/V ------------------------------------------------------------------------
// The three ways context-parallel attention gets every key and value to every query (Plan::cp_comm):
// a ring passing K/V chunks from rank to rank, cp − 1 hops per layer, each hidden behind the
// attention of the chunk in hand (Liu et al. 2023, Ring Attention; Megatron-LM's CP); one all-gather
// of the K/V of the whole sequence per layer, exposed (Llama 3, arXiv:2407.21783 §3.3.2); or
// all-to-alls that regroup the sequence shards into head shards and back (Jacobs et al. 2023,
// DeepSpeed-Ulysses). Drawn side by side, the plan's own in colour with its traffic from the
// estimate's CP rows; the others greyed, for comparison.
double cp_exchange(Pen& o, const Ctx& x, double left, double y, double W) {
  const Plan& p = x.c.plan;
  const int C = p.cp;
  struct Way {
    CpComm mode;
    const char* title;
    const char* sub;
  };
  const Way ways[] = {{CpComm::Ring, "ring (p2p)", "K/V hop rank to rank (cp − 1), hidden"},
                      {CpComm::AllGather, "all-gather K/V (Llama 3)", "the whole sequence's K/V at once, exposed"},
                      {CpComm::AllToAll, "all-to-all of heads (Ulysses)", "sequence ↔ head shards, exposed"}};
  const double gap = 14;
  const bool side_by_side = W >= 540;
  // Narrower: a row per way, its words at the left and its ranks at the right (a 700-px embed);
  // a phone: the words above the ranks.
  const bool rows = !side_by_side && W >= 380;
  const double pw = side_by_side ? (W - 2 * gap) / 3 : W, ph = rows ? 44 : 76;
  const double text_w = rows ? W * 0.5 : pw;  // the words' width
  const int shown = std::min(C, 6);           // ranks drawn: the first shown − 1 and the last
  auto rank_of = [&](int i) { return i == shown - 1 ? C - 1 : i; };
  const char* mine = "";
  for (const Way& way : ways)
    if (way.mode == p.cp_comm) mine = way.title;
  double cy = y + 10 + section(o, left, y, "How the CP ranks exchange K/V", std::string("this plan's: ") + mine + ", in colour", W);
  double bottom = cy;
  for (int k = 0; k < 3; ++k) {
    const Way& way = ways[k];
    const bool on = way.mode == p.cp_comm;
    const double px = side_by_side ? left + k * (pw + gap) : left, py = side_by_side ? cy : cy + k * (ph + 8);
    o.text("block", way.title, px, py + 10, 11, on ? 700 : 600, on ? "cp" : "faint", "start", text_w);
    o.text("block_sub", way.sub, px, py + 24, 10, 400, on ? "muted" : "faint", "start", text_w);
    // the ranks: boxes in a row (below the words, or beside them)
    const double dx = rows ? px + text_w + 8 : px, dw = rows ? pw - text_w - 8 : pw;
    const double bw = std::min(26.0, (dw - 8 * (shown - 1)) / shown), by = rows ? py + 2 : py + 34, bh = 16;
    const double row_w = shown * bw + (shown - 1) * 8, bx0 = dx + (dw - row_w) / 2;
    for (int i = 0; i < shown; ++i) {
      const double bx = bx0 + i * (bw + 8);
      const bool dots = C > shown && i == shown - 2;  // "…" stands for the ranks not drawn
      if (on) o.rect("cp_rank", bx, by, bw, bh, "cp", rank_of(i), C);
      else o.rect("kind_box", bx, by, bw, bh);
      FigureText& t = o.text("cp_rank_label", dots ? "…" : std::to_string(rank_of(i)), bx + bw / 2, by + 12, 10, 600,
                             on ? "cp" : "faint", "middle");
      if (on && !dots) t.tone_index = rank_of(i), t.tone_count = C, t.on_fill = true;
    }
    const std::string tone = on ? "cp" : "faint";
    const double lw = on ? 1.5 : 1;
    if (way.mode == CpComm::Ring) {  // each to the next, and the last back to the first under the row
      for (int i = 0; i + 1 < shown; ++i) {
        const double x1 = bx0 + i * (bw + 8) + bw, x2 = x1 + 8;
        o.line("arrow", x1, by + bh / 2, x2, by + bh / 2, lw, tone);
      }
      const double yb = by + bh + 10, xl = bx0 + bw / 2, xr = bx0 + (shown - 1) * (bw + 8) + bw / 2;
      o.line("link", xr, by + bh, xr, yb, lw, tone);
      o.line("link", xr, yb, xl, yb, lw, tone);
      o.line("arrow", xl, yb, xl, by + bh, lw, tone);
    } else if (way.mode == CpComm::AllGather) {  // every rank onto one bus and back to all
      const double yb = by + bh + 10;
      o.line("link", bx0 + bw / 2, yb, bx0 + (shown - 1) * (bw + 8) + bw / 2, yb, on ? 2.5 : 1.5, tone);
      for (int i = 0; i < shown; ++i) o.line("arrow", bx0 + i * (bw + 8) + bw / 2, yb, bx0 + i * (bw + 8) + bw / 2, by + bh, lw, tone);
    } else {  // every pair exchanges a share: crossing lines under the row
      const double yb = by + bh + 12;
      for (int i = 0; i < shown; ++i)
        for (int j = 0; j < shown; ++j)
          if (i != j && std::abs(i - j) <= 2)
            o.line("link", bx0 + i * (bw + 8) + bw / 2, by + bh, bx0 + j * (bw + 8) + bw / 2, yb, on ? 1 : 0.75, tone);
    }
    bottom = std::max(bottom, py + ph - 8);
  }
  // The plan's own: its CP traffic per GPU per step, from the estimate.
  double bytes = 0, time_s = 0, exposed_s = 0;
  Link link = Link::NVLink;
  for (const CommOp& op : x.e.comm)
    if (op.axis == Axis::CP) bytes += op.bytes, time_s += op.time_s, exposed_s += op.exposed_s, link = op.link;
  if (bytes > 0) {
    const std::string s = "this plan: " + fg::bytes(bytes) + " per GPU per step over " +
                          (link == Link::NVLink ? x.c.cluster.node_link : "the scale-out network") + " in " + fg::seconds(time_s) +
                          ", " + (exposed_s > 0 ? fg::seconds(exposed_s) + " exposed" : "hidden");
    bottom += 12 + o.wrapped("note", s, left, bottom + 12, 11, 400, "muted", W, 14);
  }
  return bottom;
}

// ---- replicas (DP) -----------------------------------------------------------------------------------
double replicas(Pen& o, const Ctx& x, double left, double y, double W) {
  const Plan& p = x.c.plan;
  const Workload& w = x.c.workload;
  std::string title, sub, first, second;
  int R;
  if (x.serve) {  // DP divides the request stream; replicas never talk
    const InferenceEstimate& inf = x.e.inference;
    R = inf.replicas;
    // Without folding, EP ranks are attention replicas too (attention data-parallel with expert-parallel
    // MoE): R = dp × ep attention copies, each serving its own requests.
    title = R != p.dp ? "Requests: " + fg::integer(R) + " attention replicas (DP " + fg::integer(p.dp) + " × EP " +
                            std::to_string(p.ep) + ")"
                      : "Requests: DP = " + fg::integer(p.dp);
    sub = "each replica serves its own batch of " + fg::integer(w.batch) + " sequence" + (w.batch > 1 ? "s" : "");
    const bool shared_experts = is_moe(x.c.model) && p.ep > 1;  // the replicas' tokens meet at the experts
    const bool gather = p.ep_dispatcher == EpDispatcher::AllGather;
    first = shared_experts
                ? "Attention is copied " + fg::integer(R) + "×; the experts are split over EP " + std::to_string(p.ep) +
                      (gather ? ": every replica's tokens are all-gathered to every EP rank, and the experts' outputs summed "
                                "back by a reduce-scatter."
                              : ": every replica's tokens travel all-to-all to their experts' GPUs and back.")
            : R > 1 ? "Full copies of the model; between replicas there is no model communication at all."
                    : "One copy of the model serves every request.";
    second = fg::short_count(inf.output_tokens_per_s_per_replica) + " tokens/s per replica × " + fg::integer(R) + " = " +
             fg::short_count(inf.output_tokens_per_s_total) + " tokens/s";
  } else {
    R = x.e.mesh.dp_attn;
    const std::string zero = p.zero > 0                ? "ZeRO-" + std::to_string(p.zero)
                             : p.distributed_optimizer ? "distributed optimizer (ZeRO-1)"
                                                       : "no ZeRO";
    const GroupInfo* grad = find_group(x.pl, Axis::DPGrad);
    title = "Batch: DP = " + fg::integer(p.dp) +
            (p.etp > 0  ? ""
             : p.ep > 1 ? " × EP " + std::to_string(p.ep) + " = " + fg::integer(R) + " copies of the dense weights"
                        : "");
    sub = "global batch " + fg::integer(w.global_batch) + " = micro-batch " + std::to_string(p.micro_batch) + " × " +
          fg::integer(x.e.mesh.num_micro_batches) + " micro-batches × " + fg::integer(R) + " replica" + (R > 1 ? "s" : "");
    first = R > 1 ? "Each replica: everything above, on its own share of the batch." : "No data parallelism: one copy of the weights.";
    second = grad && grad->size > 1 ? "Gradients reduced over " + fg::integer(grad->size) + " GPUs per step · " + zero +
                                          (p.zero > 0 || p.distributed_optimizer ? " shards state over them" : "")
                                    : zero;
  }
  const double cy = y + 12 + section(o, left, y, title, sub, W), ch = 26;
  const int shown = std::min(R, W >= 300 ? 6 : 3);
  const double cw = std::clamp(W - (shown - 1) * 14 - 40, 40.0, 92.0);
  for (int k = shown - 1; k >= 0; --k) o.rect("replica_stack", left + k * 14, cy, cw, ch, "dp", k, shown);
  o.text("replica_count", R > 1 ? fg::integer(R) + " replicas" : "one replica", left + 8, cy + 17, 11, 600, "text", "start", cw - 12);
  const double tx = left + cw + (shown - 1) * 14 + 14;
  FigureRect& r = o.rect("region", left, cy, cw + (shown - 1) * 14, ch);
  r.hit = "replicas", r.count = R;
  if (fg::measure_text(first, 11.5) <= left + W - tx && fg::measure_text(second, 11.5) <= left + W - tx) {
    o.text("note", first, tx, cy + 10, 11.5, 400, "text", "start", left + W - tx);
    o.text("note", second, tx, cy + 25, 11.5, 400, "muted", "start", left + W - tx);
    return cy + ch + 6;
  }
  // no room beside the stack: the two sentences below it, wrapped
  double ny = cy + ch + 16;
  ny += o.wrapped("note", first, left, ny, 11.5, 400, "text", W, 15);
  ny += o.wrapped("note", second, left, ny, 11.5, 400, "muted", W, 15);
  return ny - 9;
}

std::vector<fg::LegendItem> legend_items(const Ctx& x) {
  std::vector<fg::LegendItem> items = {{"TP rank (slice)", "tp"}, {"PP stage", "pp"}, {"CP rank (tokens)", "cp"}};
  if (x.c.model.experts > 0) items.push_back({"EP rank (whole experts)", "ep"});
  if (x.c.plan.etp > 0) items.push_back({"ETP rank", "etp"});
  items.push_back({"DP replica", "dp"});
  items.push_back({"replicated (every GPU holds it)", "muted", "hatch"});
  items.push_back({"darker = higher rank", "shade"});
  return items;
}

}  // namespace

int default_cuts_layer(const ModelSpec& m) {
  // The first i ≥ dense_layers with (i + 1) a multiple of moe_layer_step (core/model.h is_moe_layer).
  const long long step = std::max(1, m.moe_layer_step), first = (m.dense_layers + step) / step * step - 1;
  return is_moe(m) ? static_cast<int>(std::min<long long>(m.layers - 1, first)) : 0;
}

Figure cuts_scene(const Resolved& r, const Estimate& estimate, double width, int layer) {
  const Config& c = r.config;
  const SceneInput e = scene_input(r, estimate);
  Figure f;
  f.view = "cuts";
  f.width = width;
  Pen o{f};
  const Ctx x(c, e, width);
  if (layer < 0 || layer >= c.model.layers) layer = default_cuts_layer(c.model);
  // A phone-wide frame stacks the depth bar above the opened layer, each the whole width; wider
  // frames put them side by side.
  const bool stacked = width < k_stacked_below;
  const double depth_h = stacked ? std::clamp(6.0 * c.model.layers, 200.0, 300.0) : 0;
  const double rx = stacked ? kPad : kPad + x.depth_w + 28, rw = width - rx - kPad, ry = stacked ? kHead + depth_h + 30 : kHead;
  double y = opened_layer(o, x, rx, ry, rw, layer);
  y = sequence(o, x, rx, y + 14, rw);
  if (!x.serve && c.plan.cp > 1) y = cp_exchange(o, x, rx, y + 20, rw);
  const double end = replicas(o, x, rx, y + 24, rw);
  Figure probe;
  const std::vector<fg::LegendItem> items = legend_items(x);
  const double legend_h = fg::legend(probe, items, kPad, 0, width - 2 * kPad);
  f.height = (stacked ? end + 18 : std::max(end + 18, 380.0)) + legend_h + 4;
  depth(o, x, kPad, kHead, stacked ? depth_h : f.height - kHead - legend_h - 14, layer);
  const double ly = f.height - legend_h;
  o.rect("rule", kPad, ly - 8, width - 2 * kPad, 1, "rule");
  fg::legend(f, items, kPad, ly, width - 2 * kPad);
  return f;
}

}  // namespace cutlab
