// suggest.js: ways out of an invalid plan, from the core's own answers, never restating its rules.
// - Axis fixes: for a parallel axis whose value breaks the plan, the valid value nearest to it that
//   the core's options() lists (core/options.h: the values that keep the plan valid with every other
//   field fixed), preferring the largest one below.
// - GPU counts: when the GPU count is not a multiple of the mesh (TP × PP × CP), the nearest counts
//   below and above that are.
// Every suggestion is checked with the core's evaluate() before it is offered. The page applies the
// axis fixes by itself after a model change (a pasted config.json or another preset), with a note
// that says what moved; after other edits it offers them as buttons.
(function (CL) {
  'use strict';

  const AXES = [['tp', 'TP'], ['pp', 'PP'], ['cp', 'CP'], ['ep', 'EP'], ['etp', 'ETP'], ['vpp', 'VPP'], ['micro_batch', 'micro-batch']];

  // The value of `values` nearest to v: the largest one below, else the smallest one above.
  function nearest(values, v) {
    const below = values.filter((x) => x <= v), above = values.filter((x) => x > v);
    return below.length ? Math.max(...below) : above.length ? Math.min(...above) : null;
  }

  const valid = (api, s) => api.evaluate(JSON.stringify(CL.state.toConfig(s))).ok;
  const errorAt = (d, path) => d.errors.some((e) => e.path === path);

  // [{key, from, to, label, state}]: one axis changed to the valid value nearest to its own. With
  // `onlyFaulty`, only axes the core names in an error.
  function axisFixes(api, state, d, onlyFaulty) {
    const out = [];
    if (d.ok || !d.options || !d.config || !d.config.plan) return out;
    for (const [key, label] of AXES) {
      const values = d.options[key], cur = d.config.plan[key];
      if (!values || !values.length || cur === undefined || values.includes(cur)) continue;
      if (onlyFaulty && !errorAt(d, '/plan/' + key)) continue;
      const to = nearest(values, cur);
      if (to === null) continue;
      const next = CL.controls.patchFor(state, '/plan/' + key, to);
      if (valid(api, next)) out.push({ key, from: cur, to, label: label + ' ' + cur + ' → ' + to, state: next });
    }
    return out;
  }

  // The nearest GPU counts the mesh divides, when the count given is not one of them.
  function gpuFixes(api, state, d) {
    const out = [];
    const p = d.config && d.config.plan, g = state.gpus;
    if (d.ok || !p || !(g > 0) || !errorAt(d, '/cluster/gpus')) return out;
    const mesh = (p.tp || 1) * (p.pp || 1) * (p.cp || 1);
    const lo = Math.floor(g / mesh) * mesh, hi = Math.ceil(g / mesh) * mesh;
    for (const n of new Set([lo, hi])) {
      if (n <= 0 || n === g) continue;
      const next = CL.controls.patchFor(state, '/cluster/gpus', n);
      if (valid(api, next)) out.push({ key: 'gpus', from: g, to: n, label: n + ' GPUs', state: next });
    }
    return out;
  }

  // What the page offers under an invalid plan: axis fixes, then GPU counts.
  function offers(api, state, d) {
    return axisFixes(api, state, d, false).concat(gpuFixes(api, state, d));
  }

  // After a model change that leaves the plan invalid: the first axis the core rejects moved to its
  // nearest valid value, when that alone makes the plan valid (axisFixes checks it). Returns
  // {state, moved: [label]}, else null (the plan stays as it was, with its errors and the offers).
  function snapAfterModelChange(api, derive, state) {
    const d = derive(state);
    const fix = d.ok ? null : axisFixes(api, state, d, true)[0];
    return fix ? { state: fix.state, moved: [fix.label] } : null;
  }

  CL.suggest = { nearest, axisFixes, gpuFixes, offers, snapAfterModelChange };
})(window.CL = window.CL || {});
