// bridge.js: the only file that talks to the WASM core (core.js, built from wasm/bindings.cpp,
// which binds core/api.h one to one). JSON text in, parsed {ok, result | errors} out. The module
// and the page are built from one tree, so every function of bindings.cpp is here.
(function (CL) {
  'use strict';
  const FUNCTIONS = ['evaluate', 'evaluations', 'presets', 'options', 'schedule', 'timeline', 'gpu', 'gpus', 'search', 'searchPart', 'searchMerge', 'servingSearch', 'disaggregation', 'balance', 'placementScene', 'cutsScene', 'launch'];

  function wrap(m) {
    const api = { module: m };
    for (const name of FUNCTIONS) {
      api[name] = (...args) => {
        const out = m[name](...args);
        return typeof out === 'string' ? JSON.parse(out) : out;
      };
    }
    return api;
  }

  CL.bridge = {
    // Resolves to the api object once the module is compiled. core.js carries the module itself
    // (wasm/embed.js: inflated with DecompressionStream and handed to the glue, no fetch), so this
    // works on file:// and under a strict Content-Security-Policy.
    load() {
      if (typeof window.createCutlab !== 'function') return Promise.reject(new Error('core.js did not load (build it with cmake --preset wasm && cmake --build --preset wasm)'));
      return window.createCutlab().then(wrap);
    },
    wrap,
  };
})(window.CL = window.CL || {});
