/* layout-bench.c: times the layered layout on seeded graphs shaped like neural networks (residual
 * blocks, attention blocks with Q/K/V branches, long skips), a flat wide graph and a fan-out, and
 * prints nodes, edges, dummies, time (median and max of N runs), crossings and size.
 * Usage: layout-bench [RUNS] [SWEEPS] [NAME-FILTER] (with OWB_MODELS_DIR set, its .onnx models
 * too), or layout-bench --svg FILE NODES SEED [flat|fan|dense], or layout-bench --svg FILE
 * MODEL.onnx, to look at one layout. A program, not a test. */
#include "owb-layout-private.h"

#include <owb/owb.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  OwbLayoutGraph *g;
  GRand *rand;
} Gen;

static guint
node (Gen *gen)
{
  return owb_layout_graph_add_node (gen->g, g_rand_int_range (gen->rand, 80, 200),
                                    g_rand_int_range (gen->rand, 30, 70));
}

static guint
chain (Gen *gen, guint from, guint len)
{
  for (guint i = 0; i < len; i++)
    {
      guint v = node (gen);
      owb_layout_graph_add_edge (gen->g, from, v);
      from = v;
    }
  return from;
}

/* x → conv → bn → relu → conv → bn → add(x) → relu, sometimes with a projection on the skip. */
static guint
residual_block (Gen *gen, guint x)
{
  guint y = chain (gen, x, 5);
  guint skip = x;
  if (g_rand_int_range (gen->rand, 0, 4) == 0)
    skip = chain (gen, x, 2);
  guint add = node (gen);
  owb_layout_graph_add_edge (gen->g, y, add);
  owb_layout_graph_add_edge (gen->g, skip, add);
  return chain (gen, add, 1);
}

/* LayerNorm as exporters often leave it: mean, sub, pow, mean, add, sqrt, div (by the sub), mul, add. */
static guint
layer_norm (Gen *gen, guint x)
{
  guint mean = chain (gen, x, 1);
  guint sub = node (gen);
  owb_layout_graph_add_edge (gen->g, x, sub);
  owb_layout_graph_add_edge (gen->g, mean, sub);
  guint sqrt_ = chain (gen, sub, 4);
  guint div = node (gen);
  owb_layout_graph_add_edge (gen->g, sub, div);
  owb_layout_graph_add_edge (gen->g, sqrt_, div);
  return chain (gen, div, 2);
}

/* Gelu as Div, Erf, Add, Mul (by the input), Mul. */
static guint
gelu (Gen *gen, guint x)
{
  guint add = chain (gen, x, 3);
  guint mul = node (gen);
  owb_layout_graph_add_edge (gen->g, x, mul);
  owb_layout_graph_add_edge (gen->g, add, mul);
  return chain (gen, mul, 1);
}

/* Pre-norm attention and MLP: LN → Q, K, V branches → scores → softmax → context → proj →
 * add(x) → LN → MLP → add. */
static guint
attention_block (Gen *gen, guint x)
{
  gboolean fused = g_rand_boolean (gen->rand);
  guint ln = fused ? chain (gen, x, 1) : layer_norm (gen, x);
  guint q = chain (gen, ln, 4), k = chain (gen, ln, 5), v = chain (gen, ln, 4);
  /* Shape → Gather → Concat: the target shape of the head reshapes, read by each branch. */
  guint shape = chain (gen, ln, 3);
  owb_layout_graph_add_edge (gen->g, shape, q - 1);
  owb_layout_graph_add_edge (gen->g, shape, k - 2);
  owb_layout_graph_add_edge (gen->g, shape, v - 1);
  guint scores = node (gen);
  owb_layout_graph_add_edge (gen->g, q, scores);
  owb_layout_graph_add_edge (gen->g, k, scores);
  guint soft = chain (gen, scores, 2);
  guint ctx = node (gen);
  owb_layout_graph_add_edge (gen->g, soft, ctx);
  owb_layout_graph_add_edge (gen->g, v, ctx);
  guint proj = chain (gen, ctx, 4);
  owb_layout_graph_add_edge (gen->g, shape, proj - 2);
  guint add = node (gen);
  owb_layout_graph_add_edge (gen->g, proj, add);
  owb_layout_graph_add_edge (gen->g, x, add);
  guint ln2 = fused ? chain (gen, add, 1) : layer_norm (gen, add);
  guint mlp = chain (gen, fused ? chain (gen, ln2, 2) : gelu (gen, chain (gen, ln2, 2)), 2);
  guint add2 = node (gen);
  owb_layout_graph_add_edge (gen->g, mlp, add2);
  owb_layout_graph_add_edge (gen->g, add, add2);
  /* A mask or position input feeding this block from the top of the graph. */
  if (g_rand_int_range (gen->rand, 0, 3) == 0)
    owb_layout_graph_add_edge (gen->g, 0, scores);
  return add2;
}

/* An inception-like block: 3 or 4 branches of different lengths, concatenated. */
static guint
branch_block (Gen *gen, guint x)
{
  guint n_branches = g_rand_int_range (gen->rand, 3, 5);
  guint ends[4];
  guint pool = chain (gen, x, 1);
  for (guint b = 0; b < n_branches; b++)
    {
      ends[b] = chain (gen, b % 2 ? pool : x, g_rand_int_range (gen->rand, 1, 5));
      /* Branches that also read the pooled input, as in NAS cells. */
      if (b % 2 == 0 && g_rand_boolean (gen->rand))
        owb_layout_graph_add_edge (gen->g, pool, ends[b]);
    }
  /* Created last, so that node order stays a topological order (the dense variant relies on it). */
  guint cat = node (gen);
  for (guint b = 0; b < n_branches; b++)
    owb_layout_graph_add_edge (gen->g, ends[b], cat);
  return cat;
}

static OwbLayoutGraph *
network (guint seed, guint n, double extra_edges)
{
  Gen gen = { owb_layout_graph_new (), g_rand_new_with_seed (seed) };
  g_autoptr (GArray) stage_ends = g_array_new (FALSE, FALSE, sizeof (guint));
  guint x = node (&gen);
  while (owb_layout_graph_get_n_nodes (gen.g) < n)
    {
      int kind = g_rand_int_range (gen.rand, 0, 10);
      if (kind < 4)
        x = residual_block (&gen, x);
      else if (kind < 8)
        x = attention_block (&gen, x);
      else
        x = branch_block (&gen, x);
      g_array_append_val (stage_ends, x);
      /* Now and then a long skip from an earlier stage (U-Net, feature pyramids). */
      if (stage_ends->len > 4 && g_rand_int_range (gen.rand, 0, 12) == 0)
        {
          guint back = g_rand_int_range (gen.rand, 2, MIN (stage_ends->len, 24));
          guint from = g_array_index (stage_ends, guint, stage_ends->len - back);
          guint merge = node (&gen);
          owb_layout_graph_add_edge (gen.g, x, merge);
          owb_layout_graph_add_edge (gen.g, from, merge);
          x = merge;
        }
    }
  /* Denser variants: short forward edges inside and between nearby blocks (node order is a
   * topological order, so these add no cycle). */
  guint n_nodes = owb_layout_graph_get_n_nodes (gen.g);
  for (guint k = 0; k < (guint) (extra_edges * n_nodes); k++)
    {
      guint a = g_rand_int_range (gen.rand, 0, n_nodes - 2);
      owb_layout_graph_add_edge (gen.g, a, g_rand_int_range (gen.rand, a + 2, MIN (n_nodes, a + 30)));
    }
  g_rand_free (gen.rand);
  return gen.g;
}

/* Ranks `width` wide (many parallel heads or experts): each node fed by one or two nodes of the
 * rank above near its place, some from two or three ranks up; with `scatter`, a third of the
 * nodes also read one node from anywhere above (a worst case, not a network). */
static OwbLayoutGraph *
flat (guint seed, guint n, guint width, gboolean scatter)
{
  Gen gen = { owb_layout_graph_new (), g_rand_new_with_seed (seed) };
  for (guint v = 0; v < n; v++)
    {
      node (&gen);
      if (v < width)
        continue;
      guint r = v / width, col = v % width;
      guint near = (r - 1) * width + (col + g_rand_int_range (gen.rand, -3, 4) + width) % width;
      owb_layout_graph_add_edge (gen.g, near, v);
      if (g_rand_int_range (gen.rand, 0, 3) == 0)
        owb_layout_graph_add_edge (gen.g, (r - 1) * width + (col + g_rand_int_range (gen.rand, -6, 7) + width) % width, v);
      if (r >= 3 && g_rand_int_range (gen.rand, 0, 10) == 0)
        owb_layout_graph_add_edge (gen.g, (r - g_rand_int_range (gen.rand, 2, 4)) * width
                                          + (col + g_rand_int_range (gen.rand, -20, 21) + width) % width, v);
      if (scatter && g_rand_int_range (gen.rand, 0, 3) == 0)
        owb_layout_graph_add_edge (gen.g, g_rand_int_range (gen.rand, 0, r * width), v);
    }
  g_rand_free (gen.rand);
  return gen.g;
}

/* One node feeding `fan` short chains, merged back in groups of 8 and then into one. */
static OwbLayoutGraph *
fan_out (guint seed, guint fan)
{
  Gen gen = { owb_layout_graph_new (), g_rand_new_with_seed (seed) };
  guint root = node (&gen);
  guint all = node (&gen);
  guint group = 0;
  for (guint i = 0; i < fan; i++)
    {
      if (i % 8 == 0)
        {
          group = node (&gen);
          owb_layout_graph_add_edge (gen.g, group, all);
        }
      owb_layout_graph_add_edge (gen.g, chain (&gen, root, g_rand_int_range (gen.rand, 1, 4)), group);
    }
  g_rand_free (gen.rand);
  return gen.g;
}

/* The graph of a model as the canvas shows it, roughly: one box per node (wider for longer op
 * names), one per graph input and output, an edge per tensor from producer to consumer. */
static OwbLayoutGraph *
model_graph (const char *path, GError **error)
{
  g_autoptr (OwbModel) model = owb_model_load_file (path, error);
  if (model == NULL)
    return NULL;
  const OwbGraph *graph = model->graph;
  OwbLayoutGraph *g = owb_layout_graph_new ();
  g_autoptr (GHashTable) producer = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      const OwbValueInfo *vi = g_ptr_array_index (graph->inputs, i);
      if (owb_graph_get_initializer (graph, vi->name))
        continue;
      guint v = owb_layout_graph_add_node (g, 120, 40);
      g_hash_table_insert (producer, vi->name, GUINT_TO_POINTER (v + 1));
    }
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (graph->nodes, i);
      guint v = owb_layout_graph_add_node (g, 60 + 8 * strlen (node->op_type), 40 + 16 * (node->n_inputs > 1));
      for (int k = 0; k < node->n_outputs; k++)
        if (node->outputs[k][0])
          g_hash_table_insert (producer, node->outputs[k], GUINT_TO_POINTER (v + 1));
    }
  guint first_node = owb_layout_graph_get_n_nodes (g) - graph->nodes->len;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (graph->nodes, i);
      for (int k = 0; k < node->n_inputs; k++)
        {
          guint from = GPOINTER_TO_UINT (g_hash_table_lookup (producer, node->inputs[k]));
          if (from)
            owb_layout_graph_add_edge (g, from - 1, first_node + i);
        }
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    {
      const OwbValueInfo *vi = g_ptr_array_index (graph->outputs, i);
      guint v = owb_layout_graph_add_node (g, 120, 40);
      guint from = GPOINTER_TO_UINT (g_hash_table_lookup (producer, vi->name));
      if (from)
        owb_layout_graph_add_edge (g, from - 1, v);
    }
  return g;
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static const char *filter;

static void
bench (const char *name, OwbLayoutGraph *g, guint runs, guint sweeps)
{
  if (filter && !strstr (name, filter))
    {
      owb_layout_graph_free (g);
      return;
    }
  OwbLayoutOptions o;
  owb_layout_options_init (&o);
  if (sweeps != G_MAXUINT)
    o.ordering_sweeps = sweeps;
  g_autofree double *ms = g_new (double, runs);
  OwbLayout *l = NULL;
  for (guint i = 0; i < runs; i++)
    {
      owb_layout_free (l);
      gint64 t0 = g_get_monotonic_time ();
      l = owb_layout_compute (g, &o, NULL, NULL);
      ms[i] = (g_get_monotonic_time () - t0) / 1000.0;
    }
  qsort (ms, runs, sizeof (double), compare_double);
  double w, h;
  owb_layout_get_size (l, &w, &h);
  printf ("%-14s%7u %7u %7u %6u %9.1f %9.1f %10" G_GUINT64_FORMAT " %9.0f×%.0f\n", name,
          owb_layout_graph_get_n_nodes (g), owb_layout_graph_get_n_edges (g),
          owb_layout_get_n_dummies (l), owb_layout_get_n_ranks (l), ms[runs / 2], ms[runs - 1],
          owb_layout_count_crossings (l), w, h);
  owb_layout_free (l);
  owb_layout_graph_free (g);
}

/* Writes the layout as SVG: boxes, and routes as polylines. */
static void
write_svg (const char *path, OwbLayoutGraph *g)
{
  g_autoptr (OwbLayout) l = owb_layout_compute (g, NULL, NULL, NULL);
  double w, h;
  owb_layout_get_size (l, &w, &h);
  g_autoptr (GString) svg = g_string_new (NULL);
  g_string_append_printf (svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">"
                          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", w + 20, h + 20);
  const double *sizes = (const double *) g->sizes->data;
  for (guint v = 0; v < owb_layout_graph_get_n_nodes (g); v++)
    {
      double x, y;
      owb_layout_get_node_position (l, v, &x, &y);
      g_string_append_printf (svg, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                              "fill=\"#cde\" stroke=\"#346\"/><text x=\"%.1f\" y=\"%.1f\" "
                              "font-size=\"12\">%u</text>\n", x + 10, y + 10, sizes[2 * v],
                              sizes[2 * v + 1], x + 14, y + 24, v);
    }
  for (guint e = 0; e < owb_layout_graph_get_n_edges (g); e++)
    {
      guint np;
      const double *pt = owb_layout_get_edge_points (l, e, &np);
      g_string_append (svg, "<polyline fill=\"none\" stroke=\"#a33\" points=\"");
      for (guint i = 0; i < np; i++)
        g_string_append_printf (svg, "%.1f,%.1f ", pt[2 * i] + 10, pt[2 * i + 1] + 10);
      g_string_append (svg, "\"/>\n");
    }
  g_string_append (svg, "</svg>\n");
  g_file_set_contents (path, svg->str, svg->len, NULL);
  printf ("%s: %.0f×%.0f, %" G_GUINT64_FORMAT " crossings\n", path, w, h, owb_layout_count_crossings (l));
}

int
main (int argc, char **argv)
{
  if (argc == 4 && g_str_equal (argv[1], "--svg"))
    {
      g_autoptr (GError) error = NULL;
      OwbLayoutGraph *g = model_graph (argv[3], &error);
      if (g == NULL)
        {
          fprintf (stderr, "%s: %s\n", argv[3], error->message);
          return 1;
        }
      write_svg (argv[2], g);
      owb_layout_graph_free (g);
      return 0;
    }
  if (argc >= 5 && g_str_equal (argv[1], "--svg"))
    {
      guint n = atoi (argv[3]), seed = atoi (argv[4]);
      const char *kind = argc > 5 ? argv[5] : "net";
      OwbLayoutGraph *g = g_str_equal (kind, "flat") ? flat (seed, n, MAX (n / 50, 1), FALSE)
                          : g_str_equal (kind, "fan") ? fan_out (seed, n)
                                                      : network (seed, n, g_str_equal (kind, "dense") ? 0.25 : 0);
      write_svg (argv[2], g);
      owb_layout_graph_free (g);
      return 0;
    }
  guint runs = argc > 1 ? MAX (atoi (argv[1]), 1) : 5;
  guint sweeps = argc > 2 && atoi (argv[2]) >= 0 ? (guint) atoi (argv[2]) : G_MAXUINT;
  filter = argc > 3 ? argv[3] : NULL;
  printf ("%-14s%7s %7s %7s %6s %9s %9s %10s %s\n", "graph", "nodes", "edges", "dummies", "ranks",
          "ms med", "ms max", "crossings", "width×height");
  bench ("net-1k", network (1, 1000, 0), runs, sweeps);
  bench ("net-10k", network (2, 10000, 0), runs, sweeps);
  bench ("net-10k-dense", network (6, 10000, 0.25), runs, sweeps);
  bench ("net-50k", network (3, 50000, 0), runs, sweeps);
  bench ("flat-50k", flat (4, 50000, 1000, FALSE), runs, sweeps);
  bench ("scatter-50k", flat (4, 50000, 1000, TRUE), runs, sweeps);
  bench ("fan-out-2k", fan_out (5, 2000), runs, sweeps);
  const char *models = g_getenv ("OWB_MODELS_DIR");
  g_autoptr (GDir) dir = models ? g_dir_open (models, 0, NULL) : NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  for (const char *name; dir && (name = g_dir_read_name (dir));)
    if (g_str_has_suffix (name, ".onnx"))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (models, g_ptr_array_index (names, i), NULL);
      g_autoptr (GError) error = NULL;
      OwbLayoutGraph *g = model_graph (path, &error);
      g_autofree char *label = g_strndup (g_ptr_array_index (names, i), 14);
      if (g)
        bench (label, g, runs, sweeps);
      else
        fprintf (stderr, "%s: %s\n", path, error->message);
    }
  return 0;
}
