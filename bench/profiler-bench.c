/* profiler-bench.c: what profiling costs. `profiler-bench MODEL [THREADS [ROUNDS]]`: a run's
 * median time without hooks and with the profiler's recorder, alternated round by round;
 * `profiler-bench --store N...`: the time to store (and to load) a run of N events in SQLite. */
#include <owb/owb-profiler.h>

#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
now_ms (void)
{
  return owb_monotonic_ns () / 1e6;
}

static int
bench_overhead (const char *path, int threads, int rounds)
{
  GError *error = NULL;
  OwbModel *model = owb_model_load_file (path, &error);
  if (!model)
    {
      fprintf (stderr, "%s: %s\n", path, error->message);
      return 1;
    }
  OwbSessionOptions opts;
  owb_session_options_init (&opts);
  opts.providers = owb_providers_new_from_list ("cpu", NULL);
  opts.n_threads = threads;
  OwbSession *s = owb_session_new_take (model, &opts, &error);
  g_ptr_array_unref (opts.providers);
  if (!s)
    {
      fprintf (stderr, "%s: %s\n", path, error->message);
      return 1;
    }
  guint n_in = owb_session_get_n_inputs (s), n_out = owb_session_get_n_outputs (s);
  const char **names = g_new0 (const char *, n_in + 1);
  OwbTensor **inputs = g_new0 (OwbTensor *, n_in + 1);
  OwbTensor **outputs = g_new0 (OwbTensor *, n_out + 1);
  GRand *rand = g_rand_new_with_seed (1);
  for (guint i = 0; i < n_in; i++)
    {
      const OwbValueInfo *info = owb_session_get_input (s, i);
      int64_t dims[OWB_MAX_RANK];
      for (int d = 0; d < info->type.rank; d++)
        dims[d] = owb_dim_is_known (info->type.dims[d]) ? info->type.dims[d].value : 1;
      names[i] = info->name;
      inputs[i] = owb_tensor_new (info->type.dtype, info->type.rank, dims, NULL);
      if (inputs[i]->dtype == OWB_TYPE_FLOAT)
        for (int64_t k = 0; k < inputs[i]->nelems; k++)
          ((float *) inputs[i]->data)[k] = (float) g_rand_double_range (rand, -1, 1);
    }
  g_rand_free (rand);
  OwbProfRun *run = owb_prof_run_new ();
  OwbProfRecorder *rec = owb_prof_recorder_new (run, s);
  OwbRunOptions profiled;
  owb_run_options_init (&profiled);
  profiled.hooks = owb_prof_recorder_get_hooks (rec);
  double *plain = g_new (double, rounds), *traced = g_new (double, rounds);
  for (int r = -3; r < rounds; r++)
    for (int which = 0; which < 2; which++)
      {
        /* alternated, the order flipped each round, so a drift of the machine's speed cancels */
        gboolean with = (which + r) % 2 != 0;
        double t0 = now_ms ();
        if (!owb_session_run_with_options (s, with ? &profiled : NULL, n_in, names, inputs, n_out, NULL, outputs, NULL,
                                           &error))
          {
            fprintf (stderr, "%s: %s\n", path, error->message);
            return 1;
          }
        double ms = now_ms () - t0;
        for (guint o = 0; o < n_out; o++)
          g_clear_pointer (&outputs[o], owb_tensor_unref);
        if (r >= 0)
          (with ? traced : plain)[r] = ms;
      }
  guint n_events = run->events->len, n_iterations = run->iterations->len;
  double a = median (plain, rounds), b = median (traced, rounds);
  printf ("%s: %d threads, %u nodes, %d rounds: unprofiled %.3f ms, profiled %.3f ms (median), ratio %.4f; %.1f events per run\n",
          path, threads, owb_session_get_graph (s)->nodes->len, rounds, a, b, b / a,
          n_iterations ? (double) n_events / n_iterations : 0);
  owb_prof_recorder_free (rec);
  owb_prof_run_free (run);
  for (guint i = 0; i < n_in; i++)
    owb_tensor_unref (inputs[i]);
  g_free (inputs);
  g_free (outputs);
  g_free (names);
  g_free (plain);
  g_free (traced);
  owb_session_free (s);
  return 0;
}

/* n events over 500 nodes in 10 iterations, shaped like a CNN's. */
static OwbProfRun *
synthetic_run (guint n)
{
  OwbProfRun *run = owb_prof_run_new ();
  for (guint k = 0; k < 500; k++)
    {
      char name[32], in[32], out[32];
      g_snprintf (name, sizeof name, "/layer%u/Conv", k);
      g_snprintf (in, sizeof in, "t%u", k);
      g_snprintf (out, sizeof out, "t%u", k + 1);
      const char *ins[] = { in, "w", "b", NULL }, *outs[] = { out, NULL };
      owb_prof_run_add_node (run, "", name, k % 3 ? "Conv" : "Relu", "cpu", ins, outs);
    }
  guint per_iteration = MAX (n / 10, 1);
  for (guint it = 0; it * per_iteration < n; it++)
    owb_prof_run_add_iteration (run, (gint64) it * per_iteration * 20000, (gint64) per_iteration * 20000);
  char shapes[64];
  for (guint e = 0; e < n; e++)
    {
      g_snprintf (shapes, sizeof shapes, "float32[1,%u,56,56]", 32 + (e % 500) % 8 * 16);
      OwbProfEvent ev = {
        .node = e % 500,
        .iteration = e / per_iteration,
        .thread = e % 4 == 3 ? 1 : 0,
        .kind = e % 4 == 3 ? OWB_PROF_EVENT_WORKER : OWB_PROF_EVENT_NODE,
        .start_ns = (gint64) e * 20000,
        .duration_ns = 15000 + e % 1000,
        .self_ns = 15000 + e % 1000,
        .input_shapes = shapes,
        .output_shapes = shapes,
        .input_bytes = 401408,
        .output_bytes = 401408,
        .arena_bytes = 8 << 20,
      };
      owb_prof_run_add_event (run, &ev);
    }
  run->model_path = g_strdup ("synthetic.onnx");
  run->model_hash = g_strdup ("sha256:synthetic");
  owb_prof_run_set_host (run);
  return run;
}

static int
bench_store (int argc, char **argv)
{
  GError *error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("owb-prof-bench-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "bench.sqlite", NULL);
  OwbProfDb *db = owb_prof_db_open (path, TRUE, &error);
  if (!db)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  for (int i = 0; i < argc; i++)
    {
      guint n = (guint) strtoul (argv[i], NULL, 10);
      OwbProfRun *run = synthetic_run (n);
      double t0 = now_ms ();
      if (!owb_prof_db_store_run (db, run, &error))
        {
          fprintf (stderr, "%s\n", error->message);
          return 1;
        }
      double stored = now_ms () - t0;
      t0 = now_ms ();
      OwbProfRun *back = owb_prof_db_load_run (db, run->id, &error);
      double loaded = now_ms () - t0;
      t0 = now_ms ();
      char *json = owb_prof_run_dup_trace_json (back);
      double exported = now_ms () - t0;
      GStatBuf st;
      g_stat (path, &st);
      printf ("%u events: stored in %.1f ms (%.2f us per event), loaded in %.1f ms, trace JSON %.1f ms (%.1f MB);"
              " database now %.1f MB\n",
              n, stored, 1000 * stored / n, loaded, exported, strlen (json) / 1e6, st.st_size / 1e6);
      g_free (json);
      owb_prof_run_free (back);
      owb_prof_run_free (run);
    }
  owb_prof_db_close (db);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL), *shm = g_strconcat (path, "-shm", NULL);
  g_remove (wal);
  g_remove (shm);
  g_remove (path);
  g_rmdir (dir);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc >= 3 && strcmp (argv[1], "--store") == 0)
    return bench_store (argc - 2, argv + 2);
  if (argc < 2 || argv[1][0] == '-')
    {
      fprintf (stderr, "usage: profiler-bench MODEL [THREADS [ROUNDS]] | profiler-bench --store N...\n");
      return 2;
    }
  return bench_overhead (argv[1], argc > 2 ? atoi (argv[2]) : 2, argc > 3 ? atoi (argv[3]) : 200);
}
