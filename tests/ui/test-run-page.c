/* test-run-page.c: the Run page's values: each output listed a page at a time (a million
 * elements), exported as .npy and .pb and read back equal, compared with a reference file (pass
 * and fail, with the largest errors), a scalar input typed, the same seed giving byte for byte
 * the inputs `owb run --random --seed` gives, and intermediate values kept and shown in the
 * window's inspector when a tensor is selected on the Graph page. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "../engine/test-util.h"
#include "owb-application.h"
#include "owb-output-values.h"
#include "owb-page-util.h"
#include "owb-run-page.h"
#include "owb-values-view.h"
#include "owb-window-private.h"
#include "ui-test-util.h"

#define ROWS 1000
#define COLS 1000

static GtkApplication *app;
static char *tmp_dir;
static char *model_path;

/* x: float [1000, 1000] → Neg → x_neg → Neg → x_back (x again, through an intermediate value);
 * n: int64 [len] → n_out; sr: int64 scalar (a sample rate) → sr_out. */
static void
write_model (const char *path)
{
  g_autoptr (OwbModel) m = tu_model_new (17);
  OwbGraph *g = m->graph;
  const int64_t x_dims[2] = { ROWS, COLS }, n_dims[1] = { -2 };
  const char *const n_params[1] = { "len" };
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, x_dims, NULL);
  tu_add_value (g->inputs, "n", OWB_TYPE_INT64, 1, n_dims, n_params);
  tu_add_value (g->inputs, "sr", OWB_TYPE_INT64, 0, NULL, NULL);
  tu_node (g, "Neg", "neg1", "x", "x_neg");
  tu_node (g, "Neg", "neg2", "x_neg", "x_back");
  tu_node (g, "Identity", "id_n", "n", "n_out");
  tu_node (g, "Identity", "id_sr", "sr", "sr_out");
  tu_add_value (g->outputs, "x_back", OWB_TYPE_FLOAT, 2, x_dims, NULL);
  tu_add_value (g->outputs, "n_out", OWB_TYPE_INT64, 1, n_dims, n_params);
  tu_add_value (g->outputs, "sr_out", OWB_TYPE_INT64, 0, NULL, NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_model_save_file (m, path, NULL, &error));
  g_assert_no_error (error);
}

/* ---- Widget tree ---- */

static gboolean
match_icon_button (GtkWidget *widget, gconstpointer data)
{
  return GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_icon_name (GTK_BUTTON (widget)), data) == 0;
}

static gboolean
match_group_title (GtkWidget *widget, gconstpointer data)
{
  return ADW_IS_PREFERENCES_GROUP (widget)
         && g_strcmp0 (adw_preferences_group_get_title (ADW_PREFERENCES_GROUP (widget)), data) == 0;
}

/* ---- Run page ---- */

static void
save_png (GtkWidget *widget, const char *name)
{
  settle (0.5);
  const char *dir = g_getenv ("OWB_TEST_PNG_DIR");
  g_autofree char *path = g_build_filename (dir != NULL ? dir : g_get_tmp_dir (), name, NULL);
  g_autoptr (GError) error = NULL;
  /* A slow machine (or valgrind) may not have drawn the first frame yet. */
  for (int tries = 0; !owb_page_save_widget_png (widget, path, &error); tries++)
    {
      if (tries == 100)
        g_error ("%s: %s", path, error->message);
      g_clear_error (&error);
      settle (0.2);
    }
  g_test_message ("rendered %s", path);
}


/* The model at level disabled: every value of the file is computed (none fused away). */
static OwbDocument *
load_model (void)
{
  OwbDocument *doc = load_document (model_path);
  prepare_document (doc, OWB_OPTIMIZE_DISABLED, "cpu");
  return doc;
}

static void
run (GtkWidget *page)
{
  owb_run_page_run (OWB_RUN_PAGE (page));
  wait_for (page_idle, page, 120, "the run");
}

static GtkWidget *
show_in_window (GtkWidget *page)
{
  GtkWidget *window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 900, 1400);
  gtk_window_set_child (GTK_WINDOW (window), page);
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

static GtkSpinButton *
row_spin (GtkWidget *page, const char *title)
{
  GtkWidget *row = find_one (page, match_row_title, title);
  g_assert_nonnull (row);
  GtkWidget *spin = find_one (row, match_type, GSIZE_TO_POINTER (GTK_TYPE_SPIN_BUTTON));
  g_assert_nonnull (spin);
  return GTK_SPIN_BUTTON (spin);
}

static OwbTensor *
load_tensor (const char *path, char **name)
{
  g_autoptr (GError) error = NULL;
  OwbTensor *t = owb_tensor_load_file (path, name, &error);
  g_assert_no_error (error);
  return t;
}

static char *
read_file (const char *path, gsize *size)
{
  char *data = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_get_contents (path, &data, size, &error));
  return data;
}

static void
export_output (GtkWidget *page, guint index, const char *path)
{
  OwbOutputValues *values = owb_run_page_get_output_values (OWB_RUN_PAGE (page), index);
  g_assert_nonnull (values);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  owb_output_values_export (values, file);
  g_assert_true (owb_page_get_busy (OWB_PAGE (page)));
  wait_for (page_idle, page, 60, "the export");
  const char *status = owb_output_values_get_status (values);
  g_assert_nonnull (status);
  g_assert_true (g_str_has_prefix (status, "Saved "));
}

static void
compare_output (GtkWidget *page, guint index, const char *path, gboolean *passed, OwbTensorComparison *comparison)
{
  OwbOutputValues *values = owb_run_page_get_output_values (OWB_RUN_PAGE (page), index);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  owb_output_values_compare (values, file);
  wait_for (page_idle, page, 60, "the comparison");
  g_assert_true (owb_output_values_get_comparison (values, passed, comparison));
}

/* `owb run MODEL --random --seed SEED --dim len=4 -O disabled --output-dir DIR`. */
static void
run_cli (const char *seed, const char *out_dir)
{
  const char *build = g_getenv ("OWB_BUILD_ROOT");
  g_assert_nonnull (build);
  g_autofree char *owb = g_build_filename (build, "app", "owb", NULL);
  const char *argv[] = { owb, "run", model_path, "--random", "--seed", seed, "--dim", "len=4", "-O", "disabled",
                         "--output-dir", out_dir, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("owb run failed: %s", err);
}

static void
test_values (void)
{
  g_autoptr (OwbDocument) doc = load_model ();
  GtkWidget *page = owb_run_page_new ();
  GtkWidget *window = show_in_window (page);
  owb_page_set_document (OWB_PAGE (page), doc);

  /* The scalar sr has an entry to type its value in; x, a tensor, has none. */
  GtkWidget *sr_row = find_one (page, match_row_title, "sr");
  GtkWidget *x_row = find_one (page, match_row_title, "x");
  g_assert_nonnull (sr_row);
  g_assert_nonnull (x_row);
  g_assert_nonnull (find_one (sr_row, match_type, GSIZE_TO_POINTER (GTK_TYPE_ENTRY)));
  g_assert_null (find_one (x_row, match_type, GSIZE_TO_POINTER (GTK_TYPE_ENTRY)));

  gtk_spin_button_set_value (row_spin (page, "Random Seed"), 7);
  gtk_spin_button_set_value (row_spin (page, "len"), 4);
  run (page);
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  g_assert_cmpuint (owb_run_page_get_n_outputs (OWB_RUN_PAGE (page)), ==, 3);
  const OwbTensor *x_back = owb_run_page_get_output (OWB_RUN_PAGE (page), 0);
  g_assert_cmpint (x_back->nelems, ==, ROWS * COLS);

  /* The values of the million-element output, a page at a time, with their coordinates. */
  OwbOutputValues *values = owb_run_page_get_output_values (OWB_RUN_PAGE (page), 0);
  GtkWidget *view = find_one (GTK_WIDGET (values), match_type, GSIZE_TO_POINTER (OWB_TYPE_VALUES_VIEW));
  g_assert_nonnull (view);
  g_assert_nonnull (find_one (view, match_label, "elements 0–19 of 1000000"));
  g_assert_nonnull (find_one (view, match_label, "[0, 19]"));
  g_autofree char *first_value = g_strdup_printf ("%.6g", ((const float *) x_back->data)[0]);
  g_assert_nonnull (find_one (view, match_label, first_value));
  GtkWidget *next = find_one (view, match_icon_button, "go-next-symbolic");
  g_assert_nonnull (next);
  g_signal_emit_by_name (next, "clicked");
  g_assert_cmpint (owb_values_view_get_first (OWB_VALUES_VIEW (view)), ==, 20);
  g_assert_nonnull (find_one (view, match_label, "elements 20–39 of 1000000"));
  gint64 start = g_get_monotonic_time ();
  owb_values_view_show_element (OWB_VALUES_VIEW (view), 999 * COLS + 999);
  double page_ms = (g_get_monotonic_time () - start) / 1000.0;
  g_test_message ("a page of a 1,000,000-element output in %.2f ms", page_ms);
  g_assert_nonnull (find_one (view, match_label, "elements 999980–999999 of 1000000"));
  g_assert_nonnull (find_one (view, match_label, "[999, 999]"));
  g_autofree char *last = owb_values_view_format_element (x_back, ROWS * COLS - 1);
  g_autofree char *last_value = g_strdup_printf ("[999, 999]: %.6g", ((const float *) x_back->data)[ROWS * COLS - 1]);
  g_assert_cmpstr (last, ==, last_value);
  g_assert_false (gtk_widget_get_sensitive (next));
  /* "Top 5" belongs to classifier outputs only; none here. */
  g_assert_null (find_one (page, match_label_containing, "Top 5"));

  /* Export as .npy and .pb, read back equal. */
  g_autofree char *npy = g_build_filename (tmp_dir, "x_back.npy", NULL);
  g_autofree char *pb = g_build_filename (tmp_dir, "x_back.pb", NULL);
  g_autofree char *n_pb = g_build_filename (tmp_dir, "n_out.pb", NULL);
  export_output (page, 0, npy);
  export_output (page, 0, pb);
  export_output (page, 1, n_pb);
  /* Never over the input model. */
  gsize model_size_before, model_size_after;
  g_autofree char *model_before = read_file (model_path, &model_size_before);
  g_autoptr (GFile) model_file = g_file_new_for_path (model_path);
  owb_output_values_export (owb_run_page_get_output_values (OWB_RUN_PAGE (page), 0), model_file);
  wait_for (page_idle, page, 60, "the refused export");
  g_assert_nonnull (strstr (owb_output_values_get_status (owb_run_page_get_output_values (OWB_RUN_PAGE (page), 0)),
                            "Refusing to save over the input model"));
  g_autofree char *model_after = read_file (model_path, &model_size_after);
  g_assert_cmpmem (model_before, model_size_before, model_after, model_size_after);
  g_autoptr (OwbTensor) from_npy = load_tensor (npy, NULL);
  g_autofree char *pb_name = NULL;
  g_autoptr (OwbTensor) from_pb = load_tensor (pb, &pb_name);
  g_assert_cmpstr (pb_name, ==, "x_back");
  g_assert_true (owb_tensor_same_shape (from_npy, x_back));
  g_assert_cmpmem (from_npy->data, from_npy->nbytes, x_back->data, x_back->nbytes);
  g_assert_cmpmem (from_pb->data, from_pb->nbytes, x_back->data, x_back->nbytes);
  {
    /* Written through a temporary name: nothing else is left in the folder. */
    g_autoptr (GDir) dir = g_dir_open (tmp_dir, 0, NULL);
    guint n = 0;
    for (const char *f; (f = g_dir_read_name (dir)) != NULL;)
      n++;
    g_assert_cmpuint (n, ==, 4); /* model.onnx and the three exports */
  }

  /* The same seed gives the same random inputs as `owb run --random --seed 7`: its outputs (the
   * inputs again) are the same files, byte for byte. */
  g_autofree char *cli_dir = g_build_filename (tmp_dir, "cli", NULL);
  run_cli ("7", cli_dir);
  g_autofree char *cli_x = g_build_filename (cli_dir, "output_0.pb", NULL);
  g_autofree char *cli_n = g_build_filename (cli_dir, "output_1.pb", NULL);
  g_autofree char *cli_sr = g_build_filename (cli_dir, "output_2.pb", NULL);
  gsize a_size, b_size;
  g_autofree char *a = read_file (pb, &a_size);
  g_autofree char *b = read_file (cli_x, &b_size);
  g_assert_cmpmem (a, a_size, b, b_size);
  g_autofree char *c = read_file (n_pb, &a_size);
  g_autofree char *d = read_file (cli_n, &b_size);
  g_assert_cmpmem (c, a_size, d, b_size);
  g_autoptr (OwbTensor) cli_sr_value = load_tensor (cli_sr, NULL);
  g_assert_cmpint (((const int64_t *) owb_run_page_get_output (OWB_RUN_PAGE (page), 2)->data)[0], ==,
                   ((const int64_t *) cli_sr_value->data)[0]);
  /* Another seed, other inputs. */
  g_autofree char *cli_dir8 = g_build_filename (tmp_dir, "cli8", NULL);
  run_cli ("8", cli_dir8);
  g_autofree char *cli_x8 = g_build_filename (cli_dir8, "output_0.pb", NULL);
  g_autofree char *e = read_file (cli_x8, &b_size);
  g_assert_true (b_size != a_size || memcmp (a, e, b_size) != 0);

  /* Compared with the CLI's output as reference: passes, no error. */
  gboolean passed = FALSE;
  OwbTensorComparison comparison;
  compare_output (page, 0, cli_x, &passed, &comparison);
  g_assert_true (passed);
  g_assert_cmpint (comparison.n_elements, ==, ROWS * COLS);
  g_assert_cmpfloat (comparison.max_abs_error, ==, 0);
  g_assert_nonnull (find_one (page, match_label_containing, "Matches “output_0.pb” at rtol 0.001, atol 1e-05"));
  /* A reference off by 0.5 at [0, 5]: fails there, largest absolute error 0.5. */
  g_autoptr (OwbTensor) reference = load_tensor (cli_x, NULL);
  ((float *) reference->data)[5] += 0.5f;
  g_autofree char *ref_path = g_build_filename (tmp_dir, "reference.npy", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_tensor_save_npy_file (reference, ref_path, &error));
  compare_output (page, 0, ref_path, &passed, &comparison);
  g_assert_false (passed);
  g_assert_cmpfloat_with_epsilon (comparison.max_abs_error, 0.5, 1e-6);
  g_assert_cmpfloat (comparison.max_rel_error, >, 0);
  const char *status = owb_output_values_get_status (owb_run_page_get_output_values (OWB_RUN_PAGE (page), 0));
  g_assert_nonnull (strstr (status, "Differs from “reference.npy”"));
  g_assert_nonnull (strstr (status, "at index 5 [0,5]"));
  g_assert_nonnull (find_one (page, match_label_containing, "Largest absolute error 0.5"));
  save_png (page, "test-run-page-values.png");
  /* ... and passes at a tolerance that covers it. */
  owb_output_values_set_tolerance (owb_run_page_get_output_values (OWB_RUN_PAGE (page), 0), 0, 0.6);
  compare_output (page, 0, ref_path, &passed, &comparison);
  g_assert_true (passed);
  /* A reference of another shape fails and says why; an unreadable one is an error. */
  compare_output (page, 0, n_pb, &passed, &comparison);
  g_assert_false (passed);
  g_assert_nonnull (strstr (owb_output_values_get_status (owb_run_page_get_output_values (OWB_RUN_PAGE (page), 0)),
                            "expected int64 values, got float32"));

  /* A typed scalar: the sample rate 16000 comes out as 16000; text that is no int64 is refused. */
  owb_run_page_set_input_value (OWB_RUN_PAGE (page), "sr", "16000");
  g_assert_nonnull (find_one (sr_row, match_label_containing, "the value 16000"));
  run (page);
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  const OwbTensor *sr_out = owb_run_page_get_output (OWB_RUN_PAGE (page), 2);
  g_assert_cmpint (sr_out->rank, ==, 0);
  g_assert_cmpint (((const int64_t *) sr_out->data)[0], ==, 16000);
  owb_run_page_set_input_value (OWB_RUN_PAGE (page), "sr", "16k");
  run (page);
  g_assert_nonnull (owb_run_page_get_error (OWB_RUN_PAGE (page)));
  g_assert_nonnull (strstr (owb_run_page_get_error (OWB_RUN_PAGE (page)), "“16k” cannot be read as int64"));
  owb_run_page_set_input_value (OWB_RUN_PAGE (page), "sr", "");
  run (page);
  g_assert_null (owb_run_page_get_error (OWB_RUN_PAGE (page)));

  /* Intermediate values are kept only on request. */
  const OwbGraph *graph = owb_prepared_get_graph (owb_document_get_prepared (doc));
  g_assert_null (owb_run_page_get_run_value (OWB_RUN_PAGE (page), graph, "x_neg"));
  g_assert_true (owb_run_page_get_run_value (OWB_RUN_PAGE (page), graph, "x_back")
                 == owb_run_page_get_output (OWB_RUN_PAGE (page), 0));
  owb_run_page_set_keep_values (OWB_RUN_PAGE (page), TRUE);
  run (page);
  OwbTensor *x_neg = owb_run_page_get_run_value (OWB_RUN_PAGE (page), graph, "x_neg");
  g_assert_nonnull (x_neg);
  x_back = owb_run_page_get_output (OWB_RUN_PAGE (page), 0);
  for (int64_t i = 0; i < x_neg->nelems; i += 997)
    g_assert_cmpfloat (((const float *) x_neg->data)[i], ==, -((const float *) x_back->data)[i]);
  g_assert_nonnull (owb_run_page_get_run_value (OWB_RUN_PAGE (page), graph, "x"));
  g_assert_null (owb_run_page_get_run_value (OWB_RUN_PAGE (page), NULL, "x_neg"));
  g_assert_nonnull (find_one (page, match_label_containing, "keeping 7 values"));

  gtk_window_destroy (GTK_WINDOW (window));
}

/* ---- In the window: a tensor selected after a run shows its kept values ---- */

static gboolean
window_loaded (gpointer data)
{
  OwbDocument *document = owb_window_get_document (data);
  return document != NULL && prepared_ready (document);
}

static gboolean
window_ready (gpointer data)
{
  OwbWindow *window = data;
  OwbDocument *document = owb_window_get_document (window);
  return document != NULL && !owb_document_get_preparing (document)
         && owb_prepared_get_session (owb_document_get_prepared (document)) != NULL
         && owb_prepared_get_level (owb_document_get_prepared (document)) == OWB_OPTIMIZE_DISABLED;
}

static gboolean
window_at_basic (gpointer data)
{
  OwbDocument *document = owb_window_get_document (data);
  return !owb_document_get_preparing (document)
         && owb_prepared_get_level (owb_document_get_prepared (document)) == OWB_OPTIMIZE_BASIC;
}

static gboolean
inspector_shows_last_run (gpointer data)
{
  OwbWindow *window = data;
  return find_one (GTK_WIDGET (window->inspector), match_group_title, "Last Run") != NULL;
}

static void
test_window_inspector (void)
{
  OwbWindow *window = owb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1400, 900);
  gtk_window_present (GTK_WINDOW (window));
  g_autoptr (GFile) file = g_file_new_for_path (model_path);
  owb_window_open_file (window, file);
  wait_for (window_loaded, window, 60, "the model");
  gtk_drop_down_set_selected (window->level_drop_down, OWB_OPTIMIZE_DISABLED);
  wait_for (window_ready, window, 60, "the model at level disabled");

  OwbRunPage *page = NULL;
  for (guint i = 0; i < window->pages->len; i++)
    if (OWB_IS_RUN_PAGE (g_ptr_array_index (window->pages, i)))
      page = g_ptr_array_index (window->pages, i);
  g_assert_nonnull (page);
  OwbGraphView *view = owb_graph_pane_get_view (window->graph_pane);

  /* Before a run, the inspector shows the tensor's type only; after a run that keeps nothing,
   * a graph output shows its value, an intermediate one still none. */
  owb_graph_view_select_tensor (view, "x_back");
  settle (0.1);
  g_assert_false (inspector_shows_last_run (window));
  owb_run_page_run (page);
  wait_for (page_idle, page, 120, "the run");
  wait_for (inspector_shows_last_run, window, 10, "the inspector to show the output's value");
  owb_graph_view_select_tensor (view, "x_neg");
  settle (0.1);
  g_assert_false (inspector_shows_last_run (window));

  owb_run_page_set_keep_values (page, TRUE);
  owb_run_page_run (page);
  wait_for (page_idle, page, 120, "the run");
  g_assert_null (owb_run_page_get_error (page));
  /* The selection on show gets its values as soon as the run is done. */
  wait_for (inspector_shows_last_run, window, 10, "the inspector to show the kept value");
  GtkWidget *group = find_one (GTK_WIDGET (window->inspector), match_group_title, "Last Run");
  GtkWidget *values = find_one (group, match_type, GSIZE_TO_POINTER (OWB_TYPE_VALUES_VIEW));
  g_assert_nonnull (values);
  OwbTensor *x_neg = owb_run_page_get_run_value (page, owb_graph_view_get_graph (view), "x_neg");
  g_assert_nonnull (x_neg);
  g_autofree char *first = g_strdup_printf ("%.6g", ((const float *) x_neg->data)[0]);
  g_assert_nonnull (find_one (values, match_label, first));
  g_assert_nonnull (find_one (group, match_row_title, "Mean"));
  /* The panel scrolled down to the value, as a person reads it. */
  GtkWidget *scroller = gtk_widget_get_ancestor (group, GTK_TYPE_SCROLLED_WINDOW);
  GtkAdjustment *adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scroller));
  settle (0.3);
  gtk_adjustment_set_value (adjustment, gtk_adjustment_get_upper (adjustment));
  save_png (GTK_WIDGET (window), "test-run-page-inspector.png");

  /* Another tensor: its own kept value; a node selection shows none. */
  owb_graph_view_select_tensor (view, "x_back");
  settle (0.1);
  g_assert_true (inspector_shows_last_run (window));
  owb_graph_view_select_node (view, g_ptr_array_index (owb_graph_view_get_graph (view)->nodes, 0));
  settle (0.1);
  g_assert_false (inspector_shows_last_run (window));

  /* Another level prepares another graph: the kept values do not belong to it. */
  owb_graph_view_select_tensor (view, "x_neg");
  settle (0.1);
  g_assert_true (inspector_shows_last_run (window));
  gtk_drop_down_set_selected (window->level_drop_down, OWB_OPTIMIZE_BASIC);
  wait_for (window_at_basic, window, 60, "the model at level basic");
  settle (0.2);
  g_assert_false (inspector_shows_last_run (window));

  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  app = test_application_new ();
  g_autoptr (GError) error = NULL;

  tmp_dir = g_dir_make_tmp ("owb-run-page-XXXXXX", &error);
  g_assert_no_error (error);
  model_path = g_build_filename (tmp_dir, "model.onnx", NULL);
  write_model (model_path);

  g_test_add_func ("/run-page/values", test_values);
  g_test_add_func ("/run-page/window-inspector", test_window_inspector);
  int status = g_test_run ();
  g_application_release (G_APPLICATION (app));

  /* The folder holds only what the tests wrote. */
  g_autoptr (GDir) dir = g_dir_open (tmp_dir, 0, NULL);
  for (const char *f; dir != NULL && (f = g_dir_read_name (dir)) != NULL;)
    {
      g_autofree char *path = g_build_filename (tmp_dir, f, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          g_autoptr (GDir) sub = g_dir_open (path, 0, NULL);
          for (const char *s; sub != NULL && (s = g_dir_read_name (sub)) != NULL;)
            {
              g_autofree char *inner = g_build_filename (path, s, NULL);
              g_unlink (inner);
            }
        }
      g_remove (path);
    }
  g_rmdir (tmp_dir);
  return status;
}
