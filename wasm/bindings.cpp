// bindings.cpp: the WASM face of core/api.h. A translation table only: JSON text in, JSON text
// out, nothing throws (errors come back as {"ok": false, "errors": [...]}). Every function the
// page calls is listed here; web/bridge.js feature-detects them, so a new api.h function
// needs one line here and nothing else.
#include <emscripten/bind.h>

#include "core/api.h"

EMSCRIPTEN_BINDINGS(cutlab) {
  using namespace cutlab::api;
  emscripten::function("evaluate", &evaluate_json);
  emscripten::function("schedule", &schedule_json);
  emscripten::function("timeline", &timeline_json);
  emscripten::function("gpu", &gpu_json);
  emscripten::function("gpus", &gpus_json);
  emscripten::function("options", &options_json);
  emscripten::function("search", &search_json);
  emscripten::function("presets", &presets_json);
}
