#!/bin/sh
# device-check.sh: the checks that need an NVIDIA GPU, in one run (about 8 minutes on 16 cores):
#   1. configure and build with -Dcuda=enabled (build dir build-device, release)
#   2. the CUDA parity test (every op CUDA claims against the CPU) and the decline check
#   3. the ONNX conformance suite with providers cuda,cpu (OWB_CONFORMANCE_PROVIDERS)
#   4. bench/bench-cuda.py: owb cuda against ONNX Runtime's CUDA provider and PyTorch eager
# then a summary. Run it from the repository root on the GPU machine:
#   build-aux/device-check.sh
# From a session without a GPU, through the device tool: copy the conformance cases next to the
# build first (they are not generated there: no network), and carry them:
#   mkdir -p build-device-data && cp -r /tmp/onnx-data build-device-data/
#   run(command="build-aux/device-check.sh", carry=["build-device-data"], timeout_s=590)
# Each step has its own time limit, so that one that hangs leaves time for the rest; every step's
# output is kept in build-device/device-check-*.log (and under $OUT when the device tool sets it).
set -u
cd "$(dirname "$0")/.." || exit 1
JOBS=${JOBS:-$(nproc)}
BUILD=${BUILD:-build-device}
LOGS="$BUILD"
export CCACHE_DIR="${CCACHE_DIR:-$PWD/build-device-data/ccache}"
summary=""
status=0

note () { summary="$summary
$1"; echo "== $1"; }

step () { # step NAME LIMIT_S COMMAND...: runs it with a time limit, logging; records pass/fail
  name=$1; limit=$2; shift 2
  start=$(date +%s)
  timeout "$limit" "$@" > "$LOGS/device-check-$name.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ]; then note "$name: ok (${secs} s)"; else note "$name: FAILED rc=$rc (${secs} s, see $LOGS/device-check-$name.log)"; status=1; fi
  tail -n 15 "$LOGS/device-check-$name.log"
  return $rc
}

echo "== machine"
nvidia-smi -L 2>&1 || echo "nvidia-smi: no GPU listed"
nproc
for tool in meson ninja nvcc gcc python3; do command -v $tool > /dev/null || echo "missing: $tool"; done
command -v nvcc > /dev/null || PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$LOGS"

# 1. build
if [ ! -f "$BUILD/build.ninja" ]; then
  step configure 120 meson setup "$BUILD" -Dcuda=enabled -Dui=disabled -Dbuildtype=release || { echo "$summary"; exit 1; }
fi
step build 300 ninja -C "$BUILD" -j "$JOBS" || { echo "$summary"; exit 1; }

# 2. parity and declines
step parity 240 meson test -C "$BUILD" --no-rebuild --print-errorlogs test-cuda-parity test-cuda-declines
"$BUILD/tests/test-cuda-parity" --verbose > "$LOGS/device-check-parity-detail.log" 2>&1
skipped=$(grep -c "# SKIP" "$LOGS/device-check-parity-detail.log")
passed=$(grep -c "^ok" "$LOGS/device-check-parity-detail.log")
note "parity cases: $passed ok, of which $skipped skipped (skips mean no GPU was found)"

# 3. conformance with CUDA first
if [ -z "${OWB_ONNX_DATA:-}" ] && [ -d build-device-data/onnx-data ]; then
  export OWB_ONNX_DATA="$PWD/build-device-data/onnx-data"
fi
# (the test named conformance takes its providers from the environment; conformance-testdev is the
# test device's run, not wanted here)
export OWB_CONFORMANCE_PROVIDERS=cuda,cpu
step conformance 200 meson test -C "$BUILD" --no-rebuild --print-errorlogs conformance
unset OWB_CONFORMANCE_PROVIDERS
grep -E "passed|failed|total" "$BUILD/tests/conformance/conformance-results.txt" 2>/dev/null | tail -5

# 4. benchmark (needs numpy and onnx; onnxruntime-gpu and torch are optional)
PY=${PYTHON:-python3}
if $PY -c "import numpy, onnx" 2> /dev/null; then
  step bench 200 $PY bench/bench-cuda.py --owb "$BUILD/app/owb" --workdir "$BUILD/bench-cuda" --rounds 1 --iterations 10
else
  note "bench: skipped ($PY has no numpy/onnx)"
fi

for f in "$LOGS"/device-check-*.log; do
  [ -n "${OUT:-}" ] && cp "$f" "$OUT/" 2> /dev/null
done
echo
echo "== summary$summary"
exit $status
