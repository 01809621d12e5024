// serving_instances.h: how a serving deployment lays its instances on the nodes. An instance is one
// copy of the model, tp × cp × ep × pp GPUs (etp folded over DP: the whole mesh), serving its own
// requests; instances never synchronise, so unlike training's data-parallel groups they are not in
// lockstep, and each is launched on GPUs of its own: an engine's launcher (vLLM, SGLang, TensorRT-LLM
// with Dynamo or a Kubernetes operator) puts one instance's ranks in one node when it fits in one
// (TP and EP stay on NVLink), else on ⌈g/C⌉ whole nodes. Instances that the nodes cannot hold whole
// straddle a node boundary as the plan's ranks lie.
#pragma once

#include "core/resolved.h"

namespace cutlab {

// Instances of `instance_gpus` GPUs that `gpus` GPUs in nodes of `per_node` hold whole: ⌊C/g⌋ in each
// whole node and ⌊rem/g⌋ in a last partial one when g ≤ C; one per ⌈g/C⌉ whole nodes otherwise
// (e.g. EP 16 on 72-GPU NVL72 racks: 4 per rack, 8 GPUs left; 128 GPUs = 72 + 56 hold 4 + 3).
long long whole_instances(long long gpus, int per_node, long long instance_gpus);

// GPUs of one instance: tp × cp × ep × pp (the whole mesh when the experts fold over DP, etp > 0).
long long instance_gpus(const Resolved& deployment);

// One instance of the deployment alone, from the first GPU of a node (dp 1, its GPUs only): how an
// instance placed whole runs. The deployment itself when it is one instance. `deployment` must be
// resolved (valid): the instance's mesh and placement are derived without validating it again.
Resolved one_instance(const Resolved& deployment);

}  // namespace cutlab
