/* owb-cmd-ops.c: `owb ops`: the operators (and opset versions) the engine has schemas for, and
 * the providers this build has. Used by build-aux/update-skip-list.py to tell missing ops. */
#include "owb-cli.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  const char *domain;
  const char *op_type;
  GArray *versions; /* of int */
} OpEntry;

static gint
compare_entries (gconstpointer a, gconstpointer b)
{
  const OpEntry *x = a, *y = b;
  int c = strcmp (x->domain, y->domain);
  return c != 0 ? c : strcmp (x->op_type, y->op_type);
}

static gint
compare_ints (gconstpointer a, gconstpointer b)
{
  int x = *(const int *) a, y = *(const int *) b;
  return (x > y) - (x < y);
}

int
owb_cmd_ops (int argc, char **argv)
{
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    OWB_CLI_JSON_ENTRY (json),
    { NULL }
  };
  g_autoptr (GHashTable) index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GArray) ops = g_array_new (FALSE, FALSE, sizeof (OpEntry));
  g_autoptr (GString) out = g_string_new (NULL);
  const OwbOpSchema *const *rows;
  const char *const *available = owb_providers_get_available ();
  guint n = 0;

  const char *summary = "List the operators the engine knows, with the opset versions where their\n"
                        "definitions start, and the execution providers of this build.";
  if (!owb_cli_parse ("ops", NULL, summary, entries, &argc, &argv))
    return OWB_EXIT_USAGE;
  if (argc != 1)
    {
      owb_cli_error ("ops", "takes no arguments (see owb ops --help)");
      return OWB_EXIT_USAGE;
    }

  rows = owb_op_schema_list (&n);
  for (guint i = 0; i < n; i++)
    {
      const OwbOpSchema *s = rows[i];
      const char *domain = s->domain != NULL && strcmp (s->domain, "ai.onnx") != 0 ? s->domain : "";
      g_autofree char *key = g_strdup_printf ("%s\n%s", domain, s->op_type);
      gpointer pos;
      OpEntry *e;

      if (!g_hash_table_lookup_extended (index, key, NULL, &pos))
        {
          OpEntry fresh = { domain, s->op_type, g_array_new (FALSE, FALSE, sizeof (int)) };
          g_array_append_val (ops, fresh);
          pos = GUINT_TO_POINTER (ops->len - 1);
          g_hash_table_insert (index, g_steal_pointer (&key), pos);
        }
      e = &g_array_index (ops, OpEntry, GPOINTER_TO_UINT (pos));
      g_array_append_val (e->versions, s->since);
    }
  g_array_sort (ops, compare_entries);

  if (json)
    {
      owb_json_begin_object (out, NULL);
      owb_json_begin_array (out, "providers");
      for (guint i = 0; available != NULL && available[i] != NULL; i++)
        {
          owb_json_append_separator (out);
          owb_json_append_string (out, available[i]);
        }
      g_string_append_c (out, ']');
      owb_json_begin_array (out, "ops");
    }
  else
    {
      g_string_append (out, "Providers:");
      for (guint i = 0; available != NULL && available[i] != NULL; i++)
        g_string_append_printf (out, " %s", available[i]);
      g_string_append_printf (out, "\nOperators (%u):\n", ops->len);
    }
  for (guint i = 0; i < ops->len; i++)
    {
      OpEntry *e = &g_array_index (ops, OpEntry, i);
      g_array_sort (e->versions, compare_ints);
      if (json)
        {
          owb_json_begin_object (out, NULL);
          owb_json_append_member_string (out, "domain", e->domain);
          owb_json_append_member_string (out, "op_type", e->op_type);
          owb_json_begin_array (out, "since");
          for (guint v = 0; v < e->versions->len; v++)
            {
              owb_json_append_separator (out);
              g_string_append_printf (out, "%d", g_array_index (e->versions, int, v));
            }
          g_string_append (out, "]}");
        }
      else
        {
          g_string_append_printf (out, "  %s%s%-28s", e->domain, *e->domain ? "." : "", e->op_type);
          for (guint v = 0; v < e->versions->len; v++)
            g_string_append_printf (out, "%s%d", v ? ", " : " ", g_array_index (e->versions, int, v));
          g_string_append_c (out, '\n');
        }
      g_array_unref (e->versions);
    }
  if (json)
    g_string_append (out, "]}\n");
  fputs (out->str, stdout);
  return OWB_EXIT_OK;
}
