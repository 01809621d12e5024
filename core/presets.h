// presets.h: named models and clusters, each with the source of its numbers (presets.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/hardware.h"
#include "core/model.h"

namespace cutlab {

struct ModelPreset {
  ModelSpec spec;
  std::string source;       // where the dimensions come from
  double published_params;  // the size the source states (total parameters)
};

struct ClusterPreset {
  Cluster spec;
  std::string source;
  std::string calibration;  // what its efficiencies were fitted to: "training runs / serving cases"
};

const std::vector<ModelPreset>& model_presets();
const std::vector<ClusterPreset>& cluster_presets();
std::optional<ModelSpec> find_model_preset(const std::string& name);
std::optional<Cluster> find_cluster_preset(const std::string& name);

}  // namespace cutlab
