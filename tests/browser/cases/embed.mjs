// Embeds that fit (issue 14 item 2): an embedded view posts its content height to its parent
// ({type: 'cutlab:height', height, id}); web/embed.js sizes each frame to it; docs/chapter.html
// (built beside index.html) shows every figure whole at 640 px: each frame as tall as its content
// (no scroll bar inside it), nothing wider than the page. embed.js ignores messages of another
// shape, out of bounds, or from a window that is not one of its frames. embed=table is the
// five-axis table, every column, at 500 and 700 px; every embed fits 500 and 700 px across.
import { setup, load, settle, shot } from '../lib.mjs';

// In a frame (or a page): does the document scroll inside its viewport?
function fit() {
  const d = document.documentElement;
  return { status: document.body.dataset.status, sh: d.scrollHeight, ch: d.clientHeight, sw: d.scrollWidth, cw: d.clientWidth,
    body: Math.ceil(document.body.getBoundingClientRect().height),
    // a card that scrolls sideways hides part of its table
    inner: [...document.querySelectorAll('.tcard, .scroll')].filter((e) => e.getClientRects().length && !e.closest('details:not([open])') && e.scrollWidth > e.clientWidth + 1)
      .map((e) => e.className + ' ' + e.scrollWidth + '>' + e.clientWidth) };
}

async function frames(page) {
  const els = await page.$$('iframe.cutlab-embed');
  const out = [];
  for (const el of els) out.push({ el, frame: await el.contentFrame(), id: await el.evaluate((f) => new URL(f.src).searchParams.get('embed_id')) });
  return out;
}

// Every frame loaded, drawn, and sized to the height it last reported.
async function allSized(page, list) {
  for (const { frame } of list) {
    await frame.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 60000 });
    await settle(frame);
  }
  await page.waitForFunction(() => [...document.querySelectorAll('iframe.cutlab-embed')].every((f) => {
    const h = Number(f.dataset.cutlabHeight);
    return h > 0 && Math.abs(f.getBoundingClientRect().height - h) < 1 && Math.abs(f.contentDocument.body.getBoundingClientRect().height - h) <= 1;
  }), null, { timeout: 30000 });
}

async function chapter(k) {
  const { httpBase } = await setup();
  const { page, errors } = await k.open(null, { width: 640, height: 900 });
  const url = httpBase.replace(/index\.html$/, 'chapter.html');
  await k.step('docs/chapter.html at 640 px: every figure as tall as its content, nothing overflows', async () => {
    await page.goto(url);
    await page.waitForFunction(() => document.querySelectorAll('cutlab-figure > iframe').length === document.querySelectorAll('cutlab-figure').length);
    const list = await frames(page);
    k.check(list.length >= 4, 'the chapter embeds at least four figures (' + list.length + ')');
    k.check(await page.evaluate(() => document.querySelectorAll('cutlab-figure > iframe.cutlab-embed').length >= 1), '<cutlab-figure> made its frame');
    await allSized(page, list);
    for (const { el, frame, id } of list) {
      const f = await frame.evaluate(fit);
      const h = await el.evaluate((e) => e.getBoundingClientRect().height);
      k.check(f.status === 'ready', id + ': the figure is ready');
      k.check(f.sh <= f.ch + 1, id + ': no vertical scroll bar inside the frame (content ' + f.sh + ' px, frame ' + f.ch + ' px)');
      k.check(Math.abs(h - f.body) <= 1, id + ': the frame is its content\'s height (' + Math.round(h) + ' px, content ' + f.body + ' px)');
      k.check(f.sw <= f.cw + 1, id + ': nothing wider than the frame (' + f.sw + ' px in ' + f.cw + ')');
      k.check(f.inner.length === 0, id + ': no table scrolls sideways inside its card' + (f.inner.length ? ': ' + f.inner.join(', ') : ''));
    }
    const top = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth, cw: document.documentElement.clientWidth,
      wide: [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map((e) => e.tagName) }));
    k.check(top.sw <= top.cw + 1 && top.wide.length === 0, 'the chapter does not overflow horizontally' + (top.wide.length ? ': ' + top.wide.join(', ') : ''));
    await page.screenshot({ path: shot('chapter-640.png'), fullPage: true });
    k.noErrors(errors, 'chapter');
  });

  await k.step('embed.js: messages of another shape, out of bounds or from another window are ignored', async () => {
    const list = await frames(page);
    const { el, frame } = list[0];
    const before = await el.evaluate((e) => e.getBoundingClientRect().height);
    const post = (m) => frame.evaluate((msg) => window.parent.postMessage(msg, '*'), m);
    for (const bad of [{ type: 'cutlab:height', height: 1e7 }, { type: 'cutlab:height', height: -5 }, { type: 'cutlab:height', height: '300' },
      { type: 'cutlab:height', height: NaN }, { type: 'other', height: 300 }, 'cutlab:height 300', null]) await post(bad);
    // the page itself is no frame of the chapter
    await page.evaluate(() => window.postMessage({ type: 'cutlab:height', height: 300 }, '*'));
    await settle(page);
    const after = await el.evaluate((e) => e.getBoundingClientRect().height);
    k.check(Math.abs(after - before) < 1, 'the frame keeps its height (' + Math.round(before) + ' → ' + Math.round(after) + ' px)');
    await post({ type: 'cutlab:height', height: 300.2 });
    await page.waitForFunction((f) => f.getBoundingClientRect().height === 301, el, { timeout: 5000 }).catch(() => {});
    k.check((await el.evaluate((e) => e.getBoundingClientRect().height)) === 301, 'a valid message from the frame sets its height (300.2 → 301 px)');
    // asked to measure again, the figure reports its real height
    await el.evaluate((f) => f.contentWindow.postMessage({ type: 'cutlab:measure' }, '*'));
    await page.waitForFunction((f) => Math.abs(f.getBoundingClientRect().height - f.contentDocument.body.getBoundingClientRect().height) <= 1, el, { timeout: 5000 }).catch(() => {});
    const back = await el.evaluate((e) => e.getBoundingClientRect().height);
    k.check(Math.abs(back - before) <= 1, 'cutlab:measure: the figure reports its height again (' + Math.round(back) + ' px)');
  });
}

// The labels of the figure on the canvas that are shortened ("…" from the core, or wider than their
// max_w so that the page cuts them when it draws), as in cases/layout.mjs.
function shortened() {
  const d = window.__cutlab.derived, st = window.__cutlab.state;
  const w = Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth));
  const fig = d && d.good && (st.view === 'cuts' ? d.good.cuts(w, st.layer == null ? -1 : st.layer) : st.view === 'placement' ? d.good.placement(w) : null);
  const ctx = document.createElement('canvas').getContext('2d');
  const out = [];
  if (fig && fig.texts)
    for (const t of fig.texts) {
      ctx.font = window.CL.gfx.font(t.font_px, t.weight);
      if (/[^\s,]…$/.test(t.text) || (t.max_w && ctx.measureText(t.text).width > t.max_w + 0.5)) out.push(t.text);
    }
  return out;
}

// Each embed on its own at 500 and 700 px: no horizontal overflow, no inner scroll, complete table.
const EMBEDS = ['ex=tp8pp2&embed=cuts', 'ex=tp8pp2&embed=placement', 'ex=tp8pp2&embed=pipeline', 'ex=zero3&embed=table',
  'ex=serve-ep8&embed=table', 'ex=tp8pp2&embed=tables', 'ex=serve-ep8&embed=cuts', 'ex=dp2-tp8&embed=placement'];
async function widths(k) {
  const { httpBase } = await setup();
  for (const width of [500, 700]) {
    const { page, errors } = await k.open(null, { width, height: 800 });
    await k.step('embeds at ' + width + ' px: nothing clipped, no inner scroll', async () => {
      for (const q of EMBEDS) {
        await load(page, httpBase + '?' + q);
        const f = await page.evaluate(fit);
        k.check(f.sw <= f.cw + 1, q + ' at ' + width + ': no horizontal scroll (' + f.sw + ' in ' + f.cw + ')');
        k.check(f.inner.length === 0, q + ' at ' + width + ': no card or table scrolls inside' + (f.inner.length ? ': ' + f.inner.join(', ') : ''));
        if (/embed=(cuts|placement)/.test(q)) {
          const cut = await page.evaluate(shortened);
          k.check(cut.length === 0, q + ' at ' + width + ': the figure shortens no label' + (cut.length ? ': ' + cut.slice(0, 4).join('; ') : ''));
        }
      }
      k.noErrors(errors, 'embeds at ' + width);
    });
    await k.step('embed=table at ' + width + ' px: the five-axis table, every column', async () => {
      await load(page, httpBase + '?ex=tp8pp2&embed=table');
      const t = await page.evaluate(() => ({
        tables: document.querySelectorAll('#tables table').length,
        head: [...document.querySelectorAll('table.axes thead th')].filter((th) => getComputedStyle(th).display !== 'none').map((th) => th.textContent.trim().toLowerCase()),
        rows: [...document.querySelectorAll('table.axes tbody tr')].map((tr) => tr.dataset.axis),
        view: document.querySelector('#view').hidden }));
      k.check(t.tables === 1, 'one table: the five-axis table (' + t.tables + ')');
      k.check(t.view, 'no figure above it');
      k.check(t.head.length === 6 && t.head[5] === 'optimizes', 'all six columns shown, "optimizes" last: ' + t.head.join(' | '));
      k.check(['tp', 'pp', 'cp', 'dp'].every((a) => t.rows.includes(a)), 'rows TP, PP, CP, DP: ' + t.rows.join(' '));
      await page.screenshot({ path: shot('embed-table-' + width + '.png'), fullPage: true });
    });
  }
}

export default [
  { name: 'embeds: docs/chapter.html at 640 px, every figure sized to its content', weight: 3, run: chapter },
  { name: 'embeds: every embed at 500 and 700 px, embed=table complete', weight: 2, run: widths },
];
