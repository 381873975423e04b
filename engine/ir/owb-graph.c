/* owb-graph.c: construction, copying and queries of the IR (models, graphs, nodes, attributes). */
#include <owb/owb-graph.h>
#include <owb/owb-error.h>

#include <malloc.h>
#include <string.h>

#include "onnx/owb-onnx-private.h"
#include "owb-ir-private.h"

/* Models */

static void
opset_import_clear (gpointer p)
{
  OwbOpsetImport *imp = p;
  g_free (imp->domain);
}

static void
string_pair_clear (gpointer p)
{
  OwbStringPair *pair = p;
  g_free (pair->key);
  g_free (pair->value);
}

OwbModel *
owb_model_new (void)
{
  OwbModel *model = g_new0 (OwbModel, 1);
  model->ref_count = 1;
  /* IR 10 is what opsets up to 21 require and what current exporters write. */
  model->ir_version = 10;
  model->opset_imports = g_array_new (FALSE, TRUE, sizeof (OwbOpsetImport));
  g_array_set_clear_func (model->opset_imports, opset_import_clear);
  model->metadata = g_array_new (FALSE, TRUE, sizeof (OwbStringPair));
  g_array_set_clear_func (model->metadata, string_pair_clear);
  model->mappings = g_ptr_array_new_with_free_func (_owb_mapped_file_free);
  return model;
}

OwbModel *
owb_model_ref (OwbModel *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  g_atomic_int_inc (&model->ref_count);
  return model;
}

void
owb_model_unref (OwbModel *model)
{
  if (model == NULL || !g_atomic_int_dec_and_test (&model->ref_count))
    return;
  g_free (model->producer_name);
  g_free (model->producer_version);
  g_free (model->domain);
  g_free (model->doc_string);
  g_array_unref (model->opset_imports);
  g_array_unref (model->metadata);
  /* The graph goes before the mappings: its tensors may point into them (they also hold their
   * own reference on the mapped file, so the order is only for tidiness). */
  owb_graph_free (model->graph);
  g_free (model->base_dir);
  g_ptr_array_unref (model->mappings);
  g_free (model);
}

static void set_graph_model (OwbGraph *graph, OwbModel *model);

/* A deep copy of the IR that shares the (immutable) initializer data. The copy is what an
 * optimizer may rewrite while the original stays on screen. */
OwbModel *
owb_model_dup (const OwbModel *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  OwbModel *copy = owb_model_new ();
  copy->ir_version = model->ir_version;
  copy->producer_name = g_strdup (model->producer_name);
  copy->producer_version = g_strdup (model->producer_version);
  copy->domain = g_strdup (model->domain);
  copy->model_version = model->model_version;
  copy->doc_string = g_strdup (model->doc_string);
  copy->base_dir = g_strdup (model->base_dir);
  for (guint i = 0; i < model->opset_imports->len; i++)
    {
      const OwbOpsetImport *imp = &g_array_index (model->opset_imports, OwbOpsetImport, i);
      owb_model_set_opset (copy, imp->domain, imp->version);
    }
  for (guint i = 0; i < model->metadata->len; i++)
    {
      const OwbStringPair *pair = &g_array_index (model->metadata, OwbStringPair, i);
      OwbStringPair dup = { g_strdup (pair->key), g_strdup (pair->value) };
      g_array_append_val (copy->metadata, dup);
    }
  if (model->graph)
    {
      copy->graph = owb_graph_dup (model->graph);
      set_graph_model (copy->graph, copy);
    }
  return copy;
}

static gboolean
same_domain (const char *a, const char *b)
{
  if (_owb_domain_is_default (a) || _owb_domain_is_default (b))
    return _owb_domain_is_default (a) && _owb_domain_is_default (b);
  return strcmp (a, b) == 0;
}

int64_t
owb_model_get_opset (const OwbModel *model, const char *domain)
{
  if (model == NULL)
    return -1;
  for (guint i = 0; i < model->opset_imports->len; i++)
    {
      const OwbOpsetImport *imp = &g_array_index (model->opset_imports, OwbOpsetImport, i);
      if (same_domain (imp->domain, domain))
        return imp->version;
    }
  return -1;
}

void
owb_model_set_opset (OwbModel *model, const char *domain, int64_t version)
{
  for (guint i = 0; i < model->opset_imports->len; i++)
    {
      OwbOpsetImport *imp = &g_array_index (model->opset_imports, OwbOpsetImport, i);
      if (same_domain (imp->domain, domain))
        {
          imp->version = version;
          return;
        }
    }
  OwbOpsetImport imp = { g_strdup (_owb_domain_is_default (domain) ? "" : domain), version };
  g_array_append_val (model->opset_imports, imp);
}

/* Graphs */

static void
decline_free (gpointer p)
{
  OwbDecline *decline = p;
  g_free (decline->provider);
  g_free (decline->reason);
  g_free (decline);
}

OwbGraph *
owb_graph_new (const char *name)
{
  OwbGraph *graph = g_new0 (OwbGraph, 1);
  graph->name = g_strdup (name ? name : "");
  graph->nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_node_free);
  graph->inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_value_info_free);
  graph->outputs = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_value_info_free);
  graph->value_infos = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_value_info_free);
  graph->initializers = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  graph->initializer_names = g_ptr_array_new_with_free_func (g_free);
  /* Keys are borrowed from initializer_names. */
  graph->initializer_index = g_hash_table_new (g_str_hash, g_str_equal);
  return graph;
}

void
owb_graph_free (OwbGraph *graph)
{
  if (graph == NULL)
    return;
  g_free (graph->name);
  g_free (graph->doc_string);
  g_ptr_array_unref (graph->nodes);
  g_ptr_array_unref (graph->inputs);
  g_ptr_array_unref (graph->outputs);
  g_ptr_array_unref (graph->value_infos);
  g_hash_table_unref (graph->initializer_index);
  g_ptr_array_unref (graph->initializers);
  g_ptr_array_unref (graph->initializer_names);
  g_free (graph);
}

static void
set_graph_model (OwbGraph *graph, OwbModel *model)
{
  graph->model = model;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      OwbNode *node = g_ptr_array_index (graph->nodes, i);
      for (int a = 0; a < node->n_attributes; a++)
        {
          OwbAttribute *attr = &node->attributes[a];
          if (attr->g)
            set_graph_model (attr->g, model);
          for (int k = 0; attr->graphs && k < attr->n; k++)
            if (attr->graphs[k])
              set_graph_model (attr->graphs[k], model);
        }
    }
}

/* Subgraphs of a node see `graph` as their outer scope. */
static void
attach_subgraphs (OwbNode *node, OwbGraph *graph)
{
  for (int a = 0; a < node->n_attributes; a++)
    {
      OwbAttribute *attr = &node->attributes[a];
      if (attr->g)
        {
          attr->g->parent = graph;
          set_graph_model (attr->g, graph->model);
        }
      for (int k = 0; attr->graphs && k < attr->n; k++)
        if (attr->graphs[k])
          {
            attr->graphs[k]->parent = graph;
            set_graph_model (attr->graphs[k], graph->model);
          }
    }
}

static OwbValueInfo *
value_info_dup (const OwbValueInfo *src)
{
  OwbValueInfo *info = owb_value_info_new (src->name, src->has_type ? &src->type : NULL);
  info->doc_string = g_strdup (src->doc_string);
  return info;
}

static void
value_infos_copy (GPtrArray *dest, const GPtrArray *src)
{
  for (guint i = 0; i < src->len; i++)
    g_ptr_array_add (dest, value_info_dup (g_ptr_array_index (src, i)));
}

/* Initializer tensors are shared with the copy (they are reference-counted and treated as
 * immutable once in a graph); everything else is copied. */
OwbGraph *
owb_graph_dup (const OwbGraph *graph)
{
  if (graph == NULL)
    return NULL;
  OwbGraph *copy = owb_graph_new (graph->name);
  copy->doc_string = g_strdup (graph->doc_string);
  copy->parent = graph->parent;
  copy->model = graph->model;
  for (guint i = 0; i < graph->nodes->len; i++)
    owb_graph_add_node (copy, owb_node_dup (g_ptr_array_index (graph->nodes, i)));
  value_infos_copy (copy->inputs, graph->inputs);
  value_infos_copy (copy->outputs, graph->outputs);
  value_infos_copy (copy->value_infos, graph->value_infos);
  for (guint i = 0; i < graph->initializers->len; i++)
    owb_graph_add_initializer (copy, g_ptr_array_index (graph->initializer_names, i),
                               owb_tensor_ref (g_ptr_array_index (graph->initializers, i)));
  return copy;
}

void
owb_graph_add_node (OwbGraph *graph, OwbNode *node)
{
  node->graph = graph;
  attach_subgraphs (node, graph);
  g_ptr_array_add (graph->nodes, node);
}

void
owb_graph_add_initializer (OwbGraph *graph, const char *name, OwbTensor *tensor)
{
  gpointer found = g_hash_table_lookup (graph->initializer_index, name);
  if (found)
    {
      guint index = GPOINTER_TO_UINT (found) - 1;
      OwbTensor *old = g_ptr_array_index (graph->initializers, index);
      g_ptr_array_index (graph->initializers, index) = tensor;
      owb_tensor_unref (old);
      return;
    }
  char *key = g_strdup (name);
  g_ptr_array_add (graph->initializers, tensor);
  g_ptr_array_add (graph->initializer_names, key);
  g_hash_table_insert (graph->initializer_index, key, GUINT_TO_POINTER (graph->initializers->len));
}

OwbTensor *
owb_graph_get_initializer (const OwbGraph *graph, const char *name)
{
  if (graph == NULL || name == NULL)
    return NULL;
  gpointer found = g_hash_table_lookup (graph->initializer_index, name);
  return found ? g_ptr_array_index (graph->initializers, GPOINTER_TO_UINT (found) - 1) : NULL;
}

gboolean
owb_graph_remove_initializer (OwbGraph *graph, const char *name)
{
  gpointer found = g_hash_table_lookup (graph->initializer_index, name);
  if (!found)
    return FALSE;
  guint index = GPOINTER_TO_UINT (found) - 1;
  g_hash_table_remove (graph->initializer_index, name);
  g_ptr_array_remove_index (graph->initializers, index);
  g_ptr_array_remove_index (graph->initializer_names, index);
  for (guint i = index; i < graph->initializer_names->len; i++)
    g_hash_table_insert (graph->initializer_index, g_ptr_array_index (graph->initializer_names, i),
                         GUINT_TO_POINTER (i + 1));
  return TRUE;
}

guint
_owb_graph_remove_initializers_if (OwbGraph *graph, gboolean (*unused) (const char *name, gpointer user_data),
                                   gpointer user_data)
{
  guint n = graph->initializers->len;
  gboolean *drop = g_new0 (gboolean, MAX (n, 1));
  guint n_dropped = 0;
  for (guint i = 0; i < n; i++)
    n_dropped += drop[i] = unused (g_ptr_array_index (graph->initializer_names, i), user_data);
  if (n_dropped > 0)
    {
      /* The index's keys are the names themselves: empty it before they are freed. */
      g_hash_table_remove_all (graph->initializer_index);
      guint kept = 0;
      for (guint i = 0; i < n; i++)
        {
          OwbTensor *t = graph->initializers->pdata[i];
          char *name = graph->initializer_names->pdata[i];
          if (drop[i])
            {
              owb_tensor_unref (t);
              g_free (name);
              continue;
            }
          graph->initializers->pdata[kept] = t;
          graph->initializer_names->pdata[kept] = name;
          g_hash_table_insert (graph->initializer_index, name, GUINT_TO_POINTER (kept + 1));
          kept++;
        }
      for (guint i = kept; i < n; i++)
        graph->initializers->pdata[i] = graph->initializer_names->pdata[i] = NULL;
      g_ptr_array_set_size (graph->initializers, kept);
      g_ptr_array_set_size (graph->initializer_names, kept);
    }
  g_free (drop);
  return n_dropped;
}

OwbValueInfo *
owb_value_info_new (const char *name, const OwbValueType *type)
{
  OwbValueInfo *info = g_new0 (OwbValueInfo, 1);
  info->name = g_strdup (name ? name : "");
  if (type)
    {
      info->type = *type;
      info->has_type = TRUE;
    }
  else
    owb_value_type_init_unknown (&info->type);
  return info;
}

void
owb_value_info_free (OwbValueInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->name);
  g_free (info->doc_string);
  g_free (info);
}

static OwbValueInfo *
find_in (const GPtrArray *infos, const char *name)
{
  for (guint i = 0; i < infos->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (infos, i);
      if (strcmp (info->name, name) == 0)
        return info;
    }
  return NULL;
}

OwbValueInfo *
owb_graph_find_value_info (const OwbGraph *graph, const char *name)
{
  OwbValueInfo *info;
  if (graph == NULL || name == NULL)
    return NULL;
  if ((info = find_in (graph->inputs, name)) || (info = find_in (graph->outputs, name)))
    return info;
  return find_in (graph->value_infos, name);
}

OwbNode *
owb_graph_find_node (const OwbGraph *graph, const char *name)
{
  for (guint i = 0; graph && name && i < graph->nodes->len; i++)
    {
      OwbNode *node = g_ptr_array_index (graph->nodes, i);
      if (g_strcmp0 (node->name, name) == 0)
        return node;
    }
  return NULL;
}

/* Adds the graph's nodes and its bodies' to counts (key -> count); returns the nodes in bodies. */
static guint
count_ops (const OwbGraph *graph, GHashTable *counts)
{
  guint nested = 0;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      char *key = node->domain && node->domain[0] && strcmp (node->domain, "ai.onnx") != 0
                    ? g_strconcat (node->domain, ".", node->op_type, NULL)
                    : g_strdup (node->op_type);
      gpointer known, n;
      if (g_hash_table_lookup_extended (counts, key, &known, &n))
        {
          g_free (key);
          key = known;
        }
      else
        n = GUINT_TO_POINTER (0);
      g_hash_table_insert (counts, key, GUINT_TO_POINTER (GPOINTER_TO_UINT (n) + 1));
      for (int a = 0; a < node->n_attributes; a++)
        {
          const OwbAttribute *attr = &node->attributes[a];
          if (attr->type == OWB_ATTR_GRAPH && attr->g)
            nested += attr->g->nodes->len + count_ops (attr->g, counts);
          else if (attr->type == OWB_ATTR_GRAPHS)
            for (int g = 0; g < attr->n; g++)
              if (attr->graphs[g])
                nested += attr->graphs[g]->nodes->len + count_ops (attr->graphs[g], counts);
        }
    }
  return nested;
}

static gint
compare_op_counts (gconstpointer a, gconstpointer b)
{
  const OwbOpCount *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return strcmp (x->op, y->op);
}

static void
op_count_clear (gpointer data)
{
  g_free (((OwbOpCount *) data)->op);
}

GArray *
owb_graph_count_ops (const OwbGraph *graph, guint *n_nested)
{
  g_return_val_if_fail (graph != NULL, NULL);
  GHashTable *counts = g_hash_table_new (g_str_hash, g_str_equal);
  guint nested = count_ops (graph, counts);
  GArray *list = g_array_sized_new (FALSE, FALSE, sizeof (OwbOpCount), g_hash_table_size (counts));
  g_array_set_clear_func (list, op_count_clear);
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init (&iter, counts);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      OwbOpCount c = { key, GPOINTER_TO_UINT (value) }; /* the list takes the key */
      g_array_append_val (list, c);
    }
  g_hash_table_unref (counts);
  g_array_sort (list, compare_op_counts);
  if (n_nested)
    *n_nested = nested;
  return list;
}

GPtrArray *
owb_graph_dup_feed_inputs (const OwbGraph *graph)
{
  GPtrArray *feeds = g_ptr_array_new ();
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      OwbValueInfo *info = g_ptr_array_index (graph->inputs, i);
      if (!g_hash_table_contains (graph->initializer_index, info->name))
        g_ptr_array_add (feeds, info);
    }
  return feeds;
}

/* Nodes */

OwbNode *
owb_node_new (const char *op_type, const char *domain, const char *name)
{
  OwbNode *node = g_new0 (OwbNode, 1);
  node->op_type = g_strdup (op_type ? op_type : "");
  node->domain = g_strdup (_owb_domain_is_default (domain) ? "" : domain);
  node->name = g_strdup (name ? name : "");
  node->declines = g_ptr_array_new_with_free_func (decline_free);
  return node;
}

void
owb_node_free (OwbNode *node)
{
  if (node == NULL)
    return;
  g_free (node->name);
  g_free (node->op_type);
  g_free (node->domain);
  g_free (node->doc_string);
  for (int i = 0; i < node->n_inputs; i++)
    g_free (node->inputs[i]);
  g_free (node->inputs);
  for (int i = 0; i < node->n_outputs; i++)
    g_free (node->outputs[i]);
  g_free (node->outputs);
  for (int i = 0; i < node->n_attributes; i++)
    owb_attribute_clear (&node->attributes[i]);
  g_free (node->attributes);
  g_free (node->provider);
  if (node->declines)
    g_ptr_array_unref (node->declines);
  g_free (node);
}

static char **
names_dup (char **names, int n)
{
  char **copy = g_new (char *, n + 1);
  for (int i = 0; i < n; i++)
    copy[i] = g_strdup (names[i]);
  copy[n] = NULL;
  return copy;
}

/* The copy belongs to no graph until added to one; claims are copied too. */
OwbNode *
owb_node_dup (const OwbNode *node)
{
  if (node == NULL)
    return NULL;
  OwbNode *copy = owb_node_new (node->op_type, node->domain, node->name);
  copy->doc_string = g_strdup (node->doc_string);
  copy->n_inputs = node->n_inputs;
  copy->inputs = names_dup (node->inputs, node->n_inputs);
  copy->n_outputs = node->n_outputs;
  copy->outputs = names_dup (node->outputs, node->n_outputs);
  copy->n_attributes = node->n_attributes;
  copy->attributes = g_new0 (OwbAttribute, MAX (node->n_attributes, 1));
  for (int i = 0; i < node->n_attributes; i++)
    owb_attribute_copy (&copy->attributes[i], &node->attributes[i]);
  copy->opset = node->opset;
  copy->provider = g_strdup (node->provider);
  for (guint i = 0; node->declines && i < node->declines->len; i++)
    {
      OwbDecline *d = g_ptr_array_index (node->declines, i);
      owb_node_add_decline (copy, d->provider, d->reason);
    }
  return copy;
}

/* Arrays of names stay NULL-terminated so they can also be walked without the count. */
static void
names_append (char ***names, int *n, const char *name)
{
  /* Grow geometrically (the allocator's usable size is the capacity): a node built input by
   * input must not cost quadratic copying. g_malloc is malloc in this GLib. */
  if (!*names || malloc_usable_size (*names) < (gsize) (*n + 2) * sizeof (char *))
    *names = g_renew (char *, *names, 2 * (gsize) *n + 4);
  (*names)[*n] = g_strdup (name ? name : "");
  (*names)[*n + 1] = NULL;
  (*n)++;
}

void
owb_node_add_input (OwbNode *node, const char *name)
{
  names_append (&node->inputs, &node->n_inputs, name);
}

void
owb_node_set_input (OwbNode *node, int i, const char *name)
{
  g_return_if_fail (node != NULL && i >= 0);
  while (node->n_inputs <= i)
    owb_node_add_input (node, "");
  g_free (node->inputs[i]);
  node->inputs[i] = g_strdup (name);
}

void
owb_node_add_output (OwbNode *node, const char *name)
{
  names_append (&node->outputs, &node->n_outputs, name);
}

/* An attribute of the same name is replaced. The pointer returned stays valid until the next
 * attribute is added to the node. */
OwbAttribute *
owb_node_add_attribute (OwbNode *node, const char *name, OwbAttributeType type)
{
  OwbAttribute *attr = (OwbAttribute *) owb_node_get_attribute (node, name);
  if (attr)
    owb_attribute_clear (attr);
  else
    {
      node->attributes = g_renew (OwbAttribute, node->attributes, node->n_attributes + 1);
      attr = &node->attributes[node->n_attributes++];
    }
  memset (attr, 0, sizeof *attr);
  attr->name = g_strdup (name ? name : "");
  attr->type = type;
  owb_value_type_init_unknown (&attr->tp);
  return attr;
}

const OwbAttribute *
owb_node_get_attribute (const OwbNode *node, const char *name)
{
  if (node == NULL || name == NULL)
    return NULL;
  for (int i = 0; i < node->n_attributes; i++)
    if (node->attributes[i].name && strcmp (node->attributes[i].name, name) == 0)
      return &node->attributes[i];
  return NULL;
}

int64_t
owb_node_get_int (const OwbNode *node, const char *name, int64_t default_value)
{
  const OwbAttribute *attr = owb_node_get_attribute (node, name);
  return attr && attr->type == OWB_ATTR_INT ? attr->i : default_value;
}

gboolean
owb_node_get_int_in_range (const OwbNode *node, const char *name, int64_t default_value, int64_t min, int64_t max,
                           int64_t *value, GError **error)
{
  int64_t v = owb_node_get_int (node, name, default_value);
  if (v < min || v > max)
    {
      char *who = owb_node_describe (node);
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_MODEL,
                   "%s: attribute '%s' = %" G_GINT64_FORMAT " is out of range (%" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                   ")", who, name, v, min, max);
      g_free (who);
      return FALSE;
    }
  *value = v;
  return TRUE;
}

gboolean
owb_node_get_int32 (const OwbNode *node, const char *name, int default_value, int min, int max, int *value,
                    GError **error)
{
  int64_t v;
  if (!owb_node_get_int_in_range (node, name, default_value, min, max, &v, error))
    return FALSE;
  *value = (int) v;
  return TRUE;
}

float
owb_node_get_float (const OwbNode *node, const char *name, float default_value)
{
  const OwbAttribute *attr = owb_node_get_attribute (node, name);
  return attr && attr->type == OWB_ATTR_FLOAT ? attr->f : default_value;
}

const char *
owb_node_get_string (const OwbNode *node, const char *name, const char *default_value)
{
  const OwbAttribute *attr = owb_node_get_attribute (node, name);
  return attr && attr->type == OWB_ATTR_STRING && attr->s ? attr->s : default_value;
}

const int64_t *
owb_node_get_ints (const OwbNode *node, const char *name, int *n)
{
  const OwbAttribute *attr = owb_node_get_attribute (node, name);
  if (attr && attr->type == OWB_ATTR_INTS)
    {
      *n = attr->n;
      return attr->ints;
    }
  *n = 0;
  return NULL;
}

const float *
owb_node_get_floats (const OwbNode *node, const char *name, int *n)
{
  const OwbAttribute *attr = owb_node_get_attribute (node, name);
  if (attr && attr->type == OWB_ATTR_FLOATS)
    {
      *n = attr->n;
      return attr->floats;
    }
  *n = 0;
  return NULL;
}

const OwbGraph *
owb_node_get_graph (const OwbNode *node, const char *name)
{
  const OwbAttribute *attr = owb_node_get_attribute (node, name);
  return attr && attr->type == OWB_ATTR_GRAPH ? attr->g : NULL;
}

const char *
owb_node_get_input (const OwbNode *node, int i)
{
  if (node == NULL || i < 0 || i >= node->n_inputs || node->inputs[i][0] == '\0')
    return NULL;
  return node->inputs[i];
}

const char *
owb_node_get_output (const OwbNode *node, int i)
{
  if (node == NULL || i < 0 || i >= node->n_outputs || node->outputs[i][0] == '\0')
    return NULL;
  return node->outputs[i];
}

void
_owb_node_set_error_valist (const OwbNode *node, GError **error, int code, const char *format, va_list args)
{
  char *msg = g_strdup_vprintf (format, args);
  char *who = owb_node_describe (node);
  g_set_error (error, OWB_ERROR, code, "%s: %s", who, msg);
  g_free (who);
  g_free (msg);
}

/* "node 'conv1' (Conv, opset 13)"; unnamed nodes are named after their first output. */
char *
owb_node_describe (const OwbNode *node)
{
  if (node == NULL)
    return g_strdup ("node (null)");
  GString *s = g_string_new ("node ");
  if (node->name && node->name[0])
    g_string_append_printf (s, "'%s'", node->name);
  else if (node->n_outputs > 0 && node->outputs[0][0])
    g_string_append_printf (s, "with output '%s'", node->outputs[0]);
  else
    g_string_append (s, "(unnamed)");
  g_string_append (s, " (");
  if (node->domain && node->domain[0])
    g_string_append_printf (s, "%s.", node->domain);
  g_string_append (s, node->op_type ? node->op_type : "?");
  if (node->opset > 0)
    g_string_append_printf (s, ", opset %d", node->opset);
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

void
owb_node_clear_claims (OwbNode *node)
{
  g_clear_pointer (&node->provider, g_free);
  if (node->declines)
    g_ptr_array_set_size (node->declines, 0);
}

void
owb_node_add_decline (OwbNode *node, const char *provider, const char *reason)
{
  OwbDecline *decline = g_new0 (OwbDecline, 1);
  decline->provider = g_strdup (provider);
  decline->reason = g_strdup (reason);
  if (node->declines == NULL)
    node->declines = g_ptr_array_new_with_free_func (decline_free);
  g_ptr_array_add (node->declines, decline);
}

/* Attributes */

void
owb_attribute_clear (OwbAttribute *attr)
{
  if (attr == NULL)
    return;
  g_free (attr->name);
  g_free (attr->ref_attr_name);
  g_free (attr->doc_string);
  g_free (attr->s);
  if (attr->t)
    owb_tensor_unref (attr->t);
  owb_graph_free (attr->g);
  g_free (attr->floats);
  g_free (attr->ints);
  if (attr->strings)
    {
      for (int i = 0; i < attr->n; i++)
        g_free (attr->strings[i]);
      g_free (attr->strings);
    }
  if (attr->tensors)
    {
      for (int i = 0; i < attr->n; i++)
        if (attr->tensors[i])
          owb_tensor_unref (attr->tensors[i]);
      g_free (attr->tensors);
    }
  if (attr->graphs)
    {
      for (int i = 0; i < attr->n; i++)
        owb_graph_free (attr->graphs[i]);
      g_free (attr->graphs);
    }
  memset (attr, 0, sizeof *attr);
  owb_value_type_init_unknown (&attr->tp);
}

/* dest is overwritten (not cleared first). Tensors are shared, graphs are copied; copied
 * subgraphs keep the parent of the source until their node is added to a graph. */
void
owb_attribute_copy (OwbAttribute *dest, const OwbAttribute *src)
{
  *dest = *src;
  dest->name = g_strdup (src->name);
  dest->ref_attr_name = g_strdup (src->ref_attr_name);
  dest->doc_string = g_strdup (src->doc_string);
  if (src->s)
    {
      dest->s = g_malloc (src->s_len + 1);
      memcpy (dest->s, src->s, src->s_len);
      dest->s[src->s_len] = '\0';
    }
  dest->t = src->t ? owb_tensor_ref (src->t) : NULL;
  dest->g = owb_graph_dup (src->g);
  dest->floats = src->floats ? g_memdup2 (src->floats, sizeof (float) * MAX (src->n, 1)) : NULL;
  dest->ints = src->ints ? g_memdup2 (src->ints, sizeof (int64_t) * MAX (src->n, 1)) : NULL;
  if (src->strings)
    {
      dest->strings = g_new0 (char *, src->n + 1);
      for (int i = 0; i < src->n; i++)
        dest->strings[i] = g_strdup (src->strings[i]);
    }
  if (src->tensors)
    {
      dest->tensors = g_new0 (OwbTensor *, src->n + 1);
      for (int i = 0; i < src->n; i++)
        dest->tensors[i] = src->tensors[i] ? owb_tensor_ref (src->tensors[i]) : NULL;
    }
  if (src->graphs)
    {
      dest->graphs = g_new0 (OwbGraph *, src->n + 1);
      for (int i = 0; i < src->n; i++)
        dest->graphs[i] = owb_graph_dup (src->graphs[i]);
    }
}
