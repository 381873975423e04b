/* kernel-test-util.h: what the kernel tests of several op families share: value types written as
 * dim strings, one-node inference, and checks of inferred types and of output tensors. */
#pragma once

#include <owb/owb.h>
#include <string.h>
#include "../engine/test-util.h"

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

/* A tensor type of rank (-1: unknown rank) whose dims are known where >= 0, unknown at -1 and the
 * named dim "batch" at -2 (assert_dims's convention). */
static inline OwbValueType
batch_type (OwbDataType dtype, int rank, const int64_t *dims)
{
  OwbValueType t;
  owb_value_type_init_tensor (&t, dtype, rank < 0 ? 0 : rank, NULL);
  t.rank = rank;
  for (int i = 0; i < rank; i++)
    t.dims[i] = dims[i] >= 0 ? OWB_DIM_VALUE (dims[i])
                : dims[i] == -2 ? (OwbDim){ -1, g_intern_string ("batch") }
                                : OWB_DIM_UNKNOWN;
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

/* infer_node must succeed on node, its first output's type `expected` as text. */
static inline void
assert_infers (OwbNode *node, int opset, const OwbValueType *types, OwbTensor *const *values, const char *expected)
{
  OwbValueType out[4];
  g_autoptr (GError) error = NULL;
  gboolean ok = infer_node (node, opset, types, values, out, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_autofree char *s = owb_value_type_to_string (&out[0]);
  g_assert_cmpstr (s, ==, expected);
}

/* infer_node must fail on node, its error naming the node ("the_node") and saying `what` (if not
 * NULL). */
static inline void
assert_infer_fails (OwbNode *node, int opset, const OwbValueType *types, OwbTensor *const *values, const char *what)
{
  OwbValueType out[4];
  g_autoptr (GError) error = NULL;
  g_assert_false (infer_node (node, opset, types, values, out, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "the_node"));
  if (what && !strstr (error->message, what))
    g_error ("'%s' does not mention '%s'", error->message, what);
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
  g_assert_nonnull (t);
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

/* ---- one-node models run through a session ---- */

/* An input of a one-node model: fed at run time (a graph input, its value unknown at load) or an
 * initializer. */
typedef struct {
  OwbTensor *value;
  gboolean feed;
} OneNodeInput;

/* A model of `node` alone (taken) at `opset` of the default domain: its inputs are graph inputs
 * or initializers as inputs[] says (an input with an empty name is absent), its outputs graph
 * outputs. */
static inline OwbModel *
one_node_model_new (OwbNode *node, int opset, const OneNodeInput *inputs)
{
  OwbModel *model = owb_model_new ();
  owb_model_set_opset (model, "", opset);
  OwbGraph *graph = owb_graph_new ("test");
  model->graph = graph;
  graph->model = model;
  for (int i = 0; i < node->n_inputs; i++)
    {
      if (!node->inputs[i][0])
        continue;
      if (inputs[i].feed)
        {
          OwbValueType t;
          owb_tensor_get_value_type (inputs[i].value, &t);
          g_ptr_array_add (graph->inputs, owb_value_info_new (node->inputs[i], &t));
        }
      else
        owb_graph_add_initializer (graph, node->inputs[i], owb_tensor_ref (inputs[i].value));
    }
  for (int o = 0; o < node->n_outputs; o++)
    if (node->outputs[o][0])
      g_ptr_array_add (graph->outputs, owb_value_info_new (node->outputs[o], NULL));
  owb_graph_add_node (graph, node);
  return model;
}

/* A session of that model on the CPU provider with `threads` intra-op threads. */
static inline OwbSession *
one_node_session_new (OwbNode *node, int opset, const OneNodeInput *inputs, int threads, GError **error)
{
  g_autoptr (OwbModel) model = one_node_model_new (node, opset, inputs);
  g_autoptr (GPtrArray) providers = owb_providers_new_from_list ("cpu", NULL);
  OwbSessionOptions options;
  owb_session_options_init (&options);
  options.providers = providers;
  options.n_threads = threads;
  return owb_session_new (model, &options, error);
}

/* Runs the session once on the inputs it feeds; outputs receive new references. */
static inline gboolean
one_node_session_run (OwbSession *session, const OneNodeInput *inputs, int n_out, OwbTensor **outputs,
                      GError **error)
{
  const char *names[8];
  OwbTensor *feeds[8];
  int n_feed = 0;
  const OwbNode *n = g_ptr_array_index (owb_session_get_graph (session)->nodes, 0);
  g_assert_cmpint (n->n_inputs, <=, 8);
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i][0] && inputs[i].feed)
      {
        names[n_feed] = n->inputs[i];
        feeds[n_feed++] = inputs[i].value;
      }
  g_assert_cmpuint (owb_session_get_n_outputs (session), ==, n_out);
  return owb_session_run (session, n_feed, names, feeds, n_out, NULL, outputs, NULL, NULL, error);
}

/* Runs `node` (taken) once with `threads` intra-op threads; outputs receive new references. */
static inline gboolean
one_node_run_threads (OwbNode *node, int opset, const OneNodeInput *inputs, int n_out, OwbTensor **outputs,
                      int threads, GError **error)
{
  g_autoptr (OwbSession) session = one_node_session_new (node, opset, inputs, threads, error);
  return session && one_node_session_run (session, inputs, n_out, outputs, error);
}

/* The same with 2 threads, as most kernel tests run. */
static inline gboolean
one_node_run (OwbNode *node, int opset, const OneNodeInput *inputs, int n_out, OwbTensor **outputs, GError **error)
{
  return one_node_run_threads (node, opset, inputs, n_out, outputs, 2, error);
}

/* ---- a node wired to named graph inputs and outputs ---- */

/* Wires `node` (taken; without inputs or outputs yet) into a model of its own at `opset` (its own
 * domain, if any, at 1) and runs it once with 2 threads: input i is in_names[i] (inputs[i] NULL:
 * absent, ""), a graph input or, where bit i of const_mask is set, an initializer; output i is
 * out_names[i] where want[i] (want NULL: every output), else "" and outputs[i] stays NULL; the
 * others receive new references. */
static inline gboolean
run_wired_node (OwbNode *node, int opset, const char *const *in_names, int n_inputs, OwbTensor *const *inputs,
                guint const_mask, const char *const *out_names, int n_outputs, const gboolean *want,
                OwbTensor **outputs, GError **error)
{
  g_autoptr (OwbModel) model = owb_model_new ();
  owb_model_set_opset (model, "", opset);
  if (node->domain && node->domain[0])
    owb_model_set_opset (model, node->domain, 1);
  OwbGraph *graph = owb_graph_new ("test");
  model->graph = graph;
  graph->model = model;
  const char *feed_names[9], *fetch_names[9];
  OwbTensor *feeds[9], *fetched[9] = { NULL };
  guint n_feeds = 0, n_fetch = 0;
  g_assert_cmpint (n_inputs, <=, 9);
  g_assert_cmpint (n_outputs, <=, 9);
  for (int i = 0; i < n_inputs; i++)
    {
      owb_node_add_input (node, inputs[i] ? in_names[i] : "");
      if (!inputs[i])
        continue;
      if (const_mask & (1u << i))
        {
          owb_graph_add_initializer (graph, in_names[i], owb_tensor_ref (inputs[i]));
          continue;
        }
      OwbValueType type;
      owb_tensor_get_value_type (inputs[i], &type);
      g_ptr_array_add (graph->inputs, owb_value_info_new (in_names[i], &type));
      feed_names[n_feeds] = in_names[i];
      feeds[n_feeds++] = inputs[i];
    }
  for (int i = 0; i < n_outputs; i++)
    {
      gboolean w = !want || want[i];
      owb_node_add_output (node, w ? out_names[i] : "");
      if (!w)
        continue;
      g_ptr_array_add (graph->outputs, owb_value_info_new (out_names[i], NULL));
      fetch_names[n_fetch++] = out_names[i];
    }
  owb_graph_add_node (graph, node);
  g_autoptr (GPtrArray) providers = owb_providers_new_from_list ("cpu", error);
  if (!providers)
    return FALSE;
  OwbSessionOptions options;
  owb_session_options_init (&options);
  options.n_threads = 2;
  options.providers = providers;
  g_autoptr (OwbSession) session = owb_session_new (model, &options, error);
  if (!session ||
      !owb_session_run (session, n_feeds, feed_names, feeds, n_fetch, fetch_names, fetched, NULL, NULL, error))
    return FALSE;
  for (int i = 0, f = 0; i < n_outputs; i++)
    outputs[i] = (!want || want[i]) ? fetched[f++] : NULL;
  return TRUE;
}

/* ---- a node "the_node" writing "y", built with the tu_ builders ---- */

/* Adds node `op` named "the_node" to m, reading `inputs` (comma-separated names, "" for an absent
 * one) and writing "y", an untyped graph output; setup, if not NULL, sets its attributes. */
static inline OwbNode *
add_node_to_y (OwbModel *m, const char *op, const char *inputs, void (*setup) (OwbNode *node))
{
  OwbNode *node = tu_node (m->graph, op, "the_node", inputs, "y");
  if (setup)
    setup (node);
  tu_add_untyped_output (m->graph->outputs, "y");
  return node;
}

/* Validates m and infers its shapes: y's type as text, or NULL with the error. */
static inline char *
infer_y_text (OwbModel *m, GError **error)
{
  if (!owb_model_validate (m, error) || !owb_model_infer_shapes (m, error))
    return NULL;
  const OwbValueInfo *info = owb_graph_find_value_info (m->graph, "y");
  g_assert_nonnull (info);
  return owb_value_type_to_string (&info->type);
}
