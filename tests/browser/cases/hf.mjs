// A pasted Hugging Face config.json sets the model (the Llama 3 8B config gives the preset's
// parameters), survives a reload, and bad JSON or a partial config is reported in the box.
import { setup, select, click, reload, cliEvaluate, shot } from '../lib.mjs';

const LLAMA3_8B_HF = { hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 32,
  num_key_value_heads: 8, vocab_size: 128256, tie_word_embeddings: false };
const BOX = '[data-path="/model/hf_config"]';

async function hfPaste(k, base) {
  const { page, errors } = await k.open(base + '?ex=zero3');
  await page.click(BOX + ' summary');
  const box = page.locator(BOX + ' textarea');
  const use = async (text) => { await box.fill(text); await click(page, BOX + ' button.use'); };
  // not JSON: a clear message in the box, the plan untouched
  const before = await page.evaluate(() => JSON.stringify(window.__cutlab.state));
  await use('{"hidden_size": 4096, "num_hidden_layers": 32,,}');
  const bad = await page.evaluate(() => ({ msg: document.querySelector('[data-path="/model/hf_config"] .err').textContent,
    invalid: document.querySelector('[data-path="/model/hf_config"]').classList.contains('invalid'), hf: window.__cutlab.state.hf, state: JSON.stringify(window.__cutlab.state) }));
  k.check(bad.invalid && /^Not valid JSON/.test(bad.msg) && bad.hf === null && bad.state === before, 'hf: invalid JSON is reported in the box: ' + bad.msg);
  await page.screenshot({ path: shot('hf-invalid-json.png') });
  // JSON, but not a whole config: the core's errors at /model/hf_config/… land in the box
  await use(JSON.stringify({ hidden_size: 4096, num_attention_heads: 32 }));
  const missing = await page.$eval(BOX + ' .err', (e) => e.textContent);
  k.check(/num_hidden_layers/.test(missing) && /vocab_size/.test(missing), 'hf: the core\'s errors for a partial config are shown in the box: ' + missing.slice(0, 90) + '…');
  // the Llama 3 8B config.json: the same parameters as the preset
  await use(JSON.stringify(LLAMA3_8B_HF, null, 2));
  const got = await page.evaluate(() => ({ ok: window.__cutlab.derived.ok, cfg: window.__cutlab.derived.cfg, params: window.__cutlab.derived.r && window.__cutlab.derived.r.params,
    select: document.querySelector('[data-path="/model"] select').selectedOptions[0].textContent, layers: document.querySelector('[data-path="/model/layers"] input').value,
    disabled: document.querySelector('[data-path="/model/layers"] input').disabled, url: location.href }));
  const ref = await cliEvaluate(Object.assign({}, got.cfg, { model: 'llama3-8b' }));
  k.check(got.ok && JSON.stringify(got.cfg.model) === JSON.stringify({ hf_config: LLAMA3_8B_HF }), 'hf: the page sends model {"hf_config": …}');
  k.check(ref.status === 0 && JSON.stringify(got.params) === JSON.stringify(ref.json.params), 'hf: the Llama 3 8B config.json gives the preset llama3-8b\'s parameters (' + (got.params && got.params.total) + ')');
  k.check(/config\.json/.test(got.select) && got.layers === '32' && got.disabled, 'hf: the model select says "' + got.select + '", dimensions 32 layers shown, read-only');
  k.check(/[?&#]hf=/.test(got.url), 'hf: the URL holds the config.json');
  await page.screenshot({ path: shot('hf-llama3-8b.png') });
  await reload(page);
  const back = await page.evaluate(() => ({ hf: window.__cutlab.state.hf, ok: window.__cutlab.derived.ok, text: document.querySelector('[data-path="/model/hf_config"] textarea').value }));
  k.check(JSON.stringify(back.hf) === JSON.stringify(LLAMA3_8B_HF) && back.ok && JSON.parse(back.text).hidden_size === 4096, 'hf: reload keeps the pasted model (and the box shows it)');
  // back to a preset
  await select(page, '/model', 'llama3-70b');
  k.check((await page.evaluate(() => window.__cutlab.state.hf)) === null, 'hf: choosing a preset leaves the pasted model');
  k.noErrors(errors, 'hf');
}

export default [
  { name: 'paste a Hugging Face config.json: bad JSON, partial config, Llama 3 8B, reload', weight: 3, run: async (k) => hfPaste(k, (await setup()).fileBase) },
];
