/* test-kernels-nn.c: Conv, ConvTranspose, MatMul, Gemm and their integer forms on the CPU provider
 * against naive references, plus attribute/shape errors and symbolic-dim inference. */
#include <math.h>
#include <string.h>

#include "../engine/test-util.h"
#include "kernel-test-util.h"

/* ---- model building ---- */

/* One node "node" of `op` reading graph inputs i0..i{n-1} (NULL tensors become missing "" inputs) and
 * writing y, whose type is left to inference. */
static OwbModel *
single_node_model (int opset, const char *op, int n_in, OwbTensor *const *inputs, OwbNode **node)
{
  OwbModel *m = tu_model_new (opset);
  g_autofree char *names = tu_add_indexed_inputs (m->graph, n_in, inputs, 0);
  *node = tu_node (m->graph, op, "node", names, "y");
  tu_add_untyped_output (m->graph->outputs, "y");
  return m;
}

static OwbTensor *
run_model (OwbModel *m, int n_in, OwbTensor *const *inputs, int threads, GError **error)
{
  g_autoptr (OwbSession) s = tu_session (m, threads, error);
  OwbTensor *out = NULL;
  const char *out_name = "y";
  if (!s || !tu_run_indexed (s, n_in, inputs, 0, 1, &out_name, &out, error))
    return NULL;
  return out;
}

static OwbTensor *
random_tensor (GRand *rand, OwbDataType dtype, int rank, const int64_t *dims)
{
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    {
      if (dtype == OWB_TYPE_UINT8 || dtype == OWB_TYPE_INT8)
        owb_tensor_set_double (t, i, g_rand_int_range (rand, dtype == OWB_TYPE_INT8 ? -128 : 0, dtype == OWB_TYPE_INT8 ? 128 : 256));
      else if (dtype == OWB_TYPE_FLOAT || dtype == OWB_TYPE_DOUBLE)
        owb_tensor_set_double (t, i, g_rand_double_range (rand, -1, 1));
      else if (OWB_TYPE_BIT (dtype) & OWB_TYPES_UNSIGNED_INT)
        owb_tensor_set_double (t, i, g_rand_int_range (rand, 0, 11));
      else
        owb_tensor_set_double (t, i, g_rand_int_range (rand, -5, 6));
    }
  return t;
}

static void
assert_close (const OwbTensor *got, const double *want, int rank, const int64_t *dims, double tol)
{
  g_assert_nonnull (got);
  g_assert_cmpint (got->rank, ==, rank);
  for (int i = 0; i < rank; i++)
    g_assert_cmpint (got->dims[i], ==, dims[i]);
  for (int64_t i = 0; i < got->nelems; i++)
    {
      double g = owb_tensor_get_double (got, i);
      if (fabs (g - want[i]) > tol * (1 + fabs (want[i])))
        g_error ("element %" G_GINT64_FORMAT ": got %.8g, want %.8g", i, g, want[i]);
    }
}

/* ---- Conv / ConvTranspose references ---- */

typedef struct {
  const char *label;
  int nsp;
  int64_t n, c, m, group;
  int64_t in[3], k[3], s[3], d[3];
  int64_t pads[6];
  const char *auto_pad; /* NULL: attribute absent */
  gboolean bias;
  /* ConvTranspose only */
  int64_t out_pad[3];
  int64_t out_shape[3]; /* [0] == 0: absent */
} ConvCase;

static int64_t
prod (int n, const int64_t *v)
{
  int64_t p = 1;
  for (int i = 0; i < n; i++)
    p *= v[i];
  return p;
}

/* Decodes a flat index into coordinates of `dims`. */
static void
unflatten (int64_t flat, int n, const int64_t *dims, int64_t *coord)
{
  for (int a = n - 1; a >= 0; a--)
    {
      coord[a] = flat % dims[a];
      flat /= dims[a];
    }
}

static int64_t
flatten (int n, const int64_t *dims, const int64_t *coord)
{
  int64_t f = 0;
  for (int a = 0; a < n; a++)
    f = f * dims[a] + coord[a];
  return f;
}

/* Output sizes and begin pads as the ONNX spec writes them. */
static void
conv_case_geometry (const ConvCase *cc, gboolean transpose, int64_t *out, int64_t *pad)
{
  for (int i = 0; i < cc->nsp; i++)
    {
      int64_t dk = (cc->k[i] - 1) * cc->d[i] + 1, s = cc->s[i], in = cc->in[i];
      gboolean upper = cc->auto_pad && strcmp (cc->auto_pad, "SAME_UPPER") == 0;
      gboolean lower = cc->auto_pad && strcmp (cc->auto_pad, "SAME_LOWER") == 0;
      gboolean valid = cc->auto_pad && strcmp (cc->auto_pad, "VALID") == 0;
      int64_t pb = valid ? 0 : cc->pads[i], pe = valid ? 0 : cc->pads[cc->nsp + i];
      if (!transpose)
        {
          if (upper || lower)
            {
              out[i] = (in + s - 1) / s;
              int64_t total = MAX ((out[i] - 1) * s + dk - in, 0);
              pad[i] = upper ? total / 2 : total - total / 2;
            }
          else
            {
              out[i] = (in + pb + pe - dk) / s + 1;
              pad[i] = pb;
            }
        }
      else
        {
          int64_t full = s * (in - 1) + cc->out_pad[i] + dk;
          if (cc->out_shape[0] || upper || lower)
            {
              out[i] = cc->out_shape[0] ? cc->out_shape[i] : in * s;
              int64_t total = full - out[i];
              int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
              pad[i] = upper ? half : total - half;
            }
          else
            {
              out[i] = full - pb - pe;
              pad[i] = pb;
            }
        }
    }
}

static double *
conv_reference (const ConvCase *cc, gboolean transpose, const OwbTensor *x, const OwbTensor *w, const OwbTensor *b,
                int64_t *ydims)
{
  int nsp = cc->nsp;
  int64_t out[3], pad[3];
  conv_case_geometry (cc, transpose, out, pad);
  ydims[0] = cc->n;
  ydims[1] = cc->m;
  memcpy (ydims + 2, out, nsp * sizeof (int64_t));
  int64_t cg = cc->c / cc->group, mg = cc->m / cc->group;
  int64_t in_size = prod (nsp, cc->in), out_size = prod (nsp, out), ksize = prod (nsp, cc->k);
  double *y = g_new0 (double, cc->n * cc->m * out_size);
  for (int64_t n = 0; n < cc->n; n++)
    for (int64_t g = 0; g < cc->group; g++)
      for (int64_t ci = 0; ci < cg; ci++)
        for (int64_t mi = 0; mi < mg; mi++)
          for (int64_t kk = 0; kk < ksize; kk++)
            {
              int64_t kc[3];
              unflatten (kk, nsp, cc->k, kc);
              int64_t c = g * cg + ci, m = g * mg + mi;
              double wv = owb_tensor_get_double (w, transpose ? (c * mg + mi) * ksize + kk : (m * cg + ci) * ksize + kk);
              /* Conv walks outputs and reads inputs; ConvTranspose walks inputs and writes outputs. */
              int64_t walk = transpose ? in_size : out_size;
              for (int64_t p = 0; p < walk; p++)
                {
                  int64_t pc[3], qc[3];
                  unflatten (p, nsp, transpose ? cc->in : out, pc);
                  gboolean inside = TRUE;
                  for (int a = 0; a < nsp; a++)
                    {
                      qc[a] = pc[a] * cc->s[a] - pad[a] + kc[a] * cc->d[a];
                      inside = inside && qc[a] >= 0 && qc[a] < (transpose ? out[a] : cc->in[a]);
                    }
                  if (!inside)
                    continue;
                  if (!transpose)
                    y[(n * cc->m + m) * out_size + p]
                        += wv * owb_tensor_get_double (x, (n * cc->c + c) * in_size + flatten (nsp, cc->in, qc));
                  else
                    y[(n * cc->m + m) * out_size + flatten (nsp, out, qc)]
                        += wv * owb_tensor_get_double (x, (n * cc->c + c) * in_size + p);
                }
            }
  if (b)
    for (int64_t i = 0; i < cc->n * cc->m * out_size; i++)
      y[i] += owb_tensor_get_double (b, i / out_size % cc->m);
  return y;
}

static void
run_conv_case (const ConvCase *cc, gboolean transpose, OwbDataType dtype, int threads)
{
  g_test_message ("%s %s threads=%d", transpose ? "ConvTranspose" : "Conv", cc->label, threads);
  GRand *rand = g_rand_new_with_seed (42);
  int rank = cc->nsp + 2;
  int64_t xd[5] = { cc->n, cc->c }, wd[5];
  memcpy (xd + 2, cc->in, cc->nsp * sizeof (int64_t));
  wd[0] = transpose ? cc->c : cc->m;
  wd[1] = transpose ? cc->m / cc->group : cc->c / cc->group;
  memcpy (wd + 2, cc->k, cc->nsp * sizeof (int64_t));
  OwbTensor *in[3] = { random_tensor (rand, dtype, rank, xd), random_tensor (rand, dtype, rank, wd),
                       cc->bias ? random_tensor (rand, dtype, 1, (int64_t[]){ cc->m }) : NULL };
  OwbNode *node;
  g_autoptr (OwbModel) model = single_node_model (13, transpose ? "ConvTranspose" : "Conv", cc->bias ? 3 : 2, in, &node);
  gboolean any_stride = FALSE, any_dil = FALSE, any_pad = FALSE;
  for (int i = 0; i < cc->nsp; i++)
    {
      any_stride |= cc->s[i] != 1;
      any_dil |= cc->d[i] != 1;
      any_pad |= cc->pads[i] != 0 || cc->pads[cc->nsp + i] != 0;
    }
  if (cc->group != 1)
    tu_set_int (node, "group", cc->group);
  if (any_stride)
    tu_set_ints (node, "strides", cc->nsp, cc->s);
  if (any_dil)
    tu_set_ints (node, "dilations", cc->nsp, cc->d);
  if (any_pad)
    tu_set_ints (node, "pads", 2 * cc->nsp, cc->pads);
  if (cc->auto_pad)
    tu_set_string (node, "auto_pad", cc->auto_pad);
  if (transpose && (cc->out_pad[0] || cc->out_pad[1] || cc->out_pad[2]))
    tu_set_ints (node, "output_padding", cc->nsp, cc->out_pad);
  if (transpose && cc->out_shape[0])
    tu_set_ints (node, "output_shape", cc->nsp, cc->out_shape);
  if (cc->nsp == 2 && !transpose)
    tu_set_ints (node, "kernel_shape", 2, cc->k);

  GError *error = NULL;
  g_autoptr (OwbTensor) y = run_model (model, 3, in, threads, &error);
  g_assert_no_error (error);
  int64_t ydims[5];
  g_autofree double *want = conv_reference (cc, transpose, in[0], in[1], in[2], ydims);
  assert_close (y, want, rank, ydims, dtype == OWB_TYPE_DOUBLE ? 1e-10 : 1e-4);
  for (int i = 0; i < 3; i++)
    if (in[i])
      owb_tensor_unref (in[i]);
  g_rand_free (rand);
}

static const ConvCase conv_cases[] = {
  { "3x3 pad 1", 2, 2, 4, 6, 1, { 9, 7 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, NULL, TRUE },
  { "strides asymmetric pads", 2, 1, 3, 5, 1, { 11, 8 }, { 3, 2 }, { 2, 3 }, { 1, 1 }, { 1, 0, 2, 1 }, NULL, FALSE },
  { "dilations", 2, 1, 2, 3, 1, { 10, 9 }, { 3, 2 }, { 1, 1 }, { 2, 3 }, { 2, 1, 0, 2 }, NULL, TRUE },
  { "group 2", 2, 2, 4, 6, 2, { 6, 7 }, { 3, 3 }, { 1, 2 }, { 1, 1 }, { 1, 1, 1, 1 }, NULL, TRUE },
  { "depthwise stride 2", 2, 2, 8, 8, 8, { 9, 10 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 }, NULL, TRUE },
  { "depthwise dilated asym", 2, 1, 5, 5, 5, { 12, 9 }, { 3, 5 }, { 1, 3 }, { 2, 1 }, { 0, 2, 3, 1 }, NULL, FALSE },
  { "depthwise same upper", 2, 1, 4, 4, 4, { 7, 8 }, { 4, 3 }, { 1, 1 }, { 1, 1 }, { 0 }, "SAME_UPPER", TRUE },
  { "depthwise multiplier", 2, 1, 3, 6, 3, { 6, 6 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, NULL, TRUE },
  { "pointwise", 2, 2, 16, 8, 1, { 14, 13 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0 }, NULL, TRUE },
  { "pointwise grouped", 2, 1, 8, 12, 4, { 5, 6 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0 }, NULL, TRUE },
  { "1x1 stride 2", 2, 1, 4, 3, 1, { 9, 8 }, { 1, 1 }, { 2, 2 }, { 1, 1 }, { 0 }, NULL, TRUE },
  { "1x1 padded", 2, 1, 4, 3, 1, { 5, 4 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 1, 0, 0, 1 }, NULL, TRUE },
  { "same lower stride 2", 2, 1, 2, 3, 1, { 8, 7 }, { 3, 4 }, { 2, 2 }, { 1, 1 }, { 0 }, "SAME_LOWER", FALSE },
  { "same upper stride 3", 2, 1, 2, 3, 1, { 8, 7 }, { 3, 4 }, { 3, 2 }, { 1, 2 }, { 0 }, "SAME_UPPER", TRUE },
  { "valid", 2, 1, 2, 3, 1, { 8, 7 }, { 3, 2 }, { 2, 1 }, { 1, 1 }, { 5, 5, 5, 5 }, "VALID", TRUE },
  { "kernel over small padded input", 2, 1, 1, 2, 1, { 2, 2 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, NULL, FALSE },
  { "1d", 1, 2, 3, 5, 1, { 20 }, { 5 }, { 3 }, { 2 }, { 2, 1 }, NULL, TRUE },
  { "1d depthwise", 1, 1, 4, 4, 4, { 15 }, { 3 }, { 2 }, { 1 }, { 1, 1 }, NULL, TRUE },
  { "1d depthwise dilated", 1, 2, 3, 3, 3, { 17 }, { 4 }, { 1 }, { 2 }, { 2, 1 }, NULL, FALSE },
  { "depthwise 9x9 (more taps than registers)", 2, 1, 2, 2, 2, { 12, 11 }, { 9, 9 }, { 1, 2 }, { 1, 1 }, { 4, 4, 4, 4 },
    NULL, TRUE },
  { "depthwise wide rows", 2, 1, 3, 3, 3, { 5, 41 }, { 3, 5 }, { 1, 1 }, { 1, 1 }, { 1, 2, 1, 2 }, NULL, TRUE },
  /* the direct depthwise kernel's row paths: 3x3 and 5x5 stride 1 and 2 (two vectors per step and a
   * partial last vector), other kernels at stride 2, stride 3, dilation 2 */
  { "depthwise 3x3 s1 wide", 2, 2, 3, 3, 3, { 7, 37 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, NULL, TRUE },
  { "depthwise 3x3 s2 odd", 2, 1, 3, 3, 3, { 9, 35 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 }, NULL, TRUE },
  { "depthwise 5x5 s2", 2, 1, 2, 2, 2, { 14, 14 }, { 5, 5 }, { 2, 2 }, { 1, 1 }, { 2, 2, 2, 2 }, NULL, TRUE },
  { "depthwise 5x5 s1 7x7", 2, 1, 4, 4, 4, { 7, 7 }, { 5, 5 }, { 1, 1 }, { 1, 1 }, { 2, 2, 2, 2 }, NULL, FALSE },
  { "depthwise 7x4 s2", 2, 1, 2, 4, 2, { 11, 19 }, { 7, 4 }, { 2, 2 }, { 1, 1 }, { 3, 1, 3, 2 }, NULL, TRUE },
  { "depthwise stride 3", 2, 1, 2, 2, 2, { 10, 23 }, { 3, 3 }, { 3, 3 }, { 1, 1 }, { 1, 0, 1, 2 }, NULL, TRUE },
  { "depthwise 3x3 dilated 2", 2, 1, 2, 2, 2, { 9, 20 }, { 3, 3 }, { 1, 1 }, { 2, 2 }, { 2, 2, 2, 2 }, NULL, TRUE },
  { "depthwise 1x1", 2, 2, 3, 3, 3, { 4, 5 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0 }, NULL, TRUE },
  { "3d", 3, 1, 2, 3, 1, { 5, 6, 4 }, { 3, 2, 3 }, { 1, 2, 1 }, { 1, 1, 2 }, { 1, 0, 2, 1, 1, 1 }, NULL, TRUE },
  { "3d depthwise", 3, 2, 3, 3, 3, { 4, 5, 6 }, { 2, 3, 3 }, { 2, 1, 1 }, { 1, 1, 1 }, { 0, 1, 1, 1, 1, 1 }, NULL, TRUE },
  { "tiled im2col", 2, 1, 32, 16, 1, { 70, 70 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, NULL, TRUE },
  { "tiled grouped", 2, 2, 64, 32, 2, { 33, 30 }, { 5, 5 }, { 1, 1 }, { 1, 1 }, { 2, 2, 2, 2 }, NULL, TRUE },
};

static void
test_conv_cases (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (conv_cases); i++)
    {
      run_conv_case (&conv_cases[i], FALSE, OWB_TYPE_FLOAT, 1);
      run_conv_case (&conv_cases[i], FALSE, OWB_TYPE_FLOAT, 3);
    }
  run_conv_case (&conv_cases[0], FALSE, OWB_TYPE_DOUBLE, 2);
  /* double through the depthwise kernel's paths */
  for (guint i = 0; i < G_N_ELEMENTS (conv_cases); i++)
    if (strncmp (conv_cases[i].label, "depthwise", 9) == 0)
      run_conv_case (&conv_cases[i], FALSE, OWB_TYPE_DOUBLE, 2);
}

/* The vector exp behind the Sigmoid and Swish epilogues (16-byte and AVX2 code, and the tails of
 * rows) over [-88, 88]: within 1e-6 relative of the double-precision result where that is a
 * normal float (e^x for x >= -87), and within 1e-37 absolute below. */
static void
test_fused_conv_exp_accuracy (void)
{
  const int64_t n = 1763;
  for (int swish = 0; swish <= 1; swish++)
    {
      OwbTensor *in[2] = { owb_tensor_new (OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 1, 1, n }, NULL),
                           owb_tensor_new (OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 1, 1, 1 }, NULL) };
      float *x = in[0]->data;
      for (int64_t i = 0; i < n; i++)
        x[i] = (float) (-88.0 + 176.0 * i / (n - 1));
      ((float *) in[1]->data)[0] = 1;
      OwbNode *node;
      g_autoptr (OwbModel) model = single_node_model (13, "FusedConv", 2, in, &node);
      owb_model_set_opset (model, OWB_DOMAIN, 1);
      g_free (node->domain);
      node->domain = g_strdup (OWB_DOMAIN);
      tu_set_string (node, "activation", swish ? "Swish" : "Sigmoid");
      GError *error = NULL;
      g_autoptr (OwbTensor) y = run_model (model, 2, in, 1, &error);
      g_assert_no_error (error);
      for (int64_t i = 0; i < n; i++)
        {
          double v = x[i], want = (swish ? v : 1.0) / (1.0 + exp (-v)), got = ((float *) y->data)[i];
          double tol = v >= -87 ? 1e-6 * fabs (want) : 1e-37 * MAX (1.0, fabs (v));
          if (fabs (got - want) > tol)
            g_error ("%s (%.9g): got %.9g, want %.9g", swish ? "Swish" : "Sigmoid", v, got, want);
        }
      owb_tensor_unref (in[0]);
      owb_tensor_unref (in[1]);
    }
}

/* FusedConv on the depthwise kernel: bias, residual Z and activation in the row epilogue. */
static void
test_fused_conv_depthwise (void)
{
  static const char *const acts[] = { NULL, "Relu", "Sigmoid" };
  for (guint a = 0; a < G_N_ELEMENTS (acts); a++)
    for (int stride = 1; stride <= 2; stride++)
      {
        ConvCase cc = { "fused", 2, 2, 6, 6, 6, { 10, 19 }, { 3, 3 }, { stride, stride }, { 1, 1 }, { 1, 1, 1, 1 },
                        NULL, TRUE };
        GRand *rand = g_rand_new_with_seed (7);
        int64_t xd[4] = { 2, 6, 10, 19 }, wd[4] = { 6, 1, 3, 3 }, out[2], pad[2];
        conv_case_geometry (&cc, FALSE, out, pad);
        int64_t yd[4] = { 2, 6, out[0], out[1] };
        OwbTensor *in[4] = { random_tensor (rand, OWB_TYPE_FLOAT, 4, xd), random_tensor (rand, OWB_TYPE_FLOAT, 4, wd),
                             random_tensor (rand, OWB_TYPE_FLOAT, 1, (int64_t[]){ 6 }),
                             random_tensor (rand, OWB_TYPE_FLOAT, 4, yd) };
        OwbNode *node;
        g_autoptr (OwbModel) model = single_node_model (13, "FusedConv", 4, in, &node);
        owb_model_set_opset (model, OWB_DOMAIN, 1);
        g_free (node->domain);
        node->domain = g_strdup (OWB_DOMAIN);
        tu_set_int (node, "group", 6);
        tu_set_ints (node, "pads", 4, cc.pads);
        tu_set_ints (node, "strides", 2, cc.s);
        if (acts[a])
          tu_set_string (node, "activation", acts[a]);
        GError *error = NULL;
        g_autoptr (OwbTensor) y = run_model (model, 4, in, 2, &error);
        g_assert_no_error (error);
        int64_t ydims[4];
        g_autofree double *want = conv_reference (&cc, FALSE, in[0], in[1], in[2], ydims);
        for (int64_t i = 0; i < in[3]->nelems; i++)
          {
            double v = want[i] + owb_tensor_get_double (in[3], i);
            if (a == 1)
              v = v > 0 ? v : 0;
            else if (a == 2)
              v = 1 / (1 + exp (-v));
            want[i] = v;
          }
        assert_close (y, want, 4, ydims, 1e-5);
        for (int i = 0; i < 4; i++)
          owb_tensor_unref (in[i]);
        g_rand_free (rand);
      }
}

static const ConvCase conv_transpose_cases[] = {
  { "basic", 2, 1, 2, 3, 1, { 4, 5 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 0 }, NULL, TRUE },
  { "stride pads output_padding", 2, 2, 3, 2, 1, { 4, 3 }, { 3, 2 }, { 3, 2 }, { 1, 1 }, { 1, 0, 2, 1 }, NULL, TRUE,
    { 1, 1 } },
  { "dilations", 2, 1, 2, 2, 1, { 3, 4 }, { 2, 3 }, { 1, 2 }, { 2, 2 }, { 0, 1, 1, 0 }, NULL, FALSE },
  { "group 2", 2, 2, 4, 6, 2, { 3, 3 }, { 3, 3 }, { 2, 1 }, { 1, 1 }, { 0 }, NULL, TRUE },
  { "depthwise", 2, 1, 4, 4, 4, { 5, 5 }, { 2, 2 }, { 2, 2 }, { 1, 1 }, { 0 }, NULL, TRUE },
  { "output_shape", 2, 1, 1, 2, 1, { 3, 3 }, { 3, 3 }, { 3, 2 }, { 1, 1 }, { 0 }, NULL, FALSE, { 0 }, { 10, 8 } },
  { "output_shape cropping", 2, 1, 1, 2, 1, { 3, 3 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0 }, NULL, FALSE, { 0 }, { 5, 6 } },
  { "same upper", 2, 1, 1, 2, 1, { 3, 4 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0 }, "SAME_UPPER", TRUE },
  { "same lower", 2, 1, 1, 2, 1, { 3, 4 }, { 3, 2 }, { 2, 3 }, { 1, 1 }, { 0 }, "SAME_LOWER", TRUE },
  { "same upper stride > kernel", 1, 1, 1, 1, 1, { 3 }, { 3 }, { 5 }, { 1 }, { 0 }, "SAME_UPPER", FALSE },
  { "1d", 1, 2, 3, 4, 1, { 7 }, { 4 }, { 3 }, { 1 }, { 1, 2 }, NULL, TRUE, { 2 } },
  { "3d", 3, 1, 2, 3, 1, { 3, 4, 2 }, { 2, 3, 2 }, { 2, 1, 2 }, { 1, 2, 1 }, { 0, 1, 0, 1, 0, 0 }, NULL, TRUE },
  { "tiled", 2, 1, 16, 16, 1, { 64, 64 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 1, 1, 1, 1 }, NULL, TRUE, { 1, 1 } },
};

static void
test_conv_transpose_cases (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (conv_transpose_cases); i++)
    {
      run_conv_case (&conv_transpose_cases[i], TRUE, OWB_TYPE_FLOAT, 1);
      run_conv_case (&conv_transpose_cases[i], TRUE, OWB_TYPE_FLOAT, 3);
    }
  run_conv_case (&conv_transpose_cases[1], TRUE, OWB_TYPE_DOUBLE, 2);
}

/* ---- MatMul / Gemm ---- */

static double *
matmul_reference (const OwbTensor *a, const OwbTensor *b, int *rank, int64_t *dims)
{
  int ra = a->rank, rb = b->rank;
  int64_t m = ra >= 2 ? a->dims[ra - 2] : 1, k = a->dims[ra - 1], n = rb >= 2 ? b->dims[rb - 1] : 1;
  int abr = MAX (ra - 2, 0), bbr = MAX (rb - 2, 0), br = MAX (abr, bbr);
  int64_t bd[8];
  for (int i = 0; i < br; i++)
    {
      int64_t da = i - (br - abr) >= 0 ? a->dims[i - (br - abr)] : 1;
      int64_t db = i - (br - bbr) >= 0 ? b->dims[i - (br - bbr)] : 1;
      bd[i] = da == 1 ? db : da;
    }
  *rank = 0;
  for (int i = 0; i < br; i++)
    dims[(*rank)++] = bd[i];
  if (ra >= 2)
    dims[(*rank)++] = m;
  if (rb >= 2)
    dims[(*rank)++] = n;
  int64_t batch = prod (br, bd);
  double *y = g_new0 (double, MAX (batch * m * n, 1));
  for (int64_t bi = 0; bi < batch; bi++)
    {
      int64_t c[8], ia = 0, ib = 0;
      unflatten (bi, br, bd, c);
      for (int i = 0; i < br; i++)
        {
          if (i - (br - abr) >= 0)
            ia = ia * a->dims[i - (br - abr)] + (a->dims[i - (br - abr)] == 1 ? 0 : c[i]);
          if (i - (br - bbr) >= 0)
            ib = ib * b->dims[i - (br - bbr)] + (b->dims[i - (br - bbr)] == 1 ? 0 : c[i]);
        }
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
          {
            double s = 0;
            for (int64_t kk = 0; kk < k; kk++)
              s += owb_tensor_get_double (a, ia * m * k + i * k + kk) * owb_tensor_get_double (b, ib * k * n + kk * n + j);
            y[(bi * m + i) * n + j] = s;
          }
    }
  return y;
}

static void
check_matmul (OwbDataType dtype, int ra, const int64_t *ad, int rb, const int64_t *bd, int threads)
{
  GRand *rand = g_rand_new_with_seed (7);
  OwbTensor *in[2] = { random_tensor (rand, dtype, ra, ad), random_tensor (rand, dtype, rb, bd) };
  OwbNode *node;
  g_autoptr (OwbModel) model = single_node_model (13, "MatMul", 2, in, &node);
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run_model (model, 2, in, threads, &error);
  g_assert_no_error (error);
  g_assert_cmpint (y->dtype, ==, dtype);
  int rank;
  int64_t dims[8];
  g_autofree double *want = matmul_reference (in[0], in[1], &rank, dims);
  assert_close (y, want, rank, dims, dtype == OWB_TYPE_FLOAT ? 1e-5 : 1e-12);
  owb_tensor_unref (in[0]);
  owb_tensor_unref (in[1]);
  g_rand_free (rand);
}

static void
test_matmul (void)
{
  OwbDataType types[] = { OWB_TYPE_FLOAT, OWB_TYPE_DOUBLE, OWB_TYPE_INT32, OWB_TYPE_INT64, OWB_TYPE_UINT32 };
  for (guint t = 0; t < G_N_ELEMENTS (types); t++)
    for (int threads = 1; threads <= 3; threads += 2)
      {
        check_matmul (types[t], 1, (int64_t[]){ 5 }, 1, (int64_t[]){ 5 }, threads);
        check_matmul (types[t], 1, (int64_t[]){ 4 }, 3, (int64_t[]){ 2, 4, 3 }, threads);
        check_matmul (types[t], 4, (int64_t[]){ 2, 1, 3, 4 }, 1, (int64_t[]){ 4 }, threads);
        check_matmul (types[t], 2, (int64_t[]){ 7, 9 }, 2, (int64_t[]){ 9, 5 }, threads);
        check_matmul (types[t], 3, (int64_t[]){ 3, 7, 9 }, 2, (int64_t[]){ 9, 5 }, threads);
        check_matmul (types[t], 2, (int64_t[]){ 7, 9 }, 3, (int64_t[]){ 3, 9, 5 }, threads);
        check_matmul (types[t], 4, (int64_t[]){ 3, 1, 3, 4 }, 4, (int64_t[]){ 1, 2, 4, 2 }, threads);
        check_matmul (types[t], 3, (int64_t[]){ 1, 3, 4 }, 4, (int64_t[]){ 5, 1, 4, 2 }, threads);
        check_matmul (types[t], 2, (int64_t[]){ 3, 0 }, 2, (int64_t[]){ 0, 4 }, threads);
        check_matmul (types[t], 3, (int64_t[]){ 0, 3, 4 }, 2, (int64_t[]){ 4, 2 }, threads);
      }
  /* Large enough to be split over threads. */
  check_matmul (OWB_TYPE_FLOAT, 2, (int64_t[]){ 300, 200 }, 2, (int64_t[]){ 200, 150 }, 3);
  check_matmul (OWB_TYPE_FLOAT, 2, (int64_t[]){ 8, 300 }, 2, (int64_t[]){ 300, 1000 }, 3);
}

static void
check_gemm (OwbDataType dtype, int opset, gboolean ta, gboolean tb, float alpha, float beta, int crank,
            const int64_t *cdims, int threads)
{
  const int64_t m = 5, n = 7, k = 6;
  GRand *rand = g_rand_new_with_seed (3);
  int64_t ad[2] = { ta ? k : m, ta ? m : k }, bd[2] = { tb ? n : k, tb ? k : n };
  OwbTensor *in[3] = { random_tensor (rand, dtype, 2, ad), random_tensor (rand, dtype, 2, bd),
                       crank >= 0 ? random_tensor (rand, dtype, crank, cdims) : NULL };
  OwbNode *node;
  g_autoptr (OwbModel) model = single_node_model (opset, "Gemm", crank >= 0 ? 3 : 2, in, &node);
  if (ta)
    tu_set_int (node, "transA", 1);
  if (tb)
    tu_set_int (node, "transB", 1);
  if (alpha != 1)
    tu_set_float (node, "alpha", alpha);
  if (beta != 1)
    tu_set_float (node, "beta", beta);
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run_model (model, 3, in, threads, &error);
  g_assert_no_error (error);
  double want[5 * 7];
  int64_t cs[2] = { 0, 0 };
  if (crank == 2)
    {
      cs[0] = cdims[0] == 1 ? 0 : cdims[1];
      cs[1] = cdims[1] == 1 ? 0 : 1;
    }
  else if (crank == 1)
    cs[1] = cdims[0] == 1 ? 0 : 1;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++)
      {
        double s = 0;
        for (int64_t kk = 0; kk < k; kk++)
          s += owb_tensor_get_double (in[0], ta ? kk * m + i : i * k + kk)
               * owb_tensor_get_double (in[1], tb ? j * k + kk : kk * n + j);
        double c = in[2] ? owb_tensor_get_double (in[2], i * cs[0] + j * cs[1]) : 0;
        want[i * n + j] = (double) alpha * s + (double) beta * c;
        if (dtype == OWB_TYPE_INT64)
          want[i * n + j] = (double) (int64_t) want[i * n + j];
      }
  assert_close (y, want, 2, (int64_t[]){ m, n }, 1e-5);
  for (int i = 0; i < 3; i++)
    if (in[i])
      owb_tensor_unref (in[i]);
  g_rand_free (rand);
}

static void
test_gemm (void)
{
  for (int t = 0; t < 4; t++)
    {
      gboolean ta = t & 1, tb = t >> 1;
      check_gemm (OWB_TYPE_FLOAT, 13, ta, tb, 1, 1, 2, (int64_t[]){ 5, 7 }, 1);
      check_gemm (OWB_TYPE_FLOAT, 13, ta, tb, 0.25f, 0.35f, 2, (int64_t[]){ 1, 7 }, 2);
      check_gemm (OWB_TYPE_DOUBLE, 9, ta, tb, 0.5f, 2, 2, (int64_t[]){ 5, 1 }, 1);
      check_gemm (OWB_TYPE_INT64, 13, ta, tb, 1, 1, 1, (int64_t[]){ 7 }, 1);
    }
  check_gemm (OWB_TYPE_FLOAT, 13, FALSE, FALSE, 1, 1, 0, NULL, 1);
  check_gemm (OWB_TYPE_FLOAT, 13, FALSE, FALSE, 1, 1, 1, (int64_t[]){ 1 }, 1);
  check_gemm (OWB_TYPE_FLOAT, 11, TRUE, FALSE, 2, 1, -1, NULL, 1);
  check_gemm (OWB_TYPE_FLOAT, 7, FALSE, TRUE, 1, 0, 2, (int64_t[]){ 5, 7 }, 1);
  check_gemm (OWB_TYPE_INT32, 11, FALSE, FALSE, 2, 3, 2, (int64_t[]){ 1, 1 }, 1);
}

/* ---- products of a few rows: the GEMV kernels (M <= 4) against sgemm (M >= 5) ---- */

/* The activations the fused products apply, in double. */
static double
ref_activation (const char *act, double v)
{
  if (!act)
    return v;
  if (strcmp (act, "Relu") == 0)
    return v < 0 ? 0 : v;
  if (strcmp (act, "Sigmoid") == 0)
    return 1 / (1 + exp (-v));
  if (strcmp (act, "Swish") == 0)
    return v / (1 + exp (-v));
  if (strcmp (act, "Tanh") == 0)
    return tanh (v);
  if (strcmp (act, "HardSigmoid") == 0)
    return MIN (MAX (0.2 * v + 0.5, 0), 1);
  if (strcmp (act, "HardSwish") == 0)
    return v * MIN (MAX (v / 6 + 0.5, 0), 1);
  if (strcmp (act, "Gelu") == 0)
    return 0.5 * v * (1 + erf (v * M_SQRT1_2));
  g_assert_not_reached ();
}

/* Node `op` of a product test: a Fused op in the workbench domain with its activation act, and the
 * attributes that differ from their defaults. */
static void
set_product_attributes (OwbModel *model, OwbNode *node, gboolean fused, const char *act, gboolean ta, gboolean tb,
                        float alpha, float beta)
{
  if (fused)
    {
      owb_model_set_opset (model, OWB_DOMAIN, 1);
      g_free (node->domain);
      node->domain = g_strdup (OWB_DOMAIN);
      if (act)
        tu_set_string (node, "activation", act);
    }
  if (ta)
    tu_set_int (node, "transA", 1);
  if (tb)
    tu_set_int (node, "transB", 1);
  if (alpha != 1)
    tu_set_float (node, "alpha", alpha);
  if (beta != 1)
    tu_set_float (node, "beta", beta);
}

/* The double reference of Y = act (alpha op(A) op(B) + beta C), beta only for a Gemm (a MatMul's
 * bias C is added as it is), for `batch` x m rows: in[0] A [batch, m, k] (op(A) its transpose with
 * ta), in[1] B [k, n] or, batched_b, one per batch (op(B) with tb), in[2] C: NULL, a row [n]
 * (c_rank 1) or [m, n] (2). */
static double *
product_reference (OwbTensor *const *in, gboolean gemm, int64_t batch, gboolean batched_b, int64_t m, int64_t n,
                   int64_t k, gboolean ta, gboolean tb, float alpha, float beta, int c_rank, const char *act)
{
  double *want = g_new (double, batch * m * n);
  for (int64_t bi = 0; bi < batch; bi++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++)
        {
          const int64_t ao = bi * m * k, bo = batched_b ? bi * k * n : 0;
          double sum = 0;
          for (int64_t kk = 0; kk < k; kk++)
            sum += owb_tensor_get_double (in[0], ao + (ta ? kk * m + i : i * k + kk))
                   * owb_tensor_get_double (in[1], bo + (tb ? j * k + kk : kk * n + j));
          double c = in[2] ? owb_tensor_get_double (in[2], c_rank == 2 ? i * n + j : j) : 0;
          want[(bi * m + i) * n + j] = ref_activation (act, alpha * sum + (gemm ? beta : 1) * c);
        }
  return want;
}

/* op is Gemm, FusedGemm, MatMul or FusedMatMul. A is op(A) [m, k] (with batch > 1 for the MatMuls:
 * [batch, m, k] against one B, or against [batch, k, n] when batched_b), B op(B) [k, n]. c_rank: -1 no
 * C/bias, 1 a [n] vector, 2 an [m, n] matrix (Gemm only). act: FusedGemm/FusedMatMul activation or
 * NULL. One double reference for every path, so GEMV and sgemm answers are held to the same numbers. */
static void
check_small_m (const char *op, int64_t batch, gboolean batched_b, int64_t m, int64_t n, int64_t k, gboolean ta,
               gboolean tb, float alpha, float beta, int c_rank, const char *act, int threads)
{
  gboolean gemm = strstr (op, "Gemm") != NULL, fused = g_str_has_prefix (op, "Fused");
  GRand *rand = g_rand_new_with_seed ((guint32) (m * 7919 + n * 31 + k));
  int64_t ad[3] = { batch, ta ? k : m, ta ? m : k }, bd[3] = { batch, tb ? n : k, tb ? k : n };
  int64_t cd[2] = { c_rank == 2 ? m : n, n };
  int ar = batch > 1 ? 3 : 2, br = batched_b ? 3 : 2;
  OwbTensor *in[3] = { random_tensor (rand, OWB_TYPE_FLOAT, ar, ad + 3 - ar),
                       random_tensor (rand, OWB_TYPE_FLOAT, br, bd + 3 - br),
                       c_rank > 0 ? random_tensor (rand, OWB_TYPE_FLOAT, c_rank, cd + 2 - c_rank) : NULL };
  OwbNode *node;
  g_autoptr (OwbModel) model = single_node_model (13, op, c_rank > 0 ? 3 : 2, in, &node);
  set_product_attributes (model, node, fused, act, ta, tb, alpha, beta);
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run_model (model, 3, in, threads, &error);
  g_assert_no_error (error);
  g_autofree double *want = product_reference (in, gemm, batch, batched_b, m, n, k, ta, tb, alpha, beta, c_rank, act);
  int64_t yd[3] = { batch, m, n };
  /* Sums of up to ~1000 products of [-1, 1] values: float rounding reaches a few 1e-5. */
  assert_close (y, want, batch > 1 ? 3 : 2, yd + (batch > 1 ? 0 : 1), k > 100 ? 1e-4 : 1e-5);
  for (int i = 0; i < 3; i++)
    if (in[i])
      owb_tensor_unref (in[i]);
  g_rand_free (rand);
}

static void
test_small_m (void)
{
  const int64_t ms[] = { 1, 2, 3, 4, 5 };
  for (guint mi = 0; mi < G_N_ELEMENTS (ms); mi++)
    for (int t = 0; t < 4; t++)
      {
        gboolean ta = t & 1, tb = t >> 1;
        int64_t m = ms[mi];
        /* Odd n and k: the row, column and k tails of the vector kernels. */
        check_small_m ("Gemm", 1, FALSE, m, 37, 53, ta, tb, 1, 1, -1, NULL, 1);
        check_small_m ("Gemm", 1, FALSE, m, 9, 7, ta, tb, 0.5f, 2, 1, NULL, 2);
        check_small_m ("Gemm", 1, FALSE, m, 13, 17, ta, tb, 1.5f, 0.25f, 2, NULL, 1);
        check_small_m ("Gemm", 1, FALSE, m, 21, 3, ta, tb, 1, 0, 2, NULL, 1);
        check_small_m ("FusedGemm", 1, FALSE, m, 45, 29, ta, tb, 0.75f, 0.5f, 1, "Relu", 1);
        check_small_m ("FusedGemm", 1, FALSE, m, 11, 70, ta, tb, 1, 1, 2, "Sigmoid", 2);
        check_small_m ("FusedMatMul", 1, FALSE, m, 19, 23, ta, tb, 2, 1, 1, "Relu", 1);
        check_small_m ("FusedMatMul", 3, TRUE, m, 27, 9, ta, tb, 1, 1, -1, NULL, 2);
        /* Large enough to be split by columns over three threads. */
        check_small_m ("FusedGemm", 1, FALSE, m, 1031, 1001, ta, tb, 1, 1, 1, "Relu", 3);
        check_small_m ("Gemm", 1, FALSE, m, 1031, 1001, ta, tb, 0.5f, 1, 1, NULL, 3);
      }
  for (guint mi = 0; mi < G_N_ELEMENTS (ms); mi++)
    {
      check_small_m ("MatMul", 1, FALSE, ms[mi], 33, 41, FALSE, FALSE, 1, 1, -1, NULL, 1);
      check_small_m ("MatMul", 2, FALSE, ms[mi], 15, 8, FALSE, FALSE, 1, 1, -1, NULL, 2);
      check_small_m ("MatMul", 4, TRUE, ms[mi], 15, 31, FALSE, FALSE, 1, 1, -1, NULL, 2);
      check_small_m ("MatMul", 1, FALSE, ms[mi], 2063, 1027, FALSE, FALSE, 1, 1, -1, NULL, 3);
    }
}

/* ---- products on a constant B (an initializer packed once for cpu-sgemm.c) ---- */

/* Y = act (alpha A op(B) + beta C) with B [k, n] (or [n, k] with transB) an initializer and A of
 * `batch` x m rows (rank 3 when batch > 1, MatMul only), against a double reference. Runs twice so
 * that the second run reuses the pack. c_rank: -1 none, 1 a bias row, 2 a full [m, n] C. */
static void
check_packed (const char *op, int64_t batch, int64_t m, int64_t n, int64_t k, gboolean tb, float alpha,
              float beta, int c_rank, const char *act, int threads)
{
  gboolean gemm = strstr (op, "Gemm") != NULL, fused = g_str_has_prefix (op, "Fused");
  GRand *rand = g_rand_new_with_seed ((guint32) (batch * 131 + m * 7919 + n * 31 + k + tb));
  int64_t ad[3] = { batch, m, k }, bd[2] = { tb ? n : k, tb ? k : n }, cd[2] = { c_rank == 2 ? m : n, n };
  int ar = batch > 1 ? 3 : 2;
  OwbTensor *in[3] = { random_tensor (rand, OWB_TYPE_FLOAT, ar, ad + 3 - ar), random_tensor (rand, OWB_TYPE_FLOAT, 2, bd),
                       c_rank > 0 ? random_tensor (rand, OWB_TYPE_FLOAT, c_rank, cd + 2 - c_rank) : NULL };
  OwbNode *node;
  g_autoptr (OwbModel) model = single_node_model (13, op, c_rank > 0 ? 3 : 2, in, &node);
  /* B: an initializer, not a graph input */
  g_ptr_array_remove_index (model->graph->inputs, 1);
  owb_graph_add_initializer (model->graph, "i1", owb_tensor_ref (in[1]));
  set_product_attributes (model, node, fused, act, FALSE, tb, alpha, beta);
  g_autofree double *want = product_reference (in, gemm, batch, FALSE, m, n, k, FALSE, tb, alpha, beta, c_rank, act);
  OwbTensor *feeds[3] = { in[0], NULL, in[2] };
  int64_t yd[3] = { batch, m, n };
  GError *error = NULL;
  g_autoptr (OwbSession) s = tu_session (model, threads, &error);
  g_assert_no_error (error);
  const char *names[2] = { "i0", "i2" }, *out_name = "y";
  for (int run = 0; run < 2; run++)
    {
      OwbTensor *y = NULL;
      owb_session_run (s, in[2] ? 2 : 1, names, (OwbTensor *[]){ feeds[0], feeds[2] }, 1, &out_name, &y, NULL, NULL,
                       &error);
      g_assert_no_error (error);
      assert_close (y, want, batch > 1 ? 3 : 2, yd + (batch > 1 ? 0 : 1), k > 100 ? 1e-4 : 1e-5);
      owb_tensor_unref (y);
    }
  for (int i = 0; i < 3; i++)
    if (in[i])
      owb_tensor_unref (in[i]);
  g_rand_free (rand);
}

static void
test_packed_b (void)
{
  /* m from just past the GEMV limit; n with 16-column panels, an 8-wide tail and odd tails; k odd */
  const int64_t ms[] = { 5, 6, 7, 13, 50, 131 };
  const int64_t ns[] = { 1, 8, 16, 23, 40, 77 };
  const char *acts[] = { NULL, "Relu", "Sigmoid", "Swish", "Tanh", "HardSigmoid", "HardSwish", "Gelu" };
  for (guint mi = 0; mi < G_N_ELEMENTS (ms); mi++)
    for (guint ni = 0; ni < G_N_ELEMENTS (ns); ni++)
      {
        int64_t m = ms[mi], n = ns[ni], k = 3 + 17 * (int64_t) ni;
        const char *act = acts[(mi + ni) % G_N_ELEMENTS (acts)];
        int threads = 1 + (int) ((mi + ni) % 3);
        check_packed ("MatMul", 1, m, n, k, FALSE, 1, 1, -1, NULL, threads);
        check_packed ("MatMul", 3, m, n, k, FALSE, 1, 1, -1, NULL, threads);
        check_packed ("Gemm", 1, m, n, k, ni & 1, 1, 1, 1, NULL, threads);
        check_packed ("Gemm", 1, m, n, k, TRUE, 0.5f, 1, 2, NULL, threads);
        check_packed ("Gemm", 1, m, n, k, FALSE, 1.5f, 0.25f, 1, NULL, threads);
        check_packed ("Gemm", 1, m, n, k, TRUE, 1, 0, 2, NULL, threads);
        check_packed ("FusedMatMul", 1, m, n, k, FALSE, 1, 1, 1, act, threads);
        check_packed ("FusedMatMul", 2, m, n, k, mi & 1, 2, 1, 1, act, threads);
        check_packed ("FusedMatMul", 4, 1 + mi, n, k, FALSE, 1, 1, -1, act, threads);
        check_packed ("FusedGemm", 1, m, n, k, TRUE, 0.75f, 1, 1, act, threads);
        check_packed ("FusedGemm", 1, m, n, k, FALSE, 1, 1, 2, act, threads);
        check_packed ("FusedGemm", 1, m, n, k, TRUE, 1, 0.5f, 2, act, threads);
      }
  /* long K and wide N over three threads */
  check_packed ("FusedMatMul", 2, 50, 300, 768, TRUE, 1, 1, 1, "Relu", 3);
  check_packed ("Gemm", 1, 77, 1000, 513, TRUE, 1, 1, 1, NULL, 3);
}

/* ---- integer ops ---- */

static void
test_matmul_integer (void)
{
  GRand *rand = g_rand_new_with_seed (11);
  const int64_t m = 4, k = 37, n = 6;
  for (int variant = 0; variant < 3; variant++)
    {
      OwbDataType ta = variant == 1 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8, tb = variant == 2 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
      OwbTensor *in[4] = { random_tensor (rand, ta, 3, (int64_t[]){ 2, m, k }), random_tensor (rand, tb, 2, (int64_t[]){ k, n }),
                           random_tensor (rand, ta, 1, (int64_t[]){ m }), random_tensor (rand, tb, 1, (int64_t[]){ n }) };
      OwbNode *node;
      g_autoptr (OwbModel) model = single_node_model (10, "MatMulInteger", 4, in, &node);
      GError *error = NULL;
      g_autoptr (OwbTensor) y = run_model (model, 4, in, 2, &error);
      g_assert_no_error (error);
      g_assert_cmpint (y->dtype, ==, OWB_TYPE_INT32);
      double want[2 * 4 * 6];
      for (int64_t bi = 0; bi < 2; bi++)
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++)
            {
              double s = 0;
              for (int64_t kk = 0; kk < k; kk++)
                s += (owb_tensor_get_double (in[0], (bi * m + i) * k + kk) - owb_tensor_get_double (in[2], i))
                     * (owb_tensor_get_double (in[1], kk * n + j) - owb_tensor_get_double (in[3], j));
              want[(bi * m + i) * n + j] = s;
            }
      assert_close (y, want, 3, (int64_t[]){ 2, m, n }, 0);
      for (int i = 0; i < 4; i++)
        owb_tensor_unref (in[i]);
    }
  g_rand_free (rand);
}

static void
test_conv_integer (void)
{
  GRand *rand = g_rand_new_with_seed (5);
  OwbTensor *in[4] = { random_tensor (rand, OWB_TYPE_UINT8, 4, (int64_t[]){ 1, 4, 6, 5 }),
                       random_tensor (rand, OWB_TYPE_UINT8, 4, (int64_t[]){ 6, 2, 3, 3 }),
                       random_tensor (rand, OWB_TYPE_UINT8, 0, NULL),
                       random_tensor (rand, OWB_TYPE_UINT8, 1, (int64_t[]){ 6 }) };
  OwbNode *node;
  g_autoptr (OwbModel) model = single_node_model (10, "ConvInteger", 4, in, &node);
  tu_set_int (node, "group", 2);
  tu_set_ints (node, "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
  GError *error = NULL;
  g_autoptr (OwbTensor) y = run_model (model, 4, in, 2, &error);
  g_assert_no_error (error);
  /* Padding holds the zero point, so it contributes nothing after subtraction. */
  ConvCase cc = { "int", 2, 1, 4, 6, 2, { 6, 5 }, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 } };
  g_autoptr (OwbTensor) xs = owb_tensor_new (OWB_TYPE_DOUBLE, 4, in[0]->dims, NULL);
  g_autoptr (OwbTensor) ws = owb_tensor_new (OWB_TYPE_DOUBLE, 4, in[1]->dims, NULL);
  for (int64_t i = 0; i < xs->nelems; i++)
    owb_tensor_set_double (xs, i, owb_tensor_get_double (in[0], i) - owb_tensor_get_double (in[2], 0));
  for (int64_t i = 0; i < ws->nelems; i++)
    owb_tensor_set_double (ws, i, owb_tensor_get_double (in[1], i) - owb_tensor_get_double (in[3], i / 18));
  int64_t ydims[4];
  g_autofree double *want = conv_reference (&cc, FALSE, xs, ws, NULL, ydims);
  g_assert_cmpint (y->dtype, ==, OWB_TYPE_INT32);
  assert_close (y, want, 4, ydims, 0);
  for (int i = 0; i < 4; i++)
    owb_tensor_unref (in[i]);
  g_rand_free (rand);
}

/* ---- errors and inference ---- */

typedef void (*NodeSetup) (OwbNode *node);

/* Inference on a node with inputs of the given shapes (-2 dims are named "batch"); returns the
 * output type as text, or NULL with the error. */
static char *
infer_text (int opset, const char *op, int n_in, const int *ranks, const int64_t *const *dims, NodeSetup setup,
            GError **error)
{
  g_autoptr (OwbModel) m = tu_model_new (opset);
  const char *params[] = { "batch", "batch", "batch", "batch", "batch", "batch" };
  GString *names = g_string_new (NULL);
  for (int i = 0; i < n_in; i++)
    {
      char name[16];
      g_snprintf (name, sizeof name, "i%d", i);
      g_string_append_printf (names, "%s%s", i ? "," : "", name);
      tu_add_value (m->graph->inputs, name, OWB_TYPE_FLOAT, ranks[i], dims[i], params);
    }
  add_node_to_y (m, op, names->str, setup);
  g_string_free (names, TRUE);
  return infer_y_text (m, error);
}

static void
expect_error (int opset, const char *op, int n_in, const int *ranks, const int64_t *const *dims, NodeSetup setup,
              int code, const char *fragment)
{
  GError *error = NULL;
  g_autofree char *t = infer_text (opset, op, n_in, ranks, dims, setup, &error);
  if (t)
    g_error ("%s: expected an error containing '%s', inferred %s", op, fragment, t);
  g_assert_error (error, OWB_ERROR, code);
  g_assert_nonnull (strstr (error->message, "the_node"));
  if (!strstr (error->message, fragment))
    g_error ("error '%s' lacks '%s'", error->message, fragment);
  g_error_free (error);
}

static void
expect_type (int opset, const char *op, int n_in, const int *ranks, const int64_t *const *dims, NodeSetup setup,
             const char *want)
{
  GError *error = NULL;
  g_autofree char *t = infer_text (opset, op, n_in, ranks, dims, setup, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (t, ==, want);
}

static void setup_group2 (OwbNode *n) { tu_set_int (n, "group", 2); }
static void setup_pads3 (OwbNode *n) { tu_set_ints (n, "pads", 4, (int64_t[]){ 3, 3, 3, 3 }); }
static void setup_bad_auto_pad (OwbNode *n) { tu_set_string (n, "auto_pad", "SAME"); }
static void setup_zero_stride (OwbNode *n) { tu_set_ints (n, "strides", 2, (int64_t[]){ 0, 1 }); }
static void setup_short_pads (OwbNode *n) { tu_set_ints (n, "pads", 2, (int64_t[]){ 1, 1 }); }
static void setup_kernel_mismatch (OwbNode *n) { tu_set_ints (n, "kernel_shape", 2, (int64_t[]){ 5, 5 }); }
static void setup_big_output_padding (OwbNode *n) { tu_set_ints (n, "output_padding", 2, (int64_t[]){ 2, 2 }); }
static void setup_trans_b (OwbNode *n) { tu_set_int (n, "transB", 1); }
static void
setup_resnet_stem (OwbNode *n)
{
  tu_set_ints (n, "strides", 2, (int64_t[]){ 2, 2 });
  tu_set_ints (n, "pads", 4, (int64_t[]){ 3, 3, 3, 3 });
  tu_set_ints (n, "kernel_shape", 2, (int64_t[]){ 7, 7 });
}
static void setup_same_upper (OwbNode *n) { tu_set_string (n, "auto_pad", "SAME_UPPER"); }
static void
setup_upsample (OwbNode *n)
{
  tu_set_ints (n, "strides", 2, (int64_t[]){ 2, 2 });
  tu_set_ints (n, "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
  tu_set_ints (n, "output_padding", 2, (int64_t[]){ 1, 1 });
}

static void
test_shape_errors (void)
{
  const int r44[] = { 4, 4 }, r22[] = { 2, 2 }, r33[] = { 3, 3 }, r43[] = { 4, 3 };
  /* 3 channels in 2 groups */
  expect_error (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ 1, 3, 5, 5 }, (int64_t[]){ 4, 1, 3, 3 } },
                setup_group2, OWB_ERROR_SHAPE, "divisible by group");
  /* weight channels do not match */
  expect_error (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ 1, 4, 5, 5 }, (int64_t[]){ 4, 3, 3, 3 } },
                NULL, OWB_ERROR_SHAPE, "channels");
  /* output channels not divisible */
  expect_error (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ 1, 4, 5, 5 }, (int64_t[]){ 3, 2, 3, 3 } },
                setup_group2, OWB_ERROR_SHAPE, "divisible by group");
  /* kernel larger than the (unpadded) input */
  expect_error (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ 1, 1, 2, 2 }, (int64_t[]){ 1, 1, 3, 3 } },
                NULL, OWB_ERROR_SHAPE, "larger than the padded input");
  /* ConvTranspose pads larger than the output */
  expect_error (13, "ConvTranspose", 2, r44,
                (const int64_t *const[]){ (int64_t[]){ 1, 1, 2, 2 }, (int64_t[]){ 1, 1, 3, 3 } }, setup_pads3,
                OWB_ERROR_SHAPE, "negative");
  expect_error (13, "ConvTranspose", 2, r44,
                (const int64_t *const[]){ (int64_t[]){ 1, 1, 2, 2 }, (int64_t[]){ 1, 1, 3, 3 } },
                setup_big_output_padding, OWB_ERROR_INVALID_MODEL, "output_padding");
  expect_error (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ 1, 1, 5, 5 }, (int64_t[]){ 1, 1, 3, 3 } },
                setup_bad_auto_pad, OWB_ERROR_INVALID_MODEL, "auto_pad");
  expect_error (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ 1, 1, 5, 5 }, (int64_t[]){ 1, 1, 3, 3 } },
                setup_zero_stride, OWB_ERROR_INVALID_MODEL, "strides");
  expect_error (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ 1, 1, 5, 5 }, (int64_t[]){ 1, 1, 3, 3 } },
                setup_short_pads, OWB_ERROR_INVALID_MODEL, "pads");
  expect_error (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ 1, 1, 5, 5 }, (int64_t[]){ 1, 1, 3, 3 } },
                setup_kernel_mismatch, OWB_ERROR_SHAPE, "kernel_shape");
  expect_error (13, "Conv", 2, r43, (const int64_t *const[]){ (int64_t[]){ 1, 1, 5, 5 }, (int64_t[]){ 1, 1, 3 } },
                NULL, OWB_ERROR_SHAPE, "rank");
  expect_error (13, "Conv", 2, (const int[]){ 2, 2 }, (const int64_t *const[]){ (int64_t[]){ 1, 5 }, (int64_t[]){ 1, 5 } },
                NULL, OWB_ERROR_SHAPE, "rank");
  expect_error (13, "MatMul", 2, r22, (const int64_t *const[]){ (int64_t[]){ 3, 4 }, (int64_t[]){ 5, 2 } }, NULL,
                OWB_ERROR_SHAPE, "inner");
  expect_error (13, "MatMul", 2, r33,
                (const int64_t *const[]){ (int64_t[]){ 2, 3, 4 }, (int64_t[]){ 3, 4, 2 } }, NULL, OWB_ERROR_SHAPE,
                "broadcast");
  expect_error (13, "Gemm", 2, r22, (const int64_t *const[]){ (int64_t[]){ 3, 4 }, (int64_t[]){ 4, 2 } }, setup_trans_b,
                OWB_ERROR_SHAPE, "inner");
  expect_error (13, "Gemm", 3, (const int[]){ 2, 2, 1 },
                (const int64_t *const[]){ (int64_t[]){ 3, 4 }, (int64_t[]){ 4, 2 }, (int64_t[]){ 3 } }, NULL,
                OWB_ERROR_SHAPE, "broadcast");
  /* C is required before opset 11 */
  expect_error (9, "Gemm", 2, r22, (const int64_t *const[]){ (int64_t[]){ 3, 4 }, (int64_t[]){ 4, 2 } }, NULL,
                OWB_ERROR_INVALID_MODEL, "inputs");
}

static void
test_symbolic_inference (void)
{
  const int r44[] = { 4, 4 };
  expect_type (13, "Conv", 2, r44,
               (const int64_t *const[]){ (int64_t[]){ -2, 3, 224, 224 }, (int64_t[]){ 64, 3, 7, 7 } },
               setup_resnet_stem, "float32[batch,64,112,112]");
  /* Stride-1 same padding keeps unknown spatial sizes by name. */
  expect_type (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ -2, 8, -2, -2 }, (int64_t[]){ 16, 8, 3, 3 } },
               setup_same_upper, "float32[batch,16,batch,batch]");
  expect_type (13, "Conv", 2, r44, (const int64_t *const[]){ (int64_t[]){ -2, 8, -1, 10 }, (int64_t[]){ 16, 4, 3, 3 } },
               setup_group2, "float32[batch,16,?,8]");
  expect_type (13, "ConvTranspose", 2, r44,
               (const int64_t *const[]){ (int64_t[]){ -2, 8, 16, 16 }, (int64_t[]){ 8, 4, 3, 3 } }, setup_upsample,
               "float32[batch,4,32,32]");
  expect_type (13, "ConvTranspose", 2, r44,
               (const int64_t *const[]){ (int64_t[]){ -2, 8, 16, 16 }, (int64_t[]){ 8, 4, 3, 3 } }, setup_group2,
               "float32[batch,8,18,18]");
  expect_type (13, "MatMul", 2, (const int[]){ 3, 2 },
               (const int64_t *const[]){ (int64_t[]){ -2, -1, 768 }, (int64_t[]){ 768, 3072 } }, NULL,
               "float32[batch,?,3072]");
  expect_type (13, "MatMul", 2, (const int[]){ 1, 3 }, (const int64_t *const[]){ (int64_t[]){ 4 }, (int64_t[]){ -2, 4, 6 } },
               NULL, "float32[batch,6]");
  expect_type (13, "MatMul", 2, (const int[]){ 4, 3 },
               (const int64_t *const[]){ (int64_t[]){ -2, 1, 5, 4 }, (int64_t[]){ 7, 4, 6 } }, NULL,
               "float32[batch,7,5,6]");
  expect_type (13, "Gemm", 2, (const int[]){ 2, 2 }, (const int64_t *const[]){ (int64_t[]){ -2, 512 }, (int64_t[]){ 1000, 512 } },
               setup_trans_b, "float32[batch,1000]");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/nn/conv", test_conv_cases);
  g_test_add_func ("/nn/fused-conv-depthwise", test_fused_conv_depthwise);
  g_test_add_func ("/nn/fused-conv-exp-accuracy", test_fused_conv_exp_accuracy);
  g_test_add_func ("/nn/conv-transpose", test_conv_transpose_cases);
  g_test_add_func ("/nn/matmul", test_matmul);
  g_test_add_func ("/nn/gemm", test_gemm);
  g_test_add_func ("/nn/small-m", test_small_m);
  g_test_add_func ("/nn/packed-b", test_packed_b);
  g_test_add_func ("/nn/matmul-integer", test_matmul_integer);
  g_test_add_func ("/nn/conv-integer", test_conv_integer);
  g_test_add_func ("/nn/shape-errors", test_shape_errors);
  g_test_add_func ("/nn/symbolic-inference", test_symbolic_inference);
  return g_test_run ();
}
