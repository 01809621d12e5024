// WASM benchmark: the explorer's calls on Llama 3 405B, 16,384 H100s (TP 8 × PP 16 × DP 128).
// Run: node bench/bench_wasm.mjs [build-wasm/web]   (after `cmake --build --preset wasm`)
import { createRequire } from 'node:module';
import path from 'node:path';

const dir = path.resolve(process.argv[2] ?? 'build-wasm/web');
const createCutlab = createRequire(import.meta.url)(path.join(dir, 'core.js'));
const core = await createCutlab();
const config = JSON.stringify({
  model: 'llama3-405b', cluster: { preset: 'dgx-h100', gpus: 16384 },
  plan: { tp: 8, pp: 16, sp: true, recompute: 'selective', distributed_optimizer: true },
  workload: { seq_len: 8192, global_batch: 2048 },
});

function bench(name, fn, minMs = 1000) {
  for (let i = 0; i < 20; ++i) fn();  // warm up
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < minMs) { fn(); ++n; }
  const us = ((performance.now() - t0) * 1000) / n;
  console.log(`${name.padEnd(44)} ${us.toFixed(1).padStart(9)} µs/call  (${n} calls)`);
}

bench('evaluate (JSON in, JSON out)', () => core.evaluate(config));
bench('evaluate + JSON.parse', () => JSON.parse(core.evaluate(config)));
if (core.options) bench('options (valid values of every axis)', () => core.options(config));
if (core.timeline) bench('timeline scene, 1000 px', () => core.timeline(config, 1000, 0));
if (core.gpus) bench('gpus: 64 GPU placements', () => core.gpus(config, 0, 64));
bench('schedule with every op', () => core.schedule(config));
