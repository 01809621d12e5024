#include "core/placement.h"

#include "core/resolved.h"

#include <algorithm>
#include <array>

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

// Nodes spanned by the worst group of one axis (stride st < G, size n): the groups start at
// q·(st·n) + r (r < st, the inner axes' offsets), their members st apart, so a group starting at
// node offset o touches floor((o + (n − 1)·st)/G) + 1 nodes (st < G: no node in between is skipped).
// Collectives run in lockstep, so the slowest group sets the time: a TP 16 group of GPUs 64–79 in
// 72-GPU racks crosses two racks even though the group of rank 0 does not.
long long worst_nodes_one_axis(const Span& a, long long gpus, long long G) {
  const long long st = a.stride, n = a.size, period = st * n;
  long long worst = 1;
  const long long starts = std::min<long long>(gpus / std::max<long long>(1, period), G);
  for (long long q = 0; q < std::max<long long>(1, starts); ++q)
    for (long long r = 0; r < std::min(st, G); ++r) {
      const long long o = (q * period + r) % G;
      worst = std::max(worst, (o + (n - 1) * st) / G + 1);
    }
  return worst;
}

GroupInfo make_group(Axis name, std::vector<Span> axes, int gpus, int gpus_per_node) {
  GroupInfo g;
  g.axis = name;
  long long size = 1;
  for (const Span& a : axes) size *= a.size;
  g.size = static_cast<int>(size);
  g.count = size > 0 ? gpus / size : 0;
  std::sort(axes.begin(), axes.end(), [](const Span& a, const Span& b) { return a.stride > b.stride; });
  const long long k = std::max<long long>(1, members_below(axes, 0, 0, gpus_per_node));
  g.members_per_node = static_cast<int>(k);
  g.nodes_spanned = static_cast<int>((size + k - 1) / k);
  if (axes.size() == 1 && size > 1 && axes[0].stride < gpus_per_node) {
    const long long worst = worst_nodes_one_axis(axes[0], gpus, gpus_per_node);
    if (worst > g.nodes_spanned) {
      g.nodes_spanned = static_cast<int>(worst);
      g.members_per_node = static_cast<int>((size + worst - 1) / worst);
    }
  }
  g.link = g.nodes_spanned > 1 ? Link::ScaleOut : Link::NVLink;
  return g;
}

}  // namespace

const GroupInfo* find_group(const Placement& p, Axis axis) {
  for (const GroupInfo& g : p.groups)
    if (g.axis == axis) return &g;
  return nullptr;
}

namespace {

// Strides of the five attention-mesh axes in rank space, laid out in rank_order (innermost first).
// Under folding, ep is not an attention-mesh axis (size 1).
void place_strides(const Plan& plan, Placement& pl) {
  std::array<Axis, 5> order{Axis::TP, Axis::CP, Axis::EP, Axis::DP, Axis::PP};
  rank_order_axes(plan.rank_order, order);  // validated: a permutation of the five
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
  pl.groups.push_back(make_group(Axis::TP, {tp}, N, G));
  pl.groups.push_back(make_group(Axis::CP, {cp}, N, G));
  pl.groups.push_back(make_group(Axis::PP, {pp}, N, G));
  if (plan.etp == 0) {
    const Span ep{pl.stride_ep, plan.ep};
    pl.groups.push_back(make_group(Axis::EP, {ep}, N, G));
    pl.groups.push_back(make_group(Axis::DP, {dp}, N, G));
    // Dense gradients are reduced over every replica of the dense weights: DP × CP × EP
    // (Megatron: the data-parallel group with context parallel; EP ranks hold the same attention).
    pl.groups.push_back(make_group(Axis::DPGrad, {cp, ep, dp}, N, G));
    // Expert gradients over the expert-data-parallel group (CP × DP with etp = tp).
    if (is_moe(m)) pl.groups.push_back(make_group(Axis::EDP, {cp, dp}, N, G));
  } else {
    // Folding: inside each pipeline stage the expert mesh is etp (innermost) × ep × edp.
    const Span etp{1, mesh.etp}, ep{mesh.etp, plan.ep}, edp{static_cast<long long>(mesh.etp) * plan.ep, mesh.edp};
    pl.groups.push_back(make_group(Axis::DP, {dp}, N, G));
    pl.groups.push_back(make_group(Axis::DPGrad, {cp, dp}, N, G));
    pl.groups.push_back(make_group(Axis::ETP, {etp}, N, G));
    pl.groups.push_back(make_group(Axis::EP, {ep}, N, G));
    pl.groups.push_back(make_group(Axis::EDP, {edp}, N, G));
  }
}

// The layers (model chunks) each pipeline stage holds, and which chunks run the embedding and the
// output layer with the loss.
std::vector<StageInfo> place_stages(const ModelSpec& m, const Plan& plan) {
  const std::vector<int> per_stage = stage_layers(m, plan);
  const int P = plan.pp;
  std::vector<int> stage_first(P, 0);
  for (int s = 1; s < P; ++s) stage_first[s] = stage_first[s - 1] + per_stage[s - 1];
  const int first_moe = is_moe(m) ? m.dense_layers : m.layers;
  // Layers [a, a + n − 1]; the chunk runs the embedding / the output layer when it is the first /
  // last of the model (n = 0: a chunk of only those when they count as pipeline layers).
  auto add_chunk = [&](StageInfo& st, int a, int n, bool first_of_model, bool last_of_model) {
    const int b = a + n - 1;
    if (first_of_model) st.embedding_chunk = static_cast<int>(st.chunks.size());
    if (last_of_model) st.output_chunk = static_cast<int>(st.chunks.size());
    st.chunks.push_back({a, b});
    st.layers += n;
    st.moe_layers += std::max(0, b - std::max(a, first_moe) + 1);
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

Placement place(const Config& config, const Mesh& mesh) {
  Placement pl;
  pl.gpus = mesh.gpus;
  pl.gpus_per_node = std::max(1, config.cluster.gpus_per_node);
  pl.nodes = (pl.gpus + pl.gpus_per_node - 1) / pl.gpus_per_node;
  place_strides(config.plan, pl);
  place_groups(config.model, config.plan, mesh, pl);
  pl.stages = place_stages(config.model, config.plan);
  return pl;
}

GpuPlacement gpu_placement(const Resolved& r, int rank) {
  const ModelSpec& m = r.config.model;
  const Plan& plan = r.config.plan;
  const Workload& w = r.config.workload;
  const Placement& pl = r.placement;
  const Mesh& mesh = r.mesh;
  GpuPlacement g;
  const bool folding = plan.etp > 0;
  g.rank = rank;
  g.node = rank / pl.gpus_per_node;
  g.local = rank % pl.gpus_per_node;
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
