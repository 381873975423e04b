/* owb-document.h: one open model: loaded, checked and shape-inferred off the main thread, then
 * prepared (optimized at the chosen level, partitioned onto providers) for display and runs, in
 * the background: the model's own graph is there to show while the session is prepared. */
#pragma once

#include <gio/gio.h>
#include <owb/owb.h>

G_BEGIN_DECLS

/* A prepared model: the session made at one level and provider list, or, when none could be
 * made (an unsupported op, say), the model's own graph and the reason. Reference-counted, so a
 * view keeps showing it while the document prepares the next one. */
typedef struct _OwbPrepared OwbPrepared;

OwbPrepared *owb_prepared_ref (OwbPrepared *prepared);
void owb_prepared_unref (OwbPrepared *prepared);
/* The graph to show: the session's (execution order, inferred types, provider claims and
 * declines on every node), else the model's (inferred types, no claims). Borrowed. */
const OwbGraph *owb_prepared_get_graph (const OwbPrepared *prepared);
/* NULL when no session could be prepared; then get_error says why. */
OwbSession *owb_prepared_get_session (const OwbPrepared *prepared);
const GError *owb_prepared_get_error (const OwbPrepared *prepared);
/* The optimizer's report (NULL at level disabled or without a session). */
const OwbOptimizeReport *owb_prepared_get_report (const OwbPrepared *prepared);
OwbOptimizeLevel owb_prepared_get_level (const OwbPrepared *prepared);
const char *owb_prepared_get_providers (const OwbPrepared *prepared);
/* TRUE for the stand-in a load installs at once: the model's graph (no session, no error) while
 * the session at get_level is prepared; a prepared that is not pending replaces it. */
gboolean owb_prepared_is_pending (const OwbPrepared *prepared);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbPrepared, owb_prepared_unref)

#define OWB_TYPE_DOCUMENT (owb_document_get_type ())
G_DECLARE_FINAL_TYPE (OwbDocument, owb_document, OWB, DOCUMENT, GObject)

OwbDocument *owb_document_new (void);

/* Reads, validates and infers shapes in a worker thread, emitting "progress" (double fraction
 * 0..1, const char *phase, translated) on the main context while it works. On success the
 * document holds the model and a pending prepared (its graph, to draw at once), and prepares the
 * session at the document's level and providers in another worker thread ("preparing" is TRUE
 * meanwhile); notify::prepared when that one is in place. */
void owb_document_load_async (OwbDocument *self, GFile *file, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data);
gboolean owb_document_load_finish (OwbDocument *self, GAsyncResult *result, GError **error);

/* Prepares again at another level and provider list ("cpu", "cuda,cpu"), in a worker thread;
 * notify::prepared when the new one is in place. Prepare errors are not load errors: the call
 * succeeds with a prepared model that has no session and carries the error. */
void owb_document_prepare_async (OwbDocument *self, OwbOptimizeLevel level, const char *providers,
                                 GCancellable *cancellable, GAsyncReadyCallback callback,
                                 gpointer user_data);
gboolean owb_document_prepare_finish (OwbDocument *self, GAsyncResult *result, GError **error);

/* NULL until loaded. */
GFile *owb_document_get_file (OwbDocument *self);
/* The file's display name, or NULL until loaded. */
const char *owb_document_get_title (OwbDocument *self);
/* The model as loaded (validated, shapes inferred; never optimized): borrowed. */
OwbModel *owb_document_get_model (OwbDocument *self);
/* The current prepared model (borrowed; ref it to keep it). NULL until loaded. */
OwbPrepared *owb_document_get_prepared (OwbDocument *self);
OwbOptimizeLevel owb_document_get_level (OwbDocument *self);
const char *owb_document_get_providers (OwbDocument *self);
/* Property "preparing": TRUE while a session is being prepared in a worker thread. */
gboolean owb_document_get_preparing (OwbDocument *self);

/* Engine work. Every run, optimization, save, profile or quantization the app makes goes through
 * its document as a job, as the document's own loads and prepares do: one place that runs the
 * app's engine work off the main thread, knows what is in flight ("busy"), can cancel it all, and
 * carries progress from the worker to the main context.
 *
 * new_job makes the job, a GTask whose source object is `source` (the page that asked; kept alive
 * until callback has run) and whose cancellable is `cancellable` (or one of the job's own when
 * NULL); the caller sets its task data (and source tag, check-cancellable, return-on-cancel as it
 * needs), then run_job runs func with it in a worker thread. Whatever the worker reports with
 * owb_job_report reaches progress (if not NULL) on the main context, unless the job was cancelled
 * or has finished meanwhile. callback gets the GTask as g_task_new's would. */
typedef void (*OwbJobProgressFunc) (gpointer source, double fraction, const char *text);

GTask *owb_document_new_job (OwbDocument *self, gpointer source, GCancellable *cancellable,
                             OwbJobProgressFunc progress, GAsyncReadyCallback callback, gpointer user_data);
void owb_document_run_job (OwbDocument *self, GTask *job, GTaskThreadFunc func);
/* From a job's worker (thread-safe): fraction 0..1, or < 0 when unknown; text (translated) may be
 * NULL. */
void owb_job_report (GTask *job, double fraction, const char *text);
/* The job every Save As of a model is: writes `model` to `path` (owb_model_save_file: a temporary
 * file renamed into place). A write is not stopped halfway, so the answer is whether the file was
 * written, cancelled or not; the cancellable only tells the caller's jobs apart. finish gives the
 * model written and the path (borrowed from the result; either may be NULL). */
void owb_document_save_model_async (OwbDocument *self, gpointer source, OwbModel *model, const char *path,
                                    GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
gboolean owb_document_save_model_finish (GAsyncResult *result, OwbModel **model, const char **path, GError **error);
/* The job every export of a value is: writes `tensor` to `path` (a temporary file renamed into
 * place) as .npy when always_npy is TRUE or the name ends in .npy or .NPY, else as a TensorProto
 * .pb named `name`. As with save_model_async, the answer is whether the file was written. finish
 * gives the path (borrowed from the result; may be NULL). */
void owb_document_save_tensor_async (OwbDocument *self, gpointer source, OwbTensor *tensor, const char *name,
                                     const char *path, gboolean always_npy, GCancellable *cancellable,
                                     GAsyncReadyCallback callback, gpointer user_data);
gboolean owb_document_save_tensor_finish (GAsyncResult *result, const char **path, GError **error);
/* Cancels every job in flight (loads and prepares too): the document is no longer shown. */
void owb_document_cancel_jobs (OwbDocument *self);
/* Property "busy": TRUE while any job runs. */
gboolean owb_document_get_busy (OwbDocument *self);

G_END_DECLS
