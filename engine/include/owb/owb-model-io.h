/* owb-model-io.h: reading and writing .onnx files and tensor files (.pb TensorProto, .npy). */
#pragma once

#include <owb/owb-graph.h>

G_BEGIN_DECLS

/* Loads a model. External data is read (memory-mapped) from files inside the model's folder only;
 * model-local functions are inlined. The result is validated (owb_model_validate). */
OwbModel *owb_model_load_file (const char *path, GError **error);
/* base_dir is where external data may be read from; NULL forbids external data. */
OwbModel *owb_model_load_from_data (const void *data, gsize size, const char *base_dir, GError **error);

typedef struct {
  /* Write initializers of at least this many bytes to `external_data_file` (a file name, beside
   * the model) instead of inside it. 0 disables external data. */
  gsize external_threshold;
  const char *external_data_file;
} OwbSaveOptions;

/* Saves through a temporary file renamed over `path`. options may be NULL. */
gboolean owb_model_save_file (const OwbModel *model, const char *path, const OwbSaveOptions *options,
                              GError **error);
/* Serialises to a newly allocated buffer (no external data). */
GBytes *owb_model_save_to_bytes (const OwbModel *model, GError **error);

/* Tensor files. The name read from a .pb file is returned in *name when name != NULL (may be "").
 * Format is chosen by extension (.npy) or content otherwise. */
OwbTensor *owb_tensor_load_file (const char *path, char **name, GError **error);
OwbTensor *owb_tensor_load_pb_data (const void *data, gsize size, char **name, GError **error);
OwbTensor *owb_tensor_load_npy_data (const void *data, gsize size, GError **error);
gboolean owb_tensor_save_pb_file (const OwbTensor *tensor, const char *name, const char *path, GError **error);
gboolean owb_tensor_save_npy_file (const OwbTensor *tensor, const char *path, GError **error);

G_END_DECLS
