// Strict Content-Security-Policy (issue 15): the page served with
//   default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; worker-src 'self' blob:
// loads, evaluates and draws every view, the tables, the search panel and the examples with no
// violation (the search in its Web Worker too): no inline handler, no style attribute in markup, no eval. Violations are counted from
// the page's securitypolicyviolation events (and the console's CSP errors).
import { setup, load, click, settle } from '../lib.mjs';

export const POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; worker-src 'self' blob:";

async function strict(k) {
  const { httpBase } = await setup();
  const { page, errors } = await k.open(null);
  // The policy as a response header of the page and of the search's worker script (what an
  // embedder's server sends; a worker runs under its own script's policy).
  await page.route((u) => u.pathname.endsWith('/index.html') || u.pathname.endsWith('/search-worker.js'), async (route) => {
    const res = await route.fetch();
    await route.fulfill({ response: res, headers: { ...res.headers(), 'content-security-policy': POLICY } });
  });
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || '') + ' ' + (e.sample || '').slice(0, 60)));
  });
  const violations = async () => page.evaluate(() => window.__csp);
  await k.step('strict CSP: the page loads, every view and panel with no violation', async () => {
    await load(page, httpBase + '?model=mixtral-8x22b&cluster=dgx-h100&gpus=128&tp=2&pp=8&ep=8&etp=1&sp=true&global_batch=256&seq_len=4096&recompute=selective');
    k.check((await page.evaluate(() => document.body.dataset.status)) === 'ready', 'the page is ready under the policy');
    for (const view of ['placement', 'pipeline', 'cuts']) {
      await click(page, '#tabs button[data-view="' + view + '"]');
      await settle(page);
    }
    await click(page, '#find-plans');
    await page.waitForFunction(() => !document.querySelector('#search-panel').hidden && !/searching/i.test(document.querySelector('#search-panel').textContent), null, { timeout: 30000 });
    const runner = await page.$eval('#search-panel', (p) => p.dataset.runner);
    k.check(runner === 'worker', 'the search ran in its worker under the policy (' + runner + ')');
    await page.selectOption('#examples select', 'deepseek-v3');
    await settle(page);
    const v = await violations();
    k.check(v.length === 0, 'no CSP violation' + (v.length ? ': ' + [...new Set(v)].slice(0, 8).join(' | ') : ''));
    const cspErrors = errors.filter((e) => /Content Security Policy/i.test(e));
    k.check(cspErrors.length === 0, 'no CSP error in the console' + (cspErrors.length ? ': ' + cspErrors.slice(0, 3).join(' | ') : ''));
  });
}

export default [{ name: 'strict CSP: no violation anywhere', weight: 2, run: strict }];
