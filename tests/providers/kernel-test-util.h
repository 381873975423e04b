/* kernel-test-util.h: what the kernel tests of several op families share: value types written as
 * dim strings, and checks of inferred types and of output tensors. */
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
