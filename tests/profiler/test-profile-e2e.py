#!/usr/bin/python3
"""The Profile page end to end, through the accessibility tree only: launches onnx-workbench on
the sample model (the caller provides the display and a D-Bus session, see tests/ui/gui-test.sh),
opens Profile, presses Profile Model, and waits for the Timeline, Per-Operator Time and Stored Runs
to fill; a screenshot goes to $OWB_TEST_PNG_DIR when set (ImageMagick's import).

  test-profile-e2e.py BUILD_ROOT SOURCE_ROOT

Runs with the system python (python3-gi, gir1.2-atspi-2.0)."""
import os
import sys

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ui"))
from atspi_helpers import find_app, find_named, launch, open_view, poll, rows, screenshot, stop, walk  # noqa: E402


def main():
    build_root, source_root = sys.argv[1], sys.argv[2]
    model = os.path.join(source_root, "data", "samples", "tiny-cnn.onnx")
    proc = launch(build_root, model)
    try:
        app = poll("the application on the accessibility bus", lambda: find_app(proc.pid))
        open_view(app, "Profile")
        button = poll("the Profile Model button", lambda: find_named(app, "Profile Model", (Atspi.Role.PUSH_BUTTON, Atspi.Role.TOGGLE_BUTTON)))
        # the button is insensitive until the session is prepared
        poll("Profile Model to be enabled",
             lambda: button.get_state_set().contains(Atspi.StateType.SENSITIVE) or None)
        Atspi.Action.do_action(button, 0)
        ops = poll("the Per-Operator Time table", lambda: find_named(app, "Per-Operator Time", (Atspi.Role.LIST,)))
        runs = poll("the Stored Runs list", lambda: find_named(app, "Stored Runs", (Atspi.Role.LIST,)))
        poll("a stored run", lambda: rows(runs) >= 1 or None)
        poll("the op rows", lambda: rows(ops) >= 8 or None)
        timeline = poll("the Timeline", lambda: find_named(app, "Timeline"))
        print("found:", timeline.get_role_name(), "'Timeline';", rows(ops), "op rows;", rows(runs), "stored run(s)")
        # the database the runs are in (the default here), and the button that chooses another
        choose = poll("the Choose Database button", lambda: find_named(app, "Choose Database", (Atspi.Role.PUSH_BUTTON,)))
        assert choose.get_state_set().contains(Atspi.StateType.SENSITIVE), "Choose Database is not enabled"
        where = poll("the database's label", lambda: next(
            (n for n in walk(app) if n.get_role() == Atspi.Role.LABEL and "profiles.sqlite" in (n.get_name() or "")), None))
        print("database:", where.get_name())
        screenshot("profile-e2e.png")
        print("profile e2e ok")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
