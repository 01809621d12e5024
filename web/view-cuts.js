// view-cuts.js: the cut directions on the model itself, drawn from the core's figure (cutsScene():
// core/scene_cuts.h lays out the depth of the model in pipeline stages, the opened layer's
// matrices in TP slices, the experts on EP ranks, the sequence in CP chunks and the DP replicas,
// every range being the core's answer for rank 0's groups). The page draws it (figure.js), and
// writes the hover text from the ids of the item under the pointer and the core's answers.
(function (CL) {
  'use strict';
  const F = CL.fmt;

  // The figure for a canvas `width` pixels wide with `ui.layer` opened (null: the core's default).
  function scene(d, width, ui) {
    const layer = ui && ui.layer != null && ui.layer < d.r.config.model.layers ? ui.layer : -1;
    return d.cuts(width, layer);
  }

  function layout(d, width, ui) {
    const sc = scene(d, width, ui);
    return sc ? sc.height : 80;
  }

  function draw(ctx, d, vp, ui, hits) {
    const sc = scene(d, vp.w, ui);
    if (sc) CL.figure.draw(ctx, sc, ui, hits);
  }

  // Hover text for what the pointer is on (HTML): ids from the figure, values from the core.
  function tip(d, p) {
    const r = d.r, plan = r.config.plan, m = r.config.model;
    const e = F.escape;
    const stage = (s) => r.placement.stages[s];
    switch (p.kind) {
      case 'layer': {
        const st = stage(p.stage);
        const chunk = st.chunks.findIndex((c) => p.layer >= c[0] && p.layer <= c[1]);
        return '<b>' + F.layers(p.layer, p.layer) + '</b>' + (p.name === 'moe' ? ' (MoE)' : '') + '<br>stage ' + (p.stage + 1) +
          (st.chunks.length > 1 ? ', chunk ' + (chunk + 1) + ' of ' + st.chunks.length : '') + '<br><i>click to open it</i>';
      }
      case 'stage': {
        const st = stage(p.stage), mem = r.memory.per_stage[p.stage];
        return '<b>Stage ' + (p.stage + 1) + '</b>: ' + st.chunks.map((c) => F.layers(c[0], c[1])).join(', ') +
          (st.embedding ? ' + embedding' : '') + (st.output ? ' + output layer' : '') +
          '<br>' + st.layers + ' layers' + (st.moe_layers ? ' (' + st.moe_layers + ' MoE)' : '') +
          (mem ? '<br>' + F.gib(mem.total_bytes, 2) + ' GiB per GPU' : '');
      }
      case 'io':
        return '<b>' + (p.name === 'embedding' ? 'Input embedding' : r.config.workload.mode === 'infer' ? 'Output layer and sampling' : 'Output layer and loss') +
          '</b> on stage ' + (p.stage + 1) +
          '<br>' + F.short(p.name === 'embedding' ? r.params.embedding : r.params.output) + ' parameters' + (plan.tp > 1 ? ', split over TP' : '');
      case 'slice': {
        const g = d.gpu(p.rank);
        if (!g) return '';
        let s = '<b>' + e(p.name) + ', TP rank ' + g.tp + '</b>';
        if (p.head !== undefined) s += '<br>KV head ' + p.head + (p.count > 1 ? ', replicated on ' + p.count + ' TP ranks' : '');
        s += '<br>heads ' + F.span(g.heads[0], g.heads[1]) + ' · KV heads ' + F.span(g.kv_heads[0], g.kv_heads[1]);
        if (m.ffn_hidden > 0) s += '<br>FFN columns ' + F.span(g.ffn[0], g.ffn[1]);
        return s + '<br>held by GPU ' + g.rank + ' and every GPU with TP coordinate ' + g.tp;
      }
      case 'replicated':
        return '<b>' + e(p.name) + '</b>: not split; every GPU of the stage holds a copy';
      case 'shared':
        return '<b>' + p.count + ' shared expert' + (p.count > 1 ? 's' : '') + '</b>: every token uses ' + (p.count > 1 ? 'them' : 'it') + '; on every EP rank';
      case 'expert': {
        const g = p.rank !== undefined ? d.gpu(p.rank) : null;
        if (!g) return 'expert ' + p.expert;
        return '<b>Expert ' + p.expert + '</b> on EP rank ' + g.ep + ' (holds experts ' + F.span(g.experts[0], g.experts[1]) + ')' +
          '<br>e.g. GPU ' + g.rank + (r.mesh.etp > 1 ? '<br>split into ' + r.mesh.etp + ' expert-TP slices' : '<br>never split');
      }
      case 'chunk': {
        const g = d.gpu(p.rank);
        if (!g) return '';
        return '<b>CP rank ' + g.cp + '</b>: tokens ' + F.int(p.begin) + '–' + F.int(p.end - 1) +
          '<br>holds ' + g.seq_chunks.map((c) => F.int(c[0]) + '–' + F.int(c[1] - 1)).join(' and ') + ' of every sequence';
      }
      case 'replicas':
        return '<b>' + F.int(p.count) + ' data-parallel replica' + (p.count > 1 ? 's' : '') + '</b> of the dense weights';
      default:
        return '';
    }
  }

  function caption() {
    return '<b>Four cut directions.</b> TP cuts within a layer, PP cuts between layers, EP cuts between experts, CP cuts the sequence, DP doesn’t cut the model at all. ' +
      '<span class="muted">Click a layer on the left to open it.</span>';
  }

  CL.views = CL.views || {};
  // uses: the core function the view is drawn from (bridge.js: in core.js or core-full.js)
  CL.views.cuts = { layout, draw, tip, caption, scene, uses: 'cutsScene' };
})(window.CL = window.CL || {});
