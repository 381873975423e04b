/* owb-timeline.c: the timeline of a profiling run. Events are kept per lane in start order, so a
 * frame visits only those in view; spans narrower than two pixels are merged with their neighbours
 * into one block, so a frame draws at most a few rectangles per pixel column however many events
 * the run has. Nested events (a Loop's body) are drawn lower in their parent's span. */
#include "owb-timeline.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>
#include <owb/owb-model-io.h>

#define AXIS_HEIGHT 22.0
#define LANE_HEIGHT 30.0
#define LABEL_WIDTH 86.0
#define NEST_STEP 7.0
#define MIN_VIEW_NS 2000.0 /* the deepest zoom: 2 us across */
#define MERGE_PX 2.0

struct _OwbTimeline
{
  GtkWidget parent_instance;

  OwbProfRun *run;
  guint n_lanes;
  GArray **lanes;        /* per lane: guint event indices in start order */
  gint64 *lane_longest;  /* per lane: the longest event, to find those that start before the view */
  guint8 *depth;         /* per event: how deep it nests in others of its lane */
  GHashTable *op_colours; /* op type -> palette index + 1: the run's ops by time, each its own colour */
  gint64 end_ns;         /* of the run */

  double view_start;     /* ns at the left edge of the time area */
  double view_ns;        /* ns across it */
  double pointer_x;
  double drag_start_view;
  double pinch_start_view_ns;
  int selected;          /* event index, -1 */
  guint drawn_spans, drawn_merged;
};

G_DEFINE_FINAL_TYPE (OwbTimeline, owb_timeline, GTK_TYPE_WIDGET)

enum {
  NODE_ACTIVATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static const OwbProfEvent *
event_get (OwbTimeline *self, guint index)
{
  return &g_array_index (self->run->events, OwbProfEvent, index);
}

static const OwbProfNode *
event_node (OwbTimeline *self, const OwbProfEvent *ev)
{
  return g_ptr_array_index (self->run->nodes, ev->node);
}

static double
time_width (OwbTimeline *self)
{
  return MAX (gtk_widget_get_width (GTK_WIDGET (self)) - LABEL_WIDTH, 1.0);
}

static double
ns_of (OwbTimeline *self, double x)
{
  return self->view_start + (x - LABEL_WIDTH) / time_width (self) * self->view_ns;
}

static const guint32 palette[] = { 0x3584e4, 0xff7800, 0x33d17a, 0x9141ac, 0xe01b24, 0xf6d32d,
                                   0x986a44, 0x1c71d8, 0x26a269, 0xc64600, 0x613583, 0x2ec27e };

/* The op's colour: the run's ops take the palette in order of their time, so the ops that matter
 * never share one; the rest (and ops of no run) by a hash of the name. */
static void
op_colour (OwbTimeline *self, const char *op_type, GdkRGBA *rgba)
{
  guint index = self->op_colours ? GPOINTER_TO_UINT (g_hash_table_lookup (self->op_colours, op_type)) : 0;
  guint32 c = index > 0 && index <= G_N_ELEMENTS (palette) ? palette[index - 1]
                                                           : palette[g_str_hash (op_type ? op_type : "") % G_N_ELEMENTS (palette)];
  *rgba = (GdkRGBA){ ((c >> 16) & 0xff) / 255.0f, ((c >> 8) & 0xff) / 255.0f, (c & 0xff) / 255.0f, 1.0f };
}

static void
clamp_view (OwbTimeline *self)
{
  double total = MAX ((double) self->end_ns, MIN_VIEW_NS);
  self->view_ns = CLAMP (self->view_ns, MIN_VIEW_NS, total * 1.02);
  /* a little room before the start and after the end, a hundredth of what is in view: of the run
   * when it all is, so zoomed in at the start the view is not left empty */
  double margin = MIN (total, self->view_ns) * 0.01;
  self->view_start = CLAMP (self->view_start, -margin, total + margin - self->view_ns);
}

static void
clear_run (OwbTimeline *self)
{
  for (guint l = 0; l < self->n_lanes; l++)
    g_array_unref (self->lanes[l]);
  g_clear_pointer (&self->lanes, g_free);
  g_clear_pointer (&self->lane_longest, g_free);
  g_clear_pointer (&self->depth, g_free);
  g_clear_pointer (&self->op_colours, g_hash_table_unref);
  g_clear_pointer (&self->run, owb_prof_run_free);
  self->n_lanes = 0;
  self->end_ns = 0;
  self->selected = -1;
}

static int
by_start (gconstpointer a, gconstpointer b, gpointer data)
{
  OwbTimeline *self = data;
  const OwbProfEvent *x = event_get (self, *(const guint *) a), *y = event_get (self, *(const guint *) b);
  if (x->start_ns != y->start_ns)
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
  /* the enclosing one first */
  return (x->duration_ns < y->duration_ns) - (x->duration_ns > y->duration_ns);
}

void
owb_timeline_take_run (OwbTimeline *self, OwbProfRun *run)
{
  g_return_if_fail (OWB_IS_TIMELINE (self));
  clear_run (self);
  self->run = run;
  if (run)
    {
      for (guint e = 0; e < run->events->len; e++)
        self->n_lanes = MAX (self->n_lanes, g_array_index (run->events, OwbProfEvent, e).thread + 1);
      self->n_lanes = MAX (self->n_lanes, 1);
      self->lanes = g_new0 (GArray *, self->n_lanes);
      self->lane_longest = g_new0 (gint64, self->n_lanes);
      self->depth = g_new0 (guint8, MAX (run->events->len, 1));
      for (guint l = 0; l < self->n_lanes; l++)
        self->lanes[l] = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint e = 0; e < run->events->len; e++)
        {
          const OwbProfEvent *ev = event_get (self, e);
          g_array_append_val (self->lanes[ev->thread], e);
          self->lane_longest[ev->thread] = MAX (self->lane_longest[ev->thread], ev->duration_ns);
          self->end_ns = MAX (self->end_ns, ev->start_ns + ev->duration_ns);
        }
      for (guint i = 0; i < run->iterations->len; i++)
        {
          const OwbProfIteration *it = &g_array_index (run->iterations, OwbProfIteration, i);
          self->end_ns = MAX (self->end_ns, it->start_ns + it->duration_ns);
        }
      self->op_colours = g_hash_table_new (g_str_hash, g_str_equal);
      g_autoptr (GArray) ops = owb_prof_run_dup_op_stats (run);
      for (guint i = 0; i < ops->len; i++)
        g_hash_table_insert (self->op_colours, (gpointer) g_array_index (ops, OwbProfStat, i).op_type,
                             GUINT_TO_POINTER (i + 1));
      /* nesting: an event that starts inside the one open before it on its lane */
      g_autoptr (GArray) open = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint l = 0; l < self->n_lanes; l++)
        {
          g_array_sort_with_data (self->lanes[l], by_start, self);
          g_array_set_size (open, 0);
          for (guint k = 0; k < self->lanes[l]->len; k++)
            {
              guint e = g_array_index (self->lanes[l], guint, k);
              const OwbProfEvent *ev = event_get (self, e);
              while (open->len > 0)
                {
                  const OwbProfEvent *top = event_get (self, g_array_index (open, guint, open->len - 1));
                  if (top->start_ns + top->duration_ns > ev->start_ns)
                    break;
                  g_array_set_size (open, open->len - 1);
                }
              self->depth[e] = (guint8) MIN (open->len, 3);
              g_array_append_val (open, e);
            }
        }
    }
  owb_timeline_zoom_to_fit (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

const OwbProfRun *
owb_timeline_get_run (OwbTimeline *self)
{
  g_return_val_if_fail (OWB_IS_TIMELINE (self), NULL);
  return self->run;
}

void
owb_timeline_get_range (OwbTimeline *self, gint64 *start_ns, gint64 *end_ns)
{
  g_return_if_fail (OWB_IS_TIMELINE (self));
  *start_ns = (gint64) self->view_start;
  *end_ns = (gint64) (self->view_start + self->view_ns);
}

void
owb_timeline_set_range (OwbTimeline *self, gint64 start_ns, gint64 end_ns)
{
  g_return_if_fail (OWB_IS_TIMELINE (self));
  self->view_start = (double) start_ns;
  self->view_ns = (double) MAX (end_ns - start_ns, 1);
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
owb_timeline_zoom (OwbTimeline *self, double factor, double x)
{
  g_return_if_fail (OWB_IS_TIMELINE (self));
  double anchor = ns_of (self, x);
  self->view_ns /= factor;
  clamp_view (self);
  self->view_start = anchor - (x - LABEL_WIDTH) / time_width (self) * self->view_ns;
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
owb_timeline_zoom_to_fit (OwbTimeline *self)
{
  g_return_if_fail (OWB_IS_TIMELINE (self));
  self->view_ns = MAX ((double) self->end_ns * 1.02, MIN_VIEW_NS);
  self->view_start = -(double) self->end_ns * 0.01;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
owb_timeline_get_drawn (OwbTimeline *self, guint *n_spans, guint *n_merged)
{
  g_return_if_fail (OWB_IS_TIMELINE (self));
  *n_spans = self->drawn_spans;
  *n_merged = self->drawn_merged;
}

/* The first event of lane whose span may reach into [from, ...): those starting before from - the
 * lane's longest cannot. */
static guint
lane_first_visible (OwbTimeline *self, guint lane, double from)
{
  GArray *idx = self->lanes[lane];
  double limit = from - (double) self->lane_longest[lane];
  guint lo = 0, hi = idx->len;
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      if ((double) event_get (self, g_array_index (idx, guint, mid))->start_ns < limit)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

int
owb_timeline_event_at (OwbTimeline *self, double x, double y)
{
  g_return_val_if_fail (OWB_IS_TIMELINE (self), -1);
  if (!self->run || x < LABEL_WIDTH || y < AXIS_HEIGHT)
    return -1;
  guint lane = (guint) ((y - AXIS_HEIGHT) / LANE_HEIGHT);
  if (lane >= self->n_lanes)
    return -1;
  double t = ns_of (self, x), slack = self->view_ns / time_width (self) * 2; /* two pixels */
  double in_lane = y - AXIS_HEIGHT - lane * LANE_HEIGHT;
  int best = -1;
  GArray *idx = self->lanes[lane];
  for (guint k = lane_first_visible (self, lane, t - slack); k < idx->len; k++)
    {
      guint e = g_array_index (idx, guint, k);
      const OwbProfEvent *ev = event_get (self, e);
      if (ev->start_ns > t + slack)
        break;
      if (t + slack < ev->start_ns || t - slack > ev->start_ns + ev->duration_ns)
        continue;
      /* the deepest one under the pointer's row */
      if (in_lane < 3 + self->depth[e] * NEST_STEP)
        continue;
      if (best < 0 || self->depth[e] > self->depth[best])
        best = (int) e;
    }
  return best;
}

/* ---- Drawing ----
 * One pass over the run draws the screen (GtkSnapshot) and the SVG export alike, through a
 * painter: the export is the same lanes, spans, merged blocks, labels and axis as the view. */

typedef struct _Painter Painter;
struct _Painter
{
  void (*rect) (Painter *p, const GdkRGBA *c, double x, double y, double w, double h, const char *kind);
  /* text at (x, y), its top; width > 0 cuts it there with "…" */
  void (*text) (Painter *p, const char *text, double x, double y, double width, const GdkRGBA *c);
  void (*outline) (Painter *p, const GdkRGBA *c, double x, double y, double w, double h, double line);
  void (*push_clip) (Painter *p, double x, double y, double w, double h);
  void (*pop_clip) (Painter *p);
  PangoLayout *layout;
};

typedef struct {
  Painter base;
  GtkSnapshot *snapshot;
} SnapshotPainter;

static void
snap_rect (Painter *p, const GdkRGBA *c, double x, double y, double w, double h, const char *kind)
{
  gtk_snapshot_append_color (((SnapshotPainter *) p)->snapshot, c,
                             &GRAPHENE_RECT_INIT ((float) x, (float) y, (float) w, (float) h));
}

static void
snap_text (Painter *p, const char *text, double x, double y, double width, const GdkRGBA *c)
{
  GtkSnapshot *snapshot = ((SnapshotPainter *) p)->snapshot;
  pango_layout_set_text (p->layout, text, -1);
  pango_layout_set_width (p->layout, width > 0 ? (int) (width * PANGO_SCALE) : -1);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT ((float) x, (float) y));
  gtk_snapshot_append_layout (snapshot, p->layout, c);
  gtk_snapshot_restore (snapshot);
}

static void
snap_outline (Painter *p, const GdkRGBA *c, double x, double y, double w, double h, double line)
{
  GskRoundedRect outline;
  gsk_rounded_rect_init_from_rect (&outline, &GRAPHENE_RECT_INIT ((float) x, (float) y, (float) w, (float) h), 2);
  float l = (float) line;
  gtk_snapshot_append_border (((SnapshotPainter *) p)->snapshot, &outline, (float[]) { l, l, l, l },
                              (GdkRGBA[]) { *c, *c, *c, *c });
}

static void
snap_push_clip (Painter *p, double x, double y, double w, double h)
{
  gtk_snapshot_push_clip (((SnapshotPainter *) p)->snapshot, &GRAPHENE_RECT_INIT ((float) x, (float) y, (float) w, (float) h));
}

static void
snap_pop_clip (Painter *p)
{
  gtk_snapshot_pop (((SnapshotPainter *) p)->snapshot);
}

typedef struct {
  Painter base;
  GString *svg;
  guint n_clips;
} SvgPainter;

static void
svg_num (GString *s, const char *name, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  /* never the locale's decimal comma */
  g_string_append_printf (s, " %s=\"%s\"", name, g_ascii_formatd (buf, sizeof buf, "%.2f", v));
}

static void
svg_colour (GString *s, const char *name, const GdkRGBA *c)
{
  g_string_append_printf (s, " %s=\"#%02x%02x%02x\"", name, (int) lround (CLAMP (c->red, 0, 1) * 255),
                          (int) lround (CLAMP (c->green, 0, 1) * 255), (int) lround (CLAMP (c->blue, 0, 1) * 255));
  if (c->alpha < 1)
    svg_num (s, g_str_equal (name, "fill") ? "fill-opacity" : "stroke-opacity", c->alpha);
}

static void
svg_rect (Painter *p, const GdkRGBA *c, double x, double y, double w, double h, const char *kind)
{
  GString *s = ((SvgPainter *) p)->svg;
  g_string_append (s, "<rect");
  if (kind)
    g_string_append_printf (s, " class=\"%s\"", kind);
  svg_num (s, "x", x);
  svg_num (s, "y", y);
  svg_num (s, "width", w);
  svg_num (s, "height", h);
  svg_colour (s, "fill", c);
  g_string_append (s, "/>\n");
}

/* The text cut with "…" to fit width pixels as the layout measures it, as Pango ellipsizes it on
 * screen. */
static char *
svg_fit (PangoLayout *layout, const char *text, double width)
{
  int w;
  pango_layout_set_width (layout, -1);
  pango_layout_set_text (layout, text, -1);
  pango_layout_get_pixel_size (layout, &w, NULL);
  if (width <= 0 || w <= width)
    return g_strdup (text);
  glong len = g_utf8_strlen (text, -1);
  for (glong n = MIN (len, (glong) (len * width / MAX (w, 1)) + 1); n > 0; n--)
    {
      g_autofree char *cut = g_utf8_substring (text, 0, n - 1);
      char *candidate = g_strconcat (cut, "…", NULL);
      pango_layout_set_text (layout, candidate, -1);
      pango_layout_get_pixel_size (layout, &w, NULL);
      if (w <= width || n == 1)
        return candidate;
      g_free (candidate);
    }
  return g_strdup ("…");
}

static void
svg_text (Painter *p, const char *text, double x, double y, double width, const GdkRGBA *c)
{
  SvgPainter *sp = (SvgPainter *) p;
  g_autofree char *fitted = svg_fit (p->layout, text, width);
  g_autofree char *escaped = g_markup_escape_text (fitted, -1);
  pango_layout_set_text (p->layout, fitted, -1);
  double baseline = pango_layout_get_baseline (p->layout) / (double) PANGO_SCALE;
  g_string_append (sp->svg, "<text");
  svg_num (sp->svg, "x", x);
  svg_num (sp->svg, "y", y + baseline);
  svg_colour (sp->svg, "fill", c);
  g_string_append_printf (sp->svg, ">%s</text>\n", escaped);
}

static void
svg_outline (Painter *p, const GdkRGBA *c, double x, double y, double w, double h, double line)
{
  GString *s = ((SvgPainter *) p)->svg;
  g_string_append (s, "<rect class=\"selected\" fill=\"none\"");
  svg_num (s, "x", x + line / 2);
  svg_num (s, "y", y + line / 2);
  svg_num (s, "width", w - line);
  svg_num (s, "height", h - line);
  svg_num (s, "rx", 2);
  svg_num (s, "stroke-width", line);
  svg_colour (s, "stroke", c);
  g_string_append (s, "/>\n");
}

static void
svg_push_clip (Painter *p, double x, double y, double w, double h)
{
  SvgPainter *sp = (SvgPainter *) p;
  guint id = ++sp->n_clips;
  g_string_append_printf (sp->svg, "<clipPath id=\"clip%u\"><rect", id);
  svg_num (sp->svg, "x", x);
  svg_num (sp->svg, "y", y);
  svg_num (sp->svg, "width", w);
  svg_num (sp->svg, "height", h);
  g_string_append_printf (sp->svg, "/></clipPath>\n<g clip-path=\"url(#clip%u)\">\n", id);
}

static void
svg_pop_clip (Painter *p)
{
  g_string_append (((SvgPainter *) p)->svg, "</g>\n");
}

static double
step_next (double step)
{
  /* 1 -> 2 -> 5 -> 10 */
  double mantissa = step / pow (10, floor (log10 (step)));
  return mantissa < 1.5 ? 2 : mantissa < 3 ? 2.5 : 2;
}

/* Ticks at 1, 2 or 5 times a power of ten, at least 90 px apart. */
static void
draw_axis (OwbTimeline *self, Painter *p, double width, const GdkRGBA *fg)
{
  double scale = (width - LABEL_WIDTH) / self->view_ns, per_px = 1 / scale, step = 1;
  while (step / per_px < 90)
    step *= step_next (step);
  GdkRGBA line = *fg;
  line.alpha = 0.25f;
  double first = ceil (self->view_start / step) * step;
  for (double t = first; t < self->view_start + self->view_ns; t += step)
    {
      double x = LABEL_WIDTH + (t - self->view_start) * scale;
      if (fabs (t) < step * 1e-6)
        t = 0; /* not "-0 ms" */
      p->rect (p, &line, x, AXIS_HEIGHT - 6, 1, self->n_lanes * LANE_HEIGHT + 6, "tick");
      g_autofree char *label = t / 1e6 >= 1 || step >= 1e5 ? g_strdup_printf ("%.*f ms", step >= 1e6 ? 0 : step >= 1e5 ? 1 : 3, t / 1e6)
                                                           : g_strdup_printf ("%.0f µs", t / 1e3);
      p->text (p, label, x + 3, 2, -1, fg);
    }
}

typedef struct {
  double x0, x1;
  guint count;
  guint first;
} Block;

static void
flush_block (OwbTimeline *self, Painter *p, Block *b, double lane_y, guint depth)
{
  if (b->count == 0)
    return;
  GdkRGBA c;
  op_colour (self, event_node (self, event_get (self, b->first))->op_type, &c);
  if (b->count > 1)
    {
      /* many nodes in a few pixels: a muted block, so it does not pass for one long node */
      c.red = c.red * 0.5f + 0.25f;
      c.green = c.green * 0.5f + 0.25f;
      c.blue = c.blue * 0.5f + 0.25f;
      self->drawn_merged++;
    }
  else
    self->drawn_spans++;
  p->rect (p, &c, b->x0, lane_y + 3 + depth * NEST_STEP, MAX (b->x1 - b->x0, 1), LANE_HEIGHT - 6 - depth * NEST_STEP,
           b->count > 1 ? "merged" : "span");
  b->count = 0;
}

/* The run as the view shows it now, width pixels wide. */
static void
draw (OwbTimeline *self, Painter *p, double width, const GdkRGBA *fg)
{
  self->drawn_spans = self->drawn_merged = 0;
  if (!self->run)
    {
      p->text (p, _("No profile yet: “Profile Model” runs the model and records every node"), 12, AXIS_HEIGHT,
               width - 24, fg);
      return;
    }
  GdkRGBA stripe = *fg;
  stripe.alpha = 0.05f;
  for (guint l = 0; l < self->n_lanes; l += 2)
    p->rect (p, &stripe, 0, AXIS_HEIGHT + l * LANE_HEIGHT, width, LANE_HEIGHT, "lane");
  draw_axis (self, p, width, fg);

  p->push_clip (p, LABEL_WIDTH, 0, width - LABEL_WIDTH, AXIS_HEIGHT + self->n_lanes * LANE_HEIGHT);
  double view_end = self->view_start + self->view_ns;
  /* the width once: gtk_widget_get_width reads the CSS box each time, a third of the loop's cost
   * over 100,000 events */
  double scale = MAX (width - LABEL_WIDTH, 1.0) / self->view_ns, origin = self->view_start;
  const OwbProfEvent *events = (const OwbProfEvent *) self->run->events->data;
  GdkRGBA white = { 1, 1, 1, 1 };
  for (guint l = 0; l < self->n_lanes; l++)
    {
      double lane_y = AXIS_HEIGHT + l * LANE_HEIGHT;
      Block blocks[4] = { { 0 } };
      GArray *idx = self->lanes[l];
      const guint *order = (const guint *) idx->data;
      for (guint k = lane_first_visible (self, l, self->view_start); k < idx->len; k++)
        {
          guint e = order[k];
          const OwbProfEvent *ev = &events[e];
          if (ev->start_ns > view_end)
            break;
          if (ev->start_ns + ev->duration_ns < origin)
            continue;
          double x0 = MAX (LABEL_WIDTH + (ev->start_ns - origin) * scale, LABEL_WIDTH - 1);
          double x1 = MIN (LABEL_WIDTH + (ev->start_ns + ev->duration_ns - origin) * scale, width + 1);
          guint depth = self->depth[e];
          Block *b = &blocks[depth];
          if (x1 - x0 < MERGE_PX)
            {
              /* blocks stay a few pixels wide, so that a dense stretch still shows its ops' colours */
              if (b->count > 0 && x0 <= b->x1 + 1 && x1 - b->x0 < 3 * MERGE_PX)
                {
                  b->x1 = MAX (b->x1, x1);
                  b->count++;
                  continue;
                }
              flush_block (self, p, b, lane_y, depth);
              *b = (Block){ x0, MAX (x1, x0 + 1), 1, e };
              continue;
            }
          flush_block (self, p, b, lane_y, depth);
          *b = (Block){ x0, x1, 1, e };
          flush_block (self, p, b, lane_y, depth);
          if (x1 - x0 > 40)
            {
              const OwbProfNode *node = event_node (self, ev);
              p->text (p, node->name, x0 + 3, lane_y + 4 + depth * NEST_STEP, x1 - x0 - 6, &white);
            }
        }
      for (guint d = 0; d < G_N_ELEMENTS (blocks); d++)
        flush_block (self, p, &blocks[d], lane_y, d);
    }
  if (self->selected >= 0)
    {
      const OwbProfEvent *ev = event_get (self, (guint) self->selected);
      double x0 = LABEL_WIDTH + (ev->start_ns - origin) * scale;
      double x1 = MAX (LABEL_WIDTH + (ev->start_ns + ev->duration_ns - origin) * scale, x0 + 2);
      p->outline (p, fg, x0 - 1, AXIS_HEIGHT + ev->thread * LANE_HEIGHT + 1, x1 - x0 + 2, LANE_HEIGHT - 2, 2);
    }
  p->pop_clip (p);

  for (guint l = 0; l < self->n_lanes; l++)
    {
      g_autofree char *name = l == 0 ? g_strdup (_("Run thread")) : g_strdup_printf (_("Worker %u"), l);
      p->text (p, name, 6, AXIS_HEIGHT + l * LANE_HEIGHT + 6, LABEL_WIDTH - 10, fg);
    }
}

static void
widget_fg (GtkWidget *widget, GdkRGBA *fg)
{
  /* GTK 4.8 (Debian 12) has no gtk_widget_get_color */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), fg);
  G_GNUC_END_IGNORE_DEPRECATIONS
}

static void
owb_timeline_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  OwbTimeline *self = OWB_TIMELINE (widget);
  GdkRGBA fg;
  widget_fg (widget, &fg);
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (widget, NULL);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  SnapshotPainter painter = { { snap_rect, snap_text, snap_outline, snap_push_clip, snap_pop_clip, layout }, snapshot };
  draw (self, &painter.base, gtk_widget_get_width (widget), &fg);
}

char *
owb_timeline_dup_svg (OwbTimeline *self, int width)
{
  g_return_val_if_fail (OWB_IS_TIMELINE (self), NULL);
  GtkWidget *widget = GTK_WIDGET (self);
  if (width <= 0)
    width = gtk_widget_get_width (widget) > 0 ? gtk_widget_get_width (widget) : 1200;
  int height = (int) (AXIS_HEIGHT + MAX (self->n_lanes, 1) * LANE_HEIGHT + 8);
  GdkRGBA fg;
  widget_fg (widget, &fg);
  /* the SVG is read on a page of its own: dark text on white, or light text (a dark theme) on dark grey */
  gboolean dark = 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5;
  GdkRGBA background = dark ? (GdkRGBA){ 0.14f, 0.14f, 0.14f, 1 } : (GdkRGBA){ 1, 1, 1, 1 };
  g_autoptr (PangoLayout) layout = gtk_widget_create_pango_layout (widget, NULL);
  const PangoFontDescription *font = pango_context_get_font_description (pango_layout_get_context (layout));
  const char *family = font && pango_font_description_get_family (font) ? pango_font_description_get_family (font) : "sans-serif";
  double px = font ? pango_font_description_get_size (font) / (double) PANGO_SCALE : 10;
  if (font && !pango_font_description_get_size_is_absolute (font))
    px *= 96.0 / 72.0; /* points, at the 96 dpi Pango lays the text out at */
  SvgPainter painter = { { svg_rect, svg_text, svg_outline, svg_push_clip, svg_pop_clip, layout }, g_string_new (NULL), 0 };
  GString *s = painter.svg;
  g_autofree char *family_escaped = g_markup_escape_text (family, -1);
  g_string_append_printf (s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"",
                          width, height, width, height);
  g_string_append_printf (s, " font-family=\"%s\"", family_escaped);
  svg_num (s, "font-size", px);
  g_string_append (s, ">\n");
  if (self->run)
    {
      g_autofree char *title = owb_prof_run_dup_title (self->run);
      g_autofree char *escaped = g_markup_escape_text (title, -1);
      g_string_append_printf (s, "<title>%s</title>\n", escaped);
    }
  svg_rect (&painter.base, &background, 0, 0, width, height, "background");
  draw (self, &painter.base, width, &fg);
  g_string_append (s, "</svg>\n");
  return g_string_free (s, FALSE);
}

gboolean
owb_timeline_export_svg (OwbTimeline *self, const char *path, GError **error)
{
  g_return_val_if_fail (OWB_IS_TIMELINE (self), FALSE);
  g_autofree char *svg = owb_timeline_dup_svg (self, 0);
  return owb_file_set_contents_atomic (path, svg, strlen (svg), error);
}

static void
owb_timeline_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                      int *minimum_baseline, int *natural_baseline)
{
  OwbTimeline *self = OWB_TIMELINE (widget);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural = 300;
  else
    *minimum = *natural = (int) (AXIS_HEIGHT + MAX (self->n_lanes, 2) * LANE_HEIGHT + 8);
}

static gboolean
query_tooltip_cb (OwbTimeline *self, int x, int y, gboolean keyboard, GtkTooltip *tooltip)
{
  int e = keyboard ? self->selected : owb_timeline_event_at (self, x, y);
  if (e < 0)
    return FALSE;
  const OwbProfEvent *ev = event_get (self, (guint) e);
  const OwbProfNode *node = event_node (self, ev);
  g_autoptr (GString) text = g_string_new (NULL);
  g_string_append_printf (text, "%s (%s, %s)\n", node->name, node->op_type, node->provider);
  if (node->graph_path[0])
    {
      g_string_append_printf (text, _("in %s"), node->graph_path);
      g_string_append_c (text, '\n');
    }
  if (ev->kind == OWB_PROF_EVENT_WORKER)
    g_string_append_printf (text, _("%.3f ms, %.3f ms of it running chunks, iteration %u"), ev->duration_ns / 1e6,
                            ev->self_ns / 1e6, ev->iteration + 1);
  else
    g_string_append_printf (text, _("%.3f ms (self %.3f ms), iteration %u"), ev->duration_ns / 1e6,
                            ev->self_ns / 1e6, ev->iteration + 1);
  if (ev->output_shapes)
    g_string_append_printf (text, "\n%s → %s", ev->input_shapes ? ev->input_shapes : "", ev->output_shapes);
  gtk_tooltip_set_text (tooltip, text->str);
  return TRUE;
}

static void
select_event (OwbTimeline *self, int e, gboolean reveal)
{
  self->selected = e;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  if (e >= 0)
    g_signal_emit (self, signals[NODE_ACTIVATED], 0, event_node (self, event_get (self, (guint) e))->name, reveal);
}

static void
click_cb (GtkGestureClick *gesture, int n_press, double x, double y, OwbTimeline *self)
{
  gtk_widget_grab_focus (GTK_WIDGET (self));
  int e = owb_timeline_event_at (self, x, y);
  if (e >= 0)
    select_event (self, e, n_press == 2);
}

static void
drag_begin_cb (GtkGestureDrag *gesture, double x, double y, OwbTimeline *self)
{
  self->drag_start_view = self->view_start;
}

static void
drag_update_cb (GtkGestureDrag *gesture, double dx, double dy, OwbTimeline *self)
{
  self->view_start = self->drag_start_view - dx / time_width (self) * self->view_ns;
  clamp_view (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
pinch_begin_cb (GtkGesture *gesture, GdkEventSequence *sequence, OwbTimeline *self)
{
  self->pinch_start_view_ns = self->view_ns;
}

static void
pinch_changed_cb (GtkGestureZoom *gesture, double scale, OwbTimeline *self)
{
  double cx, cy;
  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &cx, &cy))
    cx = LABEL_WIDTH + time_width (self) / 2;
  double want = self->pinch_start_view_ns / MAX (scale, 1e-3);
  owb_timeline_zoom (self, self->view_ns / want, cx);
}

static gboolean
scroll_cb (GtkEventControllerScroll *controller, double dx, double dy, OwbTimeline *self)
{
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  if ((mods & GDK_SHIFT_MASK) && dx == 0)
    {
      dx = dy;
      dy = 0;
    }
  if (dx != 0)
    {
      self->view_start += dx * 0.1 * self->view_ns;
      clamp_view (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  if (dy != 0)
    owb_timeline_zoom (self, exp (-dy * 0.25), self->pointer_x);
  return TRUE;
}

static void
motion_cb (GtkEventControllerMotion *controller, double x, double y, OwbTimeline *self)
{
  self->pointer_x = x;
}

static gboolean
key_cb (GtkEventControllerKey *controller, guint keyval, guint keycode, GdkModifierType state, OwbTimeline *self)
{
  double centre = LABEL_WIDTH + time_width (self) / 2;
  switch (keyval)
    {
    case GDK_KEY_plus:
    case GDK_KEY_equal:
    case GDK_KEY_KP_Add:
      owb_timeline_zoom (self, 1.5, centre);
      return TRUE;
    case GDK_KEY_minus:
    case GDK_KEY_KP_Subtract:
      owb_timeline_zoom (self, 1 / 1.5, centre);
      return TRUE;
    case GDK_KEY_Left:
    case GDK_KEY_Right:
      self->view_start += (keyval == GDK_KEY_Left ? -0.1 : 0.1) * self->view_ns;
      clamp_view (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return TRUE;
    case GDK_KEY_0:
    case GDK_KEY_Home:
      owb_timeline_zoom_to_fit (self);
      return TRUE;
    case GDK_KEY_Return:
    case GDK_KEY_KP_Enter:
      if (self->selected >= 0)
        select_event (self, self->selected, TRUE);
      return TRUE;
    default:
      return FALSE;
    }
}

static void
owb_timeline_dispose (GObject *object)
{
  clear_run (OWB_TIMELINE (object));
  G_OBJECT_CLASS (owb_timeline_parent_class)->dispose (object);
}

static void
owb_timeline_class_init (OwbTimelineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = owb_timeline_dispose;
  widget_class->snapshot = owb_timeline_snapshot;
  widget_class->measure = owb_timeline_measure;
  signals[NODE_ACTIVATED] = g_signal_new ("node-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                          NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_BOOLEAN);
  gtk_widget_class_set_css_name (widget_class, "timeline");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
owb_timeline_init (OwbTimeline *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  self->selected = -1;
  self->view_ns = MIN_VIEW_NS;
  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_has_tooltip (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);
  gtk_accessible_update_property (GTK_ACCESSIBLE (widget), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Timeline"),
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                  _("One lane per thread; scroll or +/- to zoom, drag or the arrow keys to pan, 0 to fit"),
                                  -1);
  g_signal_connect_swapped (widget, "query-tooltip", G_CALLBACK (query_tooltip_cb), self);

  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (click_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (click));
  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));
  GtkGesture *pinch = gtk_gesture_zoom_new ();
  g_signal_connect (pinch, "begin", G_CALLBACK (pinch_begin_cb), self);
  g_signal_connect (pinch, "scale-changed", G_CALLBACK (pinch_changed_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (pinch));
  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (scroll_cb), self);
  gtk_widget_add_controller (widget, scroll);
  GtkEventController *motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (motion_cb), self);
  gtk_widget_add_controller (widget, motion);
  GtkEventController *keys = gtk_event_controller_key_new ();
  g_signal_connect (keys, "key-pressed", G_CALLBACK (key_cb), self);
  gtk_widget_add_controller (widget, keys);
}

GtkWidget *
owb_timeline_new (void)
{
  return g_object_new (OWB_TYPE_TIMELINE, NULL);
}
