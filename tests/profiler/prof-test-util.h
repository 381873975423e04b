/* prof-test-util.h: what the profiler tests share: the sample model, a model with a Loop, recording
 * runs of a session, synthetic runs of any size, a scratch directory. */
#pragma once

#include <owb/owb-profiler.h>

#include <glib/gstdio.h>

#include <string.h>

static inline char *
prof_test_sample_path (void)
{
  const char *root = g_getenv ("OWB_SOURCE_ROOT");
  return g_build_filename (root ? root : ".", "data", "samples", "tiny-cnn.onnx", NULL);
}

static inline char *
prof_test_data_path (const char *name)
{
  const char *root = g_getenv ("OWB_SOURCE_ROOT");
  return g_build_filename (root ? root : ".", "tests", "profiler", "data", name, NULL);
}

/* A fresh directory, removed by prof_test_tmpdir_remove. */
static inline char *
prof_test_tmpdir (void)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp ("owb-prof-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static inline void
prof_test_tmpdir_remove (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      char *path = g_build_filename (dir, name, NULL);
      g_remove (path);
      g_free (path);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

static inline void
prof_test_add_value (GPtrArray *list, const char *name, OwbDataType dtype, int rank, const int64_t *dims)
{
  OwbValueType t;
  owb_value_type_init_tensor (&t, dtype, rank, NULL);
  for (int i = 0; i < rank; i++)
    t.dims[i] = OWB_DIM_VALUE (dims[i]);
  g_ptr_array_add (list, owb_value_info_new (name, &t));
}

static inline OwbNode *
prof_test_add_node (OwbGraph *g, const char *op, const char *name, const char *in0, const char *in1,
                    const char *in2, const char *out0)
{
  OwbNode *n = owb_node_new (op, "", name);
  const char *ins[] = { in0, in1, in2 };
  for (guint i = 0; i < G_N_ELEMENTS (ins) && ins[i]; i++)
    owb_node_add_input (n, ins[i]);
  owb_node_add_output (n, out0);
  if (g)
    owb_graph_add_node (g, n);
  return n;
}

/* y = Relu (Loop (M = trips, "", x) with body acc_out = acc + one): the body's Add runs trips times
 * per run. Input x float32[4]. */
static inline OwbModel *
prof_test_loop_model (int64_t trips)
{
  OwbModel *m = owb_model_new ();
  m->ir_version = 8;
  owb_model_set_opset (m, "", 13);
  m->graph = owb_graph_new ("main");
  m->graph->model = m;
  OwbGraph *g = m->graph;
  prof_test_add_value (g->inputs, "x", OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
  owb_graph_add_initializer (g, "M", owb_tensor_new_scalar_int64 (trips));
  OwbTensor *one = owb_tensor_new (OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 }, NULL);
  for (int i = 0; i < 4; i++)
    ((float *) one->data)[i] = 1;
  owb_graph_add_initializer (g, "one", one);

  OwbGraph *body = owb_graph_new ("body");
  prof_test_add_value (body->inputs, "i", OWB_TYPE_INT64, 0, NULL);
  prof_test_add_value (body->inputs, "cond_in", OWB_TYPE_BOOL, 0, NULL);
  prof_test_add_value (body->inputs, "acc", OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
  prof_test_add_node (body, "Identity", "keep_going", "cond_in", NULL, NULL, "cond_out");
  prof_test_add_node (body, "Add", "step", "acc", "one", NULL, "acc_out");
  prof_test_add_value (body->outputs, "cond_out", OWB_TYPE_BOOL, 0, NULL);
  prof_test_add_value (body->outputs, "acc_out", OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });

  OwbNode *loop = prof_test_add_node (NULL, "Loop", "loop", "M", "", "x", "sum");
  owb_node_add_attribute (loop, "body", OWB_ATTR_GRAPH)->g = body;
  owb_graph_add_node (g, loop);
  prof_test_add_node (g, "Relu", "relu", "sum", NULL, NULL, "y");
  prof_test_add_value (g->outputs, "y", OWB_TYPE_FLOAT, 1, (int64_t[]) { 4 });
  return m;
}

/* Runs model (a reference is taken) `iterations` times under a recorder, after one warm-up run
 * without hooks. Inputs: zeros of each feed input's declared shape (symbolic dims 1). */
static inline OwbProfRun *
prof_test_record (OwbModel *model, OwbOptimizeLevel level, int threads, int iterations)
{
  GError *error = NULL;
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", &error);
  g_assert_no_error (error);
  opts.n_threads = threads;
  opts.optimize = level;
  OwbSession *s = owb_session_new (model, &opts, &error);
  g_assert_no_error (error);
  g_ptr_array_unref (opts.providers);

  guint n_in = owb_session_get_n_inputs (s), n_out = owb_session_get_n_outputs (s);
  const char **names = g_new0 (const char *, n_in + 1);
  OwbTensor **inputs = g_new0 (OwbTensor *, n_in + 1);
  OwbTensor **outputs = g_new0 (OwbTensor *, n_out + 1);
  for (guint i = 0; i < n_in; i++)
    {
      const OwbValueInfo *info = owb_session_get_input (s, i);
      int64_t dims[OWB_MAX_RANK];
      for (int d = 0; d < info->type.rank; d++)
        dims[d] = owb_dim_is_known (info->type.dims[d]) ? info->type.dims[d].value : 1;
      names[i] = info->name;
      inputs[i] = owb_tensor_new (info->type.dtype, info->type.rank, dims, &error);
      g_assert_no_error (error);
    }
  OwbProfRun *run = owb_prof_run_new ();
  OwbProfRecorder *rec = owb_prof_recorder_new (run, s);
  OwbRunOptions ro;
  owb_run_options_init (&ro);
  ro.hooks = owb_prof_recorder_get_hooks (rec);
  for (int it = -1; it < iterations; it++)
    {
      gboolean ok = owb_session_run_with_options (s, it >= 0 ? &ro : NULL, n_in, names, inputs, n_out, NULL, outputs,
                                                  NULL, &error);
      g_assert_no_error (error);
      g_assert_true (ok);
      for (guint o = 0; o < n_out; o++)
        g_clear_pointer (&outputs[o], owb_tensor_unref);
    }
  owb_prof_recorder_free (rec);
  for (guint i = 0; i < n_in; i++)
    owb_tensor_unref (inputs[i]);
  g_free (inputs);
  g_free (outputs);
  g_free (names);
  owb_session_free (s);
  run->model_path = g_strdup ("memory.onnx");
  run->model_hash = g_strdup ("sha256:test");
  owb_prof_run_set_host (run);
  g_free (run->optimize);
  run->optimize = g_strdup (level == OWB_OPTIMIZE_DISABLED ? "disabled" : "all");
  g_free (run->providers);
  run->providers = g_strdup ("cpu");
  return run;
}

/* A run of n_events events over 100 nodes in a chain (2 iterations), without a session: for
 * sizes and crashes. */
static inline OwbProfRun *
prof_test_synthetic_run (guint n_events, const char *label)
{
  OwbProfRun *run = owb_prof_run_new ();
  guint n_nodes = 100;
  for (guint n = 0; n < n_nodes; n++)
    {
      char name[32], in[32], out[32], op[16];
      g_snprintf (name, sizeof name, "node_%u", n);
      g_snprintf (in, sizeof in, "t%u", n);
      g_snprintf (out, sizeof out, "t%u", n + 1);
      g_snprintf (op, sizeof op, "Op%u", n % 7);
      const char *ins[] = { in, NULL }, *outs[] = { out, NULL };
      owb_prof_run_add_node (run, "", name, op, "cpu", ins, outs);
    }
  guint per_iteration = (n_events + 1) / 2;
  for (guint it = 0; it < 2; it++)
    owb_prof_run_add_iteration (run, it * (gint64) per_iteration * 1000, per_iteration * 1000);
  for (guint e = 0; e < n_events; e++)
    {
      OwbProfEvent ev = {
        .node = e % n_nodes,
        .iteration = e / per_iteration,
        .thread = 0,
        .kind = OWB_PROF_EVENT_NODE,
        .start_ns = (gint64) e * 1000,
        .duration_ns = 900 + e % 50,
        .self_ns = 900 + e % 50,
        .input_shapes = "float32[1,64,56,56]",
        .output_shapes = "float32[1,64,56,56]",
        .input_bytes = 802816,
        .output_bytes = 802816,
        .arena_bytes = 1 << 20,
      };
      owb_prof_run_add_event (run, &ev);
    }
  run->model_path = g_strdup ("synthetic.onnx");
  run->model_hash = g_strdup ("sha256:synthetic");
  g_free (run->label);
  run->label = g_strdup (label);
  run->threads = 1;
  owb_prof_run_set_host (run);
  return run;
}
