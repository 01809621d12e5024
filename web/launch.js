// launch.js: the "Launch" panel. The plan on screen as the launch configuration of the framework
// that runs it, from the core's launch() (core/launch.h: Megatron-LM arguments, Megatron-Bridge
// overrides, a torchtitan TOML, a DeepSpeed config for training; vllm serve and SGLang flags for
// serving). The text is shown and copied as text (textContent), never as HTML: it carries names a
// link or a pasted config.json sets. One core call per plan and format, made when the panel is open.
(function (CL) {
  'use strict';
  const FORMATS = {
    train: [['megatron', 'Megatron-LM'], ['megatron-bridge', 'Megatron-Bridge'], ['torchtitan', 'torchtitan'], ['deepspeed', 'DeepSpeed']],
    infer: [['vllm', 'vLLM'], ['sglang', 'SGLang']],
  };
  const el = (tag, props, ...kids) => { const e = Object.assign(document.createElement(tag), props || {}); e.append(...kids); return e; };

  // make(root, api): builds the panel in `root` (a <details>); update(d) shows the last valid plan of
  // the derived state d (derive.js).
  function make(root, api) {
    const chosen = { train: 'megatron', infer: 'vllm' };
    let mode = null, shownKey = null, text = '', fileName = '';
    const tabs = el('div', { className: 'launch-tabs', role: 'tablist' });
    tabs.setAttribute('aria-label', 'Framework');
    const pre = el('pre', { className: 'launch-text', tabIndex: 0 });
    const notes = el('ul', { className: 'launch-notes' });
    const copyButton = el('button', { type: 'button', textContent: 'Copy', title: 'Copy the arguments or file to the clipboard' });
    const saveButton = el('button', { type: 'button', textContent: 'Download', title: 'Save as a file' });
    const name = el('span', { className: 'launch-file' });
    const summary = el('summary', {}, el('h2', { textContent: 'Launch' }),
      el('span', { className: 'muted', textContent: ' this plan as the arguments or config file of the framework that runs it' }));
    root.replaceChildren(summary, tabs, el('div', { className: 'launch-bar' }, name, copyButton, saveButton), pre, notes);

    function buildTabs() {
      tabs.replaceChildren(...FORMATS[mode].map(([id, label]) => {
        const b = el('button', { type: 'button', textContent: label });
        b.setAttribute('role', 'tab');
        b.dataset.format = id;
        b.setAttribute('aria-selected', String(chosen[mode] === id));
        b.addEventListener('click', () => { chosen[mode] = id; shownKey = null; update(last); });
        return b;
      }));
    }
    let last = null;
    function update(d) {
      last = d;
      const g = d && d.good;
      if (!g || !root.open) { root.removeAttribute('aria-busy'); return; }
      const m = g.r.mode === 'infer' ? 'infer' : 'train';
      if (m !== mode) { mode = m; buildTabs(); }
      tabs.querySelectorAll('button').forEach((b) => b.setAttribute('aria-selected', String(b.dataset.format === chosen[mode])));
      const key = g.text + '|' + chosen[mode];
      if (key === shownKey) return;
      shownKey = key;
      const out = api.launch(g.text, chosen[mode]);
      // core-full.js is loading (bridge.js): asked again on the frame after it is here
      if (out.pending) {
        root.setAttribute('aria-busy', 'true');
        shownKey = null;
        text = '';
        pre.textContent = 'Loading… (the rest of the cutlab core, core-full.js)';
        notes.replaceChildren();
        name.textContent = '';
        return;
      }
      root.removeAttribute('aria-busy');
      if (!out.ok) {
        text = '';
        pre.textContent = out.errors.map((e) => (e.path || '/') + ': ' + e.message).join('\n');
        notes.replaceChildren();
        name.textContent = '';
        return;
      }
      text = out.result.text;
      fileName = out.result.file_name;
      pre.textContent = text;
      name.textContent = fileName;
      notes.replaceChildren(...out.result.notes.map((n) => el('li', { textContent: n })));
    }
    root.addEventListener('toggle', () => { shownKey = null; update(last); });
    copyButton.addEventListener('click', () => {
      const done = () => { copyButton.textContent = 'Copied'; setTimeout(() => { copyButton.textContent = 'Copy'; }, 1200); };
      if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(text).then(done, () => selectText()); return; }
      selectText();
      try { if (document.execCommand('copy')) done(); } catch (err) { /* the text stays selected to copy by hand */ }
    });
    function selectText() {
      const r = document.createRange();
      r.selectNodeContents(pre);
      const s = window.getSelection();
      s.removeAllRanges();
      s.addRange(r);
    }
    saveButton.addEventListener('click', () => {
      if (!text) return;
      const a = el('a', { href: URL.createObjectURL(new Blob([text], { type: 'text/plain' })), download: fileName });
      document.body.appendChild(a);
      a.click();
      setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 0);
    });
    return { update };
  }
  CL.launch = { make, FORMATS };
})(window.CL = window.CL || {});
