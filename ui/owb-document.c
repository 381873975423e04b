/* owb-document.c: one open model, loaded and prepared in worker threads (GTK-free: GObject + GIO,
 * so the tests can use a document without a display). */
#include "owb-document.h"

#include <glib/gi18n-lib.h>

/* Reference counted by GLib (g_atomic_rc_box): shared by the document, the pages and their jobs. */
struct _OwbPrepared {
  OwbModel *model;       /* the document's model, shown when there is no session */
  OwbSession *session;   /* NULL when preparing failed */
  GError *error;         /* why there is no session, or why shapes could not be inferred */
  OwbOptimizeLevel level;
  char *providers;
  /* The model's graph, shown while the session at `level` is being prepared. */
  gboolean pending;
};

struct _OwbDocument {
  GObject parent_instance;

  GFile *file;
  char *title;
  OwbModel *model;
  OwbPrepared *prepared;
  OwbOptimizeLevel level;
  char *providers;
  /* Why shape inference failed on load (the model is still shown); NULL when it worked. */
  GError *infer_error;
  /* Prepares may overlap (the level is changed twice quickly): only a newer one replaces the
   * prepared on screen, so a slow old one finishing late cannot win. */
  guint prepare_serial;
  guint installed_serial;
  /* The newest prepare that has finished (installed or not): the document is preparing while a
   * newer one runs. Older ones still running are moot, and not waited for. */
  guint done_serial;
  /* The prepare a load started on its own; a prepare asked for later makes it moot. */
  GCancellable *load_prepare_cancellable;
  /* The jobs in flight (GTask *, borrowed: each is removed when its callback has run). */
  GPtrArray *jobs;
};

G_DEFINE_TYPE (OwbDocument, owb_document, G_TYPE_OBJECT)

enum { PROP_0, PROP_FILE, PROP_TITLE, PROP_PREPARED, PROP_LEVEL, PROP_PROVIDERS, PROP_PREPARING, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_PROGRESS, N_SIGNALS };
static guint signals[N_SIGNALS];

/* Prepared models */

OwbPrepared *
owb_prepared_ref (OwbPrepared *prepared)
{
  g_return_val_if_fail (prepared != NULL, NULL);
  return g_atomic_rc_box_acquire (prepared);
}

static void
prepared_clear (gpointer data)
{
  OwbPrepared *prepared = data;
  owb_session_free (prepared->session);
  owb_model_unref (prepared->model);
  g_clear_error (&prepared->error);
  g_free (prepared->providers);
}

void
owb_prepared_unref (OwbPrepared *prepared)
{
  if (prepared != NULL)
    g_atomic_rc_box_release_full (prepared, prepared_clear);
}

const OwbGraph *
owb_prepared_get_graph (const OwbPrepared *prepared)
{
  g_return_val_if_fail (prepared != NULL, NULL);
  if (prepared->session)
    return owb_session_get_graph (prepared->session);
  return prepared->model->graph;
}

OwbSession *
owb_prepared_get_session (const OwbPrepared *prepared)
{
  g_return_val_if_fail (prepared != NULL, NULL);
  return prepared->session;
}

const GError *
owb_prepared_get_error (const OwbPrepared *prepared)
{
  g_return_val_if_fail (prepared != NULL, NULL);
  return prepared->error;
}

const OwbOptimizeReport *
owb_prepared_get_report (const OwbPrepared *prepared)
{
  g_return_val_if_fail (prepared != NULL, NULL);
  return prepared->session ? owb_session_get_optimize_report (prepared->session) : NULL;
}

OwbOptimizeLevel
owb_prepared_get_level (const OwbPrepared *prepared)
{
  g_return_val_if_fail (prepared != NULL, OWB_OPTIMIZE_DISABLED);
  return prepared->level;
}

const char *
owb_prepared_get_providers (const OwbPrepared *prepared)
{
  g_return_val_if_fail (prepared != NULL, NULL);
  return prepared->providers;
}

gboolean
owb_prepared_is_pending (const OwbPrepared *prepared)
{
  g_return_val_if_fail (prepared != NULL, FALSE);
  return prepared->pending;
}

static OwbPrepared *
prepared_new (OwbModel *model, OwbOptimizeLevel level, const char *providers)
{
  OwbPrepared *prepared = g_atomic_rc_box_new0 (OwbPrepared);
  prepared->model = owb_model_ref (model);
  prepared->level = level;
  prepared->providers = g_strdup (providers);
  return prepared;
}

/* Runs in a worker thread. Reads `model` only (the session works on its own copy), so the main
 * thread may keep showing it meanwhile. Never fails: a failure is kept in the result. */
static OwbPrepared *
prepare_model (OwbModel *model, const GError *infer_error, OwbOptimizeLevel level,
               const char *providers)
{
  OwbPrepared *prepared = prepared_new (model, level, providers);

  /* A session infers shapes again and would fail the same way; say why once, and show the
   * model as far as inference got. */
  if (infer_error)
    {
      prepared->error = g_error_copy (infer_error);
      return prepared;
    }

  g_autoptr (GPtrArray) provider_list = owb_providers_new_from_list (providers, &prepared->error);
  if (!provider_list)
    return prepared;

  OwbSessionOptions options;
  owb_session_options_init (&options);
  options.providers = provider_list;
  options.optimize = level;
  prepared->session = owb_session_new (model, &options, &prepared->error);
  return prepared;
}

/* Jobs: engine work in worker threads, progress carried to the main context */

#define JOB_KEY "owb-document-job"

/* What the document keeps of a job: the task's user data and its JOB_KEY data, freed with the
 * task (a load's worker may still report after its cancelled task has answered). */
typedef struct {
  OwbDocument *document;
  GAsyncReadyCallback callback;
  gpointer user_data;
  OwbJobProgressFunc progress;
} Job;

static gboolean
is_busy (OwbDocument *self)
{
  return self->jobs->len > 0;
}

static void
job_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Job *job = data;
  OwbDocument *self = job->document;
  if (job->callback)
    job->callback (source, result, job->user_data);
  gboolean was = is_busy (self);
  g_ptr_array_remove_fast (self->jobs, result);
  if (was != is_busy (self))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

static void
job_free (gpointer data)
{
  Job *job = data;
  g_object_unref (job->document);
  g_free (job);
}

GTask *
owb_document_new_job (OwbDocument *self, gpointer source, GCancellable *cancellable, OwbJobProgressFunc progress,
                      GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), NULL);
  g_return_val_if_fail (G_IS_OBJECT (source), NULL);
  Job *job = g_new0 (Job, 1);
  job->document = g_object_ref (self);
  job->callback = callback;
  job->user_data = user_data;
  job->progress = progress;
  /* Every job can be cancelled from here, even one its caller did not mean to cancel. */
  g_autoptr (GCancellable) own = cancellable ? NULL : g_cancellable_new ();
  GTask *task = g_task_new (source, cancellable ? cancellable : own, job_done, job);
  g_object_set_data_full (G_OBJECT (task), JOB_KEY, job, job_free);
  return task;
}

void
owb_document_run_job (OwbDocument *self, GTask *task, GTaskThreadFunc func)
{
  g_return_if_fail (OWB_IS_DOCUMENT (self));
  g_return_if_fail (G_IS_TASK (task) && g_object_get_data (G_OBJECT (task), JOB_KEY) != NULL);
  gboolean was = is_busy (self);
  g_ptr_array_add (self->jobs, task);
  if (!was)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
  g_task_run_in_thread (task, func);
}

typedef struct {
  GTask *task;
  OwbJobProgressFunc progress;
  double fraction;
  char *text;
} Progress;

static gboolean
progress_emit (gpointer data)
{
  Progress *p = data;
  if (!g_task_get_completed (p->task) && !g_cancellable_is_cancelled (g_task_get_cancellable (p->task)))
    p->progress (g_task_get_source_object (p->task), p->fraction, p->text);
  return G_SOURCE_REMOVE;
}

static void
progress_free (gpointer data)
{
  Progress *p = data;
  g_object_unref (p->task);
  g_free (p->text);
  g_free (p);
}

void
owb_job_report (GTask *task, double fraction, const char *text)
{
  g_return_if_fail (G_IS_TASK (task));
  const Job *job = g_object_get_data (G_OBJECT (task), JOB_KEY);
  g_return_if_fail (job != NULL);
  if (!job->progress)
    return;
  Progress *p = g_new0 (Progress, 1);
  p->task = g_object_ref (task);
  p->progress = job->progress;
  p->fraction = fraction;
  p->text = g_strdup (text);
  g_main_context_invoke_full (g_task_get_context (task), G_PRIORITY_DEFAULT, progress_emit, p, progress_free);
}

void
owb_document_cancel_jobs (OwbDocument *self)
{
  g_return_if_fail (OWB_IS_DOCUMENT (self));
  /* A job's callback may start another: cancel those that are in flight now. */
  g_autoptr (GPtrArray) running = g_ptr_array_new_full (self->jobs->len, g_object_unref);
  for (guint i = 0; i < self->jobs->len; i++)
    g_ptr_array_add (running, g_object_ref (self->jobs->pdata[i]));
  for (guint i = 0; i < running->len; i++)
    g_cancellable_cancel (g_task_get_cancellable (running->pdata[i]));
}

gboolean
owb_document_get_busy (OwbDocument *self)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), FALSE);
  return is_busy (self);
}

/* Saving a model */

typedef struct {
  OwbModel *model;
  char *path;
} SaveData;

static void
save_data_free (gpointer data)
{
  SaveData *save = data;
  owb_model_unref (save->model);
  g_free (save->path);
  g_free (save);
}

static void
save_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  SaveData *save = task_data;
  GError *error = NULL;
  if (owb_model_save_file (save->model, save->path, NULL, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
owb_document_save_model_async (OwbDocument *self, gpointer source, OwbModel *model, const char *path,
                               GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (OWB_IS_DOCUMENT (self));
  g_return_if_fail (model != NULL && path != NULL);
  SaveData *save = g_new0 (SaveData, 1);
  save->model = owb_model_ref (model);
  save->path = g_strdup (path);
  g_autoptr (GTask) task = owb_document_new_job (self, source, cancellable, NULL, callback, user_data);
  g_task_set_source_tag (task, owb_document_save_model_async);
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, save, save_data_free);
  owb_document_run_job (self, task, save_thread);
}

gboolean
owb_document_save_model_finish (GAsyncResult *result, OwbModel **model, const char **path, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == owb_document_save_model_async, FALSE);
  SaveData *save = g_task_get_task_data (G_TASK (result));
  if (model)
    *model = save->model;
  if (path)
    *path = save->path;
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* Exporting a value */

typedef struct {
  OwbTensor *tensor;
  char *name;
  char *path;
  gboolean npy;
} SaveTensorData;

static void
save_tensor_data_free (gpointer data)
{
  SaveTensorData *save = data;
  owb_tensor_unref (save->tensor);
  g_free (save->name);
  g_free (save->path);
  g_free (save);
}

static void
save_tensor_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  SaveTensorData *save = task_data;
  GError *error = NULL;
  gboolean ok = save->npy ? owb_tensor_save_npy_file (save->tensor, save->path, &error)
                  : owb_tensor_save_pb_file (save->tensor, save->name, save->path, &error);
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
owb_document_save_tensor_async (OwbDocument *self, gpointer source, OwbTensor *tensor, const char *name,
                                const char *path, gboolean always_npy, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (OWB_IS_DOCUMENT (self));
  g_return_if_fail (tensor != NULL && path != NULL);
  SaveTensorData *save = g_new0 (SaveTensorData, 1);
  save->tensor = owb_tensor_ref (tensor);
  save->name = g_strdup (name);
  save->path = g_strdup (path);
  save->npy = always_npy || g_str_has_suffix (path, ".npy") || g_str_has_suffix (path, ".NPY");
  g_autoptr (GTask) task = owb_document_new_job (self, source, cancellable, NULL, callback, user_data);
  g_task_set_source_tag (task, owb_document_save_tensor_async);
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, save, save_tensor_data_free);
  owb_document_run_job (self, task, save_tensor_thread);
}

gboolean
owb_document_save_tensor_finish (GAsyncResult *result, const char **path, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == owb_document_save_tensor_async, FALSE);
  SaveTensorData *save = g_task_get_task_data (G_TASK (result));
  if (path)
    *path = save->path;
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* The load's phases are the document's "progress" signal. */
static void
load_progress (gpointer source, double fraction, const char *phase)
{
  g_signal_emit (source, signals[SIGNAL_PROGRESS], 0, fraction, phase);
}

/* Loading */

typedef struct {
  /* in */
  GFile *file;
  /* out */
  OwbModel *model;
  GError *infer_error;
} LoadData;

static void
load_data_free (gpointer data)
{
  LoadData *load = data;
  g_clear_object (&load->file);
  g_clear_pointer (&load->model, owb_model_unref);
  g_clear_error (&load->infer_error);
  g_free (load);
}

/* The engine's load phases as the document's progress. */
static void
load_phase (OwbLoadPhase phase, gpointer task)
{
  if (phase == OWB_LOAD_PHASE_READING)
    owb_job_report (task, 0.1, _("Reading"));
  else
    owb_job_report (task, 0.3, _("Checking"));
}

/* Reading, checking and inferring shapes: what drawing the graph needs. Preparing the session
 * (optimizing, partitioning, packing weights) comes after, in a thread of its own, so that a
 * large model at a high level is on screen while it is optimized. */
static void
load_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  LoadData *load = task_data;
  GError *error = NULL;

  g_autofree char *path = g_file_get_path (load->file);
  if (!path)
    {
      g_autofree char *uri = g_file_get_uri (load->file);
      owb_job_report (task, 0.1, _("Reading"));
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "%s: %s", uri,
                               _("only local files can be opened"));
      return;
    }
  /* The engine's file load, not a read into memory and a load from it: the large weights go
   * straight from the file into their tensors (alexnet's 233 MB are read once, not twice). Errors
   * name the file; a cancel stops it between initializers. */
  load->model = owb_model_load_file_with_progress (path, load_phase, task, cancellable, &error);
  if (!load->model)
    {
      g_task_return_error (task, error);
      return;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }

  owb_job_report (task, 0.6, _("Inferring shapes"));
  /* An op without shape inference should not stop anyone looking at the model. */
  owb_model_infer_shapes (load->model, &load->infer_error);
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  owb_job_report (task, 1.0, _("Ready"));
  g_task_return_boolean (task, TRUE);
}

static void
install_prepared (OwbDocument *self, OwbPrepared *prepared)
{
  g_clear_pointer (&self->prepared, owb_prepared_unref);
  self->prepared = owb_prepared_ref (prepared);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PREPARED]);
}

static gboolean
is_preparing (OwbDocument *self)
{
  return self->prepare_serial > self->done_serial;
}

/* Notifies "preparing" when it is not what it was. */
static void
preparing_changed (OwbDocument *self, gboolean was)
{
  if (was != is_preparing (self))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PREPARING]);
}

static void start_prepare (OwbDocument *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data);

void
owb_document_load_async (OwbDocument *self, GFile *file, GCancellable *cancellable,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (OWB_IS_DOCUMENT (self));
  g_return_if_fail (G_IS_FILE (file));

  LoadData *load = g_new0 (LoadData, 1);
  load->file = g_object_ref (file);

  g_autoptr (GTask) task = owb_document_new_job (self, self, cancellable, load_progress, callback, user_data);
  g_task_set_source_tag (task, owb_document_load_async);
  g_task_set_task_data (task, load, load_data_free);
  /* Cancelling answers at once; the worker stops at the next phase and its result is dropped. */
  g_task_set_return_on_cancel (task, TRUE);
  owb_document_run_job (self, task, load_thread);
}

gboolean
owb_document_load_finish (OwbDocument *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  GTask *task = G_TASK (result);
  if (!g_task_propagate_boolean (task, error))
    return FALSE;

  /* Installed here, on the caller's thread, so the document changes only where it is used. */
  LoadData *load = g_task_get_task_data (task);
  g_object_freeze_notify (G_OBJECT (self));
  g_set_object (&self->file, load->file);
  g_free (self->title);
  g_autoptr (GFileInfo) info = g_file_query_info (load->file, G_FILE_ATTRIBUTE_STANDARD_DISPLAY_NAME,
                                                  G_FILE_QUERY_INFO_NONE, NULL, NULL);
  self->title = info ? g_strdup (g_file_info_get_display_name (info)) : g_file_get_basename (load->file);
  g_clear_pointer (&self->model, owb_model_unref);
  self->model = g_steal_pointer (&load->model);
  g_clear_error (&self->infer_error);
  self->infer_error = g_steal_pointer (&load->infer_error);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FILE]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);

  /* The model's own graph is shown at once; the session replaces it when it is ready. */
  g_autoptr (OwbPrepared) pending = prepared_new (self->model, self->level, self->providers);
  pending->pending = TRUE;
  self->installed_serial = self->done_serial = ++self->prepare_serial;
  install_prepared (self, pending);
  g_cancellable_cancel (self->load_prepare_cancellable);
  g_clear_object (&self->load_prepare_cancellable);
  self->load_prepare_cancellable = g_cancellable_new ();
  start_prepare (self, self->load_prepare_cancellable, NULL, NULL);
  g_object_thaw_notify (G_OBJECT (self));
  return TRUE;
}

/* Preparing */

typedef struct {
  OwbModel *model;
  GError *infer_error;
  OwbOptimizeLevel level;
  char *providers;
  guint serial;
} PrepareData;

static void
prepare_data_free (gpointer data)
{
  PrepareData *prepare = data;
  owb_model_unref (prepare->model);
  g_clear_error (&prepare->infer_error);
  g_free (prepare->providers);
  g_free (prepare);
}

static void
prepare_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  PrepareData *prepare = task_data;
  GError *error = NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  OwbPrepared *prepared = prepare_model (prepare->model, prepare->infer_error, prepare->level,
                                         prepare->providers);
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    {
      owb_prepared_unref (prepared);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, prepared, (GDestroyNotify) owb_prepared_unref);
}

static void
prepare_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  OwbDocument *self = OWB_DOCUMENT (source);
  g_autoptr (GTask) outer = user_data;
  PrepareData *prepare = g_task_get_task_data (G_TASK (result));
  GError *error = NULL;

  gboolean was = is_preparing (self);
  self->done_serial = MAX (self->done_serial, prepare->serial);
  preparing_changed (self, was);
  g_autoptr (OwbPrepared) prepared = g_task_propagate_pointer (G_TASK (result), &error);
  if (!prepared)
    {
      g_task_return_error (outer, error);
      return;
    }
  if (prepare->serial > self->installed_serial)
    {
      self->installed_serial = prepare->serial;
      install_prepared (self, prepared);
    }
  g_task_return_boolean (outer, TRUE);
}

/* Prepares the model at the document's level and providers in a worker thread; prepare_done
 * installs the result on this thread (unless a newer one was asked for meanwhile), then answers
 * through an outer task of the document's. */
static void
start_prepare (OwbDocument *self, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *outer = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (outer, owb_document_prepare_async);
  if (!self->model)
    {
      g_task_return_new_error (outer, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED, "%s",
                               _("No model is loaded"));
      g_object_unref (outer);
      return;
    }

  PrepareData *prepare = g_new0 (PrepareData, 1);
  prepare->model = owb_model_ref (self->model);
  prepare->infer_error = self->infer_error ? g_error_copy (self->infer_error) : NULL;
  prepare->level = self->level;
  prepare->providers = g_strdup (self->providers);
  gboolean was = is_preparing (self);
  prepare->serial = ++self->prepare_serial;
  preparing_changed (self, was);

  g_autoptr (GTask) inner = owb_document_new_job (self, self, cancellable, NULL, prepare_done, outer);
  g_task_set_task_data (inner, prepare, prepare_data_free);
  owb_document_run_job (self, inner, prepare_thread);
}

void
owb_document_prepare_async (OwbDocument *self, OwbOptimizeLevel level, const char *providers,
                            GCancellable *cancellable, GAsyncReadyCallback callback,
                            gpointer user_data)
{
  g_return_if_fail (OWB_IS_DOCUMENT (self));
  g_return_if_fail (level >= OWB_OPTIMIZE_DISABLED && level <= OWB_OPTIMIZE_ALL);

  if (providers == NULL || *providers == '\0')
    providers = "cpu";
  /* The level and providers are the document's from now on, so a later load or prepare keeps
   * them. */
  if (self->level != level)
    {
      self->level = level;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LEVEL]);
    }
  if (g_strcmp0 (self->providers, providers) != 0)
    {
      g_free (self->providers);
      self->providers = g_strdup (providers);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROVIDERS]);
    }
  /* Only the newest choice can be installed: the load's own prepare is not waited for. */
  g_cancellable_cancel (self->load_prepare_cancellable);
  g_clear_object (&self->load_prepare_cancellable);
  start_prepare (self, cancellable, callback, user_data);
}

gboolean
owb_document_prepare_finish (OwbDocument *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

gboolean
owb_document_get_preparing (OwbDocument *self)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), FALSE);
  return is_preparing (self);
}

/* Accessors */

GFile *
owb_document_get_file (OwbDocument *self)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), NULL);
  return self->file;
}

const char *
owb_document_get_title (OwbDocument *self)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), NULL);
  return self->title;
}

OwbModel *
owb_document_get_model (OwbDocument *self)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), NULL);
  return self->model;
}

OwbPrepared *
owb_document_get_prepared (OwbDocument *self)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), NULL);
  return self->prepared;
}

OwbOptimizeLevel
owb_document_get_level (OwbDocument *self)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), OWB_OPTIMIZE_DISABLED);
  return self->level;
}

const char *
owb_document_get_providers (OwbDocument *self)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (self), NULL);
  return self->providers;
}

/* GObject */

static void
owb_document_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  OwbDocument *self = OWB_DOCUMENT (object);
  switch (prop_id)
    {
    case PROP_FILE:
      g_value_set_object (value, self->file);
      break;
    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;
    case PROP_PREPARED:
      g_value_set_pointer (value, self->prepared);
      break;
    case PROP_LEVEL:
      g_value_set_int (value, self->level);
      break;
    case PROP_PROVIDERS:
      g_value_set_string (value, self->providers);
      break;
    case PROP_PREPARING:
      g_value_set_boolean (value, is_preparing (self));
      break;
    case PROP_BUSY:
      g_value_set_boolean (value, is_busy (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* The level and providers are settable before a load, so that the window can pass the user's
 * defaults (from GSettings) without the document depending on GSettings itself. */
static void
owb_document_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  OwbDocument *self = OWB_DOCUMENT (object);
  switch (prop_id)
    {
    case PROP_LEVEL:
      self->level = g_value_get_int (value);
      break;
    case PROP_PROVIDERS:
      {
        const char *providers = g_value_get_string (value);
        g_free (self->providers);
        self->providers = g_strdup (providers && *providers ? providers : "cpu");
      }
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
owb_document_finalize (GObject *object)
{
  OwbDocument *self = OWB_DOCUMENT (object);
  g_clear_object (&self->file);
  g_clear_object (&self->load_prepare_cancellable);
  g_free (self->title);
  g_clear_pointer (&self->prepared, owb_prepared_unref);
  g_clear_pointer (&self->model, owb_model_unref);
  g_clear_error (&self->infer_error);
  g_free (self->providers);
  /* Empty: each job holds a reference on the document until its callback has run. */
  g_ptr_array_unref (self->jobs);
  G_OBJECT_CLASS (owb_document_parent_class)->finalize (object);
}

static void
owb_document_class_init (OwbDocumentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->get_property = owb_document_get_property;
  object_class->set_property = owb_document_set_property;
  object_class->finalize = owb_document_finalize;

  properties[PROP_FILE] = g_param_spec_object ("file", NULL, NULL, G_TYPE_FILE,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* An OwbPrepared * (borrowed); see owb_document_get_prepared. */
  properties[PROP_PREPARED] = g_param_spec_pointer ("prepared", NULL, NULL,
                                                    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* An OwbOptimizeLevel. */
  properties[PROP_LEVEL] = g_param_spec_int ("level", NULL, NULL, OWB_OPTIMIZE_DISABLED, OWB_OPTIMIZE_ALL,
                                             OWB_OPTIMIZE_DISABLED,
                                             G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_PROVIDERS] = g_param_spec_string ("providers", NULL, NULL, "cpu",
                                                    G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* TRUE while a session is being prepared in a worker thread. */
  properties[PROP_PREPARING] = g_param_spec_boolean ("preparing", NULL, NULL, FALSE,
                                                     G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* TRUE while a job (a load, a prepare, a page's run…) is in flight. */
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* (double fraction, const char *phase): emitted on the main context during a load. */
  signals[SIGNAL_PROGRESS] = g_signal_new ("progress", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                           NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE, G_TYPE_STRING);
}

static void
owb_document_init (OwbDocument *self)
{
  self->level = OWB_OPTIMIZE_DISABLED;
  self->providers = g_strdup ("cpu");
  self->jobs = g_ptr_array_new ();
}

OwbDocument *
owb_document_new (void)
{
  return g_object_new (OWB_TYPE_DOCUMENT, NULL);
}
