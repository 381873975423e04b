/* test-quant-qdq.c: static QDQ quantization before/after: what is inserted where (per-channel
 * weights, int32 biases at s_x * s_w, shared scales through data movement, exclusions and
 * overrides), the report's provenance, and outputs close to the float model's. */
#include "owb-quant-private.h"
#include "../engine/test-util.h"

#include <math.h>
#include <string.h>

static void
add_random_weight (OwbGraph *g, const char *name, int rank, const int64_t *dims, GRand *rand, float amp)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, rank, dims, NULL);
  float *w = t->data;
  for (int64_t i = 0; i < t->nelems; i++)
    w[i] = (float) g_rand_double_range (rand, -amp, amp);
  owb_graph_add_initializer (g, name, t);
}

/* x [1,3,8,8] -> Conv(4, 3x3, pad 1) -> Relu -> MaxPool 2 -> Conv(4) -> Add(with the pool) ->
 * GlobalAveragePool -> Flatten -> Gemm(4 -> 5) -> y */
static OwbModel *
cnn_model (void)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  int64_t xd[] = { 1, 3, 8, 8 }, yd[] = { 1, 5 };
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 4, xd, NULL);
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 2, yd, NULL);
  GRand *rand = g_rand_new_with_seed (3);
  int64_t w1[] = { 4, 3, 3, 3 }, b1[] = { 4 }, w2[] = { 4, 4, 3, 3 }, wg[] = { 5, 4 }, bg[] = { 5 };
  add_random_weight (g, "w1", 4, w1, rand, 0.5f);
  add_random_weight (g, "b1", 1, b1, rand, 0.2f);
  add_random_weight (g, "w2", 4, w2, rand, 0.3f);
  add_random_weight (g, "b2", 1, b1, rand, 0.2f);
  add_random_weight (g, "wg", 2, wg, rand, 0.8f);
  add_random_weight (g, "bg", 1, bg, rand, 0.1f);
  g_rand_free (rand);
  int64_t pads[] = { 1, 1, 1, 1 }, k3[] = { 3, 3 }, k2[] = { 2, 2 };
  OwbNode *c1 = tu_node (g, "Conv", "conv1", "x,w1,b1", "c1");
  OwbAttribute *a = owb_node_add_attribute (c1, "pads", OWB_ATTR_INTS);
  a->n = 4, a->ints = g_memdup2 (pads, sizeof pads);
  a = owb_node_add_attribute (c1, "kernel_shape", OWB_ATTR_INTS);
  a->n = 2, a->ints = g_memdup2 (k3, sizeof k3);
  tu_node (g, "Relu", "relu1", "c1", "r1");
  OwbNode *mp = tu_node (g, "MaxPool", "pool", "r1", "p1");
  a = owb_node_add_attribute (mp, "kernel_shape", OWB_ATTR_INTS);
  a->n = 2, a->ints = g_memdup2 (k2, sizeof k2);
  a = owb_node_add_attribute (mp, "strides", OWB_ATTR_INTS);
  a->n = 2, a->ints = g_memdup2 (k2, sizeof k2);
  OwbNode *c2 = tu_node (g, "Conv", "conv2", "p1,w2,b2", "c2");
  a = owb_node_add_attribute (c2, "pads", OWB_ATTR_INTS);
  a->n = 4, a->ints = g_memdup2 (pads, sizeof pads);
  tu_node (g, "Add", "add", "c2,p1", "s");
  tu_node (g, "GlobalAveragePool", "gap", "s", "gp");
  tu_node (g, "Flatten", "flatten", "gp", "f");
  OwbNode *gemm = tu_node (g, "Gemm", "gemm", "f,wg,bg", "y");
  owb_node_add_attribute (gemm, "transB", OWB_ATTR_INT)->i = 1;
  g_assert_true (owb_model_validate (m, NULL));
  return m;
}

static OwbTensor *
run_model (OwbModel *m, OwbTensor *x)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  const char *names[] = { owb_session_get_input (s, 0)->name };
  OwbTensor *out = NULL;
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &out, NULL, NULL, &error));
  g_assert_no_error (error);
  return out;
}

static double
sqnr_db (const OwbTensor *a, const OwbTensor *b)
{
  double sig = 0, noise = 0;
  for (int64_t i = 0; i < a->nelems; i++)
    {
      double x = ((float *) a->data)[i], y = ((float *) b->data)[i];
      sig += x * x;
      noise += (x - y) * (x - y);
    }
  return 10 * log10 (sig / MAX (noise, 1e-30));
}

static const OwbNode *
find_producer (const OwbGraph *g, const char *name)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (g->nodes, i);
      for (int o = 0; o < n->n_outputs; o++)
        if (strcmp (n->outputs[o], name) == 0)
          return n;
    }
  return NULL;
}

static const OwbNode *
find_node (const OwbGraph *g, const char *name)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (g->nodes, i);
      if (n->name && strcmp (n->name, name) == 0)
        return n;
    }
  return NULL;
}

static guint
count_op (const OwbGraph *g, const char *op)
{
  guint n = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    n += strcmp (((OwbNode *) g_ptr_array_index (g->nodes, i))->op_type, op) == 0;
  return n;
}

typedef struct {
  OwbModel *model;
  OwbQuantCalibration *cal;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->model = cnn_model ();
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_random (16, 5);
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  g_auto (GStrv) tensors = owb_quant_plan_tensors (f->model, &o, &error);
  g_assert_no_error (error);
  OwbQuantCalibrateOptions co;
  owb_quant_calibrate_options_init (&co);
  co.tensors = (const char *const *) tensors;
  f->cal = owb_quant_calibrate (f->model, ds, &co, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  owb_quant_calibration_free (f->cal);
  owb_model_unref (f->model);
}

static void
test_plan (Fixture *f, gconstpointer data)
{
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  g_auto (GStrv) tensors = owb_quant_plan_tensors (f->model, &o, NULL);
  /* Conv inputs x and p1 (r1 feeds the MaxPool, whose output shares its parameters: r1 is the root),
   * the Add's inputs and output, the pool's and Flatten's (sharing with gp), Gemm's input. */
  g_autofree char *joined = g_strjoinv (",", tensors);
  g_test_message ("planned: %s", joined);
  g_assert_true (g_strv_contains ((const char *const *) tensors, "x"));
  g_assert_true (g_strv_contains ((const char *const *) tensors, "r1"));
  g_assert_false (g_strv_contains ((const char *const *) tensors, "p1")); /* shares r1's */
  g_assert_true (g_strv_contains ((const char *const *) tensors, "c2"));
  g_assert_true (g_strv_contains ((const char *const *) tensors, "s"));
  g_assert_true (g_strv_contains ((const char *const *) tensors, "gp"));
  g_assert_false (g_strv_contains ((const char *const *) tensors, "f")); /* Flatten shares gp's */
  g_assert_false (g_strv_contains ((const char *const *) tensors, "c1")); /* Relu is not quantized */
  g_assert_false (g_strv_contains ((const char *const *) tensors, "y"));  /* a Gemm output, read by nobody */
}

static void
test_static (Fixture *f, gconstpointer data)
{
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbOptimizeReport) report = NULL;
  g_autoptr (OwbModel) q = owb_quant_quantize_static (f->model, f->cal, &o, &report, &error);
  g_assert_no_error (error);
  const OwbGraph *g = q->graph;
  /* The float model is untouched. */
  g_assert_cmpuint (f->model->graph->nodes->len, ==, 8);
  g_assert_nonnull (owb_graph_get_initializer (f->model->graph, "w1"));

  /* Conv weights: int8 per output channel, DequantizeLinear axis 0; the float weight is gone. */
  const OwbNode *conv = find_node (g, "conv1");
  const OwbNode *wdq = find_producer (g, conv->inputs[1]);
  g_assert_cmpstr (wdq->op_type, ==, "DequantizeLinear");
  g_assert_cmpint (owb_node_get_int (wdq, "axis", -1), ==, 0);
  const OwbTensor *wq = owb_graph_get_initializer (g, wdq->inputs[0]);
  g_assert_cmpint (wq->dtype, ==, OWB_TYPE_INT8);
  const OwbTensor *ws = owb_graph_get_initializer (g, wdq->inputs[1]);
  g_assert_cmpint (ws->nelems, ==, 4);
  g_assert_null (owb_graph_get_initializer (g, "w1"));
  /* Gemm with transB = 1: channels along axis 0. */
  const OwbNode *gemm = find_node (g, "gemm");
  g_assert_cmpint (owb_node_get_int (find_producer (g, gemm->inputs[1]), "axis", -1), ==, 0);

  /* Input: a QDQ pair on x; bias int32 at s_x * s_w[c]. */
  const OwbNode *xdq = find_producer (g, conv->inputs[0]);
  g_assert_cmpstr (xdq->op_type, ==, "DequantizeLinear");
  const OwbNode *xq = find_producer (g, xdq->inputs[0]);
  g_assert_cmpstr (xq->op_type, ==, "QuantizeLinear");
  g_assert_cmpstr (xq->inputs[0], ==, "x");
  float sx = *(float *) owb_graph_get_initializer (g, xq->inputs[1])->data;
  g_assert_cmpint (owb_graph_get_initializer (g, xq->inputs[2])->dtype, ==, OWB_TYPE_UINT8);
  const OwbNode *bdq = find_producer (g, conv->inputs[2]);
  g_assert_cmpstr (bdq->op_type, ==, "DequantizeLinear");
  const OwbTensor *bq = owb_graph_get_initializer (g, bdq->inputs[0]);
  const OwbTensor *bs = owb_graph_get_initializer (g, bdq->inputs[1]);
  g_assert_cmpint (bq->dtype, ==, OWB_TYPE_INT32);
  for (int c = 0; c < 4; c++)
    g_assert_cmpfloat_with_epsilon (((float *) bs->data)[c], sx * ((float *) ws->data)[c], 1e-12);

  /* The Relu is folded into the QuantizeLinear after it (zero point 0 clamps the same); the
   * MaxPool's output shares its input's scale and zero point. */
  g_assert_null (find_node (g, "relu1"));
  const OwbNode *pool = find_node (g, "pool");
  const OwbNode *pool_in = find_producer (g, pool->inputs[0]);
  g_assert_cmpstr (pool_in->op_type, ==, "DequantizeLinear");
  const OwbNode *conv2 = find_node (g, "conv2");
  const OwbNode *p1dq = find_producer (g, conv2->inputs[0]);
  g_assert_cmpstr (p1dq->op_type, ==, "DequantizeLinear");
  g_assert_cmpstr (p1dq->inputs[1], ==, pool_in->inputs[1]);
  g_assert_cmpstr (p1dq->inputs[2], ==, pool_in->inputs[2]);
  /* The Add reads both inputs dequantized, p1 through the same pair as conv2. */
  const OwbNode *add = find_node (g, "add");
  g_assert_cmpstr (find_producer (g, add->inputs[0])->op_type, ==, "DequantizeLinear");
  g_assert_cmpstr (add->inputs[1], ==, conv2->inputs[0]);
  /* The graph output stays float and keeps its name. */
  g_assert_cmpstr (((OwbValueInfo *) g->outputs->pdata[0])->name, ==, "y");
  g_assert_cmpstr (find_producer (g, "y")->op_type, ==, "Gemm");

  g_assert_cmpstr (find_producer (g, find_producer (g, pool->inputs[0])->inputs[0])->inputs[0], ==, "c1");

  /* The report: three passes, every created node with the node it serves as provenance. */
  g_assert_cmpuint (report->passes->len, ==, 3);
  OwbPassReport *fold = g_ptr_array_index (report->passes, 2);
  g_assert_cmpuint (fold->removed->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (fold->removed, 0), ==, "relu1");
  for (guint p = 0; p < 3; p++)
    {
      OwbPassReport *pr = g_ptr_array_index (report->passes, p);
      g_assert_cmpuint (pr->created->len, >, 0);
      for (guint k = 0; k < pr->created->len; k++)
        g_assert_cmpuint (((OwbOptimizeCreated *) g_ptr_array_index (pr->created, k))->from->len, >, 0);
    }
  g_assert_cmpuint (count_op (g, "QuantizeLinear"), ==, count_op (g, "DequantizeLinear") - 6); /* 3 W + 3 B */

  /* Outputs close to the float model's on a new input. */
  int64_t xd[] = { 1, 3, 8, 8 };
  GRand *rand = g_rand_new_with_seed (99);
  g_autoptr (OwbTensor) x = owb_tensor_new_random (OWB_TYPE_FLOAT, 4, xd, rand, NULL);
  g_rand_free (rand);
  g_autoptr (OwbTensor) yf = run_model (f->model, x);
  g_autoptr (OwbTensor) yq = run_model (q, x);
  double db = sqnr_db (yf, yq);
  g_test_message ("output SQNR %.1f dB", db);
  g_assert_cmpfloat (db, >, 25);

  /* Folding is exact: the same model with the Relu put back gives the same bits. */
  {
    g_autoptr (OwbModel) unfolded = owb_model_dup (q);
    OwbNode *qn = NULL;
    for (guint i = 0; i < unfolded->graph->nodes->len; i++)
      {
        OwbNode *n = g_ptr_array_index (unfolded->graph->nodes, i);
        if (strcmp (n->op_type, "QuantizeLinear") == 0 && strcmp (n->inputs[0], "c1") == 0)
          qn = n;
      }
    g_assert_nonnull (qn);
    g_free (qn->inputs[0]);
    qn->inputs[0] = g_strdup ("c1_relu");
    tu_node (unfolded->graph, "Relu", "relu_again", "c1", "c1_relu");
    g_assert_true (owb_model_validate (unfolded, NULL));
    g_autoptr (OwbTensor) yu = run_model (unfolded, x);
    g_assert_cmpmem (yu->data, yu->nbytes, yq->data, yq->nbytes);
  }

  /* Saved and loaded again, it is a valid model with the same outputs. */
  g_autoptr (GBytes) bytes = owb_model_save_to_bytes (q, &error);
  g_assert_no_error (error);
  gsize size;
  const void *data_ptr = g_bytes_get_data (bytes, &size);
  g_autoptr (OwbModel) back = owb_model_load_from_data (data_ptr, size, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (OwbTensor) yb = run_model (back, x);
  g_assert_cmpfloat (sqnr_db (yq, yb), >, 100);
}

static void
test_per_tensor_and_exclusions (Fixture *f, gconstpointer data)
{
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  o.per_channel = FALSE;
  const char *const ops[] = { "Gemm", NULL };
  const char *const nodes[] = { "conv2", NULL };
  o.exclude_ops = ops;
  o.exclude_nodes = nodes;
  g_autoptr (GHashTable) overrides = g_hash_table_new (g_str_hash, g_str_equal);
  OwbQuantOverride keep_float = { OWB_TYPE_UNDEFINED, FALSE, 0, 0 };
  OwbQuantOverride wide = { OWB_TYPE_INT8, TRUE, -8, 8 };
  g_hash_table_insert (overrides, "x", &wide);
  g_hash_table_insert (overrides, "s", &keep_float);
  o.overrides = overrides;
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbOptimizeReport) report = NULL;
  g_autoptr (OwbModel) q = owb_quant_quantize_static (f->model, f->cal, &o, &report, &error);
  g_assert_no_error (error);
  const OwbGraph *g = q->graph;
  const OwbNode *conv = find_node (g, "conv1");
  const OwbNode *wdq = find_producer (g, conv->inputs[1]);
  g_assert_cmpint (owb_graph_get_initializer (g, wdq->inputs[1])->rank, ==, 0); /* per tensor */
  g_assert_null (owb_node_get_attribute (wdq, "axis"));
  /* Excluded: the Gemm and conv2 keep float weights and read their inputs as they were. */
  const OwbNode *gemm = find_node (g, "gemm");
  g_assert_cmpstr (gemm->inputs[1], ==, "wg");
  const OwbNode *conv2 = find_node (g, "conv2");
  g_assert_cmpstr (conv2->inputs[1], ==, "w2");
  /* The override: x in int8 over [-8, 8] (zero point 0, asymmetric over a symmetric range). */
  const OwbNode *xq = find_producer (g, find_producer (g, conv->inputs[0])->inputs[0]);
  g_assert_cmpint (owb_graph_get_initializer (g, xq->inputs[2])->dtype, ==, OWB_TYPE_INT8);
  g_assert_cmpfloat_with_epsilon (*(float *) owb_graph_get_initializer (g, xq->inputs[1])->data, 16.0 / 255, 1e-7);
  /* s kept float: the pool reads it directly. */
  g_assert_cmpstr (find_node (g, "gap")->inputs[0], ==, "s");
  /* The report says why. */
  gboolean said = FALSE;
  for (guint p = 0; p < report->passes->len; p++)
    {
      OwbPassReport *pr = g_ptr_array_index (report->passes, p);
      for (guint k = 0; k < pr->near_misses->len; k++)
        said |= strstr (g_ptr_array_index (pr->near_misses, k), "excluded by the user") != NULL;
    }
  g_assert_true (said);
}

static void
test_opset_too_old (void)
{
  g_autoptr (OwbModel) m = cnn_model ();
  owb_model_set_opset (m, "", 11);
  g_assert_true (owb_model_validate (m, NULL));
  g_autoptr (OwbQuantCalibration) cal = NULL;
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_random (2, 5);
  cal = owb_quant_calibrate (m, ds, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (OwbModel) q = owb_quant_quantize_static (m, cal, &o, NULL, &error);
  g_assert_null (q);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "opset 11"));
}

static void
test_activation_types (Fixture *f, gconstpointer data)
{
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  o.activation_type = OWB_TYPE_INT8;
  o.symmetric_activations = TRUE;
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbModel) q = owb_quant_quantize_static (f->model, f->cal, &o, NULL, &error);
  g_assert_no_error (error);
  const OwbNode *conv = find_node (q->graph, "conv1");
  const OwbNode *xq = find_producer (q->graph, find_producer (q->graph, conv->inputs[0])->inputs[0]);
  const OwbTensor *zp = owb_graph_get_initializer (q->graph, xq->inputs[2]);
  g_assert_cmpint (zp->dtype, ==, OWB_TYPE_INT8);
  g_assert_cmpint (owb_tensor_get_int64 (zp, 0), ==, 0);
  /* 16-bit activations need opset 21's QuantizeLinear. */
  o.activation_type = OWB_TYPE_UINT16;
  g_autoptr (OwbModel) q16 = owb_quant_quantize_static (f->model, f->cal, &o, NULL, &error);
  g_assert_null (q16);
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  o.activation_type = OWB_TYPE_FLOAT;
  g_assert_null (owb_quant_quantize_static (f->model, f->cal, &o, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
}

/* The parameters read back from the quantized model: the input's QuantizeLinear (per tensor, u8,
 * the scale the pair uses), a Conv weight stored quantized (per channel: 4 scales along axis 0,
 * their range), the int32 bias, and a tensor nothing quantizes. */
static void
test_qdq_params (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbModel) q = owb_quant_quantize_static (f->model, f->cal, NULL, NULL, &error);
  g_assert_no_error (error);
  const OwbGraph *g = q->graph;
  const OwbNode *conv = find_node (g, "conv1");
  const OwbNode *xdq = find_producer (g, conv->inputs[0]);
  const OwbNode *xq = find_producer (g, xdq->inputs[0]);
  float sx = *(float *) owb_graph_get_initializer (g, xq->inputs[1])->data;
  int zx = *(guint8 *) owb_graph_get_initializer (g, xq->inputs[2])->data;

  /* by the float tensor the QuantizeLinear reads, and by the pair's output: the same answer */
  const char *names[] = { "x", conv->inputs[0] };
  for (int k = 0; k < 2; k++)
    {
      OwbQuantQdqParams p;
      g_assert_true (owb_quant_find_qdq_params (q, names[k], &p, &error));
      g_assert_no_error (error);
      g_assert_cmpstr (p.quantize_node, ==, xq->name);
      g_assert_cmpstr (p.dequantize_node, ==, xdq->name);
      g_assert_cmpint (p.type, ==, OWB_TYPE_UINT8);
      g_assert_cmpint (p.axis, ==, -1);
      g_assert_cmpuint (p.n_scales, ==, 1);
      g_assert_cmpfloat (p.scale_min, ==, sx);
      g_assert_cmpfloat (p.scale_max, ==, sx);
      g_assert_cmpint (p.zero_point_min, ==, zx);
      g_assert_cmpint (p.zero_point_max, ==, zx);
      owb_quant_qdq_params_clear (&p);
    }

  OwbQuantQdqParams w;
  g_assert_true (owb_quant_find_qdq_params (q, conv->inputs[1], &w, &error));
  g_assert_no_error (error);
  g_assert_null (w.quantize_node);
  g_assert_cmpstr (w.dequantize_node, ==, find_producer (g, conv->inputs[1])->name);
  g_assert_cmpint (w.type, ==, OWB_TYPE_INT8);
  g_assert_cmpint (w.axis, ==, 0);
  g_assert_cmpuint (w.n_scales, ==, 4);
  const OwbTensor *ws = owb_graph_get_initializer (g, find_producer (g, conv->inputs[1])->inputs[1]);
  double lo = INFINITY, hi = -INFINITY;
  for (int c = 0; c < 4; c++)
    {
      lo = MIN (lo, ((float *) ws->data)[c]);
      hi = MAX (hi, ((float *) ws->data)[c]);
    }
  g_assert_cmpfloat (w.scale_min, ==, lo);
  g_assert_cmpfloat (w.scale_max, ==, hi);
  g_assert_cmpfloat (w.scale_min, <, w.scale_max);
  g_assert_cmpint (w.zero_point_min, ==, 0);
  g_assert_cmpint (w.zero_point_max, ==, 0);
  owb_quant_qdq_params_clear (&w);

  OwbQuantQdqParams b;
  g_assert_true (owb_quant_find_qdq_params (q, conv->inputs[2], &b, &error));
  g_assert_cmpint (b.type, ==, OWB_TYPE_INT32);
  g_assert_cmpuint (b.n_scales, ==, 4);
  owb_quant_qdq_params_clear (&b);

  /* the Gemm's output is read by nobody: not quantized, and the error says which tensor */
  OwbQuantQdqParams none;
  g_assert_false (owb_quant_find_qdq_params (q, "y", &none, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "'y'"));
  g_assert_null (none.quantize_node);
}

/* One tensor given a range 1000x too wide (an override standing for an outlier) ruins the output;
 * the fallback ranks its reader first by local SQNR and keeps it in float, and the target holds. */
static void
test_fallback_finds_the_culprit (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  OwbQuantOptions o;
  owb_quant_options_init (&o);
  g_autoptr (GHashTable) overrides = g_hash_table_new (g_str_hash, g_str_equal);
  OwbQuantOverride wide = { OWB_TYPE_UINT8, TRUE, -2000, 2000 };
  g_hash_table_insert (overrides, "c2", &wide);
  o.overrides = overrides;
  g_autoptr (OwbQuantDataset) eval = owb_quant_dataset_new_random (8, 77);
  OwbQuantFallbackOptions fo;
  owb_quant_fallback_options_init (&fo);
  fo.target_sqnr_db = 25;
  fo.eval = eval;
  fo.max_trials = 6;
  g_autoptr (OwbQuantFallbackResult) result = NULL;
  g_autoptr (OwbModel) q = owb_quant_quantize_with_fallback (f->model, f->cal, &o, &fo, &result, &error);
  g_assert_no_error (error);
  g_assert_nonnull (q);
  const OwbQuantTrial *first = &g_array_index (result->trials, OwbQuantTrial, 0);
  g_test_message ("first trial %.1f dB, chosen %.1f dB with %u kept float",
                  first->sqnr_db, g_array_index (result->trials, OwbQuantTrial, result->chosen_trial).sqnr_db,
                  result->kept_float->len);
  g_assert_cmpfloat (first->sqnr_db, <, 25);
  g_assert_true (result->target_met);
  /* The Add reads c2 (the ruined tensor): it ranks first and is what is kept float. */
  const OwbQuantSensitivity *worst = g_ptr_array_index (result->ranking, 0);
  g_assert_cmpstr (worst->node, ==, "add");
  g_assert_cmpstr (worst->tensor, ==, "c2");
  g_assert_true (g_ptr_array_find_with_equal_func (result->kept_float, "add", g_str_equal, NULL));
  g_assert_cmpfloat (g_array_index (result->trials, OwbQuantTrial, result->chosen_trial).sqnr_db, >=, 25);
  g_autofree char *json = owb_quant_fallback_result_to_json (result, 5);
  g_assert_nonnull (strstr (json, "\"target_met\":true"));
  /* A target is required. */
  fo.target_sqnr_db = 0;
  g_assert_null (owb_quant_quantize_with_fallback (f->model, f->cal, &o, &fo, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
}

/* x -> Add(x, 1e-5 scalar) -> y -> Add(y, bias vector) -> z -> Add(z, x) -> w: the scalar Add (a
 * variance plus epsilon) stays float; the vector and residual Adds are quantized. */
static void
test_scalar_constants_stay_float (void)
{
  OwbModel *m = tu_model_new (13);
  int64_t d[] = { 1, 4 }, v[] = { 4 };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, d, NULL);
  tu_add_value (m->graph->outputs, "w", OWB_TYPE_FLOAT, 2, d, NULL);
  float eps = 1e-5f, bias[] = { 0.1f, -0.2f, 0.3f, 0.0f };
  owb_graph_add_initializer (m->graph, "eps", tu_floats (0, NULL, &eps));
  owb_graph_add_initializer (m->graph, "bias", tu_floats (1, v, bias));
  tu_node (m->graph, "Add", "add_eps", "x,eps", "y");
  tu_node (m->graph, "Add", "add_bias", "y,bias", "z");
  tu_node (m->graph, "Add", "residual", "z,x", "w");
  g_assert_true (owb_model_validate (m, NULL));
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_random (4, 1);
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbQuantCalibration) cal = owb_quant_calibrate (m, ds, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (OwbModel) q = owb_quant_quantize_static (m, cal, NULL, NULL, &error);
  g_assert_no_error (error);
  const OwbNode *add_eps = find_node (q->graph, "add_eps");
  g_assert_cmpstr (add_eps->inputs[0], ==, "x");
  g_assert_cmpstr (add_eps->inputs[1], ==, "eps");
  const OwbNode *add_bias = find_node (q->graph, "add_bias");
  g_assert_cmpstr (find_producer (q->graph, add_bias->inputs[0])->op_type, ==, "DequantizeLinear");
  g_assert_cmpstr (find_producer (q->graph, add_bias->inputs[1])->op_type, ==, "DequantizeLinear");
  const OwbNode *residual = find_node (q->graph, "residual");
  g_assert_cmpstr (find_producer (q->graph, residual->inputs[1])->op_type, ==, "DequantizeLinear");
  owb_model_unref (m);
}

/* x [1,4,6,6] -> Conv -> HardSwish -> Conv -> c2; HardSigmoid (c2) -> Mul (c2, ...) -> y: MobileNetV3's
 * two forms of hard swish. Both activations read their Conv's output through a DequantizeLinear
 * (they read float before, which kept both Convs float at the extended level); optimized, both
 * Convs run as QLinearConv and both activations as 256-byte tables, and the output stays close to
 * the float model's. */
static void
test_hard_swish_quantized (void)
{
  OwbModel *m = tu_model_new (14);
  OwbGraph *g = m->graph;
  int64_t xd[] = { 1, 4, 6, 6 }, w1[] = { 8, 4, 1, 1 }, w2[] = { 8, 8, 1, 1 }, bd[] = { 8 }, yd[] = { 1, 8, 6, 6 };
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 4, xd, NULL);
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 4, yd, NULL);
  GRand *rand = g_rand_new_with_seed (14);
  add_random_weight (g, "w1", 4, w1, rand, 0.6f);
  add_random_weight (g, "b1", 1, bd, rand, 0.2f);
  add_random_weight (g, "w2", 4, w2, rand, 0.4f);
  add_random_weight (g, "b2", 1, bd, rand, 0.2f);
  g_rand_free (rand);
  tu_node (g, "Conv", "conv1", "x,w1,b1", "c1");
  tu_node (g, "HardSwish", "hswish", "c1", "h1");
  tu_node (g, "Conv", "conv2", "h1,w2,b2", "c2");
  tu_node (g, "HardSigmoid", "hsig", "c2", "s2");
  tu_node (g, "Mul", "mul", "c2,s2", "y");
  g_assert_true (owb_model_validate (m, NULL));
  g_autoptr (OwbQuantDataset) ds = owb_quant_dataset_new_random (8, 2);
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbQuantCalibration) cal = owb_quant_calibrate (m, ds, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (OwbModel) q = owb_quant_quantize_static (m, cal, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (find_producer (q->graph, find_node (q->graph, "hswish")->inputs[0])->op_type, ==, "DequantizeLinear");
  g_assert_cmpstr (find_producer (q->graph, find_node (q->graph, "hsig")->inputs[0])->op_type, ==, "DequantizeLinear");

  OwbSessionOptions so;
  owb_session_options_init (&so);
  so.providers = owb_providers_new_from_list ("cpu", NULL);
  so.n_threads = 1;
  so.optimize = OWB_OPTIMIZE_EXTENDED;
  g_autoptr (OwbSession) s = owb_session_new (q, &so, &error);
  g_ptr_array_unref (so.providers);
  g_assert_no_error (error);
  const OwbGraph *og = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (og, "QLinearConv"), ==, 2);
  g_assert_cmpuint (count_op (og, "Conv"), ==, 0);
  g_assert_cmpuint (count_op (og, "QLinearLookup"), ==, 2);
  g_assert_cmpuint (count_op (og, "HardSwish") + count_op (og, "HardSigmoid"), ==, 0);

  GRand *xr = g_rand_new_with_seed (15);
  OwbTensor *x = owb_tensor_new (OWB_TYPE_FLOAT, 4, xd, NULL);
  for (int64_t i = 0; i < x->nelems; i++)
    ((float *) x->data)[i] = (float) g_rand_double_range (xr, -1, 1);
  g_rand_free (xr);
  OwbTensor *want = run_model (m, x), *got = NULL;
  const char *names[] = { "x" };
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &got, NULL, NULL, &error));
  g_assert_no_error (error);
  double db = sqnr_db (want, got);
  g_test_message ("SQNR of the quantized, optimized model: %.1f dB", db);
  g_assert_cmpfloat (db, >, 20);
  owb_tensor_unref (x), owb_tensor_unref (want), owb_tensor_unref (got);
  owb_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/quant/qdq/plan", Fixture, NULL, fixture_set_up, test_plan, fixture_tear_down);
  g_test_add ("/quant/qdq/static", Fixture, NULL, fixture_set_up, test_static, fixture_tear_down);
  g_test_add ("/quant/qdq/per-tensor-exclusions", Fixture, NULL, fixture_set_up, test_per_tensor_and_exclusions,
              fixture_tear_down);
  g_test_add ("/quant/qdq/activation-types", Fixture, NULL, fixture_set_up, test_activation_types, fixture_tear_down);
  g_test_add_func ("/quant/qdq/opset-too-old", test_opset_too_old);
  g_test_add ("/quant/qdq/params", Fixture, NULL, fixture_set_up, test_qdq_params, fixture_tear_down);
  g_test_add ("/quant/qdq/fallback", Fixture, NULL, fixture_set_up, test_fallback_finds_the_culprit, fixture_tear_down);
  g_test_add_func ("/quant/qdq/scalar-constants-stay-float", test_scalar_constants_stay_float);
  g_test_add_func ("/quant/qdq/hard-swish", test_hard_swish_quantized);
  return g_test_run ();
}
