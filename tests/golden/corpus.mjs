// corpus.mjs: writes the golden corpus, one config per line (JSON), to stdout: every model preset ×
// several clusters × plans, training and serving, valid and invalid. Deterministic (no randomness),
// so the same corpus is produced at every revision. Used by tests/golden/record.
const models = ['gpt3-175b', 'megatron-22b', 'megatron-530b', 'megatron-1t', 'llama3-8b', 'llama3-70b',
  'llama3-405b', 'mixtral-8x22b', 'deepseek-v3', 'qwen2-57b-a14b'];
const moe = new Set(['mixtral-8x22b', 'deepseek-v3', 'qwen2-57b-a14b']);
const clusters = ['dgx-a100', 'dgx-h100', 'hgx-h800', 'hgx-h200', 'dgx-b200', 'gb200-nvl72'];
const out = [];
const add = (c) => out.push(JSON.stringify(c));

const trainPlans = [
  {gpus: 64, plan: {tp: 8, pp: 2, sp: true, recompute: 'selective', distributed_optimizer: true}, wl: {seq_len: 8192, global_batch: 64}},
  {gpus: 128, plan: {tp: 4, pp: 4, vpp: 2, schedule: 'interleaved', sp: true, micro_batch: 1}, wl: {seq_len: 4096, global_batch: 128}},
  {gpus: 64, plan: {tp: 8, pp: 8, schedule: 'zb-h1', sp: true, recompute: 'full'}, wl: {seq_len: 2048, global_batch: 64}},
  {gpus: 32, plan: {tp: 4, pp: 4, schedule: 'gpipe', micro_batch: 2, zero: 1}, wl: {seq_len: 4096, global_batch: 64, grad_dtype: 'bf16'}},
  {gpus: 256, plan: {tp: 8, pp: 4, cp: 2, sp: true, schedule: 'dualpipe', recompute: 'selective'}, wl: {seq_len: 16384, global_batch: 128, dtype: 'fp8'}},
  {gpus: 16, plan: {tp: 2, zero: 3, overlap_param_gather: false}, wl: {seq_len: 2048, global_batch: 32}},
  {gpus: 16, plan: {tp: 8, zero: 2, tp_comm_overlap: true, sp: true, rank_order: 'tp-dp-cp-ep-pp'}, wl: {seq_len: 4096, global_batch: 16}},
];
const moePlans = [
  {gpus: 64, plan: {tp: 1, pp: 4, ep: 8, schedule: '1f1b'}, wl: {seq_len: 4096, global_batch: 64}},
  {gpus: 128, plan: {tp: 2, pp: 4, ep: 8, sp: true, etp: 1, distributed_optimizer: true}, wl: {seq_len: 4096, global_batch: 128}},
  {gpus: 256, plan: {tp: 1, pp: 8, ep: 32, schedule: 'dualpipe', zero: 1}, wl: {seq_len: 4096, global_batch: 256, dtype: 'fp8'}},
];
const servePlans = [
  {gpus: 8, plan: {tp: 8}, wl: {mode: 'infer', batch: 16, prompt_len: 2048, output_len: 256}},
  {gpus: 16, plan: {tp: 4, pp: 2}, wl: {mode: 'infer', batch: 64, prompt_len: 1024, output_len: 512, weight_dtype: 'fp8', kv_dtype: 'fp8'}},
  {gpus: 8, plan: {tp: 2}, wl: {mode: 'infer', batch: 1, prompt_len: 128, output_len: 64, weight_dtype: 'int4'}},
];

for (const model of models) {
  for (const [i, cluster] of clusters.entries()) {
    const plans = [...trainPlans, ...(moe.has(model) ? moePlans : []), ...servePlans];
    // Every cluster sees a rotating subset so the corpus stays near 300 configs.
    plans.forEach((p, j) => {
      if ((i + j) % 3 !== 0 && !(i === 1)) return;
      const plan = {...p.plan};
      if (moe.has(model) && !plan.ep) { plan.ep = 1; }
      add({model, cluster: {preset: cluster, gpus: p.gpus}, plan, workload: p.wl});
    });
  }
}
// Invalid and edge configs: errors listed together, bad types, unknown names.
const base = {model: 'llama3-70b', cluster: {preset: 'dgx-h100', gpus: 64}, plan: {tp: 8, pp: 2}, workload: {seq_len: 4096, global_batch: 64}};
const edits = [
  (c) => { c.plan.tp = 3; },
  (c) => { c.plan.tp = 16; c.plan.pp = 5; },
  (c) => { c.plan.schedule = 'interleaved'; c.plan.vpp = 3; },
  (c) => { c.plan.schedule = 'bogus'; },
  (c) => { c.plan.recompute = 'some'; c.plan.zero = 7; },
  (c) => { c.workload.global_batch = 0; },
  (c) => { c.workload.global_batch = 63; },
  (c) => { c.workload.dtype = 'fp4'; c.workload.grad_dtype = 'int8'; },
  (c) => { c.model = 'nope'; },
  (c) => { c.cluster.preset = 'nope'; },
  (c) => { c.plan.tp = 'eight'; },
  (c) => { c.plan.layers_per_stage = [40, 40]; },
  (c) => { c.plan.layers_per_stage = [39, 41]; },
  (c) => { c.plan.pp = 4; c.plan.schedule = 'dualpipe'; },
  (c) => { c.plan.zero = 3; c.plan.pp = 2; },
  (c) => { c.plan.cp = 2; c.plan.pp = 1; c.workload.seq_len = 8191; },
  (c) => { c.plan.rank_order = 'pp-tp-cp-ep-dp'; },
  (c) => { c.plan.rank_order = 'tp-tp-cp-ep-dp'; },
  (c) => { c.workload.mode = 'serve'; },
  (c) => { c.workload.mode = 'infer'; c.workload.batch = 0; },
  (c) => { c.cluster = {gpus: 8}; },
  (c) => { c.model = {layers: 2, hidden: 256, heads: 4, kv_heads: 2, head_dim: 64, vocab: 1000, ffn_hidden: 512}; c.cluster.gpus = 16; },
  (c) => { c.model = {layers: 0, hidden: -1}; },
  (c) => { c.plan.sp = 'yes'; },
  (c) => { c.plan.micro_batch = 3; },
  (c) => { c.plan.ep = 2; },
  (c) => { c.plan.etp = 2; },
  (c) => { c.cluster.gpus = 100; },
];
edits.forEach((f) => { const c = structuredClone(base); f(c); add(c); });
add('not json');
add([1, 2]);
add({model: 'mixtral-8x22b', cluster: {preset: 'dgx-h100', gpus: 64}, plan: {tp: 2, ep: 8, pp: 4, etp: 3}, workload: {seq_len: 4096, global_batch: 64}});
add({model: 'deepseek-v3', cluster: {preset: 'hgx-h800', gpus: 2048}, plan: {pp: 16, ep: 64, schedule: 'dualpipe', zero: 1, recompute: 'full'}, workload: {seq_len: 4096, global_batch: 15360, dtype: 'fp8'}});
add({model: 'llama3-405b', cluster: {preset: 'dgx-h100', gpus: 16384}, plan: {tp: 8, pp: 16, cp: 1, vpp: 2, schedule: 'interleaved', sp: true, recompute: 'selective', distributed_optimizer: true}, workload: {seq_len: 8192, global_batch: 2048}});
process.stdout.write(out.join('\n') + '\n');
