// terms.js: the words of the page explained where they appear. Each term has a short definition and
// its source; the page marks a term (a dotted underline, the definition as its title, reachable by
// keyboard) and lists them all under "Terms". Constant text: every piece reaches the page escaped or
// as text.
(function (CL) {
  'use strict';
  const LIST = [
    { id: 'mfu', term: 'MFU', def: 'Model FLOPs utilization: the FLOPs the model needs per second (no recompute counted) over the GPUs\' peak. 40–50% is good at scale.',
      source: 'PaLM, Chowdhery et al. 2022 (arXiv:2204.02311) App. B; Llama 3 405B ran at 38–43% (arXiv:2407.21783, Table 4)' },
    { id: 'hfu', term: 'HFU', def: 'Hardware FLOPs utilization: the FLOPs the GPUs execute, recomputation included, over their peak; never below MFU.',
      source: 'Korthikanti et al. 2022 (arXiv:2205.05198) §6; PaLM App. B' },
    { id: 'bubble', term: 'bubble', def: 'The time pipeline stages wait for work at the start and the end of a step: (p − 1)/m of the ideal time for 1F1B with p stages and m micro-batches.',
      source: 'Narayanan et al. 2021 (arXiv:2104.04473) §2.2' },
    { id: 'vpp', term: 'VPP', def: 'Virtual pipeline stages: each GPU holds v chunks of layers (interleaved 1F1B), dividing the bubble by v for v times the hand-offs.',
      source: 'Narayanan et al. 2021 (arXiv:2104.04473) §2.2.2' },
    { id: 'etp', term: 'ETP / EDP', def: 'Expert tensor and expert data parallel: with MoE Parallel Folding the experts get their own mesh ETP × EP × EDP × PP on the same GPUs as attention\'s TP × CP × DP × PP.',
      source: 'Liu et al. 2025, MoE Parallel Folding (arXiv:2504.14960)' },
    { id: 'zbh1', term: 'ZB-H1', def: 'Zero-bubble schedule H1: the backward split into input gradients (B) and weight gradients (W), W filling the bubble; 1F1B\'s memory, about a third of its bubble.',
      source: 'Qi et al. 2023, Zero Bubble Pipeline Parallelism (arXiv:2401.10241) §3' },
    { id: 'dualpipe', term: 'DualPipe', def: 'A pipeline fed from both ends; each forward runs beside a backward so that one\'s computation hides the other\'s communication (MoE all-to-alls).',
      source: 'DeepSeek-V3 (arXiv:2412.19437) §3.2.1' },
    { id: 'inflight', term: 'in flight', def: 'Training: the micro-batches whose activations a stage holds at once. Serving: the sequences a replica decodes at once (in-flight, continuous batching).',
      source: 'Narayanan et al. 2021 §2.2.1; Yu et al. 2022, Orca (OSDI\'22)' },
  ];
  const byId = Object.fromEntries(LIST.map((t) => [t.id, t]));
  const esc = (s) => CL.fmt.escape(s);
  // `label` marked as the term `id` (HTML from constants, escaped).
  function mark(label, id) {
    const t = byId[id];
    return '<span class="term-def" tabindex="0" data-term="' + esc(id) + '" title="' + esc(t.def + ' — ' + t.source) + '">' + esc(label) + '</span>';
  }
  // The "Terms" list in `root` (a <details>), built as text.
  function panel(root) {
    const el = (tag, props, ...kids) => { const e = Object.assign(document.createElement(tag), props || {}); e.append(...kids); return e; };
    const dl = el('dl', { className: 'terms' });
    for (const t of LIST) dl.append(el('dt', { id: 'term-' + t.id, textContent: t.term }), el('dd', {}, t.def + ' ', el('span', { className: 'src', textContent: t.source })));
    root.replaceChildren(el('summary', {}, el('h2', { textContent: 'Terms' }), el('span', { className: 'muted', textContent: ' what the words of this page mean, with their sources' })), dl);
  }
  CL.terms = { LIST, mark, panel };
})(window.CL = window.CL || {});
