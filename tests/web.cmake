# Tests of the web explorer, registered only when their tools are here, so a native-only build
# still passes: the node tests need node and the WASM build (build-wasm/web/core.js and
# core-full.js, made by `cmake --preset wasm && cmake --build --preset wasm` before configuring this
# build); the browser test also needs Chromium and playwright-core (`npm install`).
find_program(NODE_EXECUTABLE node)
find_program(CHROMIUM_EXECUTABLE NAMES chromium chromium-browser)
set(CUTLAB_WEB_DIR "${PROJECT_SOURCE_DIR}/build-wasm/web" CACHE PATH "Output of the WASM build: core.js, core-full.js and the page")

if(NODE_EXECUTABLE AND EXISTS "${CUTLAB_WEB_DIR}/core.js" AND EXISTS "${CUTLAB_WEB_DIR}/core-full.js")
  # WASM vs native CLI: evaluate, errors, schedule, presets; the timeline scene vs the CLI's
  # schedule; gpus(); web/mesh.js, derive.js, state.js and export.js vs the core; core.js = core-full.js
  # for the first view's functions, web/bridge.js's loading of core-full.js, core.js ≤ 150 KB gzip.
  add_test(NAME web_node_parity COMMAND ${NODE_EXECUTABLE} --test ${CMAKE_CURRENT_SOURCE_DIR}/js/)
  set_tests_properties(web_node_parity PROPERTIES
    ENVIRONMENT "WASM_DIR=${CUTLAB_WEB_DIR};NATIVE_CLI=$<TARGET_FILE:cutlab>" TIMEOUT 120)

  if(CHROMIUM_EXECUTABLE AND EXISTS "${PROJECT_SOURCE_DIR}/node_modules/playwright-core")
    # The page in headless Chromium, from file:// and from a local http server: controls, tables
    # against the CLI, errors on the right fields, URL state, the pipeline drawn from the core's
    # scene (hover, SVG and PNG downloads), a pasted config.json, redraw time, screenshots (and
    # docs/explorer.png is written only when DOCS_SCREENSHOT is set by hand: tests do not touch tracked files).
    # One entry, one process: its node:test cases (tests/browser/cases/, reported one by one) share
    # one Chromium and one http server and run 3 at a time (BROWSER_CASES); a browser per ctest
    # entry would cost a launch and first page loads each. RUN_SERIAL: the redraw-time case measures
    # frames, so no other test competes for the 2 cores (the rest of the suite takes ~2 s).
    add_test(NAME web_browser_explorer COMMAND ${NODE_EXECUTABLE} --test-reporter=spec ${CMAKE_CURRENT_SOURCE_DIR}/browser/explorer.mjs)
    set_tests_properties(web_browser_explorer PROPERTIES
      ENVIRONMENT "WEB_DIR=${CUTLAB_WEB_DIR};NATIVE_CLI=$<TARGET_FILE:cutlab>;CHROMIUM=${CHROMIUM_EXECUTABLE};SCREENSHOT_DIR=${CMAKE_CURRENT_SOURCE_DIR}/browser/screenshots;DOCS_SCREENSHOT="
      TIMEOUT 600 RUN_SERIAL TRUE)   # 280–303 s on the 2-core development machine (2026-12-02)
  endif()
endif()
