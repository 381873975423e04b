"""atspi_helpers.py: what the end-to-end tests that drive the app through the accessibility tree
share: starting and stopping the app, waiting for a condition, walking the tree, finding the app
by its process and a node by its accessible name, switching views, a screenshot. Runs with the
system python (python3-gi, gir1.2-atspi-2.0)."""
import os
import shutil
import subprocess
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

TIMEOUT = 60.0


def poll(what, fn, timeout=TIMEOUT):
    """fn's first true result, tried every 0.25 s (AT-SPI errors count as not yet)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            found = fn()
        except gi.repository.GLib.GError:
            found = None
        if found:
            return found
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def walk(node, depth=0):
    """Every node under node, depth first (a node that goes away mid-walk is skipped)."""
    if node is None or depth > 60:
        return
    yield node
    try:
        n = node.get_child_count()
    except gi.repository.GLib.GError:
        return
    for i in range(n):
        try:
            child = node.get_child_at_index(i)
        except gi.repository.GLib.GError:
            continue
        yield from walk(child, depth + 1)


def find_app(pid):
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is not None and app.get_process_id() == pid:
            return app
    return None


def find_named(root, name, roles=None):
    """The first node with this accessible name and, if given, one of these roles (a role or a
    tuple of them); caches are cleared on the way, so names that changed are seen."""
    if roles is not None and not isinstance(roles, (tuple, list)):
        roles = (roles,)
    for node in walk(root):
        try:
            node.clear_cache()
            if node.get_name() == name and (roles is None or node.get_role() in roles):
                return node
        except gi.repository.GLib.GError:
            continue
    return None


def rows(node):
    node.clear_cache()
    return node.get_child_count()


def launch(build_root, model):
    """onnx-workbench of build_root opening model, on the accessibility bus whatever the test
    environment set to keep GTK off it."""
    env = dict(os.environ)
    env.pop("GTK_A11Y", None)
    env.pop("NO_AT_BRIDGE", None)
    return subprocess.Popen([os.path.join(build_root, "app", "onnx-workbench"), model], env=env)


def stop(proc):
    """Ends the app launch started: asked first, killed after 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def open_view(app, name):
    """Switches the window to the view called name through its view-switcher tab."""
    tab = poll("the " + name + " tab", lambda: next(
        (n for n in walk(app) if n.get_name() == name and "Action" in n.get_interfaces()), None))
    Atspi.Action.do_action(tab, 0)


def screenshot(name):
    """The whole screen as $OWB_TEST_PNG_DIR/name, when that is set and ImageMagick's import is
    there."""
    out = os.environ.get("OWB_TEST_PNG_DIR")
    if out and shutil.which("import"):
        time.sleep(1)
        path = os.path.join(out, name)
        subprocess.run(["import", "-window", "root", path], check=True)
        print("screenshot:", path)
