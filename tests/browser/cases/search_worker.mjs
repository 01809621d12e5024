// "Find the best plans" for a large space (DeepSeek-V3 on 2,048 H100, seq 4,096, global batch 4,096:
// 25.6 million plans, 2.7 s natively; the step-time bound made GPT-3 175B on 1,024 A100, this test's
// space before, end before the checks below could see it running)
// does not block the page: the search runs in pieces in a Web Worker (web/search-worker.js), the
// page shows a progress bar and the best plans so far, a control answers within 200 ms while it
// runs, Cancel stops it, and the full run ranks the plans of `cutlab search` (the one-shot search).
// From file:// (Chromium refuses a worker to origin 'null') the same pieces run on the page, one
// per task, with the same bar and Cancel. Long tasks of the page are measured (PerformanceObserver).
import { setup, settle, cliSearch } from '../lib.mjs';

const ARGS = ['--model', 'deepseek-v3', '--cluster', 'dgx-h100', '--gpus', '2048', '--seq-len', '4096', '--global-batch', '4096', '--top', '10'];
const QUERY = '?model=deepseek-v3&cluster=dgx-h100&gpus=2048&tp=8&pp=16&ep=8&sp=true&seq_len=4096&global_batch=4096';

// Every long task (> 50 ms) of the page's thread, from its first script on.
function observeLongTasks() {
  window.__long = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__long.push({ start: e.startTime, ms: e.duration }); }).observe({ type: 'longtask', buffered: true });
}
const progressDone = (page) => page.evaluate(() => { const b = document.querySelector('#search-panel .search-progress progress'); return b ? b.value : -1; });
// The page's frames while a search runs, measured on the page: a loop of animation frames records
// each gap between two frames (performance.now()), so a page thread blocked by a long task shows as
// a long gap. Measured on the page, not as a round trip from node, whose IPC a loaded CI machine
// stretches whatever the page does. Returns the gaps of `frames` frames after the call.
function frameGaps(page, frames) {
  return page.evaluate((n) => new Promise((resolve) => {
    const gaps = [];
    let last = performance.now();
    const tick = () => {
      const now = performance.now();
      gaps.push(Math.round(now - last));
      last = now;
      if (gaps.length < n) window.__test.raf(tick);
      else resolve(gaps);
    };
    window.__test.raf(tick);
  }), frames);
}
// A real click (mouse input through the browser) on `selector`: ms from the input event's time stamp
// (when the browser received it) to the next animation frame after its handlers ran. A page thread
// busy with a long task delays both.
async function clickToFrame(page, selector) {
  await page.evaluate((sel) => {
    window.__clickMs = null;
    document.querySelector(sel).addEventListener('click', (ev) => {
      const t = ev.timeStamp;
      window.__test.raf(() => { window.__clickMs = performance.now() - t; });
    }, { once: true, capture: true });
  }, selector);
  await page.click(selector);
  await page.waitForFunction(() => window.__clickMs !== null, null, { timeout: 10000 });
  return page.evaluate(() => window.__clickMs);
}
const rows = (page) => page.$$eval('#search-panel table.search:not(.partial) tbody tr[data-i]', (trs) => trs.map((tr) =>
  Object.fromEntries(Array.from(tr.querySelectorAll('td[data-k][data-v]')).map((td) => [td.dataset.k, td.dataset.v]))));
function sameAsCli(k, got, ref, label) {
  k.check(got.length === ref.best.length && got.every((r, i) => Number(r.tokens_per_s) === ref.best[i].tokens_per_s && Number(r.step_s) === ref.best[i].step_s &&
    Number(r.tp) === ref.best[i].plan.tp && Number(r.pp) === ref.best[i].plan.pp && Number(r.dp) === ref.best[i].plan.dp && r.schedule === ref.best[i].plan.schedule &&
    Number(r.micro_batch) === ref.best[i].plan.micro_batch && r.recompute === ref.best[i].plan.recompute),
  label + ': the ' + got.length + ' rows = `cutlab search` (one-shot), in its order; best ' + (ref.best[0] && ref.best[0].tokens_per_s.toFixed(0)) + ' tokens/s');
}
async function searchRuns(page) {
  await page.click('#find-plans');
  await page.waitForFunction(() => { const b = document.querySelector('#search-panel .search-progress progress'); return b && b.value >= 1; }, null, { timeout: 30000 });
}
async function searchDone(page) {
  await page.waitForFunction(() => !document.getElementById('find-plans').disabled && document.querySelector('#search-panel .search-counts'), null, { timeout: 60000 });
  await settle(page);
}

async function inWorker(k) {
  const { httpBase } = await setup();
  const refP = cliSearch(ARGS);
  const { page, errors } = await k.open(null);
  await page.addInitScript(observeLongTasks);
  await page.goto(httpBase + QUERY);
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
  await settle(page);
  const ref = await refP;

  await k.step('worker: progress, the best so far, a responsive page, the one-shot result', async () => {
    const before = await page.evaluate(() => window.__long.length);
    const t0 = Date.now();
    await searchRuns(page);
    const first = await progressDone(page);
    const text = await page.$eval('#search-panel .search-progress-text', (e) => e.textContent);
    k.check(/Searching in a worker · \d+% of the space/.test(text), 'progress: "' + text + '"');
    // the page answers while the worker searches: animation frames, a tab, the TP select
    const trips = await frameGaps(page, 10);
    const tabMs = await clickToFrame(page, '#tabs button[data-view="placement"]');
    const tabOk = await page.evaluate(() => document.querySelector('#tabs button[data-view="placement"]').getAttribute('aria-selected') === 'true');
    const tp = Date.now();
    await page.selectOption('[data-path="/plan/tp"] select', '4');
    await page.waitForFunction(() => window.__cutlab.state.plan.tp === 4, null, { timeout: 5000 });
    const tpMs = Date.now() - tp;
    const later = await page.evaluate(() => { const b = document.querySelector('#search-panel .search-progress progress'); return b ? [b.value, b.max] : null; });
    k.check(Math.max(...trips) < 200 && tabMs < 200 && tabOk, 'while searching: gaps between the page\'s frames ' + trips.join(', ') + ' ms, a tab click to its frame ' + tabMs.toFixed(0) + ' ms (< 200 ms)');
    k.check(tpMs < 1000, 'while searching: the TP select applied in ' + tpMs + ' ms (test side, with the redraw of 2,048 GPUs)');
    k.check(later && later[0] < later[1], 'the controls answered while the search was still running (' + first + ' → ' + (later && later[0]) + ' of ' + (later && later[1]) + ' items)');
    const partial = await page.$$eval('#search-panel table.search.partial tbody tr', (trs) => trs.length);
    k.check(partial > 0, 'the best plans so far are shown while it runs (' + partial + ' rows)');
    await searchDone(page);
    const wall = Date.now() - t0;
    sameAsCli(k, await rows(page), ref, 'worker');
    const runner = await page.$eval('#search-panel', (p) => p.dataset.runner);
    k.check(runner === 'worker', 'the search ran in a worker (' + runner + ')');
    const long = await page.evaluate((n) => window.__long.slice(n), before);
    const longest = long.reduce((m, x) => Math.max(m, x.ms), 0);
    k.log('longest task of the page during the search and the controls\' redraws: ' + longest.toFixed(0) + ' ms (' + long.length + ' long tasks)');
    const ms = await page.evaluate(() => window.__cutlab.perf.searchMs);
    k.log('worker: full result in ' + ms.toFixed(0) + ' ms (' + wall + ' ms from the click, test side); longest page task ' + longest.toFixed(0) + ' ms');
  });

  await k.step('Cancel stops the search and resets the button', async () => {
    await page.click('#find-plans');
    await page.waitForFunction(() => { const b = document.querySelector('#search-panel .search-progress progress'); return b && b.value >= 1; }, null, { timeout: 30000 });
    await page.click('#search-panel .cancel');
    await settle(page);
    const after = await page.evaluate(() => ({ enabled: !document.getElementById('find-plans').disabled, bar: !!document.querySelector('#search-panel .search-progress'),
      busy: /Searching/.test(document.querySelector('#search-panel').textContent) }));
    await page.waitForTimeout(400);
    const later = await page.evaluate(() => !!document.querySelector('#search-panel .search-progress'));
    k.check(after.enabled && !after.bar && !after.busy && !later, 'cancelled: the button is enabled, the bar gone, nothing more comes');
    // and a search after a cancel runs to the end again (a fresh worker); nothing else happens on
    // the page meanwhile, so its long tasks are the search's share of the page's thread
    const before = await page.evaluate(() => window.__long.length);
    await searchRuns(page);
    await searchDone(page);
    sameAsCli(k, await rows(page), ref, 'after a cancel');
    const long = await page.evaluate((n) => window.__long.slice(n), before);
    const longest = long.reduce((m, x) => Math.max(m, x.ms), 0);
    k.check(longest < 100, 'worker: the longest task of the page during the search: ' + longest.toFixed(0) + ' ms (' + long.length + ' over 50 ms)');
    k.noErrors(errors, 'worker search');
  });
}

async function onThePage(k) {
  const { fileBase } = await setup();
  const refP = cliSearch(ARGS);
  const { page, errors } = await k.open(null);
  await page.addInitScript(observeLongTasks);
  await page.goto(fileBase + QUERY);
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
  await settle(page);
  const ref = await refP;
  await k.step('file:// (no worker): the pieces run on the page between tasks', async () => {
    const before = await page.evaluate(() => window.__long.length);
    await searchRuns(page);
    const text = await page.$eval('#search-panel .search-progress-text', (e) => e.textContent);
    k.check(/Searching on this page, between frames · \d+% of the space/.test(text), 'progress: "' + text + '"');
    const trips = await frameGaps(page, 10);
    // the tab click draws the pipeline of 2,048 GPUs: a task of the view (tests/browser/cases/redraw.mjs
    // times the views), not a piece of the search; its window is left out of the pieces' tasks below
    const tabFrom = await page.evaluate(() => performance.now());
    const tabMs = await clickToFrame(page, '#tabs button[data-view="pipeline"]');
    const tabTo = await page.evaluate(() => performance.now());
    k.check(Math.max(...trips) < 200 && tabMs < 200, 'while searching on the page: gaps between the page\'s frames ' + trips.join(', ') + ' ms, a tab click to its frame ' + tabMs.toFixed(0) + ' ms (< 200 ms)');
    await searchDone(page);
    sameAsCli(k, await rows(page), ref, 'file://');
    k.check((await page.$eval('#search-panel', (p) => p.dataset.runner)) === 'page', 'the search ran on the page');
    const long = (await page.evaluate((n) => window.__long.slice(n), before)).filter((x) => x.start + x.ms < tabFrom || x.start > tabTo);
    const longest = long.reduce((m, x) => Math.max(m, x.ms), 0);
    const ms = await page.evaluate(() => window.__cutlab.perf.searchMs);
    k.check(longest < 200, 'longest task of the page during the search, the tab click\'s redraw left out: ' + longest.toFixed(0) + ' ms (' + long.length + ' over 50 ms; pieces of ~30 ms)');
    k.log('page: full result in ' + ms.toFixed(0) + ' ms; longest page task ' + longest.toFixed(0) + ' ms');
    await searchRuns(page);
    await page.click('#search-panel .cancel');
    await settle(page);
    k.check(!(await page.$('#search-panel .search-progress')) && !(await page.$eval('#find-plans', (b) => b.disabled)), 'Cancel on the page: the bar gone, the button enabled');
    k.noErrors(errors, 'search on the page');
  });
}

// A worker that fails to load (its script missing: a server without it, a policy that blocks it)
// reports an error event: the search goes on on the page, from the start, with the same result.
async function workerFails(k) {
  const { httpBase } = await setup();
  const args = ['--model', 'llama3-70b', '--cluster', 'dgx-h100', '--gpus', '64', '--seq-len', '8192', '--global-batch', '64', '--top', '10'];
  const refP = cliSearch(args);
  const { page, errors } = await k.open(null);
  await page.route((u) => u.pathname.endsWith('/search-worker.js'), (route) => route.fulfill({ status: 404, body: 'gone' }));
  await page.goto(httpBase + '?model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=2&seq_len=8192&global_batch=64');
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
  await settle(page);
  const ref = await refP;
  await k.step('a worker that cannot load: the search runs on the page instead', async () => {
    await page.click('#find-plans');
    await searchDone(page);
    sameAsCli(k, await rows(page), ref, 'worker missing');
    k.check((await page.$eval('#search-panel', (p) => p.dataset.runner)) === 'page', 'the search ran on the page');
    k.noErrors(errors.filter((e) => !/404|search-worker/.test(e)), 'worker missing');
  });
}

export default [
  { name: 'search when the worker cannot load: on the page, the same result', weight: 1, run: workerFails },
  { name: 'search in a worker: progress, responsive page, cancel, one-shot result', weight: 3, alone: true, run: inWorker },
  { name: 'search on the page (file://): progress, responsive, cancel', weight: 3, alone: true, run: onThePage },
];
