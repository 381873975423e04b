/* owb-page-util.c: helpers the pages and the window share (accessible names, file choosers, Save
 * As, levels described, widgets saved as PNG). */
#include "owb-page-util.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>
#include <string.h>
#include <owb/owb.h>
#include <owb/owb-output-check.h>

/* GTK 4.8 joins the names of a widget's labelled-by widgets to its label property, so a button
 * named "Optimize" whose text says Optimize is read "Optimize Optimize". Controls that carry
 * their own accessible name drop the relation their text label (or their row) adds. */
void
owb_page_keep_own_accessible_name (GtkWidget *widget)
{
  gtk_accessible_reset_relation (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_RELATION_LABELLED_BY);
}

GtkFileChooserNative *
owb_page_new_file_chooser (GtkWidget *page, const char *title, GtkFileChooserAction action, const char *accept_label)
{
  GtkRoot *root = gtk_widget_get_root (page);
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new (title, GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                                               action, accept_label, _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  return chooser;
}

void
owb_page_add_file_filter (GtkFileChooserNative *chooser, const char *name, const char *pattern, ...)
{
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  va_list args;

  gtk_file_filter_set_name (filter, name);
  va_start (args, pattern);
  for (const char *p = pattern; p != NULL; p = va_arg (args, const char *))
    gtk_file_filter_add_pattern (filter, p);
  va_end (args);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
}

void
owb_page_close_file_chooser (GtkFileChooserNative **chooser)
{
  if (*chooser == NULL)
    return;
  gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (*chooser));
  g_clear_object (chooser);
}

const char *
owb_page_describe_level (OwbOptimizeLevel level)
{
  switch (level)
    {
    case OWB_OPTIMIZE_DISABLED:
      return _("Disabled: the model as in the file, nothing rewritten");
    case OWB_OPTIMIZE_BASIC:
      return _("Basic: constants folded, redundant and no-op nodes removed");
    case OWB_OPTIMIZE_EXTENDED:
      return _("Extended: Basic, then fusions (Conv with BatchNorm and activations, MatMul with Add, GELU, LayerNorm, attention)");
    case OWB_OPTIMIZE_LAYOUT:
      return _("Layout: Extended, then the data layouts the CPU kernels prefer (NHWC)");
    case OWB_OPTIMIZE_ALL:
    default:
      return _("All: every pass");
    }
}

/* ---- Save As ---- */

/* Not GTK_RESPONSE_ACCEPT: for that one GTK's chooser asks "Replace?" itself, before its
 * response, so a refusal of the input model would only come after the user agreed to replace it. */
#define SAVE_RESPONSE 1

typedef struct {
  OwbSaveCheckFunc check;
  OwbSaveChosenFunc chosen;
  gpointer data;
} SaveDialog;

static void
save_dialog_finish (GtkWidget *dialog, GFile *file)
{
  SaveDialog *sd = g_object_get_data (G_OBJECT (dialog), "owb-save-dialog");
  g_object_ref (file);
  gtk_widget_set_visible (dialog, FALSE);
  sd->chosen (file, sd->data);
  g_object_unref (file);
  gtk_window_destroy (GTK_WINDOW (dialog));
}

static gboolean
finish_replace (gpointer data)
{
  GtkWidget *dialog = data;
  GFile *file = g_object_get_data (G_OBJECT (dialog), "owb-replace-file");
  save_dialog_finish (dialog, file);
  g_object_unref (dialog);
  return G_SOURCE_REMOVE;
}

static void
replace_response (AdwMessageDialog *message, const char *response, GtkWidget *dialog)
{
  if (g_strcmp0 (response, "replace") != 0)
    return;
  /* After the question has closed: destroying the chooser now would take the question, which
   * is transient for it, away in the middle of its own response. */
  GFile *file = g_object_get_data (G_OBJECT (message), "owb-file");
  g_object_set_data_full (G_OBJECT (dialog), "owb-replace-file", g_object_ref (file), g_object_unref);
  g_object_set_data (G_OBJECT (dialog), "owb-message", NULL);
  g_idle_add (finish_replace, g_object_ref (dialog));
}

static GtkWidget *
message_dialog (GtkWidget *dialog, const char *heading, const char *body)
{
  GtkWidget *message = adw_message_dialog_new (GTK_WINDOW (dialog), heading, body);
  gtk_window_set_modal (GTK_WINDOW (message), TRUE);
  gtk_window_present (GTK_WINDOW (message));
  return message;
}

void
owb_page_save_dialog_save (GtkWidget *dialog)
{
  SaveDialog *sd = g_object_get_data (G_OBJECT (dialog), "owb-save-dialog");
  g_return_if_fail (sd != NULL);
  g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
  if (file == NULL)
    return;
  /* First whether the file may be written at all; the chooser stays open for another name. */
  g_autoptr (GError) error = NULL;
  if (sd->check && !sd->check (file, &error, sd->data))
    {
      GtkWidget *message = message_dialog (dialog, _("Cannot Save Here"), error->message);
      g_object_set_data (G_OBJECT (dialog), "owb-message", message);
      adw_message_dialog_add_response (ADW_MESSAGE_DIALOG (message), "close", _("_Choose Another Name"));
      return;
    }
  if (g_file_query_exists (file, NULL))
    {
      g_autofree char *name = g_file_get_basename (file);
      g_autofree char *heading = g_strdup_printf (_("Replace “%s”?"), name);
      GtkWidget *message = message_dialog (dialog, heading,
                                           _("A file with this name already exists. Replacing it overwrites its contents."));
      g_object_set_data (G_OBJECT (dialog), "owb-message", message);
      adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (message), "cancel", _("_Cancel"), "replace", _("_Replace"), NULL);
      adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (message), "replace", ADW_RESPONSE_DESTRUCTIVE);
      g_object_set_data_full (G_OBJECT (message), "owb-file", g_object_ref (file), g_object_unref);
      g_signal_connect (message, "response", G_CALLBACK (replace_response), dialog);
      return;
    }
  save_dialog_finish (dialog, file);
}

static void
save_dialog_response (GtkDialog *dialog, int response, gpointer data)
{
  if (response == SAVE_RESPONSE || response == GTK_RESPONSE_ACCEPT)
    owb_page_save_dialog_save (GTK_WIDGET (dialog));
  else
    gtk_window_destroy (GTK_WINDOW (dialog));
}

GtkWidget *
owb_page_new_save_dialog (GtkWidget *page, const char *title, GFile *folder, const char *suggested_name,
                          OwbSaveCheckFunc check, OwbSaveChosenFunc chosen, gpointer data)
{
  GtkRoot *root = gtk_widget_get_root (page);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  GtkWidget *dialog = gtk_file_chooser_dialog_new (title, GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                                   GTK_FILE_CHOOSER_ACTION_SAVE, _("_Cancel"), GTK_RESPONSE_CANCEL,
                                                   _("_Save"), SAVE_RESPONSE, NULL);
  gtk_dialog_set_default_response (GTK_DIALOG (dialog), SAVE_RESPONSE);
  G_GNUC_END_IGNORE_DEPRECATIONS
  gtk_window_set_modal (GTK_WINDOW (dialog), TRUE);
  SaveDialog *sd = g_new0 (SaveDialog, 1);
  sd->check = check;
  sd->chosen = chosen;
  sd->data = data;
  g_object_set_data_full (G_OBJECT (dialog), "owb-save-dialog", sd, g_free);
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _("ONNX Models"));
  gtk_file_filter_add_pattern (filter, "*.onnx");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);
  if (folder)
    gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), folder, NULL);
  if (suggested_name)
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), suggested_name);
  g_signal_connect (dialog, "response", G_CALLBACK (save_dialog_response), NULL);
  return dialog;
}

char *
owb_page_check_save_target (OwbDocument *document, GFile *file, GError **error)
{
  g_autofree char *path = g_file_get_path (file);
  if (path == NULL)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("Cannot save to “%s”: only local files are supported"),
                   uri);
      return NULL;
    }
  GFile *input = document != NULL ? owb_document_get_file (document) : NULL;
  g_autofree char *input_path = input != NULL ? g_file_get_path (input) : NULL;
  OwbOutputFile out = { "Save As", path };
  g_autoptr (GError) clash = NULL;
  gboolean ok = owb_output_files_check (input_path, NULL, document != NULL ? owb_document_get_model (document) : NULL, &out, 1, &clash);
  g_autofree char *name = g_file_get_parse_name (file);
  OwbOutputClash kind = out.clash;
  g_autofree char *clash_path = g_strdup (out.clash_path);
  owb_output_files_clear (&out, 1);
  if (ok)
    return g_steal_pointer (&path);
  if (kind == OWB_OUTPUT_CLASH_INPUT)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                 _("Refusing to save over the input model “%s”: choose another file name"), name);
  else if (kind == OWB_OUTPUT_CLASH_EXTERNAL_DATA)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                 _("Refusing to save over “%s”, an external data file of the input model: choose another file name"),
                 clash_path);
  else
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot save to “%s”: %s"), name, clash->message);
  return NULL;
}

char *
owb_page_dup_value_file_name (const char *name, const char *fallback, const char *extension)
{
  GString *s = g_string_new (NULL);
  for (const char *p = name; *p && s->len < 100; p++)
    {
      gboolean ok = g_ascii_isalnum (*p) || *p == '-' || *p == '_' || *p == '.';
      if (ok)
        g_string_append_c (s, *p);
      else if (s->len && s->str[s->len - 1] != '_')
        g_string_append_c (s, '_');
    }
  while (s->len && (s->str[0] == '.' || s->str[0] == '_'))
    g_string_erase (s, 0, 1);
  while (s->len && (s->str[s->len - 1] == '.' || s->str[s->len - 1] == '_'))
    g_string_truncate (s, s->len - 1);
  if (s->len == 0)
    g_string_append (s, fallback);
  g_string_append (s, extension);
  return g_string_free (s, FALSE);
}

char *
owb_page_dup_model_file_name (OwbDocument *document, const char *suffix)
{
  /* The title is the file's display name: UTF-8, as the chooser wants it. */
  const char *title = document != NULL ? owb_document_get_title (document) : NULL;
  g_autofree char *base = g_strdup (title != NULL ? title : "model");
  /* "resnet18.onnx" → "resnet18"; a name that is all extension (".onnx") stays */
  char *dot = strrchr (base, '.');
  if (dot != NULL && dot != base)
    *dot = '\0';
  return g_strconcat (base, suffix, NULL);
}

gboolean
owb_page_toast (GtkWidget *widget, const char *message, guint timeout_s)
{
  GtkWidget *overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY);
  if (overlay == NULL)
    return FALSE;
  /* libadwaita 1.2 parses every toast title as markup. */
  g_autofree char *escaped = g_markup_escape_text (message, -1);
  AdwToast *toast = adw_toast_new (escaped);
  if (timeout_s > 0)
    adw_toast_set_timeout (toast, timeout_s);
  adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), toast);
  return TRUE;
}

void
owb_page_list_clear (GtkListBox *list)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (list))))
    gtk_list_box_remove (list, child);
}

GdkTexture *
owb_page_render_widget (GtkWidget *widget, GError **error)
{
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  GtkNative *native = gtk_widget_get_native (widget);
  if (!gtk_widget_get_mapped (widget) || width <= 0 || height <= 0 || !native)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s", _("Nothing is drawn to export yet"));
      return NULL;
    }
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  if (!node)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s", _("Nothing is drawn to export yet"));
      return NULL;
    }
  return gsk_renderer_render_texture (gtk_native_get_renderer (native), node, &GRAPHENE_RECT_INIT (0, 0, width, height));
}

gboolean
owb_page_save_widget_png (GtkWidget *widget, const char *path, GError **error)
{
  g_autoptr (GdkTexture) texture = owb_page_render_widget (widget, error);
  if (!texture)
    return FALSE;
  g_autoptr (GBytes) png = gdk_texture_save_to_png_bytes (texture);
  gsize size;
  const void *data = g_bytes_get_data (png, &size);
  return owb_file_set_contents_atomic (path, data, size, error);
}
