/* test-kernels-quant.c: inference and CPU kernels of the quantization ops on what the ONNX conformance
 * cases leave out: symbolic dims, bad attributes and shapes, every float8 code, large multi-threaded
 * runs against naive references, per-row/per-channel parameters. */
#include <math.h>
#include <string.h>

#include "../engine/test-util.h"
#include "kernel-test-util.h"

/* ---- inference ---- */

#define DIMS(...) ((const char *const[]) { __VA_ARGS__ })
#define SCALAR(dtype) vt ((dtype), 0, NULL)

static void
test_infer_quantize (void)
{
  g_autoptr (OwbNode) q = node_new ("QuantizeLinear", 3, 1);
  OwbValueType t[3] = { vt (OWB_TYPE_FLOAT, 3, DIMS ("batch", "3", "?")), vt (OWB_TYPE_FLOAT, 1, DIMS ("3")),
                        vt (OWB_TYPE_INT8, 1, DIMS ("3")) };
  assert_infers (q, 13, t, NULL, "int8[batch,3,?]");
  /* The scale must match the axis (default 1). */
  t[1] = vt (OWB_TYPE_FLOAT, 1, DIMS ("4"));
  t[2] = vt (OWB_TYPE_INT8, 1, DIMS ("4"));
  assert_infer_fails (q, 13, t, NULL, "axis 1 has size 3");
  /* Per-axis needs opset 13. */
  t[1] = vt (OWB_TYPE_FLOAT, 1, DIMS ("3"));
  t[2] = vt (OWB_TYPE_INT8, 1, DIMS ("3"));
  assert_infer_fails (q, 10, t, NULL, "scalar before opset 13");
  /* Zero point and scale shapes must agree. */
  t[2] = SCALAR (OWB_TYPE_INT8);
  assert_infer_fails (q, 13, t, NULL, "must have the shape");
  /* A one-element scale is per tensor whatever the axis. */
  t[1] = vt (OWB_TYPE_FLOAT, 1, DIMS ("1"));
  t[2] = vt (OWB_TYPE_UINT16, 1, DIMS ("1"));
  assert_infers (q, 21, t, NULL, "uint16[batch,3,?]");

  /* No zero point: uint8, or output_dtype. */
  g_autoptr (OwbNode) q2 = node_new ("QuantizeLinear", 2, 1);
  OwbValueType u[2] = { vt (OWB_TYPE_FLOAT16, 2, DIMS ("n", "8")), SCALAR (OWB_TYPE_FLOAT16) };
  assert_infers (q2, 19, u, NULL, "uint8[n,8]");
  tu_set_int (q2, "output_dtype", OWB_TYPE_INT4);
  assert_infers (q2, 21, u, NULL, "int4[n,8]");
  /* output_dtype does not exist before opset 21. */
  assert_infers (q2, 19, u, NULL, "uint8[n,8]");

  g_autoptr (OwbNode) q3 = node_new ("QuantizeLinear", 3, 1);
  tu_set_int (q3, "output_dtype", OWB_TYPE_INT4);
  OwbValueType w[3] = { vt (OWB_TYPE_FLOAT, 1, DIMS ("8")), SCALAR (OWB_TYPE_FLOAT), SCALAR (OWB_TYPE_UINT8) };
  assert_infer_fails (q3, 21, w, NULL, "differs from y_zero_point");

  g_autoptr (OwbNode) q4 = node_new ("QuantizeLinear", 2, 1);
  tu_set_int (q4, "output_dtype", OWB_TYPE_FLOAT);
  assert_infer_fails (q4, 21, w, NULL, "not a quantized type");
  g_autoptr (OwbNode) q5 = node_new ("QuantizeLinear", 2, 1);
  tu_set_int (q5, "precision", OWB_TYPE_INT8);
  assert_infer_fails (q5, 23, w, NULL, "precision");
  OwbValueType bad_x[2] = { vt (OWB_TYPE_INT8, 1, DIMS ("8")), SCALAR (OWB_TYPE_FLOAT) };
  assert_infer_fails (q2, 21, bad_x, NULL, "input x of type int8");

  /* A required input written as "". */
  g_autoptr (OwbNode) q6 = node_new ("QuantizeLinear", 2, 1);
  g_free (q6->inputs[1]);
  q6->inputs[1] = g_strdup ("");
  assert_infer_fails (q6, 21, w, NULL, "required");
}

static void
test_infer_blocked (void)
{
  g_autoptr (OwbNode) q = node_new ("DequantizeLinear", 3, 1);
  tu_set_int (q, "axis", -1);
  tu_set_int (q, "block_size", 4);
  OwbValueType t[3] = { vt (OWB_TYPE_INT4, 3, DIMS ("b", "6", "10")), vt (OWB_TYPE_FLOAT, 3, DIMS ("b", "6", "3")),
                        vt (OWB_TYPE_INT4, 3, DIMS ("b", "6", "3")) };
  assert_infers (q, 21, t, NULL, "float32[b,6,10]");
  t[1] = vt (OWB_TYPE_FLOAT, 3, DIMS ("b", "6", "2"));
  t[2] = vt (OWB_TYPE_INT4, 3, DIMS ("b", "6", "2"));
  assert_infer_fails (q, 21, t, NULL, "expected 3");
  t[1] = vt (OWB_TYPE_FLOAT, 2, DIMS ("6", "3"));
  t[2] = vt (OWB_TYPE_INT4, 2, DIMS ("6", "3"));
  assert_infer_fails (q, 21, t, NULL, "rank");

  g_autoptr (OwbNode) neg = node_new ("DequantizeLinear", 2, 1);
  tu_set_int (neg, "block_size", -2);
  assert_infer_fails (neg, 21, t, NULL, "block_size");
  g_autoptr (OwbNode) axis = node_new ("DequantizeLinear", 2, 1);
  tu_set_int (axis, "axis", 5);
  OwbValueType u[2] = { vt (OWB_TYPE_INT8, 2, DIMS ("4", "5")), vt (OWB_TYPE_FLOAT, 1, DIMS ("5")) };
  assert_infer_fails (axis, 13, u, NULL, "axis");
  /* Without block_size a 2-D scale is refused. */
  g_autoptr (OwbNode) plain = node_new ("DequantizeLinear", 2, 1);
  OwbValueType v[2] = { vt (OWB_TYPE_INT8, 2, DIMS ("4", "5")), vt (OWB_TYPE_FLOAT, 2, DIMS ("4", "5")) };
  assert_infer_fails (plain, 21, v, NULL, "1-D");
}

static void
test_infer_dequantize_types (void)
{
  g_autoptr (OwbNode) d = node_new ("DequantizeLinear", 3, 1);
  OwbValueType t[3] = { vt (OWB_TYPE_FLOAT8E4M3FN, 1, DIMS ("n")), SCALAR (OWB_TYPE_FLOAT16),
                        SCALAR (OWB_TYPE_FLOAT8E4M3FN) };
  assert_infers (d, 19, t, NULL, "float16[n]");
  t[2] = SCALAR (OWB_TYPE_INT8);
  assert_infer_fails (d, 19, t, NULL, "must have x's type");
  g_autoptr (OwbNode) e8 = node_new ("DequantizeLinear", 2, 1);
  OwbValueType u[2] = { vt (OWB_TYPE_UINT4, 1, DIMS ("n")), SCALAR (OWB_TYPE_FLOAT8E8M0) };
  assert_infer_fails (e8, 25, u, NULL, "output_dtype");
  tu_set_int (e8, "output_dtype", OWB_TYPE_BFLOAT16);
  assert_infers (e8, 25, u, NULL, "bfloat16[n]");
  g_autoptr (OwbNode) bad = node_new ("DequantizeLinear", 2, 1);
  tu_set_int (bad, "output_dtype", OWB_TYPE_INT8);
  assert_infer_fails (bad, 23, u, NULL, "output_dtype");
  /* one type per input of d (three): reading past a shorter array was an overflow under ASan */
  OwbValueType f[3] = { vt (OWB_TYPE_FLOAT, 1, DIMS ("n")), SCALAR (OWB_TYPE_FLOAT), SCALAR (OWB_TYPE_FLOAT) };
  assert_infer_fails (d, 23, f, NULL, "not a quantized type");

  g_autoptr (OwbNode) dyn = node_new ("DynamicQuantizeLinear", 1, 3);
  OwbValueType x = vt (OWB_TYPE_FLOAT, 2, DIMS ("batch", "7")), out[3];
  g_autoptr (GError) error = NULL;
  g_assert_true (infer_node (dyn, 11, &x, NULL, out, &error));
  assert_type (&out[0], "uint8[batch,7]");
  assert_type (&out[1], "float32[]");
  assert_type (&out[2], "uint8[]");
}

static void
test_infer_qlinear (void)
{
  g_autoptr (OwbNode) mm = node_new ("QLinearMatMul", 8, 1);
  OwbValueType t[8] = { vt (OWB_TYPE_UINT8, 3, DIMS ("batch", "seq", "64")), SCALAR (OWB_TYPE_FLOAT),
                        SCALAR (OWB_TYPE_UINT8), vt (OWB_TYPE_INT8, 2, DIMS ("64", "32")),
                        SCALAR (OWB_TYPE_FLOAT), SCALAR (OWB_TYPE_INT8), SCALAR (OWB_TYPE_FLOAT),
                        SCALAR (OWB_TYPE_INT8) };
  assert_infers (mm, 10, t, NULL, "int8[batch,seq,32]");
  t[3] = vt (OWB_TYPE_INT8, 4, DIMS ("1", "4", "64", "32"));
  assert_infers (mm, 10, t, NULL, "int8[1,4,seq,32]");
  t[3] = vt (OWB_TYPE_INT8, 1, DIMS ("64"));
  assert_infers (mm, 10, t, NULL, "int8[batch,seq]");
  t[3] = vt (OWB_TYPE_INT8, 2, DIMS ("63", "32"));
  assert_infer_fails (mm, 10, t, NULL, "columns");
  t[3] = vt (OWB_TYPE_INT8, 2, DIMS ("64", "32"));
  t[5] = SCALAR (OWB_TYPE_UINT8);
  assert_infer_fails (mm, 10, t, NULL, "b_zero_point");
  t[5] = SCALAR (OWB_TYPE_INT8);
  t[1] = SCALAR (OWB_TYPE_FLOAT16);
  assert_infer_fails (mm, 10, t, NULL, "a_scale");
  assert_infers (mm, 21, t, NULL, "int8[batch,seq,32]");
  t[0] = vt (OWB_TYPE_FLOAT8E4M3FN, 2, DIMS ("2", "64"));
  t[2] = SCALAR (OWB_TYPE_FLOAT8E4M3FN);
  assert_infer_fails (mm, 10, t, NULL, "float8e4m3fn");
  assert_infers (mm, 21, t, NULL, "int8[2,32]");

  g_autoptr (OwbNode) conv = node_new ("QLinearConv", 9, 1);
  tu_set_ints (conv, "pads", 4, (int64_t[]) { 1, 1, 1, 1 });
  tu_set_ints (conv, "strides", 2, (int64_t[]) { 2, 2 });
  OwbValueType c[9] = { vt (OWB_TYPE_UINT8, 4, DIMS ("N", "8", "32", "?")), SCALAR (OWB_TYPE_FLOAT),
                        SCALAR (OWB_TYPE_UINT8), vt (OWB_TYPE_INT8, 4, DIMS ("16", "8", "3", "3")),
                        vt (OWB_TYPE_FLOAT, 1, DIMS ("16")), vt (OWB_TYPE_INT8, 1, DIMS ("16")),
                        SCALAR (OWB_TYPE_FLOAT), SCALAR (OWB_TYPE_UINT8), vt (OWB_TYPE_INT32, 1, DIMS ("16")) };
  assert_infers (conv, 10, c, NULL, "uint8[N,16,16,?]");
  c[8] = vt (OWB_TYPE_INT32, 1, DIMS ("15"));
  assert_infer_fails (conv, 10, c, NULL, "bias");
  c[8] = vt (OWB_TYPE_FLOAT, 1, DIMS ("16"));
  assert_infer_fails (conv, 10, c, NULL, "int32");
  c[8] = vt (OWB_TYPE_INT32, 1, DIMS ("16"));
  c[3] = vt (OWB_TYPE_INT8, 4, DIMS ("16", "4", "3", "3"));
  assert_infer_fails (conv, 10, c, NULL, "channels");

  g_autoptr (OwbNode) grouped = node_new ("QLinearConv", 8, 1);
  tu_set_int (grouped, "group", 2);
  tu_set_string (grouped, "auto_pad", "SAME_UPPER");
  assert_infers (grouped, 10, c, NULL, "uint8[N,16,32,?]");
  g_autoptr (OwbNode) badpad = node_new ("QLinearConv", 8, 1);
  tu_set_string (badpad, "auto_pad", "SOMETIMES");
  assert_infer_fails (badpad, 10, c, NULL, "auto_pad");
  g_autoptr (OwbNode) badgroup = node_new ("QLinearConv", 8, 1);
  tu_set_int (badgroup, "group", 0);
  assert_infer_fails (badgroup, 10, c, NULL, "group");
  g_autoptr (OwbNode) badstride = node_new ("QLinearConv", 8, 1);
  tu_set_ints (badstride, "strides", 2, (int64_t[]) { 0, 1 });
  assert_infer_fails (badstride, 10, c, NULL, "strides");
}

/* ---- running single-node models ---- */

/* A model of one node reading graph inputs i0.. (NULL entries become "" inputs) and writing y0... */
static OwbModel *
single_node_model (int opset, const char *op, int n_in, OwbTensor *const *inputs, int n_out, OwbNode **node)
{
  OwbModel *m = tu_model_new (opset);
  g_autofree char *ins = tu_add_indexed_inputs (m->graph, n_in, inputs, 0);
  GString *outs = g_string_new (NULL);
  for (int o = 0; o < n_out; o++)
    {
      g_autofree char *name = g_strdup_printf ("y%d", o);
      g_string_append_printf (outs, "%s%s", o ? "," : "", name);
      tu_add_untyped_output (m->graph->outputs, name);
    }
  *node = tu_node (m->graph, op, "node", ins, outs->str);
  g_string_free (outs, TRUE);
  return m;
}

static gboolean
run_model (OwbModel *m, int n_in, OwbTensor *const *inputs, int n_out, OwbTensor **outs, int threads, GError **error)
{
  g_autoptr (OwbSession) s = tu_session (m, threads, error);
  static const char *const out_names[3] = { "y0", "y1", "y2" };
  return s && tu_run_indexed (s, n_in, inputs, 0, n_out, out_names, outs, error);
}

static void
unref_all (int n, OwbTensor **t)
{
  for (int i = 0; i < n; i++)
    if (t[i])
      owb_tensor_unref (t[i]);
}

/* Quantize with a 3-D per-axis and a blocked layout on enough elements to be split over threads,
 * against a naive loop with round-half-to-even. */
static void
test_quantize_threads (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  int64_t dims[3] = { 5, 37, 301 };
  OwbTensor *x = tu_new_tensor (OWB_TYPE_FLOAT, 3, dims, NULL);
  float *xd = x->data;
  for (int64_t i = 0; i < x->nelems; i++)
    xd[i] = (float) (g_rand_int_range (rand, -4000, 4000) / 8.0); /* many exact .5 ties */
  /* Blocked along axis 2 with block 16 (a remainder block of 13). */
  int64_t nb = (301 + 15) / 16, sdims[3] = { 5, 37, nb };
  OwbTensor *scale = tu_new_tensor (OWB_TYPE_FLOAT, 3, sdims, NULL), *zp = tu_new_tensor (OWB_TYPE_INT8, 3, sdims, NULL);
  for (int64_t i = 0; i < scale->nelems; i++)
    {
      ((float *) scale->data)[i] = (float) g_rand_int_range (rand, 1, 8) * 0.25f;
      ((int8_t *) zp->data)[i] = (int8_t) g_rand_int_range (rand, -10, 10);
    }
  OwbTensor *in[3] = { x, scale, zp };
  OwbNode *node;
  g_autoptr (OwbModel) m = single_node_model (21, "QuantizeLinear", 3, in, 1, &node);
  tu_set_int (node, "axis", 2);
  tu_set_int (node, "block_size", 16);
  OwbTensor *y = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (run_model (m, 3, in, 1, &y, 4, &error));
  g_assert_no_error (error);
  g_assert_cmpint (y->dtype, ==, OWB_TYPE_INT8);
  for (int64_t i = 0; i < x->nelems; i++)
    {
      int64_t row = i / 301, c = i % 301, si = row * nb + c / 16;
      double q = nearbyint ((float) (xd[i] / ((float *) scale->data)[si])) + ((int8_t *) zp->data)[si];
      q = CLAMP (q, -128, 127);
      if (((int8_t *) y->data)[i] != (int8_t) q)
        g_error ("element %" G_GINT64_FORMAT ": got %d, want %d", i, ((int8_t *) y->data)[i], (int) q);
    }
  owb_tensor_unref (y);
  unref_all (3, in);
}

/* Ties go to the even neighbour, saturation clamps, and NaN lands at the low end. */
static void
test_quantize_rounding (void)
{
  float xs[] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 1e20f, -1e20f, NAN, INFINITY, -INFINITY };
  int8_t want[] = { 0, 2, 2, 0, -2, -2, 127, -128, -128, 127, -128 };
  OwbTensor *in[2] = { tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { G_N_ELEMENTS (xs) }, xs),
                       tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 1.0f }) };
  OwbNode *node;
  g_autoptr (OwbModel) m = single_node_model (21, "QuantizeLinear", 2, in, 1, &node);
  tu_set_int (node, "output_dtype", OWB_TYPE_INT8);
  OwbTensor *y = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (run_model (m, 2, in, 1, &y, 1, &error));
  g_assert_cmpmem (y->data, y->nbytes, want, sizeof want);
  owb_tensor_unref (y);
  unref_all (2, in);
}

/* Every finite float8 code dequantizes and quantizes back to itself (NaNs to the format's NaN), and values
 * out of range saturate or become NaN/infinity as `saturate` says. */
static void
test_float8_codes (void)
{
  const OwbDataType types[] = { OWB_TYPE_FLOAT8E4M3FN, OWB_TYPE_FLOAT8E4M3FNUZ, OWB_TYPE_FLOAT8E5M2,
                                OWB_TYPE_FLOAT8E5M2FNUZ };
  const double maxima[] = { 448, 240, 57344, 57344 };
  for (guint t = 0; t < G_N_ELEMENTS (types); t++)
    {
      uint8_t codes[256];
      for (int i = 0; i < 256; i++)
        codes[i] = (uint8_t) i;
      OwbTensor *din[2] = { tu_new_tensor (types[t], 1, (int64_t[]) { 256 }, codes),
                            tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 1.0f }) };
      OwbNode *node;
      g_autoptr (OwbModel) dm = single_node_model (19, "DequantizeLinear", 2, din, 1, &node);
      OwbTensor *f = NULL;
      g_autoptr (GError) error = NULL;
      g_assert_true (run_model (dm, 2, din, 1, &f, 1, &error));
      g_assert_no_error (error);
      const float *fv = f->data;
      double top = 0;
      for (int i = 0; i < 256; i++)
        if (isfinite (fv[i]))
          top = MAX (top, fabs (fv[i]));
      g_assert_cmpfloat (top, ==, maxima[t]);
      g_assert_cmpfloat (fv[0x01] * fv[0x01], >, 0); /* smallest subnormal is not zero */

      OwbTensor *qin[3] = { owb_tensor_ref (f), tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 1.0f }),
                            tu_new_tensor (types[t], 0, NULL, NULL) };
      g_autoptr (OwbModel) qm = single_node_model (19, "QuantizeLinear", 3, qin, 1, &node);
      OwbTensor *back = NULL;
      g_assert_true (run_model (qm, 3, qin, 1, &back, 1, &error));
      const uint8_t *bv = back->data;
      for (int i = 0; i < 256; i++)
        {
          if (isnan (fv[i]))
            g_assert_true (isnan (fv[bv[i]]));
          else if (isinf (fv[i])) /* saturate is on by default */
            g_assert_cmpfloat (fv[bv[i]], ==, copysign (maxima[t], fv[i]));
          else if (bv[i] != i)
            g_error ("%s code 0x%02x came back as 0x%02x", owb_data_type_name (types[t]), i, bv[i]);
        }

      /* Beyond the range. */
      float big[] = { (float) maxima[t] * 4, (float) -maxima[t] * 4, INFINITY };
      OwbTensor *oin[3] = { tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 }, big),
                            tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 1.0f }), tu_new_tensor (types[t], 0, NULL, NULL) };
      for (int sat = 0; sat <= 1; sat++)
        {
          g_autoptr (OwbModel) om = single_node_model (19, "QuantizeLinear", 3, oin, 1, &node);
          tu_set_int (node, "saturate", sat);
          OwbTensor *o = NULL;
          g_assert_true (run_model (om, 3, oin, 1, &o, 1, &error));
          for (int i = 0; i < 3; i++)
            {
              double v = fv[((uint8_t *) o->data)[i]];
              if (sat)
                g_assert_cmpfloat (fabs (v), ==, maxima[t]);
              else if (types[t] == OWB_TYPE_FLOAT8E5M2)
                g_assert_true (isinf (v));
              else
                g_assert_true (isnan (v));
            }
          owb_tensor_unref (o);
        }
      unref_all (3, oin);
      owb_tensor_unref (back);
      unref_all (3, qin);
      owb_tensor_unref (f);
      unref_all (2, din);
    }
}

/* Per-axis dequantization of int4 data into bfloat16 with an e8m0 scale (powers of two). */
static void
test_dequantize_e8m0 (void)
{
  int8_t xs[6] = { -8, -1, 0, 1, 5, 7 };
  uint8_t scales[2] = { 127, 129 }; /* 1 and 4 */
  int8_t zps[2] = { 0, 1 };
  OwbTensor *in[3] = { tu_new_tensor (OWB_TYPE_INT4, 2, (int64_t[]) { 2, 3 }, xs),
                       tu_new_tensor (OWB_TYPE_FLOAT8E8M0, 1, (int64_t[]) { 2 }, scales),
                       tu_new_tensor (OWB_TYPE_INT4, 1, (int64_t[]) { 2 }, zps) };
  OwbNode *node;
  g_autoptr (OwbModel) m = single_node_model (25, "DequantizeLinear", 3, in, 1, &node);
  tu_set_int (node, "axis", 0);
  tu_set_int (node, "output_dtype", OWB_TYPE_BFLOAT16);
  OwbTensor *y = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (run_model (m, 3, in, 1, &y, 2, &error));
  g_assert_no_error (error);
  g_assert_cmpint (y->dtype, ==, OWB_TYPE_BFLOAT16);
  double want[6] = { -8, -1, 0, 0, 16, 24 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (owb_tensor_get_double (y, i), ==, want[i]);
  owb_tensor_unref (y);
  unref_all (3, in);
}

/* Bad shapes found only at run time come back as errors. */
static void
test_runtime_errors (void)
{
  OwbTensor *in[3] = { tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 3 }, NULL),
                       tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 }, (float[]) { 1, 1, 1 }),
                       tu_new_tensor (OWB_TYPE_UINT8, 1, (int64_t[]) { 2 }, NULL) };
  OwbNode *node;
  g_autoptr (OwbModel) m = single_node_model (13, "QuantizeLinear", 3, in, 1, &node);
  OwbTensor *y = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_false (run_model (m, 3, in, 1, &y, 1, &error));
  g_assert_nonnull (error);
  unref_all (3, in);

  /* QLinearMatMul with a y_scale of two values. */
  OwbTensor *mm[8] = { tu_new_tensor (OWB_TYPE_UINT8, 2, (int64_t[]) { 2, 3 }, NULL),
                       tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 1 }), tu_new_tensor (OWB_TYPE_UINT8, 0, NULL, NULL),
                       tu_new_tensor (OWB_TYPE_UINT8, 2, (int64_t[]) { 3, 2 }, NULL),
                       tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 1 }), tu_new_tensor (OWB_TYPE_UINT8, 0, NULL, NULL),
                       tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 }, (float[]) { 1, 1 }),
                       tu_new_tensor (OWB_TYPE_UINT8, 1, (int64_t[]) { 2 }, NULL) };
  g_autoptr (OwbModel) m2 = single_node_model (10, "QLinearMatMul", 8, mm, 1, &node);
  g_clear_error (&error);
  g_assert_false (run_model (m2, 8, mm, 1, &y, 1, &error));
  g_assert_nonnull (error);
  unref_all (8, mm);
}

static void
test_dynamic_quantize (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  /* Several chunks and a ragged end (the vector passes' masked tail), and a NaN: left out of the
   * range, quantized to 0 as the spec's saturation takes it. */
  int64_t n = 10007;
  OwbTensor *x = tu_new_tensor (OWB_TYPE_FLOAT, 1, &n, NULL);
  float *xd = x->data;
  for (int64_t i = 0; i < n; i++)
    xd[i] = (float) g_rand_double_range (rand, -3, 5);
  xd[5001] = NAN;
  OwbTensor *in[1] = { x }, *out[3] = { 0 };
  OwbNode *node;
  g_autoptr (OwbModel) m = single_node_model (11, "DynamicQuantizeLinear", 1, in, 3, &node);
  g_autoptr (GError) error = NULL;
  g_assert_true (run_model (m, 1, in, 3, out, 4, &error));
  g_assert_no_error (error);
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < n; i++)
    if (!isnan (xd[i]))
      lo = MIN (lo, xd[i]), hi = MAX (hi, xd[i]);
  float scale = (hi - lo) / 255.0f;
  float zp = nearbyintf (CLAMP (0.0f - lo / scale, 0.0f, 255.0f));
  g_assert_cmpfloat (((float *) out[1]->data)[0], ==, scale);
  g_assert_cmpint (((uint8_t *) out[2]->data)[0], ==, (uint8_t) zp);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpint (((uint8_t *) out[0]->data)[i], ==,
                     isnan (xd[i]) ? 0 : (uint8_t) CLAMP (nearbyintf (xd[i] / scale) + zp, 0, 255));
  unref_all (3, out);
  unref_all (1, in);
}

/* QLinearMatMul with per-row a parameters ([M]) and per-column b parameters ([N]) over broadcast batches. */
static void
test_qlinear_matmul_per_row (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  int64_t B = 3, M = 9, K = 70, N = 13;
  OwbTensor *a = tu_new_tensor (OWB_TYPE_UINT8, 3, (int64_t[]) { B, M, K }, NULL);
  OwbTensor *b = tu_new_tensor (OWB_TYPE_INT8, 2, (int64_t[]) { K, N }, NULL);
  for (int64_t i = 0; i < a->nelems; i++)
    ((uint8_t *) a->data)[i] = (uint8_t) g_rand_int_range (rand, 0, 256);
  for (int64_t i = 0; i < b->nelems; i++)
    ((int8_t *) b->data)[i] = (int8_t) g_rand_int_range (rand, -128, 128);
  OwbTensor *as = tu_new_tensor (OWB_TYPE_FLOAT, 1, &M, NULL), *azp = tu_new_tensor (OWB_TYPE_UINT8, 1, &M, NULL);
  OwbTensor *bs = tu_new_tensor (OWB_TYPE_FLOAT, 1, &N, NULL), *bzp = tu_new_tensor (OWB_TYPE_INT8, 1, &N, NULL);
  for (int64_t i = 0; i < M; i++)
    {
      ((float *) as->data)[i] = (float) g_rand_double_range (rand, 0.01, 0.05);
      ((uint8_t *) azp->data)[i] = (uint8_t) g_rand_int_range (rand, 100, 150);
    }
  for (int64_t i = 0; i < N; i++)
    {
      ((float *) bs->data)[i] = (float) g_rand_double_range (rand, 0.01, 0.05);
      ((int8_t *) bzp->data)[i] = (int8_t) g_rand_int_range (rand, -10, 10);
    }
  OwbTensor *in[8] = { a, as, azp, b, bs, bzp, tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 0.4f }),
                       tu_new_tensor (OWB_TYPE_UINT8, 0, NULL, (uint8_t[]) { 128 }) };
  OwbNode *node;
  g_autoptr (OwbModel) m = single_node_model (10, "QLinearMatMul", 8, in, 1, &node);
  OwbTensor *y = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (run_model (m, 8, in, 1, &y, 3, &error));
  g_assert_no_error (error);
  g_assert_cmpint (y->rank, ==, 3);
  g_assert_cmpint (y->dims[2], ==, N);
  for (int64_t t = 0; t < B; t++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        {
          int32_t acc = 0;
          for (int64_t k = 0; k < K; k++)
            acc += (((uint8_t *) a->data)[(t * M + i) * K + k] - ((uint8_t *) azp->data)[i])
                   * (((int8_t *) b->data)[k * N + j] - ((int8_t *) bzp->data)[j]);
          float mult = ((float *) as->data)[i] * ((float *) bs->data)[j] / 0.4f;
          double want = CLAMP (nearbyint (acc * (double) mult) + 128, 0, 255);
          g_assert_cmpint (((uint8_t *) y->data)[(t * M + i) * N + j], ==, (int) want);
        }
  owb_tensor_unref (y);
  unref_all (8, in);
}

/* QLinearConv, grouped, strided, padded, per-channel weights with bias, on several threads, against
 * a direct loop in which padding reads the input zero point. */
static void
test_qlinear_conv_reference (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  int64_t N = 2, C = 6, H = 11, W = 9, M = 4, G = 2, KH = 3, KW = 2, S = 2, P = 1;
  OwbTensor *x = tu_new_tensor (OWB_TYPE_INT8, 4, (int64_t[]) { N, C, H, W }, NULL);
  OwbTensor *w = tu_new_tensor (OWB_TYPE_INT8, 4, (int64_t[]) { M, C / G, KH, KW }, NULL);
  for (int64_t i = 0; i < x->nelems; i++)
    ((int8_t *) x->data)[i] = (int8_t) g_rand_int_range (rand, -128, 128);
  for (int64_t i = 0; i < w->nelems; i++)
    ((int8_t *) w->data)[i] = (int8_t) g_rand_int_range (rand, -128, 128);
  float wscale[4] = { 0.01f, 0.02f, 0.005f, 0.013f };
  int8_t wzp[4] = { 0, 3, -2, 1 };
  int32_t bias[4] = { 100, -2000, 0, 777 };
  OwbTensor *in[9] = { x, tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 0.03f }),
                       tu_new_tensor (OWB_TYPE_INT8, 0, NULL, (int8_t[]) { -5 }), w,
                       tu_new_tensor (OWB_TYPE_FLOAT, 1, &M, wscale), tu_new_tensor (OWB_TYPE_INT8, 1, &M, wzp),
                       tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 0.7f }),
                       tu_new_tensor (OWB_TYPE_INT8, 0, NULL, (int8_t[]) { 10 }), tu_new_tensor (OWB_TYPE_INT32, 1, &M, bias) };
  OwbNode *node;
  g_autoptr (OwbModel) m = single_node_model (10, "QLinearConv", 9, in, 1, &node);
  tu_set_int (node, "group", G);
  tu_set_ints (node, "strides", 2, (int64_t[]) { S, S });
  tu_set_ints (node, "pads", 4, (int64_t[]) { P, P, P, P });
  OwbTensor *y = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (run_model (m, 9, in, 1, &y, 4, &error));
  g_assert_no_error (error);
  int64_t OH = (H + 2 * P - KH) / S + 1, OW = (W + 2 * P - KW) / S + 1;
  g_assert_cmpint (y->dims[2], ==, OH);
  g_assert_cmpint (y->dims[3], ==, OW);
  const int8_t *xv = x->data, *wv = w->data, *yv = y->data;
  int64_t Cg = C / G, Mg = M / G;
  for (int64_t n = 0; n < N; n++)
    for (int64_t mo = 0; mo < M; mo++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++)
          {
            int64_t g = mo / Mg;
            int32_t acc = bias[mo];
            for (int64_t c = 0; c < Cg; c++)
              for (int64_t kh = 0; kh < KH; kh++)
                for (int64_t kw = 0; kw < KW; kw++)
                  {
                    int64_t ih = oh * S - P + kh, iw = ow * S - P + kw;
                    int32_t xq = ih >= 0 && ih < H && iw >= 0 && iw < W
                                   ? xv[((n * C + g * Cg + c) * H + ih) * W + iw] - (-5) : 0;
                    acc += xq * (wv[((mo * Cg + c) * KH + kh) * KW + kw] - wzp[mo]);
                  }
            float mult = 0.03f * wscale[mo] / 0.7f;
            double want = CLAMP (nearbyint (acc * (double) mult) + 10, -128, 127);
            g_assert_cmpint (yv[((n * M + mo) * OH + oh) * OW + ow], ==, (int) want);
          }
  owb_tensor_unref (y);
  unref_all (9, in);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/quant/infer/quantize", test_infer_quantize);
  g_test_add_func ("/quant/infer/blocked", test_infer_blocked);
  g_test_add_func ("/quant/infer/dequantize-types", test_infer_dequantize_types);
  g_test_add_func ("/quant/infer/qlinear", test_infer_qlinear);
  g_test_add_func ("/quant/quantize/threads-blocked", test_quantize_threads);
  g_test_add_func ("/quant/quantize/rounding", test_quantize_rounding);
  g_test_add_func ("/quant/float8-codes", test_float8_codes);
  g_test_add_func ("/quant/dequantize/e8m0-int4", test_dequantize_e8m0);
  g_test_add_func ("/quant/runtime-errors", test_runtime_errors);
  g_test_add_func ("/quant/dynamic-quantize", test_dynamic_quantize);
  g_test_add_func ("/quant/qlinear-matmul/per-row", test_qlinear_matmul_per_row);
  g_test_add_func ("/quant/qlinear-conv/reference", test_qlinear_conv_reference);
  return g_test_run ();
}
