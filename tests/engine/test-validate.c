/* test-validate.c: structural validation errors name what is wrong; topological sorting. */
#include "test-util.h"

static void
expect_invalid (OwbModel *m, const char *fragment)
{
  GError *error = NULL;
  g_assert_false (owb_model_validate (m, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL);
  if (!strstr (error->message, fragment))
    g_error ("message '%s' lacks '%s'", error->message, fragment);
  g_error_free (error);
}

static void
test_dangling_input (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_node (m->graph, "Add", "add1", "x,ghost", "y");
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  expect_invalid (m, "ghost");
}

static void
test_cycle (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_node (m->graph, "Add", "a", "x,c", "b");
  tu_node (m->graph, "Relu", "r", "b", "c");
  tu_add_value (m->graph->outputs, "c", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  expect_invalid (m, "cycle");
}

static void
test_duplicate_output (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_node (m->graph, "Relu", "r1", "x", "y");
  tu_node (m->graph, "Relu", "r2", "x", "y");
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  expect_invalid (m, "'y'");
}

static void
test_unknown_domain_and_opset (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  OwbNode *n = tu_node (m->graph, "Frob", "f", "x", "y");
  g_free (n->domain);
  n->domain = g_strdup ("com.example");
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  expect_invalid (m, "com.example");

  g_autoptr (OwbModel) m2 = tu_model_new (99);
  tu_add_value (m2->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_node (m2->graph, "Relu", "r", "x", "y");
  tu_add_value (m2->graph->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  expect_invalid (m2, "opset 99");
}

static void
test_missing_output (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_node (m->graph, "Relu", "r", "x", "y");
  tu_add_value (m->graph->outputs, "z", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  expect_invalid (m, "'z'");
}

static void
test_sort (void)
{
  g_autoptr (OwbModel) m = tu_model_new (13);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_node (m->graph, "Relu", "third", "b", "c");
  tu_node (m->graph, "Relu", "second", "a", "b");
  tu_node (m->graph, "Relu", "first", "x", "a");
  tu_node (m->graph, "Neg", "free", "x", "d");
  tu_add_value (m->graph->outputs, "c", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  tu_add_value (m->graph->outputs, "d", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  GError *error = NULL;
  g_assert_true (owb_model_validate (m, &error));
  g_assert_no_error (error);
  const char *order[] = { "first", "second", "third", "free" };
  for (int i = 0; i < 4; i++)
    g_assert_cmpstr (((OwbNode *) g_ptr_array_index (m->graph->nodes, i))->name, ==, order[i]);
  g_assert_cmpint (((OwbNode *) g_ptr_array_index (m->graph->nodes, 0))->opset, ==, 13);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/validate/dangling-input", test_dangling_input);
  g_test_add_func ("/validate/cycle", test_cycle);
  g_test_add_func ("/validate/duplicate-output", test_duplicate_output);
  g_test_add_func ("/validate/unknown-domain-and-opset", test_unknown_domain_and_opset);
  g_test_add_func ("/validate/missing-output", test_missing_output);
  g_test_add_func ("/validate/sort", test_sort);
  return g_test_run ();
}
