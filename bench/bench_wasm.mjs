// WASM benchmark: the explorer's calls on Llama 3 405B, 16,384 H100s (TP 8 × PP 16 × DP 128), then
// the whole-space training search (one thread, as in the page) on GPT-3 175B / 1,024 A100s and
// Llama 3 405B / 16,384 H100s: the same spaces as bench/bench_search.cpp natively.
// Run: node bench/bench_wasm.mjs [build-wasm/web]   (after `cmake --build --preset wasm`)
import { createRequire } from 'node:module';
import path from 'node:path';

const dir = path.resolve(process.argv[2] ?? 'build-wasm/web');
// core-full.js: every function (the page's core.js lacks the search: web/bridge.js)
const createCutlabFull = createRequire(import.meta.url)(path.join(dir, 'core-full.js'));
const core = await createCutlabFull();
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
// An offline run of mixed lengths, its schedule replayed step by step (bench_evaluate.cpp's
// BM_EvaluateOfflineMixQwen3_30B); two texts in turn, so that the core's one-entry cache never answers.
const mixTexts = [0, 1].map((i) => JSON.stringify({
  model: 'qwen3-30b-a3b', cluster: 'hgx-h200',
  workload: { mode: 'infer', batch: 512, num_requests: 2048 + i, length_mix: [{ prompt_len: 128, output_len: 128, share: 0.4 },
    { prompt_len: 1000, output_len: 1000, share: 0.4 }, { prompt_len: 8000, output_len: 200, share: 0.2 }] },
}));
let mixI = 0;
bench('evaluate: offline mix, 2,048 requests replayed', () => core.evaluate(mixTexts[mixI++ & 1]));

// The searches: plans in the space (candidates) and simulated plans per second, median of 3 runs,
// by wall time and by this process's CPU time (the two differ on a busy machine).
export const SEARCHES = [
  ['GPT-3 175B, 1,024 A100', { model: 'gpt3-175b', cluster: { preset: 'dgx-a100', gpus: 1024 }, workload: { seq_len: 2048, global_batch: 1536 } }],
  ['Llama 3 405B, 16,384 H100', { model: 'llama3-405b', cluster: { preset: 'dgx-h100', gpus: 16384 }, workload: { seq_len: 8192, global_batch: 2048 } }],
];
for (const [name, cfg] of SEARCHES) {
  const text = JSON.stringify(cfg);
  const runs = [], cpus = [];
  let out = null;
  for (let i = 0; i < 3; ++i) {
    const t0 = performance.now(), c0 = process.cpuUsage();
    out = JSON.parse(core.search(text, 10));
    const c = process.cpuUsage(c0);
    runs.push(performance.now() - t0), cpus.push((c.user + c.system) / 1000);
  }
  if (!out.ok) throw new Error(name + ': ' + JSON.stringify(out.errors));
  const med = (a) => a.sort((x, y) => x - y)[1];
  const ms = med(runs), cpu = med(cpus);
  const r = out.result;
  const rate = (n, t) => Math.round((n / t) * 1000).toLocaleString('en-US').padStart(10);
  console.log(`search ${name} (${r.candidates.toLocaleString('en-US')} candidates, ${r.evaluated.toLocaleString('en-US')} simulated)\n` +
    `  wall ${ms.toFixed(0).padStart(6)} ms ${rate(r.candidates, ms)} candidates/s ${rate(r.evaluated, ms)} simulated/s\n` +
    `  cpu  ${cpu.toFixed(0).padStart(6)} ms ${rate(r.candidates, cpu)} candidates/s ${rate(r.evaluated, cpu)} simulated/s`);
}

// The serving search as the page runs it (one call, with its plot laid out for 900 px): DeepSeek-V3
// in fp4 on 72 GB200, prompt 8,192, output 1,024, TPOT ≤ 20 ms; co-located, then with the
// disaggregated deployments (core/disaggregation_search.h).
const serving = JSON.stringify({ model: 'deepseek-v3', cluster: { preset: 'gb200-nvl72', gpus: 72 },
  workload: { mode: 'infer', prompt_len: 8192, output_len: 1024, weight_dtype: 'fp4', kv_dtype: 'fp8' } });
bench('servingSearch, DeepSeek-V3 on 72 GB200', () => core.servingSearch(serving, 10, 0, 20, 900, false), 2000);
bench('servingSearch + disaggregated, same', () => core.servingSearch(serving, 10, 0, 20, 900, true), 2000);
// The same at 10 requests/s: each plan also on the fewest replicas that serve it, each disaggregated
// pair on the fewest instances (at most 1,000 deployments evaluated whole).
const servingAtRate = JSON.stringify(Object.assign(JSON.parse(serving), { workload: Object.assign(JSON.parse(serving).workload, { request_rate_per_s: 10 }) }));
bench('servingSearch at 10 requests/s, same', () => core.servingSearch(servingAtRate, 10, 0, 20, 900, false), 2000);
bench('servingSearch + disaggregated at 10 requests/s, same', () => core.servingSearch(servingAtRate, 10, 0, 20, 900, true), 2000);

// A prefill-only replica at a request rate (bench_evaluate.cpp's BM_EvaluatePrefillQueue, and PP 1):
// Llama 3 8B, 16 prompts of 512 tokens or 256 of 256 a step under a budget of 65,536, at 30–99% of its
// capacity, the pipelined prompt chain's fixed point (core/serving_prompt_queue.h). Each rate in two
// texts a hair apart, in turn, so that the core's one-entry cache never answers; ms per call.
let slowest = ['', 0];
for (const pp of [1, 2, 4]) {
  const cells = [];
  for (const b of [16, 256]) {
    const workload = { mode: 'infer', batch: b, prompt_len: b > 128 ? 256 : 512, output_len: 1, max_num_tokens: 65536 };
    const head = { model: 'llama3-8b', cluster: { preset: 'dgx-h100', gpus: pp }, plan: { tp: 1, pp }, workload };
    const capacity = JSON.parse(core.evaluate(JSON.stringify(head))).result.inference.requests_per_s;
    for (const load of [0.3, 0.5, 0.9, 0.99]) {
      const texts = [0, 1].map((i) => JSON.stringify({ ...head, workload: { ...workload, request_rate_per_s: load * capacity * (1 + 1e-9 * i) } }));
      let i = 0, n = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < 300) { core.evaluate(texts[i++ & 1]); ++n; }
      const ms = (performance.now() - t0) / n;
      cells.push(`${b}@${load * 100}% ${ms.toFixed(1)}`);
      if (ms > slowest[1]) slowest = [`PP ${pp}, ${b} a step at ${load * 100}%`, ms];
    }
  }
  console.log(`evaluate: prefill queue, Llama 3 8B PP ${pp} (ms)`.padEnd(46), cells.join('  '));
}
console.log(`  slowest: ${slowest[0]}, ${slowest[1].toFixed(1)} ms`);
