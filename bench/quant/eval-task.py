#!/usr/bin/env python3
"""Measures a model's accuracy on a task made by make-quant-tasks.py, in ONNX Runtime (CPU
execution provider, default graph optimization level), one sample at a time.

    eval-task.py MODEL EVAL_DIR --task classify|sequence|ctc [--blank B] [--ref FLOAT] [--json]

EVAL_DIR holds test_data_set_K/input_*.pb (ONNX test-data layout, K = 0..N-1) and labels.txt,
one line per K in numeric order:
  classify  one integer class            -> accuracy = top-1
  sequence  the target tokens, spaced    -> accuracy = token accuracy, exact_match = whole row
  ctc       the target digit string      -> exact_match = whole string after greedy CTC decode
                                            (collapse repeats, drop blank), accuracy = character
                                            accuracy = 1 - edit distance / target length, summed
The model's first output is used. For ctc it is logits or log-probs [N,T,C] or [T,N,C] (the
batch dim of size 1 is found by its size); the blank class is the last one unless --blank.

--ref FLOAT also runs the float model on every sample and compares MODEL's first output with
it, which shows a quantization error even where the task's accuracy does not move:
  ref_argmax_agreement  fraction of argmax positions (last axis) equal to the float model's
  ref_snr_db            10 log10(sum f^2 / sum (q - f)^2) over all samples
  ref_max_abs_diff, ref_mean_abs_diff, ref_cosine (mean over samples of the flattened output)"""
import argparse
import glob
import json
import os
import re
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper
import onnxruntime as ort


def load_sets(eval_dir):
    dirs = glob.glob(os.path.join(eval_dir, "test_data_set_*"))
    dirs.sort(key=lambda d: int(re.search(r"(\d+)$", d).group(1)))
    sets = []
    for d in dirs:
        files = sorted(glob.glob(os.path.join(d, "input_*.pb")),
                       key=lambda f: int(re.search(r"input_(\d+)\.pb$", f).group(1)))
        tensors = []
        for f in files:
            t = onnx.TensorProto()
            with open(f, "rb") as fh:
                t.ParseFromString(fh.read())
            tensors.append((t.name, numpy_helper.to_array(t)))
        sets.append(tensors)
    return sets


def edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def ctc_decode(out, blank):
    out = np.asarray(out)
    if out.ndim != 3:
        raise SystemExit(f"ctc: expected a 3-d output, got shape {out.shape}")
    if out.shape[0] == 1:
        seq = out[0]            # [N=1, T, C]
    elif out.shape[1] == 1:
        seq = out[:, 0]         # [T, N=1, C]
    else:
        raise SystemExit(f"ctc: no batch dim of size 1 in output shape {out.shape}")
    if blank < 0:
        blank += seq.shape[-1]
    s, prev = [], -1
    for c in seq.argmax(-1).tolist():
        if c != prev and c != blank:
            s.append(str(c))
        prev = c
    return "".join(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("eval_dir")
    ap.add_argument("--task", required=True, choices=["classify", "sequence", "ctc"])
    ap.add_argument("--blank", type=int, default=-1, help="ctc blank class (default: the last)")
    ap.add_argument("--ref", help="float model to compare the outputs with")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    so = ort.SessionOptions()
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    in_names = [i.name for i in sess.get_inputs()]
    ref = ort.InferenceSession(a.ref, so, providers=["CPUExecutionProvider"]) if a.ref else None
    sig = noise = 0.0
    max_abs = sum_abs = 0.0
    n_elems = agree = agree_all = 0
    cosines = []
    out_name = sess.get_outputs()[0].name
    sets = load_sets(a.eval_dir)
    with open(os.path.join(a.eval_dir, "labels.txt")) as f:
        labels = [line.rstrip("\n") for line in f if line.strip() != ""]
    if len(labels) != len(sets):
        raise SystemExit(f"{len(sets)} test_data_set folders but {len(labels)} labels")

    correct = 0          # classify: top-1 hits; sequence: exact rows; ctc: exact strings
    tok_hit = tok_all = 0
    t0 = time.time()
    for tensors, label in zip(sets, labels):
        feeds = {}
        for k, (name, arr) in enumerate(tensors):
            feeds[name if name in in_names else in_names[k]] = arr
        out = sess.run([out_name], feeds)[0]
        if ref is not None:
            f = np.asarray(ref.run([ref.get_outputs()[0].name], feeds)[0], np.float64)
            q = np.asarray(out, np.float64)
            d = q - f
            sig += float((f * f).sum())
            noise += float((d * d).sum())
            max_abs = max(max_abs, float(np.abs(d).max()))
            sum_abs += float(np.abs(d).sum())
            n_elems += d.size
            agree += int((q.argmax(-1) == f.argmax(-1)).sum())
            agree_all += q.argmax(-1).size
            cosines.append(float((q * f).sum() / max(1e-30, np.linalg.norm(q) * np.linalg.norm(f))))
        if a.task == "classify":
            correct += int(np.asarray(out).reshape(-1).argmax() == int(label))
        elif a.task == "sequence":
            want = np.array([int(v) for v in label.split()])
            got = np.asarray(out).reshape(len(want), -1).argmax(-1)
            hits = int((got == want).sum())
            tok_hit += hits
            tok_all += len(want)
            correct += int(hits == len(want))
        else:
            got = ctc_decode(out, a.blank)
            correct += int(got == label)
            tok_hit += max(0, len(label) - edit_distance(got, label))
            tok_all += len(label)
    n = len(sets)
    seconds = time.time() - t0
    res = {"model": a.model, "task": a.task, "n": n}
    if a.task == "classify":
        res["accuracy"] = correct / n
        res["exact_match"] = correct / n
    else:
        res["accuracy"] = tok_hit / tok_all
        res["exact_match"] = correct / n
    res["seconds"] = round(seconds, 3)
    if ref is not None:
        res["ref"] = a.ref
        res["ref_argmax_agreement"] = agree / max(1, agree_all)
        res["ref_snr_db"] = round(10 * np.log10(sig / noise), 2) if noise > 0 else float("inf")
        res["ref_max_abs_diff"] = max_abs
        res["ref_mean_abs_diff"] = sum_abs / max(1, n_elems)
        res["ref_cosine"] = float(np.mean(cosines))
    if a.json:
        print(json.dumps(res))
    else:
        what = {"classify": "top-1", "sequence": "token accuracy", "ctc": "character accuracy"}[a.task]
        print(f"{os.path.basename(a.model)}: {a.task}, {n} samples: {what} {res['accuracy']:.4f}, "
              f"exact match {res['exact_match']:.4f} ({seconds:.2f} s)")
        if ref is not None:
            print(f"  vs {os.path.basename(a.ref)}: argmax agreement {res['ref_argmax_agreement']:.4f}, "
                  f"SNR {res['ref_snr_db']} dB, max |diff| {res['ref_max_abs_diff']:.4g}, "
                  f"mean |diff| {res['ref_mean_abs_diff']:.4g}, cosine {res['ref_cosine']:.6f}")


if __name__ == "__main__":
    sys.exit(main())
