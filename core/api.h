// api.h: the string-in, string-out façade shared by the CLI and the WASM module.
// Every function takes JSON text and returns JSON text: {"ok": true, "result": …} or
// {"ok": false, "errors": [{"code", "path", "message"}, …]}. Nothing throws.
#pragma once
#include <string>

namespace cutlab::api {

std::string evaluate_json(const std::string& config_text);       // result: the estimate (README schema)
std::string schedule_json(const std::string& config_text);       // result: the schedule with every op
// result: the pipeline timeline's geometry (core/scene.h) for `width` × `height` pixels (height 0:
// rows of 22 px): training, the simulated schedule with each stage's DP tail and optimizer step;
// serving, three decode steps walking the stages.
std::string timeline_json(const std::string& config_text, double width, double height);
// result: what GPUs first … first + count − 1 hold (at most 4,096 per call).
std::string gpus_json(const std::string& config_text, int first, int count);
std::string gpu_json(const std::string& config_text, int rank);  // result: what one GPU holds
// result: the fastest plans that fit for the config's model, cluster.gpus and workload (search.h).
std::string search_json(const std::string& config_text, int top);
std::string options_json(const std::string& config_text);        // result: valid values per axis
std::string presets_json();                                      // result: models and clusters
// result: the Placement view's figure (core/figure.h, core/scene_placement.h) laid out for `width`
// pixels (200 to 20,000); its height follows from the content.
std::string placement_scene_json(const std::string& config_text, double width);
// result: the Cuts view's figure (core/scene_cuts.h) for `width` pixels with layer `layer` opened
// (0-based; −1: the default, the first MoE layer of an MoE model, else the first).
std::string cuts_scene_json(const std::string& config_text, double width, int layer);

}  // namespace cutlab::api
