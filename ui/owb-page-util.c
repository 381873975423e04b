/* owb-page-util.c: helpers the Optimize and Run pages share (accessible names, file choosers,
 * cancelling, following the document). */
#include "owb-page-util.h"

#include <glib/gi18n-lib.h>
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

void
owb_page_cancel (GCancellable **cancellable)
{
  if (*cancellable != NULL)
    g_cancellable_cancel (*cancellable);
  g_clear_object (cancellable);
}

gboolean
owb_page_set_document (gpointer page, OwbDocument **document_slot, gulong *handler, OwbDocument *document,
                       GCallback prepared_cb)
{
  if (*document_slot == document)
    return FALSE;
  if (*document_slot != NULL)
    {
      g_clear_signal_handler (handler, *document_slot);
      g_clear_object (document_slot);
    }
  if (document != NULL)
    {
      *document_slot = g_object_ref (document);
      *handler = g_signal_connect_swapped (document, "notify::prepared", prepared_cb, page);
    }
  return TRUE;
}

gboolean
owb_page_save_widget_png (GtkWidget *widget, const char *path, GError **error)
{
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  GtkNative *native = gtk_widget_get_native (widget);
  if (!gtk_widget_get_mapped (widget) || width <= 0 || height <= 0 || !native)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s", _("Nothing is drawn to export yet"));
      return FALSE;
    }
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  if (!node)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s", _("Nothing is drawn to export yet"));
      return FALSE;
    }
  g_autoptr (GdkTexture) texture = gsk_renderer_render_texture (gtk_native_get_renderer (native), node,
                                                                &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_autoptr (GBytes) png = gdk_texture_save_to_png_bytes (texture);
  gsize size;
  const void *data = g_bytes_get_data (png, &size);
  return owb_file_set_contents_atomic (path, data, size, error);
}
