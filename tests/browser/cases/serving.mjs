// Serving: the mode control and the numbers against `cutlab evaluate --mode infer`; the placement
// view puts a load balancer in front of the replicas, each labelled with the CLI's
// inference.output_tokens_per_s_per_replica (one box "× N replicas" on 16,384 GPUs, none in training).
import { setup, load, select, fill, click, hover, unhover, go, canvasBox, cliEvaluate, cliEvaluateArgs, shot } from '../lib.mjs';

async function serving(k, base) {
  const { page, errors } = await k.open(base + '?ex=serve-tp8pp2');
  await select(page, '/workload/mode', 'train');
  await select(page, '/workload/mode', 'infer');
  await fill(page, '/workload/batch', 16);
  const cfg = await page.evaluate(() => window.__cutlab.derived.cfg);
  const ref = await cliEvaluate(cfg);
  k.check(ref.status === 0 && ref.json.mode === 'infer', 'serve: CLI evaluates the page\'s config in infer mode');
  const inf = ref.json.inference;
  const cells = await page.$$eval('table.time tr td[data-v]', (els) => els.map((e) => Number(e.dataset.v)));
  k.check(cells.includes(inf.ttft_s) && cells.includes(inf.tpot_s) && cells.includes(inf.output_tokens_per_s_total) && cells.includes(inf.max_batch_that_fits),
    'serve: TTFT, TPOT, tokens/s and max batch = CLI');
  const stages = await page.$$eval('table.mem-stages tbody tr', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td[data-v]')).map((c) => Number(c.dataset.v))));
  const refStages = ref.json.memory.per_stage.map((s) => [s.weights_bytes, s.kv_cache_bytes, s.activations_bytes, s.total_bytes, s.capacity_bytes]);
  k.check(JSON.stringify(stages) === JSON.stringify(refStages), 'serve: memory per stage (weights, KV cache, activations) = CLI');
  // The held-out error of the cluster preset's serving fit (core/presets.h ClusterPreset), the presets' own figure.
  const held = await page.evaluate(() => {
    const row = Array.from(document.querySelectorAll('table.time tr')).find((r) => /held-out error/.test(r.textContent));
    const preset = window.CL.presets.clusters.find((c) => c.name === window.__cutlab.derived.cfg.cluster.preset);
    return { v: row ? Number(row.querySelector('td[data-v]').dataset.v) : null, want: preset ? preset.serving_held_out_percent / 100 : null };
  });
  k.check(held.v !== null && held.v === held.want && held.want > 0, 'serve: the held-out error of the preset\'s serving fit (' + held.v + ' against ' + held.want + ')');
  const head = await page.$eval('#headline', (e) => e.textContent);
  k.check(/Time to first token/.test(head) && /Time per output token/.test(head), 'serve: headline shows TTFT and TPOT');
  await click(page, '#tabs [data-view="pipeline"]');
  const cap = await page.$eval('#view-caption', (e) => e.textContent);
  k.check(/2 micro-batches are in flight/.test(cap), 'serve: the pipeline view says PP keeps 2 micro-batches in flight (' + cap.slice(0, 90) + '…)');
  // "Expert weights" only where there are experts: hidden for Llama 3 70B, shown for Mixtral
  const shown = () => page.$eval('[data-path="/workload/expert_weight_dtype"]', (e) => getComputedStyle(e).display !== 'none');
  k.check(!(await shown()), 'serve: no "Expert weights" control for a dense model');
  await select(page, '/model', 'mixtral-8x22b');
  k.check(await shown(), 'serve: the "Expert weights" control for an MoE model');
  // "Local layers hold" only for models with sliding-window or chunked layers
  const local = () => page.$eval('[data-path="/workload/local_kv_cache"]', (e) => getComputedStyle(e).display !== 'none');
  k.check(!(await local()), 'serve: no "Local layers hold" control for Mixtral (no local attention)');
  await select(page, '/model', 'llama4-scout-17b-16e');
  k.check(await local(), 'serve: the "Local layers hold" control for Llama 4 Scout (chunked attention)');
  k.noErrors(errors, 'serve');
}

// the placement view's scene, as the page lays it out for the canvas' width
const sceneOf = (page) => page.evaluate(() => {
  const d = window.__cutlab.derived.good;
  const sc = window.CL.views.placement.scene(d, Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth)));
  const text = (k) => sc.texts.filter((t) => t.kind === k).map((t) => t.text);
  return { level: sc.level, replicas: sc.rects.filter((r) => r.kind === 'replica'), cards: sc.rects.filter((r) => r.kind === 'replica_card'),
    balancer: sc.rects.some((r) => r.kind === 'balancer'), arrows: sc.lines.filter((l) => l.kind === 'arrow'),
    total: text('balancer_total').join(''), detail: text('balancer_detail').join(''), subs: text('replica_sub'), count: text('replica_count').join(''),
    links: text('link_label'),
    inf: d.r.inference, caption: document.getElementById('view-caption').textContent };
});
const ARGS = ['--model', 'llama3-70b', '--cluster', 'dgx-h100', '--tp', '8', '--dp', '2', '--mode', 'infer', '--batch', '8'];
const QUERY = '?model=llama3-70b&cluster=dgx-h100&tp=8&dp=2&mode=infer&batch=8';

async function balancer(k, base) {
  const refP = cliEvaluateArgs(ARGS);
  const { page, errors } = await k.open(base + QUERY + '&view=placement');
  const ref = await refP;
  if (!k.check(ref && ref.inference.replicas === 2, 'balancer: `cutlab evaluate ' + ARGS.join(' ') + ' --json` gives 2 replicas')) return;
  const inf = ref.inference;
  const s = await sceneOf(page);
  const fmt = await page.evaluate((v) => v.map((x) => window.CL.fmt.int(x)), [inf.output_tokens_per_s_per_replica, inf.output_tokens_per_s_total]);
  k.check(s.balancer && s.replicas.length === 2 && s.replicas.map((r) => r.replica).join() === '0,1' &&
    s.subs.every((t) => t.includes(fmt[0] + ' tok/s') && t.includes('8 seq')) &&
    s.arrows.filter((a) => a.y2 > s.replicas[0].y + s.replicas[0].h).length === 2,
  'balancer: one arrow per replica (per-replica tokens/s = CLI inference.output_tokens_per_s_per_replica), into its GPUs, labelled "' + s.subs[0] + '"');
  k.check(s.total.includes('2 replicas × ' + fmt[0] + ' tok/s = ' + fmt[1] + ' tok/s') && /no traffic between replicas/.test(s.total + s.detail),
    'balancer: total "' + s.total + '"');
  k.check(/load balancer/.test(s.caption), 'balancer: the caption names the load balancer');
  // hovering replica 1 names its throughput
  if (s.replicas[1]) {
    const box = await canvasBox(page);
    const it = s.replicas[1];
    await hover(page, box.x + it.x + it.w / 2, box.y + it.y + it.h / 2);
    const tip = await page.$eval('#tooltip', (t) => (t.hidden ? '' : t.textContent));
    k.check(tip.includes('replica 1') && tip.includes(fmt[0] + ' tokens/s per replica'), 'balancer: hovering replica 1 shows its tokens/s (' + tip.slice(0, 60) + '…)');
    await page.screenshot({ path: shot('serve-dp2-balancer.png') });
    await unhover(page);
  } else k.check(false, 'balancer: replica 1 drawn');
  k.noErrors(errors, 'balancer');

  // 16,384 GPUs: one box with the count, not 1,024 arrows (the same page, the plan through the URL)
  let mark = errors.length;
  await go(page, '?model=llama3-405b&cluster=dgx-h100&gpus=16384&tp=8&pp=2&mode=infer&batch=8&view=placement');
  const sb = await sceneOf(page);
  const n = await page.evaluate((v) => window.CL.fmt.int(v), sb.inf.replicas);
  k.check(sb.level === 'stages' && sb.replicas.length === 0 && sb.cards.length <= 3 && sb.arrows.length <= 3 && sb.count === '× ' + n + ' replicas',
    'balancer: 16,384 GPUs draw one replica box "' + sb.count + '"');
  await page.screenshot({ path: shot('serve-405b-16k-balancer.png') });
  k.noErrors(errors, 'balancer 16k', mark);
  // training: no balancer
  mark = errors.length;
  await go(page, '?view=placement');
  const st = await sceneOf(page);
  k.check(!st.balancer && (await page.evaluate(() => window.__cutlab.state.workload.mode !== 'infer')), 'balancer: none in training');
  k.noErrors(errors, 'balancer train', mark);
}

// the 700-px embed keeps both replicas (in a 700-px page of the embeds' case)
export async function balancerEmbed(k, page, errors, base) {
  const mark = errors.length;
  await load(page, base + QUERY + '&embed=placement');
  const se = await sceneOf(page);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  k.check(wide <= 700 && se.replicas.length === 2 && se.replicas.every((x) => x.x >= 0 && x.x + x.w <= 700), 'balancer: the 700-px embed keeps both replicas (' + wide + ' px)');
  await page.screenshot({ path: shot('embed-serve-balancer-700.png'), fullPage: true });
  k.noErrors(errors, 'balancer embed', mark);
}

// Instances placed whole: DeepSeek-V3 at EP 16 × DP 9 on two 72-GPU racks, 8 instances within a rack
// and one across both; the page's instances row and throughput are `cutlab evaluate`'s.
const STRADDLE = ['--model', 'deepseek-v3', '--cluster', 'gb200-nvl72', '--gpus', '144', '--tp', '1', '--ep', '16', '--dp', '9', '--mode', 'infer',
  '--batch', '16', '--prompt-len', '1024', '--output-len', '256', '--weight-dtype', 'fp4', '--kv-dtype', 'fp8'];
async function instances(k, base) {
  const refP = cliEvaluateArgs(STRADDLE);
  const { page, errors } = await k.open(base + '?model=deepseek-v3&cluster=gb200-nvl72&gpus=144&tp=1&ep=16&dp=9&mode=infer&batch=16&prompt_len=1024&output_len=256&weight_dtype=fp4&kv_dtype=fp8');
  const ref = await refP;
  if (!k.check(ref && ref.inference.instances === 9 && ref.inference.instances_whole === 8, 'instances: `cutlab evaluate` places 8 of 9 EP 16 instances whole')) return;
  const row = await page.$$eval('table.time tr', (rows) => rows.map((r) => r.textContent).find((t) => t.startsWith('instances')) || '');
  k.check(/9 × 16 GPUs/.test(row) && /8 each in one node; 1 straddling nodes/.test(row), 'instances: the row says so (' + row.slice(0, 100) + '…)');
  const cells = await page.$$eval('table.time tr td[data-v]', (els) => els.map((e) => Number(e.dataset.v)));
  k.check(cells.includes(ref.inference.output_tokens_per_s_total) && cells.includes(ref.inference.tpot_s), 'instances: tokens/s and the straddling instance\'s TPOT = CLI');
  // the placement view: the 8 whole instances' all-gathers on NVLink, the straddler's on the scale-out network
  await page.click('#tab-placement');
  const links = (await sceneOf(page)).links;
  k.check(links.some((t) => t.startsWith('NVLink inside nodes · 8 instances: EP ')) && links.some((t) => t.startsWith('scale-out between nodes · 1 instance: EP ')),
    'instances: the link key says whose traffic each link carries (' + links.join(' | ') + ')');
  await page.screenshot({ path: shot('serve-instances-straddle.png'), fullPage: true });
  k.noErrors(errors, 'instances');
}

// A request rate near the slots: the queue's wait in TTFT's parts, as `cutlab evaluate` gives it.
const QUEUE = ['--model', 'llama3-70b', '--cluster', 'dgx-h100', '--gpus', '8', '--tp', '8', '--mode', 'infer', '--batch', '16',
  '--prompt-len', '1024', '--output-len', '256', '--request-rate', '4'];
async function queue(k, base) {
  const refP = cliEvaluateArgs(QUEUE);
  const { page, errors } = await k.open(base + '?model=llama3-70b&cluster=dgx-h100&gpus=8&tp=8&mode=infer&batch=16&prompt_len=1024&output_len=256&request_rate_per_s=4');
  const ref = await refP;
  if (!k.check(ref && ref.inference.prefill.queue_s > 0, '`cutlab evaluate` gives a wait for a slot at 4 requests/s')) return;
  const cell = await page.$eval('tr[data-part="ttft.queue_s"] td[data-v]', (e) => Number(e.dataset.v)).catch(() => NaN);
  const ttft = await page.$eval('tr[data-part="ttft"] td[data-v]', (e) => Number(e.dataset.v)).catch(() => NaN);
  k.check(cell === ref.inference.prefill.queue_s && ttft === ref.inference.ttft_s, 'queue: the TTFT row and its queue part = CLI (' + cell + ' s of ' + ttft + ' s)');
  // 200 requests/s on 8 replicas of Llama 3 8B: more than they serve (`cutlab evaluate` says saturated),
  // so the TTFT card has no value to show but says why.
  const satP = cliEvaluateArgs(['--model', 'llama3-8b', '--cluster', 'dgx-h100', '--gpus', '8', '--tp', '1', '--dp', '8', '--mode', 'infer', '--batch', '256',
    '--prompt-len', '1024', '--output-len', '256', '--request-rate', '200']);
  await go(page, '?model=llama3-8b&cluster=dgx-h100&gpus=8&tp=1&dp=8&mode=infer&batch=256&prompt_len=1024&output_len=256&request_rate_per_s=200');
  const sat = await satP;
  const card = await page.$eval('.metric[data-key="ttft"]', (e) => ({ v: e.querySelector('.v').textContent, s: e.querySelector('.s').textContent, bad: e.classList.contains('bad') }));
  k.check(sat && sat.inference.saturated && card.v === 'unbounded' && card.bad && /saturated: 200 requests\/s arrive/.test(card.s),
    'saturated: the TTFT card reads "unbounded" and says why (' + card.v + ' · ' + card.s + ')');
  k.noErrors(errors, 'queue');
}

// A mix of lengths typed into the Workload section: the per-class rows = `cutlab evaluate`'s
// inference.length_classes, the prompt and output controls marked as not read, the mix kept in the link;
// a line that does not read is marked at the control, and a rule the core finds names the class.
async function mix(k, base) {
  const { page, errors } = await k.open(base + '?model=llama3-70b&cluster=dgx-h100&gpus=8&tp=8&mode=infer&batch=64');
  await fill(page, '/workload/length_mix', '1000/200 70%, 8000/500 30%');
  const cfg = await page.evaluate(() => window.__cutlab.derived.cfg);
  k.check(JSON.stringify(cfg.workload.length_mix) === JSON.stringify([{ prompt_len: 1000, output_len: 200, share: 70 }, { prompt_len: 8000, output_len: 500, share: 30 }]),
    'mix: the typed line becomes workload.length_mix (' + JSON.stringify(cfg.workload.length_mix) + ')');
  const ref = await cliEvaluate(cfg);
  const lc = ref.json && ref.json.inference.length_classes;
  if (!k.check(ref.status === 0 && lc && lc.ttft_s.length === 2, 'mix: `cutlab evaluate` gives two length classes')) return;
  const rows = await page.$$eval('table.time tr[data-class]', (rs) => rs.map((r) => ({ c: r.dataset.class, v: r.querySelectorAll('[data-v]').length === 2
    ? Array.from(r.querySelectorAll('[data-v]')).map((e) => Number(e.dataset.v)) : [] })));
  k.check(rows.length === 2 && rows[0].c === '1000/200' && rows[1].c === '8000/500' &&
    rows[0].v[0] === lc.ttft_s[0] && rows[0].v[1] === lc.e2e_latency_s[0] && rows[1].v[0] === lc.ttft_s[1] && rows[1].v[1] === lc.e2e_latency_s[1],
  'mix: each class\'s TTFT and end to end = CLI (' + JSON.stringify(rows) + ')');
  const mean = await page.$eval('tr[data-part="ttft"] td[data-v]', (e) => Number(e.dataset.v));
  k.check(mean === ref.json.inference.ttft_s, 'mix: the TTFT row is the mean over requests = CLI');
  const off = await page.$eval('[data-path="/workload/prompt_len"] input', (e) => e.disabled);
  k.check(off, 'mix: the prompt tokens control is marked as not read');
  const link = await page.evaluate(() => location.search || '?' + location.hash.slice(1));
  k.check(/length_mix=1000%2F200/.test(link), 'mix: the link keeps the mix (' + link.slice(0, 160) + ')');
  await go(page, link);
  const again = await page.evaluate(() => window.__cutlab.derived.cfg.workload.length_mix);
  k.check(JSON.stringify(again) === JSON.stringify(cfg.workload.length_mix), 'mix: the link reads back to the same mix');
  // an offline run of the mix: no waves, its duration = CLI
  await fill(page, '/workload/num_requests', 3000);
  const offCfg = await page.evaluate(() => window.__cutlab.derived.cfg);
  const offRef = await cliEvaluate(offCfg);
  const run = await page.$$eval('table.time tr', (rs) => rs.filter((r) => r.querySelector('th') && r.querySelector('th').textContent === 'the run')
    .map((r) => ({ v: Number(r.querySelector('td[data-v]').dataset.v), note: r.querySelector('.note').textContent }))[0] || null);
  k.check(offRef.status === 0 && run && run.v === offRef.json.inference.run_s && offRef.json.inference.run_waves === 0 && /no waves/.test(run.note),
    'mix: an offline run of 3,000 requests, no waves, its run = CLI (' + (run && run.v) + ' s: "' + (run && run.note) + '")');
  await fill(page, '/workload/num_requests', 0);
  // served disaggregated: a request's KV is the mean prompt's, 0.7·1000 + 0.3·8000 = 3,100 tokens × 320 KiB = 968.75 MiB
  await click(page, '#disagg summary');
  await page.waitForFunction(() => /Deployment/.test(document.getElementById('disagg').textContent), null, { timeout: 30000 });
  const dis = await page.$eval('#disagg', (e) => e.textContent.replace(/\s+/g, ' '));
  k.check(/969 MiB a request/.test(dis) && !/invalid|error/i.test(dis), 'mix: served disaggregated, the KV of the mean prompt, 969 MiB a request');
  // and each class's TTFT, KV transfer and end to end = `cutlab evaluate` of the panel's config
  const disText = await page.evaluate(() => { const g = window.__cutlab.derived.good; return CL.disagg.sectionText(g.text, CL.disagg.pools(g.r.config, null)); });
  const disRef = await cliEvaluate(JSON.parse(disText));
  const dlc = disRef.json && disRef.json.length_classes;
  const drows = await page.$$eval('#disagg table.disagg-classes tr[data-class]', (rs) => rs.map((r) => ({ c: r.dataset.class,
    v: Array.from(r.querySelectorAll('[data-v]')).map((x) => Number(x.dataset.v)) })));
  k.check(disRef.status === 0 && dlc && drows.length === 2 && drows[0].c === '1000/200' && drows[1].c === '8000/500' &&
    [0, 1].every((i) => drows[i].v.length === 3 && drows[i].v[0] === dlc.ttft_s[i] && drows[i].v[1] === dlc.kv_transfer_s[i] && drows[i].v[2] === dlc.e2e_latency_s[i]) &&
    drows[1].v[0] > drows[0].v[0] && drows[1].v[1] > drows[0].v[1],
  'mix: served disaggregated, each class\'s TTFT, KV transfer and end to end = CLI, the long prompt\'s the later (' + JSON.stringify(drows) + ')');
  await click(page, '#disagg summary');
  await fill(page, '/workload/length_mix', '1000/200 70%, oops');
  const bad = await page.$eval('[data-path="/workload/length_mix"]', (e) => ({ invalid: e.classList.contains('invalid'), text: e.querySelector('.err').textContent }));
  k.check(bad.invalid && /"oops" is not prompt\/output/.test(bad.text), 'mix: a line that does not read is marked at the control (' + bad.text + ')');
  await fill(page, '/workload/length_mix', '1000/200 0%');
  const rule = await page.$eval('[data-path="/workload/length_mix"]', (e) => ({ invalid: e.classList.contains('invalid'), text: e.querySelector('.err').textContent }));
  k.check(rule.invalid && /share/.test(rule.text), 'mix: the core\'s rule on a share of 0 lands on the control (' + rule.text + ')');
  await fill(page, '/workload/length_mix', '');
  const cleared = await page.evaluate(() => window.__cutlab.derived.cfg.workload.length_mix);
  k.check(cleared === undefined, 'mix: an empty line removes the mix');
  k.noErrors(errors, 'mix');
}

export default [
  { name: 'serving: mode control, TTFT/TPOT/memory = CLI', weight: 2, run: async (k) => serving(k, (await setup()).fileBase) },
  { name: 'serving: the placement view\'s load balancer (2 replicas, 16,384 GPUs, training)', weight: 3, run: async (k) => balancer(k, (await setup()).fileBase) },
  { name: 'serving: instances placed whole, one straddling two racks = CLI', weight: 1, run: async (k) => instances(k, (await setup()).fileBase) },
  { name: 'serving: the wait for a free slot at a request rate = CLI', weight: 1, run: async (k) => queue(k, (await setup()).fileBase) },
  { name: 'serving: a mix of request lengths, per class = CLI', weight: 1, run: async (k) => mix(k, (await setup()).fileBase) },
];
