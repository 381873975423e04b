/* test-pages.c: the Optimize and Run pages, and what every page is (OwbPage), on the bundled
 * sample, in a window under Xvfb. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owb-document.h"
#include "owb-graph-view.h"
#include "owb-optimize-page.h"
#include "owb-output-values.h"
#include "owb-page-util.h"
#include "owb-profile-page.h"
#include "owb-quantize-page.h"
#include "owb-resources.h"
#include "owb-run-page.h"
#include "ui-test-util.h"
#include <owb/owb-tensor-stats.h>

/* ---- The document ---- */

/* ---- Widget tree ---- */

static gboolean
match_expander_title (GtkWidget *widget, gconstpointer data)
{
  return ADW_IS_EXPANDER_ROW (widget) && match_row_title (widget, data);
}

static gboolean
match_row_title_prefix (GtkWidget *widget, gconstpointer data)
{
  return ADW_IS_PREFERENCES_ROW (widget)
         && g_str_has_prefix (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (widget)), data);
}

/* A visible widget: itself and every ancestor shown. */
static gboolean
is_shown (GtkWidget *widget)
{
  for (; widget != NULL; widget = gtk_widget_get_parent (widget))
    if (!gtk_widget_get_visible (widget))
      return FALSE;
  return TRUE;
}

/* ---- Rendering ---- */

static void
render_to_png (GtkWidget *widget, const char *name)
{
  wait_for (widget_mapped, widget, 10, "the widget to be mapped");
  settle (0.5);
  g_autoptr (GdkTexture) texture = render_texture (widget);
  const char *dir = g_getenv ("OWB_TEST_PNG_DIR");
  g_autofree char *path = g_build_filename (dir != NULL ? dir : g_get_tmp_dir (), name, NULL);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("rendered %s", path);
}

static GtkWidget *
show_in_window (GtkWidget *page, int width, int height)
{
  GtkWidget *window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  GtkWidget *overlay = adw_toast_overlay_new ();
  adw_toast_overlay_set_child (ADW_TOAST_OVERLAY (overlay), page);
  gtk_window_set_child (GTK_WINDOW (window), overlay);
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

/* ---- Optimize page ---- */

static gboolean
optimize_idle (gpointer page)
{
  return !owb_page_get_busy (OWB_PAGE (page));
}

static gboolean
views_idle (gpointer page)
{
  g_autoptr (GPtrArray) views = find_all (page, match_type, GSIZE_TO_POINTER (OWB_TYPE_GRAPH_VIEW));
  for (guint i = 0; i < views->len; i++)
    if (owb_graph_view_get_busy (g_ptr_array_index (views, i))
        || !owb_graph_view_has_scene (g_ptr_array_index (views, i)))
      return FALSE;
  return views->len == 2;
}

static gboolean
pass_changed (const OwbPassReport *pass)
{
  return pass->removed->len > 0 || pass->created->len > 0 || pass->n_removed_initializers > 0;
}

/* Opens every pass result row, as a user does to see the created nodes (rows are made on
 * first opening, a batch per main-loop turn). */
static void
expand_results (GtkWidget *page)
{
  g_autoptr (GPtrArray) rows = find_all (page, match_type, GSIZE_TO_POINTER (ADW_TYPE_EXPANDER_ROW));
  for (guint i = 0; i < rows->len; i++)
    if (g_strcmp0 (adw_preferences_row_get_title (g_ptr_array_index (rows, i)), "Passes") != 0)
      adw_expander_row_set_expanded (g_ptr_array_index (rows, i), TRUE);
  settle (0.3);
}

static gboolean
saved_by_button (gpointer page)
{
  GtkWidget *label = find_one (page, match_label_containing, "by-button.onnx");
  return label != NULL && is_shown (label) && !owb_page_get_busy (OWB_PAGE (page));
}

typedef struct
{
  GtkWidget *dialog;
  GFile *want;
} ChooserWait;

static gboolean
chooser_shows (gpointer data)
{
  ChooserWait *w = data;
  g_autoptr (GFile) chosen = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (w->dialog));
  return chosen != NULL && g_file_equal (chosen, w->want);
}

static gboolean
find_chooser (gpointer data)
{
  GListModel *toplevels = gtk_window_get_toplevels (); /* borrowed */
  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GObject) window = g_list_model_get_item (toplevels, i);
      if (GTK_IS_FILE_CHOOSER_DIALOG (window) && gtk_widget_get_visible (GTK_WIDGET (window)))
        {
          *(GtkWidget **) data = GTK_WIDGET (window);
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
chooser_gone (gpointer data)
{
  GtkWidget *dialog = NULL;
  return !find_chooser (&dialog);
}

static void
assert_strv_set (char **got, const char *const *want)
{
  g_assert_nonnull (got);
  g_assert_cmpuint (g_strv_length (got), ==, g_strv_length ((char **) want));
  for (guint i = 0; want[i] != NULL; i++)
    g_assert_true (g_strv_contains ((const char *const *) got, want[i]));
}

static void
test_optimize (void)
{
  g_autoptr (OwbDocument) doc = load_sample ();
  GtkWidget *page = owb_optimize_page_new ();
  GtkWidget *window = show_in_window (page, 1400, 900);
  owb_page_set_document (OWB_PAGE (page), doc);

  /* Nothing to save before a run. */
  g_autoptr (GError) early = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("owb-test-pages-XXXXXX", NULL);
  g_autofree char *early_path = g_build_filename (tmp, "early.onnx", NULL);
  g_autoptr (GFile) early_file = g_file_new_for_path (early_path);
  g_assert_false (owb_optimize_page_save_to (OWB_OPTIMIZE_PAGE (page), early_file, &early));
  g_assert_nonnull (early);

  /* Choose "Extended" the way a user does: in the level dropdown. */
  GtkWidget *dropdown = find_one (page, match_type, GSIZE_TO_POINTER (GTK_TYPE_DROP_DOWN));
  g_assert_nonnull (dropdown);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (dropdown), 1);
  owb_optimize_page_run (OWB_OPTIMIZE_PAGE (page));
  g_assert_true (owb_page_get_busy (OWB_PAGE (page)));
  wait_for (optimize_idle, page, 60, "the optimizer");

  const OwbOptimizeReport *report = owb_optimize_page_get_report (OWB_OPTIMIZE_PAGE (page));
  g_assert_nonnull (report);
  g_assert_cmpint (report->level, ==, OWB_OPTIMIZE_EXTENDED);
  g_assert_cmpuint (report->nodes_before, ==, owb_document_get_model (doc)->graph->nodes->len);
  g_assert_cmpuint (report->nodes_after, <=, report->nodes_before);
  /* Conv+BN and two Conv+Relu fusions: 10 nodes become 7. */
  g_assert_cmpuint (report->nodes_after, ==, 7);
  OwbModel *optimized = owb_optimize_page_get_optimized_model (OWB_OPTIMIZE_PAGE (page));
  g_assert_cmpuint (optimized->graph->nodes->len, ==, report->nodes_after);
  /* The document's model is never touched. */
  g_assert_cmpuint (owb_document_get_model (doc)->graph->nodes->len, ==, 10);

  g_autofree char *summary = g_strdup_printf ("%u nodes → %u nodes", report->nodes_before, report->nodes_after);
  GtkWidget *summary_label = find_one (page, match_label_containing, summary);
  g_assert_nonnull (summary_label);
  g_assert_true (is_shown (summary_label));

  /* A row per pass that changed the graph, none for passes that did nothing. */
  guint n_fired = 0;
  for (guint p = 0; p < report->passes->len; p++)
    {
      const OwbPassReport *pass = g_ptr_array_index (report->passes, p);
      guint rows = count (page, match_expander_title, pass->pass);
      if (pass_changed (pass))
        {
          n_fired++;
          g_assert_cmpuint (rows, ==, 1);
        }
      else if (pass->near_misses->len == 0)
        g_assert_cmpuint (rows, ==, 0);
    }
  g_assert_cmpuint (n_fired, >=, 2);

  /* Created-node rows name the original nodes, following the chain conv1+bn1 → conv1, +relu1. */
  g_assert_null (find_one (page, match_label_containing, "FusedConv ‘conv1’ ← conv1, bn1, relu1"));
  expand_results (page);
  g_assert_nonnull (find_one (page, match_label_containing, "FusedConv ‘conv1’ ← conv1, bn1, relu1"));
  g_assert_nonnull (find_one (page, match_label_containing, "FusedConv ‘conv2’ ← conv2, relu2"));
  g_auto (GStrv) origins = owb_optimize_page_dup_origins (OWB_OPTIMIZE_PAGE (page), "conv1");
  assert_strv_set (origins, (const char *const[]) { "conv1", "bn1", "relu1", NULL });
  g_assert_null (owb_optimize_page_dup_origins (OWB_OPTIMIZE_PAGE (page), "softmax"));

  /* Provenance on the canvas: selecting the fused node highlights what it replaced. */
  wait_for (views_idle, page, 60, "both graphs to be laid out");
  g_autoptr (GPtrArray) views = find_all (page, match_type, GSIZE_TO_POINTER (OWB_TYPE_GRAPH_VIEW));
  OwbGraphView *original_view = g_ptr_array_index (views, 0);
  OwbGraphView *optimized_view = g_ptr_array_index (views, 1);
  g_assert_true (owb_graph_view_get_graph (original_view) == owb_document_get_model (doc)->graph);
  g_assert_true (owb_graph_view_get_graph (optimized_view) == optimized->graph);
  owb_graph_view_select_node (optimized_view, owb_graph_find_node (optimized->graph, "conv1"));
  settle (0.1);
  g_assert_cmpuint (owb_graph_view_get_n_highlighted (original_view), ==, 3);
  g_assert_nonnull (owb_graph_view_get_selected_node (original_view));
  g_assert_true (g_strv_contains ((const char *const[]) { "conv1", "bn1", "relu1", NULL },
                                  owb_graph_view_get_selected_node (original_view)->name));
  /* A node no pass made points at itself, highlighting nothing. */
  owb_graph_view_select_node (optimized_view, owb_graph_find_node (optimized->graph, "softmax"));
  settle (0.1);
  g_assert_cmpuint (owb_graph_view_get_n_highlighted (original_view), ==, 0);
  g_assert_cmpstr (owb_graph_view_get_selected_node (original_view)->name, ==, "softmax");
  /* Clicking a created-node row does the same as selecting the node. */
  GtkWidget *row_label = find_one (page, match_label_containing, "FusedConv ‘conv2’");
  g_signal_emit_by_name (gtk_widget_get_ancestor (row_label, GTK_TYPE_BUTTON), "clicked");
  settle (0.1);
  g_assert_cmpuint (owb_graph_view_get_n_highlighted (original_view), ==, 2);
  g_assert_true (g_strv_contains ((const char *const[]) { "conv2", "relu2", NULL },
                                  owb_graph_view_get_selected_node (original_view)->name));

  render_to_png (page, "test-pages-optimize.png");

  /* Save, and read the file back. */
  g_autofree char *out_path = g_build_filename (tmp, "tiny-cnn-optimized.onnx", NULL);
  g_autoptr (GFile) out_file = g_file_new_for_path (out_path);
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_optimize_page_save_to (OWB_OPTIMIZE_PAGE (page), out_file, &error));
  g_assert_no_error (error);
  g_autoptr (OwbModel) reloaded = owb_model_load_file (out_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (reloaded->graph->nodes->len, ==, report->nodes_after);
  g_assert_nonnull (find_one (page, match_label_containing, "Saved to"));

  /* Never over the input file: not by its path, nor through a symbolic link to it. */
  GFile *input = owb_document_get_file (doc);
  g_autofree char *input_path = g_file_get_path (input);
  g_autofree char *before = NULL;
  gsize before_len = 0;
  g_assert_true (g_file_get_contents (input_path, &before, &before_len, NULL));
  g_autoptr (GError) refused = NULL;
  g_assert_false (owb_optimize_page_save_to (OWB_OPTIMIZE_PAGE (page), input, &refused));
  g_assert_error (refused, G_IO_ERROR, G_IO_ERROR_EXISTS);
  g_assert_nonnull (find_one (page, match_label_containing, "Refusing to save over the input model"));
  g_autofree char *link_path = g_build_filename (tmp, "link.onnx", NULL);
  g_assert_cmpint (symlink (input_path, link_path), ==, 0);
  g_autoptr (GFile) link_file = g_file_new_for_path (link_path);
  g_autoptr (GError) refused_link = NULL;
  g_assert_false (owb_optimize_page_save_to (OWB_OPTIMIZE_PAGE (page), link_file, &refused_link));
  g_assert_error (refused_link, G_IO_ERROR, G_IO_ERROR_EXISTS);
  g_autofree char *after = NULL;
  gsize after_len = 0;
  g_assert_true (g_file_get_contents (input_path, &after, &after_len, NULL));
  g_assert_cmpmem (before, before_len, after, after_len);

  /* The Save As… button: a file chooser suggesting "<name>-optimized.onnx", then a save in a
   * worker thread. (Without a portal the native chooser is a GtkFileChooserDialog.) */
  GtkWidget *save_button = NULL;
  {
    g_autoptr (GPtrArray) buttons = find_all (page, match_type, GSIZE_TO_POINTER (GTK_TYPE_BUTTON));
    for (guint i = 0; i < buttons->len; i++)
      if (g_strcmp0 (gtk_button_get_label (g_ptr_array_index (buttons, i)), "_Save As…") == 0)
        save_button = g_ptr_array_index (buttons, i);
  }
  g_assert_nonnull (save_button);
  g_assert_true (gtk_widget_get_sensitive (save_button));
  g_signal_emit_by_name (save_button, "clicked");
  GtkWidget *dialog = NULL;
  wait_for (find_chooser, &dialog, 20, "the file chooser");
  /* It opens beside the input, on the suggested name; the chooser loads the folder
   * asynchronously, and changing it before that is done mixes the two. */
  g_autoptr (GFile) input_folder = g_file_get_parent (owb_document_get_file (doc));
  g_autoptr (GFile) suggested_file = g_file_get_child (input_folder, "tiny-cnn-optimized.onnx");
  ChooserWait suggested_wait = { dialog, suggested_file };
  wait_for (chooser_shows, &suggested_wait, 30, "the chooser to suggest a name beside the input");
  g_autofree char *button_path = g_build_filename (tmp, "by-button.onnx", NULL);
  g_autoptr (GFile) button_file = g_file_new_for_path (button_path);
  g_autoptr (GFile) tmp_folder = g_file_new_for_path (tmp);
  g_assert_true (gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), tmp_folder, NULL));
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), "by-button.onnx");
  /* The chooser changes folder asynchronously. */
  ChooserWait chooser_wait = { dialog, button_file };
  wait_for (chooser_shows, &chooser_wait, 30, "the chooser to show the temporary folder");
  g_signal_emit_by_name (gtk_dialog_get_widget_for_response (GTK_DIALOG (dialog), 1), "clicked");
  wait_for (saved_by_button, page, 60, "the save");
  g_autoptr (OwbModel) by_button = owb_model_load_file (button_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (by_button->graph->nodes->len, ==, report->nodes_after);
  g_unlink (button_path);

  /* Save As over the input: refused when the dialog returns, before any "Replace?" question,
   * with the chooser left open for another name. */
  g_signal_emit_by_name (save_button, "clicked");
  dialog = NULL;
  wait_for (find_chooser, &dialog, 20, "the file chooser");
  ChooserWait again = { dialog, suggested_file };
  wait_for (chooser_shows, &again, 30, "the chooser to suggest a name beside the input");
  g_autofree char *input_name = g_file_get_basename (input);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), input_name);
  ChooserWait input_wait = { dialog, input };
  wait_for (chooser_shows, &input_wait, 30, "the chooser to name the input");
  GtkWidget *save_response = gtk_dialog_get_widget_for_response (GTK_DIALOG (dialog), 1);
  g_assert_nonnull (save_response);
  g_signal_emit_by_name (save_response, "clicked");
  GtkWidget *message = g_object_get_data (G_OBJECT (dialog), "owb-message");
  g_assert_nonnull (message);
  g_assert_cmpstr (adw_message_dialog_get_heading (ADW_MESSAGE_DIALOG (message)), ==, "Cannot Save Here");
  g_assert_nonnull (strstr (adw_message_dialog_get_body (ADW_MESSAGE_DIALOG (message)),
                            "Refusing to save over the input model"));
  g_assert_true (gtk_widget_get_visible (dialog));
  gtk_window_destroy (GTK_WINDOW (message));
  /* Another file that exists: the dialog asks, and replacing it saves there. */
  g_autoptr (GFile) out_folder = g_file_get_parent (out_file);
  g_assert_true (gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), out_folder, NULL));
  g_autofree char *out_name = g_file_get_basename (out_file);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), out_name);
  ChooserWait out_wait = { dialog, out_file };
  wait_for (chooser_shows, &out_wait, 30, "the chooser to name the earlier save");
  g_signal_emit_by_name (save_response, "clicked");
  message = g_object_get_data (G_OBJECT (dialog), "owb-message");
  g_assert_nonnull (message);
  g_autofree char *replace_heading = g_strdup_printf ("Replace “%s”?", out_name);
  g_assert_cmpstr (adw_message_dialog_get_heading (ADW_MESSAGE_DIALOG (message)), ==, replace_heading);
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (message), "replace");
  wait_for (chooser_gone, NULL, 20, "the chooser to close");
  wait_for (optimize_idle, page, 60, "the save over the earlier file");
  g_autoptr (OwbModel) replaced = owb_model_load_file (out_path, &error);
  g_assert_no_error (error);

  /* A pass switched off does not run: without Conv+Relu fusion only Conv+BN fires (10 → 9). */
  GtkWidget *pass_row = NULL;
  {
    g_autoptr (GPtrArray) rows = find_all (page, match_row_title, "fuse_activation");
    for (guint i = 0; i < rows->len && pass_row == NULL; i++)
      if (find_one (g_ptr_array_index (rows, i), match_type, GSIZE_TO_POINTER (GTK_TYPE_SWITCH)) != NULL)
        pass_row = g_ptr_array_index (rows, i);
  }
  g_assert_nonnull (pass_row);
  GtkWidget *pass_switch = find_one (pass_row, match_type, GSIZE_TO_POINTER (GTK_TYPE_SWITCH));
  gtk_switch_set_active (GTK_SWITCH (pass_switch), FALSE);
  owb_optimize_page_run (OWB_OPTIMIZE_PAGE (page));
  wait_for (optimize_idle, page, 60, "the optimizer");
  report = owb_optimize_page_get_report (OWB_OPTIMIZE_PAGE (page));
  g_assert_cmpuint (report->nodes_after, ==, 9);
  expand_results (page);
  g_assert_null (find_one (page, match_label_containing, "FusedConv"));
  g_assert_cmpuint (count (page, match_expander_title, "fuse_activation"), ==, 0);
  g_assert_nonnull (find_one (page, match_label_containing, "Conv ‘conv1’ ← conv1, bn1"));

  /* Cancel: the result is dropped and the page says so. */
  owb_optimize_page_run (OWB_OPTIMIZE_PAGE (page));
  GtkWidget *cancel = NULL;
  {
    g_autoptr (GPtrArray) buttons = find_all (page, match_type, GSIZE_TO_POINTER (GTK_TYPE_BUTTON));
    for (guint i = 0; i < buttons->len; i++)
      if (g_strcmp0 (gtk_button_get_label (g_ptr_array_index (buttons, i)), "_Cancel") == 0)
        cancel = g_ptr_array_index (buttons, i);
  }
  g_assert_nonnull (cancel);
  g_assert_true (gtk_widget_get_visible (cancel));
  g_signal_emit_by_name (cancel, "clicked");
  wait_for (optimize_idle, page, 60, "the cancelled optimizer");
  g_assert_nonnull (find_one (page, match_label_containing, "Optimization cancelled"));

  gtk_window_destroy (GTK_WINDOW (window));
  g_unlink (link_path);
  g_unlink (out_path);
  g_rmdir (tmp);
}

/* ---- Run page ---- */

static gboolean
run_idle (gpointer page)
{
  return !owb_page_get_busy (OWB_PAGE (page));
}

static void
assert_close (double a, double b, double tolerance)
{
  if (fabs (a - b) > tolerance)
    g_error ("%.9g and %.9g differ by more than %g", a, b, tolerance);
}

static void
test_run (void)
{
  g_autoptr (OwbDocument) doc = load_sample ();
  GtkWidget *page = owb_run_page_new ();
  GtkWidget *window = show_in_window (page, 900, 1000);
  owb_page_set_document (OWB_PAGE (page), doc);

  /* One input row with its file button; the symbolic batch dim gets a spin named after it. */
  g_assert_nonnull (find_one (page, match_row_title, "image"));
  g_assert_nonnull (find_one (page, match_row_title, "batch"));

  /* Random inputs. */
  owb_run_page_run (OWB_RUN_PAGE (page));
  wait_for (run_idle, page, 60, "the run");
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  g_assert_cmpuint (owb_run_page_get_n_outputs (OWB_RUN_PAGE (page)), ==, 1);
  const OwbTensor *out = owb_run_page_get_output (OWB_RUN_PAGE (page), 0);
  g_assert_cmpint (out->rank, ==, 2);
  g_assert_cmpint (out->dims[0], ==, 1);
  g_assert_cmpint (out->dims[1], ==, 10);
  g_assert_nonnull (find_one (page, match_label_containing, "float32, shape [1, 10]"));
  g_assert_nonnull (find_one (page, match_label_containing, "Ran in"));
  /* Softmax scores: a top 5 with a bar each. */
  g_assert_nonnull (find_one (page, match_label_containing, "Top 5 classes of “probs”"));
  g_assert_cmpuint (count (page, match_type, GSIZE_TO_POINTER (GTK_TYPE_LEVEL_BAR)), ==, 5);
  OwbTensorStats stats;
  g_assert_true (owb_run_page_get_output_stats (OWB_RUN_PAGE (page), 0, &stats));
  g_assert_cmpuint (stats.count, ==, 10);
  assert_close (stats.mean, 0.1, 1e-6);
  g_autofree float *first = g_memdup2 (out->data, out->nbytes);

  /* The same seed gives the same inputs, another seed others. */
  owb_run_page_run (OWB_RUN_PAGE (page));
  wait_for (run_idle, page, 60, "the second run");
  out = owb_run_page_get_output (OWB_RUN_PAGE (page), 0);
  g_assert_cmpmem (first, 10 * sizeof (float), out->data, out->nbytes);
  GtkWidget *seed_row = find_one (page, match_row_title, "Random Seed");
  g_assert_nonnull (seed_row);
  GtkWidget *seed = find_one (seed_row, match_type, GSIZE_TO_POINTER (GTK_TYPE_SPIN_BUTTON));
  g_assert_nonnull (seed);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (seed), 7);
  owb_run_page_run (OWB_RUN_PAGE (page));
  wait_for (run_idle, page, 60, "the run with seed 7");
  out = owb_run_page_get_output (OWB_RUN_PAGE (page), 0);
  g_assert_true (memcmp (first, out->data, out->nbytes) != 0);

  /* A batch of 3 from the dim spin. */
  GtkWidget *batch_spin = find_one (find_one (page, match_row_title, "batch"), match_type,
                                    GSIZE_TO_POINTER (GTK_TYPE_SPIN_BUTTON));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (batch_spin), 3);
  owb_run_page_run (OWB_RUN_PAGE (page));
  wait_for (run_idle, page, 60, "the batch-3 run");
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  out = owb_run_page_get_output (OWB_RUN_PAGE (page), 0);
  g_assert_cmpint (out->dims[0], ==, 3);
  /* Three rows of scores are no single classification: no top 5. */
  g_assert_cmpuint (count (page, match_type, GSIZE_TO_POINTER (GTK_TYPE_LEVEL_BAR)), ==, 0);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (batch_spin), 1);

  /* The input file gives the reference output's statistics. */
  g_autofree char *input_path = sample_path ("tiny-cnn-input.pb");
  g_autofree char *output_path = sample_path ("tiny-cnn-output.pb");
  g_autoptr (GFile) input_file = g_file_new_for_path (input_path);
  owb_run_page_set_input_file (OWB_RUN_PAGE (page), "image", input_file);
  wait_for (run_idle, page, 60, "the input file to load");
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  owb_run_page_run (OWB_RUN_PAGE (page));
  wait_for (run_idle, page, 60, "the run on the input file");
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbTensor) expected = owb_tensor_load_file (output_path, NULL, &error);
  g_assert_no_error (error);
  OwbTensorStats want;
  g_assert_true (owb_tensor_stats_compute (expected, &want, 0, NULL, &error));
  g_assert_true (owb_run_page_get_output_stats (OWB_RUN_PAGE (page), 0, &stats));
  g_assert_cmpuint (stats.count, ==, want.count);
  g_assert_cmpuint (stats.n_nan, ==, 0);
  g_assert_cmpuint (stats.n_inf, ==, 0);
  assert_close (stats.min, want.min, 1e-5);
  assert_close (stats.max, want.max, 1e-5);
  assert_close (stats.mean, want.mean, 1e-5);
  assert_close (stats.std, want.std, 1e-5);
  out = owb_run_page_get_output (OWB_RUN_PAGE (page), 0);
  for (int64_t i = 0; i < out->nelems; i++)
    assert_close (owb_tensor_get_double (out, i), owb_tensor_get_double (expected, i), 1e-5);
  /* The best class of the reference is the first bar's. */
  int64_t best = 0;
  for (int64_t i = 1; i < expected->nelems; i++)
    if (owb_tensor_get_double (expected, i) > owb_tensor_get_double (expected, best))
      best = i;
  g_autofree char *best_prefix = g_strdup_printf ("%" G_GINT64_FORMAT ": ", best);
  g_autoptr (GPtrArray) top_rows = find_all (page, match_type, GSIZE_TO_POINTER (GTK_TYPE_LEVEL_BAR));
  g_assert_cmpuint (top_rows->len, ==, 5);
  g_assert_nonnull (find_one (page, match_row_title_prefix, best_prefix));

  render_to_png (page, "test-pages-run.png");

  /* A file of the wrong shape is refused with a message that says what it holds and what fits. */
  g_autoptr (GFile) wrong_file = g_file_new_for_path (output_path);
  owb_run_page_set_input_file (OWB_RUN_PAGE (page), "image", wrong_file);
  wait_for (run_idle, page, 60, "the wrong file to load");
  const char *message = owb_run_page_get_error (OWB_RUN_PAGE (page));
  g_assert_nonnull (message);
  g_assert_nonnull (strstr (message, "cannot be used"));
  g_assert_nonnull (strstr (message, "float32[1,10]"));
  g_assert_nonnull (strstr (message, "float32[batch,3,32,32]"));
  owb_run_page_run (OWB_RUN_PAGE (page));
  wait_for (run_idle, page, 60, "the refused run");
  g_assert_nonnull (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  g_assert_cmpuint (owb_run_page_get_n_outputs (OWB_RUN_PAGE (page)), ==, 0);
  /* Back to random values. */
  owb_run_page_set_input_file (OWB_RUN_PAGE (page), "image", NULL);
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));

  /* A prepare that fails (no such provider) shows why the model cannot run; a good one brings
   * the inputs back. */
  prepare_document (doc, OWB_OPTIMIZE_BASIC, "no-such-provider");
  g_assert_null (owb_prepared_get_session (owb_document_get_prepared (doc)));
  message = owb_run_page_get_error (OWB_RUN_PAGE (page));
  g_assert_nonnull (message);
  g_assert_nonnull (find_one (page, match_label_containing, "This model cannot run"));
  render_to_png (page, "test-pages-run-error.png");
  prepare_document (doc, OWB_OPTIMIZE_EXTENDED, "cpu");
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  owb_run_page_run (OWB_RUN_PAGE (page));
  wait_for (run_idle, page, 60, "the run after preparing again");
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  g_assert_cmpuint (owb_run_page_get_n_outputs (OWB_RUN_PAGE (page)), ==, 1);

  gtk_window_destroy (GTK_WINDOW (window));
}

/* Real models named in OWB_PAGES_MODELS (paths separated by ':'): optimize at "all" and run once
 * on random inputs, reporting times and how long the main loop was held. Skipped without it. */
static void
test_models (void)
{
  const char *list = g_getenv ("OWB_PAGES_MODELS");
  if (list == NULL || *list == '\0')
    {
      g_test_skip ("OWB_PAGES_MODELS is not set");
      return;
    }
  g_auto (GStrv) paths = g_strsplit (list, ":", -1);
  for (guint i = 0; paths[i] != NULL; i++)
    {
      g_autoptr (OwbDocument) doc = load_document (paths[i]);
      GtkWidget *optimize = owb_optimize_page_new ();
      GtkWidget *window = show_in_window (optimize, 1400, 900);
      owb_page_set_document (OWB_PAGE (optimize), doc);
      owb_optimize_page_set_level (OWB_OPTIMIZE_PAGE (optimize), OWB_OPTIMIZE_ALL);
      settle (0.2);
      longest_iteration_us = 0;
      gint64 start = g_get_monotonic_time ();
      owb_optimize_page_run (OWB_OPTIMIZE_PAGE (optimize));
      wait_for (optimize_idle, optimize, 300, "the optimizer");
      double optimize_ms = (g_get_monotonic_time () - start) / 1000.0;
      const OwbOptimizeReport *report = owb_optimize_page_get_report (OWB_OPTIMIZE_PAGE (optimize));
      g_assert_nonnull (report);
      g_test_message ("%s: optimize (all) %u → %u nodes in %.0f ms, longest main-loop iteration %.1f ms",
                      paths[i], report->nodes_before, report->nodes_after, optimize_ms,
                      longest_iteration_us / 1000.0);
      longest_iteration_us = 0;
      start = g_get_monotonic_time ();
      expand_results (optimize);
      settle (1.0);
      g_test_message ("%s: every result row opened, longest main-loop iteration %.1f ms", paths[i],
                      longest_iteration_us / 1000.0);
      gtk_window_destroy (GTK_WINDOW (window));

      GtkWidget *run = owb_run_page_new ();
      window = show_in_window (run, 900, 1000);
      owb_page_set_document (OWB_PAGE (run), doc);
      settle (0.2);
      longest_iteration_us = 0;
      start = g_get_monotonic_time ();
      owb_run_page_run (OWB_RUN_PAGE (run));
      wait_for (run_idle, run, 300, "the run");
      double run_ms = (g_get_monotonic_time () - start) / 1000.0;
      const char *error = owb_run_page_get_error (OWB_RUN_PAGE (run));
      g_test_message ("%s: run %s in %.0f ms (%u outputs), longest main-loop iteration %.1f ms", paths[i],
                      error != NULL ? error : "ok", run_ms, owb_run_page_get_n_outputs (OWB_RUN_PAGE (run)),
                      longest_iteration_us / 1000.0);
      g_assert_null (error);
      g_assert_cmpuint (owb_run_page_get_n_outputs (OWB_RUN_PAGE (run)), >, 0);
      gtk_window_destroy (GTK_WINDOW (window));
    }
}

/* Every page's Save As goes through owb_page_check_save_target: the input model and each file it
 * reads external data from are refused whatever the path says (a link, a linked folder), and the
 * files are left as they were; any other file is allowed. */
static void
test_save_target (void)
{
  g_autofree char *tmp = g_dir_make_tmp ("owb-test-save-target-XXXXXX", NULL);
  g_autofree char *sample = sample_path ("tiny-cnn.onnx");
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbModel) model = owb_model_load_file (sample, &error);
  g_assert_no_error (error);
  g_autofree char *input_path = g_build_filename (tmp, "model.onnx", NULL);
  g_autofree char *data_path = g_build_filename (tmp, "model.bin", NULL);
  OwbSaveOptions save = { .external_threshold = 1, .external_data_file = "model.bin" };
  g_assert_true (owb_model_save_file (model, input_path, &save, &error));
  g_assert_no_error (error);
  g_autofree char *linked_dir = g_build_filename (tmp, "linked", NULL);
  g_assert_cmpint (symlink (tmp, linked_dir), ==, 0);
  g_autofree char *data_link = g_build_filename (tmp, "data-link.bin", NULL);
  g_assert_cmpint (symlink (data_path, data_link), ==, 0);
  g_autofree char *hard = g_build_filename (tmp, "hard.onnx", NULL);
  g_assert_cmpint (link (input_path, hard), ==, 0);

  g_autoptr (OwbDocument) doc = load_document (input_path);
  g_autofree char *before = NULL, *data_before = NULL;
  gsize before_len = 0, data_before_len = 0;
  g_assert_true (g_file_get_contents (input_path, &before, &before_len, NULL));
  g_assert_true (g_file_get_contents (data_path, &data_before, &data_before_len, NULL));

  struct {
    const char *relative;
    const char *message;
  } refused[] = {
    { "model.onnx", "Refusing to save over the input model" },
    { "linked/model.onnx", "Refusing to save over the input model" },
    { "hard.onnx", "Refusing to save over the input model" },
    { "model.bin", "an external data file of the input model" },
    { "linked/model.bin", "an external data file of the input model" },
    { "data-link.bin", "an external data file of the input model" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autofree char *path = g_build_filename (tmp, refused[i].relative, NULL);
      g_autoptr (GFile) file = g_file_new_for_path (path);
      g_autoptr (GError) clash = NULL;
      g_autofree char *target = owb_page_check_save_target (doc, file, &clash);
      g_assert_null (target);
      g_assert_error (clash, G_IO_ERROR, G_IO_ERROR_EXISTS);
      g_assert_nonnull (strstr (clash->message, refused[i].message));
    }
  g_autofree char *other = g_build_filename (tmp, "linked", "other.onnx", NULL);
  g_autoptr (GFile) other_file = g_file_new_for_path (other);
  g_autofree char *allowed = owb_page_check_save_target (doc, other_file, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (allowed, ==, other);

  /* The Optimize page's Save As on this document: the data file is refused after a run, the model
   * and its data unchanged. */
  GtkWidget *page = owb_optimize_page_new ();
  GtkWidget *window = show_in_window (page, 1200, 800);
  owb_page_set_document (OWB_PAGE (page), doc);
  owb_optimize_page_run (OWB_OPTIMIZE_PAGE (page));
  wait_for (optimize_idle, page, 60, "the optimizer");
  g_assert_nonnull (owb_optimize_page_get_optimized_model (OWB_OPTIMIZE_PAGE (page)));
  g_autoptr (GFile) data_file = g_file_new_for_path (data_path);
  g_autoptr (GError) page_error = NULL;
  g_assert_false (owb_optimize_page_save_to (OWB_OPTIMIZE_PAGE (page), data_file, &page_error));
  g_assert_error (page_error, G_IO_ERROR, G_IO_ERROR_EXISTS);
  g_autofree char *after = NULL, *data_after = NULL;
  gsize after_len = 0, data_after_len = 0;
  g_assert_true (g_file_get_contents (input_path, &after, &after_len, NULL));
  g_assert_true (g_file_get_contents (data_path, &data_after, &data_after_len, NULL));
  g_assert_cmpmem (before, before_len, after, after_len);
  g_assert_cmpmem (data_before, data_before_len, data_after, data_after_len);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* ---- Jobs: the pages' engine work runs through the document ---- */

typedef struct {
  GArray *fractions;
  GPtrArray *texts;
  gboolean done;
  gboolean ok;
} JobWatch;

static void
job_progress (gpointer source, double fraction, const char *text)
{
  JobWatch *w = g_object_get_data (source, "job-watch");
  g_assert_true (g_main_context_is_owner (g_main_context_default ()));
  g_array_append_val (w->fractions, fraction);
  g_ptr_array_add (w->texts, g_strdup (text));
}

static void
job_counting_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  for (int i = 1; i <= 4; i++)
    {
      g_autofree char *text = g_strdup_printf ("step %d", i);
      owb_job_report (task, i / 4.0, text);
    }
  g_task_return_boolean (task, TRUE);
}

/* Waits on its cancellable, as a long run does, then answers that it was cancelled. */
static void
job_waiting_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  while (!g_cancellable_is_cancelled (cancellable))
    g_usleep (1000);
  owb_job_report (task, 0.5, "too late");
  g_task_return_error_if_cancelled (task);
}

static void
job_done (GObject *source, GAsyncResult *res, gpointer data)
{
  JobWatch *w = data;
  g_autoptr (GError) error = NULL;
  w->ok = g_task_propagate_boolean (G_TASK (res), &error);
  w->done = TRUE;
}

static gboolean
job_finished (gpointer data)
{
  return ((JobWatch *) data)->done;
}

static gboolean
document_idle (gpointer doc)
{
  return !owb_document_get_busy (doc);
}

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer data)
{
  (*(guint *) data)++;
}

/* A folder or a FIFO picked as the model: a one-line error naming it. The window mapped the file
 * itself: a folder said "mmap() failed: No such device" and a FIFO blocked the load forever. */
static void
test_open_not_regular (void)
{
  g_autofree char *dir = g_dir_make_tmp ("owb-pages-XXXXXX", NULL);
  g_autofree char *fifo = g_build_filename (dir, "model.onnx", NULL);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  const char *paths[] = { dir, fifo };
  const char *want[] = { "it is a folder", "not a regular file" };
  for (int i = 0; i < 2; i++)
    {
      g_autoptr (GFile) file = g_file_new_for_path (paths[i]);
      g_autoptr (OwbDocument) doc = owb_document_new ();
      Wait w = { 0 };
      owb_document_load_async (doc, file, NULL, load_cb, &w);
      wait_for (wait_done, &w, 60, "the load to fail");
      g_assert_false (w.ok);
      g_assert_nonnull (w.error);
      g_assert_nonnull (strstr (w.error->message, want[i]));
      g_assert_nonnull (strstr (w.error->message, paths[i]));
      g_clear_error (&w.error);
    }
  g_unlink (fifo);
  g_rmdir (dir);
}

static void
test_jobs (void)
{
  g_autoptr (OwbDocument) doc = load_sample ();
  g_assert_false (owb_document_get_busy (doc));
  guint busy_changes = 0;
  g_signal_connect (doc, "notify::busy", G_CALLBACK (count_notify), &busy_changes);

  /* A job's reports reach its progress function on the main context, in order. */
  g_autoptr (GObject) source = g_object_new (G_TYPE_OBJECT, NULL);
  JobWatch w = { g_array_new (FALSE, FALSE, sizeof (double)), g_ptr_array_new_with_free_func (g_free) };
  g_object_set_data (source, "job-watch", &w);
  g_autoptr (GTask) job = owb_document_new_job (doc, source, NULL, job_progress, job_done, &w);
  owb_document_run_job (doc, job, job_counting_thread);
  g_assert_true (owb_document_get_busy (doc));
  g_clear_object (&job);
  wait_for (job_finished, &w, 60, "the counting job");
  g_assert_true (w.ok);
  wait_for (document_idle, doc, 60, "the document to be idle");
  /* Every report, before the answer (queued first on the same context). */
  g_assert_cmpuint (w.fractions->len, ==, 4);
  for (guint i = 0; i < w.fractions->len; i++)
    {
      g_assert_cmpfloat (g_array_index (w.fractions, double, i), ==, (i + 1) / 4.0);
      g_autofree char *want = g_strdup_printf ("step %u", i + 1);
      g_assert_cmpstr (w.texts->pdata[i], ==, want);
    }
  g_assert_cmpuint (busy_changes, ==, 2);

  /* cancel_jobs cancels what runs; a cancelled job reports nothing more. */
  g_array_set_size (w.fractions, 0);
  w.done = FALSE;
  job = owb_document_new_job (doc, source, NULL, job_progress, job_done, &w);
  owb_document_run_job (doc, job, job_waiting_thread);
  g_clear_object (&job);
  owb_document_cancel_jobs (doc);
  wait_for (job_finished, &w, 60, "the cancelled job");
  g_assert_false (w.ok);
  g_assert_cmpuint (w.fractions->len, ==, 0);
  wait_for (document_idle, doc, 60, "the document to be idle");

  /* The Run page runs through the document: busy while it runs, and cancelled with it. */
  GtkWidget *page = owb_run_page_new ();
  GtkWidget *window = show_in_window (page, 900, 1000);
  owb_page_set_document (OWB_PAGE (page), doc);
  busy_changes = 0;
  owb_run_page_run (OWB_RUN_PAGE (page));
  g_assert_true (owb_page_get_busy (OWB_PAGE (page)));
  g_assert_true (owb_document_get_busy (doc));
  wait_for (run_idle, page, 60, "the run");
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  g_assert_cmpuint (owb_run_page_get_n_outputs (OWB_RUN_PAGE (page)), ==, 1);
  g_assert_false (owb_document_get_busy (doc));
  g_assert_cmpuint (busy_changes, ==, 2);

  /* An output's Export… and Compare with Reference… are the document's jobs too. */
  OwbOutputValues *values = owb_run_page_get_output_values (OWB_RUN_PAGE (page), 0);
  g_assert_nonnull (values);
  g_autofree char *tmp = g_dir_make_tmp ("owb-test-jobs-XXXXXX", NULL);
  g_autofree char *out_path = g_build_filename (tmp, "probs.npy", NULL);
  g_autoptr (GFile) out_file = g_file_new_for_path (out_path);
  owb_output_values_export (values, out_file);
  g_assert_true (owb_output_values_get_busy (values));
  g_assert_true (owb_document_get_busy (doc));
  wait_for (document_idle, doc, 60, "the export");
  g_assert_false (owb_output_values_get_busy (values));
  g_assert_true (g_file_test (out_path, G_FILE_TEST_IS_REGULAR));
  owb_output_values_compare (values, out_file);
  g_assert_true (owb_document_get_busy (doc));
  wait_for (document_idle, doc, 60, "the comparison");
  gboolean passed = FALSE;
  OwbTensorComparison comparison;
  g_assert_true (owb_output_values_get_comparison (values, &passed, &comparison));
  g_assert_true (passed);
  g_unlink (out_path);
  g_rmdir (tmp);

  owb_run_page_run (OWB_RUN_PAGE (page));
  owb_document_cancel_jobs (doc);
  wait_for (run_idle, page, 60, "the cancelled run");
  g_assert_cmpstr (owb_run_page_get_error (OWB_RUN_PAGE (page)), ==, "Run cancelled");
  g_assert_cmpuint (owb_run_page_get_n_outputs (OWB_RUN_PAGE (page)), ==, 0);
  g_assert_false (owb_document_get_busy (doc));
  gtk_window_destroy (GTK_WINDOW (window));

  /* So does the Optimize page. */
  page = owb_optimize_page_new ();
  window = show_in_window (page, 1200, 800);
  owb_page_set_document (OWB_PAGE (page), doc);
  owb_optimize_page_run (OWB_OPTIMIZE_PAGE (page));
  g_assert_true (owb_document_get_busy (doc));
  wait_for (optimize_idle, page, 60, "the optimizer");
  g_assert_nonnull (owb_optimize_page_get_report (OWB_OPTIMIZE_PAGE (page)));
  wait_for (document_idle, doc, 60, "the document to be idle");
  gtk_window_destroy (GTK_WINDOW (window));

  g_array_unref (w.fractions);
  g_ptr_array_unref (w.texts);
}

/* ---- Suggested file names ---- */

/* One rule for every suggestion: the inspector's export and a run output's export named the same
 * value differently ("/x" was "x.npy" in one and "_x.npy" in the other). */
static void
test_file_names (void)
{
  static const struct { const char *name, *want; } values[] = {
    { "/encoder/layer.0/weight", "encoder_layer.0_weight.npy" },
    { "output 0", "output_0.npy" },
    { "/x", "x.npy" },
    { "a//b", "a_b.npy" },
    { "..", "value.npy" },
    { "", "value.npy" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *got = owb_page_dup_value_file_name (values[i].name, "value", ".npy");
      g_assert_cmpstr (got, ==, values[i].want);
    }
  g_autofree char *long_name = owb_page_dup_value_file_name ("abcdefghij" "abcdefghij" "abcdefghij" "abcdefghij"
                                                               "abcdefghij" "abcdefghij" "abcdefghij" "abcdefghij"
                                                               "abcdefghij" "abcdefghij" "abcdefghij", "value", ".npy");
  g_assert_cmpuint (strlen (long_name), ==, 100 + strlen (".npy"));

  g_autoptr (OwbDocument) doc = load_sample ();
  g_autofree char *optimized = owb_page_dup_model_file_name (doc, "-optimized.onnx");
  g_assert_cmpstr (optimized, ==, "tiny-cnn-optimized.onnx");
  g_autofree char *png = owb_page_dup_model_file_name (doc, ".png");
  g_assert_cmpstr (png, ==, "tiny-cnn.png");
  g_autofree char *none = owb_page_dup_model_file_name (NULL, "-int8.onnx");
  g_assert_cmpstr (none, ==, "model-int8.onnx");
}

/* ---- What every page is (OwbPage) ---- */

static void
record_busy (GObject *object, GParamSpec *pspec, gpointer data)
{
  gboolean busy = owb_page_get_busy (OWB_PAGE (object));
  g_array_append_val ((GArray *) data, busy);
}

/* Every page is an OwbPage: it follows one document (also its "document" property, notified once
 * a change), is "busy" while its work is in flight (notified as that starts and ends), shows its
 * error in its error label, and once disposed lets go of the document and cancels its work, whose
 * end then leaves the page alone. */
static void
test_base (void)
{
  g_autoptr (OwbDocument) doc = load_sample ();
  GtkWidget *page = owb_run_page_new ();
  GtkWidget *window = show_in_window (page, 1000, 700);
  g_assert_true (OWB_IS_PAGE (page));
  g_assert_true (g_type_is_a (OWB_TYPE_OPTIMIZE_PAGE, OWB_TYPE_PAGE));
  g_assert_true (g_type_is_a (OWB_TYPE_PROFILE_PAGE, OWB_TYPE_PAGE));
  g_assert_true (g_type_is_a (OWB_TYPE_QUANTIZE_PAGE, OWB_TYPE_PAGE));

  guint document_changes = 0;
  g_signal_connect (page, "notify::document", G_CALLBACK (count_notify), &document_changes);
  g_object_set (page, "document", doc, NULL);
  g_assert_true (owb_page_get_document (OWB_PAGE (page)) == doc);
  owb_page_set_document (OWB_PAGE (page), doc); /* the same one: nothing to tell */
  g_assert_cmpuint (document_changes, ==, 1);
  g_autoptr (OwbDocument) held = NULL;
  g_object_get (page, "document", &held, NULL);
  g_assert_true (held == doc);

  g_autoptr (GArray) seen = g_array_new (FALSE, FALSE, sizeof (gboolean));
  g_signal_connect (page, "notify::busy", G_CALLBACK (record_busy), seen);
  owb_run_page_run (OWB_RUN_PAGE (page));
  gboolean busy = FALSE;
  g_object_get (page, "busy", &busy, NULL);
  g_assert_true (busy);
  g_assert_nonnull (owb_page_get_cancellable (OWB_PAGE (page)));
  wait_for (run_idle, page, 60, "the run");
  g_assert_null (owb_page_get_cancellable (OWB_PAGE (page)));
  g_assert_cmpuint (seen->len, >=, 2);
  g_assert_true (g_array_index (seen, gboolean, 0));
  g_assert_false (g_array_index (seen, gboolean, seen->len - 1));
  g_assert_cmpuint (owb_run_page_get_n_outputs (OWB_RUN_PAGE (page)), ==, 1);

  owb_page_show_error (OWB_PAGE (page), "Something broke");
  g_assert_cmpstr (owb_page_get_error (OWB_PAGE (page)), ==, "Something broke");
  GtkWidget *label = find_one (page, match_label_containing, "Something broke");
  g_assert_nonnull (label);
  g_assert_true (is_shown (label));
  owb_page_show_error (OWB_PAGE (page), NULL);
  g_assert_null (owb_page_get_error (OWB_PAGE (page)));
  g_assert_false (gtk_widget_get_visible (label));

  /* Disposed with a run in flight: the run's job holds the page until its end comes. */
  owb_run_page_run (OWB_RUN_PAGE (page));
  GCancellable *cancellable = g_object_ref (owb_page_get_cancellable (OWB_PAGE (page)));
  g_object_ref (page);
  gtk_window_destroy (GTK_WINDOW (window));
  g_object_run_dispose (G_OBJECT (page));
  g_assert_true (owb_page_get_disposed (OWB_PAGE (page)));
  g_assert_null (owb_page_get_document (OWB_PAGE (page)));
  g_assert_true (g_cancellable_is_cancelled (cancellable));
  owb_page_set_document (OWB_PAGE (page), doc); /* a disposed page takes no document */
  g_assert_null (owb_page_get_document (OWB_PAGE (page)));
  wait_for (document_idle, doc, 60, "the cancelled run to end");
  g_assert_false (owb_page_get_busy (OWB_PAGE (page)));
  g_object_unref (cancellable);
  g_object_unref (page);
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  /* The resources live in a static library: naming them links them in (their constructor
   * registers them). */
  g_assert_nonnull (owb_ui_get_resource ());
  g_test_add_func ("/pages/optimize", test_optimize);
  g_test_add_func ("/pages/run", test_run);
  g_test_add_func ("/pages/models", test_models);
  g_test_add_func ("/pages/save-target", test_save_target);
  g_test_add_func ("/pages/jobs", test_jobs);
  g_test_add_func ("/pages/open-not-regular", test_open_not_regular);
  g_test_add_func ("/pages/base", test_base);
  g_test_add_func ("/pages/file-names", test_file_names);
  return g_test_run ();
}
