/* owb-graph-view-draw.c: how the graph canvas draws: text metrics measured once for the layout
 * thread, the palette from the theme, the level of detail of a zoom, and a region of the scene
 * (group frames, boxes, edges, edge labels) into a snapshot. The tiles and the export draw through
 * _owb_graph_view_draw_region. */
#include "owb-graph-view-private.h"

#include <math.h>
#include <string.h>

/* Glyph widths measured once on the main thread, so the scene can measure text in its thread. */
/* Characters outside ASCII that the scene's text uses a lot ("3×3", "⟨64×3⟩", "a · b", "…"),
 * measured like ASCII; other ones count as an average glyph, or two for wide (CJK) ones. */
static const char *const extra_chars[] = { "×", "⟨", "⟩", "·", "…", "›", "→", "—" };
#define N_EXTRA G_N_ELEMENTS (extra_chars)

struct _Metrics {
  double widths[3][128];
  double extra[3][N_EXTRA];
  double wide[3];
  double average[3];
  PangoFontDescription *fonts[3];
  double title_height, line_height;
};

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

void
_owb_graph_view_metrics_free (Metrics *metrics)
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

void
_owb_graph_view_ensure_metrics (OwbGraphView *self)
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
void
_owb_graph_view_ensure_palette (OwbGraphView *self)
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

Lod
_owb_graph_view_lod_for_zoom (double zoom)
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

void
_owb_graph_view_append_outline (GtkSnapshot *snapshot, const graphene_rect_t *rect, double radius, double width,
                                const GdkRGBA *color)
{
  GskRoundedRect outline;
  gsk_rounded_rect_init_from_rect (&outline, rect, (float) radius);
  float widths[4] = { width, width, width, width };
  GdkRGBA colors[4] = { *color, *color, *color, *color };
  gtk_snapshot_append_border (snapshot, &outline, widths, colors);
}

void
_owb_graph_view_append_rounded_fill (GtkSnapshot *snapshot, const graphene_rect_t *rect, double radius, const GdkRGBA *color)
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
  _owb_graph_view_append_outline (snapshot, &GRAPHENE_RECT_INIT (x, y, size, size), 2, border, color);
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
  _owb_graph_view_append_rounded_fill (snapshot, &rect, RADIUS * 1.5, &p->group_fill);
  _owb_graph_view_append_outline (snapshot, &rect, RADIUS * 1.5, 1, &p->group_border);
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
double
_owb_graph_view_box_text_top (const OwbGraphView *self, const OwbSceneNode *node)
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
GdkRGBA
_owb_graph_view_plain_color (const OwbGraphView *self, const OwbSceneNode *node)
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

  _owb_graph_view_append_rounded_fill (snapshot, &rect, radius, &fill);
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
      _owb_graph_view_append_outline (snapshot, &inner, radius - 2, 1, &p->group_border);
    }
  _owb_graph_view_append_outline (snapshot, &rect, radius, node->kind == OWB_SCENE_GROUP ? 1.5 : 1, &p->box_border);

  double pad = self->style.padding;
  /* The scene sized the box as text + 2 × padding; the stripe sits inside the left padding. */
  double left = node->x + pad + (node->kind == OWB_SCENE_OP ? 1 : 0);
  double text_width = node->x + node->width - pad + 2 - left;
  double y = _owb_graph_view_box_text_top (self, node);
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
      /* The badge goes right of the title when both _owb_graph_view_fit; else it is left out (the colour says it). */
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
void
_owb_graph_view_append_edges (GtkSnapshot *snapshot, OwbGraphScene *scene, const graphene_rect_t *pixels,
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
      GdkRGBA color = _owb_graph_view_plain_color (self, owb_graph_scene_get_node (scene, g_array_index (nodes, guint, i)));
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
void
_owb_graph_view_draw_region (OwbGraphView *self, GtkSnapshot *snapshot, OwbGraphScene *scene, const graphene_rect_t *rect,
                             double zoom)
{
  Lod lod = _owb_graph_view_lod_for_zoom (zoom);  /* zoom: the pixels per scene unit it will be seen at */
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
  _owb_graph_view_append_edges (snapshot, scene, &pixels, (guint *) edges->data, edges->len, lod, zoom, 0, 0,
                                &self->palette.edge, 1.0);
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
