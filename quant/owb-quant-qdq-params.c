/* owb-quant-qdq-params.c: reads back from a QDQ model how one tensor is quantized (type, scales
 * and zero points), for the Quantize page's node detail and for reports. */
#include "owb-quant-private.h"

#include <math.h>
#include <string.h>

void
owb_quant_qdq_params_clear (OwbQuantQdqParams *params)
{
  g_clear_pointer (&params->quantize_node, g_free);
  g_clear_pointer (&params->dequantize_node, g_free);
}

static gboolean
is_op (const OwbNode *node, const char *op_type)
{
  return strcmp (node->op_type, op_type) == 0
         && (node->domain[0] == '\0' || strcmp (node->domain, "ai.onnx") == 0
             || strcmp (node->domain, "com.microsoft") == 0);
}

static const OwbNode *
find_producer (const OwbGraph *g, const char *name)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (g->nodes, i);
      for (int o = 0; o < n->n_outputs; o++)
        if (strcmp (n->outputs[o], name) == 0)
          return n;
    }
  return NULL;
}

/* The QuantizeLinear reading `name`, preferring one a DequantizeLinear reads back. */
static const OwbNode *
find_quantizer_of (const OwbGraph *g, const char *name, const OwbNode **dq)
{
  const OwbNode *found = NULL;
  *dq = NULL;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *q = g_ptr_array_index (g->nodes, i);
      const char *x = owb_node_get_input (q, 0), *y = owb_node_get_output (q, 0);
      if (!is_op (q, "QuantizeLinear") || g_strcmp0 (x, name) != 0 || !y)
        continue;
      if (!found)
        found = q;
      for (guint k = 0; k < g->nodes->len; k++)
        {
          const OwbNode *d = g_ptr_array_index (g->nodes, k);
          if (is_op (d, "DequantizeLinear") && g_strcmp0 (owb_node_get_input (d, 0), y) == 0)
            {
              *dq = d;
              return q;
            }
        }
    }
  return found;
}

/* Scale and zero point from the node that holds them (its inputs 1 and 2); the type from the zero
 * point, else from `stored` (a constant's own type), else the default (uint8, or output_dtype). */
static gboolean
read_params (const OwbGraph *g, const OwbNode *node, const OwbTensor *stored, const char *tensor,
             OwbQuantQdqParams *p, GError **error)
{
  const char *scale_name = owb_node_get_input (node, 1), *zp_name = owb_node_get_input (node, 2);
  const OwbTensor *scale = scale_name ? owb_graph_get_initializer (g, scale_name) : NULL;
  const OwbTensor *zp = zp_name ? owb_graph_get_initializer (g, zp_name) : NULL;
  g_autofree char *what = owb_node_describe (node);
  if (!scale || scale->kind != OWB_VALUE_TENSOR || scale->nelems < 1)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "%s: the scale of tensor '%s' ('%s') is not a constant", what, tensor,
                   scale_name ? scale_name : "");
      return FALSE;
    }
  if (zp_name && (!zp || zp->kind != OWB_VALUE_TENSOR))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "%s: the zero point of tensor '%s' ('%s') is not a constant", what, tensor, zp_name);
      return FALSE;
    }
  if (zp && zp->nelems != 1 && zp->nelems != scale->nelems)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   "%s: tensor '%s' has %" G_GINT64_FORMAT " scales but %" G_GINT64_FORMAT " zero points", what,
                   tensor, scale->nelems, zp->nelems);
      return FALSE;
    }
  p->type = zp ? zp->dtype
          : stored ? stored->dtype
                   : (OwbDataType) owb_node_get_int (node, "output_dtype", OWB_TYPE_UINT8);
  if (p->type == OWB_TYPE_UNDEFINED)
    p->type = OWB_TYPE_UINT8;
  p->n_scales = (guint) scale->nelems;
  p->axis = -1;
  if (scale->rank >= 1 && scale->nelems > 1)
    {
      int64_t axis = owb_node_get_int (node, "axis", 1);
      const OwbTensor *ref = stored;
      if (axis < 0 && ref)
        axis += ref->rank;
      p->axis = (int) MAX (axis, 0);
    }
  p->scale_min = INFINITY;
  p->scale_max = -INFINITY;
  for (int64_t i = 0; i < scale->nelems; i++)
    {
      double s = owb_tensor_get_double (scale, i);
      p->scale_min = MIN (p->scale_min, s);
      p->scale_max = MAX (p->scale_max, s);
    }
  p->zero_point_min = p->zero_point_max = 0;
  for (int64_t i = 0; zp && i < zp->nelems; i++)
    {
      int64_t z = (int64_t) owb_tensor_get_double (zp, i);
      if (i == 0 || z < p->zero_point_min)
        p->zero_point_min = z;
      if (i == 0 || z > p->zero_point_max)
        p->zero_point_max = z;
    }
  return TRUE;
}

gboolean
owb_quant_find_qdq_params (const OwbModel *quantized, const char *tensor, OwbQuantQdqParams *params,
                           GError **error)
{
  memset (params, 0, sizeof *params);
  const OwbGraph *g = quantized->graph;
  const OwbNode *dq = find_producer (g, tensor);
  if (dq && is_op (dq, "DequantizeLinear"))
    {
      const char *stored_name = owb_node_get_input (dq, 0);
      const OwbTensor *stored = stored_name ? owb_graph_get_initializer (g, stored_name) : NULL;
      const OwbNode *q = stored_name && !stored ? find_producer (g, stored_name) : NULL;
      if (q && !is_op (q, "QuantizeLinear"))
        q = NULL;
      /* a QuantizeLinear's own parameters are the ones that round; they match its pair's */
      if (!read_params (g, q ? q : dq, stored, tensor, params, error))
        return FALSE;
      params->dequantize_node = g_strdup (dq->name ? dq->name : "");
      params->quantize_node = q ? g_strdup (q->name ? q->name : "") : NULL;
      return TRUE;
    }
  const OwbNode *pair_dq = NULL;
  const OwbNode *q = find_quantizer_of (g, tensor, &pair_dq);
  if (q)
    {
      if (!read_params (g, q, NULL, tensor, params, error))
        return FALSE;
      params->quantize_node = g_strdup (q->name ? q->name : "");
      params->dequantize_node = pair_dq ? g_strdup (pair_dq->name ? pair_dq->name : "") : NULL;
      return TRUE;
    }
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
               "tensor '%s' is not quantized: no QuantizeLinear reads it and no DequantizeLinear computes it",
               tensor);
  return FALSE;
}
