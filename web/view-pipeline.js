// view-pipeline.js: one training step on the pipeline, drawn from the core's scene (timeline():
// core/scene.h lays out every op, idle interval, DP tail and optimizer step as a rect, with the
// stage labels and time ticks; `cutlab schedule --svg` draws the same scene). The page only
// places the scene on the canvas, colours each rect by its kind, adds the title, the peak number
// of micro-batches in flight per stage, the legend, and hit-tests by rect index. In serving mode
// the same call returns three decode steps walking the stages (kind "decode", idle elsewhere).
//
// figure() describes everything drawn, in canvas pixels; draw() paints it on the canvas and
// CL.exporter.svg() writes the same description as an SVG file.
(function (CL) {
  'use strict';
  const P = CL.palette, G = CL.gfx, F = CL.fmt;
  const PAD = 16, RIGHT = 76, TOP = 58, BELOW = 34;
  const HATCH = '#adb5bd';

  const OPNAME = { F: 'forward', B: 'backward', W: 'weight gradients', FB: 'forward and backward overlapped (DualPipe)' };
  const KIND_FILL = { F: P.op.F, B: P.op.B, W: P.op.W, FB: P.op.FB, decode: P.op.decode, dp: P.axis.dp, optimizer: P.state.optimizer };
  const OPS = new Set(['F', 'B', 'W', 'FB']);
  const isOp = (k) => OPS.has(k);
  // `dual`: a DualPipe schedule, whose chunk 1 is its second direction (fed at the last stage), drawn in P.op2.
  function fillOf(kind, chunk, dual) { return (dual && chunk === 1 && P.op2[kind]) || KIND_FILL[kind] || P.op.F; }
  const TEXT_ON = {};
  function textOn(kind, chunk, dual) {
    const key = kind + (dual && chunk === 1 ? '2' : '');
    return TEXT_ON[key] || (TEXT_ON[key] = P.onFill(fillOf(kind, chunk, dual)));
  }

  // The rect under a point of the scene (scene pixels), or −1: rects indexed by stage row once.
  function rectAt(fig, x, y) {
    const R = fig.sc.rects;
    if (!fig.byStage) {
      fig.byStage = [];
      for (let i = 0; i < R.count; i++) (fig.byStage[R.stage[i]] || (fig.byStage[R.stage[i]] = [])).push(i);
    }
    const st = fig.rows.findIndex((row) => row && y >= row.y && y < row.y + row.h);
    if (st < 0) return -1;
    let best = -1;
    for (const i of fig.byStage[st] || []) {
      const w = Math.max(2, R.w[i]);
      if (x >= R.x[i] && x < R.x[i] + w && (best < 0 || R.kind[best] === 'idle')) best = i;   // a bar wins over idle
    }
    return best;
  }

  const serving = (d) => CL.tables.isInfer(d.r);
  // The height asked of the core for the rows and axis: rows shrink (to 3 px) or grow (to 28 px) to fit it.
  const rowsHeight = (compact) => (compact ? 300 : 440);

  const measure = G.measure;

  // ---- the figure --------------------------------------------------------------------------
  function legendItems(sc, serve, numbered, dual, several) {
    const has = new Set(sc.rects.kind);
    if (serve) {
      const items = [{ label: 'decode of one token on a stage', color: P.op.decode, kind: 'box' }, { label: 'idle (waiting for the token)', color: HATCH, kind: 'hatch' }];
      if (numbered) items.push({ label: several ? 'numbers: micro-batch' : 'numbers: token', kind: 'none' });
      return items;
    }
    const items = [{ label: 'F forward', color: P.op.F, kind: 'box' }, { label: has.has('W') ? 'B backward (inputs)' : 'B backward', color: P.op.B, kind: 'box' }];
    if (dual) {
      items[0].label = 'F forward, fed at stage 1 (↓)';
      items[1].label = 'B backward, fed at stage 1';
      items.push({ label: 'F forward, fed at the last stage (↑)', color: P.op2.F, kind: 'box' }, { label: 'B backward, fed at the last stage', color: P.op2.B, kind: 'box' });
    }
    if (has.has('W')) items.push({ label: 'W weight gradients', color: P.op.W, kind: 'box' });
    if (has.has('FB')) items.push({ label: 'F&B overlapped (DualPipe; hue of its forward\'s direction)', color: P.op.FB, kind: 'box' });
    if (!dual && sc.rects.chunk.some((c) => c > 0)) items.push({ label: 'later model chunk (dark band)', color: P.op.F, kind: 'band' });
    if (has.has('idle')) items.push({ label: 'idle (bubble)', color: HATCH, kind: 'hatch' });
    if (has.has('dp')) items.push({ label: 'DP exposed', color: P.axis.dp, kind: 'box' });
    if (has.has('optimizer')) items.push({ label: 'optimizer step', color: P.state.optimizer, kind: 'box' });
    if (numbered) items.push({ label: 'numbers: micro-batch', kind: 'none' });
    return items;
  }

  // Everything the view draws, positioned for a canvas `W` pixels wide (null when the core gives
  // no scene); kept with the derived result, so layout() and draw() share it.
  const figures = new WeakMap();
  function figure(d, W, ui) {
    const compact = !!(ui && ui.compact);
    let byKey = figures.get(d);
    if (!byKey) { byKey = new Map(); figures.set(d, byKey); }
    const key = W + (compact ? 'c' : '');
    if (!byKey.has(key)) byKey.set(key, makeFigure(d, W, compact));
    return byKey.get(key);
  }
  function makeFigure(d, W, compact) {
    const serve = serving(d);
    const sc = d.timeline(Math.max(200, Math.round(W - 2 * PAD - RIGHT)), rowsHeight(compact));
    if (!sc) return null;
    const r = d.r, plan = r.config.plan, R = sc.rects, n = R.count;
    const ox = PAD, oy = TOP;
    // Per stage: the row's y and height (from its rects).
    const rows = [];
    for (let i = 0; i < n; i++) if (!rows[R.stage[i]]) rows[R.stage[i]] = { y: R.y[i], h: R.h[i] };
    const rowH = rows.length ? rows[0].h : 0;
    const axisY = sc.grid.length ? sc.grid[0].y + sc.grid[0].h : Math.max(0, ...rows.map((x) => x.y + x.h));
    // time → x, from the scene's own axis (its ticks carry both)
    let X = null;
    const g = sc.grid;
    if (g.length >= 2) {
      const k = (g[g.length - 1].x - g[0].x) / (g[g.length - 1].t_s - g[0].t_s);
      X = (t) => ox + g[0].x + (t - g[0].t_s) * k;
    }
    // Title and subtitle
    // Each a list of forms, longest first: a narrow canvas (a phone) takes the first that fits.
    let titles, subs;
    if (serve) {
      const inf = r.inference, stages = plan.pp + ' stage' + (plan.pp > 1 ? 's' : '');
      const idle = 'each stage idle ' + F.pct(inf.stage_idle_fraction) + ' of the time', tpot = 'TPOT ' + F.seconds(inf.tpot_s);
      titles = inf.micro_batches > 1 ? ['Serving · ' + inf.micro_batches + ' micro-batches in flight through ' + stages, inf.micro_batches + ' micro-batches in flight through ' + stages, inf.micro_batches + ' micro-batches in flight']
        : ['Decode · one batch walks ' + stages + ' in turn', 'One batch walks ' + stages];
      subs = [idle + ' · ' + tpot + ' · ' + F.sig(inf.output_tokens_per_s_per_user) + ' tokens/s per user', idle + ' · ' + tpot, tpot];
    } else {
      const s = sc.schedule, shape = plan.pp + ' stage' + (plan.pp > 1 ? 's' : '') + ' × ' + F.int(r.mesh.num_micro_batches) + ' micro-batches';
      titles = [s.name + ' · ' + shape + (plan.vpp > 1 ? ' × ' + plan.vpp + ' chunks' : ''), s.name + ' · ' + shape, s.name];
      const bubble = 'bubble ' + F.pct(s.bubble_fraction) + ' of the pipeline (hatched)';
      subs = [bubble + ' · makespan ' + F.seconds(s.makespan_s) + ' · step ' + F.seconds(sc.step_s), bubble + ' · step ' + F.seconds(sc.step_s), 'bubble ' + F.pct(s.bubble_fraction) + ' · step ' + F.seconds(sc.step_s)];
    }
    const titleFont = G.font(13, 650), subFont = G.font(12);
    const firstFit = (font, forms) => forms.find((t) => measure(font, t) <= W - 2 * PAD) || forms[forms.length - 1];
    const title = firstFit(titleFont, titles), sub = firstFit(subFont, subs);
    const tw = measure(titleFont, title);
    const subOnLine = measure(subFont, sub) <= W - 2 * PAD - tw - 12;
    const text = [
      { text: title, x: PAD, y: 20, font: titleFont, color: P.ink.text },
      { text: sub, x: subOnLine ? PAD + tw + 12 : PAD, y: subOnLine ? 20 : 36, font: subFont, color: P.ink.muted, maxW: W - 2 * PAD },
    ];
    // Stage labels where the core put them (numbered from 1, as everywhere on the page), and the
    // right-hand column: peak micro-batches alive (training) or each stage's time per token (serving).
    const labelFont = G.font(rowH >= 16 ? 11.5 : 10, 600);
    const stageLabels = [], right = [];
    text.push({ text: serve ? 'per step' : 'in flight', x: W - PAD, y: oy - 8, font: G.font(10, 700), color: P.ink.muted, align: 'right' });
    for (const l of sc.labels) {
      if (l.kind === 'stage') {
        const st = Number(/\d+/.exec(l.text)[0]);
        stageLabels.push({ text: 'stage ' + (st + 1), x: ox + l.x, y: oy + l.y, font: labelFont, color: P.axis.pp, align: l.anchor === 'end' ? 'right' : l.anchor === 'middle' ? 'center' : 'left' });
        const raw = serve ? r.inference.decode_stage_s[st] : sc.schedule.peak_alive_micro_batches[st];
        const v = raw === undefined ? '' : serve ? F.seconds(raw) : String(raw) + (plan.vpp > 1 ? ' chunks' : '');
        if (v) right.push({ text: v, x: W - PAD, y: oy + l.y, font: G.font(rowH >= 16 ? 10.5 : 9.5), color: P.ink.muted, align: 'right' });
      } else if (l.kind === 'tick') {
        text.push({ text: l.text.replace(' ', F.NBSP), x: ox + l.x, y: oy + l.y, font: G.font(10.5), color: P.ink.muted, align: 'center' });
      } else {
        text.push({ text: l.text, x: ox + l.x, y: oy + l.y, font: G.font(11), color: P.ink.muted, align: l.anchor === 'end' ? 'right' : l.anchor === 'middle' ? 'center' : 'left' });
      }
    }
    // makespan (dashed) and the end of the step (solid) above the rows
    const marks = [];
    if (!serve && X) {
      const mx = Math.round(X(sc.schedule.makespan_s)) + 0.5, ex = Math.round(X(sc.step_s)) - 0.5;
      marks.push({ x: mx, dash: true }, { x: ex, dash: false });
      const lf = G.font(10.5, 600);
      if (ex - mx > measure(lf, 'makespan') + 40) {
        text.push({ text: 'makespan', x: mx - 4, y: oy - 8, font: lf, color: P.ink.text, align: 'right' });
        text.push({ text: 'step', x: ex - 4, y: oy - 8, font: lf, color: P.ink.text, align: 'right' });
      } else text.push({ text: 'makespan | step', x: ex - 4, y: oy - 8, font: lf, color: P.ink.text, align: 'right' });
    }
    const plotRight = ox + sc.width;
    text.push({ text: 'time →', x: plotRight, y: oy + axisY + 30, font: G.font(10.5), color: P.ink.faint, align: 'right' });
    // numbers on the bars: micro-batch (training) or token (serving), from 1, where they fit
    const numFont = G.font(Math.min(11, Math.max(8.5, rowH - 8)), 600);
    const digitW = measure(numFont, '0');
    // serving: the micro-batch when several are in flight, else the token (the decode step)
    const byStep = serve && !(r.inference.micro_batches > 1);
    let numbered = false;
    for (let i = 0; i < n && !numbered; i++) numbered = fits(R, i, digitW, byStep);
    const dual = !serve && plan.schedule === 'dualpipe';  // chunk 1 is the second direction
    const legend = legendItems(sc, serve, numbered, dual, serve && r.inference.micro_batches > 1);
    const legendW = W - 2 * PAD;
    const legendY = oy + axisY + BELOW + 12;
    const height = legendY + G.legendHeight(legend, legendW);
    return { W, height, ox, oy, sc, rows, rowH, axisY, plotRight, text, stageLabels, right, marks, numFont, digitW, legend, legendY, legendW, serve, X, dual, byStep };
  }

  // The number drawn on rect i (micro-batch, or the token when one batch is served; from 1), or ''
  // when it does not fit.
  // A bar's micro-batch, or its token (step) when one batch is served: its number and what hover outlines.
  const barKey = (R, i, byStep) => (byStep ? R.chunk[i] : R.micro_batch[i]);
  const numberOf = (R, i, byStep) => String(barKey(R, i, byStep) + 1);
  function fits(R, i, digitW, byStep) {
    return R.micro_batch[i] >= 0 && R.w[i] >= 13 && R.h[i] >= 10 && numberOf(R, i, byStep).length * digitW <= R.w[i] - 3;
  }
  function numberOn(fig, i) {
    return fits(fig.sc.rects, i, fig.digitW, fig.byStep) ? numberOf(fig.sc.rects, i, fig.byStep) : '';
  }

  // ---- canvas ------------------------------------------------------------------------------
  function layout(d, width, ui) {
    const fig = figure(d, width, ui);
    return fig ? fig.height : 80;
  }

  function draw(ctx, d, vp, ui, hits) {
    const fig = figure(d, vp.w, ui);
    if (!fig) return;
    const { W, ox, oy, sc, rows } = fig;
    const R = sc.rects, n = R.count;
    // alternate row shading
    rows.forEach((row, st) => { if (st % 2 === 0) G.rect(ctx, PAD - 4, oy + row.y, W - 2 * PAD + 8, row.h, '#f8f9fa'); });
    // grid: the core's ticks
    ctx.strokeStyle = '#e9ecef'; ctx.lineWidth = 1;
    ctx.beginPath();
    for (const g of sc.grid) { const x = Math.round(ox + g.x) + 0.5; ctx.moveTo(x, oy + g.y); ctx.lineTo(x, oy + g.y + g.h + 4); }
    ctx.stroke();
    // idle: hatched (one pattern fill per rect, no clipping)
    ctx.fillStyle = G.hatchPattern(ctx, HATCH, 5, '#fff');
    for (let i = 0; i < n; i++) if (R.kind[i] === 'idle' && R.w[i] > 0.5) ctx.fillRect(ox + R.x[i], oy + R.y[i], R.w[i], R.h[i]);
    // ops, DP tails, optimizer steps, decode steps: one colour per kind; a bar 3 px or wider
    // stops half a pixel short, so neighbours stay apart
    let fill = null;
    for (let i = 0; i < n; i++) {
      const k = R.kind[i];
      if (k === 'idle') continue;
      const f = fillOf(k, R.chunk[i], fig.dual);
      if (f !== fill) { ctx.fillStyle = f; fill = f; }
      const w = R.w[i];
      ctx.fillRect(ox + R.x[i], oy + R.y[i], w >= 3 ? w - 0.5 : Math.max(0.6, w), R.h[i]);
    }
    // later model chunks: a dark band on top
    ctx.fillStyle = 'rgba(16,24,40,0.55)';
    if (!fig.dual) for (let i = 0; i < n; i++) if (R.chunk[i] > 0 && isOp(R.kind[i])) ctx.fillRect(ox + R.x[i], oy + R.y[i], Math.max(0.6, R.w[i] - 0.5), Math.max(2, R.h[i] * 0.22));
    // numbers
    ctx.font = fig.numFont; ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
    for (let i = 0; i < n; i++) {
      const s = numberOn(fig, i);
      if (!s) continue;
      ctx.fillStyle = textOn(R.kind[i], R.chunk[i], fig.dual);
      ctx.fillText(s, ox + R.x[i] + R.w[i] / 2, oy + R.y[i] + R.h[i] / 2 + 0.5);
    }
    ctx.textBaseline = 'alphabetic';
    // hover: the hovered micro-batch (or token, one batch served) outlined on every stage
    const hov = ui.hover && ui.hover.kind === 'rect' && ui.hover.mb !== undefined ? ui.hover.mb : null;
    if (hov !== null) {
      ctx.strokeStyle = P.ink.text; ctx.lineWidth = 1.5;
      for (let i = 0; i < n; i++) {
        if (R.kind[i] === 'idle' || R.kind[i] === 'dp' || R.kind[i] === 'optimizer') continue;
        if (barKey(R, i, fig.byStep) !== hov && R.backward_micro_batch[i] !== hov) continue;
        ctx.strokeRect(ox + R.x[i] + 0.5, oy + R.y[i] + 0.5, Math.max(1, R.w[i] - 1), R.h[i] - 1);
      }
    }
    // hover by rect index: one region over the rows, resolved when the pointer moves
    hits.add(ox, oy, sc.width, fig.axisY, (px, py) => {
      const i = rectAt(fig, px - ox, py - oy);
      if (i < 0) return null;
      const k = R.kind[i];
      const mb = k === 'idle' || k === 'dp' || k === 'optimizer' ? undefined : barKey(R, i, fig.byStep);
      return { kind: 'rect', i, mb, sc, key: mb !== undefined ? 'mb' + mb : 'r' + i };
    });
    // axis, markers, labels
    G.rect(ctx, ox + (sc.grid[0] ? sc.grid[0].x : 0), oy + fig.axisY, sc.width - (sc.grid[0] ? sc.grid[0].x : 0), 1, P.ink.rule);
    for (const m of fig.marks) {
      ctx.strokeStyle = P.ink.text; ctx.lineWidth = 1;
      if (m.dash) ctx.setLineDash([3, 3]);
      ctx.beginPath(); ctx.moveTo(m.x, oy - 4); ctx.lineTo(m.x, oy + fig.axisY + 4); ctx.stroke();
      ctx.setLineDash([]);
    }
    for (const t of fig.stageLabels.concat(fig.right, fig.text)) G.text(ctx, t.text, t.x, t.y, { font: t.font, color: t.color, align: t.align, maxW: t.maxW });
    G.rect(ctx, PAD, fig.legendY - 8, W - 2 * PAD, 1, P.ink.rule);
    G.legend(ctx, fig.legend, PAD, fig.legendY, fig.legendW);
  }

  // ---- hover -------------------------------------------------------------------------------
  function tip(d, p) {
    if (p.kind !== 'rect') return '';
    const sc = p.sc;
    if (!sc || p.i >= sc.rects.count) return '';
    const R = sc.rects, i = p.i, k = R.kind[i], st = R.stage[i] + 1;
    const when = F.seconds(R.start_s[i]) + ' → ' + F.seconds(R.end_s[i]) + ' · ' + F.seconds(R.end_s[i] - R.start_s[i]);
    if (k === 'decode') {
      const inf = d.r.inference;
      return '<b>' + (inf.micro_batches > 1 ? 'micro-batch ' + (R.micro_batch[i] + 1) + ', ' : '') + 'step ' + (R.chunk[i] + 1) + ' on stage ' + st + '</b><br>' + when +
        '<br>' + (inf.micro_batches > 1 ? 'the other micro-batches use the other stages meanwhile' : 'of the ' + F.seconds(inf.step_s) + ' step; the other stages wait');
    }
    if (k === 'idle') return '<b>stage ' + st + ' · idle</b>' + (serving(d) ? ' (waiting for a micro-batch)' : ' (bubble)') + '<br>' + when;
    if (k === 'dp') return '<b>stage ' + st + ' · data-parallel tail</b><br>gradient reduction not hidden behind the backward<br>' + when;
    if (k === 'optimizer') return '<b>stage ' + st + ' · optimizer step</b><br>' + when;
    const mb = k === 'FB' ? 'forward of micro-batch ' + (R.micro_batch[i] + 1) + ', backward of ' + (R.backward_micro_batch[i] + 1) : 'micro-batch ' + (R.micro_batch[i] + 1);
    const chunks = d.r.mesh.chunks;  // the core's model chunks per stage
    return '<b>stage ' + st + ' · ' + k + '</b> ' + (OPNAME[k] || '') + '<br>' + mb + (chunks > 1 ? ', model chunk ' + (R.chunk[i] + 1) + ' of ' + chunks : '') +
      '<br>' + when + '<br><i>outlined: this micro-batch on every stage</i>';
  }

  function caption(d) {
    const plan = d.r.config.plan;
    if (serving(d)) {
      const mb = d.r.inference.micro_batches;
      if (mb > 1) return '<b>Serving pipeline.</b> Hatched = idle. ' + mb + ' micro-batches are in flight (in-flight batching, as vLLM and TensorRT-LLM run PP): ' +
        'while one walks the stages the others fill them, so throughput follows the slowest stage and a user still waits for the whole walk. <span class="muted">Three steps of each shown.</span>';
      return '<b>Serving pipeline.</b> Hatched = idle. A step visits the ' + plan.pp + ' stage' + (plan.pp > 1 ? 's' : '') + ' in sequence, so at any instant ' +
        (plan.pp - 1) + ' of ' + plan.pp + ' stages wait (one batch in flight). <span class="muted">Three consecutive steps shown.</span>';
    }
    return '<b>Pipeline timeline.</b> Rows are stages (' + plan.pp + '), bars are the F/B/W ops of each micro-batch, simulated op by op and laid out by the core ' +
      '(the figure of <code>cutlab schedule --svg</code>). <span class="muted">Hover an op to follow its micro-batch down the pipe.</span>';
  }

  CL.views = CL.views || {};
  // uses: the core function the view is drawn from (bridge.js: in core.js or core-full.js)
  CL.views.pipeline = { layout, draw, tip, caption, figure, fillOf, textOn, numberOn, rectAt, HATCH, PAD, uses: 'timeline' };
})(window.CL = window.CL || {});
