// format.js: numbers from the core → text. Formatting only: units are converted for display
// (bytes → GiB, seconds → ms), nothing is derived. Binary units (GiB, MiB) as in the CLI tables.
(function (CL) {
  'use strict';
  const NBSP = '\u202f';  // narrow no-break space between a number and its unit

  // Intl.NumberFormat objects are costly to make: one per number of digits, made once.
  const formats = [];
  function fixed(x, digits) {
    let f = formats[digits];
    if (!f) f = formats[digits] = new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
    return f.format(x);
  }
  // Significant-ish digits: 3 for small numbers, none after the point for big ones.
  function sig(x) {
    const a = Math.abs(x);
    if (a === 0) return '0';
    if (a >= 100) return fixed(x, 0);
    if (a >= 10) return fixed(x, 1);
    return fixed(x, 2);
  }
  const fmt = {
    NBSP,
    fixed,
    sig,
    int(n) { return fixed(n, 0); },
    bytes(b) {
      const a = Math.abs(b);
      if (a >= 1024 ** 4) return sig(b / 1024 ** 4) + NBSP + 'TiB';
      if (a >= 1024 ** 3) return sig(b / 1024 ** 3) + NBSP + 'GiB';
      if (a >= 1024 ** 2) return sig(b / 1024 ** 2) + NBSP + 'MiB';
      if (a >= 1024) return sig(b / 1024) + NBSP + 'KiB';
      return fixed(b, 0) + NBSP + 'B';
    },
    gib(b, digits) { return fixed(b / 1024 ** 3, digits === undefined ? 1 : digits); },
    seconds(s) {
      const a = Math.abs(s);
      if (a === 0) return '0';
      if (a >= 100) return fixed(s, 0) + NBSP + 's';
      if (a >= 1) return fixed(s, 2) + NBSP + 's';
      if (a >= 1e-3) return sig(s * 1e3) + NBSP + 'ms';
      return sig(s * 1e6) + NBSP + 'µs';
    },
    // 0.00003 → "<0.1%" rather than a misleading "0.0%"
    pct(x, digits) {
      const dg = digits === undefined ? 1 : digits;
      if (x > 0 && x * 100 < 0.5 * Math.pow(10, -dg)) return '<' + fixed(Math.pow(10, -dg), dg) + '%';
      return fixed(x * 100, dg) + '%';
    },
    // −0.03 → "−3.0%", 0.032 → "+3.2%": a change, with its sign (a minus sign, U+2212)
    signedPct(x, digits) {
      const t = fixed(Math.abs(x) * 100, digits === undefined ? 1 : digits);
      return (Number(t) === 0 ? '' : x < 0 ? '−' : '+') + t + '%';
    },
    // 1,961,777 → "1.96 M"; used for tokens/s and parameter counts.
    short(n) {
      const a = Math.abs(n);
      if (a >= 1e12) return sig(n / 1e12) + NBSP + 'T';
      if (a >= 1e9) return sig(n / 1e9) + NBSP + 'B';
      if (a >= 1e6) return sig(n / 1e6) + NBSP + 'M';
      if (a >= 1e4) return sig(n / 1e3) + NBSP + 'k';
      return fixed(n, 0);
    },
    // 25,088 → "25.1k" (tight labels; exact values are in the tooltips and tables)
    compact(n) {
      const a = Math.abs(n);
      if (a >= 1e6) return sig(n / 1e6) + 'M';
      if (a >= 1e4) return sig(n / 1e3) + 'k';
      return fixed(n, 0);
    },
    flops(f) {
      if (f >= 1e15) return sig(f / 1e15) + NBSP + 'PFLOP/s';
      return sig(f / 1e12) + NBSP + 'TFLOP/s';
    },
    // Half-open core range [b, e) shown inclusively: "0–7".
    span(b, e) { return e - b <= 1 ? fixed(b, 0) : fixed(b, 0) + '–' + fixed(e - 1, 0); },
    // Inclusive core range [b, e].
    inclusive(b, e) { return b === e ? String(b) : b + '–' + e; },
    // Layers are 0-based in the core and numbered from 1 on the page (as in the papers and the text).
    layers(first, last) { return first === last ? 'layer ' + (first + 1) : 'layers ' + (first + 1) + '–' + (last + 1); },
    tokens(b, e) {
      const k = (x) => (x >= 1024 && x % 1024 === 0 ? x / 1024 + 'k' : fixed(x, 0));
      return k(b) + '–' + k(e);
    },
    escape(s) {
      return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
    },
  };
  CL.fmt = fmt;

  // Inline styles under a strict Content-Security-Policy (style-src 'self'): a style attribute in
  // markup is blocked, the CSSOM is not. Markup the page builds carries its few computed styles (a
  // swatch's colour, a bar's width) as data-css="prop: value; …" instead, and this observer copies
  // each into element.style as the nodes arrive (a microtask after innerHTML, before the paint).
  function applyCss(root) {
    if (root.nodeType !== 1) return;
    if (root.dataset.css !== undefined) root.style.cssText = root.dataset.css;
    for (const el of root.querySelectorAll('[data-css]')) el.style.cssText = el.dataset.css;
  }
  if (typeof MutationObserver === 'function' && typeof document !== 'undefined') new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes') applyCss(r.target);
      else for (const n of r.addedNodes) applyCss(n);
    }
  }).observe(document.documentElement, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-css'] });
})(window.CL = window.CL || {});
