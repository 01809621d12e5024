// view-pipeline.js: one training step on the pipeline, as simulated op by op by the core
// (schedule(): every F, B, W op with its start and end, and the idle gaps). Stages are rows;
// idle time is hatched; after the last backward each stage shows its exposed data-parallel
// tail and the optimizer step (result.time.stages), so the axis ends at the step time.
(function (CL) {
  'use strict';
  const P = CL.palette, G = CL.gfx, F = CL.fmt;
  const PAD = 16, LEFT = 84, RIGHT = 84, TOP = 58, AXIS = 34;

  const OPNAME = { F: 'forward', B: 'backward', W: 'weight gradients', FB: 'forward + backward overlapped' };

  function dims(d, width, compact) {
    const pp = d.r.config.plan.pp;
    const rowH = Math.max(7, Math.min(compact ? 28 : 34, Math.floor((compact ? 300 : 440) / pp)));
    return { rowH, plotW: width - PAD - LEFT - RIGHT, x0: PAD + LEFT, top: TOP };
  }

  function legendItems(d, s) {
    const items = [{ label: 'F forward', color: P.op.F }, { label: 'B backward', color: P.op.B }];
    if (s && s.ops.some((o) => o.kind === 'W')) items.push({ label: 'W weight gradients', color: P.op.W });
    if (s && s.ops.some((o) => o.kind === 'FB')) items.push({ label: 'F&B overlapped (DualPipe)', color: P.op.FB });
    if (s && s.ops.some((o) => o.chunk > 0)) items.push({ label: 'later model chunk (dark band)', color: P.op.F, kind: 'band' });
    items.push({ label: 'idle (bubble)', color: '#adb5bd', kind: 'hatch' });
    if (d.r.time.stages.some((t) => t.dp_exposed_s > 0)) items.push({ label: 'DP exposed', color: P.axis.dp });
    items.push({ label: 'optimizer step', color: P.state.optimizer });
    if (s && s.ops.length && (1 / (s.ops.length / d.r.config.plan.pp)) * 800 >= 14) items.push({ label: 'numbers: micro-batch', kind: 'none' });
    return items;
  }

  // ---- serving: one token after another walks the stages --------------------------------------
  const TOKENS = 3;
  function decodeItems() {
    return [{ label: 'decode of one token on a stage', color: P.op.decode }, { label: 'idle (waiting for the token)', color: '#adb5bd', kind: 'hatch' },
      { label: 'numbers: token', kind: 'none' }];
  }
  function drawDecode(ctx, d, vp, ui, hits) {
    const r = d.r, inf = r.inference, pp = r.config.plan.pp, W = vp.w;
    const k = dims(d, W, ui.compact);
    const T = inf.tpot_s, span = TOKENS * T;
    const X = (t) => k.x0 + (t / span) * k.plotW;
    const tw = G.text(ctx, 'Decode · one token walks ' + pp + ' stage' + (pp > 1 ? 's' : '') + ' in turn', PAD, 20, { font: G.font(13, 650) });
    const sub = 'each stage idle ' + F.pct(inf.stage_idle_fraction) + ' of the time · TPOT ' + F.seconds(T) + ' · ' + F.sig(inf.tokens_per_s_per_user) + ' tokens/s per user';
    ctx.font = G.font(12);
    if (ctx.measureText(sub).width <= W - 2 * PAD - tw - 12) G.text(ctx, sub, PAD + tw + 12, 20, { font: G.font(12), color: P.ink.muted });
    else G.text(ctx, sub, PAD, 36, { font: G.font(12), color: P.ink.muted, maxW: W - 2 * PAD });
    const pad = k.rowH >= 12 ? 2 : 1;
    for (let st = 0; st < pp; st++) {
      const y = k.top + st * k.rowH;
      if (st % 2 === 0) G.rect(ctx, PAD - 4, y, W - 2 * PAD + 8, k.rowH, '#f8f9fa');
      if (k.rowH >= 10) G.text(ctx, 'stage ' + (st + 1), PAD + LEFT - 10, y + k.rowH / 2 + 4, { font: G.font(k.rowH >= 16 ? 11.5 : 10, 600), color: P.axis.pp, align: 'right' });
      G.hatch(ctx, k.x0, y + pad, k.plotW, k.rowH - 2 * pad, '#adb5bd', 5, '#fff');
      if (k.rowH >= 10) G.text(ctx, F.seconds(inf.decode_stage_s[st]), W - PAD, y + k.rowH / 2 + 4, { font: G.font(10.5), color: P.ink.muted, align: 'right' });
    }
    G.text(ctx, 'per token', W - PAD, k.top - 8, { font: G.font(10, 700), color: P.ink.muted, align: 'right' });
    // positions along the token's walk: each stage starts when the previous one is done
    for (let t = 0; t < TOKENS; t++) {
      let start = t * T;
      for (let st = 0; st < pp; st++) {
        const dur = inf.decode_stage_s[st];
        const y = k.top + st * k.rowH + pad, h = k.rowH - 2 * pad;
        const x0 = X(start), w = Math.max(1, X(start + dur) - x0);
        G.rect(ctx, x0, y, w, h, P.op.decode);
        if (w >= 14 && h >= 10) G.text(ctx, String(t + 1), x0 + w / 2, y + h / 2 + 4, { font: G.font(10.5, 700), align: 'center' });
        hits.add(x0, y, w, h, { kind: 'decode', t, st, dur });
        start += dur;
      }
    }
    const ay = k.top + pp * k.rowH;
    ctx.strokeStyle = P.ink.rule; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(k.x0, ay + 0.5); ctx.lineTo(k.x0 + k.plotW, ay + 0.5); ctx.stroke();
    const tick = G.niceStep(span, Math.max(3, Math.floor(k.plotW / 90)));
    for (let t = 0; t <= span + 1e-12; t += tick) {
      const x = Math.round(X(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, ay); ctx.lineTo(x, ay + 4); ctx.stroke();
      G.text(ctx, tickLabel(t, tick), x, ay + 16, { font: G.font(10.5), color: P.ink.muted, align: 'center' });
    }
    G.text(ctx, 'time →', k.x0 + k.plotW, ay + 30, { font: G.font(10.5), color: P.ink.faint, align: 'right' });
    const items = decodeItems();
    const ly = vp.h - G.legendHeight(items, W - 2 * PAD);
    G.rect(ctx, PAD, ly - 8, W - 2 * PAD, 1, P.ink.rule);
    G.legend(ctx, items, PAD, ly, W - 2 * PAD);
  }

  function layout(d, width, ui) {
    if (CL.tables.isInfer(d.r)) {
      const k = dims(d, width, ui && ui.compact);
      return k.top + d.r.config.plan.pp * k.rowH + AXIS + 16 + G.legendHeight(decodeItems(), width - 2 * PAD);
    }
    const s = d.schedule();
    const k = dims(d, width, ui && ui.compact);
    const rows = d.r.config.plan.pp;
    return k.top + rows * k.rowH + AXIS + 16 + G.legendHeight(legendItems(d, s), width - 2 * PAD);
  }

  function fillOf(op) { return P.op[op.kind] || P.op.F; }

  // Tick labels without trailing zeros: 0, 1 s, 2 s … or 0, 250 ms, 500 ms …
  function tickLabel(t, tick) {
    if (t === 0) return '0';
    if (tick >= 1) return F.fixed(t, tick % 1 ? 1 : 0) + F.NBSP + 's';
    if (tick >= 1e-3) return F.fixed(t * 1e3, (tick * 1e3) % 1 ? 1 : 0) + F.NBSP + 'ms';
    return F.fixed(t * 1e6, 0) + F.NBSP + 'µs';
  }

  function draw(ctx, d, vp, ui, hits) {
    if (CL.tables.isInfer(d.r)) return drawDecode(ctx, d, vp, ui, hits);
    const r = d.r, plan = r.config.plan;
    const s = d.schedule();
    const W = vp.w;
    if (!s) {
      G.text(ctx, 'This core has no schedule() function: the timeline needs it.', PAD, 30, { color: P.ink.warn });
      return;
    }
    const k = dims(d, W, ui.compact);
    const step = r.time.step_s;
    const X = (t) => k.x0 + (t / step) * k.plotW;
    const rows = plan.pp;
    const mbCount = r.mesh.num_micro_batches;
    // title line
    const title = s.name + ' · ' + rows + ' stage' + (rows > 1 ? 's' : '') + ' × ' + F.int(mbCount) + ' micro-batches' +
      (plan.vpp > 1 ? ' × ' + plan.vpp + ' chunks' : '');
    const tw = G.text(ctx, title, PAD, 20, { font: G.font(13, 650) });
    const sub = 'bubble ' + F.pct(s.bubble_fraction) + ' of the pipeline (hatched) · makespan ' + F.seconds(s.makespan_s) + ' · step ' + F.seconds(step);
    ctx.font = G.font(12);
    if (ctx.measureText(sub).width <= W - 2 * PAD - tw - 12) G.text(ctx, sub, PAD + tw + 12, 20, { font: G.font(12), color: P.ink.muted });
    else G.text(ctx, sub, PAD, 36, { font: G.font(12), color: P.ink.muted, maxW: W - 2 * PAD - 70 });
    G.text(ctx, 'in flight', W - PAD, TOP - 8, { font: G.font(10, 700), color: P.ink.muted, align: 'right' });
    // rows
    for (let st = 0; st < rows; st++) {
      const y = k.top + st * k.rowH;
      if (st % 2 === 0) G.rect(ctx, PAD - 4, y, W - 2 * PAD + 8, k.rowH, '#f8f9fa');
      if (k.rowH >= 10 && (rows <= 32 || st % Math.ceil(rows / 32) === 0))
        G.text(ctx, 'stage ' + (st + 1), PAD + LEFT - 10, y + k.rowH / 2 + 4, { font: G.font(k.rowH >= 16 ? 11.5 : 10, 600), color: P.axis.pp, align: 'right' });
      const alive = s.peak_alive_micro_batches[st];
      if (alive !== undefined && k.rowH >= 10) G.text(ctx, String(alive) + (plan.vpp > 1 ? ' chunks' : ''), W - PAD, y + k.rowH / 2 + 4,
        { font: G.font(10.5), color: P.ink.muted, align: 'right' });
    }
    const pad = k.rowH >= 12 ? 2 : 1;
    // idle
    for (const iv of s.idle) {
      const y = k.top + iv.stage * k.rowH + pad;
      const x0 = X(iv.start_s), x1 = X(iv.end_s);
      if (x1 - x0 < 0.5) continue;
      G.hatch(ctx, x0, y, x1 - x0, k.rowH - 2 * pad, '#adb5bd', 5, '#fff');
    }
    // ops
    const hoverMb = ui.hover && ui.hover.kind === 'op' ? ui.hover.mb : null;
    ctx.font = G.font(Math.min(11, Math.max(8.5, k.rowH - 8)), 600);
    const labelFont = ctx.font;
    for (const op of s.ops) {
      const y = k.top + op.stage * k.rowH + pad, h = k.rowH - 2 * pad;
      const x0 = X(op.start_s), x1 = X(op.end_s);
      const w = Math.max(0.6, x1 - x0);
      const fill = fillOf(op);
      ctx.fillStyle = fill;
      ctx.fillRect(x0, y, w, h);
      if (op.chunk > 0) { ctx.fillStyle = 'rgba(16,24,40,0.55)'; ctx.fillRect(x0, y, w, Math.max(2, h * 0.22)); }
      if (w >= 3) { ctx.fillStyle = 'rgba(255,255,255,0.85)'; ctx.fillRect(x1 - 0.5, y, 0.5, h); }
      if (w >= 13 && h >= 10) {
        const lbl = String(op.micro_batch);
        ctx.font = labelFont;
        if (ctx.measureText(lbl).width <= w - 3) {
          ctx.fillStyle = P.onFill(fill);
          ctx.textAlign = 'center';
          ctx.textBaseline = 'middle';
          ctx.fillText(lbl, x0 + w / 2, y + h / 2 + 0.5);
          ctx.textBaseline = 'alphabetic';
        }
      }
      hits.add(x0, y, w, h, { kind: 'op', op, mb: op.micro_batch, key: 'mb' + op.micro_batch });
    }
    if (hoverMb !== null) {
      ctx.strokeStyle = P.ink.text; ctx.lineWidth = 1.5;
      for (const op of s.ops) {
        if (op.micro_batch !== hoverMb) continue;
        const y = k.top + op.stage * k.rowH + pad, h = k.rowH - 2 * pad;
        ctx.strokeRect(X(op.start_s) + 0.5, y + 0.5, Math.max(1, X(op.end_s) - X(op.start_s)) - 1, h - 1);
      }
    }
    // the tail after the last backward: exposed DP, then the optimizer
    for (const t of r.time.stages) {
      const y = k.top + t.stage * k.rowH + pad, h = k.rowH - 2 * pad;
      let x = X(t.end_s);
      if (t.dp_exposed_s > 0) {
        const w = X(t.end_s + t.dp_exposed_s) - x;
        G.rect(ctx, x, y, w, h, P.axis.dp);
        hits.add(x, y, Math.max(w, 2), h, { kind: 'tail', what: 'dp', t });
        x += w;
      }
      if (t.optimizer_s > 0) {
        const w = Math.max(1, X(t.end_s + t.dp_exposed_s + t.optimizer_s) - x);
        G.rect(ctx, x, y, w, h, P.state.optimizer);
        hits.add(x, y, Math.max(w, 2), h, { kind: 'tail', what: 'opt', t });
      }
    }
    // makespan marker and time axis
    const ay = k.top + rows * k.rowH;
    ctx.strokeStyle = P.ink.rule; ctx.lineWidth = 1;
    ctx.beginPath(); ctx.moveTo(k.x0, ay + 0.5); ctx.lineTo(k.x0 + k.plotW, ay + 0.5); ctx.stroke();
    const tick = G.niceStep(step, Math.max(3, Math.floor(k.plotW / 90)));
    for (let t = 0; t <= step + 1e-12; t += tick) {
      const x = Math.round(X(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, ay); ctx.lineTo(x, ay + 4); ctx.stroke();
      G.text(ctx, tickLabel(t, tick), x, ay + 16, { font: G.font(10.5), color: P.ink.muted, align: 'center' });
    }
    const mx = Math.round(X(s.makespan_s)) + 0.5;
    ctx.strokeStyle = P.ink.text; ctx.setLineDash([3, 3]);
    ctx.beginPath(); ctx.moveTo(mx, k.top - 4); ctx.lineTo(mx, ay + 4); ctx.stroke(); ctx.setLineDash([]);
    const ex = Math.round(X(step)) - 0.5;
    ctx.strokeStyle = P.ink.text;
    ctx.beginPath(); ctx.moveTo(ex, k.top - 4); ctx.lineTo(ex, ay + 4); ctx.stroke();
    const mLabel = 'makespan';
    ctx.font = G.font(10.5, 600);
    const mlw = ctx.measureText(mLabel).width;
    const stepX = ex, mkX = mx;
    if (stepX - mkX > mlw + 40) {
      G.text(ctx, mLabel, mkX - 4, k.top - 8, { font: G.font(10.5, 600), color: P.ink.text, align: 'right' });
      G.text(ctx, 'step', stepX - 4, k.top - 8, { font: G.font(10.5, 600), color: P.ink.text, align: 'right' });
    } else {
      G.text(ctx, 'makespan | step', stepX - 4, k.top - 8, { font: G.font(10.5, 600), color: P.ink.text, align: 'right' });
    }
    G.text(ctx, 'time →', k.x0 + k.plotW, ay + 30, { font: G.font(10.5), color: P.ink.faint, align: 'right' });
    const items = legendItems(d, s);
    const ly = vp.h - G.legendHeight(items, W - 2 * PAD);
    G.rect(ctx, PAD, ly - 8, W - 2 * PAD, 1, P.ink.rule);
    G.legend(ctx, items, PAD, ly, W - 2 * PAD);
  }

  function tip(d, p) {
    if (p.kind === 'decode') return '<b>token ' + (p.t + 1) + ' on stage ' + (p.st + 1) + '</b><br>' + F.seconds(p.dur) + ' of the ' + F.seconds(d.r.inference.tpot_s) +
      ' per token; the other stages wait';
    if (p.kind === 'op') {
      const o = p.op;
      return '<b>stage ' + (o.stage + 1) + ' · ' + o.kind + '</b> ' + OPNAME[o.kind] + '<br>micro-batch ' + o.micro_batch +
        (d.r.config.plan.vpp > 1 || o.chunk > 0 ? ', model chunk ' + (o.chunk + 1) : '') + '<br>' + F.seconds(o.start_s) + ' → ' + F.seconds(o.end_s) +
        '<br><i>outlined: this micro-batch on every stage</i>';
    }
    if (p.kind === 'tail') {
      const t = p.t;
      return p.what === 'dp' ? '<b>stage ' + (t.stage + 1) + ' · data-parallel tail</b><br>' + F.seconds(t.dp_exposed_s) + ' of gradient reduction not hidden behind the backward'
        : '<b>stage ' + (t.stage + 1) + ' · optimizer step</b><br>' + F.seconds(t.optimizer_s);
    }
    return '';
  }

  function caption(d) {
    const plan = d.r.config.plan;
    if (CL.tables.isInfer(d.r)) return '<b>Serving pipeline.</b> Hatched = idle. A token visits the ' + plan.pp + ' stages in sequence, so at any instant ' +
      (plan.pp - 1) + ' of ' + plan.pp + ' stages wait (one batch in flight). <span class="muted">Three consecutive tokens shown.</span>';
    return '<b>Pipeline timeline.</b> Rows are stages (' + plan.pp + '), bars are F/B/W ops of each micro-batch, simulated op by op by the core. ' +
      '<span class="muted">Hover an op to follow its micro-batch down the pipe.</span>';
  }

  CL.views = CL.views || {};
  CL.views.pipeline = { layout, draw, tip, caption };
})(window.CL = window.CL || {});
