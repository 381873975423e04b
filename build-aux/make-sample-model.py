#!/usr/bin/env python3
"""Writes the bundled sample model data/samples/tiny-cnn.onnx (a small image classifier with
seeded random weights), an input tensor for it (tiny-cnn-input.pb) and the output that ONNX
Runtime computes from that input (tiny-cnn-output.pb), the expected output of tests/app.

Needs onnx==1.23.2, numpy and onnxruntime (pip install onnxruntime==1.31.1 in a venv). ONNX's
own ReferenceEvaluator is not used as the oracle: for BatchNormalization 9-13 it fills in the
default momentum and then computes batch statistics (training mode) instead of using the given
mean and variance."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(rng):
    def weight(name, shape, fan_in):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32), name)

    def vector(name, values):
        return numpy_helper.from_array(np.asarray(values, dtype=np.float32), name)

    inits = [
        weight("conv1.weight", (8, 3, 3, 3), 27),
        vector("conv1.bias", rng.uniform(-0.1, 0.1, 8)),
        vector("bn1.scale", rng.uniform(0.5, 1.5, 8)),
        vector("bn1.bias", rng.uniform(-0.2, 0.2, 8)),
        vector("bn1.mean", rng.uniform(-0.2, 0.2, 8)),
        vector("bn1.var", rng.uniform(0.5, 2.0, 8)),
        weight("conv2.weight", (16, 8, 3, 3), 72),
        vector("conv2.bias", rng.uniform(-0.1, 0.1, 16)),
        weight("fc.weight", (10, 16), 4),
        vector("fc.bias", rng.uniform(-0.1, 0.1, 10)),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["conv1.out"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv1.out", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"],
                         ["bn1.out"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["bn1.out"], ["relu1.out"], name="relu1"),
        helper.make_node("MaxPool", ["relu1.out"], ["pool1.out"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["pool1.out", "conv2.weight", "conv2.bias"], ["conv2.out"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2.out"], ["relu2.out"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["relu2.out"], ["gap.out"], name="gap"),
        helper.make_node("Flatten", ["gap.out"], ["flatten.out"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flatten.out", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="onnx-workbench", producer_version="0.1.0",
                              doc_string="A tiny image classifier with seeded random weights: the sample model "
                                         "bundled with ONNX Workbench.")
    model.ir_version = 8
    model.model_version = 1
    helper.set_model_props(model, {
        "description": "Conv+BatchNorm+Relu, MaxPool, Conv+Relu, GlobalAveragePool, Flatten, Gemm, Softmax "
                       "on 3x32x32 images, 10 classes",
        "weights": "seeded random (numpy default_rng(20240601)), not trained",
        "made_by": "build-aux/make-sample-model.py",
        "license": "GPL-3.0-or-later",
    })
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out = os.path.join(root, "data", "samples")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20240601)
    model = build(rng)
    image = rng.uniform(0.0, 1.0, (1, 3, 32, 32)).astype(np.float32)
    import onnxruntime
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (probs,) = session.run(None, {"image": image})

    onnx.save(model, os.path.join(out, "tiny-cnn.onnx"))
    with open(os.path.join(out, "tiny-cnn-input.pb"), "wb") as f:
        f.write(numpy_helper.from_array(image, "image").SerializeToString())
    with open(os.path.join(out, "tiny-cnn-output.pb"), "wb") as f:
        f.write(numpy_helper.from_array(probs.astype(np.float32), "probs").SerializeToString())
    print("probs", np.array2string(probs, precision=4), file=sys.stderr)


if __name__ == "__main__":
    main()
