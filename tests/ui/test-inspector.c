/* test-inspector.c: the histogram and the inspector panel (under Xvfb); the statistics they show are
 * tested in tests/engine/test-tensor-stats.c. */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include <adwaita.h>

#include "owb-histogram.h"
#include "owb-inspector.h"
#include "owb-page-util.h"

/* ---- the inspector widget ---- */

#define BIG_ROWS 144
#define BIG_COLS 500

typedef struct {
  OwbModel *model;
  OwbNode *conv;
  GtkWidget *window;
  OwbInspector *inspector;
} Fixture;

static void
add_value (GPtrArray *list, const char *name, int rank, const int64_t *dims)
{
  OwbValueType t;
  owb_value_type_init_tensor (&t, OWB_TYPE_FLOAT, rank, dims);
  g_ptr_array_add (list, owb_value_info_new (name, &t));
}

static OwbNode *
add_node (OwbGraph *g, const char *op, const char *name, const char *const *inputs, const char *const *outputs)
{
  OwbNode *n = owb_node_new (op, "", name);
  for (int i = 0; inputs[i]; i++)
    owb_node_add_input (n, inputs[i]);
  for (int i = 0; outputs[i]; i++)
    owb_node_add_output (n, outputs[i]);
  owb_graph_add_node (g, n);
  return n;
}

/* X[1,3,8,8] → Conv(W[4,3,3,3], B[4]) → Relu → Flatten → MatMul(big[144,500]) → Z[1,500]. */
static OwbModel *
build_model (OwbNode **conv_out)
{
  OwbModel *m = owb_model_new ();
  m->ir_version = 8;
  m->producer_name = g_strdup ("test-inspector");
  m->producer_version = g_strdup ("1.0");
  owb_model_set_opset (m, "", 17);
  OwbStringPair pair = { g_strdup ("author"), g_strdup ("the tests") };
  g_array_append_val (m->metadata, pair);
  m->graph = owb_graph_new ("tiny-graph");
  m->graph->model = m;
  OwbGraph *g = m->graph;

  const int64_t x_dims[4] = { 1, 3, 8, 8 }, z_dims[2] = { 1, BIG_COLS };
  add_value (g->inputs, "X", 4, x_dims);
  add_value (g->outputs, "Z", 2, z_dims);

  const int64_t w_dims[4] = { 4, 3, 3, 3 }, b_dims[1] = { 4 }, big_dims[2] = { BIG_ROWS, BIG_COLS };
  OwbTensor *w = owb_tensor_new (OWB_TYPE_FLOAT, 4, w_dims, NULL);
  for (int i = 0; i < 108; i++)
    ((float *) w->data)[i] = (float) (i - 50) / 8; /* -6.25 … 7.125, exact in binary */
  owb_graph_add_initializer (g, "W", w);
  OwbTensor *b = owb_tensor_new (OWB_TYPE_FLOAT, 1, b_dims, NULL);
  for (int i = 0; i < 4; i++)
    ((float *) b->data)[i] = (float) i;
  owb_graph_add_initializer (g, "B", b);
  OwbTensor *big = owb_tensor_new (OWB_TYPE_FLOAT, 2, big_dims, NULL);
  GRand *r = g_rand_new_with_seed (42);
  for (int64_t i = 0; i < big->nelems; i++)
    ((float *) big->data)[i] = (float) g_rand_double_range (r, -1, 1);
  g_rand_free (r);
  ((float *) big->data)[1234] = NAN;
  owb_graph_add_initializer (g, "big", big);

  OwbNode *conv = add_node (g, "Conv", "conv1", (const char *[]){ "X", "W", "B", NULL }, (const char *[]){ "Y", NULL });
  OwbAttribute *a = owb_node_add_attribute (conv, "kernel_shape", OWB_ATTR_INTS);
  a->n = 2;
  a->ints = g_new (int64_t, 2);
  a->ints[0] = a->ints[1] = 3;
  a = owb_node_add_attribute (conv, "auto_pad", OWB_ATTR_STRING);
  a->s = g_strdup ("NOTSET");
  a->s_len = 6;
  a = owb_node_add_attribute (conv, "group", OWB_ATTR_INT);
  a->i = 1;
  add_node (g, "Relu", "relu1", (const char *[]){ "Y", NULL }, (const char *[]){ "R", NULL });
  add_node (g, "Flatten", "flat", (const char *[]){ "R", NULL }, (const char *[]){ "F", NULL });
  add_node (g, "MatMul", "fc", (const char *[]){ "F", "big", NULL }, (const char *[]){ "Z", NULL });

  g_autoptr (GError) error = NULL;
  g_assert_true (owb_model_validate (m, &error));
  g_assert_no_error (error);
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);

  /* Attributes of every shape the panel formats (added after validation: Conv has none such). */
  a = owb_node_add_attribute (conv, "test_floats", OWB_ATTR_FLOATS);
  a->n = 2;
  a->floats = g_new (float, 2);
  a->floats[0] = 0.5f;
  a->floats[1] = 1.25f;
  a = owb_node_add_attribute (conv, "test_long", OWB_ATTR_INTS);
  a->n = 20;
  a->ints = g_new0 (int64_t, 20);
  a = owb_node_add_attribute (conv, "test_scalar", OWB_ATTR_TENSOR);
  a->t = owb_tensor_new_scalar_float (2.5f);
  a = owb_node_add_attribute (conv, "test_matrix", OWB_ATTR_TENSOR);
  const int64_t m_dims[2] = { 64, 64 };
  a->t = owb_tensor_new (OWB_TYPE_FLOAT16, 2, m_dims, NULL);

  conv->provider = g_strdup ("cpu");
  owb_node_add_decline (conv, "cuda", "no CUDA device found");
  /* Text from the model or a provider is never markup. */
  owb_node_add_decline (conv, "dnnl", "needs <b>NHWC</b> & float16");
  *conv_out = conv;
  return m;
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->model = build_model (&f->conv);
  f->window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (f->window), 380, 1400);
  f->inspector = OWB_INSPECTOR (owb_inspector_new ());
  gtk_window_set_child (GTK_WINDOW (f->window), GTK_WIDGET (f->inspector));
  gtk_window_present (GTK_WINDOW (f->window));
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  gtk_window_destroy (GTK_WINDOW (f->window));
  g_clear_pointer (&f->model, owb_model_unref);
}

static gboolean
timeout_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterates the main loop for `ms` milliseconds. */
static void
spin (guint ms)
{
  gboolean done = FALSE;
  g_timeout_add (ms, timeout_cb, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

static gboolean
wait_not_busy (OwbInspector *inspector, guint timeout_ms)
{
  gboolean expired = FALSE;
  guint id = g_timeout_add (timeout_ms, timeout_cb, &expired);
  while (owb_inspector_get_busy (inspector) && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (id);
  return !owb_inspector_get_busy (inspector);
}

static void
collect_labels (GtkWidget *w, GString *out)
{
  /* What a person sees: hidden widgets and the stack's other page are skipped. */
  if (!gtk_widget_get_visible (w) || !gtk_widget_get_child_visible (w))
    return;
  if (GTK_IS_LABEL (w))
    {
      g_string_append (out, gtk_label_get_text (GTK_LABEL (w)));
      g_string_append_c (out, '\n');
    }
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    collect_labels (c, out);
}

static char *
all_text (OwbInspector *inspector)
{
  GString *s = g_string_new ("\n");
  collect_labels (GTK_WIDGET (inspector), s);
  return g_string_free (s, FALSE);
}

/* A whole line of the panel, so "1" does not match inside "10". */
static void
assert_has_line (const char *text, const char *line)
{
  g_autofree char *needle = g_strdup_printf ("\n%s\n", line);
  if (!strstr (text, needle))
    g_error ("no line “%s” in the inspector:%s", line, text);
}

static GtkWidget *
find_widget (GtkWidget *w, GType type, gboolean (*match) (GtkWidget *, gconstpointer), gconstpointer data)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (w, type) && (!match || match (w, data)))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget (c, type, match, data);
      if (found)
        return found;
    }
  return NULL;
}

static gboolean
row_has_title (GtkWidget *row, gconstpointer title)
{
  return g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (row)), title) == 0;
}

static GtkWidget *
find_row (OwbInspector *inspector, const char *title)
{
  return find_widget (GTK_WIDGET (inspector), ADW_TYPE_ACTION_ROW, row_has_title, title);
}

static void
on_tensor_activated (OwbInspector *inspector, const char *name, char **out)
{
  g_free (*out);
  *out = g_strdup (name);
}

static void
on_node_activated (OwbInspector *inspector, gpointer node, gpointer *out)
{
  *out = node;
}

static void
on_subgraph_activated (OwbInspector *inspector, gpointer node, const char *attribute, gpointer data)
{
  struct { gpointer node; char *attribute; } *out = data;
  out->node = node;
  g_free (out->attribute);
  out->attribute = g_strdup (attribute);
}

static void
test_show_node (Fixture *f, gconstpointer data)
{
  owb_inspector_show_node (f->inspector, f->model->graph, f->conv);
  /* Everything shown is copied: the model may go away at once. */
  g_clear_pointer (&f->model, owb_model_unref);
  spin (50);

  g_autofree char *text = all_text (f->inspector);
  assert_has_line (text, "conv1");
  assert_has_line (text, "Conv");
  assert_has_line (text, "ai.onnx");
  assert_has_line (text, "17");
  assert_has_line (text, "kernel_shape");
  assert_has_line (text, "[3, 3]");
  assert_has_line (text, "auto_pad");
  assert_has_line (text, "NOTSET");
  assert_has_line (text, "[0.5, 1.25]");
  assert_has_line (text, "[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, … 4 more]");
  assert_has_line (text, "float32 scalar = 2.5");
  assert_has_line (text, "float16 64×64");
  /* each input and output under its name in the op's schema, before its type */
  assert_has_line (text, "X · float32[1,3,8,8]");
  assert_has_line (text, "W · initializer, float32 4×3×3×3");
  assert_has_line (text, "B · initializer, float32 4");
  assert_has_line (text, "Y · float32[1,4,6,6]");
  assert_has_line (text, "Runs on cpu");
  assert_has_line (text, "Declined by cuda");
  assert_has_line (text, "no CUDA device found");
  assert_has_line (text, "Declined by dnnl");
  assert_has_line (text, "needs <b>NHWC</b> & float16");

  /* Activating an input row names the value. */
  g_autofree char *activated = NULL;
  g_signal_connect (f->inspector, "tensor-activated", G_CALLBACK (on_tensor_activated), &activated);
  GtkWidget *row = find_row (f->inspector, "W");
  g_assert_nonnull (row);
  g_assert_true (gtk_list_box_row_get_activatable (GTK_LIST_BOX_ROW (row)));
  g_signal_emit_by_name (row, "activate");
  spin (20);
  g_assert_cmpstr (activated, ==, "W");

  /* Clearing empties the panel. */
  owb_inspector_clear (f->inspector);
  g_free (text);
  text = all_text (f->inspector);
  g_assert_null (strstr (text, "conv1"));
  assert_has_line (text, "Nothing Selected");
}

static void
test_show_unclaimed (Fixture *f, gconstpointer data)
{
  owb_node_clear_claims (f->conv);
  owb_inspector_show_node (f->inspector, f->model->graph, f->conv);
  g_autofree char *text = all_text (f->inspector);
  assert_has_line (text, "No provider claimed this node");
  g_assert_null (strstr (text, "Runs on"));
}

static OwbHistogram *
find_histogram (OwbInspector *inspector)
{
  return (OwbHistogram *) find_widget (GTK_WIDGET (inspector), OWB_TYPE_HISTOGRAM, NULL, NULL);
}

static void
test_show_initializer (Fixture *f, gconstpointer data)
{
  owb_inspector_show_tensor (f->inspector, f->model->graph, "W");
  /* 108 elements are summarised at once. */
  g_assert_false (owb_inspector_get_busy (f->inspector));
  g_autofree char *text = all_text (f->inspector);
  assert_has_line (text, "W");
  assert_has_line (text, "float32");
  assert_has_line (text, "4×3×3×3");
  assert_has_line (text, "108");
  assert_has_line (text, "432 bytes");
  assert_has_line (text, "Min");
  assert_has_line (text, "-6.25");
  assert_has_line (text, "7.125");
  assert_has_line (text, "0.4375"); /* mean of (i - 50) / 8 for i < 108 */
  assert_has_line (text, "conv1");  /* consumer */

  OwbHistogram *h = find_histogram (f->inspector);
  g_assert_nonnull (h);
  guint n_bins;
  const guint64 *bins = owb_histogram_get_bins (h, &n_bins);
  g_assert_cmpuint (n_bins, ==, 64);
  guint64 sum = 0;
  for (guint i = 0; i < n_bins; i++)
    sum += bins[i];
  g_assert_cmpuint (sum, ==, 108);

  /* Export, then read the file back. */
  g_autofree char *dir = g_dir_make_tmp ("test-inspector-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "W.npy", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_inspector_export_tensor (f->inspector, file, &error));
  g_assert_no_error (error);
  g_autoptr (OwbTensor) back = owb_tensor_load_file (path, NULL, &error);
  g_assert_no_error (error);
  OwbTensor *w = owb_graph_get_initializer (f->model->graph, "W");
  g_assert_cmpint (back->dtype, ==, OWB_TYPE_FLOAT);
  g_assert_true (owb_tensor_same_shape (back, w));
  g_assert_cmpmem (back->data, back->nbytes, w->data, w->nbytes);
  g_unlink (path);

  /* Unwritable place: an error, not a crash. */
  g_autofree char *bad_path = g_build_filename (dir, "missing", "W.npy", NULL);
  g_autoptr (GFile) bad = g_file_new_for_path (bad_path);
  g_assert_false (owb_inspector_export_tensor (f->inspector, bad, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_rmdir (dir);

  /* Nothing to export once the panel shows a node. */
  owb_inspector_show_node (f->inspector, f->model->graph, f->conv);
  g_assert_false (owb_inspector_export_tensor (f->inspector, file, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
}

static void
after_paint (GdkFrameClock *clock, gboolean *painted)
{
  *painted = TRUE;
}

/* Waits until the window has been laid out and painted with what the panel shows now. */
static void
wait_for_frame (GtkWidget *widget)
{
  gboolean expired = FALSE;
  guint id = g_timeout_add (30000, timeout_cb, &expired);
  while (!gtk_widget_get_mapped (widget) && !expired)
    g_main_context_iteration (NULL, TRUE);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
  g_assert_nonnull (clock);
  gboolean painted = FALSE;
  gulong handler = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint), &painted);
  gtk_widget_queue_draw (widget);
  while (!painted && !expired)
    g_main_context_iteration (NULL, TRUE);
  g_signal_handler_disconnect (clock, handler);
  g_assert_false (expired);
  g_source_remove (id);
}

static GtkWidget *
find_file_chooser_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();
  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWidget) w = g_list_model_get_item (toplevels, i);
      if (GTK_IS_FILE_CHOOSER_DIALOG (w) && gtk_widget_get_visible (w))
        return w;
    }
  return NULL;
}

static gboolean
is_export_button (GtkWidget *w, gconstpointer data)
{
  const char *label = gtk_button_get_label (GTK_BUTTON (w));
  return label && strstr (label, "NPY") != NULL;
}

/* Clicks "Export as NPY…", answers the file chooser with dir/name, and returns what the panel
 * then says (after the write in its thread). */
static char *
export_through_dialog (Fixture *f, const char *dir, const char *expected_name, const char *name)
{
  GtkWidget *button = find_widget (GTK_WIDGET (f->inspector), GTK_TYPE_BUTTON, is_export_button, NULL);
  g_assert_nonnull (button);
  g_assert_true (gtk_widget_get_sensitive (button));
  g_signal_emit_by_name (button, "clicked");
  GtkWidget *dialog = NULL;
  gboolean expired = FALSE;
  guint id = g_timeout_add (20000, timeout_cb, &expired);
  while (!(dialog = find_file_chooser_dialog ()) && !expired)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (dialog);
  g_autofree char *suggested = gtk_file_chooser_get_current_name (GTK_FILE_CHOOSER (dialog));
  g_assert_cmpstr (suggested, ==, expected_name);

  /* A path typed into the name entry, as a person may do; the chooser checks the name
   * asynchronously and may hold back the first response until it knows, so answer until it
   * closes. */
  g_autofree char *target = g_build_filename (dir, name, NULL);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), target);
  while (find_file_chooser_dialog () && !expired)
    {
      gtk_dialog_response (GTK_DIALOG (dialog), GTK_RESPONSE_ACCEPT);
      spin (200);
    }
  g_assert_false (expired);

  /* The button is insensitive while the thread writes, and the outcome is shown after. */
  GString *text = NULL;
  while (!expired)
    {
      g_main_context_iteration (NULL, TRUE);
      g_autofree char *now = all_text (f->inspector);
      if (gtk_widget_get_sensitive (button) && (strstr (now, "Exported") || strstr (now, "Could not export")))
        {
          text = g_string_new (now);
          break;
        }
    }
  if (expired)
    {
      g_autofree char *now = all_text (f->inspector);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_error ("no export outcome after 20 s (button %s, dialog %s, file %s); panel:%s",
               gtk_widget_get_sensitive (button) ? "sensitive" : "insensitive",
               find_file_chooser_dialog () ? "still open" : "closed",
               g_file_test (path, G_FILE_TEST_EXISTS) ? "written" : "absent", now);
    }
  g_source_remove (id);
  return g_string_free (text, FALSE);
}

static void
test_export_dialog (Fixture *f, gconstpointer data)
{
  const int64_t dims[2] = { 2, 3 };
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 2, dims, NULL);
  for (int i = 0; i < 6; i++)
    ((int64_t *) t->data)[i] = i * 1000;
  owb_graph_add_initializer (f->model->graph, "/encoder/layer.0/weight", t);
  owb_inspector_show_tensor (f->inspector, f->model->graph, "/encoder/layer.0/weight");
  wait_for_frame (GTK_WIDGET (f->inspector));

  g_autofree char *dir = g_dir_make_tmp ("test-inspector-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing", NULL);
  /* A folder that does not exist: the error is shown in the panel, nothing crashes. */
  g_autofree char *text = export_through_dialog (f, dir, "encoder_layer.0_weight.npy", "w.npy");
  g_assert_nonnull (strstr (text, "Exported “w.npy”"));
  g_autofree char *path = g_build_filename (dir, "w.npy", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbTensor) back = owb_tensor_load_file (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (back->dtype, ==, OWB_TYPE_INT64);
  g_assert_true (owb_tensor_same_shape (back, t));
  g_assert_cmpmem (back->data, back->nbytes, t->data, t->nbytes);
  g_unlink (path);

  /* "Export as NPY…" writes NumPy whatever the name (a run output's Export… goes by the name). */
  g_free (text);
  text = export_through_dialog (f, dir, "encoder_layer.0_weight.npy", "w.bin");
  g_assert_nonnull (strstr (text, "Exported “w.bin”"));
  g_autofree char *bin = g_build_filename (dir, "w.bin", NULL);
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (bin, &contents, &length, NULL));
  g_autoptr (OwbTensor) npy = owb_tensor_load_npy_data (contents, length, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (npy->data, npy->nbytes, t->data, t->nbytes);
  g_unlink (bin);
  g_rmdir (dir);
}

static void
test_show_big_initializer (Fixture *f, gconstpointer data)
{
  owb_inspector_show_tensor (f->inspector, f->model->graph, "big");
  /* 72000 elements go to a thread; the model may be freed meanwhile (the tensor is referenced). */
  g_assert_true (owb_inspector_get_busy (f->inspector));
  g_clear_pointer (&f->model, owb_model_unref);
  g_autofree char *text = all_text (f->inspector);
  assert_has_line (text, "Computing statistics…");
  g_assert_null (strstr (text, "\nMean\n"));

  g_assert_true (wait_not_busy (f->inspector, 20000));
  g_free (text);
  text = all_text (f->inspector);
  assert_has_line (text, "Mean");
  assert_has_line (text, "72000");
  g_assert_null (strstr (text, "Computing statistics…"));
  /* One NaN among the values. */
  g_autofree char *nan_line = g_strdup_printf ("\nNaN\n1\n");
  g_assert_nonnull (strstr (text, nan_line));

  OwbHistogram *h = find_histogram (f->inspector);
  g_assert_nonnull (h);
  guint n_bins;
  const guint64 *bins = owb_histogram_get_bins (h, &n_bins);
  guint64 sum = 0;
  for (guint i = 0; i < n_bins; i++)
    sum += bins[i];
  g_assert_cmpuint (sum, ==, BIG_ROWS * BIG_COLS - 1);
}

/* The statistics are a job of the document the window gives the panel: the document is busy while
 * they run, and closing the window (cancelling its jobs) stops them without showing a result. */
static void
test_document_jobs (Fixture *f, gconstpointer data)
{
  g_autoptr (OwbDocument) document = owb_document_new ();
  owb_inspector_set_document (f->inspector, document);
  owb_inspector_show_tensor (f->inspector, f->model->graph, "big");
  g_assert_true (owb_inspector_get_busy (f->inspector));
  g_assert_true (owb_document_get_busy (document));
  g_assert_true (wait_not_busy (f->inspector, 20000));
  g_assert_false (owb_document_get_busy (document));
  g_autofree char *text = all_text (f->inspector);
  assert_has_line (text, "Mean");

  owb_inspector_show_node (f->inspector, f->model->graph, f->conv);
  owb_inspector_show_tensor (f->inspector, f->model->graph, "big");
  g_assert_true (owb_document_get_busy (document));
  owb_document_cancel_jobs (document);
  gboolean expired = FALSE;
  guint id = g_timeout_add (20000, timeout_cb, &expired);
  while (owb_document_get_busy (document) && !expired)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (expired);
  g_source_remove (id);
  g_free (text);
  text = all_text (f->inspector);
  g_assert_null (strstr (text, "\nMean\n"));
}

static void
test_stale_result_dropped (Fixture *f, gconstpointer data)
{
  owb_inspector_show_tensor (f->inspector, f->model->graph, "big");
  g_assert_true (owb_inspector_get_busy (f->inspector));
  owb_inspector_show_node (f->inspector, f->model->graph, f->conv);
  g_assert_false (owb_inspector_get_busy (f->inspector));
  /* Long enough for the thread to finish: its result must not land in the node's view. */
  spin (1500);
  g_autofree char *text = all_text (f->inspector);
  assert_has_line (text, "conv1");
  g_assert_null (strstr (text, "\nMean\n"));
  g_assert_null (find_histogram (f->inspector));

  /* Back and forth while a thread runs: the item shown last gets its statistics, after the
   * thread of the earlier one (one at a time). */
  owb_inspector_show_tensor (f->inspector, f->model->graph, "big");
  owb_inspector_show_tensor (f->inspector, f->model->graph, "W");
  owb_inspector_show_tensor (f->inspector, f->model->graph, "big");
  g_assert_true (owb_inspector_get_busy (f->inspector));
  g_assert_true (wait_not_busy (f->inspector, 30000));
  g_free (text);
  text = all_text (f->inspector);
  assert_has_line (text, "Mean");
  assert_has_line (text, "72000");
  guint n_bins;
  const guint64 *bins = owb_histogram_get_bins (find_histogram (f->inspector), &n_bins);
  guint64 sum = 0;
  for (guint i = 0; i < n_bins; i++)
    sum += bins[i];
  g_assert_cmpuint (sum, ==, BIG_ROWS * BIG_COLS - 1);

  /* Destroying the panel while a thread runs is safe too. */
  owb_inspector_show_tensor (f->inspector, f->model->graph, "big");
  gtk_window_destroy (GTK_WINDOW (f->window));
  f->window = gtk_window_new ();
  spin (1500);
}

static void
test_show_value (Fixture *f, gconstpointer data)
{
  owb_inspector_show_tensor (f->inspector, f->model->graph, "Y");
  g_autofree char *text = all_text (f->inspector);
  assert_has_line (text, "Y");
  assert_has_line (text, "float32[1,4,6,6]");
  assert_has_line (text, "conv1");
  assert_has_line (text, "relu1");

  gpointer node = NULL;
  g_signal_connect (f->inspector, "node-activated", G_CALLBACK (on_node_activated), &node);
  GtkWidget *row = find_row (f->inspector, "conv1");
  g_assert_nonnull (row);
  g_signal_emit_by_name (row, "activate");
  spin (20);
  g_assert_true (node == f->conv);

  owb_inspector_show_tensor (f->inspector, f->model->graph, "X");
  g_free (text);
  text = all_text (f->inspector);
  assert_has_line (text, "Graph input");
  assert_has_line (text, "float32[1,3,8,8]");
}

static void
test_show_model (Fixture *f, gconstpointer data)
{
  owb_inspector_show_model (f->inspector, f->model, NULL);
  g_autofree char *text = all_text (f->inspector);
  assert_has_line (text, "tiny-graph");
  assert_has_line (text, "test-inspector 1.0");
  assert_has_line (text, "8");       /* IR version */
  assert_has_line (text, "ai.onnx");
  assert_has_line (text, "author");
  assert_has_line (text, "the tests");
  assert_has_line (text, "float32[1,3,8,8]");
  assert_has_line (text, "float32[1,500]");
  /* Op histogram: four ops once each, in name order at equal counts. */
  g_assert_nonnull (strstr (text, "\nConv\n1\nFlatten\n1\nMatMul\n1\nRelu\n1\n"));
  assert_has_line (text, "4");       /* nodes */
  g_autofree char *params = g_strdup_printf ("%d", 108 + 4 + BIG_ROWS * BIG_COLS);
  assert_has_line (text, params);
  g_autofree char *size = g_format_size ((108 + 4 + BIG_ROWS * BIG_COLS) * 4);
  assert_has_line (text, size);
  g_assert_null (strstr (text, "Optimized"));

  /* An optimized graph: fewer nodes, and the panel says so. */
  OwbGraph *opt = owb_graph_dup (f->model->graph);
  g_ptr_array_remove_index (opt->nodes, 1); /* Relu gone */
  owb_inspector_show_model (f->inspector, f->model, opt);
  owb_graph_free (opt);
  g_free (text);
  text = all_text (f->inspector);
  assert_has_line (text, "Optimized");
  assert_has_line (text, "3 nodes");
  assert_has_line (text, "Original");
  assert_has_line (text, "4 nodes");
  g_assert_null (strstr (text, "\nRelu\n"));
}

static void
render_to_png (GtkWidget *widget, const char *path)
{
  g_autoptr (GdkTexture) texture = NULL;
  /* The paintable holds the widget's last drawn picture; a late relayout (labels rewrapping)
   * can drop it until the next frame, so wait for frames until there is one. */
  for (int tries = 0; !texture && tries < 10; tries++)
    {
      if (tries)
        wait_for_frame (widget);
      texture = owb_page_render_widget (widget, NULL);
    }
  if (!texture)
    g_error ("nothing drawn for %s: %dx%d", path, gtk_widget_get_width (widget), gtk_widget_get_height (widget));
  g_assert_true (gdk_texture_save_to_png (texture, path));
}

static void
test_render (Fixture *f, gconstpointer data)
{
  /* OWB_TEST_PNG_DIR=dir writes what the panel looks like, for a person to check. */
  const char *dir = g_getenv ("OWB_TEST_PNG_DIR");
  owb_inspector_show_node (f->inspector, f->model->graph, f->conv);
  wait_for_frame (GTK_WIDGET (f->inspector));
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (f->inspector)), >, 0);
  g_autofree char *tmp = g_dir_make_tmp ("test-inspector-XXXXXX", NULL);
  const char *out = dir ? dir : tmp;
  g_autofree char *node_png = g_build_filename (out, "inspector-node.png", NULL);
  render_to_png (GTK_WIDGET (f->inspector), node_png);
  g_assert_true (g_file_test (node_png, G_FILE_TEST_IS_REGULAR));

  owb_inspector_show_tensor (f->inspector, f->model->graph, "big");
  g_assert_true (wait_not_busy (f->inspector, 20000));
  wait_for_frame (GTK_WIDGET (f->inspector));
  g_autofree char *tensor_png = g_build_filename (out, "inspector-tensor.png", NULL);
  render_to_png (GTK_WIDGET (f->inspector), tensor_png);

  owb_inspector_show_model (f->inspector, f->model, NULL);
  wait_for_frame (GTK_WIDGET (f->inspector));
  g_autofree char *model_png = g_build_filename (out, "inspector-model.png", NULL);
  render_to_png (GTK_WIDGET (f->inspector), model_png);
  if (!dir)
    {
      g_unlink (node_png);
      g_unlink (tensor_png);
      g_unlink (model_png);
    }
  g_rmdir (tmp);
}

/* A node of a subgraph sees the values and initializers of its outer scopes. */
static void
test_subgraph_scope (Fixture *f, gconstpointer data)
{
  OwbGraph *main_graph = f->model->graph;
  OwbGraph *body = owb_graph_new ("then_branch");
  body->parent = main_graph;
  body->model = f->model;
  OwbNode *add = add_node (body, "Add", "inner_add", (const char *[]){ "Y", "B", NULL }, (const char *[]){ "S<&>", NULL });
  const int64_t k_dims[1] = { 4 };
  OwbTensor *k = owb_tensor_new (OWB_TYPE_INT64, 1, k_dims, NULL);
  owb_graph_add_initializer (body, "K", k);

  /* An If node in the main graph owning the body, for the attribute text. */
  OwbNode *if_node = owb_node_new ("If", "", "branch");
  owb_node_add_input (if_node, "cond");
  owb_node_add_output (if_node, "S_out");
  OwbAttribute *a = owb_node_add_attribute (if_node, "then_branch", OWB_ATTR_GRAPH);
  a->g = body;

  owb_inspector_show_node (f->inspector, body, add);
  g_autofree char *text = all_text (f->inspector);
  assert_has_line (text, "A · float32[1,4,6,6]");           /* Y, typed in the outer graph */
  assert_has_line (text, "B · initializer, float32 4"); /* B, an outer initializer */
  assert_has_line (text, "S<&>");

  owb_inspector_show_tensor (f->inspector, body, "B");
  g_free (text);
  text = all_text (f->inspector);
  assert_has_line (text, "Initializer of an outer graph");
  assert_has_line (text, "inner_add"); /* its consumer in this scope */

  owb_inspector_show_tensor (f->inspector, body, "K");
  g_free (text);
  text = all_text (f->inspector);
  assert_has_line (text, "Initializer");
  assert_has_line (text, "int64");
  assert_has_line (text, "[0, 0, 0, 0]"); /* tiny tensors show their values */

  owb_inspector_show_tensor (f->inspector, body, "Y");
  g_free (text);
  text = all_text (f->inspector);
  assert_has_line (text, "Produced outside this subgraph");

  owb_inspector_show_node (f->inspector, main_graph, if_node);
  g_free (text);
  text = all_text (f->inspector);
  assert_has_line (text, "then_branch");
  assert_has_line (text, "1 node");
  assert_has_line (text, "cond · type unknown"); /* "cond" is declared nowhere */
  assert_has_line (text, "type unknown");        /* nor "S_out", one of If's many outputs: no name */

  /* What the branch reads from outside it: Y (B is a weight, shown on the box). */
  assert_has_line (text, "Read by Its Subgraphs");

  /* The branch row opens the branch it names. */
  struct { gpointer node; char *attribute; } opened = { NULL, NULL };
  g_signal_connect (f->inspector, "subgraph-activated", G_CALLBACK (on_subgraph_activated), &opened);
  GtkWidget *row = find_row (f->inspector, "then_branch");
  g_assert_nonnull (row);
  g_assert_true (gtk_list_box_row_get_activatable (GTK_LIST_BOX_ROW (row)));
  g_signal_emit_by_name (row, "activated");
  g_assert_true (opened.node == if_node);
  g_assert_cmpstr (opened.attribute, ==, "then_branch");
  g_free (opened.attribute);

  /* The branch itself: titled by its path, with the outer value it reads (Y; B is a weight). */
  owb_inspector_show_subgraph (f->inspector, f->model, body, "branch › then_branch");
  g_free (text);
  text = all_text (f->inspector);
  assert_has_line (text, "branch › then_branch");
  assert_has_line (text, "Subgraph");
  assert_has_line (text, "From the Outer Graph");
  assert_has_line (text, "Y");
  assert_has_line (text, "None of its own");
  g_assert_null (strstr (text, "\nB\n"));
  owb_node_free (if_node); /* frees the body */
}

/* Every node, value and initializer of a real model, shown one after the other: nothing may warn
 * (warnings are fatal in tests) and the times are reported. tiny-cnn always; the .onnx files of
 * $OWB_TEST_MODELS_DIR too when it is set (the first 300 nodes of each). */
static void
exercise_model (OwbInspector *inspector, const char *path, guint max_nodes)
{
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (OwbModel) model = owb_model_load_file (path, &error);
  g_assert_no_error (error);
  if (!owb_model_validate (model, &error) || !owb_model_infer_shapes (model, &error))
    {
      g_test_message ("%s: %s (shown without inferred shapes)", path, error->message);
      g_clear_error (&error);
    }
  gint64 t1 = g_get_monotonic_time ();
  OwbGraph *graph = model->graph;
  owb_inspector_show_model (inspector, model, NULL);
  gint64 t2 = g_get_monotonic_time ();
  g_autofree char *text = all_text (inspector);
  g_autofree char *n_nodes = g_strdup_printf ("%u", graph->nodes->len);
  assert_has_line (text, n_nodes);

  guint n = MIN (graph->nodes->len, max_nodes);
  gint64 in_show = 0;
  for (guint i = 0; i < n; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      gint64 s0 = g_get_monotonic_time ();
      owb_inspector_show_node (inspector, graph, node);
      in_show += g_get_monotonic_time () - s0;
      /* Let a frame be drawn, as between two clicks. */
      g_main_context_iteration (NULL, FALSE);
    }
  gint64 t3 = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      for (int j = 0; j < node->n_outputs; j++)
        if (node->outputs[j][0])
          owb_inspector_show_tensor (inspector, graph, node->outputs[j]);
    }
  gint64 t4 = g_get_monotonic_time ();
  guint64 params = 0;
  for (guint i = 0; i < graph->initializers->len; i++)
    {
      owb_inspector_show_tensor (inspector, graph, graph->initializer_names->pdata[i]);
      g_assert_true (wait_not_busy (inspector, 60000));
      g_free (text);
      text = all_text (inspector);
      const OwbTensor *t = graph->initializers->pdata[i];
      if (t->dtype != OWB_TYPE_STRING && t->kind == OWB_VALUE_TENSOR)
        assert_has_line (text, "Mean");
      params += (guint64) t->nelems;
    }
  gint64 t5 = g_get_monotonic_time ();
  const char *png_dir = g_getenv ("OWB_TEST_PNG_DIR");
  if (png_dir && graph->nodes->len)
    {
      /* A node from the middle (long scoped names in exported transformers) and the largest
       * initializer, for a person to look at. */
      g_autofree char *base = g_path_get_basename (path);
      owb_inspector_show_node (inspector, graph, graph->nodes->pdata[graph->nodes->len / 2]);
      wait_for_frame (GTK_WIDGET (inspector));
      g_autofree char *node_png = g_strdup_printf ("%s/%s-node.png", png_dir, base);
      render_to_png (GTK_WIDGET (inspector), node_png);
      guint largest = 0;
      for (guint i = 0; i < graph->initializers->len; i++)
        if (((OwbTensor *) graph->initializers->pdata[i])->nelems
            > ((OwbTensor *) graph->initializers->pdata[largest])->nelems)
          largest = i;
      if (graph->initializers->len)
        {
          owb_inspector_show_tensor (inspector, graph, graph->initializer_names->pdata[largest]);
          g_assert_true (wait_not_busy (inspector, 60000));
          wait_for_frame (GTK_WIDGET (inspector));
          g_autofree char *tensor_png = g_strdup_printf ("%s/%s-tensor.png", png_dir, base);
          render_to_png (GTK_WIDGET (inspector), tensor_png);
        }
    }
  g_test_message ("%s: %u nodes, %" G_GUINT64_FORMAT " parameters; load+infer %.0f ms, model view %.1f ms, "
                  "%u node views %.1f ms each (%.1f ms building, the rest drawing), their values %.1f ms, %u initializers with statistics %.0f ms",
                  path, graph->nodes->len, params, (t1 - t0) / 1e3, (t2 - t1) / 1e3, n,
                  n ? (t3 - t2) / 1e3 / n : 0.0, n ? in_show / 1e3 / n : 0.0, (t4 - t3) / 1e3, graph->initializers->len, (t5 - t4) / 1e3);
  owb_inspector_clear (inspector);
}

static void
test_real_models (Fixture *f, gconstpointer data)
{
  const char *root = g_getenv ("OWB_SOURCE_ROOT");
  if (!root)
    {
      g_test_skip ("OWB_SOURCE_ROOT is not set (meson test sets it)");
      return;
    }
  g_autofree char *sample = g_build_filename (root, "data", "samples", "tiny-cnn.onnx", NULL);
  exercise_model (f->inspector, sample, G_MAXUINT);

  const char *dir = g_getenv ("OWB_TEST_MODELS_DIR");
  if (!dir)
    return;
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    if (g_str_has_suffix (name, ".onnx"))
      {
        g_autofree char *path = g_build_filename (dir, name, NULL);
        exercise_model (f->inspector, path, 300);
      }
}

int
main (int argc, char **argv)
{
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/inspector/node", test_show_node);
  ADD ("/inspector/node-unclaimed", test_show_unclaimed);
  ADD ("/inspector/initializer", test_show_initializer);
  ADD ("/inspector/export-dialog", test_export_dialog);
  ADD ("/inspector/big-initializer", test_show_big_initializer);
  ADD ("/inspector/stale-result", test_stale_result_dropped);
  ADD ("/inspector/document-jobs", test_document_jobs);
  ADD ("/inspector/value", test_show_value);
  ADD ("/inspector/model", test_show_model);
  ADD ("/inspector/subgraph-scope", test_subgraph_scope);
  ADD ("/inspector/render", test_render);
  ADD ("/inspector/real-models", test_real_models);
  return g_test_run ();
}
