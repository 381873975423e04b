"""Benchmarks owb against ONNX Runtime on the same models, inputs and thread counts, alternating
the two (A B B A ...) after warm-up, and prints per model and thread count: median latency of each,
the ratio owb/ORT, the median of the rounds' own ratios with their range (each round's two runs are
next to each other in time, so a drift of the machine's speed between rounds cancels), session load
time and peak memory of each process, and the geometric means of the latency and session-load ratios.

  python3 bench/bench-vs-ort.py [--owb build/app/owb] [--threads 1,2] [--rounds 3]
                                [--iterations 20] [-O LEVEL] [--dim NAME=VALUE] MODEL.onnx...

Each measurement runs in a fresh process (so peak RSS is that model's alone): `owb bench --json`
for owb, and this script's --ort-child mode for ONNX Runtime (CPU provider, ORT_ENABLE_ALL, same
intra-op thread count, inter-op 1). Needs numpy + onnxruntime (the venv in README.md).
It is a program you run, not a test: timings vary with the machine's load."""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def ort_child(model, threads, warmup, iterations, dims):
    import numpy as np
    import onnxruntime as ort
    types = {"float": np.float32, "double": np.float64, "float16": np.float16, "int64": np.int64,
             "int32": np.int32, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t0 = time.perf_counter()
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    load_ms = (time.perf_counter() - t0) * 1e3
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else int(dims.get(str(d), 1)) for d in i.shape]
        dt = types[i.type[len("tensor("):-1]]
        if dt in (np.float32, np.float64, np.float16):
            feeds[i.name] = rng.standard_normal(shape).astype(dt)
        elif "mask" in i.name:
            feeds[i.name] = np.ones(shape, dt)
        else:
            feeds[i.name] = rng.integers(0, 10, shape).astype(dt)
    for _ in range(warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"median_ms": statistics.median(times), "min_ms": min(times), "load_ms": load_ms,
                      "peak_rss_mb": rss_mb}))


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError((r.stderr or r.stdout).strip().splitlines()[-1])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("models", nargs="*")
    p.add_argument("--owb", default="build/app/owb")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=3, help="A B alternations; medians are over rounds")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("-O", dest="level", default="all", help="owb optimization level")
    p.add_argument("--dim", action="append", default=[])
    p.add_argument("--ort-child", nargs=2, metavar=("MODEL", "THREADS"), help=argparse.SUPPRESS)
    a = p.parse_args()
    dims = dict(d.split("=") for d in a.dim)
    if a.ort_child:
        ort_child(a.ort_child[0], int(a.ort_child[1]), a.warmup, a.iterations, dims)
        return
    dim_args = sum((["--dim", d] for d in a.dim), [])
    print(f"{'model':22} {'thr':>3} {'owb ms':>9} {'ort ms':>9} {'ratio':>6} {'paired':>13} {'owb load':>9}"
          f" {'ort load':>9} {'load x':>6} {'owb MB':>7} {'ort MB':>7}")
    ratios, load_ratios = {}, {}
    for model in a.models:
        name = os.path.splitext(os.path.basename(model))[0]
        for threads in [int(t) for t in a.threads.split(",")]:
            owb_runs, ort_runs = [], []
            try:
                run_owb = lambda: owb_runs.append(run_json(
                    [a.owb, "bench", model, "--threads", str(threads), "--warmup", str(a.warmup), "--iterations",
                     str(a.iterations), "-O", a.level, "--json"] + dim_args))
                run_ort = lambda: ort_runs.append(run_json(
                    [sys.executable, __file__, "--ort-child", model, str(threads), "--warmup", str(a.warmup),
                     "--iterations", str(a.iterations)] + dim_args))
                # A B, then B A: on a machine whose speed drifts, neither engine always runs first
                for i in range(a.rounds):
                    for run in ((run_owb, run_ort) if i % 2 == 0 else (run_ort, run_owb)):
                        run()
            except Exception as e:
                print(f"{name:22} {threads:3d}  failed: {e}")
                continue
            med = lambda runs, k: statistics.median(r[k] for r in runs)
            o, r = med(owb_runs, "median_ms"), med(ort_runs, "median_ms")
            ratios.setdefault(threads, []).append(o / r)
            # session load (read, optimize at the level, prepare) against ORT's InferenceSession()
            load_ratios.setdefault(threads, []).append(med(owb_runs, "load_ms") / med(ort_runs, "load_ms"))
            # each round's two runs were next to each other in time: their ratio is not moved by the
            # machine's speed drifting between rounds (median, and the lowest and highest round)
            pairs = sorted(x["median_ms"] / y["median_ms"] for x, y in zip(owb_runs, ort_runs))
            paired = f"{statistics.median(pairs):.2f} {pairs[0]:.2f}-{pairs[-1]:.2f}"
            print(f"{name:22} {threads:3d} {o:9.2f} {r:9.2f} {o / r:6.2f} {paired:>13} {med(owb_runs, 'load_ms'):9.1f}"
                  f" {med(ort_runs, 'load_ms'):9.1f} {load_ratios[threads][-1]:6.2f} {max(x['peak_rss_mb'] for x in owb_runs):7.1f}"
                  f" {max(x['peak_rss_mb'] for x in ort_runs):7.1f}")
            sys.stdout.flush()
    geomean = lambda rs: statistics.geometric_mean(rs)
    for threads, rs in sorted(ratios.items()):
        print(f"geometric mean owb/ORT at {threads} thread(s): {geomean(rs):.3f} over {len(rs)} models")
    for threads, rs in sorted(load_ratios.items()):
        print(f"session load owb/ORT at {threads} thread(s): geometric mean {geomean(rs):.3f},"
              f" highest {max(rs):.2f}")


if __name__ == "__main__":
    main()
