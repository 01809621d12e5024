// The explorer in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core), as
// node:test cases sharing ONE browser and one http server (lib.mjs). Each case opens its own
// browser contexts; the cases run a few at a time (their waits are mostly for the page's frames
// and the CLI), and the redraw timing runs alone first so that nothing competes with it.
//   cases/controls.mjs     file:// and http://: loads cleanly; controls → tables = CLI; views; GPU 9;
//                          an invalid field; URL state (back, reload); an invalid plan from a link
//   cases/serving.mjs      serve mode = CLI; the placement view's load balancer (and its embed)
//   cases/pipeline.mjs     the core's timeline() scene = `cutlab schedule`; hover; SVG/PNG export; decode walk
//   cases/hf.mjs           a pasted Hugging Face config.json
//   cases/search.mjs       "Find the best plans" = `cutlab search`; apply a row; outdated; serve; none fits
//   cases/search_worker.mjs  a large search in a worker (file://: on the page): progress, a responsive page, Cancel
//   cases/serving_search.mjs  serve mode: rows and front = `cutlab search --mode infer`; TPOT limit; a point applied; 390 px
//   cases/screenshots.mjs  pictures of the examples, the 700-px embeds, docs/explorer.png (DOCS_SCREENSHOT)
//   cases/hostile.mjs      markup in every URL field and in a pasted config.json: nothing runs, no element
//   cases/csp.mjs          the page under a strict Content-Security-Policy: no violation in any view
//   cases/layout.mjs       390, 700 and 1280 px: no overflow, clipping, ellipsis or overlapping text; screenshots
//   cases/launch.mjs       the Launch panel = `cutlab export` for every format, text never HTML; the
//                          Disaggregate panel = `cutlab evaluate` of its section, in the link
//   cases/a11y.mjs         axe-core: no serious or critical violation in any view, embed or the chapter; keyboard
//   cases/embed.mjs        docs/chapter.html at 640 px: frames sized to their figures (embed.js); embeds at 500/700 px
//   cases/redraw.mjs       change → redraw < 16 ms for Llama 3 405B on 16,384 GPUs in every view
//   cases/lazy.mjs         core.js then core-full.js (web/bridge.js): loading states, prefetch, file://
// Run: node tests/browser/explorer.mjs; BROWSER_CASES=N cases at a time (default 3; 1: one after the
// other); BROWSER_ONLY=REGEX runs the cases whose names match (node's --test-name-pattern would
// also filter out their steps). Env of lib.mjs: WEB_DIR, NATIVE_CLI, CHROMIUM, SCREENSHOT_DIR,
// DOCS_SCREENSHOT. Exit code 0 when every check passes.
import { describe, it, before, after } from 'node:test';
import { Case, setup, teardown } from './lib.mjs';
import controls from './cases/controls.mjs';
import serving from './cases/serving.mjs';
import pipeline from './cases/pipeline.mjs';
import hf from './cases/hf.mjs';
import search from './cases/search.mjs';
import searchWorker from './cases/search_worker.mjs';
import servingSearch from './cases/serving_search.mjs';
import screenshots from './cases/screenshots.mjs';
import redraw from './cases/redraw.mjs';
import hostile from './cases/hostile.mjs';
import csp from './cases/csp.mjs';
import layout from './cases/layout.mjs';
import launch from './cases/launch.mjs';
import embed from './cases/embed.mjs';
import a11y from './cases/a11y.mjs';
import lazy from './cases/lazy.mjs';

const only = process.env.BROWSER_ONLY ? new RegExp(process.env.BROWSER_ONLY) : null;
const all = [...controls, ...serving, ...pipeline, ...hf, ...search, ...searchWorker, ...servingSearch, ...screenshots, ...redraw, ...hostile, ...csp, ...layout, ...launch, ...embed, ...a11y, ...lazy].filter((c) => !only || only.test(c.name));
const alone = all.filter((c) => c.alone);
// the longest first, so the last ones to finish are short
const together = all.filter((c) => !c.alone).sort((a, b) => (b.weight || 1) - (a.weight || 1));
const concurrency = Math.max(1, Number(process.env.BROWSER_CASES) || 3);

function register(c) {
  it(c.name, { timeout: 180000 }, async (t) => {
    const k = new Case(t);
    try {
      await c.run(k);
    } finally {
      await k.close();
    }
    Case.verdict(k.cur);
  });
}

const t0 = Date.now();
before(setup);
after(async () => {
  await teardown();
  console.log(Case.checks + ' checks in ' + ((Date.now() - t0) / 1000).toFixed(1) + ' s');
});
describe('explorer: alone', () => alone.forEach(register));
describe('explorer', { concurrency }, () => together.forEach(register));
