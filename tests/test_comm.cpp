#include <catch2/catch.hpp>

#include "core/comm.h"
#include "core/presets.h"

using namespace cutlab;
using Catch::Matchers::WithinRel;

namespace {
GroupInfo group(int size, int per_node) {
  GroupInfo g;
  g.size = size;
  g.members_per_node = per_node;
  g.nodes_spanned = (size + per_node - 1) / per_node;
  g.link = g.nodes_spanned > 1 ? Link::ScaleOut : Link::NVLink;
  return g;
}
}  // namespace

TEST_CASE("ring collectives inside a node follow the alpha-beta formulas", "[comm]") {
  const Cluster c = *find_cluster_preset("dgx-h100");
  const double B = c.nvlink_bytes_per_s * c.efficiency.nvlink, a = c.nvlink_latency_s, S = 256e6, n = 8;
  const GroupInfo g = group(8, 8);
  // Thakur et al. 2005 ring costs (docs/hardware-sources.md §2): all-reduce 2(n−1)/n·S/B + 2(n−1)α; all-gather (n−1)/n·S/B + (n−1)α.
  REQUIRE_THAT(collective_time_s(Collective::AllReduce, S, g, c), WithinRel(2 * (n - 1) / n * S / B + 2 * (n - 1) * a, 1e-12));
  REQUIRE_THAT(collective_time_s(Collective::AllGather, S, g, c), WithinRel((n - 1) / n * S / B + (n - 1) * a, 1e-12));
  REQUIRE_THAT(collective_time_s(Collective::ReduceScatter, S, g, c), WithinRel((n - 1) / n * S / B + (n - 1) * a, 1e-12));
  // All-to-all: the n − 1 sends are concurrent, one latency.
  REQUIRE_THAT(collective_time_s(Collective::AllToAll, S, g, c), WithinRel((n - 1) / n * S / B + a, 1e-12));
  REQUIRE_THAT(collective_time_s(Collective::SendRecv, S, g, c), WithinRel(S / B + a, 1e-12));
}

TEST_CASE("a group with one GPU per node runs at the NIC's bandwidth", "[comm]") {
  const Cluster c = *find_cluster_preset("dgx-h100");
  const double B = c.scaleout_bytes_per_s * c.efficiency.scaleout, a = c.scaleout_latency_s, S = 1e9, n = 128;
  const GroupInfo g = group(128, 1);
  // The faster of the ring, 2(n−1)/n·S/B + 2(n−1)α, and the tree, 2·S/B + 2·log2(n)·α.
  const double ring = 2 * (n - 1) / n * S / B + 2 * (n - 1) * a, tree = 2 * S / B + 2 * 7 * a;
  REQUIRE_THAT(collective_time_s(Collective::AllReduce, S, g, c), WithinRel(std::min(ring, tree), 1e-12));
  REQUIRE_THAT(collective_time_s(Collective::AllGather, S, g, c), WithinRel((n - 1) / n * S / B + (n - 1) * a, 1e-12));
}

TEST_CASE("a group spanning nodes with k members per node shares k NICs", "[comm]") {
  // TP16 on two 8-GPU nodes: NCCL's 8 rings (one per NIC) each carry S/8 and pass every node
  // boundary: each NIC moves 2(n−1)/n of its ring's share (nccl-tests busBW), 1.875× the (N−1)/N of
  // a hierarchical algorithm; the intra-node phase 2(k−1)/k·S over NVLink; the slower one bounds it.
  const Cluster c = *find_cluster_preset("dgx-h100");
  const double Bs = c.scaleout_bytes_per_s * c.efficiency.scaleout, Bn = c.nvlink_bytes_per_s * c.efficiency.nvlink;
  const double S = 512e6, k = 8, n = 16;
  const double inter = 2 * (n - 1) / n * S / (k * Bs), intra = 2 * (k - 1) / k * S / Bn;
  const double ring = std::max(inter, intra) + 2 * (n - 1) * c.scaleout_latency_s;
  const double tree = std::max(2 * S / (k * Bs), 2 * (k - 1) / k * S / Bn) + 2 * 4 * c.scaleout_latency_s;
  REQUIRE_THAT(collective_time_s(Collective::AllReduce, S, group(16, 8), c), WithinRel(std::min(ring, tree), 1e-12));
  // All-to-all: (n − k)/n of the data leaves the node through each GPU's own NIC.
  REQUIRE_THAT(collective_time_s(Collective::AllToAll, S, group(16, 8), c),
               WithinRel(std::max((k - 1) / n * S / Bn, (n - k) / n * S / Bs) + c.scaleout_latency_s, 1e-12));
}

TEST_CASE("a group of one GPU costs nothing", "[comm]") {
  const Cluster c = *find_cluster_preset("dgx-a100");
  REQUIRE(collective_time_s(Collective::AllReduce, 1e9, group(1, 1), c) == 0.0);
  REQUIRE(collective_time_s(Collective::AllToAll, 1e9, group(1, 1), c) == 0.0);
}

TEST_CASE("crossing nodes is slower than NVLink for the same collective", "[comm]") {
  const Cluster c = *find_cluster_preset("dgx-h100");
  REQUIRE(collective_time_s(Collective::AllReduce, 1e8, group(8, 1), c) >
          3 * collective_time_s(Collective::AllReduce, 1e8, group(8, 8), c));
}

TEST_CASE("small all-reduces are latency-bound and take the tree's log2 n steps", "[comm]") {
  // Decode: a 16 KiB all-reduce on 8 GPUs costs 2·S/B + 2·⌈log2 8⌉·α, below the ring's 2(n−1)·α.
  const Cluster c = *find_cluster_preset("dgx-h100");
  const double B = c.nvlink_bytes_per_s * c.efficiency.nvlink, a = c.nvlink_latency_s, S = 16384;
  const GroupInfo g = group(8, 8);
  REQUIRE_THAT(collective_time_s(Collective::AllReduce, S, g, c), WithinRel(2 * S / B + 6 * a, 1e-12));
}

TEST_CASE("node-limited routing lowers the expected remote nodes a token reaches", "[comm]") {
  // DeepSeek-V3: 256 experts, top-8; config.json n_group 8, topk_group 4 (§2.1.2: at most 4 nodes).
  Routing open{8, 256, 0, 0}, limited{8, 256, 8, 4};
  // Unrestricted, EP over 8 nodes of 32 experts: P(miss) = Π_{i<8} (224 − i)/(256 − i) = 0.338168;
  // remote = 7 · (1 − 0.338168) = 4.63282.
  REQUIRE_THAT(expected_remote_nodes(open, 8), WithinRel(4.63282, 1e-5));
  // Limited, groups = nodes (one group of 32 per node): the node's group is chosen with P 4/8;
  // then P(miss) = Π_{i<8} (96 − i)/(128 − i) = 0.0927473; remote = 7 · 0.5 · (1 − 0.0927473) = 3.17538.
  REQUIRE_THAT(expected_remote_nodes(limited, 8), WithinRel(3.17538, 1e-5));
  // All nodes, the sender's included: 8 · 0.5 · 0.907253 = 3.63 ≤ 4 nodes.
  REQUIRE(expected_remote_nodes(limited, 8) * 8.0 / 7.0 <= 4.0);
  // 4 nodes of 2 groups each: j of the node's 2 groups chosen, C(2,j)·C(6,4−j)/C(8,4) = 15/70, 40/70, 15/70;
  // P(miss | j) = 1, Π(96 − i)/(128 − i) = 0.0927473, Π(64 − i)/(128 − i) = 0.00309586;
  // P(miss) = 15/70 + 40/70 · 0.0927473 + 15/70 · 0.00309586 = 0.267948; remote = 3 · 0.732052 = 2.19616.
  REQUIRE_THAT(expected_remote_nodes(limited, 4), WithinRel(2.19616, 1e-5));
  // 16 nodes, each half a group (16 experts): P(miss) = 1 − 4/8 + 4/8 · Π(112 − i)/(128 − i) = 0.666290;
  // remote = 15 · 0.333710 = 5.00565.
  REQUIRE_THAT(expected_remote_nodes(limited, 16), WithinRel(5.00565, 1e-5));
  // A limit equal to the groups is no limit; one node has no remote nodes.
  REQUIRE_THAT(expected_remote_nodes({8, 256, 8, 8}, 8), WithinRel(expected_remote_nodes(open, 8), 1e-12));
  REQUIRE(expected_remote_nodes(limited, 1) == 0.0);
  // Groups not aligned with nodes (3 nodes, 8 groups): the restriction is ignored (an upper bound).
  REQUIRE_THAT(expected_remote_nodes(limited, 3), WithinRel(expected_remote_nodes(open, 3), 1e-12));
}

TEST_CASE("DeepEP sends one copy per reached node, the plain all-to-all sends every copy", "[comm]") {
  // EP 64 over 8 nodes of the H800 cluster, S = all top-8 copies of 4,096 tokens of h = 7168 in bf16;
  // DeepEP's SMs fast enough not to bind (the next test prices them).
  Cluster c = *find_cluster_preset("hgx-h800");
  c.efficiency.deepep_sm_bytes_per_s = 1e12;
  const double Bs = c.scaleout_bytes_per_s * c.efficiency.scaleout, Bn = c.nvlink_bytes_per_s * c.efficiency.nvlink;
  const double S = 2.0 * 4096 * 8 * 7168, n = 64, k = 8;
  const GroupInfo g = group(64, 8);
  // inter = S/k · 3.17538 / B_so (one copy per remote node), intra = 63/64 · S / B_nv.
  const double dedup = std::max(S / 8 * 3.17538 / Bs, 63.0 / 64 * S / Bn) + c.scaleout_latency_s;
  REQUIRE_THAT(deduplicated_all_to_all_time_s(S, {8, 256, 8, 4}, g, c), WithinRel(dedup, 1e-5));
  // The plain all-to-all ignores the routing: (n − k)/n of S leaves through the NIC.
  REQUIRE_THAT(collective_time_s(Collective::AllToAll, S, g, c),
               WithinRel(std::max((k - 1) / n * S / Bn, (n - k) / n * S / Bs) + c.scaleout_latency_s, 1e-12));
}

TEST_CASE("DeepEP's 20 SMs copy every byte: inside a node at 20 × the per-SM rate when that is below NVLink", "[comm]") {
  // EP 8 inside one H100 node, S = 128 MiB: NVLink at 450 GB/s · 0.8 = 360 GB/s would take 7/8 · S / 360e9;
  // 20 SMs at 5 GB/s copy 100 GB/s: 7/8 · 134,217,728 / 100e9 = 1.174 ms (+ the NVLink latency).
  Cluster c = *find_cluster_preset("dgx-h100");
  c.efficiency.deepep_sm_bytes_per_s = 5e9;
  GroupInfo g;
  g.size = 8, g.members_per_node = 8, g.nodes_spanned = 1, g.link = Link::NVLink;
  const Routing r{8, 128, 0, 0};
  const double S = 134217728.0;
  REQUIRE_THAT(deduplicated_all_to_all_time_s(S, r, g, c), WithinRel(7.0 / 8 * S / 100e9 + c.nvlink_latency_s, 1e-9));
  // A fast copy engine leaves NCCL's all-to-all time.
  c.efficiency.deepep_sm_bytes_per_s = 100e9;
  REQUIRE_THAT(deduplicated_all_to_all_time_s(S, r, g, c), WithinRel(collective_time_s(Collective::AllToAll, S, g, c), 1e-12));
}

TEST_CASE("the allgather dispatcher moves every token to every EP rank: ep/top_k times the all-to-all's bytes", "[comm]") {
  // EP 4 inside one H100 node, 4,096 tokens of h = 5120 in bf16 per rank. Top-1 (Llama 4): the
  // all-to-all sends S = 2 · 4096 · 1 · 5120 bytes, 3/4 of them to other GPUs; the all-gather's
  // gathered tensor is 4 · S, of which each GPU receives 3/4: 3 · S / B + 3α, about 4× the all-to-all.
  const Cluster c = *find_cluster_preset("dgx-h100");
  const double B = c.nvlink_bytes_per_s * c.efficiency.nvlink, a = c.nvlink_latency_s;
  const GroupInfo g = group(4, 4);
  const double S1 = 2.0 * 4096 * 1 * 5120;
  const Routing top1{1, 16, 0, 0};
  REQUIRE_THAT(ep_exchange_time_s(EpDispatcher::AllGather, S1, top1, g, c), WithinRel(3.0 * S1 / B + 3 * a, 1e-12));
  REQUIRE_THAT(ep_exchange_time_s(EpDispatcher::AllToAll, S1, top1, g, c), WithinRel(0.75 * S1 / B + a, 1e-12));
  // Top-8 (Qwen3): the all-to-all sends 8 copies, S8 = 8 · S1; the all-gather still moves each token
  // once: 3 · S1 / B + 3α, half the all-to-all's 3/4 · S8 / B = 6 · S1 / B.
  const Routing top8{8, 128, 0, 0};
  REQUIRE_THAT(ep_exchange_time_s(EpDispatcher::AllGather, 8 * S1, top8, g, c), WithinRel(3.0 * S1 / B + 3 * a, 1e-12));
  // The rows: all-gather to dispatch, reduce-scatter to combine, each of the gathered 4 · S1 bytes.
  const EpExchange d = ep_exchange(EpDispatcher::AllGather, 8 * S1, top8, g, true);
  const EpExchange b = ep_exchange(EpDispatcher::AllGather, 8 * S1, top8, g, false);
  REQUIRE(d.collective == Collective::AllGather);
  REQUIRE(b.collective == Collective::ReduceScatter);
  REQUIRE(d.message_bytes == 4 * S1);
  REQUIRE(b.message_bytes == 4 * S1);
  REQUIRE(ep_exchange(EpDispatcher::AllToAll, 8 * S1, top8, g, false).message_bytes == 8 * S1);
}
