// export.js: downloads of the current view. Every view as SVG, written from the same figure the
// canvas paints: the pipeline from view-pipeline.js figure() (the core's timeline scene placed on
// the page, with its title, labels and legend), the cuts and placement from the core's figures
// (figure.js svg()); same colours, one per kind. Any view as PNG (the canvas itself, on white).
(function (CL) {
  'use strict';
  const P = CL.palette;

  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  const n = (x) => (Math.round(x * 100) / 100).toString();
  const ANCHOR = { left: 'start', right: 'end', center: 'middle' };

  // "600 13px system-ui, …" → SVG attributes
  function fontAttrs(font) {
    const m = /^(\d+)\s+([\d.]+)px\s+(.*)$/.exec(font || '');
    if (!m) return '';
    return ' font-weight="' + m[1] + '" font-size="' + m[2] + '"' + (/monospace/.test(m[3]) ? ' font-family="' + esc(m[3]) + '"' : '');
  }
  function text(t) {
    return '<text x="' + n(t.x) + '" y="' + n(t.y) + '"' + fontAttrs(t.font) + ' fill="' + (t.color || P.ink.text) + '"' +
      (t.align && t.align !== 'left' ? ' text-anchor="' + ANCHOR[t.align] + '"' : '') + '>' + esc(t.text) + '</text>';
  }

  // The legend, laid out like gfx.legend (rows within the width; widths estimated from the font size).
  function legend(items, x, y, maxW) {   // (headings are not used by the pipeline's legend)
    const out = [];
    const size = 11.5, sw = 12, gap = 16, rowH = 18;
    const width = (s) => CL.gfx.measure(CL.gfx.font(size), s);
    let cx = x, cy = y;
    for (const it of items) {
      const w = (it.kind === 'none' ? 0 : sw + 5) + width(it.label);
      if (cx + w > x + maxW && cx > x) { cx = x; cy += rowH; }
      if (it.kind === 'none') {
        out.push(text({ text: it.label, x: cx, y: cy + 11, font: '400 ' + size + 'px', color: P.ink.muted }));
        cx += w + gap;
        continue;
      }
      if (it.kind === 'hatch') out.push('<rect x="' + n(cx + 0.5) + '" y="' + n(cy + 1.5) + '" width="' + (sw - 1) + '" height="' + (sw - 1) + '" fill="url(#idle)" stroke="' + P.ink.rule + '"/>');
      else {
        out.push('<rect x="' + n(cx) + '" y="' + n(cy + 1) + '" width="' + sw + '" height="' + sw + '" fill="' + it.color + '"/>');
        if (it.kind === 'band') out.push('<rect x="' + n(cx) + '" y="' + n(cy + 1) + '" width="' + sw + '" height="4" fill="#101828" fill-opacity="0.55"/>');
      }
      out.push(text({ text: it.label, x: cx + sw + 5, y: cy + 11, font: '400 ' + size + 'px', color: P.ink.text }));
      cx += w + gap;
    }
    return out.join('\n');
  }

  // The pipeline figure as an SVG document.
  function svg(fig) {
    const V = CL.views.pipeline;
    const { W, ox, oy, sc, rows } = fig;
    const R = sc.rects;
    const o = [];
    o.push('<svg xmlns="http://www.w3.org/2000/svg" width="' + n(W) + '" height="' + n(fig.height) + '" viewBox="0 0 ' + n(W) + ' ' + n(fig.height) + '" ' +
      'font-family="system-ui, -apple-system, Segoe UI, Roboto, Helvetica Neue, DejaVu Sans, Arial, sans-serif" font-size="12">');
    o.push('<defs><pattern id="idle" width="3.54" height="3.54" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
      '<rect width="3.54" height="3.54" fill="#fff"/><line x1="0" y1="0" x2="0" y2="3.54" stroke="' + V.HATCH + '" stroke-width="1"/></pattern></defs>');
    o.push('<rect width="100%" height="100%" fill="#fff"/>');
    rows.forEach((row, st) => { if (st % 2 === 0) o.push('<rect x="' + n(V.PAD - 4) + '" y="' + n(oy + row.y) + '" width="' + n(W - 2 * V.PAD + 8) + '" height="' + n(row.h) + '" fill="#f8f9fa"/>'); });
    o.push('<g stroke="#e9ecef">' + sc.grid.map((g) => '<line x1="' + n(ox + g.x) + '" y1="' + n(oy + g.y) + '" x2="' + n(ox + g.x) + '" y2="' + n(oy + g.y + g.h + 4) + '"/>').join('') + '</g>');
    o.push('<g class="rects" transform="translate(' + n(ox) + ',' + n(oy) + ')">');
    const band = [], nums = [];
    for (let i = 0; i < R.count; i++) {
      const k = R.kind[i];
      const fill = k === 'idle' ? 'url(#idle)' : V.fillOf(k, R.chunk[i], fig.dual);
      const w = k === 'idle' ? R.w[i] : R.w[i] >= 3 ? R.w[i] - 0.5 : Math.max(0.6, R.w[i]);   // as on the canvas
      o.push('<rect x="' + n(R.x[i]) + '" y="' + n(R.y[i]) + '" width="' + n(w) + '" height="' + n(R.h[i]) + '" fill="' + fill + '" data-kind="' + k + '" data-stage="' + R.stage[i] + '"/>');
      if (!fig.dual && R.chunk[i] > 0 && k !== 'idle' && k !== 'dp' && k !== 'optimizer' && k !== 'decode')
        band.push('<rect x="' + n(R.x[i]) + '" y="' + n(R.y[i]) + '" width="' + n(Math.max(0.6, R.w[i] - 0.5)) + '" height="' + n(Math.max(2, R.h[i] * 0.22)) + '"/>');
      const s = V.numberOn(fig, i);
      if (s) nums.push(text({ text: s, x: R.x[i] + R.w[i] / 2, y: R.y[i] + R.h[i] / 2 + 4, font: fig.numFont, color: V.textOn(k, R.chunk[i], fig.dual), align: 'center' }));
    }
    if (band.length) o.push('<g fill="#101828" fill-opacity="0.55">' + band.join('') + '</g>');
    o.push(nums.join('\n'));
    o.push('</g>');
    const x0 = sc.grid[0] ? sc.grid[0].x : 0;
    o.push('<rect x="' + n(ox + x0) + '" y="' + n(oy + fig.axisY) + '" width="' + n(sc.width - x0) + '" height="1" fill="' + P.ink.rule + '"/>');
    for (const m of fig.marks) o.push('<line x1="' + n(m.x) + '" y1="' + n(oy - 4) + '" x2="' + n(m.x) + '" y2="' + n(oy + fig.axisY + 4) + '" stroke="' + P.ink.text + '"' + (m.dash ? ' stroke-dasharray="3 3"' : '') + '/>');
    for (const t of fig.stageLabels.concat(fig.right, fig.text)) o.push(text(t));
    o.push('<rect x="' + n(V.PAD) + '" y="' + n(fig.legendY - 8) + '" width="' + n(W - 2 * V.PAD) + '" height="1" fill="' + P.ink.rule + '"/>');
    o.push(legend(fig.legend, V.PAD, fig.legendY, fig.legendW));
    o.push('</svg>');
    return o.join('\n') + '\n';
  }

  function download(name, blob) {
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 2000);
  }

  // The canvas as a PNG on a white background (the canvas itself is transparent), at its pixel size:
  // the figure's rows only (gfx.js setup keeps spare rows below it).
  function png(canvas, done) {
    const c = document.createElement('canvas');
    c.width = canvas.width; c.height = Math.min(canvas.height, Number(canvas.dataset.height) || canvas.height);
    const ctx = c.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, c.width, c.height);
    ctx.drawImage(canvas, 0, 0);
    c.toBlob((b) => done(b), 'image/png');
  }

  // A file name for the current plan: cutlab-pipeline-llama3-405b-16384gpus-tp8-pp16.svg
  function fileName(d, view, ext) {
    const r = d.r, p = r.config.plan;
    const name = String(r.config.model.name).replace(/[^A-Za-z0-9._-]+/g, '-');
    const axes = ['tp', 'pp', 'cp', 'ep', 'dp'].filter((a) => p[a] > 1).map((a) => a + p[a]).join('-');
    return 'cutlab-' + view + '-' + name + '-' + r.gpus + 'gpus' + (axes ? '-' + axes : '') + (CL.state.serving(r.mode) ? '-serve' : '') + '.' + ext;
  }

  // The SVG of `view` for a canvas `width` pixels wide (null when the core gives no figure).
  function svgOf(d, view, width, ui) {
    if (view === 'pipeline') {
      const fig = CL.views.pipeline.figure(d, width, ui);
      return fig ? svg(fig) : null;
    }
    const f = CL.views[view].scene(d, width, ui);
    return f ? CL.figure.svg(f) : null;
  }

  CL.exporter = { svg, svgOf, png, download, fileName };
})(window.CL = window.CL || {});
