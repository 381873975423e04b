"""owb profile --db and owb runs end to end on the sample model: two runs stored and listed,
compared (JSON contract), exported as a Chrome trace, an ONNX Runtime profile imported and
compared, the critical path, deletion, and bad usage.

    test-owb-runs.py OWB MODEL ORT_PROFILE
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import owb_cli_test  # noqa: E402

OWB, MODEL, ORT_PROFILE = sys.argv[1:4]
TMP = tempfile.mkdtemp(prefix="owb-runs-")
DB = os.path.join(TMP, "profiles.sqlite")
owb = owb_cli_test.runner(OWB)
test = owb_cli_test.test
one_error_line = owb_cli_test.one_error_line


def stored_id(out):
    m = re.search(r"run id (\d+)", out)
    assert m, out
    return int(m.group(1))


@test
def profile_stores_runs():
    _, out, _ = owb("profile", MODEL, "--db", DB, "--label", "first", "--iterations", "4", "--warmup", "1",
                    "--threads", "1", "-O", "disabled", code=0)
    assert stored_id(out) == 1, out
    assert "Wall " in out and "between nodes" in out and "thread 0" in out, out
    assert any(line.startswith("Conv ") for line in out.splitlines()), out
    _, out, _ = owb("profile", MODEL, "--db", DB, "--label", "second", "--iterations", "3", "--threads", "2",
                    "-O", "extended", "--json", code=0)
    info = json.loads(out)
    assert info["run_id"] == 2, info
    assert info["gaps_ms"] >= 0 and info["wall_ms"] > 0 and info["thread_busy"][0]["thread"] == 0, info
    _, out, _ = owb("runs", DB, "--json", code=0)
    runs = json.loads(out)["runs"]
    assert [r["id"] for r in runs] == [1, 2], runs
    first = runs[0]
    for key in ("id", "label", "model", "date", "threads", "optimize", "providers", "median_ms"):
        assert key in first, (key, first)
    assert first["label"] == "first" and first["threads"] == 1 and first["optimize"] == "disabled", first
    assert first["providers"] == "cpu" and first["median_ms"] > 0 and first["model"] == MODEL, first
    assert runs[1]["optimize"] == "extended" and runs[1]["threads"] == 2, runs
    _, out, _ = owb("runs", DB, code=0)
    assert "first" in out and "second" in out and out.strip().endswith("2 runs"), out


@test
def compare_json_contract():
    _, out, _ = owb("runs", DB, "--compare", "1", "2", "--json", code=0)
    info = json.loads(out)
    nodes, ops = info["nodes"], info["ops"]
    for n in nodes:
        assert set(("name", "op", "a_ms", "b_ms", "delta_ms", "ratio")) <= set(n), n
        assert n["a_ms"] is not None or n["b_ms"] is not None, n
        if n["a_ms"] is None or n["b_ms"] is None:
            assert n["delta_ms"] is None and n["ratio"] is None, n
        else:
            assert abs(n["delta_ms"] - (n["b_ms"] - n["a_ms"])) < 1e-6, n
    # -O extended fused conv1 + bn1 + relu1 (the fusion level: at -O all the layout pass may also
    # move the sample to NHWC, a separate decision of its cost rule): one row, A's three nodes' times added up; the rest by name
    conv1 = [n for n in nodes if n["name"] == "conv1"][0]
    assert conv1["match"] == "origins" and conv1["merged"] == ["conv1", "bn1", "relu1"], conv1
    assert conv1["merged_side"] == "a" and conv1["op"] == "FusedConv", conv1
    assert all(n["a_ms"] is not None and n["b_ms"] is not None for n in nodes), nodes
    assert info["matched_nodes"] == len(nodes) == 7, info
    assert {"Conv", "BatchNormalization"} <= {o["op"] for o in ops}, ops
    _, out, _ = owb("runs", DB, "--compare", "1", "1", code=0)
    assert "Matched    10 of 10 rows: 0 optimizer-made nodes with the nodes they replaced, 0 by op type" in out, out


@test
def export_trace():
    trace = os.path.join(TMP, "trace.json")
    _, out, _ = owb("runs", DB, "--export-trace", "2", "-o", trace, code=0)
    with open(trace) as f:
        data = json.load(f)
    xs = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert xs and all("tid" in e and "ts" in e and e["dur"] >= 0 for e in xs), xs[:3]
    iterations = {e["args"]["iteration"] for e in xs if e["tid"] == 0}
    assert iterations == {0, 1, 2}, iterations
    names = [e for e in data["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
    assert {e["tid"] for e in names} == {e["tid"] for e in xs}, (names, {e["tid"] for e in xs})
    assert not [n for n in os.listdir(TMP) if n.startswith("trace.json.")], os.listdir(TMP)


@test
def import_ort_and_compare():
    _, out, _ = owb("runs", DB, "--import-ort", ORT_PROFILE, "--model", MODEL, "--label", "ort", code=0)
    ort_id = stored_id(out)
    _, out, _ = owb("runs", DB, "--json", code=0)
    run = [r for r in json.loads(out)["runs"] if r["id"] == ort_id][0]
    assert run["label"] == "ort" and run["providers"] == "CPUExecutionProvider", run
    _, out, _ = owb("runs", DB, "--compare", "1", str(ort_id), "--json", code=0)
    nodes = json.loads(out)["nodes"]
    matched = [n for n in nodes if n["a_ms"] is not None and n["b_ms"] is not None]
    assert len(matched) == 10, nodes
    _, out, _ = owb("runs", DB, "--critical-path", str(ort_id), "--json", code=0)
    info = json.loads(out)
    assert len(info["nodes"]) == 10 and info["critical_path_ms"] > 0, info


@test
def killed_while_profiling():
    """kill -9 in the middle of a long profiling run: the database is sound, the runs before it whole."""
    _, before, _ = owb("runs", DB, "--json", code=0)
    proc = subprocess.Popen([OWB, "profile", MODEL, "--db", DB, "--iterations", "1000000", "--threads", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    proc.kill()
    proc.wait()
    db = sqlite3.connect(DB)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    _, after, _ = owb("runs", DB, "--json", code=0)
    assert json.loads(after) == json.loads(before), (before, after)


@test
def delete_runs():
    _, out, _ = owb("runs", DB, "--delete", "1", code=0)
    _, out, _ = owb("runs", DB, "--json", code=0)
    assert 1 not in [r["id"] for r in json.loads(out)["runs"]], out
    _, _, err = owb("runs", DB, "--delete", "1", code=2)
    one_error_line(err)


@test
def bad_usage():
    _, _, err = owb("runs", code=2)
    one_error_line(err)
    _, _, err = owb("runs", os.path.join(TMP, "missing.sqlite"), code=1)
    one_error_line(err)
    assert not os.path.exists(os.path.join(TMP, "missing.sqlite"))
    _, _, err = owb("runs", DB, "--compare", "2", code=2)
    one_error_line(err)
    _, _, err = owb("runs", DB, "--export-trace", "2", code=2)
    one_error_line(err)
    _, _, err = owb("runs", DB, "--export-trace", "x", "-o", "t.json", code=2)
    one_error_line(err)
    _, _, err = owb("runs", DB, "--import-ort", ORT_PROFILE, code=2)
    one_error_line(err)
    _, _, err = owb("runs", DB, "--import-ort", MODEL, "--model", MODEL, code=1)
    one_error_line(err)
    _, _, err = owb("profile", MODEL, "--label", "x", code=2)
    one_error_line(err)
    garbage = os.path.join(TMP, "garbage.sqlite")
    with open(garbage, "w") as f:
        f.write("not a database at all, but long enough to be read as one" * 20)
    _, _, err = owb("runs", garbage, code=1)
    one_error_line(err)


if __name__ == "__main__":
    sys.exit(owb_cli_test.main(cleanup=TMP))
