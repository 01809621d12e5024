// view-cuts.js: the cut directions on the model itself. Left: the depth of the model, layers in
// pipeline stages (PP). Right: one layer opened up: every matrix in TP slices, an MoE layer's
// experts whole on EP ranks (ETP slices inside under folding), the sequence in CP chunks, and the
// DP replicas of all of it. Every range drawn (heads, FFN columns, experts, tokens, layers) is the
// core's answer (result.placement.stages and gpu() of representative ranks).
(function (CL) {
  'use strict';
  const P = CL.palette, G = CL.gfx, F = CL.fmt;
  const PAD = 16, HEAD = 26;
  let DEPTH_W = 218;   // narrower in small frames (set per draw from the width)

  function isMoeLayer(model, i) { return model.experts > 0 && i >= model.dense_layers; }

  function defaultLayer(r) {
    const m = r.config.model;
    return m.experts > 0 ? Math.min(m.layers - 1, m.dense_layers) : 0;
  }

  // Stage and chunk of layer i, from placement.stages[].chunks.
  function stageOf(r, i) {
    for (const st of r.placement.stages)
      for (let c = 0; c < st.chunks.length; c++)
        if (i >= st.chunks[c][0] && i <= st.chunks[c][1]) return { stage: st.stage, chunk: c, st };
    return { stage: 0, chunk: 0, st: r.placement.stages[0] };
  }

  // A heading with a muted subtitle; the subtitle moves to a second line when it does not fit.
  // Returns the extra height used (0 or one line).
  function section(ctx, x, y, title, sub, maxW) {
    const w = G.text(ctx, title, x, y, { font: G.font(12.5, 650), color: P.ink.text });
    if (!sub) return 0;
    ctx.font = G.font(12);
    if (ctx.measureText(sub).width <= maxW - w - 8) {
      G.text(ctx, sub, x + w + 8, y, { font: G.font(12), color: P.ink.muted });
      return 0;
    }
    G.text(ctx, sub, x, y + 15, { font: G.font(12), color: P.ink.muted, maxW });
    return 15;
  }

  // ---- depth (PP) ---------------------------------------------------------------------------
  function drawDepth(ctx, d, x, y, h, ui, hits) {
    const r = d.r, m = r.config.model, plan = r.config.plan;
    const stages = r.placement.stages, Pn = plan.pp;
    section(ctx, x, y - 8, 'Depth', 'PP = ' + Pn + ' stage' + (Pn > 1 ? 's' : ''), DEPTH_W);
    const barX = x, barW = 28, capH = 16;
    const top = y + 4 + capH + 3, bottom = y + h - capH - 3;
    const L = m.layers, rowH = (bottom - top) / L;
    const embStage = stages.find((s) => s.embedding), outStage = stages.slice().reverse().find((s) => s.output);
    const stageFill = (s) => P.rank(P.axis.pp, s, Pn);
    // embedding and output boxes
    G.rect(ctx, barX, y + 4, barW, capH, stageFill(embStage.stage));
    G.text(ctx, 'embedding', barX + barW + 8, y + 4 + 12, { font: G.font(11), color: P.ink.muted });
    G.rect(ctx, barX, bottom + 3, barW, capH, stageFill(outStage.stage));
    G.text(ctx, 'output layer + loss', barX + barW + 8, bottom + 3 + 12, { font: G.font(11), color: P.ink.muted });
    hits.add(barX, y + 4, barW + 120, capH, { kind: 'io', what: 'embedding', stage: embStage.stage });
    hits.add(barX, bottom + 3, barW + 140, capH, { kind: 'io', what: 'output', stage: outStage.stage });
    // layer rows by chunk
    const segs = [];
    for (const st of stages)
      st.chunks.forEach((c, k) => segs.push({ stage: st.stage, chunk: k, a: c[0], b: c[1], chunks: st.chunks.length }));
    segs.sort((p, q) => p.a - q.a);
    for (const s of segs) {
      const y0 = top + s.a * rowH, y1 = top + (s.b + 1) * rowH;
      G.rect(ctx, barX, y0, barW, y1 - y0, stageFill(s.stage));
      if (rowH >= 3) {
        ctx.fillStyle = 'rgba(255,255,255,0.35)';
        for (let i = s.a + 1; i <= s.b; i++) ctx.fillRect(barX, top + i * rowH, barW, 0.6);
      }
      ctx.fillStyle = '#fff';
      ctx.fillRect(barX, y0, barW, 1);
    }
    // MoE marker: a thin raspberry tick on the right edge of MoE layers
    if (m.experts > 0) {
      const a = m.dense_layers;
      G.rect(ctx, barX + barW + 1, top + a * rowH, 3, (L - a) * rowH, P.axis.ep);
    }
    // labels: one per segment when they fit, else every k-th
    const labelH = 13.5;
    const maxLabels = Math.max(1, Math.floor((bottom - top) / labelH));
    const step = Math.ceil(segs.length / maxLabels);
    let lastY = -1e9;
    segs.forEach((s, i) => {
      const mid = top + ((s.a + s.b + 1) / 2) * rowH;
      if (i % step !== 0 && i !== segs.length - 1) return;
      let ly = Math.max(mid + 4, lastY + labelH);
      if (ly > bottom + 2) return;
      lastY = ly;
      const label = 'stage ' + (s.stage + 1) + ' · ' + F.layers(s.a, s.b);
      G.text(ctx, label, barX + barW + 8, ly, { font: G.font(11, 500), color: P.ink.text, maxW: DEPTH_W - barW - 12 });
    });
    for (let i = 0; i < L; i++) hits.add(barX, top + i * rowH, barW + 6, Math.max(rowH, 1), { kind: 'layer', layer: i });
    for (const s of segs) {
      const y0 = top + s.a * rowH, y1 = top + (s.b + 1) * rowH;
      hits.add(barX + barW + 6, y0, DEPTH_W - barW - 6, y1 - y0, { kind: 'stage', stage: s.stage, a: s.a, b: s.b });
    }
    // selected layer
    const sel = ui.layer;
    const sy = top + sel * rowH;
    ctx.strokeStyle = P.ink.text;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(barX - 2.5, sy - 1.5, barW + 5, Math.max(rowH, 2) + 3);
    return { selY: sy + Math.max(rowH, 2) / 2, barRight: barX + barW + 3 };
  }

  // ---- one matrix with TP slices ------------------------------------------------------------
  // pieces: [{from, to, fill, hatch}] as fractions of the width.
  function matrix(ctx, x, y, w, h, name, sub, pieces, hits, payload) {
    for (const p of pieces) {
      const x0 = x + p.from * w, x1 = x + p.to * w;
      const yy = p.y0 !== undefined ? y + p.y0 * h : y, hh = p.y1 !== undefined ? (p.y1 - (p.y0 || 0)) * h : h;
      G.rect(ctx, x0, yy, x1 - x0, hh, p.fill);
      if (p.hatch) G.hatch(ctx, x0, yy, x1 - x0, hh, 'rgba(255,255,255,0.55)', 5);
      if (p.hit) hits.add(x0, yy, x1 - x0, hh, p.hit);
    }
    ctx.strokeStyle = '#fff';
    ctx.lineWidth = 1;
    for (const p of pieces) {
      if (p.from <= 0) continue;
      const xx = Math.round(x + p.from * w) + 0.5;
      ctx.beginPath(); ctx.moveTo(xx, y); ctx.lineTo(xx, y + h); ctx.stroke();
    }
    G.rect(ctx, x, y, w, h, null, 'rgba(31,35,40,0.35)');
    G.text(ctx, name, x + w / 2, y + h + 14, { font: G.font(12, 600), align: 'center', maxW: w + 6 });
    if (sub) {
      const subs = Array.isArray(sub) ? sub : [sub];
      ctx.font = G.font(10.5);
      const pick = subs.find((t) => ctx.measureText(t).width <= w + 6) || subs[subs.length - 1];
      G.text(ctx, pick, x + w / 2, y + h + 27, { font: G.font(10.5), color: P.ink.muted, align: 'center', maxW: w + 8 });
    }
    if (payload) hits.add(x, y + h, w, 30, payload);
  }

  // TP pieces of a matrix split along heads / kv heads / ffn columns.
  function tpPieces(reps, key, total, T, label) {
    const out = [];
    if (key === 'kv_heads') {
      // A KV head is held by every TP rank whose kv range contains it (replicated when tp > kv_heads).
      for (let k = 0; k < total; k++) {
        const holders = reps.filter((g) => g.kv_heads[0] <= k && k < g.kv_heads[1]);
        holders.forEach((g, j) => out.push({
          from: k / total, to: (k + 1) / total, y0: j / holders.length, y1: (j + 1) / holders.length,
          fill: P.rank(P.axis.tp, g.tp, T), hatch: holders.length > 1,
          hit: { kind: 'slice', matrix: label, tp: g.tp, g, replicas: holders.length, head: k },
        }));
      }
      return out;
    }
    for (const g of reps) {
      const range = g[key];
      out.push({ from: range[0] / total, to: range[1] / total, fill: P.rank(P.axis.tp, g.tp, T),
        hit: { kind: 'slice', matrix: label, tp: g.tp, g, key } });
    }
    return out;
  }

  function whole(fill, hit) { return [{ from: 0, to: 1, fill, hatch: true, hit }]; }

  // Lays out matrices [{name, sub, cols, pieces}] in a row of width W; min width per matrix.
  function rowOfMatrices(ctx, list, x, y, W, h, hits, gap) {
    gap = gap || 10;
    const minW = 34;
    const total = list.reduce((s, m) => s + m.cols, 0);
    let avail = W - gap * (list.length - 1);
    // widths proportional to columns, but never narrower than the matrix's name
    ctx.font = G.font(12, 600);
    const mins = list.map((m) => Math.max(minW, ctx.measureText(m.name).width + 8));
    let widths = list.map((m) => (m.cols / total) * avail);
    const small = widths.map((w, i) => w < mins[i]);
    const fixedW = small.reduce((s, sm, i) => s + (sm ? mins[i] : 0), 0);
    const restCols = list.reduce((s, m, i) => s + (small[i] ? 0 : m.cols), 0);
    widths = list.map((m, i) => (small[i] ? mins[i] : (m.cols / restCols) * (avail - fixedW)));
    let cx = x;
    list.forEach((m, i) => {
      matrix(ctx, cx, y, widths[i], h, m.name, m.sub, m.pieces, hits, m.payload);
      m.x = cx; m.w = widths[i];
      cx += widths[i] + gap;
    });
    return list;
  }

  function rankLabels(ctx, m, reps, key, total, y) {
    // numbers of the TP ranks above the first matrix's slices, when they fit
    for (const g of reps) {
      const a = m.x + (g[key][0] / total) * m.w, b = m.x + (g[key][1] / total) * m.w;
      if (b - a < 11) return false;
    }
    for (const g of reps) {
      const a = m.x + (g[key][0] / total) * m.w, b = m.x + (g[key][1] / total) * m.w;
      G.text(ctx, String(g.tp), (a + b) / 2, y, { font: G.font(10.5, 600), color: P.axis.tp, align: 'center' });
    }
    return true;
  }

  // ---- the opened layer ----------------------------------------------------------------------
  function drawLayer(ctx, d, x, y, W, ui, hits) {
    const r = d.r, m = r.config.model, plan = r.config.plan, reps = d.reps;
    const T = plan.tp, i = ui.layer;
    const where = stageOf(r, i);
    const moe = isMoeLayer(m, i);
    const title = 'Inside ' + F.layers(i, i) + (moe ? ' (MoE)' : '');
    const sub = 'stage ' + (where.stage + 1) + ' of ' + plan.pp + ' · TP = ' + T +
      (T > 1 ? ': every matrix in ' + T + ' vertical slices, one per TP rank' : ': matrices whole on one GPU');
    let cy = y + 22 + section(ctx, x, y, title, sub, W);
    const tpReps = reps.tp;
    const haveReps = tpReps.length === T;
    const attnH = 52;
    // Attention matrices
    const mats = [];
    const qcols = m.heads * m.head_dim, kvcols = m.kv_heads * m.head_dim;
    const sliceOf = (key, total, label) => (haveReps ? tpPieces(tpReps, key, total, T, label) : whole(P.tone(P.axis.tp, 0.3)));
    if (m.kv_lora_rank > 0) {
      const repl = (name) => whole(P.tone(P.axis.tp, 0.15), { kind: 'replicated', matrix: name });
      mats.push({ name: 'WQ↓', sub: ['q-LoRA ' + F.int(m.q_lora_rank), 'q-LoRA'], cols: Math.max(m.q_lora_rank, 1) * 2, pieces: m.q_lora_rank > 0 ? repl('WQ↓') : [] });
      mats.push({ name: 'WQ↑', sub: m.heads + ' heads', cols: qcols, pieces: sliceOf('heads', m.heads, 'WQ↑') });
      mats.push({ name: 'WKV↓', sub: ['KV latent ' + F.int(m.kv_lora_rank), 'latent'], cols: m.kv_lora_rank * 2, pieces: repl('WKV↓') });
      mats.push({ name: 'WKV↑', sub: m.heads + ' heads', cols: qcols, pieces: sliceOf('heads', m.heads, 'WKV↑') });
      mats.push({ name: 'WO', sub: ['row-parallel', 'row-par.'], cols: qcols, pieces: sliceOf('heads', m.heads, 'WO') });
    } else {
      mats.push({ name: 'WQ', sub: m.heads + ' heads', cols: qcols, pieces: sliceOf('heads', m.heads, 'WQ') });
      mats.push({ name: 'WK', sub: [m.kv_heads + ' KV heads', m.kv_heads + ' KV'], cols: kvcols, pieces: sliceOf('kv_heads', m.kv_heads, 'WK') });
      mats.push({ name: 'WV', sub: [m.kv_heads + ' KV heads', m.kv_heads + ' KV'], cols: kvcols, pieces: sliceOf('kv_heads', m.kv_heads, 'WV') });
      mats.push({ name: 'WO', sub: ['row-parallel', 'row-par.'], cols: qcols, pieces: sliceOf('heads', m.heads, 'WO') });
    }
    let mlp = [];
    if (!moe) {
      const f = m.ffn_hidden;
      const p = (name) => sliceOf('ffn', f, name);
      mlp = m.gated_mlp
        ? [{ name: 'W gate', sub: 'FFN ' + F.int(f), cols: f, pieces: p('W gate') },
           { name: 'W up', sub: 'FFN ' + F.int(f), cols: f, pieces: p('W up') },
           { name: 'W down', sub: 'row-parallel', cols: f, pieces: p('W down') }]
        : [{ name: 'W in', sub: 'FFN ' + F.int(f), cols: f, pieces: p('W in') },
           { name: 'W out', sub: 'row-parallel', cols: f, pieces: p('W out') }];
    }
    // group captions
    // One row per block, each matrix's width proportional to its split dimension within the row
    // (the rows have their own scales; the labels carry the sizes).
    const block = (list, caption, rankKey, rankTotal, firstSplit) => {
      const capY = cy + 10;
      G.text(ctx, caption, x, capY, { font: G.font(11, 600), color: P.ink.muted });
      G.rect(ctx, x, capY + 4, W, 1, P.ink.rule);
      const boxY = cy + 30;   // room for the rank numbers above the slices
      const placed = rowOfMatrices(ctx, list, x, boxY, W, attnH, hits, 12);
      if (haveReps && T > 1) rankLabels(ctx, placed[firstSplit], tpReps, rankKey, rankTotal, boxY - 5);
      G.text(ctx, 'h = ' + F.int(m.hidden), x - 6, boxY + attnH / 2 + 4, { font: G.font(10), color: P.ink.faint, align: 'right' });
      cy = boxY + attnH + 34;
    };
    block(mats, 'Attention', 'heads', m.heads, m.kv_lora_rank > 0 ? 1 : 0);
    if (mlp.length) block(mlp, m.gated_mlp ? 'MLP (SwiGLU)' : 'MLP', 'ffn', m.ffn_hidden, 0);

    if (moe) cy = drawExperts(ctx, d, x, cy + 4, W, hits);
    return cy;
  }

  // Experts of an MoE layer: whole experts coloured by EP rank; ETP slices inside.
  function drawExperts(ctx, d, x, y, W, hits) {
    const r = d.r, m = r.config.model, plan = r.config.plan, reps = d.reps;
    const E = m.experts, EP = plan.ep, ETP = r.mesh.etp, folding = plan.etp > 0;
    const epReps = reps.ep, etpReps = reps.etp;
    const sliceHue = folding ? P.axis.etp : P.axis.tp;
    let head = 'Experts: ' + E + ' routed, top-' + m.top_k;
    let sub;
    if (EP > 1 && epReps.length === EP) {
      const e0 = epReps[0].experts, e1 = epReps[1].experts;
      sub = 'EP = ' + EP + ': whole experts, EP rank 0 holds ' + F.span(e0[0], e0[1]) + ', rank 1 holds ' + F.span(e1[0], e1[1]) + (EP > 2 ? ', …' : '');
    } else {
      sub = 'EP = 1: every GPU of the stage has every expert';
    }
    if (ETP > 1) sub += ' · ' + (folding ? 'ETP' : 'TP') + ' = ' + ETP + ' slices inside each expert';
    y += 24 + section(ctx, x, y + 10, head, sub, W);
    // router and shared experts at the left, experts grid on the right
    const sideW = 70;
    const gridX = x + sideW + 12, gridW = W - sideW - 12;
    const cols = Math.min(E, E <= 16 ? E : 32);
    const rows = Math.ceil(E / cols);
    const cellGap = E > 32 ? 2 : 5;
    const cellW = (gridW - cellGap * (cols - 1)) / cols;
    const cellH = rows === 1 ? 46 : Math.max(11, Math.min(22, 120 / rows));
    // router: replicated on every GPU
    const rh = 22;
    G.rect(ctx, x, y, sideW, rh, P.tone(P.axis.ep, 0.08), 'rgba(31,35,40,0.25)');
    G.hatch(ctx, x + 1, y + 1, sideW - 2, rh - 2, P.alpha(P.axis.ep, 0.35), 5);
    G.text(ctx, 'router', x + sideW / 2, y + 15, { font: G.font(11, 600), align: 'center' });
    hits.add(x, y, sideW, rh, { kind: 'replicated', matrix: 'router' });
    G.text(ctx, 'on every GPU', x + sideW / 2, y + rh + 12, { font: G.font(10), color: P.ink.muted, align: 'center' });
    if (m.shared_experts > 0) {
      const sy = y + rh + 22;
      G.rect(ctx, x, sy, sideW, rh, P.tone(P.axis.tp, 0.2), 'rgba(31,35,40,0.25)');
      G.text(ctx, 'shared ×' + m.shared_experts, x + sideW / 2, sy + 15, { font: G.font(11, 600), align: 'center', maxW: sideW - 4 });
      hits.add(x, sy, sideW, rh, { kind: 'shared', n: m.shared_experts });
    }
    // owner of expert e: the EP rank whose range contains it
    const owner = (e) => epReps.find((g) => g.experts[0] <= e && e < g.experts[1]);
    for (let e = 0; e < E; e++) {
      const cx = gridX + (e % cols) * (cellW + cellGap), cy = y + Math.floor(e / cols) * (cellH + cellGap);
      const g = owner(e);
      const epFill = g ? P.rank(P.axis.ep, g.ep, EP) : P.tone(P.axis.ep, 0.3);
      if (ETP > 1 && etpReps.length === ETP) {
        const band = Math.min(5, cellH / 4);
        G.rect(ctx, cx, cy, cellW, band, epFill);
        for (const s of etpReps) {
          const a = cx + (s.expert_ffn[0] / m.expert_ffn_hidden) * cellW, b = cx + (s.expert_ffn[1] / m.expert_ffn_hidden) * cellW;
          G.rect(ctx, a, cy + band, b - a, cellH - band, P.rank(sliceHue, folding ? s.etp : s.tp, ETP));
          if (a > cx) G.rect(ctx, a, cy + band, 1, cellH - band, '#fff');
        }
      } else {
        G.rect(ctx, cx, cy, cellW, cellH, epFill);
      }
      G.rect(ctx, cx, cy, cellW, cellH, null, 'rgba(31,35,40,0.3)');
      if (cellW >= 22 && cellH >= 14) {
        const fill = ETP > 1 ? '#fff' : P.onFill(epFill);
        const lbl = 'E' + e;
        ctx.font = G.font(cellH >= 30 ? 11 : 9.5, 600);
        if (ctx.measureText(lbl).width < cellW - 4) {
          if (ETP > 1) { G.rect(ctx, cx + cellW / 2 - ctx.measureText(lbl).width / 2 - 3, cy + cellH / 2 - 6, ctx.measureText(lbl).width + 6, 13, 'rgba(255,255,255,0.85)'); }
          G.text(ctx, lbl, cx + cellW / 2, cy + cellH / 2 + 4, { font: ctx.font, color: ETP > 1 ? P.ink.text : fill, align: 'center' });
        }
      }
      hits.add(cx, cy, cellW, cellH, { kind: 'expert', e, g });
    }
    let by = y + rows * (cellH + cellGap) + 2;
    // EP brackets with the owning rank when there is room (one row of experts)
    if (EP > 1 && epReps.length === EP && rows === 1) {
      for (const g of epReps) {
        const a = gridX + g.experts[0] * (cellW + cellGap), b = gridX + (g.experts[1] - 1) * (cellW + cellGap) + cellW;
        ctx.strokeStyle = P.axis.ep; ctx.lineWidth = 1.2;
        ctx.beginPath(); ctx.moveTo(a + 1, by + 1); ctx.lineTo(a + 1, by + 5); ctx.lineTo(b - 1, by + 5); ctx.lineTo(b - 1, by + 1); ctx.stroke();
        G.text(ctx, 'EP ' + g.ep, (a + b) / 2, by + 18, { font: G.font(10.5, 600), color: P.axis.ep, align: 'center', maxW: b - a + 4 });
      }
      by += 22;
    }
    return Math.max(by, y + 80) + 6;
  }

  // ---- sequence (CP) -------------------------------------------------------------------------
  function drawSequence(ctx, d, x, y, W, hits) {
    const r = d.r, C = r.config.plan.cp, reps = d.reps.cp;
    const wl = r.config.workload;
    if (CL.tables.isInfer(r)) return drawRequest(ctx, d, x, y, W, hits);
    const s = wl.seq_len;
    const sub = C > 1 ? 'CP = ' + C + ': each GPU holds ' + (reps[0] ? reps[0].seq_chunks.length : 2) + ' chunks of every sequence, all layers (load-balanced causal split)'
      : 'CP = 1: every GPU sees whole sequences';
    const by = y + 10 + section(ctx, x, y, 'Sequence of ' + F.int(s) + ' tokens', sub, W), bh = 18;
    if (reps.length === C) {
      for (const g of reps) {
        for (const [a, b] of g.seq_chunks) {
          const x0 = x + (a / s) * W, x1 = x + (b / s) * W;
          const fill = P.rank(P.axis.cp, g.cp, C);
          G.rect(ctx, x0, by, x1 - x0, bh, fill);
          if (x0 > x) G.rect(ctx, x0, by, 1, bh, '#fff');
          if (x1 - x0 > 18 && C > 1) G.text(ctx, String(g.cp), (x0 + x1) / 2, by + 13, { font: G.font(10.5, 600), color: P.onFill(fill), align: 'center' });
          hits.add(x0, by, x1 - x0, bh, { kind: 'chunk', g, a, b });
        }
      }
    } else {
      G.rect(ctx, x, by, W, bh, P.tone(P.axis.cp, 0.3));
    }
    G.rect(ctx, x, by, W, bh, null, 'rgba(31,35,40,0.3)');
    G.text(ctx, '0', x, by + bh + 12, { font: G.font(10), color: P.ink.faint });
    G.text(ctx, F.int(s), x + W, by + bh + 12, { font: G.font(10), color: P.ink.faint, align: 'right' });
    if (C > 1) G.text(ctx, 'numbers = CP rank', x + W / 2, by + bh + 12, { font: G.font(10), color: P.ink.faint, align: 'center' });
    return by + bh + 18;
  }

  // Serving: a sequence is its prompt (prefilled at once) and the tokens decoded one by one.
  function drawRequest(ctx, d, x, y, W, hits) {
    const wl = d.r.config.workload, n = wl.prompt_len + wl.output_len;
    const by = y + 10 + section(ctx, x, y, 'Each sequence: ' + F.int(wl.prompt_len) + ' prompt + ' + F.int(wl.output_len) + ' output tokens',
      'whole on every GPU (CP is modelled for training)', W), bh = 18;
    const xp = x + (wl.prompt_len / n) * W;
    G.rect(ctx, x, by, xp - x, bh, P.tone(P.axis.cp, 0.3));
    G.rect(ctx, xp, by, x + W - xp, bh, P.tone(P.axis.cp, 0.7));
    G.textIfFits(ctx, 'prompt: prefill (TTFT)', x + (xp - x) / 2, by + 13, xp - x - 6, { font: G.font(10.5, 600), align: 'center' });
    G.textIfFits(ctx, 'decode (TPOT each)', xp + (x + W - xp) / 2, by + 13, x + W - xp - 6, { font: G.font(10.5, 600), color: '#fff', align: 'center' });
    G.rect(ctx, x, by, W, bh, null, 'rgba(31,35,40,0.3)');
    hits.add(x, by, W, bh, { kind: 'request' });
    G.text(ctx, '0', x, by + bh + 12, { font: G.font(10), color: P.ink.faint });
    G.text(ctx, F.int(n), x + W, by + bh + 12, { font: G.font(10), color: P.ink.faint, align: 'right' });
    return by + bh + 18;
  }

  // ---- batch (DP) ----------------------------------------------------------------------------
  function drawReplicas(ctx, d, x, y, W, hits) {
    const r = d.r, plan = r.config.plan, mesh = r.mesh, w = r.config.workload;
    const R = mesh.dp_attn;
    if (CL.tables.isInfer(r)) return drawServingReplicas(ctx, d, x, y, W, hits);
    const zero = plan.zero > 0 ? 'ZeRO-' + plan.zero : plan.distributed_optimizer ? 'distributed optimizer (ZeRO-1)' : 'no ZeRO';
    const grad = r.placement.groups.find((g) => g.axis === 'dp_grad');
    let sub = 'global batch ' + F.int(w.global_batch) + ' = micro-batch ' + plan.micro_batch + ' × ' + F.int(mesh.num_micro_batches) +
      ' micro-batches × ' + F.int(R) + ' replica' + (R > 1 ? 's' : '');
    const cy = y + 12 + section(ctx, x, y, 'Batch: DP = ' + F.int(plan.dp) + (plan.etp > 0 ? '' : plan.ep > 1 ? ' × EP ' + plan.ep + ' = ' + F.int(R) + ' copies of the dense weights' : ''), sub, W), ch = 26;
    const shown = Math.min(R, 6);
    const cw = 92;
    for (let k = shown - 1; k >= 0; k--) {
      const cx = x + k * 14, yy = cy + (shown - 1 - k) * 0;
      const off = k * 14;
      G.roundRect(ctx, x + off, cy, cw, ch, 4, k === 0 ? P.tone(P.axis.dp, 0.35) : P.tone(P.axis.dp, 0.12 + 0.05 * k), 'rgba(31,35,40,0.3)');
      void cx; void yy;
    }
    G.text(ctx, R > 1 ? F.int(R) + ' replicas' : 'one replica', x + 8, cy + 17, { font: G.font(11, 600), color: P.ink.text, maxW: cw - 12 });
    const tx = x + cw + (shown - 1) * 14 + 14;
    const lines = [];
    lines.push(R > 1 ? 'Each replica: everything above, on its own share of the batch.' : 'No data parallelism: one copy of the weights.');
    if (grad && grad.size > 1)
      lines.push('Gradients reduced over ' + F.int(grad.size) + ' GPUs per step · ' + zero +
        (plan.zero > 0 || plan.distributed_optimizer ? ' shards state over them' : ''));
    else lines.push(zero);
    G.text(ctx, lines[0], tx, cy + 10, { font: G.font(11.5), color: P.ink.text, maxW: x + W - tx });
    G.text(ctx, lines[1], tx, cy + 25, { font: G.font(11.5), color: P.ink.muted, maxW: x + W - tx });
    hits.add(x, cy, cw + (shown - 1) * 14, ch, { kind: 'replicas', R });
    return cy + ch + 6;
  }

  // Serving: DP divides the request stream; replicas never talk.
  function drawServingReplicas(ctx, d, x, y, W, hits) {
    const r = d.r, inf = r.inference, w = r.config.workload, R = inf.replicas;
    const cy = y + 12 + section(ctx, x, y, 'Requests: DP = ' + F.int(r.config.plan.dp) + (R !== r.config.plan.dp ? ' (' + F.int(R) + ' replicas)' : ''),
      'each replica serves its own batch of ' + F.int(w.batch) + ' sequence' + (w.batch > 1 ? 's' : ''), W), ch = 26;
    const shown = Math.min(R, 6), cw = 92;
    for (let k = shown - 1; k >= 0; k--) G.roundRect(ctx, x + k * 14, cy, cw, ch, 4, k === 0 ? P.tone(P.axis.dp, 0.35) : P.tone(P.axis.dp, 0.12 + 0.05 * k), 'rgba(31,35,40,0.3)');
    G.text(ctx, R > 1 ? F.int(R) + ' replicas' : 'one replica', x + 8, cy + 17, { font: G.font(11, 600), maxW: cw - 12 });
    const tx = x + cw + (shown - 1) * 14 + 14;
    G.text(ctx, R > 1 ? 'Full copies of the model; between replicas there is no model communication at all.' : 'One copy of the model serves every request.',
      tx, cy + 10, { font: G.font(11.5), maxW: x + W - tx });
    G.text(ctx, F.short(inf.tokens_per_s_per_replica) + ' tokens/s per replica × ' + F.int(R) + ' = ' + F.short(inf.tokens_per_s_total) + ' tokens/s',
      tx, cy + 25, { font: G.font(11.5), color: P.ink.muted, maxW: x + W - tx });
    hits.add(x, cy, cw + (shown - 1) * 14, ch, { kind: 'replicas', R });
    return cy + ch + 6;
  }

  function legendItems(d) {
    const r = d.r, plan = r.config.plan;
    const items = [
      { label: 'TP rank (slice)', color: P.axis.tp },
      { label: 'PP stage', color: P.axis.pp },
      { label: 'CP rank (tokens)', color: P.axis.cp },
    ];
    if (r.config.model.experts > 0) items.push({ label: 'EP rank (whole experts)', color: P.axis.ep });
    if (plan.etp > 0) items.push({ label: 'ETP rank', color: P.axis.etp });
    items.push({ label: 'DP replica', color: P.axis.dp });
    items.push({ label: 'replicated (every GPU holds it)', color: P.ink.muted, kind: 'hatch' });
    items.push({ label: 'darker = higher rank', color: P.tone(P.ink.muted, 0.9) });
    return items;
  }

  // Right-hand column (the opened layer, sequence, replicas); returns the y where it ends.
  function drawRight(ctx, d, rx, rw, ui, hits) {
    let y = drawLayer(ctx, d, rx, HEAD, rw, ui, hits);
    y = drawSequence(ctx, d, rx, y + 14, rw, hits);
    return drawReplicas(ctx, d, rx, y + 24, rw, hits);
  }

  let dry = null;
  function layout(d, width, ui) {
    DEPTH_W = width < 820 ? 168 : 218;
    if (!dry) dry = document.createElement('canvas').getContext('2d');
    const u = Object.assign({}, ui);
    if (u.layer == null || u.layer >= d.r.config.model.layers) u.layer = defaultLayer(d.r);
    const rx = PAD + DEPTH_W + 28;
    const end = drawRight(dry, d, rx, width - rx - PAD, u, G.hits());
    return Math.max(end + 18, 380) + G.legendHeight(legendItems(d), width - 2 * PAD) + 4;
  }

  function draw(ctx, d, vp, ui, hits) {
    const r = d.r;
    DEPTH_W = vp.w < 820 ? 168 : 218;
    const W = vp.w;
    ui = Object.assign({}, ui);
    if (ui.layer == null || ui.layer >= r.config.model.layers) ui.layer = defaultLayer(r);
    const legendH = G.legendHeight(legendItems(d), W - 2 * PAD);
    drawDepth(ctx, d, PAD, HEAD, vp.h - HEAD - legendH - 14, ui, hits);
    const rx = PAD + DEPTH_W + 28, rw = W - rx - PAD;
    drawRight(ctx, d, rx, rw, ui, hits);
    const ly = vp.h - legendH;
    G.rect(ctx, PAD, ly - 8, W - 2 * PAD, 1, P.ink.rule);
    G.legend(ctx, legendItems(d), PAD, ly, W - 2 * PAD);
  }

  // Hover text for a payload (HTML).
  function tip(d, p) {
    const r = d.r, plan = r.config.plan, m = r.config.model;
    const e = F.escape;
    switch (p.kind) {
      case 'layer': {
        const w = stageOf(r, p.layer);
        return '<b>' + F.layers(p.layer, p.layer) + '</b>' + (isMoeLayer(m, p.layer) ? ' (MoE)' : '') + '<br>stage ' + (w.stage + 1) +
          (w.st.chunks.length > 1 ? ', chunk ' + (w.chunk + 1) + ' of ' + w.st.chunks.length : '') + '<br><i>click to open it</i>';
      }
      case 'stage': {
        const st = r.placement.stages[p.stage], mem = r.memory.per_stage[p.stage];
        return '<b>Stage ' + (p.stage + 1) + '</b>: ' + st.chunks.map((c) => F.layers(c[0], c[1])).join(', ') +
          (st.embedding ? ' + embedding' : '') + (st.output ? ' + output layer' : '') +
          '<br>' + st.layers + ' layers' + (st.moe_layers ? ' (' + st.moe_layers + ' MoE)' : '') +
          (mem ? '<br>' + F.gib(mem.total_bytes, 2) + ' GiB per GPU' : '');
      }
      case 'io':
        return '<b>' + (p.what === 'embedding' ? 'Input embedding' : 'Output layer and loss') + '</b> on stage ' + (p.stage + 1) +
          '<br>' + F.short(p.what === 'embedding' ? r.params.embedding : r.params.output) + ' parameters' + (plan.tp > 1 ? ', split over TP' : '');
      case 'slice': {
        const g = p.g;
        let s = '<b>' + e(p.matrix) + ', TP rank ' + g.tp + '</b>';
        if (p.head !== undefined) s += '<br>KV head ' + p.head + (p.replicas > 1 ? ', replicated on ' + p.replicas + ' TP ranks' : '');
        s += '<br>heads ' + F.span(g.heads[0], g.heads[1]) + ' · KV heads ' + F.span(g.kv_heads[0], g.kv_heads[1]);
        if (m.ffn_hidden > 0) s += '<br>FFN columns ' + F.span(g.ffn[0], g.ffn[1]);
        s += '<br>held by GPU ' + g.rank + ' and every GPU with TP coordinate ' + g.tp;
        return s;
      }
      case 'replicated':
        return '<b>' + e(p.matrix) + '</b>: not split; every GPU of the stage holds a copy';
      case 'shared':
        return '<b>' + p.n + ' shared expert' + (p.n > 1 ? 's' : '') + '</b>: every token uses ' + (p.n > 1 ? 'them' : 'it') + '; on every EP rank';
      case 'expert': {
        const g = p.g;
        if (!g) return 'expert ' + p.e;
        return '<b>Expert ' + p.e + '</b> on EP rank ' + g.ep + ' (holds experts ' + F.span(g.experts[0], g.experts[1]) + ')' +
          '<br>e.g. GPU ' + g.rank + (r.mesh.etp > 1 ? '<br>split into ' + r.mesh.etp + ' expert-TP slices' : '<br>never split');
      }
      case 'chunk':
        return '<b>CP rank ' + p.g.cp + '</b>: tokens ' + F.int(p.a) + '–' + F.int(p.b - 1) +
          '<br>holds ' + p.g.seq_chunks.map((c) => F.int(c[0]) + '–' + F.int(c[1] - 1)).join(' and ') + ' of every sequence';
      case 'replicas':
        return '<b>' + F.int(p.R) + ' data-parallel replica' + (p.R > 1 ? 's' : '') + '</b> of the dense weights';
      default:
        return '';
    }
  }

  function caption(d) {
    const r = d.r, plan = r.config.plan;
    return '<b>Four cut directions.</b> TP cuts within a layer, PP cuts between layers, EP cuts between experts, CP cuts the sequence, DP doesn’t cut the model at all. ' +
      '<span class="muted">Click a layer on the left to open it.</span>';
  }

  CL.views = CL.views || {};
  CL.views.cuts = { layout, draw, tip, caption, defaultLayer, stageOf };
})(window.CL = window.CL || {});
