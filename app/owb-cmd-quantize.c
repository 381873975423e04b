/* owb-cmd-quantize.c: `owb quantize MODEL -o OUT.onnx`: static INT8 quantization (QDQ) calibrated
 * on a sample folder, or dynamic quantization, with a report of every quantized tensor's range. */
#include "owb-cli.h"

#include <owb/owb-quant.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static gboolean
parse_type (const char *text, const char *option, OwbDataType *type, GError **error)
{
  static const struct { const char *name; OwbDataType type; } types[] = {
    { "u8", OWB_TYPE_UINT8 }, { "uint8", OWB_TYPE_UINT8 }, { "s8", OWB_TYPE_INT8 }, { "int8", OWB_TYPE_INT8 },
    { "u16", OWB_TYPE_UINT16 }, { "uint16", OWB_TYPE_UINT16 }, { "s16", OWB_TYPE_INT16 }, { "int16", OWB_TYPE_INT16 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    if (strcmp (text, types[i].name) == 0)
      {
        *type = types[i].type;
        return TRUE;
      }
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s '%s': expected u8, s8, u16 or s16", option, text);
  return FALSE;
}

typedef struct {
  const char *what;
  gboolean quiet;
  gboolean tty;
  gint64 start;
} Progress;

/* On a terminal, one line rewritten in place; in a log, a line per tenth of the work. */
static void
print_progress (guint done, guint total, gpointer user_data)
{
  Progress *p = user_data;
  if (p->quiet)
    return;
  double s = (g_get_monotonic_time () - p->start) / 1e6;
  if (p->tty)
    fprintf (stderr, "\r%s %u of %u (%.1f s)%s", p->what, done, total, s, done == total ? "\n" : "");
  else if (done == total || done % MAX (1u, total / 10) == 0)
    fprintf (stderr, "%s %u of %u (%.1f s)\n", p->what, done, total, s);
  fflush (stderr);
}

/* The scale and zero point of a QuantizeLinear's inputs, as the saved model has them. */
static gboolean
q_params (const OwbGraph *g, const OwbNode *q, float *scale, int *zero_point, OwbDataType *type)
{
  const OwbTensor *s = owb_graph_get_initializer (g, owb_node_get_input (q, 1));
  const OwbTensor *z = owb_graph_get_initializer (g, owb_node_get_input (q, 2) ? owb_node_get_input (q, 2) : "");
  if (s == NULL || s->nelems != 1)
    return FALSE;
  *scale = (float) owb_tensor_get_double (s, 0);
  *zero_point = z ? (int) owb_tensor_get_int64 (z, 0) : 0;
  *type = z ? z->dtype : OWB_TYPE_UINT8;
  return TRUE;
}

/* "key":[lo,hi], with the 9 significant digits that tell two floats apart */
static void
append_number_pair (GString *s, const char *key, double lo, double hi)
{
  owb_json_begin_array (s, key);
  owb_json_append_number (s, lo, 9);
  g_string_append_c (s, ',');
  owb_json_append_number (s, hi, 9);
  g_string_append_c (s, ']');
}

static void
append_report_tensors (GString *s, const OwbModel *quantized, const OwbQuantCalibration *cal,
                       const OwbQuantOptions *options)
{
  owb_json_begin_array (s, "tensors");
  const OwbGraph *g = quantized->graph;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (g->nodes, i);
      float scale;
      int zp;
      OwbDataType type;
      if (strcmp (n->op_type, "QuantizeLinear") != 0 || !q_params (g, n, &scale, &zp, &type))
        continue;
      /* The tensor it stands for: the input, or, where a Relu was folded into it, the Relu's
       * output it is named after (what calibration measured). */
      const char *out = owb_node_get_output (n, 0);
      static const char suffix[] = "_QuantizeLinear_Output";
      g_autofree char *name = out && g_str_has_suffix (out, suffix) && strlen (out) > sizeof suffix - 1
                                ? g_strndup (out, strlen (out) - (sizeof suffix - 1))
                                : g_strdup (n->inputs[0]);
      owb_json_begin_object (s, NULL);
      owb_json_append_member_string (s, "name", name);
      owb_json_append_member_string (s, "type", owb_data_type_name (type));
      owb_json_append_member_number (s, "scale", scale, 9);
      owb_json_append_member_int (s, "zero_point", zp);
      /* What the integers can hold; for a tensor that shares another's parameters (after a
       * MaxPool, a Reshape) this is all there is, as it was not calibrated itself. */
      int qmin = 0, qmax = 255;
      switch (type)
        {
        case OWB_TYPE_INT8: qmin = -128, qmax = 127; break;
        case OWB_TYPE_UINT16: qmin = 0, qmax = 65535; break;
        case OWB_TYPE_INT16: qmin = -32768, qmax = 32767; break;
        default: break;
        }
      append_number_pair (s, "representable", (qmin - zp) * (double) scale, (qmax - zp) * (double) scale);
      float lo, hi, min, max;
      if (cal && owb_quant_calibration_get_minmax (cal, name, &min, &max))
        {
          owb_json_append_member_number (s, "min", min, 9);
          owb_json_append_member_number (s, "max", max, 9);
          if (owb_quant_calibration_compute_range (cal, name, &options->range, &lo, &hi, NULL))
            append_number_pair (s, "range", lo, hi);
        }
      g_string_append_c (s, '}');
    }
  g_string_append_c (s, ']');
}

int
owb_cmd_quantize (int argc, char **argv)
{
  g_autofree char *output = NULL, *calibration_dir = NULL, *method_opt = NULL, *act_opt = NULL, *weight_opt = NULL;
  g_autofree char *report_json = NULL, *eval_dir = NULL, *labels_path = NULL, *overrides_path = NULL;
  g_autofree char *external = NULL;
  g_auto (OwbCliImageArgs) images = { 0 };
  double target_sqnr = 0, max_drop = -1;
  int max_trials = 0;
  g_auto (GStrv) exclude_nodes = NULL, exclude_ops = NULL;
  int calibration_random = 0, samples = 0, n_threads = 0;
  double percentile = 0;
  gboolean per_tensor = FALSE, symmetric_activations = FALSE, asymmetric_weights = FALSE, dynamic = FALSE;
  gboolean moving_average = FALSE, quiet = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the quantized model to OUT.onnx (never the input file)", "OUT.onnx" },
    { "calibration-dir", 0, 0, G_OPTION_ARG_FILENAME, &calibration_dir, "Calibrate on the samples in DIR (subfolders of input_K.pb / .npy files)", "DIR" },
    { "calibration", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &calibration_dir, "The same as --calibration-dir (DESIGN.md's spelling)", "DIR" },
    { "calibration-images", 0, 0, G_OPTION_ARG_FILENAME, &images.dir, "Calibrate on the images in DIR (PNG, JPEG, BMP, PNM), resized and normalised", "DIR" },
    OWB_CLI_IMAGE_ENTRIES (images),
    { "calibration-random", 0, 0, G_OPTION_ARG_INT, &calibration_random, "Calibrate on N seeded random samples (a fallback: ranges say little)", "N" },
    { "samples", 0, 0, G_OPTION_ARG_INT, &samples, "Use only the first N calibration samples", "N" },
    { "method", 0, 0, G_OPTION_ARG_STRING, &method_opt, "Calibration: percentile (default, of |x| at 99.999), minmax, entropy or mse", "METHOD" },
    { "percentile", 0, 0, G_OPTION_ARG_DOUBLE, &percentile, "Percentile of |x| for --method percentile (default 99.999)", "P" },
    { "moving-average", 0, 0, G_OPTION_ARG_NONE, &moving_average, "minmax: moving averages of the per-sample min and max", NULL },
    { "per-tensor", 0, 0, G_OPTION_ARG_NONE, &per_tensor, "One scale per weight tensor instead of per output channel", NULL },
    { "activation-type", 0, 0, G_OPTION_ARG_STRING, &act_opt, "u8 (default), s8, u16 or s16", "TYPE" },
    { "weight-type", 0, 0, G_OPTION_ARG_STRING, &weight_opt, "s8 (default) or u8", "TYPE" },
    { "symmetric-activations", 0, 0, G_OPTION_ARG_NONE, &symmetric_activations, "Symmetric activation ranges (zero point 0 or the middle)", NULL },
    { "asymmetric-weights", 0, 0, G_OPTION_ARG_NONE, &asymmetric_weights, "Asymmetric weight ranges (symmetric by default)", NULL },
    { "dynamic", 0, 0, G_OPTION_ARG_NONE, &dynamic, "Dynamic quantization: int8 weights, activations quantized at run time; no calibration", NULL },
    { "exclude-node", 0, 0, G_OPTION_ARG_STRING_ARRAY, &exclude_nodes, "Keep node NAME in float; repeatable", "NAME" },
    { "exclude-op", 0, 0, G_OPTION_ARG_STRING_ARRAY, &exclude_ops, "Keep every node of op TYPE in float; repeatable", "TYPE" },
    { "overrides", 0, 0, G_OPTION_ARG_FILENAME, &overrides_path, "Per-tensor type and range from a JSON file: {\"name\": {\"type\": \"u16\", \"range\": [lo, hi]}}", "FILE" },
    { "target-sqnr", 0, 0, G_OPTION_ARG_DOUBLE, &target_sqnr, "Keep the most harmful nodes in float until every output's SQNR against float reaches DB", "DB" },
    { "max-accuracy-drop", 0, 0, G_OPTION_ARG_DOUBLE, &max_drop, "... or until accuracy (with --labels) drops by at most X (0.01: one point)", "X" },
    { "eval-dir", 0, 0, G_OPTION_ARG_FILENAME, &eval_dir, "Samples the targets are checked on (default: the calibration samples)", "DIR" },
    { "labels", 0, 0, G_OPTION_ARG_FILENAME, &labels_path, "One label line per --eval-dir sample (see owb compare)", "FILE" },
    { "max-trials", 0, 0, G_OPTION_ARG_INT, &max_trials, "Re-quantizations the targets may take (default 8)", "N" },
    { "external-data", 0, 0, G_OPTION_ARG_FILENAME, &external, "Write large initializers to FILE beside the model (needed over 2 GiB)", "FILE" },
    { "report-json", 0, 0, G_OPTION_ARG_FILENAME, &report_json, "Write what was quantized (tensors, ranges, passes) as JSON to FILE", "FILE" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &n_threads, "Threads for calibration runs (default: all cores)", "N" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress on stderr", NULL },
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  const char *summary = "Quantize MODEL to INT8 and save it. Static quantization (default) writes standard\n"
                        "QuantizeLinear/DequantizeLinear pairs with ranges calibrated on --calibration-dir;\n"
                        "--dynamic quantizes weights only and activations at run time. The result loads in\n"
                        "any ONNX runtime. Compare it with the float model: owb compare MODEL OUT.onnx.";
  if (!owb_cli_parse ("quantize", "MODEL", summary, entries, &argc, &argv))
    return OWB_EXIT_USAGE;
  if (argc != 2 || !output)
    {
      owb_cli_error ("quantize", "expected MODEL and -o OUT.onnx (see owb quantize --help)");
      return OWB_EXIT_USAGE;
    }
  if (!dynamic && !calibration_dir && !images.dir && calibration_random <= 0)
    {
      owb_cli_error ("quantize", "static quantization needs samples: give --calibration-dir DIR, "
                                 "--calibration-images DIR or --calibration-random N (or --dynamic)");
      return OWB_EXIT_USAGE;
    }
  if ((calibration_dir != NULL) + (images.dir != NULL) + (calibration_random > 0) > 1)
    {
      owb_cli_error ("quantize", "give one of --calibration-dir, --calibration-images and --calibration-random");
      return OWB_EXIT_USAGE;
    }
  OwbQuantImageOptions image_options;
  if (!owb_cli_image_options (&images, &image_options, "quantize", "--calibration-images"))
    return OWB_EXIT_USAGE;
  if (dynamic && (calibration_dir || images.dir || calibration_random || method_opt))
    {
      owb_cli_error ("quantize", "--dynamic needs no calibration: drop --calibration-dir, --calibration-random and --method");
      return OWB_EXIT_USAGE;
    }
  gboolean fallback = target_sqnr > 0 || max_drop >= 0;
  if (fallback && dynamic)
    {
      owb_cli_error ("quantize", "--target-sqnr and --max-accuracy-drop apply to static quantization, not --dynamic");
      return OWB_EXIT_USAGE;
    }
  if (max_drop >= 0 && !labels_path)
    {
      owb_cli_error ("quantize", "--max-accuracy-drop needs --labels FILE (one label line per evaluation sample)");
      return OWB_EXIT_USAGE;
    }
  if (!fallback && (eval_dir || labels_path || max_trials))
    {
      owb_cli_error ("quantize", "--eval-dir, --labels and --max-trials go with --target-sqnr or --max-accuracy-drop");
      return OWB_EXIT_USAGE;
    }
  if (samples < 0 || calibration_random < 0 || max_trials < 0 || n_threads < 0 || percentile < 0 || percentile > 100)
    {
      owb_cli_error ("quantize", "--samples, --calibration-random and --threads take positive counts; --percentile 0..100");
      return OWB_EXIT_USAGE;
    }
  OwbQuantOptions options;
  owb_quant_options_init (&options);
  if ((method_opt && !owb_quant_method_from_string (method_opt, &options.range.method)))
    {
      owb_cli_error ("quantize", "--method '%s': expected minmax, entropy, percentile or mse", method_opt);
      return OWB_EXIT_USAGE;
    }
  if ((act_opt && !parse_type (act_opt, "--activation-type", &options.activation_type, &error))
      || (weight_opt && !parse_type (weight_opt, "--weight-type", &options.weight_type, &error)))
    {
      owb_cli_gerror ("quantize", error);
      return OWB_EXIT_USAGE;
    }
  if (options.weight_type != OWB_TYPE_INT8 && options.weight_type != OWB_TYPE_UINT8)
    {
      owb_cli_error ("quantize", "--weight-type: weights are s8 or u8");
      return OWB_EXIT_USAGE;
    }
  if (percentile > 0)
    options.range.percentile = percentile;
  options.range.moving_average = moving_average;
  options.per_channel = !per_tensor;
  options.symmetric_activations = symmetric_activations;
  options.symmetric_weights = !asymmetric_weights;
  options.exclude_nodes = (const char *const *) exclude_nodes;
  options.exclude_ops = (const char *const *) exclude_ops;

  g_autoptr (GHashTable) overrides = NULL;
  if (overrides_path)
    {
      overrides = owb_quant_overrides_load (overrides_path, options.activation_type, &error);
      if (overrides == NULL)
        {
          owb_cli_gerror (overrides_path, error);
          return OWB_EXIT_FAILED;
        }
      options.overrides = overrides;
    }
  const char *path = argv[1];
  g_autoptr (OwbModel) model = NULL;
  int status = owb_cli_load_for_save (path, output, report_json, external, &model);
  if (status != OWB_EXIT_OK)
    return status;

  g_autoptr (OwbQuantDataset) dataset = NULL;
  if (calibration_dir)
    dataset = owb_quant_dataset_new_from_dir (calibration_dir, &error);
  else if (images.dir)
    dataset = owb_quant_dataset_new_from_images (images.dir, &image_options, &error);
  else if (calibration_random > 0)
    dataset = owb_quant_dataset_new_random ((guint) calibration_random, 0);
  if (!dynamic && dataset == NULL)
    {
      owb_cli_gerror (calibration_dir ? calibration_dir : images.dir, error);
      return OWB_EXIT_FAILED;
    }
  if (dataset && samples > 0)
    owb_quant_dataset_truncate (dataset, (guint) samples);

  gint64 start = g_get_monotonic_time ();
  g_autoptr (OwbOptimizeReport) prepare_report = NULL;
  g_autoptr (OwbModel) prepared = owb_quant_prepare (model, &options, &prepare_report, &error);
  if (prepared == NULL)
    {
      owb_cli_gerror (path, error);
      return owb_cli_exit_status (error);
    }
  g_autoptr (OwbQuantCalibration) cal = NULL;
  g_autoptr (OwbOptimizeReport) report = NULL;
  g_autoptr (OwbModel) quantized = NULL;
  g_autoptr (OwbQuantFallbackResult) fallback_result = NULL;
  double calibration_s = 0;
  if (dynamic)
    quantized = owb_quant_quantize_dynamic (prepared, &options, &report, &error);
  else
    {
      g_auto (GStrv) tensors = owb_quant_plan_tensors (prepared, &options, &error);
      if (tensors == NULL)
        {
          owb_cli_gerror (path, error);
          return owb_cli_exit_status (error);
        }
      OwbQuantCalibrateOptions co;
      owb_quant_calibrate_options_init (&co);
      co.tensors = (const char *const *) tensors;
      co.n_threads = n_threads;
      Progress progress = { "calibrating: sample", quiet, isatty (2), g_get_monotonic_time () };
      co.progress = print_progress;
      co.user_data = &progress;
      gint64 cal_start = g_get_monotonic_time ();
      cal = owb_quant_calibrate (prepared, dataset, &co, &error);
      calibration_s = (g_get_monotonic_time () - cal_start) / 1e6;
      if (cal == NULL)
        {
          owb_cli_gerror (path, error);
          return owb_cli_exit_status (error);
        }
      if (!fallback)
        quantized = owb_quant_quantize_static (prepared, cal, &options, &report, &error);
      else
        {
          g_autoptr (OwbQuantDataset) eval = eval_dir ? owb_quant_dataset_new_from_dir (eval_dir, &error) : NULL;
          if (eval_dir && eval == NULL)
            {
              owb_cli_gerror (eval_dir, error);
              return OWB_EXIT_FAILED;
            }
          g_autoptr (GPtrArray) labels = labels_path ? owb_quant_read_labels (labels_path, &error) : NULL;
          if (labels_path && labels == NULL)
            {
              owb_cli_gerror (labels_path, error);
              return OWB_EXIT_FAILED;
            }
          OwbQuantFallbackOptions fo;
          owb_quant_fallback_options_init (&fo);
          fo.target_sqnr_db = target_sqnr;
          fo.max_accuracy_drop = max_drop;
          fo.labels = labels;
          fo.eval = eval ? eval : dataset;
          fo.max_trials = (guint) max_trials;
          fo.n_threads = n_threads;
          Progress trials = { "accuracy target: trial", quiet, isatty (2), g_get_monotonic_time () };
          fo.progress = print_progress;
          fo.user_data = &trials;
          quantized = owb_quant_quantize_with_fallback (prepared, cal, &options, &fo, &fallback_result, &error);
          /* The report of the chosen model's passes: quantize it once more the same way. */
          if (quantized)
            {
              OwbQuantOptions chosen = options;
              g_autoptr (GPtrArray) excluded = g_ptr_array_new ();
              for (char **p = exclude_nodes; p && *p; p++)
                g_ptr_array_add (excluded, *p);
              for (guint i = 0; i < fallback_result->kept_float->len; i++)
                g_ptr_array_add (excluded, g_ptr_array_index (fallback_result->kept_float, i));
              g_ptr_array_add (excluded, NULL);
              chosen.exclude_nodes = (const char *const *) excluded->pdata;
              g_clear_pointer (&quantized, owb_model_unref);
              quantized = owb_quant_quantize_static (prepared, cal, &chosen, &report, &error);
            }
        }
    }
  if (quantized == NULL)
    {
      owb_cli_gerror (path, error);
      return owb_cli_exit_status (error);
    }
  status = owb_cli_save_model (quantized, output, external);
  if (status != OWB_EXIT_OK)
    return status;
  double total_s = (g_get_monotonic_time () - start) / 1e6;
  guint n_q = 0, n_dq = 0;
  for (guint i = 0; i < quantized->graph->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (quantized->graph->nodes, i);
      n_q += strcmp (n->op_type, "QuantizeLinear") == 0 || strcmp (n->op_type, "DynamicQuantizeLinear") == 0;
      n_dq += strcmp (n->op_type, "DequantizeLinear") == 0;
    }
  if (report_json)
    {
      g_autoptr (GString) s = g_string_new (NULL);
      owb_json_begin_object (s, NULL);
      owb_json_append_member_string (s, "mode", dynamic ? "dynamic" : "static");
      owb_json_append_member_string (s, "model", path);
      owb_json_append_member_string (s, "output", output);
      if (!dynamic)
        {
          owb_json_append_member_string (s, "method", owb_quant_method_to_string (options.range.method));
          owb_json_append_member_string (s, "calibration", owb_quant_dataset_get_source (dataset));
          owb_json_append_member_uint (s, "samples", owb_quant_calibration_get_n_samples (cal));
          /* seconds to the millisecond, as the rest of the report's times */
          owb_json_append_member_fixed (s, "calibration_seconds", calibration_s, 3);
          owb_json_append_member_uint (s, "calibration_bytes", owb_quant_calibration_get_bytes (cal));
        }
      owb_json_append_member_string (s, "activation_type", owb_data_type_name (options.activation_type));
      owb_json_append_member_string (s, "weight_type", owb_data_type_name (options.weight_type));
      owb_json_append_key (s, "per_channel");
      g_string_append (s, options.per_channel ? "true" : "false");
      owb_json_append_member_fixed (s, "seconds", total_s, 3);
      owb_json_append_member_fixed (s, "peak_rss_mb", owb_cli_peak_rss_mb (), 1);
      owb_json_append_member_uint (s, "quantize_nodes", n_q);
      owb_json_append_member_uint (s, "dequantize_nodes", n_dq);
      append_report_tensors (s, quantized, cal, &options);
      if (fallback_result)
        {
          g_autofree char *fb = owb_quant_fallback_result_to_json (fallback_result, 50);
          owb_json_append_key (s, "fallback");
          g_string_append (s, fb);
        }
      g_autofree char *prep = owb_optimize_report_to_json (prepare_report);
      g_autofree char *passes = owb_optimize_report_to_json (report);
      owb_json_append_key (s, "prepare");
      g_string_append (s, prep);
      owb_json_append_key (s, "quantize");
      g_string_append (s, passes);
      g_string_append (s, "}\n");
      if (!owb_file_set_contents_atomic (report_json, s->str, s->len, &error))
        {
          owb_cli_gerror (report_json, error);
          return OWB_EXIT_FAILED;
        }
    }
  if (!quiet)
    {
      if (dynamic)
        printf ("dynamic quantization: %u DequantizeLinear, %u DynamicQuantizeLinear\n", n_dq, n_q);
      else
        printf ("static quantization (%s, %u samples from %s, %.1f s): %u QuantizeLinear, %u DequantizeLinear\n",
                owb_quant_method_to_string (options.range.method), owb_quant_calibration_get_n_samples (cal),
                owb_quant_dataset_get_source (dataset), calibration_s, n_q, n_dq);
      /* With a fallback, its own list below says what it kept in float. */
      for (guint i = 0; !fallback_result && i < report->passes->len; i++)
        {
          const OwbPassReport *pr = g_ptr_array_index (report->passes, i);
          for (guint k = 0; k < pr->near_misses->len && k < 10; k++)
            printf ("  kept in float: %s\n", (const char *) g_ptr_array_index (pr->near_misses, k));
          if (pr->near_misses->len > 10)
            printf ("  ... %u more in --report-json\n", pr->near_misses->len - 10);
        }
      if (fallback_result)
        {
          const OwbQuantTrial *first = &g_array_index (fallback_result->trials, OwbQuantTrial, 0);
          const OwbQuantTrial *chosen = &g_array_index (fallback_result->trials, OwbQuantTrial,
                                                        fallback_result->chosen_trial);
          printf ("accuracy target %s after %u trial%s: worst output SQNR %.2f dB with everything quantized, "
                  "%.2f dB with %u node%s in float\n",
                  fallback_result->target_met ? "met" : "NOT met", fallback_result->trials->len,
                  fallback_result->trials->len == 1 ? "" : "s", first->sqnr_db, chosen->sqnr_db,
                  fallback_result->kept_float->len, fallback_result->kept_float->len == 1 ? "" : "s");
          if (chosen->has_accuracy)
            printf ("  accuracy: float %.4f, quantized %.4f (first trial %.4f)\n", fallback_result->float_accuracy,
                    chosen->accuracy, first->accuracy);
          for (guint i = 0; i < fallback_result->kept_float->len && i < 20; i++)
            printf ("  kept in float: %s\n", (const char *) g_ptr_array_index (fallback_result->kept_float, i));
        }
      printf ("wrote %s (%.1f s)\n", output, total_s);
    }
  return OWB_EXIT_OK;
}
