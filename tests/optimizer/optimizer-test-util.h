/* optimizer-test-util.h: what the optimizer tests share: counting ops in a graph, comparing outputs
 * before and after, and declaring graph outputs. */
#pragma once

#include <owb/owb.h>
#include <math.h>
#include <string.h>

static inline guint
count_op (const OwbGraph *g, const char *op)
{
  guint n = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    n += strcmp (((OwbNode *) g_ptr_array_index (g->nodes, i))->op_type, op) == 0;
  return n;
}

/* Largest |a - b| over the largest |a|. */
static inline double
max_rel_diff (const OwbTensor *a, const OwbTensor *b)
{
  g_assert_true (owb_tensor_same_shape (a, b));
  double diff = 0, scale = 1e-12;
  for (int64_t i = 0; i < a->nelems; i++)
    {
      double x = owb_tensor_get_double (a, i), y = owb_tensor_get_double (b, i);
      diff = MAX (diff, fabs (x - y));
      scale = MAX (scale, fabs (x));
    }
  return diff / scale;
}

static inline void
add_output (OwbModel *m, const char *name)
{
  g_ptr_array_add (m->graph->outputs, owb_value_info_new (name, NULL));
}
