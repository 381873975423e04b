/* test-qconv.c: QLinearConv on the integer GEMM core (cpu-qconv.c) bit-exact against the reference
 * QLinearConv kernel (quant.c), which runs when W is a graph input: 1x1 (the direct GEMM), 3x3
 * stride 1 and 2 with pads, dilations, asymmetric pads, SAME auto_pad, groups and depthwise
 * convolutions, channel counts that are not multiples of 16 or 64, uint8 and int8 activations,
 * outputs and weights, zero points of both signs, per-tensor and per-channel weights, with and
 * without bias, one and two threads, through the AMX, VNNI and forced AVX2 and portable paths; and
 * NhwcQLinearConv against the same reference on the transposed tensors, also with an output Table
 * (a fused QLinearLookup) against the reference's bytes looked up; QLinearLookup's table;
 * QLinearGlobalAveragePool against its definition. */
#include "../engine/test-util.h"
#include "qgemm-test-util.h"

#include <math.h>
#include <string.h>

typedef struct {
  int64_t N, C, H, W, M, KH, KW, stride, pad, dilation, group;
  const char *auto_pad; /* NULL: explicit pads */
  gboolean pad_asym;    /* pads (pad, pad + 1, pad + 1, pad) */
} Shape;

static const Shape shapes[] = {
  { 1, 64, 9, 7, 96, 1, 1, 1, 0, 1, 1, NULL, FALSE },    /* 1x1: the direct GEMM */
  { 2, 17, 5, 6, 33, 1, 1, 1, 0, 1, 1, NULL, FALSE },    /* 1x1, odd channels, batch */
  { 1, 24, 9, 9, 40, 1, 1, 2, 0, 1, 1, NULL, FALSE },    /* 1x1 stride 2 (gathered) */
  { 1, 19, 11, 10, 70, 3, 3, 1, 1, 1, 1, NULL, FALSE },  /* 3x3 stride 1 pad 1 */
  { 2, 32, 13, 12, 48, 3, 3, 2, 1, 1, 1, NULL, FALSE },  /* 3x3 stride 2 */
  { 1, 8, 15, 15, 17, 3, 3, 1, 2, 2, 1, NULL, FALSE },   /* dilation 2 */
  { 1, 3, 23, 21, 16, 7, 7, 2, 3, 1, 1, NULL, FALSE },   /* a stem: 3 channels, 7x7 stride 2 */
  { 1, 3, 17, 19, 16, 3, 3, 2, 1, 1, 1, NULL, FALSE },   /* a stem: 3 channels, 3x3 stride 2 (9-byte rows) */
  { 2, 3, 12, 13, 8, 5, 5, 1, 2, 1, 1, NULL, FALSE },    /* 3 channels, 5x5 (15-byte rows), a batch */
  { 1, 5, 9, 10, 12, 5, 5, 1, 1, 1, 1, NULL, TRUE },     /* 5 channels, 5x5 (25-byte rows), asymmetric pads */
  { 1, 12, 9, 8, 20, 3, 2, 1, 1, 1, 1, NULL, TRUE },     /* 3x2 kernel, asymmetric pads */
  { 1, 16, 10, 10, 24, 3, 3, 2, 0, 1, 1, "SAME_UPPER", FALSE },
  { 1, 24, 8, 9, 36, 3, 3, 1, 1, 1, 4, NULL, FALSE },    /* 4 groups of 6 -> 9 */
  { 1, 40, 12, 11, 40, 3, 3, 1, 1, 1, 40, NULL, FALSE }, /* depthwise 3x3, 40 channels */
  { 2, 67, 9, 10, 67, 5, 5, 2, 2, 1, 67, NULL, FALSE },  /* depthwise 5x5 stride 2, 67 channels */
  { 1, 16, 7, 7, 16, 3, 3, 1, 2, 2, 16, NULL, FALSE },   /* depthwise, dilated */
  /* 64 channels or more: four taps a vpdpbusd; blocks of 64 with a remainder, taps in groups of 4 */
  { 1, 130, 8, 7, 130, 3, 3, 1, 1, 1, 130, NULL, FALSE },  /* 3x3, two blocks and 2 channels */
  { 1, 64, 9, 9, 64, 7, 7, 1, 3, 1, 64, NULL, FALSE },     /* 7x7: 49 taps, the last group one */
  { 2, 72, 9, 8, 72, 3, 3, 2, 2, 2, 72, NULL, FALSE },     /* stride 2, dilation 2, wide padding */
  /* 16 and 32 channels at stride 1: several pixels a vector inside the row, one at its edges */
  { 1, 32, 6, 19, 32, 3, 3, 1, 1, 1, 32, NULL, FALSE },
  { 2, 16, 5, 23, 16, 5, 5, 1, 2, 1, 16, NULL, FALSE },
  { 1, 16, 6, 21, 16, 3, 3, 1, 2, 2, 16, NULL, FALSE },    /* dilated */
  /* the interior kernels (3x3, 5x5, any other; every tap inside X) between edge pixels */
  { 1, 144, 9, 13, 144, 3, 3, 1, 1, 1, 144, NULL, FALSE },  /* 3x3, remainder of 16 channels */
  { 1, 64, 11, 13, 64, 3, 3, 2, 1, 1, 64, NULL, FALSE },    /* 3x3 stride 2, odd sizes */
  { 1, 72, 10, 11, 72, 3, 3, 2, 1, 1, 72, NULL, TRUE },     /* stride 2, asymmetric pads */
  { 1, 128, 6, 9, 128, 3, 3, 1, 0, 1, 128, NULL, FALSE },   /* no padding: all interior */
  { 1, 96, 10, 11, 96, 5, 5, 1, 2, 1, 96, NULL, FALSE },    /* 5x5, a part-filled block */
  { 2, 80, 13, 15, 80, 5, 5, 2, 2, 1, 80, NULL, FALSE },    /* 5x5 stride 2, 16 left over */
  { 1, 64, 9, 12, 64, 3, 3, 1, 2, 2, 64, NULL, FALSE },     /* dilated interior */
  { 1, 32, 5, 40, 32, 3, 3, 1, 1, 1, 32, NULL, FALSE },     /* two pixels a vector */
  { 1, 16, 4, 31, 16, 5, 5, 1, 2, 1, 16, NULL, FALSE },     /* four pixels a vector, odd run */
  { 1, 8, 6, 6, 16, 3, 3, 1, 1, 1, 8, NULL, FALSE },     /* channel multiplier 2 (grouped GEMM) */
  { 1, 130, 20, 20, 129, 3, 3, 1, 1, 1, 1, NULL, FALSE },/* large: whole AMX blocks and edges */
  /* fewer than 32 rows a thread (at two threads: all rows gathered, then the GEMM's own split) */
  { 1, 64, 7, 7, 80, 3, 3, 1, 1, 1, 1, NULL, FALSE },
  /* gathered with short kernel rows (3 channels, 9 and 21 bytes): im2col_short's chunked copies
   * must not spill into a neighbouring block another thread gathers, nor past the shared buffer */
  { 1, 3, 9, 11, 16, 3, 3, 1, 0, 1, 1, NULL, FALSE },
  { 1, 3, 13, 13, 24, 7, 7, 2, 0, 1, 1, NULL, FALSE },
  { 2, 20, 5, 6, 33, 3, 3, 1, 1, 1, 1, NULL, TRUE },
  /* the indirect GEMM (rows 16 pixels wide or more, KW C a multiple of 4): X read
   * in place, zero-point rows for the vertical padding, the row ends gathered */
  { 1, 64, 10, 34, 40, 3, 3, 1, 1, 1, 1, NULL, FALSE },
  { 2, 32, 9, 65, 24, 3, 3, 2, 1, 1, 1, NULL, FALSE },   /* stride 2, batch */
  { 1, 20, 9, 30, 20, 3, 2, 1, 1, 1, 1, NULL, TRUE },    /* 3x2 kernel, asymmetric pads */
  { 1, 12, 11, 32, 33, 5, 5, 1, 2, 1, 1, NULL, FALSE },  /* 5x5, 60-byte kernel rows */
  { 1, 16, 10, 64, 24, 3, 3, 2, 0, 1, 1, "SAME_UPPER", FALSE },
  { 1, 64, 9, 33, 130, 3, 3, 1, 1, 1, 1, NULL, FALSE },  /* two 64-column tiles and 2 columns */
  { 1, 8, 12, 34, 16, 3, 3, 1, 0, 1, 1, NULL, FALSE },   /* no padding: every pixel interior */
  { 1, 4, 20, 28, 8, 3, 3, 1, 3, 1, 1, NULL, FALSE },    /* padding 3: kernel rows all padding */
  /* deeper than 640 (on VNNI, 1152): the product in depth pieces (one per kernel row, or a kernel
   * row split), the strips' accumulators kept between them, 16 strips at a time; on VNNI up to
   * 1152 deep, each strip's accumulators in registers through all kernel rows */
  { 1, 72, 6, 18, 40, 3, 3, 1, 1, 1, 1, NULL, FALSE },   /* K 648: three pieces of 216 */
  { 1, 128, 5, 20, 70, 3, 3, 1, 1, 1, 1, NULL, FALSE },  /* K 1152 */
  { 1, 132, 5, 21, 70, 3, 3, 2, 1, 1, 1, NULL, FALSE },  /* K 1188, stride 2, 70 columns */
  { 1, 260, 4, 17, 24, 3, 3, 1, 1, 1, 1, NULL, FALSE },  /* kernel rows of 780 split in two */
  { 1, 76, 3, 120, 20, 3, 3, 1, 1, 1, 1, NULL, FALSE },  /* 118 interior pixels: 20 strips */
  /* kernel rows of 1200 split in two on the AVX2 int16 tile too (its pieces up to 1152 deep) */
  { 1, 400, 4, 17, 24, 3, 3, 1, 1, 1, 1, NULL, FALSE },
  /* the AVX2 Winograd path (3x3 stride 1, C and M multiples of 8): odd output sizes, a batch and
   * 136 columns (split between threads, a last block of 8); 512 channels, its widest */
  { 2, 16, 7, 9, 136, 3, 3, 1, 1, 1, 1, NULL, FALSE },
  { 1, 512, 5, 4, 16, 3, 3, 1, 1, 1, 1, NULL, FALSE },
};

static OwbTensor *
random_ints (OwbDataType dtype, int rank, const int64_t *dims, GRand *r, int lo, int hi)
{
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    owb_tensor_set_double (t, i, g_rand_int_range (r, lo, hi + 1));
  return t;
}

static OwbTensor *
scalar_float (float v)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, 0, NULL, NULL);
  ((float *) t->data)[0] = v;
  return t;
}

static void
set_ints (OwbNode *node, const char *name, int n, const int64_t *v)
{
  OwbAttribute *a = owb_node_add_attribute (node, name, OWB_ATTR_INTS);
  a->n = n;
  a->ints = g_memdup2 (v, sizeof (int64_t) * n);
}

/* One QLinearConv (or NhwcQLinearConv) whose inputs i are initializers where bit i of const_mask
 * is set, graph inputs otherwise (a NULL input is left out: ""); returns Y. *packed: whether the
 * core's prepare took the node. */
static OwbTensor *
run_conv (const Shape *sh, const char *op, int n_in, OwbTensor *const *in, guint const_mask, int threads,
          gboolean *packed)
{
  OwbModel *m = tu_model_new (13);
  gboolean ours = strcmp (op, "NhwcQLinearConv") == 0;
  if (ours)
    owb_model_set_opset (m, OWB_DOMAIN, 1);
  g_autofree char *ins = tu_add_indexed_inputs (m->graph, n_in, in, const_mask);
  tu_add_untyped_output (m->graph->outputs, "y0");
  OwbNode *node = tu_node (m->graph, op, "node", ins, "y0");
  if (ours)
    {
      g_free (node->domain);
      node->domain = g_strdup (OWB_DOMAIN);
    }
  set_ints (node, "strides", 2, (int64_t[]){ sh->stride, sh->stride });
  set_ints (node, "dilations", 2, (int64_t[]){ sh->dilation, sh->dilation });
  if (sh->auto_pad)
    {
      OwbAttribute *a = owb_node_add_attribute (node, "auto_pad", OWB_ATTR_STRING);
      a->s = g_strdup (sh->auto_pad);
      a->s_len = strlen (a->s);
    }
  else
    set_ints (node, "pads", 4,
              (int64_t[]){ sh->pad, sh->pad + sh->pad_asym, sh->pad + sh->pad_asym, sh->pad });
  OwbAttribute *g = owb_node_add_attribute (node, "group", OWB_ATTR_INT);
  g->i = sh->group;
  g_autoptr (GError) error = NULL;
  OwbSession *s = tu_session (m, threads, &error);
  g_assert_no_error (error);
  /* the state prepare built for this node */
  OwbValueType xt;
  owb_value_type_init_tensor (&xt, in[0]->dtype, 0, NULL);
  const OwbValueType *types[9] = { &xt };
  void *state = NULL;
  g_assert_true (_owb_cpu_qconv_prepare (node, 13, types, &state, NULL));
  *packed = state != NULL;
  _owb_cpu_qconv_free (state);
  const char *out_names[1] = { "y0" };
  OwbTensor *y = NULL;
  g_assert_true (tu_run_indexed (s, n_in, in, const_mask, 1, out_names, &y, &error));
  g_assert_no_error (error);
  owb_session_free (s);
  owb_model_unref (m);
  return y;
}

/* [N, A, B, C] -> [N, B, C, A] (to NHWC) or [N, C, A, B] ... through the general 4-D permutation. */
static OwbTensor *
permute (const OwbTensor *t, const int *perm)
{
  int64_t d[4];
  for (int i = 0; i < 4; i++)
    d[i] = t->dims[perm[i]];
  OwbTensor *o = owb_tensor_new (t->dtype, 4, d, NULL);
  int64_t st[4] = { t->dims[1] * t->dims[2] * t->dims[3], t->dims[2] * t->dims[3], t->dims[3], 1 };
  const uint8_t *src = t->data;
  uint8_t *dst = o->data;
  int64_t i = 0;
  for (int64_t a = 0; a < d[0]; a++)
    for (int64_t b = 0; b < d[1]; b++)
      for (int64_t c = 0; c < d[2]; c++)
        for (int64_t e = 0; e < d[3]; e++)
          dst[i++] = src[a * st[perm[0]] + b * st[perm[1]] + c * st[perm[2]] + e * st[perm[3]]];
  return o;
}

static const int to_nhwc[4] = { 0, 2, 3, 1 };
static const int to_nchw[4] = { 0, 3, 1, 2 };

static void
check_equal (const OwbTensor *y, const OwbTensor *want, const char *what, int si, int variant)
{
  g_assert_cmpint (y->dtype, ==, want->dtype);
  g_assert_cmpint (y->nelems, ==, want->nelems);
  if (memcmp (y->data, want->data, y->nbytes) != 0)
    {
      int64_t first = 0;
      while (((const uint8_t *) y->data)[first] == ((const uint8_t *) want->data)[first])
        first++;
      g_error ("%s: shape %d variant %d: outputs differ first at %" G_GINT64_FORMAT " (%d, want %d)", what, si,
               variant, first, ((const uint8_t *) y->data)[first], ((const uint8_t *) want->data)[first]);
    }
}

/* Every shape in 4 type/zero-point variants, against the reference, on the current path. */
static void
run_all (const char *path)
{
  int count = 0;
  for (guint si = 0; si < G_N_ELEMENTS (shapes); si++)
    for (int variant = 0; variant < 4; variant++)
      {
        const Shape *sh = &shapes[si];
        GRand *r = g_rand_new_with_seed (1000 * si + variant);
        gboolean x_signed = variant & 1, y_signed = variant == 1 || variant == 2, w_unsigned = variant == 3;
        gboolean per_channel = variant != 2, bias = variant != 1;
        OwbDataType xt = x_signed ? OWB_TYPE_INT8 : OWB_TYPE_UINT8, yt = y_signed ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
        OwbDataType wt = w_unsigned ? OWB_TYPE_UINT8 : OWB_TYPE_INT8;
        int xlo = x_signed ? -128 : 0, xhi = x_signed ? 127 : 255, wlo = w_unsigned ? 0 : -128, whi = w_unsigned ? 255 : 127;
        int64_t Cg = sh->C / sh->group, M = sh->M, np = per_channel ? M : 1;
        OwbTensor *x = random_ints (xt, 4, (int64_t[]){ sh->N, sh->C, sh->H, sh->W }, r, xlo, xhi);
        OwbTensor *w = random_ints (wt, 4, (int64_t[]){ M, Cg, sh->KH, sh->KW }, r, wlo, whi);
        /* zero points: x's of both signs; w's symmetric (0) for int8 as exporters write, any otherwise */
        OwbTensor *xzp = random_ints (xt, 0, NULL, r, x_signed ? (variant == 1 ? -100 : 5) : 3, x_signed ? (variant == 1 ? -5 : 90) : 250);
        OwbTensor *wzp = random_ints (wt, 1, &np, r, w_unsigned ? 100 : (variant == 2 ? -9 : 0), w_unsigned ? 150 : (variant == 2 ? 9 : 0));
        OwbTensor *ws = owb_tensor_new (OWB_TYPE_FLOAT, 1, &np, NULL);
        for (int64_t i = 0; i < np; i++)
          ((float *) ws->data)[i] = (float) g_rand_double_range (r, 0.002, 0.03);
        float xs = (float) g_rand_double_range (r, 0.01, 0.05);
        /* outputs mostly in range, some saturating */
        float ys = xs * 0.015f * 128.0f * (float) sqrt ((double) (Cg * sh->KH * sh->KW)) / 40.0f;
        /* now and then a bias past 2^24 (and y_scale to match): the sums the float
         * requantization cannot take, redone in double */
        gboolean huge = variant == 0 && si % 3 == 0;
        if (huge)
          ys *= 60000.0f;
        /* now and then outputs far past y's range (products past int16, scales still below 64):
         * the depthwise kernel's saturating packs clamp them */
        if ((variant == 1 && si % 2 == 1) || (variant == 0 && si % 3 == 1))
          ys /= 300.0f;
        OwbTensor *yzp = random_ints (yt, 0, NULL, r, y_signed ? -20 : 100, y_signed ? 20 : 140);
        OwbTensor *b = random_ints (OWB_TYPE_INT32, 1, &M, r, huge ? -(1 << 26) : -30000, huge ? 1 << 26 : 30000);
        OwbTensor *in[9] = { x, scalar_float (xs), xzp, w, ws, wzp, scalar_float (ys), yzp, b };
        int n_in = bias ? 9 : 8;
        int threads = 1 + (int) ((si + variant) % 2);
        gboolean packed, ref_packed;
        OwbTensor *want = run_conv (sh, "QLinearConv", n_in, in, 0, 1, &ref_packed);
        OwbTensor *y = run_conv (sh, "QLinearConv", n_in, in, 0x1FE, threads, &packed);
        g_assert_true (packed);
        g_assert_false (ref_packed);
        check_equal (y, want, path, (int) si, variant);
        /* NhwcQLinearConv: X and Y channels-last, same W */
        OwbTensor *xn = permute (x, to_nhwc);
        OwbTensor *nin[9] = { xn, in[1], in[2], in[3], in[4], in[5], in[6], in[7], in[8] };
        OwbTensor *yn = run_conv (sh, "NhwcQLinearConv", n_in, nin, 0x1FE, threads, &packed);
        g_assert_true (packed);
        OwbTensor *yb = permute (yn, to_nchw);
        check_equal (yb, want, "NhwcQLinearConv", (int) si, variant);
        /* with a fused output table (fuse_qconv_lookup): the reference's bytes looked up; no bias
         * leaves input 8 empty */
        OwbTensor *table = random_ints (yt, 1, (int64_t[]){ 256 }, r, y_signed ? -128 : 0, y_signed ? 127 : 255);
        OwbTensor *tin[10] = { xn, in[1], in[2], in[3], in[4], in[5], in[6], in[7], bias ? in[8] : NULL, table };
        OwbTensor *yt_n = run_conv (sh, "NhwcQLinearConv", 10, tin, 0x3FE, threads, &packed);
        g_assert_true (packed);
        OwbTensor *ytb = permute (yt_n, to_nchw);
        OwbTensor *want_t = owb_tensor_new (want->dtype, want->rank, want->dims, NULL);
        for (int64_t i = 0; i < want->nelems; i++)
          ((uint8_t *) want_t->data)[i] = ((const uint8_t *) table->data)[((const uint8_t *) want->data)[i]];
        check_equal (ytb, want_t, "NhwcQLinearConv with a table", (int) si, variant);
        owb_tensor_unref (table);
        owb_tensor_unref (yt_n);
        owb_tensor_unref (ytb);
        owb_tensor_unref (want_t);
        owb_tensor_unref (xn);
        owb_tensor_unref (yn);
        owb_tensor_unref (yb);
        owb_tensor_unref (y);
        owb_tensor_unref (want);
        for (int i = 0; i < 9; i++)
          owb_tensor_unref (in[i]);
        g_rand_free (r);
        count++;
      }
  g_test_message ("%s: %d configurations bit-exact", path, count);
}

/* Every configuration on one path of the integer kernels; a path below VNNI must not run VNNI (with
 * the AVX2 microkernel forced, the depthwise kernel takes its portable path). */
static void
test_qconv_path (gconstpointer data)
{
  static const char *const names[] = { [QPATH_PORTABLE] = "portable", [QPATH_AVX2] = "AVX2", [QPATH_VNNI] = "VNNI",
                                        [QPATH_AMX] = "AMX" };
  QPath path = GPOINTER_TO_INT (data);
  if (!qpath_hold (path))
    return;
  if (path == QPATH_PORTABLE || path == QPATH_AVX2)
    g_assert_false (_owb_qgemm_uses_vnni ());
  run_all (names[path]);
  qpath_release ();
}

/* The depthwise VNNI kernel's requantization at float ties: W all zero and X, Y scales 1, so that
 * every pixel's sum is its channel's bias, and each channel's scale the float nearest h / bias for
 * a half-integer h, whose product in float often lands on h where the exact one does not. */
/* Products on half-integers in float but not exactly (weights 0, each channel's sum its bias
 * acc, scale h / acc for a half-integer h): the kernels must take the exact product's side, as the
 * reference's double product does, on shape sh with sums up to acc_max. */
static void
run_ties (const Shape *sh, const char *what, int32_t acc_max)
{
  GRand *r = g_rand_new_with_seed (77);
  int64_t M = sh->M;
  OwbTensor *x = random_ints (OWB_TYPE_UINT8, 4, (int64_t[]){ 1, sh->C, sh->H, sh->W }, r, 0, 255);
  OwbTensor *w = random_ints (OWB_TYPE_INT8, 4, (int64_t[]){ M, sh->C / sh->group, sh->KH, sh->KW }, r, 0, 0);
  OwbTensor *wzp = random_ints (OWB_TYPE_INT8, 1, &M, r, 0, 0);
  OwbTensor *b = owb_tensor_new (OWB_TYPE_INT32, 1, &M, NULL);
  OwbTensor *ws = owb_tensor_new (OWB_TYPE_FLOAT, 1, &M, NULL);
  for (int64_t m = 0; m < M; m++)
    for (;;)
      {
        double h = g_rand_int_range (r, -120, 120) + 0.5;
        int32_t acc = g_rand_int_range (r, 1 << 12, acc_max) * (h < 0 ? -1 : 1);
        ((int32_t *) b->data)[m] = acc;
        ((float *) ws->data)[m] = (float) (h / acc);
        /* past 2^24: only sums whose float product goes the wrong way and lands on no
         * half-integer, which no tie test catches (the kernel must find the wide sums) */
        volatile float pf = (float) acc * ((float *) ws->data)[m];
        if (acc_max <= (1 << 24)
            || (fabsf (pf - nearbyintf (pf)) != 0.5f && nearbyintf (pf) != nearbyint ((double) acc * ((float *) ws->data)[m])))
          break;
      }
  OwbTensor *in[9] = { x, scalar_float (1.0f), random_ints (OWB_TYPE_UINT8, 0, NULL, r, 0, 0), w, ws, wzp,
                       scalar_float (1.0f), random_ints (OWB_TYPE_UINT8, 0, NULL, r, 128, 128), b };
  gboolean packed, ref_packed;
  OwbTensor *want = run_conv (sh, "QLinearConv", 9, in, 0, 1, &ref_packed);
  OwbTensor *y = run_conv (sh, "QLinearConv", 9, in, 0x1FE, 1, &packed);
  g_assert_true (packed);
  g_assert_false (ref_packed);
  check_equal (y, want, what, 0, 0);
  owb_tensor_unref (y);
  owb_tensor_unref (want);
  for (int i = 0; i < 9; i++)
    owb_tensor_unref (in[i]);
  g_rand_free (r);
}

/* Ties through the GEMM's 8-bit epilogue on the path held: 1x1 on X itself (depth 40), the
 * indirect 3x3 and the stem. */
static void
run_gemm_ties (const char *path)
{
  static const Shape pw = { 1, 40, 5, 6, 130, 1, 1, 1, 0, 1, 1, NULL, FALSE };
  static const Shape ind = { 1, 16, 6, 20, 70, 3, 3, 1, 1, 1, 1, NULL, FALSE };
  static const Shape stem = { 1, 3, 9, 10, 16, 3, 3, 2, 1, 1, 1, NULL, FALSE };
  g_autofree char *pw_what = g_strdup_printf ("%s 1x1 ties", path);
  g_autofree char *ind_what = g_strdup_printf ("%s indirect 3x3 ties", path);
  g_autofree char *stem_what = g_strdup_printf ("%s stem ties", path);
  run_ties (&pw, pw_what, 1 << 22);
  run_ties (&ind, ind_what, 1 << 22);
  run_ties (&stem, stem_what, 1 << 22);
}

static void
test_qconv_depthwise_ties (void)
{
  if (!qpath_hold (QPATH_VNNI))
    return;
  static const Shape dw = { 1, 192, 5, 6, 192, 3, 3, 1, 1, 1, 192, NULL, FALSE };
  run_ties (&dw, "depthwise ties", 1 << 23);
  /* the GEMM's narrow 8-bit epilogue (its integer clamp) */
  run_gemm_ties ("VNNI");
  qpath_release ();
}

/* The AVX2 epilogue's float product (sums below 2^24) at float ties: a vector with a product on a
 * half-integer must go the exact product's way, on 1x1 GEMMs with both AVX2 tiles (depths 40 and
 * 64), the indirect 3x3, the stem and the depthwise kernel (its interior pixels' paired taps and
 * the edges). */
static void
test_qconv_avx2_ties (void)
{
  if (!qpath_hold (QPATH_AVX2))
    return;
  static const Shape pw64 = { 1, 64, 5, 6, 130, 1, 1, 1, 0, 1, 1, NULL, FALSE };
  run_gemm_ties ("AVX2");
  run_ties (&pw64, "AVX2 1x1 depth 64 ties", 1 << 22);
  static const Shape dw = { 1, 192, 5, 6, 192, 3, 3, 1, 1, 1, 192, NULL, FALSE };
  static const Shape dw5 = { 1, 72, 7, 9, 72, 5, 5, 1, 2, 1, 72, NULL, FALSE };
  run_ties (&dw, "AVX2 depthwise ties", 1 << 23);
  run_ties (&dw5, "AVX2 depthwise 5x5 ties", 1 << 23);
  /* sums past 2^24 next to half-integers whose float product goes the wrong way: the vectors
   * holding one must be found and redone in double, in the GEMM's epilogue, the depthwise kernel
   * and the Winograd path */
  static const Shape pw = { 1, 40, 3, 4, 200, 1, 1, 1, 0, 1, 1, NULL, FALSE };
  static const Shape dww = { 1, 200, 3, 4, 200, 3, 3, 1, 1, 1, 200, NULL, FALSE };
  static const Shape wino = { 1, 16, 3, 4, 200, 3, 3, 1, 1, 1, 1, NULL, FALSE };
  run_ties (&pw, "AVX2 1x1 wide ties", 1 << 26);
  run_ties (&dww, "AVX2 depthwise wide ties", 1 << 26);
  run_ties (&wino, "AVX2 Winograd wide ties", 1 << 26);
  run_ties (&wino, "AVX2 Winograd ties", 1 << 22);
  qpath_release ();
}

/* The Winograd path's bound (AVX2): 512 channels of sums at the ends of their ranges, where 4 Y
 * (the transformed sum before its shift) nears 2^31: x 255 against zero point 0, x 0 against 255,
 * int8 weights -128 and 127, uint8 weights 0 against zero point 255; the output scale keeps the
 * sums' last bits in the bytes. Equal to the reference. */
static void
test_qconv_winograd_extremes (void)
{
  if (!qpath_hold (QPATH_AVX2))
    return;
  static const Shape sh = { 1, 512, 5, 6, 8, 3, 3, 1, 1, 1, 1, NULL, FALSE };
  static const struct { int x, zx, w, zw; gboolean wu8; } cases[] = {
    { 255, 0, -128, 0, FALSE }, { 0, 255, -128, 0, FALSE }, { 255, 0, 127, 0, FALSE },
    { 255, 0, 0, 255, TRUE }, { 0, 255, 0, 255, TRUE }, { 255, 0, 255, 0, TRUE },
  };
  for (guint ci = 0; ci < G_N_ELEMENTS (cases); ci++)
    {
      int64_t M = sh.M;
      OwbDataType wt = cases[ci].wu8 ? OWB_TYPE_UINT8 : OWB_TYPE_INT8;
      GRand *r = g_rand_new_with_seed (ci);
      OwbTensor *x = random_ints (OWB_TYPE_UINT8, 4, (int64_t[]){ 1, sh.C, sh.H, sh.W }, r, cases[ci].x, cases[ci].x);
      OwbTensor *w = random_ints (wt, 4, (int64_t[]){ M, sh.C, 3, 3 }, r, cases[ci].w, cases[ci].w);
      /* a few weights off the extreme: sums that differ in their last bits between channels */
      for (int64_t i = 0; i < M; i++)
        owb_tensor_set_double (w, i * sh.C * 9 + i, cases[ci].w + (cases[ci].w > 0 ? -(int) i : (int) i));
      OwbTensor *wzp = random_ints (wt, 1, &M, r, cases[ci].zw, cases[ci].zw);
      OwbTensor *b = random_ints (OWB_TYPE_INT32, 1, &M, r, -1000, 1000);
      OwbTensor *in[9] = { x, scalar_float (1.0f), random_ints (OWB_TYPE_UINT8, 0, NULL, r, cases[ci].zx, cases[ci].zx),
                           w, random_ints (OWB_TYPE_FLOAT, 1, &M, r, 1, 1), wzp, scalar_float (4194304.0f),
                           random_ints (OWB_TYPE_UINT8, 0, NULL, r, 128, 128), b };
      gboolean packed, ref_packed;
      OwbTensor *want = run_conv (&sh, "QLinearConv", 9, in, 0, 1, &ref_packed);
      OwbTensor *y = run_conv (&sh, "QLinearConv", 9, in, 0x1FE, 1, &packed);
      g_assert_true (packed);
      g_assert_false (ref_packed);
      check_equal (y, want, "Winograd extremes", (int) ci, 0);
      owb_tensor_unref (y);
      owb_tensor_unref (want);
      for (int i = 0; i < 9; i++)
        owb_tensor_unref (in[i]);
      g_rand_free (r);
    }
  qpath_release ();
}

/* What the core does not take falls back to the reference: W a graph input (tested above), and a
 * weight the prepare refuses (zero point out of the weight type's range is impossible; a 3-D
 * convolution is the case). */
static void
test_qconv_refuses_3d (void)
{
  OwbModel *m = tu_model_new (13);
  int64_t wd[3] = { 4, 2, 3 };
  OwbTensor *w = owb_tensor_new (OWB_TYPE_INT8, 3, wd, NULL);
  owb_graph_add_initializer (m->graph, "w", w);
  OwbTensor *wzp = owb_tensor_new (OWB_TYPE_INT8, 0, NULL, NULL);
  owb_graph_add_initializer (m->graph, "wzp", wzp);
  OwbNode *node = tu_node (m->graph, "QLinearConv", "node", "x,xs,xz,w,ws,wzp,ys,yz", "y");
  OwbValueType xt;
  owb_value_type_init_tensor (&xt, OWB_TYPE_UINT8, 0, NULL);
  const OwbValueType *types[9] = { &xt };
  void *state = NULL;
  g_assert_true (_owb_cpu_qconv_prepare (node, 13, types, &state, NULL));
  g_assert_null (state);
  owb_model_unref (m);
}

/* QLinearLookup: Y[i] = Table[X[i]'s byte] for uint8 and int8 X (odd length, two threads). */
static void
test_qlinear_lookup (void)
{
  GRand *r = g_rand_new_with_seed (9);
  for (int s8 = 0; s8 < 4; s8++)
    {
      /* the AVX-512 VBMI path, then the portable one */
      _owb_qgemm_force_portable (s8 >= 2);
      OwbDataType xt = s8 % 2 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8, yt = s8 % 2 ? OWB_TYPE_UINT8 : OWB_TYPE_INT8;
      int64_t xd[2] = { 7, 40001 }, n = 256;
      OwbTensor *x = random_ints (xt, 2, xd, r, s8 % 2 ? -128 : 0, s8 % 2 ? 127 : 255);
      OwbTensor *t = random_ints (yt, 1, &n, r, s8 % 2 ? 0 : -128, s8 % 2 ? 255 : 127);
      OwbModel *m = tu_model_new (13);
      owb_model_set_opset (m, OWB_DOMAIN, 1);
      tu_add_value (m->graph->inputs, "x", xt, 2, xd, NULL);
      owb_graph_add_initializer (m->graph, "t", owb_tensor_ref (t));
      tu_add_untyped_output (m->graph->outputs, "y");
      OwbNode *node = tu_node (m->graph, "QLinearLookup", "lk", "x,t", "y");
      g_free (node->domain);
      node->domain = g_strdup (OWB_DOMAIN);
      g_autoptr (GError) error = NULL;
      OwbSession *s = tu_session (m, 2, &error);
      g_assert_no_error (error);
      const char *names[1] = { "x" };
      OwbTensor *y = NULL;
      g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &y, NULL, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpint (y->dtype, ==, yt);
      g_assert_cmpint (y->nelems, ==, x->nelems);
      for (int64_t i = 0; i < x->nelems; i++)
        g_assert_cmpint (((uint8_t *) y->data)[i], ==, ((uint8_t *) t->data)[((uint8_t *) x->data)[i]]);
      owb_tensor_unref (y);
      owb_session_free (s);
      owb_model_unref (m);
      owb_tensor_unref (x);
      owb_tensor_unref (t);
    }
  _owb_qgemm_force_portable (FALSE);
  g_rand_free (r);
}

/* QLinearBinaryLookup: Y = Table[256 a + b] with A and B broadcast (same shapes, B along rows, B
 * along columns), uint8 and int8, one and two threads. */
static void
test_qlinear_binary_lookup (void)
{
  GRand *r = g_rand_new_with_seed (10);
  /* the last: B broadcast along the middle dim, which no merging of dims removes */
  static const int64_t bshapes[4][3] = { { 5, 9, 37 }, { 5, 9, 1 }, { 1, 9, 37 }, { 5, 1, 37 } };
  for (int k = 0; k < 16; k++)
    {
      int s8 = k % 2;
      const int64_t *bd = bshapes[k / 2 % 4];
      OwbDataType xt = s8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
      int64_t ad[3] = { 5, 9, 37 }, n = 65536;
      OwbTensor *a = random_ints (xt, 3, ad, r, s8 ? -128 : 0, s8 ? 127 : 255);
      OwbTensor *b = random_ints (xt, 3, bd, r, s8 ? -128 : 0, s8 ? 127 : 255);
      OwbTensor *t = random_ints (OWB_TYPE_UINT8, 1, &n, r, 0, 255);
      OwbModel *m = tu_model_new (13);
      owb_model_set_opset (m, OWB_DOMAIN, 1);
      tu_add_value (m->graph->inputs, "a", xt, 3, ad, NULL);
      tu_add_value (m->graph->inputs, "b", xt, 3, bd, NULL);
      owb_graph_add_initializer (m->graph, "t", owb_tensor_ref (t));
      tu_add_untyped_output (m->graph->outputs, "y");
      OwbNode *node = tu_node (m->graph, "QLinearBinaryLookup", "lk", "a,b,t", "y");
      g_free (node->domain);
      node->domain = g_strdup (OWB_DOMAIN);
      g_autoptr (GError) error = NULL;
      OwbSession *s = tu_session (m, 1 + (k >= 8), &error);
      g_assert_no_error (error);
      const char *names[2] = { "a", "b" };
      OwbTensor *feeds[2] = { a, b }, *y = NULL;
      g_assert_true (owb_session_run (s, 2, names, feeds, 1, NULL, &y, NULL, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpint (y->nelems, ==, a->nelems);
      const uint8_t *av = a->data, *bv = b->data, *yv = y->data, *tv = t->data;
      for (int64_t i = 0; i < 5; i++)
        for (int64_t j = 0; j < 9; j++)
          for (int64_t l = 0; l < 37; l++)
            {
              int64_t bi = (bd[0] == 1 ? 0 : i) * bd[1] * bd[2] + (bd[1] == 1 ? 0 : j) * bd[2] + (bd[2] == 1 ? 0 : l);
              g_assert_cmpint (yv[(i * 9 + j) * 37 + l], ==, tv[av[(i * 9 + j) * 37 + l] * 256 + bv[bi]]);
            }
      owb_tensor_unref (y);
      owb_session_free (s);
      owb_model_unref (m);
      owb_tensor_unref (a), owb_tensor_unref (b), owb_tensor_unref (t);
    }
  g_rand_free (r);
}


/* The definition QLinearBinary follows: DequantizeLinear, the float32 op, QuantizeLinear. */
static int
qbinary_expected (int qa, int qb, gboolean mul, float sa, int za, float sb, int zb, float sy, int zy, gboolean y_signed)
{
  float a = (float) (qa - za) * sa, b = (float) (qb - zb) * sb;
  float v = mul ? a * b : a + b;
  float q = nearbyintf (v / sy) + (float) zy;
  float lo = y_signed ? -128.0f : 0.0f, hi = y_signed ? 127.0f : 255.0f;
  return (int) (!(q >= lo) ? lo : (q > hi ? hi : q));
}

/* QLinearBinary on every pair of 8-bit values (A [256, 256] by rows, B by columns, or B one row
 * or one column broadcast, or A one row), Add and Mul, uint8 and int8, with scales whose quotients often land next to
 * half-integers (the vector path multiplies by 1 / y_scale and must divide there), against the
 * definition; the vector path and the portable one. */
static void
test_qlinear_binary (void)
{
  static const float scales[][3] = {
    { 6.0f / 255, 2.5f / 255, 8.0f / 255 },
    { 0.1f, 0.1f, 0.3f },     /* sums of tenths over three tenths: many near halves */
    { 0.02f, 0.03f, 0.07f },
    { 1.0f / 3, 1.0f / 7, 1.0f / 21 },
    { 0.011f, 0.013f, 0.00017f }, /* products far past the range: saturation */
  };
  int64_t full[2] = { 256, 256 }, one_row[2] = { 1, 256 }, one_col[2] = { 256, 1 };
  /* path 0: the CPU's (AVX-512), 1: portable, 2: AVX2 forced */
  for (int path = 0; path < 3; path++)
    {
      int portable = path == 1;
      _owb_qgemm_force_portable (portable);
      _owb_qgemm_force_avx2 (path == 2);
      if (path == 2 && !_owb_qgemm_uses_avx2 ())
        continue;
      for (guint si = 0; si < G_N_ELEMENTS (scales); si++)
        for (int k = 0; k < 16; k++)
          {
            /* row: B one row broadcast down A; a_row: A one row broadcast down B (a
             * squeeze-excitation's scale either side of its Mul, dequantized once); both: b_col,
             * B one column broadcast along A's rows (one B value a row) */
            gboolean mul = k & 1, s8 = (k >> 1) & 1, row = (k >> 2) & 1, a_row = (k >> 3) & 1;
            gboolean b_col = row && a_row;
            row = row && !b_col, a_row = a_row && !b_col;
            OwbDataType qt = s8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
            int lo = s8 ? -128 : 0;
            const int64_t *ad = a_row ? one_row : full, *bd = row ? one_row : b_col ? one_col : full;
            OwbTensor *a = owb_tensor_new (qt, 2, ad, NULL), *b = owb_tensor_new (qt, 2, bd, NULL);
            for (int64_t i = 0; i < a->nelems; i++)
              owb_tensor_set_double (a, i, a_row ? lo + i : b_col ? lo + i % 256 : lo + i / 256);
            for (int64_t i = 0; i < b->nelems; i++)
              owb_tensor_set_double (b, i, a_row ? lo + i / 256 : b_col ? lo + i : lo + i % 256);
            int za = s8 ? -3 : 121, zb = s8 ? 5 : 130, zy = s8 ? 2 : 127;
            OwbModel *m = tu_model_new (13);
            owb_model_set_opset (m, OWB_DOMAIN, 1);
            OwbGraph *g = m->graph;
            tu_add_value (g->inputs, "a", qt, 2, ad, NULL);
            tu_add_value (g->inputs, "b", qt, 2, bd, NULL);
            owb_graph_add_initializer (g, "as", scalar_float (scales[si][0]));
            owb_graph_add_initializer (g, "bs", scalar_float (scales[si][1]));
            owb_graph_add_initializer (g, "ys", scalar_float (scales[si][2]));
            OwbTensor *z[3];
            for (int zi = 0; zi < 3; zi++)
              {
                z[zi] = owb_tensor_new (qt, 0, NULL, NULL);
                owb_tensor_set_double (z[zi], 0, zi == 0 ? za : (zi == 1 ? zb : zy));
              }
            owb_graph_add_initializer (g, "az", z[0]);
            owb_graph_add_initializer (g, "bz", z[1]);
            owb_graph_add_initializer (g, "yz", z[2]);
            tu_add_untyped_output (g->outputs, "y");
            OwbNode *node = tu_node (g, "QLinearBinary", "qb", "a,as,az,b,bs,bz,ys,yz", "y");
            g_free (node->domain);
            node->domain = g_strdup (OWB_DOMAIN);
            OwbAttribute *at = owb_node_add_attribute (node, "op", OWB_ATTR_STRING);
            at->s = g_strdup (mul ? "Mul" : "Add");
            at->s_len = strlen (at->s);
            g_autoptr (GError) error = NULL;
            OwbSession *sess = tu_session (m, 1 + (k % 3 == 0), &error);
            g_assert_no_error (error);
            const char *names[2] = { "a", "b" };
            OwbTensor *feeds[2] = { a, b }, *y = NULL;
            g_assert_true (owb_session_run (sess, 2, names, feeds, 1, NULL, &y, NULL, NULL, &error));
            g_assert_no_error (error);
            g_assert_cmpint (y->nelems, ==, 65536);
            for (int64_t i = 0; i < 65536; i++)
              {
                gboolean swap = a_row || b_col;
                int qa = lo + (int) (swap ? i % 256 : i / 256), qb = lo + (int) (swap ? i / 256 : i % 256);
                int want = qbinary_expected (qa, qb, mul, scales[si][0], za, scales[si][1], zb, scales[si][2], zy, s8);
                int got = s8 ? ((const int8_t *) y->data)[i] : ((const uint8_t *) y->data)[i];
                if (got != want)
                  g_error ("%s %s scales %d: a %d b %d: %d, want %d", path == 1 ? "portable" : path == 2 ? "AVX2" : "vector",
                           mul ? "Mul" : "Add", si, qa, qb, got, want);
              }
            owb_tensor_unref (y);
            owb_session_free (sess);
            owb_model_unref (m);
            owb_tensor_unref (a), owb_tensor_unref (b);
          }
    }
  _owb_qgemm_force_portable (FALSE);
  _owb_qgemm_force_avx2 (FALSE);
}


/* QLinearGlobalAveragePool against its definition (the integer sum of x - zx over a channel's
 * positions times x_scale / (n y_scale) in double, rounded half to even, plus zy, saturated):
 * channels first and last, rank 3, 4 and 5, channel counts that divide 64 (the image read as
 * 64-byte rows), 64 and more with a remainder, one channel, one position, more than 256 positions
 * (the 16-bit sums widened), uint8 and int8 in and out, zero points of both signs, scales that
 * saturate; the vector path and the portable one, one and two threads. */
static void
test_qlinear_global_average_pool (void)
{
  static const int64_t shapes[][6] = {
    /* rank, then N, C, spatial... (channels-first order) */
    { 4, 2, 16, 13, 11 }, { 4, 1, 32, 23, 29 }, { 4, 1, 144, 7, 9 }, { 4, 2, 67, 5, 4 }, { 4, 1, 1, 17, 19 },
    { 4, 1, 8, 1, 1 },    { 3, 2, 300, 9, 0 },  { 5, 1, 24, 3, 5, 7 }, { 4, 1, 64, 33, 31 },
  };
  static const float scales[][2] = { { 0.02f, 0.03f }, { 3.0f / 255, 3.0f / 255 }, { 0.05f, 0.001f } };
  GRand *r = g_rand_new_with_seed (23);
  for (int portable = 0; portable < 2; portable++)
    {
      _owb_qgemm_force_portable (portable);
      for (guint si = 0; si < G_N_ELEMENTS (shapes); si++)
        for (int k = 0; k < 8; k++)
          {
            gboolean last = k & 1, xs8 = (k >> 1) & 1, ys8 = (k >> 2) & 1;
            int rank = (int) shapes[si][0];
            int64_t N = shapes[si][1], C = shapes[si][2], HW = 1, xd[5];
            for (int i = 2; i < rank; i++)
              HW *= shapes[si][1 + i];
            /* channels-last dims: N, spatial..., C */
            xd[0] = N;
            for (int i = 2; i < rank; i++)
              xd[last ? i - 1 : i] = shapes[si][1 + i];
            xd[last ? rank - 1 : 1] = C;
            OwbDataType xt = xs8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8, yt = ys8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
            int lo = xs8 ? -128 : 0;
            OwbTensor *x = owb_tensor_new (xt, rank, xd, NULL);
            for (int64_t i = 0; i < x->nelems; i++)
              owb_tensor_set_double (x, i, g_rand_int_range (r, lo, lo + 256));
            int zx = xs8 ? (k & 2 ? -7 : 9) : 119, zy = ys8 ? -3 : 131;
            float xsc = scales[(si + k) % 3][0], ysc = scales[(si + k) % 3][1];
            OwbModel *m = tu_model_new (13);
            owb_model_set_opset (m, OWB_DOMAIN, 1);
            OwbGraph *g = m->graph;
            tu_add_value (g->inputs, "x", xt, rank, xd, NULL);
            owb_graph_add_initializer (g, "xs", scalar_float (xsc));
            owb_graph_add_initializer (g, "ys", scalar_float (ysc));
            OwbTensor *z = owb_tensor_new (xt, 0, NULL, NULL);
            owb_tensor_set_double (z, 0, zx);
            owb_graph_add_initializer (g, "xz", z);
            z = owb_tensor_new (yt, 0, NULL, NULL);
            owb_tensor_set_double (z, 0, zy);
            owb_graph_add_initializer (g, "yz", z);
            tu_add_untyped_output (g->outputs, "y");
            OwbNode *node = tu_node (g, "QLinearGlobalAveragePool", "gap", "x,xs,xz,ys,yz", "y");
            g_free (node->domain);
            node->domain = g_strdup (OWB_DOMAIN);
            owb_node_add_attribute (node, "channels_last", OWB_ATTR_INT)->i = last;
            g_autoptr (GError) error = NULL;
            OwbSession *sess = tu_session (m, 1 + (k % 3 == 0), &error);
            g_assert_no_error (error);
            const char *names[1] = { "x" };
            OwbTensor *y = NULL;
            g_assert_true (owb_session_run (sess, 1, names, &x, 1, NULL, &y, NULL, NULL, &error));
            g_assert_no_error (error);
            g_assert_cmpint (y->nelems, ==, N * C);
            g_assert_cmpint (y->dims[last ? rank - 1 : 1], ==, C);
            for (int64_t n = 0; n < N; n++)
              for (int64_t c = 0; c < C; c++)
                {
                  int64_t sum = 0;
                  for (int64_t p = 0; p < HW; p++)
                    sum += (int64_t) owb_tensor_get_double (x, last ? (n * HW + p) * C + c : (n * C + c) * HW + p) - zx;
                  double want = HW == 0 ? -1000 : nearbyint ((double) sum * xsc / ((double) HW * ysc)) + zy;
                  want = MIN (MAX (want, ys8 ? -128 : 0), ys8 ? 127 : 255);
                  double got = owb_tensor_get_double (y, n * C + c);
                  if (got != want)
                    g_error ("%s shape %u variant %d: channel %" G_GINT64_FORMAT " of image %" G_GINT64_FORMAT
                             ": %g, want %g", portable ? "portable" : "vector", si, k, c, n, got, want);
                }
            owb_tensor_unref (y);
            owb_tensor_unref (x);
            owb_session_free (sess);
            owb_model_unref (m);
          }
    }
  _owb_qgemm_force_portable (FALSE);
  g_rand_free (r);
}

/* One pool node (MaxPool or NhwcMaxPool, kernel 3x3, strides 2, pads 1 0 1 1) on x. */
static OwbTensor *
run_pool (const char *op, const char *domain, OwbTensor *x)
{
  OwbModel *m = tu_model_new (13);
  if (domain[0])
    owb_model_set_opset (m, domain, 1);
  tu_add_value (m->graph->inputs, "x", x->dtype, 4, x->dims, NULL);
  tu_add_untyped_output (m->graph->outputs, "y");
  OwbNode *node = tu_node (m->graph, op, "pool", "x", "y");
  g_free (node->domain);
  node->domain = g_strdup (domain);
  set_ints (node, "kernel_shape", 2, (int64_t[]) { 3, 3 });
  set_ints (node, "strides", 2, (int64_t[]) { 2, 2 });
  set_ints (node, "pads", 4, (int64_t[]) { 1, 0, 1, 1 });
  g_autoptr (GError) error = NULL;
  OwbSession *s = tu_session (m, 2, &error);
  g_assert_no_error (error);
  const char *names[1] = { "x" };
  OwbTensor *y = NULL;
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &y, NULL, NULL, &error));
  g_assert_no_error (error);
  owb_session_free (s);
  owb_model_unref (m);
  return y;
}

/* NhwcMaxPool on uint8 and int8 (a QDQ model's pool on its bytes), AVX-512 and portable, equals MaxPool's NCHW kernel,
 * odd channel counts and both edges padded. */
static void
test_nhwc_max_pool_8bit (void)
{
  GRand *r = g_rand_new_with_seed (11);
  static const int64_t channels[] = { 3, 64, 37, 130 };
  for (int k = 0; k < 16; k++)
    {
      /* the AVX-512 path (64 channels a vector, the last masked) and the portable one */
      _owb_qgemm_force_portable (k >= 8);
      gboolean s8 = k & 1;
      int64_t xd[4] = { 2, channels[k % 8 / 2], 11, 9 };
      OwbTensor *x = random_ints (s8 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8, 4, xd, r, s8 ? -128 : 0, s8 ? 127 : 255);
      OwbTensor *want = run_pool ("MaxPool", "", x);
      OwbTensor *xn = permute (x, to_nhwc);
      OwbTensor *yn = run_pool ("NhwcMaxPool", OWB_DOMAIN, xn);
      OwbTensor *y = permute (yn, to_nchw);
      g_assert_cmpint (y->dtype, ==, want->dtype);
      g_assert_cmpint (y->nelems, ==, want->nelems);
      g_assert_cmpint (memcmp (y->data, want->data, y->nbytes), ==, 0);
      owb_tensor_unref (x), owb_tensor_unref (want), owb_tensor_unref (xn), owb_tensor_unref (yn), owb_tensor_unref (y);
    }
  _owb_qgemm_force_portable (FALSE);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/qconv/amx", GINT_TO_POINTER (QPATH_AMX), test_qconv_path);
  g_test_add_data_func ("/qconv/vnni", GINT_TO_POINTER (QPATH_VNNI), test_qconv_path);
  g_test_add_func ("/qconv/depthwise-ties", test_qconv_depthwise_ties);
  g_test_add_func ("/qconv/avx2-ties", test_qconv_avx2_ties);
  g_test_add_data_func ("/qconv/portable", GINT_TO_POINTER (QPATH_PORTABLE), test_qconv_path);
  g_test_add_data_func ("/qconv/avx2", GINT_TO_POINTER (QPATH_AVX2), test_qconv_path);
  g_test_add_func ("/qconv/winograd-extremes", test_qconv_winograd_extremes);
  g_test_add_func ("/qconv/refuses-3d", test_qconv_refuses_3d);
  g_test_add_func ("/qconv/qlinear-lookup", test_qlinear_lookup);
  g_test_add_func ("/qconv/qlinear-binary-lookup", test_qlinear_binary_lookup);
  g_test_add_func ("/qconv/qlinear-binary", test_qlinear_binary);
  g_test_add_func ("/qconv/qlinear-global-average-pool", test_qlinear_global_average_pool);
  g_test_add_func ("/qconv/nhwc-max-pool-8bit", test_nhwc_max_pool_8bit);
  return g_test_run ();
}
