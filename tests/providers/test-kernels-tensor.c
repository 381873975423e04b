/* test-kernels-tensor.c: shape inference and CPU kernels of the tensor op family, on what the ONNX
 * conformance cases leave out: symbolic dims, bad attributes, out-of-range indices, odd shapes, strings. */
#include "../engine/test-util.h"

#include <string.h>
#include "kernel-test-util.h"

/* ---- inference tests ---- */

static void
test_infer_reshape (void)
{
  const char *d[] = { "batch", "3", "4" };
  OwbValueType types[2] = { vt (OWB_TYPE_FLOAT, 3, d), vt (OWB_TYPE_INT64, 1, (const char *[]) { "2" }) };
  g_autoptr (OwbNode) node = node_new ("Reshape", 2, 1);
  OwbValueType out;

  /* 0 copies the named dim, -1 takes what is left once it cancels out. */
  g_autoptr (OwbTensor) shape = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 0, -1 });
  OwbTensor *values[2] = { NULL, shape };
  g_assert_true (infer_node (node, 14, types, values, &out, NULL));
  assert_type (&out, "float32[batch,12]");

  /* -1 absorbing the named dim keeps its name. */
  g_autoptr (OwbTensor) shape2 = tu_vector (OWB_TYPE_INT64, 3, (int64_t[]) { 4, 3, -1 });
  types[1] = vt (OWB_TYPE_INT64, 1, (const char *[]) { "3" });
  values[1] = shape2;
  g_assert_true (infer_node (node, 14, types, values, &out, NULL));
  assert_type (&out, "float32[4,3,batch]");

  /* Unknown shape value: only the rank is known, from the shape input's length. */
  values[1] = NULL;
  g_assert_true (infer_node (node, 14, types, values, &out, NULL));
  g_assert_cmpint (out.rank, ==, 3);
  g_assert_false (owb_dim_is_known (out.dims[0]));

  g_autoptr (OwbTensor) two = tu_vector (OWB_TYPE_INT64, 3, (int64_t[]) { -1, -1, 4 });
  values[1] = two;
  assert_infer_fails (node, 14, types, values, "-1");

  g_autoptr (OwbTensor) bad = tu_vector (OWB_TYPE_INT64, 3, (int64_t[]) { 0, -1, 0 });
  values[1] = bad;
  tu_set_int (node, "allowzero", 1);
  assert_infer_fails (node, 14, types, values, NULL);

  /* Element counts that cannot match. */
  const char *k[] = { "2", "3", "4" };
  types[0] = vt (OWB_TYPE_FLOAT, 3, k);
  g_autoptr (OwbTensor) five = tu_vector (OWB_TYPE_INT64, 3, (int64_t[]) { 5, -1, 1 });
  values[1] = five;
  tu_set_int (node, "allowzero", 0);
  assert_infer_fails (node, 14, types, values, NULL);
}

static void
test_infer_squeeze_unsqueeze (void)
{
  const char *d[] = { "batch", "1", "5" };
  OwbValueType types[2] = { vt (OWB_TYPE_FLOAT, 3, d), vt (OWB_TYPE_INT64, 1, (const char *[]) { "1" }) };
  OwbValueType out;
  {
    g_autoptr (OwbNode) node = node_new ("Squeeze", 1, 1);
    tu_set_ints (node, "axes", 1, (int64_t[]) { -2 });
    g_assert_true (infer_node (node, 11, types, NULL, &out, NULL));
    assert_type (&out, "float32[batch,5]");
    tu_set_ints (node, "axes", 1, (int64_t[]) { 2 });
    assert_infer_fails (node, 11, types, NULL, "squeeze");
    tu_set_ints (node, "axes", 1, (int64_t[]) { 3 });
    assert_infer_fails (node, 11, types, NULL, "out of range");
  }
  {
    /* No axes and a named dim: whether it is 1 is unknown, so is the rank. */
    g_autoptr (OwbNode) node = node_new ("Squeeze", 1, 1);
    g_assert_true (infer_node (node, 13, types, NULL, &out, NULL));
    g_assert_cmpint (out.rank, ==, -1);
  }
  {
    g_autoptr (OwbNode) node = node_new ("Unsqueeze", 2, 1);
    g_autoptr (OwbTensor) axes = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 0, -1 });
    OwbTensor *values[2] = { NULL, axes };
    types[1] = vt (OWB_TYPE_INT64, 1, (const char *[]) { "2" });
    g_assert_true (infer_node (node, 13, types, values, &out, NULL));
    assert_type (&out, "float32[1,batch,1,5,1]");
    g_autoptr (OwbTensor) dup = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 1, -4 });
    values[1] = dup;
    assert_infer_fails (node, 13, types, values, "repeated");
    /* Unknown axes: rank from their count. */
    values[1] = NULL;
    g_assert_true (infer_node (node, 13, types, values, &out, NULL));
    g_assert_cmpint (out.rank, ==, 5);
  }
}

static void
test_infer_transpose_flatten (void)
{
  const char *d[] = { "batch", "3", "seq" };
  OwbValueType types[1] = { vt (OWB_TYPE_FLOAT16, 3, d) };
  OwbValueType out;
  g_autoptr (OwbNode) node = node_new ("Transpose", 1, 1);
  g_assert_true (infer_node (node, 13, types, NULL, &out, NULL));
  assert_type (&out, "float16[seq,3,batch]");
  tu_set_ints (node, "perm", 3, (int64_t[]) { 0, 0, 1 });
  assert_infer_fails (node, 13, types, NULL, "permutation");
  tu_set_ints (node, "perm", 2, (int64_t[]) { 0, 1 });
  assert_infer_fails (node, 13, types, NULL, NULL);

  g_autoptr (OwbNode) flat = node_new ("Flatten", 1, 1);
  g_assert_true (infer_node (flat, 13, types, NULL, &out, NULL));
  g_assert_cmpstr (out.dims[0].param, ==, "batch");
  g_assert_false (owb_dim_is_known (out.dims[1]));
  tu_set_int (flat, "axis", -1);
  assert_infer_fails (flat, 9, types, NULL, "out of range");
  tu_set_int (flat, "axis", 4);
  assert_infer_fails (flat, 13, types, NULL, "out of range");
}

static void
test_infer_slice_split_concat (void)
{
  const char *d[] = { "batch", "10" };
  OwbValueType types[5] = { vt (OWB_TYPE_FLOAT, 2, d), vt (OWB_TYPE_INT64, 1, (const char *[]) { "2" }),
                            vt (OWB_TYPE_INT64, 1, (const char *[]) { "2" }) };
  OwbValueType out[4];
  g_autoptr (OwbNode) slice = node_new ("Slice", 3, 1);
  g_autoptr (OwbTensor) starts = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 0, 2 });
  g_autoptr (OwbTensor) ends = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { G_MAXINT64, -1 });
  OwbTensor *values[5] = { NULL, starts, ends };
  g_assert_true (infer_node (slice, 13, types, values, out, NULL));
  assert_type (&out[0], "float32[batch,7]");

  /* Steps 0 is refused. */
  g_autoptr (OwbNode) slice5 = node_new ("Slice", 5, 1);
  g_autoptr (OwbTensor) axes = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 1 });
  g_autoptr (OwbTensor) steps = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 0 });
  g_autoptr (OwbTensor) s1 = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 0 });
  g_autoptr (OwbTensor) e1 = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 5 });
  OwbTensor *values5[5] = { NULL, s1, e1, axes, steps };
  for (int i = 1; i < 5; i++)
    types[i] = vt (OWB_TYPE_INT64, 1, (const char *[]) { "1" });
  assert_infer_fails (slice5, 13, types, values5, "step");

  /* Split: opset 18 num_outputs with an uneven last chunk, and sizes that cannot work. */
  const char *s7[] = { "7" };
  OwbValueType st[2] = { vt (OWB_TYPE_INT32, 1, s7) };
  g_autoptr (OwbNode) split = node_new ("Split", 1, 3);
  tu_set_int (split, "num_outputs", 3);
  g_assert_true (infer_node (split, 18, st, NULL, out, NULL));
  g_assert_cmpint (out[0].dims[0].value, ==, 3);
  g_assert_cmpint (out[1].dims[0].value, ==, 3);
  g_assert_cmpint (out[2].dims[0].value, ==, 1);
  assert_infer_fails (split, 13, st, NULL, "cannot be split");
  tu_set_int (split, "num_outputs", 2);
  assert_infer_fails (split, 18, st, NULL, "num_outputs");

  g_autoptr (OwbNode) split2 = node_new ("Split", 2, 2);
  g_autoptr (OwbTensor) sizes = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 3, 5 });
  OwbTensor *sv[2] = { NULL, sizes };
  st[1] = vt (OWB_TYPE_INT64, 1, (const char *[]) { "2" });
  assert_infer_fails (split2, 13, st, sv, "add up");

  /* Concat: symbolic dims pass, ranks must agree. */
  const char *a[] = { "batch", "4" }, *b[] = { "?", "6" }, *c[] = { "3" };
  OwbValueType ct[3] = { vt (OWB_TYPE_FLOAT, 2, a), vt (OWB_TYPE_FLOAT, 2, b), vt (OWB_TYPE_FLOAT, 1, c) };
  g_autoptr (OwbNode) concat = node_new ("Concat", 2, 1);
  tu_set_int (concat, "axis", -1);
  g_assert_true (infer_node (concat, 13, ct, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,10]");
  g_autoptr (OwbNode) concat3 = node_new ("Concat", 3, 1);
  tu_set_int (concat3, "axis", 0);
  assert_infer_fails (concat3, 13, ct, NULL, "rank");
  g_autoptr (OwbNode) noaxis = node_new ("Concat", 2, 1);
  assert_infer_fails (noaxis, 13, ct, NULL, "axis");
}

static void
test_infer_misc (void)
{
  OwbValueType out[2];
  const char *d[] = { "batch", "3", "8", "8" };
  OwbValueType x = vt (OWB_TYPE_FLOAT, 4, d);

  g_autoptr (OwbNode) shape = node_new ("Shape", 1, 1);
  tu_set_int (shape, "start", 1);
  tu_set_int (shape, "end", -1);
  g_assert_true (infer_node (shape, 15, &x, NULL, out, NULL));
  assert_type (&out[0], "int64[2]");
  /* Before opset 15 start/end do not exist. */
  g_assert_true (infer_node (shape, 13, &x, NULL, out, NULL));
  assert_type (&out[0], "int64[4]");

  g_autoptr (OwbNode) d2s = node_new ("DepthToSpace", 1, 1);
  tu_set_int (d2s, "blocksize", 0);
  assert_infer_fails (d2s, 13, &x, NULL, "blocksize");
  tu_set_int (d2s, "blocksize", 2);
  assert_infer_fails (d2s, 13, &x, NULL, "multiple");
  g_autoptr (OwbNode) s2d = node_new ("SpaceToDepth", 1, 1);
  tu_set_int (s2d, "blocksize", 2);
  g_assert_true (infer_node (s2d, 13, &x, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,12,4,4]");

  g_autoptr (OwbNode) pad = node_new ("Pad", 1, 1);
  tu_set_ints (pad, "pads", 8, (int64_t[]) { 0, 0, 1, 1, 0, 0, 1, -2 });
  tu_set_string (pad, "mode", "reflect");
  g_assert_true (infer_node (pad, 2, &x, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,3,10,7]");
  tu_set_string (pad, "mode", "mirror");
  assert_infer_fails (pad, 2, &x, NULL, "mirror");

  g_autoptr (OwbNode) gather = node_new ("Gather", 2, 1);
  OwbValueType gt[2] = { x, vt (OWB_TYPE_INT64, 2, (const char *[]) { "seq", "2" }) };
  tu_set_int (gather, "axis", 1);
  g_assert_true (infer_node (gather, 13, gt, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,seq,2,8,8]");
  tu_set_int (gather, "axis", 4);
  assert_infer_fails (gather, 13, gt, NULL, "axis");
  gt[1].dtype = OWB_TYPE_FLOAT;
  assert_infer_fails (gather, 13, gt, NULL, "indices");

  g_autoptr (OwbNode) constant = node_new ("Constant", 0, 1);
  assert_infer_fails (constant, 13, NULL, NULL, "value");
  OwbAttribute *sparse = owb_node_add_attribute (constant, "sparse_value", OWB_ATTR_SPARSE_TENSOR);
  (void) sparse;
  assert_infer_fails (constant, 13, NULL, NULL, "sparse");

  g_autoptr (OwbNode) nz = node_new ("NonZero", 1, 1);
  g_assert_true (infer_node (nz, 13, &x, NULL, out, NULL));
  g_assert_cmpint (out[0].rank, ==, 2);
  g_assert_cmpint (out[0].dims[0].value, ==, 4);
  g_assert_false (owb_dim_is_known (out[0].dims[1]));

  /* Expand keeps a named dim where the shape says 1. */
  g_autoptr (OwbNode) expand = node_new ("Expand", 2, 1);
  g_autoptr (OwbTensor) es = tu_vector (OWB_TYPE_INT64, 5, (int64_t[]) { 2, 1, 3, 1, 8 });
  OwbValueType et[2] = { x, vt (OWB_TYPE_INT64, 1, (const char *[]) { "5" }) };
  OwbTensor *ev[2] = { NULL, es };
  g_assert_true (infer_node (expand, 13, et, ev, out, NULL));
  assert_type (&out[0], "float32[2,batch,3,8,8]");

  /* Range counts from constant inputs. */
  g_autoptr (OwbNode) range = node_new ("Range", 3, 1);
  OwbTensor *rv[3] = { owb_tensor_new_scalar_int64 (10), owb_tensor_new_scalar_int64 (4),
                       owb_tensor_new_scalar_int64 (-3) };
  OwbValueType rt[3];
  for (int i = 0; i < 3; i++)
    owb_tensor_get_value_type (rv[i], &rt[i]);
  g_assert_true (infer_node (range, 11, rt, rv, out, NULL));
  assert_type (&out[0], "int64[2]");
  for (int i = 0; i < 3; i++)
    owb_tensor_unref (rv[i]);
}

/* ---- kernels, through a session ---- */

typedef OneNodeInput In;

static void
test_gather_indices (void)
{
  g_autoptr (OwbTensor) data = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 3, 2 }, (int64_t[]) { 1, 2, 3, 4, 5, 6 });
  g_autoptr (OwbTensor) idx = tu_new_tensor (OWB_TYPE_INT32, 1, (int64_t[]) { 3 }, (int32_t[]) { -1, 0, 2 });
  In in[2] = { { data, TRUE }, { idx, TRUE } };
  OwbTensor *out = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (one_node_run (node_new ("Gather", 2, 1), 13, in, 1, &out, &error));
  g_assert_no_error (error);
  assert_ints (out, 6, (int64_t[]) { 5, 6, 1, 2, 5, 6 });
  g_clear_pointer (&out, owb_tensor_unref);

  /* Out of range: an error naming the node, never a read past the data. */
  g_autoptr (OwbTensor) bad = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 2 }, (int64_t[]) { 0, 3 });
  in[1].value = bad;
  g_assert_false (one_node_run (node_new ("Gather", 2, 1), 13, in, 1, &out, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "the_node"));
  g_assert_nonnull (strstr (error->message, "out of range"));
  g_clear_error (&error);

  OwbNode *ge = node_new ("GatherElements", 2, 1);
  tu_set_int (ge, "axis", 1);
  g_autoptr (OwbTensor) bad2 = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 1, 1 }, (int64_t[]) { -3 });
  in[1].value = bad2;
  g_assert_false (one_node_run (ge, 13, in, 1, &out, &error));
  g_assert_nonnull (strstr (error->message, "out of range"));
  g_clear_error (&error);

  OwbNode *snd = node_new ("ScatterND", 3, 1);
  g_autoptr (OwbTensor) nd_idx = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 1, 1 }, (int64_t[]) { 7 });
  g_autoptr (OwbTensor) upd = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 1, 2 }, (int64_t[]) { 9, 9 });
  In sin[3] = { { data, TRUE }, { nd_idx, TRUE }, { upd, TRUE } };
  g_assert_false (one_node_run (snd, 16, sin, 1, &out, &error));
  g_assert_nonnull (strstr (error->message, "out of range"));
  g_clear_error (&error);

  /* ScatterND add with a negative index. */
  OwbNode *add = node_new ("ScatterND", 3, 1);
  tu_set_string (add, "reduction", "add");
  g_autoptr (OwbTensor) neg = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 1, 1 }, (int64_t[]) { -1 });
  sin[1].value = neg;
  g_assert_true (one_node_run (add, 16, sin, 1, &out, &error));
  assert_ints (out, 6, (int64_t[]) { 1, 2, 3, 4, 14, 15 });
  g_clear_pointer (&out, owb_tensor_unref);
}

static void
test_slice_steps (void)
{
  int64_t v[10];
  for (int i = 0; i < 10; i++)
    v[i] = i;
  g_autoptr (OwbTensor) data = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 10 }, v);
  g_autoptr (OwbTensor) starts = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { -1 });
  g_autoptr (OwbTensor) ends = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { G_MININT64 });
  g_autoptr (OwbTensor) axes = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 0 });
  g_autoptr (OwbTensor) steps = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { -3 });
  In in[5] = { { data, TRUE }, { starts, TRUE }, { ends, TRUE }, { axes, FALSE }, { steps, TRUE } };
  OwbTensor *out = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (one_node_run (node_new ("Slice", 5, 1), 13, in, 1, &out, &error));
  g_assert_no_error (error);
  assert_ints (out, 4, (int64_t[]) { 9, 6, 3, 0 });
  g_clear_pointer (&out, owb_tensor_unref);

  /* Empty result from a start past the end. */
  g_autoptr (OwbTensor) far = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 20 });
  g_autoptr (OwbTensor) big = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { G_MAXINT64 });
  g_autoptr (OwbTensor) one = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 1 });
  in[1].value = far, in[2].value = big, in[4].value = one;
  g_assert_true (one_node_run (node_new ("Slice", 5, 1), 13, in, 1, &out, &error));
  g_assert_cmpint (out->nelems, ==, 0);
  g_clear_pointer (&out, owb_tensor_unref);

  /* Opset 1: attributes. */
  OwbNode *s1 = node_new ("Slice", 1, 1);
  tu_set_ints (s1, "starts", 1, (int64_t[]) { 2 });
  tu_set_ints (s1, "ends", 1, (int64_t[]) { -5 });
  g_assert_true (one_node_run (s1, 9, in, 1, &out, &error));
  assert_ints (out, 3, (int64_t[]) { 2, 3, 4 });
  g_clear_pointer (&out, owb_tensor_unref);
}

/* Transposes through several permutations of 4-D shapes, for several element sizes, against a
 * straightforward index computation; the shapes are large enough for the blocked path. */
static void
test_transpose_permutations (void)
{
  /* the last three are NCHW images of 3, 2 and 4 channels: (0, 2, 3, 1) takes them to the few-column
   * path (rows not a multiple of its 4) */
  const int64_t shapes[][4] = { { 2, 37, 41, 3 }, { 1, 2, 64, 48 }, { 2, 3, 37, 41 }, { 1, 2, 9, 7 }, { 1, 4, 5, 13 } };
  const OwbDataType types[] = { OWB_TYPE_UINT8, OWB_TYPE_FLOAT16, OWB_TYPE_FLOAT, OWB_TYPE_DOUBLE };
  const int perms[][4] = { { 0, 3, 1, 2 }, { 0, 2, 3, 1 }, { 3, 1, 0, 2 }, { 1, 2, 0, 3 }, { 3, 2, 1, 0 },
                           { 0, 1, 2, 3 }, { 0, 1, 3, 2 } };
  for (guint sh = 0; sh < G_N_ELEMENTS (shapes); sh++)
    for (guint t = 0; t < G_N_ELEMENTS (types); t++)
      for (guint p = 0; p < G_N_ELEMENTS (perms); p++)
        {
          const int64_t *dims = shapes[sh];
          g_autoptr (OwbTensor) x = owb_tensor_new (types[t], 4, dims, NULL);
          gsize es = owb_data_type_size (types[t]);
          for (gsize i = 0; i < x->nbytes; i++)
            ((guint8 *) x->data)[i] = (guint8) (i * 7 + i / 251);
          OwbNode *node = node_new ("Transpose", 1, 1);
          int64_t perm[4] = { perms[p][0], perms[p][1], perms[p][2], perms[p][3] };
          tu_set_ints (node, "perm", 4, perm);
          In in[1] = { { x, TRUE } };
          OwbTensor *out = NULL;
          g_autoptr (GError) error = NULL;
          g_assert_true (one_node_run (node, 13, in, 1, &out, &error));
          g_assert_no_error (error);
          int64_t od[4], xs[4] = { dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1 };
          for (int k = 0; k < 4; k++)
            {
              od[k] = dims[perm[k]];
              g_assert_cmpint (out->dims[k], ==, od[k]);
            }
          int64_t o = 0, c[4];
          for (c[0] = 0; c[0] < od[0]; c[0]++)
            for (c[1] = 0; c[1] < od[1]; c[1]++)
              for (c[2] = 0; c[2] < od[2]; c[2]++)
                for (c[3] = 0; c[3] < od[3]; c[3]++, o++)
                  {
                    int64_t src = 0;
                    for (int k = 0; k < 4; k++)
                      src += c[k] * xs[perm[k]];
                    g_assert_cmpint (memcmp ((guint8 *) out->data + o * es, (guint8 *) x->data + src * es, es), ==, 0);
                  }
          owb_tensor_unref (out);
        }
}

static void
test_pad_modes (void)
{
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_INT32, 1, (int64_t[]) { 3 }, (int32_t[]) { 1, 2, 3 });
  struct {
    const char *mode;
    int64_t b, e;
    int n;
    int64_t expected[13];
  } cases[] = {
    { "reflect", 5, 5, 13, { 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2 } },
    { "wrap", 4, 5, 12, { 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2 } },
    { "edge", 2, 1, 6, { 1, 1, 1, 2, 3, 3 } },
    { "constant", -1, 2, 4, { 2, 3, 7, 7 } },
    { "edge", 0, -2, 1, { 1 } },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      OwbNode *node = node_new ("Pad", 3, 1);
      tu_set_string (node, "mode", cases[i].mode);
      g_autoptr (OwbTensor) pads = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { cases[i].b, cases[i].e });
      g_autoptr (OwbTensor) value = tu_new_tensor (OWB_TYPE_INT32, 0, NULL, (int32_t[]) { 7 });
      In in[3] = { { x, TRUE }, { pads, TRUE }, { value, TRUE } };
      OwbTensor *out = NULL;
      g_autoptr (GError) error = NULL;
      g_assert_true (one_node_run (node, 19, in, 1, &out, &error));
      g_assert_no_error (error);
      assert_ints (out, cases[i].n, cases[i].expected);
      owb_tensor_unref (out);
    }

  /* 2-D edge, with the pads attribute of opset 2 and a value attribute that edge ignores. */
  g_autoptr (OwbTensor) m = tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 2 }, (float[]) { 1, 2, 3, 4 });
  OwbNode *node = node_new ("Pad", 1, 1);
  tu_set_string (node, "mode", "edge");
  tu_set_ints (node, "pads", 4, (int64_t[]) { 1, 0, 0, 2 });
  In in[1] = { { m, TRUE } };
  OwbTensor *out = NULL;
  g_assert_true (one_node_run (node, 2, in, 1, &out, NULL));
  assert_ints (out, 12, (int64_t[]) { 1, 2, 2, 2, 1, 2, 2, 2, 3, 4, 4, 4 });
  owb_tensor_unref (out);

  /* Edge padding of an empty axis has nothing to copy. */
  g_autoptr (OwbTensor) empty = owb_tensor_new (OWB_TYPE_FLOAT, 1, (int64_t[]) { 0 }, NULL);
  g_autoptr (OwbTensor) pads = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 1, 1 });
  OwbNode *bad = node_new ("Pad", 2, 1);
  tu_set_string (bad, "mode", "edge");
  In bin[2] = { { empty, TRUE }, { pads, TRUE } };
  g_autoptr (GError) error = NULL;
  g_assert_false (one_node_run (bad, 13, bin, 1, &out, &error));
  g_assert_nonnull (error);
}

static void
test_strings (void)
{
  const char *a[] = { "a", "bb", "ccc", "dddd" };
  g_autoptr (OwbTensor) x = owb_tensor_new (OWB_TYPE_STRING, 2, (int64_t[]) { 2, 2 }, NULL);
  for (int i = 0; i < 4; i++)
    ((char **) x->data)[i] = g_strdup (a[i]);

  OwbNode *concat = node_new ("Concat", 2, 1);
  tu_set_int (concat, "axis", 1);
  In in[2] = { { x, TRUE }, { x, FALSE } };
  OwbTensor *out = NULL;
  g_autoptr (GError) error = NULL;
  g_assert_true (one_node_run (concat, 13, in, 1, &out, &error));
  g_assert_no_error (error);
  const char *expected[] = { "a", "bb", "a", "bb", "ccc", "dddd", "ccc", "dddd" };
  for (int i = 0; i < 8; i++)
    {
      g_assert_cmpstr (((char **) out->data)[i], ==, expected[i]);
      /* Its own copy, not the input's string. */
      g_assert_true (((char **) out->data)[i] != ((char **) x->data)[i % 2 + (i / 4) * 2]);
    }
  owb_tensor_unref (out);

  OwbNode *transpose = node_new ("Transpose", 1, 1);
  g_assert_true (one_node_run (transpose, 13, in, 1, &out, &error));
  g_assert_cmpstr (((char **) out->data)[1], ==, "ccc");
  g_assert_cmpstr (((char **) out->data)[2], ==, "bb");
  owb_tensor_unref (out);

  OwbNode *gather = node_new ("Gather", 2, 1);
  g_autoptr (OwbTensor) idx = tu_vector (OWB_TYPE_INT64, 3, (int64_t[]) { 1, 1, 0 });
  In gin[2] = { { x, TRUE }, { idx, TRUE } };
  g_assert_true (one_node_run (gather, 13, gin, 1, &out, &error));
  g_assert_cmpint (out->nelems, ==, 6);
  g_assert_cmpstr (((char **) out->data)[0], ==, "ccc");
  g_assert_cmpstr (((char **) out->data)[5], ==, "bb");
  owb_tensor_unref (out);
}

static void
test_split_uneven (void)
{
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 2, 5 },
                                        (int64_t[]) { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 });
  OwbNode *node = node_new ("Split", 1, 2);
  tu_set_int (node, "axis", -1);
  tu_set_int (node, "num_outputs", 2);
  In in[1] = { { x, TRUE } };
  OwbTensor *out[2] = { NULL, NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (one_node_run (node, 18, in, 2, out, &error));
  g_assert_no_error (error);
  assert_ints (out[0], 6, (int64_t[]) { 0, 1, 2, 5, 6, 7 });
  assert_ints (out[1], 4, (int64_t[]) { 3, 4, 8, 9 });
  owb_tensor_unref (out[0]);
  owb_tensor_unref (out[1]);

  /* Opset 11: the split attribute. */
  node = node_new ("Split", 1, 2);
  tu_set_int (node, "axis", 1);
  tu_set_ints (node, "split", 2, (int64_t[]) { 1, 4 });
  g_assert_true (one_node_run (node, 11, in, 2, out, &error));
  assert_ints (out[0], 2, (int64_t[]) { 0, 5 });
  assert_ints (out[1], 8, (int64_t[]) { 1, 2, 3, 4, 6, 7, 8, 9 });
  owb_tensor_unref (out[0]);
  owb_tensor_unref (out[1]);
}

static void
test_small_ops (void)
{
  OwbTensor *out = NULL;
  g_autoptr (GError) error = NULL;

  /* NonZero: the output size comes from the data. */
  g_autoptr (OwbTensor) b = tu_new_tensor (OWB_TYPE_BOOL, 2, (int64_t[]) { 2, 3 }, (guint8[]) { 0, 1, 0, 1, 0, 1 });
  In nin[1] = { { b, TRUE } };
  g_assert_true (one_node_run (node_new ("NonZero", 1, 1), 13, nin, 1, &out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out->dims[0], ==, 2);
  assert_ints (out, 6, (int64_t[]) { 0, 1, 1, 1, 0, 2 });
  g_clear_pointer (&out, owb_tensor_unref);

  /* Tile and Expand with symbolic-free but runtime-only shapes. */
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 1, 2 }, (int64_t[]) { 1, 2 });
  g_autoptr (OwbTensor) reps = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 2, 3 });
  In tin[2] = { { x, TRUE }, { reps, TRUE } };
  g_assert_true (one_node_run (node_new ("Tile", 2, 1), 13, tin, 1, &out, &error));
  assert_ints (out, 12, (int64_t[]) { 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2 });
  g_clear_pointer (&out, owb_tensor_unref);

  g_autoptr (OwbTensor) shape = tu_vector (OWB_TYPE_INT64, 3, (int64_t[]) { 2, 1, 1 });
  In ein[2] = { { x, TRUE }, { shape, TRUE } };
  g_assert_true (one_node_run (node_new ("Expand", 2, 1), 13, ein, 1, &out, &error));
  g_assert_cmpint (out->rank, ==, 3);
  assert_ints (out, 4, (int64_t[]) { 1, 2, 1, 2 });
  g_clear_pointer (&out, owb_tensor_unref);

  /* OneHot: out-of-range indices give all-off rows; negative ones wrap. */
  g_autoptr (OwbTensor) ind = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 3 }, (int64_t[]) { 5, -1, 0 });
  g_autoptr (OwbTensor) depth = tu_new_tensor (OWB_TYPE_FLOAT, 0, NULL, (float[]) { 3 });
  g_autoptr (OwbTensor) vals = tu_new_tensor (OWB_TYPE_INT32, 1, (int64_t[]) { 2 }, (int32_t[]) { -1, 9 });
  In oin[3] = { { ind, TRUE }, { depth, TRUE }, { vals, TRUE } };
  g_assert_true (one_node_run (node_new ("OneHot", 3, 1), 11, oin, 1, &out, &error));
  assert_ints (out, 9, (int64_t[]) { -1, -1, -1, -1, -1, 9, 9, -1, -1 });
  g_clear_pointer (&out, owb_tensor_unref);

  /* CumSum exclusive + reverse on int32 along axis 0. */
  g_autoptr (OwbTensor) c = tu_new_tensor (OWB_TYPE_INT32, 2, (int64_t[]) { 3, 1 }, (int32_t[]) { 1, 2, 3 });
  g_autoptr (OwbTensor) axis = tu_new_tensor (OWB_TYPE_INT32, 0, NULL, (int32_t[]) { 0 });
  OwbNode *cs = node_new ("CumSum", 2, 1);
  tu_set_int (cs, "exclusive", 1);
  tu_set_int (cs, "reverse", 1);
  In cin[2] = { { c, TRUE }, { axis, TRUE } };
  g_assert_true (one_node_run (cs, 14, cin, 1, &out, &error));
  assert_ints (out, 3, (int64_t[]) { 5, 3, 0 });
  g_clear_pointer (&out, owb_tensor_unref);

  /* Trilu with a k far outside the matrix keeps everything (lower) . */
  g_autoptr (OwbTensor) m = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 2, 2 }, (int64_t[]) { 1, 2, 3, 4 });
  g_autoptr (OwbTensor) k = tu_new_tensor (OWB_TYPE_INT64, 0, NULL, (int64_t[]) { G_MAXINT64 });
  OwbNode *tr = node_new ("Trilu", 2, 1);
  tu_set_int (tr, "upper", 0);
  In trin[2] = { { m, TRUE }, { k, TRUE } };
  g_assert_true (one_node_run (tr, 14, trin, 1, &out, &error));
  assert_ints (out, 4, (int64_t[]) { 1, 2, 3, 4 });
  g_clear_pointer (&out, owb_tensor_unref);

  /* Reshape of an empty tensor with allowzero. */
  g_autoptr (OwbTensor) e = owb_tensor_new (OWB_TYPE_FLOAT, 2, (int64_t[]) { 0, 4 }, NULL);
  g_autoptr (OwbTensor) rs = tu_vector (OWB_TYPE_INT64, 3, (int64_t[]) { 2, 0, 2 });
  OwbNode *r = node_new ("Reshape", 2, 1);
  tu_set_int (r, "allowzero", 1);
  In rin[2] = { { e, TRUE }, { rs, TRUE } };
  g_assert_true (one_node_run (r, 14, rin, 1, &out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out->rank, ==, 3);
  g_assert_cmpint (out->dims[1], ==, 0);
  g_clear_pointer (&out, owb_tensor_unref);

  /* ConstantOfShape with an int32 value, shape fed at run time. */
  OwbNode *cos = node_new ("ConstantOfShape", 1, 1);
  OwbAttribute *value = owb_node_add_attribute (cos, "value", OWB_ATTR_TENSOR);
  value->t = tu_new_tensor (OWB_TYPE_INT32, 1, (int64_t[]) { 1 }, (int32_t[]) { 42 });
  g_autoptr (OwbTensor) cs_shape = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 2, 2 });
  In coin[1] = { { cs_shape, TRUE } };
  g_assert_true (one_node_run (cos, 20, coin, 1, &out, &error));
  g_assert_cmpint (out->dtype, ==, OWB_TYPE_INT32);
  assert_ints (out, 4, (int64_t[]) { 42, 42, 42, 42 });
  g_clear_pointer (&out, owb_tensor_unref);
}

static void
test_constant_and_runtime_shapes (void)
{
  OwbTensor *out = NULL;
  g_autoptr (GError) error = NULL;

  OwbNode *ints = node_new ("Constant", 0, 1);
  tu_set_ints (ints, "value_ints", 3, (int64_t[]) { 4, -5, 6 });
  g_assert_true (one_node_run (ints, 13, NULL, 1, &out, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out->dtype, ==, OWB_TYPE_INT64);
  assert_ints (out, 3, (int64_t[]) { 4, -5, 6 });
  g_clear_pointer (&out, owb_tensor_unref);

  OwbNode *strs = node_new ("Constant", 0, 1);
  OwbAttribute *a = owb_node_add_attribute (strs, "value_strings", OWB_ATTR_STRINGS);
  a->n = 2;
  a->strings = g_new0 (char *, 3);
  a->strings[0] = g_strdup ("x");
  a->strings[1] = g_strdup ("yz");
  g_assert_true (one_node_run (strs, 13, NULL, 1, &out, &error));
  g_assert_cmpint (out->dtype, ==, OWB_TYPE_STRING);
  g_assert_cmpint (out->nelems, ==, 2);
  g_assert_cmpstr (((char **) out->data)[1], ==, "yz");
  g_clear_pointer (&out, owb_tensor_unref);

  OwbNode *f = node_new ("Constant", 0, 1);
  owb_node_add_attribute (f, "value_float", OWB_ATTR_FLOAT)->f = 2.5f;
  g_assert_true (one_node_run (f, 13, NULL, 1, &out, &error));
  g_assert_cmpint (out->rank, ==, 0);
  g_assert_cmpfloat (*(float *) out->data, ==, 2.5f);
  g_clear_pointer (&out, owb_tensor_unref);

  /* value_int needs opset 12. */
  OwbNode *old = node_new ("Constant", 0, 1);
  tu_set_int (old, "value_int", 3);
  g_assert_false (one_node_run (old, 11, NULL, 1, &out, &error));
  g_assert_nonnull (strstr (error->message, "opset 12"));
  g_clear_error (&error);

  /* Shapes fed at run time are checked at run time. */
  g_autoptr (OwbTensor) x = owb_tensor_new (OWB_TYPE_FLOAT, 2, (int64_t[]) { 2, 3 }, NULL);
  g_autoptr (OwbTensor) shape = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 4, -1 });
  In in[2] = { { x, TRUE }, { shape, TRUE } };
  g_assert_false (one_node_run (node_new ("Reshape", 2, 1), 13, in, 1, &out, &error));
  g_assert_nonnull (strstr (error->message, "the_node"));
  g_clear_error (&error);

  g_autoptr (OwbTensor) reps = tu_vector (OWB_TYPE_INT64, 1, (int64_t[]) { 2 });
  in[1].value = reps;
  g_assert_false (one_node_run (node_new ("Tile", 2, 1), 13, in, 1, &out, &error));
  g_assert_nonnull (strstr (error->message, "repeats"));
  g_clear_error (&error);

  g_autoptr (OwbTensor) big = tu_vector (OWB_TYPE_INT64, 2, (int64_t[]) { 3, 3 });
  in[1].value = big;
  g_assert_false (one_node_run (node_new ("Expand", 2, 1), 13, in, 1, &out, &error));
  g_assert_nonnull (strstr (error->message, "broadcast"));
  g_clear_error (&error);
}

/* Reshape, Flatten, Squeeze, Unsqueeze, Identity and a Transpose that only moves axes of size 1 give
 * views of their input (no copy). The views must keep their values while the arena hands memory to
 * later nodes and to a second run, and a real Transpose still copies. */
static void
test_reshapes_share_storage (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  OwbGraph *g = m->graph;
  const int64_t xd[3] = { 1, 6, 8 };
  tu_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 3, xd, NULL);
  tu_node (g, "Relu", "relu", "x", "a");
  const int64_t shape[2] = { 12, 4 };
  OwbTensor *st = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
  memcpy (st->data, shape, sizeof shape);
  owb_graph_add_initializer (g, "shape", st);
  tu_node (g, "Reshape", "reshape", "a,shape", "b");
  OwbNode *t = tu_node (g, "Transpose", "unit_axis", "a", "c");
  tu_set_ints (t, "perm", 3, (int64_t[]){ 1, 0, 2 });
  OwbNode *f = tu_node (g, "Flatten", "flatten", "c", "d");
  tu_set_int (f, "axis", 1);
  tu_node (g, "Identity", "identity", "d", "e");
  OwbNode *real = tu_node (g, "Transpose", "real", "a", "r");
  tu_set_ints (real, "perm", 3, (int64_t[]){ 0, 2, 1 });
  /* same-sized values after `a` is no longer needed, for the arena to give out */
  tu_node (g, "Neg", "neg", "x", "n1");
  tu_node (g, "Relu", "relu2", "n1", "n2");
  tu_node (g, "Neg", "neg2", "n2", "z");
  const char *outs[] = { "b", "e", "r", "z" };
  for (int i = 0; i < 4; i++)
    g_ptr_array_add (g->outputs, owb_value_info_new (outs[i], NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) session = tu_session (m, 2, &error);
  g_assert_no_error (error);
  OwbTensor *first[4] = { NULL }, *second[4] = { NULL };
  float xv[48], xw[48];
  for (int i = 0; i < 48; i++)
    {
      xv[i] = (float) (i % 7) - 3.0f;
      xw[i] = 2.0f - (float) (i % 5);
    }
  g_autoptr (OwbTensor) x1 = tu_floats (3, xd, xv);
  g_autoptr (OwbTensor) x2 = tu_floats (3, xd, xw);
  const char *in_names[] = { "x" };
  g_assert_true (owb_session_run (session, 1, in_names, &x1, 4, NULL, first, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (owb_session_run (session, 1, in_names, &x2, 4, NULL, second, NULL, NULL, &error));
  g_assert_no_error (error);
  for (int run = 0; run < 2; run++)
    {
      OwbTensor **o = run ? second : first;
      const float *xs = run ? xw : xv;
      g_assert_cmpint (o[0]->dims[0], ==, 12);
      g_assert_cmpint (o[1]->rank, ==, 2);
      g_assert_cmpint (o[1]->dims[0], ==, 6);
      g_assert_true (o[0]->data == o[1]->data); /* both read `a` */
      g_assert_false (o[2]->data == o[0]->data);
      const float *b = o[0]->data, *e = o[1]->data, *r = o[2]->data, *z = o[3]->data;
      for (int i = 0; i < 48; i++)
        {
          float relu = xs[i] > 0 ? xs[i] : 0.0f;
          g_assert_cmpfloat (b[i], ==, relu);
          g_assert_cmpfloat (e[i], ==, relu);
          g_assert_cmpfloat (z[i], ==, xs[i] < 0 ? xs[i] : -0.0f);
          int row = i / 8, col = i % 8; /* r is [1, 8, 6] */
          g_assert_cmpfloat (r[col * 6 + row], ==, relu);
        }
    }
  for (int i = 0; i < 4; i++)
    {
      owb_tensor_unref (first[i]);
      owb_tensor_unref (second[i]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tensor/infer/reshape", test_infer_reshape);
  g_test_add_func ("/tensor/infer/squeeze-unsqueeze", test_infer_squeeze_unsqueeze);
  g_test_add_func ("/tensor/infer/transpose-flatten", test_infer_transpose_flatten);
  g_test_add_func ("/tensor/infer/slice-split-concat", test_infer_slice_split_concat);
  g_test_add_func ("/tensor/infer/misc", test_infer_misc);
  g_test_add_func ("/tensor/kernel/gather-indices", test_gather_indices);
  g_test_add_func ("/tensor/kernel/slice-steps", test_slice_steps);
  g_test_add_func ("/tensor/kernel/transpose-permutations", test_transpose_permutations);
  g_test_add_func ("/tensor/kernel/pad-modes", test_pad_modes);
  g_test_add_func ("/tensor/kernel/strings", test_strings);
  g_test_add_func ("/tensor/kernel/split-uneven", test_split_uneven);
  g_test_add_func ("/tensor/kernel/small-ops", test_small_ops);
  g_test_add_func ("/tensor/kernel/constant-runtime-shapes", test_constant_and_runtime_shapes);
  g_test_add_func ("/tensor/kernel/reshapes-share-storage", test_reshapes_share_storage);
  return g_test_run ();
}
