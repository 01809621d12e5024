// mesh.js: rank ↔ mesh coordinates for the GPUs the page draws as coloured cells (thousands of
// them, too many to ask the core about one by one). No layout of its own: the core reports the
// strides (result.placement.strides: rank = Σ coordinate × stride over tp, cp, ep, dp, pp, in
// the plan's rank_order; placement.expert_strides: under MoE Parallel Folding, the expert mesh
// etp × ep × edp inside each stage), and a coordinate is ⌊rank / stride⌋ mod size.
// tests/js/mesh.test.mjs checks it rank by rank against the core's gpus(). What a GPU *holds* is
// always read from the core (derive.js), never computed here.
(function (CL) {
  'use strict';

  function make(result) {
    const plan = result.config.plan;
    const pl = result.placement;
    const gpus = result.gpus;
    const G = pl.gpus_per_node;
    const folding = plan.etp > 0;
    const sizes = { tp: plan.tp, cp: plan.cp, ep: folding ? 1 : plan.ep, dp: plan.dp, pp: plan.pp };
    const strides = pl.strides;
    const xs = pl.expert_strides;
    const etp = result.mesh.etp;
    const esizes = { etp, ep: plan.ep, edp: result.mesh.edp };
    const perStage = gpus / plan.pp;
    const coord = (rank, ax) => Math.floor(rank / strides[ax]) % sizes[ax];
    // Expert mesh: under folding its strides count within the stage (the rank modulo GPUs per stage).
    const ecoord = (rank, ax) => Math.floor((folding ? rank % perStage : rank) / xs[ax]) % esizes[ax];

    const mesh = {
      gpus, gpusPerNode: G, nodes: pl.nodes, folding, sizes, strides, expertStrides: xs, etp,
      coords(rank) {
        const c = { rank, node: Math.floor(rank / G), local: rank % G,
          tp: coord(rank, 'tp'), cp: coord(rank, 'cp'), dp: coord(rank, 'dp'), pp: coord(rank, 'pp'),
          ep: ecoord(rank, 'ep'), etp: ecoord(rank, 'etp') };
        // the expert-data-parallel coordinate: its own axis under folding, else CP × DP
        c.edp = folding ? ecoord(rank, 'edp') : c.dp * plan.cp + c.cp;
        return c;
      },
      // A rank with the given coordinate on one axis and 0 on every other (the group of rank 0).
      rankWith(axis, value) {
        if (axis === 'ep' || axis === 'etp') return value * xs[axis];
        return value * strides[axis];
      },
      // Pipeline stages present on a node (usually one).
      nodeStages(node) {
        const first = node * G, last = Math.min(gpus, first + G) - 1;
        const a = coord(first, 'pp'), b = coord(last, 'pp');
        if (a === b && strides.pp >= G) return [a];
        const set = new Set();
        for (let r = first; r <= last; r++) set.add(coord(r, 'pp'));
        return Array.from(set).sort((x, y) => x - y);
      },
    };
    return mesh;
  }
  CL.mesh = { make };
})(window.CL = window.CL || {});
