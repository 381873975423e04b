#!/usr/bin/env python3
"""Prints the closing lines of a `meson test` run from its logs: the conformance count, then
"tests: N passed, N failed, N skipped" over the meson tests. Usage: test-summary.py BUILD_DIR"""
import json
import os
import sys

logs = os.path.join(sys.argv[1], "meson-logs")
seen = set()
try:
    with open(os.path.join(logs, "testlog.txt"), errors="replace") as f:
        for line in f:
            # meson logs a test's output more than once: print each line once.
            if line.startswith("conformance: ") and line.rstrip() not in seen:
                seen.add(line.rstrip())
                print(line.rstrip())
except OSError:
    pass

counts = {"passed": 0, "failed": 0, "skipped": 0}
try:
    with open(os.path.join(logs, "testlog.json")) as f:
        for line in f:
            result = json.loads(line).get("result", "")
            if result in ("OK", "EXPECTEDFAIL"):
                counts["passed"] += 1
            elif result == "SKIP":
                counts["skipped"] += 1
            else:
                counts["failed"] += 1
except OSError:
    print("tests: no test log found", file=sys.stderr)
print(f"tests: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
