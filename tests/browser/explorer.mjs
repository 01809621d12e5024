// The explorer in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core).
// For the page opened from file:// and from `python3 -m http.server` on 127.0.0.1:
//   - it loads the core and reports ready, with no console errors;
//   - TP = 8 and PP = 2 set through the controls give tables holding exactly the CLI's numbers;
//   - an invalid value is marked on its field with the core's message (the CLI's, same path);
//   - the URL holds the state (reload keeps it, back goes to the previous plan);
// then measures the time from a control change to the end of the redraw for Llama 3 405B on
// 16,384 GPUs (must stay under 16 ms), and saves screenshots (1280×800 and the 700-px embed).
// Env: WEB_DIR (build-wasm/web), NATIVE_CLI (build-native/native/cutlab), CHROMIUM (/usr/bin/chromium),
// SCREENSHOT_DIR (tests/browser/screenshots). Exit code 0 when every check passes.
import { createRequire } from 'node:module';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const webDir = path.resolve(process.env.WEB_DIR ?? path.join(root, 'build-wasm/web'));
const cli = path.resolve(process.env.NATIVE_CLI ?? path.join(root, 'build-native/native/cutlab'));
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const shots = path.resolve(process.env.SCREENSHOT_DIR ?? path.join(here, 'screenshots'));
fs.mkdirSync(shots, { recursive: true });
const require = createRequire(path.join(root, 'package.json'));
const { chromium } = require('playwright-core');

const failures = [];
const notes = [];
function check(cond, what) {
  if (cond) console.log('  ok   ' + what);
  else { console.log('  FAIL ' + what); failures.push(what); }
}
const log = (s) => { console.log(s); notes.push(s); };

// ---- the native CLI's answer for a config --------------------------------------------------------
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cutlab-browser-'));
function cliEvaluate(config) {
  const file = path.join(tmp, 'c.json');
  fs.writeFileSync(file, JSON.stringify(config));
  const p = spawnSync(cli, ['evaluate', file, '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return { status: p.status, json: JSON.parse(p.stdout) };
}

// ---- static server ---------------------------------------------------------------------------
function startServer() {
  return new Promise((resolve, reject) => {
    const srv = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', webDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    const onData = (d) => {
      buf += d;
      const m = buf.match(/port (\d+)/);
      if (m) resolve({ proc: srv, port: Number(m[1]) });
    };
    srv.stdout.on('data', onData);
    srv.stderr.on('data', () => {});
    srv.on('exit', (code) => reject(new Error('http.server exited ' + code)));
    setTimeout(() => reject(new Error('http.server did not start')), 10000);
  });
}

// ---- page helpers -------------------------------------------------------------------------------
async function open(browser, url, viewport) {
  const page = await browser.newPage({ viewport: viewport ?? { width: 1280, height: 800 } });
  const errors = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (/favicon\.ico/.test(m.location().url || '') || /Failed to load resource.*404/.test(m.text())) return;  // the automatic favicon request
    errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.status === 'ready' || document.body.dataset.status === 'error', null, { timeout: 20000 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return { page, errors };
}
const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
async function select(page, path, value) {
  await page.selectOption('[data-path="' + path + '"] select', String(value));
  await frames(page);
}
async function fill(page, path, value) {
  const input = page.locator('[data-path="' + path + '"] input');
  await input.fill(String(value));
  await input.press('Enter');
  await input.blur();
  await frames(page);
}
const rawCells = (page, sel) => page.$$eval(sel, (els) => els.map((e) => Number(e.dataset.v)));

// The tables against the CLI's JSON for the same config.
async function compareTables(page, ref, label) {
  const peak = ref.memory.per_stage[ref.memory.peak_stage];
  const memRows = await page.$$eval('table.mem-peak tr[data-kind] td.num', (els) => els.map((e) => Number(e.dataset.v)));
  check(JSON.stringify(memRows.slice(0, 5)) === JSON.stringify([peak.weights_bytes, peak.grads_bytes, peak.optimizer_bytes, peak.activations_bytes, peak.total_bytes]),
    label + ': memory per GPU (peak stage) = CLI');
  const stages = await page.$$eval('table.mem-stages tbody tr', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td[data-v]')).map((c) => Number(c.dataset.v))));
  const refStages = ref.memory.per_stage.map((s) => [s.weights_bytes, s.grads_bytes, s.optimizer_bytes, s.activations_bytes, s.in_flight_micro_batches, s.total_bytes, s.capacity_bytes]);
  check(JSON.stringify(stages) === JSON.stringify(refStages), label + ': memory per stage = CLI (' + refStages.length + ' stages)');
  const comm = await page.$$eval('table.comm tbody tr[data-i]', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td[data-v]')).map((c) => Number(c.dataset.v))));
  const refComm = ref.comm.map((c) => [c.message_bytes, c.calls, c.bytes, c.time_s, c.exposed_s]);
  check(JSON.stringify(comm) === JSON.stringify(refComm), label + ': communication per collective = CLI (' + refComm.length + ' rows)');
  const parts = await page.$$eval('table.time tr[data-part]', (rows) => Object.fromEntries(rows.map((r) => [r.dataset.part, Number(r.querySelector('td[data-v]').dataset.v)])));
  const refParts = Object.fromEntries(Object.entries(ref.time.breakdown).filter(([, v]) => v > 0));
  const sortKeys = (o) => JSON.stringify(Object.keys(o).sort().map((k) => [k, o[k]]));
  check(sortKeys(parts) === sortKeys(refParts), label + ': time breakdown = CLI (' + Object.keys(refParts).length + ' parts)');
  const totals = await rawCells(page, 'table.time tr:not([data-part]) td[data-v]');
  check(JSON.stringify(totals) === JSON.stringify([ref.time.step_s, ref.throughput.tokens_per_s, ref.mfu, ref.hfu]), label + ': step time, tokens/s, MFU, HFU = CLI');
  const head = await page.$eval('#headline', (e) => e.textContent);
  check(head.includes(ref.peak.name), label + ': headline names the peak (' + ref.peak.name + ')');
  const fmt = await page.evaluate((v) => [window.CL.fmt.seconds(v.step), window.CL.fmt.pct(v.mfu)], { step: ref.time.step_s, mfu: ref.mfu });
  check(head.includes(fmt[0]) && head.includes(fmt[1]), label + ': headline shows step ' + fmt[0] + ' and MFU ' + fmt[1]);
  const eq = (await page.$eval('#equation', (e) => e.textContent)).replace(/\s+/g, ' ');
  check(eq.includes('GPUs' + ref.gpus.toLocaleString('en-US')) && eq.includes('TP' + ref.config.plan.tp) && eq.includes('PP' + ref.config.plan.pp) && eq.includes('DP' + ref.config.plan.dp),
    label + ': equation ' + eq.trim());
}

// ---- one full pass over a base URL --------------------------------------------------------------
const START = { model: 'llama3-70b', cluster: 'dgx-h100', gpus: '16', tp: '1', pp: '1', sp: 'true', recompute: 'full', seq_len: '8192', global_batch: '16', grad_dtype: 'bf16' };
const EXPECT = { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 16 }, plan: { tp: 8, pp: 2, sp: true, recompute: 'full' },
  workload: { seq_len: 8192, global_batch: 16, grad_dtype: 'bf16' } };

async function pass(browser, base, label) {
  console.log('\n' + label + ': ' + base);
  // 1. defaults load cleanly
  {
    const { page, errors } = await open(browser, base);
    check((await page.evaluate(() => document.body.dataset.status)) === 'ready', label + ': page ready');
    check(errors.length === 0, label + ': no console errors on load' + (errors.length ? ' — ' + errors.join(' | ') : ''));
    await page.close();
  }
  // 2. TP = 8, PP = 2 through the controls (sp would be invalid at tp = 1: start with tp 1 then fix)
  const q = new URLSearchParams(START);
  q.set('sp', 'false');
  const { page, errors } = await open(browser, base + '?' + q.toString());
  await select(page, '/plan/tp', 8);
  await page.check('[data-path="/plan/sp"] input');
  await frames(page);
  await select(page, '/plan/pp', 2);
  const url = page.url();
  check(/[?&#]tp=8/.test(url) && /pp=2/.test(url), label + ': the URL holds the plan (' + url.slice(url.indexOf('?')) + ')');
  const ref = cliEvaluate(EXPECT);
  check(ref.status === 0, label + ': CLI evaluates the same plan');
  const pageCfg = await page.evaluate(() => window.__cutlab.derived.cfg);
  check(JSON.stringify(pageCfg.plan) === JSON.stringify({ tp: 8, pp: 2, sp: true, recompute: 'full' }), label + ': the page sends plan ' + JSON.stringify(pageCfg.plan));
  await compareTables(page, ref.json, label);
  // 3. every view draws, and a GPU can be opened
  for (const view of ['cuts', 'placement', 'pipeline']) {
    await page.click('#tabs [data-view="' + view + '"]');
    await frames(page);
    const h = await page.$eval('#canvas', (c) => c.height);
    check(h > 150, label + ': view ' + view + ' drawn (' + h + ' px)');
    if (label === 'file') await page.screenshot({ path: path.join(shots, 'tp8-pp2-' + view + '.png') });
  }
  await page.click('#tabs [data-view="placement"]');
  await frames(page);
  const box = await page.$eval('#canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y }; });
  const hit = await page.evaluate(() => null);
  void hit;
  // GPU 9 in the full view: find its hit rectangle through the same code the page uses
  const target = await page.evaluate(() => {
    const d = window.__cutlab.derived.good;
    const sc = window.CL.views.placement.scene(d, Math.floor(document.getElementById('canvas-wrap').clientWidth));
    for (const n of sc.nodes || []) for (const g of n.gpus) if (g.rank === 9) return { x: g.x + g.w / 2, y: g.y + g.h / 2 };
    return null;
  });
  if (target) {
    await page.mouse.move(box.x + target.x, box.y + target.y);
    await frames(page);
    const tip = await page.$eval('#tooltip', (t) => (t.hidden ? '' : t.textContent));
    check(/GPU 9/.test(tip) && /layers 41–80/.test(tip), label + ': hovering GPU 9 shows what it holds');
    await page.mouse.click(box.x + target.x, box.y + target.y);
    await frames(page);
    const panel = await page.$eval('#gpu-panel', (p) => (p.hidden ? '' : p.textContent));
    check(/GPU 9/.test(panel) && /heads/.test(panel) && /total/.test(panel), label + ': clicking GPU 9 opens its memory and traffic');
    if (label === 'file') await page.screenshot({ path: path.join(shots, 'tp8-pp2-gpu9.png') });
  } else check(false, label + ': GPU 9 found in the placement view');
  // 4. an invalid field is marked where it is, with the core's message
  await fill(page, '/workload/global_batch', 0);
  const bad = cliEvaluate({ ...EXPECT, workload: { ...EXPECT.workload, global_batch: 0 } });
  const mark = await page.$eval('[data-path="/workload/global_batch"]', (e) => ({ invalid: e.classList.contains('invalid'), msg: e.querySelector('.err').textContent }));
  const cliMsg = bad.json.errors && bad.json.errors.find((e) => e.path === '/workload/global_batch');
  check(bad.status === 2 && mark.invalid && cliMsg && mark.msg.includes(cliMsg.message), label + ': global batch 0 marked with the core\'s message: ' + mark.msg);
  check(!(await page.$eval('#stale', (e) => e.hidden)), label + ': the views say they show the last valid plan');
  if (label === 'file') await page.screenshot({ path: path.join(shots, 'invalid-field.png') });
  // 5. back restores the valid plan; reload keeps the state
  await page.goBack();
  await frames(page);
  await page.waitForFunction(() => window.__cutlab.derived && window.__cutlab.derived.ok, null, { timeout: 5000 }).catch(() => {});
  const afterBack = await page.evaluate(() => ({ ok: window.__cutlab.derived.ok, gb: window.__cutlab.state.workload.global_batch }));
  check(afterBack.ok && afterBack.gb === 16, label + ': back goes to the previous (valid) plan');
  await page.goBack();
  await frames(page);
  await page.waitForTimeout(50);
  const back2 = await page.evaluate(() => ({ gpu: window.__cutlab.state.gpu, view: window.__cutlab.state.view }));
  check(back2.gpu === null && back2.view === 'placement', label + ': back again undoes the GPU click ' + JSON.stringify(back2));
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 20000 });
  await frames(page);
  const reloaded = await page.evaluate(() => ({ tp: window.__cutlab.state.plan.tp, pp: window.__cutlab.state.plan.pp, view: window.__cutlab.state.view }));
  check(reloaded.tp === 8 && reloaded.pp === 2 && reloaded.view === 'placement', label + ': reload keeps the state ' + JSON.stringify(reloaded));
  await compareTables(page, ref.json, label + ' after reload');
  check(errors.length === 0, label + ': no console errors while editing' + (errors.length ? ' — ' + errors.join(' | ') : ''));
  await page.close();
}

// ---- serving: the mode control, and the numbers against `cutlab evaluate --mode infer` -----------
async function serving(browser, base) {
  console.log('\nserving (mode infer)');
  const { page, errors } = await open(browser, base + '?ex=serve-tp8pp2');
  await select(page, '/workload/mode', 'train');
  await select(page, '/workload/mode', 'infer');
  await fill(page, '/workload/batch', 16);
  const cfg = await page.evaluate(() => window.__cutlab.derived.cfg);
  const ref = cliEvaluate(cfg);
  check(ref.status === 0 && ref.json.mode === 'infer', 'serve: CLI evaluates the page\'s config in infer mode');
  const inf = ref.json.inference;
  const cells = await page.$$eval('table.time tr td[data-v]', (els) => els.map((e) => Number(e.dataset.v)));
  check(cells.includes(inf.ttft_s) && cells.includes(inf.tpot_s) && cells.includes(inf.tokens_per_s_total) && cells.includes(inf.max_batch_that_fits),
    'serve: TTFT, TPOT, tokens/s and max batch = CLI');
  const stages = await page.$$eval('table.mem-stages tbody tr', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td[data-v]')).map((c) => Number(c.dataset.v))));
  const refStages = ref.json.memory.per_stage.map((s) => [s.weights_bytes, s.kv_cache_bytes, s.activations_bytes, s.total_bytes, s.capacity_bytes]);
  check(JSON.stringify(stages) === JSON.stringify(refStages), 'serve: memory per stage (weights, KV cache, activations) = CLI');
  const head = await page.$eval('#headline', (e) => e.textContent);
  check(/Time to first token/.test(head) && /Time per output token/.test(head), 'serve: headline shows TTFT and TPOT');
  await page.click('#tabs [data-view="pipeline"]');
  await frames(page);
  const cap = await page.$eval('#view-caption', (e) => e.textContent);
  check(/3 of 4|1 of 2/.test(cap), 'serve: the pipeline view says how many stages wait (' + cap.slice(0, 90) + '…)');
  check(errors.length === 0, 'serve: no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
  await page.close();
}

// ---- redraw time for Llama 3 405B on 16,384 GPUs -----------------------------------------------
async function redrawTiming(browser, base) {
  console.log('\nredraw time, Llama 3 405B on 16,384 GPUs');
  const result = {};
  for (const view of ['placement', 'cuts', 'pipeline']) {
    const { page, errors } = await open(browser, base + '?ex=llama3-405b&view=' + view);
    const samples = [];
    // alternate micro-batch 1 ↔ 2 and recompute selective ↔ full: each change is a new plan
    for (let i = 0; i < 12; i++) {
      const change = i % 2 === 0 ? ['/plan/recompute', i % 4 === 0 ? 'full' : 'selective'] : ['/plan/micro_batch', i % 4 === 1 ? '2' : '1'];
      const perf = await page.evaluate(([p, v]) => new Promise((resolve) => {
        const sel = document.querySelector('[data-path="' + p + '"] select');
        sel.value = v;
        sel.dispatchEvent(new Event('change'));
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(Object.assign({}, window.__cutlab.perf))));
      }), change);
      samples.push(perf);
    }
    const work = samples.slice(2).map((s) => s.workMs).sort((a, b) => a - b);
    const wall = samples.slice(2).map((s) => s.changeToDrawMs).sort((a, b) => a - b);
    const med = (a) => a[Math.floor(a.length / 2)];
    result[view] = { medianWork: med(work), maxWork: work[work.length - 1], medianWall: med(wall), maxWall: wall[wall.length - 1] };
    log('  ' + view + ': change → redraw done: median ' + med(wall).toFixed(1) + ' ms, max ' + wall[wall.length - 1].toFixed(1) +
      ' ms (of which core + draw work: median ' + med(work).toFixed(1) + ' ms, max ' + work[work.length - 1].toFixed(1) + ' ms)');
    if (view === 'placement') await page.screenshot({ path: path.join(shots, 'llama3-405b-placement.png') });
    if (view === 'pipeline') await page.screenshot({ path: path.join(shots, 'llama3-405b-pipeline.png') });
    check(errors.length === 0, '405B ' + view + ': no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
    await page.close();
  }
  // The frame's work (core calls, canvas, tables) must fit in one 60 Hz frame; the wall time also
  // includes waiting for that frame (requestAnimationFrame), up to 16.7 ms by itself.
  check(result.placement.medianWork < 16, 'Llama 3 405B placement view: change → redraw work < 16 ms (median ' + result.placement.medianWork.toFixed(1) + ' ms)');
  check(result.cuts.medianWork < 16, 'Llama 3 405B cuts view: change → redraw work < 16 ms (median ' + result.cuts.medianWork.toFixed(1) + ' ms)');
  return result;
}

// ---- screenshots ------------------------------------------------------------------------------
async function screenshots(browser, base) {
  console.log('\nscreenshots → ' + shots);
  const list = [
    ['default-cuts.png', ''],
    ['deepseek-v3-cuts.png', '?ex=deepseek-v3'],
    ['deepseek-v3-placement.png', '?ex=deepseek-v3&view=placement'],
    ['deepseek-v3-pipeline.png', '?ex=deepseek-v3&view=pipeline'],
    ['mixtral-folding-cuts.png', '?ex=mixtral-folding'],
    ['ep8-placement.png', '?ex=ep8&view=placement'],
    ['serve-pp4-pipeline.png', '?ex=serve-pp4'],
    ['serve-tp4-cuts.png', '?ex=serve-tp4'],
    ['serve-dp2-tp8-placement.png', '?ex=dp2-tp8'],
    ['zero3-placement.png', '?ex=zero3'],
  ];
  for (const [file, query] of list) {
    const { page, errors } = await open(browser, base + query);
    await page.screenshot({ path: path.join(shots, file) });
    check(errors.length === 0, file + ': no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
    await page.close();
  }
  for (const [file, query] of [['embed-timeline-700.png', '?ex=tp8pp2&embed=timeline'], ['embed-serve-pp4-700.png', '?ex=serve-pp4&embed=pipeline'], ['embed-cuts-700.png', '?ex=tp-ep&embed=cuts'],
    ['embed-placement-700.png', '?ex=tp8pp2&embed=placement']]) {
    const { page, errors } = await open(browser, base + query, { width: 700, height: 800 });
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= 700, file + ': fits in 700 px (' + wide + ')');
    await page.screenshot({ path: path.join(shots, file), fullPage: true });
    check(errors.length === 0, file + ': no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
    await page.close();
  }
}

// ---- main -------------------------------------------------------------------------------------
const t0 = Date.now();
let server = null, browser = null;
try {
  if (!fs.existsSync(path.join(webDir, 'core.js'))) throw new Error(webDir + '/core.js is missing: build the wasm preset first');
  server = await startServer();
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const fileBase = pathToFileURL(path.join(webDir, 'index.html')).href;
  const httpBase = 'http://127.0.0.1:' + server.port + '/index.html';
  await pass(browser, fileBase, 'file');
  await pass(browser, httpBase, 'http');
  await serving(browser, fileBase);
  await redrawTiming(browser, httpBase);
  await screenshots(browser, fileBase);
} catch (e) {
  failures.push('exception: ' + (e.stack || e));
  console.log(e.stack || e);
} finally {
  if (browser) await browser.close();
  if (server) server.proc.kill();
}
console.log('\n' + (failures.length ? failures.length + ' check(s) failed:\n  ' + failures.join('\n  ') : 'all checks passed') + ' (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)');
process.exit(failures.length ? 1 : 0);
