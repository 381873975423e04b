/* test-prof-hooks.c: the engine's per-run hooks as a profiler needs them: begin/end of runs and
 * nodes with monotonic times, threads, providers, shapes and arena bytes; a Loop body's nodes under
 * their graph path once per iteration; concurrent runs of one session each seeing their own. */
#include "prof-test-util.h"

typedef struct {
  guint runs_begun, runs_ended, begun, ended;
  guint loop_body_events;
  gboolean bad;
  gint64 last_end;        /* of the previous top-level node */
  gint64 run_start;
  gsize max_arena;
  guint worker_spans;
  int n_threads;
  int depth_open;
} Counts;

static void
on_run_begin (const OwbRunEvent *ev, gpointer data)
{
  Counts *c = data;
  c->runs_begun++;
  c->run_start = ev->start_ns;
  c->last_end = ev->start_ns;
  c->n_threads = ev->n_threads;
  c->bad |= ev->end_ns != 0 || ev->start_ns <= 0;
}

static void
on_run_end (const OwbRunEvent *ev, gpointer data)
{
  Counts *c = data;
  c->runs_ended++;
  c->bad |= !ev->ok || ev->end_ns < ev->start_ns || ev->end_ns < c->last_end || !ev->stats;
  c->bad |= ev->stats && ev->stats->n_nodes_run == 0;
}

static void
on_node_begin (const OwbNodeEvent *ev, gpointer data)
{
  Counts *c = data;
  c->begun++;
  c->depth_open++;
  c->bad |= ev->end_ns != 0 || ev->outputs != NULL || ev->node == NULL;
}

static void
on_node_end (const OwbNodeEvent *ev, gpointer data)
{
  Counts *c = data;
  c->ended++;
  c->depth_open--;
  c->bad |= ev->end_ns < ev->start_ns || ev->start_ns < c->run_start;
  c->bad |= g_strcmp0 (ev->provider, "cpu") != 0 || g_strcmp0 (ev->op_type, ev->node->op_type) != 0;
  c->bad |= ev->thread != 0 || ev->depth != c->depth_open;
  c->bad |= ev->n_outputs != ev->node->n_outputs || ev->n_inputs != ev->node->n_inputs;
  if (ev->depth == 0)
    {
      /* top-level nodes run one after another */
      c->bad |= ev->graph_path[0] != '\0' || ev->start_ns < c->last_end;
      c->last_end = ev->end_ns;
    }
  else
    {
      c->bad |= strcmp (ev->graph_path, "loop/body") != 0;
      c->loop_body_events += strcmp (ev->node->name, "step") == 0;
    }
  for (int o = 0; o < ev->n_outputs; o++)
    c->bad |= ev->outputs[o] == NULL;
  c->max_arena = MAX (c->max_arena, ev->arena_bytes);
  for (int w = 0; w < ev->n_workers; w++)
    {
      const OwbWorkerSpan *s = &ev->workers[w];
      c->worker_spans++;
      c->bad |= s->worker < 1 || s->worker >= c->n_threads;
      c->bad |= s->start_ns < ev->start_ns || s->end_ns > ev->end_ns || s->end_ns < s->start_ns;
      c->bad |= s->busy_ns < 0 || s->busy_ns > s->end_ns - s->start_ns;
    }
}

static const OwbRunHooks counting_hooks = { on_run_begin, on_run_end, on_node_begin, on_node_end, NULL };

static OwbSession *
session_new (OwbModel *model, int threads)
{
  GError *error = NULL;
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", &error);
  opts.n_threads = threads;
  OwbSession *s = owb_session_new (model, &opts, &error);
  g_assert_no_error (error);
  g_ptr_array_unref (opts.providers);
  return s;
}

static OwbTensor *
zeros (const OwbValueInfo *info)
{
  int64_t dims[OWB_MAX_RANK];
  for (int d = 0; d < info->type.rank; d++)
    dims[d] = owb_dim_is_known (info->type.dims[d]) ? info->type.dims[d].value : 1;
  return owb_tensor_new (info->type.dtype, info->type.rank, dims, NULL);
}

static void
run_counted (OwbSession *s, Counts *c, int times)
{
  GError *error = NULL;
  const OwbValueInfo *info = owb_session_get_input (s, 0);
  g_autoptr (OwbTensor) x = zeros (info);
  OwbRunHooks hooks = counting_hooks;
  hooks.user_data = c;
  OwbRunOptions ro;
  owb_run_options_init (&ro);
  ro.hooks = &hooks;
  for (int i = 0; i < times; i++)
    {
      OwbTensor *out = NULL;
      const char *names[] = { info->name };
      g_assert_true (owb_session_run_with_options (s, &ro, 1, names, &x, 1, NULL, &out, NULL, &error));
      g_assert_no_error (error);
      owb_tensor_unref (out);
    }
}

static void
test_sample_model (void)
{
  GError *error = NULL;
  g_autofree char *path = prof_test_sample_path ();
  g_autoptr (OwbModel) model = owb_model_load_file (path, &error);
  g_assert_no_error (error);
  g_autoptr (OwbSession) s = session_new (model, 2);
  guint n_nodes = owb_session_get_graph (s)->nodes->len;
  Counts c = { 0 };
  run_counted (s, &c, 5);
  g_assert_false (c.bad);
  g_assert_cmpuint (c.runs_begun, ==, 5);
  g_assert_cmpuint (c.runs_ended, ==, 5);
  g_assert_cmpuint (c.begun, ==, 5 * n_nodes);
  g_assert_cmpuint (c.ended, ==, 5 * n_nodes);
  g_assert_cmpuint (c.max_arena, >, 0);
  g_assert_cmpint (c.n_threads, ==, 2);
  /* whether the worker got a chunk depends on the machine's load: checked above when it did */
  g_test_message ("worker spans in 5 runs at 2 threads: %u", c.worker_spans);
}

static void
test_loop_body (void)
{
  g_autoptr (OwbModel) model = prof_test_loop_model (4);
  g_autoptr (OwbSession) s = session_new (model, 1);
  Counts c = { 0 };
  run_counted (s, &c, 3);
  g_assert_false (c.bad);
  g_assert_cmpuint (c.runs_ended, ==, 3);
  /* one event per iteration of the Loop: 4 per run */
  g_assert_cmpuint (c.loop_body_events, ==, 3 * 4);
  /* loop and relu, then 4 x (keep_going, step) per run */
  g_assert_cmpuint (c.ended, ==, 3 * (2 + 4 * 2));
}

/* No hooks, empty hooks, and the session's own hooks beside the run's. */
typedef struct {
  guint begun, ended;
} SessionCounts;

static void
session_begin (const OwbNode *node, int index, gpointer data)
{
  ((SessionCounts *) data)->begun++;
}

static void
session_end (const OwbNode *node, int index, OwbTensor *const *outputs, int n_outputs, gpointer data)
{
  ((SessionCounts *) data)->ended++;
}

static void
test_hooks_optional (void)
{
  GError *error = NULL;
  g_autoptr (OwbModel) model = prof_test_loop_model (2);
  SessionCounts sc = { 0 };
  OwbTraceHooks session_hooks = { session_begin, session_end, &sc };
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", &error);
  opts.n_threads = 1;
  opts.hooks = &session_hooks;
  g_autoptr (OwbSession) s = owb_session_new (model, &opts, &error);
  g_assert_no_error (error);
  g_ptr_array_unref (opts.providers);
  const char *names[] = { "x" };
  g_autoptr (OwbTensor) x = zeros (owb_session_get_input (s, 0));
  OwbRunHooks none = { NULL };
  OwbRunOptions ro;
  owb_run_options_init (&ro);
  OwbTensor *out = NULL;
  g_assert_true (owb_session_run_with_options (s, NULL, 1, names, &x, 1, NULL, &out, NULL, &error));
  g_clear_pointer (&out, owb_tensor_unref);
  ro.hooks = &none;
  g_assert_true (owb_session_run_with_options (s, &ro, 1, names, &x, 1, NULL, &out, NULL, &error));
  g_clear_pointer (&out, owb_tensor_unref);
  g_assert_true (owb_session_run (s, 1, names, &x, 1, NULL, &out, NULL, NULL, &error));
  g_clear_pointer (&out, owb_tensor_unref);
  Counts c = { 0 };
  OwbRunHooks hooks = counting_hooks;
  hooks.user_data = &c;
  ro.hooks = &hooks;
  g_assert_true (owb_session_run_with_options (s, &ro, 1, names, &x, 1, NULL, &out, NULL, &error));
  g_clear_pointer (&out, owb_tensor_unref);
  g_assert_no_error (error);
  g_assert_false (c.bad);
  /* 2 + 2 x 2 nodes per run: the session's hooks saw all four runs, the run's hooks one */
  g_assert_cmpuint (sc.begun, ==, 4 * 6);
  g_assert_cmpuint (sc.ended, ==, 4 * 6);
  g_assert_cmpuint (c.ended, ==, 6);
}

/* Two threads run one session at once, each with its own recorder: each sees only its runs. */
typedef struct {
  OwbSession *session;
  OwbProfRun *run;
  int iterations;
} Worker;

static gpointer
concurrent_worker (gpointer data)
{
  Worker *w = data;
  GError *error = NULL;
  const OwbValueInfo *info = owb_session_get_input (w->session, 0);
  g_autoptr (OwbTensor) x = zeros (info);
  g_autoptr (OwbProfRecorder) rec = owb_prof_recorder_new (w->run, w->session);
  OwbRunOptions ro;
  owb_run_options_init (&ro);
  ro.hooks = owb_prof_recorder_get_hooks (rec);
  for (int i = 0; i < w->iterations; i++)
    {
      OwbTensor *out = NULL;
      const char *names[] = { info->name };
      g_assert_true (owb_session_run_with_options (w->session, &ro, 1, names, &x, 1, NULL, &out, NULL, &error));
      owb_tensor_unref (out);
    }
  return NULL;
}

static void
test_concurrent_runs (void)
{
  g_autoptr (OwbModel) model = prof_test_loop_model (3);
  g_autoptr (OwbSession) s = session_new (model, 2);
  Worker a = { s, owb_prof_run_new (), 20 }, b = { s, owb_prof_run_new (), 30 };
  GThread *ta = g_thread_new ("a", concurrent_worker, &a);
  GThread *tb = g_thread_new ("b", concurrent_worker, &b);
  g_thread_join (ta);
  g_thread_join (tb);
  /* loop, relu, 3 x (keep_going, step) */
  g_assert_cmpuint (a.run->iterations->len, ==, 20);
  g_assert_cmpuint (b.run->iterations->len, ==, 30);
  guint node_events_a = 0, node_events_b = 0;
  for (guint e = 0; e < a.run->events->len; e++)
    node_events_a += g_array_index (a.run->events, OwbProfEvent, e).kind == OWB_PROF_EVENT_NODE;
  for (guint e = 0; e < b.run->events->len; e++)
    node_events_b += g_array_index (b.run->events, OwbProfEvent, e).kind == OWB_PROF_EVENT_NODE;
  g_assert_cmpuint (node_events_a, ==, 20 * 8);
  g_assert_cmpuint (node_events_b, ==, 30 * 8);
  g_assert_cmpuint (a.run->nodes->len, ==, 4);
  owb_prof_run_free (a.run);
  owb_prof_run_free (b.run);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/prof-hooks/sample-model", test_sample_model);
  g_test_add_func ("/prof-hooks/loop-body", test_loop_body);
  g_test_add_func ("/prof-hooks/optional", test_hooks_optional);
  g_test_add_func ("/prof-hooks/concurrent-runs", test_concurrent_runs);
  return g_test_run ();
}
