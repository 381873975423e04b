/* owb-scene-blocks.c: scopes of the scene's own making for large graphs whose node names carry
 * none ("conv_17", not "/layer1/conv"), so that they open collapsed like exported models do. */
#include "owb-graph-scene-private.h"

#include <math.h>
#include <string.h>

/* Design notes.
 * - Nodes are in topological order (ONNX requires it of files; sessions keep execution order).
 *   Between node i and node i + 1 the graph is cut; the cut's width is the number of values made
 *   at or before i and read after it (graph outputs are read at the end, graph inputs are made
 *   before the first node). Residual blocks, transformer layers and the stages of a CNN end
 *   where the cut is narrowest: only the block's output (and, say, an attention mask read by
 *   every layer) crosses it. So blocks end at cuts of the graph's least width (the last of a run
 *   of them: an Add's Relu stays in the Add's block), and a stretch with no such cut ends at its
 *   narrowest cut once it is max_block nodes long.
 * - Source nodes (fed by no other node or graph input: Constant, a weight's Identity) are not
 *   counted in cuts and join the block of their first reader, so that they are drawn beside it.
 * - Blocks are grouped a few at a time, and the groups again, until the top level has at most
 *   fan_out groups: "/blocks 1–361/blocks 1–19/block 7". Every group has at least two members,
 *   so none is merged away by the scene's scope rules. */

typedef struct {
  guint producer;   /* node index, or G_MAXUINT for a graph input */
  guint last_read;  /* node index of the last reader; 0 when none */
  gboolean read;
} Value;

static void
add_value (GHashTable *ids, GArray *values, const char *name, guint producer)
{
  if (name == NULL || name[0] == '\0' || g_hash_table_contains (ids, name))
    return;
  Value v = { producer, 0, FALSE };
  g_hash_table_insert (ids, (gpointer) name, GUINT_TO_POINTER (values->len + 1));
  g_array_append_val (values, v);
}

static Value *
lookup_value (GHashTable *ids, GArray *values, const char *name)
{
  guint id = GPOINTER_TO_UINT (g_hash_table_lookup (ids, name));
  return id ? &g_array_index (values, Value, id - 1) : NULL;
}

/* Appends the segment path of a group of blocks [first, last] (0-based) to `path`. */
static void
append_group (GString *path, guint first, guint last)
{
  g_string_append_c (path, '/');
  /* TRANSLATORS: a group of the graph's blocks by their numbers ("blocks 1–32"); no slashes */
  g_string_append_printf (path, _("blocks %u–%u"), first + 1, last + 1);
}

gboolean
_owb_scene_find_blocks (const OwbGraph *graph, const OwbSceneBlockOptions *options, OwbSceneBlocks *blocks)
{
  memset (blocks, 0, sizeof *blocks);
  guint n = graph->nodes->len;
  if (n < 2 || options->min_block < 1 || options->max_block < options->min_block || options->fan_out < 2)
    return FALSE;

  /* Values made by nodes and graph inputs; initializers are neither. */
  g_autoptr (GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GArray) values = g_array_new (FALSE, FALSE, sizeof (Value));
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      const OwbValueInfo *in = graph->inputs->pdata[i];
      if (owb_graph_get_initializer (graph, in->name) == NULL)
        add_value (ids, values, in->name, G_MAXUINT);
    }
  g_autofree gboolean *source = g_new0 (gboolean, n);
  for (guint i = 0; i < n; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      source[i] = TRUE;
      for (int k = 0; k < node->n_inputs && source[i]; k++)
        source[i] = lookup_value (ids, values, node->inputs[k]) == NULL;
      for (int k = 0; k < node->n_outputs; k++)
        add_value (ids, values, node->outputs[k], i);
    }
  for (guint i = 0; i < n; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      for (int k = 0; k < node->n_inputs; k++)
        {
          Value *v = lookup_value (ids, values, node->inputs[k]);
          if (v && (v->producer == G_MAXUINT || v->producer < i))
            {
              v->last_read = MAX (v->last_read, i);
              v->read = TRUE;
            }
        }
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    {
      Value *v = lookup_value (ids, values, ((OwbValueInfo *) graph->outputs->pdata[i])->name);
      if (v)
        {
          v->last_read = n;
          v->read = TRUE;
        }
    }

  /* The sequence that is cut: the nodes that are not sources, in order. */
  g_autofree guint *order = g_new (guint, n);
  g_autofree guint *place = g_new (guint, n + 1);  /* node -> its place in `order` (or the next one's) */
  guint m = 0;
  for (guint i = 0; i < n; i++)
    {
      place[i] = m;
      if (!source[i])
        order[m++] = i;
    }
  place[n] = m;
  if (m < 2)
    return FALSE;

  /* width[b]: values crossing the cut after order[b], by a difference array over the places. */
  g_autofree int *width = g_new0 (int, m + 1);
  for (guint v = 0; v < values->len; v++)
    {
      const Value *value = &g_array_index (values, Value, v);
      if (!value->read || (value->producer != G_MAXUINT && source[value->producer]))
        continue;
      guint from = value->producer == G_MAXUINT ? 0 : place[value->producer];
      guint to = place[MIN (value->last_read, n)];  /* the reader's place: cuts from .. to - 1 */
      if (to > from)
        {
          width[from]++;
          width[to]--;
        }
    }
  int least = G_MAXINT;
  for (guint b = 0; b < m; b++)
    {
      if (b > 0)
        width[b] += width[b - 1];
      if (b + 1 < m)
        least = MIN (least, width[b]);
    }

  /* Blocks of the sequence: [start, b] closes at a cut of the least width once it has min_block
   * nodes, else at its narrowest cut once it has max_block. */
  g_autoptr (GArray) ends = g_array_new (FALSE, FALSE, sizeof (guint));  /* last place of each block */
  guint start = 0;
  for (guint b = 0; b + 1 < m; b++)
    {
      guint size = b - start + 1;
      /* A run of narrowest cuts is a chain (an Add, then its Relu): cut after its last link, so
       * that a block's tail stays with it. */
      if (size >= options->min_block && width[b] == least && (b + 2 >= m || width[b + 1] != least))
        {
          g_array_append_val (ends, b);
          start = b + 1;
          continue;
        }
      if (size >= options->max_block)
        {
          guint best = start + options->min_block - 1;
          for (guint c = best + 1; c <= b; c++)
            if (width[c] < width[best])
              best = c;
          g_array_append_val (ends, best);
          start = best + 1;
          b = best;
        }
    }
  /* The rest is the last block; one too small joins the block before it. */
  if (ends->len > 0 && m - start < options->min_block)
    g_array_index (ends, guint, ends->len - 1) = m - 1;
  else
    {
      guint last = m - 1;
      g_array_append_val (ends, last);
    }
  guint n_blocks = ends->len;
  if (n_blocks < 2)
    return FALSE;

  /* Levels of groups: levels[0] is the blocks; each further level splits the one below into
   * runs of fan_out (a last run of one joins the run before). group_end[l][g] is the last member
   * (of level l - 1) of group g. */
  g_autoptr (GPtrArray) levels = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  /* As many levels as fan_out needs, then the same fan-out at each, so that no level is a
   * handful of huge groups: 6,000 blocks are 17 groups of 19 groups of 19 blocks. */
  guint depth = 1;
  for (double reach = options->fan_out; reach < n_blocks; reach *= options->fan_out)
    depth++;
  guint fan_out = MAX (2, (guint) ceil (pow (n_blocks, 1.0 / depth) - 1e-9));
  guint count = n_blocks;
  while (count > fan_out)
    {
      GArray *group_end = g_array_new (FALSE, FALSE, sizeof (guint));
      for (guint first = 0; first < count; first += fan_out)
        {
          guint last = MIN (first + fan_out, count) - 1;
          if (last == first && group_end->len > 0)
            g_array_index (group_end, guint, group_end->len - 1) = last;
          else
            g_array_append_val (group_end, last);
        }
      g_ptr_array_add (levels, group_end);
      count = group_end->len;
    }

  /* Paths, top level first. Blocks come in order, so the group of a block at each level only
   * moves forward: one cursor per level. */
  blocks->paths = g_ptr_array_new_with_free_func (g_free);
  g_autofree guint *group_of = g_new0 (guint, MAX (levels->len, 1));
  g_autoptr (GPtrArray) segments = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GString) path = g_string_new (NULL);
  for (guint block = 0; block < n_blocks; block++)
    {
      g_ptr_array_set_size (segments, 0);
      guint index = block;  /* the unit of the level below that holds the block */
      for (guint l = 0; l < levels->len; l++)
        {
          GArray *group_end = levels->pdata[l];
          while (g_array_index (group_end, guint, group_of[l]) < index)
            group_of[l]++;
          guint g = group_of[l];
          /* The group's members, then the blocks they hold through the levels below. */
          guint lo = g == 0 ? 0 : g_array_index (group_end, guint, g - 1) + 1;
          guint hi = g_array_index (group_end, guint, g);
          for (guint below = l; below-- > 0;)
            {
              GArray *ends_below = levels->pdata[below];
              lo = lo == 0 ? 0 : g_array_index (ends_below, guint, lo - 1) + 1;
              hi = g_array_index (ends_below, guint, hi);
            }
          GString *segment = g_string_new (NULL);
          append_group (segment, lo, hi);
          g_ptr_array_add (segments, g_string_free (segment, FALSE));
          index = g;
        }
      g_string_truncate (path, 0);
      for (guint s = segments->len; s-- > 0;)
        g_string_append (path, segments->pdata[s]);
      g_string_append_c (path, '/');
      /* TRANSLATORS: one block of a graph without scopes in its node names, by its number */
      g_string_append_printf (path, _("block %u"), block + 1);
      g_ptr_array_add (blocks->paths, g_strdup (path->str));
    }

  /* Each node's block; sources take their first reader's. */
  blocks->block_of_node = g_new0 (guint, n);
  guint block = 0;
  for (guint p = 0; p < m; p++)
    {
      while (g_array_index (ends, guint, block) < p)
        block++;
      blocks->block_of_node[order[p]] = block;
    }
  g_autofree guint *first_reader = g_new (guint, n);
  for (guint i = 0; i < n; i++)
    first_reader[i] = G_MAXUINT;
  g_autoptr (GHashTable) made_by = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < n; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      if (source[i])
        for (int k = 0; k < node->n_outputs; k++)
          if (node->outputs[k][0])
            g_hash_table_insert (made_by, node->outputs[k], GUINT_TO_POINTER (i + 1));
    }
  for (guint i = 0; i < n; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      for (int k = 0; k < node->n_inputs; k++)
        {
          guint s = GPOINTER_TO_UINT (g_hash_table_lookup (made_by, node->inputs[k]));
          if (s && first_reader[s - 1] == G_MAXUINT && !source[i])
            first_reader[s - 1] = i;
        }
    }
  for (guint i = 0; i < n; i++)
    if (source[i])
      blocks->block_of_node[i] = first_reader[i] != G_MAXUINT ? blocks->block_of_node[first_reader[i]]
                                                              : blocks->block_of_node[order[MIN (place[i], m - 1)]];
  blocks->n_blocks = n_blocks;
  return TRUE;
}

void
_owb_scene_blocks_clear (OwbSceneBlocks *blocks)
{
  g_clear_pointer (&blocks->paths, g_ptr_array_unref);
  g_clear_pointer (&blocks->block_of_node, g_free);
  blocks->n_blocks = 0;
}
