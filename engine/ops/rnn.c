/* rnn.c: schemas and shape inference of the recurrent ops LSTM, GRU and RNN (opsets 1 to 22). */
#include "owb-ops-private.h"

#include <string.h>

#include <owb/owb-error.h>

/* Refuse hidden sizes no real model uses, so that a corrupt attribute cannot request absurd buffers. */
#define MAX_HIDDEN_SIZE (G_GINT64_CONSTANT (1) << 24)

static const char *const activation_names[] = {
  "Sigmoid", "Tanh", "Relu", "HardSigmoid", "LeakyRelu", "ThresholdedRelu",
  "ScaledTanh", "Affine", "Elu", "Softsign", "Softplus",
};

/* gates: weight blocks per direction (LSTM 4, GRU 3, RNN 1); n_activations: per direction. */
static void
family_of (const char *op_type, int *gates, int *n_activations)
{
  if (strcmp (op_type, "LSTM") == 0)
    *gates = 4, *n_activations = 3;
  else if (strcmp (op_type, "GRU") == 0)
    *gates = 3, *n_activations = 2;
  else
    *gates = 1, *n_activations = 1;
}

static gboolean
check_attributes (OwbInferContext *ctx, int n_activations, int *n_directions, int *layout, GError **error)
{
  const OwbNode *node = ctx->node;
  const char *direction = owb_node_get_string (node, "direction", "forward");
  if (strcmp (direction, "forward") == 0 || strcmp (direction, "reverse") == 0)
    *n_directions = 1;
  else if (strcmp (direction, "bidirectional") == 0)
    *n_directions = 2;
  else
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "direction '%s' is not forward, reverse or bidirectional", direction);
      return FALSE;
    }

  *layout = ctx->opset >= 14 ? (int) CLAMP (owb_node_get_int (node, "layout", 0), -1, 2) : 0;
  if (*layout != 0 && *layout != 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "layout %" G_GINT64_FORMAT " is not 0 or 1",
                           owb_node_get_int (node, "layout", 0));
      return FALSE;
    }

  if (owb_node_get_attribute (node, "hidden_size") != NULL)
    {
      int64_t hidden = owb_node_get_int (node, "hidden_size", -1);
      if (hidden <= 0 || hidden > MAX_HIDDEN_SIZE)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "hidden_size %" G_GINT64_FORMAT " is out of range",
                               hidden);
          return FALSE;
        }
    }

  if (owb_node_get_attribute (node, "clip") != NULL)
    {
      float clip = owb_node_get_float (node, "clip", 0.f);
      if (!(clip > 0.f))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "clip %g must be positive", (double) clip);
          return FALSE;
        }
    }

  const char *flags[] = { "input_forget", "linear_before_reset" };
  for (guint i = 0; i < G_N_ELEMENTS (flags); i++)
    {
      int64_t v = owb_node_get_int (node, flags[i], 0);
      if (v != 0 && v != 1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s %" G_GINT64_FORMAT " is not 0 or 1", flags[i], v);
          return FALSE;
        }
    }

  const OwbAttribute *acts = owb_node_get_attribute (node, "activations");
  if (acts != NULL)
    {
      if (acts->type != OWB_ATTR_STRINGS || acts->n != n_activations * *n_directions)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "activations must list %d names (%d per direction), not %d",
                               n_activations * *n_directions, n_activations, acts->n);
          return FALSE;
        }
      for (int i = 0; i < acts->n; i++)
        {
          gboolean known = FALSE;
          for (guint k = 0; k < G_N_ELEMENTS (activation_names) && !known; k++)
            known = g_ascii_strcasecmp (acts->strings[i], activation_names[k]) == 0;
          if (!known)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "unknown activation '%s'", acts->strings[i]);
              return FALSE;
            }
        }
    }
  return TRUE;
}

/* Checks that dims[axis] of input `index` equals `want` when both are known. */
static gboolean
check_dim (OwbInferContext *ctx, int index, const char *what, int axis, OwbDim want, GError **error)
{
  const OwbValueType *t = ctx->inputs[index];
  if (t->rank <= axis || !owb_dim_is_known (want) || !owb_dim_is_known (t->dims[axis]))
    return TRUE;
  if (t->dims[axis].value == want.value)
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                       "input %s: dimension %d is %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT, what, axis,
                       t->dims[axis].value, want.value);
  return FALSE;
}

static OwbDim
dim_times (OwbDim d, int64_t k)
{
  return owb_dim_is_known (d) ? OWB_DIM_VALUE (d.value * k) : OWB_DIM_UNKNOWN;
}

static gboolean
rnn_infer (OwbInferContext *ctx, GError **error)
{
  static const char *const input_names[] = { "X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P" };
  int gates, n_activations, n_directions, layout;
  family_of (ctx->node->op_type, &gates, &n_activations);
  if (!check_attributes (ctx, n_activations, &n_directions, &layout, error))
    return FALSE;

  for (int i = 0; i < 3; i++)
    if (ctx->n_inputs <= i || ctx->inputs[i] == NULL)
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "input %s is required", input_names[i]);
        return FALSE;
      }
  const OwbValueType *x = ctx->inputs[0];
  for (int i = 0; i < ctx->n_inputs && i < 8; i++)
    {
      const OwbValueType *t = ctx->inputs[i];
      if (t == NULL)
        continue;
      if (t->kind != OWB_VALUE_TENSOR)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %s is not a tensor", input_names[i]);
          return FALSE;
        }
      if (i == 4)
        {
          if (t->dtype != OWB_TYPE_INT32 && t->dtype != OWB_TYPE_INT64)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "sequence_lens is %s, expected int32",
                                   owb_data_type_name (t->dtype));
              return FALSE;
            }
        }
      else if (i == 0 ? !_owb_data_type_is_float (t->dtype) : t->dtype != x->dtype)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %s is %s, expected %s", input_names[i],
                               owb_data_type_name (t->dtype),
                               i == 0 ? "a floating-point type" : owb_data_type_name (x->dtype));
          return FALSE;
        }
      int want_rank = i == 3 || i == 7 ? 2 : i == 4 ? 1 : 3;
      if (t->rank >= 0 && t->rank != want_rank)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %s has rank %d, expected %d", input_names[i],
                               t->rank, want_rank);
          return FALSE;
        }
    }

  const OwbValueType *w = ctx->inputs[1], *r = ctx->inputs[2];
  OwbDim hidden = OWB_DIM_UNKNOWN;
  if (owb_node_get_attribute (ctx->node, "hidden_size") != NULL)
    hidden = OWB_DIM_VALUE (owb_node_get_int (ctx->node, "hidden_size", 0));
  else if (r->rank == 3)
    hidden = r->dims[2];
  else if (w->rank == 3 && owb_dim_is_known (w->dims[1]))
    {
      if (w->dims[1].value % gates != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "W dimension 1 (%" G_GINT64_FORMAT ") is not a multiple of %d",
                               w->dims[1].value, gates);
          return FALSE;
        }
      hidden = OWB_DIM_VALUE (w->dims[1].value / gates);
    }

  OwbDim seq = OWB_DIM_UNKNOWN, batch = OWB_DIM_UNKNOWN, input = OWB_DIM_UNKNOWN;
  if (x->rank == 3)
    {
      seq = x->dims[layout == 0 ? 0 : 1];
      batch = x->dims[layout == 0 ? 1 : 0];
      input = x->dims[2];
    }
  OwbDim nd = OWB_DIM_VALUE (n_directions);
  /* Cell-state and peephole inputs exist only for LSTM; inputs past n_inputs are absent. */
  const OwbValueType *b = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  const OwbValueType *lens = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  if (!check_dim (ctx, 1, "W", 0, nd, error) || !check_dim (ctx, 1, "W", 1, dim_times (hidden, gates), error)
      || !check_dim (ctx, 1, "W", 2, input, error) || !check_dim (ctx, 2, "R", 0, nd, error)
      || !check_dim (ctx, 2, "R", 1, dim_times (hidden, gates), error) || !check_dim (ctx, 2, "R", 2, hidden, error))
    return FALSE;
  if (b != NULL && (!check_dim (ctx, 3, "B", 0, nd, error) || !check_dim (ctx, 3, "B", 1, dim_times (hidden, 2 * gates), error)))
    return FALSE;
  if (lens != NULL && !check_dim (ctx, 4, "sequence_lens", 0, batch, error))
    return FALSE;
  for (int i = 5; i <= 6 && i < ctx->n_inputs; i++)
    {
      if (ctx->inputs[i] == NULL)
        continue;
      const char *what = input_names[i];
      if (!check_dim (ctx, i, what, layout == 0 ? 0 : 1, nd, error)
          || !check_dim (ctx, i, what, layout == 0 ? 1 : 0, batch, error) || !check_dim (ctx, i, what, 2, hidden, error))
        return FALSE;
    }
  if (ctx->n_inputs > 7 && ctx->inputs[7] != NULL
      && (!check_dim (ctx, 7, "P", 0, nd, error) || !check_dim (ctx, 7, "P", 1, dim_times (hidden, 3), error)))
    return FALSE;

  OwbDataType dtype = x->dtype;
  for (int o = 0; o < ctx->n_outputs; o++)
    {
      OwbValueType *out = &ctx->outputs[o];
      out->kind = OWB_VALUE_TENSOR;
      out->dtype = dtype;
      if (x->rank < 0)
        {
          out->rank = o == 0 ? 4 : 3;
          for (int k = 0; k < out->rank; k++)
            out->dims[k] = OWB_DIM_UNKNOWN;
          if (o == 0)
            out->dims[layout == 0 ? 1 : 2] = nd, out->dims[3] = hidden;
          else
            out->dims[layout == 0 ? 0 : 1] = nd, out->dims[2] = hidden;
          continue;
        }
      if (o == 0)
        {
          out->rank = 4;
          if (layout == 0)
            out->dims[0] = seq, out->dims[1] = nd, out->dims[2] = batch;
          else
            out->dims[0] = batch, out->dims[1] = seq, out->dims[2] = nd;
          out->dims[3] = hidden;
        }
      else
        {
          out->rank = 3;
          if (layout == 0)
            out->dims[0] = nd, out->dims[1] = batch;
          else
            out->dims[0] = batch, out->dims[1] = nd;
          out->dims[2] = hidden;
        }
    }
  return TRUE;
}

/* One row per op: the versions (1, 3 for GRU, 7, 14, 22) differ only in attributes (output_sequence
 * dropped at 7, layout added at 14) and types, which rnn_infer reads by opset. */
const OwbOpSchema _owb_ops_rnn[] = {
  { "LSTM", "", 1, 3, 8, 0, 3, rnn_infer },
  { "GRU", "", 1, 3, 6, 0, 2, rnn_infer },
  { "RNN", "", 1, 3, 6, 0, 2, rnn_infer },
  { NULL }
};
