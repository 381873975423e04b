/* test-infer.c: whole-graph inference carries symbolic dims by name and uses constant values. */
#include "test-util.h"

static const OwbValueInfo *
find (OwbModel *m, const char *name)
{
  const OwbValueInfo *info = owb_graph_find_value_info (m->graph, name);
  g_assert_nonnull (info);
  return info;
}

static void
assert_type (OwbModel *m, const char *name, const char *expected)
{
  g_autofree char *s = owb_value_type_to_string (&find (m, name)->type);
  g_assert_cmpstr (s, ==, expected);
}

static void
test_symbolic_broadcast (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  const char *params[] = { "batch", NULL, NULL };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]){ -2, 1, 8 }, params);
  tu_add_value (m->graph->inputs, "b", OWB_TYPE_FLOAT, 2, (int64_t[]){ 4, 1 }, NULL);
  tu_node (m->graph, "Add", "add", "x,b", "s");
  tu_node (m->graph, "Relu", "relu", "s", "y");
  tu_add_untyped_output (m->graph->outputs, "y");
  GError *error = NULL;
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  assert_type (m, "s", "float32[batch,4,8]");
  assert_type (m, "y", "float32[batch,4,8]");
}

static void
test_broadcast_mismatch (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, NULL);
  tu_add_value (m->graph->inputs, "z", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_node (m->graph, "Add", "bad_add", "x,z", "y");
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  GError *error = NULL;
  g_assert_false (owb_model_infer_shapes (m, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_assert_nonnull (strstr (error->message, "bad_add"));
  g_error_free (error);
}

static void
test_constant_reshape (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  const char *params[] = { "n", NULL, NULL };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]){ 2, 3, 4 }, params);
  OwbTensor *shape = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
  ((int64_t *) shape->data)[0] = -1;
  ((int64_t *) shape->data)[1] = 6;
  owb_graph_add_initializer (m->graph, "shape", shape);
  tu_node (m->graph, "Reshape", "reshape", "x,shape", "y");
  tu_node (m->graph, "MatMul", "mm", "y,w", "z");
  owb_graph_add_initializer (m->graph, "w", owb_tensor_new (OWB_TYPE_FLOAT, 2, (int64_t[]){ 6, 5 }, NULL));
  tu_add_value (m->graph->outputs, "z", OWB_TYPE_FLOAT, 2, (int64_t[]){ -1, -1 }, NULL);
  GError *error = NULL;
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  assert_type (m, "y", "float32[4,6]");
  assert_type (m, "z", "float32[4,5]");
}

static void
test_unknown_op_leaves_unknown (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, NULL);
  tu_node (m->graph, "NoSuchOp", "mystery", "x", "y");
  tu_node (m->graph, "Relu", "relu", "y", "z");
  tu_add_value (m->graph->outputs, "z", OWB_TYPE_FLOAT, 1, (int64_t[]){ 3 }, NULL);
  GError *error = NULL;
  /* Inference does not reject unknown ops (a viewer must still open the model); sessions do. */
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  GError *serr = NULL;
  OwbSession *s = tu_session (m, 1, &serr);
  g_assert_null (s);
  g_assert_error (serr, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP);
  g_assert_nonnull (strstr (serr->message, "NoSuchOp"));
  g_assert_nonnull (strstr (serr->message, "mystery"));
  g_assert_nonnull (strstr (serr->message, "13"));
  g_error_free (serr);
}

static void
add_ints (OwbModel *m, const char *name, int rank, const int64_t *values, int64_t n)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, rank, (int64_t[]){ n }, NULL);
  memcpy (t->data, values, sizeof (int64_t) * n);
  owb_graph_add_initializer (m->graph, name, t);
}

/* The attention heads' view of a BERT as PyTorch exports it: the batch and sequence length read
 * back with Shape and Gather, the head size computed (768 / 12), and Reshape to them. */
static OwbModel *
attention_view (gboolean symbolic_batch)
{
  OwbModel *m = tu_model_new (13);
  const char *params[] = { "batch", NULL, NULL };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]){ symbolic_batch ? -2 : 1, 128, 768 }, params);
  add_ints (m, "zero", 0, (int64_t[]){ 0 }, 1);
  add_ints (m, "one", 0, (int64_t[]){ 1 }, 1);
  add_ints (m, "two", 0, (int64_t[]){ 2 }, 1);
  add_ints (m, "heads", 1, (int64_t[]){ 12 }, 1);
  add_ints (m, "heads_scalar", 0, (int64_t[]){ 12 }, 1);
  add_ints (m, "axes0", 1, (int64_t[]){ 0 }, 1);
  tu_node (m->graph, "Shape", "shape", "x", "s");
  tu_node (m->graph, "Gather", "batch", "s,zero", "b");
  tu_node (m->graph, "Gather", "seq", "s,one", "n");
  tu_node (m->graph, "Gather", "hidden", "s,two", "h");
  tu_node (m->graph, "Div", "head_size", "h,heads_scalar", "d");
  tu_node (m->graph, "Unsqueeze", "ub", "b,axes0", "b1");
  tu_node (m->graph, "Unsqueeze", "un", "n,axes0", "n1");
  tu_node (m->graph, "Unsqueeze", "ud", "d,axes0", "d1");
  OwbNode *concat = tu_node (m->graph, "Concat", "view", "b1,n1,heads,d1", "v");
  owb_node_add_attribute (concat, "axis", OWB_ATTR_INT)->i = 0;
  tu_node (m->graph, "Reshape", "reshape", "x,v", "q");
  OwbNode *t = tu_node (m->graph, "Transpose", "transpose", "q", "y");
  OwbAttribute *perm = owb_node_add_attribute (t, "perm", OWB_ATTR_INTS);
  perm->n = 4;
  perm->ints = g_memdup2 ((int64_t[]){ 0, 2, 1, 3 }, 4 * sizeof (int64_t));
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 0, NULL, NULL);
  ((OwbValueInfo *) g_ptr_array_index (m->graph->outputs, 0))->has_type = FALSE;
  return m;
}

static void
test_data_propagation_concrete (void)
{
  g_autoptr (OwbModel) m = attention_view (FALSE);
  GError *error = NULL;
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  assert_type (m, "v", "int64[4]");
  assert_type (m, "q", "float32[1,128,12,64]");
  assert_type (m, "y", "float32[1,12,128,64]");

  /* and the run agrees */
  g_autoptr (OwbSession) s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  g_autoptr (OwbTensor) x = owb_tensor_new (OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, 128, 768 }, NULL);
  const char *names[] = { "x" };
  OwbTensor *out = NULL;
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &out, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out->rank, ==, 4);
  g_assert_cmpint (out->dims[1], ==, 12);
  g_assert_cmpint (out->dims[2], ==, 128);
  g_assert_cmpint (out->dims[3], ==, 64);
  owb_tensor_unref (out);
}

static void
test_data_propagation_symbolic (void)
{
  g_autoptr (OwbModel) m = attention_view (TRUE);
  GError *error = NULL;
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  assert_type (m, "q", "float32[batch,128,12,64]");
  assert_type (m, "y", "float32[batch,12,128,64]");
}

/* Reshape (x, Concat (Slice (Shape (x), 0, 1), [-1])) flattens all but the first dim; Range over
 * the sequence length and ConstantOfShape / Expand over shapes read back get their dims too. */
static void
test_data_propagation_ops (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  const char *params[] = { "batch", "seq", NULL };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]){ -2, -2, 8 }, params);
  add_ints (m, "start", 1, (int64_t[]){ 0 }, 1);
  add_ints (m, "end", 1, (int64_t[]){ 1 }, 1);
  add_ints (m, "minus_one", 1, (int64_t[]){ -1 }, 1);
  add_ints (m, "zero", 0, (int64_t[]){ 0 }, 1);
  add_ints (m, "one", 0, (int64_t[]){ 1 }, 1);
  add_ints (m, "last_two", 1, (int64_t[]){ -2 }, 1);
  add_ints (m, "big", 1, (int64_t[]){ G_MAXINT64 }, 1);
  tu_node (m->graph, "Shape", "shape", "x", "s");
  tu_node (m->graph, "Slice", "first", "s,start,end", "s0");
  tu_node (m->graph, "Concat", "flat_shape", "s0,minus_one", "fs");
  owb_node_add_attribute (g_ptr_array_index (m->graph->nodes, 2), "axis", OWB_ATTR_INT)->i = 0;
  tu_node (m->graph, "Reshape", "flatten", "x,fs", "flat");
  tu_node (m->graph, "Gather", "seq_len", "s,one", "n");
  tu_node (m->graph, "Range", "positions", "zero,n,one", "pos");
  tu_node (m->graph, "Slice", "tail", "s,last_two,big", "st");
  tu_node (m->graph, "Cast", "cast", "st", "st32");
  owb_node_add_attribute (g_ptr_array_index (m->graph->nodes, 7), "to", OWB_ATTR_INT)->i = OWB_TYPE_INT32;
  tu_node (m->graph, "Cast", "cast_back", "st32", "st64");
  owb_node_add_attribute (g_ptr_array_index (m->graph->nodes, 8), "to", OWB_ATTR_INT)->i = OWB_TYPE_INT64;
  tu_node (m->graph, "ConstantOfShape", "mask", "st64", "mask");
  add_ints (m, "ones", 1, (int64_t[]){ 1 }, 1);
  tu_node (m->graph, "Expand", "expand", "ones,s", "e");
  for (int i = 0; i < 5; i++)
    {
      const char *outs[] = { "flat", "pos", "mask", "e", "st64" };
      tu_add_value (m->graph->outputs, outs[i], OWB_TYPE_FLOAT, 0, NULL, NULL);
      ((OwbValueInfo *) g_ptr_array_index (m->graph->outputs, i))->has_type = FALSE;
    }
  GError *error = NULL;
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  assert_type (m, "flat", "float32[batch,?]");
  assert_type (m, "pos", "int64[seq]");
  assert_type (m, "st64", "int64[2]");
  assert_type (m, "mask", "float32[seq,8]");
  assert_type (m, "e", "int64[batch,seq,8]");
}

/* A value_info the file declares wrongly (stale dims) may make a propagated Reshape target
 * impossible; the node is then inferred as it was without propagation, and the model loads. */
static void
test_data_propagation_stale_declaration (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "z", OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, 6, 8 }, NULL);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, -1, 8 }, NULL);
  tu_node (m->graph, "Relu", "relu", "x", "y");
  tu_add_value (m->graph->value_infos, "y", OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, 5, 8 }, NULL);
  tu_node (m->graph, "Shape", "shape", "y", "s");
  tu_node (m->graph, "Reshape", "reshape", "z,s", "out");
  tu_add_value (m->graph->outputs, "out", OWB_TYPE_FLOAT, 0, NULL, NULL);
  ((OwbValueInfo *) g_ptr_array_index (m->graph->outputs, 0))->has_type = FALSE;
  GError *error = NULL;
  gboolean ok = owb_model_infer_shapes (m, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  assert_type (m, "out", "float32[?,?,?]");
}

/* PyTorch's expand(-1, 3, -1): Expand (t, Where (Equal (s, -1), ConstantOfShape (Shape (s), 1), s)). */
static void
test_data_propagation_expand_pattern (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "t", OWB_TYPE_FLOAT, 3, (int64_t[]){ 1, 1, 4 }, NULL);
  add_ints (m, "s", 1, (int64_t[]){ -1, 3, -1 }, 3);
  add_ints (m, "minus_one", 0, (int64_t[]){ -1 }, 1);
  OwbTensor *one = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ 1 }, NULL);
  ((int64_t *) one->data)[0] = 1;
  tu_node (m->graph, "Shape", "shape", "s", "sn");
  OwbNode *cos = tu_node (m->graph, "ConstantOfShape", "ones", "sn", "ones");
  owb_node_add_attribute (cos, "value", OWB_ATTR_TENSOR)->t = one;
  tu_node (m->graph, "Equal", "is_keep", "s,minus_one", "keep");
  tu_node (m->graph, "Where", "sizes", "keep,ones,s", "w");
  tu_node (m->graph, "Expand", "expand", "t,w", "e");
  tu_add_value (m->graph->outputs, "e", OWB_TYPE_FLOAT, 0, NULL, NULL);
  ((OwbValueInfo *) g_ptr_array_index (m->graph->outputs, 0))->has_type = FALSE;
  GError *error = NULL;
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  assert_type (m, "e", "float32[1,3,4]");
}

/* The channels-last pools of the engine's domain infer through the ONNX pool schemas with their own
 * nodes: NhwcMaxPool takes MaxPool's rules (8-bit inputs, dilations), NhwcAveragePool
 * AveragePool's, whatever the node's op_type says. */
static void
test_nhwc_pool_through_onnx_schema (void)
{
  g_autoptr (OwbModel) m = tu_model_new (22);
  owb_model_set_opset (m, "ai.onnx.workbench", 1);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_UINT8, 4, (int64_t[]){ 1, 9, 9, 4 }, NULL);
  tu_add_value (m->graph->inputs, "f", OWB_TYPE_FLOAT, 4, (int64_t[]){ 1, 9, 9, 4 }, NULL);
  OwbNode *mp = tu_node (m->graph, "NhwcMaxPool", "mp", "x", "y");
  OwbNode *ap = tu_node (m->graph, "NhwcAveragePool", "ap", "f", "z");
  for (OwbNode **n = (OwbNode *[]){ mp, ap, NULL }; *n; n++)
    {
      g_free ((*n)->domain);
      (*n)->domain = g_strdup ("ai.onnx.workbench");
      tu_set_ints (*n, "kernel_shape", 2, (int64_t[]){ 3, 3 });
      tu_set_ints (*n, "strides", 2, (int64_t[]){ 2, 2 });
      tu_set_ints (*n, "dilations", 2, (int64_t[]){ 2, 2 });
    }
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_UINT8, 4, (int64_t[]){ -1, -1, -1, -1 }, NULL);
  tu_add_value (m->graph->outputs, "z", OWB_TYPE_FLOAT, 4, (int64_t[]){ -1, -1, -1, -1 }, NULL);
  GError *error = NULL;
  g_assert_true (owb_model_infer_shapes (m, &error));
  g_assert_no_error (error);
  /* (9 - (3 - 1) * 2 - 1) / 2 + 1 = 3 with the dilations both pool versions have */
  assert_type (m, "y", "uint8[1,3,3,4]");
  assert_type (m, "z", "float32[1,3,3,4]");
}

/* A flag attribute out of {0, 1} is refused with its name and value, whichever op reads it. */
static void
test_flag_attributes (void)
{
  static const struct {
    const char *op, *inputs, *attr;
    int64_t value;
    const char *message;
  } cases[] = {
    { "Mod", "a,b", "fmod", 2, "fmod must be 0 or 1, not 2" },
    { "IsInf", "a", "detect_positive", 3, "detect_positive must be 0 or 1, not 3" },
    { "IsInf", "a", "detect_negative", -1, "detect_negative must be 0 or 1, not -1" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (OwbModel) m = tu_model_new (13);
      tu_add_value (m->graph->inputs, "a", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
      tu_add_value (m->graph->inputs, "b", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
      OwbNode *n = tu_node (m->graph, cases[i].op, "flagged", cases[i].inputs, "y");
      tu_set_int (n, cases[i].attr, cases[i].value);
      tu_add_untyped_output (m->graph->outputs, "y");
      GError *error = NULL;
      g_assert_false (owb_model_infer_shapes (m, &error));
      g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL);
      g_assert_nonnull (strstr (error->message, "flagged"));
      g_assert_nonnull (strstr (error->message, cases[i].message));
      g_error_free (error);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/symbolic-broadcast", test_symbolic_broadcast);
  g_test_add_func ("/infer/broadcast-mismatch", test_broadcast_mismatch);
  g_test_add_func ("/infer/constant-reshape", test_constant_reshape);
  g_test_add_func ("/infer/nhwc-pool-through-onnx-schema", test_nhwc_pool_through_onnx_schema);
  g_test_add_func ("/infer/flag-attributes", test_flag_attributes);
  g_test_add_func ("/infer/unknown-op", test_unknown_op_leaves_unknown);
  g_test_add_func ("/infer/data-propagation/concrete", test_data_propagation_concrete);
  g_test_add_func ("/infer/data-propagation/symbolic", test_data_propagation_symbolic);
  g_test_add_func ("/infer/data-propagation/ops", test_data_propagation_ops);
  g_test_add_func ("/infer/data-propagation/expand-pattern", test_data_propagation_expand_pattern);
  g_test_add_func ("/infer/data-propagation/stale-declaration", test_data_propagation_stale_declaration);
  return g_test_run ();
}
