"""Runs models with `owb run` and with ONNX Runtime on the same seeded inputs and prints, per model,
the relative L2 error of each output (‖owb − ort‖ / ‖ort‖; integer outputs must be equal), and
optionally checks that a model saved by owb reloads in ONNX Runtime with identical outputs.

  python3 bench/compare-with-ort.py --owb build/app/owb MODEL.onnx... [--dim NAME=VALUE] [--resave]

Needs numpy, onnx and onnxruntime (a venv: see README). Exit status 1 if any model fails."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

NP_TYPES = {"float": np.float32, "double": np.float64, "float16": np.float16, "int64": np.int64,
            "int32": np.int32, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


def make_inputs(sess, dims, rng):
    feeds = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else int(dims.get(str(d), 1)) for d in i.shape]
        dt = NP_TYPES[i.type[len("tensor("):-1]]
        if dt in (np.float32, np.float64, np.float16):
            feeds[i.name] = rng.standard_normal(shape).astype(dt)
        elif "mask" in i.name:
            feeds[i.name] = np.ones(shape, dt)
        elif dt == np.bool_:
            feeds[i.name] = rng.integers(0, 2, shape).astype(dt)
        else:
            feeds[i.name] = rng.integers(0, 100, shape).astype(dt)
    return feeds


def rel_l2(got, want):
    if want.dtype.kind in "iub":
        return 0.0 if np.array_equal(got, want) else float("inf")
    den = np.linalg.norm(want.astype(np.float64))
    num = np.linalg.norm(got.astype(np.float64) - want.astype(np.float64))
    return float(num / den) if den > 0 else float(num)


def run_owb(owb, model, feeds, sess, workdir, level="disabled"):
    indir = os.path.join(workdir, "in")
    outdir = os.path.join(workdir, "out")
    os.makedirs(indir, exist_ok=True)
    os.makedirs(outdir, exist_ok=True)
    for k, i in enumerate(sess.get_inputs()):
        with open(os.path.join(indir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[i.name], i.name).SerializeToString())
    r = subprocess.run([owb, "run", model, "--input-dir", indir, "--output-dir", outdir, "--threads", "2", "-O", level],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip() or r.stdout.strip())
    outs = []
    for k in range(len(sess.get_outputs())):
        t = onnx.TensorProto()
        with open(os.path.join(outdir, f"output_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        outs.append(numpy_helper.to_array(t))
    return outs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("models", nargs="+")
    p.add_argument("--owb", default="build/app/owb")
    p.add_argument("--dim", action="append", default=[])
    p.add_argument("--tolerance", type=float, default=1e-3)
    p.add_argument("-O", dest="level", default="disabled", help="owb's optimization level for the run")
    p.add_argument("--portable", action="store_true",
                   help="also save with `owb optimize -O LEVEL --portable` and run that file in ONNX Runtime")
    p.add_argument("--resave", action="store_true", help="also check that the model saved by owb (optimize -O disabled) runs identically in ONNX Runtime")
    a = p.parse_args()
    dims = dict(d.split("=") for d in a.dim)
    failed = 0
    print(f"{'model':24} {'outputs':>7} {'max rel L2':>12}  result")
    for model in a.models:
        name = os.path.splitext(os.path.basename(model))[0]
        rng = np.random.default_rng(0)
        try:
            so = ort.SessionOptions()
            so.intra_op_num_threads = 2
            sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
            feeds = make_inputs(sess, dims, rng)
            want = sess.run(None, feeds)
            with tempfile.TemporaryDirectory() as tmp:
                got = run_owb(a.owb, model, feeds, sess, tmp, a.level)
                errors = [rel_l2(g, w) if g.shape == w.shape else float("inf") for g, w in zip(got, want)]
                worst = max(errors)
                note = ""
                if a.resave:
                    saved = os.path.join(tmp, "resaved.onnx")
                    r = subprocess.run([a.owb, "optimize", model, "-O", "disabled", "-o", saved], capture_output=True, text=True)
                    if r.returncode != 0:
                        raise RuntimeError("owb optimize: " + r.stderr.strip())
                    again = ort.InferenceSession(saved, so, providers=["CPUExecutionProvider"]).run(None, feeds)
                    same = all(np.array_equal(x, y, equal_nan=True) for x, y in zip(again, want))
                    note = ", resaved model identical in ORT" if same else ", RESAVED MODEL DIFFERS IN ORT"
                    worst = worst if same else float("inf")
                if a.portable:
                    port = os.path.join(tmp, "portable.onnx")
                    r = subprocess.run([a.owb, "optimize", model, "-O", a.level, "--portable", "-o", port],
                                       capture_output=True, text=True)
                    if r.returncode != 0:
                        raise RuntimeError("owb optimize --portable: " + r.stderr.strip())
                    again = ort.InferenceSession(port, so, providers=["CPUExecutionProvider"]).run(None, feeds)
                    perr = max(rel_l2(x, y) for x, y in zip(again, want))
                    note += f", portable export in ORT: {perr:.1e}"
                    worst = max(worst, perr)
            ok = worst <= a.tolerance
            failed += not ok
            print(f"{name:24} {len(want):7d} {worst:12.3e}  {'ok' if ok else 'FAIL'}{note}")
        except Exception as e:  # report and go on with the next model
            failed += 1
            print(f"{name:24} {'-':>7} {'-':>12}  FAIL: {str(e).splitlines()[-1] if str(e) else e}")
        sys.stdout.flush()
    print(f"{len(a.models) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
