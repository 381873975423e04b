/* owb-cmd-check.c: `owb check DIR...`: runs ONNX test-layout cases, one line per case, then a count. */
#include "owb-check.h"
#include "owb-cli.h"

#include <math.h>
#include <stdio.h>

int
owb_cmd_check (int argc, char **argv)
{
  double rtol = 1e-3, atol = 1e-5;
  int n_threads = 1;
  gboolean failures_only = FALSE;
  g_autofree char *providers_opt = NULL, *optimize_opt = NULL, *skip_file = NULL;
  GOptionEntry entries[] = {
    { "rtol", 0, 0, G_OPTION_ARG_DOUBLE, &rtol, "Relative tolerance for floating-point outputs (default 1e-3)", "R" },
    { "atol", 0, 0, G_OPTION_ARG_DOUBLE, &atol, "Absolute tolerance for floating-point outputs (default 1e-5)", "A" },
    { "skip-file", 0, 0, G_OPTION_ARG_FILENAME, &skip_file, "Skip the cases FILE lists, and use the tolerances it gives (format of tests/conformance/skip.txt)", "FILE" },
    { "optimize", 'O', 0, G_OPTION_ARG_STRING, &optimize_opt, "Optimization level (default: disabled)", "LEVEL" },
    OWB_CLI_PROVIDERS_ENTRY (providers_opt),
    { "threads", 't', 0, G_OPTION_ARG_INT, &n_threads, "Intra-op threads per case (default 1; 0: all cores)", "N" },
    { "failures-only", 'q', 0, G_OPTION_ARG_NONE, &failures_only, "Print only the FAIL lines and the count", NULL },
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbCheckSkipList) skips = NULL;
  OwbCheckOptions options;
  guint n_passed = 0, n_failed = 0, n_skipped = 0;

  const char *summary = "Run ONNX test-layout cases: each DIR holds model.onnx and test_data_set_N/ with\n"
                        "input_K.pb and output_K.pb (a DIR without model.onnx stands for the cases in\n"
                        "it). Prints \"PASS name\", \"FAIL name: reason\" or \"SKIP name: reason\" per\n"
                        "case, then \"N passed, N failed, N skipped\"; exits with 1 if any failed.\n"
                        "Outputs match when |got - expected| <= atol + rtol * |expected| (NaN matches\n"
                        "NaN); integers, booleans and strings must be equal, shapes and types too.";
  if (!owb_cli_parse ("check", "DIR…", summary, entries, &argc, &argv))
    return OWB_EXIT_USAGE;
  if (argc < 2)
    {
      owb_cli_error ("check", "expected at least one DIR argument (see owb check --help)");
      return OWB_EXIT_USAGE;
    }
  if (!(rtol >= 0) || !(atol >= 0) || !isfinite (rtol) || !isfinite (atol))
    {
      owb_cli_error ("check", "--rtol and --atol must be finite and not negative");
      return OWB_EXIT_USAGE;
    }
  if (n_threads < 0)
    {
      owb_cli_error ("check", "--threads must be 0 (all cores) or more");
      return OWB_EXIT_USAGE;
    }

  owb_check_options_init (&options);
  options.n_threads = n_threads;
  options.providers = providers_opt;
  if (optimize_opt != NULL && !owb_cli_parse_optimize (optimize_opt, &options.optimize, &error))
    {
      owb_cli_gerror ("check", error);
      return OWB_EXIT_USAGE;
    }
  if (providers_opt != NULL)
    {
      /* Bad provider names are a usage error, not a failure of every case. */
      g_autoptr (GPtrArray) list = owb_providers_new_from_list (providers_opt, &error);
      if (list == NULL)
        {
          owb_cli_gerror ("check", error);
          return OWB_EXIT_USAGE;
        }
    }
  if (skip_file != NULL)
    {
      skips = owb_check_skip_list_load (skip_file, &error);
      if (skips == NULL)
        {
          owb_cli_gerror (skip_file, error);
          return OWB_EXIT_USAGE;
        }
    }

  for (int a = 1; a < argc; a++)
    {
      g_autoptr (GPtrArray) cases = owb_check_find_cases (argv[a]);
      for (guint c = 0; c < cases->len; c++)
        {
          const char *dir = cases->pdata[c];
          g_autofree char *name = g_path_get_basename (dir);
          g_autofree char *message = NULL;
          const char *skip = owb_check_skip_list_get_skip (skips, name);
          OwbCheckStatus status;

          if (skip != NULL)
            {
              n_skipped++;
              if (!failures_only)
                printf ("SKIP %s: %s\n", name, skip);
              fflush (stdout);
              continue;
            }
          options.rtol = rtol;
          options.atol = atol;
          owb_check_skip_list_get_tolerance (skips, name, &options.rtol, &options.atol, NULL);

          status = owb_check_case (dir, &options, &message);
          switch (status)
            {
            case OWB_CHECK_PASSED:
              n_passed++;
              if (!failures_only)
                printf ("PASS %s\n", name);
              break;
            case OWB_CHECK_FAILED:
              {
                g_autofree char *line = owb_cli_one_line (message ? message : "unknown reason");
                n_failed++;
                printf ("FAIL %s: %s\n", name, line);
              }
              break;
            case OWB_CHECK_SKIPPED:
              {
                g_autofree char *line = owb_cli_one_line (message ? message : "unknown reason");
                n_skipped++;
                if (!failures_only)
                  printf ("SKIP %s: %s\n", name, line);
              }
              break;
            }
          fflush (stdout);
        }
    }

  printf ("%u passed, %u failed, %u skipped\n", n_passed, n_failed, n_skipped);
  return n_failed > 0 ? OWB_EXIT_FAILED : OWB_EXIT_OK;
}
