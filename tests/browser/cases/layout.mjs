// Every screen (issue 14 item 3): at 390 (phone), 700 and 1280 px the page scrolls only
// vertically; no element reaches past the viewport or is cut by a box that hides what leaves it
// (a table wider than its card scrolls inside it); no text is shortened with an ellipsis; no two
// texts overlap (the boxes of their lines); and the figures the core lays out for the canvas's
// width shorten no label ("…"). Each state is also a screenshot (layout-WIDTH-NAME.png) to look at.
import { setup, load, go, settle, shot } from '../lib.mjs';

const WIDTHS = [390, 700, 1280];
const STATES = [
  ['default-cuts', ''],
  ['default-placement', '?view=placement'],
  ['default-pipeline', '?view=pipeline'],
  ['serve-placement', '?ex=serve-tp8pp2'],
  ['deepseek-cuts', '?ex=deepseek-v3'],
  ['405b-placement', '?ex=llama3-405b&view=placement'],
  ['serve-pipeline', '?ex=serve-tp8pp2&view=pipeline'],
];

// Runs in the page: what breaks the layout, as lists of short descriptions.
function audit() {
  const W = document.documentElement.clientWidth;
  const out = { hscroll: document.documentElement.scrollWidth > W + 1 ? document.documentElement.scrollWidth : 0,
    outside: [], clipped: [], ellipsis: [], overlaps: [], figure: [] };
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).join('.') : '');
  const shown = (e) => {
    if (e.closest('[hidden]') || e.closest('details:not([open]) > :not(summary)')) return false;
    for (let a = e; a; a = a.parentElement) { const s = getComputedStyle(a); if (s.display === 'none' || s.visibility === 'hidden' || s.opacity === '0') return false; }
    return e.getClientRects().length > 0;
  };
  // the nearest box that clips or scrolls horizontally
  const clipper = (e) => {
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== 'visible' || /paint|strict|content/.test(s.contain)) return a;
    }
    return null;
  };
  const cache = new Map();
  const isShown = (e) => { if (!cache.has(e)) cache.set(e, shown(e)); return cache.get(e); };
  for (const e of document.querySelectorAll('body *')) {
    if (e.tagName === 'OPTION' || !isShown(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const a = clipper(e);
    if (!a) {
      if (r.right > W + 1 || r.left < -1) out.outside.push(name(e) + ' x ' + Math.round(r.left) + '–' + Math.round(r.right));
      continue;
    }
    const s = getComputedStyle(a);
    if (s.overflowX === 'auto' || s.overflowX === 'scroll') continue;   // reachable: its box scrolls
    const ar = a.getBoundingClientRect();
    if (r.right > ar.right + 1 || r.left < ar.left - 1) out.clipped.push(name(e) + ' in ' + name(a));
    if (getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth + 1) out.ellipsis.push(name(e) + ': ' + e.textContent.slice(0, 40));
  }
  for (const e of document.querySelectorAll('body *'))
    if (isShown(e) && getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth + 1) out.ellipsis.push(name(e) + ': ' + e.textContent.slice(0, 40));
  out.ellipsis = Array.from(new Set(out.ellipsis));
  // the line boxes of every text node, cut to the boxes that clip or scroll them (what a scroll box
  // hides is not on the page)
  const clipRects = new Map();
  const visibleRect = (p) => {
    if (!clipRects.has(p)) {
      let r = { left: -Infinity, top: -Infinity, right: Infinity, bottom: Infinity };
      for (let a = p; a && a !== document.body; a = a.parentElement) {
        const s = getComputedStyle(a);
        if (s.overflowX === 'visible' && s.overflowY === 'visible' && !/paint|strict|content/.test(s.contain)) continue;
        const b = a.getBoundingClientRect();
        r = { left: Math.max(r.left, b.left), top: Math.max(r.top, b.top), right: Math.min(r.right, b.right), bottom: Math.min(r.bottom, b.bottom) };
      }
      clipRects.set(p, r);
    }
    return clipRects.get(p);
  };
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walker.nextNode());) {
    if (!n.textContent.trim() || !n.parentElement || n.parentElement.tagName === 'OPTION' || !isShown(n.parentElement)) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const c = visibleRect(n.parentElement);
    for (const q of range.getClientRects()) {
      const r = { left: Math.max(q.left, c.left), top: Math.max(q.top, c.top), right: Math.min(q.right, c.right), bottom: Math.min(q.bottom, c.bottom) };
      if (r.right - r.left > 1 && r.bottom - r.top > 1) boxes.push({ r, n });
    }
  }
  boxes.sort((a, b) => a.r.top - b.r.top);
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length && boxes[j].r.top < boxes[i].r.bottom - 1; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.n === b.n) continue;
      const dx = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left), dy = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (dx > 1 && dy > 1) out.overlaps.push('"' + a.n.textContent.trim().slice(0, 24) + '" × "' + b.n.textContent.trim().slice(0, 24) + '"');
    }
  // the figure on the canvas, as the core laid it out for the canvas's width
  const d = window.__cutlab.derived, st = window.__cutlab.state;
  const w = Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth));
  const fig = d && d.good && (st.view === 'cuts' ? d.good.cuts(w, st.layer == null ? -1 : st.layer) : st.view === 'placement' ? d.good.placement(w) : null);
  // shortened by the core (fit_text's "…") or by the page when it draws (a text wider than its max_w)
  const ctx = document.createElement('canvas').getContext('2d');
  if (fig && fig.texts)
    for (const t of fig.texts) {
      ctx.font = window.CL.gfx.font(t.font_px, t.weight);
      if (/[^\s,]…$/.test(t.text) || (t.max_w && ctx.measureText(t.text).width > t.max_w + 0.5)) out.figure.push(t.text);
    }
  // the pipeline view lays out its own texts: each within its max width and the canvas
  const pf = d && d.good && st.view === 'pipeline' ? window.CL.views.pipeline.figure(d.good, w) : null;
  if (pf)
    for (const t of pf.text) {
      ctx.font = t.font;
      const tw = ctx.measureText(t.text).width, left = t.align === 'right' ? t.x - tw : t.align === 'center' ? t.x - tw / 2 : t.x;
      if ((t.maxW && tw > t.maxW + 0.5) || left < -0.5 || left + tw > pf.W + 0.5) out.figure.push(t.text);
    }
  return out;
}

async function layout(k, base) {
  const { browser } = await setup();
  for (const width of WIDTHS) {
    await k.step(width + ' px', async () => {
      const { page, errors } = await k.open(null, { width, height: 900 });
      let first = true;
      for (const [file, query] of STATES) {
        if (first) { await load(page, base + query); first = false; } else await go(page, query || '?view=cuts');
        // lay out the tables (content-visibility: auto skips them below the fold) and open the Launch panel
        await page.evaluate(() => { document.getElementById('tables').style.contentVisibility = 'visible'; document.getElementById('launch').open = true; document.getElementById('terms').open = true; });
        await settle(page);
        const a = await page.evaluate(audit);
        const what = width + ' px ' + file;
        k.check(!a.hscroll, what + ': no horizontal scroll' + (a.hscroll ? ' (page ' + a.hscroll + ' px wide)' : ''));
        k.check(!a.outside.length, what + ': every element inside the viewport' + (a.outside.length ? ' — ' + a.outside.slice(0, 5).join('; ') : ''));
        k.check(!a.clipped.length, what + ': nothing clipped by its box' + (a.clipped.length ? ' — ' + a.clipped.slice(0, 5).join('; ') : ''));
        k.check(!a.ellipsis.length, what + ': no text cut with an ellipsis' + (a.ellipsis.length ? ' — ' + a.ellipsis.slice(0, 5).join('; ') : ''));
        k.check(!a.overlaps.length, what + ': no texts overlap' + (a.overlaps.length ? ' — ' + a.overlaps.slice(0, 5).join('; ') : ''));
        // the Cuts and Placement figures wrap or pick a shorter form of what does not fit, never "…"
        k.check(!a.figure.length, what + ': the figure shortens no label' + (a.figure.length ? ' — ' + a.figure.slice(0, 6).join('; ') : ''));
        await page.screenshot({ path: shot('layout-' + width + '-' + file + '.png'), fullPage: true });
      }
      // the FITS column of "Memory per stage" is in view without scrolling its card
      const fits = await page.evaluate(() => {
        const t = document.querySelector('table.mem-stages'), card = t && t.closest('.tcard');
        return t ? { table: t.getBoundingClientRect().right, card: card.getBoundingClientRect().right } : null;
      });
      if (width >= 700) k.check(fits && fits.table <= fits.card + 1, width + ' px: the memory-per-stage table fits its card (FITS column in view)');
      k.noErrors(errors, width + ' px');
    });
  }
  void browser;
}

export default [
  { name: 'every screen: 390, 700 and 1280 px without overflow, clipping, ellipses or overlapping text', weight: 4, run: async (k) => layout(k, (await setup()).httpBase) },
];
