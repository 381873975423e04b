/* test-kernels-layout.c: the channels-last kernels (NhwcConv, NhwcConvTranspose, NhwcMaxPool,
 * NhwcAveragePool, NhwcGlobalAveragePool, Resize's channels-last path) against the standard NCHW ops
 * (Resize: against its general path) on random cases covering every path: 1x1 GEMM on X, im2col,
 * grouped, depthwise, dilated, strided, padded, residual and activations, on one and several threads;
 * their inference errors. With -m perf it also times NhwcConv against FusedConv. */
#include "../engine/test-util.h"
#include "../../providers/cpu/cpu-depthwise-avx512-private.h"
#include "../../providers/cpu/cpu-sgemm-private.h"

#include <math.h>
#include <string.h>

static OwbTensor *
random_tensor (int rank, const int64_t *dims, guint32 seed)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, rank, dims, NULL);
  GRand *r = g_rand_new_with_seed (seed);
  float *d = t->data;
  for (int64_t i = 0; i < t->nelems; i++)
    d[i] = (float) g_rand_double_range (r, -1, 1);
  g_rand_free (r);
  return t;
}

/* perm (0, 2, 3, 1) when to_nhwc, else (0, 3, 1, 2), of a 4-D tensor. */
static OwbTensor *
permute (const OwbTensor *t, gboolean to_nhwc)
{
  const int64_t *d = t->dims;
  int64_t nd[4] = { d[0], to_nhwc ? d[2] : d[3], to_nhwc ? d[3] : d[1], to_nhwc ? d[1] : d[2] };
  OwbTensor *o = owb_tensor_new (OWB_TYPE_FLOAT, 4, nd, NULL);
  const float *s = t->data;
  float *p = o->data;
  for (int64_t a = 0; a < nd[0]; a++)
    for (int64_t b = 0; b < nd[1]; b++)
      for (int64_t c = 0; c < nd[2]; c++)
        for (int64_t e = 0; e < nd[3]; e++)
          {
            int64_t src = to_nhwc ? ((a * d[1] + e) * d[2] + b) * d[3] + c : ((a * d[1] + c) * d[2] + e) * d[3] + b;
            p[((a * nd[1] + b) * nd[2] + c) * nd[3] + e] = s[src];
          }
  return o;
}

/* [M, C/g, kH, kW] -> [kH, kW, C/g, M] */
static OwbTensor *
weight_to_nhwc (const OwbTensor *w)
{
  int64_t M = w->dims[0], Cg = w->dims[1], KH = w->dims[2], KW = w->dims[3];
  int64_t nd[4] = { KH, KW, Cg, M };
  OwbTensor *o = owb_tensor_new (OWB_TYPE_FLOAT, 4, nd, NULL);
  const float *s = w->data;
  float *p = o->data;
  for (int64_t m = 0; m < M; m++)
    for (int64_t c = 0; c < Cg; c++)
      for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++)
          p[((kh * KW + kw) * Cg + c) * M + m] = s[((m * Cg + c) * KH + kh) * KW + kw];
  return o;
}

/* A model of one node reading `inputs` (tensors given): graph inputs fed at run time, except those
 * in const_mask (bit i for input i), which are initializers (so that kernels may prepack them). */
static OwbModel *
one_node_model_const (const char *op, const char *domain, int n_in, OwbTensor *const *inputs,
                      const char *const *names, guint const_mask, OwbNode **node)
{
  OwbModel *m = tu_model_new (17);
  owb_model_set_opset (m, OWB_DOMAIN, 1);
  GString *ins = g_string_new (NULL);
  for (int i = 0; i < n_in; i++)
    {
      g_string_append_printf (ins, "%s%s", i ? "," : "", inputs[i] ? names[i] : "");
      if (inputs[i] && (const_mask & (1u << i)))
        owb_graph_add_initializer (m->graph, names[i], owb_tensor_ref (inputs[i]));
      else if (inputs[i])
        tu_add_value (m->graph->inputs, names[i], OWB_TYPE_FLOAT, inputs[i]->rank, inputs[i]->dims, NULL);
    }
  *node = tu_node (m->graph, op, "n", ins->str, "y");
  g_free ((*node)->domain);
  (*node)->domain = g_strdup (domain);
  g_string_free (ins, TRUE);
  g_ptr_array_add (m->graph->outputs, owb_value_info_new ("y", NULL));
  return m;
}

static OwbModel *
one_node_model (const char *op, const char *domain, int n_in, OwbTensor *const *inputs, const char *const *names,
                OwbNode **node)
{
  return one_node_model_const (op, domain, n_in, inputs, names, 0, node);
}

static OwbTensor *
run_model_const (OwbModel *m, int n_in, OwbTensor *const *inputs, const char *const *names, guint const_mask,
                 int threads, int repeat, double *ms, GError **error);

static OwbTensor *
run_model (OwbModel *m, int n_in, OwbTensor *const *inputs, const char *const *names, int threads, int repeat,
           double *ms, GError **error)
{
  return run_model_const (m, n_in, inputs, names, 0, threads, repeat, ms, error);
}

static OwbTensor *
run_model_const (OwbModel *m, int n_in, OwbTensor *const *inputs, const char *const *names, guint const_mask,
                 int threads, int repeat, double *ms, GError **error)
{
  OwbSession *s = tu_session (m, threads, error);
  if (!s)
    return NULL;
  const char *feed_names[8];
  OwbTensor *feeds[8];
  int n = 0;
  for (int i = 0; i < n_in; i++)
    if (inputs[i] && !(const_mask & (1u << i)))
      {
        feed_names[n] = names[i];
        feeds[n++] = inputs[i];
      }
  const char *out_name = "y";
  OwbTensor *out = NULL;
  double best = G_MAXDOUBLE;
  for (int r = 0; r < MAX (repeat, 1); r++)
    {
      if (out)
        owb_tensor_unref (out);
      out = NULL;
      gint64 t0 = g_get_monotonic_time ();
      if (!owb_session_run (s, n, feed_names, feeds, 1, &out_name, &out, NULL, NULL, error))
        {
          owb_session_free (s);
          return NULL;
        }
      best = MIN (best, (g_get_monotonic_time () - t0) / 1000.0);
    }
  if (ms)
    *ms = best;
  owb_session_free (s);
  return out;
}

static void
assert_close (const OwbTensor *a, const OwbTensor *b, double tol, const char *what)
{
  g_assert_cmpint (a->nelems, ==, b->nelems);
  const float *x = a->data, *y = b->data;
  double max_err = 0;
  for (int64_t i = 0; i < a->nelems; i++)
    {
      double e = fabs ((double) x[i] - y[i]) / (1 + fabs ((double) y[i]));
      if (!(e <= max_err))
        max_err = isnan (e) ? INFINITY : e;
    }
  if (!(max_err <= tol))
    g_error ("%s: max relative error %g > %g", what, max_err, tol);
}

typedef struct {
  const char *what;
  int64_t n, c, h, w, m, group, kh, kw, stride, pad, dilation;
  const char *act;
  gboolean bias, residual;
  const char *auto_pad;
  int threads;
} ConvCase;

static const ConvCase conv_cases[] = {
  { "1x1 direct", 1, 16, 9, 7, 24, 1, 1, 1, 1, 0, 1, "Relu", TRUE, FALSE, NULL, 1 },
  { "1x1 direct, residual, threads", 2, 32, 8, 8, 48, 1, 1, 1, 1, 0, 1, "HardSwish", TRUE, TRUE, NULL, 3 },
  { "1x1 strided", 1, 8, 9, 9, 12, 1, 1, 1, 2, 0, 1, NULL, TRUE, FALSE, NULL, 1 },
  { "3x3 padded", 1, 8, 10, 11, 16, 1, 3, 3, 1, 1, 1, "Clip", TRUE, FALSE, NULL, 2 },
  { "7x7 stride 2 RGB stem", 1, 3, 32, 32, 16, 1, 7, 7, 2, 3, 1, "Relu", TRUE, FALSE, NULL, 2 },
  { "3x3 dilated", 1, 6, 12, 12, 10, 1, 3, 3, 1, 2, 2, "LeakyRelu", FALSE, FALSE, NULL, 1 },
  { "3x3 grouped", 2, 8, 7, 9, 12, 4, 3, 3, 1, 1, 1, "Sigmoid", TRUE, TRUE, NULL, 2 },
  { "1x1 grouped", 1, 8, 5, 5, 8, 2, 1, 1, 1, 0, 1, NULL, TRUE, FALSE, NULL, 1 },
  /* the direct grouped kernel: 4 (and 2) channels per group, lanes permuted within a vector; 8 and
   * 16 per group, inputs broadcast; strided, dilated, residual, a row not a multiple of 4 pixels */
  { "3x3 32 groups of 4", 1, 128, 9, 11, 128, 32, 3, 3, 1, 1, 1, "Relu", TRUE, TRUE, NULL, 2 },
  { "3x3 groups of 2, stride 2", 2, 16, 9, 7, 16, 8, 3, 3, 2, 1, 1, NULL, FALSE, FALSE, NULL, 1 },
  { "3x3 groups of 8, dilated", 1, 64, 10, 13, 64, 8, 3, 3, 1, 2, 2, "HardSwish", TRUE, FALSE, NULL, 3 },
  { "3x3 groups of 16, stride 2", 1, 64, 11, 10, 64, 4, 3, 3, 2, 1, 1, "Sigmoid", TRUE, TRUE, NULL, 2 },
  /* the broadcast kernel's edges: rows of fewer than 8 pixels and not a multiple of 8, padding 2,
   * M not a multiple of 16 (8 lanes on AVX-512), one group of 16 per vector, no bias */
  { "3x3 groups of 8, stride 2, pad 2", 2, 24, 13, 19, 24, 3, 3, 3, 2, 2, 1, "Relu", TRUE, TRUE, NULL, 2 },
  { "3x3 groups of 16, dilated 3", 1, 32, 12, 5, 32, 2, 3, 3, 1, 3, 3, NULL, FALSE, FALSE, NULL, 1 },
  { "3x3 groups of 8, 1 pixel wide", 1, 16, 6, 1, 16, 2, 3, 3, 1, 1, 1, "Clip", FALSE, TRUE, NULL, 1 },
  /* blocks of two vectors a group (32 a group; 16 in 8 lanes), rows cut into equal blocks (15 and
   * 29 pixels), 48 a group (one vector a block in 16 lanes, two in 8), 16 in and 32 out a group,
   * 64 a group (the largest broadcast), and 7 rows split by channels over 3 threads */
  { "3x3 groups of 32, stride 2", 1, 64, 9, 10, 64, 2, 3, 3, 2, 1, 1, "Relu", TRUE, TRUE, NULL, 2 },
  { "3x3 groups of 48, 15 pixels", 1, 96, 5, 15, 96, 2, 3, 3, 1, 1, 1, "HardSigmoid", TRUE, FALSE, NULL, 1 },
  { "3x3 groups of 16 to 32, 29 pixels", 2, 32, 4, 29, 64, 2, 3, 3, 1, 1, 1, NULL, FALSE, TRUE, NULL, 2 },
  { "3x3 groups of 64, dilated", 1, 128, 6, 9, 128, 2, 3, 3, 1, 2, 2, "Relu", TRUE, FALSE, NULL, 1 },
  { "3x3 32 groups of 16, 7x7, threads", 1, 512, 7, 7, 512, 32, 3, 3, 1, 1, 1, "Relu", TRUE, TRUE, NULL, 3 },
  { "depthwise 3x3", 1, 40, 10, 10, 40, 40, 3, 3, 1, 1, 1, "Relu", TRUE, FALSE, NULL, 2 },
  { "depthwise 5x5 stride 2", 2, 72, 13, 11, 72, 72, 5, 5, 2, 2, 1, "Swish", TRUE, TRUE, NULL, 3 },
  /* the stride-1 sliding window of four pixels over 8 channels, then 4 channels pixel by pixel */
  { "depthwise 5x5, 20 channels", 1, 20, 12, 14, 20, 20, 5, 5, 1, 2, 1, "HardSwish", TRUE, TRUE, NULL, 2 },
  /* four pixels at a time with dilation (not the sliding window) */
  { "depthwise 3x3 dilated, 24 channels", 1, 24, 13, 15, 24, 24, 3, 3, 1, 2, 2, NULL, FALSE, FALSE, NULL, 1 },
  { "depthwise dilated", 1, 5, 9, 9, 5, 5, 3, 3, 1, 2, 2, "Tanh", FALSE, FALSE, NULL, 1 },
  /* the vector activation pass and residual add with tails (19 channels is 2 vectors and 3 values
   * per pixel) */
  { "depthwise 3x3 stride 2, LeakyRelu", 1, 19, 11, 9, 19, 19, 3, 3, 2, 1, 1, "LeakyRelu", TRUE, TRUE, NULL, 2 },
  /* four pixels at a time over two vectors then one (24 channels), one only (8), one then 4 single
   * channels (12) */
  { "depthwise 3x3 stride 2, 24 channels", 1, 24, 9, 21, 24, 24, 3, 3, 2, 1, 1, "Relu", TRUE, FALSE, NULL, 2 },
  { "depthwise 3x3 stride 2, 8 channels", 2, 8, 7, 19, 8, 8, 3, 3, 2, 1, 1, NULL, TRUE, TRUE, NULL, 1 },
  { "depthwise 5x5 stride 2, 12 channels", 1, 12, 11, 23, 12, 12, 5, 5, 2, 2, 1, "HardSwish", FALSE, FALSE, NULL, 1 },
  { "depthwise 3x3, HardSigmoid", 2, 19, 6, 7, 19, 19, 3, 3, 1, 1, 1, "HardSigmoid", FALSE, TRUE, NULL, 1 },
  { "depthwise 3x3, Clip", 1, 33, 5, 6, 33, 33, 3, 3, 1, 1, 1, "Clip", TRUE, FALSE, NULL, 1 },
  /* AVX-512: two vectors, one, then a masked 8 (56 channels); a 7-wide kernel (no constant width) */
  { "depthwise 3x3, Swish, 56 channels", 1, 56, 9, 13, 56, 56, 3, 3, 1, 1, 1, "Swish", TRUE, FALSE, NULL, 2 },
  { "depthwise 7x7, Sigmoid, 48 channels", 1, 48, 12, 12, 48, 48, 7, 7, 1, 3, 1, "Sigmoid", TRUE, FALSE, NULL, 1 },
  /* border pixels four at a time on a zero-bordered copy: no pixel of a 7x7 image is inside 5x5
   * taps; an image narrower than four pixels' taps */
  { "depthwise 5x5 on 7x7, 40 channels", 1, 40, 7, 7, 40, 40, 5, 5, 1, 2, 1, "Relu", TRUE, FALSE, NULL, 2 },
  { "depthwise 3x3 stride 2 on 5x3", 1, 17, 5, 3, 17, 17, 3, 3, 2, 1, 1, "HardSwish", TRUE, TRUE, NULL, 1 },
  { "channel multiplier", 1, 4, 6, 6, 8, 4, 3, 3, 1, 1, 1, "HardSigmoid", TRUE, FALSE, NULL, 1 },
  { "small image, split channels", 1, 64, 7, 7, 256, 1, 3, 3, 1, 1, 1, "Gelu", TRUE, TRUE, NULL, 4 },
  { "SAME_UPPER stride 2", 1, 5, 9, 8, 7, 1, 3, 3, 2, 0, 1, "FastGelu", TRUE, FALSE, "SAME_UPPER", 2 },
  { "no padding 5x5", 1, 4, 8, 8, 6, 1, 5, 5, 1, 0, 1, NULL, FALSE, FALSE, NULL, 1 },
  /* up to 4 input channels, packed: the direct kernel (cpu-direct-conv.c). Full 16-wide panels and an
   * 8-wide tail panel cut short (M 40 = 16 + 16 + 8, M 21 = 16 + a 5-column cut of 16, M 5), rows
   * shorter than one 6-pixel tile, borders on every side, dilation, asymmetric SAME padding */
  { "direct 3x3 stride 2 RGB", 2, 3, 23, 19, 40, 1, 3, 3, 2, 1, 1, "HardSwish", TRUE, TRUE, NULL, 2 },
  { "direct 7x7 stride 2, 21 channels", 1, 3, 17, 29, 21, 1, 7, 7, 2, 3, 1, "Relu", TRUE, FALSE, NULL, 3 },
  { "direct 5x5 dilated, 1 channel", 1, 1, 14, 16, 5, 1, 5, 5, 1, 3, 2, "Sigmoid", FALSE, TRUE, NULL, 1 },
  { "direct 3x1 rows of 4 pixels", 1, 2, 9, 4, 24, 1, 3, 1, 1, 1, 1, NULL, TRUE, FALSE, NULL, 1 },
  { "direct SAME_UPPER stride 2", 1, 4, 10, 13, 16, 1, 4, 4, 2, 0, 1, "Clip", FALSE, FALSE, "SAME_UPPER", 2 },
  { "direct kernel wider than the image", 1, 3, 5, 3, 8, 1, 5, 5, 1, 2, 1, NULL, TRUE, TRUE, NULL, 1 },
  /* AVX-512: four 16-wide panels per tile (64), four with the last cut to 12 columns (60), two with
   * the last cut to 13 (29); rows longer than one tile of 6 or 12 pixels */
  { "direct 3x3, 64 channels", 1, 3, 13, 17, 64, 1, 3, 3, 1, 1, 1, "Relu", TRUE, TRUE, NULL, 2 },
  { "direct 5x5 stride 2, 60 channels", 1, 3, 15, 14, 60, 1, 5, 5, 2, 2, 1, NULL, TRUE, FALSE, NULL, 1 },
  { "direct 3x3, 29 channels", 1, 2, 9, 30, 29, 1, 3, 3, 1, 1, 1, "Clip", FALSE, TRUE, NULL, 2 },
};

static void
set_conv_attributes (OwbNode *node, const ConvCase *cc)
{
  int64_t k[2] = { cc->kh, cc->kw }, s[2] = { cc->stride, cc->stride }, d[2] = { cc->dilation, cc->dilation };
  int64_t p[4] = { cc->pad, cc->pad, cc->pad, cc->pad };
  tu_set_ints (node, "kernel_shape", 2, k);
  tu_set_ints (node, "strides", 2, s);
  tu_set_ints (node, "dilations", 2, d);
  if (cc->auto_pad)
    tu_set_string (node, "auto_pad", cc->auto_pad);
  else
    tu_set_ints (node, "pads", 4, p);
  tu_set_int (node, "group", cc->group);
  if (cc->act)
    tu_set_string (node, "activation", cc->act);
}

/* FusedConv on NCHW and NhwcConv on NHWC copies of the same data, NhwcConv twice: W fed at run time
 * (OpenBLAS on W as it is) and W an initializer (packed once for cpu-sgemm.c); both must match. */
static void
run_conv_case (const ConvCase *cc, int repeat, double *ms_fused, double *ms_nhwc, double *ms_packed)
{
  int64_t xd[4] = { cc->n, cc->c, cc->h, cc->w }, wd[4] = { cc->m, cc->c / cc->group, cc->kh, cc->kw };
  int64_t bd[1] = { cc->m };
  g_autoptr (OwbTensor) x = random_tensor (4, xd, 1);
  g_autoptr (OwbTensor) w = random_tensor (4, wd, 2);
  g_autoptr (OwbTensor) b = cc->bias ? random_tensor (1, bd, 3) : NULL;
  const char *names[4] = { "x", "w", "b", "z" };
  g_autoptr (GError) error = NULL;

  /* the output shape, from a plain run without residual */
  OwbTensor *in0[3] = { x, w, b };
  OwbNode *node;
  g_autoptr (OwbModel) m0 = one_node_model ("FusedConv", OWB_DOMAIN, 3, in0, names, &node);
  set_conv_attributes (node, cc);
  g_autoptr (OwbTensor) y0 = run_model (m0, 3, in0, names, 1, 1, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (OwbTensor) z = cc->residual ? random_tensor (4, y0->dims, 4) : NULL;

  OwbTensor *in1[4] = { x, w, b, z };
  g_autoptr (OwbModel) m1 = one_node_model ("FusedConv", OWB_DOMAIN, 4, in1, names, &node);
  set_conv_attributes (node, cc);
  g_autoptr (OwbTensor) ref = run_model (m1, 4, in1, names, cc->threads, repeat, ms_fused, &error);
  g_assert_no_error (error);

  g_autoptr (OwbTensor) xn = permute (x, TRUE);
  g_autoptr (OwbTensor) wn = weight_to_nhwc (w);
  g_autoptr (OwbTensor) zn = z ? permute (z, TRUE) : NULL;
  OwbTensor *in2[4] = { xn, wn, b, zn };
  OwbTensor *in3[4] = { x, wn, b, zn };
  /* variants: W fed or packed, X NHWC or (nchw_input) NCHW */
  for (int variant = 0; variant < 4; variant++)
    {
      gboolean packed = variant & 1, nchw = variant >> 1;
      guint const_mask = packed ? 1u << 1 : 0;
      g_autoptr (OwbModel) m2 = one_node_model_const ("NhwcConv", OWB_DOMAIN, 4, nchw ? in3 : in2, names, const_mask, &node);
      set_conv_attributes (node, cc);
      if (nchw)
        tu_set_int (node, "nchw_input", 1);
      g_autoptr (OwbTensor) yn
        = run_model_const (m2, 4, nchw ? in3 : in2, names, const_mask, cc->threads, repeat,
                           nchw ? NULL : packed ? ms_packed : ms_nhwc, &error);
      g_assert_no_error (error);
      g_autoptr (OwbTensor) got = permute (yn, FALSE);
      g_assert_cmpint (memcmp (got->dims, ref->dims, sizeof (int64_t) * 4), ==, 0);
      /* sums of K = C/group kH kW products in another order: rounding grows with sqrt (K); a packed
       * 3x3 stride-1 convolution on a large image runs Winograd's F(4x4, 3x3), whose transforms
       * scale by up to 5 and 1/24 and cost about ten times that (cpu-winograd.c) */
      gboolean winograd = packed && cc->kh == 3 && cc->kw == 3 && cc->stride == 1 && cc->dilation == 1
                          && cc->group == 1;
      char *what = g_strdup_printf ("%s%s%s", cc->what, packed ? " (packed W)" : "", nchw ? " (NCHW X)" : "");
      assert_close (got, ref, (winograd ? 1e-5 : 1e-6) * MAX (sqrt ((double) wd[1] * cc->kh * cc->kw), 10), what);
      g_free (what);
    }
}

static void
test_nhwc_conv_matches_conv (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (conv_cases); i++)
    run_conv_case (&conv_cases[i], 1, NULL, NULL, NULL);
}

/* The same with the 8-lane depthwise rows and the AVX2 GEMM tile, which a CPU with AVX-512 would
 * otherwise not run. */
static void
test_nhwc_conv_matches_conv_8_lanes (void)
{
  if (!_owb_cpu_dw_avx512_usable () && !_owb_sgemm_uses_avx512 ())
    {
      g_test_skip ("this CPU has no AVX-512: the 8-lane code ran above");
      return;
    }
  _owb_cpu_dw_avx512_force_off (TRUE);
  _owb_sgemm_force_avx2 (TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (conv_cases); i++)
    run_conv_case (&conv_cases[i], 1, NULL, NULL, NULL);
  _owb_cpu_dw_avx512_force_off (FALSE);
  _owb_sgemm_force_avx2 (FALSE);
}

/* NhwcConv against FusedConv on the convolutions CNNs spend their time in (-m perf). */
static void
test_nhwc_conv_speed (void)
{
  if (!g_test_perf ())
    {
      g_test_skip ("timing only with -m perf");
      return;
    }
  static const ConvCase cases[] = {
    { "resnet 3x3 56x56x64", 1, 64, 56, 56, 64, 1, 3, 3, 1, 1, 1, "Relu", TRUE, FALSE, NULL, 1 },
    { "resnet 3x3 14x14x256", 1, 256, 14, 14, 256, 1, 3, 3, 1, 1, 1, "Relu", TRUE, FALSE, NULL, 1 },
    { "resnet stem 7x7/2", 1, 3, 224, 224, 64, 1, 7, 7, 2, 3, 1, "Relu", TRUE, FALSE, NULL, 1 },
    { "1x1 56x56 64->256", 1, 64, 56, 56, 256, 1, 1, 1, 1, 0, 1, NULL, TRUE, FALSE, NULL, 1 },
    { "1x1 14x14 480->80", 1, 480, 14, 14, 80, 1, 1, 1, 1, 0, 1, NULL, TRUE, FALSE, NULL, 1 },
    { "1x1 7x7 960->160", 1, 960, 7, 7, 160, 1, 1, 1, 1, 0, 1, NULL, TRUE, FALSE, NULL, 1 },
    { "dw 3x3 112x112x32", 1, 32, 112, 112, 32, 32, 3, 3, 1, 1, 1, "Relu", TRUE, FALSE, NULL, 1 },
    { "dw 3x3/2 56x56x144", 1, 144, 56, 56, 144, 144, 3, 3, 2, 1, 1, "Swish", TRUE, FALSE, NULL, 1 },
    { "dw 5x5 14x14x672", 1, 672, 14, 14, 672, 672, 5, 5, 1, 2, 1, "HardSwish", TRUE, FALSE, NULL, 1 },
    { "1x1 56x56 24->144 Swish", 1, 24, 56, 56, 144, 1, 1, 1, 1, 0, 1, "Swish", TRUE, FALSE, NULL, 1 },
    { "1x1 56x56 144->24", 1, 144, 56, 56, 24, 1, 1, 1, 1, 0, 1, NULL, TRUE, FALSE, NULL, 1 },
    { "1x1 112x112 16->96 Swish", 1, 16, 112, 112, 96, 1, 1, 1, 1, 0, 1, "Swish", TRUE, FALSE, NULL, 1 },
    { "dw 3x3 56x56x144 Swish", 1, 144, 56, 56, 144, 144, 3, 3, 1, 1, 1, "Swish", TRUE, FALSE, NULL, 1 },
    { "dw 3x3 56x56x144", 1, 144, 56, 56, 144, 144, 3, 3, 1, 1, 1, NULL, TRUE, FALSE, NULL, 1 },
    { "1x1 56x56 24->144", 1, 24, 56, 56, 144, 1, 1, 1, 1, 0, 1, NULL, TRUE, FALSE, NULL, 1 },
    { "resnet 3x3 28x28x128", 1, 128, 28, 28, 128, 1, 3, 3, 1, 1, 1, "Relu", TRUE, FALSE, NULL, 1 },
    { "resnet 3x3 7x7x512", 1, 512, 7, 7, 512, 1, 3, 3, 1, 1, 1, "Relu", TRUE, TRUE, NULL, 1 },
    { "resnet 3x3 56x56x64 2 thr", 1, 64, 56, 56, 64, 1, 3, 3, 1, 1, 1, "Relu", TRUE, FALSE, NULL, 2 },
    { "resnet 3x3 28x28x128 2 thr", 1, 128, 28, 28, 128, 1, 3, 3, 1, 1, 1, "Relu", TRUE, FALSE, NULL, 2 },
    { "resnet 3x3 14x14x256 2 thr", 1, 256, 14, 14, 256, 1, 3, 3, 1, 1, 1, "Relu", TRUE, FALSE, NULL, 2 },
    { "resnet 3x3 7x7x512 2 thr", 1, 512, 7, 7, 512, 1, 3, 3, 1, 1, 1, "Relu", TRUE, TRUE, NULL, 2 },
    { "resnet stem 7x7/2 2 thr", 1, 3, 224, 224, 64, 1, 7, 7, 2, 3, 1, "Relu", TRUE, FALSE, NULL, 2 },
    { "1x1 14x14 480->80 2 thr", 1, 480, 14, 14, 80, 1, 1, 1, 1, 0, 1, NULL, TRUE, FALSE, NULL, 2 },
    { "dw 3x3 112x112x32 2 thr", 1, 32, 112, 112, 32, 32, 3, 3, 1, 1, 1, "Relu", TRUE, FALSE, NULL, 2 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const ConvCase *cc = &cases[i];
      double a, b, c;
      run_conv_case (cc, 15, &a, &b, &c);
      int64_t oh = (cc->h + 2 * cc->pad - cc->dilation * (cc->kh - 1) - 1) / cc->stride + 1;
      int64_t ow = (cc->w + 2 * cc->pad - cc->dilation * (cc->kw - 1) - 1) / cc->stride + 1;
      double gflop = 2e-9 * cc->n * oh * ow * cc->m * (cc->c / cc->group) * cc->kh * cc->kw;
      char *line = g_strdup_printf ("%-28s FusedConv %8.3f ms  NhwcConv %8.3f ms (%5.1f GFLOP/s)  packed W %8.3f ms "
                                    "(%5.1f GFLOP/s)", cc->what, a, b, gflop / b * 1e3, c, gflop / c * 1e3);
      g_test_message ("%s", line);
      g_printerr ("%s\n", line);
      g_free (line);
    }
}

/* ---- pools ---- */

typedef struct {
  const char *op;
  int64_t k, stride, pad, dilation;
  gboolean ceil_mode, include_pad;
  const char *auto_pad;
} PoolCase;

static void
test_nhwc_pools_match (void)
{
  static const PoolCase cases[] = {
    { "MaxPool", 3, 2, 1, 1, FALSE, FALSE, NULL },     { "MaxPool", 2, 2, 0, 1, FALSE, FALSE, NULL },
    { "MaxPool", 3, 2, 0, 1, TRUE, FALSE, NULL },      { "MaxPool", 3, 1, 2, 2, FALSE, FALSE, NULL },
    { "AveragePool", 3, 1, 1, 1, FALSE, FALSE, NULL }, { "AveragePool", 3, 1, 1, 1, FALSE, TRUE, NULL },
    { "AveragePool", 3, 2, 1, 1, TRUE, TRUE, NULL },   { "AveragePool", 2, 2, 0, 1, TRUE, FALSE, NULL },
    { "MaxPool", 3, 2, 0, 1, FALSE, FALSE, "SAME_UPPER" }, { "AveragePool", 3, 2, 0, 1, FALSE, FALSE, "SAME_LOWER" },
  };
  /* 6 channels: one at a time; 45: vectors of 32 and 8, then 5 single ones, with NaNs in the
   * second image that must come out as the NCHW op has them */
  for (int ci = 0; ci < 2; ci++)
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      int64_t xd[4] = { 2, ci ? 45 : 6, 9, 10 };
      g_autoptr (OwbTensor) x = random_tensor (4, xd, 7);
      if (ci)
        {
          /* scattered ones, and all of channel 40 (a vector's lane) of the second image */
          for (int64_t e = x->nelems / 2; e < x->nelems; e += 97)
            ((float *) x->data)[e] = NAN;
          for (int64_t e = 0; e < 90; e++)
            ((float *) x->data)[(45 + 40) * 90 + e] = NAN;
        }
      g_autoptr (OwbTensor) xn = permute (x, TRUE);
      const char *names[1] = { "x" };
      const PoolCase *pc = &cases[i];
      OwbTensor *results[2];
      for (int v = 0; v < 2; v++)
        {
          OwbNode *node;
          OwbTensor *in[1] = { v ? xn : x };
          char *op = g_strconcat (v ? "Nhwc" : "", pc->op, NULL);
          g_autoptr (OwbModel) m = one_node_model (op, v ? OWB_DOMAIN : "", 1, in, names, &node);
          g_free (op);
          int64_t k[2] = { pc->k, pc->k }, s[2] = { pc->stride, pc->stride }, d[2] = { pc->dilation, pc->dilation };
          int64_t p[4] = { pc->pad, pc->pad, pc->pad, pc->pad };
          tu_set_ints (node, "kernel_shape", 2, k);
          tu_set_ints (node, "strides", 2, s);
          if (pc->dilation != 1)
            tu_set_ints (node, "dilations", 2, d);
          if (pc->auto_pad)
            tu_set_string (node, "auto_pad", pc->auto_pad);
          else
            tu_set_ints (node, "pads", 4, p);
          tu_set_int (node, "ceil_mode", pc->ceil_mode);
          if (strcmp (pc->op, "AveragePool") == 0)
            tu_set_int (node, "count_include_pad", pc->include_pad);
          g_autoptr (GError) error = NULL;
          results[v] = run_model (m, 1, in, names, 2, 1, NULL, &error);
          g_assert_no_error (error);
        }
      g_autoptr (OwbTensor) got = permute (results[1], FALSE);
      if (memcmp (got->dims, results[0]->dims, sizeof (int64_t) * 4) != 0)
        g_error ("%s case %u: shape %s, NCHW op gives %s", pc->op, i, owb_tensor_shape_to_string (got),
                 owb_tensor_shape_to_string (results[0]));
      char *what = g_strdup_printf ("%s case %u, %" G_GINT64_FORMAT " channels", pc->op, i, xd[1]);
      float *gv = got->data, *rv = results[0]->data;
      int64_t nans = 0;
      for (int64_t e = 0; e < got->nelems; e++)
        {
          if (isnan (gv[e]) != isnan (rv[e]))
            g_error ("%s: element %" G_GINT64_FORMAT " is %g, the NCHW op gives %g", what, e, gv[e], rv[e]);
          if (isinf (gv[e]) || isinf (rv[e]))
            {
              if (gv[e] != rv[e])
                g_error ("%s: element %" G_GINT64_FORMAT " is %g, the NCHW op gives %g", what, e, gv[e], rv[e]);
              gv[e] = rv[e] = 0;
            }
          if (isnan (gv[e]))
            {
              gv[e] = rv[e] = 0;
              nans++;
            }
        }
      /* the averages of windows with NaNs are NaN; MaxPool skips them (a window of NaNs: -inf) */
      if (ci && strcmp (pc->op, "AveragePool") == 0)
        g_assert_cmpint (nans, >, 0);
      assert_close (got, results[0], 1e-6, what);
      g_free (what);
      owb_tensor_unref (results[0]);
      owb_tensor_unref (results[1]);
    }
}

/* Against GlobalAveragePool: several images per thread; one image split in parts over 2 and 3
 * threads (pixel counts that are not multiples of the 64-pixel blocks); partial sums past the stack
 * buffer (2 parts x 4200 channels). 37 and 4200 channels: vectors of 32 and a tail; 24, 40 and 45:
 * single vectors of 8 over pixel counts that are not multiples of 4, then (45) a tail. */
static void
test_nhwc_global_average_pool (void)
{
  static const struct { int64_t n, c, h, w; int threads; } cases[] = {
    { 3, 37, 4, 7, 2 }, { 1, 37, 13, 11, 2 }, { 1, 96, 17, 23, 3 }, { 2, 40, 12, 12, 3 }, { 1, 4200, 9, 15, 2 },
    { 1, 24, 7, 9, 1 },  { 2, 45, 5, 5, 2 },  { 1, 24, 13, 11, 2 },
  };
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      int64_t xd[4] = { cases[k].n, cases[k].c, cases[k].h, cases[k].w };
      g_autoptr (OwbTensor) x = random_tensor (4, xd, 9);
      g_autoptr (OwbTensor) xn = permute (x, TRUE);
      const char *names[1] = { "x" };
      OwbNode *node;
      OwbTensor *in[1] = { x }, *inn[1] = { xn };
      g_autoptr (OwbModel) m = one_node_model ("GlobalAveragePool", "", 1, in, names, &node);
      g_autoptr (OwbModel) mn = one_node_model ("NhwcGlobalAveragePool", OWB_DOMAIN, 1, inn, names, &node);
      g_autoptr (GError) error = NULL;
      g_autoptr (OwbTensor) ref = run_model (m, 1, in, names, 1, 1, NULL, &error);
      g_assert_no_error (error);
      g_autoptr (OwbTensor) got = run_model (mn, 1, inn, names, cases[k].threads, 1, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (got->dims[1], ==, 1);
      g_assert_cmpint (got->dims[2], ==, 1);
      g_assert_cmpint (got->dims[3], ==, cases[k].c);
      /* [N,1,1,C] and [N,C,1,1] share their memory order */
      assert_close (got, ref, 1e-6, "GlobalAveragePool");
    }
}

/* ---- NhwcConvTranspose ---- */

/* [C, M/g, kH, kW] -> [C, kH, kW, M/g] */
static OwbTensor *
transpose_weight_to_nhwc (const OwbTensor *w)
{
  int64_t C = w->dims[0], Mg = w->dims[1], KH = w->dims[2], KW = w->dims[3];
  int64_t nd[4] = { C, KH, KW, Mg };
  OwbTensor *o = owb_tensor_new (OWB_TYPE_FLOAT, 4, nd, NULL);
  const float *s = w->data;
  float *p = o->data;
  for (int64_t c = 0; c < C; c++)
    for (int64_t m = 0; m < Mg; m++)
      for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++)
          p[((c * KH + kh) * KW + kw) * Mg + m] = s[((c * Mg + m) * KH + kh) * KW + kw];
  return o;
}

typedef struct {
  const char *what;
  int64_t n, c, h, w, m, group, kh, kw, sh, sw, pad, dilation, out_pad;
  gboolean bias;
  const char *auto_pad;
  int64_t out_h, out_w; /* output_shape when > 0 */
  int threads;
} DeconvCase;

static const DeconvCase deconv_cases[] = {
  { "k2 s2 (unet, direct)", 1, 16, 5, 7, 32, 1, 2, 2, 2, 2, 0, 1, 0, TRUE, NULL, 0, 0, 2 },
  { "k2 s2 no bias, batch, direct", 2, 8, 4, 3, 24, 1, 2, 2, 2, 2, 0, 1, 0, FALSE, NULL, 0, 0, 3 },
  { "k3 s3 direct, odd channels", 1, 5, 3, 4, 7, 1, 3, 3, 3, 3, 0, 1, 0, TRUE, NULL, 0, 0, 1 },
  { "k1 s1", 1, 6, 5, 5, 9, 1, 1, 1, 1, 1, 0, 1, 0, TRUE, NULL, 0, 0, 1 },
  { "k3 s1 pad 1", 1, 8, 6, 5, 12, 1, 3, 3, 1, 1, 1, 1, 0, TRUE, NULL, 0, 0, 2 },
  { "k3 s2 pad 1 output_padding 1", 2, 6, 5, 6, 10, 1, 3, 3, 2, 2, 1, 1, 1, TRUE, NULL, 0, 0, 3 },
  { "k4 s2 pad 1", 1, 12, 7, 7, 20, 1, 4, 4, 2, 2, 1, 1, 0, FALSE, NULL, 0, 0, 2 },
  { "k2 s3 (gaps)", 1, 4, 4, 5, 6, 1, 2, 2, 3, 3, 0, 1, 0, TRUE, NULL, 0, 0, 1 },
  { "k3 s1 dilation 2", 1, 5, 6, 6, 7, 1, 3, 3, 1, 1, 2, 2, 0, TRUE, NULL, 0, 0, 2 },
  { "k3 s2 dilation 2 pad 1", 1, 4, 5, 4, 4, 1, 3, 3, 2, 2, 1, 2, 1, FALSE, NULL, 0, 0, 1 },
  { "grouped k3 s2", 2, 8, 5, 5, 12, 4, 3, 3, 2, 2, 1, 1, 1, TRUE, NULL, 0, 0, 3 },
  { "grouped k2 s2 (not direct)", 1, 6, 4, 4, 9, 3, 2, 2, 2, 2, 0, 1, 0, TRUE, NULL, 0, 0, 2 },
  { "depthwise k4 s2", 1, 8, 5, 6, 8, 8, 4, 4, 2, 2, 1, 1, 0, TRUE, NULL, 0, 0, 2 },
  { "k3 x k2 s (2, 1)", 1, 6, 5, 4, 10, 1, 3, 2, 2, 1, 0, 1, 0, TRUE, NULL, 0, 0, 2 },
  { "SAME_UPPER s2", 1, 6, 5, 5, 8, 1, 3, 3, 2, 2, 0, 1, 0, TRUE, "SAME_UPPER", 0, 0, 2 },
  { "SAME_LOWER s2", 1, 6, 5, 5, 8, 1, 4, 4, 2, 2, 0, 1, 0, FALSE, "SAME_LOWER", 0, 0, 1 },
  { "output_shape", 1, 4, 4, 4, 6, 1, 3, 3, 2, 2, 0, 1, 0, TRUE, NULL, 10, 9, 2 },
  { "wide, many channels", 1, 64, 6, 70, 48, 1, 2, 2, 2, 2, 0, 1, 0, TRUE, NULL, 0, 0, 2 },
};

static void
set_deconv_attributes (OwbNode *node, const DeconvCase *dc)
{
  int64_t k[2] = { dc->kh, dc->kw }, s[2] = { dc->sh, dc->sw }, d[2] = { dc->dilation, dc->dilation };
  int64_t p[4] = { dc->pad, dc->pad, dc->pad, dc->pad }, op[2] = { dc->out_pad, dc->out_pad };
  tu_set_ints (node, "kernel_shape", 2, k);
  tu_set_ints (node, "strides", 2, s);
  tu_set_ints (node, "dilations", 2, d);
  if (dc->auto_pad)
    tu_set_string (node, "auto_pad", dc->auto_pad);
  else if (dc->out_h > 0)
    {
      int64_t os[2] = { dc->out_h, dc->out_w };
      tu_set_ints (node, "output_shape", 2, os);
    }
  else
    tu_set_ints (node, "pads", 4, p);
  if (dc->out_pad)
    tu_set_ints (node, "output_padding", 2, op);
  tu_set_int (node, "group", dc->group);
}

/* ConvTranspose on NCHW and NhwcConvTranspose on NHWC copies of the same data, the latter with W fed
 * at run time (packed per run) and as an initializer (packed once). */
static void
test_nhwc_conv_transpose_matches (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (deconv_cases); i++)
    {
      const DeconvCase *dc = &deconv_cases[i];
      int64_t xd[4] = { dc->n, dc->c, dc->h, dc->w }, wd[4] = { dc->c, dc->m / dc->group, dc->kh, dc->kw };
      int64_t bd[1] = { dc->m };
      g_autoptr (OwbTensor) x = random_tensor (4, xd, 11 + i);
      g_autoptr (OwbTensor) w = random_tensor (4, wd, 12 + i);
      g_autoptr (OwbTensor) b = dc->bias ? random_tensor (1, bd, 13 + i) : NULL;
      const char *names[3] = { "x", "w", "b" };
      g_autoptr (GError) error = NULL;
      OwbNode *node;
      OwbTensor *in0[3] = { x, w, b };
      g_autoptr (OwbModel) m0 = one_node_model ("ConvTranspose", "", 3, in0, names, &node);
      set_deconv_attributes (node, dc);
      g_autoptr (OwbTensor) ref = run_model (m0, 3, in0, names, 1, 1, NULL, &error);
      g_assert_no_error (error);

      g_autoptr (OwbTensor) xn = permute (x, TRUE);
      g_autoptr (OwbTensor) wn = transpose_weight_to_nhwc (w);
      OwbTensor *in1[3] = { xn, wn, b };
      for (int packed = 0; packed < 2; packed++)
        {
          guint const_mask = packed ? 1u << 1 : 0;
          g_autoptr (OwbModel) m1 = one_node_model_const ("NhwcConvTranspose", OWB_DOMAIN, 3, in1, names, const_mask, &node);
          set_deconv_attributes (node, dc);
          g_autoptr (OwbTensor) yn = run_model_const (m1, 3, in1, names, const_mask, dc->threads, 1, NULL, &error);
          if (error)
            g_error ("%s: %s", dc->what, error->message);
          g_autoptr (OwbTensor) got = permute (yn, FALSE);
          if (memcmp (got->dims, ref->dims, sizeof (int64_t) * 4) != 0)
            g_error ("%s: shape %s, ConvTranspose gives %s", dc->what, owb_tensor_shape_to_string (got),
                     owb_tensor_shape_to_string (ref));
          char *what = g_strdup_printf ("%s%s", dc->what, packed ? " (packed W)" : "");
          assert_close (got, ref, 1e-5, what);
          g_free (what);
        }
    }
}

static void
test_nhwc_conv_transpose_errors (void)
{
  const char *names[3] = { "x", "w", "b" };
  int64_t x4[4] = { 1, 5, 5, 8 }, w4[4] = { 8, 2, 2, 6 }, b5[1] = { 5 }, x3[3] = { 1, 5, 8 };
  g_autoptr (OwbTensor) x = random_tensor (4, x4, 1);
  g_autoptr (OwbTensor) xa = random_tensor (3, x3, 1);
  g_autoptr (OwbTensor) w = random_tensor (4, w4, 2);
  g_autoptr (OwbTensor) b = random_tensor (1, b5, 3);
  OwbNode *node;
  g_autoptr (GError) error = NULL;

  OwbTensor *in1[2] = { xa, w };
  g_autoptr (OwbModel) m1 = one_node_model ("NhwcConvTranspose", OWB_DOMAIN, 2, in1, names, &node);
  g_autoptr (OwbSession) s1 = tu_session (m1, 1, &error);
  g_assert_null (s1);
  g_assert_nonnull (strstr (error->message, "rank 4"));
  g_clear_error (&error);

  /* a bias of 5 values for 6 output channels */
  OwbTensor *in2[3] = { x, w, b };
  g_autoptr (OwbModel) m2 = one_node_model ("NhwcConvTranspose", OWB_DOMAIN, 3, in2, names, &node);
  g_autoptr (OwbSession) s2 = tu_session (m2, 1, &error);
  g_assert_null (s2);
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* 8 input channels in 3 groups */
  OwbTensor *in3[2] = { x, w };
  g_autoptr (OwbModel) m3 = one_node_model ("NhwcConvTranspose", OWB_DOMAIN, 2, in3, names, &node);
  tu_set_int (node, "group", 3);
  g_autoptr (OwbSession) s3 = tu_session (m3, 1, &error);
  g_assert_null (s3);
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* stride 2, kernel 2: [1, 5, 5, 8] -> [1, 10, 10, 6] */
  g_autoptr (OwbModel) m4 = one_node_model ("NhwcConvTranspose", OWB_DOMAIN, 2, in3, names, &node);
  int64_t s2v[2] = { 2, 2 };
  tu_set_ints (node, "strides", 2, s2v);
  g_autoptr (OwbTensor) y = run_model (m4, 2, in3, names, 1, 1, NULL, &error);
  g_assert_no_error (error);
  int64_t want[4] = { 1, 10, 10, 6 };
  g_assert_cmpint (memcmp (y->dims, want, sizeof want), ==, 0);
}

/* ---- Resize on channels-last tensors ---- */

typedef struct {
  const char *what;
  const char *mode, *coord, *nearest_mode;
  double sh, sw;        /* scales, or 0: sizes oh x ow */
  int64_t oh, ow;
  gboolean antialias;   /* opset 18 */
  gboolean exclude_outside;
  gboolean crop;        /* tf_crop_and_resize with a roi */
  OwbDataType dtype;
} ResizeCase;

/* Resize of X [N, H, W, C] (the fast path: rank 4, C not resized) and of the same data viewed as
 * [N, H, W, C, 1] (the general separable passes); both must agree. */
static OwbTensor *
run_resize (const ResizeCase *rc, const OwbTensor *x, int rank, int threads)
{
  OwbModel *m = tu_model_new (19);
  int64_t dims[5] = { x->dims[0], x->dims[1], x->dims[2], x->dims[3], 1 };
  tu_add_value (m->graph->inputs, "x", x->dtype, rank, dims, NULL);
  int64_t one[1] = { rank };
  int64_t roi_dims[1] = { 2 * rank };
  const char *inputs;
  if (rc->sh > 0)
    {
      OwbTensor *sc = owb_tensor_new (OWB_TYPE_FLOAT, 1, one, NULL);
      float *v = sc->data;
      for (int i = 0; i < rank; i++)
        v[i] = 1;
      v[1] = (float) rc->sh;
      v[2] = (float) rc->sw;
      owb_graph_add_initializer (m->graph, "scales", sc);
      inputs = rc->crop ? "x,roi,scales" : "x,,scales";
    }
  else
    {
      OwbTensor *sz = owb_tensor_new (OWB_TYPE_INT64, 1, one, NULL);
      int64_t *v = sz->data;
      for (int i = 0; i < rank; i++)
        v[i] = dims[i];
      v[1] = rc->oh;
      v[2] = rc->ow;
      owb_graph_add_initializer (m->graph, "sizes", sz);
      inputs = rc->crop ? "x,roi,,sizes" : "x,,,sizes";
    }
  if (rc->crop)
    {
      OwbTensor *roi = owb_tensor_new (OWB_TYPE_FLOAT, 1, roi_dims, NULL);
      float *v = roi->data;
      for (int i = 0; i < rank; i++)
        {
          v[i] = 0;
          v[rank + i] = 1;
        }
      v[1] = 0.2f;
      v[rank + 1] = 1.3f; /* past the edge: extrapolated */
      v[2] = -0.1f;
      v[rank + 2] = 0.7f;
      owb_graph_add_initializer (m->graph, "roi", roi);
    }
  OwbNode *node = tu_node (m->graph, "Resize", "resize", inputs, "y");
  tu_set_string (node, "mode", rc->mode);
  tu_set_string (node, "coordinate_transformation_mode", rc->coord);
  if (rc->nearest_mode)
    tu_set_string (node, "nearest_mode", rc->nearest_mode);
  if (rc->antialias)
    tu_set_int (node, "antialias", 1);
  if (rc->exclude_outside)
    tu_set_int (node, "exclude_outside", 1);
  if (rc->crop)
    owb_node_add_attribute (node, "extrapolation_value", OWB_ATTR_FLOAT)->f = 2.5f;
  g_ptr_array_add (m->graph->outputs, owb_value_info_new ("y", NULL));
  g_autoptr (GError) error = NULL;
  OwbSession *s = tu_session (m, threads, &error);
  g_assert_no_error (error);
  OwbTensor *feed = owb_tensor_ref ((OwbTensor *) x), *out = NULL;
  if (rank == 5)
    {
      owb_tensor_unref (feed);
      feed = owb_tensor_new (x->dtype, 5, dims, NULL);
      memcpy (feed->data, x->data, x->nbytes);
    }
  const char *in_name = "x", *out_name = "y";
  if (!owb_session_run (s, 1, &in_name, &feed, 1, &out_name, &out, NULL, NULL, &error))
    g_error ("%s: %s", rc->what, error->message);
  owb_tensor_unref (feed);
  owb_session_free (s);
  owb_model_unref (m);
  return out;
}

static void
test_resize_channels_last (void)
{
  static const ResizeCase cases[] = {
    { "linear half_pixel 2x (unet)", "linear", "half_pixel", NULL, 2, 2, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "linear half_pixel sizes", "linear", "half_pixel", NULL, 0, 0, 13, 7, FALSE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "linear align_corners", "linear", "align_corners", NULL, 1.5, 2.5, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "linear asymmetric", "linear", "asymmetric", NULL, 3, 2, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "linear pytorch_half_pixel", "linear", "pytorch_half_pixel", NULL, 2, 0.5, 0, 0, FALSE, FALSE, FALSE,
      OWB_TYPE_FLOAT },
    { "linear half_pixel_symmetric", "linear", "half_pixel_symmetric", NULL, 0, 0, 11, 5, FALSE, FALSE, FALSE,
      OWB_TYPE_FLOAT },
    { "linear down 0.5 (H first)", "linear", "half_pixel", NULL, 0.5, 0.5, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "linear H shrinks, W grows", "linear", "half_pixel", NULL, 0.6, 1.7, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "linear H only", "linear", "half_pixel", NULL, 2, 1, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "linear W only", "linear", "align_corners", NULL, 1, 3, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "linear antialias down", "linear", "half_pixel", NULL, 0.4, 0.6, 0, 0, TRUE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "linear tf_crop_and_resize", "linear", "tf_crop_and_resize", NULL, 0, 0, 9, 8, FALSE, FALSE, TRUE,
      OWB_TYPE_FLOAT },
    { "cubic half_pixel", "cubic", "half_pixel", NULL, 2, 1.5, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "cubic exclude_outside down", "cubic", "half_pixel", NULL, 0.7, 0.5, 0, 0, FALSE, TRUE, FALSE, OWB_TYPE_FLOAT },
    { "cubic antialias", "cubic", "half_pixel", NULL, 0.5, 0.8, 0, 0, TRUE, FALSE, FALSE, OWB_TYPE_FLOAT },
    { "nearest round_prefer_floor", "nearest", "half_pixel", "round_prefer_floor", 2, 3, 0, 0, FALSE, FALSE, FALSE,
      OWB_TYPE_FLOAT },
    { "nearest floor asymmetric", "nearest", "asymmetric", "floor", 0.5, 1.5, 0, 0, FALSE, FALSE, FALSE,
      OWB_TYPE_FLOAT },
    { "nearest ceil align_corners", "nearest", "align_corners", "ceil", 0, 0, 7, 12, FALSE, FALSE, FALSE,
      OWB_TYPE_FLOAT },
    { "nearest tf_half_pixel_for_nn", "nearest", "tf_half_pixel_for_nn", "round_prefer_ceil", 2, 2, 0, 0, FALSE,
      FALSE, FALSE, OWB_TYPE_FLOAT },
    { "nearest tf_crop_and_resize", "nearest", "tf_crop_and_resize", NULL, 0, 0, 8, 9, FALSE, FALSE, TRUE,
      OWB_TYPE_FLOAT },
    { "nearest uint8", "nearest", "half_pixel", NULL, 2, 2, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_UINT8 },
    { "nearest int64", "nearest", "asymmetric", "floor", 1.5, 0.5, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_INT64 },
    { "linear int32 (general path)", "linear", "half_pixel", NULL, 2, 2, 0, 0, FALSE, FALSE, FALSE, OWB_TYPE_INT32 },
  };
  int64_t xd[4] = { 2, 6, 5, 19 }; /* 19 channels: vectors and a tail */
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const ResizeCase *rc = &cases[i];
      OwbTensor *x = owb_tensor_new (rc->dtype, 4, xd, NULL);
      GRand *r = g_rand_new_with_seed (40 + i);
      for (int64_t k = 0; k < x->nelems; k++)
        owb_tensor_set_double (x, k, rc->dtype == OWB_TYPE_FLOAT ? g_rand_double_range (r, -1, 1)
                                                                 : g_rand_int_range (r, 0, 200));
      g_rand_free (r);
      for (int threads = 1; threads <= 3; threads += 2)
        {
          g_autoptr (OwbTensor) got = run_resize (rc, x, 4, threads);
          g_autoptr (OwbTensor) want = run_resize (rc, x, 5, 1);
          g_assert_cmpint (got->nelems, ==, want->nelems);
          for (int d = 0; d < 4; d++)
            g_assert_cmpint (got->dims[d], ==, want->dims[d]);
          g_assert_cmpint (got->dims[3], ==, xd[3]);
          g_assert_true (got->dims[1] != xd[1] || got->dims[2] != xd[2]);
          for (int64_t k = 0; k < got->nelems; k++)
            {
              double a = owb_tensor_get_double (got, k), b = owb_tensor_get_double (want, k);
              if (!(fabs (a - b) <= 1e-6 * (1 + fabs (b))))
                g_error ("%s (%d threads): element %" G_GINT64_FORMAT " is %.9g, the general path gives %.9g",
                         rc->what, threads, k, a, b);
            }
        }
      owb_tensor_unref (x);
    }
}

/* ---- inference errors ---- */

static void
test_nhwc_conv_errors (void)
{
  const char *names[2] = { "x", "w" };
  int64_t x3[3] = { 1, 8, 8 }, w4[4] = { 3, 3, 8, 4 }, x4[4] = { 1, 8, 8, 8 };
  g_autoptr (OwbTensor) xa = random_tensor (3, x3, 1);
  g_autoptr (OwbTensor) xb = random_tensor (4, x4, 1);
  g_autoptr (OwbTensor) w = random_tensor (4, w4, 2);
  OwbNode *node;
  g_autoptr (GError) error = NULL;

  OwbTensor *in1[2] = { xa, w };
  g_autoptr (OwbModel) m1 = one_node_model ("NhwcConv", OWB_DOMAIN, 2, in1, names, &node);
  g_autoptr (OwbSession) s1 = tu_session (m1, 1, &error);
  g_assert_null (s1);
  g_assert_nonnull (strstr (error->message, "rank 4"));
  g_clear_error (&error);

  OwbTensor *in2[2] = { xb, w };
  g_autoptr (OwbModel) m2 = one_node_model ("NhwcConv", OWB_DOMAIN, 2, in2, names, &node);
  tu_set_string (node, "activation", "Softmax");
  g_autoptr (OwbSession) s2 = tu_session (m2, 1, &error);
  g_assert_null (s2);
  g_assert_nonnull (strstr (error->message, "Softmax"));
  g_clear_error (&error);

  /* W's C/group (8) against X's 8 channels in 2 groups */
  g_autoptr (OwbModel) m3 = one_node_model ("NhwcConv", OWB_DOMAIN, 2, in2, names, &node);
  tu_set_int (node, "group", 2);
  g_autoptr (OwbSession) s3 = tu_session (m3, 1, &error);
  g_assert_null (s3);
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* correct shapes infer NHWC: [1, 6, 6, 4] */
  g_autoptr (OwbModel) m4 = one_node_model ("NhwcConv", OWB_DOMAIN, 2, in2, names, &node);
  g_autoptr (OwbTensor) y = run_model (m4, 2, in2, names, 1, 1, NULL, &error);
  g_assert_no_error (error);
  int64_t want[4] = { 1, 6, 6, 4 };
  g_assert_cmpint (memcmp (y->dims, want, sizeof want), ==, 0);

  g_autoptr (OwbModel) m5 = one_node_model ("NhwcConv", OWB_DOMAIN, 2, in2, names, &node);
  tu_set_int (node, "nchw_input", 2);
  g_autoptr (OwbSession) s5 = tu_session (m5, 1, &error);
  g_assert_null (s5);
  g_assert_nonnull (strstr (error->message, "nchw_input must be 0 or 1"));
  g_clear_error (&error);

  /* X [1, 8, 8, 8] read as NCHW against W's 8 channels still fits; [1, 3, 8, 8] does not */
  int64_t x5[4] = { 1, 3, 8, 8 };
  g_autoptr (OwbTensor) xc = random_tensor (4, x5, 1);
  OwbTensor *in6[2] = { xc, w };
  g_autoptr (OwbModel) m6 = one_node_model ("NhwcConv", OWB_DOMAIN, 2, in6, names, &node);
  tu_set_int (node, "nchw_input", 1);
  g_autoptr (OwbSession) s6 = tu_session (m6, 1, &error);
  g_assert_null (s6);
  g_assert_nonnull (error);
  g_clear_error (&error);
}

/* ---- NhwcPointwiseDepthwise ---- */

/* The activation `act` (Clip with bounds) under attribute names prefix + "activation"... */
static void
set_activation (OwbNode *node, const char *prefix, const char *act)
{
  if (!act)
    return;
  g_autofree char *name = g_strconcat (prefix, "activation", NULL);
  g_autofree char *params = g_strconcat (prefix, "activation_params", NULL);
  tu_set_string (node, name, act);
  if (strcmp (act, "Clip") == 0)
    tu_set_floats (node, params, 2, (const float[]) { -0.25f, 0.5f });
}

typedef struct {
  const char *what;
  int64_t n, c, e, h, w, k, stride, pad;
  const char *pw_act, *act;
  gboolean bias1, bias2, w1_const;
  int threads;
} PwDwCase;

/* Against NhwcConv 1x1 then NhwcConv depthwise: bands over threads, images over threads, tall rows
 * that keep the buffer moving its rows to the front, a stride past the kernel's height (rows
 * skipped), activations in registers and in a pass, no biases, W1 fed at run time. */
static void
test_pointwise_depthwise_matches (void)
{
  static const PwDwCase cases[] = {
    { "3x3/2, two bands", 1, 16, 64, 13, 17, 3, 2, 1, "Relu", "Relu", TRUE, TRUE, TRUE, 2 },
    { "3x3, three bands", 1, 8, 24, 11, 9, 3, 1, 1, "HardSwish", NULL, TRUE, TRUE, TRUE, 3 },
    { "5x5/2, two images, Swish", 2, 5, 40, 12, 10, 5, 2, 2, "Swish", "Swish", FALSE, TRUE, TRUE, 1 },
    { "3x3 unpadded, images over threads", 3, 12, 19, 9, 9, 3, 1, 0, "Clip", "HardSwish", TRUE, FALSE, TRUE, 2 },
    { "W1 fed at run time", 1, 7, 16, 6, 30, 3, 1, 1, "Relu", "Clip", TRUE, TRUE, FALSE, 2 },
    { "rows wider than the buffer", 1, 4, 256, 10, 200, 3, 1, 1, NULL, "Relu", TRUE, TRUE, TRUE, 2 },
    { "rows wider than the buffer, 3x3/2", 1, 4, 256, 11, 200, 3, 2, 1, "Relu", NULL, TRUE, TRUE, TRUE, 1 },
    { "1x1/2 (rows skipped)", 1, 8, 16, 9, 9, 1, 2, 0, "Relu", NULL, TRUE, TRUE, TRUE, 2 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const PwDwCase *pc = &cases[i];
      int64_t xd[4] = { pc->n, pc->h, pc->w, pc->c }, w1d[4] = { 1, 1, pc->c, pc->e };
      int64_t w2d[4] = { pc->k, pc->k, 1, pc->e }, bd[1] = { pc->e };
      g_autoptr (OwbTensor) x = random_tensor (4, xd, 11 + i);
      g_autoptr (OwbTensor) w1 = random_tensor (4, w1d, 12 + i);
      g_autoptr (OwbTensor) w2 = random_tensor (4, w2d, 13 + i);
      g_autoptr (OwbTensor) b1 = random_tensor (1, bd, 14 + i);
      g_autoptr (OwbTensor) b2 = random_tensor (1, bd, 15 + i);
      int64_t ks[2] = { pc->k, pc->k }, st[2] = { pc->stride, pc->stride };
      int64_t pads[4] = { pc->pad, pc->pad, pc->pad, pc->pad }, one[2] = { 1, 1 }, zero[4] = { 0 };
      g_autoptr (GError) error = NULL;
      /* the two convolutions one after the other */
      OwbNode *node;
      const char *n1[3] = { "x", "w", "b" };
      OwbTensor *in1[3] = { x, w1, pc->bias1 ? b1 : NULL };
      g_autoptr (OwbModel) m1 = one_node_model_const ("NhwcConv", OWB_DOMAIN, 3, in1, n1, 6, &node);
      tu_set_ints (node, "kernel_shape", 2, one);
      tu_set_ints (node, "pads", 4, zero);
      set_activation (node, "", pc->pw_act);
      g_autoptr (OwbTensor) mid = run_model_const (m1, 3, in1, n1, 6, pc->threads, 1, NULL, &error);
      g_assert_no_error (error);
      OwbTensor *in2[3] = { mid, w2, pc->bias2 ? b2 : NULL };
      g_autoptr (OwbModel) m2 = one_node_model_const ("NhwcConv", OWB_DOMAIN, 3, in2, n1, 6, &node);
      tu_set_ints (node, "kernel_shape", 2, ks);
      tu_set_ints (node, "strides", 2, st);
      tu_set_ints (node, "pads", 4, pads);
      tu_set_int (node, "group", pc->e);
      set_activation (node, "", pc->act);
      g_autoptr (OwbTensor) ref = run_model_const (m2, 3, in2, n1, 6, pc->threads, 1, NULL, &error);
      g_assert_no_error (error);
      /* fused */
      const char *nf[5] = { "x", "w1", "b1", "w2", "b2" };
      OwbTensor *inf[5] = { x, w1, pc->bias1 ? b1 : NULL, w2, pc->bias2 ? b2 : NULL };
      guint consts = (pc->w1_const ? 2u : 0u) | 4u | 8u | 16u;
      g_autoptr (OwbModel) mf = one_node_model_const ("NhwcPointwiseDepthwise", OWB_DOMAIN, 5, inf, nf, consts, &node);
      tu_set_ints (node, "kernel_shape", 2, ks);
      tu_set_ints (node, "strides", 2, st);
      tu_set_ints (node, "pads", 4, pads);
      tu_set_int (node, "group", pc->e);
      set_activation (node, "pointwise_", pc->pw_act);
      set_activation (node, "", pc->act);
      /* twice: the second run reuses what the first prepared */
      for (int run = 0; run < 2; run++)
        {
          g_autoptr (OwbTensor) got = run_model_const (mf, 5, inf, nf, consts, pc->threads, 2, NULL, &error);
          g_assert_no_error (error);
          g_assert_cmpmem (got->dims, sizeof (int64_t) * 4, ref->dims, sizeof (int64_t) * 4);
          assert_close (got, ref, 1e-5, pc->what);
        }
    }
}

/* Mismatched shapes and activations are errors naming the problem, not crashes. */
static void
test_pointwise_depthwise_errors (void)
{
  int64_t xd[4] = { 1, 6, 6, 4 }, w1d[4] = { 1, 1, 5, 8 }, w2d[4] = { 3, 3, 1, 8 };
  g_autoptr (OwbTensor) x = random_tensor (4, xd, 1);
  g_autoptr (OwbTensor) w1 = random_tensor (4, w1d, 2);
  g_autoptr (OwbTensor) w2 = random_tensor (4, w2d, 3);
  const char *nf[4] = { "x", "w1", "b1", "w2" };
  OwbTensor *inf[4] = { x, w1, NULL, w2 };
  OwbNode *node;
  int64_t ks[2] = { 3, 3 };
  g_autoptr (GError) error = NULL;
  /* W1 has 5 input channels, X 4 */
  g_autoptr (OwbModel) m = one_node_model_const ("NhwcPointwiseDepthwise", OWB_DOMAIN, 4, inf, nf, 10, &node);
  tu_set_ints (node, "kernel_shape", 2, ks);
  tu_set_int (node, "group", 8);
  g_autoptr (OwbTensor) y = run_model_const (m, 4, inf, nf, 10, 1, 1, NULL, &error);
  g_assert_null (y);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "W1"));
  g_clear_error (&error);
  /* an unknown pointwise activation */
  int64_t w1ok[4] = { 1, 1, 4, 8 };
  g_autoptr (OwbTensor) w1b = random_tensor (4, w1ok, 4);
  inf[1] = w1b;
  g_autoptr (OwbModel) m2 = one_node_model_const ("NhwcPointwiseDepthwise", OWB_DOMAIN, 4, inf, nf, 10, &node);
  tu_set_ints (node, "kernel_shape", 2, ks);
  tu_set_int (node, "group", 8);
  tu_set_string (node, "pointwise_activation", "Softplus");
  g_autoptr (OwbTensor) y2 = run_model_const (m2, 4, inf, nf, 10, 1, 1, NULL, &error);
  g_assert_null (y2);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "pointwise_activation 'Softplus'"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernels/layout/nhwc-conv-matches-conv", test_nhwc_conv_matches_conv);
  g_test_add_func ("/kernels/layout/nhwc-conv-matches-conv-8-lanes", test_nhwc_conv_matches_conv_8_lanes);
  g_test_add_func ("/kernels/layout/nhwc-pools-match", test_nhwc_pools_match);
  g_test_add_func ("/kernels/layout/nhwc-global-average-pool", test_nhwc_global_average_pool);
  g_test_add_func ("/kernels/layout/nhwc-conv-errors", test_nhwc_conv_errors);
  g_test_add_func ("/kernels/layout/nhwc-conv-transpose-matches", test_nhwc_conv_transpose_matches);
  g_test_add_func ("/kernels/layout/nhwc-conv-transpose-errors", test_nhwc_conv_transpose_errors);
  g_test_add_func ("/kernels/layout/resize-channels-last", test_resize_channels_last);
  g_test_add_func ("/kernels/layout/pointwise-depthwise-matches", test_pointwise_depthwise_matches);
  g_test_add_func ("/kernels/layout/pointwise-depthwise-errors", test_pointwise_depthwise_errors);
  g_test_add_func ("/kernels/layout/nhwc-conv-speed", test_nhwc_conv_speed);
  return g_test_run ();
}
