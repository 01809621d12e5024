#include "core/placement.h"

#include <algorithm>
#include <array>
#include <numeric>

#include "core/resolved.h"
#include "core/serving_instances.h"

namespace cutlab {

namespace {

struct Span {
  long long stride = 1;
  int size = 1;
};

// Members of the group that contains rank 0 lying in node 0, i.e. with rank offset < G.
// Axes are (stride, size) pairs; every member's offset is Σ c_k·stride_k.
long long members_below(const std::vector<Span>& axes, size_t i, long long offset, long long limit) {
  if (i == axes.size()) return 1;
  long long n = 0;
  for (int k = 0; k < axes[i].size; ++k) {
    const long long off = offset + k * axes[i].stride;
    if (off >= limit) break;
    n += members_below(axes, i + 1, off, limit);
  }
  return n;
}

// Above this many members a group is judged by the group of rank 0 (its members are not listed).
constexpr long long k_max_listed_members = 1 << 20;

// How one group lies on the nodes: nodes touched, and the fewest members on one of them (the
// NICs its scale-out traffic leaves through).
struct Spread {
  long long nodes = 0;
  long long per_node = 0;
};

// Offsets of a group's members from its first rank, ascending (Σ c_k·stride_k of mixed-radix axes).
// Axes taken by decreasing stride, so the last (finest) varies fastest: for the nested strides of a
// mesh that already lists the offsets in order, and the sort only checks it.
std::vector<long long> member_offsets(std::vector<Span> axes) {
  std::sort(axes.begin(), axes.end(), [](const Span& a, const Span& b) { return a.stride > b.stride; });
  std::vector<long long> off{0};
  for (const Span& a : axes) {
    std::vector<long long> next;
    next.reserve(off.size() * static_cast<size_t>(std::max(1, a.size)));
    for (long long o : off)
      for (int k = 0; k < a.size; ++k) next.push_back(o + k * a.stride);
    off.swap(next);
  }
  if (!std::is_sorted(off.begin(), off.end())) std::sort(off.begin(), off.end());
  return off;
}

// The first ranks of all groups of a kind are Σ c_j·stride_j over the other axes of the mesh;
// which node offsets (mod G) they take, as flags of size G.
std::vector<char> first_rank_offsets(const std::vector<Span>& others, long long G) {
  std::vector<char> seen(static_cast<size_t>(G), 0);
  seen[0] = 1;
  for (const Span& a : others) {
    const long long step = a.stride % G;
    if (step == 0 || a.size <= 1) continue;
    const long long cycle = G / std::gcd(step, G);  // c·step mod G repeats after this many
    std::vector<char> next = seen;
    for (long long r = 0; r < G; ++r)
      if (seen[static_cast<size_t>(r)])
        for (long long c = 1; c < std::min<long long>(a.size, cycle); ++c) next[static_cast<size_t>((r + c * step) % G)] = 1;
    seen.swap(next);
  }
  return seen;
}

// The group whose first rank sits at node offset r: its member at offset o is on node ⌊(r + o)/G⌋.
Spread spread_at(const std::vector<long long>& off, long long r, long long G) {
  Spread s;
  long long node = -1, run = 0;
  auto close = [&] {
    if (run == 0) return;
    s.per_node = s.nodes == 0 ? run : std::min(s.per_node, run);
    ++s.nodes;
  };
  for (long long o : off) {
    const long long n = (r + o) / G;
    if (n != node) close(), node = n, run = 0;
    ++run;
  }
  close();
  return s;
}

// The worst group of a kind: the most nodes, then the fewest members on one node. Collectives run
// in lockstep, so the slowest group sets the time: a TP 16 group of GPUs 64–79 in 72-GPU racks
// crosses two racks even though the group of rank 0 does not, and so can a DP × CP × EP group
// whose strides do not divide the node. Every group starts at a node offset r that the other axes
// reach (first_rank_offsets); r only matters through which members' offsets o (mod G) pass a node
// boundary (o mod G ≥ G − r), so one r per such class is evaluated: at most G + 1 layouts of the
// group's members.
Spread worst_spread(const std::vector<Span>& axes, const std::vector<Span>& others, long long G) {
  const std::vector<long long> off = member_offsets(axes);
  std::vector<char> at_mod(static_cast<size_t>(G), 0);  // the offsets' residues mod G, listed ascending below
  for (long long o : off) at_mod[static_cast<size_t>(o % G)] = 1;
  std::vector<long long> mods;
  for (long long r = 0; r < G; ++r)
    if (at_mod[static_cast<size_t>(r)]) mods.push_back(r);
  const std::vector<char> starts = first_rank_offsets(others, G);
  std::vector<char> done(mods.size() + 1, 0);
  Spread worst;
  for (long long r = 0; r < G; ++r) {
    if (!starts[static_cast<size_t>(r)]) continue;
    const size_t cls = static_cast<size_t>(mods.end() - std::lower_bound(mods.begin(), mods.end(), G - r));
    if (done[cls]) continue;
    done[cls] = 1;
    const Spread s = spread_at(off, r, G);
    if (s.nodes > worst.nodes || (s.nodes == worst.nodes && s.per_node < worst.per_node)) worst = s;
  }
  return worst;
}

// A process group of `axes` (the other axes of its mesh: `others`), judged on its worst group.
GroupInfo make_group_uncached(Axis name, std::vector<Span> axes, const std::vector<Span>& others, int gpus, int gpus_per_node) {
  GroupInfo g;
  g.axis = name;
  long long size = 1;
  for (const Span& a : axes) size *= a.size;
  g.size = static_cast<int>(size);
  g.count = size > 0 ? gpus / size : 0;
  if (size > k_max_listed_members) {
    std::sort(axes.begin(), axes.end(), [](const Span& a, const Span& b) { return a.stride > b.stride; });
    const long long k = std::max<long long>(1, members_below(axes, 0, 0, gpus_per_node));
    g.members_per_node = static_cast<int>(k);
    g.nodes_spanned = static_cast<int>((size + k - 1) / k);
  } else if (size == 1) {  // one GPU: one node, whatever the layout
    g.nodes_spanned = 1;
    g.members_per_node = 1;
  } else {
    const Spread w = worst_spread(axes, others, gpus_per_node);
    g.nodes_spanned = static_cast<int>(std::max<long long>(1, w.nodes));
    g.members_per_node = static_cast<int>(std::max<long long>(1, w.per_node));
  }
  g.link = g.nodes_spanned > 1 ? Link::ScaleOut : Link::NVLink;
  return g;
}

// The same, remembered: a search places thousands of plans that share their mesh and differ in the
// schedule, micro-batch or recompute, so the last groups of each thread are kept (a short list
// searched linearly; the answer depends only on the key).
struct GroupKey {
  Axis name = Axis::TP;
  std::vector<Span> axes, others;
  int gpus = 0, gpus_per_node = 0;
  bool is(Axis n, const std::vector<Span>& a, const std::vector<Span>& o, int g, int per_node) const {
    auto same = [](const std::vector<Span>& x, const std::vector<Span>& y) {
      return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(),
                                                [](const Span& u, const Span& v) { return u.stride == v.stride && u.size == v.size; });
    };
    return name == n && gpus == g && gpus_per_node == per_node && same(axes, a) && same(others, o);
  }
};

GroupInfo make_group(Axis name, const std::vector<Span>& axes, const std::vector<Span>& others, int gpus, int gpus_per_node) {
  struct Entry {
    GroupKey key;
    GroupInfo group;
  };
  constexpr std::size_t k_kept = 64;
  thread_local std::vector<Entry> kept;
  thread_local std::size_t next = 0;
  for (const Entry& e : kept)
    if (e.key.is(name, axes, others, gpus, gpus_per_node)) return e.group;
  const GroupInfo g = make_group_uncached(name, axes, others, gpus, gpus_per_node);
  GroupKey key{name, axes, others, gpus, gpus_per_node};
  if (kept.size() < k_kept) {
    kept.push_back({std::move(key), g});
  } else {
    kept[next] = {std::move(key), g};
    next = (next + 1) % k_kept;
  }
  return g;
}

}  // namespace

const GroupInfo* find_group(const Placement& p, Axis axis) {
  for (const GroupInfo& g : p.groups)
    if (g.axis == axis) return &g;
  return nullptr;
}

namespace {

// Serving lays out instances (placement.h): each copy of the model its own GPUs, unless the experts
// fold over the data-parallel ranks (etp set, ep > 1) and the whole mesh is one instance.
bool lays_out_instances(const Config& config) {
  return config.workload.mode == Mode::Infer && !(config.plan.etp > 0 && config.plan.ep > 1);
}

// Strides of the five attention-mesh axes in rank space, laid out in rank_order (innermost first).
// Under folding, ep is not an attention-mesh axis (size 1).
void place_strides(const Plan& plan, const std::string& rank_order, Placement& pl) {
  std::array<Axis, 5> order{Axis::TP, Axis::CP, Axis::EP, Axis::DP, Axis::PP};
  rank_order_axes(rank_order, order);  // validated: a permutation of the five
  long long stride = 1;
  for (Axis a : order) {
    int size = 1;
    switch (a) {
      case Axis::TP: pl.stride_tp = stride, size = plan.tp; break;
      case Axis::CP: pl.stride_cp = stride, size = plan.cp; break;
      case Axis::EP: pl.stride_ep = stride, size = plan.etp > 0 ? 1 : plan.ep; break;
      case Axis::DP: pl.stride_dp = stride, size = plan.dp; break;
      case Axis::PP: pl.stride_pp = stride, size = plan.pp; break;
      default: break;
    }
    stride *= size;
  }
}

void place_groups(const ModelSpec& m, const Plan& plan, const Mesh& mesh, Placement& pl) {
  const Span tp{pl.stride_tp, plan.tp}, cp{pl.stride_cp, plan.cp}, dp{pl.stride_dp, plan.dp}, pp{pl.stride_pp, plan.pp};
  const int G = pl.gpus_per_node, N = pl.gpus;
  // A group of `axes` among the attention mesh's five (under folding ep has size 1 there).
  const Span ep_attn{pl.stride_ep, plan.etp > 0 ? 1 : plan.ep};
  const std::vector<Span> attention{tp, cp, ep_attn, dp, pp};
  auto others_of = [](const std::vector<Span>& mesh_axes, const std::vector<Span>& axes) {
    std::vector<Span> rest;
    for (const Span& a : mesh_axes)
      if (std::none_of(axes.begin(), axes.end(), [&](const Span& b) { return b.stride == a.stride && b.size == a.size; }))
        rest.push_back(a);
    return rest;
  };
  auto group = [&](Axis name, const std::vector<Span>& axes, const std::vector<Span>& mesh_axes) {
    pl.groups.push_back(make_group(name, axes, others_of(mesh_axes, axes), N, G));
  };
  group(Axis::TP, {tp}, attention);
  group(Axis::CP, {cp}, attention);
  group(Axis::PP, {pp}, attention);
  if (plan.etp == 0) {
    group(Axis::EP, {ep_attn}, attention);
    group(Axis::DP, {dp}, attention);
    // Dense gradients are reduced over every replica of the dense weights: DP × CP × EP
    // (Megatron: the data-parallel group with context parallel; EP ranks hold the same attention).
    group(Axis::DPGrad, {cp, ep_attn, dp}, attention);
    // Expert gradients over the expert-data-parallel group (CP × DP with etp = tp).
    if (is_moe(m)) group(Axis::EDP, {cp, dp}, attention);
  } else {
    // Folding: inside each pipeline stage the expert mesh is etp (innermost) × ep × edp.
    const Span etp{1, mesh.etp}, ep{mesh.etp, plan.ep}, edp{static_cast<long long>(mesh.etp) * plan.ep, mesh.edp};
    const std::vector<Span> expert{etp, ep, edp, pp};
    group(Axis::DP, {dp}, attention);
    group(Axis::DPGrad, {cp, dp}, attention);
    group(Axis::ETP, {etp}, expert);
    group(Axis::EP, {ep}, expert);
    group(Axis::EDP, {edp}, expert);
  }
}

// The launcher's layout (placement.h launch_instance_gpus): F whole nodes of C GPUs, each holding k
// instances of g GPUs from its first GPU and leaving c over; a last, partial node holding `tail`; the
// `whole` instances so placed (whole_instances, as serving prices them) before the ones left to straddle.
struct Launch {
  long long g, C, k, c, F, tail, whole;
  explicit Launch(const Placement& p)
      : g(p.launch_instance_gpus),
        C(p.gpus_per_node),
        k(C / g),
        c(C - k * g),
        F(p.gpus / C),
        tail((p.gpus % C) / g),
        whole(whole_instances(p.gpus, p.gpus_per_node, g)) {}
};

// The GPU of rank `rank` under the launcher's layout: rank_at_gpu inverted.
long long gpu_at_rank(const Launch& l, long long rank) {
  const long long i = rank / l.g, j = rank % l.g;
  if (i < l.F * l.k) return (i / l.k) * l.C + (i % l.k) * l.g + j;
  if (i < l.whole) return l.F * l.C + (i - l.F * l.k) * l.g + j;
  const long long L = (i - l.whole) * l.g + j;  // the L-th GPU left over
  return L < l.F * l.c ? (L / l.c) * l.C + l.k * l.g + L % l.c : l.F * l.C + l.tail * l.g + (L - l.F * l.c);
}

// Under the launcher's layout the groups inside an instance (TP, CP, EP, PP) span nodes only in the
// instances left to straddle: each such group is found by listing its GPUs (an instance has fewer
// GPUs than a node), and the worst one, spanning the most nodes with the fewest members on one,
// replaces the strides' answer (inside a node when every instance is whole).
void place_launched_groups(const Plan& plan, Placement& pl) {
  const Launch l(pl);
  const long long instances = pl.gpus / l.g;
  std::vector<long long> node;
  for (GroupInfo& group : pl.groups) {
    Span span;
    switch (group.axis) {
      case Axis::TP: span = {pl.stride_tp, plan.tp}; break;
      case Axis::CP: span = {pl.stride_cp, plan.cp}; break;
      case Axis::EP: span = {pl.stride_ep, plan.ep}; break;
      case Axis::PP: span = {pl.stride_pp, plan.pp}; break;
      default: continue;
    }
    if (span.size <= 1) continue;
    int worst_nodes = 1, worst_per_node = span.size;
    for (long long i = l.whole; i < instances; ++i)
      for (long long r = i * l.g; r < (i + 1) * l.g; ++r) {
        if ((r / span.stride) % span.size != 0) continue;  // one member per group: its first
        node.resize(span.size);
        for (int t = 0; t < span.size; ++t) node[t] = gpu_at_rank(l, r + t * span.stride) / l.C;
        std::sort(node.begin(), node.end());
        int nodes = 0, fewest = span.size;
        for (size_t a = 0, b = 0; a < node.size(); a = b, ++nodes) {
          while (b < node.size() && node[b] == node[a]) ++b;
          fewest = std::min(fewest, static_cast<int>(b - a));
        }
        if (nodes > worst_nodes || (nodes == worst_nodes && fewest < worst_per_node)) worst_nodes = nodes, worst_per_node = fewest;
      }
    group.nodes_spanned = worst_nodes;
    group.members_per_node = worst_nodes > 1 ? worst_per_node : span.size;
    group.link = worst_nodes > 1 ? Link::ScaleOut : Link::NVLink;
  }
}

// The layers (model chunks) each pipeline stage holds, and which chunks run the embedding and the
// output layer with the loss.
std::vector<StageInfo> place_stages(const ModelSpec& m, const Plan& plan) {
  const std::vector<int> per_stage = stage_layers(m, plan);
  const int P = plan.pp;
  std::vector<int> stage_first(P, 0);
  for (int s = 1; s < P; ++s) stage_first[s] = stage_first[s - 1] + per_stage[s - 1];
  // Layers [a, a + n − 1]; the chunk runs the embedding / the output layer when it is the first /
  // last of the model (n = 0: a chunk of only those when they count as pipeline layers).
  auto add_chunk = [&](StageInfo& st, int a, int n, bool first_of_model, bool last_of_model) {
    const int b = a + n - 1;
    if (first_of_model) st.embedding_chunk = static_cast<int>(st.chunks.size());
    if (last_of_model) st.output_chunk = static_cast<int>(st.chunks.size());
    st.chunks.push_back({a, b});
    st.layers += n;
    st.moe_layers += moe_layers_between(m, a, b);
  };
  std::vector<StageInfo> stages;
  for (int s = 0; s < P; ++s) {
    StageInfo st;
    st.stage = s;
    if (plan.schedule == Schedule::DualPipe) {
      // DualPipe (DeepSeek-V3 §3.2.1): the model is cut into p stages and device s holds stage s
      // of the forward-direction copy and stage p−1−s of the reverse one: 2× parameters.
      for (int part : {s, P - 1 - s}) add_chunk(st, stage_first[part], per_stage[part], part == 0, part == P - 1);
    } else if (plan.vpp > 1) {
      // Interleaved (Narayanan et al. 2021 §2.2): p·v model chunks, chunk k of stage s is virtual
      // stage k·p + s.
      const int v = plan.vpp;
      const std::vector<int> vl = virtual_stage_layers(m, plan);
      int first = 0;
      for (int vs = 0; vs < P * v; ++vs) {
        if (vs % P == s) add_chunk(st, first, vl[vs], vs == 0, vs == P * v - 1);
        first += vl[vs];
      }
    } else {
      add_chunk(st, stage_first[s], per_stage[s], s == 0, s == P - 1);
    }
    st.embedding = st.embedding_chunk >= 0;
    st.output = st.output_chunk >= 0;
    st.first_layer = st.chunks.front().first;
    stages.push_back(st);
  }
  return stages;
}

}  // namespace

std::string placed_rank_order(const Config& config) {
  const Plan& p = config.plan;
  std::array<Axis, 5> order{};
  if (!lays_out_instances(config) || !rank_order_axes(p.rank_order, order)) return p.rank_order;
  std::string out;
  for (Axis a : order)
    if (a != Axis::DP) out += std::string(out.empty() ? "" : "-") + name_of(a);
  return out + "-dp";
}

Placement place(const Config& config, const Mesh& mesh) {
  Placement pl;
  pl.gpus = mesh.gpus;
  pl.gpus_per_node = std::max(1, config.cluster.gpus_per_node);
  pl.nodes = (pl.gpus + pl.gpus_per_node - 1) / pl.gpus_per_node;
  // Serving instances that do not tile the nodes, laid out as a launcher places them (placement.h).
  const long long g = mesh_without_dp(config.plan), C = pl.gpus_per_node;
  if (lays_out_instances(config) && config.plan.dp > 1 && g < C && C % g != 0 && pl.gpus > C) pl.launch_instance_gpus = g;
  place_strides(config.plan, placed_rank_order(config), pl);
  place_groups(config.model, config.plan, mesh, pl);
  if (pl.launch_instance_gpus > 0) place_launched_groups(config.plan, pl);
  pl.stages = place_stages(config.model, config.plan);
  return pl;
}

long long rank_at_gpu(const Placement& p, long long gpu) {
  if (p.launch_instance_gpus <= 0) return gpu;
  const Launch l(p);
  const long long n = gpu / l.C, at = gpu % l.C, held = n < l.F ? l.k : l.tail;  // instances whole in node n
  if (at < held * l.g) return (n * l.k + at / l.g) * l.g + at % l.g;             // instance n·k + at/g, placed whole
  return l.whole * l.g + (n < l.F ? n * l.c + (at - l.k * l.g) : l.F * l.c + (at - l.tail * l.g));  // left over, in order
}

GpuPlacement gpu_placement(const Resolved& r, int gpu) {
  const ModelSpec& m = r.config.model;
  const Plan& plan = r.config.plan;
  const Workload& w = r.config.workload;
  const Placement& pl = r.placement;
  const Mesh& mesh = r.mesh;
  GpuPlacement g;
  const bool folding = plan.etp > 0;
  g.rank = gpu;
  g.node = gpu / pl.gpus_per_node;
  g.local = gpu % pl.gpus_per_node;
  const long long rank = rank_at_gpu(pl, gpu);
  auto coord = [&](long long stride, int size) { return static_cast<int>((rank / stride) % size); };
  g.tp = coord(pl.stride_tp, plan.tp);
  g.cp = coord(pl.stride_cp, plan.cp);
  g.dp = coord(pl.stride_dp, plan.dp);
  g.pp = coord(pl.stride_pp, plan.pp);
  if (folding) {
    const int local = static_cast<int>(rank % (pl.gpus / plan.pp));
    g.etp = local % mesh.etp;
    g.ep = (local / mesh.etp) % plan.ep;
    g.edp = local / (mesh.etp * plan.ep);
    g.replica = g.dp;
  } else {
    g.ep = coord(pl.stride_ep, plan.ep);
    g.etp = g.tp;
    g.edp = g.dp * plan.cp + g.cp;
    g.replica = g.dp * plan.ep + g.ep;
  }
  const StageInfo& st = pl.stages[g.pp];
  // From the first layer of the first non-empty chunk to the last layer held (none: 0 and −1).
  g.first_layer = 0;
  g.last_layer = -1;
  for (auto [a, b] : st.chunks) {
    if (b < a) continue;
    if (g.last_layer < 0) g.first_layer = a;
    g.last_layer = std::max(g.last_layer, b);
  }
  g.embedding = st.embedding;
  g.output = st.output;
  const int t = plan.tp;
  g.heads_begin = g.tp * m.heads / t;
  g.heads_end = (g.tp + 1) * m.heads / t;
  if (t <= m.kv_heads) {
    g.kv_heads_begin = g.tp * m.kv_heads / t;
    g.kv_heads_end = (g.tp + 1) * m.kv_heads / t;
  } else {  // replicated: tp/g ranks share one KV head
    g.kv_heads_begin = g.tp / (t / std::max(1, m.kv_heads));
    g.kv_heads_end = g.kv_heads_begin + 1;
  }
  g.ffn_begin = static_cast<int>(static_cast<long long>(g.tp) * m.ffn_hidden / t);
  g.ffn_end = static_cast<int>(static_cast<long long>(g.tp + 1) * m.ffn_hidden / t);
  if (is_moe(m)) {
    g.experts_begin = g.ep * m.experts / plan.ep;
    g.experts_end = (g.ep + 1) * m.experts / plan.ep;
    g.expert_ffn_begin = g.etp * m.expert_ffn_hidden / mesh.etp;
    g.expert_ffn_end = (g.etp + 1) * m.expert_ffn_hidden / mesh.etp;
  }
  // Context parallel with causal load balancing (Megatron-Core): the sequence is cut into 2·cp
  // chunks and rank i holds chunks i and 2·cp−1−i.
  const int c = plan.cp, s = w.seq_len;
  if (c == 1) {
    g.seq_chunks.push_back({0, s});
  } else {
    const int chunk = s / (2 * c);
    g.seq_chunks.push_back({g.cp * chunk, (g.cp + 1) * chunk});
    g.seq_chunks.push_back({(2 * c - 1 - g.cp) * chunk, (2 * c - g.cp) * chunk});
  }
  return g;
}

}  // namespace cutlab
