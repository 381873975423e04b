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
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_UNDEFINED, 0, NULL, NULL);
  ((OwbValueInfo *) g_ptr_array_index (m->graph->outputs, 0))->has_type = FALSE;
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/infer/symbolic-broadcast", test_symbolic_broadcast);
  g_test_add_func ("/infer/broadcast-mismatch", test_broadcast_mismatch);
  g_test_add_func ("/infer/constant-reshape", test_constant_reshape);
  g_test_add_func ("/infer/unknown-op", test_unknown_op_leaves_unknown);
  return g_test_run ();
}
