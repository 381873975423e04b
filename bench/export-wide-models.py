#!/usr/bin/python3
"""Exports a wider development set than the 9 dev models: architectures of other families, so that
a speed problem of one topology shows in `bench/bench-vs-ort.py` before a user finds it. Weights
are seeded random (outputs are compared numerically, never by labels); every model is exported
with torch.onnx at opset 17 from Debian's PyTorch (python3-torch, python3-torchvision):

  /usr/bin/python3 bench/export-wide-models.py OUTDIR [MODEL...]

Models (default: all):
  densenet121        dense connectivity: each layer reads the Concat of all earlier outputs
  shufflenet_v2      channel shuffle (Reshape -> Transpose -> Reshape), Split/Concat, depthwise 3x3
  convnext_small     ConvNeXt blocks: 7x7 depthwise, LayerNorm over channels and Linear on NHWC
  fcos_head          detection: ResNet-18 trunk, FPN, a shared conv tower per level, many small
                     Reshape/Transpose/Concat ops (no NMS: post-processing is not the network)
  speech_gru_if      a recurrent model with control flow: a scripted Loop over frames, a GRU cell
                     per step and an If on the frame's energy (tiny tensors, many nodes)
  transformer_encdec an encoder-decoder nn.Transformer (3 + 3 layers, d_model 256)
  resnext50          ResNeXt-50 32x4d (grouped 3x3 convolutions, 32 groups)

It is a program you run, not a test; the models are not in the repository."""
import os
import sys
import warnings

import torch
import torchvision

warnings.filterwarnings("ignore")
OPSET = 17
tv = torchvision.models


def export(out, name, model, args, inputs=("input",), script=False):
    torch.manual_seed(1)
    model.eval()
    if script:
        model = torch.jit.script(model)
    path = os.path.join(out, name + ".onnx")
    tmp = path + ".tmp"
    torch.onnx.export(model, args, tmp, opset_version=OPSET, input_names=list(inputs),
                      do_constant_folding=True)
    os.replace(tmp, path)
    print(name, os.path.getsize(path) // 1024, "KiB")


class ConvNeXtSmall(torch.nn.Module):
    """torchvision's convnext_tiny layout (stem 4x4/4, 7x7 depthwise, LayerNorm over channels on
    NHWC, Linear 4x expansion, GELU) at half the depth, so that it runs in tens of milliseconds."""

    class Block(torch.nn.Module):
        def __init__(s, c):
            super().__init__()
            s.dw = torch.nn.Conv2d(c, c, 7, padding=3, groups=c)
            s.ln = torch.nn.LayerNorm(c, eps=1e-6)
            s.fc1 = torch.nn.Linear(c, 4 * c)
            s.fc2 = torch.nn.Linear(4 * c, c)
            s.gamma = torch.nn.Parameter(torch.full((c,), 0.1))

        def forward(s, x):
            y = s.dw(x).permute(0, 2, 3, 1)
            y = s.fc2(torch.nn.functional.gelu(s.fc1(s.ln(y)))) * s.gamma
            return x + y.permute(0, 3, 1, 2)

    class Norm2d(torch.nn.LayerNorm):
        def forward(s, x):
            return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    def __init__(s, dims=(96, 192, 384, 768), depths=(2, 2, 4, 2), classes=1000):
        super().__init__()
        layers = [torch.nn.Conv2d(3, dims[0], 4, stride=4), ConvNeXtSmall.Norm2d(dims[0], eps=1e-6)]
        for i, (c, d) in enumerate(zip(dims, depths)):
            if i > 0:
                layers += [ConvNeXtSmall.Norm2d(dims[i - 1], eps=1e-6),
                           torch.nn.Conv2d(dims[i - 1], c, 2, stride=2)]
            layers += [ConvNeXtSmall.Block(c) for _ in range(d)]
        s.features = torch.nn.Sequential(*layers)
        s.norm = torch.nn.LayerNorm(dims[-1], eps=1e-6)
        s.head = torch.nn.Linear(dims[-1], classes)

    def forward(s, x):
        return s.head(s.norm(s.features(x).mean((2, 3))))


class FcosHead(torch.nn.Module):
    """FCOS-style detector without post-processing: ResNet-18 C3..C5, an FPN with P3..P5, a tower
    of 2 conv + GroupNorm-free ReLU layers shared over levels, then per level class logits, boxes
    and centerness reshaped to [N, H*W*, C] and concatenated over levels."""

    def __init__(s, classes=20, c=128):
        super().__init__()
        r = tv.resnet18()
        s.stem = torch.nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1)
        s.l2, s.l3, s.l4 = r.layer2, r.layer3, r.layer4
        s.lat = torch.nn.ModuleList([torch.nn.Conv2d(i, c, 1) for i in (128, 256, 512)])
        s.smooth = torch.nn.ModuleList([torch.nn.Conv2d(c, c, 3, padding=1) for _ in range(3)])
        tower = lambda: torch.nn.Sequential(torch.nn.Conv2d(c, c, 3, padding=1), torch.nn.ReLU(),
                                            torch.nn.Conv2d(c, c, 3, padding=1), torch.nn.ReLU())
        s.cls_tower, s.box_tower = tower(), tower()
        s.cls = torch.nn.Conv2d(c, classes, 3, padding=1)
        s.box = torch.nn.Conv2d(c, 4, 3, padding=1)
        s.ctr = torch.nn.Conv2d(c, 1, 3, padding=1)
        s.classes = classes

    def forward(s, x):
        c2 = s.stem(x)
        c3 = s.l2(c2)
        c4 = s.l3(c3)
        c5 = s.l4(c4)
        p5 = s.lat[2](c5)
        p4 = s.lat[1](c4) + torch.nn.functional.interpolate(p5, scale_factor=2.0, mode="nearest")
        p3 = s.lat[0](c3) + torch.nn.functional.interpolate(p4, scale_factor=2.0, mode="nearest")
        logits, boxes, ctrs = [], [], []
        for p, sm in zip((p3, p4, p5), s.smooth):
            p = sm(p)
            t = s.cls_tower(p)
            b = s.box_tower(p)
            n = p.shape[0]
            logits.append(s.cls(t).permute(0, 2, 3, 1).reshape(n, -1, s.classes))
            boxes.append(torch.relu(s.box(b)).permute(0, 2, 3, 1).reshape(n, -1, 4))
            ctrs.append(s.ctr(b).permute(0, 2, 3, 1).reshape(n, -1, 1))
        return torch.cat(logits, 1), torch.cat(boxes, 1), torch.sigmoid(torch.cat(ctrs, 1))


class SpeechGruIf(torch.nn.Module):
    """A streaming keyword-spotter-like model: 40 filterbank features per frame, a GRU cell per
    frame in a Loop, and per frame an If: frames whose energy is below a threshold only decay the
    state (silence), the others run the cell. Scripted, so the Loop and If stay in the graph."""

    def __init__(s, feat: int = 40, hidden: int = 64, classes: int = 12):
        super().__init__()
        s.proj = torch.nn.Linear(feat, hidden)
        # a GRU cell written out (torch.onnx has no aten::gru_cell): gates r, z and candidate n
        s.wx = torch.nn.Linear(hidden, 3 * hidden)
        s.wh = torch.nn.Linear(hidden, 3 * hidden)
        s.out = torch.nn.Linear(hidden, classes)
        s.hidden = hidden

    def cell(s, x, h):
        gx = s.wx(x)
        gh = s.wh(h)
        n = s.hidden
        r = torch.sigmoid(gx[:, :n] + gh[:, :n])
        z = torch.sigmoid(gx[:, n:2 * n] + gh[:, n:2 * n])
        c = torch.tanh(gx[:, 2 * n:] + r * gh[:, 2 * n:])
        return (1 - z) * c + z * h

    def forward(s, x):
        # x: [1, T, 40]
        h = torch.zeros(x.shape[0], s.hidden)
        z = torch.relu(s.proj(x))
        for t in range(x.shape[1]):
            f = z[:, t]
            if bool(x[:, t].abs().mean() > 0.5):
                h = s.cell(f, h)
            else:
                h = h * 0.9
        return torch.log_softmax(s.out(h), -1)


class TransformerEncDec(torch.nn.Module):
    def __init__(s, vocab=8000, d=256, heads=4, layers=3):
        super().__init__()
        s.src_emb = torch.nn.Embedding(vocab, d)
        s.tgt_emb = torch.nn.Embedding(vocab, d)
        s.pos = torch.nn.Parameter(torch.randn(1, 128, d) * 0.02)
        s.tr = torch.nn.Transformer(d, heads, layers, layers, 4 * d, batch_first=True)
        s.out = torch.nn.Linear(d, vocab)

    def forward(s, src, tgt):
        n = tgt.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), 1)
        a = s.src_emb(src) + s.pos[:, : src.shape[1]]
        b = s.tgt_emb(tgt) + s.pos[:, :n]
        return s.out(s.tr(a, b, tgt_mask=mask))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    todo = sys.argv[2:] or ["densenet121", "shufflenet_v2", "convnext_small", "fcos_head",
                            "speech_gru_if", "transformer_encdec", "resnext50"]
    img = torch.randn(1, 3, 224, 224)
    for name in todo:
        torch.manual_seed(1)
        if name == "densenet121":
            export(out, name, tv.densenet121(), (img,))
        elif name == "shufflenet_v2":
            export(out, name, tv.shufflenet_v2_x1_0(), (img,))
        elif name == "convnext_small":
            export(out, name, ConvNeXtSmall(), (img,))
        elif name == "fcos_head":
            export(out, name, FcosHead(), (torch.randn(1, 3, 320, 320),))
        elif name == "speech_gru_if":
            export(out, name, SpeechGruIf(), (torch.randn(1, 50, 40),), ("features",), script=True)
        elif name == "transformer_encdec":
            src = torch.randint(0, 8000, (1, 64))
            tgt = torch.randint(0, 8000, (1, 32))
            export(out, name, TransformerEncDec(), (src, tgt), ("src", "tgt"))
        elif name == "resnext50":
            export(out, name, tv.resnext50_32x4d(), (img,))
        else:
            sys.exit("unknown model " + name)


if __name__ == "__main__":
    main()
