#!/usr/bin/env python3
"""test-owb-quantize.py: `owb quantize` end to end on the bundled sample model: static (every
method), dynamic, the report's JSON contract, overrides, the accuracy target, then the result
compared with the float model by `owb compare`; bad usage, never writing over the input.

Usage: test-owb-quantize.py OWB MODEL INPUT_PB (standard library only)."""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import owb_cli_test  # noqa: E402

OWB, MODEL, INPUT = sys.argv[1:4]
TMP = tempfile.mkdtemp(prefix="owb-quantize-test-")
owb = owb_cli_test.runner(OWB)
test = owb_cli_test.test
one_error_line = owb_cli_test.one_error_line


def out(name):
    return os.path.join(TMP, name)


def calibration_dir():
    d = out("cal")
    if not os.path.isdir(d):
        for k in range(3):
            os.makedirs(os.path.join(d, f"test_data_set_{k}"))
            shutil.copy(INPUT, os.path.join(d, f"test_data_set_{k}", "input_0.pb"))
    return d


def ops_of(model):
    _, text, _ = owb("inspect", model, "--json", code=0)
    return json.loads(text)["op_counts"]


def output_sqnr(float_model, quant_model):
    _, text, _ = owb("compare", float_model, quant_model, "--data", calibration_dir(), "--json", code=0)
    result = json.loads(text)
    return result, result["outputs"][0]["sqnr_db"]


@test
def static_every_method():
    for method in ("minmax", "entropy", "percentile", "mse"):
        q, rep = out(f"q-{method}.onnx"), out(f"q-{method}.json")
        _, text, _ = owb("quantize", MODEL, "-o", q, "--calibration-dir", calibration_dir(), "--method", method,
                         "--report-json", rep, code=0)
        assert "static quantization" in text and "wrote" in text, text
        ops = ops_of(q)
        assert ops.get("QuantizeLinear", 0) > 0 and ops.get("DequantizeLinear", 0) > 0, ops
        with open(rep) as f:
            report = json.load(f)
        assert report["mode"] == "static" and report["method"] == method and report["samples"] == 3, report
        assert report["per_channel"] is True and report["activation_type"] == "uint8", report
        names = [t["name"] for t in report["tensors"]]
        assert "image" in names, names
        for t in report["tensors"]:
            lo, hi = t["representable"]
            assert t["scale"] > 0 and lo <= 0 <= hi, t
            if "range" in t:  # calibrated itself (not sharing another tensor's parameters)
                assert lo - t["scale"] <= t["range"][0] <= 0 <= t["range"][1] <= hi + t["scale"], t
        passes = [p["pass"] for p in report["quantize"]["passes"]]
        assert passes == ["quantize_weights", "quantize_activations", "fold_activations"], passes
        # both Relus are folded into the QuantizeLinear after them
        assert "Relu" not in ops, ops
        created = report["quantize"]["passes"][1]["created"]
        assert created and all(c["from"] for c in created), created
        # The sample's BatchNormalization was folded into its Conv before calibration.
        assert "BatchNormalization" not in ops, ops
        comparison, db = output_sqnr(MODEL, q)
        assert db is not None and db > 20, (method, db)  # entropy clips: 24.8 dB here
        tensor_names = {t["name"] for t in comparison["tensors"]}
        assert "relu1.out" in tensor_names, tensor_names
        matched = {t["name"]: t["matched"] for t in comparison["tensors"]}
        assert matched["relu1.out"].endswith("_DequantizeLinear_Output"), matched


@test
def options_change_the_model():
    q = out("q-s8.onnx")
    owb("quantize", MODEL, "-o", q, "--calibration-random", "4", "--activation-type", "s8",
        "--symmetric-activations", "--per-tensor", "--report-json", out("q-s8.json"), "-q", code=0)
    with open(out("q-s8.json")) as f:
        report = json.load(f)
    assert report["calibration"] == "random" and report["per_channel"] is False, report
    assert all(t["type"] == "int8" and t["zero_point"] == 0 for t in report["tensors"]), report["tensors"]
    q = out("q-excl.onnx")
    owb("quantize", MODEL, "-o", q, "--calibration-random", "4", "--exclude-op", "Gemm", "--exclude-node", "conv1",
        "--report-json", out("q-excl.json"), "-q", code=0)
    with open(out("q-excl.json")) as f:
        report = json.load(f)
    misses = " ".join(report["quantize"]["passes"][0]["near_misses"])
    assert "'fc'" in misses and "'conv1'" in misses and "excluded by the user" in misses, misses
    with open(out("ov.json"), "w") as f:
        json.dump({"image": {"type": "u16"}, "logits": {"type": "float"}, "relu1.out": {"range": [0, 8]}}, f)
    owb("quantize", MODEL, "-o", out("q-ov.onnx"), "--calibration-random", "4", "--overrides", out("ov.json"),
        "--report-json", out("q-ov.json"), "-q", code=0)
    with open(out("q-ov.json")) as f:
        tensors = {t["name"]: t for t in json.load(f)["tensors"]}
    assert tensors["image"]["type"] == "uint16", tensors["image"]
    assert "logits" not in tensors, tensors.keys()
    assert abs(tensors["relu1.out"]["scale"] - 8 / 255) < 1e-6, tensors["relu1.out"]


@test
def dynamic():
    q = out("q-dyn.onnx")
    _, text, _ = owb("quantize", MODEL, "-o", q, "--dynamic", code=0)
    assert "dynamic quantization" in text, text
    ops = ops_of(q)
    assert ops.get("MatMulInteger", 0) == 1 and ops.get("DynamicQuantizeLinear", 0) == 1, ops
    _, db = output_sqnr(MODEL, q)
    assert db is not None and db > 25, db


@test
def accuracy_target():
    q, rep = out("q-target.onnx"), out("q-target.json")
    _, text, _ = owb("quantize", MODEL, "-o", q, "--calibration-dir", calibration_dir(), "--target-sqnr", "200",
                     "--max-trials", "4", "--report-json", rep, "-q", code=0)
    with open(rep) as f:
        fb = json.load(f)["fallback"]
    # 200 dB cannot be met short of keeping everything float: four trials, doubling 1, 2, 4.
    assert [t["kept_float"] for t in fb["trials"]] == [0, 1, 2, 4], fb["trials"]
    assert fb["ranking"] and all("local_sqnr_db" in r for r in fb["ranking"]), fb["ranking"]
    lows = [r["local_sqnr_db"] for r in fb["ranking"]]
    assert lows == sorted(lows), lows
    # A reachable target: the first trial already meets it, nothing is kept float.
    owb("quantize", MODEL, "-o", q, "--calibration-dir", calibration_dir(), "--target-sqnr", "10",
        "--report-json", rep, "-q", code=0)
    with open(rep) as f:
        fb = json.load(f)["fallback"]
    assert fb["target_met"] is True and fb["kept_float"] == [] and len(fb["trials"]) == 1, fb


@test
def image_folder():
    d = out("images")
    os.makedirs(d)
    for k in range(3):
        # 40 x 20 RGB PPMs: resized to the sample model's 32 x 32 input.
        pixels = bytes((x * 6 + y * 3 + c * 50 + k * 20) % 256 for y in range(20) for x in range(40) for c in range(3))
        with open(os.path.join(d, f"img{k}.ppm"), "wb") as f:
            f.write(b"P6\n40 20\n255\n" + pixels)
    rep = out("q-img.json")
    owb("quantize", MODEL, "-o", out("q-img.onnx"), "--calibration-images", d, "--mean", "0.485,0.456,0.406",
        "--std", "0.229,0.224,0.225", "--report-json", rep, "-q", code=0)
    with open(rep) as f:
        report = json.load(f)
    assert report["samples"] == 3 and report["calibration"] == d, report
    image = [t for t in report["tensors"] if t["name"] == "image"][0]
    # Pixels in [0, 255] normalised with ImageNet's mean and std span about [-2.1, 2.6].
    assert -2.2 < image["min"] < -1.5 and 1.5 < image["max"] < 2.7, image
    # owb compare takes the same folder: the float model against itself is exact
    _, text, _ = owb("compare", MODEL, MODEL, "--images", d, "--mean", "0.485,0.456,0.406", "--json", code=0)
    result = json.loads(text)
    assert result["samples"] == 3 and result["outputs"][0]["sqnr_db"] is None, result["outputs"]
    for args in (["--image-size", "32"], ["--layout", "chw"], ["--std", "0,1,1"]):
        _, _, err = owb("quantize", MODEL, "-o", out("x.onnx"), "--calibration-images", d, *args, code=2)
        one_error_line(err, args[0])
    _, _, err = owb("quantize", MODEL, "-o", out("x.onnx"), "--calibration-random", "2", "--mean", "0.5", code=2)
    one_error_line(err, "--calibration-images")


@test
def bad_usage():
    for args in ([], [MODEL], [MODEL, "-o", out("x.onnx")],
                 [MODEL, "-o", out("x.onnx"), "--calibration-random", "2", "--method", "kl"],
                 [MODEL, "-o", out("x.onnx"), "--calibration-random", "2", "--activation-type", "u4"],
                 [MODEL, "-o", out("x.onnx"), "--dynamic", "--calibration-random", "2"],
                 [MODEL, "-o", out("x.onnx"), "--calibration-random", "2", "--max-accuracy-drop", "0.01"],
                 [MODEL, "-o", out("x.onnx"), "--calibration-random", "2", "--labels", "l.txt"],
                 [MODEL, "-o", out("x.onnx"), "--calibration-random", "2", "--percentile", "101"]):
        _, stdout, err = owb("quantize", *args, code=2)
        one_error_line(err, "quantize")
        assert stdout == "", stdout


@test
def never_over_the_input():
    copy = out("model-copy.onnx")
    shutil.copy(MODEL, copy)
    before = open(copy, "rb").read()
    _, _, err = owb("quantize", copy, "-o", copy, "--calibration-random", "2", code=2)
    one_error_line(err, "refusing to overwrite the input model")
    link = out("link.onnx")
    os.symlink(copy, link)
    owb("quantize", copy, "-o", link, "--calibration-random", "2", code=2)
    assert open(copy, "rb").read() == before


@test
def external_data():
    q = out("q-ext.onnx")
    owb("quantize", MODEL, "-o", q, "--calibration-random", "2", "--external-data", "q-ext.bin", "-q", code=0)
    assert os.path.getsize(out("q-ext.bin")) > 0
    owb("compare", MODEL, q, "--samples", "1", "--no-tensors", code=0)
    # the data file may not be the output itself, nor the input model
    _, _, err = owb("quantize", MODEL, "-o", q, "--calibration-random", "2", "--external-data", "q-ext.onnx", code=2)
    one_error_line(err, "same file")


@test
def bad_files():
    _, _, err = owb("quantize", out("none.onnx"), "-o", out("x.onnx"), "--calibration-random", "2", code=1)
    one_error_line(err, "none.onnx")
    _, _, err = owb("quantize", MODEL, "-o", out("x.onnx"), "--calibration-dir", out("no-dir"), code=1)
    one_error_line(err, "no-dir")
    with open(out("bad-ov.json"), "w") as f:
        f.write('{"image": {"type": "u4"}}')
    _, _, err = owb("quantize", MODEL, "-o", out("x.onnx"), "--calibration-random", "2", "--overrides",
                    out("bad-ov.json"), code=1)
    one_error_line(err, "bad-ov.json:1", "type")
    assert not os.path.exists(out("x.onnx"))


if __name__ == "__main__":
    sys.exit(owb_cli_test.main(cleanup=TMP))
