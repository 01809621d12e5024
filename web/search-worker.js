// search-worker.js: a classic Web Worker that runs the core's training search off the page's thread
// for search-run.js: the pieces of one pass (search-run.js's pieces(), each a search_part of the
// core) one after another, each part posted as it comes. It loads core-full.js, the module with
// every function (the page's core.js has no search_part: bridge.js), by importScripts (script-src
// 'self'; the module is inflated from the script itself, never fetched: wasm/embed.js).
// In: {job, text, top, memoryPrune, budgetMs}; out: {job, out} per piece (the core's answer,
// parsed), then {job, end: true}; {error} when the module could not start. To stop a pass, the
// page terminates the worker.
'use strict';
importScripts('core-full.js', 'search-run.js');

const made = self.createCutlabFull();

self.onmessage = (ev) => {
  const q = ev.data;
  made.then((core) => self.CL.searchPieces(core, q.text, q.top, q.memoryPrune, q.budgetMs, (out) => {
    self.postMessage({ job: q.job, out });
  }).then(() => self.postMessage({ job: q.job, end: true })), (err) => self.postMessage({ error: String((err && err.message) || err) }));
};
