/* owb-graph-scene.c: an OwbGraph as boxes grouped by name scope, each expanded scope laid out on
 * its own (and cached) so that expanding one group re-lays out only it and the levels above. */
#include "owb-graph-scene-private.h"

#include <math.h>
#include <string.h>

/* Design notes.
 * - Leaves are the boxes that never contain others: INPUT boxes, op nodes, OUTPUT boxes. Graph
 *   inputs that are initializers are not boxes. Values a body (If/Loop/Scan) reads from the
 *   graphs around it are INPUT boxes of the body's scene after its own inputs, and in the outer
 *   scene edges into the node that owns the body. In a compact scene, Constants and ops of
 *   initializers only have no box (fold_constants); their readers show them as weights.
 * - Scopes come from node names ("/a/b/MatMul" is in "/a/b"). A scope with a single op is
 *   dissolved into its parent; a scope whose only member is one subscope merges with it (the
 *   group is "/a/b", titled "a/b"; "/a" still finds it; a dissolved scope finds nothing).
 *   An op without a scope in its name is drawn at the top level, never inside a group's frame
 *   (Constants and weight Identities that used to join their readers' group looked like members
 *   of it; compact scenes leave them out instead). An op's `scope` is the group it is drawn in.
 * - Graphs of more than collapse_threshold ops open with every group collapsed, except that
 *   while the top level holds a single group, that group opens (the first view shows its
 *   children rather than one box).
 * - Each scope (and the root) has a level: its direct leaves and child scopes as items, and the
 *   edges between items that leaf edges induce at that level. Levels never change; only the sizes
 *   of their items do (a child scope is small when collapsed, sized by its own layout when
 *   expanded), so a scope's cached layout stays valid until a scope inside it changes.
 * - Edges that cross a group's frame are routed through ports: the layout of a group's content
 *   has an entry node above everything (edges to the members fed from outside) and an exit node
 *   below everything (edges from the members that feed outside). An edge's route is the chain of
 *   these inner routes and the route between siblings at the common level, so it bends around
 *   boxes at every level instead of crossing them. */

typedef struct _Scope Scope;

/* Blocks for graphs without scopes (owb-scene-blocks.c): a residual block or a transformer layer
 * is 7 to 30 nodes; a stretch without a narrow cut is cut after 48. */
#define BLOCK_MIN_NODES 4
#define BLOCK_MAX_NODES 48
#define BLOCK_FAN_OUT 32

typedef struct {
  OwbSceneNodeKind kind; /* OP, INPUT or OUTPUT */
  const OwbNode *node;
  char *value;
  char *title;
  char *subtitle;
  OwbSceneLine *lines;
  guint n_lines;
  double width, height;
  Scope *scope;          /* the group it is drawn in; the root at top level */
  guint local;           /* its item index in scope's level */
  int visible;           /* scene node showing it: its own box or a collapsed group's */
  gboolean outer;        /* INPUT: a value a body reads from the graphs around it */
  GPtrArray *body_reads; /* OP with subgraphs: what its bodies read from outside them, or NULL */
} Leaf;

typedef struct {
  Scope *scope;          /* a child scope, or NULL for a leaf */
  guint leaf;
} Item;

struct _Scope {
  char *path;            /* "" for the root */
  char *title;
  char *subtitle;
  Scope *parent;
  GPtrArray *children;   /* of Scope *, in order of first appearance */
  GArray *leaves;        /* of guint: leaves directly inside */
  guint n_ops;           /* at any depth */
  guint depth;           /* 0 for the root */
  gboolean expanded;
  gboolean in_parent;
  guint local;           /* item index in the parent's level */
  GArray *items;         /* of Item */
  GArray *pairs;         /* of guint64 (from << 32 | to), sorted and unique: the level's edges */
  GArray *in_items;      /* of guint, sorted and unique: items with an edge from outside the scope */
  GArray *out_items;     /* of guint, sorted and unique: items with an edge to outside the scope */
  OwbLayout *layout;     /* cached; NULL when a scope inside changed since */
  double inner_width, inner_height;
  double title_width;
  double collapsed_width, collapsed_height;
  double origin_x, origin_y; /* of the level's content, when visible and expanded */
  int visible;
};

typedef struct {
  guint from, to, value;
} LeafEdge;

typedef struct {
  Scope *container;      /* the level holding the box */
  guint local;           /* its item index there */
  Scope *group;          /* GROUP nodes: the scope */
  int first_child;       /* expanded groups: tree of expanded groups, for the spatial query */
  int next_sibling;
} NodeRef;

typedef struct {
  guint from, to, value, order;
} VisibleEdge;

struct _OwbGraphScene {
  const OwbGraph *graph;
  OwbSceneStyle style;

  Leaf *leaves;
  guint n_leaves;
  guint n_ops;
  GHashTable *leaf_of_node;   /* const OwbNode * -> leaf index + 1 */
  Scope *root;
  GPtrArray *all_scopes;      /* owned, including dissolved and merged ones */
  GHashTable *scope_by_path;  /* owned path -> Scope * */
  GPtrArray *value_names;     /* borrowed from the graph, by value id */
  GPtrArray *value_labels;    /* owned char * or NULL, by value id */
  GArray *leaf_edges;         /* of LeafEdge */
  guint n_layouts;            /* levels laid out, for tests */
  guint n_blocks;             /* blocks of owb-scene-blocks.c the scopes are made of; 0: from names */

  GArray *nodes;              /* of OwbSceneNode; strings borrowed from leaves and scopes */
  GArray *refs;               /* of NodeRef, parallel to nodes */
  GArray *edges;              /* of OwbSceneEdge; points into `points` */
  GArray *points;             /* of double */
  GArray *group_roots;        /* of int: expanded groups at top level */
  double width, height;

  /* Uniform grid: cell c holds items cell_items[cell_start[c] .. cell_start[c + 1]). */
  double cell;
  guint cols, rows;
  guint *node_cell_start, *node_cell_items;
  guint *edge_cell_start, *edge_cell_items;
};

void
owb_scene_style_init (OwbSceneStyle *style)
{
  memset (style, 0, sizeof *style);
  style->measure = NULL;
  style->title_height = 20;
  style->line_height = 16;
  style->padding = 8;
  style->min_width = 96;
  style->max_lines = 6;
  style->collapse_threshold = 400;
}

const OwbSceneStyle *
_owb_graph_scene_get_style (const OwbGraphScene *scene)
{
  return &scene->style;
}

guint
_owb_graph_scene_get_n_layouts (const OwbGraphScene *scene)
{
  return scene->n_layouts;
}

guint
owb_graph_scene_get_n_blocks (const OwbGraphScene *scene)
{
  return scene->n_blocks;
}

/* Scopes */

static Scope *
scope_new (OwbGraphScene *scene, const char *path, const char *title, Scope *parent)
{
  Scope *s = g_new0 (Scope, 1);
  s->path = g_strdup (path);
  s->title = g_strdup (title);
  s->parent = parent;
  s->children = g_ptr_array_new ();
  s->leaves = g_array_new (FALSE, FALSE, sizeof (guint));
  s->items = g_array_new (FALSE, FALSE, sizeof (Item));
  s->pairs = g_array_new (FALSE, FALSE, sizeof (guint64));
  s->in_items = g_array_new (FALSE, FALSE, sizeof (guint));
  s->out_items = g_array_new (FALSE, FALSE, sizeof (guint));
  s->visible = -1;
  s->depth = parent ? parent->depth + 1 : 0;
  if (parent)
    g_ptr_array_add (parent->children, s);
  g_ptr_array_add (scene->all_scopes, s);
  return s;
}

static void
scope_free (Scope *s)
{
  g_free (s->path);
  g_free (s->title);
  g_free (s->subtitle);
  g_ptr_array_unref (s->children);
  g_array_unref (s->leaves);
  g_array_unref (s->items);
  g_array_unref (s->pairs);
  g_array_unref (s->in_items);
  g_array_unref (s->out_items);
  owb_layout_free (s->layout);
  g_free (s);
}

/* Whether a node name is in a scope: "/a/b/MatMul" is, "MatMul" and "/MatMul" are not. */
static gboolean
name_has_scope (const char *name)
{
  const char *last = (name && name[0] == '/') ? strrchr (name, '/') : NULL;
  return last != NULL && last != name;
}

static Scope *scope_for_path (OwbGraphScene *scene, GHashTable *raw, char *path);

/* The scope "/a/b" of a node named "/a/b/MatMul", created with its ancestors when new. */
static Scope *
scope_for_name (OwbGraphScene *scene, GHashTable *raw, const char *name)
{
  if (!name_has_scope (name))
    return scene->root;
  return scope_for_path (scene, raw, g_strndup (name, strrchr (name, '/') - name));
}

/* The scope of `path` ("/a/b"; taken), created with its ancestors when new. */
static Scope *
scope_for_path (OwbGraphScene *scene, GHashTable *raw, char *taken_path)
{
  g_autofree char *path = taken_path;
  Scope *s = g_hash_table_lookup (raw, path);
  if (s)
    return s;

  /* Walk the segments; empty ones ("//") are skipped, so "/a//b" is "/a/b". */
  g_auto (GStrv) segments = g_strsplit (path, "/", -1);
  g_autoptr (GString) prefix = g_string_new (NULL);
  Scope *cur = scene->root;
  for (guint i = 0; segments[i]; i++)
    {
      if (segments[i][0] == '\0')
        continue;
      g_string_append_c (prefix, '/');
      g_string_append (prefix, segments[i]);
      Scope *next = g_hash_table_lookup (raw, prefix->str);
      if (next == NULL)
        {
          next = scope_new (scene, prefix->str, segments[i], cur);
          g_hash_table_insert (raw, g_strdup (next->path), next);
        }
      cur = next;
    }
  g_hash_table_insert (raw, g_steal_pointer (&path), cur);
  return cur;
}

static guint
count_ops (OwbGraphScene *scene, Scope *s)
{
  guint n = 0;
  for (guint i = 0; i < s->leaves->len; i++)
    if (scene->leaves[g_array_index (s->leaves, guint, i)].kind == OWB_SCENE_OP)
      n++;
  for (guint i = 0; i < s->children->len; i++)
    n += count_ops (scene, s->children->pdata[i]);
  s->n_ops = n;
  return n;
}

static void
move_leaves (OwbGraphScene *scene, Scope *from, Scope *to)
{
  for (guint i = 0; i < from->leaves->len; i++)
    {
      guint l = g_array_index (from->leaves, guint, i);
      scene->leaves[l].scope = to;
      g_array_append_val (to->leaves, l);
    }
  g_array_set_size (from->leaves, 0);
}

/* Bottom-up: single-op scopes dissolve into their parent, chains of lone subscopes merge. */
static void
normalize_scope (OwbGraphScene *scene, Scope *s, GPtrArray *aliases)
{
  g_autoptr (GPtrArray) kept = g_ptr_array_new ();
  for (guint i = 0; i < s->children->len; i++)
    {
      Scope *c = s->children->pdata[i];
      normalize_scope (scene, c, aliases);
      if (c->n_ops <= 1)
        {
          /* normalize_scope (c) already pulled the op up into c itself. */
          move_leaves (scene, c, s);
          g_ptr_array_set_size (c->children, 0);
        }
      else if (c->leaves->len == 0 && c->children->len == 1)
        {
          Scope *d = c->children->pdata[0];
          char *title = g_strconcat (c->title, "/", d->title, NULL);
          g_free (d->title);
          d->title = title;
          d->parent = s;
          g_ptr_array_add (aliases, c);
          g_ptr_array_add (aliases, d);
          g_ptr_array_set_size (c->children, 0);
          g_ptr_array_add (kept, d);
        }
      else
        g_ptr_array_add (kept, c);
    }
  g_ptr_array_set_size (s->children, 0);
  g_ptr_array_extend (s->children, kept, NULL, NULL);
}

static void
set_depths (Scope *s, guint depth)
{
  s->depth = depth;
  for (guint i = 0; i < s->children->len; i++)
    set_depths (s->children->pdata[i], depth + 1);
}

static void
finish_scope (OwbGraphScene *scene, Scope *s)
{
  if (s->parent)
    {
      g_hash_table_replace (scene->scope_by_path, g_strdup (s->path), s);
      s->subtitle = g_strdup_printf (ngettext ("%u node", "%u nodes", s->n_ops), s->n_ops);
      const OwbSceneStyle *st = &scene->style;
      s->title_width = _owb_scene_measure (st, s->title, OWB_SCENE_FONT_TITLE);
      double sub = _owb_scene_measure (st, s->subtitle, OWB_SCENE_FONT_BODY);
      s->collapsed_width = MAX (st->min_width, MAX (s->title_width, sub) + 2 * st->padding);
      s->collapsed_height = 2 * st->padding + st->title_height + st->line_height;
    }
  for (guint i = 0; i < s->children->len; i++)
    finish_scope (scene, s->children->pdata[i]);
}

static void
item_size (OwbGraphScene *scene, const Item *item, double *w, double *h)
{
  if (item->scope == NULL)
    {
      *w = scene->leaves[item->leaf].width;
      *h = scene->leaves[item->leaf].height;
    }
  else if (!item->scope->expanded)
    {
      *w = item->scope->collapsed_width;
      *h = item->scope->collapsed_height;
    }
  else
    {
      const OwbSceneStyle *st = &scene->style;
      /* The header leaves a title-row-sized square before the title for the expander. */
      *w = MAX (item->scope->inner_width, st->title_height + item->scope->title_width) + 2 * st->padding;
      *h = item->scope->inner_height + 3 * st->padding + st->title_height;
    }
}

/* Lifts two items to the level where they are siblings; returns that level. */
static Scope *
common_level (Scope *sa, guint *a, Scope *sb, guint *b)
{
  while (sa != sb)
    {
      gboolean lift_a = sa->depth >= sb->depth, lift_b = sb->depth >= sa->depth;
      if (lift_a)
        {
          *a = sa->local;
          sa = sa->parent;
        }
      if (lift_b)
        {
          *b = sb->local;
          sb = sb->parent;
        }
    }
  return sa;
}

/* common_level, noting on the way the items whose edges leave or enter each scope. */
static Scope *
record_ports (Scope *sa, guint *a, Scope *sb, guint *b)
{
  while (sa != sb)
    {
      gboolean lift_a = sa->depth >= sb->depth, lift_b = sb->depth >= sa->depth;
      if (lift_a)
        {
          g_array_append_val (sa->out_items, *a);
          *a = sa->local;
          sa = sa->parent;
        }
      if (lift_b)
        {
          g_array_append_val (sb->in_items, *b);
          *b = sb->local;
          sb = sb->parent;
        }
    }
  return sa;
}

/* Sorted sets in a GArray, of item indices (guint) and of pairs (guint64, a << 32 | b): sorted and
 * made unique once, then searched by bisection (the index, or -1). One definition for both key
 * types. */
#define DEFINE_SORTED_SET(suffix, type)                                                              \
  static int compare_##suffix (gconstpointer a, gconstpointer b)                                     \
  {                                                                                                  \
    type x = *(const type *) a, y = *(const type *) b;                                               \
    return x < y ? -1 : x > y;                                                                       \
  }                                                                                                  \
                                                                                                     \
  static void sort_unique_##suffix (GArray *set)                                                     \
  {                                                                                                  \
    if (set->len < 2)                                                                                \
      return;                                                                                        \
    g_array_sort (set, compare_##suffix);                                                            \
    type *p = (type *) set->data;                                                                    \
    guint n = 1;                                                                                     \
    for (guint i = 1; i < set->len; i++)                                                             \
      if (p[i] != p[n - 1])                                                                          \
        p[n++] = p[i];                                                                               \
    g_array_set_size (set, n);                                                                       \
  }                                                                                                  \
                                                                                                     \
  static int find_##suffix (GArray *set, type key)                                                   \
  {                                                                                                  \
    const type *p = (const type *) set->data;                                                        \
    guint lo = 0, hi = set->len;                                                                     \
    while (lo < hi)                                                                                  \
      {                                                                                              \
        guint mid = lo + (hi - lo) / 2;                                                              \
        if (p[mid] < key)                                                                            \
          lo = mid + 1;                                                                              \
        else                                                                                         \
          hi = mid;                                                                                  \
      }                                                                                              \
    return (lo < set->len && p[lo] == key) ? (int) lo : -1;                                          \
  }

DEFINE_SORTED_SET (items, guint)
DEFINE_SORTED_SET (pairs, guint64)

/* Layout of one level, computing expanded child scopes first when they have none cached. */
static gboolean
ensure_layout (OwbGraphScene *scene, Scope *s, GPtrArray *computed, GCancellable *cancellable,
               GError **error)
{
  if (s->layout)
    return TRUE;
  for (guint i = 0; i < s->items->len; i++)
    {
      Scope *c = g_array_index (s->items, Item, i).scope;
      if (c && c->expanded && !ensure_layout (scene, c, computed, cancellable, error))
        return FALSE;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  g_autoptr (OwbLayoutGraph) lg = owb_layout_graph_new ();
  for (guint i = 0; i < s->items->len; i++)
    {
      double w, h;
      item_size (scene, &g_array_index (s->items, Item, i), &w, &h);
      owb_layout_graph_add_node (lg, w, h);
    }
  g_autofree gboolean *has_in = g_new0 (gboolean, s->items->len + 1);
  g_autofree gboolean *has_out = g_new0 (gboolean, s->items->len + 1);
  for (guint i = 0; i < s->pairs->len; i++)
    {
      guint64 p = g_array_index (s->pairs, guint64, i);
      guint from = (guint) (p >> 32), to = (guint) (p & 0xffffffffu);
      owb_layout_graph_add_edge (lg, from, to);
      has_out[from] = has_in[to] = TRUE;
    }
  /* Ports (see the design notes): their edges come right after the level's own, in the order
   * of in_items then out_items, where route_edge finds them. */
  guint in_port = 0, out_port = 0;
  if (s->in_items->len)
    in_port = owb_layout_graph_add_node (lg, 1, 1);
  if (s->out_items->len)
    out_port = owb_layout_graph_add_node (lg, 1, 1);
  for (guint i = 0; i < s->in_items->len; i++)
    {
      guint item = g_array_index (s->in_items, guint, i);
      owb_layout_graph_add_edge (lg, in_port, item);
      has_in[item] = TRUE;
    }
  for (guint i = 0; i < s->out_items->len; i++)
    {
      guint item = g_array_index (s->out_items, guint, i);
      owb_layout_graph_add_edge (lg, item, out_port);
      has_out[item] = TRUE;
    }
  /* The entry above every source of the level and the exit below every sink, whatever the rank
   * assignment: an edge to the port cannot run into a box on its way out of the frame. */
  for (guint i = 0; i < s->items->len; i++)
    {
      if (s->in_items->len && !has_in[i])
        owb_layout_graph_add_edge (lg, in_port, i);
      if (s->out_items->len && !has_out[i])
        owb_layout_graph_add_edge (lg, i, out_port);
    }
  OwbLayout *layout = owb_layout_compute (lg, NULL, cancellable, error);
  if (layout == NULL)
    return FALSE;
  s->layout = layout;
  scene->n_layouts++;
  owb_layout_get_size (layout, &s->inner_width, &s->inner_height);
  if (s->items->len == 0)
    s->inner_width = s->inner_height = 0;
  g_ptr_array_add (computed, s);
  return TRUE;
}

/* Building the visible scene from the cached layouts */

static void
hide_scope (OwbGraphScene *scene, Scope *s, int index)
{
  for (guint i = 0; i < s->leaves->len; i++)
    scene->leaves[g_array_index (s->leaves, guint, i)].visible = index;
  for (guint i = 0; i < s->children->len; i++)
    {
      Scope *c = s->children->pdata[i];
      c->visible = index;
      hide_scope (scene, c, index);
    }
}

static void
emit_level (OwbGraphScene *scene, Scope *s, double ox, double oy, int parent, guint depth)
{
  const OwbSceneStyle *st = &scene->style;
  int last_child = -1;
  s->origin_x = ox;
  s->origin_y = oy;
  for (guint i = 0; i < s->items->len; i++)
    {
      const Item *item = &g_array_index (s->items, Item, i);
      double px, py;
      owb_layout_get_node_position (s->layout, i, &px, &py);
      OwbSceneNode n = { 0 };
      NodeRef ref = { s, i, NULL, -1, -1 };
      int index = scene->nodes->len;
      n.x = ox + px;
      n.y = oy + py;
      n.parent = parent;
      n.depth = depth;
      item_size (scene, item, &n.width, &n.height);
      if (item->scope == NULL)
        {
          Leaf *leaf = &scene->leaves[item->leaf];
          n.kind = leaf->kind;
          n.node = leaf->node;
          n.value = leaf->value;
          n.scope = s->path;
          n.title = leaf->title;
          n.subtitle = leaf->subtitle;
          n.lines = leaf->lines;
          n.n_lines = leaf->n_lines;
          /* Interned: partitioning again replaces node->provider while the scene is shown. */
          n.provider = leaf->node && leaf->node->provider ? g_intern_string (leaf->node->provider) : NULL;
          leaf->visible = index;
          g_array_append_val (scene->nodes, n);
          g_array_append_val (scene->refs, ref);
          continue;
        }
      Scope *c = item->scope;
      n.kind = OWB_SCENE_GROUP;
      n.scope = c->path;
      n.title = c->title;
      n.subtitle = c->subtitle;
      n.expanded = c->expanded;
      n.n_members = c->n_ops;
      ref.group = c;
      c->visible = index;
      g_array_append_val (scene->nodes, n);
      g_array_append_val (scene->refs, ref);
      if (!c->expanded)
        {
          hide_scope (scene, c, index);
          continue;
        }
      /* Link the expanded group into the tree the spatial query walks. */
      if (last_child >= 0)
        g_array_index (scene->refs, NodeRef, last_child).next_sibling = index;
      else if (parent >= 0)
        g_array_index (scene->refs, NodeRef, parent).first_child = index;
      else
        g_array_append_val (scene->group_roots, index);
      last_child = index;
      emit_level (scene, c, n.x + st->padding, n.y + 2 * st->padding + st->title_height, index, depth + 1);
    }
}

static int
compare_visible_edges (gconstpointer pa, gconstpointer pb)
{
  const VisibleEdge *a = pa, *b = pb;
  if (a->from != b->from)
    return a->from < b->from ? -1 : 1;
  if (a->to != b->to)
    return a->to < b->to ? -1 : 1;
  if (a->value != b->value)
    return a->value < b->value ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

static void
push_point (GArray *points, double x, double y)
{
  guint n = points->len;
  /* Consecutive duplicates make zero-length segments (and NaN arrow directions). */
  if (n >= 2 && g_array_index (points, double, n - 2) == x && g_array_index (points, double, n - 1) == y)
    return;
  g_array_append_val (points, x);
  g_array_append_val (points, y);
}

static void
push_route (GArray *points, const Scope *x, const double *p, guint from, guint to)
{
  for (guint k = from; k < to; k++)
    push_point (points, x->origin_x + p[2 * k], x->origin_y + p[2 * k + 1]);
}

/* The inner route of item `item` of `x` from its entry port (entering) or to its exit port. */
static const double *
port_route (const Scope *x, guint item, gboolean entering, guint *n)
{
  int k = find_items (entering ? x->in_items : x->out_items, item);
  *n = 0;
  if (k < 0 || x->layout == NULL)
    return NULL;
  guint e = x->pairs->len + (entering ? 0 : x->in_items->len) + k;
  return owb_layout_get_edge_points (x->layout, e, n);
}

/* Into the target: from the outermost group below the common level down to the box. */
static void
push_entering (GArray *points, const Scope *x, guint item, const Scope *level)
{
  if (x == level)
    return;
  push_entering (points, x->parent, x->local, level);
  guint n;
  const double *p = port_route (x, item, TRUE, &n);
  if (p && n >= 2)
    push_route (points, x, p, 0, n - 1); /* its end is the item's top, where the next part starts */
}

/* The route from the source box's bottom to the target box's top: through the exit ports of
 * the source's groups, along the level route between the siblings at the common level, and
 * through the entry ports of the target's groups. */
static void
route_edge (OwbGraphScene *scene, guint from, guint to, GArray *points)
{
  const NodeRef *rf = &g_array_index (scene->refs, NodeRef, from);
  const NodeRef *rt = &g_array_index (scene->refs, NodeRef, to);
  const OwbSceneNode *src = &g_array_index (scene->nodes, OwbSceneNode, from);
  const OwbSceneNode *dst = &g_array_index (scene->nodes, OwbSceneNode, to);
  double sx = src->x + src->width / 2, sy = src->y + src->height;
  double tx = dst->x + dst->width / 2, ty = dst->y;
  guint a = rf->local, b = rt->local;
  Scope *level = common_level (rf->container, &a, rt->container, &b);
  int e = find_pairs (level->pairs, ((guint64) a << 32) | b);
  guint n = 0;
  const double *lp = e >= 0 ? owb_layout_get_edge_points (level->layout, e, &n) : NULL;

  push_point (points, sx, sy);
  if (lp == NULL || n < 2)
    {
      push_point (points, tx, ty);
      return;
    }
  if (lp[1] > lp[2 * n - 1])
    {
      /* A cycle between groups, drawn upwards at the common level: follow it as drawn. */
      push_route (points, level, lp, 0, n);
      push_point (points, tx, ty);
      return;
    }
  /* Out of the source's groups; each inner route starts at the item's bottom, already reached. */
  guint item = rf->local;
  for (const Scope *x = rf->container; x != level; item = x->local, x = x->parent)
    {
      guint pn;
      const double *p = port_route (x, item, FALSE, &pn);
      if (p && pn >= 2)
        push_route (points, x, p, 1, pn);
    }
  push_route (points, level, lp, 1, n - 1);
  push_entering (points, rt->container, rt->local, level);
  push_point (points, tx, ty);
}

static void
clear_visible (OwbGraphScene *scene)
{
  g_array_set_size (scene->nodes, 0);
  g_array_set_size (scene->refs, 0);
  g_array_set_size (scene->edges, 0);
  g_array_set_size (scene->points, 0);
  g_array_set_size (scene->group_roots, 0);
  g_clear_pointer (&scene->node_cell_start, g_free);
  g_clear_pointer (&scene->node_cell_items, g_free);
  g_clear_pointer (&scene->edge_cell_start, g_free);
  g_clear_pointer (&scene->edge_cell_items, g_free);
}

static void
cell_range (const OwbGraphScene *scene, double x0, double y0, double x1, double y1,
            guint *c0, guint *r0, guint *c1, guint *r1)
{
  double fc0 = floor (x0 / scene->cell), fc1 = floor (x1 / scene->cell);
  double fr0 = floor (y0 / scene->cell), fr1 = floor (y1 / scene->cell);
  *c0 = (guint) CLAMP (fc0, 0, scene->cols - 1);
  *c1 = (guint) CLAMP (fc1, 0, scene->cols - 1);
  *r0 = (guint) CLAMP (fr0, 0, scene->rows - 1);
  *r1 = (guint) CLAMP (fr1, 0, scene->rows - 1);
}

static void
add_to_cells (const OwbGraphScene *scene, GArray *entries, double x0, double y0, double x1, double y1,
              guint item)
{
  guint c0, r0, c1, r1;
  cell_range (scene, x0, y0, x1, y1, &c0, &r0, &c1, &r1);
  for (guint r = r0; r <= r1; r++)
    for (guint c = c0; c <= c1; c++)
      {
        guint64 entry = ((guint64) (r * scene->cols + c) << 32) | item;
        g_array_append_val (entries, entry);
      }
}

/* Turns sorted (cell << 32 | item) entries into start offsets and item lists. */
static void
pack_cells (const OwbGraphScene *scene, GArray *entries, guint **start, guint **items)
{
  sort_unique_pairs (entries);
  guint n_cells = scene->cols * scene->rows;
  *start = g_new0 (guint, n_cells + 1);
  *items = g_new (guint, MAX (entries->len, 1));
  for (guint i = 0; i < entries->len; i++)
    {
      guint64 e = g_array_index (entries, guint64, i);
      (*start)[(e >> 32) + 1]++;
      (*items)[i] = (guint) (e & 0xffffffffu);
    }
  for (guint c = 0; c < n_cells; c++)
    (*start)[c + 1] += (*start)[c];
}

static void
build_index (OwbGraphScene *scene)
{
  guint n_items = scene->nodes->len + scene->edges->len;
  double area = MAX (scene->width, 1) * MAX (scene->height, 1);
  /* About four items per cell whatever the graph's shape, and never a cell per scene unit. */
  scene->cell = MAX (64.0, 2.0 * sqrt (area / MAX (n_items, 1)));
  scene->cols = (guint) MAX (1.0, ceil (MAX (scene->width, 1) / scene->cell));
  scene->rows = (guint) MAX (1.0, ceil (MAX (scene->height, 1) / scene->cell));

  g_autoptr (GArray) entries = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint i = 0; i < scene->nodes->len; i++)
    {
      const OwbSceneNode *n = &g_array_index (scene->nodes, OwbSceneNode, i);
      if (n->kind == OWB_SCENE_GROUP && n->expanded)
        continue; /* big frames: found through the group tree instead */
      add_to_cells (scene, entries, n->x, n->y, n->x + n->width, n->y + n->height, i);
    }
  pack_cells (scene, entries, &scene->node_cell_start, &scene->node_cell_items);

  g_array_set_size (entries, 0);
  for (guint i = 0; i < scene->edges->len; i++)
    {
      const OwbSceneEdge *e = &g_array_index (scene->edges, OwbSceneEdge, i);
      for (guint k = 0; k + 1 < e->n_points; k++)
        {
          const double *p = e->points + 2 * k;
          add_to_cells (scene, entries, MIN (p[0], p[2]), MIN (p[1], p[3]), MAX (p[0], p[2]),
                        MAX (p[1], p[3]), i);
        }
    }
  pack_cells (scene, entries, &scene->edge_cell_start, &scene->edge_cell_items);
}

static void
rebuild_visible (OwbGraphScene *scene)
{
  clear_visible (scene);
  Scope *root = scene->root;
  emit_level (scene, root, 0, 0, -1, 0);
  scene->width = root->inner_width;
  scene->height = root->inner_height;

  /* One edge per pair of visible boxes; the values between them are merged onto it. */
  g_autoptr (GArray) visible = g_array_sized_new (FALSE, FALSE, sizeof (VisibleEdge), scene->leaf_edges->len);
  for (guint i = 0; i < scene->leaf_edges->len; i++)
    {
      const LeafEdge *le = &g_array_index (scene->leaf_edges, LeafEdge, i);
      VisibleEdge ve = { scene->leaves[le->from].visible, scene->leaves[le->to].visible, le->value, i };
      if (ve.from != ve.to)
        g_array_append_val (visible, ve);
    }
  g_array_sort (visible, compare_visible_edges);

  g_autoptr (GArray) offsets = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < visible->len;)
    {
      const VisibleEdge *first = &g_array_index (visible, VisibleEdge, i);
      guint j = i, n_values = 0, last_value = G_MAXUINT;
      for (; j < visible->len; j++)
        {
          const VisibleEdge *v = &g_array_index (visible, VisibleEdge, j);
          if (v->from != first->from || v->to != first->to)
            break;
          if (v->value != last_value)
            n_values++;
          last_value = v->value;
        }
      OwbSceneEdge e = { 0 };
      e.from = first->from;
      e.to = first->to;
      /* Value ids follow graph order, so the smallest is the first value between the boxes. */
      e.tensor = g_ptr_array_index (scene->value_names, first->value);
      e.label = g_ptr_array_index (scene->value_labels, first->value);
      e.n_tensors = n_values;
      guint offset = scene->points->len;
      route_edge (scene, e.from, e.to, scene->points);
      e.n_points = (scene->points->len - offset) / 2;
      g_array_append_val (offsets, offset);
      g_array_append_val (scene->edges, e);
      i = j;
    }
  /* The points array has stopped growing: now the pointers into it are stable. */
  for (guint i = 0; i < scene->edges->len; i++)
    g_array_index (scene->edges, OwbSceneEdge, i).points
      = &g_array_index (scene->points, double, g_array_index (offsets, guint, i));

  build_index (scene);
}

/* Sets scopes' expanded flags and lays out what changed; all or nothing when cancelled. */
static gboolean
apply_changes (OwbGraphScene *scene, Scope **changes, guint n_changes, const gboolean *states,
               GCancellable *cancellable, GError **error)
{
  typedef struct {
    Scope *scope;
    OwbLayout *layout;
    double width, height;
  } Saved;
  g_autoptr (GArray) saved = g_array_new (FALSE, FALSE, sizeof (Saved));
  g_autofree gboolean *old_states = g_new (gboolean, MAX (n_changes, 1));
  g_autoptr (GPtrArray) computed = g_ptr_array_new ();

  for (guint i = 0; i < n_changes; i++)
    {
      old_states[i] = changes[i]->expanded;
      changes[i]->expanded = states[i];
      /* Every level above changes size; the scope's own layout (and its siblings') stays. */
      for (Scope *a = changes[i]->parent; a; a = a->parent)
        if (a->layout)
          {
            Saved s = { a, g_steal_pointer (&a->layout), a->inner_width, a->inner_height };
            g_array_append_val (saved, s);
          }
    }

  if (!ensure_layout (scene, scene->root, computed, cancellable, error))
    {
      for (guint i = 0; i < computed->len; i++)
        {
          Scope *s = computed->pdata[i];
          g_clear_pointer (&s->layout, owb_layout_free);
        }
      for (guint i = 0; i < saved->len; i++)
        {
          Saved *s = &g_array_index (saved, Saved, i);
          s->scope->layout = s->layout;
          s->scope->inner_width = s->width;
          s->scope->inner_height = s->height;
        }
      for (guint i = n_changes; i-- > 0;)
        changes[i]->expanded = old_states[i];
      return FALSE;
    }
  for (guint i = 0; i < saved->len; i++)
    owb_layout_free (g_array_index (saved, Saved, i).layout);
  rebuild_visible (scene);
  return TRUE;
}

/* Construction */

static void
leaf_measure (OwbGraphScene *scene, Leaf *leaf)
{
  const OwbSceneStyle *st = &scene->style;
  double content = _owb_scene_measure (st, leaf->title, OWB_SCENE_FONT_TITLE);
  for (guint i = 0; i < leaf->n_lines; i++)
    content = MAX (content, _owb_scene_measure (st, leaf->lines[i].text, OWB_SCENE_FONT_BODY));
  double subtitle = _owb_scene_measure (st, leaf->subtitle, OWB_SCENE_FONT_BODY);
  /* Exporters' node names run to 60 characters; a box that wide hides its neighbours, so the
   * subtitle only widens a box up to twice the minimum and the canvas ellipsizes the rest. For
   * INPUT/OUTPUT boxes the subtitle is the type, which must show whole. */
  if (leaf->kind == OWB_SCENE_OP)
    subtitle = MIN (subtitle, 2 * st->min_width - 2 * st->padding);
  content = MAX (content, subtitle);
  leaf->width = MAX (st->min_width, content + 2 * st->padding);
  leaf->height = 2 * st->padding + st->title_height
                 + (leaf->subtitle[0] ? st->line_height : 0) + leaf->n_lines * st->line_height;
}

static guint
add_value (OwbGraphScene *scene, GHashTable *value_ids, GHashTable *infos, const char *name)
{
  gpointer id;
  if (g_hash_table_lookup_extended (value_ids, name, NULL, &id))
    return GPOINTER_TO_UINT (id);
  guint v = scene->value_names->len;
  g_ptr_array_add (scene->value_names, (gpointer) name);
  OwbValueInfo *info = g_hash_table_lookup (infos, name);
  g_ptr_array_add (scene->value_labels, info && info->has_type ? _owb_scene_format_type (&info->type) : NULL);
  g_hash_table_insert (value_ids, (gpointer) name, GUINT_TO_POINTER (v));
  return v;
}

static void
add_infos (GHashTable *infos, GPtrArray *list)
{
  for (guint i = 0; i < list->len; i++)
    {
      OwbValueInfo *info = list->pdata[i];
      if (info->name && !g_hash_table_contains (infos, info->name))
        g_hash_table_insert (infos, info->name, info);
    }
}

static char *
type_text (GHashTable *infos, const char *name)
{
  OwbValueInfo *info = g_hash_table_lookup (infos, name);
  char *text = info && info->has_type ? _owb_scene_format_type (&info->type) : NULL;
  return text ? text : g_strdup ("");
}

/* An input's or output's leaf: the value's name and type, in the root scope. */
static void
value_leaf (OwbGraphScene *scene, Leaf *leaf, OwbSceneNodeKind kind, const char *name, GHashTable *infos)
{
  leaf->kind = kind;
  leaf->value = g_strdup (name);
  leaf->title = g_strdup (name);
  leaf->subtitle = type_text (infos, name);
  leaf->scope = scene->root;
}

/* Outer reads. A subgraph reads values of the graphs around it by name (ONNX's implicit
 * inputs); the body's own view draws them as inputs, and the outer view as edges into the
 * If/Loop/Scan node that owns the body, as Netron does. */

static void
read_name (const char *name, GHashTable *defined, GHashTable *seen, GPtrArray *out)
{
  if (name && name[0] && !g_hash_table_contains (defined, name) && g_hash_table_add (seen, (gpointer) name))
    g_ptr_array_add (out, (gpointer) name);
}

static void collect_outer (const OwbGraph *graph, GPtrArray *out);

static gboolean
node_has_bodies (const OwbNode *node)
{
  for (int a = 0; a < node->n_attributes; a++)
    if (node->attributes[a].type == OWB_ATTR_GRAPH || node->attributes[a].type == OWB_ATTR_GRAPHS)
      return TRUE;
  return FALSE;
}

/* What a node's bodies read from outside them (the node's graph or further out), in order. */
static void
node_body_reads (const OwbNode *node, GPtrArray *out)
{
  for (int a = 0; a < node->n_attributes; a++)
    {
      const OwbAttribute *attr = &node->attributes[a];
      if (attr->type == OWB_ATTR_GRAPH && attr->g)
        collect_outer (attr->g, out);
      for (int k = 0; attr->type == OWB_ATTR_GRAPHS && k < attr->n; k++)
        if (attr->graphs[k])
          collect_outer (attr->graphs[k], out);
    }
}

static void
collect_outer (const OwbGraph *graph, GPtrArray *out)
{
  g_autoptr (GHashTable) defined = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < out->len; i++)
    g_hash_table_add (seen, out->pdata[i]);
  for (guint i = 0; i < graph->inputs->len; i++)
    g_hash_table_add (defined, ((OwbValueInfo *) graph->inputs->pdata[i])->name);
  for (guint i = 0; i < graph->initializer_names->len; i++)
    g_hash_table_add (defined, graph->initializer_names->pdata[i]);
  for (guint n = 0; n < graph->nodes->len; n++)
    {
      const OwbNode *node = graph->nodes->pdata[n];
      for (int o = 0; o < node->n_outputs; o++)
        g_hash_table_add (defined, node->outputs[o]);
    }
  for (guint n = 0; n < graph->nodes->len; n++)
    {
      const OwbNode *node = graph->nodes->pdata[n];
      for (int k = 0; k < node->n_inputs; k++)
        read_name (node->inputs[k], defined, seen, out);
      g_autoptr (GPtrArray) nested = g_ptr_array_new ();
      node_body_reads (node, nested);
      for (guint k = 0; k < nested->len; k++)
        read_name (nested->pdata[k], defined, seen, out);
    }
  for (guint i = 0; i < graph->outputs->len; i++)
    read_name (((OwbValueInfo *) graph->outputs->pdata[i])->name, defined, seen, out);
}

GPtrArray *
owb_scene_dup_outer_values (const OwbGraph *body)
{
  g_autoptr (GPtrArray) reads = g_ptr_array_new ();
  collect_outer (body, reads);
  GPtrArray *values = g_ptr_array_new ();
  /* Weights of the outer graphs show on the boxes that read them ("W ⟨8×8×3×3⟩"), not as inputs. */
  for (guint i = 0; i < reads->len; i++)
    if (!_owb_scene_find_initializer (body->parent, reads->pdata[i]))
      g_ptr_array_add (values, reads->pdata[i]);
  return values;
}

/* Compact scenes: which nodes have no box. A Constant, or an op whose inputs are all initializers
 * or values of such nodes (nodes are in topological order), unless it has bodies or makes a
 * graph output. folded_values gets each of their values -> the node. Returns how many. */
static guint
fold_constants (const OwbGraph *graph, gboolean *folded, GHashTable *folded_values)
{
  g_autoptr (GHashTable) outputs = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->outputs->len; i++)
    g_hash_table_add (outputs, ((OwbValueInfo *) graph->outputs->pdata[i])->name);
  guint n = 0;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      gboolean is_default = node->domain == NULL || node->domain[0] == '\0' || strcmp (node->domain, "ai.onnx") == 0;
      gboolean fold = !node_has_bodies (node) && node->n_outputs > 0 &&
                      (node->n_inputs > 0 || (is_default && g_strcmp0 (node->op_type, "Constant") == 0));
      for (int k = 0; fold && k < node->n_inputs; k++)
        fold = node->inputs[k][0] == '\0' || g_hash_table_contains (folded_values, node->inputs[k]) ||
               _owb_scene_find_initializer (graph, node->inputs[k]) != NULL;
      for (int k = 0; fold && k < node->n_outputs; k++)
        fold = !g_hash_table_contains (outputs, node->outputs[k]);
      if (!fold)
        continue;
      folded[i] = TRUE;
      n++;
      for (int k = 0; k < node->n_outputs; k++)
        if (node->outputs[k][0])
          g_hash_table_insert (folded_values, node->outputs[k], (gpointer) node);
    }
  return n;
}

static gboolean
build (OwbGraphScene *scene, GCancellable *cancellable, GError **error)
{
  const OwbGraph *graph = scene->graph;

  /* What owb_graph_find_value_info answers, on this graph then its outer ones, in one table. */
  g_autoptr (GHashTable) infos = g_hash_table_new (g_str_hash, g_str_equal);
  for (const OwbGraph *g = graph; g; g = g->parent)
    {
      add_infos (infos, g->inputs);
      add_infos (infos, g->outputs);
      add_infos (infos, g->value_infos);
    }

  g_autoptr (GPtrArray) feeds = owb_graph_dup_feed_inputs (graph);
  /* A body's values from outside are its inputs too (drawn after its own). */
  g_autoptr (GPtrArray) outer = graph->parent ? owb_scene_dup_outer_values (graph) : g_ptr_array_new ();
  guint n_inputs = feeds->len + outer->len;
  guint n_nodes = graph->nodes->len;
  g_autofree gboolean *folded = g_new0 (gboolean, MAX (n_nodes, 1));
  g_autoptr (GHashTable) folded_values = g_hash_table_new (g_str_hash, g_str_equal);
  guint n_folded = scene->style.compact ? fold_constants (graph, folded, folded_values) : 0;
  scene->n_leaves = n_inputs + n_nodes - n_folded + graph->outputs->len;
  scene->leaves = g_new0 (Leaf, MAX (scene->n_leaves, 1));
  scene->root = scope_new (scene, "", "", NULL);
  scene->root->expanded = TRUE;
  g_autoptr (GHashTable) raw = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  /* A large graph whose names carry no scopes gets blocks of its own, to open collapsed too. */
  g_auto (OwbSceneBlocks) blocks = { 0 };
  gboolean use_blocks = FALSE;
  if (scene->style.collapse_threshold > 0 && n_nodes > scene->style.collapse_threshold)
    {
      gboolean scoped = FALSE;
      for (guint i = 0; i < n_nodes && !scoped; i++)
        scoped = name_has_scope (((const OwbNode *) graph->nodes->pdata[i])->name);
      OwbSceneBlockOptions block_options = { BLOCK_MIN_NODES, BLOCK_MAX_NODES, BLOCK_FAN_OUT };
      use_blocks = !scoped && _owb_scene_find_blocks (graph, &block_options, &blocks);
    }
  scene->n_blocks = use_blocks ? blocks.n_blocks : 0;

  guint l = 0;
  for (guint i = 0; i < feeds->len; i++, l++)
    value_leaf (scene, &scene->leaves[l], OWB_SCENE_INPUT, ((const OwbValueInfo *) feeds->pdata[i])->name, infos);
  for (guint i = 0; i < outer->len; i++, l++)
    {
      value_leaf (scene, &scene->leaves[l], OWB_SCENE_INPUT, outer->pdata[i], infos);
      scene->leaves[l].outer = TRUE;
    }
  for (guint i = 0; i < n_nodes; i++)
    {
      if ((i & 255) == 0 && g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      if (folded[i])
        continue;
      const OwbNode *node = graph->nodes->pdata[i];
      Leaf *leaf = &scene->leaves[l++];
      leaf->kind = OWB_SCENE_OP;
      leaf->node = node;
      leaf->title = g_strdup (node->op_type ? node->op_type : "");
      leaf->subtitle = g_strdup (node->name ? node->name : "");
      leaf->n_lines = _owb_scene_node_lines (node, graph, &scene->style, n_folded ? folded_values : NULL,
                                             &leaf->lines);
      leaf->scope = use_blocks ? scope_for_path (scene, raw, g_strdup (blocks.paths->pdata[blocks.block_of_node[i]]))
                               : scope_for_name (scene, raw, node->name);
      g_hash_table_insert (scene->leaf_of_node, (gpointer) node, GUINT_TO_POINTER (l)); /* this leaf + 1: l moved on */
    }
  for (guint i = 0; i < graph->outputs->len; i++, l++)
    value_leaf (scene, &scene->leaves[l], OWB_SCENE_OUTPUT, ((const OwbValueInfo *) graph->outputs->pdata[i])->name,
                infos);
  scene->n_ops = n_nodes - n_folded;
  for (guint i = 0; i < scene->n_leaves; i++)
    {
      leaf_measure (scene, &scene->leaves[i]);
      g_array_append_val (scene->leaves[i].scope->leaves, i);
    }

  /* Scope tree: count, dissolve, merge, then name and measure what is left. */
  count_ops (scene, scene->root);
  g_autoptr (GPtrArray) aliases = g_ptr_array_new ();
  normalize_scope (scene, scene->root, aliases);
  set_depths (scene->root, 0);
  finish_scope (scene, scene->root);
  /* A merged scope's path finds the group that absorbed it; that one always survives, since
   * merging keeps the inner scope and a merged scope holds at least two ops. */
  for (guint i = 0; i < aliases->len; i += 2)
    {
      Scope *from = aliases->pdata[i], *to = aliases->pdata[i + 1];
      if (!g_hash_table_contains (scene->scope_by_path, from->path))
        g_hash_table_insert (scene->scope_by_path, g_strdup (from->path), to);
    }

  /* Levels: each leaf, then each scope at its first leaf, becomes an item of its parent. */
  for (guint i = 0; i < scene->n_leaves; i++)
    {
      Leaf *leaf = &scene->leaves[i];
      Item item = { NULL, i };
      leaf->local = leaf->scope->items->len;
      g_array_append_val (leaf->scope->items, item);
      for (Scope *s = leaf->scope; s->parent && !s->in_parent; s = s->parent)
        {
          Item group = { s, 0 };
          s->in_parent = TRUE;
          s->local = s->parent->items->len;
          g_array_append_val (s->parent->items, group);
        }
    }

  /* Value edges between leaves, and the edges they induce at each level. */
  g_autoptr (GHashTable) value_ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GArray) producer = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < scene->n_leaves; i++)
    {
      const Leaf *leaf = &scene->leaves[i];
      if (leaf->kind == OWB_SCENE_INPUT)
        {
          guint v = add_value (scene, value_ids, infos, leaf->value);
          g_array_set_size (producer, scene->value_names->len);
          g_array_index (producer, guint, v) = i;
        }
      else if (leaf->kind == OWB_SCENE_OP)
        for (int k = 0; k < leaf->node->n_outputs; k++)
          {
            const char *name = leaf->node->outputs[k];
            if (name[0] == '\0' || g_hash_table_contains (value_ids, name))
              continue;
            guint v = add_value (scene, value_ids, infos, name);
            g_array_set_size (producer, scene->value_names->len);
            g_array_index (producer, guint, v) = i;
          }
    }
  for (guint i = 0; i < scene->n_leaves; i++)
    {
      Leaf *leaf = &scene->leaves[i];
      int n_in = leaf->kind == OWB_SCENE_OP ? leaf->node->n_inputs : leaf->kind == OWB_SCENE_OUTPUT;
      if (leaf->kind == OWB_SCENE_OP && node_has_bodies (leaf->node))
        {
          /* The values its bodies read come into the If/Loop box like its inputs. */
          leaf->body_reads = g_ptr_array_new ();
          node_body_reads (leaf->node, leaf->body_reads);
        }
      int n_reads = leaf->body_reads ? (int) leaf->body_reads->len : 0;
      for (int k = 0; k < n_in + n_reads; k++)
        {
          const char *name = k >= n_in ? leaf->body_reads->pdata[k - n_in]
                             : leaf->kind == OWB_SCENE_OP ? leaf->node->inputs[k] : leaf->value;
          gpointer id;
          if (name[0] == '\0' || !g_hash_table_lookup_extended (value_ids, name, NULL, &id))
            continue; /* initializers and outer-scope values: no box to come from */
          LeafEdge le = { g_array_index (producer, guint, GPOINTER_TO_UINT (id)), i, GPOINTER_TO_UINT (id) };
          if (le.from == le.to)
            continue;
          g_array_append_val (scene->leaf_edges, le);
          guint a = scene->leaves[le.from].local, b = leaf->local;
          Scope *level = record_ports (scene->leaves[le.from].scope, &a, leaf->scope, &b);
          guint64 pair = ((guint64) a << 32) | b;
          g_array_append_val (level->pairs, pair);
        }
    }
  for (guint i = 0; i < scene->all_scopes->len; i++)
    {
      Scope *s = scene->all_scopes->pdata[i];
      sort_unique_pairs (s->pairs);
      sort_unique_items (s->in_items);
      sort_unique_items (s->out_items);
    }

  /* Large graphs open collapsed to their top-level groups; when everything sits in one group
   * ("/model/..."), that group opens and its children are the ones shown collapsed. */
  gboolean collapse = scene->style.collapse_threshold > 0 && scene->n_ops > scene->style.collapse_threshold;
  for (guint i = 1; i < scene->all_scopes->len; i++)
    ((Scope *) scene->all_scopes->pdata[i])->expanded = !collapse;
  if (collapse)
    for (Scope *s = scene->root; s;)
      {
        Scope *only = NULL;
        guint n_groups = 0;
        for (guint i = 0; i < s->items->len; i++)
          if (g_array_index (s->items, Item, i).scope)
            {
              only = g_array_index (s->items, Item, i).scope;
              n_groups++;
            }
        if (n_groups != 1)
          break;
        only->expanded = TRUE;
        s = only;
      }

  g_autoptr (GPtrArray) computed = g_ptr_array_new ();
  if (!ensure_layout (scene, scene->root, computed, cancellable, error))
    return FALSE;
  rebuild_visible (scene);
  return TRUE;
}

OwbGraphScene *
owb_graph_scene_new (const OwbGraph *graph, const OwbSceneStyle *style, GCancellable *cancellable,
                     GError **error)
{
  g_return_val_if_fail (graph != NULL, NULL);
  OwbGraphScene *scene = g_new0 (OwbGraphScene, 1);
  scene->graph = graph;
  if (style)
    scene->style = *style;
  else
    owb_scene_style_init (&scene->style);
  scene->leaf_of_node = g_hash_table_new (g_direct_hash, g_direct_equal);
  scene->all_scopes = g_ptr_array_new_with_free_func ((GDestroyNotify) scope_free);
  scene->scope_by_path = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  scene->value_names = g_ptr_array_new ();
  scene->value_labels = g_ptr_array_new_with_free_func (g_free);
  scene->leaf_edges = g_array_new (FALSE, FALSE, sizeof (LeafEdge));
  scene->nodes = g_array_new (FALSE, FALSE, sizeof (OwbSceneNode));
  scene->refs = g_array_new (FALSE, FALSE, sizeof (NodeRef));
  scene->edges = g_array_new (FALSE, FALSE, sizeof (OwbSceneEdge));
  scene->points = g_array_new (FALSE, FALSE, sizeof (double));
  scene->group_roots = g_array_new (FALSE, FALSE, sizeof (int));
  if (!build (scene, cancellable, error))
    {
      owb_graph_scene_free (scene);
      return NULL;
    }
  return scene;
}

void
owb_graph_scene_free (OwbGraphScene *scene)
{
  if (scene == NULL)
    return;
  clear_visible (scene);
  for (guint i = 0; i < scene->n_leaves; i++)
    {
      Leaf *leaf = &scene->leaves[i];
      g_free (leaf->value);
      g_free (leaf->title);
      g_free (leaf->subtitle);
      for (guint k = 0; k < leaf->n_lines; k++)
        {
          g_free (leaf->lines[k].text);
          g_free (leaf->lines[k].tensor);
          g_free (leaf->lines[k].subgraph);
        }
      g_free (leaf->lines);
      if (leaf->body_reads)
        g_ptr_array_unref (leaf->body_reads);
    }
  g_free (scene->leaves);
  g_hash_table_unref (scene->leaf_of_node);
  g_ptr_array_unref (scene->all_scopes);
  g_hash_table_unref (scene->scope_by_path);
  g_ptr_array_unref (scene->value_names);
  g_ptr_array_unref (scene->value_labels);
  g_array_unref (scene->leaf_edges);
  g_array_unref (scene->nodes);
  g_array_unref (scene->refs);
  g_array_unref (scene->edges);
  g_array_unref (scene->points);
  g_array_unref (scene->group_roots);
  g_free (scene);
}

/* Rebinding */

static const char *
first_output (const OwbNode *node)
{
  for (int k = 0; k < node->n_outputs; k++)
    if (node->outputs[k][0])
      return node->outputs[k];
  return NULL;
}

static gboolean
same_node (const OwbNode *a, const OwbNode *b)
{
  if (g_strcmp0 (a->op_type, b->op_type) != 0 || g_strcmp0 (a->domain, b->domain) != 0 ||
      a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs)
    return FALSE;
  for (int k = 0; k < a->n_inputs; k++)
    if (strcmp (a->inputs[k], b->inputs[k]) != 0)
      return FALSE;
  for (int k = 0; k < a->n_outputs; k++)
    if (strcmp (a->outputs[k], b->outputs[k]) != 0)
      return FALSE;
  return TRUE;
}

gboolean
owb_graph_scene_rebind (OwbGraphScene *scene, const OwbGraph *graph, GHashTable *node_map)
{
  g_return_val_if_fail (scene != NULL && graph != NULL, FALSE);
  const OwbGraph *old = scene->graph;
  if (graph != old)
    {
      if (graph->nodes->len != old->nodes->len || graph->inputs->len != old->inputs->len ||
          graph->outputs->len != old->outputs->len)
        return FALSE;
      for (guint i = 0; i < graph->outputs->len; i++)
        if (g_strcmp0 (((OwbValueInfo *) graph->outputs->pdata[i])->name,
                       ((OwbValueInfo *) old->outputs->pdata[i])->name) != 0)
          return FALSE;
      /* Values are SSA: a node is known by its first output, wherever the new graph put it. */
      g_autoptr (GHashTable) by_output = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint i = 0; i < graph->nodes->len; i++)
        {
          const OwbNode *node = graph->nodes->pdata[i];
          const char *key = first_output (node);
          if (key == NULL || !g_hash_table_insert (by_output, (gpointer) key, (gpointer) node))
            return FALSE;
        }
      g_autofree const OwbNode **matched = g_new0 (const OwbNode *, MAX (scene->n_leaves, 1));
      for (guint l = 0; l < scene->n_leaves; l++)
        {
          const Leaf *leaf = &scene->leaves[l];
          if (leaf->kind != OWB_SCENE_OP)
            continue;
          const char *key = first_output (leaf->node);
          const OwbNode *node = key ? g_hash_table_lookup (by_output, key) : NULL;
          if (node == NULL || !same_node (leaf->node, node))
            return FALSE;
          matched[l] = node;
        }

      /* The same graph: move every borrowed pointer over. Value names are the nodes' output
       * strings (the INPUT boxes' are the scene's own). */
      g_autoptr (GHashTable) names = g_hash_table_new (g_direct_hash, g_direct_equal);
      g_hash_table_remove_all (scene->leaf_of_node);
      for (guint l = 0; l < scene->n_leaves; l++)
        {
          Leaf *leaf = &scene->leaves[l];
          if (leaf->kind != OWB_SCENE_OP)
            continue;
          for (int k = 0; k < leaf->node->n_outputs; k++)
            g_hash_table_insert (names, leaf->node->outputs[k], matched[l]->outputs[k]);
          if (node_map)
            g_hash_table_insert (node_map, (gpointer) leaf->node, (gpointer) matched[l]);
          leaf->node = matched[l];
          g_hash_table_insert (scene->leaf_of_node, (gpointer) leaf->node, GUINT_TO_POINTER (l + 1));
        }
      for (guint v = 0; v < scene->value_names->len; v++)
        {
          gpointer moved = g_hash_table_lookup (names, scene->value_names->pdata[v]);
          if (moved)
            scene->value_names->pdata[v] = moved;
        }
      for (guint e = 0; e < scene->edges->len; e++)
        {
          OwbSceneEdge *edge = &g_array_index (scene->edges, OwbSceneEdge, e);
          gpointer moved = g_hash_table_lookup (names, edge->tensor);
          if (moved)
            edge->tensor = moved;
        }
      scene->graph = graph;
    }
  /* Claims: the boxes on screen take their nodes' providers. */
  for (guint i = 0; i < scene->nodes->len; i++)
    {
      OwbSceneNode *n = &g_array_index (scene->nodes, OwbSceneNode, i);
      if (n->kind != OWB_SCENE_OP)
        continue;
      const NodeRef *ref = &g_array_index (scene->refs, NodeRef, i);
      const Leaf *leaf = &scene->leaves[g_array_index (ref->container->items, Item, ref->local).leaf];
      n->node = leaf->node;
      n->provider = leaf->node->provider ? g_intern_string (leaf->node->provider) : NULL;
    }
  return TRUE;
}

/* Reading */

const OwbGraph *
owb_graph_scene_get_graph (const OwbGraphScene *scene)
{
  return scene->graph;
}

guint
owb_graph_scene_get_n_nodes (const OwbGraphScene *scene)
{
  return scene->nodes->len;
}

const OwbSceneNode *
owb_graph_scene_get_node (const OwbGraphScene *scene, guint index)
{
  g_return_val_if_fail (index < scene->nodes->len, NULL);
  return &g_array_index (scene->nodes, OwbSceneNode, index);
}

guint
owb_graph_scene_get_n_edges (const OwbGraphScene *scene)
{
  return scene->edges->len;
}

const OwbSceneEdge *
owb_graph_scene_get_edge (const OwbGraphScene *scene, guint index)
{
  g_return_val_if_fail (index < scene->edges->len, NULL);
  return &g_array_index (scene->edges, OwbSceneEdge, index);
}

void
owb_graph_scene_get_size (const OwbGraphScene *scene, double *width, double *height)
{
  if (width)
    *width = scene->width;
  if (height)
    *height = scene->height;
}

/* Spatial queries */

static gboolean
rect_meets (double ax, double ay, double aw, double ah, double bx, double by, double bw, double bh)
{
  return ax <= bx + bw && bx <= ax + aw && ay <= by + bh && by <= ay + ah;
}

static gboolean
edge_meets (const OwbSceneEdge *e, double x, double y, double w, double h)
{
  for (guint k = 0; k + 1 < e->n_points; k++)
    {
      const double *p = e->points + 2 * k;
      if (rect_meets (MIN (p[0], p[2]), MIN (p[1], p[3]), fabs (p[2] - p[0]), fabs (p[3] - p[1]), x, y, w, h))
        return TRUE;
    }
  return FALSE;
}

static void
collect_groups (const OwbGraphScene *scene, int index, double x, double y, double w, double h, GArray *out)
{
  for (; index >= 0; index = g_array_index (scene->refs, NodeRef, index).next_sibling)
    {
      const OwbSceneNode *n = &g_array_index (scene->nodes, OwbSceneNode, index);
      if (!rect_meets (n->x, n->y, n->width, n->height, x, y, w, h))
        continue;
      guint u = index;
      g_array_append_val (out, u);
      collect_groups (scene, g_array_index (scene->refs, NodeRef, index).first_child, x, y, w, h, out);
    }
}

/* Appends the items that the index cells (start and items as pack_cells made them) from column c0,
 * row r0 to c1, r1 list to found; an item in several of the cells comes once for each. */
static void
cells_items (const OwbGraphScene *scene, guint c0, guint r0, guint c1, guint r1, const guint *start,
             const guint *items, GArray *found)
{
  for (guint r = r0; r <= r1; r++)
    for (guint c = c0; c <= c1; c++)
      {
        guint cell = r * scene->cols + c;
        g_array_append_vals (found, items + start[cell], start[cell + 1] - start[cell]);
      }
}

void
owb_graph_scene_query (const OwbGraphScene *scene, double x, double y, double width, double height,
                       GArray *node_indices, GArray *edge_indices)
{
  guint c0, r0, c1, r1;
  cell_range (scene, x, y, x + width, y + height, &c0, &r0, &c1, &r1);
  if (node_indices)
    {
      g_autoptr (GArray) found = g_array_new (FALSE, FALSE, sizeof (guint));
      cells_items (scene, c0, r0, c1, r1, scene->node_cell_start, scene->node_cell_items, found);
      guint kept = 0;
      for (guint k = 0; k < found->len; k++)
        {
          guint i = g_array_index (found, guint, k);
          const OwbSceneNode *n = &g_array_index (scene->nodes, OwbSceneNode, i);
          if (rect_meets (n->x, n->y, n->width, n->height, x, y, width, height))
            g_array_index (found, guint, kept++) = i;
        }
      g_array_set_size (found, kept);
      for (guint i = 0; i < scene->group_roots->len; i++)
        collect_groups (scene, g_array_index (scene->group_roots, int, i), x, y, width, height, found);
      sort_unique_items (found);
      g_array_append_vals (node_indices, found->data, found->len);
    }
  if (edge_indices)
    {
      g_autoptr (GArray) found = g_array_new (FALSE, FALSE, sizeof (guint));
      cells_items (scene, c0, r0, c1, r1, scene->edge_cell_start, scene->edge_cell_items, found);
      sort_unique_items (found);
      for (guint k = 0; k < found->len; k++)
        {
          guint i = g_array_index (found, guint, k);
          if (edge_meets (&g_array_index (scene->edges, OwbSceneEdge, i), x, y, width, height))
            g_array_append_val (edge_indices, i);
        }
    }
}

int
owb_graph_scene_hit_node (const OwbGraphScene *scene, double x, double y)
{
  g_autoptr (GArray) found = g_array_new (FALSE, FALSE, sizeof (guint));
  owb_graph_scene_query (scene, x, y, 0, 0, found, NULL);
  /* Members come after their group in drawing order: the last one found is on top. */
  return found->len ? (int) g_array_index (found, guint, found->len - 1) : -1;
}

static double
segment_distance (double px, double py, const double *p)
{
  double dx = p[2] - p[0], dy = p[3] - p[1];
  double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((px - p[0]) * dx + (py - p[1]) * dy) / len2 : 0;
  t = CLAMP (t, 0, 1);
  double cx = p[0] + t * dx - px, cy = p[1] + t * dy - py;
  return sqrt (cx * cx + cy * cy);
}

int
owb_graph_scene_hit_edge (const OwbGraphScene *scene, double x, double y, double tolerance)
{
  g_autoptr (GArray) found = g_array_new (FALSE, FALSE, sizeof (guint));
  owb_graph_scene_query (scene, x - tolerance, y - tolerance, 2 * tolerance, 2 * tolerance, NULL, found);
  int best = -1;
  double best_distance = tolerance;
  for (guint k = 0; k < found->len; k++)
    {
      guint i = g_array_index (found, guint, k);
      const OwbSceneEdge *e = &g_array_index (scene->edges, OwbSceneEdge, i);
      for (guint s = 0; s + 1 < e->n_points; s++)
        {
          double d = segment_distance (x, y, e->points + 2 * s);
          if (d <= best_distance)
            {
              best_distance = d;
              best = i;
            }
        }
    }
  return best;
}

int
owb_graph_scene_hit_line (const OwbGraphScene *scene, guint index, double x, double y)
{
  g_return_val_if_fail (index < scene->nodes->len, -1);
  const OwbSceneNode *n = &g_array_index (scene->nodes, OwbSceneNode, index);
  const OwbSceneStyle *st = &scene->style;
  if (n->kind == OWB_SCENE_GROUP || n->n_lines == 0 || x < n->x || x > n->x + n->width)
    return -1;
  double top = n->y + st->padding + st->title_height + (n->subtitle && n->subtitle[0] ? st->line_height : 0);
  if (y < top || st->line_height <= 0)
    return -1;
  guint row = (guint) floor ((y - top) / st->line_height);
  return row < n->n_lines ? (int) row : -1;
}

/* Finding and revealing */

int
owb_graph_scene_find_op (const OwbGraphScene *scene, const OwbNode *node)
{
  guint l = GPOINTER_TO_UINT (g_hash_table_lookup (scene->leaf_of_node, node));
  return l ? scene->leaves[l - 1].visible : -1;
}

/* The group's box, or the collapsed group that hides it; -1 for an unknown scope. */
int
owb_graph_scene_find_group (const OwbGraphScene *scene, const char *scope)
{
  Scope *s = scope ? g_hash_table_lookup (scene->scope_by_path, scope) : NULL;
  return s ? s->visible : -1;
}

gboolean
owb_graph_scene_set_expanded (OwbGraphScene *scene, const char *scope, gboolean expanded,
                              GCancellable *cancellable, GError **error)
{
  Scope *s = scope ? g_hash_table_lookup (scene->scope_by_path, scope) : NULL;
  if (s == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("The graph has no group “%s”"),
                   scope ? scope : "");
      return FALSE;
    }
  expanded = !!expanded;
  if (s->expanded == expanded)
    return TRUE;
  return apply_changes (scene, &s, 1, &expanded, cancellable, error);
}

gboolean
owb_graph_scene_reveal (OwbGraphScene *scene, const OwbNode *node, GCancellable *cancellable,
                        GError **error)
{
  guint l = GPOINTER_TO_UINT (g_hash_table_lookup (scene->leaf_of_node, node));
  if (l == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("The node is not in this graph"));
      return FALSE;
    }
  g_autoptr (GPtrArray) changes = g_ptr_array_new ();
  for (Scope *s = scene->leaves[l - 1].scope; s->parent; s = s->parent)
    if (!s->expanded)
      g_ptr_array_add (changes, s);
  if (changes->len == 0)
    return TRUE;
  g_autofree gboolean *states = g_new (gboolean, changes->len);
  for (guint i = 0; i < changes->len; i++)
    states[i] = TRUE;
  return apply_changes (scene, (Scope **) changes->pdata, changes->len, states, cancellable, error);
}

/* A find query folded once for matches (): ASCII queries (nearly all: names, op types) fold
 * without allocating per node, others by Unicode case folding. */
static char *
fold_query (const char *query, gboolean *ascii)
{
  *ascii = TRUE;
  for (const char *q = query; *q; q++)
    if ((guchar) *q >= 0x80)
      *ascii = FALSE;
  return *ascii ? g_ascii_strdown (query, -1) : g_utf8_casefold (query, -1);
}

/* Case-insensitive substring test; `needle` is already folded. */
static gboolean
matches (const char *haystack, const char *needle, gboolean ascii)
{
  if (haystack == NULL || haystack[0] == '\0')
    return FALSE;
  if (!ascii)
    {
      g_autofree char *folded = g_utf8_casefold (haystack, -1);
      return strstr (folded, needle) != NULL;
    }
  gsize n = strlen (needle);
  for (const char *h = haystack; *h; h++)
    if (g_ascii_strncasecmp (h, needle, n) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
node_matches (const OwbNode *node, const char *needle, gboolean ascii)
{
  gboolean hit = matches (node->name, needle, ascii) || matches (node->op_type, needle, ascii);
  for (int k = 0; !hit && k < node->n_inputs; k++)
    hit = matches (node->inputs[k], needle, ascii);
  for (int k = 0; !hit && k < node->n_outputs; k++)
    hit = matches (node->outputs[k], needle, ascii);
  return hit;
}

static void
find_nested (const OwbGraph *graph, const char *needle, gboolean ascii, GArray *steps, GPtrArray *found)
{
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      if (node_matches (node, needle, ascii))
        {
          OwbSceneMatch *match = g_new0 (OwbSceneMatch, 1);
          match->node = node;
          match->depth = steps->len;
          match->steps = g_memdup2 (steps->data, steps->len * sizeof (OwbSceneStep));
          g_ptr_array_add (found, match);
        }
      /* A node's bodies come right after it: the list reads in graph order, nesting included. */
      for (int a = 0; a < node->n_attributes; a++)
        {
          const OwbAttribute *attr = &node->attributes[a];
          if (attr->type != OWB_ATTR_GRAPH || !attr->g)
            continue;
          OwbSceneStep step = { node, attr->name };
          g_array_append_val (steps, step);
          find_nested (attr->g, needle, ascii, steps, found);
          g_array_set_size (steps, steps->len - 1);
        }
    }
}

void
owb_scene_match_free (OwbSceneMatch *match)
{
  if (!match)
    return;
  g_free (match->steps);
  g_free (match);
}

GPtrArray *
owb_graph_find_nested (const OwbGraph *graph, const char *query)
{
  GPtrArray *found = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_scene_match_free);
  if (graph == NULL || query == NULL || query[0] == '\0')
    return found;
  gboolean ascii;
  g_autofree char *needle = fold_query (query, &ascii);
  g_autoptr (GArray) steps = g_array_new (FALSE, FALSE, sizeof (OwbSceneStep));
  find_nested (graph, needle, ascii, steps, found);
  return found;
}

char *
owb_scene_step_label (const OwbSceneStep *step)
{
  const OwbNode *node = step->owner;
  const char *who = node->name && node->name[0] ? node->name : node->op_type;
  return g_strdup_printf ("%s › %s", who, step->attribute);
}

char *
owb_scene_match_dup_path (const OwbSceneMatch *match)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < match->depth; i++)
    {
      g_autofree char *step = owb_scene_step_label (&match->steps[i]);
      if (i)
        g_string_append (s, " › ");
      g_string_append (s, step);
    }
  return g_string_free (s, FALSE);
}

GPtrArray *
owb_graph_scene_find (const OwbGraphScene *scene, const char *query)
{
  GPtrArray *found = g_ptr_array_new ();
  if (query == NULL || query[0] == '\0')
    return found;
  gboolean ascii;
  g_autofree char *needle = fold_query (query, &ascii);
  const OwbGraph *graph = scene->graph;
  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      if (node_matches (node, needle, ascii))
        g_ptr_array_add (found, (gpointer) node);
    }
  return found;
}
