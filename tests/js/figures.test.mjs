// The figures of the Cuts and Placement views (placementScene(), cutsScene(): core/figure.h) are
// the native CLI's to the byte (`cutlab draw --view … --json`) for meshes from 16 to 16,384 GPUs,
// training and serving; web/figure.js writes each one as SVG with every drawn item; and
// web/state.js round-trips a state (a pasted config.json included) through the URL.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const wasmDir = path.resolve(process.env.WASM_DIR ?? path.join(root, 'build-wasm/web'));
const cli = path.resolve(process.env.NATIVE_CLI ?? path.join(root, 'build-native/native/cutlab'));
const require = createRequire(import.meta.url);

// Loads the page's classic scripts into a sandbox with a `window` (text measured at 6 px per
// character: there is no canvas in node).
function loadPageScripts(...files) {
  const ctx2d = { font: '', measureText: (s) => ({ width: 6 * String(s).length }) };
  const document = { createElement: () => ({ getContext: () => ctx2d }) };
  const sandbox = { window: {}, document, URLSearchParams, performance, console: Object.assign({}, console, { warn() {} }) };
  vm.createContext(sandbox);
  for (const f of files) vm.runInContext(fs.readFileSync(path.join(root, 'web', f), 'utf8'), sandbox, { filename: f });
  return sandbox.window.CL;
}

let core;
// core-full.js: placementScene() is not in the page's first module (tests/js/first.test.mjs).
before(async () => { core = await require(path.join(wasmDir, 'core-full.js'))(); });

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cutlab-figures-'));
function draw(config, view, width, extra = []) {
  const file = path.join(tmp, 'config.json');
  fs.writeFileSync(file, JSON.stringify(config));
  const p = spawnSync(cli, ['draw', file, '--view', view, '--width', String(width), '--json', ...extra], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(p.status, 0, p.stderr);
  return p.stdout.trim();
}

const CASES = [
  { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 16 }, plan: { tp: 8, pp: 2 }, workload: { seq_len: 8192, global_batch: 16 } },
  { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 32 }, plan: { tp: 4, pp: 2, cp: 2, rank_order: 'tp-pp-cp-ep-dp' }, workload: { seq_len: 8192, global_batch: 16 } },
  { model: 'qwen2-57b-a14b', cluster: { preset: 'dgx-h100', gpus: 64 }, plan: { tp: 2, pp: 2, ep: 4, sp: true }, workload: { seq_len: 4096, global_batch: 64 } },
  { model: 'mixtral-8x22b', cluster: { preset: 'gb200-nvl72', gpus: 144 }, plan: { tp: 4, pp: 2, ep: 4, etp: 2, sp: true }, workload: { seq_len: 4096, global_batch: 72 } },
  { model: 'deepseek-v3', cluster: { preset: 'hgx-h800', gpus: 2048 }, plan: { tp: 1, pp: 16, ep: 64, zero: 1 }, workload: { seq_len: 4096, global_batch: 15360 } },
  { model: 'llama3-405b', cluster: { preset: 'dgx-h100', gpus: 16384 }, plan: { tp: 8, pp: 16, cp: 16 }, workload: { seq_len: 131072, global_batch: 128 } },
  { model: 'llama3-70b', cluster: 'dgx-h100', plan: { tp: 8, dp: 2 }, workload: { mode: 'infer', batch: 8 } },
];

for (const cfg of CASES) {
  test(`placement and cuts figures equal \`cutlab draw --json\`: ${cfg.model} on ${cfg.cluster.gpus || 16} ${JSON.stringify(cfg.plan)}`, () => {
    const text = JSON.stringify(cfg);
    for (const width of [700, 1240]) {
      const p = core.placementScene(text, width);
      assert.equal(p, '{"ok":true,"result":' + draw(cfg, 'placement', width) + '}');
      const c = core.cutsScene(text, width, -1);
      assert.equal(c, '{"ok":true,"result":' + draw(cfg, 'cuts', width) + '}');
    }
    // a chosen layer, and a width out of range
    assert.equal(core.cutsScene(text, 900, 1), '{"ok":true,"result":' + draw(cfg, 'cuts', 900, ['--layer', '1']) + '}');
    const bad = JSON.parse(core.placementScene(text, 10));
    assert.equal(bad.ok, false);
    assert.equal(bad.errors[0].path, '/width');
  });
}

test('web/figure.js: the SVG of a figure holds every drawn rect and text, in the palette\'s colours', () => {
  const CL = loadPageScripts('format.js', 'palette.js', 'gfx.js', 'figure.js');
  for (const cfg of [CASES[0], CASES[4]]) {
    const text = JSON.stringify(cfg);
    for (const f of [JSON.parse(core.placementScene(text, 1000)).result, JSON.parse(core.cutsScene(text, 1000, -1)).result]) {
      const svg = CL.figure.svg(f);
      assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="1000"/);
      assert.ok(svg.trimEnd().endsWith('</svg>'));
      const texts = (svg.match(/<text /g) || []).length;
      assert.equal(texts, f.texts.length, f.view + ': a <text> per text');
      const drawn = f.rects.filter((r) => r.kind !== 'region').length;
      const shapes = (svg.match(/<(rect|path|circle) /g) || []).length - 1;   // less the background
      assert.ok(shapes >= drawn, f.view + ': ' + shapes + ' shapes for ' + drawn + ' rects');
      // every GPU's tone colour is the palette's rank colour
      for (const r of f.rects.filter((x) => x.kind === 'cell' || x.kind === 'slice').slice(0, 20))
        assert.ok(svg.includes('fill="' + CL.palette.rank(CL.palette.axis[r.tone], r.tone_index, r.tone_count) + '"'));
    }
  }
});

test('state → URL → state round-trips, and the config is what the core reads', () => {
  const CL = loadPageScripts('strict-json.js', 'state.js');
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
