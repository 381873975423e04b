/* cpu-activation-private.h: the activation epilogue of the fused ops (FusedConv, FusedGemm,
 * FusedMatMul, NhwcConv): its kinds and parameters, parsed once from a node's `activation` and
 * `activation_params` attributes, and the AVX2 sigmoid the kernels share (the costly one). */
#pragma once

#include <owb/owb.h>

G_BEGIN_DECLS

typedef enum {
  OWB_CPU_ACT_NONE,
  OWB_CPU_ACT_RELU,
  OWB_CPU_ACT_LEAKY_RELU,
  OWB_CPU_ACT_CLIP,
  OWB_CPU_ACT_SIGMOID,
  OWB_CPU_ACT_TANH,
  OWB_CPU_ACT_HARD_SIGMOID,
  OWB_CPU_ACT_HARD_SWISH,
  OWB_CPU_ACT_SWISH,
  OWB_CPU_ACT_GELU,
  OWB_CPU_ACT_FAST_GELU,
} OwbCpuActivationKind;

typedef struct {
  OwbCpuActivationKind kind;
  double p0, p1; /* LeakyRelu alpha; Clip min, max; HardSigmoid/HardSwish alpha, beta */
} OwbCpuActivation;

/* Reads the node's activation (none when absent). An unknown name or a wrong number of
 * activation_params is an OWB_ERROR_INVALID_MODEL error naming the node. */
gboolean _owb_cpu_activation_parse (const OwbNode *node, OwbCpuActivation *act, GError **error);
/* The same from other attributes (NhwcPointwiseDepthwise's pointwise_activation and
 * pointwise_activation_params). */
gboolean _owb_cpu_activation_parse_named (const OwbNode *node, const char *attr, const char *params_attr,
                                          OwbCpuActivation *act, GError **error);

/* y = y / (1 + e^-y) (swish) or 1 / (1 + e^-y) over n floats in AVX-512 or AVX2 + FMA vectors,
 * within a few ulp of the float formula (NaN passes); FALSE, with nothing done, on a CPU with
 * neither. */
gboolean _owb_cpu_sigmoid_vector (float *y, int64_t n, gboolean swish);
/* Sigmoid and tanh over n floats in place (AVX2 where the CPU has it), for the RNN gates. */
void _owb_cpu_sigmoid_f32 (float *x, int64_t n);
void _owb_cpu_tanh_f32 (float *x, int64_t n);

G_END_DECLS
