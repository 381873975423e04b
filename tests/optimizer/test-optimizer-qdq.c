/* test-optimizer-qdq.c: the QDQ -> integer fusions fuse_qdq_matmul and fuse_qdq_conv:
 * DequantizeLinear (activation) and DequantizeLinear (constant weight) -> MatMul (Conv, with bias
 * and Relu/Clip) -> QuantizeLinear becomes QLinearMatMul (QLinearConv), and fuse_qdq_lookup's
 * DequantizeLinear -> elementwise op -> QuantizeLinear a QLinearLookup table, with its provenance
 * in the report; outputs against the unoptimized (float-emulated) model within one quantization
 * step; near misses where it must not fire. fuse_dynamic_quant_matmul's DynamicQuantizeLinear ->
 * MatMulInteger -> Cast -> Mul [-> Add] becomes DynamicQuantizeMatMul, outputs equal to the bit.
 *
 * Tolerance: the QDQ model sums float products in float32 and rounds the result once to the
 * output's step; QLinearMatMul sums the integers exactly and rounds acc * (sa sb / sy). The two
 * differ only where the float sum's rounding error moves a value across a rounding boundary (a
 * half step), so by at most 1 in the 8-bit output, and rarely. */
#include "../engine/test-util.h"

#include <math.h>
#include <string.h>
#include "optimizer-test-util.h"

static OwbTensor *
int8_tensor (OwbDataType dtype, int rank, const int64_t *dims, GRand *r)
{
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    ((uint8_t *) t->data)[i] = (uint8_t) g_rand_int_range (r, 0, 256);
  return t;
}

static OwbTensor *
float_tensor (int rank, const int64_t *dims, GRand *r, double lo, double hi)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    ((float *) t->data)[i] = (float) g_rand_double_range (r, lo, hi);
  return t;
}

static OwbTensor *
scalar (OwbDataType dtype, double v)
{
  OwbTensor *t = owb_tensor_new (dtype, 0, NULL, NULL);
  owb_tensor_set_double (t, 0, v);
  return t;
}

/* A model of float input x (rank, dims) and output y, typed by inference: what the builders below
 * put their quantized nodes between. */
static OwbModel *
qdq_model_new (int opset, int rank, const int64_t *dims)
{
  OwbModel *m = tu_model_new (opset);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, rank, dims, NULL);
  tu_add_untyped_output (m->graph->outputs, "y");
  return m;
}

/* Runs plain and opt once on the same feeds: their n_out (at most 2) outputs must be equal to the
 * bit. */
static void
assert_runs_equal (OwbSession *plain, OwbSession *opt, guint n_in, const char *const *names, OwbTensor *const *feeds,
                   guint n_out)
{
  OwbTensor *ya[2] = { NULL, NULL }, *yb[2] = { NULL, NULL };
  GError *error = NULL;
  g_assert_cmpuint (n_out, <=, 2);
  g_assert_true (owb_session_run (plain, n_in, names, feeds, n_out, NULL, ya, NULL, NULL, &error));
  g_assert_true (owb_session_run (opt, n_in, names, feeds, n_out, NULL, yb, NULL, NULL, &error));
  g_assert_no_error (error);
  for (guint o = 0; o < n_out; o++)
    {
      g_assert_cmpint (ya[o]->nelems, ==, yb[o]->nelems);
      g_assert_cmpint (memcmp (ya[o]->data, yb[o]->data, ya[o]->nbytes), ==, 0);
      owb_tensor_unref (ya[o]), owb_tensor_unref (yb[o]);
    }
}

/* How many elements of the float tensors a and b differ, each by at most `bound` (a quantization
 * step, give or take rounding). */
static int64_t
count_step_differences (const OwbTensor *a, const OwbTensor *b, double bound)
{
  g_assert_true (owb_tensor_same_shape (a, b));
  int64_t differ = 0;
  for (int64_t i = 0; i < a->nelems; i++)
    {
      double d = fabs (((const float *) a->data)[i] - ((const float *) b->data)[i]);
      g_assert_cmpfloat (d, <=, bound);
      differ += d > 0;
    }
  return differ;
}

typedef struct {
  gboolean act_signed, weight_unsigned, per_column, weight_zero_points, shared_dq, dynamic_weight, out_signed;
} Variant;

/* x (float [2, M, K]) -> QuantizeLinear -> DequantizeLinear -> MatMul (W: DequantizeLinear of a
 * constant) -> QuantizeLinear -> y (8-bit); with shared_dq the activation's DequantizeLinear also
 * feeds a second output. */
static OwbModel *
build (const Variant *v, int64_t M, int64_t K, int64_t N, GRand *r)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, M, K }, NULL);
  OwbDataType at = v->act_signed ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
  OwbDataType wt = v->weight_unsigned ? OWB_TYPE_UINT8 : OWB_TYPE_INT8;
  OwbDataType yt = v->out_signed ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
  owb_graph_add_initializer (g, "x_scale", scalar (OWB_TYPE_FLOAT, 4.0 / 255));
  owb_graph_add_initializer (g, "x_zp", scalar (at, v->act_signed ? -3 : 125));
  int64_t np = v->per_column ? N : 1;
  owb_graph_add_initializer (g, "w_scale", float_tensor (v->per_column ? 1 : 0, &np, r, 0.002, 0.01));
  OwbTensor *wzp = owb_tensor_new (wt, v->per_column ? 1 : 0, &np, NULL);
  for (int64_t i = 0; i < wzp->nelems; i++)
    ((uint8_t *) wzp->data)[i] = v->weight_zero_points ? (uint8_t) g_rand_int_range (r, 0, 256)
                                                      : (v->weight_unsigned ? 128 : 0);
  owb_graph_add_initializer (g, "w_zp", wzp);
  OwbTensor *w = int8_tensor (wt, 2, (int64_t[]) { K, N }, r);
  if (v->dynamic_weight)
    tu_add_value (g->inputs, "w_q", wt, 2, (int64_t[]) { K, N }, NULL);
  else
    owb_graph_add_initializer (g, "w_q", w);
  owb_graph_add_initializer (g, "y_scale", scalar (OWB_TYPE_FLOAT, 0.05));
  owb_graph_add_initializer (g, "y_zp", scalar (yt, v->out_signed ? 4 : 131));
  tu_node (g, "QuantizeLinear", "quant_x", "x,x_scale,x_zp", "x_q");
  tu_node (g, "DequantizeLinear", "dq_x", "x_q,x_scale,x_zp", "x_dq");
  OwbNode *dqw = tu_node (g, "DequantizeLinear", "dq_w", "w_q,w_scale,w_zp", "w_dq");
  if (v->per_column)
    owb_node_add_attribute (dqw, "axis", OWB_ATTR_INT)->i = 1;
  tu_node (g, "MatMul", "mm", "x_dq,w_dq", "mm_out");
  tu_node (g, "QuantizeLinear", "quant_y", "mm_out,y_scale,y_zp", "y");
  tu_add_untyped_output (g->outputs, "y");
  if (v->shared_dq)
    {
      tu_node (g, "Relu", "relu", "x_dq", "x_relu");
      tu_add_untyped_output (g->outputs, "x_relu");
    }
  if (v->dynamic_weight)
    owb_tensor_unref (w);
  return m;
}

static OwbSession *
session_at (OwbModel *m, OwbOptimizeLevel level, int threads)
{
  GError *error = NULL;
  OwbSession *s = opt_session_new (m, level, threads, NULL, &error);
  g_assert_no_error (error);
  return s;
}

/* Runs both sessions on the same inputs; the 8-bit outputs differ by at most 1, in few places;
 * returns how many differ. */
static int64_t
compare_runs (OwbSession *plain, OwbSession *opt, GRand *r, int64_t M, int64_t K, int64_t N, OwbTensor *w_input)
{
  OwbTensor *x = float_tensor (3, (int64_t[]) { 2, M, K }, r, -2, 2);
  const char *names[2] = { "x", "w_q" };
  OwbTensor *feeds[2] = { x, w_input };
  guint n_in = w_input ? 2 : 1, n_out = owb_session_get_n_outputs (plain);
  OwbTensor *want[2] = { NULL }, *got[2] = { NULL };
  GError *error = NULL;
  g_assert_true (owb_session_run (plain, n_in, names, feeds, n_out, NULL, want, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (owb_session_run (opt, n_in, names, feeds, n_out, NULL, got, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (got[0]->dtype, ==, want[0]->dtype);
  g_assert_cmpint (got[0]->nelems, ==, 2 * M * N);
  int64_t differ = 0;
  for (int64_t i = 0; i < got[0]->nelems; i++)
    {
      double a = owb_tensor_get_double (want[0], i), b = owb_tensor_get_double (got[0], i);
      g_assert_cmpfloat (fabs (a - b), <=, 1);
      differ += a != b;
    }
  /* a float32 sum of K products is off by a few ulps: a value that close to a half step is rare */
  g_assert_cmpint (differ, <=, MAX (2, got[0]->nelems / 100));
  if (n_out > 1)
    g_assert_cmpint (memcmp (want[1]->data, got[1]->data, want[1]->nbytes), ==, 0);
  for (guint i = 0; i < n_out; i++)
    {
      owb_tensor_unref (want[i]);
      owb_tensor_unref (got[i]);
    }
  owb_tensor_unref (x);
  return differ;
}

static void
test_fuse_qdq_matmul (void)
{
  static const Variant variants[] = {
    { FALSE, FALSE, TRUE, FALSE, FALSE, FALSE, FALSE }, /* ONNX Runtime's default: u8 activations, s8 per-channel weights */
    { FALSE, FALSE, FALSE, FALSE, FALSE, FALSE, FALSE }, /* per-tensor weights */
    { TRUE, FALSE, TRUE, FALSE, FALSE, FALSE, TRUE },   /* s8 activations and outputs (TensorRT-style symmetric) */
    { FALSE, TRUE, TRUE, TRUE, FALSE, FALSE, FALSE },   /* u8 weights with zero points */
    { FALSE, FALSE, TRUE, TRUE, TRUE, FALSE, FALSE },   /* the activation's DequantizeLinear read elsewhere too */
  };
  GRand *r = g_rand_new_with_seed (21);
  int64_t M = 37, K = 150, N = 70;
  for (guint vi = 0; vi < G_N_ELEMENTS (variants); vi++)
    {
      const Variant *v = &variants[vi];
      OwbModel *m = build (v, M, K, N, r);
      OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
      OwbSession *opt = session_at (m, OWB_OPTIMIZE_EXTENDED, 2);
      const OwbGraph *g = owb_session_get_graph (opt);
      g_assert_cmpuint (count_op (g, "QLinearMatMul"), ==, 1);
      g_assert_cmpuint (count_op (g, "MatMul"), ==, 0);
      /* the weight's DequantizeLinear is gone; the activation's stays where something else reads it */
      g_assert_cmpuint (count_op (g, "DequantizeLinear"), ==, v->shared_dq ? 1 : 0);
      const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (opt), "fuse_qdq_matmul");
      g_assert_cmpuint (p->created->len, ==, 1);
      const OwbOptimizeCreated *c = g_ptr_array_index (p->created, 0);
      g_assert_cmpstr (c->op_type, ==, "QLinearMatMul");
      g_assert_cmpuint (c->from->len, ==, v->shared_dq ? 3 : 4);
      g_assert_cmpstr (g_ptr_array_index (c->from, c->from->len - 2), ==, "mm");
      g_assert_cmpstr (g_ptr_array_index (c->from, c->from->len - 1), ==, "quant_y");
      g_assert_cmpstr (c->node, ==, "mm"); /* under the MatMul's name */
      int64_t differ = compare_runs (plain, opt, r, M, K, N, NULL);
      g_test_message ("variant %u: %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " outputs differ by 1", vi, differ,
                      2 * M * N);
      owb_session_free (plain);
      owb_session_free (opt);
      owb_model_unref (m);
    }
  g_rand_free (r);
}

/* Not fired: a weight that is a graph input, an activation quantized per channel, and a MatMul
 * whose output is read by something else than one QuantizeLinear. */
static void
test_fuse_qdq_matmul_near_misses (void)
{
  GRand *r = g_rand_new_with_seed (22);
  int64_t M = 5, K = 16, N = 8;
  Variant v = { FALSE, FALSE, TRUE, FALSE, FALSE, TRUE, FALSE };
  OwbModel *m = build (&v, M, K, N, r);
  OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
  OwbSession *opt = session_at (m, OWB_OPTIMIZE_EXTENDED, 1);
  g_assert_cmpuint (count_op (owb_session_get_graph (opt), "QLinearMatMul"), ==, 0);
  const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (opt), "fuse_qdq_matmul");
  g_assert_cmpuint (p->near_misses->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (p->near_misses, 0), "not a constant matrix"));
  OwbTensor *w = int8_tensor (OWB_TYPE_INT8, 2, (int64_t[]) { K, N }, r);
  /* unfused: the same kernels on both sides, so equal */
  g_assert_cmpint (compare_runs (plain, opt, r, M, K, N, w), ==, 0);
  owb_tensor_unref (w);
  owb_session_free (plain);
  owb_session_free (opt);
  owb_model_unref (m);

  /* the MatMul's output also a graph output */
  v.dynamic_weight = FALSE;
  m = build (&v, M, K, N, r);
  tu_add_untyped_output (m->graph->outputs, "mm_out");
  opt = session_at (m, OWB_OPTIMIZE_EXTENDED, 1);
  g_assert_cmpuint (count_op (owb_session_get_graph (opt), "QLinearMatMul"), ==, 0);
  p = get_pass_report (owb_session_get_optimize_report (opt), "fuse_qdq_matmul");
  g_assert_cmpuint (p->near_misses->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (p->near_misses, 0), "not read by one QuantizeLinear"));
  owb_session_free (opt);
  owb_model_unref (m);
  g_rand_free (r);
}

/* x [1,8,12,12] -> Q -> DQ -> Conv (W: DQ of int8 per output channel, B: DQ of int32) -> LeakyRelu
 * -> Q -> DQ -> Relu -> y: the LeakyRelu keeps fuse_qdq_conv off (QLinearConv has no such
 * epilogue), so the Conv stays float. At the layout level the Conv's weight and bias become float constants
 * (fold_dequantized_weights), and NHWC passes through the per-tensor pairs (layout_nhwc): the
 * outputs stay those of the unoptimized model within a step of the output's quantization. */
static void
test_fold_dequantized_weights (void)
{
  GRand *r = g_rand_new_with_seed (31);
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  int64_t C = 128, O = 128, H = 8; /* enough work per element for layout_nhwc to take it */
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, C, H, H }, NULL);
  tu_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, O, H, H }, NULL);
  owb_graph_add_initializer (g, "xs", scalar (OWB_TYPE_FLOAT, 2.0 / 255));
  owb_graph_add_initializer (g, "xz", scalar (OWB_TYPE_UINT8, 128));
  owb_graph_add_initializer (g, "ys", scalar (OWB_TYPE_FLOAT, 0.05));
  owb_graph_add_initializer (g, "yz", scalar (OWB_TYPE_UINT8, 100));
  OwbTensor *w = owb_tensor_new (OWB_TYPE_INT8, 4, (int64_t[]) { O, C, 3, 3 }, NULL);
  for (int64_t i = 0; i < w->nelems; i++)
    ((int8_t *) w->data)[i] = (int8_t) g_rand_int_range (r, -127, 128);
  owb_graph_add_initializer (g, "wq", w);
  owb_graph_add_initializer (g, "ws", float_tensor (1, &O, r, 0.001, 0.004));
  OwbTensor *wz = owb_tensor_new (OWB_TYPE_INT8, 1, &O, NULL);
  owb_graph_add_initializer (g, "wz", wz);
  OwbTensor *b = owb_tensor_new (OWB_TYPE_INT32, 1, &O, NULL);
  for (int64_t i = 0; i < O; i++)
    ((int32_t *) b->data)[i] = g_rand_int_range (r, -2000, 2000);
  owb_graph_add_initializer (g, "bq", b);
  owb_graph_add_initializer (g, "bs", float_tensor (1, &O, r, 1e-5, 3e-5));
  owb_graph_add_initializer (g, "bz", owb_tensor_new (OWB_TYPE_INT32, 1, &O, NULL));
  tu_node (g, "QuantizeLinear", "qx", "x,xs,xz", "xq");
  tu_node (g, "DequantizeLinear", "dqx", "xq,xs,xz", "xd");
  owb_node_add_attribute (tu_node (g, "DequantizeLinear", "dqw", "wq,ws,wz", "wd"), "axis", OWB_ATTR_INT)->i = 0;
  owb_node_add_attribute (tu_node (g, "DequantizeLinear", "dqb", "bq,bs,bz", "bd"), "axis", OWB_ATTR_INT)->i = 0;
  OwbNode *conv = tu_node (g, "Conv", "conv", "xd,wd,bd", "c");
  OwbAttribute *pads = owb_node_add_attribute (conv, "pads", OWB_ATTR_INTS);
  pads->n = 4;
  pads->ints = g_new0 (int64_t, 4);
  for (int i = 0; i < 4; i++)
    pads->ints[i] = 1;
  tu_node (g, "LeakyRelu", "leaky", "c", "cl");
  tu_node (g, "QuantizeLinear", "qc", "cl,ys,yz", "cq");
  tu_node (g, "DequantizeLinear", "dqc", "cq,ys,yz", "cd");
  tu_node (g, "Relu", "relu", "cd", "y");
  g_assert_true (owb_model_validate (m, NULL));

  OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
  OwbSession *extended = session_at (m, OWB_OPTIMIZE_EXTENDED, 1);
  OwbSession *layout = session_at (m, OWB_OPTIMIZE_ALL, 2);
  /* extended keeps the weights quantized (an export at that level stays int8) */
  g_assert_cmpuint (count_op (owb_session_get_graph (extended), "DequantizeLinear"), ==, 4);
  const OwbGraph *lg = owb_session_get_graph (layout);
  g_assert_cmpuint (count_op (lg, "DequantizeLinear"), ==, 2);
  const OwbOptimizeReport *rep = owb_session_get_optimize_report (layout);
  gboolean folded = FALSE, nhwc = FALSE;
  for (guint i = 0; i < rep->passes->len; i++)
    {
      const OwbPassReport *p = g_ptr_array_index (rep->passes, i);
      if (strcmp (p->pass, "fold_dequantized_weights") == 0)
        folded = p->removed->len == 2;
      if (strcmp (p->pass, "layout_nhwc") == 0)
        nhwc = p->created->len > 0;
    }
  g_assert_true (folded);
  g_assert_true (nhwc);
  OwbTensor *x = float_tensor (4, (int64_t[]) { 1, C, H, H }, r, -1, 1);
  const char *names[] = { "x" };
  OwbTensor *ya = NULL, *yb = NULL;
  g_assert_true (owb_session_run (plain, 1, names, &x, 1, NULL, &ya, NULL, NULL, NULL));
  g_assert_true (owb_session_run (layout, 1, names, &x, 1, NULL, &yb, NULL, NULL, NULL));
  int64_t differ = count_step_differences (ya, yb, 0.05 + 1e-6); /* one output step at most */
  g_test_message ("%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " outputs one step apart", differ, ya->nelems);
  g_assert_cmpint (differ, <=, ya->nelems / 100);
  owb_tensor_unref (x), owb_tensor_unref (ya), owb_tensor_unref (yb);
  owb_session_free (plain), owb_session_free (extended), owb_session_free (layout);
  owb_model_unref (m);
  g_rand_free (r);
}

/* ---- fuse_qdq_conv ---- */

typedef struct {
  gboolean act_signed, per_channel;
  int bias;          /* 0 none, 1 DequantizeLinear of int32 at x_scale w_scale, 2 float constant */
  int act;           /* 0 none, 1 Relu, 2 Clip (0, 6) */
  int64_t group, stride;
  int32_t y_zp;      /* of the output's type */
  gboolean same_upper; /* auto_pad SAME_UPPER instead of pads */
} ConvVariant;

/* x [1, C, 10, 9] -> Q -> DQ -> Conv 3x3 pad 1 (W: DQ of a constant) [-> act] -> Q -> DQ -> y. */
static OwbModel *
build_conv (const ConvVariant *v, int64_t C, int64_t M, GRand *r)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  int64_t H = 10, W = 9, Cg = C / v->group;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 4, (int64_t[]) { 1, C, H, W }, NULL);
  tu_add_untyped_output (g->outputs, "y");
  OwbDataType at = v->act_signed ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
  float xs = 4.0f / 255;
  owb_graph_add_initializer (g, "xs", scalar (OWB_TYPE_FLOAT, xs));
  owb_graph_add_initializer (g, "xz", scalar (at, v->act_signed ? -3 : 120));
  owb_graph_add_initializer (g, "ys", scalar (OWB_TYPE_FLOAT, v->act == 2 ? 6.0 / 255 : 0.05));
  owb_graph_add_initializer (g, "yz", scalar (at, v->y_zp));
  int64_t np = v->per_channel ? M : 1;
  OwbTensor *ws = float_tensor (v->per_channel ? 1 : 0, &np, r, 0.002, 0.01);
  owb_graph_add_initializer (g, "ws", ws);
  owb_graph_add_initializer (g, "wz", owb_tensor_new (OWB_TYPE_INT8, v->per_channel ? 1 : 0, &np, NULL));
  OwbTensor *w = owb_tensor_new (OWB_TYPE_INT8, 4, (int64_t[]) { M, Cg, 3, 3 }, NULL);
  for (int64_t i = 0; i < w->nelems; i++)
    ((int8_t *) w->data)[i] = (int8_t) g_rand_int_range (r, -127, 128);
  owb_graph_add_initializer (g, "wq", w);
  tu_node (g, "QuantizeLinear", "qx", "x,xs,xz", "xq");
  tu_node (g, "DequantizeLinear", "dqx", "xq,xs,xz", "xd");
  OwbNode *dqw = tu_node (g, "DequantizeLinear", "dqw", "wq,ws,wz", "wd");
  if (v->per_channel)
    owb_node_add_attribute (dqw, "axis", OWB_ATTR_INT)->i = 0;
  const char *conv_in = "xd,wd";
  if (v->bias == 1)
    {
      /* as quantizers write it: int32 at exactly x_scale w_scale */
      OwbTensor *b = owb_tensor_new (OWB_TYPE_INT32, 1, &M, NULL), *bs = owb_tensor_new (OWB_TYPE_FLOAT, 1, &M, NULL);
      for (int64_t i = 0; i < M; i++)
        {
          ((int32_t *) b->data)[i] = g_rand_int_range (r, -3000, 3000);
          ((float *) bs->data)[i] = xs * ((float *) ws->data)[v->per_channel ? i : 0];
        }
      owb_graph_add_initializer (g, "bq", b);
      owb_graph_add_initializer (g, "bs", bs);
      owb_node_add_attribute (tu_node (g, "DequantizeLinear", "dqb", "bq,bs", "bd"), "axis", OWB_ATTR_INT)->i = 0;
      conv_in = "xd,wd,bd";
    }
  else if (v->bias == 2)
    {
      owb_graph_add_initializer (g, "bd", float_tensor (1, &M, r, -0.5, 0.5));
      conv_in = "xd,wd,bd";
    }
  OwbNode *conv = tu_node (g, "Conv", "conv", conv_in, "c");
  OwbAttribute *a;
  if (v->same_upper)
    {
      a = owb_node_add_attribute (conv, "auto_pad", OWB_ATTR_STRING);
      a->s = g_strdup ("SAME_UPPER");
      a->s_len = strlen (a->s);
    }
  else
    {
      a = owb_node_add_attribute (conv, "pads", OWB_ATTR_INTS);
      a->n = 4;
      a->ints = g_new0 (int64_t, 4);
      for (int i = 0; i < 4; i++)
        a->ints[i] = 1;
    }
  a = owb_node_add_attribute (conv, "strides", OWB_ATTR_INTS);
  a->n = 2;
  a->ints = g_new (int64_t, 2);
  a->ints[0] = a->ints[1] = v->stride;
  owb_node_add_attribute (conv, "group", OWB_ATTR_INT)->i = v->group;
  const char *q_in = "c,ys,yz";
  if (v->act == 1)
    {
      tu_node (g, "Relu", "act", "c", "ca");
      q_in = "ca,ys,yz";
    }
  else if (v->act == 2)
    {
      owb_graph_add_initializer (g, "lo", scalar (OWB_TYPE_FLOAT, 0));
      owb_graph_add_initializer (g, "hi", scalar (OWB_TYPE_FLOAT, 6));
      tu_node (g, "Clip", "act", "c,lo,hi", "ca");
      q_in = "ca,ys,yz";
    }
  tu_node (g, "QuantizeLinear", "qy", q_in, "yq");
  tu_node (g, "DequantizeLinear", "dqy", "yq,ys,yz", "y");
  g_assert_true (owb_model_validate (m, NULL));
  return m;
}

/* Outputs of `opt` against `plain` (both float, one output step apart at most, and rarely);
 * returns how many differ. */
static int64_t
compare_conv (OwbSession *plain, OwbSession *opt, int64_t C, double step, GRand *r)
{
  OwbTensor *x = float_tensor (4, (int64_t[]) { 1, C, 10, 9 }, r, -2, 2);
  const char *names[] = { "x" };
  OwbTensor *ya = NULL, *yb = NULL;
  GError *error = NULL;
  g_assert_true (owb_session_run (plain, 1, names, &x, 1, NULL, &ya, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (owb_session_run (opt, 1, names, &x, 1, NULL, &yb, NULL, NULL, &error));
  g_assert_no_error (error);
  int64_t differ = count_step_differences (ya, yb, step * 1.0001);
  g_assert_cmpint (differ, <=, MAX (2, ya->nelems / 100));
  owb_tensor_unref (x), owb_tensor_unref (ya), owb_tensor_unref (yb);
  return differ;
}

static void
test_fuse_qdq_conv (void)
{
  static const ConvVariant variants[] = {
    { FALSE, TRUE, 1, 1, 1, 1, 0 },    /* ONNX Runtime's: u8, s8 per channel, int32 bias, Relu at zero point 0 */
    { FALSE, FALSE, 2, 0, 1, 2, 100 }, /* per tensor, float bias rounded to int32, stride 2 */
    { TRUE, TRUE, 0, 2, 1, 1, -128 },  /* s8 activations, Clip (0, 6) that the saturation covers */
    { FALSE, TRUE, 1, 0, 24, 2, 128 }, /* depthwise, stride 2 */
    { TRUE, TRUE, 1, 1, 4, 1, -128 },  /* 4 groups, s8 */
    { FALSE, TRUE, 1, 1, 1, 2, 0, TRUE }, /* auto_pad SAME_UPPER: the string attribute carried whole */
  };
  GRand *r = g_rand_new_with_seed (41);
  int64_t C = 24, M = 40;
  for (guint vi = 0; vi < G_N_ELEMENTS (variants); vi++)
    {
      const ConvVariant *v = &variants[vi];
      int64_t Mv = v->group == C ? C : M;
      OwbModel *m = build_conv (v, C, Mv, r);
      OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
      OwbSession *ext = session_at (m, OWB_OPTIMIZE_EXTENDED, 2);
      OwbSession *all = session_at (m, OWB_OPTIMIZE_ALL, 2);
      const OwbGraph *g = owb_session_get_graph (ext);
      g_assert_cmpuint (count_op (g, "QLinearConv"), ==, 1);
      g_assert_cmpuint (count_op (g, "Conv"), ==, 0);
      g_assert_cmpuint (count_op (g, "Relu") + count_op (g, "Clip"), ==, 0);
      /* only the input's QuantizeLinear and the output's DequantizeLinear stay */
      g_assert_cmpuint (count_op (g, "DequantizeLinear"), ==, 1);
      g_assert_cmpuint (count_op (g, "QuantizeLinear"), ==, 1);
      const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (ext), "fuse_qdq_conv");
      g_assert_cmpuint (p->created->len, ==, 1);
      const OwbOptimizeCreated *c = g_ptr_array_index (p->created, 0);
      g_assert_cmpstr (c->op_type, ==, "QLinearConv");
      g_assert_cmpuint (c->from->len, ==, 4 + (v->bias == 1) + (v->act != 0));
      g_assert_cmpstr (g_ptr_array_index (c->from, c->from->len - 1), ==, "qy");
      if (v->same_upper)
        for (guint i = 0; i < g->nodes->len; i++)
          {
            const OwbNode *n = g_ptr_array_index (g->nodes, i);
            const OwbAttribute *ap = strcmp (n->op_type, "QLinearConv") == 0 ? owb_node_get_attribute (n, "auto_pad") : NULL;
            if (ap)
              g_assert_cmpuint (ap->s_len, ==, strlen ("SAME_UPPER"));
          }
      /* at the layout level the weight stays integer (fold_dequantized_weights has nothing to do) */
      g_assert_cmpuint (count_op (owb_session_get_graph (all), "Conv"), ==, 0);
      g_assert_cmpuint (count_op (owb_session_get_graph (all), "NhwcConv"), ==, 0);
      double step = v->act == 2 ? 6.0 / 255 : 0.05;
      int64_t d1 = compare_conv (plain, ext, C, step, r), d2 = compare_conv (plain, all, C, step, r);
      g_test_message ("variant %u: %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT " outputs one step apart", vi, d1, d2);
      owb_session_free (plain), owb_session_free (ext), owb_session_free (all);
      owb_model_unref (m);
    }
  g_rand_free (r);
}

/* Not fired: a Relu that clamps tighter than the output's saturation (zero point 100), and a weight
 * quantized along its input channels. The graph then runs as before, to the bit. */
static void
test_fuse_qdq_conv_near_misses (void)
{
  GRand *r = g_rand_new_with_seed (42);
  ConvVariant v = { FALSE, TRUE, 1, 1, 1, 1, 100 };
  OwbModel *m = build_conv (&v, 8, 16, r);
  OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
  OwbSession *ext = session_at (m, OWB_OPTIMIZE_EXTENDED, 1);
  g_assert_cmpuint (count_op (owb_session_get_graph (ext), "QLinearConv"), ==, 0);
  const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (ext), "fuse_qdq_conv");
  g_assert_cmpuint (p->near_misses->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (p->near_misses, 0), "clamps tighter"));
  compare_conv (plain, ext, 8, 0.05, r);
  owb_session_free (plain), owb_session_free (ext);
  owb_model_unref (m);

  v.y_zp = 0;
  m = build_conv (&v, 8, 16, r);
  OwbNode *dqw = NULL;
  for (guint i = 0; i < m->graph->nodes->len; i++)
    if (strcmp (((OwbNode *) g_ptr_array_index (m->graph->nodes, i))->name, "dqw") == 0)
      dqw = g_ptr_array_index (m->graph->nodes, i);
  for (int a = 0; a < dqw->n_attributes; a++)
    if (strcmp (dqw->attributes[a].name, "axis") == 0)
      dqw->attributes[a].i = 1;
  /* 16 scales along axis 1 (8 channels) would be invalid: make it 8 */
  OwbTensor *ws8 = float_tensor (1, (int64_t[]) { 8 }, r, 0.002, 0.01);
  owb_graph_add_initializer (m->graph, "ws", ws8);
  owb_graph_add_initializer (m->graph, "wz", owb_tensor_new (OWB_TYPE_INT8, 1, (int64_t[]) { 8 }, NULL));
  OwbNode *dqb = NULL;
  for (guint i = 0; i < m->graph->nodes->len; i++)
    if (strcmp (((OwbNode *) g_ptr_array_index (m->graph->nodes, i))->name, "dqb") == 0)
      dqb = g_ptr_array_index (m->graph->nodes, i);
  /* the bias's scale no longer matches x_scale w_scale: give it its own */
  owb_graph_add_initializer (m->graph, "bs", float_tensor (1, (int64_t[]) { 16 }, r, 1e-5, 3e-5));
  (void) dqb;
  g_assert_true (owb_model_validate (m, NULL));
  ext = session_at (m, OWB_OPTIMIZE_EXTENDED, 1);
  g_assert_cmpuint (count_op (owb_session_get_graph (ext), "QLinearConv"), ==, 0);
  p = get_pass_report (owb_session_get_optimize_report (ext), "fuse_qdq_conv");
  g_assert_cmpuint (p->near_misses->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (p->near_misses, 0), "axis other than its output channels"));
  owb_session_free (ext);
  owb_model_unref (m);
  g_rand_free (r);
}

/* ---- fuse_qdq_lookup ---- */

/* x [2, 3, 17, 19] -> Q -> DQ -> op -> Q -> DQ -> y, 8-bit per tensor; with `shared` the op's float
 * output is a second graph output too. */
static OwbModel *
build_lookup (const char *op, OwbDataType qt, gboolean shared)
{
  OwbModel *m = qdq_model_new (14, 4, (int64_t[]) { 2, 3, 17, 19 }); /* HardSwish */
  OwbGraph *g = m->graph;
  gboolean s8 = qt == OWB_TYPE_INT8;
  owb_graph_add_initializer (g, "xs", scalar (OWB_TYPE_FLOAT, 8.0 / 255));
  owb_graph_add_initializer (g, "xz", scalar (qt, s8 ? -5 : 127));
  owb_graph_add_initializer (g, "ys", scalar (OWB_TYPE_FLOAT, 1.0 / 255));
  owb_graph_add_initializer (g, "yz", scalar (qt, s8 ? -128 : 0));
  tu_node (g, "QuantizeLinear", "qx", "x,xs,xz", "xq");
  tu_node (g, "DequantizeLinear", "dqx", "xq,xs,xz", "xd");
  tu_node (g, op, "op", "xd", "f");
  tu_node (g, "QuantizeLinear", "qy", "f,ys,yz", "yq");
  tu_node (g, "DequantizeLinear", "dqy", "yq,ys,yz", "y");
  if (shared)
    {
      tu_add_untyped_output (g->outputs, "f");
    }
  g_assert_true (owb_model_validate (m, NULL));
  return m;
}

/* The table is those nodes' own kernels on every byte, so the outputs equal the unfused model's
 * exactly; the DequantizeLinear in front goes with them. */
static void
test_fuse_qdq_lookup (void)
{
  static const char *const ops[] = { "Sigmoid", "HardSwish", "HardSigmoid", "Tanh" };
  GRand *r = g_rand_new_with_seed (51);
  for (guint oi = 0; oi < G_N_ELEMENTS (ops); oi++)
    for (int s8 = 0; s8 < 2; s8++)
      {
        OwbModel *m = build_lookup (ops[oi], s8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8, FALSE);
        OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
        OwbSession *all = session_at (m, OWB_OPTIMIZE_ALL, 2);
        const OwbGraph *g = owb_session_get_graph (all);
        g_assert_cmpuint (count_op (g, "QLinearLookup"), ==, 1);
        g_assert_cmpuint (count_op (g, ops[oi]), ==, 0);
        g_assert_cmpuint (count_op (g, "DequantizeLinear"), ==, 1);
        const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (all), "fuse_qdq_lookup");
        g_assert_cmpuint (p->created->len, ==, 1);
        const OwbOptimizeCreated *c = g_ptr_array_index (p->created, 0);
        g_assert_cmpuint (c->from->len, ==, 3);
        OwbTensor *x = float_tensor (4, (int64_t[]) { 2, 3, 17, 19 }, r, -5, 5);
        const char *names[] = { "x" };
        assert_runs_equal (plain, all, 1, names, &x, 1);
        owb_tensor_unref (x);
        owb_session_free (plain), owb_session_free (all);
        owb_model_unref (m);
      }
  /* near miss: the op's float output is read elsewhere */
  OwbModel *m = build_lookup ("Sigmoid", OWB_TYPE_UINT8, TRUE);
  OwbSession *ext = session_at (m, OWB_OPTIMIZE_EXTENDED, 1);
  g_assert_cmpuint (count_op (owb_session_get_graph (ext), "QLinearLookup"), ==, 0);
  const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (ext), "fuse_qdq_lookup");
  g_assert_cmpuint (p->near_misses->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (p->near_misses, 0), "read elsewhere"));
  owb_session_free (ext);
  owb_model_unref (m);
  g_rand_free (r);
}

/* An op between two Q/DQ pairs, x [xd] -> Q -> DQ -> "xd" and "f" -> Q -> DQ -> y, both 8-bit at
 * one zero point (-4 s8, 121 u8) and scale 7/255 or, with other_scale, y's at 5/255: add the op
 * from "xd" to "f" between byte_island_begin and byte_island_end. */
static OwbModel *
byte_island_begin (const int64_t *xd, gboolean s8, gboolean other_scale)
{
  OwbDataType qt = s8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
  OwbModel *m = qdq_model_new (13, 4, xd);
  OwbGraph *g = m->graph;
  owb_graph_add_initializer (g, "xs", scalar (OWB_TYPE_FLOAT, 7.0 / 255));
  owb_graph_add_initializer (g, "xz", scalar (qt, s8 ? -4 : 121));
  owb_graph_add_initializer (g, "ys", scalar (OWB_TYPE_FLOAT, other_scale ? 5.0 / 255 : 7.0 / 255));
  tu_node (g, "QuantizeLinear", "qx", "x,xs,xz", "xq");
  tu_node (g, "DequantizeLinear", "dqx", "xq,xs,xz", "xd");
  return m;
}

static void
byte_island_end (OwbModel *m)
{
  tu_node (m->graph, "QuantizeLinear", "qy", "f,ys,xz", "yq");
  tu_node (m->graph, "DequantizeLinear", "dqy", "yq,ys,xz", "y");
  g_assert_true (owb_model_validate (m, NULL));
}

/* At one scale the optimized island runs the op (op or, where not NULL, nhwc_op) on the bytes,
 * keeping only x's Q and y's DQ; at another the pair stays. Outputs equal the unoptimized model's
 * to the bit either way. Takes m. */
static void
check_byte_island (OwbModel *m, const char *op, const char *nhwc_op, const int64_t *xd, gboolean other_scale,
                   GRand *r)
{
  OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
  OwbSession *all = session_at (m, OWB_OPTIMIZE_ALL, 2);
  const OwbGraph *og = owb_session_get_graph (all);
  g_assert_cmpuint (count_op (og, op) + (nhwc_op ? count_op (og, nhwc_op) : 0), ==, 1);
  g_assert_cmpuint (count_op (og, "DequantizeLinear"), ==, other_scale ? 2 : 1);
  g_assert_cmpuint (count_op (og, "QuantizeLinear"), ==, other_scale ? 2 : 1);
  OwbTensor *x = float_tensor (4, xd, r, -3, 3);
  const char *names[] = { "x" };
  assert_runs_equal (plain, all, 1, names, &x, 1);
  owb_tensor_unref (x);
  owb_session_free (plain), owb_session_free (all);
  owb_model_unref (m);
}

/* DequantizeLinear -> Flatten (Reshape, Transpose) -> QuantizeLinear at one scale, as a quantizer
 * writes them before a classifier: the op on the bytes, no float island left, outputs equal to the
 * bit; another scale keeps the pair. */
static void
test_fuse_qdq_moves_bytes (void)
{
  static const char *const ops[] = { "Flatten", "Reshape", "Transpose" };
  GRand *r = g_rand_new_with_seed (55);
  for (guint oi = 0; oi < G_N_ELEMENTS (ops); oi++)
    for (int k = 0; k < 3; k++)
      {
        gboolean s8 = k == 1, other_scale = k == 2;
        int64_t xd[4] = { 2, 5, 4, 3 };
        OwbModel *m = byte_island_begin (xd, s8, other_scale);
        OwbGraph *g = m->graph;
        if (oi == 0)
          tu_set_int (tu_node (g, "Flatten", "op", "xd", "f"), "axis", 1);
        else if (oi == 1)
          {
            owb_graph_add_initializer (g, "shape", tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 2 }, (int64_t[]) { 10, -1 }));
            tu_node (g, "Reshape", "op", "xd,shape", "f");
          }
        else
          tu_set_ints (tu_node (g, "Transpose", "op", "xd", "f"), "perm", 4, (int64_t[]) { 0, 2, 3, 1 });
        byte_island_end (m);
        check_byte_island (m, ops[oi], NULL, xd, other_scale, r);
      }
  g_rand_free (r);
}

/* ---- fuse_qconv_lookup ---- */

typedef struct {
  gboolean s8, bias;
  int64_t group;
  gboolean shared;   /* the convolution's output is a graph output too */
  gboolean s8_table; /* the table's type differs from the convolution's output */
} LookupConvVariant;

/* x (NHWC [1, 10, 9, 24], 8-bit) -> NhwcQLinearConv 3x3 pad 1 (constant W, per channel) ->
 * QLinearLookup (a constant table) -> y: what the layout level makes of a QDQ convolution with a
 * quantized Sigmoid or HardSwish after it. */
static OwbModel *
build_conv_lookup (const LookupConvVariant *v, int64_t M, GRand *r)
{
  OwbModel *m = tu_model_new (13);
  owb_model_set_opset (m, OWB_DOMAIN, 1);
  OwbGraph *g = m->graph;
  int64_t C = 24, Cg = C / v->group;
  OwbDataType qt = v->s8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
  tu_add_value (g->inputs, "x", qt, 4, (int64_t[]) { 1, 10, 9, C }, NULL);
  tu_add_untyped_output (g->outputs, "y");
  owb_graph_add_initializer (g, "xs", scalar (OWB_TYPE_FLOAT, 0.02));
  owb_graph_add_initializer (g, "xz", scalar (qt, v->s8 ? -3 : 120));
  owb_graph_add_initializer (g, "w", int8_tensor (OWB_TYPE_INT8, 4, (int64_t[]) { M, Cg, 3, 3 }, r));
  owb_graph_add_initializer (g, "ws", float_tensor (1, &M, r, 0.002, 0.01));
  owb_graph_add_initializer (g, "wz", owb_tensor_new (OWB_TYPE_INT8, 1, &M, NULL));
  owb_graph_add_initializer (g, "ys", scalar (OWB_TYPE_FLOAT, 0.05));
  owb_graph_add_initializer (g, "yz", scalar (qt, v->s8 ? 5 : 128));
  OwbTensor *b = owb_tensor_new (OWB_TYPE_INT32, 1, &M, NULL);
  for (int64_t i = 0; i < M; i++)
    ((int32_t *) b->data)[i] = g_rand_int_range (r, -3000, 3000);
  owb_graph_add_initializer (g, "b", b);
  owb_graph_add_initializer (g, "table", int8_tensor (v->s8_table ? OWB_TYPE_INT8 : qt, 1, (int64_t[]) { 256 }, r));
  OwbNode *conv = tu_node (g, "NhwcQLinearConv", "conv", v->bias ? "x,xs,xz,w,ws,wz,ys,yz,b" : "x,xs,xz,w,ws,wz,ys,yz",
                           "c");
  OwbNode *lk = tu_node (g, "QLinearLookup", "lookup", "c,table", "y");
  for (OwbNode **n = (OwbNode *[]) { conv, lk, NULL }; *n; n++)
    {
      g_free ((*n)->domain);
      (*n)->domain = g_strdup (OWB_DOMAIN);
    }
  int64_t pads[4] = { 1, 1, 1, 1 };
  OwbAttribute *a = owb_node_add_attribute (conv, "pads", OWB_ATTR_INTS);
  a->n = 4;
  a->ints = g_memdup2 (pads, sizeof pads);
  owb_node_add_attribute (conv, "group", OWB_ATTR_INT)->i = v->group;
  if (v->shared)
    {
      tu_add_untyped_output (g->outputs, "c");
    }
  g_assert_true (owb_model_validate (m, NULL));
  return m;
}

/* The lookup goes into the NhwcQLinearConv as its Table (input 9; input 8 "" without a bias): one
 * node instead of two, outputs equal to the bit to the unfused graph's, on the indirect GEMM,
 * depthwise and grouped convolutions, u8 and s8. Near misses: the convolution's output read
 * elsewhere too, a table of another type. */
static void
test_fuse_qconv_lookup (void)
{
  static const LookupConvVariant variants[] = {
    { FALSE, TRUE, 1 },  /* u8, bias */
    { TRUE, FALSE, 1 },  /* s8, no bias */
    { FALSE, TRUE, 24 }, /* depthwise */
    { TRUE, TRUE, 4 },   /* 4 groups */
  };
  GRand *r = g_rand_new_with_seed (61);
  for (guint vi = 0; vi < G_N_ELEMENTS (variants); vi++)
    {
      const LookupConvVariant *v = &variants[vi];
      OwbModel *m = build_conv_lookup (v, v->group == 24 ? 24 : 40, r);
      OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
      OwbSession *all = session_at (m, OWB_OPTIMIZE_ALL, 2);
      const OwbGraph *g = owb_session_get_graph (all);
      g_assert_cmpuint (count_op (g, "NhwcQLinearConv"), ==, 1);
      g_assert_cmpuint (count_op (g, "QLinearLookup"), ==, 0);
      g_assert_cmpuint (count_op (owb_session_get_graph (plain), "QLinearLookup"), ==, 1);
      for (guint i = 0; i < g->nodes->len; i++)
        {
          const OwbNode *n = g_ptr_array_index (g->nodes, i);
          g_assert_cmpint (n->n_inputs, ==, 10);
          g_assert_cmpstr (n->inputs[8], ==, v->bias ? "b" : "");
          g_assert_cmpstr (n->inputs[9], ==, "table");
        }
      const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (all), "fuse_qconv_lookup");
      g_assert_cmpuint (p->created->len, ==, 1);
      g_assert_cmpuint (((const OwbOptimizeCreated *) g_ptr_array_index (p->created, 0))->from->len, ==, 2);
      for (int rep = 0; rep < 2; rep++)
        {
          OwbTensor *x = int8_tensor (v->s8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8, 4, (int64_t[]) { 1, 10, 9, 24 }, r);
          const char *names[] = { "x" };
          assert_runs_equal (plain, all, 1, names, &x, 1);
          owb_tensor_unref (x);
        }
      owb_session_free (plain), owb_session_free (all);
      owb_model_unref (m);
    }
  static const LookupConvVariant misses[] = { { FALSE, TRUE, 1, TRUE, FALSE }, { FALSE, TRUE, 1, FALSE, TRUE } };
  static const char *const why[] = { "read elsewhere", "output type" };
  for (guint mi = 0; mi < G_N_ELEMENTS (misses); mi++)
    {
      OwbModel *m = build_conv_lookup (&misses[mi], 40, r);
      OwbSession *all = session_at (m, OWB_OPTIMIZE_ALL, 1);
      g_assert_cmpuint (count_op (owb_session_get_graph (all), "QLinearLookup"), ==, 1);
      const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (all), "fuse_qconv_lookup");
      g_assert_cmpuint (p->created->len, ==, 0);
      g_assert_cmpuint (p->near_misses->len, ==, 1);
      g_assert_nonnull (strstr (g_ptr_array_index (p->near_misses, 0), why[mi]));
      owb_session_free (all);
      owb_model_unref (m);
    }
  g_rand_free (r);
}

/* Two quantized operands (x [2, 6, 9, 7] and z [2, 6, 9, 7] or the broadcast [2, 6, 1, 1]) ->
 * DQ, DQ -> Add/Mul -> Q -> DQ -> y: one QLinearBinary (or, without a zero point, one
 * QLinearBinaryLookup), broadcasting, outputs equal to the bit. */
static void
test_fuse_qdq_binary (void)
{
  GRand *r = g_rand_new_with_seed (52);
  static const char *const ops[] = { "Add", "Mul" };
  for (int oi = 0; oi < 2; oi++)
    for (int bcast = 0; bcast < 2; bcast++)
      for (int s8 = 0; s8 < 3; s8++)
        {
          /* s8 = 2: u8 with B's zero point left out, which takes the table */
          gboolean table = s8 == 2;
          OwbDataType qt = s8 == 1 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
          int64_t xd[4] = { 2, 6, 9, 7 }, zd[4] = { 2, 6, bcast ? 1 : 9, bcast ? 1 : 7 };
          OwbModel *m = tu_model_new (13);
          OwbGraph *g = m->graph;
          tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 4, xd, NULL);
          tu_add_value (g->inputs, "z", OWB_TYPE_FLOAT, 4, zd, NULL);
          tu_add_untyped_output (g->outputs, "y");
          owb_graph_add_initializer (g, "xs", scalar (OWB_TYPE_FLOAT, 6.0 / 255));
          owb_graph_add_initializer (g, "xz", scalar (qt, s8 == 1 ? 3 : 120));
          owb_graph_add_initializer (g, "zs", scalar (OWB_TYPE_FLOAT, 2.5 / 255));
          owb_graph_add_initializer (g, "zz", scalar (qt, s8 == 1 ? -7 : 131));
          owb_graph_add_initializer (g, "ys", scalar (OWB_TYPE_FLOAT, oi ? 9.0 / 255 : 8.0 / 255));
          owb_graph_add_initializer (g, "yz", scalar (qt, s8 == 1 ? 0 : 128));
          tu_node (g, "QuantizeLinear", "qx", "x,xs,xz", "xq");
          tu_node (g, "DequantizeLinear", "dqx", "xq,xs,xz", "xd");
          tu_node (g, "QuantizeLinear", "qz", table ? "z,zs" : "z,zs,zz", "zq");
          tu_node (g, "DequantizeLinear", "dqz", table ? "zq,zs" : "zq,zs,zz", "zdq");
          tu_node (g, ops[oi], "op", "xd,zdq", "f");
          tu_node (g, "QuantizeLinear", "qy", "f,ys,yz", "yq");
          tu_node (g, "DequantizeLinear", "dqy", "yq,ys,yz", "y");
          g_assert_true (owb_model_validate (m, NULL));
          OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
          OwbSession *ext = session_at (m, OWB_OPTIMIZE_EXTENDED, 2);
          const OwbGraph *og = owb_session_get_graph (ext);
          g_assert_cmpuint (count_op (og, table ? "QLinearBinaryLookup" : "QLinearBinary"), ==, 1);
          g_assert_cmpuint (count_op (og, ops[oi]), ==, 0);
          g_assert_cmpuint (count_op (og, "DequantizeLinear"), ==, 1);
          const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (ext), "fuse_qdq_lookup");
          g_assert_cmpuint (p->created->len, ==, 1);
          g_assert_cmpuint (((const OwbOptimizeCreated *) g_ptr_array_index (p->created, 0))->from->len, ==, 4);
          OwbTensor *x = float_tensor (4, xd, r, -3, 3), *z = float_tensor (4, zd, r, -1.5, 1.5);
          const char *names[] = { "x", "z" };
          OwbTensor *feeds[2] = { x, z };
          assert_runs_equal (plain, ext, 2, names, feeds, 1);
          owb_tensor_unref (x), owb_tensor_unref (z);
          owb_session_free (plain), owb_session_free (ext);
          owb_model_unref (m);
        }
  g_rand_free (r);
}


/* x -> Q -> DQ -> Sigmoid -> Q -> DQ, and DQ (x) times that -> Q -> DQ -> y, as a QDQ SiLU: the
 * lookup and the product become one QLinearLookup (either operand order, u8 and s8, with the
 * product as QLinearBinary or, without zero points, QLinearBinaryLookup), outputs equal to the
 * bit; with the sigmoid's output read elsewhere too, a near miss. */
static void
test_fuse_qdq_lookup_pair (void)
{
  GRand *r = g_rand_new_with_seed (53);
  for (int k = 0; k < 7; k++)
    {
      gboolean swap = k & 1, s8 = (k >> 1) & 1, nozp = (k >> 2) & 1, shared = k == 6;
      OwbDataType qt = s8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
      int64_t xd[4] = { 2, 5, 9, 7 };
      OwbModel *m = qdq_model_new (13, 4, xd);
      OwbGraph *g = m->graph;
      owb_graph_add_initializer (g, "xs", scalar (OWB_TYPE_FLOAT, 10.0 / 255));
      owb_graph_add_initializer (g, "xz", scalar (qt, s8 ? 3 : 131));
      owb_graph_add_initializer (g, "ss", scalar (OWB_TYPE_FLOAT, 1.0 / 255));
      owb_graph_add_initializer (g, "sz", scalar (qt, s8 ? -128 : 0));
      owb_graph_add_initializer (g, "ys", scalar (OWB_TYPE_FLOAT, 6.0 / 255));
      owb_graph_add_initializer (g, "yz", scalar (qt, s8 ? -20 : 100));
      const char *xz = nozp ? "" : ",xz", *sz = nozp ? "" : ",sz";
      g_autofree char *qx = g_strdup_printf ("x,xs%s", xz), *dqx = g_strdup_printf ("xq,xs%s", xz);
      g_autofree char *qs = g_strdup_printf ("sg,ss%s", sz), *dqs = g_strdup_printf ("sq,ss%s", sz);
      tu_node (g, "QuantizeLinear", "qx", qx, "xq");
      tu_node (g, "DequantizeLinear", "dqx", dqx, "xd");
      tu_node (g, "DequantizeLinear", "dqx2", dqx, "xd2");
      tu_node (g, "Sigmoid", "sig", "xd", "sg");
      tu_node (g, "QuantizeLinear", "qs", qs, "sq");
      tu_node (g, "DequantizeLinear", "dqs", dqs, "sd");
      tu_node (g, "Mul", "mul", swap ? "sd,xd2" : "xd2,sd", "f");
      tu_node (g, "QuantizeLinear", "qy", "f,ys,yz", "yq");
      tu_node (g, "DequantizeLinear", "dqy", "yq,ys,yz", "y");
      if (shared)
        {
          tu_node (g, "Identity", "keep", "sq", "s_out");
          tu_add_untyped_output (g->outputs, "s_out");
        }
      g_assert_true (owb_model_validate (m, NULL));
      OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
      OwbSession *ext = session_at (m, OWB_OPTIMIZE_EXTENDED, 2);
      const OwbGraph *og = owb_session_get_graph (ext);
      const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (ext), "fuse_qdq_lookup");
      if (shared)
        {
          g_assert_cmpuint (count_op (og, "QLinearLookup"), ==, 1);
          gboolean seen = FALSE;
          for (guint i = 0; i < p->near_misses->len; i++)
            seen |= strstr (g_ptr_array_index (p->near_misses, i), "lookup's output is read elsewhere") != NULL;
          g_assert_true (seen);
        }
      else
        {
          g_assert_cmpuint (count_op (og, "QLinearLookup"), ==, 1);
          g_assert_cmpuint (count_op (og, "QLinearBinary") + count_op (og, "QLinearBinaryLookup"), ==, 0);
          g_assert_cmpuint (count_op (og, "Mul") + count_op (og, "Sigmoid"), ==, 0);
        }
      OwbTensor *x = float_tensor (4, xd, r, -6, 6);
      const char *names[] = { "x" };
      assert_runs_equal (plain, ext, 1, names, &x, shared ? 2 : 1);
      owb_tensor_unref (x);
      owb_session_free (plain), owb_session_free (ext);
      owb_model_unref (m);
    }
  g_rand_free (r);
}


/* x -> Q -> DQ -> MaxPool (3x3, strides 2, pads 1) -> Q -> DQ -> y: at one scale and zero point
 * the pool runs on the bytes (u8 and s8), outputs equal to the bit; at another scale it stays. */
static void
test_fuse_qdq_maxpool (void)
{
  GRand *r = g_rand_new_with_seed (54);
  for (int k = 0; k < 3; k++)
    {
      gboolean s8 = k == 1, other_scale = k == 2;
      int64_t xd[4] = { 1, 5, 13, 11 };
      OwbModel *m = byte_island_begin (xd, s8, other_scale);
      OwbNode *mp = tu_node (m->graph, "MaxPool", "pool", "xd", "f");
      tu_set_ints (mp, "kernel_shape", 2, (int64_t[]) { 3, 3 });
      tu_set_ints (mp, "strides", 2, (int64_t[]) { 2, 2 });
      tu_set_ints (mp, "pads", 4, (int64_t[]) { 1, 1, 1, 1 });
      byte_island_end (m);
      check_byte_island (m, "MaxPool", "NhwcMaxPool", xd, other_scale, r);
    }
  g_rand_free (r);
}

/* x -> Q -> DQ -> Conv 3x3 (a DQ'd int8 weight) -> Q -> DQ -> GlobalAveragePool -> Q -> DQ -> y, u8
 * and s8: the pool becomes a QLinearGlobalAveragePool (channels last where the layout pass made
 * the convolution NHWC), its outputs within a step of the unoptimized model's; with the pool's
 * float output also a graph output it stays, with a near miss. */
static void
test_fuse_qdq_global_average_pool (void)
{
  GRand *r = g_rand_new_with_seed (77);
  for (int k = 0; k < 3; k++)
    {
      gboolean s8 = k == 1, shared = k == 2;
      OwbDataType qt = s8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
      int64_t xd[4] = { 2, 8, 15, 17 }, C = 24;
      OwbModel *m = qdq_model_new (13, 4, xd);
      OwbGraph *g = m->graph;
      owb_graph_add_initializer (g, "xs", scalar (OWB_TYPE_FLOAT, 6.0 / 255));
      owb_graph_add_initializer (g, "xz", scalar (qt, s8 ? -5 : 127));
      owb_graph_add_initializer (g, "cs", scalar (OWB_TYPE_FLOAT, 0.05));
      owb_graph_add_initializer (g, "cz", scalar (qt, s8 ? 3 : 120));
      owb_graph_add_initializer (g, "ps", scalar (OWB_TYPE_FLOAT, 0.013));
      owb_graph_add_initializer (g, "pz", scalar (qt, s8 ? -2 : 133));
      owb_graph_add_initializer (g, "ws", scalar (OWB_TYPE_FLOAT, 0.004));
      owb_graph_add_initializer (g, "wz", scalar (OWB_TYPE_INT8, 0));
      owb_graph_add_initializer (g, "wq", int8_tensor (OWB_TYPE_INT8, 4, (int64_t[]) { C, 8, 3, 3 }, r));
      tu_node (g, "QuantizeLinear", "qx", "x,xs,xz", "xq");
      tu_node (g, "DequantizeLinear", "dqx", "xq,xs,xz", "xd");
      tu_node (g, "DequantizeLinear", "dqw", "wq,ws,wz", "wd");
      OwbNode *conv = tu_node (g, "Conv", "conv", "xd,wd", "c");
      OwbAttribute *a = owb_node_add_attribute (conv, "pads", OWB_ATTR_INTS);
      a->n = 4;
      a->ints = g_memdup2 ((int64_t[]) { 1, 1, 1, 1 }, 4 * sizeof (int64_t));
      tu_node (g, "QuantizeLinear", "qc", "c,cs,cz", "cq");
      tu_node (g, "DequantizeLinear", "dqc", "cq,cs,cz", "cd");
      tu_node (g, "GlobalAveragePool", "gap", "cd", "p");
      tu_node (g, "QuantizeLinear", "qp", "p,ps,pz", "pq");
      tu_node (g, "DequantizeLinear", "dqp", "pq,ps,pz", "y");
      if (shared)
        {
          tu_add_untyped_output (g->outputs, "p");
        }
      g_assert_true (owb_model_validate (m, NULL));
      OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
      for (int level = 0; level < 2; level++)
        {
          OwbSession *opt = session_at (m, level ? OWB_OPTIMIZE_ALL : OWB_OPTIMIZE_EXTENDED, 2);
          const OwbGraph *og = owb_session_get_graph (opt);
          const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (opt), "fuse_qdq_lookup");
          guint fused = count_op (og, "QLinearGlobalAveragePool");
          g_assert_cmpuint (fused, ==, shared ? 0 : 1);
          g_assert_cmpuint (count_op (og, "GlobalAveragePool") + count_op (og, "NhwcGlobalAveragePool"), ==, shared ? 1 : 0);
          gboolean near = FALSE;
          for (guint i = 0; i < p->near_misses->len; i++)
            near = near || strstr (g_ptr_array_index (p->near_misses, i), "float output is read elsewhere") != NULL;
          g_assert_true (near == shared);
          for (guint i = 0; fused && i < og->nodes->len; i++)
            {
              const OwbNode *n = g_ptr_array_index (og->nodes, i);
              if (strcmp (n->op_type, "QLinearGlobalAveragePool") == 0)
                g_assert_cmpint (owb_node_get_int (n, "channels_last", 0), ==, count_op (og, "NhwcQLinearConv") == 1);
            }
          if (level && !shared)
            /* the layout pass carried NHWC into the pool: no Transpose of the 8-bit map */
            g_assert_cmpuint (count_op (og, "NhwcQLinearConv"), ==, 1);
          OwbTensor *x = float_tensor (4, xd, r, -2, 2);
          const char *names[] = { "x" };
          OwbTensor *ya[2] = { NULL }, *yb[2] = { NULL };
          guint n_out = shared ? 2 : 1;
          g_assert_true (owb_session_run (plain, 1, names, &x, n_out, NULL, ya, NULL, NULL, NULL));
          g_assert_true (owb_session_run (opt, 1, names, &x, n_out, NULL, yb, NULL, NULL, NULL));
          g_assert_cmpint (ya[0]->nelems, ==, 2 * C);
          int64_t differ = count_step_differences (ya[0], yb[0], 0.013 * 1.0001);
          g_assert_cmpint (differ, <=, 2);
          for (guint i = 0; i < n_out; i++)
            owb_tensor_unref (ya[i]), owb_tensor_unref (yb[i]);
          owb_tensor_unref (x);
          owb_session_free (opt);
        }
      owb_session_free (plain);
      owb_model_unref (m);
    }
  g_rand_free (r);
}

/* ---- fuse_qdq_conv on Gemm ---- */

/* x [M, K] -> Q -> DQ -> Gemm (W: DQ of a constant [N, K] with transB, else [K, N]; C: DQ of int32
 * at x_scale w_scale) -> Q -> DQ -> y, as ONNX Runtime's QDQ classifier heads. */
static OwbModel *
build_gemm (gboolean trans_b, gboolean per_channel, gboolean bias, int64_t M, int64_t K, int64_t N, GRand *r)
{
  OwbModel *m = qdq_model_new (13, 2, (int64_t[]) { M, K });
  OwbGraph *g = m->graph;
  float xs = 4.0f / 255;
  owb_graph_add_initializer (g, "xs", scalar (OWB_TYPE_FLOAT, xs));
  owb_graph_add_initializer (g, "xz", scalar (OWB_TYPE_UINT8, 120));
  owb_graph_add_initializer (g, "ys", scalar (OWB_TYPE_FLOAT, 0.04));
  owb_graph_add_initializer (g, "yz", scalar (OWB_TYPE_UINT8, 128));
  int64_t np = per_channel ? N : 1;
  OwbTensor *ws = float_tensor (per_channel ? 1 : 0, &np, r, 0.002, 0.01);
  owb_graph_add_initializer (g, "ws", ws);
  owb_graph_add_initializer (g, "wz", owb_tensor_new (OWB_TYPE_INT8, per_channel ? 1 : 0, &np, NULL));
  owb_graph_add_initializer (g, "wq", int8_tensor (OWB_TYPE_INT8, 2, trans_b ? (int64_t[]) { N, K } : (int64_t[]) { K, N }, r));
  tu_node (g, "QuantizeLinear", "qx", "x,xs,xz", "xq");
  tu_node (g, "DequantizeLinear", "dqx", "xq,xs,xz", "xd");
  OwbNode *dqw = tu_node (g, "DequantizeLinear", "dqw", "wq,ws,wz", "wd");
  if (per_channel)
    owb_node_add_attribute (dqw, "axis", OWB_ATTR_INT)->i = trans_b ? 0 : 1;
  if (bias)
    {
      OwbTensor *b = owb_tensor_new (OWB_TYPE_INT32, 1, &N, NULL), *bs = owb_tensor_new (OWB_TYPE_FLOAT, 1, &N, NULL);
      for (int64_t i = 0; i < N; i++)
        {
          ((int32_t *) b->data)[i] = g_rand_int_range (r, -3000, 3000);
          ((float *) bs->data)[i] = xs * ((float *) ws->data)[per_channel ? i : 0];
        }
      owb_graph_add_initializer (g, "bq", b);
      owb_graph_add_initializer (g, "bs", bs);
      owb_node_add_attribute (tu_node (g, "DequantizeLinear", "dqb", "bq,bs", "bd"), "axis", OWB_ATTR_INT)->i = 0;
    }
  OwbNode *gemm = tu_node (g, "Gemm", "gemm", bias ? "xd,wd,bd" : "xd,wd", "c");
  owb_node_add_attribute (gemm, "transB", OWB_ATTR_INT)->i = trans_b;
  tu_node (g, "QuantizeLinear", "qy", "c,ys,yz", "yq");
  tu_node (g, "DequantizeLinear", "dqy", "yq,ys,yz", "y");
  g_assert_true (owb_model_validate (m, NULL));
  return m;
}

/* Every variant becomes Reshape -> QLinearConv -> Reshape (at extended and at all, where the
 * layout pass may make it channels-last), its outputs within a step of the unoptimized model's;
 * a Gemm with alpha stays, with a near miss. */
static void
test_fuse_qdq_gemm (void)
{
  GRand *r = g_rand_new_with_seed (41);
  int64_t K = 70, N = 37;
  for (int variant = 0; variant < 4; variant++)
    {
      gboolean trans_b = variant != 1, per_channel = variant != 2, bias = variant != 3;
      int64_t M = variant == 0 ? 1 : 9;
      OwbModel *m = build_gemm (trans_b, per_channel, bias, M, K, N, r);
      OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
      for (int level = 0; level < 2; level++)
        {
          OwbSession *opt = session_at (m, level ? OWB_OPTIMIZE_ALL : OWB_OPTIMIZE_EXTENDED, 1 + variant % 2);
          const OwbGraph *g = owb_session_get_graph (opt);
          g_assert_cmpuint (count_op (g, "Gemm"), ==, 0);
          g_assert_cmpuint (count_op (g, "QLinearConv") + count_op (g, "NhwcQLinearConv"), ==, 1);
          const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (opt), "fuse_qdq_conv");
          g_assert_cmpuint (p->created->len, ==, 3);
          g_assert_cmpuint (p->near_misses->len, ==, 0);
          OwbTensor *x = float_tensor (2, (int64_t[]) { M, K }, r, -2, 2);
          const char *names[] = { "x" };
          OwbTensor *ya = NULL, *yb = NULL;
          g_assert_true (owb_session_run (plain, 1, names, &x, 1, NULL, &ya, NULL, NULL, NULL));
          g_assert_true (owb_session_run (opt, 1, names, &x, 1, NULL, &yb, NULL, NULL, NULL));
          int64_t differ = count_step_differences (ya, yb, 0.04 * 1.0001);
          g_assert_cmpint (differ, <=, MAX (2, ya->nelems / 100));
          owb_tensor_unref (x), owb_tensor_unref (ya), owb_tensor_unref (yb);
          owb_session_free (opt);
        }
      owb_session_free (plain);
      owb_model_unref (m);
    }
  /* alpha 2: kept */
  OwbModel *m = build_gemm (TRUE, TRUE, TRUE, 3, K, N, r);
  for (guint i = 0; i < m->graph->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (m->graph->nodes, i);
      if (strcmp (n->op_type, "Gemm") == 0)
        owb_node_add_attribute (n, "alpha", OWB_ATTR_FLOAT)->f = 2.0f;
    }
  OwbSession *opt = session_at (m, OWB_OPTIMIZE_EXTENDED, 1);
  g_assert_cmpuint (count_op (owb_session_get_graph (opt), "Gemm"), ==, 1);
  const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (opt), "fuse_qdq_conv");
  g_assert_cmpuint (p->near_misses->len, ==, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (p->near_misses, 0), "alpha"));
  owb_session_free (opt);
  owb_model_unref (m);
  g_rand_free (r);
}

/* ---- fuse_dynamic_quant_matmul ---- */

typedef struct {
  gboolean weight_unsigned, per_column, bias, swapped, shared, dynamic_weight, no_a_zp, residual, cast_output;
} DynVariant;

/* What onnxruntime's quantize_dynamic writes for x [2, M, K] -> MatMul (constant W) [-> Add bias]:
 * DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul (Mul (x_scale, w_scale)) [-> Add]. swapped:
 * the Muls' and the Add's operands the other way round. shared: a second MatMulInteger (with its own
 * weight) reads the same DynamicQuantizeLinear. residual: the product goes into an Add of x, not
 * a bias. cast_output: the Cast's output is also a graph output. */
static OwbModel *
build_dynamic (const DynVariant *v, int64_t M, int64_t K, int64_t N, GRand *r)
{
  OwbModel *m = tu_model_new (13);
  OwbGraph *g = m->graph;
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, M, K }, NULL);
  OwbDataType wt = v->weight_unsigned ? OWB_TYPE_UINT8 : OWB_TYPE_INT8;
  int64_t np = v->per_column ? N : 1;
  for (int w = 0; w < 1 + v->shared; w++)
    {
      g_autofree char *wq = g_strdup_printf ("w%d_q", w), *ws = g_strdup_printf ("w%d_scale", w);
      g_autofree char *wz = g_strdup_printf ("w%d_zp", w), *bias = g_strdup_printf ("bias%d", w);
      owb_graph_add_initializer (g, ws, float_tensor (v->per_column ? 1 : 0, &np, r, 0.002, 0.01));
      OwbTensor *wzp = owb_tensor_new (wt, v->per_column ? 1 : 0, &np, NULL);
      for (int64_t i = 0; i < wzp->nelems; i++)
        ((uint8_t *) wzp->data)[i] = v->weight_unsigned ? (uint8_t) g_rand_int_range (r, 100, 160) : 0;
      owb_graph_add_initializer (g, wz, wzp);
      if (v->dynamic_weight)
        tu_add_value (g->inputs, wq, wt, 2, (int64_t[]) { K, N }, NULL);
      else
        owb_graph_add_initializer (g, wq, int8_tensor (wt, 2, (int64_t[]) { K, N }, r));
      owb_graph_add_initializer (g, bias, float_tensor (1, &N, r, -1, 1));
    }
  tu_node (g, "DynamicQuantizeLinear", "dql", "x", "x_q,x_scale,x_zp");
  for (int w = 0; w < 1 + v->shared; w++)
    {
      g_autofree char *name = g_strdup_printf ("mmi%d", w), *ins = NULL, *out = g_strdup_printf ("y%d", w);
      ins = g_strdup_printf (v->no_a_zp ? "x_q,w%d_q" : "x_q,w%d_q,x_zp,w%d_zp", w, w);
      g_autofree char *acc = g_strdup_printf ("acc%d", w), *accf = g_strdup_printf ("accf%d", w);
      g_autofree char *sc = g_strdup_printf ("scale%d", w), *prod = g_strdup_printf ("prod%d", w);
      g_autofree char *smul_in = g_strdup_printf (v->swapped ? "w%d_scale,x_scale" : "x_scale,w%d_scale", w);
      g_autofree char *mul_in = g_strdup_printf ("%s,%s", v->swapped ? sc : accf, v->swapped ? accf : sc);
      g_autofree char *add_in = v->residual ? g_strdup_printf ("%s,x", prod)
                                : v->swapped  ? g_strdup_printf ("bias%d,%s", w, prod)
                                              : g_strdup_printf ("%s,bias%d", prod, w);
      tu_node (g, "MatMulInteger", name, ins, acc);
      g_autofree char *cname = g_strdup_printf ("cast%d", w), *sname = g_strdup_printf ("scale_mul%d", w);
      g_autofree char *mname = g_strdup_printf ("mul%d", w), *aname = g_strdup_printf ("add%d", w);
      OwbNode *cast = tu_node (g, "Cast", cname, acc, accf);
      owb_node_add_attribute (cast, "to", OWB_ATTR_INT)->i = OWB_TYPE_FLOAT;
      tu_node (g, "Mul", sname, smul_in, sc);
      tu_node (g, "Mul", mname, mul_in, v->bias || v->residual ? prod : out);
      if (v->bias || v->residual)
        tu_node (g, "Add", aname, add_in, out);
      tu_add_untyped_output (g->outputs, out);
      if (v->cast_output)
        {
          tu_add_untyped_output (g->outputs, accf);
        }
    }
  g_assert_true (owb_model_validate (m, NULL));
  return m;
}

/* Both sessions on the same x (and weights where they are inputs): every output equal to the bit. */
static void
compare_dynamic (OwbSession *plain, OwbSession *opt, int64_t M, int64_t K, int64_t N, GRand *r, gboolean dynamic_weight)
{
  OwbTensor *x = float_tensor (3, (int64_t[]) { 2, M, K }, r, -2, 3);
  OwbTensor *w = dynamic_weight ? int8_tensor (OWB_TYPE_INT8, 2, (int64_t[]) { K, N }, r) : NULL;
  const char *names[2] = { "x", "w0_q" };
  OwbTensor *feeds[2] = { x, w };
  guint n_out = owb_session_get_n_outputs (plain);
  g_assert_cmpuint (n_out, ==, owb_session_get_n_outputs (opt));
  OwbTensor *want[4] = { NULL }, *got[4] = { NULL };
  GError *error = NULL;
  g_assert_true (owb_session_run (plain, w ? 2 : 1, names, feeds, n_out, NULL, want, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (owb_session_run (opt, w ? 2 : 1, names, feeds, n_out, NULL, got, NULL, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < n_out; i++)
    {
      g_assert_cmpint (got[i]->dtype, ==, OWB_TYPE_FLOAT);
      g_assert_true (owb_tensor_same_shape (got[i], want[i]));
      g_assert_cmpint (memcmp (got[i]->data, want[i]->data, want[i]->nbytes), ==, 0);
      owb_tensor_unref (want[i]), owb_tensor_unref (got[i]);
    }
  owb_tensor_unref (x);
  if (w)
    owb_tensor_unref (w);
}

static void
test_fuse_dynamic_quant_matmul (void)
{
  static const DynVariant variants[] = {
    { FALSE, FALSE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE, FALSE }, /* quantize_dynamic's default: s8 per tensor, bias */
    { FALSE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE, FALSE },  /* per_channel=True */
    { TRUE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE, FALSE, FALSE },  /* u8 weights with zero points, no bias */
    { FALSE, TRUE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE },   /* operands the other way round */
    { FALSE, FALSE, TRUE, FALSE, TRUE, FALSE, FALSE, FALSE, FALSE },  /* two MatMulIntegers on one DynamicQuantizeLinear */
    { FALSE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE, TRUE, FALSE },  /* a residual Add after: not a bias */
  };
  GRand *r = g_rand_new_with_seed (31);
  int64_t M = 19, K = 70, N = 45;
  for (guint vi = 0; vi < G_N_ELEMENTS (variants); vi++)
    {
      const DynVariant *v = &variants[vi];
      if (v->residual)
        N = K; /* the residual adds x */
      OwbModel *m = build_dynamic (v, M, K, N, r);
      OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
      OwbSession *opt = session_at (m, OWB_OPTIMIZE_EXTENDED, 2);
      const OwbGraph *g = owb_session_get_graph (opt);
      guint n = 1 + v->shared;
      g_assert_cmpuint (count_op (g, "DynamicQuantizeMatMul"), ==, n);
      g_assert_cmpuint (count_op (g, "MatMulInteger"), ==, 0);
      g_assert_cmpuint (count_op (g, "DynamicQuantizeLinear"), ==, 0);
      g_assert_cmpuint (count_op (g, "Cast"), ==, 0);
      g_assert_cmpuint (count_op (g, "Mul"), ==, 0);
      g_assert_cmpuint (count_op (g, "Add"), ==, v->residual ? 1 : 0);
      const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (opt), "fuse_dynamic_quant_matmul");
      g_assert_cmpuint (p->created->len, ==, n);
      g_assert_cmpuint (p->near_misses->len, ==, 0);
      const OwbOptimizeCreated *c = g_ptr_array_index (p->created, 0);
      g_assert_cmpstr (c->op_type, ==, "DynamicQuantizeMatMul");
      g_assert_cmpstr (c->node, ==, "mmi0"); /* under the MatMulInteger's name */
      g_assert_cmpuint (c->from->len, ==, v->bias ? 6 : 5);
      g_assert_cmpstr (g_ptr_array_index (c->from, 0), ==, "dql");
      g_assert_cmpstr (g_ptr_array_index (c->from, 2), ==, "mmi0");
      compare_dynamic (plain, opt, M, K, N, r, FALSE);
      owb_session_free (plain);
      owb_session_free (opt);
      owb_model_unref (m);
    }
  g_rand_free (r);
}

/* Not fired, with the reason: a weight that is a graph input, a MatMulInteger that leaves out the
 * activation's zero point, a Cast whose output is also a graph output. Outputs unchanged. */
static void
test_fuse_dynamic_quant_matmul_near_misses (void)
{
  static const struct {
    DynVariant v;
    const char *why;
  } cases[] = {
    { { FALSE, FALSE, TRUE, FALSE, FALSE, TRUE, FALSE, FALSE, FALSE }, "not a constant int8 or uint8 matrix" },
    { { FALSE, FALSE, TRUE, FALSE, FALSE, FALSE, TRUE, FALSE, FALSE }, "without its zero point" },
    { { FALSE, FALSE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE, TRUE }, "not read by one Mul only" },
  };
  GRand *r = g_rand_new_with_seed (32);
  int64_t M = 6, K = 20, N = 9;
  for (guint ci = 0; ci < G_N_ELEMENTS (cases); ci++)
    {
      OwbModel *m = build_dynamic (&cases[ci].v, M, K, N, r);
      OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1);
      OwbSession *opt = session_at (m, OWB_OPTIMIZE_EXTENDED, 1);
      g_assert_cmpuint (count_op (owb_session_get_graph (opt), "DynamicQuantizeMatMul"), ==, 0);
      g_assert_cmpuint (count_op (owb_session_get_graph (opt), "MatMulInteger"), ==, 1);
      const OwbPassReport *p = get_pass_report (owb_session_get_optimize_report (opt), "fuse_dynamic_quant_matmul");
      g_assert_cmpuint (p->near_misses->len, ==, 1);
      if (!strstr (g_ptr_array_index (p->near_misses, 0), cases[ci].why))
        g_error ("case %u: near miss '%s', want '%s'", ci, (const char *) g_ptr_array_index (p->near_misses, 0), cases[ci].why);
      compare_dynamic (plain, opt, M, K, N, r, cases[ci].v.dynamic_weight);
      owb_session_free (plain);
      owb_session_free (opt);
      owb_model_unref (m);
    }
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/optimizer/fuse-qdq-matmul", test_fuse_qdq_matmul);
  g_test_add_func ("/optimizer/fuse-qdq-matmul/near-misses", test_fuse_qdq_matmul_near_misses);
  g_test_add_func ("/optimizer/fold-dequantized-weights", test_fold_dequantized_weights);
  g_test_add_func ("/optimizer/fuse-qdq-conv", test_fuse_qdq_conv);
  g_test_add_func ("/optimizer/fuse-qdq-conv/near-misses", test_fuse_qdq_conv_near_misses);
  g_test_add_func ("/optimizer/fuse-qdq-lookup", test_fuse_qdq_lookup);
  g_test_add_func ("/optimizer/fuse-qdq-lookup/binary", test_fuse_qdq_binary);
  g_test_add_func ("/optimizer/fuse-qconv-lookup", test_fuse_qconv_lookup);
  g_test_add_func ("/optimizer/fuse-qdq-lookup/pair", test_fuse_qdq_lookup_pair);
  g_test_add_func ("/optimizer/fuse-qdq-lookup/maxpool", test_fuse_qdq_maxpool);
  g_test_add_func ("/optimizer/fuse-qdq-lookup/moves-bytes", test_fuse_qdq_moves_bytes);
  g_test_add_func ("/optimizer/fuse-qdq-lookup/global-average-pool", test_fuse_qdq_global_average_pool);
  g_test_add_func ("/optimizer/fuse-qdq-conv/gemm", test_fuse_qdq_gemm);
  g_test_add_func ("/optimizer/fuse-dynamic-quant-matmul", test_fuse_dynamic_quant_matmul);
  g_test_add_func ("/optimizer/fuse-dynamic-quant-matmul/near-misses", test_fuse_dynamic_quant_matmul_near_misses);
  return g_test_run ();
}
