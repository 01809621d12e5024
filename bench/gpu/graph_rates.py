#!/usr/bin/env python3
"""Decode GEMMs back to back in a CUDA graph, and cuDNN's attention, on one GPU (docs/validation.md §8,
"Kernel rates measured on an H200"); the companion of kernel_rates.py.

    python3 bench/gpu/graph_rates.py OUT.json

- graph: a stack of L decoder layers' four weight GEMMs (QKV, output, gate+up, down; Llama 3 8B's shapes at
  TP 1 and Llama 3 70B's at TP 8), every layer its own weights, M rows, captured in one CUDA graph as an
  engine's decode step is, and replayed; against the same GEMMs timed one by one (each after an L2 flush).
  The difference per GEMM is what a kernel costs beyond its bytes inside a graph, the serving step's
  kernel floor (core/serving_step.cpp).
- moe_graph: the same for a stack of MoE layers' two grouped GEMMs (Qwen3-30B-A3B at EP 1: 128 experts of
  2,048 x 768, 16 tokens per expert).
- cudnn_attention: torch's scaled_dot_product_attention on its cuDNN backend (the engines' class of Hopper
  attention kernel) for a causal prefill; flash attention 2 beside it.
Medians of triton.testing.do_bench; random data; failures recorded.
"""
import functools
import json
import sys

import torch

from common import attempt as attempt_in, captured, fp8, median_s

dev = "cuda"
torch.manual_seed(0)
results = {"errors": [], "graph": [], "moe_graph": [], "cudnn_attention": []}
attempt = functools.partial(attempt_in, results)





# (K, N) of one layer's GEMMs
LAYERS = {
    "llama3-8b tp1": [(4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096)],
    "llama3-70b tp8": [(8192, 1280), (1024, 8192), (8192, 7168), (3584, 8192)],
}


def graph_stack(name, dtype, M, L):
    shapes = LAYERS[name]
    one = torch.tensor(1.0, device=dev)
    ws, xs = [], {}
    for _ in range(L):
        layer = []
        for K, N in shapes:
            w = torch.randn(N, K, device=dev, dtype=torch.bfloat16) * 0.05
            layer.append(fp8(w) if dtype == "fp8" else w)
        ws.append(layer)
    for K, _ in shapes:
        x = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
        xs[K] = fp8(x) if dtype == "fp8" else x

    def gemm(x, w):
        if dtype == "fp8":
            return torch._scaled_mm(x, w.t(), one, one, out_dtype=torch.bfloat16)
        return torch.mm(x, w.t())

    def step():
        for layer in ws:
            for (K, _), w in zip(shapes, layer):
                gemm(xs[K], w)

    g = captured(step)
    t_graph = median_s(g.replay)
    singles = []
    for (K, N), w in zip(shapes, ws[0]):
        singles.append(median_s(lambda: gemm(xs[K], w)))
    wbytes = sum(K * N for K, N in shapes) * L * (1 if dtype == "fp8" else 2)
    results["graph"].append({"layers": name, "dtype": dtype, "M": M, "L": L, "gemms": 4 * L, "graph_s": t_graph,
                             "single_s": singles, "singles_sum_s": L * sum(singles), "weight_bytes": wbytes,
                             "graph_weight_bytes_per_s": wbytes / t_graph})


for name in LAYERS:
    for dtype in ("fp8", "bf16"):
        for M in (16, 64):
            attempt(f"graph {name} {dtype} M{M}", lambda: graph_stack(name, dtype, M, 32 if "8b" in name else 80))


def moe_stack(dtype, tpe, L, G=128, h=2048, f=768):
    T = G * tpe
    offs = torch.arange(1, G + 1, device=dev, dtype=torch.int32) * tpe
    layers = []
    for _ in range(L):
        w1 = torch.randn(G, 2 * f, h, device=dev, dtype=torch.bfloat16) * 0.05
        w2 = torch.randn(G, h, f, device=dev, dtype=torch.bfloat16) * 0.05
        layers.append((fp8(w1), fp8(w2)) if dtype == "fp8" else (w1, w2))
    x = torch.randn(T, h, device=dev, dtype=torch.bfloat16)
    x2 = torch.randn(T, f, device=dev, dtype=torch.bfloat16)
    sa = torch.ones(T, device=dev)
    s1, s2 = torch.ones(G, 2 * f, device=dev), torch.ones(G, h, device=dev)
    if dtype == "fp8":
        x, x2 = fp8(x), fp8(x2)

    def layer(w1, w2):
        if dtype == "fp8":
            torch._scaled_grouped_mm(x, w1.transpose(-2, -1), sa, s1, offs=offs, out_dtype=torch.bfloat16)
            torch._scaled_grouped_mm(x2, w2.transpose(-2, -1), sa, s2, offs=offs, out_dtype=torch.bfloat16)
        else:
            torch._grouped_mm(x, w1.transpose(-2, -1), offs=offs)
            torch._grouped_mm(x2, w2.transpose(-2, -1), offs=offs)

    def step():
        for w1, w2 in layers:
            layer(w1, w2)

    g = captured(step)
    t_graph = median_s(g.replay)
    t_single = median_s(lambda: layer(*layers[0]))
    wbytes = G * 3 * h * f * L * (1 if dtype == "fp8" else 2)
    results["moe_graph"].append({"case": "qwen3-30b-a3b ep1", "dtype": dtype, "tokens_per_expert": tpe, "L": L,
                                 "gemms": 2 * L, "graph_s": t_graph, "single_layer_s": t_single,
                                 "weight_bytes": wbytes, "graph_weight_bytes_per_s": wbytes / t_graph})


for dtype in ("fp8", "bf16"):
    attempt(f"moe graph {dtype}", lambda: moe_stack(dtype, 16, 24))


def attention(backend, S, H=64, D=128):
    q, k, v = (torch.randn(1, H, S, D, device=dev, dtype=torch.bfloat16) for _ in range(3))
    b = getattr(torch.nn.attention.SDPBackend, backend)
    with torch.nn.attention.sdpa_kernel(b):
        t = median_s(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True))
    results["cudnn_attention"].append({"backend": backend, "S": S, "heads": H, "d": D, "s": t,
                                       "flops_per_s": 4 * S * S * D * H / 2 / t})


for backend in ("CUDNN_ATTENTION", "FLASH_ATTENTION"):
    for S in (2048, 8192, 32768):
        attempt(f"attention {backend} {S}", lambda: attention(backend, S))

with open(sys.argv[1] if len(sys.argv) > 1 else "graph_rates.json", "w") as fh:
    json.dump(results, fh, indent=1)

for r in results["graph"]:
    n = r["gemms"]
    print(f"graph {r['layers']:15} {r['dtype']:4} M{r['M']:>3}: graph {r['graph_s']*1e6:8.1f} us ({r['graph_s']/n*1e6:6.2f}/GEMM), "
          f"one by one {r['singles_sum_s']*1e6:8.1f} us, {r['graph_weight_bytes_per_s']/1e12:.3f} TB/s in the graph")
for r in results["moe_graph"]:
    print(f"moe graph {r['dtype']:4}: graph {r['graph_s']*1e6:8.1f} us, one layer alone {r['single_layer_s']*1e6:7.1f} us "
          f"(x{r['L']} = {r['single_layer_s']*r['L']*1e6:8.1f}), {r['graph_weight_bytes_per_s']/1e12:.3f} TB/s in the graph")
for r in results["cudnn_attention"]:
    print(f"attention {r['backend']:16} S {r['S']:>6}: {r['flops_per_s']/1e12:6.1f} TFLOP/s")
print("errors", len(results["errors"]))
