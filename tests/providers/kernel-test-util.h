/* kernel-test-util.h: what the kernel tests of several op families share: value types written as
 * dim strings, one-node inference, and checks of inferred types and of output tensors. */
#pragma once

#include <owb/owb.h>
#include <string.h>

static inline OwbValueType
vt (OwbDataType dtype, int rank, const char *const *dims)
{
  OwbValueType t;
  owb_value_type_init_unknown (&t);
  t.kind = OWB_VALUE_TENSOR;
  t.dtype = dtype;
  t.rank = rank;
  for (int i = 0; i < rank; i++)
    {
      if (g_ascii_isdigit (dims[i][0]))
        t.dims[i] = OWB_DIM_VALUE (g_ascii_strtoll (dims[i], NULL, 10));
      else if (strcmp (dims[i], "?") == 0)
        t.dims[i] = OWB_DIM_UNKNOWN;
      else
        t.dims[i] = (OwbDim) { -1, g_intern_string (dims[i]) };
    }
  return t;
}

#define VT(dtype, ...) vt (dtype, G_N_ELEMENTS (((const char *[]) { __VA_ARGS__ })), (const char *[]) { __VA_ARGS__ })

/* A node named "the_node" with inputs x0.. and outputs y0... */
static inline OwbNode *
node_new_in_domain (const char *op, const char *domain, int n_in, int n_out)
{
  OwbNode *node = owb_node_new (op, domain, "the_node");
  for (int i = 0; i < n_in; i++)
    {
      g_autofree char *name = g_strdup_printf ("x%d", i);
      owb_node_add_input (node, name);
    }
  for (int i = 0; i < n_out; i++)
    {
      g_autofree char *name = g_strdup_printf ("y%d", i);
      owb_node_add_output (node, name);
    }
  return node;
}

static inline OwbNode *
node_new (const char *op, int n_in, int n_out)
{
  return node_new_in_domain (op, "", n_in, n_out);
}

/* Runs the schema's inference for `node` at `opset` on types[] (an input with an empty name is
 * absent) and, where values is not NULL, the known input values; out[] starts unknown. */
static inline gboolean
infer_node (OwbNode *node, int opset, const OwbValueType *types, OwbTensor *const *values, OwbValueType *out,
            GError **error)
{
  const OwbOpSchema *schema = owb_op_schema_lookup (node->domain, node->op_type, opset);
  const OwbValueType *in[9] = { 0 };
  const OwbTensor *vals[9] = { 0 };
  g_assert_nonnull (schema);
  g_assert_cmpint (node->n_inputs, <=, 9);
  for (int i = 0; i < node->n_inputs; i++)
    {
      in[i] = node->inputs[i][0] ? &types[i] : NULL;
      vals[i] = values ? values[i] : NULL;
    }
  for (int o = 0; o < node->n_outputs; o++)
    owb_value_type_init_unknown (&out[o]);
  node->opset = opset;
  OwbInferContext ctx = { .node = node, .opset = opset, .n_inputs = node->n_inputs, .inputs = in,
                          .input_values = vals, .n_outputs = node->n_outputs, .outputs = out };
  return owb_op_infer (schema, &ctx, error);
}

static inline void
assert_type (const OwbValueType *t, const char *expected)
{
  g_autofree char *s = owb_value_type_to_string (t);
  g_assert_cmpstr (s, ==, expected);
}

static inline void
assert_ints (const OwbTensor *t, int n, const int64_t *expected)
{
  g_assert_cmpint (t->nelems, ==, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpint (owb_tensor_get_int64 (t, i), ==, expected[i]);
}

static inline void
clear_outputs (OwbTensor **out, int n)
{
  for (int i = 0; i < n; i++)
    g_clear_pointer (&out[i], owb_tensor_unref);
}

static inline OwbTensor *
tensor (OwbDataType dtype, int rank, const int64_t *dims, const double *values)
{
  OwbTensor *t = owb_tensor_new (dtype, rank, dims, NULL);
  g_assert_nonnull (t);
  for (int64_t i = 0; values && i < t->nelems; i++)
    owb_tensor_set_double (t, i, values[i]);
  return t;
}

static inline void
assert_shape (const OwbTensor *t, int rank, const int64_t *dims)
{
  g_assert_cmpint (t->rank, ==, rank);
  for (int i = 0; i < rank; i++)
    g_assert_cmpint (t->dims[i], ==, dims[i]);
}

static inline void
assert_dims (const OwbValueType *t, OwbDataType dtype, int rank, const int64_t *dims)
{
  g_assert_cmpint (t->dtype, ==, dtype);
  g_assert_cmpint (t->rank, ==, rank);
  for (int i = 0; i < rank; i++)
    {
      if (dims[i] >= 0)
        g_assert_cmpint (t->dims[i].value, ==, dims[i]);
      else if (dims[i] == -2)
        g_assert_true (t->dims[i].param == g_intern_string ("batch"));
      else
        g_assert_true (!owb_dim_is_known (t->dims[i]) && t->dims[i].param == NULL);
    }
}
