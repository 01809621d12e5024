// hardware.h: a cluster of identical GPUs in NVLink domains joined by a scale-out network.
// Peaks come from vendor datasheets (docs/hardware-sources.md); efficiencies are calibrated parameters
// (see docs/validation.md), never per-case factors.
// Ignores: network topology beyond two tiers (rail-optimised fat trees are assumed non-blocking),
// clock throttling, and the difference between NVLink generations beyond their bandwidth.
#pragma once
#include "core/choices.h"

#include <string>

namespace cutlab {

struct Efficiencies {
  double gemm = 0.8;                   // large bf16 GEMMs: fraction of the sustained bf16 GEMM rate (the dense peak ·
                                       // Cluster::gemm_sustained)
  double gemm_fp8 = 0.7;               // large fp8 GEMMs: fraction of the sustained fp8 rate (scaling and casts cost more)
  double gemm_half_balance = 0.43;     // GEMM efficiency = gemm · x/(x + half) · quantization, x the smallest of M,
                                       // N and K, half = gemm_half_balance · the GPU's machine balance (bf16 FLOP per
                                       // HBM byte; core/ops.h gemm_half_dim): 0.43 is 128 elements on an H100 SXM
  double attention = 0.6;              // flash-attention score/value FLOPs, fraction of peak
  double hbm = 0.8;                    // memory-bound ops of training (norms, activations), fraction of HBM bandwidth
  double hbm_stream = 0.9;             // streaming weights and KV cache in decode (large sequential reads); not fitted:
                                       // no published run in validation/ is an inference measurement
  double nvlink = 0.8;                 // NCCL bus bandwidth / link peak inside the NVLink domain
  double scaleout = 0.8;               // same across the scale-out network
  double overlap = 0.9;                // fraction of an overlappable window that really hides communication
  double host_link = 0.8;              // copies between HBM and pinned host memory, fraction of host_link_GBps; not
                                       // fitted (no published run in validation/ offloads activations)
  double deepep_sm_bytes_per_s = 8e9;  // bytes one SM moves in DeepEP/HybridEP's dispatch and combine kernels,
                                       // which run on 20 SMs (core/comm.h deduplicated_all_to_all_time_s)
  double kernel_floor_s = 3e-6;        // least time of one kernel: launch, ramp-up and tail, a few µs per kernel
                                       // launched back to back in a stream (Gray 2019, "Getting Started with CUDA
                                       // Graphs", NVIDIA developer blog); bounds 1–8 µs
  double expert_gemm_host_s = 10e-6;   // host time of one expert's GEMM in each pass (F, B, W) of a grouped GEMM
                                       // that runs one GEMM per local expert (core/ops.cpp mlp_ops), not hidden
                                       // behind the GPU: bounds 0–60 µs
  // Serving (core/serving_step.h); fitted per GPU family to the serving cases (docs/validation.md §8), none of
  // them read by training.
  double serving_gemm = 0.7;            // GEMMs of an engine step at large shapes: fraction of the weight dtype's sustained
                                        // peak (smaller M and few tokens per expert lose more: core/ops.h gemm_efficiency)
  double serving_expert_gemm = 0.8;     // the grouped expert GEMM's rate against the dense projections' (serving_gemm):
                                        // uneven experts padded to tiles in one launch (core/serving_step.cpp)
  double serving_expert_stream = 0.8;   // reading the routed experts' weights in the grouped GEMM, against hbm_stream:
                                        // a few MB per expert in small matrices, not one long stream (core/serving_step.cpp)
  double serving_attention = 0.55;      // attention of an engine step: fraction of the attention dtype's dense peak
  double host_seq_s = 20e-6;            // host (CPU) time per running sequence per engine step, not hidden by the GPU
  double serving_seq_layer_s = 0.3e-6;  // GPU time per running sequence per layer of an engine step beyond the
                                        // roofline's bytes and FLOPs: each sequence's own attention blocks,
                                        // K/V append and routing, latency- not bandwidth-bound (core/serving_step.cpp)
  double serving_moe_layer_s = 30e-6;   // fixed time of each MoE layer of an engine step beyond the kernels it
                                        // lists (core/serving_step.h): routing, token counts and offsets, the
                                        // dispatch's bookkeeping and the exchange of the token counts
  double serving_rank_cv = 0.0;         // spread of one rank's time per MoE layer across the ranks of an EP group
                                        // (coefficient of variation: load and jitter); each MoE layer's exchange
                                        // waits for the slowest rank (core/serving_step.h expected_max_normal)
};

struct Cluster {
  std::string name;
  std::string gpu;        // e.g. "H100 SXM"
  int gpus = 0;           // 0: taken from the plan's mesh; else must equal it
  int gpus_per_node = 8;  // size of the NVLink domain (8 for DGX/HGX, 72 for NVL72)
  // What joins the GPUs of a node, as people name it: "NVLink", or "PCIe" for a server without
  // NVLink. A label for the tables and figures only; the link's figures are nvlink_bytes_per_s and
  // nvlink_latency_s whatever it is called.
  std::string node_link = "NVLink";
  int sms = 0;  // streaming multiprocessors per GPU (GEMM wave quantization); 0: not modelled
  double hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  double bf16_flops_per_s = 0;  // dense peak
  double fp8_flops_per_s = 0;   // dense peak (0: not supported)
  double fp4_flops_per_s = 0;   // dense peak of fp4 (NVFP4) tensor cores (0: none; Blackwell has them)
  // Fraction of the dense datasheet peaks that the fastest large GEMM sustains on this GPU (power and
  // clock limits: the datasheet peak assumes the boost clock). Measured as the maximum achievable
  // matmul FLOPS (MAMF, a search over GEMM shapes): A100 SXM 267.9 of 312 bf16 TFLOP/s (0.859), H100
  // SXM 792.1 of 989 (0.801) (Bekman, "Machine Learning Engineering", Accelerators chapter, MAMF
  // table, CUDA 12.1). The GEMM efficiencies (Efficiencies::gemm, gemm_fp8, serving_gemm) are
  // fractions of this sustained rate, so that they carry from one GPU to another. 1: not measured.
  double gemm_sustained = 1.0;
  double nvlink_bytes_per_s = 0;  // per GPU per direction
  double nvlink_latency_s = 0;
  double scaleout_bytes_per_s = 0;  // per GPU per direction (one NIC per GPU)
  double scaleout_latency_s = 0;
  // GPU ↔ host memory, per GPU per direction (activation offload, Plan::activation_offload_layers):
  // PCIe x16 to the CPU, or NVLink-C2C on Grace superchips (docs/hardware-sources.md); 0: not given.
  // Ignores PCIe switches shared by two GPUs and the host's memory bandwidth.
  double host_link_bytes_per_s = 0;
  double reserved_bytes = 0;  // CUDA context, NCCL buffers: not usable by the model
  // Training memory the caching allocator reserves beyond the tensors it holds, as a fraction of
  // them (reserved = allocated × (1 + f)): block rounding, cached free segments, fragmentation.
  // Bounds 0–1; one value for every cluster (the allocator is software). Fitted to the 6 peak-memory
  // cases (torchtitan Llama 3.1 8B, FSDP on 8 and 128 H100, eager / compiled / Float8; its log's peak
  // reserved memory) on the mean |error|: the optimum is flat from 0.020 to 0.023; 0.02 gives a
  // mean of 2.7% and at most 7.8% (docs/validation.md, peak memory). 0 would give 3.8% and 9.6%.
  double allocator_fragmentation = 0.02;
  Efficiencies efficiency;
};

// A link tier as people name it on this cluster: its node_link inside a node, "scale-out" between nodes.
inline std::string link_label(const Cluster& cl, Link tier) { return tier == Link::NVLink ? cl.node_link : "scale-out"; }

}  // namespace cutlab
