// core.js carries the WASM module deflated (wasm/embed.js): it loads without a .wasm beside it, two
// instances share the one inflated copy, and a damaged copy rejects createCutlab()'s promise with a
// message instead of throwing or hanging.
// Run: node --test tests/js/   (env WASM_DIR, default build-wasm/web)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmDir = path.resolve(process.env.WASM_DIR ?? path.join(here, '../../build-wasm/web'));
const require = createRequire(import.meta.url);
const text = fs.readFileSync(path.join(wasmDir, 'core.js'), 'utf8');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cutlab-embed-'));

// core.js's text, changed by `edit`, loaded from a file of its own (require caches by path).
function load(name, edit) {
  const file = path.join(tmp, name + '.js');
  fs.writeFileSync(file, edit(text));
  return require(file);
}

// The embedded module: the base64 string and the byte count that follow the glue.
const tail = /\}\)\(createCutlab, "([A-Za-z0-9+/=]+)", (\d+)\);/;

test('core.js holds the module deflated, and two instances both answer', async () => {
  const m = tail.exec(text);
  assert.ok(m, 'the wrapper of wasm/embed.js is at the end of core.js');
  assert.ok(!/data:application\/octet-stream;base64,[A-Za-z0-9+/]{64}/.test(text), 'no SINGLE_FILE data URI');
  assert.ok(Buffer.from(m[1], 'base64').length < Number(m[2]), 'the embedded bytes are smaller than the module');
  const createCutlab = load('copy', (t) => t);
  const [a, b] = await Promise.all([createCutlab(), createCutlab()]);
  for (const core of [a, b]) assert.equal(JSON.parse(core.presets()).ok, true);
});

test('a module of the wrong length is refused with a message', async () => {
  const createCutlab = load('length', (t) => t.replace(tail, (all, b64, n) => all.replace(`, ${n});`, `, ${Number(n) + 1});`)));
  await assert.rejects(createCutlab(), /embedded module is damaged/);
});

test('damaged deflate data rejects the promise', async () => {
  const createCutlab = load('bytes', (t) =>
    t.replace(tail, (all, b64) => all.replace(b64, b64.slice(0, 1000) + 'A'.repeat(4000) + b64.slice(5000))));
  await assert.rejects(createCutlab());
});
