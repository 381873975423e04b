"""Benchmarks owb's CUDA provider against ONNX Runtime's CUDA execution provider and PyTorch eager
(each where available) on a ResNet-50-sized CNN and a BERT-base-sized encoder, at batch 1 and 32.
A sibling of bench-vs-ort.py (CPU against CPU).

  python3 bench/bench-cuda.py [--owb build-cuda/app/owb] [--workdir DIR] [--batches 1,32]
                              [--rounds 2] [--warmup 5] [--iterations 20] [--quick]

The models are written into --workdir (seeded random weights, onnx + numpy needed): resnet50.onnx
(torchvision's ResNet-50 layout: bottlenecks 3-4-6-3, BatchNorm folded into the convolutions as
the exporter does, symbolic batch) and bert-base-bN.onnx (bench/make-bert-model.py, 12 layers,
hidden 768, sequence 128; its batch is fixed in the graph, one model per batch). --quick writes
small versions (for checking the script itself). Each measurement runs in a fresh process: `owb
bench --providers cuda,cpu --json`, this script's --ort-child (CUDAExecutionProvider, then CPU
as listed by ORT) and --torch-child (torchvision's resnet50 and an nn.TransformerEncoder of BERT-
base's sizes, random weights: same sizes, not the same graphs). Latency is the median per run,
inputs already on the host (owb and ORT copy them to the device in each run; PyTorch's eager
numbers include that copy too).

Without an NVIDIA GPU it says so and measures nothing (exit status 0): timings of the CPU
fallback would be mistaken for the GPU's. It is a program you run, not a test."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def gpu_present():
    """(True, name) when nvidia-smi lists a GPU, else (False, why)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False, "nvidia-smi not found"
    r = subprocess.run([smi, "-L"], capture_output=True, text=True)
    if r.returncode != 0 or "GPU" not in r.stdout:
        return False, (r.stderr or r.stdout or "nvidia-smi lists no GPU").strip().splitlines()[-1]
    return True, r.stdout.strip().splitlines()[0]


# ---- models ----

def make_resnet50(path, quick):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return f"{prefix}_{counter[0]}"

    def conv(x, cin, cout, k, stride=1, relu=True):
        w, b, y = name("w"), name("b"), name("conv")
        std = np.sqrt(2.0 / (cin * k * k))
        inits.append(numpy_helper.from_array((rng.standard_normal((cout, cin, k, k)) * std).astype(np.float32), w))
        inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.01).astype(np.float32), b))
        nodes.append(helper.make_node("Conv", [x, w, b], [y], kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4))
        if not relu:
            return y
        r = name("relu")
        nodes.append(helper.make_node("Relu", [y], [r]))
        return r

    width = 16 if quick else 64
    blocks = [1, 1, 1, 1] if quick else [3, 4, 6, 3]
    x = conv("input", 3, width, 7, 2)
    p = name("pool")
    nodes.append(helper.make_node("MaxPool", [x], [p], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = p, width
    for stage, n in enumerate(blocks):
        mid = width * 2 ** stage
        cout = mid * 4
        for i in range(n):
            stride = 2 if i == 0 and stage > 0 else 1
            y = conv(x, cin, mid, 1)
            y = conv(y, mid, mid, 3, stride)
            y = conv(y, mid, cout, 1, relu=False)
            short = conv(x, cin, cout, 1, stride, relu=False) if i == 0 else x
            s, r = name("add"), name("relu")
            nodes.append(helper.make_node("Add", [y, short], [s]))
            nodes.append(helper.make_node("Relu", [s], [r]))
            x, cin = r, cout
    g, f = name("gap"), name("flat")
    nodes.append(helper.make_node("GlobalAveragePool", [x], [g]))
    nodes.append(helper.make_node("Flatten", [g], [f], axis=1))
    inits.append(numpy_helper.from_array((rng.standard_normal((1000, cin)) * 0.01).astype(np.float32), "fc.w"))
    inits.append(numpy_helper.from_array(np.zeros(1000, np.float32), "fc.b"))
    nodes.append(helper.make_node("Gemm", [f, "fc.w", "fc.b"], ["logits"], transB=1))
    size = 64 if quick else 224
    graph = helper.make_graph(nodes, "resnet50", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                                                  ["batch", 3, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1000])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="bench-cuda")
    model.ir_version = 8
    onnx.save(model, path)


def make_bert(path, batch, quick):
    args = ["--batch", str(batch)]
    if quick:
        args += ["--layers", "2", "--hidden", "128", "--heads", "4", "--seq", "32", "--vocab", "1000"]
    subprocess.run([sys.executable, os.path.join(HERE, "make-bert-model.py"), path] + args, check=True,
                   capture_output=True)


def write_bert_inputs(model_path, out_dir):
    """input_K.pb for owb bench --input-dir: ids below the vocabulary, a full mask, token types 0."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model_path, load_external_data=False)
    vocab = next(t.dims[0] for t in m.graph.initializer if t.name == "embeddings.word_embeddings.weight")
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    for k, i in enumerate(m.graph.input):
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        if i.name == "input_ids":
            a = rng.integers(0, vocab, shape).astype(np.int64)
        elif i.name == "attention_mask":
            a = np.ones(shape, np.int64)
        else:
            a = np.zeros(shape, np.int64)
        with open(os.path.join(out_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, i.name).SerializeToString())


# ---- children: one measurement each, one JSON line ----

def feeds_for(sess, batch):
    import numpy as np
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else batch for d in i.shape]
        if "float" in i.type:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
        elif i.name == "input_ids":
            feeds[i.name] = rng.integers(0, 1000, shape).astype(np.int64)
        elif "mask" in i.name:
            feeds[i.name] = np.ones(shape, np.int64)
        else:
            feeds[i.name] = np.zeros(shape, np.int64)
    return feeds


def ort_child(model, batch, warmup, iterations):
    import onnxruntime as ort
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        print(json.dumps({"error": "this onnxruntime has no CUDAExecutionProvider"}))
        return
    t0 = time.perf_counter()
    sess = ort.InferenceSession(model, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    load_ms = (time.perf_counter() - t0) * 1e3
    feeds = feeds_for(sess, batch)
    for _ in range(warmup):
        sess.run(None, feeds)
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    print(json.dumps({"median_ms": statistics.median(times), "load_ms": load_ms}))


def torch_child(kind, batch, warmup, iterations, quick):
    import torch
    if not torch.cuda.is_available():
        print(json.dumps({"error": "this PyTorch sees no CUDA device"}))
        return
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if kind == "resnet50":
        import torchvision
        model = torchvision.models.resnet50().eval().to(dev)
        size = 64 if quick else 224
        x = torch.randn(batch, 3, size, size)
        run = lambda: model(x.to(dev))
    else:
        h, layers, seq = (128, 2, 32) if quick else (768, 12, 128)
        layer = torch.nn.TransformerEncoderLayer(h, h // 64 if not quick else 4, 4 * h, activation="gelu",
                                                 batch_first=True)
        model = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval().to(dev)
        x = torch.randn(batch, seq, h)
        run = lambda: model(x.to(dev))
    with torch.inference_mode():
        for _ in range(warmup):
            run()
        torch.cuda.synchronize()
        times = []
        for _ in range(iterations):
            t = time.perf_counter()
            y = run()
            y.cpu()
            times.append((time.perf_counter() - t) * 1e3)
    print(json.dumps({"median_ms": statistics.median(times), "load_ms": 0.0}))


def run_json(cmd, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    lines = [l for l in r.stdout.strip().splitlines() if l.startswith("{")]
    if r.returncode != 0 or not lines:
        raise RuntimeError(((r.stderr or r.stdout).strip().splitlines() or ["no output"])[-1])
    out = json.loads(lines[-1])
    if "error" in out:
        raise RuntimeError(out["error"])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--owb", default="build-cuda/app/owb")
    p.add_argument("--workdir", default="/tmp/owb-bench-cuda")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="small models, to check the script")
    p.add_argument("-O", dest="level", default="all",
                   help="owb optimization level (default all; its channels-last rewrite leaves the nodes CUDA "
                        "takes alone)")
    p.add_argument("--ort-child", nargs=2, metavar=("MODEL", "BATCH"), help=argparse.SUPPRESS)
    p.add_argument("--torch-child", nargs=2, metavar=("KIND", "BATCH"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.ort_child:
        return ort_child(a.ort_child[0], int(a.ort_child[1]), a.warmup, a.iterations)
    if a.torch_child:
        return torch_child(a.torch_child[0], int(a.torch_child[1]), a.warmup, a.iterations, a.quick)

    have, what = gpu_present()
    if not have:
        print(f"bench-cuda: no NVIDIA GPU on this machine ({what}): nothing measured. "
              "Run it where `nvidia-smi -L` lists a GPU, with a build configured -Dcuda=enabled.")
        return 0
    print(f"GPU: {what}")
    os.makedirs(a.workdir, exist_ok=True)
    batches = [int(b) for b in a.batches.split(",")]
    resnet = os.path.join(a.workdir, "resnet50.onnx")
    if not os.path.exists(resnet):
        make_resnet50(resnet, a.quick)
    jobs = [("resnet50", resnet, b, ["--dim", f"batch={b}"]) for b in batches]
    for b in batches:
        bert = os.path.join(a.workdir, f"bert-base-b{b}.onnx")
        if not os.path.exists(bert):
            make_bert(bert, b, a.quick)
        inputs = os.path.join(a.workdir, f"bert-base-b{b}-inputs")
        write_bert_inputs(bert, inputs)
        jobs.append(("bert-base", bert, b, ["--input-dir", inputs]))

    print(f"{'model':10} {'batch':>5} {'owb cuda ms':>12} {'ort cuda ms':>12} {'torch ms':>9} {'owb/ort':>8}"
          f" {'owb/torch':>9} {'owb on cuda':>12}")
    for kind, model, batch, owb_args in jobs:
        results = {"owb": [], "ort": [], "torch": []}
        errors = {}
        common = ["--warmup", str(a.warmup), "--iterations", str(a.iterations)]
        runners = {
            "owb": lambda: run_json([a.owb, "bench", model, "--providers", "cuda,cpu", "--json", "-n",
                                     str(a.iterations), "--warmup", str(a.warmup), "-O", a.level] + owb_args),
            "ort": lambda: run_json([sys.executable, __file__, "--ort-child", model, str(batch)] + common),
            "torch": lambda: run_json([sys.executable, __file__, "--torch-child", kind, str(batch)] + common
                                      + (["--quick"] if a.quick else [])),
        }
        for i in range(a.rounds):
            order = list(runners) if i % 2 == 0 else list(reversed(list(runners)))
            for who in order:
                if who in errors:
                    continue
                try:
                    results[who].append(runners[who]())
                except Exception as e:  # noqa: BLE001 - a missing engine is reported, not fatal
                    errors[who] = str(e)
        med = {k: statistics.median(r["median_ms"] for r in v) if v else None for k, v in results.items()}
        fmt = lambda v: f"{v:.2f}" if v is not None else "n/a"
        ratio = lambda x, y: f"{x / y:.2f}" if x is not None and y is not None else "n/a"
        # how much of the graph owb really ran on the GPU (the claim map)
        share = "?"
        try:
            info = json.loads(subprocess.run([a.owb, "inspect", "--providers", "cuda,cpu", "-O", a.level, "--json",
                                              model], capture_output=True, text=True, check=True).stdout)
            on = sum(1 for n in info["nodes"] if n["provider"] == "cuda")
            share = f"{on}/{len(info['nodes'])}"
        except Exception:  # noqa: BLE001
            pass
        print(f"{kind:10} {batch:5d} {fmt(med['owb']):>12} {fmt(med['ort']):>12} {fmt(med['torch']):>9}"
              f" {ratio(med['owb'], med['ort']):>8} {ratio(med['owb'], med['torch']):>9} {share:>12}")
        for who, e in errors.items():
            print(f"  {who}: {e}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
