/* owb-graph-view-export.c: the whole graph of the canvas, not just what is on screen, as a texture,
 * a PNG or an SVG. */
#include "owb-graph-view-private.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

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
  _owb_graph_view_draw_region (self, snapshot, self->scene,
                               &GRAPHENE_RECT_INIT (-margin, -margin, sw + 2 * margin, sh + 2 * margin), scale);
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
  _owb_graph_view_ensure_palette (self);
  _owb_graph_view_ensure_metrics (self);
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
