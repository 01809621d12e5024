// search.js: "Find the best plans". Training: the core's search() enumerates every TP × PP × CP × EP
// split of the GPU count, schedule, micro-batch and recompute, evaluates each valid plan and ranks
// those that fit by tokens/s (core/search.h). Serving: servingSearch() enumerates TP × PP × EP × DP
// and the batch, ranks by output tokens/s per GPU under a TTFT and a TPOT limit and returns the
// Pareto front per GPU against per user with its plot laid out by the core
// (core/serving_search.h, core/scene_pareto.h). Hundreds of evaluations, so a search runs only on
// a click, never in a frame. This file makes the config it gets, the ranked tables (formatting
// only: every number is a field of the result), the plot's canvas and the state patch that applies
// a row or a point.
(function (CL) {
  'use strict';
  const F = CL.fmt, P = CL.palette, e = F.escape;

  // Plan fields the search chooses (core/search.cpp: the whole space); the rest of the plan (flash
  // attention, rank order, CP exchange, MoE options) it takes from the config, as the model, cluster and workload.
  const CHOSEN = ['tp', 'pp', 'cp', 'ep', 'dp', 'etp', 'sp', 'schedule', 'vpp', 'micro_batch', 'recompute', 'recompute_modules', 'zero', 'distributed_optimizer',
    'tp_comm_overlap', 'overlap_grad_reduce', 'overlap_param_gather', 'layers_per_stage'];
  // What makes two plans the same plan (the current one is marked in the table).
  const SAME = ['tp', 'pp', 'cp', 'ep', 'dp', 'etp', 'sp', 'zero', 'distributed_optimizer', 'schedule', 'vpp', 'micro_batch', 'recompute',
    'tp_comm_overlap', 'overlap_grad_reduce', 'overlap_param_gather'];
  // The core's label of a named choice (core/choices.h).
  const label = (key, name) => { const c = CL.presets.choices[key].find((x) => x.name === name); return c ? c.label : name; };

  // The config the search gets: the page's, without the fields the search chooses (so a plan that
  // is invalid now can still be searched from), with the GPU count to fill: cluster.gpus when the
  // page pins it, else the count of the current (valid) plan.
  function config(s, d) {
    const cfg = CL.state.toConfig(s);
    for (const k of CHOSEN) delete cfg.plan[k];
    if (CL.state.serving(modeOf(s, d))) delete cfg.workload.batch;   // the serving search chooses it
    if (cfg.cluster.gpus == null && d && d.ok) cfg.cluster.gpus = d.r.gpus;
    return cfg;
  }
  // Results stay good while this text is unchanged (the plan axes the search chooses do not count).
  const key = (s, d) => JSON.stringify(config(s, d));
  // A serving search at a request rate may answer with a plan on fewer GPUs than it searched (the
  // rest idle); once applied, the page runs that plan on its own GPUs. The search's state is then the
  // page's with the GPUs searched, so its results stay live and a new search covers as many
  // again: `s` with res's GPU count when the page's is fewer and one of res's plans uses it, else `s`.
  function searched(s, res) {
    const r = res && res.serving && res.out.ok ? res.out.result : null;
    if (!r || !(r.request_rate_per_s > 0) || s.gpus == null || s.gpus >= r.gpus) return s;
    if (!r.best.concat(r.front).some((p) => p.gpus === s.gpus)) return s;
    const n = CL.state.clone(s);
    n.gpus = r.gpus;
    return n;
  }
  const modeOf = (s, d) => s.workload.mode || (d && d.config ? d.config.workload.mode : null);

  // The state with a row's plan: every field the search chose, the GPU count pinned (DP follows
  // from it). The fields it kept (ZeRO, rank order, …) are the config's already, so the search's
  // key stays the same and the table stays live.
  function apply(s, plan, gpus) {
    const n = CL.state.clone(s);
    n.example = null;
    n.gpu = null;
    n.gpus = gpus;
    for (const k of ['tp', 'pp', 'cp', 'ep', 'sp', 'zero', 'distributed_optimizer', 'recompute', 'schedule', 'micro_batch', 'tp_comm_overlap',
      'overlap_grad_reduce', 'overlap_param_gather']) n.plan[k] = plan[k];
    if (plan.recompute === 'selective') n.plan.recompute_modules = plan.recompute_modules.slice(); else delete n.plan.recompute_modules;
    delete n.plan.dp;
    delete n.plan.layers_per_stage;
    if (plan.etp > 0) n.plan.etp = plan.etp; else delete n.plan.etp;
    if (CL.state.choice('schedule', plan.schedule).virtual_stages || plan.vpp > 1) n.plan.vpp = plan.vpp; else delete n.plan.vpp;
    return n;
  }

  // "ZeRO-1 (dist. opt.) · SP · TP, grad, param overlap": the choices that shape memory and overlap.
  function memoryText(p) {
    const zero = p.distributed_optimizer && p.zero <= 1 ? 'dist. opt.' : p.zero > 0 ? 'ZeRO-' + p.zero : 'no ZeRO';
    const over = [p.tp_comm_overlap && 'TP', p.overlap_grad_reduce && 'grad', p.overlap_param_gather && 'param'].filter(Boolean);
    return zero + (p.sp ? ' · SP' : '') + (over.length ? ' · ' + over.join(', ') + ' overlap' : '');
  }

  function same(a, b) { return !!a && !!b && SAME.every((k) => a[k] === b[k]); }

  const scheduleText = (p) => label('schedule', p.schedule) + (p.vpp > 1 ? ' v' + p.vpp : '');
  const plural = (n, one, many) => F.int(n) + ' ' + (n === 1 ? one : many);

  // found: { out (the core's answer), ms, gpus, what (model · cluster line), rankOrder };
  // o: { current (the current plan as the core read it, null: invalid), stale, mode, busy, loading
  // (core-full.js is loading before the search starts: bridge.js) }.
  function html(found, o) {
    const close = '<button type="button" class="close" title="Close the search" aria-label="Close">×</button>';
    if (o.loading) return '<div class="search-head"><h3>Best plans <span class="muted">· loading the search (core-full.js)…</span></h3>' + close + '</div>';
    if (o.busy && CL.state.serving(o.mode)) return '<div class="search-head"><h3>Best plans <span class="muted">· searching…</span></h3>' + close + '</div>';
    // Training: the search runs in pieces (search-run.js); progress() fills the bar and the best so far.
    if (o.busy) {
      return '<div class="search-head"><h3>Best plans <span class="muted">· ' + (o.what || 'searching…') + '</span></h3>' + close + '</div>' +
        '<div class="search-progress"><progress max="1" value="0" aria-label="Share of the space searched"></progress>' +
        '<span class="search-progress-text" role="status">Searching…</span><button type="button" class="cancel">Cancel</button></div>' +
        '<div class="search-partial"></div>';
    }
    if (!found) {
      if (!o.cancelled) return '';
      return '<div class="search-head"><h3>Best plans <span class="muted">· search cancelled</span></h3><button type="button" class="again">Search again</button>' + close + '</div>';
    }
    if (found.serving) return servingHtml(found, o, close);
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
    const counts = plural(r.candidates, 'plan', 'plans') + ' enumerated, ' + F.int(r.valid) + ' valid, ' + F.int(r.evaluated) + ' simulated' +
      (r.pruned_bound > 0 ? ' (' + F.int(r.pruned_bound) + ' more could not beat the best found)' : '') + ', ' + F.int(r.fitting) + ' of them ' + (r.fitting === 1 ? 'fits' : 'fit');
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
    const t = table(r, o);
    h += t.html;
    const marked = t.marked;
    const note = o.stale ? '' : (marked ? 'The highlighted row is the current plan. ' : o.current ? 'The current plan is not among these. ' : '') + 'Click a row to apply that plan.';
    return h + '<p class="search-foot">' + note + ' <span class="muted">Searched: TP, PP, VPP, CP, EP, ETP, schedule, micro-batch, ZeRO, SP, recompute and its modules, ' +
      'TP/DP overlap flags' + (found.rankOrder ? '; rank order ' + e(found.rankOrder) : '') + (r.fitting ? '; fastest first' : '') + '.</span></p>';
  }

  // The ranked plans as a table; o.partial: the best so far of a running search (not clickable).
  function table(r, o) {
    const ax = (k, t) => '<th class="num ax" data-css="--c:' + P.text[k] + '">' + t + '</th>';
    let h = '<div class="scroll"><table class="t search' + (o.stale ? ' outdated' : o.partial ? ' partial' : '') + '"><thead><tr><th class="num">#</th>' + ax('tp', 'TP') + ax('pp', 'PP') + ax('cp', 'CP') + ax('ep', 'EP') + ax('dp', 'DP') +
      '<th>schedule</th><th class="num">micro-batch</th><th>recompute</th><th>state · SP · overlaps</th><th class="num">step time</th><th class="num">tokens/s</th><th class="num">MFU</th>' +
      '<th class="num">peak / usable GiB</th><th>fits</th></tr></thead><tbody>';
    let marked = false;
    r.best.forEach((b, i) => {
      const p = b.plan;
      const cur = !o.stale && !o.partial && !marked && same(p, o.current);
      if (cur) marked = true;
      const td = (k, v, text, cls) => '<td class="' + (cls || 'num') + '" data-k="' + k + '"' + (v === null ? '' : ' data-v="' + e(v) + '"') + '>' + text + '</td>';
      h += '<tr data-i="' + i + '"' + (cur ? ' class="current" aria-current="true"' : '') + (o.stale || o.partial ? '' : ' tabindex="0" title="Apply this plan"') + '>' +
        '<td class="num rank">' + (i + 1) + '</td>' + td('tp', p.tp, p.tp) + td('pp', p.pp, p.pp) + td('cp', p.cp, p.cp) + td('ep', p.ep, p.ep) + td('dp', p.dp, p.dp) +
        td('schedule', p.schedule, e(scheduleText(p)), p.pp > 1 ? 'sched' : 'sched muted') + td('micro_batch', p.micro_batch, p.micro_batch) + td('recompute', p.recompute, e(p.recompute + (p.recompute === 'selective' && p.recompute_modules ? ' (' + p.recompute_modules.join(', ') + ')' : '')), 'rc') +
        td('memory', null, e(memoryText(p)), 'mem') +
        td('step_s', b.step_s, F.seconds(b.step_s)) + td('tokens_per_s', b.tokens_per_s, F.int(b.tokens_per_s), 'num strong') + td('mfu', b.mfu, F.pct(b.mfu)) +
        td('peak_memory_bytes', b.peak_memory_bytes, F.gib(b.peak_memory_bytes, 1) + ' / ' + F.gib(b.capacity_bytes, 1)) +
        td('fits', b.fits, b.fits ? '✓ fits' : 'does not fit', b.fits ? 'ok' : 'bad') + '</tr>';
    });
    return { html: h + '</tbody></table></div>', marked };
  }

  // A running training search: the bar, its text and the best plans so far (p: search-run.js's progress).
  function progress(panel, p, o) {
    const bar = panel.querySelector('.search-progress progress');
    if (!bar || !p) return;
    bar.max = p.items;
    bar.value = p.done;
    const r = p.merged.result;
    const where = p.where === 'worker' ? 'in a worker' : 'on this page, between frames';
    const text = panel.querySelector('.search-progress-text');
    text.textContent = (p.pass === 2 ? 'None fits: searching again for the plans closest to fitting, ' : 'Searching ') + where + ' · ' +
      Math.floor(100 * p.done / Math.max(1, p.items)) + '% of the space · ' + F.int(r.evaluated) + ' plans evaluated, ' + F.int(r.fitting) + ' ' + (r.fitting === 1 ? 'fits' : 'fit');
    text.title = F.int(p.done) + ' of ' + F.int(p.items) + ' groups of plans (a mesh, a schedule, a ZeRO choice and a micro-batch) searched';
    const box = panel.querySelector('.search-partial');
    box.innerHTML = r.best.length ? '<p class="search-msg muted">Best so far:</p>' + table(r, { partial: true, current: o.current }).html : '';
  }

  // "Llama 3 70B on 64 × H100 SXM · seq 8,192 · global batch 64": what was searched, from the config as the core read it.
  function describe(d, gpus) {
    const c = d && d.config;
    if (gpus == null) return '';
    if (!c) return F.int(gpus) + ' GPUs';
    const w = c.workload;
    if (CL.state.serving(w.mode)) {
      return e(c.model.name) + ' on ' + (w.request_rate_per_s > 0 ? 'up to ' : '') + F.int(gpus) + ' × ' + e(c.cluster.gpu) +
        (w.request_rate_per_s > 0 ? ' · ' + F.sig(w.request_rate_per_s) + ' requests/s' : '') + (Array.isArray(w.length_mix) && w.length_mix.length ? ' · lengths ' + e(CL.state.mixText(w.length_mix)) : ' · prompt ' + F.int(w.prompt_len) + ' · output ' + F.int(w.output_len));
    }
    return e(c.model.name) + ' on ' + F.int(gpus) + ' × ' + e(c.cluster.gpu) + ' · seq ' + F.int(w.seq_len) + ' · global batch ' + F.int(w.global_batch);
  }

  // ---- serving -----------------------------------------------------------------------------------
  // The state with a serving point: its TP, PP, EP and batch, its GPU count pinned (DP follows): the
  // GPUs searched, or at a request rate the fewer it may use.
  function applyServing(s, point, gpus) {
    const n = CL.state.clone(s);
    n.example = null;
    n.gpu = null;
    n.gpus = point.gpus || gpus;
    const p = point.plan;
    n.plan.tp = p.tp;
    n.plan.pp = p.pp;
    if (p.ep > 1) n.plan.ep = p.ep; else delete n.plan.ep;
    for (const k of ['dp', 'cp', 'etp', 'vpp', 'layers_per_stage']) delete n.plan[k];
    n.workload.batch = point.batch;
    return n;
  }
  // The state with a disaggregated deployment (core/disaggregation_search.h) in the Disaggregate
  // panel's pools (state.dis, disagg.js): each pool's GPUs, mesh and batch; the plan stays.
  function applyDisaggregated(s, row) {
    const n = CL.state.clone(s);
    n.example = null;
    const pool = (plan, gpus, batch) => Object.assign({ gpus, tp: plan.tp, pp: plan.pp }, plan.ep > 1 ? { ep: plan.ep } : {}, { batch });
    n.dis = { prefill: pool(row.prefill_plan, row.prefill_gpus, row.prefill_batch), decode: pool(row.decode_plan, row.decode_gpus, row.decode_batch) };
    return n;
  }
  // "2 × TP4 · b4": a pool of a deployment, its instances × one instance's mesh and batch
  const poolText = (n, p, batch) => F.int(n) + ' × ' + planText(p, batch).replace(' · batch ', ' · b');
  const sameServing = (pt, cur) => !!cur && ['tp', 'pp', 'ep', 'dp'].every((k) => pt.plan[k] === cur.plan[k]) && pt.batch === cur.workload.batch;
  const planText = (p, batch) => 'TP' + p.tp + (p.pp > 1 ? ' · PP' + p.pp : '') + (p.ep > 1 ? ' · EP' + p.ep : '') + (p.dp > 1 ? ' · DP' + p.dp : '') + ' · batch ' + batch;
  // Limits as typed (ms; '' = none).
  const limitInput = (k, label, v) => '<label class="lim">' + label + ' ≤ <input type="number" min="0" step="any" inputmode="decimal" data-lim="' + k + '" value="' +
    (v > 0 ? e(v) : '') + '" placeholder="none" aria-label="' + label + ' limit in milliseconds"> ms</label>';

  // atRate: the search was at a request rate, where a plan may use fewer GPUs than searched (the
  // rest idle): a GPUs column, in place of the total tokens/s (λ × output length for every plan that
  // keeps up; tokens/s per GPU × GPUs for one that does not).
  function servingTable(list, set, o, marked, atRate) {
    const ax = (k, t) => '<th class="num ax" data-css="--c:' + P.text[k] + '">' + t + '</th>';
    let h = '<div class="scroll"><table class="t search serving' + (o.stale ? ' outdated' : '') + '" data-set="' + set + '"><thead><tr><th class="num">#</th>' +
      ax('tp', 'TP') + ax('pp', 'PP') + ax('ep', 'EP') + ax('dp', 'DP') + (atRate ? '<th class="num">GPUs</th>' : '') + '<th class="num">batch</th><th class="num">TTFT</th><th class="num">TPOT</th>' +
      '<th class="num">tokens/s per user</th><th class="num">tokens/s per GPU</th>' + (atRate ? '' : '<th class="num">total tokens/s</th>') + '<th class="num">in flight</th>' +
      '<th class="num">peak / usable GiB</th><th>limits</th></tr></thead><tbody>';
    list.forEach((b, i) => {
      const p = b.plan;
      const cur = !o.stale && !marked.done && sameServing(b, o.currentConfig);
      if (cur) marked.done = true;
      const td = (k, v, text, cls) => '<td class="' + (cls || 'num') + '" data-k="' + k + '" data-v="' + e(v) + '">' + text + '</td>';
      h += '<tr data-set="' + set + '" data-i="' + i + '"' + (cur ? ' class="current" aria-current="true"' : '') + (o.stale ? '' : ' tabindex="0" title="Apply this plan and batch"') + '>' +
        '<td class="num rank">' + (i + 1) + '</td>' + td('tp', p.tp, p.tp) + td('pp', p.pp, p.pp) + td('ep', p.ep, p.ep) + td('dp', p.dp, p.dp) + (atRate ? td('gpus', b.gpus, F.int(b.gpus)) : '') + td('batch', b.batch, F.int(b.batch)) +
        td('ttft_s', b.ttft_s, F.seconds(b.ttft_s)) + td('tpot_s', b.tpot_s, F.seconds(b.tpot_s)) +
        td('output_tokens_per_s_per_user', b.output_tokens_per_s_per_user, F.fixed(b.output_tokens_per_s_per_user, 1)) +
        td('output_tokens_per_s_per_gpu', b.output_tokens_per_s_per_gpu, F.fixed(b.output_tokens_per_s_per_gpu, 1), 'num strong') +
        (atRate ? '' : td('output_tokens_per_s_total', b.output_tokens_per_s_total, F.int(b.output_tokens_per_s_total))) + td('concurrency', b.concurrency, F.fixed(b.concurrency, 1)) +
        td('peak_memory_bytes', b.peak_memory_bytes, F.gib(b.peak_memory_bytes, 1) + ' / ' + F.gib(b.capacity_bytes, 1)) +
        td('within_limits', b.within_limits, b.within_limits ? '✓ met' : b.saturated ? 'saturated' : 'missed', b.within_limits ? 'ok' : 'bad') + '</tr>';
    });
    return h + '</tbody></table></div>';
  }

  // The disaggregated deployments (core/disaggregation_search.h): each row a prefill pool → a decode
  // pool; a click puts the pools in the Disaggregate panel.
  // atRate: searched at a request rate (the fewest GPUs that serve it first).
  function disaggregatedHtml(d, o, atRate) {
    const counts = F.int(d.meshes) + ' instance meshes · ' + F.int(d.prefill_options) + ' prefill and ' + F.int(d.decode_options) + ' decode options fit · ' +
      F.int(d.pairs) + ' pairs, ' + F.int(d.within_limits) + ' within the limits';
    let h = '<h4 class="search-sub">Disaggregated deployments: prefill pool → decode pool <span class="muted search-dis-counts" data-pairs="' + d.pairs + '">· ' + counts + '</span></h4>';
    if (!d.best.length) return h + '<p class="search-msg bad">No disaggregated deployment fits on these GPUs.</p>';
    if (!d.front_within_limits && d.best[0].saturated) h += '<p class="search-msg bad">None keeps up with the request rate; the deployments that serve the most:</p>';
    else if (!d.front_within_limits) h += '<p class="search-msg bad">None meets the limits; the closest:</p>';
    else if (atRate) h += '<p class="search-msg muted">The fewest GPUs that serve the rate first (the rest idle), then the shortest end-to-end latency.</p>';
    if (d.truncated) h += '<p class="search-msg warn">The enumeration stopped at its bound; some pools were not tried.</p>';
    h += '<div class="scroll"><table class="t search disaggregated' + (o.stale ? ' outdated' : '') + '" data-set="dbest"><thead><tr><th class="num">#</th><th>prefill pool</th><th>decode pool</th>' +
      '<th class="num">GPUs</th><th class="num">TTFT</th><th class="num">TPOT</th><th class="num">tokens/s per user</th><th class="num">tokens/s per GPU</th>' +
      '<th>bound</th><th>limits</th></tr></thead><tbody>';
    d.best.forEach((b, i) => {
      const td = (k, v, text, cls) => '<td class="' + (cls || 'num') + '" data-k="' + k + '" data-v="' + e(v) + '">' + text + '</td>';
      h += '<tr data-set="dbest" data-i="' + i + '"' + (o.stale ? '' : ' tabindex="0" title="Open these pools in the Disaggregate panel"') + '>' +
        '<td class="num rank">' + (i + 1) + '</td>' + td('prefill', b.prefill_instances, e(poolText(b.prefill_instances, b.prefill_plan, b.prefill_batch)), '') +
        td('decode', b.decode_instances, e(poolText(b.decode_instances, b.decode_plan, b.decode_batch)), '') +
        td('gpus', b.prefill_gpus + b.decode_gpus, F.int(b.prefill_gpus) + ' + ' + F.int(b.decode_gpus) + (b.idle_gpus > 0 ? ' <span class="muted">(' + F.int(b.idle_gpus) + ' idle)</span>' : '')) +
        td('ttft_s', b.ttft_s, F.seconds(b.ttft_s)) + td('tpot_s', b.tpot_s, F.seconds(b.tpot_s)) +
        td('output_tokens_per_s_per_user', b.output_tokens_per_s_per_user, F.fixed(b.output_tokens_per_s_per_user, 1)) +
        td('output_tokens_per_s_per_gpu', b.output_tokens_per_s_per_gpu, F.fixed(b.output_tokens_per_s_per_gpu, 1), 'num strong') +
        td('bound', b.bound, e(b.bound === 'kv_transfer' ? 'KV link' : b.bound), '') +
        td('within_limits', b.within_limits, b.within_limits ? '✓ met' : b.saturated ? 'saturated' : 'missed', b.within_limits ? 'ok' : 'bad') + '</tr>';
    });
    return h + '</tbody></table></div><p class="search-foot">' + (o.stale ? '' : 'Click a row or a point of the dashed front to open its pools in the Disaggregate panel. ') +
      '<span class="muted">Pools: instances × one instance\'s mesh and batch; TTFT includes the KV transfer' + (atRate ? ' and the waits for a slot' : '') +
      '; tokens/s per GPU over ' + (atRate ? 'the GPUs each uses.' : 'all the GPUs searched, idle ones included.') + '</span></p>';
  }

  // The disaggregated part of a serving search's answer: its deployments, or why there are none.
  function disaggregatedPart(r, o) {
    if (r.disaggregated_errors) {
      return '<h4 class="search-sub">Disaggregated deployments</h4><p class="search-msg bad">This workload cannot be served disaggregated:</p><ul class="search-errors">' +
        r.disaggregated_errors.map((x) => '<li><code>' + e(x.path || '/') + '</code> ' + e(x.message) + '</li>').join('') + '</ul>';
    }
    return r.disaggregated ? disaggregatedHtml(r.disaggregated, o, r.request_rate_per_s > 0) : '';
  }

  function servingHtml(found, o, close) {
    const out = found.out, lim = found.limits || {};
    const again = '<button type="button" class="again">Search again</button>';
    const limits = '<div class="search-limits">' + limitInput('ttft', 'TTFT', lim.ttft) + limitInput('tpot', 'TPOT', lim.tpot) +
      '<label class="lim"><input type="checkbox" data-dis="1"' + (found.disaggregated ? ' checked' : '') + '> disaggregated deployments too (prefill and decode pools)</label></div>';
    if (!out.ok) {
      return '<div class="search-head"><h3>Best serving plans</h3>' + again + close + '</div>' + limits + '<p class="search-msg bad">' +
        (out.errors.some((x) => x.path === '/cluster/gpus') ? 'The search needs the GPU count to fill: set <b>Cluster › GPUs</b> (or make the plan valid) and search again.' : 'The core could not search this config:') + '</p>' +
        '<ul class="search-errors">' + out.errors.map((x) => '<li><code>' + e(x.path || '/') + '</code> ' + e(x.message) + '</li>').join('') + '</ul>';
    }
    const r = out.result;
    const counts = plural(r.candidates, 'plan × batch', 'plans × batches') + ', ' + F.int(r.valid) + ' valid, ' + F.int(r.fitting) + ' ' + (r.fitting === 1 ? 'fits' : 'fit') + ', ' +
      F.int(r.within_limits) + ' within the limits';
    let h = '<div class="search-head"><h3>Best serving plans <span class="muted">· ' + found.what + '</span></h3>' +
      '<span class="search-counts" data-candidates="' + r.candidates + '" data-valid="' + r.valid + '" data-fitting="' + r.fitting + '" data-within="' + r.within_limits + '">' + counts +
      ' <span class="muted">· searched in ' + F.int(found.ms) + ' ms</span></span>' + close + '</div>' + limits;
    if (o.stale) h += '<p class="search-msg warn">The config changed since this search (model, cluster, GPUs or workload): these plans were ranked for the previous one. ' + again + '</p>';
    if (!r.fitting) return h + '<p class="search-msg bad">No plan fits in memory on these GPUs, at any batch: try more GPUs, fp8 weights or a shorter context.</p>' + disaggregatedPart(r, o);
    if (!r.within_limits && r.best.length && r.best[0].saturated) h += '<p class="search-msg bad">No plan keeps up with the request rate (each one\'s queue grows without bound). Below, the plans that serve the most; the plot shows the front of every plan that fits.</p>';
    else if (!r.within_limits) h += '<p class="search-msg bad">No plan meets the limits. Below, the plans closest to them; the plot shows the front of every plan that fits.</p>';
    if (r.truncated) h += '<p class="search-msg warn">The enumeration stopped at its bound; some plans were not tried.</p>';
    h += '<div class="pareto-wrap"><canvas class="pareto" role="img" aria-label="Pareto front: output tokens/s per GPU against output tokens/s per user, ' +
      r.front.length + ' points; click a point to apply its plan"></canvas></div>';
    const marked = { done: false }, atRate = r.request_rate_per_s > 0;
    const within = found.limits && (found.limits.ttft || found.limits.tpot) ? ' within the limits' : '';
    h += '<h4 class="search-sub">' + (atRate ? 'Fewest GPUs that serve ' + F.sig(r.request_rate_per_s) + ' requests/s' + within + ' <span class="muted">(of ' + F.int(r.gpus) +
      ', the rest idle; then the shortest end-to-end latency)</span>' : 'Most output tokens/s per GPU' + within) + '</h4>' + servingTable(r.best, 'best', o, marked, atRate);
    h += '<h4 class="search-sub">Pareto front, most tokens/s per user first</h4>' + servingTable(r.front, 'front', o, marked, atRate);
    const note = o.stale ? '' : (marked.done ? 'The highlighted row is the current plan and batch. ' : '') + 'Click a row or a point of the front to apply it.';
    h += '<p class="search-foot">' + note + ' <span class="muted">batch: most sequences per engine step (per micro-batch with PP); in flight: sequences per replica; with EP the attention replicas are EP × DP; the config\'s dtypes, lengths and token budget kept.</span></p>';
    return h + disaggregatedPart(r, o);
  }

  // The plot: the core's figure (core/scene_pareto.h) painted on the panel's canvas.
  function drawPlot(panel, found) {
    const canvas = panel.querySelector('canvas.pareto');
    const f = found && found.out.ok && found.out.result.figure;
    if (!canvas || !f) return;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(f.width * dpr);
    canvas.height = Math.round(f.height * dpr);
    canvas.style.width = f.width + 'px';
    canvas.style.height = f.height + 'px';
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, f.width, f.height);
    CL.figure.draw(ctx, f, null, null, 0, 0);
  }
  // The front point under a pointer event on the plot (within 8 px of a dot), or null.
  function pointAt(canvas, ev, found) {
    const f = found && found.out.ok && found.out.result.figure;
    if (!f) return null;
    const box = canvas.getBoundingClientRect();
    const x = (ev.clientX - box.left) * (f.width / box.width), y = (ev.clientY - box.top) * (f.height / box.height);
    let best = null, dist = 8;
    for (const r of f.rects) {
      if (r.hit !== 'point' && r.hit !== 'disaggregated') continue;
      const d = Math.hypot(x - (r.x + r.w / 2), y - (r.y + r.h / 2));
      if (d <= dist) { dist = d; best = r; }
    }
    if (!best) return null;
    const res = found.out.result;
    // a deployment of the disaggregated front carries its pools (prefill_plan, decode_plan)
    return best.hit === 'point' ? res.front[best.begin] : res.disaggregated ? res.disaggregated.front[best.begin] || null : null;
  }
  // The width the plot is laid out for: the panel's, 280 to 1,000 px.
  const plotWidth = (panel) => Math.max(280, Math.min(1000, Math.floor((panel.clientWidth || 800) - 26)));

  CL.search = { CHOSEN, SAME, config, key, searched, modeOf, apply, applyServing, applyDisaggregated, poolText, same, html, progress, describe, scheduleText, drawPlot, pointAt, plotWidth, planText };
})(window.CL = window.CL || {});
