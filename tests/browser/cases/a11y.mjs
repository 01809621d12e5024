// Every reader (issue 14 item 4): an accessibility audit with axe-core (npm devDependency) of the
// page in each view, in serve mode, with the Terms and Launch panels open, of an embed and of the
// chapter: no serious or critical violation (WCAG 2 A and AA rules, contrast included). axe is
// injected as a script's content, so these pages run without the strict CSP (cases/csp.mjs checks
// that). Keyboard: Tab reaches the tabs, the arrow keys move between them (roving tabindex,
// aria-selected follows), the canvas takes the focus with a visible ring and the arrow keys move
// from GPU to GPU in the placement view (Enter opens the GPU), every control is reachable. Every
// figure has a name and a description in words, and a table, generated for the plan shown.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setup, load, click, settle } from '../lib.mjs';

const require = createRequire(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../package.json'));
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

// Runs axe on the page; returns the violations as { id, impact, nodes, sample }.
async function audit(page) {
  if (!(await page.evaluate(() => !!window.axe))) await page.addScriptTag({ content: AXE });
  return page.evaluate(async () => {
    const res = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }, iframes: false });
    return res.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length,
      sample: v.nodes.slice(0, 40).map((n) => n.target.join(' ') + (n.any[0] && n.any[0].message ? ' (' + n.any[0].message.slice(0, 120) + ')' : '')).join('; ') }));
  });
}
function report(k, what, v) {
  const count = {};
  for (const x of v) count[x.impact] = (count[x.impact] || 0) + x.nodes;
  k.log(what + ': ' + (v.length ? Object.entries(count).map(([i, n]) => n + ' ' + i).join(', ') + ' — ' + v.map((x) => x.id + '×' + x.nodes).join(', ') : 'no violation'));
  const bad = v.filter((x) => x.impact === 'serious' || x.impact === 'critical');
  k.check(bad.length === 0, what + ': no serious or critical axe violation' + (bad.length ? ': ' + bad.map((x) => x.id + ' [' + x.impact + '] ' + x.sample).join(' | ') : ''));
}

async function axePages(k) {
  const { httpBase } = await setup();
  const { page, errors } = await k.open(null);
  await k.step('axe: the page in every view, serve mode, panels open', async () => {
    await load(page, httpBase);
    report(k, 'default plan, Cuts', await audit(page));
    for (const view of ['placement', 'pipeline']) {
      await click(page, '#tabs [data-view="' + view + '"]');
      report(k, 'default plan, ' + view, await audit(page));
    }
    await page.evaluate(() => { document.querySelector('#terms').open = true; document.querySelector('#launch').open = true; });
    await settle(page);
    report(k, 'Terms and Launch open', await audit(page));
    // The search panel's table (axis-coloured headers), after a small search has finished.
    await load(page, httpBase + '?model=llama3-8b&cluster=dgx-h100&gpus=8&global_batch=64');
    await page.click('#find-plans');
    await page.waitForFunction(() => !document.getElementById('find-plans').disabled && document.querySelector('#search-panel .search-counts'), null, { timeout: 60000 });
    await settle(page);
    report(k, 'search results', await audit(page));
    await load(page, httpBase + '?ex=serve-tp8pp2&view=placement');
    report(k, 'serve example, placement', await audit(page));
    await load(page, httpBase + '?ex=mixtral-folding');
    report(k, 'folding example, cuts', await audit(page));
    k.noErrors(errors, 'axe pages');
  });
  await k.step('axe: embeds and the chapter', async () => {
    for (const q of ['ex=tp8pp2&embed=cuts', 'ex=tp8pp2&embed=placement', 'ex=tp8pp2&embed=pipeline', 'ex=zero3&embed=table']) {
      await load(page, httpBase + '?' + q);
      report(k, q, await audit(page));
    }
    await page.goto(httpBase.replace(/index\.html$/, 'chapter.html'));
    report(k, 'chapter.html (its own markup)', await audit(page));
  });
}

async function keyboard(k) {
  const { httpBase } = await setup();
  const { page, errors } = await k.open(null);
  await load(page, httpBase);
  const focused = () => page.evaluate(() => {
    const e = document.activeElement;
    return e ? { tag: e.tagName, id: e.id, view: e.dataset.view || null, role: e.getAttribute('role'), outline: getComputedStyle(e).outlineStyle, ow: parseFloat(getComputedStyle(e).outlineWidth) } : null;
  });
  await k.step('keyboard: tabs with the arrow keys, aria-selected follows', async () => {
    const tabs = await page.evaluate(() => [...document.querySelectorAll('#tabs [role=tab]')].map((b) => ({ sel: b.getAttribute('aria-selected'), ti: b.tabIndex, ctl: b.getAttribute('aria-controls') })));
    k.check(tabs.filter((t) => t.ti === 0).length === 1 && tabs.every((t) => t.ti === 0 || t.ti === -1), 'one tab in the Tab order (roving tabindex): ' + tabs.map((t) => t.ti).join(' '));
    k.check(tabs.every((t) => t.ctl === 'view'), 'each tab controls the view panel');
    // Tab from the control before the tabs lands on the selected tab
    let n = 0, f = await focused();
    await page.focus('#find-plans').catch(() => {});
    while (n++ < 80) {
      await page.keyboard.press('Tab');
      f = await focused();
      if (f && f.role === 'tab') break;
    }
    k.check(f && f.role === 'tab' && f.view === 'cuts', 'Tab reaches the selected tab (Cuts)');
    k.check(f && f.outline !== 'none' && f.ow >= 2, 'the focused tab shows a focus ring (' + (f && f.outline + ' ' + f.ow) + ')');
    await page.keyboard.press('ArrowRight');
    await settle(page);
    f = await focused();
    k.check(f.view === 'placement', 'ArrowRight moves to Placement (' + f.view + ')');
    k.check((await page.evaluate(() => window.__cutlab.state.view)) === 'placement', 'and shows it');
    k.check((await page.evaluate(() => document.querySelector('#tabs [data-view=placement]').getAttribute('aria-selected'))) === 'true', 'aria-selected follows');
    await page.keyboard.press('End');
    await settle(page);
    k.check((await focused()).view === 'pipeline', 'End: the last tab');
    await page.keyboard.press('ArrowRight');
    await settle(page);
    k.check((await focused()).view === 'cuts', 'ArrowRight wraps to the first');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    await settle(page);
    k.check((await focused()).view === 'placement', 'Home, ArrowRight: Placement');
  });
  await k.step('keyboard: the figure takes the focus, arrow keys move between GPUs, Enter opens one', async () => {
    // after the tabs: the view's download buttons, then the figure
    let f = null;
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      f = await focused();
      if (f.tag === 'CANVAS') break;
    }
    k.check(f.tag === 'CANVAS', 'Tab from the tabs reaches the figure (' + f.tag + ')');
    k.check(f.outline !== 'none' && f.ow >= 2, 'the figure shows a focus ring');
    const live = () => page.evaluate(() => document.querySelector('#figure-focus').textContent);
    await page.keyboard.press('ArrowRight');
    await settle(page);
    k.check(/^GPU 0\b/.test(await live()), 'the first arrow key chooses GPU 0 (' + (await live()).slice(0, 60) + ')');
    await page.keyboard.press('ArrowRight');
    await settle(page);
    const a = await live();
    k.check(/^GPU 1\b/.test(a), 'ArrowRight: GPU 1 is announced (' + a.slice(0, 200) + ')');
    await page.keyboard.press('ArrowDown');
    await settle(page);
    const b = await page.evaluate(() => document.querySelector('#figure-focus').textContent);
    k.check(/GPU \d+/.test(b) && !/GPU 1\b/.test(b), 'ArrowDown: another GPU (' + b + ')');
    await page.keyboard.press('Enter');
    await settle(page);
    const open = await page.evaluate(() => ({ gpu: window.__cutlab.state.gpu, panel: !document.querySelector('#gpu-panel').hidden }));
    k.check(open.panel && Number.isInteger(open.gpu), 'Enter opens that GPU\'s panel (GPU ' + open.gpu + ')');
  });
  await k.step('keyboard: a control reached with Shift+Tab from below is not under the sticky header', async () => {
    // From the foot of the page back up through the main column: each control the focus scrolls to
    // lands below the header (WCAG 2.2, 2.4.11 Focus Not Obscured; html's scroll-padding-top).
    await page.focus('#terms summary');
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    let hidden = null, scrolled = 0;
    for (let i = 0; i < 40 && !hidden; i++) {
      const before = await page.evaluate(() => window.scrollY);
      await page.keyboard.press('Shift+Tab');
      const at = await page.evaluate(() => {
        const e = document.activeElement, r = e ? e.getBoundingClientRect() : null;
        return e && e.closest('#main') ? { what: e.tagName + (e.id ? '#' + e.id : ''), top: r.top, h: r.height, header: document.getElementById('top').getBoundingClientRect().bottom, y: window.scrollY } : null;
      });
      if (!at) break;
      if (at.y !== before) scrolled += 1;
      if (at.h > 0 && at.h < 300 && at.top < at.header - 1) hidden = at;
    }
    k.check(scrolled > 0, 'Shift+Tab from the foot scrolls the page up (' + scrolled + ' times)');
    k.check(!hidden, 'no control reached that way is under the header' + (hidden ? ' (' + hidden.what + ' at ' + Math.round(hidden.top) + ' px, the header to ' + Math.round(hidden.header) + ')' : ''));
  });
  await k.step('keyboard: every control of the form is reachable by Tab', async () => {
    // every visible, enabled control of the panel, by its index among the panel's elements
    const want = await page.evaluate(() => { const all = [...document.querySelectorAll('#controls *')];
      const folded = (e) => { const d = e.closest('details:not([open])'); return d && !(e.matches('summary') && e.parentElement === d); };
      return all.filter((e) => e.matches('select, input, button, textarea, summary') && e.getClientRects().length && !e.disabled && e.tabIndex >= 0 && !folded(e))
        .map((e) => all.indexOf(e)); });
    await page.focus('#example');
    const seen = new Set();
    for (let i = 0; i < 300; i++) {
      const at = await page.evaluate(() => { const e = document.activeElement; return e && e.closest('#controls') ? [...document.querySelectorAll('#controls *')].indexOf(e) : null; });
      if (at === null) break;
      seen.add(at);
      await page.keyboard.press('Tab');
    }
    const missed = await page.evaluate((idx) => { const all = [...document.querySelectorAll('#controls *')]; return idx.map((i) => all[i].id || all[i].outerHTML.slice(0, 60)); },
      want.filter((i) => !seen.has(i)));
    k.check(missed.length === 0, 'Tab visits every visible control of the panel (' + (want.length - missed.length) + ' of ' + want.length + ')' + (missed.length ? ': missed ' + missed.slice(0, 6).join(' | ') : ''));
  });
  k.noErrors(errors, 'keyboard');
}

// Every figure in words (figure-text.js): the canvas's name and description come from the scene
// of the view and the plan shown, for any plan; the table opens with the details.
async function words(k) {
  const { httpBase } = await setup();
  const { page, errors } = await k.open(null);
  for (const [q, gpus, parts] of [['?ex=tp8pp2', '16', ['TP 8 inside a node', 'PP 2 across 2 nodes', 'layers 41–80']],
    ['?ex=deepseek-v3', '2,048', ['PP 16', 'EP 64']]]) {
    await k.step('the figures of ' + q + ' in words', async () => {
      await load(page, httpBase + q);
      for (const view of ['cuts', 'placement', 'pipeline']) {
        await click(page, '#tab-' + view);
        await page.evaluate(() => { document.querySelector('#figure-text').open = true; });
        await settle(page);
        const t = await page.evaluate(() => {
          const c = document.querySelector('#canvas');
          const desc = document.getElementById(c.getAttribute('aria-describedby'));
          return { label: c.getAttribute('aria-label'), role: c.getAttribute('role'), desc: desc ? desc.textContent : '',
            rows: document.querySelectorAll('#figure-table tbody tr').length, caption: (document.querySelector('#figure-table caption') || {}).textContent };
        });
        k.check(t.role === 'img' && t.label && t.label !== 'Selected view' && t.label.toLowerCase().includes(view), view + ': the canvas is named (' + t.label + ')');
        const want = parts.filter((p) => view !== 'pipeline' || !p.startsWith('layers'));
        k.check(t.desc.startsWith(gpus + ' GPUs = ') && want.every((p) => t.desc.includes(p)), view + ': its description says ' + gpus + ' GPUs, ' + parts.join(', ') + ' (' + t.desc.slice(0, 160) + '…)');
        k.check(t.rows > 0, view + ': the table "' + t.caption + '" has ' + t.rows + ' rows');
      }
    });
  }
  k.noErrors(errors, 'figures in words');
}

export default [
  { name: 'a11y: axe-core finds no serious or critical violation', weight: 3, run: axePages },
  { name: 'a11y: keyboard, tabs and GPUs with the arrow keys', weight: 1, run: keyboard },
  { name: 'a11y: every figure in words, from its scene', weight: 1, run: words },
];
