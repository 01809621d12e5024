#!/usr/bin/env python3
"""Large GEMMs timed two ways, to check the sustained rates kernel_rates.py read (docs/validation.md §8, "Kernel
rates measured on an H200").

    python3 bench/gpu/mamf.py OUT.json

- flushed: triton.testing.do_bench's median, the L2 flushed (a 256 MB write) before each call, as
  kernel_rates.py times them;
- back to back: 50 calls between two device events after 10 warm-up calls, the median of 7 such runs, the way
  the maximum achievable matmul FLOPS (MAMF) of Bekman's "Machine Learning Engineering" is measured (its
  mamf-finder takes the best shape of a sweep: the sweep below, bf16 and fp8, square shapes 4,096-16,384).
Random data; failures recorded.
"""
import functools
import json
import statistics
import sys

import torch

from common import attempt as attempt_in, fp8, median_s

dev = "cuda"
torch.manual_seed(0)
results = {"errors": [], "gemm": []}
attempt = functools.partial(attempt_in, results)


def back_to_back_s(fn, calls=50, runs=7):
    for _ in range(10):
        fn()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(calls):
            fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / 1e3 / calls)
    return statistics.median(times)


def gemm(dtype, M, N, K):
    x = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
    w = torch.randn(N, K, device=dev, dtype=torch.bfloat16)
    if dtype == "fp8":
        x, w = fp8(x), fp8(w)
        one = torch.tensor(1.0, device=dev)
        fn = lambda: torch._scaled_mm(x, w.t(), one, one, out_dtype=torch.bfloat16)  # noqa: E731
    else:
        fn = lambda: torch.mm(x, w.t())  # noqa: E731
    flops = 2 * M * N * K
    results["gemm"].append({"dtype": dtype, "M": M, "N": N, "K": K,
                            "flushed_flops_per_s": flops / median_s(fn),
                            "back_to_back_flops_per_s": flops / back_to_back_s(fn)})


for dtype in ("bf16", "fp8"):
    for n in (4096, 6144, 8192, 10240, 12288, 16384):
        attempt(f"{dtype} {n}^3", lambda: gemm(dtype, n, n, n))
    for K, N in ((5120, 16384), (8192, 28672), (7168, 4096)):  # kernel_rates.py's shapes at M = 4,096
        attempt(f"{dtype} 4096x{N}x{K}", lambda: gemm(dtype, 4096, N, K))

with open(sys.argv[1] if len(sys.argv) > 1 else "mamf.json", "w") as fh:
    json.dump(results, fh, indent=1)
for r in results["gemm"]:
    print(f"{r['dtype']:4} {r['M']:>5} x {r['N']:>5} x {r['K']:>5}: flushed {r['flushed_flops_per_s']/1e12:7.1f}, "
          f"back to back {r['back_to_back_flops_per_s']/1e12:7.1f} TFLOP/s")
print("errors", len(results["errors"]))
