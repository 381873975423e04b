/* owb-cuda-loader.c: part of libowb itself: loads the CUDA provider module (libowb-cuda.so) on
 * first use and creates providers from it. Where the module cannot be loaded (the CUDA libraries
 * are missing on this machine), "cuda" is still a provider: one that declines every node with the
 * loader's reason, so that claim maps explain themselves. */
#define _GNU_SOURCE /* dladdr */
#include "owb-cuda-provider.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef OwbProvider *(*ModuleNewFunc) (void);

static ModuleNewFunc module_new;
static char *module_error;

static void
load_module (void)
{
  static gsize once = 0;
  if (!g_once_init_enter (&once))
    return;
  /* OWB_CUDA_MODULE names the module to use (only it); otherwise the one beside this libowb: the build tree's
   * when this libowb is the build tree's (tests, uninstalled runs), else the installed one, so
   * that an installed libowb never picks up a stale build. */
  const char *mine = OWB_CUDA_MODULE_INSTALL_PATH, *other = OWB_CUDA_MODULE_BUILD_PATH;
  Dl_info info;
  if (dladdr ((void *) owb_cuda_provider_new, &info) && info.dli_fname)
    {
      g_autofree char *dir = g_path_get_dirname (info.dli_fname);
      g_autofree char *real = realpath (dir, NULL);
      if (real && strcmp (real, OWB_LIBOWB_BUILD_DIR) == 0)
        {
          mine = OWB_CUDA_MODULE_BUILD_PATH;
          other = OWB_CUDA_MODULE_INSTALL_PATH;
        }
    }
  const char *env = g_getenv ("OWB_CUDA_MODULE");
  const char *candidates[] = { env, env ? NULL : mine, env ? NULL : other };
  GString *errors = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (candidates) && !module_new; i++)
    {
      const char *path = candidates[i];
      if (!path || !path[0] || (path != env && !g_file_test (path, G_FILE_TEST_EXISTS)))
        continue;
      void *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
      if (!handle)
        {
          g_string_append_printf (errors, "%s%s", errors->len ? "; " : "", dlerror ());
          continue;
        }
      module_new = (ModuleNewFunc) dlsym (handle, "owb_cuda_module_provider_new");
      if (!module_new)
        {
          g_string_append_printf (errors, "%s%s has no provider", errors->len ? "; " : "", path);
          dlclose (handle);
        }
      /* A loaded module stays: its providers may live until the process ends. */
    }
  if (!module_new)
    module_error = g_strdup_printf ("the CUDA provider module cannot be loaded: %s",
                                    errors->len ? errors->str : "libowb-cuda.so not found");
  g_string_free (errors, TRUE);
  g_once_init_leave (&once, 1);
}

static gboolean
unloaded_supports (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
                   const OwbValueType *output_types, char **reason)
{
  *reason = g_strdup_printf ("no CUDA device (%s)", module_error);
  return FALSE;
}

static gboolean
unloaded_claim (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
                const OwbValueType *output_types, OwbKernelChoice *choice, char **reason, GError **error)
{
  return unloaded_supports (provider, node, opset, input_types, output_types, reason);
}

static void
unloaded_free (OwbProvider *provider)
{
  g_free (provider);
}

OwbProvider *
owb_cuda_provider_new (void)
{
  load_module ();
  if (module_new)
    return module_new ();
  OwbProvider *p = g_new0 (OwbProvider, 1);
  p->name = "cuda";
  p->description = "CUDA: provider module not loaded";
  p->supports = unloaded_supports;
  p->claim = unloaded_claim;
  p->free = unloaded_free;
  return p;
}
