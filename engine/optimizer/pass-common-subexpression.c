/* pass-common-subexpression.c: merges nodes that compute the same op on the same inputs with the same attributes. */
#include "owb-optimizer-private.h"
#include "../ir/owb-ir-private.h"

#include <string.h>

/* Values compared bit for bit (floats included: 0.0 and -0.0 differ, as they may in a result). */
static gboolean
attributes_equal (const OwbAttribute *a, const OwbAttribute *b)
{
  if (a->type != b->type || g_strcmp0 (a->ref_attr_name, b->ref_attr_name) != 0)
    return FALSE;
  switch (a->type)
    {
    case OWB_ATTR_FLOAT:
      return memcmp (&a->f, &b->f, sizeof a->f) == 0;
    case OWB_ATTR_INT:
      return a->i == b->i;
    case OWB_ATTR_STRING:
      return a->s_len == b->s_len && (a->s_len == 0 || memcmp (a->s, b->s, a->s_len) == 0);
    case OWB_ATTR_TENSOR:
      return _owb_pass_tensors_equal (a->t, b->t);
    case OWB_ATTR_FLOATS:
      return a->n == b->n && (a->n == 0 || memcmp (a->floats, b->floats, a->n * sizeof (float)) == 0);
    case OWB_ATTR_INTS:
      return a->n == b->n && (a->n == 0 || memcmp (a->ints, b->ints, a->n * sizeof (int64_t)) == 0);
    case OWB_ATTR_STRINGS:
      if (a->n != b->n)
        return FALSE;
      for (int k = 0; k < a->n; k++)
        if (g_strcmp0 (a->strings[k], b->strings[k]) != 0)
          return FALSE;
      return TRUE;
    case OWB_ATTR_TENSORS:
      if (a->n != b->n)
        return FALSE;
      for (int k = 0; k < a->n; k++)
        if (!_owb_pass_tensors_equal (a->tensors[k], b->tensors[k]))
          return FALSE;
      return TRUE;
    default:
      /* Graphs, sparse tensors, type protos: not compared, so never merged. */
      return FALSE;
    }
}

/* The same value: the same name, or constants of equal contents (the same scalar is often
 * exported once per layer, and constant sharing may not have merged them yet). */
static gboolean
inputs_equal (OwbPassContext *ctx, const char *a, const char *b)
{
  if (strcmp (a, b) == 0)
    return TRUE;
  const OwbTensor *ta = owb_pass_get_constant (ctx, a), *tb = owb_pass_get_constant (ctx, b);
  return ta && tb && _owb_pass_tensors_equal (ta, tb);
}

static gboolean
nodes_equal (OwbPassContext *ctx, const OwbNode *a, const OwbNode *b)
{
  if (strcmp (a->op_type, b->op_type) != 0 || g_strcmp0 (a->domain, b->domain) != 0 || a->n_inputs != b->n_inputs
      || a->n_attributes != b->n_attributes || a->n_outputs < b->n_outputs)
    return FALSE;
  for (int i = 0; i < a->n_inputs; i++)
    if (!inputs_equal (ctx, a->inputs[i], b->inputs[i]))
      return FALSE;
  /* Every output the duplicate writes must be written by the kept node too. */
  for (int o = 0; o < b->n_outputs; o++)
    if (b->outputs[o][0] && !a->outputs[o][0])
      return FALSE;
  for (int k = 0; k < a->n_attributes; k++)
    {
      const OwbAttribute *other = owb_node_get_attribute (b, a->attributes[k].name);
      if (!other || !attributes_equal (&a->attributes[k], other))
        return FALSE;
    }
  return TRUE;
}

/* Op, domain and inputs; a constant input by its type and shape, its contents being compared
 * by nodes_equal. */
static char *
node_key (OwbPassContext *ctx, const OwbNode *node)
{
  GString *key = g_string_new (node->op_type);
  g_string_append_c (key, '\x01');
  g_string_append (key, node->domain ? node->domain : "");
  for (int i = 0; i < node->n_inputs; i++)
    {
      g_string_append_c (key, '\x01');
      const OwbTensor *t = owb_pass_get_constant (ctx, node->inputs[i]);
      if (!t)
        {
          g_string_append (key, node->inputs[i]);
          continue;
        }
      g_string_append_printf (key, "\x02%d:%d", (int) t->dtype, t->rank);
      for (int d = 0; d < t->rank; d++)
        g_string_append_printf (key, ",%" G_GINT64_FORMAT, t->dims[d]);
    }
  return g_string_free (key, FALSE);
}

/* Whether the duplicate's outputs can be redirected to the kept node's. */
static gboolean
can_redirect (OwbPassContext *ctx, const OwbNode *kept, const OwbNode *dup)
{
  for (int o = 0; o < dup->n_outputs; o++)
    {
      const char *out = dup->outputs[o];
      if (!out[0])
        continue;
      if (_owb_pass_is_outer_read (ctx, out))
        return FALSE;
      /* The kept value would be renamed to the duplicate's output name: it must not be an
       * output itself, nor be read by name from a subgraph. */
      if (owb_pass_is_graph_output (ctx, out)
          && (owb_pass_is_graph_output (ctx, kept->outputs[o]) || _owb_pass_is_outer_read (ctx, kept->outputs[o])))
        return FALSE;
    }
  return TRUE;
}

static void
merge (OwbPassContext *ctx, OwbNode *kept, OwbNode *dup)
{
  for (int o = 0; o < dup->n_outputs; o++)
    {
      if (!dup->outputs[o][0])
        continue;
      char *old_name = g_strdup (dup->outputs[o]), *new_name = g_strdup (kept->outputs[o]);
      owb_pass_replace_uses (ctx, old_name, new_name);
      g_free (old_name);
      g_free (new_name);
    }
  owb_pass_remove_node (ctx, dup);
}

/* One sweep in topological order; readers of merged nodes see the kept names when visited, so
 * chains of duplicates merge in the same sweep. */
static gboolean
sweep (OwbPassContext *ctx)
{
  gboolean changed = FALSE;
  GHashTable *seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
  GPtrArray *order = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    g_ptr_array_add (order, g_ptr_array_index (owb_pass_nodes (ctx), i));
  for (guint i = 0; i < order->len; i++)
    {
      OwbNode *node = g_ptr_array_index (order, i);
      if (_owb_node_has_subgraph (node) || _owb_pass_is_nondeterministic (node) || node->n_outputs == 0)
        continue;
      char *key = node_key (ctx, node);
      GPtrArray *same_key = g_hash_table_lookup (seen, key);
      OwbNode *kept = NULL;
      for (guint k = 0; same_key && !kept && k < same_key->len; k++)
        {
          OwbNode *candidate = g_ptr_array_index (same_key, k);
          if (nodes_equal (ctx, candidate, node) && can_redirect (ctx, candidate, node))
            kept = candidate;
        }
      if (kept)
        {
          merge (ctx, kept, node);
          changed = TRUE;
          g_free (key);
          continue;
        }
      if (!same_key)
        {
          same_key = g_ptr_array_new ();
          g_hash_table_insert (seen, key, same_key);
        }
      else
        g_free (key);
      g_ptr_array_add (same_key, node);
    }
  g_ptr_array_unref (order);
  g_hash_table_unref (seen);
  return changed;
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  /* Renaming for graph outputs can change names already hashed: sweep until nothing merges. */
  for (int round = 0; round < 16 && sweep (ctx); round++)
    ;
  return TRUE;
}

const OwbPass _owb_pass_common_subexpression = {
  "common_subexpression",
  OWB_OPTIMIZE_BASIC,
  "merges nodes that compute the same op on the same inputs with the same attributes",
  run,
};
