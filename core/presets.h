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
  std::string fitted_to;  // what its efficiencies were fitted to: "training runs / serving cases"
  // How far its serving figures are off for a model the serving fit has not seen: the mean |error| of the
  // serving cases of `serving_held_out_family` left out one model at a time, or of each GPU family left out
  // when "pooled" (docs/validation.md §8, "Held out"; tests/readme.mjs checks them against that table).
  std::string serving_held_out_family;
  double serving_held_out_percent = 0;
};

const std::vector<ModelPreset>& model_presets();
const std::vector<ClusterPreset>& cluster_presets();
std::optional<ModelSpec> find_model_preset(const std::string& name);
std::optional<Cluster> find_cluster_preset(const std::string& name);
// The preset a cluster is, with its serving efficiencies as the preset gives them (so that the preset's
// calibration and held-out error speak for its serving figures), or null.
const ClusterPreset* serving_preset_as_given(const Cluster& c);

}  // namespace cutlab
