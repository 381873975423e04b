#!/usr/bin/env python3
"""Lists the ops the CUDA provider's kernel tables claim (providers/cuda/kernels/*.c), by family,
as README.md's "What CUDA claims" shows them: python3 build-aux/list-cuda-ops.py [--markdown]."""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def families():
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "providers", "cuda", "kernels", "*.c"))):
        text = open(path).read()
        table = text[text.index("const OwbKernelDef _owb_cuda_kernels"):]
        ops = []
        for m in re.finditer(r'(?:\{|UNARY \(|BINARY \(|REDUCE \()\s*"(\w+)"(?:,\s*(OWB_DOMAIN|""))?', table):
            name = ("workbench." if m.group(2) == "OWB_DOMAIN" else "") + m.group(1)
            if name not in ops:
                ops.append(name)
        out[os.path.splitext(os.path.basename(path))[0]] = ops
    return out


def main():
    fams = families()
    for fam, ops in fams.items():
        if "--markdown" in sys.argv:
            print(f"| {fam} | {', '.join(ops)} |")
        else:
            print(f"{fam}: {' '.join(ops)}")
    print(f"{sum(len(v) for v in fams.values())} ops", file=sys.stderr)


if __name__ == "__main__":
    main()
