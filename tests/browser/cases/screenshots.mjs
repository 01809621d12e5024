// Screenshots (tests/browser/screenshots, not tracked): 1280×800 pictures of the examples, taken in
// one page (each plan through the URL, no console error on any), the 700-px embeds (each a whole
// load, `embed` is read when the page starts; the serving balancer's too) that must fit in 700 px,
// and docs/explorer.png for
// the README when DOCS_SCREENSHOT asks for it (tests do not touch tracked files).
import fs from 'node:fs';
import path from 'node:path';
import { setup, load, go, shot, docsShot } from '../lib.mjs';
import { balancerEmbed } from './serving.mjs';

const PAGES = [
  ['default-cuts.png', ''],
  ['default-placement.png', '?view=placement'],
  ['default-pipeline.png', '?view=pipeline'],
  ['deepseek-v3-cuts.png', '?ex=deepseek-v3'],
  ['deepseek-v3-placement.png', '?ex=deepseek-v3&view=placement'],
  ['deepseek-v3-pipeline.png', '?ex=deepseek-v3&view=pipeline'],
  ['mixtral-folding-cuts.png', '?ex=mixtral-folding'],
  ['mixtral-folding-placement.png', '?ex=mixtral-folding&view=placement'],
  ['llama3-405b-cp-cuts.png', '?ex=llama3-405b-cp'],
  ['mixtral-zb-h1-pipeline.png', '?model=mixtral-8x22b&cluster=dgx-h100&gpus=128&tp=2&pp=8&ep=8&etp=1&sp=true&distributed_optimizer=true&recompute=selective&schedule=zb-h1&seq_len=4096&global_batch=256&view=pipeline'],
  ['ep8-placement.png', '?ex=ep8&view=placement'],
  ['serve-pp4-pipeline.png', '?ex=serve-pp4'],
  ['serve-tp4-cuts.png', '?ex=serve-tp4'],
  ['serve-dp2-tp8-placement.png', '?ex=dp2-tp8'],
  ['zero3-placement.png', '?ex=zero3'],
];
const EMBEDS = [
  ['embed-timeline-700.png', '?ex=tp8pp2&embed=timeline'],
  ['embed-timeline-405b-700.png', '?ex=llama3-405b&embed=timeline'],
  ['embed-serve-pp4-700.png', '?ex=serve-pp4&embed=pipeline'],
  ['embed-cuts-700.png', '?ex=tp-ep&embed=cuts'],
  ['embed-placement-700.png', '?ex=tp8pp2&embed=placement'],
];

async function pages(k, base) {
  let page = null, errors = null;
  for (const [file, query] of PAGES) {
    const mark = page ? errors.length : 0;
    if (!page) ({ page, errors } = await k.open(base + query));
    else await go(page, query || '?view=cuts');
    await page.screenshot({ path: shot(file) });
    k.noErrors(errors, file, mark);
    // the README's picture: the default page
    if (file === 'default-cuts.png' && docsShot) {
      fs.mkdirSync(path.dirname(docsShot), { recursive: true });
      await page.screenshot({ path: docsShot });
      k.noErrors(errors, 'docs/explorer.png saved', mark);
    }
  }
  // Every example from the text is a plan that fits its GPUs: a reader who opens one sees the cut it
  // illustrates, not an overflow.
  const ids = await page.evaluate(() => window.CL.examples.list.map((x) => x.id));
  for (const id of ids) {
    await go(page, '?ex=' + id);
    const got = await page.evaluate(() => { const r = window.__cutlab.derived.good && window.__cutlab.derived.good.r; return r ? { fits: r.memory.fits, example: window.__cutlab.state.example } : null; });
    k.check(got && got.fits && got.example === id, 'example ' + id + ': evaluates and fits in memory (' + JSON.stringify(got) + ')');
  }
}

// the embeds, one load after the other in one 700-px page
async function embeds(k, base) {
  let page = null, errors = null;
  for (const [file, query] of EMBEDS) {
    const mark = page ? errors.length : 0;
    if (!page) ({ page, errors } = await k.open(base + query, { width: 700, height: 800 }));
    else await load(page, base + query);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    k.check(wide <= 700, file + ': fits in 700 px (' + wide + ')');
    await page.screenshot({ path: shot(file), fullPage: true });
    k.noErrors(errors, file, mark);
  }
  await balancerEmbed(k, page, errors, base);
}

export default [
  { name: 'screenshots: ' + PAGES.length + ' plans and views in one page', weight: 5, run: async (k) => pages(k, (await setup()).fileBase) },
  { name: 'embeds: ' + (EMBEDS.length + 1) + ' views at 700 px (fit, no console errors)', weight: 5, run: async (k) => embeds(k, (await setup()).fileBase) },
];
