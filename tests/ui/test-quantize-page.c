/* test-quantize-page.c: the Quantize page on the bundled sample in a window under Xvfb: Quantize
 * Model on seeded random samples, the comparison with a finite SQNR, the quantized graph with its
 * QDQ pairs collapsed into badges and not, a worst tensor selected (its Node Detail: statistics,
 * error histogram, scales) and kept in float (re-quantized without calibrating again, the
 * comparison refreshed), the map's colours, Recover Accuracy to an SQNR and to an accuracy drop
 * against labels.txt, Save As refusing the input file; with $OWB_QUANT_MODEL (and
 * $OWB_QUANT_CALIB), the same on that model, timed. Image folders (PPM files written here) with
 * their normalization, labels.txt's accuracy (and a mismatched one, said not stopping the run),
 * the weight type and excluded op types, and the settings saved per model and restored by a second
 * page (XDG_CONFIG_HOME is a folder of the test's). $OWB_TEST_PNG_DIR: screenshots. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "owb-quantize-page.h"
#include "owb-graph-scene.h"
#include "owb-resources.h"
#include "ui-test-util.h"

static gboolean
view_ready (gpointer view)
{
  return owb_graph_view_has_scene (view) && !owb_graph_view_get_busy (view);
}

/* The widget rendered to $OWB_TEST_PNG_DIR/png, when that is set. */
static void
screenshot (GtkWidget *widget, const char *png)
{
  const char *dir = g_getenv ("OWB_TEST_PNG_DIR");
  if (!dir)
    return;
  settle (0.5);
  g_autoptr (GdkTexture) texture = owb_page_render_widget (widget, NULL);
  if (texture)
    {
      g_autofree char *path = g_build_filename (dir, png, NULL);
      g_assert_true (gdk_texture_save_to_png (texture, path));
      g_test_message ("rendered %s", path);
    }
}

static guint
strv_len (const char *const *v)
{
  return v ? g_strv_length ((char **) v) : 0;
}

static double
worst_output_sqnr (OwbQuantizePage *page)
{
  const OwbQuantComparison *c = owb_quantize_page_get_comparison (page);
  double worst = INFINITY;
  for (guint i = 0; i < c->outputs->len; i++)
    worst = MIN (worst, ((const OwbQuantOutputDiff *) g_ptr_array_index (c->outputs, i))->sqnr_db);
  return worst;
}

/* Quantize Model, Keep in Float on the worst tensor, Recover Accuracy; returns the page's window. */
static GtkWidget *
quantize_flow (const char *model_path, const char *calib_dir, const char *png_prefix, gboolean recover)
{
  g_autoptr (OwbDocument) doc = load_document (model_path);
  OwbQuantizePage *page = OWB_QUANTIZE_PAGE (owb_quantize_page_new ());
  GtkWidget *window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 1500, 950);
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (page));
  gtk_window_present (GTK_WINDOW (window));
  owb_page_set_document (OWB_PAGE (page), doc);
  if (calib_dir)
    owb_quantize_page_set_calibration_dir (page, calib_dir);
  /* an image folder's normalization: $OWB_QUANT_MEAN and $OWB_QUANT_STD (one number or three) */
  if (calib_dir && g_getenv ("OWB_QUANT_MEAN"))
    {
      owb_quantize_page_set_normalization (page, OWB_QUANTIZE_NORMALIZATION_CUSTOM);
      owb_quantize_page_set_custom_normalization (page, g_getenv ("OWB_QUANT_MEAN"), g_getenv ("OWB_QUANT_STD"));
    }
  g_autofree char *shot = g_strconcat (png_prefix, "-empty.png", NULL);
  screenshot (GTK_WIDGET (page), shot);

  /* Quantize Model */
  gint64 t0 = g_get_monotonic_time ();
  owb_quantize_page_quantize (page);
  g_assert_true (owb_page_get_busy (OWB_PAGE (page)));
  wait_for (page_idle, page, 240, "the quantization");
  double quantize_s = (g_get_monotonic_time () - t0) / 1e6;
  g_assert_cmpstr (owb_page_get_error (OWB_PAGE (page)), ==, NULL);
  const OwbQuantComparison *c = owb_quantize_page_get_comparison (page);
  g_assert_nonnull (c);
  g_assert_cmpuint (owb_quantize_page_get_n_comparison_rows (page), ==, c->outputs->len);
  g_assert_cmpuint (owb_quantize_page_get_n_comparison_rows (page), >, 0);
  double first_sqnr = worst_output_sqnr (page);
  g_assert_true (isfinite (first_sqnr));
  g_assert_cmpuint (owb_quantize_page_get_n_calibrations (page), ==, 1);
  g_assert_nonnull (owb_quantize_page_get_quantized_model (page));
  g_assert_cmpuint (owb_quantize_page_get_n_worst_rows (page), >, 0);
  OwbGraphView *view = owb_quantize_page_get_graph_view (page);
  wait_for (view_ready, view, 60, "the sensitivity map's layout");
  g_assert_nonnull (owb_graph_view_get_layer (view));
  double map_s = (g_get_monotonic_time () - t0) / 1e6;
  g_test_message ("%s: Quantize Model to the comparison in %.2f s, to the map laid out in %.2f s, worst output %.2f dB",
                  model_path, quantize_s, map_s, first_sqnr);
  g_test_message ("%s", owb_quantize_page_get_summary (page));
  if (owb_quantize_page_get_accuracy_text (page))
    g_test_message ("%s", owb_quantize_page_get_accuracy_text (page));
  if (owb_quantize_page_get_labels_message (page))
    g_test_message ("%s", owb_quantize_page_get_labels_message (page));
  g_free (shot);
  shot = g_strconcat (png_prefix, "-quantized.png", NULL);
  screenshot (GTK_WIDGET (page), shot);

  /* the quantized graph in the map, its QDQ pairs collapsed (the default): a display copy without
   * QuantizeLinear / DequantizeLinear, every node they wrapped badged with its integer types, the
   * quantized model itself untouched */
  OwbGraphView *map_view = owb_quantize_page_get_graph_view (page);
  const OwbGraph *float_graph = owb_graph_view_get_graph (map_view);
  g_assert_true (owb_quantize_page_get_collapse_qdq (page));
  owb_quantize_page_set_show_quantized_graph (page, TRUE);
  const OwbModel *qmodel = owb_quantize_page_get_quantized_model (page);
  guint n_quantized_nodes = qmodel->graph->nodes->len, n_qdq = 0;
  for (guint i = 0; i < qmodel->graph->nodes->len; i++)
    {
      const char *op = ((const OwbNode *) g_ptr_array_index (qmodel->graph->nodes, i))->op_type;
      n_qdq += strcmp (op, "QuantizeLinear") == 0 || strcmp (op, "DequantizeLinear") == 0;
    }
  g_assert_cmpuint (n_qdq, >, 0);
  const OwbGraph *collapsed = owb_graph_view_get_graph (map_view);
  g_assert_true (collapsed != qmodel->graph);
  wait_for (view_ready, map_view, 60, "the collapsed graph's layout");
  OwbGraphLayer *clayer = owb_graph_view_get_layer (map_view);
  g_assert_nonnull (clayer);
  for (guint i = 0; i < collapsed->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (collapsed->nodes, i);
      g_assert_cmpstr (n->op_type, !=, "QuantizeLinear");
      g_assert_cmpstr (n->op_type, !=, "DequantizeLinear");
    }
  /* the badge is the first line of each wrapped node's box, as drawn: "u8 ←", "→ u8" or both, the
   * types the page's (u8 activations, s8 weights); those nodes coloured */
  const OwbGraphScene *cscene = owb_graph_view_get_scene (map_view);
  guint n_badged = 0;
  for (guint i = 0; i < owb_graph_scene_get_n_nodes (cscene); i++)
    {
      const OwbSceneNode *sn = owb_graph_scene_get_node (cscene, i);
      if (sn->kind != OWB_SCENE_OP || sn->n_lines == 0 || (!strstr (sn->lines[0].text, "←") && !strstr (sn->lines[0].text, "→")))
        continue;
      g_assert_true (strstr (sn->lines[0].text, "u8") || strstr (sn->lines[0].text, "s8"));
      GdkRGBA rgba;
      g_assert_true (owb_graph_layer_get_color (clayer, sn->node, &rgba));
      n_badged++;
    }
  g_assert_cmpuint (n_badged, >, 0);
  g_assert_cmpuint (collapsed->nodes->len, <, n_quantized_nodes);
  g_assert_cmpuint (qmodel->graph->nodes->len, ==, n_quantized_nodes);
  g_test_message ("%s: collapsed %u QDQ nodes: %u nodes shown of %u, %u badged", model_path, n_qdq,
                  collapsed->nodes->len, n_quantized_nodes, n_badged);
  g_autofree char *collapsed_shot = g_strconcat (png_prefix, "-quantized-collapsed.png", NULL);
  screenshot (GTK_WIDGET (page), collapsed_shot);
  /* the toggle off: the pairs as nodes, grey and badged with their integer type; then back to the
   * float graph and its sensitivity */
  owb_quantize_page_set_collapse_qdq (page, FALSE);
  g_assert_true (owb_graph_view_get_graph (map_view) == qmodel->graph);
  OwbGraphLayer *qlayer = owb_graph_view_get_layer (map_view);
  g_assert_nonnull (qlayer);
  gboolean saw_q = FALSE;
  for (guint i = 0; i < qmodel->graph->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (qmodel->graph->nodes, i);
      if (strcmp (n->op_type, "QuantizeLinear") != 0)
        continue;
      GdkRGBA rgba;
      g_assert_true (owb_graph_layer_get_color (qlayer, n, &rgba));
      g_autofree char *badge = owb_graph_layer_dup_badge (qlayer, n);
      g_assert_nonnull (badge);
      saw_q = TRUE;
    }
  g_assert_true (saw_q);
  g_free (shot);
  shot = g_strconcat (png_prefix, "-quantized-graph.png", NULL);
  screenshot (GTK_WIDGET (page), shot);
  owb_quantize_page_set_show_quantized_graph (page, FALSE);
  g_assert_true (owb_graph_view_get_graph (map_view) == float_graph);
  owb_quantize_page_set_collapse_qdq (page, TRUE);
  /* the sensitivity handed to the window for the Graph page, and taken back */
  OwbGraphLayer *handed = NULL;
  gulong h = g_signal_connect_swapped (page, "show-layer", G_CALLBACK (remember_layer), &handed);
  owb_quantize_page_set_show_on_graph_page (page, TRUE);
  g_assert_nonnull (handed);
  g_assert_cmpstr (owb_graph_layer_get_name (handed), ==, "Sensitivity");
  owb_quantize_page_set_show_on_graph_page (page, FALSE);
  g_assert_null (handed);
  g_signal_handler_disconnect (page, h);

  /* a worst tensor selected: its node selected in the map and announced to the window */
  g_autofree char *activated = NULL;
  g_signal_connect_swapped (page, "node-activated", G_CALLBACK (remember_name), &activated);
  owb_quantize_page_select_worst (page, 0);
  const char *node = owb_quantize_page_get_selected_node (page);
  g_assert_nonnull (node);
  g_assert_cmpstr (activated, ==, node);
  g_assert_nonnull (owb_graph_view_get_selected_node (view));
  g_assert_cmpstr (owb_graph_view_get_selected_node (view)->name, ==, node);
  double node_db;
  g_assert_true (owb_quantize_page_get_node_sqnr (page, node, &node_db));
  g_autofree char *kept = g_strdup (node);

  /* its detail: the output compared, float against quantized, the error histogram holding every
   * compared element, the QuantizeLinear's scale and zero point, Keep in Float beside them */
  OwbQuantizeDetail *detail = owb_quantize_page_get_detail (page);
  const char *tensor = owb_quantize_detail_get_tensor (detail);
  g_assert_cmpstr (tensor, !=, "");
  const OwbQuantTensorDiff *td = NULL;
  for (guint i = 0; i < c->tensors->len && !td; i++)
    if (strcmp (((const OwbQuantTensorDiff *) g_ptr_array_index (c->tensors, i))->name, tensor) == 0)
      td = g_ptr_array_index (c->tensors, i);
  g_assert_nonnull (td);
  g_assert_cmpstr (td->node, ==, node);
  g_assert_cmpfloat (td->min_a, <=, td->max_a);
  g_assert_cmpfloat (td->std_a, >=, 0);
  const char *stats = owb_quantize_detail_get_statistics_text (detail);
  g_assert_true (g_str_has_prefix (stats, "Float: min "));
  g_assert_nonnull (strstr (stats, "\nQuantized: min "));
  g_autofree char *float_min = g_strdup_printf ("min %.4g ", td->min_a);
  g_assert_nonnull (strstr (stats, float_min));
  guint n_bins = 0;
  const guint64 *bins = owb_histogram_get_bins (owb_quantize_detail_get_histogram (detail), &n_bins);
  g_assert_cmpuint (n_bins, ==, td->n_error_bins);
  guint64 in_bins = 0;
  for (guint b = 0; b < n_bins; b++)
    in_bins += bins[b];
  g_assert_cmpuint (in_bins, ==, td->count);
  const char *qtext = owb_quantize_detail_get_quantization_text (detail);
  g_test_message ("detail of %s: %s\n%s", node, stats, qtext);
  g_assert_true (strstr (qtext, "QuantizeLinear") || strstr (qtext, "not quantized"));
  g_assert_true (strstr (qtext, "scale") || strstr (qtext, "not quantized"));
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (owb_quantize_detail_get_keep_button (detail))));
  {
    /* the column scrolled so that the worst tensors end and the detail shows, beside the map */
    GtkWidget *paned = gtk_widget_get_first_child (GTK_WIDGET (page));
    GtkScrolledWindow *scroller = GTK_SCROLLED_WINDOW (gtk_paned_get_start_child (GTK_PANED (paned)));
    GtkWidget *content = gtk_viewport_get_child (GTK_VIEWPORT (gtk_scrolled_window_get_child (scroller)));
    graphene_point_t at;
    settle (0.3);
    if (gtk_widget_compute_point (GTK_WIDGET (detail), content, &GRAPHENE_POINT_INIT (0, 0), &at))
      {
        GtkAdjustment *v = gtk_scrolled_window_get_vadjustment (scroller);
        double detail_h = gtk_widget_get_height (GTK_WIDGET (detail));
        gtk_adjustment_set_value (v, at.y + detail_h - gtk_adjustment_get_page_size (v) + 12);
        g_autofree char *detail_shot = g_strconcat (png_prefix, "-detail.png", NULL);
        screenshot (GTK_WIDGET (page), detail_shot);
        gtk_adjustment_set_value (v, 0);
      }
  }

  /* Keep in Float: excluded, re-quantized with the same calibration, the comparison refreshed */
  guint n_excluded = strv_len (owb_quantize_page_get_excluded (page));
  t0 = g_get_monotonic_time ();
  owb_quantize_page_keep_selected_in_float (page);
  g_assert_true (owb_page_get_busy (OWB_PAGE (page)));
  wait_for (page_idle, page, 240, "the re-quantization");
  double keep_s = (g_get_monotonic_time () - t0) / 1e6;
  g_assert_cmpstr (owb_page_get_error (OWB_PAGE (page)), ==, NULL);
  g_assert_cmpuint (strv_len (owb_quantize_page_get_excluded (page)), ==, n_excluded + 1);
  g_assert_true (g_strv_contains (owb_quantize_page_get_excluded (page), kept));
  g_assert_true (owb_quantize_page_get_comparison (page) != c);
  g_assert_cmpuint (owb_quantize_page_get_n_calibrations (page), ==, 1);
  g_assert_cmpuint (owb_quantize_page_get_n_comparison_rows (page), >, 0);
  g_assert_true (isfinite (worst_output_sqnr (page)) || worst_output_sqnr (page) > 0);
  /* the kept node is float in the new model: none of its inputs is dequantized (its own output
   * may still be quantized for its readers, so its SQNR need not rise) */
  const OwbModel *qm = owb_quantize_page_get_quantized_model (page);
  const OwbNode *kept_node = NULL;
  for (guint i = 0; i < qm->graph->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (qm->graph->nodes, i);
      if (g_strcmp0 (n->name, kept) == 0)
        kept_node = n;
    }
  g_assert_nonnull (kept_node);
  for (int i = 0; i < kept_node->n_inputs; i++)
    for (guint k = 0; k < qm->graph->nodes->len; k++)
      {
        const OwbNode *p = g_ptr_array_index (qm->graph->nodes, k);
        if (strcmp (p->op_type, "DequantizeLinear") == 0 && g_strcmp0 (p->outputs[0], kept_node->inputs[i]) == 0)
          g_error ("kept node %s still reads %s dequantized", kept, kept_node->inputs[i]);
      }
  (void) node_db;
  /* the node kept stays selected; its detail says it is float now, and Keep in Float is spent */
  g_assert_cmpstr (owb_quantize_page_get_selected_node (page), ==, kept);
  g_assert_nonnull (strstr (owb_quantize_detail_get_quantization_text (detail), "Kept in float"));
  g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (owb_quantize_detail_get_keep_button (detail))));
  g_test_message ("%s: Keep in Float (%s) re-quantized in %.2f s, worst output %.2f dB", model_path, kept, keep_s,
                  worst_output_sqnr (page));
  g_free (shot);
  shot = g_strconcat (png_prefix, "-kept.png", NULL);
  screenshot (GTK_WIDGET (page), shot);

  /* and back: quantized again */
  owb_quantize_page_remove_excluded (page, kept);
  wait_for (page_idle, page, 240, "the re-quantization without the exclusion");
  g_assert_cmpuint (strv_len (owb_quantize_page_get_excluded (page)), ==, n_excluded);
  g_assert_cmpuint (owb_quantize_page_get_n_calibrations (page), ==, 1);

  if (recover)
    {
      t0 = g_get_monotonic_time ();
      owb_quantize_page_recover_accuracy (page, 40);
      wait_for (page_idle, page, 240, "Recover Accuracy");
      g_assert_cmpstr (owb_page_get_error (OWB_PAGE (page)), ==, NULL);
      g_assert_cmpuint (owb_quantize_page_get_n_calibrations (page), ==, 1);
      g_test_message ("%s: Recover Accuracy to 40 dB in %.2f s: %u nodes kept in float, worst output %.2f dB",
                      model_path, (g_get_monotonic_time () - t0) / 1e6, strv_len (owb_quantize_page_get_excluded (page)),
                      worst_output_sqnr (page));
      g_free (shot);
      shot = g_strconcat (png_prefix, "-recovered.png", NULL);
      screenshot (GTK_WIDGET (page), shot);
      /* the settings and results column whole, below the fold too */
      GtkWidget *paned = gtk_widget_get_first_child (GTK_WIDGET (page));
      GtkWidget *scroller = gtk_paned_get_start_child (GTK_PANED (paned));
      GtkWidget *content = gtk_viewport_get_child (GTK_VIEWPORT (gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (scroller))));
      g_free (shot);
      shot = g_strconcat (png_prefix, "-column.png", NULL);
      screenshot (content, shot);
    }

  /* Save As: never over the input, another file works */
  g_autoptr (GFile) input = g_file_new_for_path (model_path);
  g_autoptr (GError) error = NULL;
  g_assert_false (owb_quantize_page_save_to (page, input, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS);
  g_autofree char *dir = g_dir_make_tmp ("owb-quantize-page-XXXXXX", NULL);
  g_autofree char *out = g_build_filename (dir, "q.onnx", NULL);
  g_autoptr (GFile) out_file = g_file_new_for_path (out);
  g_clear_error (&error);
  g_assert_true (owb_quantize_page_save_to (page, out_file, &error));
  g_assert_no_error (error);
  g_autoptr (OwbModel) saved = owb_model_load_file (out, &error);
  g_assert_no_error (error);
  g_assert_nonnull (saved);
  g_remove (out);
  g_rmdir (dir);
  g_signal_handlers_disconnect_by_func (page, remember_name, &activated);
  return window;
}

static void forget_settings (void);

static void
test_sample (void)
{
  forget_settings ();
  g_autofree char *path = sample_path ("tiny-cnn.onnx");
  GtkWidget *window = quantize_flow (path, NULL, "quantize-tiny-cnn", TRUE);
  gtk_window_destroy (GTK_WINDOW (window));
}

static char *config_home;

/* Each test starts with no saved settings. */
static void
forget_settings (void)
{
  g_autofree char *path = owb_quantize_settings_dup_path ();
  g_assert_true (g_str_has_prefix (path, config_home));
  g_remove (path);
}

/* n images of width x height in P6, the pixels a seeded pattern. */
static char *
write_images (guint n, int width, int height)
{
  char *dir = g_dir_make_tmp ("owb-quantize-images-XXXXXX", NULL);
  g_assert_nonnull (dir);
  GRand *rand = g_rand_new_with_seed (7);
  for (guint k = 0; k < n; k++)
    {
      g_autoptr (GString) data = g_string_new (NULL);
      g_string_printf (data, "P6\n%d %d\n255\n", width + (int) k % 2 * 8, height);
      for (int i = 0; i < (width + (int) k % 2 * 8) * height * 3; i++)
        g_string_append_c (data, (char) g_rand_int_range (rand, 0, 256));
      g_autofree char *name = g_strdup_printf ("img_%u.ppm", k);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_assert_true (g_file_set_contents (path, data->str, (gssize) data->len, NULL));
    }
  g_rand_free (rand);
  return dir;
}

static void
write_labels (const char *dir, guint n)
{
  g_autoptr (GString) text = g_string_new ("# one class a sample\n");
  for (guint k = 0; k < n; k++)
    g_string_append_printf (text, "%u\n", k % 10);
  g_autofree char *path = g_build_filename (dir, "labels.txt", NULL);
  g_assert_true (g_file_set_contents (path, text->str, -1, NULL));
}

static void
remove_folder (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *entry;
  while (d && (entry = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (dir, entry, NULL);
      g_remove (path);
    }
  g_rmdir (dir);
}

static OwbQuantizePage *
page_in_window (OwbDocument *doc, GtkWidget **window)
{
  OwbQuantizePage *page = OWB_QUANTIZE_PAGE (owb_quantize_page_new ());
  *window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (*window), 1300, 900);
  gtk_window_set_child (GTK_WINDOW (*window), GTK_WIDGET (page));
  gtk_window_present (GTK_WINDOW (*window));
  owb_page_set_document (OWB_PAGE (page), doc);
  return page;
}

/* A page of the bundled sample (*doc) in a window, the settings of earlier tests forgotten. */
static OwbQuantizePage *
sample_page_in_window (OwbDocument **doc, GtkWidget **window)
{
  forget_settings ();
  *doc = load_sample ();
  return page_in_window (*doc, window);
}

static void
quantize_and_wait (OwbQuantizePage *page)
{
  owb_quantize_page_quantize (page);
  g_assert_true (owb_page_get_busy (OWB_PAGE (page)));
  wait_for (page_idle, page, 240, "the quantization");
  g_assert_cmpstr (owb_page_get_error (OWB_PAGE (page)), ==, NULL);
  g_assert_nonnull (owb_quantize_page_get_comparison (page));
}

/* A calibration folder that is not one: the error is shown, nothing crashes, the page works on. */
static void
test_bad_folder (void)
{
  g_autoptr (OwbDocument) doc = NULL;
  GtkWidget *window;
  OwbQuantizePage *page = sample_page_in_window (&doc, &window);
  g_autofree char *empty = g_dir_make_tmp ("owb-quantize-empty-XXXXXX", NULL);
  owb_quantize_page_set_calibration_dir (page, empty);
  owb_quantize_page_quantize (page);
  wait_for (page_idle, page, 120, "the failing quantization");
  g_assert_nonnull (owb_page_get_error (OWB_PAGE (page)));
  g_assert_null (owb_quantize_page_get_comparison (page));
  /* cancelled at once: says so */
  owb_quantize_page_set_calibration_dir (page, NULL);
  owb_quantize_page_quantize (page);
  owb_page_cancel (OWB_PAGE (page));
  wait_for (page_idle, page, 120, "the cancelled quantization");
  g_assert_nonnull (owb_page_get_error (OWB_PAGE (page)));
  /* and then it works */
  owb_quantize_page_quantize (page);
  wait_for (page_idle, page, 120, "the quantization");
  g_assert_null (owb_page_get_error (OWB_PAGE (page)));
  g_assert_nonnull (owb_quantize_page_get_comparison (page));
  g_rmdir (empty);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* An image folder: read as images (not samples), normalized as chosen, said so in the results. */
static void
test_images (void)
{
  g_autoptr (OwbDocument) doc = NULL;
  GtkWidget *window;
  OwbQuantizePage *page = sample_page_in_window (&doc, &window);
  g_autofree char *dir = write_images (5, 32, 32);
  owb_quantize_page_set_calibration_dir (page, dir);
  g_assert_true (owb_quantize_page_get_calibration_images (page));
  owb_quantize_page_set_normalization (page, OWB_QUANTIZE_NORMALIZATION_IMAGENET);
  quantize_and_wait (page);
  g_test_message ("summary: %s", owb_quantize_page_get_summary (page));
  g_autofree char *expected = g_strdup_printf ("5 images from %s, ImageNet normalization", dir);
  g_assert_nonnull (strstr (owb_quantize_page_get_summary (page), expected));
  g_assert_cmpuint (owb_quantize_page_get_comparison (page)->n_samples, ==, 5);
  g_assert_null (owb_quantize_page_get_accuracy_text (page));
  g_assert_null (owb_quantize_page_get_labels_message (page));
  double imagenet_sqnr = worst_output_sqnr (page);
  g_assert_true (isfinite (imagenet_sqnr));
  screenshot (GTK_WIDGET (page), "quantize-images.png");

  /* another normalization and BGR: calibrated again, said so */
  owb_quantize_page_set_normalization (page, OWB_QUANTIZE_NORMALIZATION_SYMMETRIC);
  owb_quantize_page_set_bgr (page, TRUE);
  quantize_and_wait (page);
  g_assert_cmpuint (owb_quantize_page_get_n_calibrations (page), ==, 2);
  g_assert_nonnull (strstr (owb_quantize_page_get_summary (page), "[-1, 1] normalization, BGR"));

  /* custom: one number or three; a bad one is refused before any work */
  owb_quantize_page_set_normalization (page, OWB_QUANTIZE_NORMALIZATION_CUSTOM);
  owb_quantize_page_set_custom_normalization (page, "0.3", "0");
  owb_quantize_page_quantize (page);
  g_assert_false (owb_page_get_busy (OWB_PAGE (page)));
  g_assert_nonnull (owb_page_get_error (OWB_PAGE (page)));
  owb_quantize_page_set_custom_normalization (page, "0.3", "0.25, 0.5, 1");
  quantize_and_wait (page);
  g_assert_nonnull (strstr (owb_quantize_page_get_summary (page), "custom (mean 0.3, std 0.25, 0.5, 1)"));
  g_assert_cmpuint (owb_quantize_page_get_n_calibrations (page), ==, 3);

  /* a folder of samples in a subfolder is read as samples, images beside it or not */
  g_autofree char *sample = g_build_filename (dir, "test_data_set_0", NULL);
  g_assert_cmpint (g_mkdir (sample, 0700), ==, 0);
  g_autofree char *pb = g_build_filename (sample, "input_0.pb", NULL);
  g_assert_true (g_file_set_contents (pb, "", 0, NULL));
  owb_quantize_page_set_calibration_dir (page, NULL);
  owb_quantize_page_set_calibration_dir (page, dir);
  g_assert_false (owb_quantize_page_get_calibration_images (page));
  g_remove (pb);
  g_rmdir (sample);
  remove_folder (dir);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* labels.txt in the folder: the accuracy of both models; one of the wrong length: said, the run
 * goes on without it. */
static void
test_labels (void)
{
  g_autoptr (OwbDocument) doc = NULL;
  GtkWidget *window;
  OwbQuantizePage *page = sample_page_in_window (&doc, &window);
  g_autofree char *dir = write_images (6, 32, 32);
  write_labels (dir, 6);
  owb_quantize_page_set_calibration_dir (page, dir);
  quantize_and_wait (page);
  const OwbQuantComparison *c = owb_quantize_page_get_comparison (page);
  gboolean has_accuracy = FALSE;
  for (guint i = 0; i < c->outputs->len; i++)
    has_accuracy |= ((const OwbQuantOutputDiff *) g_ptr_array_index (c->outputs, i))->has_accuracy;
  g_assert_true (has_accuracy);
  const char *accuracy = owb_quantize_page_get_accuracy_text (page);
  g_assert_nonnull (accuracy);
  g_test_message ("%s", accuracy);
  g_assert_true (g_str_has_prefix (accuracy, "Accuracy: float "));
  g_assert_nonnull (strstr (accuracy, ", quantized "));
  g_assert_null (owb_quantize_page_get_labels_message (page));
  g_assert_nonnull (strstr (owb_quantize_page_get_summary (page), "6 labels from labels.txt"));
  screenshot (GTK_WIDGET (page), "quantize-labels.png");

  /* fewer samples at most: the labels cut to them */
  owb_quantize_page_set_max_samples (page, 4);
  quantize_and_wait (page);
  g_assert_nonnull (owb_quantize_page_get_accuracy_text (page));
  g_assert_cmpuint (owb_quantize_page_get_comparison (page)->n_samples, ==, 4);

  /* one line short */
  owb_quantize_page_set_max_samples (page, 0);
  write_labels (dir, 5);
  quantize_and_wait (page);
  g_assert_null (owb_quantize_page_get_accuracy_text (page));
  const char *message = owb_quantize_page_get_labels_message (page);
  g_assert_nonnull (message);
  g_test_message ("%s", message);
  g_assert_nonnull (strstr (message, "5 lines for 6 samples"));
  screenshot (GTK_WIDGET (page), "quantize-labels-mismatch.png");

  /* not classes at all: also said, not an error */
  g_autofree char *labels = g_build_filename (dir, "labels.txt", NULL);
  g_assert_true (g_file_set_contents (labels, "a\nb\nc\nd\ne\nf\n", -1, NULL));
  quantize_and_wait (page);
  g_assert_nonnull (owb_quantize_page_get_labels_message (page));
  g_assert_null (owb_quantize_page_get_accuracy_text (page));
  remove_folder (dir);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Recover Accuracy to an accuracy drop: offered only with labels.txt, run through the library's
 * fallback with the labels (its report in accuracies, not dB), the calibration reused. */
static void
test_accuracy_target (void)
{
  g_autoptr (OwbDocument) doc = NULL;
  GtkWidget *window;
  OwbQuantizePage *page = sample_page_in_window (&doc, &window);
  g_autofree char *dir = write_images (6, 32, 32);
  owb_quantize_page_set_calibration_dir (page, dir);
  /* no labels: the SQNR target only */
  g_assert_false (owb_quantize_page_get_has_labels (page));
  g_assert_false (owb_quantize_page_set_recover_target (page, OWB_QUANTIZE_TARGET_ACCURACY_DROP, 1));
  write_labels (dir, 6);
  owb_quantize_page_set_calibration_dir (page, NULL);
  owb_quantize_page_set_calibration_dir (page, dir);
  g_assert_true (owb_quantize_page_get_has_labels (page));
  quantize_and_wait (page);
  g_assert_null (owb_quantize_page_get_fallback_text (page));

  g_assert_true (owb_quantize_page_set_recover_target (page, OWB_QUANTIZE_TARGET_ACCURACY_DROP, 0));
  owb_quantize_page_recover (page);
  g_assert_true (owb_page_get_busy (OWB_PAGE (page)));
  wait_for (page_idle, page, 240, "Recover Accuracy to an accuracy drop");
  g_assert_cmpstr (owb_page_get_error (OWB_PAGE (page)), ==, NULL);
  const char *text = owb_quantize_page_get_fallback_text (page);
  g_assert_nonnull (text);
  g_test_message ("%s", text);
  g_assert_true (g_str_has_prefix (text, "Accuracy drop at most 0.0 % "));
  g_assert_null (strstr (text, " dB "));
  g_assert_cmpuint (owb_quantize_page_get_n_calibrations (page), ==, 1);
  /* met: the quantized model the page shows is as accurate as float on these labels */
  const OwbQuantComparison *c = owb_quantize_page_get_comparison (page);
  for (guint i = 0; i < c->outputs->len; i++)
    {
      const OwbQuantOutputDiff *o = g_ptr_array_index (c->outputs, i);
      if (o->has_accuracy && strstr (text, " met after "))
        g_assert_cmpfloat (o->accuracy_b, >=, o->accuracy_a - 1e-12);
    }
  screenshot (GTK_WIDGET (page), "quantize-accuracy-target.png");

  /* back to an SQNR target: the same button, in dB */
  g_assert_true (owb_quantize_page_set_recover_target (page, OWB_QUANTIZE_TARGET_SQNR, 20));
  owb_quantize_page_recover (page);
  wait_for (page_idle, page, 240, "Recover Accuracy to an SQNR");
  g_assert_cmpstr (owb_page_get_error (OWB_PAGE (page)), ==, NULL);
  g_assert_true (g_str_has_prefix (owb_quantize_page_get_fallback_text (page), "Target 20 dB "));
  /* the labels gone: the kind falls back to SQNR */
  g_autofree char *labels = g_build_filename (dir, "labels.txt", NULL);
  g_remove (labels);
  owb_quantize_page_set_calibration_dir (page, NULL);
  owb_quantize_page_set_calibration_dir (page, dir);
  g_assert_false (owb_quantize_page_get_has_labels (page));
  remove_folder (dir);
  gtk_window_destroy (GTK_WINDOW (window));
}

static guint
count_initializers (const OwbModel *model, OwbDataType type)
{
  guint n = 0;
  for (guint i = 0; i < model->graph->initializers->len; i++)
    n += ((const OwbTensor *) g_ptr_array_index (model->graph->initializers, i))->dtype == type;
  return n;
}

/* The node of `op_type` reads nothing dequantized. */
static gboolean
reads_float (const OwbModel *model, const char *op_type)
{
  gboolean found = FALSE;
  for (guint i = 0; i < model->graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (model->graph->nodes, i);
      if (strcmp (node->op_type, op_type) != 0)
        continue;
      found = TRUE;
      for (int k = 0; k < node->n_inputs; k++)
        for (guint j = 0; j < model->graph->nodes->len; j++)
          {
            const OwbNode *p = g_ptr_array_index (model->graph->nodes, j);
            if (strcmp (p->op_type, "DequantizeLinear") == 0 && g_strcmp0 (p->outputs[0], node->inputs[k]) == 0)
              return FALSE;
          }
    }
  return found;
}

/* Weight type and excluded op types reach the quantizer, without calibrating again. */
static void
test_types_and_ops (void)
{
  g_autoptr (OwbDocument) doc = NULL;
  GtkWidget *window;
  OwbQuantizePage *page = sample_page_in_window (&doc, &window);
  quantize_and_wait (page);
  const OwbModel *q = owb_quantize_page_get_quantized_model (page);
  g_assert_cmpuint (count_initializers (q, OWB_TYPE_INT8), >, 0);
  g_assert_false (reads_float (q, "Softmax"));
  g_assert_false (reads_float (q, "Gemm"));

  owb_quantize_page_set_weight_type (page, OWB_TYPE_UINT8);
  owb_quantize_page_set_exclude_ops (page, " Softmax,Gemm  Softmax");
  quantize_and_wait (page);
  g_assert_cmpuint (owb_quantize_page_get_n_calibrations (page), ==, 1);
  q = owb_quantize_page_get_quantized_model (page);
  /* u8 activations and u8 weights: no int8 tensor is left */
  g_assert_cmpuint (count_initializers (q, OWB_TYPE_INT8), ==, 0);
  g_assert_cmpuint (count_initializers (q, OWB_TYPE_UINT8), >, 0);
  g_assert_true (reads_float (q, "Softmax"));
  g_assert_true (reads_float (q, "Gemm"));
  /* the map paints them kept in float */
  OwbGraphLayer *layer = owb_graph_view_get_layer (owb_quantize_page_get_graph_view (page));
  g_assert_nonnull (layer);
  const OwbModel *fm = owb_document_get_model (doc);
  for (guint i = 0; i < fm->graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (fm->graph->nodes, i);
      if (strcmp (node->op_type, "Softmax") == 0)
        {
          g_autofree char *badge = owb_graph_layer_dup_badge (layer, node);
          g_assert_cmpstr (badge, ==, "float");
        }
    }
  g_test_message ("summary: %s", owb_quantize_page_get_summary (page));
  g_assert_nonnull (strstr (owb_quantize_page_get_summary (page), "per-channel u8 weights"));
  g_assert_nonnull (strstr (owb_quantize_page_get_summary (page), "op types kept in float: Softmax, Gemm"));
  screenshot (GTK_WIDGET (page), "quantize-types.png");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Saved after a successful quantization, for that model file; restored by a second page. */
static void
test_settings (void)
{
  g_autofree char *path = sample_path ("tiny-cnn.onnx");
  g_autoptr (OwbDocument) doc = NULL;
  GtkWidget *window;
  OwbQuantizePage *page = sample_page_in_window (&doc, &window);
  g_autofree char *dir = write_images (3, 32, 32);
  owb_quantize_page_set_calibration_dir (page, dir);
  owb_quantize_page_set_max_samples (page, 2);
  owb_quantize_page_set_method (page, OWB_QUANT_PERCENTILE);
  owb_quantize_page_set_per_channel (page, FALSE);
  owb_quantize_page_set_activation_type (page, OWB_TYPE_INT8);
  owb_quantize_page_set_weight_type (page, OWB_TYPE_UINT8);
  owb_quantize_page_set_normalization (page, OWB_QUANTIZE_NORMALIZATION_CUSTOM);
  owb_quantize_page_set_custom_normalization (page, "0.305401", "0.32369");
  owb_quantize_page_set_bgr (page, TRUE);
  owb_quantize_page_set_exclude_ops (page, "Softmax");
  /* nothing is saved before a quantization succeeds */
  g_autofree char *file = owb_quantize_settings_dup_path ();
  g_assert_false (g_file_test (file, G_FILE_TEST_EXISTS));
  quantize_and_wait (page);
  g_assert_true (g_file_test (file, G_FILE_TEST_EXISTS));
  owb_quantize_page_select_worst (page, 0);
  g_autofree char *kept = g_strdup (owb_quantize_page_get_selected_node (page));
  g_assert_nonnull (kept);
  owb_quantize_page_keep_selected_in_float (page);
  wait_for (page_idle, page, 240, "Keep in Float");
  g_assert_cmpstr (owb_page_get_error (OWB_PAGE (page)), ==, NULL);
  gtk_window_destroy (GTK_WINDOW (window));

  /* another model's group is left alone */
  g_autoptr (GKeyFile) keys = g_key_file_new ();
  g_assert_true (g_key_file_load_from_file (keys, file, G_KEY_FILE_NONE, NULL));
  g_key_file_set_string (keys, "/elsewhere/other.onnx", "method", "entropy");
  g_assert_true (g_key_file_save_to_file (keys, file, NULL));

  /* a second page, the same model file loaded again */
  g_autoptr (OwbDocument) doc2 = load_document (path);
  page = page_in_window (doc2, &window);
  g_assert_cmpstr (owb_quantize_page_get_calibration_dir (page), ==, dir);
  g_assert_true (owb_quantize_page_get_calibration_images (page));
  g_assert_cmpuint (owb_quantize_page_get_max_samples (page), ==, 2);
  g_assert_cmpint (owb_quantize_page_get_method (page), ==, OWB_QUANT_PERCENTILE);
  g_assert_false (owb_quantize_page_get_per_channel (page));
  g_assert_cmpint (owb_quantize_page_get_activation_type (page), ==, OWB_TYPE_INT8);
  g_assert_cmpint (owb_quantize_page_get_weight_type (page), ==, OWB_TYPE_UINT8);
  g_assert_cmpint (owb_quantize_page_get_normalization (page), ==, OWB_QUANTIZE_NORMALIZATION_CUSTOM);
  g_assert_true (owb_quantize_page_get_bgr (page));
  g_assert_cmpstr (owb_quantize_page_get_exclude_ops (page), ==, "Softmax");
  const char *const *excluded = owb_quantize_page_get_excluded (page);
  g_assert_cmpuint (strv_len (excluded), ==, 1);
  g_assert_cmpstr (excluded[0], ==, kept);
  /* and it quantizes with them: the custom normalization as saved */
  quantize_and_wait (page);
  g_test_message ("restored: %s", owb_quantize_page_get_summary (page));
  g_assert_nonnull (strstr (owb_quantize_page_get_summary (page), "custom (mean 0.305401, std 0.32369)"));
  g_assert_nonnull (strstr (owb_quantize_page_get_summary (page), "percentile, per-tensor u8 weights, s8 activations"));
  screenshot (GTK_WIDGET (page), "quantize-restored.png");
  gtk_window_destroy (GTK_WINDOW (window));

  g_clear_pointer (&keys, g_key_file_unref);
  keys = g_key_file_new ();
  g_assert_true (g_key_file_load_from_file (keys, file, G_KEY_FILE_NONE, NULL));
  g_assert_true (g_key_file_has_group (keys, "/elsewhere/other.onnx"));
  g_assert_true (g_key_file_has_group (keys, path));
  remove_folder (dir);
}

static void
test_dev_model (void)
{
  const char *model = g_getenv ("OWB_QUANT_MODEL");
  if (!model)
    {
      g_test_skip ("set OWB_QUANT_MODEL (and OWB_QUANT_CALIB) to a model to quantize");
      return;
    }
  GtkWidget *window = quantize_flow (model, g_getenv ("OWB_QUANT_CALIB"), "quantize-dev", TRUE);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  /* before anything reads it: g_get_user_config_dir () keeps the first value */
  config_home = g_dir_make_tmp ("owb-quantize-config-XXXXXX", NULL);
  g_setenv ("XDG_CONFIG_HOME", config_home, TRUE);
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_assert_nonnull (owb_ui_get_resource ());
  g_test_add_func ("/quantize-page/sample", test_sample);
  g_test_add_func ("/quantize-page/bad-folder", test_bad_folder);
  g_test_add_func ("/quantize-page/images", test_images);
  g_test_add_func ("/quantize-page/labels", test_labels);
  g_test_add_func ("/quantize-page/accuracy-target", test_accuracy_target);
  g_test_add_func ("/quantize-page/types-and-ops", test_types_and_ops);
  g_test_add_func ("/quantize-page/settings", test_settings);
  g_test_add_func ("/quantize-page/dev-model", test_dev_model);
  int status = g_test_run ();
  g_autofree char *settings = owb_quantize_settings_dup_path ();
  g_autofree char *settings_dir = g_path_get_dirname (settings);
  g_remove (settings);
  g_rmdir (settings_dir);
  g_rmdir (config_home);
  g_free (config_home);
  return status;
}
