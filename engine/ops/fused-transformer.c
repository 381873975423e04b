/* fused-transformer.c: schemas and shape inference of the engine's own fused transformer ops (domain
 * ai.onnx.workbench): LayerNormalization and Gelu for opsets without the standard ones, BiasGelu,
 * SkipLayerNormalization and MultiHeadAttention. The optimizer creates them; models may use them too. */
#include "owb-ops-private.h"
#include <owb/owb-error.h>

#include <math.h>
#include <string.h>

/* Input i (when present) must be a tensor of a floating type, the same as input 0's. */
static gboolean
check_float_input (OwbInferContext *ctx, int i, GError **error)
{
  const OwbValueType *t = ctx->inputs[i];
  if (!t)
    return TRUE;
  if (t->kind != OWB_VALUE_TENSOR && t->kind != OWB_VALUE_UNKNOWN_KIND)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d must be a tensor", i);
      return FALSE;
    }
  if (t->dtype == OWB_TYPE_UNDEFINED)
    return TRUE;
  if (!_owb_data_type_is_float (t->dtype))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d has element type %s; a floating type is required", i,
                           owb_data_type_name (t->dtype));
      return FALSE;
    }
  const OwbValueType *x = ctx->inputs[0];
  if (i > 0 && x->dtype != OWB_TYPE_UNDEFINED && t->dtype != x->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d has element type %s, input 0 has %s", i,
                           owb_data_type_name (t->dtype), owb_data_type_name (x->dtype));
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_float_inputs (OwbInferContext *ctx, GError **error)
{
  for (int i = 0; i < ctx->n_inputs; i++)
    if (!check_float_input (ctx, i, error))
      return FALSE;
  return TRUE;
}

/* Two dims that are certainly different (both known and unequal). */
static gboolean
dims_conflict (OwbDim a, OwbDim b)
{
  return owb_dim_is_known (a) && owb_dim_is_known (b) && a.value != b.value;
}

static gboolean
check_approximate (OwbInferContext *ctx, GError **error)
{
  const char *approximate = owb_node_get_string (ctx->node, "approximate", "none");
  if (strcmp (approximate, "none") != 0 && strcmp (approximate, "tanh") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "approximate must be \"none\" or \"tanh\", not \"%s\"",
                           approximate);
      return FALSE;
    }
  return TRUE;
}

/* Input i must broadcast to X's dims [axis:] without growing them (X's trailing dims). */
static gboolean
check_broadcasts_to_tail (OwbInferContext *ctx, int i, int axis, GError **error)
{
  const OwbValueType *x = ctx->inputs[0], *t = ctx->inputs[i];
  if (!t || t->rank < 0 || x->rank < 0)
    return TRUE;
  int tail = x->rank - axis;
  gboolean ok = t->rank <= tail;
  for (int k = 0; ok && k < t->rank; k++)
    {
      OwbDim d = t->dims[k];
      ok = !(owb_dim_is_known (d) && d.value != 1 && dims_conflict (d, x->dims[x->rank - t->rank + k]));
    }
  if (!ok)
    {
      char *s = owb_value_type_to_string (t);
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d (%s) does not broadcast to the normalized dims", i, s);
      g_free (s);
      return FALSE;
    }
  return TRUE;
}

/* Outputs 1 and 2 of the layer norms: per-row mean and inverse standard deviation, as float, with the
 * normalized dims kept as 1. */
static void
set_statistics_outputs (OwbInferContext *ctx, int first, int last, int axis)
{
  const OwbValueType *x = ctx->inputs[0];
  for (int i = first; i <= last && i < ctx->n_outputs; i++)
    {
      OwbValueType *o = &ctx->outputs[i];
      *o = *x;
      o->dtype = OWB_TYPE_FLOAT;
      for (int k = axis; k < x->rank; k++)
        o->dims[k] = OWB_DIM_VALUE (1);
    }
}

static gboolean
infer_layer_normalization (OwbInferContext *ctx, GError **error)
{
  if (!check_float_inputs (ctx, error) || !_owb_infer_check_epsilon (ctx, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  owb_infer_copy (ctx, 0, 0);
  if (x->rank < 0)
    return TRUE;
  if (x->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input X must have rank 1 or more");
      return FALSE;
    }
  int axis;
  if (!owb_infer_axis (ctx, owb_node_get_int (ctx->node, "axis", -1), x->rank, &axis, error))
    return FALSE;
  for (int i = 1; i < ctx->n_inputs && i < 3; i++)
    if (!check_broadcasts_to_tail (ctx, i, axis, error))
      return FALSE;
  set_statistics_outputs (ctx, 1, 2, axis);
  return TRUE;
}

static gboolean
infer_gelu (OwbInferContext *ctx, GError **error)
{
  if (!check_float_inputs (ctx, error) || !check_approximate (ctx, error))
    return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* A vector input (i) must have rank 1 and `count` elements when both are known. */
static gboolean
check_vector (OwbInferContext *ctx, int i, OwbDim count, const char *what, GError **error)
{
  const OwbValueType *t = ctx->inputs[i];
  if (!t || t->rank < 0)
    return TRUE;
  if (t->rank != 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%s (input %d) must have rank 1, not %d", what, i, t->rank);
      return FALSE;
    }
  if (dims_conflict (t->dims[0], count))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "%s (input %d) has %" G_GINT64_FORMAT " elements, the last dim of the input is %" G_GINT64_FORMAT,
                           what, i, t->dims[0].value, count.value);
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_bias_gelu (OwbInferContext *ctx, GError **error)
{
  if (!check_float_inputs (ctx, error) || !check_approximate (ctx, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  if (x->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input X must have rank 1 or more");
      return FALSE;
    }
  if (x->rank > 0 && !check_vector (ctx, 1, x->dims[x->rank - 1], "bias", error))
    return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* SkipLayerNormalization (input, skip, gamma, beta?, bias?) -> (output, mean?, inv_std_var?,
 * input_skip_bias_sum?), output indices as in ONNX Runtime's contrib op. Normalizes the last axis. */
static gboolean
infer_skip_layer_normalization (OwbInferContext *ctx, GError **error)
{
  if (!check_float_inputs (ctx, error) || !_owb_infer_check_epsilon (ctx, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0], *skip = ctx->inputs[1];
  owb_infer_copy (ctx, 0, 0);
  if (ctx->n_outputs > 3)
    owb_infer_copy (ctx, 3, 0);
  if (x->rank < 0)
    return TRUE;
  if (x->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have rank 1 or more");
      return FALSE;
    }
  /* skip has the input's shape, or its trailing dims (broadcast over the leading ones). */
  if (skip->rank >= 0)
    {
      int lead = 0; /* leading 1s broadcast */
      while (lead < skip->rank - 1 && owb_dim_is_known (skip->dims[lead]) && skip->dims[lead].value == 1)
        lead++;
      gboolean ok = skip->rank - lead <= x->rank;
      for (int k = lead; ok && k < skip->rank; k++)
        ok = !dims_conflict (skip->dims[k], x->dims[x->rank - skip->rank + k]);
      if (!ok)
        {
          char *a = owb_value_type_to_string (x), *b = owb_value_type_to_string (skip);
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "skip %s does not match input %s", b, a);
          g_free (a);
          g_free (b);
          return FALSE;
        }
    }
  static const char *const names[] = { NULL, NULL, "gamma", "beta", "bias" };
  for (int i = 2; i < ctx->n_inputs && i < 5; i++)
    if (!check_vector (ctx, i, x->dims[x->rank - 1], names[i], error))
      return FALSE;
  set_statistics_outputs (ctx, 1, 2, x->rank - 1);
  return TRUE;
}

/* MultiHeadAttention (query, key?, value?, attention_bias?) -> output.
 * query/key/value are [batch, seq, hidden] ([seq, batch, hidden] with seq_first = 1); without key
 * and value, query packs Q, K and V along its last dim (3 * hidden). attention_bias is added to the
 * scaled scores and broadcasts to [batch, num_heads, q_seq, kv_seq]. scale defaults to
 * 1/sqrt(head_size). */
static gboolean
infer_multi_head_attention (OwbInferContext *ctx, GError **error)
{
  if (!check_float_inputs (ctx, error))
    return FALSE;
  const OwbAttribute *heads_attr = owb_node_get_attribute (ctx->node, "num_heads");
  if (!heads_attr || heads_attr->type != OWB_ATTR_INT || heads_attr->i < 1 || heads_attr->i > (1 << 20))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute num_heads (a positive int) is required");
      return FALSE;
    }
  int64_t heads = heads_attr->i;
  int64_t seq_first;
  if (!_owb_infer_get_flag (ctx, "seq_first", 0, &seq_first, error))
    return FALSE;
  const OwbAttribute *scale = owb_node_get_attribute (ctx->node, "scale");
  if (scale && (scale->type != OWB_ATTR_FLOAT || !isfinite (scale->f)))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "scale must be a finite float");
      return FALSE;
    }
  const OwbValueType *q = ctx->inputs[0];
  const OwbValueType *k = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  const OwbValueType *v = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const OwbValueType *bias = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  if ((k == NULL) != (v == NULL))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "key and value must both be given or both be missing");
      return FALSE;
    }
  OwbValueType *out = &ctx->outputs[0];
  owb_value_type_init_unknown (out);
  out->kind = OWB_VALUE_TENSOR;
  out->dtype = q->dtype;
  const OwbValueType *inputs[3] = { q, k, v };
  for (int i = 0; i < 3; i++)
    if (inputs[i] && inputs[i]->rank >= 0 && inputs[i]->rank != 3)
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d must have rank 3, not %d", i, inputs[i]->rank);
        return FALSE;
      }
  if (q->rank < 0 || (k && (k->rank < 0 || v->rank < 0)))
    return TRUE;
  int b_axis = seq_first ? 1 : 0, s_axis = seq_first ? 0 : 1;
  OwbDim hidden_v;
  if (!k)
    {
      OwbDim packed = q->dims[2];
      if (owb_dim_is_known (packed) && (packed.value % (3 * heads) != 0))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "packed query's last dim %" G_GINT64_FORMAT " is not 3 * num_heads (%" G_GINT64_FORMAT
                               ") * head_size",
                               packed.value, heads);
          return FALSE;
        }
      hidden_v = owb_dim_is_known (packed) ? OWB_DIM_VALUE (packed.value / 3) : OWB_DIM_UNKNOWN;
    }
  else
    {
      OwbDim hq = q->dims[2], hk = k->dims[2], hv = v->dims[2];
      if (dims_conflict (hq, hk) || dims_conflict (q->dims[b_axis], k->dims[b_axis])
          || dims_conflict (q->dims[b_axis], v->dims[b_axis]) || dims_conflict (k->dims[s_axis], v->dims[s_axis]))
        {
          char *a = owb_value_type_to_string (q), *b = owb_value_type_to_string (k), *c = owb_value_type_to_string (v);
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "query %s, key %s and value %s do not agree", a, b, c);
          g_free (a);
          g_free (b);
          g_free (c);
          return FALSE;
        }
      const OwbDim dims[3] = { hq, hk, hv };
      for (int i = 0; i < 3; i++)
        if (owb_dim_is_known (dims[i]) && dims[i].value % heads != 0)
          {
            owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                 "hidden size %" G_GINT64_FORMAT " of input %d is not a multiple of num_heads %" G_GINT64_FORMAT,
                                 dims[i].value, i, heads);
            return FALSE;
          }
      hidden_v = hv;
    }
  if (bias && bias->rank > 4)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "attention_bias must have rank 4 or less, not %d", bias->rank);
      return FALSE;
    }
  if (bias && bias->rank >= 0)
    {
      /* [batch, heads, q_seq, kv_seq], right-aligned. */
      OwbDim want[4] = { q->dims[b_axis], OWB_DIM_VALUE (heads), q->dims[s_axis],
                         k ? k->dims[s_axis] : q->dims[s_axis] };
      for (int d = 0; d < bias->rank; d++)
        {
          OwbDim bd = bias->dims[d], wd = want[4 - bias->rank + d];
          if (owb_dim_is_known (bd) && bd.value != 1 && dims_conflict (bd, wd))
            {
              char *s = owb_value_type_to_string (bias);
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "attention_bias %s does not broadcast to [batch, num_heads, q_seq, kv_seq]", s);
              g_free (s);
              return FALSE;
            }
        }
    }
  out->rank = 3;
  out->dims[0] = q->dims[0];
  out->dims[1] = q->dims[1];
  out->dims[2] = hidden_v;
  return TRUE;
}

const OwbOpSchema _owb_ops_fused_transformer[] = {
  { "LayerNormalization", OWB_DOMAIN, 1, 2, 3, 1, 3, infer_layer_normalization },
  { "Gelu", OWB_DOMAIN, 1, 1, 1, 1, 1, infer_gelu },
  { "BiasGelu", OWB_DOMAIN, 1, 2, 2, 1, 1, infer_bias_gelu },
  { "SkipLayerNormalization", OWB_DOMAIN, 1, 3, 5, 1, 4, infer_skip_layer_normalization },
  { "MultiHeadAttention", OWB_DOMAIN, 1, 1, 4, 1, 1, infer_multi_head_attention },
  { NULL }
};
