// Native = WASM on a corpus of well over 800 configs (issue 15): the golden corpus
// (tests/golden/corpus.mjs: every model preset × clusters × plans) and, for each of its configs, four
// broken texts: cut in half (a parse error), trailing bytes after the document, a duplicate key, and
// a negative TP (validation errors). core.evaluate() must answer each with exactly the text the native
// façade writes (`cutlab_golden_dump --evaluate`): the same numbers to the last digit and the same
// error messages and paths, parse errors included. core.js: the page's first module, whose evaluate()
// the page uses (core-full.js gives the same answers: tests/js/first.test.mjs); it prices training
// only, and a valid serving config, which it answers "pending", is compared as core-full.js answers it.
// Run: node --test tests/js/   (env WASM_DIR, default build-wasm/web; GOLDEN_DUMP, default
// build-native/tests/golden/cutlab_golden_dump)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const wasmDir = path.resolve(process.env.WASM_DIR ?? path.join(root, 'build-wasm/web'));
const dump = path.resolve(process.env.GOLDEN_DUMP ?? path.join(root, 'build-native/tests/golden/cutlab_golden_dump'));
const require = createRequire(import.meta.url);

function corpus() {
  const p = spawnSync(process.execPath, [path.join(root, 'tests/golden/corpus.mjs')], { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(p.status, 0, p.stderr);
  const configs = p.stdout.split('\n').filter((l) => l.trim());
  const lines = [];
  for (const text of configs) {
    const cfg = JSON.parse(text);
    lines.push(text);
    lines.push(text.slice(0, Math.floor(text.length / 2)));  // cut: unexpected end of input
    lines.push(text + ' {}');                                   // bytes after the document
    lines.push('{"workload": {}, ' + text.slice(1));            // a duplicate key when the config has a workload
    lines.push(JSON.stringify(Object.assign({}, cfg, { plan: Object.assign({}, cfg.plan, { tp: -1 }) })));
  }
  return lines;
}

test('native = WASM on the golden corpus and its broken variants: the same answer text, errors included', async () => {
  const lines = corpus();
  assert.ok(lines.length >= 800, lines.length + ' configs');
  const p = spawnSync(dump, ['--evaluate'], { input: lines.join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 30 });
  assert.equal(p.status, 0, p.stderr);
  const native = p.stdout.split('\n');
  const core = await require(path.join(wasmDir, 'core.js'))();
  const full = await require(path.join(wasmDir, 'core-full.js'))();
  let failed = 0, errors = 0, parseErrors = 0, pending = 0;
  for (let i = 0; i < lines.length; ++i) {
    let wasm = core.evaluate(lines[i]);
    if (JSON.parse(wasm).pending) {
      ++pending;
      assert.equal(JSON.parse(lines[i]).workload.mode, 'infer', 'only a serving config is left to core-full.js');
      wasm = full.evaluate(lines[i]);
    }
    if (wasm !== native[i]) {
      ++failed;
      if (failed <= 3) assert.fail('line ' + (i + 1) + ' differs:\n' + lines[i].slice(0, 200) + '\nwasm:   ' + wasm.slice(0, 400) + '\nnative: ' + native[i].slice(0, 400));
    }
    const a = JSON.parse(wasm);
    if (!a.ok) {
      ++errors;
      if (a.errors.some((e) => e.code === 'parse_error')) ++parseErrors;
    }
  }
  console.log(lines.length + ' texts, ' + errors + ' answered with errors (' + parseErrors + ' parse errors), ' + pending +
    ' serving configs priced by core-full.js, ' + failed + ' differ');
  assert.ok(pending >= 50, pending + ' serving configs');
  assert.equal(failed, 0);
  // The broken variants do fail, and the parse errors are among them.
  assert.ok(errors >= (lines.length / 5) * 3, errors + ' error answers');
  assert.ok(parseErrors >= (lines.length / 5) * 2, parseErrors + ' parse errors');
});
