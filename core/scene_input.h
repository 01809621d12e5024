// scene_input.h: what the figures (scene_placement, scene_cuts, the CLI's pipeline figure) read of
// an evaluated config, the same in both modes: the resolved mesh and placement, the comm table and
// memory of the mode that ran, and (serving) the serving result or (training) the training one.
#pragma once
#include <vector>

#include "core/estimate.h"

namespace cutlab {

struct SceneInput {
  const Resolved& resolved;
  const Mesh& mesh;
  const Placement& placement;
  bool serving = false;
  const std::vector<CommOp>& comm;
  const MemoryResult& memory;
  const InferenceEstimate& inference;  // serving; empty when training
  const TrainingEstimate& training;    // training; empty when serving
};

inline SceneInput scene_input(const Resolved& r, const Estimate& e) {
  static const InferenceEstimate no_serving{};
  static const TrainingEstimate no_training{};
  if (const auto* s = std::get_if<ServingEstimate>(&e))
    return {r, r.mesh, r.placement, true, s->serving.comm, s->serving.memory, s->serving, no_training};
  const auto* t = std::get_if<TrainingEstimate>(&e);
  const TrainingEstimate& tr = t ? *t : no_training;
  return {r, r.mesh, r.placement, false, tr.comm, tr.memory, no_serving, tr};
}

}  // namespace cutlab
