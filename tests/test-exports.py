"""Fails when a shared library of the project exports anything but its public API, or when a
function its public headers declare is not exported.

The libraries are built with hidden symbol visibility (owb/owb-api.h): a declaration in a public
header is exported only if it carries OWB_API. So this checks both ways, per library:
  - `nm -D --defined-only` lists only names with the library's prefix (owb_, owb_quant_,
    owb_prof_) besides the linker's own (_init, _fini, ...): no _owb_* internal, no helper of a
    linked-in library;
  - every function declared in the public headers is exported: a new public function declared
    without OWB_API is reported by name.

Usage: test-exports.py LIB PREFIX HEADER... [-- LIB PREFIX HEADER... ...]"""
import glob
import os
import re
import shutil
import subprocess
import sys

# Defined by the linker or the C runtime in every shared object, not by our code.
LINKER_SYMBOLS = {"_init", "_fini", "__bss_start", "_edata", "_end"}


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            names.add(parts[2].split("@")[0])
    return names


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # Preprocessor lines, continuations included.
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    return text


def declarations(header):
    """(name, has OWB_API) of every function declared at file scope of a header."""
    text = strip(open(header, encoding="utf-8").read())
    found = []
    depth = 0
    start = 0
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                head = text[start:i]
                # A static inline definition: not a declaration of an exported function.
                if re.search(r"\bstatic\b", head):
                    start = None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and start is None:
                start = i + 1
        elif c == ";" and depth == 0:
            if start is not None:
                stmt = text[start:i]
                stmt = re.sub(r"\bG_(BEGIN|END)_DECLS\b", " ", stmt)
                stmt = re.sub(r"\bG_DEFINE_\w+\s*\([^)]*\)", " ", stmt)
                words = stmt.split()
                if words and words[0] not in ("typedef", "struct", "enum", "union"):
                    m = re.search(r"\b(\w+)\s*\(", stmt)
                    if m and m.group(1) != "OWB_API":
                        found.append((m.group(1), "OWB_API" in words))
            start = i + 1
    return found


def check(lib, prefix, headers, problems):
    names = exported(lib)
    base = os.path.basename(lib)
    for name in sorted(names):
        if name in LINKER_SYMBOLS or name.startswith(prefix):
            continue
        problems.append(f"{base} exports {name}, which is not public API")
    for header in headers:
        for name, marked in declarations(header):
            where = os.path.basename(header)
            if not marked:
                problems.append(f"{where} declares {name} without OWB_API")
            elif name not in names:
                problems.append(f"{where} declares {name} OWB_API, but {base} does not export it")


def main(argv):
    if shutil.which("nm") is None:
        print("nm (binutils) not found")
        return 77
    groups, current = [], []
    for arg in argv[1:]:
        if arg == "--":
            groups.append(current)
            current = []
        else:
            current.append(arg)
    groups.append(current)
    problems = []
    for group in groups:
        lib, prefix, *headers = group
        expanded = []
        for h in headers:
            expanded += sorted(glob.glob(os.path.join(h, "*.h"))) if os.path.isdir(h) else [h]
        check(lib, prefix, expanded, problems)
        print(f"{os.path.basename(lib)}: {len(exported(lib))} symbols checked")
    if problems:
        print("\n".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
