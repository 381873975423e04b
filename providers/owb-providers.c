/* owb-providers.c: the providers built into this libowb, created by name. */
#include <owb/owb-providers.h>
#include <owb/owb-error.h>

#include <string.h>

static const char *const available[] = { "cpu", NULL };

const char *const *
owb_providers_get_available (void)
{
  return available;
}

static void
provider_free (gpointer data)
{
  OwbProvider *provider = data;
  if (provider->free)
    provider->free (provider);
}

GPtrArray *
owb_providers_new_from_list (const char *names, GError **error)
{
  GPtrArray *providers = g_ptr_array_new_with_free_func (provider_free);
  g_auto (GStrv) parts = g_strsplit (names ? names : "cpu", ",", -1);
  gboolean have_cpu = FALSE;
  for (int i = 0; parts[i]; i++)
    {
      const char *name = g_strstrip (parts[i]);
      if (!name[0])
        continue;
      if (strcmp (name, "cpu") == 0)
        {
          if (!have_cpu)
            g_ptr_array_add (providers, owb_cpu_provider_new ());
          have_cpu = TRUE;
        }
      else
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                       "unknown execution provider '%s' (this build has: cpu)", name);
          g_ptr_array_unref (providers);
          return NULL;
        }
    }
  if (!have_cpu)
    g_ptr_array_add (providers, owb_cpu_provider_new ());
  return providers;
}
