#!/usr/bin/env python3
"""The serving efficiencies that kernel rates measured on an H200 imply, in cutlab's own terms.

    python3 bench/gpu/implied.py validation/kernel-rates-h200.json validation/graph-rates-h200.json \
        validation/overheads-h200.json

Reads the outputs of bench/gpu/kernel_rates.py, graph_rates.py and overheads.py and prints, for each measured kernel, the value of the efficiency
that makes cutlab's serving step (core/serving_step.cpp) give the measured time, then each efficiency's mean and
spread (docs/validation.md §8, "Kernel rates measured on an H200"). Only kernels whose shape cutlab's
gemm_efficiency leaves at factor 1 (M a multiple of 128 and more tiles than SMs) are used for the GEMM rates, so
that no shape model is assumed here. Constants: the hgx-h200 preset (core/presets.cpp): HBM 4.8 TB/s, dense
bf16 989 and fp8 1,979 TFLOP/s, sustained share 792.1/989 (Cluster::gemm_sustained); kernel_floor_us 3.167 (the
H100 training fit, which the H200 preset shares), one per GEMM kernel.
"""
import json
import statistics
import sys

HBM = 4.8e12
PEAK = {"bf16": 989e12, "fp8": 1979e12}
MAMF = 792.1 / 989.0
FLOOR_S = 3.167e-6

r = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "validation/kernel-rates-h200.json"))


def show(name, values, note):
    m = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    print(f"{name:24} mean {m:.3f}  sd {sd:.3f}  min {min(values):.3f}  max {max(values):.3f}  n {len(values)}  ({note})")
    return m


# hbm_stream: a decode GEMM of few rows streams its weights: (time - one kernel floor) = bytes / (HBM * hbm_stream).
stream = {}
for d in r["dense"]:
    thin = d["M"] <= 16
    if thin:
        w = d["weight_bytes_per_s"] * d["s"]
        stream.setdefault(d["dtype"], []).append((w, w / ((d["s"] - FLOOR_S) * HBM)))
for dtype, v in stream.items():
    for w, e in v:
        print(f"  hbm_stream {dtype} weights {w / 1e6:7.1f} MB: {e:.3f}")
dense_stream = {dtype: max(v)[1] for dtype, v in stream.items()}  # the largest matrix: least of its fixed cost
print("hbm_stream at the largest matrix:", {k: round(v, 3) for k, v in dense_stream.items()})

# serving_gemm: rate / (peak * MAMF) for M >= 1024.
gemm = {dtype: [d["flops_per_s"] / (PEAK[dtype] * MAMF) for d in r["dense"] if d["dtype"] == dtype and d["M"] >= 1024]
        for dtype in ("bf16", "fp8")}
g_bf16 = show("serving_gemm bf16", gemm["bf16"], "of the sustained rate, M >= 1024")
g_fp8 = show("serving_gemm fp8", gemm["fp8"], "of the sustained rate, M >= 1024")

# serving_expert_gemm: the grouped GEMM's rate against serving_gemm's, 256 and 1024 tokens per expert.
for dtype, g in (("fp8", g_fp8), ("bf16", g_bf16)):
    v = [x["flops_per_s"] / (PEAK[dtype] * MAMF * g) for x in r["grouped"] if x["dtype"] == dtype and x["tokens_per_expert"] >= 256]
    show(f"serving_expert_gemm {dtype}", v, "of serving_gemm's rate, 256 and 1,024 tokens per expert")

# serving_expert_stream: the grouped GEMM of few tokens per expert streams the experts (two kernels, two floors),
# against the dense stream of the same dtype.
for dtype in ("fp8", "bf16"):
    v = []
    for x in r["grouped"]:
        if x["dtype"] == dtype and x["tokens_per_expert"] <= 64:
            w = x["weight_bytes_per_s"] * x["s"]
            v.append(w / ((x["s"] - 2 * FLOOR_S) * HBM) / dense_stream[dtype])
    show(f"serving_expert_stream {dtype}", v, f"of hbm_stream {dense_stream[dtype]:.3f}, 16 and 64 tokens per expert")

# serving_attention (torch's flash attention 2, a lower bound for the engines' kernels): the prefill rate over
# the bf16 peak, divided by cutlab's shape factor (core/ops.cpp attention_efficiency at d = 128 is 1; key
# length factor s / (s + 850) with s = 2 x the mean context, the sequence for a causal prefill).
for a in r["attention"]:
    if a["kind"].startswith("prefill"):
        s = a["S"]
        print(f"  serving_attention (FA2 lower bound) S {s}: {a['flops_per_s'] / PEAK['bf16'] / (s / (s + 850)):.3f}")
    else:
        print(f"  decode attention (FA2, no split-K) {a['batch']} x {a['S']}: {a['kv_bytes_per_s'] / HBM:.3f} of HBM")
print(f"hbm copy {r['hbm']['copy_read_write_bytes_per_s'] / HBM:.3f}, sum {r['hbm']['sum_read_bytes_per_s'] / HBM:.3f} of HBM;"
      f" a tiny kernel in a CUDA graph {r['graph_kernel_us']:.2f} us")

# The GEMMs of a decode step back to back in a CUDA graph (graph_rates.py): hbm_stream from the graph's time less a
# kernel floor per GEMM, and the fixed cost per GEMM and the stream that the two layer stacks solve for together.
if len(sys.argv) > 2:
    gr = json.load(open(sys.argv[2]))
    for x in gr["graph"]:
        e = x["weight_bytes"] / ((x["graph_s"] - x["gemms"] * FLOOR_S) * HBM)
        print(f"  hbm_stream in a graph {x['layers']:15} {x['dtype']:4} M {x['M']:>2}: {e:.3f}")
    for dtype in ("fp8", "bf16"):
        for M in (16, 64):
            a, b = (x for x in gr["graph"] if x["dtype"] == dtype and x["M"] == M)
            # n_a t0 + B_a / bw = T_a and n_b t0 + B_b / bw = T_b
            inv_bw = (a["graph_s"] * b["gemms"] - b["graph_s"] * a["gemms"]) / (a["weight_bytes"] * b["gemms"] - b["weight_bytes"] * a["gemms"])
            t0 = (a["graph_s"] - a["weight_bytes"] * inv_bw) / a["gemms"]
            print(f"  two stacks solved, {dtype} M {M}: {t0 * 1e6:.2f} us per GEMM, stream {1 / inv_bw / HBM:.3f} of HBM")
    for x in gr["moe_graph"]:
        e = x["weight_bytes"] / ((x["graph_s"] - x["gemms"] * FLOOR_S) * HBM)
        print(f"  serving_expert_stream in a graph {x['case']} {x['dtype']}: {e / dense_stream[x['dtype']]:.3f} "
              f"({e:.3f} of HBM)")
    for x in gr["cudnn_attention"]:
        s = x["S"]
        print(f"  serving_attention {x['backend']:16} S {s:>6}: {x['flops_per_s'] / PEAK['bf16'] / (s / (s + 850)):.3f}")

# The step's fixed costs (overheads.py): decode attention's time per sequence beyond its KV bytes (the same bytes
# over more, shorter sequences), and an unfused MoE routing's time per layer at no tokens (two smallest T).
if len(sys.argv) > 3:
    ov = json.load(open(sys.argv[3]))
    same = sorted((x for x in ov["decode_attention"] if x["kv_bytes"] == ov["decode_attention"][0]["kv_bytes"]),
                  key=lambda x: x["batch"])
    for a, b in zip(same, same[1:]):
        per = (b["layer_s"] - a["layer_s"]) / (b["batch"] - a["batch"])
        print(f"  decode attention, {a['batch']} -> {b['batch']} sequences at equal KV: {per * 1e6:.3f} us per sequence per layer")
    for case in sorted({x["case"] for x in ov["moe_routing"]}):
        a, b = sorted((x for x in ov["moe_routing"] if x["case"] == case), key=lambda x: x["tokens"])[:2]
        slope = (b["layer_s"] - a["layer_s"]) / (b["tokens"] - a["tokens"])
        print(f"  unfused MoE routing {case}: {(a['layer_s'] - slope * a['tokens']) * 1e6:.1f} us per layer at no tokens, "
              f"{slope * 1e6:.3f} us per token")
