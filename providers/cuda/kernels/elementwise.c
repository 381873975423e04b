/* elementwise.c: the CUDA provider's elementwise ops: unary ops and activations, binary ops and
 * comparisons with numpy broadcasting, Where and Cast. Shapes are checked here; the arithmetic
 * is one template family in elementwise-device.cu. */
#include "../cuda-private.h"

#include <math.h>
#include <string.h>

typedef struct {
  const char *op;
  OwbCudaUnaryOp kind;
  const char *a0;
  float d0;
  const char *a1;
  float d1;
} UnaryInfo;

static const UnaryInfo unary_ops[] = {
  { "Relu", OWB_CUDA_UNARY_RELU },
  { "Sigmoid", OWB_CUDA_UNARY_SIGMOID },
  { "Tanh", OWB_CUDA_UNARY_TANH },
  { "Exp", OWB_CUDA_UNARY_EXP },
  { "Log", OWB_CUDA_UNARY_LOG },
  { "Sqrt", OWB_CUDA_UNARY_SQRT },
  { "Reciprocal", OWB_CUDA_UNARY_RECIPROCAL },
  { "Abs", OWB_CUDA_UNARY_ABS },
  { "Neg", OWB_CUDA_UNARY_NEG },
  { "Erf", OWB_CUDA_UNARY_ERF },
  { "Floor", OWB_CUDA_UNARY_FLOOR },
  { "Ceil", OWB_CUDA_UNARY_CEIL },
  { "Round", OWB_CUDA_UNARY_ROUND },
  { "Sign", OWB_CUDA_UNARY_SIGN },
  { "Sin", OWB_CUDA_UNARY_SIN },
  { "Cos", OWB_CUDA_UNARY_COS },
  { "Softplus", OWB_CUDA_UNARY_SOFTPLUS },
  { "Softsign", OWB_CUDA_UNARY_SOFTSIGN },
  { "Mish", OWB_CUDA_UNARY_MISH },
  { "LeakyRelu", OWB_CUDA_UNARY_LEAKY_RELU, "alpha", 0.01f },
  { "Elu", OWB_CUDA_UNARY_ELU, "alpha", 1.0f },
  { "Selu", OWB_CUDA_UNARY_SELU, "alpha", 1.67326319217681884765625f, "gamma", 1.05070102214813232421875f },
  { "Celu", OWB_CUDA_UNARY_CELU, "alpha", 1.0f },
  { "ThresholdedRelu", OWB_CUDA_UNARY_THRESHOLDED_RELU, "alpha", 1.0f },
  { "HardSigmoid", OWB_CUDA_UNARY_HARD_SIGMOID, "alpha", 0.2f, "beta", 0.5f },
  { "HardSwish", OWB_CUDA_UNARY_HARD_SWISH, NULL, 1.0f / 6.0f, NULL, 0.5f },
  { "Swish", OWB_CUDA_UNARY_SWISH, "alpha", 1.0f },
};

static const UnaryInfo *
unary_info (const char *op)
{
  for (guint i = 0; i < G_N_ELEMENTS (unary_ops); i++)
    if (strcmp (unary_ops[i].op, op) == 0)
      return &unary_ops[i];
  return NULL;
}

/* y = f (x) into an output of x's shape and type. */
static gboolean
run_unary (OwbKernelContext *ctx, OwbCudaUnaryOp kind, float p0, float p1, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0];
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error))
    return FALSE;
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, x->dims, error);
  if (!y)
    return FALSE;
  return _owb_cuda_check (ctx, error, _owb_cuda_unary (t, kind, p0, p1, x->data, y->data, x->nelems, cx->stream),
                          "unary kernel");
}

static gboolean
compute_unary (OwbKernelContext *ctx, GError **error)
{
  const UnaryInfo *u = unary_info (ctx->node->op_type);
  float p0 = u->a0 ? owb_node_get_float (ctx->node, u->a0, u->d0) : u->d0;
  float p1 = u->a1 ? owb_node_get_float (ctx->node, u->a1, u->d1) : u->d1;
  return run_unary (ctx, u->kind, p0, p1, error);
}

static gboolean
gelu_kind (OwbKernelContext *ctx, OwbCudaUnaryOp *kind, GError **error)
{
  const char *approximate = owb_node_get_string (ctx->node, "approximate", "none");
  if (strcmp (approximate, "tanh") == 0)
    *kind = OWB_CUDA_UNARY_GELU_TANH;
  else if (strcmp (approximate, "none") == 0)
    *kind = OWB_CUDA_UNARY_GELU;
  else
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "approximate must be \"none\" or \"tanh\", not \"%s\"",
                            approximate);
      return FALSE;
    }
  return TRUE;
}

static gboolean
compute_gelu (OwbKernelContext *ctx, GError **error)
{
  OwbCudaUnaryOp kind;
  return gelu_kind (ctx, &kind, error) && run_unary (ctx, kind, 0, 0, error);
}

/* BiasGelu (X, bias [C]): Gelu (X + bias) along the last axis. */
static gboolean
compute_bias_gelu (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0], *bias = ctx->inputs[1];
  OwbCudaFloat t;
  OwbCudaUnaryOp kind;
  if (!cx || !_owb_cuda_float_type (ctx, x->dtype, &t, error) || !gelu_kind (ctx, &kind, error))
    return FALSE;
  if (x->rank < 1 || bias->nelems != x->dims[x->rank - 1] || bias->dtype != x->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "bias must have X's type and one value per element of X's last axis");
      return FALSE;
    }
  OwbTensor *y = _owb_cuda_output (ctx, 0, x->dtype, x->rank, x->dims, error);
  return y && _owb_cuda_copy_device (ctx, cx, y->data, x->data, x->nbytes, error)
         && _owb_cuda_check (ctx, error,
                             _owb_cuda_bias_activation (t, kind, 0, 0, y->data, bias->data, NULL, x->nelems,
                                                        bias->nelems, 1, cx->stream),
                             "BiasGelu kernel");
}

/* Clip: bounds from attributes before opset 11, from host inputs 1 and 2 (optional) since. */
static gboolean
compute_clip (OwbKernelContext *ctx, GError **error)
{
  float lo = -INFINITY, hi = INFINITY;
  if (ctx->opset < 11)
    {
      lo = owb_node_get_float (ctx->node, "min", -3.402823e+38f);
      hi = owb_node_get_float (ctx->node, "max", 3.402823e+38f);
    }
  else
    {
      for (int i = 1; i <= 2 && i < ctx->n_inputs; i++)
        {
          const OwbTensor *b = ctx->inputs[i];
          if (!b)
            continue;
          if (b->nelems != 1 || b->device)
            {
              owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%s must be a scalar in host memory",
                                    i == 1 ? "min" : "max");
              return FALSE;
            }
          float v = (float) owb_tensor_get_double (b, 0);
          if (i == 1)
            lo = v;
          else
            hi = v;
        }
    }
  return run_unary (ctx, OWB_CUDA_UNARY_CLIP, lo, hi, error);
}

typedef struct {
  const char *op;
  OwbCudaBinaryOp kind;
} BinaryInfo;

static const BinaryInfo binary_ops[] = {
  { "Add", OWB_CUDA_BINARY_ADD },          { "Sub", OWB_CUDA_BINARY_SUB },
  { "Mul", OWB_CUDA_BINARY_MUL },          { "Div", OWB_CUDA_BINARY_DIV },
  { "Pow", OWB_CUDA_BINARY_POW },          { "Max", OWB_CUDA_BINARY_MAX },
  { "Min", OWB_CUDA_BINARY_MIN },          { "PRelu", OWB_CUDA_BINARY_PRELU },
  { "Equal", OWB_CUDA_BINARY_EQUAL },      { "Less", OWB_CUDA_BINARY_LESS },
  { "LessOrEqual", OWB_CUDA_BINARY_LESS_OR_EQUAL }, { "Greater", OWB_CUDA_BINARY_GREATER },
  { "GreaterOrEqual", OWB_CUDA_BINARY_GREATER_OR_EQUAL },
};

static const BinaryInfo *
binary_info (const char *op)
{
  for (guint i = 0; i < G_N_ELEMENTS (binary_ops); i++)
    if (strcmp (binary_ops[i].op, op) == 0)
      return &binary_ops[i];
  return NULL;
}

static gboolean
compute_binary (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const BinaryInfo *b = binary_info (ctx->node->op_type);
  OwbCudaFloat t;
  if (!cx || !_owb_cuda_float_type (ctx, ctx->inputs[0]->dtype, &t, error))
    return FALSE;
  if (ctx->n_inputs == 1)
    {
      /* Max / Min of one input: itself. */
      OwbTensor *y = _owb_cuda_output (ctx, 0, ctx->inputs[0]->dtype, ctx->inputs[0]->rank, ctx->inputs[0]->dims,
                                       error);
      return y && _owb_cuda_copy_device (ctx, cx, y->data, ctx->inputs[0]->data, y->nbytes, error);
    }
  const OwbTensor *in[2] = { ctx->inputs[0], ctx->inputs[1] };
  if (in[1]->dtype != in[0]->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "inputs are %s and %s", owb_data_type_name (in[0]->dtype),
                            owb_data_type_name (in[1]->dtype));
      return FALSE;
    }
  int rank;
  int64_t dims[OWB_MAX_RANK];
  if (!_owb_cuda_broadcast_shape (ctx, 2, in, &rank, dims, error))
    return FALSE;
  OwbDataType out_type = b->kind >= OWB_CUDA_BINARY_EQUAL ? OWB_TYPE_BOOL : in[0]->dtype;
  OwbTensor *y = _owb_cuda_output (ctx, 0, out_type, rank, dims, error);
  if (!y)
    return FALSE;
  OwbCudaBroadcast map;
  gboolean flat = in[0]->nelems == y->nelems && in[1]->nelems == y->nelems;
  if (!flat && !_owb_cuda_broadcast_map (rank, dims, 2, in, &map))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "more than %d broadcast axes", OWB_CUDA_MAX_RANK);
      return FALSE;
    }
  return _owb_cuda_check (ctx, error,
                          _owb_cuda_binary (t, b->kind, in[0]->data, in[1]->data, y->data, y->nelems,
                                            flat ? NULL : &map, cx->stream),
                          "binary kernel");
}

static gboolean
compute_where (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  if (!cx)
    return FALSE;
  const OwbTensor *in[3] = { ctx->inputs[0], ctx->inputs[1], ctx->inputs[2] };
  int rank;
  int64_t dims[OWB_MAX_RANK];
  if (!_owb_cuda_broadcast_shape (ctx, 3, in, &rank, dims, error))
    return FALSE;
  OwbTensor *y = _owb_cuda_output (ctx, 0, in[1]->dtype, rank, dims, error);
  OwbCudaBroadcast map;
  if (!y)
    return FALSE;
  if (!_owb_cuda_broadcast_map (rank, dims, 3, in, &map))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "more than %d broadcast axes", OWB_CUDA_MAX_RANK);
      return FALSE;
    }
  return _owb_cuda_check (ctx, error,
                          _owb_cuda_where ((int) owb_data_type_size (in[1]->dtype), in[0]->data, in[1]->data,
                                           in[2]->data, y->data, y->nelems, &map, cx->stream),
                          "Where kernel");
}

static gboolean
cast_code (OwbDataType t, OwbCudaCastType *code)
{
  switch (t)
    {
    case OWB_TYPE_FLOAT: *code = OWB_CUDA_CAST_F32; return TRUE;
    case OWB_TYPE_FLOAT16: *code = OWB_CUDA_CAST_F16; return TRUE;
    case OWB_TYPE_DOUBLE: *code = OWB_CUDA_CAST_F64; return TRUE;
    case OWB_TYPE_INT8: *code = OWB_CUDA_CAST_I8; return TRUE;
    case OWB_TYPE_UINT8: *code = OWB_CUDA_CAST_U8; return TRUE;
    case OWB_TYPE_INT32: *code = OWB_CUDA_CAST_I32; return TRUE;
    case OWB_TYPE_INT64: *code = OWB_CUDA_CAST_I64; return TRUE;
    case OWB_TYPE_BOOL: *code = OWB_CUDA_CAST_BOOL; return TRUE;
    default: return FALSE;
    }
}

#define CAST_TYPES                                                                                               \
  (OWB_CUDA_TYPES_FLOAT | OWB_TYPE_BIT (OWB_TYPE_DOUBLE) | OWB_TYPE_BIT (OWB_TYPE_INT8) | OWB_TYPE_BIT (OWB_TYPE_UINT8) \
   | OWB_TYPE_BIT (OWB_TYPE_INT32) | OWB_TYPE_BIT (OWB_TYPE_INT64) | OWB_TYPE_BIT (OWB_TYPE_BOOL))

static gboolean
compute_cast (OwbKernelContext *ctx, GError **error)
{
  OwbCudaContext *cx = _owb_cuda_context (ctx, error);
  const OwbTensor *x = ctx->inputs[0];
  OwbDataType to = (OwbDataType) owb_node_get_int (ctx->node, "to", OWB_TYPE_UNDEFINED);
  OwbCudaCastType from_code, to_code;
  if (!cx)
    return FALSE;
  if (!cast_code (x->dtype, &from_code) || !cast_code (to, &to_code))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "the CUDA Cast does not convert %s to %s",
                            owb_data_type_name (x->dtype), owb_data_type_name (to));
      return FALSE;
    }
  OwbTensor *y = _owb_cuda_output (ctx, 0, to, x->rank, x->dims, error);
  if (!y)
    return FALSE;
  if (from_code == to_code)
    return _owb_cuda_copy_device (ctx, cx, y->data, x->data, x->nbytes, error);
  return _owb_cuda_check (ctx, error, _owb_cuda_cast (from_code, to_code, x->data, y->data, x->nelems, cx->stream),
                          "Cast kernel");
}

char *
_owb_cuda_elementwise_check (const OwbNode *node, int opset, const OwbValueType *const *in,
                             const OwbValueType *out)
{
  if (node->domain && node->domain[0])
    return NULL;
  const char *op = node->op_type;
  const BinaryInfo *b = binary_info (op);
  if (b)
    {
      if ((strcmp (op, "Max") == 0 || strcmp (op, "Min") == 0) && node->n_inputs > 2)
        return g_strdup_printf ("the CUDA %s takes one or two inputs, not %d", op, node->n_inputs);
      if (node->n_inputs >= 2 && in[0] && in[1] && in[1]->dtype != OWB_TYPE_UNDEFINED && in[1]->dtype != in[0]->dtype)
        return g_strdup_printf ("the CUDA %s needs inputs of one type (%s and %s)", op,
                                owb_data_type_name (in[0]->dtype), owb_data_type_name (in[1]->dtype));
      if (out && out[0].rank > OWB_MAX_RANK)
        return g_strdup ("rank too high");
      return NULL;
    }
  if (strcmp (op, "Cast") == 0)
    {
      OwbDataType to = (OwbDataType) owb_node_get_int (node, "to", OWB_TYPE_UNDEFINED);
      OwbCudaCastType code;
      if (!cast_code (to, &code))
        return g_strdup_printf ("the CUDA Cast does not convert to %s", owb_data_type_name (to));
      return NULL;
    }
  if (strcmp (op, "Where") == 0 && in[0] && in[0]->dtype != OWB_TYPE_BOOL)
    return g_strdup ("the CUDA Where needs a bool condition");
  if (strcmp (op, "Clip") == 0 && opset >= 11)
    for (int i = 1; i <= 2 && i < node->n_inputs; i++)
      if (in[i] && in[i]->rank > 0 && in[i]->dims[0].value != 1)
        return g_strdup ("the CUDA Clip needs scalar bounds");
  return NULL;
}

#define FLOATS OWB_CUDA_TYPES_FLOAT
#define UNARY(name, since) { name, "", since, 0, FLOATS, 0, NULL, NULL, compute_unary }
#define BINARY(name, since) { name, "", since, 0, FLOATS, 0, NULL, NULL, compute_binary }

const OwbKernelDef _owb_cuda_kernels_elementwise[] = {
  UNARY ("Relu", 1), UNARY ("Sigmoid", 1), UNARY ("Tanh", 1), UNARY ("Exp", 1), UNARY ("Log", 1),
  UNARY ("Sqrt", 1), UNARY ("Reciprocal", 1), UNARY ("Abs", 1), UNARY ("Neg", 1), UNARY ("Erf", 9),
  UNARY ("Floor", 1), UNARY ("Ceil", 1), UNARY ("Round", 11), UNARY ("Sign", 9), UNARY ("Sin", 7),
  UNARY ("Cos", 7), UNARY ("Softplus", 1), UNARY ("Softsign", 1), UNARY ("Mish", 18), UNARY ("LeakyRelu", 1),
  UNARY ("Elu", 1), UNARY ("Selu", 1), UNARY ("Celu", 12), UNARY ("ThresholdedRelu", 10),
  UNARY ("HardSigmoid", 1), UNARY ("HardSwish", 14), UNARY ("Swish", 24),
  { "Gelu", "", 20, 0, FLOATS, 0, NULL, NULL, compute_gelu },
  { "Gelu", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, compute_gelu },
  { "BiasGelu", OWB_DOMAIN, 1, 0, FLOATS, 0, NULL, NULL, compute_bias_gelu },
  { "Clip", "", 1, 0, FLOATS, 0, NULL, NULL, compute_clip, NULL, (1 << 1) | (1 << 2), 0 },
  BINARY ("Add", 7), BINARY ("Sub", 7), BINARY ("Mul", 7), BINARY ("Div", 7), BINARY ("Pow", 7),
  BINARY ("Max", 8), BINARY ("Min", 8), BINARY ("PRelu", 7), BINARY ("Equal", 11), BINARY ("Less", 9),
  BINARY ("LessOrEqual", 12), BINARY ("Greater", 9), BINARY ("GreaterOrEqual", 12),
  { "Where", "", 9, 0, OWB_CUDA_TYPES_COPY, 1, NULL, NULL, compute_where },
  { "Cast", "", 6, 0, CAST_TYPES, 0, NULL, NULL, compute_cast },
  { NULL }
};
