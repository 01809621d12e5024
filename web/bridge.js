// bridge.js: the only file that talks to the WASM core (core.js, built from wasm/bindings.cpp,
// which binds core/api.h one to one). JSON text in, parsed {ok, result | errors} out.
// Optional functions (options, schedule, gpu, and later ones such as scene or search) are
// feature-detected, so the page works with whatever the core of the day offers.
(function (CL) {
  'use strict';
  const OPTIONAL = ['options', 'schedule', 'timeline', 'gpu', 'gpus', 'scene', 'search'];

  function wrap(m) {
    const call = (name, ...args) => {
      const out = m[name](...args);
      return typeof out === 'string' ? JSON.parse(out) : out;
    };
    const api = {
      module: m,
      has: (name) => typeof m[name] === 'function',
      evaluate: (text) => call('evaluate', text),
      presets: () => call('presets'),
    };
    for (const name of OPTIONAL) {
      if (typeof m[name] !== 'function') continue;
      api[name] = (...args) => call(name, ...args);
    }
    return api;
  }

  CL.bridge = {
    // Resolves to the api object once the module is compiled (SINGLE_FILE: no fetch, works on file://).
    load() {
      if (typeof window.createCutlab !== 'function') return Promise.reject(new Error('core.js did not load (build it with cmake --preset wasm && cmake --build --preset wasm)'));
      return window.createCutlab().then(wrap);
    },
    wrap,
  };
})(window.CL = window.CL || {});
