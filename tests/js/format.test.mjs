// web/format.js: the page's number formats, checked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sandbox = { window: {} };
vm.createContext(sandbox);
vm.runInContext(fs.readFileSync(path.join(root, 'web/format.js'), 'utf8'), sandbox, { filename: 'format.js' });
const F = sandbox.window.CL.fmt;

test('a change prints with its sign, a minus sign for a fall and none for no change', () => {
  // A run with one wave more can be shorter: its throughput then rises (it printed "−-3.0%" before).
  assert.equal(F.signedPct(-0.03), '−3.0%');
  assert.equal(F.signedPct(0.032), '+3.2%');
  assert.equal(F.signedPct(0.00001), '0.0%');
  assert.equal(F.signedPct(-0.00001), '0.0%');
  assert.equal(F.signedPct(-12.3456, 2), '−1,234.56%');
});
