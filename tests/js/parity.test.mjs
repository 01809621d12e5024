// The WASM module (build-wasm/web/core-full.js, every function) gives exactly the native CLI's answers: for each config
// the parsed JSON of core.evaluate() equals the parsed JSON of `cutlab evaluate X --json`
// (deepStrictEqual: same keys, same numbers to the last bit), errors included; same for the
// schedule, the presets, the serving search and a disaggregated deployment. The pipeline scene (timeline()) holds every op of the CLI's schedule;
// gpus() equals gpu() rank by rank; error results carry the config as read; a Hugging Face
// config.json is a model; and the page's SVG export writes the scene's rects.
// Run: node --test tests/js/   (env WASM_DIR, default build-wasm/web; NATIVE_CLI, default build-native/native/cutlab)
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import vm from 'node:vm';
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
  const createCutlabFull = require(path.join(wasmDir, 'core-full.js'));
  core = await createCutlabFull();
});

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cutlab-parity-'));
function native(cmd, config, extra = []) {
  const file = path.join(tmp, 'config.json');
  fs.writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
  const p = spawnSync(cli, [cmd, file, '--json', ...extra], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.ok(p.status === 0 || p.status === 2, `${cmd} exited ${p.status}: ${p.stderr}`);
  // --json prints the façade's answer: {ok, result} or {ok: false, errors, config}.
  const answer = JSON.parse(p.stdout);
  return { status: p.status, json: answer.ok === true ? answer.result : answer, answer, text: p.stdout.trim() };
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
    plan: { tp: 8, pp: 1, cp: 16, sp: true, zero: 3, recompute: 'selective' }, workload: { seq_len: 131072, global_batch: 128 },
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
    assert.equal(n.text, core.evaluate(text), '`cutlab evaluate --json` prints exactly the façade\'s answer');
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
    assert.deepStrictEqual(wasm.errors, n.json.errors);
    assert.equal(n.text, core.evaluate(text), '`cutlab evaluate --json` prints exactly the façade\'s answer');
  });
}

test('schedule (every op) equals `cutlab schedule --json`', () => {
  const cfg = JSON.stringify(CONFIGS['dense Llama 3 405B on 16,384 GPUs, interleaved']);
  const wasm = JSON.parse(core.schedule(cfg));
  assert.equal(wasm.ok, true);
  const n = native('schedule', cfg);
  assert.deepStrictEqual(wasm.result, n.json);
});

test('servingSearch and disaggregation equal `cutlab search --mode infer --json` and `cutlab evaluate --json`', () => {
  const cfg = JSON.stringify({ model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 8 }, workload: { mode: 'infer', prompt_len: 2048, output_len: 512 } });
  const wasm = JSON.parse(core.servingSearch(cfg, 10, 0, 20, 0, false));
  assert.equal(wasm.ok, true);
  const n = native('search', cfg, ['--max-tpot-ms', '20']);
  const { max_ttft_s, max_tpot_s, ...rest } = wasm.result;
  assert.equal(max_ttft_s, 0);
  assert.equal(max_tpot_s, 0.02);
  assert.deepStrictEqual(rest, n.json);
  const pd = fixture('disaggregated.json');
  assert.deepStrictEqual(JSON.parse(core.disaggregation(pd)), native('evaluate', pd).answer);
});

test('servingSearch with the disaggregated deployments equals `cutlab search --mode infer --disaggregated --json`', () => {
  const cfg = JSON.stringify({ model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 16 }, workload: { mode: 'infer', prompt_len: 2048, output_len: 512 } });
  const wasm = JSON.parse(core.servingSearch(cfg, 10, 1000, 20, 0, true));
  assert.equal(wasm.ok, true);
  const n = native('search', cfg, ['--max-ttft-ms', '1000', '--max-tpot-ms', '20', '--disaggregated']);
  assert.ok(wasm.result.disaggregated.best.length > 1);
  assert.deepStrictEqual(wasm.result.disaggregated, n.json.disaggregated);
  const { max_ttft_s, max_tpot_s, disaggregated, ...rest } = wasm.result;
  const { disaggregated: nd, ...nrest } = n.json;
  assert.deepStrictEqual(rest, nrest);
});

test('presets equal `cutlab presets --json`', () => {
  const wasm = JSON.parse(core.presets());
  const p = spawnSync(cli, ['presets', '--json'], { encoding: 'utf8' });
  assert.equal(p.status, 0);
  assert.equal(p.stdout.trim(), core.presets(), '`cutlab presets --json` prints exactly the façade\'s answer');
  assert.deepStrictEqual(wasm.result, JSON.parse(p.stdout).result);
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

// ---- the pipeline scene -------------------------------------------------------------------------
const TRAIN = Object.entries(CONFIGS).filter(([, c]) => typeof c !== 'string');
const opKey = (o) => [o.stage, o.kind, o.micro_batch, o.chunk].join(',');
// The scene's times are rounded to a power of ten near 1e-7 of its span (core/json_io.h scene_json_text).
const near = (a, b, tol) => Math.abs(a - b) <= tol;

for (const [name, cfg] of TRAIN) {
  test(`timeline scene holds every op of \`cutlab schedule --json\`: ${name}`, () => {
    const text = JSON.stringify(cfg);
    const out = JSON.parse(core.timeline(text, 960, 400));
    assert.equal(out.ok, true, JSON.stringify(out.errors));
    const sc = out.result, R = sc.rects;
    for (const k of ['kind', 'stage', 'micro_batch', 'chunk', 'backward_micro_batch', 'start_s', 'end_s']) assert.equal(R[k].length, R.count, k);
    // a timeline's rects follow one geometry, sent instead of their pixels (core/json_io.h)
    assert.ok(R.geometry && !R.x, 'the geometry, not x/y/w/h per rect');
    const sched = native('schedule', text).json;
    const ops = [], idle = [];
    for (let i = 0; i < R.count; i++) {
      const o = { stage: R.stage[i], kind: R.kind[i], micro_batch: R.micro_batch[i], chunk: R.chunk[i], start_s: R.start_s[i], end_s: R.end_s[i] };
      if (['F', 'B', 'W', 'FB'].includes(o.kind)) ops.push(o);
      else if (o.kind === 'idle') idle.push(o);
      else assert.ok(['dp', 'optimizer'].includes(o.kind), o.kind);
    }
    const tol = Math.max(...R.end_s) * 1e-6;
    const want = new Map(sched.ops.map((o) => [opKey(o), o]));
    assert.deepStrictEqual(ops.map(opKey).sort(), [...want.keys()].sort());
    for (const o of ops) {
      const w = want.get(opKey(o));
      assert.ok(near(o.start_s, w.start_s, tol) && near(o.end_s, w.end_s, tol), opKey(o) + ': ' + [o.start_s, o.end_s, w.start_s, w.end_s].join(' '));
    }
    // the pipeline's idle gaps are all there (the scene adds idle before the tails)
    for (const g of sched.idle) assert.ok(idle.some((i) => i.stage === g.stage && near(i.start_s, g.start_s, tol) && near(i.end_s, g.end_s, tol)), JSON.stringify(g));
    const ev = JSON.parse(core.evaluate(text)).result;
    assert.equal(sc.step_s, ev.time.step_s);
    assert.deepStrictEqual(sc.schedule, ev.schedule);
    assert.equal(sc.width, 960);
    assert.ok(sc.height <= 400 + 1e-9, 'rows fit the height asked for');
    // pixels and seconds on one scale: the last rect ends at the right edge, the rows fill the height
    const g = R.geometry, span = Math.max(...R.end_s);
    assert.ok(near(g.x0 + span * g.px_per_s, 960, 0.01), String(g.x0 + span * g.px_per_s));
    assert.ok(g.row_height > 0 && g.row_pitch >= g.row_height && Math.max(...R.stage) * g.row_pitch + g.row_height <= sc.height);
  });
}

test('timeline in serving mode: three steps of each micro-batch walk the stages', () => {
  const cfg = { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 4 }, plan: { pp: 4 }, workload: { mode: 'infer', batch: 8 } };
  for (const [batching, mbs] of [['inflight', 4], ['static', 1]]) {
    cfg.workload.batching = batching;
    const text = JSON.stringify(cfg);
    const sc = JSON.parse(core.timeline(text, 900, 0)).result;
    const inf = JSON.parse(core.evaluate(text)).result.inference;
    assert.equal(inf.micro_batches, mbs);
    const R = sc.rects;
    const dec = [];
    for (let i = 0; i < R.count; i++) {
      assert.ok(R.kind[i] === 'decode' || R.kind[i] === 'idle');
      if (R.kind[i] === 'decode') dec.push([R.stage[i], R.micro_batch[i], R.chunk[i], R.end_s[i] - R.start_s[i]]);
    }
    assert.equal(sc.tokens, 3);
    assert.equal(dec.length, 12 * mbs);  // 4 stages × 3 steps × micro-batches
    const tol = 2e-6 * Math.max(...R.end_s);  // two times, each rounded to ~1e-7 of the span
    for (const [st, mb, step, dur] of dec) {
      assert.ok(mb >= 0 && mb < mbs && step >= 0 && step < 3);
      assert.ok(near(dur, inf.decode_stage_s[st], tol), dur + ' ' + inf.decode_stage_s[st]);
    }
  }
});

// ---- gpus(), errors with their config, Hugging Face models ---------------------------------------
test('gpus(first, count) equals gpu(rank) for each rank, and refuses more than 4,096', () => {
  const text = JSON.stringify(CONFIGS['MoE Mixtral with folding (etp), ZB-H1']);
  const batch = JSON.parse(core.gpus(text, 20, 40));
  assert.equal(batch.ok, true);
  assert.equal(batch.result.length, 40);
  batch.result.forEach((g, i) => assert.deepStrictEqual(g, JSON.parse(core.gpu(text, 20 + i)).result));
  const tail = JSON.parse(core.gpus(text, 120, 100)).result;
  assert.equal(tail.length, 8, 'clipped at the last GPU');
  assert.equal(JSON.parse(core.gpus(text, 0, 4097)).errors[0].path, '/count');
  assert.equal(JSON.parse(core.gpus(text, 128, 1)).errors[0].path, '/first');
});

test('an error result carries the config as read when the input parsed but broke a rule', () => {
  const cfg = { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 16 }, plan: { tp: 8, pp: 2, recompute: 'full' }, workload: { seq_len: 8192, global_batch: 0 } };
  const out = JSON.parse(core.evaluate(JSON.stringify(cfg)));
  assert.equal(out.ok, false);
  assert.equal(out.errors[0].path, '/workload/global_batch');
  assert.equal(out.config.plan.tp, 8);
  assert.equal(out.config.plan.recompute, 'full');
  assert.equal(out.config.workload.global_batch, 0);
  assert.equal(out.config.plan.flash_attention, true, 'defaults filled in');
  // not JSON: nothing to carry
  assert.equal(JSON.parse(core.evaluate('{"model": ')).config, undefined);
});

test('a Hugging Face config.json (Llama 3 8B) gives the preset\'s parameters, and its errors have paths', () => {
  const hf = { hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 32,
    num_key_value_heads: 8, vocab_size: 128256, tie_word_embeddings: false };
  const rest = { cluster: { preset: 'dgx-h100', gpus: 8 }, plan: { tp: 8 }, workload: { seq_len: 8192, global_batch: 8 } };
  const a = JSON.parse(core.evaluate(JSON.stringify({ model: { hf_config: hf }, ...rest }))).result;
  const b = JSON.parse(core.evaluate(JSON.stringify({ model: 'llama3-8b', ...rest }))).result;
  assert.deepStrictEqual(a.params, b.params);
  const bad = JSON.parse(core.evaluate(JSON.stringify({ model: { hf_config: { hidden_size: 4096 } }, ...rest })));
  assert.equal(bad.ok, false);
  assert.ok(bad.errors.some((e) => e.path === '/model/hf_config/num_hidden_layers'));
});

// ---- the page's SVG export writes the scene ------------------------------------------------------
test('web/export.js: the SVG of the pipeline holds every rect of the scene, in the page\'s colours', () => {
  // the page's scripts in a sandbox; text is measured at 6 px per character (no canvas in node)
  const ctx2d = { font: '', measureText: (s) => ({ width: 6 * String(s).length }) };
  const document = { createElement: () => ({ getContext: () => ctx2d }) };
  const sandbox = { window: {}, document, URLSearchParams, performance, console };
  vm.createContext(sandbox);
  for (const f of ['format.js', 'strict-json.js', 'state.js', 'palette.js', 'gfx.js', 'tables.js', 'derive.js', 'view-pipeline.js', 'export.js'])
    vm.runInContext(fs.readFileSync(path.join(root, 'web', f), 'utf8'), sandbox, { filename: f });
  const CL = sandbox.window.CL;
  CL.presets = JSON.parse(core.presets()).result;  // the core's choice tables, as app.js sets them
  const text = JSON.stringify(CONFIGS['MoE DeepSeek-V3, PP16 × EP64, DualPipe, fp8']);
  const d = { text, r: JSON.parse(core.evaluate(text)).result, timeline: (w, h) => CL.derive.withRectPixels(JSON.parse(core.timeline(text, w, h))).result };
  const fig = CL.views.pipeline.figure(d, 1000, {});
  const svg = CL.exporter.svg(fig);
  const R = fig.sc.rects;
  const group = svg.slice(svg.indexOf('<g class="rects"'), svg.indexOf('</g>', svg.indexOf('<g class="rects"')));
  const rects = [...group.matchAll(/<rect x="([^"]+)" y="([^"]+)" width="([^"]+)" height="([^"]+)" fill="([^"]+)"[^>]*data-kind="([^"]+)" data-stage="(\d+)"/g)];
  assert.equal(rects.length, R.count);
  rects.forEach((m, i) => {
    assert.equal(m[6], R.kind[i]);
    assert.equal(Number(m[7]), R.stage[i]);
    assert.ok(Math.abs(Number(m[1]) - R.x[i]) <= 0.005 && Math.abs(Number(m[2]) - R.y[i]) <= 0.005);
    assert.equal(m[5], R.kind[i] === 'idle' ? 'url(#idle)' : CL.views.pipeline.fillOf(R.kind[i], R.chunk[i], fig.dual));
  });
  // DualPipe: its two directions (chunks 0 and 1) in two colours, both drawn
  assert.ok(fig.dual);
  const fills = new Set(rects.filter((m) => m[6] === 'F').map((m) => m[5]));
  assert.deepEqual([...fills].sort(), [CL.palette.op.F, CL.palette.op2.F].sort());
  assert.equal(CL.views.pipeline.fillOf('F'), CL.palette.op.F);
  assert.equal(CL.views.pipeline.fillOf('F', 1, false), CL.palette.op.F);  // a later chunk of an interleaved schedule: same hue
  assert.equal(CL.views.pipeline.fillOf('dp'), CL.palette.axis.dp);
  // stage labels numbered from 1, ticks as the core wrote them
  assert.ok(svg.includes('>stage 1</text>') && svg.includes('>stage 16</text>') && !svg.includes('>stage 0</text>'));
  for (const l of fig.sc.labels.filter((x) => x.kind === 'tick')) assert.ok(svg.includes('>' + l.text.replace(' ', '\u202f') + '</text>'), l.text);
});
