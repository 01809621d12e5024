// disagg.js: the "Disaggregate" panel (serving). The plan's requests prefilled on one pool of GPUs and
// decoded on another (xPyD), each pool with its own mesh and batch, the KV cache of every prompt sent
// between them: the core's disaggregation() (core/disaggregation.h; DistServe, Zhong et al. OSDI'24;
// Splitwise, Patel et al. ISCA'24) prices each pool, the transfer, the deployment and the share of
// prefill GPUs that balances the two. The pools are part of the state (state.dis, the link's dis.p.*
// and dis.d.* keys); until one is edited, each pool is the plan's mesh on half of its GPUs (at least
// one copy). Every string goes in as text; one core call per config and pools, made when the panel
// is open.
(function (CL) {
  'use strict';
  const F = CL.fmt;
  const e = F.escape;
  // The pool fields the panel edits (the section's gpus, batch and plan axes, and a system of its own
  // from the cluster presets; core/api.cpp check_section).
  const FIELDS = [['gpus', 'GPUs'], ['tp', 'TP'], ['pp', 'PP'], ['ep', 'EP'], ['batch', 'Batch']];
  const AXES = ['tp', 'pp', 'ep'];
  const POOLS = [['prefill', 'Prefill pool', 'p'], ['decode', 'Decode pool', 'd']];

  // The pools shown for the resolved config `cfg` and the state's own edits `dis` ({prefill, decode},
  // each a partial {gpus, tp, pp, ep, batch}): the edits over the defaults.
  function pools(cfg, dis) {
    const p = cfg.plan, copy = p.tp * p.pp * Math.max(1, p.ep);
    const gpus = copy * Math.max(1, Math.floor(cfg.cluster.gpus / 2 / copy));
    const out = {};
    for (const [name] of POOLS) {
      const own = (dis && dis[name]) || {};
      const d = { gpus, tp: p.tp, pp: p.pp, ep: Math.max(1, p.ep) };
      if (name === 'decode') d.batch = cfg.workload.batch;   // prefill: the core's default (budget / prompt)
      out[name] = Object.assign(d, own);
    }
    return out;
  }

  // The config text for the core: the plan's config with the section. A pool's axes go into its plan,
  // its other fields (gpus, batch, and whatever a link adds) beside it, where the core checks them.
  function sectionText(text, ps) {
    const cfg = JSON.parse(text);
    cfg.disaggregation = {};
    for (const [name] of POOLS) {
      const pool = { plan: {} };
      for (const [k, v] of Object.entries(ps[name])) (AXES.includes(k) ? pool.plan : pool)[k] = v;
      cfg.disaggregation[name] = pool;
    }
    return JSON.stringify(cfg);
  }

  // "16 = 2 × TP8·PP1": the pool's GPUs as copies of its mesh (EP where the model has experts), and
  // the system it runs on when the pool names its own (as text)
  function mesh(q, system) {
    return F.int(q.gpus) + ' = ' + F.int(q.instances) + ' × TP' + q.plan.tp + '·PP' + q.plan.pp + (q.plan.ep > 1 ? '·EP' + q.plan.ep : '') +
      (system ? ' on ' + e(system) : '');
  }
  function memory(q) {
    return '<span class="' + (q.fits ? 'ok' : 'bad') + '">' + F.gib(q.peak_memory_bytes, 1) + ' / ' + F.gib(q.capacity_bytes, 1) + ' GiB ' +
      (q.fits ? 'fits' : 'does not fit') + '</span>';
  }
  // The pools' table: its columns, each cell labelled with its own (a narrow page stacks a row's cells, style.css).
  const COLUMNS = ['part', 'GPUs', 'batch', 'in flight per copy', 'requests/s', 'per GPU', 'latency', 'memory per GPU'];
  const row = (cells, labels = COLUMNS) => '<tr>' + cells.map((c, i) => (i === 0 ? '<th>' + c + '</th>'
    : '<td data-label="' + labels[i] + '"' + (i >= 3 && i <= 5 ? ' class="num"' : '') + '>' + c + '</td>')).join('') + '</tr>';
  // The KV transfer's cells under the pools' columns, stacked under their own names.
  const KV_LABELS = ['part', 'link', 'KV', 'KV per GPU', 'requests/s', 'per GPU', 'time', 'links'];

  // A mix of lengths: each class's first token (its prompt on the prefill pool, its own KV transfer, the
  // wait for a decode slot) and end to end; class i of workload.length_mix at index i.
  function classes(r, mix) {
    const lc = r.length_classes;
    if (!lc || !mix) return '';
    const total = mix.reduce((a, c) => a + c.share, 0);
    return '<p class="disagg-classes-note"><b>By length class</b>: TPOT ' + F.seconds(r.tpot_s) + ' for every class; a class\'s TTFT includes its own KV transfer; ' +
      'the deployment\'s TTFT and end to end are their means over requests.</p><div class="disagg-scroll"><table class="t disagg-classes"><thead><tr><th>prompt/output</th>' +
      '<th class="num">share</th><th class="num">TTFT</th><th class="num">KV transfer</th><th class="num">end to end</th></tr></thead><tbody>' +
      mix.map((c, i) => '<tr data-class="' + Number(c.prompt_len) + '/' + Number(c.output_len) + '"><th>' + F.int(c.prompt_len) + '/' + F.int(c.output_len) + '</th><td class="num">' +
        F.pct(c.share / total) + '</td>' + [lc.ttft_s[i], lc.kv_transfer_s[i], lc.e2e_latency_s[i]].map((v) => '<td class="num" data-v="' + Number(v) + '">' + F.seconds(v) + '</td>').join('') +
        '</tr>').join('') + '</tbody></table></div>';
  }

  // The result as HTML (numbers and the core's names only; escaped all the same).
  function render(r, colocated, ps) {
    const p = r.prefill, d = r.decode, kv = r.kv_transfer, b = r.balance;
    const link = e(CL.state.linkLabel(colocated, kv.link));
    let h = '<div class="disagg-scroll"><table class="t disagg-table"><thead><tr>' + COLUMNS.map((c) => '<th>' + c + '</th>').join('') + '</tr></thead><tbody>';
    const system = (name) => (r.same_cluster ? '' : String(ps[name].cluster || colocated.config.cluster.name));
    h += row(['prefill pool', mesh(p, system('prefill')), F.int(p.batch), F.fixed(p.concurrency, 1), F.sig(p.requests_per_s), F.sig(p.requests_per_s_per_gpu), 'TTFT ' + F.seconds(p.ttft_s), memory(p)]);
    h += row(['KV transfer', link, F.bytes(kv.bytes_per_request) + ' a request', F.bytes(kv.bytes_per_gpu) + ' per GPU', F.sig(kv.requests_per_s), '', F.seconds(kv.time_s),
      'links ' + F.pct(kv.link_utilization) + ' busy'], KV_LABELS);
    h += row(['decode pool', mesh(d, system('decode')), F.int(d.batch), F.fixed(d.concurrency, 1), F.sig(d.requests_per_s), F.sig(d.requests_per_s_per_gpu), 'TPOT ' + F.seconds(d.tpot_s), memory(d)]);
    h += '</tbody></table></div>';
    const gpus = p.gpus + d.gpus;
    const inf = colocated.inference;
    const bound = 'bound by ' + e(r.bound.replace('_', ' '));
    const rate = !(r.request_rate_per_s > 0) ? F.sig(r.requests_per_s) + ' requests/s, ' + bound
      : r.saturated ? '<span class="bad">saturated</span>: ' + F.sig(r.request_rate_per_s) + ' requests/s arrive, more than the ' + F.sig(r.capacity_requests_per_s) +
        ' it serves (' + bound + '); the queue grows without bound and the latencies are those at its capacity, before any wait'
      : F.sig(r.requests_per_s) + ' requests/s as they arrive, of a capacity of ' + F.sig(r.capacity_requests_per_s) + ' (' + bound + ')';
    const waits = r.request_rate_per_s > 0 && !r.saturated ? ' (prefill with ' + F.seconds(r.prefill_queue_s) + ' waiting for a prefill step + transfer + ' +
      F.seconds(r.decode_queue_s) + ' waiting for a decode slot and step)' : ' (prefill + transfer)';
    h += '<p><b>Deployment</b> of ' + F.int(p.gpus) + ' + ' + F.int(d.gpus) + ' GPUs: ' + rate +
      ' · TTFT ' + F.seconds(r.ttft_s) + waits + ' · TPOT ' + F.seconds(r.tpot_s) + ' at this rate, with ' + F.fixed(r.prefill_in_flight, 1) +
      ' prompts and ' + F.fixed(r.decode_in_flight, 1) + ' sequences in flight per copy (a pool that does not bound the rate runs below its batch) · <b>' + F.sig(r.output_tokens_per_s_per_gpu) + '</b> output tokens/s per GPU, ' +
      F.sig(r.output_tokens_per_s_per_user) + ' per user. <span class="muted">Co-located, the plan above: ' + F.sig(inf.output_tokens_per_s_per_gpu) + ' per GPU, ' +
      F.sig(inf.output_tokens_per_s_per_user) + ' per user, TTFT ' + F.seconds(inf.ttft_s) + ', TPOT ' + F.seconds(inf.tpot_s) + '.</span></p>';
    h += classes(r, colocated.config.workload.length_mix);
    if (!r.same_cluster) return h + '<p><b>Pools on different systems</b>: no balance of one GPU count between them.</p>';
    h += '<p><b>Balanced</b> (the pools\' rates per GPU matched): ' + F.pct(b.prefill_fraction) + ' of the GPUs prefilling → ' + F.sig(b.output_tokens_per_s_per_gpu) +
      ' output tokens/s per GPU; for these ' + F.int(gpus) + ' GPUs the best whole split is ' + F.int(b.suggested_prefill_instances) + 'P' + F.int(b.suggested_decode_instances) +
      'D (' + F.int(b.suggested_prefill_instances * p.gpus_per_instance) + ' + ' + F.int(b.suggested_decode_instances * d.gpus_per_instance) + ' GPUs) → ' +
      F.sig(b.suggested_output_tokens_per_s_per_gpu) + ' per GPU.</p>';
    return h;
  }

  // make(root, api, onChange): builds the panel in `root` (a <details>); update(state, d) shows the pools
  // of the state for the last valid serving plan of d; onChange(dis) records an edit in the state.
  function make(root, api, onChange) {
    root.innerHTML = '<summary><h2>Disaggregate</h2><span class="muted"> prefill and decode on separate pools of GPUs (xPyD), each prompt\'s KV cache sent between them</span></summary>' +
      '<div class="disagg-form">' + POOLS.map(([name, title]) => '<fieldset data-pool="' + name + '"><legend>' + title + '</legend>' +
        FIELDS.map(([k, label]) => '<label class="disagg-field' + (k === 'ep' ? ' moe-only' : '') + '">' + label + ' <input type="number" min="1" step="1" data-key="' + k + '"></label>').join('') +
        '<label class="disagg-field">System <select data-key="cluster"><option value="">the plan\'s</option>' +
        ((CL.presets && CL.presets.clusters) || []).map((c) => '<option value="' + e(c.name) + '">' + e(c.name + ' · ' + c.gpu) + '</option>').join('') + '</select></label>' +
        '</fieldset>').join('') + '<button type="button" class="disagg-reset">Reset to the plan</button></div>' +
      '<ul class="disagg-errors"></ul><div class="disagg-out" aria-live="polite"></div>';
    const out = root.querySelector('.disagg-out'), errs = root.querySelector('.disagg-errors');
    let last = null, shownKey = null, dis = null;
    root.addEventListener('change', (ev) => {
      const input = ev.target.closest('[data-key]');
      if (!input || !last) return;
      const pool = input.closest('fieldset').dataset.pool, next = JSON.parse(JSON.stringify(dis || {}));
      next[pool] = next[pool] || {};
      if (input.value === '') delete next[pool][input.dataset.key];
      else next[pool][input.dataset.key] = input.tagName === 'SELECT' ? input.value : Number(input.value);
      onChange(next);
    });
    root.querySelector('.disagg-reset').addEventListener('click', () => onChange(null));
    root.addEventListener('toggle', () => { shownKey = null; if (last) update(last.s, last.d); });

    function update(s, d) {
      last = { s, d };
      dis = s.dis || null;
      const g = d && d.good;
      if (!root.open || !g || g.r.mode !== 'infer') return;
      const cfg = g.r.config, ps = pools(cfg, dis);
      for (const fs of root.querySelectorAll('fieldset')) {
        for (const input of fs.querySelectorAll('[data-key]')) {
          const v = ps[fs.dataset.pool][input.dataset.key];
          const str = v === undefined ? '' : String(v);
          if (document.activeElement !== input && input.value !== str) input.value = str;
        }
      }
      const text = sectionText(g.text, ps);
      if (text === shownKey) return;
      shownKey = text;
      const res = api.disaggregation(text);
      if (res.pending) {   // core-full.js is loading (bridge.js): asked again once it is here
        shownKey = null;
        root.setAttribute('aria-busy', 'true');
        out.textContent = 'Loading… (the rest of the cutlab core, core-full.js)';
        errs.replaceChildren();
        return;
      }
      root.removeAttribute('aria-busy');
      errs.replaceChildren(...(res.ok ? [] : res.errors.map((x) => {
        const li = document.createElement('li');
        const code = document.createElement('code');
        code.textContent = x.path || '/';
        li.append(code, ' ' + x.message);
        return li;
      })));
      out.innerHTML = res.ok ? render(res.result, g.r, ps) : '';
      // the prefill batch the core chose (the step's token budget over the prompt), until one is set
      if (res.ok) root.querySelector('fieldset[data-pool="prefill"] input[data-key="batch"]').placeholder = String(res.result.prefill.batch);
    }
    return { update };
  }
  CL.disagg = { make, pools, sectionText };
})(window.CL = window.CL || {});
