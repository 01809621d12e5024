// derive.js: the one derive step. state → config text → core calls → an immutable "derived"
// object that every view and table only reads. Calls happen once per distinct config (memoised on
// the config text); the timeline scene and what individual GPUs hold are fetched lazily, when a
// view first asks, and then kept with the config.
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
      if (!api.gpus) {   // an older core: one gpu() per rank
        for (const r of need) { const g = api.gpu ? api.gpu(text, r) : null; if (g && g.ok) cache.set(r, g.result); }
        return;
      }
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

  // Representative GPUs of rank 0's groups: heads/FFN per TP rank, experts per EP rank, expert-FFN
  // columns per ETP rank, token ranges per CP rank. All of them come from one gpus() call, made the
  // first time a view or table asks for any of them.
  function representatives(store, r, mesh) {
    const moe = r.config.model.experts > 0;
    const sizes = { tp: mesh.sizes.tp, cp: mesh.sizes.cp, ep: moe ? r.config.plan.ep : 0, etp: moe ? mesh.etp : 0 };
    const reps = { mismatch: [] };
    let lists = null;
    function load() {
      if (lists) return;
      const want = [];
      for (const axis of Object.keys(sizes)) for (let i = 0; i < sizes[axis]; i++) want.push(mesh.rankWith(axis, i));
      store.fetch(want);
      lists = {};
      for (const axis of Object.keys(sizes)) {
        lists[axis] = [];
        for (let i = 0; i < sizes[axis]; i++) {
          const rank = mesh.rankWith(axis, i);
          const g = store.cache.get(rank) || null;
          if (g && g[axis] !== i) { reps.mismatch.push(axis + '=' + i + ' at rank ' + rank); console.warn('cutlab: mesh.js disagrees with the core for', axis, i); }
          lists[axis].push(g);
        }
      }
    }
    reps.one = (axis, i) => { load(); return (lists[axis] && lists[axis][i]) || null; };
    for (const axis of Object.keys(sizes)) {
      Object.defineProperty(reps, axis, { enumerable: true, get() { load(); return lists[axis].filter(Boolean); } });
    }
    return reps;
  }

  function make(api) {
    let last = null;
    let lastGood = null;
    return function derive(state) {
      const cfg = CL.state.toConfig(state);
      const text = JSON.stringify(cfg);
      if (last && last.text === text) return last;
      const t0 = performance.now();
      const ev = api.evaluate(text);
      const tEval = performance.now();
      const d = { text, cfg, ok: ev.ok, errors: ev.ok ? [] : ev.errors, r: ev.ok ? ev.result : null, options: null };
      // The config as the core read it (defaults filled in): from the result, or carried by the
      // error result when the input parsed but broke a rule. The controls show it.
      d.config = ev.ok ? ev.result.config : ev.config || null;
      if (api.options) {
        const o = api.options(text);
        d.options = o.ok ? o.result : null;
      }
      const tOpt = performance.now();
      if (d.ok) {
        d.mesh = CL.mesh.make(d.r);
        const store = gpuStore(api, text);
        d.gpuStats = store.stats;
        d.reps = representatives(store, d.r, d.mesh);
        d.gpu = (rank) => (rank >= 0 && rank < d.r.gpus ? store.get(rank) : null);
        // GPUs first … first + count − 1, from one call (the placement view draws small clusters whole).
        d.gpuRange = (first, count) => {
          const ranks = [];
          for (let r = first; r < Math.min(d.r.gpus, first + count); r++) ranks.push(r);
          store.fetch(ranks);
          return ranks.map((r) => store.cache.get(r) || null);
        };
        // The pipeline figure laid out by the core (core/scene.h) for width × height pixels.
        const scenes = new Map();
        d.timeline = (width, height) => {
          if (!api.timeline) return null;
          const key = width + 'x' + height;
          if (!scenes.has(key)) {
            const t = performance.now();
            const out = api.timeline(text, width, height);
            d.timing.timeline = performance.now() - t;
            scenes.set(key, out.ok ? out.result : null);
          }
          return scenes.get(key);
        };
        lastGood = d;
      }
      d.good = d.ok ? d : lastGood;   // what the views draw (the last valid plan while the input is invalid)
      d.ms = performance.now() - t0;
      d.timing = { evaluate: tEval - t0, options: tOpt - tEval };
      last = d;
      return d;
    };
  }
  CL.derive = { make, representatives, gpuStore };
})(window.CL = window.CL || {});
