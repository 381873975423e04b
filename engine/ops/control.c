/* control.c: schemas and shape inference of the control-flow (If, Loop, Scan), sequence and
 * optional ops. Subgraph output types come from the subgraphs' own (earlier) inference. */
#include "owb-ops-private.h"
#include <owb/owb-error.h>

#include <string.h>

/* ---- helpers ---- */

static const OwbGraph *
require_graph (OwbInferContext *ctx, const char *name, GError **error)
{
  const OwbGraph *g = owb_node_get_graph (ctx->node, name);
  if (!g)
    owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "graph attribute '%s' is missing", name);
  return g;
}

/* A value nothing is known about (what inference passes for untyped inputs). */
static gboolean
type_is_unknown (const OwbValueType *t)
{
  return !t || t->kind == OWB_VALUE_UNKNOWN_KIND
         || (t->kind == OWB_VALUE_TENSOR && t->dtype == OWB_TYPE_UNDEFINED && t->rank < 0);
}

/* Every present input has a value: the concrete run-time pass (or an all-constant node at load).
 * Control-flow outputs are then left unshaped so the executor does not allocate what the kernel
 * replaces with the subgraph's own result. */
static gboolean
at_run_time (OwbInferContext *ctx)
{
  owb_infer_note_value_read (ctx, -1);
  if (!ctx->input_values)
    return FALSE;
  gboolean any = FALSE;
  for (int i = 0; i < ctx->n_inputs; i++)
    if (ctx->inputs[i])
      {
        if (!ctx->input_values[i])
          return FALSE;
        any = TRUE;
      }
  return any;
}

static const OwbValueType *
graph_output_type (const OwbGraph *g, guint i)
{
  if (!g || i >= g->outputs->len)
    return NULL;
  const OwbValueInfo *info = g_ptr_array_index (g->outputs, i);
  return info->has_type ? &info->type : NULL;
}

static gboolean
same_dim (OwbDim a, OwbDim b)
{
  if (owb_dim_is_known (a) || owb_dim_is_known (b))
    return a.value == b.value;
  return a.param && a.param == b.param;
}

/* The most specific type that both a and b satisfy (either may be NULL or unknown: then only
 * the kind and element type of the other are kept). */
static void
merge_types (const OwbValueType *a, const OwbValueType *b, OwbValueType *out)
{
  owb_value_type_init_unknown (out);
  gboolean ua = type_is_unknown (a), ub = type_is_unknown (b);
  if (ua && ub)
    return;
  const OwbValueType *k = ua ? b : a;
  out->kind = k->kind;
  out->elem_kind = k->elem_kind;
  out->dtype = k->dtype;
  out->key_dtype = k->key_dtype;
  if (ua || ub)
    return;
  if (out->dtype == OWB_TYPE_UNDEFINED)
    out->dtype = b->dtype;
  if (a->kind != b->kind || a->elem_kind != b->elem_kind || a->rank < 0 || a->rank != b->rank)
    return;
  out->rank = a->rank;
  for (int d = 0; d < a->rank; d++)
    out->dims[d] = same_dim (a->dims[d], b->dims[d]) ? a->dims[d] : OWB_DIM_UNKNOWN;
}

static void
set_container (OwbValueType *out, OwbValueKind kind, const OwbValueType *elem)
{
  owb_value_type_init_unknown (out);
  out->kind = kind;
  out->elem_kind = OWB_VALUE_TENSOR;
  if (!elem)
    return;
  out->dtype = elem->dtype;
  if (kind == OWB_VALUE_OPTIONAL && elem->kind == OWB_VALUE_SEQUENCE)
    out->elem_kind = OWB_VALUE_SEQUENCE;
  else if (elem->kind != OWB_VALUE_TENSOR && elem->kind != OWB_VALUE_UNKNOWN_KIND)
    out->elem_kind = elem->kind;
  out->rank = elem->rank;
  if (elem->rank > 0)
    memcpy (out->dims, elem->dims, sizeof out->dims);
}

static void
set_scalar (OwbValueType *out, OwbDataType dtype)
{
  owb_value_type_init_tensor (out, dtype, 0, NULL);
}

static gboolean
check_dtype (OwbInferContext *ctx, int input, const char *what, OwbDataType want, GError **error)
{
  const OwbValueType *t = input < ctx->n_inputs ? ctx->inputs[input] : NULL;
  if (!t || type_is_unknown (t) || t->dtype == OWB_TYPE_UNDEFINED)
    return TRUE;
  if (t->kind != OWB_VALUE_TENSOR || t->dtype != want)
    {
      g_autofree char *s = owb_value_type_to_string (t);
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "%s must be a %s tensor, not %s", what,
                           owb_data_type_name (want), s);
      return FALSE;
    }
  if (t->rank > 1 || (t->rank == 1 && owb_dim_is_known (t->dims[0]) && t->dims[0].value != 1))
    {
      g_autofree char *s = owb_value_type_to_string (t);
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%s must hold one value, not %s", what, s);
      return FALSE;
    }
  return TRUE;
}

/* A container input must be a sequence (or optional), or unknown. */
static gboolean
check_kind (OwbInferContext *ctx, int input, OwbValueKind kind, GError **error)
{
  const OwbValueType *t = ctx->inputs[input];
  if (type_is_unknown (t) || t->kind == kind)
    return TRUE;
  g_autofree char *s = owb_value_type_to_string (t);
  owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d must be %s, not %s", input,
                       kind == OWB_VALUE_SEQUENCE ? "a sequence" : "an optional", s);
  return FALSE;
}

/* ---- If ---- */

static gboolean
infer_if (OwbInferContext *ctx, GError **error)
{
  const OwbGraph *then_g = require_graph (ctx, "then_branch", error);
  if (!then_g)
    return FALSE;
  const OwbGraph *else_g = require_graph (ctx, "else_branch", error);
  if (!else_g)
    return FALSE;
  if (then_g->outputs->len != (guint) ctx->n_outputs || else_g->outputs->len != (guint) ctx->n_outputs)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "then_branch has %u outputs and else_branch %u, the node %d", then_g->outputs->len,
                           else_g->outputs->len, ctx->n_outputs);
      return FALSE;
    }
  if (!check_dtype (ctx, 0, "cond", OWB_TYPE_BOOL, error))
    return FALSE;
  gboolean run = at_run_time (ctx);
  for (int o = 0; o < ctx->n_outputs; o++)
    {
      const OwbValueType *a = graph_output_type (then_g, o), *b = graph_output_type (else_g, o);
      if (a && b && !type_is_unknown (a) && !type_is_unknown (b) && a->dtype != OWB_TYPE_UNDEFINED
          && b->dtype != OWB_TYPE_UNDEFINED && (a->dtype != b->dtype || a->kind != b->kind))
        {
          g_autofree char *sa = owb_value_type_to_string (a);
          g_autofree char *sb = owb_value_type_to_string (b);
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "output %d is %s in then_branch but %s in else_branch", o,
                               sa, sb);
          return FALSE;
        }
      merge_types (a, b, &ctx->outputs[o]);
      if (run)
        ctx->outputs[o].rank = -1;
    }
  return TRUE;
}

/* ---- Loop ---- */

static gboolean
infer_loop (OwbInferContext *ctx, GError **error)
{
  const OwbGraph *body = require_graph (ctx, "body", error);
  if (!body)
    return FALSE;
  int n_carried = ctx->n_inputs - 2;
  if (n_carried < 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "needs at least the M and cond inputs (\"\" to skip)");
      return FALSE;
    }
  for (int k = 0; k < n_carried; k++)
    if (!ctx->inputs[2 + k])
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "loop-carried input %d is missing", k);
        return FALSE;
      }
  if ((int) body->inputs->len != n_carried + 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "body takes %u inputs, expected %d (iteration number, condition and %d loop-carried values)",
                           body->inputs->len, n_carried + 2, n_carried);
      return FALSE;
    }
  int n_scan = (int) body->outputs->len - 1 - n_carried;
  if (n_scan < 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "body has %u outputs, fewer than the condition and %d loop-carried values",
                           body->outputs->len, n_carried);
      return FALSE;
    }
  if (ctx->n_outputs != n_carried + n_scan)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "has %d outputs, expected %d (%d loop-carried values and %d scan outputs of the body)",
                           ctx->n_outputs, n_carried + n_scan, n_carried, n_scan);
      return FALSE;
    }
  if (!check_dtype (ctx, 0, "M", OWB_TYPE_INT64, error) || !check_dtype (ctx, 1, "cond", OWB_TYPE_BOOL, error))
    return FALSE;
  gboolean run = at_run_time (ctx);
  for (int k = 0; k < n_carried; k++)
    {
      const OwbValueType *in = ctx->inputs[2 + k];
      const OwbValueType *out = graph_output_type (body, 1 + k);
      /* Zero iterations give back the initial value: both must fit. */
      merge_types (in, out, &ctx->outputs[k]);
      if (run)
        ctx->outputs[k].rank = -1;
    }
  for (int j = 0; j < n_scan; j++)
    {
      const OwbValueType *t = graph_output_type (body, 1 + n_carried + j);
      OwbValueType *out = &ctx->outputs[n_carried + j];
      if (!t || type_is_unknown (t))
        continue;
      if (t->kind != OWB_VALUE_TENSOR)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "scan output %d of the body must be a tensor", j);
          return FALSE;
        }
      out->dtype = t->dtype;
      if (run || t->rank < 0 || t->rank + 1 > OWB_MAX_RANK)
        continue;
      out->rank = t->rank + 1;
      out->dims[0] = OWB_DIM_UNKNOWN;
      for (int d = 0; d < t->rank; d++)
        out->dims[d + 1] = t->dims[d];
    }
  return TRUE;
}

/* ---- Scan ---- */

/* Reads an optional ints attribute of n entries; all must lie in [lo, hi]. */
static gboolean
scan_ints (OwbInferContext *ctx, const char *name, int n, int64_t lo, int64_t hi, const int64_t **out,
           GError **error)
{
  int count;
  *out = owb_node_get_ints (ctx->node, name, &count);
  if (!*out)
    return TRUE;
  if (count != n)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s has %d entries, expected %d", name, count, n);
      return FALSE;
    }
  for (int i = 0; i < n; i++)
    if ((*out)[i] < lo || (*out)[i] > hi)
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s[%d] = %" G_GINT64_FORMAT " is out of range", name,
                             i, (*out)[i]);
        return FALSE;
      }
  return TRUE;
}

static gboolean
infer_scan (OwbInferContext *ctx, GError **error)
{
  const OwbGraph *body = require_graph (ctx, "body", error);
  if (!body)
    return FALSE;
  gboolean v8 = ctx->opset < 9;
  int first = v8 ? 1 : 0; /* opset 8 starts with sequence_lens */
  int n_scan_in;
  if (!owb_node_get_int32 (ctx->node, "num_scan_inputs", -1, 1, MAX (ctx->n_inputs - first, 1), &n_scan_in, error))
    return FALSE;
  int n_states = ctx->n_inputs - first - n_scan_in;
  if (n_states < 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "num_scan_inputs %d must be at least 1 and at most the %d inputs", n_scan_in,
                           ctx->n_inputs - first);
      return FALSE;
    }
  for (int i = first; i < ctx->n_inputs; i++)
    if (!ctx->inputs[i])
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "input %d is missing", i);
        return FALSE;
      }
  int n_scan_out = (int) body->outputs->len - n_states;
  if ((int) body->inputs->len != n_states + (int) n_scan_in || n_scan_out < 0 || ctx->n_outputs != (int) body->outputs->len)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "body has %u inputs and %u outputs, the node %d state and %d scan inputs and %d outputs",
                           body->inputs->len, body->outputs->len, n_states, n_scan_in, ctx->n_outputs);
      return FALSE;
    }
  const int64_t *dirs, *in_axes = NULL, *out_axes = NULL, *out_dirs;
  if (v8)
    {
      if (!scan_ints (ctx, "directions", (int) n_scan_in, 0, 1, &dirs, error))
        return FALSE;
      if (ctx->inputs[0] && !type_is_unknown (ctx->inputs[0])
          && (ctx->inputs[0]->kind != OWB_VALUE_TENSOR || ctx->inputs[0]->dtype != OWB_TYPE_INT32
              || ctx->inputs[0]->rank != 1))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "sequence_lens must be a 1-D int32 tensor");
          return FALSE;
        }
    }
  else
    {
      if (!scan_ints (ctx, "scan_input_directions", (int) n_scan_in, 0, 1, &dirs, error)
          || !scan_ints (ctx, "scan_output_directions", n_scan_out, 0, 1, &out_dirs, error)
          || !scan_ints (ctx, "scan_input_axes", (int) n_scan_in, -OWB_MAX_RANK, OWB_MAX_RANK - 1, &in_axes, error)
          || !scan_ints (ctx, "scan_output_axes", n_scan_out, -OWB_MAX_RANK, OWB_MAX_RANK - 1, &out_axes, error))
        return FALSE;
    }

  /* The scan length: the scanned axis of the first scan input. */
  OwbDim seq_len = OWB_DIM_UNKNOWN, batch = OWB_DIM_UNKNOWN;
  for (int s = 0; s < n_scan_in; s++)
    {
      const OwbValueType *t = ctx->inputs[first + n_states + s];
      if (type_is_unknown (t) || t->rank < 0)
        continue;
      if (t->kind != OWB_VALUE_TENSOR)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "scan input %d must be a tensor", s);
          return FALSE;
        }
      int axis;
      if (v8)
        {
          if (t->rank < 2)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "scan input %d needs batch and sequence axes, has rank %d",
                                   s, t->rank);
              return FALSE;
            }
          axis = 1;
          if (s == 0)
            batch = t->dims[0];
        }
      else if (!owb_infer_axis (ctx, in_axes ? in_axes[s] : 0, t->rank, &axis, error))
        return FALSE;
      if (s == 0)
        seq_len = t->dims[axis];
    }

  gboolean run = at_run_time (ctx);
  for (int k = 0; k < n_states; k++)
    {
      merge_types (ctx->inputs[first + k], graph_output_type (body, k), &ctx->outputs[k]);
      if (run)
        ctx->outputs[k].rank = -1;
    }
  for (int j = 0; j < n_scan_out; j++)
    {
      const OwbValueType *t = graph_output_type (body, n_states + j);
      OwbValueType *out = &ctx->outputs[n_states + j];
      if (!t || type_is_unknown (t))
        continue;
      out->dtype = t->dtype;
      if (t->rank < 0)
        continue;
      int extra = v8 ? 2 : 1;
      if (t->rank + extra > OWB_MAX_RANK)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "scan output %d would have more than %d dims", j,
                               OWB_MAX_RANK);
          return FALSE;
        }
      int axis = 0;
      if (!v8 && !owb_infer_axis (ctx, out_axes ? out_axes[j] : 0, t->rank + 1, &axis, error))
        return FALSE;
      if (run)
        continue;
      out->rank = t->rank + extra;
      if (v8)
        {
          out->dims[0] = batch;
          out->dims[1] = seq_len;
          for (int d = 0; d < t->rank; d++)
            out->dims[d + 2] = t->dims[d];
        }
      else
        for (int d = 0, src = 0; d < out->rank; d++)
          out->dims[d] = d == axis ? seq_len : t->dims[src++];
    }
  return TRUE;
}

/* ---- sequences ---- */

static gboolean
infer_sequence_construct (OwbInferContext *ctx, GError **error)
{
  OwbValueType elem;
  owb_value_type_init_unknown (&elem);
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      const OwbValueType *t = ctx->inputs[i];
      if (!t)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "input %d is missing", i);
          return FALSE;
        }
      if (!type_is_unknown (t) && t->kind != OWB_VALUE_TENSOR)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d is not a tensor", i);
          return FALSE;
        }
      if (i > 0 && elem.dtype != OWB_TYPE_UNDEFINED && t->dtype != OWB_TYPE_UNDEFINED && t->dtype != elem.dtype)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d is %s, input 0 %s: elements must share a type", i,
                               owb_data_type_name (t->dtype), owb_data_type_name (elem.dtype));
          return FALSE;
        }
      if (i == 0)
        elem = *t;
      else
        {
          OwbValueType m;
          merge_types (&elem, t, &m);
          elem = m;
        }
    }
  set_container (&ctx->outputs[0], OWB_VALUE_SEQUENCE, &elem);
  return TRUE;
}

static gboolean
infer_sequence_empty (OwbInferContext *ctx, GError **error)
{
  int64_t dtype = owb_node_get_int (ctx->node, "dtype", OWB_TYPE_FLOAT);
  if (dtype <= 0 || dtype > G_MAXINT || !owb_data_type_is_valid ((int) dtype))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "dtype %" G_GINT64_FORMAT " is not an element type",
                           dtype);
      return FALSE;
    }
  set_container (&ctx->outputs[0], OWB_VALUE_SEQUENCE, NULL);
  ctx->outputs[0].dtype = (OwbDataType) dtype;
  return TRUE;
}

static gboolean
check_position (OwbInferContext *ctx, int input, GError **error)
{
  const OwbValueType *t = input < ctx->n_inputs ? ctx->inputs[input] : NULL;
  if (!t || type_is_unknown (t))
    return TRUE;
  if (t->kind != OWB_VALUE_TENSOR || (t->dtype != OWB_TYPE_INT32 && t->dtype != OWB_TYPE_INT64)
      || t->rank > 1)
    {
      g_autofree char *s = owb_value_type_to_string (t);
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "position must be an int32 or int64 scalar, not %s", s);
      return FALSE;
    }
  return TRUE;
}

/* out: the type of one element of the sequence seq; FALSE, with out unknown, when seq is unknown. */
static gboolean
set_element_of (OwbValueType *out, const OwbValueType *seq)
{
  owb_value_type_init_unknown (out);
  if (type_is_unknown (seq))
    return FALSE;
  out->dtype = seq->dtype;
  out->rank = seq->rank;
  memcpy (out->dims, seq->dims, sizeof out->dims);
  return TRUE;
}

static gboolean
infer_sequence_insert (OwbInferContext *ctx, GError **error)
{
  if (!check_kind (ctx, 0, OWB_VALUE_SEQUENCE, error) || !check_position (ctx, 2, error))
    return FALSE;
  const OwbValueType *seq = ctx->inputs[0], *t = ctx->inputs[1];
  if (!type_is_unknown (t) && t->kind != OWB_VALUE_TENSOR)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "the inserted value must be a tensor");
      return FALSE;
    }
  if (!type_is_unknown (seq) && !type_is_unknown (t) && seq->dtype != OWB_TYPE_UNDEFINED
      && t->dtype != OWB_TYPE_UNDEFINED && seq->dtype != t->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "cannot insert a %s tensor into a sequence of %s",
                           owb_data_type_name (t->dtype), owb_data_type_name (seq->dtype));
      return FALSE;
    }
  OwbValueType elem;
  set_element_of (&elem, seq);
  OwbValueType m;
  merge_types (&elem, t, &m);
  if (m.dtype == OWB_TYPE_UNDEFINED && !type_is_unknown (seq))
    m.dtype = seq->dtype;
  set_container (&ctx->outputs[0], OWB_VALUE_SEQUENCE, &m);
  return TRUE;
}

static gboolean
infer_sequence_erase (OwbInferContext *ctx, GError **error)
{
  if (!check_kind (ctx, 0, OWB_VALUE_SEQUENCE, error) || !check_position (ctx, 1, error))
    return FALSE;
  set_container (&ctx->outputs[0], OWB_VALUE_SEQUENCE, type_is_unknown (ctx->inputs[0]) ? NULL : ctx->inputs[0]);
  return TRUE;
}

static gboolean
infer_sequence_at (OwbInferContext *ctx, GError **error)
{
  if (!check_kind (ctx, 0, OWB_VALUE_SEQUENCE, error) || !check_position (ctx, 1, error))
    return FALSE;
  set_element_of (&ctx->outputs[0], ctx->inputs[0]);
  return TRUE;
}

static gboolean
infer_sequence_length (OwbInferContext *ctx, GError **error)
{
  if (!check_kind (ctx, 0, OWB_VALUE_SEQUENCE, error))
    return FALSE;
  set_scalar (&ctx->outputs[0], OWB_TYPE_INT64);
  return TRUE;
}

static gboolean
infer_split_to_sequence (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  const OwbValueType *split = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  int64_t keepdims;
  int64_t axis64 = owb_node_get_int (ctx->node, "axis", 0);
  if (!_owb_infer_get_flag (ctx, "keepdims", 1, &keepdims, error))
    return FALSE;
  if (split && !type_is_unknown (split)
      && (split->kind != OWB_VALUE_TENSOR || (split->dtype != OWB_TYPE_INT32 && split->dtype != OWB_TYPE_INT64)
          || split->rank > 1))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "split must be an int32 or int64 scalar or 1-D tensor");
      return FALSE;
    }
  OwbValueType *out = &ctx->outputs[0];
  set_container (out, OWB_VALUE_SEQUENCE, NULL);
  if (type_is_unknown (x))
    return TRUE;
  if (x->kind != OWB_VALUE_TENSOR)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input must be a tensor");
      return FALSE;
    }
  out->dtype = x->dtype;
  if (x->rank < 0)
    return TRUE;
  int axis;
  if (!owb_infer_axis (ctx, axis64, x->rank, &axis, error))
    return FALSE;
  OwbDim dim = x->dims[axis];
  OwbDim piece = OWB_DIM_UNKNOWN;
  g_autofree int64_t *sizes = NULL;
  int64_t n = 0;
  if (!split)
    piece = OWB_DIM_VALUE (1);
  else if (owb_infer_get_ints (ctx, 1, &sizes, &n))
    {
      if (ctx->input_values[1]->rank == 0)
        {
          if (n != 1 || sizes[0] <= 0)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "a scalar split must be positive");
              return FALSE;
            }
          if (owb_dim_is_known (dim) && dim.value % sizes[0] == 0)
            piece = OWB_DIM_VALUE (sizes[0]);
        }
      else
        {
          int64_t total = 0;
          for (int64_t i = 0; i < n; i++)
            {
              if (sizes[i] < 0)
                {
                  owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "split sizes cannot be negative");
                  return FALSE;
                }
              total += sizes[i];
            }
          if (owb_dim_is_known (dim) && total != dim.value)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                   "split sizes add up to %" G_GINT64_FORMAT ", axis %d has %" G_GINT64_FORMAT, total,
                                   axis, dim.value);
              return FALSE;
            }
          gboolean equal = n > 0;
          for (int64_t i = 1; i < n; i++)
            equal = equal && sizes[i] == sizes[0];
          if (equal)
            piece = OWB_DIM_VALUE (sizes[0]);
        }
    }
  out->rank = x->rank;
  memcpy (out->dims, x->dims, sizeof out->dims);
  if (!split && !keepdims)
    {
      out->rank = x->rank - 1;
      for (int d = axis; d < out->rank; d++)
        out->dims[d] = x->dims[d + 1];
    }
  else
    out->dims[axis] = piece;
  return TRUE;
}

static gboolean
infer_concat_from_sequence (OwbInferContext *ctx, GError **error)
{
  if (!check_kind (ctx, 0, OWB_VALUE_SEQUENCE, error))
    return FALSE;
  const OwbAttribute *axis_attr = owb_node_get_attribute (ctx->node, "axis");
  if (!axis_attr || axis_attr->type != OWB_ATTR_INT)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute 'axis' is required");
      return FALSE;
    }
  int64_t new_axis;
  if (!_owb_infer_get_flag (ctx, "new_axis", 0, &new_axis, error))
    return FALSE;
  const OwbValueType *seq = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  if (!set_element_of (out, seq) || seq->rank < 0)
    return TRUE;
  int rank = seq->rank + (int) new_axis, axis;
  if (rank > OWB_MAX_RANK || rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "cannot concatenate elements of rank %d", seq->rank);
      return FALSE;
    }
  if (!owb_infer_axis (ctx, axis_attr->i, rank, &axis, error))
    return FALSE;
  out->rank = rank;
  for (int d = 0, src = 0; d < rank; d++)
    {
      if (d == axis)
        {
          out->dims[d] = OWB_DIM_UNKNOWN;
          if (!new_axis)
            src++;
        }
      else
        out->dims[d] = seq->dims[src++];
    }
  return TRUE;
}

static gboolean
infer_sequence_map (OwbInferContext *ctx, GError **error)
{
  const OwbGraph *body = require_graph (ctx, "body", error);
  if (!body)
    return FALSE;
  if ((int) body->inputs->len != ctx->n_inputs || (int) body->outputs->len != ctx->n_outputs)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "body has %u inputs and %u outputs, the node %d and %d",
                           body->inputs->len, body->outputs->len, ctx->n_inputs, ctx->n_outputs);
      return FALSE;
    }
  if (!check_kind (ctx, 0, OWB_VALUE_SEQUENCE, error))
    return FALSE;
  for (int o = 0; o < ctx->n_outputs; o++)
    {
      const OwbValueType *t = graph_output_type (body, o);
      set_container (&ctx->outputs[o], OWB_VALUE_SEQUENCE, t && !type_is_unknown (t) ? t : NULL);
    }
  return TRUE;
}

/* ---- optionals ---- */

static gboolean
infer_optional (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *in = ctx->n_inputs > 0 ? ctx->inputs[0] : NULL;
  OwbValueType *out = &ctx->outputs[0];
  if (in)
    {
      if (in->kind == OWB_VALUE_OPTIONAL)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "the input cannot itself be an optional");
          return FALSE;
        }
      set_container (out, OWB_VALUE_OPTIONAL, type_is_unknown (in) ? NULL : in);
      return TRUE;
    }
  const OwbAttribute *tp = owb_node_get_attribute (ctx->node, "type");
  if (!tp || tp->type != OWB_ATTR_TYPE_PROTO)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "an Optional without input needs the 'type' attribute");
      return FALSE;
    }
  if (tp->tp.kind != OWB_VALUE_TENSOR && tp->tp.kind != OWB_VALUE_SEQUENCE)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "'type' must be a tensor or sequence type");
      return FALSE;
    }
  set_container (out, OWB_VALUE_OPTIONAL, &tp->tp);
  return TRUE;
}

static gboolean
infer_optional_has_element (OwbInferContext *ctx, GError **error)
{
  /* Before opset 18 the input is typed optional, but a Loop may carry an optional in and a plain
   * sequence out, so the body's node sees both: any present value counts as an element. */
  set_scalar (&ctx->outputs[0], OWB_TYPE_BOOL);
  return TRUE;
}

static gboolean
infer_optional_get_element (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *in = ctx->inputs[0];
  OwbValueType *out = &ctx->outputs[0];
  owb_value_type_init_unknown (out);
  if (type_is_unknown (in))
    return TRUE;
  if (in->kind != OWB_VALUE_OPTIONAL)
    {
      /* Opset 18 allows plain values (and earlier a Loop may hand one to an optional input). */
      *out = *in;
      return TRUE;
    }
  /* At run time the value tells what the optional holds. */
  owb_infer_note_value_read (ctx, 0);
  const OwbTensor *v = ctx->input_values ? ctx->input_values[0] : NULL;
  OwbValueKind kind = in->elem_kind;
  if (v && v->kind == OWB_VALUE_OPTIONAL && v->sequence && v->sequence->len > 0)
    kind = ((const OwbTensor *) g_ptr_array_index (v->sequence, 0))->kind;
  if (kind == OWB_VALUE_SEQUENCE)
    {
      set_container (out, OWB_VALUE_SEQUENCE, NULL);
      out->dtype = in->dtype;
      out->rank = in->rank;
      memcpy (out->dims, in->dims, sizeof out->dims);
      return TRUE;
    }
  out->dtype = in->dtype;
  out->rank = in->rank;
  memcpy (out->dims, in->dims, sizeof out->dims);
  return TRUE;
}

const OwbOpSchema _owb_ops_control[] = {
  { "If", "", 1, 1, 1, 1, -1, infer_if },
  /* M, cond and sequence_lens are optional ("" inputs); the functions check the counts. */
  { "Loop", "", 1, 0, -1, 1, -1, infer_loop },
  { "Scan", "", 8, 0, -1, 1, -1, infer_scan },
  { "Scan", "", 9, 1, -1, 1, -1, infer_scan },
  { "SequenceConstruct", "", 11, 1, -1, 1, 1, infer_sequence_construct },
  { "SequenceEmpty", "", 11, 0, 0, 1, 1, infer_sequence_empty },
  { "SequenceInsert", "", 11, 2, 3, 1, 1, infer_sequence_insert },
  { "SequenceErase", "", 11, 1, 2, 1, 1, infer_sequence_erase },
  { "SequenceAt", "", 11, 2, 2, 1, 1, infer_sequence_at },
  { "SequenceLength", "", 11, 1, 1, 1, 1, infer_sequence_length },
  { "SplitToSequence", "", 11, 1, 2, 1, 1, infer_split_to_sequence },
  { "ConcatFromSequence", "", 11, 1, 1, 1, 1, infer_concat_from_sequence },
  { "SequenceMap", "", 17, 1, -1, 1, -1, infer_sequence_map },
  { "Optional", "", 15, 0, 1, 1, 1, infer_optional },
  { "OptionalHasElement", "", 15, 1, 1, 1, 1, infer_optional_has_element },
  { "OptionalHasElement", "", 18, 0, 1, 1, 1, infer_optional_has_element },
  { "OptionalGetElement", "", 15, 1, 1, 1, 1, infer_optional_get_element },
  { NULL }
};
