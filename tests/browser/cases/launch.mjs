// The Launch panel: for the plan on the page, each framework's text is `cutlab export --to FORMAT`
// of the page's config, byte for byte, shown as text (no element inside); training plans offer the
// training frameworks and serving plans vLLM and SGLang; Copy leaves the text copied or selected.
import { execFileSync } from 'node:child_process';
import { setup, click, go, cli, shot, settle, loaded } from '../lib.mjs';

const exported = (config, format) => execFileSync(cli, ['export', '--to', format, '-'], { input: config, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] });

async function launchPanel(k, base) {
  const { page, errors } = await k.open(base + '?ex=tp8pp2');
  await click(page, '#launch summary');
  const panel = async () => page.evaluate(() => ({
    tabs: Array.from(document.querySelectorAll('#launch .launch-tabs button')).map((b) => [b.dataset.format, b.getAttribute('aria-selected')]),
    text: document.querySelector('#launch pre').textContent, children: document.querySelector('#launch pre').children.length,
    file: document.querySelector('#launch .launch-file').textContent, notes: Array.from(document.querySelectorAll('#launch .launch-notes li')).map((l) => l.textContent),
    config: window.__cutlab.derived.good.text }));
  let p = await panel();
  k.check(p.tabs.map((t) => t[0]).join() === 'megatron,megatron-bridge,torchtitan,deepspeed', 'launch: a training plan offers ' + p.tabs.map((t) => t[0]).join(', '));
  for (const format of ['megatron', 'megatron-bridge', 'torchtitan', 'deepspeed']) {
    await click(page, '#launch .launch-tabs button[data-format="' + format + '"]');
    p = await panel();
    k.check(p.text === exported(p.config, format) && p.children === 0, 'launch: ' + format + ' = `cutlab export --to ' + format + '` of the page\'s config, as text (' + p.file + ')');
  }
  await click(page, '#launch .launch-tabs button[data-format="megatron"]');
  await page.screenshot({ path: shot('launch-megatron.png'), fullPage: true });
  // DualPipe has no Megatron-LM flag: the note says so
  await go(page, '?ex=deepseek-v3');
  p = await panel();
  k.check(p.text === exported(p.config, 'megatron') && p.notes.some((n) => /^plan\/schedule: no megatron setting/.test(n)), 'launch: DeepSeek-V3 notes that DualPipe is no Megatron-LM setting');
  // a serving plan
  await go(page, '?ex=serve-tp8pp2');
  p = await panel();
  k.check(p.tabs.map((t) => t[0]).join() === 'vllm,sglang' && p.text === exported(p.config, 'vllm'), 'launch: a serving plan offers vLLM and SGLang; vLLM = the CLI\'s');
  await click(page, '#launch .launch-tabs button[data-format="sglang"]');
  p = await panel();
  k.check(p.text === exported(p.config, 'sglang'), 'launch: SGLang = the CLI\'s');
  await click(page, '#launch .launch-bar button');
  const copied = await page.evaluate(() => ({ sel: window.getSelection().toString(), button: document.querySelector('#launch .launch-bar button').textContent }));
  k.check(copied.button === 'Copied' || copied.sel.trim() === p.text.trim(), 'launch: Copy copies the text (or selects it to copy): "' + copied.button + '"');
  k.noErrors(errors, 'launch');
}

const launchCases = [
  { name: 'the Launch panel: every framework\'s text = cutlab export, as text', weight: 2, run: async (k) => launchPanel(k, (await setup()).httpBase) },
];
export default launchCases;

// A plan that does not fit shows no MFU as a result: the headline says "does not fit" (what it would
// reach stays, muted, "if it fit"); the footer's timings only with ?debug=1.
async function headlineAndFooter(k, base) {
  const q = '?model=llama3-70b&cluster=dgx-h100&gpus=8&tp=8&seq_len=8192&global_batch=8';
  const { page, errors } = await k.open(base + q);
  const h = await page.evaluate(() => ({ fits: window.__cutlab.derived.r.memory.fits, mfu: document.querySelector('#headline [data-key="mfu"]').textContent,
    cls: document.querySelector('#headline [data-key="mfu"]').className, foot: document.querySelector('#foot').textContent }));
  k.check(!h.fits && /does not fit/.test(h.mfu) && /if it fit: [\d.]+%/.test(h.mfu) && /nofit/.test(h.cls), 'headline: a plan that does not fit says so instead of its MFU ("' + h.mfu + '")');
  k.check(!/ ms/.test(h.foot) && /llama3-70b on 8/.test(h.foot), 'footer: no timings without ?debug=1 ("' + h.foot.slice(-40) + '")');
  const { page: p2 } = await k.open(base + q + '&debug=1');
  k.check(/core [\d.]+ ms · draw [\d.]+ ms/.test(await p2.$eval('#foot', (e) => e.textContent)), 'footer: ?debug=1 shows the core\'s and the drawing\'s timings');
  const t = await page.evaluate(() => ({ mfu: document.querySelector('#headline [data-key="mfu"] .term-def').title,
    terms: Array.from(document.querySelectorAll('#terms dt')).map((d) => d.textContent), sources: document.querySelectorAll('#terms dd .src').length }));
  k.check(/40–50% is good at scale/.test(t.mfu) && /arXiv:2204\.02311/.test(t.mfu), 'terms: MFU is explained where it appears, with its source');
  k.check(t.terms.join() === 'MFU,HFU,bubble,VPP,ETP / EDP,ZB-H1,DualPipe,in flight' && t.sources === 8, 'terms: the Terms list defines ' + t.terms.join(', ') + ', each with a source');
  k.noErrors(errors, 'headline');
}
launchCases.push({ name: 'a plan that does not fit: no MFU as a result; timings only with ?debug=1; terms explained', run: async (k) => headlineAndFooter(k, (await setup()).httpBase) });

// The Disaggregate panel (serving): its table and lines = `cutlab evaluate --json` of the page's config
// with the same disaggregation section; each pool defaults to the plan's mesh on half its GPUs (one copy
// at least: serve-tp4's 4 GPUs give 4 + 4); an edit goes into the link (dis.d.batch) and the result, a
// reload keeps it, Reset drops it; a pool field of markup from a link is refused at its path, as text.
const evaluated = (config) => JSON.parse(execFileSync(cli, ['evaluate', '-', '--json'], { input: config, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] }));
const SERVE_TP4 = '?model=llama3-70b&cluster=dgx-h100&gpus=4&tp=4&mode=infer&batch=8&prompt_len=1024&output_len=256';

async function disaggPanel(k, base) {
  const { page, errors } = await k.open(base + SERVE_TP4);
  await click(page, '#disagg summary');
  const read = () => page.evaluate(() => {
    const D = window.CL.disagg, g = window.__cutlab.derived.good;
    return {
      rows: Array.from(document.querySelectorAll('#disagg tbody tr')).map((tr) => Array.from(tr.children).map((c) => c.textContent)),
      out: document.querySelector('#disagg .disagg-out').textContent,
      errs: Array.from(document.querySelectorAll('#disagg .disagg-errors li')).map((l) => l.textContent),
      text: D.sectionText(g.text, D.pools(g.r.config, window.__cutlab.state.dis)), url: location.href,
      pwn: document.querySelectorAll('[data-pwn]').length };
  });
  // the core's numbers as the page formats them
  const shown = (r) => page.evaluate((x) => { const F = window.CL.fmt; return { prq: F.sig(x.prefill.requests_per_s), drq: F.sig(x.decode.requests_per_s),
    ttft: F.seconds(x.prefill.ttft_s), tpot: F.seconds(x.decode.tpot_s), kv: F.seconds(x.kv_transfer.time_s), gpu: F.sig(x.output_tokens_per_s_per_gpu),
    bal: F.pct(x.balance.prefill_fraction) }; }, r);
  const same = async (p, label) => {
    const ref = evaluated(p.text), f = await shown(ref.result);
    const [pre, kv, dec] = p.rows;
    k.check(ref.ok && pre[4] === f.prq && pre[6] === 'TTFT ' + f.ttft && kv[6] === f.kv && dec[4] === f.drq && dec[6] === 'TPOT ' + f.tpot &&
      p.out.includes(f.gpu + ' output tokens/s per GPU') && p.out.includes(f.bal + ' of the GPUs prefilling'),
    'disaggregate (' + label + '): the table = cutlab evaluate of the same section (prefill ' + pre[4] + ' requests/s, ' + pre[6] + '; decode ' + dec[4] + ', ' + dec[6] + '; ' + f.gpu + ' per GPU)');
    return ref;
  };
  let p = await read();
  const sec = JSON.parse(p.text).disaggregation;
  k.check(sec.prefill.gpus === 4 && sec.prefill.plan.tp === 4 && sec.decode.gpus === 4 && sec.decode.plan.tp === 4 && sec.decode.batch === 8 && sec.prefill.batch === undefined,
    'disaggregate: by default each pool is the plan (TP 4) on 4 GPUs, decode at the plan\'s batch 8, prefill at the core\'s default: ' + JSON.stringify(sec));
  await same(p, 'default');
  const batch = page.locator('#disagg fieldset[data-pool="decode"] input[data-key="batch"]');
  await batch.fill('32');
  await batch.press('Enter');
  await batch.blur();
  await settle(page);
  p = await read();
  k.check(/[?&#]dis\.d\.batch=32\b/.test(p.url) && JSON.parse(p.text).disaggregation.decode.batch === 32, 'disaggregate: the decode batch 32 is in the link (' + p.url.slice(p.url.indexOf('dis.')) + ')');
  const ref = await same(p, 'decode batch 32');
  k.check(ref.result.decode.concurrency === 32, 'disaggregate: the decode pool runs 32 sequences');
  await page.reload();
  await loaded(page);
  await click(page, '#disagg summary');
  p = await read();
  k.check(JSON.parse(p.text).disaggregation.decode.batch === 32 && p.rows.length === 3, 'disaggregate: a reload keeps the pools of the link');
  await click(page, '#disagg .disagg-reset');
  p = await read();
  k.check(!/dis\./.test(p.url) && JSON.parse(p.text).disaggregation.decode.batch === 8, 'disaggregate: Reset drops the pools from the link');
  await page.screenshot({ path: shot('disaggregate.png'), fullPage: true });
  // markup from a link: refused at its path, shown as text
  await go(page, SERVE_TP4 + '&dis.p.tp=' + encodeURIComponent('<img data-pwn="dis" src="x:" onerror="window.__pwned=1">'));
  p = await read();
  k.check(p.errs.some((x) => x.startsWith('/disaggregation/prefill/plan/tp')) && p.pwn === 0 && p.rows.length === 0 && !(await page.evaluate(() => window.__pwned)),
    'disaggregate: a markup TP from a link is an error at its path, as text: ' + p.errs.join(' | ').slice(0, 160));
  // training: no panel
  await go(page, '?ex=tp8pp2');
  k.check(!(await page.isVisible('#disagg')), 'disaggregate: no panel for a training plan');
  k.noErrors(errors.filter((x) => !/x:|ERR_UNKNOWN_URL_SCHEME/.test(x)), 'disaggregate');
}
launchCases.push({ name: 'the Disaggregate panel: pools = cutlab evaluate, in the link, markup refused as text', weight: 2, run: async (k) => disaggPanel(k, (await setup()).httpBase) });
