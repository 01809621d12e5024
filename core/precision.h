// precision.h: the number formats serving runs in: bytes per stored weight and KV value, and the
// tensor-core peak its GEMMs run at. One place for the choice, so that every serving formula agrees.
// - Weights: bf16 2 bytes, fp8 1, int4 0.5 (weight-only), fp4 NVFP4: 4-bit E2M1 values in blocks of
//   16 sharing one fp8 (E4M3) scale, so 0.5 + 1/16 bytes per weight (NVIDIA, "Introducing NVFP4 for
//   Efficient and Accurate Low-Precision Inference", technical blog, June 2025; the per-tensor fp32
//   scale is negligible); mxfp4: E2M1 values in blocks of 32 sharing one E8M0 scale, 0.5 + 1/32
//   bytes (OCP Microscaling Formats (MX) Specification v1.0, 2023, §5; gpt-oss's checkpoint stores
//   its experts so). `expert_weight_dtype` stores the routed experts apart.
// - GEMMs: fp4 weights on a GPU with an fp4 peak run fp4 GEMMs (activations quantized to NVFP4 too,
//   as TensorRT-LLM's NVFP4 checkpoints do; mxfp4 too, Blackwell's tensor cores run both block-scaled
//   formats at the fp4 rate), fp8 weights on a GPU with an fp8 peak run fp8 GEMMs;
//   otherwise the weights are dequantised and the GEMMs run in bf16 (weight-only quantisation).
// - The input embedding and the output layer stay 16-bit whatever the weight dtype: quantisation tools
//   and engines quantise the Linear layers of the transformer blocks only. An embedding is a lookup
//   table, never a Linear; NVIDIA TensorRT Model Optimizer's default configurations disable the
//   lm_head quantizer ("*lm_head*": {"enable": False}, modelopt/torch/quantization/config.py), so its
//   FP8 and NVFP4 checkpoints list lm_head among hf_quant_config.json's exclude_modules; DeepSeek-V3's
//   own fp8 checkpoint stores embed_tokens and lm_head in bf16; vLLM's fp8, AWQ and GPTQ methods leave
//   VocabParallelEmbedding and ParallelLMHead unquantised by default. The output layer's GEMM runs at
//   the bf16 peak (as core/ops.h output_ops prices it, and Transformer Engine keeps it in training).
// Ignores: other layers a checkpoint keeps in higher precision (some keep attention or the router), the
// quantisation kernels of the activations.
#pragma once
#include "core/choices.h"
#include "core/hardware.h"

namespace cutlab {

struct Workload;
struct Config;

// Bytes per weight of the input embedding and the output layer, in every weight dtype (rule above).
inline constexpr double kVocabWeightBytes = 2.0;

// Bytes per element of a weight or KV-cache dtype: bf16 2, fp8 1, int4 0.5, fp4 0.5625 (NVFP4 with
// its block scales).
double dtype_bytes(WeightDtype dtype);
double dtype_bytes(KvDtype dtype);
// Bytes per routed-expert weight: expert_weight_dtype's, or weight_dtype's when it is "same".
double expert_weight_bytes(const Workload& w);

// The dense tensor-core peak the serving GEMMs of `w` run at on `c` (FLOP/s; rule above).
double serving_gemm_peak_flops_per_s(const Cluster& c, const Workload& w);
// The same rule for the routed experts' grouped GEMM, by their own dtype (expert_weight_dtype): mxfp4
// experts beside fp8 weights run at the fp4 peak on Blackwell, and dequantised to bf16 on Hopper,
// which has no fp4 tensor cores (the MoE kernels gpt-oss's MXFP4 checkpoint runs there upcast the
// weights to bf16 in the kernel: OpenAI triton_kernels matmul_ogs, TensorRT-LLM's TRITON MoE backend).
double serving_expert_gemm_peak_flops_per_s(const Cluster& c, const Workload& w);

// The dense peak the attention math (Q·Kᵀ and P·V) of a serving step runs at (FLOP/s): fp8 where the
// KV cache is fp8 and the GPU has an fp8 peak (TensorRT-LLM's fp8 context FMHA and its XQA /
// trtllm-gen generation kernels run fp8 Q·Kᵀ and P·V on an fp8 KV cache), bf16 otherwise, whatever
// the weights' dtype: the weights' fp4/fp8 GEMM peak never applies to attention.
double serving_attention_peak_flops_per_s(const Cluster& c, const Workload& w);

// The GEMM path the ops of a layer (core/ops.h) take, for the dense weights or for the routed experts'
// grouped GEMM: quantized (fp8 operands, GEMM efficiency gemm_fp8, Transformer Engine's casts) at
// `peak_flops_per_s`, or bf16 at the bf16 peak. Training: workload.dtype, at the fp8 or bf16 peak.
// Serving (the op-by-op prefill of a static batch, core/inference.cpp): the weights' serving peak
// (serving_gemm_peak_flops_per_s; serving_expert_gemm_peak_flops_per_s for the routed experts, so
// that mxfp4 experts beside fp8 weights run at bf16 on Hopper, as the in-flight engine step prices
// them), quantized when that peak is not the bf16 one.
struct GemmPath {
  bool quantized = false;
  double peak_flops_per_s = 0;
};
GemmPath ops_gemm_path(const Config& config, bool routed_experts);

}  // namespace cutlab
