/* test-session.c: running graphs: results, buffer reuse and peak bytes, hooks, concurrent runs,
 * feed checks, float16 through float32 kernels, cancellation, inference remembered between runs. */
#include "test-util.h"

/* y = relu(x + b) * 2, as a chain of four nodes through intermediates. */
static OwbModel *
chain_model (OwbDataType dtype)
{
  OwbModel *m = tu_model_new (14);
  const char *params[] = { "batch", NULL };
  tu_add_value (m->graph->inputs, "x", dtype, 2, (int64_t[]){ -2, 4 }, params);
  OwbTensor *b = owb_tensor_new (OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  for (int i = 0; i < 4; i++)
    ((float *) b->data)[i] = i - 1.5f;
  if (dtype != OWB_TYPE_FLOAT)
    {
      OwbTensor *c = owb_tensor_cast (b, dtype, NULL);
      owb_tensor_unref (b);
      b = c;
    }
  owb_graph_add_initializer (m->graph, "b", b);
  tu_node (m->graph, "Add", "add", "x,b", "s");
  tu_node (m->graph, "Relu", "relu", "s", "r");
  tu_node (m->graph, "Add", "twice", "r,r", "y");
  tu_add_value (m->graph->outputs, "y", dtype, 2, (int64_t[]){ -2, 4 }, params);
  return m;
}

static void
check_chain_output (OwbTensor *x, OwbTensor *y)
{
  g_assert_cmpint (y->rank, ==, 2);
  g_assert_cmpint (y->dims[0], ==, x->dims[0]);
  for (int64_t i = 0; i < x->nelems; i++)
    {
      double v = owb_tensor_get_double (x, i) + (i % 4) - 1.5;
      double want = 2 * (v > 0 ? v : 0);
      g_assert_cmpfloat_with_epsilon (owb_tensor_get_double (y, i), want, 1e-2);
    }
}

static OwbTensor *
make_x (OwbDataType dtype, int64_t batch)
{
  OwbTensor *x = owb_tensor_new (dtype, 2, (int64_t[]){ batch, 4 }, NULL);
  for (int64_t i = 0; i < x->nelems; i++)
    owb_tensor_set_double (x, i, (double) ((i * 7) % 11) - 5.0);
  return x;
}

static void
test_run_chain (void)
{
  g_autoptr (OwbModel) m = chain_model (OWB_TYPE_FLOAT);
  GError *error = NULL;
  g_autoptr (OwbSession) s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (owb_session_get_n_inputs (s), ==, 1);
  g_assert_cmpstr (owb_session_get_input (s, 0)->name, ==, "x");
  g_autoptr (OwbTensor) x = make_x (OWB_TYPE_FLOAT, 1000);
  const char *names[] = { "x" };
  OwbTensor *y = NULL;
  OwbRunStats stats;
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &y, &stats, NULL, &error));
  g_assert_no_error (error);
  check_chain_output (x, y);
  g_assert_cmpuint (stats.n_nodes_run, ==, 3);
  /* s is released after relu, and y may reuse its buffer: peak is at most three tensors live,
   * never the sum of all intermediates plus more. */
  gsize one = 1000 * 4 * sizeof (float);
  g_assert_cmpuint (stats.peak_bytes, >=, 2 * one);
  g_assert_cmpuint (stats.peak_bytes, <=, 3 * one);
  g_assert_cmpuint (stats.allocated_bytes, <, 3 * one);
  owb_tensor_unref (y);
  /* The provider that claimed each node is recorded on it. */
  const OwbGraph *g = owb_session_get_graph (s);
  g_assert_cmpstr (((OwbNode *) g_ptr_array_index (g->nodes, 0))->provider, ==, "cpu");
}

/* The session keeps its buffers between runs: a second identical run allocates nothing, an output
 * held across runs keeps its values, and a different shape still runs correctly. */
static void
test_arena_kept (void)
{
  g_autoptr (OwbModel) m = chain_model (OWB_TYPE_FLOAT);
  GError *error = NULL;
  g_autoptr (OwbSession) s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  const char *names[] = { "x" };
  g_autoptr (OwbTensor) x = make_x (OWB_TYPE_FLOAT, 1000);
  OwbRunStats stats;
  OwbTensor *y = NULL;
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &y, &stats, NULL, &error));
  g_assert_cmpuint (stats.allocated_bytes, >, 0);
  gsize first_peak = stats.peak_bytes;
  owb_tensor_unref (y);
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &y, &stats, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (stats.allocated_bytes, ==, 0);
  g_assert_cmpuint (stats.peak_bytes, ==, first_peak);
  check_chain_output (x, y);
  /* y is still held: the next run must not write into its buffer */
  OwbTensor *y2 = NULL;
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &y2, &stats, NULL, &error));
  g_assert_true (y2->data != y->data);
  check_chain_output (x, y);
  check_chain_output (x, y2);
  owb_tensor_unref (y);
  owb_tensor_unref (y2);
  g_autoptr (OwbTensor) big = make_x (OWB_TYPE_FLOAT, 5000);
  g_assert_true (owb_session_run (s, 1, names, &big, 1, NULL, &y, &stats, NULL, &error));
  check_chain_output (big, y);
  owb_tensor_unref (y);
  g_autoptr (OwbTensor) small = make_x (OWB_TYPE_FLOAT, 3);
  g_assert_true (owb_session_run (s, 1, names, &small, 1, NULL, &y, &stats, NULL, &error));
  g_assert_no_error (error);
  check_chain_output (small, y);
  /* an output that outlives its session stays valid */
  g_clear_pointer (&s, owb_session_free);
  check_chain_output (small, y);
  owb_tensor_unref (y);
}

typedef struct {
  int begins, ends;
} Counts;

static void
on_begin (const OwbNode *node, int index, gpointer data)
{
  ((Counts *) data)->begins++;
}

static void
on_end (const OwbNode *node, int index, OwbTensor *const *outputs, int n, gpointer data)
{
  ((Counts *) data)->ends++;
  g_assert_nonnull (outputs[0]);
}

static void
test_hooks (void)
{
  g_autoptr (OwbModel) m = chain_model (OWB_TYPE_FLOAT);
  Counts counts = { 0 };
  OwbTraceHooks hooks = { on_begin, on_end, &counts };
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", NULL);
  opts.hooks = &hooks;
  g_autoptr (OwbSession) s = owb_session_new (m, &opts, NULL);
  g_ptr_array_unref (opts.providers);
  g_autoptr (OwbTensor) x = make_x (OWB_TYPE_FLOAT, 3);
  const char *names[] = { "x" };
  OwbTensor *y = NULL;
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &y, NULL, NULL, NULL));
  owb_tensor_unref (y);
  g_assert_cmpint (counts.begins, ==, 3);
  g_assert_cmpint (counts.ends, ==, 3);
}

typedef struct {
  OwbSession *session;
  int64_t batch;
  gboolean ok;
} ThreadJob;

static gpointer
run_thread (gpointer data)
{
  ThreadJob *job = data;
  job->ok = TRUE;
  for (int rep = 0; rep < 20 && job->ok; rep++)
    {
      OwbTensor *x = make_x (OWB_TYPE_FLOAT, job->batch + rep);
      const char *names[] = { "x" };
      OwbTensor *y = NULL;
      job->ok = owb_session_run (job->session, 1, names, &x, 1, NULL, &y, NULL, NULL, NULL);
      if (job->ok)
        {
          check_chain_output (x, y);
          owb_tensor_unref (y);
        }
      owb_tensor_unref (x);
    }
  return NULL;
}

static void
test_concurrent_runs (void)
{
  g_autoptr (OwbModel) m = chain_model (OWB_TYPE_FLOAT);
  g_autoptr (OwbSession) s = tu_session (m, 2, NULL);
  ThreadJob jobs[4];
  GThread *threads[4];
  for (int i = 0; i < 4; i++)
    {
      jobs[i] = (ThreadJob){ s, 100 * (i + 1), FALSE };
      threads[i] = g_thread_new ("run", run_thread, &jobs[i]);
    }
  for (int i = 0; i < 4; i++)
    {
      g_thread_join (threads[i]);
      g_assert_true (jobs[i].ok);
    }
}

static void
test_feed_errors (void)
{
  g_autoptr (OwbModel) m = chain_model (OWB_TYPE_FLOAT);
  g_autoptr (OwbSession) s = tu_session (m, 1, NULL);
  GError *error = NULL;
  OwbTensor *y = NULL;
  /* Missing input. */
  g_assert_false (owb_session_run (s, 0, NULL, NULL, 1, NULL, &y, NULL, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "'x'"));
  g_clear_error (&error);
  /* Wrong type. */
  g_autoptr (OwbTensor) xi = owb_tensor_new (OWB_TYPE_INT64, 2, (int64_t[]){ 2, 4 }, NULL);
  const char *names[] = { "x" };
  g_assert_false (owb_session_run (s, 1, names, &xi, 1, NULL, &y, NULL, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_TYPE);
  g_clear_error (&error);
  /* Wrong shape (known dim 4). */
  g_autoptr (OwbTensor) xs = owb_tensor_new (OWB_TYPE_FLOAT, 2, (int64_t[]){ 2, 5 }, NULL);
  g_assert_false (owb_session_run (s, 1, names, &xs, 1, NULL, &y, NULL, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_SHAPE);
  g_clear_error (&error);
  /* Unknown name. */
  const char *bad[] = { "nope" };
  g_assert_false (owb_session_run (s, 1, bad, &xs, 1, NULL, &y, NULL, NULL, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (y);
}

static void
test_float16_via_float32 (void)
{
  g_autoptr (OwbModel) m = chain_model (OWB_TYPE_FLOAT16);
  GError *error = NULL;
  g_autoptr (OwbSession) s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  g_autoptr (OwbTensor) x = make_x (OWB_TYPE_FLOAT16, 5);
  const char *names[] = { "x" };
  OwbTensor *y = NULL;
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &y, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (y->dtype, ==, OWB_TYPE_FLOAT16);
  check_chain_output (x, y);
  owb_tensor_unref (y);
}

/* Steps remember what inference gave and skip it while their input types stay the same; an output
 * shape that follows an input's value (Reshape's shape fed at run time) must still follow it. */
static void
test_shapes_follow_values (void)
{
  g_autoptr (OwbModel) m = tu_model_new (14);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 12 }, NULL);
  tu_add_value (m->graph->inputs, "shape", OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
  tu_node (m->graph, "Reshape", "reshape", "x,shape", "r");
  tu_node (m->graph, "Relu", "relu", "r", "y");
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 2, (int64_t[]){ -1, -1 }, NULL);
  GError *error = NULL;
  g_autoptr (OwbSession) s = tu_session (m, 1, &error);
  g_assert_no_error (error);
  g_autoptr (OwbTensor) x = owb_tensor_new (OWB_TYPE_FLOAT, 1, (int64_t[]){ 12 }, NULL);
  static const int64_t shapes[][2] = { { 3, 4 }, { 3, 4 }, { 4, 3 }, { 2, 6 }, { 3, 4 } };
  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    {
      g_autoptr (OwbTensor) shape = owb_tensor_new (OWB_TYPE_INT64, 1, (int64_t[]){ 2 }, NULL);
      ((int64_t *) shape->data)[0] = shapes[i][0];
      ((int64_t *) shape->data)[1] = shapes[i][1];
      OwbTensor *in[2] = { x, shape };
      const char *names[] = { "x", "shape" };
      OwbTensor *y = NULL;
      g_assert_true (owb_session_run (s, 2, names, in, 1, NULL, &y, NULL, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpint (y->rank, ==, 2);
      g_assert_cmpint (y->dims[0], ==, shapes[i][0]);
      g_assert_cmpint (y->dims[1], ==, shapes[i][1]);
      owb_tensor_unref (y);
    }
}

static void
test_cancel (void)
{
  g_autoptr (OwbModel) m = chain_model (OWB_TYPE_FLOAT);
  g_autoptr (OwbSession) s = tu_session (m, 1, NULL);
  g_autoptr (GCancellable) c = g_cancellable_new ();
  g_cancellable_cancel (c);
  g_autoptr (OwbTensor) x = make_x (OWB_TYPE_FLOAT, 2);
  const char *names[] = { "x" };
  OwbTensor *y = NULL;
  GError *error = NULL;
  g_assert_false (owb_session_run (s, 1, names, &x, 1, NULL, &y, NULL, c, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_true (owb_error_is_cancelled (error)); /* what the Run page and owb run ask */
  g_error_free (error);
}

/* x [rows, 8] -> MatMul w1 -> Gemm (w2, bias c2) -> Gemm (w3, C c3 [1, 1]) and MatMul w4, w4 also
 * read by an Identity. The weights are given to the graph (no reference kept here), so the
 * pointers stay valid while the session holds them. */
static OwbModel *
packed_weights_model (OwbTensor **w)
{
  OwbModel *m = tu_model_new (14);
  const char *rows[] = { "rows", NULL };
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 2, (int64_t[]){ -2, 8 }, rows);
  static const int64_t shapes[][2] = { { 8, 20 }, { 20, 12 }, { 12, 6 }, { 12, 6 } };
  for (int i = 0; i < 4; i++)
    {
      w[i] = owb_tensor_new (OWB_TYPE_FLOAT, 2, shapes[i], NULL);
      for (int64_t k = 0; k < w[i]->nelems; k++)
        ((float *) w[i]->data)[k] = (float) ((k * 7 + i * 3) % 11) / 11.0f - 0.4f;
      char *name = g_strdup_printf ("w%d", i + 1);
      owb_graph_add_initializer (m->graph, name, w[i]);
      g_free (name);
    }
  owb_graph_add_initializer (m->graph, "c2", tu_floats (1, (int64_t[]){ 12 }, NULL));
  owb_graph_add_initializer (m->graph, "c3", tu_floats (2, (int64_t[]){ 1, 1 }, (float[]){ 0.5f }));
  tu_node (m->graph, "MatMul", "mm1", "x,w1", "h");
  tu_node (m->graph, "Gemm", "gemm2", "h,w2,c2", "g");
  tu_node (m->graph, "Gemm", "gemm3", "g,w3,c3", "y3");
  tu_node (m->graph, "MatMul", "mm4", "g,w4", "y4");
  tu_node (m->graph, "Identity", "id", "w4", "w4copy");
  tu_add_value (m->graph->outputs, "y3", OWB_TYPE_FLOAT, 2, (int64_t[]){ -2, 6 }, rows);
  tu_add_value (m->graph->outputs, "y4", OWB_TYPE_FLOAT, 2, (int64_t[]){ -2, 6 }, rows);
  tu_add_value (m->graph->outputs, "w4copy", OWB_TYPE_FLOAT, 2, (int64_t[]){ 12, 6 }, NULL);
  return m;
}

/* A session made with owb_session_new_take frees the storage of weights that all their readers
 * hold packed (MatMul, and Gemm with a bias row), and keeps the others: a Gemm whose C is not
 * a bias row, a weight an Identity also reads, and any weight the caller kept a reference to.
 * Outputs are those of a session that keeps every weight, on 7 rows (the pack) and 2 (GEMV when
 * the weight is there, the pack when it is not). */
static void
test_packed_weights_freed (void)
{
  OwbSessionOptions options;
  owb_session_options_init (&options);
  options.providers = owb_providers_new_from_list ("cpu", NULL);
  GError *error = NULL;
  OwbTensor *rw[4];
  g_autoptr (OwbModel) ref_model = packed_weights_model (rw);
  g_autoptr (OwbSession) ref = owb_session_new (ref_model, &options, &error);
  g_assert_no_error (error);
  for (int variant = 0; variant < 2; variant++)
    {
      OwbTensor *w[4];
      OwbModel *m = packed_weights_model (w);
      /* variant 1: the caller keeps w1 */
      OwbTensor *kept = variant == 1 ? owb_tensor_ref (w[0]) : NULL;
      OwbSession *s = owb_session_new_take (m, &options, &error);
      g_assert_no_error (error);
      g_assert_true ((w[0]->data == NULL) == (variant == 0));
      g_assert_null (w[1]->data);
      g_assert_nonnull (w[2]->data);
      g_assert_nonnull (w[3]->data);
      for (int r = 0; r < 2; r++)
        {
          int64_t rows = r ? 2 : 7;
          OwbTensor *x = owb_tensor_new (OWB_TYPE_FLOAT, 2, (int64_t[]){ rows, 8 }, NULL);
          for (int64_t k = 0; k < x->nelems; k++)
            ((float *) x->data)[k] = (float) (k % 5) - 2.0f;
          const char *name = "x";
          OwbTensor *got[3] = { NULL }, *want[3] = { NULL };
          g_assert_true (owb_session_run (s, 1, &name, &x, 3, NULL, got, NULL, NULL, &error));
          g_assert_no_error (error);
          g_assert_true (owb_session_run (ref, 1, &name, &x, 3, NULL, want, NULL, NULL, &error));
          g_assert_no_error (error);
          for (int o = 0; o < 3; o++)
            {
              g_assert_cmpint (got[o]->nelems, ==, want[o]->nelems);
              for (int64_t k = 0; k < got[o]->nelems; k++)
                g_assert_cmpfloat_with_epsilon (((float *) got[o]->data)[k], ((float *) want[o]->data)[k], 1e-4);
              owb_tensor_unref (got[o]);
              owb_tensor_unref (want[o]);
            }
          owb_tensor_unref (x);
        }
      owb_session_free (s);
      if (kept)
        {
          g_assert_nonnull (kept->data);
          g_assert_cmpint (kept->ref_count, ==, 1);
          owb_tensor_unref (kept);
        }
    }
  /* owb_session_new: the caller's model still has every weight */
  for (int i = 0; i < 4; i++)
    g_assert_nonnull (rw[i]->data);
  g_ptr_array_unref (options.providers);
}

/* y = x + Neg (b): constant folding replaces Neg (b) by a new initializer and drops b. */
static OwbModel *
folded_model (OwbTensor **b)
{
  OwbModel *m = tu_model_new (14);
  tu_add_value (m->graph->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  *b = tu_floats (1, (int64_t[]){ 4 }, (float[]){ 1, 2, 3, 4 });
  owb_graph_add_initializer (m->graph, "b", owb_tensor_ref (*b));
  tu_node (m->graph, "Neg", "neg", "b", "nb");
  tu_node (m->graph, "Add", "add", "x,nb", "y");
  tu_add_value (m->graph->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]){ 4 }, NULL);
  return m;
}

/* owb_session_new_take releases the caller's model at once, so a weight the optimizer replaced is
 * held by nobody but this test; with owb_session_new the caller's model still holds it. Also on
 * failure the model is released. */
static void
test_new_take (void)
{
  OwbSessionOptions options;
  owb_session_options_init (&options);
  options.providers = owb_providers_new_from_list ("cpu", NULL);
  options.optimize = OWB_OPTIMIZE_BASIC;
  GError *error = NULL;
  for (int take = 0; take < 2; take++)
    {
      OwbTensor *b;
      OwbModel *m = folded_model (&b);
      OwbSession *s = take ? owb_session_new_take (m, &options, &error) : owb_session_new (m, &options, &error);
      g_assert_no_error (error);
      g_assert_cmpint (b->ref_count, ==, take ? 1 : 2);
      g_autoptr (OwbTensor) x = tu_floats (1, (int64_t[]){ 4 }, (float[]){ 10, 20, 30, 40 });
      const char *name = "x";
      OwbTensor *y = NULL;
      g_assert_true (owb_session_run (s, 1, &name, &x, 1, NULL, &y, NULL, NULL, &error));
      g_assert_no_error (error);
      for (int i = 0; i < 4; i++)
        g_assert_cmpfloat (((float *) y->data)[i], ==, 9.0f * (i + 1));
      owb_tensor_unref (y);
      owb_session_free (s);
      if (!take)
        owb_model_unref (m);
      g_assert_cmpint (b->ref_count, ==, 1);
      owb_tensor_unref (b);
    }
  OwbTensor *b;
  OwbModel *m = folded_model (&b);
  OwbSessionOptions none;
  owb_session_options_init (&none);
  g_assert_null (owb_session_new_take (m, &none, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_cmpint (b->ref_count, ==, 1);
  owb_tensor_unref (b);
  g_ptr_array_unref (options.providers);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/session/run-chain", test_run_chain);
  g_test_add_func ("/session/new-take", test_new_take);
  g_test_add_func ("/session/packed-weights-freed", test_packed_weights_freed);
  g_test_add_func ("/session/arena-kept", test_arena_kept);
  g_test_add_func ("/session/hooks", test_hooks);
  g_test_add_func ("/session/concurrent-runs", test_concurrent_runs);
  g_test_add_func ("/session/feed-errors", test_feed_errors);
  g_test_add_func ("/session/float16-via-float32", test_float16_via_float32);
  g_test_add_func ("/session/cancel", test_cancel);
  g_test_add_func ("/session/shapes-follow-values", test_shapes_follow_values);
  return g_test_run ();
}
