// The page from file:// and from a local http server: it loads cleanly; TP = 8 and PP = 2 set
// through the controls give tables holding exactly the CLI's numbers; every view draws and the
// placement view asks the core once for what its GPUs hold (GPU 9 hovered and opened); an invalid
// value is marked on its field with the core's message; the URL holds the state (back goes to the
// previous plan, back again undoes the GPU click, reload keeps it all).
import { setup, load, select, fill, click, hover, back, reload, settle, canvasBox, compareTables, cliEvaluate, shot } from '../lib.mjs';

const START = { model: 'llama3-70b', cluster: 'dgx-h100', gpus: '16', tp: '1', pp: '1', sp: 'true', recompute: 'full', seq_len: '8192', global_batch: '16', grad_dtype: 'bf16' };
const EXPECT = { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 16 }, plan: { tp: 8, pp: 2, sp: true, recompute: 'full' },
  workload: { seq_len: 8192, global_batch: 16, grad_dtype: 'bf16' } };

// fresh loads, one after the other in one page: the default page from file:// and http://
async function loads(k, page, errors, url, label) {
  const mark = errors.length;
  await load(page, url);
  k.check((await page.evaluate(() => document.body.dataset.status)) === 'ready', label + ': page ready');
  k.check(errors.length === mark, label + ': no console errors on load' + (errors.length > mark ? ' — ' + errors.slice(mark).join(' | ') : ''));
}

async function edit(k, base, label) {
  const file = label === 'file';   // screenshots from the file:// pass only
  // the CLI's answers do not depend on the page: ask while it loads
  const refP = cliEvaluate(EXPECT);
  const badP = cliEvaluate({ ...EXPECT, workload: { ...EXPECT.workload, global_batch: 0 } });
  // sp would be invalid at tp = 1: start with tp 1 then fix
  const q = new URLSearchParams(START);
  q.set('sp', 'false');
  const { page, errors } = await k.open(base + '?' + q.toString());
  const ref = await refP;

  await k.step('TP 8 · PP 2 through the controls: tables = CLI', async () => {
    await select(page, '/plan/tp', 8);
    await page.check('[data-path="/plan/sp"] input');
    await settle(page);
    await select(page, '/plan/pp', 2);
    const url = page.url();
    k.check(/[?&#]tp=8/.test(url) && /pp=2/.test(url), label + ': the URL holds the plan (' + url.slice(url.indexOf('?')) + ')');
    k.check(ref.status === 0, label + ': CLI evaluates the same plan');
    const pageCfg = await page.evaluate(() => window.__cutlab.derived.cfg);
    k.check(JSON.stringify(pageCfg.plan) === JSON.stringify({ tp: 8, pp: 2, sp: true, recompute: 'full' }), label + ': the page sends plan ' + JSON.stringify(pageCfg.plan));
    await compareTables(k, page, ref.json, label);
  });

  await k.step('every view draws; GPU 9 hovered and opened', async () => {
    for (const view of ['cuts', 'placement', 'pipeline']) {
      const before = await page.evaluate(() => window.__cutlab.derived.good.gpuStats.calls);
      await click(page, '#tabs [data-view="' + view + '"]');
      const h = await page.$eval('#canvas', (c) => c.height);
      k.check(h > 150, label + ': view ' + view + ' drawn (' + h + ' px)');
      const after = await page.evaluate(() => window.__cutlab.derived.good.gpuStats.calls);
      k.check(after - before <= 1, label + ': view ' + view + ' asked the core at most once for GPUs (' + (after - before) + ' gpus() call)');
      if (file) await page.screenshot({ path: shot('tp8-pp2-' + view + '.png') });
    }
    await click(page, '#tabs [data-view="placement"]');
    const box = await canvasBox(page);
    const calls = await page.evaluate(() => Object.assign({}, window.__cutlab.derived.good.gpuStats));
    k.check(calls.calls <= 1, label + ': the figures need no gpus() call (' + calls.gpus + ' GPUs in ' + calls.calls + ' calls: GPU 0 for the five-axes table)');
    // GPU 9 in the full view: find its hit rectangle through the same code the page uses
    const target = await page.evaluate(() => {
      const d = window.__cutlab.derived.good;
      const sc = window.CL.views.placement.scene(d, Math.floor(document.getElementById('canvas-wrap').clientWidth));
      const g = sc.rects.find((r) => r.kind === 'gpu' && r.rank === 9);
      return g ? { x: g.x + g.w / 2, y: g.y + g.h / 2 } : null;
    });
    if (!k.check(target, label + ': GPU 9 found in the placement view')) return;
    await hover(page, box.x + target.x, box.y + target.y);
    const tip = await page.$eval('#tooltip', (t) => (t.hidden ? '' : t.textContent));
    k.check(/GPU 9/.test(tip) && /layers 41–80/.test(tip), label + ': hovering GPU 9 shows what it holds');
    await page.mouse.click(box.x + target.x, box.y + target.y);
    await settle(page);
    const panel = await page.$eval('#gpu-panel', (p) => (p.hidden ? '' : p.textContent));
    k.check(/GPU 9/.test(panel) && /heads/.test(panel) && /total/.test(panel), label + ': clicking GPU 9 opens its memory and traffic');
    k.check(await page.evaluate(() => window.__cutlab.state.gpu === 9 && window.__cutlab.state.view === 'placement'), label + ': the state holds GPU 9 in the placement view');
    if (file) await page.screenshot({ path: shot('tp8-pp2-gpu9.png') });
  });

  await k.step('an invalid field is marked with the core\'s message', async () => {
    await fill(page, '/workload/global_batch', 0);
    const bad = await badP;
    const mark = await page.$eval('[data-path="/workload/global_batch"]', (e) => ({ invalid: e.classList.contains('invalid'), msg: e.querySelector('.err').textContent }));
    const cliMsg = bad.json && bad.json.errors && bad.json.errors.find((e) => e.path === '/workload/global_batch');
    k.check(bad.status === 2 && mark.invalid && cliMsg && mark.msg.includes(cliMsg.message), label + ': global batch 0 marked with the core\'s message: ' + mark.msg);
    k.check(!(await page.$eval('#stale', (e) => e.hidden)), label + ': the views say they show the last valid plan');
    if (file) await page.screenshot({ path: shot('invalid-field.png') });
  });

  await k.step('URL state: back, back again, reload', async () => {
    await back(page);
    const afterBack = await page.evaluate(() => ({ ok: window.__cutlab.derived.ok, gb: window.__cutlab.state.workload.global_batch }));
    k.check(afterBack.ok && afterBack.gb === 16, label + ': back goes to the previous (valid) plan');
    await back(page);
    const back2 = await page.evaluate(() => ({ gpu: window.__cutlab.state.gpu, view: window.__cutlab.state.view, panel: document.getElementById('gpu-panel').hidden }));
    k.check(back2.gpu === null && back2.view === 'placement' && back2.panel, label + ': back again undoes the GPU click ' + JSON.stringify(back2));
    await reload(page);
    const reloaded = await page.evaluate(() => ({ tp: window.__cutlab.state.plan.tp, pp: window.__cutlab.state.plan.pp, view: window.__cutlab.state.view }));
    k.check(reloaded.tp === 8 && reloaded.pp === 2 && reloaded.view === 'placement', label + ': reload keeps the state ' + JSON.stringify(reloaded));
    await compareTables(k, page, ref.json, label + ' after reload');
    k.check(errors.length === 0, label + ': no console errors while editing' + (errors.length ? ' — ' + errors.join(' | ') : ''));
  });
}

// ---- an invalid plan, opened fresh: the controls show the config the core read -----------------
async function invalidLink(k, page, errors, base) {
  const mark = errors.length;
  const q = new URLSearchParams({ model: 'llama3-70b', cluster: 'dgx-h100', gpus: '16', tp: '8', pp: '2', global_batch: '0' });
  await load(page, base + '?' + q.toString());
  const st = await page.evaluate(() => {
    const d = window.__cutlab.derived;
    const v = (p) => { const el = document.querySelector('[data-path="' + p + '"] select, [data-path="' + p + '"] input'); return el.type === 'checkbox' ? (el.indeterminate ? 'unknown' : el.checked) : el.value; };
    return { ok: d.ok, hasConfig: !!d.config, tp: v('/plan/tp'), cp: v('/plan/cp'), zero: v('/plan/zero'), flash: v('/plan/flash_attention'), recompute: v('/plan/recompute'),
      seq: v('/workload/seq_len'), schedule: v('/plan/schedule'), eq: document.getElementById('equation').textContent.replace(/\s+/g, ' ') };
  });
  k.check(!st.ok && st.hasConfig && st.tp === '8' && st.cp === '1' && st.zero === '0' && st.flash === true && st.recompute === 'none' && st.seq === '4096' && st.schedule === '1f1b',
    'invalid plan: the controls hold the config the core read (' + JSON.stringify(st).slice(0, 120) + '…)');
  k.check(/DP\s*1/.test(st.eq), 'invalid plan: the equation shows the mesh the core read (' + st.eq.trim() + ')');
  k.noErrors(errors, 'invalid plan', mark);
}

async function freshLoads(k) {
  const { fileBase, httpBase } = await setup();
  const { page, errors } = await k.open(null);
  await k.step('file: the default page loads cleanly', () => loads(k, page, errors, fileBase, 'file'));
  await k.step('http: the default page loads cleanly', () => loads(k, page, errors, httpBase, 'http'));
  await k.step('an invalid plan opened from a link keeps its controls filled', () => invalidLink(k, page, errors, fileBase));
}

// The DeepSeek-V3 example runs the plan DeepSeek published with DeepSeek's memory levers (no full
// recompute) and fits; the recompute-modules set is shown with selective recompute only, edits the
// plan as a list (URL "recompute_modules=a,b"), and leaving a module out changes the memory.
async function levers(k) {
  const { fileBase } = await setup();
  const { page, errors } = await k.open(fileBase + '#ex=deepseek-v3');
  const peak = () => page.evaluate(() => {
    const m = window.__cutlab.derived.good.r.memory;
    return { fits: m.fits, bytes: m.per_stage[m.peak_stage].total_bytes, ok: window.__cutlab.derived.ok };
  });
  await k.step('DeepSeek-V3 example: fits with its own levers; the modules set edits the plan', async () => {
    const a = await peak();
    k.check(a.ok && a.fits, 'the published plan fits in H800 memory (peak ' + (a.bytes / 2 ** 30).toFixed(1) + ' GiB)');
    const pub = await page.$eval('#examples .published', (e) => e.textContent);
    const tps = await page.evaluate(() => window.__cutlab.derived.good.r.throughput.tokens_per_s_per_gpu);
    k.check(/^Published 1,543 tokens\/s per GPU · cutlab [\d,]+ \([+−][\d.]+%\)DeepSeek-V3/.test(pub) &&
      pub.includes(Math.round(tps).toLocaleString('en-US')), 'the published figure beside cutlab\'s: ' + pub.slice(0, 70));
    const row = '[data-path="/plan/recompute_modules"]';
    k.check(await page.$eval(row, (r) => !r.hidden && getComputedStyle(r).display !== 'none'), 'the modules set is shown with selective recompute');
    const checked = await page.$$eval(row + ' input:checked', (l) => l.map((b) => b.value));
    k.check(JSON.stringify(checked) === JSON.stringify(['mla_up_proj', 'layernorm', 'moe_act']), 'checked in table order: ' + checked.join(', '));
    await page.uncheck(row + ' input[value="moe_act"]');
    await settle(page);
    const b = await peak();
    const url = decodeURIComponent(page.url());
    k.check(/recompute_modules=mla_up_proj,layernorm(&|$)/.test(url), 'the URL holds the list (' + url.slice(url.indexOf('recompute_modules')) + ')');
    k.check(b.ok && b.bytes > a.bytes, 'without moe_act the peak grows (' + (b.bytes / 2 ** 30).toFixed(1) + ' GiB)');
    await select(page, '/plan/recompute', 'full');
    k.check(await page.$eval(row, (r) => r.hidden && getComputedStyle(r).display === 'none'), 'full recompute hides the modules (not displayed)');
    const c = await peak();
    k.check(c.ok, 'full recompute drops the module list (the plan stays valid)');
    // The experts' section: shown for an MoE model with the example's dispatcher; a load imbalance slows the step.
    const shown = await page.$eval('[data-path="/plan/ep_dispatcher"]', (r) => getComputedStyle(r.closest('fieldset')).display !== 'none');
    const disp = await page.$eval('[data-path="/plan/ep_dispatcher"] select', (e) => e.value);
    const dt = await page.$eval('[data-path="/plan/ep_dispatch_dtype"] select', (e) => e.value);
    k.check(shown && disp === 'deepep' && dt === 'fp8', 'the Experts section shows DeepEP with fp8 dispatch (' + disp + ', ' + dt + ')');
    const step0 = await page.evaluate(() => window.__cutlab.derived.good.r.time.step_s);
    await fill(page, '/plan/moe_imbalance', 1.5);
    const step1 = await page.evaluate(() => window.__cutlab.derived.good.r.time.step_s);
    k.check(step1 > step0 * 1.05, 'load imbalance 1.5 slows the step (' + step0.toFixed(2) + ' → ' + step1.toFixed(2) + ' s)');
    await select(page, '/model', 'llama3-8b');
    const hidden = await page.$eval('[data-path="/plan/ep_dispatcher"]', (r) => getComputedStyle(r.closest('fieldset')).display === 'none');
    const plan = await page.evaluate(() => window.__cutlab.derived.cfg.plan);
    k.check(hidden && !('moe_imbalance' in plan) && !('ep_dispatcher' in plan),
      'a dense model hides the Experts section and drops its settings (' + JSON.stringify(plan) + ')');
    k.noErrors(errors, 'DeepSeek-V3 levers');
  });
}

// "Balance the stages" under Memory per stage: the core's suggestion, applied with one click.
async function balance(k) {
  const { fileBase } = await setup();
  const { page, errors } = await k.open(fileBase + '?model=llama3-8b&cluster=dgx-h100&gpus=8&tp=1&pp=4&recompute=none&seq_len=8192&global_batch=32');
  await k.step('Balance the stages: a shorter step, applied as layers_per_stage', async () => {
    await settle(page);
    const step0 = await page.evaluate(() => window.__cutlab.derived.good.r.time.step_s);
    await page.click('#tables .balance-run');
    await settle(page);   // the line is aria-busy while core-full.js loads (web/bridge.js)
    const text = await page.$eval('#tables .balance', (e) => e.textContent);
    const out = await page.evaluate(() => window.__cutlab.api().balance(window.__cutlab.derived.good.text));
    const want = out.ok ? out.result.suggested.layers_per_stage : [];
    k.check(out.ok && out.result.improved && text.includes('Suggested layers per stage: ' + want.join(', ')), 'the suggestion is shown: ' + text.slice(0, 90));
    k.check(want[3] < 8, 'the last stage (output layer and loss) gets fewer layers: ' + want.join(', '));
    await page.click('#tables .balance-apply');
    await settle(page);
    const after = await page.evaluate(() => ({ step: window.__cutlab.derived.good.r.time.step_s, split: window.__cutlab.derived.good.r.config.plan.layers_per_stage }));
    k.check(JSON.stringify(after.split) === JSON.stringify(want), 'the plan has the split: ' + JSON.stringify(after.split));
    k.check(after.step < step0 && Math.abs(after.step / out.result.suggested.step_s - 1) < 1e-9,
      'the step is the suggested one (' + step0.toFixed(2) + ' → ' + after.step.toFixed(2) + ' s)');
    k.check(decodeURIComponent(page.url()).includes('layers_per_stage=' + want.join(',')), 'the URL holds the split');
    const line = await page.$eval('#tables .balance', (e) => e.textContent);
    k.check(line.includes('applied'), 'the line says it is applied: ' + line.slice(0, 90));
    k.noErrors(errors, 'balance');
  });
}

// The folding example lands within 10% of the 49.3% MFU the paper reports and shows it beside cutlab's.
async function folding(k) {
  const { fileBase } = await setup();
  const { page, errors } = await k.open(fileBase + '#ex=mixtral-folding');
  await k.step('Mixtral folding example: within 10% of the published 49.3% MFU', async () => {
    const mfu = await page.evaluate(() => window.__cutlab.derived.good.r.mfu);
    k.check(Math.abs(mfu / 0.493 - 1) <= 0.10, 'cutlab ' + (100 * mfu).toFixed(1) + '% against 49.3%');
    const pub = await page.$eval('#examples .published', (e) => e.textContent);
    k.check(pub.startsWith('Published 49.3% MFU'), 'the published figure beside cutlab\'s: ' + pub.slice(0, 60));
    k.noErrors(errors, 'Mixtral folding');
  });
}

// Ways out of an invalid plan (web/suggest.js): 24 GPUs under TP 8 × PP 2 (global batch 48) offer the
// nearest GPU counts and an axis that fits 24, each one valid; a pasted config.json whose 28 heads TP 8 does not
// divide moves TP to 4 by itself and says so, and the page draws the new model.
const QWEN25_7B_HF = { hidden_act: 'silu', hidden_size: 3584, intermediate_size: 18944, num_attention_heads: 28, num_hidden_layers: 28,
  num_key_value_heads: 4, vocab_size: 152064, tie_word_embeddings: false };
async function fixes(k) {
  const { fileBase } = await setup();
  const q = new URLSearchParams({ ...START, gpus: '24', tp: '8', pp: '2', global_batch: '48' });
  const { page, errors } = await k.open(fileBase + '?' + q.toString());
  await k.step('24 GPUs under TP 8 × PP 2: valid plans nearby, one click each', async () => {
    const got = await page.evaluate(() => ({ ok: window.__cutlab.derived.ok, hidden: document.getElementById('fixes').hidden,
      buttons: [...document.querySelectorAll('#fixes button.fix')].map((b) => b.textContent) }));
    k.check(!got.ok && !got.hidden, 'the plan is invalid and the page offers fixes');
    k.check(got.buttons.includes('16 GPUs') && got.buttons.includes('32 GPUs'), 'the nearest GPU counts TP 8 × PP 2 divides: ' + got.buttons.join(' | '));
    k.check(got.buttons.includes('TP 8 → 4'), 'and TP 4, which fits 24 GPUs (DP 3, 48 sequences): ' + got.buttons.join(' | '));
    await page.screenshot({ path: shot('fixes-24-gpus.png') });
    await page.locator('#fixes button.fix', { hasText: '32 GPUs' }).click();
    await settle(page);
    const after = await page.evaluate(() => ({ ok: window.__cutlab.derived.ok, gpus: window.__cutlab.state.gpus, hidden: document.getElementById('fixes').hidden }));
    k.check(after.ok && after.gpus === 32 && after.hidden, 'a click applies it: 32 GPUs, the plan valid, the offers gone');
  });
  await k.step('a pasted config.json with 28 heads under TP 8: TP moves to 4, with a note', async () => {
    const BOX = '[data-path="/model/hf_config"]';
    await page.click(BOX + ' summary');
    await page.locator(BOX + ' textarea').fill(JSON.stringify(QWEN25_7B_HF));
    await click(page, BOX + ' button.use');
    const got = await page.evaluate(() => ({ ok: window.__cutlab.derived.ok, tp: window.__cutlab.state.plan.tp, cfg: window.__cutlab.derived.cfg,
      params: window.__cutlab.derived.r && window.__cutlab.derived.r.params, note: document.getElementById('fixes').textContent,
      hidden: document.getElementById('fixes').hidden }));
    const ref = await cliEvaluate(got.cfg);
    k.check(got.ok && got.tp === 4, 'the plan is valid with TP 4 (28 heads, 4 KV heads)');
    k.check(!got.hidden && got.note.includes('TP 8 → 4'), 'the note says what moved: ' + got.note);
    k.check(ref.status === 0 && JSON.stringify(got.params) === JSON.stringify(ref.json.params) && got.params.total > 7e9 && got.params.total < 8e9,
      'the page draws the pasted model: ' + (got.params && got.params.total) + ' parameters, as the CLI');
    k.noErrors(errors, 'fixes');
  });
}

export default [
  { name: 'invalid plans: valid ones nearby; a pasted model moves TP to fit', weight: 2, run: fixes },
  { name: 'DeepSeek-V3 example: memory levers, recompute modules', weight: 3, run: levers },
  { name: 'Mixtral folding example: the published MFU', weight: 1, run: folding },
  { name: 'Balance the stages: suggestion and apply', weight: 1, run: balance },
  { name: 'file: controls → tables = CLI, views, GPU 9, an invalid field, URL state', weight: 9, run: async (k) => edit(k, (await setup()).fileBase, 'file') },
  { name: 'http: controls → tables = CLI, views, GPU 9, an invalid field, URL state', weight: 9, run: async (k) => edit(k, (await setup()).httpBase, 'http') },
  { name: 'fresh loads: the default page (file://, http://), an invalid plan from a link', weight: 3, run: freshLoads },
];
