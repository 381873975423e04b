"""Fails when a layer below ui/ includes GTK, GDK or libadwaita (DESIGN.md: the engine is a
library usable without the GUI)."""
import os
import re
import sys

root = sys.argv[1]
pattern = re.compile(r'#\s*include\s*[<"](gtk|gdk|adwaita|libadwaita)')
bad = []
for layer in ("engine", "providers", "quant", "profiler", "data", os.path.join("ui", "layout")):
    for dirpath, _, files in os.walk(os.path.join(root, layer)):
        for name in files:
            if name.endswith((".c", ".h", ".cu")):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        if pattern.search(line):
                            bad.append(f"{os.path.relpath(path, root)}:{n}: {line.strip()}")
if bad:
    print("GTK included below ui/:\n" + "\n".join(bad))
    sys.exit(1)
print("layering ok")
