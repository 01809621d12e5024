// The page's first script stays small (issue 13): build-wasm/web/core.js, the first-view module
// (wasm/CMakeLists.txt), is at most 150 KB (150,000 bytes) gzip -9. core-full.js, loaded after the
// first paint, has no limit; its size is printed beside.
// Run: node --test tests/js/   (env WASM_DIR, default build-wasm/web)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmDir = path.resolve(process.env.WASM_DIR ?? path.join(here, '../../build-wasm/web'));
const LIMIT = 150000;

const gzip9 = (file) => zlib.gzipSync(fs.readFileSync(path.join(wasmDir, file)), { level: 9 }).length;

test('core.js is at most 150 KB gzip -9', () => {
  const first = gzip9('core.js'), full = gzip9('core-full.js');
  console.log('core.js ' + first + ' bytes gzip -9 (limit ' + LIMIT + '), core-full.js ' + full);
  assert.ok(first <= LIMIT, 'core.js is ' + first + ' bytes gzip -9, over ' + LIMIT);
});
