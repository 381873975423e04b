#!/usr/bin/env python3
"""Writes a BERT-like encoder as PyTorch exports it at opset 17 (embeddings, then layers of
self-attention and a GELU MLP, LayerNorm decomposed into ReduceMean/Sub/Pow/Sqrt/Div, names with
exporter scopes such as "/encoder/layer.3/attention/self/query/MatMul"), with seeded random
weights and static shapes, for measuring the app's memory and load time on a transformer.

    make-bert-model.py OUT.onnx [--layers L] [--hidden H] [--heads N] [--seq S] [--batch B] [--vocab V] [--seed S]

The defaults are BERT-base's sizes (12 layers, hidden 768, 12 heads, 30522 words): about
110 million parameters, 440 MB of weights."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def weight(self, name, shape, scale=0.02):
        array = (self.rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, scope, name, inputs, **attrs):
        out = f"{scope}/{name}_output_0"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"{scope}/{name}", **attrs))
        return out

    def linear(self, x, scope, n_in, n_out):
        w = self.weight(f"{scope}.weight", (n_in, n_out))
        b = self.weight(f"{scope}.bias", (n_out,))
        y = self.op("MatMul", scope, "MatMul", [x, w])
        return self.op("Add", scope, "Add", [b, y])

    def layer_norm(self, x, scope, hidden):
        gamma = self.const(f"{scope}.weight", np.ones(hidden, np.float32))
        beta = self.const(f"{scope}.bias", np.zeros(hidden, np.float32))
        mean = self.op("ReduceMean", scope, "ReduceMean", [x], axes=[-1])
        centred = self.op("Sub", scope, "Sub", [x, mean])
        two = self.const(f"{scope}.two", np.array(2.0, np.float32))
        square = self.op("Pow", scope, "Pow", [centred, two])
        var = self.op("ReduceMean", scope, "ReduceMean_1", [square], axes=[-1])
        eps = self.const(f"{scope}.eps", np.array(1e-12, np.float32))
        var_eps = self.op("Add", scope, "Add", [var, eps])
        std = self.op("Sqrt", scope, "Sqrt", [var_eps])
        normed = self.op("Div", scope, "Div", [centred, std])
        scaled = self.op("Mul", scope, "Mul", [normed, gamma])
        return self.op("Add", scope, "Add_1", [scaled, beta])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--batch", type=int, default=1, help="batch size, fixed in the graph (Reshape shapes)")
    parser.add_argument("--vocab", type=int, default=30522)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    h, heads, seq, batch = args.hidden, args.heads, args.seq, args.batch
    head = h // heads
    b = Builder(args.seed)

    # Embeddings: words + positions + token types, then LayerNorm.
    scope = "/embeddings"
    words = b.weight("embeddings.word_embeddings.weight", (args.vocab, h))
    positions = b.weight("embeddings.position_embeddings.weight", (512, h))
    types = b.weight("embeddings.token_type_embeddings.weight", (2, h))
    e_words = b.op("Gather", f"{scope}/word_embeddings", "Gather", [words, "input_ids"])
    e_types = b.op("Gather", f"{scope}/token_type_embeddings", "Gather", [types, "token_type_ids"])
    pos_ids = b.const("embeddings.position_ids", np.arange(seq, dtype=np.int64).reshape(1, seq))
    e_pos = b.op("Gather", f"{scope}/position_embeddings", "Gather", [positions, pos_ids])
    x = b.op("Add", scope, "Add", [e_words, e_types])
    x = b.op("Add", scope, "Add_1", [x, e_pos])
    x = b.layer_norm(x, f"{scope}/LayerNorm", h)

    # The attention mask as the exporter writes it: (1 - mask) * -10000, broadcast over heads.
    scope = "/encoder"
    mask = b.op("Unsqueeze", scope, "Unsqueeze", ["attention_mask", b.const("mask_axes", np.array([1, 2], np.int64))])
    mask = b.op("Cast", scope, "Cast", [mask], to=TensorProto.FLOAT)
    one = b.const("mask_one", np.array(1.0, np.float32))
    mask = b.op("Sub", scope, "Sub", [one, mask])
    mask = b.op("Mul", scope, "Mul", [mask, b.const("mask_min", np.array(-10000.0, np.float32))])

    split = b.const("heads_shape", np.array([batch, seq, heads, head], np.int64))
    merge = b.const("merged_shape", np.array([batch, seq, h], np.int64))
    scale = b.const("attention_scale", np.array(np.sqrt(head), np.float32))
    for layer in range(args.layers):
        ls = f"/encoder/layer.{layer}"
        heads_of = {}
        for part in ("query", "key", "value"):
            ps = f"{ls}/attention/self/{part}"
            y = b.linear(x, ps, h, h)
            y = b.op("Reshape", f"{ls}/attention/self", f"Reshape_{part}", [y, split])
            perm = [0, 2, 3, 1] if part == "key" else [0, 2, 1, 3]
            heads_of[part] = b.op("Transpose", f"{ls}/attention/self", f"Transpose_{part}", [y], perm=perm)
        ss = f"{ls}/attention/self"
        scores = b.op("MatMul", ss, "MatMul", [heads_of["query"], heads_of["key"]])
        scores = b.op("Div", ss, "Div", [scores, scale])
        scores = b.op("Add", ss, "Add", [scores, mask])
        probs = b.op("Softmax", ss, "Softmax", [scores], axis=-1)
        context = b.op("MatMul", ss, "MatMul_1", [probs, heads_of["value"]])
        context = b.op("Transpose", ss, "Transpose", [context], perm=[0, 2, 1, 3])
        context = b.op("Reshape", ss, "Reshape", [context, merge])
        out = b.linear(context, f"{ls}/attention/output/dense", h, h)
        out = b.op("Add", f"{ls}/attention/output", "Add", [out, x])
        x = b.layer_norm(out, f"{ls}/attention/output/LayerNorm", h)
        inter = b.linear(x, f"{ls}/intermediate/dense", h, 4 * h)
        gs = f"{ls}/intermediate/intermediate_act_fn"
        g = b.op("Div", gs, "Div", [inter, b.const(f"{gs}.sqrt2", np.array(np.sqrt(2.0), np.float32))])
        g = b.op("Erf", gs, "Erf", [g])
        g = b.op("Add", gs, "Add", [g, b.const(f"{gs}.one", np.array(1.0, np.float32))])
        g = b.op("Mul", gs, "Mul", [inter, g])
        g = b.op("Mul", gs, "Mul_1", [g, b.const(f"{gs}.half", np.array(0.5, np.float32))])
        out = b.linear(g, f"{ls}/output/dense", 4 * h, h)
        out = b.op("Add", f"{ls}/output", "Add", [out, x])
        x = b.layer_norm(out, f"{ls}/output/LayerNorm", h)

    pooled = b.op("Gather", "/pooler", "Gather", [x, b.const("first_token", np.array(0, np.int64))], axis=1)
    pooled = b.linear(pooled, "/pooler/dense", h, h)
    pooled = b.op("Tanh", "/pooler/activation", "Tanh", [pooled])
    b.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="Identity_0"))
    b.nodes.append(helper.make_node("Identity", [pooled], ["pooler_output"], name="Identity_1"))

    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, [batch, seq])
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [batch, seq, h]),
               helper.make_tensor_value_info("pooler_output", TensorProto.FLOAT, [batch, h])]
    graph = helper.make_graph(b.nodes, "bert", inputs, outputs, b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make-bert-model")
    model.ir_version = 8
    onnx.save(model, args.out)
    params = sum(int(np.prod(t.dims)) for t in b.inits)
    print(f"{args.out}: {len(b.nodes)} nodes, {len(b.inits)} initializers, {params / 1e6:.1f} M parameters")


if __name__ == "__main__":
    main()
