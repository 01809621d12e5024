// examples.js: the plans that the texts this explorer illustrates talk about, as page states.
// Each carries the sentence it illustrates (`quote`), and a `note` where the sentence leaves out what
// the model shows (the page prints it after the quote); the page shows the core's numbers for it. An example
// whose source published a measured figure carries it (`published`: the metric, its value, where it
// comes from, and the settings the source leaves out); the page shows it beside cutlab's with the
// difference.
// metric: mfu (fraction), tflops_per_gpu (model TFLOP/s per GPU), tokens_per_s_per_gpu.
(function (CL) {
  'use strict';
  const SERVE = { mode: 'infer', batch: 8, prompt_len: 1024, output_len: 256 };
  const E = [
    {
      id: 'tp8pp2', title: 'TP8 · PP2 on two nodes', sub: 'Llama 3 70B · 16 H100',
      quote: 'TP8PP2: node A is stage 1 (layers 1–40), node B is stage 2 (layers 41–80), and within each node those layers are TP-split 8 ways over NVLink.',
      state: { model: 'llama3-70b', cluster: 'dgx-h100', gpus: 16, plan: { tp: 8, pp: 2, sp: true, recompute: 'full' },
        workload: { seq_len: 8192, global_batch: 16, grad_dtype: 'bf16' }, view: 'placement' },
    },
    {
      id: 'llama3-405b', title: 'Llama 3 405B on 16,384 H100', sub: 'TP8 · PP16 · DP128, interleaved 1F1B',
      quote: 'Llama 3\'s public writeup says that with their batch and cluster, TP = 8 was the sweet spot: one node, no crossing the slow network for this cut.',
      state: { model: 'llama3-405b', cluster: 'dgx-h100', gpus: 16384,
        // §3.3.2: one layer less on the first and last stages, "the first model chunk on the first stage has
        // only the embedding, and the last model chunk on the last stage has only output projection and
        // loss": 126 layers + 2 in 16 × 8 chunks of one.
        plan: { tp: 8, pp: 16, sp: true, distributed_optimizer: true, recompute: 'none', schedule: 'interleaved', vpp: 8,
          embedding_in_pipeline_split: true, loss_in_pipeline_split: true },
        workload: { seq_len: 8192, global_batch: 2048, grad_dtype: 'bf16' }, view: 'placement' },
      published: { metric: 'mfu', value: 0.41, source: 'Llama 3 (arXiv:2407.21783) Table 4: 16,384 GPUs, TP8 · PP16 · DP128, 8k, 400 TFLOP/s',
        unstated: 'activation recompute (none here; flash attention stores no scores)' },
    },
    {
      id: 'llama3-405b-cp', title: 'Llama 3 405B at 131k context', sub: 'TP8 · CP16 · PP16 · DP8',
      quote: 'Llama 3 added a fourth dimension, CP, when they went from 8k to 131k, and they replaced data-parallel replicas with context-parallel shards so the per-GPU batch did not collapse.',
      state: { model: 'llama3-405b', cluster: 'dgx-h100', gpus: 16384,
        // §3.3.2: CP all-gathers K and V (not a ring), its latency exposed.
        plan: { tp: 8, pp: 16, cp: 16, cp_comm: 'allgather', sp: true, distributed_optimizer: true, recompute: 'none', schedule: 'interleaved', vpp: 8,
          embedding_in_pipeline_split: true, loss_in_pipeline_split: true },
        workload: { seq_len: 131072, global_batch: 128, grad_dtype: 'bf16' }, view: 'cuts' },
      published: { metric: 'mfu', value: 0.38, source: 'Llama 3 (arXiv:2407.21783) Table 4: TP8 · CP16 · PP16 · DP8, 131k, 380 TFLOP/s',
        unstated: 'activation recompute (none here). The gap is open: no long-context run is in cutlab\'s validation, so its attention over 131k keys is unchecked' },
    },
    {
      id: 'deepseek-v3', title: 'DeepSeek-V3: PP16 × EP64, ZeRO-1, no TP', sub: '2,048 H800 · DualPipe · fp8',
      quote: 'An MoE 671B looks like DeepSeek-V3: PP 16 × EP 64 × ZeRO-1, no TP.',
      // DeepSeek-V3 §3.2-3.3: no full recompute; RMSNorm and MLA up-projections recomputed, SwiGLU inputs
      // cached in fp8 (outputs recomputed), bf16 Adam moments, EMA on the CPU, MTP on the last stage.
      state: { model: 'deepseek-v3', cluster: 'hgx-h800', gpus: 2048,
        plan: { tp: 1, pp: 16, ep: 64, zero: 1, schedule: 'dualpipe', ep_dispatcher: 'deepep', ep_dispatch_dtype: 'fp8', recompute: 'selective',
          recompute_modules: ['layernorm', 'mla_up_proj', 'moe_act'], activation_func_fp8_input_store: true },
        workload: { seq_len: 4096, global_batch: 15360, dtype: 'fp8', moment_dtype: 'bf16', ema: 'cpu' }, view: 'cuts' },
      // 180K H800 GPU hours per trillion tokens: 1e12 / (180e3 · 3600 s) = 1,543 tokens/s per GPU.
      published: { metric: 'tokens_per_s_per_gpu', value: 1e12 / (180e3 * 3600),
        source: 'DeepSeek-V3 (arXiv:2412.19437) §1: 180K H800 GPU hours per trillion tokens',
        unstated: 'the micro-batch (1 here) and the batch of the measured phase (15,360 is the final one) are not stated' },
    },
    {
      id: 'mixtral-folding', title: 'Mixtral 8x22B with MoE Parallel Folding', sub: 'attention TP2 · experts ETP1 × EP8 · PP8',
      quote: 'MoE Parallel Folding: attention uses one mesh (TP × CP × DP), experts use another (ETP × EP × EDP), same pipeline depth.',
      // The paper gives the mesh (TP2, ETP1 × EP8, PP8) but not the schedule: Megatron-Core's interleaved
      // 1F1B with one layer per virtual stage (56 layers = 8 stages × 7 chunks) is assumed, the schedule
      // Megatron runs deep pipelines with. Plain 1F1B leaves a 20% bubble (38% MFU). No recompute: with
      // flash attention, selective recompute frees no memory here (58.9 GiB either way) and costs 1.6% of the step.
      state: { model: 'mixtral-8x22b', cluster: 'dgx-h100', gpus: 128,
        plan: { tp: 2, pp: 8, ep: 8, etp: 1, sp: true, distributed_optimizer: true, recompute: 'none', schedule: 'interleaved', vpp: 7 },
        workload: { seq_len: 4096, global_batch: 256, grad_dtype: 'bf16' }, view: 'cuts' },
      published: { metric: 'mfu', value: 0.493, source: 'MoE Parallel Folding (Liu et al. 2025, arXiv:2504.14960): Mixtral 8x22B on H100',
        unstated: 'the pipeline schedule, virtual stages and recompute are not in the text (interleaved with 7 virtual stages and no recompute here: with flash attention selective recompute frees no memory; plain 1F1B\'s 20% bubble would give 38%)' },
    },
    {
      id: 'serve-tp4', title: 'Serving with TP4: 1/4 of every layer', sub: 'Llama 3 70B · 4 GPUs · serve',
      quote: 'Each GPU multiplies the same input against its slice of the matrix. The matmul cost and, crucially, the weight-memory reads are shared 4 ways — that’s why TP cuts decode latency.',
      state: { model: 'llama3-70b', cluster: 'dgx-h100', gpus: 4, plan: { tp: 4 }, workload: SERVE, view: 'cuts' },
    },
    {
      id: 'serve-pp4', title: 'Serving with PP4: 3 of 4 GPUs wait', sub: 'Llama 3 70B · 4 GPUs · serve',
      quote: 'Each GPU is a stage holding intact layers: GPU 0 → layers 1–20, GPU 1 → 21–40, … Hatched = idle. A token visits stages in sequence, so at any instant 3 of 4 GPUs wait.',
      state: { model: 'llama3-70b', cluster: 'dgx-h100', gpus: 4, plan: { pp: 4 }, workload: Object.assign({ batching: 'static' }, SERVE), view: 'pipeline' },
    },
    {
      id: 'serve-tp8pp2', title: 'Serving with TP8 · PP2 on two nodes', sub: 'Llama 3 70B · 16 H100 · serve',
      quote: 'With full nodes you don’t pick one axis — you nest them. TP8PP2: node A is stage 1 (layers 1–40), node B is stage 2 (layers 41–80), and within each node those layers are TP-split 8 ways over NVLink.',
      state: { model: 'llama3-70b', cluster: 'dgx-h100', gpus: 16, plan: { tp: 8, pp: 2 }, workload: SERVE, view: 'placement' },
    },
    {
      id: 'serve-ep8', title: 'Serving MoE with EP8: whole experts', sub: 'Mixtral 8x22B · 8 GPUs · serve',
      quote: 'An expert never spans GPUs, so in-expert math never waits on the interconnect. Communication is only the all-to-all token dispatch: a token hops to whichever GPUs host its routed experts, and no per-layer all-reduce is needed.',
      note: 'Attention runs as 8 data-parallel copies, each with its own requests; the experts are not copied: at every MoE layer each GPU sends its tokens’ hidden states to the GPUs of their top-2 experts and gets the outputs back (dispatch and combine all-to-alls), so the eight copies share every expert and each expert sees the tokens of all eight.',
      state: { model: 'mixtral-8x22b', cluster: 'dgx-h100', gpus: 8, plan: { ep: 8 }, workload: SERVE, view: 'cuts' },
    },
    {
      id: 'moe-tp', title: 'Serving MoE under pure TP', sub: 'Mixtral 8x22B · TP8 · 8 GPUs · serve',
      quote: 'For MoE models under pure TP, even each expert runs across all GPUs.',
      state: { model: 'mixtral-8x22b', cluster: 'dgx-h100', gpus: 8, plan: { tp: 8 }, workload: SERVE, view: 'cuts' },
    },
    {
      id: 'tp-ep', title: 'TP and EP in one layer', sub: 'Mixtral 8x22B · 8 GPUs · attention TP8, experts EP8 · serve',
      quote: 'Same eight GPUs, two axes in one layer. The dense attention sublayer benefits from TP\'s shared memory reads; the sparse expert sublayer benefits from EP\'s whole-expert locality.',
      state: { model: 'mixtral-8x22b', cluster: 'dgx-h100', gpus: 8, plan: { tp: 8, ep: 8, etp: 1 }, workload: SERVE, view: 'cuts' },
    },
    {
      id: 'dp2-tp8', title: 'DP2 × TP8: two replicas', sub: 'Llama 3 70B · 16 GPUs · serve',
      quote: 'A DP2 deployment of two TP8 nodes is “DP on the outside, TP on the inside”. Between replicas there is no model communication at all — just a load balancer.',
      state: { model: 'llama3-70b', cluster: 'dgx-h100', gpus: 16, plan: { tp: 8 }, workload: SERVE, view: 'placement' },
    },
    {
      id: 'ep8', title: 'EP8 in training: GPU 0 owns experts 0–7', sub: 'Qwen2-57B-A14B · 32 GPUs',
      quote: 'The MoE cut. GPU 0 owns experts 0–7. GPU 1 owns 8–15. After attention, every token has to go to the GPUs that hold its chosen experts, then come back.',
      // A plan that fits and keeps the pipe busy: the distributed optimizer, the experts' activation
      // recomputed with core attention (Megatron recompute_modules), 16 micro-batches for 4 stages.
      state: { model: 'qwen2-57b-a14b', cluster: 'dgx-h100', gpus: 32,
        plan: { pp: 4, ep: 8, distributed_optimizer: true, recompute: 'selective', recompute_modules: ['core_attn', 'moe_act'] },
        workload: { seq_len: 4096, global_batch: 128 }, view: 'cuts' },
    },
    {
      id: 'zero3', title: 'ZeRO-3 / FSDP over 64 GPUs', sub: 'Llama 3 8B · DP64',
      quote: 'ZeRO-1 shards only the optimizer. ZeRO-2 adds gradients. ZeRO-3 adds the weights. More sharding, less memory, more chatter.',
      state: { model: 'llama3-8b', cluster: 'dgx-h100', gpus: 64, plan: { zero: 3, recompute: 'selective' },
        workload: { seq_len: 8192, global_batch: 64 }, view: 'placement' },
    },
  ];
  function stateOf(ex) {
    const s = Object.assign(CL.state.clone(CL.state.DEFAULT), { modelOver: {}, clusterOver: {}, layer: null, gpu: null },
      CL.state.clone(ex.state));
    s.workload = CL.state.clone(ex.state.workload);
    s.example = ex.id;
    return s;
  }
  CL.examples = { list: E, stateOf, byId: (id) => E.find((e) => e.id === id) };
})(window.CL = window.CL || {});
