// comm.h: time of one collective on one process group, alpha-beta model with ring algorithms
// and NCCL's bus-bandwidth convention (Thakur et al. 2005 for the ring costs; docs/hardware-sources.md §2).
// A group inside one NVLink domain runs at NVLink bandwidth; a group spanning N nodes with k
// members per node is hierarchical: the inter-node phase moves 1/k of the data per NIC
// (each GPU has its own NIC) and runs concurrently with the intra-node phase.
// Ignores: tree/NVLS algorithms, congestion between concurrent groups, SHARP in-network reduction.
#pragma once
#include <string>

#include "core/hardware.h"
#include "core/placement.h"

namespace cutlab {

// `bytes`: for all-reduce the buffer size; for all-gather / reduce-scatter the full (gathered)
// tensor; for all-to-all the bytes each GPU sends (including its own share); for send-recv the message.
// How tokens pick experts: top_k of `experts`, spread evenly over the EP group (expert e on EP rank
// e / (experts/ep), so a node holds a contiguous block of experts/N). With node-limited routing
// (DeepSeek-V3 §2.1.2) the experts form `groups` equal contiguous groups and a token's top_k come from
// `group_limit` of them; groups = 0 (or group_limit = 0): unrestricted.
struct Routing {
  double top_k = 0, experts = 0;
  int groups = 0, group_limit = 0;
};

Routing routing_of(const ModelSpec& m);

// Bytes per value of a dispatched token: 2 in bf16; with fp8 dispatch 1 byte plus one fp32 scale per
// 128 values (DeepSeek-V3 §3.3.2 "Low-Precision Communication", 1×128 tile-wise quantisation
// §3.3.1; DeepEP's fp8 dispatch); with fp4 dispatch NVFP4's 0.5 byte plus one fp8 scale per 16 values
// (core/precision.h), the tokens quantised for the experts' NVFP4 GEMMs before they travel (TensorRT-LLM's
// fused MoE can gather or send them so: its "post-quant" all-gather and all-to-all). The combine stays
// bf16: 2.
double ep_dispatch_bytes_per_value(EpDispatchDtype dtype);

// Expected number of nodes, other than the sender's, holding at least one of a token's top_k experts
// when the EP group spans `nodes` nodes, routing uniform (balanced load) within the rules above.
double expected_remote_nodes(const Routing& r, int nodes);

// SMs that DeepEP's dispatch and combine kernels occupy (DeepSeek-V3 §3.2.2: 20 of the H800's 132;
// DeepEP's Buffer default; Megatron-Core moe_deepep_num_sms 20).
constexpr double kDeepEpSms = 20;

// DeepEP-style dispatch or combine of `S` bytes (all top_k copies of this GPU's tokens) over an EP
// group: a token crosses the scale-out network once per remote node that holds at least one of its
// experts, then fans out over NVLink (DeepSeek-V3 §3.2.2; DeepEP). The kernels' kDeepEpSms SMs copy
// every byte they send, over either link, at cluster.efficiency.deepep_sm_bytes_per_s each: the time
// is the slowest of the scale-out bytes, the NVLink bytes and their sum through the SMs.
double deduplicated_all_to_all_time_s(double S, const Routing& r, const GroupInfo& g, const Cluster& c);

// An EP dispatch or combine of `S` bytes (all top_k copies of this GPU's tokens, as an all-to-all
// sends them) with the plan's dispatcher:
// - alltoall: an all-to-all of S (Megatron-Core's MoEAlltoAllTokenDispatcher);
// - deepep: deduplicated_all_to_all_time_s;
// - allgather: every EP rank receives every token once, whatever its experts: an all-gather of the
//   group's tokens (S/top_k per rank, a gathered tensor of ep·S/top_k) to dispatch and a
//   reduce-scatter of the same size to combine (Megatron-Core's MoEAllGatherTokenDispatcher;
//   TensorRT-LLM's fused MoE under attention DP unless its all-to-all is on (MNNVL and ep > top_k);
//   vLLM's allgather_reducescatter all2all backend). Each rank moves (ep − 1)·S/top_k where an
//   all-to-all moves (ep − 1)/ep·S: ep/top_k times the bytes, fewer when ep < top_k. A ring
//   all-gather and reduce-scatter cost the same (comm.cpp), so one time serves both directions.
double ep_exchange_time_s(EpDispatcher d, double S, const Routing& r, const GroupInfo& g, const Cluster& c);

// Collective and message (this file's byte convention) of an EP exchange of `S` bytes as above:
// dispatch true for the dispatch (all-gather), false for the combine (reduce-scatter).
struct EpExchange {
  Collective collective = Collective::AllToAll;
  double message_bytes = 0;
};
EpExchange ep_exchange(EpDispatcher d, double S, const Routing& r, const GroupInfo& g, bool dispatch);

double collective_time_s(Collective kind, double bytes, const GroupInfo& group, const Cluster& cluster);

// One collective of the step, as reported.
struct CommOp {
  Axis axis = Axis::TP;
  Collective collective = Collective::AllReduce;
  std::string what;          // e.g. "layer outputs, forward and backward"
  double message_bytes = 0;  // per call
  double calls = 0;          // per step on this GPU
  double bytes = 0;          // message_bytes × calls
  int group_size = 1;
  Link link = Link::NVLink;
  double time_s = 0;     // total per step
  double exposed_s = 0;  // part not hidden behind compute
};

}  // namespace cutlab
