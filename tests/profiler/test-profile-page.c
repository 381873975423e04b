/* test-profile-page.c: the Profile page on the sample model in a window under Xvfb: profile it,
 * the run stored and listed, shown again from the list; the timeline drawn, zoomed and hit-tested;
 * frame times of a timeline of 100,000 events, whole and zoomed in. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "owb-profile-page.h"
#include "owb-graph-view.h"
#include "owb-resources.h"
#include "owb-timeline.h"
#include "prof-test-util.h"
#include "../ui/ui-test-util.h"

#include <owb/owb-model-io.h>

/* Snapshots widget and renders it: the ms of each, and the PNG in $OWB_TEST_PNG_DIR if set. */
static void
render (GtkWidget *widget, const char *png, double *snapshot_ms, double *render_ms)
{
  wait_for (widget_mapped, widget, 10, "the widget to be mapped");
  settle (0.3);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  gint64 t0 = g_get_monotonic_time ();
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  gint64 t1 = g_get_monotonic_time ();
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (widget));
  g_autoptr (GdkTexture) texture = node ? gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height))
                                        : NULL;
  gint64 t2 = g_get_monotonic_time ();
  if (snapshot_ms)
    *snapshot_ms = (t1 - t0) / 1000.0;
  if (render_ms)
    *render_ms = (t2 - t1) / 1000.0;
  const char *dir = g_getenv ("OWB_TEST_PNG_DIR");
  if (dir && png && texture)
    {
      g_autofree char *path = g_build_filename (dir, png, NULL);
      g_assert_true (gdk_texture_save_to_png (texture, path));
      g_test_message ("rendered %s", path);
    }
}

/* Counts what an SVG holds, and fails on anything GMarkup finds not well-formed. */
typedef struct {
  guint rects_span, rects_merged, texts, depth;
  gboolean root_svg, in_text;
  GString *text;
} SvgCount;

static void
svg_start (GMarkupParseContext *ctx, const char *name, const char **attr_names, const char **attr_values,
           gpointer data, GError **error)
{
  SvgCount *c = data;
  if (c->depth++ == 0)
    c->root_svg = g_str_equal (name, "svg");
  if (g_str_equal (name, "rect"))
    for (guint i = 0; attr_names[i]; i++)
      if (g_str_equal (attr_names[i], "class"))
        {
          c->rects_span += g_str_equal (attr_values[i], "span");
          c->rects_merged += g_str_equal (attr_values[i], "merged");
        }
  if (g_str_equal (name, "text"))
    {
      c->texts++;
      c->in_text = TRUE;
    }
}

static void
svg_end (GMarkupParseContext *ctx, const char *name, gpointer data, GError **error)
{
  SvgCount *c = data;
  c->depth--;
  c->in_text = FALSE;
}

static void
svg_chars (GMarkupParseContext *ctx, const char *text, gsize len, gpointer data, GError **error)
{
  SvgCount *c = data;
  if (c->in_text)
    {
      g_string_append_len (c->text, text, (gssize) len);
      g_string_append_c (c->text, '\n');
    }
}

static SvgCount
count_svg (const char *svg)
{
  static const GMarkupParser parser = { svg_start, svg_end, svg_chars, NULL, NULL };
  SvgCount c = { 0 };
  c.text = g_string_new (NULL);
  g_autoptr (GMarkupParseContext) ctx = g_markup_parse_context_new (&parser, 0, &c, NULL);
  g_autoptr (GError) error = NULL;
  gboolean ok = g_markup_parse_context_parse (ctx, svg, -1, &error) && g_markup_parse_context_end_parse (ctx, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_true (c.root_svg);
  g_assert_cmpuint (c.depth, ==, 0);
  return c;
}

/* Names in dir that a write in progress leaves (NAME.tmp-XXXXXX). */
static guint
count_temporaries (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;
  for (const char *name; d && (name = g_dir_read_name (d));)
    n += strstr (name, ".tmp-") != NULL;
  return n;
}

/* Exports the timeline as SVG to path: well-formed, no temporary left, one rect per span or merged
 * block, as many as the screen draws at the same range and width. Returns the labels' text. */
static char *
check_svg_export (OwbProfilePage *page, const char *dir, const char *path)
{
  OwbTimeline *timeline = owb_profile_page_get_timeline (page);
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_profile_page_export_timeline (page, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_temporaries (dir), ==, 0);
  g_autofree char *svg = NULL;
  g_assert_true (g_file_get_contents (path, &svg, NULL, NULL));
  g_assert_true (g_str_has_prefix (svg, "<?xml"));
  g_assert_null (strstr (svg, "<image")); /* drawn, not a bitmap */
  SvgCount c = count_svg (svg);
  guint svg_spans, svg_merged, screen_spans, screen_merged;
  owb_timeline_get_drawn (timeline, &svg_spans, &svg_merged);
  g_assert_cmpuint (c.rects_span, ==, svg_spans);
  g_assert_cmpuint (c.rects_merged, ==, svg_merged);
  g_assert_cmpuint (c.rects_span + c.rects_merged, >, 0);
  /* the widget's own snapshot: GTK may reuse the node of a widget that did not change */
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GTK_WIDGET_GET_CLASS (timeline)->snapshot (GTK_WIDGET (timeline), snapshot);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  owb_timeline_get_drawn (timeline, &screen_spans, &screen_merged);
  g_assert_cmpuint (screen_spans, ==, svg_spans);
  g_assert_cmpuint (screen_merged, ==, svg_merged);
  g_test_message ("SVG: %u spans, %u merged blocks, %u texts", c.rects_span, c.rects_merged, c.texts);
  const char *keep = g_getenv ("OWB_TEST_PNG_DIR");
  if (keep)
    {
      g_autofree char *base = g_path_get_basename (path);
      g_autofree char *copy = g_build_filename (keep, base, NULL);
      g_assert_true (g_file_set_contents (copy, svg, -1, NULL));
    }
  g_remove (path);
  return g_string_free (c.text, FALSE);
}

static GtkWidget *
show_in_window (GtkWidget *child, int width, int height)
{
  GtkWidget *window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_set_child (GTK_WINDOW (window), child);
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

static void
test_profile_page (void)
{
  const char *root = g_getenv ("OWB_SOURCE_ROOT");
  g_assert_nonnull (root);
  g_autofree char *path = g_build_filename (root, "data", "samples", "tiny-cnn.onnx", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autoptr (OwbDocument) doc = owb_document_new ();
  Wait w = { 0 };
  owb_document_load_async (doc, file, NULL, load_cb, &w);
  wait_for (wait_done, &w, 60, "the document to load");
  g_assert_no_error (w.error);
  wait_for (prepared_ready, doc, 60, "the session to be prepared");

  g_autofree char *dir = g_dir_make_tmp ("owb-profile-page-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (dir, "profiles.sqlite", NULL);
  OwbProfilePage *page = OWB_PROFILE_PAGE (owb_profile_page_new ());
  GtkWidget *window = show_in_window (GTK_WIDGET (page), 1400, 900);
  owb_profile_page_set_database_path (page, db);
  owb_page_set_document (OWB_PAGE (page), doc);
  g_assert_cmpuint (owb_profile_page_get_n_stored_runs (page), ==, 0);

  owb_profile_page_profile (page, 5, 2);
  g_assert_true (owb_page_get_busy (OWB_PAGE (page)));
  wait_for (page_idle, page, 60, "the profile");
  g_assert_null (owb_page_get_error (OWB_PAGE (page)));
  g_assert_cmpuint (owb_profile_page_get_n_op_rows (page), ==, 8);
  g_assert_cmpuint (owb_profile_page_get_n_stored_runs (page), ==, 1);
  OwbTimeline *timeline = owb_profile_page_get_timeline (page);
  const OwbProfRun *run = owb_timeline_get_run (timeline);
  g_assert_nonnull (run);
  g_assert_cmpuint (run->iterations->len, ==, 5);
  g_assert_cmpint (run->id, >, 0);

  render (GTK_WIDGET (page), "profile-page.png", NULL, NULL);

  /* The time per node as a layer for the Graph page: every main-graph node of the profiled (here
   * the prepared) graph has a colour, the shares add up to the run's node time, the slowest has a
   * badge; the button hands it to the window and takes it back. */
  g_autoptr (OwbGraphLayer) time_layer = owb_profile_page_dup_time_layer (page);
  g_assert_nonnull (time_layer);
  const OwbGraph *shown = owb_session_get_graph (owb_prepared_get_session (owb_document_get_prepared (doc)));
  for (guint i = 0; i < shown->nodes->len; i++)
    {
      GdkRGBA rgba;
      g_assert_true (owb_graph_layer_get_color (time_layer, g_ptr_array_index (shown->nodes, i), &rgba));
    }
  g_autoptr (GArray) stats = owb_prof_run_dup_node_stats (run);
  const OwbProfStat *slowest = &g_array_index (stats, OwbProfStat, 0);
  for (guint i = 0; i < shown->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (shown->nodes, i);
      if (g_strcmp0 (n->name, slowest->name) == 0)
        {
          g_autofree char *badge = owb_graph_layer_dup_badge (time_layer, n);
          g_assert_nonnull (badge);
          g_assert_nonnull (strstr (badge, "%"));
        }
    }
  OwbGraphLayer *handed = NULL;
  g_signal_connect_swapped (page, "show-layer", G_CALLBACK (remember_layer), &handed);
  owb_profile_page_set_time_on_graph (page, TRUE);
  g_assert_nonnull (handed);
  {
    /* what the Graph page draws with it */
    OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
    owb_graph_view_set_graph (view, shown, NULL, NULL);
    owb_graph_view_set_layer (view, handed);
    GtkWidget *w2 = show_in_window (GTK_WIDGET (view), 900, 700);
    settle (0.3);
    render (GTK_WIDGET (view), "profile-time-on-graph.png", NULL, NULL);
    gtk_window_destroy (GTK_WINDOW (w2));
  }
  owb_profile_page_set_time_on_graph (page, FALSE);
  g_assert_null (handed);
  guint spans, merged;
  owb_timeline_get_drawn (timeline, &spans, &merged);
  g_assert_cmpuint (spans + merged, >, 0);

  /* the timeline exported as drawn: a PNG, and no temporary left beside it */
  g_autofree char *png = g_build_filename (dir, "timeline.png", NULL);
  g_autoptr (GError) export_error = NULL;
  g_assert_true (owb_profile_page_export_timeline (page, png, &export_error));
  g_assert_no_error (export_error);
  g_autofree char *png_data = NULL;
  gsize png_len = 0;
  g_assert_true (g_file_get_contents (png, &png_data, &png_len, NULL));
  g_assert_cmpuint (png_len, >, 1000);
  g_assert_cmpmem (png_data, 8, "\x89PNG\r\n\x1a\n", 8);
  g_remove (png);
  /* as SVG: the whole run, spans merged, the lanes named and the axis in ms */
  g_autofree char *svg_path = g_build_filename (dir, "timeline.SVG", NULL);
  g_autofree char *whole_text = check_svg_export (page, dir, svg_path);
  g_assert_nonnull (strstr (whole_text, "Run thread"));
  g_assert_true (strstr (whole_text, " ms") || strstr (whole_text, " µs"));

  /* zoomed into the first iteration: every node of it a span of its own, one under the pointer */
  const OwbProfIteration *first = &g_array_index (run->iterations, OwbProfIteration, 0);
  owb_timeline_set_range (timeline, first->start_ns, first->start_ns + first->duration_ns);
  render (GTK_WIDGET (timeline), "profile-timeline-zoomed.png", NULL, NULL);
  owb_timeline_get_drawn (timeline, &spans, &merged);
  g_assert_cmpuint (spans, >=, 5);
  {
    /* zoomed in, the SVG has the spans as drawn and the slowest node's name on its span */
    g_autofree char *zoomed_svg = g_build_filename (dir, "zoomed.svg", NULL);
    g_autofree char *zoomed_text = check_svg_export (page, dir, zoomed_svg);
    g_autoptr (GArray) node_stats = owb_prof_run_dup_node_stats (run);
    g_assert_nonnull (strstr (zoomed_text, g_array_index (node_stats, OwbProfStat, 0).name));
  }
  const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, 0);
  gint64 start, end;
  owb_timeline_get_range (timeline, &start, &end);
  double width = gtk_widget_get_width (GTK_WIDGET (timeline)) - 86.0;
  double x = 86.0 + ((ev->start_ns + ev->duration_ns / 2.0) - start) / (double) (end - start) * width;
  int hit = owb_timeline_event_at (timeline, x, 22 + 15 + 8);
  g_assert_cmpint (hit, >=, 0);
  g_assert_cmpuint (g_array_index (run->events, OwbProfEvent, hit).thread, ==, 0);
  owb_timeline_zoom (timeline, 0.25, x);
  owb_timeline_get_range (timeline, &start, &end);
  g_assert_cmpint (end - start, >, first->duration_ns);

  /* a second run, then the first again from the list */
  owb_profile_page_profile (page, 3, 1);
  wait_for (page_idle, page, 60, "the second profile");
  g_assert_cmpuint (owb_profile_page_get_n_stored_runs (page), ==, 2);
  owb_profile_page_show_stored_run (page, 0);
  /* reading a stored run is a job of the document, as a profile is */
  g_assert_true (owb_document_get_busy (doc));
  wait_for (page_idle, page, 60, "the stored run to load");
  g_assert_null (owb_page_get_error (OWB_PAGE (page)));
  g_assert_cmpuint (owb_timeline_get_run (timeline)->iterations->len, ==, 5);
  /* against the second: op types and nodes, the run shown stays */
  owb_profile_page_compare_stored_run (page, 1);
  wait_for (page_idle, page, 60, "the run to compare with to load");
  g_assert_null (owb_page_get_error (OWB_PAGE (page)));
  g_assert_cmpuint (owb_profile_page_get_n_comparison_rows (page), >=, 8 + 7);
  g_assert_cmpuint (owb_timeline_get_run (timeline)->iterations->len, ==, 5);
  render (GTK_WIDGET (page), "profile-compare.png", NULL, NULL);
  /* the comparison as a layer: every node of the graph is matched between the two runs */
  g_autoptr (OwbGraphLayer) diff = owb_profile_page_dup_compare_layer (page);
  g_assert_nonnull (diff);
  g_assert_cmpstr (owb_graph_layer_get_name (diff), !=, NULL);

  /* a span's click reaches the window through the page's signal */
  g_autofree char *activated = NULL;
  g_signal_connect_swapped (page, "node-activated", G_CALLBACK (remember_name), &activated);
  g_signal_emit_by_name (timeline, "node-activated", "conv1", FALSE);
  g_assert_cmpstr (activated, ==, "conv1");

  gtk_window_destroy (GTK_WINDOW (window));
  g_autofree char *wal = g_strconcat (db, "-wal", NULL), *shm = g_strconcat (db, "-shm", NULL);
  g_remove (wal);
  g_remove (shm);
  g_remove (db);
  g_rmdir (dir);
}

/* The widget's own snapshot (not the node GTK keeps for a widget that did not change), then that
 * node rendered: the ms of each. */
static void
measure_frame (GtkWidget *widget, double *snapshot_ms, double *render_ms)
{
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  gint64 t0 = g_get_monotonic_time ();
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GTK_WIDGET_GET_CLASS (widget)->snapshot (widget, snapshot);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  gint64 t1 = g_get_monotonic_time ();
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (widget));
  g_autoptr (GdkTexture) texture = node ? gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height))
                                        : NULL;
  *snapshot_ms = (t1 - t0) / 1000.0;
  *render_ms = (g_get_monotonic_time () - t1) / 1000.0;
}

/* 100,000 events in 4 lanes, 10 us each: every frame stays bounded by merging. */
static OwbProfRun *
big_run (guint n)
{
  OwbProfRun *run = owb_prof_run_new ();
  const char *ops[] = { "Conv", "Relu", "Add", "MatMul", "Softmax" };
  for (guint k = 0; k < 1000; k++)
    {
      char name[32];
      g_snprintf (name, sizeof name, "node_%u", k);
      owb_prof_run_add_node (run, "", name, ops[k % G_N_ELEMENTS (ops)], "cpu", NULL, NULL);
    }
  for (guint e = 0; e < n; e++)
    {
      guint lane = e % 4;
      OwbProfEvent ev = { .node = (e / 4) % 1000, .iteration = 0, .thread = lane,
                          .kind = lane ? OWB_PROF_EVENT_WORKER : OWB_PROF_EVENT_NODE,
                          .start_ns = (gint64) (e / 4) * 12000, .duration_ns = 10000, .self_ns = 10000,
                          .arena_bytes = -1 };
      owb_prof_run_add_event (run, &ev);
    }
  owb_prof_run_add_iteration (run, 0, (gint64) (n / 4) * 12000);
  return run;
}

static void
test_timeline_frames (void)
{
  OwbTimeline *timeline = OWB_TIMELINE (owb_timeline_new ());
  GtkWidget *window = show_in_window (GTK_WIDGET (timeline), 1600, 300);
  owb_timeline_take_run (timeline, big_run (100000));
  const char *views[] = { "whole", "1/10", "1/1000" };
  double factors[] = { 1, 10, 100 };
  for (guint v = 0; v < G_N_ELEMENTS (views); v++)
    {
      owb_timeline_zoom (timeline, factors[v], 800);
      double snap[5], draw[5];
      if (v == 0)
        render (GTK_WIDGET (timeline), "timeline-100k.png", NULL, NULL);
      for (int k = 0; k < 5; k++)
        measure_frame (GTK_WIDGET (timeline), &snap[k], &draw[k]);
      guint spans, merged;
      owb_timeline_get_drawn (timeline, &spans, &merged);
      /* at most a few rectangles per pixel column and lane */
      g_assert_cmpuint (spans + merged, <=, 4 * 1600);
      double best_snap = snap[0], best_draw = draw[0];
      for (int k = 1; k < 5; k++)
        {
          best_snap = MIN (best_snap, snap[k]);
          best_draw = MIN (best_draw, draw[k]);
        }
      g_test_message ("100,000 events, view %s: %u spans and %u merged blocks drawn; snapshot %.2f ms, render %.2f ms"
                      " (best of 5, cairo)", views[v], spans, merged, best_snap, best_draw);
    }
  /* zoomed in at the run's start, the view stops a hundredth of its own width before it, not a
   * hundredth of the whole run (which at 1/1000 left all of the view empty) */
  owb_timeline_zoom_to_fit (timeline);
  owb_timeline_zoom (timeline, 1000, 86);
  gint64 start, end;
  owb_timeline_get_range (timeline, &start, &end);
  g_assert_cmpint (end - start, <, 25000 * 12000 / 500);
  g_assert_cmpint (start, >=, -(end - start) / 100 - 1);
  g_assert_cmpint (start, <=, 0);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Removes a profile database with its write-ahead log and shared memory files. */
static void
remove_database (const char *db)
{
  const char *suffixes[] = { "", "-wal", "-shm" };
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *f = g_strconcat (db, suffixes[i], NULL);
      g_remove (f);
    }
}

typedef struct {
  OwbProfilePage *page;
  guint want;
} Listing;

static gboolean
runs_listed (gpointer data)
{
  Listing *l = data;
  return !owb_page_get_busy (OWB_PAGE (l->page)) && owb_profile_page_get_n_stored_runs (l->page) == l->want;
}

/* A label under widget whose text contains text, or NULL. */
static GtkLabel *
find_label (GtkWidget *widget, const char *text)
{
  if (GTK_IS_LABEL (widget) && strstr (gtk_label_get_text (GTK_LABEL (widget)), text))
    return GTK_LABEL (widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkLabel *found = find_label (c, text);
      if (found)
        return found;
    }
  return NULL;
}

/* The profile-database setting decides the page's database (and the page follows it), a file
 * that is no profile database is refused, and $OWB_PROFILE_DB wins over the setting. */
static void
test_database_setting (void)
{
  g_autoptr (GSettingsSchema) schema = g_settings_schema_source_lookup (g_settings_schema_source_get_default (),
                                                                        "org.onnxworkbench.Workbench", TRUE);
  g_assert_nonnull (schema);
  g_assert_true (g_settings_schema_has_key (schema, "profile-database"));
  g_autoptr (GSettings) settings = g_settings_new ("org.onnxworkbench.Workbench");
  g_settings_set_string (settings, "profile-database", "");
  g_unsetenv ("OWB_PROFILE_DB");

  g_autoptr (OwbDocument) doc = load_sample ();
  g_autofree char *dir = g_dir_make_tmp ("owb-profile-db-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (dir, "chosen.sqlite", NULL);
  g_autofree char *other = g_build_filename (dir, "from-env.sqlite", NULL);
  g_autofree char *junk = g_build_filename (dir, "junk.sqlite", NULL);
  g_assert_true (g_file_set_contents (junk, "not a database, only text", -1, NULL));

  /* one run stored in db by a page told its path */
  OwbProfilePage *writer = OWB_PROFILE_PAGE (owb_profile_page_new ());
  g_object_ref_sink (writer);
  owb_profile_page_set_database_path (writer, db);
  owb_page_set_document (OWB_PAGE (writer), doc);
  owb_profile_page_profile (writer, 1, 1);
  wait_for (page_idle, writer, 60, "the profile");
  g_assert_null (owb_page_get_error (OWB_PAGE (writer)));
  g_object_unref (writer);

  OwbProfilePage *page = OWB_PROFILE_PAGE (owb_profile_page_new ());
  GtkWidget *window = show_in_window (GTK_WIDGET (page), 1200, 800);
  owb_page_set_document (OWB_PAGE (page), doc);
  g_autofree char *fallback = g_build_filename (g_get_user_data_dir (), "onnx-workbench", "profiles.sqlite", NULL);
  g_assert_cmpstr (owb_profile_page_get_database_path (page), ==, fallback);
  g_assert_nonnull (find_label (GTK_WIDGET (page), fallback));
  g_assert_cmpuint (owb_profile_page_get_n_stored_runs (page), ==, 0);

  /* chosen: the setting holds it, the page lists its run and says where it is */
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_profile_page_choose_database (page, db, &error));
  g_assert_no_error (error);
  g_autofree char *stored = g_settings_get_string (settings, "profile-database");
  g_assert_cmpstr (stored, ==, db);
  g_assert_cmpstr (owb_profile_page_get_database_path (page), ==, db);
  Listing one = { page, 1 };
  wait_for (runs_listed, &one, 60, "the chosen database's run");
  g_assert_nonnull (find_label (GTK_WIDGET (page), db));

  /* not a profile database: refused, the setting kept */
  g_assert_false (owb_profile_page_choose_database (page, junk, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "junk.sqlite"));
  g_clear_error (&error);
  g_autofree char *kept = g_settings_get_string (settings, "profile-database");
  g_assert_cmpstr (kept, ==, db);

  /* the setting changed elsewhere (another window, gsettings): the page follows */
  g_settings_set_string (settings, "profile-database", "");
  settle (0.1);
  g_assert_cmpstr (owb_profile_page_get_database_path (page), ==, fallback);
  g_assert_cmpuint (owb_profile_page_get_n_stored_runs (page), ==, 0);
  g_settings_set_string (settings, "profile-database", db);
  wait_for (runs_listed, &one, 60, "the run again");

  /* $OWB_PROFILE_DB wins over the setting */
  g_setenv ("OWB_PROFILE_DB", other, TRUE);
  OwbProfilePage *env_page = OWB_PROFILE_PAGE (owb_profile_page_new ());
  g_object_ref_sink (env_page);
  owb_page_set_document (OWB_PAGE (env_page), doc);
  g_assert_cmpstr (owb_profile_page_get_database_path (env_page), ==, other);
  g_assert_cmpuint (owb_profile_page_get_n_stored_runs (env_page), ==, 0);
  g_assert_nonnull (find_label (GTK_WIDGET (env_page), "OWB_PROFILE_DB"));
  g_object_unref (env_page);
  g_unsetenv ("OWB_PROFILE_DB");
  g_assert_cmpstr (owb_profile_page_get_database_path (page), ==, db);

  g_settings_set_string (settings, "profile-database", "");
  gtk_window_destroy (GTK_WINDOW (window));
  remove_database (db);
  g_remove (junk);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* An input of no declared rank gets no random values: the page refuses it with the error `owb
 * profile --random` gives (it used to profile such an input as a scalar). */
static void
test_unknown_rank_refused (void)
{
  OwbModel *m = owb_model_new ();
  m->ir_version = 8;
  owb_model_set_opset (m, "", 13);
  m->graph = owb_graph_new ("main");
  m->graph->model = m;
  prof_test_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, -1, NULL);
  prof_test_add_node (m->graph, "Relu", "relu", "x", NULL, NULL, "y");
  prof_test_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, -1, NULL);
  g_autofree char *dir = g_dir_make_tmp ("owb-profile-rank-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "no-rank.onnx", NULL);
  g_autofree char *db = g_build_filename (dir, "profiles.sqlite", NULL);
  GError *error = NULL;
  g_assert_true (owb_model_save_file (m, path, NULL, &error));
  g_assert_no_error (error);
  owb_model_unref (m);

  g_autoptr (OwbDocument) doc = load_document (path);
  OwbProfilePage *page = OWB_PROFILE_PAGE (owb_profile_page_new ());
  GtkWidget *window = show_in_window (GTK_WIDGET (page), 800, 600);
  owb_profile_page_set_database_path (page, db);
  owb_page_set_document (OWB_PAGE (page), doc);
  owb_profile_page_profile (page, 2, 1);
  wait_for (page_idle, page, 60, "the profile");
  const char *message = owb_page_get_error (OWB_PAGE (page));
  g_assert_nonnull (message);
  g_assert_nonnull (strstr (message, "input 'x' has no declared shape"));
  g_assert_cmpuint (owb_profile_page_get_n_stored_runs (page), ==, 0);
  gtk_window_destroy (GTK_WINDOW (window));
  remove_database (db);
  g_remove (path);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int argc, char **argv)
{
  /* settings in memory: the test's own, whatever dconf holds */
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  gtk_test_init (&argc, &argv, NULL);
  adw_init ();
  g_assert_nonnull (owb_ui_get_resource ());
  g_test_add_func ("/profile-page/profile", test_profile_page);
  g_test_add_func ("/profile-page/timeline-frames", test_timeline_frames);
  g_test_add_func ("/profile-page/database-setting", test_database_setting);
  g_test_add_func ("/profile-page/unknown-rank-refused", test_unknown_rank_refused);
  return g_test_run ();
}
