/* test-layout.c: the layered layout (ui/layout/owb-layout.h) on small hand-made graphs and on
 * seeded random trees and DAGs: ranks, crossings, spacing, routes, cycles, determinism and
 * cancellation. GTK-free. */
#include "owb-layout.h"

#include <math.h>
#include <string.h>

#define EPS 1e-6

static OwbLayoutOptions
test_options (void)
{
  OwbLayoutOptions o;
  owb_layout_options_init (&o);
  return o;
}

static OwbLayout *
compute (const OwbLayoutGraph *g, const OwbLayoutOptions *o)
{
  g_autoptr (GError) error = NULL;
  OwbLayout *l = owb_layout_compute (g, o, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (l);
  return l;
}

/* Sizes the test gave each node (the graph API has no getter: the test keeps its own copy). */
typedef struct
{
  OwbLayoutGraph *graph;
  GArray *w, *h;
  GArray *from, *to;
} TestGraph;

static void
tg_init (TestGraph *t)
{
  t->graph = owb_layout_graph_new ();
  t->w = g_array_new (FALSE, FALSE, sizeof (double));
  t->h = g_array_new (FALSE, FALSE, sizeof (double));
  t->from = g_array_new (FALSE, FALSE, sizeof (guint));
  t->to = g_array_new (FALSE, FALSE, sizeof (guint));
}

static void
tg_clear (TestGraph *t)
{
  owb_layout_graph_free (t->graph);
  g_array_unref (t->w);
  g_array_unref (t->h);
  g_array_unref (t->from);
  g_array_unref (t->to);
}

static guint
tg_node (TestGraph *t, double w, double h)
{
  g_array_append_val (t->w, w);
  g_array_append_val (t->h, h);
  guint id = owb_layout_graph_add_node (t->graph, w, h);
  g_assert_cmpuint (id, ==, t->w->len - 1);
  return id;
}

static guint
tg_edge (TestGraph *t, guint a, guint b)
{
  g_array_append_val (t->from, a);
  g_array_append_val (t->to, b);
  guint id = owb_layout_graph_add_edge (t->graph, a, b);
  g_assert_cmpuint (id, ==, t->from->len - 1);
  return id;
}

#define W(t, v) g_array_index ((t)->w, double, v)
#define H(t, v) g_array_index ((t)->h, double, v)
#define FROM(t, e) g_array_index ((t)->from, guint, e)
#define TO(t, e) g_array_index ((t)->to, guint, e)

static double
centre_x (const OwbLayout *l, const TestGraph *t, guint v)
{
  double x, y;
  owb_layout_get_node_position (l, v, &x, &y);
  return x + W (t, v) / 2;
}

typedef struct
{
  guint node;
  double x;
} RankSlot;

static int
compare_slot (const void *a, const void *b)
{
  const RankSlot *x = a, *y = b;
  return (x->x > y->x) - (x->x < y->x);
}

/* What must hold for every layout: coordinates >= 0 and inside the size, boxes of a rank apart by
 * at least node_spacing, edges pointing down (or drawn upwards when their source is lower), and
 * each route from its source's bottom (top) centre to its target's top (bottom) centre with one
 * point per rank. */
static void
check_layout (const TestGraph *t, const OwbLayout *l, const OwbLayoutOptions *o)
{
  guint n = t->w->len;
  double width, height;
  owb_layout_get_size (l, &width, &height);
  g_autofree RankSlot *slots = g_new (RankSlot, MAX (n, 1));
  guint max_rank = 0;
  for (guint v = 0; v < n; v++)
    {
      double x, y;
      owb_layout_get_node_position (l, v, &x, &y);
      g_assert_cmpfloat (x, >=, -EPS);
      g_assert_cmpfloat (y, >=, -EPS);
      g_assert_cmpfloat (x + W (t, v), <=, width + EPS);
      g_assert_cmpfloat (y + H (t, v), <=, height + EPS);
      max_rank = MAX (max_rank, owb_layout_get_node_rank (l, v));
    }
  /* Per rank, sorted by x: no overlap, gaps of at least node_spacing; the same rank shares one
   * middle line (boxes are centred on it). */
  g_autofree guint *count = g_new0 (guint, max_rank + 2);
  for (guint v = 0; v < n; v++)
    count[owb_layout_get_node_rank (l, v) + 1]++;
  for (guint r = 0; r <= max_rank; r++)
    {
      g_assert_cmpuint (count[r + 1], >, 0); /* no empty rank */
      count[r + 1] += count[r];
    }
  g_autofree guint *fill = g_memdup2 (count, sizeof (guint) * (max_rank + 2));
  for (guint v = 0; v < n; v++)
    {
      guint r = owb_layout_get_node_rank (l, v);
      slots[fill[r]++] = (RankSlot){ v, centre_x (l, t, v) };
    }
  for (guint r = 0; r <= max_rank && n > 0; r++)
    {
      RankSlot *s = slots + count[r];
      guint m = count[r + 1] - count[r];
      qsort (s, m, sizeof (RankSlot), compare_slot);
      double mid0 = 0;
      for (guint i = 0; i < m; i++)
        {
          double x, y;
          owb_layout_get_node_position (l, s[i].node, &x, &y);
          double mid = y + H (t, s[i].node) / 2;
          if (i == 0)
            mid0 = mid;
          g_assert_cmpfloat (fabs (mid - mid0), <, EPS);
          if (i > 0)
            {
              double px, py;
              owb_layout_get_node_position (l, s[i - 1].node, &px, &py);
              g_assert_cmpfloat (x, >=, px + W (t, s[i - 1].node) + o->node_spacing - EPS);
            }
        }
    }
  for (guint e = 0; e < t->from->len; e++)
    {
      guint a = FROM (t, e), b = TO (t, e);
      guint ra = owb_layout_get_node_rank (l, a), rb = owb_layout_get_node_rank (l, b);
      guint np = 0;
      const double *p = owb_layout_get_edge_points (l, e, &np);
      g_assert_nonnull (p);
      double ax, ay, bx, by;
      owb_layout_get_node_position (l, a, &ax, &ay);
      owb_layout_get_node_position (l, b, &bx, &by);
      for (guint i = 0; i < np; i++)
        {
          g_assert_cmpfloat (p[2 * i], >=, -EPS);
          g_assert_cmpfloat (p[2 * i + 1], >=, -EPS);
          g_assert_cmpfloat (p[2 * i], <=, width + EPS);
          g_assert_cmpfloat (p[2 * i + 1], <=, height + EPS);
        }
      g_assert_cmpfloat (fabs (p[0] - (ax + W (t, a) / 2)), <, EPS);
      g_assert_cmpfloat (fabs (p[2 * np - 2] - (bx + W (t, b) / 2)), <, EPS);
      if (a == b)
        {
          g_assert_cmpuint (np, >=, 3);
          g_assert_cmpfloat (fabs (p[1] - (ay + H (t, a))), <, EPS);
          g_assert_cmpfloat (fabs (p[2 * np - 1] - by), <, EPS);
          continue;
        }
      g_assert_cmpuint (ra, !=, rb);
      guint span = ra < rb ? rb - ra : ra - rb;
      g_assert_cmpuint (np, ==, span + 1);
      if (ra < rb)
        {
          g_assert_cmpfloat (fabs (p[1] - (ay + H (t, a))), <, EPS);
          g_assert_cmpfloat (fabs (p[2 * np - 1] - by), <, EPS);
          for (guint i = 1; i < np; i++)
            g_assert_cmpfloat (p[2 * i + 1], >, p[2 * i - 1]);
        }
      else
        {
          g_assert_cmpfloat (fabs (p[1] - ay), <, EPS);
          g_assert_cmpfloat (fabs (p[2 * np - 1] - (by + H (t, b))), <, EPS);
          for (guint i = 1; i < np; i++)
            g_assert_cmpfloat (p[2 * i + 1], <, p[2 * i - 1]);
        }
    }
}

static void
test_empty (void)
{
  g_autoptr (OwbLayoutGraph) g = owb_layout_graph_new ();
  g_assert_cmpuint (owb_layout_graph_get_n_nodes (g), ==, 0);
  g_autoptr (OwbLayout) l = compute (g, NULL);
  double w = -1, h = -1;
  owb_layout_get_size (l, &w, &h);
  g_assert_cmpfloat (w, ==, 0);
  g_assert_cmpfloat (h, ==, 0);
  g_assert_cmpuint (owb_layout_count_crossings (l), ==, 0);
}

static void
test_single (void)
{
  TestGraph t;
  tg_init (&t);
  tg_node (&t, 120, 40);
  OwbLayoutOptions o = test_options ();
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  double x, y, w, h;
  owb_layout_get_node_position (l, 0, &x, &y);
  owb_layout_get_size (l, &w, &h);
  g_assert_cmpfloat (x, ==, 0);
  g_assert_cmpfloat (y, ==, 0);
  g_assert_cmpfloat (w, ==, 120);
  g_assert_cmpfloat (h, ==, 40);
  g_assert_cmpuint (owb_layout_get_node_rank (l, 0), ==, 0);
  check_layout (&t, l, &o);
  tg_clear (&t);
}

static void
test_chain (void)
{
  TestGraph t;
  tg_init (&t);
  OwbLayoutOptions o = test_options ();
  for (guint i = 0; i < 30; i++)
    {
      tg_node (&t, 40 + (i * 37) % 100, 20 + (i % 3) * 10);
      if (i > 0)
        tg_edge (&t, i - 1, i);
    }
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  double cx = centre_x (l, &t, 0), prev_y = -1;
  for (guint i = 0; i < 30; i++)
    {
      double x, y;
      owb_layout_get_node_position (l, i, &x, &y);
      g_assert_cmpuint (owb_layout_get_node_rank (l, i), ==, i);
      g_assert_cmpfloat (fabs (centre_x (l, &t, i) - cx), <, EPS);
      g_assert_cmpfloat (y, >, prev_y);
      prev_y = y;
    }
  for (guint e = 0; e < 29; e++)
    {
      guint np;
      const double *p = owb_layout_get_edge_points (l, e, &np);
      g_assert_cmpuint (np, ==, 2);
      g_assert_cmpfloat (fabs (p[0] - p[2]), <, EPS); /* straight down */
    }
  g_assert_cmpuint (owb_layout_count_crossings (l), ==, 0);
  tg_clear (&t);
}

/* Random out-tree: each node hangs under an earlier one. */
static void
build_tree (TestGraph *t, GRand *rand, guint n)
{
  tg_node (t, g_rand_int_range (rand, 30, 160), 30);
  for (guint v = 1; v < n; v++)
    {
      tg_node (t, g_rand_int_range (rand, 30, 160), g_rand_int_range (rand, 20, 60));
      /* Favour recent parents, so that trees are deep as well as bushy. */
      guint lo = v > 8 && g_rand_boolean (rand) ? v - 8 : 0;
      tg_edge (t, g_rand_int_range (rand, lo, v), v);
    }
}

static void
test_trees (void)
{
  OwbLayoutOptions o = test_options ();
  for (guint seed = 1; seed <= 12; seed++)
    {
      g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
      TestGraph t;
      tg_init (&t);
      build_tree (&t, rand, g_rand_int_range (rand, 50, 501));
      g_autoptr (OwbLayout) l = compute (t.graph, &o);
      check_layout (&t, l, &o);
      g_assert_cmpuint (owb_layout_count_crossings (l), ==, 0);
      /* A tree has no long edges, so every route is a single segment. */
      for (guint e = 0; e < t.from->len; e++)
        {
          guint np;
          owb_layout_get_edge_points (l, e, &np);
          g_assert_cmpuint (np, ==, 2);
        }
      tg_clear (&t);
    }
}

/* K(m,n) between two ranks: at best C(m,2)·C(n,2) crossings in any order. */
static void
test_unavoidable_crossing (void)
{
  OwbLayoutOptions o = test_options ();
  guint sizes[][3] = { { 2, 2, 1 }, { 3, 3, 9 }, { 2, 3, 3 } };
  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
    {
      TestGraph t;
      tg_init (&t);
      guint m = sizes[k][0], n = sizes[k][1];
      for (guint i = 0; i < m + n; i++)
        tg_node (&t, 50, 30);
      for (guint i = 0; i < m; i++)
        for (guint j = 0; j < n; j++)
          tg_edge (&t, i, m + j);
      g_autoptr (OwbLayout) l = compute (t.graph, &o);
      check_layout (&t, l, &o);
      g_assert_cmpuint (owb_layout_count_crossings (l), ==, sizes[k][2]);
      tg_clear (&t);
    }
  /* An X that the order can undo: a→d, b→c with a, b and c, d added crosswise. */
  TestGraph t;
  tg_init (&t);
  for (guint i = 0; i < 4; i++)
    tg_node (&t, 50, 30);
  tg_edge (&t, 0, 3);
  tg_edge (&t, 1, 2);
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  g_assert_cmpuint (owb_layout_count_crossings (l), ==, 0);
  tg_clear (&t);
}

/* The crossing count must agree with a brute-force count over the drawn segments. */
static guint64
brute_crossings (const TestGraph *t, const OwbLayout *l)
{
  /* Each route segment joins two adjacent ranks' middle lines or box sides; compare them by the
   * order of their end x at each rank, over pairs of segments between the same two ranks. */
  typedef struct
  {
    guint r;
    double x0, x1;
  } Seg;
  g_autoptr (GArray) segs = g_array_new (FALSE, FALSE, sizeof (Seg));
  /* Parallel edges, reversed twins and edges sharing a trunk share segments: count each drawn
   * segment once. */
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint e = 0; e < t->from->len; e++)
    {
      guint a = FROM (t, e), b = TO (t, e);
      if (a == b)
        continue;
      guint ra = owb_layout_get_node_rank (l, a), rb = owb_layout_get_node_rank (l, b);
      guint np;
      const double *p = owb_layout_get_edge_points (l, e, &np);
      for (guint i = 0; i + 1 < np; i++)
        {
          gboolean up = ra > rb;
          guint r = up ? ra - i - 1 : ra + i;
          Seg s = { r, up ? p[2 * i + 2] : p[2 * i], up ? p[2 * i] : p[2 * i + 2] };
          if (g_hash_table_add (seen, g_strdup_printf ("%u %.6f %.6f", s.r, s.x0, s.x1)))
            g_array_append_val (segs, s);
        }
    }
  guint64 c = 0;
  for (guint i = 0; i < segs->len; i++)
    for (guint j = i + 1; j < segs->len; j++)
      {
        Seg *s = &g_array_index (segs, Seg, i), *u = &g_array_index (segs, Seg, j);
        if (s->r != u->r)
          continue;
        if ((s->x0 < u->x0 - EPS && s->x1 > u->x1 + EPS) || (s->x0 > u->x0 + EPS && s->x1 < u->x1 - EPS))
          c++;
      }
  return c;
}

/* Random DAG, shaped loosely like a network: a spine, branches, skips. */
static void
build_dag (TestGraph *t, GRand *rand, guint n, guint extra_edges)
{
  for (guint v = 0; v < n; v++)
    {
      tg_node (t, g_rand_int_range (rand, 20, 140), g_rand_int_range (rand, 20, 50));
      if (v > 0)
        tg_edge (t, g_rand_int_range (rand, v > 6 ? v - 6 : 0, v), v);
    }
  for (guint k = 0; k < extra_edges && n > 1; k++)
    {
      guint a = g_rand_int_range (rand, 0, n - 1);
      guint b = g_rand_int_range (rand, a + 1, MIN (n, a + 20));
      tg_edge (t, a, b);
    }
}

static void
test_random_dags (void)
{
  OwbLayoutOptions o = test_options ();
  for (guint seed = 1; seed <= 10; seed++)
    {
      g_autoptr (GRand) rand = g_rand_new_with_seed (100 + seed);
      TestGraph t;
      tg_init (&t);
      guint n = g_rand_int_range (rand, 20, 200);
      build_dag (&t, rand, n, n / 2);
      g_autoptr (OwbLayout) l = compute (t.graph, &o);
      check_layout (&t, l, &o);
      g_assert_cmpuint (owb_layout_count_crossings (l), ==, brute_crossings (&t, l));
      tg_clear (&t);
    }
}

static void
test_sweeps_help (void)
{
  OwbLayoutOptions none = test_options (), some = test_options ();
  none.ordering_sweeps = 0;
  guint64 total_none = 0, total_some = 0;
  for (guint seed = 1; seed <= 10; seed++)
    {
      g_autoptr (GRand) rand = g_rand_new_with_seed (200 + seed);
      TestGraph t;
      tg_init (&t);
      guint n = g_rand_int_range (rand, 50, 300);
      build_dag (&t, rand, n, n);
      g_autoptr (OwbLayout) l0 = compute (t.graph, &none);
      g_autoptr (OwbLayout) l1 = compute (t.graph, &some);
      check_layout (&t, l1, &some);
      guint64 c0 = owb_layout_count_crossings (l0), c1 = owb_layout_count_crossings (l1);
      g_assert_cmpuint (c1, <=, c0);
      total_none += c0;
      total_some += c1;
      tg_clear (&t);
    }
  /* On graphs this dense the sweeps must find something. */
  g_test_message ("crossings: %" G_GUINT64_FORMAT " without sweeps, %" G_GUINT64_FORMAT " with",
                  total_none, total_some);
  g_assert_cmpuint (total_some, <, total_none);
}

/* The rank tightening: a weight feeding a deep node sits right above it, not at the top. */
static void
test_tighten (void)
{
  TestGraph t;
  tg_init (&t);
  OwbLayoutOptions o = test_options ();
  for (guint i = 0; i < 8; i++)
    {
      tg_node (&t, 60, 30);
      if (i > 0)
        tg_edge (&t, i - 1, i);
    }
  guint weight = tg_node (&t, 60, 30);
  guint cast = tg_node (&t, 60, 30);
  tg_edge (&t, weight, cast);
  tg_edge (&t, cast, 7);
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  g_assert_cmpuint (owb_layout_get_node_rank (l, cast), ==, 6);
  g_assert_cmpuint (owb_layout_get_node_rank (l, weight), ==, 5);
  tg_clear (&t);
}

/* Constants shared between shape computations follow the nodes they feed down the graph; the
 * graph's real input stays at the top even when it feeds short branches. */
static void
test_constants_follow (void)
{
  TestGraph t;
  tg_init (&t);
  OwbLayoutOptions o = test_options ();
  guint input = tg_node (&t, 80, 30);
  guint prev = input;
  for (guint i = 0; i < 10; i++)
    {
      guint v = tg_node (&t, 80, 30);
      tg_edge (&t, prev, v);
      prev = v;
    }
  guint reshape = tg_node (&t, 80, 30);
  tg_edge (&t, prev, reshape);
  guint axes = tg_node (&t, 60, 30), c1 = tg_node (&t, 60, 30), c2 = tg_node (&t, 60, 30);
  guint u1 = tg_node (&t, 60, 30), u2 = tg_node (&t, 60, 30), concat = tg_node (&t, 60, 30);
  tg_edge (&t, c1, u1);
  tg_edge (&t, axes, u1);
  tg_edge (&t, c2, u2);
  tg_edge (&t, axes, u2);
  tg_edge (&t, u1, concat);
  tg_edge (&t, u2, concat);
  tg_edge (&t, concat, reshape);
  /* A short side branch of the input, merging at the bottom. */
  guint side = tg_node (&t, 60, 30);
  tg_edge (&t, input, side);
  tg_edge (&t, side, reshape);
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  guint r = owb_layout_get_node_rank (l, reshape);
  g_assert_cmpuint (r, ==, 11);
  g_assert_cmpuint (owb_layout_get_node_rank (l, concat), ==, r - 1);
  g_assert_cmpuint (owb_layout_get_node_rank (l, u1), ==, r - 2);
  g_assert_cmpuint (owb_layout_get_node_rank (l, u2), ==, r - 2);
  g_assert_cmpuint (owb_layout_get_node_rank (l, axes), ==, r - 3);
  g_assert_cmpuint (owb_layout_get_node_rank (l, c1), ==, r - 3);
  g_assert_cmpuint (owb_layout_get_node_rank (l, input), ==, 0);
  /* Moving the side branch down would only trade one long edge for another: it stays. */
  g_assert_cmpuint (owb_layout_get_node_rank (l, side), ==, 1);
  tg_clear (&t);
}

/* Edges from one source to several later nodes share a trunk: their routes start alike. */
static void
test_shared_trunk (void)
{
  TestGraph t;
  tg_init (&t);
  OwbLayoutOptions o = test_options ();
  for (guint i = 0; i < 12; i++)
    {
      tg_node (&t, 80, 30);
      if (i > 0)
        tg_edge (&t, i - 1, i);
    }
  guint e4 = tg_edge (&t, 0, 4), e8 = tg_edge (&t, 0, 8), e11 = tg_edge (&t, 0, 11);
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  guint n4, n8, n11;
  const double *p4 = owb_layout_get_edge_points (l, e4, &n4);
  const double *p8 = owb_layout_get_edge_points (l, e8, &n8);
  const double *p11 = owb_layout_get_edge_points (l, e11, &n11);
  g_assert_cmpuint (n4, ==, 5);
  g_assert_cmpuint (n11, ==, 12);
  g_assert_cmpmem (p4, 2 * (n4 - 1) * sizeof (double), p11, 2 * (n4 - 1) * sizeof (double));
  g_assert_cmpmem (p8, 2 * (n8 - 1) * sizeof (double), p11, 2 * (n8 - 1) * sizeof (double));
  g_assert_cmpuint (owb_layout_count_crossings (l), ==, 0);
  tg_clear (&t);
}

static guint
tg_chain (TestGraph *t, GRand *rand, guint from, guint len)
{
  for (guint i = 0; i < len; i++)
    {
      guint v = tg_node (t, g_rand_int_range (rand, 60, 180), 30);
      tg_edge (t, from, v);
      from = v;
    }
  return from;
}

/* A long network (residual blocks, attention blocks with Q, K and V branches, skips over a few
 * blocks, a mask read by many blocks) must stay a column: nothing may make it drift sideways
 * block after block. */
static void
test_long_network_stays_narrow (void)
{
  TestGraph t;
  tg_init (&t);
  OwbLayoutOptions o = test_options ();
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  guint mask = tg_node (&t, 100, 30);
  guint x = tg_node (&t, 100, 30);
  guint ends[400];
  for (guint b = 0; b < 400; b++)
    {
      guint y;
      if (g_rand_boolean (rand))
        {
          y = tg_chain (&t, rand, x, 5);
        }
      else
        {
          guint q = tg_chain (&t, rand, x, 3), k = tg_chain (&t, rand, x, 4), v = tg_chain (&t, rand, x, 3);
          guint s = tg_node (&t, 100, 30);
          tg_edge (&t, q, s);
          tg_edge (&t, k, s);
          if (b % 2)
            tg_edge (&t, mask, s);
          guint c = tg_node (&t, 100, 30);
          tg_edge (&t, tg_chain (&t, rand, s, 1), c);
          tg_edge (&t, v, c);
          y = tg_chain (&t, rand, c, 2);
        }
      guint add = tg_node (&t, 60, 30);
      tg_edge (&t, y, add);
      tg_edge (&t, x, add);
      if (b > 6 && g_rand_int_range (rand, 0, 6) == 0)
        tg_edge (&t, ends[b - g_rand_int_range (rand, 2, 6)], add);
      x = ends[b] = add;
    }
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  double w, h;
  owb_layout_get_size (l, &w, &h);
  g_test_message ("%u nodes: %.0f x %.0f", t.w->len, w, h);
  /* A few boxes and edges side by side, whatever the length. */
  g_assert_cmpfloat (w, <, 12 * (180 + o.node_spacing));
  tg_clear (&t);
}

/* A long edge gets a bend point per rank it passes, at increasing y. */
static void
test_long_edge (void)
{
  TestGraph t;
  tg_init (&t);
  OwbLayoutOptions o = test_options ();
  for (guint i = 0; i < 6; i++)
    {
      tg_node (&t, 80, 30);
      if (i > 0)
        tg_edge (&t, i - 1, i);
    }
  guint skip = tg_edge (&t, 0, 5);
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  guint np;
  const double *p = owb_layout_get_edge_points (l, skip, &np);
  g_assert_cmpuint (np, ==, 6);
  /* The skip bends around the chain: its inner points sit beside it, not across the boxes. */
  double cx = centre_x (l, &t, 2);
  for (guint i = 1; i + 1 < np; i++)
    g_assert_cmpfloat (fabs (p[2 * i] - cx), >=, 40 + o.node_spacing / 2 - EPS);
  g_assert_cmpuint (owb_layout_count_crossings (l), ==, 0);
  tg_clear (&t);
}

/* Parents centred over their children, children spread evenly under a parent. */
static void
test_diamond (void)
{
  TestGraph t;
  tg_init (&t);
  OwbLayoutOptions o = test_options ();
  for (guint i = 0; i < 4; i++)
    tg_node (&t, 60, 30);
  tg_edge (&t, 0, 1);
  tg_edge (&t, 0, 2);
  tg_edge (&t, 1, 3);
  tg_edge (&t, 2, 3);
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  double mid = (centre_x (l, &t, 1) + centre_x (l, &t, 2)) / 2;
  g_assert_cmpfloat (fabs (centre_x (l, &t, 0) - mid), <, EPS);
  g_assert_cmpfloat (fabs (centre_x (l, &t, 3) - mid), <, EPS);
  /* Siblings no further apart than the spacing needs. */
  g_assert_cmpfloat (fabs (centre_x (l, &t, 2) - centre_x (l, &t, 1)), <=, 60 + o.node_spacing + EPS);
  tg_clear (&t);
}

static void
test_cycle (void)
{
  TestGraph t;
  tg_init (&t);
  OwbLayoutOptions o = test_options ();
  for (guint i = 0; i < 4; i++)
    tg_node (&t, 50, 30);
  tg_edge (&t, 0, 1);
  tg_edge (&t, 1, 2);
  tg_edge (&t, 2, 3);
  guint back = tg_edge (&t, 3, 1);
  tg_edge (&t, 2, 0); /* a second cycle, through the source */
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  /* The first edges found keep their direction: 0, 1, 2, 3 top to bottom. */
  for (guint i = 1; i < 4; i++)
    g_assert_cmpuint (owb_layout_get_node_rank (l, i), >, owb_layout_get_node_rank (l, i - 1));
  guint np;
  const double *p = owb_layout_get_edge_points (l, back, &np);
  g_assert_cmpuint (np, ==, 3);
  g_assert_cmpfloat (p[1], >, p[5]); /* drawn upwards */

  /* A cycle with no source at all. */
  TestGraph r;
  tg_init (&r);
  for (guint i = 0; i < 5; i++)
    tg_node (&r, 50, 30);
  for (guint i = 0; i < 5; i++)
    tg_edge (&r, i, (i + 1) % 5);
  g_autoptr (OwbLayout) lr = compute (r.graph, &o);
  check_layout (&r, lr, &o);
  tg_clear (&r);
  tg_clear (&t);
}

static void
test_self_loop_parallel (void)
{
  TestGraph t;
  tg_init (&t);
  OwbLayoutOptions o = test_options ();
  for (guint i = 0; i < 4; i++)
    tg_node (&t, 50, 30);
  guint loop0 = tg_edge (&t, 0, 0);
  guint a = tg_edge (&t, 0, 1);
  guint b = tg_edge (&t, 0, 1);
  tg_edge (&t, 1, 2);
  tg_edge (&t, 0, 3);
  tg_edge (&t, 0, 3);
  guint loop1 = tg_edge (&t, 1, 1);
  tg_edge (&t, 1, 1);
  tg_edge (&t, 2, 1); /* a 2-cycle between 1 and 2 */
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  guint na, nb;
  const double *pa = owb_layout_get_edge_points (l, a, &na);
  const double *pb = owb_layout_get_edge_points (l, b, &nb);
  g_assert_cmpuint (na, ==, nb);
  g_assert_cmpmem (pa, na * 2 * sizeof (double), pb, nb * 2 * sizeof (double));
  /* A self loop leaves its box sideways: some point lies right of the box. */
  guint loops[] = { loop0, loop1 };
  for (guint k = 0; k < 2; k++)
    {
      guint v = k == 0 ? 0 : 1, np;
      const double *p = owb_layout_get_edge_points (l, loops[k], &np);
      double x, y;
      owb_layout_get_node_position (l, v, &x, &y);
      gboolean outside = FALSE;
      for (guint i = 0; i < np; i++)
        outside |= p[2 * i] > x + 50;
      g_assert_true (outside);
    }
  tg_clear (&t);
}

static void
fill_random_dag (TestGraph *t, guint seed, guint n)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  build_dag (t, rand, n, n / 2);
}

static void
test_deterministic (void)
{
  TestGraph t;
  tg_init (&t);
  fill_random_dag (&t, 7, 400);
  tg_edge (&t, 300, 12); /* a cycle too */
  OwbLayoutOptions o = test_options ();
  g_autoptr (OwbLayout) l1 = compute (t.graph, &o);
  g_autoptr (OwbLayout) l2 = compute (t.graph, &o);
  for (guint v = 0; v < t.w->len; v++)
    {
      double x1, y1, x2, y2;
      owb_layout_get_node_position (l1, v, &x1, &y1);
      owb_layout_get_node_position (l2, v, &x2, &y2);
      g_assert_cmpfloat (x1, ==, x2);
      g_assert_cmpfloat (y1, ==, y2);
    }
  for (guint e = 0; e < t.from->len; e++)
    {
      guint n1, n2;
      const double *p1 = owb_layout_get_edge_points (l1, e, &n1);
      const double *p2 = owb_layout_get_edge_points (l2, e, &n2);
      g_assert_cmpmem (p1, n1 * 2 * sizeof (double), p2, n2 * 2 * sizeof (double));
    }
  g_assert_cmpuint (owb_layout_count_crossings (l1), ==, owb_layout_count_crossings (l2));
  tg_clear (&t);
}

static void
test_cancel (void)
{
  TestGraph t;
  tg_init (&t);
  fill_random_dag (&t, 9, 200);
  g_autoptr (GCancellable) c = g_cancellable_new ();
  g_cancellable_cancel (c);
  g_autoptr (GError) error = NULL;
  OwbLayout *l = owb_layout_compute (t.graph, NULL, c, &error);
  g_assert_null (l);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  tg_clear (&t);
}

static gpointer
cancel_later (gpointer data)
{
  g_usleep (20 * 1000);
  g_cancellable_cancel (data);
  return NULL;
}

/* Cancelled while it runs (as the canvas does when the user opens another model): either it
 * finished first, or it stops with G_IO_ERROR_CANCELLED, and nothing leaks or crashes. */
static void
test_cancel_while_running (void)
{
  TestGraph t;
  tg_init (&t);
  fill_random_dag (&t, 17, 20000);
  g_autoptr (GCancellable) c = g_cancellable_new ();
  GThread *thread = g_thread_new ("cancel", cancel_later, c);
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  OwbLayout *l = owb_layout_compute (t.graph, NULL, c, &error);
  g_test_message ("returned after %.0f ms: %s", (g_get_monotonic_time () - t0) / 1000.0,
                  l ? "finished" : "cancelled");
  g_thread_join (thread);
  if (l == NULL)
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  else
    g_assert_no_error (error);
  owb_layout_free (l);
  tg_clear (&t);
}

/* Wider spacing gives wider gaps, and edge_spacing keeps long edges apart from each other. */
static void
test_options_respected (void)
{
  TestGraph t;
  tg_init (&t);
  fill_random_dag (&t, 11, 150);
  OwbLayoutOptions o = test_options ();
  o.node_spacing = 80;
  o.rank_spacing = 100;
  o.edge_spacing = 30;
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  /* y gaps between ranks: at least rank_spacing between the boxes of consecutive ranks. */
  for (guint e = 0; e < t.from->len; e++)
    {
      guint a = FROM (&t, e), b = TO (&t, e);
      if (owb_layout_get_node_rank (l, b) != owb_layout_get_node_rank (l, a) + 1)
        continue;
      double ax, ay, bx, by;
      owb_layout_get_node_position (l, a, &ax, &ay);
      owb_layout_get_node_position (l, b, &bx, &by);
      g_assert_cmpfloat (by, >=, ay + H (&t, a) + o.rank_spacing - EPS);
    }
  /* Bend points of different long edges in the same rank stay edge_spacing apart. */
  for (guint e = 0; e < t.from->len; e++)
    {
      guint np;
      const double *p = owb_layout_get_edge_points (l, e, &np);
      for (guint i = 1; i + 1 < np; i++)
        for (guint f = 0; f < e; f++)
          {
            guint nq;
            const double *q = owb_layout_get_edge_points (l, f, &nq);
            /* Edges of one source share a trunk down the ranks. */
            if (FROM (&t, f) == FROM (&t, e))
              continue;
            for (guint j = 1; j + 1 < nq; j++)
              if (q[2 * j + 1] == p[2 * i + 1])
                g_assert_cmpfloat (fabs (q[2 * j] - p[2 * i]), >=, o.edge_spacing - EPS);
          }
    }
  tg_clear (&t);
}

/* A network-like graph of a few thousand nodes: checks hold at size, not only on toys. */
static void
test_large (void)
{
  TestGraph t;
  tg_init (&t);
  fill_random_dag (&t, 13, 3000);
  OwbLayoutOptions o = test_options ();
  g_autoptr (OwbLayout) l = compute (t.graph, &o);
  check_layout (&t, l, &o);
  tg_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/layout/empty", test_empty);
  g_test_add_func ("/layout/single", test_single);
  g_test_add_func ("/layout/chain", test_chain);
  g_test_add_func ("/layout/trees", test_trees);
  g_test_add_func ("/layout/unavoidable-crossing", test_unavoidable_crossing);
  g_test_add_func ("/layout/random-dags", test_random_dags);
  g_test_add_func ("/layout/sweeps-help", test_sweeps_help);
  g_test_add_func ("/layout/tighten", test_tighten);
  g_test_add_func ("/layout/long-edge", test_long_edge);
  g_test_add_func ("/layout/constants-follow", test_constants_follow);
  g_test_add_func ("/layout/shared-trunk", test_shared_trunk);
  g_test_add_func ("/layout/long-network", test_long_network_stays_narrow);
  g_test_add_func ("/layout/diamond", test_diamond);
  g_test_add_func ("/layout/cycle", test_cycle);
  g_test_add_func ("/layout/self-loop-parallel", test_self_loop_parallel);
  g_test_add_func ("/layout/deterministic", test_deterministic);
  g_test_add_func ("/layout/cancel", test_cancel);
  g_test_add_func ("/layout/cancel-while-running", test_cancel_while_running);
  g_test_add_func ("/layout/options", test_options_respected);
  g_test_add_func ("/layout/large", test_large);
  return g_test_run ();
}
