/* graph-view-bench.c: how fast the graph canvas lays out and draws generated neural-net-like graphs
 * of 1k, 10k and 50k ops (with and without exporter scopes): scene build + layout time, then frame
 * times from the GdkFrameClock while a tick callback pans and zooms a 1600×1000 window.
 * With --open MODEL, a model file through the app's own path instead (a workbench window: the
 * document's load, the session prepared behind the graph, layout, scene, the first painted frame
 * with nodes), then the same panning and zooming, and the peak RSS.
 * Run under tests/ui/gui-test.sh:
 *   graph-view-bench [--frames N] [--flat-only|--scoped-only] [OPS...]
 *   graph-view-bench --open MODEL [-O LEVEL] [--frames N] [--prepare-timeout S] */
#include <gtk/gtk.h>
#include <adwaita.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "owb-application.h"
#include "owb-graph-scene.h"
#include "owb-graph-view.h"
#include "owb-window-private.h"

/* ---- generated graphs ---- */

static void
add_value (GPtrArray *list, const char *name)
{
  int64_t dims[] = { 1, 16 };
  OwbValueType type;
  owb_value_type_init_tensor (&type, OWB_TYPE_FLOAT, 2, dims);
  g_ptr_array_add (list, owb_value_info_new (name, &type));
}

static void
add_op (OwbGraph *graph, const char *op, const char *name, const char *a, const char *b, const char *out)
{
  OwbNode *node = owb_node_new (op, "", name);
  owb_node_add_input (node, a);
  if (b)
    owb_node_add_input (node, b);
  owb_node_add_output (node, out);
  owb_graph_add_node (graph, node);
}

static char *
flat_name (char *name, gboolean scoped)
{
  return scoped ? name : g_strdelimit (name, "/", '_');
}

/* Layers of 10 ops shaped like a transformer block: three parallel projections, a gate, a
 * residual Add, an MLP and a second residual. Scoped names put layers in stages of 50
 * ("/stage.3/layer.151/attention/q/MatMul"); flat names have no scope. */
static OwbModel *
generate_model (guint n_ops, gboolean scoped)
{
  OwbModel *model = owb_model_new ();
  model->ir_version = 8;
  owb_model_set_opset (model, "", 17);
  OwbGraph *g = model->graph = owb_graph_new ("bench");
  g->model = model;
  int64_t wdims[] = { 16, 16 };
  owb_graph_add_initializer (g, "W", owb_tensor_new (OWB_TYPE_FLOAT, 2, wdims, NULL));
  add_value (g->inputs, "input");
  g_autofree char *x = g_strdup ("input");
  guint layers = MAX (1, n_ops / 10);
  for (guint l = 0; l < layers; l++)
    {
      g_autofree char *p = scoped ? g_strdup_printf ("/stage.%u/layer.%u", l / 50, l) : g_strdup_printf ("l%u", l);
      const char *sep = scoped ? "/" : "_";
#define NAME(buf, fmt) g_autofree char *buf = flat_name (g_strdup_printf ("%s%s" fmt, p, sep), scoped)
      NAME (q, "attention/q/MatMul"); NAME (k, "attention/k/MatMul"); NAME (v, "attention/v/MatMul");
      NAME (s, "attention/Mul"); NAME (pr, "attention/Sigmoid"); NAME (o, "attention/Mul_1");
      NAME (h, "Add"); NAME (r, "mlp/Relu"); NAME (m, "mlp/MatMul"); NAME (y, "Add_1");
      NAME (tq, "q"); NAME (tk, "k"); NAME (tv, "v"); NAME (ts, "s"); NAME (tp, "p"); NAME (to, "o");
      NAME (th, "h"); NAME (tr, "r"); NAME (tm, "m"); NAME (ty, "y");
#undef NAME
      add_op (g, "MatMul", q, x, "W", tq);
      add_op (g, "MatMul", k, x, "W", tk);
      add_op (g, "MatMul", v, x, "W", tv);
      add_op (g, "Mul", s, tq, tk, ts);
      add_op (g, "Sigmoid", pr, ts, NULL, tp);
      add_op (g, "Mul", o, tp, tv, to);
      add_op (g, "Add", h, to, x, th);
      add_op (g, "Relu", r, th, NULL, tr);
      add_op (g, "MatMul", m, tr, "W", tm);
      add_op (g, "Add", y, tm, th, ty);
      g_free (x);
      x = g_strdup (ty);
    }
  add_value (g->outputs, x);
  g_autoptr (GError) error = NULL;
  if (!owb_model_validate (model, &error) || !owb_model_infer_shapes (model, &error))
    g_error ("generated model is invalid: %s", error->message);
  return model;
}

/* ---- frames ---- */

typedef struct {
  OwbGraphView *view;
  guint n_frames, frame;
  double fit_zoom;
  gint64 before_paint;
  GArray *intervals, *work;  /* ms */
  gint64 last_paint;
  gboolean done;
} Run;

static void
before_paint (GdkFrameClock *clock, Run *run)
{
  run->before_paint = g_get_monotonic_time ();
}

static void
after_paint (GdkFrameClock *clock, Run *run)
{
  gint64 now = g_get_monotonic_time ();
  if (run->frame == 0 || run->done)
    return;
  double work = (now - run->before_paint) / 1000.0;
  g_array_append_val (run->work, work);
  if (run->last_paint)
    {
      double interval = (now - run->last_paint) / 1000.0;
      g_array_append_val (run->intervals, interval);
    }
  run->last_paint = now;
}

/* Half the frames pan across the graph at 100 %, a quarter zoom out to the whole graph, a quarter
 * zoom back in: every level of detail, and tiles built and reused. */
static gboolean
tick (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  Run *run = data;
  if (run->frame >= run->n_frames)
    {
      run->done = TRUE;
      return G_SOURCE_REMOVE;
    }
  guint half = run->n_frames / 2, quarter = run->n_frames / 4;
  if (run->frame == 0)
    owb_graph_view_set_zoom (run->view, 1.0);
  if (run->frame < half)
    owb_graph_view_scroll_by (run->view, 14 * cos (run->frame * 0.05), 9);
  else
    {
      double t = run->frame < half + quarter ? (run->frame - half) / (double) quarter
                                             : 1 - (run->frame - half - quarter) / (double) quarter;
      owb_graph_view_set_zoom (run->view, exp (log (run->fit_zoom) * t));
    }
  run->frame++;
  return G_SOURCE_CONTINUE;
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static void
stats (GArray *values, double *median, double *worst)
{
  *median = *worst = NAN;
  if (values->len == 0)
    return;
  g_array_sort (values, compare_doubles);
  *median = g_array_index (values, double, values->len / 2);
  *worst = g_array_index (values, double, values->len - 1);
}

/* With OWB_BENCH_SCREENSHOT_DIR set, the view at fit is saved there, to look at. */
static void
save_screenshot (GtkWidget *view, const char *name)
{
  const char *dir = g_getenv ("OWB_BENCH_SCREENSHOT_DIR");
  if (!dir)
    return;
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (view);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  int width = gtk_widget_get_width (view), height = gtk_widget_get_height (view);
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  g_autoptr (GskRenderNode) node = gtk_snapshot_free_to_node (snapshot);
  if (!node)
    {
      g_printerr ("graph-view-bench: nothing to save as %s\n", name);
      return;
    }
  g_autoptr (GdkTexture) texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (view)),
                                                                node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_autofree char *path = g_build_filename (dir, name, NULL);
  if (!texture || !gdk_texture_save_to_png (texture, path))
    g_printerr ("graph-view-bench: could not save %s\n", path);
}

static void
set_true (gboolean *flag)
{
  *flag = TRUE;
}

/* Draws the next frame and waits for it. */
static void
paint_once (GtkWidget *widget)
{
  gboolean painted = FALSE;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
  gulong id = g_signal_connect_swapped (clock, "after-paint", G_CALLBACK (set_true), &painted);
  gtk_widget_queue_draw (widget);
  while (!painted)
    g_main_context_iteration (NULL, TRUE);
  g_signal_handler_disconnect (clock, id);
}

static gboolean
is_busy (OwbGraphView *view)
{
  return owb_graph_view_get_busy (view);
}

/* Pans and zooms `view` for n_frames frames (see tick): frame intervals and paint work, sorted. */
static void
run_frames (OwbGraphView *view, guint n_frames, double fit_zoom, GArray *intervals, GArray *work)
{
  Run run = { view, n_frames, 0, fit_zoom };
  run.intervals = intervals;
  run.work = work;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (view));
  gulong before_id = g_signal_connect (clock, "before-paint", G_CALLBACK (before_paint), &run);
  gulong after_id = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint), &run);
  gtk_widget_add_tick_callback (GTK_WIDGET (view), tick, &run, NULL);
  while (!run.done)
    g_main_context_iteration (NULL, TRUE);
  g_signal_handler_disconnect (clock, before_id);
  g_signal_handler_disconnect (clock, after_id);
}

static void
bench_one (GtkWidget *window, OwbGraphView *view, guint n_ops, gboolean scoped, guint n_frames)
{
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (OwbModel) model = generate_model (n_ops, scoped);
  double generate_ms = (g_get_monotonic_time () - t0) / 1000.0;

  t0 = g_get_monotonic_time ();
  owb_graph_view_set_graph (view, model->graph, owb_model_ref (model), (GDestroyNotify) owb_model_unref);
  while (is_busy (view))
    g_main_context_iteration (NULL, TRUE);
  double scene_ms = (g_get_monotonic_time () - t0) / 1000.0;
  if (!owb_graph_view_has_scene (view))
    {
      printf ("%-12s %7u  layout failed\n", scoped ? "scoped" : "flat", model->graph->nodes->len);
      return;
    }
  owb_graph_view_zoom_to_fit (view);

  /* The first frame at fit is drawn before timing, as a user would see it after opening. */
  double fit_zoom = owb_graph_view_get_zoom (view);
  paint_once (GTK_WIDGET (view));
  g_autofree char *shot = g_strdup_printf ("graph-view-bench-%u-%s.png", n_ops, scoped ? "scoped" : "flat");
  save_screenshot (GTK_WIDGET (view), shot);
  g_autoptr (GArray) intervals = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) work = g_array_new (FALSE, FALSE, sizeof (double));
  run_frames (view, n_frames, fit_zoom, intervals, work);

  double median, worst, work_median, work_worst;
  stats (intervals, &median, &worst);
  stats (work, &work_median, &work_worst);
  g_autofree char *label = n_ops >= 1000 ? g_strdup_printf ("%uk%s", n_ops / 1000, scoped ? "-scoped" : "-flat")
                                          : g_strdup_printf ("%u%s", n_ops, scoped ? "-scoped" : "-flat");
  printf ("%-12s %7u %9.0f %7u %10.1f %9.1f %10.1f %9.1f   (generate+infer %.0f ms, fit zoom %.4f)\n",
          label, model->graph->nodes->len, scene_ms, intervals->len, median, worst, work_median,
          work_worst, generate_ms, fit_zoom);
  fflush (stdout);
  owb_graph_view_set_graph (view, NULL, NULL, NULL);
}

/* ---- a model file, as the app opens it ---- */

typedef struct {
  OwbWindow *window;
  OwbGraphView *view;
  gint64 start;
  double load_ms, scene_ms, first_frame_ms, prepared_ms, final_ms;
  const OwbGraphScene *first_scene;
  guint first_nodes;
  gboolean scene_seen, prepared_seen;
  guint64 first_frame_rss_kb, load_rss_kb;
} Open;

static guint64 status_kb (const char *field);

static double
since_ms (gint64 start)
{
  return (g_get_monotonic_time () - start) / 1000.0;
}

static gboolean
session_ready (OwbWindow *window)
{
  OwbDocument *document = owb_window_get_document (window);
  OwbPrepared *prepared = document ? owb_document_get_prepared (document) : NULL;
  return prepared && !owb_prepared_is_pending (prepared) && !owb_document_get_preparing (document);
}

/* The view shows the prepared graph, laid out. */
static gboolean
final_on_screen (Open *open)
{
  OwbDocument *document = owb_window_get_document (open->window);
  return session_ready (open->window) && !owb_graph_view_get_busy (open->view) &&
         owb_graph_view_has_scene (open->view) &&
         owb_graph_view_get_graph (open->view) == owb_prepared_get_graph (owb_document_get_prepared (document));
}

static void
open_page_shown (GtkStack *stack, GParamSpec *pspec, Open *open)
{
  if (open->load_ms == 0 && g_strcmp0 (gtk_stack_get_visible_child_name (stack), "document") == 0)
    {
      open->load_ms = since_ms (open->start);
      open->load_rss_kb = status_kb ("VmRSS:");
    }
}

static void
open_scene_changed (OwbGraphView *view, Open *open)
{
  if (open->scene_seen || !owb_graph_view_has_scene (view) ||
      owb_graph_scene_get_n_nodes (owb_graph_view_get_scene (view)) == 0)
    return;
  open->scene_seen = TRUE;
  open->scene_ms = since_ms (open->start);
  open->first_scene = owb_graph_view_get_scene (view);
  open->first_nodes = owb_graph_view_get_graph (view)->nodes->len;
}

/* The first paint after the scene came, with the window's page cross-fade from the loading page
 * over, is the first frame with nodes on screen. */
static void
open_after_paint (GdkFrameClock *clock, Open *open)
{
  if (open->scene_seen && open->first_frame_ms == 0 && !gtk_stack_get_transition_running (open->window->main_stack))
    {
      open->first_frame_ms = since_ms (open->start);
      open->first_frame_rss_kb = status_kb ("VmRSS:");
    }
  if (open->prepared_ms == 0 && session_ready (open->window))
    open->prepared_ms = since_ms (open->start);
  if (open->final_ms == 0 && final_on_screen (open))
    open->final_ms = since_ms (open->start);
}

static guint64
status_kb (const char *field)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/status", &text, NULL, NULL))
    return 0;
  const char *line = strstr (text, field);
  return line ? g_ascii_strtoull (line + strlen (field), NULL, 10) : 0;
}

static int
bench_open (const char *path, OwbOptimizeLevel level, guint n_frames, double prepare_timeout_s)
{
  /* Settings in memory: the user's default level and window size are not read or changed. */
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  owb_application_use_build_tree_schema ();
  GtkApplication *app = GTK_APPLICATION (owb_application_new ());
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr (GError) error = NULL;
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    {
      fprintf (stderr, "graph-view-bench: cannot register the application: %s\n", error->message);
      return 1;
    }
  g_application_hold (G_APPLICATION (app));

  Open open = { 0 };
  open.window = owb_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (open.window), 1600, 1000);
  gtk_drop_down_set_selected (open.window->level_drop_down, level);
  gtk_window_present (GTK_WINDOW (open.window));
  open.view = owb_graph_pane_get_view (open.window->graph_pane);
  while (!gtk_widget_get_mapped (GTK_WIDGET (open.window)))
    g_main_context_iteration (NULL, TRUE);
  /* Settle what the welcome page draws first. */
  for (int i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);

  g_signal_connect (open.window->main_stack, "notify::visible-child-name", G_CALLBACK (open_page_shown), &open);
  g_signal_connect (open.view, "scene-changed", G_CALLBACK (open_scene_changed), &open);
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (open.window));
  gulong paint_id = g_signal_connect (clock, "after-paint", G_CALLBACK (open_after_paint), &open);

  g_autoptr (GFile) file = g_file_new_for_commandline_arg (path);
  guint64 rss_before = status_kb ("VmRSS:");
  open.start = g_get_monotonic_time ();
  owb_window_open_file (open.window, file);
  gint64 deadline = open.start + (gint64) (prepare_timeout_s * G_USEC_PER_SEC);
  /* The longest one dispatch of the main loop took: work done on the main thread while opening
   * (the loop does not block, so that a dispatch is timed alone). */
  double longest_stall_ms = 0;
  while (open.first_frame_ms == 0 || open.final_ms == 0)
    {
      if (g_get_monotonic_time () > deadline)
        break;
      if (g_strcmp0 (gtk_stack_get_visible_child_name (open.window->main_stack), "error") == 0)
        {
          fprintf (stderr, "graph-view-bench: %s: %s\n", path,
                   adw_status_page_get_description (open.window->error_page));
          return 1;
        }
      /* Paint while waiting, as a screen would: the frame clock only runs when asked. */
      gtk_widget_queue_draw (GTK_WIDGET (open.view));
      gint64 before = g_get_monotonic_time ();
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (500);
      else
        longest_stall_ms = MAX (longest_stall_ms, (g_get_monotonic_time () - before) / 1000.0);
    }
  g_signal_handler_disconnect (clock, paint_id);

  OwbDocument *document = owb_window_get_document (open.window);
  guint n_nodes = document ? owb_document_get_model (document)->graph->nodes->len : 0;
  printf ("model: %s (%u nodes), level %s, GSK renderer %s, view %d×%d\n", path, n_nodes,
          owb_optimize_level_to_string (level),
          G_OBJECT_TYPE_NAME (gtk_native_get_renderer (GTK_NATIVE (open.window))),
          gtk_widget_get_width (GTK_WIDGET (open.view)), gtk_widget_get_height (GTK_WIDGET (open.view)));
  printf ("load-ms: %.0f\n", open.load_ms);
  printf ("layout-ms: %.0f (the scene of %u nodes on the view; %.0f after the load)\n", open.scene_ms,
          open.first_nodes, open.scene_ms - open.load_ms);
  if (open.first_frame_ms > 0)
    printf ("first-frame-ms: %.0f\n", open.first_frame_ms);
  else
    printf ("first-frame-ms: none after %.0f s\n", prepare_timeout_s);
  if (open.prepared_ms > 0)
    printf ("prepared-ms: %.0f (the session ready)\n", open.prepared_ms);
  else
    printf ("prepared-ms: none after %.0f s\n", prepare_timeout_s);
  if (open.final_ms > 0)
    {
      const OwbGraph *final = owb_graph_view_get_graph (open.view);
      printf ("session-frame-ms: %.0f (the session's graph of %u nodes drawn, %s)\n", open.final_ms,
              final->nodes->len,
              owb_graph_view_get_scene (open.view) == open.first_scene ? "on the first layout" : "laid out again");
    }
  printf ("scene: %u boxes, %u edges; %u blocks of the view's own\n",
          owb_graph_scene_get_n_nodes (owb_graph_view_get_scene (open.view)),
          owb_graph_scene_get_n_edges (owb_graph_view_get_scene (open.view)),
          owb_graph_scene_get_n_blocks (owb_graph_view_get_scene (open.view)));
  fflush (stdout);

  if (owb_graph_view_has_scene (open.view))
    {
      owb_graph_view_zoom_to_fit (open.view);
      double fit_zoom = owb_graph_view_get_zoom (open.view);
      paint_once (GTK_WIDGET (open.view));
      g_autofree char *base = g_path_get_basename (path);
      g_autofree char *shot = g_strdup_printf ("graph-view-bench-open-%s-%s.png", base, owb_optimize_level_to_string (level));
      save_screenshot (GTK_WIDGET (open.window->toast_overlay), shot);
      g_autoptr (GArray) intervals = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr (GArray) work = g_array_new (FALSE, FALSE, sizeof (double));
      run_frames (open.view, n_frames, fit_zoom, intervals, work);
      double median, worst, work_median, work_worst;
      stats (intervals, &median, &worst);
      stats (work, &work_median, &work_worst);
      printf ("frames: %u (half panning at 100%%, half zooming to fit %.4f and back)\n", intervals->len, fit_zoom);
      printf ("frame-median-ms: %.1f\nframe-worst-ms: %.1f\n", median, worst);
      printf ("paint-median-ms: %.1f\npaint-worst-ms: %.1f\n", work_median, work_worst);
    }
  printf ("longest-main-loop-dispatch-ms: %.0f (while opening)\n", longest_stall_ms);
  printf ("rss-before-open-mb: %.0f\n", rss_before / 1024.0);
  printf ("rss-at-load-mb: %.0f (the model loaded, its session just started)\n", open.load_rss_kb / 1024.0);
  printf ("rss-at-first-frame-mb: %.0f\n", open.first_frame_rss_kb / 1024.0);
  printf ("rss-mb: %.0f\npeak-rss-mb: %.0f\n", status_kb ("VmRSS:") / 1024.0, status_kb ("VmHWM:") / 1024.0);
  fflush (stdout);
  gtk_window_destroy (GTK_WINDOW (open.window));
  g_application_release (G_APPLICATION (app));
  return open.first_frame_ms > 0 ? 0 : 1;
}

int
main (int argc, char **argv)
{
  guint n_frames = 240;
  gboolean flat = TRUE, scoped = TRUE;
  const char *open_path = NULL;
  OwbOptimizeLevel level = OWB_OPTIMIZE_DISABLED;
  double prepare_timeout_s = 300;
  g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (guint));
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--frames") && i + 1 < argc)
        n_frames = (guint) atoi (argv[++i]);
      else if (g_str_equal (argv[i], "--open") && i + 1 < argc)
        open_path = argv[++i];
      else if (g_str_equal (argv[i], "--prepare-timeout") && i + 1 < argc)
        prepare_timeout_s = g_ascii_strtod (argv[++i], NULL);
      else if ((g_str_equal (argv[i], "-O") || g_str_equal (argv[i], "--level")) && i + 1 < argc)
        {
          if (!owb_optimize_level_from_string (argv[++i], &level))
            {
              fprintf (stderr, "graph-view-bench: unknown level '%s'\n", argv[i]);
              return 2;
            }
        }
      else if (g_str_equal (argv[i], "--flat-only"))
        scoped = FALSE;
      else if (g_str_equal (argv[i], "--scoped-only"))
        flat = FALSE;
      else
        {
          guint n = (guint) atoi (argv[i]);
          if (n == 0)
            {
              fprintf (stderr, "usage: %s [--frames N] [--flat-only|--scoped-only] [OPS...]\n"
                               "       %s --open MODEL [-O LEVEL] [--frames N] [--prepare-timeout S]\n",
                       argv[0], argv[0]);
              return 2;
            }
          g_array_append_val (sizes, n);
        }
    }
  if (sizes->len == 0)
    {
      guint defaults[] = { 1000, 10000, 50000 };
      g_array_append_vals (sizes, defaults, 3);
    }
  n_frames = MAX (n_frames, 8);

  if (open_path)
    {
      adw_init ();
      return bench_open (open_path, level, n_frames, prepare_timeout_s);
    }

  gtk_init ();
  adw_init ();
  GtkWidget *window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), 1600, 1000);
  OwbGraphView *view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  gtk_window_set_child (GTK_WINDOW (window), GTK_WIDGET (view));
  gtk_window_present (GTK_WINDOW (window));
  while (!gtk_widget_get_mapped (GTK_WIDGET (view)) || gtk_widget_get_width (GTK_WIDGET (view)) < 2)
    g_main_context_iteration (NULL, TRUE);

  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (GTK_WIDGET (view)));
  printf ("GSK renderer: %s; view %d×%d; %u frames each (half panning at 100%%, half zooming to fit and back)\n",
          G_OBJECT_TYPE_NAME (renderer), gtk_widget_get_width (GTK_WIDGET (view)),
          gtk_widget_get_height (GTK_WIDGET (view)), n_frames);
  printf ("frame = time between paints (frame clock after-paint); work = before-paint to after-paint\n");
  printf ("%-12s %7s %9s %7s %10s %9s %10s %9s\n", "graph", "ops", "scene_ms", "frames", "frame_med",
          "frame_max", "work_med", "work_max");
  for (guint i = 0; i < sizes->len; i++)
    {
      if (flat)
        bench_one (window, view, g_array_index (sizes, guint, i), FALSE, n_frames);
      if (scoped)
        bench_one (window, view, g_array_index (sizes, guint, i), TRUE, n_frames);
    }
  gtk_window_destroy (GTK_WINDOW (window));
  return 0;
}
