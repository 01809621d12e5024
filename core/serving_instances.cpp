#include "core/serving_instances.h"

#include <algorithm>

namespace cutlab {

long long whole_instances(long long gpus, int per_node, long long instance_gpus) {
  if (gpus < 1 || per_node < 1 || instance_gpus < 1) return 0;
  const long long C = per_node, g = instance_gpus, nodes = gpus / C, rem = gpus % C;
  if (g <= C) return nodes * (C / g) + rem / g;
  return nodes / ((g + C - 1) / C);
}

long long instance_gpus(const Resolved& deployment) {
  const Plan& p = deployment.config.plan;
  if (p.etp > 0 && p.ep > 1) return deployment.mesh.gpus;  // experts folded over DP: one unit
  return std::min<long long>(deployment.mesh.gpus, mesh_without_dp(p));
}

Resolved one_instance(const Resolved& deployment) {
  const long long g = instance_gpus(deployment);
  if (deployment.mesh.gpus == g) return deployment;
  // The deployment is valid, so is one of its instances: its mesh and placement derived directly
  // (a search prices thousands of deployments; validating each instance again would double that).
  Resolved one{deployment.config, {}, {}};
  one.config.plan.dp = 1;
  one.config.cluster.gpus = static_cast<int>(g);
  one.mesh = derive_mesh(one.config.plan, one.config.workload);
  one.placement = place(one.config, one.mesh);
  return one;
}

}  // namespace cutlab
