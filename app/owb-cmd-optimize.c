/* owb-cmd-optimize.c: `owb optimize MODEL -O LEVEL -o OUT.onnx`: optimizes a model and saves it,
 * with a per-pass summary (--report) and the full report as JSON. */
#include "owb-cli.h"

#include <stdio.h>
#include <string.h>

static void
print_summary (const OwbOptimizeReport *report)
{
  printf ("level %s: %u nodes -> %u nodes\n", owb_optimize_level_to_string (report->level), report->nodes_before,
          report->nodes_after);
  for (guint i = 0; i < report->passes->len; i++)
    {
      const OwbPassReport *pr = g_ptr_array_index (report->passes, i);
      printf ("  %-24s %4u removed %4u created", pr->pass, pr->removed->len, pr->created->len);
      if (pr->n_removed_initializers)
        printf (" %4u initializers removed", pr->n_removed_initializers);
      printf ("  (%.1f ms, shape inference %.1f)\n", pr->ms, pr->infer_ms);
      for (guint k = 0; k < pr->near_misses->len && k < 5; k++)
        printf ("      near miss: %s\n", (const char *) g_ptr_array_index (pr->near_misses, k));
      if (pr->near_misses->len > 5)
        printf ("      ... %u more near misses in the JSON report\n", pr->near_misses->len - 5);
    }
}

int
owb_cmd_optimize (int argc, char **argv)
{
  g_autofree char *output = NULL, *optimize_opt = NULL, *report_json = NULL, *external = NULL;
  g_auto (GStrv) disabled = NULL;
  gboolean report_opt = FALSE, portable = FALSE, list = FALSE;
  GOptionEntry entries[] = {
    { "optimize", 'O', 0, G_OPTION_ARG_STRING, &optimize_opt, "Level: disabled, basic, extended, layout or all (default extended)", "LEVEL" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the optimized model to OUT.onnx (never the input file)", "OUT.onnx" },
    { "disable", 0, 0, G_OPTION_ARG_STRING_ARRAY, &disabled, "Switch a pass off by name; repeatable", "PASS" },
    { "portable", 0, 0, G_OPTION_ARG_NONE, &portable, "Create only standard ONNX ops (no ai.onnx.workbench fused ops)", NULL },
    { "report", 0, 0, G_OPTION_ARG_NONE, &report_opt, "Print a per-pass summary and write OUT.report.json", NULL },
    { "report-json", 0, 0, G_OPTION_ARG_FILENAME, &report_json, "Write the full report as JSON to FILE", "FILE" },
    { "external-data", 0, 0, G_OPTION_ARG_FILENAME, &external, "Write large initializers to FILE beside the model (needed over 2 GiB)", "FILE" },
    { "list-passes", 0, 0, G_OPTION_ARG_NONE, &list, "List the passes with their levels and exit", NULL },
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  const char *summary = "Optimize MODEL at a level and save the result. Standard-op results load in\n"
                        "any ONNX runtime; fused ops of the engine are saved in domain\n"
                        "ai.onnx.workbench (see README.md), or avoided with --portable.";
  if (!owb_cli_parse ("optimize", "MODEL", summary, entries, &argc, &argv))
    return OWB_EXIT_USAGE;
  if (list)
    {
      guint n;
      const OwbPassInfo *passes = owb_optimize_list_passes (&n);
      for (guint i = 0; i < n; i++)
        printf ("%-24s %-9s %s\n", passes[i].name, owb_optimize_level_to_string (passes[i].level),
                passes[i].description);
      return OWB_EXIT_OK;
    }
  if (argc != 2 || !output)
    {
      owb_cli_error ("optimize", "expected MODEL and -o OUT.onnx (see owb optimize --help)");
      return OWB_EXIT_USAGE;
    }
  const char *path = argv[1];
  OwbOptimizeOptions options;
  owb_optimize_options_init (&options);
  if (optimize_opt && !owb_cli_parse_optimize (optimize_opt, &options.level, &error))
    {
      owb_cli_gerror ("optimize", error);
      return OWB_EXIT_USAGE;
    }
  options.portable = portable;
  options.disabled_passes = (const char *const *) disabled;

  if (report_opt && !report_json)
    {
      g_autofree char *base = g_str_has_suffix (output, ".onnx") ? g_strndup (output, strlen (output) - 5)
                                                                  : g_strdup (output);
      report_json = g_strconcat (base, ".report.json", NULL);
    }
  g_autoptr (OwbModel) model = NULL;
  int status = owb_cli_load_for_save (path, output, report_json, external, &model);
  if (status != OWB_EXIT_OK)
    return status;
  g_autoptr (GPtrArray) providers = owb_providers_new_from_list ("cpu", &error);
  options.providers = providers;
  g_autoptr (OwbOptimizeReport) report = NULL;
  if (!owb_model_optimize (model, &options, &report, &error))
    {
      owb_cli_gerror (path, error);
      return owb_cli_exit_status (error);
    }
  status = owb_cli_save_model (model, output, external);
  if (status != OWB_EXIT_OK)
    return status;
  if (report_json)
    {
      g_autofree char *json = owb_optimize_report_to_json (report);
      if (!owb_file_set_contents_atomic (report_json, json, strlen (json), &error))
        {
          owb_cli_gerror (report_json, error);
          return OWB_EXIT_FAILED;
        }
    }
  if (report_opt)
    {
      print_summary (report);
      printf ("wrote %s and %s\n", output, report_json);
    }
  return OWB_EXIT_OK;
}
