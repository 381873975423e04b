/* pass-layout-nhwc.c: runs 2-D convolutions channels-last. Every Conv/FusedConv with a constant
 * weight becomes Transpose(to NHWC) -> NhwcConv -> Transpose(to NCHW), and every QLinearConv with a
 * constant weight NhwcQLinearConv (the integer core) the same way; the NCHW Transposes
 * are then pushed down through layout-agnostic ops (elementwise, Concat, pools) and cancelled
 * against the NHWC Transposes of the next convolution, so that a chain of convolutions keeps its
 * activations in NHWC and graph outputs stay NCHW. ConvTranspose becomes NhwcConvTranspose the same
 * way, and a Resize of H and W alone runs on the NHWC tensor with its constant inputs permuted. */
#include "owb-optimizer-private.h"

#include <string.h>

/* The cost rule (see run) compares what the convolutions save channels-last with what the
 * Transposes left around them cost, both in picoseconds per run.
 *
 * A Transpose NCHW<->NHWC (owb profile, 1 thread, one node per model): tensors up to 4 MiB move
 * at 0.13-0.25 ns per element, 0.55-0.97 for 512x14x14 and 1024x7x7 to NHWC (0.6 taken); larger
 * ones (64x256x256, 32x512x512) at 3-6 ns, out of cache, and unet_small's 8 Transposes at 2
 * threads took 2.4 ns per element (taken). */
#define TRANSPOSE_PS_SMALL 600
#define TRANSPOSE_PS_LARGE 2400
#define TRANSPOSE_SMALL_ELEMENTS (1 << 20)
/* Saved per multiply-add by NhwcConv (packed SGEMM) on a dense convolution: unet_small at 2 threads,
 * NhwcConv 66.7 ms against FusedConv 89.9 (the ratio of 400 multiply-adds per moved element this
 * rule had with 2.4 ns Transposes); a depthwise one gains 20 times that (1.5-2x channels-last). */
#define DENSE_SAVED_PS 6.0
#define DEPTHWISE_SAVED_PS 120.0

static const int64_t to_nhwc_perm[4] = { 0, 2, 3, 1 };
static const int64_t to_nchw_perm[4] = { 0, 3, 1, 2 };


static gboolean
is_transpose (const OwbNode *node, const int64_t *perm)
{
  if (!owb_pass_is_op (node, "Transpose") || node->n_inputs != 1 || node->n_outputs != 1)
    return FALSE;
  int n = 0;
  const int64_t *p = owb_node_get_ints (node, "perm", &n);
  return p && n == 4 && memcmp (p, perm, sizeof (int64_t) * 4) == 0;
}

/* The NHWC value whose NCHW Transpose `name` is, or NULL. */
static const char *
nhwc_source (OwbPassContext *ctx, const char *name)
{
  OwbNode *p = owb_pass_producer (ctx, name);
  return is_transpose (p, to_nchw_perm) ? p->inputs[0] : NULL;
}

static void
set_ints (OwbNode *node, const char *name, int n, const int64_t *values)
{
  OwbAttribute *a = owb_node_add_attribute (node, name, OWB_ATTR_INTS);
  a->n = n;
  a->ints = g_memdup2 (values, sizeof (int64_t) * n);
}

/* The NHWC form of value `name`: "<name>_nhwc", made unique. Names derived from the value they
 * carry keep the model's scopes readable where "nhwc_17" said nothing. Caller frees. */
static char *
nhwc_value_name (OwbPassContext *ctx, const char *name)
{
  g_autofree char *base = g_strconcat (name, "_nhwc", NULL);
  return owb_pass_unique_name (ctx, base);
}

/* Adds Transpose (input, perm) writing `output`, or a fresh "<input>_nhwc" value when output is
 * NULL; the node is named after `from`, the node it serves ("<from>_to_nhwc", "<from>_to_nchw"), so
 * that it sits in that node's scope. Returns the output's name (owned by the node). */
static const char *
add_transpose (OwbPassContext *ctx, const char *input, const char *output, const int64_t *perm, const char *from)
{
  g_autofree char *node_base = g_strconcat (from ? from : input, perm == to_nhwc_perm ? "_to_nhwc" : "_to_nchw", NULL);
  g_autofree char *node_name = owb_pass_unique_name (ctx, node_base);
  OwbNode *t = owb_node_new ("Transpose", "", node_name);
  owb_node_add_input (t, input);
  char *name = output ? g_strdup (output) : nhwc_value_name (ctx, input);
  owb_node_add_output (t, name);
  g_free (name);
  set_ints (t, "perm", 4, perm);
  owb_pass_add_node (ctx, t, &from, from ? 1 : 0);
  return t->outputs[0];
}

/* An NHWC value equal to NCHW `name`: the source of its NCHW Transpose, or a new NHWC Transpose. */
static char *
nhwc_of (OwbPassContext *ctx, const char *name, const char *from)
{
  const char *src = nhwc_source (ctx, name);
  if (src)
    return g_strdup (src);
  /* one Transpose per value, however many convolutions read it */
  GPtrArray *readers = owb_pass_consumers (ctx, name);
  for (guint i = 0; i < readers->len; i++)
    if (is_transpose (g_ptr_array_index (readers, i), to_nhwc_perm))
      return g_strdup (((OwbNode *) g_ptr_array_index (readers, i))->outputs[0]);
  return g_strdup (add_transpose (ctx, name, NULL, to_nhwc_perm, from));
}

/* ---- Conv / FusedConv -> NhwcConv ---- */

/* The name of a device provider (CUDA) that comes before the first host provider and would take
 * the node as it is, or NULL. Channels-last is the CPU's layout: a node such a provider runs stays
 * NCHW, as ONNX Runtime applies its NHWC rewrite only to the CPU's nodes. */
static const char *
device_provider_taking (OwbPassContext *ctx, const OwbNode *node)
{
  const GPtrArray *providers = ctx->options->providers;
  const OwbValueType *in[8] = { NULL };
  OwbValueType out[1];
  if (!providers || node->n_inputs > 8 || node->n_outputs != 1)
    return NULL;
  for (int i = 0; i < node->n_inputs; i++)
    in[i] = node->inputs[i][0] ? owb_pass_value_type (ctx, node->inputs[i]) : NULL;
  const OwbValueType *o = owb_pass_value_type (ctx, node->outputs[0]);
  if (o)
    out[0] = *o;
  else
    owb_value_type_init_unknown (&out[0]);
  OwbValueType unknown;
  owb_value_type_init_unknown (&unknown);
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i][0] && !in[i])
      in[i] = &unknown;
  for (guint p = 0; p < providers->len; p++)
    {
      OwbProvider *provider = g_ptr_array_index (providers, p);
      if (!provider->device)
        return NULL; /* the host provider runs what gets this far */
      char *reason = NULL;
      int opset = node->opset > 0 ? node->opset : (int) owb_model_get_opset (ctx->model, node->domain ? node->domain : "");
      gboolean takes = provider->supports && provider->supports (provider, node, opset, in, out, &reason);
      g_free (reason);
      if (takes)
        return provider->name;
    }
  return NULL;
}

/* Why the convolution cannot run as NhwcConv, or NULL when it can. */
static char *
conv_refusal (OwbPassContext *ctx, const OwbNode *conv)
{
  const char *op = owb_pass_is_op (conv, "ConvTranspose") ? "NhwcConvTranspose" : "NhwcConv";
  const char *device = device_provider_taking (ctx, conv);
  if (device)
    return g_strdup_printf ("runs on %s, which takes it channels-first", device);
  if (conv->n_inputs < 2 || conv->n_outputs != 1)
    return g_strdup ("has an unexpected signature");
  const OwbValueType *x = owb_pass_value_type (ctx, conv->inputs[0]);
  const OwbTensor *w = owb_pass_get_constant (ctx, conv->inputs[1]);
  if (!x || x->kind != OWB_VALUE_TENSOR || x->rank < 0)
    return g_strdup ("input X has no inferred rank");
  if (x->rank != 4)
    return g_strdup_printf ("is a %d-D convolution; %s is 2-D only", x->rank - 2, op);
  if (x->dtype != OWB_TYPE_FLOAT)
    return g_strdup_printf ("runs on %s; %s is float only", owb_data_type_name (x->dtype), op);
  if (!w)
    return g_strdup ("weight W is not a constant, so it cannot be reordered once");
  if (w->rank != 4 || w->dtype != OWB_TYPE_FLOAT)
    return g_strdup ("weight W is not a 4-D float tensor");
  const char *b = owb_node_get_input (conv, 2);
  const OwbValueType *bt = b ? owb_pass_value_type (ctx, b) : NULL;
  if (b && bt && bt->rank != 1)
    return g_strdup ("bias B is not a vector");
  return NULL;
}

/* Why a QLinearConv cannot run as NhwcQLinearConv (the integer core, which packs W itself and
 * needs float32 per-tensor x and y parameters), or NULL when it can. */
static char *
qlinear_conv_refusal (OwbPassContext *ctx, const OwbNode *conv)
{
  if (conv->n_inputs < 8 || conv->n_outputs != 1)
    return g_strdup ("has an unexpected signature");
  const OwbValueType *x = owb_pass_value_type (ctx, conv->inputs[0]);
  const OwbTensor *w = owb_pass_get_constant (ctx, conv->inputs[3]);
  if (!x || x->kind != OWB_VALUE_TENSOR || x->rank != 4)
    return g_strdup ("input x is not known to be 4-D");
  if (!w || w->rank != 4)
    return g_strdup ("weight w is not a constant 4-D tensor");
  static const int scalars[] = { 1, 2, 6, 7 };
  for (guint i = 0; i < G_N_ELEMENTS (scalars); i++)
    {
      const OwbTensor *c = owb_pass_get_constant (ctx, conv->inputs[scalars[i]]);
      if (!c || c->nelems != 1 || (scalars[i] % 5 == 1 && c->dtype != OWB_TYPE_FLOAT))
        return g_strdup ("x or y scale or zero point is not one constant (float32 scale)");
    }
  const OwbTensor *ws = owb_pass_get_constant (ctx, conv->inputs[4]), *wz = owb_pass_get_constant (ctx, conv->inputs[5]);
  if (!ws || ws->dtype != OWB_TYPE_FLOAT || !wz)
    return g_strdup ("w's scale or zero point is not a constant (float32 scale)");
  return NULL;
}

/* Replaces `node` by `nn` (its copy reading NHWC values): each output of nn becomes a fresh NHWC
 * value, followed by an NCHW Transpose writing the node's original output, for the next push or
 * cancel. nn keeps node's name. */
static void
replace_with_nhwc (OwbPassContext *ctx, OwbNode *node, OwbNode *nn)
{
  char *from_copy = g_strdup (owb_pass_label (node));
  const char *from_name = from_copy;
  int n = node->n_outputs;
  char **ys = g_new0 (char *, n + 1);
  for (int o = 0; o < n; o++)
    {
      ys[o] = g_strdup (node->outputs[o]);
      g_free (nn->outputs[o]);
      nn->outputs[o] = ys[o][0] ? nhwc_value_name (ctx, ys[o]) : g_strdup ("");
    }
  owb_pass_add_node (ctx, nn, &from_name, 1);
  owb_pass_remove_node (ctx, node);
  for (int o = 0; o < n; o++)
    if (ys[o][0])
      add_transpose (ctx, nn->outputs[o], ys[o], to_nchw_perm, from_copy);
  g_strfreev (ys);
  g_free (from_copy);
}

/* A QLinearConv -> NhwcQLinearConv reading x through an NHWC Transpose; its output goes back to
 * NCHW under its old name. W keeps its layout: the kernel packs it. */
static void
convert_qlinear_to_nhwc (OwbPassContext *ctx, OwbNode *node)
{
  const char *from = owb_pass_label (node);
  OwbNode *nc = _owb_pass_dup_as (node, "NhwcQLinearConv", OWB_DOMAIN);
  g_free (nc->name);
  nc->name = NULL;
  char *x = nhwc_of (ctx, node->inputs[0], from);
  g_free (nc->inputs[0]);
  nc->inputs[0] = x;
  char *out = g_strdup (node->outputs[0]);
  g_free (nc->outputs[0]);
  nc->outputs[0] = owb_pass_unique_name (ctx, "nhwc");
  char *from_copy = g_strdup (from);
  const char *from_name = from_copy;
  owb_pass_add_node (ctx, nc, &from_name, 1);
  owb_pass_remove_node (ctx, node);
  add_transpose (ctx, nc->outputs[0], out, to_nchw_perm, from_copy);
  g_free (out);
  g_free (from_copy);
}

/* W [M, C/group, kH, kW] -> [kH, kW, C/group, M]: row (kh, kw, c) of a group's GEMM operand holds
 * the M output channels contiguously. */
static OwbTensor *
reorder_weight (const OwbTensor *w)
{
  int64_t M = w->dims[0], Cg = w->dims[1], KH = w->dims[2], KW = w->dims[3];
  int64_t dims[4] = { KH, KW, Cg, M };
  OwbTensor *t = owb_tensor_new_uninit (OWB_TYPE_FLOAT, 4, dims, NULL);
  const float *src = w->data;
  float *dst = t->data;
  /* 16 output channels at a time: their source rows (C/group x kH x kW each) stay in cache while
   * every destination row gets its 16 values; column by column, each read would miss on a
   * network's larger weights (9 MiB for a 512 x 512 x 3 x 3 convolution). */
  for (int64_t m0 = 0; m0 < M; m0 += 16)
    {
      int64_t mn = MIN (16, M - m0);
      for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++)
          for (int64_t c = 0; c < Cg; c++)
            {
              float *restrict d = dst + ((kh * KW + kw) * Cg + c) * M + m0;
              const float *restrict s = src + ((m0 * Cg + c) * KH + kh) * KW + kw;
              for (int64_t m = 0; m < mn; m++)
                d[m] = s[m * Cg * KH * KW];
            }
    }
  return t;
}

/* node (a Conv/FusedConv or ConvTranspose) → op_type in our domain: X through an NHWC Transpose,
 * W reordered once, the residual Z (FusedConv's fourth input) through a Transpose too, and the
 * output back to NCHW under its old name. */
static void
convert_to_nhwc (OwbPassContext *ctx, OwbNode *node, const char *op_type, OwbTensor *(*reorder) (const OwbTensor *))
{
  const char *from = owb_pass_label (node);
  OwbNode *nc = _owb_pass_dup_as (node, op_type, OWB_DOMAIN);
  /* nc keeps the convolution's name, and so its scope: the name is free again once node goes */

  char *x = nhwc_of (ctx, node->inputs[0], from);
  g_free (nc->inputs[0]);
  nc->inputs[0] = x;
  const char *w = owb_pass_add_initializer (ctx, node->inputs[1], reorder (owb_pass_get_constant (ctx, node->inputs[1])));
  g_free (nc->inputs[1]);
  nc->inputs[1] = g_strdup (w);
  if (nc->n_inputs > 3 && nc->inputs[3][0])
    {
      char *z = nhwc_of (ctx, node->inputs[3], from);
      g_free (nc->inputs[3]);
      nc->inputs[3] = z;
    }
  replace_with_nhwc (ctx, node, nc);
}

/* ---- ConvTranspose -> NhwcConvTranspose ---- */

/* W [C, M/group, kH, kW] -> [C, kH, kW, M/group]: input channel c's row holds, kernel row by kernel
 * row, the kW taps of M/group output channels, as the kernel's GEMMs read it. */
static OwbTensor *
reorder_transpose_weight (const OwbTensor *w)
{
  int64_t C = w->dims[0], Mg = w->dims[1], KH = w->dims[2], KW = w->dims[3];
  int64_t dims[4] = { C, KH, KW, Mg };
  OwbTensor *t = owb_tensor_new_uninit (OWB_TYPE_FLOAT, 4, dims, NULL);
  const float *src = w->data;
  float *dst = t->data;
  for (int64_t c = 0; c < C; c++)
    for (int64_t m = 0; m < Mg; m++)
      for (int64_t k = 0; k < KH * KW; k++)
        dst[(c * KH * KW + k) * Mg + m] = src[(c * Mg + m) * KH * KW + k];
  return t;
}

/* ---- Resize on NHWC ---- */

/* The inputs of Resize at the model's opset: -1 where the op has none. */
static void
resize_inputs (OwbPassContext *ctx, int *roi, int *scales, int *sizes)
{
  gboolean v10 = owb_pass_opset (ctx) < 11;
  *roi = v10 ? -1 : 1;
  *scales = v10 ? 1 : 2;
  *sizes = v10 ? -1 : 3;
}

/* A constant vector of 4 x `halves` elements in NCHW axis order, in NHWC order. */
static OwbTensor *
permute_vector (const OwbTensor *t, int halves)
{
  OwbTensor *o = owb_tensor_new_uninit (t->dtype, t->rank, t->dims, NULL);
  gsize es = owb_data_type_size (t->dtype);
  for (int h = 0; h < halves; h++)
    for (int i = 0; i < 4; i++)
      memcpy ((char *) o->data + (h * 4 + i) * es, (const char *) t->data + (h * 4 + to_nhwc_perm[i]) * es, es);
  return o;
}

/* Why Resize `node` cannot run on the NHWC form of its 4-D input, or NULL. With `consts` it also
 * gives the NHWC roi, scales and sizes (NULL where the input is absent or left as it is), and in
 * *axes the NHWC `axes` attribute when the node has one. */
static char *
resize_refusal (OwbPassContext *ctx, const OwbNode *node, OwbTensor **consts, int64_t *axes, int *n_axes)
{
  if (!owb_pass_is_op (node, "Resize") || node->n_inputs < 1 || node->n_outputs != 1)
    return g_strdup ("has an unexpected signature");
  const OwbValueType *x = owb_pass_value_type (ctx, node->inputs[0]);
  if (!x || x->kind != OWB_VALUE_TENSOR || x->rank != 4)
    return g_strdup ("input X is not known to be 4-D");
  int n = 0;
  const int64_t *attr_axes = owb_node_get_ints (node, "axes", &n);
  int64_t ax[4] = { 0, 1, 2, 3 };
  if (attr_axes)
    {
      if (n < 1 || n > 4)
        return g_strdup ("has an unexpected axes attribute");
      for (int k = 0; k < n; k++)
        {
          ax[k] = attr_axes[k] < 0 ? attr_axes[k] + 4 : attr_axes[k];
          if (ax[k] < 0 || ax[k] > 3)
            return g_strdup ("has an axis out of range");
        }
    }
  else
    n = 4;
  int which[3];
  resize_inputs (ctx, &which[0], &which[1], &which[2]);
  static const char *const what[3] = { "roi", "scales", "sizes" };
  OwbTensor *made[3] = { NULL, NULL, NULL };
  char *why = NULL;
  for (int k = 0; k < 3 && !why; k++)
    {
      const char *in = which[k] >= 0 ? owb_node_get_input (node, which[k]) : NULL;
      if (!in)
        continue;
      const OwbTensor *t = owb_pass_get_constant (ctx, in);
      if (!t)
        {
          why = g_strdup_printf ("its %s are not constants", what[k]);
          break;
        }
      if (t->nelems == 0)
        continue;
      int len = k == 0 ? 2 * n : n;
      if (t->rank != 1 || t->nelems != len)
        {
          why = g_strdup_printf ("its %s do not have %d values", what[k], len);
          break;
        }
      /* the usual 2-D resize: batch and channels left as they are */
      for (int i = 0; i < n && !why && k > 0; i++)
        {
          if (ax[i] > 1)
            continue;
          if (k == 1 && owb_tensor_get_double (t, i) != 1.0)
            why = g_strdup_printf ("it scales axis %" G_GINT64_FORMAT " by %g", ax[i], owb_tensor_get_double (t, i));
          else if (k == 2 && (!owb_dim_is_known (x->dims[ax[i]]) || owb_tensor_get_int64 (t, i) != x->dims[ax[i]].value))
            why = g_strdup_printf ("it resizes axis %" G_GINT64_FORMAT " (or its size is unknown)", ax[i]);
        }
      if (!why && consts && !attr_axes)
        made[k] = permute_vector (t, k == 0 ? 2 : 1);
    }
  if (why || !consts)
    {
      for (int k = 0; k < 3; k++)
        if (made[k])
          owb_tensor_unref (made[k]);
      return why;
    }
  static const int64_t to_nhwc_axis[4] = { 0, 3, 1, 2 };
  for (int k = 0; k < 3; k++)
    consts[k] = made[k];
  *n_axes = attr_axes ? n : 0;
  for (int k = 0; attr_axes && k < n; k++)
    axes[k] = to_nhwc_axis[ax[k]];
  return NULL;
}

/* ---- pushing NCHW Transposes down ---- */

static gboolean
is_unary_elementwise (const OwbNode *node)
{
  /* a byte-to-byte table (fuse_qdq_lookup) is elementwise in its one variable input */
  if (owb_pass_is_our_op (node, "QLinearLookup"))
    return TRUE;
  static const char *const ops[] = { "Relu",     "LeakyRelu", "Clip",        "Sigmoid",  "HardSigmoid", "HardSwish",
                                     "Tanh",     "Elu",       "Selu",        "Celu",     "Softplus",    "Softsign",
                                     "Neg",      "Abs",       "Exp",         "Log",      "Sqrt",        "Reciprocal",
                                     "Erf",      "Floor",     "Ceil",        "Round",    "Sign",        "Identity",
                                     "Gelu",     "Mish",      "ThresholdedRelu", "Cast", "Not" };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (owb_pass_is_op (node, ops[i]))
      return TRUE;
  return FALSE;
}

/* A QuantizeLinear or DequantizeLinear with one scale and zero point is elementwise like Clip (its
 * other inputs are scalars), so NHWC passes through it: a QDQ CNN keeps its convolutions
 * channels-last between the pairs. Per-channel ones have an axis and stay where they are. */
static gboolean
is_per_tensor_qdq (OwbPassContext *ctx, const OwbNode *node)
{
  return _owb_pass_is_per_tensor_qdq (ctx, node);
}

static gboolean
is_broadcast_elementwise (const OwbNode *node)
{
  static const char *const ops[] = { "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu" };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (owb_pass_is_op (node, ops[i]))
      return TRUE;
  return FALSE;
}

/* A constant that broadcasts against a 4-D NCHW tensor, as the same constant against NHWC. */
static OwbTensor *
constant_to_nhwc (const OwbTensor *c)
{
  if (c->rank > 4)
    return NULL;
  if (c->nelems == 1)
    return owb_tensor_ref ((OwbTensor *) c);
  int64_t d[4] = { 1, 1, 1, 1 };
  for (int i = 0; i < c->rank; i++)
    d[4 - c->rank + i] = c->dims[i];
  int64_t nd[4] = { d[0], d[2], d[3], d[1] };
  OwbTensor *t = owb_tensor_new_uninit (c->dtype, 4, nd, NULL);
  if (!t)
    return NULL;
  gsize es = owb_data_type_size (c->dtype);
  const char *src = c->data;
  char *dst = t->data;
  for (int64_t n = 0; n < d[0]; n++)
    for (int64_t h = 0; h < d[2]; h++)
      for (int64_t w = 0; w < d[3]; w++)
        for (int64_t ch = 0; ch < d[1]; ch++)
          memcpy (dst + (((n * d[2] + h) * d[3] + w) * d[1] + ch) * es, src + (((n * d[1] + ch) * d[2] + h) * d[3] + w) * es, es);
  return t;
}

/* A QLinearGlobalAveragePool (fuse_qdq_lookup's) on channels-first data. */
static gboolean
is_qlinear_gap_nchw (const OwbNode *node)
{
  return owb_pass_is_our_op (node, "QLinearGlobalAveragePool") && owb_node_get_int (node, "channels_last", 0) == 0;
}

/* Rewrites `node` (reading at least one NCHW Transpose) to run on NHWC values, followed by one NCHW
 * Transpose writing its original output. Returns FALSE when some input has no NHWC form. */
static gboolean
try_push (OwbPassContext *ctx, OwbNode *node)
{
  gboolean unary = is_unary_elementwise (node) || is_per_tensor_qdq (ctx, node), binary = is_broadcast_elementwise (node);
  gboolean concat = owb_pass_is_op (node, "Concat"), resize = owb_pass_is_op (node, "Resize");
  const char *new_op = NULL;
  if (owb_pass_is_op (node, "MaxPool"))
    new_op = "NhwcMaxPool";
  else if (owb_pass_is_op (node, "AveragePool"))
    new_op = "NhwcAveragePool";
  else if (owb_pass_is_op (node, "GlobalAveragePool"))
    new_op = "NhwcGlobalAveragePool";
  /* QLinearBinaryLookup broadcasts as Add does; its third input is its table, not data */
  gboolean lookup2 = owb_pass_is_our_op (node, "QLinearBinaryLookup");
  /* QLinearBinary's other inputs are scalars, which pass through as they are */
  binary = binary || lookup2 || owb_pass_is_our_op (node, "QLinearBinary");
  /* fuse_qdq_lookup's integer pool: the same op, told its channels come last */
  gboolean qgap = is_qlinear_gap_nchw (node);
  if (!unary && !binary && !concat && !resize && !new_op && !qgap)
    return FALSE;
  int n_data = unary || resize || new_op || qgap ? 1 : (lookup2 ? 2 : node->n_inputs);
  gboolean any = FALSE;
  for (int i = 0; i < MIN (n_data, node->n_inputs) && !any; i++)
    any = node->inputs[i][0] && nhwc_source (ctx, node->inputs[i]);
  if (node->n_outputs != 1 || !any)
    return FALSE;
  const OwbValueType *out = owb_pass_value_type (ctx, node->outputs[0]);
  if (!out || out->kind != OWB_VALUE_TENSOR || out->rank != 4)
    return FALSE;
  if (new_op)
    {
      int nk = 0;
      owb_node_get_ints (node, "kernel_shape", &nk);
      /* MaxPool also on the bytes of a QDQ model (fuse_qdq_lookup makes those) */
      gboolean bytes = owb_pass_is_op (node, "MaxPool") && _owb_pass_is_8bit (out->dtype);
      if ((!owb_pass_is_op (node, "GlobalAveragePool") && nk != 2) || (out->dtype != OWB_TYPE_FLOAT && !bytes))
        return FALSE;
    }
  /* the inputs that carry the layout must have NHWC forms */
  for (int i = 0; i < n_data; i++)
    {
      if (!node->inputs[i][0])
        return FALSE;
      if (nhwc_source (ctx, node->inputs[i]))
        continue;
      const OwbTensor *c = owb_pass_get_constant (ctx, node->inputs[i]);
      if (!c || concat || c->rank > 4)
        return FALSE;
    }
  OwbTensor *resize_consts[3] = { NULL, NULL, NULL };
  int64_t resize_axes[4];
  int n_resize_axes = 0;
  if (resize)
    {
      char *why = resize_refusal (ctx, node, resize_consts, resize_axes, &n_resize_axes);
      gboolean refused = why != NULL;
      g_free (why);
      if (refused)
        return FALSE;
    }

  OwbNode *nn = owb_node_dup (node);
  owb_node_clear_claims (nn); /* nn keeps node's name */
  for (int i = 0; i < n_data; i++)
    {
      const char *src = nhwc_source (ctx, node->inputs[i]);
      char *name;
      if (src)
        name = g_strdup (src);
      else
        {
          OwbTensor *t = constant_to_nhwc (owb_pass_get_constant (ctx, node->inputs[i]));
          name = g_strdup (owb_pass_add_initializer (ctx, node->inputs[i], t));
        }
      g_free (nn->inputs[i]);
      nn->inputs[i] = name;
    }
  if (concat)
    {
      int64_t axis = owb_node_get_int (node, "axis", 0);
      axis = axis < 0 ? axis + 4 : axis;
      static const int64_t to_nhwc_axis[4] = { 0, 3, 1, 2 };
      if (axis < 0 || axis > 3)
        {
          owb_node_free (nn);
          return FALSE;
        }
      for (int a = 0; a < nn->n_attributes; a++)
        if (strcmp (nn->attributes[a].name, "axis") == 0)
          nn->attributes[a].i = to_nhwc_axis[axis];
    }
  if (resize)
    {
      int which[3];
      resize_inputs (ctx, &which[0], &which[1], &which[2]);
      for (int k = 0; k < 3; k++)
        if (resize_consts[k])
          {
            const char *name = owb_pass_add_initializer (ctx, node->inputs[which[k]], resize_consts[k]);
            g_free (nn->inputs[which[k]]);
            nn->inputs[which[k]] = g_strdup (name);
          }
      for (int a = 0; n_resize_axes && a < nn->n_attributes; a++)
        if (strcmp (nn->attributes[a].name, "axes") == 0)
          memcpy (nn->attributes[a].ints, resize_axes, sizeof (int64_t) * n_resize_axes);
    }
  if (new_op)
    {
      g_free (nn->op_type);
      nn->op_type = g_strdup (new_op);
      g_free (nn->domain);
      nn->domain = g_strdup (OWB_DOMAIN);
    }
  for (int a = 0; qgap && a < nn->n_attributes; a++)
    if (strcmp (nn->attributes[a].name, "channels_last") == 0)
      nn->attributes[a].i = 1;
  if (qgap && owb_node_get_int (nn, "channels_last", 0) == 0)
    owb_node_add_attribute (nn, "channels_last", OWB_ATTR_INT)->i = 1;
  replace_with_nhwc (ctx, node, nn);
  return TRUE;
}

/* Reduce{Mean,Sum,Max,Min} of an NCHW Transpose reduces the NHWC value over the same axes, named in
 * NHWC. With keepdims the result is NHWC too (a Transpose back follows, for the next push or cancel);
 * without, the axes that remain keep their order in both layouts when C is reduced or H and W both
 * are (mnasnet's mean over H and W before its classifier), and the result is the same tensor.
 * Whether the node (of a rank-4 input) can run so; its NHWC axes (sorted; none: all), keepdims and
 * constant axes input (NULL: the attribute, or none). */
static gboolean
reduce_in_nhwc (OwbPassContext *ctx, const OwbNode *node, int64_t *nhwc_axes, int *n_nhwc, gboolean *keepdims,
                const OwbTensor **axes_value)
{
  static const char *const ops[] = { "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin" };
  gboolean reduce = FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    reduce = reduce || owb_pass_is_op (node, ops[i]);
  if (!reduce || node->n_outputs != 1 || node->n_inputs < 1 || !node->inputs[0][0])
    return FALSE;
  const OwbValueType *in = owb_pass_value_type (ctx, node->inputs[0]);
  if (!in || in->kind != OWB_VALUE_TENSOR || in->rank != 4)
    return FALSE;
  /* axes from the attribute (older opsets) or from a constant second input */
  int64_t axes[4];
  int n_axes = 0;
  *axes_value = NULL;
  if (node->n_inputs > 1 && node->inputs[1][0])
    {
      const OwbTensor *v = owb_pass_get_constant (ctx, node->inputs[1]);
      if (!v || v->dtype != OWB_TYPE_INT64 || v->rank != 1 || v->nelems > 4)
        return FALSE;
      n_axes = (int) v->nelems;
      memcpy (axes, v->data, sizeof (int64_t) * n_axes);
      *axes_value = v;
    }
  else
    {
      const int64_t *a = owb_node_get_ints (node, "axes", &n_axes);
      if (n_axes > 4)
        return FALSE;
      if (n_axes)
        memcpy (axes, a, sizeof (int64_t) * n_axes);
    }
  if (n_axes == 0 && owb_node_get_int (node, "noop_with_empty_axes", 0))
    return FALSE;
  gboolean reduced[4] = { n_axes == 0, n_axes == 0, n_axes == 0, n_axes == 0 };
  for (int i = 0; i < n_axes; i++)
    {
      int64_t a = axes[i] < 0 ? axes[i] + 4 : axes[i];
      if (a < 0 || a > 3)
        return FALSE;
      reduced[a] = TRUE;
    }
  *keepdims = owb_node_get_int (node, "keepdims", 1) != 0;
  if (!*keepdims && !reduced[1] && !(reduced[2] && reduced[3]))
    return FALSE;
  /* NHWC's axis order is N, H, W, C */
  static const int nhwc_order[4] = { 0, 2, 3, 1 };
  *n_nhwc = 0;
  for (int k = 0; k < 4 && n_axes > 0; k++)
    if (reduced[nhwc_order[k]])
      nhwc_axes[(*n_nhwc)++] = k;
  /* an axis named twice (invalid) is left for the kernel to reject */
  return *n_nhwc == n_axes;
}

static gboolean
try_push_reduce (OwbPassContext *ctx, OwbNode *node)
{
  int64_t nhwc_axes[4];
  int n = 0;
  gboolean keepdims;
  const OwbTensor *axes_value;
  if (!reduce_in_nhwc (ctx, node, nhwc_axes, &n, &keepdims, &axes_value))
    return FALSE;
  const char *src = nhwc_source (ctx, node->inputs[0]);
  if (!src)
    return FALSE;
  const char *from = owb_pass_label (node);
  char *from_copy = g_strdup (from);
  const char *from_name = from_copy;
  OwbNode *nn = owb_node_dup (node);
  owb_node_clear_claims (nn); /* nn keeps node's name */
  g_free (nn->inputs[0]);
  nn->inputs[0] = g_strdup (src);
  if (axes_value)
    {
      OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ n }, NULL);
      memcpy (t->data, nhwc_axes, sizeof (int64_t) * n);
      const char *name = owb_pass_add_initializer (ctx, node->inputs[1], t);
      g_free (nn->inputs[1]);
      nn->inputs[1] = g_strdup (name);
    }
  else
    for (int a = 0; a < nn->n_attributes; a++)
      if (strcmp (nn->attributes[a].name, "axes") == 0 && nn->attributes[a].n == n)
        memcpy (nn->attributes[a].ints, nhwc_axes, sizeof (int64_t) * n);
  char *y = g_strdup (node->outputs[0]);
  g_free (nn->outputs[0]);
  nn->outputs[0] = keepdims ? nhwc_value_name (ctx, y) : g_strdup (y);
  owb_pass_remove_node (ctx, node);
  owb_pass_add_node (ctx, nn, &from_name, 1);
  if (keepdims)
    add_transpose (ctx, nn->outputs[0], y, to_nchw_perm, from_copy);
  g_free (y);
  g_free (from_copy);
  return TRUE;
}

/* ---- Slice, Split and channel shuffles on NHWC ---- */

/* Where NCHW axis a is in NHWC. */
static const int64_t nhwc_axis_of[4] = { 0, 3, 1, 2 };

/* A Slice (opset 10 on: starts, ends, axes, steps are inputs) of a 4-D value with constant
 * parameters slices the NHWC value on the NHWC axes: *axes (when not NULL) gets them as a new
 * constant, in the type of the node's own axes. ShuffleNet takes its branch halves so. */
static gboolean
slice_in_nhwc (OwbPassContext *ctx, const OwbNode *node, OwbTensor **axes_out)
{
  if (!owb_pass_is_op (node, "Slice") || node->opset < 10 || node->n_inputs < 3 || node->n_outputs != 1
      || !node->inputs[0][0] || !node->inputs[1][0] || !node->inputs[2][0])
    return FALSE;
  const OwbValueType *x = owb_pass_value_type (ctx, node->inputs[0]);
  const OwbTensor *starts = owb_pass_get_constant (ctx, node->inputs[1]);
  if (!x || x->kind != OWB_VALUE_TENSOR || x->rank != 4 || !starts || starts->rank != 1 || starts->nelems < 1
      || starts->nelems > 4)
    return FALSE;
  for (int i = 2; i < node->n_inputs && i <= 4; i++)
    if (node->inputs[i][0] && !owb_pass_get_constant (ctx, node->inputs[i]))
      return FALSE;
  const char *axes_name = owb_node_get_input (node, 3);
  const OwbTensor *axes = axes_name ? owb_pass_get_constant (ctx, axes_name) : NULL;
  int64_t n = starts->nelems, mapped[4];
  if (axes && (axes->rank != 1 || axes->nelems != n))
    return FALSE;
  for (int64_t i = 0; i < n; i++)
    {
      int64_t a = axes ? owb_tensor_get_int64 (axes, i) : i;
      a = a < 0 ? a + 4 : a;
      if (a < 0 || a > 3)
        return FALSE;
      mapped[i] = nhwc_axis_of[a];
    }
  if (axes_out)
    {
      *axes_out = owb_tensor_new (axes ? axes->dtype : OWB_TYPE_INT64, 1, &n, NULL);
      for (int64_t i = 0; i < n; i++)
        owb_tensor_set_double (*axes_out, i, (double) mapped[i]);
    }
  return TRUE;
}

static gboolean
try_push_slice (OwbPassContext *ctx, OwbNode *node)
{
  OwbTensor *axes = NULL;
  const char *src = node->n_inputs > 0 && node->inputs[0][0] ? nhwc_source (ctx, node->inputs[0]) : NULL;
  if (!src || !slice_in_nhwc (ctx, node, &axes))
    return FALSE;
  OwbNode *nn = owb_node_dup (node);
  owb_node_clear_claims (nn);
  g_free (nn->inputs[0]);
  nn->inputs[0] = g_strdup (src);
  g_autofree char *base = g_strconcat (owb_pass_label (node), "_nhwc_axes", NULL);
  const char *axes_name = owb_pass_add_initializer (ctx, base, axes);
  if (nn->n_inputs > 3)
    {
      g_free (nn->inputs[3]);
      nn->inputs[3] = g_strdup (axes_name);
    }
  else
    owb_node_add_input (nn, axes_name);
  replace_with_nhwc (ctx, node, nn);
  return TRUE;
}

/* A Split of a 4-D value whose parts are known (a constant `split`, an attribute before opset
 * 13, or equal parts) splits the NHWC value on the NHWC axis; *axis gets it. */
static gboolean
split_in_nhwc (OwbPassContext *ctx, const OwbNode *node, int64_t *axis)
{
  if (!owb_pass_is_op (node, "Split") || node->n_inputs < 1 || !node->inputs[0][0] || node->n_outputs < 1)
    return FALSE;
  const OwbValueType *x = owb_pass_value_type (ctx, node->inputs[0]);
  if (!x || x->kind != OWB_VALUE_TENSOR || x->rank != 4)
    return FALSE;
  const char *split = node->opset >= 13 ? owb_node_get_input (node, 1) : NULL;
  if (split && !owb_pass_get_constant (ctx, split))
    return FALSE;
  int64_t a = owb_node_get_int (node, "axis", 0);
  a = a < 0 ? a + 4 : a;
  if (a < 0 || a > 3)
    return FALSE;
  *axis = nhwc_axis_of[a];
  return TRUE;
}

static gboolean
try_push_split (OwbPassContext *ctx, OwbNode *node)
{
  int64_t axis;
  const char *src = node->n_inputs > 0 && node->inputs[0][0] ? nhwc_source (ctx, node->inputs[0]) : NULL;
  if (!src || !split_in_nhwc (ctx, node, &axis))
    return FALSE;
  OwbNode *nn = owb_node_dup (node);
  owb_node_clear_claims (nn);
  g_free (nn->inputs[0]);
  nn->inputs[0] = g_strdup (src);
  OwbAttribute *a = (OwbAttribute *) owb_node_get_attribute (nn, "axis");
  if (!a)
    a = owb_node_add_attribute (nn, "axis", OWB_ATTR_INT);
  a->i = axis;
  replace_with_nhwc (ctx, node, nn);
  return TRUE;
}

/* A channel shuffle: Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose perm (0, 2, 1, 3, 4),
 * Reshape back to [N, C, H, W] (ShuffleNet's, between its branch halves). On NHWC it is the same
 * permutation of the last axis: Reshape [N, H, W, g, C/g], Transpose (0, 1, 2, 4, 3), Reshape
 * [N, H, W, C]. Fills chain with the three nodes when `node` is any of them and nothing else reads
 * the values between them; *g gets the groups. */
static gboolean
shuffle_chain_from (OwbPassContext *ctx, OwbNode *first, OwbNode **chain, int64_t *g)
{
  static const int64_t shuffle_perm[5] = { 0, 2, 1, 3, 4 };
  if (!owb_pass_is_op (first, "Reshape") || first->n_inputs < 2 || first->n_outputs != 1
      || owb_node_get_int (first, "allowzero", 0) != 0)
    return FALSE;
  const OwbValueType *x = owb_pass_value_type (ctx, first->inputs[0]);
  const OwbValueType *mid = owb_pass_value_type (ctx, first->outputs[0]);
  if (!x || !mid || x->kind != OWB_VALUE_TENSOR || x->rank != 4 || mid->kind != OWB_VALUE_TENSOR || mid->rank != 5)
    return FALSE;
  for (int i = 1; i < 4; i++)
    if (!owb_dim_is_known (x->dims[i]))
      return FALSE;
  for (int i = 1; i < 5; i++)
    if (!owb_dim_is_known (mid->dims[i]))
      return FALSE;
  if (mid->dims[1].value * mid->dims[2].value != x->dims[1].value || mid->dims[3].value != x->dims[2].value
      || mid->dims[4].value != x->dims[3].value)
    return FALSE;
  if (owb_pass_n_uses (ctx, first->outputs[0]) != 1 || owb_pass_is_graph_output (ctx, first->outputs[0]))
    return FALSE;
  OwbNode *t = g_ptr_array_index (owb_pass_consumers (ctx, first->outputs[0]), 0);
  int n = 0;
  const int64_t *perm = owb_pass_is_op (t, "Transpose") ? owb_node_get_ints (t, "perm", &n) : NULL;
  if (!perm || n != 5 || memcmp (perm, shuffle_perm, sizeof shuffle_perm) != 0 || t->n_outputs != 1
      || owb_pass_n_uses (ctx, t->outputs[0]) != 1 || owb_pass_is_graph_output (ctx, t->outputs[0]))
    return FALSE;
  OwbNode *last = g_ptr_array_index (owb_pass_consumers (ctx, t->outputs[0]), 0);
  const OwbValueType *y = owb_pass_is_op (last, "Reshape") && last->n_outputs == 1
                              && strcmp (last->inputs[0], t->outputs[0]) == 0
                            ? owb_pass_value_type (ctx, last->outputs[0])
                            : NULL;
  if (!y || y->kind != OWB_VALUE_TENSOR || y->rank != 4)
    return FALSE;
  for (int i = 1; i < 4; i++)
    if (!owb_dim_is_known (y->dims[i]) || y->dims[i].value != x->dims[i].value)
      return FALSE;
  chain[0] = first;
  chain[1] = t;
  chain[2] = last;
  *g = mid->dims[1].value;
  return TRUE;
}

static gboolean
shuffle_chain (OwbPassContext *ctx, OwbNode *node, OwbNode **chain, int64_t *g)
{
  /* node is the first Reshape, the Transpose after it or the Reshape after that */
  OwbNode *first = node;
  for (int up = 0; up < 3 && first; up++)
    {
      if (shuffle_chain_from (ctx, first, chain, g) && (chain[0] == node || chain[1] == node || chain[2] == node))
        return TRUE;
      first = first->n_inputs > 0 && first->inputs[0][0] ? owb_pass_producer (ctx, first->inputs[0]) : NULL;
    }
  return FALSE;
}

/* A Reshape to `dims` (0: keep the input's) reading `input`, named after `like`; returns its output. */
static const char *
add_reshape (OwbPassContext *ctx, const OwbNode *like, const char *input, int rank, const int64_t *dims)
{
  OwbTensor *shape = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ rank }, NULL);
  memcpy (shape->data, dims, sizeof (int64_t) * rank);
  g_autofree char *shape_base = g_strconcat (owb_pass_label (like), "_nhwc_shape", NULL);
  const char *shape_name = owb_pass_add_initializer (ctx, shape_base, shape);
  OwbNode *r = owb_node_new ("Reshape", "", owb_pass_label (like));
  owb_node_add_input (r, input);
  owb_node_add_input (r, shape_name);
  g_autofree char *out = nhwc_value_name (ctx, like->outputs[0]);
  owb_node_add_output (r, out);
  const char *from = owb_pass_label (like);
  owb_pass_add_node (ctx, r, &from, 1);
  return r->outputs[0];
}

static gboolean
try_push_shuffle (OwbPassContext *ctx, OwbNode *node)
{
  OwbNode *chain[3];
  int64_t g;
  if (!owb_pass_is_op (node, "Reshape") || !node->inputs[0][0] || !nhwc_source (ctx, node->inputs[0])
      || !shuffle_chain (ctx, node, chain, &g) || chain[0] != node)
    return FALSE;
  const OwbValueType *x = owb_pass_value_type (ctx, node->inputs[0]);
  int64_t c = x->dims[1].value;
  char *src = g_strdup (nhwc_source (ctx, node->inputs[0]));
  char *y = g_strdup (chain[2]->outputs[0]);
  int64_t split_dims[5] = { 0, 0, 0, g, c / g }, merged_dims[4] = { 0, 0, 0, c };
  const char *split = add_reshape (ctx, chain[0], src, 5, split_dims);
  OwbNode *t = owb_node_new ("Transpose", "", owb_pass_label (chain[1]));
  owb_node_add_input (t, split);
  g_autofree char *t_out = nhwc_value_name (ctx, chain[1]->outputs[0]);
  owb_node_add_output (t, t_out);
  set_ints (t, "perm", 5, (int64_t[]){ 0, 1, 2, 4, 3 });
  const char *t_from = owb_pass_label (chain[1]);
  owb_pass_add_node (ctx, t, &t_from, 1);
  const char *merged = add_reshape (ctx, chain[2], t->outputs[0], 4, merged_dims);
  char *merged_copy = g_strdup (merged);
  char *from = g_strdup (owb_pass_label (chain[2]));
  for (int i = 2; i >= 0; i--)
    owb_pass_remove_node (ctx, chain[i]);
  add_transpose (ctx, merged_copy, y, to_nchw_perm, from);
  g_free (from);
  g_free (merged_copy);
  g_free (y);
  g_free (src);
  return TRUE;
}

/* Transpose(to NHWC) of Transpose(to NCHW) of v is v. */
static gboolean
try_cancel (OwbPassContext *ctx, OwbNode *t)
{
  if (!is_transpose (t, to_nhwc_perm) || owb_pass_is_graph_output (ctx, t->outputs[0]))
    return FALSE;
  const char *src = nhwc_source (ctx, t->inputs[0]);
  if (!src)
    return FALSE;
  char *s = g_strdup (src);
  owb_pass_replace_uses (ctx, t->outputs[0], s);
  g_free (s);
  owb_pass_remove_node (ctx, t);
  return TRUE;
}

static gboolean
is_layout_transpose (const OwbNode *node)
{
  return is_transpose (node, to_nchw_perm) || is_transpose (node, to_nhwc_perm);
}

/* Transposes nothing reads any more, and then the Transposes only they read. */
static guint
remove_dead_transposes (OwbPassContext *ctx)
{
  guint removed = 0;
  GPtrArray *stack = g_ptr_array_new ();
  GPtrArray *nodes = owb_pass_nodes (ctx);
  for (guint i = nodes->len; i-- > 0;)
    if (is_layout_transpose (g_ptr_array_index (nodes, i)))
      g_ptr_array_add (stack, g_ptr_array_index (nodes, i));
  GHashTable *gone = g_hash_table_new (NULL, NULL);
  while (stack->len > 0)
    {
      OwbNode *node = g_ptr_array_steal_index_fast (stack, stack->len - 1);
      if (g_hash_table_contains (gone, node) || owb_pass_n_uses (ctx, node->outputs[0]) != 0)
        continue;
      OwbNode *source = owb_pass_producer (ctx, node->inputs[0]);
      owb_pass_remove_node (ctx, node);
      g_hash_table_add (gone, node);
      removed++;
      if (is_layout_transpose (source))
        g_ptr_array_add (stack, source);
    }
  g_hash_table_unref (gone);
  g_ptr_array_unref (stack);
  return removed;
}

/* A convolution with at most this many input and output channels reads an NCHW input in place
 * (the CPU kernel broadcasts each tap from where it lies, cpu-direct-conv.c, which runs such
 * convolutions anyway), so an image's stem needs no NHWC Transpose of the image: mnasnet's was
 * 0.07-0.10 ms at one thread. */
#define NCHW_INPUT_MAX_C 4
#define NCHW_INPUT_MAX_M 64

/* NhwcConvs reading the NHWC Transpose of a few-channel NCHW value read that value instead
 * (nchw_input = 1); the Transpose goes when nothing else reads it. */
static void
read_nchw_inputs (OwbPassContext *ctx)
{
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (!owb_pass_is_our_op (node, "NhwcConv") || owb_node_get_int (node, "group", 1) != 1
          || owb_node_get_attribute (node, "nchw_input"))
        continue;
      const OwbTensor *w = owb_pass_get_constant (ctx, node->inputs[1]);
      OwbNode *t = owb_pass_producer (ctx, node->inputs[0]);
      const OwbValueType *x = t && is_transpose (t, to_nhwc_perm) ? owb_pass_value_type (ctx, t->inputs[0]) : NULL;
      if (!w || !x || x->kind != OWB_VALUE_TENSOR || x->rank != 4 || !owb_dim_is_known (x->dims[1])
          || x->dims[1].value > NCHW_INPUT_MAX_C || w->rank != 4 || w->dims[3] > NCHW_INPUT_MAX_M)
        continue;
      owb_pass_set_input (ctx, node, 0, t->inputs[0]);
      OwbAttribute *a = owb_node_add_attribute (node, "nchw_input", OWB_ATTR_INT);
      a->i = 1;
    }
}

static gboolean
is_conv (const OwbNode *node)
{
  return owb_pass_is_op (node, "Conv") || owb_pass_is_our_op (node, "FusedConv") || owb_pass_is_op (node, "ConvTranspose")
         || owb_pass_is_op (node, "QLinearConv");
}

/* Whether the push loop can carry NHWC through the node (ignoring its other inputs). */
static gboolean
is_layout_agnostic (OwbPassContext *ctx, const OwbNode *node)
{
  if (owb_pass_is_op (node, "Resize"))
    {
      char *why = resize_refusal (ctx, node, NULL, NULL, NULL);
      gboolean ok = why == NULL;
      g_free (why);
      return ok;
    }
  int64_t axes[4];
  int n;
  gboolean keepdims;
  const OwbTensor *axes_value;
  OwbNode *chain[3];
  int64_t g, axis;
  if (slice_in_nhwc (ctx, node, NULL) || split_in_nhwc (ctx, node, &axis)
      || shuffle_chain (ctx, (OwbNode *) node, chain, &g))
    return TRUE;
  return is_unary_elementwise (node) || is_per_tensor_qdq (ctx, node) || is_broadcast_elementwise (node)
         || owb_pass_is_our_op (node, "QLinearBinaryLookup") || owb_pass_is_our_op (node, "QLinearBinary")
         || is_qlinear_gap_nchw (node)
         || owb_pass_is_op (node, "Concat")
         || owb_pass_is_op (node, "MaxPool") || owb_pass_is_op (node, "AveragePool")
         || owb_pass_is_op (node, "GlobalAveragePool") || reduce_in_nhwc (ctx, node, axes, &n, &keepdims, &axes_value);
}

/* Sizes here only rank candidates: a model's dims (2^32 strides, output_shape) may multiply past
 * 64 bits, which is undefined for int64_t, so they saturate. */
static int64_t
mul_saturated (int64_t a, int64_t b)
{
  int64_t r;
  return __builtin_mul_overflow (a, b, &r) ? G_MAXINT64 : r;
}

static int64_t
add_saturated (int64_t a, int64_t b)
{
  int64_t r;
  return __builtin_add_overflow (a, b, &r) ? G_MAXINT64 : r;
}

static int64_t
n_elements (OwbPassContext *ctx, const char *name)
{
  const OwbValueType *t = owb_pass_value_type (ctx, name);
  if (!t || t->kind != OWB_VALUE_TENSOR || t->rank != 4)
    return 0;
  int64_t n = 1;
  for (int i = 0; i < 4; i++)
    n = mul_saturated (n, owb_dim_is_known (t->dims[i]) ? t->dims[i].value : 1);
  return n;
}

static gboolean
in_region (OwbPassContext *ctx, const OwbNode *node, GHashTable *convs)
{
  return node && (g_hash_table_contains (convs, node) || is_layout_agnostic (ctx, node) || is_layout_transpose (node));
}

static double
transpose_ps (int64_t elements)
{
  return (double) elements * (elements <= TRANSPOSE_SMALL_ELEMENTS ? TRANSPOSE_PS_SMALL : TRANSPOSE_PS_LARGE);
}

/* The elements the Transposes will move per run: values crossing between the convolutions (with
 * the layout-agnostic ops around them) and every other node, graph inputs and outputs included.
 * The model's own NCHW<->NHWC Transposes (ConvNeXt's permutes around its LayerNorm and Linear
 * layers) cost nothing more converted: they cancel against the convolutions' Transposes or stay
 * as they were, so what crosses through them is not counted (counted, ConvNeXt stayed NCHW).
 * *cost_ps gets their estimated time. */
static int64_t
transposed_elements (OwbPassContext *ctx, GHashTable *convs, double *cost_ps)
{
  int64_t total = 0;
  *cost_ps = 0;
  /* a value read by several convolutions is transposed once for all of them (counted once per
   * reader, four 3x3 convolutions of one input stayed NCHW at twice their real Transpose cost) */
  GHashTable *counted = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (!in_region (ctx, node, convs) || is_layout_transpose (node))
        continue;
      for (int k = 0; k < node->n_inputs; k++)
        {
          const char *in = node->inputs[k];
          if (!in[0] || owb_pass_get_constant (ctx, in))
            continue;
          if (!in_region (ctx, owb_pass_producer (ctx, in), convs) && g_hash_table_add (counted, (gpointer) in))
            {
              total = add_saturated (total, n_elements (ctx, in));
              *cost_ps += transpose_ps (n_elements (ctx, in));
            }
        }
      for (int k = 0; k < node->n_outputs; k++)
        {
          const char *out = node->outputs[k];
          gboolean leaves = owb_pass_is_graph_output (ctx, out);
          GPtrArray *readers = owb_pass_consumers (ctx, out);
          for (guint r = 0; r < readers->len && !leaves; r++)
            leaves = !in_region (ctx, g_ptr_array_index (readers, r), convs);
          if (leaves)
            {
              total = add_saturated (total, n_elements (ctx, out));
              *cost_ps += transpose_ps (n_elements (ctx, out));
            }
        }
    }
  g_hash_table_unref (counted);
  return total;
}

/* Picoseconds per multiply-add a grouped (not depthwise) float convolution of cg input and mg output
 * channels a group takes in each layout, measured at 1 thread on four such 3x3 convolutions of
 * 14.45 M multiply-adds each (ResNeXt-50's stages: 32 groups of 4, 8, 16 and 32 channels). NCHW
 * runs an im2col copy and a small GEMM per group: 1.0, 0.85, 0.83 and 0.90 ms whatever the group
 * size. NHWC runs the kernels of providers/cpu/kernels/layout.c: the lane-permuting direct one for
 * 2 or 4 channels (2.0-2.2 ms, slower than NCHW), the broadcast one for 8 (0.61-0.71 ms) and 16
 * (0.43-0.46, tied with the packed GEMM it falls back to without AVX-512), the packed GEMM from 32
 * (0.30 ms); without a direct kernel a panel of fewer than 8 columns took 13-29 ms. The broadcast
 * kernel now also runs 16 a group on AVX2 and from 16 on (0.33-0.37 ms for 16, 0.30 for 32): the
 * weights below stay, as its gain on 16 (30 -> ~25 ps) changes no choice against NCHW's 60. */
#define GROUPED_NCHW_PS 60.0

static double
grouped_nhwc_ps (int64_t cg, int64_t mg)
{
  if (cg == mg && mg < 8 && 8 % mg == 0)
    return 145.0;
  if (mg < 8)
    return 1000.0;
  if (cg == mg && mg == 8)
    return 46.0;
  /* other panels of 8-31 columns on the packed GEMM: 8 a group took 1.19 ms there, 16 0.42 */
  if (mg < 32)
    return 30.0 * 16.0 / (double) MIN (mg, 16);
  return 21.0;
}

static int64_t
multiply_adds (OwbPassContext *ctx, const OwbNode *conv)
{
  const OwbTensor *w = owb_pass_get_constant (ctx, conv->inputs[owb_pass_is_op (conv, "QLinearConv") ? 3 : 1]);
  /* a ConvTranspose multiplies every input pixel by all of W */
  gboolean transpose = owb_pass_is_op (conv, "ConvTranspose");
  const OwbValueType *y = owb_pass_value_type (ctx, transpose ? conv->inputs[0] : conv->outputs[0]);
  if (!w || !y || y->rank != 4)
    return 0;
  int64_t pixels = 1;
  for (int i = 0; i < 4; i++)
    if (i != 1)
      pixels = mul_saturated (pixels, owb_dim_is_known (y->dims[i]) ? y->dims[i].value : 1);
  return mul_saturated (pixels, w->nelems);
}

/* Picoseconds a run saves with `conv` channels-last (negative where NHWC is slower). */
static double
saved_ps (OwbPassContext *ctx, const OwbNode *conv)
{
  double macs = (double) multiply_adds (ctx, conv);
  const OwbTensor *w = owb_pass_get_constant (ctx, conv->inputs[owb_pass_is_op (conv, "QLinearConv") ? 3 : 1]);
  int64_t group = owb_node_get_int (conv, "group", 1);
  if (!w || w->rank != 4 || group <= 1 || owb_pass_is_op (conv, "ConvTranspose"))
    return macs * DENSE_SAVED_PS;
  if (w->dims[1] == 1)
    return macs * DEPTHWISE_SAVED_PS;
  /* the integer grouped kernels were not measured: weighted as dense ones, as before */
  if (owb_pass_is_op (conv, "QLinearConv") || w->dims[0] % group != 0)
    return macs * DENSE_SAVED_PS;
  return macs * (GROUPED_NCHW_PS - grouped_nhwc_ps (w->dims[1], w->dims[0] / group));
}

/* The report keeps the net change: Transposes this pass created and then cancelled are neither
 * "created" (they are not in the graph) nor "removed" (they were never in the input). */
static void
net_report (OwbPassContext *ctx)
{
  GHashTable *alive = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (node->name)
        g_hash_table_add (alive, node->name);
    }
  /* Each list is filtered in one sweep: kept entries move to the front in order, the others to
   * the tail, which set_size frees (removing them one at a time moved the rest of the list each
   * time, quadratic when most of the Transposes created cancel). */
  GHashTable *transient = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *created = ctx->report->created;
  guint kept = 0;
  for (guint i = 0; i < created->len; i++)
    {
      OwbOptimizeCreated *c = g_ptr_array_index (created, i);
      if (!g_hash_table_contains (alive, c->node))
        {
          g_hash_table_add (transient, g_strdup (c->node));
          continue;
        }
      created->pdata[i] = created->pdata[kept];
      created->pdata[kept++] = c;
    }
  g_ptr_array_set_size (created, kept);
  GPtrArray *removed = ctx->report->removed;
  kept = 0;
  for (guint i = 0; i < removed->len; i++)
    {
      char *name = g_ptr_array_index (removed, i);
      if (g_hash_table_contains (transient, name))
        continue;
      removed->pdata[i] = removed->pdata[kept];
      removed->pdata[kept++] = name;
    }
  g_ptr_array_set_size (removed, kept);
  g_hash_table_unref (transient);
  g_hash_table_unref (alive);
}

static gboolean
run (OwbPassContext *ctx, GError **error)
{
  GPtrArray *convs = g_ptr_array_new ();
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (!is_conv (node))
        continue;
      char *why = owb_pass_is_op (node, "QLinearConv") ? qlinear_conv_refusal (ctx, node) : conv_refusal (ctx, node);
      if (why)
        owb_pass_near_miss (ctx, node, "%s; kept in NCHW", why);
      else
        g_ptr_array_add (convs, node);
      g_free (why);
    }
  if (convs->len > 0 && ctx->options->portable)
    {
      owb_pass_near_miss (ctx, g_ptr_array_index (convs, 0),
                           "and %u other convolution(s) would run as NhwcConv/NhwcConvTranspose, which needs "
                           OWB_DOMAIN "; kept in NCHW (portable)",
                           convs->len - 1);
      g_ptr_array_set_size (convs, 0);
    }
  if (convs->len > 0)
    {
      /* Convert only when the convolutions save more than the Transposes that will remain cost (each
       * side estimated as above). Measured on unet_small (2 threads, -O all; when its Resize and
       * ConvTranspose stayed NCHW, 516 multiply-adds per moved element): NhwcConv 66.7 ms against
       * FusedConv 89.9, its 8 Transposes 17.2 ms, the run 104-106 ms converted against 110 ms kept
       * NCHW. Carried through them (NHWC Resize, NhwcConvTranspose: 2 Transposes left, ~11600 per
       * element) the run went from 85 to 52 ms. */
      GHashTable *set = g_hash_table_new (NULL, NULL);
      double saved = 0;
      for (guint i = 0; i < convs->len; i++)
        {
          g_hash_table_add (set, g_ptr_array_index (convs, i));
          saved += saved_ps (ctx, g_ptr_array_index (convs, i));
        }
      double cost = 0;
      int64_t moved = transposed_elements (ctx, set, &cost);
      g_hash_table_unref (set);
      if (cost >= saved)
        {
          owb_pass_near_miss (ctx, g_ptr_array_index (convs, 0),
                               "and %u other convolution(s) kept in NCHW: Transposes would move %" G_GINT64_FORMAT
                               " elements per run (about %.3f ms), not worth it: channels-last would save about %.3f ms",
                               convs->len - 1, moved, cost * 1e-9, saved * 1e-9);
          g_ptr_array_set_size (convs, 0);
        }
    }
  if (convs->len == 0)
    {
      g_ptr_array_unref (convs);
      return TRUE;
    }
  owb_model_set_opset (ctx->model, OWB_DOMAIN, 1);
  for (guint i = 0; i < convs->len; i++)
    {
      OwbNode *node = g_ptr_array_index (convs, i);
      if (owb_pass_is_op (node, "ConvTranspose"))
        convert_to_nhwc (ctx, node, "NhwcConvTranspose", reorder_transpose_weight);
      else if (owb_pass_is_op (node, "QLinearConv"))
        convert_qlinear_to_nhwc (ctx, node);
      else
        convert_to_nhwc (ctx, node, "NhwcConv", reorder_weight);
    }
  g_ptr_array_unref (convs);

  /* Push and cancel until nothing moves; every push or cancel removes one node of the original graph
   * or one Transpose, so this ends. A rewrite can only enable another on the nodes it added and on
   * the readers of the values it touched, which the worklist queues again (restarting the scan
   * from the first node after each rewrite made the pass quadratic). */
  owb_pass_watch_begin (ctx);
  for (OwbNode *node; (node = owb_pass_watch_next (ctx));)
    if (!try_cancel (ctx, node) && !try_push (ctx, node) && !try_push_reduce (ctx, node) && !try_push_slice (ctx, node)
        && !try_push_split (ctx, node))
      try_push_shuffle (ctx, node);
  owb_pass_watch_end (ctx);
  /* Resizes left reading an NHWC value through a Transpose: say why they stayed NCHW */
  for (guint i = 0; i < owb_pass_nodes (ctx)->len; i++)
    {
      OwbNode *node = g_ptr_array_index (owb_pass_nodes (ctx), i);
      if (!owb_pass_is_op (node, "Resize") || node->n_inputs < 1 || !nhwc_source (ctx, node->inputs[0]))
        continue;
      char *why = resize_refusal (ctx, node, NULL, NULL, NULL);
      if (why)
        owb_pass_near_miss (ctx, node, "%s; Resize kept in NCHW between Transposes", why);
      g_free (why);
    }
  read_nchw_inputs (ctx);
  remove_dead_transposes (ctx);
  owb_pass_prune_initializers (ctx);
  net_report (ctx);
  return TRUE;
}

const OwbPass _owb_pass_layout_nhwc = {
  "layout_nhwc",
  OWB_OPTIMIZE_LAYOUT,
  "runs 2-D float and integer convolutions channels-last (NhwcConv, NhwcQLinearConv), pushing and cancelling the "
  "NCHW<->NHWC Transposes",
  run,
};
