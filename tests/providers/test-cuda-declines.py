#!/usr/bin/env python3
"""test-cuda-declines.py OWB MODEL...: `owb inspect --providers cuda,cpu --json` explains CUDA's
part of the claim map. Without a GPU every node runs on the CPU and carries CUDA's decline,
"no CUDA device (...)"; with one, every node CUDA left to the CPU says why. Outputs stay the
CPU's either way (inspect runs no model). A module that cannot be loaded (OWB_CUDA_MODULE naming
none) leaves a provider whose every decline says so. Also checks /work/models/resnet18.onnx when it exists
(OWB_TEST_MODELS names another folder)."""
import json
import os
import subprocess
import sys


def inspect(owb, model, env=None):
    out = subprocess.run([owb, "inspect", "--providers", "cuda,cpu", "--json", model], env=env,
                         check=True, capture_output=True, text=True, timeout=300).stdout
    return json.loads(out)


def check_unloadable(owb, model):
    """A module that cannot be loaded leaves a provider that says so for every node."""
    env = dict(os.environ, OWB_CUDA_MODULE="/nonexistent/libowb-cuda.so")
    nodes = inspect(owb, model, env)["nodes"]
    for n in nodes:
        reasons = [d["reason"] for d in n.get("declines", []) if d["provider"] == "cuda"]
        assert n["provider"] == "cpu" and reasons, f"{n['name']}: {n['provider']} {reasons}"
        assert "the CUDA provider module cannot be loaded" in reasons[0] and "/nonexistent/" in reasons[0], reasons[0]
    print(f"{model} without the module: {reasons[0]}")


def check(owb, model):
    info = inspect(owb, model)
    nodes = info["nodes"]
    assert nodes, f"{model}: no nodes"
    on_cuda = [n for n in nodes if n["provider"] == "cuda"]
    for n in nodes:
        reasons = [d["reason"] for d in n.get("declines", []) if d["provider"] == "cuda"]
        if n["provider"] == "cuda":
            continue
        assert reasons, f"{model}: node {n['name']} ({n['op_type']}) on {n['provider']} without a CUDA reason"
        if not on_cuda:
            # no device: the reason says so, and whether this build has a kernel for the op
            assert reasons[0].startswith("no CUDA device"), f"{n['name']}: {reasons[0]}"
            assert n["op_type"] in reasons[0], f"{n['name']}: {reasons[0]}"
    print(f"{model}: {len(nodes)} nodes, {len(on_cuda)} on cuda, e.g. {nodes[0]['op_type']}: "
          f"{[d['reason'] for d in nodes[0].get('declines', [])]}")


def main():
    owb, models = sys.argv[1], sys.argv[2:]
    extra = os.path.join(os.environ.get("OWB_TEST_MODELS", "/work/models"), "resnet18.onnx")
    if os.path.exists(extra):
        models.append(extra)
    for m in models:
        check(owb, m)
    check_unloadable(owb, models[0])


if __name__ == "__main__":
    main()
