// app.js: owns the one mutable object, `state`. setState() replaces it, records it in the URL and
// asks for a frame; each animation frame runs the derive step once (derive.js, memoised on the
// config) and redraws what depends on what changed. Views and tables only read.
(function (CL) {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const G = CL.gfx;

  let api = null, derive = null, launch = null, disagg = null;
  let state = null;
  let ui = { hover: null, kbd: null };   // kbd: the figure's item chosen with the arrow keys
  let frameQueued = false;
  let last = { d: null, tablesD: null, viewKey: null };
  let snapped = null;   // the axes moved to fit the model of the last edit (suggest.js), for the note
  let hits = G.hits();
  let changeAt = null;                           // performance.now() of the last control change
  let tablesDue = false;                         // the tables wait for the next frame
  let canvasWidth = 0;                           // CSS width of the canvas, kept by a ResizeObserver
  const perf = { deriveMs: 0, drawMs: 0, workMs: 0, changeToDrawMs: null, frames: 0, searchMs: null, warm: null };
  // The last plan search (search.js): { key, out, ms, gpus, what, rankOrder, where }; shown while `open`;
  // progress: the running search's last report (search-run.js).
  // loading: core-full.js is loading before the search starts (bridge.js).
  const found = { result: null, open: false, busy: false, loading: false, cancelled: false, progress: null, what: null, shown: null, limits: { ttft: 0, tpot: 0 }, disaggregated: false };
  const params = new URLSearchParams(location.search + (location.hash.length > 1 ? '&' + location.hash.slice(1) : ''));
  const embed = params.get('embed');
  const DEBUG = params.has('debug');   // ?debug=1: the core's and the drawing's timings in the footer
  // embed=table: the five-axis table alone; embed=tables: every table; the others one view and its table
  const EMBED_VIEW = { timeline: 'pipeline', pipeline: 'pipeline', cuts: 'cuts', placement: 'placement', tables: 'tables', table: 'tables' }[embed] || null;
  // The frame's name for its parent (embed.js matches frames by their window; `embed_id` is echoed
  // for an author's own listener): letters, digits, - and _ only, at most 64.
  const EMBED_ID = (params.get('embed_id') || '').replace(/[^\w-]/g, '').slice(0, 64) || null;

  // ---- state ---------------------------------------------------------------------------------
  function setState(next, how) {
    state = next;
    if (how !== 'none') writeUrl(how === 'replace');
    request();
  }
  function request() {
    if (frameQueued) return;
    frameQueued = true;
    requestAnimationFrame(frame);
  }
  function onEdit(path, value) {
    changeAt = performance.now();
    let next = CL.controls.patchFor(state, path, value);
    // Another model (a preset or a pasted config.json) can break the plan's axes (TP 8 for 28 heads):
    // they move to their nearest valid values, and the page says so (suggest.js).
    snapped = null;
    if (path === '/model' || path === '/model/hf_config') {
      const snap = CL.suggest.snapAfterModelChange(api, derive, next);
      if (snap) { next = snap.state; snapped = snap.moved; }
    }
    setState(next, 'push');
  }

  function query() {
    const extra = embed ? (EMBED_ID ? { embed, embed_id: EMBED_ID } : { embed }) : null;
    const q = CL.state.toQuery(state, extra);
    return state.example ? q + '&ex=' + encodeURIComponent(state.example) : q;
  }
  function writeUrl(replace) {
    const url = location.pathname + query();
    try {
      if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
    } catch (err) {
      // file:// in some browsers refuses query changes: keep the state in the fragment instead
      const h = '#' + query().slice(1);
      if (replace) history.replaceState(null, '', h); else location.hash = h;
    }
  }
  function readUrl() {
    const search = location.hash.length > 1 ? '?' + location.hash.slice(1) : location.search;
    const q = new URLSearchParams(search);
    const ex = q.get('ex') && CL.examples.byId(q.get('ex'));
    if (ex && !q.has('model') && !q.has('cluster')) {
      const es = CL.examples.stateOf(ex);
      if (CL.state.VIEWS.includes(q.get('view'))) es.view = q.get('view');
      return es;
    }
    const s = CL.state.fromQuery(search);
    if (!s) return Object.assign(CL.state.clone(CL.state.DEFAULT), { example: null });
    s.example = ex ? ex.id : null;
    return s;
  }

  // ---- frame ---------------------------------------------------------------------------------
  function frame() {
    frameQueued = false;
    const t0 = performance.now();
    const d = derive(state);
    const t1 = performance.now();
    const tk = {};
    if (d !== last.d) {
      const general = CL.controls.update(state, d);
      tk.controls = performance.now() - t1;
      $('equation').innerHTML = CL.tables.equation(state, d);
      $('headline').innerHTML = EMBED_VIEW ? CL.tables.headlineCompact(d) + CL.tables.equation(state, d).replace(/^/, '<div class="equation small">') + '</div>' : CL.tables.headline(d);
      renderGeneralErrors(general, d);
      renderExample(d);
      perf.deriveMs = t1 - t0;
    }
    const t15 = performance.now();
    // the canvas first (its width is cached, so no layout is forced), then the DOM tables
    drawView(d);
    const t16 = performance.now();
    tk.view = t16 - t15;
    // The tables (below the view) follow one frame later: a change's frame holds the core calls,
    // the controls and the canvas; the next one the tables. Each stays within a 60 Hz frame.
    let tablesFrame = false;
    if (d.good !== last.tablesD) {
      if (tablesDue || EMBED_VIEW === 'tables' || !last.tablesD) {
        $('tables').innerHTML = EMBED_VIEW ? CL.tables.embed(d, embed) : CL.tables.all(d);
        renderBalance(d);
        last.tablesD = d.good;
        tablesDue = false;
        tablesFrame = true;
      } else {
        tablesDue = true;
        request();
      }
    }
    const stale = $('stale');
    stale.hidden = d.ok;
    $('headline').classList.toggle('is-stale', !d.ok);
    // the headline waits for core-full.js while a serving plan is pending (settle() in the browser tests too)
    if (d.pending && !api.fullError()) $('headline').setAttribute('aria-busy', 'true'); else $('headline').removeAttribute('aria-busy');
    stale.classList.toggle('pending', !!d.pending && !api.fullError());
    if (d.pending) {
      const failed = api.fullError();
      stale.textContent = (failed ? 'Serving plans could not be priced: the rest of the cutlab core (core-full.js) did not load (' + failed.message + ').'
        : 'Loading the serving model (the rest of the cutlab core, core-full.js)…') + (d.good ? ' Showing the last plan priced.' : '');
    } else if (!d.ok) {
      // The embed has no controls to mark: list the core's errors themselves.
      const list = EMBED_VIEW ? ' ' + d.errors.map((e) => (e.path || '/') + ': ' + e.message).join('; ') + '.' : ' (see the marked fields).';
      stale.textContent = 'This plan is invalid' + (EMBED_VIEW ? ':' : '') + list + (d.good ? ' Showing the last valid plan.' : '');
    }
    if (d !== last.d && !EMBED_VIEW) renderFixes(d);
    tk.tables = performance.now() - t16;
    renderGpuPanel(d);
    renderSearch(d);
    if (launch) launch.update(d);
    if (disagg) disagg.update(state, d);
    last.d = d;
    const t2 = performance.now();
    perf.drawMs = t2 - t1;
    perf.workMs = t2 - t0;
    perf.frames++;
    perf.parts = Object.assign({}, d.timing || {}, tk);
    // the frame that answered the last control change: its work, and the time since the change
    if (changeAt !== null) {
      perf.changeToDrawMs = t2 - changeAt;
      perf.change = { at: changeAt, workMs: perf.workMs, changeToDrawMs: perf.changeToDrawMs, view: currentView(), parts: perf.parts, tablesFrameMs: null };
      changeAt = null;
    } else if (tablesFrame && perf.change && perf.change.tablesFrameMs === null) {
      perf.change.tablesFrameMs = perf.workMs;   // the frame after: the tables of that change
      perf.change.changeToTablesMs = t2 - perf.change.at;
    }
    renderFooter(d);
    reportHeight();
  }

  // ---- embedded: the content's height for the parent page (web/embed.js sizes the frame) ---------
  // Message: { type: 'cutlab:height', height: CSS pixels of the content (an integer), id: the
  // frame's embed_id or null }, posted on load and whenever the content's height changes (a
  // ResizeObserver on the body, and after every frame). The height is no secret: any origin may read it.
  let reportedHeight = -1;
  function reportHeight() {
    if (!EMBED_VIEW || window.parent === window) return;
    const h = Math.ceil(document.body.getBoundingClientRect().height);
    if (h === reportedHeight || !(h > 0)) return;
    reportedHeight = h;
    window.parent.postMessage({ type: 'cutlab:height', height: h, id: EMBED_ID }, '*');
  }

  function currentView() { return EMBED_VIEW && EMBED_VIEW !== 'tables' ? EMBED_VIEW : state.view; }

  function drawView(d) {
    const canvas = $('canvas');
    const g = d.good;
    const view = CL.views[currentView()];
    document.querySelectorAll('#tabs [data-view]').forEach((b) => {
      const on = b.dataset.view === state.view;
      b.setAttribute('aria-selected', String(on));
      b.tabIndex = on ? 0 : -1;   // roving tabindex: Tab enters the list at the selected tab, arrows move
      if (on) $('view').setAttribute('aria-labelledby', b.id);
    });
    if (EMBED_VIEW === 'tables') { $('view').hidden = true; return; }
    $('export-svg').disabled = !g;
    $('export-png').disabled = !g;
    if (!g) { canvas.width = 0; $('view').removeAttribute('aria-busy'); return; }
    if (!canvasWidth) canvasWidth = Math.floor($('canvas-wrap').clientWidth);
    const width = Math.max(320, canvasWidth);
    // A view drawn from a function of core-full.js waits for it (bridge.js), saying so.
    if (!api.ready(view.uses)) { api.full().catch(() => {}); drawLoading(canvas, width); return; }
    const u = { layer: state.layer, gpu: state.gpu, hover: ui.hover, compact: !!EMBED_VIEW, width };
    const key = [g.text, currentView(), width, state.layer, state.gpu, JSON.stringify(ui.hover && ui.hover.key), ui.kbd && ui.kbd.id].join('|');
    if (key === last.viewKey) return;
    last.viewKey = key;
    $('view-caption').innerHTML = view.caption(g, u);
    const h = view.layout(g, width, u);
    const ctx = G.setup(canvas, width, h);
    hits = G.hits();
    view.draw(ctx, g, { w: width, h }, u, hits);
    $('view').removeAttribute('aria-busy');
    if (ui.kbd) {
      // the item chosen with the keyboard: found again among the new hits, outlined
      const it = kbdItems().find((x) => itemId(x.payload) === ui.kbd.id);
      if (it) {
        ctx.save();
        ctx.strokeStyle = CL.palette.ink.text;
        ctx.lineWidth = 2;
        ctx.setLineDash([4, 3]);
        ctx.strokeRect(it.x - 2, it.y - 2, it.w + 4, it.h + 4);
        ctx.restore();
      }
    }
    describeView(g, width, u);
  }

  // The view's place while core-full.js loads: a line of text, no hits, no downloads. onFull()
  // (init) clears the keys, so the next frame draws the view.
  function drawLoading(canvas, width) {
    $('export-svg').disabled = true;
    $('export-png').disabled = true;
    const failed = api.fullError();
    const key = 'loading|' + currentView() + '|' + width + '|' + !!failed;
    if (key === last.viewKey) return;
    last.viewKey = key;
    described.key = null;
    described.t = null;
    const name = currentView();
    $('view-caption').replaceChildren(Object.assign(document.createElement('b'), { textContent: failed ? 'The ' + name + ' view could not load' : 'Loading the ' + name + ' view…' }), ' ',
      Object.assign(document.createElement('span'), { className: 'muted', textContent: failed ? '(core-full.js: ' + failed.message + ')' : '(the rest of the cutlab core, core-full.js)' }));
    const ctx = G.setup(canvas, width, 120);
    hits = G.hits();
    ctx.fillStyle = CL.palette.ink.muted;
    ctx.font = G.font(14);
    ctx.textAlign = 'center';
    ctx.fillText(failed ? 'Could not load this view' : 'Loading…', width / 2, 64);
    $('canvas').setAttribute('aria-label', 'The ' + name + (failed ? ' view could not load' : ' view is loading'));
    $('figure-desc').textContent = '';
    $('figure-table').textContent = '';
    if (failed) $('view').removeAttribute('aria-busy'); else $('view').setAttribute('aria-busy', 'true');
  }

  // ---- the figure in words (figure-text.js): the canvas's name and description, and a table ------
  const described = { key: null, t: null };
  function describeView(g, width, u) {
    const view = currentView();
    const key = [g.text, view, width, state.layer].join('|');
    if (key === described.key) return;
    described.key = key;
    const t = CL.figureText.describe(view, g, width, u);
    described.t = t;
    $('canvas').setAttribute('aria-label', t ? t.label : 'Selected view');
    $('figure-desc').innerHTML = t ? CL.figureText.html({ text: t.text }) : '';
    fillFigureTable();
  }
  // The table only while the details are open (it may ask the core what each GPU holds).
  function fillFigureTable() {
    const t = described.t;
    $('figure-table').innerHTML = t && $('figure-text').open ? CL.figureText.html({ text: [], table: t.table }) : '';
  }

  // ---- the figure by keyboard: arrow keys move between its GPUs (or layers), Enter opens one ------
  const KBD_KINDS = new Set(['gpu', 'node', 'layer', 'stage', 'replica', 'balancer']);
  const itemId = (p) => [p.kind, p.rank, p.node, p.layer, p.stage, p.replica].join(',');
  function kbdItems() {
    const seen = new Set();
    return hits.list.filter((it) => {
      if (typeof it.payload === 'function' || !KBD_KINDS.has(it.payload.kind)) return false;
      const id = itemId(it.payload);
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  }
  function kbdMove(ev) {
    const items = kbdItems();
    const keys = ['ArrowRight', 'ArrowLeft', 'ArrowDown', 'ArrowUp', 'Home', 'End', 'Enter', ' ', 'Escape'];
    if (!items.length || !keys.includes(ev.key)) return;
    ev.preventDefault();
    let i = ui.kbd ? items.findIndex((x) => itemId(x.payload) === ui.kbd.id) : -1;
    const cur = items[i];
    if (ev.key === 'Escape') { ui.kbd = null; ui.hover = null; $('tooltip').hidden = true; request(); return; }
    if (ev.key === 'Enter' || ev.key === ' ') { if (cur) choose(cur.payload); return; }
    if (ev.key === 'Home') i = 0;
    else if (ev.key === 'End') i = items.length - 1;
    else if (i < 0) i = 0;
    else if (ev.key === 'ArrowRight') i = (i + 1) % items.length;
    else if (ev.key === 'ArrowLeft') i = (i - 1 + items.length) % items.length;
    else {
      // the nearest item below (above): the smallest vertical step, then the closest column
      const down = ev.key === 'ArrowDown', cx = cur.x + cur.w / 2, cy = cur.y + cur.h / 2;
      let best = -1, bestD = Infinity;
      items.forEach((x, j) => {
        const dy = (x.y + x.h / 2 - cy) * (down ? 1 : -1);
        if (dy <= 1) return;
        const dd = dy * 4 + Math.abs(x.x + x.w / 2 - cx);
        if (dd < bestD) { bestD = dd; best = j; }
      });
      if (best >= 0) i = best;
    }
    const it = items[i];
    ui.kbd = { id: itemId(it.payload) };
    ui.hover = it.payload.key ? it.payload : null;
    const g = last.d && last.d.good;
    const tipHtml = g ? CL.views[currentView()].tip(g, it.payload) : '';
    const div = document.createElement('div');
    div.innerHTML = (tipHtml || '').replace(/<br\s*\/?>/g, ' · ');
    $('figure-focus').textContent = (div.textContent || it.payload.kind).replace(/click[^.]*$/i, '').trim();
    request();
  }
  function choose(pl) {
    if (pl.kind === 'layer') setState(Object.assign(CL.state.clone(state), { layer: pl.layer }), 'push');
    else if (pl.kind === 'gpu' || (pl.kind === 'node' && pl.rank !== undefined)) setState(Object.assign(CL.state.clone(state), { gpu: pl.rank }), 'push');
  }
  function tabKeys(ev) {
    const tabs = Array.from(document.querySelectorAll('#tabs [role=tab]'));
    const i = tabs.indexOf(document.activeElement);
    if (i < 0) return;
    const j = { ArrowRight: (i + 1) % tabs.length, ArrowLeft: (i - 1 + tabs.length) % tabs.length, Home: 0, End: tabs.length - 1 }[ev.key];
    if (j === undefined) return;
    ev.preventDefault();
    tabs[j].focus();
    tabs[j].click();   // automatic activation: the view follows the focus
  }

  // The footer names the model and the GPU of the config, which a link or a pasted config.json
  // sets: built as text nodes, never as HTML.
  function renderFooter(d) {
    const f = CL.fmt, foot = $('foot');
    if (EMBED_VIEW) {
      const a = Object.assign(document.createElement('a'), { href: location.pathname + CL.state.toQuery(state), target: '_blank', rel: 'noopener',
        textContent: 'Open in the cutlab explorer ↗' });
      foot.replaceChildren(a, ' · every number from the cutlab core');
      return;
    }
    const c = d.good && d.good.r ? d.good.r.config : null;
    // the plan shown; the core's and the drawing's timings only with ?debug=1
    const parts = (DEBUG ? ['core ' + f.fixed(perf.deriveMs, 1) + ' ms', 'draw ' + f.fixed(perf.drawMs, 1) + ' ms'] : [])
      .concat(c ? [c.workload.mode, c.model.name + ' on ' + f.int(d.good.r.gpus) + ' × ' + c.cluster.gpu] : []);
    const span = Object.assign(document.createElement('span'), { className: 'perf', textContent: parts.join(' · ') });
    foot.replaceChildren('Every number on this page comes from the cutlab core (C++ compiled to WebAssembly); the page only formats and draws. ', span);
  }

  function renderGeneralErrors(list, d) {
    const box = $('general-errors');
    if (!list.length) { box.innerHTML = ''; return; }
    box.innerHTML = '<b>The core rejects this plan:</b><ul>' + list.map((e) => '<li><code>' + CL.fmt.escape(e.path || '/') + '</code> ' +
      CL.fmt.escape(e.message) + '</li>').join('') + '</ul>';
    void d;
  }

  // Under an invalid plan: the changes that make it valid (suggest.js), one button each; after a
  // model change that moved an axis: what moved.
  function renderFixes(d) {
    const box = $('fixes');
    const el = (tag, text, cls) => Object.assign(document.createElement(tag), { textContent: text, className: cls || '' });
    if (d.ok) {
      box.hidden = !snapped;
      box.replaceChildren(...(snapped ? [el('b', 'Changed for this model: '), snapped.join(', ') + '.'] : []));
      return;
    }
    const offers = CL.suggest.offers(api, state, d);
    box.hidden = !offers.length;
    box.replaceChildren(...(offers.length ? [el('b', 'Valid nearby: ')] : []));
    for (const o of offers) {
      const b = el('button', o.label, 'fix');
      b.type = 'button';
      b.addEventListener('click', () => { snapped = null; setState(o.state, 'push'); });
      box.append(b);
    }
  }

  // The example's sentence, and the figure its source measured beside cutlab's (examples.js).
  const PUBLISHED = {
    mfu: { label: 'MFU', of: (r) => r.mfu, show: (v) => CL.fmt.pct(v) },
    tokens_per_s_per_gpu: { label: 'tokens/s per GPU', of: (r) => r.throughput.tokens_per_s_per_gpu, show: (v) => CL.fmt.int(v) },
  };
  function renderExample(d) {
    const box = $('examples');
    const sel = box.querySelector('select');
    const ex = state.example && CL.examples.byId(state.example);
    sel.value = ex ? ex.id : '';
    box.querySelector('.quote').innerHTML = ex ? '“' + CL.fmt.escape(ex.quote) + '”' + (ex.note ? ' <span class="note">' + CL.fmt.escape(ex.note) + '</span>' : '') : '';
    const pub = box.querySelector('.published');
    const p = ex && ex.published, m = p && PUBLISHED[p.metric];
    if (!m || !d.ok) { pub.replaceChildren(); return; }
    const mine = m.of(d.r), diff = mine / p.value - 1;
    const el = (tag, text, cls) => Object.assign(document.createElement(tag), { textContent: text, className: cls || '' });
    pub.replaceChildren('Published ', el('b', m.show(p.value)), ' ' + m.label + ' · cutlab ', el('b', m.show(mine)), ' ',
      el('span', '(' + (diff >= 0 ? '+' : '−') + CL.fmt.pct(Math.abs(diff)) + ')', Math.abs(diff) <= 0.1 ? 'ok' : 'bad'),
      el('span', p.source + '. Not published: ' + p.unstated + '.', 'src'));
  }

  // ---- GPU panel (click on a GPU) -------------------------------------------------------------
  function renderGpuPanel(d) {
    const panel = $('gpu-panel');
    const g = d.good;
    if (!Number.isInteger(state.gpu) || !g || state.gpu >= g.r.gpus || !g.gpu) { panel.hidden = true; return; }
    const key = g.text + '|' + state.gpu;
    if (panel.dataset.key === key && !panel.hidden) return;
    panel.dataset.key = key;
    panel.innerHTML = CL.views.placement.gpuPanel(g, state.gpu);
    panel.hidden = false;
    panel.querySelector('.close').addEventListener('click', () => setState(Object.assign(CL.state.clone(state), { gpu: null }), 'push'));
  }

  // ---- best plans (a click runs the core's search; a row click applies that plan) ----------------
  // Training: the search runs in pieces in a worker (or between frames), search-run.js; the page
  // keeps working, shows the bar and the best so far, and Cancel stops it. Serving: one call.
  let running = null;   // the training search in progress: { cancel() }
  let progressQueued = false;
  function runSearch() {
    if (found.busy) return;
    found.open = true;
    found.busy = true;
    found.cancelled = false;
    found.progress = null;
    const serving = CL.state.serving(CL.search.modeOf(state, last.d));
    if (api.ready(serving ? 'servingSearch' : 'searchMerge')) { startSearch(); return; }
    // The search's functions are in core-full.js (bridge.js): the panel says it is loading, then
    // the search starts (a load that fails leaves the functions answering with its error).
    found.loading = true;
    const wait = { stopped: false };
    running = { cancel() { wait.stopped = true; } };
    $('find-plans').disabled = true;
    renderSearch(last.d, true);
    api.full().catch(() => {}).then(() => {
      if (wait.stopped) return;
      running = null;
      found.loading = false;
      startSearch();
    });
  }
  function startSearch() {
    const d = last.d;
    const cfg = CL.search.config(CL.search.searched(state, found.result), d);
    const text = JSON.stringify(cfg);
    const serving = CL.state.serving(CL.search.modeOf(state, d));
    const lim = found.limits;
    const conf = d && d.config;
    const meta = { key: text, gpus: cfg.cluster.gpus, what: CL.search.describe(d, cfg.cluster.gpus),
      rankOrder: conf && conf.plan ? conf.plan.rank_order : null, serving, limits: Object.assign({}, lim), disaggregated: !!found.disaggregated };
    found.what = meta.what;
    renderSearch(last.d, true);
    $('find-plans').disabled = true;
    if (!serving && !api.ready('searchMerge')) {   // core-full.js failed to load: its error is the answer
      finish(Object.assign(meta, { out: api.searchMerge('[]', 10), ms: 0, where: 'page' }));
      return;
    }
    if (!serving) {
      running = CL.searchRun.start(api, text, 10, {
        progress(p) {   // drawn once per frame however many pieces come in between
          found.progress = p;
          if (progressQueued) return;
          progressQueued = true;
          requestAnimationFrame(() => {
            progressQueued = false;
            if (found.busy && found.progress) CL.search.progress($('search-panel'), found.progress, { current: last.d && last.d.ok ? last.d.r.config.plan : null });
          });
        },
        done(out, info) {
          running = null;
          finish(Object.assign(meta, { out, ms: info.ms, where: info.where, pieces: info.pieces }));
        },
      });
      return;
    }
    // let the "searching…" state paint first: the serving search takes a few hundred milliseconds
    requestAnimationFrame(() => setTimeout(() => {
      const t0 = performance.now();
      const out = api.servingSearch(text, 10, lim.ttft || 0, lim.tpot || 0, CL.search.plotWidth($('search-panel')), !!found.disaggregated);
      finish(Object.assign(meta, { out, ms: performance.now() - t0, where: 'page' }));
    }, 0));
  }
  function finish(result) {
    perf.searchMs = result.ms;
    found.result = result;
    found.busy = false;
    found.progress = null;
    $('find-plans').disabled = false;
    renderSearch(last.d, true);
    // bring the table into view when the page was scrolled away from it (below the sticky header)
    const top = $('search-panel').getBoundingClientRect().top;
    if (top < 64 || top > window.innerHeight - 160) window.scrollBy({ top: top - 64 });
  }
  // Cancel: the search stops (its worker terminated); the previous result, if any, stays.
  function cancelSearch() {
    if (!running) return;
    running.cancel();
    running = null;
    found.busy = false;
    found.loading = false;
    found.progress = null;
    found.cancelled = true;
    $('find-plans').disabled = false;
    renderSearch(last.d, true);
  }
  function renderSearch(d, force) {
    const panel = $('search-panel');
    if (!found.open || EMBED_VIEW) { panel.hidden = true; found.shown = null; panel.removeAttribute('aria-busy'); return; }
    const mode = CL.search.modeOf(state, d);
    const res = found.result;
    const stale = !!res && res.out.ok && CL.search.key(CL.search.searched(state, res), d) !== res.key;
    const current = d && d.ok ? d.r.config.plan : null;
    const sig = [res && res.key, res && res.ms, found.busy, found.loading, found.cancelled, mode, stale, JSON.stringify(current)].join('|');
    if (!force && sig === found.shown && !panel.hidden) return;
    found.shown = sig;
    // a row chosen with the keyboard keeps the focus across the redraw
    const focused = panel.contains(document.activeElement) ? document.activeElement.dataset.i : undefined;
    panel.innerHTML = CL.search.html(res, { current, currentConfig: d && d.ok ? d.r.config : null, stale, mode, busy: found.busy,
      loading: found.loading, cancelled: found.cancelled, what: found.what });
    if (found.loading) panel.setAttribute('aria-busy', 'true'); else panel.removeAttribute('aria-busy');
    panel.hidden = false;
    if (found.busy && found.progress) CL.search.progress(panel, found.progress, { current });
    panel.dataset.runner = res && !found.busy ? res.where || '' : '';
    if (res && res.serving) CL.search.drawPlot(panel, res);
    if (focused !== undefined) { const row = panel.querySelector('tbody tr[data-i="' + focused + '"]'); if (row) row.focus(); }
  }
  function applyRow(tr) {
    const res = found.result;
    if (!tr || !res || !res.out.ok || tr.closest('table.outdated, table.partial')) return;
    const set = tr.dataset.set;
    const rows = set === 'dbest' ? (res.out.result.disaggregated || {}).best || [] : res.out.result[set === 'front' ? 'front' : 'best'];
    const row = rows[Number(tr.dataset.i)];
    if (!row) return;
    applyFound(row);
  }
  // A row or a point of the front applied: a plan (its mesh and batch), or a disaggregated deployment
  // (its pools, into the Disaggregate panel, opened and brought into view).
  function applyFound(row) {
    const res = found.result;
    changeAt = performance.now();
    if (row.prefill_plan) {
      setState(CL.search.applyDisaggregated(state, row), 'push');
      const box = $('disagg');
      if (box) {
        box.open = true;   // its 'toggle' shows the pools
        // after the frame that draws the plan (queued first): drawn, the panels above it change height
        requestAnimationFrame(() => box.scrollIntoView({ block: 'start' }));
      }
      return;
    }
    setState(res.serving ? CL.search.applyServing(state, row, res.gpus) : CL.search.apply(state, row.plan, res.gpus), 'push');
  }
  function wireSearch() {
    const button = $('find-plans');
    if (!button) return;
    button.addEventListener('click', runSearch);
    const panel = $('search-panel');
    panel.addEventListener('click', (ev) => {
      if (ev.target.closest('.cancel')) { cancelSearch(); return; }
      if (ev.target.closest('.close')) { cancelSearch(); found.open = false; renderSearch(last.d, true); return; }
      if (ev.target.closest('.again')) { runSearch(); return; }
      const plot = ev.target.closest('canvas.pareto');
      if (plot) {
        const pt = found.result && !panel.querySelector('table.outdated') ? CL.search.pointAt(plot, ev, found.result) : null;
        if (pt) applyFound(pt);
        return;
      }
      applyRow(ev.target.closest('tbody tr[data-i]'));
    });
    // serving limits: a changed limit searches again
    panel.addEventListener('change', (ev) => {
      if (ev.target.dataset && ev.target.dataset.dis) {   // the disaggregated deployments too, or not
        found.disaggregated = ev.target.checked;
        runSearch();
        return;
      }
      const k = ev.target.dataset && ev.target.dataset.lim;
      if (!k) return;
      const v = Number(ev.target.value);
      found.limits[k] = ev.target.value !== '' && v > 0 ? v : 0;
      runSearch();
    });
    panel.addEventListener('mousemove', (ev) => {
      const plot = ev.target.closest && ev.target.closest('canvas.pareto');
      if (!plot) return;
      const pt = CL.search.pointAt(plot, ev, found.result);
      plot.style.cursor = pt ? 'pointer' : 'default';
      plot.title = pt ? (pt.prefill_plan ? CL.search.poolText(pt.prefill_instances, pt.prefill_plan, pt.prefill_batch) + ' → ' +
        CL.search.poolText(pt.decode_instances, pt.decode_plan, pt.decode_batch) : CL.search.planText(pt.plan, pt.batch)) + ': ' + CL.fmt.fixed(pt.output_tokens_per_s_per_user, 1) + ' tokens/s per user, ' +
        CL.fmt.fixed(pt.output_tokens_per_s_per_gpu, 1) + ' per GPU' : '';
    });
    panel.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Enter' && ev.key !== ' ') return;
      const tr = ev.target.closest && ev.target.closest('tbody tr[data-i]');
      if (!tr) return;
      ev.preventDefault();
      applyRow(tr);
    });
  }

  // ---- stage balance (a click runs the core's balance; Apply sets plan.layers_per_stage) ----------
  const balanced = { key: null, base: null, out: null };
  // The config text without its split: a balance answer stays good for the splits it compares.
  const splitless = (text) => { const c = JSON.parse(text); delete c.plan.layers_per_stage; return JSON.stringify(c); };
  function renderBalance(d) {
    const box = $('tables').querySelector('.balance');
    if (!box || !d.good || !balanced.out) return;
    const g = d.good;
    const split = g.r.config.plan.layers_per_stage || null;
    // the answer for this config, or for the one it was asked from once its suggestion is applied
    const applied = balanced.out.ok && JSON.stringify(split) === JSON.stringify(balanced.out.result.suggested.layers_per_stage);
    if (balanced.key === g.text || (applied && balanced.base === splitless(g.text))) CL.tables.balanceLine(box, balanced.out, split);
  }
  function runBalance(g) {
    const t0 = performance.now();
    balanced.out = api.balance(g.text);
    perf.balanceMs = performance.now() - t0;
    balanced.key = g.text;
    balanced.base = splitless(g.text);
    renderBalance(last.d);
    // core-full.js still loading (bridge.js; the line says so): asked again once it is here
    if (balanced.out.pending) api.full().catch(() => {}).then(() => { if (balanced.key === g.text && balanced.out.pending) runBalance(g); });
  }
  function wireBalance() {
    $('tables').addEventListener('click', (ev) => {
      const g = last.d && last.d.good;
      if (!g) return;
      if (ev.target.closest('.balance-run')) runBalance(g);
      else if (ev.target.closest('.balance-apply') && balanced.out && balanced.out.ok) {
        const n = CL.state.clone(state);
        n.example = null;
        n.plan.layers_per_stage = balanced.out.result.suggested.layers_per_stage.slice();
        changeAt = performance.now();
        setState(n, 'push');
      }
    });
  }

  // ---- pointer -------------------------------------------------------------------------------
  function pointer(ev) {
    const rect = $('canvas').getBoundingClientRect();
    return { x: ev.clientX - rect.left, y: ev.clientY - rect.top };
  }
  function onMove(ev) {
    const p = pointer(ev);
    const h = hits.at(p.x, p.y);
    const tip = $('tooltip');
    const g = last.d && last.d.good;
    if (!h || !g) {
      tip.hidden = true;
      if (ui.hover) { ui.hover = null; request(); }
      $('canvas').style.cursor = '';
      return;
    }
    const view = CL.views[currentView()];
    const html = view.tip(g, h.payload);
    if (html) {
      tip.innerHTML = html;
      tip.hidden = false;
      const wrap = $('canvas-wrap').getBoundingClientRect();
      const tw = tip.offsetWidth, th = tip.offsetHeight;
      let x = p.x + 14, y = p.y + 14;
      if (x + tw > wrap.width - 4) x = p.x - tw - 14;
      if (y + th > wrap.height - 4) y = Math.max(4, p.y - th - 10);
      tip.style.left = Math.max(4, x) + 'px';
      tip.style.top = y + 'px';
    } else tip.hidden = true;
    $('canvas').style.cursor = h.payload.kind === 'layer' || h.payload.kind === 'gpu' || h.payload.kind === 'node' ? 'pointer' : '';
    const key = h.payload.key;
    if (key !== (ui.hover && ui.hover.key)) { ui.hover = key ? h.payload : null; request(); }
  }
  function onClick(ev) {
    const p = pointer(ev);
    const h = hits.at(p.x, p.y);
    if (!h) return;
    choose(h.payload);
  }

  // ---- setup ---------------------------------------------------------------------------------
  function buildExamples() {
    const box = $('examples');
    let html = '<select id="example" aria-label="Example plans"><option value="">— pick a plan the text describes —</option>';
    for (const serve of [false, true]) {
      html += '<optgroup label="' + (serve ? 'Serving' : 'Training') + '">';
      for (const ex of CL.examples.list) if (CL.state.serving(ex.state.workload.mode) === serve) html += '<option value="' + ex.id + '">' + CL.fmt.escape(ex.title + ' · ' + ex.sub) + '</option>';
      html += '</optgroup>';
    }
    box.innerHTML = html + '</select><p class="quote"></p><p class="published"></p>';
    box.querySelector('select').addEventListener('change', (ev) => {
      const ex = CL.examples.byId(ev.target.value);
      if (!ex) return;
      changeAt = performance.now();
      setState(CL.examples.stateOf(ex), 'push');
    });
  }

  // ---- downloads -------------------------------------------------------------------------------
  // The SVG of the view on screen, written from the same figure the canvas shows.
  function exportSvg() {
    const g = last.d && last.d.good;
    if (!g) return;
    const view = currentView();
    const u = { layer: state.layer, compact: !!EMBED_VIEW };
    const text = CL.exporter.svgOf(g, view, Math.max(320, canvasWidth), u);
    if (!text) return;
    CL.exporter.download(CL.exporter.fileName(g, view, 'svg'), new Blob([text], { type: 'image/svg+xml' }));
  }
  function exportPng() {
    const g = last.d && last.d.good;
    if (!g) return;
    CL.exporter.png($('canvas'), (blob) => CL.exporter.download(CL.exporter.fileName(g, currentView(), 'png'), blob));
  }

  function copy(text, button) {
    const done = () => { const t = button.textContent; button.textContent = 'Copied'; setTimeout(() => { button.textContent = t; }, 1200); };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, () => prompt('Copy this link', text));
    else prompt('Copy this link', text);
  }

  function init(a) {
    api = a;
    derive = CL.derive.make(api);
    const presets = api.presets().result;
    CL.presets = presets;
    if (EMBED_VIEW) document.body.classList.add('embed');
    if (EMBED_VIEW && window.ResizeObserver) new ResizeObserver(reportHeight).observe(document.body);
    // a parent that started listening late asks again (embed.js: { type: 'cutlab:measure' })
    if (EMBED_VIEW) window.addEventListener('message', (ev) => {
      if (ev.source === window.parent && ev.data && ev.data.type === 'cutlab:measure') { reportedHeight = -1; reportHeight(); }
    });
    buildExamples();
    // Enter in a field must not submit the form (a listener, not an inline onsubmit: strict CSP).
    $('form').addEventListener('submit', (ev) => ev.preventDefault());
    CL.controls.build($('form'), presets, onEdit);
    wireSearch();
    wireBalance();
    if (!EMBED_VIEW) launch = CL.launch.make($('launch'), api);
    // the disaggregation panel's pools are part of the state (state.dis; null: the plan's defaults)
    if (!EMBED_VIEW) disagg = CL.disagg.make($('disagg'), api, (dis) => {
      const next = Object.assign({}, state);
      if (dis) next.dis = dis; else delete next.dis;
      setState(next, 'push');
    });
    if (!EMBED_VIEW) CL.terms.panel($('terms'));
    state = readUrl();
    if (EMBED_VIEW && EMBED_VIEW !== 'tables') state.view = EMBED_VIEW;
    document.querySelectorAll('#tabs [data-view]').forEach((b) => b.addEventListener('click', () => {
      setState(Object.assign(CL.state.clone(state), { view: b.dataset.view }), 'push');
    }));
    const canvas = $('canvas');
    // The ops of one layer open on demand and stay open across redraws ('toggle' does not bubble).
    $('tables').addEventListener('toggle', (ev) => { if (ev.target.matches('details.ops')) CL.tables.opsState.open = ev.target.open; }, true);
    canvas.addEventListener('mousemove', onMove);
    canvas.addEventListener('mouseleave', () => { $('tooltip').hidden = true; if (ui.hover) { ui.hover = null; request(); } });
    canvas.addEventListener('click', onClick);
    canvas.addEventListener('keydown', kbdMove);
    canvas.addEventListener('blur', () => { if (ui.kbd) { ui.kbd = null; ui.hover = null; last.viewKey = null; request(); } });
    $('tabs').addEventListener('keydown', tabKeys);
    $('figure-text').addEventListener('toggle', fillFigureTable);
    window.addEventListener('popstate', () => { state = readUrl(); request(); });
    window.addEventListener('hashchange', () => { const s = readUrl(); if (CL.state.toQuery(s) !== CL.state.toQuery(state)) { state = s; request(); } });
    $('export-svg').addEventListener('click', exportSvg);
    $('export-png').addEventListener('click', exportPng);
    $('copy-link').addEventListener('click', (ev) => copy(location.href.split('?')[0].split('#')[0] + CL.state.toQuery(state), ev.target));
    $('embed-link').addEventListener('click', (ev) => copy(location.href.split('?')[0].split('#')[0] + CL.state.toQuery(state, { embed: state.view }), ev.target));
    if (window.ResizeObserver) {
      new ResizeObserver((entries) => {
        const w = Math.floor(entries[0].contentRect.width);
        if (w && w !== canvasWidth) { canvasWidth = w; last.viewKey = null; request(); }
      }).observe($('canvas-wrap'));
    } else window.addEventListener('resize', () => { canvasWidth = 0; last.viewKey = null; request(); });
    // core-full.js arrived (bridge.js): the view, its description and the launch panel are drawn again.
    api.onFull(() => { last.viewKey = null; described.key = null; request(); if (!api.fullError()) warmCore(); });
    $('loading').hidden = true;
    writeUrl(true);
    frame();
    document.body.dataset.status = 'ready';
    // After the first paint, core-full.js loads in idle time, so that a tab switch, the search or
    // the launch panel normally finds it there. ?prefetch=0: not (the loading states can be seen).
    if (params.get('prefetch') !== '0') {
      const idle = window.requestIdleCallback || ((f) => setTimeout(f, 500));
      requestAnimationFrame(() => idle(() => api.full().catch(() => {}), { timeout: 3000 }));
    }
  }

  // ---- core-full.js warmed up in idle time ---------------------------------------------------------
  // V8 compiles a WebAssembly function when it is first called and optimises it only once it has
  // run a while (dynamic tiering), and the views' drawing code is JIT-compiled the same way, so the
  // first control changes after core-full.js arrived cost about twice the later ones. In idle time
  // after it arrives the page therefore runs its plan through the core as a change would,
  // WARM_ROUNDS times: evaluate and options, then every view's figure at the canvas's width, drawn
  // on a canvas apart (which warms the drawing code and the fitted labels too). The text carries a
  // trailing space (one or two, alternating): the same plan, which the core's one-evaluation cache
  // (core/api.cpp evaluate_cached) takes for a new one, so each round evaluates it anew. Steps run
  // while the idle slice has time left; a change of plan in between stops it, and the plan's own
  // text is evaluated last, so that the cache holds it as before. ?warm=0: not.
  // Measured (bench/bench_chromium.mjs prints the first change; 5 page loads each, medians, first /
  // second change after load, without → with): 64 GPUs Cuts 19 → 9 / 15 → 9 ms, Placement 23 → 22 /
  // 14 → 14, Pipeline 14 → 14 / 12 → 7; 16,384 GPUs Cuts 20 → 16 / 17 → 12, Placement 29 → 16 /
  // 11 → 11, Pipeline 38 → 38 / 32 → 18.
  const WARM_ROUNDS = 4;
  function warmCore() {
    if (EMBED_VIEW === 'tables' || !window.requestIdleCallback || params.get('warm') === '0') return;
    const derive = CL.derive.make(api);
    const views = EMBED_VIEW ? [EMBED_VIEW] : Object.keys(CL.views);   // an embed draws its one view
    const text = last.d && last.d.good ? last.d.good.text : null;
    let k = 0, round = 0, d = null, canvas = null;
    const steps = WARM_ROUNDS * (1 + views.length);
    const slice = (deadline) => {
      const g = last.d && last.d.good;
      if (!g || g.text !== text) return;   // the plan changed: the change itself warms the core
      while (k < steps && deadline.timeRemaining() > 4) {
        const i = k++ % (1 + views.length);
        if (i === 0) d = derive(state, ' '.repeat(1 + (round++ % 2)));   // a new text each round
        else if (d.ok) {
          // as drawView lays out and draws the view, on a canvas of its own
          const width = Math.max(320, canvasWidth), view = CL.views[views[i - 1]];
          const u = { layer: state.layer, gpu: state.gpu, hover: null, compact: !!EMBED_VIEW, width };
          const h = view.layout(d, width, u);
          canvas = canvas || document.createElement('canvas');
          view.draw(G.setup(canvas, width, h), d, { w: width, h }, u, G.hits());
        }
      }
      if (k < steps) { window.requestIdleCallback(slice); return; }
      api.evaluate(text);
      perf.warm = { steps, ms: performance.now() - t0 };   // done (read by tests/browser/cases/lazy.mjs)
    };
    const t0 = performance.now();
    if (text) window.requestIdleCallback(slice);
  }

  // Test hook: read-only access to the state, the derived result and the timings.
  window.__cutlab = {
    get state() { return state; },
    get derived() { return last.d; },
    get found() { return found.result; },
    perf,
    api: () => api,
  };

  // The first view needs core-full.js (the pipeline or placement view, from the URL or an embed):
  // it loads beside core.js from the start.
  function firstViewUses() {
    try {
      const v = EMBED_VIEW && EMBED_VIEW !== 'tables' ? EMBED_VIEW : readUrl().view;
      return CL.views[v] ? CL.views[v].uses : null;
    } catch (err) {
      return null;
    }
  }
  // A serving plan is priced by core-full.js only (core.js prices training: core/api.h
  // training_evaluate_json): a page that opens on one waits for it before its first frame.
  function opensServing(api) {
    try {
      CL.presets = api.presets().result;
      return CL.state.serving(readUrl().workload.mode);
    } catch (err) {
      return false;
    }
  }
  CL.bridge.load({ full: !CL.bridge.FIRST.includes(firstViewUses() || 'evaluate') }).then((api) => (
    opensServing(api) ? api.full().then(() => api, () => api) : api
  )).then(init, (err) => {
    $('loading').textContent = 'Could not start the cutlab core: ' + err.message;
    document.body.dataset.status = 'error';
    console.error(err);
  });
})(window.CL = window.CL || {});
