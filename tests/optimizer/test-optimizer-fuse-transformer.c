/* test-optimizer-fuse-transformer.c: the transformer fusions (layer norm, GELU, bias GELU, skip layer
 * norm, multi-head attention): the graph after each pass, provenance, near misses, and outputs equal
 * to the unoptimized model's; plus the kernels of our fused ops on edge cases. */
#include "../engine/test-util.h"

#include <math.h>
#include <string.h>
#include "optimizer-test-util.h"

#define WB OWB_DOMAIN

/* ---- Helpers ---------------------------------------------------------------------------------- */

static void
add_floats (OwbGraph *g, const char *name, int rank, const int64_t *dims, const float *values)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, rank, dims, NULL);
  if (values)
    memcpy (t->data, values, t->nbytes);
  owb_graph_add_initializer (g, name, t);
}

static void
add_scalar (OwbGraph *g, const char *name, float v)
{
  owb_graph_add_initializer (g, name, owb_tensor_new_scalar_float (v));
}

static void
add_ints (OwbGraph *g, const char *name, int n, const int64_t *values)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ n }, NULL);
  memcpy (t->data, values, n * sizeof (int64_t));
  owb_graph_add_initializer (g, name, t);
}

/* Deterministic values in [-2, 2). */
static float
pseudo_random (guint32 *state)
{
  *state = *state * 1664525u + 1013904223u;
  return ((*state >> 8) / (float) (1 << 24)) * 4.0f - 2.0f;
}

static OwbOptimizeReport *
optimize (OwbModel *m, gboolean portable, const char *const *disabled)
{
  OwbOptimizeOptions o;
  owb_optimize_options_init (&o);
  o.level = OWB_OPTIMIZE_EXTENDED;
  o.portable = portable;
  o.disabled_passes = disabled;
  return optimize_on_cpu (m, &o);
}

static guint
count_ops (const OwbModel *m, const char *op_type, const char *domain)
{
  guint n = 0;
  for (guint i = 0; i < m->graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (m->graph->nodes, i);
      const char *d = node->domain ? node->domain : "";
      if (strcmp (node->op_type, op_type) == 0 && (!domain || strcmp (d, domain) == 0))
        n++;
    }
  return n;
}

static const OwbNode *
find_op (const OwbModel *m, const char *op_type)
{
  for (guint i = 0; i < m->graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (m->graph->nodes, i);
      if (strcmp (node->op_type, op_type) == 0)
        return node;
    }
  return NULL;
}

static gboolean
has_near_miss (const OwbPassReport *p, const char *text)
{
  for (guint i = 0; i < p->near_misses->len; i++)
    if (strstr (g_ptr_array_index (p->near_misses, i), text))
      return TRUE;
  return FALSE;
}

static void
assert_near_miss (const OwbPassReport *p, const char *text)
{
  if (!has_near_miss (p, text))
    {
      for (guint i = 0; i < p->near_misses->len; i++)
        g_printerr ("near miss: %s\n", (char *) g_ptr_array_index (p->near_misses, i));
      g_error ("%s: no near miss mentions \"%s\"", p->pass, text);
    }
}

/* Whether the created node `op_type` lists exactly the nodes `from` (any order). */
static void
assert_created_from (const OwbPassReport *p, const char *op_type, const char *const *from)
{
  for (guint i = 0; i < p->created->len; i++)
    {
      const OwbOptimizeCreated *c = g_ptr_array_index (p->created, i);
      if (strcmp (c->op_type, op_type) != 0)
        continue;
      guint n = g_strv_length ((char **) from);
      g_assert_cmpuint (c->from->len, ==, n);
      for (guint k = 0; k < n; k++)
        {
          gboolean found = FALSE;
          for (guint j = 0; j < c->from->len; j++)
            found |= strcmp (g_ptr_array_index (c->from, j), from[k]) == 0;
          if (!found)
            g_error ("%s created %s without '%s' in its provenance", p->pass, op_type, from[k]);
        }
      return;
    }
  g_error ("%s created no %s", p->pass, op_type);
}

static OwbSession *
session_at (OwbModel *m, OwbOptimizeLevel level, const char *const *disabled)
{
  GError *error = NULL;
  OwbSession *s = opt_session_new (m, level, 2, disabled, &error);
  g_assert_no_error (error);
  return s;
}

/* Runs two sessions on the same inputs; every output must agree within 1e-4 relative to its largest
 * value (NaN where the other has NaN). */
static void
compare_sessions (OwbSession *plain, OwbSession *fused, guint n_inputs, const char *const *names,
                  OwbTensor *const *given)
{
  guint n_out = owb_session_get_n_outputs (plain);
  OwbTensor **a = g_new0 (OwbTensor *, n_out), **b = g_new0 (OwbTensor *, n_out);
  GError *error = NULL;
  g_assert_true (owb_session_run (plain, n_inputs, names, given, n_out, NULL, a, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (owb_session_run (fused, n_inputs, names, given, n_out, NULL, b, NULL, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < n_out; i++)
    {
      g_assert_true (owb_tensor_same_shape (a[i], b[i]));
      double max_abs = 1e-30, max_diff = 0;
      for (int64_t k = 0; k < a[i]->nelems; k++)
        {
          double x = owb_tensor_get_double (a[i], k), y = owb_tensor_get_double (b[i], k);
          g_assert_cmpint (isnan (x), ==, isnan (y));
          if (isnan (x))
            continue;
          max_abs = MAX (max_abs, fabs (x));
          max_diff = MAX (max_diff, fabs (x - y));
        }
      if (max_diff / max_abs > 1e-4)
        g_error ("output %u differs: max diff %g for values up to %g", i, max_diff, max_abs);
      owb_tensor_unref (a[i]);
      owb_tensor_unref (b[i]);
    }
  g_free (a);
  g_free (b);
}

/* The model unoptimized against the extended level (as sessions optimize it). Returns how many
 * `expect_op` nodes the optimized session runs, to see the fusion happened. */
static guint
check_outputs_unchanged (OwbModel *m, guint n_inputs, const char *const *names, OwbTensor *const *given,
                         const char *expect_op)
{
  g_autoptr (OwbSession) plain = session_at (m, OWB_OPTIMIZE_DISABLED, NULL);
  g_autoptr (OwbSession) fused = session_at (m, OWB_OPTIMIZE_EXTENDED, NULL);
  compare_sessions (plain, fused, n_inputs, names, given);
  const OwbGraph *g = owb_session_get_graph (fused);
  guint n = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    n += strcmp (((OwbNode *) g_ptr_array_index (g->nodes, i))->op_type, expect_op) == 0;
  return n;
}

static OwbTensor *
random_tensor (int rank, const int64_t *dims, guint32 seed)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    ((float *) t->data)[i] = pseudo_random (&seed);
  return t;
}

/* ---- Layer norm ------------------------------------------------------------------------------- */

typedef struct {
  int opset;
  gboolean mul_square;   /* Mul (d, d) instead of Pow (d, 2) */
  gboolean no_beta;
  gboolean eps_input;    /* epsilon a graph input (not constant) */
  gboolean wrong_axis;   /* reduce the first axis */
  gboolean d_output;     /* x - mean also a graph output */
  gboolean residual;     /* x = a + b, a residual Add before the norm */
  gboolean sum_output;   /* the residual sum is also a graph output */
  gboolean bias_add;     /* b = c + bias before the residual Add */
} LnOptions;

/* x [batch, 3, 8] -> y, the exported LayerNorm over the last axis, gamma/beta of 8. */
static OwbModel *
ln_model (const LnOptions *o)
{
  OwbModel *m = tu_model_new (o->opset);
  OwbGraph *g = m->graph;
  const char *params[] = { "batch", NULL, NULL };
  const int64_t xdims[] = { -2, 3, 8 };
  if (o->residual)
    {
      tu_add_value (g->inputs, "a", OWB_TYPE_FLOAT, 3, xdims, params);
      tu_add_value (g->inputs, "c", OWB_TYPE_FLOAT, 3, xdims, params);
      const char *skip = "c";
      if (o->bias_add)
        {
          float bias[8] = { 0.5f, -1, 2, 0, 1, 0.25f, -0.5f, 3 };
          add_floats (g, "lin_bias", 1, (int64_t[]){ 8 }, bias);
          tu_node (g, "Add", "lin_add", "lin_bias,c", "cb");
          skip = "cb";
        }
      char *ins = g_strdup_printf ("a,%s", skip);
      tu_node (g, "Add", "residual", ins, "x");
      g_free (ins);
      if (o->sum_output)
        tu_add_value (g->outputs, "x", OWB_TYPE_FLOAT, 3, xdims, params);
    }
  else
    tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 3, xdims, params);
  int64_t axes[1] = { o->wrong_axis ? 0 : -1 };
  OwbNode *rm1, *rm2;
  if (o->opset >= 18)
    {
      add_ints (g, "axes", 1, axes);
      rm1 = tu_node (g, "ReduceMean", "rm1", "x,axes", "mean");
    }
  else
    {
      rm1 = tu_node (g, "ReduceMean", "rm1", "x", "mean");
      tu_set_ints (rm1, "axes", 1, axes);
    }
  tu_node (g, "Sub", "sub", "x,mean", "d");
  if (o->mul_square)
    tu_node (g, "Mul", "square", "d,d", "sq");
  else
    {
      add_scalar (g, "two", 2.0f);
      tu_node (g, "Pow", "square", "d,two", "sq");
    }
  if (o->opset >= 18)
    rm2 = tu_node (g, "ReduceMean", "rm2", "sq,axes", "var");
  else
    {
      rm2 = tu_node (g, "ReduceMean", "rm2", "sq", "var");
      tu_set_ints (rm2, "axes", 1, axes);
    }
  (void) rm1;
  (void) rm2;
  if (o->eps_input)
    tu_add_value (g->inputs, "eps", OWB_TYPE_FLOAT, 0, NULL, NULL);
  else
    add_scalar (g, "eps", 1e-5f);
  tu_node (g, "Add", "add_eps", "var,eps", "ve");
  tu_node (g, "Sqrt", "sqrt", "ve", "std");
  tu_node (g, "Div", "div", "d,std", "n");
  float gamma[8] = { 1, 2, 0.5f, -1, 1.5f, 1, 0.25f, 3 }, beta[8] = { 0, 1, -1, 0.5f, 2, -2, 0, 1 };
  add_floats (g, "gamma", 1, (int64_t[]){ 8 }, gamma);
  tu_node (g, "Mul", "mul_gamma", "n,gamma", o->no_beta ? "y" : "ng");
  if (!o->no_beta)
    {
      add_floats (g, "beta", 1, (int64_t[]){ 8 }, beta);
      tu_node (g, "Add", "add_beta", "beta,ng", "y");
    }
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 3, xdims, params);
  if (o->d_output)
    tu_add_value (g->outputs, "d", OWB_TYPE_FLOAT, 3, xdims, params);
  return m;
}

static const char *const only_layernorm[] = { "fuse_skip_layernorm", NULL };

static void
test_layernorm_fuses (void)
{
  LnOptions o = { .opset = 14 };
  g_autoptr (OwbModel) m = ln_model (&o);
  g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE, only_layernorm);
  g_assert_cmpuint (m->graph->nodes->len, ==, 1);
  const OwbNode *ln = find_op (m, "LayerNormalization");
  g_assert_nonnull (ln);
  g_assert_cmpstr (ln->domain, ==, WB);
  g_assert_cmpint (owb_node_get_int (ln, "axis", 0), ==, -1);
  g_assert_cmpfloat_with_epsilon (owb_node_get_float (ln, "epsilon", 0), 1e-5f, 1e-9);
  g_assert_cmpint (ln->n_inputs, ==, 3);
  g_assert_cmpstr (ln->inputs[1], ==, "gamma");
  g_assert_cmpstr (ln->inputs[2], ==, "beta");
  g_assert_cmpstr (ln->outputs[0], ==, "y");
  g_assert_cmpint (owb_model_get_opset (m, WB), ==, 1);
  const OwbPassReport *p = get_pass_report (r, "fuse_layernorm");
  assert_created_from (p, "LayerNormalization",
                       (const char *const[]){ "rm1", "sub", "square", "rm2", "add_eps", "sqrt", "div", "mul_gamma",
                                              "add_beta", NULL });
  g_assert_cmpuint (p->removed->len, ==, 9);
  /* The exponent and epsilon initializers are gone. */
  g_assert_null (owb_graph_get_initializer (m->graph, "two"));
  g_assert_null (owb_graph_get_initializer (m->graph, "eps"));
}

static void
test_layernorm_standard_and_variants (void)
{
  /* Opset 17: the standard op; opset 18: ReduceMean axes as an input; Mul (d, d); no beta. */
  LnOptions cases[] = { { .opset = 17 }, { .opset = 18, .mul_square = TRUE }, { .opset = 13, .no_beta = TRUE } };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = ln_model (&cases[i]);
      g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE, only_layernorm);
      g_assert_cmpuint (m->graph->nodes->len, ==, 1);
      const OwbNode *ln = find_op (m, "LayerNormalization");
      g_assert_nonnull (ln);
      g_assert_cmpstr (ln->domain, ==, cases[i].opset >= 17 ? "" : WB);
      g_assert_cmpint (ln->n_inputs, ==, cases[i].no_beta ? 2 : 3);
    }
}

static void
test_layernorm_outputs (void)
{
  LnOptions cases[] = { { .opset = 14 }, { .opset = 18, .mul_square = TRUE }, { .opset = 13, .no_beta = TRUE } };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = ln_model (&cases[i]);
      g_autoptr (OwbTensor) x = random_tensor (3, (int64_t[]){ 4, 3, 8 }, 7 + i);
      /* A row far from zero mean checks the variance is not computed as E[x^2] - E[x]^2 in float. */
      for (int k = 0; k < 8; k++)
        ((float *) x->data)[k] += 1000.0f;
      const char *names[] = { "x" };
      OwbTensor *inputs[] = { x };
      g_assert_cmpuint (check_outputs_unchanged (m, 1, names, inputs, "LayerNormalization"), ==, 1);
    }
}

static void
test_layernorm_near_misses (void)
{
  struct {
    LnOptions o;
    gboolean portable;
    const char *text;
  } cases[] = {
    { { .opset = 14 }, TRUE, "needs opset 17 for a standard LayerNormalization" },
    { { .opset = 14, .eps_input = TRUE }, FALSE, "epsilon 'eps' is not a constant" },
    { { .opset = 14, .wrong_axis = TRUE }, FALSE, "do not both reduce the same last axes" },
    { { .opset = 14, .d_output = TRUE }, FALSE, "x - mean ('d') is also used elsewhere" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = ln_model (&cases[i].o);
      guint before = m->graph->nodes->len;
      g_autoptr (OwbOptimizeReport) r = optimize (m, cases[i].portable, only_layernorm);
      g_assert_cmpuint (m->graph->nodes->len, ==, before);
      g_assert_cmpuint (count_ops (m, "LayerNormalization", NULL), ==, 0);
      assert_near_miss (get_pass_report (r, "fuse_layernorm"), cases[i].text);
    }
}

/* ---- Skip layer norm -------------------------------------------------------------------------- */

static void
test_skip_layernorm_fuses (void)
{
  LnOptions o = { .opset = 14, .residual = TRUE };
  g_autoptr (OwbModel) m = ln_model (&o);
  g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE, NULL);
  g_assert_cmpuint (m->graph->nodes->len, ==, 1);
  const OwbNode *n = find_op (m, "SkipLayerNormalization");
  g_assert_nonnull (n);
  g_assert_cmpstr (n->domain, ==, WB);
  g_assert_cmpint (n->n_outputs, ==, 1);
  g_assert_cmpstr (n->inputs[0], ==, "a");
  g_assert_cmpstr (n->inputs[1], ==, "c");
  const OwbPassReport *p = get_pass_report (r, "fuse_skip_layernorm");
  g_assert_cmpuint (p->created->len, ==, 1);
  const OwbOptimizeCreated *c = g_ptr_array_index (p->created, 0);
  g_assert_cmpuint (c->from->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (c->from, 0), ==, "residual");
}

static void
test_skip_layernorm_sum_and_bias (void)
{
  LnOptions o = { .opset = 17, .residual = TRUE, .sum_output = TRUE, .bias_add = TRUE };
  g_autoptr (OwbModel) m = ln_model (&o);
  g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE, NULL);
  g_assert_cmpuint (m->graph->nodes->len, ==, 1);
  const OwbNode *n = find_op (m, "SkipLayerNormalization");
  g_assert_nonnull (n);
  g_assert_cmpint (n->n_inputs, ==, 5);
  g_assert_cmpstr (n->inputs[1], ==, "c");
  g_assert_cmpstr (n->inputs[4], ==, "lin_bias");
  g_assert_cmpint (n->n_outputs, ==, 4);
  g_assert_cmpstr (n->outputs[3], ==, "x");
  g_assert_cmpstr (n->name, ==, "LayerNormalization"); /* the name of the LayerNormalization it replaced */
  assert_created_from (get_pass_report (r, "fuse_skip_layernorm"), "SkipLayerNormalization",
                       (const char *const[]){ "residual", "lin_add", "LayerNormalization", NULL });
}

static void
test_skip_layernorm_outputs (void)
{
  LnOptions cases[] = { { .opset = 14, .residual = TRUE },
                        { .opset = 17, .residual = TRUE, .sum_output = TRUE, .bias_add = TRUE } };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = ln_model (&cases[i]);
      g_autoptr (OwbTensor) a = random_tensor (3, (int64_t[]){ 2, 3, 8 }, 11);
      g_autoptr (OwbTensor) c = random_tensor (3, (int64_t[]){ 2, 3, 8 }, 12);
      const char *names[] = { "a", "c" };
      OwbTensor *inputs[] = { a, c };
      g_assert_cmpuint (check_outputs_unchanged (m, 2, names, inputs, "SkipLayerNormalization"), ==, 1);
    }
}

static void
test_skip_layernorm_near_miss (void)
{
  LnOptions o = { .opset = 17, .residual = TRUE };
  g_autoptr (OwbModel) m = ln_model (&o);
  g_autoptr (OwbOptimizeReport) r = optimize (m, TRUE, NULL);
  g_assert_cmpuint (count_ops (m, "LayerNormalization", ""), ==, 1);
  g_assert_cmpuint (count_ops (m, "Add", NULL), ==, 1);
  assert_near_miss (get_pass_report (r, "fuse_skip_layernorm"), "not a standard ONNX op; kept as is (portable)");
}

/* ---- GELU ------------------------------------------------------------------------------------- */

typedef enum { GELU_ERF_TORCH, GELU_ERF_HALF_FIRST, GELU_TANH_POW, GELU_TANH_CUBE } GeluForm;

/* y = gelu (x [+ bias]) as exported, x [2, 6]. */
static OwbModel *
gelu_model (int opset, GeluForm form, gboolean bias, gboolean extra_use)
{
  OwbModel *m = tu_model_new (opset);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x0", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 6 }, NULL);
  const char *x = "x0";
  if (bias)
    {
      float b[6] = { 0.5f, -1, 0.25f, 2, 0, -0.75f };
      add_floats (g, "bias", 1, (int64_t[]){ 6 }, b);
      tu_node (g, "Add", "bias_add", "x0,bias", "x");
      x = "x";
    }
  char *s;
  add_scalar (g, "one", 1.0f);
  add_scalar (g, "half", 0.5f);
  switch (form)
    {
    case GELU_ERF_TORCH:
      add_scalar (g, "sqrt2", 1.4142135f);
      tu_node (g, "Div", "div", s = g_strdup_printf ("%s,sqrt2", x), "u"), g_free (s);
      tu_node (g, "Erf", "erf", "u", "e");
      tu_node (g, "Add", "add1", "e,one", "e1");
      tu_node (g, "Mul", "mulx", s = g_strdup_printf ("%s,e1", x), "xe"), g_free (s);
      tu_node (g, "Mul", "mulhalf", "xe,half", "y");
      break;
    case GELU_ERF_HALF_FIRST:
      add_scalar (g, "rsqrt2", 0.70710678f);
      tu_node (g, "Mul", "div", s = g_strdup_printf ("rsqrt2,%s", x), "u"), g_free (s);
      tu_node (g, "Erf", "erf", "u", "e");
      tu_node (g, "Add", "add1", "one,e", "e1");
      tu_node (g, "Mul", "mulhalf", s = g_strdup_printf ("half,%s", x), "hx"), g_free (s);
      tu_node (g, "Mul", "mulx", "e1,hx", "y");
      break;
    case GELU_TANH_POW:
    case GELU_TANH_CUBE:
      add_scalar (g, "c044715", 0.044715f);
      add_scalar (g, "sqrt2pi", 0.7978845608f);
      if (form == GELU_TANH_POW)
        {
          add_scalar (g, "three", 3.0f);
          tu_node (g, "Pow", "cube", s = g_strdup_printf ("%s,three", x), "x3"), g_free (s);
        }
      else
        {
          tu_node (g, "Mul", "sq", s = g_strdup_printf ("%s,%s", x, x), "x2"), g_free (s);
          tu_node (g, "Mul", "cube", s = g_strdup_printf ("x2,%s", x), "x3"), g_free (s);
        }
      tu_node (g, "Mul", "cubic", "c044715,x3", "t1");
      tu_node (g, "Add", "inner", s = g_strdup_printf ("%s,t1", x), "t2"), g_free (s);
      tu_node (g, "Mul", "scale", "t2,sqrt2pi", "t3");
      tu_node (g, "Tanh", "tanh", "t3", "e");
      tu_node (g, "Add", "add1", "e,one", "e1");
      tu_node (g, "Mul", "mulhalf", "e1,half", "h");
      tu_node (g, "Mul", "mulx", s = g_strdup_printf ("h,%s", x), "y"), g_free (s);
      break;
    }
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 6 }, NULL);
  if (extra_use)
    tu_add_value (g->outputs, "e", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 6 }, NULL);
  return m;
}

static const char *const only_gelu[] = { "fuse_bias_gelu", NULL };

static void
test_gelu_fuses (void)
{
  struct {
    int opset;
    GeluForm form;
    const char *domain, *approximate;
    guint n_from;
  } cases[] = {
    { 14, GELU_ERF_TORCH, WB, "none", 5 },      { 14, GELU_ERF_HALF_FIRST, WB, "none", 5 },
    { 20, GELU_ERF_TORCH, "", NULL, 5 },        { 14, GELU_TANH_POW, WB, "tanh", 8 },
    { 20, GELU_TANH_CUBE, "", "tanh", 9 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = gelu_model (cases[i].opset, cases[i].form, FALSE, FALSE);
      g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE, only_gelu);
      g_assert_cmpuint (m->graph->nodes->len, ==, 1);
      const OwbNode *n = find_op (m, "Gelu");
      g_assert_nonnull (n);
      g_assert_cmpstr (n->domain, ==, cases[i].domain);
      g_assert_cmpstr (n->inputs[0], ==, "x0");
      g_assert_cmpstr (n->outputs[0], ==, "y");
      g_assert_cmpstr (owb_node_get_string (n, "approximate", NULL), ==, cases[i].approximate);
      const OwbPassReport *p = get_pass_report (r, "fuse_gelu");
      g_assert_cmpuint (p->created->len, ==, 1);
      g_assert_cmpuint (((OwbOptimizeCreated *) g_ptr_array_index (p->created, 0))->from->len, ==, cases[i].n_from);
      g_assert_cmpuint (m->graph->initializers->len, ==, 0);
    }
}

static void
test_gelu_outputs (void)
{
  GeluForm forms[] = { GELU_ERF_TORCH, GELU_ERF_HALF_FIRST, GELU_TANH_POW, GELU_TANH_CUBE };
  for (guint i = 0; i < G_N_ELEMENTS (forms); i++)
    {
      g_autoptr (OwbModel) m = gelu_model (14, forms[i], FALSE, FALSE);
      g_autoptr (OwbTensor) x = random_tensor (2, (int64_t[]){ 2, 6 }, 3 + i);
      const char *names[] = { "x0" };
      OwbTensor *inputs[] = { x };
      g_assert_cmpuint (check_outputs_unchanged (m, 1, names, inputs, "Gelu"), ==, 1);
    }
}

static void
test_gelu_near_misses (void)
{
  g_autoptr (OwbModel) m = gelu_model (14, GELU_ERF_TORCH, FALSE, FALSE);
  g_autoptr (OwbOptimizeReport) r = optimize (m, TRUE, only_gelu);
  g_assert_cmpuint (count_ops (m, "Erf", NULL), ==, 1);
  assert_near_miss (get_pass_report (r, "fuse_gelu"), "needs opset 20 for a standard Gelu (model has 14)");

  /* The Erf output is read elsewhere: nothing fuses (the pattern needs it single-use). */
  g_autoptr (OwbModel) m2 = gelu_model (14, GELU_ERF_TORCH, FALSE, TRUE);
  g_autoptr (OwbOptimizeReport) r2 = optimize (m2, FALSE, only_gelu);
  g_assert_cmpuint (count_ops (m2, "Gelu", NULL), ==, 0);

  /* A tanh form whose inner sum is also an output. */
  g_autoptr (OwbModel) m3 = gelu_model (14, GELU_TANH_POW, FALSE, FALSE);
  tu_add_value (m3->graph->outputs, "t2", OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 6 }, NULL);
  g_autoptr (OwbOptimizeReport) r3 = optimize (m3, FALSE, only_gelu);
  g_assert_cmpuint (count_ops (m3, "Gelu", NULL), ==, 0);
  assert_near_miss (get_pass_report (r3, "fuse_gelu"), "intermediate 't2' is also used elsewhere");
}

/* ---- Bias GELU -------------------------------------------------------------------------------- */

static void
test_bias_gelu_fuses (void)
{
  int opsets[] = { 14, 20 };
  for (guint i = 0; i < G_N_ELEMENTS (opsets); i++)
    {
      g_autoptr (OwbModel) m = gelu_model (opsets[i], GELU_ERF_TORCH, TRUE, FALSE);
      g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE, NULL);
      g_assert_cmpuint (m->graph->nodes->len, ==, 1);
      const OwbNode *n = find_op (m, "BiasGelu");
      g_assert_nonnull (n);
      g_assert_cmpstr (n->domain, ==, WB);
      g_assert_cmpstr (n->inputs[0], ==, "x0");
      g_assert_cmpstr (n->inputs[1], ==, "bias");
      g_assert_cmpstr (owb_node_get_string (n, "approximate", NULL), ==, "none");
      const OwbPassReport *p = get_pass_report (r, "fuse_bias_gelu");
      g_assert_cmpuint (p->created->len, ==, 1);
      const OwbOptimizeCreated *c = g_ptr_array_index (p->created, 0);
      g_assert_cmpstr (g_ptr_array_index (c->from, 0), ==, "bias_add");
      /* the fused node keeps the Gelu's name (and scope) */
      g_assert_cmpstr (n->name, ==, g_ptr_array_index (c->from, 1));
      g_assert_cmpstr (c->node, ==, n->name);
    }
  g_autoptr (OwbModel) m = gelu_model (14, GELU_TANH_CUBE, TRUE, FALSE);
  g_autoptr (OwbTensor) x = random_tensor (2, (int64_t[]){ 2, 6 }, 5);
  const char *names[] = { "x0" };
  OwbTensor *inputs[] = { x };
  g_assert_cmpuint (check_outputs_unchanged (m, 1, names, inputs, "BiasGelu"), ==, 1);
  g_autoptr (OwbModel) m2 = gelu_model (14, GELU_ERF_HALF_FIRST, TRUE, FALSE);
  g_assert_cmpuint (check_outputs_unchanged (m2, 1, names, inputs, "BiasGelu"), ==, 1);
}

static void
test_bias_gelu_near_miss (void)
{
  g_autoptr (OwbModel) m = gelu_model (20, GELU_ERF_TORCH, TRUE, FALSE);
  g_autoptr (OwbOptimizeReport) r = optimize (m, TRUE, NULL);
  g_assert_cmpuint (count_ops (m, "Gelu", ""), ==, 1);
  g_assert_cmpuint (count_ops (m, "Add", NULL), ==, 1);
  assert_near_miss (get_pass_report (r, "fuse_bias_gelu"), "BiasGelu is not a standard ONNX op; kept as is (portable)");
}

/* ---- Attention -------------------------------------------------------------------------------- */

#define SEQ 13 /* a vector of 8 scores and a tail of 5 per softmax row */
#define BATCH 2
#define HEADS 2
#define HEAD 4
#define HIDDEN (HEADS * HEAD)

typedef struct {
  int opset;
  gboolean mask;
  gboolean split;        /* Split instead of three Slices */
  gboolean scores_output; /* the raw scores also a graph output */
  gboolean k_twice;      /* K^T as two Transposes: (1,0,2) then (0,2,1) */
  gboolean softmax_axis1; /* Softmax over the queries: not attention */
} AttnOptions;

/* torch.nn.MultiheadAttention as exported: qkv [S, B, 3E] packed, sliced, Reshape [S, B*H, D],
 * Transposes, q / sqrt(D), Q K^T, + mask [B*H, 1, S], Softmax, P V, Transpose back, Reshape [S*B, E]. */
static OwbModel *
mha3_model (const AttnOptions *o)
{
  OwbModel *m = tu_model_new (o->opset);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "qkv", OWB_TYPE_FLOAT, 3, (int64_t[]){ SEQ, BATCH, 3 * HIDDEN }, NULL);
  if (o->split)
    {
      add_ints (g, "split", 3, (int64_t[]){ HIDDEN, HIDDEN, HIDDEN });
      OwbNode *s = tu_node (g, "Split", "split", "qkv,split", "q,k,v");
      owb_node_add_attribute (s, "axis", OWB_ATTR_INT)->i = -1;
    }
  else
    {
      add_ints (g, "axis", 1, (int64_t[]){ -1 });
      const char *outs[] = { "q", "k", "v" };
      for (int i = 0; i < 3; i++)
        {
          char *st = g_strdup_printf ("start%d", i), *en = g_strdup_printf ("end%d", i);
          add_ints (g, st, 1, (int64_t[]){ i * HIDDEN });
          add_ints (g, en, 1, (int64_t[]){ i == 2 ? G_MAXINT64 : (i + 1) * HIDDEN });
          char *ins = g_strdup_printf ("qkv,%s,%s,axis", st, en), *name = g_strdup_printf ("slice_%s", outs[i]);
          tu_node (g, "Slice", name, ins, outs[i]);
          g_free (st);
          g_free (en);
          g_free (ins);
          g_free (name);
        }
    }
  add_ints (g, "heads_shape", 3, (int64_t[]){ SEQ, BATCH * HEADS, HEAD });
  tu_node (g, "Reshape", "reshape_q", "q,heads_shape", "qr");
  tu_node (g, "Reshape", "reshape_k", "k,heads_shape", "kr");
  tu_node (g, "Reshape", "reshape_v", "v,heads_shape", "vr");
  tu_set_ints (tu_node (g, "Transpose", "transpose_q", "qr", "qt"), "perm", 3, (int64_t[]){ 1, 0, 2 });
  tu_set_ints (tu_node (g, "Transpose", "transpose_k", "kr", "kt"), "perm", 3,
            o->k_twice ? (int64_t[]){ 1, 0, 2 } : (int64_t[]){ 1, 2, 0 });
  tu_set_ints (tu_node (g, "Transpose", "transpose_v", "vr", "vt"), "perm", 3, (int64_t[]){ 1, 0, 2 });
  add_scalar (g, "sqrt_d", 2.0f);
  tu_node (g, "Div", "scale_q", "qt,sqrt_d", "qs");
  if (o->k_twice)
    {
      tu_set_ints (tu_node (g, "Transpose", "transpose_k2", "kt", "kt2"), "perm", 3, (int64_t[]){ 0, 2, 1 });
      tu_node (g, "MatMul", "qk", "qs,kt2", "scores");
    }
  else
    tu_node (g, "MatMul", "qk", "qs,kt", "scores");
  const char *sm_in = "scores";
  if (o->mask)
    {
      tu_add_value (g->inputs, "mask", OWB_TYPE_FLOAT, 3, (int64_t[]){ BATCH * HEADS, 1, SEQ }, NULL);
      tu_node (g, "Add", "add_mask", "scores,mask", "masked");
      sm_in = "masked";
    }
  char *ins = g_strdup (sm_in);
  owb_node_add_attribute (tu_node (g, "Softmax", "softmax", ins, "probs"), "axis", OWB_ATTR_INT)->i =
      o->softmax_axis1 ? 1 : -1;
  g_free (ins);
  tu_node (g, "MatMul", "pv", "probs,vt", "ctx");
  tu_set_ints (tu_node (g, "Transpose", "transpose_out", "ctx", "ctx_t"), "perm", 3, (int64_t[]){ 1, 0, 2 });
  add_ints (g, "out_shape", 2, (int64_t[]){ SEQ * BATCH, HIDDEN });
  tu_node (g, "Reshape", "reshape_out", "ctx_t,out_shape", "y");
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 2, (int64_t[]){ SEQ * BATCH, HIDDEN }, NULL);
  if (o->scores_output)
    tu_add_value (g->outputs, "scores", OWB_TYPE_FLOAT, 3, (int64_t[]){ BATCH * HEADS, SEQ, SEQ }, NULL);
  return m;
}

/* Per-head views: q, k, v [B, S, E] -> Reshape [B, S, H, D] -> Transpose (0,2,1,3) ((0,2,3,1) for K);
 * (Q K^T) * 1/sqrt(D) + mask [B, 1, 1, S]; output Transpose (0,2,1,3) is itself a graph output. */
static OwbModel *
mha4_model (int opset, gboolean mask)
{
  OwbModel *m = tu_model_new (opset);
  OwbGraph *g = m->graph;
  const char *params[] = { "batch", NULL, NULL };
  const int64_t dims[] = { -2, SEQ, HIDDEN };
  tu_add_value (g->inputs, "q", OWB_TYPE_FLOAT, 3, dims, params);
  tu_add_value (g->inputs, "k", OWB_TYPE_FLOAT, 3, dims, params);
  tu_add_value (g->inputs, "v", OWB_TYPE_FLOAT, 3, dims, params);
  add_ints (g, "heads_shape", 4, (int64_t[]){ 0, 0, HEADS, HEAD });
  tu_node (g, "Reshape", "reshape_q", "q,heads_shape", "qr");
  tu_node (g, "Reshape", "reshape_k", "k,heads_shape", "kr");
  tu_node (g, "Reshape", "reshape_v", "v,heads_shape", "vr");
  tu_set_ints (tu_node (g, "Transpose", "transpose_q", "qr", "qt"), "perm", 4, (int64_t[]){ 0, 2, 1, 3 });
  tu_set_ints (tu_node (g, "Transpose", "transpose_k", "kr", "kt"), "perm", 4, (int64_t[]){ 0, 2, 1, 3 });
  tu_set_ints (tu_node (g, "Transpose", "transpose_kt", "kt", "ktt"), "perm", 4, (int64_t[]){ 0, 1, 3, 2 });
  tu_set_ints (tu_node (g, "Transpose", "transpose_v", "vr", "vt"), "perm", 4, (int64_t[]){ 0, 2, 1, 3 });
  tu_node (g, "MatMul", "qk", "qt,ktt", "scores");
  add_scalar (g, "rsqrt_d", 0.5f);
  tu_node (g, "Mul", "scale", "rsqrt_d,scores", "scaled");
  const char *sm_in = "scaled";
  if (mask)
    {
      const char *mp[] = { "batch", NULL, NULL, NULL };
      tu_add_value (g->inputs, "mask", OWB_TYPE_FLOAT, 4, (int64_t[]){ -2, 1, 1, SEQ }, mp);
      tu_node (g, "Add", "add_mask", "mask,scaled", "masked");
      sm_in = "masked";
    }
  char *ins = g_strdup (sm_in);
  tu_node (g, "Softmax", "softmax", ins, "probs");
  g_free (ins);
  tu_node (g, "MatMul", "pv", "probs,vt", "ctx");
  tu_set_ints (tu_node (g, "Transpose", "transpose_out", "ctx", "y"), "perm", 4, (int64_t[]){ 0, 2, 1, 3 });
  const char *op[] = { "batch", NULL, NULL, NULL };
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 4, (int64_t[]){ -2, SEQ, HEADS, HEAD }, op);
  return m;
}

static void
test_attention_fuses_3d (void)
{
  AttnOptions o = { .opset = 14, .mask = TRUE };
  g_autoptr (OwbModel) m = mha3_model (&o);
  g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE, NULL);
  const OwbNode *n = find_op (m, "MultiHeadAttention");
  g_assert_nonnull (n);
  g_assert_cmpstr (n->domain, ==, WB);
  g_assert_cmpint (owb_node_get_int (n, "num_heads", 0), ==, HEADS);
  g_assert_cmpint (owb_node_get_int (n, "seq_first", 0), ==, 1);
  g_assert_cmpfloat_with_epsilon (owb_node_get_float (n, "scale", 0), 0.5f, 1e-7);
  /* Packed: the Slices went too, query is qkv itself. */
  g_assert_cmpstr (n->inputs[0], ==, "qkv");
  g_assert_cmpstr (n->inputs[1], ==, "");
  g_assert_cmpuint (count_ops (m, "Slice", NULL), ==, 0);
  g_assert_cmpuint (count_ops (m, "Softmax", NULL), ==, 0);
  g_assert_cmpuint (count_ops (m, "Transpose", NULL), ==, 0);
  /* Nodes left: the mask's Reshape to [B, H, 1, S], the attention, the final Reshape. */
  g_assert_cmpuint (m->graph->nodes->len, ==, 3);
  const OwbPassReport *p = get_pass_report (r, "fuse_attention");
  assert_created_from (p, "MultiHeadAttention",
                       (const char *const[]){ "slice_q", "slice_k", "slice_v", "reshape_q", "reshape_k", "reshape_v",
                                              "transpose_q", "transpose_k", "transpose_v", "scale_q", "qk",
                                              "add_mask", "softmax", "pv", "transpose_out", NULL });
  g_assert_cmpuint (p->removed->len, ==, 15);
}

static void
test_attention_outputs (void)
{
  /* 3-D with a mask (some keys masked out with a large negative), with Split, with K^T in two
   * Transposes; and 4-D. */
  for (int variant = 0; variant < 3; variant++)
    {
      AttnOptions o = { .opset = 14, .mask = variant == 0, .split = variant == 1, .k_twice = variant == 2 };
      g_autoptr (OwbModel) m = mha3_model (&o);
      g_autoptr (OwbTensor) qkv = random_tensor (3, (int64_t[]){ SEQ, BATCH, 3 * HIDDEN }, 21 + variant);
      g_autoptr (OwbTensor) mask = owb_tensor_new (OWB_TYPE_FLOAT, 3, (int64_t[]){ BATCH * HEADS, 1, SEQ }, NULL);
      float *mk = mask->data;
      for (int bh = 0; bh < BATCH * HEADS; bh++)
        for (int s = 0; s < SEQ; s++)
          mk[bh * SEQ + s] = (bh / HEADS == 1 && s >= 3) ? -1e9f : 0.1f * s;
      const char *names[] = { "qkv", "mask" };
      OwbTensor *inputs[] = { qkv, mask };
      g_assert_cmpuint (check_outputs_unchanged (m, o.mask ? 2 : 1, names, inputs, "MultiHeadAttention"), ==, 1);
    }
  g_autoptr (OwbModel) m = mha4_model (14, TRUE);
  const char *names[] = { "q", "k", "v", "mask" };
  g_autoptr (OwbTensor) q = random_tensor (3, (int64_t[]){ 3, SEQ, HIDDEN }, 31);
  g_autoptr (OwbTensor) k = random_tensor (3, (int64_t[]){ 3, SEQ, HIDDEN }, 32);
  g_autoptr (OwbTensor) v = random_tensor (3, (int64_t[]){ 3, SEQ, HIDDEN }, 33);
  g_autoptr (OwbTensor) mask = random_tensor (4, (int64_t[]){ 3, 1, 1, SEQ }, 34);
  OwbTensor *inputs[] = { q, k, v, mask };
  g_assert_cmpuint (check_outputs_unchanged (m, 4, names, inputs, "MultiHeadAttention"), ==, 1);
}

static void
test_attention_fuses_4d (void)
{
  g_autoptr (OwbModel) m = mha4_model (14, FALSE);
  g_autoptr (OwbOptimizeReport) r = optimize (m, FALSE, NULL);
  const OwbNode *n = find_op (m, "MultiHeadAttention");
  g_assert_nonnull (n);
  g_assert_cmpint (owb_node_get_int (n, "seq_first", 0), ==, 0);
  g_assert_cmpstr (n->inputs[0], ==, "q");
  g_assert_cmpstr (n->inputs[1], ==, "k");
  g_assert_cmpstr (n->inputs[2], ==, "v");
  /* y is a graph output of shape [B, S, H, D]: a Reshape splits the fused [B, S, E] again. */
  g_assert_cmpuint (m->graph->nodes->len, ==, 2);
  const OwbNode *reshape = find_op (m, "Reshape");
  g_assert_nonnull (reshape);
  g_assert_cmpstr (reshape->outputs[0], ==, "y");
  const OwbValueInfo *y = owb_graph_find_value_info (m->graph, "y");
  g_assert_nonnull (y);
  g_assert_cmpint (y->type.rank, ==, 4);
  g_assert_cmpstr (y->type.dims[0].param, ==, "batch");
}

static void
test_attention_near_misses (void)
{
  struct {
    AttnOptions o;
    gboolean portable;
    const char *text;
  } cases[] = {
    { { .opset = 14, .mask = TRUE }, TRUE, "needs opset 23 for a standard Attention (model has 14)" },
    { { .opset = 14, .scores_output = TRUE }, FALSE, "'scores' is also used elsewhere" },
    { { .opset = 14, .softmax_axis1 = TRUE }, FALSE, "the Softmax is not over the last axis" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = mha3_model (&cases[i].o);
      g_autoptr (OwbOptimizeReport) r = optimize (m, cases[i].portable, NULL);
      g_assert_cmpuint (count_ops (m, "Softmax", NULL), ==, 1);
      assert_near_miss (get_pass_report (r, "fuse_attention"), cases[i].text);
    }
}

static void
test_attention_portable_standard (void)
{
  AttnOptions o = { .opset = 23, .mask = TRUE };
  g_autoptr (OwbModel) m = mha3_model (&o);
  g_autoptr (OwbOptimizeReport) r = optimize (m, TRUE, NULL);
  const OwbNode *n = find_op (m, "Attention");
  g_assert_nonnull (n);
  g_assert_cmpstr (n->domain, ==, "");
  g_assert_cmpint (owb_node_get_int (n, "q_num_heads", 0), ==, HEADS);
  g_assert_cmpuint (count_ops (m, "MultiHeadAttention", NULL), ==, 0);
  g_assert_cmpuint (count_ops (m, "Softmax", NULL), ==, 0);
  g_assert_cmpint (owb_model_get_opset (m, WB), <, 1);
  /* The rewritten model computes what the original does. */
  g_autoptr (OwbModel) original = mha3_model (&o);
  g_autoptr (OwbSession) plain = session_at (original, OWB_OPTIMIZE_DISABLED, NULL);
  g_autoptr (OwbSession) fused = session_at (m, OWB_OPTIMIZE_DISABLED, NULL);
  g_autoptr (OwbTensor) qkv = random_tensor (3, (int64_t[]){ SEQ, BATCH, 3 * HIDDEN }, 41);
  g_autoptr (OwbTensor) mask = random_tensor (3, (int64_t[]){ BATCH * HEADS, 1, SEQ }, 42);
  const char *names[] = { "qkv", "mask" };
  OwbTensor *inputs[] = { qkv, mask };
  compare_sessions (plain, fused, 2, names, inputs);
}

/* ---- Kernels of our ops on their own ---------------------------------------------------------- */

static OwbModel *
single_op_model (const char *op, int n_inputs, const char *const *names, const int64_t *const *dims,
                 const int *ranks, int n_outputs)
{
  OwbModel *m = tu_model_new (14);
  owb_model_set_opset (m, WB, 1);
  OwbNode *node = owb_node_new (op, WB, "op");
  for (int i = 0; i < n_inputs; i++)
    {
      owb_node_add_input (node, names[i]);
      if (names[i][0])
        tu_add_value (m->graph->inputs, names[i], OWB_TYPE_FLOAT, ranks[i], dims[i], NULL);
    }
  for (int i = 0; i < n_outputs; i++)
    {
      char *o = g_strdup_printf ("out%d", i);
      owb_node_add_output (node, o);
      g_free (o);
    }
  owb_graph_add_node (m->graph, node);
  OwbValueType t;
  owb_value_type_init_unknown (&t);
  t.kind = OWB_VALUE_TENSOR;
  t.dtype = OWB_TYPE_FLOAT;
  for (int i = 0; i < n_outputs; i++)
    {
      char *o = g_strdup_printf ("out%d", i);
      g_ptr_array_add (m->graph->outputs, owb_value_info_new (o, &t));
      g_free (o);
    }
  return m;
}

static void
test_kernel_skip_layernorm_broadcast_skip (void)
{
  /* skip [S, H] repeated over the batch; mean and inverse std outputs; the sum output. */
  const char *names[] = { "x", "skip", "gamma", "beta" };
  const int64_t xd[] = { 2, 3, 4 }, sd[] = { 3, 4 }, vd[] = { 4 };
  const int64_t *dims[] = { xd, sd, vd, vd };
  const int ranks[] = { 3, 2, 1, 1 };
  g_autoptr (OwbModel) m = single_op_model ("SkipLayerNormalization", 4, names, dims, ranks, 4);
  g_autoptr (OwbSession) s = session_at (m, OWB_OPTIMIZE_DISABLED, NULL);
  g_autoptr (OwbTensor) x = random_tensor (3, xd, 1), skip = random_tensor (2, sd, 2), gamma = random_tensor (1, vd, 3),
                        beta = random_tensor (1, vd, 4);
  OwbTensor *in[] = { x, skip, gamma, beta }, *out[4] = { NULL };
  GError *error = NULL;
  g_assert_true (owb_session_run (s, 4, names, in, 4, NULL, out, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out[1]->rank, ==, 3);
  g_assert_cmpint (out[1]->dims[2], ==, 1);
  const float *xv = x->data, *sv = skip->data, *g = gamma->data, *b = beta->data;
  for (int r = 0; r < 6; r++)
    {
      double sum[4], mean = 0, var = 0;
      for (int i = 0; i < 4; i++)
        mean += sum[i] = xv[r * 4 + i] + sv[(r % 3) * 4 + i];
      mean /= 4;
      for (int i = 0; i < 4; i++)
        var += (sum[i] - mean) * (sum[i] - mean);
      double inv = 1 / sqrt (var / 4 + 1e-5);
      g_assert_cmpfloat_with_epsilon (((float *) out[1]->data)[r], mean, 1e-5);
      g_assert_cmpfloat_with_epsilon (((float *) out[2]->data)[r], inv, 1e-3 * inv);
      for (int i = 0; i < 4; i++)
        {
          g_assert_cmpfloat_with_epsilon (((float *) out[3]->data)[r * 4 + i], sum[i], 1e-6);
          g_assert_cmpfloat_with_epsilon (((float *) out[0]->data)[r * 4 + i], (sum[i] - mean) * inv * g[i] + b[i], 1e-4);
        }
    }
  for (int i = 0; i < 4; i++)
    owb_tensor_unref (out[i]);
}

static void
test_kernel_attention_bad_input (void)
{
  /* Packed query whose width is not 3 * heads * head_size: refused at load with a clear error. */
  const char *names[] = { "qkv" };
  const int64_t qd[] = { 1, 3, 10 };
  const int64_t *dims[] = { qd };
  const int ranks[] = { 3 };
  g_autoptr (OwbModel) m = single_op_model ("MultiHeadAttention", 1, names, dims, ranks, 1);
  OwbNode *node = g_ptr_array_index (m->graph->nodes, 0);
  owb_node_add_attribute (node, "num_heads", OWB_ATTR_INT)->i = 2;
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", NULL);
  GError *error = NULL;
  OwbSession *s = owb_session_new (m, &opts, &error);
  g_assert_null (s);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_assert_nonnull (strstr (error->message, "packed query"));
  g_clear_error (&error);
  /* num_heads missing. */
  owb_attribute_clear (&node->attributes[0]);
  node->n_attributes = 0;
  s = owb_session_new (m, &opts, &error);
  g_assert_null (s);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL);
  g_clear_error (&error);
  g_ptr_array_unref (opts.providers);
}

/* Inference of our ops: symbolic dims pass through; bad attributes and shapes are errors. */
static OwbModel *
symbolic_op_model (const char *op, const char *inputs, int n_inputs, const int64_t *const *dims, const int *ranks,
                   const char *const *const *params)
{
  OwbModel *m = tu_model_new (14);
  owb_model_set_opset (m, WB, 1);
  g_auto (GStrv) names = g_strsplit (inputs, ",", -1);
  OwbNode *node = owb_node_new (op, WB, "op");
  for (int i = 0; i < n_inputs; i++)
    {
      owb_node_add_input (node, names[i]);
      if (names[i][0])
        tu_add_value (m->graph->inputs, names[i], OWB_TYPE_FLOAT, ranks[i], dims[i], params ? params[i] : NULL);
    }
  owb_node_add_output (node, "y");
  owb_graph_add_node (m->graph, node);
  OwbValueType t;
  owb_value_type_init_unknown (&t);
  g_ptr_array_add (m->graph->outputs, owb_value_info_new ("y", &t));
  return m;
}

static void
test_schema_inference (void)
{
  GError *error = NULL;
  /* MultiHeadAttention, seq-first, separate Q/K/V with symbolic seq and batch. */
  const char *const qp[] = { "seq", "batch", NULL }, *const kp[] = { "kv_seq", "batch", NULL };
  const int64_t qd[] = { -2, -2, 8 }, vd[] = { -2, -2, 12 };
  const int64_t *dims[] = { qd, qd, vd };
  const int ranks[] = { 3, 3, 3 };
  const char *const *const params[] = { qp, kp, kp };
  g_autoptr (OwbModel) m = symbolic_op_model ("MultiHeadAttention", "q,k,v", 3, dims, ranks, params);
  OwbNode *node = g_ptr_array_index (m->graph->nodes, 0);
  owb_node_add_attribute (node, "num_heads", OWB_ATTR_INT)->i = 2;
  owb_node_add_attribute (node, "seq_first", OWB_ATTR_INT)->i = 1;
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  const OwbValueInfo *y = owb_graph_find_value_info (m->graph, "y");
  g_assert_cmpint (y->type.rank, ==, 3);
  g_assert_cmpstr (y->type.dims[0].param, ==, "seq");
  g_assert_cmpstr (y->type.dims[1].param, ==, "batch");
  g_assert_cmpint (y->type.dims[2].value, ==, 12);
  /* 3 heads do not divide a hidden size of 8. */
  node->attributes[0].i = 3;
  g_assert_false (owb_model_infer_shapes (m, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_clear_error (&error);

  /* LayerNormalization: axis out of range; a scale that does not fit. */
  const int64_t xd[] = { -2, 4 }, gd[] = { 4 }, bad[] = { 3 };
  const int64_t *ln_dims[] = { xd, gd };
  const int ln_ranks[] = { 2, 1 };
  const char *const xp[] = { "batch", NULL };
  const char *const *const ln_params[] = { xp, NULL };
  g_autoptr (OwbModel) ln = symbolic_op_model ("LayerNormalization", "x,g", 2, ln_dims, ln_ranks, ln_params);
  g_assert_true (owb_model_infer_shapes (ln, &error));
  g_assert_cmpstr (owb_graph_find_value_info (ln->graph, "y")->type.dims[0].param, ==, "batch");
  owb_node_add_attribute (g_ptr_array_index (ln->graph->nodes, 0), "axis", OWB_ATTR_INT)->i = 2;
  g_assert_false (owb_model_infer_shapes (ln, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL);
  g_clear_error (&error);
  const int64_t *ln_bad[] = { xd, bad };
  g_autoptr (OwbModel) ln2 = symbolic_op_model ("LayerNormalization", "x,g", 2, ln_bad, ln_ranks, ln_params);
  g_assert_false (owb_model_infer_shapes (ln2, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_clear_error (&error);

  /* Gelu: an unknown approximation; BiasGelu: a bias that is not the last dim. */
  const int64_t *g_dims[] = { xd };
  const int g_ranks[] = { 2 };
  g_autoptr (OwbModel) gelu = symbolic_op_model ("Gelu", "x", 1, g_dims, g_ranks, NULL);
  OwbAttribute *a = owb_node_add_attribute (g_ptr_array_index (gelu->graph->nodes, 0), "approximate", OWB_ATTR_STRING);
  a->s = g_strdup ("fast");
  a->s_len = 4;
  g_assert_false (owb_model_infer_shapes (gelu, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL);
  g_clear_error (&error);
  g_autoptr (OwbModel) bg = symbolic_op_model ("BiasGelu", "x,g", 2, ln_bad, ln_ranks, NULL);
  g_assert_false (owb_model_infer_shapes (bg, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_clear_error (&error);

  /* SkipLayerNormalization: skip must be the input's trailing dims. */
  const int64_t sx[] = { 2, 3, 4 }, ss[] = { 2, 4 };
  const int64_t *sk_dims[] = { sx, ss, gd };
  const int sk_ranks[] = { 3, 2, 1 };
  g_autoptr (OwbModel) sk = symbolic_op_model ("SkipLayerNormalization", "x,s,g", 3, sk_dims, sk_ranks, NULL);
  g_assert_false (owb_model_infer_shapes (sk, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_clear_error (&error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/optimizer/fuse-transformer/layernorm/fuses", test_layernorm_fuses);
  g_test_add_func ("/optimizer/fuse-transformer/layernorm/standard-and-variants", test_layernorm_standard_and_variants);
  g_test_add_func ("/optimizer/fuse-transformer/layernorm/outputs", test_layernorm_outputs);
  g_test_add_func ("/optimizer/fuse-transformer/layernorm/near-misses", test_layernorm_near_misses);
  g_test_add_func ("/optimizer/fuse-transformer/skip-layernorm/fuses", test_skip_layernorm_fuses);
  g_test_add_func ("/optimizer/fuse-transformer/skip-layernorm/sum-and-bias", test_skip_layernorm_sum_and_bias);
  g_test_add_func ("/optimizer/fuse-transformer/skip-layernorm/outputs", test_skip_layernorm_outputs);
  g_test_add_func ("/optimizer/fuse-transformer/skip-layernorm/near-miss", test_skip_layernorm_near_miss);
  g_test_add_func ("/optimizer/fuse-transformer/gelu/fuses", test_gelu_fuses);
  g_test_add_func ("/optimizer/fuse-transformer/gelu/outputs", test_gelu_outputs);
  g_test_add_func ("/optimizer/fuse-transformer/gelu/near-misses", test_gelu_near_misses);
  g_test_add_func ("/optimizer/fuse-transformer/bias-gelu/fuses", test_bias_gelu_fuses);
  g_test_add_func ("/optimizer/fuse-transformer/bias-gelu/near-miss", test_bias_gelu_near_miss);
  g_test_add_func ("/optimizer/fuse-transformer/attention/fuses-3d", test_attention_fuses_3d);
  g_test_add_func ("/optimizer/fuse-transformer/attention/fuses-4d", test_attention_fuses_4d);
  g_test_add_func ("/optimizer/fuse-transformer/attention/outputs", test_attention_outputs);
  g_test_add_func ("/optimizer/fuse-transformer/attention/near-misses", test_attention_near_misses);
  g_test_add_func ("/optimizer/fuse-transformer/attention/portable-standard", test_attention_portable_standard);
  g_test_add_func ("/optimizer/fuse-transformer/kernels/skip-layernorm", test_kernel_skip_layernorm_broadcast_skip);
  g_test_add_func ("/optimizer/fuse-transformer/kernels/attention-bad-input", test_kernel_attention_bad_input);
  g_test_add_func ("/optimizer/fuse-transformer/kernels/schema-inference", test_schema_inference);
  return g_test_run ();
}
