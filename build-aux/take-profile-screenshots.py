#!/usr/bin/python3
"""Takes the README's Profile page screenshots: walks the page on a model through the
accessibility tree (Profile -> 30 iterations at 2 threads -> Profile Model, the timeline zoomed
into the first iterations; then 1 thread -> Profile Model -> compare run 1 with the run shown, the
page scrolled to the comparison) in a 1600x1000 window, and saves the window with ImageMagick.

  OWB_KEEP_A11Y=1 tests/ui/gui-test.sh /usr/bin/python3 build-aux/take-profile-screenshots.py MODEL.onnx

Writes profile.png and profile-compare.png to data/screenshots ($OWB_SCREENSHOT_DIR instead, if
set); ITERATIONS, ZOOM_CLICKS and SCROLL_CLICKS tune the walk."""
import os
import subprocess
import sys
import time

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(root, "tests", "ui"))
from atspi_helpers import Atspi, find_app, find_named, poll, rows, walk  # noqa: E402

build = os.environ.get("OWB_BUILD_ROOT", os.path.join(root, "build"))
model = sys.argv[1]
out = os.environ.get("OWB_SCREENSHOT_DIR", os.path.join(root, "data", "screenshots"))
os.makedirs(out, exist_ok=True)
# a 1600x1000 window: the size setting, through the keyfile backend in gui-test.sh's throwaway home
cfg = os.path.join(os.environ["XDG_CONFIG_HOME"], "glib-2.0", "settings")
os.makedirs(cfg, exist_ok=True)
with open(os.path.join(cfg, "keyfile"), "w") as f:
    f.write("[org/onnxworkbench/Workbench]\nwindow-width=1600\nwindow-height=1000\n")
env = dict(os.environ, GSETTINGS_BACKEND="keyfile", GSETTINGS_SCHEMA_DIR=os.path.join(build, "data"))
env.pop("GTK_A11Y", None)
env.pop("NO_AT_BRIDGE", None)


def shot(name, window):
    ext = Atspi.Component.get_extents(window, Atspi.CoordType.SCREEN)
    path = os.path.join(out, name)
    subprocess.run(["import", "-window", "root", "-crop", f"{ext.width}x{ext.height}+{max(ext.x,0)}+{max(ext.y,0)}",
                    "+repage", path], check=True)
    print("wrote", path, flush=True)


proc = subprocess.Popen([os.path.join(build, "app", "onnx-workbench"), model], env=env)
try:
    app = poll("the app", lambda: find_app(proc.pid))
    window = poll("the window", lambda: app.get_child_at_index(0))
    tab = poll("the Profile tab", lambda: next(
        (n for n in walk(app) if n.get_name() == "Profile" and "Action" in n.get_interfaces()), None))
    Atspi.Action.do_action(tab, 0)
    button = poll("Profile Model", lambda: find_named(app, "Profile Model", Atspi.Role.PUSH_BUTTON))
    poll("Profile Model enabled", lambda: button.get_state_set().contains(Atspi.StateType.SENSITIVE) or None, 180)
    threads = poll("Threads", lambda: find_named(app, "Threads", Atspi.Role.SPIN_BUTTON))
    Atspi.Value.set_current_value(threads, 2)
    iterations = poll("Iterations", lambda: find_named(app, "Iterations", Atspi.Role.SPIN_BUTTON))
    Atspi.Value.set_current_value(iterations, int(os.environ.get("ITERATIONS", "30")))
    t0 = time.monotonic()
    Atspi.Action.do_action(button, 0)
    runs = poll("Stored Runs", lambda: find_named(app, "Stored Runs", Atspi.Role.LIST))
    poll("run 1", lambda: rows(runs) >= 1 or None, 300)
    print("profile 1: %.1f s" % (time.monotonic() - t0), flush=True)
    time.sleep(1)
    # zoom the timeline into the first iteration or so: scroll up over its start
    tl = poll("Timeline", lambda: find_named(app, "Timeline"))
    e = Atspi.Component.get_extents(tl, Atspi.CoordType.WINDOW)
    print("timeline at", e.x, e.y, e.width, e.height, flush=True)
    for _ in range(int(os.environ.get("ZOOM_CLICKS", "13"))):
        Atspi.generate_mouse_event(e.x + 86 + 6, e.y + 30, "b4c")
        time.sleep(0.15)
    time.sleep(1.5)
    shot("profile.png", window)
    Atspi.Value.set_current_value(threads, 1)
    poll("Profile Model enabled", lambda: button.get_state_set().contains(Atspi.StateType.SENSITIVE) or None, 180)
    t0 = time.monotonic()
    Atspi.Action.do_action(button, 0)
    poll("run 2", lambda: rows(runs) >= 2 or None, 300)
    print("profile 2: %.1f s" % (time.monotonic() - t0), flush=True)
    compare = poll("compare #1", lambda: next(
        (n for n in walk(app) if (n.get_name() or "").startswith("Compare #1")), None))
    Atspi.Action.do_action(compare, 0)
    table = poll("Comparison", lambda: find_named(app, "Comparison", Atspi.Role.LIST))
    poll("comparison rows", lambda: rows(table) >= 5 or None, 120)
    heading = poll("comparison heading", lambda: next(
        (n for n in walk(app) if n.get_role() == Atspi.Role.LABEL and "nodes matched" in (n.get_name() or "")), None))
    print("comparison:", heading.get_name(), flush=True)
    # bring the comparison into view: scroll the page over the tables
    for _ in range(int(os.environ.get("SCROLL_CLICKS", "8"))):
        Atspi.generate_mouse_event(e.x + 300, e.y + e.height + 200, "b5c")
        time.sleep(0.15)
    time.sleep(1.5)
    shot("profile-compare.png", window)
    db = next((n for n in walk(app) if n.get_role() == Atspi.Role.LABEL and "profiles.sqlite" in (n.get_name() or "")), None)
    print("database line:", db.get_name() if db else None)
finally:
    proc.terminate()
    proc.wait(timeout=10)
