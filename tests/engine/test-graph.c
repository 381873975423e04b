/* test-graph.c: the IR: building models, graphs and nodes, copying them, attribute getters. */
#include <owb/owb.h>

#include <string.h>

static OwbTensor *
float_tensor (int n, float start)
{
  int64_t dims[1] = { n };
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, 1, dims, NULL);
  g_assert_nonnull (t);
  for (int i = 0; i < n; i++)
    ((float *) t->data)[i] = start + i;
  return t;
}

static void
test_model_opsets (void)
{
  g_autoptr (OwbModel) model = owb_model_new ();
  g_assert_cmpint (model->ref_count, ==, 1);
  g_assert_cmpint (owb_model_get_opset (model, ""), ==, -1);
  owb_model_set_opset (model, "", 13);
  owb_model_set_opset (model, "com.microsoft", 1);
  g_assert_cmpint (owb_model_get_opset (model, ""), ==, 13);
  g_assert_cmpint (owb_model_get_opset (model, "ai.onnx"), ==, 13);
  g_assert_cmpint (owb_model_get_opset (model, NULL), ==, 13);
  g_assert_cmpint (owb_model_get_opset (model, "com.microsoft"), ==, 1);
  g_assert_cmpint (owb_model_get_opset (model, "com.other"), ==, -1);
  /* Setting again replaces, also through the "ai.onnx" spelling. */
  owb_model_set_opset (model, "ai.onnx", 17);
  g_assert_cmpint (owb_model_get_opset (model, ""), ==, 17);
  g_assert_cmpuint (model->opset_imports->len, ==, 2);

  OwbModel *ref = owb_model_ref (model);
  g_assert_true (ref == model);
  g_assert_cmpint (model->ref_count, ==, 2);
  owb_model_unref (ref);
  owb_model_unref (NULL);
}

static void
test_node_attributes (void)
{
  g_autoptr (OwbNode) node = owb_node_new ("Conv", NULL, "conv1");
  g_assert_cmpstr (node->domain, ==, "");
  owb_node_add_input (node, "x");
  owb_node_add_input (node, "");
  owb_node_add_input (node, "w");
  owb_node_add_output (node, "y");
  g_assert_cmpint (node->n_inputs, ==, 3);
  g_assert_cmpstr (owb_node_get_input (node, 0), ==, "x");
  g_assert_null (owb_node_get_input (node, 1));
  g_assert_cmpstr (owb_node_get_input (node, 2), ==, "w");
  g_assert_null (owb_node_get_input (node, 3));
  /* Setting an input past the end adds absent ones before it. */
  owb_node_set_input (node, 1, "w2");
  g_assert_cmpstr (owb_node_get_input (node, 1), ==, "w2");
  owb_node_set_input (node, 4, "b");
  g_assert_cmpint (node->n_inputs, ==, 5);
  g_assert_null (owb_node_get_input (node, 3));
  g_assert_cmpstr (owb_node_get_input (node, 4), ==, "b");
  g_assert_null (owb_node_get_input (node, -1));
  g_assert_cmpstr (owb_node_get_output (node, 0), ==, "y");
  g_assert_null (owb_node_get_output (node, 1));

  owb_node_add_attribute (node, "group", OWB_ATTR_INT)->i = 2;
  owb_node_add_attribute (node, "alpha", OWB_ATTR_FLOAT)->f = 0.5f;
  OwbAttribute *a = owb_node_add_attribute (node, "auto_pad", OWB_ATTR_STRING);
  a->s = g_strdup ("SAME_UPPER");
  a->s_len = strlen (a->s);
  a = owb_node_add_attribute (node, "pads", OWB_ATTR_INTS);
  a->n = 4;
  a->ints = g_new (int64_t, 4);
  for (int i = 0; i < 4; i++)
    a->ints[i] = i + 1;
  a = owb_node_add_attribute (node, "scales", OWB_ATTR_FLOATS);
  a->n = 2;
  a->floats = g_new (float, 2);
  a->floats[0] = 1.5f;
  a->floats[1] = 2.5f;

  g_assert_cmpint (owb_node_get_int (node, "group", 1), ==, 2);
  g_assert_cmpint (owb_node_get_int (node, "missing", 7), ==, 7);
  /* A present attribute of another type gives the default. */
  g_assert_cmpint (owb_node_get_int (node, "alpha", 9), ==, 9);
  g_assert_cmpfloat (owb_node_get_float (node, "alpha", 1.0f), ==, 0.5f);
  g_assert_cmpfloat (owb_node_get_float (node, "group", 3.0f), ==, 3.0f);
  g_assert_cmpstr (owb_node_get_string (node, "auto_pad", "NOTSET"), ==, "SAME_UPPER");
  g_assert_cmpstr (owb_node_get_string (node, "nope", "NOTSET"), ==, "NOTSET");
  int n = -1;
  const int64_t *pads = owb_node_get_ints (node, "pads", &n);
  g_assert_cmpint (n, ==, 4);
  g_assert_cmpint (pads[3], ==, 4);
  g_assert_null (owb_node_get_ints (node, "group", &n));
  g_assert_cmpint (n, ==, 0);
  const float *scales = owb_node_get_floats (node, "scales", &n);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpfloat (scales[1], ==, 2.5f);
  g_assert_null (owb_node_get_floats (node, "pads", &n));

  /* Adding an attribute with an existing name replaces it. */
  owb_node_add_attribute (node, "group", OWB_ATTR_INT)->i = 4;
  g_assert_cmpint (node->n_attributes, ==, 5);
  g_assert_cmpint (owb_node_get_int (node, "group", 1), ==, 4);
}

static void
test_node_describe (void)
{
  g_autoptr (OwbNode) node = owb_node_new ("Conv", "", "conv1");
  g_autofree char *d1 = owb_node_describe (node);
  g_assert_cmpstr (d1, ==, "node 'conv1' (Conv)");
  node->opset = 13;
  g_autofree char *d2 = owb_node_describe (node);
  g_assert_cmpstr (d2, ==, "node 'conv1' (Conv, opset 13)");

  g_autoptr (OwbNode) unnamed = owb_node_new ("FusedConv", "com.microsoft", NULL);
  owb_node_add_output (unnamed, "out");
  unnamed->opset = 1;
  g_autofree char *d3 = owb_node_describe (unnamed);
  g_assert_cmpstr (d3, ==, "node with output 'out' (com.microsoft.FusedConv, opset 1)");
}

static void
test_claims (void)
{
  g_autoptr (OwbNode) node = owb_node_new ("Relu", "", "r");
  owb_node_add_decline (node, "cuda", "no kernel for int8");
  node->provider = g_strdup ("cpu");
  g_assert_cmpuint (node->declines->len, ==, 1);
  OwbDecline *d = g_ptr_array_index (node->declines, 0);
  g_assert_cmpstr (d->provider, ==, "cuda");
  g_assert_cmpstr (d->reason, ==, "no kernel for int8");
  g_autoptr (OwbNode) copy = owb_node_dup (node);
  g_assert_cmpstr (copy->provider, ==, "cpu");
  g_assert_cmpuint (copy->declines->len, ==, 1);
  owb_node_clear_claims (node);
  g_assert_null (node->provider);
  g_assert_cmpuint (node->declines->len, ==, 0);
}

static void
test_initializers (void)
{
  g_autoptr (OwbGraph) graph = owb_graph_new ("main");
  owb_graph_add_initializer (graph, "a", float_tensor (2, 0));
  owb_graph_add_initializer (graph, "b", float_tensor (3, 10));
  owb_graph_add_initializer (graph, "c", float_tensor (4, 20));
  g_assert_cmpuint (graph->initializers->len, ==, 3);
  g_assert_cmpint (owb_graph_get_initializer (graph, "b")->nelems, ==, 3);
  g_assert_null (owb_graph_get_initializer (graph, "zz"));

  /* Replacing keeps one entry under the name. */
  owb_graph_add_initializer (graph, "b", float_tensor (5, 0));
  g_assert_cmpuint (graph->initializers->len, ==, 3);
  g_assert_cmpint (owb_graph_get_initializer (graph, "b")->nelems, ==, 5);

  /* Removing keeps the index of the others right. */
  g_assert_true (owb_graph_remove_initializer (graph, "a"));
  g_assert_false (owb_graph_remove_initializer (graph, "a"));
  g_assert_null (owb_graph_get_initializer (graph, "a"));
  g_assert_cmpint (owb_graph_get_initializer (graph, "b")->nelems, ==, 5);
  g_assert_cmpint (owb_graph_get_initializer (graph, "c")->nelems, ==, 4);
  g_assert_cmpfloat (((float *) owb_graph_get_initializer (graph, "c")->data)[0], ==, 20.0f);
  g_assert_cmpstr (g_ptr_array_index (graph->initializer_names, 0), ==, "b");
  g_assert_cmpuint (g_hash_table_size (graph->initializer_index), ==, 2);
}

static OwbGraph *
build_graph (void)
{
  OwbGraph *graph = owb_graph_new ("main");
  OwbValueType t;
  int64_t dims[2] = { 1, 4 };
  owb_value_type_init_tensor (&t, OWB_TYPE_FLOAT, 2, dims);
  t.dims[0].param = g_intern_string ("batch");
  t.dims[0].value = -1;
  g_ptr_array_add (graph->inputs, owb_value_info_new ("x", &t));
  g_ptr_array_add (graph->inputs, owb_value_info_new ("w", &t));
  g_ptr_array_add (graph->outputs, owb_value_info_new ("y", NULL));
  g_ptr_array_add (graph->value_infos, owb_value_info_new ("h", &t));
  owb_graph_add_initializer (graph, "w", float_tensor (4, 1));

  OwbNode *add = owb_node_new ("Add", "", "add");
  owb_node_add_input (add, "x");
  owb_node_add_input (add, "w");
  owb_node_add_output (add, "h");
  owb_graph_add_node (graph, add);

  /* An If whose branches are subgraphs. */
  OwbNode *iff = owb_node_new ("If", "", "if");
  owb_node_add_input (iff, "cond");
  owb_node_add_output (iff, "y");
  for (int b = 0; b < 2; b++)
    {
      OwbGraph *branch = owb_graph_new (b ? "else" : "then");
      OwbNode *id = owb_node_new ("Identity", "", b ? "id_else" : "id_then");
      owb_node_add_input (id, "h");
      owb_node_add_output (id, b ? "ye" : "yt");
      owb_graph_add_node (branch, id);
      g_ptr_array_add (branch->outputs, owb_value_info_new (b ? "ye" : "yt", NULL));
      owb_node_add_attribute (iff, b ? "else_branch" : "then_branch", OWB_ATTR_GRAPH)->g = branch;
    }
  owb_graph_add_node (graph, iff);
  return graph;
}

static void
test_graph_structure (void)
{
  g_autoptr (OwbGraph) graph = build_graph ();
  OwbNode *iff = g_ptr_array_index (graph->nodes, 1);
  g_assert_true (iff->graph == graph);
  const OwbAttribute *then_branch = owb_node_get_attribute (iff, "then_branch");
  g_assert_nonnull (then_branch);
  g_assert_true (then_branch->g->parent == graph);

  OwbValueInfo *info = owb_graph_find_value_info (graph, "h");
  g_assert_nonnull (info);
  g_assert_true (info->has_type);
  g_assert_cmpstr (info->type.dims[0].param, ==, "batch");
  g_assert_nonnull (owb_graph_find_value_info (graph, "y"));
  g_assert_false (owb_graph_find_value_info (graph, "y")->has_type);
  g_assert_null (owb_graph_find_value_info (graph, "nothing"));

  /* Nodes by name: the graph's own, not its subgraphs'. */
  g_assert_true (owb_graph_find_node (graph, "add") == g_ptr_array_index (graph->nodes, 0));
  g_assert_true (owb_graph_find_node (graph, "if") == iff);
  g_assert_null (owb_graph_find_node (graph, "id_then"));
  g_assert_null (owb_graph_find_node (graph, NULL));
  g_assert_null (owb_graph_find_node (NULL, "add"));

  /* "w" is an initializer, so only "x" has to be fed. */
  g_autoptr (GPtrArray) feeds = owb_graph_dup_feed_inputs (graph);
  g_assert_cmpuint (feeds->len, ==, 1);
  g_assert_cmpstr (((OwbValueInfo *) g_ptr_array_index (feeds, 0))->name, ==, "x");
}

static void
test_graph_dup (void)
{
  g_autoptr (OwbGraph) graph = build_graph ();
  g_autoptr (OwbGraph) copy = owb_graph_dup (graph);
  g_assert_cmpstr (copy->name, ==, "main");
  g_assert_cmpuint (copy->nodes->len, ==, 2);
  g_assert_cmpuint (copy->inputs->len, ==, 2);
  g_assert_cmpuint (copy->outputs->len, ==, 1);
  g_assert_cmpuint (copy->value_infos->len, ==, 1);
  OwbNode *add = g_ptr_array_index (graph->nodes, 0);
  OwbNode *add_copy = g_ptr_array_index (copy->nodes, 0);
  g_assert_true (add != add_copy);
  g_assert_true (add_copy->graph == copy);
  g_assert_true (add->inputs != add_copy->inputs);
  g_assert_cmpstr (add_copy->inputs[1], ==, "w");
  OwbNode *iff_copy = g_ptr_array_index (copy->nodes, 1);
  const OwbAttribute *then_copy = owb_node_get_attribute (iff_copy, "then_branch");
  const OwbAttribute *then_orig = owb_node_get_attribute (g_ptr_array_index (graph->nodes, 1), "then_branch");
  g_assert_true (then_copy->g != then_orig->g);
  g_assert_true (then_copy->g->parent == copy);
  g_assert_cmpuint (then_copy->g->nodes->len, ==, 1);
  g_assert_cmpstr (owb_graph_find_value_info (copy, "h")->type.dims[0].param, ==, "batch");
  OwbTensor *w = owb_graph_get_initializer (copy, "w");
  g_assert_nonnull (w);
  g_assert_cmpfloat (((float *) w->data)[3], ==, 4.0f);

  /* The copy is independent: changing it leaves the original alone. */
  owb_graph_remove_initializer (copy, "w");
  g_free (add_copy->inputs[0]);
  add_copy->inputs[0] = g_strdup ("changed");
  g_assert_nonnull (owb_graph_get_initializer (graph, "w"));
  g_assert_cmpstr (add->inputs[0], ==, "x");
}

static void
test_model_dup (void)
{
  g_autoptr (OwbModel) model = owb_model_new ();
  model->producer_name = g_strdup ("pytorch");
  model->ir_version = 8;
  owb_model_set_opset (model, "", 17);
  owb_model_set_opset (model, "ai.onnx.ml", 3);
  OwbStringPair pair = { g_strdup ("author"), g_strdup ("me") };
  g_array_append_val (model->metadata, pair);
  model->graph = build_graph ();
  model->graph->model = model;

  g_autoptr (OwbModel) copy = owb_model_dup (model);
  g_assert_cmpstr (copy->producer_name, ==, "pytorch");
  g_assert_cmpint (copy->ir_version, ==, 8);
  g_assert_cmpint (owb_model_get_opset (copy, ""), ==, 17);
  g_assert_cmpint (owb_model_get_opset (copy, "ai.onnx.ml"), ==, 3);
  g_assert_cmpuint (copy->metadata->len, ==, 1);
  g_assert_cmpstr (g_array_index (copy->metadata, OwbStringPair, 0).value, ==, "me");
  g_assert_true (copy->graph != model->graph);
  g_assert_true (copy->graph->model == copy);
  /* Subgraphs belong to the copy too, so an optimizer working on it never reaches the original. */
  OwbNode *iff = g_ptr_array_index (copy->graph->nodes, 1);
  g_assert_true (owb_node_get_attribute (iff, "then_branch")->g->model == copy);
  /* Initializer data is shared, not copied. */
  g_assert_true (owb_graph_get_initializer (copy->graph, "w") == owb_graph_get_initializer (model->graph, "w"));
  owb_model_set_opset (copy, "", 18);
  g_assert_cmpint (owb_model_get_opset (model, ""), ==, 17);
}

static void
test_attribute_copy (void)
{
  g_autoptr (OwbNode) node = owb_node_new ("Custom", "", "n");
  OwbAttribute *a = owb_node_add_attribute (node, "names", OWB_ATTR_STRINGS);
  a->n = 2;
  a->strings = g_new0 (char *, 3);
  a->strings[0] = g_strdup ("one");
  a->strings[1] = g_strdup ("two");
  a = owb_node_add_attribute (node, "value", OWB_ATTR_TENSOR);
  a->t = float_tensor (3, 7);
  a = owb_node_add_attribute (node, "ts", OWB_ATTR_TENSORS);
  a->n = 2;
  a->tensors = g_new0 (OwbTensor *, 3);
  a->tensors[0] = float_tensor (1, 0);
  a->tensors[1] = float_tensor (2, 0);
  a = owb_node_add_attribute (node, "blob", OWB_ATTR_STRING);
  a->s = g_malloc (4);
  memcpy (a->s, "a\0b", 4);
  a->s_len = 3;

  g_autoptr (OwbNode) copy = owb_node_dup (node);
  const OwbAttribute *names = owb_node_get_attribute (copy, "names");
  g_assert_cmpint (names->n, ==, 2);
  g_assert_cmpstr (names->strings[1], ==, "two");
  g_assert_null (names->strings[2]);
  g_assert_true (names->strings != owb_node_get_attribute (node, "names")->strings);
  const OwbAttribute *value = owb_node_get_attribute (copy, "value");
  g_assert_cmpfloat (((float *) value->t->data)[2], ==, 9.0f);
  g_assert_cmpint (owb_node_get_attribute (copy, "ts")->tensors[1]->nelems, ==, 2);
  const OwbAttribute *blob = owb_node_get_attribute (copy, "blob");
  g_assert_cmpuint (blob->s_len, ==, 3);
  g_assert_cmpmem (blob->s, 3, "a\0b", 3);

  OwbAttribute cleared;
  owb_attribute_copy (&cleared, owb_node_get_attribute (node, "names"));
  owb_attribute_clear (&cleared);
  g_assert_null (cleared.name);
  g_assert_null (cleared.strings);
}

/* What `owb inspect` and the inspector list: op counts over the graph and its bodies, the default
 * domain under either name, most used first and ties by name. */
static void
test_count_ops (void)
{
  g_autoptr (OwbGraph) graph = build_graph ();
  OwbNode *add = owb_node_new ("Add", "ai.onnx", "add2");
  owb_node_add_input (add, "h");
  owb_node_add_input (add, "h");
  owb_node_add_output (add, "h2");
  owb_graph_add_node (graph, add);
  OwbNode *gelu = owb_node_new ("Gelu", "com.microsoft", "gelu");
  owb_node_add_input (gelu, "h2");
  owb_node_add_output (gelu, "g");
  owb_graph_add_node (graph, gelu);

  guint nested = 0;
  g_autoptr (GArray) ops = owb_graph_count_ops (graph, &nested);
  g_assert_cmpuint (nested, ==, 2);
  static const struct { const char *op; guint count; } want[] = {
    { "Add", 2 }, { "Identity", 2 }, { "If", 1 }, { "com.microsoft.Gelu", 1 },
  };
  g_assert_cmpuint (ops->len, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < ops->len; i++)
    {
      g_assert_cmpstr (g_array_index (ops, OwbOpCount, i).op, ==, want[i].op);
      g_assert_cmpuint (g_array_index (ops, OwbOpCount, i).count, ==, want[i].count);
    }

  /* A body on its own: its nodes are not nested in it. */
  OwbNode *iff = g_ptr_array_index (graph->nodes, 1);
  g_autoptr (GArray) body_ops = owb_graph_count_ops (owb_node_get_attribute (iff, "then_branch")->g, NULL);
  g_assert_cmpuint (body_ops->len, ==, 1);
  g_assert_cmpstr (g_array_index (body_ops, OwbOpCount, 0).op, ==, "Identity");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/graph/model-opsets", test_model_opsets);
  g_test_add_func ("/graph/node-attributes", test_node_attributes);
  g_test_add_func ("/graph/node-describe", test_node_describe);
  g_test_add_func ("/graph/claims", test_claims);
  g_test_add_func ("/graph/initializers", test_initializers);
  g_test_add_func ("/graph/structure", test_graph_structure);
  g_test_add_func ("/graph/dup", test_graph_dup);
  g_test_add_func ("/graph/model-dup", test_model_dup);
  g_test_add_func ("/graph/attribute-copy", test_attribute_copy);
  g_test_add_func ("/graph/count-ops", test_count_ops);
  return g_test_run ();
}
