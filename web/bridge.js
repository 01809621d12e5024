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
    // Resolves to the api object once the module is compiled (SINGLE_FILE: no fetch, works on file://).
    load() {
      if (typeof window.createCutlab !== 'function') return Promise.reject(new Error('core.js did not load (build it with cmake --preset wasm && cmake --build --preset wasm)'));
      // Emscripten 3.1.6's SINGLE_FILE loader fetch()es its own data: URI when fetch exists, and only
      // then falls back to decoding it; under a strict Content-Security-Policy (connect-src 'self')
      // that fetch is a reported violation. The module reads `fetch` while the factory runs
      // (createWasm → getBinaryPromise), so hide it for that call: the module decodes the data URI
      // itself (tryParseAsDataURI) and never asks the network.
      const fetch = window.fetch;
      let made;
      try {
        window.fetch = undefined;
        made = window.createCutlab();
      } finally {
        window.fetch = fetch;
      }
      return made.then(wrap);
    },
    wrap,
  };
})(window.CL = window.CL || {});
