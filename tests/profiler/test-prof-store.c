/* test-prof-store.c: runs recorded from real sessions, stored and read back equal; listing and
 * deleting; the queries (per-node and per-op statistics, the wall split, the critical path);
 * comparison of two runs; the Chrome-trace export checked as JSON. */
#include "prof-test-util.h"

#include <math.h>
#include <sqlite3.h>

static void
assert_runs_equal (const OwbProfRun *a, const OwbProfRun *b)
{
  g_assert_cmpstr (a->model_path, ==, b->model_path);
  g_assert_cmpstr (a->model_hash, ==, b->model_hash);
  g_assert_cmpstr (a->label, ==, b->label);
  g_assert_cmpstr (a->date, ==, b->date);
  g_assert_cmpstr (a->host_cpu, ==, b->host_cpu);
  g_assert_cmpint (a->threads, ==, b->threads);
  g_assert_cmpstr (a->optimize, ==, b->optimize);
  g_assert_cmpstr (a->providers, ==, b->providers);
  g_assert_cmpstr (a->engine_version, ==, b->engine_version);
  g_assert_cmpstr (a->source, ==, b->source);
  g_assert_cmpuint (a->nodes->len, ==, b->nodes->len);
  for (guint n = 0; n < a->nodes->len; n++)
    {
      const OwbProfNode *x = g_ptr_array_index (a->nodes, n), *y = g_ptr_array_index (b->nodes, n);
      g_assert_cmpstr (x->name, ==, y->name);
      g_assert_cmpstr (x->op_type, ==, y->op_type);
      g_assert_cmpstr (x->provider, ==, y->provider);
      g_assert_cmpstr (x->graph_path, ==, y->graph_path);
      g_assert_true (g_strv_equal ((const char *const *) x->inputs, (const char *const *) y->inputs));
      g_assert_true (g_strv_equal ((const char *const *) x->outputs, (const char *const *) y->outputs));
      g_assert_true (g_strv_equal ((const char *const *) x->origins, (const char *const *) y->origins));
    }
  g_assert_cmpuint (a->iterations->len, ==, b->iterations->len);
  g_assert_cmpmem (a->iterations->data, a->iterations->len * sizeof (OwbProfIteration), b->iterations->data,
                   b->iterations->len * sizeof (OwbProfIteration));
  g_assert_cmpuint (a->events->len, ==, b->events->len);
  for (guint e = 0; e < a->events->len; e++)
    {
      const OwbProfEvent *x = &g_array_index (a->events, OwbProfEvent, e);
      const OwbProfEvent *y = &g_array_index (b->events, OwbProfEvent, e);
      g_assert_cmpuint (x->node, ==, y->node);
      g_assert_cmpuint (x->iteration, ==, y->iteration);
      g_assert_cmpuint (x->thread, ==, y->thread);
      g_assert_cmpint (x->kind, ==, y->kind);
      g_assert_cmpint (x->start_ns, ==, y->start_ns);
      g_assert_cmpint (x->duration_ns, ==, y->duration_ns);
      g_assert_cmpint (x->self_ns, ==, y->self_ns);
      g_assert_cmpstr (x->input_shapes, ==, y->input_shapes);
      g_assert_cmpstr (x->output_shapes, ==, y->output_shapes);
      g_assert_cmpint (x->input_bytes, ==, y->input_bytes);
      g_assert_cmpint (x->output_bytes, ==, y->output_bytes);
      g_assert_cmpint (x->arena_bytes, ==, y->arena_bytes);
    }
}

static OwbModel *
load_sample (void)
{
  GError *error = NULL;
  g_autofree char *path = prof_test_sample_path ();
  OwbModel *m = owb_model_load_file (path, &error);
  g_assert_no_error (error);
  return m;
}

static void
test_store_and_load (void)
{
  GError *error = NULL;
  g_autofree char *dir = prof_test_tmpdir ();
  g_autofree char *path = g_build_filename (dir, "runs.sqlite", NULL);
  g_autoptr (OwbModel) sample = load_sample ();
  g_autoptr (OwbModel) looped = prof_test_loop_model (5);
  g_autoptr (OwbProfRun) a = prof_test_record (sample, OWB_OPTIMIZE_DISABLED, 2, 4);
  g_autoptr (OwbProfRun) b = prof_test_record (looped, OWB_OPTIMIZE_DISABLED, 1, 3);
  g_free (a->label);
  a->label = g_strdup ("sample \"quoted\"");
  g_free (b->model_hash);
  b->model_hash = g_strdup ("sha256:loop");

  OwbProfDb *db = owb_prof_db_open (path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (owb_prof_db_store_run (db, a, &error));
  g_assert_true (owb_prof_db_store_run (db, b, &error));
  g_assert_no_error (error);
  g_assert_cmpint (a->id, >, 0);
  g_assert_cmpint (b->id, >, a->id);
  /* the same nodes again (one more run of the sample) add no node rows */
  g_autoptr (OwbProfRun) a2 = prof_test_record (sample, OWB_OPTIMIZE_DISABLED, 2, 2);
  g_assert_true (owb_prof_db_store_run (db, a2, &error));
  /* fused nodes keep their origins */
  g_autoptr (OwbProfRun) fused = prof_test_record (sample, OWB_OPTIMIZE_ALL, 1, 2);
  g_assert_true (owb_prof_db_store_run (db, fused, &error));
  g_assert_cmpstr (((OwbProfNode *) g_ptr_array_index (fused->nodes, 0))->origins[2], ==, "relu1");
  g_autoptr (OwbProfRun) fused_back = owb_prof_db_load_run (db, fused->id, &error);
  assert_runs_equal (fused, fused_back);
  g_assert_true (owb_prof_db_delete_run (db, fused->id, &error));
  owb_prof_db_close (db);

  db = owb_prof_db_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_autoptr (OwbProfRun) a_back = owb_prof_db_load_run (db, a->id, &error);
  g_assert_no_error (error);
  g_autoptr (OwbProfRun) b_back = owb_prof_db_load_run (db, b->id, &error);
  g_assert_no_error (error);
  assert_runs_equal (a, a_back);
  assert_runs_equal (b, b_back);

  /* the Loop's body nodes under their graph path, one event per iteration of the Loop */
  guint body_events = 0;
  for (guint e = 0; e < b_back->events->len; e++)
    {
      const OwbProfEvent *ev = &g_array_index (b_back->events, OwbProfEvent, e);
      const OwbProfNode *node = g_ptr_array_index (b_back->nodes, ev->node);
      if (strcmp (node->name, "step") == 0)
        {
          g_assert_cmpstr (node->graph_path, ==, "loop/body");
          body_events++;
        }
    }
  g_assert_cmpuint (body_events, ==, 3 * 5);

  g_autoptr (GPtrArray) runs = owb_prof_db_list_runs (db, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 3);
  OwbProfRunSummary *first = g_ptr_array_index (runs, 0);
  g_assert_cmpint (first->id, ==, a->id);
  g_assert_cmpstr (first->label, ==, "sample \"quoted\"");
  g_assert_cmpuint (first->n_iterations, ==, 4);
  g_assert_cmpuint (first->n_events, ==, a->events->len);
  g_assert_cmpfloat_with_epsilon (first->median_ms, owb_prof_run_get_median_ms (a), 1e-9);
  g_autoptr (GPtrArray) loop_runs = owb_prof_db_list_runs (db, "sha256:loop", &error);
  g_assert_cmpuint (loop_runs->len, ==, 1);

  /* deleting a run takes its events, iterations and the nodes no other run has */
  g_assert_true (owb_prof_db_delete_run (db, b->id, &error));
  g_assert_no_error (error);
  g_assert_null (owb_prof_db_load_run (db, b->id, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (owb_prof_db_delete_run (db, b->id, &error));
  g_clear_error (&error);
  g_autoptr (OwbProfRun) a_again = owb_prof_db_load_run (db, a->id, &error);
  assert_runs_equal (a, a_again);
  g_autofree char *integrity = owb_prof_db_check_integrity (db, &error);
  g_assert_cmpstr (integrity, ==, "ok");
  owb_prof_db_close (db);

  sqlite3 *raw = NULL;
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_open (path, &raw), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (raw, "SELECT count (*) FROM nodes", -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (st, 0), ==, a->nodes->len);
  sqlite3_finalize (st);
  sqlite3_close (raw);
  prof_test_tmpdir_remove (dir);
}

/* Iteration numbers are read from the file: a damaged event (an iteration of 2^30, or -1 read back
 * as 2^32 - 1) made the statistics ask for nodes x 2^30 doubles (9.6 GB in the fuzz-profile
 * reproducer, an abort). The load refuses such a run with an error naming it. */
static void
test_damaged_iteration (void)
{
  GError *error = NULL;
  g_autofree char *dir = prof_test_tmpdir ();
  g_autofree char *path = g_build_filename (dir, "runs.sqlite", NULL);
  g_autoptr (OwbModel) sample = load_sample ();
  g_autoptr (OwbProfRun) run = prof_test_record (sample, OWB_OPTIMIZE_DISABLED, 1, 3);
  OwbProfDb *db = owb_prof_db_open (path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (owb_prof_db_store_run (db, run, &error));
  owb_prof_db_close (db);

  const char *damage[] = { "UPDATE events SET iteration = 1073741824 WHERE rowid = (SELECT max (rowid) FROM events)",
                           "UPDATE events SET iteration = -1 WHERE rowid = (SELECT min (rowid) FROM events)" };
  for (guint d = 0; d < G_N_ELEMENTS (damage); d++)
    {
      sqlite3 *raw = NULL;
      g_assert_cmpint (sqlite3_open (path, &raw), ==, SQLITE_OK);
      g_assert_cmpint (sqlite3_exec (raw, damage[d], NULL, NULL, NULL), ==, SQLITE_OK);
      sqlite3_close (raw);
      db = owb_prof_db_open (path, FALSE, &error);
      g_assert_no_error (error);
      OwbProfRun *back = owb_prof_db_load_run (db, run->id, &error);
      g_assert_null (back);
      g_assert_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "damaged or too large"));
      g_clear_error (&error);
      owb_prof_db_close (db);
    }
  prof_test_tmpdir_remove (dir);
}

static void
test_statistics (void)
{
  g_autoptr (OwbModel) sample = load_sample ();
  g_autoptr (OwbProfRun) run = prof_test_record (sample, OWB_OPTIMIZE_DISABLED, 2, 5);
  guint n_nodes = run->nodes->len;
  g_assert_cmpuint (n_nodes, ==, 10);
  g_autoptr (GArray) nodes = owb_prof_run_dup_node_stats (run);
  g_autoptr (GArray) ops = owb_prof_run_dup_op_stats (run);
  g_assert_cmpuint (nodes->len, ==, n_nodes);
  double share = 0, node_total = 0, op_total = 0;
  for (guint i = 0; i < nodes->len; i++)
    {
      const OwbProfStat *s = &g_array_index (nodes, OwbProfStat, i);
      g_assert_cmpfloat (s->min_ms, <=, s->median_ms);
      g_assert_cmpfloat (s->median_ms, <=, s->p90_ms + 1e-12);
      g_assert_cmpfloat (s->calls, ==, 1);
      if (i > 0)
        g_assert_cmpfloat (s->mean_ms, <=, g_array_index (nodes, OwbProfStat, i - 1).mean_ms);
      share += s->share;
      node_total += s->mean_ms;
    }
  g_assert_cmpfloat_with_epsilon (share, 1, 1e-9);
  guint convs = 0;
  for (guint i = 0; i < ops->len; i++)
    {
      const OwbProfStat *s = &g_array_index (ops, OwbProfStat, i);
      op_total += s->mean_ms;
      if (strcmp (s->op_type, "Conv") == 0)
        convs = (guint) s->calls;
    }
  g_assert_cmpuint (convs, ==, 2);
  g_assert_cmpfloat_with_epsilon (op_total, node_total, 1e-9);

  OwbProfWallSplit split;
  owb_prof_run_get_wall_split (run, &split);
  g_assert_cmpfloat (split.wall_ms, >, 0);
  g_assert_cmpfloat (split.nodes_ms, <=, split.wall_ms);
  g_assert_cmpfloat_with_epsilon (split.nodes_ms + split.gaps_ms, split.wall_ms, 1e-9);
  g_assert_cmpuint (split.thread_busy_ms->len, >=, 1);
  g_assert_cmpfloat_with_epsilon (g_array_index (split.thread_busy_ms, double, 0), split.nodes_ms, 1e-9);
  owb_prof_wall_split_clear (&split);

  /* the sample is a chain: its critical path is every node, in order */
  double total = 0;
  g_autoptr (GArray) path = owb_prof_run_dup_critical_path (run, &total);
  g_assert_cmpuint (path->len, ==, n_nodes);
  g_assert_cmpfloat (total, >, 0);
  g_assert_cmpstr (((OwbProfNode *) g_ptr_array_index (run->nodes, g_array_index (path, guint, 0)))->name, ==, "conv1");
}

/* Two chains joined by an Add: the critical path takes the slower. */
static void
test_critical_path_branches (void)
{
  g_autoptr (OwbProfRun) run = owb_prof_run_new ();
  const char *names[] = { "a1", "a2", "b1", "join" };
  const char *ins[][3] = { { "x", NULL }, { "ta1", NULL }, { "x", NULL }, { "ta2", "tb1", NULL } };
  const char *outs[][2] = { { "ta1", NULL }, { "ta2", NULL }, { "tb1", NULL }, { "y", NULL } };
  gint64 durations[] = { 1000, 1000, 5000, 500 };
  gint64 t = 0;
  for (guint n = 0; n < 4; n++)
    {
      owb_prof_run_add_node (run, "", names[n], "Op", "cpu", ins[n], outs[n]);
      OwbProfEvent ev = { .node = n, .start_ns = t, .duration_ns = durations[n], .self_ns = durations[n], .arena_bytes = -1 };
      owb_prof_run_add_event (run, &ev);
      t += durations[n];
    }
  owb_prof_run_add_iteration (run, 0, t);
  double total = 0;
  g_autoptr (GArray) path = owb_prof_run_dup_critical_path (run, &total);
  g_assert_cmpuint (path->len, ==, 2);
  g_assert_cmpuint (g_array_index (path, guint, 0), ==, 2);
  g_assert_cmpuint (g_array_index (path, guint, 1), ==, 3);
  g_assert_cmpfloat_with_epsilon (total, 0.0055, 1e-12);
}

static void
test_compare (void)
{
  g_autoptr (OwbModel) sample = load_sample ();
  g_autoptr (OwbProfRun) plain = prof_test_record (sample, OWB_OPTIMIZE_DISABLED, 1, 3);
  g_autoptr (OwbProfRun) again = prof_test_record (sample, OWB_OPTIMIZE_DISABLED, 2, 3);
  g_autoptr (OwbProfRun) fused = prof_test_record (sample, OWB_OPTIMIZE_EXTENDED, 1, 3);

  g_autoptr (GPtrArray) same = owb_prof_compare_nodes (plain, again);
  g_assert_cmpuint (same->len, ==, 10);
  g_assert_cmpuint (owb_prof_deltas_count_matched (same), ==, 10);
  const OwbProfDelta *d0 = g_ptr_array_index (same, 0);
  g_assert_cmpstr (d0->name, ==, "conv1");
  g_assert_cmpstr (d0->op_type, ==, "Conv");

  /* -O extended fuses conv1 + bn1 + relu1 and conv2 + relu2 (the fusion level; at -O all the layout
   * pass may also move the sample to NHWC, which its cost rule decides): each fused node is matched with the nodes it
   * replaced, whose times add up; the rest by name. Every node is in one row. */
  g_autoptr (GPtrArray) nodes = owb_prof_compare_nodes (plain, fused);
  g_assert_cmpuint (fused->nodes->len, ==, 7);
  g_assert_cmpuint (nodes->len, ==, 7);
  g_assert_cmpuint (owb_prof_deltas_count_matched (nodes), ==, 7);
  const OwbProfDelta *first = g_ptr_array_index (nodes, 0);
  g_assert_cmpstr (first->name, ==, "conv1");
  g_assert_cmpstr (first->op_type, ==, "FusedConv");
  g_assert_cmpint (first->match, ==, OWB_PROF_MATCH_ORIGINS);
  g_assert_true (first->merged_in_a);
  const char *conv1_group[] = { "conv1", "bn1", "relu1", NULL };
  g_assert_true (g_strv_equal (first->merged, conv1_group));
  g_autoptr (GArray) plain_stats = owb_prof_run_dup_node_stats (plain);
  double sum = 0;
  for (guint i = 0; i < plain_stats->len; i++)
    {
      const OwbProfStat *st = &g_array_index (plain_stats, OwbProfStat, i);
      if (g_strv_contains (conv1_group, st->name))
        sum += st->median_ms;
    }
  g_assert_cmpfloat_with_epsilon (first->a_ms, sum, 1e-12);
  /* the same the other way round: the fused run as A */
  g_autoptr (GPtrArray) back = owb_prof_compare_nodes (fused, plain);
  g_assert_cmpuint (back->len, ==, 7);
  first = g_ptr_array_index (back, 0);
  g_assert_cmpint (first->match, ==, OWB_PROF_MATCH_ORIGINS);
  g_assert_false (first->merged_in_a);
  g_assert_cmpfloat_with_epsilon (first->b_ms, sum, 1e-12);

  /* ops: BatchNormalization is folded away at -O extended */
  g_autoptr (GPtrArray) ops = owb_prof_compare_ops (plain, fused);
  gboolean saw_bn = FALSE;
  for (guint i = 0; i < ops->len; i++)
    {
      const OwbProfDelta *d = g_ptr_array_index (ops, i);
      if (strcmp (d->op_type, "BatchNormalization") == 0)
        {
          saw_bn = TRUE;
          g_assert_false (isnan (d->a_ms));
          g_assert_true (isnan (d->b_ms));
        }
    }
  g_assert_true (saw_bn);
}

/* A run of nodes (name, op) one after another, each 1 ms. */
static OwbProfRun *
named_run (const char *const *nodes)
{
  OwbProfRun *run = owb_prof_run_new ();
  guint n = 0;
  for (; nodes[2 * n]; n++)
    {
      guint index = owb_prof_run_add_node (run, "", nodes[2 * n], nodes[2 * n + 1], "cpu", NULL, NULL);
      OwbProfEvent ev = { .node = index, .start_ns = n * 1000000, .duration_ns = 1000000, .self_ns = 1000000,
                          .arena_bytes = -1 };
      owb_prof_run_add_event (run, &ev);
    }
  owb_prof_run_add_iteration (run, 0, n * 1000000);
  return run;
}

static void
test_compare_by_op_type (void)
{
  const char *a_nodes[] = { "conv1", "Conv", "relu", "Relu", "conv2", "Conv", "gemm", "Gemm", "mm1", "MatMul", NULL };
  const char *b_nodes[] = { "c1_fused", "Conv", "relu", "Relu", "c2_fused", "Conv", "extra", "Add", "m1", "MatMul",
                            "m2", "MatMul", NULL };
  g_autoptr (OwbProfRun) a = named_run (a_nodes);
  g_autoptr (OwbProfRun) b = named_run (b_nodes);
  g_autoptr (GPtrArray) d = owb_prof_compare_nodes (a, b);
  /* conv1 ~ c1_fused and conv2 ~ c2_fused by op type in order, relu by name; gemm only in A;
   * A's one MatMul left against B's two: not paired; extra only in B */
  g_assert_cmpuint (d->len, ==, 8);
  const OwbProfDelta *x = g_ptr_array_index (d, 0);
  g_assert_cmpstr (x->name, ==, "conv1");
  g_assert_cmpstr (x->b_name, ==, "c1_fused");
  g_assert_cmpint (x->match, ==, OWB_PROF_MATCH_OP_TYPE);
  x = g_ptr_array_index (d, 1);
  g_assert_cmpstr (x->name, ==, "relu");
  g_assert_null (x->b_name);
  g_assert_cmpint (x->match, ==, OWB_PROF_MATCH_NAME);
  x = g_ptr_array_index (d, 2);
  g_assert_cmpstr (x->b_name, ==, "c2_fused");
  x = g_ptr_array_index (d, 3);
  g_assert_cmpstr (x->name, ==, "gemm");
  g_assert_true (isnan (x->b_ms));
  g_assert_cmpint (x->match, ==, OWB_PROF_MATCH_NONE);
  x = g_ptr_array_index (d, 4);
  g_assert_cmpstr (x->name, ==, "mm1");
  g_assert_true (isnan (x->b_ms));
  g_assert_cmpuint (owb_prof_deltas_count_matched (d), ==, 3);
  for (guint i = 5; i < d->len; i++)
    {
      x = g_ptr_array_index (d, i);
      g_assert_true (isnan (x->a_ms));
      g_assert_cmpfloat (x->b_ms, ==, 1);
    }
}

static gint64
query_int (sqlite3 *db, const char *sql, const char *json)
{
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  sqlite3_bind_text (st, 1, json, -1, SQLITE_STATIC);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  gint64 v = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  return v;
}

static void
test_export_trace (void)
{
  GError *error = NULL;
  g_autofree char *dir = prof_test_tmpdir ();
  g_autofree char *path = g_build_filename (dir, "trace.json", NULL);
  g_autoptr (OwbModel) sample = load_sample ();
  g_autoptr (OwbModel) looped = prof_test_loop_model (3);
  OwbProfRun *runs[] = { prof_test_record (sample, OWB_OPTIMIZE_DISABLED, 2, 3),
                         prof_test_record (looped, OWB_OPTIMIZE_DISABLED, 1, 2) };
  for (guint r = 0; r < G_N_ELEMENTS (runs); r++)
    {
      OwbProfRun *run = runs[r];
      g_assert_true (owb_prof_run_export_trace (run, path, &error));
      g_assert_no_error (error);
      g_autofree char *json = NULL;
      g_assert_true (g_file_get_contents (path, &json, NULL, NULL));
      sqlite3 *db = NULL;
      g_assert_cmpint (sqlite3_open (":memory:", &db), ==, SQLITE_OK);
      g_assert_cmpint (query_int (db, "SELECT json_valid (?1)", json), ==, 1);
      /* one X event per event of the run, each with a thread, a time and a duration */
      g_assert_cmpint (query_int (db, "SELECT count (*) FROM json_each (?1, '$.traceEvents')"
                                      " WHERE json_extract (value, '$.ph') = 'X'", json), ==, run->events->len);
      g_assert_cmpint (query_int (db, "SELECT count (*) FROM json_each (?1, '$.traceEvents')"
                                      " WHERE json_extract (value, '$.ph') = 'X' AND json_type (value, '$.tid') = 'integer'"
                                      " AND json_type (value, '$.ts') IN ('real', 'integer')"
                                      " AND json_extract (value, '$.dur') >= 0", json), ==, run->events->len);
      guint node_events = 0, lanes = 1;
      for (guint e = 0; e < run->events->len; e++)
        {
          const OwbProfEvent *ev = &g_array_index (run->events, OwbProfEvent, e);
          node_events += ev->kind == OWB_PROF_EVENT_NODE;
          lanes = MAX (lanes, ev->thread + 1);
        }
      g_assert_cmpint (query_int (db, "SELECT count (*) FROM json_each (?1, '$.traceEvents')"
                                      " WHERE json_extract (value, '$.ph') = 'X' AND json_extract (value, '$.tid') = 0", json),
                       ==, node_events);
      /* a thread_name per lane */
      g_assert_cmpint (query_int (db, "SELECT count (*) FROM json_each (?1, '$.traceEvents')"
                                      " WHERE json_extract (value, '$.name') = 'thread_name'", json), ==, lanes);
      sqlite3_close (db);
      owb_prof_run_free (run);
    }
  /* a folder that does not exist: an error, no file */
  g_autofree char *bad = g_build_filename (dir, "missing", "trace.json", NULL);
  g_autoptr (OwbProfRun) small = prof_test_synthetic_run (10, "small");
  g_assert_false (owb_prof_run_export_trace (small, bad, &error));
  g_assert_error (error, OWB_ERROR, OWB_ERROR_IO);
  g_clear_error (&error);
  prof_test_tmpdir_remove (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/prof-store/store-and-load", test_store_and_load);
  g_test_add_func ("/prof-store/statistics", test_statistics);
  g_test_add_func ("/prof-store/damaged-iteration", test_damaged_iteration);
  g_test_add_func ("/prof-store/critical-path-branches", test_critical_path_branches);
  g_test_add_func ("/prof-store/compare", test_compare);
  g_test_add_func ("/prof-store/compare-by-op-type", test_compare_by_op_type);
  g_test_add_func ("/prof-store/export-trace", test_export_trace);
  return g_test_run ();
}
