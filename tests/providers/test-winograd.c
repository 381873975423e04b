/* test-winograd.c: F(2x2, 3x3) Winograd convolution (cpu-winograd.c) against a double-precision
 * direct convolution: odd image sizes (partial tiles), paddings from 0 to 2 (tiles of zeros),
 * channel counts off the vector widths, batches, bias, residual, the per-pixel callback, threads,
 * the portable GEMM; which convolutions it takes; and a whole model where the layout level sends a
 * 3x3 convolution through it. */
#include "../engine/test-util.h"
#include "../../providers/cpu/cpu-winograd-private.h"
#include "gemm-test-util.h"

#include <math.h>
#include <string.h>

typedef struct {
  int tile;
  int64_t N, H, W, C, M, pad_t, pad_l, pad_b, pad_r;
  gboolean bias, residual, rows_fn;
  int threads;
} Case;

static OwbCpuConvGeom
geometry (const Case *cs)
{
  OwbCpuConvGeom g = { .nsp = 2, .N = cs->N, .C = cs->C, .M = cs->M, .group = 1, .Cg = cs->C, .Mg = cs->M };
  g.in[0] = cs->H;
  g.in[1] = cs->W;
  g.out[0] = cs->H + cs->pad_t + cs->pad_b - 2;
  g.out[1] = cs->W + cs->pad_l + cs->pad_r - 2;
  for (int i = 0; i < 2; i++)
    {
      g.k[i] = 3;
      g.s[i] = 1;
      g.d[i] = 1;
    }
  g.pad[0] = cs->pad_t;
  g.pad[1] = cs->pad_l;
  g.in_size = cs->H * cs->W;
  g.out_size = g.out[0] * g.out[1];
  g.ksize = 9;
  return g;
}

static void
run_case (const Case *cs, guint32 seed)
{
  GRand *r = g_rand_new_with_seed (seed);
  OwbCpuConvGeom g = geometry (cs);
  int64_t OH = g.out[0], OW = g.out[1], ny = cs->N * OH * OW * cs->M;
  float *x = g_new (float, cs->N * cs->H * cs->W * cs->C), *w = g_new (float, 9 * cs->C * cs->M);
  float *bias = g_new (float, cs->M), *z = g_new (float, ny), *y = g_new (float, ny);
  fill (x, cs->N * cs->H * cs->W * cs->C, r);
  fill (w, 9 * cs->C * cs->M, r);
  fill (bias, cs->M, r);
  fill (z, ny, r);
  for (int64_t i = 0; i < ny; i++)
    y[i] = NAN;
  OwbWinograd *wg = _owb_winograd_new (cs->C, cs->M, w, cs->tile);
  g_assert_cmpint (_owb_winograd_get_tile (wg), ==, cs->tile);
  OwbThreadPool *pool = cs->threads > 1 ? owb_thread_pool_new (cs->threads) : NULL;
  _owb_winograd_run (pool, wg, &g, x, cs->bias ? bias : NULL, cs->residual ? z : NULL, y,
                     cs->rows_fn ? square_rows : NULL, square_rows);
  if (pool)
    owb_thread_pool_free (pool);
  double tol = (cs->tile == 2 ? 2e-6 : 1e-5) * sqrt (9.0 * cs->C);
  for (int64_t n = 0; n < cs->N; n++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++)
        for (int64_t m = 0; m < cs->M; m++)
          {
            double ref = cs->bias ? bias[m] : 0;
            for (int64_t kh = 0; kh < 3; kh++)
              for (int64_t kw = 0; kw < 3; kw++)
                {
                  int64_t ih = oh + kh - cs->pad_t, iw = ow + kw - cs->pad_l;
                  if (ih < 0 || ih >= cs->H || iw < 0 || iw >= cs->W)
                    continue;
                  for (int64_t c = 0; c < cs->C; c++)
                    ref += (double) x[((n * cs->H + ih) * cs->W + iw) * cs->C + c]
                           * w[((kh * 3 + kw) * cs->C + c) * cs->M + m];
                }
            int64_t at = ((n * OH + oh) * OW + ow) * cs->M + m;
            if (cs->residual)
              ref += z[at];
            if (cs->rows_fn)
              ref *= ref;
            if (!(fabs (y[at] - ref) <= tol * (1 + fabs (ref))))
              g_error ("F(%d) N %" G_GINT64_FORMAT " %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " C %" G_GINT64_FORMAT
                       " M %" G_GINT64_FORMAT " pads %" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                       ",%" G_GINT64_FORMAT ": y[%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                       ",%" G_GINT64_FORMAT "] = %.9g, expected %.9g",
                       cs->tile, cs->N, cs->H, cs->W, cs->C, cs->M, cs->pad_t, cs->pad_l, cs->pad_b, cs->pad_r, n, oh, ow, m,
                       y[at], ref);
          }
  _owb_winograd_free (wg);
  g_free (x);
  g_free (w);
  g_free (bias);
  g_free (z);
  g_free (y);
  g_rand_free (r);
}

static const Case shapes[] = {
  { 0, 1, 8, 8, 8, 16, 1, 1, 1, 1, FALSE, FALSE, FALSE, 1 },
  { 0, 2, 7, 9, 5, 19, 1, 1, 1, 1, TRUE, FALSE, FALSE, 1 },   /* odd sizes: partial tiles on two edges */
  { 0, 1, 10, 6, 16, 32, 0, 0, 0, 0, TRUE, TRUE, FALSE, 1 },  /* no padding */
  { 0, 1, 5, 5, 3, 17, 2, 2, 2, 2, FALSE, TRUE, TRUE, 1 },    /* padding 2: tiles that read only zeros */
  { 0, 1, 9, 8, 7, 9, 0, 1, 2, 0, TRUE, FALSE, TRUE, 2 },     /* asymmetric padding */
  { 0, 1, 3, 3, 1, 1, 0, 0, 0, 0, TRUE, TRUE, FALSE, 1 },     /* one output pixel */
  { 0, 3, 20, 18, 64, 64, 1, 1, 1, 1, TRUE, TRUE, TRUE, 2 },  /* several blocks over two threads */
  { 0, 1, 14, 14, 40, 300, 1, 1, 1, 1, TRUE, FALSE, FALSE, 2 },
  { 0, 1, 13, 11, 24, 24, 1, 1, 1, 1, TRUE, TRUE, FALSE, 1 }, /* 4x4 tiles cut on both edges */
};

/* every shape with both tile sizes */
static void
run_all (guint32 seed)
{
  for (int tile = 2; tile <= 4; tile += 2)
    for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
      {
        Case cs = shapes[i];
        cs.tile = tile;
        run_case (&cs, seed + 100 * tile + i);
      }
}

static void
test_winograd_avx2 (void)
{
  run_all (7);
}

static void
test_winograd_portable (void)
{
  _owb_sgemm_force_portable (TRUE);
  run_all (70);
  _owb_sgemm_force_portable (FALSE);
}

static void
test_winograd_suits (void)
{
  Case cs = { 2, 1, 16, 16, 8, 16, 1, 1, 1, 1 };
  OwbCpuConvGeom g = geometry (&cs);
  g_assert_true (_owb_winograd_suits (&g, 2, 64));  /* 8 x 8 tiles */
  g_assert_false (_owb_winograd_suits (&g, 2, 65));
  g_assert_true (_owb_winograd_suits (&g, 4, 16));  /* 4 x 4 tiles */
  g_assert_false (_owb_winograd_suits (&g, 4, 17));
  OwbCpuConvGeom other = g;
  other.s[1] = 2;
  g_assert_false (_owb_winograd_suits (&other, 2, 1));
  other = g;
  other.d[0] = 2;
  g_assert_false (_owb_winograd_suits (&other, 2, 1));
  other = g;
  other.k[0] = other.k[1] = 5;
  g_assert_false (_owb_winograd_suits (&other, 2, 1));
  other = g;
  other.group = 2;
  g_assert_false (_owb_winograd_suits (&other, 2, 1));
  other = g;
  other.nsp = 1;
  g_assert_false (_owb_winograd_suits (&other, 2, 1));
}

/* x [1, 96, size, size] → Conv 3x3 pads 1 (+ bias) → Relu → Conv 3x3 pads 1 → Add x → y: at `all`, the
 * layout level makes both NhwcConvs (96 x 96 weights), which go through Winograd
 * (enough channels that the layout's cost rule converts them). */
static void
add_conv (OwbModel *m, const char *name, const char *inputs, const char *output, GRand *r)
{
  int64_t wd[] = { 96, 96, 3, 3 }, bd[] = { 96 };
  g_autofree char *wn = g_strconcat (name, "_w", NULL), *bn = g_strconcat (name, "_b", NULL);
  OwbTensor *w = tu_floats (4, wd, NULL), *b = tu_floats (1, bd, NULL);
  fill (w->data, w->nelems, r);
  fill (b->data, b->nelems, r);
  owb_graph_add_initializer (m->graph, wn, w);
  owb_graph_add_initializer (m->graph, bn, b);
  g_autofree char *ins = g_strdup_printf ("%s,%s,%s", inputs, wn, bn);
  OwbNode *conv = tu_node (m->graph, "Conv", name, ins, output);
  OwbAttribute *pads = owb_node_add_attribute (conv, "pads", OWB_ATTR_INTS);
  pads->n = 4;
  pads->ints = g_memdup2 ((int64_t[]){ 1, 1, 1, 1 }, 4 * sizeof (int64_t));
}

static void
check_in_model (int64_t size)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  int64_t xd[] = { 1, 96, size, size };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 4, xd, NULL);
  GRand *r = g_rand_new_with_seed (3);
  add_conv (m, "conv1", "x", "c1", r);
  tu_node (m->graph, "Relu", "relu", "c1", "r");
  add_conv (m, "conv2", "r", "c2", r);
  tu_node (m->graph, "Add", "add", "c2,x", "y");
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 4, xd, NULL);
  OwbTensor *x = tu_floats (4, xd, NULL);
  fill (x->data, x->nelems, r);
  g_rand_free (r);
  OwbTensor *want = NULL, *got = NULL;
  const char *in_names[] = { "x" };
  for (int level = 0; level < 2; level++)
    {
      OwbSessionOptions opts;
      owb_session_options_init (&opts);
      opts.providers = owb_providers_new_from_list ("cpu", NULL);
      opts.n_threads = 2;
      opts.optimize = level ? OWB_OPTIMIZE_ALL : OWB_OPTIMIZE_DISABLED;
      GError *error = NULL;
      OwbSession *s = owb_session_new (m, &opts, &error);
      g_assert_no_error (error);
      g_ptr_array_unref (opts.providers);
      if (level)
        {
          const OwbGraph *g = owb_session_get_graph (s);
          gboolean nhwc = FALSE;
          for (guint i = 0; i < g->nodes->len; i++)
            nhwc |= strcmp (((OwbNode *) g_ptr_array_index (g->nodes, i))->op_type, "NhwcConv") == 0;
          g_assert_true (nhwc);
        }
      g_assert_true (owb_session_run (s, 1, in_names, &x, 1, NULL, level ? &got : &want, NULL, NULL, &error));
      g_assert_no_error (error);
      owb_session_free (s);
    }
  double worst = 0, scale = 0;
  const float *a = want->data, *b2 = got->data;
  for (int64_t i = 0; i < want->nelems; i++)
    {
      worst = MAX (worst, fabs ((double) a[i] - b2[i]));
      scale = MAX (scale, fabs ((double) a[i]));
    }
  g_assert_cmpfloat (worst / scale, <=, 1e-5);
  owb_tensor_unref (x);
  owb_tensor_unref (want);
  owb_tensor_unref (got);
}

/* 16 x 16: 64 tiles of 2 x 2 (F(2x2)); 32 x 32: 64 tiles of 4 x 4 (F(4x4)) */
static void
test_winograd_in_model (void)
{
  check_in_model (16);
  check_in_model (32);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/winograd/avx2", test_winograd_avx2);
  g_test_add_func ("/winograd/portable", test_winograd_portable);
  g_test_add_func ("/winograd/suits", test_winograd_suits);
  g_test_add_func ("/winograd/in-model", test_winograd_in_model);
  return g_test_run ();
}
