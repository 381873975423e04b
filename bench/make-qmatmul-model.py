#!/usr/bin/env python3
"""Writes a one-node MatMulInteger or QLinearMatMul model (A uint8 [M, K] a graph input, B int8
[K, N] an initializer with per-tensor parameters), for timing the integer GEMM kernels.

    make-qmatmul-model.py OUT.onnx [--op MatMulInteger|QLinearMatMul] [--m M --k K --n N]
                          [--weights-as-input]

--weights-as-input makes B (and its parameters) graph inputs: the kernel cannot pack B at session
creation and runs its reference path, the "before" of a comparison."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--op", default="MatMulInteger", choices=["MatMulInteger", "QLinearMatMul"])
    parser.add_argument("--m", type=int, default=128)
    parser.add_argument("--k", type=int, default=768)
    parser.add_argument("--n", type=int, default=768)
    parser.add_argument("--weights-as-input", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    consts = {
        "b": rng.integers(-128, 128, (args.k, args.n)).astype(np.int8),
        "a_zero_point": np.array(128, np.uint8),
        "b_zero_point": np.array(0, np.int8),
        "a_scale": np.array(0.02, np.float32),
        "b_scale": np.array(0.01, np.float32),
        "y_scale": np.array(0.5, np.float32),
        "y_zero_point": np.array(128, np.uint8),
    }
    if args.op == "MatMulInteger":
        names, out_type = ["a", "b", "a_zero_point", "b_zero_point"], TensorProto.INT32
    else:
        names = ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"]
        out_type = TensorProto.UINT8
    inputs = [helper.make_tensor_value_info("a", TensorProto.UINT8, [args.m, args.k])]
    inits = []
    for name in names[1:]:
        v = consts[name]
        # B itself is fed by the caller; its parameters stay constants (the reference path reads them either way)
        if args.weights_as_input and name == "b":
            inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)))
        else:
            inits.append(numpy_helper.from_array(v, name))
    node = helper.make_node(args.op, names, ["y"], name="qmatmul")
    graph = helper.make_graph([node], "qmatmul", inputs,
                              [helper.make_tensor_value_info("y", out_type, [args.m, args.n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, args.out)


if __name__ == "__main__":
    main()
