/* owb-pass-context.c: graph queries and edits for optimizer passes, keeping the report exact. */
#include "owb-optimizer-private.h"
#include "../ir/owb-ir-private.h"

#include <stdarg.h>
#include <string.h>

/* The indexes are built once per pass, on first use, and every editing helper below keeps them
 * exact, so that a query costs a hash lookup and a pass is linear in the graph (rebuilding them
 * after each edit made a pass quadratic: a 50,000-node graph took minutes). The maps own their
 * keys: a removed node's strings are freed with it while other nodes may still read the names. */

static void
count_visits (OwbPassContext *ctx, guint n)
{
  ctx->report->nodes_visited += n;
}

/* Index keys live as long as the context, in one chunk: no allocation per key, and a key stays
 * valid when the node whose string it copied is freed. */
static const char *
key_of (OwbPassContext *ctx, const char *name)
{
  if (!ctx->strings)
    ctx->strings = g_string_chunk_new (64 * 1024);
  return g_string_chunk_insert_const (ctx->strings, name);
}

/* The names a node's subgraphs read from outer scopes (a set of borrowed strings), or NULL. */
static GHashTable *
node_outer_reads (const OwbNode *node)
{
  GHashTable *refs = NULL;
  for (int a = 0; a < node->n_attributes; a++)
    {
      const OwbAttribute *attr = &node->attributes[a];
      int n = attr->type == OWB_ATTR_GRAPH ? (attr->g != NULL) : attr->type == OWB_ATTR_GRAPHS ? attr->n : 0;
      for (int k = 0; k < n; k++)
        {
          if (!refs)
            refs = g_hash_table_new (g_str_hash, g_str_equal);
          _owb_graph_collect_outer_refs (attr->type == OWB_ATTR_GRAPH ? attr->g : attr->graphs[k], refs);
        }
    }
  return refs;
}

/* outer_reads counts, per name, the nodes whose subgraphs read it. */
static void
count_outer_reads (OwbPassContext *ctx, const OwbNode *node, int delta)
{
  GHashTable *refs = node_outer_reads (node);
  if (!refs)
    return;
  GHashTableIter iter;
  gpointer key;
  g_hash_table_iter_init (&iter, refs);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (ctx->outer_reads, key));
      if (delta > 0)
        g_hash_table_insert (ctx->outer_reads, (gpointer) key_of (ctx, key), GUINT_TO_POINTER (n + 1));
      else if (n > 1)
        g_hash_table_insert (ctx->outer_reads, (gpointer) key_of (ctx, key), GUINT_TO_POINTER (n - 1));
      else
        g_hash_table_remove (ctx->outer_reads, key);
    }
  g_hash_table_unref (refs);
}

/* The readers of one value, in the order they were indexed. A removed reader leaves a hole
 * (NULL) instead of shifting the rest: a value read by thousands of nodes (a scalar that
 * constant_sharing made one) lost its readers one by one from the front, and each removal moved
 * all the others (fuse_matmul_scale on 12,500 Muls of one scale: 13x the work for 5x the nodes).
 * The holes go when the list is handed out or when they are the majority; `head` is where the
 * first live reader may be, so removals in list order find theirs at once. */
typedef struct {
  GPtrArray *nodes;
  guint head;
  guint holes;
} Readers;

static void
readers_free (gpointer data)
{
  Readers *r = data;
  g_ptr_array_unref (r->nodes);
  g_free (r);
}

static void
readers_compact (OwbPassContext *ctx, Readers *r)
{
  if (r->holes == 0)
    return;
  guint kept = 0;
  for (guint i = r->head; i < r->nodes->len; i++)
    if (r->nodes->pdata[i])
      r->nodes->pdata[kept++] = r->nodes->pdata[i];
  count_visits (ctx, r->nodes->len - r->head);
  g_ptr_array_set_size (r->nodes, kept);
  r->head = r->holes = 0;
}

static void
add_consumer (OwbPassContext *ctx, const char *name, OwbNode *node)
{
  Readers *r = g_hash_table_lookup (ctx->consumers, name);
  if (!r)
    {
      r = g_new0 (Readers, 1);
      r->nodes = g_ptr_array_new ();
      g_hash_table_insert (ctx->consumers, (gpointer) key_of (ctx, name), r);
    }
  g_ptr_array_add (r->nodes, node);
}

/* Takes one slot of `node` out of the readers of `name`. */
static void
remove_consumer (OwbPassContext *ctx, const char *name, OwbNode *node)
{
  Readers *r = g_hash_table_lookup (ctx->consumers, name);
  if (!r)
    return;
  guint i = r->head;
  while (i < r->nodes->len && r->nodes->pdata[i] != node)
    i++;
  count_visits (ctx, i - r->head + 1); /* the search is part of the cost a scale test sees */
  if (i == r->nodes->len)
    return;
  r->nodes->pdata[i] = NULL;
  r->holes++;
  while (r->head < r->nodes->len && !r->nodes->pdata[r->head])
    r->head++;
  if (r->head == r->nodes->len)
    g_hash_table_remove (ctx->consumers, name);
  else if (r->holes > 16 && r->holes > r->nodes->len / 2)
    readers_compact (ctx, r);
}

static void
index_node (OwbPassContext *ctx, OwbNode *node)
{
  for (int o = 0; o < node->n_outputs; o++)
    if (node->outputs[o][0])
      g_hash_table_insert (ctx->producer, (gpointer) key_of (ctx, node->outputs[o]), node);
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i][0])
      add_consumer (ctx, node->inputs[i], node);
  count_outer_reads (ctx, node, +1);
}

/* Takes a node that is about to leave the graph out of the maps. */
static void
unindex_node (OwbPassContext *ctx, OwbNode *node)
{
  if (!ctx->maps_valid)
    return;
  for (int o = 0; o < node->n_outputs; o++)
    if (node->outputs[o][0] && g_hash_table_lookup (ctx->producer, node->outputs[o]) == node)
      g_hash_table_remove (ctx->producer, node->outputs[o]);
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i][0])
      remove_consumer (ctx, node->inputs[i], node); /* one slot per call, as index_node added one per input */
  count_outer_reads (ctx, node, -1);
}

static void
build_maps (OwbPassContext *ctx)
{
  if (ctx->maps_valid)
    return;
  g_clear_pointer (&ctx->producer, g_hash_table_unref);
  g_clear_pointer (&ctx->consumers, g_hash_table_unref);
  g_clear_pointer (&ctx->outer_reads, g_hash_table_unref);
  ctx->producer = g_hash_table_new (g_str_hash, g_str_equal);
  ctx->consumers = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, readers_free);
  ctx->outer_reads = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *nodes = owb_pass_nodes (ctx);
  for (guint n = 0; n < nodes->len; n++)
    index_node (ctx, g_ptr_array_index (nodes, n));
  count_visits (ctx, nodes->len);
  ctx->maps_valid = TRUE;
}

static void
add_info_names (GHashTable *index, GPtrArray *infos)
{
  for (guint i = 0; i < infos->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (infos, i);
      if (!g_hash_table_contains (index, info->name))
        g_hash_table_insert (index, info->name, info);
    }
}

/* name -> OwbValueInfo *, with owb_graph_find_value_info's precedence (inputs, outputs, then
 * value_info), and the sets of graph input and output names. */
static void
build_value_index (OwbPassContext *ctx)
{
  if (ctx->value_infos)
    return;
  /* Keys are the infos' own names: the index is dropped before a pass ends (dead_code frees infos
   * last thing) and whenever a helper renames one. */
  ctx->value_infos = g_hash_table_new (g_str_hash, g_str_equal);
  add_info_names (ctx->value_infos, ctx->graph->inputs);
  add_info_names (ctx->value_infos, ctx->graph->outputs);
  add_info_names (ctx->value_infos, ctx->graph->value_infos);
  ctx->graph_inputs = g_hash_table_new (g_str_hash, g_str_equal);
  add_info_names (ctx->graph_inputs, ctx->graph->inputs);
  ctx->graph_outputs = g_hash_table_new (g_str_hash, g_str_equal);
  add_info_names (ctx->graph_outputs, ctx->graph->outputs);
  count_visits (ctx, ctx->graph->value_infos->len + ctx->graph->inputs->len + ctx->graph->outputs->len);
}

static void
drop_value_index (OwbPassContext *ctx)
{
  g_clear_pointer (&ctx->value_infos, g_hash_table_unref);
  g_clear_pointer (&ctx->graph_inputs, g_hash_table_unref);
  g_clear_pointer (&ctx->graph_outputs, g_hash_table_unref);
}

GPtrArray *
owb_pass_nodes (OwbPassContext *ctx)
{
  if (!ctx->removed || g_hash_table_size (ctx->removed) == 0)
    return ctx->graph->nodes;
  /* Removed nodes leave the array in one sweep, in order; removing each at once cost a search
   * and a move of the rest of the array. */
  GPtrArray *nodes = ctx->graph->nodes;
  guint kept = 0;
  for (guint i = 0; i < nodes->len; i++)
    {
      OwbNode *node = nodes->pdata[i];
      if (g_hash_table_contains (ctx->removed, node))
        owb_node_free (node);
      else
        nodes->pdata[kept++] = node;
    }
  for (guint i = kept; i < nodes->len; i++)
    nodes->pdata[i] = NULL; /* the array's free function takes NULL */
  count_visits (ctx, nodes->len);
  g_ptr_array_set_size (nodes, kept);
  g_hash_table_remove_all (ctx->removed);
  return nodes;
}

/* ---- worklists ---- */

static void
watch_push (OwbPassContext *ctx, OwbNode *node)
{
  if (ctx->queued && node && !g_hash_table_contains (ctx->queued, node))
    {
      g_hash_table_add (ctx->queued, node);
      g_queue_push_tail (ctx->worklist, node);
    }
}

static void
watch_readers (OwbPassContext *ctx, const char *name)
{
  GPtrArray *readers = ctx->queued && name && name[0] ? owb_pass_consumers (ctx, name) : NULL;
  for (guint i = 0; readers && i < readers->len; i++)
    watch_push (ctx, g_ptr_array_index (readers, i));
}

void
owb_pass_watch_begin (OwbPassContext *ctx)
{
  g_return_if_fail (ctx->queued == NULL);
  build_maps (ctx);
  ctx->queued = g_hash_table_new (NULL, NULL);
  ctx->worklist = g_queue_new ();
  GPtrArray *nodes = owb_pass_nodes (ctx);
  for (guint i = 0; i < nodes->len; i++)
    watch_push (ctx, g_ptr_array_index (nodes, i));
}

void
owb_pass_watch_push (OwbPassContext *ctx, OwbNode *node)
{
  watch_push (ctx, node);
}

OwbNode *
owb_pass_watch_next (OwbPassContext *ctx)
{
  OwbNode *node;
  /* A node removed while queued left the set; its queue entry is skipped. */
  while ((node = g_queue_pop_head (ctx->worklist)))
    if (g_hash_table_remove (ctx->queued, node))
      return node;
  return NULL;
}

void
owb_pass_watch_end (OwbPassContext *ctx)
{
  g_clear_pointer (&ctx->queued, g_hash_table_unref);
  if (ctx->worklist)
    g_queue_free (ctx->worklist);
  ctx->worklist = NULL;
}

static void
add_name (OwbPassContext *ctx, const char *name)
{
  if (ctx->names && name && name[0] && !g_hash_table_contains (ctx->names, name))
    g_hash_table_add (ctx->names, (gpointer) key_of (ctx, name));
}

static void
add_node_names (OwbPassContext *ctx, const OwbNode *node)
{
  add_name (ctx, node->name);
  for (int i = 0; i < node->n_inputs; i++)
    add_name (ctx, node->inputs[i]);
  for (int o = 0; o < node->n_outputs; o++)
    add_name (ctx, node->outputs[o]);
}

/* Names only accumulate: one that was removed stays taken, which costs nothing and keeps the set
 * valid across every edit. */
static void
build_names (OwbPassContext *ctx)
{
  if (ctx->names)
    return;
  ctx->names = g_hash_table_new (g_str_hash, g_str_equal);
  ctx->next_suffix = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *nodes = owb_pass_nodes (ctx);
  for (guint n = 0; n < nodes->len; n++)
    add_node_names (ctx, g_ptr_array_index (nodes, n));
  count_visits (ctx, nodes->len + ctx->graph->initializer_names->len);
  for (guint i = 0; i < ctx->graph->initializer_names->len; i++)
    add_name (ctx, g_ptr_array_index (ctx->graph->initializer_names, i));
  for (guint i = 0; i < ctx->graph->inputs->len; i++)
    add_name (ctx, ((OwbValueInfo *) g_ptr_array_index (ctx->graph->inputs, i))->name);
  for (guint i = 0; i < ctx->graph->outputs->len; i++)
    add_name (ctx, ((OwbValueInfo *) g_ptr_array_index (ctx->graph->outputs, i))->name);
}

void
_owb_pass_context_end_pass (OwbPassContext *ctx)
{
  owb_pass_watch_end (ctx);
  owb_pass_nodes (ctx); /* frees the nodes removed during the pass */
  drop_value_index (ctx);  /* inference adds and updates value infos */
  /* Names are handed out against the graph as each pass finds it (as they always were), so that
   * a name a pass frees is free again for the next one. */
  g_clear_pointer (&ctx->names, g_hash_table_unref);
  g_clear_pointer (&ctx->next_suffix, g_hash_table_unref);
}

void
_owb_pass_context_clear (OwbPassContext *ctx)
{
  _owb_pass_context_end_pass (ctx);
  g_clear_pointer (&ctx->removed, g_hash_table_unref);
  g_clear_pointer (&ctx->producer, g_hash_table_unref);
  g_clear_pointer (&ctx->consumers, g_hash_table_unref);
  g_clear_pointer (&ctx->outer_reads, g_hash_table_unref);
  if (ctx->strings)
    g_string_chunk_free (ctx->strings);
  ctx->strings = NULL;
  ctx->maps_valid = FALSE;
}

gboolean
owb_pass_swaps_last_two (const OwbNode *transpose, int rank)
{
  int n = 0;
  const int64_t *perm = owb_node_get_ints (transpose, "perm", &n);
  if (!perm)
    return rank == 2; /* no perm: all axes reversed */
  if (n != rank || n < 2)
    return FALSE;
  for (int i = 0; i < n - 2; i++)
    if (perm[i] != i)
      return FALSE;
  return perm[n - 2] == n - 1 && perm[n - 1] == n - 2;
}

gboolean
owb_pass_is_our_op (const OwbNode *node, const char *op_type)
{
  return node && strcmp (node->op_type, op_type) == 0 && node->domain
         && strcmp (node->domain, OWB_DOMAIN) == 0;
}

void
owb_pass_set_activation (OwbNode *node, const char *attr, const char *params_attr, const char *kind,
                          const float *params, int n_params)
{
  OwbAttribute *a = owb_node_add_attribute (node, attr, OWB_ATTR_STRING);
  a->s = g_strdup (kind);
  a->s_len = strlen (kind);
  if (n_params > 0)
    {
      a = owb_node_add_attribute (node, params_attr, OWB_ATTR_FLOATS);
      a->n = n_params;
      a->floats = g_memdup2 (params, sizeof (float) * n_params);
    }
}

gboolean
owb_pass_is_op (const OwbNode *node, const char *op_type)
{
  return node && strcmp (node->op_type, op_type) == 0
         && (!node->domain || !node->domain[0] || strcmp (node->domain, "ai.onnx") == 0);
}

int
owb_pass_opset (OwbPassContext *ctx)
{
  return (int) owb_model_get_opset (ctx->model, "");
}

OwbNode *
owb_pass_producer (OwbPassContext *ctx, const char *name)
{
  build_maps (ctx);
  return g_hash_table_lookup (ctx->producer, name);
}

GPtrArray *
owb_pass_consumers (OwbPassContext *ctx, const char *name)
{
  static GPtrArray *empty;
  build_maps (ctx);
  Readers *r = g_hash_table_lookup (ctx->consumers, name);
  if (r)
    {
      readers_compact (ctx, r);
      return r->nodes;
    }
  if (g_once_init_enter (&empty))
    g_once_init_leave (&empty, g_ptr_array_new ());
  return empty;
}

gboolean
owb_pass_is_graph_output (OwbPassContext *ctx, const char *name)
{
  build_value_index (ctx);
  return g_hash_table_contains (ctx->graph_outputs, name);
}

guint
owb_pass_n_uses (OwbPassContext *ctx, const char *name)
{
  build_maps (ctx);
  guint n = owb_pass_consumers (ctx, name)->len;
  if (owb_pass_is_graph_output (ctx, name))
    n++;
  if (g_hash_table_contains (ctx->outer_reads, name))
    n++;
  return n;
}

gboolean
_owb_pass_is_graph_input (OwbPassContext *ctx, const char *name)
{
  build_value_index (ctx);
  return g_hash_table_contains (ctx->graph_inputs, name);
}

const OwbTensor *
owb_pass_get_constant (OwbPassContext *ctx, const char *name)
{
  if (!name || !name[0])
    return NULL;
  OwbTensor *init = owb_graph_get_initializer (ctx->graph, name);
  if (init)
    /* An initializer listed as a graph input is a default the caller may override. */
    return _owb_pass_is_graph_input (ctx, name) ? NULL : init;
  OwbNode *producer = owb_pass_producer (ctx, name);
  if (producer && strcmp (producer->op_type, "Constant") == 0 && (!producer->domain || !producer->domain[0]))
    {
      const OwbAttribute *value = owb_node_get_attribute (producer, "value");
      if (value && value->type == OWB_ATTR_TENSOR)
        return value->t;
    }
  return NULL;
}

const char *
owb_pass_label (const OwbNode *node)
{
  return node->name && node->name[0] ? node->name : node->outputs[0];
}

void
owb_pass_remove_node (OwbPassContext *ctx, OwbNode *node)
{
  g_ptr_array_add (ctx->report->removed, g_strdup (owb_pass_label (node)));
  unindex_node (ctx, node);
  ctx->changed = TRUE;
  if (ctx->queued)
    g_hash_table_remove (ctx->queued, node);
  /* Freed when it leaves the array (owb_pass_nodes): until then a caller's pointer stays valid. */
  if (!ctx->removed)
    ctx->removed = g_hash_table_new (NULL, NULL);
  g_hash_table_add (ctx->removed, node);
}

void
owb_pass_add_node (OwbPassContext *ctx, OwbNode *node, const char *const *from, guint n_from)
{
  if (!node->name || !node->name[0])
    {
      g_free (node->name);
      node->name = owb_pass_unique_name (ctx, node->op_type);
    }
  node->opset = (int) owb_model_get_opset (ctx->model, node->domain);
  node->graph = ctx->graph;
  OwbOptimizeCreated *created = g_new0 (OwbOptimizeCreated, 1);
  created->node = g_strdup (node->name);
  created->op_type = g_strdup (node->op_type);
  created->domain = g_strdup (node->domain ? node->domain : "");
  created->from = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < n_from; i++)
    g_ptr_array_add (created->from, g_strdup (from[i]));
  g_ptr_array_add (ctx->report->created, created);
  owb_graph_add_node (ctx->graph, node);
  ctx->changed = TRUE;
  add_node_names (ctx, node);
  if (ctx->maps_valid)
    index_node (ctx, node);
  if (ctx->queued)
    {
      watch_push (ctx, node);
      for (int o = 0; o < node->n_outputs; o++)
        watch_readers (ctx, node->outputs[o]);
    }
}

void
owb_pass_set_input (OwbPassContext *ctx, OwbNode *node, int index, const char *name)
{
  g_return_if_fail (index >= 0 && index < node->n_inputs);
  char *copy = g_strdup (name);
  ctx->changed = TRUE;
  if (ctx->maps_valid && node->inputs[index][0])
    remove_consumer (ctx, node->inputs[index], node);
  g_free (node->inputs[index]);
  node->inputs[index] = copy;
  if (ctx->maps_valid && copy[0])
    add_consumer (ctx, copy, node);
  watch_push (ctx, node);
}

/* Every input slot of the readers of `from` reads `to` instead (the consumer lists move along). */
static void
redirect_readers (OwbPassContext *ctx, const char *from, const char *to, gboolean skip_identity_writing_to)
{
  Readers *list = g_hash_table_lookup (ctx->consumers, from);
  if (!list)
    return;
  readers_compact (ctx, list);
  GPtrArray *readers = g_ptr_array_ref (list->nodes);
  g_hash_table_remove (ctx->consumers, from);
  GPtrArray *kept = NULL;
  for (guint r = 0; r < readers->len; r++)
    {
      OwbNode *node = g_ptr_array_index (readers, r);
      if (skip_identity_writing_to && strcmp (node->op_type, "Identity") == 0 && node->n_outputs == 1
          && strcmp (node->outputs[0], from) == 0)
        {
          if (!kept)
            kept = g_ptr_array_new ();
          g_ptr_array_add (kept, node);
          continue;
        }
      /* A node reading `from` through several slots is listed once per slot: rename one slot each time. */
      for (int i = 0; i < node->n_inputs; i++)
        if (strcmp (node->inputs[i], from) == 0)
          {
            g_free (node->inputs[i]);
            node->inputs[i] = g_strdup (to);
            break;
          }
      add_consumer (ctx, to, node);
      watch_push (ctx, node);
    }
  if (kept)
    {
      Readers *k = g_new0 (Readers, 1);
      k->nodes = kept;
      g_hash_table_insert (ctx->consumers, (gpointer) key_of (ctx, from), k);
    }
  g_ptr_array_unref (readers);
}

static void
rename_value_info (OwbPassContext *ctx, const char *old_name, const char *new_name)
{
  GPtrArray *list = ctx->graph->value_infos;
  for (guint i = 0; i < list->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (list, i);
      if (strcmp (info->name, old_name) == 0)
        {
          g_free (info->name);
          info->name = g_strdup (new_name);
        }
    }
  drop_value_index (ctx); /* rare (once per graph output at most): rebuilt on the next query */
}

void
owb_pass_replace_uses (OwbPassContext *ctx, const char *old_name, const char *new_name)
{
  build_maps (ctx);
  ctx->changed = TRUE;
  char *old_copy = g_strdup (old_name), *new_copy = g_strdup (new_name);
  if (owb_pass_is_graph_output (ctx, old_copy))
    {
      /* The graph's output names are its interface: keep old_name, let the producer of new_name
       * write it directly. */
      OwbNode *producer = owb_pass_producer (ctx, new_copy);
      if (producer)
        {
          for (int o = 0; o < producer->n_outputs; o++)
            if (strcmp (producer->outputs[o], new_copy) == 0)
              {
                g_free (producer->outputs[o]);
                producer->outputs[o] = g_strdup (old_copy);
              }
          g_hash_table_remove (ctx->producer, new_copy);
          g_hash_table_insert (ctx->producer, (gpointer) key_of (ctx, old_copy), producer);
          redirect_readers (ctx, new_copy, old_copy, FALSE);
          watch_readers (ctx, old_copy);
          rename_value_info (ctx, new_copy, old_copy);
          g_free (old_copy);
          g_free (new_copy);
          return;
        }
      /* new_name is a graph input or initializer: an Identity keeps the output name. */
      OwbNode *id = owb_node_new ("Identity", "", NULL);
      owb_node_add_input (id, new_copy);
      owb_node_add_output (id, old_copy);
      owb_pass_add_node (ctx, id, NULL, 0);
    }
  redirect_readers (ctx, old_copy, new_copy, TRUE);
  g_free (old_copy);
  g_free (new_copy);
}

char *
owb_pass_unique_name (OwbPassContext *ctx, const char *base)
{
  build_names (ctx);
  guint k = GPOINTER_TO_UINT (g_hash_table_lookup (ctx->next_suffix, base));
  for (;; k++)
    {
      char *name = k ? g_strdup_printf ("%s_%u", base, k) : g_strdup (base);
      if (!g_hash_table_contains (ctx->names, name))
        {
          g_hash_table_insert (ctx->next_suffix, (gpointer) key_of (ctx, base), GUINT_TO_POINTER (k + 1));
          g_hash_table_add (ctx->names, (gpointer) key_of (ctx, name));
          return name;
        }
      g_free (name);
    }
}

const char *
owb_pass_add_initializer (OwbPassContext *ctx, const char *base, OwbTensor *tensor)
{
  char *name = owb_pass_unique_name (ctx, base);
  owb_graph_add_initializer (ctx->graph, name, tensor);
  ctx->changed = TRUE;
  guint i = GPOINTER_TO_UINT (g_hash_table_lookup (ctx->graph->initializer_index, name)) - 1;
  g_free (name);
  return g_ptr_array_index (ctx->graph->initializer_names, i);
}

void
owb_pass_near_miss (OwbPassContext *ctx, const OwbNode *node, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *msg = g_strdup_vprintf (format, args);
  va_end (args);
  char *who = owb_node_describe (node);
  g_ptr_array_add (ctx->report->near_misses, g_strdup_printf ("%s: %s", who, msg));
  g_free (who);
  g_free (msg);
}

static gboolean
initializer_unused (const char *name, gpointer user_data)
{
  OwbPassContext *ctx = user_data;
  return owb_pass_n_uses (ctx, name) == 0 && !_owb_pass_is_graph_input (ctx, name);
}

guint
owb_pass_prune_initializers (OwbPassContext *ctx)
{
  build_maps (ctx);
  count_visits (ctx, ctx->graph->initializer_names->len);
  guint n = _owb_graph_remove_initializers_if (ctx->graph, initializer_unused, ctx);
  ctx->report->n_removed_initializers += n;
  ctx->changed |= n > 0;
  return n;
}

const OwbValueType *
owb_pass_value_type (OwbPassContext *ctx, const char *name)
{
  /* Initializers have no value info: read them with owb_pass_get_constant. */
  if (!name)
    return NULL;
  build_value_index (ctx);
  const OwbValueInfo *info = g_hash_table_lookup (ctx->value_infos, name);
  return info && info->has_type ? &info->type : NULL;
}

char *
owb_pass_scoped_name (OwbPassContext *ctx, const char *like, const char *what)
{
  const char *slash = like ? strrchr (like, '/') : NULL;
  char *base = slash ? g_strdup_printf ("%.*s%s", (int) (slash - like + 1), like, what) : g_strdup (what);
  char *name = owb_pass_unique_name (ctx, base);
  g_free (base);
  return name;
}

const OwbTensor *
owb_pass_constant_through_identity (OwbPassContext *ctx, const char *name)
{
  for (int depth = 0; name && depth < 8; depth++)
    {
      const OwbTensor *t = owb_pass_get_constant (ctx, name);
      if (t)
        return t;
      OwbNode *producer = owb_pass_producer (ctx, name);
      if (!owb_pass_is_op (producer, "Identity"))
        return NULL;
      name = owb_node_get_input (producer, 0);
    }
  return NULL;
}

gboolean
owb_pass_is_channel_constant (const OwbTensor *s, int rank, int64_t m, gboolean *per_channel)
{
  *per_channel = FALSE;
  if (s->rank > rank)
    return FALSE;
  for (int i = 0; i < s->rank; i++)
    {
      int axis = rank - s->rank + i;
      if (s->dims[i] == 1)
        continue;
      if (axis != 1 || s->dims[i] != m)
        return FALSE;
      *per_channel = TRUE;
    }
  return TRUE;
}
