/* owb-cmd-compare.c: `owb compare MODEL_A MODEL_B`: runs both models on the same samples and
 * reports, per output and per tensor, how far B is from A (SQNR, cosine, top-1 agreement). */
#include "owb-cli.h"

#include <owb/owb-quant.h>

#include <math.h>
#include <stdio.h>

/* "inf" when B equals A, "-" when nothing could be compared. */
static char *
format_db (double db)
{
  if (isnan (db))
    return g_strdup ("-");
  if (isinf (db))
    return g_strdup (db > 0 ? "inf" : "-inf");
  return g_strdup_printf ("%.2f", db);
}

static char *
format_value (const char *format, double v)
{
  return isfinite (v) ? g_strdup_printf (format, v) : g_strdup ("-");
}

/* Why a row's numbers leave some of the data out, or "". */
static char *
format_notes (guint n_skipped, guint64 n_nonfinite)
{
  GString *out = g_string_new (NULL);
  if (n_skipped)
    g_string_append_printf (out, "  (%u sample%s skipped: shapes differ)", n_skipped, n_skipped == 1 ? "" : "s");
  if (n_nonfinite)
    g_string_append_printf (out, "  (%" G_GUINT64_FORMAT " non-finite value%s left out)", n_nonfinite,
                            n_nonfinite == 1 ? "" : "s");
  return g_string_free (out, FALSE);
}

static void
print_text (const OwbQuantComparison *c, const char *source, guint top, gboolean per_tensor)
{
  g_autoptr (GString) out = g_string_new (NULL);
  gboolean random = g_strcmp0 (source, "random") == 0;
  g_string_append_printf (out, "Compared on %u sample%s %s%s\n", c->n_samples, c->n_samples == 1 ? "" : "s",
                          random ? "of " : "from ", random ? "random inputs" : source);
  gboolean any_classifier = FALSE, any_accuracy = FALSE, any_qdq = FALSE;
  for (guint i = 0; i < c->outputs->len; i++)
    {
      const OwbQuantOutputDiff *d = g_ptr_array_index (c->outputs, i);
      any_classifier |= d->classifier;
      any_accuracy |= d->has_accuracy;
    }
  g_string_append_printf (out, "\nOutputs\n  %-32s %10s %12s %12s", "name", "SQNR dB", "cosine", "max abs");
  if (any_classifier)
    g_string_append_printf (out, " %8s", "top-1");
  if (any_accuracy)
    g_string_append_printf (out, " %8s %8s", "acc A", "acc B");
  g_string_append_c (out, '\n');
  for (guint i = 0; i < c->outputs->len; i++)
    {
      const OwbQuantOutputDiff *d = g_ptr_array_index (c->outputs, i);
      g_autofree char *db = format_db (d->sqnr_db), *cosine = format_value ("%.6f", d->cosine);
      g_autofree char *max_abs = format_value ("%.4g", d->max_abs);
      g_autofree char *notes = format_notes (d->n_skipped, d->n_nonfinite);
      g_string_append_printf (out, "  %-32s %10s %12s %12s", d->name, db, cosine, max_abs);
      if (any_classifier)
        {
          g_autofree char *top1 = d->classifier ? format_value ("%.2f%%", 100 * d->top1_agreement) : g_strdup ("");
          g_string_append_printf (out, " %8s", top1);
        }
      if (d->has_accuracy)
        {
          g_autofree char *acc_a = format_value ("%.2f%%", 100 * d->accuracy_a);
          g_autofree char *acc_b = format_value ("%.2f%%", 100 * d->accuracy_b);
          g_string_append_printf (out, " %8s %8s", acc_a, acc_b);
        }
      g_string_append_printf (out, "%s\n", notes);
    }
  if (per_tensor)
    {
      guint n = MIN (top, c->tensors->len);
      g_string_append_printf (out, "\nWorst tensors (%u of %u matched)\n", n, c->tensors->len);
      /* Columns as wide as the longest name shown (names of deep models run long and differ in
       * their middle: "encoder_layer_9" against "encoder_layer_11"), within reason. */
      int name_w = 32, node_w = 24;
      for (guint i = 0; i < n; i++)
        {
          const OwbQuantTensorDiff *d = g_ptr_array_index (c->tensors, i);
          name_w = MAX (name_w, (int) MIN (g_utf8_strlen (d->name, -1) + 2, 96));
          node_w = MAX (node_w, (int) MIN (g_utf8_strlen (d->node, -1), 80));
        }
      if (n)
        g_string_append_printf (out, "  %-*s %-20s %-*s %10s %12s\n", name_w, "name", "op", node_w, "node", "SQNR dB",
                                "cosine");
      for (guint i = 0; i < n; i++)
        {
          const OwbQuantTensorDiff *d = g_ptr_array_index (c->tensors, i);
          g_autofree char *db = format_db (d->sqnr_db), *cosine = format_value ("%.6f", d->cosine);
          g_autofree char *notes = format_notes (d->n_skipped, d->n_nonfinite);
          /* '*': compared with what B's readers see, the value dequantized after it (the JSON names it) */
          gboolean through_qdq = g_strcmp0 (d->name, d->matched) != 0;
          any_qdq |= through_qdq;
          g_autofree char *name = g_strdup_printf ("%s%s", d->name, through_qdq ? " *" : "");
          g_string_append_printf (out, "  %-*s %-20s %-*s %10s %12s%s\n", name_w, name, d->op_type, node_w, d->node, db,
                                  cosine, notes);
        }
    }
  if (any_qdq)
    g_string_append (out, "  * compared with B's dequantized value of the tensor (after its QuantizeLinear/DequantizeLinear)\n");
  /* names come from model files: no terminal escapes get through */
  g_autofree char *safe = owb_cli_escape_lines (out->str);
  fputs (safe, stdout);
}

int
owb_cmd_compare (int argc, char **argv)
{
  g_autofree char *input_dir = NULL, *data_dir = NULL, *labels_path = NULL;
  g_auto (OwbCliImageArgs) images = { 0 };
  int n_samples = 0, n_threads = 0, top = 20;
  gboolean no_tensors = FALSE, json = FALSE;
  GOptionEntry entries[] = {
    { "input-dir", 0, 0, G_OPTION_ARG_FILENAME, &input_dir, "One sample: DIR/input_K.pb feed the inputs", "DIR" },
    { "data", 0, 0, G_OPTION_ARG_FILENAME, &data_dir, "Samples: the subfolders of DIR (test_data_set_N/) (default: 8 random samples)", "DIR" },
    { "images", 0, 0, G_OPTION_ARG_FILENAME, &images.dir, "Samples: the images in DIR (PNG, JPEG, BMP, PNM), resized and normalised", "DIR" },
    OWB_CLI_IMAGE_ENTRIES (images),
    { "labels", 0, 0, G_OPTION_ARG_FILENAME, &labels_path, "Expected classes, one line per sample: accuracy of A and B", "FILE" },
    { "samples", 'n', 0, G_OPTION_ARG_INT, &n_samples, "Use only the first N samples", "N" },
    OWB_CLI_THREADS_ENTRY (n_threads),
    { "no-tensors", 0, 0, G_OPTION_ARG_NONE, &no_tensors, "Compare the outputs only, not every tensor", NULL },
    { "top", 0, 0, G_OPTION_ARG_INT, &top, "Worst tensors to list (default 20)", "N" },
    OWB_CLI_JSON_ENTRY (json),
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  const char *summary = "Run MODEL_A and MODEL_B (say, a float model and its quantized copy) on\n"
                        "the same inputs and compare their outputs by position, and every float\n"
                        "tensor of A with its counterpart in B (the same name, or the output of the\n"
                        "QuantizeLinear/DequantizeLinear pair on it): SQNR (dB, higher is closer),\n"
                        "cosine similarity, largest difference and top-1 agreement.";
  if (!owb_cli_parse ("compare", "MODEL_A MODEL_B", summary, entries, &argc, &argv))
    return OWB_EXIT_USAGE;
  if (argc != 3)
    {
      owb_cli_error ("compare", "expected MODEL_A and MODEL_B (see owb compare --help)");
      return OWB_EXIT_USAGE;
    }
  if ((input_dir != NULL) + (data_dir != NULL) + (images.dir != NULL) > 1)
    {
      owb_cli_error ("compare", "give one of --input-dir, --data and --images");
      return OWB_EXIT_USAGE;
    }
  OwbQuantImageOptions image_options;
  if (!owb_cli_image_options (&images, &image_options, "compare", "--images"))
    return OWB_EXIT_USAGE;
  if (n_samples < 0 || n_threads < 0 || top < 0)
    {
      owb_cli_error ("compare", "--samples, --threads and --top must not be negative");
      return OWB_EXIT_USAGE;
    }
  const char *path_a = argv[1], *path_b = argv[2];
  const char *dir = input_dir ? input_dir : data_dir ? data_dir : images.dir;

  g_autoptr (OwbQuantDataset) dataset = images.dir ? owb_quant_dataset_new_from_images (images.dir, &image_options, &error)
                                        : dir      ? owb_quant_dataset_new_from_dir (dir, &error)
                                                   : owb_quant_dataset_new_random (8, 0);
  if (!dataset)
    {
      owb_cli_gerror (dir, error);
      return OWB_EXIT_FAILED;
    }
  if (n_samples > 0)
    owb_quant_dataset_truncate (dataset, (guint) n_samples);
  g_autoptr (GPtrArray) labels = NULL;
  if (labels_path)
    {
      if (!(labels = owb_quant_read_labels (labels_path, &error)))
        {
          owb_cli_gerror (labels_path, error);
          return OWB_EXIT_FAILED;
        }
      guint n = owb_quant_dataset_get_n_samples (dataset);
      if (labels->len != n)
        {
          owb_cli_error (labels_path, "%u label line%s for %u sample%s: give one line per sample", labels->len,
                         labels->len == 1 ? "" : "s", n, n == 1 ? "" : "s");
          return OWB_EXIT_USAGE;
        }
    }
  g_autoptr (OwbModel) a = owb_model_load_file (path_a, &error);
  if (!a)
    {
      owb_cli_gerror (path_a, error);
      return OWB_EXIT_FAILED;
    }
  g_autoptr (OwbModel) b = owb_model_load_file (path_b, &error);
  if (!b)
    {
      owb_cli_gerror (path_b, error);
      return OWB_EXIT_FAILED;
    }

  OwbQuantCompareOptions options;
  owb_quant_compare_options_init (&options);
  options.per_tensor = !no_tensors;
  options.labels = labels;
  options.n_threads = n_threads;
  g_autoptr (OwbQuantComparison) comparison = owb_quant_compare (a, b, dataset, &options, &error);
  if (!comparison)
    {
      /* the library says "model A" / "model B": name the files too */
      owb_cli_error ("compare", "%s (A: %s, B: %s)", error->message, path_a, path_b);
      return OWB_EXIT_FAILED;
    }
  if (json)
    {
      g_autofree char *text = owb_quant_comparison_to_json (comparison);
      printf ("%s\n", text);
    }
  else
    print_text (comparison, owb_quant_dataset_get_source (dataset), (guint) top, !no_tensors);
  return OWB_EXIT_OK;
}
