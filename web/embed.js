// embed.js: for a page that embeds cutlab figures (a book chapter, a blog post). Include it once,
//   <script src="https://YOUR-HOST/cutlab/embed.js" defer></script>
// and embed a view either as a frame the script recognises,
//   <iframe class="cutlab-embed" title="Llama 3 70B cut TP 8 × PP 2"
//           src="https://YOUR-HOST/cutlab/index.html?model=llama3-70b&gpus=16&tp=8&pp=2&global_batch=64&embed=cuts"></iframe>
// (class "cutlab-embed" or the attribute data-cutlab), or as an element that makes the frame,
//   <cutlab-figure src="…index.html?…&embed=placement" title="…"></cutlab-figure>
// Each embedded page (app.js, ?embed=…) posts { type: 'cutlab:height', height, id } to its parent on
// load and whenever its content changes height; this script sets the frame to exactly that height,
// so the figure shows whole with no scroll bar inside it. A message is used only when it comes from
// one of these frames (its window, and the origin of its src) and has that shape with a height
// between MIN and MAX pixels; anything else is ignored. Frames are 100% wide: each figure lays
// itself out for the width it gets (500–700 px reads well).
// No inline styles: the sizes go through the CSSOM, so the page may run under a strict CSP.
(function () {
  'use strict';
  if (window.__cutlabEmbed) return;   // included twice: one listener
  window.__cutlabEmbed = true;
  const MIN = 40, MAX = 20000;         // CSS pixels accepted from a frame
  const FRAMES = 'iframe.cutlab-embed, iframe[data-cutlab], cutlab-figure > iframe';

  // The origin a frame's messages must carry: its src's (file: pages send "null").
  function originOf(frame) {
    try {
      const u = new URL(frame.getAttribute('src') || '', document.baseURI);
      return u.protocol === 'file:' ? 'null' : u.origin;
    } catch (err) {
      return undefined;
    }
  }
  function frameOf(source) {
    for (const f of document.querySelectorAll(FRAMES)) if (f.contentWindow === source) return f;
    return null;
  }
  function dress(frame) {
    frame.style.width = '100%';
    frame.style.border = '0';
    frame.style.display = 'block';
    if (!frame.style.height) frame.style.height = '480px';   // until the figure reports its height
  }

  window.addEventListener('message', (ev) => {
    const m = ev.data;
    if (!m || typeof m !== 'object' || m.type !== 'cutlab:height') return;
    const h = m.height;
    if (typeof h !== 'number' || !Number.isFinite(h) || h < MIN || h > MAX) return;
    const frame = frameOf(ev.source);
    if (!frame || ev.origin !== originOf(frame)) return;
    dress(frame);
    frame.style.height = Math.ceil(h) + 'px';
    frame.dataset.cutlabHeight = String(Math.ceil(h));
  });

  // <cutlab-figure src title>: a frame of class cutlab-embed inside, with the same src and title.
  if (window.customElements && !customElements.get('cutlab-figure')) {
    customElements.define('cutlab-figure', class extends HTMLElement {
      connectedCallback() {
        if (this.querySelector('iframe')) return;
        const f = document.createElement('iframe');
        f.className = 'cutlab-embed';
        f.src = this.getAttribute('src') || '';
        f.title = this.getAttribute('title') || 'cutlab figure';
        dress(f);
        this.style.display = 'block';
        this.appendChild(f);
      }
    });
  }
  // Dress the frames, and ask those that loaded before this script ran to report again.
  const dressAll = () => document.querySelectorAll(FRAMES).forEach((f) => {
    if (!f.style.width) dress(f);
    const o = originOf(f);
    if (f.contentWindow && o) f.contentWindow.postMessage({ type: 'cutlab:measure' }, o === 'null' ? '*' : o);
  });
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', dressAll);
  else dressAll();
})();
