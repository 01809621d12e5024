#!/usr/bin/env python3
"""Kernel rates of one GPU, for the serving efficiencies' priors (docs/validation.md §8, "Measured on an H200").

Run on the GPU (PyTorch with CUDA; Hopper for the fp8 kernels):
    python3 bench/gpu/kernel_rates.py OUT.json

Each figure is the median time of triton.testing.do_bench (device events; 25 ms warm-up, 200 ms of repeats) on
random data (never zeros: they run faster). Weights are rotated among copies so that each timed call reads at
least 1 GB from HBM, far above the 50 MB L2, as an engine's step reads each layer's weights once. Reported:
- hbm: a device-to-device copy (bytes read + written) and a full reduction (bytes read) of 4 GiB;
- dense: y = x·Wᵀ for decode- to prefill-sized M, bf16 (torch.mm) and fp8 e4m3 with per-tensor scales
  (torch._scaled_mm, cuBLASLt): time, TFLOP/s, and the weights' bytes over the time;
- grouped: the routed experts' two GEMMs (gate+up, then down) of one EP rank's experts for the serving cases'
  models, tokens spread evenly, bf16 (torch._grouped_mm) and fp8 with row-wise scales
  (torch._scaled_grouped_mm; both CUTLASS on Hopper);
- attention: torch's scaled_dot_product_attention (flash backend) for a causal prefill and a GQA decode;
- graph_kernel_us: the time per tiny kernel replayed in a CUDA graph.
Every case that fails is recorded with its error, not skipped silently.
"""
import functools
import json
import math
import subprocess
import sys

import torch

from common import attempt as attempt_in, captured, fp8, median_s

dev = "cuda"
torch.manual_seed(0)
results = {"errors": []}
attempt = functools.partial(attempt_in, results)



def rotating(make, bytes_each, min_bytes=1e9):
    n = max(1, math.ceil(min_bytes / bytes_each))
    copies = [make() for _ in range(n)]
    state = {"i": 0}

    def nxt():
        state["i"] = (state["i"] + 1) % n
        return copies[state["i"]]

    return nxt




# --- device -------------------------------------------------------------------------------------------------
p = torch.cuda.get_device_properties(0)
results["device"] = {"name": p.name, "sms": p.multi_processor_count, "memory_bytes": p.total_memory,
                     "torch": torch.__version__, "cuda": torch.version.cuda}
try:
    results["device"]["nvidia_smi"] = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.max.mem",
         "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
except Exception as e:  # noqa: BLE001
    results["device"]["nvidia_smi"] = str(e)

# --- HBM ----------------------------------------------------------------------------------------------------
def hbm():
    n = 4 * 2**30 // 2
    x = torch.randn(n, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    t_copy = median_s(lambda: y.copy_(x))
    t_sum = median_s(lambda: x.sum(dtype=torch.float32))
    results["hbm"] = {"bytes": 2 * n, "copy_s": t_copy, "copy_read_write_bytes_per_s": 4 * n / t_copy,
                      "sum_s": t_sum, "sum_read_bytes_per_s": 2 * n / t_sum}


attempt("hbm", hbm)

# --- dense GEMMs --------------------------------------------------------------------------------------------
results["dense"] = []
DENSE = [(5120, 16384), (8192, 28672), (7168, 4096)]  # (K, N): Llama 4 MLP-sized, Llama 3 70B MLP, an attention-sized one
MS = [1, 16, 64, 256, 1024, 4096, 16384]


def dense(dtype, K, N, M):
    wbytes = K * N * (1 if dtype == "fp8" else 2)
    if dtype == "fp8":
        nxt = rotating(lambda: fp8(torch.randn(N, K, device=dev) * 0.05), wbytes)
        x = fp8(torch.randn(M, K, device=dev))
        one = torch.tensor(1.0, device=dev)
        fn = lambda: torch._scaled_mm(x, nxt().t(), one, one, out_dtype=torch.bfloat16)  # noqa: E731
    else:
        nxt = rotating(lambda: torch.randn(N, K, device=dev, dtype=torch.bfloat16), wbytes)
        x = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
        fn = lambda: torch.mm(x, nxt().t())  # noqa: E731
    t = median_s(fn)
    results["dense"].append({"dtype": dtype, "K": K, "N": N, "M": M, "s": t, "flops_per_s": 2 * M * K * N / t,
                             "weight_bytes_per_s": wbytes / t})


for dtype in ["bf16", "fp8"]:
    for K, N in DENSE:
        for M in MS:
            if dtype == "fp8" and M < 16:
                continue
            attempt(f"dense {dtype} K{K} N{N} M{M}", lambda: dense(dtype, K, N, M))
for dtype in ["bf16", "fp8"]:
    attempt(f"dense {dtype} 8192^3", lambda: dense(dtype, 8192, 8192, 8192))

# --- grouped expert GEMMs -----------------------------------------------------------------------------------
results["grouped"] = []
# name: (local experts on one rank, hidden h, expert intermediate f): gate+up h -> 2f, down f -> h
MOE = {
    "deepseek-r1 ep8": (32, 7168, 2048),
    "llama4-maverick ep8": (16, 5120, 8192),
    "llama4-scout ep4": (4, 5120, 8192),
    "qwen3-235b ep8": (16, 4096, 1536),
}
TOKENS_PER_EXPERT = [16, 64, 256, 1024]


def grouped(dtype, name, G, h, f, tpe):
    wbytes = G * 3 * h * f * (1 if dtype == "fp8" else 2)
    T = G * tpe
    offs = torch.arange(1, G + 1, device=dev, dtype=torch.int32) * tpe
    if dtype == "fp8":
        def make():
            w1 = fp8(torch.randn(G, 2 * f, h, device=dev) * 0.05)  # (G, N, K) row-major: B column-major below
            w2 = fp8(torch.randn(G, h, f, device=dev) * 0.05)
            return w1, w2, torch.ones(G, 2 * f, device=dev), torch.ones(G, h, device=dev)
        nxt = rotating(make, wbytes)
        x = fp8(torch.randn(T, h, device=dev))
        x2 = fp8(torch.randn(T, f, device=dev))
        sa = torch.ones(T, device=dev)

        def fn():
            w1, w2, s1, s2 = nxt()
            torch._scaled_grouped_mm(x, w1.transpose(-2, -1), sa, s1, offs=offs, out_dtype=torch.bfloat16)
            torch._scaled_grouped_mm(x2, w2.transpose(-2, -1), sa, s2, offs=offs, out_dtype=torch.bfloat16)
    else:
        def make():
            return (torch.randn(G, 2 * f, h, device=dev, dtype=torch.bfloat16),
                    torch.randn(G, h, f, device=dev, dtype=torch.bfloat16))
        nxt = rotating(make, wbytes)
        x = torch.randn(T, h, device=dev, dtype=torch.bfloat16)
        x2 = torch.randn(T, f, device=dev, dtype=torch.bfloat16)

        def fn():
            w1, w2 = nxt()
            torch._grouped_mm(x, w1.transpose(-2, -1), offs=offs)
            torch._grouped_mm(x2, w2.transpose(-2, -1), offs=offs)
    t = median_s(fn)
    results["grouped"].append({"dtype": dtype, "case": name, "experts": G, "h": h, "f": f, "tokens_per_expert": tpe,
                               "s": t, "flops_per_s": 2 * T * 3 * h * f / t, "weight_bytes_per_s": wbytes / t})


for dtype in ["fp8", "bf16"]:
    for name, (G, h, f) in MOE.items():
        for tpe in TOKENS_PER_EXPERT:
            attempt(f"grouped {dtype} {name} {tpe}", lambda: grouped(dtype, name, G, h, f, tpe))

# --- attention ----------------------------------------------------------------------------------------------
results["attention"] = []


def prefill(S, H, D):
    q, k, v = (torch.randn(1, H, S, D, device=dev, dtype=torch.bfloat16) for _ in range(3))
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
        t = median_s(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True))
    flops = 4 * S * S * D * H / 2  # QK^T and PV, causal half
    results["attention"].append({"kind": "prefill causal", "S": S, "heads": H, "d": D, "s": t, "flops_per_s": flops / t})


def decode(B, Hq, Hkv, S, D):
    q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
    k = torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)
    v = torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
        t = median_s(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True))
    kv = 2 * B * Hkv * S * D * 2
    results["attention"].append({"kind": "decode gqa", "batch": B, "q_heads": Hq, "kv_heads": Hkv, "S": S, "d": D,
                                 "s": t, "kv_bytes_per_s": kv / t})


attempt("prefill 8192", lambda: prefill(8192, 64, 128))
attempt("prefill 2048", lambda: prefill(2048, 64, 128))
attempt("decode 64x4096", lambda: decode(64, 64, 8, 4096, 128))
attempt("decode 256x1024", lambda: decode(256, 64, 8, 1024, 128))

# --- a tiny kernel in a CUDA graph --------------------------------------------------------------------------
def graph_kernel():
    x = torch.randn(1024, device=dev)
    n = 500

    def adds():
        for _ in range(n):
            x.add_(1.0)

    t = median_s(captured(adds).replay)
    results["graph_kernel_us"] = t / n * 1e6


attempt("graph kernel", graph_kernel)

out = sys.argv[1] if len(sys.argv) > 1 else "kernel_rates.json"
with open(out, "w") as fh:
    json.dump(results, fh, indent=1)

# --- summary ------------------------------------------------------------------------------------------------
print(json.dumps(results["device"]))
if "hbm" in results:
    hb = results["hbm"]
    print(f"hbm copy {hb['copy_read_write_bytes_per_s']/1e12:.3f} TB/s  sum {hb['sum_read_bytes_per_s']/1e12:.3f} TB/s")
for r in results["dense"]:
    print(f"dense {r['dtype']:4} K{r['K']:>5} N{r['N']:>5} M{r['M']:>5}  {r['s']*1e6:9.1f} us  "
          f"{r['flops_per_s']/1e12:7.1f} TFLOP/s  {r['weight_bytes_per_s']/1e12:6.3f} TB/s")
for r in results["grouped"]:
    print(f"grouped {r['dtype']:4} {r['case']:20} tpe{r['tokens_per_expert']:>5}  {r['s']*1e6:9.1f} us  "
          f"{r['flops_per_s']/1e12:7.1f} TFLOP/s  {r['weight_bytes_per_s']/1e12:6.3f} TB/s")
for r in results["attention"]:
    print("attention", json.dumps(r))
print("graph_kernel_us", results.get("graph_kernel_us"))
print("errors", len(results["errors"]))
