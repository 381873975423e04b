/* owb-providers.c: the providers built into this libowb, and those registered at run time, created
 * by name. */
#include <owb/owb-providers.h>
#include <owb/owb-error.h>

#include <string.h>

#ifdef OWB_HAVE_CUDA
#include "cuda/owb-cuda-provider.h"
#endif

typedef struct {
  char *name;
  OwbProviderNewFunc new_func;
} Entry;

static GArray *entries;      /* Entry: built-in first, then registered */
static GPtrArray *names;     /* char *, NULL-terminated view of entries' names */

static void
ensure_entries (void)
{
  if (entries)
    return;
  entries = g_array_new (FALSE, FALSE, sizeof (Entry));
  names = g_ptr_array_new ();
  Entry cpu = { g_strdup ("cpu"), owb_cpu_provider_new };
  g_array_append_val (entries, cpu);
#ifdef OWB_HAVE_CUDA
  Entry cuda = { g_strdup ("cuda"), owb_cuda_provider_new };
  g_array_append_val (entries, cuda);
#endif
}

static void
rebuild_names (void)
{
  g_ptr_array_set_size (names, 0);
  for (guint i = 0; i < entries->len; i++)
    g_ptr_array_add (names, g_array_index (entries, Entry, i).name);
  g_ptr_array_add (names, NULL);
}

void
owb_providers_register (const char *name, OwbProviderNewFunc new_func)
{
  g_return_if_fail (name != NULL && new_func != NULL);
  ensure_entries ();
  for (guint i = 0; i < entries->len; i++)
    {
      Entry *e = &g_array_index (entries, Entry, i);
      if (strcmp (e->name, name) == 0)
        {
          e->new_func = new_func;
          return;
        }
    }
  Entry e = { g_strdup (name), new_func };
  g_array_append_val (entries, e);
  rebuild_names ();
}

const char *const *
owb_providers_get_available (void)
{
  ensure_entries ();
  if (names->len == 0)
    rebuild_names ();
  return (const char *const *) names->pdata;
}

static const Entry *
find_entry (const char *name)
{
  ensure_entries ();
  for (guint i = 0; i < entries->len; i++)
    if (strcmp (g_array_index (entries, Entry, i).name, name) == 0)
      return &g_array_index (entries, Entry, i);
  return NULL;
}

static void
provider_free (gpointer data)
{
  OwbProvider *provider = data;
  if (provider->free)
    provider->free (provider);
}

GPtrArray *
owb_providers_new_from_list (const char *names_list, GError **error)
{
  GPtrArray *providers = g_ptr_array_new_with_free_func (provider_free);
  g_auto (GStrv) parts = g_strsplit (names_list ? names_list : "cpu", ",", -1);
  GHashTable *seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (int i = 0; parts[i]; i++)
    {
      const char *name = g_strstrip (parts[i]);
      if (!name[0] || g_hash_table_contains (seen, name))
        continue;
      const Entry *e = find_entry (name);
      if (!e)
        {
          g_autofree char *have = g_strjoinv (", ", (char **) owb_providers_get_available ());
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                       "unknown execution provider '%s' (this build has: %s)", name, have);
          g_hash_table_unref (seen);
          g_ptr_array_unref (providers);
          return NULL;
        }
      g_hash_table_add (seen, (gpointer) name);
      g_ptr_array_add (providers, e->new_func ());
    }
  /* The CPU is the provider of last resort. */
  if (!g_hash_table_contains (seen, "cpu"))
    g_ptr_array_add (providers, owb_cpu_provider_new ());
  g_hash_table_unref (seen);
  return providers;
}
