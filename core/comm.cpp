#include "core/comm.h"

#include "core/precision.h"

#include <algorithm>
#include <cmath>

namespace cutlab {

double collective_time_s(Collective kind, double S, const GroupInfo& g, const Cluster& c) {
  const double n = g.size;
  if (n <= 1 && kind != Collective::SendRecv) return 0.0;
  const double B_nv = c.nvlink_bytes_per_s * c.efficiency.nvlink;
  const double B_so = c.scaleout_bytes_per_s * c.efficiency.scaleout;
  const bool spans = g.nodes_spanned > 1;
  const double alpha = spans ? c.scaleout_latency_s : c.nvlink_latency_s;
  const double k = std::max(1, g.members_per_node);
  // Bandwidth term of a ring over the group: intra-node over NVLink; across nodes NCCL runs one ring
  // per NIC (k channels, each with S/k of the data), and every ring passes each node boundary, so each
  // NIC carries (n−1)/n of its ring's share: (n−1)/n · S/(k·B) (NCCL's bus bandwidth, nccl-tests
  // PERFORMANCE.md: busBW = algBW · (n−1)/n for all-gather). Not (N−1)/N over nodes, which only a
  // hierarchical algorithm reaches.
  auto ring = [&](double steps_factor) {
    if (!spans) return steps_factor * (n - 1) / n * S / B_nv;
    const double inter = steps_factor * (n - 1) / n * S / (k * B_so);
    const double intra = k > 1 ? steps_factor * (k - 1) / k * S / B_nv : 0.0;
    return std::max(inter, intra);
  };
  switch (kind) {
    case Collective::AllReduce: {
      // Ring (reduce-scatter + all-gather): 2(n−1)/n · S/B + 2(n−1)·α. For small messages NCCL
      // switches to latency-bound algorithms (tree / LL protocols): 2·S/B + 2·⌈log2 n⌉·α. Take the faster.
      const double ring_s = ring(2.0) + 2.0 * (n - 1) * alpha;
      // Tree bandwidth term: 2·S over NVLink inside a node; across nodes 2·S over the k NICs of a node's
      // members, while the members reduce over NVLink.
      const double tree_bw = !spans ? 2.0 * S / B_nv : std::max(2.0 * S / (k * B_so), k > 1 ? 2.0 * (k - 1) / k * S / B_nv : 0.0);
      const double tree_s = tree_bw + 2.0 * std::ceil(std::log2(n)) * alpha;
      return std::min(ring_s, tree_s);
    }
    case Collective::AllGather:
    case Collective::ReduceScatter:  // (n−1)/n · S/B + (n−1)·α
      return ring(1.0) + (n - 1) * alpha;
    case Collective::AllToAll: {
      // Each GPU keeps 1/n of S and sends (n−1)/n; the part bound for other nodes, (n−k)/n, leaves
      // through its own NIC while the rest moves over NVLink. The n − 1 sends are issued together
      // (NCCL grouped send/recv; DeepEP), so their latencies overlap: one α, not (n − 1)·α (DeepEP
      // measures about 0.2 ms per dispatch at EP 256, where (n − 1)·α would be 2 ms).
      const double intra = (k - 1) / n * S / B_nv;
      const double inter = spans ? (n - k) / n * S / B_so : 0.0;
      return std::max(intra, inter) + alpha;
    }
    case Collective::SendRecv: return S / (spans ? B_so : B_nv) + alpha;
  }
  return 0.0;
}

Routing routing_of(const ModelSpec& m) { return {double(m.top_k), double(m.experts), m.route_groups, m.route_group_limit}; }

EpExchange ep_exchange(EpDispatcher d, double S, const Routing& r, const GroupInfo& g, bool dispatch) {
  if (d != EpDispatcher::AllGather) return {Collective::AllToAll, S};
  const double k = std::max(1.0, r.top_k);
  return {dispatch ? Collective::AllGather : Collective::ReduceScatter, S / k * g.size};
}

double ep_exchange_time_s(EpDispatcher d, double S, const Routing& r, const GroupInfo& g, const Cluster& c) {
  if (d == EpDispatcher::DeepEp) return deduplicated_all_to_all_time_s(S, r, g, c);
  const EpExchange x = ep_exchange(d, S, r, g, true);
  return collective_time_s(x.collective, x.message_bytes, g, c);
}

double ep_dispatch_bytes_per_value(EpDispatchDtype dtype) {
  switch (dtype) {
    case EpDispatchDtype::FP8: return 1.0 + 4.0 / 128.0;
    case EpDispatchDtype::FP4: return dtype_bytes(WeightDtype::FP4);
    case EpDispatchDtype::BF16: break;
  }
  return 2.0;
}

double expected_remote_nodes(const Routing& r, int nodes) {
  const int N = nodes;
  if (N <= 1 || r.top_k <= 0 || r.experts <= 0) return 0.0;
  const double E = r.experts, k = r.top_k, per_node = E / N;
  const bool limited = r.groups > 0 && r.group_limit > 0 && r.group_limit < r.groups;
  const int G = limited ? r.groups : 1, M = limited ? r.group_limit : 1;
  const double per_group = E / G, eligible = M * per_group;  // experts a token may choose from
  // P(none of the k experts is among `held` of the `eligible` ones): k draws without replacement,
  // Π_{i<k} (eligible − held − i)/(eligible − i).
  auto miss_given = [&](double held) {
    double miss = 1.0;
    for (int i = 0; i < static_cast<int>(k); ++i) miss *= std::max(0.0, (eligible - held - i) / (eligible - i));
    return miss;
  };
  // P(a given node holds none of a token's experts). Derivation (by hand; the routing of DeepSeek-V3
  // §2.1.2 with balanced load: the token's M groups are a uniform M-subset of the G groups, its k
  // experts a uniform k-subset of the M·E/G experts in them):
  //  - G a multiple of N (each node holds q = G/N whole groups): j of the node's q groups are chosen,
  //    hypergeometric C(q,j)·C(G−q,M−j)/C(G,M); then the node holds j·E/G of the eligible experts:
  //    P(miss) = Σ_j C(q,j)·C(G−q,M−j)/C(G,M) · miss_given(j·E/G).
  //  - N a multiple of G (each group spans N/G nodes): the node's group is chosen with probability
  //    M/G, and then the node holds E/N of the eligible experts: P(miss) = 1 − M/G + M/G · miss_given(E/N).
  //  - groups and nodes not aligned: the restriction is ignored (an upper bound on the traffic).
  // Unrestricted routing (G = M = 1) gives miss_given(E/N) with eligible = E in both branches.
  double miss = 1.0;
  if (G % N == 0) {
    const int q = G / N;
    auto choose = [](int n, int c) {
      double v = 1.0;
      for (int i = 0; i < c; ++i) v = v * (n - i) / (i + 1);
      return v;
    };
    miss = 0.0;
    for (int j = std::max(0, M - (G - q)); j <= std::min(q, M); ++j)
      miss += choose(q, j) * choose(G - q, M - j) / choose(G, M) * miss_given(j * per_group);
  } else if (N % G == 0) {
    miss = 1.0 - double(M) / G + double(M) / G * miss_given(per_node);
  } else {
    Routing open = r;
    open.groups = open.group_limit = 0;
    return expected_remote_nodes(open, nodes);
  }
  // By symmetry every node, the sender's included, is reached with the same probability 1 − P(miss).
  return (N - 1) * (1.0 - miss);
}

double deduplicated_all_to_all_time_s(double S, const Routing& r, const GroupInfo& g, const Cluster& c) {
  const double n = g.size;
  if (n <= 1) return 0.0;
  const double copy = kDeepEpSms * c.efficiency.deepep_sm_bytes_per_s;  // DeepEP's SMs move every byte
  if (g.nodes_spanned <= 1 || r.top_k <= 0 || r.experts <= 0)
    return std::max(collective_time_s(Collective::AllToAll, S, g, c), (n - 1) / n * S / copy + c.nvlink_latency_s);
  const double remote_nodes = expected_remote_nodes(r, g.nodes_spanned);  // scale-out copies per token
  const double B_nv = c.nvlink_bytes_per_s * c.efficiency.nvlink, B_so = c.scaleout_bytes_per_s * c.efficiency.scaleout;
  const double inter = S / r.top_k * remote_nodes / B_so;
  const double intra_bytes = (n - 1) / n * S;  // every copy not for this GPU crosses NVLink once
  const double inter_bytes = S / r.top_k * remote_nodes;
  return std::max({inter, intra_bytes / B_nv, (inter_bytes + intra_bytes) / copy}) + c.scaleout_latency_s;
}

}  // namespace cutlab
