/* test-optimizer-fuse-nn.c: the CNN/MLP fusions (Conv+BatchNormalization/Mul/Add, MatMul scale,
 * Transpose+MatMul, MatMul+Add, activations and residuals) and the kernels of the fused ops they
 * create: each rewrite's nodes and provenance, outputs unchanged against the unoptimized model,
 * near misses, portable mode, and the fused ops' inference and errors. */
#include "../engine/test-util.h"

#include <math.h>
#include <string.h>
#include "optimizer-test-util.h"

#define WB OWB_DOMAIN

/* ---- model building ---- */

static void
add_weight (OwbModel *m, const char *name, int rank, const int64_t *dims)
{
  add_weight_range (m, name, rank, dims, -1, 1);
}

static void
add_scalar (OwbModel *m, const char *name, float v)
{
  owb_graph_add_initializer (m->graph, name, owb_tensor_new_scalar_float (v));
}

/* dims of -2 are the symbolic dimension "N". */
static void
add_input_typed (OwbModel *m, const char *name, OwbDataType dtype, int rank, const int64_t *dims)
{
  const char *params[OWB_MAX_RANK];
  for (int i = 0; i < rank; i++)
    params[i] = "N";
  tu_add_value (m->graph->inputs, name, dtype, rank, dims, params);
}

static void
add_input (OwbModel *m, const char *name, int rank, const int64_t *dims)
{
  add_input_typed (m, name, OWB_TYPE_FLOAT, rank, dims);
}

/* Renames graph output `old_name` so that another node can write it, the old producer now feeding that node. */
static void
rename_output (OwbModel *m, const char *old_name, const char *new_name)
{
  for (guint i = 0; i < m->graph->outputs->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (m->graph->outputs, i);
      if (strcmp (info->name, old_name) == 0)
        {
          g_free (info->name);
          info->name = g_strdup (new_name);
        }
    }
}

static OwbNode *
our_node (OwbModel *m, const char *op, const char *name, const char *inputs, const char *outputs)
{
  owb_model_set_opset (m, WB, 1);
  OwbNode *node = tu_node (m->graph, op, name, inputs, outputs);
  g_free (node->domain);
  node->domain = g_strdup (WB);
  return node;
}

/* ---- running and comparing ---- */

/* Random inputs for a session's feeds (symbolic dims 2). */
static GPtrArray *
random_inputs (OwbSession *s, const char **names)
{
  GPtrArray *inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  for (guint i = 0; i < owb_session_get_n_inputs (s); i++)
    {
      const OwbValueInfo *info = owb_session_get_input (s, i);
      int64_t dims[OWB_MAX_RANK];
      for (int d = 0; d < info->type.rank; d++)
        dims[d] = owb_dim_is_known (info->type.dims[d]) ? info->type.dims[d].value : 2;
      g_ptr_array_add (inputs, seeded_tensor (info->type.dtype, info->type.rank, dims, 100 + i, -2, 2));
      names[i] = info->name;
    }
  return inputs;
}

/* Runs m unoptimized and at `level` (with `threads`) on the same random inputs, asserts that every
 * output agrees within 1e-4, and returns the optimized session for the caller to inspect. */
static OwbSession *
check_level (OwbModel *m, OwbOptimizeLevel level, int threads, const char *const *disabled)
{
  GError *error = NULL;
  OwbSession *plain = opt_session_new (m, OWB_OPTIMIZE_DISABLED, 1, NULL, &error);
  g_assert_no_error (error);
  OwbSession *opt = opt_session_new (m, level, threads, disabled, &error);
  g_assert_no_error (error);
  const char *names[16];
  g_assert_cmpuint (owb_session_get_n_inputs (plain), <=, 16);
  GPtrArray *inputs = random_inputs (plain, names);
  guint n_out = owb_session_get_n_outputs (plain);
  g_assert_cmpuint (owb_session_get_n_outputs (opt), ==, n_out);
  OwbTensor *want[8] = { NULL }, *got[8] = { NULL };
  g_assert_cmpuint (n_out, <=, 8);
  g_assert_true (owb_session_run (plain, inputs->len, names, (OwbTensor *const *) inputs->pdata, n_out, NULL, want,
                                  NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (owb_session_run (opt, inputs->len, names, (OwbTensor *const *) inputs->pdata, n_out, NULL, got, NULL,
                                  NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < n_out; i++)
    {
      g_assert_cmpint (got[i]->dtype, ==, want[i]->dtype);
      g_assert_cmpfloat (max_rel_diff (want[i], got[i]), <=, 1e-4);
      owb_tensor_unref (want[i]);
      owb_tensor_unref (got[i]);
    }
  g_ptr_array_unref (inputs);
  owb_session_free (plain);
  return opt;
}

static OwbSession *
check_extended (OwbModel *m)
{
  return check_level (m, OWB_OPTIMIZE_EXTENDED, 1, NULL);
}

/* Optimizes m in place at extended (portable or not) and returns the report. */
static OwbOptimizeReport *
optimize (OwbModel *m, gboolean portable)
{
  OwbOptimizeOptions options;
  owb_optimize_options_init (&options);
  options.level = OWB_OPTIMIZE_EXTENDED;
  options.portable = portable;
  return optimize_on_cpu (m, &options);
}

/* ---- graph and report queries ---- */

static const OwbNode *
find_op (const OwbGraph *g, const char *op)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (g->nodes, i);
      if (strcmp (node->op_type, op) == 0)
        return node;
    }
  g_assert_not_reached ();
}

/* The pass created exactly one node, of op (and domain), from exactly the NULL-terminated `from`;
 * and removed those nodes. */
static void
assert_one_created (const OwbOptimizeReport *report, const char *pass, const char *op, const char *domain,
                    const char *const *from)
{
  const OwbPassReport *pr = get_pass_report (report, pass);
  g_assert_cmpuint (pr->created->len, ==, 1);
  const OwbOptimizeCreated *c = g_ptr_array_index (pr->created, 0);
  g_assert_cmpstr (c->op_type, ==, op);
  g_assert_cmpstr (c->domain, ==, domain);
  guint n = g_strv_length ((char **) from);
  g_assert_cmpuint (c->from->len, ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpstr (g_ptr_array_index (c->from, i), ==, from[i]);
      gboolean removed = FALSE;
      for (guint k = 0; k < pr->removed->len; k++)
        removed |= strcmp (g_ptr_array_index (pr->removed, k), from[i]) == 0;
      g_assert_true (removed);
    }
}

static void
assert_nothing_created (const OwbOptimizeReport *report, const char *pass)
{
  g_assert_cmpuint (get_pass_report (report, pass)->created->len, ==, 0);
}

static void
assert_near_miss (const OwbOptimizeReport *report, const char *pass, const char *needle)
{
  const OwbPassReport *pr = get_pass_report (report, pass);
  for (guint i = 0; i < pr->near_misses->len; i++)
    if (strstr (g_ptr_array_index (pr->near_misses, i), needle))
      return;
  for (guint i = 0; i < pr->near_misses->len; i++)
    g_printerr ("near miss: %s\n", (char *) g_ptr_array_index (pr->near_misses, i));
  g_error ("pass %s recorded no near miss containing '%s'", pass, needle);
}

static const OwbTensor *
session_initializer (OwbSession *s, const OwbNode *node, int input)
{
  const OwbTensor *t = owb_graph_get_initializer (owb_session_get_graph (s), node->inputs[input]);
  g_assert_nonnull (t);
  return t;
}

/* ---- fuse_conv_bn ---- */

/* x [N, 3, 8, 8] → Conv (3x3, pads 1) → c → BatchNormalization → y */
static OwbModel *
conv_bn_model (gboolean conv_bias, gboolean constant_mean)
{
  OwbModel *m = tu_model_new (13);
  add_input (m, "x", 4, (int64_t[]){ -2, 3, 8, 8 });
  add_weight (m, "w", 4, (int64_t[]){ 4, 3, 3, 3 });
  add_weight (m, "b", 1, (int64_t[]){ 4 });
  OwbNode *conv = tu_node (m->graph, "Conv", "conv", conv_bias ? "x,w,b" : "x,w", "c");
  tu_set_ints (conv, "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
  add_weight (m, "gamma", 1, (int64_t[]){ 4 });
  add_weight (m, "beta", 1, (int64_t[]){ 4 });
  if (constant_mean)
    add_weight (m, "mean", 1, (int64_t[]){ 4 });
  else
    add_input (m, "mean", 1, (int64_t[]){ 4 });
  add_weight_range (m, "var", 1, (int64_t[]){ 4 }, 0.2, 2);
  OwbNode *bn = tu_node (m->graph, "BatchNormalization", "bn", "c,gamma,beta,mean,var", "y");
  tu_set_float (bn, "epsilon", 1e-3f);
  add_output (m, "y");
  return m;
}

static void
test_conv_bn (void)
{
  for (int bias = 0; bias < 2; bias++)
    {
      g_autoptr (OwbModel) m = conv_bn_model (bias, TRUE);
      g_autoptr (OwbSession) s = check_extended (m);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (g->nodes->len, ==, 1);
      const OwbNode *conv = find_op (g, "Conv");
      g_assert_cmpint (conv->n_inputs, ==, 3);
      g_assert_cmpstr (conv->outputs[0], ==, "y");
      g_assert_cmpint (session_initializer (s, conv, 2)->nelems, ==, 4);
      const char *from[] = { "conv", "bn", NULL };
      assert_one_created (owb_session_get_optimize_report (s), "fuse_conv_bn", "Conv", "", from);
    }
}

/* Names the fusions create never collide with names already in the graph (node names, values and
 * initializers share one space here): "w" is folded into a new initializer while "w_1" (an
 * initializer), "w_2" (a value) and "w_3" (a node) are taken. */
static void
test_created_names_unique (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  add_input (m, "x", 4, (int64_t[]){ 1, 3, 8, 8 });
  add_weight (m, "w", 4, (int64_t[]){ 4, 3, 3, 3 });
  add_weight (m, "w_1", 4, (int64_t[]){ 4, 4, 3, 3 });
  const char *bn_params[] = { "gamma", "beta", "mean", "var" };
  for (int i = 0; i < 4; i++)
    add_weight_range (m, bn_params[i], 1, (int64_t[]){ 4 }, 0.2, 2);
  tu_set_ints (tu_node (m->graph, "Conv", "conv", "x,w", "c"), "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
  tu_node (m->graph, "BatchNormalization", "bn", "c,gamma,beta,mean,var", "w_2");
  tu_node (m->graph, "Relu", "w_3", "w_2", "r");
  tu_set_ints (tu_node (m->graph, "Conv", "conv2", "r,w_1", "c2"), "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
  tu_node (m->graph, "BatchNormalization", "bn2", "c2,gamma,beta,mean,var", "y");
  add_output (m, "y");
  g_autoptr (OwbSession) s = check_extended (m);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpint (count_op (g, "BatchNormalization"), ==, 0);
  g_autoptr (GHashTable) values = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) nodes = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < g->initializer_names->len; i++)
    g_assert_true (g_hash_table_add (values, g_ptr_array_index (g->initializer_names, i)));
  for (guint n = 0; n < g->nodes->len; n++)
    {
      const OwbNode *node = g_ptr_array_index (g->nodes, n);
      g_assert_true (g_hash_table_add (nodes, node->name));
      for (int o = 0; o < node->n_outputs; o++)
        g_assert_true (g_hash_table_add (values, node->outputs[o]));
    }
}

static void
test_conv_bn_near_misses (void)
{
  {
    /* The Conv's output is also a graph output. */
    g_autoptr (OwbModel) m = conv_bn_model (TRUE, TRUE);
    add_output (m, "c");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_bn");
    assert_near_miss (r, "fuse_conv_bn", "whose output is also read by 1 other node(s) or is a graph output");
    g_assert_cmpuint (count_op (m->graph, "BatchNormalization"), ==, 1);
  }
  {
    /* The Conv's output feeds another node too. */
    g_autoptr (OwbModel) m = conv_bn_model (TRUE, TRUE);
    tu_node (m->graph, "Relu", "relu", "c", "r");
    add_output (m, "r");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_bn");
    assert_near_miss (r, "fuse_conv_bn", "Conv 'conv', whose output is also read");
  }
  {
    g_autoptr (OwbModel) m = conv_bn_model (TRUE, FALSE);
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_bn");
    assert_near_miss (r, "fuse_conv_bn", "scale, B, mean and var are not all constant");
  }
  {
    g_autoptr (OwbModel) m = conv_bn_model (TRUE, TRUE);
    owb_model_set_opset (m, "", 15);
    tu_set_int ((OwbNode *) find_op (m->graph, "BatchNormalization"), "training_mode", 1);
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_bn");
    assert_near_miss (r, "fuse_conv_bn", "training_mode=1");
  }
  {
    /* Weights from a graph input: nothing to fold into. */
    g_autoptr (OwbModel) m = conv_bn_model (TRUE, TRUE);
    owb_graph_remove_initializer (m->graph, "w");
    add_input (m, "w", 4, (int64_t[]){ 4, 3, 3, 3 });
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_bn");
    assert_near_miss (r, "fuse_conv_bn", "weight W is not a constant");
  }
}

/* ---- fuse_conv_mul / fuse_conv_add ---- */

/* x [N, 3, 6, 6] → Conv (4 channels) → c → op (c, s) → y; s a constant of the given shape. */
static OwbModel *
conv_then (const char *op, gboolean conv_bias, gboolean constant_first, int s_rank, const int64_t *s_dims)
{
  OwbModel *m = tu_model_new (13);
  add_input (m, "x", 4, (int64_t[]){ -2, 3, 6, 6 });
  add_weight (m, "w", 4, (int64_t[]){ 4, 3, 3, 3 });
  add_weight (m, "b", 1, (int64_t[]){ 4 });
  tu_node (m->graph, "Conv", "conv", conv_bias ? "x,w,b" : "x,w", "c");
  add_weight_range (m, "s", s_rank, s_dims, 0.5, 2);
  tu_node (m->graph, op, "op", constant_first ? "s,c" : "c,s", "y");
  add_output (m, "y");
  return m;
}

/* A Conv followed by op with a constant of rank and dims (conv_then's arguments). */
typedef struct {
  const char *op;
  gboolean bias, constant_first;
  int rank;
  int64_t dims[4];
} ConvThenCase;

/* Each case's Conv and op become one Conv through `pass`, from both, the outputs unchanged;
 * check_conv then looks at that Conv in its session. */
static void
check_conv_then_fused (const ConvThenCase *cases, guint n_cases, const char *pass,
                       void (*check_conv) (OwbSession *s, const OwbNode *conv))
{
  for (guint i = 0; i < n_cases; i++)
    {
      g_autoptr (OwbModel) m = conv_then (cases[i].op, cases[i].bias, cases[i].constant_first, cases[i].rank,
                                          cases[i].dims);
      g_autoptr (OwbSession) s = check_extended (m);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (g->nodes->len, ==, 1);
      check_conv (s, find_op (g, "Conv"));
      const char *from[] = { "conv", "op", NULL };
      assert_one_created (owb_session_get_optimize_report (s), pass, "Conv", "", from);
    }
}

/* A scale folded into the weights: the Conv writes the op's output. */
static void
check_scaled_conv (OwbSession *s, const OwbNode *conv)
{
  g_assert_cmpstr (conv->outputs[0], ==, "y");
}

static void
test_conv_mul (void)
{
  static const ConvThenCase cases[] = {
    { "Mul", TRUE, FALSE, 3, { 4, 1, 1 } },
    { "Mul", FALSE, TRUE, 4, { 1, 4, 1, 1 } },
    { "Mul", TRUE, FALSE, 0, { 0 } },
    { "Mul", TRUE, TRUE, 1, { 1 } },
    { "Div", TRUE, FALSE, 3, { 4, 1, 1 } },
  };
  check_conv_then_fused (cases, G_N_ELEMENTS (cases), "fuse_conv_mul", check_scaled_conv);
}

static void
test_conv_mul_near_misses (void)
{
  {
    /* One value per pixel is not one per channel. */
    g_autoptr (OwbModel) m = conv_then ("Mul", TRUE, FALSE, 3, (int64_t[]){ 4, 4, 4 });
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_mul");
    assert_near_miss (r, "fuse_conv_mul", "is not one value per output channel");
  }
  {
    /* A constant of higher rank would grow the output. */
    g_autoptr (OwbModel) m = conv_then ("Mul", TRUE, FALSE, 5, (int64_t[]){ 1, 1, 4, 1, 1 });
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_mul");
  }
  {
    g_autoptr (OwbModel) m = conv_then ("Mul", TRUE, FALSE, 3, (int64_t[]){ 4, 1, 1 });
    add_output (m, "c");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_mul");
    assert_near_miss (r, "fuse_conv_mul", "whose output is also read by 1 other node(s)");
  }
  {
    /* Dividing a constant by the Conv's output is not a scale. */
    g_autoptr (OwbModel) m = conv_then ("Div", TRUE, TRUE, 3, (int64_t[]){ 4, 1, 1 });
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_mul");
  }
}

/* A shift folded into the bias: a bias of one value per output channel. */
static void
check_shifted_conv (OwbSession *s, const OwbNode *conv)
{
  g_assert_cmpint (conv->n_inputs, ==, 3);
  g_assert_cmpint (session_initializer (s, conv, 2)->nelems, ==, 4);
}

static void
test_conv_add (void)
{
  static const ConvThenCase cases[] = {
    { "Add", TRUE, FALSE, 3, { 4, 1, 1 } },
    { "Add", FALSE, TRUE, 4, { 1, 4, 1, 1 } },
    { "Add", FALSE, FALSE, 0, { 0 } },
    { "Sub", TRUE, FALSE, 3, { 4, 1, 1 } },
  };
  check_conv_then_fused (cases, G_N_ELEMENTS (cases), "fuse_conv_add", check_shifted_conv);
}

static void
test_conv_add_near_misses (void)
{
  {
    g_autoptr (OwbModel) m = conv_then ("Add", TRUE, FALSE, 4, (int64_t[]){ 1, 4, 4, 4 });
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_add");
    assert_near_miss (r, "fuse_conv_add", "is not one value per output channel");
  }
  {
    g_autoptr (OwbModel) m = conv_then ("Add", TRUE, FALSE, 3, (int64_t[]){ 4, 1, 1 });
    tu_node (m->graph, "Relu", "relu", "c", "r");
    add_output (m, "r");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_add");
    assert_near_miss (r, "fuse_conv_add", "Conv 'conv', whose output is also read by 1 other node(s)");
  }
  {
    /* A bias that is not constant cannot take the constant in. */
    g_autoptr (OwbModel) m = conv_then ("Add", TRUE, FALSE, 3, (int64_t[]){ 4, 1, 1 });
    owb_graph_remove_initializer (m->graph, "b");
    add_input (m, "b", 1, (int64_t[]){ 4 });
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_conv_add");
    assert_near_miss (r, "fuse_conv_add", "whose bias B is not a constant");
  }
}

/* A chain of folds: Conv → BatchNormalization → Mul → Add ends as one Conv. */
static void
test_conv_chain (void)
{
  g_autoptr (OwbModel) m = conv_bn_model (FALSE, TRUE);
  rename_output (m, "y", "z");
  add_weight_range (m, "s", 3, (int64_t[]){ 4, 1, 1 }, 0.5, 2);
  add_weight (m, "t", 3, (int64_t[]){ 4, 1, 1 });
  tu_node (m->graph, "Mul", "mul", "y,s", "u");
  tu_node (m->graph, "Add", "add", "t,u", "z");
  g_autoptr (OwbSession) s = check_extended (m);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (g->nodes->len, ==, 1);
  g_assert_cmpstr (find_op (g, "Conv")->outputs[0], ==, "z");
  const OwbOptimizeReport *r = owb_session_get_optimize_report (s);
  g_assert_cmpuint (get_pass_report (r, "fuse_conv_bn")->created->len, ==, 1);
  g_assert_cmpuint (get_pass_report (r, "fuse_conv_mul")->created->len, ==, 1);
  g_assert_cmpuint (get_pass_report (r, "fuse_conv_add")->created->len, ==, 1);
}

/* ---- fuse_matmul_scale ---- */

static void
test_matmul_scale_output (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  add_input (m, "x", 2, (int64_t[]){ -2, 5 });
  add_weight (m, "w", 2, (int64_t[]){ 5, 3 });
  add_scalar (m, "half", 0.5f);
  tu_node (m->graph, "MatMul", "mm", "x,w", "p");
  tu_node (m->graph, "Mul", "scale", "p,half", "y");
  add_output (m, "y");
  g_autoptr (OwbSession) s = check_extended (m);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (g->nodes->len, ==, 1);
  const OwbNode *mm = find_op (g, "MatMul");
  g_assert_cmpstr (mm->outputs[0], ==, "y");
  g_assert_cmpstr (mm->inputs[1], !=, "w");
  const char *from[] = { "mm", "scale", NULL };
  assert_one_created (owb_session_get_optimize_report (s), "fuse_matmul_scale", "MatMul", "", from);
}

static void
test_matmul_scale_input (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  add_input (m, "x", 3, (int64_t[]){ 2, -2, 5 });
  add_weight (m, "w", 2, (int64_t[]){ 5, 3 });
  add_scalar (m, "two", 2.0f);
  tu_node (m->graph, "Div", "scale", "x,two", "d");
  tu_node (m->graph, "MatMul", "mm", "d,w", "y");
  add_output (m, "y");
  g_autoptr (OwbSession) s = check_extended (m);
  const OwbNode *mm = find_op (owb_session_get_graph (s), "MatMul");
  g_assert_cmpstr (mm->inputs[0], ==, "x");
  /* The folded weight is half the original. */
  const OwbTensor *w = session_initializer (s, mm, 1);
  g_assert_cmpfloat_with_epsilon (((float *) w->data)[0] * 2, ((float *) owb_graph_get_initializer (m->graph, "w")->data)[0],
                                  1e-6);
  const char *from[] = { "scale", "mm", NULL };
  assert_one_created (owb_session_get_optimize_report (s), "fuse_matmul_scale", "MatMul", "", from);
}

static void
test_matmul_scale_gemm (void)
{
  /* On the output, the scale applies to C too (alpha and beta); on the input, only alpha. */
  for (int on_output = 0; on_output < 2; on_output++)
    {
      g_autoptr (OwbModel) m = tu_model_new (13);
      add_input (m, "x", 2, (int64_t[]){ 3, 5 });
      add_weight (m, "w", 2, (int64_t[]){ 4, 5 });
      add_weight (m, "c", 1, (int64_t[]){ 4 });
      add_scalar (m, "three", 3.0f);
      if (on_output)
        {
          OwbNode *gemm = tu_node (m->graph, "Gemm", "gemm", "x,w,c", "p");
          tu_set_int (gemm, "transB", 1);
          tu_set_float (gemm, "alpha", 0.5f);
          tu_node (m->graph, "Mul", "scale", "three,p", "y");
        }
      else
        {
          tu_node (m->graph, "Mul", "scale", "x,three", "q");
          OwbNode *gemm = tu_node (m->graph, "Gemm", "gemm", "q,w,c", "y");
          tu_set_int (gemm, "transB", 1);
          tu_set_float (gemm, "alpha", 0.5f);
        }
      add_output (m, "y");
      g_autoptr (OwbSession) s = check_extended (m);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (g->nodes->len, ==, 1);
      const OwbNode *gemm = find_op (g, "Gemm");
      g_assert_cmpfloat (owb_node_get_float (gemm, "alpha", 0), ==, 1.5f);
      g_assert_cmpfloat (owb_node_get_float (gemm, "beta", 1), ==, on_output ? 3.0f : 1.0f);
      g_assert_cmpuint (get_pass_report (owb_session_get_optimize_report (s), "fuse_matmul_scale")->created->len, ==, 1);
    }
}

static void
test_matmul_scale_near_misses (void)
{
  {
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "x", 2, (int64_t[]){ 3, 5 });
    add_input (m, "z", 2, (int64_t[]){ 5, 4 });
    add_scalar (m, "half", 0.5f);
    tu_node (m->graph, "MatMul", "mm", "x,z", "p");
    tu_node (m->graph, "Mul", "scale", "p,half", "y");
    add_output (m, "y");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_matmul_scale");
    assert_near_miss (r, "fuse_matmul_scale", "scales MatMul 'mm', which has no constant operand to fold into");
  }
  {
    /* A scale that is not a scalar is not folded. */
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "x", 2, (int64_t[]){ 3, 5 });
    add_weight (m, "w", 2, (int64_t[]){ 5, 4 });
    add_weight (m, "v", 1, (int64_t[]){ 4 });
    tu_node (m->graph, "MatMul", "mm", "x,w", "p");
    tu_node (m->graph, "Mul", "scale", "p,v", "y");
    add_output (m, "y");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_matmul_scale");
  }
}

/* The 0.5 that ends an exported GELU before the next MatMul belongs to fuse_gelu, a later pass. */
static void
test_matmul_scale_leaves_gelu (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  add_input (m, "x", 2, (int64_t[]){ 3, 5 });
  add_weight (m, "w", 2, (int64_t[]){ 5, 4 });
  add_scalar (m, "sqrt2", (float) G_SQRT2);
  add_scalar (m, "one", 1.0f);
  add_scalar (m, "half", 0.5f);
  tu_node (m->graph, "Div", "div", "x,sqrt2", "d");
  tu_node (m->graph, "Erf", "erf", "d", "e");
  tu_node (m->graph, "Add", "add", "e,one", "a");
  tu_node (m->graph, "Mul", "mul", "x,a", "p");
  tu_node (m->graph, "Mul", "half_mul", "p,half", "h");
  tu_node (m->graph, "MatMul", "mm", "h,w", "y");
  add_output (m, "y");
  const char *disabled[] = { "fuse_gelu", "fuse_bias_gelu", NULL };
  g_autoptr (OwbSession) s = check_level (m, OWB_OPTIMIZE_EXTENDED, 1, disabled);
  assert_nothing_created (owb_session_get_optimize_report (s), "fuse_matmul_scale");
  g_assert_cmpuint (count_op (owb_session_get_graph (s), "Erf"), ==, 1);
}

/* ---- fuse_transpose_matmul ---- */

static void
test_transpose_matmul_2d (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  add_input (m, "a", 2, (int64_t[]){ 5, 3 });
  add_input (m, "b", 2, (int64_t[]){ 4, 5 });
  OwbNode *ta = tu_node (m->graph, "Transpose", "ta", "a", "at");
  tu_set_ints (ta, "perm", 2, (int64_t[]){ 1, 0 });
  tu_node (m->graph, "Transpose", "tb", "b", "bt"); /* no perm: reversed */
  tu_node (m->graph, "MatMul", "mm", "at,bt", "y");
  add_output (m, "y");
  g_autoptr (OwbSession) s = check_extended (m);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (g->nodes->len, ==, 1);
  const OwbNode *gemm = find_op (g, "Gemm");
  g_assert_cmpint (owb_node_get_int (gemm, "transA", 0), ==, 1);
  g_assert_cmpint (owb_node_get_int (gemm, "transB", 0), ==, 1);
  const char *from[] = { "ta", "tb", "mm", NULL };
  assert_one_created (owb_session_get_optimize_report (s), "fuse_transpose_matmul", "Gemm", "", from);
}

/* x [3, 128] @ Transpose (W [256, 128]) with W a 128 KiB weight: constant folding leaves the
 * Transpose to fuse_transpose_matmul, so the product reads W itself (no transposed copy of it);
 * without the fusion pass (or at basic) the Transpose is folded as before. */
static OwbModel *
weight_transpose_model (void)
{
  OwbModel *m = tu_model_new (13);
  add_input (m, "x", 2, (int64_t[]){ 3, 128 });
  add_weight (m, "w", 2, (int64_t[]){ 256, 128 });
  tu_set_ints (tu_node (m->graph, "Transpose", "tw", "w", "wt"), "perm", 2, (int64_t[]){ 1, 0 });
  tu_node (m->graph, "MatMul", "mm", "x,wt", "y");
  add_output (m, "y");
  return m;
}

static void
test_transpose_matmul_weight_not_copied (void)
{
  g_autoptr (OwbModel) m = weight_transpose_model ();
  g_autoptr (OwbSession) s = check_extended (m);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (g->nodes->len, ==, 1);
  const OwbNode *gemm = find_op (g, "Gemm");
  g_assert_cmpstr (gemm->inputs[1], ==, "w");
  g_assert_cmpint (owb_node_get_int (gemm, "transB", 0), ==, 1);
  g_assert_cmpuint (g->initializers->len, ==, 1);
  g_assert_true (owb_graph_get_initializer ((OwbGraph *) g, "w") == owb_graph_get_initializer (m->graph, "w"));

  const char *const no_fusion[] = { "fuse_transpose_matmul", NULL };
  for (int i = 0; i < 2; i++)
    {
      GError *error = NULL;
      g_autoptr (OwbSession) folded = opt_session_new (m, i ? OWB_OPTIMIZE_BASIC : OWB_OPTIMIZE_EXTENDED, 1,
                                                  i ? NULL : no_fusion, &error);
      g_assert_no_error (error);
      const OwbGraph *fg = owb_session_get_graph (folded);
      g_assert_cmpint (count_op (fg, "Transpose"), ==, 0);
      const OwbNode *mm = find_op (fg, "MatMul");
      g_assert_cmpstr (mm->inputs[1], !=, "w");
    }
}

static OwbModel *
batched_transpose_model (void)
{
  OwbModel *m = tu_model_new (13);
  add_input (m, "a", 4, (int64_t[]){ 2, 1, 4, 5 });
  add_input (m, "b", 3, (int64_t[]){ 3, 6, 5 });
  OwbNode *t = tu_node (m->graph, "Transpose", "tb", "b", "bt");
  tu_set_ints (t, "perm", 3, (int64_t[]){ 0, 2, 1 });
  tu_node (m->graph, "MatMul", "mm", "a,bt", "y");
  add_output (m, "y");
  return m;
}

static void
test_transpose_matmul_batched (void)
{
  g_autoptr (OwbModel) m = batched_transpose_model ();
  g_autoptr (OwbSession) s = check_extended (m);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (g->nodes->len, ==, 1);
  const OwbNode *mm = find_op (g, "FusedMatMul");
  g_assert_cmpstr (mm->domain, ==, WB);
  g_assert_cmpint (owb_node_get_int (mm, "transA", 0), ==, 0);
  g_assert_cmpint (owb_node_get_int (mm, "transB", 0), ==, 1);
  const char *from[] = { "tb", "mm", NULL };
  assert_one_created (owb_session_get_optimize_report (s), "fuse_transpose_matmul", "FusedMatMul", WB, from);
}

static void
test_transpose_matmul_near_misses (void)
{
  {
    g_autoptr (OwbModel) m = batched_transpose_model ();
    g_autoptr (OwbOptimizeReport) r = optimize (m, TRUE);
    assert_nothing_created (r, "fuse_transpose_matmul");
    assert_near_miss (r, "fuse_transpose_matmul", "kept (portable)");
    g_assert_cmpint (owb_model_get_opset (m, WB), ==, -1);
  }
  {
    /* A Transpose that moves the batch axis is not a transposed operand. */
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "a", 3, (int64_t[]){ 3, 4, 5 });
    add_input (m, "b", 3, (int64_t[]){ 6, 5, 3 });
    OwbNode *t = tu_node (m->graph, "Transpose", "tb", "b", "bt");
    tu_set_ints (t, "perm", 3, (int64_t[]){ 2, 1, 0 });
    tu_node (m->graph, "MatMul", "mm", "a,bt", "y");
    add_output (m, "y");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_transpose_matmul");
  }
  {
    g_autoptr (OwbModel) m = batched_transpose_model ();
    add_output (m, "bt");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_transpose_matmul");
    assert_near_miss (r, "fuse_transpose_matmul", "whose output is also read elsewhere");
  }
}

/* ---- fuse_matmul_add ---- */

/* x (rank 2 or 3) x w [5, 4] + bias of the given shape (a constant, or an input) */
static OwbModel *
matmul_add_model (int x_rank, int bias_rank, const int64_t *bias_dims, gboolean bias_constant)
{
  OwbModel *m = tu_model_new (13);
  if (x_rank == 2)
    add_input (m, "x", 2, (int64_t[]){ 3, 5 });
  else
    add_input (m, "x", 3, (int64_t[]){ -2, 3, 5 });
  add_weight (m, "w", 2, (int64_t[]){ 5, 4 });
  if (bias_constant)
    add_weight (m, "bias", bias_rank, bias_dims);
  else
    add_input (m, "bias", bias_rank, bias_dims);
  tu_node (m->graph, "MatMul", "mm", "x,w", "p");
  tu_node (m->graph, "Add", "add", "bias,p", "y");
  add_output (m, "y");
  return m;
}

static void
test_matmul_add_gemm (void)
{
  struct {
    int rank;
    int64_t dims[2];
    gboolean constant;
  } cases[] = { { 1, { 4 }, TRUE }, { 2, { 3, 4 }, TRUE }, { 2, { 1, 4 }, FALSE }, { 2, { 3, 1 }, TRUE }, { 0, { 0 }, TRUE } };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = matmul_add_model (2, cases[i].rank, cases[i].dims, cases[i].constant);
      g_autoptr (OwbSession) s = check_extended (m);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (g->nodes->len, ==, 1);
      const OwbNode *gemm = find_op (g, "Gemm");
      g_assert_cmpstr (gemm->inputs[2], ==, "bias");
      const char *from[] = { "mm", "add", NULL };
      assert_one_created (owb_session_get_optimize_report (s), "fuse_matmul_add", "Gemm", "", from);
    }
}

static void
test_matmul_add_batched (void)
{
  struct {
    int rank;
    int64_t dims[3];
    gboolean constant, same_bias;
  } cases[] = { { 1, { 4 }, TRUE, TRUE }, { 1, { 4 }, FALSE, TRUE }, { 3, { 1, 1, 4 }, TRUE, FALSE },
                { 0, { 0 }, TRUE, FALSE } };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = matmul_add_model (3, cases[i].rank, cases[i].dims, cases[i].constant);
      g_autoptr (OwbSession) s = check_extended (m);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (g->nodes->len, ==, 1);
      const OwbNode *mm = find_op (g, "FusedMatMul");
      g_assert_cmpint (mm->n_inputs, ==, 3);
      if (cases[i].same_bias)
        g_assert_cmpstr (mm->inputs[2], ==, "bias");
      else
        {
          const OwbTensor *b = session_initializer (s, mm, 2);
          g_assert_cmpint (b->rank, ==, 1);
          g_assert_cmpint (b->dims[0], ==, 4);
        }
      const char *from[] = { "mm", "add", NULL };
      assert_one_created (owb_session_get_optimize_report (s), "fuse_matmul_add", "FusedMatMul", WB, from);
    }
}

static void
test_matmul_add_near_misses (void)
{
  {
    g_autoptr (OwbModel) m = matmul_add_model (3, 1, (int64_t[]){ 4 }, TRUE);
    g_autoptr (OwbOptimizeReport) r = optimize (m, TRUE);
    assert_nothing_created (r, "fuse_matmul_add");
    assert_near_miss (r, "fuse_matmul_add", "whose A has rank 3: Gemm takes only 2-D A and FusedMatMul is not a "
                                            "standard ONNX op; kept (portable)");
  }
  {
    /* Portable and 2-D: Gemm is standard. */
    g_autoptr (OwbModel) m = matmul_add_model (2, 1, (int64_t[]){ 4 }, TRUE);
    g_autoptr (OwbOptimizeReport) r = optimize (m, TRUE);
    g_assert_cmpuint (get_pass_report (r, "fuse_matmul_add")->created->len, ==, 1);
    g_assert_cmpuint (count_op (m->graph, "Gemm"), ==, 1);
  }
  {
    /* A constant with one value per row is not a bias over the last axis. */
    g_autoptr (OwbModel) m = matmul_add_model (3, 3, (int64_t[]){ 1, 3, 1 }, TRUE);
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_matmul_add");
    assert_near_miss (r, "fuse_matmul_add", "which is not one value per output column");
  }
  {
    /* A residual of the output's shape: no bias, no near miss. */
    g_autoptr (OwbModel) m = matmul_add_model (3, 3, (int64_t[]){ -2, 3, 4 }, FALSE);
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_matmul_add");
    g_assert_cmpuint (get_pass_report (r, "fuse_matmul_add")->near_misses->len, ==, 0);
  }
  {
    g_autoptr (OwbModel) m = matmul_add_model (2, 1, (int64_t[]){ 4 }, TRUE);
    add_output (m, "p");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_matmul_add");
    assert_near_miss (r, "fuse_matmul_add", "follows MatMul 'mm', whose output is also read by 1 other node(s)");
  }
}

/* ---- fuse_activation ---- */

/* x [N, 4, 7, 7] → Conv (4 → 4, 3x3, pads 1) → c */
static OwbModel *
conv_model (int opset)
{
  OwbModel *m = tu_model_new (opset);
  add_input (m, "x", 4, (int64_t[]){ -2, 4, 7, 7 });
  add_weight (m, "w", 4, (int64_t[]){ 4, 4, 3, 3 });
  add_weight (m, "b", 1, (int64_t[]){ 4 });
  OwbNode *conv = tu_node (m->graph, "Conv", "conv", "x,w,b", "c");
  tu_set_ints (conv, "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
  return m;
}

static void
assert_activation (const OwbNode *node, const char *activation, int n_params, const float *params)
{
  g_assert_cmpstr (owb_node_get_string (node, "activation", ""), ==, activation);
  int n = 0;
  const float *p = owb_node_get_floats (node, "activation_params", &n);
  g_assert_cmpint (n, ==, n_params);
  for (int i = 0; i < n_params; i++)
    g_assert_cmpfloat_with_epsilon (p[i], params[i], 1e-7);
}

static void
test_activation_conv (void)
{
  struct {
    const char *op, *activation;
    int n_params;
    float params[2];
  } cases[] = {
    { "Relu", "Relu", 0, { 0 } },         { "Sigmoid", "Sigmoid", 0, { 0 } },
    { "Tanh", "Tanh", 0, { 0 } },         { "LeakyRelu", "LeakyRelu", 1, { 0.2f } },
    { "HardSigmoid", "HardSigmoid", 2, { 0.3f, 0.4f } }, { "HardSwish", "HardSwish", 2, { 1 / 6.0f, 0.5f } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = conv_model (14);
      OwbNode *act = tu_node (m->graph, cases[i].op, "act", "c", "y");
      if (strcmp (cases[i].op, "LeakyRelu") == 0)
        tu_set_float (act, "alpha", 0.2f);
      if (strcmp (cases[i].op, "HardSigmoid") == 0)
        {
          tu_set_float (act, "alpha", 0.3f);
          tu_set_float (act, "beta", 0.4f);
        }
      add_output (m, "y");
      g_autoptr (OwbSession) s = check_extended (m);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (g->nodes->len, ==, 1);
      const OwbNode *fused = find_op (g, "FusedConv");
      g_assert_cmpstr (fused->domain, ==, WB);
      g_assert_cmpstr (fused->outputs[0], ==, "y");
      assert_activation (fused, cases[i].activation, cases[i].n_params, cases[i].params);
      const char *from[] = { "conv", "act", NULL };
      assert_one_created (owb_session_get_optimize_report (s), "fuse_activation", "FusedConv", WB, from);
    }
}

static void
test_activation_clip (void)
{
  /* opset 11+: min/max inputs, either absent; before: attributes. */
  for (int form = 0; form < 3; form++)
    {
      g_autoptr (OwbModel) m = conv_model (form < 2 ? 13 : 10);
      add_scalar (m, "lo", -0.5f);
      add_scalar (m, "hi", 0.75f);
      OwbNode *clip = tu_node (m->graph, "Clip", "clip", form == 0 ? "c,lo,hi" : form == 1 ? "c,,hi" : "c", "y");
      if (form == 2)
        {
          tu_set_float (clip, "min", -0.5f);
          tu_set_float (clip, "max", 0.75f);
        }
      add_output (m, "y");
      g_autoptr (OwbSession) s = check_extended (m);
      const OwbNode *fused = find_op (owb_session_get_graph (s), "FusedConv");
      g_assert_cmpstr (owb_node_get_string (fused, "activation", ""), ==, "Clip");
      int n = 0;
      const float *p = owb_node_get_floats (fused, "activation_params", &n);
      g_assert_cmpint (n, ==, 2);
      if (form == 1)
        g_assert_true (isinf (p[0]) && p[0] < 0);
      else
        g_assert_cmpfloat (p[0], ==, -0.5f);
      g_assert_cmpfloat (p[1], ==, 0.75f);
    }
}

/* x * HardSigmoid (x) and x * Sigmoid (x) after a Conv: HardSwish and Swish. */
static void
test_activation_gated (void)
{
  for (int hard = 0; hard < 2; hard++)
    {
      g_autoptr (OwbModel) m = conv_model (13);
      OwbNode *gate = tu_node (m->graph, hard ? "HardSigmoid" : "Sigmoid", "gate", "c", "g");
      if (hard)
        tu_set_float (gate, "alpha", 1 / 6.0f);
      tu_node (m->graph, "Mul", "mul", hard ? "c,g" : "g,c", "y");
      add_output (m, "y");
      g_autoptr (OwbSession) s = check_extended (m);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (g->nodes->len, ==, 1);
      const OwbNode *fused = find_op (g, "FusedConv");
      if (hard)
        assert_activation (fused, "HardSwish", 2, (float[]){ 1 / 6.0f, 0.5f });
      else
        assert_activation (fused, "Swish", 0, NULL);
      const char *from[] = { "conv", "gate", "mul", NULL };
      assert_one_created (owb_session_get_optimize_report (s), "fuse_activation", "FusedConv", WB, from);
    }
}

/* Conv + x (same shape) → Relu: FusedConv (x, w, b, Z = x) with Relu; also without the Relu, and a
 * Conv without bias. */
static void
test_activation_residual (void)
{
  for (int variant = 0; variant < 3; variant++)
    {
      g_autoptr (OwbModel) m = conv_model (13);
      if (variant == 2)
        {
          OwbNode *conv = (OwbNode *) find_op (m->graph, "Conv");
          conv->n_inputs = 2;
          g_free (conv->inputs[2]);
        }
      tu_node (m->graph, "Add", "add", variant == 1 ? "x,c" : "c,x", variant == 1 ? "y" : "r");
      if (variant != 1)
        tu_node (m->graph, "Relu", "relu", "r", "y");
      add_output (m, "y");
      g_autoptr (OwbSession) s = check_level (m, OWB_OPTIMIZE_EXTENDED, 2, NULL);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (g->nodes->len, ==, 1);
      const OwbNode *fused = find_op (g, "FusedConv");
      g_assert_cmpint (fused->n_inputs, ==, 4);
      g_assert_cmpstr (fused->inputs[3], ==, "x");
      g_assert_cmpstr (fused->inputs[2], ==, variant == 2 ? "" : "b");
      const char *with_relu[] = { "conv", "add", "relu", NULL }, *without[] = { "conv", "add", NULL };
      assert_one_created (owb_session_get_optimize_report (s), "fuse_activation", "FusedConv", WB,
                          variant == 1 ? without : with_relu);
    }
}

/* Two Convs into one Add (a ResNet block with a projection): one of them takes the Add. */
static void
test_activation_two_convs (void)
{
  g_autoptr (OwbModel) m = conv_model (13);
  add_weight (m, "w2", 4, (int64_t[]){ 4, 4, 1, 1 });
  tu_node (m->graph, "Conv", "proj", "x,w2", "d");
  tu_node (m->graph, "Add", "add", "c,d", "r");
  tu_node (m->graph, "Relu", "relu", "r", "y");
  add_output (m, "y");
  g_autoptr (OwbSession) s = check_extended (m);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (g->nodes->len, ==, 2);
  g_assert_cmpuint (count_op (g, "FusedConv"), ==, 1);
  g_assert_cmpuint (count_op (g, "Conv"), ==, 1);
}

static void
test_activation_gemm_matmul (void)
{
  {
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "x", 2, (int64_t[]){ -2, 5 });
    add_weight (m, "w", 2, (int64_t[]){ 4, 5 });
    add_weight (m, "c", 1, (int64_t[]){ 4 });
    OwbNode *gemm = tu_node (m->graph, "Gemm", "gemm", "x,w,c", "p");
    tu_set_int (gemm, "transB", 1);
    tu_set_float (gemm, "beta", 0.5f);
    OwbNode *act = tu_node (m->graph, "LeakyRelu", "act", "p", "y");
    tu_set_float (act, "alpha", 0.1f);
    add_output (m, "y");
    g_autoptr (OwbSession) s = check_extended (m);
    const OwbNode *fused = find_op (owb_session_get_graph (s), "FusedGemm");
    g_assert_cmpint (owb_node_get_int (fused, "transB", 0), ==, 1);
    g_assert_cmpfloat (owb_node_get_float (fused, "beta", 1), ==, 0.5f);
    assert_activation (fused, "LeakyRelu", 1, (float[]){ 0.1f });
    const char *from[] = { "gemm", "act", NULL };
    assert_one_created (owb_session_get_optimize_report (s), "fuse_activation", "FusedGemm", WB, from);
  }
  {
    /* MatMul (no bias) → Tanh */
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "x", 3, (int64_t[]){ 2, -2, 5 });
    add_weight (m, "w", 2, (int64_t[]){ 5, 4 });
    tu_node (m->graph, "MatMul", "mm", "x,w", "p");
    tu_node (m->graph, "Tanh", "act", "p", "y");
    add_output (m, "y");
    g_autoptr (OwbSession) s = check_extended (m);
    const OwbNode *fused = find_op (owb_session_get_graph (s), "FusedMatMul");
    assert_activation (fused, "Tanh", 0, NULL);
    const char *from[] = { "mm", "act", NULL };
    assert_one_created (owb_session_get_optimize_report (s), "fuse_activation", "FusedMatMul", WB, from);
  }
  {
    /* MatMul + bias → Relu: FusedMatMul with bias and activation, from two passes. */
    g_autoptr (OwbModel) m = matmul_add_model (3, 1, (int64_t[]){ 4 }, TRUE);
    rename_output (m, "y", "z");
    OwbNode *add = (OwbNode *) find_op (m->graph, "Add");
    g_free (add->outputs[0]);
    add->outputs[0] = g_strdup ("q");
    tu_node (m->graph, "Relu", "relu", "q", "z");
    g_autoptr (OwbSession) s = check_extended (m);
    const OwbGraph *g = owb_session_get_graph (s);
    g_assert_cmpuint (g->nodes->len, ==, 1);
    const OwbNode *fused = find_op (g, "FusedMatMul");
    g_assert_cmpint (fused->n_inputs, ==, 3);
    assert_activation (fused, "Relu", 0, NULL);
  }
}

/* Gelu (standard from opset 20), erf and tanh forms, after MatMul + bias. */
static void
test_activation_gelu (void)
{
  for (int tanh_form = 0; tanh_form < 2; tanh_form++)
    {
      g_autoptr (OwbModel) m = tu_model_new (20);
      add_input (m, "x", 3, (int64_t[]){ 2, 3, 5 });
      add_weight (m, "w", 2, (int64_t[]){ 5, 4 });
      add_weight (m, "bias", 1, (int64_t[]){ 4 });
      tu_node (m->graph, "MatMul", "mm", "x,w", "p");
      tu_node (m->graph, "Add", "add", "p,bias", "q");
      OwbNode *gelu = tu_node (m->graph, "Gelu", "gelu", "q", "y");
      if (tanh_form)
        tu_set_string (gelu, "approximate", "tanh");
      add_output (m, "y");
      g_autoptr (OwbSession) s = check_extended (m);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (g->nodes->len, ==, 1);
      assert_activation (find_op (g, "FusedMatMul"), tanh_form ? "FastGelu" : "Gelu", 0, NULL);
    }
}

static void
test_activation_near_misses (void)
{
  {
    /* The Conv's output is also a graph output: the Relu stays. */
    g_autoptr (OwbModel) m = conv_model (13);
    tu_node (m->graph, "Relu", "relu", "c", "y");
    add_output (m, "y");
    add_output (m, "c");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_activation");
    assert_near_miss (r, "fuse_activation", "its output 'c' is read by 2 nodes (or is a graph output), so Relu 'relu' "
                                            "stays separate");
  }
  {
    g_autoptr (OwbModel) m = conv_model (13);
    add_input (m, "lo", 0, NULL);
    tu_node (m->graph, "Clip", "clip", "c,lo", "y");
    add_output (m, "y");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_activation");
    assert_near_miss (r, "fuse_activation", "its min/max are not constant scalars");
  }
  {
    g_autoptr (OwbModel) m = conv_model (13);
    tu_node (m->graph, "Add", "add", "c,x", "r");
    tu_node (m->graph, "Relu", "relu", "r", "y");
    add_output (m, "y");
    g_autoptr (OwbOptimizeReport) r = optimize (m, TRUE);
    assert_nothing_created (r, "fuse_activation");
    assert_near_miss (r, "fuse_activation", "the residual Add and Relu would fuse into FusedConv, which is not a "
                                            "standard ONNX op; kept (portable)");
    g_assert_cmpuint (count_op (m->graph, "Relu"), ==, 1);
    g_assert_cmpint (owb_model_get_opset (m, WB), ==, -1);
  }
  {
    /* A broadcast Add is not a residual. */
    g_autoptr (OwbModel) m = conv_model (13);
    add_input (m, "v", 4, (int64_t[]){ 1, 4, 1, 7 });
    tu_node (m->graph, "Add", "add", "c,v", "y");
    add_output (m, "y");
    g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE);
    assert_nothing_created (r, "fuse_activation");
    assert_near_miss (r, "fuse_activation", "a residual needs the same known shape");
  }
}

/* ---- the fused kernels against the unfused graph, over convolution geometries ---- */

typedef struct {
  int nsp;
  int64_t c, m, group, size, k, stride, dilation, pad;
  const char *auto_pad;
  int threads;
} ConvCase;

static void
test_fused_conv_geometries (void)
{
  const ConvCase cases[] = {
    { 2, 8, 16, 1, 9, 3, 1, 1, 1, NULL, 1 },        /* plain 3x3 */
    { 2, 8, 16, 1, 9, 3, 2, 1, 1, NULL, 2 },        /* strided, threads */
    { 2, 8, 8, 1, 12, 1, 1, 1, 0, NULL, 2 },        /* pointwise: the GEMM reads X directly */
    { 2, 8, 16, 1, 12, 1, 2, 1, 0, NULL, 1 },       /* strided 1x1 */
    { 2, 8, 8, 8, 11, 3, 1, 1, 1, NULL, 2 },        /* depthwise */
    { 2, 8, 8, 8, 11, 5, 2, 1, 2, NULL, 1 },        /* depthwise, strided */
    { 2, 6, 6, 6, 10, 3, 1, 2, 2, NULL, 1 },        /* depthwise, dilated */
    { 2, 8, 12, 4, 9, 3, 1, 1, 1, NULL, 2 },        /* grouped */
    { 2, 4, 8, 1, 10, 3, 2, 2, 0, "SAME_UPPER", 1 },
    { 2, 4, 4, 4, 9, 4, 1, 1, 0, "SAME_LOWER", 1 },
    { 1, 4, 6, 1, 20, 3, 1, 1, 1, NULL, 1 },        /* 1-D */
    { 1, 4, 4, 4, 20, 3, 2, 1, 1, NULL, 1 },        /* 1-D depthwise */
    { 3, 3, 4, 1, 6, 3, 1, 1, 1, NULL, 2 },         /* 3-D */
    { 2, 16, 32, 1, 40, 3, 1, 1, 1, NULL, 2 },      /* large enough for several tiles and threads */
    { 2, 64, 96, 1, 6, 3, 1, 1, 1, NULL, 2 },       /* small image: threads split the output channels */
    { 2, 256, 256, 1, 6, 1, 1, 1, 0, NULL, 2 },     /* the same, pointwise */
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (int residual = 0; residual < 2; residual++)
      {
        const ConvCase *cc = &cases[i];
        g_autoptr (OwbModel) m = tu_model_new (13);
        int64_t xd[5] = { 2, cc->c }, wd[5] = { cc->m, cc->c / cc->group };
        for (int a = 0; a < cc->nsp; a++)
          {
            xd[2 + a] = cc->size - a;
            wd[2 + a] = cc->k;
          }
        add_input (m, "x", cc->nsp + 2, xd);
        add_weight (m, "w", cc->nsp + 2, wd);
        add_weight (m, "b", 1, (int64_t[]){ cc->m });
        OwbNode *conv = tu_node (m->graph, "Conv", "conv", "x,w,b", "c");
        int64_t v[6];
        for (int a = 0; a < cc->nsp; a++)
          v[a] = cc->stride;
        tu_set_ints (conv, "strides", cc->nsp, v);
        for (int a = 0; a < cc->nsp; a++)
          v[a] = cc->dilation;
        tu_set_ints (conv, "dilations", cc->nsp, v);
        tu_set_int (conv, "group", cc->group);
        if (cc->auto_pad)
          tu_set_string (conv, "auto_pad", cc->auto_pad);
        else
          {
            for (int a = 0; a < 2 * cc->nsp; a++)
              v[a] = cc->pad + (a >= cc->nsp && cc->pad > 0 ? -1 : 0); /* asymmetric */
            tu_set_ints (conv, "pads", 2 * cc->nsp, v);
          }
        const char *act_input = "c";
        if (residual)
          {
            /* Z of the Conv's output shape, from a second Conv (other weights, or common-subexpression
             * elimination would merge the two) so that it is a tensor, not a constant. */
            add_weight (m, "w2", cc->nsp + 2, wd);
            OwbNode *twin = owb_node_dup (conv);
            g_free (twin->name);
            twin->name = g_strdup ("twin");
            g_free (twin->inputs[1]);
            twin->inputs[1] = g_strdup ("w2");
            g_free (twin->outputs[0]);
            twin->outputs[0] = g_strdup ("z");
            owb_graph_add_node (m->graph, twin);
            tu_node (m->graph, "Add", "add", "z,c", "r");
            act_input = "r";
          }
        tu_node (m->graph, i % 2 ? "Relu" : "Sigmoid", "act", act_input, "y");
        add_output (m, "y");
        g_autoptr (OwbSession) s = check_level (m, OWB_OPTIMIZE_EXTENDED, cc->threads, NULL);
        const OwbNode *fused = find_op (owb_session_get_graph (s), "FusedConv");
        g_assert_cmpint (fused->n_inputs, ==, residual ? 4 : 3);
      }
}

/* Double precision through the same kernels. */
static void
test_fused_double (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  add_input_typed (m, "x", OWB_TYPE_DOUBLE, 4, (int64_t[]){ 1, 3, 6, 6 });
  owb_graph_add_initializer (m->graph, "w",
                             seeded_tensor (OWB_TYPE_DOUBLE, 4, (int64_t[]){ 5, 3, 3, 3 }, 7, -1, 1));
  owb_graph_add_initializer (m->graph, "m", seeded_tensor (OWB_TYPE_DOUBLE, 2, (int64_t[]){ 4, 6 }, 8, -1, 1));
  tu_node (m->graph, "Conv", "conv", "x,w", "c");
  tu_node (m->graph, "Sigmoid", "sig", "c", "s");
  tu_node (m->graph, "MatMul", "mm", "s,m", "p");
  tu_node (m->graph, "Relu", "relu", "p", "y");
  add_output (m, "y");
  g_autoptr (OwbSession) s = check_extended (m);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (g, "FusedConv"), ==, 1);
  g_assert_cmpuint (count_op (g, "FusedMatMul"), ==, 1);
}

/* Batched FusedMatMul with transposes, broadcasting, bias and activation, and big enough to split over threads. */
static void
test_fused_matmul_kernel (void)
{
  {
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "a", 4, (int64_t[]){ 2, 1, 5, 4 });
    add_input (m, "b", 3, (int64_t[]){ 3, 6, 5 });
    OwbNode *ta = tu_node (m->graph, "Transpose", "ta", "a", "at");
    tu_set_ints (ta, "perm", 4, (int64_t[]){ 0, 1, 3, 2 });
    OwbNode *tb = tu_node (m->graph, "Transpose", "tb", "b", "bt");
    tu_set_ints (tb, "perm", 3, (int64_t[]){ 0, 2, 1 });
    tu_node (m->graph, "MatMul", "mm", "at,bt", "p");
    tu_node (m->graph, "Relu", "relu", "p", "y");
    add_output (m, "y");
    g_autoptr (OwbSession) s = check_level (m, OWB_OPTIMIZE_EXTENDED, 2, NULL);
    const OwbNode *mm = find_op (owb_session_get_graph (s), "FusedMatMul");
    g_assert_cmpint (owb_node_get_int (mm, "transA", 0), ==, 1);
    g_assert_cmpint (owb_node_get_int (mm, "transB", 0), ==, 1);
    assert_activation (mm, "Relu", 0, NULL);
  }
  for (int rank = 2; rank <= 3; rank++)
    {
      /* 2 x 64 x 200 x 150 multiply-adds: enough for the thread split; rank 2 goes through FusedGemm. */
      g_autoptr (OwbModel) m = tu_model_new (13);
      if (rank == 2)
        add_input (m, "x", 2, (int64_t[]){ 128, 200 });
      else
        add_input (m, "x", 3, (int64_t[]){ 2, 64, 200 });
      add_weight (m, "w", 2, (int64_t[]){ 200, 150 });
      add_weight (m, "bias", 1, (int64_t[]){ 150 });
      tu_node (m->graph, "MatMul", "mm", "x,w", "p");
      tu_node (m->graph, "Add", "add", "p,bias", "q");
      tu_node (m->graph, "Clip", "clip", "q", "y");
      add_output (m, "y");
      g_autoptr (OwbSession) s = check_level (m, OWB_OPTIMIZE_EXTENDED, 2, NULL);
      g_assert_cmpuint (count_op (owb_session_get_graph (s), rank == 2 ? "FusedGemm" : "FusedMatMul"), ==, 1);
    }
  {
    /* Few rows, many columns: the split goes by columns. */
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "x", 2, (int64_t[]){ 2, 300 });
    add_weight (m, "w", 2, (int64_t[]){ 300, 4000 });
    add_weight (m, "c", 2, (int64_t[]){ 2, 1 });
    tu_node (m->graph, "Gemm", "gemm", "x,w,c", "p");
    tu_node (m->graph, "Sigmoid", "sig", "p", "y");
    add_output (m, "y");
    g_autoptr (OwbSession) s = check_level (m, OWB_OPTIMIZE_EXTENDED, 2, NULL);
    g_assert_cmpuint (count_op (owb_session_get_graph (s), "FusedGemm"), ==, 1);
  }
}

/* ---- the fused ops' schemas ---- */

static const OwbValueType *
inferred (OwbModel *m, const char *name)
{
  GError *error = NULL;
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  const OwbValueInfo *info = owb_graph_find_value_info (m->graph, name);
  g_assert_nonnull (info);
  g_assert_true (info->has_type);
  return &info->type;
}

static void
test_schema_inference (void)
{
  {
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "x", 4, (int64_t[]){ -2, 3, 8, 8 });
    add_weight (m, "w", 4, (int64_t[]){ 5, 3, 3, 3 });
    add_input (m, "z", 4, (int64_t[]){ -2, 5, 4, 4 });
    OwbNode *n = our_node (m, "FusedConv", "fc", "x,w,,z", "y");
    tu_set_ints (n, "strides", 2, (int64_t[]){ 2, 2 });
    tu_set_ints (n, "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
    tu_set_string (n, "activation", "Relu");
    add_output (m, "y");
    const OwbValueType *t = inferred (m, "y");
    g_assert_cmpint (t->rank, ==, 4);
    g_assert_cmpstr (t->dims[0].param, ==, "N");
    g_assert_cmpint (t->dims[1].value, ==, 5);
    g_assert_cmpint (t->dims[3].value, ==, 4);
  }
  {
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "a", 3, (int64_t[]){ -2, 5, 4 });
    add_input (m, "b", 2, (int64_t[]){ 6, 5 });
    add_input (m, "bias", 1, (int64_t[]){ 6 });
    OwbNode *n = our_node (m, "FusedMatMul", "fm", "a,b,bias", "y");
    tu_set_int (n, "transA", 1);
    tu_set_int (n, "transB", 1);
    add_output (m, "y");
    const OwbValueType *t = inferred (m, "y");
    g_assert_cmpint (t->rank, ==, 3);
    g_assert_cmpstr (t->dims[0].param, ==, "N");
    g_assert_cmpint (t->dims[1].value, ==, 4);
    g_assert_cmpint (t->dims[2].value, ==, 6);
  }
  {
    g_autoptr (OwbModel) m = tu_model_new (13);
    add_input (m, "a", 2, (int64_t[]){ -2, 5 });
    add_input (m, "b", 2, (int64_t[]){ 5, 7 });
    OwbNode *n = our_node (m, "FusedGemm", "fg", "a,b", "y");
    tu_set_string (n, "activation", "HardSigmoid");
    tu_set_floats (n, "activation_params", 2, (float[]){ 0.1f, 0.2f });
    add_output (m, "y");
    const OwbValueType *t = inferred (m, "y");
    g_assert_cmpint (t->rank, ==, 2);
    g_assert_cmpstr (t->dims[0].param, ==, "N");
    g_assert_cmpint (t->dims[1].value, ==, 7);
  }
}

/* Bad attributes and shapes of the fused ops give errors that name the node, never a crash. */
static void
test_schema_errors (void)
{
  struct {
    const char *op, *activation;
    int n_params;
    const char *inputs, *message;
  } cases[] = {
    { "FusedConv", "Swoosh", 0, "x,w", "activation 'Swoosh' is not one of" },
    { "FusedConv", "LeakyRelu", 2, "x,w", "activation LeakyRelu takes 1 activation_params, got 2" },
    { "FusedConv", NULL, 1, "x,w", "activation_params given without an activation" },
    { "FusedConv", "Relu", 0, "x,w,,bad_z", "residual Z float32[1,5,6,7] does not have the output's shape" },
    /* the NHWC form checks Z as FusedConv does (it used to call another type a shape mismatch) */
    { "NhwcConv", NULL, 0, "xh,wh,,int_z", "residual Z is int64 but the convolution gives float32" },
    { "NhwcConv", NULL, 0, "xh,wh,,bad_z", "residual Z float32[1,5,6,7] does not have the output's shape" },
    { "FusedMatMul", "Relu", 0, "m,m2,bad_bias", "bias has 3 values for 4 output columns" },
    { "FusedMatMul", "Relu", 0, "m,m", "inner dimensions differ" },
    { "FusedGemm", "Clip", 1, "m,m2", "activation Clip takes 2 activation_params, got 1" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = tu_model_new (13);
      add_input (m, "x", 4, (int64_t[]){ 1, 3, 8, 8 });
      add_weight (m, "w", 4, (int64_t[]){ 5, 3, 3, 3 });
      add_input (m, "bad_z", 4, (int64_t[]){ 1, 5, 6, 7 });
      add_input (m, "xh", 4, (int64_t[]){ 1, 8, 8, 3 });
      add_weight (m, "wh", 4, (int64_t[]){ 3, 3, 3, 5 });
      add_input_typed (m, "int_z", OWB_TYPE_INT64, 4, (int64_t[]){ 1, 6, 6, 5 });
      add_input (m, "m", 2, (int64_t[]){ 2, 3 });
      add_input (m, "m2", 2, (int64_t[]){ 3, 4 });
      add_input (m, "bad_bias", 1, (int64_t[]){ 3 });
      OwbNode *n = our_node (m, cases[i].op, "bad", cases[i].inputs, "y");
      if (cases[i].activation)
        tu_set_string (n, "activation", cases[i].activation);
      if (cases[i].n_params)
        tu_set_floats (n, "activation_params", cases[i].n_params, (float[]){ 0.1f, 0.2f });
      add_output (m, "y");
      GError *error = NULL;
      OwbSession *s = tu_session (m, 1, &error);
      g_assert_null (s);
      g_assert_nonnull (error);
      if (!strstr (error->message, cases[i].message) || !strstr (error->message, "'bad'"))
        g_error ("case %u: unexpected message: %s", i, error->message);
      g_clear_error (&error);
    }
}

/* A fused op's kernel checks what inference could not know: Z fed with another shape at run time. */
static void
test_kernel_errors (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  add_input (m, "x", 4, (int64_t[]){ -2, 3, 6, 6 });
  add_weight (m, "w", 4, (int64_t[]){ 4, 3, 3, 3 });
  tu_add_value (m->graph->inputs, "z", OWB_TYPE_FLOAT, 4, (int64_t[]){ -1, -1, -1, -1 }, NULL);
  OwbNode *n = our_node (m, "FusedConv", "fc", "x,w,,z", "y");
  tu_set_ints (n, "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
  add_output (m, "y");
  GError *error = NULL;
  g_autoptr (OwbSession) s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  g_autoptr (OwbTensor) x = seeded_tensor (OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 3, 6, 6 }, 1, -1, 1);
  g_autoptr (OwbTensor) z = seeded_tensor (OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 4, 6, 5 }, 2, -1, 1);
  OwbTensor *inputs[] = { x, z }, *y = NULL;
  const char *names[] = { "x", "z" };
  g_assert_false (owb_session_run (s, 2, names, inputs, 1, NULL, &y, NULL, NULL, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "Z"));
  g_clear_error (&error);
  g_assert_null (y);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/optimizer/fuse-nn/conv-bn", test_conv_bn);
  g_test_add_func ("/optimizer/fuse-nn/conv-bn-near-misses", test_conv_bn_near_misses);
  g_test_add_func ("/optimizer/fuse-nn/created-names-unique", test_created_names_unique);
  g_test_add_func ("/optimizer/fuse-nn/transpose-matmul-weight-not-copied", test_transpose_matmul_weight_not_copied);
  g_test_add_func ("/optimizer/fuse-nn/conv-mul", test_conv_mul);
  g_test_add_func ("/optimizer/fuse-nn/conv-mul-near-misses", test_conv_mul_near_misses);
  g_test_add_func ("/optimizer/fuse-nn/conv-add", test_conv_add);
  g_test_add_func ("/optimizer/fuse-nn/conv-add-near-misses", test_conv_add_near_misses);
  g_test_add_func ("/optimizer/fuse-nn/conv-chain", test_conv_chain);
  g_test_add_func ("/optimizer/fuse-nn/matmul-scale-output", test_matmul_scale_output);
  g_test_add_func ("/optimizer/fuse-nn/matmul-scale-input", test_matmul_scale_input);
  g_test_add_func ("/optimizer/fuse-nn/matmul-scale-gemm", test_matmul_scale_gemm);
  g_test_add_func ("/optimizer/fuse-nn/matmul-scale-near-misses", test_matmul_scale_near_misses);
  g_test_add_func ("/optimizer/fuse-nn/matmul-scale-leaves-gelu", test_matmul_scale_leaves_gelu);
  g_test_add_func ("/optimizer/fuse-nn/transpose-matmul-2d", test_transpose_matmul_2d);
  g_test_add_func ("/optimizer/fuse-nn/transpose-matmul-batched", test_transpose_matmul_batched);
  g_test_add_func ("/optimizer/fuse-nn/transpose-matmul-near-misses", test_transpose_matmul_near_misses);
  g_test_add_func ("/optimizer/fuse-nn/matmul-add-gemm", test_matmul_add_gemm);
  g_test_add_func ("/optimizer/fuse-nn/matmul-add-batched", test_matmul_add_batched);
  g_test_add_func ("/optimizer/fuse-nn/matmul-add-near-misses", test_matmul_add_near_misses);
  g_test_add_func ("/optimizer/fuse-nn/activation-conv", test_activation_conv);
  g_test_add_func ("/optimizer/fuse-nn/activation-clip", test_activation_clip);
  g_test_add_func ("/optimizer/fuse-nn/activation-gated", test_activation_gated);
  g_test_add_func ("/optimizer/fuse-nn/activation-residual", test_activation_residual);
  g_test_add_func ("/optimizer/fuse-nn/activation-two-convs", test_activation_two_convs);
  g_test_add_func ("/optimizer/fuse-nn/activation-gemm-matmul", test_activation_gemm_matmul);
  g_test_add_func ("/optimizer/fuse-nn/activation-gelu", test_activation_gelu);
  g_test_add_func ("/optimizer/fuse-nn/activation-near-misses", test_activation_near_misses);
  g_test_add_func ("/optimizer/fuse-nn/fused-conv-geometries", test_fused_conv_geometries);
  g_test_add_func ("/optimizer/fuse-nn/fused-double", test_fused_double);
  g_test_add_func ("/optimizer/fuse-nn/fused-matmul-kernel", test_fused_matmul_kernel);
  g_test_add_func ("/optimizer/fuse-nn/schema-inference", test_schema_inference);
  g_test_add_func ("/optimizer/fuse-nn/schema-errors", test_schema_errors);
  g_test_add_func ("/optimizer/fuse-nn/kernel-errors", test_kernel_errors);
  return g_test_run ();
}
