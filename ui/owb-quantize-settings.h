/* owb-quantize-settings.h: the Quantize page's settings remembered per model file, one group per
 * model (its absolute path) in g_get_user_config_dir()/onnx-workbench/quantize.ini. GTK-free. */
#pragma once

#include <owb/owb-quant.h>

G_BEGIN_DECLS

typedef enum {
  OWB_QUANTIZE_NORMALIZATION_UNIT = 0,  /* [0, 1]: mean 0, std 1 */
  OWB_QUANTIZE_NORMALIZATION_IMAGENET,  /* mean 0.485, 0.456, 0.406; std 0.229, 0.224, 0.225 */
  OWB_QUANTIZE_NORMALIZATION_SYMMETRIC, /* [-1, 1]: mean 0.5, std 0.5 */
  OWB_QUANTIZE_NORMALIZATION_CUSTOM,
} OwbQuantizeNormalization;

typedef struct {
  char *folder;                   /* NULL: seeded random samples */
  guint max_samples;
  OwbQuantMethod method;
  gboolean per_channel;
  OwbDataType activation_type;    /* UINT8 or INT8 */
  OwbDataType weight_type;        /* INT8 or UINT8 */
  OwbQuantizeNormalization normalization;
  float mean[3], std[3];          /* the custom normalization's */
  gboolean bgr;
  char **exclude_ops;             /* NULL-terminated */
  char **kept_float;              /* node names, NULL-terminated */
} OwbQuantizeSettings;

/* The mean and std a preset stands for (custom: those of `settings`). */
void owb_quantize_normalization_values (OwbQuantizeNormalization normalization, const OwbQuantizeSettings *settings,
                                        float mean[3], float std[3]);

/* The file, built from g_get_user_config_dir () (owned). */
char *owb_quantize_settings_dup_path (void);
/* The group of `model_path` into `settings` (fields absent from it are left as they are); FALSE
 * when the file has no group for that model. */
gboolean owb_quantize_settings_load (const char *model_path, OwbQuantizeSettings *settings);
/* Replaces the model's group, written atomically (write, then rename). */
gboolean owb_quantize_settings_save (const char *model_path, const OwbQuantizeSettings *settings, GError **error);
void owb_quantize_settings_clear (OwbQuantizeSettings *settings);

G_END_DECLS
