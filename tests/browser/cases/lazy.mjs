// The two modules (issue 13, web/bridge.js): the page starts from core.js alone; core-full.js comes
// after the first paint (prefetch), at once when the first view needs it, or on the first call that
// needs it (?prefetch=0), while the view, the Launch panel, the balance line and the search say
// they are loading; a serving plan, which core.js leaves to core-full.js, waits for it; over http and
// from file://. Screenshots: the page after load, the Pipeline tab while core-full.js is held back,
// and once it is there; a switch to serving while it is held back.
import { setup, settle, click, shot, loaded } from '../lib.mjs';

// TP 8 × PP 2 on 16 H100s in the Cuts view (the example tp8pp2 opens in Placement, which needs core-full.js)
const PLAN = '?model=llama3-70b&cluster=dgx-h100&gpus=16&tp=8&pp=2&recompute=full&seq_len=8192&global_batch=16&view=cuts';

// A page whose requests for core-full.js wait until release() (http only: file:// has no routing);
// ready: wait until the page says it is ready.
async function held(k, url, ready = true) {
  const { page, errors } = await k.open();
  const requests = [];
  page.on('request', (r) => requests.push(r.url().replace(/.*\//, '').replace(/\?.*/, '')));
  let release = null;
  const gate = new Promise((resolve) => { release = resolve; });
  await page.route('**/core-full.js', async (route) => { await gate; await route.continue(); });
  await page.goto(url, { waitUntil: 'domcontentloaded' });   // a held script holds the load event back
  if (ready) await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
  return { page, errors, requests, release };
}

async function onDemand(k) {
  const { httpBase } = await setup();
  const { page, errors, requests, release } = await held(k, httpBase + PLAN + '&prefetch=0');
  await settle(page);
  await page.screenshot({ path: shot('lazy-1-loaded.png'), fullPage: false });
  const first = await page.evaluate(() => ({ view: window.__cutlab.state.view, h: document.getElementById('canvas').height, ready: window.__cutlab.api().ready('timeline') }));
  k.check(first.view === 'cuts' && first.h > 120 && !first.ready, 'the Cuts view is drawn from core.js alone (canvas ' + first.h + ' px high)');
  k.check(requests.includes('core.js') && !requests.includes('core-full.js'), 'with ?prefetch=0 the page asked for core.js only: ' + requests.filter((r) => /\.js$/.test(r) && /core/.test(r)).join(', '));
  // the Pipeline tab while core-full.js is held back: a loading state, not an error or a blank
  await page.click('#tabs [data-view="pipeline"]');
  await page.waitForFunction(() => document.getElementById('view').getAttribute('aria-busy') === 'true', null, { timeout: 5000 });
  const loading = await page.evaluate(() => ({ caption: document.getElementById('view-caption').textContent, svg: document.getElementById('export-svg').disabled,
    label: document.getElementById('canvas').getAttribute('aria-label'), h: document.getElementById('canvas').height }));
  await page.screenshot({ path: shot('lazy-2-pipeline-loading.png'), fullPage: false });
  k.check(/^Loading the pipeline view…/.test(loading.caption) && loading.svg && /loading/.test(loading.label) && loading.h > 0,
    'Pipeline while core-full.js loads: "' + loading.caption + '", downloads off');
  k.check(requests.includes('core-full.js'), 'the tab switch asked for core-full.js');
  // the balance line says so too
  await page.click('#tables .balance-run');
  const line = await page.$eval('#tables .balance', (e) => e.textContent);
  k.check(/^Balancing…/.test(line), 'the balance line while core-full.js loads: "' + line.slice(0, 60) + '"');
  release();
  await settle(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot('lazy-3-pipeline.png'), fullPage: false });
  const drawn = await page.evaluate(() => ({ caption: document.getElementById('view-caption').textContent, svg: document.getElementById('export-svg').disabled,
    fig: !!window.CL.views.pipeline.figure(window.__cutlab.derived.good, Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth)), {}),
    balance: document.querySelector('#tables .balance').textContent, busy: document.querySelectorAll('[aria-busy]').length }));
  k.check(!/Loading/.test(drawn.caption) && !drawn.svg && drawn.fig && drawn.busy === 0, 'once core-full.js is there the pipeline is drawn: "' + drawn.caption.slice(0, 60) + '"');
  k.check(/Suggested layers per stage|Balanced/.test(drawn.balance), 'and the balance is answered: "' + drawn.balance.slice(0, 60) + '"');
  k.check(requests.filter((r) => r === 'core-full.js').length === 1, 'core-full.js was asked for once');
  k.noErrors(errors, 'on demand');
}

// ?prefetch=0 from file://: the Launch panel loads core-full.js by a <script> there too.
async function launchFromFile(k) {
  const { fileBase } = await setup();
  const { page, errors } = await k.open(fileBase + PLAN + '&prefetch=0');
  k.check(!(await page.evaluate(() => window.__cutlab.api().ready('launch'))), 'file://, ?prefetch=0: launch() is not there after load');
  await click(page, '#launch summary');   // settle() waits while the panel is aria-busy
  const text = await page.$eval('#launch pre', (e) => e.textContent);
  k.check(/--tensor-model-parallel-size 8/.test(text), 'file://: the Launch panel shows the Megatron-LM arguments once core-full.js is there');
  k.noErrors(errors, 'launch from file://');
}

// Prefetch: without a call that needs it, core-full.js arrives after the first paint; a first view
// that needs it (the URL's view, an embed) asks for it with core.js, before the first paint.
async function prefetch(k) {
  const { httpBase } = await setup();
  const { page, errors } = await k.open(httpBase + PLAN);
  await page.waitForFunction(() => window.__cutlab.api().ready('timeline'), null, { timeout: 20000 });
  k.check(true, 'core-full.js arrives after the first paint without a call that needs it');
  // then warms up in idle time (app.js warmCore): the plan through the core and every view, evaluated
  // anew each round; the page's plan and its figure are as before
  const before = await page.evaluate(() => ({ text: window.__cutlab.derived.text, h: document.getElementById('canvas').dataset.height }));
  await page.waitForFunction(() => window.__cutlab.perf.warm !== null, null, { timeout: 20000 });
  const warm = await page.evaluate(() => ({ warm: window.__cutlab.perf.warm, n: window.__cutlab.api().evaluations(), text: window.__cutlab.derived.text,
    h: document.getElementById('canvas').dataset.height, fig: window.CL.views.cuts.scene(window.__cutlab.derived.good, 800, {}) !== null }));
  k.check(warm.warm.steps === 4 * (1 + 3) && warm.n >= 5 && warm.text === before.text && warm.h === before.h && warm.fig,
    'the warm-up ran ' + warm.warm.steps + ' steps in ' + warm.warm.ms.toFixed(0) + ' ms, ' + warm.n + ' evaluations by core-full.js; the plan and figure unchanged');
  const cold = await k.open(httpBase + PLAN + '&warm=0');
  await cold.page.waitForFunction(() => window.__cutlab.api().ready('timeline'), null, { timeout: 20000 });
  await cold.page.waitForTimeout(1000);
  const c = await cold.page.evaluate(() => ({ warm: window.__cutlab.perf.warm, n: window.__cutlab.api().evaluations(), ok: window.__cutlab.derived.ok }));
  k.check(c.warm === null && c.n <= 2 && c.ok, '?warm=0: no warm-up (' + c.n + ' evaluations by core-full.js), and warm is not read as a plan key');
  const a = await held(k, httpBase + PLAN.replace('view=cuts', 'view=placement') + '&prefetch=0');
  k.check(a.requests.includes('core-full.js'), 'a first view of Placement asks for core-full.js before the page is ready');
  a.release();
  await settle(a.page);
  const p = await a.page.evaluate(() => ({ caption: document.getElementById('view-caption').textContent, h: document.getElementById('canvas').height }));
  k.check(/^Where the weights land/.test(p.caption) && p.h > 120, 'and draws it once it is there: "' + p.caption.slice(0, 40) + '"');
  const e = await held(k, httpBase + PLAN + '&embed=pipeline&prefetch=0');
  k.check(e.requests.includes('core-full.js'), 'an embed of the pipeline asks for core-full.js at once');
  e.release();
  await settle(e.page);
  k.noErrors(errors.concat(cold.errors, a.errors, e.errors), 'prefetch');
}

// Serving plans are priced by core-full.js only (core.js prices training: core/api.h
// training_evaluate_json). A page that opens on one waits for core-full.js before it is ready; a
// switch to serving while core-full.js is held back says it is loading, then shows the plan.
async function serving(k) {
  const { httpBase } = await setup();
  const SERVE = PLAN.replace('tp=8&pp=2', 'tp=8&dp=2') + '&mode=infer&batch=64&prompt_len=1000&output_len=200';
  const { page, errors, requests, release } = await held(k, httpBase + SERVE + '&prefetch=0', false);
  await page.waitForTimeout(1500);
  const before = await page.evaluate(() => document.body.dataset.status || '');
  k.check(before !== 'ready' && requests.includes('core-full.js'), 'a page opened on a serving plan asks for core-full.js and is not ready without it (status "' + before + '")');
  release();
  await loaded(page);
  const opened = await page.evaluate(() => ({ ok: window.__cutlab.derived.ok, tpot: window.__cutlab.derived.ok && window.__cutlab.derived.r.inference.tpot_s,
    stale: document.getElementById('stale').hidden }));
  k.check(opened.ok && opened.tpot > 0 && opened.stale, 'then it shows the serving plan at once (TPOT ' + (opened.tpot * 1e3).toFixed(1) + ' ms)');

  const h = await held(k, httpBase + PLAN + '&prefetch=0');
  await h.page.selectOption('[data-path="/workload/mode"] select', 'infer');
  await h.page.waitForFunction(() => window.__cutlab.derived && window.__cutlab.derived.pending, null, { timeout: 5000 });
  const pending = await h.page.evaluate(() => ({ text: document.getElementById('stale').textContent, hidden: document.getElementById('stale').hidden,
    busy: document.getElementById('headline').getAttribute('aria-busy'), marked: document.querySelectorAll('form .invalid').length }));
  await h.page.screenshot({ path: shot('lazy-4-serving-loading.png'), fullPage: false });
  k.check(!pending.hidden && /^Loading the serving model/.test(pending.text) && pending.busy === 'true' && pending.marked === 0,
    'a switch to serving while core-full.js is held back: "' + pending.text.slice(0, 70) + '", no field marked');
  h.release();
  await settle(h.page);
  const shown = await h.page.evaluate(() => ({ ok: window.__cutlab.derived.ok, mode: window.__cutlab.derived.ok && window.__cutlab.derived.r.config.workload.mode,
    stale: document.getElementById('stale').hidden, busy: document.getElementById('headline').hasAttribute('aria-busy') }));
  k.check(shown.ok && shown.mode === 'infer' && shown.stale && !shown.busy, 'and once core-full.js is there the serving plan is priced and shown');
  k.noErrors(errors.concat(h.errors), 'serving from core-full.js');
}

export default [
  { name: 'two modules: a serving plan waits for core-full.js, at load and after a switch (http)', run: serving },
  { name: 'two modules: the Pipeline tab, the balance line and their loading state with core-full.js held back (http)', run: onDemand },
  { name: 'two modules: the Launch panel loads core-full.js from file://', run: launchFromFile },
  { name: 'two modules: prefetch after the first paint, then a warm-up in idle time; a first view that needs core-full.js asks for it at once', run: prefetch },
];
