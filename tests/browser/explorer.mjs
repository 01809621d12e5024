// The explorer in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core).
// For the page opened from file:// and from `python3 -m http.server` on 127.0.0.1:
//   - it loads the core and reports ready, with no console errors;
//   - TP = 8 and PP = 2 set through the controls give tables holding exactly the CLI's numbers;
//   - an invalid value is marked on its field with the core's message (the CLI's, same path);
//   - the URL holds the state (reload keeps it, back goes to the previous plan);
//   - the placement view asks the core once (one gpus() call) for what its GPUs hold;
//   - the pipeline view draws the core's scene (timeline()): every op of `cutlab schedule --json`,
//     hover by rect index, the SVG download holds the same rects, the PNG download is the canvas;
//   - in serve mode the placement view puts a load balancer in front of the replicas, each labelled
//     with the CLI's inference.tokens_per_s_per_replica (one box "× N replicas" on 16,384 GPUs);
//   - a pasted Hugging Face config.json sets the model (the Llama 3 8B config gives the preset's
//     parameters), survives a reload, and bad JSON or a bad config is reported in the box;
//   - an invalid plan keeps its controls filled from the config the core read;
//   - "Find the best plans" (Llama 3 70B on 64 H100) calls the core's search() once, on the click, and
//     lists `cutlab search --json`'s plans; a row click applies its plan (controls, URL, headline and
//     tables = `cutlab evaluate` of that plan); a changed config marks the table outdated; serve mode
//     and a cluster where nothing fits say so;
// then measures the time from a control change to the end of the redraw for Llama 3 405B on
// 16,384 GPUs (the work of the frame must stay under 16 ms in every view), and saves screenshots
// (1280×800 and the 700-px embeds, and docs/explorer.png for the README).
// Env: WEB_DIR (build-wasm/web), NATIVE_CLI (build-native/native/cutlab), CHROMIUM (/usr/bin/chromium),
// SCREENSHOT_DIR (tests/browser/screenshots), DOCS_SCREENSHOT (docs/explorer.png). Exit code 0 when every check passes.
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
// the README's screenshot of the default page (DOCS_SCREENSHOT= empty: not written)
const docsShot = process.env.DOCS_SCREENSHOT === '' ? null : path.resolve(process.env.DOCS_SCREENSHOT ?? path.join(root, 'docs/explorer.png'));
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
  const shares = await page.$$eval('table.time tr[data-part] td[data-share]', (els) => els.map((e) => [e.closest('tr').dataset.part, Number(e.dataset.share)]));
  check(shares.length === Object.keys(refParts).length && shares.every(([k, v]) => ref.time.shares[k.replace(/_s$/, '')] === v),
    label + ': shares of the step = the core\'s time.shares');
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
    const before = await page.evaluate(() => window.__cutlab.derived.good.gpuStats.calls);
    await page.click('#tabs [data-view="' + view + '"]');
    await frames(page);
    const h = await page.$eval('#canvas', (c) => c.height);
    check(h > 150, label + ': view ' + view + ' drawn (' + h + ' px)');
    const after = await page.evaluate(() => window.__cutlab.derived.good.gpuStats.calls);
    check(after - before <= 1, label + ': view ' + view + ' asked the core at most once for GPUs (' + (after - before) + ' gpus() call)');
    if (label === 'file') await page.screenshot({ path: path.join(shots, 'tp8-pp2-' + view + '.png') });
  }
  await page.click('#tabs [data-view="placement"]');
  await frames(page);
  const box = await page.$eval('#canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y }; });
  const calls = await page.evaluate(() => Object.assign({}, window.__cutlab.derived.good.gpuStats));
  check(calls.gpus === 16 && calls.calls <= 2, label + ': every GPU fetched once: gpus() gave ' + calls.gpus + ' GPUs in ' + calls.calls + ' calls (cuts: TP ranks, placement: the rest)');
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

// ---- serving, placement view: a load balancer in front of the replicas, each with its tokens/s ----
const sceneOf = (page) => page.evaluate(() => {
  const d = window.__cutlab.derived.good;
  const sc = window.CL.views.placement.scene(d, Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth)));
  return { lod: sc.lod, b: sc.balancer ? JSON.parse(JSON.stringify(sc.balancer)) : null, inf: d.r.inference, caption: document.getElementById('view-caption').textContent };
});
async function servingBalancer(browser, base) {
  console.log('\nserving: the placement view\'s load balancer');
  const args = ['evaluate', '--model', 'llama3-70b', '--cluster', 'dgx-h100', '--tp', '8', '--dp', '2', '--mode', 'infer', '--batch', '8', '--json'];
  const p = spawnSync(cli, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  const ref = p.status === 0 ? JSON.parse(p.stdout) : null;
  check(ref && ref.inference.replicas === 2, 'balancer: `cutlab ' + args.join(' ') + '` gives 2 replicas');
  if (!ref) return;
  const inf = ref.inference;
  const { page, errors } = await open(browser, base + '?model=llama3-70b&cluster=dgx-h100&tp=8&dp=2&mode=infer&batch=8&view=placement');
  const s = await sceneOf(page);
  const fmt = await page.evaluate((v) => v.map((x) => window.CL.fmt.int(x)), [inf.tokens_per_s_per_replica, inf.tokens_per_s_total]);
  const b = s.b;
  check(b && b.perReplica === inf.tokens_per_s_per_replica && b.total === inf.tokens_per_s_total && b.R === 2 && b.batch === 8,
    'balancer: per-replica tokens/s = CLI inference.tokens_per_s_per_replica (' + inf.tokens_per_s_per_replica + '), total and replicas too');
  check(b && b.mode === 'aligned' && b.items.length === 2 && b.items.map((it) => it.replica).join() === '0,1' &&
    b.items.every((it) => it.sub.includes(fmt[0] + ' tok/s') && it.sub.includes('8 seq') && it.toY > it.y),
  'balancer: one arrow per replica, into its GPUs, labelled "' + (b && b.items[0] && b.items[0].label + ' · ' + b.items[0].sub) + '"');
  check(b && b.totalText.includes('2 replicas × ' + fmt[0] + ' tok/s = ' + fmt[1] + ' tok/s') && /no traffic between replicas/.test(b.totalText + b.detailText),
    'balancer: total "' + (b && b.totalText) + '"');
  check(/load balancer/.test(s.caption), 'balancer: the caption names the load balancer');
  // hovering replica 1 names its throughput
  const box = await page.$eval('#canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y }; });
  const it = b.items[1];
  await page.mouse.move(box.x + it.x + it.w / 2, box.y + it.y + it.h / 2);
  await frames(page);
  const tip = await page.$eval('#tooltip', (t) => (t.hidden ? '' : t.textContent));
  check(tip.includes('replica 1') && tip.includes(fmt[0] + ' tokens/s per replica'), 'balancer: hovering replica 1 shows its tokens/s (' + tip.slice(0, 60) + '…)');
  await page.screenshot({ path: path.join(shots, 'serve-dp2-balancer.png') });
  await page.close();
  // the 700-px embed
  {
    const { page: pe, errors: ee } = await open(browser, base + '?model=llama3-70b&cluster=dgx-h100&tp=8&dp=2&mode=infer&batch=8&embed=placement', { width: 700, height: 800 });
    const se = await sceneOf(pe);
    const wide = await pe.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= 700 && se.b && se.b.items.length === 2 && se.b.items.every((x) => x.x >= 0 && x.x + x.w <= 700), 'balancer: the 700-px embed keeps both replicas (' + wide + ' px)');
    await pe.screenshot({ path: path.join(shots, 'embed-serve-balancer-700.png'), fullPage: true });
    check(ee.length === 0, 'balancer embed: no console errors' + (ee.length ? ' — ' + ee.join(' | ') : ''));
    await pe.close();
  }
  // 16,384 GPUs: one box with the count, not 1,024 arrows; training: no balancer
  {
    const { page: pb, errors: eb } = await open(browser, base + '?model=llama3-405b&cluster=dgx-h100&gpus=16384&tp=8&pp=2&mode=infer&batch=8&view=placement');
    const sb = await sceneOf(pb);
    const n = await pb.evaluate((v) => window.CL.fmt.int(v), sb.inf.replicas);
    check(sb.lod === 'stages' && sb.b && sb.b.mode === 'stack' && sb.b.items.length <= 3 && sb.b.stack.count === '× ' + n + ' replicas' && sb.b.perReplica === sb.inf.tokens_per_s_per_replica,
      'balancer: 16,384 GPUs draw one replica box "' + (sb.b && sb.b.stack && sb.b.stack.count) + '"');
    await pb.screenshot({ path: path.join(shots, 'serve-405b-16k-balancer.png') });
    check(eb.length === 0, 'balancer 16k: no console errors' + (eb.length ? ' — ' + eb.join(' | ') : ''));
    await pb.close();
    const { page: pt, errors: et } = await open(browser, base + '?view=placement');
    check(!(await sceneOf(pt)).b, 'balancer: none in training');
    check(et.length === 0, 'balancer train: no console errors' + (et.length ? ' — ' + et.join(' | ') : ''));
    await pt.close();
  }
  check(errors.length === 0, 'balancer: no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
}

// ---- the pipeline view: the core's scene, hover by rect index, SVG and PNG downloads -------------
function cliSchedule(config) {
  const file = path.join(tmp, 's.json');
  fs.writeFileSync(file, JSON.stringify(config));
  const p = spawnSync(cli, ['schedule', file, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: p.status, json: p.status === 0 ? JSON.parse(p.stdout) : null };
}

async function pipelineScene(browser, base) {
  console.log('\npipeline view from the core\'s scene');
  for (const [ex, label] of [['tp8pp2', 'TP8 PP2'], ['llama3-405b', 'Llama 3 405B'], ['deepseek-v3', 'DeepSeek-V3 DualPipe']]) {
    const { page, errors } = await open(browser, base + '?ex=' + ex + '&view=pipeline');
    // the figure drawn is the scene timeline() returns for the plot's width and height
    const info = await page.evaluate(() => {
      const d = window.__cutlab.derived.good;
      const w = Math.floor(document.getElementById('canvas-wrap').clientWidth);
      const fig = window.CL.views.pipeline.figure(d, Math.max(320, w), { compact: false });
      const sc = fig.sc;
      const again = window.__cutlab.api().timeline(d.text, sc.width, 440).result;
      const ops = [];
      for (let i = 0; i < sc.rects.count; i++) if (['F', 'B', 'W', 'FB'].includes(sc.rects.kind[i]))
        ops.push([sc.rects.stage[i], sc.rects.kind[i], sc.rects.micro_batch[i], sc.rects.chunk[i], sc.rects.start_s[i], sc.rects.end_s[i]]);
      const stageLabels = fig.stageLabels.map((l) => l.text);
      return { cfg: d.cfg, count: sc.rects.count, same: JSON.stringify(again) === JSON.stringify(sc), ops, stageLabels, right: fig.right.map((r) => r.text),
        peak: sc.schedule.peak_alive_micro_batches, bubble: sc.schedule.bubble_fraction, kinds: Array.from(new Set(sc.rects.kind)).sort(),
        legend: fig.legend.map((l) => l.label), caption: document.getElementById('view-caption').textContent,
        canvasW: document.getElementById('canvas').width, canvasH: document.getElementById('canvas').height };
    });
    check(info.same, label + ': the figure is the core\'s timeline() scene (' + info.count + ' rects: ' + info.kinds.join(' ') + ')');
    const sched = cliSchedule(info.cfg);
    const cliOps = sched.json.ops.map((o) => [o.stage, o.kind, o.micro_batch, o.chunk, o.start_s, o.end_s]);
    const key = (a) => a.map((o) => o.join(',')).sort().join(';');
    check(sched.status === 0 && key(cliOps) === key(info.ops), label + ': every op of `cutlab schedule --json` is a bar (' + cliOps.length + ' ops)');
    check(info.right.length > 0 && info.right.every((t, i) => t.startsWith(String(info.peak[Number(info.stageLabels[i].slice(6)) - 1]))),
      label + ': in-flight labels are schedule.peak_alive_micro_batches (' + info.right.slice(0, 3).join(', ') + ', …)');
    const head = await page.evaluate(() => window.CL.views.pipeline.figure(window.__cutlab.derived.good, Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth)), {}).text[1].text);
    const pct = await page.evaluate((b) => window.CL.fmt.pct(b), info.bubble);
    check(head.includes('bubble ' + pct), label + ': the bubble fraction is shown (' + pct + ')');
    check(info.legend.some((l) => /idle/.test(l)) && info.legend.some((l) => /forward/.test(l)), label + ': legend ' + info.legend.join(' · '));
    if (ex === 'tp8pp2') {
      // hover the first B bar of stage 2: the tooltip names stage, kind, micro-batch, start → end, duration
      const target = await page.evaluate(() => {
        const d = window.__cutlab.derived.good;
        const fig = window.CL.views.pipeline.figure(d, Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth)), {});
        const R = fig.sc.rects;
        for (let i = 0; i < R.count; i++) if (R.kind[i] === 'B' && R.stage[i] === 1)
          return { x: fig.ox + R.x[i] + R.w[i] / 2, y: fig.oy + R.y[i] + R.h[i] / 2, mb: R.micro_batch[i], s: window.CL.fmt.seconds(R.start_s[i]), e: window.CL.fmt.seconds(R.end_s[i]),
            dur: window.CL.fmt.seconds(R.end_s[i] - R.start_s[i]) };
        return null;
      });
      const box = await page.$eval('#canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y }; });
      await page.mouse.move(box.x + target.x, box.y + target.y);
      await frames(page);
      const tip = await page.$eval('#tooltip', (t) => (t.hidden ? '' : t.textContent));
      check(tip.includes('stage 2 · B') && tip.includes('micro-batch ' + (target.mb + 1)) && tip.includes(target.s + ' → ' + target.e) && tip.includes(target.dur),
        label + ': hovering a bar names its stage, kind, micro-batch, start → end and duration (' + tip.slice(0, 80) + '…)');
      await page.screenshot({ path: path.join(shots, 'tp8-pp2-pipeline-hover.png') });
      // SVG download: the same scene, the same colours
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
      const svgFile = path.join(tmp, dl.suggestedFilename());
      await dl.saveAs(svgFile);
      const svg = fs.readFileSync(svgFile, 'utf8');
      const group = svg.slice(svg.indexOf('<g class="rects"'), svg.indexOf('</g>', svg.indexOf('<g class="rects"')));
      const rects = group.match(/<rect [^>]*data-kind="[^"]+"/g) || [];
      const fills = await page.evaluate(() => ({ F: window.CL.palette.op.F, B: window.CL.palette.op.B }));
      const fOk = rects.filter((r) => r.includes('data-kind="F"')).every((r) => r.includes('fill="' + fills.F + '"'));
      const bOk = rects.filter((r) => r.includes('data-kind="B"')).every((r) => r.includes('fill="' + fills.B + '"'));
      check(/^<svg xmlns/.test(svg) && rects.length === info.count && fOk && bOk,
        label + ': SVG download ' + dl.suggestedFilename() + ' holds the scene\'s ' + rects.length + ' rects in the canvas colours (' + (svg.length / 1024).toFixed(0) + ' KiB)');
      fs.copyFileSync(svgFile, path.join(shots, 'tp8-pp2-pipeline.svg'));
      const [dp] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
      const pngFile = path.join(tmp, dp.suggestedFilename());
      await dp.saveAs(pngFile);
      const png = fs.readFileSync(pngFile);
      const pw = png.readUInt32BE(16), ph = png.readUInt32BE(20);
      check(png.slice(1, 4).toString() === 'PNG' && pw === info.canvasW && ph === info.canvasH,
        label + ': PNG download ' + dp.suggestedFilename() + ' is the canvas (' + pw + ' × ' + ph + ')');
    }
    check(errors.length === 0, label + ' pipeline: no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
    await page.close();
  }
  // serving: the same call gives the decode walk
  const { page, errors } = await open(browser, base + '?ex=serve-pp4');
  const walk = await page.evaluate(() => {
    const d = window.__cutlab.derived.good;
    const fig = window.CL.views.pipeline.figure(d, Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth)), {});
    const R = fig.sc.rects;
    const dec = [];
    for (let i = 0; i < R.count; i++) if (R.kind[i] === 'decode') dec.push([R.stage[i], R.micro_batch[i], R.end_s[i] - R.start_s[i]]);
    return { dec, kinds: Array.from(new Set(R.kind)).sort(), stage_s: d.r.inference.decode_stage_s, caption: document.getElementById('view-caption').textContent };
  });
  check(walk.kinds.join() === 'decode,idle' && walk.dec.length === 3 * walk.stage_s.length &&
    walk.dec.every(([st, , dur]) => Math.abs(dur - walk.stage_s[st]) <= 1e-12 * walk.stage_s[st] + 1e-15),
  'serve: the pipeline view is the core\'s decode walk (3 tokens × ' + walk.stage_s.length + ' stages, idle hatched)');
  check(/3 of 4 stages wait/.test(walk.caption), 'serve: "3 of 4 stages wait"');
  check(errors.length === 0, 'serve pipeline: no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
  await page.close();
}

// ---- a pasted Hugging Face config.json ---------------------------------------------------------
const LLAMA3_8B_HF = { hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 32,
  num_key_value_heads: 8, vocab_size: 128256, tie_word_embeddings: false };

async function hfPaste(browser, base) {
  console.log('\nHugging Face config.json');
  const { page, errors } = await open(browser, base + '?ex=zero3');
  await page.click('[data-path="/model/hf_config"] summary');
  const box = page.locator('[data-path="/model/hf_config"] textarea');
  // not JSON: a clear message in the box, the plan untouched
  await box.fill('{"hidden_size": 4096, "num_hidden_layers": 32,,}');
  await page.click('[data-path="/model/hf_config"] button.use');
  await frames(page);
  const bad = await page.evaluate(() => ({ msg: document.querySelector('[data-path="/model/hf_config"] .err').textContent,
    invalid: document.querySelector('[data-path="/model/hf_config"]').classList.contains('invalid'), hf: window.__cutlab.state.hf }));
  check(bad.invalid && /^Not valid JSON/.test(bad.msg) && bad.hf === null, 'hf: invalid JSON is reported in the box: ' + bad.msg);
  await page.screenshot({ path: path.join(shots, 'hf-invalid-json.png') });
  // JSON, but not a whole config: the core's errors at /model/hf_config/… land in the box
  await box.fill(JSON.stringify({ hidden_size: 4096, num_attention_heads: 32 }));
  await page.click('[data-path="/model/hf_config"] button.use');
  await frames(page);
  const missing = await page.$eval('[data-path="/model/hf_config"] .err', (e) => e.textContent);
  check(/num_hidden_layers/.test(missing) && /vocab_size/.test(missing), 'hf: the core\'s errors for a partial config are shown in the box: ' + missing.slice(0, 90) + '…');
  // the Llama 3 8B config.json: the same parameters as the preset
  await box.fill(JSON.stringify(LLAMA3_8B_HF, null, 2));
  await page.click('[data-path="/model/hf_config"] button.use');
  await frames(page);
  const got = await page.evaluate(() => ({ ok: window.__cutlab.derived.ok, cfg: window.__cutlab.derived.cfg, params: window.__cutlab.derived.r && window.__cutlab.derived.r.params,
    select: document.querySelector('[data-path="/model"] select').selectedOptions[0].textContent, layers: document.querySelector('[data-path="/model/layers"] input').value,
    disabled: document.querySelector('[data-path="/model/layers"] input').disabled, url: location.href }));
  const ref = cliEvaluate(Object.assign({}, got.cfg, { model: 'llama3-8b' }));
  check(got.ok && JSON.stringify(got.cfg.model) === JSON.stringify({ hf_config: LLAMA3_8B_HF }), 'hf: the page sends model {"hf_config": …}');
  check(ref.status === 0 && JSON.stringify(got.params) === JSON.stringify(ref.json.params), 'hf: the Llama 3 8B config.json gives the preset llama3-8b\'s parameters (' + (got.params && got.params.total) + ')');
  check(/config\.json/.test(got.select) && got.layers === '32' && got.disabled, 'hf: the model select says "' + got.select + '", dimensions 32 layers shown, read-only');
  check(/[?&#]hf=/.test(got.url), 'hf: the URL holds the config.json');
  await page.screenshot({ path: path.join(shots, 'hf-llama3-8b.png') });
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 20000 });
  await frames(page);
  const back = await page.evaluate(() => ({ hf: window.__cutlab.state.hf, ok: window.__cutlab.derived.ok, text: document.querySelector('[data-path="/model/hf_config"] textarea').value }));
  check(JSON.stringify(back.hf) === JSON.stringify(LLAMA3_8B_HF) && back.ok && JSON.parse(back.text).hidden_size === 4096, 'hf: reload keeps the pasted model (and the box shows it)');
  // back to a preset
  await select(page, '/model', 'llama3-70b');
  check((await page.evaluate(() => window.__cutlab.state.hf)) === null, 'hf: choosing a preset leaves the pasted model');
  check(errors.length === 0, 'hf: no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
  await page.close();
}

// ---- an invalid plan, opened fresh: the controls show the config the core read -----------------
async function invalidKeepsControls(browser, base) {
  console.log('\ninvalid plan opened from a link');
  const q = new URLSearchParams({ model: 'llama3-70b', cluster: 'dgx-h100', gpus: '16', tp: '8', pp: '2', global_batch: '0' });
  const { page, errors } = await open(browser, base + '?' + q.toString());
  const st = await page.evaluate(() => {
    const d = window.__cutlab.derived;
    const v = (p) => { const el = document.querySelector('[data-path="' + p + '"] select, [data-path="' + p + '"] input'); return el.type === 'checkbox' ? (el.indeterminate ? 'unknown' : el.checked) : el.value; };
    return { ok: d.ok, hasConfig: !!d.config, tp: v('/plan/tp'), cp: v('/plan/cp'), zero: v('/plan/zero'), flash: v('/plan/flash_attention'), recompute: v('/plan/recompute'),
      seq: v('/workload/seq_len'), schedule: v('/plan/schedule'), eq: document.getElementById('equation').textContent.replace(/\s+/g, ' ') };
  });
  check(!st.ok && st.hasConfig && st.tp === '8' && st.cp === '1' && st.zero === '0' && st.flash === true && st.recompute === 'none' && st.seq === '4096' && st.schedule === '1f1b',
    'invalid plan: the controls hold the config the core read (' + JSON.stringify(st).slice(0, 120) + '…)');
  check(/DP\s*1/.test(st.eq), 'invalid plan: the equation shows the mesh the core read (' + st.eq.trim() + ')');
  check(errors.length === 0, 'invalid plan: no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
  await page.close();
}

// ---- "Find the best plans": the core's search() on a click; a row applies its plan ---------------
function cliSearch(args) {
  const p = spawnSync(cli, ['search', ...args, '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  return p.status === 0 ? JSON.parse(p.stdout) : null;
}
const searchRows = (page) => page.$$eval('#search-panel tbody tr[data-i]', (trs) => trs.map((tr) => Object.assign({ current: tr.classList.contains('current') },
  Object.fromEntries(Array.from(tr.querySelectorAll('td[data-k]')).map((td) => [td.dataset.k, { v: td.dataset.v, t: td.textContent }])))));
const SCHEDULE_TEXT = (p) => ({ '1f1b': '1F1B', 'zb-h1': 'ZB-H1', gpipe: 'GPipe', dualpipe: 'DualPipe' }[p.schedule] || p.schedule) + (p.schedule === 'interleaved' ? ' v' + p.vpp : '');

async function bestPlans(browser, base) {
  console.log('\nbest plans (search)');
  const argsFor = (gb) => ['--model', 'llama3-70b', '--cluster', 'dgx-h100', '--gpus', '64', '--seq-len', '8192', '--global-batch', String(gb), '--top', '10'];
  const args = argsFor(64);
  const ref = cliSearch(args);
  check(ref && ref.best.length === 10 && ref.fitting > 0, 'search: `cutlab search ' + args.join(' ') + ' --json` ranks ' + (ref && ref.best.length) + ' plans');
  if (!ref) return;
  const q = new URLSearchParams({ model: 'llama3-70b', cluster: 'dgx-h100', gpus: '64', tp: '8', pp: '2', sp: 'true', recompute: 'full', seq_len: '8192', global_batch: '64' });
  const { page, errors } = await open(browser, base + '?' + q.toString());
  check((await page.$eval('#search-panel', (p) => p.hidden)) && (await page.evaluate(() => window.__cutlab.perf.searchMs)) === null, 'search: nothing is searched before the click');
  await page.click('#find-plans');
  await page.waitForSelector('#search-panel tbody tr[data-i]', { timeout: 10000 });
  await frames(page);
  const ms = await page.evaluate(() => window.__cutlab.perf.searchMs);
  log('  search(): Llama 3 70B on 64 × H100, seq 8,192, global batch 64: ' + ms.toFixed(0) + ' ms in Chromium (WASM), ' + ref.candidates + ' plans enumerated');
  const rows = await searchRows(page);
  const f = await page.evaluate((best) => best.map((b) => ({ tps: window.CL.fmt.int(b.tokens_per_s), step: window.CL.fmt.seconds(b.step_s), mfu: window.CL.fmt.pct(b.mfu) })), ref.best);
  const b0 = ref.best[0], r0 = rows[0];
  check(rows.length === ref.best.length, 'search: ' + rows.length + ' rows, as many as the CLI\'s');
  check(r0 && Number(r0.tp.v) === b0.plan.tp && r0.tp.t === String(b0.plan.tp) && Number(r0.pp.v) === b0.plan.pp && r0.pp.t === String(b0.plan.pp) &&
    r0.schedule.v === b0.plan.schedule && r0.schedule.t === SCHEDULE_TEXT(b0.plan) && Number(r0.micro_batch.v) === b0.plan.micro_batch &&
    r0.recompute.t === b0.plan.recompute && Number(r0.tokens_per_s.v) === b0.tokens_per_s && r0.tokens_per_s.t === f[0].tps,
  'search: row 1 = the CLI\'s best plan: TP ' + b0.plan.tp + ' PP ' + b0.plan.pp + ' ' + SCHEDULE_TEXT(b0.plan) + ', micro-batch ' + b0.plan.micro_batch + ', recompute ' +
    b0.plan.recompute + ', ' + f[0].tps + ' tokens/s (page: "' + (r0 && r0.tokens_per_s.t) + '")');
  check(rows.every((r, i) => Number(r.tokens_per_s.v) === ref.best[i].tokens_per_s && Number(r.step_s.v) === ref.best[i].step_s && r.step_s.t === f[i].step &&
    Number(r.mfu.v) === ref.best[i].mfu && r.mfu.t === f[i].mfu && Number(r.dp.v) === ref.best[i].plan.dp && r.fits.v === String(ref.best[i].fits)),
  'search: every row\'s step time, tokens/s, MFU, DP and fit = the CLI\'s, in its order');
  const counts = await page.$eval('#search-panel .search-counts', (e) => e.textContent);
  const want = await page.evaluate((r) => [r.candidates, r.valid, r.fitting].map((x) => window.CL.fmt.int(x)), ref);
  check(counts.startsWith(want[0] + ' plans enumerated, ' + want[1] + ' valid, ' + want[2] + ' fit'), 'search: counts "' + counts + '"');
  check(rows.every((r) => !r.current), 'search: no row marked current (TP8 PP2 with full recompute is not among them)');
  await page.screenshot({ path: path.join(shots, 'search-llama3-70b-64.png') });
  // a row click applies its plan: pick the first (after the best) with another TP or PP
  let pick = ref.best.findIndex((b, i) => i > 0 && (b.plan.tp !== 8 || b.plan.pp !== 2));
  if (pick < 0) pick = 1;
  const bp = ref.best[pick], pp = bp.plan;
  await page.click('#search-panel tbody tr[data-i="' + pick + '"]');
  await frames(page);
  await frames(page);
  const got = await page.evaluate(() => {
    const v = (p) => { const el = document.querySelector('[data-path="' + p + '"] select, [data-path="' + p + '"] input'); return el.type === 'checkbox' ? el.checked : el.value; };
    return { url: location.href, gpus: window.__cutlab.state.gpus, plan: window.__cutlab.derived.cfg.plan, ok: window.__cutlab.derived.ok,
      c: { tp: v('/plan/tp'), pp: v('/plan/pp'), cp: v('/plan/cp'), dp: v('/plan/dp'), schedule: v('/plan/schedule'), vpp: v('/plan/vpp'), micro_batch: v('/plan/micro_batch'),
        recompute: v('/plan/recompute'), sp: v('/plan/sp'), distributed_optimizer: v('/plan/distributed_optimizer'), gpus: v('/cluster/gpus') } };
  });
  const sent = { tp: pp.tp, pp: pp.pp, cp: pp.cp, ep: pp.ep, sp: pp.sp, distributed_optimizer: pp.distributed_optimizer, recompute: pp.recompute, schedule: pp.schedule, micro_batch: pp.micro_batch };
  if (pp.schedule === 'interleaved') sent.vpp = pp.vpp;
  const ev = cliEvaluate({ model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 64 }, plan: sent, workload: { seq_len: 8192, global_batch: 64 } });
  check(ev.status === 0 && ev.json.time.step_s === bp.step_s && ev.json.throughput.tokens_per_s === bp.tokens_per_s,
    'search: `cutlab evaluate` of row ' + (pick + 1) + ' gives its step time and tokens/s');
  const keys = Object.keys(sent);
  check(got.ok && got.gpus === 64 && keys.every((k) => got.plan[k] === sent[k]), 'search: clicking row ' + (pick + 1) + ' sends plan ' + JSON.stringify(got.plan));
  const c = got.c;
  check(c.tp === String(pp.tp) && c.pp === String(pp.pp) && c.cp === String(pp.cp) && c.dp === String(pp.dp) && c.schedule === pp.schedule && c.vpp === String(pp.vpp) &&
    c.micro_batch === String(pp.micro_batch) && c.recompute === pp.recompute && c.sp === pp.sp && c.distributed_optimizer === pp.distributed_optimizer && c.gpus === '64',
  'search: the controls show the plan ' + JSON.stringify(c));
  check(new URL(got.url).searchParams.get('tp') === String(pp.tp) && new URL(got.url).searchParams.get('pp') === String(pp.pp) &&
    new URL(got.url).searchParams.get('schedule') === pp.schedule, 'search: the URL holds the plan (' + got.url.slice(got.url.indexOf('?')) + ')');
  if (ev.status === 0) {
    const head = await page.$eval('#headline', (e) => e.textContent);
    const hf = await page.evaluate((r) => [window.CL.fmt.seconds(r.time.step_s), window.CL.fmt.pct(r.mfu), window.CL.fmt.short(r.throughput.tokens_per_s)], ev.json);
    check(hf.every((x) => head.includes(x)), 'search: the headline shows the applied plan: step ' + hf[0] + ', MFU ' + hf[1] + ', ' + hf[2] + ' tokens/s');
    await compareTables(page, ev.json, 'search: row ' + (pick + 1) + ' applied');
  }
  const after = await searchRows(page);
  check(after.length === rows.length && after.filter((r) => r.current).length === 1 && after[pick].current, 'search: row ' + (pick + 1) + ' is now marked as the current plan');
  await page.screenshot({ path: path.join(shots, 'search-applied.png') });
  // back: the previous plan, no row current
  await page.goBack();
  await frames(page);
  const back = await page.evaluate(() => ({ tp: window.__cutlab.state.plan.tp, pp: window.__cutlab.state.plan.pp, rc: window.__cutlab.state.plan.recompute }));
  check(back.tp === 8 && back.pp === 2 && back.rc === 'full' && (await searchRows(page)).every((r) => !r.current), 'search: back returns to TP8 PP2 (full recompute), no row current');
  // another workload: the table is marked outdated, its rows do nothing; search again ranks for the new one
  await fill(page, '/workload/global_batch', 128);
  const stale = await page.evaluate(() => ({ outdated: !!document.querySelector('#search-panel table.outdated'), msg: document.querySelector('#search-panel .search-msg') ? document.querySelector('#search-panel .search-msg').textContent : '' }));
  check(stale.outdated && /changed since this search/.test(stale.msg), 'search: a new global batch marks the table outdated');
  const urlBefore = page.url();
  await page.click('#search-panel tbody tr[data-i="0"]');
  await frames(page);
  check(page.url() === urlBefore, 'search: an outdated row does not apply');
  const ref128 = cliSearch(argsFor(128));
  await page.click('#search-panel .again');
  await page.waitForFunction(() => !document.querySelector('#search-panel table.outdated') && document.querySelector('#search-panel tbody tr[data-i]'), null, { timeout: 10000 });
  const again = await searchRows(page);
  check(ref128 && again.length === ref128.best.length && again.every((r, i) => Number(r.tokens_per_s.v) === ref128.best[i].tokens_per_s),
    'search: "Search again" ranks for global batch 128 (= `cutlab search --global-batch 128`)');
  // serve mode: the search ranks training plans
  await select(page, '/workload/mode', 'infer');
  const serveMsg = await page.$eval('#search-panel', (p) => (p.hidden ? '' : p.textContent));
  check(/ranks training plans/.test(serveMsg) && !(await page.$('#search-panel table')), 'search: serve mode says the search ranks training plans');
  await page.click('#find-plans');
  await page.waitForTimeout(100);
  await frames(page);
  const serveMsg2 = await page.$eval('#search-panel', (p) => (p.hidden ? '' : p.textContent));
  check(/ranks training plans/.test(serveMsg2) && !(await page.$('#search-panel table')), 'search: the button in serve mode gives the same message');
  await page.screenshot({ path: path.join(shots, 'search-serve.png') });
  check(errors.length === 0, 'search: no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
  await page.close();
  // nothing fits: Llama 3 405B on 8 GPUs lists the plans closest to fitting
  {
    const ref8 = cliSearch(['--model', 'llama3-405b', '--cluster', 'dgx-h100', '--gpus', '8', '--seq-len', '8192', '--global-batch', '64', '--top', '10']);
    const { page: pn, errors: en } = await open(browser, base + '?model=llama3-405b&cluster=dgx-h100&gpus=8&tp=8&sp=true&seq_len=8192&global_batch=64');
    await pn.click('#find-plans');
    await pn.waitForSelector('#search-panel tbody tr[data-i]', { timeout: 10000 });
    await frames(pn);
    const nr = await searchRows(pn);
    const msg = await pn.$eval('#search-panel', (p) => p.textContent);
    check(ref8 && ref8.fitting === 0 && nr.length === ref8.best.length && nr.every((r, i) => r.fits.t === 'does not fit' && Number(r.peak_memory_bytes.v) === ref8.best[i].peak_memory_bytes) &&
      /No plan fits in memory/.test(msg), 'search: nothing fits 405B on 8 GPUs: the ' + nr.length + ' plans closest to fitting, each marked "does not fit"');
    await pn.screenshot({ path: path.join(shots, 'search-none-fits.png') });
    check(en.length === 0, 'search (none fits): no console errors' + (en.length ? ' — ' + en.join(' | ') : ''));
    await pn.close();
  }
}

// ---- redraw time for Llama 3 405B on 16,384 GPUs -----------------------------------------------
async function timeView(browser, base, view) {
  const { page, errors } = await open(browser, base + '?ex=llama3-405b&view=' + view);
  const samples = [];
  // alternate recompute selective ↔ full and ZeRO 0 ↔ 1: each change is a new, valid plan
  for (let i = 0; i < 18; i++) {
    const change = i % 2 === 0 ? ['/plan/recompute', i % 4 === 0 ? 'full' : 'selective'] : ['/plan/zero', i % 4 === 1 ? '1' : '0'];
    const perf = await page.evaluate(([p, v]) => new Promise((resolve) => {
      const sel = document.querySelector('[data-path="' + p + '"] select');
      sel.value = v;
      sel.dispatchEvent(new Event('change'));
      requestAnimationFrame(() => requestAnimationFrame(() => resolve(JSON.parse(JSON.stringify(Object.assign({ ok: window.__cutlab.derived.ok }, window.__cutlab.perf.change))))));
    }), change);
    samples.push(perf);
  }
  const s = samples.slice(2);
  check(s.every((x) => x.ok && x.view === view), '405B ' + view + ': every change gave a valid plan, redrawn in this view');
  const sorted = (f) => s.map(f).sort((a, b) => a - b);
  const med = (a) => a[Math.floor(a.length / 2)];
  const work = sorted((x) => x.workMs), wall = sorted((x) => x.changeToDrawMs);
  const parts = {};
  for (const k of Object.keys(Object.assign({}, ...s.map((x) => x.parts)))) parts[k] = med(sorted((x) => x.parts[k] || 0));
  delete parts.tables;   // (the tables come in the next frame, timed on their own)
  const tables = sorted((x) => (x.tablesFrameMs === null || x.tablesFrameMs === undefined ? Infinity : x.tablesFrameMs));
  const toTables = sorted((x) => (x.changeToTablesMs === undefined ? Infinity : x.changeToTablesMs));
  const res = { medianWork: med(work), maxWork: work[work.length - 1], medianWall: med(wall), maxWall: wall[wall.length - 1], parts,
    medianTables: med(tables), medianToTables: med(toTables) };
  log('  ' + view + ': change → view redrawn: median ' + res.medianWall.toFixed(1) + ' ms, max ' + res.maxWall.toFixed(1) +
    ' ms (of which core + controls + canvas work: median ' + res.medianWork.toFixed(1) + ' ms, max ' + res.maxWork.toFixed(1) + ' ms; medians: ' +
    Object.entries(parts).map(([k, v]) => k + ' ' + v.toFixed(1)).join(', ') + '); tables in the next frame: work median ' +
    res.medianTables.toFixed(1) + ' ms, change → tables done median ' + res.medianToTables.toFixed(1) + ' ms');
  if (view === 'placement') await page.screenshot({ path: path.join(shots, 'llama3-405b-placement.png') });
  if (view === 'pipeline') await page.screenshot({ path: path.join(shots, 'llama3-405b-pipeline.png') });
  check(errors.length === 0, '405B ' + view + ': no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
  await page.close();
  return res;
}

async function redrawTiming(browser, base) {
  console.log('\nredraw time, Llama 3 405B on 16,384 GPUs (TP8 PP16, global batch 2048)');
  const result = {};
  for (const view of ['placement', 'cuts', 'pipeline']) {
    result[view] = await timeView(browser, base, view);
    // a shared machine can be busy for a while: one more series before calling it slow
    if (result[view].medianWork >= 16) {
      log('  ' + view + ': over budget, measuring again (other work on this machine?)');
      const again = await timeView(browser, base, view);
      if (again.medianWork < result[view].medianWork) result[view] = again;
    }
  }
  // The frame's work (core calls, canvas, tables) must fit in one 60 Hz frame; the wall time also
  // includes waiting for that frame (requestAnimationFrame), up to 16.7 ms by itself.
  for (const view of ['placement', 'cuts', 'pipeline']) {
    check(result[view].medianWork < 16, 'Llama 3 405B ' + view + ' view: change → redraw work < 16 ms (median ' + result[view].medianWork.toFixed(1) + ' ms)');
    check(result[view].medianTables < 16, 'Llama 3 405B ' + view + ' view: the tables\' frame < 16 ms (median ' + result[view].medianTables.toFixed(1) + ' ms)');
  }
  return result;
}

// ---- screenshots ------------------------------------------------------------------------------
async function screenshots(browser, base) {
  console.log('\nscreenshots → ' + shots);
  const list = [
    ['default-cuts.png', ''],
    ['default-placement.png', '?view=placement'],
    ['default-pipeline.png', '?view=pipeline'],
    ['deepseek-v3-cuts.png', '?ex=deepseek-v3'],
    ['deepseek-v3-placement.png', '?ex=deepseek-v3&view=placement'],
    ['deepseek-v3-pipeline.png', '?ex=deepseek-v3&view=pipeline'],
    ['mixtral-folding-cuts.png', '?ex=mixtral-folding'],
    ['mixtral-zb-h1-pipeline.png', '?model=mixtral-8x22b&cluster=dgx-h100&gpus=128&tp=2&pp=8&ep=8&etp=1&sp=true&distributed_optimizer=true&recompute=selective&schedule=zb-h1&seq_len=4096&global_batch=256&view=pipeline'],
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
  for (const [file, query] of [['embed-timeline-700.png', '?ex=tp8pp2&embed=timeline'], ['embed-timeline-405b-700.png', '?ex=llama3-405b&embed=timeline'],
    ['embed-serve-pp4-700.png', '?ex=serve-pp4&embed=pipeline'], ['embed-cuts-700.png', '?ex=tp-ep&embed=cuts'], ['embed-placement-700.png', '?ex=tp8pp2&embed=placement']]) {
    const { page, errors } = await open(browser, base + query, { width: 700, height: 800 });
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= 700, file + ': fits in 700 px (' + wide + ')');
    await page.screenshot({ path: path.join(shots, file), fullPage: true });
    check(errors.length === 0, file + ': no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
    await page.close();
  }
  // the README's picture: the default page
  if (docsShot) {
    const { page, errors } = await open(browser, base);
    fs.mkdirSync(path.dirname(docsShot), { recursive: true });
    await page.screenshot({ path: docsShot });
    check(errors.length === 0, 'docs/explorer.png saved, no console errors' + (errors.length ? ' — ' + errors.join(' | ') : ''));
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
  await servingBalancer(browser, fileBase);
  await pipelineScene(browser, fileBase);
  await hfPaste(browser, fileBase);
  await invalidKeepsControls(browser, fileBase);
  await bestPlans(browser, fileBase);
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
