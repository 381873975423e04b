/* owb-graph-view-labels.c: placing the edge labels of a scene (see the header). */
#include "owb-graph-view-labels.h"

#include <math.h>

#define LABEL_GAP 5.0     /* scene units between an edge and its label */
#define LABEL_CELL 128.0  /* scene units: the grid that placing labels checks for overlaps on */

typedef struct {
  double x, y, width;
} LabelBox;

struct _OwbEdgeLabels {
  double *x, *y;   /* by edge: the label's top-left corner; x NAN for none */
  double reach;
};

/* The midpoint of an edge's middle segment, where its label goes. */
static void
edge_label_point (const OwbSceneEdge *edge, double *x, double *y)
{
  guint seg = (edge->n_points - 2) / 2;
  const double *a = edge->points + 2 * seg, *b = a + 2;
  *x = (a[0] + b[0]) / 2;
  *y = (a[1] + b[1]) / 2;
}

static gint64
cell_key (int cx, int cy)
{
  return ((gint64) cx << 32) ^ (gint64) (guint32) cy;
}

/* The keys of the grid cells a label box of height `line` covers, into keys (emptied first). */
static void
box_cell_keys (const LabelBox *box, double line, GArray *keys)
{
  g_array_set_size (keys, 0);
  int cx0 = (int) floor (box->x / LABEL_CELL), cx1 = (int) floor ((box->x + box->width) / LABEL_CELL);
  int cy0 = (int) floor (box->y / LABEL_CELL), cy1 = (int) floor ((box->y + line) / LABEL_CELL);
  for (int cy = cy0; cy <= cy1; cy++)
    for (int cx = cx0; cx <= cx1; cx++)
      {
        gint64 key = cell_key (cx, cy);
        g_array_append_val (keys, key);
      }
}

/* keys: scratch for box_cell_keys. */
static gboolean
label_free (GHashTable *grid, GArray *boxes, const LabelBox *box, double line, GArray *keys)
{
  box_cell_keys (box, line, keys);
  for (guint k = 0; k < keys->len; k++)
    {
      GArray *cell = g_hash_table_lookup (grid, &g_array_index (keys, gint64, k));
      for (guint i = 0; cell && i < cell->len; i++)
        {
          const LabelBox *other = &g_array_index (boxes, LabelBox, g_array_index (cell, guint, i));
          if (box->x < other->x + other->width && other->x < box->x + box->width && box->y < other->y + line &&
              other->y < box->y + line)
            return FALSE;
        }
    }
  return TRUE;
}

static void
label_add (GHashTable *grid, GArray *boxes, const LabelBox *box, double line, GArray *keys)
{
  guint index = boxes->len;
  g_array_append_val (boxes, *box);
  box_cell_keys (box, line, keys);
  for (guint k = 0; k < keys->len; k++)
    {
      const gint64 *key = &g_array_index (keys, gint64, k);
      GArray *cell = g_hash_table_lookup (grid, key);
      if (!cell)
        {
          cell = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (grid, g_memdup2 (key, sizeof *key), cell);
        }
      g_array_append_val (cell, index);
    }
}

OwbEdgeLabels *
_owb_edge_labels_new (const OwbGraphScene *scene, OwbSceneMeasureFunc measure, gpointer measure_data,
                      double line_height)
{
  guint n = owb_graph_scene_get_n_edges (scene);
  OwbEdgeLabels *labels = g_new0 (OwbEdgeLabels, 1);
  labels->x = g_new (double, MAX (n, 1));
  labels->y = g_new (double, MAX (n, 1));
  double line = line_height;
  g_autoptr (GHashTable) grid = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                                       (GDestroyNotify) g_array_unref);
  g_autoptr (GArray) boxes = g_array_new (FALSE, FALSE, sizeof (LabelBox));
  g_autoptr (GArray) keys = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GHashTable) placed = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; i < n; i++)
    {
      const OwbSceneEdge *edge = owb_graph_scene_get_edge (scene, i);
      labels->x[i] = NAN;
      if (!edge->label || edge->n_points < 2)
        continue;
      double x, y;
      edge_label_point (edge, &x, &y);
      gint64 key = ((gint64) lround (x) << 32) ^ (gint64) (guint32) lround (y);
      if (g_hash_table_contains (placed, &key))
        continue;
      g_hash_table_add (placed, g_memdup2 (&key, sizeof key));
      double width = measure (edge->label, OWB_SCENE_FONT_LABEL, measure_data);
      labels->reach = MAX (labels->reach, width + LABEL_GAP);
      /* On the side the edge heads to (edges leaving a box to both sides label outwards), else on
       * the other side where that overlaps a label placed before (edges meeting at a box), else a
       * line above or below. */
      guint seg = (edge->n_points - 2) / 2;
      gboolean leftwards = edge->points[2 * seg + 2] - edge->points[2 * seg] < -0.5;
      double sides[2] = { leftwards ? x - LABEL_GAP - width : x + LABEL_GAP,
                          leftwards ? x + LABEL_GAP : x - LABEL_GAP - width };
      double rows[3] = { y - line / 2, y - 1.5 * line, y + line / 2 };
      LabelBox box = { sides[0], rows[0], width };
      for (guint c = 0; c < 6; c++)
        {
          LabelBox candidate = { sides[c % 2], rows[c / 2], width };
          if (label_free (grid, boxes, &candidate, line, keys))
            {
              box = candidate;
              break;
            }
        }
      label_add (grid, boxes, &box, line, keys);
      labels->x[i] = box.x;
      labels->y[i] = box.y;
    }
  return labels;
}

void
_owb_edge_labels_free (OwbEdgeLabels *labels)
{
  if (labels == NULL)
    return;
  g_free (labels->x);
  g_free (labels->y);
  g_free (labels);
}

double
_owb_edge_labels_get_reach (const OwbEdgeLabels *labels)
{
  return labels->reach;
}

gboolean
_owb_edge_labels_get (const OwbEdgeLabels *labels, guint index, double *x, double *y)
{
  if (isnan (labels->x[index]))
    return FALSE;
  *x = labels->x[index];
  *y = labels->y[index];
  return TRUE;
}
