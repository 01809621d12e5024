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
// DeepEP-style dispatch or combine of `S` bytes (all top_k copies of this GPU's tokens) over an EP
// group holding `experts` experts evenly: a token crosses the scale-out network once per remote node
// that holds at least one of its experts, then fans out over NVLink (DeepSeek-V3 §3.2.2; DeepEP).
double deduplicated_all_to_all_time_s(double S, double top_k, double experts, const GroupInfo& g, const Cluster& c);

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
