"""What each optimization level does to each model: node count before and after, the passes
that changed the graph, the median latency of `owb bench` at that level (alternating the levels
round by round) and the ratio against level `disabled`, and the relative L2 of the outputs
against the unoptimized run and against ONNX Runtime (through compare-with-ort.py's helpers).

  python3 bench/optimize-levels.py [--owb build/app/owb] [--threads 2] [--rounds 3]
                                   [--levels basic,extended,layout] MODEL.onnx...

A program you run, not a test (latencies depend on the machine's load). Needs numpy, onnx and
onnxruntime for the output check (the venv of README.md); --no-check skips it."""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile


def optimize_report(owb, model, level, workdir):
    out = os.path.join(workdir, f"{level}.onnx")
    report = os.path.join(workdir, f"{level}.json")
    r = subprocess.run([owb, "optimize", model, "-O", level, "-o", out, "--report-json", report],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    with open(report) as f:
        data = json.load(f)
    fired = [p["pass"] for p in data["passes"] if p["removed"] or p["created"] or p["removed_initializers"]]
    return data["nodes_before"], data["nodes_after"], fired


def bench_ms(owb, model, level, threads, iterations):
    r = subprocess.run([owb, "bench", model, "-O", level, "--threads", str(threads), "--iterations",
                        str(iterations), "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout)["median_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--owb", default="build/app/owb")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--levels", default="basic,extended,layout")
    ap.add_argument("--no-check", action="store_true", help="skip the output comparison")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    levels = ["disabled"] + [lv for lv in args.levels.split(",") if lv != "disabled"]
    cmp = None
    if not args.no_check:
        spec = importlib.util.spec_from_file_location(
            "cmp", os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare-with-ort.py"))
        cmp = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cmp)
    print(f"{'model':20} {'level':9} {'nodes':>11} {'ms':>9} {'vs off':>7} {'L2 vs off':>10} {'L2 vs ORT':>10}  passes that fired")
    for model in args.models:
        name = os.path.splitext(os.path.basename(model))[0]
        with tempfile.TemporaryDirectory() as work:
            info = {lv: optimize_report(args.owb, model, lv, work) for lv in levels}
            times = {lv: [] for lv in levels}
            for _ in range(args.rounds):
                for lv in levels:
                    times[lv].append(bench_ms(args.owb, model, lv, args.threads, args.iterations))
            med = {lv: statistics.median(times[lv]) for lv in levels}
            errs = {}
            if cmp is not None:
                import numpy as np
                import onnxruntime as ort
                sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
                feeds = cmp.make_inputs(sess, {}, np.random.default_rng(0))
                want = sess.run(None, feeds)
                base = cmp.run_owb(args.owb, model, feeds, sess, os.path.join(work, "off"), "disabled")
                for lv in levels:
                    got = cmp.run_owb(args.owb, model, feeds, sess, os.path.join(work, lv), lv)
                    errs[lv] = (max(cmp.rel_l2(g, b) for g, b in zip(got, base)),
                                max(cmp.rel_l2(g, w) for g, w in zip(got, want)))
            for lv in levels:
                before, after, fired = info[lv]
                e_off, e_ort = errs.get(lv, (float("nan"), float("nan")))
                print(f"{name:20} {lv:9} {before:>5}→{after:<5} {med[lv]:9.2f} {med[lv] / med['disabled']:7.2f} "
                      f"{e_off:10.1e} {e_ort:10.1e}  {', '.join(fired) or '-'}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
