// compare.mjs BASE/api.txt NEW/api.txt: compares the façade's JSON line by line (tests/golden/record)
// and prints every differing path with both values; numbers equal within 1e-12 relative count as equal.
// Exit 0 when nothing differs.
import { readFileSync } from 'node:fs';
const [a, b] = process.argv.slice(2).map((f) => readFileSync(f, 'utf8').split('\n'));
const diffs = [];
function walk(x, y, path) {
  if (typeof x === 'number' && typeof y === 'number') {
    if (x !== y && Math.abs(x - y) > 1e-12 * Math.max(Math.abs(x), Math.abs(y))) diffs.push(`${path}: ${x} → ${y}`);
    return;
  }
  if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') {
    if (JSON.stringify(x) !== JSON.stringify(y)) diffs.push(`${path}: ${JSON.stringify(x)?.slice(0, 200)} → ${JSON.stringify(y)?.slice(0, 200)}`);
    return;
  }
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const k of keys) walk(x[k], y[k], `${path}/${k}`);
}
const n = Math.max(a.length, b.length);
for (let i = 0; i < n; i++) {
  if (a[i] === b[i]) continue;
  const split = (l) => { const m = /^(\S+ \S+) (.*)$/.exec(l ?? ''); return m ? [m[1], m[2]] : [l, 'null']; };
  const [ka, ja] = split(a[i]), [kb, jb] = split(b[i]);
  if (ka !== kb) { diffs.push(`line ${i + 1}: ${ka} → ${kb}`); continue; }
  walk(JSON.parse(ja), JSON.parse(jb), ka);
}
for (const d of diffs) console.log(d);
console.log(`${diffs.length} differences`);
process.exit(diffs.length ? 1 : 0);
