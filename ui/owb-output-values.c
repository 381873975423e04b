/* owb-output-values.c: one run output's values (OwbValuesView), Export… (.npy/.pb through the
 * engine's writers, which write a temporary file and rename it) and Compare with Reference…
 * (owb_tensor_compare, the comparison `owb check` makes). */
#include "owb-output-values.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "owb-page-util.h"
#include "owb-values-view.h"

struct _OwbOutputValues
{
  GtkWidget parent_instance;

  OwbTensor *tensor;
  char *name;
  GtkWidget *box;
  GtkWidget *export_button;
  GtkWidget *compare_button;
  GtkEntry *rtol_entry;
  GtkEntry *atol_entry;
  GtkLabel *status_label;
  GtkLabel *errors_label;
  GtkFileChooserNative *chooser;
  OwbDocument *document;     /* runs the file work; its model is never written over */
  guint n_busy;
  gboolean has_comparison;
  gboolean passed;
  OwbTensorComparison comparison;
};

G_DEFINE_FINAL_TYPE (OwbOutputValues, owb_output_values, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void
set_busy (OwbOutputValues *self, gboolean busy)
{
  if (busy)
    self->n_busy++;
  else
    self->n_busy--;
  gtk_widget_set_sensitive (self->export_button, self->n_busy == 0);
  gtk_widget_set_sensitive (self->compare_button, self->n_busy == 0);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

static void
show_status (OwbOutputValues *self, const char *text, const char *css_class)
{
  gtk_label_set_text (self->status_label, text);
  gtk_widget_set_visible (GTK_WIDGET (self->status_label), text != NULL);
  gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "error");
  gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "success");
  if (css_class != NULL)
    gtk_widget_add_css_class (GTK_WIDGET (self->status_label), css_class);
}

/* ---- Export ---- */

static void
export_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  OwbOutputValues *self = OWB_OUTPUT_VALUES (source);
  g_autoptr (GError) error = NULL;
  const char *path;
  gboolean ok = owb_document_save_tensor_finish (res, &path, &error);
  set_busy (self, FALSE);
  if (self->box == NULL)
    return; /* disposed */
  if (ok)
    {
      g_autofree char *message = g_strdup_printf (_("Saved %s"), path);
      show_status (self, message, NULL);
    }
  else
    {
      g_autofree char *message = g_strdup_printf (_("Could not export: %s"), error->message);
      show_status (self, message, "error");
    }
}

static char *
local_path (GFile *file, OwbOutputValues *self)
{
  char *path = g_file_get_path (file);
  if (path == NULL)
    show_status (self, _("Only local files can be used"), "error");
  return path;
}

void
owb_output_values_export (OwbOutputValues *self, GFile *file)
{
  g_return_if_fail (OWB_IS_OUTPUT_VALUES (self));
  g_return_if_fail (G_IS_FILE (file));
  g_autoptr (GError) error = NULL;
  char *path = owb_page_check_save_target (self->document, file, &error);
  if (path == NULL)
    {
      show_status (self, error->message, "error");
      return;
    }
  set_busy (self, TRUE);
  show_status (self, NULL, NULL);
  /* The job holds the widget until export_done, and its own tensor reference. */
  owb_document_save_tensor_async (self->document, self, self->tensor, self->name, path, FALSE, NULL, export_done,
                                  NULL);
  g_free (path);
}

/* ---- Compare ---- */

typedef struct
{
  gboolean passed;
  OwbTensorComparison comparison;
  char *message; /* why it failed; NULL when it passed */
} CompareResult;

typedef struct
{
  OwbTensor *tensor;
  char *path; /* the reference */
  double rtol, atol;
} CompareJob;

static void
compare_job_free (CompareJob *job)
{
  owb_tensor_unref (job->tensor);
  g_free (job->path);
  g_free (job);
}

static void
compare_result_free (CompareResult *result)
{
  g_free (result->message);
  g_free (result);
}

static void
compare_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  CompareJob *job = data;
  GError *error = NULL;
  g_autoptr (OwbTensor) reference = owb_tensor_load_file (job->path, NULL, &error);
  if (reference == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  CompareResult *result = g_new0 (CompareResult, 1);
  result->passed = owb_tensor_compare (reference, job->tensor, job->rtol, job->atol, &result->comparison,
                                       &result->message);
  g_task_return_pointer (task, result, (GDestroyNotify) compare_result_free);
}

static char *
format_error (double v)
{
  return isinf (v) ? g_strdup ("∞") : g_strdup_printf ("%.3g", v);
}

static void
compare_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  OwbOutputValues *self = OWB_OUTPUT_VALUES (source);
  CompareJob *job = g_task_get_task_data (G_TASK (res));
  g_autoptr (GError) error = NULL;
  CompareResult *result = g_task_propagate_pointer (G_TASK (res), &error);
  set_busy (self, FALSE);
  if (self->box == NULL)
    {
      g_clear_pointer (&result, compare_result_free);
      return;
    }
  g_autofree char *file = g_path_get_basename (job->path);
  if (result == NULL)
    {
      self->has_comparison = FALSE;
      gtk_widget_set_visible (GTK_WIDGET (self->errors_label), FALSE);
      g_autofree char *message = g_strdup_printf (_("Could not read “%s”: %s"), file, error->message);
      show_status (self, message, "error");
      return;
    }
  self->has_comparison = TRUE;
  self->passed = result->passed;
  self->comparison = result->comparison;
  g_autofree char *rtol = g_strdup_printf ("%g", job->rtol);
  g_autofree char *atol = g_strdup_printf ("%g", job->atol);
  g_autofree char *message = NULL;
  if (result->passed)
    /* Translators: "Matches “ref.npy” at rtol 0.001, atol 1e-05" */
    message = g_strdup_printf (_("Matches “%s” at rtol %s, atol %s"), file, rtol, atol);
  else
    /* Translators: "Differs from “ref.npy” at rtol 0.001, atol 1e-05: at index 3: expected …" */
    message = g_strdup_printf (_("Differs from “%s” at rtol %s, atol %s: %s"), file, rtol, atol, result->message);
  show_status (self, message, result->passed ? "success" : "error");
  if (result->comparison.n_elements > 0)
    {
      g_autofree char *abs_text = format_error (result->comparison.max_abs_error);
      g_autofree char *rel_text = format_error (result->comparison.max_rel_error);
      /* Translators: the largest differences from the reference over all elements */
      g_autofree char *errors = g_strdup_printf (_("Largest absolute error %s, largest relative error %s"), abs_text,
                                                 rel_text);
      gtk_label_set_text (self->errors_label, errors);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->errors_label), result->comparison.n_elements > 0);
  compare_result_free (result);
}

static gboolean
read_tolerance (GtkEntry *entry, double *value)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));
  char *end = NULL;
  *value = g_ascii_strtod (text, &end);
  return end != text && *end == '\0' && isfinite (*value) && *value >= 0;
}

void
owb_output_values_compare (OwbOutputValues *self, GFile *file)
{
  g_return_if_fail (OWB_IS_OUTPUT_VALUES (self));
  g_return_if_fail (G_IS_FILE (file));
  double rtol, atol;
  if (!read_tolerance (self->rtol_entry, &rtol) || !read_tolerance (self->atol_entry, &atol))
    {
      show_status (self, _("The tolerances rtol and atol must be numbers of at least 0"), "error");
      return;
    }
  char *path = local_path (file, self);
  if (path == NULL)
    return;
  CompareJob *job = g_new0 (CompareJob, 1);
  job->tensor = owb_tensor_ref (self->tensor);
  job->path = path;
  job->rtol = rtol;
  job->atol = atol;
  set_busy (self, TRUE);
  show_status (self, NULL, NULL);
  g_autoptr (GTask) task = owb_document_new_job (self->document, self, NULL, NULL, compare_done, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) compare_job_free);
  owb_document_run_job (self->document, task, compare_thread);
}

void
owb_output_values_set_tolerance (OwbOutputValues *self, double rtol, double atol)
{
  g_return_if_fail (OWB_IS_OUTPUT_VALUES (self));
  g_autofree char *r = g_strdup_printf ("%g", rtol);
  g_autofree char *a = g_strdup_printf ("%g", atol);
  gtk_editable_set_text (GTK_EDITABLE (self->rtol_entry), r);
  gtk_editable_set_text (GTK_EDITABLE (self->atol_entry), a);
}

/* ---- File choosers ---- */

static void
chooser_response (GtkNativeDialog *dialog, int response, OwbOutputValues *self)
{
  gboolean compare = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (dialog), "owb-compare"));
  g_autoptr (GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)) : NULL;
  owb_page_close_file_chooser (&self->chooser);
  if (file != NULL && compare)
    owb_output_values_compare (self, file);
  else if (file != NULL)
    owb_output_values_export (self, file);
}

static void
export_clicked (OwbOutputValues *self)
{
  if (self->chooser != NULL)
    return;
  g_autofree char *title = g_strdup_printf (_("Export %s"), self->name);
  self->chooser = owb_page_new_file_chooser (GTK_WIDGET (self), title, GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"));
  owb_page_add_file_filter (self->chooser, _("NumPy Array (.npy)"), "*.npy", NULL);
  owb_page_add_file_filter (self->chooser, _("ONNX TensorProto (.pb)"), "*.pb", NULL);
  g_autofree char *suggested = owb_page_dup_value_file_name (self->name, "output", ".npy");
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->chooser), suggested);
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
compare_clicked (OwbOutputValues *self)
{
  if (self->chooser != NULL)
    return;
  g_autofree char *title = g_strdup_printf (_("Reference for %s"), self->name);
  self->chooser = owb_page_new_file_chooser (GTK_WIDGET (self), title, GTK_FILE_CHOOSER_ACTION_OPEN, _("C_ompare"));
  owb_page_add_file_filter (self->chooser, _("Tensor Files (.pb, .npy)"), "*.pb", "*.npy", NULL);
  owb_page_add_file_filter (self->chooser, _("All Files"), "*", NULL);
  g_object_set_data (G_OBJECT (self->chooser), "owb-compare", GINT_TO_POINTER (TRUE));
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

/* ---- Widget ---- */

static GtkWidget *
new_button (const char *mnemonic, const char *tooltip, const char *a11y_format, const char *name)
{
  GtkWidget *button = gtk_button_new_with_mnemonic (mnemonic);
  gtk_widget_set_tooltip_text (button, tooltip);
  g_autofree char *a11y = g_strdup_printf (a11y_format, name);
  gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
  owb_page_keep_own_accessible_name (button);
  return button;
}

static GtkEntry *
new_tolerance_entry (GtkBox *box, const char *label_text, const char *value, const char *a11y_format,
                     const char *name)
{
  GtkWidget *label = gtk_label_new (label_text);
  gtk_widget_add_css_class (label, "dim-label");
  gtk_box_append (box, label);
  GtkWidget *entry = gtk_entry_new ();
  gtk_editable_set_text (GTK_EDITABLE (entry), value);
  gtk_editable_set_width_chars (GTK_EDITABLE (entry), 7);
  gtk_editable_set_max_width_chars (GTK_EDITABLE (entry), 7);
  g_autofree char *a11y = g_strdup_printf (a11y_format, name);
  gtk_accessible_update_property (GTK_ACCESSIBLE (entry), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
  gtk_box_append (box, entry);
  return GTK_ENTRY (entry);
}

GtkWidget *
owb_output_values_new (OwbDocument *document, OwbTensor *tensor, const char *name)
{
  g_return_val_if_fail (OWB_IS_DOCUMENT (document), NULL);
  g_return_val_if_fail (tensor != NULL && tensor->kind == OWB_VALUE_TENSOR, NULL);
  OwbOutputValues *self = g_object_new (OWB_TYPE_OUTPUT_VALUES, NULL);
  self->document = g_object_ref (document);
  self->tensor = owb_tensor_ref (tensor);
  self->name = g_strdup (name);

  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_set_margin_top (self->box, 12);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  gtk_box_append (GTK_BOX (self->box), owb_values_view_new (tensor, name, 2));

  GtkWidget *actions = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_margin_top (actions, 6);
  self->export_button = new_button (_("E_xport…"), _("Save this output as a NumPy .npy or ONNX .pb file"),
                                    _("Export %s"), name);
  g_signal_connect_swapped (self->export_button, "clicked", G_CALLBACK (export_clicked), self);
  gtk_box_append (GTK_BOX (actions), self->export_button);
  self->compare_button = new_button (_("Compare with _Reference…"),
                                     _("Compare with the expected values in a .pb or .npy file, as owb check does"),
                                     _("Compare %s with Reference"), name);
  g_signal_connect_swapped (self->compare_button, "clicked", G_CALLBACK (compare_clicked), self);
  gtk_box_append (GTK_BOX (actions), self->compare_button);
  GtkWidget *spacer = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_set_hexpand (spacer, TRUE);
  gtk_box_append (GTK_BOX (actions), spacer);
  /* owb check's defaults: |got - expected| <= atol + rtol * |expected|. */
  self->rtol_entry = new_tolerance_entry (GTK_BOX (actions), "rtol", "0.001", _("Relative Tolerance for %s"), name);
  self->atol_entry = new_tolerance_entry (GTK_BOX (actions), "atol", "1e-05", _("Absolute Tolerance for %s"), name);
  gtk_box_append (GTK_BOX (self->box), actions);

  self->status_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->status_label, 0);
  gtk_label_set_wrap (self->status_label, TRUE);
  gtk_label_set_wrap_mode (self->status_label, PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (self->status_label, TRUE);
  gtk_widget_set_visible (GTK_WIDGET (self->status_label), FALSE);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->status_label));
  self->errors_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->errors_label, 0);
  gtk_label_set_wrap (self->errors_label, TRUE);
  gtk_label_set_selectable (self->errors_label, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->errors_label), "numeric");
  gtk_widget_set_visible (GTK_WIDGET (self->errors_label), FALSE);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->errors_label));
  return GTK_WIDGET (self);
}

gboolean
owb_output_values_get_busy (OwbOutputValues *self)
{
  g_return_val_if_fail (OWB_IS_OUTPUT_VALUES (self), FALSE);
  return self->n_busy > 0;
}

const char *
owb_output_values_get_status (OwbOutputValues *self)
{
  g_return_val_if_fail (OWB_IS_OUTPUT_VALUES (self), NULL);
  return gtk_widget_get_visible (GTK_WIDGET (self->status_label)) ? gtk_label_get_text (self->status_label) : NULL;
}

gboolean
owb_output_values_get_comparison (OwbOutputValues *self, gboolean *passed, OwbTensorComparison *comparison)
{
  g_return_val_if_fail (OWB_IS_OUTPUT_VALUES (self), FALSE);
  if (!self->has_comparison)
    return FALSE;
  if (passed != NULL)
    *passed = self->passed;
  if (comparison != NULL)
    *comparison = self->comparison;
  return TRUE;
}

static void
owb_output_values_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  OwbOutputValues *self = OWB_OUTPUT_VALUES (object);
  if (prop_id == PROP_BUSY)
    g_value_set_boolean (value, self->n_busy > 0);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
owb_output_values_dispose (GObject *object)
{
  OwbOutputValues *self = OWB_OUTPUT_VALUES (object);
  owb_page_close_file_chooser (&self->chooser);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (owb_output_values_parent_class)->dispose (object);
}

static void
owb_output_values_finalize (GObject *object)
{
  OwbOutputValues *self = OWB_OUTPUT_VALUES (object);
  g_clear_pointer (&self->tensor, owb_tensor_unref);
  g_free (self->name);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (owb_output_values_parent_class)->finalize (object);
}

static void
owb_output_values_class_init (OwbOutputValuesClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->get_property = owb_output_values_get_property;
  object_class->dispose = owb_output_values_dispose;
  object_class->finalize = owb_output_values_finalize;
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "outputvalues");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
owb_output_values_init (OwbOutputValues *self)
{
}
