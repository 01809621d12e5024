// bindings.cpp: the WASM face of core/api.h. A translation table only: JSON text in, JSON text
// out, nothing throws (errors come back as {"ok": false, "errors": [...]}). Every function the
// page calls is listed here, and by the same name in web/bridge.js (module and page are built from
// one tree). Built twice (wasm/CMakeLists.txt): web/core-full.js with every function, and web/core.js
// with CUTLAB_WASM_FIRST_VIEW defined: only the first block, what the page's first view (Cuts) and
// its controls call (web/bridge.js FIRST), so that the page's first script stays small.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "core/api.h"

#ifndef CUTLAB_WASM_FIRST_VIEW
namespace {

// The answer of F as a view of its UTF-8 bytes (a Uint8Array on the module's memory, valid until the
// next call), for web/bridge.js to decode with TextDecoder: embind's std::string return scans every
// byte in JavaScript and copies the text once more (3.1.6's std::string fromWireType), about 1 ms of
// a frame for the 152 KB timeline at 16,384 GPUs. Only in core-full.js (no size limit); the string
// functions stay for every other caller.
template <auto F, class... Args>
emscripten::val bytes(Args... args) {
  static std::string last;
  last = F(args...);
  return emscripten::val(emscripten::typed_memory_view(last.size(), reinterpret_cast<const unsigned char*>(last.data())));
}

}  // namespace
#endif

EMSCRIPTEN_BINDINGS(cutlab) {
  using namespace cutlab::api;
#ifdef CUTLAB_WASM_FIRST_VIEW
  // training only: a serving plan answers "pending" (core/api.h training_evaluate_json), and
  // web/bridge.js asks core-full.js
  emscripten::function("evaluate", &training_evaluate_json);
  emscripten::function("cutsScene", &training_cuts_scene_json);
#else
  emscripten::function("evaluate", &evaluate_json);
  emscripten::function("cutsScene", &cuts_scene_json);
#endif
  emscripten::function(
      "evaluations", +[]() { return static_cast<double>(evaluations()); });
  emscripten::function("presets", &presets_json);
  emscripten::function("options", &options_json);
  emscripten::function("gpus", &gpus_json);
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
  // The functions the page calls on every change, as views of their bytes (web/bridge.js: NAME +
  // "Bytes" when the module has it).
  emscripten::function("evaluateBytes", &bytes<&evaluate_json, std::string>);
  emscripten::function("optionsBytes", &bytes<&options_json, std::string>);
  emscripten::function("gpusBytes", &bytes<&gpus_json, std::string, int, int>);
  emscripten::function("cutsSceneBytes", &bytes<&cuts_scene_json, std::string, double, int>);
  emscripten::function("timelineBytes", &bytes<&timeline_json, std::string, double, double>);
  emscripten::function("placementSceneBytes", &bytes<&placement_scene_json, std::string, double>);
#endif
}
