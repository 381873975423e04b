#!/usr/bin/env python3
"""Writes tests/ui/data/subgraphs.onnx: a small model whose work happens in subgraphs, for the
graph view's subgraph tests and the README's screenshots. An If (named If_3, as PyTorch names
them) chooses between two branches that hold Convs and read the stem's output and outer weights;
its then_branch holds a nested If; a Loop then adds to the result n times, reading an outer value
in its body. The input's batch dimension has a long symbolic name, as PaddlePaddle's exporter
writes them (p2o.DynamicDimension.0).

Needs onnx and numpy (the ONNX Runtime venv): python build-aux/make-subgraph-model.py [OUT]
With onnxruntime installed, the model is also run once as a check."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build():
    rng = np.random.default_rng(20)

    def weight(name, shape):
        fan_in = int(np.prod(shape[1:]))
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32), name)

    def bias(name, n):
        return numpy_helper.from_array(rng.uniform(-0.1, 0.1, n).astype(np.float32), name)

    def conv(name, x, w, b, y):
        return helper.make_node("Conv", [x, w, b], [y], name=name, kernel_shape=[3, 3], pads=[1, 1, 1, 1])

    batch = "p2o.DynamicDimension.0"
    feature = [batch, 8, 16, 16]

    # The nested If inside then_branch: a Conv on the outer stem value, or the branch's own value.
    inner_then = helper.make_graph(
        [conv("/head/inner/Conv", "stem", "inner.weight", "inner.bias", "inner_conv"),
         helper.make_node("Add", ["inner_conv", "t_relu"], ["inner_then_out"], name="/head/inner/Add")],
        "inner_then", [], [helper.make_tensor_value_info("inner_then_out", TensorProto.FLOAT, feature)])
    inner_else = helper.make_graph(
        [helper.make_node("Identity", ["t_relu"], ["inner_else_out"], name="/head/inner/Identity")],
        "inner_else", [], [helper.make_tensor_value_info("inner_else_out", TensorProto.FLOAT, feature)])

    then_branch = helper.make_graph(
        [conv("/head/then/Conv", "stem", "then.weight", "then.bias", "t_conv"),
         helper.make_node("Relu", ["t_conv"], ["t_relu"], name="/head/then/Relu"),
         conv("/head/then/Conv_1", "t_relu", "then.weight2", "then.bias2", "t_conv2"),
         helper.make_node("ReduceMean", ["t_conv2"], ["t_mean"], name="/head/then/ReduceMean", keepdims=0),
         helper.make_node("Greater", ["t_mean", "zero"], ["t_positive"], name="/head/then/Greater"),
         helper.make_node("If", ["t_positive"], ["then_out"], name="If_5",
                          then_branch=inner_then, else_branch=inner_else)],
        "then_branch", [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, feature)],
        [weight("then.weight2", (8, 8, 3, 3)), bias("then.bias2", 8)])
    else_branch = helper.make_graph(
        [conv("/head/else/Conv", "stem", "else.weight", "else.bias", "e_conv"),
         helper.make_node("Sigmoid", ["e_conv"], ["e_sig"], name="/head/else/Sigmoid"),
         helper.make_node("Mul", ["e_sig", "stem"], ["else_out"], name="/head/else/Mul")],
        "else_branch", [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, feature)])

    # Loop body: (iteration, cond, acc) -> (cond, acc + head * 0.5); reads `head` from outside.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="/loop/Identity"),
         helper.make_node("Mul", ["head", "half"], ["scaled"], name="/loop/Mul"),
         helper.make_node("Add", ["acc_in", "scaled"], ["acc_out"], name="/loop/Add")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, feature)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, feature)],
        [numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")])

    nodes = [
        conv("/stem/Conv", "x", "stem.weight", "stem.bias", "stem_conv"),
        helper.make_node("Relu", ["stem_conv"], ["stem"], name="/stem/Relu"),
        helper.make_node("If", ["use_then"], ["head"], name="If_3",
                         then_branch=then_branch, else_branch=else_branch),
        helper.make_node("Constant", [], ["true"], name="/loop/Constant",
                         value=numpy_helper.from_array(np.array(True), "true")),
        helper.make_node("Loop", ["n", "true", "stem"], ["acc"], name="Loop_7", body=body),
        helper.make_node("GlobalAveragePool", ["acc"], ["pooled"], name="/pool/GlobalAveragePool"),
        helper.make_node("Flatten", ["pooled"], ["y"], name="/pool/Flatten"),
    ]
    inits = [
        weight("stem.weight", (8, 3, 3, 3)), bias("stem.bias", 8),
        weight("then.weight", (8, 8, 3, 3)), bias("then.bias", 8),
        weight("inner.weight", (8, 8, 3, 3)), bias("inner.bias", 8),
        weight("else.weight", (8, 8, 3, 3)), bias("else.bias", 8),
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"),
    ]
    graph = helper.make_graph(
        nodes, "subgraphs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 16, 16]),
         helper.make_tensor_value_info("use_then", TensorProto.BOOL, []),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 8])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="make-subgraph-model.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "ui", "data", "subgraphs.onnx")
    model = build()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    onnx.save(model, out)
    try:
        import onnxruntime as ort
    except ImportError:
        print("wrote", out)
        return
    session = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32)
    for use_then in (True, False):
        (y,) = session.run(None, {"x": x, "use_then": np.array(use_then), "n": np.array(3, dtype=np.int64)})
        assert y.shape == (2, 8) and np.isfinite(y).all()
    print("wrote", out, "(checked with ONNX Runtime)")


if __name__ == "__main__":
    main()
