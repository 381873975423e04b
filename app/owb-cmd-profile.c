/* owb-cmd-profile.c: `owb profile MODEL`: where a run's time goes, per op type and per node, from
 * the session's trace hooks (until the SQLite profiler lands). */
#include "owb-cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Time of one node over the timed runs. Self time: a control-flow node's subgraph nodes are
 * counted on their own rows and not again on the parent's, so the rows add up to the run. */
typedef struct {
  const OwbNode *node;
  guint calls;
  double total_ms;
  double run_ms;   /* in the run under way */
  GArray *per_run; /* of double: the node's time in each profiled run, for its median and minimum */
  char *shape;     /* of the first output, last seen */
  guint order;     /* where it first finished among the profiled nodes: run order, for the JSON */
} NodeTime;

typedef struct {
  const char *op_type;
  guint calls;
  double total_ms;
} OpTime;

typedef struct {
  double start, children;
} Frame;

typedef struct {
  gboolean recording;
  GHashTable *nodes;  /* const OwbNode * -> NodeTime * */
  GArray *stack;      /* of Frame: nodes begun and not yet ended (nested for subgraphs) */
  guint seen;         /* nodes recorded so far */
} Profile;

static void
node_time_free (NodeTime *t)
{
  g_array_unref (t->per_run);
  g_free (t->shape);
  g_free (t);
}

/* The median and minimum of a node's per-run times: unlike the mean, one run slowed by something
 * else on the machine does not move them. Sorts per_run. */
static void
node_time_stats (NodeTime *t, double *median, double *min)
{
  GArray *v = t->per_run;
  *median = *min = 0;
  if (v->len == 0)
    return;
  double *sorted = (double *) v->data;
  owb_cli_sort_times (sorted, v->len);
  *median = owb_cli_quantile (sorted, v->len, 0.5);
  *min = sorted[0];
}

/* Closes a profiled run: every node's time in it joins its per-run list. */
static void
end_profiled_run (GHashTable *nodes)
{
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, nodes);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      NodeTime *t = value;
      g_array_append_val (t->per_run, t->run_ms);
      t->run_ms = 0;
    }
}

static void
on_begin (const OwbNode *node, int index, gpointer data)
{
  Profile *p = data;
  Frame f = { owb_cli_now_ms (), 0 };
  g_array_append_val (p->stack, f);
}

static void
on_end (const OwbNode *node, int index, OwbTensor *const *outputs, int n_outputs, gpointer data)
{
  Profile *p = data;
  double now = owb_cli_now_ms ();
  if (p->stack->len == 0)
    return;
  Frame f = g_array_index (p->stack, Frame, p->stack->len - 1);
  g_array_set_size (p->stack, p->stack->len - 1);
  double elapsed = now - f.start;
  if (p->stack->len > 0)
    g_array_index (p->stack, Frame, p->stack->len - 1).children += elapsed;
  if (!p->recording)
    return;
  NodeTime *t = g_hash_table_lookup (p->nodes, node);
  if (!t)
    {
      t = g_new0 (NodeTime, 1);
      t->node = node;
      t->per_run = g_array_new (FALSE, FALSE, sizeof (double));
      t->order = p->seen++;
      g_hash_table_insert (p->nodes, (gpointer) node, t);
    }
  t->calls++;
  t->total_ms += MAX (elapsed - f.children, 0);
  t->run_ms += MAX (elapsed - f.children, 0);
  if (n_outputs > 0 && outputs[0] && !t->shape)
    t->shape = owb_cli_tensor_describe (outputs[0]);
}

static int
compare_node_times (gconstpointer a, gconstpointer b)
{
  const NodeTime *x = *(NodeTime *const *) a, *y = *(NodeTime *const *) b;
  return (x->total_ms < y->total_ms) - (x->total_ms > y->total_ms);
}

static int
compare_op_times (gconstpointer a, gconstpointer b)
{
  const OpTime *x = a, *y = b;
  return (x->total_ms < y->total_ms) - (x->total_ms > y->total_ms);
}

static const char *
node_op (const OwbNode *node)
{
  return node->op_type ? node->op_type : "";
}

int
owb_cmd_profile (int argc, char **argv)
{
  g_autofree char *input_dir = NULL, *providers_opt = NULL, *optimize_opt = NULL;
  g_auto (GStrv) named = NULL, dim_opts = NULL;
  int n_threads = 0, warmup = 3, iterations = 10, top = 20;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "input-dir", 0, 0, G_OPTION_ARG_FILENAME, &input_dir, "Feed DIR/input_K.pb to the graph inputs in order (default: random inputs)", "DIR" },
    { "input", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &named, "Feed input NAME from FILE; repeatable", "NAME=FILE" },
    { "dim", 0, 0, G_OPTION_ARG_STRING_ARRAY, &dim_opts, "Value of a symbolic dimension for random inputs (default 1); repeatable", "NAME=VALUE" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &n_threads, "Intra-op threads (default 0: all cores)", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, "Untimed runs first (default 3)", "N" },
    { "iterations", 'n', 0, G_OPTION_ARG_INT, &iterations, "Profiled runs (default 10)", "N" },
    { "top", 0, 0, G_OPTION_ARG_INT, &top, "Nodes to list, slowest first (default 20)", "N" },
    { "optimize", 'O', 0, G_OPTION_ARG_STRING, &optimize_opt, "Optimization level: disabled, basic, extended, layout or all", "LEVEL" },
    { "providers", 0, 0, G_OPTION_ARG_STRING, &providers_opt, "Execution providers in priority order (default: cpu)", "cpu,…" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("MODEL");
  g_autoptr (GError) error = NULL;
  g_auto (OwbCliFeed) feed = { 0 };
  g_autoptr (GString) out = g_string_new (NULL);
  Profile prof = { FALSE, NULL, NULL, 0 };
  OwbTraceHooks hooks = { on_begin, on_end, &prof };
  const char *path;
  double run_ms = 0, nodes_ms = 0;
  int threads_used, status;

  g_option_context_set_summary (context, "Profile MODEL: after --warmup runs, time every node over --iterations runs\n"
                                         "and print a table per op type and the --top slowest nodes. Inputs are\n"
                                         "random unless files are given.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!owb_cli_parse (context, "profile", &argc, &argv))
    return OWB_EXIT_USAGE;
  if (argc != 2)
    {
      owb_cli_error ("profile", "expected one MODEL argument (see owb profile --help)");
      return OWB_EXIT_USAGE;
    }
  if (warmup < 0 || iterations < 1 || top < 0)
    {
      owb_cli_error ("profile", "--warmup and --top must be 0 or more and --iterations 1 or more");
      return OWB_EXIT_USAGE;
    }
  path = argv[1];
  if (!owb_cli_feed_options (&feed, "profile", dim_opts, providers_opt, n_threads, optimize_opt))
    return OWB_EXIT_USAGE;
  threads_used = n_threads > 0 ? n_threads : (int) g_get_num_processors ();
  feed.options.hooks = &hooks;

  status = owb_cli_feed_open (&feed, path, input_dir, named, TRUE, 0);
  if (status != OWB_EXIT_OK)
    return status;
  prof.nodes = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) node_time_free);
  prof.stack = g_array_new (FALSE, FALSE, sizeof (Frame));

  for (int it = -warmup; it < iterations; it++)
    {
      prof.recording = it >= 0;
      g_array_set_size (prof.stack, 0);
      double start = owb_cli_now_ms ();
      gboolean ok = owb_session_run (feed.session, feed.inputs->len, feed.names,
                                     (OwbTensor *const *) feed.inputs->pdata, feed.n_outputs, NULL, feed.outputs,
                                     NULL, NULL, &error);
      if (it >= 0)
        {
          run_ms += owb_cli_now_ms () - start;
          end_profiled_run (prof.nodes);
        }
      for (guint k = 0; k < feed.n_outputs; k++)
        g_clear_pointer (&feed.outputs[k], owb_tensor_unref);
      if (!ok)
        {
          owb_cli_gerror (path, error);
          status = OWB_EXIT_FAILED;
          goto done;
        }
    }

  {
    g_autoptr (GPtrArray) rows = g_ptr_array_new ();
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init (&iter, prof.nodes);
    while (g_hash_table_iter_next (&iter, NULL, &value))
      g_ptr_array_add (rows, value);
    g_ptr_array_sort (rows, compare_node_times);
    g_autoptr (GArray) ops = g_array_new (FALSE, TRUE, sizeof (OpTime));
    g_autoptr (GHashTable) op_index = g_hash_table_new (g_str_hash, g_str_equal);
    for (guint i = 0; i < rows->len; i++)
      {
        const NodeTime *t = g_ptr_array_index (rows, i);
        nodes_ms += t->total_ms;
        const char *op = node_op (t->node);
        gpointer idx;
        if (!g_hash_table_lookup_extended (op_index, op, NULL, &idx))
          {
            OpTime o = { op, 0, 0 };
            g_array_append_val (ops, o);
            idx = GUINT_TO_POINTER (ops->len - 1);
            g_hash_table_insert (op_index, (gpointer) op, idx);
          }
        OpTime *o = &g_array_index (ops, OpTime, GPOINTER_TO_UINT (idx));
        o->calls += t->calls;
        o->total_ms += t->total_ms;
      }
    g_array_sort (ops, compare_op_times);
    double denom = nodes_ms > 0 ? nodes_ms : 1;
    guint n_top = MIN ((guint) top, rows->len);
    /* per-run figures: totals are over all profiled runs, divided by their number */
    if (json)
      {
        g_string_append (out, "{\"model\":");
        owb_json_string (out, path);
        g_string_append_printf (out, ",\"iterations\":%d,\"warmup\":%d,\"threads\":%d,\"optimize\":", iterations, warmup,
                                threads_used);
        owb_json_string (out, owb_cli_optimize_name (feed.options.optimize));
        g_string_append (out, ",\"run_ms\":");
        owb_json_double (out, run_ms / iterations);
        g_string_append (out, ",\"nodes_ms\":");
        owb_json_double (out, nodes_ms / iterations);
        g_string_append (out, ",\"ops\":[");
        for (guint i = 0; i < ops->len; i++)
          {
            const OpTime *o = &g_array_index (ops, OpTime, i);
            g_string_append (out, i ? ",{\"op_type\":" : "{\"op_type\":");
            owb_json_string (out, o->op_type);
            g_string_append_printf (out, ",\"calls\":%u,\"total_ms\":", o->calls / iterations);
            owb_json_double (out, o->total_ms / iterations);
            g_string_append (out, ",\"percent\":");
            owb_json_double (out, 100 * o->total_ms / denom);
            g_string_append (out, ",\"mean_us\":");
            owb_json_double (out, o->calls ? 1000 * o->total_ms / o->calls : 0);
            g_string_append_c (out, '}');
          }
        g_string_append (out, "],\"nodes\":[");
        for (guint i = 0; i < n_top; i++)
          {
            NodeTime *t = g_ptr_array_index (rows, i);
            g_string_append (out, i ? ",{\"name\":" : "{\"name\":");
            owb_json_string (out, t->node->name ? t->node->name : "");
            g_string_append (out, ",\"op_type\":");
            owb_json_string (out, node_op (t->node));
            g_string_append (out, ",\"provider\":");
            owb_json_string (out, t->node->provider ? t->node->provider : "");
            g_string_append_printf (out, ",\"order\":%u", t->order);
            double median, min;
            node_time_stats (t, &median, &min);
            g_string_append (out, ",\"ms\":");
            owb_json_double (out, t->total_ms / iterations);
            g_string_append (out, ",\"median_ms\":");
            owb_json_double (out, median);
            g_string_append (out, ",\"min_ms\":");
            owb_json_double (out, min);
            g_string_append (out, ",\"percent\":");
            owb_json_double (out, 100 * t->total_ms / denom);
            g_string_append (out, ",\"output_shape\":");
            owb_json_string (out, t->shape ? t->shape : "");
            g_string_append_c (out, '}');
          }
        g_string_append (out, "]}\n");
      }
    else
      {
        g_string_append_printf (out, "Model      %s\n", path);
        g_string_append_printf (out, "Settings   %d thread%s, optimization %s, %d profiled runs after %d warm-up\n",
                                threads_used, threads_used == 1 ? "" : "s", owb_cli_optimize_name (feed.options.optimize),
                                iterations, warmup);
        g_string_append_printf (out, "Run        %.3f ms per run, %.3f ms of it inside nodes\n\n", run_ms / iterations,
                                nodes_ms / iterations);
        g_string_append_printf (out, "%-28s %7s %10s %7s %10s\n", "op type", "calls", "total ms", "%", "mean us");
        for (guint i = 0; i < ops->len; i++)
          {
            const OpTime *o = &g_array_index (ops, OpTime, i);
            g_string_append_printf (out, "%-28s %7u %10.3f %7.2f %10.1f\n", o->op_type, o->calls / iterations,
                                    o->total_ms / iterations, 100 * o->total_ms / denom,
                                    o->calls ? 1000 * o->total_ms / o->calls : 0);
          }
        g_string_append_printf (out, "\nTop %u nodes (ms per run: mean, median, minimum)\n%-32s %-20s %-8s %9s %7s %9s %9s  %s\n",
                                n_top, "node", "op type", "provider", "ms", "%", "median", "min", "output");
        for (guint i = 0; i < n_top; i++)
          {
            NodeTime *t = g_ptr_array_index (rows, i);
            double median, min;
            node_time_stats (t, &median, &min);
            g_string_append_printf (out, "%-32s %-20s %-8s %9.3f %7.2f %9.3f %9.3f  %s\n",
                                    t->node->name ? t->node->name : "", node_op (t->node),
                                    t->node->provider ? t->node->provider : "", t->total_ms / iterations,
                                    100 * t->total_ms / denom, median, min, t->shape ? t->shape : "");
          }
      }
  }
  fputs (out->str, stdout);

done:
  /* the session (which holds the hooks) goes before the tables they write to */
  owb_cli_feed_clear (&feed);
  g_hash_table_unref (prof.nodes);
  g_array_unref (prof.stack);
  return status;
}
