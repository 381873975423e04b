/* owb.c: the owb command-line tool: dispatches `owb COMMAND ...` to the subcommands. */
#include "owb-cli.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  const char *name;
  OwbCommandFunc func;
  const char *summary;
} Command;

static const Command commands[] = {
  { "inspect", owb_cmd_inspect, "summarise a model: opsets, inputs/outputs, ops, node→provider claims" },
  { "run", owb_cmd_run, "run a model on input tensors and print or save its outputs" },
  { "check", owb_cmd_check, "run ONNX test-layout cases and compare with their expected outputs" },
  { "bench", owb_cmd_bench, "time a model: load time, latency statistics, peak memory" },
  { "profile", owb_cmd_profile, "time every node of a model: a table per op type and the slowest nodes" },
  { "runs", owb_cmd_runs, "list, compare, export and import the profiling runs stored by profile --db" },
  { "optimize", owb_cmd_optimize, "optimize a model at a level and save it, with a per-pass report" },
  { "quantize", owb_cmd_quantize, "quantize a model to INT8 (QDQ, calibrated; or dynamic) and save it" },
  { "compare", owb_cmd_compare, "compare two models on the same inputs: per output and per tensor SQNR, cosine" },
  { "ops", owb_cmd_ops, "list the operators and opset versions the engine knows" },
};

static void
usage (FILE *out)
{
  fprintf (out, "Usage: owb COMMAND [OPTION…] ARGUMENTS\n\n"
                "ONNX Workbench command line: inspect, run, check and benchmark ONNX models.\n\n"
                "Commands:\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf (out, "\nOptions:\n"
                "  -h, --help     show this help (owb COMMAND --help for a command's options)\n"
                "  --version      print the version\n\n"
                "Exit status: 0 success, 1 a failed run or check, 2 bad usage.\n");
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  /* Numbers in output and in files read are always in the C locale. */
  setlocale (LC_NUMERIC, "C");
  /* An interrupted save leaves no temporary file behind. */
  owb_atomic_files_install_signal_cleanup ();

  if (argc < 2)
    {
      usage (stderr);
      return OWB_EXIT_USAGE;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 || strcmp (argv[1], "help") == 0)
    {
      if (argc > 2 && strcmp (argv[1], "help") == 0)
        {
          /* `owb help run` is `owb run --help`. */
          char *help_argv[] = { argv[2], (char *) "--help", NULL };
          for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
            if (strcmp (commands[i].name, argv[2]) == 0)
              return commands[i].func (2, help_argv);
          owb_cli_error (NULL, "unknown command '%s' (see owb --help)", argv[2]);
          return OWB_EXIT_USAGE;
        }
      usage (stdout);
      return OWB_EXIT_OK;
    }
  if (strcmp (argv[1], "--version") == 0 || strcmp (argv[1], "-V") == 0)
    {
      printf ("owb %s\n", OWB_VERSION);
      return OWB_EXIT_OK;
    }
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (strcmp (commands[i].name, argv[1]) == 0)
      return commands[i].func (argc - 1, argv + 1);

  if (argv[1][0] == '-')
    owb_cli_error (NULL, "unknown option '%s' (see owb --help)", argv[1]);
  else
    owb_cli_error (NULL, "unknown command '%s' (see owb --help)", argv[1]);
  return OWB_EXIT_USAGE;
}
