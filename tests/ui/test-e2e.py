#!/usr/bin/python3
"""End to end, as a person would: launches onnx-workbench on the sample model under Xvfb (the
caller provides the display and a D-Bus session, see gui-test.sh), then drives it only through
the accessibility tree: finds the graph, opens the find bar, searches for a node, and reads the
inspector that now describes it.

  test-e2e.py BUILD_ROOT SOURCE_ROOT

Runs with the system python (python3-gi, gir1.2-atspi-2.0)."""
import os
import sys

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from atspi_helpers import find_app, find_named, launch, poll, stop, walk  # noqa: E402


def texts_below(root):
    """Every name and text under root (labels expose their text as their name or through the
    Text interface). GTK 4.8 marks only the window "showing", so pages a GtkStack hides are
    included: callers look for text that only the page they expect has."""
    out = []
    for node in walk(root):
        try:
            node.clear_cache()
            name = node.get_name()
            if name:
                out.append(name)
            if "Text" in node.get_interfaces():
                count = Atspi.Text.get_character_count(node)
                if count:
                    out.append(Atspi.Text.get_text(node, 0, count))
        except gi.repository.GLib.GError:
            continue
    return out


def main():
    build_root, source_root = sys.argv[1], sys.argv[2]
    model = os.path.join(source_root, "data", "samples", "tiny-cnn.onnx")
    proc = launch(build_root, model)
    try:
        app = poll("the application on the accessibility bus", lambda: find_app(proc.pid))
        # The view switcher's tab is also called "Graph": the canvas is the one that is not a tab.
        graph = poll("the graph canvas", lambda: next(
            (n for n in walk(app) if n.get_name() == "Graph"
             and n.get_role() not in (Atspi.Role.PAGE_TAB, Atspi.Role.LABEL)), None))
        print("found:", graph.get_role_name(), "'Graph'")
        toggle = poll("the find button", lambda: find_named(app, "Find in Graph"))
        Atspi.Action.do_action(toggle, 0)
        entry = poll("the find entry", lambda: find_named(app, "Find"))
        assert "EditableText" in entry.get_interfaces(), "the find entry is not editable through AT-SPI"
        Atspi.EditableText.set_text_contents(entry, "Conv")
        inspector = poll("the inspector", lambda: find_named(app, "Inspector"))

        def inspector_shows_conv():
            texts = texts_below(inspector)
            # "Runs on cpu" is the provider row of the node page; "Conv" its op.
            return texts if any(t == "Conv" for t in texts) and \
                any(t.startswith("Runs on") and "cpu" in t for t in texts) else None

        texts = poll("the inspector to describe the Conv node", inspector_shows_conv)
        print("inspector:", " | ".join(texts[:24]))
        print("e2e ok")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
