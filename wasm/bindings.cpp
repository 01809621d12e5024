// bindings.cpp: the WASM face of core/api.h. A translation table only: JSON text in, JSON text
// out, nothing throws (errors come back as {"ok": false, "errors": [...]}). Every function the
// page calls is listed here, and by the same name in web/bridge.js (module and page are built from
// one tree). Built twice (wasm/CMakeLists.txt): web/core-full.js with every function, and web/core.js
// with CUTLAB_WASM_FIRST_VIEW defined: only the first block, what the page's first view (Cuts) and
// its controls call (web/bridge.js FIRST), so that the page's first script stays small.
#include <emscripten/bind.h>

#include "core/api.h"

EMSCRIPTEN_BINDINGS(cutlab) {
  using namespace cutlab::api;
  emscripten::function("evaluate", &evaluate_json);
  emscripten::function(
      "evaluations", +[]() { return static_cast<double>(evaluations()); });
  emscripten::function("presets", &presets_json);
  emscripten::function("options", &options_json);
  emscripten::function("gpus", &gpus_json);
  emscripten::function("cutsScene", &cuts_scene_json);
#ifndef CUTLAB_WASM_FIRST_VIEW
  emscripten::function("schedule", &schedule_json);
  emscripten::function("timeline", &timeline_json);
  emscripten::function("gpu", &gpu_json);
  emscripten::function("search", &search_json);
  emscripten::function("searchPart", &search_part_json);
  emscripten::function("searchMerge", &search_merge_json);
  emscripten::function("servingSearch", &serving_search_json);
  emscripten::function("disaggregation", &disaggregation_json);
  emscripten::function("balance", &balance_json);
  emscripten::function("launch", &launch_json);
  emscripten::function("placementScene", &placement_scene_json);
#endif
}
