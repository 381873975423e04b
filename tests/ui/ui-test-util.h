/* ui-test-util.h: what the tests of the pages share: waiting on the main loop for a condition,
 * loading and preparing a document, and finding widgets in a tree. Everything is static inline, so
 * that a test that uses a part does not warn about the rest. */
#pragma once

#include <adwaita.h>
#include <string.h>

#include "owb-application.h"
#include "owb-document.h"
#include "owb-graph-layer.h"
#include "owb-page.h"
#include "owb-page-util.h"

/* ---- The main loop ---- */

typedef gboolean (*Condition) (gpointer data);

/* The longest main-loop iteration wait_for and settle ran: test-pages checks that long work stays
 * off the main thread. */
static gint64 longest_iteration_us G_GNUC_UNUSED;

static inline void
iterate_main_loop (void)
{
  gint64 start = g_get_monotonic_time ();
  g_main_context_iteration (NULL, FALSE);
  longest_iteration_us = MAX (longest_iteration_us, g_get_monotonic_time () - start);
}

/* Runs the main loop until cond (data) holds; a test error ("timed out waiting for what") after
 * timeout_s seconds. */
static inline void
wait_for (Condition cond, gpointer data, double timeout_s, const char *what)
{
  gint64 end = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);
  while (!cond (data))
    {
      if (g_get_monotonic_time () > end)
        g_error ("timed out waiting for %s", what);
      iterate_main_loop ();
      g_usleep (1000);
    }
}

/* Runs the main loop for `seconds`: lets the frame clock lay out and paint what changed. */
static inline void
settle (double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time () < end)
    {
      iterate_main_loop ();
      g_usleep (2000);
    }
}

static inline gboolean
widget_mapped (gpointer data)
{
  return gtk_widget_get_mapped (data) && gtk_widget_get_width (data) > 0;
}

/* widget as it is drawn now, through the app's own owb_page_render_widget; the test fails where
 * nothing is drawn. */
static inline GdkTexture *
render_texture (GtkWidget *widget)
{
  g_autoptr (GError) error = NULL;
  GdkTexture *texture = owb_page_render_widget (widget, &error);
  g_assert_no_error (error);
  return texture;
}

static inline gboolean
page_idle (gpointer page)
{
  return !owb_page_get_busy (OWB_PAGE (page));
}

/* Handlers of a page's signals, connected swapped with the slot as data: "node-activated" keeps
 * the node's name, "show-layer" a reference on the layer. */
static inline void
remember_name (char **slot, const char *name, gboolean reveal)
{
  g_free (*slot);
  *slot = g_strdup (name);
}

static inline void
remember_layer (OwbGraphLayer **slot, OwbGraphLayer *layer)
{
  g_clear_pointer (slot, owb_graph_layer_unref);
  *slot = layer ? owb_graph_layer_ref (layer) : NULL;
}

/* The application as the window tests run it: non-unique, registered (so its startup ran: actions,
 * accelerators) and held, so that windows may come and go as under g_application_run. */
static inline GtkApplication *
test_application_new (void)
{
  GtkApplication *app = GTK_APPLICATION (owb_application_new ());
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr (GError) error = NULL;
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    g_error ("cannot register the application: %s", error->message);
  g_application_hold (G_APPLICATION (app));
  return app;
}

/* ---- Documents ---- */

/* An asynchronous call's result, for wait_done. */
typedef struct {
  gboolean done, ok;
  GError *error;
} Wait;

static inline gboolean
wait_done (gpointer data)
{
  return ((Wait *) data)->done;
}

static inline void
load_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Wait *w = data;
  w->ok = owb_document_load_finish (OWB_DOCUMENT (source), res, &w->error);
  w->done = TRUE;
}

static inline void
prepare_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  Wait *w = data;
  w->ok = owb_document_prepare_finish (OWB_DOCUMENT (source), res, &w->error);
  w->done = TRUE;
}

static inline gboolean
prepared_ready (gpointer data)
{
  OwbDocument *doc = data;
  return !owb_document_get_preparing (doc) && !owb_prepared_is_pending (owb_document_get_prepared (doc));
}

/* $OWB_SOURCE_ROOT/data/samples/name. */
static inline char *
sample_path (const char *name)
{
  const char *root = g_getenv ("OWB_SOURCE_ROOT");
  g_assert_nonnull (root);
  return g_build_filename (root, "data", "samples", name, NULL);
}

/* A new document of the model at path, loaded and its session prepared (the load shows the model at
 * once and prepares the session behind it). */
static inline OwbDocument *
load_document (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_path (path);
  OwbDocument *doc = owb_document_new ();
  Wait w = { 0 };
  owb_document_load_async (doc, file, NULL, load_cb, &w);
  wait_for (wait_done, &w, 60, "the document to load");
  g_assert_no_error (w.error);
  g_assert_true (w.ok);
  g_assert_nonnull (owb_document_get_model (doc));
  g_assert_nonnull (owb_document_get_prepared (doc));
  wait_for (prepared_ready, doc, 60, "the session to be prepared");
  return doc;
}

/* The bundled sample, tiny-cnn.onnx, loaded and prepared. */
static inline OwbDocument *
load_sample (void)
{
  g_autofree char *path = sample_path ("tiny-cnn.onnx");
  return load_document (path);
}

/* Prepares doc's session again at level on providers, and waits for it. */
static inline void
prepare_document (OwbDocument *doc, OwbOptimizeLevel level, const char *providers)
{
  Wait w = { 0 };
  owb_document_prepare_async (doc, level, providers, NULL, prepare_cb, &w);
  wait_for (wait_done, &w, 60, "the document to prepare");
  g_assert_no_error (w.error);
  g_assert_true (w.ok);
}

/* ---- The widget tree ---- */

typedef gboolean (*Match) (GtkWidget *widget, gconstpointer data);

static inline void
collect (GtkWidget *widget, Match match, gconstpointer data, GPtrArray *out)
{
  if (match (widget, data))
    g_ptr_array_add (out, widget);
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL; child = gtk_widget_get_next_sibling (child))
    collect (child, match, data, out);
}

/* Every widget below root (root too) that matches, in tree order. */
static inline GPtrArray *
find_all (GtkWidget *root, Match match, gconstpointer data)
{
  GPtrArray *out = g_ptr_array_new ();
  collect (root, match, data, out);
  return out;
}

static inline guint
count (GtkWidget *root, Match match, gconstpointer data)
{
  g_autoptr (GPtrArray) all = find_all (root, match, data);
  return all->len;
}

/* The first match, or NULL. */
static inline GtkWidget *
find_one (GtkWidget *root, Match match, gconstpointer data)
{
  g_autoptr (GPtrArray) all = find_all (root, match, data);
  return all->len > 0 ? g_ptr_array_index (all, 0) : NULL;
}

/* data: a GType, as GSIZE_TO_POINTER (type). */
static inline gboolean
match_type (GtkWidget *widget, gconstpointer data)
{
  return G_TYPE_CHECK_INSTANCE_TYPE (widget, GPOINTER_TO_SIZE (data));
}

static inline gboolean
match_label (GtkWidget *widget, gconstpointer data)
{
  return GTK_IS_LABEL (widget) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (widget)), data) == 0;
}

static inline gboolean
match_label_containing (GtkWidget *widget, gconstpointer data)
{
  return GTK_IS_LABEL (widget) && strstr (gtk_label_get_text (GTK_LABEL (widget)), data) != NULL;
}

static inline gboolean
match_row_title (GtkWidget *widget, gconstpointer data)
{
  return ADW_IS_PREFERENCES_ROW (widget)
         && g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (widget)), data) == 0;
}
