#!/usr/bin/env python3
"""Evaluates every float task model made by make-quant-tasks.py, quantizes them with
ort-quantize.py in the configurations below, evaluates each ORT-quantized model that loads, and
writes one JSON line per run to DIR/ort_results.jsonl (and a table to stdout).

    run-ort-reference.py [DIR]        (default /work/dev/quant; quantized models go to DIR/ort/)"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
D = sys.argv[1] if len(sys.argv) > 1 else "/work/dev/quant"
PY = sys.executable

# model, shared data prefix, task, [(tag, ort-quantize args)]
RUNS = [
    ("digits_cnn", "digits_cnn", "classify",
     [("minmax", ["--method", "minmax"]), ("entropy", ["--method", "entropy"]),
      ("percentile", ["--method", "percentile"]), ("minmax_s32", ["--method", "minmax", "--samples", "32"]),
      ("entropy_s32", ["--method", "entropy", "--samples", "32"]),
      ("entropy_b2048", ["--method", "entropy", "--entropy-bins", "2048"]),
      ("minmax_s256", ["--method", "minmax", "--samples", "256"]),
      ("minmax_pertensor", ["--method", "minmax", "--per-tensor"]),
      ("minmax_nopre", ["--method", "minmax", "--no-preprocess"]),
      ("minmax_with_torch", ["--method", "minmax", "--allow-torch"]),
      ("dynamic", ["--dynamic"])]),
    ("digits_cnn_opset11", "digits_cnn", "classify",
     [("minmax", ["--method", "minmax"]), ("minmax_pertensor", ["--method", "minmax", "--per-tensor"])]),
    ("digits_cnn_opset9", "digits_cnn", "classify",
     [("minmax", ["--method", "minmax"]), ("minmax_pertensor", ["--method", "minmax", "--per-tensor"]),
      ("dynamic", ["--dynamic"])]),
    ("digits_cnn_opset9_bn", "digits_cnn", "classify",
     [("minmax", ["--method", "minmax"]), ("minmax_pertensor", ["--method", "minmax", "--per-tensor"])]),
    ("seq_transformer", "seq_transformer", "sequence",
     [("minmax", ["--method", "minmax"]), ("entropy", ["--method", "entropy"]),
      ("percentile", ["--method", "percentile"]), ("minmax_nopre", ["--method", "minmax", "--no-preprocess"]),
      ("dynamic", ["--dynamic"])]),
    ("crnn_text_opset11", "crnn_text_opset11", "ctc",
     [("minmax", ["--method", "minmax"]), ("entropy", ["--method", "entropy"]), ("minmax_pertensor", ["--method", "minmax", "--per-tensor"]),
      ("dynamic", ["--dynamic"])]),
]


def evaluate(model, data, task, ref=None):
    r = subprocess.run([PY, os.path.join(HERE, "eval-task.py"), model, os.path.join(D, data + "_eval"),
                        "--task", task, "--json"] + (["--ref", ref] if ref else []), capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[-300:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    os.makedirs(os.path.join(D, "ort"), exist_ok=True)
    lines = []
    for model, data, task, configs in RUNS:
        src = os.path.join(D, model + ".onnx")
        if not os.path.exists(src):
            continue
        ev = evaluate(src, data, task)
        lines.append({"kind": "float", "model": model, "task": task, **{k: ev.get(k) for k in
                      ("accuracy", "exact_match", "n", "error") if k in ev}})
        print(f"{model:22s} float            acc {ev.get('accuracy')} exact {ev.get('exact_match')}", flush=True)
        for tag, args in configs:
            out = os.path.join(D, "ort", f"{model}_{tag}.onnx")
            if os.path.exists(out):
                os.remove(out)
            r = subprocess.run([PY, os.path.join(HERE, "ort-quantize.py"), src, os.path.join(D, data + "_calib"),
                                out] + args, capture_output=True, text=True)
            try:
                q = json.loads(r.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                q = {"error": (r.stderr or r.stdout).strip()[-500:]}
            rec = {"kind": "ort", "model": model, "config": tag, "task": task, **q}
            if q.get("loads"):
                e = evaluate(out, data, task, ref=src)
                for k in ("accuracy", "exact_match", "ref_argmax_agreement", "ref_snr_db", "ref_max_abs_diff",
                          "ref_cosine"):
                    rec[k] = e.get(k)
                if "error" in e:
                    rec["eval_error"] = e["error"]
            lines.append(rec)
            print(f"{model:22s} {tag:16s} acc {rec.get('accuracy')} exact {rec.get('exact_match')} "
                  f"time {q.get('seconds')} s (quantize {q.get('quantize_seconds')} s) "
                  f"rss {q.get('peak_rss_mb')} MB loads {q.get('loads')} snr {rec.get('ref_snr_db')} dB "
                  f"agree {rec.get('ref_argmax_agreement')} {q.get('error', '')}", flush=True)
    with open(os.path.join(D, "ort_results.jsonl"), "w") as f:
        for rec in lines:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
