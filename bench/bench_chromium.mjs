// Chromium benchmark: the same whole-space searches as bench/bench_wasm.mjs (WASM, one thread) and
// the page's frame work per view, in headless Chromium launched as the browser tests launch it
// (tests/browser/lib.mjs), the page served over http.
// Frame work: from a control change to the end of that frame's redraw (core calls, controls,
// canvas: app.js's perf.change.workMs; the tables follow in the next frame, timed on their own), the
// median of 12 changes after 6 warm-up ones, core-full.js loaded first (web/bridge.js loads it after
// the first paint; until V8 has compiled and tiered up its code, the first changes took 30–170 ms:
// those are reported apart, as the first change after load) and the page's own warm-up done (app.js
// warmCore, in idle time after core-full.js arrives), in every view, at 64 GPUs (Llama 3 70B, TP 8 × PP 2 ×
// DP 4) and 16,384 GPUs (Llama 3 405B, TP 8 × PP 16 × DP 128). The changes alternate recompute
// selective ↔ full and ZeRO 0 ↔ 1, so that each one is a new plan.
// Run: node bench/bench_chromium.mjs   (after building the wasm preset; env as in tests/browser/lib.mjs)
// A benchmark, not a test: run it on a quiet machine; nothing is checked.
import { setup, teardown } from '../tests/browser/lib.mjs';

const SEARCHES = [
  ['GPT-3 175B, 1,024 A100', { model: 'gpt3-175b', cluster: { preset: 'dgx-a100', gpus: 1024 }, workload: { seq_len: 2048, global_batch: 1536 } }],
  ['Llama 3 405B, 16,384 H100', { model: 'llama3-405b', cluster: { preset: 'dgx-h100', gpus: 16384 }, workload: { seq_len: 8192, global_batch: 2048 } }],
];
const SIZES = [
  ['64 GPUs', 'model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=2&sp=true&recompute=selective&distributed_optimizer=true&seq_len=8192&global_batch=64'],
  ['16,384 GPUs', 'ex=llama3-405b'],
];
const VIEWS = ['cuts', 'placement', 'pipeline'];
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
const ready = (page) => page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 60000 });

const { browser, httpBase } = await setup();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error: ' + e.message));

  // ---- searches: a fresh instance of core-full.js (the script web/bridge.js adds), median of 3 runs, by wall time
  // and by the renderer main thread's CPU time (CDP Performance.getMetrics ThreadTime)
  await page.goto(httpBase);
  await ready(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const threadTime = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'ThreadTime').value * 1000;
  await page.evaluate(async () => { await window.__cutlab.api().full(); window.benchCore = await window.createCutlabFull(); });
  const med = (a) => a.slice().sort((x, y) => x - y)[1];
  const rate = (n, t) => Math.round((n / t) * 1000).toLocaleString('en-US').padStart(10);
  for (const [name, cfg] of SEARCHES) {
    const walls = [], cpus = [];
    let r = null;
    for (let i = 0; i < 3; ++i) {
      const c0 = await threadTime();
      r = await page.evaluate((text) => {
        const t0 = performance.now();
        const out = JSON.parse(window.benchCore.search(text, 10));
        return { ok: out.ok, ms: performance.now() - t0, candidates: out.ok ? out.result.candidates : 0, evaluated: out.ok ? out.result.evaluated : 0 };
      }, JSON.stringify(cfg));
      cpus.push((await threadTime()) - c0);
      walls.push(r.ms);
    }
    if (!r.ok) throw new Error(name + ': the search failed');
    const ms = med(walls), cpu = med(cpus);
    console.log(`search ${name} (${r.candidates.toLocaleString('en-US')} candidates, ${r.evaluated.toLocaleString('en-US')} simulated)\n` +
      `  wall ${ms.toFixed(0).padStart(6)} ms ${rate(r.candidates, ms)} candidates/s ${rate(r.evaluated, ms)} simulated/s\n` +
      `  cpu  ${cpu.toFixed(0).padStart(6)} ms ${rate(r.candidates, cpu)} candidates/s ${rate(r.evaluated, cpu)} simulated/s`);
  }

  // ---- frame work per view
  for (const [size, query] of SIZES) {
    for (const view of VIEWS) {
      await page.goto(httpBase + '?' + query + '&view=' + view);
      await ready(page);
      await page.evaluate(() => window.__cutlab.api().full());
      await page.waitForFunction(() => window.__cutlab.perf.warm !== null, null, { timeout: 60000 });   // app.js warmCore
      const samples = [];
      let first = null;
      for (let i = 0; i < 18; i++) {
        const change = i % 2 === 0 ? ['/plan/recompute', i % 4 === 0 ? 'full' : 'selective'] : ['/plan/zero', i % 4 === 1 ? '1' : '0'];
        const s = await page.evaluate(([p, v]) => new Promise((resolve) => {
          const sel = document.querySelector('[data-path="' + p + '"] select');
          sel.value = v;
          sel.dispatchEvent(new Event('change'));
          // the change's frame, then the tables' frame
          requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(() => {
            const c = window.__cutlab.perf.change;
            resolve({ ok: window.__cutlab.derived.ok, view: c.view, work: c.workMs, tables: c.tablesFrameMs });
          })));
        }), change);
        if (i === 0) first = s.work;
        if (i >= 6) samples.push(s);
      }
      const bad = samples.filter((s) => !s.ok || s.view !== view).length;
      const tables = samples.map((s) => s.tables).filter((x) => x !== null && x !== undefined);
      console.log(`frame ${size.padEnd(12)} ${view.padEnd(10)} work median ${median(samples.map((s) => s.work)).toFixed(1).padStart(6)} ms` +
        `  max ${Math.max(...samples.map((s) => s.work)).toFixed(1).padStart(6)} ms  tables' frame median ${tables.length ? median(tables).toFixed(1).padStart(6) : '   n/a'} ms` +
        `  first change ${first.toFixed(1).padStart(6)} ms` +
        (bad ? `  (${bad} of ${samples.length} changes not valid or not in this view)` : ''));
    }
  }
  await context.close();
} finally {
  await teardown();
}
