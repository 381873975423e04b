/* test-optimizer-scale.c: the optimizer is linear in the graph. A chain of residual blocks (Conv,
 * BatchNormalization, Relu, Add, Identity, a duplicated Relu, shared constants) is optimized at
 * every level at two sizes; the work the pass helpers report (nodes_visited: index builds,
 * sweeps, worklist visits) must grow with the node count, not with its square. Outputs of a small
 * chain are checked against the unoptimized model. */
#include "../engine/test-util.h"

#include <math.h>
#include <string.h>

#define C 4
#define HW 4

static const char *
weight (OwbGraph *g, const char *name, int rank, const int64_t *dims, guint32 *seed, float offset)
{
  OwbTensor *t = tu_floats (rank, dims, NULL);
  float *v = t->data;
  for (int64_t i = 0; i < t->nelems; i++)
    {
      *seed = *seed * 1664525u + 1013904223u;
      v[i] = offset + ((*seed >> 8) / 16777216.0f - 0.5f) * 0.2f;
    }
  owb_graph_add_initializer (g, name, t);
  return name;
}

/* Conv + BatchNormalization writing `out` from `x`. */
static void
conv_bn (OwbGraph *g, const char *x, const char *out, int k, const char *tag, guint32 *seed)
{
  const int64_t wd[] = { C, C, 3, 3 }, cd[] = { C };
  g_autofree char *w = g_strdup_printf ("w%d%s", k, tag), *conv = g_strdup_printf ("conv%d%s", k, tag);
  g_autofree char *s = g_strdup_printf ("s%d%s", k, tag), *b = g_strdup_printf ("b%d%s", k, tag);
  g_autofree char *m = g_strdup_printf ("m%d%s", k, tag), *v = g_strdup_printf ("v%d%s", k, tag);
  weight (g, w, 4, wd, seed, 0);
  weight (g, s, 1, cd, seed, 1);
  weight (g, b, 1, cd, seed, 0);
  weight (g, m, 1, cd, seed, 0);
  weight (g, v, 1, cd, seed, 1);
  g_autofree char *conv_in = g_strdup_printf ("%s,%s", x, w);
  OwbNode *n = tu_node (g, "Conv", conv, conv_in, conv);
  OwbAttribute *pads = owb_node_add_attribute (n, "pads", OWB_ATTR_INTS);
  pads->n = 4;
  pads->ints = g_new0 (int64_t, 4);
  for (int i = 0; i < 4; i++)
    pads->ints[i] = 1;
  g_autofree char *bn_in = g_strdup_printf ("%s,%s,%s,%s,%s", conv, s, b, m, v);
  g_autofree char *bn = g_strdup_printf ("bn%d%s", k, tag);
  tu_node (g, "BatchNormalization", bn, bn_in, out);
}

/* About `n_nodes` nodes: blocks of Conv, BN, Relu, Identity, Conv, BN, Add, Relu, and a second
 * Relu of the same input merged by common_subexpression (11 nodes a block). */
static OwbModel *
residual_chain (guint n_nodes)
{
  OwbModel *m = tu_model_new (17);
  OwbGraph *g = m->graph;
  const int64_t dims[] = { 1, C, HW, HW };
  tu_add_value (g->inputs, "x0", OWB_TYPE_FLOAT, 4, dims, NULL);
  guint32 seed = 7;
  int k = 0;
  for (; g->nodes->len + 11 <= n_nodes; k++)
    {
      g_autofree char *x = g_strdup_printf ("x%d", k), *a = g_strdup_printf ("a%d", k);
      g_autofree char *ra = g_strdup_printf ("ra%d", k), *id = g_strdup_printf ("id%d", k);
      g_autofree char *bb = g_strdup_printf ("bb%d", k), *sum = g_strdup_printf ("sum%d", k);
      g_autofree char *y1 = g_strdup_printf ("y1_%d", k), *y2 = g_strdup_printf ("y2_%d", k);
      g_autofree char *next = g_strdup_printf ("x%d", k + 1);
      g_autofree char *n_relu = g_strdup_printf ("relu%d", k), *n_id = g_strdup_printf ("identity%d", k);
      g_autofree char *n_add = g_strdup_printf ("add%d", k), *n_r1 = g_strdup_printf ("out%d_1", k);
      g_autofree char *n_r2 = g_strdup_printf ("out%d_2", k), *n_mix = g_strdup_printf ("mix%d", k);
      conv_bn (g, x, a, k, "a", &seed);
      tu_node (g, "Relu", n_relu, a, ra);
      tu_node (g, "Identity", n_id, ra, id);
      conv_bn (g, id, bb, k, "b", &seed);
      g_autofree char *add_in = g_strdup_printf ("%s,%s", bb, x);
      tu_node (g, "Add", n_add, add_in, sum);
      tu_node (g, "Relu", n_r1, sum, y1);
      tu_node (g, "Relu", n_r2, sum, y2);
      g_autofree char *mix_in = g_strdup_printf ("%s,%s", y1, y2);
      tu_node (g, "Mul", n_mix, mix_in, next);
    }
  g_autofree char *last = g_strdup_printf ("x%d", k);
  tu_add_value (g->outputs, last, OWB_TYPE_FLOAT, 4, dims, NULL);
  return m;
}

static guint64
optimize_work (OwbModel *m, OwbOptimizeLevel level, guint *nodes_after)
{
  OwbOptimizeOptions options;
  owb_optimize_options_init (&options);
  options.level = level;
  options.providers = owb_providers_new_from_list ("cpu", NULL);
  g_autoptr (OwbOptimizeReport) report = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_model_optimize (m, &options, &report, &error));
  g_assert_no_error (error);
  g_ptr_array_unref (options.providers);
  guint64 work = 0;
  for (guint i = 0; i < report->passes->len; i++)
    work += ((const OwbPassReport *) g_ptr_array_index (report->passes, i))->nodes_visited;
  *nodes_after = report->nodes_after;
  return work;
}

static void
test_linear (gconstpointer data)
{
  OwbOptimizeLevel level = GPOINTER_TO_INT (data);
  const guint small = 10000, large = 100000;
  guint after_small = 0, after_large = 0;
  g_autoptr (OwbModel) a = residual_chain (small);
  guint n_small = a->graph->nodes->len;
  guint64 work_small = optimize_work (a, level, &after_small);
  g_autoptr (OwbModel) b = residual_chain (large);
  guint n_large = b->graph->nodes->len;
  guint64 work_large = optimize_work (b, level, &after_large);
  g_test_message ("%s: %u nodes -> %u, %" G_GUINT64_FORMAT " visited; %u nodes -> %u, %" G_GUINT64_FORMAT
                  " visited", owb_optimize_level_to_string (level), n_small, after_small, work_small, n_large,
                  after_large, work_large);
  /* the passes did rewrite the graph: fused, merged, removed */
  g_assert_cmpuint (after_small, <, n_small);
  g_assert_cmpuint (work_small, >, 0);
  /* ten times the nodes may cost ten times the work, with room for a log factor; a quadratic pass
   * costs about a hundred times */
  double ratio = (double) work_large / (double) work_small, nodes_ratio = (double) n_large / n_small;
  g_assert_cmpfloat (ratio, <=, 1.5 * nodes_ratio);
}

/* About `n_nodes` nodes in blocks MatMul → Add → Relu → Mul, every Mul by the one scalar `s`:
 * fuse_matmul_scale folds each Mul into the next MatMul, so the readers of `s` go one by one from
 * the front of their list (the shape of any model whose scalars constant_sharing merged). */
static OwbModel *
shared_scale_chain (guint n_nodes)
{
  OwbModel *m = tu_model_new (17);
  OwbGraph *g = m->graph;
  const int64_t dims[] = { 1, C }, wd[] = { C, C }, bd[] = { C };
  tu_add_value (g->inputs, "x0", OWB_TYPE_FLOAT, 2, dims, NULL);
  guint32 seed = 11;
  const float half = 0.5f;
  owb_graph_add_initializer (g, "s", tu_floats (0, NULL, &half));
  int k = 0;
  for (; g->nodes->len + 4 <= n_nodes; k++)
    {
      g_autofree char *w = g_strdup_printf ("w%d", k), *b = g_strdup_printf ("b%d", k);
      g_autofree char *mm_in = g_strdup_printf ("x%d,%s", k, w), *mm = g_strdup_printf ("mm%d", k);
      g_autofree char *add_in = g_strdup_printf ("%s,%s", mm, b), *add = g_strdup_printf ("add%d", k);
      g_autofree char *relu = g_strdup_printf ("relu%d", k), *mul_in = g_strdup_printf ("%s,s", relu);
      g_autofree char *next = g_strdup_printf ("x%d", k + 1), *mul = g_strdup_printf ("mul%d", k);
      weight (g, w, 2, wd, &seed, 0);
      weight (g, b, 1, bd, &seed, 0);
      tu_node (g, "MatMul", mm, mm_in, mm);
      tu_node (g, "Add", add, add_in, add);
      tu_node (g, "Relu", relu, add, relu);
      tu_node (g, "Mul", mul, mul_in, next);
    }
  g_autofree char *last = g_strdup_printf ("x%d", k);
  tu_add_value (g->outputs, last, OWB_TYPE_FLOAT, 2, dims, NULL);
  return m;
}

/* The work of the passes, readers' lists included, grows with the nodes also when thousands of
 * nodes read one value: 40,000 nodes (10,000 readers of `s`) cost 4.0x the work of 10,000 nodes;
 * when each reader removed shifted the rest of the list, 15x (counting the shifted entries). */
static void
test_linear_shared (void)
{
  const guint small = 10000, large = 40000;
  guint after_small = 0, after_large = 0;
  g_autoptr (OwbModel) a = shared_scale_chain (small);
  guint64 work_small = optimize_work (a, OWB_OPTIMIZE_ALL, &after_small);
  g_autoptr (OwbModel) b = shared_scale_chain (large);
  guint64 work_large = optimize_work (b, OWB_OPTIMIZE_ALL, &after_large);
  g_test_message ("%u nodes -> %u, %" G_GUINT64_FORMAT " visited; %u nodes -> %u, %" G_GUINT64_FORMAT " visited",
                  small, after_small, work_small, large, after_large, work_large);
  /* the Muls were folded: a quarter of the nodes went */
  g_assert_cmpuint (after_small, <=, small * 3 / 4);
  g_assert_cmpfloat ((double) work_large / (double) work_small, <=, 1.5 * large / small);
}

static OwbTensor *
run_once (OwbModel *m, OwbOptimizeLevel level)
{
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", NULL);
  opts.optimize = level;
  g_autoptr (GError) error = NULL;
  OwbSession *s = owb_session_new (m, &opts, &error);
  g_assert_no_error (error);
  g_ptr_array_unref (opts.providers);
  const int64_t dims[] = { 1, C, HW, HW };
  g_autoptr (OwbTensor) x = tu_floats (4, dims, NULL);
  for (int64_t i = 0; i < x->nelems; i++)
    ((float *) x->data)[i] = sinf ((float) i);
  const char *const names[] = { "x0" };
  OwbTensor *const inputs[] = { x };
  OwbTensor *outputs[1] = { NULL };
  g_assert_true (owb_session_run (s, 1, names, inputs, 1, NULL, outputs, NULL, NULL, &error));
  g_assert_no_error (error);
  owb_session_free (s);
  return outputs[0];
}

static void
test_outputs_unchanged (void)
{
  g_autoptr (OwbModel) m = residual_chain (60);
  g_autoptr (OwbTensor) want = run_once (m, OWB_OPTIMIZE_DISABLED);
  for (OwbOptimizeLevel level = OWB_OPTIMIZE_BASIC; level <= OWB_OPTIMIZE_ALL; level++)
    {
      g_autoptr (OwbTensor) got = run_once (m, level);
      g_assert_cmpint (got->nelems, ==, want->nelems);
      for (int64_t i = 0; i < want->nelems; i++)
        {
          float w = ((float *) want->data)[i], v = ((float *) got->data)[i];
          g_assert_cmpfloat (fabsf (w - v), <=, 1e-4f + 1e-4f * fabsf (w));
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/optimizer/scale/outputs-unchanged", test_outputs_unchanged);
  g_test_add_data_func ("/optimizer/scale/linear/basic", GINT_TO_POINTER (OWB_OPTIMIZE_BASIC), test_linear);
  g_test_add_data_func ("/optimizer/scale/linear/all", GINT_TO_POINTER (OWB_OPTIMIZE_ALL), test_linear);
  g_test_add_func ("/optimizer/scale/linear/shared-reader", test_linear_shared);
  return g_test_run ();
}
