// search.js: "Find the best plans". The core's search() enumerates every TP × PP × CP × EP split of
// the GPU count, schedule, micro-batch and recompute, evaluates each valid plan and ranks those that
// fit by tokens/s (core/search.h). It is hundreds of evaluations (~0.2 s in WASM), so it runs only
// on a click, never in a frame. This file makes the config it gets, the ranked table (formatting
// only: every number is a field of the result) and the state patch that applies a row.
(function (CL) {
  'use strict';
  const F = CL.fmt, P = CL.palette, e = F.escape;

  // Plan fields the search chooses (core/search.cpp); the rest of the plan (ZeRO, flash attention,
  // rank order, overlaps) it takes from the config, as it does the model, cluster and workload.
  const CHOSEN = ['tp', 'pp', 'cp', 'ep', 'dp', 'etp', 'sp', 'schedule', 'vpp', 'micro_batch', 'recompute', 'distributed_optimizer', 'layers_per_stage'];
  // What makes two plans the same plan (the current one is marked in the table).
  const SAME = ['tp', 'pp', 'cp', 'ep', 'dp', 'etp', 'sp', 'zero', 'distributed_optimizer', 'schedule', 'vpp', 'micro_batch', 'recompute'];
  // The core's label of a named choice (core/choices.h).
  const label = (key, name) => { const c = CL.presets.choices[key].find((x) => x.name === name); return c ? c.label : name; };

  // The config the search gets: the page's, without the fields the search chooses (so a plan that
  // is invalid now can still be searched from), with the GPU count to fill: cluster.gpus when the
  // page pins it, else the count of the current (valid) plan.
  function config(s, d) {
    const cfg = CL.state.toConfig(s);
    for (const k of CHOSEN) delete cfg.plan[k];
    if (cfg.cluster.gpus == null && d && d.ok) cfg.cluster.gpus = d.r.gpus;
    return cfg;
  }
  // Results stay good while this text is unchanged (the plan axes the search chooses do not count).
  const key = (s, d) => JSON.stringify(config(s, d));
  const modeOf = (s, d) => s.workload.mode || (d && d.config ? d.config.workload.mode : null);

  // The state with a row's plan: every field the search chose, the GPU count pinned (DP follows
  // from it). The fields it kept (ZeRO, rank order, …) are the config's already, so the search's
  // key stays the same and the table stays live.
  function apply(s, plan, gpus) {
    const n = CL.state.clone(s);
    n.example = null;
    n.gpu = null;
    n.gpus = gpus;
    for (const k of ['tp', 'pp', 'cp', 'ep', 'sp', 'distributed_optimizer', 'recompute', 'schedule', 'micro_batch']) n.plan[k] = plan[k];
    delete n.plan.dp;
    delete n.plan.layers_per_stage;
    if (plan.etp > 0) n.plan.etp = plan.etp; else delete n.plan.etp;
    if (CL.state.choice('schedule', plan.schedule).virtual_stages || plan.vpp > 1) n.plan.vpp = plan.vpp; else delete n.plan.vpp;
    return n;
  }

  function same(a, b) { return !!a && !!b && SAME.every((k) => a[k] === b[k]); }

  const scheduleText = (p) => label('schedule', p.schedule) + (p.vpp > 1 ? ' v' + p.vpp : '');
  const plural = (n, one, many) => F.int(n) + ' ' + (n === 1 ? one : many);

  // found: { out (the core's answer), ms, gpus, what (model · cluster line), rankOrder };
  // o: { current (the current plan as the core read it, null: invalid), stale, mode, busy }.
  function html(found, o) {
    const close = '<button type="button" class="close" title="Close the search" aria-label="Close">×</button>';
    if (o.busy) return '<div class="search-head"><h3>Best plans <span class="muted">· searching…</span></h3>' + close + '</div>';
    if (CL.state.serving(o.mode)) {
      return '<div class="search-head"><h3>Best plans</h3>' + close + '</div><p class="search-msg">The search ranks <b>training</b> plans; serving plans are evaluated one by one. ' +
        'Set <b>Mode</b> to <i>train (one step)</i> and search again.</p>';
    }
    if (!found) return '';
    const out = found.out;
    const again = '<button type="button" class="again">Search again</button>';
    if (!out.ok) {
      const train = out.errors.some((x) => x.path === '/workload/mode');
      const gpus = out.errors.some((x) => x.path === '/cluster/gpus');
      return '<div class="search-head"><h3>Best plans</h3>' + again + close + '</div><p class="search-msg bad">' +
        (train ? 'The search ranks <b>training</b> plans; serving plans are evaluated one by one. Set <b>Mode</b> to <i>train (one step)</i> and search again.'
          : gpus ? 'The search needs the GPU count to fill: set <b>Cluster › GPUs</b> (or make the plan valid) and search again.'
            : 'The core could not search this config:') + '</p>' +
        (train || gpus ? '' : '<ul class="search-errors">' + out.errors.map((x) => '<li><code>' + e(x.path || '/') + '</code> ' + e(x.message) + '</li>').join('') + '</ul>');
    }
    const r = out.result;
    const counts = plural(r.candidates, 'plan', 'plans') + ' enumerated, ' + F.int(r.valid) + ' valid, ' + F.int(r.fitting) + ' ' + (r.fitting === 1 ? 'fits' : 'fit');
    let h = '<div class="search-head"><h3>Best plans <span class="muted">· ' + found.what + '</span></h3>' +
      '<span class="search-counts" data-candidates="' + r.candidates + '" data-valid="' + r.valid + '" data-fitting="' + r.fitting + '">' + counts +
      ' <span class="muted">· searched in ' + F.int(found.ms) + ' ms</span></span>' + close + '</div>';
    if (o.stale) h += '<p class="search-msg warn">The config changed since this search (model, cluster, GPUs, workload, or the ZeRO stage, rank order or overlaps it keeps): ' +
      'these plans were ranked for the previous one. ' + again + '</p>';
    if (!r.best.length) return h + '<p class="search-msg bad">None of the ' + plural(r.candidates, 'plan', 'plans') + ' is valid for this model, cluster and workload (see the marked fields).</p>';
    if (!r.fitting) h += '<p class="search-msg bad">No plan fits in memory. Below, the ' + plural(r.best.length, 'plan', 'plans') + ' closest to fitting (smallest peak memory first), none of which fits: ' +
      'try more GPUs, ZeRO, or a shorter sequence.</p>';
    else if (r.fitting < r.best.length) h += '<p class="search-msg warn">Only ' + plural(r.fitting, 'plan fits', 'plans fit') + ' in memory; the rows after ' + (r.fitting === 1 ? 'it' : 'them') +
      ' are the plans closest to fitting.</p>';
    const ax = (k, t) => '<th class="num ax" data-css="--c:' + P.axis[k] + '">' + t + '</th>';
    h += '<div class="scroll"><table class="t search' + (o.stale ? ' outdated' : '') + '"><thead><tr><th class="num">#</th>' + ax('tp', 'TP') + ax('pp', 'PP') + ax('cp', 'CP') + ax('ep', 'EP') + ax('dp', 'DP') +
      '<th>schedule</th><th class="num">micro-batch</th><th>recompute</th><th class="num">step time</th><th class="num">tokens/s</th><th class="num">MFU</th>' +
      '<th class="num">peak / usable GiB</th><th>fits</th></tr></thead><tbody>';
    let marked = false;
    r.best.forEach((b, i) => {
      const p = b.plan;
      const cur = !o.stale && !marked && same(p, o.current);
      if (cur) marked = true;
      const td = (k, v, text, cls) => '<td class="' + (cls || 'num') + '" data-k="' + k + '"' + (v === null ? '' : ' data-v="' + e(v) + '"') + '>' + text + '</td>';
      h += '<tr data-i="' + i + '"' + (cur ? ' class="current" aria-current="true"' : '') + (o.stale ? '' : ' tabindex="0" title="Apply this plan"') + '>' +
        '<td class="num rank">' + (i + 1) + '</td>' + td('tp', p.tp, p.tp) + td('pp', p.pp, p.pp) + td('cp', p.cp, p.cp) + td('ep', p.ep, p.ep) + td('dp', p.dp, p.dp) +
        td('schedule', p.schedule, e(scheduleText(p)), p.pp > 1 ? 'sched' : 'sched muted') + td('micro_batch', p.micro_batch, p.micro_batch) + td('recompute', p.recompute, e(p.recompute), 'rc') +
        td('step_s', b.step_s, F.seconds(b.step_s)) + td('tokens_per_s', b.tokens_per_s, F.int(b.tokens_per_s), 'num strong') + td('mfu', b.mfu, F.pct(b.mfu)) +
        td('peak_memory_bytes', b.peak_memory_bytes, F.gib(b.peak_memory_bytes, 1) + ' / ' + F.gib(b.capacity_bytes, 1)) +
        td('fits', b.fits, b.fits ? '✓ fits' : 'does not fit', b.fits ? 'ok' : 'bad') + '</tr>';
    });
    h += '</tbody></table></div>';
    const note = o.stale ? '' : (marked ? 'The highlighted row is the current plan. ' : o.current ? 'The current plan is not among these. ' : '') + 'Click a row to apply that plan.';
    return h + '<p class="search-foot">' + note + ' <span class="muted">All with SP when TP > 1 and the distributed optimizer' +
      (found.rankOrder ? '; rank order ' + e(found.rankOrder) : '') + (r.fitting ? '; fastest first' : '') + '.</span></p>';
  }

  // "Llama 3 70B on 64 × H100 SXM · seq 8,192 · global batch 64": what was searched, from the config as the core read it.
  function describe(d, gpus) {
    const c = d && d.config;
    if (gpus == null) return '';
    if (!c) return F.int(gpus) + ' GPUs';
    return e(c.model.name) + ' on ' + F.int(gpus) + ' × ' + e(c.cluster.gpu) + ' · seq ' + F.int(c.workload.seq_len) + ' · global batch ' + F.int(c.workload.global_batch);
  }

  CL.search = { CHOSEN, SAME, config, key, modeOf, apply, same, html, describe, scheduleText };
})(window.CL = window.CL || {});
