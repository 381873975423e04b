/* owb-run-page.c: the Run page: one run of the prepared session on seeded random inputs, typed
 * scalars or tensor files, in a worker thread, then each output's type, shape, statistics, top 5
 * and values (export, comparison with a reference); on request every intermediate value is kept
 * for the inspector. */
#include "owb-run-page.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "owb-output-values.h"
#include "owb-page-util.h"
#include "owb-page.h"
#include <owb/owb-tensor-stats.h>

#define TOP_K 5

/* One feed input of the session and where its data comes from. */
typedef struct
{
  char *name;
  OwbValueType type;
  GtkWidget *row;          /* AdwActionRow: name, type and source */
  GtkWidget *choose_button;
  GtkWidget *random_button;
  GtkWidget *value_entry;  /* scalar inputs: a typed value; NULL for others */
  GFile *file;             /* NULL: random values */
  OwbTensor *tensor;       /* the file's tensor once loaded and valid */
  char *problem;           /* why the file cannot be used; NULL when fine */
  GCancellable *loading;   /* non-NULL while the file loads */
  GtkSpinButton **axis_spins; /* [rank]: spins of unknown, unnamed dims; NULL elsewhere */
} RunInput;

struct _OwbRunPage
{
  OwbPage parent_instance;

  GtkStack *stack;
  AdwStatusPage *error_page;
  AdwPreferencesGroup *inputs_group;
  AdwPreferencesGroup *dims_group;
  GtkSpinButton *seed_spin;
  GtkSwitch *keep_switch;
  GtkButton *run_button;
  GtkButton *cancel_button;
  GtkWidget *progress_box;
  GtkSpinner *spinner;
  GtkLabel *progress_label;
  GtkLabel *error_label;
  GtkLabel *time_label;
  GtkBox *outputs_box;

  OwbPrepared *prepared;     /* the one the inputs were built for */
  OwbPrepared *run_prepared; /* held while a run uses its session, released on the main thread */

  GPtrArray *inputs;         /* of RunInput * */
  GPtrArray *input_rows;     /* widgets in inputs_group */
  GPtrArray *dim_rows;       /* widgets in dims_group */
  GHashTable *param_spins;   /* symbolic dim name (interned) -> GtkSpinButton * */

  guint n_loading;           /* input files loading; the page's cancellable is the run's */

  /* The last run's outputs and what the page shows of them. */
  GPtrArray *outputs;        /* of OwbTensor * (NULL for an output with no value) */
  GArray *stats;             /* of OwbTensorStats */
  GArray *has_stats;         /* of gboolean */
  GPtrArray *output_values;  /* of OwbOutputValues * (NULL for outputs that are no tensor) */
  GHashTable *kept;          /* value name -> OwbTensor *: every value of the last run, when kept */
  double run_ms;
  GtkFileChooserNative *chooser;
};

G_DEFINE_FINAL_TYPE (OwbRunPage, owb_run_page, OWB_TYPE_PAGE)

enum {
  SIGNAL_RUN_VALUES_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
run_input_free (RunInput *input)
{
  if (input->loading != NULL)
    g_cancellable_cancel (input->loading);
  g_clear_object (&input->loading);
  g_free (input->name);
  g_clear_object (&input->file);
  g_clear_pointer (&input->tensor, owb_tensor_unref);
  g_free (input->problem);
  g_free (input->axis_spins);
  g_free (input);
}

/* A run in flight (the page's work). */
static gboolean
is_running (OwbRunPage *self)
{
  return owb_page_get_cancellable (OWB_PAGE (self)) != NULL;
}

/* Busy while running, loading an input file or working on an output's values. */
static gboolean
get_busy (OwbPage *page)
{
  OwbRunPage *self = OWB_RUN_PAGE (page);
  for (guint i = 0; i < self->output_values->len; i++)
    {
      OwbOutputValues *values = g_ptr_array_index (self->output_values, i);
      if (values != NULL && owb_output_values_get_busy (values))
        return TRUE;
    }
  return is_running (self) || self->n_loading > 0;
}

static void
update (OwbPage *page)
{
  OwbRunPage *self = OWB_RUN_PAGE (page);
  gboolean busy = owb_page_get_busy (page), running = is_running (self);
  gtk_widget_set_sensitive (GTK_WIDGET (self->run_button),
                            !busy && self->prepared != NULL && owb_prepared_get_session (self->prepared) != NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), running);
  gtk_widget_set_visible (self->progress_box, busy);
  gtk_spinner_set_spinning (self->spinner, busy);
  for (guint i = 0; i < self->inputs->len; i++)
    {
      RunInput *input = g_ptr_array_index (self->inputs, i);
      gtk_widget_set_sensitive (input->choose_button, !running);
      gtk_widget_set_sensitive (input->random_button, !running);
      if (input->value_entry != NULL)
        gtk_widget_set_sensitive (input->value_entry, !running && input->file == NULL);
    }
}

static void
update_sensitivity (OwbRunPage *self)
{
  owb_page_update (OWB_PAGE (self));
}

static char *
dims_to_string (int rank, const int64_t *dims)
{
  GString *s = g_string_new ("[");
  for (int i = 0; i < rank; i++)
    g_string_append_printf (s, i > 0 ? ", %" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, dims[i]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

/* ---- Inputs ---- */

static void
update_input_row (OwbRunPage *self, RunInput *input)
{
  g_autofree char *type = owb_value_type_to_string (&input->type);
  g_autofree char *source = NULL;
  const char *typed = input->value_entry != NULL ? gtk_editable_get_text (GTK_EDITABLE (input->value_entry)) : "";
  if (input->file == NULL && typed[0] != '\0')
    /* Translators: an input's data source: the number typed in its entry */
    source = g_strdup_printf (_("the value %s"), typed);
  else if (input->file == NULL)
    source = g_strdup (_("random values"));
  else
    {
      g_autofree char *name = g_file_get_basename (input->file);
      if (input->loading != NULL)
        source = g_strdup_printf (_("loading “%s”…"), name);
      else if (input->problem != NULL)
        source = g_strdup_printf (_("“%s” cannot be used: %s"), name, input->problem);
      else
        {
          g_autofree char *held = owb_tensor_shape_to_string (input->tensor);
          /* Translators: an input's data source: "file “x.pb”, float32[1,3,32,32]" */
          source = g_strdup_printf (_("file “%s”, %s"), name, held);
        }
    }
  g_autofree char *subtitle = g_strdup_printf ("%s · %s", type, source);
  g_autofree char *escaped = g_markup_escape_text (subtitle, -1);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (input->row), escaped);
  if (input->problem != NULL)
    gtk_widget_add_css_class (input->row, "error");
  else
    gtk_widget_remove_css_class (input->row, "error");
  gtk_widget_set_visible (input->random_button, input->file != NULL);
  if (input->value_entry != NULL)
    gtk_widget_set_sensitive (input->value_entry, input->file == NULL && !is_running (self));
}

/* Whether a tensor fits an input's declared type; *problem says why not. */
static gboolean
tensor_fits (const OwbTensor *tensor, const OwbValueType *type, char **problem)
{
  OwbValueType have;
  owb_tensor_get_value_type (tensor, &have);
  g_autofree char *have_text = owb_value_type_to_string (&have);
  g_autofree char *want_text = owb_value_type_to_string (type);
  gboolean ok = tensor->kind == type->kind;
  if (ok && type->dtype != OWB_TYPE_UNDEFINED && tensor->dtype != type->dtype)
    ok = FALSE;
  if (ok && type->rank >= 0)
    {
      if (tensor->rank != type->rank)
        ok = FALSE;
      for (int i = 0; ok && i < type->rank; i++)
        if (owb_dim_is_known (type->dims[i]) && type->dims[i].value != tensor->dims[i])
          ok = FALSE;
    }
  if (!ok)
    /* Translators: "it holds float[1,10] but the input takes float[batch,3,32,32]" */
    *problem = g_strdup_printf (_("it holds %s but the input takes %s"), have_text, want_text);
  return ok;
}

typedef struct
{
  OwbRunPage *self;
  RunInput *input; /* valid while input->loading is this load's cancellable */
  GCancellable *cancellable;
  char *path;
} LoadJob;

static void
load_job_free (LoadJob *job)
{
  g_object_unref (job->cancellable);
  g_free (job->path);
  g_free (job);
}

static void
load_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  LoadJob *job = task_data;
  GError *error = NULL;
  OwbTensor *tensor = owb_tensor_load_file (job->path, NULL, &error);
  if (tensor == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, tensor, (GDestroyNotify) owb_tensor_unref);
}

static void
load_done_cb (GObject *source, GAsyncResult *res, gpointer user_data)
{
  OwbRunPage *self = OWB_RUN_PAGE (source);
  LoadJob *job = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbTensor) tensor = g_task_propagate_pointer (G_TASK (res), &error);

  self->n_loading--;
  /* Cancelled: the input was rebuilt, reset or given another file; nothing here is current. */
  if (owb_page_get_disposed (OWB_PAGE (self)) || g_cancellable_is_cancelled (job->cancellable))
    {
      update_sensitivity (self);
      return;
    }
  RunInput *input = job->input;
  g_clear_object (&input->loading);
  g_clear_pointer (&input->problem, g_free);
  if (tensor == NULL)
    input->problem = g_strdup (error->message);
  else if (tensor_fits (tensor, &input->type, &input->problem))
    input->tensor = g_steal_pointer (&tensor);
  update_input_row (self, input);
  if (input->problem != NULL)
    {
      g_autofree char *name = g_file_get_basename (input->file);
      g_autofree char *message = g_strdup_printf (_("Input “%s”: “%s” cannot be used: %s"), input->name, name,
                                                  input->problem);
      owb_page_show_error (OWB_PAGE (self), message);
    }
  else
    owb_page_show_error (OWB_PAGE (self), NULL);
  update_sensitivity (self);
}

static RunInput *
find_input (OwbRunPage *self, const char *name)
{
  for (guint i = 0; i < self->inputs->len; i++)
    {
      RunInput *input = g_ptr_array_index (self->inputs, i);
      if (g_strcmp0 (input->name, name) == 0)
        return input;
    }
  return NULL;
}

static void
reset_input_source (RunInput *input)
{
  if (input->loading != NULL)
    g_cancellable_cancel (input->loading);
  g_clear_object (&input->loading);
  g_clear_object (&input->file);
  g_clear_pointer (&input->tensor, owb_tensor_unref);
  g_clear_pointer (&input->problem, g_free);
}

/**
 * owb_run_page_set_input_file:
 * @file: (nullable): a .pb or .npy tensor file; NULL goes back to random values
 *
 * What "Choose File…" does: loads the file in a worker thread ("busy" meanwhile) and checks its
 * type and shape against the input's; a file that does not fit is shown as an error.
 */
void
owb_run_page_set_input_file (OwbRunPage *self, const char *input_name, GFile *file)
{
  g_return_if_fail (OWB_IS_RUN_PAGE (self));
  RunInput *input = find_input (self, input_name);
  g_return_if_fail (input != NULL);
  reset_input_source (input);
  owb_page_show_error (OWB_PAGE (self), NULL);
  if (file != NULL)
    {
      input->file = g_object_ref (file);
      char *path = g_file_get_path (file);
      if (path == NULL)
        input->problem = g_strdup (_("only local files can be read"));
      else
        {
          LoadJob *job = g_new0 (LoadJob, 1);
          job->self = self;
          job->input = input;
          job->cancellable = g_cancellable_new ();
          job->path = path;
          input->loading = g_object_ref (job->cancellable);
          self->n_loading++;
          OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
          g_autoptr (GTask) task = owb_document_new_job (document, self, job->cancellable, NULL, load_done_cb, NULL);
          g_task_set_task_data (task, job, (GDestroyNotify) load_job_free);
          owb_document_run_job (document, task, load_thread);
        }
    }
  update_input_row (self, input);
  update_sensitivity (self);
}

static void
chooser_response_cb (GtkNativeDialog *dialog, int response, OwbRunPage *self)
{
  const char *name = g_object_get_data (G_OBJECT (dialog), "owb-input");
  if (response == GTK_RESPONSE_ACCEPT && find_input (self, name) != NULL)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      if (file != NULL)
        owb_run_page_set_input_file (self, name, file);
    }
  owb_page_close_file_chooser (&self->chooser);
}

static void
choose_clicked_cb (GtkButton *button, OwbRunPage *self)
{
  const char *name = g_object_get_data (G_OBJECT (button), "owb-input");
  if (self->chooser != NULL)
    return;
  g_autofree char *title = g_strdup_printf (_("Input File for %s"), name);
  self->chooser = owb_page_new_file_chooser (GTK_WIDGET (self), title, GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"));
  owb_page_add_file_filter (self->chooser, _("Tensor Files (.pb, .npy)"), "*.pb", "*.npy", NULL);
  owb_page_add_file_filter (self->chooser, _("All Files"), "*", NULL);
  g_object_set_data_full (G_OBJECT (self->chooser), "owb-input", g_strdup (name), g_free);
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
random_clicked_cb (GtkButton *button, OwbRunPage *self)
{
  owb_run_page_set_input_file (self, g_object_get_data (G_OBJECT (button), "owb-input"), NULL);
}

static GtkSpinButton *
new_dim_spin (const char *a11y)
{
  GtkWidget *spin = gtk_spin_button_new_with_range (1, G_MAXINT32, 1);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), 1);
  gtk_widget_set_valign (spin, GTK_ALIGN_CENTER);
  gtk_accessible_update_property (GTK_ACCESSIBLE (spin), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
  return GTK_SPIN_BUTTON (spin);
}

static void
add_dim_row (OwbRunPage *self, const char *title, const char *subtitle, GtkSpinButton *spin)
{
  GtkWidget *row = adw_action_row_new ();
  g_autofree char *escaped = g_markup_escape_text (title, -1);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), escaped);
  if (subtitle != NULL)
    {
      g_autofree char *escaped_subtitle = g_markup_escape_text (subtitle, -1);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), escaped_subtitle);
    }
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), GTK_WIDGET (spin));
  adw_preferences_group_add (self->dims_group, row);
  g_ptr_array_add (self->dim_rows, row);
}

/* A scalar (rank 0, or one element of rank 1) of a number or bool type: a sample rate, a
 * threshold, a length. Its value can be typed instead of drawn at random. */
static gboolean
is_scalar_input (const OwbValueType *type)
{
  if (type->kind != OWB_VALUE_TENSOR || type->dtype == OWB_TYPE_STRING || type->dtype == OWB_TYPE_COMPLEX64
      || type->dtype == OWB_TYPE_COMPLEX128 || owb_data_type_size (type->dtype) == 0)
    return FALSE;
  if (type->rank == 0)
    return TRUE;
  return type->rank == 1 && owb_dim_is_known (type->dims[0]) && type->dims[0].value == 1;
}

static gboolean
integer_range (OwbDataType dtype, gint64 *min, guint64 *max)
{
  switch (dtype)
    {
    case OWB_TYPE_INT8: *min = G_MININT8, *max = G_MAXINT8; return TRUE;
    case OWB_TYPE_INT16: *min = G_MININT16, *max = G_MAXINT16; return TRUE;
    case OWB_TYPE_INT32: *min = G_MININT32, *max = G_MAXINT32; return TRUE;
    case OWB_TYPE_INT64: *min = G_MININT64, *max = G_MAXINT64; return TRUE;
    case OWB_TYPE_UINT8: *min = 0, *max = G_MAXUINT8; return TRUE;
    case OWB_TYPE_UINT16: *min = 0, *max = G_MAXUINT16; return TRUE;
    case OWB_TYPE_UINT32: *min = 0, *max = G_MAXUINT32; return TRUE;
    case OWB_TYPE_UINT64: *min = 0, *max = G_MAXUINT64; return TRUE;
    default: return FALSE;
    }
}

/* The tensor of a typed scalar, of the input's type and shape ([] or [1]). */
static OwbTensor *
typed_value_tensor (const RunInput *input, const char *text, GError **error)
{
  OwbDataType dtype = input->type.dtype;
  int64_t one = 1;
  g_autoptr (OwbTensor) t = owb_tensor_new (dtype, input->type.rank, &one, error);
  if (t == NULL)
    return NULL;
  g_autofree char *trimmed = g_strstrip (g_strdup (text));
  gint64 min;
  guint64 max;
  gboolean ok;
  if (dtype == OWB_TYPE_BOOL)
    {
      gboolean yes = g_ascii_strcasecmp (trimmed, "true") == 0 || strcmp (trimmed, "1") == 0;
      ok = yes || g_ascii_strcasecmp (trimmed, "false") == 0 || strcmp (trimmed, "0") == 0;
      if (ok)
        ((guint8 *) t->data)[0] = yes;
    }
  else if (integer_range (dtype, &min, &max))
    {
      /* Exact for every integer type: 64-bit values do not pass through a double. */
      if (min < 0)
        {
          gint64 v;
          ok = g_ascii_string_to_signed (trimmed, 10, min, (gint64) max, &v, NULL);
          if (ok && dtype == OWB_TYPE_INT64)
            ((gint64 *) t->data)[0] = v;
          else if (ok)
            owb_tensor_set_double (t, 0, (double) v);
        }
      else
        {
          guint64 v;
          ok = g_ascii_string_to_unsigned (trimmed, 10, 0, max, &v, NULL);
          if (ok && dtype == OWB_TYPE_UINT64)
            ((guint64 *) t->data)[0] = v;
          else if (ok)
            owb_tensor_set_double (t, 0, (double) v);
        }
    }
  else
    {
      char *end = NULL;
      double v = g_ascii_strtod (trimmed, &end);
      ok = end != trimmed && *end == '\0';
      if (ok)
        owb_tensor_set_double (t, 0, v);
    }
  if (!ok)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   /* Translators: "Input “sr”: “abc” cannot be read as int64" */
                   _("Input “%s”: “%s” cannot be read as %s"), input->name, trimmed, owb_data_type_name (dtype));
      return NULL;
    }
  return g_steal_pointer (&t);
}

static void
value_entry_changed_cb (GtkEditable *entry, OwbRunPage *self)
{
  RunInput *input = g_object_get_data (G_OBJECT (entry), "owb-run-input");
  update_input_row (self, input);
}

static RunInput *
new_input (OwbRunPage *self, const OwbValueInfo *info)
{
  RunInput *input = g_new0 (RunInput, 1);
  input->name = g_strdup (info->name);
  if (info->has_type)
    input->type = info->type;
  else
    owb_value_type_init_unknown (&input->type);

  input->row = adw_action_row_new ();
  g_autofree char *title = g_markup_escape_text (info->name, -1);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (input->row), title);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (input->row), 4);

  if (is_scalar_input (&input->type))
    {
      input->value_entry = gtk_entry_new ();
      gtk_entry_set_placeholder_text (GTK_ENTRY (input->value_entry), _("random"));
      gtk_editable_set_width_chars (GTK_EDITABLE (input->value_entry), 10);
      gtk_widget_set_valign (input->value_entry, GTK_ALIGN_CENTER);
      gtk_widget_set_tooltip_text (input->value_entry, _("Type a value for this scalar input, or leave it empty for a random one"));
      g_autofree char *value_a11y = g_strdup_printf (_("Value of %s"), info->name);
      gtk_accessible_update_property (GTK_ACCESSIBLE (input->value_entry), GTK_ACCESSIBLE_PROPERTY_LABEL, value_a11y,
                                      -1);
      g_object_set_data (G_OBJECT (input->value_entry), "owb-run-input", input);
      g_signal_connect (input->value_entry, "changed", G_CALLBACK (value_entry_changed_cb), self);
      adw_action_row_add_suffix (ADW_ACTION_ROW (input->row), input->value_entry);
    }

  input->random_button = gtk_button_new_from_icon_name ("edit-clear-symbolic");
  gtk_widget_set_valign (input->random_button, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (input->random_button, "flat");
  g_autofree char *random_a11y = g_strdup_printf (_("Random Data for %s"), info->name);
  gtk_widget_set_tooltip_text (input->random_button, _("Use random values instead of the file"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (input->random_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  random_a11y, -1);
  g_object_set_data_full (G_OBJECT (input->random_button), "owb-input", g_strdup (info->name), g_free);
  g_signal_connect (input->random_button, "clicked", G_CALLBACK (random_clicked_cb), self);
  adw_action_row_add_suffix (ADW_ACTION_ROW (input->row), input->random_button);

  input->choose_button = gtk_button_new_with_mnemonic (_("Choose _File…"));
  gtk_widget_set_valign (input->choose_button, GTK_ALIGN_CENTER);
  g_autofree char *choose_a11y = g_strdup_printf (_("Input File for %s"), info->name);
  gtk_accessible_update_property (GTK_ACCESSIBLE (input->choose_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  choose_a11y, -1);
  owb_page_keep_own_accessible_name (input->choose_button);
  g_object_set_data_full (G_OBJECT (input->choose_button), "owb-input", g_strdup (info->name), g_free);
  g_signal_connect (input->choose_button, "clicked", G_CALLBACK (choose_clicked_cb), self);
  adw_action_row_add_suffix (ADW_ACTION_ROW (input->row), input->choose_button);

  /* Open dims get spins: one per symbolic name (shared by every input that uses it, since the
   * model means them to agree), one per unnamed unknown axis. */
  if (input->type.rank > 0)
    {
      input->axis_spins = g_new0 (GtkSpinButton *, input->type.rank);
      for (int d = 0; d < input->type.rank; d++)
        {
          OwbDim dim = input->type.dims[d];
          if (owb_dim_is_known (dim))
            continue;
          if (dim.param != NULL)
            {
              if (g_hash_table_contains (self->param_spins, dim.param))
                continue;
              GtkSpinButton *spin = new_dim_spin (dim.param);
              g_hash_table_insert (self->param_spins, (gpointer) dim.param, spin);
              add_dim_row (self, dim.param, NULL, spin);
            }
          else
            {
              /* Translators: an unnamed dimension of an input: "image, axis 0" */
              g_autofree char *label = g_strdup_printf (_("%s, axis %d"), info->name, d);
              input->axis_spins[d] = new_dim_spin (label);
              add_dim_row (self, label, NULL, input->axis_spins[d]);
            }
        }
    }
  return input;
}

static void
clear_outputs (OwbRunPage *self)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->outputs_box))) != NULL)
    gtk_box_remove (self->outputs_box, child);
  g_ptr_array_set_size (self->outputs, 0);
  g_array_set_size (self->stats, 0);
  g_array_set_size (self->has_stats, 0);
  g_ptr_array_set_size (self->output_values, 0);
  gtk_widget_set_visible (GTK_WIDGET (self->time_label), FALSE);
  g_clear_pointer (&self->kept, g_hash_table_unref);
  g_signal_emit (self, signals[SIGNAL_RUN_VALUES_CHANGED], 0);
}

static void
clear_inputs (OwbRunPage *self, GHashTable *keep_files)
{
  for (guint i = 0; i < self->inputs->len; i++)
    {
      RunInput *input = g_ptr_array_index (self->inputs, i);
      if (keep_files != NULL && input->file != NULL)
        g_hash_table_insert (keep_files, g_strdup (input->name), g_object_ref (input->file));
    }
  for (guint i = 0; i < self->input_rows->len; i++)
    adw_preferences_group_remove (self->inputs_group, g_ptr_array_index (self->input_rows, i));
  for (guint i = 0; i < self->dim_rows->len; i++)
    adw_preferences_group_remove (self->dims_group, g_ptr_array_index (self->dim_rows, i));
  g_ptr_array_set_size (self->input_rows, 0);
  g_ptr_array_set_size (self->dim_rows, 0);
  g_ptr_array_set_size (self->inputs, 0);
  g_hash_table_remove_all (self->param_spins);
}

/* Builds the page for the document's current prepared model, keeping the files chosen for
 * inputs that are still there. */
static void
rebuild (OwbRunPage *self)
{
  owb_page_cancel (OWB_PAGE (self));
  g_autoptr (GHashTable) keep_files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  clear_inputs (self, keep_files);
  clear_outputs (self);
  owb_page_show_error (OWB_PAGE (self), NULL);
  g_clear_pointer (&self->prepared, owb_prepared_unref);

  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  OwbPrepared *prepared = document != NULL ? owb_document_get_prepared (document) : NULL;
  if (prepared == NULL)
    {
      gtk_stack_set_visible_child_name (self->stack, "empty");
      update_sensitivity (self);
      return;
    }
  self->prepared = owb_prepared_ref (prepared);
  OwbSession *session = owb_prepared_get_session (prepared);
  if (owb_prepared_is_pending (prepared))
    {
      gtk_stack_set_visible_child_name (self->stack, "preparing");
      update_sensitivity (self);
      return;
    }
  if (session == NULL)
    {
      const GError *error = owb_prepared_get_error (prepared);
      g_autofree char *escaped = g_markup_escape_text (error != NULL ? error->message : _("No session could be made"), -1);
      adw_status_page_set_description (self->error_page, escaped);
      gtk_stack_set_visible_child_name (self->stack, "error");
      update_sensitivity (self);
      return;
    }
  guint n = owb_session_get_n_inputs (session);
  for (guint i = 0; i < n; i++)
    {
      RunInput *input = new_input (self, owb_session_get_input (session, i));
      g_ptr_array_add (self->inputs, input);
      adw_preferences_group_add (self->inputs_group, input->row);
      g_ptr_array_add (self->input_rows, input->row);
      update_input_row (self, input);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->inputs_group), n > 0);
  gtk_widget_set_visible (GTK_WIDGET (self->dims_group), self->dim_rows->len > 0);
  gtk_stack_set_visible_child_name (self->stack, "run");
  for (guint i = 0; i < self->inputs->len; i++)
    {
      RunInput *input = g_ptr_array_index (self->inputs, i);
      GFile *file = g_hash_table_lookup (keep_files, input->name);
      if (file != NULL)
        owb_run_page_set_input_file (self, input->name, file);
    }
  update_sensitivity (self);
}

/* ---- Running ---- */

typedef struct
{
  char *name;
  OwbTensor *tensor;    /* from a file; NULL: random */
  OwbDataType dtype;
  int rank;
  int64_t dims[OWB_MAX_RANK];
} JobInput;

typedef struct
{
  OwbSession *session;  /* alive while the page holds the prepared model */
  guint n_inputs;
  JobInput *inputs;
  guint32 seed;
  gboolean keep;        /* keep every value the run computes */
} RunJob;

typedef struct
{
  guint n_outputs;
  OwbTensor **outputs;
  OwbTensorStats *stats;
  gboolean *has_stats;
  guint *n_top;
  int64_t *top_indices; /* [n_outputs * TOP_K] */
  double *top_values;
  double ms;
  GHashTable *kept;     /* name -> OwbTensor *; NULL unless the job keeps values */
  gsize kept_bytes;
} RunResult;

static void
run_job_free (RunJob *job)
{
  for (guint i = 0; i < job->n_inputs; i++)
    {
      g_free (job->inputs[i].name);
      g_clear_pointer (&job->inputs[i].tensor, owb_tensor_unref);
    }
  g_free (job->inputs);
  g_free (job);
}

static void
run_result_free (RunResult *result)
{
  for (guint i = 0; i < result->n_outputs; i++)
    g_clear_pointer (&result->outputs[i], owb_tensor_unref);
  g_free (result->outputs);
  g_free (result->stats);
  g_free (result->has_stats);
  g_free (result->n_top);
  g_free (result->top_indices);
  g_free (result->top_values);
  g_clear_pointer (&result->kept, g_hash_table_unref);
  g_free (result);
}

static gboolean
is_float_type (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT || t == OWB_TYPE_DOUBLE || t == OWB_TYPE_FLOAT16 || t == OWB_TYPE_BFLOAT16;
}

/* The engine's generator (owb_tensor_new_random), the one `owb run --random` uses: one seed gives
 * the same inputs here and on the command line. */
static OwbTensor *
random_tensor (const JobInput *in, GRand *rand, GError **error)
{
  OwbDataType t = in->dtype;
  if (t == OWB_TYPE_STRING || t == OWB_TYPE_COMPLEX64 || t == OWB_TYPE_COMPLEX128 || owb_data_type_size (t) == 0)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   _("Input “%s” is of type %s, which has no random values: choose a file for it"), in->name,
                   owb_data_type_name (t));
      return NULL;
    }
  return owb_tensor_new_random (t, in->rank, in->dims, rand, error);
}

/* Classifier scores: float, last axis of at least 2, every other axis 1. */
static gboolean
is_classifier_like (const OwbTensor *tensor)
{
  if (tensor->kind != OWB_VALUE_TENSOR || !is_float_type (tensor->dtype) || tensor->rank < 1)
    return FALSE;
  if (tensor->dims[tensor->rank - 1] < 2)
    return FALSE;
  for (int i = 0; i < tensor->rank - 1; i++)
    if (tensor->dims[i] != 1)
      return FALSE;
  return TRUE;
}

/* Keeps a copy of every output of every node of the main graph: the run's arena reuses their
 * memory as soon as their last reader is done. */
static void
keep_node_outputs (const OwbNodeEvent *event, gpointer user_data)
{
  RunResult *result = user_data;
  if (event->depth > 0)
    return;
  for (int i = 0; i < event->n_outputs && i < event->node->n_outputs; i++)
    {
      const char *name = event->node->outputs[i];
      OwbTensor *value = event->outputs[i];
      if (value == NULL || name == NULL || name[0] == '\0')
        continue;
      OwbTensor *copy = owb_tensor_dup (value);
      if (copy == NULL)
        continue;
      result->kept_bytes += copy->nbytes;
      g_hash_table_replace (result->kept, g_strdup (name), copy);
    }
}

static void
run_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  RunJob *job = task_data;
  GError *error = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (job->seed);
  g_autoptr (GPtrArray) tensors = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  g_autofree const char **names = g_new0 (const char *, job->n_inputs + 1);

  for (guint i = 0; i < job->n_inputs; i++)
    {
      JobInput *in = &job->inputs[i];
      OwbTensor *tensor = in->tensor != NULL ? owb_tensor_ref (in->tensor) : random_tensor (in, rand, &error);
      if (tensor == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
      g_ptr_array_add (tensors, tensor);
      names[i] = in->name;
      if (g_task_return_error_if_cancelled (task))
        return;
    }

  guint n_outputs = owb_session_get_n_outputs (job->session);
  RunResult *result = g_new0 (RunResult, 1);
  result->n_outputs = n_outputs;
  result->outputs = g_new0 (OwbTensor *, n_outputs);
  result->stats = g_new0 (OwbTensorStats, n_outputs);
  result->has_stats = g_new0 (gboolean, n_outputs);
  result->n_top = g_new0 (guint, n_outputs);
  result->top_indices = g_new0 (int64_t, (gsize) n_outputs * TOP_K);
  result->top_values = g_new0 (double, (gsize) n_outputs * TOP_K);

  OwbRunHooks hooks = { .node_end = keep_node_outputs, .user_data = result };
  OwbRunOptions options;
  owb_run_options_init (&options);
  options.cancellable = cancellable;
  if (job->keep)
    {
      options.hooks = &hooks;
      result->kept = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) owb_tensor_unref);
      for (guint i = 0; i < job->n_inputs; i++)
        g_hash_table_replace (result->kept, g_strdup (names[i]), owb_tensor_ref (tensors->pdata[i]));
    }
  gint64 start = g_get_monotonic_time ();
  gboolean ok = owb_session_run_with_options (job->session, &options, job->n_inputs, names,
                                              (OwbTensor *const *) tensors->pdata, n_outputs, NULL, result->outputs,
                                              NULL, &error);
  result->ms = (g_get_monotonic_time () - start) / 1000.0;
  if (!ok)
    {
      run_result_free (result);
      g_task_return_error (task, error);
      return;
    }
  for (guint i = 0; i < n_outputs; i++)
    {
      const OwbTensor *out = result->outputs[i];
      if (out == NULL || out->kind != OWB_VALUE_TENSOR)
        continue;
      result->has_stats[i] = owb_tensor_stats_compute (out, &result->stats[i], 0, NULL, NULL);
      if (is_classifier_like (out))
        result->n_top[i] = owb_tensor_top_k (out, TOP_K, result->top_indices + (gsize) i * TOP_K,
                                             result->top_values + (gsize) i * TOP_K);
    }
  if (g_task_return_error_if_cancelled (task))
    {
      run_result_free (result);
      return;
    }
  g_task_return_pointer (task, result, (GDestroyNotify) run_result_free);
}

static GtkWidget *
new_value_row (const char *title, const char *value)
{
  GtkWidget *row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  GtkWidget *label = gtk_label_new (value);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_widget_add_css_class (label, "numeric");
  g_autofree char *a11y = g_strdup_printf ("%s: %s", title, value);
  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
  owb_page_keep_own_accessible_name (row);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), label);
  return row;
}

static char *
format_number (double v)
{
  return g_strdup_printf ("%.6g", v);
}

static GtkWidget *
new_output_group (const char *name, const OwbTensor *out, const OwbTensorStats *stats, gboolean has_stats)
{
  GtkWidget *group = adw_preferences_group_new ();
  g_autofree char *title = g_markup_escape_text (name, -1);
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), title);
  g_autofree char *description = NULL;
  if (out == NULL)
    description = g_strdup (_("no value"));
  else if (out->kind == OWB_VALUE_TENSOR)
    {
      g_autofree char *shape = dims_to_string (out->rank, out->dims);
      /* Translators: an output's element type and shape: "float, shape [1, 10]" */
      description = g_strdup_printf (_("%s, shape %s"), owb_data_type_name (out->dtype), shape);
    }
  else
    {
      g_autofree char *type = owb_tensor_shape_to_string (out);
      guint n = out->sequence != NULL ? out->sequence->len : 0;
      description = g_strdup_printf (ngettext ("%s with %u element", "%s with %u elements", n), type, n);
    }
  g_autofree char *escaped = g_markup_escape_text (description, -1);
  adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (group), escaped);
  g_autofree char *a11y = g_strdup_printf (_("Output %s"), name);
  gtk_accessible_update_property (GTK_ACCESSIBLE (group), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);

  if (has_stats)
    {
      g_autofree char *min = format_number (stats->min);
      g_autofree char *max = format_number (stats->max);
      g_autofree char *mean = format_number (stats->mean);
      g_autofree char *std = format_number (stats->std);
      g_autofree char *bad = g_strdup_printf ("%" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT, stats->n_nan, stats->n_inf);
      adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), new_value_row (_("Minimum"), min));
      adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), new_value_row (_("Maximum"), max));
      adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), new_value_row (_("Mean"), mean));
      adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), new_value_row (_("Standard Deviation"), std));
      GtkWidget *bad_row = new_value_row (_("NaN / Inf"), bad);
      if (stats->n_nan > 0 || stats->n_inf > 0)
        gtk_widget_add_css_class (bad_row, "error");
      adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), bad_row);
    }
  return group;
}

static GtkWidget *
new_top_group (const char *name, guint n, const int64_t *indices, const double *values,
               const OwbTensorStats *stats)
{
  GtkWidget *group = adw_preferences_group_new ();
  /* Translators: "Top 5 classes of “495”": the output's name is quoted, so that a name made of
   * digits does not read as a count */
  g_autofree char *title_text = g_strdup_printf (_("Top %u classes of “%s”"), n, name);
  g_autofree char *title = g_markup_escape_text (title_text, -1);
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), title);
  gtk_accessible_update_property (GTK_ACCESSIBLE (group), GTK_ACCESSIBLE_PROPERTY_LABEL, title_text, -1);
  /* Probabilities fill the bar by their value; other scores by their place between the output's
   * smallest and largest value. */
  gboolean probabilities = stats->min >= 0 && stats->max <= 1;
  double span = stats->max - stats->min;
  for (guint k = 0; k < n; k++)
    {
      double fraction = probabilities ? values[k] : (span > 0 ? (values[k] - stats->min) / span : 1);
      g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT ": %.6g", indices[k], values[k]);
      GtkWidget *row = adw_action_row_new ();
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), text);
      GtkWidget *bar = gtk_level_bar_new_for_interval (0, 1);
      gtk_level_bar_set_value (GTK_LEVEL_BAR (bar), CLAMP (isfinite (fraction) ? fraction : 0, 0, 1));
      /* One colour for every bar: the default offsets would paint low scores as warnings. */
      gtk_level_bar_remove_offset_value (GTK_LEVEL_BAR (bar), GTK_LEVEL_BAR_OFFSET_LOW);
      gtk_level_bar_remove_offset_value (GTK_LEVEL_BAR (bar), GTK_LEVEL_BAR_OFFSET_HIGH);
      gtk_level_bar_remove_offset_value (GTK_LEVEL_BAR (bar), GTK_LEVEL_BAR_OFFSET_FULL);
      gtk_widget_set_size_request (bar, 160, -1);
      gtk_widget_set_valign (bar, GTK_ALIGN_CENTER);
      gtk_accessible_update_property (GTK_ACCESSIBLE (bar), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
      gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
      owb_page_keep_own_accessible_name (row);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), bar);
      adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), row);
    }
  return group;
}

static void
run_done_cb (GObject *source, GAsyncResult *res, gpointer user_data)
{
  OwbRunPage *self = OWB_RUN_PAGE (source);
  g_autoptr (GError) error = NULL;
  RunResult *result = g_task_propagate_pointer (G_TASK (res), &error);
  g_autoptr (OwbPrepared) prepared = g_steal_pointer (&self->run_prepared);
  /* The page or its document changed meanwhile: this run's result belongs to nothing shown. */
  if (owb_page_get_disposed (OWB_PAGE (self)) || prepared != self->prepared)
    {
      g_clear_pointer (&result, run_result_free);
      owb_page_set_busy (OWB_PAGE (self), NULL);
      return;
    }
  gtk_label_set_text (self->progress_label, "");
  owb_page_set_busy (OWB_PAGE (self), NULL);
  if (result == NULL)
    {
      if (owb_error_is_cancelled (error))
        owb_page_show_error (OWB_PAGE (self), _("Run cancelled"));
      else
        {
          g_autofree char *message = g_strdup_printf (_("The run failed: %s"), error->message);
          owb_page_show_error (OWB_PAGE (self), message);
        }
      return;
    }

  g_autofree char *time = NULL;
  if (result->kept != NULL)
    {
      g_autofree char *size = g_format_size (result->kept_bytes);
      guint n_kept = g_hash_table_size (result->kept);
      /* Translators: "Ran in 12.30 ms, keeping 52 values (3.1 MB)" */
      time = g_strdup_printf (ngettext ("Ran in %.2f ms, keeping %u value (%s)", "Ran in %.2f ms, keeping %u values (%s)",
                                        n_kept),
                              result->ms, n_kept, size);
    }
  else
    time = g_strdup_printf (_("Ran in %.2f ms"), result->ms);
  gtk_label_set_text (self->time_label, time);
  gtk_widget_set_visible (GTK_WIDGET (self->time_label), TRUE);
  self->run_ms = result->ms;
  OwbSession *session = owb_prepared_get_session (prepared);
  for (guint i = 0; i < result->n_outputs; i++)
    {
      const char *name = owb_session_get_output (session, i)->name;
      OwbTensor *out = result->outputs[i];
      GtkWidget *group = new_output_group (name, out, &result->stats[i], result->has_stats[i]);
      gtk_box_append (self->outputs_box, group);
      if (result->n_top[i] > 0)
        gtk_box_append (self->outputs_box,
                        new_top_group (name, result->n_top[i], result->top_indices + (gsize) i * TOP_K,
                                       result->top_values + (gsize) i * TOP_K, &result->stats[i]));
      GtkWidget *values = NULL;
      if (out != NULL && out->kind == OWB_VALUE_TENSOR)
        {
          /* The run's prepared is the document's (checked above): the document is there. */
          values = owb_output_values_new (owb_page_get_document (OWB_PAGE (self)), out, name);
          g_signal_connect_object (values, "notify::busy", G_CALLBACK (update_sensitivity), self, G_CONNECT_SWAPPED);
          adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), values);
        }
      g_ptr_array_add (self->output_values, values);
      g_ptr_array_add (self->outputs, out != NULL ? owb_tensor_ref (out) : NULL);
      g_array_append_val (self->stats, result->stats[i]);
      g_array_append_val (self->has_stats, result->has_stats[i]);
    }
  self->kept = g_steal_pointer (&result->kept);
  g_signal_emit (self, signals[SIGNAL_RUN_VALUES_CHANGED], 0);
  run_result_free (result);
}

/* The value of every open dim of a random input: a spin, or a size a file fixes for the same
 * symbolic name. */
static gboolean
resolve_dims (OwbRunPage *self, RunInput *input, GHashTable *bound, JobInput *out, GError **error)
{
  if (input->type.kind != OWB_VALUE_TENSOR || input->type.rank < 0)
    {
      g_autofree char *type = owb_value_type_to_string (&input->type);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT,
                   _("Input “%s” (%s) has no shape to make random values for: choose a file for it"), input->name,
                   type);
      return FALSE;
    }
  out->dtype = input->type.dtype;
  out->rank = input->type.rank;
  for (int d = 0; d < input->type.rank; d++)
    {
      OwbDim dim = input->type.dims[d];
      if (owb_dim_is_known (dim))
        out->dims[d] = dim.value;
      else if (dim.param != NULL && g_hash_table_contains (bound, dim.param))
        out->dims[d] = GPOINTER_TO_SIZE (g_hash_table_lookup (bound, dim.param));
      else if (dim.param != NULL)
        out->dims[d] = gtk_spin_button_get_value_as_int (g_hash_table_lookup (self->param_spins, dim.param));
      else
        out->dims[d] = gtk_spin_button_get_value_as_int (input->axis_spins[d]);
    }
  return TRUE;
}

/**
 * owb_run_page_run:
 *
 * What the Run button does: runs the session once in a worker thread on the chosen inputs; "busy"
 * is TRUE until the page shows the outputs or the error.
 */
void
owb_run_page_run (OwbRunPage *self)
{
  g_return_if_fail (OWB_IS_RUN_PAGE (self));
  if (owb_page_get_busy (OWB_PAGE (self)) || self->prepared == NULL || owb_prepared_get_session (self->prepared) == NULL)
    return;

  clear_outputs (self);
  owb_page_show_error (OWB_PAGE (self), NULL);
  g_autoptr (GError) error = NULL;
  RunJob *job = g_new0 (RunJob, 1);
  job->session = owb_prepared_get_session (self->prepared);
  job->seed = (guint32) gtk_spin_button_get_value (self->seed_spin);
  job->keep = gtk_switch_get_active (self->keep_switch);
  job->n_inputs = self->inputs->len;
  job->inputs = g_new0 (JobInput, job->n_inputs);

  /* Symbolic sizes the chosen files fix, so random inputs that share the name agree with them. */
  g_autoptr (GHashTable) bound = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (guint i = 0; i < self->inputs->len; i++)
    {
      RunInput *input = g_ptr_array_index (self->inputs, i);
      if (input->tensor == NULL || input->type.rank != input->tensor->rank)
        continue;
      for (int d = 0; d < input->type.rank; d++)
        if (!owb_dim_is_known (input->type.dims[d]) && input->type.dims[d].param != NULL)
          g_hash_table_insert (bound, (gpointer) input->type.dims[d].param, GSIZE_TO_POINTER (input->tensor->dims[d]));
    }

  for (guint i = 0; i < self->inputs->len && error == NULL; i++)
    {
      RunInput *input = g_ptr_array_index (self->inputs, i);
      JobInput *in = &job->inputs[i];
      in->name = g_strdup (input->name);
      if (input->file != NULL && input->problem != NULL)
        {
          g_autofree char *name = g_file_get_basename (input->file);
          g_set_error (&error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, _("Input “%s”: “%s” cannot be used: %s"),
                       input->name, name, input->problem);
        }
      else if (input->tensor != NULL)
        in->tensor = owb_tensor_ref (input->tensor);
      else if (input->value_entry != NULL && gtk_editable_get_text (GTK_EDITABLE (input->value_entry))[0] != '\0')
        in->tensor = typed_value_tensor (input, gtk_editable_get_text (GTK_EDITABLE (input->value_entry)), &error);
      else
        resolve_dims (self, input, bound, in, &error);
    }
  if (error != NULL)
    {
      run_job_free (job);
      owb_page_show_error (OWB_PAGE (self), error->message);
      return;
    }

  self->run_prepared = owb_prepared_ref (self->prepared);
  gtk_label_set_text (self->progress_label, _("Running…"));
  owb_page_set_busy (OWB_PAGE (self), g_cancellable_new ());
  /* run_prepared keeps the session alive whatever the document does; the task keeps the page
   * alive until run_done_cb releases it. */
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  g_autoptr (GTask) task = owb_document_new_job (document, self, owb_page_get_cancellable (OWB_PAGE (self)), NULL,
                                                 run_done_cb, NULL);
  g_task_set_source_tag (task, owb_run_page_run);
  g_task_set_task_data (task, job, (GDestroyNotify) run_job_free);
  owb_document_run_job (document, task, run_thread);
}

static void
run_clicked_cb (OwbRunPage *self)
{
  owb_run_page_run (self);
}

static void
cancel_clicked_cb (OwbRunPage *self)
{
  owb_page_cancel (OWB_PAGE (self));
}

/* ---- Document ---- */

static void
prepared_changed (OwbPage *page)
{
  OwbRunPage *self = OWB_RUN_PAGE (page);
  OwbDocument *document = owb_page_get_document (page);
  if (document != NULL && owb_document_get_prepared (document) == self->prepared)
    return;
  rebuild (self);
}

static void
document_changed (OwbPage *page)
{
  rebuild (OWB_RUN_PAGE (page));
}

/* ---- GObject ---- */

static void
owb_run_page_dispose (GObject *object)
{
  OwbRunPage *self = OWB_RUN_PAGE (object);
  owb_page_close_file_chooser (&self->chooser);
  /* Loads in flight point at the inputs: cancel them before the inputs go. */
  g_ptr_array_set_size (self->inputs, 0);
  gtk_widget_dispose_template (GTK_WIDGET (self), OWB_TYPE_RUN_PAGE);
  G_OBJECT_CLASS (owb_run_page_parent_class)->dispose (object);
}

static void
owb_run_page_finalize (GObject *object)
{
  OwbRunPage *self = OWB_RUN_PAGE (object);
  g_clear_pointer (&self->prepared, owb_prepared_unref);
  g_ptr_array_unref (self->inputs);
  g_ptr_array_unref (self->input_rows);
  g_ptr_array_unref (self->dim_rows);
  g_hash_table_unref (self->param_spins);
  g_ptr_array_unref (self->outputs);
  g_array_unref (self->stats);
  g_array_unref (self->has_stats);
  g_ptr_array_unref (self->output_values);
  g_clear_pointer (&self->kept, g_hash_table_unref);
  G_OBJECT_CLASS (owb_run_page_parent_class)->finalize (object);
}

static void
owb_run_page_class_init (OwbRunPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  OwbPageClass *page_class = OWB_PAGE_CLASS (klass);

  object_class->dispose = owb_run_page_dispose;
  object_class->finalize = owb_run_page_finalize;
  page_class->document_changed = document_changed;
  page_class->prepared_changed = prepared_changed;
  page_class->update = update;
  page_class->get_busy = get_busy;
  /* The values owb_run_page_get_run_value gives changed: a run finished, or its values went. */
  signals[SIGNAL_RUN_VALUES_CHANGED] = g_signal_new ("run-values-changed", G_TYPE_FROM_CLASS (klass),
                                                      G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/onnxworkbench/Workbench/owb-run-page.ui");
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, stack);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, error_page);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, inputs_group);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, dims_group);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, seed_spin);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, keep_switch);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, run_button);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, progress_box);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, spinner);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, progress_label);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, error_label);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, time_label);
  gtk_widget_class_bind_template_child (widget_class, OwbRunPage, outputs_box);
  gtk_widget_class_bind_template_callback (widget_class, run_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, cancel_clicked_cb);

  gtk_widget_class_set_css_name (widget_class, "runpage");
}

static void
owb_run_page_init (OwbRunPage *self)
{
  self->inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) run_input_free);
  self->input_rows = g_ptr_array_new ();
  self->dim_rows = g_ptr_array_new ();
  self->param_spins = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->outputs = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  self->stats = g_array_new (FALSE, TRUE, sizeof (OwbTensorStats));
  self->has_stats = g_array_new (FALSE, TRUE, sizeof (gboolean));
  self->output_values = g_ptr_array_new_with_free_func (NULL);
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Run"), -1);
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->run_button));
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->cancel_button));
  owb_page_set_error_label (OWB_PAGE (self), self->error_label);
  update_sensitivity (self);
}

GtkWidget *
owb_run_page_new (void)
{
  return g_object_new (OWB_TYPE_RUN_PAGE, NULL);
}

/* ---- For tests and the window ---- */

guint
owb_run_page_get_n_outputs (OwbRunPage *self)
{
  g_return_val_if_fail (OWB_IS_RUN_PAGE (self), 0);
  return self->outputs->len;
}

const OwbTensor *
owb_run_page_get_output (OwbRunPage *self, guint index)
{
  g_return_val_if_fail (OWB_IS_RUN_PAGE (self), NULL);
  g_return_val_if_fail (index < self->outputs->len, NULL);
  return g_ptr_array_index (self->outputs, index);
}

gboolean
owb_run_page_get_output_stats (OwbRunPage *self, guint index, OwbTensorStats *stats)
{
  g_return_val_if_fail (OWB_IS_RUN_PAGE (self), FALSE);
  if (index >= self->stats->len || !g_array_index (self->has_stats, gboolean, index))
    return FALSE;
  *stats = g_array_index (self->stats, OwbTensorStats, index);
  return TRUE;
}

const char *
owb_run_page_get_error (OwbRunPage *self)
{
  g_return_val_if_fail (OWB_IS_RUN_PAGE (self), NULL);
  if (gtk_stack_get_visible_child_name (self->stack) != NULL
      && strcmp (gtk_stack_get_visible_child_name (self->stack), "error") == 0)
    return adw_status_page_get_description (self->error_page);
  return owb_page_get_error (OWB_PAGE (self));
}

OwbOutputValues *
owb_run_page_get_output_values (OwbRunPage *self, guint index)
{
  g_return_val_if_fail (OWB_IS_RUN_PAGE (self), NULL);
  g_return_val_if_fail (index < self->output_values->len, NULL);
  return g_ptr_array_index (self->output_values, index);
}

void
owb_run_page_set_input_value (OwbRunPage *self, const char *input_name, const char *text)
{
  g_return_if_fail (OWB_IS_RUN_PAGE (self));
  RunInput *input = find_input (self, input_name);
  g_return_if_fail (input != NULL && input->value_entry != NULL);
  gtk_editable_set_text (GTK_EDITABLE (input->value_entry), text != NULL ? text : "");
}

void
owb_run_page_set_keep_values (OwbRunPage *self, gboolean keep)
{
  g_return_if_fail (OWB_IS_RUN_PAGE (self));
  gtk_switch_set_active (self->keep_switch, keep);
}

OwbTensor *
owb_run_page_get_run_value (OwbRunPage *self, const OwbGraph *graph, const char *name)
{
  g_return_val_if_fail (OWB_IS_RUN_PAGE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  /* Values belong to the graph of the session that computed them: another level's graph may
   * name other values. */
  if (self->prepared == NULL || graph == NULL || owb_prepared_get_graph (self->prepared) != graph)
    return NULL;
  if (self->kept != NULL)
    return g_hash_table_lookup (self->kept, name);
  /* Without kept values the run's outputs are still there. */
  OwbSession *session = owb_prepared_get_session (self->prepared);
  for (guint i = 0; session != NULL && i < self->outputs->len && i < owb_session_get_n_outputs (session); i++)
    if (g_strcmp0 (owb_session_get_output (session, i)->name, name) == 0)
      return g_ptr_array_index (self->outputs, i);
  return NULL;
}
