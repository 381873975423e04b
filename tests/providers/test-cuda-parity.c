/* test-cuda-parity.c: every op the CUDA provider's kernel tables claim, run op by op on random
 * inputs through a session with providers "cuda,cpu" and one with "cpu" alone, and compared
 * (ggml's test-backend-ops in spirit): relative L2 error at most 1e-3 in float32, 1e-2 in
 * float16, exact for bool and integer outputs. Each case also checks that CUDA really ran the
 * node. Without a GPU the parity cases skip, saying so; what runs everywhere: every op of the
 * tables has a case here (a kernel added without one fails), and the claim map of a small model
 * says why CUDA declined each node. */
#include <owb/owb.h>

#include "../../providers/cuda/cuda-private.h"

#include <math.h>
#include <string.h>

typedef struct {
  const char *op;
  const char *domain; /* "" or OWB_DOMAIN */
  int opset;
  /* Inputs separated by ';': f<dims> random float (the case's dtype), p<dims> positive float,
   * b<dims> random bool, l<dims> random int64 in [0, 10), I:<ints> an int64 initializer (host
   * data), F:<float> a scalar initializer of the case's dtype, F2:<floats> a float32 vector
   * initializer (Resize's scales), - an absent input. dims are
   * "2x3x4"; "" is a scalar. */
  const char *inputs;
  /* Attributes separated by ';': name=i:<int>, name=f:<float>, name=s:<string>, name=is:<ints> */
  const char *attrs;
  int n_outputs;
} Case;

#define W OWB_DOMAIN

static const Case cases[] = {
  /* elementwise: unary */
  { "Relu", "", 14, "f2x3x5", "", 1 },
  { "Sigmoid", "", 13, "f2x3x5", "", 1 },
  { "Tanh", "", 13, "f2x3x5", "", 1 },
  { "Exp", "", 13, "f2x3x5", "", 1 },
  { "Log", "", 13, "p2x3x5", "", 1 },
  { "Sqrt", "", 13, "p2x3x5", "", 1 },
  { "Reciprocal", "", 13, "p2x3x5", "", 1 },
  { "Abs", "", 13, "f2x3x5", "", 1 },
  { "Neg", "", 13, "f2x3x5", "", 1 },
  { "Erf", "", 13, "f2x3x5", "", 1 },
  { "Floor", "", 13, "f2x3x5", "", 1 },
  { "Ceil", "", 13, "f2x3x5", "", 1 },
  { "Round", "", 11, "f2x3x5", "", 1 },
  { "Sign", "", 13, "f2x3x5", "", 1 },
  { "Sin", "", 7, "f2x3x5", "", 1 },
  { "Cos", "", 7, "f2x3x5", "", 1 },
  { "Softplus", "", 1, "f2x3x5", "", 1 },
  { "Softsign", "", 1, "f2x3x5", "", 1 },
  { "Mish", "", 18, "f2x3x5", "", 1 },
  { "LeakyRelu", "", 16, "f2x3x5", "alpha=f:0.2", 1 },
  { "Elu", "", 6, "f2x3x5", "alpha=f:0.7", 1 },
  { "Selu", "", 6, "f2x3x5", "", 1 },
  { "Celu", "", 12, "f2x3x5", "alpha=f:1.5", 1 },
  { "ThresholdedRelu", "", 10, "f2x3x5", "alpha=f:0.25", 1 },
  { "HardSigmoid", "", 6, "f2x3x5", "alpha=f:0.3;beta=f:0.4", 1 },
  { "HardSwish", "", 14, "f2x3x5", "", 1 },
  { "Swish", "", 24, "f2x3x5", "alpha=f:1.5", 1 },
  { "Gelu", "", 20, "f2x3x5", "", 1 },
  { "Gelu", "", 20, "f2x3x5", "approximate=s:tanh", 1 },
  { "Gelu", W, 1, "f2x3x5", "", 1 },
  { "BiasGelu", W, 1, "f2x3x5;f5", "", 1 },
  { "Clip", "", 13, "f2x3x5;F:-0.5;F:0.25", "", 1 },
  { "Clip", "", 13, "f2x3x5;-;F:0.25", "", 1 },
  /* elementwise: binary, with broadcasting */
  { "Add", "", 14, "f2x3x5;f5", "", 1 },
  { "Add", "", 14, "f2x3x5;f2x3x5", "", 1 },
  { "Sub", "", 14, "f2x1x5;f3x1", "", 1 },
  { "Mul", "", 14, "f2x3x5;f2x3x1", "", 1 },
  { "Div", "", 14, "f2x3x5;p3x5", "", 1 },
  { "Pow", "", 15, "p2x3x5;f2x3x5", "", 1 },
  { "Max", "", 13, "f2x3x5;f5", "", 1 },
  { "Min", "", 13, "f2x3x5;f3x1", "", 1 },
  { "PRelu", "", 16, "f2x3x5;f3x1", "", 1 },
  { "Equal", "", 13, "f2x3x5;f2x3x5", "", 1 },
  { "Less", "", 13, "f2x3x5;f5", "", 1 },
  { "LessOrEqual", "", 16, "f2x3x5;f5", "", 1 },
  { "Greater", "", 13, "f2x3x5;f3x1", "", 1 },
  { "GreaterOrEqual", "", 16, "f2x3x5;f3x1", "", 1 },
  { "Where", "", 16, "b2x3x5;f2x3x5;f5", "", 1 },
  { "Cast", "", 13, "f2x3x5", "to=i:1", 1 },
  { "Cast", "", 13, "f2x3x5", "to=i:10", 1 },
  { "Cast", "", 13, "f2x3x5", "to=i:7", 1 },
  /* data movement */
  { "Identity", "", 16, "f2x3x5", "", 1 },
  { "Dropout", "", 13, "f2x3x5", "", 1 },
  { "Reshape", "", 14, "f2x3x4;I:4,0,-1", "", 1 },
  { "Flatten", "", 13, "f2x3x4x2", "axis=i:2", 1 },
  { "Squeeze", "", 13, "f2x1x4;I:1", "", 1 },
  { "Unsqueeze", "", 13, "f2x4;I:0,3", "", 1 },
  { "Transpose", "", 13, "f2x3x4x5", "perm=is:0,2,3,1", 1 },
  { "Concat", "", 13, "f2x3x4;f2x1x4;f2x2x4", "axis=i:1", 1 },
  { "Split", "", 18, "f2x3x6", "axis=i:2;num_outputs=i:2", 2 },
  { "Split", "", 13, "f2x5x4;I:2,3", "axis=i:1", 2 },
  { "Slice", "", 13, "f4x6x5;I:1,-1;I:4,0;I:0,1;I:2,-2", "", 1 },
  /* Steps of +-INT64_MAX and INT64_MIN: one element each; the kernel's own count overflowed. */
  { "Slice", "", 13, "f4x6x5;I:1,5,4;I:4,-9223372036854775807,0;I:0,1,2;I:9223372036854775807,-9223372036854775807,-9223372036854775808", "", 1 },
  { "Expand", "", 13, "f3x1;I:2,3,4", "", 1 },
  { "Gather", "", 13, "f2x10x3;l4", "axis=i:1", 1 },
  { "Gather", "", 13, "f10x3;l2x2", "axis=i:0", 1 },
  /* reductions */
  { "ReduceSum", "", 13, "f2x3x5;I:1", "keepdims=i:0", 1 },
  { "ReduceMean", "", 18, "f2x3x5;I:-1", "", 1 },
  { "ReduceMax", "", 18, "f2x3x5;I:0,2", "", 1 },
  { "ReduceMin", "", 18, "f2x3x5", "keepdims=i:0", 1 },
  { "ReduceProd", "", 18, "p2x3x4;I:2", "", 1 },
  { "ReduceSumSquare", "", 18, "f2x3x5;I:1", "", 1 },
  { "ReduceL1", "", 18, "f2x3x5;I:1", "", 1 },
  { "ReduceL2", "", 18, "f2x3x5;I:2", "", 1 },
  { "ReduceLogSum", "", 18, "p2x3x5;I:2", "", 1 },
  { "ReduceLogSumExp", "", 18, "f2x3x5;I:1", "", 1 },
  { "ReduceMean", "", 13, "f2x3x5", "axes=is:1,2", 1 },
  { "GlobalAveragePool", "", 1, "f2x3x4x5", "", 1 },
  { "GlobalMaxPool", "", 1, "f2x3x4x5", "", 1 },
  { "Softmax", "", 13, "f2x3x70", "", 1 },
  { "Softmax", "", 13, "f2x7x5", "axis=i:1", 1 },
  { "LogSoftmax", "", 11, "f2x3x5", "axis=i:1", 1 },
  { "LogSoftmax", "", 13, "f4x300", "", 1 },
  /* normalisation */
  { "LayerNormalization", "", 17, "f2x3x8;f8;f8", "", 1 },
  { "LayerNormalization", "", 17, "f2x3x8;f3x8", "axis=i:1;epsilon=f:0.001", 1 },
  { "LayerNormalization", W, 1, "f2x3x8;f8;f8", "", 1 },
  { "RMSNormalization", "", 23, "f2x3x8;f8", "", 1 },
  { "SkipLayerNormalization", W, 1, "f2x3x8;f2x3x8;f8;f8;f8", "", 1 },
  { "SkipLayerNormalization", W, 1, "f2x3x8;f3x8;f8", "", 1 },
  { "BatchNormalization", "", 15, "f2x3x4x4;f3;f3;f3;p3", "", 1 },
  /* products */
  { "MatMul", "", 13, "f2x3x4;f4x5", "", 1 },
  { "MatMul", "", 13, "f2x3x4;f2x4x5", "", 1 },
  { "MatMul", "", 13, "f2x1x3x4;f3x4x5", "", 1 },
  { "MatMul", "", 13, "f1x2x3x4;f2x1x4x5", "", 1 },
  { "MatMul", "", 13, "f4;f2x4x5", "", 1 },
  { "MatMul", "", 13, "f3x4;f4", "", 1 },
  { "Gemm", "", 13, "f3x4;f5x4;f5", "transB=i:1", 1 },
  { "Gemm", "", 13, "f4x3;f4x5;f3x5", "transA=i:1;alpha=f:0.5;beta=f:2", 1 },
  { "Gemm", "", 13, "f3x4;f4x5;f3x1", "", 1 },
  { "FusedMatMul", W, 1, "f2x3x4;f4x5;f5", "activation=s:Sigmoid", 1 },
  { "FusedMatMul", W, 1, "f2x3x4;f5x4;f5", "transB=i:1;activation=s:Relu", 1 },
  { "FusedGemm", W, 1, "f3x4;f4x5;f5", "activation=s:Relu", 1 },
  { "FusedGemm", W, 1, "f3x4;f4x5;f5", "activation=s:LeakyRelu;activation_params=fs:0.1", 1 },
  /* resize: scales or sizes, the coordinate and nearest modes */
  { "Resize", "", 13, "f1x2x5x6;-;F2:1,1,2,1.5", "mode=s:linear", 1 },
  { "Resize", "", 13, "f1x2x5x6;-;F2:1,1,0.6,0.5", "mode=s:linear;coordinate_transformation_mode=s:align_corners", 1 },
  { "Resize", "", 13, "f1x2x5x6;-;-;I:1,2,9,4", "mode=s:nearest", 1 },
  { "Resize", "", 13, "f1x2x5x6;-;F2:1,1,3,2", "coordinate_transformation_mode=s:asymmetric;nearest_mode=s:floor", 1 },
  { "Resize", "", 19, "f2x3x4x4;-;-;I:7,9", "mode=s:linear;axes=is:2,3;coordinate_transformation_mode=s:pytorch_half_pixel", 1 },
  /* attention: separate Q, K, V with a bias over heads; packed QKV; seq_first with another kv length */
  { "MultiHeadAttention", W, 1, "f2x5x16;f2x7x16;f2x7x8;f2x1x5x7", "num_heads=i:4", 1 },
  { "MultiHeadAttention", W, 1, "f2x5x24", "num_heads=i:2", 1 },
  { "MultiHeadAttention", W, 1, "f5x2x16;f7x2x16;f7x2x16;f7", "num_heads=i:4;seq_first=i:1;scale=f:0.3", 1 },
  /* convolution and pools */
  { "Conv", "", 11, "f1x3x8x8;f4x3x3x3;f4", "pads=is:1,1,1,1;strides=is:2,2", 1 },
  { "Conv", "", 11, "f2x4x7x9;f6x2x3x3", "group=i:2;dilations=is:2,1", 1 },
  { "Conv", "", 11, "f1x4x10;f4x2x3;f4", "group=i:2;pads=is:1,1", 1 },
  { "Conv", "", 11, "f1x2x4x5x6;f3x2x3x3x3", "pads=is:1,1,1,1,1,1", 1 },
  { "FusedConv", W, 1, "f1x3x8x8;f4x3x3x3;f4;f1x4x8x8", "pads=is:1,1,1,1;activation=s:Relu", 1 },
  { "FusedConv", W, 1, "f1x3x8x8;f4x3x1x1;f4", "activation=s:HardSwish", 1 },
  { "ConvTranspose", "", 11, "f1x4x5x5;f4x3x3x3;f3", "strides=is:2,2;pads=is:1,1,1,1;output_padding=is:1,1", 1 },
  { "ConvTranspose", "", 11, "f1x4x6;f4x1x3", "group=i:2", 1 },
  { "MaxPool", "", 12, "f1x3x9x9", "kernel_shape=is:3,3;strides=is:2,2;pads=is:1,1,1,1", 1 },
  { "AveragePool", "", 19, "f1x3x8x8", "kernel_shape=is:2,2;strides=is:2,2", 1 },
  { "AveragePool", "", 19, "f1x3x8x8", "kernel_shape=is:3,3;pads=is:1,1,1,1;count_include_pad=i:1", 1 },
};

static int
parse_dims (const char *s, int64_t *dims)
{
  if (!*s)
    return 0;
  g_auto (GStrv) parts = g_strsplit (s, "x", -1);
  int r = 0;
  for (; parts[r]; r++)
    dims[r] = g_ascii_strtoll (parts[r], NULL, 10);
  return r;
}

static void
parse_attrs (OwbNode *node, const char *spec)
{
  g_auto (GStrv) items = g_strsplit (spec, ";", -1);
  for (int i = 0; items[i]; i++)
    {
      if (!items[i][0])
        continue;
      g_auto (GStrv) kv = g_strsplit (items[i], "=", 2);
      const char *name = kv[0], *v = kv[1];
      g_assert_nonnull (v);
      if (g_str_has_prefix (v, "i:"))
        owb_node_add_attribute (node, name, OWB_ATTR_INT)->i = g_ascii_strtoll (v + 2, NULL, 10);
      else if (g_str_has_prefix (v, "f:"))
        owb_node_add_attribute (node, name, OWB_ATTR_FLOAT)->f = (float) g_ascii_strtod (v + 2, NULL);
      else if (g_str_has_prefix (v, "s:"))
        {
          OwbAttribute *a = owb_node_add_attribute (node, name, OWB_ATTR_STRING);
          a->s = g_strdup (v + 2);
          a->s_len = strlen (v + 2);
        }
      else if (g_str_has_prefix (v, "is:") || g_str_has_prefix (v, "fs:"))
        {
          gboolean ints = v[0] == 'i';
          g_auto (GStrv) nums = g_strsplit (v + 3, ",", -1);
          int n = g_strv_length (nums);
          OwbAttribute *a = owb_node_add_attribute (node, name, ints ? OWB_ATTR_INTS : OWB_ATTR_FLOATS);
          a->n = n;
          if (ints)
            {
              a->ints = g_new (int64_t, n);
              for (int k = 0; k < n; k++)
                a->ints[k] = g_ascii_strtoll (nums[k], NULL, 10);
            }
          else
            {
              a->floats = g_new (float, n);
              for (int k = 0; k < n; k++)
                a->floats[k] = (float) g_ascii_strtod (nums[k], NULL);
            }
        }
      else
        g_error ("bad attribute spec %s", items[i]);
    }
}

/* A random tensor of `dtype` for a float spec: values drawn as float, then converted, so that the
 * float32 and float16 runs see the same numbers up to rounding. */
static OwbTensor *
random_input (char kind, OwbDataType dtype, int rank, const int64_t *dims, GRand *rand)
{
  GError *error = NULL;
  if (kind == 'b')
    return owb_tensor_new_random (OWB_TYPE_BOOL, rank, dims, rand, &error);
  if (kind == 'l')
    return owb_tensor_new_random (OWB_TYPE_INT64, rank, dims, rand, &error);
  g_autoptr (OwbTensor) f = owb_tensor_new_random (OWB_TYPE_FLOAT, rank, dims, rand, &error);
  g_assert_no_error (error);
  if (kind == 'p')
    for (int64_t i = 0; i < f->nelems; i++)
      ((float *) f->data)[i] = fabsf (((float *) f->data)[i]) + 0.1f;
  OwbTensor *t = dtype == OWB_TYPE_FLOAT ? owb_tensor_ref (f) : owb_tensor_cast (f, dtype, &error);
  g_assert_no_error (error);
  return t;
}

typedef struct {
  OwbModel *model;
  GPtrArray *feed_names; /* char * */
  GPtrArray *feeds;      /* OwbTensor * */
} Built;

static void
built_clear (Built *b)
{
  owb_model_unref (b->model);
  g_ptr_array_unref (b->feed_names);
  g_ptr_array_unref (b->feeds);
}

static void
add_value (GPtrArray *list, const char *name, const OwbTensor *t)
{
  OwbValueType type;
  owb_tensor_get_value_type (t, &type);
  g_ptr_array_add (list, owb_value_info_new (name, &type));
}

static Built
build_case (const Case *c, OwbDataType dtype, GRand *rand)
{
  Built b = { owb_model_new (), g_ptr_array_new_with_free_func (g_free),
              g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref) };
  b.model->ir_version = 9;
  b.model->graph = owb_graph_new ("parity");
  owb_model_set_opset (b.model, "", c->domain[0] ? 18 : c->opset);
  if (c->domain[0])
    owb_model_set_opset (b.model, c->domain, c->opset);
  OwbNode *node = owb_node_new (c->op, c->domain, "the_node");
  g_auto (GStrv) specs = g_strsplit (c->inputs, ";", -1);
  for (int i = 0; specs[i]; i++)
    {
      const char *s = specs[i];
      g_autofree char *name = g_strdup_printf ("x%d", i);
      if (strcmp (s, "-") == 0)
        {
          owb_node_add_input (node, "");
          continue;
        }
      owb_node_add_input (node, name);
      int64_t dims[OWB_MAX_RANK];
      if (g_str_has_prefix (s, "I:"))
        {
          g_auto (GStrv) nums = g_strsplit (s + 2, ",", -1);
          int64_t n = s[2] ? g_strv_length (nums) : 0;
          OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, &n, NULL);
          for (int64_t k = 0; k < n; k++)
            ((int64_t *) t->data)[k] = g_ascii_strtoll (nums[k], NULL, 10);
          owb_graph_add_initializer (b.model->graph, name, t);
        }
      else if (g_str_has_prefix (s, "F2:"))
        {
          g_auto (GStrv) nums = g_strsplit (s + 3, ",", -1);
          int64_t n = g_strv_length (nums);
          OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, 1, &n, NULL);
          for (int64_t k = 0; k < n; k++)
            ((float *) t->data)[k] = (float) g_ascii_strtod (nums[k], NULL);
          owb_graph_add_initializer (b.model->graph, name, t);
        }
      else if (g_str_has_prefix (s, "F:"))
        {
          OwbTensor *t = owb_tensor_new (dtype, 0, NULL, NULL);
          owb_tensor_set_double (t, 0, g_ascii_strtod (s + 2, NULL));
          owb_graph_add_initializer (b.model->graph, name, t);
        }
      else
        {
          int rank = parse_dims (s + 1, dims);
          OwbTensor *t = random_input (s[0], dtype, rank, dims, rand);
          add_value (b.model->graph->inputs, name, t);
          g_ptr_array_add (b.feed_names, g_strdup (name));
          g_ptr_array_add (b.feeds, t);
        }
    }
  for (int o = 0; o < c->n_outputs; o++)
    {
      g_autofree char *name = g_strdup_printf ("y%d", o);
      owb_node_add_output (node, name);
      OwbValueType unknown;
      owb_value_type_init_unknown (&unknown);
      g_ptr_array_add (b.model->graph->outputs, owb_value_info_new (name, &unknown));
    }
  parse_attrs (node, c->attrs);
  owb_graph_add_node (b.model->graph, node);
  return b;
}

/* Runs the model on the providers; returns the session (for its claim map) and the outputs. */
static OwbSession *
run (const Built *b, const char *providers, OwbTensor **outputs, int n_outputs)
{
  GError *error = NULL;
  g_autoptr (GPtrArray) list = owb_providers_new_from_list (providers, &error);
  g_assert_no_error (error);
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = list;
  opts.n_threads = 1;
  opts.optimize = OWB_OPTIMIZE_DISABLED;
  OwbSession *s = owb_session_new (b->model, &opts, &error);
  g_assert_no_error (error);
  g_assert_true (owb_session_run (s, b->feeds->len, (const char *const *) b->feed_names->pdata,
                                  (OwbTensor *const *) b->feeds->pdata, n_outputs, NULL, outputs, NULL, NULL, &error));
  g_assert_no_error (error);
  return s;
}

static const char *
provider_of (const OwbSession *s, const char *op)
{
  const OwbGraph *g = owb_session_get_graph (s);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *n = g->nodes->pdata[i];
      if (strcmp (n->op_type, op) == 0)
        return n->provider;
    }
  return NULL;
}

/* Relative L2 error of `got` against `want`; bool and integer tensors count mismatches. */
static double
rel_l2 (const OwbTensor *got, const OwbTensor *want)
{
  g_assert_cmpint (got->nelems, ==, want->nelems);
  g_assert_cmpint (got->rank, ==, want->rank);
  for (int d = 0; d < got->rank; d++)
    g_assert_cmpint (got->dims[d], ==, want->dims[d]);
  double num = 0, den = 0;
  gboolean exact = got->dtype != OWB_TYPE_FLOAT && got->dtype != OWB_TYPE_FLOAT16 && got->dtype != OWB_TYPE_DOUBLE;
  for (int64_t i = 0; i < got->nelems; i++)
    {
      double a = owb_tensor_get_double (got, i), w = owb_tensor_get_double (want, i);
      if (exact)
        num += a != w;
      else
        {
          num += (a - w) * (a - w);
          den += w * w;
        }
    }
  if (exact)
    return num;
  return sqrt (num) / MAX (sqrt (den), 1e-6);
}

static gboolean
have_device (char **why)
{
  g_autoptr (GPtrArray) list = owb_providers_new_from_list ("cuda", NULL);
  g_assert_nonnull (list);
  const OwbProvider *p = list->pdata[0];
  g_assert_cmpstr (p->name, ==, "cuda");
  gboolean have = p->device != NULL;
  if (!have)
    *why = g_strdup_printf ("no CUDA device on this machine (%s): the CUDA parity cases need a GPU", p->description);
  return have;
}

static void
test_parity (gconstpointer data)
{
  const Case *c = data;
  g_autofree char *why = NULL;
  if (!have_device (&why))
    {
      g_test_skip (why);
      return;
    }
  const OwbDataType dtypes[] = { OWB_TYPE_FLOAT, OWB_TYPE_FLOAT16 };
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      GRand *rand = g_rand_new_with_seed (1234);
      Built b = build_case (c, dtypes[d], rand);
      g_rand_free (rand);
      OwbTensor *got[4] = { NULL }, *want[4] = { NULL };
      OwbSession *sc = run (&b, "cuda,cpu", got, c->n_outputs);
      OwbSession *sp = run (&b, "cpu", want, c->n_outputs);
      g_test_message ("%s (%s) on %s: %s", c->op, c->inputs, owb_data_type_name (dtypes[d]),
                      provider_of (sc, c->op));
      g_assert_cmpstr (provider_of (sc, c->op), ==, "cuda");
      double tol = dtypes[d] == OWB_TYPE_FLOAT ? 1e-3 : 1e-2;
      for (int o = 0; o < c->n_outputs; o++)
        {
          g_assert_null (got[o]->device);
          g_assert_cmpint (got[o]->dtype, ==, want[o]->dtype);
          double err = rel_l2 (got[o], want[o]);
          if (!(err <= tol))
            g_error ("%s (%s, %s) output %d on %s: error %g > %g", c->op, c->inputs, c->attrs, o,
                     owb_data_type_name (dtypes[d]), err, tol);
          owb_tensor_unref (got[o]);
          owb_tensor_unref (want[o]);
        }
      owb_session_free (sc);
      owb_session_free (sp);
      built_clear (&b);
    }
}

/* Every case runs on the CPU alone, in both dtypes: a case the GPU would run is a valid model
 * (checked here, where there is no GPU, so that the device run finds only real differences). */
static void
test_cases_run_on_cpu (void)
{
  const OwbDataType dtypes[] = { OWB_TYPE_FLOAT, OWB_TYPE_FLOAT16 };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
      {
        GRand *rand = g_rand_new_with_seed (1234);
        Built b = build_case (&cases[i], dtypes[d], rand);
        g_rand_free (rand);
        OwbTensor *out[4] = { NULL };
        g_test_message ("%s (%s; %s) on %s", cases[i].op, cases[i].inputs, cases[i].attrs, owb_data_type_name (dtypes[d]));
        OwbSession *s = run (&b, "cpu", out, cases[i].n_outputs);
        for (int o = 0; o < cases[i].n_outputs; o++)
          {
            g_assert_nonnull (out[o]);
            g_assert_cmpint (out[o]->nelems, >, 0);
            owb_tensor_unref (out[o]);
          }
        owb_session_free (s);
        built_clear (&b);
      }
}

/* Every (op, domain) of the CUDA tables has a parity case: a kernel cannot join the tables
 * untested. Runs without a GPU. */
static void
test_every_op_has_a_case (void)
{
  guint n_tables;
  const OwbKernelDef *const *tables = _owb_cuda_get_tables (&n_tables);
  GString *missing = g_string_new (NULL);
  guint n_ops = 0;
  for (guint t = 0; t < n_tables; t++)
    for (const OwbKernelDef *def = tables[t]; def->op_type; def++)
      {
        gboolean found = FALSE;
        n_ops++;
        for (guint i = 0; i < G_N_ELEMENTS (cases) && !found; i++)
          found = strcmp (cases[i].op, def->op_type) == 0 && strcmp (cases[i].domain, def->domain) == 0;
        if (!found)
          g_string_append_printf (missing, " %s%s%s", def->domain, def->domain[0] ? "." : "", def->op_type);
      }
  g_assert_cmpuint (n_ops, >, 50);
  if (missing->len)
    g_error ("CUDA kernels without a parity case:%s", missing->str);
  g_string_free (missing, TRUE);
}

/* A small network with an op CUDA has no kernel for (TopK): the claim map says why CUDA declined
 * each node, with or without a GPU. */
static void
test_decline_reasons (void)
{
  GRand *rand = g_rand_new_with_seed (7);
  Built b = build_case (&(Case){ "Conv", "", 13, "f1x3x8x8;f4x3x3x3", "pads=is:1,1,1,1", 1 }, OWB_TYPE_FLOAT, rand);
  g_rand_free (rand);
  OwbNode *relu = owb_node_new ("Relu", "", "relu");
  owb_node_add_input (relu, "y0");
  owb_node_add_output (relu, "r");
  owb_graph_add_node (b.model->graph, relu);
  OwbNode *topk = owb_node_new ("TopK", "", "topk");
  owb_node_add_input (topk, "r");
  owb_node_add_input (topk, "k");
  owb_node_add_output (topk, "values");
  owb_node_add_output (topk, "indices");
  owb_graph_add_node (b.model->graph, topk);
  int64_t one = 1;
  OwbTensor *k = owb_tensor_new (OWB_TYPE_INT64, 1, &one, NULL);
  ((int64_t *) k->data)[0] = 2;
  owb_graph_add_initializer (b.model->graph, "k", k);
  g_ptr_array_set_size (b.model->graph->outputs, 0);
  OwbValueType unknown;
  owb_value_type_init_unknown (&unknown);
  g_ptr_array_add (b.model->graph->outputs, owb_value_info_new ("values", &unknown));
  OwbTensor *out[1] = { NULL };
  OwbSession *s = run (&b, "cuda,cpu", out, 1);
  g_autofree char *why = NULL;
  gboolean device = have_device (&why);
  const OwbGraph *g = owb_session_get_graph (s);
  guint checked = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *n = g->nodes->pdata[i];
      if (strcmp (n->domain, "") != 0)
        continue; /* copies the session inserted */
      const char *reason = NULL;
      for (guint d = 0; n->declines && d < n->declines->len; d++)
        {
          const OwbDecline *dec = n->declines->pdata[d];
          if (strcmp (dec->provider, "cuda") == 0)
            reason = dec->reason;
        }
      g_test_message ("%s: %s (%s)", n->op_type, n->provider, reason ? reason : "claimed");
      if (strcmp (n->op_type, "TopK") == 0)
        {
          g_assert_cmpstr (n->provider, ==, "cpu");
          g_assert_nonnull (reason);
          g_assert_nonnull (strstr (reason, "no CUDA kernel for TopK"));
        }
      else if (device)
        g_assert_cmpstr (n->provider, ==, "cuda");
      else
        {
          g_assert_cmpstr (n->provider, ==, "cpu");
          g_assert_nonnull (reason);
          g_autofree char *want = g_strdup_printf ("no CUDA device (this build has a CUDA kernel for %s)", n->op_type);
          g_assert_cmpstr (reason, ==, want);
        }
      checked++;
    }
  g_assert_cmpuint (checked, ==, 3);
  owb_tensor_unref (out[0]);
  owb_session_free (s);
  built_clear (&b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/every-op-has-a-case", test_every_op_has_a_case);
  g_test_add_func ("/cuda/decline-reasons", test_decline_reasons);
  g_test_add_func ("/cuda/cases-run-on-cpu", test_cases_run_on_cpu);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/cuda/parity/%s%s%s/%u", cases[i].domain[0] ? "engine." : "",
                                               cases[i].op, "", i);
      g_test_add_data_func (path, &cases[i], test_parity);
    }
  return g_test_run ();
}
