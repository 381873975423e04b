/* test-kernels-reduce.c: inference and CPU kernels of Reduce*, ArgMax/ArgMin, TopK, Einsum, Resize
 * and Upsample, on what the ONNX conformance cases leave out: symbolic dims, bad attributes and
 * inputs, runtime-only axes, integer types, ties and NaN, numerical stability, many threads. */
#include <owb/owb.h>

#include <math.h>
#include <string.h>
#include "../engine/test-util.h"
#include "kernel-test-util.h"

/* ---- building nodes and running inference ---- */

#define DIMS(...) ((const char *const[]) { __VA_ARGS__ })

static void
set_missing (OwbNode *node, int i)
{
  g_free (node->inputs[i]);
  node->inputs[i] = g_strdup ("");
}

/* ---- inference tests ---- */

static void
test_infer_reduce (void)
{
  OwbValueType types[2] = { vt (OWB_TYPE_FLOAT, 3, DIMS ("batch", "3", "4")), vt (OWB_TYPE_INT64, 1, DIMS ("2")) };
  g_autoptr (OwbTensor) axes = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 1, -1 });
  OwbTensor *values[2] = { NULL, axes };
  OwbValueType out[2];

  {
    g_autoptr (OwbNode) node = node_new ("ReduceSum", 2, 1);
    assert_infers (node, 13, types, values, "float32[batch,1,1]");
    tu_set_int (node, "keepdims", 0);
    assert_infers (node, 13, types, values, "float32[batch]");
    /* Axes known only at run time: the rank follows from how many there are. */
    g_assert_true (infer_node (node, 13, types, NULL, out, NULL));
    g_assert_cmpint (out[0].rank, ==, 1);
    g_assert_false (owb_dim_is_known (out[0].dims[0]));
  }
  {
    g_autoptr (OwbNode) node = node_new ("ReduceMax", 2, 1);
    g_assert_true (infer_node (node, 18, types, NULL, out, NULL));
    g_assert_cmpint (out[0].rank, ==, 3);
    /* No axes reduces everything; empty axes with noop_with_empty_axes reduces nothing. */
    g_autoptr (OwbTensor) none = tu_vector (OWB_TYPE_INT64, 0, NULL);
    OwbTensor *v2[2] = { NULL, none };
    types[1] = vt (OWB_TYPE_INT64, 1, DIMS ("0"));
    assert_infers (node, 18, types, v2, "float32[1,1,1]");
    tu_set_int (node, "noop_with_empty_axes", 1);
    assert_infers (node, 18, types, v2, "float32[batch,3,4]");
    types[1] = vt (OWB_TYPE_INT64, 1, DIMS ("2"));
  }
  {
    /* Before opset 18 the axes of ReduceMean are an attribute. */
    g_autoptr (OwbNode) node = node_new ("ReduceMean", 1, 1);
    tu_set_ints (node, "axes", 1, (int64_t[]) { 0 });
    tu_set_int (node, "keepdims", 0);
    assert_infers (node, 11, types, NULL, "float32[3,4]");
    tu_set_ints (node, "axes", 2, (int64_t[]) { 1, -2 });
    assert_infer_fails (node, 11, types, NULL, "repeated");
  }
  {
    g_autoptr (OwbNode) node = node_new ("ReduceL2", 2, 1);
    g_autoptr (OwbTensor) bad = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 0, 3 });
    OwbTensor *v2[2] = { NULL, bad };
    assert_infer_fails (node, 18, types, v2, "out of range");
    bad->dims[0] = 1;
    bad->nelems = 1;
    ((int64_t *) bad->data)[0] = -4;
    assert_infer_fails (node, 18, types, v2, "out of range");
  }
  {
    g_autoptr (OwbNode) node = node_new ("ReduceSum", 1, 1);
    OwbValueType b = vt (OWB_TYPE_BOOL, 1, DIMS ("3"));
    assert_infer_fails (node, 11, &b, NULL, "bool");
  }
  {
    /* From opset 18 an axes attribute means nothing: everything is reduced. */
    g_autoptr (OwbNode) node = node_new ("ReduceMin", 1, 1);
    OwbValueType b = vt (OWB_TYPE_BOOL, 2, DIMS ("n", "3"));
    tu_set_ints (node, "axes", 1, (int64_t[]) { 1 });
    assert_infers (node, 20, &b, NULL, "bool[1,1]");
    assert_infers (node, 13, &b, NULL, "bool[n,1]");
  }
}

static void
test_infer_arg_topk (void)
{
  OwbValueType types[2] = { vt (OWB_TYPE_FLOAT, 2, DIMS ("batch", "10")), vt (OWB_TYPE_INT64, 1, DIMS ("1")) };
  OwbValueType out[2];
  {
    g_autoptr (OwbNode) node = node_new ("ArgMax", 1, 1);
    tu_set_int (node, "axis", -1);
    tu_set_int (node, "keepdims", 0);
    assert_infers (node, 13, types, NULL, "int64[batch]");
    tu_set_int (node, "axis", 2);
    assert_infer_fails (node, 13, types, NULL, NULL);
  }
  {
    g_autoptr (OwbNode) node = node_new ("ArgMin", 1, 1);
    assert_infers (node, 1, types, NULL, "int64[1,10]");
  }
  {
    g_autoptr (OwbNode) node = node_new ("TopK", 2, 2);
    g_autoptr (OwbTensor) k = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 3 });
    OwbTensor *values[2] = { NULL, k };
    g_assert_true (infer_node (node, 11, types, values, out, NULL));
    assert_type (&out[0], "float32[batch,3]");
    assert_type (&out[1], "int64[batch,3]");
    /* k only known at run time. */
    g_assert_true (infer_node (node, 11, types, NULL, out, NULL));
    g_assert_cmpint (out[0].rank, ==, 2);
    g_assert_true (out[0].dims[0].param == g_intern_string ("batch"));
    g_assert_false (owb_dim_is_known (out[0].dims[1]));
    ((int64_t *) k->data)[0] = 11;
    assert_infer_fails (node, 11, types, values, "larger");
    ((int64_t *) k->data)[0] = -1;
    assert_infer_fails (node, 11, types, values, "negative");
  }
  {
    /* TopK-1 takes k as an attribute, which is required. */
    g_autoptr (OwbNode) node = node_new ("TopK", 1, 2);
    assert_infer_fails (node, 1, types, NULL, "'k'");
    tu_set_int (node, "k", 2);
    tu_set_int (node, "axis", 0);
    g_assert_true (infer_node (node, 1, types, NULL, out, NULL));
    assert_type (&out[0], "float32[2,10]");
  }
}

static void
test_infer_einsum (void)
{
  OwbValueType types[3] = { vt (OWB_TYPE_FLOAT, 3, DIMS ("batch", "2", "3")), vt (OWB_TYPE_FLOAT, 3, DIMS ("batch", "3", "4")),
                            vt (OWB_TYPE_FLOAT, 2, DIMS ("4", "5")) };
  {
    g_autoptr (OwbNode) node = node_new ("Einsum", 2, 1);
    tu_set_string (node, "equation", "bij, bjk -> bik");
    assert_infers (node, 12, types, NULL, "float32[batch,2,4]");
  }
  {
    /* Implicit output: '...' first, then the letters seen once, in ASCII order. */
    g_autoptr (OwbNode) node = node_new ("Einsum", 2, 1);
    OwbValueType t[2] = { vt (OWB_TYPE_FLOAT, 3, DIMS ("n", "2", "3")), vt (OWB_TYPE_FLOAT, 2, DIMS ("3", "7")) };
    tu_set_string (node, "equation", "...ij,jk");
    assert_infers (node, 12, t, NULL, "float32[n,2,7]");
    /* A size-1 '...' dim broadcasts against a named one. */
    g_autoptr (OwbNode) node2 = node_new ("Einsum", 2, 1);
    OwbValueType u[2] = { vt (OWB_TYPE_FLOAT, 3, DIMS ("1", "2", "3")), vt (OWB_TYPE_FLOAT, 3, DIMS ("b", "3", "4")) };
    tu_set_string (node2, "equation", "...ij,...jk->...ik");
    assert_infers (node2, 12, u, NULL, "float32[b,2,4]");
    /* Trace and diagonal. */
    g_autoptr (OwbNode) node3 = node_new ("Einsum", 1, 1);
    OwbValueType sq = vt (OWB_TYPE_DOUBLE, 2, DIMS ("5", "5"));
    tu_set_string (node3, "equation", "ii");
    assert_infers (node3, 12, &sq, NULL, "float64[]");
    g_autoptr (OwbNode) node4 = node_new ("Einsum", 1, 1);
    tu_set_string (node4, "equation", "Ba->aB");
    assert_infers (node4, 12, &types[2], NULL, "float32[5,4]");
  }
  {
    g_autoptr (OwbNode) node = node_new ("Einsum", 3, 1);
    tu_set_string (node, "equation", "bij,bjk,kl->bil");
    assert_infers (node, 12, types, NULL, "float32[batch,2,5]");
    tu_set_string (node, "equation", "bij,bjk->bik");
    assert_infer_fails (node, 12, types, NULL, "terms");
  }
  {
    static const char *const bad[] = { "bij,bjk->bix", "bij,bjk->bii", "bi$,bjk", "bij,bjkl->bik", "b.ij,bjk->bik",
                                       "bij,bjk,->bik" };
    for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
      {
        g_autoptr (OwbNode) node = node_new ("Einsum", 2, 1);
        tu_set_string (node, "equation", bad[i]);
        assert_infer_fails (node, 12, types, NULL, "equation");
      }
    g_autoptr (OwbNode) node = node_new ("Einsum", 2, 1);
    tu_set_string (node, "equation", "bij,bkj->bik"); /* j is 3 in one and 4 in the other */
    assert_infer_fails (node, 12, types, NULL, "agree");
    g_autoptr (OwbNode) missing = node_new ("Einsum", 2, 1);
    assert_infer_fails (missing, 12, types, NULL, "equation");
    g_autoptr (OwbNode) mixed = node_new ("Einsum", 2, 1);
    OwbValueType m[2] = { types[0], vt (OWB_TYPE_INT32, 3, DIMS ("batch", "3", "4")) };
    tu_set_string (mixed, "equation", "bij,bjk->bik");
    assert_infer_fails (mixed, 12, m, NULL, "int32");
  }
}

static void
test_infer_resize (void)
{
  OwbValueType types[4] = { vt (OWB_TYPE_FLOAT, 4, DIMS ("batch", "3", "8", "10")), vt (OWB_TYPE_FLOAT, 1, DIMS ("0")),
                            vt (OWB_TYPE_FLOAT, 1, DIMS ("4")), vt (OWB_TYPE_INT64, 1, DIMS ("4")) };
  g_autoptr (OwbTensor) scales = tu_vector (OWB_TYPE_FLOAT, 4, (float[]) { 1, 1, 2, 0.5f });
  g_autoptr (OwbTensor) sizes = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 5, 7 });
  OwbValueType out[2];
  {
    g_autoptr (OwbNode) node = node_new ("Resize", 3, 1);
    OwbTensor *values[3] = { NULL, NULL, scales };
    set_missing (node, 1);
    assert_infers (node, 13, types, values, "float32[batch,3,16,5]");
    /* Scales unknown at load: rank only. */
    g_assert_true (infer_node (node, 13, types, NULL, out, NULL));
    g_assert_cmpint (out[0].rank, ==, 4);
    g_assert_false (owb_dim_is_known (out[0].dims[2]));
    tu_set_string (node, "mode", "bicubic");
    assert_infer_fails (node, 13, types, values, "bicubic");
  }
  {
    /* sizes with axes: the other dims (named ones too) pass through. */
    g_autoptr (OwbNode) node = node_new ("Resize", 4, 1);
    OwbValueType t[4] = { types[0], types[1], types[2], vt (OWB_TYPE_INT64, 1, DIMS ("2")) };
    OwbTensor *values[4] = { NULL, NULL, NULL, sizes };
    set_missing (node, 1);
    set_missing (node, 2);
    tu_set_ints (node, "axes", 2, (int64_t[]) { 2, -1 });
    assert_infers (node, 18, t, values, "float32[batch,3,5,7]");
    g_assert_true (infer_node (node, 18, t, NULL, out, NULL));
    assert_type (&out[0], "float32[batch,3,?,?]");
    /* not_larger keeps the aspect ratio: min (5/8, 7/10) = 0.625 -> 5 x round(6.25) = 6. */
    tu_set_string (node, "keep_aspect_ratio_policy", "not_larger");
    assert_infers (node, 18, t, values, "float32[batch,3,5,6]");
    tu_set_string (node, "keep_aspect_ratio_policy", "not_smaller");
    assert_infers (node, 18, t, values, "float32[batch,3,6,7]");
    tu_set_string (node, "keep_aspect_ratio_policy", "fit");
    assert_infer_fails (node, 18, t, values, "fit");
  }
  {
    g_autoptr (OwbNode) node = node_new ("Resize", 4, 1);
    g_autoptr (OwbTensor) four = tu_vector (OWB_TYPE_INT64, 4, (int64_t[]) { 1, 3, 4, 4 });
    OwbTensor *both[4] = { NULL, NULL, scales, four };
    set_missing (node, 1);
    assert_infer_fails (node, 13, types, both, "only one");
    g_autoptr (OwbTensor) three = tu_vector (OWB_TYPE_FLOAT, 3, (float[]) { 1, 2, 2 });
    OwbTensor *short_scales[4] = { NULL, NULL, three, NULL };
    set_missing (node, 3);
    assert_infer_fails (node, 13, types, short_scales, "scales");
    g_autoptr (OwbTensor) negative = tu_vector (OWB_TYPE_FLOAT, 4, (float[]) { 1, 1, -2, 2 });
    OwbTensor *neg[4] = { NULL, NULL, negative, NULL };
    assert_infer_fails (node, 13, types, neg, "positive");
    g_autoptr (OwbTensor) huge = tu_vector (OWB_TYPE_FLOAT, 4, (float[]) { 1, 1, 1e30f, 1 });
    OwbTensor *big[4] = { NULL, NULL, huge, NULL };
    assert_infer_fails (node, 13, types, big, "absurd");
    tu_set_string (node, "coordinate_transformation_mode", "corners");
    assert_infer_fails (node, 13, types, NULL, "corners");
  }
  {
    /* Upsample-7 takes scales as an attribute; Resize-10 as input 1. */
    g_autoptr (OwbNode) up = node_new ("Upsample", 1, 1);
    assert_infer_fails (up, 7, types, NULL, "scales");
    tu_set_floats (up, "scales", 4, (float[]) { 1, 1, 2, 3 });
    assert_infers (up, 7, types, NULL, "float32[batch,3,16,30]");
    g_autoptr (OwbNode) r10 = node_new ("Resize", 2, 1);
    OwbTensor *values[2] = { NULL, scales };
    OwbValueType t[2] = { types[0], types[2] };
    assert_infers (r10, 10, t, values, "float32[batch,3,16,5]");
    tu_set_string (r10, "mode", "cubic");
    assert_infer_fails (r10, 10, t, values, "cubic");
  }
}

/* ---- kernels, through a session ---- */

typedef OneNodeInput In;

static void
assert_floats (const OwbTensor *t, int n, const float *expected, double tol)
{
  g_assert_cmpint (t->dtype, ==, OWB_TYPE_FLOAT);
  g_assert_cmpint (t->nelems, ==, n);
  for (int i = 0; i < n; i++)
    if (isnan (expected[i]))
      g_assert_true (isnan (((float *) t->data)[i]));
    else
      g_assert_cmpfloat_with_epsilon (((float *) t->data)[i], expected[i], tol);
}

static void
assert_ints64 (const OwbTensor *t, int n, const int64_t *expected)
{
  g_assert_cmpint (t->dtype, ==, OWB_TYPE_INT64);
  g_assert_cmpint (t->nelems, ==, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpint (((int64_t *) t->data)[i], ==, expected[i]);
}

static void
test_kernel_reduce (void)
{
  {
    /* Axes fed at run time: the output shape is only decided then. */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { 2, 3, 2 },
                                          (float[]) { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 });
    g_autoptr (OwbTensor) axes = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 0, -1 });
    OwbNode *node = node_new ("ReduceSum", 2, 1);
    OwbTensor *y = NULL;
    tu_set_int (node, "keepdims", 0);
    g_assert_true (one_node_run (node, 13, (In[]) { { x, TRUE }, { axes, TRUE } }, 1, &y, NULL));
    g_assert_cmpint (y->rank, ==, 1);
    assert_floats (y, 3, (float[]) { 1 + 2 + 7 + 8, 3 + 4 + 9 + 10, 5 + 6 + 11 + 12 }, 1e-5);
    owb_tensor_unref (y);
  }
  {
    /* LogSumExp stays finite where exp overflows float. */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 2 }, (float[]) { 1000, 1000, -1000, -999 });
    g_autoptr (OwbTensor) axes = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 1 });
    OwbNode *node = node_new ("ReduceLogSumExp", 2, 1);
    OwbTensor *y = NULL;
    g_assert_true (one_node_run (node, 18, (In[]) { { x, FALSE }, { axes, FALSE } }, 1, &y, NULL));
    assert_floats (y, 2, (float[]) { 1000 + logf (2), -999 + logf (1 + expf (-1)) }, 1e-3);
    owb_tensor_unref (y);
  }
  {
    /* The empty AND is true, the empty OR false. */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_BOOL, 2, (int64_t[]) { 3, 0 }, NULL);
    g_autoptr (OwbTensor) axes = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 1 });
    for (int m = 0; m < 2; m++)
      {
        OwbNode *node = node_new (m ? "ReduceMax" : "ReduceMin", 2, 1);
        OwbTensor *y = NULL;
        g_assert_true (one_node_run (node, 20, (In[]) { { x, FALSE }, { axes, FALSE } }, 1, &y, NULL));
        g_assert_cmpint (y->nelems, ==, 3);
        for (int i = 0; i < 3; i++)
          g_assert_cmpint (((uint8_t *) y->data)[i], ==, m ? 0 : 1);
        owb_tensor_unref (y);
      }
  }
  {
    /* Integer mean divides as integers; integer sums wrap in the element type. */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_INT32, 2, (int64_t[]) { 2, 3 }, (int32_t[]) { 1, 2, 4, 2147483647, 1, 0 });
    const char *ops[] = { "ReduceMean", "ReduceSum", "ReduceMax", "ReduceL1" };
    int32_t expected[][2] = { { 2, 715827882 }, { 7, -2147483648 }, { 4, 2147483647 }, { 7, -2147483648 } };
    for (int k = 0; k < 4; k++)
      {
        OwbNode *node = node_new (ops[k], 1, 1);
        OwbTensor *y = NULL;
        tu_set_ints (node, "axes", 1, (int64_t[]) { 1 });
        tu_set_int (node, "keepdims", 0);
        g_assert_true (one_node_run (node, 11, (In[]) { { x, FALSE } }, 1, &y, NULL));
        g_assert_cmpint (y->dtype, ==, OWB_TYPE_INT32);
        g_assert_cmpint (((int32_t *) y->data)[0], ==, expected[k][0]);
        g_assert_cmpint (((int32_t *) y->data)[1], ==, expected[k][1]);
        owb_tensor_unref (y);
      }
  }
  {
    /* Bad runtime axes are an error, not a crash. */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 2 }, NULL);
    g_autoptr (OwbTensor) axes = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 5 });
    g_autoptr (GError) error = NULL;
    OwbNode *node = node_new ("ReduceProd", 2, 1);
    OwbTensor *y = NULL;
    g_assert_false (one_node_run (node, 18, (In[]) { { x, FALSE }, { axes, TRUE } }, 1, &y, &error));
    g_assert_nonnull (error);
    g_assert_null (y);
  }
}

/* Big reductions over every layout, split over threads, against a double-precision sum. */
static void
test_kernel_reduce_threads (void)
{
  const int64_t dims[3] = { 37, 129, 211 };
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 3, dims, NULL);
  float *xv = x->data;
  for (int64_t i = 0; i < x->nelems; i++)
    xv[i] = (float) ((i * 7919) % 1000) / 1000.0f - 0.5f;

  for (int mask = 1; mask < 8; mask++)
    {
      int64_t axes[3];
      int n_axes = 0;
      for (int d = 0; d < 3; d++)
        if (mask & (1 << d))
          axes[n_axes++] = d;
      g_autoptr (OwbTensor) axes_t = tu_vector (OWB_TYPE_INT64, n_axes, axes);
      OwbNode *node = node_new ("ReduceMean", 2, 1);
      OwbTensor *y = NULL;
      g_assert_true (one_node_run_threads (node, 18, (In[]) { { x, FALSE }, { axes_t, FALSE } }, 1, &y, 4, NULL));
      /* Check every output against a straightforward double sum. */
      int64_t out_dims[3], count = 1;
      for (int d = 0; d < 3; d++)
        {
          out_dims[d] = (mask & (1 << d)) ? 1 : dims[d];
          if (mask & (1 << d))
            count *= dims[d];
        }
      g_assert_cmpint (y->nelems, ==, out_dims[0] * out_dims[1] * out_dims[2]);
      double *sums = g_new0 (double, y->nelems);
      for (int64_t a = 0; a < dims[0]; a++)
        for (int64_t b = 0; b < dims[1]; b++)
          for (int64_t c = 0; c < dims[2]; c++)
            {
              int64_t o = ((out_dims[0] == 1 ? 0 : a) * out_dims[1] + (out_dims[1] == 1 ? 0 : b)) * out_dims[2] +
                          (out_dims[2] == 1 ? 0 : c);
              sums[o] += xv[(a * dims[1] + b) * dims[2] + c];
            }
      for (int64_t o = 0; o < y->nelems; o++)
        g_assert_cmpfloat_with_epsilon (((float *) y->data)[o], sums[o] / count, 1e-4);
      g_free (sums);
      owb_tensor_unref (y);
    }
}

static void
test_kernel_arg_topk (void)
{
  const float nan = NAN;
  {
    /* Ties: the first index, or the last with select_last_index. */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 4 }, (float[]) { 3, 1, 3, 0, 2, 2, 2, 2 });
    for (int last = 0; last < 2; last++)
      {
        OwbNode *node = node_new ("ArgMax", 1, 1);
        OwbTensor *y = NULL;
        tu_set_int (node, "axis", 1);
        tu_set_int (node, "select_last_index", last);
        g_assert_true (one_node_run (node, 12, (In[]) { { x, FALSE } }, 1, &y, NULL));
        assert_ints64 (y, 2, last ? (int64_t[]) { 2, 3 } : (int64_t[]) { 0, 0 });
        owb_tensor_unref (y);
      }
    OwbNode *node = node_new ("ArgMin", 1, 1);
    OwbTensor *y = NULL;
    tu_set_int (node, "keepdims", 0);
    g_assert_true (one_node_run (node, 13, (In[]) { { x, FALSE } }, 1, &y, NULL));
    assert_ints64 (y, 4, (int64_t[]) { 1, 0, 1, 0 });
    owb_tensor_unref (y);
  }
  {
    /* TopK: NaN counts as the largest; ties go to the lower index; k = 0 is empty. */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 6 }, (float[]) { 1, nan, 5, 5, -2, 1 });
    g_autoptr (OwbTensor) k3 = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 3 });
    OwbTensor *y[2] = { NULL, NULL };
    OwbNode *node = node_new ("TopK", 2, 2);
    g_assert_true (one_node_run (node, 11, (In[]) { { x, FALSE }, { k3, FALSE } }, 2, y, NULL));
    assert_floats (y[0], 3, (float[]) { nan, 5, 5 }, 1e-6);
    assert_ints64 (y[1], 3, (int64_t[]) { 1, 2, 3 });
    owb_tensor_unref (y[0]);
    owb_tensor_unref (y[1]);

    node = node_new ("TopK", 2, 2);
    tu_set_int (node, "largest", 0);
    g_assert_true (one_node_run (node, 11, (In[]) { { x, FALSE }, { k3, TRUE } }, 2, y, NULL));
    assert_floats (y[0], 3, (float[]) { -2, 1, 1 }, 1e-6);
    assert_ints64 (y[1], 3, (int64_t[]) { 4, 0, 5 });
    owb_tensor_unref (y[0]);
    owb_tensor_unref (y[1]);

    g_autoptr (OwbTensor) k0 = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 0 });
    node = node_new ("TopK", 2, 2);
    g_assert_true (one_node_run (node, 11, (In[]) { { x, FALSE }, { k0, TRUE } }, 2, y, NULL));
    g_assert_cmpint (y[0]->nelems, ==, 0);
    owb_tensor_unref (y[0]);
    owb_tensor_unref (y[1]);

    /* k beyond the axis, fed at run time: an error. */
    g_autoptr (OwbTensor) k7 = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 7 });
    g_autoptr (GError) error = NULL;
    node = node_new ("TopK", 2, 2);
    g_assert_false (one_node_run (node, 11, (In[]) { { x, FALSE }, { k7, TRUE } }, 2, y, &error));
    g_assert_nonnull (error);
  }
  {
    /* A strided axis with a large k against sorting by hand. */
    const int n = 300, inner = 3;
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_INT32, 2, (int64_t[]) { n, inner }, NULL);
    int32_t *xv = x->data;
    for (int i = 0; i < n * inner; i++)
      xv[i] = (i * 37) % 101;
    g_autoptr (OwbTensor) k = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 250 });
    OwbTensor *y[2] = { NULL, NULL };
    OwbNode *node = node_new ("TopK", 2, 2);
    tu_set_int (node, "axis", 0);
    g_assert_true (one_node_run (node, 11, (In[]) { { x, FALSE }, { k, FALSE } }, 2, y, NULL));
    for (int j = 0; j < inner; j++)
      for (int e = 1; e < 250; e++)
        {
          int32_t a = ((int32_t *) y[0]->data)[(e - 1) * inner + j], b = ((int32_t *) y[0]->data)[e * inner + j];
          int64_t ia = ((int64_t *) y[1]->data)[(e - 1) * inner + j], ib = ((int64_t *) y[1]->data)[e * inner + j];
          g_assert_true (a > b || (a == b && ia < ib));
          g_assert_cmpint (xv[ib * inner + j], ==, b);
        }
    owb_tensor_unref (y[0]);
    owb_tensor_unref (y[1]);
  }
}

static void
test_kernel_einsum (void)
{
  {
    g_autoptr (OwbTensor) a = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 3 }, (float[]) { 1, 2, 3, 4, 5, 6 });
    g_autoptr (OwbTensor) b = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 3, 2 }, (float[]) { 1, 0, 0, 1, 1, 1 });
    g_autoptr (OwbTensor) c = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 1 }, (float[]) { 2, -1 });
    OwbTensor *y = NULL;
    OwbNode *node = node_new ("Einsum", 3, 1);
    tu_set_string (node, "equation", "ij,jk,kl->li");
    g_assert_true (one_node_run (node, 12, (In[]) { { a, TRUE }, { b, TRUE }, { c, TRUE } }, 1, &y, NULL));
    /* A.B = [[4,5],[10,11]]; (A.B).C = [[3],[9]]; transposed. */
    g_assert_cmpint (y->rank, ==, 2);
    g_assert_cmpint (y->dims[0], ==, 1);
    assert_floats (y, 2, (float[]) { 3, 9 }, 1e-5);
    owb_tensor_unref (y);
  }
  {
    /* Integer batch matmul with the second operand transposed, a broadcast batch and a diagonal. */
    g_autoptr (OwbTensor) a = tu_new_tensor (OWB_TYPE_INT64, 3, (int64_t[]) { 1, 2, 2 }, (int64_t[]) { 1, 2, 3, 4 });
    g_autoptr (OwbTensor) b = tu_new_tensor (OWB_TYPE_INT64, 3, (int64_t[]) { 2, 2, 2 }, (int64_t[]) { 1, 0, 0, 1, 0, 1, 1, 0 });
    OwbTensor *y = NULL;
    OwbNode *node = node_new ("Einsum", 2, 1);
    tu_set_string (node, "equation", "...ij,...kj->...ik");
    g_assert_true (one_node_run (node, 12, (In[]) { { a, FALSE }, { b, FALSE } }, 1, &y, NULL));
    g_assert_cmpint (y->nelems, ==, 8);
    const int64_t expected[] = { 1, 2, 3, 4, 2, 1, 4, 3 };
    for (int i = 0; i < 8; i++)
      g_assert_cmpint (((int64_t *) y->data)[i], ==, expected[i]);
    owb_tensor_unref (y);

    node = node_new ("Einsum", 1, 1);
    tu_set_string (node, "equation", "bii->b");
    g_assert_true (one_node_run (node, 12, (In[]) { { b, FALSE } }, 1, &y, NULL));
    g_assert_cmpint (((int64_t *) y->data)[0], ==, 2);
    g_assert_cmpint (((int64_t *) y->data)[1], ==, 0);
    owb_tensor_unref (y);
  }
  {
    /* A larger attention-like contraction through GEMM, against a direct loop. */
    const int B = 3, Q = 17, K = 19, D = 23;
    g_autoptr (OwbTensor) q = tu_new_tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { B, Q, D }, NULL);
    g_autoptr (OwbTensor) k = tu_new_tensor (OWB_TYPE_FLOAT, 3, (int64_t[]) { B, K, D }, NULL);
    for (int i = 0; i < B * Q * D; i++)
      ((float *) q->data)[i] = (float) ((i * 13) % 7) - 3;
    for (int i = 0; i < B * K * D; i++)
      ((float *) k->data)[i] = (float) ((i * 5) % 11) - 5;
    OwbTensor *y = NULL;
    OwbNode *node = node_new ("Einsum", 2, 1);
    tu_set_string (node, "equation", "bqd,bkd->bkq");
    g_assert_true (one_node_run (node, 12, (In[]) { { q, FALSE }, { k, FALSE } }, 1, &y, NULL));
    for (int b = 0; b < B; b++)
      for (int kk = 0; kk < K; kk++)
        for (int qq = 0; qq < Q; qq++)
          {
            float s = 0;
            for (int d = 0; d < D; d++)
              s += ((float *) q->data)[(b * Q + qq) * D + d] * ((float *) k->data)[(b * K + kk) * D + d];
            g_assert_cmpfloat_with_epsilon (((float *) y->data)[(b * K + kk) * Q + qq], s, 1e-3);
          }
    owb_tensor_unref (y);
  }
  {
    /* Mismatched sizes fed at run time are an error. */
    g_autoptr (OwbTensor) a = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 }, NULL);
    g_autoptr (OwbTensor) b = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 }, NULL);
    g_autoptr (GError) error = NULL;
    OwbTensor *y = NULL;
    OwbNode *node = node_new ("Einsum", 2, 1);
    tu_set_string (node, "equation", "i,i->");
    g_assert_false (one_node_run (node, 12, (In[]) { { a, TRUE }, { b, TRUE } }, 1, &y, &error));
    g_assert_nonnull (error);
  }
}

static void
test_kernel_resize (void)
{
  {
    /* Upsample-7 nearest repeats; Resize-10 shrinking samples with ceil (as ONNX Runtime does). */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 2 }, (float[]) { 1, 2, 3, 4 });
    OwbTensor *y = NULL;
    OwbNode *node = node_new ("Upsample", 1, 1);
    tu_set_floats (node, "scales", 2, (float[]) { 1, 2 });
    g_assert_true (one_node_run (node, 7, (In[]) { { x, FALSE } }, 1, &y, NULL));
    assert_floats (y, 8, (float[]) { 1, 1, 2, 2, 3, 3, 4, 4 }, 1e-6);
    owb_tensor_unref (y);

    g_autoptr (OwbTensor) row = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 6 }, (float[]) { 0, 1, 2, 3, 4, 5 });
    g_autoptr (OwbTensor) s = tu_vector (OWB_TYPE_FLOAT, 1, (float[]) { 0.7f });
    node = node_new ("Resize", 2, 1);
    g_assert_true (one_node_run (node, 10, (In[]) { { row, FALSE }, { s, FALSE } }, 1, &y, NULL));
    assert_floats (y, 4, (float[]) { 0, 2, 3, 5 }, 1e-6);
    owb_tensor_unref (y);
  }
  {
    /* uint8 cubic overshoots are saturated; linear results round half to even. */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_UINT8, 1, (int64_t[]) { 4 }, (uint8_t[]) { 0, 255, 255, 0 });
    g_autoptr (OwbTensor) s = tu_vector (OWB_TYPE_FLOAT, 1, (float[]) { 2 });
    OwbTensor *y = NULL;
    OwbNode *node = node_new ("Resize", 3, 1);
    set_missing (node, 1);
    tu_set_string (node, "mode", "cubic");
    g_assert_true (one_node_run (node, 13, (In[]) { { x, FALSE }, { NULL, FALSE }, { s, FALSE } }, 1, &y, NULL));
    g_assert_cmpint (y->nelems, ==, 8);
    g_assert_cmpint (((uint8_t *) y->data)[3], ==, 255);
    g_assert_cmpint (((uint8_t *) y->data)[4], ==, 255);
    g_assert_cmpint (((uint8_t *) y->data)[0], ==, 0);
    owb_tensor_unref (y);

    g_autoptr (OwbTensor) x2 = tu_new_tensor (OWB_TYPE_UINT8, 1, (int64_t[]) { 2 }, (uint8_t[]) { 0, 5 });
    node = node_new ("Resize", 3, 1);
    set_missing (node, 1);
    tu_set_string (node, "mode", "linear");
    tu_set_string (node, "coordinate_transformation_mode", "align_corners");
    g_autoptr (OwbTensor) s3 = tu_vector (OWB_TYPE_FLOAT, 1, (float[]) { 1.5f });
    g_assert_true (one_node_run (node, 13, (In[]) { { x2, FALSE }, { NULL, FALSE }, { s3, FALSE } }, 1, &y, NULL));
    /* 3 outputs over [0, 5]: 0, 2.5 -> 2 (half to even), 5. */
    g_assert_cmpint (y->nelems, ==, 3);
    g_assert_cmpint (((uint8_t *) y->data)[1], ==, 2);
    owb_tensor_unref (y);
  }
  {
    /* tf_crop_and_resize outside the input takes the extrapolation value; a bad roi is an error. */
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 }, (float[]) { 10, 20, 30 });
    g_autoptr (OwbTensor) roi = tu_vector (OWB_TYPE_FLOAT, 2, (float[]) { -0.5f, 1.0f });
    g_autoptr (OwbTensor) sizes = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 4 });
    OwbTensor *y = NULL;
    OwbNode *node = node_new ("Resize", 4, 1);
    set_missing (node, 2);
    tu_set_string (node, "mode", "linear");
    tu_set_string (node, "coordinate_transformation_mode", "tf_crop_and_resize");
    tu_set_float (node, "extrapolation_value", -1);
    g_assert_true (one_node_run (node, 13, (In[]) { { x, FALSE }, { roi, TRUE }, { NULL, FALSE }, { sizes, FALSE } }, 1, &y,
                             NULL));
    /* x_original = -1 + y: -1 (outside), 0, 1, 2. */
    assert_floats (y, 4, (float[]) { -1, 10, 20, 30 }, 1e-5);
    owb_tensor_unref (y);

    g_autoptr (OwbTensor) bad_roi = tu_vector (OWB_TYPE_FLOAT, 3, (float[]) { 0, 1, 1 });
    g_autoptr (GError) error = NULL;
    node = node_new ("Resize", 4, 1);
    set_missing (node, 2);
    tu_set_string (node, "coordinate_transformation_mode", "tf_crop_and_resize");
    g_assert_false (one_node_run (node, 13, (In[]) { { x, FALSE }, { bad_roi, TRUE }, { NULL, FALSE }, { sizes, FALSE } }, 1,
                              &y, &error));
    g_assert_nonnull (error);
  }
  {
    /* Bilinear upscaling of a big image split over threads equals the single-threaded result. */
    const int64_t dims[4] = { 2, 3, 33, 47 };
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 4, dims, NULL);
    for (int64_t i = 0; i < x->nelems; i++)
      ((float *) x->data)[i] = (float) ((i * 31) % 97);
    g_autoptr (OwbTensor) s = tu_vector (OWB_TYPE_FLOAT, 4, (float[]) { 1, 1, 2.5f, 1.7f });
    OwbTensor *y1 = NULL, *y4 = NULL;
    for (int t = 0; t < 2; t++)
      {
        OwbNode *node = node_new ("Resize", 3, 1);
        set_missing (node, 1);
        tu_set_string (node, "mode", "linear");
        tu_set_int (node, "antialias", 1);
        g_assert_true (one_node_run_threads (node, 18, (In[]) { { x, FALSE }, { NULL, FALSE }, { s, FALSE } }, 1,
                                         t ? &y4 : &y1, t ? 4 : 1, NULL));
      }
    g_assert_cmpint (y1->nelems, ==, 2 * 3 * 82 * 79);
    g_assert_cmpmem (y1->data, y1->nbytes, y4->data, y4->nbytes);
    owb_tensor_unref (y1);
    owb_tensor_unref (y4);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/reduce/infer/reduce", test_infer_reduce);
  g_test_add_func ("/reduce/infer/arg-topk", test_infer_arg_topk);
  g_test_add_func ("/reduce/infer/einsum", test_infer_einsum);
  g_test_add_func ("/reduce/infer/resize", test_infer_resize);
  g_test_add_func ("/reduce/kernel/reduce", test_kernel_reduce);
  g_test_add_func ("/reduce/kernel/reduce-threads", test_kernel_reduce_threads);
  g_test_add_func ("/reduce/kernel/arg-topk", test_kernel_arg_topk);
  g_test_add_func ("/reduce/kernel/einsum", test_kernel_einsum);
  g_test_add_func ("/reduce/kernel/resize", test_kernel_resize);
  return g_test_run ();
}
