#!/usr/bin/env node
// embed.js GLUE.js MODULE.wasm OUT.js [NAME]: a single-file script (web/core.js, web/core-full.js)
// from Emscripten's glue and its .wasm. NAME: the glue's -sEXPORT_NAME (default createCutlab), the
// global the script defines and what require() returns.
//
// Emscripten's SINGLE_FILE inlines the module as base64, which gzip cannot compress well: base64's
// 6-bit symbols hide the wasm's byte patterns (a 606,840-byte module: 250 KB gzip alone, 333 KB as
// base64 inside core.js). Here the module is deflated first (zopfli, or zlib at level 9: below) and
// the deflated bytes go in as base64: random bytes in base64 gzip back to about their own size, so
// core.js carries about what the module costs compressed (253 KB for that module with zlib), and
// the file itself is 60% smaller.
// (Each byte as one character of a latin-1 string literal was measured too: 263 KB gzip, and a
// file twice the module's size.)
//
// The glue is built without SINGLE_FILE and is handed the inflated bytes as Module.wasmBinary, so it
// instantiates them without a fetch: core.js works from file://, in a classic or Blob worker and in
// node, and under a CSP of script-src 'self' 'wasm-unsafe-eval' (no connect-src needed). Inflating
// uses the platform's DecompressionStream (Chromium 80, Firefox 113, Safari 16.4, node 18), once.
'use strict';
const fs = require('fs');
const zlib = require('zlib');

const [gluePath, wasmPath, outPath, name = 'createCutlab'] = process.argv.slice(2);
if (!outPath || !/^[A-Za-z_$][\w$]*$/.test(name)) {
  console.error('usage: embed.js GLUE.js MODULE.wasm OUT.js [EXPORT_NAME]');
  process.exit(2);
}
const glue = fs.readFileSync(gluePath, 'utf8');
const wasm = fs.readFileSync(wasmPath);
if (!glue.includes(`var ${name} =`)) {
  console.error(`embed.js: ${gluePath} does not define ${name} (built with -sEXPORT_NAME=${name}?)`);
  process.exit(1);
}
// Deflate (zlib format, what DecompressionStream('deflate') reads). With CUTLAB_ZOPFLI set to a
// zopfli binary (wasm/CMakeLists.txt), zopfli --zlib does it: the same format, about 5.5% smaller
// than zlib -9 (a 560,404-byte module: core.js 245.5 → 233.4 KB gzip), a few seconds per build;
// checked by inflating it back.
function deflate(bytes) {
  const zopfli = process.env.CUTLAB_ZOPFLI;
  if (!zopfli) return zlib.deflateSync(bytes, { level: 9 });
  const out = require('child_process').execFileSync(zopfli, ['--zlib', '-c', wasmPath], { maxBuffer: 1 << 28 });
  if (Buffer.compare(zlib.inflateSync(out), bytes) !== 0) {
    console.error(`embed.js: ${zopfli} --zlib did not give back ${wasmPath}`);
    process.exit(1);
  }
  return out;
}
const deflated = deflate(wasm).toString('base64');

// NAME(arg) keeps its promise: the module is inflated on the first call (and kept), checked
// (length and the wasm magic), then the glue instantiates it. Every failure rejects the promise.
const wrapper = `
${name} = (function (glue, deflated, length) {
  var inflated = null;
  function inflate() {
    if (typeof DecompressionStream !== 'function')
      return Promise.reject(new Error('core.js needs DecompressionStream (Chromium 80, Firefox 113, Safari 16.4, node 18 or later)'));
    var text = atob(deflated), bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; ++i) bytes[i] = text.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
    return new Response(stream).arrayBuffer().then(function (buffer) {
      var out = new Uint8Array(buffer);
      if (out.length !== length || out[0] !== 0 || out[1] !== 0x61 || out[2] !== 0x73 || out[3] !== 0x6d)
        throw new Error('core.js: the embedded module is damaged');
      return out;
    });
  }
  return function (arg) {
    var a = Object.assign({}, arg || {});
    if (a.wasmBinary) return glue(a);
    inflated = inflated || inflate();
    return inflated.then(function (bytes) {
      a.wasmBinary = bytes;
      return glue(a);
    });
  };
})(${name}, "${deflated}", ${wasm.length});
if (typeof exports === 'object' && typeof module === 'object') module.exports = ${name};
`;
fs.writeFileSync(outPath, glue + wrapper, 'utf8');
