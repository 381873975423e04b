#!/usr/bin/env python3
"""Trains small real models whose accuracy can be measured, exports them to ONNX and writes
calibration and evaluation inputs beside them in the ONNX test-data layout, for checking INT8
quantization (`owb quantize`, `owb compare`) against the float model and ONNX Runtime.

    make-quant-tasks.py [--out DIR] [--only digits,seq,crnn] [--seed S] [--quick]

Writes into DIR (default /work/dev/quant):
  digits_cnn.onnx          opset 17  input 'input' float [N,1,32,32] -> 'logits' [N,10]
  digits_cnn_opset11.onnx  opset 11  the same trained network
  digits_cnn_opset9.onnx   opset 9   the same trained network
  digits_cnn_opset11_bn.onnx, digits_cnn_opset9_bn.onnx: the same with BatchNormalization kept
                           (written where the plain export folded BatchNorm into Conv, as the
                           TorchScript exporter does in eval mode)
  seq_transformer.onnx     opset 17  input 'tokens' int64 [N,10] -> 'logits' [N,10,16]
  crnn_text_opset11.onnx   opset 11  input 'image' float [N,1,16,80] -> 'logits' [N,20,11]
  <model>_calib/test_data_set_K/input_0.pb   K = 0..255 (CNN) or 0..199, training split
  <model>_eval/test_data_set_K/input_0.pb    held-out test split, labels.txt one line per K
  tasks.json               what was trained, its float accuracy in PyTorch, names and shapes
All digits_cnn* exports share digits_cnn_calib and digits_cnn_eval.

The data is scikit-learn's bundled 8x8 digits (1797 images, no download). Each model trains on
one CPU thread (--threads) for a fixed number of steps or at most 170 s, whichever comes first;
the learning rate follows the larger of the two fractions, so a run cut short on a busy machine
still ends annealed (the step count reached is in tasks.json)."""
import argparse
import inspect
import json
import math
import os
import time

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

DIGITS_TEST = 400       # held-out digits images (of 1797)
SEQ_LEN, SEQ_VOCAB = 10, 16
CRNN_DIGITS, CRNN_CELL, CRNN_BLANK = 5, 16, 10


# ----------------------------------------------------------------------------- helpers

def export(model, args, path, opset, input_names, output_names, dynamic_axes):
    """torch.onnx.export with the TorchScript exporter (dynamo=False where that exists)."""
    kwargs = dict(opset_version=opset, input_names=input_names, output_names=output_names,
                  dynamic_axes=dynamic_axes, do_constant_folding=True)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, args, path, **kwargs)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    return ops


def fix_output_dim(path, axis, value):
    """The exporter names some output dims it could not follow (e.g. 'Transposelogits_dim_1');
    writes the known static size there instead."""
    m = onnx.load(path)
    d = m.graph.output[0].type.tensor_type.shape.dim[axis]
    if not d.dim_value:
        d.Clear()
        d.dim_value = value
        onnx.checker.check_model(m)
        onnx.save(m, path)


def write_sets(root, name, arrays, labels=None):
    """arrays: list of numpy arrays, each one sample with batch dim 1."""
    os.makedirs(root, exist_ok=True)
    for k, a in enumerate(arrays):
        d = os.path.join(root, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(a), name).SerializeToString())
    if labels is not None:
        with open(os.path.join(root, "labels.txt"), "w") as f:
            for lab in labels:
                f.write(f"{lab}\n")


def io_summary(path):
    m = onnx.load(path)
    def dims(vi):
        return [d.dim_param if d.dim_param else d.dim_value for d in vi.type.tensor_type.shape.dim]
    def dtype(vi):
        return onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type).name
    inits = {i.name for i in m.graph.initializer}
    return {
        "opset": [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0],
        "inputs": [{"name": i.name, "dtype": dtype(i), "shape": dims(i)}
                   for i in m.graph.input if i.name not in inits],
        "outputs": [{"name": o.name, "dtype": dtype(o), "shape": dims(o)} for o in m.graph.output],
    }


def set_lr(opt, peak, step, steps, t0, budget, warm=0.1):
    """Warm-up then cosine decay over the run's progress: the larger of the step fraction and the
    time-budget fraction, so a run cut short by the budget on a busy machine still ends annealed."""
    p = max(step / steps, (time.time() - t0) / budget)
    lr = peak * p / warm if p < warm else peak * 0.5 * (1 + math.cos(math.pi * min(1.0, (p - warm) / (1 - warm))))
    for g in opt.param_groups:
        g["lr"] = lr
    return p


def digits_split(seed):
    d = load_digits()
    x = d.images.astype(np.float32) / 16.0            # [1797, 8, 8] in 0..1
    y = d.target.astype(np.int64)
    return train_test_split(x, y, test_size=DIGITS_TEST, random_state=seed, stratify=y)


def upscale(x, size):
    """x: [M, 8, 8] numpy -> [M, 1, size, size] bilinear (align_corners=False)."""
    t = torch.from_numpy(x)[:, None]
    return F.interpolate(t, size=(size, size), mode="bilinear", align_corners=False)


# ----------------------------------------------------------------------------- a. digits CNN

class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, stride=1, relu=True):
        layers = [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)]
        if relu:
            layers.append(nn.ReLU())
        super().__init__(*layers)


class Residual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = ConvBN(c, c)
        self.b = ConvBN(c, c, relu=False)

    def forward(self, x):
        return F.relu(self.b(self.a(x)) + x)


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            ConvBN(1, 16), nn.MaxPool2d(2),          # 16 x 16 x 16
            ConvBN(16, 32), nn.MaxPool2d(2),         # 32 x 8 x 8
            Residual(32),
            ConvBN(32, 64, stride=2),                # 64 x 4 x 4
            nn.AdaptiveAvgPool2d(1))                 # GlobalAveragePool
        self.fc = nn.Linear(64, 10)                  # Gemm

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def random_shift(x, g, max_shift):
    """Shifts each image of x [B,1,H,W] by up to max_shift pixels (zero fill)."""
    b, _, h, w = x.shape
    p = max_shift
    padded = F.pad(x, (p, p, p, p), value=float(x.min()))
    out = torch.empty_like(x)
    offs = torch.randint(0, 2 * p + 1, (b, 2), generator=g)
    for i in range(b):
        dy, dx = int(offs[i, 0]), int(offs[i, 1])
        out[i] = padded[i, :, dy:dy + h, dx:dx + w]
    return out


def make_digits(out, seed, quick, report):
    t0 = time.time()
    xtr, xte, ytr, yte = digits_split(seed)
    tr, te = upscale(xtr, 32), upscale(xte, 32)
    mean, std = float(tr.mean()), float(tr.std())
    tr, te = (tr - mean) / std, (te - mean) / std
    ytr_t, yte_t = torch.from_numpy(ytr), torch.from_numpy(yte)

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DigitsCNN()
    epochs = 4 if quick else 20
    bs = 64
    steps_per_epoch = math.ceil(len(tr) / bs)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=epochs * steps_per_epoch)
    for ep in range(epochs):
        model.train()
        perm = torch.randperm(len(tr), generator=g)
        for s in range(steps_per_epoch):
            idx = perm[s * bs:(s + 1) * bs]
            xb = random_shift(tr[idx], g, 2)
            loss = F.cross_entropy(model(xb), ytr_t[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        model.eval()
        with torch.no_grad():
            acc = (model(te).argmax(1) == yte_t).float().mean().item()
        print(f"digits_cnn epoch {ep + 1}/{epochs} loss {loss.item():.4f} test acc {acc:.4f}", flush=True)
    train_s = time.time() - t0

    dyn = {"input": {0: "N"}, "logits": {0: "N"}}
    dummy = te[:1].clone()
    bn_counts = {}
    for name, opset in (("digits_cnn", 17), ("digits_cnn_opset11", 11), ("digits_cnn_opset9", 9)):
        path = os.path.join(out, name + ".onnx")
        ops = export(model, (dummy,), path, opset, ["input"], ["logits"], dyn)
        bn_counts[name] = ops.get("BatchNormalization", 0)
        print(f"{name}: opset {opset} ops {ops}", flush=True)
    # The TorchScript exporter folds BatchNormalization into the preceding Conv in eval mode
    # (its eval peephole pass). Old exporters such as PaddlePaddle's keep BatchNormalization as its
    # own node, so where the default export folded them, also write the network with
    # BatchNormalization kept: TrainingMode.PRESERVE on an eval-mode model skips that pass and
    # exports the inference form of BatchNormalization (running statistics, one output).
    unfused = {}
    for name, opset in (("digits_cnn_opset11_bn", 11), ("digits_cnn_opset9_bn", 9)):
        base = name[:-3]
        if bn_counts[base] > 0:
            continue
        path = os.path.join(out, name + ".onnx")
        kwargs = dict(opset_version=opset, input_names=["input"], output_names=["logits"],
                      dynamic_axes=dyn, training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)
        if "dynamo" in inspect.signature(torch.onnx.export).parameters:
            kwargs["dynamo"] = False
        model.eval()
        with torch.no_grad():
            torch.onnx.export(model, (dummy,), path, **kwargs)
        m = onnx.load(path)
        onnx.checker.check_model(m)
        unfused[name] = sum(1 for n in m.graph.node if n.op_type == "BatchNormalization")
        print(f"{name}: BatchNormalization nodes {unfused[name]}", flush=True)

    calib = [tr[i:i + 1].numpy() for i in range(256)]
    write_sets(os.path.join(out, "digits_cnn_calib"), "input", calib)
    write_sets(os.path.join(out, "digits_cnn_eval"), "input",
               [te[i:i + 1].numpy() for i in range(len(te))], [int(v) for v in yte])
    report["digits_cnn"] = {
        "task": "classify", "torch_test_accuracy": acc, "n_eval": len(te), "n_calib": 256,
        "train_seconds": round(train_s, 1), "epochs": epochs,
        "preprocess": f"sklearn digits /16, bilinear 8x8->32x32 (align_corners=False), (x-{mean:.6f})/{std:.6f}",
        "batchnorm_nodes": bn_counts, "batchnorm_kept_variants": unfused,
        "shares_data": ["digits_cnn_opset11", "digits_cnn_opset9"] + list(unfused),
        "models": {n: io_summary(os.path.join(out, n + ".onnx")) for n in list(bn_counts) + list(unfused)},
    }


# ----------------------------------------------------------------------------- c. sequence transformer

class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        b, t, d = x.shape
        def split(z):
            return z.reshape(b, t, self.h, self.dh).transpose(1, 2)   # [b, h, t, dh]
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh), dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
        return self.o(y)


class EncoderLayer(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.att = Attention(d, heads)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):
        x = x + self.att(self.ln1(x))
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


class SeqTransformer(nn.Module):
    def __init__(self, vocab=SEQ_VOCAB, length=SEQ_LEN, d=64, heads=4, ff=256, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, length, d) * 0.1)
        self.layers = nn.ModuleList(EncoderLayer(d, heads, ff) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        x = self.emb(tokens) + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln(x))


def seq_batch(g, n):
    x = torch.randint(0, SEQ_VOCAB, (n, SEQ_LEN), generator=g)
    return x, torch.sort(x, dim=1).values


def make_seq(out, seed, quick, report):
    t0 = time.time()
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    gte = torch.Generator().manual_seed(seed + 1000)
    xte, yte = seq_batch(gte, 500)
    model = SeqTransformer()
    steps = 300 if quick else 3000
    budget = 170.0
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    for s in range(steps):
        progress = set_lr(opt, 2e-3, s, steps, t0, budget)
        model.train()
        xb, yb = seq_batch(g, 128)
        loss = F.cross_entropy(model(xb).reshape(-1, SEQ_VOCAB), yb.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (s + 1) % 500 == 0 or s + 1 == steps:
            model.eval()
            with torch.no_grad():
                p = model(xte).argmax(-1)
            tok, ex = (p == yte).float().mean().item(), (p == yte).all(1).float().mean().item()
            print(f"seq_transformer step {s + 1}/{steps} loss {loss.item():.4f} token acc {tok:.4f} "
                  f"exact {ex:.4f} ({time.time() - t0:.0f}s)", flush=True)
        if progress >= 1.0:
            print(f"seq_transformer: stopping at step {s + 1} (time budget)", flush=True)
            break
    model.eval()
    with torch.no_grad():
        p = model(xte).argmax(-1)
    tok, ex = (p == yte).float().mean().item(), (p == yte).all(1).float().mean().item()
    train_s = time.time() - t0
    path = os.path.join(out, "seq_transformer.onnx")
    ops = export(model, (xte[:1].clone(),), path, 17, ["tokens"], ["logits"],
                 {"tokens": {0: "N"}, "logits": {0: "N"}})
    print(f"seq_transformer: ops {ops}", flush=True)
    xc, _ = seq_batch(torch.Generator().manual_seed(seed + 2), 200)   # training distribution
    write_sets(os.path.join(out, "seq_transformer_calib"), "tokens", [xc[i:i + 1].numpy() for i in range(200)])
    write_sets(os.path.join(out, "seq_transformer_eval"), "tokens", [xte[i:i + 1].numpy() for i in range(500)],
               [" ".join(str(int(v)) for v in row) for row in yte])
    report["seq_transformer"] = {
        "task": "sequence", "torch_token_accuracy": tok, "torch_exact_match": ex, "n_eval": 500,
        "n_calib": 200, "train_seconds": round(train_s, 1), "steps": s + 1, "ops": ops,
        "description": f"sort {SEQ_LEN} tokens from a vocabulary of {SEQ_VOCAB}; output per position = sorted token",
        "models": {"seq_transformer": io_summary(path)},
    }


# ----------------------------------------------------------------------------- d. CRNN text recogniser

class CRNN(nn.Module):
    def __init__(self, classes=11, hidden=64):
        super().__init__()
        self.cnn = nn.Sequential(
            ConvBN(1, 32), nn.MaxPool2d(2),                 # 32 x 8 x 40
            ConvBN(32, 64), nn.MaxPool2d(2),                # 64 x 4 x 20
            ConvBN(64, 64), nn.MaxPool2d((2, 1)))           # 64 x 2 x 20
        self.proj = nn.Linear(64 * 2, 96)
        self.rnn = nn.GRU(96, hidden, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        f = self.cnn(x)                                   # [N, C, H, W]
        n, c, h, w = f.shape
        f = f.reshape(n, c * h, w).permute(2, 0, 1)       # [T=W, N, C*H]
        f = F.relu(self.proj(f))
        y, _ = self.rnn(f)                                # [T, N, 2*hidden]
        return self.fc(y).transpose(0, 1)                 # [N, T, classes] logits


def render_strings(pool_x, pool_y, n, rng, noise=0.05):
    """pool_x: [M,16,16] digit images in 0..1. Returns images [n,1,16,80] and labels [n,5]."""
    h, w = CRNN_CELL, CRNN_CELL * CRNN_DIGITS
    imgs = np.zeros((n, 1, h, w), np.float32)
    labels = np.zeros((n, CRNN_DIGITS), np.int64)
    for i in range(n):
        idx = rng.integers(0, len(pool_x), CRNN_DIGITS)
        labels[i] = pool_y[idx]
        for j, k in enumerate(idx):
            dx, dy = rng.integers(-2, 3), rng.integers(-1, 2)
            x0 = j * CRNN_CELL + dx
            src = pool_x[k]
            ys, ye = max(0, dy), min(h, h + dy)
            xs, xe = max(0, x0), min(w, x0 + CRNN_CELL)
            patch = src[ys - dy:ye - dy, xs - x0:xe - x0]
            region = imgs[i, 0, ys:ye, xs:xe]
            np.maximum(region, patch, out=region)
    imgs += rng.normal(0.0, noise, imgs.shape).astype(np.float32)
    return (imgs - 0.5) / 0.5, labels


def ctc_greedy(logits, blank=CRNN_BLANK):
    """logits [N,T,C] -> list of digit strings."""
    best = logits.argmax(-1)
    res = []
    for row in best:
        s, prev = [], -1
        for c in row.tolist():
            if c != prev and c != blank:
                s.append(str(c))
            prev = c
        res.append("".join(s))
    return res


def make_crnn(out, seed, quick, report):
    t0 = time.time()
    xtr, xte, ytr, yte = digits_split(seed)
    ptr = upscale(xtr, CRNN_CELL)[:, 0].numpy()
    pte = upscale(xte, CRNN_CELL)[:, 0].numpy()
    rng = np.random.default_rng(seed + 3)
    te_x, te_y = render_strings(pte, yte, 400, np.random.default_rng(seed + 1000))
    te_str = ["".join(str(int(v)) for v in row) for row in te_y]
    torch.manual_seed(seed)
    model = CRNN()
    steps = 200 if quick else 750
    budget = 170.0
    bs = 64
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    ctc = nn.CTCLoss(blank=CRNN_BLANK, zero_infinity=True)
    te_t = torch.from_numpy(te_x)
    def evaluate():
        model.eval()
        with torch.no_grad():
            logits = model(te_t)
        dec = ctc_greedy(logits)
        return float(np.mean([a == b for a, b in zip(dec, te_str)]))
    for s in range(steps):
        progress = set_lr(opt, 3e-3, s, steps, t0, budget, warm=0.15)
        model.train()
        xb, yb = render_strings(ptr, ytr, bs, rng)
        logits = model(torch.from_numpy(xb))                       # [N,T,C]
        lp = F.log_softmax(logits, -1).transpose(0, 1)             # [T,N,C]
        t = lp.shape[0]
        loss = ctc(lp, torch.from_numpy(yb), torch.full((bs,), t, dtype=torch.long),
                   torch.full((bs,), CRNN_DIGITS, dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        if (s + 1) % 250 == 0 or s + 1 == steps:
            print(f"crnn step {s + 1}/{steps} loss {loss.item():.4f} exact {evaluate():.4f} "
                  f"({time.time() - t0:.0f}s)", flush=True)
        if progress >= 1.0:
            print(f"crnn: stopping at step {s + 1} (time budget)", flush=True)
            break
    ex = evaluate()
    train_s = time.time() - t0
    path = os.path.join(out, "crnn_text_opset11.onnx")
    ops = export(model, (te_t[:1].clone(),), path, 11, ["image"], ["logits"],
                 {"image": {0: "N"}, "logits": {0: "N"}})
    fix_output_dim(path, 1, int(model(te_t[:1]).shape[1]))
    print(f"crnn_text_opset11: ops {ops}", flush=True)
    cx, _ = render_strings(ptr, ytr, 200, np.random.default_rng(seed + 4))
    write_sets(os.path.join(out, "crnn_text_opset11_calib"), "image", [cx[i:i + 1] for i in range(200)])
    write_sets(os.path.join(out, "crnn_text_opset11_eval"), "image", [te_x[i:i + 1] for i in range(400)], te_str)
    report["crnn_text_opset11"] = {
        "task": "ctc", "torch_exact_match": ex, "n_eval": 400, "n_calib": 200,
        "train_seconds": round(train_s, 1), "steps": s + 1, "ops": ops,
        "description": ("5 sklearn digits (each bilinear 8x8->16x16, jitter dx in [-2,2], dy in [-1,1]) side by side, "
                        "gaussian noise 0.05, (x-0.5)/0.5; classes 0-9 = digits, 10 = CTC blank; "
                        "output logits [N,T=20,11] batch first"),
        "models": {"crnn_text_opset11": io_summary(path)},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/work/dev/quant")
    ap.add_argument("--only", default="digits,seq,crnn")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="a few steps only, to test the script")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)
    report_path = os.path.join(a.out, "tasks.json")
    report = {}
    if os.path.exists(report_path):
        with open(report_path) as f:
            report = json.load(f)
    report["torch_version"] = torch.__version__
    for part in a.only.split(","):
        {"digits": make_digits, "seq": make_seq, "crnn": make_crnn}[part](a.out, a.seed, a.quick, report)
        with open(report_path, "w") as f:
            json.dump(report, f, indent=1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
