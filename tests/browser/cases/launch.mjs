// The Launch panel: for the plan on the page, each framework's text is `cutlab export --to FORMAT`
// of the page's config, byte for byte, shown as text (no element inside); training plans offer the
// training frameworks and serving plans vLLM and SGLang; Copy leaves the text copied or selected.
import { execFileSync } from 'node:child_process';
import { setup, click, go, cli, shot } from '../lib.mjs';

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
