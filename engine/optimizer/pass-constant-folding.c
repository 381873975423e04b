/* pass-constant-folding.c: evaluates nodes whose inputs are all constant (outputs up to a size cap). */
#include "owb-optimizer-private.h"
#include "../ir/owb-ir-private.h"

#include <string.h>

#define DEFAULT_FOLD_MAX_BYTES ((gsize) 16 << 20)

/* Shared with pass-shape-simplify.c, which folds what its new constants make foldable. */
gboolean _owb_fold_constants (OwbPassContext *ctx, GError **error);

static gsize
tensor_bytes (const OwbTensor *t)
{
  if (t->dtype == OWB_TYPE_STRING)
    {
      gsize n = 0;
      for (int64_t i = 0; i < t->nelems; i++)
        n += (((char **) t->data)[i] ? strlen (((char **) t->data)[i]) : 0) + sizeof (char *);
      return n;
    }
  return t->nbytes;
}

/* The bytes an output will take, when inference knows its shape; 0 if unknown. */
static gsize
expected_bytes (const OwbValueType *type)
{
  if (!type || type->kind != OWB_VALUE_TENSOR || !owb_value_type_is_fully_known (type))
    return 0;
  gsize size = owb_data_type_size (type->dtype);
  if (size == 0)
    size = 1;
  double n = (double) size;
  for (int i = 0; i < type->rank; i++)
    n *= (double) type->dims[i].value;
  return n > (double) G_MAXSIZE ? G_MAXSIZE : (gsize) n;
}

/* Whether every non-empty input is a constant and nothing in the node's nature forbids folding. */
static gboolean
can_fold (OwbPassContext *ctx, const OwbNode *node)
{
  if (_owb_node_has_subgraph (node) || node->n_outputs == 0)
    return FALSE;
  gboolean is_constant_op = owb_pass_is_op (node, "Constant");
  int n_given = 0;
  for (int i = 0; i < node->n_inputs; i++)
    {
      if (!node->inputs[i][0])
        continue;
      if (!owb_pass_get_constant (ctx, node->inputs[i]))
        return FALSE;
      n_given++;
    }
  /* Source ops other than Constant (random generators, ops of other domains) are left alone. */
  if (n_given == 0 && !is_constant_op)
    return FALSE;
  /* As ONNX Runtime: quantized weights stay quantized, so that QDQ fusions still see
   * DequantizeLinear over an integer weight (and the model stays 4x smaller). */
  if (strcmp (node->op_type, "DequantizeLinear") == 0)
    return FALSE;
  if (_owb_pass_is_nondeterministic (node))
    {
      owb_pass_near_miss (ctx, node, "all inputs are constant but %s is nondeterministic; not folded",
                           node->op_type);
      return FALSE;
    }
  for (int o = 0; o < node->n_outputs; o++)
    {
      const char *out = node->outputs[o];
      if (!out[0])
        continue;
      /* A graph output must keep being written by a node, and subgraph reads are by name. */
      if (owb_pass_is_graph_output (ctx, out) || _owb_pass_is_outer_read (ctx, out))
        return FALSE;
      const OwbValueType *type = owb_pass_value_type (ctx, out);
      if (type && type->kind != OWB_VALUE_TENSOR && type->kind != OWB_VALUE_UNKNOWN_KIND)
        return FALSE;
    }
  return TRUE;
}

static OwbModel *
one_node_model (OwbPassContext *ctx, const OwbNode *node)
{
  OwbModel *m = owb_model_new ();
  m->ir_version = MAX (ctx->model->ir_version, 4);
  for (guint i = 0; i < ctx->model->opset_imports->len; i++)
    {
      const OwbOpsetImport *imp = &g_array_index (ctx->model->opset_imports, OwbOpsetImport, i);
      owb_model_set_opset (m, imp->domain, imp->version);
    }
  m->graph = owb_graph_new ("constant_folding");
  m->graph->model = m;
  owb_graph_add_node (m->graph, owb_node_dup (node));
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i][0])
      owb_graph_add_initializer (m->graph, node->inputs[i],
                                 owb_tensor_ref ((OwbTensor *) owb_pass_get_constant (ctx, node->inputs[i])));
  for (int o = 0; o < node->n_outputs; o++)
    if (node->outputs[o][0])
      g_ptr_array_add (m->graph->outputs, owb_value_info_new (node->outputs[o], NULL));
  return m;
}

OwbSession *
_owb_pass_new_host_session (OwbPassContext *ctx, OwbModel *model, GError **error)
{
  g_autoptr (GPtrArray) host = g_ptr_array_new ();
  const GPtrArray *all = ctx->options->providers;
  for (guint i = 0; all && i < all->len; i++)
    if (((OwbProvider *) g_ptr_array_index (all, i))->device == NULL)
      g_ptr_array_add (host, g_ptr_array_index (all, i));
  OwbSessionOptions so;
  owb_session_options_init (&so);
  so.providers = host;
  so.n_threads = 1;
  so.optimize = OWB_OPTIMIZE_DISABLED;
  return owb_session_new (model, &so, error);
}

gboolean
_owb_pass_evaluate_node (OwbPassContext *ctx, const OwbNode *node, OwbTensor **values, GError **error)
{
  g_autoptr (OwbModel) m = one_node_model (ctx, node);
  g_autoptr (OwbSession) session = _owb_pass_new_host_session (ctx, m, error);
  if (!session)
    return FALSE;
  guint n = m->graph->outputs->len;
  OwbTensor **outs = g_new0 (OwbTensor *, MAX (n, 1));
  gboolean ok = owb_session_run (session, 0, NULL, NULL, n, NULL, outs, NULL, NULL, error);
  for (int o = 0, k = 0; ok && o < node->n_outputs; o++)
    if (node->outputs[o][0])
      values[o] = outs[k++];
  if (!ok)
    for (guint k = 0; k < n; k++)
      g_clear_pointer (&outs[k], owb_tensor_unref);
  g_free (outs);
  return ok;
}

/* Adds the node's values as initializers of the same names, so readers need no edit. The node
 * itself is removed later: removing invalidates the graph maps, and rebuilding them after every
 * fold would make the pass quadratic. Until then an initializer shadows the node's output. */
static void
add_initializers (OwbPassContext *ctx, OwbNode *node, OwbTensor **values)
{
  for (int o = 0; o < node->n_outputs; o++)
    if (node->outputs[o][0] && values[o])
      {
        owb_graph_add_initializer (ctx->graph, node->outputs[o], values[o]);
        values[o] = NULL;
      }
}

/* TRUE when the node was folded (and is left for the caller to remove). */
static gboolean
fold_node (OwbPassContext *ctx, OwbNode *node, gsize cap)
{
  int n = node->n_outputs;
  OwbTensor **values = g_new0 (OwbTensor *, (gsize) MAX (n, 1));
  const OwbAttribute *value = owb_node_get_attribute (node, "value");
  gboolean ok = TRUE, direct = FALSE;
  /* The tensor is already there: share it rather than copy (Identity over weights is common).
   * That costs no memory, so the cap does not apply. */
  if (owb_pass_is_op (node, "Constant") && value && value->type == OWB_ATTR_TENSOR
      && value->t && n == 1)
    {
      values[0] = owb_tensor_ref (value->t);
      direct = TRUE;
    }
  else if (owb_pass_is_op (node, "Identity") && n == 1 && node->n_inputs == 1)
    {
      values[0] = owb_tensor_ref ((OwbTensor *) owb_pass_get_constant (ctx, node->inputs[0]));
      direct = TRUE;
    }
  for (int o = 0; !direct && ok && o < n; o++)
    {
      gsize bytes = node->outputs[o][0] ? expected_bytes (owb_pass_value_type (ctx, node->outputs[o])) : 0;
      if (bytes > cap)
        {
          owb_pass_near_miss (ctx, node, "output '%s' would take %" G_GSIZE_FORMAT " bytes, more than the folding cap of %"
                               G_GSIZE_FORMAT "; kept as is", node->outputs[o], bytes, cap);
          ok = FALSE;
        }
    }
  if (!direct && ok)
    {
      GError *local = NULL;
      ok = _owb_pass_evaluate_node (ctx, node, values, &local);
      if (!ok)
        {
          owb_pass_near_miss (ctx, node, "inputs are constant but it could not be evaluated: %s",
                               local ? local->message : "unknown error");
          g_clear_error (&local);
        }
    }

  for (int o = 0; ok && o < n; o++)
    {
      if (!node->outputs[o][0])
        continue;
      OwbTensor *t = values[o];
      if (!t || t->kind != OWB_VALUE_TENSOR)
        ok = FALSE; /* sequences and optionals stay computed */
      else if (!direct && tensor_bytes (t) > cap)
        {
          owb_pass_near_miss (ctx, node, "output '%s' takes %" G_GSIZE_FORMAT " bytes, more than the folding cap of %"
                               G_GSIZE_FORMAT "; kept as is", node->outputs[o], tensor_bytes (t), cap);
          ok = FALSE;
        }
      else if (!direct)
        {
          /* A compact copy: a kernel's output may sit in a larger buffer or view another tensor. */
          values[o] = owb_tensor_dup (t);
          owb_tensor_unref (t);
        }
    }
  if (ok)
    add_initializers (ctx, node, values);
  for (int o = 0; o < n; o++)
    g_clear_pointer (&values[o], owb_tensor_unref);
  g_free (values);
  return ok;
}

/* A weight's Transpose that only feeds a MatMul is left to fuse_transpose_matmul when that pass will
 * run: the product then reads the weight transposed in place, where folding would keep a second,
 * transposed copy of the weight for the session's life (vit_b_32: 311 of its 353 MB). The
 * conditions are the ones under which that pass fuses. */
#define DEFER_MIN_BYTES (64 * 1024)

static gboolean
left_to_transpose_fusion (OwbPassContext *ctx, const OwbNode *node)
{
  const OwbOptimizeOptions *o = ctx->options;
  if (!owb_pass_is_op (node, "Transpose") || node->n_inputs != 1 || node->n_outputs != 1
      || o->level < OWB_OPTIMIZE_EXTENDED)
    return FALSE;
  for (const char *const *p = o->disabled_passes; p && *p; p++)
    if (strcmp (*p, "fuse_transpose_matmul") == 0)
      return FALSE;
  const OwbTensor *w = owb_pass_get_constant (ctx, node->inputs[0]);
  if (!w || w->kind != OWB_VALUE_TENSOR || w->nbytes < DEFER_MIN_BYTES || !owb_pass_swaps_last_two (node, w->rank))
    return FALSE;
  GPtrArray *readers = owb_pass_consumers (ctx, node->outputs[0]);
  if (owb_pass_n_uses (ctx, node->outputs[0]) != 1 || readers->len != 1)
    return FALSE;
  const OwbNode *mm = g_ptr_array_index (readers, 0);
  if (!owb_pass_is_op (mm, "MatMul") || mm->n_inputs != 2 || mm->n_outputs != 1)
    return FALSE;
  const OwbValueType *out = owb_pass_value_type (ctx, mm->outputs[0]);
  if (!out || (out->dtype != OWB_TYPE_FLOAT && out->dtype != OWB_TYPE_DOUBLE && out->dtype != OWB_TYPE_FLOAT16))
    return FALSE;
  if (o->portable)
    {
      /* standard ops only: the fusion is then a Gemm, which takes 2-D operands from opset 11 */
      const char *other = strcmp (mm->inputs[0], node->outputs[0]) == 0 ? mm->inputs[1] : mm->inputs[0];
      const OwbTensor *oc = owb_pass_get_constant (ctx, other);
      const OwbValueType *ot = oc ? NULL : owb_pass_value_type (ctx, other);
      int other_rank = oc ? oc->rank : (ot && ot->kind == OWB_VALUE_TENSOR ? ot->rank : -1);
      if (w->rank != 2 || other_rank != 2 || owb_pass_opset (ctx) < 11)
        return FALSE;
    }
  return TRUE;
}

gboolean
_owb_fold_constants (OwbPassContext *ctx, GError **error)
{
  gsize cap = ctx->options->fold_max_bytes ? ctx->options->fold_max_bytes : DEFAULT_FOLD_MAX_BYTES;
  /* The graph is sorted: a node's constant inputs were folded before it is visited, so one sweep
   * reaches the fixed point. */
  GPtrArray *order = g_ptr_array_new ();
  GPtrArray *folded = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    g_ptr_array_add (order, g_ptr_array_index (owb_pass_nodes (ctx), i));
  for (guint i = 0; i < order->len; i++)
    {
      OwbNode *node = g_ptr_array_index (order, i);
      if (!can_fold (ctx, node) || left_to_transpose_fusion (ctx, node))
        continue;
      if (!ctx->options->providers && !owb_pass_is_op (node, "Constant"))
        continue; /* nothing to evaluate with */
      if (fold_node (ctx, node, cap))
        g_ptr_array_add (folded, node);
    }
  for (guint i = 0; i < folded->len; i++)
    owb_pass_remove_node (ctx, g_ptr_array_index (folded, i));
  g_ptr_array_unref (folded);
  g_ptr_array_unref (order);
  return TRUE;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  return _owb_fold_constants (ctx, error);
}

const OwbPass _owb_pass_constant_folding = {
  "constant_folding",
  OWB_OPTIMIZE_BASIC,
  "evaluates nodes whose inputs are all constant (outputs up to a size cap)",
  run,
};
