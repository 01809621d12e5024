// derive.js: the one derive step. state → config text → core calls → an immutable "derived"
// object that every view and table only reads. Calls happen once per distinct config (memoised on
// the config text); the schedule (every op of the step) and single-GPU details are fetched lazily,
// when a view asks for them.
(function (CL) {
  'use strict';

  // What the GPUs of rank 0's groups hold, one core call per coordinate, made when a view first
  // asks: heads/FFN per TP rank, experts per EP rank, expert-FFN columns per ETP rank, token
  // ranges per CP rank. reps.tp[i] etc. are filled on first access of reps.tp.
  function representatives(api, text, r, mesh) {
    const plan = r.config.plan;
    const moe = r.config.model.experts > 0;
    const sizes = { tp: plan.tp, cp: plan.cp, ep: moe ? plan.ep : 0, etp: moe ? r.mesh.etp : 0 };
    const reps = { mismatch: [] };
    const memo = {};
    reps.one = (axis, i) => {
      const key = axis + i;
      if (key in memo) return memo[key];
      let g = null;
      if (api.gpu && i < sizes[axis]) {
        const rank = mesh.rankWith(axis, i);
        const out = api.gpu(text, rank);
        if (out.ok) {
          g = out.result;
          if (g[axis] !== i) { reps.mismatch.push(axis + '=' + i + ' at rank ' + rank); console.warn('cutlab: mesh.js disagrees with the core for', axis, i); }
        }
      }
      memo[key] = g;
      return g;
    };
    for (const axis of ['tp', 'cp', 'ep', 'etp']) {
      let list = null;
      Object.defineProperty(reps, axis, {
        enumerable: true,
        get() {
          if (!list) {
            list = [];
            for (let i = 0; i < sizes[axis]; i++) { const g = reps.one(axis, i); if (g) list.push(g); }
          }
          return list;
        },
      });
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
      if (api.options) {
        const o = api.options(text);
        d.options = o.ok ? o.result : null;
      }
      const tOpt = performance.now();
      if (d.ok) {
        d.mesh = CL.mesh.make(d.r);
        d.reps = representatives(api, text, d.r, d.mesh);
        const gpuCache = new Map();
        let sched = null;
        d.gpu = (rank) => {
          if (!api.gpu) return null;
          if (!gpuCache.has(rank)) {
            const g = api.gpu(text, rank);
            gpuCache.set(rank, g.ok ? g.result : null);
          }
          return gpuCache.get(rank);
        };
        d.schedule = () => {
          if (!api.schedule) return null;
          if (!sched) {
            const s = api.schedule(text);
            sched = s.ok ? s.result : { error: s.errors };
          }
          return sched.error ? null : sched;
        };
        lastGood = d;
      }
      d.good = d.ok ? d : lastGood;   // what the views draw (the last valid plan while the input is invalid)
      d.ms = performance.now() - t0;
      d.timing = { evaluate: tEval - t0, options: tOpt - tEval, gpus: performance.now() - tOpt };
      last = d;
      return d;
    };
  }
  CL.derive = { make, representatives };
})(window.CL = window.CL || {});
