// figure.js: draws a figure laid out by the core (core/figure.h: the Cuts and Placement views) on
// a canvas or as SVG. Pure functions of the figure: each rect, line and text is placed where the
// core put it; its `kind` picks a shape and style (STYLE below), its `tone` a colour of the
// palette (an axis with the rank's shade, a memory part, a link, an ink). The core chose every
// position, label and level of detail; nothing here knows about GPUs or layers, except which
// items light up under the pointer (by the ids the core gave them).
(function (CL) {
  'use strict';
  const P = CL.palette, G = CL.gfx;
  const FRAME = 'rgba(31,35,40,0.35)', FRAME_LIGHT = 'rgba(31,35,40,0.3)';

  // A tone (with an axis rank's shade) → a CSS colour.
  function color(tone, index, count) {
    if (!tone) return P.ink.text;
    const hue = P.axis[tone];
    if (hue) return index !== undefined && index >= 0 ? P.rank(hue, index, count) : hue;
    if (P.state[tone]) return P.state[tone];
    if (P.link[tone]) return P.link[tone];
    if (P.ink[tone]) return P.ink[tone];
    if (tone === 'white') return '#fff';
    if (tone === 'shade') return P.tone(P.ink.muted, 0.9);
    return P.ink.muted;
  }
  const hueOf = (r) => P.axis[r.tone] || P.ink.muted;

  // kind → {fill, stroke, lw, r (corner), hatch: [colour, step], inset (hatch inside the border),
  // band (a dark top band), top (rounded top corners only), circle, draw: false}.
  // `on` is true when the pointer is on the item (hover styles).
  const STYLE = {
    region: () => null,
    node: () => ({ fill: P.ink.panel, stroke: P.ink.rule, r: 8 }),
    node_small: () => ({ fill: P.ink.panel, stroke: P.ink.rule, r: 5 }),
    gpu: () => ({ fill: '#fff', stroke: P.ink.rule, r: 5 }),
    stripe: (r) => ({ fill: color(r.tone, r.tone_index, r.tone_count), r: 5, top: true }),
    label_bg: () => ({ fill: '#fff' }),
    tag_bg: () => ({ fill: 'rgba(255,255,255,0.85)' }),
    warn_pill: () => ({ fill: '#ffebe9', stroke: P.ink.warn, r: 10 }),
    row_shade: () => ({ fill: '#f8f9fa' }),
    dot: (r) => ({ fill: '#fff', stroke: color(r.tone), lw: 1.5, circle: true }),
    kind_box: () => ({ fill: '#fff', stroke: P.ink.rule, r: 3 }),
    balancer: (r, on) => ({ fill: on ? P.alpha(P.axis.dp, 0.12) : '#fff', stroke: P.axis.dp, lw: 1.5, r: 6 }),
    replica: (r, on) => ({ fill: P.alpha(P.axis.dp, on ? 0.14 : 0.06), under: '#fff', stroke: P.axis.dp, lw: on ? 2 : 1, r: 5 }),
    replica_card: (r, on) => ({ under: '#fff', fill: P.alpha(P.axis.dp, r.tone_index === 0 ? (on ? 0.14 : 0.06) : 0.1 + 0.06 * r.tone_index), stroke: P.axis.dp, r: 5 }),
    replica_stack: (r) => ({ fill: P.tone(P.axis.dp, r.tone_index === 0 ? 0.35 : 0.12 + 0.05 * r.tone_index), stroke: FRAME_LIGHT, r: 4 }),
    layer_tick: () => ({ fill: 'rgba(255,255,255,0.35)' }),
    seg_sep: () => ({ fill: '#fff' }),
    slice_gap: () => ({ fill: '#fff' }),
    selection: () => ({ stroke: P.ink.text, lw: 1.5, exact: true }),
    slice_shared: (r) => ({ fill: color(r.tone, r.tone_index, r.tone_count), hatch: ['rgba(255,255,255,0.55)', 5] }),
    replicated: (r) => ({ fill: P.tone(hueOf(r), 0.15), hatch: ['rgba(255,255,255,0.55)', 5] }),
    matrix_frame: () => ({ stroke: FRAME }),
    expert_frame: () => ({ stroke: FRAME_LIGHT }),
    bar_frame: () => ({ stroke: FRAME_LIGHT }),
    router: (r) => ({ fill: P.tone(hueOf(r), 0.08), stroke: 'rgba(31,35,40,0.25)', hatch: [P.alpha(hueOf(r), 0.35), 5], inset: 1 }),
    shared: (r) => ({ fill: P.tone(hueOf(r), 0.2), stroke: 'rgba(31,35,40,0.25)' }),
    prompt: (r) => ({ fill: P.tone(hueOf(r), 0.3) }),
    decode: (r) => ({ fill: P.tone(hueOf(r), 0.7) }),
    legend_hatch: (r) => ({ fill: '#fff', stroke: P.ink.rule, hatch: [color(r.tone), 4], inset: 1 }),
    legend_band: (r) => ({ fill: color(r.tone), band: 'rgba(16,24,40,0.55)' }),
    legend_band2: (r) => ({ fill: '#fff', stroke: P.ink.rule, bandColor: color(r.tone) }),
    legend_ring: (r) => ({ fill: '#fff', stroke: color(r.tone), lw: 2 }),
  };
  // Everything else: filled with its tone (cells, slices, experts, memory parts, stage bars, …).
  const plain = (r) => ({ fill: color(r.tone, r.tone_index, r.tone_count) });
  const styleOf = (r, on) => (STYLE[r.kind] || plain)(r, on);

  // Is the pointer on this item (hover styles), from the ids the core gave it.
  function isOn(r, ui) {
    const h = ui && ui.hover;
    if (!h) return false;
    if (r.kind === 'balancer') return h.kind === 'balancer';
    if (r.kind === 'replica') return h.kind === 'replica' && h.replica === r.replica;
    if (r.kind === 'replica_card') return h.kind === 'replicas' && r.tone_index === 0;
    return false;
  }
  // Outlines drawn over everything: the selected GPU, the hovered one, the GPUs of a hovered replica.
  function outline(r, ui) {
    if (!ui) return null;
    const h = ui.hover, sel = ui.gpu;
    const inRange = (g) => g != null && r.rank !== undefined && g >= r.rank && g < r.rank + (r.ranks || 1);
    const rep = h && h.kind === 'replica' && r.replica !== undefined && h.replica === r.replica;
    if (r.kind === 'gpu') {
      if (inRange(sel)) return { stroke: P.ink.text, lw: 2, r: 5, grow: 0 };
      if (rep) return { stroke: P.axis.dp, lw: 2, r: 5, grow: 0 };
      if (h && h.rank === r.rank && h.kind === 'gpu') return { stroke: P.ink.muted, lw: 1, r: 5, grow: 0 };
    } else if (r.kind === 'cell') {
      if (inRange(sel) || (h && h.kind === 'gpu' && h.rank === r.rank)) return { stroke: P.ink.text, lw: 2, grow: 1 };
      if (rep) return { stroke: P.axis.dp, lw: 2, grow: 1 };
    } else if (r.kind === 'kind_box') {
      if (inRange(sel)) return { stroke: P.ink.text, lw: 2, grow: 1 };
      if (h && h.kind === 'node' && h.node === r.node) return { stroke: P.ink.muted, lw: 1.5, grow: 1 };
    }
    return null;
  }

  // ---- canvas ------------------------------------------------------------------------------------
  function roundPath(ctx, x, y, w, h, rr, top) {
    const r = Math.max(0, Math.min(rr, w / 2, h / 2));
    ctx.beginPath();
    ctx.moveTo(x + r, y);
    ctx.arcTo(x + w, y, x + w, y + h, r);
    if (top) { ctx.lineTo(x + w, y + h); ctx.lineTo(x, y + h); } else { ctx.arcTo(x + w, y + h, x, y + h, r); ctx.arcTo(x, y + h, x, y, r); }
    ctx.arcTo(x, y, x + w, y, r);
    ctx.closePath();
  }
  function paintRect(ctx, r, s) {
    if (s.circle) {
      ctx.beginPath(); ctx.arc(r.x + r.w / 2, r.y + r.h / 2, r.w / 2, 0, 2 * Math.PI);
      if (s.fill) { ctx.fillStyle = s.fill; ctx.fill(); }
      if (s.stroke) { ctx.strokeStyle = s.stroke; ctx.lineWidth = s.lw || 1; ctx.stroke(); }
      return;
    }
    if (s.r || s.top) {
      const radius = s.top ? Math.min(s.r, r.h) : s.r;
      if (s.under) { roundPath(ctx, r.x, r.y, r.w, r.h, radius, s.top); ctx.fillStyle = s.under; ctx.fill(); }
      roundPath(ctx, r.x, r.y, r.w, r.h, radius, s.top);
      if (s.fill) { ctx.fillStyle = s.fill; ctx.fill(); }
      if (s.stroke) { ctx.strokeStyle = s.stroke; ctx.lineWidth = s.lw || 1; ctx.stroke(); }
      return;
    }
    if (s.fill) { ctx.fillStyle = s.fill; ctx.fillRect(r.x, r.y, r.w, r.h); }
    if (s.hatch) { const i = s.inset || 0; G.hatch(ctx, r.x + i, r.y + i, r.w - 2 * i, r.h - 2 * i, s.hatch[0], s.hatch[1]); }
    if (s.band) { ctx.fillStyle = s.band; ctx.fillRect(r.x, r.y, r.w, 4); }
    if (s.stroke) {
      ctx.strokeStyle = s.stroke; ctx.lineWidth = s.lw || 1;
      if (s.exact) ctx.strokeRect(r.x, r.y, r.w, r.h); else ctx.strokeRect(r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1);
    }
    if (s.bandColor) { ctx.fillStyle = s.bandColor; ctx.fillRect(r.x, r.y, r.w, 4); }
  }
  const ROUND = new Set(['bus', 'stub', 'key_link']);
  function paintLine(ctx, l) {
    ctx.strokeStyle = color(l.tone);
    ctx.lineWidth = l.width;
    ctx.lineCap = ROUND.has(l.kind) ? 'round' : 'butt';
    if (l.dash) ctx.setLineDash([4, 4]);
    const arrow = l.kind === 'arrow';
    const len = Math.hypot(l.x2 - l.x1, l.y2 - l.y1) || 1, ux = (l.x2 - l.x1) / len, uy = (l.y2 - l.y1) / len;
    ctx.beginPath(); ctx.moveTo(l.x1, l.y1); ctx.lineTo(arrow ? l.x2 - ux : l.x2, arrow ? l.y2 - uy : l.y2); ctx.stroke();
    ctx.setLineDash([]); ctx.lineCap = 'butt';
    if (arrow) {
      ctx.fillStyle = color(l.tone);
      ctx.beginPath(); ctx.moveTo(l.x2, l.y2); ctx.lineTo(l.x2 - 6 * ux - 4 * uy, l.y2 - 6 * uy + 4 * ux); ctx.lineTo(l.x2 - 6 * ux + 4 * uy, l.y2 - 6 * uy - 4 * ux);
      ctx.closePath(); ctx.fill();
    }
  }
  const ALIGN = { start: 'left', middle: 'center', end: 'right' };
  function textColor(t) {
    if (t.on_fill) return P.onFill(color(t.tone, t.tone_index, t.tone_count));
    return color(t.tone, t.tone_index, t.tone_count);
  }
  const HOVERED = new Set(['gpu', 'node', 'replica', 'replicas', 'balancer']);
  // What the pointer finds on a rect: its ids, and a key for the hover styles.
  function payload(r) {
    const p = { kind: r.hit };
    for (const k of ['rank', 'ranks', 'node', 'stage', 'layer', 'replica', 'expert', 'head', 'count', 'begin', 'end', 'name', 'tone_index', 'tone_count'])
      if (r[k] !== undefined) p[k] = r[k];
    if (HOVERED.has(r.hit)) p.key = r.hit + ':' + [r.rank, r.node, r.replica].join(',');
    return p;
  }

  // Paints figure `f` at (ox, oy) and adds its items that answer the pointer to `hits`.
  function draw(ctx, f, ui, hits, ox, oy) {
    ox = ox || 0; oy = oy || 0;
    ctx.save();
    ctx.translate(ox, oy);
    for (const r of f.rects) {
      const s = styleOf(r, isOn(r, ui));
      if (s) paintRect(ctx, r, s);
    }
    for (const r of f.rects) {
      const o = outline(r, ui);
      if (!o) continue;
      ctx.strokeStyle = o.stroke; ctx.lineWidth = o.lw;
      if (o.r) { roundPath(ctx, r.x, r.y, r.w, r.h, o.r); ctx.stroke(); } else ctx.strokeRect(r.x - o.grow + 0.5, r.y - o.grow + 0.5, r.w + 2 * o.grow - 1, r.h + 2 * o.grow - 1);
    }
    for (const l of f.lines) paintLine(ctx, l);
    // texts: the font set only when it changes, a text measured only when it has a width to keep to
    let font = null;
    ctx.textBaseline = 'alphabetic';
    for (const t of f.texts) {
      const ft = G.font(t.font_px, t.weight);
      if (ft !== font) { ctx.font = ft; font = ft; }
      const s = t.max_w ? G.fitText(ft, t.text, t.max_w) : t.text;
      if (!s) continue;
      ctx.fillStyle = textColor(t);
      ctx.textAlign = ALIGN[t.anchor];
      ctx.fillText(s, t.x, t.y);
    }
    ctx.restore();
    if (hits) for (const r of f.rects) if (r.hit) hits.add(ox + r.x, oy + r.y, r.w, r.h, payload(r));
  }

  // ---- SVG ---------------------------------------------------------------------------------------
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  const n = (x) => (Math.round(x * 100) / 100).toString();
  function svgPath(x, y, w, h, rr, top) {
    const r = Math.max(0, Math.min(rr, w / 2, h / 2));
    if (top) return 'M' + n(x) + ',' + n(y + h) + 'V' + n(y + r) + 'Q' + n(x) + ',' + n(y) + ' ' + n(x + r) + ',' + n(y) + 'H' + n(x + w - r) +
      'Q' + n(x + w) + ',' + n(y) + ' ' + n(x + w) + ',' + n(y + r) + 'V' + n(y + h) + 'Z';
    return null;
  }
  let hatchIds = null;
  function hatchFill(colour, step) {
    const key = colour + '|' + step;
    if (!hatchIds.has(key)) hatchIds.set(key, 'h' + hatchIds.size);
    return 'url(#' + hatchIds.get(key) + ')';
  }
  function svgRect(r, s) {
    const out = [];
    const paint = (fill, stroke, lw) => (fill ? ' fill="' + fill + '"' : ' fill="none"') + (stroke ? ' stroke="' + stroke + '" stroke-width="' + (lw || 1) + '"' : '');
    if (s.circle) return '<circle cx="' + n(r.x + r.w / 2) + '" cy="' + n(r.y + r.h / 2) + '" r="' + n(r.w / 2) + '"' + paint(s.fill, s.stroke, s.lw) + '/>';
    if (s.top) return '<path d="' + svgPath(r.x, r.y, r.w, r.h, Math.min(s.r, r.h), true) + '"' + paint(s.fill) + '/>';
    const box = (x, y, w, h, extra) => '<rect x="' + n(x) + '" y="' + n(y) + '" width="' + n(Math.max(0, w)) + '" height="' + n(Math.max(0, h)) + '"' + (extra || '');
    const rr = s.r ? ' rx="' + n(Math.min(s.r, r.w / 2, r.h / 2)) + '"' : '';
    if (s.under) out.push(box(r.x, r.y, r.w, r.h, rr + ' fill="' + s.under + '"/>'));
    if (s.r) { out.push(box(r.x, r.y, r.w, r.h, rr + paint(s.fill, s.stroke, s.lw) + '/>')); return out.join(''); }
    if (s.fill) out.push(box(r.x, r.y, r.w, r.h, ' fill="' + s.fill + '"/>'));
    if (s.hatch) { const i = s.inset || 0; out.push(box(r.x + i, r.y + i, r.w - 2 * i, r.h - 2 * i, ' fill="' + hatchFill(s.hatch[0], s.hatch[1]) + '"/>')); }
    if (s.band) out.push(box(r.x, r.y, r.w, 4, ' fill="' + s.band + '"/>'));
    if (s.stroke) out.push(s.exact ? box(r.x, r.y, r.w, r.h, paint(null, s.stroke, s.lw) + '/>') : box(r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1, paint(null, s.stroke, s.lw) + '/>'));
    if (s.bandColor) out.push(box(r.x, r.y, r.w, 4, ' fill="' + s.bandColor + '"/>'));
    return out.join('');
  }
  function svgLine(l) {
    const c = color(l.tone);
    const arrow = l.kind === 'arrow';
    const len = Math.hypot(l.x2 - l.x1, l.y2 - l.y1) || 1, ux = (l.x2 - l.x1) / len, uy = (l.y2 - l.y1) / len;
    let s = '<line x1="' + n(l.x1) + '" y1="' + n(l.y1) + '" x2="' + n(arrow ? l.x2 - ux : l.x2) + '" y2="' + n(arrow ? l.y2 - uy : l.y2) + '" stroke="' + c +
      '" stroke-width="' + n(l.width) + '"' + (ROUND.has(l.kind) ? ' stroke-linecap="round"' : '') + (l.dash ? ' stroke-dasharray="4 4"' : '') + '/>';
    if (arrow) s += '<path d="M' + n(l.x2) + ',' + n(l.y2) + 'L' + n(l.x2 - 6 * ux - 4 * uy) + ',' + n(l.y2 - 6 * uy + 4 * ux) + 'L' + n(l.x2 - 6 * ux + 4 * uy) + ',' + n(l.y2 - 6 * uy - 4 * ux) + 'Z" fill="' + c + '"/>';
    return s;
  }
  function svgText(t) {
    let s = t.text;
    if (t.max_w) s = G.fitText(G.font(t.font_px, t.weight), s, t.max_w);   // shortened as on the canvas
    if (!s) return '';
    return '<text x="' + n(t.x) + '" y="' + n(t.y) + '" font-size="' + t.font_px + '"' + (t.weight !== 400 ? ' font-weight="' + t.weight + '"' : '') +
      ' fill="' + textColor(t) + '"' + (t.anchor !== 'start' ? ' text-anchor="' + t.anchor + '"' : '') + '>' + esc(s) + '</text>';
  }
  // The figure as an SVG document (no hover, nothing selected).
  function svg(f) {
    hatchIds = new Map();
    const body = [];
    for (const r of f.rects) { const s = styleOf(r, false); if (s) body.push(svgRect(r, s)); }
    for (const l of f.lines) body.push(svgLine(l));
    for (const t of f.texts) body.push(svgText(t));
    const defs = Array.from(hatchIds.entries()).map(([key, id]) => {
      const [c, step] = key.split('|');
      const d = n(Number(step) / Math.SQRT2);
      return '<pattern id="' + id + '" width="' + d + '" height="' + d + '" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="' + d + '" stroke="' + c + '" stroke-width="1"/></pattern>';
    });
    hatchIds = null;
    return '<svg xmlns="http://www.w3.org/2000/svg" width="' + n(f.width) + '" height="' + n(f.height) + '" viewBox="0 0 ' + n(f.width) + ' ' + n(f.height) + '" ' +
      'font-family="' + esc(G.FONT) + '" data-view="' + esc(f.view) + '">\n' + (defs.length ? '<defs>' + defs.join('') + '</defs>\n' : '') +
      '<rect width="100%" height="100%" fill="#fff"/>\n' + body.filter(Boolean).join('\n') + '\n</svg>\n';
  }

  CL.figure = { draw, svg, color, styleOf };
})(window.CL = window.CL || {});
