#!/bin/sh
# Takes the README's screenshots under Xvfb (see take-screenshots.py). Needs a built tree
# (build/), ImageMagick and the end-to-end test's packages.
set -e
cd "$(dirname "$0")/.."
OWB_KEEP_A11Y=1 exec tests/ui/gui-test.sh /usr/bin/python3 build-aux/take-screenshots.py "$@"
