/* owb-cmd-inspect.c: `owb inspect MODEL`: what is in a model and which provider runs each node. */
#include "owb-cli.h"

#include <stdio.h>
#include <string.h>

static char *
node_label (const OwbNode *node, guint index)
{
  if (node->name != NULL && *node->name)
    return g_strdup (node->name);
  return g_strdup_printf ("#%u", index);
}

static char *
size_text (guint64 bytes)
{
  return g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
}

static void
print_value_infos (GString *out, const char *title, GPtrArray *infos)
{
  guint width = 4;

  g_string_append_printf (out, "%s\n", title);
  for (guint i = 0; i < infos->len; i++)
    width = MAX (width, MIN (40, strlen (((OwbValueInfo *) infos->pdata[i])->name)));
  for (guint i = 0; i < infos->len; i++)
    {
      const OwbValueInfo *info = infos->pdata[i];
      g_autofree char *type = info->has_type ? owb_value_type_to_string (&info->type) : g_strdup ("(type unknown)");
      g_string_append_printf (out, "  %-*s  %s\n", (int) width, info->name, type);
    }
  if (infos->len == 0)
    g_string_append (out, "  (none)\n");
}

static void
json_value_infos (GString *out, GPtrArray *infos)
{
  g_string_append_c (out, '[');
  for (guint i = 0; i < infos->len; i++)
    {
      const OwbValueInfo *info = infos->pdata[i];
      owb_json_begin_object (out, NULL);
      owb_json_append_member_string (out, "name", info->name);
      owb_json_append_key (out, "type");
      owb_json_value_type (out, &info->type, info->has_type);
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, ']');
}

/* Value infos after shape inference: those of the graph, then outputs not among them. */
static GPtrArray *
all_value_infos (const OwbGraph *graph)
{
  GPtrArray *list = g_ptr_array_new ();
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (guint i = 0; i < graph->value_infos->len; i++)
    {
      OwbValueInfo *info = graph->value_infos->pdata[i];
      if (g_hash_table_add (seen, info->name))
        g_ptr_array_add (list, info);
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    {
      OwbValueInfo *info = graph->outputs->pdata[i];
      if (g_hash_table_add (seen, info->name))
        g_ptr_array_add (list, info);
    }
  return list;
}

int
owb_cmd_inspect (int argc, char **argv)
{
  gboolean json = FALSE, shapes = FALSE;
  g_autofree char *providers_opt = NULL, *optimize_opt = NULL;
  GOptionEntry entries[] = {
    OWB_CLI_JSON_ENTRY (json),
    { "shapes", 0, 0, G_OPTION_ARG_NONE, &shapes, "Also print every tensor's inferred type and shape", NULL },
    { "providers", 0, 0, G_OPTION_ARG_STRING, &providers_opt, "Providers to partition onto, in priority order (default: cpu)", "cpu,…" },
    { "optimize", 'O', 0, G_OPTION_ARG_STRING, &optimize_opt, "Optimization level of the partitioned graph (default: disabled)", "LEVEL" },
    { NULL }
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) session_error = NULL;
  g_autoptr (GError) shapes_error = NULL;
  g_autoptr (OwbModel) model = NULL;
  g_autoptr (OwbSession) session = NULL;
  g_autoptr (GPtrArray) providers = NULL;
  g_autoptr (GPtrArray) feed = NULL;
  g_autoptr (GPtrArray) infos = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  OwbSessionOptions options;
  const OwbGraph *graph, *run_graph = NULL;
  const char *path;
  GArray *ops;
  guint n_sub = 0;
  guint64 init_bytes = 0;

  const char *summary = "Summarise MODEL: IR version, producer, opsets, inputs and outputs with\n"
                        "their types and symbolic shapes, op counts, and which provider claims each\n"
                        "node (with the reasons of those that declined).";
  if (!owb_cli_parse_model ("inspect", summary, entries, &argc, &argv, &path))
    return OWB_EXIT_USAGE;

  if (!owb_cli_session_options (&options, providers_opt, 1, optimize_opt ? optimize_opt : "disabled", &providers,
                                &error))
    {
      owb_cli_gerror ("inspect", error);
      return OWB_EXIT_USAGE;
    }

  model = owb_model_load_file (path, &error);
  if (model == NULL)
    {
      owb_cli_gerror (path, error);
      return OWB_EXIT_FAILED;
    }

  session = owb_session_new (model, &options, &session_error);
  if (session != NULL)
    run_graph = owb_session_get_graph (session);
  /* After the session was made: it partitions its own copy of the graph. */
  if (shapes)
    owb_model_infer_shapes (model, &shapes_error);
  graph = model->graph;
  feed = owb_graph_dup_feed_inputs (graph);
  for (guint i = 0; i < graph->initializers->len; i++)
    init_bytes += ((OwbTensor *) graph->initializers->pdata[i])->nbytes;
  ops = owb_graph_count_ops (graph, &n_sub);
  if (shapes)
    infos = all_value_infos (graph);

  if (json)
    {
      owb_json_begin_object (out, NULL);
      owb_json_append_member_string (out, "file", path);
      owb_json_append_member_int (out, "ir_version", model->ir_version);
      owb_json_append_member_string (out, "producer_name", model->producer_name);
      owb_json_append_member_string (out, "producer_version", model->producer_version);
      owb_json_append_member_string (out, "domain", model->domain);
      owb_json_append_member_int (out, "model_version", model->model_version);
      owb_json_append_member_string (out, "doc_string", model->doc_string);
      owb_json_append_member_string (out, "graph_name", graph->name);
      owb_json_begin_array (out, "opsets");
      for (guint i = 0; i < model->opset_imports->len; i++)
        {
          const OwbOpsetImport *imp = &g_array_index (model->opset_imports, OwbOpsetImport, i);
          owb_json_begin_object (out, NULL);
          owb_json_append_member_string (out, "domain", imp->domain);
          owb_json_append_member_int (out, "version", imp->version);
          g_string_append_c (out, '}');
        }
      g_string_append_c (out, ']');
      owb_json_begin_object (out, "metadata");
      for (guint i = 0; model->metadata != NULL && i < model->metadata->len; i++)
        {
          const OwbStringPair *kv = &g_array_index (model->metadata, OwbStringPair, i);
          owb_json_append_member_string (out, kv->key, kv->value);
        }
      g_string_append_c (out, '}');
      owb_json_append_key (out, "inputs");
      json_value_infos (out, feed);
      owb_json_append_key (out, "outputs");
      json_value_infos (out, graph->outputs);
      owb_json_begin_object (out, "initializers");
      owb_json_append_member_uint (out, "count", graph->initializers->len);
      owb_json_append_member_uint (out, "bytes", init_bytes);
      g_string_append_c (out, '}');
      owb_json_append_member_uint (out, "n_nodes", graph->nodes->len);
      owb_json_append_member_uint (out, "n_subgraph_nodes", n_sub);
      owb_json_begin_object (out, "op_counts");
      for (guint i = 0; i < ops->len; i++)
        {
          const OwbOpCount *oc = &g_array_index (ops, OwbOpCount, i);
          owb_json_append_member_uint (out, oc->op, oc->count);
        }
      g_string_append_c (out, '}');
      owb_json_append_member_string (out, "optimize", owb_cli_optimize_name (options.optimize));
      owb_json_append_member_string_or_null (out, "session_error", session_error ? session_error->message : NULL);
      owb_json_begin_array (out, "nodes");
      for (guint i = 0; run_graph != NULL && i < run_graph->nodes->len; i++)
        {
          const OwbNode *node = run_graph->nodes->pdata[i];
          owb_json_begin_object (out, NULL);
          owb_json_append_member_string (out, "name", node->name);
          owb_json_append_member_string (out, "op_type", node->op_type);
          owb_json_append_member_string (out, "domain", node->domain);
          owb_json_append_member_int (out, "opset", node->opset);
          owb_json_append_member_string_or_null (out, "provider", node->provider);
          owb_json_begin_array (out, "declines");
          for (guint d = 0; node->declines != NULL && d < node->declines->len; d++)
            {
              const OwbDecline *dec = node->declines->pdata[d];
              owb_json_begin_object (out, NULL);
              owb_json_append_member_string (out, "provider", dec->provider);
              owb_json_append_member_string (out, "reason", dec->reason);
              g_string_append_c (out, '}');
            }
          g_string_append (out, "]}");
        }
      g_string_append_c (out, ']');
      if (shapes)
        {
          owb_json_append_member_string_or_null (out, "shapes_error", shapes_error ? shapes_error->message : NULL);
          owb_json_append_key (out, "value_infos");
          json_value_infos (out, infos);
        }
      g_string_append (out, "}\n");
    }
  else
    {
      g_autofree char *init_size = size_text (init_bytes);
      GHashTable *per_provider = g_hash_table_new (g_str_hash, g_str_equal);

      g_string_append_printf (out, "Model          %s\n", path);
      g_string_append_printf (out, "IR version     %" G_GINT64_FORMAT "\n", (gint64) model->ir_version);
      if (model->producer_name != NULL && *model->producer_name)
        g_string_append_printf (out, "Producer       %s%s%s\n", model->producer_name,
                                model->producer_version && *model->producer_version ? " " : "",
                                model->producer_version ? model->producer_version : "");
      if (model->domain != NULL && *model->domain)
        g_string_append_printf (out, "Domain         %s\n", model->domain);
      if (model->model_version != 0)
        g_string_append_printf (out, "Model version  %" G_GINT64_FORMAT "\n", (gint64) model->model_version);
      if (model->doc_string != NULL && *model->doc_string)
        {
          g_autofree char *first = g_strndup (model->doc_string, strcspn (model->doc_string, "\n"));
          g_string_append_printf (out, "Description    %s\n", first);
        }
      g_string_append (out, "Opsets         ");
      for (guint i = 0; i < model->opset_imports->len; i++)
        {
          const OwbOpsetImport *imp = &g_array_index (model->opset_imports, OwbOpsetImport, i);
          g_string_append_printf (out, "%s%s %" G_GINT64_FORMAT, i ? ", " : "",
                                  imp->domain && *imp->domain ? imp->domain : "ai.onnx", (gint64) imp->version);
        }
      g_string_append_c (out, '\n');
      for (guint i = 0; model->metadata != NULL && i < model->metadata->len; i++)
        {
          const OwbStringPair *kv = &g_array_index (model->metadata, OwbStringPair, i);
          g_string_append_printf (out, "%s%s = %s\n", i ? "               " : "Metadata       ", kv->key, kv->value);
        }
      print_value_infos (out, "Inputs", feed);
      print_value_infos (out, "Outputs", graph->outputs);
      g_string_append_printf (out, "Initializers   %u (%s)\n", graph->initializers->len, init_size);
      g_string_append_printf (out, "Nodes          %u", graph->nodes->len);
      if (n_sub > 0)
        g_string_append_printf (out, " (and %u in subgraphs)", n_sub);
      g_string_append (out, "\nOps\n");
      for (guint i = 0; i < ops->len; i++)
        {
          const OwbOpCount *oc = &g_array_index (ops, OwbOpCount, i);
          g_string_append_printf (out, "  %-28s %u\n", oc->op, oc->count);
        }

      g_string_append_printf (out, "Providers      (optimization %s)\n", owb_cli_optimize_name (options.optimize));
      if (session_error != NULL)
        g_string_append_printf (out, "  not partitioned: %s\n", session_error->message);
      for (guint i = 0; run_graph != NULL && i < run_graph->nodes->len; i++)
        {
          const OwbNode *node = run_graph->nodes->pdata[i];
          const char *p = node->provider != NULL ? node->provider : "(none)";
          guint n = GPOINTER_TO_UINT (g_hash_table_lookup (per_provider, p));
          g_hash_table_insert (per_provider, (gpointer) p, GUINT_TO_POINTER (n + 1));
        }
      {
        GHashTableIter iter;
        gpointer key, value;
        g_hash_table_iter_init (&iter, per_provider);
        while (g_hash_table_iter_next (&iter, &key, &value))
          g_string_append_printf (out, "  %-12s %u node%s\n", (char *) key, GPOINTER_TO_UINT (value),
                                  GPOINTER_TO_UINT (value) == 1 ? "" : "s");
      }
      g_hash_table_unref (per_provider);

      if (run_graph != NULL)
        {
          guint width = 4;
          for (guint i = 0; i < run_graph->nodes->len; i++)
            {
              g_autofree char *label = node_label (run_graph->nodes->pdata[i], i);
              width = MAX (width, MIN (40, strlen (label)));
            }
          g_string_append (out, "Nodes → providers\n");
          for (guint i = 0; i < run_graph->nodes->len; i++)
            {
              const OwbNode *node = run_graph->nodes->pdata[i];
              g_autofree char *label = node_label (node, i);
              g_string_append_printf (out, "  %-*s  %-20s %s\n", (int) width, label, node->op_type,
                                      node->provider != NULL ? node->provider : "(none)");
              for (guint d = 0; node->declines != NULL && d < node->declines->len; d++)
                {
                  const OwbDecline *dec = node->declines->pdata[d];
                  g_string_append_printf (out, "  %-*s    declined by %s: %s\n", (int) width, "", dec->provider,
                                          dec->reason);
                }
            }
        }

      if (shapes)
        {
          if (shapes_error != NULL)
            g_string_append_printf (out, "Shapes         inference stopped: %s\n", shapes_error->message);
          print_value_infos (out, "Tensors", infos);
        }
    }

  g_array_unref (ops);
  /* Names and strings come from the model: nothing in them may drive the terminal. */
  g_autofree char *safe = owb_cli_escape_lines (out->str);
  fputs (safe, stdout);
  fflush (stdout);

  if (session_error != NULL)
    {
      owb_cli_gerror (path, session_error);
      return OWB_EXIT_FAILED;
    }
  if (shapes_error != NULL)
    {
      owb_cli_gerror (path, shapes_error);
      return OWB_EXIT_FAILED;
    }
  return OWB_EXIT_OK;
}
