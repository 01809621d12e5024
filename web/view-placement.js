// view-placement.js: where the weights land, drawn from the core's figure (placementScene():
// core/scene_placement.h lays out the nodes, what each GPU holds, the links with their traffic,
// the load balancer of serving, and chooses the level of detail: every GPU labelled up to 64,
// a cell per GPU up to 1,024, one row per pipeline stage above). The page draws it (figure.js),
// hit-tests by the ids the core gave each item, and writes the hover text and the GPU panel from
// the core's answers (gpu(), the estimate).
(function (CL) {
  'use strict';
  const P = CL.palette, F = CL.fmt;

  // "TP 8 × PP 2": the GPUs of one replica, as the plan's axes
  function replicaShape(r) {
    const p = r.config.plan;
    const a = [['TP', p.tp], ['CP', p.cp], ['PP', p.pp]].filter(([, n]) => n > 1).map(([k, n]) => k + ' ' + n);
    return a.length ? a.join(' × ') : 'one GPU';
  }

  // The figure for a canvas `width` pixels wide (the core's, kept with the derived result).
  function scene(d, width) { return d.placement(width); }

  function layout(d, width) {
    const sc = scene(d, width);
    return sc ? sc.height : 80;
  }

  function draw(ctx, d, vp, ui, hits) {
    const sc = scene(d, vp.w);
    if (sc) CL.figure.draw(ctx, sc, ui, hits);
  }

  // ---- hover and panel -----------------------------------------------------------------------
  function gpuLines(d, rank) {
    const r = d.r, m = r.config.model;
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

  // `p.name`: what crosses between replicas, as the core's figure says it (usually nothing).
  function balancerTip(d, p) {
    const r = d.r, inf = r.inference;
    const seq = F.int(r.config.workload.batch) + ' concurrent sequence' + (r.config.workload.batch > 1 ? 's' : '');
    const each = replicaShape(r) + ' · ' + seq + ' · TPOT ' + F.seconds(inf.tpot_s) + ' (' + F.sig(inf.output_tokens_per_s_per_user) + ' tokens/s per user)';
    const between = p.name ? F.escape(p.name) : '';
    if (p.kind === 'balancer') return '<b>load balancer</b> · requests in, spread over ' + F.int(inf.replicas) + ' replica' + (inf.replicas > 1 ? 's' : '') + '<br>' +
      F.int(inf.replicas) + ' × ' + F.int(inf.output_tokens_per_s_per_replica) + ' = <b>' + F.int(inf.output_tokens_per_s_total) + '</b> tokens/s' + (between ? '<br>' + between : '');
    const head = p.kind === 'replica' ? '<b>replica ' + p.replica + '</b> of ' + F.int(inf.replicas) : '<b>each of ' + F.int(inf.replicas) + ' replicas</b>';
    return head + '<br>' + each + '<br><b>' + F.int(inf.output_tokens_per_s_per_replica) + '</b> tokens/s per replica · ' + F.int(inf.output_tokens_per_s_total) + ' in total' +
      (between ? '<br>' + between : '') + (p.kind === 'replica' ? '<br><i>its GPUs are ringed</i>' : '');
  }

  function gpuPanel(d, rank) {
    const r = d.r;
    const g = d.gpu(rank);
    const e = F.escape;
    if (!g) return '<button class="close" aria-label="close">×</button>GPU ' + e(rank) + ': no data';
    const mem = r.memory.per_stage[g.pp];
    let h = '<button class="close" aria-label="close">×</button><h4>GPU ' + e(rank) + ' <span class="muted">· what it holds, its memory and its traffic</span></h4><div class="cols"><div>' +
      '<table class="t"><tbody>' + gpuLines(d, rank).map((l) => '<tr><th>' + l[0] + '</th><td>' + e(l[1]) + '</td></tr>').join('') + '</tbody></table></div><div>' +
      CL.tables.memoryBar(mem, r) + '<table class="t"><tbody>';
    for (const [k, l, c] of CL.tables.kindsOf(r)) h += '<tr><th><i class="sw" data-css="--c:' + P.state[c] + '"></i>' + l + '</th><td class="num">' + F.gib(mem[k], 2) + ' GiB</td></tr>';
    h += '<tr class="total"><th>total</th><td class="num">' + F.gib(mem.total_bytes, 2) + ' / ' + F.gib(mem.capacity_bytes, 2) + ' GiB</td></tr></tbody></table></div><div>' +
      '<table class="t"><thead><tr><th>axis</th><th>collective</th><th>link</th><th class="num">bytes</th><th class="num">exposed</th></tr></thead><tbody>';
    for (const c of r.comm) h += '<tr><td><span class="axis" data-css="--c:' + (P.text[c.axis] || P.ink.muted) + '">' + c.axis.toUpperCase() + '</span></td><td>' + e(c.collective) +
      '</td><td><span class="link ' + c.link + '">' + e(CL.state.linkLabel(r, c.link)) + '</span></td><td class="num">' + F.bytes(c.bytes) + '</td><td class="num">' +
      (c.exposed_s > 0 ? F.seconds(c.exposed_s) : 'hidden') + '</td></tr>';
    h += '</tbody></table><p class="muted" data-css="margin:4px 0 0;font-size:11px">' + (r.comm_stage !== undefined ? 'Traffic per step of a GPU of stage ' + (r.comm_stage + 1) +
      ' (the busiest); other stages differ only at the pipeline ends.' : 'Traffic of one GPU for the prefill and one decode step.') + '</p></div></div>';
    return h;
  }

  // The level of detail is the core's (figure.level).
  function caption(d, u) {
    const r = d.r;
    const sc = u && u.width ? scene(d, u.width) : null;
    const level = sc ? sc.level : 'full';
    const what = level === 'full' ? 'Every GPU and what it holds.' : level === 'cells' ? 'Every GPU as a cell; hover for what it holds.' :
      F.int(r.gpus) + ' GPUs are too many to label: one row per stage, each distinct node drawn once with its count.';
    const inf = CL.tables.isInfer(r) ? r.inference : null;
    const lb = inf ? ' A load balancer spreads the requests over ' + (inf.replicas > 1 ? F.int(inf.replicas) + ' replicas.' : 'one replica.') : '';
    return '<b>Where the weights land.</b> ' + what + lb + ' <span class="muted">Whatever chats the most must stay inside the node (' + F.escape(CL.state.linkLabel(r, 'nvlink')) + '); click a GPU for its memory and traffic.</span>';
  }

  CL.views = CL.views || {};
  // uses: the core function the view is drawn from (bridge.js: in core.js or core-full.js)
  CL.views.placement = { layout, draw, tip, caption, gpuPanel, scene, uses: 'placementScene' };
})(window.CL = window.CL || {});
