// gfx.js: small canvas helpers shared by the views (pure functions of their arguments):
// crisp HiDPI setup, text that never overflows its box, hatching for idle/replicated areas,
// legends, and a hit list for hover.
(function (CL) {
  'use strict';
  const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "DejaVu Sans", Arial, sans-serif';
  const MONO = 'ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace';

  function font(size, weight, mono) { return (weight || 400) + ' ' + size + 'px ' + (mono ? MONO : FONT); }

  // A canvas of w × h CSS pixels, cleared, scaled for the screen. Resizing a canvas reallocates its
  // backing store, which headless Chromium took 10–33 ms to do (the Cuts view at 16,384 GPUs changes
  // height by a line when ZeRO changes): the store's height is kept while it is at least the figure's
  // and at most STORE_SLACK device pixels more, and grows in steps of STORE_SLACK. The rows below the
  // figure are clipped and take no room (negative margin); dataset.height is the figure's height in
  // device pixels (the PNG export crops to it).
  const STORE_SLACK = 128;
  function setup(canvas, w, h) {
    const dpr = window.devicePixelRatio || 1;
    const W = Math.round(w * dpr), H = Math.round(h * dpr);
    if (canvas.width !== W || canvas.height < H || canvas.height > H + STORE_SLACK) {
      canvas.width = W;
      canvas.height = Math.ceil(H / STORE_SLACK) * STORE_SLACK;
    }
    const spare = (canvas.height - H) / dpr;
    canvas.style.width = w + 'px';
    canvas.style.height = canvas.height / dpr + 'px';
    canvas.style.marginBottom = spare > 0 ? -spare + 'px' : '';
    canvas.style.clipPath = spare > 0 ? 'inset(0 0 ' + spare + 'px 0)' : '';
    canvas.dataset.height = String(H);
    const ctx = canvas.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.textBaseline = 'alphabetic';
    return ctx;
  }

  // Longest prefix of `s` (with an ellipsis) that fits in maxW at the current font.
  function fit(ctx, s, maxW) {
    s = String(s);
    if (maxW <= 0) return '';
    if (ctx.measureText(s).width <= maxW) return s;
    let lo = 0, hi = s.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(s.slice(0, mid) + '…').width <= maxW) lo = mid; else hi = mid - 1;
    }
    return lo === 0 ? '' : s.slice(0, lo) + '…';
  }

  // Draws text; returns its width. opts: {font, color, align, baseline, maxW}
  function text(ctx, s, x, y, o) {
    o = o || {};
    ctx.font = o.font || font(12);
    ctx.fillStyle = o.color || CL.palette.ink.text;
    ctx.textAlign = o.align || 'left';
    ctx.textBaseline = o.baseline || 'alphabetic';
    const str = o.maxW !== undefined ? fit(ctx, s, o.maxW) : String(s);
    if (str) ctx.fillText(str, x, y);
    return ctx.measureText(str).width;
  }

  // Text only if it fits entirely (labels that would be truncated to nothing useful are skipped).
  function textIfFits(ctx, s, x, y, maxW, o) {
    ctx.font = (o && o.font) || font(12);
    if (ctx.measureText(s).width > maxW) return false;
    text(ctx, s, x, y, o);
    return true;
  }

  function rect(ctx, x, y, w, h, fill, stroke, lw) {
    if (fill) { ctx.fillStyle = fill; ctx.fillRect(x, y, w, h); }
    if (stroke) { ctx.strokeStyle = stroke; ctx.lineWidth = lw || 1; ctx.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1); }
  }

  function roundRect(ctx, x, y, w, h, r, fill, stroke, lw) {
    ctx.beginPath();
    const rr = Math.min(r, w / 2, h / 2);
    ctx.moveTo(x + rr, y);
    ctx.arcTo(x + w, y, x + w, y + h, rr);
    ctx.arcTo(x + w, y + h, x, y + h, rr);
    ctx.arcTo(x, y + h, x, y, rr);
    ctx.arcTo(x, y, x + w, y, rr);
    ctx.closePath();
    if (fill) { ctx.fillStyle = fill; ctx.fill(); }
    if (stroke) { ctx.strokeStyle = stroke; ctx.lineWidth = lw || 1; ctx.stroke(); }
  }

  // Diagonal hatching inside a rectangle (idle time, replicated pieces).
  function hatch(ctx, x, y, w, h, color, step, bg) {
    if (w <= 0 || h <= 0) return;
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, w, h);
    ctx.clip();
    if (bg) { ctx.fillStyle = bg; ctx.fillRect(x, y, w, h); }
    ctx.strokeStyle = color;
    ctx.lineWidth = 1;
    step = step || 5;
    ctx.beginPath();
    for (let k = -h; k < w; k += step) {
      ctx.moveTo(x + k, y + h);
      ctx.lineTo(x + k + h, y);
    }
    ctx.stroke();
    ctx.restore();
  }

  // A repeating diagonal-line pattern (the hatching of hatch()), to fill many rects without
  // clipping: tiles line up across the canvas, so neighbouring rects join seamlessly.
  const patterns = new Map();
  function hatchPattern(ctx, color, step, bg) {
    const dpr = window.devicePixelRatio || 1;
    const key = color + '|' + step + '|' + bg + '|' + dpr;
    let pat = patterns.get(key);
    if (pat) return pat;
    const n = Math.round(step * dpr);
    const tile = document.createElement('canvas');
    tile.width = tile.height = n;
    const t = tile.getContext('2d');
    if (bg) { t.fillStyle = bg; t.fillRect(0, 0, n, n); }
    t.strokeStyle = color;
    t.lineWidth = dpr;
    t.beginPath();
    for (const o of [-n, 0, n]) { t.moveTo(o, n); t.lineTo(o + n, 0); }
    t.stroke();
    pat = ctx.createPattern(tile, 'repeat');
    if (pat && pat.setTransform && typeof DOMMatrix === 'function') pat.setTransform(new DOMMatrix([1 / dpr, 0, 0, 1 / dpr, 0, 0]));
    patterns.set(key, pat);
    return pat;
  }

  // Legend: items [{label, color, kind: 'box'|'hatch'|'line'|'ring'} or {heading}] in rows within
  // maxW. Returns the height used; with o.dry it only measures.
  function legend(ctx, items, x, y, maxW, o) {
    o = o || {};
    const size = o.size || 11.5;
    const f = font(size), fh = font(size, 600);
    const sw = 12, gap = 16, rowH = o.rowH || 18;
    const dry = !!o.dry;
    let cx = x, cy = y;
    for (const it of items) {
      if (it.heading) {
        ctx.font = fh;
        const w = ctx.measureText(it.heading).width;
        // a heading starts a group: keep it on the row of its first item
        if (cx + w + 80 > x + maxW && cx > x) { cx = x; cy += rowH; }
        if (!dry) text(ctx, it.heading, cx, cy + 11, { font: fh, color: CL.palette.ink.muted });
        cx += w + 8;
        continue;
      }
      ctx.font = f;
      if (it.kind === 'none') {
        const w = ctx.measureText(it.label).width;
        if (cx + w > x + maxW && cx > x) { cx = x; cy += rowH; }
        if (!dry) text(ctx, it.label, cx, cy + 11, { font: f, color: CL.palette.ink.muted });
        cx += w + gap;
        continue;
      }
      const w = sw + 5 + ctx.measureText(it.label).width;
      if (cx + w > x + maxW && cx > x) { cx = x; cy += rowH; }
      if (!dry) {
        if (it.kind === 'hatch') {
          rect(ctx, cx, cy + 1, sw, sw, '#fff', CL.palette.ink.rule);
          hatch(ctx, cx + 1, cy + 2, sw - 2, sw - 2, it.color, 4);
        } else if (it.kind === 'line') {
          ctx.strokeStyle = it.color;
          ctx.lineWidth = it.width || 3;
          ctx.beginPath(); ctx.moveTo(cx, cy + 7); ctx.lineTo(cx + sw, cy + 7); ctx.stroke();
        } else if (it.kind === 'band') {
          rect(ctx, cx, cy + 1, sw, sw, it.color);
          rect(ctx, cx, cy + 1, sw, 4, 'rgba(16,24,40,0.55)');
        } else if (it.kind === 'band2') {
          rect(ctx, cx, cy + 1, sw, sw, '#fff', CL.palette.ink.rule);
          rect(ctx, cx, cy + 1, sw, 4, it.color);
        } else if (it.kind === 'ring') {
          rect(ctx, cx, cy + 1, sw, sw, '#fff', it.color, 2);
        } else {
          rect(ctx, cx, cy + 1, sw, sw, it.color);
        }
        text(ctx, it.label, cx + sw + 5, cy + 11, { font: f, color: CL.palette.ink.text });
      }
      cx += w + gap;
    }
    return cy - y + rowH;
  }
  let measureCtx = null;
  function mctx() {
    if (!measureCtx) measureCtx = document.createElement('canvas').getContext('2d');
    return measureCtx;
  }
  function legendHeight(items, maxW, o) {
    return legend(mctx(), items, 0, 0, maxW, Object.assign({}, o, { dry: true }));
  }
  // `s` cut to fit maxW in fontCss (fit()), remembered: the figures redraw the same labels on every
  // change, and measuring them took 1–2 ms a frame for the placement view at 64 GPUs (466 labels
  // with a width to keep to). Forgotten all at once past 4,096 entries.
  const fitted = new Map();
  function fitText(fontCss, s, maxW) {
    const key = fontCss + '|' + maxW + '|' + s;
    let out = fitted.get(key);
    if (out === undefined) {
      const c = mctx();
      c.font = fontCss;
      out = fit(c, s, maxW);
      if (fitted.size >= 4096) fitted.clear();
      fitted.set(key, out);
    }
    return out;
  }
  // Width of `s` in `font` (figures measured before a canvas exists, and the SVG export).
  function measure(fontCss, s) {
    const c = mctx();
    c.font = fontCss;
    return c.measureText(String(s)).width;
  }

  // Hit list: views push rectangles with a payload; the app looks up the pointer in it. A payload
  // may be a function (px, py) → payload | null, for a region that resolves its own items (the
  // pipeline's thousands of bars, by rect index).
  function hits() {
    const list = [];
    return {
      list,
      add(x, y, w, h, payload) { list.push({ x, y, w, h, payload }); },
      at(px, py) {
        for (let i = list.length - 1; i >= 0; i--) {
          const r = list[i];
          if (!(px >= r.x && px < r.x + r.w && py >= r.y && py < r.y + r.h)) continue;
          if (typeof r.payload !== 'function') return r;
          const p = r.payload(px, py);
          if (p) return { x: r.x, y: r.y, w: r.w, h: r.h, payload: p };
        }
        return null;
      },
    };
  }

  // A "nice" tick step for an axis of length `span` with about `n` ticks.
  function niceStep(span, n) {
    const raw = span / Math.max(1, n);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }

  CL.gfx = { FONT, MONO, font, setup, fit, text, textIfFits, rect, roundRect, hatch, hatchPattern, legend, legendHeight, measure, fitText, hits, niceStep };
})(window.CL = window.CL || {});
