/* owb-validate.c: structural checks of a model (names, opsets, cycles) and topological sorting. */
#include <owb/owb-validate.h>
#include <owb/owb-op.h>
#include <owb/owb-error.h>

#include "owb-ir-private.h"

#include <string.h>

/* Newest opset per domain this engine knows (matches onnx 1.23). Newer imports are refused:
 * an op's meaning could have changed in ways we do not implement. */
static const struct {
  const char *domain;
  int max;
} known_domains[] = {
  { "", 28 },
  { "ai.onnx.ml", 5 },
  { "ai.onnx.preview", 1 },
  { "ai.onnx.preview.training", 1 },
  { "com.microsoft", 1 },
  { OWB_DOMAIN, 1 },
};

/* Subgraph nesting beyond this is refused rather than risking a deep recursion. */
#define MAX_GRAPH_DEPTH 64

static const char *
normal_domain (const char *domain)
{
  return (!domain || strcmp (domain, "ai.onnx") == 0) ? "" : domain;
}

static void
add_outer_refs (const OwbGraph *graph, GHashTable *refs, int depth);

/* Names a node reads: its inputs and, for nodes with subgraphs, every name the subgraphs read from
 * outside themselves (so that ordering respects those implicit inputs too). */
static void
node_collect_reads (const OwbNode *node, GHashTable *reads, int depth)
{
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i][0])
      g_hash_table_add (reads, node->inputs[i]);
  if (depth > MAX_GRAPH_DEPTH)
    return;
  for (int a = 0; a < node->n_attributes; a++)
    {
      const OwbAttribute *attr = &node->attributes[a];
      if (attr->type == OWB_ATTR_GRAPH && attr->g)
        add_outer_refs (attr->g, reads, depth + 1);
      for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
        add_outer_refs (attr->graphs[k], reads, depth + 1);
    }
}

static void
add_outer_refs (const OwbGraph *graph, GHashTable *refs, int depth)
{
  GHashTable *defined = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTable *reads = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->inputs->len; i++)
    g_hash_table_add (defined, ((OwbValueInfo *) g_ptr_array_index (graph->inputs, i))->name);
  for (guint i = 0; i < graph->initializer_names->len; i++)
    g_hash_table_add (defined, g_ptr_array_index (graph->initializer_names, i));
  for (guint n = 0; n < graph->nodes->len; n++)
    {
      const OwbNode *node = g_ptr_array_index (graph->nodes, n);
      for (int o = 0; o < node->n_outputs; o++)
        g_hash_table_add (defined, node->outputs[o]);
      node_collect_reads (node, reads, depth);
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    g_hash_table_add (reads, ((OwbValueInfo *) g_ptr_array_index (graph->outputs, i))->name);
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, reads);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (!g_hash_table_contains (defined, key))
      g_hash_table_add (refs, key);
  g_hash_table_unref (reads);
  g_hash_table_unref (defined);
}

void
_owb_graph_collect_outer_refs (const OwbGraph *graph, GHashTable *refs)
{
  add_outer_refs (graph, refs, 0);
}

gboolean
owb_graph_sort (OwbGraph *graph, GError **error)
{
  guint n = graph->nodes->len;
  GHashTable *producer = g_hash_table_new (g_str_hash, g_str_equal); /* name -> node index + 1 */
  for (guint i = 0; i < n; i++)
    {
      OwbNode *node = g_ptr_array_index (graph->nodes, i);
      for (int o = 0; o < node->n_outputs; o++)
        if (node->outputs[o][0])
          g_hash_table_insert (producer, node->outputs[o], GUINT_TO_POINTER (i + 1));
    }
  /* Edges producer -> consumer, as adjacency lists; in-degree per node. */
  guint *indegree = g_new0 (guint, n);
  GArray **consumers = g_new0 (GArray *, n);
  for (guint i = 0; i < n; i++)
    {
      OwbNode *node = g_ptr_array_index (graph->nodes, i);
      /* Only nodes with subgraphs need a set of what they read (their bodies' outer names); the
       * others' inputs are looked up directly. An edge p -> i is the last one appended to p's list
       * while i is being visited, which is how repeated reads of p are skipped. */
      GHashTable *reads = NULL;
      for (int a = 0; !reads && a < node->n_attributes; a++)
        if (node->attributes[a].type == OWB_ATTR_GRAPH || node->attributes[a].type == OWB_ATTR_GRAPHS)
          {
            reads = g_hash_table_new (g_str_hash, g_str_equal);
            node_collect_reads (node, reads, 0);
          }
      GHashTableIter iter;
      gpointer key = NULL;
      if (reads)
        g_hash_table_iter_init (&iter, reads);
      for (int k = 0;; k++)
        {
          const char *name;
          if (reads)
            {
              if (!g_hash_table_iter_next (&iter, &key, NULL))
                break;
              name = key;
            }
          else if (k < node->n_inputs)
            name = node->inputs[k];
          else
            break;
          guint p = name[0] ? GPOINTER_TO_UINT (g_hash_table_lookup (producer, name)) : 0;
          if (p == 0)
            continue;
          if (!consumers[p - 1])
            consumers[p - 1] = g_array_new (FALSE, FALSE, sizeof (guint));
          GArray *list = consumers[p - 1];
          if (list->len > 0 && g_array_index (list, guint, list->len - 1) == i)
            continue;
          g_array_append_val (list, i);
          indegree[i]++;
        }
      if (reads)
        g_hash_table_unref (reads);
    }
  /* Kahn's algorithm; always take the smallest ready index so the file order is kept where free. */
  GPtrArray *sorted = g_ptr_array_sized_new (n);
  guint *heap = g_new (guint, n + 1);
  guint heap_len = 0;
#define HEAP_PUSH(v)                                                                                                   \
  do                                                                                                                   \
    {                                                                                                                  \
      guint _k = heap_len++;                                                                                           \
      heap[_k] = (v);                                                                                                  \
      while (_k > 0 && heap[(_k - 1) / 2] > heap[_k])                                                                  \
        {                                                                                                              \
          guint _t = heap[_k];                                                                                         \
          heap[_k] = heap[(_k - 1) / 2];                                                                               \
          heap[(_k - 1) / 2] = _t;                                                                                     \
          _k = (_k - 1) / 2;                                                                                           \
        }                                                                                                              \
    }                                                                                                                  \
  while (0)
  for (guint i = 0; i < n; i++)
    if (indegree[i] == 0)
      HEAP_PUSH (i);
  while (heap_len > 0)
    {
      guint top = heap[0];
      heap[0] = heap[--heap_len];
      for (guint k = 0;;)
        {
          guint l = 2 * k + 1, r = l + 1, m = k;
          if (l < heap_len && heap[l] < heap[m])
            m = l;
          if (r < heap_len && heap[r] < heap[m])
            m = r;
          if (m == k)
            break;
          guint t = heap[k];
          heap[k] = heap[m];
          heap[m] = t;
          k = m;
        }
      g_ptr_array_add (sorted, g_ptr_array_index (graph->nodes, top));
      for (guint c = 0; consumers[top] && c < consumers[top]->len; c++)
        {
          guint v = g_array_index (consumers[top], guint, c);
          if (--indegree[v] == 0)
            HEAP_PUSH (v);
        }
    }
#undef HEAP_PUSH
  gboolean ok = sorted->len == n;
  if (!ok)
    {
      for (guint i = 0; i < n; i++)
        if (indegree[i] > 0)
          {
            char *who = owb_node_describe (g_ptr_array_index (graph->nodes, i));
            g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "graph '%s' has a cycle through %s",
                         graph->name ? graph->name : "", who);
            g_free (who);
            break;
          }
    }
  else
    {
      /* The graph owns its nodes through the array's free function: swap the contents only. */
      for (guint i = 0; i < n; i++)
        graph->nodes->pdata[i] = sorted->pdata[i];
    }
  g_ptr_array_free (sorted, TRUE);
  for (guint i = 0; i < n; i++)
    if (consumers[i])
      g_array_free (consumers[i], TRUE);
  g_free (consumers);
  g_free (indegree);
  g_free (heap);
  g_hash_table_unref (producer);
  return ok;
}

typedef struct Scope Scope;
struct Scope {
  GHashTable *names;
  const Scope *outer;
};

static gboolean
scope_has (const Scope *scope, const char *name)
{
  for (; scope; scope = scope->outer)
    if (g_hash_table_contains (scope->names, name))
      return TRUE;
  return FALSE;
}

static gboolean validate_graph (OwbModel *model, OwbGraph *graph, const Scope *outer, int depth, GError **error);

static gboolean
validate_node (OwbModel *model, OwbNode *node, const Scope *scope, int depth, GError **error)
{
  const char *domain = normal_domain (node->domain);
  int64_t opset = owb_model_get_opset (model, domain);
  if (opset < 0)
    {
      char *who = owb_node_describe (node);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s uses domain '%s', which the model does not import",
                   who, domain[0] ? domain : "ai.onnx");
      g_free (who);
      return FALSE;
    }
  if (opset > G_MAXINT32)
    {
      /* node->opset is an int: 2^32 + 13 must not become 13 */
      char *who = owb_node_describe (node);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s: opset %" G_GINT64_FORMAT " of domain '%s' is out of range",
                   who, opset, domain[0] ? domain : "ai.onnx");
      g_free (who);
      return FALSE;
    }
  node->opset = (int) opset;
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i][0] && !scope_has (scope, node->inputs[i]))
      {
        char *who = owb_node_describe (node);
        g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                     "%s reads '%s', which no graph input, initializer or earlier node defines", who, node->inputs[i]);
        g_free (who);
        return FALSE;
      }
  for (int a = 0; a < node->n_attributes; a++)
    {
      OwbAttribute *attr = &node->attributes[a];
      if (attr->type == OWB_ATTR_GRAPH && attr->g && !validate_graph (model, attr->g, scope, depth + 1, error))
        return FALSE;
      for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
        if (!validate_graph (model, attr->graphs[k], scope, depth + 1, error))
          return FALSE;
    }
  return TRUE;
}

static gboolean
define_name (GHashTable *names, const char *name, const char *what, const OwbGraph *graph, GError **error)
{
  if (!name[0])
    return TRUE;
  if (g_hash_table_contains (names, name))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "graph '%s': '%s' is defined twice (again as %s)",
                   graph->name ? graph->name : "", name, what);
      return FALSE;
    }
  g_hash_table_add (names, (gpointer) name);
  return TRUE;
}

static gboolean
validate_graph (OwbModel *model, OwbGraph *graph, const Scope *outer, int depth, GError **error)
{
  if (depth > MAX_GRAPH_DEPTH)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "subgraphs are nested more than %d deep",
                   MAX_GRAPH_DEPTH);
      return FALSE;
    }
  if (!owb_graph_sort (graph, error))
    return FALSE;
  Scope scope = { g_hash_table_new (g_str_hash, g_str_equal), outer };
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < graph->initializer_names->len; i++)
    ok = define_name (scope.names, g_ptr_array_index (graph->initializer_names, i), "an initializer", graph, error);
  for (guint i = 0; ok && i < graph->inputs->len; i++)
    {
      const char *name = ((OwbValueInfo *) g_ptr_array_index (graph->inputs, i))->name;
      /* IR < 4 lists initializers among the inputs too: that is not a redefinition. */
      if (owb_graph_get_initializer (graph, name))
        continue;
      ok = define_name (scope.names, name, "a graph input", graph, error);
    }
  for (guint n = 0; ok && n < graph->nodes->len; n++)
    {
      OwbNode *node = g_ptr_array_index (graph->nodes, n);
      ok = validate_node (model, node, &scope, depth, error);
      for (int o = 0; ok && o < node->n_outputs; o++)
        {
          if (!node->outputs[o][0])
            continue;
          if (g_hash_table_contains (scope.names, node->outputs[o]))
            {
              char *who = owb_node_describe (node);
              g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "%s writes '%s', which is already defined",
                           who, node->outputs[o]);
              g_free (who);
              ok = FALSE;
            }
          else
            g_hash_table_add (scope.names, node->outputs[o]);
        }
    }
  for (guint i = 0; ok && i < graph->outputs->len; i++)
    {
      const char *name = ((OwbValueInfo *) g_ptr_array_index (graph->outputs, i))->name;
      if (!scope_has (&scope, name))
        {
          g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "graph '%s': output '%s' is never computed",
                       graph->name ? graph->name : "", name);
          ok = FALSE;
        }
    }
  g_hash_table_unref (scope.names);
  return ok;
}

gboolean
owb_model_validate (OwbModel *model, GError **error)
{
  if (!model->graph)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL, "the model has no graph");
      return FALSE;
    }
  for (guint i = 0; i < model->opset_imports->len; i++)
    {
      const OwbOpsetImport *imp = &g_array_index (model->opset_imports, OwbOpsetImport, i);
      const char *domain = normal_domain (imp->domain);
      for (guint k = 0; k < G_N_ELEMENTS (known_domains); k++)
        if (strcmp (known_domains[k].domain, domain) == 0
            && (imp->version < 1 || imp->version > known_domains[k].max))
          {
            g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                         "opset %" G_GINT64_FORMAT " of domain '%s' is out of range (this engine knows 1 to %d)",
                         imp->version, domain[0] ? domain : "ai.onnx", known_domains[k].max);
            return FALSE;
          }
    }
  return validate_graph (model, model->graph, NULL, 0, error);
}
