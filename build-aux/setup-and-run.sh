#!/usr/bin/env bash
# Sets up ONNX Workbench and runs its main job on the bundled sample model: installs the build
# dependencies (Debian 12, as root), builds, then inspects and runs data/samples/tiny-cnn.onnx.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  bash build-aux/install-deps.sh
else
  echo "setup-and-run: not root or not Debian: skipping the package install (see build-aux/install-deps.sh)" >&2
fi
if [ -d build/meson-private ]; then
  meson setup --reconfigure build >/dev/null
else
  meson setup build >/dev/null
fi
ninja -C build -j"$(nproc)"

set -x
build/app/owb inspect data/samples/tiny-cnn.onnx
build/app/owb run data/samples/tiny-cnn.onnx --input image=data/samples/tiny-cnn-input.pb
