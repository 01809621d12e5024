// resolved.h: a config after validation, with what follows from it derived exactly once: the two
// meshes (and the plan's derived choices: effective ZeRO stage, model chunks per stage) and where
// every rank sits (placement). Every evaluation step takes this one value; nothing downstream
// re-derives the mesh or re-validates.
#pragma once
#include "core/error.h"
#include "core/placement.h"
#include "core/plan.h"

namespace cutlab {

struct Resolved {
  Config config;
  Mesh mesh;
  Placement placement;
};

// Validates the config (every broken rule at once) and derives its mesh and placement.
Result<Resolved> resolve(const Config& config);

}  // namespace cutlab
