// figure-text.js: each canvas figure in words, for readers who do not see it (issue 14 item 4).
// Generated from what the view draws: the core's scene (cutsScene, placementScene: its headings,
// labels and link labels, in the order drawn; timeline(): its ops per stage) and the estimate the
// same view reads (the mesh's groups, the stages). Nothing here is written per example.
// describe(view, d, width, ui) → { label: a one-line name for the canvas, text: sentences, table:
// { caption, head: [...], rows: [[...]] } or a function that makes it when shown }; html() renders
// that (escaped) for the figure's <details>.
(function (CL) {
  'use strict';
  const F = CL.fmt;
  const e = (s) => F.escape(String(s));
  const AXES = { tp: 'TP', cp: 'CP', ep: 'EP', pp: 'PP', dp: 'DP' };

  // "16 GPUs in 2 nodes of 8; TP 8 inside each node over NVLink; PP 2 across 2 nodes over the scale-out network"
  function meshSentence(r) {
    const parts = [];
    for (const g of r.placement.groups) {
      if (!AXES[g.axis] || g.size <= 1) continue;
      const where = g.nodes_spanned > 1 ? 'across ' + F.int(g.nodes_spanned) + ' nodes' : 'inside a node';
      parts.push(AXES[g.axis] + ' ' + F.int(g.size) + ' ' + where + ' (' + (g.link === 'nvlink' ? CL.state.linkLabel(r, 'nvlink') : 'scale-out network') + ')');
    }
    return F.int(r.gpus) + ' GPU' + (r.gpus > 1 ? 's' : '') + ' = ' + ['tp', 'pp', 'cp', 'ep', 'dp'].map((a) => AXES[a] + ' ' + F.int(a === 'dp' ? r.config.plan.dp : r.config.plan[a])).join(' × ') +
      (parts.length ? '; ' + parts.join('; ') : '; one GPU holds everything') + '.';
  }

  // The scene's texts of the given kinds, in drawn order, each once.
  function texts(sc, kinds) {
    const seen = new Set(), out = [];
    for (const t of sc.texts) {
      if (!kinds.has(t.kind)) continue;
      const matrix = t.kind === 'matrix_name' || t.kind === 'matrix_sub';   // in pairs: never merged
      if (!matrix && seen.has(t.kind + t.text)) continue;
      seen.add(t.kind + t.text);
      out.push(t);
    }
    return out;
  }
  // Headings with what follows them until the next heading: "Inside layer 1: stage 1 of 2 · TP = 8 …."
  function sections(list, heads) {
    const out = [];
    for (let i = 0; i < list.length; i++) {
      const t = list[i];
      let s = t.text.replace(/[.;:]\s*$/, '');
      // a matrix and its sub-label: "WQ (64 heads)"
      if (t.kind === 'matrix_name' && list[i + 1] && list[i + 1].kind === 'matrix_sub') s += ' (' + list[++i].text + ')';
      if (heads.has(t.kind) || !out.length) out.push([s]);
      else out[out.length - 1].push(s);
    }
    return out.map((s) => s[0] + (s.length > 1 ? ': ' + s.slice(1).join('; ') : '') + '.');
  }

  function stageTable(r) {
    const rows = r.placement.stages.map((st, i) => {
      const m = r.memory.per_stage[i];
      return ['stage ' + (i + 1), st.chunks.map((c) => F.layers(c[0], c[1])).join(', ') + (st.embedding ? ' + embedding' : '') + (st.output ? ' + output' : ''),
        F.gib(m.total_bytes, 1) + ' of ' + F.gib(m.capacity_bytes, 1) + ' GiB', m.fits ? 'fits' : 'does not fit'];
    });
    return { caption: 'Pipeline stages', head: ['stage', 'layers', 'memory per GPU', 'fits'], rows };
  }

  function cuts(d, width, ui) {
    const sc = CL.views.cuts.scene(d, width, ui);
    if (!sc) return null;
    const list = texts(sc, new Set(['heading', 'subheading', 'block', 'matrix_name', 'matrix_sub', 'stage_label', 'replica_count', 'note', 'io_label']));
    return { label: 'Cuts figure: ' + (list[0] ? list[0].text : 'the model') + ', cut by ' + d.r.config.plan.tp + '-way TP and ' + d.r.config.plan.pp + ' pipeline stages',
      text: [meshSentence(d.r)].concat(sections(list.filter((t) => t.text !== 'rank'), new Set(['heading']))), table: stageTable(d.r) };
  }

  function placement(d, width) {
    const sc = CL.views.placement.scene(d, width);
    if (!sc) return null;
    const head = texts(sc, new Set(['title', 'subtitle']));
    const nodes = texts(sc, new Set(['node_name', 'node_stage']));
    const links = texts(sc, new Set(['link_label']));
    const text = [meshSentence(d.r)];
    if (head.length) text.push(head.map((t) => t.text).join('; ') + '.');
    // node 0: stage 1 · layers 1–40 (the first 8 nodes, then how many more)
    const pairs = [];
    for (let i = 0; i < nodes.length; i++) if (nodes[i].kind === 'node_name') pairs.push(nodes[i].text + (nodes[i + 1] && nodes[i + 1].kind === 'node_stage' ? ': ' + nodes[i + 1].text : ''));
    if (pairs.length) text.push('Nodes — ' + pairs.slice(0, 8).join('; ') + (pairs.length > 8 ? '; and ' + F.int(pairs.length - 8) + ' more' : '') + '.');
    if (links.length) text.push('Links — ' + links.map((t) => t.text).join('; ') + '.');
    // what each GPU holds (64 at most in this table), asked of the core only when the table is shown
    const r = d.r;
    const table = () => {
      const n = Math.min(r.gpus, 64), rows = [];
      d.prefetchGpus(Array.from({ length: n }, (_, i) => i));
      for (let rank = 0; rank < n; rank++) {
        const g = d.gpu(rank);
        if (!g) continue;
        // under folding the expert mesh's ranks too (the strip under each cell of the figure)
        const expertMesh = r.config.plan.etp > 0 ? ' · ETP ' + g.etp + ' · EDP ' + g.edp : '';
        rows.push(['GPU ' + rank, String(g.node), 'TP ' + g.tp + ' · PP ' + (g.pp + 1) + ' · CP ' + g.cp + ' · EP ' + g.ep + ' · DP ' + g.dp + expertMesh,
          F.layers(g.first_layer, g.last_layer), F.gib(r.memory.per_stage[g.pp].total_bytes, 1) + ' GiB']);
      }
      return rows.length ? { caption: 'What each GPU holds' + (r.gpus > n ? ' (the first ' + n + ' of ' + F.int(r.gpus) + ')' : ''),
        head: ['GPU', 'node', 'ranks (stage from 1)', 'layers', 'memory'], rows } : stageTable(r);
    };
    return { label: 'Placement figure: ' + (head[0] ? head[0].text : F.int(r.gpus) + ' GPUs'), text, table };
  }

  function pipeline(d, width, ui) {
    const fig = CL.views.pipeline.figure(d, width, ui);
    if (!fig) return null;
    const R = fig.sc.rects, stages = [];
    for (let i = 0; i < R.count; i++) {
      const s = stages[R.stage[i]] || (stages[R.stage[i]] = { busy: 0, idle: 0, ops: 0 });
      const dt = R.end_s[i] - R.start_s[i];
      if (R.kind[i] === 'idle') s.idle += dt; else { s.busy += dt; s.ops++; }
    }
    const title = fig.text.slice(0, 2).map((t) => t.text);   // the figure's title and subtitle
    const rows = stages.map((s, i) => ['stage ' + (i + 1), F.int(s.ops), F.seconds(s.busy), F.seconds(s.idle), F.pct(s.idle / Math.max(1e-30, s.busy + s.idle))]);
    return { label: 'Pipeline figure: ' + (title[0] || 'the schedule'),
      text: [meshSentence(d.r), title.join('; ') + '.', 'Each row is a stage; each bar an op of one micro-batch, idle time hatched.'],
      table: { caption: 'Each stage in the timeline', head: ['stage', 'ops drawn', 'busy', 'idle', 'idle share'], rows } };
  }

  function describe(view, d, width, ui) {
    const f = { cuts, placement, pipeline }[view];
    return f ? f(d, width, ui) : null;
  }

  function html(t) {
    if (!t) return '';
    let h = t.text.map((s) => '<p>' + e(s) + '</p>').join('');
    const tb = typeof t.table === 'function' ? t.table() : t.table;
    if (tb && tb.rows.length) {
      h += '<div class="scroll" tabindex="0" role="region" aria-label="' + e(tb.caption) + '"><table class="t"><caption>' + e(tb.caption) + '</caption><thead><tr>' +
        tb.head.map((c) => '<th scope="col">' + e(c) + '</th>').join('') + '</tr></thead><tbody>' +
        tb.rows.map((row) => '<tr><th scope="row">' + e(row[0]) + '</th>' + row.slice(1).map((c) => '<td>' + e(c) + '</td>').join('') + '</tr>').join('') + '</tbody></table></div>';
    }
    return h;
  }

  CL.figureText = { describe, html, meshSentence };
})(window.CL = window.CL || {});
