/* transformer.c: schemas and shape inference of the transformer-era ops: Attention, RotaryEmbedding,
 * RMSNormalization, Swish, SwiGLU, TensorScatter, CausalConvWithState, LinearAttention and
 * ai.onnx.preview FlexAttention. */
#include "owb-ops-private.h"
#include <owb/owb-error.h>

#include <string.h>

/* Head counts and sizes beyond this can only come from a broken or hostile model. */
#define HEADS_LIMIT (G_GINT64_CONSTANT (1) << 24)

static gboolean
has_input (OwbInferContext *ctx, int i)
{
  return i < ctx->n_inputs && ctx->inputs[i] != NULL;
}

static gboolean
has_output (OwbInferContext *ctx, int i)
{
  return i < ctx->n_outputs && ctx->node->outputs[i] && ctx->node->outputs[i][0];
}

/* Input i must be a tensor of a floating type; an unknown dtype (untyped edge) passes. */
static gboolean
check_float (OwbInferContext *ctx, int i, const char *what, GError **error)
{
  const OwbValueType *t = ctx->inputs[i];
  if (t->kind != OWB_VALUE_TENSOR && t->kind != OWB_VALUE_UNKNOWN_KIND)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d (%s) must be a tensor", i, what);
      return FALSE;
    }
  if (t->dtype == OWB_TYPE_UNDEFINED || _owb_data_type_is_float (t->dtype))
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d (%s) has element type %s; a floating type is required", i,
                       what, owb_data_type_name (t->dtype));
  return FALSE;
}

static gboolean
check_dtype (OwbInferContext *ctx, int i, OwbDataType want, const char *what, GError **error)
{
  OwbDataType t = ctx->inputs[i]->dtype;
  if (t == OWB_TYPE_UNDEFINED || t == want)
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input %d (%s) has element type %s; %s is required", i, what,
                       owb_data_type_name (t), owb_data_type_name (want));
  return FALSE;
}

/* Input i has rank `rank` (or an unknown rank). */
static gboolean
check_rank (OwbInferContext *ctx, int i, int rank, const char *what, GError **error)
{
  int r = ctx->inputs[i]->rank;
  if (r < 0 || r == rank)
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d (%s) has rank %d; rank %d is required", i, what, r, rank);
  return FALSE;
}

/* Dimension d of input i; unknown when the input or its rank is unknown. */
static OwbDim
in_dim (OwbInferContext *ctx, int i, int d)
{
  if (!has_input (ctx, i) || ctx->inputs[i]->rank <= d)
    return OWB_DIM_UNKNOWN;
  return ctx->inputs[i]->dims[d];
}

/* The more informative of two dims that must agree. */
static OwbDim
merge_dim (OwbDim a, OwbDim b)
{
  if (owb_dim_is_known (a))
    return a;
  if (owb_dim_is_known (b) || b.param)
    return b;
  return a;
}

/* a / n for a dim that must be a multiple of n (n > 0). */
static gboolean
divide_dim (OwbInferContext *ctx, OwbDim a, int64_t n, OwbDim *out, const char *what, GError **error)
{
  if (!owb_dim_is_known (a))
    {
      *out = OWB_DIM_UNKNOWN;
      return TRUE;
    }
  if (a.value % n != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%s (%" G_GINT64_FORMAT ") is not a multiple of %" G_GINT64_FORMAT,
                           what, a.value, n);
      return FALSE;
    }
  *out = OWB_DIM_VALUE (a.value / n);
  return TRUE;
}

static OwbDim
mul_dim (OwbDim a, int64_t n)
{
  if (n == 1)
    return a;
  return owb_dim_is_known (a) ? OWB_DIM_VALUE (a.value * n) : OWB_DIM_UNKNOWN;
}

static OwbDim
add_dims (OwbDim a, OwbDim b)
{
  if (owb_dim_is_known (a) && a.value == 0)
    return b;
  if (owb_dim_is_known (b) && b.value == 0)
    return a;
  if (owb_dim_is_known (a) && owb_dim_is_known (b) && a.value <= G_MAXINT64 - b.value)
    return OWB_DIM_VALUE (a.value + b.value);
  return OWB_DIM_UNKNOWN;
}

static void
set_output (OwbInferContext *ctx, int i, OwbDataType dtype, int rank, const OwbDim *dims)
{
  if (i >= ctx->n_outputs)
    return;
  OwbValueType *t = &ctx->outputs[i];
  owb_value_type_init_unknown (t);
  t->dtype = dtype;
  t->rank = rank;
  for (int d = 0; d < rank; d++)
    t->dims[d] = dims[d];
}

/* A positive head-count attribute, or 0 when absent. */
static gboolean
get_heads (OwbInferContext *ctx, const char *name, int64_t *out, GError **error)
{
  const OwbAttribute *a = owb_node_get_attribute (ctx->node, name);
  *out = 0;
  if (!a)
    return TRUE;
  if (a->type != OWB_ATTR_INT || a->i <= 0 || a->i > HEADS_LIMIT)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute %s must be a positive integer", name);
      return FALSE;
    }
  *out = a->i;
  return TRUE;
}

static gboolean
check_softmax_precision (OwbInferContext *ctx, GError **error)
{
  const OwbAttribute *a = owb_node_get_attribute (ctx->node, "softmax_precision");
  if (!a)
    return TRUE;
  if (a->type == OWB_ATTR_INT && (a->i == OWB_TYPE_FLOAT || a->i == OWB_TYPE_FLOAT16 || a->i == OWB_TYPE_DOUBLE
                                  || a->i == OWB_TYPE_BFLOAT16))
    return TRUE;
  owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                       "softmax_precision must be 1 (float), 10 (float16), 11 (double) or 16 (bfloat16)");
  return FALSE;
}

/* ---- Attention -------------------------------------------------------------------------------- */

static gboolean
infer_attention (OwbInferContext *ctx, GError **error)
{
  enum { Q, K, V, MASK, PAST_K, PAST_V, NONPAD };
  if (!check_float (ctx, Q, "Q", error) || !check_float (ctx, K, "K", error) || !check_float (ctx, V, "V", error))
    return FALSE;
  for (int i = PAST_K; i <= PAST_V; i++)
    if (has_input (ctx, i) && (!check_float (ctx, i, i == PAST_K ? "past_key" : "past_value", error)
                               || !check_rank (ctx, i, 4, i == PAST_K ? "past_key" : "past_value", error)))
      return FALSE;
  if (has_input (ctx, PAST_K) != has_input (ctx, PAST_V))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "past_key and past_value must be given together");
      return FALSE;
    }
  if (has_output (ctx, 1) != has_output (ctx, 2))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "present_key and present_value must be used together");
      return FALSE;
    }
  if (has_input (ctx, NONPAD))
    {
      if (!check_dtype (ctx, NONPAD, OWB_TYPE_INT64, "nonpad_kv_seqlen", error)
          || !check_rank (ctx, NONPAD, 1, "nonpad_kv_seqlen", error))
        return FALSE;
      if (has_input (ctx, PAST_K) || has_output (ctx, 1))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "nonpad_kv_seqlen cannot be combined with past or present key/value");
          return FALSE;
        }
    }
  if (has_input (ctx, MASK))
    {
      const OwbValueType *m = ctx->inputs[MASK];
      if (m->dtype == OWB_TYPE_STRING || (m->dtype >= OWB_TYPE_COMPLEX64 && m->dtype <= OWB_TYPE_COMPLEX128))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "attn_mask has element type %s; bool or a number is required",
                               owb_data_type_name (m->dtype));
          return FALSE;
        }
      if (m->rank == 0 || m->rank > 4)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "attn_mask has rank %d; 1 to 4 is required", m->rank);
          return FALSE;
        }
    }

  int64_t mode = owb_node_get_int (ctx->node, "qk_matmul_output_mode", 0);
  if (!_owb_infer_get_flag (ctx, "is_causal", 0, NULL, error))
    return FALSE;
  if (mode < 0 || mode > 3)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "qk_matmul_output_mode must be 0 to 3, not %" G_GINT64_FORMAT, mode);
      return FALSE;
    }
  if (!check_softmax_precision (ctx, error))
    return FALSE;
  if (ctx->opset >= 25)
    for (int w = 0; w < 2; w++)
      {
        const char *name = w ? "right_window_size" : "left_window_size";
        if (owb_node_get_int (ctx->node, name, -1) < -1)
          {
            owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s must be -1 or nonnegative", name);
            return FALSE;
          }
      }

  int64_t q_heads, kv_heads;
  if (!get_heads (ctx, "q_num_heads", &q_heads, error) || !get_heads (ctx, "kv_num_heads", &kv_heads, error))
    return FALSE;

  OwbDataType dtype = ctx->inputs[Q]->dtype;
  int rank = ctx->inputs[Q]->rank;
  for (int i = K; i <= V; i++)
    if (rank >= 0 && ctx->inputs[i]->rank >= 0 && ctx->inputs[i]->rank != rank)
      {
        owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "Q, K and V must have the same rank (3 or 4)");
        return FALSE;
      }
  if (rank < 0)
    rank = ctx->inputs[K]->rank >= 0 ? ctx->inputs[K]->rank : ctx->inputs[V]->rank;
  if (rank >= 0 && rank != 3 && rank != 4)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "Q, K and V must have rank 3 or 4, not %d", rank);
      return FALSE;
    }
  if (ctx->inputs[K]->dtype != OWB_TYPE_UNDEFINED && dtype != OWB_TYPE_UNDEFINED && ctx->inputs[K]->dtype != dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "Q and K must have the same element type");
      return FALSE;
    }

  OwbDim batch, hq, sq, hkv, skv, head, v_head;
  if (rank == 3)
    {
      if (q_heads == 0 || kv_heads == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "3-D inputs need the q_num_heads and kv_num_heads attributes");
          return FALSE;
        }
      OwbDim k_head;
      batch = in_dim (ctx, Q, 0);
      sq = in_dim (ctx, Q, 1);
      skv = merge_dim (in_dim (ctx, K, 1), in_dim (ctx, V, 1));
      hq = OWB_DIM_VALUE (q_heads);
      hkv = OWB_DIM_VALUE (kv_heads);
      if (!divide_dim (ctx, in_dim (ctx, Q, 2), q_heads, &head, "Q hidden size", error)
          || !divide_dim (ctx, in_dim (ctx, K, 2), kv_heads, &k_head, "K hidden size", error)
          || !divide_dim (ctx, in_dim (ctx, V, 2), kv_heads, &v_head, "V hidden size", error)
          || !_owb_infer_check_same_dim (ctx, head, k_head, "Q and K head sizes", error)
          || !_owb_infer_check_same_dim (ctx, in_dim (ctx, K, 1), in_dim (ctx, V, 1), "K and V sequence lengths", error))
        return FALSE;
      head = merge_dim (head, k_head);
    }
  else if (rank == 4)
    {
      if (ctx->opset >= 25 && (q_heads || kv_heads))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "q_num_heads and kv_num_heads must not be given for 4-D inputs");
          return FALSE;
        }
      batch = in_dim (ctx, Q, 0);
      hq = in_dim (ctx, Q, 1);
      sq = in_dim (ctx, Q, 2);
      hkv = merge_dim (in_dim (ctx, K, 1), in_dim (ctx, V, 1));
      skv = merge_dim (in_dim (ctx, K, 2), in_dim (ctx, V, 2));
      head = merge_dim (in_dim (ctx, Q, 3), in_dim (ctx, K, 3));
      v_head = in_dim (ctx, V, 3);
      if (!_owb_infer_check_same_dim (ctx, in_dim (ctx, Q, 3), in_dim (ctx, K, 3), "Q and K head sizes", error)
          || !_owb_infer_check_same_dim (ctx, in_dim (ctx, K, 1), in_dim (ctx, V, 1), "K and V head counts", error)
          || !_owb_infer_check_same_dim (ctx, in_dim (ctx, K, 2), in_dim (ctx, V, 2), "K and V sequence lengths", error))
        return FALSE;
    }
  else
    {
      /* Rank unknown: only types can be given. */
      set_output (ctx, 0, dtype, -1, NULL);
      if (has_output (ctx, 1))
        set_output (ctx, 1, ctx->inputs[K]->dtype, 4, (OwbDim[]) { OWB_DIM_UNKNOWN, OWB_DIM_UNKNOWN,
                                                                   OWB_DIM_UNKNOWN, OWB_DIM_UNKNOWN });
      if (has_output (ctx, 2))
        set_output (ctx, 2, ctx->inputs[V]->dtype, 4, (OwbDim[]) { OWB_DIM_UNKNOWN, OWB_DIM_UNKNOWN,
                                                                   OWB_DIM_UNKNOWN, OWB_DIM_UNKNOWN });
      if (has_output (ctx, 3))
        set_output (ctx, 3, dtype, 4, (OwbDim[]) { OWB_DIM_UNKNOWN, OWB_DIM_UNKNOWN, OWB_DIM_UNKNOWN,
                                                   OWB_DIM_UNKNOWN });
      return TRUE;
    }
  if (owb_dim_is_known (hq) && owb_dim_is_known (hkv) && (hkv.value == 0 || hq.value % hkv.value != 0))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "the query head count %" G_GINT64_FORMAT " is not a multiple of the key/value head count %"
                           G_GINT64_FORMAT, hq.value, hkv.value);
      return FALSE;
    }

  OwbDim total = skv;
  OwbDim pk_batch = batch, pk_heads = hkv, pv_heads = hkv;
  if (has_input (ctx, PAST_K))
    {
      OwbDim past = merge_dim (in_dim (ctx, PAST_K, 2), in_dim (ctx, PAST_V, 2));
      if (!_owb_infer_check_same_dim (ctx, in_dim (ctx, PAST_K, 2), in_dim (ctx, PAST_V, 2),
                                      "past_key and past_value lengths", error)
          || !_owb_infer_check_same_dim (ctx, in_dim (ctx, PAST_K, 3), head, "past_key and K head sizes", error)
          || !_owb_infer_check_same_dim (ctx, in_dim (ctx, PAST_V, 3), v_head, "past_value and V head sizes", error)
          || !_owb_infer_check_same_dim (ctx, in_dim (ctx, PAST_K, 1), hkv, "past_key and K head counts", error)
          || !_owb_infer_check_same_dim (ctx, in_dim (ctx, PAST_K, 0), batch, "past_key and Q batch sizes", error))
        return FALSE;
      total = add_dims (past, skv);
      pk_batch = merge_dim (batch, in_dim (ctx, PAST_K, 0));
      pk_heads = merge_dim (hkv, in_dim (ctx, PAST_K, 1));
      pv_heads = merge_dim (hkv, in_dim (ctx, PAST_V, 1));
    }
  if (has_input (ctx, MASK) && ctx->inputs[MASK]->rank > 0)
    {
      OwbDim m = ctx->inputs[MASK]->dims[ctx->inputs[MASK]->rank - 1];
      if (owb_dim_is_known (m) && owb_dim_is_known (total) && m.value > total.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "attn_mask's last dimension %" G_GINT64_FORMAT
                               " is longer than the total key length %" G_GINT64_FORMAT,
                               m.value, total.value);
          return FALSE;
        }
    }

  if (rank == 3)
    set_output (ctx, 0, dtype, 3, (OwbDim[]) { batch, sq, mul_dim (v_head, q_heads) });
  else
    set_output (ctx, 0, dtype, 4, (OwbDim[]) { batch, hq, sq, v_head });
  if (has_output (ctx, 1))
    {
      OwbDataType kt = has_input (ctx, PAST_K) ? ctx->inputs[PAST_K]->dtype : ctx->inputs[K]->dtype;
      OwbDataType vt = has_input (ctx, PAST_V) ? ctx->inputs[PAST_V]->dtype : ctx->inputs[V]->dtype;
      set_output (ctx, 1, kt, 4, (OwbDim[]) { pk_batch, pk_heads, total, head });
      set_output (ctx, 2, vt, 4, (OwbDim[]) { pk_batch, pv_heads, total, v_head });
    }
  if (has_output (ctx, 3))
    set_output (ctx, 3, dtype, 4, (OwbDim[]) { batch, hq, sq, total });
  return TRUE;
}

/* ---- FlexAttention (ai.onnx.preview) ---------------------------------------------------------- */

static gboolean
check_modifier_graph (OwbInferContext *ctx, const char *name, GError **error)
{
  const OwbAttribute *a = owb_node_get_attribute (ctx->node, name);
  if (!a)
    return TRUE;
  if (a->type != OWB_ATTR_GRAPH || !a->g)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute %s must be a graph", name);
      return FALSE;
    }
  GPtrArray *feeds = owb_graph_dup_feed_inputs (a->g);
  guint n_feeds = feeds->len;
  g_ptr_array_unref (feeds);
  if (n_feeds != 1 || a->g->outputs->len != 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "the %s graph must have one input and one output", name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_flex_attention (OwbInferContext *ctx, GError **error)
{
  static const char *const names[] = { "Q", "K", "V" };
  OwbDataType dtype = ctx->inputs[0]->dtype;
  for (int i = 0; i < 3; i++)
    {
      if (!check_float (ctx, i, names[i], error) || !check_rank (ctx, i, 4, names[i], error))
        return FALSE;
      if (ctx->inputs[i]->dtype != OWB_TYPE_UNDEFINED && dtype != OWB_TYPE_UNDEFINED && ctx->inputs[i]->dtype != dtype)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "Q, K and V must have the same element type");
          return FALSE;
        }
    }
  if (!check_softmax_precision (ctx, error) || !check_modifier_graph (ctx, "score_mod", error)
      || !check_modifier_graph (ctx, "prob_mod", error))
    return FALSE;
  if (!_owb_infer_check_same_dim (ctx, in_dim (ctx, 1, 1), in_dim (ctx, 2, 1), "K and V head counts", error)
      || !_owb_infer_check_same_dim (ctx, in_dim (ctx, 1, 2), in_dim (ctx, 2, 2), "K and V sequence lengths", error)
      || !_owb_infer_check_same_dim (ctx, in_dim (ctx, 0, 3), in_dim (ctx, 1, 3), "Q and K head sizes", error)
      || !_owb_infer_check_same_dim (ctx, in_dim (ctx, 0, 0), in_dim (ctx, 1, 0), "Q and K batch sizes", error)
      || !_owb_infer_check_same_dim (ctx, in_dim (ctx, 0, 0), in_dim (ctx, 2, 0), "Q and V batch sizes", error))
    return FALSE;
  OwbDim hq = in_dim (ctx, 0, 1), hkv = merge_dim (in_dim (ctx, 1, 1), in_dim (ctx, 2, 1));
  if (owb_dim_is_known (hq) && owb_dim_is_known (hkv) && (hkv.value == 0 || hq.value % hkv.value != 0))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "the query head count %" G_GINT64_FORMAT " is not a multiple of the key/value head count %"
                           G_GINT64_FORMAT, hq.value, hkv.value);
      return FALSE;
    }
  OwbDim batch = merge_dim (merge_dim (in_dim (ctx, 0, 0), in_dim (ctx, 1, 0)), in_dim (ctx, 2, 0));
  set_output (ctx, 0, dtype, 4, (OwbDim[]) { batch, hq, in_dim (ctx, 0, 2), in_dim (ctx, 2, 3) });
  return TRUE;
}

/* ---- RotaryEmbedding -------------------------------------------------------------------------- */

static gboolean
infer_rotary_embedding (OwbInferContext *ctx, GError **error)
{
  for (int i = 0; i < 3; i++)
    if (!check_float (ctx, i, i == 0 ? "X" : i == 1 ? "cos_cache" : "sin_cache", error))
      return FALSE;
  gboolean with_ids = has_input (ctx, 3);
  if (with_ids && !check_dtype (ctx, 3, OWB_TYPE_INT64, "position_ids", error))
    return FALSE;
  if (with_ids && !check_rank (ctx, 3, 2, "position_ids", error))
    return FALSE;
  for (int i = 1; i < 3; i++)
    if (!check_rank (ctx, i, with_ids ? 2 : 3, i == 1 ? "cos_cache" : "sin_cache", error))
      return FALSE;
  int64_t rotary_dim = owb_node_get_int (ctx->node, "rotary_embedding_dim", 0);
  if (!_owb_infer_get_flag (ctx, "interleaved", 0, NULL, error))
    return FALSE;
  if (rotary_dim < 0 || rotary_dim % 2 != 0 || rotary_dim > HEADS_LIMIT)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "rotary_embedding_dim must be a nonnegative even number, not %" G_GINT64_FORMAT, rotary_dim);
      return FALSE;
    }
  int64_t num_heads;
  if (!get_heads (ctx, "num_heads", &num_heads, error))
    return FALSE;
  int rank = ctx->inputs[0]->rank;
  if (rank >= 0 && rank != 3 && rank != 4)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "X must have rank 3 or 4, not %d", rank);
      return FALSE;
    }
  OwbDim head = OWB_DIM_UNKNOWN;
  if (rank == 3)
    {
      if (num_heads == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "a 3-D X needs the num_heads attribute");
          return FALSE;
        }
      if (!divide_dim (ctx, in_dim (ctx, 0, 2), num_heads, &head, "X hidden size", error))
        return FALSE;
    }
  else if (rank == 4)
    head = in_dim (ctx, 0, 3);
  if (owb_dim_is_known (head))
    {
      int64_t rd = rotary_dim ? rotary_dim : head.value;
      if (rd > head.value || rd % 2 != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "the rotary dimension %" G_GINT64_FORMAT " must be even and at most the head size %"
                               G_GINT64_FORMAT, rd, head.value);
          return FALSE;
        }
      for (int i = 1; i < 3; i++)
        {
          int r = ctx->inputs[i]->rank;
          if (r > 0 && !_owb_infer_check_same_dim (ctx, ctx->inputs[i]->dims[r - 1], OWB_DIM_VALUE (rd / 2),
                                        "cache width and half the rotary dimension", error))
            return FALSE;
        }
    }
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* ---- RMSNormalization ------------------------------------------------------------------------- */

static gboolean
infer_rms_normalization (OwbInferContext *ctx, GError **error)
{
  if (!check_float (ctx, 0, "X", error) || !check_float (ctx, 1, "scale", error))
    return FALSE;
  int64_t stash = owb_node_get_int (ctx->node, "stash_type", OWB_TYPE_FLOAT);
  if (stash != OWB_TYPE_FLOAT && stash != OWB_TYPE_DOUBLE && stash != OWB_TYPE_FLOAT16 && stash != OWB_TYPE_BFLOAT16)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "stash_type %" G_GINT64_FORMAT " is not a floating type",
                           stash);
      return FALSE;
    }
  int rank = ctx->inputs[0]->rank;
  if (rank >= 0)
    {
      int axis;
      if (!owb_infer_axis (ctx, owb_node_get_int (ctx->node, "axis", -1), rank, &axis, error))
        return FALSE;
      /* scale broadcasts unidirectionally to X. */
      const OwbValueType *s = ctx->inputs[1];
      if (s->rank > rank)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "scale has rank %d, more than X's %d", s->rank, rank);
          return FALSE;
        }
      for (int d = 0; s->rank > 0 && d < s->rank; d++)
        {
          OwbDim sd = s->dims[d], xd = ctx->inputs[0]->dims[d + rank - s->rank];
          if (owb_dim_is_known (sd) && sd.value != 1 && owb_dim_is_known (xd) && sd.value != xd.value)
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "scale does not broadcast to X (axis %d: %" G_GINT64_FORMAT
                                   " vs %" G_GINT64_FORMAT ")", d, sd.value, xd.value);
              return FALSE;
            }
        }
    }
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* ---- Swish, SwiGLU ---------------------------------------------------------------------------- */

static gboolean
infer_swish (OwbInferContext *ctx, GError **error)
{
  if (!check_float (ctx, 0, "X", error))
    return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

static gboolean
infer_swiglu (OwbInferContext *ctx, GError **error)
{
  if (!check_float (ctx, 0, "A", error) || !check_float (ctx, 1, "B", error))
    return FALSE;
  const OwbValueType *a = ctx->inputs[0], *b = ctx->inputs[1];
  if (a->dtype != OWB_TYPE_UNDEFINED && b->dtype != OWB_TYPE_UNDEFINED && a->dtype != b->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "A and B must have the same element type");
      return FALSE;
    }
  owb_infer_copy (ctx, 0, 0);
  if (a->dtype == OWB_TYPE_UNDEFINED)
    ctx->outputs[0].dtype = b->dtype;
  if (a->rank < 0 || b->rank < 0)
    {
      if (a->rank < 0)
        owb_infer_copy (ctx, 0, 1);
      return TRUE;
    }
  /* No broadcasting: the shapes must be the same. */
  if (a->rank != b->rank)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "A (rank %d) and B (rank %d) must have the same shape", a->rank,
                           b->rank);
      return FALSE;
    }
  for (int d = 0; d < a->rank; d++)
    {
      if (!_owb_infer_check_same_dim (ctx, a->dims[d], b->dims[d], "A and B dimensions", error))
        return FALSE;
      ctx->outputs[0].dims[d] = merge_dim (a->dims[d], b->dims[d]);
    }
  return TRUE;
}

/* ---- TensorScatter ---------------------------------------------------------------------------- */

static gboolean
infer_tensor_scatter (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *cache = ctx->inputs[0], *update = ctx->inputs[1];
  const char *mode = owb_node_get_string (ctx->node, "mode", "linear");
  if (strcmp (mode, "linear") != 0 && strcmp (mode, "circular") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "mode must be \"linear\" or \"circular\", not \"%s\"",
                           mode);
      return FALSE;
    }
  if (cache->dtype != OWB_TYPE_UNDEFINED && update->dtype != OWB_TYPE_UNDEFINED && cache->dtype != update->dtype)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "past_cache and update must have the same element type");
      return FALSE;
    }
  if (has_input (ctx, 2) && (!check_dtype (ctx, 2, OWB_TYPE_INT64, "write_indices", error)
                             || !check_rank (ctx, 2, 1, "write_indices", error)))
    return FALSE;
  int rank = cache->rank >= 0 ? cache->rank : update->rank;
  if (rank >= 0)
    {
      if (cache->rank >= 0 && update->rank >= 0 && cache->rank != update->rank)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "past_cache (rank %d) and update (rank %d) differ in rank",
                               cache->rank, update->rank);
          return FALSE;
        }
      int64_t axis = owb_node_get_int (ctx->node, "axis", -2);
      if (axis < 0)
        axis += rank;
      if (axis <= 0 || axis >= rank)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "axis %" G_GINT64_FORMAT " is out of range for rank %d (the batch axis 0 is excluded)",
                               owb_node_get_int (ctx->node, "axis", -2), rank);
          return FALSE;
        }
      if (cache->rank >= 0 && update->rank >= 0)
        for (int d = 0; d < rank; d++)
          {
            OwbDim c = cache->dims[d], u = update->dims[d];
            if (d != axis && !_owb_infer_check_same_dim (ctx, c, u, "past_cache and update dimensions", error))
              return FALSE;
            if (d == axis && owb_dim_is_known (c) && owb_dim_is_known (u) && u.value > c.value)
              {
                owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                                     "the update length %" G_GINT64_FORMAT " exceeds the cache length %" G_GINT64_FORMAT,
                                     u.value, c.value);
                return FALSE;
              }
          }
    }
  owb_infer_copy (ctx, 0, 0);
  if (cache->rank >= 0 && update->rank == rank)
    {
      int64_t axis = owb_node_get_int (ctx->node, "axis", -2);
      axis = axis < 0 ? axis + rank : axis;
      for (int d = 0; d < rank; d++)
        if (d != axis)
          ctx->outputs[0].dims[d] = merge_dim (cache->dims[d], update->dims[d]);
    }
  return TRUE;
}

/* ---- CausalConvWithState ---------------------------------------------------------------------- */

static gboolean
infer_causal_conv_with_state (OwbInferContext *ctx, GError **error)
{
  static const char *const names[] = { "input", "weight", "bias", "past_state" };
  static const int ranks[] = { 3, 3, 1, 3 };
  for (int i = 0; i < 4; i++)
    if (has_input (ctx, i) && (!check_float (ctx, i, names[i], error) || !check_rank (ctx, i, ranks[i], names[i], error)))
      return FALSE;
  const char *act = owb_node_get_string (ctx->node, "activation", "none");
  if (strcmp (act, "none") != 0 && strcmp (act, "silu") != 0 && strcmp (act, "swish") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "activation must be \"none\", \"silu\" or \"swish\", not \"%s\"", act);
      return FALSE;
    }
  OwbDim k = in_dim (ctx, 1, 2);
  if (owb_dim_is_known (k) && k.value < 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "the kernel size must be at least 1");
      return FALSE;
    }
  OwbDim km1 = owb_dim_is_known (k) ? OWB_DIM_VALUE (k.value - 1) : in_dim (ctx, 3, 2);
  OwbDim b = merge_dim (in_dim (ctx, 0, 0), in_dim (ctx, 3, 0));
  OwbDim c = merge_dim (in_dim (ctx, 0, 1), in_dim (ctx, 1, 0));
  if (!_owb_infer_check_same_dim (ctx, in_dim (ctx, 0, 1), in_dim (ctx, 1, 0),
                                  "input channels and weight channels", error)
      || !_owb_infer_check_same_dim (ctx, in_dim (ctx, 1, 1), OWB_DIM_VALUE (1), "weight's second dimension", error)
      || !_owb_infer_check_same_dim (ctx, c, in_dim (ctx, 2, 0), "bias length and channels", error)
      || !_owb_infer_check_same_dim (ctx, b, in_dim (ctx, 3, 0), "past_state and input batch sizes", error)
      || !_owb_infer_check_same_dim (ctx, c, in_dim (ctx, 3, 1), "past_state and input channels", error)
      || !_owb_infer_check_same_dim (ctx, km1, in_dim (ctx, 3, 2), "past_state length and kernel size - 1", error))
    return FALSE;
  OwbDataType dtype = ctx->inputs[0]->dtype;
  set_output (ctx, 0, dtype, 3, (OwbDim[]) { b, c, in_dim (ctx, 0, 2) });
  if (ctx->inputs[0]->rank < 0)
    ctx->outputs[0].rank = -1;
  set_output (ctx, 1, dtype, 3, (OwbDim[]) { b, c, km1 });
  return TRUE;
}

/* ---- LinearAttention -------------------------------------------------------------------------- */

static gboolean
infer_linear_attention (OwbInferContext *ctx, GError **error)
{
  static const char *const names[] = { "query", "key", "value", "past_state", "decay", "beta" };
  for (int i = 0; i < 6; i++)
    if (has_input (ctx, i) && (!check_float (ctx, i, names[i], error)
                               || !check_rank (ctx, i, i == 3 ? 4 : 3, names[i], error)))
      return FALSE;
  const char *rule = owb_node_get_string (ctx->node, "update_rule", "gated_delta");
  gboolean gated = strcmp (rule, "gated") == 0 || strcmp (rule, "gated_delta") == 0;
  gboolean delta = strcmp (rule, "delta") == 0 || strcmp (rule, "gated_delta") == 0;
  if (!gated && !delta && strcmp (rule, "linear") != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "update_rule must be \"linear\", \"gated\", \"delta\" or \"gated_delta\", not \"%s\"", rule);
      return FALSE;
    }
  if (gated != has_input (ctx, 4) || delta != has_input (ctx, 5))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "update_rule \"%s\" %s the decay input and %s the beta input", rule,
                           gated ? "needs" : "forbids", delta ? "needs" : "forbids");
      return FALSE;
    }
  int64_t hq, hkv;
  if (!get_heads (ctx, "q_num_heads", &hq, error) || !get_heads (ctx, "kv_num_heads", &hkv, error))
    return FALSE;
  if (hq == 0 || hkv == 0 || hq % hkv != 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "q_num_heads and kv_num_heads are required, and q_num_heads must be a multiple of kv_num_heads");
      return FALSE;
    }
  OwbDim dk, kdk, dv;
  if (!divide_dim (ctx, in_dim (ctx, 0, 2), hq, &dk, "query hidden size", error)
      || !divide_dim (ctx, in_dim (ctx, 1, 2), hkv, &kdk, "key hidden size", error)
      || !divide_dim (ctx, in_dim (ctx, 2, 2), hkv, &dv, "value hidden size", error)
      || !_owb_infer_check_same_dim (ctx, dk, kdk, "query and key head sizes", error))
    return FALSE;
  dk = merge_dim (dk, kdk);
  OwbDim b = in_dim (ctx, 0, 0), t = in_dim (ctx, 0, 1);
  for (int i = 1; i < 6; i++)
    if (i != 3 && has_input (ctx, i)
        && (!_owb_infer_check_same_dim (ctx, b, in_dim (ctx, i, 0), "batch sizes", error)
            || !_owb_infer_check_same_dim (ctx, t, in_dim (ctx, i, 1), "sequence lengths", error)))
      return FALSE;
  if (has_input (ctx, 3)
      && (!_owb_infer_check_same_dim (ctx, b, in_dim (ctx, 3, 0), "past_state batch size", error)
          || !_owb_infer_check_same_dim (ctx, OWB_DIM_VALUE (hkv), in_dim (ctx, 3, 1), "past_state head count", error)
          || !_owb_infer_check_same_dim (ctx, dk, in_dim (ctx, 3, 2), "past_state key size", error)
          || !_owb_infer_check_same_dim (ctx, dv, in_dim (ctx, 3, 3), "past_state value size", error)))
    return FALSE;
  if (has_input (ctx, 4))
    {
      OwbDim d = in_dim (ctx, 4, 2);
      if (owb_dim_is_known (d) && d.value != hkv && !(owb_dim_is_known (dk) && d.value == hkv * dk.value))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                               "decay's last dimension must be kv_num_heads or kv_num_heads * d_k");
          return FALSE;
        }
    }
  if (has_input (ctx, 5))
    {
      OwbDim d = in_dim (ctx, 5, 2);
      if (owb_dim_is_known (d) && d.value != hkv && d.value != 1)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "beta's last dimension must be kv_num_heads or 1");
          return FALSE;
        }
    }
  OwbDataType dtype = ctx->inputs[0]->dtype;
  set_output (ctx, 0, dtype, 3, (OwbDim[]) { b, t, mul_dim (dv, hq) });
  if (has_input (ctx, 3))
    b = merge_dim (b, in_dim (ctx, 3, 0));
  set_output (ctx, 1, has_input (ctx, 3) ? ctx->inputs[3]->dtype : dtype, 4,
              (OwbDim[]) { b, OWB_DIM_VALUE (hkv), dk, dv });
  return TRUE;
}

const OwbOpSchema _owb_ops_transformer[] = {
  { "Attention", "", 23, 3, 6, 1, 4, infer_attention },
  /* 24 adds nonpad_kv_seqlen; 25 adds the window attributes (same inputs, checked on ctx->opset). */
  { "Attention", "", 24, 3, 7, 1, 4, infer_attention },
  { "RotaryEmbedding", "", 23, 3, 4, 1, 1, infer_rotary_embedding },
  { "RMSNormalization", "", 23, 2, 2, 1, 1, infer_rms_normalization },
  { "Swish", "", 24, 1, 1, 1, 1, infer_swish },
  { "TensorScatter", "", 24, 2, 3, 1, 1, infer_tensor_scatter },
  { "CausalConvWithState", "", 27, 2, 4, 1, 2, infer_causal_conv_with_state },
  { "LinearAttention", "", 27, 3, 6, 1, 2, infer_linear_attention },
  { "SwiGLU", "", 28, 2, 2, 1, 1, infer_swiglu },
  { "FlexAttention", "ai.onnx.preview", 1, 3, 3, 1, 1, infer_flex_attention },
  { NULL }
};
