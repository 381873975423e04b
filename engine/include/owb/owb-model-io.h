/* owb-model-io.h: reading and writing .onnx files and tensor files (.pb TensorProto, .npy). */
#pragma once

#include <owb/owb-api.h>
#include <gio/gio.h>
#include <owb/owb-graph.h>

G_BEGIN_DECLS

/* Loads a model. External data is read (memory-mapped) from files inside the model's folder only;
 * model-local functions are inlined. The result is validated (owb_model_validate). */
OWB_API OwbModel *owb_model_load_file (const char *path, GError **error);
/* The phases of a file load, each reported before it starts: reading the file's structure, then
 * checking it and converting it (the large weights are read straight into their tensors here). */
typedef enum {
  OWB_LOAD_PHASE_READING,
  OWB_LOAD_PHASE_CHECKING,
} OwbLoadPhase;
typedef void (*OwbLoadProgressFunc) (OwbLoadPhase phase, gpointer user_data);
/* owb_model_load_file for callers that show the phases (progress may be NULL) and can stop a
 * load: cancelled between phases or between initializers, it fails with G_IO_ERROR_CANCELLED
 * (not prefixed with the path). Other errors are owb_model_load_file's. */
OWB_API OwbModel *owb_model_load_file_with_progress (const char *path, OwbLoadProgressFunc progress,
                                                     gpointer user_data, GCancellable *cancellable,
                                                     GError **error);
/* The bytes of a model file as owb_model_load_file reads them (regular files only, read rather
 * than mapped so a file that shrinks is an error, not SIGBUS), for callers that report reading
 * and checking apart. Errors name the file. */
OWB_API GBytes *owb_model_read_file (const char *path, GError **error);
/* base_dir is where external data may be read from; NULL forbids external data. */
OWB_API OwbModel *owb_model_load_from_data (const void *data, gsize size, const char *base_dir, GError **error);

typedef struct {
  /* Write initializers of at least this many bytes to `external_data_file` (a file name, beside
   * the model) instead of inside it. 0 disables external data. */
  gsize external_threshold;
  const char *external_data_file;
} OwbSaveOptions;

/* Saves through a temporary file renamed over `path`. options may be NULL. Refuses (with
 * OWB_ERROR_INVALID_ARGUMENT) to write the model over a file it was loaded with as external data,
 * or the model and its external data to one file; files are compared by identity. */
OWB_API gboolean owb_model_save_file (const OwbModel *model, const char *path, const OwbSaveOptions *options,
                                      GError **error);
/* Serialises to a newly allocated buffer (no external data). */
OWB_API GBytes *owb_model_save_to_bytes (const OwbModel *model, GError **error);

/* Tensor files. The name read from a .pb file is returned in *name when name != NULL (may be "").
 * Format is chosen by extension (.npy) or content otherwise. */
OWB_API OwbTensor *owb_tensor_load_file (const char *path, char **name, GError **error);
OWB_API OwbTensor *owb_tensor_load_pb_data (const void *data, gsize size, char **name, GError **error);
OWB_API OwbTensor *owb_tensor_load_npy_data (const void *data, gsize size, GError **error);
OWB_API gboolean owb_tensor_save_pb_file (const OwbTensor *tensor, const char *name, const char *path, GError **error);
OWB_API gboolean owb_tensor_save_npy_file (const OwbTensor *tensor, const char *path, GError **error);

/* Which file a path names: device and inode after following symbolic links; for a path that
 * does not exist yet, its folder's device and inode and the name in it. Two paths that a write
 * would land on the same file have equal identities, whatever their spelling. */
typedef struct {
  guint64 device;
  guint64 inode;
  char *name; /* NULL when the file exists */
} OwbFileIdentity;

/* FALSE with OWB_ERROR_IO when the path cannot be checked (its folder is missing). */
OWB_API gboolean owb_file_identity_init (OwbFileIdentity *identity, const char *path, GError **error);
OWB_API void owb_file_identity_clear (OwbFileIdentity *identity);
OWB_API gboolean owb_file_identity_equal (const OwbFileIdentity *a, const OwbFileIdentity *b);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (OwbFileIdentity, owb_file_identity_clear)
/* The resolved path of the model's external data file with that identity (borrowed), or NULL. */
OWB_API const char *owb_model_find_external_file (const OwbModel *model, const OwbFileIdentity *identity);

/* Writes a file completely or not at all (see owb_model_save_file); stale temporaries of an
 * earlier killed writer beside `path` are removed first. */
OWB_API gboolean owb_file_set_contents_atomic (const char *path, const void *data, gsize size, GError **error);
/* Removes the temporaries of writes in progress; async-signal-safe. */
OWB_API void owb_atomic_files_remove_pending (void);
/* Installs handlers for SIGINT, SIGTERM and SIGHUP (where they have the default action) that
 * remove those temporaries and then die of the signal as before. For programs, not libraries. */
OWB_API void owb_atomic_files_install_signal_cleanup (void);

/* Upgrades the model's ai.onnx opset import to `target` (at most 21), rewriting every node
 * (subgraphs included) whose meaning changed on the way so that the model computes the same
 * outputs: attributes that became inputs get constant initializers, removed ops (Upsample,
 * Scatter) their successors, and Softmax-like ops their old 2-D coercion. Only upgrades:
 * a lower or unknown target is OWB_ERROR_INVALID_ARGUMENT; the current version is a no-op.
 * A node that has no equivalent is OWB_ERROR_UNSUPPORTED_OP naming it, and the model is then
 * left unchanged. The result is validated (owb_model_validate: node->opset is the target);
 * the value infos inferred on the way are kept in its graph. */
OWB_API gboolean owb_model_convert_opset (OwbModel *model, int64_t target, GError **error);

G_END_DECLS
