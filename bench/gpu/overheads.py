#!/usr/bin/env python3
"""The serving step's fixed costs on one GPU (docs/validation.md §8, "Kernel rates measured on an H200"): what
serving_seq_layer_us and serving_moe_layer_us stand for, measured with PyTorch's kernels in CUDA graphs.

    python3 bench/gpu/overheads.py OUT.json

- decode_attention: decode attention (one query per sequence, GQA 64/8 heads of 128, bf16, flash attention
  2 through torch's SDPA) over B sequences of S keys, at equal KV bytes (B x S fixed) and at several B: the time
  beyond the KV bytes per sequence is the per-sequence cost of one layer's attention.
- moe_routing: an MoE layer's work beside its grouped GEMMs, as an engine without fused routing kernels runs
  it, captured in a CUDA graph: the router GEMM, softmax and top-k, the token counts per expert and their
  offsets, the sort of the token copies by expert, the expand (gather) into expert order and the finalize
  (weighted scatter-add back to the tokens), for T tokens of DeepSeek-R1 (256 experts, top 8, h 7,168) and
  Qwen3-30B-A3B (128, top 8, h 2,048).
Medians of triton.testing.do_bench; random data; failures recorded.
"""
import functools
import json
import sys

import torch

from common import attempt as attempt_in, captured, median_s

dev = "cuda"
torch.manual_seed(0)
results = {"errors": [], "decode_attention": [], "moe_routing": []}
attempt = functools.partial(attempt_in, results)


def decode_attention(B, S, Hq=64, Hkv=8, D=128, layers=8):
    qs = [torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16) for _ in range(layers)]
    kv = [(torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16),
           torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)) for _ in range(layers)]

    def step():
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
            for q, (k, v) in zip(qs, kv):
                torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    g = captured(step)
    t = median_s(g.replay) / layers
    results["decode_attention"].append({"batch": B, "S": S, "layer_s": t, "kv_bytes": 2 * B * Hkv * S * D * 2})


for B, S in [(64, 4096), (256, 1024), (1024, 256), (2048, 128), (128, 1024), (512, 1024), (1024, 1024)]:
    if len(sys.argv) > 2 and sys.argv[2] == "--moe-only":
        break
    attempt(f"decode attention {B}x{S}", lambda: decode_attention(B, S))


def moe_routing(name, T, E, k, h, layers=16):
    xs = [torch.randn(T, h, device=dev, dtype=torch.bfloat16) for _ in range(layers)]
    routers = [torch.randn(E, h, device=dev, dtype=torch.bfloat16) * 0.02 for _ in range(layers)]
    outs = [torch.zeros(T, h, device=dev, dtype=torch.bfloat16) for _ in range(layers)]
    ys = [torch.randn(T * k, h, device=dev, dtype=torch.bfloat16) for _ in range(layers)]  # the experts' outputs

    def step():
        for x, r, out, y in zip(xs, routers, outs, ys):
            logits = x @ r.t()
            w, idx = torch.topk(torch.softmax(logits.float(), dim=-1), k, dim=-1)
            flat = idx.reshape(-1)
            counts = torch.zeros(E, dtype=torch.int64, device=dev).scatter_add_(0, flat, torch.ones_like(flat))  # no host sync
            torch.cumsum(counts, 0)
            order = torch.argsort(flat, stable=True)
            x.index_select(0, order // k)  # expand: each copy's row, in expert order
            out.zero_()
            out.index_add_(0, order // k, y * w.reshape(-1, 1)[order].to(y.dtype))  # finalize

    g = captured(step)
    t = median_s(g.replay) / layers
    results["moe_routing"].append({"case": name, "tokens": T, "experts": E, "top_k": k, "h": h, "layer_s": t,
                                   "copy_bytes": 2 * T * k * h * 2})


for T in (64, 512, 2048, 8192):
    attempt(f"moe routing deepseek {T}", lambda: moe_routing("deepseek-r1", T, 256, 8, 7168))
    attempt(f"moe routing qwen3-30b {T}", lambda: moe_routing("qwen3-30b-a3b", T, 128, 8, 2048))

with open(sys.argv[1] if len(sys.argv) > 1 else "overheads.json", "w") as fh:
    json.dump(results, fh, indent=1)

for r in results["decode_attention"]:
    print(f"decode attention B {r['batch']:>5} S {r['S']:>5}: {r['layer_s']*1e6:8.1f} us per layer, "
          f"{r['kv_bytes']/r['layer_s']/1e12:.3f} TB/s of KV")
for r in results["moe_routing"]:
    print(f"moe routing {r['case']:14} T {r['tokens']:>5}: {r['layer_s']*1e6:8.1f} us per layer")
print("errors", len(results["errors"]))
