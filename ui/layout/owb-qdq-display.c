/* owb-qdq-display.c: the display copy of a QDQ model with its QuantizeLinear / DequantizeLinear
 * pairs collapsed into badges on the nodes they wrap (see the header). */
#include "owb-qdq-display.h"

#include <string.h>

struct _OwbQdqDisplay {
  int ref_count;
  OwbModel *model;
  GHashTable *badges;   /* OwbNode * (of model) -> char * */
  guint n_hidden;
};

typedef struct {
  GPtrArray *in_types;  /* of const char *, short names, in input order, no repeats */
  const char *out_type;
} Wrapping;

static void
wrapping_free (Wrapping *w)
{
  g_ptr_array_unref (w->in_types);
  g_free (w);
}

static gboolean
is_op (const OwbNode *node, const char *op_type)
{
  return strcmp (node->op_type, op_type) == 0 && (node->domain[0] == '\0' || strcmp (node->domain, "ai.onnx") == 0);
}

const char *
owb_qdq_display_short_type (OwbDataType t)
{
  switch (t)
    {
    case OWB_TYPE_UINT8:
      return "u8";
    case OWB_TYPE_INT8:
      return "s8";
    case OWB_TYPE_UINT16:
      return "u16";
    case OWB_TYPE_INT16:
      return "s16";
    case OWB_TYPE_INT32:
      return "s32";
    default:
      return owb_data_type_name (t);
    }
}

/* The integer type of a Q or DQ: its zero point's, else the stored constant's (a DQ of a weight),
 * else uint8 (the default when the zero point is left out). */
static OwbDataType
qdq_type (const OwbGraph *g, const OwbNode *node)
{
  const char *zp = owb_node_get_input (node, 2);
  const OwbTensor *z = zp ? owb_graph_get_initializer (g, zp) : NULL;
  if (z)
    return z->dtype;
  if (is_op (node, "DequantizeLinear"))
    {
      const char *in = owb_node_get_input (node, 0);
      const OwbTensor *c = in ? owb_graph_get_initializer (g, in) : NULL;
      if (c)
        return c->dtype;
    }
  return (OwbDataType) owb_node_get_int (node, "output_dtype", OWB_TYPE_UINT8);
}

static Wrapping *
wrapping_of (GHashTable *wrapped, OwbNode *node)
{
  Wrapping *w = g_hash_table_lookup (wrapped, node);
  if (!w)
    {
      w = g_new0 (Wrapping, 1);
      w->in_types = g_ptr_array_new ();
      g_hash_table_insert (wrapped, node, w);
    }
  return w;
}

static void
add_in_type (Wrapping *w, const char *type)
{
  /* a bias (int32 at s_x * s_w) says nothing the weight's type does not */
  if (strcmp (type, "s32") == 0)
    return;
  for (guint i = 0; i < w->in_types->len; i++)
    if (strcmp (g_ptr_array_index (w->in_types, i), type) == 0)
      return;
  g_ptr_array_add (w->in_types, (gpointer) type);
}

static gboolean
is_graph_output (const OwbGraph *g, const char *name)
{
  for (guint i = 0; i < g->outputs->len; i++)
    if (strcmp (((OwbValueInfo *) g_ptr_array_index (g->outputs, i))->name, name) == 0)
      return TRUE;
  return FALSE;
}

OwbQdqDisplay *
owb_qdq_display_new (const OwbModel *source)
{
  OwbQdqDisplay *d = g_new0 (OwbQdqDisplay, 1);
  d->ref_count = 1;
  d->model = owb_model_dup (source);
  d->badges = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
  OwbGraph *g = d->model->graph;

  g_autoptr (GHashTable) producer = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) readers = g_hash_table_new (g_str_hash, g_str_equal); /* name -> count */
  for (guint i = 0; i < g->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (g->nodes, i);
      for (int o = 0; o < n->n_outputs; o++)
        if (n->outputs[o][0])
          g_hash_table_insert (producer, n->outputs[o], n);
      for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k][0])
          g_hash_table_insert (readers, n->inputs[k],
                               GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (readers, n->inputs[k])) + 1));
    }

  /* DequantizeLinear output -> what its readers read instead (the float tensor, or the stored
   * constant), and the type they read it as */
  g_autoptr (GHashTable) replace = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) replace_type = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) hidden = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GHashTable) q_left = g_hash_table_new (g_direct_hash, g_direct_equal); /* Q -> DQs kept */
  g_autoptr (GHashTable) wrapped = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                                          (GDestroyNotify) wrapping_free);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      OwbNode *dq = g_ptr_array_index (g->nodes, i);
      const char *in = owb_node_get_input (dq, 0), *out = owb_node_get_output (dq, 0);
      if (!is_op (dq, "DequantizeLinear") || !in || !out || is_graph_output (g, out))
        continue;
      const char *type = owb_qdq_display_short_type (qdq_type (g, dq));
      if (owb_graph_get_initializer (g, in))
        {
          /* a weight stored quantized: its reader shows the stored tensor itself */
          g_hash_table_insert (replace, g_strdup (out), g_strdup (in));
          g_hash_table_insert (replace_type, g_strdup (out), (gpointer) type);
          g_hash_table_add (hidden, dq);
          continue;
        }
      OwbNode *q = g_hash_table_lookup (producer, in);
      const char *x = q && is_op (q, "QuantizeLinear") ? owb_node_get_input (q, 0) : NULL;
      if (!x)
        continue;
      /* a chain of pairs (requantization) collapses to the first float tensor */
      const char *resolved = g_hash_table_lookup (replace, x);
      const char *source_name = resolved ? resolved : x;
      g_hash_table_insert (replace, g_strdup (out), g_strdup (source_name));
      g_hash_table_insert (replace_type, g_strdup (out), (gpointer) type);
      g_hash_table_add (hidden, dq);
      /* the Q goes once every reader of its output is a hidden DQ */
      guint left = GPOINTER_TO_UINT (g_hash_table_lookup (q_left, q));
      if (!g_hash_table_contains (q_left, q))
        left = GPOINTER_TO_UINT (g_hash_table_lookup (readers, in));
      left = left > 0 ? left - 1 : 0;
      g_hash_table_insert (q_left, q, GUINT_TO_POINTER (left));
      if (left == 0 && !is_graph_output (g, in))
        {
          g_hash_table_add (hidden, q);
          OwbNode *p = g_hash_table_lookup (producer, source_name);
          /* the first pair of a chain is the one its producer writes through */
          if (p && !g_hash_table_contains (hidden, p) && !wrapping_of (wrapped, p)->out_type)
            wrapping_of (wrapped, p)->out_type = owb_qdq_display_short_type (qdq_type (g, q));
        }
    }

  /* readers take the replacements; the hidden nodes go */
  g_autoptr (GPtrArray) kept = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_node_free);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (g->nodes, i);
      if (g_hash_table_contains (hidden, n))
        continue;
      for (int k = 0; k < n->n_inputs; k++)
        {
          const char *r = n->inputs[k][0] ? g_hash_table_lookup (replace, n->inputs[k]) : NULL;
          if (!r)
            continue;
          add_in_type (wrapping_of (wrapped, n), g_hash_table_lookup (replace_type, n->inputs[k]));
          g_free (n->inputs[k]);
          n->inputs[k] = g_strdup (r);
        }
    }
  for (guint i = 0; i < g->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (g->nodes, i);
      g->nodes->pdata[i] = NULL;
      if (g_hash_table_contains (hidden, n))
        {
          owb_node_free (n);
          d->n_hidden++;
        }
      else
        g_ptr_array_add (kept, n);
    }
  g_ptr_array_set_size (g->nodes, 0);
  for (guint i = 0; i < kept->len; i++)
    {
      g_ptr_array_add (g->nodes, kept->pdata[i]);
      kept->pdata[i] = NULL;
    }

  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init (&it, wrapped);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      Wrapping *w = value;
      g_autoptr (GString) badge = g_string_new (NULL);
      for (guint i = 0; i < w->in_types->len; i++)
        g_string_append_printf (badge, i ? ", %s" : "%s", (const char *) g_ptr_array_index (w->in_types, i));
      if (w->in_types->len)
        g_string_append (badge, " ←");
      if (w->out_type)
        g_string_append_printf (badge, "%s→ %s", badge->len ? " / " : "", w->out_type);
      if (!badge->len)
        continue;
      OwbAttribute *note = owb_node_add_attribute (key, OWB_SCENE_NOTE_ATTRIBUTE, OWB_ATTR_STRING);
      note->s = g_strdup (badge->str);
      note->s_len = badge->len;
      g_hash_table_insert (d->badges, key, g_string_free (g_steal_pointer (&badge), FALSE));
    }
  return d;
}

OwbQdqDisplay *
owb_qdq_display_ref (OwbQdqDisplay *display)
{
  display->ref_count++;
  return display;
}

void
owb_qdq_display_unref (OwbQdqDisplay *display)
{
  if (display == NULL || --display->ref_count > 0)
    return;
  owb_model_unref (display->model);
  g_hash_table_unref (display->badges);
  g_free (display);
}

OwbModel *
owb_qdq_display_get_model (OwbQdqDisplay *display)
{
  return display->model;
}

const char *
owb_qdq_display_get_badge (OwbQdqDisplay *display, const OwbNode *node)
{
  return g_hash_table_lookup (display->badges, node);
}

guint
owb_qdq_display_get_n_hidden (OwbQdqDisplay *display)
{
  return display->n_hidden;
}
