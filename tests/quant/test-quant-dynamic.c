/* test-quant-dynamic.c: dynamic quantization before/after: MatMul (2-D and 3-D A, per tensor and
 * per channel), Gemm (transB, alpha, beta and C), LSTM, Gather; the quantized graph's ops, the
 * weights' bytes, and outputs close to the float model's on seeded random inputs. */
#include "../engine/test-util.h"
#include "owb-quant-private.h"

#include <math.h>
#include <string.h>

/* Uniform in [-scale, scale). */
static OwbTensor *
random_floats (GRand *rand, float scale, int rank, const int64_t *dims)
{
  OwbTensor *t = owb_tensor_new_random (OWB_TYPE_FLOAT, rank, dims, rand, NULL);
  float *v = t->data;
  for (int64_t i = 0; i < t->nelems; i++)
    v[i] *= scale;
  return t;
}

static guint
count_ops (const OwbModel *m, const char *op_type)
{
  guint n = 0;
  for (guint i = 0; i < m->graph->nodes->len; i++)
    n += strcmp (((OwbNode *) g_ptr_array_index (m->graph->nodes, i))->op_type, op_type) == 0;
  return n;
}

static OwbNode *
find_op (const OwbModel *m, const char *op_type)
{
  for (guint i = 0; i < m->graph->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (m->graph->nodes, i);
      if (strcmp (n->op_type, op_type) == 0)
        return n;
    }
  return NULL;
}

static gsize
initializer_bytes (const OwbModel *m)
{
  gsize n = 0;
  for (guint i = 0; i < m->graph->initializers->len; i++)
    n += ((OwbTensor *) g_ptr_array_index (m->graph->initializers, i))->nbytes;
  return n;
}

static guint
count_initializers_of (const OwbModel *m, OwbDataType dtype)
{
  guint n = 0;
  for (guint i = 0; i < m->graph->initializers->len; i++)
    n += ((OwbTensor *) g_ptr_array_index (m->graph->initializers, i))->dtype == dtype;
  return n;
}

/* Every graph output of `m` for the given feeds. */
static GPtrArray *
run (OwbModel *m, guint n, const char *const *names, OwbTensor *const *inputs)
{
  GError *error = NULL;
  g_autoptr (OwbSession) s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  guint n_out = owb_session_get_n_outputs (s);
  GPtrArray *outs = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  g_ptr_array_set_size (outs, n_out);
  g_assert_true (owb_session_run (s, n, names, inputs, n_out, NULL, (OwbTensor **) outs->pdata, NULL, NULL, &error));
  g_assert_no_error (error);
  return outs;
}

/* |x - y| / |x| in the L2 norm. */
static double
relative_error (const OwbTensor *x, const OwbTensor *y)
{
  g_assert_true (owb_tensor_same_shape (x, y));
  double num = 0, den = 0;
  for (int64_t i = 0; i < x->nelems; i++)
    {
      double a = owb_tensor_get_double (x, i), b = owb_tensor_get_double (y, i);
      num += (a - b) * (a - b);
      den += a * a;
    }
  return den > 0 ? sqrt (num / den) : sqrt (num);
}

/* Runs the float and the quantized models on the same feeds; checks every output's relative
 * error against `tolerance`, and returns the largest. */
static double
compare (OwbModel *f, OwbModel *q, guint n, const char *const *names, OwbTensor *const *inputs, double tolerance)
{
  g_autoptr (GPtrArray) a = run (f, n, names, inputs);
  g_autoptr (GPtrArray) b = run (q, n, names, inputs);
  g_assert_cmpuint (a->len, ==, b->len);
  double worst = 0;
  for (guint i = 0; i < a->len; i++)
    {
      double e = relative_error (g_ptr_array_index (a, i), g_ptr_array_index (b, i));
      g_test_message ("output %u: relative error %.5f", i, e);
      g_assert_cmpfloat (e, <, tolerance);
      worst = MAX (worst, e);
    }
  return worst;
}

static OwbModel *
quantize (OwbModel *m, const OwbQuantOptions *o, OwbOptimizeReport **report)
{
  GError *error = NULL;
  OwbModel *q = owb_quant_quantize_dynamic (m, o, report, &error);
  g_assert_no_error (error);
  g_assert_nonnull (q);
  return q;
}

static gboolean
report_has_near_miss (const OwbOptimizeReport *r, const char *text)
{
  for (guint p = 0; p < r->passes->len; p++)
    {
      const OwbPassReport *pr = g_ptr_array_index (r->passes, p);
      for (guint k = 0; k < pr->near_misses->len; k++)
        if (strstr (g_ptr_array_index (pr->near_misses, k), text))
          return TRUE;
    }
  return FALSE;
}

/* The nodes of op_type the report lists as created, each from `from` only. */
static guint
created_from (const OwbOptimizeReport *r, const char *op_type, const char *from)
{
  guint n = 0;
  for (guint p = 0; p < r->passes->len; p++)
    {
      const OwbPassReport *pr = g_ptr_array_index (r->passes, p);
      for (guint k = 0; k < pr->created->len; k++)
        {
          const OwbOptimizeCreated *c = g_ptr_array_index (pr->created, k);
          if (strcmp (c->op_type, op_type) == 0 && c->from->len == 1
              && strcmp (g_ptr_array_index (c->from, 0), from) == 0)
            n++;
        }
    }
  return n;
}

/* ---- MatMul ---- */

/* y = x @ W, x of shape x_dims (rank 2 or 3), W [k, n]. */
static OwbModel *
matmul_model (GRand *rand, int rank, const int64_t *x_dims, int64_t n)
{
  OwbModel *m = tu_model_new (13);
  int64_t k = x_dims[rank - 1];
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, rank, x_dims, NULL);
  owb_graph_add_initializer (m->graph, "W", random_floats (rand, 0.5f, 2, (int64_t[]){ k, n }));
  tu_node (m->graph, "MatMul", "mm", "x,W", "y");
  int64_t y_dims[3];
  memcpy (y_dims, x_dims, sizeof (int64_t) * rank);
  y_dims[rank - 1] = n;
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, rank, y_dims, NULL);
  return m;
}

static void
check_matmul (int rank, const int64_t *x_dims, gboolean per_channel)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  g_autoptr (OwbModel) m = matmul_model (rand, rank, x_dims, 48);
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  o.per_channel = per_channel;
  g_autoptr (OwbOptimizeReport) report = NULL;
  g_autoptr (OwbModel) q = quantize (m, &o, &report);

  g_assert_cmpuint (count_ops (q, "MatMul"), ==, 0);
  g_assert_cmpuint (count_ops (q, "DynamicQuantizeLinear"), ==, 1);
  g_assert_cmpuint (count_ops (q, "MatMulInteger"), ==, 1);
  g_assert_cmpuint (count_ops (q, "Cast"), ==, 1);
  g_assert_cmpuint (count_ops (q, "Mul"), ==, 2);
  g_assert_null (owb_graph_get_initializer (q->graph, "W"));
  /* b_zero_point: one per column of B, or a scalar. */
  OwbNode *mmi = find_op (q, "MatMulInteger");
  const OwbTensor *bq = owb_graph_get_initializer (q->graph, mmi->inputs[1]);
  const OwbTensor *bzp = owb_graph_get_initializer (q->graph, mmi->inputs[3]);
  g_assert_cmpint (bq->dtype, ==, OWB_TYPE_INT8);
  g_assert_cmpint (bzp->rank, ==, per_channel ? 1 : 0);
  g_assert_cmpint (bzp->nelems, ==, per_channel ? 48 : 1);
  /* The output keeps its name (graph outputs unchanged). */
  g_assert_cmpstr (((OwbValueInfo *) g_ptr_array_index (q->graph->outputs, 0))->name, ==, "y");
  double ratio = (double) initializer_bytes (m) / initializer_bytes (q);
  g_assert_cmpfloat (ratio, >, 3.5);
  /* Provenance: every created node serves the MatMul. */
  g_assert_cmpuint (created_from (report, "MatMulInteger", "mm"), ==, 1);
  g_assert_cmpuint (created_from (report, "DynamicQuantizeLinear", "mm"), ==, 1);
  g_assert_cmpuint (created_from (report, "Mul", "mm"), ==, 2);

  g_autoptr (OwbTensor) x = random_floats (rand, 1.0f, rank, x_dims);
  const char *names[] = { "x" };
  double e = compare (m, q, 1, names, &x, 0.02);
  g_test_message ("MatMul rank %d %s: relative error %.5f, weights %.2fx smaller", rank,
                  per_channel ? "per channel" : "per tensor", e, ratio);
}

static void
test_matmul_2d (void)
{
  check_matmul (2, (int64_t[]){ 8, 64 }, TRUE);
  check_matmul (2, (int64_t[]){ 8, 64 }, FALSE);
}

static void
test_matmul_3d (void)
{
  check_matmul (3, (int64_t[]){ 2, 5, 64 }, TRUE);
  check_matmul (3, (int64_t[]){ 2, 5, 64 }, FALSE);
}

/* uint8 weights (asymmetric): MatMulInteger on uint8 x uint8. */
static void
test_matmul_uint8_weights (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  const int64_t dims[] = { 4, 32 };
  g_autoptr (OwbModel) m = matmul_model (rand, 2, dims, 16);
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  o.weight_type = OWB_TYPE_UINT8;
  o.symmetric_weights = FALSE;
  g_autoptr (OwbModel) q = quantize (m, &o, NULL);
  OwbNode *mmi = find_op (q, "MatMulInteger");
  g_assert_cmpint (owb_graph_get_initializer (q->graph, mmi->inputs[1])->dtype, ==, OWB_TYPE_UINT8);
  g_autoptr (OwbTensor) x = random_floats (rand, 1.0f, 2, dims);
  const char *names[] = { "x" };
  compare (m, q, 1, names, &x, 0.02);
}

/* y1 = x @ W, y2 = x @ W2, y3 = x2 @ W: one DynamicQuantizeLinear per activation, one int8 copy per
 * weight. */
static void
test_matmul_shared (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  g_autoptr (OwbModel) m = tu_model_new (13);
  const int64_t xd[] = { 4, 32 }, yd[] = { 4, 16 };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, xd, NULL);
  tu_add_value (m->graph->inputs, "x2", OWB_TYPE_FLOAT, 2, xd, NULL);
  owb_graph_add_initializer (m->graph, "W", random_floats (rand, 0.5f, 2, (int64_t[]){ 32, 16 }));
  owb_graph_add_initializer (m->graph, "W2", random_floats (rand, 0.5f, 2, (int64_t[]){ 32, 16 }));
  tu_node (m->graph, "MatMul", "mm1", "x,W", "y1");
  tu_node (m->graph, "MatMul", "mm2", "x,W2", "y2");
  tu_node (m->graph, "MatMul", "mm3", "x2,W", "y3");
  tu_add_value (m->graph->outputs, "y1", OWB_TYPE_FLOAT, 2, yd, NULL);
  tu_add_value (m->graph->outputs, "y2", OWB_TYPE_FLOAT, 2, yd, NULL);
  tu_add_value (m->graph->outputs, "y3", OWB_TYPE_FLOAT, 2, yd, NULL);
  g_autoptr (OwbOptimizeReport) report = NULL;
  g_autoptr (OwbModel) q = quantize (m, NULL, &report);
  g_assert_cmpuint (count_ops (q, "MatMulInteger"), ==, 3);
  g_assert_cmpuint (count_ops (q, "DynamicQuantizeLinear"), ==, 2);
  g_assert_cmpuint (count_initializers_of (q, OWB_TYPE_INT8), ==, 4); /* W and W2: data and zero point */
  g_assert_cmpuint (count_initializers_of (q, OWB_TYPE_FLOAT), ==, 2); /* their scales */
  /* x's DynamicQuantizeLinear serves both of its readers. */
  const OwbPassReport *pr = g_ptr_array_index (report->passes, 0);
  gboolean both = FALSE;
  for (guint k = 0; k < pr->created->len; k++)
    {
      const OwbOptimizeCreated *c = g_ptr_array_index (pr->created, k);
      if (strcmp (c->op_type, "DynamicQuantizeLinear") == 0 && c->from->len == 2)
        both = strcmp (g_ptr_array_index (c->from, 0), "mm1") == 0 && strcmp (g_ptr_array_index (c->from, 1), "mm2") == 0;
    }
  g_assert_true (both);
  g_autoptr (OwbTensor) x = random_floats (rand, 1.0f, 2, xd);
  g_autoptr (OwbTensor) x2 = random_floats (rand, 2.0f, 2, xd);
  const char *names[] = { "x", "x2" };
  OwbTensor *inputs[] = { x, x2 };
  compare (m, q, 2, names, inputs, 0.02);
}

/* ---- Gemm ---- */

typedef enum { BIAS_NONE, BIAS_CONSTANT, BIAS_INPUT } Bias;

/* y = alpha * x @ B' + beta * C, x [m, k]; B from a Constant node when `constant_node`. */
static OwbModel *
gemm_model (GRand *rand, gboolean trans_b, float alpha, float beta, Bias bias, gboolean constant_node)
{
  const int64_t mm = 6, k = 40, n = 24;
  OwbModel *m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ mm, k }, NULL);
  OwbTensor *b = random_floats (rand, 0.5f, 2, trans_b ? (int64_t[]){ n, k } : (int64_t[]){ k, n });
  if (constant_node)
    {
      OwbNode *c = tu_node (m->graph, "Constant", "B_const", "", "B");
      owb_node_add_attribute (c, "value", OWB_ATTR_TENSOR)->t = b;
    }
  else
    owb_graph_add_initializer (m->graph, "B", b);
  const char *inputs = "x,B";
  if (bias == BIAS_CONSTANT)
    {
      owb_graph_add_initializer (m->graph, "C", random_floats (rand, 1.0f, 1, (int64_t[]){ n }));
      inputs = "x,B,C";
    }
  else if (bias == BIAS_INPUT)
    {
      tu_add_value (m->graph->inputs, "C", OWB_TYPE_FLOAT, 2, (int64_t[]){ 1, n }, NULL);
      inputs = "x,B,C";
    }
  OwbNode *g = tu_node (m->graph, "Gemm", "gemm", inputs, "y");
  owb_node_add_attribute (g, "transB", OWB_ATTR_INT)->i = trans_b;
  owb_node_add_attribute (g, "alpha", OWB_ATTR_FLOAT)->f = alpha;
  owb_node_add_attribute (g, "beta", OWB_ATTR_FLOAT)->f = beta;
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 2, (int64_t[]){ mm, n }, NULL);
  return m;
}

static void
check_gemm (gboolean trans_b, float alpha, float beta, Bias bias, gboolean constant_node, gboolean per_channel)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (5 + trans_b);
  g_autoptr (OwbModel) m = gemm_model (rand, trans_b, alpha, beta, bias, constant_node);
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  o.per_channel = per_channel;
  g_autoptr (OwbModel) q = quantize (m, &o, NULL);
  g_assert_cmpuint (count_ops (q, "Gemm"), ==, 0);
  g_assert_cmpuint (count_ops (q, "Constant"), ==, 0);
  g_assert_cmpuint (count_ops (q, "MatMulInteger"), ==, 1);
  g_assert_cmpuint (count_ops (q, "Add"), ==, bias != BIAS_NONE && beta != 0 ? 1 : 0);
  OwbNode *mmi = find_op (q, "MatMulInteger");
  const OwbTensor *bq = owb_graph_get_initializer (q->graph, mmi->inputs[1]);
  /* Stored [K, N] whatever transB was. */
  g_assert_cmpint (bq->dims[0], ==, 40);
  g_assert_cmpint (bq->dims[1], ==, 24);
  g_assert_null (owb_graph_get_initializer (q->graph, "B"));

  g_autoptr (OwbTensor) x = random_floats (rand, 1.0f, 2, (int64_t[]){ 6, 40 });
  g_autoptr (OwbTensor) c = random_floats (rand, 1.0f, 2, (int64_t[]){ 1, 24 });
  const char *names[] = { "x", "C" };
  OwbTensor *inputs[] = { x, c };
  double e = compare (m, q, bias == BIAS_INPUT ? 2 : 1, names, inputs, 0.02);
  g_test_message ("Gemm transB=%d alpha=%g beta=%g bias=%d %s: relative error %.5f", trans_b, alpha, beta, bias,
                  per_channel ? "per channel" : "per tensor", e);
}

static void
test_gemm (void)
{
  check_gemm (FALSE, 1.0f, 1.0f, BIAS_NONE, FALSE, TRUE);
  check_gemm (TRUE, 1.0f, 1.0f, BIAS_NONE, FALSE, TRUE);
  check_gemm (FALSE, 0.5f, 2.0f, BIAS_CONSTANT, FALSE, TRUE);
  check_gemm (TRUE, 0.5f, 2.0f, BIAS_CONSTANT, FALSE, TRUE);
  check_gemm (TRUE, 0.5f, 2.0f, BIAS_CONSTANT, FALSE, FALSE);
  check_gemm (TRUE, 1.5f, 0.7f, BIAS_INPUT, TRUE, TRUE);
  check_gemm (FALSE, 1.0f, 0.0f, BIAS_CONSTANT, TRUE, FALSE);
}

/* ---- LSTM ---- */

static OwbModel *
lstm_model (GRand *rand, int opset)
{
  const int64_t seq = 6, batch = 2, input = 16, hidden = 32;
  OwbModel *m = tu_model_new (opset);
  tu_add_value (m->graph->inputs, "X", OWB_TYPE_FLOAT, 3, (int64_t[]){ seq, batch, input }, NULL);
  owb_graph_add_initializer (m->graph, "W", random_floats (rand, 0.3f, 3, (int64_t[]){ 1, 4 * hidden, input }));
  owb_graph_add_initializer (m->graph, "R", random_floats (rand, 0.3f, 3, (int64_t[]){ 1, 4 * hidden, hidden }));
  owb_graph_add_initializer (m->graph, "B", random_floats (rand, 0.1f, 2, (int64_t[]){ 1, 8 * hidden }));
  OwbNode *l = tu_node (m->graph, "LSTM", "lstm", "X,W,R,B", "Y,Y_h");
  owb_node_add_attribute (l, "hidden_size", OWB_ATTR_INT)->i = hidden;
  tu_add_value (m->graph->outputs, "Y", OWB_TYPE_FLOAT, 4, (int64_t[]){ seq, 1, batch, hidden }, NULL);
  tu_add_value (m->graph->outputs, "Y_h", OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, batch, hidden }, NULL);
  return m;
}

static void
check_lstm (gboolean per_channel)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (13);
  g_autoptr (OwbModel) m = lstm_model (rand, 13);
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  o.per_channel = per_channel;
  g_autoptr (OwbOptimizeReport) report = NULL;
  g_autoptr (OwbModel) q = quantize (m, &o, &report);
  g_assert_cmpuint (count_ops (q, "LSTM"), ==, 1);
  g_assert_cmpuint (count_ops (q, "DequantizeLinear"), ==, 2);
  g_assert_null (owb_graph_get_initializer (q->graph, "W"));
  g_assert_null (owb_graph_get_initializer (q->graph, "R"));
  g_assert_nonnull (owb_graph_get_initializer (q->graph, "B")); /* the bias stays float */
  OwbNode *dq = find_op (q, "DequantizeLinear");
  g_assert_cmpint (owb_node_get_int (dq, "axis", -1), ==, per_channel ? 1 : -1);
  g_assert_cmpuint (created_from (report, "DequantizeLinear", "lstm"), ==, 2);
  /* W and R shrink 4x; B (1/7 of the floats here) does not. */
  double ratio = (double) initializer_bytes (m) / initializer_bytes (q);
  g_assert_cmpfloat (ratio, >, 2.5);
  gsize w_bytes = 4 * (128 * 16 + 128 * 32);
  g_assert_cmpuint (initializer_bytes (q), <, w_bytes / 4 + 256 * 4 + 2 * 128 * 5 + 64);

  g_autoptr (OwbTensor) x = random_floats (rand, 1.0f, 3, (int64_t[]){ 6, 2, 16 });
  const char *names[] = { "X" };
  double e = compare (m, q, 1, names, &x, 0.05);
  g_test_message ("LSTM %s: relative error %.5f, initializers %.2fx smaller", per_channel ? "per channel" : "per tensor",
                  e, ratio);
}

static void
test_lstm (void)
{
  check_lstm (TRUE);
  check_lstm (FALSE);
}

/* ---- Gather ---- */

static void
test_gather (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (17);
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "ids", OWB_TYPE_INT64, 2, (int64_t[]){ 3, 4 }, NULL);
  owb_graph_add_initializer (m->graph, "table", random_floats (rand, 0.8f, 2, (int64_t[]){ 100, 32 }));
  tu_node (m->graph, "Gather", "embed", "table,ids", "e");
  tu_add_value (m->graph->outputs, "e", OWB_TYPE_FLOAT, 3, (int64_t[]){ 3, 4, 32 }, NULL);
  g_autoptr (OwbOptimizeReport) report = NULL;
  g_autoptr (OwbModel) q = quantize (m, NULL, &report);
  g_assert_cmpuint (count_ops (q, "Gather"), ==, 1);
  g_assert_cmpuint (count_ops (q, "DequantizeLinear"), ==, 1);
  OwbNode *gather = find_op (q, "Gather");
  g_assert_cmpint (owb_graph_get_initializer (q->graph, gather->inputs[0])->dtype, ==, OWB_TYPE_INT8);
  g_assert_null (owb_graph_get_initializer (q->graph, "table"));
  OwbNode *dq = find_op (q, "DequantizeLinear");
  g_assert_cmpstr (dq->inputs[0], ==, gather->outputs[0]);
  g_assert_cmpstr (dq->outputs[0], ==, "e");
  g_assert_cmpuint (created_from (report, "Gather", "embed"), ==, 1);
  double ratio = (double) initializer_bytes (m) / initializer_bytes (q);
  g_assert_cmpfloat (ratio, >, 3.9);

  g_autoptr (OwbTensor) ids = owb_tensor_new (OWB_TYPE_INT64, 2, (int64_t[]){ 3, 4 }, NULL);
  for (int i = 0; i < 12; i++)
    ((int64_t *) ids->data)[i] = (i * 37) % 100;
  const char *names[] = { "ids" };
  double e = compare (m, q, 1, names, &ids, 0.02);
  g_test_message ("Gather: relative error %.5f, table %.2fx smaller", e, ratio);
}

/* ---- what stays float ---- */

static void
test_exclusions (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (19);
  g_autoptr (OwbModel) m = tu_model_new (13);
  const int64_t xd[] = { 16, 16 };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, xd, NULL);
  tu_add_value (m->graph->inputs, "xi", OWB_TYPE_INT32, 2, xd, NULL);
  tu_add_value (m->graph->inputs, "ids", OWB_TYPE_INT64, 1, (int64_t[]){ 3 }, NULL);
  owb_graph_add_initializer (m->graph, "W", random_floats (rand, 0.5f, 2, (int64_t[]){ 16, 16 }));
  owb_graph_add_initializer (m->graph, "W2", random_floats (rand, 0.5f, 2, (int64_t[]){ 16, 16 }));
  OwbTensor *wi = owb_tensor_new (OWB_TYPE_INT32, 2, (int64_t[]){ 16, 8 }, NULL);
  owb_graph_add_initializer (m->graph, "Wi", wi);
  owb_graph_add_initializer (m->graph, "table", random_floats (rand, 0.5f, 2, (int64_t[]){ 10, 16 }));
  tu_node (m->graph, "MatMul", "keep", "x,W", "h");
  tu_node (m->graph, "MatMul", "act_act", "h,h", "hh");  /* B computed at run time */
  tu_node (m->graph, "MatMul", "quantized", "hh,W2", "y");
  tu_node (m->graph, "MatMul", "ints", "xi,Wi", "yi");   /* not a float activation */
  tu_node (m->graph, "Gather", "embed", "table,ids", "e");
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 2, xd, NULL);
  tu_add_value (m->graph->outputs, "yi", OWB_TYPE_INT32, 2, (int64_t[]){ 16, 8 }, NULL);
  tu_add_value (m->graph->outputs, "e", OWB_TYPE_FLOAT, 2, (int64_t[]){ 3, 16 }, NULL);
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  const char *nodes[] = { "keep", NULL };
  const char *ops[] = { "Gather", NULL };
  o.exclude_nodes = nodes;
  o.exclude_ops = ops;
  g_autoptr (OwbOptimizeReport) report = NULL;
  g_autoptr (OwbModel) q = quantize (m, &o, &report);
  g_assert_cmpuint (count_ops (q, "MatMul"), ==, 3);
  g_assert_cmpuint (count_ops (q, "MatMulInteger"), ==, 1);
  g_assert_cmpuint (count_ops (q, "Gather"), ==, 1);
  g_assert_cmpuint (count_ops (q, "DequantizeLinear"), ==, 0);
  g_assert_nonnull (owb_graph_get_initializer (q->graph, "W"));
  g_assert_null (owb_graph_get_initializer (q->graph, "W2"));
  g_assert_nonnull (owb_graph_get_initializer (q->graph, "table"));
  g_assert_true (report_has_near_miss (report, "'keep'"));
  g_assert_true (report_has_near_miss (report, "excluded by the user"));
  g_assert_true (report_has_near_miss (report, "'embed'"));
  g_assert_true (report_has_near_miss (report, "input B is not a constant"));
  g_assert_true (report_has_near_miss (report, "input A is not a float tensor"));
}

/* MatMulInteger and DynamicQuantizeLinear need opset 11, per-channel DequantizeLinear 13. */
static void
test_opset_too_old (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (23);
  g_autoptr (OwbModel) m = matmul_model (rand, 2, (int64_t[]){ 2, 8 }, 4);
  owb_model_set_opset (m, "", 10);
  GError *error = NULL;
  g_autoptr (OwbModel) q = owb_quant_quantize_dynamic (m, NULL, NULL, &error);
  g_assert_null (q);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "opset 10"));
  g_assert_nonnull (strstr (error->message, "owb_quant_prepare"));
  g_test_message ("%s", error->message);
  g_clear_error (&error);

  g_autoptr (OwbModel) lstm = lstm_model (rand, 12);
  g_autoptr (OwbModel) q2 = owb_quant_quantize_dynamic (lstm, NULL, NULL, &error);
  g_assert_null (q2);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "13"));
  g_clear_error (&error);
  /* Per tensor, DequantizeLinear of opset 10 is enough. */
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  o.per_channel = FALSE;
  g_autoptr (OwbModel) q3 = quantize (lstm, &o, NULL);
  g_assert_cmpuint (count_ops (q3, "DequantizeLinear"), ==, 2);

  /* A weight type the integer ops do not take. */
  o.weight_type = OWB_TYPE_INT16;
  g_autoptr (OwbModel) q4 = owb_quant_quantize_dynamic (lstm, &o, NULL, &error);
  g_assert_null (q4);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
}

/* The quantized model serialises and loads back (int8 initializers, the new ops' attributes). */
static void
test_save_load (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (29);
  g_autoptr (OwbModel) m = gemm_model (rand, TRUE, 0.5f, 2.0f, BIAS_CONSTANT, FALSE);
  g_autoptr (OwbModel) q = quantize (m, NULL, NULL);
  GError *error = NULL;
  g_autoptr (GBytes) fb = owb_model_save_to_bytes (m, &error);
  g_assert_no_error (error);
  g_autoptr (GBytes) qb = owb_model_save_to_bytes (q, &error);
  g_assert_no_error (error);
  gsize size;
  const void *data = g_bytes_get_data (qb, &size);
  g_autoptr (OwbModel) back = owb_model_load_from_data (data, size, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count_ops (back, "MatMulInteger"), ==, 1);
  g_test_message ("Gemm file: %" G_GSIZE_FORMAT " -> %" G_GSIZE_FORMAT " bytes", g_bytes_get_size (fb), size);
  g_autoptr (OwbTensor) x = random_floats (rand, 1.0f, 2, (int64_t[]){ 6, 40 });
  const char *names[] = { "x" };
  compare (m, back, 1, names, &x, 0.02);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/quant/dynamic/matmul-2d", test_matmul_2d);
  g_test_add_func ("/quant/dynamic/matmul-3d", test_matmul_3d);
  g_test_add_func ("/quant/dynamic/matmul-uint8-weights", test_matmul_uint8_weights);
  g_test_add_func ("/quant/dynamic/matmul-shared", test_matmul_shared);
  g_test_add_func ("/quant/dynamic/gemm", test_gemm);
  g_test_add_func ("/quant/dynamic/lstm", test_lstm);
  g_test_add_func ("/quant/dynamic/gather", test_gather);
  g_test_add_func ("/quant/dynamic/exclusions", test_exclusions);
  g_test_add_func ("/quant/dynamic/opset-too-old", test_opset_too_old);
  g_test_add_func ("/quant/dynamic/save-load", test_save_load);
  return g_test_run ();
}
