/* graph-view-bench.c: how fast the graph canvas lays out and draws generated neural-net-like graphs
 * of 1k, 10k and 50k ops (with and without exporter scopes): scene build + layout time, then frame
 * times from the GdkFrameClock while a tick callback pans and zooms a 1600×1000 window.
 * Run under tests/ui/gui-test.sh: graph-view-bench [--frames N] [--flat-only|--scoped-only] [OPS...] */
#include <gtk/gtk.h>
#include <adwaita.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "owb-graph-view.h"

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
  gboolean fit_painted;
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
  run->fit_painted = TRUE;
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
save_screenshot (GtkWidget *view, guint n_ops, gboolean scoped)
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
    return;
  g_autoptr (GdkTexture) texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (view)),
                                                                node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_autofree char *name = g_strdup_printf ("graph-view-bench-%u-%s.png", n_ops, scoped ? "scoped" : "flat");
  g_autofree char *path = g_build_filename (dir, name, NULL);
  gdk_texture_save_to_png (texture, path);
}

static gboolean
is_busy (OwbGraphView *view)
{
  return owb_graph_view_get_busy (view);
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

  Run run = { view, n_frames, 0, owb_graph_view_get_zoom (view) };
  run.intervals = g_array_new (FALSE, FALSE, sizeof (double));
  run.work = g_array_new (FALSE, FALSE, sizeof (double));
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (view));
  gulong before_id = g_signal_connect (clock, "before-paint", G_CALLBACK (before_paint), &run);
  gulong after_id = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint), &run);
  /* The first frame at fit is drawn before timing, as a user would see it after opening. */
  run.fit_painted = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (view));
  while (!run.fit_painted)
    g_main_context_iteration (NULL, TRUE);
  save_screenshot (GTK_WIDGET (view), n_ops, scoped);
  gtk_widget_add_tick_callback (GTK_WIDGET (view), tick, &run, NULL);
  while (!run.done)
    g_main_context_iteration (NULL, TRUE);
  g_signal_handler_disconnect (clock, before_id);
  g_signal_handler_disconnect (clock, after_id);

  double median, worst, work_median, work_worst;
  stats (run.intervals, &median, &worst);
  stats (run.work, &work_median, &work_worst);
  g_autofree char *label = n_ops >= 1000 ? g_strdup_printf ("%uk%s", n_ops / 1000, scoped ? "-scoped" : "-flat")
                                          : g_strdup_printf ("%u%s", n_ops, scoped ? "-scoped" : "-flat");
  printf ("%-12s %7u %9.0f %7u %10.1f %9.1f %10.1f %9.1f   (generate+infer %.0f ms, fit zoom %.4f)\n",
          label, model->graph->nodes->len, scene_ms, run.intervals->len, median, worst, work_median,
          work_worst, generate_ms, run.fit_zoom);
  fflush (stdout);
  g_array_unref (run.intervals);
  g_array_unref (run.work);
  owb_graph_view_set_graph (view, NULL, NULL, NULL);
}

int
main (int argc, char **argv)
{
  guint n_frames = 240;
  gboolean flat = TRUE, scoped = TRUE;
  g_autoptr (GArray) sizes = g_array_new (FALSE, FALSE, sizeof (guint));
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--frames") && i + 1 < argc)
        n_frames = (guint) atoi (argv[++i]);
      else if (g_str_equal (argv[i], "--flat-only"))
        scoped = FALSE;
      else if (g_str_equal (argv[i], "--scoped-only"))
        flat = FALSE;
      else
        {
          guint n = (guint) atoi (argv[i]);
          if (n == 0)
            {
              fprintf (stderr, "usage: %s [--frames N] [--flat-only|--scoped-only] [OPS...]\n", argv[0]);
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
