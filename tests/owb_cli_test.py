"""owb_cli_test.py: what the command-line tests share: running owb with an expected exit status,
the one-line error check, and a runner of test functions (standard library only).

    import owb_cli_test as t
    owb = t.runner(OWB)
    @t.test
    def something(): owb("inspect", MODEL, code=0)
    sys.exit(t.main(cleanup=TMP))"""
import shutil
import subprocess
import sys
import traceback

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def runner(owb_path):
    def owb(*args, code=None, timeout=300):
        """Runs owb; checks the exit status when code is given; returns (status, stdout, stderr)."""
        p = subprocess.run([owb_path, *args], capture_output=True, text=True, timeout=timeout)
        if code is not None and p.returncode != code:
            raise AssertionError(f"owb {' '.join(args)}: exit {p.returncode}, wanted {code}\n"
                                 f"stdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
        return p.returncode, p.stdout, p.stderr
    return owb


def one_error_line(stderr, *must_contain):
    lines = stderr.splitlines()
    assert len(lines) == 1, f"wanted one error line, got {lines!r}"
    assert lines[0].startswith("owb: "), lines[0]
    for s in must_contain:
        assert s in lines[0], f"{s!r} not in {lines[0]!r}"


def main(cleanup=None):
    """Runs every @test function; returns the exit status (1 if any failed)."""
    failed = 0
    try:
        for fn in TESTS:
            try:
                fn()
                print(f"ok - {fn.__name__}")
            except Exception:
                failed += 1
                print(f"not ok - {fn.__name__}")
                traceback.print_exc(file=sys.stdout)
    finally:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)
    print(f"{len(TESTS) - failed} passed, {failed} failed")
    return 1 if failed else 0
