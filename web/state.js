// state.js: the shape of the page's one state object, the config the core receives, and the URL.
// state = { model, modelOver, hf, cluster, clusterOver, gpus, plan, workload, view, layer, gpu, dis }
//   model / cluster: preset names; modelOver / clusterOver: edited fields (sent as overrides);
//   hf: a pasted Hugging Face config.json (an object; null: none). When set, the model is
//     {"hf_config": hf} and `model` is only the preset to return to;
//   gpus: cluster.gpus when pinned (dp then derived by the core), null when plan.dp is pinned;
//   plan / workload: only the fields set (the core fills defaults and reports them in result.config);
//   view: cuts | placement | pipeline; layer: 0-based layer shown in the cuts view (null: default);
//   gpu: selected rank (null: none);
//   dis: the disaggregation panel's pools, {prefill, decode} of {gpus, tp, pp, ep, batch} (disagg.js;
//     absent: the plan's defaults).
(function (CL) {
  'use strict';

  const DEFAULT = {
    model: 'llama3-70b', modelOver: {}, hf: null,
    cluster: 'dgx-h100', clusterOver: {}, gpus: 16,
    plan: { tp: 8, pp: 2, sp: true, recompute: 'full' },
    workload: { seq_len: 8192, global_batch: 16, grad_dtype: 'bf16' },
    view: 'cuts', layer: null, gpu: null,
  };
  const VIEWS = ['cuts', 'placement', 'pipeline'];
  // Field order in the URL and in the config (stable links).
  const PLAN_KEYS = ['tp', 'pp', 'cp', 'ep', 'dp', 'etp', 'sp', 'cp_comm', 'zero', 'distributed_optimizer', 'recompute',
    'flash_attention', 'fused_elementwise', 'schedule', 'vpp', 'micro_batch', 'rank_order', 'tp_comm_overlap', 'overlap_grad_reduce',
    'overlap_param_gather', 'reshard_after_forward', 'activation_offload_layers', 'ep_comm_overlap', 'ep_dispatcher', 'ep_dispatch_dtype', 'fused_cross_entropy', 'recompute_modules',
    'activation_func_fp8_input_store', 'layers_per_stage', 'embedding_in_pipeline_split', 'loss_in_pipeline_split',
    'moe_capacity_factor', 'moe_pad_to_capacity', 'moe_imbalance', 'moe_shared_expert_overlap'];
  const WORKLOAD_KEYS = ['mode', 'seq_len', 'global_batch', 'dtype', 'grad_dtype', 'moment_dtype', 'ema', 'batch', 'prompt_len',
    'output_len', 'length_mix', 'weight_dtype', 'expert_weight_dtype', 'kv_dtype', 'local_kv_cache', 'batching', 'max_num_tokens', 'kv_block_tokens', 'kv_cache_free_fraction', 'request_rate_per_s', 'num_requests', 'spec_draft_tokens',
    'spec_acceptance'];
  // Plan fields that are lists: comma-separated in the URL ("layernorm,moe_act").
  const LIST_KEYS = ['recompute_modules', 'layers_per_stage'];

  function clone(x) { return JSON.parse(JSON.stringify(x)); }

  // workload.length_mix as people write it: "1000/200 70%, 8000/500 30%" (prompt/output, then a share,
  // relative to the others': 70%, 0.7, ×3, :0.7 or nothing for 1). {value: [{prompt_len, output_len, share}]}
  // or {error: text}. Empty text: no mix (value null). At most MIX_READ classes are read, so a long
  // paste stays cheap; the core names the rule on their count (8).
  const MIX_READ = 16;
  function parseMix(text) {
    const t = String(text == null ? '' : text).trim();
    if (!t) return { value: null };
    const parts = t.split(/[,;]/).map((x) => x.trim()).filter((x) => x);
    if (parts.length > MIX_READ) return { error: parts.length + ' classes: at most 8 (merge the rarest)' };
    const value = [];
    for (const part of parts) {
      const m = /^(\d{1,9})\s*\/\s*(\d{1,9})(?:\s*[×x*:]?\s*(\d{0,9}(?:\.\d+)?)\s*(%?))?$/i.exec(part);
      if (!m || m[3] === '' && m[4]) return { error: '"' + part.slice(0, 40) + '" is not prompt/output [share], as in 1000/200 70%' };
      value.push({ prompt_len: Number(m[1]), output_len: Number(m[2]), share: m[3] ? Number(m[3]) : 1 });
    }
    return { value };
  }
  // The mix as text, each share as a percentage of the whole ("1000/200 70%, 8000/500 30%").
  function mixText(mix) {
    if (!Array.isArray(mix) || !mix.length) return '';
    const total = mix.reduce((a, c) => a + (Number(c.share) > 0 ? Number(c.share) : 0), 0);
    return mix.map((c) => c.prompt_len + '/' + c.output_len + (total > 0 ? ' ' + Number((100 * c.share / total).toPrecision(3)) + '%' : '')).join(', ');
  }

  function toConfig(s) {
    const hasOver = Object.keys(s.modelOver).length > 0;
    const cfg = {
      model: s.hf ? { hf_config: s.hf } : hasOver ? Object.assign({ preset: s.model }, s.modelOver) : s.model,
      cluster: Object.assign({ preset: s.cluster }, s.clusterOver),
      plan: {},
      workload: {},
    };
    if (s.gpus != null) cfg.cluster.gpus = s.gpus;
    for (const k of PLAN_KEYS) if (s.plan[k] !== undefined) cfg.plan[k] = s.plan[k];
    for (const k of Object.keys(s.plan)) if (!(k in cfg.plan)) cfg.plan[k] = s.plan[k];
    for (const k of WORKLOAD_KEYS) if (s.workload[k] !== undefined) cfg.workload[k] = s.workload[k];
    for (const k of Object.keys(s.workload)) if (!(k in cfg.workload)) cfg.workload[k] = s.workload[k];
    return cfg;
  }

  function parseValue(v) {
    if (v === 'true') return true;
    if (v === 'false') return false;
    if (/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(v)) return Number(v);
    return v;
  }

  // URL query: model=…&m.layers=…&hf={…config.json…}&cluster=…&c.hbm_GiB=…&gpus=…&tp=8&…&view=…&layer=…&gpu=…
  function toQuery(s, extra) {
    const q = new URLSearchParams();
    q.set('model', s.model);
    for (const [k, v] of Object.entries(s.modelOver)) q.set('m.' + k, v);
    if (s.hf) q.set('hf', JSON.stringify(s.hf));
    q.set('cluster', s.cluster);
    for (const [k, v] of Object.entries(s.clusterOver)) q.set('c.' + k, v);
    if (s.gpus != null) q.set('gpus', s.gpus);
    const cfg = toConfig(s);
    for (const [k, v] of Object.entries(cfg.plan)) q.set(k, Array.isArray(v) ? v.join(',') : v);
    for (const [k, v] of Object.entries(cfg.workload)) q.set(k, k === 'length_mix' && Array.isArray(v) ? mixText(v) : v);
    if (s.view !== 'cuts') q.set('view', s.view);
    if (s.layer != null) q.set('layer', s.layer);
    if (s.gpu != null) q.set('gpu', s.gpu);
    // the disaggregation panel's pools (disagg.js): dis.p.tp=8&dis.d.batch=64
    if (s.dis) for (const [pool, o] of Object.entries(s.dis)) for (const [k, v] of Object.entries(o || {})) q.set('dis.' + pool.charAt(0) + '.' + k, v);
    if (extra) for (const [k, v] of Object.entries(extra)) q.set(k, v);
    return '?' + q.toString();
  }

  // The pasted config.json from the URL; a link whose JSON was damaged loses only the model.
  function parseHf(text) {
    if (!text) return null;
    const parsed = CL.strictJson.parse(text);  // strict, as the core reads JSON (strict-json.js)
    if (parsed.error) {
      console.warn('cutlab: the hf parameter of the link is not accepted (' + parsed.error.message + (parsed.error.path ? ' at ' + parsed.error.path : '') +
        '); using the preset model');
      return null;
    }
    const v = parsed.value;
    return v !== null && typeof v === 'object' ? v : null;
  }

  // the page's own switches too (app.js ?debug, ?prefetch, ?warm; search-run.js ?search): not plan keys
  const RESERVED = new Set(['model', 'hf', 'cluster', 'gpus', 'view', 'layer', 'gpu', 'embed', 'embed_id', 'ex', 'debug', 'prefetch', 'warm', 'search']);
  // Returns null when the query holds no plan (then the default state applies).
  function fromQuery(search) {
    const q = new URLSearchParams(search);
    if (!q.has('model') && !q.has('cluster')) {
      if (!q.has('view')) return null;
      const s = clone(DEFAULT);
      if (VIEWS.includes(q.get('view'))) s.view = q.get('view');
      return s;
    }
    const s = { model: q.get('model') || DEFAULT.model, modelOver: {}, hf: parseHf(q.get('hf')), cluster: q.get('cluster') || DEFAULT.cluster,
      clusterOver: {}, gpus: q.has('gpus') ? parseValue(q.get('gpus')) : null, plan: {}, workload: {},
      view: VIEWS.includes(q.get('view')) ? q.get('view') : 'cuts',
      layer: q.has('layer') ? parseValue(q.get('layer')) : null, gpu: q.has('gpu') ? parseValue(q.get('gpu')) : null };
    for (const [k, v] of q.entries()) {
      if (RESERVED.has(k)) continue;
      const dis = /^dis\.([pd])\.([a-z_]{1,24})$/.exec(k);
      if (dis) {
        const pool = dis[1] === 'p' ? 'prefill' : 'decode';
        s.dis = s.dis || {};
        s.dis[pool] = Object.assign(s.dis[pool] || {}, { [dis[2]]: parseValue(v) });
        continue;
      }
      if (k.startsWith('m.')) s.modelOver[k.slice(2)] = parseValue(v);
      else if (k.startsWith('c.')) s.clusterOver[k.slice(2)] = parseValue(v);
      else if (k === 'length_mix') {
        const mix = parseMix(v);  // a damaged mix goes to the core as text, which names its path
        if (mix.value) s.workload.length_mix = mix.value;
        else if (mix.error) s.workload.length_mix = v.slice(0, 200);
      } else if (WORKLOAD_KEYS.includes(k)) s.workload[k] = parseValue(v);
      else if (LIST_KEYS.includes(k)) s.plan[k] = v === '' ? [] : v.split(',').map(parseValue);
      else s.plan[k] = k === 'rank_order' ? v : parseValue(v);
    }
    return s;
  }

  // A named choice as the core describes it (presets().choices, core/choices.h): {name, label,
  // default, and per kind: serving (mode), virtual_stages and chunks_per_stage (schedule)}. The page
  // asks these attributes instead of comparing names; name null or unknown: the default.
  function choice(key, name) {
    const list = (CL.presets && CL.presets.choices[key]) || [];
    return list.find((c) => c.name === name) || list.find((c) => c.default) || {};
  }
  const serving = (mode) => !!choice('mode', mode).serving;
  // A link tier of result r as people name it on its cluster (core/hardware.h link_label): the
  // cluster's node_link ("NVLink", "PCIe") inside a node. Text: escape it where it goes into HTML.
  const linkLabel = (r, link) => (link === 'nvlink' && r && r.config && r.config.cluster.node_link) || choice('link', link).label;

  CL.state = { DEFAULT, VIEWS, PLAN_KEYS, WORKLOAD_KEYS, clone, toConfig, toQuery, fromQuery, parseValue, parseMix, mixText, choice, serving, linkLabel };
})(window.CL = window.CL || {});
