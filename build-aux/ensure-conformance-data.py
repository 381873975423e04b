#!/usr/bin/env python3
"""Makes sure the ONNX node conformance cases exist, then runs PROGRAM with OWB_ONNX_DATA set to
their node/ folder. meson runs the conformance test through it, so that a plain build does not
generate anything.

Where the data comes from, first match wins:
  1. $OWB_ONNX_DATA (a folder holding node/, or node/ itself), when set;
  2. /tmp/onnx-data, when it exists and $CI is not set (the developers' shared copy);
  3. BUILD/onnx-data, generated once by build-aux/gen-conformance.py in a venv BUILD/onnx-venv
     with the PINS from PyPI, and regenerated only when the pins or the generator change.

Usage: ensure-conformance-data.py --build-dir DIR --generator gen-conformance.py [--print | PROGRAM ARGS...]"""
import argparse
import fcntl
import hashlib
import os
import subprocess
import sys
import venv

ONNX_VERSION = "1.23.2"
# Every package the expected outputs come from, at a fixed version: ml_dtypes computes the casts to
# 4- and 2-bit integers, and its 0.7.0 (released under onnx 1.23.2) changed the expected outputs of
# Cast and CastLike from float to INT4, UINT4, INT2 and UINT2 for out-of-range inputs, which failed
# 24 cases on a fresh build that had passed with 0.6.0 the same morning.
PINS = {"onnx": ONNX_VERSION, "ml_dtypes": "0.6.0", "numpy": "2.4.6"}
DEVELOPER_DATA = "/tmp/onnx-data"


def node_dir(path):
    """path/node when it exists, path itself when it holds test_* cases, else None."""
    if os.path.isdir(os.path.join(path, "node")):
        return os.path.join(path, "node")
    if os.path.isdir(path) and any(n.startswith("test_") for n in os.listdir(path)):
        return path
    return None


def generate(build_dir, generator):
    data = os.path.join(build_dir, "onnx-data")
    marker = os.path.join(data, "generated-by.txt")
    with open(generator, "rb") as f:
        want = "".join(f"{name}=={version}\n" for name, version in PINS.items())
        want += f"{hashlib.sha256(f.read()).hexdigest()}\n"
    if os.path.isdir(os.path.join(data, "node")) and os.path.exists(marker):
        with open(marker) as f:
            if f.read() == want:
                return os.path.join(data, "node")

    env_dir = os.path.join(build_dir, "onnx-venv")
    python = os.path.join(env_dir, "bin", "python")
    if not os.path.exists(python):
        print(f"conformance data: creating a venv in {env_dir}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    pins = [f"{name}=={version}" for name, version in PINS.items()]
    have = subprocess.run([python, "-c", "import importlib.metadata as m, sys; "
                           "print(' '.join(f'{n}=={m.version(n)}' for n in sys.argv[1:]))", *PINS],
                          capture_output=True, text=True)
    if have.returncode != 0 or have.stdout.split() != pins:
        print(f"conformance data: pip install {' '.join(pins)}", flush=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *pins],
                       check=True)
    print(f"conformance data: generating the node cases into {data}", flush=True)
    os.makedirs(data, exist_ok=True)
    if os.path.exists(marker):
        os.unlink(marker)
    subprocess.run([python, generator, data], check=True)
    with open(marker, "w") as f:
        f.write(want)
    return os.path.join(data, "node")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--generator", required=True)
    parser.add_argument("--print", action="store_true", help="print the node/ folder instead of running a program")
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()

    given = os.environ.get("OWB_ONNX_DATA", "")
    if given:
        found = node_dir(given)
        if found is None:
            sys.exit(f"conformance data: OWB_ONNX_DATA={given} holds no node/ folder of test_* cases")
    elif not os.environ.get("CI") and node_dir(DEVELOPER_DATA) is not None:
        found = node_dir(DEVELOPER_DATA)
    else:
        # Two conformance tests (CPU, and the test device in front of it) may start at once: one
        # generates, the other waits for it.
        os.makedirs(args.build_dir, exist_ok=True)
        with open(os.path.join(args.build_dir, "onnx-data.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            found = generate(os.path.abspath(args.build_dir), os.path.abspath(args.generator))
    found = os.path.abspath(found)

    if args.print or not args.program:
        print(found)
        return
    print(f"conformance data: {found}", flush=True)
    os.environ["OWB_ONNX_DATA"] = found
    os.execv(args.program[0], args.program)


if __name__ == "__main__":
    main()
