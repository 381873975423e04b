#!/usr/bin/env bash
# Installs what building and testing ONNX Workbench needs on Debian 12 (run as root). The
# conformance step later pip-installs onnx into a venv in the build folder.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
  meson ninja-build pkg-config gcc libc6-dev libglib2.0-dev protobuf-c-compiler libprotobuf-c-dev \
  libopenblas-dev libjpeg-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev python3 python3-venv python3-pip ca-certificates
