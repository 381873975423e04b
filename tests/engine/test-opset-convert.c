/* test-opset-convert.c: owb_model_convert_opset: each rewrite keeps the outputs of a small model
 * at the old opset, and nodes without an equivalent are refused by name. */
#include "test-util.h"

#include <math.h>

/* Inputs of one model run. */
typedef struct {
  int n;
  const char *names[4];
  OwbTensor *values[4];
} Feed;

static void
feed_add (Feed *feed, const char *name, OwbTensor *value)
{
  feed->names[feed->n] = name;
  feed->values[feed->n++] = value;
}

static void
feed_clear (Feed *feed)
{
  for (int i = 0; i < feed->n; i++)
    owb_tensor_unref (feed->values[i]);
  feed->n = 0;
}

/* A float tensor of distinct, signed values (some equal pairs would hide index mix-ups). */
static OwbTensor *
data_floats (int rank, const int64_t *dims)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, rank, dims, NULL);
  for (int64_t i = 0; i < t->nelems; i++)
    ((float *) t->data)[i] = (float) ((i * 7) % 13 - 6) * 0.37f + (float) i * 0.01f;
  return t;
}

static void
add_input (OwbModel *m, const char *name, OwbDataType dtype, int rank, const int64_t *dims)
{
  tu_add_value (m->graph->inputs, name, dtype, rank, dims, NULL);
}

static void
add_output (OwbModel *m, const char *name, OwbDataType dtype, int rank)
{
  int64_t dims[OWB_MAX_RANK];
  for (int i = 0; i < rank; i++)
    dims[i] = -1;
  tu_add_value (m->graph->outputs, name, dtype, rank, dims, NULL);
}

static GPtrArray *
run_model (OwbModel *m, const Feed *feed)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbSession) s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  guint n = m->graph->outputs->len;
  OwbTensor **outs = g_new0 (OwbTensor *, n);
  g_assert_true (owb_session_run (s, feed->n, feed->names, feed->values, n, NULL, outs, NULL, NULL, &error));
  g_assert_no_error (error);
  GPtrArray *result = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (result, outs[i]);
  g_free (outs);
  return result;
}

static void
assert_same_tensor (const OwbTensor *a, const OwbTensor *b)
{
  g_assert_cmpint (a->dtype, ==, b->dtype);
  g_assert_cmpint (a->rank, ==, b->rank);
  for (int d = 0; d < a->rank; d++)
    g_assert_cmpint (a->dims[d], ==, b->dims[d]);
  for (int64_t i = 0; i < a->nelems; i++)
    {
      double x = owb_tensor_get_double (a, i), y = owb_tensor_get_double (b, i);
      g_assert_cmpfloat_with_epsilon (x, y, 1e-6 * MAX (1.0, fabs (x)));
    }
}

/* Runs m, converts a copy to `target` and checks the copy's opset and that it computes the same
 * outputs. Returns the converted copy. */
static OwbModel *
check_converts (OwbModel *m, int target, const Feed *feed)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) before = run_model (m, feed);
  OwbModel *copy = owb_model_dup (m);
  g_assert_true (owb_model_convert_opset (copy, target, &error));
  g_assert_no_error (error);
  g_assert_cmpint (owb_model_get_opset (copy, ""), ==, target);
  g_autoptr (GPtrArray) after = run_model (copy, feed);
  g_assert_cmpuint (before->len, ==, after->len);
  for (guint i = 0; i < before->len; i++)
    assert_same_tensor (g_ptr_array_index (before, i), g_ptr_array_index (after, i));
  return copy;
}

/* The converted model saves and loads back (scalar and empty initializers included). */
static void
check_round_trip (const OwbModel *m)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = owb_model_save_to_bytes (m, &error);
  g_assert_no_error (error);
  gsize size = 0;
  const void *data = g_bytes_get_data (bytes, &size);
  g_autoptr (OwbModel) back = owb_model_load_from_data (data, size, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (owb_model_get_opset (back, ""), ==, owb_model_get_opset (m, ""));
  g_assert_cmpuint (back->graph->nodes->len, ==, m->graph->nodes->len);
}

static void
check_converts_and_free (OwbModel *m, int target, const Feed *feed)
{
  owb_model_unref (check_converts (m, target, feed));
}

static OwbNode *
find_op (const OwbGraph *g, const char *op)
{
  for (guint i = 0; i < g->nodes->len; i++)
    {
      OwbNode *n = g_ptr_array_index (g->nodes, i);
      if (strcmp (n->op_type, op) == 0)
        return n;
    }
  return NULL;
}

static void
add_int64_initializer (OwbModel *m, const char *name, int n, const int64_t *values)
{
  int64_t dims[1] = { n };
  OwbTensor *t = owb_tensor_new (OWB_TYPE_INT64, 1, dims, NULL);
  memcpy (t->data, values, n * sizeof (int64_t));
  owb_graph_add_initializer (m->graph, name, t);
}

/* ---- Softmax family ---- */

static void
test_softmax_last_axis (void)
{
  static const int64_t dims[] = { 2, 5 };
  g_autoptr (OwbModel) m = tu_model_new (11);
  add_input (m, "x", OWB_TYPE_FLOAT, 2, dims);
  tu_node (m->graph, "Softmax", "sm", "x", "y");
  add_output (m, "y", OWB_TYPE_FLOAT, 2);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (2, dims));
  for (int target = 13; target <= 17; target += 4)
    {
      g_autoptr (OwbModel) c = check_converts (m, target, &feed);
      /* The default axis (1) is the last one here: only the attribute changes. */
      g_assert_cmpuint (c->graph->nodes->len, ==, 1);
      g_assert_cmpint (owb_node_get_int (g_ptr_array_index (c->graph->nodes, 0), "axis", 0), ==, -1);
    }
  feed_clear (&feed);
}

static void
test_softmax_inner_axis (void)
{
  static const char *const ops[] = { "Softmax", "LogSoftmax", "Hardmax" };
  static const int64_t dims[] = { 2, 3, 4 };
  for (guint k = 0; k < G_N_ELEMENTS (ops); k++)
    for (int axis = 0; axis <= 1; axis++)
      {
        g_autoptr (OwbModel) m = tu_model_new (11);
        add_input (m, "x", OWB_TYPE_FLOAT, 3, dims);
        OwbNode *n = tu_node (m->graph, ops[k], "op", "x", "y");
        owb_node_add_attribute (n, "axis", OWB_ATTR_INT)->i = axis;
        add_output (m, "y", OWB_TYPE_FLOAT, 3);
        Feed feed = { 0 };
        feed_add (&feed, "x", data_floats (3, dims));
        for (int target = 13; target <= 17; target += 4)
          {
            g_autoptr (OwbModel) c = check_converts (m, target, &feed);
            g_assert_nonnull (find_op (c->graph, "Flatten"));
            g_assert_nonnull (find_op (c->graph, "Reshape"));
          }
        feed_clear (&feed);
      }
}

/* A Softmax inside an If branch reads the outer x: nested graphs are converted too. */
static void
test_softmax_in_subgraph (void)
{
  static const int64_t dims[] = { 2, 3, 4 }, one = 1;
  g_autoptr (OwbModel) m = tu_model_new (11);
  add_input (m, "x", OWB_TYPE_FLOAT, 3, dims);
  add_input (m, "cond", OWB_TYPE_BOOL, 0, &one);
  OwbNode *iff = owb_node_new ("If", "", "branch");
  owb_node_add_input (iff, "cond");
  owb_node_add_output (iff, "y");
  for (int b = 0; b < 2; b++)
    {
      OwbGraph *body = owb_graph_new (b ? "else" : "then");
      OwbNode *n = tu_node (body, b ? "Neg" : "Softmax", b ? "neg" : "inner_softmax", "x", b ? "out_else" : "out_then");
      if (!b)
        owb_node_add_attribute (n, "axis", OWB_ATTR_INT)->i = 1;
      tu_add_value (body->outputs, b ? "out_else" : "out_then", OWB_TYPE_FLOAT, 3, (const int64_t[]){ -1, -1, -1 },
                    NULL);
      owb_node_add_attribute (iff, b ? "else_branch" : "then_branch", OWB_ATTR_GRAPH)->g = body;
    }
  owb_graph_add_node (m->graph, iff);
  add_output (m, "y", OWB_TYPE_FLOAT, 3);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (3, dims));
  OwbTensor *cond = owb_tensor_new (OWB_TYPE_BOOL, 0, NULL, NULL);
  *(guint8 *) cond->data = 1;
  feed_add (&feed, "cond", cond);
  g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
  OwbNode *converted = g_ptr_array_index (c->graph->nodes, 0);
  g_assert_nonnull (find_op (owb_node_get_attribute (converted, "then_branch")->g, "Flatten"));
  check_round_trip (c);
  feed_clear (&feed);
}

/* ---- attributes that became inputs ---- */

static void
test_split (void)
{
  static const int64_t dims[] = { 2, 6 }, sizes[] = { 1, 2, 3 };
  g_autoptr (OwbModel) m = tu_model_new (11);
  add_input (m, "x", OWB_TYPE_FLOAT, 2, dims);
  OwbNode *n = tu_node (m->graph, "Split", "split", "x", "a,b,c");
  owb_node_add_attribute (n, "axis", OWB_ATTR_INT)->i = 1;
  OwbAttribute *attr = owb_node_add_attribute (n, "split", OWB_ATTR_INTS);
  attr->n = 3;
  attr->ints = g_memdup2 (sizes, sizeof sizes);
  OwbNode *even = tu_node (m->graph, "Split", "even", "x", "d,e");
  owb_node_add_attribute (even, "axis", OWB_ATTR_INT)->i = 1;
  for (int i = 0; i < 5; i++)
    add_output (m, (const char *[]){ "a", "b", "c", "d", "e" }[i], OWB_TYPE_FLOAT, 2);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (2, dims));
  g_autoptr (OwbModel) c13 = check_converts (m, 13, &feed);
  OwbNode *split = g_ptr_array_index (c13->graph->nodes, 0);
  g_assert_cmpint (split->n_inputs, ==, 2);
  g_assert_null (owb_node_get_attribute (split, "split"));
  g_autoptr (OwbModel) c18 = owb_model_dup (m);
  g_autoptr (GError) error = NULL;
  g_assert_true (owb_model_convert_opset (c18, 18, &error));
  g_assert_no_error (error);
  /* Split-18 needs num_outputs when no sizes are given. */
  OwbNode *even18 = g_ptr_array_index (c18->graph->nodes, 1);
  g_assert_cmpint (owb_node_get_int (even18, "num_outputs", 0), ==, 2);
  feed_clear (&feed);
}

static void
test_squeeze_unsqueeze (void)
{
  static const int64_t dims[] = { 2, 1, 3 }, sq_axes[] = { 1 }, unsq_axes[] = { 0, 3 };
  g_autoptr (OwbModel) m = tu_model_new (11);
  add_input (m, "x", OWB_TYPE_FLOAT, 3, dims);
  OwbNode *sq = tu_node (m->graph, "Squeeze", "sq", "x", "s");
  OwbAttribute *a = owb_node_add_attribute (sq, "axes", OWB_ATTR_INTS);
  a->n = 1;
  a->ints = g_memdup2 (sq_axes, sizeof sq_axes);
  OwbNode *unsq = tu_node (m->graph, "Unsqueeze", "unsq", "s", "y");
  a = owb_node_add_attribute (unsq, "axes", OWB_ATTR_INTS);
  a->n = 2;
  a->ints = g_memdup2 (unsq_axes, sizeof unsq_axes);
  tu_node (m->graph, "Squeeze", "sq_all", "x", "z");
  add_output (m, "y", OWB_TYPE_FLOAT, 4);
  add_output (m, "z", OWB_TYPE_FLOAT, 2);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (3, dims));
  g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
  for (guint i = 0; i < c->graph->nodes->len; i++)
    g_assert_null (owb_node_get_attribute (g_ptr_array_index (c->graph->nodes, i), "axes"));
  feed_clear (&feed);
}

static void
test_reduce (void)
{
  static const int64_t dims[] = { 2, 3, 4 }, axes[] = { 1, -1 };
  static const char *const ops[] = { "ReduceSum", "ReduceMean", "ReduceMax" };
  for (guint k = 0; k < G_N_ELEMENTS (ops); k++)
    for (int keepdims = 0; keepdims <= 1; keepdims++)
      {
        g_autoptr (OwbModel) m = tu_model_new (11);
        add_input (m, "x", OWB_TYPE_FLOAT, 3, dims);
        OwbNode *n = tu_node (m->graph, ops[k], "reduce", "x", "y");
        OwbAttribute *a = owb_node_add_attribute (n, "axes", OWB_ATTR_INTS);
        a->n = 2;
        a->ints = g_memdup2 (axes, sizeof axes);
        owb_node_add_attribute (n, "keepdims", OWB_ATTR_INT)->i = keepdims;
        tu_node (m->graph, ops[k], "reduce_all", "x", "z");
        add_output (m, "y", OWB_TYPE_FLOAT, keepdims ? 3 : 1);
        add_output (m, "z", OWB_TYPE_FLOAT, 3);
        Feed feed = { 0 };
        feed_add (&feed, "x", data_floats (3, dims));
        check_converts_and_free (m, 13, &feed);
        check_converts_and_free (m, 17, &feed);
        g_autoptr (OwbModel) c = check_converts (m, 18, &feed);
        g_assert_cmpint (((OwbNode *) g_ptr_array_index (c->graph->nodes, 0))->n_inputs, ==, 2);
        feed_clear (&feed);
      }
}

static void
test_pad (void)
{
  static const char *const modes[] = { "constant", "reflect", "edge" };
  static const int64_t dims[] = { 3, 4 }, pads[] = { 1, 2, 1, 0 };
  for (guint k = 0; k < G_N_ELEMENTS (modes); k++)
    for (int opset = 1; opset <= 10; opset += 9)
      {
        g_autoptr (OwbModel) m = tu_model_new (opset);
        add_input (m, "x", OWB_TYPE_FLOAT, 2, dims);
        OwbNode *n = tu_node (m->graph, "Pad", "pad", "x", "y");
        OwbAttribute *a = owb_node_add_attribute (n, opset < 2 ? "paddings" : "pads", OWB_ATTR_INTS);
        a->n = 4;
        a->ints = g_memdup2 (pads, sizeof pads);
        a = owb_node_add_attribute (n, "mode", OWB_ATTR_STRING);
        a->s = g_strdup (modes[k]);
        a->s_len = strlen (modes[k]);
        owb_node_add_attribute (n, "value", OWB_ATTR_FLOAT)->f = 1.5f;
        add_output (m, "y", OWB_TYPE_FLOAT, 2);
        Feed feed = { 0 };
        feed_add (&feed, "x", data_floats (2, dims));
        g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
        OwbNode *pad = g_ptr_array_index (c->graph->nodes, 0);
        g_assert_cmpint (pad->n_inputs, ==, 3);
        g_assert_cmpstr (owb_node_get_string (pad, "mode", ""), ==, modes[k]);
        feed_clear (&feed);
      }
}

static void
test_clip (void)
{
  static const int64_t dims[] = { 3, 4 };
  for (int which = 0; which < 4; which++)
    {
      g_autoptr (OwbModel) m = tu_model_new (6);
      add_input (m, "x", OWB_TYPE_FLOAT, 2, dims);
      OwbNode *n = tu_node (m->graph, "Clip", "clip", "x", "y");
      if (which & 1)
        owb_node_add_attribute (n, "min", OWB_ATTR_FLOAT)->f = -0.5f;
      if (which & 2)
        owb_node_add_attribute (n, "max", OWB_ATTR_FLOAT)->f = 1.25f;
      add_output (m, "y", OWB_TYPE_FLOAT, 2);
      Feed feed = { 0 };
      feed_add (&feed, "x", data_floats (2, dims));
      g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
      OwbNode *clip = g_ptr_array_index (c->graph->nodes, 0);
      /* Absent bounds stay absent inputs (the old defaults were the whole float range). */
      g_assert_cmpint (clip->n_inputs, ==, which == 0 ? 1 : which == 1 ? 2 : 3);
      g_assert_true (owb_node_get_input (clip, 1) != NULL || !(which & 1));
      feed_clear (&feed);
    }
}

static void
test_slice (void)
{
  static const int64_t dims[] = { 3, 5 }, starts[] = { 1, -4 }, ends[] = { 1000, -1 }, axes[] = { 0, 1 };
  for (int with_axes = 0; with_axes <= 1; with_axes++)
    {
      g_autoptr (OwbModel) m = tu_model_new (9);
      add_input (m, "x", OWB_TYPE_FLOAT, 2, dims);
      OwbNode *n = tu_node (m->graph, "Slice", "slice", "x", "y");
      OwbAttribute *a = owb_node_add_attribute (n, "starts", OWB_ATTR_INTS);
      a->n = 2;
      a->ints = g_memdup2 (starts, sizeof starts);
      a = owb_node_add_attribute (n, "ends", OWB_ATTR_INTS);
      a->n = 2;
      a->ints = g_memdup2 (ends, sizeof ends);
      if (with_axes)
        {
          a = owb_node_add_attribute (n, "axes", OWB_ATTR_INTS);
          a->n = 2;
          a->ints = g_memdup2 (axes, sizeof axes);
        }
      add_output (m, "y", OWB_TYPE_FLOAT, 2);
      Feed feed = { 0 };
      feed_add (&feed, "x", data_floats (2, dims));
      g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
      g_assert_cmpint (((OwbNode *) g_ptr_array_index (c->graph->nodes, 0))->n_inputs, ==, with_axes ? 4 : 3);
      feed_clear (&feed);
    }
}

static void
test_topk (void)
{
  static const int64_t dims[] = { 3, 5 };
  g_autoptr (OwbModel) m = tu_model_new (9);
  add_input (m, "x", OWB_TYPE_FLOAT, 2, dims);
  OwbNode *n = tu_node (m->graph, "TopK", "topk", "x", "values,indices");
  owb_node_add_attribute (n, "k", OWB_ATTR_INT)->i = 2;
  owb_node_add_attribute (n, "axis", OWB_ATTR_INT)->i = 1;
  add_output (m, "values", OWB_TYPE_FLOAT, 2);
  add_output (m, "indices", OWB_TYPE_INT64, 2);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (2, dims));
  g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
  g_assert_null (owb_node_get_attribute (g_ptr_array_index (c->graph->nodes, 0), "k"));
  feed_clear (&feed);
}

/* ---- Upsample and Resize ---- */

static void
test_upsample (void)
{
  static const char *const modes[] = { "nearest", "linear" };
  static const int64_t dims[] = { 1, 2, 3, 2 };
  static const float scales[] = { 1.0f, 1.0f, 2.0f, 3.0f };
  for (guint k = 0; k < G_N_ELEMENTS (modes); k++)
    for (int opset = 7; opset <= 9; opset += 2)
      {
        g_autoptr (OwbModel) m = tu_model_new (opset);
        add_input (m, "x", OWB_TYPE_FLOAT, 4, dims);
        OwbNode *n = tu_node (m->graph, "Upsample", "up", opset >= 9 ? "x,scales" : "x", "y");
        OwbAttribute *a = owb_node_add_attribute (n, "mode", OWB_ATTR_STRING);
        a->s = g_strdup (modes[k]);
        a->s_len = strlen (modes[k]);
        if (opset >= 9)
          {
            int64_t four = 4;
            owb_graph_add_initializer (m->graph, "scales", tu_floats (1, &four, scales));
          }
        else
          {
            a = owb_node_add_attribute (n, "scales", OWB_ATTR_FLOATS);
            a->n = 4;
            a->floats = g_memdup2 (scales, sizeof scales);
          }
        add_output (m, "y", OWB_TYPE_FLOAT, 4);
        Feed feed = { 0 };
        feed_add (&feed, "x", data_floats (4, dims));
        g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
        OwbNode *resize = g_ptr_array_index (c->graph->nodes, 0);
        g_assert_cmpstr (resize->op_type, ==, "Resize");
        g_assert_cmpstr (owb_node_get_string (resize, "coordinate_transformation_mode", ""), ==, "asymmetric");
        g_assert_cmpint (resize->n_inputs, ==, 3);
        g_assert_cmpstr (resize->inputs[1], ==, "");
        feed_clear (&feed);
      }
}

/* Resize-10 rounds nearest samples down when enlarging and up when shrinking. */
static void
test_resize_10 (void)
{
  static const char *const modes[] = { "nearest", "linear" };
  static const int64_t dims[] = { 1, 1, 5, 5 };
  static const float grow[] = { 1.0f, 1.0f, 2.0f, 1.5f }, shrink[] = { 1.0f, 1.0f, 0.6f, 0.6f };
  for (guint k = 0; k < G_N_ELEMENTS (modes); k++)
    for (int s = 0; s < 2; s++)
      for (int target = 11; target <= 13; target += 2)
        {
          g_autoptr (OwbModel) m = tu_model_new (10);
          add_input (m, "x", OWB_TYPE_FLOAT, 4, dims);
          OwbNode *n = tu_node (m->graph, "Resize", "resize", "x,scales", "y");
          OwbAttribute *a = owb_node_add_attribute (n, "mode", OWB_ATTR_STRING);
          a->s = g_strdup (modes[k]);
          a->s_len = strlen (modes[k]);
          int64_t four = 4;
          owb_graph_add_initializer (m->graph, "scales", tu_floats (1, &four, s ? shrink : grow));
          add_output (m, "y", OWB_TYPE_FLOAT, 4);
          Feed feed = { 0 };
          feed_add (&feed, "x", data_floats (4, dims));
          g_autoptr (OwbModel) c = check_converts (m, target, &feed);
          OwbNode *resize = g_ptr_array_index (c->graph->nodes, 0);
          if (k == 0)
            g_assert_cmpstr (owb_node_get_string (resize, "nearest_mode", ""), ==, s ? "ceil" : "floor");
          g_assert_cmpint (resize->n_inputs, ==, 3);
          check_round_trip (c);
          feed_clear (&feed);
        }
}

/* ---- normalisation, dropout, Gemm ---- */

static OwbTensor *
channel_values (int64_t c, float base)
{
  OwbTensor *t = owb_tensor_new (OWB_TYPE_FLOAT, 1, &c, NULL);
  for (int64_t i = 0; i < c; i++)
    ((float *) t->data)[i] = base + 0.25f * (float) i;
  return t;
}

static OwbModel *
batch_norm_model (int opset, gboolean spatial)
{
  static const int64_t dims[] = { 2, 3, 2, 2 }, consumed[] = { 0, 0, 0, 1, 1 };
  OwbModel *m = tu_model_new (opset);
  add_input (m, "x", OWB_TYPE_FLOAT, 4, dims);
  OwbNode *n = tu_node (m->graph, "BatchNormalization", "bn", "x,scale,bias,mean,var", "y");
  if (opset < 7)
    owb_node_add_attribute (n, "is_test", OWB_ATTR_INT)->i = 1;
  if (opset < 6)
    {
      OwbAttribute *a = owb_node_add_attribute (n, "consumed_inputs", OWB_ATTR_INTS);
      a->n = 5;
      a->ints = g_memdup2 (consumed, sizeof consumed);
    }
  owb_node_add_attribute (n, "spatial", OWB_ATTR_INT)->i = spatial;
  owb_graph_add_initializer (m->graph, "scale", channel_values (3, 0.5f));
  owb_graph_add_initializer (m->graph, "bias", channel_values (3, -0.25f));
  owb_graph_add_initializer (m->graph, "mean", channel_values (3, 0.1f));
  owb_graph_add_initializer (m->graph, "var", channel_values (3, 1.0f));
  add_output (m, "y", OWB_TYPE_FLOAT, 4);
  return m;
}

static void
test_batch_normalization (void)
{
  static const int64_t dims[] = { 2, 3, 2, 2 };
  for (int opset = 5; opset <= 8; opset++)
    {
      g_autoptr (OwbModel) m = batch_norm_model (opset, TRUE);
      Feed feed = { 0 };
      feed_add (&feed, "x", data_floats (4, dims));
      g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
      OwbNode *bn = g_ptr_array_index (c->graph->nodes, 0);
      g_assert_cmpint (bn->n_attributes, ==, 0);
      feed_clear (&feed);
    }
}

static void
test_batch_normalization_not_spatial (void)
{
  g_autoptr (OwbModel) m = batch_norm_model (8, FALSE);
  g_autoptr (GError) error = NULL;
  g_assert_false (owb_model_convert_opset (m, 13, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP);
  g_assert_nonnull (strstr (error->message, "'bn'"));
  g_assert_nonnull (strstr (error->message, "BatchNormalization"));
  g_assert_nonnull (strstr (error->message, "spatial"));
  g_assert_nonnull (strstr (error->message, "opset 9"));
  /* A refused conversion leaves the model as it was. */
  g_assert_cmpint (owb_model_get_opset (m, ""), ==, 8);
  OwbNode *bn = g_ptr_array_index (m->graph->nodes, 0);
  g_assert_cmpint (bn->n_attributes, ==, 1);
  g_assert_nonnull (owb_node_get_attribute (bn, "spatial"));
}

static void
test_dropout (void)
{
  static const int64_t dims[] = { 3, 4 };
  for (int opset = 6; opset <= 7; opset++)
    {
      g_autoptr (OwbModel) m = tu_model_new (opset);
      add_input (m, "x", OWB_TYPE_FLOAT, 2, dims);
      OwbNode *n = tu_node (m->graph, "Dropout", "drop", "x", opset < 7 ? "d" : "d,mask");
      if (opset < 7)
        owb_node_add_attribute (n, "is_test", OWB_ATTR_INT)->i = 1;
      owb_node_add_attribute (n, "ratio", OWB_ATTR_FLOAT)->f = 0.25f;
      tu_node (m->graph, "Relu", "relu", "d", "y");
      add_output (m, "y", OWB_TYPE_FLOAT, 2);
      if (opset >= 7)
        add_output (m, "mask", OWB_TYPE_FLOAT, 2);
      Feed feed = { 0 };
      feed_add (&feed, "x", data_floats (2, dims));
      g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
      OwbNode *drop = find_op (c->graph, "Dropout");
      g_assert_null (owb_node_get_attribute (drop, "ratio"));
      g_assert_null (owb_node_get_attribute (drop, "is_test"));
      g_assert_nonnull (owb_node_get_input (drop, 1));
      /* The mask became bool at 10: a Cast gives its readers the old type. */
      g_assert_true ((find_op (c->graph, "Cast") != NULL) == (opset >= 7));
      check_round_trip (c);
      feed_clear (&feed);
    }
}

static void
test_gemm (void)
{
  static const int64_t da[] = { 2, 3 }, db[] = { 3, 4 }, dc[] = { 4 };
  g_autoptr (OwbModel) m = tu_model_new (6);
  add_input (m, "a", OWB_TYPE_FLOAT, 2, da);
  OwbNode *n = tu_node (m->graph, "Gemm", "gemm", "a,b,c", "y");
  owb_node_add_attribute (n, "broadcast", OWB_ATTR_INT)->i = 1;
  owb_node_add_attribute (n, "alpha", OWB_ATTR_FLOAT)->f = 0.5f;
  owb_graph_add_initializer (m->graph, "b", data_floats (2, db));
  owb_graph_add_initializer (m->graph, "c", data_floats (1, dc));
  add_output (m, "y", OWB_TYPE_FLOAT, 2);
  Feed feed = { 0 };
  feed_add (&feed, "a", data_floats (2, da));
  g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
  g_assert_null (owb_node_get_attribute (g_ptr_array_index (c->graph->nodes, 0), "broadcast"));
  feed_clear (&feed);
}

/* ---- legacy broadcasting ---- */

static void
test_legacy_broadcast (void)
{
  static const char *const ops[] = { "Add", "Sub", "Mul", "Div" };
  static const int64_t da[] = { 2, 3, 4, 5 }, db_axis[] = { 3, 4 }, db_suffix[] = { 4, 5 };
  for (guint k = 0; k < G_N_ELEMENTS (ops); k++)
    for (int opset = 1; opset <= 6; opset += 5)
      {
        g_autoptr (OwbModel) m = tu_model_new (opset);
        add_input (m, "a", OWB_TYPE_FLOAT, 4, da);
        add_input (m, "b", OWB_TYPE_FLOAT, 2, db_axis);
        add_input (m, "c", OWB_TYPE_FLOAT, 2, db_suffix);
        OwbNode *n = tu_node (m->graph, ops[k], "at_axis", "a,b", "y");
        owb_node_add_attribute (n, "broadcast", OWB_ATTR_INT)->i = 1;
        owb_node_add_attribute (n, "axis", OWB_ATTR_INT)->i = 1;
        n = tu_node (m->graph, ops[k], "suffix", "y,c", "z");
        owb_node_add_attribute (n, "broadcast", OWB_ATTR_INT)->i = 1;
        n = tu_node (m->graph, ops[k], "same", "z,a", "w");
        add_output (m, "w", OWB_TYPE_FLOAT, 4);
        Feed feed = { 0 };
        feed_add (&feed, "a", data_floats (4, da));
        feed_add (&feed, "b", data_floats (2, db_axis));
        feed_add (&feed, "c", data_floats (2, db_suffix));
        g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
        g_assert_nonnull (find_op (c->graph, "Unsqueeze"));
        for (guint i = 0; i < c->graph->nodes->len; i++)
          {
            OwbNode *node = g_ptr_array_index (c->graph->nodes, i);
            g_assert_null (owb_node_get_attribute (node, "broadcast"));
            g_assert_null (owb_node_get_attribute (node, "axis"));
          }
        feed_clear (&feed);
      }
}

static void
test_prelu (void)
{
  static const int64_t dx[] = { 2, 3, 2, 2 }, ds[] = { 3 };
  g_autoptr (OwbModel) m = tu_model_new (6);
  add_input (m, "x", OWB_TYPE_FLOAT, 4, dx);
  tu_node (m->graph, "PRelu", "prelu", "x,slope", "y");
  owb_graph_add_initializer (m->graph, "slope", channel_values (3, 0.1f));
  add_output (m, "y", OWB_TYPE_FLOAT, 4);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (4, dx));
  g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
  g_assert_nonnull (find_op (c->graph, "Unsqueeze"));
  (void) ds;
  feed_clear (&feed);
}

/* ---- other renamed or retyped attributes ---- */

static void
test_reshape_cast_concat (void)
{
  static const int64_t dims[] = { 2, 6 }, shape[] = { 3, -1 };
  g_autoptr (OwbModel) m = tu_model_new (3);
  add_input (m, "x", OWB_TYPE_FLOAT, 2, dims);
  OwbNode *n = tu_node (m->graph, "Reshape", "reshape", "x", "r");
  OwbAttribute *a = owb_node_add_attribute (n, "shape", OWB_ATTR_INTS);
  a->n = 2;
  a->ints = g_memdup2 (shape, sizeof shape);
  n = tu_node (m->graph, "Cast", "cast", "r", "i");
  a = owb_node_add_attribute (n, "to", OWB_ATTR_STRING);
  a->s = g_strdup ("INT32");
  a->s_len = 5;
  tu_node (m->graph, "Concat", "concat", "r,r", "cat");
  add_output (m, "i", OWB_TYPE_INT32, 2);
  add_output (m, "cat", OWB_TYPE_FLOAT, 2);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (2, dims));
  g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
  g_assert_cmpint (owb_node_get_attribute (find_op (c->graph, "Cast"), "to")->type, ==, OWB_ATTR_INT);
  g_assert_cmpint (owb_node_get_int (find_op (c->graph, "Concat"), "axis", -5), ==, 1);
  g_assert_cmpint (find_op (c->graph, "Reshape")->n_inputs, ==, 2);
  feed_clear (&feed);
}

static void
test_scatter (void)
{
  static const int64_t dims[] = { 3, 3 }, di[] = { 1, 3 }, indices[] = { 2, 0, 1 };
  g_autoptr (OwbModel) m = tu_model_new (9);
  add_input (m, "x", OWB_TYPE_FLOAT, 2, dims);
  OwbNode *n = tu_node (m->graph, "Scatter", "scatter", "x,indices,updates", "y");
  owb_node_add_attribute (n, "axis", OWB_ATTR_INT)->i = 0;
  OwbTensor *idx = owb_tensor_new (OWB_TYPE_INT64, 2, di, NULL);
  memcpy (idx->data, indices, sizeof indices);
  owb_graph_add_initializer (m->graph, "indices", idx);
  owb_graph_add_initializer (m->graph, "updates", data_floats (2, di));
  add_output (m, "y", OWB_TYPE_FLOAT, 2);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (2, dims));
  g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
  g_assert_cmpstr (((OwbNode *) g_ptr_array_index (c->graph->nodes, 0))->op_type, ==, "ScatterElements");
  feed_clear (&feed);
}

static void
test_tile_and_lp_pool (void)
{
  static const int64_t dims[] = { 1, 2, 3, 2 }, tiles[] = { 3 }, axis[] = { 2 };
  g_autoptr (OwbModel) m = tu_model_new (1);
  add_input (m, "x", OWB_TYPE_FLOAT, 4, dims);
  tu_node (m->graph, "Tile", "tile", "x,tiles,axis", "t");
  add_int64_initializer (m, "tiles", 1, tiles);
  add_int64_initializer (m, "axis", 1, axis);
  OwbNode *n = tu_node (m->graph, "GlobalLpPool", "lp", "t", "y");
  owb_node_add_attribute (n, "p", OWB_ATTR_FLOAT)->f = 3.0f;
  add_output (m, "t", OWB_TYPE_FLOAT, 4);
  add_output (m, "y", OWB_TYPE_FLOAT, 4);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (4, dims));
  g_autoptr (OwbModel) c = check_converts (m, 13, &feed);
  g_assert_cmpint (find_op (c->graph, "Tile")->n_inputs, ==, 2);
  g_assert_cmpint (owb_node_get_attribute (find_op (c->graph, "GlobalLpPool"), "p")->type, ==, OWB_ATTR_INT);
  feed_clear (&feed);
}

/* ---- changes after 13 ---- */

static void
test_group_normalization (void)
{
  static const int64_t dims[] = { 2, 4, 3 };
  g_autoptr (OwbModel) m = tu_model_new (18);
  add_input (m, "x", OWB_TYPE_FLOAT, 3, dims);
  OwbNode *n = tu_node (m->graph, "GroupNormalization", "gn", "x,scale,bias", "y");
  owb_node_add_attribute (n, "num_groups", OWB_ATTR_INT)->i = 2;
  owb_graph_add_initializer (m->graph, "scale", channel_values (2, 0.5f));
  owb_graph_add_initializer (m->graph, "bias", channel_values (2, -1.0f));
  add_output (m, "y", OWB_TYPE_FLOAT, 3);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (3, dims));
  g_autoptr (OwbModel) c = check_converts (m, 21, &feed);
  OwbNode *gn = g_ptr_array_index (c->graph->nodes, 0);
  /* One value per channel from 21; the shared initializer of the original is left alone. */
  g_assert_cmpint (owb_graph_get_initializer (c->graph, gn->inputs[1])->nelems, ==, 4);
  g_assert_cmpint (owb_graph_get_initializer (m->graph, "scale")->nelems, ==, 2);
  feed_clear (&feed);
}

static void
test_grid_sample_and_dft (void)
{
  static const int64_t dx[] = { 1, 1, 3, 3 }, dg[] = { 1, 2, 2, 2 }, ds[] = { 1, 8, 3, 1 };
  g_autoptr (OwbModel) m = tu_model_new (17);
  add_input (m, "x", OWB_TYPE_FLOAT, 4, dx);
  add_input (m, "signal", OWB_TYPE_FLOAT, 4, ds);
  tu_node (m->graph, "GridSample", "grid", "x,g", "y");
  OwbTensor *grid = data_floats (4, dg);
  for (int64_t i = 0; i < grid->nelems; i++)
    ((float *) grid->data)[i] *= 0.4f;
  owb_graph_add_initializer (m->graph, "g", grid);
  tu_node (m->graph, "DFT", "dft", "signal", "spectrum");
  add_output (m, "y", OWB_TYPE_FLOAT, 4);
  add_output (m, "spectrum", OWB_TYPE_FLOAT, 4);
  Feed feed = { 0 };
  feed_add (&feed, "x", data_floats (4, dx));
  feed_add (&feed, "signal", data_floats (4, ds));
  g_autoptr (OwbModel) c = check_converts (m, 20, &feed);
  g_assert_cmpstr (owb_node_get_string (find_op (c->graph, "GridSample"), "mode", ""), ==, "linear");
  g_assert_cmpint (find_op (c->graph, "DFT")->n_inputs, ==, 3);
  feed_clear (&feed);
}

/* ---- arguments ---- */

static void
test_targets (void)
{
  g_autoptr (GError) error = NULL;
  static const int64_t dims[] = { 2 };
  g_autoptr (OwbModel) m = tu_model_new (11);
  add_input (m, "x", OWB_TYPE_FLOAT, 1, dims);
  tu_node (m->graph, "Relu", "relu", "x", "y");
  add_output (m, "y", OWB_TYPE_FLOAT, 1);
  g_assert_false (owb_model_convert_opset (m, 10, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (owb_model_convert_opset (m, 99, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpint (owb_model_get_opset (m, ""), ==, 11);
  g_assert_true (owb_model_convert_opset (m, 11, &error));
  g_assert_no_error (error);
  g_assert_true (owb_model_convert_opset (m, 21, &error));
  g_assert_no_error (error);
  g_assert_cmpint (owb_model_get_opset (m, ""), ==, 21);
  g_assert_cmpint (((OwbNode *) g_ptr_array_index (m->graph->nodes, 0))->opset, ==, 21);
}

/* A Resize-10 whose nearest rounding depends on scales only known at run time is refused. */
static void
test_resize_unknown_scales (void)
{
  static const int64_t dims[] = { 1, 1, 2, 2 }, four = 4;
  g_autoptr (OwbModel) m = tu_model_new (10);
  add_input (m, "x", OWB_TYPE_FLOAT, 4, dims);
  add_input (m, "scales", OWB_TYPE_FLOAT, 1, &four);
  tu_node (m->graph, "Resize", "dynamic", "x,scales", "y");
  add_output (m, "y", OWB_TYPE_FLOAT, 4);
  g_autoptr (GError) error = NULL;
  g_assert_false (owb_model_convert_opset (m, 13, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_UNSUPPORTED_OP);
  g_assert_nonnull (strstr (error->message, "'dynamic'"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/opset-convert/softmax-last-axis", test_softmax_last_axis);
  g_test_add_func ("/opset-convert/softmax-inner-axis", test_softmax_inner_axis);
  g_test_add_func ("/opset-convert/softmax-in-subgraph", test_softmax_in_subgraph);
  g_test_add_func ("/opset-convert/split", test_split);
  g_test_add_func ("/opset-convert/squeeze-unsqueeze", test_squeeze_unsqueeze);
  g_test_add_func ("/opset-convert/reduce", test_reduce);
  g_test_add_func ("/opset-convert/pad", test_pad);
  g_test_add_func ("/opset-convert/clip", test_clip);
  g_test_add_func ("/opset-convert/slice", test_slice);
  g_test_add_func ("/opset-convert/topk", test_topk);
  g_test_add_func ("/opset-convert/upsample", test_upsample);
  g_test_add_func ("/opset-convert/resize-10", test_resize_10);
  g_test_add_func ("/opset-convert/resize-unknown-scales", test_resize_unknown_scales);
  g_test_add_func ("/opset-convert/batch-normalization", test_batch_normalization);
  g_test_add_func ("/opset-convert/batch-normalization-not-spatial", test_batch_normalization_not_spatial);
  g_test_add_func ("/opset-convert/dropout", test_dropout);
  g_test_add_func ("/opset-convert/gemm", test_gemm);
  g_test_add_func ("/opset-convert/legacy-broadcast", test_legacy_broadcast);
  g_test_add_func ("/opset-convert/prelu", test_prelu);
  g_test_add_func ("/opset-convert/reshape-cast-concat", test_reshape_cast_concat);
  g_test_add_func ("/opset-convert/scatter", test_scatter);
  g_test_add_func ("/opset-convert/tile-lp-pool", test_tile_and_lp_pool);
  g_test_add_func ("/opset-convert/group-normalization", test_group_normalization);
  g_test_add_func ("/opset-convert/grid-sample-dft", test_grid_sample_and_dft);
  g_test_add_func ("/opset-convert/targets", test_targets);
  return g_test_run ();
}
