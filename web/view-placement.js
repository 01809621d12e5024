// view-placement.js: where the weights land. Nodes are boxes of GPUs (8, or 72 for NVL72); each
// GPU shows what it holds (small clusters: every GPU's own answer from one core gpus() call;
// bigger ones: cells coloured by mesh coordinates from the core's strides, and gpu() on hover). NVLink inside a node and scale-out between nodes are drawn with a thickness
// that grows with the bytes each GPU moves per step (result.comm). Three levels of detail:
// every GPU labelled (≤ 64 GPUs), every GPU as a coloured cell (≤ 1,024), and, above that, one
// row per pipeline stage with each distinct kind of node drawn once with its count.
(function (CL) {
  'use strict';
  const P = CL.palette, G = CL.gfx, F = CL.fmt;
  const PAD = 16;
  const scenes = new WeakMap();   // derived → {width → scene}

  // ---- data helpers ---------------------------------------------------------------------------
  const per = (r) => (CL.tables.isInfer(r) ? 'per GPU (prefill + a decode step)' : 'per GPU per step');
  function linkBytes(r) {
    const out = { nvlink: 0, scaleout: 0, byAxis: { nvlink: {}, scaleout: {} } };
    for (const c of r.comm) {
      out[c.link] += c.bytes;
      out.byAxis[c.link][c.axis] = (out.byAxis[c.link][c.axis] || 0) + c.bytes;
    }
    return out;
  }
  function thickness(bytes) {
    if (!(bytes > 0)) return 0;
    return Math.min(12, 1.5 + 2.2 * Math.log10(1 + bytes / 2 ** 26));
  }
  function axisList(by) {
    return Object.entries(by).sort((a, b) => b[1] - a[1]).map(([a, b]) => a.toUpperCase() + ' ' + F.bytes(b)).join(' · ');
  }
  function group(r, axis) { return r.placement.groups.find((g) => g.axis === axis); }

  // "ZeRO-3 · 1/64 shard" when model states are sharded over the data-parallel group (training).
  function zeroGroup(r) {
    const plan = r.config.plan;
    if (CL.tables.isInfer(r) || !(plan.zero > 0 || plan.distributed_optimizer)) return '';
    const g = group(r, 'dp_grad');
    if (!g || g.size <= 1) return '';
    return (plan.zero > 0 ? 'ZeRO-' + plan.zero : 'dist. optimizer') + ' · 1/' + F.int(g.size) + ' shard';
  }

  // What GPU `c` holds: `c` is the core's own answer for that GPU (gpus()).
  function holds(d, c) {
    const r = d.r;
    return { st: r.placement.stages[c.pp], tpRep: c, cpRep: c, epRep: c, etpRep: c, mem: r.memory.per_stage[c.pp] };
  }

  // The axis that varies between the GPUs of one node (drives the cell colours when zoomed out).
  function innerAxis(d) {
    const plan = d.r.config.plan, s = d.mesh.strides, Gn = d.mesh.gpusPerNode;
    const cands = [['tp', plan.tp], ['cp', plan.cp], ['ep', plan.etp > 0 ? 1 : plan.ep], ['dp', plan.dp], ['pp', plan.pp]]
      .filter(([a, n]) => n > 1 && s[a] < Gn).sort((a, b) => s[a[0]] - s[b[0]]);
    if (plan.etp > 0 && plan.ep > 1 && !cands.length) return 'ep';
    return cands.length ? cands[0][0] : 'pp';
  }
  // The axis that varies from node to node inside a stage (CP or EP groups spread over nodes).
  function nodeAxis(d) {
    const plan = d.r.config.plan, s = d.mesh.strides, Gn = d.mesh.gpusPerNode;
    const c = [['cp', plan.cp], ['ep', plan.etp > 0 ? 1 : plan.ep]].filter(([a, n]) => n > 1 && s[a] * n > Gn).sort((a, b) => s[a[0]] - s[b[0]]);
    if (plan.etp > 0 && plan.ep > 1 && d.mesh.etp * plan.ep > Gn) return 'ep';
    return c.length ? c[0][0] : null;
  }
  function cellFill(d, c, axis) {
    const plan = d.r.config.plan;
    const n = axis === 'ep' ? plan.ep : plan[axis];
    return P.rank(P.axis[axis], c[axis], n);
  }

  // ---- scene ---------------------------------------------------------------------------------
  function scene(d, width) {
    let byW = scenes.get(d);
    if (!byW) { byW = new Map(); scenes.set(d, byW); }
    if (byW.has(width)) return byW.get(width);
    const band = CL.tables.isInfer(d.r) ? BAND : 0;   // serving: the load balancer above the nodes
    const s = d.mesh.gpus <= 64 ? sceneFull(d, width, band) : d.mesh.gpus <= 1024 ? sceneCells(d, width, band) : sceneStages(d, width, band);
    if (band) s.balancer = balancerScene(d, s, width);
    byW.set(width, s);
    return s;
  }

  function sceneFull(d, W, band) {
    const top = 58 + band;
    const mesh = d.mesh, Gn = mesh.gpusPerNode, N = mesh.nodes;
    const all = d.gpuRange(0, mesh.gpus);   // ≤ 64 GPUs: one gpus() call, every GPU's own answer
    const innerW = W - 2 * PAD;
    // nodes side by side when there are two or more and at least 4 GPU columns fit each
    const nodeCols = N === 1 ? 1 : N <= 2 ? 2 : N <= 4 ? 2 : 2;
    const perNodeGpus = Math.min(Gn, mesh.gpus);
    const nodeW = (innerW - (nodeCols - 1) * 28) / nodeCols;
    let gcols = Math.min(perNodeGpus, 8);
    while (gcols > 1 && (nodeW - 20) / gcols < 96) gcols = Math.ceil(gcols / 2);
    const grows = Math.ceil(perNodeGpus / gcols);
    const cellW = (nodeW - 20 - (gcols - 1) * 8) / gcols;
    const cellH = 21 + 15 + 13 * (4 + (d.r.config.model.ffn_hidden ? 1 : 0) + (d.r.config.model.experts > 0 ? 1 : 0) + (d.r.config.plan.cp > 1 ? 1 : 0) +
      (zeroGroup(d.r) ? 1 : 0)) + 20;
    const nodeH = 30 + grows * cellH + (grows - 1) * 8 + 44;
    const nodes = [];
    for (let n = 0; n < N; n++) {
      const col = n % nodeCols, row = Math.floor(n / nodeCols);
      const x = PAD + col * (nodeW + 28), y = top + row * (nodeH + 28);
      const gpus = [];
      for (let k = 0; k < Gn; k++) {
        const rank = n * Gn + k;
        if (rank >= mesh.gpus) break;
        gpus.push({ rank, x: x + 10 + (k % gcols) * (cellW + 8), y: y + 30 + Math.floor(k / gcols) * (cellH + 8), w: cellW, h: cellH, c: all[rank] || mesh.coords(rank) });
      }
      nodes.push({ n, x, y, w: nodeW, h: nodeH, gpus });
    }
    const rows = Math.ceil(N / nodeCols);
    return { lod: 'full', nodes, nodeCols, height: top + rows * nodeH + (rows - 1) * 28 + (N > 1 ? (rows > 1 ? 44 : 52) : 6) };
  }

  function sceneCells(d, W, band) {
    const top = 58 + band;
    const mesh = d.mesh, Gn = mesh.gpusPerNode, N = mesh.nodes;
    const innerW = W - 2 * PAD;
    const gcols = Gn <= 8 ? Gn : Math.ceil(Math.sqrt(Gn * 2));
    const grows = Math.ceil(Math.min(Gn, mesh.gpus) / gcols);
    let cell = 16;
    let nodeW, perRow;
    for (;;) {
      nodeW = gcols * cell + (gcols - 1) * 2 + 12;
      perRow = Math.max(1, Math.floor((innerW + 12) / (nodeW + 12)));
      if (Math.ceil(N / perRow) * (grows * (cell + 2) + 34) < 520 || cell <= 7) break;
      cell -= 1;
    }
    const nodeH = grows * (cell + 2) + 30;
    const nodes = [];
    for (let n = 0; n < N; n++) {
      const x = PAD + (n % perRow) * (nodeW + 12), y = top + Math.floor(n / perRow) * (nodeH + 12);
      const gpus = [];
      for (let k = 0; k < Gn; k++) {
        const rank = n * Gn + k;
        if (rank >= mesh.gpus) break;
        gpus.push({ rank, x: x + 6 + (k % gcols) * (cell + 2), y: y + 22 + Math.floor(k / gcols) * (cell + 2), w: cell, h: cell, c: mesh.coords(rank) });
      }
      nodes.push({ n, x, y, w: nodeW, h: nodeH, gpus, stages: mesh.nodeStages(n) });
    }
    const rows = Math.ceil(N / perRow);
    return { lod: 'cells', nodes, cell, height: top + rows * (nodeH + 12) + 40 };
  }

  // One row per stage; in each, every distinct kind of node once, with how many nodes are like it.
  function sceneStages(d, W, band) {
    const mesh = d.mesh, Gn = mesh.gpusPerNode, N = mesh.nodes, plan = d.r.config.plan;
    const single = mesh.strides.pp >= Gn && (mesh.strides.pp % Gn === 0);
    const rowsByStage = new Map();
    // a node's kind: the TP, CP, EP, ETP coordinates of its GPUs (what they hold inside a stage)
    const sig = (n) => {
      let s = '';
      for (let k = 0, r = n * Gn; k < Gn && r < mesh.gpus; k++, r++) {
        const c = mesh.coords(r);
        s += c.tp + ',' + c.cp + ',' + c.ep + ',' + c.etp + ';';
      }
      return s;
    };
    // The coordinate of rank r on an axis depends only on r mod (stride × size), so a node's kind
    // depends only on its first rank mod the largest such period: one signature per residue.
    const period = Math.max(mesh.strides.tp * mesh.sizes.tp, mesh.strides.cp * mesh.sizes.cp, mesh.strides.ep * mesh.sizes.ep,
      mesh.folding ? mesh.gpus / plan.pp : 1);
    const cache = new Map();
    for (let n = 0; n < N; n++) {
      const c0 = mesh.coords(n * Gn);
      const stage = single ? c0.pp : -1;
      if (!rowsByStage.has(stage)) rowsByStage.set(stage, { stage, kinds: new Map(), nodes: 0 });
      const row = rowsByStage.get(stage);
      row.nodes++;
      const k0 = (n * Gn) % period;
      let key = cache.get(k0);
      if (key === undefined) { key = sig(n); cache.set(k0, key); }
      const k = row.kinds.get(key);
      if (k) k.count++; else row.kinds.set(key, { first: n, count: 1 });
    }
    const rows = Array.from(rowsByStage.values()).sort((a, b) => a.stage - b.stage);
    const labelW = 176, countW = 340;
    const x0 = PAD + labelW + 34;
    const avail = W - PAD - countW - x0;
    const maxKinds = Math.max(...rows.map((r) => r.kinds.size));
    const gcols = Gn <= 8 ? Gn : 18;
    const grows = Math.ceil(Gn / gcols);
    const withCount = maxKinds <= 3;
    const extra = withCount ? 52 : 6;
    let boxW = Math.min(Gn <= 8 ? 184 : 220, (avail + 6) / maxKinds - extra);
    let shownKinds = maxKinds;
    if (boxW < 36) { boxW = 36; shownKinds = Math.max(1, Math.floor((avail - 90) / (boxW + extra))); }
    const cell = Math.max(2, (boxW - 6 - (gcols - 1)) / gcols);
    const rowH = Math.max(18, Math.min(34, 540 / rows.length));
    const boxH = Math.max(10, rowH - 10);
    const top = 66 + (band ? band + 8 : 0);
    for (const [i, row] of rows.entries()) {
      row.y = top + i * rowH;
      row.kindsList = Array.from(row.kinds.values()).slice(0, shownKinds).map((k, j) => ({
        x: x0 + j * (boxW + extra), y: row.y + (rowH - boxH) / 2, w: boxW, h: boxH, first: k.first, count: k.count,
      }));
      row.hidden = row.kinds.size - row.kindsList.length;
      const counts = Array.from(row.kinds.values()).map((k) => k.count);
      row.sameCount = counts.every((c) => c === counts[0]) ? counts[0] : 0;
    }
    return { lod: 'stages', rows, rowH, boxW, boxH, cell, gcols, grows, labelW, x0, withCount, top, height: top + rows.length * rowH + 54 };
  }

  // ---- serving: the load balancer in front of the replicas ------------------------------------
  // Requests come in at a load balancer that spreads them over the data-parallel replicas (each a
  // whole copy of the model on TP × CP × PP GPUs, serving its own batch). Drawn in a band above the
  // nodes: one arrow per replica, landing on the replica's first-stage GPUs when they all sit side
  // by side in the top row ('aligned'), else on a row of replica boxes ('row'); too many for that
  // (and always in the aggregated view of thousands of GPUs): one box stacked with "× N replicas"
  // ('stack'). Every number is the core's (result.inference); the page only formats it.
  const BAND = 80;                  // height the band adds above the nodes
  const LB = { y: 48, w: 150, h: 32 };
  const PILL_Y = 98, PILL_H = 28, PILL_MIN = 76, ROW_MIN = 46, PILL_MAX = 230;

  // The replica a GPU serves: the core's answer (gpus()) when the view has it, else from the mesh
  // coordinates as the core numbers replicas (placement.cpp: dp·ep + ep; dp under MoE folding).
  function replicaOf(d, c) {
    if (c.replica !== undefined) return c.replica;
    return d.mesh.folding ? c.dp : c.dp * d.r.config.plan.ep + c.ep;
  }
  // Does a collective of `axis` run between replicas? (the group of rank 0 spans two replicas)
  function crossesReplicas(d, axis) {
    if (axis === 'tp' || axis === 'cp' || axis === 'pp') return false;
    if ((axis === 'ep' || axis === 'etp') && !(axis === 'etp' && !d.mesh.folding)) {
      const n = axis === 'ep' ? d.r.config.plan.ep : d.mesh.etp;
      const r0 = replicaOf(d, d.mesh.coords(0));
      for (let i = 1; i < n; i++) if (replicaOf(d, d.mesh.coords(d.mesh.rankWith(axis, i))) !== r0) return true;
      return false;
    }
    return axis !== 'etp';
  }
  // What crosses between replicas (MoE: the experts' all-to-all), by axis; usually nothing.
  function crossTraffic(d) {
    const out = { by: {}, bytes: 0, link: 'nvlink' };
    for (const c of d.r.comm) {
      if (!(c.bytes > 0) || !crossesReplicas(d, c.axis)) continue;
      out.by[c.axis] = (out.by[c.axis] || 0) + c.bytes;
      out.bytes += c.bytes;
      if (c.link === 'scaleout') out.link = 'scaleout';
    }
    return out;
  }
  // "TP 8 × PP 2": the GPUs of one replica, as the plan's axes
  function replicaShape(r) {
    const p = r.config.plan;
    const a = [['TP', p.tp], ['CP', p.cp], ['PP', p.pp]].filter(([, n]) => n > 1).map(([k, n]) => k + ' ' + n);
    return a.length ? a.join(' × ') : 'one GPU';
  }
  const firstFit = (font, cands, w) => cands.find((c) => G.measure(font, c) <= w) || cands[cands.length - 1];

  function balancerScene(d, sc, W) {
    const r = d.r, inf = r.inference, R = inf.replicas, batch = r.config.workload.batch;
    const per1 = inf.tokens_per_s_per_replica;
    const b = { R, perReplica: per1, total: inf.tokens_per_s_total, batch, tpot: inf.tpot_s, mode: 'stack', items: [],
      lb: { x: PAD, y: LB.y, w: LB.w, h: LB.h }, busY: LB.y + LB.h + 10, pillY: PILL_Y, pillH: PILL_H };
    b.trunkX = b.lb.x + b.lb.w / 2;
    const { by: cross, bytes: crossBytes, link: crossLink } = crossTraffic(d);
    b.crossBytes = crossBytes;
    const tx = b.lb.x + b.lb.w + 14, tw = W - PAD - tx;
    b.textX = tx;
    b.totalText = firstFit(G.font(12.5, 700), R > 1 ? [F.int(R) + ' replicas × ' + F.int(per1) + ' tok/s = ' + F.int(inf.tokens_per_s_total) + ' tok/s' +
      (crossBytes > 0 ? '' : '; no traffic between replicas'), F.int(R) + ' replicas × ' + F.int(per1) + ' tok/s = ' + F.int(inf.tokens_per_s_total) + ' tok/s']
      : ['one replica: ' + F.int(per1) + ' tok/s'], tw);
    const each = (R > 1 ? 'each: ' : '') + replicaShape(r) + ' · ' + F.int(batch) + ' sequence' + (batch > 1 ? 's' : '') + ' · TPOT ' + F.seconds(inf.tpot_s);
    const links = crossBytes > 0 ? ['replicas exchange tokens: ' + axisList(cross) + ' ' + per(r), 'replicas exchange tokens: ' + axisList(cross)]
      : R > 1 && !/no traffic/.test(b.totalText) ? ['no traffic between replicas'] : [];
    b.detailText = firstFit(G.font(11.5), links.length ? links.map((l) => l + ' · ' + each).concat(links) : [each], tw);
    b.detailColor = crossBytes > 0 ? P.link[crossLink] : P.ink.muted;
    const sub = (w) => firstFit(G.font(10.5), [F.int(per1) + ' tok/s · ' + F.int(batch) + ' seq', F.int(per1) + ' tok/s', F.compact(per1) + ' tok/s', F.compact(per1)], w - 10);
    const name = (k, w) => firstFit(G.font(11, 700), ['replica ' + k, 'r' + k], w - 10);

    // aligned: every replica's first-stage GPUs side by side in the top row, none overlapping
    if (sc.lod !== 'stages' && R <= 64) {
      const rg = new Map();
      for (const nd of sc.nodes) for (const g of nd.gpus) {
        if (g.c.pp !== 0) continue;
        const k = replicaOf(d, g.c), cur = rg.get(k);
        if (!cur || g.y < cur.y) rg.set(k, { k, y: g.y, x0: g.x, x1: g.x + g.w, top: nd.y });
        else if (g.y === cur.y) { cur.x0 = Math.min(cur.x0, g.x); cur.x1 = Math.max(cur.x1, g.x + g.w); }
      }
      const list = Array.from(rg.values()).sort((a, c) => a.x0 - c.x0);
      const y0 = Math.min(...list.map((t) => t.y));
      const ok = list.length === R && list.every((t, i) => t.y === y0 && t.x1 - t.x0 >= PILL_MIN && (i === 0 || list[i - 1].x1 < t.x0));
      if (ok) {
        b.mode = 'aligned';
        for (const t of list) {
          const w = Math.min(PILL_MAX, t.x1 - t.x0), cx = (t.x0 + t.x1) / 2;
          b.items.push({ replica: t.k, x: cx - w / 2, y: PILL_Y, w, h: PILL_H, cx, toY: t.top, label: name(t.k, w), sub: sub(w) });
        }
      }
    }
    // a row of replica boxes, when they fit
    if (b.mode === 'stack' && sc.lod !== 'stages') {
      const w = Math.min(PILL_MAX, (W - 2 * PAD - (R - 1) * 8) / R);
      if (w >= ROW_MIN) {
        b.mode = 'row';
        for (let k = 0; k < R; k++) {
          const x = PAD + k * (w + 8);
          b.items.push({ replica: k, x, y: PILL_Y, w, h: PILL_H, cx: x + w / 2, toY: null, label: name(k, w), sub: sub(w) });
        }
      }
    }
    // one replica box, stacked, with the count
    if (b.mode === 'stack') {
      const w = 176, shown = Math.min(R, 3);
      b.stack = { x: b.trunkX - 20, y: PILL_Y, w, h: PILL_H, shown, off: 12 };
      b.stack.label = firstFit(G.font(11, 700), ['each replica · ' + replicaShape(r), 'each replica'], w - 10);
      b.stack.sub = sub(w);
      b.stack.count = '× ' + F.int(R) + ' replica' + (R > 1 ? 's' : '');
      b.stack.countX = b.stack.x + w + (shown - 1) * b.stack.off + 10;
      // a bundle of arrows (one per box shown), not one per replica
      for (let k = 0; k < shown; k++) b.items.push({ replica: null, cx: b.stack.x + 26 + k * (b.stack.off + 10), y: PILL_Y });
    }
    return b;
  }

  function arrowHead(ctx, x, y, color) {
    ctx.fillStyle = color;
    ctx.beginPath(); ctx.moveTo(x, y); ctx.lineTo(x - 4, y - 6); ctx.lineTo(x + 4, y - 6); ctx.closePath(); ctx.fill();
  }

  function drawBalancer(ctx, d, b, ui, hits, W) {
    const dp = P.axis.dp, hov = ui.hover;
    const lb = b.lb;
    // the load balancer, requests coming in
    G.roundRect(ctx, lb.x, lb.y, lb.w, lb.h, 6, hov && hov.kind === 'balancer' ? P.alpha(dp, 0.12) : '#fff', dp, 1.5);
    G.text(ctx, 'load balancer', lb.x + lb.w / 2, lb.y + 14, { font: G.font(12, 700), color: P.ink.text, align: 'center', maxW: lb.w - 10 });
    G.text(ctx, 'requests in', lb.x + lb.w / 2, lb.y + 27,
      { font: G.font(10.5), color: P.ink.muted, align: 'center', maxW: lb.w - 10 });
    hits.add(lb.x, lb.y, lb.w, lb.h, { kind: 'balancer', key: 'balancer' });
    G.text(ctx, b.totalText, b.textX, lb.y + 13, { font: G.font(12.5, 700), color: dp, maxW: W - PAD - b.textX });
    G.text(ctx, b.detailText, b.textX, lb.y + 29, { font: G.font(11.5), color: b.detailColor, maxW: W - PAD - b.textX });
    // trunk and bus
    ctx.strokeStyle = dp; ctx.lineWidth = 1.5;
    const xs = b.items.map((it) => it.cx);
    ctx.beginPath(); ctx.moveTo(b.trunkX, lb.y + lb.h); ctx.lineTo(b.trunkX, b.busY);
    ctx.moveTo(Math.min(b.trunkX, ...xs), b.busY); ctx.lineTo(Math.max(b.trunkX, ...xs), b.busY); ctx.stroke();
    for (const it of b.items) {
      ctx.strokeStyle = dp; ctx.lineWidth = 1.5;
      ctx.beginPath(); ctx.moveTo(it.cx, b.busY); ctx.lineTo(it.cx, it.y - 1); ctx.stroke();
      arrowHead(ctx, it.cx, it.y, dp);
    }
    if (b.mode === 'stack') {
      const s = b.stack;
      for (let k = s.shown - 1; k >= 0; k--) {   // opaque cards, the front one lightest
        G.roundRect(ctx, s.x + k * s.off, s.y, s.w, s.h, 5, '#fff');
        G.roundRect(ctx, s.x + k * s.off, s.y, s.w, s.h, 5, P.alpha(dp, k === 0 ? (hov && hov.kind === 'replicas' ? 0.14 : 0.06) : 0.1 + 0.06 * k), dp, 1);
      }
      G.text(ctx, s.label, s.x + 6, s.y + 12, { font: G.font(11, 700), color: dp, maxW: s.w - 10 });
      G.text(ctx, s.sub, s.x + 6, s.y + 24, { font: G.font(10.5), color: P.ink.text, maxW: s.w - 10 });
      G.text(ctx, s.count, s.countX, s.y + 18, { font: G.font(12.5, 700), color: dp, maxW: W - PAD - s.countX });
      ctx.font = G.font(12.5, 700);
      hits.add(s.x, s.y, s.countX - s.x + ctx.measureText(s.count).width, s.h, { kind: 'replicas', key: 'replicas' });
      return;
    }
    for (const it of b.items) {
      const on = hov && hov.kind === 'replica' && hov.replica === it.replica;
      G.roundRect(ctx, it.x, it.y, it.w, it.h, 5, on ? P.alpha(dp, 0.14) : P.alpha(dp, 0.06), dp, on ? 2 : 1);
      G.text(ctx, it.label, it.x + it.w / 2, it.y + 12, { font: G.font(11, 700), color: dp, align: 'center', maxW: it.w - 8 });
      G.text(ctx, it.sub, it.x + it.w / 2, it.y + 24, { font: G.font(10.5), color: P.ink.text, align: 'center', maxW: it.w - 8 });
      if (it.toY !== null) {   // on into the replica's first-stage GPUs
        ctx.strokeStyle = dp; ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.moveTo(it.cx, it.y + it.h); ctx.lineTo(it.cx, it.toY - 1); ctx.stroke();
        arrowHead(ctx, it.cx, it.toY, dp);
      }
      hits.add(it.x, it.y, it.w, it.h, { kind: 'replica', replica: it.replica, key: 'replica' + it.replica });
    }
  }
  // The GPUs of the replica whose box is hovered get a ring.
  const replicaHovered = (d, ui, c) => !!(ui.hover && ui.hover.kind === 'replica' && replicaOf(d, c) === ui.hover.replica);

  // ---- drawing -------------------------------------------------------------------------------

  function header(ctx, d, W) {
    const r = d.r, c = r.config.cluster, pl = r.placement;
    const tpG = group(r, 'tp');
    G.text(ctx, F.int(r.gpus) + ' × ' + c.gpu + ' in ' + F.int(pl.nodes) + ' node' + (pl.nodes > 1 ? 's' : '') + ' of ' + pl.gpus_per_node,
      PAD, 20, { font: G.font(13, 650) });
    const warn = tpG && tpG.size > 1 && tpG.nodes_spanned > 1;
    G.text(ctx, 'NVLink ' + F.int(c.nvlink_GBps) + ' GB/s per GPU inside a node · scale-out ' + F.int(c.scaleout_GBps) + ' GB/s per GPU between nodes · rank order ' +
      pl.rank_order, PAD, 38, { font: G.font(11.5), color: P.ink.muted, maxW: W - 2 * PAD });
    if (warn) {
      const msg = '⚠ each TP group spans ' + tpG.nodes_spanned + ' nodes: its collectives use scale-out';
      ctx.font = G.font(12, 700);
      const w = ctx.measureText(msg).width + 16;
      G.roundRect(ctx, W - PAD - w, 4, w, 20, 10, '#ffebe9', P.ink.warn);
      G.text(ctx, msg, W - PAD - w + 8, 18, { font: G.font(12, 700), color: P.ink.warn });
    }
  }

  function memBar(ctx, x, y, w, h, mem, r) {
    const cap = Math.max(mem.capacity_bytes, mem.total_bytes);
    let cx = x;
    G.rect(ctx, x, y, w, h, P.state.free);
    for (const [k, , c] of CL.tables.kindsOf(r)) {
      const ww = (mem[k] / cap) * w;
      G.rect(ctx, cx, y, ww, h, P.state[c]);
      cx += ww;
    }
    const capX = x + (mem.capacity_bytes / cap) * w;
    G.rect(ctx, capX - 1, y - 2, 2, h + 4, mem.fits ? P.ink.text : P.ink.warn);
  }

  function drawGpuFull(ctx, d, g, ui, hits) {
    const r = d.r, m = r.config.model, plan = r.config.plan;
    const h = holds(d, g.c);
    const sel = ui.gpu === g.rank, hov = ui.hover && ui.hover.rank === g.rank, rep = replicaHovered(d, ui, g.c);
    G.roundRect(ctx, g.x, g.y, g.w, g.h, 5, '#fff', sel ? P.ink.text : rep ? P.axis.dp : hov ? P.ink.muted : P.ink.rule, sel || rep ? 2 : 1);
    // stage stripe at the top
    const stFill = P.rank(P.axis.pp, g.c.pp, plan.pp);
    ctx.save(); ctx.beginPath(); ctx.rect(g.x, g.y, g.w, 5); ctx.clip();
    G.roundRect(ctx, g.x, g.y, g.w, 12, 5, stFill);
    ctx.restore();
    const x = g.x + 6, w = g.w - 12;
    let y = g.y + 20;
    G.text(ctx, 'GPU ' + g.rank, x, y, { font: G.font(12, 700), maxW: w - 34 });
    const tpG = group(r, 'tp');
    if (plan.tp > 1) G.text(ctx, 'TP ' + g.c.tp, g.x + g.w - 6, y, { font: G.font(10.5, 700), color: tpG && tpG.nodes_spanned > 1 ? P.ink.warn : P.axis.tp, align: 'right' });
    y += 15;
    const line = (s, color, bold) => { G.text(ctx, s, x, y, { font: G.font(10.5, bold ? 600 : 400), color: color || P.ink.text, maxW: w }); y += 13; };
    const tag = h.st.embedding && h.st.output ? '' : h.st.embedding ? ' +emb' : h.st.output ? ' +out' : '';
    line('stage ' + (g.c.pp + 1) + tag, P.axis.pp, true);
    line(h.st.chunks.map((c) => (c[0] === c[1] ? 'layer ' + (c[0] + 1) : (h.st.chunks.length > 1 ? '' : 'layers ') + (c[0] + 1) + '–' + (c[1] + 1))).join(', '), P.axis.pp);
    if (h.tpRep) line('heads ' + F.span(h.tpRep.heads[0], h.tpRep.heads[1]), P.axis.tp);
    if (h.tpRep && m.ffn_hidden) line('FFN ' + F.compact(h.tpRep.ffn[0]) + '–' + F.compact(h.tpRep.ffn[1] - 1), P.axis.tp);
    if (m.experts > 0 && h.epRep) line('experts ' + F.span(h.epRep.experts[0], h.epRep.experts[1]), P.axis.ep, true);
    if (plan.cp > 1 && h.cpRep) line('CP ' + g.c.cp + ' · ' + h.cpRep.seq_chunks.map((c) => F.tokens(c[0], c[1])).join(', '), P.axis.cp, true);
    line('DP replica ' + g.c.replica, P.axis.dp);
    const zg = zeroGroup(r);
    if (zg) {   // "ZeRO-3 · 1/64 shard", shortened to what the cell has room for
      const cands = [zg, zg.replace(' shard', ''), zg.replace(' shard', '').replace(' · ', ' ')];
      line(cands.find((c) => G.measure(G.font(10.5, 600), c) <= w) || cands[2], P.axis.dp, true);
    }
    // memory bar
    memBar(ctx, x, g.y + g.h - 14, w, 7, h.mem, r);
    G.text(ctx, F.gib(h.mem.total_bytes, 1) + ' GiB', g.x + g.w - 7, g.y + g.h - 19, { font: G.font(10, 600), color: h.mem.fits ? P.ink.muted : P.ink.warn, align: 'right' });
    hits.add(g.x, g.y, g.w, g.h, { kind: 'gpu', rank: g.rank, key: 'gpu' + g.rank });
  }

  function drawLinksFull(ctx, d, sc, W) {
    const r = d.r, lb = linkBytes(r), mesh = d.mesh;
    // NVLink bus inside each node
    const tv = thickness(lb.nvlink);
    for (const nd of sc.nodes) {
      const by = nd.y + nd.h - 22;
      if (tv > 0) {
        ctx.strokeStyle = P.link.nvlink; ctx.lineWidth = tv; ctx.lineCap = 'round';
        ctx.beginPath(); ctx.moveTo(nd.x + 16, by); ctx.lineTo(nd.x + nd.w - 16, by); ctx.stroke();
        for (const g of nd.gpus) {
          if (g.y + g.h > by - 20 && g.y + g.h < by) {
            ctx.lineWidth = Math.max(1, tv / 2);
            ctx.beginPath(); ctx.moveTo(g.x + g.w / 2, g.y + g.h); ctx.lineTo(g.x + g.w / 2, by); ctx.stroke();
          }
        }
        ctx.lineCap = 'butt';
      } else {
        ctx.strokeStyle = P.ink.rule; ctx.lineWidth = 1; ctx.setLineDash([4, 4]);
        ctx.beginPath(); ctx.moveTo(nd.x + 16, by); ctx.lineTo(nd.x + nd.w - 16, by); ctx.stroke(); ctx.setLineDash([]);
      }
      const label = lb.nvlink > 0 ? 'NVLink · ' + axisList(lb.byAxis.nvlink) + ' ' + per(r) : 'NVLink · idle';
      ctx.font = G.font(11, 600);
      const lw = Math.min(ctx.measureText(label).width + 12, nd.w - 40);
      G.rect(ctx, nd.x + nd.w / 2 - lw / 2, by + 6, lw, 15, '#fff');
      G.text(ctx, label, nd.x + nd.w / 2, by + 17, { font: G.font(11, 600), color: lb.nvlink > 0 ? P.link.nvlink : P.ink.faint, align: 'center', maxW: nd.w - 40 });
    }
    // scale-out: one node → nothing; one row of nodes → a spine below them; two columns of
    // nodes → a spine in the gutter between the columns, with a stub from each node.
    if (mesh.nodes > 1) {
      const ts = thickness(lb.scaleout);
      ctx.strokeStyle = ts > 0 ? P.link.scaleout : P.ink.rule;
      ctx.lineWidth = Math.max(ts, 1);
      if (ts <= 0) ctx.setLineDash([4, 4]);
      const last = sc.nodes[sc.nodes.length - 1];
      const bottom = Math.max(...sc.nodes.map((nd) => nd.y + nd.h));
      let labelY;
      if (sc.nodes.length <= sc.nodeCols) {
        const sy = bottom + 22;
        const xs = sc.nodes.map((nd) => nd.x + nd.w / 2);
        ctx.beginPath(); ctx.moveTo(Math.min(...xs), sy); ctx.lineTo(Math.max(...xs), sy); ctx.stroke();
        for (const nd of sc.nodes) { ctx.beginPath(); ctx.moveTo(nd.x + nd.w / 2, nd.y + nd.h); ctx.lineTo(nd.x + nd.w / 2, sy); ctx.stroke(); }
        labelY = sy + 18;
      } else {
        const gx = sc.nodes[0].x + sc.nodes[0].w + 14;
        const ys = sc.nodes.map((nd) => nd.y + nd.h / 2);
        ctx.beginPath(); ctx.moveTo(gx, Math.min(...ys)); ctx.lineTo(gx, bottom + 14); ctx.stroke();
        for (const nd of sc.nodes) {
          const left = nd.x > gx;
          ctx.beginPath(); ctx.moveTo(left ? nd.x : nd.x + nd.w, nd.y + nd.h / 2); ctx.lineTo(gx, nd.y + nd.h / 2); ctx.stroke();
        }
        labelY = bottom + 30;
        void last;
      }
      ctx.setLineDash([]);
      const label = lb.scaleout > 0 ? 'scale-out network · ' + axisList(lb.byAxis.scaleout) + ' ' + per(r) : 'scale-out network · no traffic';
      G.text(ctx, label, W / 2, labelY, { font: G.font(11.5, 600), color: lb.scaleout > 0 ? P.link.scaleout : P.ink.faint, align: 'center', maxW: W - 2 * PAD });
    }
  }

  function drawFull(ctx, d, sc, ui, hits, W) {
    const r = d.r;
    for (const nd of sc.nodes) {
      G.roundRect(ctx, nd.x, nd.y, nd.w, nd.h, 8, P.ink.panel, P.ink.rule);
      const stages = Array.from(new Set(nd.gpus.map((g) => g.c.pp)));
      G.text(ctx, 'node ' + nd.n, nd.x + 10, nd.y + 19, { font: G.font(12, 700) });
      G.text(ctx, stages.length === 1 ? 'stage ' + (stages[0] + 1) + ' · ' + F.layers(r.placement.stages[stages[0]].chunks[0][0],
        r.placement.stages[stages[0]].chunks[r.placement.stages[stages[0]].chunks.length - 1][1]) : 'stages ' + stages.map((s) => s + 1).join(', '),
      nd.x + 60, nd.y + 19, { font: G.font(11.5, 600), color: P.axis.pp, maxW: nd.w - 70 });
      for (const g of nd.gpus) drawGpuFull(ctx, d, g, ui, hits);
    }
    drawLinksFull(ctx, d, sc, W);
  }

  function drawCells(ctx, d, sc, ui, hits, W) {
    const r = d.r, plan = r.config.plan;
    const inner = innerAxis(d);
    for (const nd of sc.nodes) {
      G.roundRect(ctx, nd.x, nd.y, nd.w, nd.h, 5, P.ink.panel, P.ink.rule);
      const st = nd.stages.length === 1 ? 'stage ' + (nd.stages[0] + 1) : 'stages ' + nd.stages.map((s) => s + 1).join(',');
      const hw = G.text(ctx, 'n' + nd.n + ' · ' + st, nd.x + 6, nd.y + 15, { font: G.font(10.5, 600), color: P.axis.pp, maxW: nd.w - 10 });
      if (sc.balancer) {   // serving: the replica(s) the node's GPUs belong to
        const ks = nd.gpus.map((g) => replicaOf(d, g.c)), lo = Math.min(...ks), hi = Math.max(...ks);
        G.textIfFits(ctx, lo === hi ? 'r' + lo : 'r' + lo + '–' + hi, nd.x + nd.w - 6, nd.y + 15, nd.w - hw - 18, { font: G.font(10.5, 600), color: P.axis.dp, align: 'right' });
      }
      for (const g of nd.gpus) {
        const fill = cellFill(d, g.c, inner);
        G.rect(ctx, g.x, g.y, g.w, g.h, fill);
        if (ui.gpu === g.rank || (ui.hover && ui.hover.rank === g.rank)) G.rect(ctx, g.x - 1, g.y - 1, g.w + 2, g.h + 2, null, P.ink.text, 2);
        else if (replicaHovered(d, ui, g.c)) G.rect(ctx, g.x - 1, g.y - 1, g.w + 2, g.h + 2, null, P.axis.dp, 2);
        if (sc.cell >= 15) G.textIfFits(ctx, String(g.c[inner]), g.x + g.w / 2, g.y + g.h / 2 + 4, g.w - 2,
          { font: G.font(9.5, 600), color: P.onFill(fill), align: 'center' });
        hits.add(g.x, g.y, g.w, g.h, { kind: 'gpu', rank: g.rank, key: 'gpu' + g.rank });
      }
    }
    const last = sc.nodes[sc.nodes.length - 1];
    const lb = linkBytes(r);
    const y = last.y + last.h + 22;
    linkKey(ctx, lb, PAD, y, W, r);
    void plan;
  }

  // Two link lines with their thickness, as a key under zoomed-out views.
  function linkKey(ctx, lb, x, y, W, r) {
    const half = (W - 2 * PAD) / 2;
    const one = (tier, bytes, by, xx) => {
      const t = thickness(bytes);
      ctx.strokeStyle = t > 0 ? P.link[tier] : P.ink.rule; ctx.lineWidth = Math.max(1, t); ctx.lineCap = 'round';
      ctx.beginPath(); ctx.moveTo(xx, y); ctx.lineTo(xx + 44, y); ctx.stroke(); ctx.lineCap = 'butt';
      G.text(ctx, (tier === 'nvlink' ? 'NVLink inside nodes · ' : 'scale-out between nodes · ') + (bytes > 0 ? axisList(by) + ' ' + per(r) : 'no traffic'),
        xx + 54, y + 4, { font: G.font(11.5, 600), color: bytes > 0 ? P.link[tier] : P.ink.faint, maxW: half - 64 });
    };
    one('nvlink', lb.nvlink, lb.byAxis.nvlink, x);
    one('scaleout', lb.scaleout, lb.byAxis.scaleout, x + half);
  }

  function drawStages(ctx, d, sc, ui, hits, W) {
    const r = d.r, plan = r.config.plan, mesh = d.mesh, Gn = mesh.gpusPerNode;
    const inner = innerAxis(d);
    const outer = nodeAxis(d);
    const lb = linkBytes(r);
    const hy = sc.top - 8;
    G.text(ctx, 'PIPELINE STAGE', PAD, hy, { font: G.font(10, 700), color: P.ink.muted });
    G.text(ctx, 'KINDS OF NODE · ' + Gn + ' GPUs, colour = ' + inner.toUpperCase() + ' rank' + (outer ? ', band = ' + outer.toUpperCase() + ' rank' : ''), sc.x0, hy,
      { font: G.font(10, 700), color: P.ink.muted, maxW: W - PAD - 350 - sc.x0 });
    G.text(ctx, 'NODES', W - PAD, hy, { font: G.font(10, 700), color: P.ink.muted, align: 'right' });
    G.text(ctx, 'MEMORY PER GPU', W - PAD - 330, hy, { font: G.font(10, 700), color: P.ink.muted });
    // PP: activations hop from stage to stage across nodes
    const ppBytes = (lb.byAxis.scaleout.pp || 0) + (lb.byAxis.nvlink.pp || 0);
    const ppLink = lb.byAxis.scaleout.pp ? 'scaleout' : 'nvlink';
    const ax = PAD + sc.labelW + 14;
    sc.rows.forEach((row, i) => { if (i % 2 === 0) G.rect(ctx, PAD - 6, row.y, W - 2 * PAD + 12, sc.rowH, '#f8f9fa'); });
    if (sc.rows.length > 1 && ppBytes > 0) {
      ctx.strokeStyle = P.link[ppLink]; ctx.lineWidth = Math.max(1.5, thickness(ppBytes));
      ctx.beginPath(); ctx.moveTo(ax, sc.rows[0].y + sc.rowH / 2); ctx.lineTo(ax, sc.rows[sc.rows.length - 1].y + sc.rowH / 2); ctx.stroke();
    }
    sc.rows.forEach((row, i) => {
      const midY = row.y + sc.rowH / 2;
      const stInfo = row.stage >= 0 ? r.placement.stages[row.stage] : null;
      const stFill = row.stage >= 0 ? P.rank(P.axis.pp, row.stage, plan.pp) : P.ink.muted;
      G.rect(ctx, PAD, row.y + 2, 4, sc.rowH - 4, stFill);
      if (sc.rowH >= 15) {
        const lw = G.text(ctx, row.stage >= 0 ? 'stage ' + (row.stage + 1) : 'all nodes', PAD + 10, midY + 4, { font: G.font(11.5, 650), color: P.axis.pp });
        if (stInfo) G.text(ctx, stInfo.chunks.map((c) => (c[0] + 1) + '–' + (c[1] + 1)).join(', ') + (stInfo.embedding ? ' +emb' : '') + (stInfo.output ? ' +out' : ''),
          PAD + 16 + Math.max(lw, 52), midY + 4, { font: G.font(10.5), color: P.ink.muted, maxW: sc.labelW - Math.max(lw, 52) - 8 });
      }
      if (sc.rows.length > 1 && ppBytes > 0) {
        ctx.fillStyle = '#fff'; ctx.strokeStyle = P.link[ppLink]; ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.arc(ax, midY, 3.5, 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
      }
      for (const k of row.kindsList) {
        G.roundRect(ctx, k.x, k.y, k.w, k.h, 3, '#fff', P.ink.rule);
        const cell = sc.cell, ch = Math.max(2, (k.h - 5 - (sc.grows - 1)) / sc.grows);
        for (let j = 0; j < Gn; j++) {
          const rank = k.first * Gn + j;
          if (rank >= mesh.gpus) break;
          const c = mesh.coords(rank);
          const gx = k.x + 3 + (j % sc.gcols) * (cell + 1), gy = k.y + 2.5 + Math.floor(j / sc.gcols) * (ch + 1);
          G.rect(ctx, gx, gy, cell, ch, cellFill(d, c, inner));
        }
        if (outer) {
          const c0 = mesh.coords(k.first * Gn);
          G.rect(ctx, k.x + 1, k.y - 3, k.w - 2, 3, P.rank(P.axis[outer], c0[outer], outer === 'ep' ? plan.ep : plan[outer]));
        }
        if (ui.gpu != null && Math.floor(ui.gpu / Gn) === k.first) G.rect(ctx, k.x - 1, k.y - 1, k.w + 2, k.h + 2, null, P.ink.text, 2);
        if (ui.hover && ui.hover.node === k.first) G.rect(ctx, k.x - 1, k.y - 1, k.w + 2, k.h + 2, null, P.ink.muted, 1.5);
        if (sc.withCount) G.text(ctx, '× ' + F.int(k.count), k.x + k.w + 8, midY + 4, { font: G.font(11, 600), color: P.ink.muted });
        hits.add(k.x, k.y, k.w, k.h, { kind: 'node', node: k.first, rank: k.first * Gn, count: k.count, stage: row.stage, key: 'node' + k.first });
      }
      if (row.hidden > 0) {
        const lastK = row.kindsList[row.kindsList.length - 1];
        G.text(ctx, '+' + row.hidden + ' more', lastK.x + lastK.w + 8, midY + 4, { font: G.font(10.5), color: P.ink.muted });
      }
      if (row.stage >= 0) {
        const mem = r.memory.per_stage[row.stage];
        const mx = W - PAD - 330, mw = 110;
        memBar(ctx, mx, midY - 4, mw, 8, mem, r);
        G.text(ctx, F.gib(mem.total_bytes, 1) + ' GiB', mx + mw + 8, midY + 4, { font: G.font(11, 600), color: mem.fits ? P.ink.text : P.ink.warn });
      }
      const kinds = row.kinds.size;
      const nw = G.text(ctx, F.int(row.nodes), W - PAD, midY + 4, { font: G.font(11.5, 650), align: 'right' });
      if (kinds > 1 && row.sameCount) G.text(ctx, kinds + ' kinds × ' + F.int(row.sameCount) + ' =', W - PAD - nw - 5, midY + 4, { font: G.font(10.5), color: P.ink.muted, align: 'right' });
    });
    const lastRow = sc.rows[sc.rows.length - 1];
    const y = lastRow.y + sc.rowH + 20;
    linkKey(ctx, lb, PAD, y, W, r);
    const dpG = group(r, 'dp_grad');
    G.text(ctx, 'A node kind is drawn once with how many nodes are like it. ' +
      (CL.tables.isInfer(r) ? '' : dpG && dpG.size > 1 ? 'Dense gradients are reduced over ' + F.int(dpG.size) + ' GPUs holding the same weights (' + (dpG.nodes_spanned > 1 ? F.int(dpG.nodes_spanned) + ' nodes, scale-out' : 'one node, NVLink') + ').' : ''),
    PAD, y + 24, { font: G.font(11.5), color: P.ink.muted, maxW: W - 2 * PAD });
  }

  function legendItems(d, sc) {
    const items = [{ label: 'stage (PP)', color: P.axis.pp }];
    if (sc.lod !== 'full') {
      const inner = innerAxis(d);
      items.push({ label: inner.toUpperCase() + ' rank inside a node', color: P.axis[inner] });
      const outer = sc.lod === 'stages' ? nodeAxis(d) : null;
      if (outer) items.push({ label: outer.toUpperCase() + ' rank of the node (band)', color: P.axis[outer], kind: 'band2' });
    } else {
      items.push({ label: 'TP slice', color: P.axis.tp });
      if (d.r.config.model.experts > 0) items.push({ label: 'EP experts', color: P.axis.ep });
      if (d.r.config.plan.cp > 1) items.push({ label: 'CP tokens', color: P.axis.cp });
      items.push({ label: 'DP replica', color: P.axis.dp });
      items.push({ heading: 'memory' });
      for (const [, l, c] of CL.tables.kindsOf(d.r)) items.push({ label: l, color: P.state[c] });
    }
    if (sc.balancer) {
      items.push({ heading: 'serving' });
      items.push({ label: 'load balancer / replica', color: P.axis.dp, kind: 'ring' });
      items.push({ label: 'requests to each replica, with its tokens/s', color: P.axis.dp, kind: 'line', width: 1.5 });
    }
    items.push({ heading: 'links' });
    items.push({ label: 'NVLink', color: P.link.nvlink, kind: 'line' });
    items.push({ label: 'scale-out', color: P.link.scaleout, kind: 'line' });
    items.push({ label: 'thicker = more bytes per step', color: P.ink.faint, kind: 'line', width: 1 });
    return items;
  }

  function layout(d, width) {
    const sc = scene(d, width);
    return sc.height + 14 + G.legendHeight(legendItems(d, sc), width - 2 * PAD);
  }

  function draw(ctx, d, vp, ui, hits) {
    const sc = scene(d, vp.w);
    header(ctx, d, vp.w);
    if (sc.balancer) drawBalancer(ctx, d, sc.balancer, ui, hits, vp.w);
    if (sc.lod === 'full') drawFull(ctx, d, sc, ui, hits, vp.w);
    else if (sc.lod === 'cells') drawCells(ctx, d, sc, ui, hits, vp.w);
    else drawStages(ctx, d, sc, ui, hits, vp.w);
    const items = legendItems(d, sc);
    const ly = vp.h - G.legendHeight(items, vp.w - 2 * PAD);
    G.rect(ctx, PAD, ly - 8, vp.w - 2 * PAD, 1, P.ink.rule);
    G.legend(ctx, items, PAD, ly, vp.w - 2 * PAD);
  }

  // ---- hover and panel -----------------------------------------------------------------------
  function gpuLines(d, rank) {
    const r = d.r, m = r.config.model, plan = r.config.plan;
    const g = d.gpu(rank);
    if (!g) return [];
    const L = [];
    L.push(['node', g.node + ' (local ' + g.local + ')']);
    L.push(['coordinates', 'TP ' + g.tp + ' · PP ' + g.pp + ' · CP ' + g.cp + ' · EP ' + g.ep + ' · DP ' + g.dp + (m.experts > 0 ? ' · ETP ' + g.etp + ' · EDP ' + g.edp : '')]);
    L.push(['layers', F.layers(g.first_layer, g.last_layer) + ' (stage ' + (g.pp + 1) + ')' + (g.embedding ? ' + embedding' : '') + (g.output ? ' + output' : '')]);
    L.push(['heads', F.span(g.heads[0], g.heads[1]) + ' of ' + m.heads + ' · KV ' + F.span(g.kv_heads[0], g.kv_heads[1]) + ' of ' + m.kv_heads]);
    if (m.ffn_hidden > 0) L.push(['FFN columns', F.span(g.ffn[0], g.ffn[1]) + ' of ' + F.int(m.ffn_hidden)]);
    if (m.experts > 0) L.push(['experts', F.span(g.experts[0], g.experts[1]) + ' of ' + m.experts + ' · expert FFN ' + F.span(g.expert_ffn[0], g.expert_ffn[1])]);
    L.push(['tokens', g.seq_chunks.map((c) => F.int(c[0]) + '–' + F.int(c[1] - 1)).join(', ') + ' of ' + F.int(r.config.workload.seq_len)]);
    L.push(['replica', String(g.replica) + ' of ' + F.int(r.mesh.dp_attn)]);
    if (CL.tables.isInfer(r)) L.splice(6, 1);   // tokens: serving keeps whole sequences on every GPU
    void plan;
    return L;
  }

  function tip(d, p) {
    const r = d.r;
    if (p.kind === 'balancer' || p.kind === 'replica' || p.kind === 'replicas') return balancerTip(d, p);
    if (p.kind !== 'gpu' && p.kind !== 'node') return '';
    const rank = p.rank;
    const g = d.gpu(rank);
    if (!g) return '';
    const mem = r.memory.per_stage[g.pp];
    let s = p.kind === 'node' ? '<b>node ' + p.node + '</b> and ' + F.int(p.count - 1) + ' like it · first GPU:<br>' : '';
    s += '<b>GPU ' + rank + '</b> · node ' + g.node + ', stage ' + (g.pp + 1) + '<br>' + gpuLines(d, rank).slice(2, 7).map((l) => l[0] + ': ' + l[1]).join('<br>');
    s += '<br>memory ' + F.gib(mem.total_bytes, 2) + ' / ' + F.gib(mem.capacity_bytes, 2) + ' GiB' + (mem.fits ? '' : ' <b class="bad">does not fit</b>');
    return s + '<br><i>click for everything it holds</i>';
  }

  function balancerTip(d, p) {
    const r = d.r, inf = r.inference, cross = crossTraffic(d);
    const seq = F.int(r.config.workload.batch) + ' concurrent sequence' + (r.config.workload.batch > 1 ? 's' : '');
    const each = replicaShape(r) + ' · ' + seq + ' · TPOT ' + F.seconds(inf.tpot_s) + ' (' + F.sig(inf.tokens_per_s_per_user) + ' tokens/s per user)';
    const between = cross.bytes > 0 ? 'replicas exchange tokens: ' + axisList(cross.by) + ' ' + per(r) : inf.replicas > 1 ? 'no traffic between replicas' : '';
    if (p.kind === 'balancer') return '<b>load balancer</b> · requests in, spread over ' + F.int(inf.replicas) + ' replica' + (inf.replicas > 1 ? 's' : '') + '<br>' +
      F.int(inf.replicas) + ' × ' + F.int(inf.tokens_per_s_per_replica) + ' = <b>' + F.int(inf.tokens_per_s_total) + '</b> tokens/s' + (between ? '<br>' + between : '');
    const head = p.kind === 'replica' ? '<b>replica ' + p.replica + '</b> of ' + F.int(inf.replicas) : '<b>each of ' + F.int(inf.replicas) + ' replicas</b>';
    return head + '<br>' + each + '<br><b>' + F.int(inf.tokens_per_s_per_replica) + '</b> tokens/s per replica · ' + F.int(inf.tokens_per_s_total) + ' in total' +
      (between ? '<br>' + between : '') + (p.kind === 'replica' ? '<br><i>its GPUs are ringed</i>' : '');
  }

  function gpuPanel(d, rank) {
    const r = d.r;
    const g = d.gpu(rank);
    if (!g) return '<button class="close" aria-label="close">×</button>GPU ' + rank + ': no data';
    const mem = r.memory.per_stage[g.pp];
    const e = F.escape;
    let h = '<button class="close" aria-label="close">×</button><h4>GPU ' + rank + ' <span class="muted">· what it holds, its memory and its traffic</span></h4><div class="cols"><div>' +
      '<table class="t"><tbody>' + gpuLines(d, rank).map((l) => '<tr><th>' + l[0] + '</th><td>' + e(l[1]) + '</td></tr>').join('') + '</tbody></table></div><div>' +
      CL.tables.memoryBar(mem, r) + '<table class="t"><tbody>';
    for (const [k, l, c] of CL.tables.kindsOf(r)) h += '<tr><th><i class="sw" style="--c:' + P.state[c] + '"></i>' + l + '</th><td class="num">' + F.gib(mem[k], 2) + ' GiB</td></tr>';
    h += '<tr class="total"><th>total</th><td class="num">' + F.gib(mem.total_bytes, 2) + ' / ' + F.gib(mem.capacity_bytes, 2) + ' GiB</td></tr></tbody></table></div><div>' +
      '<table class="t"><thead><tr><th>axis</th><th>collective</th><th>link</th><th class="num">bytes</th><th class="num">exposed</th></tr></thead><tbody>';
    for (const c of r.comm) h += '<tr><td><span class="axis" style="--c:' + (P.axis[c.axis] || P.ink.muted) + '">' + c.axis.toUpperCase() + '</span></td><td>' + e(c.collective) +
      '</td><td><span class="link ' + c.link + '">' + (c.link === 'nvlink' ? 'NVLink' : 'scale-out') + '</span></td><td class="num">' + F.bytes(c.bytes) + '</td><td class="num">' +
      (c.exposed_s > 0 ? F.seconds(c.exposed_s) : 'hidden') + '</td></tr>';
    h += '</tbody></table><p class="muted" style="margin:4px 0 0;font-size:11px">' + (r.comm_stage !== undefined ? 'Traffic per step of a GPU of stage ' + (r.comm_stage + 1) +
      ' (the busiest); other stages differ only at the pipeline ends.' : 'Traffic of one GPU for the prefill and one decode step.') + '</p></div></div>';
    return h;
  }

  function caption(d) {
    const r = d.r;
    const sc = d.mesh.gpus <= 64 ? 'Every GPU and what it holds.' : d.mesh.gpus <= 1024 ? 'Every GPU as a cell; hover for what it holds.' :
      F.int(r.gpus) + ' GPUs are too many to label: one row per stage, each distinct node drawn once with its count.';
    const inf = CL.tables.isInfer(r) ? r.inference : null;
    const lb = inf ? ' A load balancer spreads the requests over ' + (inf.replicas > 1 ? F.int(inf.replicas) + ' replicas.' : 'one replica.') : '';
    return '<b>Where the weights land.</b> ' + sc + lb + ' <span class="muted">Whatever chats the most must stay inside the node (NVLink); click a GPU for its memory and traffic.</span>';
  }

  CL.views = CL.views || {};
  CL.views.placement = { layout, draw, tip, caption, gpuPanel, scene };
})(window.CL = window.CL || {});
