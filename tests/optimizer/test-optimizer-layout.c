/* test-optimizer-layout.c: the layout level's layout_nhwc pass: convolutions become NhwcConv between
 * Transposes that are pushed through activations, residual Adds, Concat and pools and cancelled in
 * pairs, graph outputs staying NCHW; outputs unchanged against the unoptimized model on small CNNs
 * (depthwise, strided, padded, grouped, dilated, residual), on reductions of NHWC activations and
 * on a U-Net step (ConvTranspose ->
 * NhwcConvTranspose, Resize on NHWC); portable mode, near misses, the profitability check, and a
 * saved model reloading. */
#include "../engine/test-util.h"

#include <math.h>
#include <string.h>
#include "optimizer-test-util.h"

#define WB OWB_DOMAIN

/* ---- model building ---- */

static void
add_weight (OwbModel *m, const char *name, int rank, const int64_t *dims)
{
  add_weight_range (m, name, rank, dims, -0.5, 0.5);
}

static void
add_input (OwbModel *m, const char *name, OwbDataType dtype, int rank, const int64_t *dims)
{
  tu_add_value (m->graph->inputs, name, dtype, rank, dims, NULL);
}

/* Conv `name` reading x, writing y: weight name_w [m, c/group, k, k] (and bias name_b); pad -1: no pads. */
static OwbNode *
add_conv (OwbModel *m, const char *name, const char *x, const char *y, int64_t c, int64_t mo, int64_t k,
          int64_t stride, int64_t pad, int64_t dilation, int64_t group)
{
  char *w = g_strconcat (name, "_w", NULL), *b = g_strconcat (name, "_b", NULL);
  int64_t wd[4] = { mo, c / group, k, k }, bd[1] = { mo };
  add_weight (m, w, 4, wd);
  add_weight (m, b, 1, bd);
  char *ins = g_strdup_printf ("%s,%s,%s", x, w, b);
  OwbNode *node = tu_node (m->graph, "Conv", name, ins, y);
  int64_t ks[2] = { k, k }, s[2] = { stride, stride }, d[2] = { dilation, dilation }, p[4] = { pad, pad, pad, pad };
  tu_set_ints (node, "kernel_shape", 2, ks);
  tu_set_ints (node, "strides", 2, s);
  tu_set_ints (node, "dilations", 2, d);
  if (pad >= 0)
    tu_set_ints (node, "pads", 4, p);
  tu_set_int (node, "group", group);
  g_free (ins);
  g_free (w);
  g_free (b);
  return node;
}

static OwbNode *
add_pool (OwbModel *m, const char *op, const char *name, const char *x, const char *y, int64_t k, int64_t stride,
          int64_t pad)
{
  OwbNode *node = tu_node (m->graph, op, name, x, y);
  int64_t ks[2] = { k, k }, s[2] = { stride, stride }, p[4] = { pad, pad, pad, pad };
  tu_set_ints (node, "kernel_shape", 2, ks);
  tu_set_ints (node, "strides", 2, s);
  tu_set_ints (node, "pads", 4, p);
  return node;
}

/* X [1, 4, 32, 32] -> Conv -> Relu -> Conv -> Add (the Relu: residual) -> MaxPool -> Conv 1x1 -> Y [1, 4, 16, 16] */
static OwbModel *
residual_chain (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 4, 32, 32 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "conv1", "x", "c1", 4, 32, 3, 1, 1, 1, 1);
  tu_node (m->graph, "Relu", "relu1", "c1", "r1");
  add_conv (m, "conv2", "r1", "c2", 32, 32, 3, 1, 1, 1, 1);
  tu_node (m->graph, "Add", "add", "c2,r1", "s");
  add_pool (m, "MaxPool", "pool", "s", "p", 2, 2, 0);
  add_conv (m, "head", "p", "y", 32, 4, 1, 1, 0, 1, 1);
  add_output (m, "y");
  return m;
}

/* Strided stem, depthwise, HardSwish, grouped dilated, 1x1, GlobalAveragePool, classifier conv. */
static OwbModel *
mobile_block (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 3, 24, 24 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "stem", "x", "a", 3, 48, 3, 2, 1, 1, 1);
  tu_node (m->graph, "Relu", "relu", "a", "b");
  add_conv (m, "dw", "b", "c", 48, 48, 3, 1, 1, 1, 48);
  tu_node (m->graph, "HardSwish", "hs", "c", "d");
  add_conv (m, "grouped", "d", "e", 48, 48, 3, 1, 2, 2, 4);
  add_conv (m, "dw_s2", "e", "e2", 48, 48, 5, 2, 2, 1, 48);
  add_conv (m, "expand", "e2", "f", 48, 96, 1, 1, 0, 1, 1);
  tu_node (m->graph, "GlobalAveragePool", "gap", "f", "g");
  add_conv (m, "classifier", "g", "y", 96, 10, 1, 1, 0, 1, 1);
  add_output (m, "y");
  return m;
}

/* An inverted residual block at a large enough size to fuse: stem (RGB read in place) -> expand
 * 1x1 (ReLU) -> depthwise 3x3/2 (HardSwish) -> "project" 1x1 -> depthwise, whose input (32 x 32 x
 * 160 floats, 640 KiB) is also averaged on its own (so that pair is kept apart); the two averages
 * are added. The first expanded tensor is 64 x 64 x 64 floats (1 MiB). */
static OwbModel *
expand_block (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 3, 128, 128 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "stem", "x", "a", 3, 16, 3, 2, 1, 1, 1);
  tu_node (m->graph, "Relu", "relu0", "a", "a1");
  add_conv (m, "expand", "a1", "b", 16, 64, 1, 1, 0, 1, 1);
  tu_node (m->graph, "Relu", "relu1", "b", "b1");
  add_conv (m, "dw", "b1", "c", 64, 64, 3, 2, 1, 1, 64);
  tu_node (m->graph, "HardSwish", "hs", "c", "c1");
  add_conv (m, "project", "c1", "d", 64, 160, 1, 1, 0, 1, 1);
  add_conv (m, "dw2", "d", "e", 160, 160, 3, 1, 1, 1, 160);
  tu_node (m->graph, "GlobalAveragePool", "gap", "e", "ge");
  tu_node (m->graph, "GlobalAveragePool", "gap_d", "d", "gd");
  tu_node (m->graph, "Add", "add", "ge,gd", "y");
  add_output (m, "y");
  return m;
}

/* Reductions of the NHWC activations: a mean over H and W without keepdims (mnasnet's head), a max
 * over C with keepdims, a sum over C and W from a constant axes input, all read the NHWC value; a
 * mean over W alone without keepdims (its remaining axes would come out in another order) stays on
 * the NCHW Transpose. */
static OwbModel *
reduce_heads (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 3, 12, 10 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "stem", "x", "a0", 3, 32, 3, 1, 1, 1, 1);
  add_conv (m, "conv", "a0", "a1", 32, 64, 3, 1, 1, 1, 1);
  add_conv (m, "conv2", "a1", "a", 64, 64, 3, 1, 1, 1, 1);
  tu_node (m->graph, "Relu", "relu", "a", "b");
  OwbNode *mean_hw = tu_node (m->graph, "ReduceMean", "mean_hw", "b", "y_mean");
  tu_set_ints (mean_hw, "axes", 2, (int64_t[]){ 2, 3 });
  tu_set_int (mean_hw, "keepdims", 0);
  OwbNode *max_c = tu_node (m->graph, "ReduceMax", "max_c", "b", "y_max");
  tu_set_ints (max_c, "axes", 1, (int64_t[]){ -3 });
  OwbTensor *axes = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
  ((int64_t *) axes->data)[0] = 1;
  ((int64_t *) axes->data)[1] = 3;
  owb_graph_add_initializer (m->graph, "sum_axes", axes);
  OwbNode *sum = tu_node (m->graph, "ReduceSum", "sum_cw", "b,sum_axes", "y_sum");
  tu_set_int (sum, "keepdims", 0);
  OwbNode *mean_w = tu_node (m->graph, "ReduceMean", "mean_w", "b", "y_mean_w");
  tu_set_ints (mean_w, "axes", 1, (int64_t[]){ 3 });
  tu_set_int (mean_w, "keepdims", 0);
  add_output (m, "y_mean");
  add_output (m, "y_max");
  add_output (m, "y_sum");
  add_output (m, "y_mean_w");
  return m;
}

/* Per-channel Add, scalar Mul, two branches (1x1, 3x3 SAME_UPPER) concatenated on channels,
 * AveragePool counting the padding, 1x1 head. */
static OwbModel *
concat_block (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 8, 20, 20 }, cd[3] = { 64, 1, 1 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "conv", "x", "a", 8, 64, 3, 1, 1, 1, 1);
  add_weight (m, "shift", 3, cd);
  tu_node (m->graph, "Add", "add", "a,shift", "b");
  owb_graph_add_initializer (m->graph, "two", owb_tensor_new_scalar_float (2.0f));
  tu_node (m->graph, "Mul", "mul", "b,two", "c");
  add_conv (m, "left", "c", "l", 64, 32, 1, 1, 0, 1, 1);
  OwbNode *right = add_conv (m, "right", "c", "r", 64, 32, 3, 1, -1, 1, 1);
  tu_set_string (right, "auto_pad", "SAME_UPPER");
  OwbNode *cat = tu_node (m->graph, "Concat", "cat", "l,r", "cat");
  tu_set_int (cat, "axis", 1);
  OwbNode *avg = add_pool (m, "AveragePool", "avg", "cat", "p", 3, 1, 1);
  tu_set_int (avg, "count_include_pad", 1);
  add_conv (m, "head", "p", "y", 64, 4, 1, 1, 0, 1, 1);
  add_output (m, "y");
  return m;
}

/* A U-Net step: X [1, 4, 32, 32] -> Conv -> s; Conv stride 2 -> Relu -> ConvTranspose (k2, s2) -> u;
 * Concat (u, s) -> Resize 2x (linear half_pixel; `sizes` or `scales`, constant) -> Conv -> Y
 * [1, 4, 64, 64]. resize_c: the last Conv comes first, and the Resize after it (writing Y) also
 * scales the channels (2x), which the NHWC Resize does not take. */
static OwbModel *
unet_step (int use_sizes, gboolean resize_c)
{
  /* use_sizes 2: scales of H and W alone, through Resize-18's axes (given as -1, -2) */
  OwbModel *m = tu_model_new (use_sizes == 2 ? 18 : 13);
  int64_t xd[4] = { 1, 4, 32, 32 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "conv0", "x", "s", 4, 32, 3, 1, 1, 1, 1);
  add_conv (m, "conv1", "s", "a", 32, 64, 3, 2, 1, 1, 1);
  tu_node (m->graph, "Relu", "relu", "a", "r");
  int64_t wd[4] = { 64, 32, 2, 2 }, bd[1] = { 32 };
  add_weight (m, "up_w", 4, wd);
  add_weight (m, "up_b", 1, bd);
  OwbNode *up = tu_node (m->graph, "ConvTranspose", "up", "r,up_w,up_b", "u");
  int64_t k2[2] = { 2, 2 };
  tu_set_ints (up, "kernel_shape", 2, k2);
  tu_set_ints (up, "strides", 2, k2);
  OwbNode *cat = tu_node (m->graph, "Concat", "cat", "u,s", "cat");
  tu_set_int (cat, "axis", 1);
  int64_t four[1] = { 4 };
  if (resize_c)
    add_conv (m, "head", "cat", "h", 64, 4, 3, 1, 1, 1, 1);
  if (use_sizes == 2)
    {
      int64_t two[1] = { 2 };
      OwbTensor *sc = owb_tensor_new (OWB_TYPE_FLOAT, 1, two, NULL);
      float v[2] = { 2, 2 };
      memcpy (sc->data, v, sizeof v);
      owb_graph_add_initializer (m->graph, "scales", sc);
    }
  else if (use_sizes)
    {
      OwbTensor *sz = owb_tensor_new (OWB_TYPE_INT64, 1, four, NULL);
      int64_t v[4] = { 1, resize_c ? 8 : 64, 64, 64 };
      memcpy (sz->data, v, sizeof v);
      owb_graph_add_initializer (m->graph, "sizes", sz);
    }
  else
    {
      OwbTensor *sc = owb_tensor_new (OWB_TYPE_FLOAT, 1, four, NULL);
      float v[4] = { 1, resize_c ? 2 : 1, 2, 2 };
      memcpy (sc->data, v, sizeof v);
      owb_graph_add_initializer (m->graph, "scales", sc);
    }
  gboolean sizes = use_sizes == 1;
  OwbNode *rs = tu_node (m->graph, "Resize", "resize",
                         resize_c ? (sizes ? "h,,,sizes" : "h,,scales") : (sizes ? "cat,,,sizes" : "cat,,scales"),
                         resize_c ? "y" : "z");
  if (use_sizes == 2)
    {
      int64_t axes[2] = { -1, -2 };
      tu_set_ints (rs, "axes", 2, axes);
    }
  tu_set_string (rs, "mode", "linear");
  tu_set_string (rs, "coordinate_transformation_mode", "half_pixel");
  if (!resize_c)
    add_conv (m, "head", "z", "y", 64, 4, 3, 1, 1, 1, 1);
  add_output (m, "y");
  return m;
}

/* BatchNormalization `name` of c channels reading x: random scale, shift and mean, var in [0.5, 1.5]. */
static void
add_bn (OwbModel *m, const char *name, const char *x, const char *y, int64_t c)
{
  static const char *const params[4] = { "scale", "B", "mean", "var" };
  GString *ins = g_string_new (x);
  for (int i = 0; i < 4; i++)
    {
      g_autofree char *p = g_strdup_printf ("%s_%s", name, params[i]);
      owb_graph_add_initializer (m->graph, p,
                                 seeded_tensor (OWB_TYPE_FLOAT, 1, &c, g_str_hash (p), i == 3 ? 0.5 : -1, 1.5));
      g_string_append_printf (ins, ",%s", p);
    }
  tu_node (m->graph, "BatchNormalization", name, ins->str, y);
  g_string_free (ins, TRUE);
}

/* Two DenseNet layers and a transition: each layer reads the Concat of everything before it through
 * a pre-activation BatchNormalization + Relu (no Conv to fold it into), 1x1 then 3x3 convolutions;
 * the transition is BatchNormalization + Relu + 1x1 + a Pad of zeros + AveragePool 2x2. The first
 * layer's BatchNormalization reads the stem's output, which the Concat reads too. */
static OwbModel *
dense_block (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 8, 16, 16 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "stem", "x", "c0", 8, 32, 3, 1, 1, 1, 1);
  add_bn (m, "l1_bn", "c0", "l1_n", 32);
  tu_node (m->graph, "Relu", "l1_relu", "l1_n", "l1_r");
  add_conv (m, "l1_conv1", "l1_r", "l1_a", 32, 16, 1, 1, 0, 1, 1);
  tu_node (m->graph, "Relu", "l1_relu2", "l1_a", "l1_b");
  add_conv (m, "l1_conv2", "l1_b", "n1", 16, 8, 3, 1, 1, 1, 1);
  tu_set_int (tu_node (m->graph, "Concat", "cat1", "c0,n1", "cat1"), "axis", 1);
  add_bn (m, "l2_bn", "cat1", "l2_n", 40);
  tu_node (m->graph, "Relu", "l2_relu", "l2_n", "l2_r");
  add_conv (m, "l2_conv1", "l2_r", "l2_a", 40, 16, 1, 1, 0, 1, 1);
  add_bn (m, "l2_bn2", "l2_a", "l2_an", 16); /* folds into l2_conv1 */
  tu_node (m->graph, "Relu", "l2_relu2", "l2_an", "l2_b");
  add_conv (m, "l2_conv2", "l2_b", "n2", 16, 8, 3, 1, 1, 1, 1);
  tu_set_int (tu_node (m->graph, "Concat", "cat2", "cat1,n2", "cat2"), "axis", 1);
  add_bn (m, "t_bn", "cat2", "t_n", 48);
  tu_node (m->graph, "Relu", "t_relu", "t_n", "t_r");
  add_conv (m, "t_conv", "t_r", "t_c", 48, 24, 1, 1, 0, 1, 1);
  int64_t eight = 8;
  OwbTensor *zeros = owb_tensor_new (OWB_TYPE_INT64, 1, &eight, NULL);
  owb_graph_add_initializer (m->graph, "zero_pads", zeros);
  tu_node (m->graph, "Pad", "t_pad", "t_c,zero_pads", "t_p");
  add_pool (m, "AveragePool", "t_pool", "t_p", "y", 2, 2, 0);
  add_output (m, "y");
  return m;
}

static void
add_int64s (OwbModel *m, const char *name, int n, const int64_t *values)
{
  int64_t dim = n;
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, &dim, NULL);
  memcpy (t->data, values, sizeof (int64_t) * n);
  owb_graph_add_initializer (m->graph, name, t);
}

/* Channel shuffle `name` of c channels in 2 groups on an h x w value: Reshape, Transpose, Reshape
 * (the second Reshape's target has a -1, as PyTorch writes it). */
static void
add_shuffle (OwbModel *m, const char *name, const char *x, const char *y, int64_t c, int64_t h, int64_t w)
{
  g_autofree char *s5 = g_strconcat (name, "_s5", NULL), *s4 = g_strconcat (name, "_s4", NULL);
  g_autofree char *r5 = g_strconcat (name, "_r5", NULL), *t5 = g_strconcat (name, "_t5", NULL);
  g_autofree char *ins1 = g_strdup_printf ("%s,%s", x, s5), *ins2 = g_strdup_printf ("%s,%s", t5, s4);
  g_autofree char *n1 = g_strconcat (name, "_reshape", NULL), *n2 = g_strconcat (name, "_transpose", NULL),
                  *n3 = g_strconcat (name, "_reshape_back", NULL);
  add_int64s (m, s5, 5, (int64_t[]){ 1, 2, c / 2, h, w });
  add_int64s (m, s4, 4, (int64_t[]){ 1, -1, h, w });
  tu_node (m->graph, "Reshape", n1, ins1, r5);
  tu_set_ints (tu_node (m->graph, "Transpose", n2, r5, t5), "perm", 5, (int64_t[]){ 0, 2, 1, 3, 4 });
  tu_node (m->graph, "Reshape", n3, ins2, y);
}

/* Two ShuffleNetV2 units: the first takes its halves with Slice (constant starts, ends, axes),
 * the second with Split (a constant split); each runs one half through 1x1, depthwise 3x3, 1x1,
 * concatenates it with the other and shuffles the channels. */
static OwbModel *
shuffle_block (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 8, 16, 16 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "stem", "x", "a0", 8, 64, 3, 1, 1, 1, 1);
  tu_node (m->graph, "Relu", "stem_relu", "a0", "a");
  add_int64s (m, "zero", 1, (int64_t[]){ 0 });
  add_int64s (m, "half", 1, (int64_t[]){ 32 });
  add_int64s (m, "all", 1, (int64_t[]){ 64 });
  add_int64s (m, "chan", 1, (int64_t[]){ 1 });
  tu_node (m->graph, "Slice", "left", "a,zero,half,chan", "s1");
  tu_node (m->graph, "Slice", "right", "a,half,all,chan", "s2");
  add_conv (m, "u1_pw1", "s2", "u1_a", 32, 32, 1, 1, 0, 1, 1);
  tu_node (m->graph, "Relu", "u1_relu", "u1_a", "u1_b");
  add_conv (m, "u1_dw", "u1_b", "u1_c", 32, 32, 3, 1, 1, 1, 32);
  add_conv (m, "u1_pw2", "u1_c", "u1_d", 32, 32, 1, 1, 0, 1, 1);
  tu_set_int (tu_node (m->graph, "Concat", "u1_cat", "s1,u1_d", "u1_cat"), "axis", 1);
  add_shuffle (m, "u1_shuffle", "u1_cat", "u1_y", 64, 16, 16);
  add_int64s (m, "halves", 2, (int64_t[]){ 32, 32 });
  tu_set_int (tu_node (m->graph, "Split", "u2_split", "u1_y,halves", "p,q"), "axis", 1);
  add_conv (m, "u2_pw", "q", "u2_a", 32, 32, 1, 1, 0, 1, 1);
  tu_set_int (tu_node (m->graph, "Concat", "u2_cat", "p,u2_a", "u2_cat"), "axis", -3);
  add_shuffle (m, "u2_shuffle", "u2_cat", "u2_y", 64, 16, 16);
  add_conv (m, "head", "u2_y", "y", 64, 8, 3, 1, 1, 1, 1);
  add_output (m, "y");
  return m;
}

/* A ConvNeXt stage: stem 4x4/4, then the model's own permutes around what runs on NHWC: LayerNorm
 * over channels (the downsampling norm), a 7x7 depthwise convolution, LayerNorm, Linear 4x, Relu,
 * Linear back, the residual Add in NCHW, a mean over H and W. */
static OwbModel *
convnext_block (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 3, 32, 32 }, c = 32, w1[2] = { 32, 128 }, b1[1] = { 128 }, w2[2] = { 128, 32 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "stem", "x", "s", 3, 32, 4, 4, 0, 1, 1);
  static const int64_t to_last[4] = { 0, 2, 3, 1 }, to_first[4] = { 0, 3, 1, 2 };
  tu_set_ints (tu_node (m->graph, "Transpose", "norm_in", "s", "s_t"), "perm", 4, to_last);
  add_weight (m, "ln0_g", 1, &c);
  add_weight (m, "ln0_b", 1, &c);
  tu_set_int (tu_node (m->graph, "LayerNormalization", "ln0", "s_t,ln0_g,ln0_b", "s_n"), "axis", -1);
  tu_set_ints (tu_node (m->graph, "Transpose", "norm_out", "s_n", "a"), "perm", 4, to_first);
  add_conv (m, "dw", "a", "d", 32, 32, 7, 1, 3, 1, 32);
  tu_set_ints (tu_node (m->graph, "Transpose", "block_in", "d", "d_t"), "perm", 4, to_last);
  add_weight (m, "ln1_g", 1, &c);
  add_weight (m, "ln1_b", 1, &c);
  tu_set_int (tu_node (m->graph, "LayerNormalization", "ln1", "d_t,ln1_g,ln1_b", "n"), "axis", -1);
  add_weight (m, "fc1_w", 2, w1);
  add_weight (m, "fc1_b", 1, b1);
  add_weight (m, "fc2_w", 2, w2);
  tu_node (m->graph, "MatMul", "fc1", "n,fc1_w", "h0");
  tu_node (m->graph, "Add", "fc1_bias", "h0,fc1_b", "h1");
  tu_node (m->graph, "Relu", "act", "h1", "h2");
  tu_node (m->graph, "MatMul", "fc2", "h2,fc2_w", "h3");
  tu_set_ints (tu_node (m->graph, "Transpose", "block_out", "h3", "h4"), "perm", 4, to_first);
  tu_node (m->graph, "Add", "residual", "a,h4", "r");
  OwbNode *mean = tu_node (m->graph, "ReduceMean", "mean", "r", "y");
  tu_set_ints (mean, "axes", 2, (int64_t[]){ 2, 3 });
  tu_set_int (mean, "keepdims", 0);
  add_output (m, "y");
  return m;
}

/* ---- running and comparing ---- */

static OwbSession *
session_at (OwbModel *m, OwbOptimizeLevel level, int threads, GError **error)
{
  return opt_session_new (m, level, threads, NULL, error);
}

/* Runs m unoptimized and at the layout level on the same random inputs; every output must agree
 * within 1e-5. Returns the optimized session. */
static OwbSession *
check_layout (OwbModel *m, int threads)
{
  GError *error = NULL;
  OwbSession *plain = session_at (m, OWB_OPTIMIZE_DISABLED, 1, &error);
  g_assert_no_error (error);
  OwbSession *opt = session_at (m, OWB_OPTIMIZE_LAYOUT, threads, &error);
  g_assert_no_error (error);
  const char *names[8];
  OwbTensor *inputs[8];
  guint n_in = owb_session_get_n_inputs (plain);
  for (guint i = 0; i < n_in; i++)
    {
      const OwbValueInfo *info = owb_session_get_input (plain, i);
      int64_t dims[OWB_MAX_RANK];
      for (int d = 0; d < info->type.rank; d++)
        dims[d] = info->type.dims[d].value;
      inputs[i] = seeded_tensor (info->type.dtype, info->type.rank, dims, 100 + i, -2, 2);
      names[i] = info->name;
    }
  guint n_out = owb_session_get_n_outputs (plain);
  OwbTensor *want[8] = { NULL }, *got[8] = { NULL };
  g_assert_true (owb_session_run (plain, n_in, names, inputs, n_out, NULL, want, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (owb_session_run (opt, n_in, names, inputs, n_out, NULL, got, NULL, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < n_out; i++)
    {
      g_assert_cmpfloat (max_rel_diff (want[i], got[i]), <=, 1e-5);
      owb_tensor_unref (want[i]);
      owb_tensor_unref (got[i]);
    }
  for (guint i = 0; i < n_in; i++)
    owb_tensor_unref (inputs[i]);
  owb_session_free (plain);
  return opt;
}

static OwbOptimizeReport *
optimize (OwbModel *m, OwbOptimizeLevel level, gboolean portable)
{
  OwbOptimizeOptions options;
  owb_optimize_options_init (&options);
  options.level = level;
  options.portable = portable;
  return optimize_on_cpu (m, &options);
}

static gboolean
has_near_miss (const OwbPassReport *p, const char *needle)
{
  for (guint i = 0; p && i < p->near_misses->len; i++)
    if (strstr (g_ptr_array_index (p->near_misses, i), needle))
      return TRUE;
  return FALSE;
}

static void
assert_output_dims (const OwbSession *s, guint i, const int64_t *want)
{
  const OwbValueInfo *info = owb_session_get_output (s, i);
  g_assert_cmpint (info->type.rank, ==, 4);
  for (int d = 0; d < 4; d++)
    g_assert_cmpint (info->type.dims[d].value, ==, want[d]);
}

/* ---- tests ---- */

static void
test_residual_chain_graph (void)
{
  g_autoptr (OwbModel) m = residual_chain ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, FALSE);
  const OwbGraph *g = m->graph;
  g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 3);
  g_assert_cmpuint (count_op (g, "NhwcMaxPool"), ==, 1);
  g_assert_cmpuint (count_op (g, "Conv"), ==, 0);
  g_assert_cmpuint (count_op (g, "FusedConv"), ==, 0);
  g_assert_cmpuint (count_op (g, "MaxPool"), ==, 0);
  /* one back to NCHW at the output: every pair in between cancelled, and the first convolution
   * reads the 4-channel input in place (nchw_input) instead of through a Transpose */
  g_assert_cmpuint (count_op (g, "Transpose"), ==, 1);
  g_assert_cmpuint (g->nodes->len, ==, 5);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (g->nodes, i);
      if (strcmp (node->op_type, "NhwcConv") == 0)
        g_assert_cmpint (owb_node_get_int (node, "nchw_input", 0), ==, strcmp (node->inputs[0], "x") == 0);
    }
  g_assert_cmpint (owb_model_get_opset (m, WB), ==, 1);
  /* provenance: every NhwcConv names the convolution it replaced */
  const OwbPassReport *p = find_pass_report (report, "layout_nhwc");
  g_assert_nonnull (p);
  guint n_conv = 0;
  for (guint i = 0; i < p->created->len; i++)
    {
      const OwbOptimizeCreated *c = g_ptr_array_index (p->created, i);
      if (strcmp (c->op_type, "NhwcConv") != 0)
        continue;
      n_conv++;
      g_assert_cmpstr (c->domain, ==, WB);
      g_assert_cmpuint (c->from->len, ==, 1);
      /* and keeps its name, so its scope: the view and the saved model still say "conv2" */
      g_assert_cmpstr (c->node, ==, g_ptr_array_index (c->from, 0));
    }
  g_assert_cmpuint (n_conv, ==, 3);
  /* every node under the name of the node it replaced; the Transpose named after the one it serves */
  const char *names[] = { "conv1", "conv2", "pool", "head", "head_to_nchw" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    g_assert_cmpstr (((OwbNode *) g_ptr_array_index (g->nodes, i))->name, ==, names[i]);
  /* the report is the net change: the cancelled Transposes appear neither created nor removed */
  g_assert_cmpuint (p->created->len, ==, g->nodes->len);
  for (guint i = 0; i < p->removed->len; i++)
    {
      const char *removed = g_ptr_array_index (p->removed, i);
      g_assert_false (g_str_has_suffix (removed, "_to_nhwc") || g_str_has_suffix (removed, "_to_nchw"));
    }
  /* the graph output is still written under its name, in NCHW */
  const OwbNode *last = NULL;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (g->nodes, i);
      if (strcmp (node->outputs[0], "y") == 0)
        last = node;
    }
  g_assert_nonnull (last);
  g_assert_cmpstr (last->op_type, ==, "Transpose");
  int n = 0;
  const int64_t *perm = owb_node_get_ints (last, "perm", &n);
  g_assert_cmpint (n, ==, 4);
  g_assert_cmpint (perm[1], ==, 3);
}

static void
test_residual_chain_outputs (void)
{
  g_autoptr (OwbModel) m = residual_chain ();
  OwbSession *s = check_layout (m, 1);
  int64_t want[4] = { 1, 4, 16, 16 };
  assert_output_dims (s, 0, want);
  g_assert_cmpuint (count_op (owb_session_get_graph (s), "NhwcConv"), ==, 3);
  owb_session_free (s);
  /* and on several threads */
  s = check_layout (m, 3);
  owb_session_free (s);
}

/* Two stems (3x3 and 7x7, stride 2) read a 3-channel image in place; a 6-channel input and a
 * 3-channel one under a 96-channel convolution keep their NHWC Transposes. */
static void
test_nchw_input_stems (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 3, 19, 23 }, x6d[4] = { 1, 6, 10, 12 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_input (m, "x6", OWB_TYPE_FLOAT, 4, x6d);
  add_conv (m, "stem", "x", "a", 3, 16, 3, 2, 1, 1, 1);
  add_conv (m, "stem7", "x", "b", 3, 16, 7, 2, 3, 1, 1);
  tu_node (m->graph, "Add", "add", "a,b", "c");
  add_conv (m, "next", "c", "d", 16, 64, 3, 1, 1, 1, 1);
  add_conv (m, "next2", "d", "e", 64, 64, 3, 1, 1, 1, 1);
  tu_node (m->graph, "GlobalAveragePool", "gap", "e", "y");
  add_conv (m, "six", "x6", "f", 6, 32, 3, 1, 1, 1, 1);
  add_conv (m, "six2", "f", "g", 32, 32, 3, 1, 1, 1, 1);
  tu_node (m->graph, "GlobalAveragePool", "gap6", "g", "y6");
  /* 96 output channels: above what the direct kernel takes, so the Transpose stays */
  int64_t xwd[4] = { 1, 3, 16, 16 };
  add_input (m, "xw", OWB_TYPE_FLOAT, 4, xwd);
  add_conv (m, "wide", "xw", "h", 3, 96, 3, 1, 1, 1, 1);
  add_conv (m, "wide2", "h", "i", 96, 96, 3, 1, 1, 1, 1);
  tu_node (m->graph, "GlobalAveragePool", "gapw", "i", "yw");
  add_output (m, "y");
  add_output (m, "y6");
  add_output (m, "yw");
  OwbSession *s = check_layout (m, 2);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 8);
  guint nchw = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (g->nodes, i);
      if (strcmp (node->op_type, "Transpose") == 0)
        g_assert_cmpstr (node->inputs[0], !=, "x");
      if (strcmp (node->op_type, "NhwcConv") == 0 && owb_node_get_int (node, "nchw_input", 0))
        {
          g_assert_cmpstr (node->inputs[0], ==, "x");
          nchw++;
        }
    }
  g_assert_cmpuint (nchw, ==, 2);
  /* x6's and xw's Transposes and the three outputs' */
  g_assert_cmpuint (count_op (g, "Transpose"), ==, 5);
  owb_session_free (s);
  owb_model_unref (m);
}

static void
test_mobile_block_outputs (void)
{
  g_autoptr (OwbModel) m = mobile_block ();
  OwbSession *s = check_layout (m, 2);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 6);
  g_assert_cmpuint (count_op (g, "NhwcGlobalAveragePool"), ==, 1);
  /* the output's; the stem reads the RGB input in place */
  g_assert_cmpuint (count_op (g, "Transpose"), ==, 1);
  int64_t want[4] = { 1, 10, 1, 1 };
  assert_output_dims (s, 0, want);
  owb_session_free (s);
}

/* The first expand -> depthwise pair becomes one NhwcPointwiseDepthwise (outputs unchanged, on 1
 * and 2 threads); the second is kept: its expanded tensor is averaged too. */
static void
test_pointwise_depthwise_fused (void)
{
  for (int threads = 1; threads <= 2; threads++)
    {
      g_autoptr (OwbModel) m = expand_block ();
      OwbSession *s = check_layout (m, threads);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (count_op (g, "NhwcPointwiseDepthwise"), ==, 1);
      /* stem, project, dw2 */
      g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 3);
      owb_session_free (s);
    }
  g_autoptr (OwbModel) m = expand_block ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, FALSE);
  const OwbPassReport *p = find_pass_report (report, "fuse_pointwise_depthwise");
  g_assert_nonnull (p);
  g_assert_true (has_near_miss (p, "output is read elsewhere too"));
  /* the fused node is the depthwise convolution's, under its name */
  gboolean found = FALSE;
  for (guint i = 0; i < m->graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (m->graph->nodes, i);
      if (strcmp (node->op_type, "NhwcPointwiseDepthwise") == 0)
        {
          g_assert_cmpstr (node->name, ==, "dw");
          found = TRUE;
        }
    }
  g_assert_true (found);
  /* extended (no layout): nothing to fuse */
  g_autoptr (OwbModel) m2 = expand_block ();
  g_autoptr (OwbOptimizeReport) r2 = optimize (m2, OWB_OPTIMIZE_EXTENDED, FALSE);
  g_assert_cmpuint (count_op (m2->graph, "NhwcPointwiseDepthwise"), ==, 0);
}

/* Expanded tensors that stay in cache (the mobile block's 12 x 12 x 96) are not fused. */
static void
test_pointwise_depthwise_small_kept (void)
{
  g_autoptr (OwbModel) m = tu_model_new (17);
  int64_t xd[4] = { 1, 3, 48, 48 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "stem", "x", "a", 3, 16, 3, 2, 1, 1, 1);
  add_conv (m, "expand", "a", "b", 16, 96, 1, 1, 0, 1, 1);
  add_conv (m, "dw", "b", "c", 96, 96, 3, 1, 1, 1, 96);
  tu_node (m->graph, "GlobalAveragePool", "gap", "c", "y");
  add_output (m, "y");
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, FALSE);
  g_assert_cmpuint (count_op (m->graph, "NhwcPointwiseDepthwise"), ==, 0);
  g_assert_cmpuint (count_op (m->graph, "NhwcConv"), ==, 3);
  g_assert_true (has_near_miss (find_pass_report (report, "fuse_pointwise_depthwise"), "stays in cache"));
}

static void
test_concat_block_outputs (void)
{
  g_autoptr (OwbModel) m = concat_block ();
  OwbSession *s = check_layout (m, 2);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 4);
  g_assert_cmpuint (count_op (g, "NhwcAveragePool"), ==, 1);
  g_assert_cmpuint (count_op (g, "Concat"), ==, 1);
  g_assert_cmpuint (count_op (g, "Transpose"), ==, 2);
  int64_t want_y[4] = { 1, 4, 20, 20 };
  assert_output_dims (s, 0, want_y);
  owb_session_free (s);
}

static void
test_reduce_heads_outputs (void)
{
  g_autoptr (OwbModel) m = reduce_heads ();
  OwbSession *s = check_layout (m, 2);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 3);
  g_assert_cmpuint (count_op (g, "ReduceMean"), ==, 2);
  /* back to NCHW for the max (kept dims, a graph output) and for the mean over W alone (the stem
   * reads the RGB input in place) */
  g_assert_cmpuint (count_op (g, "Transpose"), ==, 2);
  guint on_nhwc = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (g->nodes, i);
      if (strncmp (node->op_type, "Reduce", 6) != 0)
        continue;
      /* what the reduction reads: the last NhwcConv's output directly, or a Transpose of it */
      gboolean from_conv = FALSE;
      for (guint j = 0; j < g->nodes->len; j++)
        {
          const OwbNode *p = g_ptr_array_index (g->nodes, j);
          if (strcmp (p->outputs[0], node->inputs[0]) == 0)
            from_conv = strcmp (p->op_type, "NhwcConv") == 0;
        }
      on_nhwc += from_conv;
      if (strcmp (node->outputs[0], "y_mean_w") == 0)
        g_assert_false (from_conv);
      if (strcmp (node->outputs[0], "y_mean") == 0)
        {
          int n = 0;
          const int64_t *axes = owb_node_get_ints (node, "axes", &n);
          g_assert_cmpint (n, ==, 2);
          g_assert_cmpint (axes[0], ==, 1);
          g_assert_cmpint (axes[1], ==, 2);
        }
    }
  g_assert_cmpuint (on_nhwc, ==, 3);
  owb_session_free (s);
}

/* The pre-activation BatchNormalizations become 1x1 depthwise convolutions with their Relu fused,
 * so the whole block runs channels-last between one Transpose in and one out (it stayed NCHW:
 * the BatchNormalizations were NCHW islands); the zero Pad goes. */
static void
test_dense_block_outputs (void)
{
  g_autoptr (OwbModel) m = dense_block ();
  OwbSession *s = check_layout (m, 2);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (g, "BatchNormalization"), ==, 0);
  g_assert_cmpuint (count_op (g, "Pad"), ==, 0);
  g_assert_cmpuint (count_op (g, "Relu"), ==, 0);
  g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 9);
  g_assert_cmpuint (count_op (g, "Concat"), ==, 2);
  g_assert_cmpuint (count_op (g, "NhwcAveragePool"), ==, 1);
  g_assert_cmpuint (count_op (g, "Transpose"), ==, 2);
  const OwbOptimizeReport *r = owb_session_get_optimize_report (s);
  g_assert_cmpuint (find_pass_report (r, "batchnorm_to_conv")->created->len, ==, 3);
  int64_t want_y[4] = { 1, 24, 8, 8 };
  assert_output_dims (s, 0, want_y);
  owb_session_free (s);

  /* extended keeps them: a depthwise Conv pays only channels-last */
  g_autoptr (OwbModel) m2 = dense_block ();
  g_autoptr (OwbOptimizeReport) report = optimize (m2, OWB_OPTIMIZE_EXTENDED, FALSE);
  g_assert_cmpuint (count_op (m2->graph, "BatchNormalization"), ==, 3);
  g_assert_null (find_pass_report (report, "batchnorm_to_conv"));
}

/* Slice, Split and the channel shuffle run on the NHWC values (the shuffle as a Transpose of the
 * last two axes of [N, H, W, 2, C/2]): one Transpose in, one out, where every 4-D one of them
 * stayed NCHW before. */
static void
test_shuffle_block_outputs (void)
{
  g_autoptr (OwbModel) m = shuffle_block ();
  OwbSession *s = check_layout (m, 2);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 6);
  g_assert_cmpuint (count_op (g, "Slice"), ==, 2);
  g_assert_cmpuint (count_op (g, "Split"), ==, 1);
  guint layout = 0, shuffles = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (g->nodes, i);
      int n = 0;
      const int64_t *perm = strcmp (node->op_type, "Transpose") == 0 ? owb_node_get_ints (node, "perm", &n) : NULL;
      layout += perm && n == 4;
      if (perm && n == 5)
        {
          static const int64_t last_two[5] = { 0, 1, 2, 4, 3 };
          g_assert_cmpmem (perm, sizeof (int64_t) * 5, last_two, sizeof last_two);
          shuffles++;
        }
      if (strcmp (node->op_type, "Split") == 0)
        g_assert_cmpint (owb_node_get_int (node, "axis", 0), ==, 3);
    }
  g_assert_cmpuint (layout, ==, 2);
  g_assert_cmpuint (shuffles, ==, 2);
  owb_session_free (s);
}

/* The model's own permutes cancel against the convolutions' Transposes: the block runs channels-
 * last with no Transpose left (the stem reads the image in place, the mean leaves [N, C]). The
 * cost rule counted the elements crossing them and kept the model NCHW. */
static void
test_convnext_block_outputs (void)
{
  g_autoptr (OwbModel) m = convnext_block ();
  OwbSession *s = check_layout (m, 2);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 2);
  g_assert_cmpuint (count_op (g, "Transpose"), ==, 0);
  owb_session_free (s);
}

static void
test_portable_keeps_nchw (void)
{
  g_autoptr (OwbModel) m = residual_chain ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, TRUE);
  g_assert_cmpuint (count_op (m->graph, "NhwcConv"), ==, 0);
  g_assert_cmpuint (count_op (m->graph, "Transpose"), ==, 0);
  g_assert_true (has_near_miss (find_pass_report (report, "layout_nhwc"), "needs ai.onnx.workbench"));
}

/* A device provider that takes Conv and FusedConv (and nothing else), in front of the CPU, as CUDA does with a
 * GPU: its convolutions stay NCHW (NhwcConv is the CPU's layout, which it would decline). Its
 * device is never used: the test only optimizes. */
static gboolean
conv_device_supports (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
                      const OwbValueType *output_types, char **reason)
{
  if ((strcmp (node->op_type, "Conv") == 0 || strcmp (node->op_type, "FusedConv") == 0) && opset > 0)
    return TRUE;
  *reason = g_strdup_printf ("no convdev kernel for %s", node->op_type);
  return FALSE;
}

static gboolean
conv_device_claim (OwbProvider *provider, const OwbNode *node, int opset, const OwbValueType *const *input_types,
                   const OwbValueType *output_types, OwbKernelChoice *choice, char **reason, GError **error)
{
  *reason = g_strdup ("convdev only answers queries");
  return FALSE;
}

static void
test_device_provider_keeps_nchw (void)
{
  static OwbDevice device = { .name = "convdev" };
  OwbProvider convdev = { .name = "convdev", .description = "test", .device = &device,
                          .supports = conv_device_supports, .claim = conv_device_claim };
  for (int with_device = 0; with_device < 2; with_device++)
    {
      g_autoptr (OwbModel) m = residual_chain ();
      OwbOptimizeOptions options;
      owb_optimize_options_init (&options);
      options.level = OWB_OPTIMIZE_LAYOUT;
      options.providers = owb_providers_new_from_list ("cpu", NULL);
      /* a host provider first changes nothing; a device one that takes Conv keeps it NCHW */
      convdev.device = with_device ? &device : NULL;
      g_ptr_array_insert (options.providers, 0, &convdev);
      OwbOptimizeReport *report = NULL;
      GError *error = NULL;
      g_assert_true (owb_model_optimize (m, &options, &report, &error));
      g_assert_no_error (error);
      g_ptr_array_steal_index (options.providers, 0);
      g_ptr_array_unref (options.providers);
      if (with_device)
        {
          g_assert_cmpuint (count_op (m->graph, "NhwcConv"), ==, 0);
          g_assert_cmpuint (count_op (m->graph, "Transpose"), ==, 0);
          g_assert_true (has_near_miss (find_pass_report (report, "layout_nhwc"), "runs on convdev"));
        }
      else
        g_assert_cmpuint (count_op (m->graph, "NhwcConv"), >, 0);
      owb_optimize_report_free (report);
    }
}

static void
test_extended_leaves_layout_alone (void)
{
  g_autoptr (OwbModel) m = residual_chain ();
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_EXTENDED, FALSE);
  g_assert_cmpuint (count_op (m->graph, "NhwcConv"), ==, 0);
  g_assert_null (find_pass_report (report, "layout_nhwc"));
}

static void
test_near_misses (void)
{
  OwbModel *m = tu_model_new (17);
  /* a 1-D convolution */
  int64_t x1[3] = { 1, 4, 16 }, w1[3] = { 8, 4, 3 };
  add_input (m, "x1", OWB_TYPE_FLOAT, 3, x1);
  add_weight (m, "w1", 3, w1);
  tu_node (m->graph, "Conv", "conv1d", "x1,w1", "y1");
  /* a weight that is a graph input */
  int64_t x2[4] = { 1, 4, 8, 8 }, w2[4] = { 8, 4, 3, 3 };
  add_input (m, "x2", OWB_TYPE_FLOAT, 4, x2);
  add_input (m, "w2", OWB_TYPE_FLOAT, 4, w2);
  tu_node (m->graph, "Conv", "conv_dynamic", "x2,w2", "y2");
  /* double */
  add_input (m, "x3", OWB_TYPE_DOUBLE, 4, x2);
  owb_graph_add_initializer (m->graph, "w3", seeded_tensor (OWB_TYPE_DOUBLE, 4, w2, 3, -1, 1));
  tu_node (m->graph, "Conv", "conv_double", "x3,w3", "y3");
  add_output (m, "y1");
  add_output (m, "y2");
  add_output (m, "y3");
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, FALSE);
  const OwbPassReport *p = find_pass_report (report, "layout_nhwc");
  g_assert_true (has_near_miss (p, "is a 1-D convolution; NhwcConv is 2-D only"));
  g_assert_true (has_near_miss (p, "weight W is not a constant"));
  g_assert_true (has_near_miss (p, "runs on float64; NhwcConv is float only"));
  g_assert_cmpuint (count_op (m->graph, "NhwcConv"), ==, 0);
  g_assert_cmpuint (count_op (m->graph, "Conv"), ==, 3);
  owb_model_unref (m);
}

/* One small convolution between NCHW ops: the Transposes would cost more than NHWC saves. */
static void
test_not_worth_it (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 16, 32, 32 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "conv", "x", "y", 16, 16, 1, 1, 0, 1, 1);
  add_output (m, "y");
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, FALSE);
  g_assert_true (has_near_miss (find_pass_report (report, "layout_nhwc"), "not worth it"));
  g_assert_cmpuint (count_op (m->graph, "NhwcConv"), ==, 0);
  g_assert_cmpuint (count_op (m->graph, "Transpose"), ==, 0);
  owb_model_unref (m);
}

/* One 3x3 96->96 convolution between NCHW ops: 96 x 9 / 2 = 432 multiply-adds per transposed element,
 * above the break-even of the packed NhwcConv (100 for Transposes of up to 4 MiB at 0.6 ns an
 * element; it was ~380 with 2.4 ns, and the OpenBLAS NhwcConv needed 1000). */
static void
test_worth_it_near_break_even (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 96, 8, 8 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_conv (m, "conv", "x", "y", 96, 96, 3, 1, 1, 1, 1);
  add_output (m, "y");
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, FALSE);
  g_assert_false (has_near_miss (find_pass_report (report, "layout_nhwc"), "not worth it"));
  g_assert_cmpuint (count_op (m->graph, "NhwcConv"), ==, 1);
  owb_model_unref (m);
}

/* Grouped 3x3 convolutions of ResNeXt's shapes alone between the graph's NCHW input and output:
 * 32 groups of 16 channels run 2-3x faster channels-last (0.86 -> 0.40 ms at 1 thread) and pay for
 * their two Transposes (the rule that weighted them like dense ones kept them NCHW); 32 groups of 4
 * run slower channels-last whatever the Transposes cost, so they stay. */
static void
test_grouped_by_group_size (void)
{
  static const struct { int64_t c, hw; gboolean nhwc; } cases[] = { { 512, 14, TRUE }, { 1024, 7, TRUE }, { 128, 56, FALSE } };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = tu_model_new (17);
      int64_t xd[4] = { 1, cases[i].c, cases[i].hw, cases[i].hw };
      add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
      add_conv (m, "conv", "x", "y", cases[i].c, cases[i].c, 3, 1, 1, 1, 32);
      add_output (m, "y");
      OwbSession *s = check_layout (m, 1);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (count_op (g, "NhwcConv"), ==, cases[i].nhwc ? 1 : 0);
      g_assert_cmpuint (count_op (g, "Transpose"), ==, cases[i].nhwc ? 2 : 0);
      owb_session_free (s);
      g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, FALSE);
      g_assert_true (has_near_miss (find_pass_report (report, "layout_nhwc"), "not worth it") == !cases[i].nhwc);
    }
}

/* Eight strided grouped convolutions (32 groups of 16) reading one input: the input is transposed
 * once for all of them (counted once per reader, the 225792-element input outweighed what each
 * convolution saves and all eight stayed NCHW). */
static void
test_shared_input_transposed_once (void)
{
  g_autoptr (OwbModel) m = tu_model_new (17);
  int64_t xd[4] = { 1, 512, 21, 21 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  for (int i = 0; i < 8; i++)
    {
      char name[16], y[16];
      g_snprintf (name, sizeof name, "conv%d", i);
      g_snprintf (y, sizeof y, "y%d", i);
      add_conv (m, name, "x", y, 512, 512, 3, 3, 1, 1, 32);
      add_output (m, y);
    }
  OwbSession *s = check_layout (m, 1);
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 8);
  g_assert_cmpuint (count_op (g, "Transpose"), ==, 9);
  owb_session_free (s);
}

/* The whole U-Net step stays NHWC: ConvTranspose becomes NhwcConvTranspose, the Resize runs on the
 * NHWC tensor (a standard Resize with permuted constants), only the output's Transpose remains (the first
 * convolution reads the 4-channel input in place). */
static void
test_unet_step_outputs (void)
{
  for (int use_sizes = 0; use_sizes < 3; use_sizes++)
    {
      g_autoptr (OwbModel) m = unet_step (use_sizes, FALSE);
      OwbSession *s = check_layout (m, 2);
      const OwbGraph *g = owb_session_get_graph (s);
      g_assert_cmpuint (count_op (g, "NhwcConv"), ==, 3);
      g_assert_cmpuint (count_op (g, "NhwcConvTranspose"), ==, 1);
      g_assert_cmpuint (count_op (g, "ConvTranspose"), ==, 0);
      g_assert_cmpuint (count_op (g, "Resize"), ==, 1);
      g_assert_cmpuint (count_op (g, "Concat"), ==, 1);
      g_assert_cmpuint (count_op (g, "Transpose"), ==, 1);
      int64_t want[4] = { 1, 4, 64, 64 };
      assert_output_dims (s, 0, want);
      /* the Resize reads the NHWC Concat, with its constant in NHWC order */
      for (guint i = 0; i < g->nodes->len; i++)
        {
          const OwbNode *node = g_ptr_array_index (g->nodes, i);
          if (strcmp (node->op_type, "Resize") != 0)
            continue;
          g_assert_cmpstr (node->domain ? node->domain : "", !=, WB);
          const OwbTensor *c = owb_graph_get_initializer ((OwbGraph *) g, node->inputs[use_sizes == 1 ? 3 : 2]);
          g_assert_nonnull (c);
          if (use_sizes == 2)
            {
              /* NCHW axes (3, 2) are NHWC axes (2, 1) */
              int n = 0;
              const int64_t *axes = owb_node_get_ints (node, "axes", &n);
              g_assert_cmpint (n, ==, 2);
              g_assert_cmpint (axes[0], ==, 2);
              g_assert_cmpint (axes[1], ==, 1);
              continue;
            }
          g_assert_cmpint (c->nelems, ==, 4);
          if (use_sizes)
            {
              g_assert_cmpint (owb_tensor_get_int64 (c, 1), ==, 64);
              g_assert_cmpint (owb_tensor_get_int64 (c, 3), ==, 64);
            }
          else
            {
              g_assert_cmpfloat (owb_tensor_get_double (c, 2), ==, 2.0);
              g_assert_cmpfloat (owb_tensor_get_double (c, 3), ==, 1.0);
            }
        }
      owb_session_free (s);
    }
  /* and on one thread */
  g_autoptr (OwbModel) m = unet_step (TRUE, FALSE);
  owb_session_free (check_layout (m, 1));
}

static void
test_unet_step_graph (void)
{
  g_autoptr (OwbModel) m = unet_step (TRUE, FALSE);
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, FALSE);
  const OwbPassReport *p = find_pass_report (report, "layout_nhwc");
  g_assert_nonnull (p);
  g_assert_cmpuint (count_op (m->graph, "NhwcConvTranspose"), ==, 1);
  g_assert_cmpuint (count_op (m->graph, "Transpose"), ==, 1);
  gboolean found = FALSE;
  for (guint i = 0; i < p->created->len; i++)
    {
      const OwbOptimizeCreated *c = g_ptr_array_index (p->created, i);
      if (strcmp (c->op_type, "NhwcConvTranspose") != 0)
        continue;
      found = TRUE;
      g_assert_cmpstr (c->domain, ==, WB);
      g_assert_cmpuint (c->from->len, ==, 1);
      g_assert_cmpstr (g_ptr_array_index (c->from, 0), ==, "up");
    }
  g_assert_true (found);
  /* the weight was reordered to [C, kH, kW, M/group] */
  for (guint i = 0; i < m->graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (m->graph->nodes, i);
      if (strcmp (node->op_type, "NhwcConvTranspose") != 0)
        continue;
      const OwbTensor *w = owb_graph_get_initializer (m->graph, node->inputs[1]);
      g_assert_nonnull (w);
      int64_t want[4] = { 64, 2, 2, 32 };
      g_assert_cmpint (memcmp (w->dims, want, sizeof want), ==, 0);
    }
}

/* A Resize that also scales the channels stays NCHW between Transposes, with a near miss saying why;
 * the outputs still match. */
static void
test_unet_step_resize_near_miss (void)
{
  for (int use_sizes = 0; use_sizes < 2; use_sizes++)
    {
      g_autoptr (OwbModel) m = unet_step (use_sizes, TRUE);
      g_autoptr (OwbModel) opt = owb_model_dup (m);
      g_autoptr (OwbOptimizeReport) report = optimize (opt, OWB_OPTIMIZE_LAYOUT, FALSE);
      const OwbPassReport *p = find_pass_report (report, "layout_nhwc");
      g_assert_true (has_near_miss (p, use_sizes ? "it resizes axis 1" : "it scales axis 1"));
      g_assert_true (has_near_miss (p, "Resize kept in NCHW"));
      g_assert_cmpuint (count_op (opt->graph, "NhwcConvTranspose"), ==, 1);
      g_assert_cmpuint (count_op (opt->graph, "Resize"), ==, 1);
      /* the one before the Resize (the first convolution reads the 4-channel input in place) */
      g_assert_cmpuint (count_op (opt->graph, "Transpose"), ==, 1);
      owb_session_free (check_layout (m, 2));
    }
}

/* ConvTransposes that cannot run channels-last say why. */
static void
test_conv_transpose_near_misses (void)
{
  OwbModel *m = tu_model_new (17);
  int64_t xd[4] = { 1, 8, 8, 8 }, wd[4] = { 8, 4, 2, 2 }, x1[3] = { 1, 8, 8 }, w1[3] = { 8, 4, 2 };
  add_input (m, "x", OWB_TYPE_FLOAT, 4, xd);
  add_input (m, "w", OWB_TYPE_FLOAT, 4, wd);
  tu_node (m->graph, "ConvTranspose", "dynamic", "x,w", "y1");
  add_input (m, "x1", OWB_TYPE_FLOAT, 3, x1);
  add_weight (m, "w1", 3, w1);
  tu_node (m->graph, "ConvTranspose", "deconv1d", "x1,w1", "y2");
  add_output (m, "y1");
  add_output (m, "y2");
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, FALSE);
  const OwbPassReport *p = find_pass_report (report, "layout_nhwc");
  g_assert_true (has_near_miss (p, "weight W is not a constant"));
  g_assert_true (has_near_miss (p, "is a 1-D convolution; NhwcConvTranspose is 2-D only"));
  g_assert_cmpuint (count_op (m->graph, "NhwcConvTranspose"), ==, 0);
  g_assert_cmpuint (count_op (m->graph, "ConvTranspose"), ==, 2);
  owb_model_unref (m);
}

/* --portable: no ai.onnx.workbench op, so the ConvTranspose stays as it is. */
static void
test_unet_step_portable (void)
{
  g_autoptr (OwbModel) m = unet_step (TRUE, FALSE);
  g_autoptr (OwbOptimizeReport) report = optimize (m, OWB_OPTIMIZE_LAYOUT, TRUE);
  g_assert_cmpuint (count_op (m->graph, "NhwcConvTranspose"), ==, 0);
  g_assert_cmpuint (count_op (m->graph, "NhwcConv"), ==, 0);
  g_assert_cmpuint (count_op (m->graph, "ConvTranspose"), ==, 1);
  g_assert_cmpuint (count_op (m->graph, "Transpose"), ==, 0);
  g_assert_true (has_near_miss (find_pass_report (report, "layout_nhwc"), "needs ai.onnx.workbench"));
}

/* The optimized model saves with our domain and reloads into the same outputs. */
static void
test_save_and_reload (void)
{
  g_autoptr (OwbModel) m = residual_chain ();
  g_autoptr (OwbModel) opt = owb_model_dup (m);
  g_autoptr (OwbOptimizeReport) report = optimize (opt, OWB_OPTIMIZE_LAYOUT, FALSE);
  GError *error = NULL;
  g_autoptr (GBytes) bytes = owb_model_save_to_bytes (opt, &error);
  g_assert_no_error (error);
  gsize size = 0;
  const void *data = g_bytes_get_data (bytes, &size);
  g_autoptr (OwbModel) back = owb_model_load_from_data (data, size, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count_op (back->graph, "NhwcConv"), ==, 3);
  int64_t xd[4] = { 1, 4, 32, 32 };
  g_autoptr (OwbTensor) x = seeded_tensor (OWB_TYPE_FLOAT, 4, xd, 5, -1, 1);
  const char *names[1] = { "x" };
  OwbTensor *want = NULL, *got = NULL;
  OwbSession *a = session_at (m, OWB_OPTIMIZE_DISABLED, 1, &error);
  g_assert_no_error (error);
  OwbSession *b = session_at (back, OWB_OPTIMIZE_DISABLED, 1, &error);
  g_assert_no_error (error);
  g_assert_true (owb_session_run (a, 1, names, &x, 1, NULL, &want, NULL, NULL, &error));
  g_assert_true (owb_session_run (b, 1, names, &x, 1, NULL, &got, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (max_rel_diff (want, got), <=, 1e-5);
  owb_tensor_unref (want);
  owb_tensor_unref (got);
  owb_session_free (a);
  owb_session_free (b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/optimizer/layout/residual-chain-graph", test_residual_chain_graph);
  g_test_add_func ("/optimizer/layout/residual-chain-outputs", test_residual_chain_outputs);
  g_test_add_func ("/optimizer/layout/mobile-block-outputs", test_mobile_block_outputs);
  g_test_add_func ("/optimizer/layout/pointwise-depthwise-fused", test_pointwise_depthwise_fused);
  g_test_add_func ("/optimizer/layout/pointwise-depthwise-small-kept", test_pointwise_depthwise_small_kept);
  g_test_add_func ("/optimizer/layout/nchw-input-stems", test_nchw_input_stems);
  g_test_add_func ("/optimizer/layout/concat-block-outputs", test_concat_block_outputs);
  g_test_add_func ("/optimizer/layout/reduce-heads-outputs", test_reduce_heads_outputs);
  g_test_add_func ("/optimizer/layout/dense-block-outputs", test_dense_block_outputs);
  g_test_add_func ("/optimizer/layout/shuffle-block-outputs", test_shuffle_block_outputs);
  g_test_add_func ("/optimizer/layout/convnext-block-outputs", test_convnext_block_outputs);
  g_test_add_func ("/optimizer/layout/portable-keeps-nchw", test_portable_keeps_nchw);
  g_test_add_func ("/optimizer/layout/extended-leaves-layout-alone", test_extended_leaves_layout_alone);
  g_test_add_func ("/optimizer/layout/near-misses", test_near_misses);
  g_test_add_func ("/optimizer/layout/not-worth-it", test_not_worth_it);
  g_test_add_func ("/optimizer/layout/worth-it-near-break-even", test_worth_it_near_break_even);
  g_test_add_func ("/optimizer/layout/save-and-reload", test_save_and_reload);
  g_test_add_func ("/optimizer/layout/unet-step-outputs", test_unet_step_outputs);
  g_test_add_func ("/optimizer/layout/unet-step-graph", test_unet_step_graph);
  g_test_add_func ("/optimizer/layout/unet-step-resize-near-miss", test_unet_step_resize_near_miss);
  g_test_add_func ("/optimizer/layout/unet-step-portable", test_unet_step_portable);
  g_test_add_func ("/optimizer/layout/conv-transpose-near-misses", test_conv_transpose_near_misses);
  g_test_add_func ("/optimizer/layout/device-provider-keeps-nchw", test_device_provider_keeps_nchw);
  g_test_add_func ("/optimizer/layout/grouped-by-group-size", test_grouped_by_group_size);
  g_test_add_func ("/optimizer/layout/shared-input-transposed-once", test_shared_input_transposed_once);
  return g_test_run ();
}
