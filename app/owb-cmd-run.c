/* owb-cmd-run.c: `owb run MODEL`: runs a model once and prints or saves its outputs. */
#include "owb-cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* --time-limit: a thread that cancels the run at its deadline (or ends when the run does). */
typedef struct {
  GCancellable *cancellable;
  gint64 deadline;
} TimeLimit;

static TimeLimit *
time_limit_new (GCancellable *cancellable, gint64 usec)
{
  TimeLimit *t = g_new (TimeLimit, 1);
  t->cancellable = g_object_ref (cancellable);
  t->deadline = g_get_monotonic_time () + usec;
  return t;
}

static gpointer
time_limit_thread (gpointer data)
{
  TimeLimit *t = data;
  while (!g_cancellable_is_cancelled (t->cancellable) && g_get_monotonic_time () < t->deadline)
    g_usleep (10000);
  g_cancellable_cancel (t->cancellable);
  g_object_unref (t->cancellable);
  g_free (t);
  return NULL;
}

int
owb_cmd_run (int argc, char **argv)
{
  g_autofree char *input_dir = NULL, *output_dir = NULL, *providers_opt = NULL, *optimize_opt = NULL;
  g_autofree char *memory_limit_opt = NULL;
  double time_limit = 0;
  g_auto (GStrv) named = NULL, dim_opts = NULL;
  gboolean random = FALSE;
  int n_threads = 0, seed = 0, n_values = 8;
  GOptionEntry entries[] = {
    { "input-dir", 0, 0, G_OPTION_ARG_FILENAME, &input_dir, "Feed DIR/input_K.pb (or .npy) to the graph inputs in order", "DIR" },
    { "input", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &named, "Feed input NAME from FILE (.pb TensorProto or .npy); repeatable", "NAME=FILE" },
    { "random", 0, 0, G_OPTION_ARG_NONE, &random, "Fill inputs that have no file with seeded random values", NULL },
    { "seed", 0, 0, G_OPTION_ARG_INT, &seed, "Seed of the random values (default 0)", "N" },
    OWB_CLI_DIM_ENTRY (dim_opts),
    { "output-dir", 'o', 0, G_OPTION_ARG_FILENAME, &output_dir, "Write DIR/output_K.pb, each named after its output, instead of printing", "DIR" },
    OWB_CLI_OPTIMIZE_ENTRY (optimize_opt),
    OWB_CLI_PROVIDERS_ENTRY (providers_opt),
    OWB_CLI_THREADS_ENTRY (n_threads),
    { "values", 0, 0, G_OPTION_ARG_INT, &n_values, "How many values of each output to print (default 8)", "N" },
    { "memory-limit", 0, 0, G_OPTION_ARG_STRING, &memory_limit_opt, "Fail the run (exit 1) when its tensors would take more than SIZE at once (bytes, or with K, M, G)", "SIZE" },
    { "time-limit", 0, 0, G_OPTION_ARG_DOUBLE, &time_limit, "Cancel the run (exit 1) after SECONDS", "SECONDS" },
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  g_auto (OwbCliFeed) feed = { 0 };
  g_autoptr (GString) out = g_string_new (NULL);
  OwbTensor **outputs;
  const char *path;
  guint n_out;
  int status;

  const char *summary = "Run MODEL once. Inputs come from --input NAME=FILE, --input-dir DIR, or\n"
                        "--random; outputs are printed (type, shape, statistics, first values)\n"
                        "or written to --output-dir as output_K.pb.";
  if (!owb_cli_parse_model ("run", summary, entries, &argc, &argv, &path))
    return OWB_EXIT_USAGE;
  if (n_values < 0)
    {
      owb_cli_error ("run", "--values must not be negative");
      return OWB_EXIT_USAGE;
    }
  if (!owb_cli_feed_options (&feed, "run", dim_opts, providers_opt, n_threads, optimize_opt))
    return OWB_EXIT_USAGE;
  if (memory_limit_opt && !owb_cli_parse_size (memory_limit_opt, &feed.options.memory_limit, &error))
    {
      owb_cli_error ("run", "--memory-limit: %s", error->message);
      return OWB_EXIT_USAGE;
    }
  if (time_limit < 0)
    {
      owb_cli_error ("run", "--time-limit must not be negative");
      return OWB_EXIT_USAGE;
    }
  status = owb_cli_feed_open (&feed, path, input_dir, named, random, (guint32) seed);
  if (status != OWB_EXIT_OK)
    return status;

  n_out = feed.n_outputs;
  outputs = feed.outputs;
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  GThread *watchdog = NULL;
  if (time_limit > 0)
    watchdog = g_thread_new ("owb-time-limit", time_limit_thread,
                             time_limit_new (cancellable, (gint64) (time_limit * G_USEC_PER_SEC)));
  gboolean run_ok = owb_session_run (feed.session, feed.inputs->len, feed.names,
                                     (OwbTensor *const *) feed.inputs->pdata, n_out, NULL, outputs, NULL, cancellable,
                                     &error);
  if (watchdog)
    {
      g_cancellable_cancel (cancellable); /* wakes the watchdog, too late to matter to the run */
      g_thread_join (watchdog);
    }
  if (!run_ok && owb_error_is_cancelled (error))
    {
      owb_cli_error (path, "the run was cancelled after its time limit of %g s (--time-limit)", time_limit);
      return OWB_EXIT_FAILED;
    }
  if (!run_ok)
    {
      owb_cli_gerror (path, error);
      return OWB_EXIT_FAILED;
    }

  if (output_dir != NULL && g_mkdir_with_parents (output_dir, 0755) != 0)
    {
      owb_cli_error (output_dir, "cannot create the directory: %s", g_strerror (errno));
      status = OWB_EXIT_FAILED;
    }

  for (guint k = 0; k < n_out && status == OWB_EXIT_OK; k++)
    {
      const char *name = owb_session_get_output (feed.session, k)->name;
      g_autofree char *what = owb_cli_tensor_describe (outputs[k]);

      if (output_dir != NULL)
        {
          g_autofree char *file = g_strdup_printf ("output_%u.pb", k);
          g_autofree char *out_path = g_build_filename (output_dir, file, NULL);
          if (outputs[k] == NULL || !owb_tensor_save_pb_file (outputs[k], name, out_path, &error))
            {
              if (outputs[k] == NULL)
                owb_cli_error (out_path, "output '%s' has no value", name);
              else
                owb_cli_gerror (out_path, error);
              status = OWB_EXIT_FAILED;
              break;
            }
          g_string_append_printf (out, "%s: '%s' %s\n", out_path, name, what);
        }
      else
        {
          g_string_append_printf (out, "Output %u '%s': %s\n", k, name, what);
          if (outputs[k] != NULL)
            owb_cli_tensor_summary (out, outputs[k], (guint) n_values);
        }
    }

  fputs (out->str, stdout);
  return status;
}
