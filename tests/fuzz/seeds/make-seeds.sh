#!/usr/bin/env bash
# How the seeds of fuzz-profile and fuzz-calibration were made (rerun after a schema change):
#   bash tests/fuzz/seeds/make-seeds.sh build/app/owb
# profile/: a database `owb profile` wrote (two runs of the sample model, as written, WAL), and
# the same compacted to 512-byte pages (mutations hit more of it).
# calibration/: folders in fuzz-calibration.c's layout, a header of two bytes (folder kind and
# image extension; where the rest splits) and the files: the sample's input as .pb, as .npy, one
# of each in two sample folders, and an 8x8 image as PNG, JPEG, BMP, PPM and PGM (ImageMagick).
set -euo pipefail
cd "$(dirname "$0")"
owb=$(realpath "$1")
python=${PYTHON:-$HOME/.cache/owb-ort-venv/bin/python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sample=../../../data/samples

rm -f profile/* calibration/*
"$owb" profile --db "$tmp/runs.db" --label seed -t 1 --warmup 1 -n 2 "$sample/tiny-cnn.onnx" >/dev/null
"$owb" profile --db "$tmp/runs.db" -O disabled -t 1 --warmup 1 -n 2 "$sample/tiny-cnn.onnx" >/dev/null
cp "$tmp/runs.db" profile/two-runs.db
cp "$tmp/runs.db" "$tmp/small.db"
sqlite3 "$tmp/small.db" "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;" >/dev/null
cp "$tmp/small.db" profile/two-runs-512-byte-pages.db

# header: byte 0 = kind | two files << 2 | extension << 3; with two files, the first's length
seed () { # NAME BYTE0 FILE [FILE2]
  local name=$1 b0=$2; shift 2
  "$python" - "$b0" "$@" >"calibration/$name" <<'PY'
import struct, sys
parts = [open(p, "rb").read() for p in sys.argv[2:]]
head = bytes([int(sys.argv[1])]) + (struct.pack("<I", len(parts[0])) if len(parts) == 2 else b"")
sys.stdout.buffer.write(head + b"".join(parts))
PY
}
"$python" -c "
import numpy as np, onnx.numpy_helper as nh, onnx
t = onnx.TensorProto(); t.ParseFromString(open('$sample/tiny-cnn-input.pb', 'rb').read())
np.save('$tmp/input.npy', nh.to_array(t).astype(np.float32))
x = (np.arange(8 * 8 * 3) * 5 % 256).astype(np.uint8).reshape(8, 8, 3)
open('$tmp/image.ppm', 'wb').write(b'P6 8 8 255\n' + x.tobytes())
open('$tmp/image.pgm', 'wb').write(b'P5 8 8 255\n' + x[:, :, 0].tobytes())
"
for fmt in png jpg bmp; do convert "$tmp/image.ppm" "$tmp/image.$fmt"; done
seed pb-sample 0 "$sample/tiny-cnn-input.pb"
seed npy-sample 1 "$tmp/input.npy"
seed two-sample-folders 2 "$sample/tiny-cnn-input.pb" "$tmp/input.npy"
seed image-png $((3 | 0 << 3)) "$tmp/image.png"
seed image-jpg $((3 | 1 << 3)) "$tmp/image.jpg"
seed image-bmp $((3 | 3 << 3)) "$tmp/image.bmp"
seed image-ppm $((3 | 4 << 3)) "$tmp/image.ppm"
seed image-pgm $((3 | 5 << 3)) "$tmp/image.pgm"
seed two-images-png-jpg $((3 | 4 | 0 << 3)) "$tmp/image.png" "$tmp/image.jpg"
ls -l profile calibration
