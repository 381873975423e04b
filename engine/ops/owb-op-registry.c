/* owb-op-registry.c: gathers the op family tables into one read-only index, built once. */
#include "owb-ops-private.h"
#include <owb/owb-error.h>

#include <string.h>

static const OwbOpSchema *const families[] = {
  _owb_ops_elementwise, _owb_ops_nn,     _owb_ops_norm,   _owb_ops_tensor, _owb_ops_reduce,
  _owb_ops_resize,      _owb_ops_rnn,    _owb_ops_transformer, _owb_ops_misc, _owb_ops_quant,
  _owb_ops_signal,      _owb_ops_image_decoder, _owb_ops_control, _owb_ops_ml, _owb_ops_fused,
  _owb_ops_fused_transformer, _owb_ops_layout, _owb_ops_device,
};

typedef struct {
  GHashTable *by_name; /* "domain\nop" -> GPtrArray of rows sorted by since */
  GPtrArray *all;
} Registry;

static const char *
normal_domain (const char *domain)
{
  if (!domain || strcmp (domain, "ai.onnx") == 0)
    return "";
  return domain;
}

static int
compare_since (gconstpointer a, gconstpointer b)
{
  const OwbOpSchema *x = *(const OwbOpSchema *const *) a, *y = *(const OwbOpSchema *const *) b;
  return x->since - y->since;
}

static Registry *
registry_get (void)
{
  static gsize once = 0;
  static Registry registry;
  if (g_once_init_enter (&once))
    {
      registry.by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);
      registry.all = g_ptr_array_new ();
      for (guint f = 0; f < G_N_ELEMENTS (families); f++)
        for (const OwbOpSchema *row = families[f]; row->op_type; row++)
          {
            char *key = g_strconcat (normal_domain (row->domain), "\n", row->op_type, NULL);
            GPtrArray *rows = g_hash_table_lookup (registry.by_name, key);
            if (!rows)
              {
                rows = g_ptr_array_new ();
                g_hash_table_insert (registry.by_name, key, rows);
              }
            else
              g_free (key);
            g_ptr_array_add (rows, (gpointer) row);
            g_ptr_array_add (registry.all, (gpointer) row);
          }
      GHashTableIter iter;
      gpointer value;
      g_hash_table_iter_init (&iter, registry.by_name);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        g_ptr_array_sort (value, compare_since);
      g_once_init_leave (&once, 1);
    }
  return &registry;
}

static GPtrArray *
rows_for (const char *domain, const char *op_type)
{
  char *key = g_strconcat (normal_domain (domain), "\n", op_type, NULL);
  GPtrArray *rows = g_hash_table_lookup (registry_get ()->by_name, key);
  g_free (key);
  return rows;
}

const OwbOpSchema *
owb_op_schema_lookup (const char *domain, const char *op_type, int opset)
{
  GPtrArray *rows = rows_for (domain, op_type);
  const OwbOpSchema *best = NULL;
  for (guint i = 0; rows && i < rows->len; i++)
    {
      const OwbOpSchema *row = g_ptr_array_index (rows, i);
      if (row->since <= opset)
        best = row;
    }
  return best;
}

gboolean
owb_op_schema_exists (const char *domain, const char *op_type)
{
  return rows_for (domain, op_type) != NULL;
}

const OwbOpSchema *const *
owb_op_schema_list (guint *n)
{
  Registry *r = registry_get ();
  *n = r->all->len;
  return (const OwbOpSchema *const *) r->all->pdata;
}
