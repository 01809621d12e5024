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

export default [
  { name: 'the Launch panel: every framework\'s text = cutlab export, as text', weight: 2, run: async (k) => launchPanel(k, (await setup()).httpBase) },
];
