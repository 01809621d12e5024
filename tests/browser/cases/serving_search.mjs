// "Find the best plans" in serve mode (Llama 3 70B on 8 H100, prompt 2,048, output 512): the click
// runs the core's servingSearch() once; the best rows and the Pareto front = `cutlab search --mode
// infer --json`; a TPOT limit typed in the panel searches again (= `--max-tpot-ms 20`); a click on a
// point of the plot applies its plan and batch (= `cutlab evaluate` of that config); the panel at
// 390 px keeps the plot inside the screen; at a request rate the fewest GPUs rank first.
import { setup, click, settle, cliSearch, cliEvaluate, shot } from '../lib.mjs';

const ARGS = ['--model', 'llama3-70b', '--cluster', 'dgx-h100', '--gpus', '8', '--mode', 'infer', '--prompt-len', '2048', '--output-len', '512', '--top', '10'];
const QUERY = '?model=llama3-70b&cluster=dgx-h100&gpus=8&tp=8&mode=infer&batch=16&prompt_len=2048&output_len=512';
const rows = (page, set) => page.$$eval('#search-panel tbody tr[data-set="' + set + '"]', (trs) => trs.map((tr) => Object.assign({ current: tr.classList.contains('current') },
  Object.fromEntries(Array.from(tr.querySelectorAll('td[data-k]')).map((td) => [td.dataset.k, { v: td.dataset.v, t: td.textContent }])))));
async function searched(page) {
  await page.waitForFunction(() => !document.getElementById('find-plans').disabled && !document.querySelector('#search-panel table.outdated') &&
    document.querySelector('#search-panel canvas.pareto'), null, { timeout: 30000 });
  await settle(page);
}
const same = (r, p) => r && Number(r.tp.v) === p.plan.tp && Number(r.pp.v) === p.plan.pp && Number(r.ep.v) === p.plan.ep && Number(r.dp.v) === p.plan.dp &&
  Number(r.batch.v) === p.batch && Number(r.output_tokens_per_s_per_gpu.v) === p.output_tokens_per_s_per_gpu && Number(r.tpot_s.v) === p.tpot_s;

async function servingSearch(k, base) {
  const refP = cliSearch(ARGS);
  const ref20P = cliSearch([...ARGS, '--max-tpot-ms', '20']);
  const { page, errors } = await k.open(base + QUERY);
  const ref = await refP;

  await k.step('the click runs the serving search; rows and front = `cutlab search --mode infer --json`', async () => {
    if (!k.check(ref && ref.best.length === 10 && ref.front.length > 1, 'serving search: the CLI ranks 10 plans and a front of ' + (ref && ref.front.length))) return;
    await click(page, '#find-plans');
    await searched(page);
    const best = await rows(page, 'best'), front = await rows(page, 'front');
    k.check(best.length === 10 && best.every((r, i) => same(r, ref.best[i])), 'serving search: the 10 best rows (plan, batch, tokens/s per GPU, TPOT) = the CLI\'s, in its order');
    k.check(front.length === ref.front.length && front.every((r, i) => same(r, ref.front[i])), 'serving search: the ' + front.length + ' front rows = the CLI\'s front');
    const text = await page.$eval('#search-panel', (p) => p.textContent);
    k.check(!/ranks training plans/.test(text) && /Best serving plans/.test(text), 'serving search: no "ranks training plans" message; the panel says "Best serving plans"');
    const plot = await page.evaluate(() => {
      const box = document.querySelector('#search-panel canvas.pareto').getBoundingClientRect();
      return { w: box.width, h: box.height, panel: document.getElementById('search-panel').getBoundingClientRect().width };
    });
    k.check(plot.w > 600 && plot.w <= plot.panel && plot.h > 200, 'serving search: the Pareto plot is drawn ' + Math.round(plot.w) + ' × ' + Math.round(plot.h) + ' px inside the panel');
    k.check(best.some((r) => r.current) || !ref.best.some((p) => p.plan.tp === 8 && p.plan.pp === 1 && p.batch === 16), 'serving search: the current plan (TP 8, batch 16) is marked when listed');
    await page.screenshot({ path: shot('search-serving-1280.png'), fullPage: true });
  });

  await k.step('a TPOT limit searches again (= --max-tpot-ms 20)', async () => {
    const ref20 = await ref20P;
    await page.fill('#search-panel input[data-lim="tpot"]', '20');
    await page.$eval('#search-panel input[data-lim="tpot"]', (i) => i.dispatchEvent(new Event('change', { bubbles: true })));
    await page.waitForFunction(() => document.querySelector('#search-panel .search-counts') && document.querySelector('#search-panel .search-counts').dataset.within !== undefined &&
      document.querySelector('#search-panel input[data-lim="tpot"]').value === '20' && !document.getElementById('find-plans').disabled, null, { timeout: 30000 });
    await searched(page);
    const best = await rows(page, 'best');
    const within = await page.$eval('#search-panel .search-counts', (e) => Number(e.dataset.within));
    k.check(ref20 && within === ref20.within_limits && best.length === ref20.best.length && best.every((r, i) => same(r, ref20.best[i]) && Number(r.tpot_s.v) <= 0.020),
      'serving search: under TPOT ≤ 20 ms, ' + within + ' points within the limits and the rows = the CLI\'s, each TPOT ≤ 20 ms');
  });

  await k.step('a click on a point of the front applies its plan and batch', async () => {
    const ref20 = await ref20P;
    const i = Math.min(1, ref20.front.length - 1);
    const pt = ref20.front[i];
    // the dot where the core's figure (the answer the page drew) put front point i
    const { box, f } = await page.evaluate(() => ({ box: document.querySelector('#search-panel canvas.pareto').getBoundingClientRect().toJSON(),
      f: window.__cutlab.found.out.result.figure }));
    const r = f.rects.find((x) => x.hit === 'point' && x.begin === i);
    if (!k.check(!!r, 'serving search: the plot has a dot for front point ' + (i + 1))) return;
    const scale = box.width / f.width;
    await page.mouse.click(box.x + (r.x + r.w / 2) * scale, box.y + (r.y + r.h / 2) * scale);
    await settle(page);
    const got = await page.evaluate(() => ({ cfg: window.__cutlab.derived.cfg, ok: window.__cutlab.derived.ok, r: window.__cutlab.derived.r }));
    const ev = await cliEvaluate(got.cfg);
    k.check(got.ok && got.cfg.plan.tp === pt.plan.tp && (got.cfg.plan.pp || 1) === pt.plan.pp && got.cfg.workload.batch === pt.batch && got.cfg.cluster.gpus === 8,
      'serving search: clicking point ' + (i + 1) + ' sets TP ' + pt.plan.tp + ', PP ' + pt.plan.pp + ', batch ' + pt.batch + ' on 8 GPUs');
    k.check(ev.status === 0 && ev.json.inference.output_tokens_per_s_per_gpu === pt.output_tokens_per_s_per_gpu && got.r.inference.output_tokens_per_s_per_gpu === pt.output_tokens_per_s_per_gpu,
      'serving search: the page and `cutlab evaluate` of the applied config give the point\'s ' + pt.output_tokens_per_s_per_gpu.toFixed(1) + ' tokens/s per GPU');
    k.noErrors(errors, 'serving search');
  });
}

// The panel on a phone: the plot laid out for the panel's width, nothing wider than the screen.
async function narrow(k, base) {
  const { page, errors } = await k.open(base + QUERY, { width: 390, height: 844 });
  await click(page, '#find-plans');
  await searched(page);
  const m = await page.evaluate(() => {
    const c = document.querySelector('#search-panel canvas.pareto').getBoundingClientRect();
    return { right: c.right, width: c.width, vw: document.documentElement.clientWidth };
  });
  k.check(m.right <= m.vw + 1 && m.width >= 280, 'serving search at 390 px: the plot (' + Math.round(m.width) + ' px) fits the screen (' + m.vw + ' px)');
  await page.$eval('#search-panel', (p) => { p.scrollIntoView(); window.scrollBy(0, -document.querySelector('header').getBoundingClientRect().height - 8); });
  await page.screenshot({ path: shot('search-serving-390.png') });
  // with the disaggregated deployments: their table scrolls inside the panel, the plot still fits
  await page.check('#search-panel input[data-dis]');
  await page.waitForFunction(() => document.querySelector('#search-panel table.disaggregated') && !document.getElementById('find-plans').disabled, null, { timeout: 30000 });
  await searched(page);
  const d = await page.evaluate(() => ({ canvas: document.querySelector('#search-panel canvas.pareto').getBoundingClientRect().right,
    scroll: document.querySelector('#search-panel table.disaggregated').closest('.scroll').getBoundingClientRect().right, vw: document.documentElement.clientWidth,
    page: document.documentElement.scrollWidth }));
  k.check(d.canvas <= d.vw + 1 && d.scroll <= d.vw + 1 && d.page <= d.vw + 1, 'serving search at 390 px: with the disaggregated deployments the plot and their table stay inside the screen (' + d.vw + ' px)');
  await page.$eval('#search-panel table.disaggregated', (t) => { t.scrollIntoView(); window.scrollBy(0, -document.querySelector('header').getBoundingClientRect().height - 40); });
  await page.screenshot({ path: shot('search-disaggregated-390.png') });
  k.noErrors(errors, 'serving search (390 px)');
}

// "Disaggregated deployments too": the same search with the prefill/decode deployments; their rows
// = `cutlab search --disaggregated --json`, their front dots in the plot, and a row's click opens its
// pools in the Disaggregate panel (the link's dis.* keys).
async function disaggregated(k, base) {
  const refP = cliSearch([...ARGS, '--max-tpot-ms', '20', '--disaggregated']);
  const { page, errors } = await k.open(base + QUERY);
  await click(page, '#find-plans');
  await searched(page);
  await page.fill('#search-panel input[data-lim="tpot"]', '20');
  await page.$eval('#search-panel input[data-lim="tpot"]', (i) => i.dispatchEvent(new Event('change', { bubbles: true })));
  await searched(page);
  await page.check('#search-panel input[data-dis]');
  await page.waitForFunction(() => document.querySelector('#search-panel table.disaggregated') && !document.getElementById('find-plans').disabled, null, { timeout: 30000 });
  await searched(page);
  const ref = (await refP).disaggregated;
  await k.step('the disaggregated rows and front = `cutlab search --disaggregated --json`', async () => {
    const got = await rows(page, 'dbest');
    k.check(ref && ref.best.length > 1 && got.length === ref.best.length && got.every((r, i) => Number(r.output_tokens_per_s_per_gpu.v) === ref.best[i].output_tokens_per_s_per_gpu &&
      Number(r.tpot_s.v) === ref.best[i].tpot_s && Number(r.ttft_s.v) === ref.best[i].ttft_s && Number(r.tpot_s.v) <= 0.020),
    'disaggregated search: ' + got.length + ' rows = the CLI\'s ' + (ref && ref.best.length) + ' (tokens/s per GPU, TTFT, TPOT ≤ 20 ms), in its order');
    const f = await page.evaluate(() => window.__cutlab.found.out.result.figure);
    const dots = f.rects.filter((x) => x.hit === 'disaggregated').length;
    k.check(dots === ref.front.length && f.texts.some((t) => t.kind === 'legend' && /disaggregated/.test(t.text)),
      'disaggregated search: the plot has the ' + dots + ' dots of the CLI\'s front of ' + ref.front.length + ' and a legend naming it');
    await page.locator('#search-panel').screenshot({ path: shot('search-disaggregated-1280.png') });
  });
  await k.step('a deployment\'s row opens its pools in the Disaggregate panel', async () => {
    const b = ref.best[0];
    await click(page, '#search-panel tr[data-set="dbest"][data-i="0"]');
    await page.waitForFunction(() => document.getElementById('disagg').open && /Deployment/.test(document.getElementById('disagg').textContent), null, { timeout: 30000 });
    await settle(page);
    // brought into view below the sticky header, its title not under it
    const seen = await page.evaluate(() => ({ top: document.getElementById('disagg').getBoundingClientRect().top,
      header: document.getElementById('top').getBoundingClientRect().bottom, vh: window.innerHeight }));
    k.check(seen.top >= seen.header - 1 && seen.top < seen.vh / 2,
      'disaggregated search: the Disaggregate panel is brought into view below the header (its top at ' + Math.round(seen.top) + ' px, the header\'s bottom at ' + Math.round(seen.header) + ')');
    const url = new URL(page.url());
    const q = (k2) => Number(url.searchParams.get(k2));
    k.check(q('dis.p.gpus') === b.prefill_gpus && q('dis.p.tp') === b.prefill_plan.tp && q('dis.p.batch') === b.prefill_batch && q('dis.d.gpus') === b.decode_gpus &&
      q('dis.d.tp') === b.decode_plan.tp && q('dis.d.batch') === b.decode_batch,
    'disaggregated search: the link holds the pools (' + b.prefill_gpus + ' GPUs at TP ' + b.prefill_plan.tp + ' → ' + b.decode_gpus + ' at TP ' + b.decode_plan.tp + ', batch ' + b.decode_batch + ')');
    const text = await page.$eval('#disagg', (d) => d.textContent.replace(/\s+/g, ' '));
    k.check(text.includes('Deployment of ' + b.prefill_gpus + ' + ' + b.decode_gpus + ' GPUs'), 'disaggregated search: the panel evaluates the deployment of ' + b.prefill_gpus + ' + ' + b.decode_gpus + ' GPUs');
    const want = await page.evaluate((x) => 'TTFT ' + window.CL.fmt.seconds(x.ttft_s) + ' (prefill + transfer) · TPOT ' + window.CL.fmt.seconds(x.tpot_s) + ' at this rate', b).then((t) => t.replace(/\s+/g, ' '));
    k.check(text.includes(want) && /sequences in flight per copy/.test(text),
      'disaggregated search: the panel gives the row\'s "' + want + '", with the sequences in flight');
    k.noErrors(errors, 'disaggregated search');
  });
  await k.step('the decode pool on another system (a pool\'s own cluster) = `cutlab evaluate` of that section', async () => {
    const b = ref.best[0];
    const axes = (p) => ({ tp: p.tp, pp: p.pp, ep: p.ep });
    const refD = await cliEvaluate({ model: 'llama3-70b', cluster: 'dgx-h100', plan: { tp: 8 }, workload: { mode: 'infer', batch: 16, prompt_len: 2048, output_len: 512 },
      disaggregation: { prefill: { gpus: b.prefill_gpus, plan: axes(b.prefill_plan), batch: b.prefill_batch },
        decode: { gpus: b.decode_gpus, plan: axes(b.decode_plan), batch: b.decode_batch, cluster: 'hgx-h200' } } });
    await page.selectOption('#disagg fieldset[data-pool="decode"] select[data-key="cluster"]', 'hgx-h200');
    await page.waitForFunction(() => /Pools on different systems/.test(document.getElementById('disagg').textContent), null, { timeout: 30000 });
    await settle(page);
    const text = await page.$eval('#disagg', (d) => d.textContent.replace(/\s+/g, ' '));
    const r = refD.status === 0 ? refD.json : null;
    const want = r ? await page.evaluate((x) => ('TTFT ' + window.CL.fmt.seconds(x.ttft_s) + ' (prefill + transfer) · TPOT ' + window.CL.fmt.seconds(x.tpot_s)).replace(/\s+/g, ' '), r) : '?';
    k.check(refD.status === 0 && r && !r.same_cluster && text.includes(want) && text.includes('on hgx-h200') && new URL(page.url()).searchParams.get('dis.d.cluster') === 'hgx-h200',
      'disaggregated search: decode on hgx-h200 gives the CLI\'s "' + want + '", names the system and puts dis.d.cluster in the link');
    await page.locator('#disagg').screenshot({ path: shot('disagg-panel-1280.png') });
    k.noErrors(errors, 'disaggregated search, decode on another system');
  });
  await k.step('an offline run of N requests cannot be served disaggregated: the reason, at its path, as text', async () => {
    const { page: p2, errors: e2 } = await k.open(base + QUERY + '&num_requests=100');
    await click(p2, '#find-plans');
    await searched(p2);
    await p2.check('#search-panel input[data-dis]');
    await p2.waitForFunction(() => /cannot be served disaggregated/.test(document.getElementById('search-panel').textContent) && !document.getElementById('find-plans').disabled,
      null, { timeout: 30000 });
    const li = await p2.$$eval('#search-panel ul.search-errors li', (ls) => ls.map((l) => l.textContent));
    k.check(li.length === 1 && li[0].startsWith('/workload/num_requests') && (await p2.$$('#search-panel table.serving')).length > 0,
      'disaggregated search: the co-located plans stay, and the disaggregated part says ' + JSON.stringify(li[0]));
    k.noErrors(e2, 'disaggregated search (num_requests)');
  });
}

// At a request rate (20 requests/s of Llama 3 8B, 1024/256, on up to 8 H100) the plans that keep up
// serve the same tokens/s, so the search ranks the fewest GPUs first (the rest idle): the rows, with
// their GPUs, = `cutlab search --request-rate 20 --json`; a row applied runs on its own GPUs and the
// results stay live; searching again from there searches the 8 again; the disaggregated deployments at
// the rate rank the same way (= `cutlab search --disaggregated`).
async function atRate(k, base) {
  const refP = cliSearch(['--model', 'llama3-8b', '--cluster', 'dgx-h100', '--gpus', '8', '--mode', 'infer', '--prompt-len', '1024', '--output-len', '256',
    '--request-rate', '20', '--top', '10']);
  const { page, errors } = await k.open(base + '?model=llama3-8b&cluster=dgx-h100&gpus=8&tp=8&mode=infer&batch=16&prompt_len=1024&output_len=256&request_rate_per_s=20');
  const ref = await refP;
  await click(page, '#find-plans');
  await searched(page);
  const best = await rows(page, 'best');
  const head = await page.$eval('#search-panel', (p) => p.textContent.replace(/\s+/g, ' '));
  if (!k.check(ref && ref.gpus === 8 && ref.best.length === 10 && ref.best[0].gpus < 8, 'serving search at a rate: the CLI\'s best uses ' + (ref && ref.best[0].gpus) + ' of 8 GPUs')) return;
  k.check(best.length === 10 && best.every((r, i) => same(r, ref.best[i]) && Number(r.gpus.v) === ref.best[i].gpus),
    'serving search at a rate: the 10 rows (plan, GPUs, batch, tokens/s per GPU, TPOT) = the CLI\'s, in its order');
  k.check(/Fewest GPUs that serve 20\.0 requests\/s \(of 8, the rest idle/.test(head), 'serving search at a rate: the heading says the fewest GPUs of 8 rank first');
  await page.locator('#search-panel').screenshot({ path: shot('search-serving-rate-1280.png') });
  const b = ref.best[0];
  await click(page, '#search-panel tr[data-set="best"][data-i="0"]');
  const got = await page.evaluate(() => ({ cfg: window.__cutlab.derived.cfg, ok: window.__cutlab.derived.ok, r: window.__cutlab.derived.r }));
  const ev = await cliEvaluate(got.cfg);
  k.check(got.ok && got.cfg.cluster.gpus === b.gpus && got.cfg.plan.tp === b.plan.tp && got.cfg.workload.batch === b.batch && ev.status === 0 &&
    ev.json.inference.output_tokens_per_s_per_gpu === b.output_tokens_per_s_per_gpu && got.r.inference.output_tokens_per_s_per_gpu === b.output_tokens_per_s_per_gpu,
  'serving search at a rate: the first row applied runs TP ' + b.plan.tp + ' × DP ' + b.plan.dp + ' on ' + b.gpus + ' GPUs, ' + b.output_tokens_per_s_per_gpu.toFixed(1) +
    ' tokens/s per GPU as `cutlab evaluate` gives');
  const live = await page.evaluate(() => ({ outdated: !!document.querySelector('#search-panel table.outdated'),
    current: !!document.querySelector('#search-panel tr[data-set="best"][data-i="0"].current') }));
  k.check(!live.outdated && live.current, 'serving search at a rate: after the row is applied the results stay live and mark it current');
  const before = await page.$eval('#search-panel .search-counts', (e) => e.dataset.candidates);
  await click(page, '#find-plans');
  await searched(page);
  const again = await page.evaluate(() => ({ n: document.querySelector('#search-panel .search-counts').dataset.candidates, gpus: window.__cutlab.found.out.result.gpus }));
  k.check(again.gpus === 8 && again.n === before, 'serving search at a rate: searching again from the applied plan searches the 8 GPUs again (' + again.n + ' plans × batches, as before)');
  // the disaggregated deployments at the rate: the fewest GPUs first, as the CLI ranks them
  const disP = cliSearch(['--model', 'llama3-8b', '--cluster', 'dgx-h100', '--gpus', '8', '--mode', 'infer', '--prompt-len', '1024', '--output-len', '256',
    '--request-rate', '20', '--top', '10', '--disaggregated']);
  await page.check('#search-panel input[data-dis]');
  await page.waitForFunction(() => document.querySelector('#search-panel table.disaggregated') && !document.getElementById('find-plans').disabled, null, { timeout: 30000 });
  await searched(page);
  const dis = (await disP).disaggregated;
  const drows = await rows(page, 'dbest');
  const foot = await page.$eval('#search-panel', (p) => p.textContent.replace(/\s+/g, ' '));
  k.check(dis && dis.best.length > 1 && drows.length === dis.best.length && drows.every((r, i) => Number(r.output_tokens_per_s_per_gpu.v) === dis.best[i].output_tokens_per_s_per_gpu &&
    Number(r.gpus.v) === dis.best[i].prefill_gpus + dis.best[i].decode_gpus && Number(r.ttft_s.v) === dis.best[i].ttft_s) &&
    dis.best.every((b, i) => i === 0 || b.prefill_gpus + b.decode_gpus >= dis.best[i - 1].prefill_gpus + dis.best[i - 1].decode_gpus) && /over the GPUs each uses/.test(foot),
  'serving search at a rate: the ' + drows.length + ' disaggregated rows = the CLI\'s, the fewest GPUs first (' + (dis && dis.best[0].prefill_gpus) + ' + ' + (dis && dis.best[0].decode_gpus) + ')');
  await page.locator('#search-panel').screenshot({ path: shot('search-disaggregated-rate-1280.png') });
  k.noErrors(errors, 'serving search at a rate');
}

export default [
  { name: 'serving search at a request rate: the fewest GPUs first, a row applied on its GPUs', weight: 2, run: async (k) => atRate(k, (await setup()).fileBase) },
  { name: 'serving search: ranked plans and front = CLI, TPOT limit, a point applied', weight: 4, run: async (k) => servingSearch(k, (await setup()).fileBase) },
  { name: 'serving search: the plot at 390 px', weight: 1, run: async (k) => narrow(k, (await setup()).fileBase) },
  { name: 'serving search: disaggregated deployments = CLI, a row opens its pools', weight: 3, run: async (k) => disaggregated(k, (await setup()).fileBase) },
];
