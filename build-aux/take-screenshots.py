#!/usr/bin/python3
"""Takes the README's screenshots: launches onnx-workbench on a model under Xvfb, drives it
through the accessibility tree as the end-to-end test does, and saves PNGs of the window with
ImageMagick's `import`.

  build-aux/take-screenshots.sh [MODEL.onnx]      (wraps this in Xvfb and a D-Bus session)

Writes data/screenshots/{graph,inspector,optimize,run,values}.png ($OWB_SCREENSHOT_DIR instead, if set),
and subgraph.png: tests/ui/data/subgraphs.onnx (build-aux/make-subgraph-model.py) with a Conv found
inside an If's then_branch, the branch opened in place and the breadcrumb back."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "ui"))
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location(
    "e2e", os.path.join(os.path.dirname(__file__), "..", "tests", "ui", "test-e2e.py"))
e2e = importlib.util.module_from_spec(spec)
spec.loader.exec_module(e2e)


def shot(path, window):
    x, y, w, h = window_extents(window)
    subprocess.run(["import", "-window", "root", "-crop", f"{w}x{h}+{x}+{y}", "+repage", path],
                   check=True)
    print("wrote", path)


def window_extents(window):
    ext = e2e.Atspi.Component.get_extents(window, e2e.Atspi.CoordType.WINDOW)
    return max(ext.x, 0), max(ext.y, 0), ext.width, ext.height


def click(app, name, role=None):
    button = e2e.poll(f"'{name}'", lambda: e2e.find_named(app, name, role))
    e2e.Atspi.Action.do_action(button, 0)
    return button


def subgraph_shot(root, build, env, out):
    """Find a Conv that is inside If_3's then_branch: the branch opens, the breadcrumb shows the
    way back and the find bar says where the match is."""
    model = os.path.join(root, "tests", "ui", "data", "subgraphs.onnx")
    proc = subprocess.Popen([os.path.join(build, "app", "onnx-workbench"), model], env=env)
    try:
        app = e2e.poll("the application", lambda: e2e.find_app(proc.pid))
        window = e2e.poll("the window", lambda: app.get_child_at_index(0))
        e2e.poll("the graph", lambda: e2e.find_named(app, "Graph"))
        time.sleep(3)
        click(app, "Find in Graph")
        entry = e2e.poll("the find entry", lambda: e2e.find_named(app, "Find"))
        e2e.Atspi.EditableText.set_text_contents(entry, "/head/then/Conv_1")
        e2e.poll("the branch", lambda: e2e.find_named(app, "If_3 › then_branch"))
        time.sleep(3)
        shot(os.path.join(out, "subgraph.png"), window)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main():
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    build = os.environ.get("OWB_BUILD_ROOT", os.path.join(root, "build"))
    model = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "data", "samples", "tiny-cnn.onnx")
    out = os.environ.get("OWB_SCREENSHOT_DIR", os.path.join(root, "data", "screenshots"))
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    env.pop("GTK_A11Y", None)
    env.pop("NO_AT_BRIDGE", None)
    env.setdefault("GSETTINGS_SCHEMA_DIR", os.path.join(build, "data"))
    proc = subprocess.Popen([os.path.join(build, "app", "onnx-workbench"), model], env=env)
    try:
        app = e2e.poll("the application", lambda: e2e.find_app(proc.pid))
        window = e2e.poll("the window", lambda: app.get_child_at_index(0))
        e2e.poll("the graph", lambda: e2e.find_named(app, "Graph"))
        time.sleep(3)
        shot(os.path.join(out, "graph.png"), window)
        click(app, "Find in Graph")
        entry = e2e.poll("the find entry", lambda: e2e.find_named(app, "Find"))
        e2e.Atspi.EditableText.set_text_contents(entry, os.environ.get("OWB_SHOT_FIND", "Conv"))
        time.sleep(2)
        shot(os.path.join(out, "inspector.png"), window)
        click(app, "Optimize", e2e.Atspi.Role.PAGE_TAB)
        time.sleep(1)
        click(app, "Optimize", e2e.Atspi.Role.PUSH_BUTTON)
        time.sleep(8)
        shot(os.path.join(out, "optimize.png"), window)
        click(app, "Run", e2e.Atspi.Role.PAGE_TAB)
        time.sleep(1)
        click(app, "Run Model", e2e.Atspi.Role.PUSH_BUTTON)
        time.sleep(4)
        shot(os.path.join(out, "run.png"), window)
        # The values view: a run that keeps every value, scrolled to the first output's values.
        # GTK 4.8 gives the switch and its row no AT-SPI action: click the switch at the row's end.
        row = e2e.poll("the switch's row", lambda: e2e.find_named(app, "Keep Intermediate Values",
                                                                   e2e.Atspi.Role.LIST_ITEM))
        ext = e2e.Atspi.Component.get_extents(row, e2e.Atspi.CoordType.SCREEN)
        subprocess.run(["xdotool", "mousemove", str(ext.x + ext.width - 36), str(ext.y + ext.height // 2),
                        "click", "1"], check=True)
        time.sleep(0.5)
        click(app, "Run Model", e2e.Atspi.Role.PUSH_BUTTON)
        time.sleep(4)
        e2e.poll("the values view", lambda: next(
            (n for n in e2e.walk(app) if (n.get_name() or "").startswith("Next Values of")), None))
        # Scrolled down to the values with the mouse wheel.
        x, y, w, h = window_extents(window)
        subprocess.run(["xdotool", "mousemove", str(x + w // 2), str(y + h // 2), "click", "--repeat", "8",
                        "--delay", "50", "5"], check=True)
        time.sleep(1)
        shot(os.path.join(out, "values.png"), window)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    subgraph_shot(root, build, env, out)


if __name__ == "__main__":
    main()
