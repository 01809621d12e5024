// search-run.js: runs the core's training search without blocking the page. The space is a list of
// items (core/search.h: a mesh, a schedule, a ZeRO choice, a micro-batch and a recompute choice);
// search_part searches a range of them within a time budget, and pieces() walks the list in pieces of
// about 30 ms each on the page, 100 ms in the worker. The pieces run in a Web Worker
// (search-worker.js, which loads this file too) or, where a worker cannot start (a file:// page in
// Chromium: origin 'null'; `?search=page`), on the page, one piece per task. The page merges each
// part into what came before with the core (search_merge), so it shows the best plans so far, and
// the final merge is the one-shot search() (the same for any partition of the items). When no plan
// fits and the memory bound pruned some, a second pass searches every item again without it.
(function (root) {
  'use strict';
  const CL = root.CL = root.CL || {};
  const PAGE_MS = 30;     // a piece on the page's thread: well under the 50 ms of a long task
  const WORKER_MS = 100;  // a piece in the worker: fewer merges for the page

  // Walks the items in pieces of about budgetMs (the core stops a part once its budget has run out
  // and says where to go on): onPart(out) with the core's parsed answer for each. core: the raw
  // module (searchPart returns JSON text); pause(): awaited before each piece (the page yields
  // there), resolving false to stop. Resolves true when every item was searched (or the config
  // could not be: the one answer, not ok), false when stopped.
  // The step-time bound (core/search.h SearchOptions::step_bound_s): each piece skips the plans that
  // cannot be faster than the top-th shortest step among the fitting plans the pieces before it
  // found (0, none, until there are top of them). The CLI finds its bound from a seed of plans
  // instead (search_step_bound_s), which would be one long task here. Either way the best plans are
  // the same (only plans that cannot enter them are skipped); how many were simulated differs.
  async function pieces(core, text, top, memoryPrune, budgetMs, onPart, pause) {
    let first = 0, items = 1, bound = 0, steps = [];
    while (first < items) {
      if (pause && !(await pause())) return false;
      const out = JSON.parse(core.searchPart(text, top, first, 0x7fffffff, memoryPrune, budgetMs, bound));
      onPart(out);
      if (!out.ok) return true;
      items = out.result.items;
      for (const b of out.result.best) if (b.fits) steps.push(b.step_s);
      steps = steps.sort((a, b) => a - b).slice(0, top);
      if (memoryPrune && steps.length === top) bound = steps[top - 1];
      first = Math.max(first + 1, out.result.next);
    }
    return true;
  }
  CL.searchPieces = pieces;
  if (typeof window === 'undefined') return;   // in the worker: pieces() only

  let worker = null;   // kept between searches (the module compiles once)
  let noWorker = false;   // a worker failed to start here: run on the page from now on
  let jobs = 0;

  // A task boundary that lets the page paint and handle input (no 4-ms clamp of nested timers).
  const channel = new MessageChannel();
  const waiting = [];
  channel.port1.onmessage = () => { const f = waiting.shift(); if (f) f(); };
  const nextTask = () => new Promise((resolve) => { waiting.push(resolve); channel.port2.postMessage(0); });

  function startWorker() {
    if (worker || noWorker) return worker;
    const q = new URLSearchParams(location.search + (location.hash.length > 1 ? '&' + location.hash.slice(1) : ''));
    if (q.get('search') === 'page' || typeof Worker !== 'function') { noWorker = true; return null; }
    try {
      worker = new Worker('search-worker.js');
    } catch (err) {   // file:// in Chromium: SecurityError (origin 'null')
      noWorker = true;
      worker = null;
    }
    return worker;
  }
  function dropWorker() {
    if (worker) worker.terminate();
    worker = null;
  }

  // One pass over every item, in the worker or on the page; onPart(out) for each piece. Resolves true when done, false when cancelled. A worker that fails before it is done
  // (it could not load) hands the pass to the page, from the start (job.restart() is called).
  function pass(api, job, memoryPrune, onPart) {
    const w = job.where === 'worker' ? startWorker() : null;
    if (!w) {
      job.where = 'page';
      return pieces(api.moduleOf('searchPart'), job.text, job.top, memoryPrune, PAGE_MS, onPart, () => nextTask().then(() => !job.cancelled));
    }
    return new Promise((resolve) => {
      job.stop = () => { dropWorker(); resolve(false); };
      const fail = () => {
        dropWorker();
        noWorker = true;
        if (job.cancelled) return resolve(false);
        job.where = 'page';
        job.restart();
        resolve(pass(api, job, memoryPrune, onPart));
      };
      w.onmessage = (ev) => {
        const m = ev.data;
        if (m.error) return fail();
        if (m.job !== job.id || job.cancelled) return;
        if (m.end) return resolve(true);
        onPart(m.out);
      };
      w.onerror = (ev) => { ev.preventDefault(); fail(); };
      w.postMessage({ job: job.id, text: job.text, top: job.top, memoryPrune, budgetMs: WORKER_MS });
    });
  }

  // Starts a search of the config `text` for the `top` best plans. on.progress({ done, items, pass,
  // where, merged }) after each piece (merged: the core's merge so far, {ok, result}); on.done(out,
  // { where, ms, pieces }) once, with search()'s answer (or the errors). Returns { cancel() }.
  function start(api, text, top, on) {
    const job = { id: ++jobs, text, top, where: noWorker ? 'page' : 'worker', cancelled: false, stop: null, failed: null, pieces: 0 };
    const t0 = performance.now();
    (async () => {
      let merged = null;
      for (const memoryPrune of [true, false]) {
        let done = 0;
        merged = null;
        job.restart = () => { merged = null; done = 0; };
        const onPart = (out) => {
          if (job.failed || job.cancelled) return;
          if (!out.ok) { job.failed = out; return; }
          const m = api.searchMerge(JSON.stringify(merged ? [merged.result, out.result] : [out.result]), top);
          if (!m.ok) { job.failed = m; return; }
          merged = m;
          done = Math.min(out.result.items, out.result.next);
          job.pieces++;
          on.progress({ done, items: out.result.items, pass: memoryPrune ? 1 : 2, where: job.where, merged });
        };
        const finished = await pass(api, job, memoryPrune, onPart);
        if (!finished || job.cancelled) return;
        if (job.failed) return on.done(job.failed, { where: job.where, ms: performance.now() - t0, pieces: job.pieces });
        if (!merged.result.second_pass) break;
      }
      on.done(merged, { where: job.where, ms: performance.now() - t0, pieces: job.pieces });
    })();
    return {
      cancel() {
        if (job.cancelled) return;
        job.cancelled = true;
        if (job.stop) job.stop();
      },
    };
  }

  CL.searchRun = { start };
})(self);
