/* test-kernels-control.c: If, Loop, Scan, sequence and optional ops on what the ONNX conformance
 * cases leave out: nested subgraphs reading outer values, zero iterations, early exit, Scan axes and
 * directions, opset-8 sequence_lens, symbolic inference and bad models or positions. */
#include <owb/owb.h>

#include <string.h>
#include "../engine/test-util.h"

/* ---- builders ---- */

static OwbModel *
model_new (int opset)
{
  OwbModel *m = owb_model_new ();
  m->ir_version = 8;
  owb_model_set_opset (m, "", opset);
  m->graph = owb_graph_new ("main");
  m->graph->model = m;
  return m;
}

/* dims: -1 unknown. */
static void
add_value (GPtrArray *list, const char *name, OwbDataType dtype, int rank, const int64_t *dims)
{
  OwbValueType t;
  owb_value_type_init_tensor (&t, dtype, rank, NULL);
  for (int i = 0; i < rank; i++)
    t.dims[i] = dims[i] >= 0 ? OWB_DIM_VALUE (dims[i]) : OWB_DIM_UNKNOWN;
  g_ptr_array_add (list, owb_value_info_new (name, &t));
}

/* Comma-separated names; an empty entry is a missing optional input. */
static OwbNode *
add_node (OwbGraph *g, const char *op, const char *inputs, const char *outputs)
{
  static int count;
  g_autofree char *name = g_strdup_printf ("%s_%d", op, count++);
  return tu_node (g, op, name, inputs, outputs);
}

static void
set_graph (OwbNode *n, const char *name, OwbGraph *g)
{
  owb_node_add_attribute (n, name, OWB_ATTR_GRAPH)->g = g;
}

static OwbTensor *
floats (int rank, const int64_t *dims, const float *values)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, rank, dims, NULL);
  if (values && t->nbytes)
    memcpy (t->data, values, t->nbytes);
  return t;
}

static OwbTensor *
bool_scalar (gboolean v)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_BOOL, 0, NULL, NULL);
  *(uint8_t *) t->data = v;
  return t;
}

static OwbSession *
session_new (OwbModel *m, GError **error)
{
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", NULL);
  opts.n_threads = 1;
  OwbSession *s = owb_session_new (m, &opts, error);
  g_ptr_array_unref (opts.providers);
  return s;
}

static void
assert_floats (const OwbTensor *t, int rank, const int64_t *dims, const float *values)
{
  g_assert_nonnull (t);
  g_assert_cmpint (t->kind, ==, OWB_VALUE_TENSOR);
  g_assert_cmpint (t->dtype, ==, OWB_TYPE_FLOAT);
  g_assert_cmpint (t->rank, ==, rank);
  for (int d = 0; d < rank; d++)
    g_assert_cmpint (t->dims[d], ==, dims[d]);
  for (int64_t i = 0; i < t->nelems; i++)
    g_assert_cmpfloat_with_epsilon (((const float *) t->data)[i], values[i], 1e-6);
}

/* ---- Loop ---- */

/* acc, steps, iters = Loop (M, cond, acc0) with a body that, per iteration i, adds the outer x to acc
 * while i < k (an outer initializer) and subtracts it after, through an If nested in the body whose
 * branches read acc from the body and x from the main graph. Scan outputs: acc after each step,
 * and i. With stop_at >= 0 the body's condition becomes i < stop_at. */
static OwbModel *
loop_model (gboolean with_m, gboolean with_cond, int64_t stop_at)
{
  OwbModel *m = model_new (13);
  OwbGraph *g = m->graph;
  if (with_m)
    add_value (g->inputs, "M", OWB_TYPE_INT64, 0, NULL);
  if (with_cond)
    add_value (g->inputs, "cond", OWB_TYPE_BOOL, 0, NULL);
  add_value (g->inputs, "acc0", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (g->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  owb_graph_add_initializer (g, "k", owb_tensor_new_scalar_int64 (3));

  OwbGraph *body = owb_graph_new ("body");
  add_value (body->inputs, "i", OWB_TYPE_INT64, 0, NULL);
  add_value (body->inputs, "cond_in", OWB_TYPE_BOOL, 0, NULL);
  add_value (body->inputs, "acc", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_node (body, "Less", "i,k", "add_it");
  OwbNode *iff = add_node (NULL, "If", "add_it", "t");
  OwbGraph *then_g = owb_graph_new ("then");
  add_node (then_g, "Add", "acc,x", "t_then");
  add_value (then_g->outputs, "t_then", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  OwbGraph *else_g = owb_graph_new ("else");
  add_node (else_g, "Sub", "acc,x", "t_else");
  add_value (else_g->outputs, "t_else", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  set_graph (iff, "then_branch", then_g);
  set_graph (iff, "else_branch", else_g);
  owb_graph_add_node (body, iff);
  if (stop_at >= 0)
    {
      owb_graph_add_initializer (body, "stop", owb_tensor_new_scalar_int64 (stop_at));
      add_node (body, "Less", "i,stop", "cond_out");
    }
  else
    add_node (body, "Identity", "cond_in", "cond_out");
  add_node (body, "Identity", "t", "acc_out");
  add_node (body, "Identity", "t", "step");
  add_node (body, "Identity", "i", "iter");
  add_value (body->outputs, "cond_out", OWB_TYPE_BOOL, 0, NULL);
  add_value (body->outputs, "acc_out", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (body->outputs, "step", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (body->outputs, "iter", OWB_TYPE_INT64, 0, NULL);

  char *inputs = g_strdup_printf ("%s,%s,acc0", with_m ? "M" : "", with_cond ? "cond" : "");
  OwbNode *loop = add_node (NULL, "Loop", inputs, "acc,steps,iters");
  g_free (inputs);
  set_graph (loop, "body", body);
  owb_graph_add_node (g, loop);
  add_value (g->outputs, "acc", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (g->outputs, "steps", OWB_TYPE_FLOAT, 2, (int64_t[]) { -1, 2 });
  add_value (g->outputs, "iters", OWB_TYPE_INT64, 1, (int64_t[]) { -1 });
  return m;
}

static gboolean
run_loop (OwbModel *m, int64_t trips, int cond, OwbTensor **out, GError **error)
{
  g_autoptr (OwbSession) s = session_new (m, error);
  if (!s)
    return FALSE;
  const char *names[4];
  OwbTensor *in[4];
  guint n = 0;
  if (trips >= -1000)
    {
      names[n] = "M";
      in[n++] = owb_tensor_new_scalar_int64 (trips);
    }
  if (cond >= 0)
    {
      names[n] = "cond";
      in[n++] = bool_scalar (cond);
    }
  names[n] = "acc0";
  in[n++] = floats (1, (int64_t[]) { 2 }, (float[]) { 10, 20 });
  names[n] = "x";
  in[n++] = floats (1, (int64_t[]) { 2 }, (float[]) { 1, 2 });
  gboolean ok = owb_session_run (s, n, names, in, 3, NULL, out, NULL, NULL, error);
  for (guint i = 0; i < n; i++)
    owb_tensor_unref (in[i]);
  return ok;
}

static void
test_loop_nested_if_outer_value (void)
{
  g_autoptr (OwbModel) m = loop_model (TRUE, TRUE, -1);
  OwbTensor *out[3] = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_loop (m, 4, TRUE, out, &error));
  g_assert_no_error (error);
  /* i = 0, 1, 2 add x; i = 3 subtracts it. */
  assert_floats (out[0], 1, (int64_t[]) { 2 }, (float[]) { 12, 24 });
  assert_floats (out[1], 2, (int64_t[]) { 4, 2 }, (float[]) { 11, 22, 12, 24, 13, 26, 12, 24 });
  g_assert_cmpint (out[2]->dtype, ==, OWB_TYPE_INT64);
  g_assert_cmpint (out[2]->rank, ==, 1);
  g_assert_cmpint (out[2]->dims[0], ==, 4);
  for (int i = 0; i < 4; i++)
    g_assert_cmpint (((int64_t *) out[2]->data)[i], ==, i);
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (out[i]);
}

static void
test_loop_zero_iterations (void)
{
  g_autoptr (OwbModel) m = loop_model (TRUE, TRUE, -1);
  /* M = 0, a negative M, and a false initial condition all run the body zero times: the carried
   * value is the initial one and scan outputs have 0 rows of the body's declared shape. */
  int64_t trips[] = { 0, -5, 7 };
  int conds[] = { TRUE, TRUE, FALSE };
  for (int c = 0; c < 3; c++)
    {
      OwbTensor *out[3] = { 0 };
      g_autoptr (GError) error = NULL;
      g_assert_true (run_loop (m, trips[c], conds[c], out, &error));
      g_assert_no_error (error);
      assert_floats (out[0], 1, (int64_t[]) { 2 }, (float[]) { 10, 20 });
      assert_floats (out[1], 2, (int64_t[]) { 0, 2 }, NULL);
      g_assert_cmpint (out[2]->dtype, ==, OWB_TYPE_INT64);
      g_assert_cmpint (out[2]->rank, ==, 1);
      g_assert_cmpint (out[2]->dims[0], ==, 0);
      for (int i = 0; i < 3; i++)
        owb_tensor_unref (out[i]);
    }
}

static void
test_loop_early_exit (void)
{
  /* No M: a while loop that stops once the body's condition (i < 2) is false, after i = 2. */
  g_autoptr (OwbModel) m = loop_model (FALSE, TRUE, 2);
  OwbTensor *out[3] = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_true (run_loop (m, -10000, TRUE, out, &error));
  g_assert_no_error (error);
  assert_floats (out[0], 1, (int64_t[]) { 2 }, (float[]) { 13, 26 });
  g_assert_cmpint (out[1]->dims[0], ==, 3);
  g_assert_cmpint (out[2]->dims[0], ==, 3);
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (out[i]);

  /* M smaller than where the condition stops wins. */
  g_autoptr (OwbModel) m2 = loop_model (TRUE, FALSE, 2);
  g_assert_true (run_loop (m2, 1, -1, out, &error));
  g_assert_no_error (error);
  assert_floats (out[0], 1, (int64_t[]) { 2 }, (float[]) { 11, 22 });
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (out[i]);
}

/* A Loop body and the If branches in it keep what inference gave their steps, as the main graph's
 * steps do: the second run of 20 iterations infers only the steps whose inference reads values
 * (Loop and If themselves), not the body's 6 steps and a branch's step 20 times over: 21 steps
 * now, 141 in every run before (inference was a tenth of a small recurrent model's run). The
 * outputs stay those of the first run. */
static void
test_loop_memo (void)
{
  g_autoptr (OwbModel) m = loop_model (TRUE, TRUE, -1);
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) s = session_new (m, &error);
  g_assert_no_error (error);
  const char *names[] = { "M", "cond", "acc0", "x" };
  OwbTensor *in[] = { owb_tensor_new_scalar_int64 (20), bool_scalar (TRUE),
                      floats (1, (int64_t[]) { 2 }, (float[]) { 10, 20 }), floats (1, (int64_t[]) { 2 }, (float[]) { 1, 2 }) };
  guint inferred[2];
  float acc[2][2];
  for (int run = 0; run < 2; run++)
    {
      OwbTensor *out[3] = { 0 };
      OwbRunStats stats;
      g_assert_true (owb_session_run (s, 4, names, in, 3, NULL, out, &stats, NULL, &error));
      g_assert_no_error (error);
      inferred[run] = stats.n_inferred;
      memcpy (acc[run], out[0]->data, sizeof acc[run]);
      for (int i = 0; i < 3; i++)
        owb_tensor_unref (out[i]);
    }
  g_test_message ("steps inferred: %u in the first run, %u in the second", inferred[0], inferred[1]);
  /* the first run infers every body step at least once */
  g_assert_cmpuint (inferred[0], >=, 7);
  /* the second: the Loop, and each iteration's If */
  g_assert_cmpuint (inferred[1], <=, 1 + 20);
  g_assert_cmpmem (acc[0], sizeof acc[0], acc[1], sizeof acc[1]);
  for (int i = 0; i < 4; i++)
    owb_tensor_unref (in[i]);
}

static OwbTensor *
ints (int n, const int64_t *values)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]) { n }, NULL);
  memcpy (t->data, values, n * sizeof *values);
  return t;
}

/* acc, steps = Loop (M, cond, acc0) whose body reshapes acc to a Constant node's shape [1, 2] and back
 * to the main graph's initializer `flat` ([2]), and gives Reshape (acc, shp) as its scan output, shp
 * a main-graph input: steps is [M, shp...]. */
static OwbModel *
loop_reshape_model (void)
{
  OwbModel *m = model_new (13);
  OwbGraph *g = m->graph;
  add_value (g->inputs, "M", OWB_TYPE_INT64, 0, NULL);
  add_value (g->inputs, "cond", OWB_TYPE_BOOL, 0, NULL);
  add_value (g->inputs, "acc0", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (g->inputs, "shp", OWB_TYPE_INT64, 1, (int64_t[]) { 2 });
  owb_graph_add_initializer (g, "flat", ints (1, (int64_t[]) { 2 }));

  OwbGraph *body = owb_graph_new ("body");
  add_value (body->inputs, "i", OWB_TYPE_INT64, 0, NULL);
  add_value (body->inputs, "cond_in", OWB_TYPE_BOOL, 0, NULL);
  add_value (body->inputs, "acc", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  OwbNode *c = add_node (body, "Constant", "", "c12");
  owb_node_add_attribute (c, "value", OWB_ATTR_TENSOR)->t = ints (2, (int64_t[]) { 1, 2 });
  add_node (body, "Reshape", "acc,c12", "r12");
  add_node (body, "Reshape", "r12,flat", "acc_out");
  add_node (body, "Reshape", "acc,shp", "step");
  add_node (body, "Identity", "cond_in", "cond_out");
  add_value (body->outputs, "cond_out", OWB_TYPE_BOOL, 0, NULL);
  add_value (body->outputs, "acc_out", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (body->outputs, "step", OWB_TYPE_FLOAT, 2, (int64_t[]) { -1, -1 });

  OwbNode *loop = add_node (NULL, "Loop", "M,cond,acc0", "acc,steps");
  set_graph (loop, "body", body);
  owb_graph_add_node (g, loop);
  add_value (g->outputs, "acc", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (g->outputs, "steps", OWB_TYPE_FLOAT, 3, (int64_t[]) { -1, -1, -1 });
  return m;
}

/* A body step whose inference reads only constant values (a Constant node's, an outer initializer's)
 * keeps its memo between iterations and runs; one that reads a value fed at run time is inferred
 * again, so a new shape tensor of the same type gives the new shape. */
static void
test_loop_memo_constant_values (void)
{
  g_autoptr (OwbModel) m = loop_reshape_model ();
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) s = session_new (m, &error);
  g_assert_no_error (error);
  enum { M = 10 };
  const char *names[] = { "M", "cond", "acc0", "shp" };
  const int64_t shapes[3][2] = { { 1, 2 }, { 1, 2 }, { 2, 1 } };
  guint inferred[3];
  for (int run = 0; run < 3; run++)
    {
      OwbTensor *in[] = { owb_tensor_new_scalar_int64 (M), bool_scalar (TRUE),
                          floats (1, (int64_t[]) { 2 }, (float[]) { 3, 4 }), ints (2, shapes[run]) };
      OwbTensor *out[2] = { 0 };
      OwbRunStats stats;
      g_assert_true (owb_session_run (s, 4, names, in, 2, NULL, out, &stats, NULL, &error));
      g_assert_no_error (error);
      inferred[run] = stats.n_inferred;
      assert_floats (out[0], 1, (int64_t[]) { 2 }, (float[]) { 3, 4 });
      float steps[2 * M];
      for (int k = 0; k < M; k++)
        steps[2 * k] = 3, steps[2 * k + 1] = 4;
      assert_floats (out[1], 3, (int64_t[]) { M, shapes[run][0], shapes[run][1] }, steps);
      for (int i = 0; i < 2; i++)
        owb_tensor_unref (out[i]);
      for (int i = 0; i < 4; i++)
        owb_tensor_unref (in[i]);
    }
  g_test_message ("steps inferred: %u, %u, %u", inferred[0], inferred[1], inferred[2]);
  /* The second run: the Loop and each iteration's Reshape to shp; the two Reshapes to constant
   * shapes keep their memos (3 per iteration, 31, when every value read meant inferring again). */
  g_assert_cmpuint (inferred[1], <=, 1 + M);
  g_assert_cmpuint (inferred[1], >=, 1 + M);
  g_assert_cmpuint (inferred[2], >=, 1 + M);
}

static void
test_loop_bad_models (void)
{
  /* A body whose outputs do not match the node's is refused at session creation. */
  g_autoptr (OwbModel) m = loop_model (TRUE, TRUE, -1);
  OwbNode *loop = g_ptr_array_index (m->graph->nodes, 0);
  owb_node_add_output (loop, "extra");
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) s = session_new (m, &error);
  g_assert_null (s);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "Loop"));
  g_assert_nonnull (strstr (error->message, "expected 3"));
  g_clear_error (&error);

  /* M of the wrong type fails at run time with an error naming it. */
  g_autoptr (OwbModel) m2 = loop_model (TRUE, TRUE, -1);
  ((OwbValueInfo *) g_ptr_array_index (m2->graph->inputs, 0))->has_type = FALSE;
  g_autoptr (OwbSession) s2 = session_new (m2, &error);
  g_assert_no_error (error);
  const char *names[] = { "M", "cond", "acc0", "x" };
  OwbTensor *in[4] = { floats (0, NULL, (float[]) { 3 }), bool_scalar (TRUE), floats (1, (int64_t[]) { 2 }, NULL),
                       floats (1, (int64_t[]) { 2 }, NULL) };
  OwbTensor *out[3] = { 0 };
  g_assert_false (owb_session_run (s2, 4, names, in, 3, NULL, out, NULL, NULL, &error));
  g_assert_nonnull (strstr (error->message, "M"));
  for (int i = 0; i < 4; i++)
    owb_tensor_unref (in[i]);
}

/* ---- Scan ---- */

static void
test_scan9_axes_directions (void)
{
  /* x [2, 3] scanned along axis 1 from the end; outputs stacked on the last axis, reversed. */
  g_autoptr (OwbModel) m = model_new (16);
  add_value (m->graph->inputs, "s0", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, -1 });
  OwbGraph *body = owb_graph_new ("body");
  add_value (body->inputs, "s", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (body->inputs, "xi", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_node (body, "Add", "s,xi", "s_out");
  add_node (body, "Identity", "s_out", "y");
  add_value (body->outputs, "s_out", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (body->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  OwbNode *scan = add_node (NULL, "Scan", "s0,x", "s_final,ys");
  set_graph (scan, "body", body);
  tu_set_int (scan, "num_scan_inputs", 1);
  tu_set_ints (scan, "scan_input_axes", 1, (int64_t[]) { 1 });
  tu_set_ints (scan, "scan_input_directions", 1, (int64_t[]) { 1 });
  tu_set_ints (scan, "scan_output_axes", 1, (int64_t[]) { -1 });
  tu_set_ints (scan, "scan_output_directions", 1, (int64_t[]) { 1 });
  owb_graph_add_node (m->graph, scan);
  add_value (m->graph->outputs, "s_final", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (m->graph->outputs, "ys", OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, -1 });

  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) s = session_new (m, &error);
  g_assert_no_error (error);
  /* The inferred scan output shape puts the steps on the last axis. */
  const OwbGraph *pg = owb_session_get_graph (s);
  const OwbValueInfo *ys = owb_graph_find_value_info (pg, "ys");
  g_autofree char *ys_type = owb_value_type_to_string (&ys->type);
  g_assert_cmpstr (ys_type, ==, "float32[2,?]");

  const char *names[] = { "s0", "x" };
  OwbTensor *in[2] = { floats (1, (int64_t[]) { 2 }, (float[]) { 0, 0 }),
                       floats (2, (int64_t[]) { 2, 3 }, (float[]) { 1, 2, 3, 4, 5, 6 }) };
  OwbTensor *out[2] = { 0 };
  g_assert_true (owb_session_run (s, 2, names, in, 2, NULL, out, NULL, NULL, &error));
  g_assert_no_error (error);
  /* Steps see columns 2, 1, 0: states [3,6], [5,11], [6,15]; reversed placement puts the last
   * step first. */
  assert_floats (out[0], 1, (int64_t[]) { 2 }, (float[]) { 6, 15 });
  assert_floats (out[1], 2, (int64_t[]) { 2, 3 }, (float[]) { 6, 5, 3, 15, 11, 6 });
  for (int i = 0; i < 2; i++)
    {
      owb_tensor_unref (in[i]);
      owb_tensor_unref (out[i]);
    }

  in[0] = floats (1, (int64_t[]) { 2 }, NULL);
  in[1] = floats (2, (int64_t[]) { 2, 0 }, NULL);
  g_assert_true (owb_session_run (s, 2, names, in, 2, NULL, out, NULL, NULL, &error));
  g_assert_no_error (error);
  /* Zero steps: the state passes through, the scan output is empty along its scan axis. */
  assert_floats (out[0], 1, (int64_t[]) { 2 }, (float[]) { 0, 0 });
  assert_floats (out[1], 2, (int64_t[]) { 2, 0 }, NULL);
  for (int i = 0; i < 2; i++)
    {
      owb_tensor_unref (in[i]);
      owb_tensor_unref (out[i]);
    }
}

static void
test_scan8_sequence_lens (void)
{
  /* Opset 8: batch of 2, the second entry only 1 step long: its scan output rows after that are
   * zeros and its final state is the state after one step. */
  g_autoptr (OwbModel) m = model_new (8);
  add_value (m->graph->inputs, "lens", OWB_TYPE_INT32, 1, (int64_t[]) { 2 });
  add_value (m->graph->inputs, "s0", OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 1 });
  add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 3, 1 });
  OwbGraph *body = owb_graph_new ("body");
  add_value (body->inputs, "s", OWB_TYPE_FLOAT, 1, (int64_t[]) { 1 });
  add_value (body->inputs, "xi", OWB_TYPE_FLOAT, 1, (int64_t[]) { 1 });
  add_node (body, "Add", "s,xi", "s_out");
  add_node (body, "Identity", "s_out", "y");
  add_value (body->outputs, "s_out", OWB_TYPE_FLOAT, 1, (int64_t[]) { 1 });
  add_value (body->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]) { 1 });
  OwbNode *scan = add_node (NULL, "Scan", "lens,s0,x", "s_final,ys");
  set_graph (scan, "body", body);
  tu_set_int (scan, "num_scan_inputs", 1);
  tu_set_ints (scan, "directions", 1, (int64_t[]) { 1 });
  owb_graph_add_node (m->graph, scan);
  add_value (m->graph->outputs, "s_final", OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 1 });
  add_value (m->graph->outputs, "ys", OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 3, 1 });

  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) s = session_new (m, &error);
  g_assert_no_error (error);
  const char *names[] = { "lens", "s0", "x" };
  OwbTensor *lens = owb_tensor_new (OWB_TYPE_INT32, 1, (int64_t[]) { 2 }, NULL);
  ((int32_t *) lens->data)[0] = 3;
  ((int32_t *) lens->data)[1] = 1;
  OwbTensor *in[3] = { lens, floats (2, (int64_t[]) { 2, 1 }, (float[]) { 0, 100 }),
                       floats (3, (int64_t[]) { 2, 3, 1 }, (float[]) { 1, 2, 3, 10, 20, 30 }) };
  OwbTensor *out[2] = { 0 };
  g_assert_true (owb_session_run (s, 3, names, in, 2, NULL, out, NULL, NULL, &error));
  g_assert_no_error (error);
  /* Reverse direction within each entry's own length: entry 0 sees 3, 2, 1; entry 1 sees 10. */
  assert_floats (out[0], 2, (int64_t[]) { 2, 1 }, (float[]) { 6, 110 });
  assert_floats (out[1], 3, (int64_t[]) { 2, 3, 1 }, (float[]) { 3, 5, 6, 110, 0, 0 });
  owb_tensor_unref (out[0]);
  owb_tensor_unref (out[1]);

  /* A length beyond the sequence is an error. */
  ((int32_t *) lens->data)[1] = 4;
  g_assert_false (owb_session_run (s, 3, names, in, 2, NULL, out, NULL, NULL, &error));
  g_assert_nonnull (strstr (error->message, "sequence_lens"));
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (in[i]);
}

/* ---- inference ---- */

static gboolean
infer (OwbNode *node, int opset, const OwbValueType *const *in, OwbValueType *out, GError **error)
{
  const OwbOpSchema *schema = owb_op_schema_lookup ("", node->op_type, opset);
  g_assert_nonnull (schema);
  const OwbTensor *vals[8] = { 0 };
  node->opset = opset;
  OwbInferContext ctx = { .node = node, .opset = opset, .n_inputs = node->n_inputs, .inputs = in,
                          .input_values = vals, .n_outputs = node->n_outputs, .outputs = out };
  return owb_op_infer (schema, &ctx, error);
}

static OwbValueType
tensor_type (OwbDataType dtype, int rank, const char *const *dims)
{
  OwbValueType t;
  owb_value_type_init_tensor (&t, dtype, rank, NULL);
  for (int i = 0; i < rank; i++)
    t.dims[i] = g_ascii_isdigit (dims[i][0]) ? OWB_DIM_VALUE (g_ascii_strtoll (dims[i], NULL, 10))
                                             : (OwbDim) { -1, g_intern_string (dims[i]) };
  return t;
}

static void
assert_type (const OwbValueType *t, const char *want)
{
  g_autofree char *s = owb_value_type_to_string (t);
  g_assert_cmpstr (s, ==, want);
}

static void
assert_fails (OwbNode *node, int opset, const OwbValueType *const *in, const char *what)
{
  OwbValueType out[4];
  g_autoptr (GError) error = NULL;
  g_assert_false (infer (node, opset, in, out, &error));
  g_assert_nonnull (error);
  if (what)
    g_assert_nonnull (strstr (error->message, what));
}

static void
test_infer_scan_symbolic (void)
{
  OwbValueType s = tensor_type (OWB_TYPE_FLOAT, 1, (const char *[]) { "4" });
  OwbValueType x = tensor_type (OWB_TYPE_FLOAT, 2, (const char *[]) { "seq", "4" });
  const OwbValueType *in[2] = { &s, &x };
  OwbValueType out[2];
  OwbGraph *body = owb_graph_new ("body");
  add_value (body->inputs, "s", OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
  add_value (body->inputs, "xi", OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
  add_value (body->outputs, "s_out", OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
  add_value (body->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
  g_autoptr (OwbNode) scan = add_node (NULL, "Scan", "s0,x", "s_final,ys");
  set_graph (scan, "body", body);
  assert_fails (scan, 11, in, "num_scan_inputs");
  tu_set_int (scan, "num_scan_inputs", 1);
  tu_set_ints (scan, "scan_output_axes", 1, (int64_t[]) { 1 });
  g_assert_true (infer (scan, 11, in, out, NULL));
  assert_type (&out[0], "float32[4]");
  assert_type (&out[1], "float32[4,seq]");
  tu_set_ints (scan, "scan_input_axes", 1, (int64_t[]) { 2 });
  assert_fails (scan, 11, in, "axis");
  tu_set_ints (scan, "scan_input_axes", 1, (int64_t[]) { 0 });
  tu_set_ints (scan, "scan_input_directions", 1, (int64_t[]) { 2 });
  assert_fails (scan, 11, in, "scan_input_directions");
}

static void
test_infer_bad_control_flow (void)
{
  OwbValueType cond = tensor_type (OWB_TYPE_BOOL, 0, NULL);
  const OwbValueType *in[3] = { &cond };
  g_autoptr (OwbNode) iff = add_node (NULL, "If", "c", "y");
  assert_fails (iff, 13, in, "then_branch");
  OwbGraph *then_g = owb_graph_new ("then"), *else_g = owb_graph_new ("else");
  add_value (then_g->outputs, "a", OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 });
  add_value (else_g->outputs, "b", OWB_TYPE_FLOAT, 1, (int64_t[]) { 5 });
  add_value (else_g->outputs, "b2", OWB_TYPE_FLOAT, 1, (int64_t[]) { 5 });
  set_graph (iff, "then_branch", then_g);
  set_graph (iff, "else_branch", else_g);
  assert_fails (iff, 13, in, "outputs");
  g_ptr_array_remove_index (else_g->outputs, 1);
  /* Branch shapes that differ leave the dim unknown. */
  OwbValueType out[2];
  g_assert_true (infer (iff, 13, in, out, NULL));
  assert_type (&out[0], "float32[?]");
  /* cond must be bool. */
  OwbValueType f = tensor_type (OWB_TYPE_FLOAT, 0, NULL);
  in[0] = &f;
  assert_fails (iff, 13, in, "cond");

  g_autoptr (OwbNode) loop = add_node (NULL, "Loop", ",,v", "v_out");
  OwbValueType v = tensor_type (OWB_TYPE_FLOAT, 0, NULL);
  const OwbValueType *lin[3] = { NULL, NULL, &v };
  assert_fails (loop, 13, lin, "body");
}

static void
test_infer_sequences (void)
{
  OwbValueType out[2];
  OwbValueType x = tensor_type (OWB_TYPE_FLOAT, 2, (const char *[]) { "batch", "6" });
  OwbValueType two = tensor_type (OWB_TYPE_INT64, 0, NULL);
  g_autoptr (OwbTensor) two_v = owb_tensor_new_scalar_int64 (2);
  {
    g_autoptr (OwbNode) split = add_node (NULL, "SplitToSequence", "x,split", "seq");
    tu_set_int (split, "axis", 1);
    const OwbValueType *in[2] = { &x, &two };
    const OwbTensor *vals[2] = { NULL, two_v };
    split->opset = 11;
    OwbInferContext ctx = { .node = split, .opset = 11, .n_inputs = 2, .inputs = in, .input_values = vals,
                            .n_outputs = 1, .outputs = out };
    g_assert_true (owb_op_infer (owb_op_schema_lookup ("", "SplitToSequence", 11), &ctx, NULL));
    assert_type (&out[0], "seq(float32[batch,2])");
  }
  {
    g_autoptr (OwbNode) split = add_node (NULL, "SplitToSequence", "x", "seq");
    tu_set_int (split, "axis", -1);
    tu_set_int (split, "keepdims", 0);
    const OwbValueType *in[1] = { &x };
    g_assert_true (infer (split, 11, in, out, NULL));
    assert_type (&out[0], "seq(float32[batch])");
    tu_set_int (split, "axis", 2);
    assert_fails (split, 11, in, "axis");
  }
  {
    g_autoptr (OwbNode) empty = add_node (NULL, "SequenceEmpty", "", "seq");
    tu_set_int (empty, "dtype", 999);
    assert_fails (empty, 11, NULL, "dtype");
  }
  {
    OwbValueType seq;
    owb_value_type_init_unknown (&seq);
    seq.kind = OWB_VALUE_SEQUENCE;
    seq.dtype = OWB_TYPE_FLOAT;
    seq.rank = 2;
    seq.dims[0] = OWB_DIM_VALUE (3);
    seq.dims[1] = (OwbDim) { -1, g_intern_string ("n") };
    const OwbValueType *in[1] = { &seq };
    g_autoptr (OwbNode) concat = add_node (NULL, "ConcatFromSequence", "s", "y");
    assert_fails (concat, 11, in, "axis");
    tu_set_int (concat, "axis", -1);
    tu_set_int (concat, "new_axis", 1);
    g_assert_true (infer (concat, 11, in, out, NULL));
    assert_type (&out[0], "float32[3,n,?]");
    tu_set_int (concat, "axis", 3);
    assert_fails (concat, 11, in, "axis");

    OwbValueType i32 = tensor_type (OWB_TYPE_INT32, 1, (const char *[]) { "3" });
    const OwbValueType *ins[2] = { &seq, &i32 };
    g_autoptr (OwbNode) insert = add_node (NULL, "SequenceInsert", "s,t", "s2");
    assert_fails (insert, 11, ins, "int32");
    /* A tensor where a sequence belongs. */
    const OwbValueType *bad[2] = { &x, &x };
    g_autoptr (OwbNode) at = add_node (NULL, "SequenceAt", "s,p", "y");
    assert_fails (at, 11, bad, "sequence");
  }
}

/* ---- sequences and optionals at run time ---- */

static void
test_sequence_ops_run (void)
{
  g_autoptr (OwbModel) m = model_new (18);
  OwbGraph *g = m->graph;
  add_value (g->inputs, "a", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (g->inputs, "b", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (g->inputs, "pos", OWB_TYPE_INT64, 0, NULL);
  owb_graph_add_initializer (g, "minus2", owb_tensor_new_scalar_int64 (-2));
  add_node (g, "SequenceConstruct", "a,b", "s");
  add_node (g, "SequenceErase", "s,minus2", "s_b");
  add_node (g, "SequenceLength", "s_b", "len");
  add_node (g, "SequenceAt", "s,pos", "at");
  OwbNode *concat = add_node (g, "ConcatFromSequence", "s", "stacked");
  tu_set_int (concat, "axis", -1);
  tu_set_int (concat, "new_axis", 1);
  OwbNode *empty_opt = add_node (NULL, "Optional", "", "none");
  OwbAttribute *tp = owb_node_add_attribute (empty_opt, "type", OWB_ATTR_TYPE_PROTO);
  owb_value_type_init_tensor (&tp->tp, OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  owb_graph_add_node (g, empty_opt);
  add_node (g, "OptionalHasElement", "none", "has");
  add_value (g->outputs, "len", OWB_TYPE_INT64, 0, NULL);
  add_value (g->outputs, "at", OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 });
  add_value (g->outputs, "stacked", OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 2 });
  add_value (g->outputs, "has", OWB_TYPE_BOOL, 0, NULL);

  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) s = session_new (m, &error);
  g_assert_no_error (error);
  const char *names[] = { "a", "b", "pos" };
  OwbTensor *in[3] = { floats (1, (int64_t[]) { 2 }, (float[]) { 1, 2 }),
                       floats (1, (int64_t[]) { 2 }, (float[]) { 3, 4 }), owb_tensor_new_scalar_int64 (-1) };
  OwbTensor *out[4] = { 0 };
  g_assert_true (owb_session_run (s, 3, names, in, 4, NULL, out, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (*(int64_t *) out[0]->data, ==, 1);
  assert_floats (out[1], 1, (int64_t[]) { 2 }, (float[]) { 3, 4 });
  assert_floats (out[2], 2, (int64_t[]) { 2, 2 }, (float[]) { 1, 3, 2, 4 });
  g_assert_cmpint (*(uint8_t *) out[3]->data, ==, 0);
  for (int i = 0; i < 4; i++)
    owb_tensor_unref (out[i]);

  /* Positions past either end are errors, not crashes. */
  int64_t bad[] = { 2, -3 };
  for (int i = 0; i < 2; i++)
    {
      *(int64_t *) in[2]->data = bad[i];
      g_clear_error (&error);
      g_assert_false (owb_session_run (s, 3, names, in, 4, NULL, out, NULL, NULL, &error));
      g_assert_nonnull (strstr (error->message, "out of range"));
      g_assert_nonnull (strstr (error->message, "SequenceAt"));
    }
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (in[i]);
}

static void
test_optional_get_empty (void)
{
  g_autoptr (OwbModel) m = model_new (18);
  OwbNode *opt = add_node (NULL, "Optional", "", "none");
  OwbAttribute *tp = owb_node_add_attribute (opt, "type", OWB_ATTR_TYPE_PROTO);
  owb_value_type_init_tensor (&tp->tp, OWB_TYPE_FLOAT, 0, NULL);
  owb_graph_add_node (m->graph, opt);
  add_node (m->graph, "OptionalGetElement", "none", "y");
  add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 0, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) s = session_new (m, &error);
  g_assert_no_error (error);
  OwbTensor *out = NULL;
  g_assert_false (owb_session_run (s, 0, NULL, NULL, 1, NULL, &out, NULL, NULL, &error));
  g_assert_nonnull (strstr (error->message, "empty"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/control/loop/nested-if-outer-value", test_loop_nested_if_outer_value);
  g_test_add_func ("/control/loop/zero-iterations", test_loop_zero_iterations);
  g_test_add_func ("/control/loop/early-exit", test_loop_early_exit);
  g_test_add_func ("/control/loop/bad-models", test_loop_bad_models);
  g_test_add_func ("/control/loop/memo", test_loop_memo);
  g_test_add_func ("/control/loop/memo-constant-values", test_loop_memo_constant_values);
  g_test_add_func ("/control/scan/axes-directions", test_scan9_axes_directions);
  g_test_add_func ("/control/scan/opset8-sequence-lens", test_scan8_sequence_lens);
  g_test_add_func ("/control/infer/scan-symbolic", test_infer_scan_symbolic);
  g_test_add_func ("/control/infer/bad-control-flow", test_infer_bad_control_flow);
  g_test_add_func ("/control/infer/sequences", test_infer_sequences);
  g_test_add_func ("/control/sequence/run", test_sequence_ops_run);
  g_test_add_func ("/control/optional/get-empty", test_optional_get_empty);
  return g_test_run ();
}
