// controls.js: the form, built from one declarative table. Each control names the JSON path it
// edits (so the core's error paths land on it), where its choices come from (a fixed list, the
// presets, or the core's options() of valid values), and how an edit patches the state.
(function (CL) {
  'use strict';
  const F = CL.fmt;

  const num = (path, label, o) => Object.assign({ path, label, kind: 'number' }, o || {});
  // choices: [[value, label], …], or the name of a core choice table ('schedule', 'dtype', …)
  const sel = (path, label, choices, o) => Object.assign({ path, label, kind: 'select', choices }, o || {});
  const axis = (key, label, title) => ({ path: '/plan/' + key, label, kind: 'axis', key, title });
  const check = (path, label, title) => ({ path, label, kind: 'check', title });
  // A set of a core choice table's names (checkboxes), edited as one list.
  const set = (path, label, choices, o) => Object.assign({ path, label, kind: 'set', choices }, o || {});

  const train = (def) => Object.assign(def, { only: 'train' });
  const infer = (def) => Object.assign(def, { only: 'infer' });
  const TABLE = [
    { title: 'Run', rows: [sel('/workload/mode', 'Mode', 'mode',
      { title: 'Training step, or serving requests (prefill + decode)' })] },
    { title: 'Model', rows: [{ path: '/model', label: 'Model', kind: 'preset', source: 'models' },
      { path: '/model/hf_config', label: 'Paste a Hugging Face config.json', kind: 'hf' }],
      details: { summary: 'Dimensions', rows: [
        num('/model/layers', 'Layers'), num('/model/hidden', 'Hidden size'), num('/model/heads', 'Heads'),
        num('/model/kv_heads', 'KV heads'), num('/model/head_dim', 'Head dim'), num('/model/ffn_hidden', 'FFN hidden'),
        num('/model/vocab', 'Vocabulary'), num('/model/experts', 'Experts', { moe: true }), num('/model/top_k', 'Top-k', { moe: true }),
        num('/model/expert_ffn_hidden', 'Expert FFN', { moe: true }), num('/model/shared_experts', 'Shared experts', { moe: true }),
        num('/model/dense_layers', 'Dense layers first', { moe: true })] } },
    { title: 'Cluster', rows: [{ path: '/cluster', label: 'Hardware', kind: 'preset', source: 'clusters' },
      num('/cluster/gpus', 'GPUs', { title: 'Fix the GPU count; DP is then what the mesh leaves' })],
      details: { summary: 'GPU and links', rows: [
        num('/cluster/gpus_per_node', 'GPUs per node'), num('/cluster/hbm_GiB', 'HBM GiB', { step: 'any' }),
        num('/cluster/bf16_TFLOPs', 'bf16 TFLOP/s', { step: 'any' }), num('/cluster/fp8_TFLOPs', 'fp8 TFLOP/s', { step: 'any' }),
        num('/cluster/nvlink_GBps', 'NVLink GB/s', { step: 'any', linkLabel: true,
          title: 'Bandwidth per GPU per direction of the link inside a node (NVLink; PCIe on a server without it)' }), num('/cluster/scaleout_GBps', 'Scale-out GB/s', { step: 'any' }),
        num('/cluster/reserved_GiB', 'Reserved GiB', { step: 'any' })] } },
    { title: 'Parallelism', grid: true, rows: [
      axis('tp', 'TP', 'Tensor parallel: slices of every matrix'), axis('pp', 'PP', 'Pipeline stages'),
      axis('cp', 'CP', 'Context parallel: chunks of the sequence'), axis('ep', 'EP', 'Expert parallel: whole experts'),
      num('/plan/dp', 'DP', { title: 'Data-parallel replicas; setting it lets the GPU count follow', small: true }),
      axis('etp', 'ETP', 'Expert tensor parallel (MoE Parallel Folding); off: experts use TP'),
      sel('/plan/rank_order', 'Rank order (innermost first)', [['tp-cp-ep-dp-pp', 'tp-cp-ep-dp-pp (Megatron)'], ['tp-cp-pp-dp-ep', 'tp-cp-pp-dp-ep'], ['tp-cp-ep-pp-dp', 'tp-cp-ep-pp-dp'],
        ['tp-pp-cp-ep-dp', 'tp-pp-cp-ep-dp'], ['tp-dp-cp-ep-pp', 'tp-dp-cp-ep-pp'], ['pp-tp-cp-ep-dp', 'pp-tp-cp-ep-dp'], ['dp-tp-cp-ep-pp', 'dp-tp-cp-ep-pp']],
      { title: 'Decides which groups share a node, and so which link each cut uses', span: true }),
      { kind: 'action', id: 'find-plans', label: 'Find the best plans', span: true,
        note: 'the fastest plans that fit these GPUs (serving: per GPU, under latency limits; at a request rate, the fewest GPUs)',
        title: 'Ask the core for the fastest plans that fit this model, cluster, GPU count and workload (training: tokens/s; serving: output tokens/s per GPU under TTFT and TPOT limits, with the Pareto front per GPU against per user)' }] },
    { title: 'Memory', only: 'train', rows: [
      sel('/plan/zero', 'ZeRO', [[0, '0 · none'], [1, '1 · optimizer'], [2, '2 · + gradients'], [3, '3 · + weights (FSDP)']]),
      check('/plan/distributed_optimizer', 'Distributed optimizer', 'Megatron’s: shards the optimizer over DP (= ZeRO-1)'),
      check('/plan/sp', 'Sequence parallel', 'Split LayerNorm/dropout activations along the TP group'),
      sel('/plan/recompute', 'Recompute', 'recompute'),
      set('/plan/recompute_modules', 'Recomputed modules', 'recompute_modules',
        { title: 'What selective recompute re-runs in the backward (Megatron-Core recompute_modules)' }),
      check('/plan/flash_attention', 'Flash attention', 'The s × s score matrix is never stored'),
      check('/plan/activation_func_fp8_input_store', 'fp8 activation inputs',
        'Keep the activation function’s input in fp8 for its backward (Megatron activation_func_fp8_input_store; DeepSeek-V3)'),
      sel('/workload/moment_dtype', 'Adam moments', 'moment_dtype', { title: 'bf16 moments: 4 bytes per parameter less (DeepSeek-V3)' }),
      sel('/workload/ema', 'Weight EMA', 'ema', { title: 'An fp32 moving average of the weights: on the GPU it costs 4 bytes per parameter' })] },
    { title: 'Experts', moe: true, rows: [
      sel('/plan/ep_dispatcher', 'Dispatcher', 'ep_dispatcher', { title: 'Megatron’s all-to-all sends every copy of a token; DeepEP one per remote node; all-gather every token to every EP rank, summed back by a reduce-scatter' }),
      sel('/plan/ep_dispatch_dtype', 'Dispatch dtype', 'ep_dispatch_dtype', { title: 'fp8 dispatch with bf16 combine (DeepSeek-V3); needs fp8 GEMMs: fp8 training or fp8 serving weights. fp4: NVFP4 tokens for the experts\' fp4 GEMMs (TensorRT-LLM\'s post-quant dispatch); serving with fp4 experts on Blackwell' }),
      train(check('/plan/ep_comm_overlap', 'Overlap EP all-to-alls', 'One micro-batch’s dispatch and combine behind another’s compute (Megatron --overlap-moe-expert-parallel-comm)')),
      train(check('/plan/moe_shared_expert_overlap', 'Shared expert hides dispatch', 'The shared expert runs while the tokens travel (Megatron moe_shared_expert_overlap)')),
      train(num('/plan/moe_capacity_factor', 'Capacity factor', { step: 'any', title: '0: dropless; else each expert takes at most cf × its fair share and drops the rest' })),
      train(check('/plan/moe_pad_to_capacity', 'Pad to capacity', 'Every expert computes its full capacity (needs a capacity factor)')),
      train(num('/plan/moe_imbalance', 'Load imbalance', { step: 'any', title: 'Tokens of the hottest EP rank ÷ the mean (1: balanced, as the published benchmarks force)' }))] },
    { title: 'Pipeline', only: 'train', rows: [
      sel('/plan/schedule', 'Schedule', 'schedule'),
      axis('vpp', 'VPP', 'Virtual stages (model chunks) per GPU, interleaved schedule'),
      axis('micro_batch', 'Micro-batch', 'Sequences per micro-batch')] },
    { title: 'Workload', rows: [
      train(num('/workload/seq_len', 'Sequence length')), train(num('/workload/global_batch', 'Global batch')),
      infer(sel('/workload/batching', 'Batching', 'batching', { title: 'In-flight (continuous) batching, or one static batch at a time' })),
      infer(num('/workload/batch', 'Batch', { title: 'Most sequences per engine step (max_batch_size); with PP, per micro-batch in flight' })),
      infer(num('/workload/prompt_len', 'Prompt tokens')),
      infer(num('/workload/output_len', 'Output tokens')),
      infer({ path: '/workload/length_mix', label: 'Length mix', kind: 'mix', span: true,
        title: 'Requests of mixed lengths, each class prompt/output and its share: 1000/200 70%, 8000/500 30% (in-flight batching, a stream or an offline run; up to 8 classes). Empty: every request the prompt and output tokens above' }),
      infer(num('/workload/max_num_tokens', 'Tokens per step', { title: 'Token budget of one engine step: decodes plus prefill chunks (max_num_tokens)' })),
      infer(num('/workload/request_rate_per_s', 'Requests/s', { step: 'any', title: 'Arrival rate over all replicas; 0: offline, every request queued' })),
      infer(num('/workload/num_requests', 'Requests in run', { title: 'Offline run of this many requests, all queued at the start (trtllm-bench --num_requests); 0: an endless stream, steady state' })),
      infer(num('/workload/spec_draft_tokens', 'Draft tokens', { title: 'Speculative decoding: tokens drafted per step (0: off)' })),
      sel('/workload/dtype', 'GEMM dtype', 'dtype'),
      train(sel('/workload/grad_dtype', 'Gradients', 'grad_dtype')),
      infer(sel('/workload/weight_dtype', 'Weights', 'weight_dtype')),
      infer(sel('/workload/expert_weight_dtype', 'Expert weights', 'expert_weight_dtype', { moe: true, hideDense: true,
        title: 'Routed experts stored apart (gpt-oss: MXFP4 experts); their GEMMs run at their own precision\'s peak (fp4 on Blackwell; dequantised to bf16 where the GPU has no tensor cores for it)' })),
      infer(sel('/workload/kv_dtype', 'KV cache', 'kv_dtype')),
      infer(num('/workload/kv_cache_free_fraction', 'KV cache share', { step: 'any',
        title: 'Share of the memory beside the weights and the step\'s workspace that the KV cache takes (TensorRT-LLM free_gpu_memory_fraction: 0.9 by default; 1: all of it)' })),
      infer(sel('/workload/local_kv_cache', 'Local layers hold', 'local_kv_cache', { localOnly: true,
        title: 'What the KV cache keeps for a sliding-window or chunked layer: its window, or the whole context as in the other layers' }))] },
  ];

  // ---- state access by path ------------------------------------------------------------------
  function stateValue(s, path) {
    const [, sec, key] = path.split('/');
    if (path === '/model') return s.model;
    if (path === '/cluster') return s.cluster;
    if (path === '/cluster/gpus') return s.gpus;
    if (sec === 'model') return s.modelOver[key];
    if (sec === 'cluster') return s.clusterOver[key];
    if (sec === 'plan') return s.plan[key];
    if (sec === 'workload') return s.workload[key];
    return undefined;
  }
  // The value the core read for a field: from the config of this plan as the core read it (carried
  // by the error result too, so an invalid plan keeps its fields filled), else from the last valid plan.
  function resolvedValue(d, path) {
    if (!d) return undefined;
    const cfg = d.config || (d.good && d.good.r.config);
    if (!cfg) return undefined;
    const [, sec, key] = path.split('/');
    if (path === '/cluster/gpus') {
      if (d.ok) return d.r.gpus;
      return cfg.cluster && cfg.cluster.gpus > 0 ? cfg.cluster.gpus : undefined;
    }
    return cfg[sec] ? cfg[sec][key] : undefined;
  }

  // The state patch for an edit (a function of the old state).
  function patchFor(s, path, v) {
    const [, sec, key] = path.split('/');
    const n = CL.state.clone(s);
    n.example = null;
    if (path === '/model') {
      n.model = v; n.modelOver = {}; n.hf = null; n.layer = null; n.gpu = null;
      // A dense model has no experts: the experts' settings (rejected for it by the core) go with the old model.
      const preset = CL.presets && CL.presets.models.find((m) => m.name === v);
      if (preset && !(preset.experts > 0)) {
        for (const k of MOE_KEYS) delete n.plan[k];
        delete n.workload.expert_weight_dtype;
      }
      return n;
    }
    if (path === '/model/hf_config') { n.hf = v; n.modelOver = {}; n.layer = null; n.gpu = null; return n; }
    if (path === '/cluster') { n.cluster = v; n.clusterOver = {}; n.gpu = null; return n; }
    if (path === '/cluster/gpus') { n.gpus = v; delete n.plan.dp; n.gpu = null; return n; }
    if (path === '/plan/dp') { n.plan.dp = v; n.gpus = null; n.gpu = null; return n; }
    if (sec === 'model') { n.modelOver[key] = v; n.layer = null; return n; }
    if (sec === 'cluster') { n.clusterOver[key] = v; return n; }
    if (sec === 'workload') {
      if (v === undefined) delete n.workload[key];
      else n.workload[key] = v;
      return n;
    }
    // plan
    if (key === 'etp' && (v === 0 || v === '0')) { delete n.plan.etp; return n; }
    if (key === 'recompute' && !CL.state.choice('recompute', v).reads_modules) delete n.plan.recompute_modules;
    n.plan[key] = v;
    // vpp > 1 is the schedule with virtual stages (the core's rule, core/schedule.cpp schedule_rules).
    const virtualSchedule = () => CL.presets.choices.schedule.find((c) => c.virtual_stages).name;
    if (key === 'vpp') {
      if (v > 1) n.plan.schedule = virtualSchedule();
      else if (CL.state.choice('schedule', n.plan.schedule).virtual_stages) n.plan.schedule = CL.state.choice('schedule', null).name;
    }
    if (key === 'schedule') {
      const virtual = CL.state.choice('schedule', v).virtual_stages;
      if (virtual && !(n.plan.vpp > 1)) n.plan.vpp = 2;
      if (!virtual) delete n.plan.vpp;
    }
    if (['tp', 'pp', 'cp', 'ep', 'etp', 'rank_order'].includes(key)) n.gpu = null;
    return n;
  }

  // The rows of the Experts section: plan keys that only an MoE model reads.
  const MOE_KEYS = TABLE.find((sec) => sec.moe).rows.map((r) => r.path.split('/')[2]);

  // ---- DOM -----------------------------------------------------------------------------------
  const els = new Map();   // path → {row, input, err, def}

  function build(form, presets, onEdit) {
    form.innerHTML = '';
    for (const sec of TABLE) {
      const fs = document.createElement('fieldset');
      fs.className = 'sec' + (sec.grid ? ' grid' : '') + (sec.only ? ' only-' + sec.only : '') + (sec.moe ? ' moe-only' : '');
      fs.innerHTML = '<legend>' + sec.title + '</legend>';
      const addRows = (rows, parent) => {
        for (const def of rows) parent.appendChild(control(def, presets, onEdit));
      };
      addRows(sec.rows, fs);
      if (sec.details) {
        const det = document.createElement('details');
        det.innerHTML = '<summary>' + sec.details.summary + '</summary>';
        const box = document.createElement('div');
        box.className = 'detail-rows';
        addRows(sec.details.rows, box);
        det.appendChild(box);
        fs.appendChild(det);
      }
      form.appendChild(fs);
    }
  }

  function control(def, presets, onEdit) {
    const row = document.createElement('div');
    row.className = 'ctl ctl-' + def.kind + (def.moe ? ' moe-only' : '') + (def.hideDense ? ' hide-dense' : '') + (def.localOnly ? ' local-only' : '') + (def.only ? ' only-' + def.only : '') +
      (def.span ? ' span' : '');
    if (def.kind === 'action') {   // a button the page wires itself (by id): no value, no errors
      row.innerHTML = '<button type="button" id="' + def.id + '" title="' + F.escape(def.title || '') + '">' + def.label + '</button>' +
        (def.note ? '<span class="note">' + def.note + '</span>' : '');
      return row;
    }
    row.dataset.path = def.path;
    const id = 'f' + def.path.replace(/\//g, '-');
    let input;
    if (def.kind === 'hf') return hfControl(def, row, onEdit);
    if (def.kind === 'mix') return mixControl(def, row, id, onEdit);
    if (def.kind === 'set') {
      // One checkbox per name of the core's table; an edit sends the checked names in table order.
      const legend = document.createElement('span');
      legend.className = 'set-label';
      legend.textContent = def.label;
      if (def.title) legend.title = def.title;
      row.appendChild(legend);
      input = document.createElement('div');
      input.className = 'set';
      for (const c of presets.choices[def.choices]) {
        const lab = document.createElement('label');
        lab.className = 'check';
        const box = document.createElement('input');
        box.type = 'checkbox';
        box.value = c.name;
        const txt = document.createElement('span');
        txt.textContent = c.label;
        lab.title = c.name;
        lab.append(box, ' ', txt);
        input.appendChild(lab);
      }
      input.addEventListener('change', () => {
        onEdit(def.path, [...input.querySelectorAll('input:checked')].map((b) => b.value));
      });
      row.appendChild(input);
    } else if (def.kind === 'check') {
      row.innerHTML = '<label class="check" for="' + id + '"><input type="checkbox" id="' + id + '"> <span>' + def.label + '</span></label>';
      input = row.querySelector('input');
      input.addEventListener('change', () => onEdit(def.path, input.checked));
    } else {
      const label = document.createElement('label');
      label.htmlFor = id;
      label.textContent = def.label;
      if (def.title) label.title = def.title;
      row.appendChild(label);
      if (def.kind === 'number') {
        input = document.createElement('input');
        input.type = 'number';
        input.min = '0';
        if (def.step) input.step = def.step;
        input.addEventListener('change', () => {
          if (input.value === '') return;
          onEdit(def.path, Number(input.value));
        });
      } else {
        input = document.createElement('select');
        if (def.kind === 'preset') {
          for (const p of presets[def.source]) {
            const o = document.createElement('option');
            o.value = p.name;
            o.textContent = presetLabel(def.source, p);
            // A cluster's tooltip says what its efficiencies were fitted to (training runs / serving cases) and
            // how far its serving figures are off, held out (core/presets.h ClusterPreset).
            if (p.fitted_to) {
              o.title = 'efficiencies fitted to ' + p.fitted_to + ' (training / serving); serving, for ' +
                (p.serving_held_out_family === 'pooled' ? 'a GPU' : 'a model') + ' the fit has not seen: ' +
                F.fixed(p.serving_held_out_percent, 1) + '% off on average (docs/validation.md §8)';
            }
            input.appendChild(o);
          }
        } else if (def.kind === 'select') {
          // A string names one of the core's choice tables (core/choices.h, presets().choices).
          const list = typeof def.choices === 'string' ? presets.choices[def.choices].map((c) => [c.name, c.label]) : def.choices;
          for (const [v, t] of list) {
            const o = document.createElement('option');
            o.value = String(v);
            o.textContent = t;
            input.appendChild(o);
          }
        }
        input.addEventListener('change', () => {
          const raw = input.value;
          const v = def.kind === 'preset' || def.path === '/plan/rank_order' ? raw : CL.state.parseValue(raw);
          onEdit(def.path, v);
        });
      }
      input.id = id;
      if (def.title) input.title = def.title;
      row.appendChild(input);
    }
    const err = document.createElement('div');
    err.className = 'err';
    err.setAttribute('role', 'alert');
    row.appendChild(err);
    els.set(def.path, { row, input, err, def });
    return row;
  }

  // The "paste a config.json" box: a textarea in a disclosure; the JSON is checked here (a clear
  // message at once when it does not parse), everything else by the core, whose errors at
  // /model/hf_config/… land in this box.
  const HF_EXAMPLE = '{"hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, ...}';
  function hfControl(def, row, onEdit) {
    row.innerHTML = '<details class="hf"><summary>' + def.label + '</summary>' +
      '<textarea id="f-model-hf_config" rows="7" spellcheck="false" aria-label="Hugging Face config.json" placeholder="' + F.escape(HF_EXAMPLE) + '"></textarea>' +
      '<div class="hf-actions"><button type="button" class="use">Use this model</button><span class="hf-note"></span></div><div class="err" role="alert"></div></details>';
    const input = row.querySelector('textarea'), err = row.querySelector('.err');
    row.querySelector('.use').addEventListener('click', () => {
      const text = input.value.trim();
      row.classList.remove('invalid');
      err.textContent = '';
      if (!text) { showJsonError(row, err, 'Paste the contents of a config.json first.'); return; }
      // strict, as the core reads JSON (strict-json.js): no key twice, at most 64 levels deep
      const parsed = CL.strictJson.parse(text);
      if (parsed.error) {
        showJsonError(row, err, parsed.error.path ? 'Not accepted: ' + parsed.error.message + ' (at ' + def.path + parsed.error.path + ').'
          : 'Not valid JSON: ' + jsonMessage(parsed.error.message, text));
        return;
      }
      const v = parsed.value;
      if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        showJsonError(row, err, 'A config.json is one JSON object, { … }; this is ' + (Array.isArray(v) ? 'an array' : v === null ? 'null' : 'a ' + typeof v) + '.');
        return;
      }
      input.dataset.local = '';
      onEdit(def.path, v);
    });
    input.addEventListener('input', () => { input.dataset.local = '1'; });
    els.set(def.path, { row, input, err, def });
    return row;
  }
  // The length mix: a line of text ("1000/200 70%, 8000/500 30%", CL.state.parseMix); a line that does
  // not read is marked here at once, the rules (shares positive, at most 8 classes) by the core.
  function mixControl(def, row, id, onEdit) {
    const label = document.createElement('label');
    label.htmlFor = id;
    label.textContent = def.label;
    label.title = def.title;
    const input = document.createElement('input');
    input.type = 'text';
    input.id = id;
    input.title = def.title;
    input.placeholder = 'e.g. 1000/200 70%, 8000/500 30%';
    input.maxLength = 400;
    input.spellcheck = false;
    const err = document.createElement('div');
    err.className = 'err';
    err.setAttribute('role', 'alert');
    row.append(label, input, err);
    input.addEventListener('change', () => {
      const mix = CL.state.parseMix(input.value);
      row.classList.remove('invalid');
      err.textContent = '';
      if (mix.error) { showJsonError(row, err, 'Not read: ' + mix.error + '.'); return; }
      onEdit(def.path, mix.value || undefined);
    });
    els.set(def.path, { row, input, err, def });
    return row;
  }
  function showJsonError(row, err, msg) {
    row.classList.add('invalid');
    row.dataset.jsonError = '1';
    err.textContent = msg;
  }
  // "Unexpected token } in JSON at position 57" → … (line 3, column 5)
  function jsonMessage(msg, text) {
    const m = /position (\d+)/.exec(msg);
    if (!m || /line \d+/.test(msg)) return msg;
    const before = text.slice(0, Number(m[1])).split('\n');
    return msg + ' (line ' + before.length + ', column ' + (before[before.length - 1].length + 1) + ')';
  }

  function presetLabel(source, p) {
    if (source === 'models') return p.name + ' · ' + F.short(p.published_params || 0).replace(F.NBSP, '');
    return p.name + ' · ' + p.gpu + (p.gpus_per_node !== 8 ? ' (' + p.gpus_per_node + '/node)' : '');
  }

  // Fills values, valid choices and error marks from the state and the derived result.
  function update(s, d) {
    const cfg = d.config || (d.good && d.good.r.config);
    const moe = cfg ? cfg.model.experts > 0 : false;
    document.body.classList.toggle('is-moe', moe);
    document.body.classList.toggle('has-local-attention', cfg ? cfg.model.attention_window > 0 : false);
    const mode = s.workload.mode || (cfg ? cfg.workload.mode : null);
    document.body.classList.toggle('mode-infer', CL.state.serving(mode));
    document.body.classList.toggle('model-hf', !!s.hf);
    for (const [path, e] of els) {
      const { def, input } = e;
      if (def.kind === 'hf') { fillHf(e, s, d); continue; }
      if (def.kind === 'mix') {
        const own = stateValue(s, path);
        const text = Array.isArray(own) ? CL.state.mixText(own) : typeof own === 'string' ? own : '';
        if (document.activeElement !== input && input.value !== text) input.value = text;
        e.err.textContent = '';
        e.row.classList.remove('invalid');
        continue;
      }
      const own = stateValue(s, path);
      const resolved = resolvedValue(d, path);
      const v = own !== undefined && own !== null ? own : resolved;
      const derived = own === undefined || own === null;
      if (def.kind === 'check') {
        input.indeterminate = v === undefined;   // not known until the core has read the config
        input.checked = !!v;
      } else if (def.kind === 'set') {
        const on = new Set(Array.isArray(v) ? v : []);
        for (const box of input.querySelectorAll('input')) box.checked = on.has(box.value);
        // the modules matter only with selective recompute
        const rc = stateValue(s, '/plan/recompute') || resolvedValue(d, '/plan/recompute');
        e.row.hidden = !CL.state.choice('recompute', rc).reads_modules;
      } else if (def.kind === 'axis') {
        fillAxis(input, def, v, d, s);
      } else if (def.kind === 'number') {
        // the link inside a node goes by the cluster's name for it (node_link: NVLink, PCIe); as text
        if (def.linkLabel && cfg) e.row.querySelector('label').textContent = CL.state.linkLabel({ config: cfg }, 'nvlink') + ' GB/s';
        const str = v === undefined || v === null ? '' : String(v);
        if (document.activeElement !== input && input.value !== str) input.value = str;
        e.row.classList.toggle('derived', derived && (path === '/plan/dp' || path === '/cluster/gpus'));
        // a pasted config.json sets the model's dimensions: shown, edited in the JSON
        const fromHf = !!s.hf && path.startsWith('/model/');
        const fromMix = Array.isArray(s.workload.length_mix) && (path === '/workload/prompt_len' || path === '/workload/output_len');
        input.disabled = fromHf || fromMix;
        input.title = fromHf ? 'From the pasted config.json: edit it there' : fromMix ? 'Not read: the length mix below gives each request\'s lengths' : def.title || '';
      } else if (def.kind === 'preset' && path === '/model') {
        fillModelSelect(input, s, cfg);
      } else if (v !== undefined && input.value !== String(v)) {
        input.value = String(v);
      }
      e.err.textContent = '';
      e.row.classList.remove('invalid');
    }
    // errors by path: exact control, else the closest parent control, else the general box
    const general = [];
    for (const er of d.errors) {
      let p = er.path, hit = null;
      while (p && !hit) {
        hit = els.get(p);
        if (!hit) p = p.slice(0, p.lastIndexOf('/'));
      }
      if (hit && hit.def.kind === 'hf' && !s.hf) hit = null;
      if (hit) {
        hit.row.classList.add('invalid');
        const at = hit.def.kind === 'hf' && er.path !== p ? er.path.slice(p.length + 1) + ': ' : '';
        hit.err.textContent += (hit.err.textContent ? ' · ' : '') + at + er.message;
        const det = hit.row.closest('details') || hit.row.querySelector('details');
        if (det) det.open = true;
      } else general.push(er);
    }
    return general;
  }

  // The model select: the presets, plus the pasted config.json while one is in use.
  function fillModelSelect(input, s, cfg) {
    let opt = input.querySelector('option[value="__hf__"]');
    if (s.hf) {
      if (!opt) { opt = document.createElement('option'); opt.value = '__hf__'; input.insertBefore(opt, input.firstChild); }
      const name = cfg && cfg.model && cfg.model.name;
      opt.textContent = 'HF config.json' + (name && name !== 'hf-model' ? ' · ' + name : '');
      input.value = '__hf__';
    } else {
      if (opt) opt.remove();
      if (input.value !== s.model) input.value = s.model;
    }
  }

  function fillHf(e, s, d) {
    const { row, input, err } = e;
    const note = row.querySelector('.hf-note');
    // a JSON error found here stays until the next try; otherwise the core's errors are filled below
    if (row.dataset.jsonError && input.dataset.local) return;
    delete row.dataset.jsonError;
    err.textContent = '';
    row.classList.remove('invalid');
    if (s.hf) {
      // a link that carries a config.json opens the box once, so the model's source is in view
      if (!row.dataset.shown) { row.dataset.shown = '1'; row.querySelector('details').open = true; }
      const sig = JSON.stringify(s.hf);
      if (input.dataset.sig !== sig && !input.dataset.local) { input.value = JSON.stringify(s.hf, null, 2); input.dataset.sig = sig; }
      const m = d.config && d.config.model;
      note.textContent = d.ok && m ? '✓ ' + m.layers + ' layers × ' + F.int(m.hidden) + (m.experts > 0 ? ', ' + m.experts + ' experts' : '') : '';
    } else {
      note.textContent = '';
      if (input.dataset.sig) { input.dataset.sig = ''; }
    }
  }

  function fillAxis(input, def, v, d, s) {
    const key = def.key;
    let values = d.options && d.options[key] ? d.options[key].slice() : null;
    if (!values || !values.length) {
      // no options() in this core, the config could not be read, or no value of this axis alone
      // makes the plan valid (the fix is elsewhere): offer what we know, none marked
      values = key === 'etp' ? [1, 2, 4, 8] : [1, 2, 4, 8, 16, 32, 64];
    }
    if (key === 'etp') values = [0].concat(values.filter((x) => x !== 0));
    const cur = key === 'etp' ? (v || 0) : v;
    if (cur === undefined) {   // no valid plan yet: the core has not told us the default
      if (input.dataset.sig !== 'unknown') { input.innerHTML = '<option value="">—</option>'; input.dataset.sig = 'unknown'; }
      return;
    }
    const list = values.includes(cur) ? values : values.concat([cur]).sort((a, b) => a - b);
    const sig = list.join(',') + '|' + cur + '|' + values.join(',');
    if (input.dataset.sig !== sig) {
      input.innerHTML = '';
      for (const x of list) {
        const o = document.createElement('option');
        o.value = String(x);
        const valid = values.includes(x);
        o.textContent = key === 'etp' && x === 0 ? 'off' : String(x) + (valid ? '' : ' ✕');
        if (!valid) o.className = 'bad';
        input.appendChild(o);
      }
      input.dataset.sig = sig;
    }
    input.value = String(cur);
    input.disabled = key === 'ep' && values.length <= 1 && cur === 1 ? false : false;
  }

  CL.controls = { TABLE, build, update, patchFor, stateValue, els };
})(window.CL = window.CL || {});
