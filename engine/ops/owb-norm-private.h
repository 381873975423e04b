/* owb-norm-private.h: the attribute rules that the pooling and normalization schemas (engine/ops/
 * norm.c) and their CPU kernels (providers/cpu/kernels/norm.c) both apply, so that shape inference
 * and the kernel cannot read a node differently. Header-only: static inline, no state. */
#pragma once

#include <owb/owb-graph.h>

/* MaxPool, AveragePool and LpPool share their geometry. (Not taken from the node's op_type: the
 * channels-last schemas infer through these with their own nodes.) */
typedef enum { OWB_POOL_MAX, OWB_POOL_AVERAGE, OWB_POOL_LP } OwbPoolKind;

/* Which versions of each pooling op have the dilations attribute: in older ones a dilations
 * attribute is not part of the op and is ignored. */
static inline gboolean
_owb_pool_has_dilations (OwbPoolKind kind, int opset)
{
  return (kind == OWB_POOL_MAX && opset >= 10) || (kind == OWB_POOL_AVERAGE && opset >= 19)
         || (kind == OWB_POOL_LP && opset >= 18);
}

/* MeanVarianceNormalization's axes: the attribute, or (0, 2, 3) when it is absent. */
static inline const int64_t *
_owb_mvn_axes (const OwbNode *node, int *n)
{
  static const int64_t default_axes[] = { 0, 2, 3 };
  const int64_t *axes = owb_node_get_ints (node, "axes", n);
  if (axes)
    return axes;
  *n = 3;
  return default_axes;
}
