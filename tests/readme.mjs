// The README's numbers are the current build's: every block of the README that shows a `$ cutlab …`
// command with its output is run with this build's CLI and compared line by line (trailing spaces
// aside), and the figures the README quotes in its text from a command (the search, the serving
// search's front, the disaggregated example) are computed again from the CLI's --json; the validation
// errors it quotes, and those docs/validation.md's list of the check's limits states, are checked against
// the documented ones (section 3).
// Usage: node tests/readme.mjs README.md CUTLAB  (exit 0 when all match; a diff of each mismatch).
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

const [readmePath, cli] = process.argv.slice(2);
const readme = fs.readFileSync(readmePath, 'utf8');
const root = path.dirname(path.resolve(readmePath));
const run = (args) => execFileSync(cli, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const json = (args) => JSON.parse(run([...args, '--json']));
const failures = [];
let checks = 0;
const check = (ok, what) => { checks++; if (!ok) failures.push(what); };

// 1. The blocks: "```\n$ cutlab ARGS [\\\n    ARGS]\nOUTPUT```".
for (const m of readme.matchAll(/```\n\$ cutlab ((?:[^\n]*\\\n)*[^\n]*)\n([\s\S]*?)```/g)) {
  const args = m[1].replace(/\\\n/g, ' ').trim().split(/\s+/);
  const want = m[2].split('\n').map((l) => l.trimEnd());
  const got = run(args).split('\n').map((l) => l.trimEnd());
  while (got.length && got[got.length - 1] === '') got.pop();
  while (want.length && want[want.length - 1] === '') want.pop();
  const diff = [];
  for (let i = 0; i < Math.max(want.length, got.length); i++)
    if (want[i] !== got[i]) diff.push('  line ' + (i + 1) + '\n    README: ' + (want[i] ?? '(none)') + '\n    cutlab: ' + (got[i] ?? '(none)'));
  check(diff.length === 0, '`cutlab ' + args.join(' ') + '`: the README shows another output\n' + diff.slice(0, 8).join('\n'));
}

// 2. Figures quoted in the text, formatted as the README writes them.
const fixed = (x, d) => x.toFixed(d);
const commas = (x) => Math.round(x).toLocaleString('en-US');
// A quoted figure may wrap anywhere in the README's text: runs of white space compare as one space.
const flat = (t) => t.replace(/\s+/g, ' ');
const flatReadme = flat(readme);
const quoted = (text, what) => check(flatReadme.includes(flat(text)), what + ': the README should say "' + flat(text) + '"');

const s = json(['search', '--model', 'llama3-70b', '--cluster', 'dgx-h100', '--gpus', '64', '--seq-len', '8192', '--global-batch', '64']).result;
const pruned = s.pruned_invalid + s.pruned_equivalent + s.pruned_memory + s.pruned_bound;
quoted(commas(s.candidates) + ' plans here, ' + fixed(100 * pruned / s.candidates, 1) + '% pruned (' + commas(s.pruned_bound) + ' by the step bound of ' +
  fixed(s.step_bound_s, 2) + ' s), ' + commas(s.evaluated), 'the training search');

const front = (limits) => json(['search', '--model', 'llama3-70b', '--cluster', 'dgx-h100', '--gpus', '8', '--mode', 'infer', '--prompt-len', '2048',
  '--output-len', '512', ...limits]).result;
const f = front([]).front, a = f[0], z = f[f.length - 1];
const mesh = (p) => 'TP ' + p.plan.tp + (p.plan.pp > 1 ? ' × PP ' + p.plan.pp : '') + ' at batch ' + p.batch;
quoted('the front runs from ' + mesh(a) + ' (' + fixed(a.output_tokens_per_s_per_user, 1) + ' tokens/s per\nuser, ' + fixed(a.output_tokens_per_s_per_gpu, 1) +
  ' per GPU) to ' + mesh(z) + ' (' + fixed(z.output_tokens_per_s_per_user, 1) + ' per user, ' + fixed(z.output_tokens_per_s_per_gpu, 1) + ' per GPU)', 'the serving front');
const best = front(['--max-tpot-ms', '20', '--max-ttft-ms', '500']).best[0];
quoted('the best is ' + mesh(best) + ' (' + fixed(best.output_tokens_per_s_per_user, 1) + ' per user, ' + fixed(best.output_tokens_per_s_per_gpu, 1) + ' per GPU)',
  'the serving search under limits');

// The serving search at a request rate (Llama 3 8B at 20 requests/s of 1024/256 on up to 8 H100s).
const atRate = (limits) => json(['search', '--model', 'llama3-8b', '--cluster', 'dgx-h100', '--gpus', '8', '--mode', 'infer', '--prompt-len', '1024',
  '--output-len', '256', '--request-rate', '20', ...limits]).result;
const r20 = atRate([]), r20best = r20.best[0], r20met = atRate(['--max-tpot-ms', '5']).best[0];
const r20mesh = (p) => 'TP ' + p.plan.tp + (p.plan.dp > 1 ? ' × DP ' + p.plan.dp : '') + ' on ' + p.gpus + ' GPUs';
quoted(r20mesh(r20best) + ' first (TTFT ' + fixed(r20best.ttft_s * 1e3, 1) + ' ms, TPOT ' + fixed(r20best.tpot_s * 1e3, 1) + ' ms, ' +
  commas(r20best.output_tokens_per_s_per_gpu) + ' tokens/s per GPU); under TPOT ≤ 5 ms, ' + r20mesh(r20met) + ' (' + fixed(r20met.tpot_s * 1e3, 2) + ' ms;',
  'the serving search at a request rate');
const r20end = r20.front[0];
quoted('the front ends at ' + r20mesh(r20end).replace(' on 8 GPUs', ' on all 8') + ' (TPOT ' + fixed(r20end.tpot_s * 1e3, 2) + ' ms, ' +
  fixed(r20end.concurrency, 1) + ' sequences in flight per replica)', 'the serving front at a request rate');

const r4 = json(['search', '--model', 'llama3-70b', '--cluster', 'dgx-h100', '--gpus', '16', '--mode', 'infer', '--prompt-len', '2048', '--output-len', '512',
  '--request-rate', '4', '--max-ttft-ms', '500', '--max-tpot-ms', '20', '--disaggregated']).result;
const r4co = r4.best[0], r4one = json(['evaluate', '--model', 'llama3-70b', '--cluster', 'dgx-h100', '--tp', '8', '--mode', 'infer', '--batch', '64',
  '--prompt-len', '2048', '--output-len', '512', '--request-rate', '4']).result.inference;
quoted('co-located, ' + r20mesh(r4co) + ' (TTFT ' + fixed(r4co.ttft_s * 1e3, 1) + ' ms, TPOT ' + fixed(r4co.tpot_s * 1e3, 1) + ' ms; TP 8 on 8 GPUs keeps up at batch 64 with ' +
  fixed(r4one.concurrency, 1) + ' in flight, TPOT ' + fixed(r4one.tpot_s * 1e3, 1) + ' ms)', 'the co-located search at 4 requests/s');
const r4d = r4.disaggregated.best[0];
quoted(r4d.prefill_gpus + r4d.decode_gpus + ' GPUs (TTFT ' + fixed(r4d.ttft_s * 1e3, 1) + ' ms, TPOT ' + fixed(r4d.tpot_s * 1e3, 1) + ' ms;',
  'the disaggregated search at 4 requests/s');

const d = json(['evaluate', 'tests/fixtures/disaggregated.json']).result;
const colocated = json(['evaluate', '--model', 'llama3-70b', '--cluster', 'dgx-h100', '--tp', '8', '--mode', 'infer', '--batch', '64', '--prompt-len', '2048',
  '--output-len', '512']).result.inference;
const ms = (x) => fixed(x * 1e3, 1) + ' ms';
quoted('prefill ' + fixed(d.prefill.requests_per_s, 2) + ' requests/s at its batch of ' + d.prefill.batch + ' (TTFT ' + ms(d.prefill.ttft_s) + '), decode ' +
  fixed(d.decode.requests_per_s, 2) + ' (TPOT ' + ms(d.decode.tpot_s) + ' against ' + ms(colocated.tpot_s) + ' co-located at batch 64); ' +
  fixed(d.output_tokens_per_s_per_gpu, 1) + ' output tokens/s per GPU, bound by ' + d.bound + ', so the prefill pool holds ' + fixed(d.prefill_in_flight, 2) +
  ' prompts at a time and the deployment\'s TTFT is ' + ms(d.ttft_s) + '; balanced at ' + fixed(100 * d.balance.prefill_fraction, 1) + '% prefill GPUs → ' +
  fixed(d.balance.output_tokens_per_s_per_gpu, 1) + ' per GPU', 'the disaggregated example');

// The disaggregated example at a request rate: its waits for a prefill and a decode slot.
const evaluateConfig = (name, config) => {
  const file = path.join(os.tmpdir(), 'cutlab-readme-' + process.pid + '-' + name + '.json');
  fs.writeFileSync(file, JSON.stringify(config));
  try {
    return json(['evaluate', file]).result;
  } finally {
    fs.rmSync(file);
  }
};
const atRateD = (rate) => {
  const config = JSON.parse(fs.readFileSync(path.join(root, 'tests/fixtures/disaggregated.json'), 'utf8'));
  config.workload.request_rate_per_s = rate;
  return evaluateConfig('disaggregated-' + rate, config);
};
const d65 = atRateD(6.5), d68 = atRateD(6.8);
quoted('The example at 6.5 requests/s (capacity ' + fixed(d65.capacity_requests_per_s, 2) + ') waits ' + ms(d65.prefill_queue_s) + ' for prefill and ' +
  ms(d65.decode_queue_s) + ' for a decode slot and step (TTFT ' + ms(d65.ttft_s) + ', TPOT ' + ms(d65.tpot_s) + '); at 6.8, ' + fixed(d68.ttft_s, 2) + ' s.',
'the disaggregated example at a request rate');
// The disaggregated search's example on 10 GPUs: a TP 1 × PP 2 prefill instance (batch 4) and a TP 8 decode one.
const d10 = evaluateConfig('disaggregated-10', {model: 'llama3-70b', cluster: 'dgx-h100',
  workload: {prompt_len: 2048, output_len: 512, request_rate_per_s: 4},
  disaggregation: {prefill: {gpus: 2, plan: {tp: 1, pp: 2}, batch: 4}, decode: {gpus: 8, plan: {tp: 8}, batch: 64}}});
quoted('prefill instance at ' + fixed(400 / d10.capacity_requests_per_s, 0) + '% of its capacity of ' + fixed(d10.capacity_requests_per_s, 2) +
  ' prompts/s, TTFT is ' + fixed(d10.ttft_s, 2) + ' s, ' + fixed(d10.prefill_queue_s, 2) + ' s of it waiting', 'the disaggregated search at 4 requests/s on 10 GPUs');

const mixArgs = ['evaluate', '--model', 'llama3-70b', '--cluster', 'dgx-h100', '--tp', '8', '--mode', 'infer', '--batch', '64', '--length-mix', '1000/200:70%,8000/500:30%'];
const mixRun = json([...mixArgs, '--num-requests', '3000']).result.inference, mixStream = json(mixArgs).result.inference;
quoted('replayed step by step: ' + fixed(mixRun.run_s, 1) + ' s per replica, ' + commas(mixRun.output_tokens_per_s_total) + ' output tokens/s, ' +
  fixed(100 * (1 - mixRun.output_tokens_per_s_total / mixStream.output_tokens_per_s_total), 1) + '% under the endless stream\'s ' +
  commas(mixStream.output_tokens_per_s_total), 'the offline run of a mix');
const dm = json(['evaluate', 'tests/fixtures/disaggregated-mix.json']).result.length_classes;
const secs = (x) => fixed(x, 2) + ' s';
quoted('the short class waits ' + ms(dm.ttft_s[0]) + ' for its first token (' + fixed(dm.kv_transfer_s[0] * 1e3, 2) + ' ms of it the transfer) and is done in ' +
  secs(dm.e2e_latency_s[0]) + ', the long one ' + ms(dm.ttft_s[1]) + ' (' + fixed(dm.kv_transfer_s[1] * 1e3, 2) + ' ms) and ' + secs(dm.e2e_latency_s[1]),
'the disaggregated mix');

const split = json(['search', '--model', 'deepseek-v3', '--cluster', 'gb200-nvl72', '--gpus', '72', '--mode', 'infer', '--weight-dtype', 'fp4',
  '--kv-dtype', 'fp8', '--prompt-len', '8192', '--output-len', '1024', '--max-ttft-ms', '2000', '--max-tpot-ms', '20', '--disaggregated']).result;
const c0 = split.best[0], d0 = split.disaggregated.best[0];
const axis = (p) => 'TP ' + p.tp + (p.pp > 1 ? ' × PP ' + p.pp : '') + (p.ep > 1 ? ' × EP ' + p.ep : '');
quoted('co-located, the best is ' + axis(c0.plan) + ' at batch ' + c0.batch + ' (' + fixed(c0.output_tokens_per_s_per_gpu, 1) + ' tokens/s per GPU, ' +
  fixed(c0.output_tokens_per_s_per_user, 1) + ' per user); disaggregated, ' + d0.prefill_instances + ' instances of ' + axis(d0.prefill_plan) +
  ' prefilling for ' + (d0.decode_instances === 1 ? 'one' : d0.decode_instances) + ' of ' + axis(d0.decode_plan) + ' decoding at batch ' + d0.decode_batch + ' (' +
  fixed(d0.output_tokens_per_s_per_gpu, 1) + ' per GPU, ' + fixed(d0.output_tokens_per_s_per_user, 1) + ' per user), bound by ' + d0.bound, 'the disaggregated search');

// 3. The validation errors the README quotes are the ones core/validation.h documents (ValidationLimits and
// ServingLimits, to which tests/test_validation.cpp holds the build) and the held-out serving errors of
// docs/validation.md's generated line (to which scripts/validation-report --check holds it).
const header = fs.readFileSync(path.join(root, 'core/validation.h'), 'utf8');
const limits = (name) => {
  const body = header.match(new RegExp('struct ' + name + ' \\{([\\s\\S]*?)\\n\\};'));
  const v = {};
  for (const m of (body ? body[1] : '').matchAll(/(\w+) = ([\d.]+)/g)) v[m[1]] = Number(m[2]);
  return v;
};
const pct = (x) => (x === undefined ? '(missing)' : fixed(x, 1) + '%');
const T = limits('ValidationLimits'), S = limits('ServingLimits');
quoted('the mean absolute error is ' + pct(T.documented_mean_percent) + ', the largest ' + pct(T.documented_worst_percent), 'the training runs\' errors');
quoted('the runs are off by ' + pct(T.documented_held_out_mean_percent) + ' on average', 'the training runs held out');
quoted(pct(T.documented_within_family_mean_percent) + ' within a GPU family', 'the training runs held out within a family');
const over = S.documented_cases_over_30;
quoted('mean error ' + pct(S.documented_mean_percent) + ', largest ' + pct(S.documented_worst_percent) + ', ' + over + (over === 1 ? ' case' : ' cases') + ' over 30%',
  'the serving cases\' errors');
const doc = fs.readFileSync(path.join(root, 'docs/validation.md'), 'utf8');
const cv = doc.match(/source out \*\*([\d.]+%)\*\* \([\d.]+%\) · model out \*\*([\d.]+%)\*\* \([\d.]+%\) · GPU out \*\*([\d.]+%)\*\*/);
check(cv !== null, 'docs/validation.md: the generated line of the serving cases held out is missing');
if (cv) {
  quoted(cv[1] + ' leaving one publication out', 'the serving cases held out by source');
  quoted(cv[2] + ' leaving one model out, ' + cv[3] + ' one GPU family', 'the serving cases held out by model and GPU family');
}

// Each cluster preset's serving held-out error (core/presets.h ClusterPreset) is its family's mean |error|
// held out by model in docs/validation.md's generated GPU table, or, pooled, the GPU-out mean of its summary line.
const presets = json(['presets']).result;
const gpuTable = {};
for (const m of doc.matchAll(/^\| ([\w-]+) \| \d+ \| [\d.]+% \| [\d.]+% \| [\d.]+% \| [\d.]+% \| ([\d.]+)% \| [\d.]+% \| [\d.]+% \| [\d.]+% \|$/gm))
  gpuTable[m[1]] = Number(m[2]);
for (const c of presets.clusters) {
  const want = c.serving_held_out_family === 'pooled' ? (cv ? Number(cv[3].replace('%', '')) : NaN) : gpuTable[c.serving_held_out_family];
  check(want !== undefined && Math.abs(c.serving_held_out_percent - want) < 0.05,
    'the ' + c.name + ' preset: serving_held_out_percent ' + c.serving_held_out_percent + ' against ' + want + ' in docs/validation.md (' +
    c.serving_held_out_family + ')');
}

// docs/validation.md's list of what fails the check states the same documented figures.
const flatDoc = flat(doc);
const stated = (text, what) => check(flatDoc.includes(flat(text)), what + ': docs/validation.md should say "' + flat(text) + '"');
stated('exceeds the documented ' + pct(T.documented_mean_percent), 'the training runs\' documented mean');
stated('the documented largest error, ' + pct(T.documented_worst_percent), 'the training runs\' documented largest error');
stated('exceeds the documented ' + pct(T.documented_held_out_mean_percent) + ' (§6), or its within-family part the documented ' +
  pct(T.documented_within_family_mean_percent), 'the training runs\' documented held-out errors');
stated(pct(T.documented_uncalibrated_mean_percent) + ' mean and ' + pct(T.documented_uncalibrated_worst_percent) + ' largest', 'the runs reported apart');

for (const x of failures) console.error('FAIL ' + x);
console.log(checks + ' README checks, ' + failures.length + ' failed');
process.exit(failures.length ? 1 : 0);
