"""Writes tests/profiler/data/tiny-cnn-ort-profile.json: ONNX Runtime's profile (enable_profiling)
of three runs of data/samples/tiny-cnn.onnx with graph optimizations off, so that its node names are
the model's. Needs onnxruntime and numpy; the test reads the committed file, not this script:

    python3 tests/profiler/make-ort-profile.py [OUT.json]
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnxruntime as ort

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
model = os.path.join(root, "data", "samples", "tiny-cnn.onnx")
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "profiler", "data", "tiny-cnn-ort-profile.json")

with tempfile.TemporaryDirectory() as tmp:
    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tmp, "ort")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    for _ in range(3):
        session.run(None, {session.get_inputs()[0].name: x})
    shutil.copyfile(session.end_profiling(), out)
print(out)
