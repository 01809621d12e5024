// "Find the best plans" (Llama 3 70B on 64 H100) calls the core's search() once, on the click, and
// lists `cutlab search --json`'s plans; a row click applies its plan (controls, URL, headline and
// tables = `cutlab evaluate` of that plan); back un-applies it; a changed config marks the table
// outdated and "Search again" ranks for the new one; serve mode runs the serving search; a cluster
// where nothing fits says so.
import { execFileSync } from 'node:child_process';
import { setup, select, fill, click, back, settle, cliSearch, cliEvaluate, compareTables, shot, cli } from '../lib.mjs';

const searchRows = (page) => page.$$eval('#search-panel tbody tr[data-i]', (trs) => trs.map((tr) => Object.assign({ current: tr.classList.contains('current') },
  Object.fromEntries(Array.from(tr.querySelectorAll('td[data-k]')).map((td) => [td.dataset.k, { v: td.dataset.v, t: td.textContent }])))));
// The schedule's label from the CLI's choice table (`cutlab presets --json`), and its chunks.
const SCHEDULES = JSON.parse(execFileSync(cli, ['presets', '--json'], { encoding: 'utf8' })).result.choices.schedule;
const SCHEDULE_TEXT = (p) => SCHEDULES.find((c) => c.name === p.schedule).label + (p.vpp > 1 ? ' v' + p.vpp : '');
const argsFor = (gb) => ['--model', 'llama3-70b', '--cluster', 'dgx-h100', '--gpus', '64', '--seq-len', '8192', '--global-batch', String(gb), '--top', '10'];
// the search has run and its result is drawn (the button is enabled again once it has)
async function searched(page) {
  await page.waitForFunction(() => !document.getElementById('find-plans').disabled &&
    !document.querySelector('#search-panel table.outdated') && document.querySelector('#search-panel tbody tr[data-i]'), null, { timeout: 30000 });
  await settle(page);
}

async function bestPlans(k, base) {
  const args = argsFor(64);
  const refP = cliSearch(args);
  const ref128P = cliSearch(argsFor(128));
  const q = new URLSearchParams({ model: 'llama3-70b', cluster: 'dgx-h100', gpus: '64', tp: '8', pp: '2', sp: 'true', recompute: 'full', seq_len: '8192', global_batch: '64' });
  const { page, errors } = await k.open(base + '?' + q.toString());
  const ref = await refP;
  let rows = null;

  await k.step('the click searches; rows = `cutlab search --json`', async () => {
    k.check(ref && ref.best.length === 10 && ref.fitting > 0, 'search: `cutlab search ' + args.join(' ') + ' --json` ranks ' + (ref && ref.best.length) + ' plans');
    if (!ref) throw new Error('cutlab search failed');
    k.check((await page.$eval('#search-panel', (p) => p.hidden)) && (await page.evaluate(() => window.__cutlab.perf.searchMs)) === null, 'search: nothing is searched before the click');
    await click(page, '#find-plans');
    await searched(page);
    const ms = await page.evaluate(() => window.__cutlab.perf.searchMs);
    k.log('search(): Llama 3 70B on 64 × H100, seq 8,192, global batch 64: ' + ms.toFixed(0) + ' ms in Chromium (WASM), ' + ref.candidates + ' plans enumerated');
    rows = await searchRows(page);
    const f = await page.evaluate((best) => best.map((b) => ({ tps: window.CL.fmt.int(b.tokens_per_s), step: window.CL.fmt.seconds(b.step_s), mfu: window.CL.fmt.pct(b.mfu) })), ref.best);
    const b0 = ref.best[0], r0 = rows[0];
    k.check(rows.length === ref.best.length, 'search: ' + rows.length + ' rows, as many as the CLI\'s');
    k.check(r0 && Number(r0.tp.v) === b0.plan.tp && r0.tp.t === String(b0.plan.tp) && Number(r0.pp.v) === b0.plan.pp && r0.pp.t === String(b0.plan.pp) &&
      r0.schedule.v === b0.plan.schedule && r0.schedule.t === SCHEDULE_TEXT(b0.plan) && Number(r0.micro_batch.v) === b0.plan.micro_batch &&
      r0.recompute.t === b0.plan.recompute && Number(r0.tokens_per_s.v) === b0.tokens_per_s && r0.tokens_per_s.t === f[0].tps,
    'search: row 1 = the CLI\'s best plan: TP ' + b0.plan.tp + ' PP ' + b0.plan.pp + ' ' + SCHEDULE_TEXT(b0.plan) + ', micro-batch ' + b0.plan.micro_batch + ', recompute ' +
      b0.plan.recompute + ', ' + f[0].tps + ' tokens/s (page: "' + (r0 && r0.tokens_per_s.t) + '")');
    k.check(rows.length === ref.best.length && rows.every((r, i) => Number(r.tokens_per_s.v) === ref.best[i].tokens_per_s && Number(r.step_s.v) === ref.best[i].step_s && r.step_s.t === f[i].step &&
      Number(r.mfu.v) === ref.best[i].mfu && r.mfu.t === f[i].mfu && Number(r.dp.v) === ref.best[i].plan.dp && r.fits.v === String(ref.best[i].fits)),
    'search: every row\'s step time, tokens/s, MFU, DP and fit = the CLI\'s, in its order');
    const counts = await page.$eval('#search-panel .search-counts', (e) => e.textContent);
    // The plans enumerated and valid are the CLI's; how many were simulated depends on the step-time
    // bound, which the page's pieces tighten as they go (search-run.js) and the CLI takes from a seed.
    const want = await page.evaluate((r) => [r.candidates, r.valid].map((x) => window.CL.fmt.int(x)), ref);
    // The page says how many the bound skipped, so that simulated + skipped = valid, as in the CLI.
    const m = /^([\d,]+) plans enumerated, ([\d,]+) valid, ([\d,]+) simulated(?: \(([\d,]+) more could not beat the best found\))?, ([\d,]+) of them fit/.exec(counts);
    const num = (t) => Number((t || '0').replace(/,/g, ''));
    k.check(m && m[1] === want[0] && m[2] === want[1] && num(m[3]) + num(m[4]) === ref.valid && num(m[5]) >= ref.best.length, 'search: counts "' + counts + '"');
    k.check(rows.every((r) => !r.current), 'search: no row marked current (TP8 PP2 with full recompute is not among them)');
    await page.screenshot({ path: shot('search-llama3-70b-64.png') });
  });

  await k.step('a row click applies its plan; back un-applies it', async () => {
    // pick the first (after the best) with another TP or PP
    let pick = ref.best.findIndex((b, i) => i > 0 && (b.plan.tp !== 8 || b.plan.pp !== 2));
    if (pick < 0) pick = 1;
    const bp = ref.best[pick], pp = bp.plan;
    const sent = { tp: pp.tp, pp: pp.pp, cp: pp.cp, ep: pp.ep, sp: pp.sp, zero: pp.zero, distributed_optimizer: pp.distributed_optimizer, recompute: pp.recompute,
      schedule: pp.schedule, micro_batch: pp.micro_batch, tp_comm_overlap: pp.tp_comm_overlap, overlap_grad_reduce: pp.overlap_grad_reduce, overlap_param_gather: pp.overlap_param_gather };
    if (pp.schedule === 'interleaved') sent.vpp = pp.vpp;
    if (pp.recompute === 'selective') sent.recompute_modules = pp.recompute_modules;
    const evP = cliEvaluate({ model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 64 }, plan: sent, workload: { seq_len: 8192, global_batch: 64 } });
    await click(page, '#search-panel tbody tr[data-i="' + pick + '"]');
    const got = await page.evaluate(() => {
      const v = (p) => { const el = document.querySelector('[data-path="' + p + '"] select, [data-path="' + p + '"] input'); return el.type === 'checkbox' ? el.checked : el.value; };
      return { url: location.href, gpus: window.__cutlab.state.gpus, plan: window.__cutlab.derived.cfg.plan, ok: window.__cutlab.derived.ok,
        c: { tp: v('/plan/tp'), pp: v('/plan/pp'), cp: v('/plan/cp'), dp: v('/plan/dp'), schedule: v('/plan/schedule'), vpp: v('/plan/vpp'), micro_batch: v('/plan/micro_batch'),
          recompute: v('/plan/recompute'), sp: v('/plan/sp'), distributed_optimizer: v('/plan/distributed_optimizer'), gpus: v('/cluster/gpus') } };
    });
    const ev = await evP;
    k.check(ev.status === 0 && ev.json.time.step_s === bp.step_s && ev.json.throughput.tokens_per_s === bp.tokens_per_s,
      'search: `cutlab evaluate` of row ' + (pick + 1) + ' gives its step time and tokens/s');
    const keys = Object.keys(sent);
    k.check(got.ok && got.gpus === 64 && keys.every((key) => JSON.stringify(got.plan[key]) === JSON.stringify(sent[key])), 'search: clicking row ' + (pick + 1) + ' sends plan ' + JSON.stringify(got.plan));
    const c = got.c;
    k.check(c.tp === String(pp.tp) && c.pp === String(pp.pp) && c.cp === String(pp.cp) && c.dp === String(pp.dp) && c.schedule === pp.schedule && c.vpp === String(pp.vpp) &&
      c.micro_batch === String(pp.micro_batch) && c.recompute === pp.recompute && c.sp === pp.sp && c.distributed_optimizer === pp.distributed_optimizer && c.gpus === '64',
    'search: the controls show the plan ' + JSON.stringify(c));
    const u = new URL(got.url).searchParams;
    k.check(u.get('tp') === String(pp.tp) && u.get('pp') === String(pp.pp) && u.get('schedule') === pp.schedule, 'search: the URL holds the plan (' + got.url.slice(got.url.indexOf('?')) + ')');
    if (ev.status === 0) {
      const head = await page.$eval('#headline', (e) => e.textContent);
      const hf = await page.evaluate((r) => [window.CL.fmt.seconds(r.time.step_s), window.CL.fmt.pct(r.mfu), window.CL.fmt.short(r.throughput.tokens_per_s)], ev.json);
      k.check(hf.every((x) => head.includes(x)), 'search: the headline shows the applied plan: step ' + hf[0] + ', MFU ' + hf[1] + ', ' + hf[2] + ' tokens/s');
      await compareTables(k, page, ev.json, 'search: row ' + (pick + 1) + ' applied');
    }
    const after = await searchRows(page);
    k.check(after.length === rows.length && after.filter((r) => r.current).length === 1 && after[pick].current, 'search: row ' + (pick + 1) + ' is now marked as the current plan');
    await page.screenshot({ path: shot('search-applied.png') });
    // back: the previous plan, no row current
    await back(page);
    const was = await page.evaluate(() => ({ tp: window.__cutlab.state.plan.tp, pp: window.__cutlab.state.plan.pp, rc: window.__cutlab.state.plan.recompute }));
    k.check(was.tp === 8 && was.pp === 2 && was.rc === 'full' && (await searchRows(page)).every((r) => !r.current), 'search: back returns to TP8 PP2 (full recompute), no row current');
  });

  await k.step('a changed config marks the table outdated; "Search again"', async () => {
    // another workload: the table is marked outdated, its rows do nothing; search again ranks for the new one
    await fill(page, '/workload/global_batch', 128);
    const stale = await page.evaluate(() => ({ outdated: !!document.querySelector('#search-panel table.outdated'), msg: document.querySelector('#search-panel .search-msg') ? document.querySelector('#search-panel .search-msg').textContent : '' }));
    k.check(stale.outdated && /changed since this search/.test(stale.msg), 'search: a new global batch marks the table outdated');
    const urlBefore = page.url();
    await click(page, '#search-panel tbody tr[data-i="0"]');
    k.check(page.url() === urlBefore && (await page.evaluate(() => window.__cutlab.state.workload.global_batch)) === 128, 'search: an outdated row does not apply');
    const ref128 = await ref128P;
    await click(page, '#search-panel .again');
    await searched(page);
    const again = await searchRows(page);
    k.check(ref128 && again.length === ref128.best.length && again.every((r, i) => Number(r.tokens_per_s.v) === ref128.best[i].tokens_per_s),
      'search: "Search again" ranks for global batch 128 (= `cutlab search --global-batch 128`)');
  });

  await k.step('serve mode: the training table is outdated and the button runs the serving search', async () => {
    await select(page, '/workload/mode', 'infer');
    const stale = await page.evaluate(() => !!document.querySelector('#search-panel table.outdated'));
    k.check(stale, 'search: switching to serve mode marks the training table outdated');
    await click(page, '#find-plans');
    await page.waitForFunction(() => !document.getElementById('find-plans').disabled && document.querySelector('#search-panel canvas.pareto'), null, { timeout: 30000 });
    await settle(page);
    const serveMsg = await page.$eval('#search-panel', (p) => p.textContent);
    k.check(!/ranks training plans/.test(serveMsg) && /Best serving plans/.test(serveMsg) && !!(await page.$('#search-panel tbody tr[data-set="best"]')),
      'search: the button in serve mode ranks serving plans (cases/serving_search.mjs checks them against the CLI)');
    await page.screenshot({ path: shot('search-serve.png') });
    k.noErrors(errors, 'search');
  });
}

// nothing fits: Llama 3 405B on 8 GPUs lists the plans closest to fitting
async function noneFits(k, base) {
  const ref8P = cliSearch(['--model', 'llama3-405b', '--cluster', 'dgx-h100', '--gpus', '8', '--seq-len', '8192', '--global-batch', '64', '--top', '10']);
  const { page, errors } = await k.open(base + '?model=llama3-405b&cluster=dgx-h100&gpus=8&tp=8&sp=true&seq_len=8192&global_batch=64');
  await click(page, '#find-plans');
  await searched(page);
  const nr = await searchRows(page);
  const msg = await page.$eval('#search-panel', (p) => p.textContent);
  const ref8 = await ref8P;
  k.check(ref8 && ref8.fitting === 0 && nr.length === ref8.best.length && nr.every((r, i) => r.fits.t === 'does not fit' && Number(r.peak_memory_bytes.v) === ref8.best[i].peak_memory_bytes) &&
    /No plan fits in memory/.test(msg), 'search: nothing fits 405B on 8 GPUs: the ' + nr.length + ' plans closest to fitting, each marked "does not fit"');
  await page.screenshot({ path: shot('search-none-fits.png') });
  k.noErrors(errors, 'search (none fits)');
}

export default [
  { name: 'search: find the best plans, apply a row, outdated table, serve mode', weight: 9, run: async (k) => bestPlans(k, (await setup()).fileBase) },
  { name: 'search: nothing fits (405B on 8 GPUs)', weight: 2, run: async (k) => noneFits(k, (await setup()).fileBase) },
];
