/* owb-graph-view-tiles.c: what the graph canvas puts on screen each frame: render nodes cached per
 * tile (512 pixels of a half-octave zoom bucket) and replayed under one transform, the overlays
 * (selection, highlight, matches) drawn anew over them, and far out the scene's overview image. */
#include "owb-graph-view-private.h"

#include <math.h>
#include <string.h>

typedef struct {
  int bucket;
  int tx, ty;
} TileKey;

/* ---- zoom buckets ---- */

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

/* ---- the tile cache ---- */

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

GHashTable *
_owb_graph_view_tiles_new (void)
{
  return g_hash_table_new_full (tile_key_hash, tile_key_equal, g_free, tile_free);
}

void
_owb_graph_view_invalidate_tiles (OwbGraphView *self)
{
  g_hash_table_remove_all (self->tiles);
  g_clear_pointer (&self->overview, _owb_overview_free);
  self->labels_scene = NULL;
  self->overlays_valid = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
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
  _owb_graph_view_draw_region (self, snapshot, self->scene, &rect, bucket_zoom (bucket));
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);  /* NULL for an empty tile: cached too */
  g_hash_table_insert (self->tiles, g_memdup2 (&key, sizeof key), node);
  return node;
}

/* ---- overlays ---- */

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
gboolean
_owb_graph_view_match_on_screen (OwbGraphView *self, const OwbSceneMatch *match)
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

void
_owb_graph_view_ensure_overlays (OwbGraphView *self)
{
  if (self->overlays_valid || !self->scene)
    return;
  self->overlays_valid = TRUE;
  g_array_set_size (self->ov_highlight, 0);
  g_array_set_size (self->ov_matches, 0);
  g_array_set_size (self->ov_edges, 0);
  self->ov_selected = self->selected_node ? owb_graph_scene_find_op (self->scene, self->selected_node) : -1;
  if (self->selected_node && self->ov_selected < 0)
    self->ov_selected = _owb_graph_view_reader_box (self, self->selected_node); /* left out of a compact scene */
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
        if (!_owb_graph_view_match_on_screen (self, match))
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
    _owb_graph_view_append_rounded_fill (snapshot, &rect, radius, fill);
  _owb_graph_view_append_outline (snapshot, &rect, radius, w, color);
}

/* Drawn each frame over the cached tiles, into a snapshot in widget pixels. */
static void
draw_overlays (OwbGraphView *self, GtkSnapshot *snapshot, const graphene_rect_t *view)
{
  const Palette *p = &self->palette;
  _owb_graph_view_ensure_overlays (self);
  if (self->ov_edges->len)
    _owb_graph_view_append_edges (snapshot, self->scene,
                                  &GRAPHENE_RECT_INIT (0, 0, view->size.width * self->zoom,
                                                       view->size.height * self->zoom),
                                  (guint *) self->ov_edges->data, self->ov_edges->len,
                                  _owb_graph_view_lod_for_zoom (self->zoom) == LOD_PLAIN ? LOD_PLAIN : LOD_FULL,
                                  self->zoom, self->scroll_x, self->scroll_y, &p->accent, 2.5);
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
            double y = _owb_graph_view_box_text_top (self, node) + self->style.title_height +
                       (node->subtitle && *node->subtitle ? self->style.line_height : 0) + i * self->style.line_height;
            graphene_rect_t rect = GRAPHENE_RECT_INIT (node->x + STRIPE + 2, y, node->width - STRIPE - 4, self->style.line_height);
            _owb_graph_view_append_rounded_fill (snapshot, &rect, 3, &p->accent_fill);
            _owb_graph_view_append_outline (snapshot, &rect, 3, 1.5 / self->zoom, &p->accent);
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

/* ---- far out: the overview image ---- */

static GdkRGBA
overview_color (const OwbSceneNode *node, gpointer user_data)
{
  OwbGraphView *self = user_data;
  return _owb_graph_view_plain_color (self, node);
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
  _owb_graph_view_ensure_palette (self);
  ensure_overview (self);
  return _owb_overview_get_texture (self->overview, width, height, extent_width, extent_height);
}

gboolean
owb_graph_view_get_drawing_overview (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), FALSE);
  _owb_graph_view_ensure_palette (self);
  return use_overview (self, self->zoom);
}

/* ---- the snapshot ---- */

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

void
_owb_graph_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  _owb_graph_view_ensure_palette (self);
  _owb_graph_view_ensure_metrics (self);
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
        _owb_graph_view_append_outline (snapshot, &GRAPHENE_RECT_INIT (1, 1, width - 2, height - 2), 4, 2, &self->palette.accent);
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
    _owb_graph_view_append_outline (snapshot, &GRAPHENE_RECT_INIT (1, 1, width - 2, height - 2), 4, 2, &self->palette.accent);
  note_first_draw (self);
}
