// lib.mjs: what the browser cases share: one Chromium and one http server for the whole run, a
// Case per test (soft checks reported through node:test, its own browser contexts), the page
// helpers and the native CLI's answers.
//
// Waiting: no fixed sleeps. A page is loaded when body[data-status] is "ready" (set by app.js); a
// change has been drawn when the page has no animation frame pending (settle(): app.js redraws in
// requestAnimationFrame and fills the tables one frame later; an init script counts the page's
// pending frames). State changes that need no reload go through the URL fragment (go(): app.js
// applies `#query` on hashchange, its file:// fallback) or the history (back()).
//
// Env: WEB_DIR (build-wasm/web), NATIVE_CLI (build-native/native/cutlab), CHROMIUM (/usr/bin/chromium),
// SCREENSHOT_DIR (tests/browser/screenshots), DOCS_SCREENSHOT (docs/explorer.png; empty: not written).
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
export const webDir = path.resolve(process.env.WEB_DIR ?? path.join(root, 'build-wasm/web'));
export const cli = path.resolve(process.env.NATIVE_CLI ?? path.join(root, 'build-native/native/cutlab'));
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const shots = path.resolve(process.env.SCREENSHOT_DIR ?? path.join(here, 'screenshots'));
// the README's screenshot of the default page (DOCS_SCREENSHOT= empty: not written)
export const docsShot = process.env.DOCS_SCREENSHOT === '' ? null : path.resolve(process.env.DOCS_SCREENSHOT ?? path.join(root, 'docs/explorer.png'));
export const shot = (file) => path.join(shots, file);
const require = createRequire(path.join(root, 'package.json'));

// ---- one browser, one http server ------------------------------------------------------------------
function startServer() {
  return new Promise((resolve, reject) => {
    const srv = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', webDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    const timer = setTimeout(() => reject(new Error('http.server did not start')), 10000);
    srv.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/port (\d+)/);
      if (m) { clearTimeout(timer); resolve({ proc: srv, port: Number(m[1]) }); }
    });
    srv.stderr.on('data', () => {});
    srv.on('exit', (code) => { clearTimeout(timer); reject(new Error('http.server exited ' + code)); });
  });
}

let shared = null;
// { browser, fileBase, httpBase }: Chromium and the server start together, once.
export async function setup() {
  if (shared) return shared;
  if (!fs.existsSync(path.join(webDir, 'core.js'))) throw new Error(webDir + '/core.js is missing: build the wasm preset first');
  fs.mkdirSync(shots, { recursive: true });
  const { chromium } = require('playwright-core');
  const launching = chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const [browser, server] = await Promise.allSettled([launching, startServer()]).then(([b, s]) => {
    if (b.status === 'rejected' || s.status === 'rejected') {
      if (b.status === 'fulfilled') b.value.close();
      if (s.status === 'fulfilled') s.value.proc.kill();
      throw b.status === 'rejected' ? b.reason : s.reason;
    }
    return [b.value, s.value];
  });
  shared = { browser, server, fileBase: pathToFileURL(path.join(webDir, 'index.html')).href, httpBase: 'http://127.0.0.1:' + server.port + '/index.html' };
  return shared;
}
export async function teardown() {
  if (!shared) return;
  const { browser, server } = shared;
  shared = null;
  server.proc.removeAllListeners('exit');
  server.proc.kill();
  await browser.close();
}

// Runs in every page before its scripts: counts the animation frames the page has asked for and
// not yet run, so a test can wait until everything a change causes has been drawn.
function countFrames() {
  const raf = window.requestAnimationFrame.bind(window);
  const caf = window.cancelAnimationFrame.bind(window);
  const pending = new Set();
  window.requestAnimationFrame = (cb) => {
    const id = raf((t) => { pending.delete(id); cb(t); });
    pending.add(id);
    return id;
  };
  window.cancelAnimationFrame = (id) => { pending.delete(id); caf(id); };
  window.__test = { pending: () => pending.size, raf };
}

// ---- a test case: soft checks, its own pages ------------------------------------------------------
// check() records and goes on (as the single script did: every failure of a run is listed); the
// case (or step) fails at its end with the list. step() runs a part of a case as a node:test
// subtest on the same pages; an exception ends the case, a failed check does not.
export class Case {
  constructor(t) {
    this.t = t;
    this.cur = { t, failed: [], count: 0 };
    this.contexts = [];
  }
  check(cond, what) {
    const c = this.cur;
    c.count++;
    Case.checks++;
    c.t.diagnostic((cond ? 'ok   ' : 'FAIL ') + what);
    if (!cond) c.failed.push(what);
    return !!cond;
  }
  log(s) { this.cur.t.diagnostic(s); }
  // the console errors of a page since `from` (an index into errors)
  noErrors(errors, what, from = 0) {
    const e = errors.slice(from);
    return this.check(e.length === 0, what + ': no console errors' + (e.length ? ' — ' + e.join(' | ') : ''));
  }
  static checks = 0;   // in the whole run
  static verdict(c) {
    if (c.failed.length) throw new Error(c.failed.length + ' of ' + c.count + ' checks failed:\n  ' + c.failed.join('\n  '));
  }
  async step(name, fn) {
    let thrown = null;
    await this.t.test(name, async (st) => {
      const outer = this.cur;
      const mine = { t: st, failed: [], count: 0 };
      this.cur = mine;
      try { await fn(); } catch (e) { thrown = e; throw e; } finally { this.cur = outer; }
      Case.verdict(mine);
    });
    if (thrown) throw new Error('stopped after the step "' + name + '" threw: ' + (thrown.message || thrown));
  }
  // A fresh page (in its own browser context, as browser.newPage() does) at `url`, loaded (no url: blank).
  async open(url, viewport) {
    const { browser } = await setup();
    const context = await browser.newContext({ viewport: viewport ?? { width: 1280, height: 800 }, acceptDownloads: true });
    this.contexts.push(context);
    await context.addInitScript(countFrames);
    const page = await context.newPage();
    const errors = [];
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      if (/favicon\.ico/.test(m.location().url || '') || /Failed to load resource.*404/.test(m.text())) return;  // the automatic favicon request
      errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
    if (url) await load(page, url);
    return { page, errors };
  }
  async close() {
    await Promise.all(this.contexts.map((c) => c.close().catch(() => {})));
    this.contexts = [];
  }
}

// ---- page helpers ---------------------------------------------------------------------------------
// The page has started (or failed to start) and drawn everything its first frames ask for.
export async function loaded(page) {
  await page.waitForFunction(() => document.body.dataset.status === 'ready' || document.body.dataset.status === 'error', null, { timeout: 30000 });
  await settle(page);
}
// Wait until the page has no animation frame pending and nothing waits for core-full.js (an
// element with aria-busy: a view, the Launch panel, the search or the balance line while
// web/bridge.js loads it), checked after a whole frame (rAF callbacks, layout, resize observers)
// has run: at least one frame, at most ~2 s of frames (and ~20 s of loading).
export const settle = (page) => page.evaluate(() => new Promise((resolve, reject) => {
  const T = window.__test;
  let n = 0, b = 0;
  const frame = () => T.raf(() => {
    const ch = new MessageChannel();   // a task after this frame's rendering steps
    ch.port1.onmessage = () => {
      const busy = !!document.querySelector('[aria-busy="true"]');
      if (T.pending() === 0 && !busy) resolve();
      else if (busy ? ++b > 1200 : ++n > 120) reject(new Error(busy ? 'core-full.js did not arrive (aria-busy)' : 'the page keeps asking for frames'));
      else frame();
    };
    ch.port2.postMessage(0);
  });
  frame();
}));
// A state through the URL without a reload: `?a=b&…` (or `a=b&…`) becomes the fragment, which the
// page reads on hashchange (as from a link; `embed` needs a load).
export async function go(page, query) {
  await page.evaluate((h) => new Promise((resolve, reject) => {
    if (location.hash === '#' + h) { resolve(); return; }
    window.addEventListener('hashchange', () => resolve(), { once: true });   // after the page's own listener
    setTimeout(() => reject(new Error('no hashchange for #' + h)), 10000);
    location.hash = h;
  }), query.replace(/^\?/, ''));
  await settle(page);
}
// The browser's back button: the page reads the state of the previous entry on popstate.
export async function back(page) {
  await page.evaluate(() => new Promise((resolve, reject) => {
    window.addEventListener('popstate', () => resolve(), { once: true });
    setTimeout(() => reject(new Error('no popstate: nothing to go back to?')), 10000);
    history.back();
  }));
  await settle(page);
}
// Another whole load in a page the case already has (a new page costs a renderer process).
export async function load(page, url) {
  await page.goto(url);
  await loaded(page);
}
export async function reload(page) {
  await page.reload();
  await loaded(page);
}
export async function select(page, p, value) {
  await page.selectOption('[data-path="' + p + '"] select', String(value));
  await settle(page);
}
export async function fill(page, p, value) {
  const input = page.locator('[data-path="' + p + '"] input');
  await input.fill(String(value));
  await input.press('Enter');
  await input.blur();
  await settle(page);
}
export async function click(page, selector) {
  await page.click(selector);
  await settle(page);
}
export async function hover(page, x, y) {
  await page.mouse.move(x, y);
  await settle(page);
}
// Leave the canvas (no hover highlight, tooltip hidden) before the page shows another plan.
export async function unhover(page) {
  await page.mouse.move(0, 0);
  await settle(page);
}
export const canvasBox = (page) => page.$eval('#canvas', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y }; });
export const rawCells = (page, sel) => page.$$eval(sel, (els) => els.map((e) => Number(e.dataset.v)));

// ---- the native CLI (asynchronous: the other cases go on meanwhile) --------------------------------
function runCli(args, input) {
  return new Promise((resolve, reject) => {
    const p = spawn(cli, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    const out = [];
    p.stdout.on('data', (d) => out.push(d));
    p.on('error', reject);
    p.on('close', (status) => resolve({ status, stdout: Buffer.concat(out).toString('utf8') }));
    p.stdin.on('error', () => {});   // EPIPE when it exits without reading: its status tells
    p.stdin.end(input ?? '');
  });
}
// The CLI's --json is the façade's answer: {ok, result} or {ok: false, errors, config}.
const parse = (s) => { try { const j = JSON.parse(s); return j && j.ok === true ? j.result : j; } catch { return null; } };
// `cutlab evaluate - --json` of a config: { status, json } (json holds the errors on status 2)
export async function cliEvaluate(config) {
  const r = await runCli(['evaluate', '-', '--json'], JSON.stringify(config));
  return { status: r.status, json: parse(r.stdout) };
}
export async function cliEvaluateArgs(args) {
  const r = await runCli(['evaluate', ...args, '--json']);
  return r.status === 0 ? parse(r.stdout) : null;
}
export async function cliSchedule(config) {
  const r = await runCli(['schedule', '-', '--json'], JSON.stringify(config));
  return { status: r.status, json: r.status === 0 ? parse(r.stdout) : null };
}
export async function cliSearch(args) {
  const r = await runCli(['search', ...args, '--json']);
  return r.status === 0 ? parse(r.stdout) : null;
}

// ---- the tables against the CLI's JSON for the same config -----------------------------------------
export async function compareTables(k, page, ref, label) {
  const peak = ref.memory.per_stage[ref.memory.peak_stage];
  const memRows = await rawCells(page, 'table.mem-peak tr[data-kind] td.num');
  k.check(JSON.stringify(memRows.slice(0, 5)) === JSON.stringify([peak.weights_bytes, peak.grads_bytes, peak.optimizer_bytes, peak.activations_bytes, peak.total_bytes]),
    label + ': memory per GPU (peak stage) = CLI');
  const stages = await page.$$eval('table.mem-stages tbody tr', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td[data-v]')).map((c) => Number(c.dataset.v))));
  const refStages = ref.memory.per_stage.map((s) => [s.weights_bytes, s.grads_bytes, s.optimizer_bytes, s.activations_bytes, s.in_flight_micro_batches, s.total_bytes, s.capacity_bytes]);
  k.check(JSON.stringify(stages) === JSON.stringify(refStages), label + ': memory per stage = CLI (' + refStages.length + ' stages)');
  const comm = await page.$$eval('table.comm tbody tr[data-i]', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td[data-v]')).map((c) => Number(c.dataset.v))));
  const refComm = ref.comm.map((c) => [c.message_bytes, c.calls, c.bytes, c.time_s, c.exposed_s]);
  k.check(JSON.stringify(comm) === JSON.stringify(refComm), label + ': communication per collective = CLI (' + refComm.length + ' rows)');
  const parts = await page.$$eval('table.time tr[data-part]', (rows) => Object.fromEntries(rows.map((r) => [r.dataset.part, Number(r.querySelector('td[data-v]').dataset.v)])));
  const refParts = Object.fromEntries(Object.entries(ref.time.breakdown).filter(([, v]) => v > 0));
  const sortKeys = (o) => JSON.stringify(Object.keys(o).sort().map((key) => [key, o[key]]));
  k.check(sortKeys(parts) === sortKeys(refParts), label + ': time breakdown = CLI (' + Object.keys(refParts).length + ' parts)');
  const shares = await page.$$eval('table.time tr[data-part] td[data-share]', (els) => els.map((e) => [e.closest('tr').dataset.part, Number(e.dataset.share)]));
  k.check(shares.length === Object.keys(refParts).length && shares.every(([key, v]) => ref.time.shares[key.replace(/_s$/, '')] === v),
    label + ': shares of the step = the core\'s time.shares');
  const totals = await rawCells(page, 'table.time tr:not([data-part]) td[data-v]');
  k.check(JSON.stringify(totals) === JSON.stringify([ref.time.step_s, ref.throughput.tokens_per_s, ref.mfu, ref.hfu]), label + ': step time, tokens/s, MFU, HFU = CLI');
  // The ops of one layer (closed details, in the DOM): every op's F, B, W = the CLI's ops section,
  // and each table's total = the ops summed.
  const opsCells = await page.$$eval('table.ops', (ts) => ts.map((t) => [t.dataset.layer,
    Array.from(t.querySelectorAll('tbody tr:not(.total)')).map((r) => Array.from(r.querySelectorAll('td[data-v]')).map((c) => Number(c.dataset.v)))]));
  const refOps = Object.entries(ref.ops).filter(([, list]) => list.length).map(([key, list]) => [key, list.map((o) => [o.f_s, o.b_s, o.w_s])]);
  const byLayer = (list) => JSON.stringify(list.slice().sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
  k.check(byLayer(opsCells) === byLayer(refOps), label + ': ops of one layer = CLI ops (' + refOps.map(([key, l]) => key + ' ' + l.length).join(', ') + ')');
  const head = await page.$eval('#headline', (e) => e.textContent);
  k.check(head.includes(ref.peak.name), label + ': headline names the peak (' + ref.peak.name + ')');
  const fmt = await page.evaluate((v) => [window.CL.fmt.seconds(v.step), window.CL.fmt.pct(v.mfu)], { step: ref.time.step_s, mfu: ref.mfu });
  k.check(head.includes(fmt[0]) && head.includes(fmt[1]), label + ': headline shows step ' + fmt[0] + ' and MFU ' + fmt[1]);
  const eq = (await page.$eval('#equation', (e) => e.textContent)).replace(/\s+/g, ' ');
  k.check(eq.includes('GPUs' + ref.gpus.toLocaleString('en-US')) && eq.includes('TP' + ref.config.plan.tp) && eq.includes('PP' + ref.config.plan.pp) && eq.includes('DP' + ref.config.plan.dp),
    label + ': equation ' + eq.trim());
}
