// The pipeline view draws the core's scene (timeline()): every op of `cutlab schedule --json`,
// in-flight labels, bubble, legend; hover by rect index; the SVG download holds the same rects in
// the canvas colours, the PNG download is the canvas; in serve mode the same call gives the decode
// walk. One page: the plans come through the URL.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, go, hover, unhover, canvasBox, cliSchedule, shot } from '../lib.mjs';

const figureInfo = (page) => page.evaluate(() => {
  const d = window.__cutlab.derived.good;
  const w = Math.floor(document.getElementById('canvas-wrap').clientWidth);
  const fig = window.CL.views.pipeline.figure(d, Math.max(320, w), { compact: false });
  const sc = fig.sc;
  const again = window.CL.derive.withRectPixels(window.__cutlab.api().timeline(d.text, sc.width, 440)).result;
  const ops = [];
  for (let i = 0; i < sc.rects.count; i++) if (['F', 'B', 'W', 'FB'].includes(sc.rects.kind[i]))
    ops.push([sc.rects.stage[i], sc.rects.kind[i], sc.rects.micro_batch[i], sc.rects.chunk[i], sc.rects.start_s[i], sc.rects.end_s[i]]);
  const stageLabels = fig.stageLabels.map((l) => l.text);
  return { cfg: d.cfg, count: sc.rects.count, same: JSON.stringify(again) === JSON.stringify(sc), ops, stageLabels, right: fig.right.map((r) => r.text),
    peak: sc.schedule.peak_alive_micro_batches, bubble: sc.schedule.bubble_fraction, kinds: Array.from(new Set(sc.rects.kind)).sort(),
    legend: fig.legend.map((l) => l.label), caption: document.getElementById('view-caption').textContent,
    canvasW: document.getElementById('canvas').width, canvasH: Number(document.getElementById('canvas').dataset.height) };
});

async function hoverAndExport(k, page, info, label) {
  // hover the first B bar of stage 2: the tooltip names stage, kind, micro-batch, start → end, duration
  const target = await page.evaluate(() => {
    const d = window.__cutlab.derived.good;
    const fig = window.CL.views.pipeline.figure(d, Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth)), {});
    const R = fig.sc.rects;
    for (let i = 0; i < R.count; i++) if (R.kind[i] === 'B' && R.stage[i] === 1)
      return { x: fig.ox + R.x[i] + R.w[i] / 2, y: fig.oy + R.y[i] + R.h[i] / 2, mb: R.micro_batch[i], s: window.CL.fmt.seconds(R.start_s[i]), e: window.CL.fmt.seconds(R.end_s[i]),
        dur: window.CL.fmt.seconds(R.end_s[i] - R.start_s[i]) };
    return null;
  });
  if (!k.check(target, label + ': a B bar of stage 2 is drawn')) return;
  const box = await canvasBox(page);
  await hover(page, box.x + target.x, box.y + target.y);
  const tip = await page.$eval('#tooltip', (t) => (t.hidden ? '' : t.textContent));
  k.check(tip.includes('stage 2 · B') && tip.includes('micro-batch ' + (target.mb + 1)) && tip.includes(target.s + ' → ' + target.e) && tip.includes(target.dur),
    label + ': hovering a bar names its stage, kind, micro-batch, start → end and duration (' + tip.slice(0, 80) + '…)');
  await page.screenshot({ path: shot('tp8-pp2-pipeline-hover.png') });
  await unhover(page);
  // SVG download: the same scene, the same colours
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cutlab-browser-'));
  try {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
    const svgFile = path.join(tmp, dl.suggestedFilename());
    await dl.saveAs(svgFile);
    const svg = fs.readFileSync(svgFile, 'utf8');
    const group = svg.slice(svg.indexOf('<g class="rects"'), svg.indexOf('</g>', svg.indexOf('<g class="rects"')));
    const rects = group.match(/<rect [^>]*data-kind="[^"]+"/g) || [];
    const fills = await page.evaluate(() => ({ F: window.CL.palette.op.F, B: window.CL.palette.op.B }));
    const fOk = rects.filter((r) => r.includes('data-kind="F"')).every((r) => r.includes('fill="' + fills.F + '"'));
    const bOk = rects.filter((r) => r.includes('data-kind="B"')).every((r) => r.includes('fill="' + fills.B + '"'));
    k.check(/^<svg xmlns/.test(svg) && rects.length === info.count && fOk && bOk,
      label + ': SVG download ' + dl.suggestedFilename() + ' holds the scene\'s ' + rects.length + ' rects in the canvas colours (' + (svg.length / 1024).toFixed(0) + ' KiB)');
    fs.copyFileSync(svgFile, shot('tp8-pp2-pipeline.svg'));
    const [dp] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
    const pngFile = path.join(tmp, dp.suggestedFilename());
    await dp.saveAs(pngFile);
    const png = fs.readFileSync(pngFile);
    const pw = png.readUInt32BE(16), ph = png.readUInt32BE(20);
    k.check(png.slice(1, 4).toString() === 'PNG' && pw === info.canvasW && ph === info.canvasH,
      label + ': PNG download ' + dp.suggestedFilename() + ' is the canvas (' + pw + ' × ' + ph + ')');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function pipelineScene(k, base) {
  let page = null, errors = null;
  for (const [ex, label] of [['tp8pp2', 'TP8 PP2'], ['llama3-405b', 'Llama 3 405B'], ['deepseek-v3', 'DeepSeek-V3 DualPipe']]) {
    await k.step(label, async () => {
      const mark = page ? errors.length : 0;
      if (!page) ({ page, errors } = await k.open(base + '?ex=' + ex + '&view=pipeline'));
      else await go(page, '?ex=' + ex + '&view=pipeline');
      // the figure drawn is the scene timeline() returns for the plot's width and height
      const info = await figureInfo(page);
      const schedP = cliSchedule(info.cfg);
      k.check(info.same, label + ': the figure is the core\'s timeline() scene (' + info.count + ' rects: ' + info.kinds.join(' ') + ')');
      const head = await page.evaluate(() => window.CL.views.pipeline.figure(window.__cutlab.derived.good, Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth)), {}).text[1].text);
      const pct = await page.evaluate((b) => window.CL.fmt.pct(b), info.bubble);
      if (ex === 'tp8pp2') await hoverAndExport(k, page, info, label);
      const sched = await schedP;
      const cliOps = sched.json ? sched.json.ops.map((o) => [o.stage, o.kind, o.micro_batch, o.chunk, o.start_s, o.end_s]) : [];
      // the same ops (stage, kind, micro-batch, chunk), at the same times to the scene's rounding
      // (a power of ten near 1e-7 of its span: core/json_io.h scene_json_text)
      const tol = Math.max(0, ...info.ops.map((o) => o[5])) * 1e-6;
      const byKey = new Map(info.ops.map((o) => [o.slice(0, 4).join(','), o]));
      const same = sched.status === 0 && cliOps.length === info.ops.length && cliOps.every((o) => {
        const b = byKey.get(o.slice(0, 4).join(','));
        return b && Math.abs(b[4] - o[4]) <= tol && Math.abs(b[5] - o[5]) <= tol;
      });
      k.check(same, label + ': every op of `cutlab schedule --json` is a bar (' + cliOps.length + ' ops)');
      k.check(info.right.length > 0 && info.right.every((t, i) => t.startsWith(String(info.peak[Number(info.stageLabels[i].slice(6)) - 1]))),
        label + ': in-flight labels are schedule.peak_alive_micro_batches (' + info.right.slice(0, 3).join(', ') + ', …)');
      k.check(head.includes('bubble ' + pct), label + ': the bubble fraction is shown (' + pct + ')');
      k.check(info.legend.some((l) => /idle/.test(l)) && info.legend.some((l) => /forward/.test(l)), label + ': legend ' + info.legend.join(' · '));
      k.noErrors(errors, label + ' pipeline', mark);
    });
  }
  // serving: the same call gives the decode walk
  await k.step('serve: decode walk', async () => {
    const mark = errors.length;
    await go(page, '?ex=serve-pp4');
    const walk = await page.evaluate(() => {
      const d = window.__cutlab.derived.good;
      const fig = window.CL.views.pipeline.figure(d, Math.max(320, Math.floor(document.getElementById('canvas-wrap').clientWidth)), {});
      const R = fig.sc.rects;
      const dec = [];
      for (let i = 0; i < R.count; i++) if (R.kind[i] === 'decode') dec.push([R.stage[i], R.micro_batch[i], R.end_s[i] - R.start_s[i]]);
      const numbers = [];  // stage 1's bars, left to right
      for (let i = 0; i < R.count; i++) if (R.kind[i] === 'decode' && R.stage[i] === 0) numbers.push(window.CL.views.pipeline.numberOn(fig, i));
      return { view: window.__cutlab.state.view, dec, kinds: Array.from(new Set(R.kind)).sort(), stage_s: d.r.inference.decode_stage_s,
        span_s: Math.max(...R.end_s), caption: document.getElementById('view-caption').textContent, numbers,
        legend: fig.legend.map((it) => it.label).join('; '), micro: d.r.inference.micro_batches };
    });
    // durations to twice the scene's rounding of times (a power of ten near 1e-7 of its span)
    k.check(walk.view === 'pipeline' && walk.kinds.join() === 'decode,idle' && walk.dec.length === 3 * walk.stage_s.length &&
      walk.dec.every(([st, , dur]) => Math.abs(dur - walk.stage_s[st]) <= 2e-6 * walk.span_s),
    'serve: the pipeline view is the core\'s decode walk (3 tokens × ' + walk.stage_s.length + ' stages, idle hatched)');
    k.check(/3 of 4 stages wait/.test(walk.caption), 'serve: "3 of 4 stages wait"');
    // one batch: its bars are numbered by token (1, 2, 3), as the legend says
    k.check(walk.micro === 1 && walk.numbers.join() === '1,2,3' && /numbers: token/.test(walk.legend),
      'serve: one batch\'s bars numbered by token (' + walk.numbers.join() + '; ' + walk.legend + ')');
    k.noErrors(errors, 'serve pipeline', mark);
  });
}

export default [
  { name: 'pipeline: the core\'s scene, hover, SVG and PNG downloads, the decode walk', weight: 5, run: async (k) => pipelineScene(k, (await setup()).fileBase) },
];
