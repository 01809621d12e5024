// placement.h: where every rank sits on each parallel axis, what it holds, and which link each
// process group uses. Ranks are laid out in mixed radix by plan.rank_order, innermost first
// (Megatron-Core default tp-cp-ep-dp-pp: a TP group is consecutive GPUs of one node).
// Nothing is enumerated per GPU: gpu_placement(rank) is computed on demand, and a group's link
// is derived from its strides, so 16,384+ GPUs cost the same as 8.
// A kind of group (TP, DP × CP × EP, …) is judged on its worst group, the one spanning the most
// nodes (then with the fewest members on one node), not the group of rank 0: collectives run in
// lockstep. A group spanning nodes uses the scale-out link.
#pragma once
#include <string>
#include <vector>

#include "core/choices.h"
#include "core/hardware.h"
#include "core/model.h"
#include "core/plan.h"

namespace cutlab {

struct GroupInfo {
  Axis axis = Axis::TP;
  int size = 1;              // GPUs per group
  long long count = 0;       // number of such groups
  int members_per_node = 1;  // of the worst group: the fewest members it has on one node
  int nodes_spanned = 1;     // of the worst group
  Link link = Link::NVLink;
};

struct StageInfo {
  int stage = 0;
  int first_layer = 0;                      // 0-based, inclusive (chunk 0; interleaved stages hold several ranges)
  int layers = 0;                           // layers held (all chunks)
  int moe_layers = 0;                       // of which MoE
  bool embedding = false;                   // holds the input embedding
  bool output = false;                      // holds the output layer and loss
  std::vector<std::pair<int, int>> chunks;  // [first, last] layer of each model chunk held ([a, a − 1]: none,
                                            // a chunk of only the embedding or the loss)
  int embedding_chunk = -1;                 // index in chunks of the one that runs the embedding (−1: none)
  int output_chunk = -1;                    // … that runs the output layer and the loss (−1: none)
};

struct Placement {
  int gpus = 1;
  int nodes = 1;
  int gpus_per_node = 1;
  std::vector<GroupInfo> groups;
  std::vector<StageInfo> stages;
  // Strides of the five axes in rank space (attention mesh), by name order tp, cp, ep, dp, pp.
  long long stride_tp = 1, stride_cp = 1, stride_ep = 1, stride_dp = 1, stride_pp = 1;
  // Serving instances of g GPUs that do not tile the nodes (g < gpus_per_node, not a divisor of it,
  // more GPUs than one node): laid out as a launcher places them (core/serving_instances.h), the
  // first whole_instances(gpus, C, g) each inside a node, ⌊C/g⌋ per node from its first GPU, and the
  // rest on the GPUs the nodes leave over, in order, straddling nodes. Ranks stay instance-major
  // (dp outermost); rank_at_gpu maps a GPU to its rank. 0: GPU i is rank i.
  long long launch_instance_gpus = 0;
};

// The rank on GPU `gpu` (its position in the cluster, node = gpu / gpus_per_node): the GPU itself
// unless the placement lays serving instances out as a launcher does (launch_instance_gpus).
long long rank_at_gpu(const Placement& p, long long gpu);

// The rank order a config's ranks are laid out in: plan.rank_order for training; for serving the
// same order with dp moved outermost, so each instance (tp × cp × ep × pp GPUs, core/serving_instances.h)
// is consecutive ranks, whole inside a node where the node size is a multiple of it. Under MoE Parallel
// Folding (etp set, ep > 1) the experts span the data-parallel ranks, the instance is the whole mesh,
// and the plan's order stands.
std::string placed_rank_order(const Config& config);

// Where the ranks of a validated config sit (core/resolved.cpp builds it once per evaluation).
Placement place(const Config& config, const Mesh& mesh);

const GroupInfo* find_group(const Placement& p, Axis axis);

// What one GPU holds.
struct GpuPlacement {
  int rank = 0;  // the GPU's position (rank_at_gpu gives its rank in the mesh)
  int node = 0;
  int local = 0;                               // index inside the node
  int tp = 0, cp = 0, ep = 0, dp = 0, pp = 0;  // coordinates on the attention mesh
  int etp = 0, edp = 0;                        // coordinates on the expert mesh
  int replica = 0;                             // data-parallel replica of the dense weights (0 … dp_attn-1)
  int first_layer = 0, last_layer = -1;        // of the stage (all chunks), inclusive
  int heads_begin = 0, heads_end = 0;          // query heads held (TP slice)
  int kv_heads_begin = 0, kv_heads_end = 0;    // KV heads held (replicated when tp > kv_heads)
  int ffn_begin = 0, ffn_end = 0;              // dense MLP columns held
  int experts_begin = 0, experts_end = 0;      // routed experts held
  int expert_ffn_begin = 0, expert_ffn_end = 0;
  std::vector<std::pair<int, int>> seq_chunks;  // token ranges [begin, end) of each sequence
  bool embedding = false, output = false;
};

struct Resolved;
GpuPlacement gpu_placement(const Resolved& r, int rank);

}  // namespace cutlab
