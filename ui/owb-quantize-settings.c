/* owb-quantize-settings.c: the Quantize page's settings per model, in a key file. A value that does
 * not parse is skipped, so a file edited by hand (or written by a later version) never stops a
 * page from opening. */
#include "owb-quantize-settings.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

static const char *const normalization_names[] = { "unit", "imagenet", "symmetric", "custom" };

void
owb_quantize_normalization_values (OwbQuantizeNormalization normalization, const OwbQuantizeSettings *settings,
                                   float mean[3], float std[3])
{
  static const float imagenet_mean[3] = { 0.485f, 0.456f, 0.406f };
  static const float imagenet_std[3] = { 0.229f, 0.224f, 0.225f };
  for (int c = 0; c < 3; c++)
    switch (normalization)
      {
      case OWB_QUANTIZE_NORMALIZATION_IMAGENET:
        mean[c] = imagenet_mean[c];
        std[c] = imagenet_std[c];
        break;
      case OWB_QUANTIZE_NORMALIZATION_SYMMETRIC:
        mean[c] = 0.5f;
        std[c] = 0.5f;
        break;
      case OWB_QUANTIZE_NORMALIZATION_CUSTOM:
        mean[c] = settings->mean[c];
        std[c] = settings->std[c];
        break;
      case OWB_QUANTIZE_NORMALIZATION_UNIT:
      default:
        mean[c] = 0;
        std[c] = 1;
      }
}

char *
owb_quantize_settings_dup_path (void)
{
  return g_build_filename (g_get_user_config_dir (), "onnx-workbench", "quantize.ini", NULL);
}

static const char *
type_name (OwbDataType type)
{
  return type == OWB_TYPE_INT8 ? "s8" : "u8";
}

static gboolean
type_from_name (const char *name, OwbDataType *type)
{
  if (g_strcmp0 (name, "s8") == 0)
    *type = OWB_TYPE_INT8;
  else if (g_strcmp0 (name, "u8") == 0)
    *type = OWB_TYPE_UINT8;
  else
    return FALSE;
  return TRUE;
}

static void
load_floats (GKeyFile *file, const char *group, const char *key, float out[3])
{
  gsize n = 0;
  g_autofree double *v = g_key_file_get_double_list (file, group, key, &n, NULL);
  if (v && (n == 1 || n == 3))
    for (int c = 0; c < 3; c++)
      out[c] = (float) v[n == 1 ? 0 : c];
}

gboolean
owb_quantize_settings_load (const char *model_path, OwbQuantizeSettings *settings)
{
  g_autofree char *path = owb_quantize_settings_dup_path ();
  g_autoptr (GKeyFile) file = g_key_file_new ();
  if (!g_key_file_load_from_file (file, path, G_KEY_FILE_NONE, NULL) || !g_key_file_has_group (file, model_path))
    return FALSE;
  const char *g = model_path;
  g_autoptr (GError) error = NULL;
  if (g_key_file_has_key (file, g, "folder", NULL))
    {
      g_free (settings->folder);
      settings->folder = g_key_file_get_string (file, g, "folder", NULL);
      if (settings->folder && !settings->folder[0])
        g_clear_pointer (&settings->folder, g_free);
    }
  guint64 n = g_key_file_get_uint64 (file, g, "max-samples", &error);
  if (!error && n <= 100000)
    settings->max_samples = (guint) n;
  g_clear_error (&error);
  g_autofree char *method = g_key_file_get_string (file, g, "method", NULL);
  OwbQuantMethod m;
  if (method && owb_quant_method_from_string (method, &m))
    settings->method = m;
  gboolean b = g_key_file_get_boolean (file, g, "per-channel", &error);
  if (!error)
    settings->per_channel = b;
  g_clear_error (&error);
  g_autofree char *act = g_key_file_get_string (file, g, "activation-type", NULL);
  type_from_name (act, &settings->activation_type);
  g_autofree char *weight = g_key_file_get_string (file, g, "weight-type", NULL);
  type_from_name (weight, &settings->weight_type);
  g_autofree char *norm = g_key_file_get_string (file, g, "normalization", NULL);
  for (guint i = 0; norm && i < G_N_ELEMENTS (normalization_names); i++)
    if (strcmp (norm, normalization_names[i]) == 0)
      settings->normalization = (OwbQuantizeNormalization) i;
  load_floats (file, g, "mean", settings->mean);
  load_floats (file, g, "std", settings->std);
  b = g_key_file_get_boolean (file, g, "bgr", &error);
  if (!error)
    settings->bgr = b;
  g_clear_error (&error);
  if (g_key_file_has_key (file, g, "exclude-ops", NULL))
    {
      g_strfreev (settings->exclude_ops);
      settings->exclude_ops = g_key_file_get_string_list (file, g, "exclude-ops", NULL, NULL);
    }
  if (g_key_file_has_key (file, g, "kept-float", NULL))
    {
      g_strfreev (settings->kept_float);
      settings->kept_float = g_key_file_get_string_list (file, g, "kept-float", NULL, NULL);
    }
  return TRUE;
}

static void
set_list (GKeyFile *file, const char *group, const char *key, char **list)
{
  g_key_file_set_string_list (file, group, key, (const char *const *) list, list ? g_strv_length (list) : 0);
}

gboolean
owb_quantize_settings_save (const char *model_path, const OwbQuantizeSettings *settings, GError **error)
{
  g_autofree char *path = owb_quantize_settings_dup_path ();
  g_autofree char *dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "%s: %s", dir, g_strerror (saved));
      return FALSE;
    }
  g_autoptr (GKeyFile) file = g_key_file_new ();
  /* the other models' groups stay; a file that does not parse is replaced */
  g_key_file_load_from_file (file, path, G_KEY_FILE_KEEP_COMMENTS, NULL);
  const char *g = model_path;
  g_key_file_remove_group (file, g, NULL);
  if (settings->folder)
    g_key_file_set_string (file, g, "folder", settings->folder);
  else
    g_key_file_set_string (file, g, "folder", "");
  g_key_file_set_uint64 (file, g, "max-samples", settings->max_samples);
  g_key_file_set_string (file, g, "method", owb_quant_method_to_string (settings->method));
  g_key_file_set_boolean (file, g, "per-channel", settings->per_channel);
  g_key_file_set_string (file, g, "activation-type", type_name (settings->activation_type));
  g_key_file_set_string (file, g, "weight-type", type_name (settings->weight_type));
  guint norm = MIN ((guint) settings->normalization, G_N_ELEMENTS (normalization_names) - 1);
  g_key_file_set_string (file, g, "normalization", normalization_names[norm]);
  double mean[3], std[3];
  for (int c = 0; c < 3; c++)
    {
      mean[c] = settings->mean[c];
      std[c] = settings->std[c];
    }
  g_key_file_set_double_list (file, g, "mean", mean, 3);
  g_key_file_set_double_list (file, g, "std", std, 3);
  g_key_file_set_boolean (file, g, "bgr", settings->bgr);
  set_list (file, g, "exclude-ops", settings->exclude_ops);
  set_list (file, g, "kept-float", settings->kept_float);
  /* g_key_file_save_to_file writes with g_file_set_contents: a new file renamed over the old */
  return g_key_file_save_to_file (file, path, error);
}

void
owb_quantize_settings_clear (OwbQuantizeSettings *settings)
{
  g_clear_pointer (&settings->folder, g_free);
  g_clear_pointer (&settings->exclude_ops, g_strfreev);
  g_clear_pointer (&settings->kept_float, g_strfreev);
}
