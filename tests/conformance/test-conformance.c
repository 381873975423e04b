/* test-conformance.c: runs every ONNX node conformance case (node/test_*) through owb-check,
 * skipping the cases tests/conformance/skip.txt lists with their reasons. The cases run in a
 * worker process (this program again), so that a crash or a hang fails one case, not the run. */
#include "owb-check.h"
#include "owb-testdev.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static struct {
  OwbCheckSkipList *skips;
  gboolean in_process;
  int timeout_s;
  int n_threads;
  char *self;         /* this executable, to start workers */
  guint passed, failed, skipped;
  GString *report;    /* one line per case, as `owb check` prints them */
  GPtrArray *failures;
} state;

/* The worker process: reads case folders on stdin, answers "STATUS\tMESSAGE\n" for each. */
static struct {
  GPid pid;
  int to_fd, from_fd;
  GString *pending;
} worker = { 0, -1, -1, NULL };

static void
report (const char *format, ...) G_GNUC_PRINTF (1, 2);

static void
report (const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_string_append_vprintf (state.report, format, args);
  va_end (args);
  g_string_append_c (state.report, '\n');
}

static char *
flatten (const char *s)
{
  char *copy = g_strdup (s != NULL ? s : "");
  for (char *p = copy; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t')
      *p = ' ';
  return copy;
}

/* Runs the case in this process. */
static OwbCheckStatus
run_case (const char *dir, char **message)
{
  g_autofree char *name = g_path_get_basename (dir);
  OwbCheckOptions options;

  owb_check_options_init (&options);
  options.n_threads = state.n_threads;
  /* "testdev,cpu" runs the cases through the test device provider (tests/providers/testdev). */
  options.providers = g_getenv ("OWB_CONFORMANCE_PROVIDERS");
  owb_check_skip_list_get_tolerance (state.skips, name, &options.rtol, &options.atol, NULL);
  return owb_check_case (dir, &options, message);
}

/* With the test device in front: how much of the work it took, for the log. */
static void
print_testdev_stats (void)
{
  OwbTestdevStats st;
  if (!g_getenv ("OWB_CONFORMANCE_PROVIDERS"))
    return;
  owb_testdev_get_stats (&st);
  g_printerr ("testdev: %" G_GINT64_FORMAT " kernels (%" G_GINT64_FORMAT " groups), %" G_GINT64_FORMAT
              " copies to the device, %" G_GINT64_FORMAT " to the host, %" G_GINT64_FORMAT " within\n",
              st.kernels, st.groups, st.to_device, st.to_host, st.within);
}

static int
worker_main (void)
{
  /* Answers go to a private copy of stdout; anything the engine prints goes to stderr. */
  int answer_fd = dup (STDOUT_FILENO);
  FILE *answers = answer_fd >= 0 ? fdopen (answer_fd, "w") : NULL;
  char *line = NULL;
  size_t size = 0;
  ssize_t len;

  if (answers == NULL || dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    return 1;
  while ((len = getline (&line, &size, stdin)) > 0)
    {
      g_autofree char *message = NULL;
      g_autofree char *flat = NULL;
      OwbCheckStatus status;

      line[strcspn (line, "\n")] = '\0';
      status = run_case (line, &message);
      flat = flatten (message);
      fprintf (answers, "%d\t%s\n", (int) status, flat);
      fflush (answers);
    }
  free (line);
  fclose (answers);
  print_testdev_stats ();
  return 0;
}

static void
worker_stop (gboolean kill_it)
{
  int wstatus;

  if (worker.pid == 0)
    return;
  if (kill_it)
    kill (worker.pid, SIGKILL);
  close (worker.to_fd);
  close (worker.from_fd);
  waitpid (worker.pid, &wstatus, 0);
  g_spawn_close_pid (worker.pid);
  worker.pid = 0;
  worker.to_fd = worker.from_fd = -1;
  g_string_truncate (worker.pending, 0);
}

static gboolean
worker_start (GError **error)
{
  char *argv[] = { state.self, NULL };
  g_auto (GStrv) envp = g_environ_setenv (g_get_environ (), "OWB_CONFORMANCE_WORKER", "1", TRUE);

  if (worker.pending == NULL)
    worker.pending = g_string_new (NULL);
  return g_spawn_async_with_pipes (NULL, argv, envp, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &worker.pid,
                                   &worker.to_fd, &worker.from_fd, NULL, error);
}

/* Why the worker ended, after it closed its answers. */
static char *
worker_death (void)
{
  int wstatus = 0;
  pid_t pid = worker.pid;

  close (worker.to_fd);
  close (worker.from_fd);
  waitpid (pid, &wstatus, 0);
  g_spawn_close_pid (pid);
  worker.pid = 0;
  worker.to_fd = worker.from_fd = -1;
  g_string_truncate (worker.pending, 0);
  if (WIFSIGNALED (wstatus))
    return g_strdup_printf ("crashed (signal %d, %s)", WTERMSIG (wstatus), g_strsignal (WTERMSIG (wstatus)));
  return g_strdup_printf ("the worker process exited with status %d", WEXITSTATUS (wstatus));
}

static OwbCheckStatus
run_case_in_worker (const char *dir, char **message)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *request = g_strconcat (dir, "\n", NULL);
  gint64 deadline;
  gsize done = 0, len = strlen (request);

  if (worker.pid == 0 && !worker_start (&error))
    {
      *message = g_strdup_printf ("cannot start a worker process: %s", error->message);
      return OWB_CHECK_FAILED;
    }
  while (done < len)
    {
      ssize_t n = write (worker.to_fd, request + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          *message = worker_death ();
          return OWB_CHECK_FAILED;
        }
      done += n;
    }

  deadline = g_get_monotonic_time () + (gint64) state.timeout_s * G_USEC_PER_SEC;
  for (;;)
    {
      char *newline = strchr (worker.pending->str, '\n');
      struct pollfd pfd = { worker.from_fd, POLLIN, 0 };
      char buf[4096];
      gint64 left;
      ssize_t n;
      int r;

      if (newline != NULL)
        {
          g_autofree char *answer = g_strndup (worker.pending->str, newline - worker.pending->str);
          const char *tab = strchr (answer, '\t');
          g_string_erase (worker.pending, 0, newline - worker.pending->str + 1);
          *message = g_strdup (tab != NULL ? tab + 1 : "");
          return (OwbCheckStatus) atoi (answer);
        }
      left = (deadline - g_get_monotonic_time ()) / 1000;
      if (left <= 0)
        {
          worker_stop (TRUE);
          *message = g_strdup_printf ("took longer than %d s", state.timeout_s);
          return OWB_CHECK_FAILED;
        }
      r = poll (&pfd, 1, (int) MIN (left, G_MAXINT));
      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0)
        continue;
      n = read (worker.from_fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          *message = worker_death ();
          return OWB_CHECK_FAILED;
        }
      g_string_append_len (worker.pending, buf, n);
    }
}

static void
test_case (gconstpointer data)
{
  const char *dir = data;
  g_autofree char *name = g_path_get_basename (dir);
  g_autofree char *first_set = g_build_filename (dir, "test_data_set_0", NULL);
  g_autofree char *message = NULL;
  const char *skip = owb_check_skip_list_get_skip (state.skips, name);
  OwbCheckStatus status;

  if (skip != NULL || !g_file_test (first_set, G_FILE_TEST_IS_DIR))
    {
      const char *why = skip != NULL ? skip : "no test_data_set_0";
      state.skipped++;
      report ("SKIP %s: %s", name, why);
      g_test_skip (why);
      return;
    }

  status = state.in_process ? run_case (dir, &message) : run_case_in_worker (dir, &message);
  switch (status)
    {
    case OWB_CHECK_PASSED:
      state.passed++;
      report ("PASS %s", name);
      break;
    case OWB_CHECK_SKIPPED:
      state.skipped++;
      report ("SKIP %s: %s", name, message);
      g_test_skip (message);
      break;
    default:
      {
        g_autofree char *line = flatten (message != NULL ? message : "unknown reason");
        state.failed++;
        report ("FAIL %s: %s", name, line);
        g_ptr_array_add (state.failures, g_strdup_printf ("FAIL %s: %s", name, line));
        g_test_fail_printf ("%s: %s", name, line);
      }
      break;
    }
}

/* The node/ folder: $OWB_ONNX_DATA/node, or $OWB_ONNX_DATA itself (as
 * build-aux/ensure-conformance-data.py sets it). */
static char *
find_node_dir (GError **error)
{
  const char *env = g_getenv ("OWB_ONNX_DATA");
  g_autofree char *node = NULL;

  if (env == NULL || *env == '\0')
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                   "no conformance data: set OWB_ONNX_DATA, or run through `meson test`, which finds or generates it");
      return NULL;
    }
  node = g_build_filename (env, "node", NULL);
  if (g_file_test (node, G_FILE_TEST_IS_DIR))
    return g_steal_pointer (&node);
  if (g_file_test (env, G_FILE_TEST_IS_DIR))
    return g_strdup (env);
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "OWB_ONNX_DATA=%s: no such directory", env);
  return NULL;
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) cases = NULL;
  g_autofree char *node_dir = NULL;
  g_autofree char *skip_file = g_strdup (g_getenv ("OWB_CONFORMANCE_SKIP_FILE"));
  const char *timeout = g_getenv ("OWB_CONFORMANCE_TIMEOUT");

  owb_testdev_register ();
  const char *threads = g_getenv ("OWB_CONFORMANCE_THREADS");
  const char *report_path = g_getenv ("OWB_CONFORMANCE_REPORT");
  /* One failing case must not stop the others: GLib stops at the first failure without -k. */
  g_autofree char **args = g_new0 (char *, argc + 2);
  char **args_view = args;
  int n_args = argc + 1;
  int status;
  guint total;

  state.in_process = g_strcmp0 (g_getenv ("OWB_CONFORMANCE_IN_PROCESS"), "1") == 0;
  state.timeout_s = timeout != NULL && atoi (timeout) > 0 ? atoi (timeout) : 120;
  state.n_threads = threads != NULL ? atoi (threads) : 1;
  if (skip_file == NULL && g_getenv ("OWB_SOURCE_ROOT") != NULL)
    skip_file = g_build_filename (g_getenv ("OWB_SOURCE_ROOT"), "tests", "conformance", "skip.txt", NULL);
  if (skip_file != NULL)
    {
      state.skips = owb_check_skip_list_load (skip_file, &error);
      if (state.skips == NULL)
        {
          g_printerr ("test-conformance: %s\n", error->message);
          return 1;
        }
    }
  if (g_strcmp0 (g_getenv ("OWB_CONFORMANCE_WORKER"), "1") == 0)
    return worker_main ();

  memcpy (args, argv, argc * sizeof (char *));
  args[argc] = (char *) "--keep-going";
  g_test_init (&n_args, &args_view, NULL);
  state.report = g_string_new (NULL);
  state.failures = g_ptr_array_new_with_free_func (g_free);
  state.self = g_file_read_link ("/proc/self/exe", NULL);
  if (state.self == NULL)
    state.self = g_strdup (argv[0]);
  signal (SIGPIPE, SIG_IGN);

  node_dir = find_node_dir (&error);
  if (node_dir == NULL)
    {
      g_printerr ("test-conformance: %s\n", error->message);
      return 1;
    }

  cases = owb_check_find_cases (node_dir);
  for (guint i = 0; i < cases->len; i++)
    {
      const char *dir = cases->pdata[i];
      g_autofree char *name = g_path_get_basename (dir);
      g_autofree char *path = g_strconcat ("/conformance/", name, NULL);
      if (g_str_has_prefix (name, "test_"))
        g_test_add_data_func (path, dir, test_case);
    }

  status = g_test_run ();
  worker_stop (FALSE);

  /* Failures again at the end, where a truncated log still shows them. */
  for (guint i = 0; i < state.failures->len && i < 60; i++)
    printf ("%s\n", (char *) state.failures->pdata[i]);
  if (state.failures->len > 60)
    printf ("... and %u more failures\n", state.failures->len - 60);

  total = state.passed + state.failed + state.skipped;
  if (report_path != NULL && *report_path)
    g_file_set_contents (report_path, state.report->str, -1, NULL);
  printf ("conformance: %u passed, %u failed, %u skipped (of %u cases)\n", state.passed, state.failed,
          state.skipped, total);
  printf ("conformance: %.1f%% of all cases pass, %.1f%% of those run\n", total ? 100.0 * state.passed / total : 0.0,
          state.passed + state.failed ? 100.0 * state.passed / (state.passed + state.failed) : 0.0);
  if (report_path != NULL && *report_path)
    printf ("conformance: one line per case in %s\n", report_path);

  g_string_free (state.report, TRUE);
  g_ptr_array_unref (state.failures);
  if (worker.pending != NULL)
    g_string_free (worker.pending, TRUE);
  owb_check_skip_list_free (state.skips);
  g_free (state.self);
  return status;
}
