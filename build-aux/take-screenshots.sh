#!/bin/sh
# Takes the README's screenshots under Xvfb (see take-screenshots.py). Needs a built tree
# (build/), ImageMagick and the end-to-end test's packages.
set -e
cd "$(dirname "$0")/.."
exec xvfb-run -a -s "-screen 0 1600x1000x24" dbus-run-session -- /usr/bin/python3 build-aux/take-screenshots.py "$@"
