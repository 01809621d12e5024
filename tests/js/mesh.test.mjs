// web/mesh.js (rank → coordinates from the core's placement.strides and expert_strides, used by
// the page to colour GPU cells and group nodes) agrees with the core's gpus() for every rank of
// meshes up to 4,096 GPUs and windows of bigger ones, for several rank orders, with and without
// MoE Parallel Folding; derive.js asks for rank 0's groups in one gpus() call. And web/state.js
// round-trips a state (a pasted config.json included) through the URL.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const wasmDir = path.resolve(process.env.WASM_DIR ?? path.join(root, 'build-wasm/web'));
const require = createRequire(import.meta.url);

// Loads the page's classic scripts into a sandbox with a `window`.
function loadPageScripts(...files) {
  const sandbox = { window: {}, URLSearchParams, performance, console: Object.assign({}, console, { warn() {} }) };
  vm.createContext(sandbox);
  for (const f of files) vm.runInContext(fs.readFileSync(path.join(root, 'web', f), 'utf8'), sandbox, { filename: f });
  return sandbox.window.CL;
}

let core;
before(async () => { core = await require(path.join(wasmDir, 'core.js'))(); });

const CASES = [
  { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 16 }, plan: { tp: 8, pp: 2 }, workload: { seq_len: 8192, global_batch: 16 } },
  { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 32 }, plan: { tp: 4, pp: 2, cp: 2, rank_order: 'tp-pp-cp-ep-dp' }, workload: { seq_len: 8192, global_batch: 16 } },
  { model: 'llama3-8b', cluster: { preset: 'dgx-h100', gpus: 64 }, plan: { tp: 2, pp: 4, rank_order: 'dp-tp-cp-ep-pp' }, workload: { seq_len: 4096, global_batch: 64 } },
  { model: 'qwen2-57b-a14b', cluster: { preset: 'dgx-h100', gpus: 64 }, plan: { tp: 2, pp: 2, ep: 4 }, workload: { seq_len: 4096, global_batch: 64 } },
  { model: 'mixtral-8x22b', cluster: { preset: 'dgx-h100', gpus: 128 }, plan: { tp: 2, pp: 8, ep: 8, etp: 1 }, workload: { seq_len: 4096, global_batch: 256 } },
  { model: 'mixtral-8x22b', cluster: { preset: 'gb200-nvl72', gpus: 144 }, plan: { tp: 4, pp: 2, ep: 4, etp: 2 }, workload: { seq_len: 4096, global_batch: 72 } },
  { model: 'deepseek-v3', cluster: { preset: 'hgx-h800', gpus: 2048 }, plan: { tp: 1, pp: 16, ep: 64, zero: 1 }, workload: { seq_len: 4096, global_batch: 15360 } },
  { model: 'llama3-405b', cluster: { preset: 'dgx-h100', gpus: 16384 }, plan: { tp: 8, pp: 16, cp: 16 }, workload: { seq_len: 131072, global_batch: 128 } },
];

for (const cfg of CASES) {
  test(`mesh.js coordinates equal gpu(): ${cfg.model} on ${cfg.cluster.gpus} ${JSON.stringify(cfg.plan)}`, () => {
    const CL = loadPageScripts('mesh.js');
    const text = JSON.stringify(cfg);
    const ev = JSON.parse(core.evaluate(text));
    assert.equal(ev.ok, true, JSON.stringify(ev.errors));
    const mesh = CL.mesh.make(ev.result);
    assert.deepStrictEqual(mesh.strides, ev.result.placement.strides);
    const n = ev.result.gpus;
    // every rank, 4,096 per call; above that, windows at the start, middle and end
    const windows = n <= 16384 ? [...Array(Math.ceil(n / 4096)).keys()].map((k) => [k * 4096, Math.min(4096, n - k * 4096)])
      : [[0, 4096], [Math.floor(n / 2), 4096], [n - 4096, 4096]];
    let checked = 0;
    for (const [first, count] of windows) {
      const out = JSON.parse(core.gpus(text, first, count));
      assert.equal(out.ok, true, JSON.stringify(out.errors));
      assert.equal(out.result.length, count);
      for (const g of out.result) {
        const c = mesh.coords(g.rank);
        for (const k of ['node', 'local', 'tp', 'cp', 'ep', 'dp', 'pp', 'etp', 'edp']) assert.equal(c[k], g[k], `rank ${g.rank} ${k}`);
        checked++;
      }
    }
    assert.ok(checked === Math.min(n, 16384) || checked === 3 * 4096);
    // the representative ranks the page asks about
    for (const axis of ['tp', 'cp', 'pp']) {
      const size = ev.result.config.plan[axis];
      for (let i = 0; i < size; i++) assert.equal(JSON.parse(core.gpu(text, mesh.rankWith(axis, i))).result[axis], i, `${axis}=${i}`);
    }
    if (ev.result.config.model.experts > 0) {
      for (let i = 0; i < ev.result.config.plan.ep; i++) assert.equal(JSON.parse(core.gpu(text, mesh.rankWith('ep', i))).result.ep, i, `ep=${i}`);
      for (let i = 0; i < ev.result.mesh.etp; i++) assert.equal(JSON.parse(core.gpu(text, mesh.rankWith('etp', i))).result.etp, i, `etp=${i}`);
    }
  });
}

test('derive.js fetches rank 0\'s groups (TP, CP, EP, ETP ranks) in one gpus() call, and they agree', () => {
  const CL = loadPageScripts('mesh.js', 'derive.js');
  for (const cfg of CASES) {
    const text = JSON.stringify(cfg);
    const r = JSON.parse(core.evaluate(text)).result;
    const calls = [];
    const api = { gpus: (t, first, count) => { calls.push([first, count]); return JSON.parse(core.gpus(t, first, count)); } };
    const store = CL.derive.gpuStore(api, text);
    const reps = CL.derive.representatives(store, r, CL.mesh.make(r));
    const moe = r.config.model.experts > 0;
    assert.equal(reps.tp.length, r.config.plan.tp);
    assert.equal(reps.cp.length, r.config.plan.cp);
    assert.equal(reps.ep.length, moe ? r.config.plan.ep : 0);
    reps.tp.forEach((g, i) => assert.equal(g.tp, i));
    reps.cp.forEach((g, i) => assert.equal(g.cp, i));
    reps.ep.forEach((g, i) => assert.equal(g.ep, i));
    reps.etp.forEach((g, i) => assert.equal(g.etp, i));
    assert.equal(reps.mismatch.length, 0, reps.mismatch.join(", "));
    assert.equal(calls.length, 1, `${cfg.model} ${JSON.stringify(cfg.plan)}: ${JSON.stringify(calls)}`);
    reps.one('tp', 0);   // cached: no second call
    assert.equal(calls.length, 1);
  }
});

test('state → URL → state round-trips, and the config is what the core reads', () => {
  const CL = loadPageScripts('state.js');
  const s = {
    model: 'mixtral-8x22b', modelOver: { layers: 28 }, hf: null, cluster: 'dgx-h100', clusterOver: { hbm_GiB: 141 }, gpus: 64,
    plan: { tp: 2, pp: 4, ep: 8, etp: 1, sp: true, schedule: 'interleaved', vpp: 2, rank_order: 'tp-cp-ep-dp-pp' },
    workload: { seq_len: 4096, global_batch: 128, dtype: 'fp8' }, view: 'pipeline', layer: 3, gpu: 17,
  };
  const back = CL.state.fromQuery(CL.state.toQuery(s));
  assert.deepStrictEqual(JSON.parse(JSON.stringify(back)), JSON.parse(JSON.stringify(s)));
  const cfg = JSON.parse(JSON.stringify(CL.state.toConfig(s)));
  assert.deepStrictEqual(cfg.model, { preset: 'mixtral-8x22b', layers: 28 });
  assert.deepStrictEqual(cfg.cluster, { preset: 'dgx-h100', hbm_GiB: 141, gpus: 64 });
  const r = JSON.parse(core.evaluate(JSON.stringify(cfg)));
  assert.equal(r.ok, true, JSON.stringify(r.errors));
  assert.equal(r.result.config.model.layers, 28);
  // a pasted config.json travels in the URL whole, and the model becomes {"hf_config": …}
  const hf = { hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 32,
    num_key_value_heads: 8, vocab_size: 128256, tie_word_embeddings: false, rope_scaling: { factor: 8.0, rope_type: 'llama3' } };
  const h = Object.assign({}, s, { hf, modelOver: {} });
  const hback = CL.state.fromQuery(CL.state.toQuery(h));
  assert.deepStrictEqual(JSON.parse(JSON.stringify(hback.hf)), hf);
  assert.deepStrictEqual(JSON.parse(JSON.stringify(CL.state.toConfig(hback).model)), { hf_config: hf });
  // a damaged hf parameter falls back to the preset
  const broken = CL.state.toQuery(h).replace(/hf=[^&]+/, 'hf=%7B%22hidden');
  assert.equal(CL.state.fromQuery(broken).hf, null);
});
