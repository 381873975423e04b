#!/usr/bin/env bash
# The fuzz smoke run of .ci/run: harnesses of tests/fuzz built as libFuzzer programs
# (clang, -Dfuzzing=true, ASan) in build-fuzz/, each run for OWB_FUZZ_SECONDS (default 40)
# from the committed reproducers, the sample model and the protobuf dictionary. A crash, a
# sanitizer report or a leak fails the job; the input that did it is kept in build-fuzz/crashes/.
# Prints "fuzz: NAME: N execs, ok" per harness and exits non-zero on a finding.
#
# ASan only, at -O1 -g1: clang's UBSan makes the SIMD kernels' always-inline tile variants about
# 13 times as slow to compile (cpu-winograd.c: 19.9 CPU-s with -fsanitize=undefined, 6.4 with
# -fsanitize=address, 1.3 with the coverage instrumentation alone; -O1 or -O2 hardly matters to
# clang there). UBSan runs over the same code in the gcc job (build-aux/ci-sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${OWB_FUZZ_BUILD:-build-fuzz}
seconds=${OWB_FUZZ_SECONDS:-40}
# A fixed seed: CI mutates the same way each time, so a finding there is reproducible (set
# OWB_FUZZ_SEED=0 for a random one in a long run of your own).
seed=${OWB_FUZZ_SEED:-1}
# Every harness of tests/fuzz by default. fuzz-model and fuzz-tensor link the engine alone; the
# others need every kernel compiled with the instrumentation. Measured from an empty build folder
# without ccache (as CI has it), clang 14, 2 cores: all seven built in 114 s at a load of about 1
# and in 351 s at 4-6, where the whole job took 659 s (7 x 40 s of fuzzing plus start-up); CI's
# 40-minute budget had 809 s used before. A subset: OWB_FUZZ_HARNESSES="fuzz-model ...".
read -r -a harnesses <<<"${OWB_FUZZ_HARNESSES:-fuzz-model fuzz-tensor fuzz-run fuzz-optimize fuzz-quantize fuzz-profile fuzz-calibration}"

options=(-Dui=disabled -Dfuzzing=true -Db_sanitize=address -Db_lundef=false -Dbuildtype=plain
         -Dc_args="-O1 -g1 -fno-omit-frame-pointer")
if [ -d "$build/meson-private" ]; then
  CC=clang meson setup --reconfigure "${options[@]}" "$build" >/dev/null
else
  CC=clang meson setup "${options[@]}" "$build" >/dev/null
fi
start=$(date +%s)
ninja -C "$build" -j2 "${harnesses[@]/#/tests/fuzz/}"
echo "fuzz: built in $(( $(date +%s) - start )) s"

export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:halt_on_error=1
status=0
mkdir -p "$build/crashes"
for h in "${harnesses[@]}"; do
  # what the harness reads (the reproducers folder under tests/fuzz/regressions/) and its seeds
  case "$h" in
    fuzz-tensor) kind=tensor; seeds=(data/samples) ;;
    fuzz-profile) kind=profile; seeds=(tests/fuzz/seeds/profile) ;;
    fuzz-calibration) kind=calibration; seeds=(tests/fuzz/seeds/calibration) ;;
    *) kind=model; seeds=(data/samples) ;;
  esac
  [ -d "tests/fuzz/regressions/$kind" ] && seeds+=("tests/fuzz/regressions/$kind")
  # the protobuf field tags help where the bytes are protobuf (models, .pb tensors), not SQLite
  dict=(-dict=tests/fuzz/onnx.dict)
  [ "$h" = fuzz-profile ] && dict=()
  corpus="$build/corpus/$h"
  mkdir -p "$corpus"
  log="$build/$h.log"
  # -timeout: one input may take this long (a Loop the harness cancels after 2 s, a large model);
  # slower is a finding too. -rss_limit_mb: the harnesses cap a run at 64 MiB of tensors.
  if "$build/tests/fuzz/$h" -max_total_time="$seconds" -seed="$seed" -timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
       "${dict[@]}" -artifact_prefix="$build/crashes/$h-" -print_final_stats=1 \
       "$corpus" "${seeds[@]}" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    echo "fuzz: $h: ${execs:-?} execs, ok"
  else
    status=1
    echo "fuzz: $h: FAILED (log: $log; input: $build/crashes/)"
    grep -E "ERROR: |SUMMARY: |runtime error|Test unit written" "$log" | head -20 || true
  fi
done
exit "$status"
