#include "core/scene_placement.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

// [SECTION] index: context (memory, link bytes) · header · the three levels (full, cells, stages)
// · links · the load balancer (serving) · legend.

namespace cutlab {

namespace {

namespace fg = figure;
constexpr double kPad = 16;

// The level of detail: every GPU labelled, every GPU a cell, or one row per pipeline stage.
enum class Level { Full, Cells, Stages };

Level level_of(int gpus) { return gpus <= 64 ? Level::Full : gpus <= 1024 ? Level::Cells : Level::Stages; }

// The figure's `level` field.
const char* level_name(Level l) {
  switch (l) {
    case Level::Full: return "full";
    case Level::Cells: return "cells";
    default: return "stages";
  }
}

// What one stage's GPUs hold, in the order the bars stack (training or serving parts).
struct StageMem {
  std::vector<std::pair<std::string, double>> parts;  // tone, bytes
  double total = 0, capacity = 0;
  bool fits = true;
};

struct Traffic {
  double bytes = 0;
  std::vector<std::pair<Axis, double>> by_axis;  // in order of first appearance
  void add(Axis axis, double b) {
    bytes += b;
    for (auto& [a, v] : by_axis)
      if (a == axis) {
        v += b;
        return;
      }
    by_axis.push_back({axis, b});
  }
  double of(Axis axis) const {
    for (auto& [a, v] : by_axis)
      if (a == axis) return v;
    return 0;
  }
};

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// "TP 960 GiB · PP 256 MiB", heaviest first.
std::string axis_list(const Traffic& t) {
  std::vector<std::pair<Axis, double>> v = t.by_axis;
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::string s;
  for (auto& [a, b] : v) s += (s.empty() ? "" : " · ") + upper(name_of(a)) + " " + fg::bytes(b);
  return s;
}

// Stroke width of a link moving `bytes` per GPU: 1.5 px at 64 MiB, growing with the logarithm.
double thickness(double bytes) {
  if (!(bytes > 0)) return 0;
  return std::min(12.0, 1.5 + 2.2 * std::log10(1 + bytes / 67108864.0));
}

using Pen = figure::Pen;

struct Ctx {
  const Config& c;
  const SceneInput& e;
  const Placement& pl;
  double W;
  bool serve;
  Traffic nvlink, scaleout;
  std::string per;  // "per GPU per step"
  // Serving with some instances straddling nodes: e.comm is a straddling instance's, while the
  // instances placed whole inside a node (core/serving_instances.h) keep every group on the node's
  // link. The NVLink line then carries a whole instance's bytes and the scale-out line the
  // straddler's, each line saying whose ("8 instances: ", "1 instance: "); empty otherwise.
  std::string nvlink_who, scaleout_who;
  int gpus, gn, nodes;

  Ctx(const Config& c_, const SceneInput& e_, double w)
      : c(c_),
        e(e_),
        pl(e_.placement),
        W(w),
        serve(e_.serving),
        gpus(e_.placement.gpus),
        gn(e_.placement.gpus_per_node),
        nodes(e_.placement.nodes) {
    for (const CommOp& op : e.comm) traffic(op.link).add(op.axis, op.bytes);
    per = serve ? "per GPU (prefill + a decode step)" : "per GPU per step";
    const InferenceEstimate& s = e.inference;
    if (serve && s.instances_whole > 0 && s.instances_whole < s.instances && gpus / s.instances <= gn && scaleout.bytes > 0) {
      nvlink = {};
      for (const CommOp& op : e.comm) nvlink.add(op.axis, op.bytes);
      auto who = [](long long n) { return fg::integer(double(n)) + (n == 1 ? " instance: " : " instances: "); };
      nvlink_who = who(s.instances_whole);
      scaleout_who = who(s.instances - s.instances_whole);
    }
  }
  const std::string& who(Link l) const { return l == Link::NVLink ? nvlink_who : scaleout_who; }
  Traffic& traffic(Link l) { return l == Link::NVLink ? nvlink : scaleout; }
  const Traffic& traffic(Link l) const { return l == Link::NVLink ? nvlink : scaleout; }
  GpuPlacement gpu(int rank) const { return gpu_placement(e.resolved, rank); }
  StageMem mem(int stage) const {
    StageMem m;
    if (serve) {
      const StageMemory& s = e.memory.per_stage[stage];
      m.parts = {{"weights", s.weights_bytes}, {"kv", s.kv_cache_bytes}, {"activations", s.activations_bytes}};
      m.total = s.total_bytes, m.capacity = s.capacity_bytes, m.fits = s.fits;
    } else {
      const StageMemory& s = e.memory.per_stage[stage];
      m.parts = {{"weights", s.weights_bytes},
                 {"grads", s.grads_bytes},
                 {"optimizer", s.optimizer_bytes},
                 {"activations", s.activations_bytes}};
      m.total = s.total_bytes, m.capacity = s.capacity_bytes, m.fits = s.fits;
    }
    return m;
  }
  int size_of(Axis axis) const {
    const Plan& p = c.plan;
    switch (axis) {
      case Axis::TP: return p.tp;
      case Axis::CP: return p.cp;
      case Axis::EP: return p.ep;
      case Axis::DP: return p.dp;
      case Axis::PP: return p.pp;
      case Axis::ETP: return e.mesh.etp;
      default: return 1;
    }
  }
  const GroupInfo* group(Axis axis) const { return find_group(pl, axis); }
};

int coord_of(const GpuPlacement& g, Axis axis) {
  switch (axis) {
    case Axis::TP: return g.tp;
    case Axis::CP: return g.cp;
    case Axis::EP: return g.ep;
    case Axis::DP: return g.dp;
    case Axis::PP: return g.pp;
    case Axis::ETP: return g.etp;
    default: return 0;
  }
}

// The axis that varies between the GPUs of one node (the cells' colour when zoomed out): the
// innermost axis of size > 1 whose stride is below the node size.
Axis inner_axis(const Ctx& x) {
  const Plan& p = x.c.plan;
  const bool folding = p.etp > 0;
  std::vector<std::pair<Axis, long long>> cands;  // axis, stride
  const std::pair<Axis, std::pair<int, long long>> all[] = {{Axis::TP, {p.tp, x.pl.stride_tp}},
                                                            {Axis::CP, {p.cp, x.pl.stride_cp}},
                                                            {Axis::EP, {folding ? 1 : p.ep, x.pl.stride_ep}},
                                                            {Axis::DP, {p.dp, x.pl.stride_dp}},
                                                            {Axis::PP, {p.pp, x.pl.stride_pp}}};
  for (auto& [a, v] : all)
    if (v.first > 1 && v.second < x.gn) cands.push_back({a, v.second});
  std::stable_sort(cands.begin(), cands.end(), [](auto& a, auto& b) { return a.second < b.second; });
  if (folding && p.ep > 1 && cands.empty()) return Axis::EP;
  return cands.empty() ? Axis::PP : cands.front().first;
}

// The axis that varies from node to node inside a stage (CP or EP groups spread over nodes), if any.
std::optional<Axis> node_axis(const Ctx& x) {
  const Plan& p = x.c.plan;
  const bool folding = p.etp > 0;
  std::vector<std::pair<Axis, long long>> cands;
  if (p.cp > 1 && x.pl.stride_cp * p.cp > x.gn) cands.push_back({Axis::CP, x.pl.stride_cp});
  const int ep = folding ? 1 : p.ep;
  if (ep > 1 && x.pl.stride_ep * ep > x.gn) cands.push_back({Axis::EP, x.pl.stride_ep});
  std::stable_sort(cands.begin(), cands.end(), [](auto& a, auto& b) { return a.second < b.second; });
  if (folding && p.ep > 1 && static_cast<long long>(x.e.mesh.etp) * p.ep > x.gn) return Axis::EP;
  if (cands.empty()) return std::nullopt;
  return cands.front().first;
}

// Under MoE Parallel Folding (plan.etp set) the experts have their own mesh, ETP × EP × EDP, over
// the same GPUs as the attention mesh (Liu et al. 2025, arXiv:2504.14960 §3): the expert axis that
// varies fastest from GPU to GPU, drawn as a strip under each cell (ETP when it slices the
// experts, else EP); none without folding, or when neither splits the experts.
std::optional<Axis> expert_inner_axis(const Ctx& x) {
  const Plan& p = x.c.plan;
  if (p.etp <= 0) return std::nullopt;
  if (x.e.mesh.etp > 1) return Axis::ETP;
  if (p.ep > 1) return Axis::EP;
  return std::nullopt;
}

// "ZeRO-3 · 1/64 shard" when model states are sharded over the data-parallel group (training).
std::string zero_group(const Ctx& x) {
  const Plan& p = x.c.plan;
  if (x.serve || !(p.zero > 0 || p.distributed_optimizer)) return "";
  const GroupInfo* g = x.group(Axis::DPGrad);
  if (!g || g->size <= 1) return "";
  return (p.zero > 0 ? "ZeRO-" + std::to_string(p.zero) : std::string("dist. optimizer")) + " · 1/" + fg::integer(g->size) + " shard";
}

// From the first layer of the first non-empty chunk to the last layer held.
std::string stage_layers_text(const StageInfo& st) {
  int first = 0, last = -1;
  for (auto [a, z] : st.chunks)
    if (z >= a) first = last < 0 ? a : first, last = std::max(last, z);
  if (last < 0) return st.embedding ? "embedding" : "output layer";
  return fg::layers(first, last);
}

// ---- header --------------------------------------------------------------------------------------
void header(Pen& o, const Ctx& x) {
  const Cluster& cl = x.c.cluster;
  o.text("title",
         fg::integer(x.gpus) + " × " + cl.gpu + " in " + fg::integer(x.nodes) + " node" + (x.nodes > 1 ? "s" : "") + " of " +
             std::to_string(x.gn),
         kPad, 20, 13, 650);
  // the long form when it fits the width, else the same numbers in fewer words (a 500-px frame)
  const std::string nv = fg::integer(cl.nvlink_bytes_per_s / 1e9), so = fg::integer(cl.scaleout_bytes_per_s / 1e9);
  const std::string& nl = cl.node_link;
  const std::string order = placed_rank_order(x.c);
  std::string sub = nl + " " + nv + " GB/s per GPU inside a node · scale-out " + so + " GB/s per GPU between nodes · rank order " +
                    order;
  // (a phone: the bandwidths alone; the rank order is in the controls)
  if (fg::measure_text(sub, 11.5, 400) > x.W - 2 * kPad)
    sub = fg::first_fit({"per GPU: " + nl + " " + nv + " GB/s, scale-out " + so + " GB/s · rank order " + order,
                         "per GPU: " + nl + " " + nv + " GB/s, scale-out " + so + " GB/s"},
                        x.W - 2 * kPad, 11.5, 400);
  o.text("subtitle", sub, kPad, 38, 11.5, 400, "muted", "start", x.W - 2 * kPad);
  const GroupInfo* tp = x.group(Axis::TP);
  if (tp && tp->size > 1 && tp->nodes_spanned > 1) {
    const std::string msg = "⚠ each TP group spans " + std::to_string(tp->nodes_spanned) + " nodes: its collectives use scale-out";
    const double w = fg::measure_text(msg, 12, 700) + 16;
    o.rect("warn_pill", x.W - kPad - w, 4, w, 20, "warn");
    o.text("warning", msg, x.W - kPad - w + 8, 18, 12, 700, "warn");
  }
}

// A memory bar: the parts stacked over the capacity (or the total when it overflows), and a tick at capacity.
void mem_bar(Pen& o, double x, double y, double w, double h, const StageMem& m, int stage) {
  const double cap = std::max(m.capacity, m.total);
  o.rect("mem", x, y, w, h, "free").stage = stage;
  double cx = x;
  for (auto& [tone, b] : m.parts) {
    const double ww = cap > 0 ? b / cap * w : 0;
    if (ww > 0) o.rect("mem", cx, y, ww, h, tone).stage = stage;
    cx += ww;
  }
  const double cap_x = x + (cap > 0 ? m.capacity / cap * w : 0);
  o.rect("cap", cap_x - 1, y - 2, 2, h + 4, m.fits ? "text" : "warn");
}

// A link key's label, longest form first: the link, where it runs, and whose traffic per step.
std::vector<std::string> link_key_forms(const Ctx& x, Link tier) {
  const Traffic& t = x.traffic(tier);
  const std::string name = tier == Link::NVLink ? x.c.cluster.node_link : std::string("scale-out"),
                    what = t.bytes > 0 ? x.who(tier) + axis_list(t) : std::string("no traffic"), per = t.bytes > 0 ? " " + x.per : "";
  return {name + (tier == Link::NVLink ? " inside nodes · " : " between nodes · ") + what + per, name + " · " + what + per,
          name + " · " + what, name};
}

// The two keys go one under the other when either does not fit beside the other whole (a phone, or
// long traffic lists); the views leave kLinkKeyRow more for it.
constexpr double kLinkKeyRow = 18;
bool link_key_stacked(const Ctx& x) {
  const double half = (x.W - 2 * kPad) / 2;
  return fg::measure_text(link_key_forms(x, Link::NVLink)[0], 11.5, 600) > half - 64 ||
         fg::measure_text(link_key_forms(x, Link::ScaleOut)[0], 11.5, 600) > half - 64;
}

// Two link lines with their width, as a key under the zoomed-out views. Returns the height of its
// second row (0 beside each other).
double link_key(Pen& o, const Ctx& x, double left, double y) {
  const bool stacked = link_key_stacked(x);
  const double w = stacked ? x.W - 2 * kPad : (x.W - 2 * kPad) / 2;
  auto one = [&](Link tier, double xx, double yy) {
    const double th = thickness(x.traffic(tier).bytes);
    o.line("key_link", xx, yy, xx + 44, yy, std::max(1.0, th), th > 0 ? name_of(tier) : "rule");
    o.text("link_label", fg::first_fit(link_key_forms(x, tier), w - 64, 11.5, 600), xx + 54, yy + 4, 11.5, 600,
           th > 0 ? name_of(tier) : "faint", "start", w - 64);
  };
  one(Link::NVLink, left, y);
  if (stacked) one(Link::ScaleOut, left, y + kLinkKeyRow);
  else one(Link::ScaleOut, left + w, y);
  return stacked ? kLinkKeyRow : 0;
}

// ---- levels of detail ----------------------------------------------------------------------------
struct GpuBox {
  int rank = 0;
  double x = 0, y = 0, w = 0, h = 0;
  GpuPlacement g;
};
struct NodeBox {
  int n = 0;
  double x = 0, y = 0, w = 0, h = 0;
  std::vector<GpuBox> gpus;
};

struct Layout {
  std::vector<NodeBox> nodes;
  int node_cols = 1;
  double height = 0;
};

// Every GPU and what it holds (≤ 64 GPUs): nodes side by side in two columns.
Layout layout_full(const Ctx& x, double band) {
  Layout L;
  const double top = 58 + band, inner_w = x.W - 2 * kPad;
  const int N = x.nodes, per_node = std::min(x.gn, x.gpus);
  L.node_cols = N == 1 ? 1 : 2;
  const double node_w = (inner_w - (L.node_cols - 1) * 28) / L.node_cols;
  // a GPU's box at least 112 px wide, so that its lines ("FFN 14.3k–17.9k", "stage 1 +emb") fit
  // whole in a 500-px frame too; fewer columns, more rows
  int gcols = std::min(per_node, 8);
  while (gcols > 1 && (node_w - 20) / gcols < 112) gcols = (gcols + 1) / 2;
  const int grows = (per_node + gcols - 1) / gcols;
  const double cell_w = (node_w - 20 - (gcols - 1) * 8) / gcols;
  const ModelSpec& m = x.c.model;
  const int lines = 4 + (m.ffn_hidden ? 1 : 0) + (m.experts > 0 ? 1 : 0) + (x.c.plan.cp > 1 ? 1 : 0) + (zero_group(x).empty() ? 0 : 1);
  const double cell_h = 21 + 15 + 13 * lines + 20;
  const double node_h = 30 + grows * cell_h + (grows - 1) * 8 + 44;
  for (int n = 0; n < N; ++n) {
    NodeBox nd;
    nd.n = n;
    nd.x = kPad + (n % L.node_cols) * (node_w + 28), nd.y = top + (n / L.node_cols) * (node_h + 28);
    nd.w = node_w, nd.h = node_h;
    for (int k = 0; k < x.gn; ++k) {
      const int rank = n * x.gn + k;
      if (rank >= x.gpus) break;
      nd.gpus.push_back(
          {rank, nd.x + 10 + (k % gcols) * (cell_w + 8), nd.y + 30 + (k / gcols) * (cell_h + 8), cell_w, cell_h, x.gpu(rank)});
    }
    L.nodes.push_back(std::move(nd));
  }
  const int rows = (N + L.node_cols - 1) / L.node_cols;
  L.height = top + rows * node_h + (rows - 1) * 28 + (N > 1 ? (rows > 1 ? 44 : 52) : 6);
  return L;
}

// Every GPU as a cell (≤ 1,024 GPUs): cells shrink (16 → 7 px) until the nodes fit about 520 px.
Layout layout_cells(const Ctx& x, double band, double& cell) {
  Layout L;
  const double top = 58 + band, inner_w = x.W - 2 * kPad;
  const int N = x.nodes, gn = x.gn;
  const int gcols = gn <= 8 ? gn : static_cast<int>(std::ceil(std::sqrt(gn * 2.0)));
  const int grows = (std::min(gn, x.gpus) + gcols - 1) / gcols;
  cell = 16;
  double node_w = 0;
  int per_row = 1;
  for (;;) {
    node_w = gcols * cell + (gcols - 1) * 2 + 12;
    per_row = std::max(1, static_cast<int>(std::floor((inner_w + 12) / (node_w + 12))));
    if (std::ceil(static_cast<double>(N) / per_row) * (grows * (cell + 2) + 34) < 520 || cell <= 7) break;
    cell -= 1;
  }
  const double node_h = grows * (cell + 2) + 30;
  for (int n = 0; n < N; ++n) {
    NodeBox nd;
    nd.n = n;
    nd.x = kPad + (n % per_row) * (node_w + 12), nd.y = top + (n / per_row) * (node_h + 12);
    nd.w = node_w, nd.h = node_h;
    for (int k = 0; k < gn; ++k) {
      const int rank = n * gn + k;
      if (rank >= x.gpus) break;
      nd.gpus.push_back({rank, nd.x + 6 + (k % gcols) * (cell + 2), nd.y + 22 + (k / gcols) * (cell + 2), cell, cell, x.gpu(rank)});
    }
    L.nodes.push_back(std::move(nd));
  }
  const int rows = (N + per_row - 1) / per_row;
  L.height = top + rows * (node_h + 12) + 40 + (link_key_stacked(x) ? kLinkKeyRow : 0);
  return L;
}

void draw_gpu_full(Pen& o, const Ctx& x, const GpuBox& b) {
  const GpuPlacement& g = b.g;
  const Plan& p = x.c.plan;
  const ModelSpec& m = x.c.model;
  const StageInfo& st = x.pl.stages[g.pp];
  FigureRect& card = o.rect("gpu", b.x, b.y, b.w, b.h);
  card.hit = "gpu", card.rank = b.rank, card.ranks = 1, card.node = g.node, card.stage = g.pp, card.replica = g.replica;
  o.rect("stripe", b.x, b.y, b.w, 5, "pp", g.pp, p.pp);
  const double lx = b.x + 6, w = b.w - 12;
  double y = b.y + 20;
  o.text("gpu_name", "GPU " + std::to_string(b.rank), lx, y, 12, 700, "text", "start", w - 34);
  const GroupInfo* tp = x.group(Axis::TP);
  if (p.tp > 1)
    o.text("gpu_tp", "TP " + std::to_string(g.tp), b.x + b.w - 6, y, 10.5, 700, tp && tp->nodes_spanned > 1 ? "warn" : "tp", "end");
  y += 15;
  auto line = [&](const std::string& s, const std::string& tone, bool bold) {
    o.text("gpu_line", s, lx, y, 10.5, bold ? 600 : 400, tone, "start", w);
    y += 13;
  };
  const std::string tag = st.embedding && st.output ? "" : st.embedding ? " +emb" : st.output ? " +out" : "";
  line("stage " + std::to_string(g.pp + 1) + tag, "pp", true);
  std::string chunks;
  for (auto [a, z] : st.chunks)
    if (z >= a)  // a chunk of only the embedding or the loss shows in the tag
      chunks += (chunks.empty() ? "" : ", ") +
                (a == z ? "layer " + std::to_string(a + 1)
                        : (st.chunks.size() > 1 ? "" : "layers ") + std::to_string(a + 1) + "–" + std::to_string(z + 1));
  line(chunks, "pp", false);
  line("heads " + fg::span(g.heads_begin, g.heads_end), "tp", false);
  if (m.ffn_hidden) line("FFN " + fg::compact(g.ffn_begin) + "–" + fg::compact(g.ffn_end - 1), "tp", false);
  if (m.experts > 0) {
    const std::string ex = "experts " + fg::span(g.experts_begin, g.experts_end);
    // folding: where the GPU sits in the expert mesh (ETP × EP × EDP), beside what it holds
    const std::string at = p.etp > 0 ? " · EP " + std::to_string(g.ep) + (x.e.mesh.etp > 1 ? " ETP " + std::to_string(g.etp) : "")
                                     : "";
    line(at.empty() ? ex : fg::first_fit({ex + at, ex}, w, 10.5, 600), "ep", true);
  }
  if (p.cp > 1) {
    std::string s = "CP " + std::to_string(g.cp) + " · ";
    for (size_t i = 0; i < g.seq_chunks.size(); ++i) s += (i ? ", " : "") + fg::tokens(g.seq_chunks[i].first, g.seq_chunks[i].second);
    line(s, "cp", true);
  }
  line("DP replica " + std::to_string(g.replica), "dp", false);
  const std::string zg = zero_group(x);
  if (!zg.empty()) {  // "ZeRO-3 · 1/64 shard", shortened to what the card has room for
    std::string a = zg.substr(0, zg.size() - 6), b2 = a;
    const size_t dot = b2.find(" · ");
    if (dot != std::string::npos) b2.replace(dot, std::string(" · ").size(), " ");
    line(fg::first_fit({zg, a, b2}, w, 10.5, 600), "dp", true);
  }
  const StageMem mem = x.mem(g.pp);
  mem_bar(o, lx, b.y + b.h - 14, w, 7, mem, g.pp);
  o.text("gpu_memory", fg::gib(mem.total, 1) + " GiB", b.x + b.w - 7, b.y + b.h - 19, 10, 600, mem.fits ? "muted" : "warn", "end");
}

void draw_links_full(Pen& o, const Ctx& x, const Layout& L) {
  const double tv = thickness(x.nvlink.bytes);
  for (const NodeBox& nd : L.nodes) {
    const double by = nd.y + nd.h - 22;
    if (tv > 0) {
      o.line("bus", nd.x + 16, by, nd.x + nd.w - 16, by, tv, "nvlink");
      for (const GpuBox& g : nd.gpus)
        if (g.y + g.h > by - 20 && g.y + g.h < by)
          o.line("stub", g.x + g.w / 2, g.y + g.h, g.x + g.w / 2, by, std::max(1.0, tv / 2), "nvlink");
    } else {
      o.line("bus", nd.x + 16, by, nd.x + nd.w - 16, by, 1, "rule", true);
    }
    const std::string& nl = x.c.cluster.node_link;
    std::string label = x.nvlink.bytes > 0 ? nl + " · " + x.nvlink_who + axis_list(x.nvlink) + " " + x.per : nl + " · idle";
    // a narrow node: the bytes alone (the scale-out label and the legend say per what; the line's
    // colour says NVLink)
    if (x.nvlink.bytes > 0 && fg::measure_text(label, 11, 600) > nd.w - 40)
      label = fg::first_fit({nl + " · " + axis_list(x.nvlink), axis_list(x.nvlink)}, nd.w - 40, 11, 600);
    const double lw = std::min(fg::measure_text(label, 11, 600) + 12, nd.w - 40);
    o.rect("label_bg", nd.x + nd.w / 2 - lw / 2, by + 6, lw, 15);
    o.text("link_label", label, nd.x + nd.w / 2, by + 17, 11, 600, x.nvlink.bytes > 0 ? "nvlink" : "faint", "middle", nd.w - 40);
  }
  // Scale-out: one row of nodes → a spine below them; two columns → a spine in the gutter.
  if (x.nodes <= 1) return;
  const double ts = thickness(x.scaleout.bytes);
  const std::string tone = ts > 0 ? "scaleout" : "rule";
  const double lw = std::max(ts, 1.0);
  const bool dash = ts <= 0;
  double bottom = 0;
  for (const NodeBox& nd : L.nodes) bottom = std::max(bottom, nd.y + nd.h);
  double label_y;
  if (static_cast<int>(L.nodes.size()) <= L.node_cols) {
    const double sy = bottom + 22;
    double lo = 1e300, hi = -1e300;
    for (const NodeBox& nd : L.nodes) lo = std::min(lo, nd.x + nd.w / 2), hi = std::max(hi, nd.x + nd.w / 2);
    o.line("spine", lo, sy, hi, sy, lw, tone, dash);
    for (const NodeBox& nd : L.nodes) o.line("spine", nd.x + nd.w / 2, nd.y + nd.h, nd.x + nd.w / 2, sy, lw, tone, dash);
    label_y = sy + 18;
  } else {
    const double gx = L.nodes[0].x + L.nodes[0].w + 14;
    double top = 1e300;
    for (const NodeBox& nd : L.nodes) top = std::min(top, nd.y + nd.h / 2);
    o.line("spine", gx, top, gx, bottom + 14, lw, tone, dash);
    for (const NodeBox& nd : L.nodes) {
      const bool left = nd.x > gx;
      o.line("spine", left ? nd.x : nd.x + nd.w, nd.y + nd.h / 2, gx, nd.y + nd.h / 2, lw, tone, dash);
    }
    label_y = bottom + 30;
  }
  const std::string label = x.scaleout.bytes > 0
                                ? fg::first_fit({"scale-out network · " + x.scaleout_who + axis_list(x.scaleout) + " " + x.per,
                                                 "scale-out · " + x.scaleout_who + axis_list(x.scaleout) + " " + x.per,
                                                 "scale-out · " + axis_list(x.scaleout)},
                                                x.W - 2 * kPad, 11.5, 600)
                                : std::string("scale-out network · no traffic");
  o.text("link_label", label, x.W / 2, label_y, 11.5, 600, x.scaleout.bytes > 0 ? "scaleout" : "faint", "middle", x.W - 2 * kPad);
}

void draw_full(Pen& o, const Ctx& x, const Layout& L) {
  for (const NodeBox& nd : L.nodes) {
    FigureRect& r = o.rect("node", nd.x, nd.y, nd.w, nd.h);
    r.node = nd.n;
    std::vector<int> stages;
    for (const GpuBox& g : nd.gpus)
      if (std::find(stages.begin(), stages.end(), g.g.pp) == stages.end()) stages.push_back(g.g.pp);
    o.text("node_name", "node " + std::to_string(nd.n), nd.x + 10, nd.y + 19, 12, 700);
    std::string s;
    if (stages.size() == 1) {
      // the stage's layers when the node is wide enough (each card lists them too)
      const std::string st = "stage " + std::to_string(stages[0] + 1);
      s = fg::first_fit({st + " · " + stage_layers_text(x.pl.stages[stages[0]]), st}, nd.w - 70, 11.5, 600);
    } else {
      s = "stages ";
      for (size_t i = 0; i < stages.size(); ++i) s += (i ? ", " : "") + std::to_string(stages[i] + 1);
    }
    o.text("node_stage", s, nd.x + 60, nd.y + 19, 11.5, 600, "pp", "start", nd.w - 70);
    for (const GpuBox& g : nd.gpus) draw_gpu_full(o, x, g);
  }
  draw_links_full(o, x, L);
}

void draw_cells(Pen& o, const Ctx& x, const Layout& L, double cell, bool balancer) {
  const Axis inner = inner_axis(x);
  const std::string inner_tone = name_of(inner);
  const int inner_n = x.size_of(inner);
  const std::optional<Axis> expert = expert_inner_axis(x);
  const std::string expert_tone = expert ? name_of(*expert) : "";
  const int expert_n = expert ? x.size_of(*expert) : 1;
  for (const NodeBox& nd : L.nodes) {
    FigureRect& r = o.rect("node_small", nd.x, nd.y, nd.w, nd.h);
    r.node = nd.n;
    std::set<int> stages;
    for (const GpuBox& g : nd.gpus) stages.insert(g.g.pp);
    std::string st = stages.size() == 1 ? "stage " : "stages ";
    bool first = true;
    for (int s : stages) {
      if (!first) st += ",";
      st += std::to_string(s + 1);
      first = false;
    }
    const std::string head = fg::fit_text("n" + std::to_string(nd.n) + " · " + st, nd.w - 10, 10.5, 600);
    o.text("node_name", head, nd.x + 6, nd.y + 15, 10.5, 600, "pp", "start", nd.w - 10);
    if (balancer && !nd.gpus.empty()) {  // serving: the replica(s) the node's GPUs belong to
      int lo = nd.gpus[0].g.replica, hi = lo;
      for (const GpuBox& g : nd.gpus) lo = std::min(lo, g.g.replica), hi = std::max(hi, g.g.replica);
      const std::string s = lo == hi ? "r" + std::to_string(lo) : "r" + std::to_string(lo) + "–" + std::to_string(hi);
      if (fg::measure_text(s, 10.5, 600) <= nd.w - fg::measure_text(head, 10.5, 600) - 18)
        o.text("node_replica", s, nd.x + nd.w - 6, nd.y + 15, 10.5, 600, "dp", "end");
    }
    for (const GpuBox& g : nd.gpus) {
      const int c = coord_of(g.g, inner);
      FigureRect& cr = o.rect("cell", g.x, g.y, g.w, g.h, inner_tone, c, inner_n);
      cr.hit = "gpu", cr.rank = g.rank, cr.ranks = 1, cr.node = nd.n, cr.stage = g.g.pp, cr.replica = g.g.replica;
      // folding: the expert mesh's coordinate of the same GPU, a strip along the cell's bottom
      const double strip = expert ? std::max(3.0, std::round(g.h * 0.3)) : 0.0;
      if (expert) o.rect("cell_strip", g.x, g.y + g.h - strip, g.w, strip, expert_tone, coord_of(g.g, *expert), expert_n);
      const std::string label = std::to_string(c);
      if (cell >= 15 && fg::measure_text(label, 9.5, 600) <= g.w - 2) {
        FigureText& t = o.text("cell_label", label, g.x + g.w / 2, g.y + (g.h - strip) / 2 + 4, 9.5, 600, inner_tone, "middle");
        t.tone_index = c, t.tone_count = inner_n, t.on_fill = true;
      }
    }
  }
  const NodeBox& last = L.nodes.back();
  link_key(o, x, kPad, last.y + last.h + 22);
}

// One row per pipeline stage; in each, every distinct kind of node (the TP, CP, EP, ETP
// coordinates of its GPUs) once, with how many nodes are like it.
struct KindBox {
  int first = 0;  // the first node of this kind
  int count = 0;
};
struct StageRow {
  int stage = -1;  // −1: stages do not align with nodes (one row for all)
  long long nodes = 0;
  std::vector<KindBox> kinds;
};

constexpr int kMaxRows = 64;         // stage rows drawn; more are summarised in one line
constexpr int kMaxCellsPerBox = 72;  // GPUs drawn in a node kind (bigger domains: a cell per group of GPUs)
constexpr int kMaxCells = 16384;     // cells in the whole view

// The rows drawn (at most kMaxRows) and how many more there are.
struct StageRows {
  std::vector<StageRow> rows;
  int hidden = 0;
};

StageRows stage_rows(const Ctx& x) {
  const Plan& p = x.c.plan;
  const int gn = x.gn, N = x.nodes;
  const bool single = x.pl.stride_pp >= gn && x.pl.stride_pp % gn == 0;
  // A node's kind depends only on its first rank modulo the largest period of the TP, CP, EP
  // (and, under folding, expert-mesh) coordinates: one signature per residue.
  const bool folding = p.etp > 0;
  const long long period = std::max({x.pl.stride_tp * p.tp, x.pl.stride_cp * p.cp, x.pl.stride_ep * (folding ? 1 : p.ep),
                                     folding ? static_cast<long long>(x.gpus / p.pp) : 1LL});
  std::map<long long, int> sig_of_residue;
  std::map<std::vector<int>, int> sig_ids;
  std::map<int, StageRow> rows_by_stage;
  std::map<std::pair<int, int>, size_t> kind_index;  // (stage, sig) → index in the row
  for (int n = 0; n < N; ++n) {
    const long long r0 = static_cast<long long>(n) * gn;
    const int stage = single ? x.gpu(static_cast<int>(r0)).pp : -1;
    StageRow& row = rows_by_stage[stage];
    row.stage = stage;
    row.nodes++;
    // Instances laid out as a launcher places them (placement.h): a whole node's kind depends on where
    // its leftover GPUs fall in the straddling instances, (n·c) mod g; the last, partial node is its own.
    const long long lg = x.pl.launch_instance_gpus, left = lg > 0 ? gn - gn / lg * lg : 0;
    const long long k0 = lg <= 0 ? r0 % period : (n < x.gpus / gn ? (n * left) % lg : -1 - n);
    auto it = sig_of_residue.find(k0);
    if (it == sig_of_residue.end()) {
      std::vector<int> sig;
      for (long long r = r0; r < std::min<long long>(x.gpus, r0 + gn); ++r) {
        const GpuPlacement g = x.gpu(static_cast<int>(r));
        sig.insert(sig.end(), {g.tp, g.cp, g.ep, g.etp});
      }
      const int id = static_cast<int>(sig_ids.emplace(sig, static_cast<int>(sig_ids.size())).first->second);
      it = sig_of_residue.emplace(k0, id).first;
    }
    auto [kit, fresh] = kind_index.emplace(std::make_pair(stage, it->second), row.kinds.size());
    if (fresh) row.kinds.push_back({n, 1});
    else row.kinds[kit->second].count++;
  }
  StageRows out;
  for (auto& [s, r] : rows_by_stage) out.rows.push_back(std::move(r));
  out.hidden = std::max(0, static_cast<int>(out.rows.size()) - kMaxRows);
  if (out.hidden) out.rows.resize(kMaxRows);
  return out;
}

// The geometry of the stage view: columns, node-kind boxes and their cells, rows; the axes that
// colour the cells (inner) and the band over each box (outer); the PP spine.
struct StagesGeom {
  bool mem_column = true;
  double label_w = 0, count_w = 0, x0 = 0;
  int gcols = 1, per_box = 1, group = 1, grows = 1;  // group: GPUs per cell
  bool with_count = true;
  double extra = 0, box_w = 0;
  int shown = 1;  // kinds drawn per row
  double cell = 0, row_h = 0, box_h = 0, top = 0;
  Axis inner = Axis::PP;
  std::optional<Axis> outer;
  int inner_n = 1, outer_n = 0;
  double pp_bytes = 0, ax = 0;
  Link pp_link = Link::NVLink;
  bool layer_lists = true;  // every stage's layers listed; else the interleaved stages' counts of chunks
};

// A stage's layers as a list of its chunks ("1, 17, 33", "41–80"), numbered from 1; `chunks` their count.
std::string stage_layer_list(const StageInfo& st, int& chunks) {
  std::string s;
  chunks = 0;
  for (auto [a, z] : st.chunks)
    if (z >= a) s += (s.empty() ? "" : ", ") + std::to_string(a + 1) + (z > a ? "–" + std::to_string(z + 1) : ""), ++chunks;
  return s;
}

std::string stage_tag(const StageInfo& st) { return std::string(st.embedding ? " +emb" : "") + (st.output ? " +out" : ""); }

// The room for a stage's layers: under its name when the row has room for two lines, else beside it.
double stage_layers_w(const StagesGeom& g, int stage) {
  const double name_w = std::max(fg::measure_text("stage " + std::to_string(stage + 1), 11.5, 650), 52.0);
  return g.row_h >= 28 ? g.label_w - 10 : g.label_w - name_w - 8;
}

StagesGeom stages_geom(const Ctx& x, const std::vector<StageRow>& rows, double band) {
  StagesGeom g;
  const int gn = x.gn;
  // Narrow frames (an embed, a phone) drop the memory column and narrow the stage labels.
  g.mem_column = x.W >= 560;
  g.label_w = x.W >= 560 ? 176 : 96, g.count_w = g.mem_column ? 340 : 56;
  g.row_h = std::max(18.0, std::min(34.0, 540.0 / static_cast<double>(rows.size())));
  // Interleaved stages list their chunks under their names: the label column widens for the longest
  // list, as far as one kind of node (184 px and its count) still fits beside it.
  if (g.row_h >= 28) {
    double need = 0;
    for (const StageRow& r : rows) {
      if (r.stage < 0) continue;
      int chunks = 0;
      const StageInfo& st = x.pl.stages[r.stage];
      const std::string list = stage_layer_list(st, chunks);
      if (chunks > 1) need = std::max(need, fg::measure_text(list + stage_tag(st), 10.5) + 16);  // 6 px to spare
    }
    const double spare = x.W - kPad - g.count_w - (kPad + g.label_w + 34) - 236;
    g.label_w += std::clamp(need - g.label_w, 0.0, std::max(0.0, spare));
  }
  g.x0 = kPad + g.label_w + 34;
  const double avail = x.W - kPad - g.count_w - g.x0;
  size_t max_kinds = 1;
  for (const StageRow& r : rows) max_kinds = std::max(max_kinds, r.kinds.size());
  g.gcols = gn <= 8 ? gn : 18;
  g.per_box = std::min(gn, kMaxCellsPerBox), g.group = (gn + g.per_box - 1) / g.per_box;
  g.grows = (g.per_box + g.gcols - 1) / g.gcols;
  g.with_count = max_kinds <= 3;
  g.extra = g.with_count ? 52 : 6;
  g.box_w = std::min(gn <= 8 ? 184.0 : 220.0, (avail + 6) / static_cast<double>(max_kinds) - g.extra);
  g.shown = static_cast<int>(max_kinds);
  if (g.box_w < 36) g.box_w = 36, g.shown = std::max(1, static_cast<int>(std::floor((avail - 90) / (g.box_w + g.extra))));
  g.shown = std::min(g.shown, std::max(1, kMaxCells / static_cast<int>(rows.size() * g.per_box)));
  g.cell = std::max(2.0, (g.box_w - 6 - (g.gcols - 1)) / g.gcols);
  g.box_h = std::max(10.0, g.row_h - 10);
  g.top = 66 + (band > 0 ? band + 8 : 0);
  g.inner = inner_axis(x), g.outer = node_axis(x);
  g.inner_n = x.size_of(g.inner), g.outer_n = g.outer ? x.size_of(*g.outer) : 0;
  // PP: activations hop from stage to stage across nodes.
  g.pp_bytes = x.scaleout.of(Axis::PP) + x.nvlink.of(Axis::PP);
  g.pp_link = x.scaleout.of(Axis::PP) > 0 ? Link::ScaleOut : Link::NVLink;
  g.ax = kPad + g.label_w + 14;
  // One form for every row: lists where each fits its room, else every interleaved stage counted.
  for (const StageRow& r : rows) {
    if (r.stage < 0) continue;
    int chunks = 0;
    const StageInfo& st = x.pl.stages[r.stage];
    const std::string list = stage_layer_list(st, chunks);
    if (chunks > 1 && fg::measure_text(list + stage_tag(st), 10.5) > stage_layers_w(g, r.stage)) g.layer_lists = false;
  }
  return g;
}

// The column headings.
void stages_heading(Pen& o, const Ctx& x, const StagesGeom& g) {
  const double hy = g.top - 8;
  o.text("heading", "PIPELINE STAGE", kPad, hy, 10, 700, "muted");
  const double kw = x.W - kPad - g.count_w - 10 - g.x0;
  const std::string colour = "colour = " + upper(name_of(g.inner)) + " rank";
  o.text("heading",
         fg::first_fit({"KINDS OF NODE · " + std::to_string(x.gn) + " GPUs, " + colour +
                            (g.outer ? ", band = " + upper(name_of(*g.outer)) + " rank" : ""),
                        "KINDS OF NODE · " + colour, "KINDS OF NODE", "KINDS"},
                       kw, 10, 700),
         g.x0, hy, 10, 700, "muted", "start", kw);
  o.text("heading", "NODES", x.W - kPad, hy, 10, 700, "muted", "end");
  if (g.mem_column) o.text("heading", "MEMORY PER GPU", x.W - kPad - 330, hy, 10, 700, "muted");
}

// A row's stage: its bar, name and layers.
void stage_label(Pen& o, const Ctx& x, const StagesGeom& g, const StageRow& row, double y, double mid) {
  o.rect("stage_bar", kPad, y + 2, 4, g.row_h - 4, row.stage >= 0 ? "pp" : "muted", row.stage, row.stage >= 0 ? x.c.plan.pp : 0)
      .stage = row.stage;
  if (g.row_h < 15) return;
  const std::string name = row.stage >= 0 ? "stage " + std::to_string(row.stage + 1) : std::string("all nodes");
  if (row.stage < 0) {
    o.text("stage_name", name, kPad + 10, mid + 4, 11.5, 650, "pp");
    return;
  }
  const StageInfo& st = x.pl.stages[row.stage];
  int chunks = 0;
  const std::string list = stage_layer_list(st, chunks), tag = stage_tag(st);
  const std::string s = g.layer_lists || chunks <= 1 ? list : std::to_string(chunks) + " chunks";
  // The layers beside the name, or under it when they do not fit there and the row has room for two lines.
  const double lw = std::max(fg::measure_text(name, 11.5, 650), 52.0), beside = g.label_w - lw - 8;
  const bool below = g.row_h >= 28 && fg::measure_text(s + tag, 10.5) > beside;
  o.text("stage_name", name, kPad + 10, below ? mid - 2 : mid + 4, 11.5, 650, "pp");
  const double w = below ? g.label_w - 10 : beside;
  o.text("stage_layers", fg::first_fit({s + tag, s}, w, 10.5), below ? kPad + 10 : kPad + 16 + lw, below ? mid + 11 : mid + 4, 10.5,
         400, "muted", "start", w);
}

// A row's kinds of node: a box each (cells coloured by the inner axis, a band by the outer one)
// with its count, and "+N more" for those not drawn.
void stage_kinds(Pen& o, const Ctx& x, const StagesGeom& g, const StageRow& row, double y, double mid) {
  const int gn = x.gn;
  const std::string inner = name_of(g.inner);
  const int n_shown = std::min(g.shown, static_cast<int>(row.kinds.size()));
  for (int j = 0; j < n_shown; ++j) {
    const KindBox& k = row.kinds[j];
    const double kx = g.x0 + j * (g.box_w + g.extra), ky = y + (g.row_h - g.box_h) / 2;
    FigureRect& box = o.rect("kind_box", kx, ky, g.box_w, g.box_h);
    box.hit = "node", box.node = k.first, box.rank = k.first * gn, box.ranks = gn, box.count = k.count, box.stage = row.stage;
    const double ch = std::max(2.0, (g.box_h - 5 - (g.grows - 1)) / g.grows);
    for (int jj = 0; jj < g.per_box; ++jj) {
      const long long rank = static_cast<long long>(k.first) * gn + static_cast<long long>(jj) * g.group;
      if (rank >= x.gpus) break;
      const GpuPlacement gp = x.gpu(static_cast<int>(rank));
      o.rect("cell_mini", kx + 3 + (jj % g.gcols) * (g.cell + 1), ky + 2.5 + (jj / g.gcols) * (ch + 1), g.cell, ch, inner,
             coord_of(gp, g.inner), g.inner_n);
    }
    if (g.outer) o.rect("band", kx + 1, ky - 3, g.box_w - 2, 3, name_of(*g.outer), coord_of(x.gpu(k.first * gn), *g.outer), g.outer_n);
    if (g.with_count) o.text("kind_count", "× " + fg::integer(k.count), kx + g.box_w + 8, mid + 4, 11, 600, "muted");
  }
  if (static_cast<int>(row.kinds.size()) > n_shown)
    o.text("more", "+" + std::to_string(row.kinds.size() - n_shown) + " more", g.x0 + n_shown * (g.box_w + g.extra) - g.extra + 8,
           mid + 4, 10.5, 400, "muted");
}

// A row's memory per GPU (wide frames) and its count of nodes ("2 kinds × 64 = 128").
void stage_totals(Pen& o, const Ctx& x, const StagesGeom& g, const StageRow& row, double mid) {
  if (row.stage >= 0 && g.mem_column) {
    const StageMem mem = x.mem(row.stage);
    const double mx = x.W - kPad - 330, mw = 110;
    mem_bar(o, mx, mid - 4, mw, 8, mem, row.stage);
    o.text("stage_memory", fg::gib(mem.total, 1) + " GiB", mx + mw + 8, mid + 4, 11, 600, mem.fits ? "text" : "warn");
  }
  const std::string nodes = fg::integer(static_cast<double>(row.nodes));
  o.text("stage_nodes", nodes, x.W - kPad, mid + 4, 11.5, 650, "text", "end");
  bool same = true;
  for (const KindBox& k : row.kinds) same = same && k.count == row.kinds[0].count;
  if (row.kinds.size() > 1 && same)
    o.text("kind_sum", std::to_string(row.kinds.size()) + " kinds × " + fg::integer(row.kinds[0].count) + " =",
           x.W - kPad - fg::measure_text(nodes, 11.5, 650) - 5, mid + 4, 10.5, 400, "muted", "end");
}

// Under the rows: the stages not drawn, the link key and a note on the gradients' reduction.
// Returns the height of the key's second row and of the note's lines past the first.
double stages_footer(Pen& o, const Ctx& x, double y, int hidden_rows) {
  if (hidden_rows) {
    o.text("more", "+" + fg::integer(hidden_rows) + " more stages, drawn alike", kPad + 10, y - 4, 11, 600, "muted");
    y += 18;
  }
  const double key = link_key(o, x, kPad, y);
  std::string note = "A node kind is drawn once with how many nodes are like it.";
  const GroupInfo* dpg = x.group(Axis::DPGrad);
  if (!x.serve && dpg && dpg->size > 1)
    note += " Dense gradients are reduced over " + fg::integer(dpg->size) + " GPUs holding the same weights (" +
            (dpg->nodes_spanned > 1 ? fg::integer(dpg->nodes_spanned) + " nodes, scale-out" : "one node, " + x.c.cluster.node_link) +
            ").";
  return key + o.wrapped("note", note, kPad, y + 24 + key, 11.5, 400, "muted", x.W - 2 * kPad, 15) - 15;
}

double draw_stages(Pen& o, const Ctx& x, double band) {
  const StageRows sr = stage_rows(x);
  const std::vector<StageRow>& rows = sr.rows;
  const StagesGeom g = stages_geom(x, rows, band);
  const double top = g.top, row_h = g.row_h;
  stages_heading(o, x, g);
  for (size_t i = 0; i < rows.size(); i += 2)
    o.rect("row_shade", kPad - 6, top + static_cast<double>(i) * row_h, x.W - 2 * kPad + 12, row_h);
  const bool spine = rows.size() > 1 && g.pp_bytes > 0;
  if (spine)
    o.line("spine", g.ax, top + row_h / 2, g.ax, top + static_cast<double>(rows.size() - 1) * row_h + row_h / 2,
           std::max(1.5, thickness(g.pp_bytes)), name_of(g.pp_link));
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = top + static_cast<double>(i) * row_h, mid = y + row_h / 2;
    stage_label(o, x, g, rows[i], y, mid);
    if (spine) o.rect("dot", g.ax - 3.5, mid - 3.5, 7, 7, name_of(g.pp_link));
    stage_kinds(o, x, g, rows[i], y, mid);
    stage_totals(o, x, g, rows[i], mid);
  }
  const double note_h = stages_footer(o, x, top + static_cast<double>(rows.size()) * row_h + 20, sr.hidden);
  return top + static_cast<double>(rows.size()) * row_h + 54 + (sr.hidden ? 18 : 0) + note_h;
}

// ---- serving: the load balancer in front of the replicas -----------------------------------------
// Requests come in at a load balancer that spreads them over the data-parallel replicas (each a
// whole copy of the model serving its own batch). Drawn in a band above the nodes: one arrow per
// replica, landing on the replica's first-stage GPUs when they all sit side by side in the top
// row, else on a row of replica boxes; too many for that (and always in the aggregated view): one
// box stacked with "× N replicas".
constexpr double kBand = 80;

// "TP 8 × PP 2": the GPUs of one replica.
std::string replica_shape(const Plan& p) {
  std::string s;
  for (auto [k, n] : std::vector<std::pair<const char*, int>>{{"TP", p.tp}, {"CP", p.cp}, {"PP", p.pp}})
    if (n > 1) s += (s.empty() ? "" : " × ") + std::string(k) + " " + std::to_string(n);
  return s.empty() ? "one GPU" : s;
}

// The balancer's box, the replicas' boxes and the requests' lines.
constexpr double kLbX = kPad, kLbY = 48, kLbW = 150, kLbH = 32;
constexpr double kPillY = 98, kPillH = 28, kPillMin = 76, kRowMin = 46, kPillMax = 230;
constexpr double kBusY = kLbY + kLbH + 10, kTrunkX = kLbX + kLbW / 2;
constexpr double kStackW = 176, kStackX = kTrunkX - 20, kStackOff = 12;  // the stacked cards

// Traffic between replicas (MoE: the experts' all-to-all), by axis; usually none.
struct Between {
  Traffic cross;
  bool scaleout = false;
  std::string text;  // what the pointer shows about it
};

Between between_replicas(const Ctx& x) {
  Between b;
  const InferenceEstimate& inf = x.e.inference;
  for (const CommOp& op : inf.comm)
    if (op.bytes > 0 && crosses_replicas(x.e.resolved, op.axis)) {
      b.cross.add(op.axis, op.bytes);
      b.scaleout = b.scaleout || op.link == Link::ScaleOut;
    }
  b.text = b.cross.bytes > 0  ? "replicas exchange tokens: " + axis_list(b.cross) + " " + x.per
           : inf.replicas > 1 ? "no traffic between replicas"
                              : "";
  return b;
}

// The load balancer's box and, beside it, the total throughput and what each replica is.
void balancer_box(Pen& o, const Ctx& x, const Between& bt) {
  const InferenceEstimate& inf = x.e.inference;
  const int R = inf.replicas, batch = x.c.workload.batch;
  const double per1 = inf.output_tokens_per_s_per_replica;
  const Traffic& cross = bt.cross;
  FigureRect& lb = o.rect("balancer", kLbX, kLbY, kLbW, kLbH, "dp");
  lb.hit = "balancer", lb.name = bt.text;
  o.text("balancer_name", "load balancer", kLbX + kLbW / 2, kLbY + 14, 12, 700, "text", "middle", kLbW - 10);
  o.text("balancer_sub", "requests in", kLbX + kLbW / 2, kLbY + 27, 10.5, 400, "muted", "middle", kLbW - 10);
  const double tx = kLbX + kLbW + 14, tw = x.W - kPad - tx;
  const std::string sum = fg::integer(R) + " replicas × " + fg::integer(per1) +
                          " tok/s = " + fg::integer(inf.output_tokens_per_s_total) + " tok/s";
  // Narrow figures (a phone's 390 px) keep the total and drop the product before the text is cut.
  const std::string all = fg::integer(inf.output_tokens_per_s_total);
  const std::string total = R > 1 ? fg::first_fit({sum + (cross.bytes > 0 ? "" : "; no traffic between replicas"), sum,
                                                   all + " tok/s = " + fg::integer(R) + " × " + fg::integer(per1),
                                                   all + " tok/s in total", all + " tok/s"},
                                                  tw, 12.5, 700)
                                  : fg::first_fit({"one replica: " + fg::integer(per1) + " tok/s", fg::integer(per1) + " tok/s"}, tw,
                                                  12.5, 700);
  o.text("balancer_total", total, tx, kLbY + 13, 12.5, 700, "dp", "start", tw);
  const std::string shape = (R > 1 ? "each: " : "") + replica_shape(x.c.plan),
                    seqs = " · " + fg::integer(batch) + " sequence" + (batch > 1 ? "s" : ""),
                    tpot = " · TPOT " + fg::seconds(inf.tpot_s);
  const std::string each = shape + seqs + tpot;
  std::vector<std::string> links;
  if (cross.bytes > 0)
    links = {"replicas exchange tokens: " + axis_list(cross) + " " + x.per, "replicas exchange tokens: " + axis_list(cross)};
  else if (R > 1 && total.find("no traffic") == std::string::npos) links = {"no traffic between replicas"};
  std::vector<std::string> options;
  for (const std::string& l : links) options.push_back(l + " · " + each);
  options.insert(options.end(), links.begin(), links.end());
  if (links.empty()) options = {each, shape + tpot, shape + seqs, shape};
  o.text("balancer_detail", fg::first_fit(options, tw, 11.5), tx, kLbY + 29, 11.5, 400,
         cross.bytes > 0 ? (bt.scaleout ? "scaleout" : "nvlink") : "muted", "start", tw);
}

// A replica's throughput (and batch) in a box `w` wide.
std::string replica_sub(const Ctx& x, double w) {
  const double per1 = x.e.inference.output_tokens_per_s_per_replica;
  const int batch = x.c.workload.batch;
  return fg::first_fit({fg::integer(per1) + " tok/s · " + fg::integer(batch) + " seq", fg::integer(per1) + " tok/s",
                        fg::compact(per1) + " tok/s", fg::compact(per1)},
                       w - 10, 10.5);
}

std::string replica_name(int k, double w) {
  return fg::first_fit({"replica " + std::to_string(k), "r" + std::to_string(k)}, w - 10, 11, 700);
}

struct Pill {
  int replica;
  double x, w, cx, to_y;  // to_y < 0: no arrow on into the GPUs
};

// A box per replica over its first-stage GPUs, when every replica's first-stage GPUs sit side by
// side in the top row, none overlapping; else none.
std::vector<Pill> aligned_pills(const Layout& L, int R) {
  struct Extent {
    double y, x0, x1, top;
  };
  std::map<int, Extent> rg;
  for (const NodeBox& nd : L.nodes)
    for (const GpuBox& g : nd.gpus) {
      if (g.g.pp != 0) continue;
      auto it = rg.find(g.g.replica);
      if (it == rg.end() || g.y < it->second.y) rg[g.g.replica] = {g.y, g.x, g.x + g.w, nd.y};
      else if (g.y == it->second.y) it->second.x0 = std::min(it->second.x0, g.x), it->second.x1 = std::max(it->second.x1, g.x + g.w);
    }
  std::vector<std::pair<int, Extent>> list(rg.begin(), rg.end());
  std::stable_sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.second.x0 < b.second.x0; });
  bool ok = static_cast<int>(list.size()) == R;
  for (size_t i = 0; ok && i < list.size(); ++i)
    ok = list[i].second.y == list[0].second.y && list[i].second.x1 - list[i].second.x0 >= kPillMin &&
         (i == 0 || list[i - 1].second.x1 < list[i].second.x0);
  std::vector<Pill> pills;
  if (ok)
    for (auto& [k, t] : list) {
      const double w = std::min(kPillMax, t.x1 - t.x0), cx = (t.x0 + t.x1) / 2;
      pills.push_back({k, cx - w / 2, w, cx, t.top});
    }
  return pills;
}

// A row of replica boxes, when they fit; else none.
std::vector<Pill> row_pills(const Ctx& x, int R) {
  std::vector<Pill> pills;
  const double w = std::min(kPillMax, (x.W - 2 * kPad - (R - 1) * 8) / R);
  if (w >= kRowMin)
    for (int k = 0; k < R; ++k) pills.push_back({k, kPad + k * (w + 8), w, kPad + k * (w + 8) + w / 2, -1});
  return pills;
}

// One replica drawn as a stack of cards with "× N replicas".
void replica_stack(Pen& o, const Ctx& x, const std::string& between) {
  const int R = x.e.inference.replicas, shown = std::min(R, 3);
  for (int k = shown - 1; k >= 0; --k) {  // opaque cards, the front one lightest
    FigureRect& card = o.rect("replica_card", kStackX + k * kStackOff, kPillY, kStackW, kPillH, "dp", k, shown);
    if (k == 0) card.hit = "replicas", card.count = R, card.name = between;
  }
  const std::string label = fg::first_fit({"each replica · " + replica_shape(x.c.plan), "each replica"}, kStackW - 10, 11, 700);
  o.text("replica_name", label, kStackX + 6, kPillY + 12, 11, 700, "dp", "start", kStackW - 10);
  o.text("replica_sub", replica_sub(x, kStackW), kStackX + 6, kPillY + 24, 10.5, 400, "text", "start", kStackW - 10);
  const double count_x = kStackX + kStackW + (shown - 1) * kStackOff + 10;
  const std::string count = fg::first_fit({"× " + fg::integer(R) + " replica" + (R > 1 ? "s" : ""), "× " + fg::integer(R)},
                                          x.W - kPad - count_x, 12.5, 700);
  o.text("replica_count", count, count_x, kPillY + 18, 12.5, 700, "dp", "start", x.W - kPad - count_x);
  FigureRect& region = o.rect("region", kStackX, kPillY, count_x - kStackX + fg::measure_text(count, 12.5, 700), kPillH);
  region.hit = "replicas", region.count = R, region.name = between;
}

void replica_pills(Pen& o, const Ctx& x, const std::vector<Pill>& pills, const std::string& between) {
  for (const Pill& pl : pills) {
    FigureRect& r = o.rect("replica", pl.x, kPillY, pl.w, kPillH, "dp");
    r.hit = "replica", r.replica = pl.replica, r.name = between;
    o.text("replica_name", replica_name(pl.replica, pl.w), pl.x + pl.w / 2, kPillY + 12, 11, 700, "dp", "middle", pl.w - 8);
    o.text("replica_sub", replica_sub(x, pl.w), pl.x + pl.w / 2, kPillY + 24, 10.5, 400, "text", "middle", pl.w - 8);
    if (pl.to_y >= 0) o.line("arrow", pl.cx, kPillY + kPillH, pl.cx, pl.to_y, 1.5, "dp");
  }
}

void draw_balancer(Pen& o, const Ctx& x, const Layout* L) {
  const int R = x.e.inference.replicas;
  const Between between = between_replicas(x);
  balancer_box(o, x, between);
  std::vector<Pill> pills;
  if (L && R <= 64) pills = aligned_pills(*L, R);
  if (pills.empty() && L) pills = row_pills(x, R);
  std::vector<double> arrows;
  for (const Pill& pl : pills) arrows.push_back(pl.cx);
  const bool stack = pills.empty();
  if (stack)  // a bundle of arrows (one per card shown), not one per replica
    for (int k = 0; k < std::min(R, 3); ++k) arrows.push_back(kStackX + 26 + k * (kStackOff + 10));
  // trunk, bus and an arrow down to each replica
  double lo = kTrunkX, hi = kTrunkX;
  for (double a : arrows) lo = std::min(lo, a), hi = std::max(hi, a);
  o.line("request", kTrunkX, kLbY + kLbH, kTrunkX, kBusY, 1.5, "dp");
  o.line("request", lo, kBusY, hi, kBusY, 1.5, "dp");
  for (double a : arrows) o.line("arrow", a, kBusY, a, kPillY, 1.5, "dp");
  if (stack) replica_stack(o, x, between.text);
  else replica_pills(o, x, pills, between.text);
}

// ---- legend ----------------------------------------------------------------------------------------
std::vector<fg::LegendItem> legend_items(const Ctx& x, Level level, bool balancer) {
  std::vector<fg::LegendItem> items = {{"stage (PP)", "pp"}};
  if (level != Level::Full) {
    const std::string inner = name_of(inner_axis(x));
    items.push_back(
        {upper(inner) + " rank inside a node" + (level == Level::Cells && expert_inner_axis(x) ? " (attention mesh)" : ""), inner});
    if (const std::optional<Axis> ex = level == Level::Cells ? expert_inner_axis(x) : std::nullopt)
      items.push_back({upper(name_of(*ex)) + " rank in the expert mesh (strip)", name_of(*ex)});
    const std::optional<Axis> outer = level == Level::Stages ? node_axis(x) : std::nullopt;
    if (outer) items.push_back({upper(name_of(*outer)) + " rank of the node (band)", name_of(*outer), "band2"});
  } else {
    items.push_back({"TP slice", "tp"});
    if (x.c.model.experts > 0) items.push_back({"EP experts", "ep"});
    if (x.c.plan.cp > 1) items.push_back({"CP tokens", "cp"});
    items.push_back({"DP replica", "dp"});
    items.push_back({"memory", "", "", true});
    if (x.serve) items.insert(items.end(), {{"weights", "weights"}, {"KV cache", "kv"}, {"activations", "activations"}});
    else
      items.insert(items.end(),
                   {{"weights", "weights"}, {"gradients", "grads"}, {"optimizer", "optimizer"}, {"activations", "activations"}});
  }
  if (balancer) {
    items.push_back({"serving", "", "", true});
    items.push_back({"load balancer / replica", "dp", "ring"});
    items.push_back({"requests to each replica, with its tokens/s", "dp", "line", false, 1.5});
  }
  items.push_back({"links", "", "", true});
  items.push_back({x.c.cluster.node_link, "nvlink", "line"});
  items.push_back({"scale-out", "scaleout", "line"});
  items.push_back({"thicker = more bytes per step", "faint", "line", false, 1});
  return items;
}

}  // namespace

const char* placement_level(int gpus) { return level_name(level_of(gpus)); }

bool crosses_replicas(const Resolved& r, Axis axis) {
  const Config& c = r.config;
  const Placement& pl = r.placement;
  if (axis == Axis::TP || axis == Axis::CP || axis == Axis::PP) return false;
  const bool folding = c.plan.etp > 0;
  if (axis == Axis::ETP && !folding) return false;  // experts sliced like attention: inside a replica
  if (axis == Axis::EP || axis == Axis::ETP) {
    // Rank 0's group: attention-mesh strides, or under folding the expert mesh etp × ep inside a stage.
    const Mesh& mesh = r.mesh;
    const int n = axis == Axis::EP ? c.plan.ep : mesh.etp;
    const long long stride = axis == Axis::ETP ? 1 : folding ? mesh.etp : pl.stride_ep;
    const int r0 = gpu_placement(r, 0).replica;
    for (int i = 1; i < n; ++i)
      if (gpu_placement(r, static_cast<int>(i * stride)).replica != r0) return true;
    return false;
  }
  return true;  // dp, edp, dp_grad: between replicas by definition
}

Figure placement_scene(const Resolved& r, const Estimate& estimate, double width) {
  const Config& c = r.config;
  const SceneInput e = scene_input(r, estimate);
  Figure f;
  f.view = "placement";
  f.width = width;
  Pen o{f};
  const Ctx x(c, e, width);
  const Level level = level_of(x.gpus);
  f.level = level_name(level);
  const double band = x.serve ? kBand : 0;
  header(o, x);
  double height = 0;
  if (level == Level::Stages) {
    if (x.serve) draw_balancer(o, x, nullptr);
    height = draw_stages(o, x, band);
  } else {
    double cell = 0;
    const Layout L = level == Level::Full ? layout_full(x, band) : layout_cells(x, band, cell);
    if (x.serve) draw_balancer(o, x, &L);
    if (level == Level::Full) draw_full(o, x, L);
    else draw_cells(o, x, L, cell, x.serve);
    height = L.height;
  }
  // The legend under a rule, its rows wrapped to the width.
  Figure probe;
  const std::vector<fg::LegendItem> items = legend_items(x, level, x.serve);
  const double legend_h = fg::legend(probe, items, kPad, 0, width - 2 * kPad);
  f.height = height + 14 + legend_h;
  const double ly = f.height - legend_h;
  o.rect("rule", kPad, ly - 8, width - 2 * kPad, 1, "rule");
  fg::legend(f, items, kPad, ly, width - 2 * kPad);
  return f;
}

}  // namespace cutlab
