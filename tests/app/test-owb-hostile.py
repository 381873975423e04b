#!/usr/bin/env python3
"""test-owb-hostile.py: hostile models (type confusion, attributes past 32 bits, function expansion
that never ends, endless Loops, terminal escapes in names, FIFOs, files that shrink) replayed
against `owb inspect --shapes` and `owb run --random`: each must end with exit 1 and one error
line, never a signal, an abort or a hang.

Usage: test-owb-hostile.py OWB (standard library only). The models are written by hand below with
a small protobuf encoder, so that the test needs no onnx package."""
import os
import struct
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import owb_cli_test  # noqa: E402

OWB = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="owb-hostile-test-")
test = owb_cli_test.test

# ---- protobuf encoding (onnx.proto field numbers) ----


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def vi(field, n):
    return varint(field << 3) + varint(n)


def ld(field, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint((field << 3) | 2) + varint(len(payload)) + payload


def tensor_type(elem_type, dims):
    shape = b"".join(ld(1, vi(1, d) if isinstance(d, int) else ld(2, d)) for d in dims)
    return ld(1, vi(1, elem_type) + ld(2, shape))  # TypeProto.tensor_type


def value_info(name, type_proto=None):
    return ld(1, name) + (ld(2, type_proto) if type_proto is not None else b"")


def attr_int(name, value):
    return ld(1, name) + vi(20, 2) + vi(3, value)  # type INT, i


def attr_ints(name, values):
    return ld(1, name) + vi(20, 7) + b"".join(vi(8, v) for v in values)  # type INTS, ints


def attr_graph(name, graph):
    return ld(1, name) + vi(20, 5) + ld(6, graph)  # type GRAPH, g


def attr_tensor(name, tensor):
    return ld(1, name) + vi(20, 4) + ld(5, tensor)


def node(op, inputs, outputs, name="", attrs=(), domain=""):
    out = b"".join(ld(1, i) for i in inputs) + b"".join(ld(2, o) for o in outputs)
    out += ld(3, name) + ld(4, op)
    out += b"".join(ld(5, a) for a in attrs)
    if domain:
        out += ld(7, domain)
    return out


def graph(nodes, inputs, outputs, name="g", initializers=()):
    out = b"".join(ld(1, n) for n in nodes) + ld(2, name)
    out += b"".join(ld(5, t) for t in initializers)
    out += b"".join(ld(11, i) for i in inputs) + b"".join(ld(12, o) for o in outputs)
    return out


def opset(version, domain=""):
    return (ld(1, domain) if domain else b"") + vi(2, version)


def function(name, domain, inputs, outputs, nodes, opsets):
    out = ld(1, name) + b"".join(ld(4, i) for i in inputs) + b"".join(ld(5, o) for o in outputs)
    out += b"".join(ld(7, n) for n in nodes) + b"".join(ld(9, o) for o in opsets) + ld(10, domain)
    return out


def model(g, version=17, functions=(), extra_opsets=()):
    out = vi(1, 8) + ld(8, opset(version)) + b"".join(ld(8, o) for o in extra_opsets)
    out += ld(7, g) + b"".join(ld(25, f) for f in functions)
    return out


def int64_tensor(name, values, dims=None):
    out = b"".join(vi(1, d) for d in (dims if dims is not None else [len(values)])) + vi(2, 7)
    out += ld(7, b"".join(varint(v) for v in values)) + ld(8, name)
    return out


FLOAT, BOOL, INT64 = 1, 9, 7

# ---- running owb ----


def owb(*args, timeout=60, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([OWB, *args], capture_output=True, timeout=timeout, env=e)
    return p.returncode, p.stdout, p.stderr


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def fails_cleanly(args, *must_contain, timeout=60, env=None):
    """exit 1, stderr one line "owb: ..." with the given words, no signal; returns the line."""
    code, out, err = owb(*args, timeout=timeout, env=env)
    assert code >= 0, f"owb {args} died of signal {-code}"
    assert code == 1, f"owb {args}: exit {code}, stderr {err[-2000:]!r}"
    lines = err.decode("utf-8", "replace").splitlines()
    assert len(lines) == 1 and lines[0].startswith("owb: "), lines
    for s in must_contain:
        assert s in lines[0], f"{s!r} not in {lines[0]!r}"
    assert b"\x1b" not in err and b"\x1b" not in out, "an escape reached the terminal"
    return lines[0]


def x_input(name="x", dims=(2, 3)):
    return value_info(name, tensor_type(FLOAT, list(dims)))


def any_output(name="y"):
    return value_info(name)


@test
def tensor_ops_fed_a_sequence():
    for op, n in [("Relu", 1), ("Cast", 1), ("Neg", 1), ("Sigmoid", 1), ("Softmax", 1), ("Add", 2),
                  ("MatMul", 2), ("ReduceSum", 1), ("Reshape", 2), ("Transpose", 1), ("Concat", 2),
                  ("Shape", 1), ("Identity", 1)]:
        attrs = [attr_int("to", 7)] if op == "Cast" else [attr_int("axis", 0)] if op == "Concat" else []
        g = graph([node("SequenceConstruct", ["x"], ["seq"], "make"),
                   node(op, ["seq"] * n, ["y"], "victim", attrs),
                   node("Identity", ["y"], ["z"], "after")] if op == "Identity" else
                  [node("SequenceConstruct", ["x"], ["seq"], "make"),
                   node(op, ["seq"] * n, ["y"], "victim", attrs)],
                  [x_input()], [any_output("z" if op == "Identity" else "y")])
        path = write(f"seq-{op}.onnx", model(g))
        if op == "Identity":
            # Identity takes sequences: a sequence output is fine
            code, _, err = owb("run", path, "--random")
            assert code in (0, 1) and code >= 0, err
            continue
        line = fails_cleanly(["run", path, "--random"], "victim", "sequence")
        assert "was not allocated" not in line, line
        fails_cleanly(["inspect", path, "--shapes"], "victim", "sequence")


@test
def scan_num_scan_inputs_past_32_bits():
    body = graph([node("Add", ["s_in", "x_in"], ["s_out"], "acc"), node("Identity", ["s_out"], ["y_out"], "keep")],
                 [value_info("s_in", tensor_type(FLOAT, [2])), value_info("x_in", tensor_type(FLOAT, [2]))],
                 [value_info("s_out", tensor_type(FLOAT, [2])), value_info("y_out", tensor_type(FLOAT, [2]))],
                 "body")
    for value in (1 << 32, (1 << 32) + 1, 1 << 33, -(1 << 32) + 1):
        g = graph([node("Scan", ["s", "x"], ["s_final", "ys"], "scan",
                        [attr_graph("body", body), attr_int("num_scan_inputs", value)])],
                  [value_info("s", tensor_type(FLOAT, [2])), value_info("x", tensor_type(FLOAT, [3, 2]))],
                  [value_info("s_final"), value_info("ys")])
        path = write(f"scan-{value}.onnx", model(g, 16))
        fails_cleanly(["inspect", path, "--shapes"], "num_scan_inputs")
        fails_cleanly(["run", path, "--random"], "num_scan_inputs")


@test
def function_expansion_has_a_budget():
    # f0 calls f1 twice, ... f29 is one Relu: 2^30 nodes if expanded
    funcs = []
    depth = 30
    for i in range(depth):
        if i == depth - 1:
            nodes = [node("Relu", ["a"], ["b"], "leaf")]
        else:
            nodes = [node(f"f{i + 1}", ["a"], ["t"], "first", domain="local"),
                     node(f"f{i + 1}", ["t"], ["b"], "second", domain="local")]
        funcs.append(function(f"f{i}", "local", ["a"], ["b"], nodes, [opset(17), opset(1, "local")]))
    g = graph([node("f0", ["x"], ["y"], "call", domain="local")], [x_input()], [any_output()])
    path = write("expansion.onnx", model(g, 17, funcs, [opset(1, "local")]))
    start = time.monotonic()
    line = fails_cleanly(["inspect", path, "--shapes"], "function", "nodes")
    assert time.monotonic() - start < 30, "the expansion ran before the budget stopped it"
    assert len(line) < 1200, len(line)
    # a function that calls itself: a short line, not one prefix per level
    rec = function("self", "local", ["a"], ["b"], [node("self", ["a"], ["b"], "again", domain="local")],
                   [opset(17), opset(1, "local")])
    g = graph([node("self", ["x"], ["y"], "call", domain="local")], [x_input()], [any_output()])
    path = write("recursive.onnx", model(g, 17, [rec], [opset(1, "local")]))
    line = fails_cleanly(["run", path, "--random"], "recursive")
    assert len(line) < 1200, len(line)


def endless_loop(accumulate):
    """Loop without M whose body's condition stays true; with accumulate, it piles up 1 MB scan outputs."""
    big = graph([node("Identity", ["cond_in"], ["cond_out"], "keep_going"),
                 node("Identity", ["v_in"], ["v_out"], "carry")] +
                ([node("ConstantOfShape", ["shape"], ["chunk"], "chunk")] if accumulate else []),
                [value_info("i", tensor_type(INT64, [])), value_info("cond_in", tensor_type(BOOL, [])),
                 value_info("v_in", tensor_type(FLOAT, [2, 3]))],
                [value_info("cond_out", tensor_type(BOOL, [])), value_info("v_out", tensor_type(FLOAT, [2, 3]))] +
                ([value_info("chunk", tensor_type(FLOAT, [262144]))] if accumulate else []),
                "body")
    inits = [int64_tensor("shape", [262144])] if accumulate else []
    cond = vi(2, BOOL) + ld(8, "cond") + ld(9, b"\x01")
    g = graph([node("Loop", ["", "cond", "x"], ["v"] + (["chunks"] if accumulate else []), "forever",
                    [attr_graph("body", big)])],
              [x_input()], [value_info("v")] + ([value_info("chunks")] if accumulate else []),
              initializers=inits + [cond])
    return model(g, 17)


@test
def endless_loop_meets_the_memory_limit():
    path = write("loop-accumulates.onnx", endless_loop(True))
    start = time.monotonic()
    fails_cleanly(["run", path, "--random", "--memory-limit", "64M"], "memory limit", timeout=120)
    assert time.monotonic() - start < 60


@test
def pooling_window_past_the_memory_limit():
    """A window 2e9 wide over a row of 5 padded by 1e9 on each side is valid (6 outputs), but its
    tap table would take 48 GB: it used to end in g_malloc's abort."""
    for op in ("MaxPool", "AveragePool", "LpPool"):
        g = graph([node(op, ["x"], ["y"], "wide", [attr_ints("kernel_shape", [1, 2000000000]),
                                                   attr_ints("pads", [0, 1000000000, 0, 1000000000])])],
                  [x_input(dims=(1, 1, 1, 5))], [any_output()])
        path = write(f"pool-wide-{op}.onnx", model(g, 18))
        fails_cleanly(["run", path, "--random", "--memory-limit", "256M"], "'wide'", op, "memory limit")


@test
def random_inputs_past_the_memory_limit():
    """A declared [2^28] input is 1 GiB of random floats: refused by name before it is made."""
    g = graph([node("Relu", ["x"], ["y"], "r")], [x_input(dims=(1 << 28,))], [any_output()])
    path = write("big-input.onnx", model(g, 17))
    start = time.monotonic()
    fails_cleanly(["run", path, "--random", "--memory-limit", "64M"], "input 'x'", "memory limit")
    assert time.monotonic() - start < 30


@test
def endless_loop_meets_the_time_limit():
    path = write("loop-forever.onnx", endless_loop(False))
    start = time.monotonic()
    fails_cleanly(["run", path, "--random", "--time-limit", "1"], "time limit", timeout=60)
    assert time.monotonic() - start < 30


@test
def names_cannot_drive_the_terminal():
    evil = "\x1b[2J\x1b]0;pwned\x07name\u009b31m"
    g = graph([node("Relu", ["x"], [evil], evil)], [x_input()], [any_output(evil)])
    path = write("escapes.onnx", model(g))
    code, out, err = owb("inspect", path, "--shapes")
    assert code == 0, err
    assert b"\x1b" not in out and b"\x07" not in out and "\u009b".encode() not in out, out
    assert b"\\x1b[2J" in out, out
    # and in an error line: the same name on a node of an unknown op
    g = graph([node("NoSuchOp" + evil, ["x"], ["y"], evil)], [x_input()], [any_output()])
    path = write("escapes-error.onnx", model(g))
    line = fails_cleanly(["run", path, "--random"], "\\x1b")
    assert "\x07" not in line


@test
def fifo_is_not_a_model():
    fifo = os.path.join(TMP, "fifo.onnx")
    os.mkfifo(fifo)
    fails_cleanly(["inspect", fifo], "regular file", timeout=20)
    fails_cleanly(["run", fifo, "--random"], "regular file", timeout=20)


@test
def fifo_and_shrinking_external_data():
    d = os.path.join(TMP, "external")
    os.makedirs(d)
    weights = b"".join(b"\x00\x00\x80\x3f" for _ in range(6))  # six 1.0f

    def external(location):
        return vi(1, 2) + vi(1, 3) + vi(2, FLOAT) + ld(8, "w") + vi(14, 1) + \
            ld(13, ld(1, "location") + ld(2, location)) + ld(13, ld(1, "length") + ld(2, "24"))
    w = external("w.bin")
    g = graph([node("Add", ["x", "w"], ["y"], "add")], [x_input()], [any_output()], initializers=[w])
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(model(g))
    data = os.path.join(d, "w.bin")
    os.mkfifo(data)
    fails_cleanly(["run", path, "--random"], "regular file", timeout=20)
    os.unlink(data)
    with open(data, "wb") as f:
        f.write(weights)
    code, out, err = owb("run", path, "--random")
    assert code == 0, err
    # cut short: an error, not a signal
    with open(data, "wb") as f:
        f.write(weights[:10])
    fails_cleanly(["run", path, "--random"], "w.bin")
    # location "." names the folder, not a file outside it
    w_dot = external(".")
    g = graph([node("Add", ["x", "w"], ["y"], "add")], [x_input()], [any_output()], initializers=[w_dot])
    with open(path, "wb") as f:
        f.write(model(g))
    line = fails_cleanly(["run", path, "--random"], "folder")
    assert "outside" not in line, line


@test
def bench_survives_external_data_shrinking_under_it():
    d = os.path.join(TMP, "shrink")
    os.makedirs(d)
    n = 1 << 18
    w = vi(1, n) + vi(2, FLOAT) + ld(8, "w") + vi(14, 1) + ld(13, ld(1, "location") + ld(2, "w.bin"))
    g = graph([node("Add", ["x", "w"], ["y"], "add")], [value_info("x", tensor_type(FLOAT, [n]))], [any_output()],
              initializers=[w])
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(model(g))
    data = os.path.join(d, "w.bin")
    with open(data, "wb") as f:
        f.write(b"\x00" * (4 * n))
    p = subprocess.Popen([OWB, "bench", path, "--iterations", "200", "--warmup", "1"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    time.sleep(0.3)
    os.truncate(data, 0)
    _, err = p.communicate(timeout=120)
    assert p.returncode in (0, 1), f"bench died: {p.returncode} {err!r}"


@test
def tensor_file_errors_name_the_path_once():
    g = graph([node("Relu", ["x"], ["y"], "relu")], [x_input()], [any_output()])
    path = write("relu.onnx", model(g))
    bad = write("bad-input.pb", b"garbage")
    for f in (bad, os.path.join(TMP, "missing-input.pb")):
        code, _, err = owb("run", path, "--input", f"x={f}")
        assert code in (1, 2), err
        line = err.decode().strip()
        assert line.count(f) == 1, line
    fifo = os.path.join(TMP, "input-fifo.pb")
    os.mkfifo(fifo)
    code, _, err = owb("run", path, "--input", f"x={fifo}", timeout=20)
    assert code in (1, 2) and b"regular file" in err, err


@test
def declared_sizes_that_lie():
    cases = {
        "string-1e8-in-100-bytes": vi(1, 100000000) + vi(2, 8) + ld(6, b"a" * 10) + ld(8, "w"),
        "dims-overflow": vi(1, 1 << 40) + vi(1, 1 << 40) + vi(1, 1 << 20) + vi(2, FLOAT) + ld(8, "w") +
        ld(9, b"\0" * 16),
        "negative-dim": vi(1, -5) + vi(2, FLOAT) + ld(8, "w") + ld(9, b""),
        "huge-dim": vi(1, 1 << 62) + vi(2, FLOAT) + ld(8, "w") + ld(9, b"\0" * 4),
    }
    for name, w in cases.items():
        g = graph([node("Identity", ["w"], ["y"], "id")], [], [any_output()], initializers=[w])
        path = write(f"{name}.onnx", model(g))
        fails_cleanly(["inspect", path, "--shapes"], "'w'")
        fails_cleanly(["run", path, "--random", "--memory-limit", "256M"], "'w'")


@test
def overlapping_external_data():
    """Two initializers whose external-data ranges overlap read the same bytes (the data is read,
    never written): both are what the file says, or the model is refused with one line."""
    d = os.path.join(TMP, "overlap")
    os.makedirs(d)
    with open(os.path.join(d, "w.bin"), "wb") as f:
        f.write(struct.pack("<9f", *range(1, 10)))

    def external(name, offset):
        return vi(1, 2) + vi(1, 3) + vi(2, FLOAT) + ld(8, name) + vi(14, 1) + \
            ld(13, ld(1, "location") + ld(2, "w.bin")) + ld(13, ld(1, "offset") + ld(2, str(offset))) + \
            ld(13, ld(1, "length") + ld(2, "24"))
    g = graph([node("Add", ["w1", "w2"], ["y"], "add")], [], [any_output()],
              initializers=[external("w1", 0), external("w2", 12)])
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(model(g))
    code, out, err = owb("run", path, "--random")
    assert code == 0, err
    # 1..6 plus 4..9
    assert "[5, 7, 9, 11, 13, 15]" in out.decode(), out
    # wrapping and past the end: refused, naming the tensor
    for name, offset, length in [("wrap", (1 << 64) - 8, 24), ("past", 30, 24), ("long", 0, 1 << 62)]:
        w = vi(1, 6) + vi(2, FLOAT) + ld(8, name) + vi(14, 1) + ld(13, ld(1, "location") + ld(2, "w.bin")) + \
            ld(13, ld(1, "offset") + ld(2, str(offset))) + ld(13, ld(1, "length") + ld(2, str(length)))
        g = graph([node("Identity", [name], ["y"], "id")], [], [any_output()], initializers=[w])
        with open(path, "wb") as f:
            f.write(model(g))
        fails_cleanly(["inspect", path, "--shapes"], name)


@test
def unknown_domains():
    """An op of a domain nobody implements, imported or not, and a default-domain op that does not
    exist: one line naming the node, at inspect and at run."""
    cases = {
        "imported": (node("Frobnicate", ["x"], ["y"], "evil", domain="com.evil"), [opset(1, "com.evil")]),
        "not-imported": (node("Frobnicate", ["x"], ["y"], "evil", domain="com.evil"), []),
        "default-domain": (node("Frobnicate", ["x"], ["y"], "evil"), []),
        "opset-past-32-bits": (node("Relu", ["x"], ["y"], "evil"), []),
    }
    for name, (n, extra) in cases.items():
        g = graph([n], [x_input()], [any_output()])
        data = model(g, version=(1 << 32) + 13 if name == "opset-past-32-bits" else 17, extra_opsets=extra)
        path = write(f"domain-{name}.onnx", data)
        fails_cleanly(["inspect", path, "--shapes"])
        fails_cleanly(["run", path, "--random"])


@test
def deeply_nested_subgraphs():
    """If inside If, 3000 deep: refused by the depth limits with one line, not a stack overflow in
    the parser or in a recursive walk."""
    inner = graph([node("Identity", ["x"], ["y"], "leaf")], [], [any_output()])
    for level in range(3000):
        inner = graph([node("If", ["c"], ["y"], f"if{level}", [attr_graph("then_branch", inner)])], [], [any_output()])
    g = graph([node("If", ["c"], ["y"], "top", [attr_graph("then_branch", inner)])],
              [value_info("c", tensor_type(BOOL, []))], [any_output()])
    d = os.path.join(TMP, "deep")
    os.makedirs(d)
    path = os.path.join(d, "deep.onnx")
    with open(path, "wb") as f:
        f.write(model(g))
    fails_cleanly(["inspect", path, "--shapes"], "deep")
    fails_cleanly(["run", path, "--random"], "deep")


@test
def a_million_graph_inputs():
    """10^6 declared graph inputs: inspect loads, validates and lists them in bounded time and
    memory (loading is linear)."""
    inputs = [value_info(f"x{i}", tensor_type(FLOAT, [1])) for i in range(1000000)]
    g = graph([node("Identity", ["x0"], ["y"], "id")], inputs, [any_output()])
    d = os.path.join(TMP, "million")
    os.makedirs(d)
    path = os.path.join(d, "million-inputs.onnx")
    with open(path, "wb") as f:
        f.write(model(g))
    code, out, err = owb("inspect", path, "--shapes", timeout=240)
    assert code == 0, err[-2000:]
    assert b"x999999" in out


@test
def quantize_and_compare_fail_cleanly():
    """Every hostile model written above, through the quantizer and the comparison: a clean exit
    (0, or 1 with one line), never a signal or an escape on the terminal. Models that loop without
    end are left to the run tests' time limit."""
    paths = sorted(os.path.join(TMP, f) for f in os.listdir(TMP)
                   if f.endswith(".onnx") and "loop" not in f and os.path.isfile(os.path.join(TMP, f)))
    assert len(paths) >= 10, paths
    out = os.path.join(TMP, "quantized", "q.onnx")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    for path in paths:
        for args in (["quantize", path, "-o", out, "--calibration-random", "2", "-q"],
                     ["quantize", path, "-o", out, "--dynamic", "-q"],
                     ["compare", path, path, "--samples", "1"]):
            code, stdout, err = owb(*args, timeout=120)
            assert code >= 0, f"owb {args} died of signal {-code}"
            assert code in (0, 1), f"owb {args}: exit {code}, stderr {err[-2000:]!r}"
            assert b"\x1b" not in err and b"\x1b" not in stdout, f"owb {args}: an escape reached the terminal"
            if code == 1:
                lines = err.decode("utf-8", "replace").splitlines()
                assert len(lines) == 1 and lines[0].startswith("owb: "), (args, lines)


if __name__ == "__main__":
    sys.exit(owb_cli_test.main(cleanup=TMP))
