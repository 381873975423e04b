#!/usr/bin/env python3
"""test-cuda-declines.py OWB MODEL...: `owb inspect --providers cuda,cpu --json` explains CUDA's
part of the claim map. Without a GPU every node runs on the CPU and carries CUDA's decline,
"no CUDA device (...)"; with one, every node CUDA left to the CPU says why. Outputs stay the
CPU's either way (inspect runs no model). Also checks /work/models/resnet18.onnx when it exists
(OWB_TEST_MODELS names another folder)."""
import json
import os
import subprocess
import sys


def check(owb, model):
    out = subprocess.run([owb, "inspect", "--providers", "cuda,cpu", "--json", model],
                         check=True, capture_output=True, text=True, timeout=300).stdout
    info = json.loads(out)
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


if __name__ == "__main__":
    main()
