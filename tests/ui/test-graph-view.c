/* test-graph-view.c: the graph canvas and its pane under Xvfb: building scenes in a thread, zoom,
 * selection, find, subgraphs, highlight, cancel, export, and what the pane shows. */
#include <gtk/gtk.h>
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "owb-graph-pane.h"
#include "owb-graph-view.h"
#include "owb-graph-layer-providers.h"
#include "owb-graph-scene.h"
#include "owb-graph-scene-private.h"
#include "owb-resources.h"
#include "owb-page-util.h"

/* ---- models ---- */

static void
add_tensor_value (GPtrArray *list, const char *name, OwbDataType dtype, int rank, const int64_t *dims)
{
  OwbValueType type;
  owb_value_type_init_tensor (&type, dtype, rank, dims);
  g_ptr_array_add (list, owb_value_info_new (name, &type));
}

static OwbNode *
add_node (OwbGraph *graph, const char *op, const char *name, const char *in1, const char *in2, const char *out)
{
  OwbNode *node = owb_node_new (op, "", name);
  owb_node_add_input (node, in1);
  if (in2)
    owb_node_add_input (node, in2);
  owb_node_add_output (node, out);
  owb_graph_add_node (graph, node);
  return node;
}

static OwbModel *
model_new (void)
{
  OwbModel *model = owb_model_new ();
  model->ir_version = 8;
  owb_model_set_opset (model, "", 17);
  model->graph = owb_graph_new ("test");
  model->graph->model = model;
  return model;
}

static void
model_finish (OwbModel *model)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_model_validate (model, &error));
  g_assert_no_error (error);
  g_assert_true (owb_model_infer_shapes (model, &error));
  g_assert_no_error (error);
}

/* x → Conv(W, B) → Relu → Add(x) → MatMul(M) → y, one relu per name, so find counts are known. */
static OwbModel *
small_model_new (void)
{
  OwbModel *model = model_new ();
  OwbGraph *g = model->graph;
  int64_t xdims[] = { 1, 3, 8, 8 }, wdims[] = { 3, 3, 3, 3 }, bdims[] = { 3 }, mdims[] = { 8, 4 };
  add_tensor_value (g->inputs, "x", OWB_TYPE_FLOAT, 4, xdims);
  owb_graph_add_initializer (g, "W", owb_tensor_new (OWB_TYPE_FLOAT, 4, wdims, NULL));
  owb_graph_add_initializer (g, "B", owb_tensor_new (OWB_TYPE_FLOAT, 1, bdims, NULL));
  owb_graph_add_initializer (g, "M", owb_tensor_new (OWB_TYPE_FLOAT, 2, mdims, NULL));
  OwbNode *conv = add_node (g, "Conv", "conv1", "x", "W", "c");
  owb_node_add_input (conv, "B");
  int64_t *pads = g_new0 (int64_t, 4);
  for (int i = 0; i < 4; i++)
    pads[i] = 1;
  OwbAttribute *attr = owb_node_add_attribute (conv, "pads", OWB_ATTR_INTS);
  attr->ints = pads;
  attr->n = 4;
  add_node (g, "Relu", "relu1", "c", NULL, "r");
  add_node (g, "Add", "add1", "r", "x", "a");
  add_node (g, "MatMul", "matmul1", "a", "M", "y");
  g_ptr_array_add (g->outputs, owb_value_info_new ("y", NULL));
  model_finish (model);
  return model;
}

/* x, cond → If(then: Relu(x), else: Sigmoid(x)) → y */
static OwbModel *
if_model_new (void)
{
  OwbModel *model = model_new ();
  OwbGraph *g = model->graph;
  int64_t xdims[] = { 2, 4 };
  add_tensor_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, xdims);
  add_tensor_value (g->inputs, "cond", OWB_TYPE_BOOL, 0, NULL);
  OwbNode *iff = owb_node_new ("If", "", "branch");
  owb_node_add_input (iff, "cond");
  owb_node_add_output (iff, "y");
  for (int b = 0; b < 2; b++)
    {
      OwbGraph *branch = owb_graph_new (b ? "else" : "then");
      add_node (branch, b ? "Sigmoid" : "Relu", b ? "sig" : "relu", "x", NULL, b ? "ye" : "yt");
      add_tensor_value (branch->outputs, b ? "ye" : "yt", OWB_TYPE_FLOAT, 2, xdims);
      owb_node_add_attribute (iff, b ? "else_branch" : "then_branch", OWB_ATTR_GRAPH)->g = branch;
    }
  owb_graph_add_node (g, iff);
  g_ptr_array_add (g->outputs, owb_value_info_new ("y", NULL));
  model_finish (model);
  return model;
}

/* Adds block i of a chain to g, reading prev; returns the name of its output. */
typedef char *(*AddBlock) (OwbGraph *g, guint i, const char *prev);

/* x [1, 16] through `n_blocks` blocks that add_block adds, each of them free to read the weight w
 * [16, 16]; the last block's output is the graph's. */
static OwbModel *
block_chain_model_new (guint n_blocks, AddBlock add_block)
{
  OwbModel *model = model_new ();
  OwbGraph *g = model->graph;
  int64_t dims[] = { 1, 16 }, wdims[] = { 16, 16 };
  add_tensor_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, dims);
  owb_graph_add_initializer (g, "w", owb_tensor_new (OWB_TYPE_FLOAT, 2, wdims, NULL));
  g_autofree char *prev = g_strdup ("x");
  for (guint i = 0; i < n_blocks; i++)
    {
      char *out = add_block (g, i, prev);
      g_free (prev);
      prev = out;
    }
  g_ptr_array_add (g->outputs, owb_value_info_new (prev, NULL));
  model_finish (model);
  return model;
}

/* MatMul, Add (the skip connection) and Relu in the scope /encoder/layer.i. */
static char *
add_scoped_block (OwbGraph *g, guint i, const char *prev)
{
  g_autofree char *scope = g_strdup_printf ("/encoder/layer.%u", i);
  g_autofree char *mm = g_strdup_printf ("%s/MatMul", scope), *mm_out = g_strdup_printf ("%s/mm", scope);
  g_autofree char *add = g_strdup_printf ("%s/Add", scope), *add_out = g_strdup_printf ("%s/add", scope);
  g_autofree char *relu = g_strdup_printf ("%s/Relu", scope), *relu_out = g_strdup_printf ("%s/out", scope);
  add_node (g, "MatMul", mm, prev, "w", mm_out);
  add_node (g, "Add", add, mm_out, prev, add_out);
  add_node (g, "Relu", relu, add_out, NULL, relu_out);
  return g_steal_pointer (&relu_out);
}

/* A network-like chain of `n_blocks` scoped blocks (MatMul, Add, Relu) with skip connections. */
static OwbModel *
scoped_model_new (guint n_blocks)
{
  return block_chain_model_new (n_blocks, add_scoped_block);
}

/* n Relus one after the other from `from`, named name_prefix0.. writing out_prefix0..; returns the
 * last one's output. */
static char *
add_relu_chain (OwbGraph *g, const char *from, int n, const char *name_prefix, const char *out_prefix)
{
  char *prev = g_strdup (from);
  for (int i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("%s%d", name_prefix, i);
      char *out = g_strdup_printf ("%s%d", out_prefix, i);
      add_node (g, "Relu", name, prev, NULL, out);
      g_free (prev);
      prev = out;
    }
  return prev;
}

/* x → a chain of 30 Relus → Concat ← 80 Sigmoids ← y: the top of the drawing is the chain's
 * start, at one side; the wide part is further down. */
static OwbModel *
side_chain_model_new (void)
{
  OwbModel *model = model_new ();
  OwbGraph *g = model->graph;
  int64_t dims[] = { 1, 8 };
  add_tensor_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, dims);
  add_tensor_value (g->inputs, "y", OWB_TYPE_FLOAT, 2, dims);
  g_autofree char *prev = add_relu_chain (g, "x", 30, "chain", "c");
  OwbNode *concat = owb_node_new ("Concat", "", "concat");
  owb_node_add_input (concat, prev);
  for (int i = 0; i < 80; i++)
    {
      g_autofree char *name = g_strdup_printf ("fan%d", i), *out = g_strdup_printf ("f%d", i);
      add_node (g, "Sigmoid", name, "y", NULL, out);
      owb_node_add_input (concat, out);
    }
  owb_node_add_output (concat, "out");
  OwbAttribute *axis = owb_node_add_attribute (concat, "axis", OWB_ATTR_INT);
  axis->i = 1;
  owb_graph_add_node (g, concat);
  g_ptr_array_add (g->outputs, owb_value_info_new ("out", NULL));
  model_finish (model);
  return model;
}

/* ---- helpers ---- */

static gboolean
wait_for (gboolean (*done) (gpointer), gpointer data, guint timeout_ms)
{
  gint64 end = g_get_monotonic_time () + timeout_ms * (gint64) 1000;
  while (!done (data))
    {
      if (g_get_monotonic_time () > end)
        return FALSE;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  return TRUE;
}

static gboolean
view_idle (gpointer data)
{
  return !owb_graph_view_get_busy (data);
}

static gboolean
view_ready (gpointer data)
{
  return !owb_graph_view_get_busy (data) && owb_graph_view_has_scene (data);
}

static void
spin (guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * (gint64) 1000;
  while (g_get_monotonic_time () < end)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
}

static gboolean
mapped_and_allocated (gpointer widget)
{
  return gtk_widget_get_mapped (widget) && gtk_widget_get_width (widget) > 1;
}

static GtkWidget *
window_with (GtkWidget *child, int width, int height)
{
  GtkWidget *window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_set_child (GTK_WINDOW (window), child);
  gtk_window_present (GTK_WINDOW (window));
  /* Mapping under a loaded Xvfb can take a while: wait for it, not for a fixed time. */
  g_assert_true (wait_for (mapped_and_allocated, child, 10000));
  spin (100);
  return window;
}

static void
show_model (OwbGraphView *view, OwbModel *model)
{
  owb_graph_view_set_graph (view, model->graph, owb_model_ref (model), (GDestroyNotify) owb_model_unref);
  g_assert_true (wait_for (view_ready, view, 30000));
  spin (100);
}

static void
count_signal (gpointer instance, gpointer data)
{
  (*(guint *) data)++;
}

/* Renders a widget as it is drawn on screen, through its window's renderer. */
static void
painted (GdkFrameClock *clock, gpointer data)
{
  *(gboolean *) data = TRUE;
}

static gboolean
is_true (gpointer data)
{
  return *(gboolean *) data;
}

static GdkTexture *
render_widget (GtkWidget *widget)
{
  /* Snapshot what was laid out and painted: wait for the next frame's after-paint. */
  gboolean done = FALSE;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
  gulong id = g_signal_connect (clock, "after-paint", G_CALLBACK (painted), &done);
  gtk_widget_queue_draw (widget);
  g_assert_true (wait_for (is_true, &done, 10000));
  g_signal_handler_disconnect (clock, id);
  g_autoptr (GError) error = NULL;
  GdkTexture *texture = owb_page_render_widget (widget, &error);
  g_assert_no_error (error);
  return texture;
}

/* Number of distinct colours among sampled pixels: a drawn graph has many, a blank one has one. */
static guint
count_colors (GdkTexture *texture)
{
  int width = gdk_texture_get_width (texture), height = gdk_texture_get_height (texture);
  gsize stride = (gsize) width * 4;
  g_autofree guchar *pixels = g_malloc (stride * height);
  gdk_texture_download (texture, pixels, stride);
  g_autoptr (GHashTable) colors = g_hash_table_new (NULL, NULL);
  for (int y = 0; y < height; y += 2)
    for (int x = 0; x < width; x += 2)
      {
        guint32 value;
        memcpy (&value, pixels + y * stride + x * 4, 4);
        g_hash_table_add (colors, GUINT_TO_POINTER (value));
      }
  return g_hash_table_size (colors);
}

static void
save_screenshot (GdkTexture *texture, const char *name)
{
  const char *dir = g_getenv ("OWB_TEST_SCREENSHOT_DIR");
  if (!dir)
    return;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("screenshot: %s", path);
}

/* Widget coordinates of the centre of scene node `index`, scrolled into view first. */
static void
box_center_on_screen (OwbGraphView *view, int index, double *x, double *y)
{
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  const OwbSceneNode *node = owb_graph_scene_get_node (scene, index);
  double zoom = owb_graph_view_get_zoom (view), sx, sy;
  owb_graph_view_get_scroll (view, &sx, &sy);
  double cx = (node->x + node->width / 2 - sx) * zoom, cy = (node->y + node->height / 2 - sy) * zoom;
  int width = gtk_widget_get_width (GTK_WIDGET (view)), height = gtk_widget_get_height (GTK_WIDGET (view));
  owb_graph_view_scroll_by (view, cx - width / 2.0, cy - height / 2.0);
  owb_graph_view_get_scroll (view, &sx, &sy);
  *x = (node->x + node->width / 2 - sx) * zoom;
  *y = (node->y + node->height / 2 - sy) * zoom;
}

static int
op_index (OwbGraphView *view, const OwbNode *node)
{
  return owb_graph_scene_find_op (owb_graph_view_get_scene (view), node);
}

static GtkWidget *find_child (GtkWidget *widget, GType type, const char *text);

/* ---- tests ---- */

static void
test_zoom_select_find (void)
{
  g_autoptr (OwbModel) model = small_model_new ();
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 800, 600);
  guint selection_changes = 0;
  g_signal_connect (view, "selection-changed", G_CALLBACK (count_signal), &selection_changes);

  show_model (view, model);
  g_assert_true (owb_graph_view_get_graph (view) == model->graph);
  g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 1);

  /* Zoom: fit, in, out. */
  owb_graph_view_zoom_to_fit (view);
  double fit = owb_graph_view_get_zoom (view);
  g_assert_cmpfloat (fit, >, 0);
  owb_graph_view_zoom_in (view);
  double in = owb_graph_view_get_zoom (view);
  g_assert_cmpfloat (in, >, fit);
  owb_graph_view_zoom_out (view);
  owb_graph_view_zoom_out (view);
  g_assert_cmpfloat (owb_graph_view_get_zoom (view), <, fit);
  gtk_widget_activate_action (GTK_WIDGET (view), "graph.zoom-fit", NULL);
  g_assert_cmpfloat_with_epsilon (owb_graph_view_get_zoom (view), fit, 1e-9);
  gtk_widget_activate_action (GTK_WIDGET (view), "graph.zoom-in", NULL);
  g_assert_cmpfloat (owb_graph_view_get_zoom (view), >, fit);

  /* Select a node. */
  const OwbNode *relu = owb_graph_find_node (model->graph, "relu1");
  owb_graph_view_select_node (view, relu);
  g_assert_true (owb_graph_view_get_selected_node (view) == relu);
  g_assert_null (owb_graph_view_get_selected_tensor (view));
  g_assert_cmpuint (selection_changes, ==, 1);
  owb_graph_view_select_tensor (view, "W");
  g_assert_null (owb_graph_view_get_selected_node (view));
  g_assert_cmpstr (owb_graph_view_get_selected_tensor (view), ==, "W");
  g_assert_cmpuint (selection_changes, ==, 2);

  /* Find: "1" is in every node name; "relu" only in one node (by name and op). */
  g_assert_cmpuint (owb_graph_view_find (view, "RELU"), ==, 1);
  g_assert_true (owb_graph_view_get_selected_node (view) == relu);
  g_assert_cmpuint (owb_graph_view_find (view, "no-such-thing"), ==, 0);
  g_assert_cmpint (owb_graph_view_get_match_index (view), ==, -1);
  guint n = owb_graph_view_find (view, "1");
  g_assert_cmpuint (n, ==, 4);
  g_assert_cmpint (owb_graph_view_get_match_index (view), ==, 0);
  for (guint i = 1; i < n; i++)
    {
      owb_graph_view_find_next (view);
      g_assert_cmpint (owb_graph_view_get_match_index (view), ==, (int) i);
    }
  owb_graph_view_find_next (view);
  g_assert_cmpint (owb_graph_view_get_match_index (view), ==, 0);
  owb_graph_view_find_previous (view);
  g_assert_cmpint (owb_graph_view_get_match_index (view), ==, (int) n - 1);
  gtk_widget_activate_action (GTK_WIDGET (view), "graph.find-next", NULL);
  g_assert_cmpint (owb_graph_view_get_match_index (view), ==, 0);

  /* Clicks: on a box selects its node, on empty canvas clears, on an initializer line selects
   * the initializer. */
  owb_graph_view_set_zoom (view, 1.0);
  const OwbNode *matmul = owb_graph_find_node (model->graph, "matmul1");
  double x, y;
  box_center_on_screen (view, op_index (view, matmul), &x, &y);
  owb_graph_view_click (view, x, y, 1);
  g_assert_true (owb_graph_view_get_selected_node (view) == matmul);
  owb_graph_view_click (view, 2, 2, 1);
  g_assert_null (owb_graph_view_get_selected_node (view));
  g_assert_null (owb_graph_view_get_selected_tensor (view));
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  int conv_index = op_index (view, owb_graph_find_node (model->graph, "conv1"));
  const OwbSceneNode *conv_box = owb_graph_scene_get_node (scene, conv_index);
  guint w_line = 0;
  while (w_line < conv_box->n_lines && g_strcmp0 (conv_box->lines[w_line].tensor, "W") != 0)
    w_line++;
  g_assert_cmpuint (w_line, <, conv_box->n_lines);
  box_center_on_screen (view, conv_index, &x, &y);
  double sx, sy;
  owb_graph_view_get_scroll (view, &sx, &sy);
  double line_y = conv_box->y + 8 + 20 + 16 * w_line;  /* default padding, title and line heights */
  for (double ly = line_y; ly < line_y + 30; ly += 2)
    if (owb_graph_scene_hit_line (scene, conv_index, conv_box->x + conv_box->width / 2, ly) == (int) w_line)
      {
        owb_graph_view_click (view, x, (ly + 1 - sy) * owb_graph_view_get_zoom (view), 1);
        break;
      }
  g_assert_cmpstr (owb_graph_view_get_selected_tensor (view), ==, "W");
  g_assert_null (owb_graph_view_get_selected_node (view));

  /* Highlight. */
  const char *names[] = { "conv1", "add1", "not-a-node", NULL };
  owb_graph_view_set_highlight (view, names);
  g_assert_cmpuint (owb_graph_view_get_n_highlighted (view), ==, 2);
  owb_graph_view_set_highlight (view, NULL);
  g_assert_cmpuint (owb_graph_view_get_n_highlighted (view), ==, 0);

  /* Zoomed far out (plain boxes, straight edges) it still draws the graph. */
  owb_graph_view_zoom_to_fit (view);
  owb_graph_view_set_zoom (view, 0.2);
  g_autoptr (GdkTexture) far = render_widget (GTK_WIDGET (view));
  save_screenshot (far, "graph-view-far.png");
  g_assert_cmpuint (count_colors (far), >, 3);

  /* It draws: more than the background colour. */
  owb_graph_view_set_zoom (view, 1.0);
  owb_graph_view_select_node (view, owb_graph_find_node (model->graph, "add1"));
  spin (100);
  g_autoptr (GdkTexture) shot = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (count_colors (shot), >, 10);
  save_screenshot (shot, "graph-view-small.png");

  gtk_window_destroy (GTK_WINDOW (window));
}

static void
svg_root (GMarkupParseContext *context, const char *element, const char **names, const char **values,
          gpointer data, GError **error)
{
  if (!*(char **) data)
    *(char **) data = g_strdup (element);
}

static void
test_export (void)
{
  g_autoptr (OwbModel) model = small_model_new ();
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 640, 480);
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("owb-export-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *png_path = g_build_filename (dir, "graph.png", NULL);
  g_autofree char *svg_path = g_build_filename (dir, "graph.svg", NULL);
  g_autoptr (GFile) png = g_file_new_for_path (png_path);
  g_autoptr (GFile) svg = g_file_new_for_path (svg_path);

  /* Nothing shown yet: an error, not a crash or an empty file. */
  g_assert_false (owb_graph_view_export_png (view, png, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED);
  g_clear_error (&error);

  show_model (view, model);
  g_assert_true (owb_graph_view_export_png (view, png, &error));
  g_assert_no_error (error);
  g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (png_path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (texture), >, 50);
  g_assert_cmpint (gdk_texture_get_height (texture), >, 100);
  g_assert_cmpuint (count_colors (texture), >, 10);

  g_assert_true (owb_graph_view_export_svg (view, svg, &error));
  g_assert_no_error (error);
  g_autofree char *text = NULL;
  gsize length;
  g_assert_true (g_file_get_contents (svg_path, &text, &length, &error));
  g_autofree char *root = NULL;
  GMarkupParser parser = { svg_root, NULL, NULL, NULL, NULL };
  g_autoptr (GMarkupParseContext) context = g_markup_parse_context_new (&parser, 0, &root, NULL);
  const char *start = strstr (text, "<svg");
  g_assert_nonnull (start);
  g_assert_true (g_markup_parse_context_parse (context, start, -1, &error));
  g_assert_no_error (error);
  g_assert_true (g_markup_parse_context_end_parse (context, &error));
  g_assert_cmpstr (root, ==, "svg");
  g_assert_nonnull (strstr (text, "Conv"));

  /* A folder that does not exist: a GError. */
  g_autoptr (GFile) bad = g_file_new_for_path ("/nonexistent-owb-dir/graph.png");
  g_assert_false (owb_graph_view_export_png (view, bad, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  g_unlink (png_path);
  g_unlink (svg_path);
  g_rmdir (dir);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The bundled sample, tiny-cnn.onnx; NULL, the test skipped, where $OWB_SOURCE_ROOT is not set. */
static OwbModel *
load_sample_model (void)
{
  const char *root = g_getenv ("OWB_SOURCE_ROOT");
  if (!root)
    {
      g_test_skip ("OWB_SOURCE_ROOT is not set");
      return NULL;
    }
  g_autofree char *path = g_build_filename (root, "data", "samples", "tiny-cnn.onnx", NULL);
  g_autoptr (GError) error = NULL;
  OwbModel *model = owb_model_load_file (path, &error);
  g_assert_no_error (error);
  return model;
}

/* A view of model in an 800 x 900 window (*window), zoomed to fit and drawn. */
static OwbGraphView *
sample_view_in_window (OwbModel *model, GtkWidget **window)
{
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  *window = window_with (GTK_WIDGET (view), 800, 900);
  show_model (view, model);
  owb_graph_view_zoom_to_fit (view);
  spin (200);
  return view;
}

static void
test_tiny_cnn (void)
{
  g_autoptr (OwbModel) model = load_sample_model ();
  if (!model)
    return;
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_model_infer_shapes (model, &error));

  GtkWidget *pane = owb_graph_pane_new ();
  OwbGraphView *view = owb_graph_pane_get_view (OWB_GRAPH_PANE (pane));
  GtkWidget *window = window_with (pane, 1000, 700);
  show_model (view, model);
  g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 1);
  const OwbNode *first = g_ptr_array_index (model->graph->nodes, 0);
  owb_graph_view_select_node (view, first);
  g_assert_true (owb_graph_view_get_selected_node (view) == first);
  owb_graph_view_zoom_to_fit (view);
  spin (200);
  g_autoptr (GdkTexture) shot = render_widget (pane);
  g_assert_cmpuint (count_colors (shot), >, 20);
  save_screenshot (shot, "graph-pane-tiny-cnn.png");
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Pixels of a pure colour (within a little), sampled every other pixel. */
static guint
count_pixels_near (GdkTexture *texture, guchar r, guchar g, guchar b)
{
  int width = gdk_texture_get_width (texture), height = gdk_texture_get_height (texture);
  gsize stride = (gsize) width * 4;
  g_autofree guchar *pixels = g_malloc (stride * height);
  gdk_texture_download (texture, pixels, stride);
  guint n = 0;
  for (int y = 0; y < height; y += 2)
    for (int x = 0; x < width; x += 2)
      {
        /* GDK_MEMORY_DEFAULT: B, G, R, A */
        const guchar *px = pixels + y * stride + x * 4;
        n += abs (px[2] - r) < 12 && abs (px[1] - g) < 12 && abs (px[0] - b) < 12;
      }
  return n;
}

static gboolean
magenta_convs (const OwbNode *node, GdkRGBA *color, gpointer user_data)
{
  (*(guint *) user_data)++;
  if (g_strcmp0 (node->op_type, "Conv") != 0)
    return FALSE;
  *color = (GdkRGBA) { 1, 0, 1, 1 };
  return TRUE;
}

static char *
conv_badge (const OwbNode *node, gpointer user_data)
{
  return g_strcmp0 (node->op_type, "Conv") == 0 ? g_strdup ("12.3 dB") : NULL;
}

static gboolean
magenta_unclaimed (const char *provider, GdkRGBA *color, gpointer user_data)
{
  (*(guint *) user_data)++;
  if (provider)
    return FALSE;
  *color = (GdkRGBA) { 1, 0, 1, 1 };
  return TRUE;
}

/* Pixels that differ between two renderings of one size. */
static guint
count_differing (GdkTexture *a, GdkTexture *b)
{
  int width = gdk_texture_get_width (a), height = gdk_texture_get_height (a);
  g_assert_cmpint (width, ==, gdk_texture_get_width (b));
  g_assert_cmpint (height, ==, gdk_texture_get_height (b));
  gsize size = (gsize) width * 4 * height;
  g_autofree guchar *pa = g_malloc (size), *pb = g_malloc (size);
  gdk_texture_download (a, pa, (gsize) width * 4);
  gdk_texture_download (b, pb, (gsize) width * 4);
  guint n = 0;
  for (gsize i = 0; i < size; i += 4)
    n += memcmp (pa + i, pb + i, 4) != 0;
  return n;
}

/* Provider colours are a layer too, the view's default: set explicitly it draws the very pixels
 * the view draws without a layer; a provider layer colours only a box's stripe, where an overlay
 * tints the whole box. */
static void
test_provider_layer (void)
{
  g_autoptr (OwbModel) model = load_sample_model ();
  if (!model)
    return;
  GtkWidget *window = NULL;
  OwbGraphView *view = sample_view_in_window (model, &window);
  g_autoptr (GdkTexture) plain = render_widget (GTK_WIDGET (view));

  g_autoptr (OwbGraphLayer) providers = owb_graph_layer_providers_new ();
  g_assert_false (owb_graph_layer_get_tints_box (providers));
  GdkRGBA grey, cpu;
  g_assert_true (owb_graph_layer_get_box_color (providers, NULL, NULL, &grey));
  g_assert_true (owb_graph_layer_get_box_color (providers, NULL, "cpu", &cpu));
  g_assert_false (gdk_rgba_equal (&grey, &cpu));
  owb_graph_view_set_layer (view, providers);
  spin (100);
  g_autoptr (GdkTexture) explicit = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (count_differing (plain, explicit), ==, 0);

  /* a provider layer of its own: every op box's stripe magenta (the model is not partitioned, no
   * box is claimed), and only the stripes: fewer pixels change than where an overlay tints the
   * two Conv boxes whole */
  guint asked = 0;
  g_autoptr (OwbGraphLayer) magenta = owb_graph_layer_new_for_providers ("Test", magenta_unclaimed, &asked, NULL);
  owb_graph_view_set_layer (view, magenta);
  spin (100);
  g_autoptr (GdkTexture) striped = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (asked, >, 0);
  guint stripe_pixels = count_pixels_near (striped, 255, 0, 255);
  g_assert_cmpuint (stripe_pixels, >, 10);
  guint overlay_asked = 0;
  g_autoptr (OwbGraphLayer) overlay = owb_graph_layer_new ("Test", magenta_convs, NULL, &overlay_asked, NULL);
  g_assert_true (owb_graph_layer_get_tints_box (overlay));
  g_assert_false (owb_graph_layer_get_box_color (overlay, NULL, NULL, &grey)); /* no op: not its box */
  owb_graph_view_set_layer (view, overlay);
  spin (100);
  g_autoptr (GdkTexture) tinted = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (overlay_asked, >, 0);
  guint striped_changed = count_differing (plain, striped), tinted_changed = count_differing (plain, tinted);
  g_test_message ("stripes: %u pixels changed (%u magenta); two Convs tinted: %u changed", striped_changed,
                  stripe_pixels, tinted_changed);
  g_assert_cmpuint (striped_changed, >, 0);
  g_assert_cmpuint (tinted_changed, >, 2 * striped_changed);

  owb_graph_view_set_layer (view, NULL);
  spin (100);
  g_autoptr (GdkTexture) again = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (count_differing (plain, again), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A layer colours the boxes it knows (here the Convs) instead of their provider; the view asks it
 * while drawing and forgets it when the layer goes. */
static void
test_layer (void)
{
  g_autoptr (OwbModel) model = load_sample_model ();
  if (!model)
    return;
  GtkWidget *window = NULL;
  OwbGraphView *view = sample_view_in_window (model, &window);
  g_autoptr (GdkTexture) plain = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (count_pixels_near (plain, 255, 0, 255), ==, 0);

  guint asked = 0;
  OwbGraphLayer *layer = owb_graph_layer_new ("Test", magenta_convs, conv_badge, &asked, NULL);
  owb_graph_view_set_layer (view, layer);
  g_assert_true (owb_graph_view_get_layer (view) == layer);
  owb_graph_layer_unref (layer);
  spin (100);
  g_autoptr (GdkTexture) layered = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (asked, >, 0);
  g_assert_cmpuint (count_pixels_near (layered, 255, 0, 255), >, 10);
  save_screenshot (layered, "graph-view-layer.png");

  owb_graph_view_set_layer (view, NULL);
  spin (100);
  g_autoptr (GdkTexture) again = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (count_pixels_near (again, 255, 0, 255), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* A point on screen inside box `index` on its detail line `line` (-1: on the title row). */
static gboolean
line_on_screen (OwbGraphView *view, int index, int line, double *x, double *y)
{
  double cx, cy;
  box_center_on_screen (view, index, &cx, &cy);
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  const OwbSceneNode *node = owb_graph_scene_get_node (scene, index);
  double zoom = owb_graph_view_get_zoom (view), sx, sy;
  owb_graph_view_get_scroll (view, &sx, &sy);
  for (double py = node->y + 1; py < node->y + node->height - 1; py += 1)
    if (owb_graph_scene_hit_line (scene, index, node->x + node->width / 2, py) == line)
      {
        *x = cx;
        *y = (py + (line < 0 ? 0 : 3) - sy) * zoom;
        return TRUE;
      }
  return FALSE;
}

static GtkWidget *
find_button_named (GtkWidget *root, const char *name)
{
  for (GtkWidget *child = gtk_widget_get_first_child (root); child; child = gtk_widget_get_next_sibling (child))
    {
      if (GTK_IS_BUTTON (child))
        {
          const char *label = gtk_button_get_label (GTK_BUTTON (child));
          if (label && g_str_has_prefix (label, name))
            return child;
        }
      GtkWidget *found = find_button_named (child, name);
      if (found)
        return found;
    }
  return NULL;
}

static void
test_subgraph (void)
{
  g_autoptr (OwbModel) model = if_model_new ();
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 640, 480);
  show_model (view, model);
  guint path_changes = 0, selection_changes = 0;
  g_signal_connect (view, "path-changed", G_CALLBACK (count_signal), &path_changes);
  g_signal_connect (view, "selection-changed", G_CALLBACK (count_signal), &selection_changes);
  owb_graph_view_zoom_in (view);
  double zoom = owb_graph_view_get_zoom (view);

  const OwbNode *iff = owb_graph_find_node (model->graph, "branch");
  const OwbGraph *then_graph = owb_node_get_attribute (iff, "then_branch")->g;
  const OwbGraph *else_graph = owb_node_get_attribute (iff, "else_branch")->g;
  /* A double-click on the If's title asks which branch: a button for each. */
  double x, y;
  g_assert_true (line_on_screen (view, op_index (view, iff), -1, &x, &y));
  owb_graph_view_click (view, x, y, 1);
  g_assert_true (owb_graph_view_get_selected_node (view) == iff);
  owb_graph_view_click (view, x, y, 2);
  g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 1);
  GtkWidget *chooser = owb_graph_view_get_subgraph_chooser (view);
  g_assert_nonnull (chooser);
  g_assert_true (gtk_widget_get_visible (chooser));
  GtkWidget *then_button = find_button_named (chooser, "then_branch");
  g_assert_nonnull (find_button_named (chooser, "else_branch"));
  g_assert_nonnull (then_button);
  g_signal_emit_by_name (then_button, "clicked");
  g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 2);
  g_assert_true (owb_graph_view_get_graph (view) == then_graph);
  /* Nothing is selected in the branch, and those who show the selection are told. */
  g_assert_null (owb_graph_view_get_selected_node (view));
  g_assert_cmpuint (selection_changes, ==, 2);
  g_assert_true (wait_for (view_ready, view, 10000));
  g_autofree char *title = owb_graph_view_dup_path_title (view);
  g_assert_cmpstr (title, ==, "branch › then_branch");

  /* Back through the breadcrumb: the If is selected again (the outer graph's selection). */
  owb_graph_view_go_to_path (view, 0);
  g_assert_true (owb_graph_view_get_graph (view) == model->graph);
  g_assert_true (owb_graph_view_get_selected_node (view) == iff);
  g_assert_cmpuint (selection_changes, ==, 3);
  g_assert_null (owb_graph_view_dup_path_title (view));

  /* A double-click on the else_branch line opens that branch, whatever the attribute order. */
  g_assert_true (line_on_screen (view, op_index (view, iff), 1, &x, &y));
  owb_graph_view_click (view, x, y, 2);
  g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 2);
  g_assert_true (owb_graph_view_get_graph (view) == else_graph);
  owb_graph_view_go_to_path (view, 0);
  g_assert_true (line_on_screen (view, op_index (view, iff), 0, &x, &y));
  owb_graph_view_click (view, x, y, 2);
  g_assert_true (owb_graph_view_get_graph (view) == then_graph);
  owb_graph_view_go_to_path (view, 0);
  path_changes = 0;

  owb_graph_view_open_subgraph (view, iff, "else_branch");
  g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 2);
  g_assert_cmpuint (path_changes, ==, 1);
  g_assert_cmpstr (owb_graph_view_get_path_label (view, 1), ==, "branch › else_branch");
  g_assert_true (wait_for (view_ready, view, 10000));
  const OwbGraph *body = owb_graph_view_get_graph (view);
  g_assert_true (body == else_graph);
  g_assert_cmpuint (owb_graph_view_find (view, "sigmoid"), ==, 1);
  g_assert_true (owb_graph_view_get_selected_node (view) == g_ptr_array_index (body->nodes, 0));

  owb_graph_view_go_to_path (view, 0);
  g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 1);
  g_assert_cmpuint (path_changes, ==, 2);
  g_assert_true (owb_graph_view_get_graph (view) == model->graph);
  g_assert_true (owb_graph_view_has_scene (view));
  g_assert_cmpfloat_with_epsilon (owb_graph_view_get_zoom (view), zoom, 1e-9);
  /* The find made in the branch ended when the view left it. */
  g_assert_cmpuint (owb_graph_view_get_n_matches (view), ==, 0);

  /* NULL attribute: the first graph attribute. */
  owb_graph_view_open_subgraph (view, iff, NULL);
  g_assert_cmpstr (owb_graph_view_get_path_label (view, 1), ==, "branch › then_branch");
  g_assert_true (wait_for (view_ready, view, 10000));
  owb_graph_view_go_to_path (view, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Find on the main graph lists the nodes inside the branches with their path; moving to one
 * opens its branch and selects it there. */
static void
test_find_in_subgraphs (void)
{
  g_autoptr (OwbModel) model = if_model_new ();
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 640, 480);
  show_model (view, model);
  const OwbNode *iff = owb_graph_find_node (model->graph, "branch");
  const OwbGraph *then_graph = owb_node_get_attribute (iff, "then_branch")->g;
  const OwbGraph *else_graph = owb_node_get_attribute (iff, "else_branch")->g;

  /* "x" is read by both branches' nodes; the If itself does not name it. */
  g_assert_cmpuint (owb_graph_view_find (view, "relu"), ==, 1);
  const OwbSceneMatch *match = owb_graph_view_get_match (view, 0);
  g_assert_cmpuint (match->depth, ==, 1);
  g_autofree char *path = owb_scene_match_dup_path (match);
  g_assert_cmpstr (path, ==, "branch › then_branch");
  /* The first match is shown: its branch opens and it is selected once laid out. */
  g_assert_true (owb_graph_view_get_graph (view) == then_graph);
  g_assert_true (wait_for (view_ready, view, 10000));
  g_assert_true (owb_graph_view_get_selected_node (view) == g_ptr_array_index (then_graph->nodes, 0));

  /* From the main graph again: "x" is read by a node in each branch (not by the If itself). */
  owb_graph_view_go_to_path (view, 0);
  g_assert_true (wait_for (view_ready, view, 10000));
  g_assert_cmpuint (owb_graph_view_find (view, "x"), ==, 2);
  g_assert_true (owb_graph_view_get_graph (view) == then_graph);
  g_assert_true (wait_for (view_ready, view, 10000));
  owb_graph_view_find_next (view);
  g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 2);
  g_assert_true (owb_graph_view_get_graph (view) == else_graph);
  g_assert_true (wait_for (view_ready, view, 10000));
  g_assert_true (owb_graph_view_get_selected_node (view) == g_ptr_array_index (else_graph->nodes, 0));

  /* "y": the If's output and each branch's: the If first, then its branches' nodes. */
  owb_graph_view_go_to_path (view, 0);
  g_assert_true (wait_for (view_ready, view, 10000));
  g_assert_cmpuint (owb_graph_view_find (view, "y"), ==, 3);
  g_assert_true (owb_graph_view_get_match (view, 0)->node == iff);
  g_assert_true (owb_graph_view_get_graph (view) == model->graph);
  g_assert_true (owb_graph_view_get_selected_node (view) == iff);
  owb_graph_view_set_match_index (view, 2);
  g_assert_cmpint (owb_graph_view_get_match_index (view), ==, 2);
  g_assert_true (owb_graph_view_get_graph (view) == else_graph);
  g_assert_true (wait_for (view_ready, view, 10000));
  g_assert_true (owb_graph_view_get_selected_node (view) == g_ptr_array_index (else_graph->nodes, 0));
  /* The matches stay while the view moves between them; round to the If on the main graph. */
  g_assert_cmpuint (owb_graph_view_get_n_matches (view), ==, 3);
  owb_graph_view_find_next (view);
  g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 1);
  g_assert_true (owb_graph_view_get_selected_node (view) == iff);

  /* Another graph while a match's branch is still being laid out: nothing of the old graph is
   * selected when the new one is drawn. */
  owb_graph_view_find (view, "relu");
  g_assert_false (owb_graph_view_has_scene (view));
  g_autoptr (OwbModel) other = small_model_new ();
  show_model (view, other);
  g_assert_null (owb_graph_view_get_selected_node (view));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The find bar lists every match with the subgraph it is in; choosing one opens that branch. */
static void
test_pane_match_list (void)
{
  g_autoptr (OwbModel) model = if_model_new ();
  GtkWidget *pane = owb_graph_pane_new ();
  OwbGraphView *view = owb_graph_pane_get_view (OWB_GRAPH_PANE (pane));
  GtkWidget *window = window_with (pane, 900, 600);
  show_model (view, model);
  const OwbNode *iff = owb_graph_find_node (model->graph, "branch");
  const OwbGraph *else_graph = owb_node_get_attribute (iff, "else_branch")->g;

  owb_graph_pane_set_find_visible (OWB_GRAPH_PANE (pane), TRUE);
  GtkWidget *entry = find_child (pane, GTK_TYPE_SEARCH_ENTRY, NULL);
  gtk_editable_set_text (GTK_EDITABLE (entry), "y");
  GtkWidget *match_label = NULL;
  gint64 end = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (!(match_label = find_child (pane, GTK_TYPE_LABEL, "1 of 3")) && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE);
  g_assert_nonnull (match_label);

  GtkListBox *list = owb_graph_pane_get_match_list (OWB_GRAPH_PANE (pane));
  g_assert_nonnull (gtk_list_box_get_row_at_index (list, 2));
  g_assert_null (gtk_list_box_get_row_at_index (list, 3));
  /* The If on the main graph, then the node of each branch with its path. */
  g_assert_nonnull (find_child (GTK_WIDGET (gtk_list_box_get_row_at_index (list, 0)), GTK_TYPE_LABEL, "If  branch"));
  GtkWidget *third = GTK_WIDGET (gtk_list_box_get_row_at_index (list, 2));
  g_assert_nonnull (find_child (third, GTK_TYPE_LABEL, "Sigmoid  sig"));
  g_assert_nonnull (find_child (third, GTK_TYPE_LABEL, "branch › else_branch"));
  g_signal_emit_by_name (list, "row-activated", third);
  g_assert_cmpint (owb_graph_view_get_match_index (view), ==, 2);
  g_assert_true (owb_graph_view_get_graph (view) == else_graph);
  g_assert_true (wait_for (view_ready, view, 10000));
  g_assert_true (owb_graph_view_get_selected_node (view) == g_ptr_array_index (else_graph->nodes, 0));
  /* The bar says where the current match is, and the breadcrumb shows the way back. */
  spin (50);
  g_assert_nonnull (find_child (pane, GTK_TYPE_LABEL, "in branch › else_branch"));
  g_assert_nonnull (find_child (pane, GTK_TYPE_BUTTON, "branch › else_branch"));
  gtk_window_destroy (GTK_WINDOW (window));
}

/* How dark the darkest pixel of the middle of a collapsed group's expander is (255 - grey): the
 * plus's arms, without the square's border. A line under a pixel thick is smeared grey. */
static double
expander_ink (OwbGraphView *view, int group, GdkTexture *texture)
{
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  const OwbSceneStyle *style = _owb_graph_scene_get_style (scene);
  const OwbSceneNode *node = owb_graph_scene_get_node (scene, group);
  double zoom = owb_graph_view_get_zoom (view), sx, sy;
  owb_graph_view_get_scroll (view, &sx, &sy);
  /* The mark sits right of the title, 10 units square, inside the padding. */
  double ex = node->x + node->width - style->padding - 10, ey = node->y + style->padding + (style->title_height - 10) / 2;
  int width = gdk_texture_get_width (texture), height = gdk_texture_get_height (texture);
  gsize stride = (gsize) width * 4;
  g_autofree guchar *pixels = g_malloc (stride * height);
  gdk_texture_download (texture, pixels, stride);
  double ink = 0;
  int x0 = (int) ceil ((ex + 2 - sx) * zoom), x1 = (int) floor ((ex + 8 - sx) * zoom);
  int y0 = (int) ceil ((ey + 2 - sy) * zoom), y1 = (int) floor ((ey + 8 - sy) * zoom);
  for (int y = MAX (y0, 0); y <= y1 && y < height; y++)
    for (int x = MAX (x0, 0); x <= x1 && x < width; x++)
      {
        const guchar *p = pixels + y * stride + x * 4;
        ink = MAX (ink, 255 - (p[0] + p[1] + p[2]) / 3.0);
      }
  return ink;
}

/* A collapsed scope's mark reads "+" at the zoom graphs open at, not an empty box: at 75% the
 * plus's arms were thinner than a pixel and blurred away. */
static void
test_expander_marks (void)
{
  g_autoptr (OwbModel) model = scoped_model_new (200);
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 900, 700);
  show_model (view, model);
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  int group = owb_graph_scene_find_group (scene, "/encoder/layer.7");
  g_assert_false (owb_graph_scene_get_node (scene, group)->expanded);
  double x, y;
  owb_graph_view_set_zoom (view, 2.0);
  box_center_on_screen (view, group, &x, &y);
  spin (100);
  g_autoptr (GdkTexture) large = render_widget (GTK_WIDGET (view));
  double ink_large = expander_ink (view, group, large);
  owb_graph_view_set_zoom (view, 0.75);
  box_center_on_screen (view, group, &x, &y);
  spin (100);
  g_autoptr (GdkTexture) small = render_widget (GTK_WIDGET (view));
  double ink_small = expander_ink (view, group, small);
  g_test_message ("expander's darkest pixel: %.0f at 200%%, %.0f at 75%%", ink_large, ink_small);
  /* Nearly as dark at 75% as at 200% (a sub-pixel arm: 119 of 153). */
  g_assert_cmpfloat (ink_small, >, 0.85 * ink_large);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Pixels unlike the background (the view's top-left pixel) in a rectangle of the texture. */
static guint
count_ink (GdkTexture *texture, int x0, int y0, int w, int h)
{
  int width = gdk_texture_get_width (texture), height = gdk_texture_get_height (texture);
  gsize stride = (gsize) width * 4;
  g_autofree guchar *pixels = g_malloc (stride * height);
  gdk_texture_download (texture, pixels, stride);
  guint n = 0;
  for (int y = MAX (y0, 0); y < y0 + h && y < height; y++)
    for (int x = MAX (x0, 0); x < x0 + w && x < width; x++)
      n += abs (pixels[y * stride + x * 4] - pixels[0]) + abs (pixels[y * stride + x * 4 + 1] - pixels[1]) > 40;
  return n;
}

/* Edge labels are drawn at the zoom a graph that does not fit opens at (75%), beside their edge. */
static void
test_labels_at_open_zoom (void)
{
  g_autoptr (OwbModel) model = small_model_new ();
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 640, 480);
  show_model (view, model);
  owb_graph_view_set_zoom (view, 0.75);
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  int relu = op_index (view, owb_graph_find_node (model->graph, "relu1"));
  double x, y, sx, sy;
  box_center_on_screen (view, relu, &x, &y);
  owb_graph_view_get_scroll (view, &sx, &sy);
  int conv = op_index (view, owb_graph_find_node (model->graph, "conv1"));
  int edge = -1;
  for (guint i = 0; i < owb_graph_scene_get_n_edges (scene); i++)
    {
      const OwbSceneEdge *e = owb_graph_scene_get_edge (scene, i);
      if ((int) e->from == conv && (int) e->to == relu)
        edge = (int) i;
    }
  g_assert_cmpint (edge, >=, 0);
  const OwbSceneEdge *e = owb_graph_scene_get_edge (scene, edge);
  g_assert_nonnull (e->label);
  /* The edge runs straight down between the boxes; its label sits beside it. */
  const OwbSceneNode *from = owb_graph_scene_get_node (scene, conv), *to = owb_graph_scene_get_node (scene, relu);
  double zoom = owb_graph_view_get_zoom (view);
  int ex = (int) ((e->points[0] - sx) * zoom);
  int top = (int) ((from->y + from->height - sy) * zoom) + 1, bottom = (int) ((to->y - sy) * zoom) - 1;
  spin (100);
  g_autoptr (GdkTexture) texture = render_widget (GTK_WIDGET (view));
  guint ink = count_ink (texture, ex + 3, top, 160, bottom - top);
  g_test_message ("label pixels beside the edge at 75%%: %u", ink);
  g_assert_cmpuint (ink, >, 150); /* 56 without a label (the arrow head), 266 with */
  gtk_window_destroy (GTK_WINDOW (window));
}

static int
compare_ints (gconstpointer a, gconstpointer b)
{
  return *(const int *) a - *(const int *) b;
}

/* x → 16 Relus → Add ← x: the skip edge from x to the Add is long and straight. */
static OwbModel *
skip_model_new (void)
{
  OwbModel *model = model_new ();
  OwbGraph *g = model->graph;
  int64_t dims[] = { 1, 8 };
  add_tensor_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, dims);
  g_autofree char *prev = add_relu_chain (g, "x", 16, "relu", "r");
  add_node (g, "Add", "add", prev, "x", "y");
  g_ptr_array_add (g->outputs, owb_value_info_new ("y", NULL));
  model_finish (model);
  return model;
}

/* A long edge is drawn without breaks where cached tiles meet, at zooms between buckets and
 * scrolls of a fraction of a pixel (a seam left a lighter pixel across it). */
static void
test_no_tile_seams (void)
{
  g_autoptr (OwbModel) model = skip_model_new ();
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 600, 900);
  show_model (view, model);
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  guint seams = 0, rows = 0;
  const double zooms[] = { 0.62, 0.8, 0.93, 1.1 };
  for (guint z = 0; z < G_N_ELEMENTS (zooms); z++)
    for (double cy = 0.23; cy < 1400; cy += 350)
      {
        owb_graph_view_set_zoom (view, zooms[z]);
        double zoom = owb_graph_view_get_zoom (view), sx, sy;
        double sw, sh;
        owb_graph_scene_get_size (scene, &sw, &sh);
        owb_graph_view_center_on (view, sw / 2 + 0.37, MIN (cy, sh));
        owb_graph_view_get_scroll (view, &sx, &sy);
        spin (30);
        g_autoptr (GdkTexture) texture = render_widget (GTK_WIDGET (view));
        int width = gdk_texture_get_width (texture), height = gdk_texture_get_height (texture);
        gsize stride = (gsize) width * 4;
        g_autofree guchar *pixels = g_malloc (stride * height);
        gdk_texture_download (texture, pixels, stride);
        /* Every vertical segment of every edge on screen: per row, the darkest of the three
         * pixels around the line; a seam is a row much lighter than the rows above and below. */
        for (guint i = 0; i < owb_graph_scene_get_n_edges (scene); i++)
          {
            const OwbSceneEdge *e = owb_graph_scene_get_edge (scene, i);
            for (guint k = 0; k + 1 < e->n_points; k++)
              {
                const double *a = e->points + 2 * k, *b = a + 2;
                if (fabs (a[0] - b[0]) > 0.01 || fabs (b[1] - a[1]) < 40)
                  continue;
                int px = (int) floor ((a[0] - sx) * zoom);
                if (px < 2 || px > width - 3)
                  continue;
                int y0 = MAX (1, (int) ceil ((MIN (a[1], b[1]) - sy) * zoom) + 4);
                int y1 = MIN (height - 1, (int) floor ((MAX (a[1], b[1]) - sy) * zoom) - 4);
                if (y1 - y0 < 8)
                  continue;
                /* Per row, the darkest of the three pixels around the line; a break is a row
                 * much lighter than the line's median row. */
                g_autoptr (GArray) dark = g_array_new (FALSE, FALSE, sizeof (int));
                for (int y = y0; y < y1; y++)
                  {
                    int d = 0;
                    for (int x = px - 1; x <= px + 1; x++)
                      {
                        const guchar *p = pixels + y * stride + x * 4;
                        d = MAX (d, 255 - (p[0] + p[1] + p[2]) / 3);
                      }
                    g_array_append_val (dark, d);
                  }
                g_autoptr (GArray) sorted = g_array_copy (dark);
                g_array_sort (sorted, compare_ints);
                int median = g_array_index (sorted, int, sorted->len / 2);
                for (guint r = 0; r < dark->len; r++, rows++)
                  if (g_array_index (dark, int, r) * 10 < 7 * median)
                    {
                      g_test_message ("zoom %.2f: lighter row at %u (%d, the line's median %d)", zoom, y0 + r,
                                      g_array_index (dark, int, r), median);
                      seams++;
                    }
              }
          }
      }
  g_test_message ("%u rows of vertical edges checked", rows);
  g_assert_cmpuint (rows, >, 1000);
  g_assert_cmpuint (seams, ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* In a compact view a Constant has no box: selecting it (from Find, the inspector) shows the box
 * that reads its value instead, centred. */
static void
test_compact_selection (void)
{
  OwbModel *model = model_new ();
  OwbGraph *g = model->graph;
  int64_t dims[] = { 1, 8 };
  add_tensor_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, dims);
  OwbNode *constant = owb_node_new ("Constant", "", "Constant_7");
  owb_node_add_output (constant, "k");
  owb_node_add_attribute (constant, "value", OWB_ATTR_TENSOR)->t = owb_tensor_new_scalar_float (2.0f);
  owb_graph_add_node (g, constant);
  add_node (g, "Mul", "scale", "x", "k", "y");
  g_ptr_array_add (g->outputs, owb_value_info_new ("y", NULL));
  model_finish (model);
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 640, 480);
  owb_graph_view_set_compact (view, TRUE);
  show_model (view, model);
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  g_assert_cmpint (owb_graph_scene_find_op (scene, constant), ==, -1);
  int mul = op_index (view, owb_graph_find_node (g, "scale"));
  g_assert_cmpint (mul, >=, 0);
  owb_graph_view_set_zoom (view, 2.0);
  owb_graph_view_scroll_by (view, -2000, -2000);
  g_assert_cmpuint (owb_graph_view_find (view, "Constant_7"), ==, 1);
  g_assert_true (owb_graph_view_get_selected_node (view) == constant);
  /* The Mul's box is in the middle of the view. */
  const OwbSceneNode *box = owb_graph_scene_get_node (scene, mul);
  double zoom = owb_graph_view_get_zoom (view), sx, sy;
  owb_graph_view_get_scroll (view, &sx, &sy);
  double cx = (box->x + box->width / 2 - sx) * zoom, cy = (box->y + box->height / 2 - sy) * zoom;
  g_assert_cmpfloat (fabs (cx - 320), <, 2);
  g_assert_cmpfloat (fabs (cy - 240), <, 2);
  /* Compact off: the Constant has its own box again. */
  owb_graph_view_set_compact (view, FALSE);
  g_assert_true (wait_for (view_ready, view, 10000));
  g_assert_cmpint (owb_graph_scene_find_op (owb_graph_view_get_scene (view), constant), >=, 0);
  gtk_window_destroy (GTK_WINDOW (window));
  owb_model_unref (model);
}

/* A graph too large to read whole opens at a readable zoom on its first nodes, never on an
 * empty part of it. */
static void
test_first_view_not_blank (void)
{
  g_autoptr (OwbModel) model = side_chain_model_new ();
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 500, 400);
  show_model (view, model);
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  double zoom = owb_graph_view_get_zoom (view), sx, sy;
  owb_graph_view_get_scroll (view, &sx, &sy);
  g_assert_cmpfloat (zoom, >=, 0.75);
  g_autoptr (GArray) seen = g_array_new (FALSE, FALSE, sizeof (guint));
  owb_graph_scene_query (scene, sx, sy, 500 / zoom, 400 / zoom, seen, NULL);
  guint boxes = 0;
  gboolean top = FALSE;
  for (guint i = 0; i < seen->len; i++)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (scene, g_array_index (seen, guint, i));
      if (node->kind == OWB_SCENE_GROUP)
        continue;
      boxes++;
      top = top || node->kind == OWB_SCENE_INPUT;
    }
  g_test_message ("first view: zoom %.2f at (%.0f, %.0f), %u boxes", zoom, sx, sy, boxes);
  g_assert_cmpuint (boxes, >, 0);
  g_assert_true (top);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_collapsed_groups (void)
{
  /* 200 blocks × 3 ops: over the scene's collapse threshold, so it opens collapsed. */
  g_autoptr (OwbModel) model = scoped_model_new (200);
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 900, 700);
  show_model (view, model);

  spin (100);
  g_autoptr (GdkTexture) collapsed = render_widget (GTK_WIDGET (view));
  save_screenshot (collapsed, "graph-view-collapsed.png");
  /* Double-click on a collapsed group expands it in place, and again collapses it. */
  owb_graph_view_set_zoom (view, 1.0);
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  int group = owb_graph_scene_find_group (scene, "/encoder/layer.7");
  g_assert_cmpint (group, >=, 0);
  g_assert_false (owb_graph_scene_get_node (scene, group)->expanded);
  double x, y, sx, sy;
  box_center_on_screen (view, group, &x, &y);
  owb_graph_view_get_scroll (view, &sx, &sy);
  double zoom = owb_graph_view_get_zoom (view);
  double left = (owb_graph_scene_get_node (scene, group)->x - sx) * zoom;
  double top = (owb_graph_scene_get_node (scene, group)->y - sy) * zoom;
  owb_graph_view_click (view, x, y, 2);
  group = owb_graph_scene_find_group (scene, "/encoder/layer.7");
  const OwbSceneNode *expanded = owb_graph_scene_get_node (scene, group);
  g_assert_true (expanded->expanded);
  owb_graph_view_get_scroll (view, &sx, &sy);
  /* The group's corner stays where it was on screen. */
  g_assert_cmpfloat (fabs ((expanded->x - sx) * zoom - left), <, 1.0);
  g_assert_cmpfloat (fabs ((expanded->y - sy) * zoom - top), <, 1.0);
  spin (100);
  g_autoptr (GdkTexture) expanded_shot = render_widget (GTK_WIDGET (view));
  save_screenshot (expanded_shot, "graph-view-expanded.png");
  owb_graph_view_click (view, (expanded->x + 3 - sx) * zoom, (expanded->y + 3 - sy) * zoom, 2);
  group = owb_graph_scene_find_group (scene, "/encoder/layer.7");
  g_assert_false (owb_graph_scene_get_node (scene, group)->expanded);

  const OwbNode *deep = owb_graph_find_node (model->graph, "/encoder/layer.150/Add");
  g_assert_nonnull (deep);
  owb_graph_view_select_node (view, deep);
  g_assert_true (owb_graph_view_get_selected_node (view) == deep);
  /* Selecting revealed it: the view is zoomed in to read it. */
  g_assert_cmpfloat (owb_graph_view_get_zoom (view), >=, 0.7);
  g_assert_cmpuint (owb_graph_view_find (view, "layer.199/relu"), ==, 1);
  spin (100);
  g_autoptr (GdkTexture) shot = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (count_colors (shot), >, 10);
  save_screenshot (shot, "graph-view-revealed.png");
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
count_progress (gpointer data, double fraction, const char *text, gpointer view)
{
  g_assert_nonnull (text);
  g_assert_true (fraction == -1.0 || (fraction >= 0 && fraction <= 1));
  (*(guint *) data)++;
}

static void
test_cancel_and_stale (void)
{
  g_autoptr (OwbModel) big = scoped_model_new (3000);
  g_autoptr (OwbModel) small = small_model_new ();
  GtkWidget *pane = owb_graph_pane_new ();
  OwbGraphView *view = owb_graph_pane_get_view (OWB_GRAPH_PANE (pane));
  GtkWidget *window = window_with (pane, 800, 600);
  guint failures = 0, progress = 0;
  g_signal_connect (view, "layout-failed", G_CALLBACK (count_signal), &failures);
  g_signal_connect_swapped (view, "layout-progress", G_CALLBACK (count_progress), &progress);

  /* Cancel from the pane's overlay: not busy at once, no scene, no failure reported. */
  owb_graph_view_set_graph (view, big->graph, owb_model_ref (big), (GDestroyNotify) owb_model_unref);
  g_assert_true (owb_graph_view_get_busy (view));
  g_assert_cmpuint (progress, >, 0);
  GtkWidget *cancel = find_child (pane, GTK_TYPE_BUTTON, "Cancel");
  g_assert_nonnull (cancel);
  g_assert_true (gtk_widget_is_visible (cancel));
  if (g_getenv ("OWB_TEST_SCREENSHOT_DIR"))
    {
      spin (300);
      g_autoptr (GdkTexture) busy = render_widget (pane);
      save_screenshot (busy, "graph-pane-busy.png");
      /* The spin may have let the build finish: start one again, with no main loop turn before
       * the cancel below. */
      owb_graph_view_set_graph (view, big->graph, owb_model_ref (big), (GDestroyNotify) owb_model_unref);
    }
  g_assert_true (owb_graph_view_get_busy (view));
  g_signal_emit_by_name (cancel, "clicked");
  g_assert_false (owb_graph_view_get_busy (view));
  g_assert_false (gtk_widget_is_visible (cancel));
  spin (300);
  g_assert_false (owb_graph_view_has_scene (view));
  g_assert_cmpuint (failures, ==, 0);
  g_assert_true (gtk_widget_is_visible (find_child (pane, ADW_TYPE_STATUS_PAGE, NULL)));
  g_autoptr (GdkTexture) cancelled = render_widget (pane);
  save_screenshot (cancelled, "graph-pane-cancelled.png");
  /* ... and it can be laid out again, from the status page's button. */
  GtkWidget *again = find_child (pane, GTK_TYPE_BUTTON, "Lay Out Again");
  g_assert_nonnull (again);
  g_signal_emit_by_name (again, "clicked");
  g_assert_true (owb_graph_view_get_busy (view));
  g_assert_true (wait_for (view_ready, view, 60000));
  g_assert_false (gtk_widget_is_visible (find_child (pane, ADW_TYPE_STATUS_PAGE, NULL)));

  /* Stale: a second set_graph wins over the first still being built. */
  owb_graph_view_set_graph (view, big->graph, owb_model_ref (big), (GDestroyNotify) owb_model_unref);
  owb_graph_view_set_graph (view, small->graph, owb_model_ref (small), (GDestroyNotify) owb_model_unref);
  g_assert_true (wait_for (view_ready, view, 60000));
  spin (500);
  g_assert_true (owb_graph_view_get_graph (view) == small->graph);
  g_assert_cmpuint (owb_graph_view_find (view, "matmul"), ==, 1);

  /* A view destroyed while it builds: the build finishes in its thread, its result is dropped,
   * the model is released once, nothing touches the dead widget. */
  OwbGraphView *doomed = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *other = window_with (GTK_WIDGET (doomed), 300, 200);
  g_object_add_weak_pointer (G_OBJECT (doomed), (gpointer *) &doomed);
  owb_graph_view_set_graph (doomed, big->graph, owb_model_ref (big), (GDestroyNotify) owb_model_unref);
  gtk_window_destroy (GTK_WINDOW (other));
  gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (doomed && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE);
  g_assert_null (doomed);

  /* NULL clears. */
  owb_graph_view_set_graph (view, NULL, NULL, NULL);
  g_assert_true (wait_for (view_idle, view, 1000));
  g_assert_null (owb_graph_view_get_graph (view));
  g_assert_false (owb_graph_view_has_scene (view));
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
label_is (gpointer data)
{
  gpointer *pair = data;
  return g_strcmp0 (gtk_label_get_text (pair[0]), pair[1]) == 0;
}

static GtkWidget *
find_child (GtkWidget *widget, GType type, const char *text)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type) &&
      (!text || (GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), text) == 0) ||
       (GTK_IS_LABEL (widget) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (widget)), text) == 0)))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_child (child, type, text);
      if (found)
        return found;
    }
  return NULL;
}

static void
test_pane (void)
{
  g_autoptr (OwbModel) model = scoped_model_new (20);
  for (guint i = 0; i < model->graph->nodes->len; i++)
    {
      OwbNode *node = g_ptr_array_index (model->graph->nodes, i);
      node->provider = g_strdup (i % 3 == 0 ? "cuda" : "cpu");
    }
  GtkWidget *pane = owb_graph_pane_new ();
  OwbGraphView *view = owb_graph_pane_get_view (OWB_GRAPH_PANE (pane));
  g_assert_true (OWB_IS_GRAPH_VIEW (view));
  GtkWidget *window = window_with (pane, 1000, 700);
  show_model (view, model);

  /* Legend: one entry per provider present. */
  g_assert_nonnull (find_child (pane, GTK_TYPE_LABEL, "cpu"));
  g_assert_nonnull (find_child (pane, GTK_TYPE_LABEL, "cuda"));

  /* Find bar: typing finds, the label counts, the buttons move. */
  g_assert_false (owb_graph_pane_get_find_visible (OWB_GRAPH_PANE (pane)));
  owb_graph_pane_set_find_visible (OWB_GRAPH_PANE (pane), TRUE);
  g_assert_true (owb_graph_pane_get_find_visible (OWB_GRAPH_PANE (pane)));
  GtkWidget *entry = find_child (pane, GTK_TYPE_SEARCH_ENTRY, NULL);
  g_assert_nonnull (entry);
  gtk_editable_set_text (GTK_EDITABLE (entry), "relu");
  /* The entry searches after a short delay; then a label reads "1 of 20". */
  GtkWidget *match_label = NULL;
  gint64 end = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (!(match_label = find_child (pane, GTK_TYPE_LABEL, "1 of 20")) && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE);
  g_assert_nonnull (match_label);
  g_assert_cmpuint (owb_graph_view_get_n_matches (view), ==, 20);
  spin (300);
  g_autoptr (GdkTexture) finding = render_widget (pane);
  save_screenshot (finding, "graph-pane-find.png");
  owb_graph_view_find_next (view);  /* as the window's shortcut does: the label follows */
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (match_label)), ==, "2 of 20");
  gtk_editable_set_text (GTK_EDITABLE (entry), "zzz");
  gpointer none[2] = { match_label, "No matches" };
  g_assert_true (wait_for (label_is, none, 5000));
  owb_graph_pane_toggle_find (OWB_GRAPH_PANE (pane));
  g_assert_false (owb_graph_pane_get_find_visible (OWB_GRAPH_PANE (pane)));
  g_assert_cmpuint (owb_graph_view_get_n_matches (view), ==, 0);

  /* Breadcrumb: a button per level. */
  g_assert_nonnull (find_child (pane, GTK_TYPE_BUTTON, "main"));

  /* Zoom buttons drive the view. */
  double zoom = owb_graph_view_get_zoom (view);
  owb_graph_view_zoom_in (view);
  g_assert_cmpfloat (owb_graph_view_get_zoom (view), >, zoom);

  owb_graph_view_zoom_to_fit (view);
  spin (200);
  g_autoptr (GdkTexture) shot = render_widget (pane);
  save_screenshot (shot, "graph-pane-scoped.png");
  if (g_getenv ("OWB_TEST_SCREENSHOT_DIR"))
    {
      /* Dark style: the palette follows the theme's colours. */
      AdwStyleManager *style = adw_style_manager_get_default ();
      adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_FORCE_DARK);
      owb_graph_view_set_zoom (view, 1.0);
      owb_graph_view_select_node (view, owb_graph_find_node (model->graph, "/encoder/layer.3/Add"));
      spin (300);
      g_autoptr (GdkTexture) dark = render_widget (pane);
      save_screenshot (dark, "graph-pane-dark.png");
      adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_DEFAULT);
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Real exported models, when a folder of them is given (they are too big for the repository). */
static void
test_dev_models (void)
{
  const char *dir = g_getenv ("OWB_DEV_MODELS_DIR");
  if (!dir)
    {
      g_test_skip ("OWB_DEV_MODELS_DIR is not set");
      return;
    }
  const char *names[] = { "resnet18.onnx", "bert_small.onnx", "vit_b_32.onnx", "gru_tagger.onnx" };
  GtkWidget *pane = owb_graph_pane_new ();
  OwbGraphView *view = owb_graph_pane_get_view (OWB_GRAPH_PANE (pane));
  GtkWidget *window = window_with (pane, 1200, 800);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = g_build_filename (dir, names[i], NULL);
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        continue;
      g_autoptr (GError) error = NULL;
      g_autoptr (OwbModel) model = owb_model_load_file (path, &error);
      g_assert_no_error (error);
      owb_model_infer_shapes (model, NULL);
      gint64 start = g_get_monotonic_time ();
      owb_graph_view_set_graph (view, model->graph, owb_model_ref (model), (GDestroyNotify) owb_model_unref);
      g_assert_true (wait_for (view_ready, view, 60000));
      g_test_message ("%s: %u nodes, scene in %.0f ms, %u boxes", names[i], model->graph->nodes->len,
                      (g_get_monotonic_time () - start) / 1000.0,
                      owb_graph_scene_get_n_nodes (owb_graph_view_get_scene (view)));
      g_autofree char *shot_name = g_strdup_printf ("dev-%s-fit.png", names[i]);
      g_autoptr (GdkTexture) fit = render_widget (pane);
      g_assert_cmpuint (count_colors (fit), >, 5);
      save_screenshot (fit, shot_name);
      /* The last node, revealed inside its groups and centred. */
      const OwbNode *last = g_ptr_array_index (model->graph->nodes, model->graph->nodes->len - 1);
      owb_graph_view_select_node (view, last);
      g_assert_true (owb_graph_view_get_selected_node (view) == last);
      g_free (shot_name);
      shot_name = g_strdup_printf ("dev-%s-last.png", names[i]);
      g_autoptr (GdkTexture) detail = render_widget (pane);
      save_screenshot (detail, shot_name);
      /* Every graph attribute opens in place. */
      for (guint n = 0; n < model->graph->nodes->len; n++)
        {
          const OwbNode *node = g_ptr_array_index (model->graph->nodes, n);
          for (int a = 0; a < node->n_attributes; a++)
            if (node->attributes[a].type == OWB_ATTR_GRAPH)
              {
                owb_graph_view_open_subgraph (view, node, node->attributes[a].name);
                g_assert_true (wait_for (view_ready, view, 60000));
                g_assert_cmpuint (owb_graph_view_get_path_length (view), ==, 2);
                owb_graph_view_go_to_path (view, 0);
              }
        }
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Pixels of a rendering that differ from its top-left one (the background). */
static guint
count_drawn (GdkTexture *texture)
{
  int width = gdk_texture_get_width (texture), height = gdk_texture_get_height (texture);
  gsize stride = (gsize) width * 4;
  g_autofree guchar *pixels = g_malloc (stride * height);
  gdk_texture_download (texture, pixels, stride);
  guint n = 0;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      n += memcmp (pixels + y * stride + x * 4, pixels, 4) != 0;
  return n;
}

static OwbSession *
session_new (OwbModel *model, OwbOptimizeLevel level)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) providers = owb_providers_new_from_list ("cpu", &error);
  g_assert_no_error (error);
  OwbSessionOptions options;
  owb_session_options_init (&options);
  options.providers = providers;
  options.optimize = level;
  OwbSession *session = owb_session_new (model, &options, &error);
  g_assert_no_error (error);
  g_assert_nonnull (session);
  return session;
}

/* Block i of flat_model_new. */
static char *
add_flat_block (OwbGraph *g, guint i, const char *prev)
{
  g_autofree char *mm = g_strdup_printf ("mm_%u", i), *add = g_strdup_printf ("add_%u", i);
  g_autofree char *relu = g_strdup_printf ("relu_%u", i), *skip = g_strdup_printf ("skip_%u", i);
  char *out = g_strdup_printf ("out_%u", i);
  add_node (g, "MatMul", mm, prev, "w", mm);
  add_node (g, "Add", add, mm, prev, add);
  add_node (g, "Relu", relu, add, NULL, relu);
  add_node (g, "Add", skip, relu, prev, skip);
  add_node (g, "Relu", out, skip, NULL, out);
  return out;
}

/* `n_blocks` residual blocks (MatMul, Add, Relu, then a skip Add and its Relu) named without
 * scopes ("mm_3"), as many exporters other than PyTorch's write them. */
static OwbModel *
flat_model_new (guint n_blocks)
{
  return block_chain_model_new (n_blocks, add_flat_block);
}

static void
test_flat_blocks (void)
{
  /* 400 blocks of 5: 2,000 ops with no scope in their names open collapsed into blocks. */
  g_autoptr (OwbModel) model = flat_model_new (400);
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 900, 700);
  show_model (view, model);
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  g_assert_cmpuint (owb_graph_scene_get_n_blocks (scene), ==, 400);
  guint n_groups = 0;
  for (guint i = 0; i < owb_graph_scene_get_n_nodes (scene); i++)
    {
      const OwbSceneNode *n = owb_graph_scene_get_node (scene, i);
      g_assert_cmpint (n->kind, !=, OWB_SCENE_OP);
      n_groups += n->kind == OWB_SCENE_GROUP;
    }
  g_assert_cmpuint (n_groups, >=, 2);
  g_assert_cmpuint (n_groups, <=, 32);
  /* Readable on opening: not specks. */
  g_assert_cmpfloat (owb_graph_view_get_zoom (view), >=, 0.7);
  g_autoptr (GdkTexture) collapsed = render_widget (GTK_WIDGET (view));
  save_screenshot (collapsed, "graph-view-blocks.png");
  g_assert_cmpuint (count_colors (collapsed), >, 10);

  /* Double-clicks open a group of blocks, then a block: its five ops. */
  int group = owb_graph_scene_find_op (scene, owb_graph_find_node (model->graph, "mm_0"));
  g_assert_cmpint (owb_graph_scene_get_node (scene, group)->kind, ==, OWB_SCENE_GROUP);
  double x, y;
  box_center_on_screen (view, group, &x, &y);
  owb_graph_view_click (view, x, y, 2);
  int block = owb_graph_scene_find_op (scene, owb_graph_find_node (model->graph, "mm_0"));
  g_assert_cmpint (block, !=, group);
  g_assert_cmpstr (owb_graph_scene_get_node (scene, block)->title, ==, "block 1");
  box_center_on_screen (view, block, &x, &y);
  owb_graph_view_click (view, x, y, 2);
  const char *members[] = { "mm_0", "add_0", "relu_0", "skip_0", "out_0" };
  for (guint i = 0; i < G_N_ELEMENTS (members); i++)
    g_assert_cmpint (owb_graph_scene_get_node (scene, op_index (view, owb_graph_find_node (model->graph, members[i])))->kind,
                     ==, OWB_SCENE_OP);
  g_assert_cmpint (owb_graph_scene_get_node (scene, op_index (view, owb_graph_find_node (model->graph, "mm_1")))->kind, ==,
                   OWB_SCENE_GROUP);
  spin (100);
  g_autoptr (GdkTexture) expanded = render_widget (GTK_WIDGET (view));
  save_screenshot (expanded, "graph-view-blocks-expanded.png");
  g_assert_cmpuint (count_colors (expanded), >, 10);
  gtk_window_destroy (GTK_WINDOW (window));
}

static gboolean
widget_visible (gpointer widget)
{
  return gtk_widget_get_visible (widget) && gtk_widget_get_width (widget) > 1;
}

static gboolean
widget_hidden (gpointer widget)
{
  return !gtk_widget_get_visible (widget);
}

static void
test_minimap (void)
{
  g_autoptr (OwbModel) model = scoped_model_new (200);
  GtkWidget *pane = owb_graph_pane_new ();
  OwbGraphView *view = owb_graph_pane_get_view (OWB_GRAPH_PANE (pane));
  GtkWidget *minimap = GTK_WIDGET (owb_graph_pane_get_minimap (OWB_GRAPH_PANE (pane)));
  GtkWidget *window = window_with (pane, 1000, 700);
  show_model (view, model);

  /* The graph opens at a readable zoom on its top: most of it is off screen, so the minimap
   * shows, and draws the graph and the frame of the part on screen. */
  owb_graph_view_set_zoom (view, 1.0);
  g_assert_true (wait_for (widget_visible, minimap, 5000));
  g_autoptr (GdkTexture) shot = render_widget (minimap);
  save_screenshot (shot, "graph-minimap.png");
  g_assert_cmpuint (count_colors (shot), >, 4);

  /* A click at its bottom shows the bottom of the graph. */
  double sx, sy, sx2, sy2;
  owb_graph_view_get_scroll (view, &sx, &sy);
  owb_graph_minimap_move_to (OWB_GRAPH_MINIMAP (minimap), gtk_widget_get_width (minimap) / 2.0,
                             gtk_widget_get_height (minimap) - 8);
  owb_graph_view_get_scroll (view, &sx2, &sy2);
  double sw, sh;
  owb_graph_scene_get_size (owb_graph_view_get_scene (view), &sw, &sh);
  g_assert_cmpfloat (sy2, >, sy + sh / 2);

  /* Whole on screen, it has nothing to show. */
  owb_graph_view_zoom_to_fit (view);
  g_assert_true (wait_for (widget_hidden, minimap, 5000));
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_update_graph (void)
{
  /* The model's graph is drawn first; its session at level disabled brings the claims. */
  g_autoptr (OwbModel) model = small_model_new ();
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 800, 600);
  show_model (view, model);
  const OwbGraphScene *scene = owb_graph_view_get_scene (view);
  g_auto (GStrv) before = owb_graph_view_dup_providers (view, NULL);
  g_assert_cmpuint (g_strv_length (before), ==, 0);
  owb_graph_view_select_node (view, owb_graph_find_node (model->graph, "relu1"));
  owb_graph_view_set_zoom (view, 0.9);
  double zoom = owb_graph_view_get_zoom (view), sx, sy;
  owb_graph_view_get_scroll (view, &sx, &sy);
  guint scene_changes = 0, selection_changes = 0;
  g_signal_connect (view, "scene-changed", G_CALLBACK (count_signal), &scene_changes);
  g_signal_connect (view, "selection-changed", G_CALLBACK (count_signal), &selection_changes);

  OwbSession *session = session_new (model, OWB_OPTIMIZE_DISABLED);
  const OwbGraph *prepared = owb_session_get_graph (session);
  g_assert_true (owb_graph_view_update_graph (view, prepared, session, (GDestroyNotify) owb_session_free));
  /* No new layout: the same scene, not busy, the same place on screen. */
  g_assert_false (owb_graph_view_get_busy (view));
  g_assert_true (owb_graph_view_get_scene (view) == scene);
  g_assert_true (owb_graph_view_get_graph (view) == prepared);
  g_assert_cmpfloat (owb_graph_view_get_zoom (view), ==, zoom);
  double sx2, sy2;
  owb_graph_view_get_scroll (view, &sx2, &sy2);
  g_assert_cmpfloat (sx2, ==, sx);
  g_assert_cmpfloat (sy2, ==, sy);
  /* The boxes, the selection and the legend are the session's now. */
  const OwbNode *relu = owb_graph_find_node (prepared, "relu1");
  g_assert_true (owb_graph_view_get_selected_node (view) == relu);
  g_assert_cmpuint (selection_changes, ==, 1);
  g_assert_cmpuint (scene_changes, ==, 1);
  int index = op_index (view, relu);
  g_assert_cmpint (index, >=, 0);
  g_assert_true (owb_graph_scene_get_node (scene, index)->node == relu);
  g_assert_cmpstr (owb_graph_scene_get_node (scene, index)->provider, ==, "cpu");
  g_auto (GStrv) after = owb_graph_view_dup_providers (view, NULL);
  g_assert_cmpuint (g_strv_length (after), ==, 1);
  g_assert_cmpstr (after[0], ==, "cpu");
  /* Edges name the session's values (the model's may go away). */
  for (guint i = 0; i < owb_graph_scene_get_n_edges (scene); i++)
    {
      const char *tensor = owb_graph_scene_get_edge (scene, i)->tensor;
      gboolean found = FALSE;
      for (guint n = 0; n < prepared->nodes->len && !found; n++)
        {
          const OwbNode *node = prepared->nodes->pdata[n];
          for (int k = 0; k < node->n_outputs; k++)
            found = found || node->outputs[k] == tensor;
        }
      for (guint n = 0; n < prepared->inputs->len && !found; n++)
        found = strcmp (((OwbValueInfo *) prepared->inputs->pdata[n])->name, tensor) == 0;
      g_assert_true (found);
    }
  g_autoptr (GdkTexture) shot = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (count_colors (shot), >, 10);

  /* An optimized graph (Conv and Relu fused) is another graph: not taken, nothing changed. */
  OwbSession *fused = session_new (model, OWB_OPTIMIZE_EXTENDED);
  g_assert_cmpuint (owb_session_get_graph (fused)->nodes->len, <, model->graph->nodes->len);
  g_assert_false (owb_graph_view_update_graph (view, owb_session_get_graph (fused), fused,
                                               (GDestroyNotify) owb_session_free));
  g_assert_true (owb_graph_view_get_graph (view) == prepared);
  g_assert_true (owb_graph_view_get_scene (view) == scene);
  owb_session_free (fused);

  /* Updated while the layout runs: the scene that comes is the new graph's. */
  owb_graph_view_set_graph (view, model->graph, owb_model_ref (model), (GDestroyNotify) owb_model_unref);
  g_assert_true (owb_graph_view_get_busy (view));
  OwbSession *again = session_new (model, OWB_OPTIMIZE_DISABLED);
  g_assert_true (owb_graph_view_update_graph (view, owb_session_get_graph (again), again,
                                              (GDestroyNotify) owb_session_free));
  g_assert_true (wait_for (view_ready, view, 30000));
  g_assert_true (owb_graph_scene_get_graph (owb_graph_view_get_scene (view)) == owb_session_get_graph (again));
  index = op_index (view, owb_graph_find_node (owb_session_get_graph (again), "relu1"));
  g_assert_cmpstr (owb_graph_scene_get_node (owb_graph_view_get_scene (view), index)->provider, ==, "cpu");
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_far_zoom (void)
{
  /* 10,000 layers: collapsed, a column of boxes some 900,000 units long, which fits the view
   * only far below the 1/1024 that tiles of boxes stop at (cairo failed further out). */
  g_autoptr (OwbModel) model = scoped_model_new (10000);
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  GtkWidget *window = window_with (GTK_WIDGET (view), 900, 700);
  show_model (view, model);

  /* Whole, it is drawn from the overview image, and not blank. */
  owb_graph_view_zoom_to_fit (view);
  double fit = owb_graph_view_get_zoom (view);
  g_test_message ("fit zoom %g", fit);
  g_assert_cmpfloat (fit, <, 1.0 / 1024);
  g_assert_true (owb_graph_view_get_drawing_overview (view));
  g_autoptr (GdkTexture) whole = render_widget (GTK_WIDGET (view));
  save_screenshot (whole, "graph-view-overview.png");
  g_assert_cmpuint (count_drawn (whole), >, 300);

  /* Zooming out goes to half the fit, not to nothing, and drawing does not fail there, with a
   * selection outline on top. */
  owb_graph_view_select_node (view, owb_graph_find_node (model->graph, "/encoder/layer.5000/Add"));
  owb_graph_view_set_zoom (view, 1.0 / 1048576);
  double least = owb_graph_view_get_zoom (view);
  g_assert_cmpfloat (least, <, fit * 0.55);
  g_assert_cmpfloat (least, >, fit * 0.45);
  g_assert_true (owb_graph_view_get_drawing_overview (view));
  g_autoptr (GdkTexture) far = render_widget (GTK_WIDGET (view));
  save_screenshot (far, "graph-view-overview-far.png");
  g_assert_cmpuint (count_drawn (far), >, 150);

  /* A graph that fits readily zooms out to a quarter. */
  g_autoptr (OwbModel) small = small_model_new ();
  show_model (view, small);
  owb_graph_view_set_zoom (view, 0.01);
  g_assert_cmpfloat (owb_graph_view_get_zoom (view), ==, 0.25);

  /* Back in, boxes are drawn again. */
  show_model (view, model);
  owb_graph_view_set_zoom (view, 1.0);
  g_assert_false (owb_graph_view_get_drawing_overview (view));
  g_autoptr (GdkTexture) near = render_widget (GTK_WIDGET (view));
  g_assert_cmpuint (count_colors (near), >, 10);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  /* The resources live in a static library: naming them links them in (and registers them). */
  g_assert_nonnull (owb_ui_get_resource ());
  g_test_add_func ("/graph-view/zoom-select-find", test_zoom_select_find);
  g_test_add_func ("/graph-view/export", test_export);
  g_test_add_func ("/graph-view/provider-layer", test_provider_layer);
  g_test_add_func ("/graph-view/tiny-cnn", test_tiny_cnn);
  g_test_add_func ("/graph-view/layer", test_layer);
  g_test_add_func ("/graph-view/subgraph", test_subgraph);
  g_test_add_func ("/graph-view/find-in-subgraphs", test_find_in_subgraphs);
  g_test_add_func ("/graph-view/pane-match-list", test_pane_match_list);
  g_test_add_func ("/graph-view/expander-marks", test_expander_marks);
  g_test_add_func ("/graph-view/first-view-not-blank", test_first_view_not_blank);
  g_test_add_func ("/graph-view/labels-at-open-zoom", test_labels_at_open_zoom);
  g_test_add_func ("/graph-view/no-tile-seams", test_no_tile_seams);
  g_test_add_func ("/graph-view/compact-selection", test_compact_selection);
  g_test_add_func ("/graph-view/collapsed-groups", test_collapsed_groups);
  g_test_add_func ("/graph-view/cancel-and-stale", test_cancel_and_stale);
  g_test_add_func ("/graph-view/pane", test_pane);
  g_test_add_func ("/graph-view/dev-models", test_dev_models);
  g_test_add_func ("/graph-view/flat-blocks", test_flat_blocks);
  g_test_add_func ("/graph-view/update-graph", test_update_graph);
  g_test_add_func ("/graph-view/minimap", test_minimap);
  g_test_add_func ("/graph-view/far-zoom", test_far_zoom);
  return g_test_run ();
}
