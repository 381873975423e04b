/* test-kernels-ml.c: shape inference and CPU kernels of the ml op family (string ops, ai.onnx.ml models and
 * encoders), on what the ONNX conformance cases leave out: symbolic dims, bad attributes and data, binary
 * classifiers, tree aggregates and NaN routing, label maps, string edge cases. */
#include <owb/owb.h>

#include <math.h>
#include <string.h>
#include "../engine/test-util.h"
#include "kernel-test-util.h"

#define ML "ai.onnx.ml"

/* ---- building nodes ---- */

static void
set_strings (OwbNode *node, const char *name, int n, const char *const *v)
{
  OwbAttribute *a = owb_node_add_attribute (node, name, OWB_ATTR_STRINGS);
  a->n = n;
  a->strings = g_new0 (char *, n + 1);
  for (int i = 0; i < n; i++)
    a->strings[i] = g_strdup (v[i]);
}

#define INTS(node, name, ...)                                                                                         \
  tu_set_ints (node, name, G_N_ELEMENTS (((int64_t[]) { __VA_ARGS__ })), (int64_t[]) { __VA_ARGS__ })
#define FLOATS(node, name, ...)                                                                                       \
  tu_set_floats (node, name, G_N_ELEMENTS (((float[]) { __VA_ARGS__ })), (float[]) { __VA_ARGS__ })
#define STRINGS(node, name, ...)                                                                                      \
  set_strings (node, name, G_N_ELEMENTS (((const char *[]) { __VA_ARGS__ })), (const char *[]) { __VA_ARGS__ })

/* ---- inference ---- */

static void
test_infer_classifiers (void)
{
  OwbValueType out[2];
  OwbValueType x = VT (OWB_TYPE_FLOAT, "batch", "3");

  /* Binary linear classifier: one row of coefficients, two labels, two score columns. */
  g_autoptr (OwbNode) lin = node_new_in_domain ("LinearClassifier", ML, 1, 2);
  FLOATS (lin, "coefficients", 1, 2, 3);
  FLOATS (lin, "intercepts", 0.5);
  INTS (lin, "classlabels_ints", 4, 7);
  g_assert_true (infer_node (lin, 1, &x, NULL, out, NULL));
  assert_type (&out[0], "int64[batch]");
  assert_type (&out[1], "float32[batch,2]");
  /* Coefficients that do not split into rows of 4 features. */
  OwbValueType x4 = VT (OWB_TYPE_FLOAT, "batch", "4");
  assert_infer_fails (lin, 1, &x4, NULL, "coefficients");
  /* A vector input is one row. */
  OwbValueType v = VT (OWB_TYPE_DOUBLE, "3");
  g_assert_true (infer_node (lin, 1, &v, NULL, out, NULL));
  assert_type (&out[1], "float32[1,2]");

  g_autoptr (OwbNode) bad = node_new_in_domain ("LinearClassifier", ML, 1, 2);
  FLOATS (bad, "coefficients", 1, 2, 3);
  tu_set_string (bad, "post_transform", "SIGMOID");
  assert_infer_fails (bad, 1, &x, NULL, "SIGMOID");

  /* Trees: string labels give string outputs; the score columns follow the labels. */
  g_autoptr (OwbNode) tree = node_new_in_domain ("TreeEnsembleClassifier", ML, 1, 2);
  STRINGS (tree, "classlabels_strings", "a", "b", "c");
  g_assert_true (infer_node (tree, 1, &x, NULL, out, NULL));
  assert_type (&out[0], "string[batch]");
  assert_type (&out[1], "float32[batch,3]");
  OwbValueType x3 = VT (OWB_TYPE_FLOAT, "batch", "3", "2");
  assert_infer_fails (tree, 1, &x3, NULL, "rank");

  /* SVM: pairwise scores without probabilities, one per class with them. */
  g_autoptr (OwbNode) svm = node_new_in_domain ("SVMClassifier", ML, 1, 2);
  INTS (svm, "classlabels_ints", 0, 1, 2, 3);
  INTS (svm, "vectors_per_class", 1, 1, 1, 1);
  g_assert_true (infer_node (svm, 1, &x, NULL, out, NULL));
  assert_type (&out[1], "float32[batch,6]");
  FLOATS (svm, "prob_a", 1, 1, 1, 1, 1, 1);
  g_assert_true (infer_node (svm, 1, &x, NULL, out, NULL));
  assert_type (&out[1], "float32[batch,4]");
  tu_set_string (svm, "kernel_type", "CUBIC");
  assert_infer_fails (svm, 1, &x, NULL, "CUBIC");

  /* TreeEnsemble (5): output has the input's type; enum attributes are range-checked. */
  g_autoptr (OwbNode) te = node_new_in_domain ("TreeEnsemble", ML, 1, 1);
  tu_set_int (te, "n_targets", 3);
  OwbValueType xd = VT (OWB_TYPE_DOUBLE, "n", "2");
  g_assert_true (infer_node (te, 5, &xd, NULL, out, NULL));
  assert_type (&out[0], "float64[n,3]");
  tu_set_int (te, "post_transform", 9);
  assert_infer_fails (te, 5, &xd, NULL, "post_transform");
  g_autoptr (OwbNode) te0 = node_new_in_domain ("TreeEnsemble", ML, 1, 1);
  tu_set_int (te0, "n_targets", 0);
  assert_infer_fails (te0, 5, &xd, NULL, "n_targets");
}

static void
test_infer_encoders (void)
{
  OwbValueType out[2];
  OwbValueType s = VT (OWB_TYPE_STRING, "batch", "2");

  /* LabelEncoder v2: the output type is the values' type; keys must match the input. */
  g_autoptr (OwbNode) le = node_new_in_domain ("LabelEncoder", ML, 1, 1);
  STRINGS (le, "keys_strings", "a", "b");
  FLOATS (le, "values_floats", 1, 2);
  g_assert_true (infer_node (le, 2, &s, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,2]");
  OwbValueType i = VT (OWB_TYPE_INT64, "batch");
  assert_infer_fails (le, 2, &i, NULL, "keys");
  g_autoptr (OwbNode) le2 = node_new_in_domain ("LabelEncoder", ML, 1, 1);
  STRINGS (le2, "keys_strings", "a");
  INTS (le2, "keys_int64s", 1);
  FLOATS (le2, "values_floats", 1);
  assert_infer_fails (le2, 2, &s, NULL, "only one");
  /* LabelEncoder v1 swaps string and int64. */
  g_autoptr (OwbNode) le1 = node_new_in_domain ("LabelEncoder", ML, 1, 1);
  STRINGS (le1, "classes_strings", "x", "y");
  g_assert_true (infer_node (le1, 1, &i, NULL, out, NULL));
  assert_type (&out[0], "string[batch]");

  g_autoptr (OwbNode) oh = node_new_in_domain ("OneHotEncoder", ML, 1, 1);
  STRINGS (oh, "cats_strings", "r", "g", "b");
  g_assert_true (infer_node (oh, 1, &s, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,2,3]");
  INTS (oh, "cats_int64s", 1, 2);
  assert_infer_fails (oh, 1, &s, NULL, "exactly one");

  /* ArrayFeatureExtractor: a vector gives one row; the index count comes from the indices' shape. */
  g_autoptr (OwbNode) afe = node_new_in_domain ("ArrayFeatureExtractor", ML, 2, 1);
  OwbValueType at[2] = { VT (OWB_TYPE_FLOAT, "7"), VT (OWB_TYPE_INT64, "1", "k") };
  g_assert_true (infer_node (afe, 1, at, NULL, out, NULL));
  assert_type (&out[0], "float32[1,?]");
  at[0] = VT (OWB_TYPE_STRING, "batch", "7");
  at[1] = VT (OWB_TYPE_INT64, "2", "3");
  g_assert_true (infer_node (afe, 1, at, NULL, out, NULL));
  assert_type (&out[0], "string[batch,6]");
  at[1] = VT (OWB_TYPE_INT32, "2");
  assert_infer_fails (afe, 1, at, NULL, "int64");

  g_autoptr (OwbNode) fv = node_new_in_domain ("FeatureVectorizer", ML, 2, 1);
  INTS (fv, "inputdimensions", 2, 3);
  OwbValueType ft[2] = { VT (OWB_TYPE_FLOAT, "batch", "2"), VT (OWB_TYPE_INT64, "batch", "5") };
  g_assert_true (infer_node (fv, 1, ft, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,5]");
  g_autoptr (OwbNode) fv1 = node_new_in_domain ("FeatureVectorizer", ML, 2, 1);
  INTS (fv1, "inputdimensions", 2);
  assert_infer_fails (fv1, 1, ft, NULL, "inputdimensions");
}

static void
test_infer_strings (void)
{
  OwbValueType out[2];
  /* StringSplit: the substrings axis is data-dependent, the counts keep the input shape. */
  g_autoptr (OwbNode) split = node_new_in_domain ("StringSplit", "", 1, 2);
  OwbValueType s = VT (OWB_TYPE_STRING, "batch", "3");
  g_assert_true (infer_node (split, 20, &s, NULL, out, NULL));
  assert_type (&out[0], "string[batch,3,?]");
  assert_type (&out[1], "int64[batch,3]");
  OwbValueType f = VT (OWB_TYPE_FLOAT, "3");
  assert_infer_fails (split, 20, &f, NULL, "string");

  g_autoptr (OwbNode) norm = node_new_in_domain ("StringNormalizer", "", 1, 1);
  OwbValueType one_row = VT (OWB_TYPE_STRING, "1", "c");
  g_assert_true (infer_node (norm, 10, &one_row, NULL, out, NULL));
  assert_type (&out[0], "string[1,?]");
  OwbValueType two_rows = VT (OWB_TYPE_STRING, "2", "c");
  assert_infer_fails (norm, 10, &two_rows, NULL, "[1, C]");
  tu_set_string (norm, "case_change_action", "TITLE");
  assert_infer_fails (norm, 10, &one_row, NULL, "TITLE");

  g_autoptr (OwbNode) cat = node_new_in_domain ("StringConcat", "", 2, 1);
  OwbValueType ct[2] = { VT (OWB_TYPE_STRING, "batch", "1"), VT (OWB_TYPE_STRING, "4") };
  g_assert_true (infer_node (cat, 20, ct, NULL, out, NULL));
  assert_type (&out[0], "string[batch,4]");

  g_autoptr (OwbNode) re = node_new_in_domain ("RegexFullMatch", "", 1, 1);
  assert_infer_fails (re, 20, &s, NULL, "pattern");

  g_autoptr (OwbNode) tfidf = node_new_in_domain ("TfIdfVectorizer", "", 1, 1);
  tu_set_string (tfidf, "mode", "TF");
  INTS (tfidf, "ngram_indexes", 0, 4, 2);
  INTS (tfidf, "pool_int64s", 1, 2, 3);
  OwbValueType ti = VT (OWB_TYPE_INT32, "batch", "9");
  g_assert_true (infer_node (tfidf, 9, &ti, NULL, out, NULL));
  assert_type (&out[0], "float32[batch,5]");
  /* A string input needs pool_strings. */
  assert_infer_fails (tfidf, 9, &s, NULL, "pool");
  g_autoptr (OwbNode) neg = node_new_in_domain ("TfIdfVectorizer", "", 1, 1);
  tu_set_string (neg, "mode", "TF");
  INTS (neg, "ngram_indexes", 0, -4);
  INTS (neg, "pool_int64s", 1, 2);
  assert_infer_fails (neg, 9, &ti, NULL, "ngram_indexes");
}

/* ---- kernels, through a session ---- */

typedef struct {
  OwbTensor *value;
} In;

static OwbModel *
model_new (OwbNode *node, int opset, const In *inputs)
{
  OwbModel *model = owb_model_new ();
  owb_model_set_opset (model, "", node->domain[0] ? 21 : opset);
  if (node->domain[0])
    owb_model_set_opset (model, node->domain, opset);
  OwbGraph *graph = owb_graph_new ("test");
  model->graph = graph;
  graph->model = model;
  for (int i = 0; i < node->n_inputs; i++)
    {
      OwbValueType t;
      owb_tensor_get_value_type (inputs[i].value, &t);
      g_ptr_array_add (graph->inputs, owb_value_info_new (node->inputs[i], &t));
    }
  for (int o = 0; o < node->n_outputs; o++)
    g_ptr_array_add (graph->outputs, owb_value_info_new (node->outputs[o], NULL));
  owb_graph_add_node (graph, node);
  return model;
}

static OwbSession *
session_new (OwbNode *node, int opset, const In *inputs, GError **error)
{
  g_autoptr (OwbModel) model = model_new (node, opset, inputs);
  OwbSessionOptions options;
  owb_session_options_init (&options);
  g_autoptr (GPtrArray) providers = owb_providers_new_from_list ("cpu", NULL);
  options.providers = providers;
  options.n_threads = 2;
  return owb_session_new (model, &options, error);
}

/* Runs the node (which the model takes) once; outputs receive new references. */
static gboolean
run_node (OwbNode *node, int opset, const In *inputs, int n_out, OwbTensor **outputs, GError **error)
{
  /* The model takes the node: keep copies of what is needed after. */
  static const char *const names[] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7" };
  OwbTensor *feeds[8];
  int n_in = node->n_inputs;
  g_assert_cmpint (n_in, <=, 8);
  for (int i = 0; i < n_in; i++)
    feeds[i] = inputs[i].value;
  g_autoptr (OwbSession) session = session_new (node, opset, inputs, error);
  if (!session)
    return FALSE;
  return owb_session_run (session, n_in, names, feeds, n_out, NULL, outputs, NULL, NULL, error);
}

/* Runs and asserts success, showing the error when there is one. */
#define RUN_OK(node, opset, in, n_out, out)                                                                           \
  do                                                                                                                  \
    {                                                                                                                 \
      g_autoptr (GError) run_error_ = NULL;                                                                           \
      gboolean run_ok_ = run_node (node, opset, in, n_out, out, &run_error_);                                         \
      g_assert_no_error (run_error_);                                                                                 \
      g_assert_true (run_ok_);                                                                                        \
    }                                                                                                                 \
  while (0)

static OwbTensor *
floats_2d (int64_t rows, int64_t cols, const float *v)
{
  return tu_new_tensor (OWB_TYPE_FLOAT, 2, (int64_t[]) { rows, cols }, v);
}

static OwbTensor *
strings_tensor (int rank, const int64_t *dims, const char *const *v)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_STRING, rank, dims, NULL);
  g_assert_nonnull (t);
  for (int64_t i = 0; i < t->nelems; i++)
    ((char **) t->data)[i] = g_strdup (v[i]);
  return t;
}

static void
assert_floats (const OwbTensor *t, int n, const float *expected, double tol)
{
  g_assert_cmpint (t->dtype, ==, OWB_TYPE_FLOAT);
  g_assert_cmpint (t->nelems, ==, n);
  for (int i = 0; i < n; i++)
    if (!(fabs (((const float *) t->data)[i] - expected[i]) <= tol))
      g_error ("element %d: got %.7g, expected %.7g", i, ((const float *) t->data)[i], expected[i]);
}

static void
assert_strings (const OwbTensor *t, int n, const char *const *expected)
{
  g_assert_cmpint (t->dtype, ==, OWB_TYPE_STRING);
  g_assert_cmpint (t->nelems, ==, n);
  for (int i = 0; i < n; i++)
    {
      const char *s = ((char *const *) t->data)[i];
      g_assert_cmpstr (s ? s : "", ==, expected[i]);
    }
}

#define ASSERT_FLOATS(t, tol, ...)                                                                                    \
  assert_floats (t, G_N_ELEMENTS (((float[]) { __VA_ARGS__ })), (float[]) { __VA_ARGS__ }, tol)
#define ASSERT_STRINGS(t, ...)                                                                                        \
  assert_strings (t, G_N_ELEMENTS (((const char *[]) { __VA_ARGS__ })), (const char *[]) { __VA_ARGS__ })

static double
sigmoid (double v)
{
  return 1.0 / (1.0 + exp (-v));
}

static void
test_linear_classifier_binary (void)
{
  g_autoptr (GError) error = NULL;
  OwbNode *node = node_new_in_domain ("LinearClassifier", ML, 1, 2);
  FLOATS (node, "coefficients", 1, -1);
  FLOATS (node, "intercepts", 0.25);
  STRINGS (node, "classlabels_strings", "neg", "pos");
  tu_set_string (node, "post_transform", "LOGISTIC");
  g_autoptr (OwbTensor) x = floats_2d (3, 2, (float[]) { 2, 1, 0, 1, 0, 0 });
  In in[1] = { { x } };
  OwbTensor *out[2] = { 0 };
  RUN_OK (node, 1, in, 2, out);
  g_assert_no_error (error);
  /* Scores 1.25, -0.75, 0.25: the pair is [logistic(-s), logistic(s)]. */
  ASSERT_STRINGS (out[0], "pos", "neg", "pos");
  ASSERT_FLOATS (out[1], 1e-6, sigmoid (-1.25), sigmoid (1.25), sigmoid (0.75), sigmoid (-0.75), sigmoid (-0.25),
                 sigmoid (0.25));
  clear_outputs (out, 2);

  /* Five coefficients do not make rows of two features: an error, not a crash. */
  OwbNode *bad = node_new_in_domain ("LinearClassifier", ML, 1, 2);
  FLOATS (bad, "coefficients", 1, 2, 3, 4, 5);
  INTS (bad, "classlabels_ints", 0, 1, 2);
  g_autoptr (GError) e2 = NULL;
  g_assert_false (run_node (bad, 1, in, 2, out, &e2));
  g_assert_nonnull (e2);
}

static void
test_linear_regressor_svm (void)
{
  g_autoptr (GError) error = NULL;
  OwbNode *lr = node_new_in_domain ("LinearRegressor", ML, 1, 1);
  FLOATS (lr, "coefficients", 1, 2, -1, 0);
  FLOATS (lr, "intercepts", 1, 0);
  tu_set_int (lr, "targets", 2);
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_INT32, 2, (int64_t[]) { 2, 2 }, (int32_t[]) { 1, 1, 3, -1 });
  In in[1] = { { x } };
  OwbTensor *out[2] = { 0 };
  RUN_OK (lr, 1, in, 1, out);
  ASSERT_FLOATS (out[0], 1e-6, 4, -1, 2, -3);
  clear_outputs (out, 1);

  /* SVMRegressor, linear mode and one-class. */
  g_autoptr (OwbTensor) xf = floats_2d (2, 2, (float[]) { 1, 2, -3, 0 });
  In fin[1] = { { xf } };
  OwbNode *svr = node_new_in_domain ("SVMRegressor", ML, 1, 1);
  FLOATS (svr, "coefficients", 0.5, 1);
  FLOATS (svr, "rho", -1);
  RUN_OK (svr, 1, fin, 1, out);
  ASSERT_FLOATS (out[0], 1e-6, 1.5, -2.5);
  clear_outputs (out, 1);
  OwbNode *oc = node_new_in_domain ("SVMRegressor", ML, 1, 1);
  FLOATS (oc, "coefficients", 0.5, 1);
  FLOATS (oc, "rho", -1);
  tu_set_int (oc, "one_class", 1);
  RUN_OK (oc, 1, fin, 1, out);
  ASSERT_FLOATS (out[0], 0, 1, -1);
  clear_outputs (out, 1);

  /* SVC with an RBF kernel, two classes of one vector each: the nearer vector wins the vote. */
  OwbNode *svc = node_new_in_domain ("SVMClassifier", ML, 1, 2);
  INTS (svc, "classlabels_ints", 10, 20);
  INTS (svc, "vectors_per_class", 1, 1);
  FLOATS (svc, "support_vectors", 1, 2, -3, 0);
  FLOATS (svc, "coefficients", 1, -1);
  FLOATS (svc, "rho", 0);
  FLOATS (svc, "kernel_params", 0.5, 0, 0);
  tu_set_string (svc, "kernel_type", "RBF");
  RUN_OK (svc, 1, fin, 2, out);
  g_assert_no_error (error);
  g_assert_cmpint (((int64_t *) out[0]->data)[0], ==, 10);
  g_assert_cmpint (((int64_t *) out[0]->data)[1], ==, 20);
  double s0 = 1 - exp (-0.5 * 20);
  ASSERT_FLOATS (out[1], 1e-6, -s0, s0, s0, -s0);
  clear_outputs (out, 2);

  /* Support vectors that do not split into the declared vectors: refused at session creation. */
  OwbNode *bad = node_new_in_domain ("SVMClassifier", ML, 1, 2);
  INTS (bad, "classlabels_ints", 0, 1);
  INTS (bad, "vectors_per_class", 1, 1);
  FLOATS (bad, "support_vectors", 1, 2, 3);
  FLOATS (bad, "coefficients", 1, -1);
  FLOATS (bad, "rho", 0);
  g_autoptr (GError) e2 = NULL;
  g_assert_false (run_node (bad, 1, fin, 2, out, &e2));
  g_assert_nonnull (strstr (e2->message, "support_vectors"));
}

/* One tree: x0 <= 1 ? leaf A : (x1 < 5 ? leaf B : leaf C); NaN in x0 goes true (to A). */
static void
add_small_tree (OwbNode *node, const char *prefix, const int64_t *ids, const float *w, int n_w)
{
  INTS (node, "nodes_treeids", 0, 0, 0, 0, 0, 1);
  INTS (node, "nodes_nodeids", 0, 1, 2, 3, 4, 0);
  INTS (node, "nodes_featureids", 0, 0, 1, 0, 0, 1);
  STRINGS (node, "nodes_modes", "BRANCH_LEQ", "LEAF", "BRANCH_LT", "LEAF", "LEAF", "LEAF");
  FLOATS (node, "nodes_values", 1, 0, 5, 0, 0, 0);
  INTS (node, "nodes_truenodeids", 1, 0, 3, 0, 0, 0);
  INTS (node, "nodes_falsenodeids", 2, 0, 4, 0, 0, 0);
  INTS (node, "nodes_missing_value_tracks_true", 1, 0, 0, 0, 0, 0);
  /* Tree 1 is a single leaf. Weights: leaves 1, 3, 4 of tree 0 and leaf 0 of tree 1. */
  char *name = g_strconcat (prefix, "_treeids", NULL);
  INTS (node, name, 0, 0, 0, 1);
  g_free (name);
  name = g_strconcat (prefix, "_nodeids", NULL);
  INTS (node, name, 1, 3, 4, 0);
  g_free (name);
  name = g_strconcat (prefix, "_ids", NULL);
  tu_set_ints (node, name, n_w, ids);
  g_free (name);
  name = g_strconcat (prefix, "_weights", NULL);
  tu_set_floats (node, name, n_w, w);
  g_free (name);
}

static void
test_tree_regressor_aggregates (void)
{
  static const struct {
    const char *agg;
    float expected[6];
  } cases[] = {
    /* Rows: x0 = 0 (A), x0 = NaN (A), x0 = 2 and x1 = 9 (C); tree 1 adds its leaf to target 1. */
    { "SUM", { 10.5f, 1, 10.5f, 1, 30.5f, 1 } },
    { "AVERAGE", { 5.5f, 0.5f, 5.5f, 0.5f, 15.5f, 0.5f } },
    { "MIN", { 10.5f, 1, 10.5f, 1, 30.5f, 1 } },
    { "MAX", { 10.5f, 1, 10.5f, 1, 30.5f, 1 } },
  };
  g_autoptr (OwbTensor) x = floats_2d (3, 2, (float[]) { 0, 0, NAN, 100, 2, 9 });
  In in[1] = { { x } };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr (GError) error = NULL;
      OwbNode *node = node_new_in_domain ("TreeEnsembleRegressor", ML, 1, 1);
      add_small_tree (node, "target", (int64_t[]) { 0, 0, 0, 1 }, (float[]) { 10, 20, 30, 1 }, 4);
      tu_set_int (node, "n_targets", 2);
      tu_set_string (node, "aggregate_function", cases[c].agg);
      FLOATS (node, "base_values", 0.5, 0);
      OwbTensor *out[1] = { 0 };
      RUN_OK (node, 3, in, 1, out);
      g_assert_no_error (error);
      assert_floats (out[0], 6, cases[c].expected, 1e-6);
      clear_outputs (out, 1);
    }

  /* A cycle (node 2's true child is node 0) is refused when the session is made. */
  g_autoptr (GError) error = NULL;
  OwbNode *cyc = node_new_in_domain ("TreeEnsembleRegressor", ML, 1, 1);
  INTS (cyc, "nodes_treeids", 0, 0, 0);
  INTS (cyc, "nodes_nodeids", 0, 1, 2);
  INTS (cyc, "nodes_featureids", 0, 0, 0);
  STRINGS (cyc, "nodes_modes", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ");
  FLOATS (cyc, "nodes_values", 0, 0, 0);
  INTS (cyc, "nodes_truenodeids", 2, 0, 0);
  INTS (cyc, "nodes_falsenodeids", 1, 0, 1);
  INTS (cyc, "target_treeids", 0);
  INTS (cyc, "target_nodeids", 1);
  INTS (cyc, "target_ids", 0);
  FLOATS (cyc, "target_weights", 1);
  OwbTensor *out[1] = { 0 };
  g_assert_false (run_node (cyc, 1, in, 1, out, &error));
  g_assert_nonnull (strstr (error->message, "twice"));

  /* A feature the input does not have: a run-time error. */
  g_autoptr (GError) e2 = NULL;
  OwbNode *wide = node_new_in_domain ("TreeEnsembleRegressor", ML, 1, 1);
  add_small_tree (wide, "target", (int64_t[]) { 0, 0, 0, 0 }, (float[]) { 1, 2, 3, 4 }, 4);
  g_autoptr (OwbTensor) narrow = floats_2d (1, 1, (float[]) { 0 });
  In nin[1] = { { narrow } };
  g_assert_false (run_node (wide, 1, nin, 1, out, &e2));
  g_assert_nonnull (strstr (e2->message, "feature"));
}

static void
test_tree_classifier_binary (void)
{
  /* Weights for one class only, of mixed sign, LOGISTIC: scores [logistic(-s), logistic(s)]. */
  g_autoptr (GError) error = NULL;
  OwbNode *node = node_new_in_domain ("TreeEnsembleClassifier", ML, 1, 2);
  add_small_tree (node, "class", (int64_t[]) { 0, 0, 0, 0 }, (float[]) { -2, 1, 3, 0.5 }, 4);
  INTS (node, "classlabels_int64s", 5, 6);
  FLOATS (node, "base_values", -0.25);
  tu_set_string (node, "post_transform", "LOGISTIC");
  g_autoptr (OwbTensor) x = floats_2d (3, 2, (float[]) { 0, 0, 2, 1, 2, 9 });
  In in[1] = { { x } };
  OwbTensor *out[2] = { 0 };
  RUN_OK (node, 1, in, 2, out);
  g_assert_no_error (error);
  /* s = leaf + 0.5 (tree 1) - 0.25: -1.75, 1.25, 3.25. */
  const int64_t *labels = out[0]->data;
  g_assert_cmpint (labels[0], ==, 5);
  g_assert_cmpint (labels[1], ==, 6);
  g_assert_cmpint (labels[2], ==, 6);
  ASSERT_FLOATS (out[1], 1e-6, sigmoid (1.75), sigmoid (-1.75), sigmoid (-1.25), sigmoid (1.25), sigmoid (-3.25),
                 sigmoid (3.25));
  clear_outputs (out, 2);

  /* A class weight pointing at an interior node is refused. */
  g_autoptr (GError) e2 = NULL;
  OwbNode *bad = node_new_in_domain ("TreeEnsembleClassifier", ML, 1, 2);
  add_small_tree (bad, "class", (int64_t[]) { 0, 0, 0, 0 }, (float[]) { 1, 1, 1, 1 }, 4);
  INTS (bad, "classlabels_int64s", 0, 1);
  /* Replace class_nodeids with one that names node 2 (a branch). */
  OwbAttribute *a = (OwbAttribute *) owb_node_get_attribute (bad, "class_nodeids");
  a->ints[0] = 2;
  g_assert_false (run_node (bad, 1, in, 2, out, &e2));
  g_assert_nonnull (strstr (e2->message, "not a leaf"));
}

static OwbAttribute *
set_tensor_attr (OwbNode *node, const char *name, OwbTensor *t)
{
  OwbAttribute *a = owb_node_add_attribute (node, name, OWB_ATTR_TENSOR);
  a->t = t;
  return a;
}

static void
test_tree_ensemble5 (void)
{
  /* Root: x0 in {1, 3} ? (x1 > 0 ? leaf0 : leaf1) : leaf2, AVERAGE over two copies of the tree, SOFTMAX. */
  g_autoptr (GError) error = NULL;
  OwbNode *node = node_new_in_domain ("TreeEnsemble", ML, 1, 1);
  INTS (node, "nodes_featureids", 0, 1, 0, 1);
  set_tensor_attr (node, "nodes_splits", tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 }, (float[]) { NAN, 0, NAN, 0 }));
  set_tensor_attr (node, "nodes_modes", tu_new_tensor (OWB_TYPE_UINT8, 1, (int64_t[]) { 4 }, (uint8_t[]) { 6, 3, 6, 3 }));
  set_tensor_attr (node, "membership_values",
                   tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 6 }, (float[]) { 3, 1, NAN, 1, 3, NAN }));
  INTS (node, "nodes_truenodeids", 1, 0, 3, 0);
  INTS (node, "nodes_trueleafs", 0, 1, 0, 1);
  INTS (node, "nodes_falsenodeids", 2, 1, 2, 1);
  INTS (node, "nodes_falseleafs", 1, 1, 1, 1);
  INTS (node, "tree_roots", 0, 2);
  INTS (node, "leaf_targetids", 0, 1, 1);
  set_tensor_attr (node, "leaf_weights", tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 3 }, (float[]) { 2, 4, 6 }));
  tu_set_int (node, "n_targets", 2);
  tu_set_int (node, "aggregate_function", 0);
  tu_set_int (node, "post_transform", 1);
  g_autoptr (OwbTensor) x = floats_2d (3, 2, (float[]) { 3, 1, 1, -1, 2, 5 });
  In in[1] = { { x } };
  OwbTensor *out[1] = { 0 };
  RUN_OK (node, 5, in, 1, out);
  g_assert_no_error (error);
  /* Averages: [2, 0], [0, 4], [0, 6] then softmax per row. */
  double e2 = 1 / (1 + exp (-2.0)), e4 = 1 / (1 + exp (4.0)), e6 = 1 / (1 + exp (6.0));
  ASSERT_FLOATS (out[0], 1e-6, e2, 1 - e2, e4, 1 - e4, e6, 1 - e6);
  clear_outputs (out, 1);

  /* Fewer membership sets than BRANCH_MEMBER nodes. */
  g_autoptr (GError) e = NULL;
  OwbNode *bad = node_new_in_domain ("TreeEnsemble", ML, 1, 1);
  INTS (bad, "nodes_featureids", 0);
  set_tensor_attr (bad, "nodes_splits", tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 1 }, (float[]) { 0 }));
  set_tensor_attr (bad, "nodes_modes", tu_new_tensor (OWB_TYPE_UINT8, 1, (int64_t[]) { 1 }, (uint8_t[]) { 6 }));
  set_tensor_attr (bad, "membership_values", tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 1 }, (float[]) { 1 }));
  INTS (bad, "nodes_truenodeids", 0);
  INTS (bad, "nodes_trueleafs", 1);
  INTS (bad, "nodes_falsenodeids", 0);
  INTS (bad, "nodes_falseleafs", 1);
  INTS (bad, "tree_roots", 0);
  INTS (bad, "leaf_targetids", 0);
  set_tensor_attr (bad, "leaf_weights", tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 1 }, (float[]) { 1 }));
  tu_set_int (bad, "n_targets", 1);
  g_assert_false (run_node (bad, 5, in, 1, out, &e));
  g_assert_nonnull (strstr (e->message, "membership"));
}

static void
test_label_maps (void)
{
  OwbTensor *out[1] = { 0 };
  /* v2: float keys, NaN matches NaN, unknown keys take default_string. */
  {
    g_autoptr (GError) error = NULL;
    OwbNode *node = node_new_in_domain ("LabelEncoder", ML, 1, 1);
    FLOATS (node, "keys_floats", 1.5, NAN, -0.0f);
    STRINGS (node, "values_strings", "one", "nan", "negzero");
    tu_set_string (node, "default_string", "?");
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 }, (float[]) { NAN, 1.5, 2, -0.0f });
    In in[1] = { { x } };
    RUN_OK (node, 2, in, 1, out);
    g_assert_no_error (error);
    ASSERT_STRINGS (out[0], "nan", "one", "?", "negzero");
    clear_outputs (out, 1);
  }
  /* v1: integers index classes_strings; out of range takes default_string. */
  {
    g_autoptr (GError) error = NULL;
    OwbNode *node = node_new_in_domain ("LabelEncoder", ML, 1, 1);
    STRINGS (node, "classes_strings", "a", "b");
    tu_set_string (node, "default_string", "none");
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 3 }, (int64_t[]) { 1, 5, 0 });
    In in[1] = { { x } };
    RUN_OK (node, 1, in, 1, out);
    ASSERT_STRINGS (out[0], "b", "none", "a");
    clear_outputs (out, 1);
  }
  /* v4: repeated keys, the last wins; keys and values of different lengths are refused. */
  {
    g_autoptr (GError) error = NULL;
    OwbNode *node = node_new_in_domain ("LabelEncoder", ML, 1, 1);
    INTS (node, "keys_int64s", 7, 8, 7);
    INTS (node, "values_int64s", 1, 2, 3);
    g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 3 }, (int64_t[]) { 7, 8, 9 });
    In in[1] = { { x } };
    RUN_OK (node, 4, in, 1, out);
    const int64_t *y = out[0]->data;
    g_assert_cmpint (y[0], ==, 3);
    g_assert_cmpint (y[1], ==, 2);
    g_assert_cmpint (y[2], ==, -1);
    clear_outputs (out, 1);
    OwbNode *bad = node_new_in_domain ("LabelEncoder", ML, 1, 1);
    INTS (bad, "keys_int64s", 7, 8);
    INTS (bad, "values_int64s", 1);
    g_autoptr (GError) e2 = NULL;
    g_assert_false (run_node (bad, 4, in, 1, out, &e2));
    g_assert_nonnull (strstr (e2->message, "length"));
  }
  /* CategoryMapper both ways. */
  {
    g_autoptr (GError) error = NULL;
    OwbNode *node = node_new_in_domain ("CategoryMapper", ML, 1, 1);
    INTS (node, "cats_int64s", 1, 2);
    STRINGS (node, "cats_strings", "cat", "dog");
    tu_set_int (node, "default_int64", 42);
    g_autoptr (OwbTensor) x = strings_tensor (1, (int64_t[]) { 3 }, (const char *[]) { "dog", "cow", "cat" });
    In in[1] = { { x } };
    RUN_OK (node, 1, in, 1, out);
    const int64_t *y = out[0]->data;
    g_assert_cmpint (y[0], ==, 2);
    g_assert_cmpint (y[1], ==, 42);
    g_assert_cmpint (y[2], ==, 1);
    clear_outputs (out, 1);
    OwbNode *back = node_new_in_domain ("CategoryMapper", ML, 1, 1);
    INTS (back, "cats_int64s", 1, 2);
    STRINGS (back, "cats_strings", "cat", "dog");
    g_autoptr (OwbTensor) xi = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 2 }, (int64_t[]) { 2, 3 });
    In iin[1] = { { xi } };
    RUN_OK (back, 1, iin, 1, out);
    ASSERT_STRINGS (out[0], "dog", "_Unused");
    clear_outputs (out, 1);
  }
}

static void
test_encoders_and_scalers (void)
{
  OwbTensor *out[1] = { 0 };
  g_autoptr (GError) error = NULL;
  /* OneHotEncoder: doubles are cast to integers; zeros=0 makes an unknown value an error. */
  OwbNode *oh = node_new_in_domain ("OneHotEncoder", ML, 1, 1);
  INTS (oh, "cats_int64s", 3, 1);
  g_autoptr (OwbTensor) x = tu_new_tensor (OWB_TYPE_DOUBLE, 1, (int64_t[]) { 3 }, (double[]) { 1.7, 3, 8 });
  In in[1] = { { x } };
  RUN_OK (oh, 1, in, 1, out);
  ASSERT_FLOATS (out[0], 0, 0, 1, 1, 0, 0, 0);
  clear_outputs (out, 1);
  OwbNode *strict = node_new_in_domain ("OneHotEncoder", ML, 1, 1);
  INTS (strict, "cats_int64s", 3, 1);
  tu_set_int (strict, "zeros", 0);
  g_autoptr (GError) e2 = NULL;
  g_assert_false (run_node (strict, 1, in, 1, out, &e2));
  g_assert_nonnull (strstr (e2->message, "category"));

  /* Scaler with one offset and per-feature scales; Normalizer keeps zero rows. */
  OwbNode *sc = node_new_in_domain ("Scaler", ML, 1, 1);
  FLOATS (sc, "offset", 1);
  FLOATS (sc, "scale", 2, -1);
  g_autoptr (OwbTensor) x2 = tu_new_tensor (OWB_TYPE_INT64, 2, (int64_t[]) { 2, 2 }, (int64_t[]) { 1, 2, 3, 4 });
  In in2[1] = { { x2 } };
  RUN_OK (sc, 1, in2, 1, out);
  ASSERT_FLOATS (out[0], 0, 0, -1, 4, -3);
  clear_outputs (out, 1);
  OwbNode *bad_scale = node_new_in_domain ("Scaler", ML, 1, 1);
  FLOATS (bad_scale, "scale", 2, -1, 3);
  g_autoptr (GError) e3 = NULL;
  g_assert_false (run_node (bad_scale, 1, in2, 1, out, &e3));

  OwbNode *nm = node_new_in_domain ("Normalizer", ML, 1, 1);
  tu_set_string (nm, "norm", "L2");
  g_autoptr (OwbTensor) x3 = floats_2d (2, 2, (float[]) { 3, -4, 0, 0 });
  In in3[1] = { { x3 } };
  RUN_OK (nm, 1, in3, 1, out);
  ASSERT_FLOATS (out[0], 1e-7, 0.6f, -0.8f, 0, 0);
  clear_outputs (out, 1);

  /* Imputer: NaN replaced per feature. */
  OwbNode *im = node_new_in_domain ("Imputer", ML, 1, 1);
  FLOATS (im, "imputed_value_floats", 7, 8);
  tu_set_float (im, "replaced_value_float", NAN);
  g_autoptr (OwbTensor) x4 = floats_2d (2, 2, (float[]) { NAN, 1, 2, NAN });
  In in4[1] = { { x4 } };
  RUN_OK (im, 1, in4, 1, out);
  ASSERT_FLOATS (out[0], 0, 7, 1, 2, 8);
  clear_outputs (out, 1);

  /* Binarizer keeps the integer type. */
  OwbNode *bz = node_new_in_domain ("Binarizer", ML, 1, 1);
  tu_set_float (bz, "threshold", 2);
  RUN_OK (bz, 1, in2, 1, out);
  g_assert_cmpint (out[0]->dtype, ==, OWB_TYPE_INT64);
  const int64_t *b = out[0]->data;
  g_assert_true (b[0] == 0 && b[1] == 0 && b[2] == 1 && b[3] == 1);
  clear_outputs (out, 1);

  /* ArrayFeatureExtractor: an index past the features is an error. */
  OwbNode *afe = node_new_in_domain ("ArrayFeatureExtractor", ML, 2, 1);
  g_autoptr (OwbTensor) idx = tu_new_tensor (OWB_TYPE_INT64, 1, (int64_t[]) { 2 }, (int64_t[]) { 1, 2 });
  In ain[2] = { { x3 }, { idx } };
  g_autoptr (GError) e4 = NULL;
  g_assert_false (run_node (afe, 1, ain, 1, out, &e4));
  g_assert_nonnull (strstr (e4->message, "out of range"));

  /* FeatureVectorizer pads and truncates each input to its declared width. */
  OwbNode *fv = node_new_in_domain ("FeatureVectorizer", ML, 2, 1);
  INTS (fv, "inputdimensions", 3, 1);
  In fin[2] = { { x3 }, { x2 } };
  RUN_OK (fv, 1, fin, 1, out);
  ASSERT_FLOATS (out[0], 0, 3, -4, 0, 1, 0, 0, 0, 3);
  clear_outputs (out, 1);
}

static void
test_string_ops (void)
{
  OwbTensor *out[2] = { 0 };
  g_autoptr (GError) error = NULL;
  /* Full match must cover the whole string even when an earlier alternative matches a prefix. */
  OwbNode *re = node_new_in_domain ("RegexFullMatch", "", 1, 1);
  tu_set_string (re, "pattern", "a|ab");
  g_autoptr (OwbTensor) s = strings_tensor (1, (int64_t[]) { 4 }, (const char *[]) { "ab", "a", "abc", "" });
  In in[1] = { { s } };
  RUN_OK (re, 20, in, 1, out);
  const uint8_t *m = out[0]->data;
  g_assert_true (m[0] && m[1] && !m[2] && !m[3]);
  clear_outputs (out, 1);
  /* An invalid pattern is refused when the session is made. */
  OwbNode *bad = node_new_in_domain ("RegexFullMatch", "", 1, 1);
  tu_set_string (bad, "pattern", "(unclosed");
  g_autoptr (GError) e2 = NULL;
  g_assert_false (run_node (bad, 20, in, 1, out, &e2));
  g_assert_nonnull (strstr (e2->message, "pattern"));

  /* StringSplit on whitespace with maxsplit keeps the rest's trailing whitespace. */
  OwbNode *sp = node_new_in_domain ("StringSplit", "", 1, 2);
  tu_set_int (sp, "maxsplit", 1);
  g_autoptr (OwbTensor) t = strings_tensor (1, (int64_t[]) { 3 }, (const char *[]) { "  a b  c ", "", "\tx\n" });
  In tin[1] = { { t } };
  RUN_OK (sp, 20, tin, 2, out);
  g_assert_no_error (error);
  ASSERT_STRINGS (out[0], "a", "b  c ", "", "", "x", "");
  const int64_t *counts = out[1]->data;
  g_assert_true (counts[0] == 2 && counts[1] == 0 && counts[2] == 1);
  clear_outputs (out, 2);
  /* With a delimiter, an empty string is one empty piece. */
  OwbNode *sp2 = node_new_in_domain ("StringSplit", "", 1, 2);
  tu_set_string (sp2, "delimiter", "::");
  g_autoptr (OwbTensor) t2 = strings_tensor (1, (int64_t[]) { 2 }, (const char *[]) { "a::::b", "" });
  In t2in[1] = { { t2 } };
  RUN_OK (sp2, 20, t2in, 2, out);
  ASSERT_STRINGS (out[0], "a", "", "b", "", "", "");
  counts = out[1]->data;
  g_assert_true (counts[0] == 3 && counts[1] == 1);
  clear_outputs (out, 2);

  /* StringNormalizer: case-insensitive stop words in UTF-8, then upper case. */
  OwbNode *sn = node_new_in_domain ("StringNormalizer", "", 1, 1);
  STRINGS (sn, "stopwords", "ÉTÉ");
  tu_set_string (sn, "case_change_action", "UPPER");
  g_autoptr (OwbTensor) w = strings_tensor (1, (int64_t[]) { 3 }, (const char *[]) { "été", "hiver", "Été" });
  In win[1] = { { w } };
  RUN_OK (sn, 10, win, 1, out);
  ASSERT_STRINGS (out[0], "HIVER");
  clear_outputs (out, 1);

  /* TfIdfVectorizer on strings, TFIDF with weights by output column. */
  OwbNode *tf = node_new_in_domain ("TfIdfVectorizer", "", 1, 1);
  tu_set_string (tf, "mode", "TFIDF");
  tu_set_int (tf, "min_gram_length", 1);
  tu_set_int (tf, "max_gram_length", 2);
  tu_set_int (tf, "max_skip_count", 0);
  STRINGS (tf, "pool_strings", "a", "b", "a", "b");
  INTS (tf, "ngram_counts", 0, 2);
  INTS (tf, "ngram_indexes", 2, 0, 1);
  FLOATS (tf, "weights", 0.5, 2, 10);
  g_autoptr (OwbTensor) doc = strings_tensor (2, (int64_t[]) { 2, 3 }, (const char *[]) { "a", "b", "a", "b", "b", "c" });
  In din[1] = { { doc } };
  RUN_OK (tf, 9, din, 1, out);
  g_assert_no_error (error);
  /* Row 0: a x2 (col 2), b x1 (col 0), "a b" x1 (col 1); row 1: b x2. */
  ASSERT_FLOATS (out[0], 1e-6, 0.5f, 2, 20, 1, 0, 0);
  clear_outputs (out, 1);
}

static const OwbTensor *
map_part (const OwbTensor *seq, guint i, guint part)
{
  const OwbTensor *m = g_ptr_array_index (seq->sequence, i);
  g_assert_cmpint (m->kind, ==, OWB_VALUE_MAP);
  g_assert_cmpuint (m->sequence->len, ==, 2);
  return g_ptr_array_index (m->sequence, part);
}

static void
test_zipmap (void)
{
  /* Inference: a sequence of maps, whatever the batch; a wrong column count or dtype is refused. */
  OwbNode *node = node_new_in_domain ("ZipMap", ML, 1, 1);
  STRINGS (node, "classlabels_strings", "a", "b", "c");
  OwbValueType in_t[1] = { VT (OWB_TYPE_FLOAT, "N", "3") }, out_t[1];
  g_autoptr (GError) error = NULL;
  g_assert_true (infer_node (node, 1, in_t, NULL, out_t, &error));
  g_assert_no_error (error);
  g_assert_cmpint (out_t[0].kind, ==, OWB_VALUE_SEQUENCE);
  g_assert_cmpint (out_t[0].elem_kind, ==, OWB_VALUE_MAP);
  g_assert_cmpint (out_t[0].key_dtype, ==, OWB_TYPE_STRING);
  g_assert_cmpint (out_t[0].dtype, ==, OWB_TYPE_FLOAT);
  in_t[0] = VT (OWB_TYPE_FLOAT, "N", "4");
  g_assert_false (infer_node (node, 1, in_t, NULL, out_t, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_clear_error (&error);
  in_t[0] = VT (OWB_TYPE_DOUBLE, "N", "3");
  g_assert_false (infer_node (node, 1, in_t, NULL, out_t, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_TYPE);
  g_clear_error (&error);
  owb_node_free (node);

  /* Both label lists, or neither: an invalid model. */
  node = node_new_in_domain ("ZipMap", ML, 1, 1);
  in_t[0] = VT (OWB_TYPE_FLOAT, "N", "2");
  g_assert_false (infer_node (node, 1, in_t, NULL, out_t, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL);
  g_clear_error (&error);
  owb_node_free (node);

  /* Int64 labels: one map per row, keys shared, values the row. */
  OwbNode *zm = node_new_in_domain ("ZipMap", ML, 1, 1);
  INTS (zm, "classlabels_int64s", 7, -1);
  g_autoptr (OwbTensor) x = floats_2d (3, 2, (float[]) { 0.25f, 0.75f, 1, 0, 0.5f, 0.5f });
  In in[1] = { { x } };
  OwbTensor *out[1] = { 0 };
  RUN_OK (zm, 1, in, 1, out);
  g_autoptr (OwbTensor) seq = out[0];
  g_assert_cmpint (seq->kind, ==, OWB_VALUE_SEQUENCE);
  g_assert_cmpuint (seq->sequence->len, ==, 3);
  for (guint r = 0; r < 3; r++)
    {
      const OwbTensor *keys = map_part (seq, r, 0), *values = map_part (seq, r, 1);
      g_assert_cmpint (keys->dtype, ==, OWB_TYPE_INT64);
      g_assert_cmpint (keys->nelems, ==, 2);
      g_assert_cmpint (((const int64_t *) keys->data)[0], ==, 7);
      g_assert_cmpint (((const int64_t *) keys->data)[1], ==, -1);
      assert_floats (values, 2, (const float *) x->data + 2 * r, 0);
    }
  OwbValueType got;
  owb_tensor_get_value_type (seq, &got);
  g_assert_cmpint (got.elem_kind, ==, OWB_VALUE_MAP);
  g_assert_cmpint (got.key_dtype, ==, OWB_TYPE_INT64);

  /* String labels on a 1-D input (one row), and an empty batch. */
  zm = node_new_in_domain ("ZipMap", ML, 1, 1);
  STRINGS (zm, "classlabels_strings", "no", "yes");
  g_autoptr (OwbTensor) x1 = tu_new_tensor (OWB_TYPE_FLOAT, 1, (int64_t[]) { 2 }, (float[]) { 0.1f, 0.9f });
  in[0].value = x1;
  RUN_OK (zm, 1, in, 1, out);
  g_autoptr (OwbTensor) seq1 = out[0];
  g_assert_cmpuint (seq1->sequence->len, ==, 1);
  assert_strings (map_part (seq1, 0, 0), 2, (const char *[]) { "no", "yes" });
  assert_floats (map_part (seq1, 0, 1), 2, (float[]) { 0.1f, 0.9f }, 0);

  zm = node_new_in_domain ("ZipMap", ML, 1, 1);
  STRINGS (zm, "classlabels_strings", "no", "yes");
  g_autoptr (OwbTensor) x0 = floats_2d (0, 2, NULL);
  in[0].value = x0;
  RUN_OK (zm, 1, in, 1, out);
  g_autoptr (OwbTensor) seq0 = out[0];
  g_assert_cmpint (seq0->kind, ==, OWB_VALUE_SEQUENCE);
  g_assert_cmpuint (seq0->sequence->len, ==, 0);

  /* A column count that disagrees with the labels at run time. */
  zm = node_new_in_domain ("ZipMap", ML, 1, 1);
  INTS (zm, "classlabels_int64s", 0, 1, 2);
  g_autoptr (OwbTensor) bad = floats_2d (1, 2, (float[]) { 0.5f, 0.5f });
  in[0].value = bad;
  out[0] = NULL;
  g_assert_false (run_node (zm, 1, in, 1, out, &error));
  g_assert_nonnull (error);
  g_assert_null (out[0]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ml/infer/classifiers", test_infer_classifiers);
  g_test_add_func ("/ml/infer/encoders", test_infer_encoders);
  g_test_add_func ("/ml/infer/strings", test_infer_strings);
  g_test_add_func ("/ml/linear-classifier-binary", test_linear_classifier_binary);
  g_test_add_func ("/ml/linear-regressor-svm", test_linear_regressor_svm);
  g_test_add_func ("/ml/tree-regressor-aggregates", test_tree_regressor_aggregates);
  g_test_add_func ("/ml/tree-classifier-binary", test_tree_classifier_binary);
  g_test_add_func ("/ml/tree-ensemble5", test_tree_ensemble5);
  g_test_add_func ("/ml/label-maps", test_label_maps);
  g_test_add_func ("/ml/encoders-scalers", test_encoders_and_scalers);
  g_test_add_func ("/ml/string-ops", test_string_ops);
  g_test_add_func ("/ml/zipmap", test_zipmap);
  return g_test_run ();
}
