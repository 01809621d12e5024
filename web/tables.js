// tables.js: the live tables and the headline, as HTML from the derived result. Formatting only:
// every number is a field of the core's result (shares of the step too: time.shares, and of TTFT
// and TPOT: inference.shares).
// Cells carry data-* attributes with the raw core value so tests can compare them with the CLI's
// JSON exactly.
(function (CL) {
  'use strict';
  const F = CL.fmt, P = CL.palette, e = F.escape;

  const KINDS = [
    ['weights_bytes', 'weights', 'weights'],
    ['grads_bytes', 'gradients', 'grads'],
    ['optimizer_bytes', 'optimizer', 'optimizer'],
    ['activations_bytes', 'activations', 'activations'],
  ];
  const KINDS_INFER = [
    ['weights_bytes', 'weights', 'weights'],
    ['kv_cache_bytes', 'KV cache', 'kv'],
    ['activations_bytes', 'activations', 'activations'],
  ];
  const isInfer = (r) => CL.state.serving(r.mode);
  const kindsOf = (r) => (isInfer(r) ? KINDS_INFER : KINDS);
  const sw = (color, hatch) => '<i class="sw' + (hatch ? ' hatch' : '') + '" data-css="--c:' + color + '"></i>';
  const raw = (v) => ' data-v="' + v + '"';
  const gibCell = (v, cls) => '<td class="num' + (cls ? ' ' + cls : '') + '"' + raw(v) + '>' + F.gib(v, 2) + '</td>';

  function stageLabel(r, i) {
    const st = r.placement.stages[i];
    return st.chunks.map((c) => F.layers(c[0], c[1]).replace('layers ', '').replace('layer ', '')).join(', ') +
      (st.embedding ? ' +emb' : '') + (st.output ? ' +out' : '');
  }

  // ---- headline -------------------------------------------------------------------------------
  function headline(d) {
    const r = d.good && d.good.r;
    if (!r) return '<div class="metric"><span class="k">No valid plan yet</span></div>';
    const mem = r.memory.per_stage[r.memory.peak_stage];
    const fits = r.memory.fits;
    const hbm = r.config.cluster.hbm_GiB;
    const m = (k, v, sub, cls, key) => '<div class="metric' + (cls ? ' ' + cls : '') + '" data-key="' + key + '"><span class="k">' + k +
      '</span><span class="v">' + v + '</span><span class="s">' + sub + '</span></div>';
    if (isInfer(r)) {
      const inf = r.inference, w = r.config.workload;
      return [
        // Saturated (requests arrive faster than they are served): the wait for a slot grows without
        // bound, so TTFT has no value; the card keeps the time once a request is admitted.
        inf.saturated ? m('Time to first token', 'unbounded', 'saturated: ' + F.sig(w.request_rate_per_s) + ' requests/s arrive, ' + F.sig(inf.requests_per_s) +
          ' served; ' + F.seconds(inf.ttft_s) + ' once admitted', 'bad', 'ttft')
          : m('Time to first token', F.seconds(inf.ttft_s), inf.batching === 'static' ? 'prefill of ' + F.int(w.batch) + ' × ' + F.int(w.prompt_len) + ' prompt tokens'
            : inf.length_classes ? 'mean over a mix of ' + inf.length_classes.ttft_s.length + ' lengths · ' + F.sig(inf.prefill_steps) + ' step' + (inf.prefill_steps > 1 ? 's' : '')
            : F.sig(inf.prefill_steps) + ' step' + (inf.prefill_steps > 1 ? 's' : '') + ' of ' + F.int(w.prompt_len) + ' prompt tokens', '', 'ttft'),
        m('Time per output token', F.seconds(inf.tpot_s), F.sig(inf.output_tokens_per_s_per_user) + ' tokens/s per user', '', 'tpot'),
        m('Throughput', F.short(inf.output_tokens_per_s_total) + ' tokens/s', F.sig(inf.output_tokens_per_s_per_gpu) + ' per GPU · ' + F.sig(inf.concurrency) + ' in flight × ' +
          F.int(inf.replicas) + ' replica' + (inf.replicas > 1 ? 's' : ''), '', 'tps'),
        m('Peak memory · stage ' + (r.memory.peak_stage + 1), F.gib(mem.total_bytes, 1) + ' / ' + F.gib(mem.capacity_bytes, 1) + ' GiB',
          (fits ? 'fits' : F.gib(r.memory.overflow_bytes, 1) + ' GiB over') + ' · max batch ' + F.int(inf.max_batch_that_fits), fits ? 'ok' : 'bad', 'mem'),
      ].join('');
    }
    // A plan that does not fit has no step time, MFU or throughput to show as results: the headline
    // says so, and keeps what it would reach as a muted "if it fit".
    if (!fits)
      return [
        m('Step time', 'does not fit', 'if it fit: ' + F.seconds(r.time.step_s) + ' · ' + e(r.schedule.name), 'nofit', 'step'),
        m(CL.terms.mark('MFU', 'mfu'), 'does not fit', 'if it fit: ' + F.pct(r.mfu) + ' of ' + e(r.peak.name), 'nofit', 'mfu'),
        m('Throughput', 'does not fit', 'if it fit: ' + F.short(r.throughput.tokens_per_s) + ' tokens/s', 'nofit', 'tps'),
        m('Peak memory · stage ' + (r.memory.peak_stage + 1), F.gib(mem.total_bytes, 1) + ' / ' + F.gib(mem.capacity_bytes, 1) + ' GiB',
          F.gib(r.memory.overflow_bytes, 1) + ' GiB over · usable, of ' + F.fixed(hbm, 1) + ' GiB HBM', 'bad', 'mem'),
      ].join('');
    return [
      m('Step time', F.seconds(r.time.step_s), e(r.schedule.name) + ' · ' + CL.terms.mark('bubble', 'bubble') + ' ' + F.pct(r.schedule.bubble_fraction), '', 'step'),
      m(CL.terms.mark('MFU', 'mfu'), F.pct(r.mfu), 'of ' + e(r.peak.name), '', 'mfu'),
      m('Throughput', F.short(r.throughput.tokens_per_s) + ' tokens/s', F.int(r.throughput.tokens_per_s_per_gpu) + ' tokens/s per GPU', '', 'tps'),
      m('Peak memory · stage ' + (r.memory.peak_stage + 1), F.gib(mem.total_bytes, 1) + ' / ' + F.gib(mem.capacity_bytes, 1) + ' GiB',
        (fits ? 'fits' : F.gib(r.memory.overflow_bytes, 1) + ' GiB over') + ' · usable, of ' + F.fixed(hbm, 1) + ' GiB HBM', fits ? 'ok' : 'bad', 'mem'),
    ].join('');
  }

  // One line for embedded views.
  function headlineCompact(d) {
    const r = d.good && d.good.r;
    if (!r) return '';
    const mem = r.memory.per_stage[r.memory.peak_stage];
    if (isInfer(r)) {
      const inf = r.inference;
      return '<div class="compact">TTFT <b>' + F.seconds(inf.ttft_s) + '</b> · TPOT <b>' + F.seconds(inf.tpot_s) + '</b> (' + F.sig(inf.output_tokens_per_s_per_user) +
        ' tokens/s per user) · <b>' + F.short(inf.output_tokens_per_s_total) + '</b> tokens/s · <b class="' + (r.memory.fits ? 'ok' : 'bad') + '">' + F.gib(mem.total_bytes, 1) +
        ' / ' + F.gib(mem.capacity_bytes, 1) + ' GiB</b> <span class="muted">· ' + e(r.config.model.name) + ' on ' + F.int(r.gpus) + ' × ' + e(r.config.cluster.gpu) + '</span></div>';
    }
    return '<div class="compact"><b>' + F.seconds(r.time.step_s) + '</b> step · <b>' + F.pct(r.mfu) + '</b> MFU <span class="muted">of ' + e(r.peak.name) +
      '</span> · <b>' + F.short(r.throughput.tokens_per_s) + '</b> tokens/s · <b class="' + (r.memory.fits ? 'ok' : 'bad') + '">' + F.gib(mem.total_bytes, 1) +
      ' / ' + F.gib(mem.capacity_bytes, 1) + ' GiB</b> peak' + (r.memory.fits ? '' : ' <span class="bad">(does not fit)</span>') +
      ' <span class="muted">· ' + e(r.config.model.name) + ' on ' + F.int(r.gpus) + ' × ' + e(r.config.cluster.gpu) + '</span></div>';
  }

  // ---- GPU equation ---------------------------------------------------------------------------
  function equation(s, d) {
    const r = d.good && d.good.r;
    // an invalid plan: the config as the core read it (carried by the error result), else the state
    const plan = d.ok ? r.config.plan : d.config ? d.config.plan : Object.assign({ tp: 1, pp: 1, cp: 1, ep: 1 }, s.plan);
    const gpus = d.ok ? r.gpus : (s.gpus != null ? s.gpus : '?');
    const dp = d.ok || d.config ? plan.dp : (s.plan.dp != null ? s.plan.dp : '?');
    const t = (ax, v) => '<span class="term" data-css="--c:' + P.text[ax] + '"><small>' + ax.toUpperCase() + '</small>' + (typeof v === 'number' ? F.int(v) : '?') + '</span>';
    const x = '<span class="op">×</span>';
    const folding = plan.etp > 0;
    let html = '<span class="gpus"><small>GPUs</small>' + (typeof gpus === 'number' ? F.int(gpus) : '?') + '</span><span class="op">=</span>';
    if (!folding) html += [t('tp', plan.tp), t('pp', plan.pp), t('cp', plan.cp), t('ep', plan.ep), t('dp', dp)].join(x);
    else {
      html += [t('tp', plan.tp), t('cp', plan.cp), t('dp', dp), t('pp', plan.pp)].join(x);
      if (d.ok) html += '<span class="op">=</span>' + [t('etp', r.mesh.etp), t('ep', plan.ep), t('edp', r.mesh.edp), t('pp', plan.pp)].join(x);
    }
    if (!d.ok && !d.pending) html += '<span class="eq-bad" title="the plan is invalid; see the marked fields">invalid</span>';
    return html;
  }

  // ---- memory ---------------------------------------------------------------------------------
  function memoryBar(st, r) {
    const cap = Math.max(st.capacity_bytes, st.total_bytes);
    let html = '<div class="membar" title="per GPU, stage ' + (st.stage + 1) + '">';
    for (const [k, , c] of kindsOf(r)) html += '<span data-css="width:' + (100 * st[k] / cap) + '%;background:' + P.state[c] + '"></span>';
    html += '<i class="cap" data-css="left:' + (100 * st.capacity_bytes / cap) + '%"></i></div>';
    return html;
  }

  function memoryPeak(r) {
    const st = r.memory.per_stage[r.memory.peak_stage];
    const mesh = r.mesh;
    let h = '<h3>Memory per GPU <span class="muted">· stage ' + (st.stage + 1) + ' of ' + r.memory.per_stage.length + ', the peak</span></h3>';
    h += memoryBar(st, r);
    h += '<table class="t mem-peak" data-stage="' + st.stage + '"><tbody>';
    const inflight = st.in_flight_micro_batches;
    for (const [k, label, c] of kindsOf(r)) {
      let note = '';
      if (k === 'activations_bytes' && inflight !== undefined) note = F.gib(st.activation_bytes_per_micro_batch, 2) + ' GiB × ' + F.sig(inflight) + ' in flight';
      if (k === 'weights_bytes' && st.dense_params !== undefined) note = F.short(st.dense_params + st.expert_params) + ' params' + (st.expert_params > 0 ? ' (' + F.short(st.expert_params) + ' expert)' : '');
      if (k === 'kv_cache_bytes') {
        note = F.sig(r.inference.concurrency) + ' sequences of ' + (r.inference.length_classes ? e(CL.state.mixText(r.config.workload.length_mix)) + ' (prompt/output)'
          : F.int(r.config.workload.prompt_len) + ' + ' + F.int(r.config.workload.output_len) + ' tokens');
      }
      h += '<tr data-kind="' + c + '"><th>' + sw(P.state[c]) + label + '</th>' + gibCell(st[k]) + '<td class="muted">GiB</td><td class="note">' + note + '</td></tr>';
    }
    h += '<tr class="total" data-kind="total"><th>total</th>' + gibCell(st.total_bytes) + '<td class="muted">GiB</td><td class="note">of ' +
      F.gib(st.capacity_bytes, 2) + ' GiB usable</td></tr>';
    h += '<tr class="' + (st.fits ? 'ok' : 'bad') + '"><th>' + (st.fits ? 'fits' : 'overflow') + '</th><td class="num"' + raw(r.memory.overflow_bytes) + '>' +
      (st.fits ? '✓' : '+' + F.gib(r.memory.overflow_bytes, 2)) + '</td><td class="muted">' + (st.fits ? '' : 'GiB') + '</td><td class="note">' +
      (st.fits ? (isInfer(r) ? 'room for a batch of ' + F.int(r.inference.max_batch_that_fits) + (r.inference.micro_batches > 1 ? ' per micro-batch' : ' per replica') +
          ' · KV cache ' + F.pct(r.inference.kv_cache_occupancy) + ' occupied' : 'headroom ' + F.gib(st.capacity_bytes - st.total_bytes, 2) + ' GiB')
        : isInfer(r) ? 'more TP/PP, or fp8 weights' : 'try ZeRO, recompute, more PP/TP') + '</td></tr>';
    h += '</tbody></table>';
    void mesh;
    return h;
  }

  function memoryStages(r) {
    const rows = r.memory.per_stage;
    const kinds = kindsOf(r), train = !isInfer(r);
    let h = '<h3>Memory per stage <span class="muted">· GiB per GPU</span></h3><div class="scroll" tabindex="0" role="region" aria-label="Memory per stage"><table class="t mem-stages"><thead><tr>' +
      '<th>stage</th><th>layers</th>' + kinds.map(([, l, c]) => '<th class="num">' + sw(P.state[c]) + l + '</th>').join('') +
      (train ? '<th class="num">' + CL.terms.mark('in flight', 'inflight') + '</th>' : '') + '<th class="num">total</th><th class="num">usable</th><th>fits</th></tr></thead><tbody>';
    for (const st of rows) {
      h += '<tr data-stage="' + st.stage + '"' + (st.stage === r.memory.peak_stage ? ' class="peak"' : '') + '><td>' + (st.stage + 1) +
        (st.stage === r.memory.peak_stage ? ' <small class="tag">peak</small>' : '') + '</td><td>' + stageLabel(r, st.stage) + '</td>' +
        kinds.map(([k]) => gibCell(st[k])).join('') + (train ? '<td class="num"' + raw(st.in_flight_micro_batches) + '>' + F.sig(st.in_flight_micro_batches) + '</td>' : '') +
        gibCell(st.total_bytes, 'strong') + gibCell(st.capacity_bytes) + '<td class="' + (st.fits ? 'ok' : 'bad') + '">' +
        (st.fits ? 'yes' : 'no, +' + F.gib(st.total_bytes - st.capacity_bytes, 2)) + '</td></tr>';
    }
    h += '</tbody></table></div>';
    // Stage balancing (core/stage_balance.h) for a training pipeline whose split is per-stage counts.
    const plan = r.config.plan;
    if (train && plan.pp > 1 && !plan.embedding_in_pipeline_split && !plan.loss_in_pipeline_split) {
      h += '<p class="balance"><button type="button" class="balance-run">Balance the stages</button> <span class="muted">' +
        'moves layers between stages, each split judged by the whole model, to shorten the step and fit</span></p>';
    }
    return h;
  }

  // The balance line under "Memory per stage" for the core's answer (out: balance_json; null: not run).
  function balanceLine(box, out, current) {
    if (!out) return;
    const el = (tag, text, cls) => Object.assign(document.createElement(tag), { textContent: text, className: cls || '' });
    if (out.pending) box.setAttribute('aria-busy', 'true'); else box.removeAttribute('aria-busy');
    if (out.pending) { box.replaceChildren(el('span', 'Balancing… (loading the rest of the cutlab core, core-full.js)', 'muted')); return; }
    if (!out.ok) { box.replaceChildren(el('span', 'The core could not balance this plan: ' + out.errors.map((x) => x.path + ' ' + x.message).join('; '), 'bad')); return; }
    const b = out.result, now = b.current, to = b.suggested;
    const n = ' (' + F.int(b.evaluations) + ' splits evaluated)';
    if (!b.improved) {
      box.replaceChildren(el('span', 'Balanced: no move of one layer ' + (now.fits ? 'shortens the step' : 'lowers the peak memory') + n + '.', 'muted'));
      return;
    }
    const diff = to.step_s / now.step_s - 1;
    const same = JSON.stringify(current) === JSON.stringify(to.layers_per_stage);
    box.replaceChildren('Suggested layers per stage: ', el('b', to.layers_per_stage.join(', ')), ' · step ' + F.seconds(now.step_s) + ' → ',
      el('b', F.seconds(to.step_s)), ' (' + (diff <= 0 ? '−' : '+') + F.pct(Math.abs(diff)) + ')', ' · ',
      el('span', to.fits ? 'fits' : 'does not fit', to.fits ? 'ok' : 'bad'), now.fits ? '' : ' (now: does not fit)', ' ',
      same ? el('span', 'applied', 'muted') : Object.assign(el('button', 'Apply', 'balance-apply'), { type: 'button' }), el('span', n, 'muted'));
  }

  // ---- communication --------------------------------------------------------------------------
  function comm(r) {
    let h = '<h3>Communication ' + (isInfer(r) ? 'per request batch' : 'per step') + ' <span class="muted">· ' +
      (r.comm_stage !== undefined ? 'one GPU of stage ' + (r.comm_stage + 1) + ', the busiest' : 'one GPU: prefill and one decode step') + '</span></h3>' +
      '<div class="scroll" tabindex="0" role="region" aria-label="Communication per step"><table class="t comm"><thead><tr><th>axis</th><th>collective</th><th>what</th><th class="num">group</th><th>link</th>' +
      '<th class="num">message</th><th class="num">calls</th><th class="num">bytes</th><th class="num">time</th><th class="num">exposed</th></tr></thead><tbody>';
    r.comm.forEach((c, i) => {
      h += '<tr data-i="' + i + '"><td><span class="axis" data-css="--c:' + (P.text[c.axis] || P.ink.muted) + '">' + e(c.axis.toUpperCase()) + '</span></td><td>' +
        e(c.collective) + '</td><td class="what">' + e(c.what) + '</td><td class="num">' + c.group_size + '</td><td><span class="link ' + c.link + '">' +
        e(CL.state.linkLabel(r, c.link)) + '</span></td><td class="num"' + raw(c.message_bytes) + '>' + F.bytes(c.message_bytes) +
        '</td><td class="num"' + raw(c.calls) + '>' + F.int(c.calls) + '</td><td class="num"' + raw(c.bytes) + '>' + F.bytes(c.bytes) +
        '</td><td class="num"' + raw(c.time_s) + '>' + F.seconds(c.time_s) + '</td><td class="num' + (c.exposed_s > 0 ? ' warn' : '') + '"' + raw(c.exposed_s) + '>' +
        (c.exposed_s > 0 ? F.seconds(c.exposed_s) : 'hidden') + '</td></tr>';
    });
    if (!r.comm.length) h += '<tr><td colspan="10" class="muted">no communication: one GPU</td></tr>';
    return h + '</tbody></table></div>';
  }

  // ---- time -----------------------------------------------------------------------------------
  const PARTS = [
    ['compute_s', 'compute (F, B, W)', P.op.B],
    ['recompute_s', 'recompute', P.op.F],
    ['tp_exposed_s', 'TP exposed', P.axis.tp],
    ['cp_exposed_s', 'CP exposed', P.axis.cp],
    ['ep_exposed_s', 'EP exposed', P.axis.ep],
    ['ep_sm_slowdown_s', 'compute slowed by EP kernels’ SMs', P.tone(P.axis.ep, 0.2)],
    ['offload_exposed_s', 'offload exposed', P.state.activations],
    ['pp_bubble_s', 'pipeline bubble + p2p', P.axis.pp],
    ['dp_exposed_s', 'DP exposed', P.axis.dp],
    ['optimizer_s', 'optimizer step', P.state.optimizer],
  ];
  // Every part the core reports, in the core's order of PARTS, then any part this page does not know yet.
  function partsOf(b) {
    const known = PARTS.filter(([k]) => k in b);
    const extra = Object.keys(b).filter((k) => !PARTS.some(([p]) => p === k)).map((k) => [k, k.replace(/_s$/, '').replace(/_/g, ' '), '#adb5bd']);
    return known.concat(extra);
  }
  // Shares of the step come from the core (time.shares, fractions that add up to 1).
  const share = (r, k) => {
    const sh = r.time.shares;
    const v = sh && sh[k.replace(/_s$/, '')];
    return typeof v === 'number' ? v : null;
  };
  function time(r) {
    const b = r.time.breakdown, step = r.time.step_s;
    const parts = partsOf(b);
    let h = '<h3>Step time <span class="muted">· ' + F.seconds(step) + ', ' + F.short(r.throughput.tokens_per_s) + ' tokens/s, MFU ' + F.pct(r.mfu) + '</span></h3>';
    h += '<div class="timebar">';
    for (const [k, l, c] of parts) if (b[k] > 0 && share(r, k) !== null) h += '<span data-css="width:' + (100 * share(r, k)) + '%;background:' + c + '" title="' + l + '"></span>';
    h += '</div><table class="t time"><tbody>';
    for (const [k, l, c] of parts) {
      if (!(b[k] > 0)) continue;
      const sh = share(r, k);
      h += '<tr data-part="' + k + '"><th>' + sw(c) + l + '</th><td class="num"' + raw(b[k]) + '>' + F.seconds(b[k]) + '</td><td class="num muted"' +
        (sh !== null ? ' data-share="' + sh + '">' + F.pct(sh) : '>') + '</td></tr>';
    }
    h += '<tr class="total"><th>step</th><td class="num"' + raw(step) + '>' + F.seconds(step) + '</td><td class="num muted">100%</td></tr>';
    h += '<tr><th>tokens/s</th><td class="num"' + raw(r.throughput.tokens_per_s) + '>' + F.int(r.throughput.tokens_per_s) + '</td><td></td></tr>';
    h += '<tr><th>' + CL.terms.mark('MFU', 'mfu') + '</th><td class="num"' + raw(r.mfu) + '>' + F.pct(r.mfu) + '</td><td class="muted note">of ' + e(r.peak.name) + '</td></tr>';
    h += '<tr><th>' + CL.terms.mark('HFU', 'hfu') + '</th><td class="num"' + raw(r.hfu) + '>' + F.pct(r.hfu) + '</td><td class="muted note">incl. recompute</td></tr>';
    return h + '</tbody></table>';
  }

  // ---- serving latency ------------------------------------------------------------------------
  // The same parts for TTFT and TPOT (a static prefill has only compute and communication).
  const DECODE = [['weights_s', 'read weight shards', P.state.weights], ['kv_cache_s', 'read KV cache', P.state.kv], ['compute_s', 'compute (beyond the reads)', P.op.B],
    ['tp_s', 'TP all-reduces + logits gather', P.axis.tp], ['ep_s', 'EP dispatch + combine', P.axis.ep], ['ep_wait_s', 'EP wait (slowest rank)', P.tone(P.axis.ep, 0.2)], ['pp_s', 'PP hand-offs and waits', P.axis.pp], ['draft_s', 'draft head', P.op.F], ['host_s', 'host (per sequence)', P.op.W], ['queue_s', 'queue (waiting for a slot)', P.tone(P.op.W, 0.35)], ['step_wait_s', 'waiting for the step in progress', P.tone(P.op.W, 0.6)]];
  const PREFILL = DECODE;
  // Shares of TTFT and TPOT come from the core (inference.shares.prefill / .decode, by part).
  function latency(r) {
    const inf = r.inference;
    const shareOf = (key, k) => inf.shares[key][k.replace(/_s$/, '')];
    const part = (title, total, obj, list, key, sk) => {
      let h = '<tr class="total" data-part="' + key + '"><th>' + title + '</th><td class="num"' + raw(total) + '>' + F.seconds(total) + '</td><td></td></tr>';
      for (const [k, l, c] of list) {
        if (!(obj[k] > 0)) continue;
        const sh = shareOf(sk, k);
        h += '<tr data-part="' + key + '.' + k + '"><th>' + sw(c) + l + '</th><td class="num"' + raw(obj[k]) + '>' + F.seconds(obj[k]) + '</td><td class="num muted" data-share="' + sh + '">' + F.pct(sh) + '</td></tr>';
      }
      return h;
    };
    const bar = (label, obj, list, sk) => '<div class="barrow"><span>' + label + '</span><div class="timebar">' + list.filter(([k]) => obj[k] > 0).map(([k, l, c]) => '<span data-css="width:' + (100 * shareOf(sk, k)) + '%;background:' + c + '" title="' + l + '"></span>').join('') + '</div></div>';
    let h = '<h3>Latency <span class="muted">· TTFT ' + F.seconds(inf.ttft_s) + ', TPOT ' + F.seconds(inf.tpot_s) + '</span></h3>';
    h += bar('TTFT', inf.prefill, PREFILL, 'prefill') + bar('TPOT', inf.decode, DECODE, 'decode');
    h += '<table class="t time"><tbody>' + part('time to first token', inf.ttft_s, inf.prefill, PREFILL, 'ttft', 'prefill') + part('time per output token', inf.tpot_s, inf.decode, DECODE, 'tpot', 'decode');
    const row = (k, v, txt, note) => '<tr><th>' + k + '</th><td class="num"' + raw(v) + '>' + txt + '</td><td class="muted note">' + (note || '') + '</td></tr>';
    h += row('end to end', inf.e2e_latency_s, F.seconds(inf.e2e_latency_s), 'TTFT + (output − 1) × TPOT' + (inf.length_classes ? '; TTFT and end to end: means over requests' : ''));
    // A mix of lengths: each class's own first token and end to end (every class decodes at the TPOT
    // above); class i of workload.length_mix, its share of the requests normalised.
    const lc = inf.length_classes, mix = r.config.workload.length_mix;
    if (lc) {
      const total = mix.reduce((a, c) => a + c.share, 0);
      mix.forEach((c, i) => {
        const ttft = lc.ttft_s[i], e2e = lc.e2e_latency_s[i], steps = lc.prefill_steps[i];
        h += '<tr data-class="' + c.prompt_len + '/' + c.output_len + '"><th>TTFT · ' + F.int(c.prompt_len) + '/' + F.int(c.output_len) + ' (' + F.pct(c.share / total) + ')</th><td class="num"' +
          raw(ttft) + '>' + F.seconds(ttft) + '</td><td class="muted note"><span' + raw(e2e) + '>' + F.seconds(e2e) + '</span> end to end · first token after ' +
          F.sig(steps) + ' step' + (steps > 1 ? 's' : '') + '</td></tr>';
      });
    }
    h += row('tokens/s per user', inf.output_tokens_per_s_per_user, F.sig(inf.output_tokens_per_s_per_user));
    h += row('tokens/s per replica', inf.output_tokens_per_s_per_replica, F.int(inf.output_tokens_per_s_per_replica), F.int(inf.replicas) + ' replica' + (inf.replicas > 1 ? 's' : ''));
    h += row('tokens/s in total', inf.output_tokens_per_s_total, F.int(inf.output_tokens_per_s_total), F.sig(inf.output_tokens_per_s_per_gpu) + ' per GPU');
    const waves = (n) => F.int(n) + ' wave' + (n > 1 ? 's' : '');
    if (inf.run_s > 0) h += row('the run', inf.run_s, F.seconds(inf.run_s), (inf.run_waves > 0 ? waves(inf.run_waves) + ' of sequences started together'
      : 'mixed lengths finish apart: no waves; the engine\'s schedule replayed step by step') + '; throughputs are the run\'s');
    if (inf.run_s > 0 && inf.run_one_more_wave_s > 0) h += row('spare before another wave', inf.run_spare_sequences, F.int(inf.run_spare_sequences) + ' seq.', 'KV room beyond the fewest in flight for ' + waves(inf.run_waves) + '; with less, ' + waves(inf.run_waves + 1) + ': throughput ' + F.signedPct(inf.run_s / inf.run_one_more_wave_s - 1));
    h += row('requests/s', inf.requests_per_s, F.sig(inf.requests_per_s), inf.saturated ? 'saturated: the queue grows' : 'all replicas');
    if (inf.instances > 1) {
      const g = r.gpus / inf.instances, where = g > r.placement.gpus_per_node ? 'on whole nodes' : 'in one node', left = inf.instances - inf.instances_whole;
      h += row('instances', inf.instances, F.int(inf.instances) + ' × ' + F.int(g) + ' GPUs', left > 0
        ? F.int(inf.instances_whole) + ' each ' + where + '; ' + F.int(left) + ' straddling nodes (the latencies above are ' + (left > 1 ? 'theirs' : 'its') + ')'
        : 'each ' + where);
    }
    h += row('in flight', inf.concurrency, F.sig(inf.concurrency), 'sequences per replica, limited by ' + inf.concurrency_limit.replace('_', ' '));
    h += row('stage idle', inf.stage_idle_fraction, F.pct(inf.stage_idle_fraction), inf.micro_batches > 1 ? inf.micro_batches + ' micro-batches in flight' : 'while a step walks the pipeline');
    h += row('KV cache per token', inf.kv_cache_bytes_per_token, F.bytes(inf.kv_cache_bytes_per_token), 'whole model');
    h += row('KV cache in use', inf.kv_cache_occupancy, F.pct(inf.kv_cache_occupancy), F.gib(inf.kv_cache_used_bytes, 2) + ' GiB per GPU of the peak stage');
    h += row('max batch that fits', inf.max_batch_that_fits, F.int(inf.max_batch_that_fits), inf.micro_batches > 1 ? 'per micro-batch' : 'per replica');
    const held = r.calibration;  // the cluster preset's serving fit as given (core/presets.h), else absent
    if (held) {
      h += row('held-out error', held.serving_held_out_percent / 100, F.fixed(held.serving_held_out_percent, 1) + '%',
        'mean, ' + (held.serving_held_out_family === 'pooled' ? 'a GPU' : 'a model') + ' the fit has not seen; fitted to ' + e(held.fitted_to));
    }
    return h + '</tbody></table>';
  }

  // ---- the five axes --------------------------------------------------------------------------
  function commSummary(r, axes) {
    const list = r.comm.filter((c) => axes.includes(c.axis));
    if (!list.length) return '<span class="muted">none</span>';
    const kinds = Array.from(new Set(list.map((c) => c.collective))).join(' + ');
    return e(kinds) + '<br><span class="muted">' + list.map((c) => F.bytes(c.bytes) + ' in ' + F.seconds(c.time_s) +
      (c.exposed_s > 0 ? ' (' + F.seconds(c.exposed_s) + ' exposed)' : ', hidden')).join('; ') + '</span>';
  }
  function crosses(r, axis) {
    const g = r.placement.groups.find((x) => x.axis === axis);
    if (!g || g.size <= 1) return '<span class="muted">—</span>';
    if (g.nodes_spanned > 1) return '<b class="' + (axis === 'tp' || axis === 'etp' ? 'bad' : 'yes') + '">yes</b> · ' + g.nodes_spanned + ' nodes, ' +
      g.members_per_node + ' per node · scale-out';
    return 'no · inside one node · ' + e(CL.state.linkLabel(r, 'nvlink'));
  }
  function axes(d) {
    const r = d.r, m = r.config.model, plan = r.config.plan, w = r.config.workload;
    const serve = isInfer(r);
    // GPU 0 (the core's gpu()): coordinate 0 on every axis, so TP rank 0, CP rank 0, EP rank 0 and ETP rank 0.
    const g0 = d.gpu(0);
    const rows = [];
    const ax = (key, name) => '<span class="axis" data-css="--c:' + P.text[key] + '">' + name + '</span>';
    rows.push([ax('tp', 'TP' + (plan.sp ? ' + SP' : '')) + ' = ' + plan.tp,
      'every weight matrix inside every layer: ' + m.heads + ' heads, ' + m.kv_heads + ' KV heads' + (m.ffn_hidden ? ', ' + F.int(m.ffn_hidden) + ' FFN columns' : ''),
      g0 ? (plan.tp > 1 ? '1/' + plan.tp + ' slice of every matrix: ' : 'every matrix whole: ') + 'heads ' + F.span(g0.heads[0], g0.heads[1]) +
        ', KV ' + F.span(g0.kv_heads[0], g0.kv_heads[1]) + (m.ffn_hidden ? ', FFN ' + F.span(g0.ffn[0], g0.ffn[1]) : '') + ' <span class="muted">(GPU 0)</span>' : '',
      commSummary(r, ['tp']), crosses(r, 'tp'), serve ? 'per-user latency: each GPU reads 1/' + plan.tp + ' of the weights per token' : 'per-user latency, memory per GPU', 'tp']);
    const st0 = r.placement.stages[0];
    const counts = r.placement.stages.map((s) => s.layers);
    rows.push([ax('pp', 'PP') + ' = ' + plan.pp,
      m.layers + ' layers into ' + plan.pp + ' stage' + (plan.pp > 1 ? 's' : '') + ': ' + (counts.length <= 8 ? counts.join(' + ') : counts.slice(0, 3).join(', ') + ', … ' + counts[counts.length - 1]),
      'a contiguous block of whole layers: ' + st0.chunks.map((c) => F.layers(c[0], c[1])).join(', ') + (st0.embedding ? ' + embedding' : '') + ' <span class="muted">(stage 1)</span>',
      commSummary(r, ['pp']), crosses(r, 'pp'), serve ? 'fitting big models multi-node; a token still walks every stage' : 'fitting huge models across nodes', 'pp']);
    const c0 = g0;
    if (!serve) rows.push([ax('cp', 'CP') + ' = ' + plan.cp, 'the sequence: ' + F.int(w.seq_len) + ' tokens',
      c0 ? 'tokens ' + c0.seq_chunks.map((c) => F.int(c[0]) + '–' + F.int(c[1] - 1)).join(' and ') + ' of every sequence, all layers <span class="muted">(CP rank 0)</span>' : '',
      commSummary(r, ['cp']), crosses(r, 'cp'), 'long context', 'cp']);
    if (m.experts > 0) {
      const e0 = g0;
      rows.push([ax('ep', 'EP') + ' = ' + plan.ep, 'the ' + m.experts + ' routed experts of every MoE layer',
        e0 ? 'whole experts ' + F.span(e0.experts[0], e0.experts[1]) + ' (never split), router replicated <span class="muted">(EP rank 0)</span>' : '',
        commSummary(r, ['ep']), crosses(r, 'ep'), serve ? 'system throughput / cost: each GPU reads only its experts' : 'throughput / cost of MoE', 'ep']);
      if (plan.etp > 0) {
        const t0 = g0;
        rows.push([ax('etp', 'ETP') + ' = ' + r.mesh.etp + ', ' + ax('edp', 'EDP') + ' = ' + r.mesh.edp,
          'folding: experts get their own mesh ETP × EP × EDP × PP',
          t0 ? 'expert FFN columns ' + F.span(t0.expert_ffn[0], t0.expert_ffn[1]) + ' of ' + F.int(m.expert_ffn_hidden) : '',
          commSummary(r, ['etp', 'edp']), crosses(r, 'edp'), 'different shapes for attention and experts', 'etp']);
      }
    }
    const zero = plan.zero > 0 ? 'ZeRO-' + plan.zero : plan.distributed_optimizer ? 'distributed optimizer' : '';
    const grad = r.placement.groups.find((g) => g.axis === 'dp_grad');
    const dpG = r.placement.groups.find((g) => g.axis === 'dp');
    if (serve) rows.push([ax('dp', 'DP') + ' = ' + plan.dp, 'the request stream: ' + F.int(r.inference.replicas) + ' replica' + (r.inference.replicas > 1 ? 's' : '') + ', ' + F.int(w.batch) + ' sequences each',
      'the full model (per replica group)', commSummary(r, ['dp', 'edp']).replace('none', 'none between replicas'),
      dpG && dpG.size > 1 ? (dpG.nodes_spanned > 1 ? '<b class="yes">yes</b> · trivially, ' + dpG.nodes_spanned + ' nodes' : 'no · inside one node') : '<span class="muted">—</span>',
      'aggregate throughput, scaling out', 'dp']);
    else rows.push([ax('dp', 'DP' + (zero ? ' + ' + zero : '')) + ' = ' + plan.dp,
      'the batch: ' + F.int(w.global_batch) + ' sequences per step',
      (plan.zero >= 3 ? '1/' + grad.size + ' of weights, gradients and optimizer' : plan.zero === 2 ? 'full weights; 1/' + grad.size + ' of gradients and optimizer'
        : plan.zero === 1 || plan.distributed_optimizer ? 'full weights and gradients; 1/' + grad.size + ' of the optimizer' : 'a full replica of its stage'),
      commSummary(r, ['dp', 'edp'].filter((a) => !(plan.etp > 0 && a === 'edp'))), crosses(r, 'dp_grad'), 'aggregate throughput', 'dp']);
    let h = '<h3>The five cuts, for this plan <span class="muted">· the table of the text, filled with the core’s numbers</span></h3>' +
      '<div class="scroll" tabindex="0" role="region" aria-label="The five cuts"><table class="t axes"><thead><tr><th>axis</th><th>what is divided</th><th>each GPU holds</th><th>communication ' + (serve ? '(prefill + a decode step)' : 'per step') + '</th>' +
      '<th>crosses nodes?</th><th>optimizes</th></tr></thead><tbody>';
    for (const row of rows) h += '<tr data-axis="' + row[6] + '">' + row.slice(0, 6).map((c) => '<td>' + c + '</td>').join('') + '</tr>';
    return h + '</tbody></table></div>';
  }

  // ---- one layer as its ops (the core's ops section; cutlab ops) -------------------------------
  const OPS = [['dense_layer', 'dense layer'], ['moe_layer', 'MoE layer'], ['output_layer', 'output layer and loss'], ['input_layer', 'input embedding']];
  const opsState = { open: false };  // the details stay open across redraws once opened
  function ops(r) {
    if (!r.ops) return '';
    let h = '<details class="ops"' + (opsState.open ? ' open' : '') + '><summary>Ops of one layer <span class="muted">· per micro-batch on one GPU: ' +
      'GEMMs, attention, memory-bound ops, the host\'s share; they add up to the step\'s compute</span></summary>';
    for (const [key, title] of OPS) {
      const list = r.ops[key];
      if (!list || !list.length) continue;
      h += '<h4>' + title + '</h4><div class="scroll" tabindex="0" role="region" aria-label="Ops of the ' + title + '"><table class="t ops" data-layer="' + key + '"><thead><tr><th>op</th><th class="num">GEMM M×N×K</th>' +
        '<th class="num">GFLOP</th><th class="num">MB</th><th>bound</th><th class="num" title="fraction of the compute peak the op reaches">eff</th><th class="num">F</th><th class="num">B</th><th class="num">W</th></tr></thead><tbody>';
      let f = 0, b = 0, w = 0;
      for (const op of list) {
        const shape = op.m > 0 ? F.int(op.m) + '×' + F.int(op.n) + '×' + F.int(op.k) + (op.count > 1 ? ' ×' + F.int(op.count) : '') :
          op.class === 'host' ? F.int(op.count) + ' GEMMs' : '';
        h += '<tr><td>' + e(op.name) + '</td><td class="num">' + shape + '</td><td class="num">' + F.sig(op.flops / 1e9) + '</td><td class="num">' +
          F.sig(op.bytes / 1e6) + '</td><td class="muted">' + e(op.bound) + '</td><td class="num muted">' + (op.efficiency > 0 ? Math.round(100 * op.efficiency) + '%' : '') +
          '</td><td class="num"' + raw(op.f_s) + '>' + F.seconds(op.f_s) +
          '</td><td class="num"' + raw(op.b_s) + '>' + F.seconds(op.b_s) + '</td><td class="num"' + raw(op.w_s) + '>' + F.seconds(op.w_s) + '</td></tr>';
        f += op.f_s, b += op.b_s, w += op.w_s;
      }
      h += '<tr class="total"><th>total</th><td></td><td></td><td></td><td></td><td></td><td class="num"' + raw(f) + '>' + F.seconds(f) + '</td><td class="num"' + raw(b) + '>' +
        F.seconds(b) + '</td><td class="num"' + raw(w) + '>' + F.seconds(w) + '</td></tr></tbody></table></div>';
    }
    return h + '</details>';
  }

  function all(d) {
    const g = d.good;
    if (!g) return '';
    const r = g.r;
    return '<div class="tcard mem">' + memoryPeak(r) + '</div><div class="tcard time">' + (isInfer(r) ? latency(r) : time(r)) + '</div>' +
      '<div class="tcard wide">' + axes(g) + '</div>' +
      '<div class="tcard wide">' + comm(r) + '</div>' +
      '<div class="tcard wide">' + memoryStages(r) + '</div>' +
      (r.ops ? '<div class="tcard wide">' + ops(r) + '</div>' : '');
  }

  // The compact table under an embedded view.
  function embed(d, view) {
    const g = d.good;
    if (!g) return '';
    const r = g.r;
    if (view === 'pipeline' || view === 'timeline') return '<div class="tcard">' + (isInfer(r) ? latency(r) : time(r)) + '</div>';
    if (view === 'placement') return '<div class="tcard">' + comm(r) + '</div>';
    if (view === 'tables') return all(d);
    return '<div class="tcard' + (view === 'table' ? ' axes-only' : '') + '">' + axes(g) + '</div>';
  }

  CL.tables = { headline, headlineCompact, equation, all, embed, balanceLine, memoryBar, KINDS, KINDS_INFER, kindsOf, isInfer, PARTS, opsState };
})(window.CL = window.CL || {});
