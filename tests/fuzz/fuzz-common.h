/* fuzz-common.h: what the fuzz harnesses share: one libFuzzer entry point per harness, and the
 * limits that keep one input from taking the machine (memory of a run, its time). */
#pragma once

#include <owb/owb.h>

#include <stdint.h>

/* The libFuzzer entry point; replay-main.c calls it on committed files in normal builds. */
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A run may hold this much in tensors (OwbSessionOptions.memory_limit) ... */
#define FUZZ_MEMORY_LIMIT ((gsize) 64 << 20)
/* ... and a model this many bytes of inputs in all. */
#define FUZZ_MAX_INPUT_ELEMENTS 4096
/* A run is cancelled after this long (a Loop whose trip count comes from the input). */
#define FUZZ_RUN_SECONDS 2
/* fuzz-run and fuzz-quantize run or quantize graphs of at most this many nodes (see there). */
#define FUZZ_MAX_NODES 4096
