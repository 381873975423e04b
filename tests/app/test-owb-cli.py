#!/usr/bin/env python3
"""test-owb-cli.py: runs the owb command line on the bundled sample model and checks exit codes
and output: inspect, run, check, bench, profile, ops, bad usage and bad files.

Usage: test-owb-cli.py OWB MODEL INPUT_PB EXPECTED_OUTPUT_PB (standard library only)."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import owb_cli_test  # noqa: E402

OWB, MODEL, INPUT, EXPECTED = sys.argv[1:5]
TMP = tempfile.mkdtemp(prefix="owb-cli-test-")
owb = owb_cli_test.runner(OWB)
test = owb_cli_test.test
one_error_line = owb_cli_test.one_error_line


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def tensor_pb(name, dims, floats):
    """A float32 TensorProto: dims (1), data_type (2), name (8), raw_data (9)."""
    msg = b"".join(b"\x08" + varint(d) for d in dims)
    msg += b"\x10" + varint(1)
    raw = struct.pack(f"<{len(floats)}f", *floats)
    msg += b"\x42" + varint(len(name)) + name.encode()
    msg += b"\x4a" + varint(len(raw)) + raw
    return msg


def npy(dims, floats):
    shape = "(%s,)" % dims[0] if len(dims) == 1 else "(%s)" % ", ".join(str(d) for d in dims)
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + \
        struct.pack(f"<{len(floats)}f", *floats)


def make_case(name, expected_bytes=None, with_data=True):
    d = os.path.join(TMP, "cases", name)
    os.makedirs(d)
    shutil.copy(MODEL, os.path.join(d, "model.onnx"))
    if with_data:
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds)
        shutil.copy(INPUT, os.path.join(ds, "input_0.pb"))
        if expected_bytes is None:
            shutil.copy(EXPECTED, os.path.join(ds, "output_0.pb"))
        else:
            with open(os.path.join(ds, "output_0.pb"), "wb") as f:
                f.write(expected_bytes)
    return d


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


@test
def version_and_help():
    _, out, _ = owb("--version", code=0)
    assert out.startswith("owb "), out
    _, out, _ = owb("--help", code=0)
    for cmd in ("inspect", "run", "check", "bench"):
        assert cmd in out, out
    _, out, _ = owb("run", "--help", code=0)
    assert "--input-dir" in out and "--output-dir" in out, out


@test
def bad_usage_exits_2():
    _, _, err = owb(code=2)
    _, _, err = owb("frobnicate", code=2)
    one_error_line(err, "frobnicate")
    _, _, err = owb("run", code=2)
    one_error_line(err, "MODEL")
    _, _, err = owb("run", MODEL, "--no-such-option", code=2)
    one_error_line(err, "--no-such-option")
    _, _, err = owb("run", MODEL, "-O", "turbo", "--input", f"image={INPUT}", code=2)
    one_error_line(err, "turbo")
    _, _, err = owb("run", MODEL, "--providers", "nosuchprovider", "--input", f"image={INPUT}", code=2)
    one_error_line(err, "nosuchprovider")
    _, _, err = owb("run", MODEL, "--input", "nosuchinput=" + INPUT, code=2)
    one_error_line(err, "nosuchinput")
    _, _, err = owb("check", code=2)
    _, _, err = owb("check", "--rtol", "-1", TMP, code=2)
    _, _, err = owb("bench", MODEL, "--iterations", "0", code=2)
    _, _, err = owb("inspect", MODEL, "extra-argument", code=2)


@test
def bad_model_file_exits_1_with_one_line():
    garbage = write("garbage.onnx", b"\x0a\xff\xff\xff\xff\x0f this is not a model" * 10)
    for cmd in ("inspect", "run", "bench"):
        _, _, err = owb(cmd, garbage, code=1)
        one_error_line(err, "garbage.onnx")
    _, _, err = owb("inspect", os.path.join(TMP, "missing.onnx"), code=1)
    one_error_line(err, "missing.onnx")
    empty = write("empty.onnx", b"")
    _, _, err = owb("run", empty, "--random", code=1)
    one_error_line(err, "empty.onnx")


@test
def inspect_text():
    _, out, _ = owb("inspect", MODEL, code=0)
    for s in ("IR version", "8", "onnx-workbench", "ai.onnx 13", "image", "batch", "32,32", "probs",
              "Conv", "BatchNormalization", "Softmax", "made_by", "cpu"):
        assert s in out, f"{s!r} missing from:\n{out}"


@test
def inspect_json():
    _, out, _ = owb("inspect", MODEL, "--json", code=0)
    info = json.loads(out)
    assert info["ir_version"] == 8, info
    assert info["producer_name"] == "onnx-workbench", info
    assert {"domain": "", "version": 13} in info["opsets"], info["opsets"]
    assert info["metadata"]["made_by"] == "build-aux/make-sample-model.py", info["metadata"]
    assert [i["name"] for i in info["inputs"]] == ["image"], info["inputs"]
    assert info["inputs"][0]["type"]["shape"] == ["batch", 3, 32, 32], info["inputs"][0]
    assert info["outputs"][0]["type"]["shape"] == ["batch", 10], info["outputs"][0]
    assert info["op_counts"]["Conv"] == 2 and info["op_counts"]["Relu"] == 2, info["op_counts"]
    assert info["n_nodes"] == 10, info["n_nodes"]
    assert info["session_error"] is None, info["session_error"]
    assert len(info["nodes"]) == 10 and all(n["provider"] == "cpu" for n in info["nodes"]), info["nodes"]
    assert info["initializers"]["count"] == 10, info["initializers"]


@test
def inspect_shapes():
    _, out, _ = owb("inspect", MODEL, "--shapes", "--json", code=0)
    info = json.loads(out)
    shapes = {v["name"]: v["type"]["shape"] for v in info["value_infos"] if v["type"]}
    assert shapes.get("conv1.out") == ["batch", 8, 32, 32], shapes
    assert shapes.get("pool1.out") == ["batch", 8, 16, 16], shapes
    assert shapes.get("flatten.out") == ["batch", 16], shapes
    _, out, _ = owb("inspect", MODEL, "--shapes", code=0)
    assert "gap.out" in out and "16,1,1" in out, out


@test
def run_prints_outputs():
    _, out, _ = owb("run", MODEL, "--input", f"image={INPUT}", code=0)
    assert "probs" in out and "1,10" in out, out
    assert "min" in out and "max" in out, out


@test
def run_twice_gives_identical_outputs():
    a, b = os.path.join(TMP, "run-a"), os.path.join(TMP, "run-b")
    owb("run", MODEL, "--input", f"image={INPUT}", "--output-dir", a, code=0)
    owb("run", MODEL, "--input", f"image={INPUT}", "--output-dir", b, "--threads", "2", code=0)
    with open(os.path.join(a, "output_0.pb"), "rb") as f, open(os.path.join(b, "output_0.pb"), "rb") as g:
        x, y = f.read(), g.read()
    assert x == y and len(x) > 40, "two runs wrote different outputs"
    assert b"probs" in x, "output_0.pb is not named after the output"


@test
def run_input_dir_and_npy():
    d = os.path.join(TMP, "inputs")
    os.makedirs(d)
    shutil.copy(INPUT, os.path.join(d, "input_0.pb"))
    owb("run", MODEL, "--input-dir", d, "--output-dir", os.path.join(TMP, "run-dir"), code=0)
    floats = [((i * 37) % 101) / 101.0 for i in range(3 * 32 * 32)]
    pb = write("same.pb", tensor_pb("image", [1, 3, 32, 32], floats))
    np_file = write("same.npy", npy([1, 3, 32, 32], floats))
    owb("run", MODEL, "--input", f"image={pb}", "--output-dir", os.path.join(TMP, "run-pb"), code=0)
    owb("run", MODEL, "--input", f"image={np_file}", "--output-dir", os.path.join(TMP, "run-npy"), code=0)
    with open(os.path.join(TMP, "run-pb", "output_0.pb"), "rb") as f, \
            open(os.path.join(TMP, "run-npy", "output_0.pb"), "rb") as g:
        assert f.read() == g.read(), ".npy and .pb inputs gave different outputs"


@test
def run_missing_input_needs_random():
    _, _, err = owb("run", MODEL, code=2)
    one_error_line(err, "image", "--random")
    _, out, _ = owb("run", MODEL, "--random", code=0)
    assert "1,10" in out, out
    _, out, _ = owb("run", MODEL, "--random", "--dim", "batch=3", code=0)
    assert "3,10" in out, out
    _, _, err = owb("run", MODEL, "--random", "--dim", "batch", code=2)
    bad = write("bad-input.pb", tensor_pb("image", [1, 3, 32], [0.0] * 96))
    _, _, err = owb("run", MODEL, "--input", f"image={bad}", code=1)
    one_error_line(err)


@test
def check_passes_on_the_expected_output():
    d = make_case("tiny_cnn_ok")
    _, out, _ = owb("check", d, code=0)
    lines = out.splitlines()
    assert lines == ["PASS tiny_cnn_ok", "1 passed, 0 failed, 0 skipped"], lines


@test
def check_fails_on_a_wrong_expected_output():
    d = make_case("tiny_cnn_wrong", tensor_pb("probs", [1, 10], [0.1] * 10))
    _, out, _ = owb("check", d, code=1)
    lines = out.splitlines()
    assert lines[-1] == "0 passed, 1 failed, 0 skipped", lines
    assert lines[0].startswith("FAIL tiny_cnn_wrong: "), lines
    assert "index" in lines[0] and "expected 0.1" in lines[0] and "got" in lines[0], lines[0]

    d = make_case("tiny_cnn_shape", tensor_pb("probs", [10], [0.1] * 10))
    _, out, _ = owb("check", d, code=1)
    assert "shape" in out.splitlines()[0], out

    d = make_case("tiny_cnn_loose", tensor_pb("probs", [1, 10], [0.1] * 10))
    owb("check", d, "--atol", "1", code=0)


@test
def check_skips_and_counts():
    make_case("tiny_cnn_nodata", with_data=False)
    skip = write("skip.txt", b"# comment\ntiny_cnn_wrong   known to be wrong on purpose\n"
                             b"tiny_cnn_sha*\tshape mismatch on purpose\n"
                             b"tiny_cnn_loose  rtol=0 atol=1  loose on purpose\n")
    _, out, _ = owb("check", "--skip-file", skip, os.path.join(TMP, "cases"), code=0)
    lines = out.splitlines()
    assert "SKIP tiny_cnn_wrong: known to be wrong on purpose" in lines, lines
    assert "SKIP tiny_cnn_shape: shape mismatch on purpose" in lines, lines
    assert "PASS tiny_cnn_loose" in lines, lines
    assert any(line.startswith("SKIP tiny_cnn_nodata: ") for line in lines), lines
    assert lines[-1] == "2 passed, 0 failed, 3 skipped", lines
    no_reason = write("skip-bad.txt", b"tiny_cnn_wrong\n")
    _, _, err = owb("check", "--skip-file", no_reason, os.path.join(TMP, "cases"), code=2)
    one_error_line(err, "reason")
    _, out, _ = owb("check", os.path.join(TMP, "cases", "does_not_exist"), code=1)
    assert out.splitlines()[0].startswith("FAIL does_not_exist: "), out


@test
def bench_json():
    _, out, _ = owb("bench", MODEL, "--json", "--iterations", "3", "--warmup", "1", "--threads", "1", code=0)
    info = json.loads(out)
    for key in ("median_ms", "min_ms", "mean_ms", "load_ms", "peak_rss_mb"):
        assert isinstance(info[key], (int, float)) and info[key] >= 0, (key, info)
    assert info["min_ms"] <= info["median_ms"], info
    assert info["iterations"] == 3 and info["threads"] == 1, info
    assert info["optimize"] == "all", info  # the default, as ONNX Runtime's
    assert info["peak_rss_mb"] > 1, info
    _, out, _ = owb("bench", MODEL, "--iterations", "2", "--warmup", "0", "--dim", "batch=2", code=0)
    assert "median" in out, out


@test
def profile_tables():
    _, out, _ = owb("profile", MODEL, "--iterations", "3", "--warmup", "1", "--threads", "1", "--top", "4",
                    "-O", "disabled", code=0)
    lines = out.splitlines()
    assert any(line.startswith("Conv ") for line in lines), out
    top = lines.index(next(line for line in lines if line.startswith("Top 4 nodes")))
    assert "median" in lines[top + 1] and "min" in lines[top + 1], out
    assert len(lines) >= top + 2 + 4 and "cpu" in lines[top + 2] and "float32[" in lines[top + 2], out
    _, out, _ = owb("profile", MODEL, "--json", "--iterations", "3", "--warmup", "0", "--threads", "1", "-O", "all",
                    code=0)
    info = json.loads(out)
    assert info["iterations"] == 3 and info["optimize"] == "all", info
    assert info["ops"] and all(o["calls"] >= 1 and o["total_ms"] >= 0 for o in info["ops"]), info
    assert abs(sum(o["percent"] for o in info["ops"]) - 100) < 0.5, info["ops"]
    assert len(info["nodes"]) <= 20 and info["nodes"][0]["provider"] == "cpu", info["nodes"]
    assert all(n["output_shape"].startswith("float32[") for n in info["nodes"]), info["nodes"]
    # per-node median and minimum over the 3 runs: min <= median <= the largest run (3 x mean bounds it)
    assert all(0 <= n["min_ms"] <= n["median_ms"] <= 3 * n["ms"] + 1e-6 for n in info["nodes"]), info["nodes"]
    # with every node listed, the node percentages add up too
    _, out, _ = owb("profile", MODEL, "--json", "--iterations", "2", "--top", "1000", code=0)
    nodes = json.loads(out)["nodes"]
    assert abs(sum(n["percent"] for n in nodes) - 100) < 0.5, out
    # "order" numbers the nodes as they ran: each once, from 0
    assert sorted(n["order"] for n in nodes) == list(range(len(nodes))), nodes
    _, _, err = owb("profile", MODEL, "--iterations", "0", code=2)
    one_error_line(err, "iterations")
    _, _, err = owb("profile", os.path.join(TMP, "missing.onnx"), code=1)
    one_error_line(err, "missing.onnx")


@test
def optimize_refuses_to_overwrite_the_input():
    copy = os.path.join(TMP, "copy.onnx")
    shutil.copy(MODEL, copy)
    before = open(copy, "rb").read()
    _, _, err = owb("optimize", copy, "-O", "basic", "-o", copy, code=2)
    one_error_line(err, "overwrite")
    assert open(copy, "rb").read() == before


def external_data_model(name):
    """The sample model re-saved in its own folder with its weights in model.bin."""
    d = os.path.join(TMP, name)
    os.makedirs(d)
    model = os.path.join(d, "model.onnx")
    owb("optimize", MODEL, "-O", "disabled", "-o", model, "--external-data", "model.bin", code=0)
    assert os.path.getsize(os.path.join(d, "model.bin")) > 0
    return d, model


def snapshot(folder):
    return {f: open(os.path.join(folder, f), "rb").read() for f in sorted(os.listdir(folder))
            if os.path.isfile(os.path.join(folder, f))}


@test
def optimize_checks_outputs_by_identity():
    d, model = external_data_model("identity")
    before = snapshot(d)
    other = os.path.join(TMP, "identity-other")
    os.makedirs(other)
    os.symlink(d, os.path.join(other, "back"))
    cases = [
        # -o through a symlinked folder that leads back to the input's folder
        (["-o", os.path.join(other, "back", "model.onnx")], "overwrite the input"),
        # --report-json naming the input
        (["-o", os.path.join(other, "a.onnx"), "--report-json", model], "overwrite the input"),
        # --report-json equal to -o (by another spelling)
        (["-o", os.path.join(other, "b.onnx"), "--report-json", os.path.join(other, "back", "..", "identity-other",
                                                                          "b.onnx")], "same file"),
        # --external-data naming the input's own file name
        (["-o", os.path.join(d, "out.onnx"), "--external-data", "model.onnx"], "overwrite the input"),
        # --external-data naming the input's own data file
        (["-o", os.path.join(d, "out.onnx"), "--external-data", "model.bin"], "external data file of the input"),
        # -o on the input's data file, and through a hard link to the input
        (["-o", os.path.join(d, "model.bin")], "external data file of the input"),
        (["-o", os.path.join(other, "back", "model.bin")], "external data file of the input"),
    ]
    os.link(model, os.path.join(other, "hard.onnx"))
    cases.append((["-o", os.path.join(other, "hard.onnx")], "overwrite the input"))
    for args, message in cases:
        _, _, err = owb("optimize", model, "-O", "basic", *args, code=2)
        one_error_line(err, message)
        assert snapshot(d) == before, f"{args} changed the input folder"
    # the input still loads and computes what it did
    owb("run", model, "--input", f"image={INPUT}", "--output-dir", os.path.join(TMP, "identity-run"), code=0)
    # distinct files are still fine, -o through the link included
    owb("optimize", model, "-O", "basic", "-o", os.path.join(other, "back", "new.onnx"), "--external-data",
        "new.bin", "--report-json", os.path.join(other, "new.json"), code=0)
    assert {k: v for k, v in snapshot(d).items() if k in before} == before


@test
def optimize_leaves_no_temporary_files():
    # once with O_TMPFILE (where the filesystem has it), once with named temporaries
    leaves_no_temporary_files("temporaries")
    os.environ["OWB_ATOMIC_NAMED_TEMPORARIES"] = "1"
    try:
        leaves_no_temporary_files("temporaries-named")
    finally:
        del os.environ["OWB_ATOMIC_NAMED_TEMPORARIES"]


def leaves_no_temporary_files(name):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    out = os.path.join(d, "out.onnx")
    # what a writer killed with SIGKILL left behind, and one an unrelated live writer holds
    for stale in ("out.onnx.tmp-abc123", "out.bin.tmp-XyZ789", "out.report.json.tmp-000000"):
        with open(os.path.join(d, stale), "wb") as f:
            f.write(b"\0" * 4096)
    keep = os.path.join(d, "unrelated.onnx.tmp-abc123")
    open(keep, "wb").close()
    import fcntl
    live = os.path.join(d, "out.onnx.tmp-live00")
    holder = open(live, "wb")
    fcntl.flock(holder, fcntl.LOCK_EX)
    owb("optimize", MODEL, "-O", "basic", "-o", out, "--external-data", "out.bin", "--report", code=0)
    left = sorted(os.listdir(d))
    assert left == sorted(["out.onnx", "out.bin", "out.report.json", "out.onnx.tmp-live00",
                           "unrelated.onnx.tmp-abc123"]), left
    holder.close()
    # kill -9 at random moments, then one more run: nothing of ours stays
    import random
    import signal
    import time
    rng = random.Random(21)
    for _ in range(12):
        p = subprocess.Popen([OWB, "optimize", MODEL, "-O", "extended", "-o", out, "--external-data", "out.bin",
                              "--report"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.05))
        p.send_signal(signal.SIGKILL)
        p.wait()
    p = subprocess.Popen([OWB, "optimize", MODEL, "-O", "extended", "-o", out], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    p.wait()
    owb("optimize", MODEL, "-O", "basic", "-o", out, "--external-data", "out.bin", "--report", code=0)
    left = [f for f in os.listdir(d) if ".tmp-" in f and not f.startswith("unrelated")]
    assert left == [], left
    assert os.path.exists(keep)


@test
def optimize_keeps_outputs_and_writes_a_report():
    for level in ("disabled", "basic", "extended"):
        out = os.path.join(TMP, f"opt-{level}.onnx")
        _, text, _ = owb("optimize", MODEL, "-O", level, "-o", out, "--report", code=0)
        assert f"level {level}:" in text, text
        report = json.load(open(os.path.join(TMP, f"opt-{level}.report.json")))
        assert report["level"] == level and report["nodes_after"] <= report["nodes_before"], report
        base, opt = os.path.join(TMP, f"base-{level}"), os.path.join(TMP, f"optout-{level}")
        owb("run", MODEL, "--input", f"image={INPUT}", "--output-dir", base, code=0)
        owb("run", out, "--input", f"image={INPUT}", "--output-dir", opt, code=0)
        a = open(os.path.join(base, "output_0.pb"), "rb").read()
        b = open(os.path.join(opt, "output_0.pb"), "rb").read()
        if level == "disabled":
            assert a == b, "an unoptimized re-save must give identical outputs"
    _, _, err = owb("optimize", MODEL, "--disable", "no_such_pass", "-o", os.path.join(TMP, "x.onnx"), code=2)
    one_error_line(err, "no_such_pass")


@test
def ops_lists_the_sample_ops():
    _, out, _ = owb("ops", "--json", code=0)
    info = json.loads(out)
    names = {o["op_type"] for o in info["ops"] if o["domain"] == ""}
    for op in ("Conv", "BatchNormalization", "Relu", "MaxPool", "GlobalAveragePool", "Flatten", "Gemm",
               "Softmax"):
        assert op in names, op
    assert "cpu" in info["providers"], info["providers"]


if __name__ == "__main__":
    sys.exit(owb_cli_test.main(cleanup=TMP))
