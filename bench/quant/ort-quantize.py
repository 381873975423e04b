#!/usr/bin/env python3
"""Quantizes a float ONNX model with ONNX Runtime's reference quantizer, with the settings a user
would compare `owb quantize` against, and prints one JSON line of what it cost.

    ort-quantize.py FLOAT CALIB_DIR OUT [--method minmax|entropy|percentile] [--samples N]
                    [--dynamic] [--per-tensor] [--no-preprocess] [--entropy-bins B] [--allow-torch]

Steps:
  1. onnxruntime.quantization.shape_inference.quant_pre_process(FLOAT, a temp file); if that
     fails the float model is used as it is, and the JSON says so ("preprocess": "failed: ...").
  2. static (default): quantize_static(..., quant_format=QDQ, per_channel=True (False with
     --per-tensor), activation_type=QUInt8, weight_type=QInt8, calibrate_method=METHOD) with a
     CalibrationDataReader over the first N (default 128) CALIB_DIR/test_data_set_K folders in
     numeric K order (input_J.pb feeds the model's J-th input);
     --dynamic: quantize_dynamic(..., weight_type=QInt8) (no calibration data).
     ORT's entropy method as quantize_static runs it uses 128 histogram bins and 128 quantized
     bins, so its KL threshold search has one candidate, the whole range: it gives MinMax's
     ranges. quantize_static has no option for the bin counts; --entropy-bins B (e.g. 2048)
     wraps the calibrator factory quantize_static calls to pass num_bins=B (num_quantized_bins
     stays 128), which makes the search real (TensorRT-style).
  3. checks OUT with onnx.checker and by opening it in an ONNX Runtime CPU session.

JSON: seconds (steps 1 and 2), quantize_seconds (step 2), peak_rss_mb (ru_maxrss of this
process / 1024), rss_before_mb and rss_after_preprocess_mb (the same peak before step 1 and
after it), method, samples, per_channel, preprocess, preprocess_opset, opset_in, opset_out,
quant_ops, checker, loads, warnings (ORT's logged warnings, first 200 characters each), error (where quantizing failed).

quant_pre_process imports torch where it is installed (through onnxruntime.transformers), which
adds some 500 MB to the peak RSS and a few seconds, and changes nothing in its result; this script
hides torch from it so the numbers are those of a user without torch (--allow-torch: don't)."""
import sys

if "--allow-torch" not in sys.argv:
    sys.modules["torch"] = None     # `import torch` raises ImportError from here on

import argparse
import glob
import json
import logging
import os
import re
import resource
import tempfile
import time

import onnx
from onnx import numpy_helper
import onnxruntime as ort
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                      quantize_dynamic, quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process

METHODS = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
           "percentile": CalibrationMethod.Percentile}


class TestDataReader(CalibrationDataReader):
    """Feeds the first `samples` test_data_set_K folders of calib_dir, in numeric K order."""

    def __init__(self, calib_dir, input_names, samples):
        dirs = glob.glob(os.path.join(calib_dir, "test_data_set_*"))
        dirs.sort(key=lambda d: int(re.search(r"(\d+)$", d).group(1)))
        if samples is not None:
            dirs = dirs[:samples]
        if not dirs:
            raise SystemExit(f"no test_data_set_K folders in {calib_dir}")
        self.dirs, self.names, self.pos = dirs, input_names, 0

    def __len__(self):
        return len(self.dirs)

    def get_next(self):
        if self.pos >= len(self.dirs):
            return None
        d = self.dirs[self.pos]
        self.pos += 1
        feeds = {}
        for j, name in enumerate(self.names):
            t = onnx.TensorProto()
            with open(os.path.join(d, f"input_{j}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            feeds[name] = numpy_helper.to_array(t)
        return feeds

    def rewind(self):
        self.pos = 0


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        msg = record.getMessage().strip()
        if msg and msg[:200] not in self.messages:
            self.messages.append(msg[:200])


def opset_of(model):
    return [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("float_model")
    ap.add_argument("calib_dir")
    ap.add_argument("out")
    ap.add_argument("--method", choices=sorted(METHODS), default="minmax")
    ap.add_argument("--samples", type=int, default=128)
    ap.add_argument("--dynamic", action="store_true")
    ap.add_argument("--per-tensor", action="store_true")
    ap.add_argument("--no-preprocess", action="store_true")
    ap.add_argument("--allow-torch", action="store_true", help="let quant_pre_process import torch")
    ap.add_argument("--entropy-bins", type=int, help="histogram bins for --method entropy (ORT's default 128)")
    a = ap.parse_args()

    if a.entropy_bins:
        # (the package's `quantize` attribute is a function that hides the submodule's name)
        ort_quantize_module = sys.modules["onnxruntime.quantization.quantize"]
        factory = ort_quantize_module.create_calibrator

        def create_calibrator(*args, **kwargs):
            options = dict(kwargs.get("extra_options") or {})
            options["num_bins"] = a.entropy_bins
            kwargs["extra_options"] = options
            return factory(*args, **kwargs)

        ort_quantize_module.create_calibrator = create_calibrator

    collect = Collect()
    logging.getLogger().addHandler(collect)
    float_model = onnx.load(a.float_model)
    res = {"model": a.float_model, "out": a.out, "opset_in": opset_of(float_model),
           "method": "dynamic" if a.dynamic else a.method,
           "samples": 0 if a.dynamic else None, "per_channel": None}
    res["torch_hidden"] = not a.allow_torch
    if a.entropy_bins:
        res["entropy_bins"] = a.entropy_bins
    input_names = [i.name for i in float_model.graph.input
                   if i.name not in {t.name for t in float_model.graph.initializer}]
    del float_model

    res["rss_before_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    t0 = time.time()
    tmp = tempfile.TemporaryDirectory(prefix="ort-quantize-")
    src = a.float_model
    if a.no_preprocess:
        res["preprocess"] = "skipped"
    else:
        pre = os.path.join(tmp.name, "preprocessed.onnx")
        try:
            quant_pre_process(a.float_model, pre)
            src = pre
            res["preprocess"] = "ok"
            res["preprocess_opset"] = opset_of(onnx.load(pre, load_external_data=False))
        except Exception as e:  # quant_pre_process is best effort: go on with the float model
            res["preprocess"] = f"failed: {type(e).__name__}: {str(e)[:300]}"
            print(f"ort-quantize: quant_pre_process failed, using the float model as it is: {e}",
                  file=sys.stderr)
    res["rss_after_preprocess_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    t1 = time.time()
    try:
        if a.dynamic:
            quantize_dynamic(src, a.out, weight_type=QuantType.QInt8)
        else:
            reader = TestDataReader(a.calib_dir, input_names, a.samples)
            res["samples"] = len(reader)
            res["per_channel"] = not a.per_tensor
            quantize_static(src, a.out, reader, quant_format=QuantFormat.QDQ, per_channel=not a.per_tensor,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            calibrate_method=METHODS[a.method])
    except Exception as e:
        res["error"] = f"{type(e).__name__}: {str(e)[:500]}"
    t2 = time.time()
    res["seconds"] = round(t2 - t0, 3)
    res["quantize_seconds"] = round(t2 - t1, 3)
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    tmp.cleanup()

    if "error" not in res and os.path.exists(a.out):
        q = onnx.load(a.out)
        res["opset_out"] = opset_of(q)
        ops = {}
        for n in q.graph.node:
            if "quant" in n.op_type.lower() or "Integer" in n.op_type or n.op_type.startswith("QLinear"):
                ops[n.op_type] = ops.get(n.op_type, 0) + 1
        res["quant_ops"] = ops
        try:
            onnx.checker.check_model(q)
            res["checker"] = "ok"
        except Exception as e:
            res["checker"] = f"failed: {str(e)[:300]}"
        del q
        try:
            ort.InferenceSession(a.out, providers=["CPUExecutionProvider"])
            res["loads"] = True
        except Exception as e:
            res["loads"] = False
            res["load_error"] = str(e)[:300]
    res["warnings"] = collect.messages
    print(json.dumps(res))
    return 1 if "error" in res else 0


if __name__ == "__main__":
    sys.exit(main())
