#!/usr/bin/env bash
# Installs what building and testing ONNX Workbench needs on Debian 12 (run as root). The
# conformance step later pip-installs onnx into a venv in the build folder. libsqlite3-dev: the
# profiler's store. python3-numpy: the quantizer's reference test computes ranges with it.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
  meson ninja-build pkg-config gcc libc6-dev libglib2.0-dev protobuf-c-compiler libprotobuf-c-dev \
  libopenblas-dev libjpeg-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev libsqlite3-dev \
  python3 python3-venv python3-pip python3-numpy ca-certificates
# The desktop app and its tests: GTK 4 + libadwaita, gettext, Xvfb with a D-Bus session, the
# accessibility bus and python3-gi for the end-to-end test, validators for the data files.
apt-get install -y --no-install-recommends \
  libgtk-4-dev libadwaita-1-dev libglib2.0-bin libglib2.0-dev-bin gettext shared-mime-info \
  adwaita-icon-theme librsvg2-common fonts-dejavu-core xvfb xauth dbus dbus-daemon dbus-x11 \
  at-spi2-core python3-gi gir1.2-atspi-2.0 desktop-file-utils appstream
# The reliability jobs of .ci/run: libFuzzer and the sanitizer runtimes come with clang 14.
apt-get install -y --no-install-recommends clang libclang-rt-14-dev
