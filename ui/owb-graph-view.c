/* owb-graph-view.c: the graph canvas. Scenes are built in a worker thread; drawing goes through
 * render nodes cached per tile (512 pixels of a half-octave zoom bucket), so panning and zooming
 * replay cached nodes under one transform and only the selection overlays are drawn anew. */
#include "owb-graph-view.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "owb-graph-scene.h"
#include "owb-graph-layer-providers.h"
#include "owb-graph-view-labels.h"
#include "owb-graph-view-overview.h"

#define TILE_PIXELS 512.0      /* a tile's size on screen at its bucket's zoom */
#define TILE_OVERLAP 2.0       /* pixels a tile draws past its right and bottom sides */
#define MAX_TILES 384          /* cached tiles before the cache is trimmed */
#define TILE_MIN_ZOOM (1.0 / 1024.0)  /* further out, cairo 1.16 overflowed its stack painting tiles */
#define MIN_ZOOM (1.0 / 1048576.0)   /* below TILE_MIN_ZOOM the overview image is drawn */
#define LEAST_ZOOM_LIMIT 0.25        /* every graph can be zoomed out to this (see least_zoom) */
/* Far out the view draws the scene's overview image (owb-graph-view-overview.c): from this zoom
 * (boxes of a few pixels) down, where the image is as sharp as the screen, and always below
 * TILE_MIN_ZOOM. Its size is bounded (16 MiB, and a side the GL renderer can take). */
#define OVERVIEW_ZOOM (1.0 / 16.0)
#define OVERVIEW_MAX_PIXELS 4.0e6
#define OVERVIEW_MAX_SIDE 8192
#define MAX_ZOOM 8.0
#define ZOOM_STEP 1.25
#define FIT_MAX_ZOOM 1.25      /* small graphs are not blown up past this by "fit" */
#define FIT_MARGIN 24.0        /* pixels around the graph when fitting */
#define READABLE_ZOOM 0.75     /* the least zoom a new scene opens at when it does not fit */
#define SCROLL_STEP 48.0       /* pixels per wheel notch or arrow key */
#define CLICK_TOLERANCE 5.0    /* pixels: how close a click must be to an edge */
#define STRIPE 4.0             /* scene units: the provider stripe at a box's left, inside the padding */
#define RADIUS 6.0
/* Paths are filled or stroked every PATH_CHUNK shapes: one fill of tens of thousands of boxes
 * overflowed the stack inside cairo (it recurses on sorted boxes), one fill per box makes a
 * recording of tens of thousands of commands. */
#define PATH_CHUNK 512

/* Level of detail, chosen from the zoom bucket so a cached tile always has one. */
typedef enum {
  LOD_PLAIN = 0,   /* coloured rectangles, straight edges */
  LOD_TITLES,      /* rounded boxes, titles only, routed edges */
  LOD_FULL,        /* everything but edge labels */
  LOD_LABELS,      /* everything, edge labels too */
} Lod;

/* Glyph widths measured once on the main thread, so the scene can measure text in its thread. */
/* Characters outside ASCII that the scene's text uses a lot ("3×3", "⟨64×3⟩", "a · b", "…"),
 * measured like ASCII; other ones count as an average glyph, or two for wide (CJK) ones. */
static const char *const extra_chars[] = { "×", "⟨", "⟩", "·", "…", "›", "→", "—" };
#define N_EXTRA G_N_ELEMENTS (extra_chars)

typedef struct {
  double widths[3][128];
  double extra[3][N_EXTRA];
  double wide[3];
  double average[3];
  PangoFontDescription *fonts[3];
  double title_height, line_height;
} Metrics;

/* Whoever keeps the graph alive. Shared by the view and its running builds: a cancelled build
 * can still be reading the graph, so the owner is released only when both are done with it. */
typedef struct {
  gatomicrefcount ref_count;
  gpointer owner;
  GDestroyNotify release;
} OwnerHold;

/* One level of the breadcrumb: the main graph, or a subgraph opened in place. */
typedef struct {
  const OwbGraph *graph;
  char *label;
  OwbGraphScene *scene;  /* NULL while it is being built, or if that failed */
  double zoom, scroll_x, scroll_y;
  gboolean placed;       /* zoom and scroll hold a view to return to */
  const OwbNode *owner;  /* a subgraph: the node whose attribute it is (in the frame below) */
  char *attribute;       /* and that attribute's name; NULL for the main graph */
  /* What was selected here when a subgraph was opened above, shown again on coming back. */
  const OwbNode *selected_node, *selected_line_node;
  char *selected_tensor;
} Frame;

typedef struct {
  int bucket;
  int tx, ty;
} TileKey;

typedef struct {
  GdkRGBA background, fg, dim, box, box_border, group_fill, group_border, input, output, edge,
          accent, accent_fill, highlight, highlight_fill, match, current_match;
  gboolean dark;
} Palette;

struct _OwbGraphView {
  GtkWidget parent_instance;

  OwnerHold *owner;
  GPtrArray *frames;        /* of Frame *, the path; the last one is on screen */
  OwbGraphScene *scene;     /* the last frame's scene, borrowed; NULL while building */

  Metrics *metrics;
  OwbSceneStyle style;

  GCancellable *cancellable;
  guint build_serial;
  gboolean busy;
  /* A view that is not on screen (a page not shown) lays out when it is mapped, so that hidden
   * views do not take the cores from the one being looked at. */
  gboolean build_deferred;
  gint64 build_started;
  guint build_n_nodes;
  gboolean first_draw_pending;  /* a new scene not drawn yet: its first frame is timed */
  guint progress_source;

  double zoom, scroll_x, scroll_y;
  gboolean fit_pending;
  gboolean place_pending;
  gboolean center_pending;
  double center_x, center_y;

  GHashTable *tiles;        /* TileKey * -> GskRenderNode * */
  OwbOverview *overview;    /* built when first drawn far out; NULL when the scene changed */
  OwbEdgeLabels *labels;    /* where edge labels go, placed when first drawn */
  const OwbGraphScene *labels_scene;  /* the scene they were placed on; NULL when it changed */
  Palette palette;
  gboolean palette_valid;
  PangoLayout *layout;      /* reused for every text while building a tile */
  double draw_zoom;         /* the zoom the region being drawn is for */
  gboolean compact;         /* scenes leave Constants and weight chains out (OwbSceneStyle) */

  /* interaction */
  double drag_scroll_x, drag_scroll_y;
  gboolean dragging;
  double pointer_x, pointer_y;
  gboolean has_pointer;
  double gesture_zoom, gesture_x, gesture_y;

  /* selection, highlight, find */
  const OwbNode *selected_node;
  char *selected_tensor;
  const OwbNode *selected_line_node; /* the node whose initializer line was clicked */
  OwbGraphLayer *default_layer; /* the provider colours, where `layer` leaves a box */
  GHashTable *highlight;    /* node names */
  OwbGraphLayer *layer;     /* colours op boxes instead of their provider; NULL: none */
  GPtrArray *matches;       /* of OwbSceneMatch *, relative to the frame find_level */
  int match_index;
  guint find_level;
  char *find_query;
  const OwbNode *pending_select; /* selected once the subgraph being laid out is drawn */
  GtkWidget *branch_popover;     /* asks which subgraph of a node to open; NULL until needed */

  /* scene indices of what the overlays draw; recomputed when the scene or the sets change */
  gboolean overlays_valid;
  int ov_selected, ov_line_node, ov_current;
  GArray *ov_highlight, *ov_matches, *ov_edges;
};

G_DEFINE_FINAL_TYPE (OwbGraphView, owb_graph_view, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_BUSY, PROP_ZOOM, PROP_MATCH_INDEX, PROP_N_MATCHES, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { LAYOUT_PROGRESS, LAYOUT_FAILED, SELECTION_CHANGED, PATH_CHANGED, SCENE_CHANGED, VIEWPORT_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void start_build (OwbGraphView *self);
static void scene_changed (OwbGraphView *self);
static gboolean has_nested_matches (OwbGraphView *self);
static int reader_box (OwbGraphView *self, const OwbNode *node);

/* ---- owners and frames ---- */

static OwnerHold *
owner_hold_new (gpointer owner, GDestroyNotify release)
{
  OwnerHold *hold = g_new0 (OwnerHold, 1);
  g_atomic_ref_count_init (&hold->ref_count);
  hold->owner = owner;
  hold->release = release;
  return hold;
}

static OwnerHold *
owner_hold_ref (OwnerHold *hold)
{
  if (hold)
    g_atomic_ref_count_inc (&hold->ref_count);
  return hold;
}

static gboolean
owner_hold_release_cb (gpointer data)
{
  OwnerHold *hold = data;
  if (hold->release && hold->owner)
    hold->release (hold->owner);
  g_free (hold);
  return G_SOURCE_REMOVE;
}

static void
owner_hold_unref (OwnerHold *hold)
{
  if (!hold || !g_atomic_ref_count_dec (&hold->ref_count))
    return;
  /* The last holder may be a build finishing in a worker thread: release on the main context,
   * where the owner (a document, say) expects to be touched. */
  g_main_context_invoke (NULL, owner_hold_release_cb, hold);
}

static void
frame_free (gpointer data)
{
  Frame *frame = data;
  g_clear_pointer (&frame->scene, owb_graph_scene_free);
  g_free (frame->label);
  g_free (frame->attribute);
  g_free (frame->selected_tensor);
  g_free (frame);
}

static Frame *
frame_new (const OwbGraph *graph, const char *label)
{
  Frame *frame = g_new0 (Frame, 1);
  frame->graph = graph;
  frame->label = g_strdup (label);
  return frame;
}

static Frame *
top_frame (OwbGraphView *self)
{
  return self->frames->len ? g_ptr_array_index (self->frames, self->frames->len - 1) : NULL;
}

/* ---- text metrics ---- */

static PangoFontDescription *
font_scaled (const PangoFontDescription *base, double factor, gboolean bold)
{
  PangoFontDescription *desc = pango_font_description_copy (base);
  int size = pango_font_description_get_size (base);
  if (size <= 0)
    size = 10 * PANGO_SCALE;
  if (pango_font_description_get_size_is_absolute (base))
    pango_font_description_set_absolute_size (desc, size * factor);
  else
    pango_font_description_set_size (desc, (int) (size * factor));
  if (bold)
    pango_font_description_set_weight (desc, PANGO_WEIGHT_BOLD);
  return desc;
}

static void
metrics_free (Metrics *metrics)
{
  if (!metrics)
    return;
  for (int f = 0; f < 3; f++)
    pango_font_description_free (metrics->fonts[f]);
  g_free (metrics);
}

static Metrics *
metrics_new (GtkWidget *widget)
{
  Metrics *metrics = g_new0 (Metrics, 1);
  PangoContext *context = gtk_widget_get_pango_context (widget);
  const PangoFontDescription *base = pango_context_get_font_description (context);
  g_autoptr (PangoLayout) layout = pango_layout_new (context);

  metrics->fonts[OWB_SCENE_FONT_TITLE] = font_scaled (base, 1.0, TRUE);
  metrics->fonts[OWB_SCENE_FONT_BODY] = font_scaled (base, 0.9, FALSE);
  metrics->fonts[OWB_SCENE_FONT_LABEL] = font_scaled (base, 0.8, FALSE);
  for (int f = 0; f < 3; f++)
    {
      double sum = 0;
      pango_layout_set_font_description (layout, metrics->fonts[f]);
      for (int c = 32; c < 127; c++)
        {
          char text[2] = { (char) c, 0 };
          PangoRectangle logical;
          pango_layout_set_text (layout, text, 1);
          pango_layout_get_extents (layout, NULL, &logical);
          metrics->widths[f][c] = logical.width / (double) PANGO_SCALE;
          sum += metrics->widths[f][c];
        }
      metrics->widths[f]['\t'] = metrics->widths[f][' '] * 4;
      metrics->average[f] = sum / 95.0;
      for (guint e = 0; e <= N_EXTRA; e++)
        {
          PangoRectangle logical;
          pango_layout_set_text (layout, e < N_EXTRA ? extra_chars[e] : "中", -1);
          pango_layout_get_extents (layout, NULL, &logical);
          if (e < N_EXTRA)
            metrics->extra[f][e] = logical.width / (double) PANGO_SCALE;
          else
            metrics->wide[f] = logical.width / (double) PANGO_SCALE;
        }
    }
  PangoRectangle logical;
  pango_layout_set_text (layout, "Ag", -1);
  pango_layout_set_font_description (layout, metrics->fonts[OWB_SCENE_FONT_TITLE]);
  pango_layout_get_pixel_extents (layout, NULL, &logical);
  metrics->title_height = logical.height + 6;
  pango_layout_set_font_description (layout, metrics->fonts[OWB_SCENE_FONT_BODY]);
  pango_layout_get_pixel_extents (layout, NULL, &logical);
  metrics->line_height = logical.height + 2;
  return metrics;
}

/* Thread-safe: reads only the immutable tables. Non-ASCII characters count as an average glyph;
 * the walk stops at NUL even inside a broken UTF-8 sequence (node names are untrusted). */
static double
measure_text (const char *text, OwbSceneFont font, gpointer user_data)
{
  const Metrics *metrics = user_data;
  double width = 0;
  if (!text || (guint) font > OWB_SCENE_FONT_LABEL)
    return 0;
  for (const unsigned char *p = (const unsigned char *) text; *p;)
    {
      if (*p < 128)
        width += metrics->widths[font][*p++];
      else
        {
          guint e;
          for (e = 0; e < N_EXTRA; e++)
            if (strncmp ((const char *) p, extra_chars[e], strlen (extra_chars[e])) == 0)
              break;
          width += e < N_EXTRA ? metrics->extra[font][e] : *p >= 0xE3 ? metrics->wide[font] : metrics->average[font];
          p++;
          while ((*p & 0xC0) == 0x80)
            p++;
        }
    }
  return width + 2;
}

static void
ensure_metrics (OwbGraphView *self)
{
  if (self->metrics)
    return;
  self->metrics = metrics_new (GTK_WIDGET (self));
  owb_scene_style_init (&self->style);
  self->style.measure = measure_text;
  self->style.measure_data = self->metrics;
  self->style.title_height = self->metrics->title_height;
  self->style.line_height = self->metrics->line_height;
}

/* ---- colours ---- */

static GdkRGBA
rgba (double r, double g, double b, double a)
{
  return (GdkRGBA) { r, g, b, a };
}

static GdkRGBA
mix (GdkRGBA a, GdkRGBA b, double t)
{
  return rgba (a.red + (b.red - a.red) * t, a.green + (b.green - a.green) * t,
               a.blue + (b.blue - a.blue) * t, a.alpha + (b.alpha - a.alpha) * t);
}

G_GNUC_BEGIN_IGNORE_DEPRECATIONS
static void
ensure_palette (OwbGraphView *self)
{
  GdkRGBA fg;
  gtk_style_context_get_color (gtk_widget_get_style_context (GTK_WIDGET (self)), &fg);
  gboolean dark = (fg.red + fg.green + fg.blue) / 3 > 0.5;
  if (self->palette_valid && dark == self->palette.dark && gdk_rgba_equal (&fg, &self->palette.fg))
    return;
  Palette *p = &self->palette;
  p->dark = dark;
  p->fg = fg;
  p->background = dark ? rgba (0.12, 0.12, 0.12, 1) : rgba (0.98, 0.98, 0.98, 1);
  p->dim = mix (p->background, fg, 0.6);
  p->box = dark ? rgba (0.2, 0.2, 0.21, 1) : rgba (1, 1, 1, 1);
  p->box_border = mix (p->background, fg, 0.35);
  p->group_fill = dark ? rgba (1, 1, 1, 0.035) : rgba (0, 0, 0, 0.03);
  p->group_border = mix (p->background, fg, 0.3);
  p->input = dark ? rgba (0.16, 0.3, 0.2, 1) : rgba (0.86, 0.95, 0.88, 1);
  p->output = dark ? rgba (0.35, 0.22, 0.14, 1) : rgba (0.99, 0.9, 0.83, 1);
  p->edge = mix (p->background, fg, 0.5);
  p->accent = dark ? rgba (0.47, 0.68, 0.93, 1) : rgba (0.11, 0.44, 0.85, 1);
  p->accent_fill = p->accent;
  p->accent_fill.alpha = 0.18;
  p->highlight = rgba (0.9, 0.65, 0.05, 1);
  p->highlight_fill = rgba (0.96, 0.83, 0.2, 0.35);
  p->match = rgba (0.89, 0.45, 0.1, 0.85);
  p->current_match = rgba (0.88, 0.11, 0.14, 1);
  self->palette_valid = TRUE;
  if (self->tiles)
    g_hash_table_remove_all (self->tiles);
  g_clear_pointer (&self->overview, _owb_overview_free);
}
G_GNUC_END_IGNORE_DEPRECATIONS

/* ---- view geometry ---- */

static int
zoom_bucket (double zoom)
{
  return (int) floor (log2 (zoom) * 2 + 0.5);
}

static double
bucket_zoom (int bucket)
{
  return exp2 (bucket / 2.0);
}

static Lod
lod_for_zoom (double zoom)
{
  /* Edge labels from the zoom a large graph opens at (READABLE_ZOOM): below 100% they were
   * hidden on the first view of every graph that does not fit. */
  if (zoom >= 0.7)
    return LOD_LABELS;
  if (zoom >= 0.5)
    return LOD_FULL;
  if (zoom >= 0.35)
    return LOD_TITLES;
  return LOD_PLAIN;
}

static void
invalidate_tiles (OwbGraphView *self)
{
  g_hash_table_remove_all (self->tiles);
  g_clear_pointer (&self->overview, _owb_overview_free);
  self->labels_scene = NULL;
  self->overlays_valid = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
clamp_scroll (OwbGraphView *self)
{
  if (!self->scene)
    return;
  double sw, sh;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  double vw = gtk_widget_get_width (GTK_WIDGET (self)) / self->zoom;
  double vh = gtk_widget_get_height (GTK_WIDGET (self)) / self->zoom;
  /* Keep at least a quarter of the view on the graph, so it cannot be lost off screen. */
  double mx = vw * 0.75, my = vh * 0.75;
  self->scroll_x = CLAMP (self->scroll_x, -mx, MAX (sw - vw + mx, -mx));
  self->scroll_y = CLAMP (self->scroll_y, -my, MAX (sh - vh + my, -my));
}

/* The least zoom: the graph at half the size that fits the view (further out it would only
 * shrink to nothing), or 1/4 for graphs that fit at that; at most MIN_ZOOM. */
static double
least_zoom (OwbGraphView *self)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self)), height = gtk_widget_get_height (GTK_WIDGET (self));
  if (!self->scene || width <= 1 || height <= 1)
    return MIN_ZOOM;
  double sw, sh;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  double fits = MIN (width / MAX (sw, 1.0), height / MAX (sh, 1.0));
  return MAX (MIN_ZOOM, MIN (LEAST_ZOOM_LIMIT, fits / 2));
}

static void
set_view (OwbGraphView *self, double zoom, double scroll_x, double scroll_y)
{
  zoom = CLAMP (zoom, least_zoom (self), MAX_ZOOM);
  gboolean zoom_changed = zoom != self->zoom;
  self->zoom = zoom;
  self->scroll_x = scroll_x;
  self->scroll_y = scroll_y;
  clamp_scroll (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  if (zoom_changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
  g_signal_emit (self, signals[VIEWPORT_CHANGED], 0);
}

/* Zooms keeping the scene point under widget point (px, py) where it is. */
static void
zoom_at (OwbGraphView *self, double zoom, double px, double py)
{
  zoom = CLAMP (zoom, least_zoom (self), MAX_ZOOM);
  double sx = self->scroll_x + px / self->zoom;
  double sy = self->scroll_y + py / self->zoom;
  set_view (self, zoom, sx - px / zoom, sy - py / zoom);
}

static void
center_on (OwbGraphView *self, double x, double y)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  if (width <= 1 || height <= 1)
    {
      self->center_pending = TRUE;
      self->center_x = x;
      self->center_y = y;
      return;
    }
  set_view (self, self->zoom, x - width / (2 * self->zoom), y - height / (2 * self->zoom));
}

static void
fit (OwbGraphView *self)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  if (!self->scene || width <= 1 || height <= 1)
    {
      self->fit_pending = TRUE;
      return;
    }
  self->fit_pending = FALSE;
  double sw, sh;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  double zoom = MIN ((width - 2 * FIT_MARGIN) / MAX (sw, 1.0), (height - 2 * FIT_MARGIN) / MAX (sh, 1.0));
  zoom = CLAMP (zoom, MIN_ZOOM, FIT_MAX_ZOOM);
  set_view (self, zoom, sw / 2 - width / (2 * zoom), sh / 2 - height / (2 * zoom));
}

/* A new scene opens whole when it can be read whole; otherwise at a readable zoom on its top
 * (where the inputs are), since a graph shown as specks tells nothing until zoomed. */
static void
place_initially (OwbGraphView *self)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  if (!self->scene || width <= 1 || height <= 1)
    {
      self->place_pending = TRUE;
      return;
    }
  self->place_pending = FALSE;
  fit (self);
  if (self->zoom >= READABLE_ZOOM)
    return;
  /* On the first nodes: the boxes of the top rank (as far down as the top box is tall), centred
   * when they fit across, else from the leftmost. The middle of the whole graph's top was empty
   * in graphs whose wide part is further down (detection heads, a U-Net), and the view blank. */
  double top = G_MAXDOUBLE, row = 0;
  guint n = owb_graph_scene_get_n_nodes (self->scene);
  for (guint i = 0; i < n; i++)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, i);
      if (node->kind != OWB_SCENE_GROUP && node->y < top)
        {
          top = node->y;
          row = node->height;
        }
    }
  double sw, sh;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  double view_width = width / READABLE_ZOOM;
  double x = sw / 2 - view_width / 2;
  if (top < G_MAXDOUBLE)
    {
      double left = G_MAXDOUBLE, right = -G_MAXDOUBLE;
      for (guint i = 0; i < n; i++)
        {
          const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, i);
          if (node->kind != OWB_SCENE_GROUP && node->y <= top + row)
            {
              left = MIN (left, node->x);
              right = MAX (right, node->x + node->width);
            }
        }
      x = right - left + 2 * FIT_MARGIN / READABLE_ZOOM <= view_width ? (left + right) / 2 - view_width / 2
                                                                       : left - FIT_MARGIN / READABLE_ZOOM;
    }
  set_view (self, READABLE_ZOOM, x, MIN (top, 0) - FIT_MARGIN / READABLE_ZOOM);
}

/* ---- drawing ---- */

static void
append_text (OwbGraphView *self, GtkSnapshot *snapshot, const char *text, OwbSceneFont font,
             double x, double y, double width, const GdkRGBA *color)
{
  if (!text || !*text || width <= 2)
    return;
  pango_layout_set_font_description (self->layout, self->metrics->fonts[font]);
  pango_layout_set_width (self->layout, (int) (width * PANGO_SCALE));
  pango_layout_set_text (self->layout, text, -1);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT ((float) x, (float) y));
  gtk_snapshot_append_layout (snapshot, self->layout, color);
  gtk_snapshot_restore (snapshot);
}

static void
append_outline (GtkSnapshot *snapshot, const graphene_rect_t *rect, double radius, double width,
                const GdkRGBA *color)
{
  GskRoundedRect outline;
  gsk_rounded_rect_init_from_rect (&outline, rect, (float) radius);
  float widths[4] = { width, width, width, width };
  GdkRGBA colors[4] = { *color, *color, *color, *color };
  gtk_snapshot_append_border (snapshot, &outline, widths, colors);
}

static void
append_rounded_fill (GtkSnapshot *snapshot, const graphene_rect_t *rect, double radius, const GdkRGBA *color)
{
  GskRoundedRect outline;
  gsk_rounded_rect_init_from_rect (&outline, rect, (float) radius);
  gtk_snapshot_push_rounded_clip (snapshot, &outline);
  gtk_snapshot_append_color (snapshot, color, rect);
  gtk_snapshot_pop (snapshot);
}

/* A small square with a plus (collapsed: double-click expands) or a minus (expanded), 10 scene
 * units wide at (x, y). Its strokes are at least a pixel thick at the zoom it is drawn for:
 * under 100% the plus's thin arms blurred away and a collapsed scope showed an empty box. */
static void
append_expander (GtkSnapshot *snapshot, double x, double y, gboolean expanded, const GdkRGBA *color, double zoom)
{
  const double size = 10;
  double stroke = MAX (1.5, 1.2 / zoom), border = MAX (0.8, 0.8 / zoom);
  append_outline (snapshot, &GRAPHENE_RECT_INIT (x, y, size, size), 2, border, color);
  double arm = size - 2 * (border + 0.8);
  gtk_snapshot_append_color (snapshot, color,
                             &GRAPHENE_RECT_INIT (x + (size - arm) / 2, y + size / 2 - stroke / 2, arm, stroke));
  if (!expanded)
    gtk_snapshot_append_color (snapshot, color,
                               &GRAPHENE_RECT_INIT (x + size / 2 - stroke / 2, y + (size - arm) / 2, stroke, arm));
}

static void
draw_group_frame (OwbGraphView *self, GtkSnapshot *snapshot, const OwbSceneNode *node, Lod lod)
{
  const Palette *p = &self->palette;
  graphene_rect_t rect = GRAPHENE_RECT_INIT (node->x, node->y, node->width, node->height);
  append_rounded_fill (snapshot, &rect, RADIUS * 1.5, &p->group_fill);
  append_outline (snapshot, &rect, RADIUS * 1.5, 1, &p->group_border);
  double pad = self->style.padding;
  double text_y = node->y + pad + 2;
  append_expander (snapshot, node->x + pad, node->y + pad + (self->style.title_height - 10) / 2, TRUE, &p->dim,
                   self->draw_zoom);
  /* The scene's subtitle of a group is its count, "24 nodes": shown after the title where the
   * frame is wide enough for both (the scene sizes it for the title alone). */
  double room = node->width - 2 * pad - 16;
  g_autofree char *header = g_strdup_printf ("%s  ·  %s", node->title, node->subtitle ? node->subtitle : "");
  gboolean both = lod >= LOD_FULL && measure_text (header, OWB_SCENE_FONT_TITLE, self->metrics) <= room;
  append_text (self, snapshot, both ? header : node->title, OWB_SCENE_FONT_TITLE, node->x + pad + 16, text_y, room,
               &p->dim);
}

/* Where the detail line `line` of a box sits (the scene puts the title row, the subtitle, then
 * the lines, each line_height tall, inside the padding). */
static double
box_text_top (const OwbGraphView *self, const OwbSceneNode *node)
{
  return node->y + self->style.padding;
}

/* The colour of a box: the layer's set on the view (a sensitivity map) for an op, else the
 * default layer's (its provider's); from_layer: it tints the whole box. */
static GdkRGBA
node_stripe (const OwbGraphView *self, const OwbSceneNode *node, gboolean *from_layer)
{
  GdkRGBA color = { 0.6f, 0.6f, 0.6f, 1.0f };
  const OwbNode *op = node->kind == OWB_SCENE_OP ? node->node : NULL;
  gboolean layered = op && owb_graph_layer_get_box_color (self->layer, op, node->provider, &color);
  if (!layered)
    owb_graph_layer_get_box_color (self->default_layer, op, node->provider, &color);
  if (from_layer)
    *from_layer = layered && owb_graph_layer_get_tints_box (self->layer);
  return color;
}

/* Zoomed far out the provider (or layer) colour is what is left to see, so it fills the box. */
static GdkRGBA
plain_color (const OwbGraphView *self, const OwbSceneNode *node)
{
  const Palette *p = &self->palette;
  gboolean layered;
  GdkRGBA stripe = node_stripe (self, node, &layered);
  if (layered)
    return stripe;
  switch (node->kind)
    {
    case OWB_SCENE_INPUT:
      return mix (p->input, p->fg, 0.15);
    case OWB_SCENE_OUTPUT:
      return mix (p->output, p->fg, 0.15);
    case OWB_SCENE_GROUP:
      return node->expanded ? p->group_fill : mix (p->box_border, stripe, 0.35);
    case OWB_SCENE_OP:
    default:
      return mix (p->box, stripe, 0.55);
    }
}

static void
draw_box (OwbGraphView *self, GtkSnapshot *snapshot, const OwbSceneNode *node, Lod lod)
{
  const Palette *p = &self->palette;
  graphene_rect_t rect = GRAPHENE_RECT_INIT (node->x, node->y, node->width, node->height);
  gboolean io = node->kind == OWB_SCENE_INPUT || node->kind == OWB_SCENE_OUTPUT;
  GdkRGBA fill = node->kind == OWB_SCENE_INPUT ? p->input : node->kind == OWB_SCENE_OUTPUT ? p->output : p->box;
  gboolean layered;
  GdkRGBA stripe = node_stripe (self, node, &layered);
  double radius = io ? MIN (node->height / 2, 14.0) : RADIUS;
  /* A layer's colour is the point of the layer: it tints the whole box, not just the stripe. */
  if (layered)
    fill = mix (p->box, stripe, 0.4);

  append_rounded_fill (snapshot, &rect, radius, &fill);
  if (node->kind == OWB_SCENE_OP)
    {
      GskRoundedRect outline;
      gsk_rounded_rect_init_from_rect (&outline, &rect, (float) radius);
      gtk_snapshot_push_rounded_clip (snapshot, &outline);
      gtk_snapshot_append_color (snapshot, &stripe, &GRAPHENE_RECT_INIT (node->x, node->y, STRIPE, node->height));
      gtk_snapshot_pop (snapshot);
    }
  else if (node->kind == OWB_SCENE_GROUP)
    {
      /* A collapsed group: a double border says "there is more inside". */
      graphene_rect_t inner = GRAPHENE_RECT_INIT (node->x + 3, node->y + 3, node->width - 6, node->height - 6);
      append_outline (snapshot, &inner, radius - 2, 1, &p->group_border);
    }
  append_outline (snapshot, &rect, radius, node->kind == OWB_SCENE_GROUP ? 1.5 : 1, &p->box_border);

  double pad = self->style.padding;
  /* The scene sized the box as text + 2 × padding; the stripe sits inside the left padding. */
  double left = node->x + pad + (node->kind == OWB_SCENE_OP ? 1 : 0);
  double text_width = node->x + node->width - pad + 2 - left;
  double y = box_text_top (self, node);
  double bottom = node->y + node->height - pad + 1;

  double subtitle_room = text_width;
  if (node->kind == OWB_SCENE_GROUP)
    {
      /* The expander mark goes where the text leaves room for it: beside the title, else beside
       * the count, else small in the corner. */
      double ex = node->x + node->width - pad - 10;
      if (measure_text (node->title, OWB_SCENE_FONT_TITLE, self->metrics) + 14 <= text_width)
        append_expander (snapshot, ex, y + (self->style.title_height - 10) / 2, FALSE, &p->dim, self->draw_zoom);
      else if (measure_text (node->subtitle, OWB_SCENE_FONT_BODY, self->metrics) + 14 <= text_width)
        {
          append_expander (snapshot, ex, y + self->style.title_height + (self->style.line_height - 10) / 2, FALSE,
                           &p->dim, self->draw_zoom);
          subtitle_room -= 14;
        }
      else
        append_expander (snapshot, node->x + node->width - 13, node->y + node->height - 13, FALSE, &p->dim,
                         self->draw_zoom);
    }
  double title_room = text_width;
  g_autofree char *badge = node->kind == OWB_SCENE_OP ? owb_graph_layer_dup_badge (self->layer, node->node) : NULL;
  if (badge)
    {
      /* The badge goes right of the title when both fit; else it is left out (the colour says it). */
      double bw = measure_text (badge, OWB_SCENE_FONT_BODY, self->metrics);
      double tw = measure_text (node->title, OWB_SCENE_FONT_TITLE, self->metrics);
      if (tw + bw + 8 <= text_width)
        {
          append_text (self, snapshot, badge, OWB_SCENE_FONT_BODY, left + text_width - bw - 1, y + 3, bw + 2, &p->fg);
          title_room = text_width - bw - 8;
        }
    }
  append_text (self, snapshot, node->title, OWB_SCENE_FONT_TITLE, left, y + 2, title_room, &p->fg);
  if (lod < LOD_FULL)
    return;
  y += self->style.title_height;
  const char *subtitle = node->subtitle;
  if (subtitle && *subtitle && y + self->style.line_height <= bottom)
    {
      append_text (self, snapshot, subtitle, OWB_SCENE_FONT_BODY, left, y, subtitle_room, &p->dim);
      y += self->style.line_height;
    }
  for (guint i = 0; i < node->n_lines && y + self->style.line_height <= bottom; i++)
    {
      append_text (self, snapshot, node->lines[i].text, OWB_SCENE_FONT_BODY, left, y, text_width,
                   node->lines[i].tensor ? &p->accent : &p->fg);
      y += self->style.line_height;
    }
}

/* Cairo nodes are made in pixels (the snapshot is in pixel space here), the scene scaled inside
 * them by cairo itself: cairo rasterizes a node at the resolution of its own units (far out a tile
 * spans millions of scene units), and it drew nothing, or overflowed its stack, when GTK's
 * transforms around a node scaled by a thousand or more. The cairo_t draws in scene units, the
 * point (offset_x, offset_y) at the pixel origin. */
static cairo_t *
begin_cairo (GtkSnapshot *snapshot, const graphene_rect_t *pixels, double zoom, double offset_x, double offset_y)
{
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, pixels);
  cairo_scale (cr, zoom, zoom);
  cairo_translate (cr, -offset_x, -offset_y);
  return cr;
}

static graphene_rect_t
to_pixels (const graphene_rect_t *rect, double zoom)
{
  return GRAPHENE_RECT_INIT (rect->origin.x * zoom, rect->origin.y * zoom, rect->size.width * zoom,
                             rect->size.height * zoom);
}

static void
path_edge (cairo_t *cr, const OwbSceneEdge *edge, Lod lod)
{
  if (edge->n_points < 2)
    return;
  const double *pts = edge->points;
  cairo_move_to (cr, pts[0], pts[1]);
  if (lod == LOD_PLAIN)
    {
      cairo_line_to (cr, pts[2 * (edge->n_points - 1)], pts[2 * (edge->n_points - 1) + 1]);
      return;
    }
  for (guint i = 1; i < edge->n_points; i++)
    cairo_line_to (cr, pts[2 * i], pts[2 * i + 1]);
}

static void
path_arrow (cairo_t *cr, const OwbSceneEdge *edge, double size)
{
  if (edge->n_points < 2)
    return;
  const double *a = edge->points + 2 * (edge->n_points - 2), *b = edge->points + 2 * (edge->n_points - 1);
  double dx = b[0] - a[0], dy = b[1] - a[1], len = hypot (dx, dy);
  if (len < 1e-6)
    return;
  dx /= len;
  dy /= len;
  cairo_move_to (cr, b[0], b[1]);
  cairo_line_to (cr, b[0] - dx * size - dy * size * 0.5, b[1] - dy * size + dx * size * 0.5);
  cairo_line_to (cr, b[0] - dx * size + dy * size * 0.5, b[1] - dy * size - dx * size * 0.5);
  cairo_close_path (cr);
}

/* Draws edges with one cairo node: one path stroked once and one path of arrowheads filled once,
 * not a node per edge. */
static void
append_edges (GtkSnapshot *snapshot, OwbGraphScene *scene, const graphene_rect_t *pixels,
              const guint *indices, guint n, Lod lod, double zoom, double offset_x, double offset_y,
              const GdkRGBA *color, double width_px)
{
  if (n == 0)
    return;
  cairo_t *cr = begin_cairo (snapshot, pixels, zoom, offset_x, offset_y);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_width (cr, MAX (1.3 * width_px, width_px / zoom));
  gdk_cairo_set_source_rgba (cr, color);
  for (guint i = 0; i < n; i++)
    {
      path_edge (cr, owb_graph_scene_get_edge (scene, indices[i]), lod);
      if ((i + 1) % PATH_CHUNK == 0)
        cairo_stroke (cr);
    }
  cairo_stroke (cr);
  if (lod != LOD_PLAIN)
    {
      for (guint i = 0; i < n; i++)
        {
          path_arrow (cr, owb_graph_scene_get_edge (scene, indices[i]), 7 + width_px);
          if ((i + 1) % PATH_CHUNK == 0)
            cairo_fill (cr);
        }
      cairo_fill (cr);
    }
  cairo_destroy (cr);
}

static gint64
pixel_key (double x, double y)
{
  return ((gint64) floor (x) << 32) ^ (gint64) (guint32) (gint32) floor (y);
}

static gboolean
first_in_pixel (GHashTable *drawn, gint64 key)
{
  if (g_hash_table_contains (drawn, &key))
    return FALSE;
  g_hash_table_add (drawn, g_memdup2 (&key, sizeof key));
  return TRUE;
}

/* The plainest level draws a tile as one cairo node, not a render node per box: far out a tile
 * holds thousands of boxes, each a few pixels. Boxes of one colour go in shared paths. Boxes keep
 * at least a pixel. */
static void
draw_plain_region (OwbGraphView *self, GtkSnapshot *snapshot, OwbGraphScene *scene, const graphene_rect_t *pixels,
                   GArray *nodes, GArray *edges, double zoom)
{
  const Palette *p = &self->palette;
  cairo_t *cr = begin_cairo (snapshot, pixels, zoom, 0, 0);
  double pixel = 1 / zoom;
  g_autoptr (GArray) colors = g_array_new (FALSE, FALSE, sizeof (GdkRGBA));
  /* Far out thousands of boxes and edges fall on the same pixels (cairo also overflowed its stack
   * stroking tens of thousands of coincident lines): draw each pixel's once. */
  g_autoptr (GHashTable) drawn = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autofree guint *color_of = g_new (guint, MAX (nodes->len, 1));
  for (guint i = 0; i < nodes->len; i++)
    {
      GdkRGBA color = plain_color (self, owb_graph_scene_get_node (scene, g_array_index (nodes, guint, i)));
      guint c = 0;
      while (c < colors->len && !gdk_rgba_equal (&g_array_index (colors, GdkRGBA, c), &color))
        c++;
      if (c == colors->len)
        g_array_append_val (colors, color);
      color_of[i] = c;
    }
  for (int pass = 0; pass < 2; pass++)
    {
      if (pass == 1)
        {
          /* Edges between the group frames and the boxes. */
          cairo_set_line_width (cr, pixel);
          gdk_cairo_set_source_rgba (cr, &p->edge);
          guint in_path = 0;
          for (guint i = 0; i < edges->len; i++)
            {
              const OwbSceneEdge *edge = owb_graph_scene_get_edge (scene, g_array_index (edges, guint, i));
              if (edge->n_points < 2)
                continue;
              const double *a = edge->points, *b = edge->points + 2 * (edge->n_points - 1);
              gint64 from = pixel_key (a[0] * zoom, a[1] * zoom), to = pixel_key (b[0] * zoom, b[1] * zoom);
              if (from == to || !first_in_pixel (drawn, from ^ (to * 1000003)))
                continue;
              path_edge (cr, edge, LOD_PLAIN);
              if (++in_path % PATH_CHUNK == 0)
                cairo_stroke (cr);
            }
          cairo_stroke (cr);
        }
      for (guint c = 0; c < colors->len; c++)
        {
          guint in_path = 0;
          gdk_cairo_set_source_rgba (cr, &g_array_index (colors, GdkRGBA, c));
          for (guint i = 0; i < nodes->len; i++)
            {
              const OwbSceneNode *node = owb_graph_scene_get_node (scene, g_array_index (nodes, guint, i));
              gboolean frame = node->kind == OWB_SCENE_GROUP && node->expanded;
              if (color_of[i] != c || frame != (pass == 0))
                continue;
              /* A box of a pixel or less where one of its colour is drawn already adds nothing. */
              if (node->width * zoom <= 1.5 && node->height * zoom <= 1.5 &&
                  !first_in_pixel (drawn, pixel_key (node->x * zoom, node->y * zoom) * 64 + c))
                continue;
              cairo_rectangle (cr, node->x, node->y, MAX (node->width, pixel), MAX (node->height, pixel));
              if (++in_path == PATH_CHUNK)
                {
                  cairo_fill (cr);
                  in_path = 0;
                }
            }
          cairo_fill (cr);
        }
    }
  cairo_destroy (cr);
}

static void
ensure_labels (OwbGraphView *self, OwbGraphScene *scene)
{
  if (self->labels_scene == scene)
    return;
  g_clear_pointer (&self->labels, _owb_edge_labels_free);
  self->labels = _owb_edge_labels_new (scene, measure_text, self->metrics, self->style.line_height);
  self->labels_scene = scene;
}

/* Everything of the scene that meets `rect` (scene units), clipped to it, at the level of detail
 * of `zoom`, into a snapshot in pixel space (scene × zoom): render nodes under one scale, cairo
 * nodes unscaled (see begin_cairo). */
static void
draw_region (OwbGraphView *self, GtkSnapshot *snapshot, OwbGraphScene *scene, const graphene_rect_t *rect,
             double zoom)
{
  Lod lod = lod_for_zoom (zoom);  /* zoom: the pixels per scene unit it will be seen at */
  self->draw_zoom = zoom;
  g_autoptr (GArray) nodes = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) edges = g_array_new (FALSE, FALSE, sizeof (guint));
  owb_graph_scene_query (scene, rect->origin.x, rect->origin.y, rect->size.width, rect->size.height, nodes, edges);
  /* A label runs beside its edge's middle (or a line above or below it): edges beside this region
   * by the widest label, and two lines above or below it, may write into it, so they are asked
   * for too; the clip keeps what falls outside. */
  g_autoptr (GArray) labelled = g_array_new (FALSE, FALSE, sizeof (guint));
  if (lod >= LOD_LABELS)
    {
      ensure_labels (self, scene);
      double reach = _owb_edge_labels_get_reach (self->labels), line = self->style.line_height;
      owb_graph_scene_query (scene, rect->origin.x - reach, rect->origin.y - 2 * line, rect->size.width + 2 * reach,
                             rect->size.height + 4 * line, NULL, labelled);
    }
  if (nodes->len == 0 && edges->len == 0 && labelled->len == 0)
    return;

  graphene_rect_t pixels = to_pixels (rect, zoom);
  gtk_snapshot_push_clip (snapshot, &pixels);
  if (lod == LOD_PLAIN)
    {
      draw_plain_region (self, snapshot, scene, &pixels, nodes, edges, zoom);
      gtk_snapshot_pop (snapshot);
      return;
    }
  /* Group frames under the edges, the boxes over them. */
  gtk_snapshot_save (snapshot);
  gtk_snapshot_scale (snapshot, (float) zoom, (float) zoom);
  for (guint i = 0; i < nodes->len; i++)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (scene, g_array_index (nodes, guint, i));
      if (node->kind == OWB_SCENE_GROUP && node->expanded)
        draw_group_frame (self, snapshot, node, lod);
    }
  gtk_snapshot_restore (snapshot);
  append_edges (snapshot, scene, &pixels, (guint *) edges->data, edges->len, lod, zoom, 0, 0, &self->palette.edge, 1.0);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_scale (snapshot, (float) zoom, (float) zoom);
  for (guint i = 0; i < nodes->len; i++)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (scene, g_array_index (nodes, guint, i));
      if (!(node->kind == OWB_SCENE_GROUP && node->expanded))
        draw_box (self, snapshot, node, lod);
    }
  if (lod >= LOD_LABELS)
    {
      for (guint i = 0; i < labelled->len; i++)
        {
          guint index = g_array_index (labelled, guint, i);
          double x, y;
          if (_owb_edge_labels_get (self->labels, index, &x, &y))
            append_text (self, snapshot, owb_graph_scene_get_edge (scene, index)->label, OWB_SCENE_FONT_LABEL, x, y,
                         G_MAXINT16, &self->palette.dim);
        }
    }
  gtk_snapshot_restore (snapshot);
  gtk_snapshot_pop (snapshot);
}

static guint
tile_key_hash (gconstpointer key)
{
  const TileKey *k = key;
  return (guint) k->bucket * 2654435761u ^ (guint) k->tx * 40503u ^ (guint) k->ty * 9973u;
}

static gboolean
tile_key_equal (gconstpointer a, gconstpointer b)
{
  const TileKey *ka = a, *kb = b;
  return ka->bucket == kb->bucket && ka->tx == kb->tx && ka->ty == kb->ty;
}

static gboolean
tile_not_in_bucket (gpointer key, gpointer value, gpointer bucket)
{
  return ((TileKey *) key)->bucket != GPOINTER_TO_INT (bucket);
}

static void
tile_free (gpointer node)
{
  if (node)
    gsk_render_node_unref (node);
}

static GskRenderNode *
get_tile (OwbGraphView *self, int bucket, int tx, int ty, double tile_size)
{
  TileKey key = { bucket, tx, ty };
  gpointer cached;
  if (g_hash_table_lookup_extended (self->tiles, &key, NULL, &cached))
    return cached;

  if (g_hash_table_size (self->tiles) >= MAX_TILES)
    {
      g_hash_table_foreach_remove (self->tiles, tile_not_in_bucket, GINT_TO_POINTER (bucket));
      if (g_hash_table_size (self->tiles) >= MAX_TILES)
        g_hash_table_remove_all (self->tiles);
    }
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  /* Each tile reaches TILE_OVERLAP of its pixels into its right and bottom neighbours: tiles
   * are scaled by up to 2^±¼ and put at a fraction of a pixel, where two clip edges meeting in
   * one pixel each cover part of it, and a line across them showed a lighter seam. */
  double overlap = TILE_OVERLAP * tile_size / TILE_PIXELS;
  graphene_rect_t rect = GRAPHENE_RECT_INIT (tx * tile_size, ty * tile_size, tile_size + overlap, tile_size + overlap);
  draw_region (self, snapshot, self->scene, &rect, bucket_zoom (bucket));
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);  /* NULL for an empty tile: cached too */
  g_hash_table_insert (self->tiles, g_memdup2 (&key, sizeof key), node);
  return node;
}

static void
add_unique (GArray *array, int index)
{
  if (index < 0)
    return;
  for (guint i = 0; i < array->len; i++)
    if (g_array_index (array, int, i) == index)
      return;
  g_array_append_val (array, index);
}

/* Whether the path on screen is the one that leads from the find's level to the match. */
static gboolean
match_on_screen (OwbGraphView *self, const OwbSceneMatch *match)
{
  if (self->find_level + 1 + match->depth != self->frames->len)
    return FALSE;
  for (guint k = 0; k < match->depth; k++)
    {
      const Frame *frame = g_ptr_array_index (self->frames, self->find_level + 1 + k);
      if (frame->owner != match->steps[k].owner || g_strcmp0 (frame->attribute, match->steps[k].attribute) != 0)
        return FALSE;
    }
  return TRUE;
}

static void
ensure_overlays (OwbGraphView *self)
{
  if (self->overlays_valid || !self->scene)
    return;
  self->overlays_valid = TRUE;
  g_array_set_size (self->ov_highlight, 0);
  g_array_set_size (self->ov_matches, 0);
  g_array_set_size (self->ov_edges, 0);
  self->ov_selected = self->selected_node ? owb_graph_scene_find_op (self->scene, self->selected_node) : -1;
  if (self->selected_node && self->ov_selected < 0)
    self->ov_selected = reader_box (self, self->selected_node); /* left out of a compact scene */
  self->ov_line_node = self->selected_line_node ? owb_graph_scene_find_op (self->scene, self->selected_line_node) : -1;
  self->ov_current = -1;
  const OwbGraph *graph = owb_graph_scene_get_graph (self->scene);
  if (self->highlight && g_hash_table_size (self->highlight) > 0)
    for (guint i = 0; i < graph->nodes->len; i++)
      {
        const OwbNode *node = g_ptr_array_index (graph->nodes, i);
        if (node->name && g_hash_table_contains (self->highlight, node->name))
          add_unique (self->ov_highlight, owb_graph_scene_find_op (self->scene, node));
      }
  if (self->matches)
    for (guint i = 0; i < self->matches->len; i++)
      {
        const OwbSceneMatch *match = g_ptr_array_index (self->matches, i);
        if (!match_on_screen (self, match))
          continue;
        int index = owb_graph_scene_find_op (self->scene, match->node);
        add_unique (self->ov_matches, index);
        if ((int) i == self->match_index)
          self->ov_current = index;
      }
  if (self->selected_tensor)
    for (guint i = 0, n = owb_graph_scene_get_n_edges (self->scene); i < n; i++)
      {
        const OwbSceneEdge *edge = owb_graph_scene_get_edge (self->scene, i);
        if (edge->tensor && strcmp (edge->tensor, self->selected_tensor) == 0)
          g_array_append_val (self->ov_edges, i);
      }
}

static gboolean
rect_meets (const graphene_rect_t *view, const OwbSceneNode *node)
{
  return node->x <= view->origin.x + view->size.width && node->x + node->width >= view->origin.x &&
         node->y <= view->origin.y + view->size.height && node->y + node->height >= view->origin.y;
}

static void
overlay_box (GtkSnapshot *snapshot, const OwbSceneNode *node, double zoom, double width_px, double gap_px,
             const GdkRGBA *fill, const GdkRGBA *color)
{
  /* Outlines keep their width on screen whatever the zoom. */
  double w = width_px / zoom, grow = w / 2 + gap_px / zoom;
  graphene_rect_t rect = GRAPHENE_RECT_INIT (node->x - grow, node->y - grow, node->width + 2 * grow, node->height + 2 * grow);
  double radius = node->kind == OWB_SCENE_OP ? RADIUS + grow : MIN (node->height / 2, 14.0) + grow;
  if (node->kind == OWB_SCENE_GROUP)
    radius = RADIUS * 1.5 + grow;
  if (fill)
    append_rounded_fill (snapshot, &rect, radius, fill);
  append_outline (snapshot, &rect, radius, w, color);
}

/* Drawn each frame over the cached tiles, into a snapshot in widget pixels. */
static void
draw_overlays (OwbGraphView *self, GtkSnapshot *snapshot, const graphene_rect_t *view)
{
  const Palette *p = &self->palette;
  ensure_overlays (self);
  if (self->ov_edges->len)
    append_edges (snapshot, self->scene, &GRAPHENE_RECT_INIT (0, 0, view->size.width * self->zoom, view->size.height * self->zoom),
                  (guint *) self->ov_edges->data, self->ov_edges->len,
                  lod_for_zoom (self->zoom) == LOD_PLAIN ? LOD_PLAIN : LOD_FULL, self->zoom, self->scroll_x,
                  self->scroll_y, &p->accent, 2.5);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_scale (snapshot, (float) self->zoom, (float) self->zoom);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT ((float) -self->scroll_x, (float) -self->scroll_y));
  for (guint i = 0; i < self->ov_highlight->len; i++)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, g_array_index (self->ov_highlight, int, i));
      if (rect_meets (view, node))
        overlay_box (snapshot, node, self->zoom, 3, 1, &p->highlight_fill, &p->highlight);
    }
  for (guint i = 0; i < self->ov_matches->len; i++)
    {
      int index = g_array_index (self->ov_matches, int, i);
      const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, index);
      if (index != self->ov_current && rect_meets (view, node))
        overlay_box (snapshot, node, self->zoom, 2, 1, NULL, &p->match);
    }
  if (self->ov_line_node >= 0 && self->selected_tensor)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, self->ov_line_node);
      for (guint i = 0; i < node->n_lines; i++)
        if (node->lines[i].tensor && strcmp (node->lines[i].tensor, self->selected_tensor) == 0)
          {
            double y = box_text_top (self, node) + self->style.title_height +
                       (node->subtitle && *node->subtitle ? self->style.line_height : 0) + i * self->style.line_height;
            graphene_rect_t rect = GRAPHENE_RECT_INIT (node->x + STRIPE + 2, y, node->width - STRIPE - 4, self->style.line_height);
            append_rounded_fill (snapshot, &rect, 3, &p->accent_fill);
            append_outline (snapshot, &rect, 3, 1.5 / self->zoom, &p->accent);
          }
    }
  if (self->ov_selected >= 0)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, self->ov_selected);
      if (rect_meets (view, node))
        overlay_box (snapshot, node, self->zoom, 3, 1, &p->accent_fill, &p->accent);
    }
  /* The current match: a ring around the box, outside the selection's (find selects it). */
  if (self->ov_current >= 0)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, self->ov_current);
      if (rect_meets (view, node))
        overlay_box (snapshot, node, self->zoom, 3, 5, NULL, &p->current_match);
    }
  gtk_snapshot_restore (snapshot);
}

static GdkRGBA
overview_color (const OwbSceneNode *node, gpointer user_data)
{
  OwbGraphView *self = user_data;
  return plain_color (self, node);
}

static void
ensure_overview (OwbGraphView *self)
{
  if (!self->overview)
    self->overview = _owb_overview_new (self->scene, OVERVIEW_ZOOM, OVERVIEW_MAX_PIXELS, OVERVIEW_MAX_SIDE,
                                        overview_color, self, &self->palette.edge);
}

/* Whether `zoom` is drawn from the overview image (built here when first needed). */
static gboolean
use_overview (OwbGraphView *self, double zoom)
{
  if (!self->scene || zoom > OVERVIEW_ZOOM)
    return FALSE;
  ensure_overview (self);
  return zoom < TILE_MIN_ZOOM || zoom <= _owb_overview_get_scale (self->overview) * 1.0001;
}

GdkTexture *
owb_graph_view_get_overview (OwbGraphView *self, int width, int height, double *extent_width, double *extent_height)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  if (!self->scene)
    return NULL;
  ensure_palette (self);
  ensure_overview (self);
  return _owb_overview_get_texture (self->overview, width, height, extent_width, extent_height);
}

void
owb_graph_view_center_on (OwbGraphView *self, double x, double y)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  self->fit_pending = self->place_pending = FALSE;
  center_on (self, x, y);
}

gboolean
owb_graph_view_get_drawing_overview (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  ensure_palette (self);
  return use_overview (self, self->zoom);
}

/* G_MESSAGES_DEBUG=all tells how long a new scene took to be on screen. */
static void
note_first_draw (OwbGraphView *self)
{
  if (!self->first_draw_pending)
    return;
  self->first_draw_pending = FALSE;
  g_debug ("graph view: first frame of the scene drawn %.0f ms after its layout began",
           (g_get_monotonic_time () - self->build_started) / 1000.0);
}

static void
owb_graph_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  ensure_palette (self);
  ensure_metrics (self);
  gtk_snapshot_append_color (snapshot, &self->palette.background, &GRAPHENE_RECT_INIT (0, 0, width, height));
  if (!self->scene)
    return;

  double zoom = self->zoom;
  if (use_overview (self, zoom))
    {
      graphene_rect_t view = GRAPHENE_RECT_INIT (self->scroll_x, self->scroll_y, width / zoom, height / zoom);
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
      _owb_overview_append (self->overview, snapshot, zoom, -self->scroll_x * zoom, -self->scroll_y * zoom);
      draw_overlays (self, snapshot, &view);
      gtk_snapshot_pop (snapshot);
      if (gtk_widget_has_visible_focus (widget))
        append_outline (snapshot, &GRAPHENE_RECT_INIT (1, 1, width - 2, height - 2), 4, 2, &self->palette.accent);
      note_first_draw (self);
      return;
    }
  int bucket = zoom_bucket (zoom);
  double tile_zoom = bucket_zoom (bucket);
  double tile_size = TILE_PIXELS / tile_zoom;
  graphene_rect_t view = GRAPHENE_RECT_INIT (self->scroll_x, self->scroll_y, width / zoom, height / zoom);

  /* Tiles are in their bucket's pixels; between buckets they are scaled by at most 2^±¼. */
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  gtk_snapshot_save (snapshot);
  gtk_snapshot_scale (snapshot, (float) (zoom / tile_zoom), (float) (zoom / tile_zoom));
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT ((float) (-self->scroll_x * tile_zoom),
                                                          (float) (-self->scroll_y * tile_zoom)));
  int tx0 = (int) floor (view.origin.x / tile_size), tx1 = (int) floor ((view.origin.x + view.size.width) / tile_size);
  int ty0 = (int) floor (view.origin.y / tile_size), ty1 = (int) floor ((view.origin.y + view.size.height) / tile_size);
  for (int ty = ty0; ty <= ty1; ty++)
    for (int tx = tx0; tx <= tx1; tx++)
      {
        GskRenderNode *tile = get_tile (self, bucket, tx, ty, tile_size);
        if (tile)
          gtk_snapshot_append_node (snapshot, tile);
      }
  gtk_snapshot_restore (snapshot);
  draw_overlays (self, snapshot, &view);
  gtk_snapshot_pop (snapshot);
  if (gtk_widget_has_visible_focus (widget))
    append_outline (snapshot, &GRAPHENE_RECT_INIT (1, 1, width - 2, height - 2), 4, 2, &self->palette.accent);
  note_first_draw (self);
}

/* ---- building scenes ---- */

typedef struct {
  const OwbGraph *graph;
  OwbSceneStyle style;
  OwnerHold *owner;
  guint serial;
} BuildData;

static void
build_data_free (gpointer data)
{
  BuildData *build = data;
  owner_hold_unref (build->owner);
  g_free (build);
}

static void
build_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  BuildData *build = task_data;
  GError *error = NULL;
  OwbGraphScene *scene = owb_graph_scene_new (build->graph, &build->style, cancellable, &error);
  if (scene)
    g_task_return_pointer (task, scene, (GDestroyNotify) owb_graph_scene_free);
  else
    g_task_return_error (task, error);
}

static void
set_busy (OwbGraphView *self, gboolean busy)
{
  if (self->busy == busy)
    return;
  self->busy = busy;
  if (!busy)
    g_clear_handle_id (&self->progress_source, g_source_remove);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

/* The scene API reports no fractions, so progress is the work and the time it has taken; the
 * fraction is -1 (unknown) until the end. */
static gboolean
progress_tick (gpointer data)
{
  OwbGraphView *self = data;
  double seconds = (g_get_monotonic_time () - self->build_started) / 1e6;
  g_autofree char *text = g_strdup_printf (ngettext ("Laying out %u node… %.0f s", "Laying out %u nodes… %.0f s",
                                                     self->build_n_nodes),
                                           self->build_n_nodes, seconds);
  g_signal_emit (self, signals[LAYOUT_PROGRESS], 0, -1.0, text);
  return G_SOURCE_CONTINUE;
}

static void
build_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (source);
  BuildData *build = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  OwbGraphScene *scene = g_task_propagate_pointer (G_TASK (result), &error);

  if (build->serial != self->build_serial)
    {
      /* Stale: set_graph, cancel or a path change came after this build started. */
      g_clear_pointer (&scene, owb_graph_scene_free);
      return;
    }
  set_busy (self, FALSE);
  Frame *frame = top_frame (self);
  if (!scene)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_signal_emit (self, signals[LAYOUT_FAILED], 0, error);
      return;
    }
  if (owb_graph_scene_get_graph (scene) != frame->graph)
    {
      /* The graph was updated while this one was laid out (the prepared session came). */
      if (!owb_graph_scene_rebind (scene, frame->graph, NULL))
        {
          owb_graph_scene_free (scene);
          start_build (self);
          return;
        }
    }
  g_signal_emit (self, signals[LAYOUT_PROGRESS], 0, 1.0, _("Done"));
  g_debug ("graph view: %u nodes laid out in %.0f ms (%u boxes, %u edges, %u blocks)", frame->graph->nodes->len,
           (g_get_monotonic_time () - self->build_started) / 1000.0, owb_graph_scene_get_n_nodes (scene),
           owb_graph_scene_get_n_edges (scene), owb_graph_scene_get_n_blocks (scene));
  self->first_draw_pending = TRUE;
  frame->scene = scene;
  self->scene = scene;
  scene_changed (self);
  place_initially (self);
  if (self->pending_select)
    owb_graph_view_select_node (self, g_steal_pointer (&self->pending_select));
}

static void
start_build (OwbGraphView *self)
{
  Frame *frame = top_frame (self);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->build_serial++;
  self->build_deferred = FALSE;
  if (!frame)
    {
      set_busy (self, FALSE);
      return;
    }
  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->build_deferred = TRUE;
      set_busy (self, FALSE);
      return;
    }
  ensure_metrics (self);
  self->cancellable = g_cancellable_new ();
  BuildData *build = g_new0 (BuildData, 1);
  build->graph = frame->graph;
  build->style = self->style;
  build->style.compact = self->compact;
  build->owner = owner_hold_ref (self->owner);
  build->serial = self->build_serial;
  self->build_started = g_get_monotonic_time ();
  self->build_n_nodes = frame->graph->nodes->len;

  g_autoptr (GTask) task = g_task_new (self, self->cancellable, build_done, NULL);
  g_task_set_source_tag (task, start_build);
  g_task_set_task_data (task, build, build_data_free);
  g_task_set_return_on_cancel (task, FALSE);
  set_busy (self, TRUE);
  progress_tick (self);
  g_clear_handle_id (&self->progress_source, g_source_remove);
  self->progress_source = g_timeout_add (500, progress_tick, self);
  g_task_run_in_thread (task, build_thread);
}

/* Called whenever another scene is shown or the scene's content changed (expand, collapse). */
static void
scene_changed (OwbGraphView *self)
{
  invalidate_tiles (self);
  g_signal_emit (self, signals[SCENE_CHANGED], 0);
  g_signal_emit (self, signals[VIEWPORT_CHANGED], 0);
}

static void
clear_find (OwbGraphView *self)
{
  gboolean had = self->matches && self->matches->len;
  g_clear_pointer (&self->matches, g_ptr_array_unref);
  g_clear_pointer (&self->find_query, g_free);
  self->match_index = -1;
  self->overlays_valid = FALSE;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.find-next", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.find-previous", FALSE);
  if (had)
    {
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_MATCHES]);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MATCH_INDEX]);
    }
}

static void
clear_selection (OwbGraphView *self, gboolean notify)
{
  gboolean had = self->selected_node || self->selected_tensor;
  self->selected_node = NULL;
  self->selected_line_node = NULL;
  g_clear_pointer (&self->selected_tensor, g_free);
  self->overlays_valid = FALSE;
  if (had && notify)
    g_signal_emit (self, signals[SELECTION_CHANGED], 0);
}

void
owb_graph_view_set_graph (OwbGraphView *self, const OwbGraph *graph, gpointer owner, GDestroyNotify owner_release)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  g_cancellable_cancel (self->cancellable);
  self->build_serial++;
  self->scene = NULL;
  /* Nodes of the old graph: nothing waits to be selected, no popover offers their bodies. */
  self->pending_select = NULL;
  if (self->branch_popover)
    gtk_popover_popdown (GTK_POPOVER (self->branch_popover));
  g_ptr_array_set_size (self->frames, 0);
  g_clear_pointer (&self->owner, owner_hold_unref);
  clear_find (self);
  /* selection-changed comes last, when get_graph already answers the new graph */
  gboolean had_selection = self->selected_node || self->selected_tensor;
  clear_selection (self, FALSE);
  g_clear_pointer (&self->highlight, g_hash_table_unref);
  invalidate_tiles (self);

  if (graph)
    {
      self->owner = owner_hold_new (owner, owner_release);
      g_ptr_array_add (self->frames, frame_new (graph, _("main")));
      start_build (self);
    }
  else
    {
      if (owner_release && owner)
        owner_release (owner);
      set_busy (self, FALSE);
    }
  g_signal_emit (self, signals[PATH_CHANGED], 0);
  g_signal_emit (self, signals[SCENE_CHANGED], 0);
  if (had_selection)
    g_signal_emit (self, signals[SELECTION_CHANGED], 0);
}

static const OwbNode *
remap_node (GHashTable *node_map, const OwbNode *node)
{
  const OwbNode *moved = node ? g_hash_table_lookup (node_map, node) : NULL;
  return moved ? moved : node;
}

/* Moves the view's node pointers (selection, matches) to the rebound graph's nodes. */
static void
remap_nodes (OwbGraphView *self, GHashTable *node_map)
{
  const OwbNode *selected = self->selected_node;
  self->selected_node = remap_node (node_map, self->selected_node);
  self->selected_line_node = remap_node (node_map, self->selected_line_node);
  for (guint i = 0; self->matches && i < self->matches->len; i++)
    {
      OwbSceneMatch *match = self->matches->pdata[i];
      match->node = remap_node (node_map, match->node);
      for (guint k = 0; k < match->depth; k++)
        match->steps[k].owner = remap_node (node_map, match->steps[k].owner);
    }
  self->overlays_valid = FALSE;
  invalidate_tiles (self);
  g_signal_emit (self, signals[SCENE_CHANGED], 0);
  if (selected != self->selected_node)
    g_signal_emit (self, signals[SELECTION_CHANGED], 0);
}

gboolean
owb_graph_view_update_graph (OwbGraphView *self, const OwbGraph *graph, gpointer owner, GDestroyNotify owner_release)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  g_return_val_if_fail (graph != NULL, FALSE);
  Frame *main = self->frames->len ? g_ptr_array_index (self->frames, 0) : NULL;
  if (main == NULL || graph->nodes->len != main->graph->nodes->len ||
      graph->outputs->len != main->graph->outputs->len)
    return FALSE;
  if (main->scene == NULL && !self->busy)
    return FALSE;  /* a failed or cancelled layout: lay the new graph out instead */

  /* Subgraph levels show bodies of the old graph: back to the main one first. */
  if (self->frames->len > 1)
    owb_graph_view_go_to_path (self, 0);
  if (self->branch_popover)
    gtk_popover_popdown (GTK_POPOVER (self->branch_popover));
  if (main->scene != NULL)
    {
      g_autoptr (GHashTable) node_map = g_hash_table_new (g_direct_hash, g_direct_equal);
      if (!owb_graph_scene_rebind (main->scene, graph, node_map))
        return FALSE;
      main->graph = graph;
      remap_nodes (self, node_map);
    }
  else
    main->graph = graph;  /* build_done rebinds the scene being built to it */
  /* Matches inside bodies are nodes of the old graph's subgraphs: find them again. */
  if (self->find_query && has_nested_matches (self))
    {
      g_ptr_array_unref (self->matches);
      self->matches = owb_graph_find_nested (graph, self->find_query);
      if (self->match_index >= (int) self->matches->len)
        self->match_index = self->matches->len ? 0 : -1;
      self->overlays_valid = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_MATCHES]);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MATCH_INDEX]);
    }
  /* The old owner goes last: the build still running, if any, holds it until it is done. */
  OwnerHold *old = g_steal_pointer (&self->owner);
  self->owner = owner_hold_new (owner, owner_release);
  owner_hold_unref (old);
  return TRUE;
}

const OwbGraph *
owb_graph_view_get_graph (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  Frame *frame = top_frame (self);
  return frame ? frame->graph : NULL;
}

gboolean
owb_graph_view_get_busy (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  return self->busy;
}

void
owb_graph_view_cancel (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->busy)
    return;
  g_cancellable_cancel (self->cancellable);
  self->build_serial++;
  set_busy (self, FALSE);
  /* A subgraph that was still being built is left: back to the level that has a scene. */
  if (self->frames->len > 1 && !top_frame (self)->scene)
    owb_graph_view_go_to_path (self, self->frames->len - 2);
}

gboolean
owb_graph_view_relayout (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  Frame *frame = top_frame (self);
  if (!frame || self->busy)
    return FALSE;
  self->scene = NULL;
  g_clear_pointer (&frame->scene, owb_graph_scene_free);
  invalidate_tiles (self);
  start_build (self);
  g_signal_emit (self, signals[SCENE_CHANGED], 0);
  return TRUE;
}

const OwbGraphScene *
owb_graph_view_get_scene (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->scene;
}

gboolean
owb_graph_view_has_scene (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  return self->scene != NULL;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(const char *const *) a, *(const char *const *) b);
}

char **
owb_graph_view_dup_providers (OwbGraphView *self, gboolean *has_unassigned)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) list = g_ptr_array_new ();
  gboolean unassigned = FALSE;
  const OwbGraph *graph = owb_graph_view_get_graph (self);
  for (guint i = 0; graph && i < graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (graph->nodes, i);
      if (!node->provider)
        unassigned = TRUE;
      else if (g_hash_table_add (seen, node->provider))
        g_ptr_array_add (list, g_strdup (node->provider));
    }
  g_ptr_array_sort (list, compare_strings);
  if (has_unassigned)
    *has_unassigned = unassigned;
  g_ptr_array_add (list, NULL);
  return (char **) g_ptr_array_steal (list, NULL);
}

/* ---- zoom ---- */

double
owb_graph_view_get_zoom (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 1.0);
  return self->zoom;
}

void
owb_graph_view_set_zoom (OwbGraphView *self, double zoom)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  self->fit_pending = self->place_pending = FALSE;
  zoom_at (self, zoom, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0, gtk_widget_get_height (GTK_WIDGET (self)) / 2.0);
}

void
owb_graph_view_zoom_in (OwbGraphView *self)
{
  owb_graph_view_set_zoom (self, self->zoom * ZOOM_STEP);
}

void
owb_graph_view_zoom_out (OwbGraphView *self)
{
  owb_graph_view_set_zoom (self, self->zoom / ZOOM_STEP);
}

void
owb_graph_view_zoom_to_fit (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  self->place_pending = FALSE;
  fit (self);
}

void
owb_graph_view_get_scroll (OwbGraphView *self, double *x, double *y)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (x)
    *x = self->scroll_x;
  if (y)
    *y = self->scroll_y;
}

void
owb_graph_view_scroll_by (OwbGraphView *self, double dx, double dy)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  set_view (self, self->zoom, self->scroll_x + dx / self->zoom, self->scroll_y + dy / self->zoom);
}

/* ---- selection ---- */

const OwbNode *
owb_graph_view_get_selected_node (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->selected_node;
}

const char *
owb_graph_view_get_selected_tensor (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->selected_tensor;
}

/* A node a compact scene left out (a Constant, a weight's Identity) shows on the boxes that read
 * its value: the first of them, following chains of left-out nodes; -1 when none. */
static int
reader_box (OwbGraphView *self, const OwbNode *node)
{
  const OwbGraph *graph = owb_graph_scene_get_graph (self->scene);
  for (guint depth = 0; node && depth < 16; depth++)
    {
      const OwbNode *next = NULL;
      for (guint i = 0; i < graph->nodes->len && !next; i++)
        {
          const OwbNode *reader = g_ptr_array_index (graph->nodes, i);
          for (int k = 0; k < reader->n_inputs && !next; k++)
            for (int o = 0; o < node->n_outputs && !next; o++)
              if (node->outputs[o][0] && strcmp (reader->inputs[k], node->outputs[o]) == 0)
                next = reader;
        }
      int index = next ? owb_graph_scene_find_op (self->scene, next) : -1;
      if (index >= 0)
        return index;
      node = next;
    }
  return -1;
}

static void
reveal_and_center (OwbGraphView *self, const OwbNode *node)
{
  if (!self->scene)
    return;
  g_autoptr (GError) error = NULL;
  int before = owb_graph_scene_find_op (self->scene, node);
  if (before >= 0 && owb_graph_scene_get_node (self->scene, before)->kind == OWB_SCENE_GROUP)
    {
      if (!owb_graph_scene_reveal (self->scene, node, NULL, &error))
        {
          g_signal_emit (self, signals[LAYOUT_FAILED], 0, error);
          return;
        }
      scene_changed (self);
    }
  int index = owb_graph_scene_find_op (self->scene, node);
  if (index < 0)
    index = reader_box (self, node);
  if (index < 0)
    return;
  const OwbSceneNode *box = owb_graph_scene_get_node (self->scene, index);
  /* Finding a node in a graph shown whole is no use if it is a speck: zoom to read it. */
  if (self->zoom < 0.7)
    {
      self->zoom = 1.0;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
    }
  self->fit_pending = FALSE;
  center_on (self, box->x + box->width / 2, box->y + box->height / 2);
}

static void
select_internal (OwbGraphView *self, const OwbNode *node, const char *tensor, const OwbNode *line_node)
{
  if (self->selected_node == node && self->selected_line_node == line_node &&
      g_strcmp0 (self->selected_tensor, tensor) == 0)
    return;
  self->selected_node = node;
  self->selected_line_node = line_node;
  g_free (self->selected_tensor);
  self->selected_tensor = g_strdup (tensor);
  self->overlays_valid = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  /* Screen readers see one "Graph" area: say what is selected in it. */
  g_autofree char *described = node ? owb_node_describe (node) : NULL;
  g_autofree char *description = described ? g_strdup_printf (_("Selected node: %s"), described)
                                 : tensor ? g_strdup_printf (_("Selected value: %s"), tensor)
                                          : NULL;
  if (description)
    gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
  else
    gtk_accessible_reset_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
  g_signal_emit (self, signals[SELECTION_CHANGED], 0);
}

void
owb_graph_view_select_node (OwbGraphView *self, const OwbNode *node)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  select_internal (self, node, NULL, NULL);
  if (node)
    reveal_and_center (self, node);
}

void
owb_graph_view_select_tensor (OwbGraphView *self, const char *name)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  select_internal (self, NULL, name, NULL);
}

void
owb_graph_view_set_highlight (OwbGraphView *self, const char *const *node_names)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  g_clear_pointer (&self->highlight, g_hash_table_unref);
  if (node_names && node_names[0])
    {
      self->highlight = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      for (guint i = 0; node_names[i]; i++)
        g_hash_table_add (self->highlight, g_strdup (node_names[i]));
    }
  self->overlays_valid = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
owb_graph_view_set_layer (OwbGraphView *self, OwbGraphLayer *layer)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (layer == self->layer)
    return;
  if (layer)
    owb_graph_layer_ref (layer);
  g_clear_pointer (&self->layer, owb_graph_layer_unref);
  self->layer = layer;
  owb_graph_view_layer_changed (self);
}

OwbGraphLayer *
owb_graph_view_get_layer (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->layer;
}

void
owb_graph_view_layer_changed (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  /* Tiles and the overview image hold the old colours. */
  if (self->tiles)
    invalidate_tiles (self);
}

guint
owb_graph_view_get_n_highlighted (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 0);
  ensure_overlays (self);
  return self->scene ? self->ov_highlight->len : 0;
}

/* ---- find ---- */

static void push_frame (OwbGraphView *self, const OwbNode *node, const OwbAttribute *attr);
static void pop_to (OwbGraphView *self, guint index);

static const OwbAttribute *
graph_attribute (const OwbNode *node, const char *name)
{
  for (int i = 0; node && i < node->n_attributes; i++)
    if (node->attributes[i].type == OWB_ATTR_GRAPH && node->attributes[i].g &&
        (!name || strcmp (node->attributes[i].name, name) == 0))
      return &node->attributes[i];
  return NULL;
}

/* Shows the current match: on screen it is selected; inside a subgraph, the path from the find's
 * level down to it is opened (what is already open of it stays) and it is selected once drawn. */
static void
find_moved (OwbGraphView *self)
{
  self->overlays_valid = FALSE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MATCH_INDEX]);
  const OwbSceneMatch *match = self->match_index >= 0 ? g_ptr_array_index (self->matches, self->match_index) : NULL;
  if (match && match_on_screen (self, match))
    owb_graph_view_select_node (self, match->node);
  else if (match)
    {
      guint keep = 0;
      while (keep < match->depth && self->find_level + 1 + keep < self->frames->len)
        {
          const Frame *frame = g_ptr_array_index (self->frames, self->find_level + 1 + keep);
          if (frame->owner != match->steps[keep].owner ||
              g_strcmp0 (frame->attribute, match->steps[keep].attribute) != 0)
            break;
          keep++;
        }
      if (self->find_level + 1 + keep < self->frames->len)
        pop_to (self, self->find_level + keep);
      for (guint k = keep; k < match->depth; k++)
        push_frame (self, match->steps[k].owner, graph_attribute (match->steps[k].owner, match->steps[k].attribute));
      if (self->scene)
        owb_graph_view_select_node (self, match->node);
      else
        self->pending_select = match->node;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static gboolean
has_nested_matches (OwbGraphView *self)
{
  for (guint i = 0; self->matches && i < self->matches->len; i++)
    if (((const OwbSceneMatch *) self->matches->pdata[i])->depth > 0)
      return TRUE;
  return FALSE;
}

guint
owb_graph_view_find (OwbGraphView *self, const char *query)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 0);
  clear_find (self);
  if (!self->scene || !query || !*query)
    {
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return 0;
    }
  /* Inside subgraphs too: the matches are relative to the level on screen now. */
  self->find_level = self->frames->len - 1;
  self->find_query = g_strdup (query);
  self->matches = owb_graph_find_nested (top_frame (self)->graph, query);
  guint n = self->matches ? self->matches->len : 0;
  self->match_index = n ? 0 : -1;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.find-next", n > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.find-previous", n > 0);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_MATCHES]);
  find_moved (self);
  return n;
}

void
owb_graph_view_find_next (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->matches || self->matches->len == 0)
    return;
  self->match_index = (self->match_index + 1) % (int) self->matches->len;
  find_moved (self);
}

void
owb_graph_view_find_previous (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->matches || self->matches->len == 0)
    return;
  self->match_index = (self->match_index + (int) self->matches->len - 1) % (int) self->matches->len;
  find_moved (self);
}

const OwbSceneMatch *
owb_graph_view_get_match (OwbGraphView *self, guint index)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  if (!self->matches || index >= self->matches->len)
    return NULL;
  return g_ptr_array_index (self->matches, index);
}

void
owb_graph_view_set_match_index (OwbGraphView *self, guint index)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->matches || index >= self->matches->len)
    return;
  self->match_index = (int) index;
  find_moved (self);
}

int
owb_graph_view_get_match_index (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), -1);
  return self->match_index;
}

guint
owb_graph_view_get_n_matches (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 0);
  return self->matches ? self->matches->len : 0;
}

/* ---- subgraphs ---- */

static void
save_view (OwbGraphView *self)
{
  Frame *frame = top_frame (self);
  if (!frame)
    return;
  frame->zoom = self->zoom;
  frame->scroll_x = self->scroll_x;
  frame->scroll_y = self->scroll_y;
  frame->placed = TRUE;
  frame->selected_node = self->selected_node;
  frame->selected_line_node = self->selected_line_node;
  g_free (frame->selected_tensor);
  frame->selected_tensor = g_strdup (self->selected_tensor);
}

/* The subgraph `attr` of `node` (a node of the graph on screen) opens above it. The selection
 * changes too: nothing is selected in the subgraph, and whoever shows it (the inspector) now
 * describes the subgraph. */
static void
push_frame (OwbGraphView *self, const OwbNode *node, const OwbAttribute *attr)
{
  save_view (self);
  OwbSceneStep step = { node, attr->name };
  g_autofree char *label = owb_scene_step_label (&step);
  Frame *frame = frame_new (attr->g, label);
  frame->owner = node;
  frame->attribute = g_strdup (attr->name);
  g_ptr_array_add (self->frames, frame);
  self->scene = NULL;
  self->pending_select = NULL;
  clear_selection (self, FALSE);
  invalidate_tiles (self);
  start_build (self);
  g_signal_emit (self, signals[PATH_CHANGED], 0);
  g_signal_emit (self, signals[SCENE_CHANGED], 0);
  g_signal_emit (self, signals[SELECTION_CHANGED], 0);
}

/* Back to frame `index`, with the view and the selection it had when a subgraph was opened. */
static void
pop_to (OwbGraphView *self, guint index)
{
  if (self->busy)
    {
      g_cancellable_cancel (self->cancellable);
      self->build_serial++;
      set_busy (self, FALSE);
    }
  g_ptr_array_set_size (self->frames, index + 1);
  Frame *frame = top_frame (self);
  self->scene = frame->scene;
  self->pending_select = NULL;
  clear_selection (self, FALSE);
  self->selected_node = frame->selected_node;
  self->selected_line_node = frame->selected_line_node;
  self->selected_tensor = g_strdup (frame->selected_tensor);
  scene_changed (self);
  if (frame->placed)
    set_view (self, frame->zoom, frame->scroll_x, frame->scroll_y);
  else
    place_initially (self);
  if (!self->scene)
    start_build (self);
  g_signal_emit (self, signals[PATH_CHANGED], 0);
  g_signal_emit (self, signals[SELECTION_CHANGED], 0);
}

void
owb_graph_view_open_subgraph (OwbGraphView *self, const OwbNode *node, const char *attribute)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  g_return_if_fail (node != NULL);
  const OwbAttribute *attr = graph_attribute (node, attribute);
  if (!attr || self->busy)
    return;
  if (self->branch_popover)
    gtk_popover_popdown (GTK_POPOVER (self->branch_popover));
  /* Matches found from this level or below stay valid: the path keeps the find's level. */
  push_frame (self, node, attr);
}

guint
owb_graph_view_get_path_length (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 0);
  return self->frames->len;
}

const char *
owb_graph_view_get_path_label (OwbGraphView *self, guint index)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  if (index >= self->frames->len)
    return NULL;
  return ((Frame *) g_ptr_array_index (self->frames, index))->label;
}

char *
owb_graph_view_dup_path_title (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  if (self->frames->len < 2)
    return NULL;
  GString *s = g_string_new (NULL);
  for (guint i = 1; i < self->frames->len; i++)
    {
      if (i > 1)
        g_string_append (s, " › ");
      g_string_append (s, ((Frame *) g_ptr_array_index (self->frames, i))->label);
    }
  return g_string_free (s, FALSE);
}

void
owb_graph_view_go_to_path (OwbGraphView *self, guint index)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (index + 1 >= self->frames->len)
    return;
  /* Above the level the find started from, its matches mean nothing. */
  if (self->matches && index < self->find_level)
    clear_find (self);
  pop_to (self, index);
}

/* ---- choosing a subgraph ---- */

static guint
count_graph_attributes (const OwbNode *node)
{
  guint n = 0;
  for (int i = 0; node && i < node->n_attributes; i++)
    if (node->attributes[i].type == OWB_ATTR_GRAPH && node->attributes[i].g)
      n++;
  return n;
}

static void
branch_chosen (GtkButton *button, OwbGraphView *self)
{
  const OwbNode *node = g_object_get_data (G_OBJECT (button), "owb-node");
  const char *attribute = g_object_get_data (G_OBJECT (button), "owb-attribute");
  gtk_popover_popdown (GTK_POPOVER (self->branch_popover));
  owb_graph_view_open_subgraph (self, node, attribute);
}

/* A double-click on an If asks which branch: a button per graph attribute, at the pointer. */
static void
choose_subgraph (OwbGraphView *self, const OwbNode *node, double x, double y)
{
  if (!self->branch_popover)
    {
      self->branch_popover = gtk_popover_new ();
      gtk_widget_set_parent (self->branch_popover, GTK_WIDGET (self));
      gtk_accessible_update_property (GTK_ACCESSIBLE (self->branch_popover), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      _("Open Subgraph"), -1);
    }
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  for (int i = 0; i < node->n_attributes; i++)
    {
      const OwbAttribute *attr = &node->attributes[i];
      if (attr->type != OWB_ATTR_GRAPH || !attr->g)
        continue;
      guint n = attr->g->nodes->len;
      g_autofree char *text = g_strdup_printf (ngettext ("%s (%u node)", "%s (%u nodes)", n), attr->name, n);
      GtkWidget *button = gtk_button_new_with_label (text);
      gtk_widget_add_css_class (button, "flat");
      gtk_widget_set_halign (gtk_button_get_child (GTK_BUTTON (button)), GTK_ALIGN_START);
      g_autofree char *name = g_strdup_printf (_("Open %s"), attr->name);
      gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
      g_object_set_data (G_OBJECT (button), "owb-node", (gpointer) node);
      g_object_set_data_full (G_OBJECT (button), "owb-attribute", g_strdup (attr->name), g_free);
      g_signal_connect (button, "clicked", G_CALLBACK (branch_chosen), self);
      gtk_box_append (GTK_BOX (box), button);
    }
  gtk_popover_set_child (GTK_POPOVER (self->branch_popover), box);
  gtk_popover_set_pointing_to (GTK_POPOVER (self->branch_popover), &(GdkRectangle) { (int) x, (int) y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->branch_popover));
}

GtkWidget *
owb_graph_view_get_subgraph_chooser (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->branch_popover;
}

/* ---- compact ---- */

void
owb_graph_view_set_compact (OwbGraphView *self, gboolean compact)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (self->compact == !!compact)
    return;
  self->compact = !!compact;
  /* Every level is laid out again, the one on screen now, the others when shown. */
  for (guint i = 0; i < self->frames->len; i++)
    {
      Frame *frame = g_ptr_array_index (self->frames, i);
      g_clear_pointer (&frame->scene, owb_graph_scene_free);
      frame->placed = FALSE;
    }
  if (self->frames->len == 0)
    return;
  if (self->busy)
    {
      g_cancellable_cancel (self->cancellable);
      self->build_serial++;
      set_busy (self, FALSE);
    }
  self->scene = NULL;
  self->overlays_valid = FALSE;
  invalidate_tiles (self);
  start_build (self);
  g_signal_emit (self, signals[SCENE_CHANGED], 0);
}

gboolean
owb_graph_view_get_compact (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  return self->compact;
}

/* ---- export ---- */

static GskRenderNode *
whole_scene_node (OwbGraphView *self, double scale, int *width, int *height)
{
  double sw, sh, margin = 16;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  *width = (int) ceil ((sw + 2 * margin) * scale);
  *height = (int) ceil ((sh + 2 * margin) * scale);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gtk_snapshot_append_color (snapshot, &self->palette.background, &GRAPHENE_RECT_INIT (0, 0, *width, *height));
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT ((float) (margin * scale), (float) (margin * scale)));
  draw_region (self, snapshot, self->scene, &GRAPHENE_RECT_INIT (-margin, -margin, sw + 2 * margin, sh + 2 * margin),
               scale);
  return gtk_snapshot_free_to_node (snapshot);
}

GdkTexture *
owb_graph_view_render_texture (OwbGraphView *self, double max_side, GError **error)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  if (!self->scene)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                   self->busy ? _("The graph is still being laid out") : _("There is no graph to export"));
      return NULL;
    }
  ensure_palette (self);
  ensure_metrics (self);
  double sw, sh;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  /* Scale 1, unless the image would pass max_side pixels or ~256 MB of pixels. */
  double scale = MIN (1.0, max_side / (MAX (sw, sh) + 32));
  scale = MIN (scale, sqrt (64e6 / ((sw + 32) * (sh + 32))));
  if (scale < TILE_MIN_ZOOM)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("The graph is too large for an image (%.0f×%.0f units); export it as SVG instead"), sw, sh);
      return NULL;
    }
  int width, height;
  g_autoptr (GskRenderNode) node = whole_scene_node (self, scale, &width, &height);

  /* A cairo renderer of our own, not the window's: the same pixels whatever GSK draws the
   * window with, no GPU texture size limit, and it works before the view is on screen. */
  g_autoptr (GskRenderer) renderer = gsk_cairo_renderer_new ();
  if (!gsk_renderer_realize (renderer, NULL, error))
    return NULL;
  GdkTexture *texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  gsk_renderer_unrealize (renderer);
  if (!texture)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not render the graph (%d×%d pixels)"), width, height);
  return texture;
}

static gboolean
replace_contents (GFile *file, GBytes *bytes, GError **error)
{
  gsize size;
  const char *data = g_bytes_get_data (bytes, &size);
  return g_file_replace_contents (file, data, size, NULL, FALSE, G_FILE_CREATE_REPLACE_DESTINATION,
                                  NULL, NULL, error);
}

gboolean
owb_graph_view_export_png (OwbGraphView *self, GFile *file, GError **error)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  g_autoptr (GdkTexture) texture = owb_graph_view_render_texture (self, 16384, error);
  if (!texture)
    return FALSE;
  g_autoptr (GBytes) png = gdk_texture_save_to_png_bytes (texture);
  if (!png)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not encode the image as PNG"));
      return FALSE;
    }
  return replace_contents (file, png, error);
}

gboolean
owb_graph_view_export_svg (OwbGraphView *self, GFile *file, GError **error)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  if (!self->scene)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                   self->busy ? _("The graph is still being laid out") : _("There is no graph to export"));
      return FALSE;
    }
  char *svg = owb_graph_scene_to_svg (self->scene);
  g_autoptr (GBytes) bytes = g_bytes_new_take (svg, strlen (svg));
  return replace_contents (file, bytes, error);
}

/* ---- input ---- */

static void
toggle_group (OwbGraphView *self, int index, double px, double py)
{
  const OwbSceneNode *group = owb_graph_scene_get_node (self->scene, index);
  g_autofree char *scope = g_strdup (group->scope);
  gboolean expand = !group->expanded;
  /* Keep the point of the group under the pointer where it is. */
  double offset_x = self->scroll_x + px / self->zoom - group->x;
  double offset_y = self->scroll_y + py / self->zoom - group->y;
  g_autoptr (GError) error = NULL;
  if (!owb_graph_scene_set_expanded (self->scene, scope, expand, NULL, &error))
    {
      g_signal_emit (self, signals[LAYOUT_FAILED], 0, error);
      return;
    }
  int after = owb_graph_scene_find_group (self->scene, scope);
  scene_changed (self);
  if (after < 0)
    return;
  const OwbSceneNode *moved = owb_graph_scene_get_node (self->scene, after);
  /* Collapsing shrinks the box: clamp so the point stays inside it. */
  offset_x = MIN (offset_x, moved->width);
  offset_y = MIN (offset_y, moved->height);
  set_view (self, self->zoom, moved->x + offset_x - px / self->zoom, moved->y + offset_y - py / self->zoom);
}

static gboolean
node_has_subgraph (const OwbNode *node)
{
  for (int i = 0; node && i < node->n_attributes; i++)
    if (node->attributes[i].type == OWB_ATTR_GRAPH && node->attributes[i].g)
      return TRUE;
  return FALSE;
}

static void
click_pressed (GtkGestureClick *gesture, int n_press, double x, double y, OwbGraphView *self)
{
  gtk_widget_grab_focus (GTK_WIDGET (self));
  owb_graph_view_click (self, x, y, n_press);
}

void
owb_graph_view_click (OwbGraphView *self, double x, double y, int n_press)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->scene)
    return;
  double sx = self->scroll_x + x / self->zoom, sy = self->scroll_y + y / self->zoom;
  int index = owb_graph_scene_hit_node (self->scene, sx, sy);
  const OwbSceneNode *node = index >= 0 ? owb_graph_scene_get_node (self->scene, index) : NULL;

  if (n_press == 2 && node)
    {
      if (node->kind == OWB_SCENE_GROUP)
        toggle_group (self, index, x, y);
      else if (node->kind == OWB_SCENE_OP && node_has_subgraph (node->node))
        {
          /* A branch's own line opens that branch; elsewhere, a node with several asks which. */
          int line = owb_graph_scene_hit_line (self->scene, index, sx, sy);
          if (line >= 0 && (guint) line < node->n_lines && node->lines[line].subgraph)
            owb_graph_view_open_subgraph (self, node->node, node->lines[line].subgraph);
          else if (count_graph_attributes (node->node) > 1)
            choose_subgraph (self, node->node, x, y);
          else
            owb_graph_view_open_subgraph (self, node->node, NULL);
        }
      return;
    }
  if (n_press != 1)
    return;
  if (node && node->kind == OWB_SCENE_OP)
    {
      int line = owb_graph_scene_hit_line (self->scene, index, sx, sy);
      if (line >= 0 && (guint) line < node->n_lines && node->lines[line].tensor)
        select_internal (self, NULL, node->lines[line].tensor, node->node);
      else
        select_internal (self, node->node, NULL, NULL);
      return;
    }
  if (node && (node->kind == OWB_SCENE_INPUT || node->kind == OWB_SCENE_OUTPUT))
    {
      select_internal (self, NULL, node->value, NULL);
      return;
    }
  int edge = owb_graph_scene_hit_edge (self->scene, sx, sy, CLICK_TOLERANCE / self->zoom);
  if (edge >= 0)
    select_internal (self, NULL, owb_graph_scene_get_edge (self->scene, edge)->tensor, NULL);
  else if (!node)
    select_internal (self, NULL, NULL, NULL);
}

/* A value's type with long dimension names whole (the box shortens them). */
static char *
dup_full_type (OwbGraphView *self, const char *name)
{
  /* A subgraph's values from outside are typed in the graphs around it. */
  for (const OwbGraph *g = owb_graph_scene_get_graph (self->scene); g; g = g->parent)
    {
      const OwbValueInfo *info = owb_graph_find_value_info (g, name);
      if (info && info->has_type)
        return owb_scene_format_type_full (&info->type);
    }
  return NULL;
}

/* Hovering tells what a box or edge is in full: names are often ellipsized in the box. */
static gboolean
query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  if (!self->scene || keyboard)
    return FALSE;
  double sx = self->scroll_x + x / self->zoom, sy = self->scroll_y + y / self->zoom;
  int index = owb_graph_scene_hit_node (self->scene, sx, sy);
  g_autofree char *text = NULL;
  if (index >= 0)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, index);
      switch (node->kind)
        {
        case OWB_SCENE_OP:
          {
            g_autofree char *described = owb_node_describe (node->node);
            text = node->provider ? g_strdup_printf (_("%s\nRuns on %s"), described, node->provider)
                                  : g_strdup (described);
            if (node_has_subgraph (node->node))
              {
                int line = owb_graph_scene_hit_line (self->scene, index, sx, sy);
                const char *subgraph = line >= 0 && (guint) line < node->n_lines ? node->lines[line].subgraph : NULL;
                g_autofree char *hint = subgraph ? g_strdup_printf (_("Double-click to open %s"), subgraph)
                                        : count_graph_attributes (node->node) > 1
                                          ? g_strdup (_("Double-click to choose a subgraph to open"))
                                          : g_strdup (_("Double-click to open its subgraph"));
                char *more = g_strdup_printf ("%s\n%s", text, hint);
                g_free (text);
                text = more;
              }
          }
          break;
        case OWB_SCENE_GROUP:
          text = g_strdup_printf ("%s (%s)\n%s", node->scope, node->subtitle,
                                  node->expanded ? _("Double-click to collapse") : _("Double-click to expand"));
          break;
        case OWB_SCENE_INPUT:
          {
            g_autofree char *type = dup_full_type (self, node->value);
            text = g_strdup_printf (_("Graph input %s: %s"), node->value, type ? type : node->subtitle);
          }
          break;
        case OWB_SCENE_OUTPUT:
          {
            g_autofree char *type = dup_full_type (self, node->value);
            text = g_strdup_printf (_("Graph output %s: %s"), node->value, type ? type : node->subtitle);
          }
          break;
        }
    }
  else
    {
      int edge_index = owb_graph_scene_hit_edge (self->scene, sx, sy, CLICK_TOLERANCE / self->zoom);
      if (edge_index < 0)
        return FALSE;
      const OwbSceneEdge *edge = owb_graph_scene_get_edge (self->scene, edge_index);
      text = edge->n_tensors > 1
                 ? g_strdup_printf (ngettext ("%s and %u more value", "%s and %u more values", edge->n_tensors - 1),
                                    edge->tensor, edge->n_tensors - 1)
                 : g_strdup (edge->tensor);
      g_autofree char *type = edge->tensor ? dup_full_type (self, edge->tensor) : NULL;
      if (type || edge->label)
        {
          char *more = g_strdup_printf ("%s\n%s", text, type ? type : edge->label);
          g_free (text);
          text = more;
        }
    }
  if (!text)
    return FALSE;
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
drag_begin (GtkGestureDrag *gesture, double x, double y, OwbGraphView *self)
{
  self->drag_scroll_x = self->scroll_x;
  self->drag_scroll_y = self->scroll_y;
  self->dragging = FALSE;
}

static void
drag_update (GtkGestureDrag *gesture, double dx, double dy, OwbGraphView *self)
{
  /* A press that hardly moves is a click, not a pan. */
  if (!self->dragging && !gtk_drag_check_threshold (GTK_WIDGET (self), 0, 0, (int) dx, (int) dy))
    return;
  if (!self->dragging)
    {
      self->dragging = TRUE;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
    }
  self->fit_pending = FALSE;
  set_view (self, self->zoom, self->drag_scroll_x - dx / self->zoom, self->drag_scroll_y - dy / self->zoom);
}

static void
drag_end (GtkGestureDrag *gesture, double dx, double dy, OwbGraphView *self)
{
  self->dragging = FALSE;
  gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
}

static gboolean
scrolled (GtkEventControllerScroll *controller, double dx, double dy, OwbGraphView *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  gboolean smooth = gtk_event_controller_scroll_get_unit (controller) == GDK_SCROLL_UNIT_SURFACE;
  self->fit_pending = FALSE;
  if (state & GDK_CONTROL_MASK)
    {
      double px = self->has_pointer ? self->pointer_x : gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
      double py = self->has_pointer ? self->pointer_y : gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;
      double factor = smooth ? exp (-dy * 0.01) : pow (ZOOM_STEP, -dy);
      zoom_at (self, self->zoom * factor, px, py);
      return TRUE;
    }
  if (state & GDK_SHIFT_MASK && dx == 0)
    {
      dx = dy;
      dy = 0;
    }
  double step = smooth ? 1.0 : SCROLL_STEP;
  owb_graph_view_scroll_by (self, dx * step, dy * step);
  return TRUE;
}

static void
motion (GtkEventControllerMotion *controller, double x, double y, OwbGraphView *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  self->has_pointer = TRUE;
}

static void
leave (GtkEventControllerMotion *controller, OwbGraphView *self)
{
  self->has_pointer = FALSE;
}

static void
zoom_begin (GtkGesture *gesture, GdkEventSequence *sequence, OwbGraphView *self)
{
  self->gesture_zoom = self->zoom;
  gtk_gesture_get_bounding_box_center (gesture, &self->gesture_x, &self->gesture_y);
}

static void
zoom_scale_changed (GtkGestureZoom *gesture, double scale, OwbGraphView *self)
{
  double x, y;
  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &x, &y))
    {
      x = self->gesture_x;
      y = self->gesture_y;
    }
  self->fit_pending = FALSE;
  zoom_at (self, self->gesture_zoom * scale, x, y);
}

static gboolean
pan_key (GtkWidget *widget, GVariant *args, gpointer user_data)
{
  double dx, dy;
  g_variant_get (args, "(dd)", &dx, &dy);
  owb_graph_view_scroll_by (OWB_GRAPH_VIEW (widget), dx * SCROLL_STEP, dy * SCROLL_STEP);
  return TRUE;
}

static void
view_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  if (g_str_equal (name, "graph.zoom-in"))
    owb_graph_view_zoom_in (self);
  else if (g_str_equal (name, "graph.zoom-out"))
    owb_graph_view_zoom_out (self);
  else if (g_str_equal (name, "graph.zoom-fit"))
    owb_graph_view_zoom_to_fit (self);
  else if (g_str_equal (name, "graph.find-next"))
    owb_graph_view_find_next (self);
  else if (g_str_equal (name, "graph.find-previous"))
    owb_graph_view_find_previous (self);
}

/* ---- GtkWidget ---- */

static void
owb_graph_view_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  /* What was asked before the view had a size, in the order it matters: place, fit, centre. */
  if (self->place_pending)
    place_initially (self);
  if (self->fit_pending)
    fit (self);
  if (self->center_pending)
    {
      self->center_pending = FALSE;
      center_on (self, self->center_x, self->center_y);
    }
  if (self->branch_popover)
    gtk_popover_present (GTK_POPOVER (self->branch_popover));
  g_signal_emit (self, signals[VIEWPORT_CHANGED], 0);
}

static void
owb_graph_view_map (GtkWidget *widget)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  GTK_WIDGET_CLASS (owb_graph_view_parent_class)->map (widget);
  if (self->build_deferred)
    start_build (self);
}

static void
owb_graph_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                        int *natural, int *minimum_baseline, int *natural_baseline)
{
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 160 : 120;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 640 : 480;
}

static void
owb_graph_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  GTK_WIDGET_CLASS (owb_graph_view_parent_class)->css_changed (widget, change);
  self->palette_valid = FALSE;
  if (self->tiles)
    invalidate_tiles (self);
}

static void
owb_graph_view_dispose (GObject *object)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (object);
  g_cancellable_cancel (self->cancellable);
  self->build_serial++;
  g_clear_handle_id (&self->progress_source, g_source_remove);
  self->scene = NULL;
  if (self->frames)
    g_ptr_array_set_size (self->frames, 0);
  g_clear_pointer (&self->owner, owner_hold_unref);
  if (self->tiles)
    g_hash_table_remove_all (self->tiles);
  g_clear_pointer (&self->branch_popover, gtk_widget_unparent);
  G_OBJECT_CLASS (owb_graph_view_parent_class)->dispose (object);
}

static void
owb_graph_view_finalize (GObject *object)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (object);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->frames, g_ptr_array_unref);
  g_clear_pointer (&self->tiles, g_hash_table_unref);
  g_clear_pointer (&self->overview, _owb_overview_free);
  g_clear_pointer (&self->labels, _owb_edge_labels_free);
  g_clear_object (&self->layout);
  g_clear_pointer (&self->selected_tensor, g_free);
  g_clear_pointer (&self->default_layer, owb_graph_layer_unref);
  g_clear_pointer (&self->highlight, g_hash_table_unref);
  g_clear_pointer (&self->layer, owb_graph_layer_unref);
  g_clear_pointer (&self->matches, g_ptr_array_unref);
  g_clear_pointer (&self->find_query, g_free);
  g_clear_pointer (&self->ov_highlight, g_array_unref);
  g_clear_pointer (&self->ov_matches, g_array_unref);
  g_clear_pointer (&self->ov_edges, g_array_unref);
  /* Last: running builds hold a reference on the view, so no thread measures with these now. */
  metrics_free (self->metrics);
  G_OBJECT_CLASS (owb_graph_view_parent_class)->finalize (object);
}

static void
owb_graph_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (object);
  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, self->busy);
      break;
    case PROP_ZOOM:
      g_value_set_double (value, self->zoom);
      break;
    case PROP_MATCH_INDEX:
      g_value_set_int (value, self->match_index);
      break;
    case PROP_N_MATCHES:
      g_value_set_uint (value, owb_graph_view_get_n_matches (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
owb_graph_view_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (object);
  switch (prop_id)
    {
    case PROP_ZOOM:
      owb_graph_view_set_zoom (self, g_value_get_double (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
owb_graph_view_class_init (OwbGraphViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = owb_graph_view_dispose;
  object_class->finalize = owb_graph_view_finalize;
  object_class->get_property = owb_graph_view_get_property;
  object_class->set_property = owb_graph_view_set_property;
  widget_class->snapshot = owb_graph_view_snapshot;
  widget_class->measure = owb_graph_view_measure;
  widget_class->map = owb_graph_view_map;
  widget_class->size_allocate = owb_graph_view_size_allocate;
  widget_class->css_changed = owb_graph_view_css_changed;
  widget_class->query_tooltip = query_tooltip;

  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_ZOOM] = g_param_spec_double ("zoom", NULL, NULL, MIN_ZOOM, MAX_ZOOM, 1.0,
                                               G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_MATCH_INDEX] = g_param_spec_int ("match-index", NULL, NULL, -1, G_MAXINT, -1,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_N_MATCHES] = g_param_spec_uint ("n-matches", NULL, NULL, 0, G_MAXUINT, 0,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[LAYOUT_PROGRESS] = g_signal_new ("layout-progress", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                           NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE, G_TYPE_STRING);
  signals[LAYOUT_FAILED] = g_signal_new ("layout-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
  signals[SELECTION_CHANGED] = g_signal_new ("selection-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                             NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[PATH_CHANGED] = g_signal_new ("path-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SCENE_CHANGED] = g_signal_new ("scene-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[VIEWPORT_CHANGED] = g_signal_new ("viewport-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                            NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_install_action (widget_class, "graph.zoom-in", NULL, view_action);
  gtk_widget_class_install_action (widget_class, "graph.zoom-out", NULL, view_action);
  gtk_widget_class_install_action (widget_class, "graph.zoom-fit", NULL, view_action);
  gtk_widget_class_install_action (widget_class, "graph.find-next", NULL, view_action);
  gtk_widget_class_install_action (widget_class, "graph.find-previous", NULL, view_action);

  const guint zoom_in_keys[] = { GDK_KEY_plus, GDK_KEY_equal, GDK_KEY_KP_Add };
  const guint zoom_out_keys[] = { GDK_KEY_minus, GDK_KEY_KP_Subtract };
  const guint fit_keys[] = { GDK_KEY_0, GDK_KEY_KP_0 };
  for (guint i = 0; i < G_N_ELEMENTS (zoom_in_keys); i++)
    gtk_widget_class_add_binding_action (widget_class, zoom_in_keys[i], 0, "graph.zoom-in", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (zoom_out_keys); i++)
    gtk_widget_class_add_binding_action (widget_class, zoom_out_keys[i], 0, "graph.zoom-out", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (fit_keys); i++)
    gtk_widget_class_add_binding_action (widget_class, fit_keys[i], 0, "graph.zoom-fit", NULL);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Left, 0, pan_key, "(dd)", -1.0, 0.0);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Right, 0, pan_key, "(dd)", 1.0, 0.0);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Up, 0, pan_key, "(dd)", 0.0, -1.0);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Down, 0, pan_key, "(dd)", 0.0, 1.0);

  gtk_widget_class_set_css_name (widget_class, "graphview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
owb_graph_view_init (OwbGraphView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  self->zoom = 1.0;
  self->draw_zoom = 1.0;
  self->match_index = -1;
  self->ov_selected = self->ov_current = self->ov_line_node = -1;
  self->frames = g_ptr_array_new_with_free_func (frame_free);
  self->tiles = g_hash_table_new_full (tile_key_hash, tile_key_equal, g_free, tile_free);
  self->ov_highlight = g_array_new (FALSE, FALSE, sizeof (int));
  self->ov_matches = g_array_new (FALSE, FALSE, sizeof (int));
  self->ov_edges = g_array_new (FALSE, FALSE, sizeof (guint));
  self->default_layer = owb_graph_layer_providers_new ();
  self->layout = gtk_widget_create_pango_layout (widget, NULL);
  pango_layout_set_ellipsize (self->layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_single_paragraph_mode (self->layout, TRUE);

  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_has_tooltip (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);
  gtk_widget_set_hexpand (widget, TRUE);
  gtk_widget_set_vexpand (widget, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Graph"), -1);
  gtk_widget_action_set_enabled (widget, "graph.find-next", FALSE);
  gtk_widget_action_set_enabled (widget, "graph.find-previous", FALSE);

  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (click_pressed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (click));

  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));

  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (scrolled), self);
  gtk_widget_add_controller (widget, scroll);

  GtkEventController *pointer = gtk_event_controller_motion_new ();
  g_signal_connect (pointer, "motion", G_CALLBACK (motion), self);
  g_signal_connect (pointer, "enter", G_CALLBACK (motion), self);
  g_signal_connect (pointer, "leave", G_CALLBACK (leave), self);
  gtk_widget_add_controller (widget, pointer);

  GtkGesture *zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (zoom_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (zoom_scale_changed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (zoom));
}

GtkWidget *
owb_graph_view_new (void)
{
  return g_object_new (OWB_TYPE_GRAPH_VIEW, NULL);
}
