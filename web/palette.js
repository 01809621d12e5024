// palette.js: what each colour means, for every view. One hue per parallel axis, one per kind of
// memory state, one per pipeline op. Views look colours up by meaning; nothing reads meaning back
// from a colour.
(function (CL) {
  'use strict';
  const axis = {
    tp: '#6741d9',   // violet: tensor parallel (inside every matrix)
    pp: '#0b7d6e',   // teal: pipeline stages (between layers)
    cp: '#e8590c',   // orange: sequence chunks
    ep: '#c2255c',   // raspberry: experts
    dp: '#1971c2',   // blue: data-parallel replicas
    etp: '#9c36b5',  // purple: expert tensor parallel (folding)
    edp: '#4dabf7',  // light blue: expert data parallel
  };
  axis.dp_grad = axis.dp;
  // The same hues as text on white or the panel grey: at least 4.5:1 (WCAG AA) on both; CP and EDP
  // darkened (their fills stay light).
  const text = Object.assign({}, axis, { cp: '#c2410c', edp: '#1a6fb5', dp_grad: axis.dp });
  const state = {
    weights: '#343a40',
    grads: '#f0a800',
    optimizer: '#a0643a',
    activations: '#66a80f',
    kv: '#e03131',
    free: '#e9ecef',
  };
  // Pipeline ops: F and B in slate (compute, no axis), W in the gradients' amber (it computes them).
  const op = { F: '#a3b8cc', B: '#3d5a76', W: '#f0a800', FB: '#6f8aa6', decode: '#a3b8cc' };
  // DualPipe's second direction (micro-batches fed at the last stage): the same lightness in teal.
  const op2 = { F: '#9fcfc2', B: '#2b6f60', W: op.W, FB: '#5f9e8e' };
  const link = { nvlink: '#2f9e44', scaleout: '#e67700' };
  const ink = { text: '#1f2328', muted: '#656d76', faint: '#8c959f', rule: '#d0d7de', bg: '#ffffff', panel: '#f6f8fa', warn: '#cf222e' };

  function hexToRgb(h) {
    const n = parseInt(h.slice(1), 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  function rgb(c) { return 'rgb(' + c.map((x) => Math.round(Math.max(0, Math.min(255, x)))).join(',') + ')'; }
  // t in [0, 1]: 0 = light tint of the hue, 1 = the hue darkened; used for ranks along one axis.
  function tone(hex, t) {
    const c = hexToRgb(hex);
    if (t < 0.5) {
      const k = 0.78 - 1.5 * t;  // mix with white
      return rgb(c.map((x) => x + (255 - x) * k));
    }
    const k = (t - 0.5) * 0.7;   // mix with black
    return rgb(c.map((x) => x * (1 - k)));
  }
  // Rank i of n along an axis: alternating light/dark so neighbours differ, drifting darker with i.
  function rank(hex, i, n) {
    if (n <= 1) return tone(hex, 0.5);
    const base = 0.12 + 0.76 * (i / (n - 1));
    return tone(hex, base);
  }
  function alpha(hex, a) {
    const c = hexToRgb(hex);
    return 'rgba(' + c.join(',') + ',' + a + ')';
  }
  // Text colour readable on a fill: a tone()/rank() colour (rgb(…)) or a hex one.
  function onFill(css) {
    const m = css[0] === '#' ? hexToRgb(css) : css.match(/\d+/g).map(Number);
    const l = 0.299 * m[0] + 0.587 * m[1] + 0.114 * m[2];
    return l > 150 ? '#1f2328' : '#ffffff';
  }
  CL.palette = { axis, text, state, op, op2, link, ink, tone, rank, alpha, onFill, hexToRgb };
})(window.CL = window.CL || {});
