/* test-optimizer-basic.c: the basic-level passes (constant folding, no-op elimination, shape
 * simplification, common subexpressions, constant sharing, dead code): graph before/after, the
 * report, and outputs unchanged against the unoptimized model. */
#include "../engine/test-util.h"

#include <math.h>
#include <string.h>
#include "optimizer-test-util.h"

typedef OwbModel *(*BuildFunc) (void);

static const char *const basic_passes[] = { "constant_folding", "eliminate_noops", "shape_simplify",
                                            "common_subexpression", "constant_sharing", "dead_code" };

/* NULL-terminated list of every pass except `only` (NULL: nothing disabled). Free with g_strfreev. */
static char **
passes_except (const char *only)
{
  GPtrArray *list = g_ptr_array_new ();
  guint n = 0;
  const OwbPassInfo *infos = owb_optimize_list_passes (&n);
  for (guint i = 0; only && i < n; i++)
    if (strcmp (infos[i].name, only) != 0)
      g_ptr_array_add (list, g_strdup (infos[i].name));
  g_ptr_array_add (list, NULL);
  return (char **) g_ptr_array_free (list, FALSE);
}

/* Optimizes m in place at level basic with only `only` enabled (all basic passes when NULL). */
static OwbOptimizeReport *
optimize (OwbModel *m, const char *only, gsize fold_max_bytes)
{
  g_auto (GStrv) disabled = passes_except (only);
  OwbOptimizeOptions options;
  owb_optimize_options_init (&options);
  options.level = OWB_OPTIMIZE_BASIC;
  options.disabled_passes = (const char *const *) disabled;
  options.fold_max_bytes = fold_max_bytes;
  return optimize_on_cpu (m, &options);
}

/* "Mul,Add": the op types of the graph's nodes in order. */
static char *
op_list (const OwbGraph *g)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (g->nodes, i);
      g_string_append_printf (s, "%s%s", i ? "," : "", node->op_type);
    }
  return g_string_free (s, FALSE);
}

static const OwbPassReport *
find_pass (const OwbOptimizeReport *report, const char *name)
{
  for (guint i = 0; i < report->passes->len; i++)
    {
      const OwbPassReport *pr = g_ptr_array_index (report->passes, i);
      if (strcmp (pr->pass, name) == 0)
        return pr;
    }
  g_assert_not_reached ();
  return NULL;
}

static gboolean
list_has (GPtrArray *list, const char *name)
{
  for (guint i = 0; i < list->len; i++)
    if (strcmp (g_ptr_array_index (list, i), name) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
near_miss_contains (const OwbPassReport *pr, const char *text)
{
  for (guint i = 0; i < pr->near_misses->len; i++)
    if (strstr (g_ptr_array_index (pr->near_misses, i), text))
      return TRUE;
  return FALSE;
}

static OwbNode *
find_node (const OwbGraph *g, const char *op_type)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      OwbNode *node = g_ptr_array_index (g->nodes, i);
      if (strcmp (node->op_type, op_type) == 0)
        return node;
    }
  return NULL;
}

static OwbTensor *
random_tensor (const OwbValueType *type)
{
  int64_t dims[OWB_MAX_RANK];
  for (int i = 0; i < type->rank; i++)
    {
      g_assert_true (owb_dim_is_known (type->dims[i]));
      dims[i] = type->dims[i].value;
    }
  OwbTensor *t = owb_tensor_new (type->dtype, type->rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    owb_tensor_set_double (t, i, type->dtype == OWB_TYPE_BOOL ? g_test_rand_int_range (0, 2)
                                                              : g_test_rand_double_range (-2.0, 2.0));
  return t;
}

static OwbSession *
session_at (OwbModel *m, OwbOptimizeLevel level, const char *const *disabled)
{
  GError *error = NULL;
  OwbSession *s = opt_session_new (m, level, 1, disabled, &error);
  g_assert_no_error (error);
  return s;
}

/* Runs the model unoptimized and optimized (only `only`, or all basic passes) on the same random
 * inputs; every output must agree within 1e-4 relative. Returns the optimized node count. */
static guint
check_outputs_unchanged (BuildFunc build, const char *only)
{
  g_autoptr (OwbModel) m = build ();
  g_auto (GStrv) disabled = passes_except (only);
  g_autoptr (OwbSession) plain = session_at (m, OWB_OPTIMIZE_DISABLED, NULL);
  g_autoptr (OwbSession) opt = session_at (m, OWB_OPTIMIZE_BASIC, (const char *const *) disabled);
  guint n_in = owb_session_get_n_inputs (plain);
  g_assert_cmpuint (owb_session_get_n_inputs (opt), ==, n_in);
  const char **names = g_new0 (const char *, n_in + 1);
  OwbTensor **inputs = g_new0 (OwbTensor *, n_in + 1);
  for (guint i = 0; i < n_in; i++)
    {
      const OwbValueInfo *info = owb_session_get_input (plain, i);
      names[i] = info->name;
      inputs[i] = random_tensor (&info->type);
    }
  guint n_out = owb_session_get_n_outputs (plain);
  g_assert_cmpuint (owb_session_get_n_outputs (opt), ==, n_out);
  for (guint o = 0; o < n_out; o++)
    g_assert_cmpstr (owb_session_get_output (plain, o)->name, ==, owb_session_get_output (opt, o)->name);
  OwbTensor **want = g_new0 (OwbTensor *, n_out), **got = g_new0 (OwbTensor *, n_out);
  GError *error = NULL;
  g_assert_true (owb_session_run (plain, n_in, names, inputs, n_out, NULL, want, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (owb_session_run (opt, n_in, names, inputs, n_out, NULL, got, NULL, NULL, &error));
  g_assert_no_error (error);
  for (guint o = 0; o < n_out; o++)
    {
      g_assert_cmpint (want[o]->dtype, ==, got[o]->dtype);
      g_assert_true (owb_tensor_same_shape (want[o], got[o]));
      for (int64_t i = 0; i < want[o]->nelems; i++)
        {
          double a = owb_tensor_get_double (want[o], i), b = owb_tensor_get_double (got[o], i);
          g_assert_cmpfloat (fabs (a - b), <=, 1e-4 * MAX (1.0, fabs (a)));
        }
      owb_tensor_unref (want[o]);
      owb_tensor_unref (got[o]);
    }
  guint n_nodes = owb_session_get_graph (opt)->nodes->len;
  for (guint i = 0; i < n_in; i++)
    owb_tensor_unref (inputs[i]);
  g_free (inputs);
  g_free (names);
  g_free (want);
  g_free (got);
  return n_nodes;
}

static OwbTensor *
int64s (int n, const int64_t *values)
{
  int64_t dim = n;
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, &dim, NULL);
  memcpy (t->data, values, n * sizeof (int64_t));
  return t;
}

static OwbNode *
constant_node (OwbGraph *g, const char *name, const char *output, OwbTensor *value)
{
  OwbNode *node = tu_node (g, "Constant", name, NULL, output);
  owb_node_add_attribute (node, "value", OWB_ATTR_TENSOR)->t = value;
  return node;
}

/* ---- constant_folding ---- */

/* y = x * (c1 + c2) with c1 a Constant node and c2 an initializer; then Neg on the sum, so
 * folding must cascade. */
static OwbModel *
build_folding (void)
{
  OwbModel *m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);
  constant_node (m->graph, "c1", "c1_out", tu_floats (1, (int64_t[]){ 3 }, (float[]){ 1, 2, 3 }));
  owb_graph_add_initializer (m->graph, "c2", tu_floats (1, (int64_t[]){ 3 }, (float[]){ 0.5f, 0.25f, -1 }));
  tu_node (m->graph, "Add", "sum", "c1_out,c2", "s");
  tu_node (m->graph, "Neg", "neg", "s", "ns");
  tu_node (m->graph, "Mul", "mul", "x,ns", "y");
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 3 }, NULL);
  return m;
}

static void
test_folding_graph (void)
{
  g_autoptr (OwbModel) m = build_folding ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "constant_folding", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Mul");
  const OwbPassReport *pr = find_pass (report, "constant_folding");
  g_assert_cmpuint (pr->removed->len, ==, 3);
  g_assert_true (list_has (pr->removed, "c1"));
  g_assert_true (list_has (pr->removed, "sum"));
  g_assert_true (list_has (pr->removed, "neg"));
  g_assert_cmpuint (pr->created->len, ==, 0);
  /* The folded value keeps its name, as an initializer the Mul reads. */
  const OwbTensor *ns = owb_graph_get_initializer (m->graph, "ns");
  g_assert_nonnull (ns);
  g_assert_cmpfloat (((float *) ns->data)[0], ==, -1.5f);
  g_assert_cmpfloat (((float *) ns->data)[2], ==, -2.0f);
  g_assert_cmpuint (report->nodes_before, ==, 4);
  g_assert_cmpuint (report->nodes_after, ==, 1);
}

static void
test_folding_outputs (void)
{
  g_assert_cmpuint (check_outputs_unchanged (build_folding, "constant_folding"), ==, 1);
}

/* A ConstantOfShape of 64x64 floats (16 KiB), a Constant node as large, a RandomUniformLike over
 * a constant, and a constant that is itself a graph output. */
static OwbModel *
build_folding_limits (void)
{
  OwbModel *m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ 64, 64 }, NULL);
  owb_graph_add_initializer (m->graph, "shape", int64s (2, (int64_t[]){ 64, 64 }));
  tu_node (m->graph, "ConstantOfShape", "big", "shape", "ones");
  OwbNode *fill = g_ptr_array_index (m->graph->nodes, 0);
  owb_node_add_attribute (fill, "value", OWB_ATTR_TENSOR)->t = tu_floats (1, (int64_t[]){ 1 }, (float[]){ 1 });
  tu_node (m->graph, "Add", "add", "x,ones", "y0");
  /* A Constant as large is shared, not copied: the cap does not hold it back. */
  constant_node (m->graph, "big_constant", "bc", tu_floats (2, (int64_t[]){ 64, 64 }, NULL));
  tu_node (m->graph, "Add", "add2", "y0,bc", "y");
  owb_graph_add_initializer (m->graph, "seed_like", tu_floats (1, (int64_t[]){ 4 }, NULL));
  tu_node (m->graph, "RandomUniformLike", "random", "seed_like", "noise");
  constant_node (m->graph, "k", "k_out", tu_floats (1, (int64_t[]){ 1 }, (float[]){ 7 }));
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 64, 64 }, NULL);
  tu_add_value (m->graph->outputs, "noise", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_add_value (m->graph->outputs, "k_out", OWB_TYPE_FLOAT, 1, (int64_t[]){ 1 }, NULL);
  return m;
}

static void
test_folding_limits (void)
{
  g_autoptr (OwbModel) m = build_folding_limits ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "constant_folding", 1024);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "ConstantOfShape,Add,Add,RandomUniformLike,Constant");
  const OwbPassReport *pr = find_pass (report, "constant_folding");
  g_assert_cmpuint (pr->removed->len, ==, 1);
  g_assert_true (list_has (pr->removed, "big_constant"));
  g_assert_true (near_miss_contains (pr, "16384 bytes, more than the folding cap of 1024"));
  g_assert_true (near_miss_contains (pr, "RandomUniformLike is nondeterministic"));

  /* With the default cap (16 MiB) the fill folds; the random op and the output Constant stay. */
  g_autoptr (OwbModel) m2 = build_folding_limits ();
  g_autoptr (OwbOptimizeReport) report2 = optimize (m2, "constant_folding", 0);
  g_autofree char *ops2 = op_list (m2->graph);
  g_assert_cmpstr (ops2, ==, "Add,Add,RandomUniformLike,Constant");
  g_assert_nonnull (owb_graph_get_initializer (m2->graph, "ones"));
}

/* A Split of a constant (two outputs) folds; a sequence built from constants does not. */
static OwbModel *
build_folding_multi (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  owb_graph_add_initializer (g, "w", tu_floats (1, (int64_t[]){ 4 }, (float[]){ 1, 2, 3, 4 }));
  owb_graph_add_initializer (g, "halves", int64s (2, (int64_t[]){ 2, 2 }));
  tu_node (g, "Split", "split", "w,halves", "p1,p2");
  tu_set_int (tu_node (g, "Concat", "swap", "p2,p1", "q"), "axis", 0);
  tu_node (g, "Mul", "mul", "x,q", "a");
  tu_node (g, "SequenceConstruct", "seq", "w,q", "s");
  tu_set_int (tu_node (g, "ConcatFromSequence", "unseq", "s", "t"), "axis", 0);
  tu_node (g, "ReduceSum", "sum", "t", "total");
  tu_node (g, "Add", "add", "a,total", "y");
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  return m;
}

static void
test_folding_multi (void)
{
  g_autoptr (OwbModel) m = build_folding_multi ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "constant_folding", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Mul,SequenceConstruct,ConcatFromSequence,ReduceSum,Add");
  const OwbTensor *q = owb_graph_get_initializer (m->graph, "q");
  g_assert_nonnull (q);
  g_assert_cmpfloat (((float *) q->data)[0], ==, 3.0f);
  g_assert_cmpfloat (((float *) q->data)[3], ==, 2.0f);
  g_assert_cmpuint (check_outputs_unchanged (build_folding_multi, "constant_folding"), ==, 5);
}

/* Quantized weights stay quantized: DequantizeLinear over constants is not folded. */
static OwbModel *
build_folding_qdq (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  OwbTensor *w = owb_tensor_new (OWB_TYPE_INT8, 1, (int64_t[]){ 4 }, NULL);
  for (int i = 0; i < 4; i++)
    ((int8_t *) w->data)[i] = (int8_t) (i * 10 - 15);
  owb_graph_add_initializer (g, "w_q", w);
  owb_graph_add_initializer (g, "w_scale", owb_tensor_new_scalar_float (0.05f));
  OwbTensor *zp = owb_tensor_new (OWB_TYPE_INT8, 0, NULL, NULL);
  owb_graph_add_initializer (g, "w_zero", zp);
  tu_node (g, "DequantizeLinear", "deq", "w_q,w_scale,w_zero", "w");
  tu_node (g, "Mul", "mul", "x,w", "y");
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  return m;
}

static void
test_folding_qdq (void)
{
  g_autoptr (OwbModel) m = build_folding_qdq ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "constant_folding", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "DequantizeLinear,Mul");
  g_assert_cmpuint (check_outputs_unchanged (build_folding_qdq, NULL), ==, 2);
}

/* ---- eliminate_noops ---- */

/* One of each no-op between x and y, plus ops that look alike but are not no-ops. */
static OwbModel *
build_noops (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]){ 2, 3, 4 }, NULL);
  tu_node (g, "Relu", "relu", "x", "r");
  tu_node (g, "Identity", "id", "r", "a");
  tu_node (g, "Dropout", "drop", "a", "b");
  tu_set_int (tu_node (g, "Cast", "cast_same", "b", "c"), "to", OWB_TYPE_FLOAT);
  owb_graph_add_initializer (g, "same_shape", int64s (3, (int64_t[]){ 2, 3, 4 }));
  tu_node (g, "Reshape", "reshape_same", "c,same_shape", "d");
  owb_graph_add_initializer (g, "flat", int64s (2, (int64_t[]){ 6, 4 }));
  owb_graph_add_initializer (g, "back", int64s (3, (int64_t[]){ 4, 3, 2 }));
  tu_node (g, "Reshape", "reshape_a", "d,flat", "e");
  tu_node (g, "Reshape", "reshape_b", "e,back", "f");
  owb_graph_add_initializer (g, "axes", int64s (1, (int64_t[]){ 1 }));
  tu_node (g, "Unsqueeze", "unsq", "f,axes", "g");
  tu_node (g, "Squeeze", "sq", "g,axes", "h");
  owb_graph_add_initializer (g, "starts", int64s (2, (int64_t[]){ 0, -100 }));
  owb_graph_add_initializer (g, "ends", int64s (2, (int64_t[]){ G_MAXINT64, 3 }));
  owb_graph_add_initializer (g, "slice_axes", int64s (2, (int64_t[]){ 0, -2 }));
  tu_node (g, "Slice", "slice_all", "h,starts,ends,slice_axes", "i");
  owb_graph_add_initializer (g, "ones", int64s (2, (int64_t[]){ 1, 1 }));
  tu_node (g, "Expand", "expand_same", "i,ones", "j");
  tu_set_ints (tu_node (g, "Transpose", "tr_id", "j", "k"), "perm", 3, (int64_t[]){ 0, 1, 2 });
  /* Not no-ops: a real transpose, a real slice, a cast to another type. */
  tu_set_ints (tu_node (g, "Transpose", "tr_real", "k", "l"), "perm", 3, (int64_t[]){ 0, 2, 1 });
  owb_graph_add_initializer (g, "one", int64s (1, (int64_t[]){ 1 }));
  owb_graph_add_initializer (g, "big", int64s (1, (int64_t[]){ G_MAXINT64 }));
  tu_node (g, "Slice", "slice_part", "l,one,big,one", "m");
  tu_set_int (tu_node (g, "Cast", "cast_double", "m", "n"), "to", OWB_TYPE_DOUBLE);
  /* The output keeps its name when its Identity goes. */
  tu_node (g, "Identity", "id_out", "n", "y");
  tu_add_value (g->outputs, "y", OWB_TYPE_DOUBLE, 3, (int64_t[]){ 4, 1, 3 }, NULL);
  return m;
}

static void
test_noops_graph (void)
{
  g_autoptr (OwbModel) m = build_noops ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "eliminate_noops", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Relu,Reshape,Transpose,Slice,Cast");
  const OwbPassReport *pr = find_pass (report, "eliminate_noops");
  const char *gone[] = { "id",   "drop", "cast_same",   "reshape_same", "reshape_a", "reshape_b",
                         "unsq", "sq",   "slice_all", "expand_same",  "tr_id",     "id_out" };
  for (guint i = 0; i < G_N_ELEMENTS (gone); i++)
    g_assert_true (list_has (pr->removed, gone[i]));
  /* Reshape(Reshape(x)) became one Reshape that records both. */
  g_assert_cmpuint (pr->created->len, ==, 1);
  const OwbOptimizeCreated *c = g_ptr_array_index (pr->created, 0);
  g_assert_cmpstr (c->op_type, ==, "Reshape");
  g_assert_true (list_has (c->from, "reshape_b"));
  g_assert_true (list_has (c->from, "reshape_a"));
  OwbNode *reshape = find_node (m->graph, "Reshape");
  g_assert_cmpstr (reshape->inputs[0], ==, "r");
  g_assert_cmpstr (reshape->inputs[1], ==, "back");
  /* The last Cast writes the graph output directly. */
  OwbNode *cast = find_node (m->graph, "Cast");
  g_assert_cmpstr (cast->outputs[0], ==, "y");
  g_assert_cmpstr (((OwbValueInfo *) g_ptr_array_index (m->graph->outputs, 0))->name, ==, "y");
}

static void
test_noops_outputs (void)
{
  g_assert_cmpuint (check_outputs_unchanged (build_noops, "eliminate_noops"), ==, 5);
}

/* Near misses and things that must stay: Dropout whose mask is read, Dropout in training mode
 * given by a graph input, an Identity from a graph input to a graph output, Reshape(Reshape)
 * whose outer target copies a dim (0), Squeeze of other axes. */
static OwbModel *
build_noops_kept (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ 4, 6 }, NULL);
  tu_add_value (g->inputs, "train", OWB_TYPE_BOOL, 0, NULL, NULL);
  tu_node (g, "Dropout", "drop_mask", "x", "a,mask");
  tu_set_int (tu_node (g, "Cast", "mask_cast", "mask", "mask_f"), "to", OWB_TYPE_FLOAT);
  tu_node (g, "Add", "add", "a,mask_f", "b");
  owb_graph_add_initializer (g, "ratio", owb_tensor_new_scalar_float (0.0f));
  tu_node (g, "Dropout", "drop_train", "b,ratio,train", "c");
  owb_graph_add_initializer (g, "s1", int64s (3, (int64_t[]){ 2, 2, 6 }));
  owb_graph_add_initializer (g, "s2", int64s (2, (int64_t[]){ 0, -1 }));
  tu_node (g, "Reshape", "r1", "c,s1", "d");
  tu_node (g, "Reshape", "r2", "d,s2", "e");
  owb_graph_add_initializer (g, "ax0", int64s (1, (int64_t[]){ 0 }));
  owb_graph_add_initializer (g, "ax2", int64s (1, (int64_t[]){ 2 }));
  tu_node (g, "Unsqueeze", "unsq", "e,ax0", "f");
  tu_node (g, "Unsqueeze", "unsq2", "f,ax2", "f2");
  tu_node (g, "Squeeze", "sq", "f2,ax0", "y");
  tu_node (g, "Identity", "pass_through", "x", "x_copy");
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 3, (int64_t[]){ 2, 1, 12 }, NULL);
  tu_add_value (g->outputs, "x_copy", OWB_TYPE_FLOAT, 2, (int64_t[]){ 4, 6 }, NULL);
  return m;
}

static void
test_noops_kept (void)
{
  g_autoptr (OwbModel) m = build_noops_kept ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "eliminate_noops", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Dropout,Cast,Add,Dropout,Reshape,Reshape,Unsqueeze,Unsqueeze,Squeeze,Identity");
  const OwbPassReport *pr = find_pass (report, "eliminate_noops");
  g_assert_cmpuint (pr->removed->len, ==, 0);
  g_assert_true (near_miss_contains (pr, "mask output 'mask' is used"));
  g_assert_true (near_miss_contains (pr, "training_mode is not a constant"));
  g_assert_true (near_miss_contains (pr, "copies dim 0 from the Reshape 'r1'"));
}

static void
test_noops_kept_outputs (void)
{
  g_assert_cmpuint (check_outputs_unchanged (build_noops_kept, "eliminate_noops"), ==, 10);
}

/* Opset 7 Dropout (no training mode), Squeeze/Unsqueeze axes as attributes (opset < 13) and
 * a Squeeze without axes where the input has no dim of 1. */
static OwbModel *
build_noops_opset11 (void)
{
  OwbModel *m = tu_model_new (11);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 5 }, NULL);
  tu_node (g, "Dropout", "drop", "x", "a");
  tu_set_ints (tu_node (g, "Unsqueeze", "unsq", "a", "b"), "axes", 2, (int64_t[]){ -1, 0 });
  tu_set_ints (tu_node (g, "Squeeze", "sq", "b", "c"), "axes", 2, (int64_t[]){ 3, 0 });
  tu_set_ints (tu_node (g, "Unsqueeze", "unsq2", "c", "d"), "axes", 1, (int64_t[]){ 1 });
  tu_node (g, "Squeeze", "sq_all", "d", "e");
  tu_node (g, "Sigmoid", "sig", "e", "y");
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 5 }, NULL);
  return m;
}

static void
test_noops_opset11 (void)
{
  g_autoptr (OwbModel) m = build_noops_opset11 ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "eliminate_noops", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Sigmoid");
  g_assert_cmpstr (find_node (m->graph, "Sigmoid")->inputs[0], ==, "x");
  g_assert_cmpuint (check_outputs_unchanged (build_noops_opset11, "eliminate_noops"), ==, 1);
}

/* Reshapes over a symbolic batch: one open dim is pinned by the element count, two are not. */
static OwbModel *
build_noops_symbolic (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  const char *params[] = { "batch", "seq" };
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ -2, 6 }, params);
  tu_add_value (g->inputs, "z", OWB_TYPE_FLOAT, 2, (int64_t[]){ -2, -2 }, params);
  owb_graph_add_initializer (g, "rows", int64s (2, (int64_t[]){ -1, 6 }));
  tu_node (g, "Reshape", "same", "x,rows", "a");
  tu_node (g, "Shape", "zs", "z", "zshape");
  tu_node (g, "Reshape", "open2", "z,zshape", "b");
  tu_node (g, "Relu", "relu_a", "a", "ya");
  tu_node (g, "Relu", "relu_b", "b", "yb");
  tu_add_value (g->outputs, "ya", OWB_TYPE_FLOAT, 2, (int64_t[]){ -2, 6 }, params);
  tu_add_value (g->outputs, "yb", OWB_TYPE_FLOAT, 2, (int64_t[]){ -2, -2 }, params);
  return m;
}

static void
test_noops_symbolic (void)
{
  g_autoptr (OwbModel) m = build_noops_symbolic ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "eliminate_noops", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Shape,Reshape,Relu,Relu");
  g_assert_true (list_has (find_pass (report, "eliminate_noops")->removed, "same"));
}

/* Pads of zeros (PyTorch's before each AvgPool2d: DenseNet's transitions) and a Concat of one
 * input (torch.cat of a one-element list) pass their input through; a Pad with a real border, an
 * opset-10 Pad whose attribute pads are zero (removed) and a two-input Concat stay. */
static OwbModel *
build_noops_pad (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 2, 3, 3 }, NULL);
  owb_graph_add_initializer (g, "zeros", int64s (8, (int64_t[]){ 0, 0, 0, 0, 0, 0, 0, 0 }));
  owb_graph_add_initializer (g, "border", int64s (8, (int64_t[]){ 0, 0, 1, 0, 0, 0, 0, 1 }));
  tu_set_string (tu_node (g, "Pad", "pad_zero", "x,zeros", "a"), "mode", "reflect");
  tu_set_int (tu_node (g, "Concat", "cat_one", "a", "b"), "axis", 1);
  tu_node (g, "Relu", "relu", "b", "c");
  tu_node (g, "Pad", "pad_real", "c,border", "d");
  tu_set_int (tu_node (g, "Concat", "cat_two", "d,d", "y"), "axis", 1);
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 4, 4, 4 }, NULL);
  return m;
}

static OwbModel *
build_noops_pad_opset10 (void)
{
  OwbModel *m = tu_model_new (10);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 5 }, NULL);
  tu_set_ints (tu_node (g, "Pad", "pad_zero", "x", "a"), "pads", 4, (int64_t[]){ 0, 0, 0, 0 });
  tu_node (g, "Sigmoid", "sig", "a", "b");
  tu_set_ints (tu_node (g, "Pad", "pad_real", "b", "y"), "pads", 4, (int64_t[]){ 1, 0, 0, 0 });
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 4, 5 }, NULL);
  return m;
}

static void
test_noops_pad (void)
{
  g_autoptr (OwbModel) m = build_noops_pad ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "eliminate_noops", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Relu,Pad,Concat");
  g_assert_cmpstr (find_node (m->graph, "Relu")->inputs[0], ==, "x");
  const OwbPassReport *pr = find_pass (report, "eliminate_noops");
  g_assert_true (list_has (pr->removed, "pad_zero"));
  g_assert_true (list_has (pr->removed, "cat_one"));
  g_assert_cmpuint (check_outputs_unchanged (build_noops_pad, "eliminate_noops"), ==, 3);

  g_autoptr (OwbModel) m10 = build_noops_pad_opset10 ();
  g_autoptr (OwbOptimizeReport) report10 = optimize (m10, "eliminate_noops", 0);
  g_autofree char *ops10 = op_list (m10->graph);
  g_assert_cmpstr (ops10, ==, "Sigmoid,Pad");
  g_assert_cmpuint (check_outputs_unchanged (build_noops_pad_opset10, "eliminate_noops"), ==, 2);
}

/* ---- shape_simplify ---- */

/* z = Reshape(x, Concat(Gather(Shape(x), 0), [-1])) * Size(x) * ReduceProd(Shape(x, start=-2)):
 * everything but the Reshape and the Muls folds away. */
static OwbModel *
build_shapes (void)
{
  OwbModel *m = tu_model_new (15);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]){ 2, 3, 4 }, NULL);
  tu_node (g, "Shape", "shape", "x", "sh");
  owb_graph_add_initializer (g, "zero", owb_tensor_new_scalar_int64 (0));
  tu_node (g, "Gather", "gather", "sh,zero", "batch");
  owb_graph_add_initializer (g, "ax0", int64s (1, (int64_t[]){ 0 }));
  tu_node (g, "Unsqueeze", "unsq", "batch,ax0", "batch1");
  owb_graph_add_initializer (g, "minus1", int64s (1, (int64_t[]){ -1 }));
  tu_set_int (tu_node (g, "Concat", "concat", "batch1,minus1", "target"), "axis", 0);
  tu_node (g, "Reshape", "reshape", "x,target", "flat");
  tu_node (g, "Size", "size", "x", "n");
  tu_set_int (tu_node (g, "Cast", "cast", "n", "nf"), "to", OWB_TYPE_FLOAT);
  tu_node (g, "Mul", "mul", "flat,nf", "y");
  OwbNode *tail = tu_node (g, "Shape", "tail", "x", "tail_dims");
  tu_set_int (tail, "start", -2);
  tu_set_int (tail, "end", 100);
  tu_node (g, "ReduceProd", "prod", "tail_dims", "tail_prod");
  tu_set_int (tu_node (g, "Cast", "prod_cast", "tail_prod", "tail_f"), "to", OWB_TYPE_FLOAT);
  tu_node (g, "Mul", "mul2", "y,tail_f", "z");
  tu_add_value (g->outputs, "z", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 12 }, NULL);
  return m;
}

static void
test_shapes_graph (void)
{
  g_autoptr (OwbModel) m = build_shapes ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "shape_simplify", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Reshape,Mul,Mul");
  const OwbPassReport *pr = find_pass (report, "shape_simplify");
  g_assert_true (list_has (pr->removed, "shape"));
  g_assert_true (list_has (pr->removed, "size"));
  g_assert_true (list_has (pr->removed, "concat"));
  g_assert_true (list_has (pr->removed, "prod"));
  const OwbTensor *target = owb_graph_get_initializer (m->graph, "target");
  g_assert_nonnull (target);
  g_assert_cmpint (target->nelems, ==, 2);
  g_assert_cmpint (((int64_t *) target->data)[0], ==, 2);
  g_assert_cmpint (((int64_t *) target->data)[1], ==, -1);
  const OwbTensor *n = owb_graph_get_initializer (m->graph, "nf");
  g_assert_nonnull (n);
  g_assert_cmpfloat (((float *) n->data)[0], ==, 24.0f);
  /* Shape with start = -2 and end past the rank: the last two dims. */
  const OwbTensor *tail_dims = owb_graph_get_initializer (m->graph, "tail_dims");
  g_assert_nonnull (tail_dims);
  g_assert_cmpint (tail_dims->nelems, ==, 2);
  g_assert_cmpint (((int64_t *) tail_dims->data)[0], ==, 3);
  g_assert_cmpint (((int64_t *) tail_dims->data)[1], ==, 4);
  const OwbTensor *tail_f = owb_graph_get_initializer (m->graph, "tail_f");
  g_assert_nonnull (tail_f);
  g_assert_cmpfloat (((float *) tail_f->data)[0], ==, 12.0f);
}

static void
test_shapes_outputs (void)
{
  g_assert_cmpuint (check_outputs_unchanged (build_shapes, "shape_simplify"), ==, 3);
}

/* Shape of a value with a symbolic dim stays. */
static void
test_shapes_symbolic (void)
{
  OwbModel *m = tu_model_new (13);
  const char *params[] = { "batch", NULL };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ -2, 4 }, params);
  tu_node (m->graph, "Shape", "shape", "x", "y");
  tu_node (m->graph, "Shape", "shape2", "x", "s2");
  tu_node (m->graph, "Size", "size", "s2", "n");
  tu_set_int (tu_node (m->graph, "Cast", "cast", "n", "z"), "to", OWB_TYPE_FLOAT);
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
  tu_add_value (m->graph->outputs, "z", OWB_TYPE_FLOAT, 0, NULL, NULL);
  g_autoptr (OwbOptimizeReport) report = optimize (m, "shape_simplify", 0);
  g_autofree char *ops = op_list (m->graph);
  /* Shape(x) has a known length 2, so Size of it becomes a constant; Shape(x) itself stays,
   * and so does the Cast that writes a graph output. */
  g_assert_cmpstr (ops, ==, "Shape,Shape,Cast");
  g_assert_nonnull (owb_graph_get_initializer (m->graph, "n"));
  owb_model_unref (m);
}

/* ---- common_subexpression ---- */

static OwbModel *
build_cse (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 4 }, NULL);
  tu_node (g, "Relu", "relu1", "x", "r1");
  tu_node (g, "Relu", "relu2", "x", "r2");
  /* Equal after the Relus merge: a chain that collapses in one sweep. */
  tu_set_ints (tu_node (g, "Transpose", "t1", "r1", "t1o"), "perm", 2, (int64_t[]){ 1, 0 });
  tu_set_ints (tu_node (g, "Transpose", "t2", "r2", "t2o"), "perm", 2, (int64_t[]){ 1, 0 });
  /* Different attribute values: kept apart. */
  tu_set_int (tu_node (g, "Softmax", "sm0", "x", "sm0o"), "axis", 0);
  tu_set_int (tu_node (g, "Softmax", "sm1", "x", "sm1o"), "axis", 1);
  /* Equal tensor attributes (ConstantOfShape value), compared by content. */
  owb_graph_add_initializer (g, "shape", int64s (2, (int64_t[]){ 3, 4 }));
  owb_node_add_attribute (tu_node (g, "ConstantOfShape", "fill1", "shape", "f1"), "value", OWB_ATTR_TENSOR)->t
      = tu_floats (1, (int64_t[]){ 1 }, (float[]){ 2 });
  owb_node_add_attribute (tu_node (g, "ConstantOfShape", "fill2", "shape", "f2"), "value", OWB_ATTR_TENSOR)->t
      = tu_floats (1, (int64_t[]){ 1 }, (float[]){ 2 });
  /* Distinct initializers of equal contents count as the same input; other contents do not. */
  owb_graph_add_initializer (g, "k1", tu_floats (1, (int64_t[]){ 4 }, (float[]){ 1, 2, 3, 4 }));
  owb_graph_add_initializer (g, "k2", tu_floats (1, (int64_t[]){ 4 }, (float[]){ 1, 2, 3, 4 }));
  owb_graph_add_initializer (g, "k3", tu_floats (1, (int64_t[]){ 4 }, (float[]){ 1, 2, 3, 5 }));
  tu_node (g, "Mul", "mul1", "x,k1", "m1");
  tu_node (g, "Mul", "mul2", "x,k2", "m2");
  tu_node (g, "Mul", "mul3", "x,k3", "m3");
  tu_node (g, "Sum", "a4", "m1,m2,m3", "s4");
  tu_add_value (g->outputs, "s4", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 4 }, NULL);
  /* Nondeterministic: never merged. */
  tu_node (g, "RandomUniformLike", "rand1", "x", "n1");
  tu_node (g, "RandomUniformLike", "rand2", "x", "n2");
  tu_node (g, "Sub", "zero_noise", "n1,n2", "noise_diff");
  tu_node (g, "Add", "a1", "t1o,t2o", "s1");
  tu_node (g, "Add", "a2", "sm0o,sm1o", "s2");
  tu_node (g, "Add", "a3", "f1,f2", "s3");
  tu_add_value (g->outputs, "s1", OWB_TYPE_FLOAT, 2, (int64_t[]){ 4, 3 }, NULL);
  tu_add_value (g->outputs, "s2", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 4 }, NULL);
  tu_add_value (g->outputs, "s3", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 4 }, NULL);
  /* Two graph outputs computed alike: both keep their own node (outputs cannot share a value). */
  tu_node (g, "Neg", "neg1", "x", "o1");
  tu_node (g, "Neg", "neg2", "x", "o2");
  tu_add_value (g->outputs, "o1", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 4 }, NULL);
  tu_add_value (g->outputs, "o2", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 4 }, NULL);
  return m;
}

static void
test_cse_graph (void)
{
  g_autoptr (OwbModel) m = build_cse ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "common_subexpression", 0);
  const OwbPassReport *pr = find_pass (report, "common_subexpression");
  g_assert_cmpuint (pr->removed->len, ==, 4);
  g_assert_true (list_has (pr->removed, "mul2"));
  g_assert_true (list_has (pr->removed, "relu2"));
  g_assert_true (list_has (pr->removed, "t2"));
  g_assert_true (list_has (pr->removed, "fill2"));
  OwbNode *add = NULL;
  for (guint i = 0; i < m->graph->nodes->len; i++)
    {
      OwbNode *node = g_ptr_array_index (m->graph->nodes, i);
      if (strcmp (node->name, "a1") == 0)
        add = node;
    }
  g_assert_nonnull (add);
  g_assert_cmpstr (add->inputs[0], ==, "t1o");
  g_assert_cmpstr (add->inputs[1], ==, "t1o");
  g_autofree char *ops = op_list (m->graph);
  g_assert_nonnull (strstr (ops, "RandomUniformLike,RandomUniformLike"));
  g_assert_nonnull (strstr (ops, "Softmax,Softmax"));
  g_assert_nonnull (strstr (ops, "Neg,Neg"));
  g_assert_nonnull (strstr (ops, "Mul,Mul,Sum"));
}

static OwbModel *
build_cse_deterministic (void)
{
  OwbModel *m = build_cse ();
  /* Random outputs differ run to run: compare without them. */
  for (guint i = 0; i < m->graph->nodes->len;)
    {
      OwbNode *node = g_ptr_array_index (m->graph->nodes, i);
      if (strcmp (node->op_type, "RandomUniformLike") == 0 || strcmp (node->name, "zero_noise") == 0)
        g_ptr_array_remove_index (m->graph->nodes, i);
      else
        i++;
    }
  return m;
}

static void
test_cse_outputs (void)
{
  /* 17 nodes less relu2, t2, fill2, mul2. */
  g_assert_cmpuint (check_outputs_unchanged (build_cse_deterministic, "common_subexpression"), ==, 13);
}

/* ---- constant_sharing ---- */

static OwbModel *
build_sharing (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, NULL);
  owb_graph_add_initializer (g, "w1", tu_floats (1, (int64_t[]){ 3 }, (float[]){ 1, 2, 3 }));
  owb_graph_add_initializer (g, "w2", tu_floats (1, (int64_t[]){ 3 }, (float[]){ 1, 2, 3 }));
  owb_graph_add_initializer (g, "w3", tu_floats (1, (int64_t[]){ 3 }, (float[]){ 1, 2, 4 }));
  /* Same bytes, other shape: kept. */
  owb_graph_add_initializer (g, "w4", tu_floats (2, (int64_t[]){ 1, 3 }, (float[]){ 1, 2, 3 }));
  /* Same contents but an overridable input: kept. */
  owb_graph_add_initializer (g, "w5", tu_floats (1, (int64_t[]){ 3 }, (float[]){ 1, 2, 3 }));
  tu_add_value (g->inputs, "w5", OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, NULL);
  tu_node (g, "Add", "a1", "x,w1", "y1");
  tu_node (g, "Mul", "m2", "y1,w2", "y2");
  tu_node (g, "Sub", "s3", "y2,w3", "y3");
  tu_node (g, "Add", "a4", "y3,w4", "y4");
  tu_node (g, "Add", "a5", "y4,w5", "y");
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 1, 3 }, NULL);
  return m;
}

static void
test_sharing_graph (void)
{
  g_autoptr (OwbModel) m = build_sharing ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "constant_sharing", 0);
  const OwbPassReport *pr = find_pass (report, "constant_sharing");
  g_assert_cmpuint (pr->n_removed_initializers, ==, 1);
  g_assert_null (owb_graph_get_initializer (m->graph, "w2"));
  g_assert_nonnull (owb_graph_get_initializer (m->graph, "w1"));
  g_assert_nonnull (owb_graph_get_initializer (m->graph, "w3"));
  g_assert_nonnull (owb_graph_get_initializer (m->graph, "w4"));
  g_assert_nonnull (owb_graph_get_initializer (m->graph, "w5"));
  g_assert_cmpstr (((OwbNode *) g_ptr_array_index (m->graph->nodes, 1))->inputs[1], ==, "w1");
  g_assert_cmpuint (m->graph->nodes->len, ==, 5);
}

static void
test_sharing_outputs (void)
{
  g_assert_cmpuint (check_outputs_unchanged (build_sharing, "constant_sharing"), ==, 5);
}

/* ---- dead_code ---- */

/* A dead branch, an unused initializer, and a value only an If's branch reads (alive). */
static OwbModel *
build_dead (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_add_value (g->inputs, "cond", OWB_TYPE_BOOL, 0, NULL, NULL);
  owb_graph_add_initializer (g, "unused_w", tu_floats (1, (int64_t[]){ 4 }, NULL));
  owb_graph_add_initializer (g, "dead_w", tu_floats (1, (int64_t[]){ 4 }, (float[]){ 1, 1, 1, 1 }));
  tu_node (g, "Add", "dead_add", "x,dead_w", "d1");
  tu_node (g, "Relu", "dead_relu", "d1", "d2");
  tu_node (g, "Exp", "exp", "x", "e0");
  tu_node (g, "Identity", "id_read_by_branch", "e0", "e");
  tu_node (g, "Neg", "neg", "x", "n");
  /* then: Identity(e); else: Identity(n): both values are read only by the branches. */
  OwbGraph *then_g = owb_graph_new ("then");
  OwbGraph *else_g = owb_graph_new ("else");
  tu_node (then_g, "Identity", "then_id", "e", "t_out");
  tu_node (else_g, "Identity", "else_id", "n", "e_out");
  tu_add_value (then_g->outputs, "t_out", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_add_value (else_g->outputs, "e_out", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  OwbNode *node_if = owb_node_new ("If", "", "if");
  owb_node_add_input (node_if, "cond");
  owb_node_add_output (node_if, "y");
  owb_node_add_attribute (node_if, "then_branch", OWB_ATTR_GRAPH)->g = then_g;
  owb_node_add_attribute (node_if, "else_branch", OWB_ATTR_GRAPH)->g = else_g;
  owb_graph_add_node (g, node_if);
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  return m;
}

static void
test_dead_graph (void)
{
  g_autoptr (OwbModel) m = build_dead ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, "dead_code", 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Exp,Identity,Neg,If");
  const OwbPassReport *pr = find_pass (report, "dead_code");
  g_assert_cmpuint (pr->removed->len, ==, 2);
  g_assert_true (list_has (pr->removed, "dead_add"));
  g_assert_true (list_has (pr->removed, "dead_relu"));
  g_assert_cmpuint (pr->n_removed_initializers, ==, 2);
  g_assert_null (owb_graph_get_initializer (m->graph, "unused_w"));
  g_assert_null (owb_graph_get_initializer (m->graph, "dead_w"));
  /* No value info is left for the values that are gone. */
  g_assert_null (owb_graph_find_value_info (m->graph, "d1"));
}

static void
test_dead_outputs (void)
{
  g_assert_cmpuint (check_outputs_unchanged (build_dead, "dead_code"), ==, 4);
}

/* Values a subgraph reads by name stay: the Identity that writes one is not bypassed. */
static void
test_subgraph_reads (void)
{
  g_autoptr (OwbModel) m = build_dead ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, NULL, 0);
  g_autofree char *ops = op_list (m->graph);
  g_assert_cmpstr (ops, ==, "Exp,Identity,Neg,If");
  g_assert_true (near_miss_contains (find_pass (report, "eliminate_noops"), "output 'e' is read by a subgraph"));
  g_assert_cmpuint (check_outputs_unchanged (build_dead, NULL), ==, 4);
}

/* ---- the level as a whole ---- */

/* A small transformer-like front: Shape/Gather/Concat/Reshape on a static input, a duplicated
 * Transpose, Identity and Dropout, constants shared, a dead side branch. */
static OwbModel *
build_mixed (void)
{
  OwbModel *m = tu_model_new (14);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]){ 2, 4, 6 }, NULL);
  tu_node (g, "Shape", "shape", "x", "sh");
  constant_node (g, "idx", "idx_out", owb_tensor_new_scalar_int64 (1));
  tu_node (g, "Gather", "gather", "sh,idx_out", "seq");
  constant_node (g, "ax", "ax_out", int64s (1, (int64_t[]){ 0 }));
  tu_node (g, "Unsqueeze", "unsq", "seq,ax_out", "seq1");
  constant_node (g, "rest", "rest_out", int64s (2, (int64_t[]){ 2, 6 }));
  tu_set_int (tu_node (g, "Concat", "cat", "seq1,rest_out", "target"), "axis", 0);
  tu_node (g, "Identity", "id", "x", "xi");
  tu_set_ints (tu_node (g, "Transpose", "ta", "xi", "xt"), "perm", 3, (int64_t[]){ 1, 0, 2 });
  tu_set_ints (tu_node (g, "Transpose", "tb", "xi", "xt2"), "perm", 3, (int64_t[]){ 1, 0, 2 });
  tu_node (g, "Reshape", "reshape", "xt,target", "r");
  tu_node (g, "Dropout", "drop", "r", "rd");
  owb_graph_add_initializer (g, "w1", tu_floats (1, (int64_t[]){ 6 }, (float[]){ 1, 2, 3, 4, 5, 6 }));
  owb_graph_add_initializer (g, "w2", tu_floats (1, (int64_t[]){ 6 }, (float[]){ 1, 2, 3, 4, 5, 6 }));
  tu_node (g, "Mul", "mul", "rd,w1", "a");
  tu_node (g, "Mul", "mul_b", "xt2,w2", "b");
  tu_node (g, "Add", "add", "a,b", "y");
  tu_node (g, "Sigmoid", "unused", "a", "dead");
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 3, (int64_t[]){ 4, 2, 6 }, NULL);
  return m;
}

static void
test_mixed_graph (void)
{
  g_autoptr (OwbModel) m = build_mixed ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, NULL, 0);
  g_assert_cmpuint (report->passes->len, ==, G_N_ELEMENTS (basic_passes));
  for (guint i = 0; i < G_N_ELEMENTS (basic_passes); i++)
    g_assert_true (find_pass (report, basic_passes[i]));
  /* What remains does not depend on the order of the passes: the shape computation, the
   * Identity, the Dropout, the duplicate Transpose and the dead Sigmoid are gone. */
  const char *gone[] = { "Shape", "Gather", "Unsqueeze", "Concat", "Identity", "Dropout", "Sigmoid", "Constant" };
  for (guint i = 0; i < G_N_ELEMENTS (gone); i++)
    g_assert_null (find_node (m->graph, gone[i]));
  guint n_transpose = 0;
  for (guint i = 0; i < m->graph->nodes->len; i++)
    n_transpose += strcmp (((OwbNode *) g_ptr_array_index (m->graph->nodes, i))->op_type, "Transpose") == 0;
  g_assert_cmpuint (n_transpose, ==, 1);
  g_assert_null (owb_graph_get_initializer (m->graph, "w2"));
  g_assert_cmpuint (report->nodes_before, ==, 16);
  g_assert_cmpuint (report->nodes_after, <=, 5);
}

static void
test_mixed_outputs (void)
{
  g_assert_cmpuint (check_outputs_unchanged (build_mixed, NULL), <=, 5);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/optimizer/basic/constant-folding/graph", test_folding_graph);
  g_test_add_func ("/optimizer/basic/constant-folding/outputs", test_folding_outputs);
  g_test_add_func ("/optimizer/basic/constant-folding/limits", test_folding_limits);
  g_test_add_func ("/optimizer/basic/constant-folding/multi", test_folding_multi);
  g_test_add_func ("/optimizer/basic/constant-folding/qdq", test_folding_qdq);
  g_test_add_func ("/optimizer/basic/eliminate-noops/graph", test_noops_graph);
  g_test_add_func ("/optimizer/basic/eliminate-noops/outputs", test_noops_outputs);
  g_test_add_func ("/optimizer/basic/eliminate-noops/kept", test_noops_kept);
  g_test_add_func ("/optimizer/basic/eliminate-noops/kept-outputs", test_noops_kept_outputs);
  g_test_add_func ("/optimizer/basic/eliminate-noops/opset11", test_noops_opset11);
  g_test_add_func ("/optimizer/basic/eliminate-noops/symbolic", test_noops_symbolic);
  g_test_add_func ("/optimizer/basic/eliminate-noops/pad-concat", test_noops_pad);
  g_test_add_func ("/optimizer/basic/shape-simplify/graph", test_shapes_graph);
  g_test_add_func ("/optimizer/basic/shape-simplify/outputs", test_shapes_outputs);
  g_test_add_func ("/optimizer/basic/shape-simplify/symbolic", test_shapes_symbolic);
  g_test_add_func ("/optimizer/basic/common-subexpression/graph", test_cse_graph);
  g_test_add_func ("/optimizer/basic/common-subexpression/outputs", test_cse_outputs);
  g_test_add_func ("/optimizer/basic/constant-sharing/graph", test_sharing_graph);
  g_test_add_func ("/optimizer/basic/constant-sharing/outputs", test_sharing_outputs);
  g_test_add_func ("/optimizer/basic/dead-code/graph", test_dead_graph);
  g_test_add_func ("/optimizer/basic/dead-code/outputs", test_dead_outputs);
  g_test_add_func ("/optimizer/basic/dead-code/subgraph-reads", test_subgraph_reads);
  g_test_add_func ("/optimizer/basic/level/graph", test_mixed_graph);
  g_test_add_func ("/optimizer/basic/level/outputs", test_mixed_outputs);
  return g_test_run ();
}
