/* owb-page-util.h: helpers the pages (Optimize, Run, Profile, Quantize), the inspector and the
 * window use alike: controls that keep their own accessible name, the modal file chooser, Save As,
 * lists. What a page is (document, work in flight, error) is OwbPage's (owb-page.h). */
#pragma once

#include <gtk/gtk.h>
#include "owb-document.h"

G_BEGIN_DECLS

/* Drops the labelled-by relation GTK adds to a control that carries its own accessible name. */
void owb_page_keep_own_accessible_name (GtkWidget *widget);

/* A modal native file chooser, transient for the window that holds page (if any). */
GtkFileChooserNative *owb_page_new_file_chooser (GtkWidget *page, const char *title, GtkFileChooserAction action,
                                                 const char *accept_label);
/* Adds a filter called name that matches the glob patterns (NULL-terminated). */
void owb_page_add_file_filter (GtkFileChooserNative *chooser, const char *name, const char *pattern, ...)
  G_GNUC_NULL_TERMINATED;
/* Destroys the chooser in *chooser, if any, and clears the pointer. */
void owb_page_close_file_chooser (GtkFileChooserNative **chooser);

/* A Save As dialog for an ONNX model (modal, transient for page's window, not shown yet) that
 * checks the chosen file before anything else: check (may be NULL) refuses a file (the input
 * model) with an error, shown while the chooser stays open for another name, before the
 * "Replace?" question GTK's own chooser would ask first; then an existing file's replacement is
 * confirmed, then chosen gets the file and the dialog is destroyed. Cancel destroys it. */
typedef gboolean (*OwbSaveCheckFunc) (GFile *file, GError **error, gpointer data);
typedef void (*OwbSaveChosenFunc) (GFile *file, gpointer data);
GtkWidget *owb_page_new_save_dialog (GtkWidget *page, const char *title, GFile *folder, const char *suggested_name,
                                     OwbSaveCheckFunc check, OwbSaveChosenFunc chosen, gpointer data);
/* What the dialog's Save button does (also for tests). The question it asks, if any, is the
 * window in the dialog's "owb-message" data. */
void owb_page_save_dialog_save (GtkWidget *dialog);

/* What an optimization level does, in a sentence ("The model as in the file: nothing is
 * rewritten"), for the header's level and the Optimize page's; borrowed. */
const char *owb_page_describe_level (OwbOptimizeLevel level);

/* Renders widget as it is drawn now, at its size (the tests' pictures are taken this way too).
 * NULL with an error when it is not drawn yet (not mapped, no size, or no picture since its last
 * layout). */
GdkTexture *owb_page_render_widget (GtkWidget *widget, GError **error);
/* The same, written as a PNG completely or not at all (a temporary file renamed). FALSE with an
 * error when it is not drawn or the write fails. */
gboolean owb_page_save_widget_png (GtkWidget *widget, const char *path, GError **error);

/* The one check every Save As and export makes before it writes (owb_output_files_check, as the
 * CLI does): `file` must not be the document's input model nor a file its model reads external
 * data from, whatever the spelling or link (compared by identity). Returns the local path to
 * write (caller frees), or NULL with a translated G_IO_ERROR_EXISTS error (G_IO_ERROR_NOT_SUPPORTED
 * for a file that is not local). document may be NULL (nothing loaded). */
char *owb_page_check_save_target (OwbDocument *document, GFile *file, GError **error);

/* The file name a Save As or export suggests for a value (a tensor, an output) called name:
 * "/encoder/layer.0/weight" → "encoder_layer.0_weight" then extension. Letters, digits, '-', '_'
 * and '.' are kept and every run of other characters becomes one '_'; no '.' or '_' at either end
 * (no hidden file, no ".."), at most 100 characters before the extension; fallback when nothing
 * is left. */
char *owb_page_dup_value_file_name (const char *name, const char *fallback, const char *extension);
/* The file name suggested for a file made from the document's model: the model file's name (its
 * title) without its extension, then suffix ("resnet18.onnx" and "-optimized.onnx" give
 * "resnet18-optimized.onnx"); "model" stands for the name when there is no file. */
char *owb_page_dup_model_file_name (OwbDocument *document, const char *suffix);

/* Shows message (plain text: file names and engine messages may hold '&' or '<') in a toast of the
 * toast overlay that holds widget (or is widget); timeout_s 0 keeps libadwaita's. FALSE when no
 * overlay holds widget. */
gboolean owb_page_toast (GtkWidget *widget, const char *message, guint timeout_s);

/* Removes every row of list. */
void owb_page_list_clear (GtkListBox *list);

G_END_DECLS
