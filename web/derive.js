// derive.js: the one derive step. state → config text → core calls → an immutable "derived"
// object that every view and table only reads. Calls happen once per distinct config (memoised on
// the config text); the figures of the views (timeline, placement, cuts: laid out by the core for a
// width) and what individual GPUs hold are fetched lazily, when a view first asks, and then kept
// with the config.
(function (CL) {
  'use strict';

  const GPUS_PER_CALL = 4096;   // the core's limit for one gpus() call

  // What GPUs hold, from the core's batched gpus(): `fetch(ranks)` makes one call over the
  // smallest window that covers the ranks not seen yet (a few windows when they lie far apart, so
  // that a call never makes thousands of GPUs for a handful of answers), and caches every answer.
  function gpuStore(api, text) {
    const cache = new Map();
    const stats = { calls: 0, gpus: 0, ms: 0 };
    function call(first, count) {
      const t0 = performance.now();
      const out = api.gpus(text, first, count);
      stats.calls++;
      stats.ms += performance.now() - t0;
      if (!out.ok) return;
      stats.gpus += out.result.length;
      for (const g of out.result) cache.set(g.rank, g);
    }
    function fetch(ranks) {
      const need = Array.from(new Set(ranks)).filter((r) => !cache.has(r)).sort((a, b) => a - b);
      if (!need.length) return;
      // One call over the whole span when it is small (the usual case: rank 0's groups are the
      // first ranks); otherwise windows that only bridge gaps cheaper than another call.
      const lo = need[0], hi = need[need.length - 1];
      if (hi - lo < 256) { call(lo, hi - lo + 1); return; }
      let a = lo, b = lo;
      for (let i = 1; i <= need.length; i++) {
        const r = need[i];
        if (r !== undefined && r - b <= 4 && r - a < GPUS_PER_CALL) { b = r; continue; }
        call(a, b - a + 1);
        if (r !== undefined) a = b = r;
      }
    }
    return { cache, stats, fetch, get: (rank) => { fetch([rank]); return cache.get(rank) || null; } };
  }

  function make(api) {
    let last = null;
    let lastGood = null;
    // salt: appended to the config's text (app.js warmCore: a space, the same plan as a new text).
    return function derive(state, salt) {
      const cfg = CL.state.toConfig(state);
      const text = JSON.stringify(cfg) + (salt || '');
      if (last && last.text === text && !last.pending) return last;
      const t0 = performance.now();
      const ev = api.evaluate(text);
      const tEval = performance.now();
      // pending: a serving plan while core-full.js loads (core.js prices training only, bridge.js);
      // not an error, and not kept: the same text is evaluated again once it is here
      const d = { text, cfg, ok: ev.ok, pending: !!ev.pending, errors: ev.ok || ev.pending ? [] : ev.errors, r: ev.ok ? ev.result : null, options: null };
      // The config as the core read it (defaults filled in): from the result, or carried by the
      // error result when the input parsed but broke a rule. The controls show it.
      d.config = ev.ok ? ev.result.config : ev.config || null;
      const o = api.options(text);
      d.options = o.ok ? o.result : null;
      const tOpt = performance.now();
      if (d.ok) {
        const store = gpuStore(api, text);
        d.gpuStats = store.stats;
        d.gpu = (rank) => (rank >= 0 && rank < d.r.gpus ? store.get(rank) : null);
        d.prefetchGpus = (ranks) => store.fetch(ranks.filter((r) => r >= 0 && r < d.r.gpus));   // one core call for a list
        // The views' figures laid out by the core (core/scene.h, core/figure.h), one per size.
        const scenes = new Map();
        const figure = (name, key, call) => {
          key = name + '|' + key;
          if (!scenes.has(key)) {
            const t = performance.now();
            const out = call();
            d.timing[name] = performance.now() - t;
            if (out.pending) return null;   // core-full.js is loading (bridge.js): asked again once it is here
            scenes.set(key, out.ok ? out.result : null);
          }
          return scenes.get(key);
        };
        d.timeline = (width, height) => figure('timeline', width + 'x' + height, () => withRectPixels(api.timeline(text, width, height)));
        d.placement = (width) => figure('placement', width, () => api.placementScene(text, width));
        d.cuts = (width, layer) => figure('cuts', width + '|' + layer, () => api.cutsScene(text, width, layer));
        lastGood = d;
      }
      d.good = d.ok ? d : lastGood;   // what the views draw (the last valid plan while the input is invalid)
      d.ms = performance.now() - t0;
      d.timing = { evaluate: tEval - t0, options: tOpt - tEval };
      last = d;
      return d;
    };
  }
  // A timeline answer whose rects carry the scene's geometry instead of their pixels (core/json_io.h
  // scene_json_text) gets x, y, w, h rebuilt from it: x = x0 + start_s·px_per_s, w = (end_s −
  // start_s)·px_per_s, y = stage·row_pitch, h = row_height.
  function withRectPixels(out) {
    const R = out && out.ok ? out.result.rects : null;
    if (!R || !R.geometry || R.x) return out;
    const g = R.geometry, n = R.count;
    R.x = new Float64Array(n); R.y = new Float64Array(n); R.w = new Float64Array(n); R.h = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      R.x[i] = g.x0 + R.start_s[i] * g.px_per_s;
      R.w[i] = (R.end_s[i] - R.start_s[i]) * g.px_per_s;
      R.y[i] = R.stage[i] * g.row_pitch;
      R.h[i] = g.row_height;
    }
    return out;
  }
  CL.derive = { make, gpuStore, withRectPixels };
})(window.CL = window.CL || {});
