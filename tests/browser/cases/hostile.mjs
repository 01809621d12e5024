// Hostile input (issue 15): markup in every URL field, in a pasted config.json and in the state of
// a link must reach the DOM as text. Each payload, if parsed as HTML, would create an element
// marked data-pwn and run `window.__pwned = …` (onerror of a broken image, onload of an SVG); the
// checks are that no such element exists and no such script ran, in every view, the GPU panel, the
// search panel and the embeds, and that the payload still shows as text where the page names it.
import { setup, go, click, settle } from '../lib.mjs';

const img = (tag) => '<img data-pwn="' + tag + '" src="x:" onerror="window.__pwned=(window.__pwned||[]).concat(\'' + tag + '\')">';
const svg = (tag) => '<svg data-pwn="' + tag + '" onload="window.__pwned=(window.__pwned||[]).concat(\'' + tag + '\')"></svg>';
// a payload that also closes an attribute and a tag around it
const attr = (tag) => '"\'><img data-pwn="' + tag + '" src="x:" onerror="window.__pwned=(window.__pwned||[]).concat(\'' + tag + '\')">';

// Every field a link carries, one hostile value at a time, on a plan that is otherwise valid (so
// the value reaches the tables, the footer and the captions) or invalid (so it reaches the errors).
const BASE = 'model=llama3-8b&cluster=dgx-h100&gpus=16&tp=8&pp=2&global_batch=16&seq_len=4096';
const enc = encodeURIComponent;
const URLS = [
  ['m.name', BASE + '&m.name=' + enc(img('m.name'))],
  ['c.gpu', BASE + '&c.gpu=' + enc(svg('c.gpu'))],
  ['c.name', BASE + '&c.name=' + enc(attr('c.name'))],
  ['c.node_link', BASE + '&c.node_link=' + enc('<i data-pwn=nl>PCIe</i>')],  // short enough to be accepted: in the tables and figures
  ['model', 'model=' + enc(img('model')) + '&cluster=dgx-h100&gpus=16&tp=8&global_batch=16'],
  ['cluster', 'model=llama3-8b&cluster=' + enc(img('cluster')) + '&gpus=16&tp=8&global_batch=16'],
  ['hf _name_or_path', 'model=llama3-8b&cluster=dgx-h100&gpus=8&tp=8&global_batch=8&hf=' + enc(JSON.stringify({ _name_or_path: img('hf-name'),
    hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 32, num_key_value_heads: 8, vocab_size: 128256 }))],
  ['hf model_type', 'model=llama3-8b&cluster=dgx-h100&gpus=8&tp=8&global_batch=8&hf=' + enc(JSON.stringify({ model_type: svg('hf-type'),
    hidden_act: 'silu', hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 32, num_key_value_heads: 8, vocab_size: 128256 }))],
  ['hf unknown act', 'model=llama3-8b&cluster=dgx-h100&gpus=8&tp=8&global_batch=8&hf=' + enc(JSON.stringify({ hidden_act: img('hf-act'),
    hidden_size: 4096, intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 32, num_key_value_heads: 8, vocab_size: 128256 }))],
  ['schedule', BASE + '&schedule=' + enc(img('schedule'))],
  ['recompute', BASE + '&recompute=' + enc(img('recompute'))],
  ['rank_order', BASE + '&rank_order=' + enc(attr('rank_order'))],
  ['dtype', BASE + '&dtype=' + enc(img('dtype'))],
  ['mode', BASE + '&mode=' + enc(img('mode'))],
  ['recompute_modules', BASE + '&recompute=selective&recompute_modules=' + enc(img('modules'))],
  ['a plan key', BASE + '&' + enc(img('plan-key')) + '=1'],
  ['a model key', BASE + '&m.' + enc(img('model-key')) + '=1'],
  ['a cluster key', BASE + '&c.' + enc(svg('cluster-key')) + '=1'],
  ['gpus', 'model=llama3-8b&cluster=dgx-h100&tp=8&global_batch=16&gpus=' + enc(img('gpus'))],
  ['gpu', BASE + '&view=placement&gpu=' + enc(img('gpu'))],
  ['layer', BASE + '&layer=' + enc(img('layer'))],
  ['view', BASE + '&view=' + enc(img('view'))],
  ['ex', 'ex=' + enc(img('ex'))],
];

// What a page holds of the payloads: elements created from them, scripts they ran.
const probe = (page) => page.evaluate(() => ({
  pwned: window.__pwned || null,
  elements: Array.from(document.querySelectorAll('[data-pwn], [onerror], [onload]')).map((e) => e.outerHTML.slice(0, 80)),
  status: document.body.dataset.status,
}));

async function hostileUrls(k, base) {
  const { page, errors } = await k.open();
  for (const [field, q] of URLS) {
    for (const view of ['cuts', 'placement', 'pipeline']) {
      await page.goto(base + '?' + q + (/[?&]view=/.test(q) ? '' : '&view=' + view));
      await page.waitForFunction(() => document.body.dataset.status === 'ready' || document.body.dataset.status === 'error', null, { timeout: 30000 });
      await settle(page);
      if (view === 'cuts') {
        // the search panel names the model and the GPU
        const button = await page.$('#find-plans');
        if (button && !(await button.isDisabled())) await click(page, '#find-plans').catch(() => {});
        await page.waitForFunction(() => { const p = document.getElementById('search-panel'); return p.hidden || !/searching/i.test(p.textContent); }, null, { timeout: 30000 });
      }
      const got = await probe(page);
      k.check(got.status === 'ready' && !got.pwned && got.elements.length === 0,
        'hostile ' + field + ' (' + view + '): page ready, nothing ran, no element from the payload' + (got.pwned || got.elements.length ? ' — ran ' + JSON.stringify(got.pwned) + ', elements ' + JSON.stringify(got.elements) : ''));
      if (/[?&]view=/.test(q)) break;
    }
  }
  // the name the link gave still shows, as text
  await page.goto(base + '?' + URLS[0][1]);
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
  await settle(page);
  const foot = await page.$eval('#foot', (e) => e.textContent);
  k.check(foot.includes('<img data-pwn="m.name"'), 'hostile m.name: the footer shows the name as text');
  // the in-node link control is labelled by the cluster's name for the link, as text
  const linkLabel = () => page.$eval('[data-path="/cluster/nvlink_GBps"] label', (e) => e.textContent);
  k.check((await linkLabel()) === 'NVLink GB/s', 'the DGX H100 link control reads "NVLink GB/s" (' + (await linkLabel()) + ')');
  await page.goto(base + '?' + URLS[3][1]);
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
  await settle(page);
  k.check((await linkLabel()) === '<i data-pwn=nl>PCIe</i> GB/s', 'hostile c.node_link: the link control shows the name as text (' + (await linkLabel()) + ')');
  // the embeds (their own footer and caption)
  for (const embed of ['cuts', 'placement', 'pipeline', 'tables']) {
    for (const i of [0, 1]) {
      await page.goto(base + '?' + URLS[i][1] + '&embed=' + embed);
      await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
      await settle(page);
      const got = await probe(page);
      k.check(!got.pwned && got.elements.length === 0, 'hostile ' + URLS[i][0] + ' in embed=' + embed + ': nothing ran' + (got.pwned || got.elements.length ? ' — ' + JSON.stringify(got) : ''));
    }
  }
  // a state change through the fragment (the page's hashchange path)
  await page.goto(base + '?' + BASE);
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
  await go(page, BASE + '&m.name=' + enc(img('hash')) + '&c.gpu=' + enc(svg('hash-gpu')));
  const got = await probe(page);
  k.check(!got.pwned && got.elements.length === 0, 'hostile names through the fragment: nothing ran');
  // a pool's system in the link (the Disaggregate panel): the core's error names it, as text
  await page.goto(base + '?model=llama3-8b&cluster=dgx-h100&gpus=8&tp=2&mode=infer&dis.d.cluster=' + enc(img('dis-cluster')));
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
  await page.click('#disagg summary');
  await page.waitForFunction(() => document.querySelector('#disagg .disagg-errors li'), null, { timeout: 30000 });
  const dis = await probe(page), disErrors = await page.$eval('#disagg .disagg-errors', (e) => e.textContent);
  k.check(!dis.pwned && dis.elements.length === 0 && disErrors.includes('/disaggregation/decode/cluster/preset') && disErrors.includes('<img data-pwn="dis-cluster"'),
    'hostile dis.d.cluster: nothing ran, the pool\'s error shows the name as text (' + disErrors.slice(0, 90) + ')');
  k.noErrors(errors.filter((e) => !/x:|ERR_UNKNOWN_URL_SCHEME/.test(e)), 'hostile URLs');
}

// A pasted config.json whose strings are markup.
async function hostilePaste(k, base) {
  const { page, errors } = await k.open(base + '?' + BASE);
  const BOX = '[data-path="/model/hf_config"]';
  await page.click(BOX + ' summary');
  const cfg = { model_type: svg('paste-type'), _name_or_path: img('paste-name'), architectures: [img('paste-arch')], hidden_act: 'silu', hidden_size: 4096,
    intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 32, num_key_value_heads: 8, vocab_size: 128256 };
  for (const text of [JSON.stringify(cfg), JSON.stringify(Object.assign({}, cfg, { hidden_act: img('paste-act') })),
    JSON.stringify({ [img('paste-key')]: 1, hidden_size: attr('paste-value') }), img('paste-not-json')]) {
    await page.locator(BOX + ' textarea').fill(text);
    await click(page, BOX + ' button.use');
    for (const view of ['cuts', 'placement', 'pipeline']) {
      await click(page, '#tabs [data-view="' + view + '"]');
      const got = await probe(page);
      k.check(!got.pwned && got.elements.length === 0, 'hostile paste ' + text.slice(0, 40) + '… (' + view + '): nothing ran' + (got.pwned || got.elements.length ? ' — ' + JSON.stringify(got) : ''));
    }
  }
  k.noErrors(errors.filter((e) => !/x:|ERR_UNKNOWN_URL_SCHEME/.test(e)), 'hostile paste');
}

// JSON the core would refuse is refused by the page too (strict-json.js): a key named twice, with its
// path, and nesting 50,000 levels deep (JSON.parse alone takes both), in the box and from a link.
async function strictPaste(k, base) {
  const { page, errors } = await k.open(base + '?' + BASE);
  const BOX = '[data-path="/model/hf_config"]';
  await page.click(BOX + ' summary');
  const before = await page.evaluate(() => window.__cutlab.derived.cfg.model);
  const paste = async (text) => {
    await page.locator(BOX + ' textarea').fill(text);
    await click(page, BOX + ' button.use');
    return page.$eval(BOX + ' .err', (e) => e.textContent);
  };
  const dup = await paste('{"hidden_size": 4096, "rope_scaling": {"factor": 8, "factor": 2}, "num_hidden_layers": 32}');
  k.check(/appears twice/.test(dup) && dup.includes('/model/hf_config/rope_scaling/factor'), 'a duplicate key is refused with its path: ' + dup);
  const deep = await paste('['.repeat(50000) + ']'.repeat(50000));
  k.check(/deeper than 64/.test(deep), 'nesting 50,000 deep is refused: ' + deep.slice(0, 80));
  const after = await page.evaluate(() => window.__cutlab.derived.cfg.model);
  k.check(JSON.stringify(before) === JSON.stringify(after), 'the model is unchanged');
  // the same from a link: the page starts, with the preset model
  await page.goto(base + '?' + BASE + '&hf=' + encodeURIComponent('{"a":' .repeat(50000) + '1' + '}'.repeat(50000)));
  await page.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 30000 });
  const m = await page.evaluate(() => window.__cutlab.derived.cfg.model);
  k.check(m === 'llama3-8b', 'a link with hf nested 50,000 deep opens on the preset model (' + JSON.stringify(m).slice(0, 40) + ')');
  k.noErrors(errors, 'strict paste');
}

export default [
  { name: 'strict JSON in the page: duplicate keys and deep nesting refused', weight: 1, run: async (k) => strictPaste(k, (await setup()).fileBase) },
  { name: 'hostile URL fields: no markup from a link runs or becomes an element', weight: 4, run: async (k) => hostileUrls(k, (await setup()).httpBase) },
  { name: 'hostile pasted config.json: no markup runs or becomes an element', weight: 2, run: async (k) => hostilePaste(k, (await setup()).fileBase) },
];
