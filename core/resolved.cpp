#include "core/resolved.h"

namespace cutlab {

Result<Resolved> resolve(const Config& config) {
  Result<Resolved> r;
  const Mesh mesh = derive_mesh(config.plan, config.workload);
  r.errors = validate(config, mesh);
  if (!r.ok()) return r;
  r.value.config = config;
  r.value.mesh = mesh;
  r.value.placement = place(config, mesh);
  return r;
}

}  // namespace cutlab
