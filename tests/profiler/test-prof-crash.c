/* test-prof-crash.c: a child process stores runs in a loop and is killed with SIGKILL in the middle
 * of storing one: the database passes PRAGMA integrity_check, the runs stored before are whole and
 * the one cut short is not there at all. */
#include "prof-test-util.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define EVENTS_PER_RUN 200000

/* The child: tells the parent on fd when each store begins and ends ("b N", "e N MS"). */
static void G_GNUC_NORETURN
child_main (const char *path, int fd)
{
  GError *error = NULL;
  OwbProfDb *db = owb_prof_db_open (path, TRUE, &error);
  if (!db)
    _exit (3);
  for (guint k = 0;; k++)
    {
      char label[32];
      g_snprintf (label, sizeof label, "run %u", k);
      OwbProfRun *run = prof_test_synthetic_run (EVENTS_PER_RUN, label);
      char line[64];
      int n = g_snprintf (line, sizeof line, "b %u\n", k);
      if (write (fd, line, n) != n)
        _exit (4);
      gint64 t0 = g_get_monotonic_time ();
      if (!owb_prof_db_store_run (db, run, &error))
        _exit (5);
      n = g_snprintf (line, sizeof line, "e %u %" G_GINT64_FORMAT "\n", k, (g_get_monotonic_time () - t0) / 1000);
      if (write (fd, line, n) != n)
        _exit (4);
      owb_prof_run_free (run);
    }
}

static void
test_kill_while_storing (void)
{
  GError *error = NULL;
  g_autofree char *dir = prof_test_tmpdir ();
  g_autofree char *path = g_build_filename (dir, "crash.sqlite", NULL);
  int fds[2];
  g_assert_cmpint (pipe (fds), ==, 0);
  pid_t pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      close (fds[0]);
      child_main (path, fds[1]);
    }
  close (fds[1]);
  FILE *from_child = fdopen (fds[0], "r");
  char line[64];
  guint ended = 0;
  gint64 store_ms = 0;
  /* two runs stored; then, once the third has begun, wait a part of a store's time and kill */
  while (fgets (line, sizeof line, from_child))
    {
      guint k;
      gint64 ms;
      if (sscanf (line, "e %u %" G_GINT64_FORMAT, &k, &ms) == 2)
        {
          ended = k + 1;
          store_ms = ms;
        }
      else if (sscanf (line, "b %u", &k) == 1 && k == 2)
        break;
    }
  g_assert_cmpuint (ended, ==, 2);
  /* the run is built before "b", so the store is under way from here for about store_ms */
  g_usleep (MAX (store_ms / 3, 1) * 1000);
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  int status = 0;
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  /* whether the third store finished before the kill */
  gboolean third_done = FALSE;
  while (fgets (line, sizeof line, from_child))
    third_done |= g_str_has_prefix (line, "e 2 ");
  fclose (from_child);
  g_test_message ("a store took %" G_GINT64_FORMAT " ms; killed %s the third", store_ms,
                  third_done ? "after" : "during");

  OwbProfDb *db = owb_prof_db_open (path, FALSE, &error);
  g_assert_no_error (error);
  g_autofree char *integrity = owb_prof_db_check_integrity (db, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (integrity, ==, "ok");
  g_autoptr (GPtrArray) runs = owb_prof_db_list_runs (db, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, third_done ? 3 : 2);
  for (guint i = 0; i < runs->len; i++)
    {
      const OwbProfRunSummary *s = g_ptr_array_index (runs, i);
      g_autofree char *label = g_strdup_printf ("run %u", i);
      g_assert_cmpstr (s->label, ==, label);
      g_assert_cmpuint (s->n_events, ==, EVENTS_PER_RUN);
      g_assert_cmpuint (s->n_iterations, ==, 2);
    }
  /* and it takes new runs */
  g_autoptr (OwbProfRun) more = prof_test_synthetic_run (100, "after the crash");
  g_assert_true (owb_prof_db_store_run (db, more, &error));
  g_assert_no_error (error);
  owb_prof_db_close (db);
  prof_test_tmpdir_remove (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/prof-crash/kill-while-storing", test_kill_while_storing);
  return g_test_run ();
}
