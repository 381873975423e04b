#!/usr/bin/env python3
"""Writes a graph of residual blocks (Conv, BatchNormalization, Relu, Add, and a Concat every
fourth block) with small weights and static shapes, for timing the optimizer, the loader and the
graph view on large graphs. Node names carry no exporter scopes ("conv_17", not "/layer1/conv").

    make-scale-model.py NODES OUT.onnx [--channels C] [--size HW] [--seed S]

NODES is the number of nodes wanted; the graph has about that many (whole blocks)."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nodes", type=int)
    parser.add_argument("out")
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--size", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    c, hw = args.channels, args.size
    nodes, inits = [], []

    def weight(name, shape, scale=0.1):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv_bn(x, k, tag):
        w = weight(f"w_{k}_{tag}", (c, c, 3, 3))
        nodes.append(helper.make_node("Conv", [x, w], [f"conv_{k}_{tag}"], name=f"conv_{k}_{tag}",
                                      pads=[1, 1, 1, 1]))
        scale = weight(f"bn_scale_{k}_{tag}", (c,))
        bias = weight(f"bn_bias_{k}_{tag}", (c,))
        mean = weight(f"bn_mean_{k}_{tag}", (c,))
        var = f"bn_var_{k}_{tag}"
        inits.append(numpy_helper.from_array((rng.random(c) + 0.5).astype(np.float32), var))
        nodes.append(helper.make_node("BatchNormalization", [f"conv_{k}_{tag}", scale, bias, mean, var],
                                      [f"bn_{k}_{tag}"], name=f"bn_{k}_{tag}"))
        return f"bn_{k}_{tag}"

    x, k = "input", 0
    # A block is Conv, BN, Relu, Conv, BN, Add, Relu (7 nodes); every fourth also narrows a Concat
    # of the block's input and output back to C channels with a 1x1 Conv (2 more).
    while len(nodes) + 7 <= args.nodes:
        a = conv_bn(x, k, "a")
        nodes.append(helper.make_node("Relu", [a], [f"relu_{k}_a"], name=f"relu_{k}_a"))
        b = conv_bn(f"relu_{k}_a", k, "b")
        nodes.append(helper.make_node("Add", [b, x], [f"add_{k}"], name=f"add_{k}"))
        nodes.append(helper.make_node("Relu", [f"add_{k}"], [f"out_{k}"], name=f"relu_{k}_out"))
        y = f"out_{k}"
        if k % 4 == 3 and len(nodes) + 2 <= args.nodes:
            nodes.append(helper.make_node("Concat", [x, y], [f"cat_{k}"], name=f"cat_{k}", axis=1))
            w = weight(f"w_{k}_mix", (c, 2 * c, 1, 1))
            nodes.append(helper.make_node("Conv", [f"cat_{k}", w], [f"mix_{k}"], name=f"conv_{k}_mix"))
            y = f"mix_{k}"
        x, k = y, k + 1
    graph = helper.make_graph(
        nodes, "scale",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, c, hw, hw])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, c, hw, hw])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="make-scale-model")
    model.ir_version = 8
    onnx.save(model, args.out)
    print(f"{args.out}: {len(nodes)} nodes, {len(inits)} initializers")


if __name__ == "__main__":
    main()
