#!/usr/bin/python3
"""The Quantize page end to end, through the accessibility tree only: launches onnx-workbench on
a model (the sample, or $OWB_QUANT_MODEL with $OWB_QUANT_CALIB unused: the page's own default of
random samples is what one click gives), opens Quantize, presses Quantize Model, waits for the
Accuracy Comparison and the Sensitivity legend, selects the worst tensor, finds its Node Detail
(statistics, Error Histogram, its title) and presses Keep in Float, then waits for Kept in Float
to list it; shows the quantized graph and finds Collapse QDQ Pairs checked; a screenshot goes to
$OWB_TEST_PNG_DIR when set.

  test-quantize-e2e.py BUILD_ROOT SOURCE_ROOT

Runs with the system python (python3-gi, gir1.2-atspi-2.0)."""
import os
import sys

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from atspi_helpers import find_app, find_named, launch, open_view, poll, rows, screenshot, stop, walk  # noqa: E402


def main():
    build_root, source_root = sys.argv[1], sys.argv[2]
    model = os.environ.get("OWB_QUANT_MODEL") or os.path.join(source_root, "data", "samples", "tiny-cnn.onnx")
    proc = launch(build_root, model)
    try:
        app = poll("the application on the accessibility bus", lambda: find_app(proc.pid))
        open_view(app, "Quantize")
        buttons = (Atspi.Role.PUSH_BUTTON, Atspi.Role.TOGGLE_BUTTON)
        button = poll("the Quantize Model button", lambda: find_named(app, "Quantize Model", buttons))
        # the settings beside it, each with its name
        for name in ("Calibration Method", "Activation Type", "Weight Type", "Exclude Op Types",
                     "Per-Channel Weights"):
            poll("the " + name + " setting", lambda: find_named(app, name))
        poll("Quantize Model to be enabled",
             lambda: button.get_state_set().contains(Atspi.StateType.SENSITIVE) or None)
        Atspi.Action.do_action(button, 0)
        comparison = poll("the Accuracy Comparison table", lambda: find_named(app, "Accuracy Comparison", (Atspi.Role.LIST,)))
        # a header, an output, the model size and the latency
        poll("the comparison rows", lambda: rows(comparison) >= 4 or None, timeout=120)
        legend = poll("the Sensitivity legend", lambda: find_named(app, "Sensitivity"))
        worst = poll("the Worst Tensors list", lambda: find_named(app, "Worst Tensors", (Atspi.Role.LIST,)))
        poll("a worst tensor", lambda: rows(worst) >= 2 or None)
        keep = poll("the Keep in Float button", lambda: find_named(app, "Keep in Float", buttons))
        first = worst.get_child_at_index(1)
        # the rows are made anew with each result: read the name while this one is there
        node = first.get_name().split(",")[0]
        print("worst tensor:", first.get_name())
        selected = False
        if "Selection" in worst.get_interfaces():
            selected = Atspi.Selection.select_child(worst, 1)
        if not selected and "Action" in first.get_interfaces():
            Atspi.Action.do_action(first, 0)
        poll("Keep in Float to be enabled for the selected node",
             lambda: keep.get_state_set().contains(Atspi.StateType.SENSITIVE) or None)
        # the node's detail beside it: float against quantized, the error histogram, the scales
        poll("the Node Detail", lambda: find_named(app, "Node Detail"))
        poll("the float and quantized statistics", lambda: find_named(app, "Float and Quantized Statistics"))
        poll("the Error Histogram", lambda: find_named(app, "Error Histogram"))
        # its title, "NODE (OP), output TENSOR" (a worst row reads "NODE, OP, …")
        poll("the detail of " + node, lambda: next(
            (True for n in walk(app) if (n.get_name() or "").startswith(node + " (")), None))
        Atspi.Action.do_action(keep, 0)
        kept = poll("the Kept in Float list", lambda: find_named(app, "Kept in Float", (Atspi.Role.LIST,)))
        poll("the node kept in float", lambda: next(
            (True for i in range(rows(kept)) if kept.get_child_at_index(i).get_name() == node), None), timeout=120)
        # the quantized graph, its QDQ pairs collapsed by default
        show_q = poll("Show the Quantized Graph", lambda: find_named(app, "Show the Quantized Graph", buttons))
        Atspi.Action.do_action(show_q, 0)
        collapse = poll("Collapse QDQ Pairs", lambda: find_named(app, "Collapse QDQ Pairs"))
        poll("Collapse QDQ Pairs shown and checked", lambda: (
            collapse.get_state_set().contains(Atspi.StateType.VISIBLE)
            and collapse.get_state_set().contains(Atspi.StateType.CHECKED)) or None)
        print("found:", legend.get_role_name(), "'Sensitivity';", rows(comparison), "comparison rows; kept", node)
        screenshot("quantize-e2e.png")
        print("quantize e2e ok")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
