// mesh.js: rank ↔ mesh coordinates, used to pick which GPUs to ask the core about and to group
// nodes when a cluster is too big to draw GPU by GPU. Index arithmetic only (mixed radix in
// plan.rank_order, innermost first); it mirrors core/placement.cpp gpu_placement() and is checked
// rank by rank against the core's gpu() in tests/js/mesh.test.mjs. Uses placement.strides when
// the core reports them. Everything a GPU *holds* is read from the core (derive.js), never here.
(function (CL) {
  'use strict';

  function make(result) {
    const plan = result.config.plan;
    const pl = result.placement;
    const gpus = result.gpus;
    const G = pl.gpus_per_node;
    const folding = plan.etp > 0;
    const sizes = { tp: plan.tp, cp: plan.cp, ep: folding ? 1 : plan.ep, dp: plan.dp, pp: plan.pp };
    let strides = pl.strides;
    if (!strides) {
      strides = {};
      let s = 1;
      for (const ax of plan.rank_order.split('-')) { strides[ax] = s; s *= sizes[ax] || 1; }
    }
    const etp = result.mesh.etp;
    const perStage = gpus / plan.pp;
    const coord = (rank, ax) => Math.floor(rank / strides[ax]) % sizes[ax];

    const mesh = {
      gpus, gpusPerNode: G, nodes: pl.nodes, folding, sizes, strides, etp,
      coords(rank) {
        const c = { rank, node: Math.floor(rank / G), local: rank % G,
          tp: coord(rank, 'tp'), cp: coord(rank, 'cp'), dp: coord(rank, 'dp'), pp: coord(rank, 'pp') };
        if (folding) {
          const local = rank % perStage;
          c.etp = local % etp;
          c.ep = Math.floor(local / etp) % plan.ep;
          c.edp = Math.floor(local / (etp * plan.ep));
        } else {
          c.ep = coord(rank, 'ep');
          c.etp = c.tp;
          c.edp = c.dp * plan.cp + c.cp;
        }
        return c;
      },
      // A rank with the given coordinate on one axis and 0 on every other (the group of rank 0).
      rankWith(axis, value) {
        if (axis === 'etp') return folding ? value : value * strides.tp;
        if (axis === 'ep' && folding) return value * etp;
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
