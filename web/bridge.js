// bridge.js: the only file that talks to the WASM core. JSON text in, parsed {ok, result | errors}
// out. Two modules are built from wasm/bindings.cpp (which binds core/api.h one to one) and the page
// is built from the same tree:
//   core.js       the page's first script: only FIRST, what the first view (Cuts) and the controls
//                 call (≤ 150 KB gzip: tests/js/size.test.mjs);
//   core-full.js  every function in FUNCTIONS, loaded on demand by a <script> of the same origin
//                 (file:// and the page's CSP script-src 'self' allow it).
// load() resolves to an api with every function of FUNCTIONS. FIRST come from core.js until
// core-full.js is loaded, and from core-full.js after (it is faster). The others come from
// core-full.js: once it is loaded they answer at once; until then a call starts loading it and
// answers {ok: false, pending: true, errors: [a 'loading' message]}, as evaluate and cutsScene do
// for a serving plan (core.js prices training only), and when it is ready (or has failed: api.fullError()) every onFull(callback) is called (app.js redraws then),
// and the calls answer (or give that error). api.ready(name) says whether a
// function answers now; api.full() loads core-full.js and resolves once it is ready (a view that is
// about to need it, prefetch after the first paint); api.module is core.js's raw module and
// api.moduleOf(name) the raw module that holds `name`.
(function (CL) {
  'use strict';
  const FUNCTIONS = ['evaluate', 'evaluations', 'presets', 'options', 'schedule', 'timeline', 'gpu', 'gpus', 'search', 'searchPart', 'searchMerge', 'servingSearch', 'disaggregation', 'balance', 'placementScene', 'cutsScene', 'launch'];
  // wasm/bindings.cpp's CUTLAB_WASM_FIRST_VIEW list, in this order (tests/js/first.test.mjs).
  const FIRST = ['evaluate', 'evaluations', 'presets', 'options', 'gpus', 'cutsScene'];
  const FULL_SCRIPT = 'core-full.js';

  const parse = (out) => (typeof out === 'string' ? JSON.parse(out) : out);
  // A module's answer to `name`, parsed: through NAME + 'Bytes' where the module has it (core-full.js,
  // wasm/bindings.cpp: a view of the JSON's bytes, decoded here at once, before another call can
  // reuse or move them), else the JSON text.
  const DECODER = new TextDecoder();
  const call = (mod, name, args) => {
    const bytes = mod[name + 'Bytes'];
    return bytes ? JSON.parse(DECODER.decode(bytes(...args))) : parse(mod[name](...args));
  };

  const unavailable = (err) => ({ ok: false, errors: [{ path: '', message: 'The rest of the cutlab core (core-full.js) could not start: ' + err.message }] });

  // wrap(m, full): the api over module m; the functions m lacks come from `full` (fullLoader():
  // { module, error, load, ready }), which is not used when m has every function.
  function wrap(m, full) {
    const api = { module: m };
    const callbacks = [];
    const have = (name) => typeof m[name] === 'function';
    if (FUNCTIONS.every(have)) full = null;   // a module with every function: nothing to load
    api.ready = (name) => have(name) || !!(full && full.module);
    api.full = () => (full ? full.load().then(() => undefined) : Promise.resolve());
    api.onFull = (callback) => { callbacks.push(callback); };   // also called when it failed to load
    api.fullError = () => (full && full.error) || null;
    // The raw module that answers `name` (search-run.js calls searchPart's JSON text itself):
    // core-full.js once it is loaded, core.js for its own functions before; else null.
    api.moduleOf = (name) => (full && full.module) || (have(name) ? m : null);
    const done = () => { for (const f of callbacks.splice(0)) f(); };
    if (full) full.ready.then(done, done);
    for (const name of FUNCTIONS) {
      if (!full) {
        api[name] = (...args) => call(m, name, args);
        continue;
      }
      // core.js's own functions answer from core-full.js once it is loaded: the same answers to the
      // byte (tests/js/first.test.mjs), about 2× faster (its core is compiled for speed throughout,
      // core/CMakeLists.txt), and its core's one-entry cache of the last evaluation then serves the
      // figure calls that follow an evaluate of the same config.
      // core.js prices training only (core/api.h training_evaluate_json): a valid serving plan
      // answers {ok: false, pending: true}, which starts loading core-full.js as the calls below do.
      if (have(name)) {
        api[name] = (...args) => {
          if (full.module) return call(full.module, name, args);
          const out = call(m, name, args);
          if (!out.pending) return out;
          if (full.error) return unavailable(full.error);
          full.load().catch(() => {});
          return out;
        };
        continue;
      }
      api[name] = (...args) => {
        if (full.module) return call(full.module, name, args);
        if (full.error) return unavailable(full.error);
        full.load().catch(() => {});
        return { ok: false, pending: true, errors: [{ path: '', message: 'Loading the rest of the cutlab core (core-full.js)…' }] };
      };
    }
    return api;
  }

  // The full module, loaded once by a <script> (classic: it defines window.createCutlabFull).
  function fullLoader() {
    let resolveReady = null, rejectReady = null;
    const state = { module: null, error: null, started: null };
    state.ready = new Promise((resolve, reject) => { resolveReady = resolve; rejectReady = reject; });
    state.ready.catch(() => {});   // a failure is reported by load()'s callers and the console
    state.load = () => {
      if (state.started) return state.started;
      state.started = new Promise((resolve, reject) => {
        const made = () => window.createCutlabFull().then(resolve, reject);
        if (typeof window.createCutlabFull === 'function') { made(); return; }
        const s = document.createElement('script');
        s.src = FULL_SCRIPT;
        s.onload = () => (typeof window.createCutlabFull === 'function' ? made() : reject(new Error(FULL_SCRIPT + ' did not define createCutlabFull')));
        s.onerror = () => reject(new Error(FULL_SCRIPT + ' did not load'));
        document.head.appendChild(s);
      }).then((m) => { state.module = m; resolveReady(m); return m; },
        (err) => { state.error = err; console.error(err); rejectReady(err); throw err; });
      return state.started;
    };
    return state;
  }

  CL.bridge = {
    // Resolves to the api object once core.js's module is compiled. Each script carries its module
    // (wasm/embed.js: inflated with DecompressionStream and handed to the glue, no fetch), so this
    // works on file:// and under a strict Content-Security-Policy. opts.full: start loading
    // core-full.js now too (the first view needs it).
    load(opts) {
      if (typeof window.createCutlab !== 'function') return Promise.reject(new Error('core.js did not load (build it with cmake --preset wasm && cmake --build --preset wasm)'));
      const full = fullLoader();
      if (opts && opts.full) full.load().catch(() => {});
      return window.createCutlab().then((m) => wrap(m, full));
    },
    wrap,
    FUNCTIONS,
    FIRST,
  };
})(window.CL = window.CL || {});
