/* owb-output-check.h: the check that keeps a file about to be written off the input model, its
 * external data files and the other outputs of the same command. Not included by owb.h: only the
 * programs and pages that write files need it. */
#pragma once

#include <owb/owb-model-io.h>

G_BEGIN_DECLS

/* What a file about to be written would overwrite (owb_output_files_check). */
typedef enum {
  OWB_OUTPUT_CLASH_NONE,
  OWB_OUTPUT_CLASH_INPUT,         /* the input model itself */
  OWB_OUTPUT_CLASH_EXTERNAL_DATA, /* a file the input model reads external data from */
  OWB_OUTPUT_CLASH_OUTPUT,        /* an earlier output of the same list */
} OwbOutputClash;

/* A file a command or a page is about to write. */
typedef struct {
  const char *what;         /* what chose it, for messages: an option such as "-o", or "Save As" */
  const char *path;         /* NULL: not written this time */
  OwbFileIdentity identity; /* set by the check; owb_output_files_clear */
  OwbOutputClash clash;     /* set by a failed check */
  const char *clash_path;   /* borrowed: the input, the data file, or the other output's path */
} OwbOutputFile;

/* The one check, for the CLI and the app alike, that an output never lands on the input model
 * `input`, on a file `model` (the loaded input, or NULL before loading) reads external data from,
 * or on another output of the list: files are compared by identity (device and inode after
 * following links), so that no spelling, symbolic link or hard link gets past it. input_id is the
 * input's identity taken earlier, or NULL to take it now. FALSE with OWB_ERROR_INVALID_ARGUMENT
 * naming both files (and `clash` set on the output) on a clash, or OWB_ERROR_IO when a path
 * cannot be checked. Call owb_output_files_clear after. */
OWB_API gboolean owb_output_files_check (const char *input, const OwbFileIdentity *input_id, const OwbModel *model,
                                 OwbOutputFile *outputs, guint n_outputs, GError **error);
OWB_API void owb_output_files_clear (OwbOutputFile *outputs, guint n_outputs);

G_END_DECLS
