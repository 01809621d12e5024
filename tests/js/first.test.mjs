// The page's two modules (issue 13): core.js, its first script, holds exactly the functions of
// web/bridge.js's FIRST (wasm/bindings.cpp built with CUTLAB_WASM_FIRST_VIEW), and each answers
// byte for byte as core-full.js (every function) does; web/bridge.js sends every other function to
// core-full.js: a call before that is loaded answers {ok: false, pending: true} and starts loading
// it (one <script>), and once it is there onFull's callbacks run and the calls answer.
// Run: node --test tests/js/   (env WASM_DIR, default build-wasm/web)
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
const createCutlab = require(path.join(wasmDir, 'core.js'));
const createCutlabFull = require(path.join(wasmDir, 'core-full.js'));

// web/bridge.js in a sandbox: a `window` with the two factories (createCutlabFull only once its
// <script> "loads") and a document whose <head> records the scripts added.
// fail: the script does not load (onerror).
function bridge(fail = false) {
  const added = [];
  const window = { createCutlab };
  const document = {
    createElement: (tag) => ({ tag }),
    head: { appendChild(s) { added.push(s.src); setTimeout(() => { if (fail) { s.onerror(); return; } window.createCutlabFull = createCutlabFull; s.onload(); }, 0); } },
  };
  const sandbox = { window, document, TextDecoder, console: Object.assign({}, console, { error() {} }) };
  vm.createContext(sandbox);
  vm.runInContext(fs.readFileSync(path.join(root, 'web/bridge.js'), 'utf8'), sandbox, { filename: 'bridge.js' });
  return { CL: window.CL, added };
}

const fixture = JSON.parse(fs.readFileSync(path.join(root, 'tests/fixtures/tp8_pp2.json'), 'utf8'));
const CONFIGS = [
  fixture,
  { model: 'llama3-405b', cluster: { preset: 'dgx-h100', gpus: 16384 },
    plan: { tp: 8, pp: 16, sp: true, distributed_optimizer: true, recompute: 'selective', schedule: 'interleaved', vpp: 2 },
    workload: { seq_len: 8192, global_batch: 2048 } },
  { model: 'deepseek-v3', cluster: { preset: 'hgx-h800', gpus: 2048 },
    plan: { tp: 1, pp: 16, ep: 64, zero: 1, schedule: 'dualpipe', recompute: 'full' }, workload: { seq_len: 4096, global_batch: 15360, dtype: 'fp8' } },
  { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 16 }, plan: { tp: 4, pp: 2 },
    workload: { mode: 'infer', batch: 32, prompt_len: 2048, output_len: 256 } },
  Object.assign({}, fixture, { plan: Object.assign({}, fixture.plan, { tp: 3 }) }),   // invalid: errors and the config as read
].map((c) => JSON.stringify(c));

// bridge.js's objects come from the sandbox's realm: compared as JSON text (or copied into arrays of this one).
const same = (a, b, what) => assert.equal(JSON.stringify(a), JSON.stringify(b), what);

let first, full, FIRST, FUNCTIONS;
before(async () => {
  [first, full] = await Promise.all([createCutlab(), createCutlabFull()]);
  const b = bridge().CL.bridge;
  FIRST = Array.from(b.FIRST);
  FUNCTIONS = Array.from(b.FUNCTIONS);
});

test('core.js has exactly bridge.js FIRST; core-full.js has every function of bridge.js', () => {
  assert.deepEqual(FUNCTIONS.filter((f) => typeof first[f] === 'function'), FUNCTIONS.filter((f) => FIRST.includes(f)));
  assert.equal(FIRST.length, 6);
  assert.deepEqual(FUNCTIONS.filter((f) => typeof full[f] !== 'function'), []);
});

const SERVING = 3;   // CONFIGS[3]: a valid serving plan, which core.js leaves to core-full.js

test('core.js answers as core-full.js to the byte: evaluate, options, gpus, cutsScene, presets, evaluations', () => {
  assert.equal(first.presets(), full.presets());
  assert.deepEqual(CONFIGS.map((t) => JSON.parse(full.evaluate(t)).ok), [true, true, true, true, false]);
  assert.deepEqual(CONFIGS.map((t) => JSON.parse(first.evaluate(t)).ok), [true, true, true, false, false]);
  CONFIGS.forEach((text, i) => {
    if (i !== SERVING) {
      assert.equal(first.evaluate(text), full.evaluate(text));
      for (const [w, layer] of [[900, -1], [1400, 1], [320, 0]]) assert.equal(first.cutsScene(text, w, layer), full.cutsScene(text, w, layer));
    }
    assert.equal(first.options(text), full.options(text));
    for (const [a, n] of [[0, 16], [5, 3], [0, 5000]]) assert.equal(first.gpus(text, a, n), full.gpus(text, a, n));
  });
  for (const bad of ['{', '', '{"model": "no-such-model"}']) {
    assert.equal(first.evaluate(bad), full.evaluate(bad));
    assert.equal(first.cutsScene(bad, 900, -1), full.cutsScene(bad, 900, -1));
  }
  assert.equal(first.evaluations(), full.evaluations());
});

test('core.js prices training only: a valid serving plan answers pending, with the config as read', () => {
  const text = CONFIGS[SERVING];
  for (const out of [JSON.parse(first.evaluate(text)), JSON.parse(first.cutsScene(text, 900, -1))]) {
    assert.equal(out.ok, false);
    assert.equal(out.pending, true);
    assert.deepEqual(out.errors.map((e) => e.path), ['/workload/mode']);
    same(out.config, JSON.parse(full.evaluate(text)).result.config);
  }
  // an invalid serving plan gets its errors from core.js, as from core-full.js
  const bad = JSON.stringify(Object.assign(JSON.parse(text), { workload: { mode: 'infer', batch: 32, prompt_len: 2048, output_len: 0 } }));
  assert.equal(first.evaluate(bad), full.evaluate(bad));
  assert.equal(JSON.parse(first.evaluate(bad)).pending, undefined);
});

test('core-full.js: each NAME + "Bytes" function is NAME\'s JSON as UTF-8 bytes (what bridge.js calls)', () => {
  const text = (view) => new TextDecoder().decode(view);
  const names = Object.keys(full).filter((k) => /Bytes$/.test(k)).sort();
  assert.deepEqual(names, ['cutsSceneBytes', 'evaluateBytes', 'gpusBytes', 'optionsBytes', 'placementSceneBytes', 'timelineBytes']);
  for (const t of CONFIGS.concat(['{', '{"model": "no-such-model"}'])) {
    assert.equal(text(full.evaluateBytes(t)), full.evaluate(t));
    assert.equal(text(full.optionsBytes(t)), full.options(t));
    assert.equal(text(full.gpusBytes(t, 5, 3)), full.gpus(t, 5, 3));
    assert.equal(text(full.cutsSceneBytes(t, 900, 1)), full.cutsScene(t, 900, 1));
    assert.equal(text(full.timelineBytes(t, 700, 0)), full.timeline(t, 700, 0));
    assert.equal(text(full.placementSceneBytes(t, 900)), full.placementScene(t, 900));
  }
  for (const f of FUNCTIONS) assert.equal(typeof first[f + 'Bytes'], 'undefined', 'core.js has no ' + f + 'Bytes');
});

test('bridge.js: first-view functions from core.js; the others pending until core-full.js is loaded, then every function from it', async () => {
  const { CL, added } = bridge();
  const api = await CL.bridge.load();
  const text = CONFIGS[0];
  for (const f of FUNCTIONS) assert.equal(api.ready(f), FIRST.includes(f), f);
  same(api.evaluate(text), JSON.parse(full.evaluate(text)));
  let called = 0;
  api.onFull(() => { ++called; });
  const pending = api.timeline(text, 800, 400);
  assert.equal(pending.ok, false);
  assert.equal(pending.pending, true);
  assert.match(pending.errors[0].message, /Loading/);
  assert.equal(api.launch(text, 'megatron').pending, true);
  same(added, ['core-full.js'], 'one <script>, added on the first call');
  assert.equal(called, 0);
  assert.equal(api.moduleOf('searchPart'), null);
  assert.equal(api.moduleOf('evaluate'), api.module);
  await api.full();
  assert.equal(called, 1);
  same(added, ['core-full.js']);
  for (const f of FUNCTIONS) assert.equal(api.ready(f), true, f);
  same(api.timeline(text, 800, 400), JSON.parse(full.timeline(text, 800, 400)));
  same(api.launch(text, 'megatron'), JSON.parse(full.launch(text, 'megatron')));
  assert.equal(typeof api.moduleOf('searchPart').searchPart, 'function');
  // core.js's own functions now answer from core-full.js too (faster, the same bytes)
  assert.notEqual(api.moduleOf('evaluate'), api.module);
  assert.equal(api.moduleOf('evaluate'), api.moduleOf('searchPart'));
  same(api.evaluate(text), JSON.parse(full.evaluate(text)));
});

test('bridge.js: load({full: true}) starts core-full.js at once (a first view that needs it)', async () => {
  const { CL, added } = bridge();
  const api = await CL.bridge.load({ full: true });
  same(added, ['core-full.js']);
  await api.full();
  assert.equal(api.ready('placementScene'), true);
});

test('bridge.js: a core-full.js that does not load turns the pending answers into its error', async () => {
  const { CL } = bridge(true);
  const api = await CL.bridge.load();
  let called = 0;
  api.onFull(() => { ++called; });
  assert.equal(api.balance(CONFIGS[0]).pending, true);
  await assert.rejects(api.full(), /core-full\.js did not load/);
  assert.equal(called, 1);
  assert.match(api.fullError().message, /did not load/);
  const out = api.balance(CONFIGS[0]);
  assert.equal(out.ok, false);
  assert.equal(out.pending, undefined);
  assert.match(out.errors[0].message, /could not start: core-full\.js did not load/);
  assert.equal(api.evaluate(CONFIGS[0]).ok, true, 'core.js still answers');
  const serving = api.evaluate(CONFIGS[SERVING]);
  assert.equal(serving.pending, undefined);
  assert.match(serving.errors[0].message, /could not start: core-full\.js did not load/);
});

test('bridge.js: a serving plan evaluated before core-full.js is loaded is pending, starts it, then answers from it', async () => {
  const { CL, added } = bridge();
  const api = await CL.bridge.load();
  let called = 0;
  api.onFull(() => { ++called; });
  const text = CONFIGS[SERVING];
  const out = api.evaluate(text);
  assert.equal(out.pending, true);
  assert.equal(api.cutsScene(text, 900, -1).pending, true);
  same(added, ['core-full.js'], 'the pending answer started it');
  await api.full();
  assert.equal(called, 1);
  same(api.evaluate(text), JSON.parse(full.evaluate(text)));
});
