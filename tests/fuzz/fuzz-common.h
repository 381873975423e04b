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
/* fuzz-run and fuzz-quantize run or quantize graphs of at most this many nodes, fuzz-optimize
 * optimizes larger ones at the top level only (see there). */
#define FUZZ_MAX_NODES 4096

/* The model the bytes hold, or NULL: bytes that are no model are most of a fuzzer's inputs, and
 * their error is the loader's to check (fuzz-model). */
static inline OwbModel *
fuzz_load_model (const uint8_t *data, size_t size)
{
  GError *error = NULL;
  OwbModel *model = owb_model_load_from_data (data, size, NULL, &error);
  if (!model)
    g_error_free (error);
  return model;
}

/* The same, NULL also for a graph of more than FUZZ_MAX_NODES nodes. */
static inline OwbModel *
fuzz_load_small_model (const uint8_t *data, size_t size)
{
  OwbModel *model = fuzz_load_model (data, size);
  if (model && model->graph->nodes->len > FUZZ_MAX_NODES)
    g_clear_pointer (&model, owb_model_unref);
  return model;
}
