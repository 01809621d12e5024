// The WASM module (build-wasm/web/core.js) gives exactly the native CLI's answers: for each config
// the parsed JSON of core.evaluate() equals the parsed JSON of `cutlab evaluate X --json`
// (deepStrictEqual: same keys, same numbers to the last bit), errors included; same for the
// schedule and the presets.
// Run: node --test tests/js/   (env WASM_DIR, default build-wasm/web; NATIVE_CLI, default build-native/native/cutlab)
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const wasmDir = path.resolve(process.env.WASM_DIR ?? path.join(root, 'build-wasm/web'));
const cli = path.resolve(process.env.NATIVE_CLI ?? path.join(root, 'build-native/native/cutlab'));
const require = createRequire(import.meta.url);

let core;
before(async () => {
  const createCutlab = require(path.join(wasmDir, 'core.js'));
  core = await createCutlab();
});

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cutlab-parity-'));
function native(cmd, config, extra = []) {
  const file = path.join(tmp, 'config.json');
  fs.writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
  const p = spawnSync(cli, [cmd, file, '--json', ...extra], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.ok(p.status === 0 || p.status === 2, `${cmd} exited ${p.status}: ${p.stderr}`);
  return { status: p.status, json: JSON.parse(p.stdout) };
}
const fixture = (name) => fs.readFileSync(path.join(root, 'tests/fixtures', name), 'utf8');

const CONFIGS = {
  'dense TP8 PP2 (fixture)': fixture('tp8_pp2.json'),
  'dense Llama 3 405B on 16,384 GPUs, interleaved': {
    model: 'llama3-405b', cluster: { preset: 'dgx-h100', gpus: 16384 },
    plan: { tp: 8, pp: 16, sp: true, distributed_optimizer: true, recompute: 'selective', schedule: 'interleaved', vpp: 2 },
    workload: { seq_len: 8192, global_batch: 2048, grad_dtype: 'bf16' },
  },
  'dense with CP 16 and ZeRO-3': {
    model: 'llama3-405b', cluster: { preset: 'dgx-h100', gpus: 16384 },
    plan: { tp: 8, pp: 16, cp: 16, sp: true, zero: 3, recompute: 'selective' }, workload: { seq_len: 131072, global_batch: 128 },
  },
  'MoE DeepSeek-V3, PP16 × EP64, DualPipe, fp8': {
    model: 'deepseek-v3', cluster: { preset: 'hgx-h800', gpus: 2048 },
    plan: { tp: 1, pp: 16, ep: 64, zero: 1, schedule: 'dualpipe', recompute: 'full' }, workload: { seq_len: 4096, global_batch: 15360, dtype: 'fp8' },
  },
  'MoE Mixtral with folding (etp), ZB-H1': {
    model: 'mixtral-8x22b', cluster: { preset: 'dgx-h100', gpus: 128 },
    plan: { tp: 2, pp: 8, ep: 8, etp: 1, sp: true, distributed_optimizer: true, recompute: 'selective', schedule: 'zb-h1' },
    workload: { seq_len: 4096, global_batch: 256 },
  },
  'custom model and cluster objects, GPipe, NVL72': {
    model: { name: 'toy', layers: 12, hidden: 1024, heads: 16, vocab: 32000 },
    cluster: { preset: 'gb200-nvl72', gpus: 144 }, plan: { tp: 4, pp: 4, schedule: 'gpipe' }, workload: { seq_len: 2048, global_batch: 72 },
  },
};
const INVALID = {
  'invalid fixture (unknown key, wrong type)': fixture('invalid.json'),
  'not JSON at all': '{"model": ',
  'incompatible mesh': { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 16 }, plan: { tp: 3, pp: 2 }, workload: { seq_len: 8192, global_batch: 16 } },
};

for (const [name, cfg] of Object.entries(CONFIGS)) {
  test(`evaluate equals the CLI: ${name}`, () => {
    const text = typeof cfg === 'string' ? cfg : JSON.stringify(cfg);
    const wasm = JSON.parse(core.evaluate(text));
    assert.equal(wasm.ok, true, JSON.stringify(wasm.errors));
    const n = native('evaluate', text);
    assert.equal(n.status, 0);
    assert.deepStrictEqual(wasm.result, n.json);
  });
}

for (const [name, cfg] of Object.entries(INVALID)) {
  test(`errors equal the CLI's: ${name}`, () => {
    const text = typeof cfg === 'string' ? cfg : JSON.stringify(cfg);
    const wasm = JSON.parse(core.evaluate(text));
    assert.equal(wasm.ok, false);
    assert.ok(wasm.errors.length > 0);
    const n = native('evaluate', text);
    assert.equal(n.status, 2);
    if (name === 'not JSON at all') {
      // the CLI names the file in its message; code and path agree
      assert.deepStrictEqual(wasm.errors.map((e) => [e.code, e.path]), n.json.errors.map((e) => [e.code, e.path]));
    } else {
      assert.deepStrictEqual(wasm.errors, n.json.errors);
    }
  });
}

test('schedule (every op) equals `cutlab schedule --json`', () => {
  const cfg = JSON.stringify(CONFIGS['dense Llama 3 405B on 16,384 GPUs, interleaved']);
  const wasm = JSON.parse(core.schedule(cfg));
  assert.equal(wasm.ok, true);
  const n = native('schedule', cfg);
  assert.deepStrictEqual(wasm.result, n.json);
});

test('presets equal `cutlab presets --json`', () => {
  const wasm = JSON.parse(core.presets());
  const p = spawnSync(cli, ['presets', '--json'], { encoding: 'utf8' });
  assert.equal(p.status, 0);
  assert.deepStrictEqual(wasm.result, JSON.parse(p.stdout));
});

test('options lists the current valid value of every axis', () => {
  if (typeof core.options !== 'function') return;
  const cfg = CONFIGS['MoE Mixtral with folding (etp), ZB-H1'];
  const o = JSON.parse(core.options(JSON.stringify(cfg)));
  assert.equal(o.ok, true);
  const plan = JSON.parse(core.evaluate(JSON.stringify(cfg))).result.config.plan;
  for (const axis of ['tp', 'pp', 'cp', 'ep', 'etp', 'vpp', 'micro_batch']) assert.ok(o.result[axis].includes(plan[axis]), axis);
});

test('nothing throws across the boundary, whatever the input', () => {
  for (const text of ['', 'null', '[]', '{"model":"nope","cluster":"nope"}', '{"model":"llama3-8b","cluster":"dgx-h100","plan":{"tp":0}}']) {
    const r = JSON.parse(core.evaluate(text));
    assert.equal(r.ok, false, text);
    assert.ok(Array.isArray(r.errors) && r.errors.length > 0, text);
  }
  const g = JSON.parse(core.gpu(JSON.stringify(CONFIGS['MoE Mixtral with folding (etp), ZB-H1']), 100000));
  assert.equal(g.ok, false);
  assert.equal(g.errors[0].path, '/rank');
});
