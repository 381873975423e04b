/* owb-graph-view-overview.c: the scene as a density image at halving sizes (see the header). */
#include "owb-graph-view-overview.h"

#include <math.h>
#include <string.h>

/* A box covering any part of a pixel shows at least this much of its colour: far out a box is a
 * fraction of a pixel, and a graph drawn at its true density would vanish. */
#define MIN_BOX_ALPHA 0.45
#define EDGE_ALPHA 0.55

typedef struct {
  GdkTexture *texture;
  int width, height;
  double extent_x, extent_y;  /* scene units the image spans */
} Level;

struct _OwbOverview {
  GArray *levels;  /* of Level, largest first */
  double scale;
};

typedef struct {
  int width, height;
  float *cover;    /* box coverage per pixel, 0.. */
  float *rgb;      /* coverage-weighted box colour, 3 per pixel */
  float *edge;     /* edge coverage per pixel */
} Raster;

static void
add_box (Raster *r, double x0, double y0, double x1, double y1, const GdkRGBA *color)
{
  x0 = MAX (x0, 0);
  y0 = MAX (y0, 0);
  x1 = MIN (x1, r->width);
  y1 = MIN (y1, r->height);
  if (x1 <= x0 || y1 <= y0)
    return;
  int px0 = (int) x0, py0 = (int) y0, px1 = (int) ceil (x1), py1 = (int) ceil (y1);
  for (int py = py0; py < py1; py++)
    {
      double h = MIN (y1, py + 1.0) - MAX (y0, (double) py);
      for (int px = px0; px < px1; px++)
        {
          double w = MIN (x1, px + 1.0) - MAX (x0, (double) px);
          float a = (float) (w * h);
          gsize i = (gsize) py * r->width + px;
          r->cover[i] += a;
          r->rgb[3 * i] += a * (float) color->red;
          r->rgb[3 * i + 1] += a * (float) color->green;
          r->rgb[3 * i + 2] += a * (float) color->blue;
        }
    }
}

/* A segment in pixels, a pixel per step along its longer axis. */
static void
add_segment (Raster *r, double x0, double y0, double x1, double y1)
{
  double dx = x1 - x0, dy = y1 - y0;
  int steps = (int) ceil (MAX (fabs (dx), fabs (dy)));
  steps = MAX (steps, 1);
  for (int s = 0; s <= steps; s++)
    {
      double t = s / (double) steps;
      int px = (int) (x0 + dx * t), py = (int) (y0 + dy * t);
      if (px >= 0 && py >= 0 && px < r->width && py < r->height)
        r->edge[(gsize) py * r->width + px] = 1;
    }
}

/* Premultiplied RGBA: edges under boxes. */
static guchar *
compose (const Raster *r, const GdkRGBA *edge_color)
{
  gsize n = (gsize) r->width * r->height;
  guchar *pixels = g_malloc (n * 4);
  for (gsize i = 0; i < n; i++)
    {
      double alpha = r->edge[i] > 0 ? EDGE_ALPHA * edge_color->alpha : 0;
      double red = edge_color->red * alpha, green = edge_color->green * alpha, blue = edge_color->blue * alpha;
      if (r->cover[i] > 0)
        {
          double c = r->cover[i];
          double a = MIN (1.0, MIN_BOX_ALPHA + (1 - MIN_BOX_ALPHA) * c);
          red = r->rgb[3 * i] / c * a + red * (1 - a);
          green = r->rgb[3 * i + 1] / c * a + green * (1 - a);
          blue = r->rgb[3 * i + 2] / c * a + blue * (1 - a);
          alpha = a + alpha * (1 - a);
        }
      pixels[4 * i] = (guchar) lround (CLAMP (red, 0, 1) * 255);
      pixels[4 * i + 1] = (guchar) lround (CLAMP (green, 0, 1) * 255);
      pixels[4 * i + 2] = (guchar) lround (CLAMP (blue, 0, 1) * 255);
      pixels[4 * i + 3] = (guchar) lround (CLAMP (alpha, 0, 1) * 255);
    }
  return pixels;
}

static GdkTexture *
texture_take (guchar *pixels, int width, int height)
{
  g_autoptr (GBytes) bytes = g_bytes_new_take (pixels, (gsize) width * height * 4);
  return gdk_memory_texture_new (width, height, GDK_MEMORY_R8G8B8A8_PREMULTIPLIED, bytes, (gsize) width * 4);
}

/* Half the size, each pixel the mean of the (up to) four below it (premultiplied, so means are
 * right), except that what covers part of a pixel keeps MIN_BOX_ALPHA of its colour there, as at
 * the largest size: a column of boxes a pixel wide would otherwise fade out level by level. */
static guchar *
halve (const guchar *src, int width, int height, int *out_width, int *out_height)
{
  int w = MAX (1, (width + 1) / 2), h = MAX (1, (height + 1) / 2);
  guchar *dst = g_malloc ((gsize) w * h * 4);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        guint sum[4] = { 0 }, n_covered = 0;
        for (int sy = 2 * y; sy < 2 * y + 2 && sy < height; sy++)
          for (int sx = 2 * x; sx < 2 * x + 2 && sx < width; sx++)
            {
              const guchar *p = src + ((gsize) sy * width + sx) * 4;
              for (int c = 0; c < 4; c++)
                sum[c] += p[c];
              n_covered += p[3] > 0;
            }
        guchar *out = dst + ((gsize) y * w + x) * 4;
        double alpha = sum[3] / 4.0, covered_alpha = n_covered ? sum[3] / (double) n_covered : 0;
        double kept = MAX (alpha, MIN (covered_alpha, MIN_BOX_ALPHA * 255));
        /* The covered pixels' mean colour, at the alpha kept. */
        double scale = covered_alpha > 0 ? kept / covered_alpha / n_covered : 0;
        for (int c = 0; c < 3; c++)
          out[c] = (guchar) MIN (255.0, lround (sum[c] * scale));
        out[3] = (guchar) MIN (255.0, lround (kept));
      }
  *out_width = w;
  *out_height = h;
  return dst;
}

OwbOverview *
_owb_overview_new (const OwbGraphScene *scene, double max_scale, double max_pixels, int max_side,
                   OwbOverviewColorFunc color, gpointer user_data, const GdkRGBA *edge_color)
{
  double sw, sh;
  owb_graph_scene_get_size (scene, &sw, &sh);
  sw = MAX (sw, 1);
  sh = MAX (sh, 1);
  double scale = MIN (max_scale, MIN (max_side / sw, max_side / sh));
  scale = MIN (scale, sqrt (max_pixels / (sw * sh)));
  Raster r = { MAX (1, (int) ceil (sw * scale)), MAX (1, (int) ceil (sh * scale)) };
  gsize n = (gsize) r.width * r.height;
  r.cover = g_new0 (float, n);
  r.rgb = g_new0 (float, 3 * n);
  r.edge = g_new0 (float, n);

  for (guint i = 0, n_edges = owb_graph_scene_get_n_edges (scene); i < n_edges; i++)
    {
      const OwbSceneEdge *e = owb_graph_scene_get_edge (scene, i);
      for (guint p = 1; p < e->n_points; p++)
        add_segment (&r, e->points[2 * p - 2] * scale, e->points[2 * p - 1] * scale, e->points[2 * p] * scale,
                     e->points[2 * p + 1] * scale);
    }
  for (guint i = 0, n_nodes = owb_graph_scene_get_n_nodes (scene); i < n_nodes; i++)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (scene, i);
      /* An expanded group is a frame around boxes that are drawn themselves. */
      if (node->kind == OWB_SCENE_GROUP && node->expanded)
        continue;
      GdkRGBA rgba = color (node, user_data);
      add_box (&r, node->x * scale, node->y * scale, (node->x + node->width) * scale,
               (node->y + node->height) * scale, &rgba);
    }

  OwbOverview *overview = g_new0 (OwbOverview, 1);
  overview->scale = scale;
  overview->levels = g_array_new (FALSE, FALSE, sizeof (Level));
  guchar *pixels = compose (&r, edge_color);
  g_free (r.cover);
  g_free (r.rgb);
  g_free (r.edge);

  int width = r.width, height = r.height;
  for (guint k = 0;; k++)
    {
      Level level = { NULL, width, height, width * exp2 (k) / scale, height * exp2 (k) / scale };
      gboolean last = width <= 1 && height <= 1;
      guchar *next = NULL;
      int next_width = 0, next_height = 0;
      if (!last)
        next = halve (pixels, width, height, &next_width, &next_height);
      level.texture = texture_take (pixels, width, height);
      g_array_append_val (overview->levels, level);
      if (last)
        break;
      pixels = next;
      width = next_width;
      height = next_height;
    }
  return overview;
}

void
_owb_overview_free (OwbOverview *overview)
{
  if (overview == NULL)
    return;
  for (guint k = 0; k < overview->levels->len; k++)
    g_object_unref (g_array_index (overview->levels, Level, k).texture);
  g_array_unref (overview->levels);
  g_free (overview);
}

double
_owb_overview_get_scale (const OwbOverview *overview)
{
  return overview->scale;
}

GdkTexture *
_owb_overview_get_texture (const OwbOverview *overview, int width, int height, double *extent_x, double *extent_y)
{
  guint k = 0;
  while (k + 1 < overview->levels->len)
    {
      const Level *next = &g_array_index (overview->levels, Level, k + 1);
      if (next->width < width && next->height < height)
        break;
      k++;
    }
  const Level *level = &g_array_index (overview->levels, Level, k);
  if (extent_x)
    *extent_x = level->extent_x;
  if (extent_y)
    *extent_y = level->extent_y;
  return level->texture;
}

void
_owb_overview_append (const OwbOverview *overview, GtkSnapshot *snapshot, double zoom, double x, double y)
{
  /* The smallest level still at least as fine as the screen: scaled down by less than 2. */
  guint k = 0;
  while (k + 1 < overview->levels->len && overview->scale / exp2 (k + 1) >= zoom)
    k++;
  const Level *level = &g_array_index (overview->levels, Level, k);
  /* A graph thinner than a pixel is drawn a pixel wide, not as a faint smear. */
  double width = level->extent_x * zoom, height = level->extent_y * zoom;
  graphene_rect_t bounds = GRAPHENE_RECT_INIT ((float) (x - MAX (0, 1 - width) / 2), (float) (y - MAX (0, 1 - height) / 2),
                                               (float) MAX (width, 1), (float) MAX (height, 1));
  gtk_snapshot_append_texture (snapshot, level->texture, &bounds);
}
