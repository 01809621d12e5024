"""What the scripts of bench/gpu share: the timer, CUDA-graph capture, the fp8 cast and the recorded failures."""
import torch
import triton.testing


def median_s(fn, rep=200):
    """Median seconds of fn over triton.testing.do_bench (device events, L2 flushed before each call)."""
    return triton.testing.do_bench(fn, warmup=25, rep=rep, return_mode="median") / 1e3


def fp8(t):
    return t.to(torch.float8_e4m3fn)


def attempt(results, name, fn):
    """Runs fn; a failure is recorded in results["errors"] and printed, not hidden."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 -- recorded, not hidden
        results["errors"].append({"case": name, "error": f"{type(e).__name__}: {e}"[:400]})
        print(f"FAILED {name}: {type(e).__name__}: {str(e)[:200]}", flush=True)
    torch.cuda.empty_cache()


def captured(fn):
    """fn captured in a CUDA graph, after two warm-up calls on a side stream (as torch.cuda.graph asks)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g
