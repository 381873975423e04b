/* owb-fused-activation-private.h: the activations the engine's fused ops apply last (attribute
 * `activation` with `activation_params`, and NhwcConv's `pointwise_activation`), once for the
 * schemas (engine/ops) and every provider's kernels (providers/cpu, providers/cuda): each provider
 * maps the index to its own kind in a table of OWB_FUSED_ACT_N entries. Header-only (static data
 * and an inline lookup), so the CUDA module, a library of its own, can include it too. */
#pragma once

#include <math.h>
#include <string.h>

typedef enum {
  OWB_FUSED_ACT_RELU,
  OWB_FUSED_ACT_LEAKY_RELU,
  OWB_FUSED_ACT_CLIP,
  OWB_FUSED_ACT_SIGMOID,
  OWB_FUSED_ACT_TANH,
  OWB_FUSED_ACT_HARD_SIGMOID,
  OWB_FUSED_ACT_HARD_SWISH,
  OWB_FUSED_ACT_SWISH,
  OWB_FUSED_ACT_GELU,
  OWB_FUSED_ACT_FAST_GELU,
  OWB_FUSED_ACT_N
} OwbFusedActivation;

/* n_params: how many activation_params the activation takes when they are given; p0, p1: the
 * defaults of the standard op (Swish's alpha, HardSigmoid's alpha and beta...) when they are not. */
static const struct {
  const char *name;
  int n_params;
  double p0, p1;
} _owb_fused_activations[OWB_FUSED_ACT_N] = {
  [OWB_FUSED_ACT_RELU] = { "Relu", 0, 0, 0 },
  [OWB_FUSED_ACT_LEAKY_RELU] = { "LeakyRelu", 1, 0.01, 0 },
  [OWB_FUSED_ACT_CLIP] = { "Clip", 2, -INFINITY, INFINITY },
  [OWB_FUSED_ACT_SIGMOID] = { "Sigmoid", 0, 0, 0 },
  [OWB_FUSED_ACT_TANH] = { "Tanh", 0, 0, 0 },
  [OWB_FUSED_ACT_HARD_SIGMOID] = { "HardSigmoid", 2, 0.2, 0.5 },
  [OWB_FUSED_ACT_HARD_SWISH] = { "HardSwish", 2, 1.0 / 6.0, 0.5 },
  [OWB_FUSED_ACT_SWISH] = { "Swish", 0, 1.0, 0 },
  [OWB_FUSED_ACT_GELU] = { "Gelu", 0, 0, 0 },
  [OWB_FUSED_ACT_FAST_GELU] = { "FastGelu", 0, 0, 0 },
};

/* The list for error messages. */
#define OWB_FUSED_ACTIVATION_NAMES "Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish, Swish, Gelu, FastGelu"

/* The index of the activation called `name`, or -1. */
static inline int
_owb_fused_activation_find (const char *name)
{
  for (int i = 0; i < OWB_FUSED_ACT_N; i++)
    if (strcmp (name, _owb_fused_activations[i].name) == 0)
      return i;
  return -1;
}
