/* owb-scene-svg.c: provider colours shared by the canvas, its legend and the export, and the
 * scene written as a standalone SVG document. */
#include "owb-graph-scene-private.h"

#include <math.h>
#include <string.h>

/* Okabe–Ito colours: told apart with the common colour-vision deficiencies. */
static const double palette[][3] = {
  { 0.000, 0.447, 0.698 }, /* blue: cpu */
  { 0.000, 0.620, 0.451 }, /* bluish green: cuda */
  { 0.800, 0.475, 0.655 }, /* reddish purple: dnnl */
  { 0.902, 0.624, 0.000 }, /* orange */
  { 0.337, 0.706, 0.914 }, /* sky blue */
  { 0.835, 0.369, 0.000 }, /* vermillion */
  { 0.941, 0.894, 0.259 }, /* yellow */
};

void
owb_scene_provider_color (const char *provider, double rgb[3])
{
  const double *c;
  static const double grey[3] = { 0.60, 0.60, 0.60 };
  if (provider == NULL || provider[0] == '\0')
    c = grey;
  else if (g_ascii_strcasecmp (provider, "cpu") == 0)
    c = palette[0];
  else if (g_ascii_strcasecmp (provider, "cuda") == 0)
    c = palette[1];
  else if (g_ascii_strcasecmp (provider, "dnnl") == 0)
    c = palette[2];
  else
    c = palette[3 + g_str_hash (provider) % (G_N_ELEMENTS (palette) - 3)];
  memcpy (rgb, c, 3 * sizeof (double));
}

static void
num (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  /* Never the locale's decimal comma: SVG numbers are C numbers. */
  g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.1f", v));
}

static void
attr_num (GString *s, const char *name, double v)
{
  g_string_append_printf (s, " %s=\"", name);
  num (s, v);
  g_string_append_c (s, '"');
}

static void
color (GString *s, const double rgb[3])
{
  g_string_append_printf (s, "#%02x%02x%02x", (int) lround (rgb[0] * 255), (int) lround (rgb[1] * 255),
                          (int) lround (rgb[2] * 255));
}

/* Text cut with "…" to fit `width` scene units, as the canvas ellipsizes it. */
static char *
fit_text (const OwbSceneStyle *style, const char *text, OwbSceneFont font, double width)
{
  double full = _owb_scene_measure (style, text, font);
  if (full <= width)
    return g_strdup (text);
  glong len = g_utf8_strlen (text, -1);
  /* Start from the proportional cut, so that a long name costs a few measurements, not one per
   * character. */
  glong n = MIN (len, (glong) (len * MAX (width, 0) / full) + 1);
  while (n > 0)
    {
      n--;
      g_autofree char *cut = g_utf8_substring (text, 0, n);
      char *candidate = g_strconcat (cut, "…", NULL);
      if (_owb_scene_measure (style, candidate, font) <= width || n == 0)
        return candidate;
      g_free (candidate);
    }
  return g_strdup ("…");
}

static void
text (GString *s, const OwbSceneStyle *style, double x, double baseline, const char *content,
      OwbSceneFont font, double width, const char *klass)
{
  if (content == NULL || content[0] == '\0')
    return;
  g_autofree char *fitted = fit_text (style, content, font, width);
  g_autofree char *escaped = g_markup_escape_text (fitted, -1);
  g_string_append (s, "<text");
  attr_num (s, "x", x);
  attr_num (s, "y", baseline);
  g_string_append_printf (s, " class=\"%s\">%s</text>\n", klass, escaped);
}

static void
rect (GString *s, double x, double y, double w, double h, double radius, const char *klass)
{
  g_string_append (s, "<rect");
  attr_num (s, "x", x);
  attr_num (s, "y", y);
  attr_num (s, "width", w);
  attr_num (s, "height", h);
  if (radius > 0)
    attr_num (s, "rx", radius);
  g_string_append_printf (s, " class=\"%s\"/>\n", klass);
}

static void
write_box (GString *s, const OwbSceneStyle *st, const OwbSceneNode *n)
{
  double inner = n->width - 2 * st->padding;
  double x = n->x + st->padding;
  double row = n->y + st->padding;

  if (n->kind == OWB_SCENE_GROUP && n->expanded)
    {
      rect (s, n->x, n->y, n->width, n->height, 6, "frame");
      text (s, st, x, row + st->title_height * 0.75, n->title, OWB_SCENE_FONT_TITLE, inner, "frame-title");
      return;
    }

  const char *klass = n->kind == OWB_SCENE_GROUP ? "group" : n->kind == OWB_SCENE_OP ? "op" : "io";
  g_string_append (s, "<g>");
  if (n->kind == OWB_SCENE_OP && n->node && n->node->name && n->node->name[0])
    {
      g_autofree char *tip = g_markup_escape_text (n->node->name, -1);
      g_string_append_printf (s, "<title>%s</title>", tip);
    }
  g_string_append_c (s, '\n');
  rect (s, n->x, n->y, n->width, n->height, n->kind == OWB_SCENE_OP ? 4 : n->kind == OWB_SCENE_GROUP ? 6 : n->height / 2, klass);
  if (n->kind == OWB_SCENE_OP)
    {
      /* The provider stripe down the left side inside the rounded corners, as on the canvas. */
      double rgb[3];
      owb_scene_provider_color (n->provider, rgb);
      g_string_append (s, "<path d=\"M");
      num (s, n->x + 4);
      g_string_append_c (s, ',');
      num (s, n->y);
      g_string_append (s, " V");
      num (s, n->y + n->height);
      g_string_append (s, " A4,4 0 0 1 ");
      num (s, n->x);
      g_string_append_c (s, ',');
      num (s, n->y + n->height - 4);
      g_string_append (s, " V");
      num (s, n->y + 4);
      g_string_append (s, " A4,4 0 0 1 ");
      num (s, n->x + 4);
      g_string_append_c (s, ',');
      num (s, n->y);
      g_string_append (s, " Z\" fill=\"");
      color (s, rgb);
      g_string_append (s, "\"/>\n");
    }
  text (s, st, x, row + st->title_height * 0.75, n->title, OWB_SCENE_FONT_TITLE, inner, "title");
  row += st->title_height;
  if (n->subtitle && n->subtitle[0])
    {
      text (s, st, x, row + st->line_height * 0.75, n->subtitle, OWB_SCENE_FONT_BODY, inner, "subtitle");
      row += st->line_height;
    }
  for (guint i = 0; i < n->n_lines; i++, row += st->line_height)
    text (s, st, x, row + st->line_height * 0.75, n->lines[i].text, OWB_SCENE_FONT_BODY, inner,
          n->lines[i].tensor ? "line tensor" : "line");
  g_string_append (s, "</g>\n");
}

/* Where an edge's label goes: halfway along its route. */
static void
label_point (const OwbSceneEdge *e, double *x, double *y)
{
  double total = 0;
  for (guint k = 0; k + 1 < e->n_points; k++)
    total += hypot (e->points[2 * k + 2] - e->points[2 * k], e->points[2 * k + 3] - e->points[2 * k + 1]);
  double left = total / 2;
  *x = e->points[0];
  *y = e->points[1];
  for (guint k = 0; k + 1 < e->n_points; k++)
    {
      const double *p = e->points + 2 * k;
      double len = hypot (p[2] - p[0], p[3] - p[1]);
      if (len >= left && len > 0)
        {
          *x = p[0] + (p[2] - p[0]) * left / len;
          *y = p[1] + (p[3] - p[1]) * left / len;
          return;
        }
      left -= len;
      *x = p[2];
      *y = p[3];
    }
}

/* Edge i's label text and where it starts, or NULL for an edge drawn without one. */
static char *
edge_label_at (const OwbGraphScene *scene, guint i, double *x, double *y)
{
  const OwbSceneEdge *e = owb_graph_scene_get_edge (scene, i);
  if (e->label == NULL || e->n_points < 2)
    return NULL;
  label_point (e, x, y);
  if (e->n_tensors > 1)
    return g_strdup_printf ("%s (+%u)", e->label, e->n_tensors - 1);
  return g_strdup (e->label);
}

char *
owb_graph_scene_to_svg (const OwbGraphScene *scene)
{
  const OwbSceneStyle *st = _owb_graph_scene_get_style (scene);
  double width, height, margin = 16;
  owb_graph_scene_get_size (scene, &width, &height);
  guint n_nodes = owb_graph_scene_get_n_nodes (scene), n_edges = owb_graph_scene_get_n_edges (scene);
  /* Labels sit beside their edges and may reach past the boxes: widen the page for them. */
  for (guint i = 0; i < n_edges; i++)
    {
      double x, y;
      g_autofree char *label = edge_label_at (scene, i, &x, &y);
      if (label == NULL)
        continue;
      width = MAX (width, x + 4 + _owb_scene_measure (st, label, OWB_SCENE_FONT_LABEL));
    }
  GString *s = g_string_sized_new (512 + 400 * (gsize) n_nodes + 160 * (gsize) n_edges);

  g_string_append (s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"");
  attr_num (s, "width", width + 2 * margin);
  attr_num (s, "height", height + 2 * margin);
  g_string_append (s, " viewBox=\"");
  num (s, -margin);
  g_string_append_c (s, ' ');
  num (s, -margin);
  g_string_append_c (s, ' ');
  num (s, width + 2 * margin);
  g_string_append_c (s, ' ');
  num (s, height + 2 * margin);
  g_string_append (s, "\">\n");

  g_string_append_printf (s,
    "<style>\n"
    "text { font-family: Cantarell, 'DejaVu Sans', sans-serif; fill: #222; }\n"
    ".title, .frame-title { font-weight: bold; font-size: %.0fpx; }\n"
    ".subtitle, .line { font-size: %.0fpx; }\n"
    ".subtitle { fill: #666; }\n"
    ".tensor { fill: #1c5d99; }\n"
    ".edge-label { font-size: %.0fpx; fill: #555; }\n"
    ".op { fill: #fff; stroke: #8a8a8a; }\n"
    ".io { fill: #f0f0f0; stroke: #8a8a8a; }\n"
    ".group { fill: #eef2f8; stroke: #6a7f9a; stroke-dasharray: 4 2; }\n"
    ".frame { fill: #7f9fc4; fill-opacity: 0.08; stroke: #6a7f9a; }\n"
    ".edge { fill: none; stroke: #777; }\n"
    ".background { fill: #fff; }\n"
    "</style>\n"
    "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" "
    "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#777\"/></marker></defs>\n",
    MAX (8.0, floor (st->title_height * 0.55)), MAX (7.0, floor (st->line_height * 0.69)),
    MAX (7.0, floor (st->line_height * 0.63)));
  rect (s, -margin, -margin, width + 2 * margin, height + 2 * margin, 0, "background");

  /* Frames under edges, edges under boxes, labels on top. */
  for (guint i = 0; i < n_nodes; i++)
    {
      const OwbSceneNode *n = owb_graph_scene_get_node (scene, i);
      if (n->kind == OWB_SCENE_GROUP && n->expanded)
        write_box (s, st, n);
    }
  for (guint i = 0; i < n_edges; i++)
    {
      const OwbSceneEdge *e = owb_graph_scene_get_edge (scene, i);
      if (e->n_points < 2)
        continue;
      g_string_append (s, "<polyline class=\"edge\" points=\"");
      for (guint k = 0; k < e->n_points; k++)
        {
          if (k)
            g_string_append_c (s, ' ');
          num (s, e->points[2 * k]);
          g_string_append_c (s, ',');
          num (s, e->points[2 * k + 1]);
        }
      g_string_append (s, "\"");
      /* Merged values draw a thicker line. */
      attr_num (s, "stroke-width", 1.2 + 0.6 * MIN (e->n_tensors > 0 ? e->n_tensors - 1 : 0, 3));
      g_string_append (s, " marker-end=\"url(#arrow)\"/>\n");
    }
  for (guint i = 0; i < n_nodes; i++)
    {
      const OwbSceneNode *n = owb_graph_scene_get_node (scene, i);
      if (!(n->kind == OWB_SCENE_GROUP && n->expanded))
        write_box (s, st, n);
    }
  for (guint i = 0; i < n_edges; i++)
    {
      double x, y;
      g_autofree char *label = edge_label_at (scene, i, &x, &y);
      if (label == NULL)
        continue;
      g_autofree char *escaped = g_markup_escape_text (label, -1);
      g_string_append (s, "<text class=\"edge-label\"");
      attr_num (s, "x", x + 4);
      attr_num (s, "y", y);
      g_string_append_printf (s, ">%s</text>\n", escaped);
    }
  g_string_append (s, "</svg>\n");
  return g_string_free (s, FALSE);
}
