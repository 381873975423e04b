#!/usr/bin/env python3
"""test-owb-compare.py: `owb compare` end to end on the bundled sample model compared with itself:
equal results (SQNR null in JSON), text output, bad usage and missing files.

Usage: test-owb-compare.py OWB MODEL INPUT_PB (standard library only)."""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import owb_cli_test  # noqa: E402

OWB, MODEL, INPUT = sys.argv[1:4]
TMP = tempfile.mkdtemp(prefix="owb-compare-test-")
owb = owb_cli_test.runner(OWB)
test = owb_cli_test.test
one_error_line = owb_cli_test.one_error_line


def sample_dir():
    d = os.path.join(TMP, "sample")
    if not os.path.isdir(d):
        os.makedirs(d)
        shutil.copy(INPUT, os.path.join(d, "input_0.pb"))
    return d


def data_dir(n):
    d = os.path.join(TMP, f"data{n}")
    if not os.path.isdir(d):
        for k in range(n):
            sub = os.path.join(d, f"test_data_set_{k}")
            os.makedirs(sub)
            shutil.copy(INPUT, os.path.join(sub, "input_0.pb"))
    return d


@test
def json_self_compare():
    _, out, err = owb("compare", MODEL, MODEL, "--input-dir", sample_dir(), "--json", code=0)
    assert err == "", err
    doc = json.loads(out)
    assert doc["samples"] == 1, doc
    assert doc["outputs"] and doc["tensors"], doc
    for o in doc["outputs"]:
        assert o["sqnr_db"] is None, o
        assert o["cosine"] == 1, o
        assert o["max_abs"] == 0 and o["mean_abs"] == 0, o
        for key in ("name", "sqnr_db", "cosine", "max_abs", "mean_abs"):
            assert key in o, (key, o)
    for t in doc["tensors"]:
        assert t["sqnr_db"] is None, t
        assert t["name"] == t["matched"], t
        for key in ("name", "matched", "node", "op", "sqnr_db", "cosine", "max_abs"):
            assert key in t, (key, t)
    assert any(t["op"] == "input" for t in doc["tensors"]), doc["tensors"]


@test
def json_no_tensors_and_data():
    _, out, _ = owb("compare", MODEL, MODEL, "--data", data_dir(3), "--samples", "2", "--no-tensors",
                    "--json", code=0)
    doc = json.loads(out)
    assert doc["samples"] == 2, doc
    assert doc["tensors"] == [], doc


@test
def text_random():
    _, out, err = owb("compare", MODEL, MODEL, "--top", "3", code=0)
    assert err == "", err
    lines = out.splitlines()
    assert "8 samples" in lines[0] and "random inputs" in lines[0], lines[0]
    assert "Outputs" in out and "Worst tensors" in out, out
    assert "inf" in out, out
    worst = lines.index(next(l for l in lines if l.startswith("Worst tensors")))
    rows = [l for l in lines[worst + 2:] if l.strip()]
    assert len(rows) == 3, rows


@test
def text_labels():
    labels = os.path.join(TMP, "labels.txt")
    # the classifier's answer is not known here; any class makes a valid line when the output has
    # one position, and the accuracy of A and B must then agree
    with open(labels, "w") as f:
        f.write("# one line per sample\n0\n")
    rc, out, err = owb("compare", MODEL, MODEL, "--input-dir", sample_dir(), "--labels", labels, "--json")
    if rc == 0:
        doc = json.loads(out)
        labelled = [o for o in doc["outputs"] if "accuracy_a" in o]
        assert len(labelled) == 1 and labelled[0]["accuracy_a"] == labelled[0]["accuracy_b"], doc
    else:
        # an output with several positions wants more classes on the line: a one-line error
        assert rc == 1, (rc, err)
        one_error_line(err, "labels line 1")
    with open(labels, "w") as f:
        f.write("0\n1\n")
    _, _, err = owb("compare", MODEL, MODEL, "--input-dir", sample_dir(), "--labels", labels, code=2)
    one_error_line(err, "2 label lines for 1 sample")


@test
def bad_usage():
    for args in ([], [MODEL], [MODEL, MODEL, MODEL], [MODEL, MODEL, "--no-such-option"],
                 [MODEL, MODEL, "--input-dir", sample_dir(), "--data", data_dir(3)],
                 [MODEL, MODEL, "--top", "-1"]):
        _, out, err = owb("compare", *args, code=2)
        one_error_line(err, "compare")
        assert out == "", out


@test
def missing_files():
    missing = os.path.join(TMP, "no-such-model.onnx")
    _, out, err = owb("compare", missing, MODEL, code=1)
    one_error_line(err, "no-such-model.onnx")
    _, _, err = owb("compare", MODEL, missing, "--no-tensors", code=1)
    one_error_line(err, "no-such-model.onnx")
    _, _, err = owb("compare", MODEL, MODEL, "--data", os.path.join(TMP, "no-such-folder"), code=1)
    one_error_line(err, "no-such-folder")
    _, _, err = owb("compare", MODEL, MODEL, "--labels", os.path.join(TMP, "no-labels.txt"), code=1)
    one_error_line(err, "no-labels.txt")


if __name__ == "__main__":
    sys.exit(owb_cli_test.main(cleanup=TMP))
