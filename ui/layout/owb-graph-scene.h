/* owb-graph-scene.h: what the graph canvas draws, GTK-free: an OwbGraph turned into boxes (ops,
 * graph inputs and outputs, scope groups), labelled and laid out, with routed edges carrying
 * inferred shapes. Large graphs open collapsed into the scopes exporters put in node names
 * ("/encoder/layer.3/attention/MatMul"), or into blocks of the scene's own when the names have
 * none; expanding a group re-lays out only that group's own content and the levels above it. */
#pragma once

#include <owb/owb-graph.h>
#include "owb-layout.h"

G_BEGIN_DECLS

typedef enum {
  OWB_SCENE_OP = 0,   /* one node of the graph */
  OWB_SCENE_GROUP,    /* a scope: a single box when collapsed, a frame around its members when expanded */
  OWB_SCENE_INPUT,    /* a graph input that callers feed (not an initializer) */
  OWB_SCENE_OUTPUT,   /* a graph output */
} OwbSceneNodeKind;

/* One line of text inside a box below its title. */
typedef struct {
  char *text;    /* "kernel 3×3 · stride 2", "W ⟨64×3×7×7⟩" */
  char *tensor;  /* the initializer the line shows, so a click can inspect it; NULL otherwise */
  char *subgraph; /* the graph attribute the line names ("then_branch"), so a double-click opens
                   * that one; NULL otherwise */
} OwbSceneLine;

typedef struct {
  OwbSceneNodeKind kind;
  const OwbNode *node;   /* OP: the node (borrowed from the graph) */
  char *value;           /* INPUT/OUTPUT: the value's name */
  char *scope;           /* GROUP: the full scope path ("/encoder/layer.3"); OP: the scope it is in ("" at top) */
  char *title;           /* OP: op type; GROUP: last scope segment; INPUT/OUTPUT: value name */
  char *subtitle;        /* OP: node name (may be ""); GROUP: "24 nodes"; INPUT/OUTPUT: its type */
  OwbSceneLine *lines;   /* OP: key attributes, then initializer inputs shown compactly */
  guint n_lines;
  const char *provider;  /* OP: the claiming provider (node->provider), NULL when unassigned */
  double x, y, width, height; /* scene units, top-left origin; an expanded GROUP encloses its members */
  int parent;            /* index of the enclosing expanded GROUP, -1 at top level */
  guint depth;           /* nesting depth: 0 at top level */
  gboolean expanded;     /* GROUP only */
  guint n_members;       /* GROUP: op nodes inside it, at any depth */
} OwbSceneNode;

typedef struct {
  guint from, to;        /* scene node indices (visible ones: collapsed groups stand for their members) */
  char *tensor;          /* the value carried (the first one, when several link the same boxes) */
  guint n_tensors;       /* values merged onto this edge */
  char *label;           /* inferred type and shape, "float32 1×64×56×56"; NULL when unknown */
  double *points;        /* n_points (x, y) pairs, scene units */
  guint n_points;
} OwbSceneEdge;

typedef enum {
  OWB_SCENE_FONT_TITLE = 0,
  OWB_SCENE_FONT_BODY,
  OWB_SCENE_FONT_LABEL,
} OwbSceneFont;

/* Width of text in scene units. Called from the thread that builds or re-lays out the scene, so
 * it must be thread-safe (the canvas measures glyph widths once on the main thread and sums). */
typedef double (*OwbSceneMeasureFunc) (const char *text, OwbSceneFont font, gpointer user_data);

typedef struct {
  OwbSceneMeasureFunc measure;  /* NULL: 7 scene units per character */
  gpointer measure_data;
  double title_height;          /* height of the title row */
  double line_height;           /* height of each subtitle/detail line */
  double padding;               /* inside a box */
  double min_width;             /* of an op box */
  guint max_lines;              /* detail lines shown per box before "…" */
  guint collapse_threshold;     /* graphs with more op nodes open collapsed to their top-level
                                 * scopes; 0 never collapses */
  gboolean compact;             /* Constant nodes, and ops that read only initializers and such
                                 * values (a weight's Identity, Transpose, DequantizeLinear), have
                                 * no box: their values show on their readers' boxes as weights do */
} OwbSceneStyle;

void owb_scene_style_init (OwbSceneStyle *style);

typedef struct _OwbGraphScene OwbGraphScene;

/* Builds and lays out the scene of `graph` (borrowed: it must outlive the scene). style may be
 * NULL (defaults; it is copied). Can run in a worker thread. NULL with G_IO_ERROR_CANCELLED when
 * cancelled. */
OwbGraphScene *owb_graph_scene_new (const OwbGraph *graph, const OwbSceneStyle *style,
                                    GCancellable *cancellable, GError **error);
void owb_graph_scene_free (OwbGraphScene *scene);

const OwbGraph *owb_graph_scene_get_graph (const OwbGraphScene *scene);
/* Nodes are in drawing order: a group comes before its members. Borrowed. */
guint owb_graph_scene_get_n_nodes (const OwbGraphScene *scene);
const OwbSceneNode *owb_graph_scene_get_node (const OwbGraphScene *scene, guint index);
guint owb_graph_scene_get_n_edges (const OwbGraphScene *scene);
const OwbSceneEdge *owb_graph_scene_get_edge (const OwbGraphScene *scene, guint index);
void owb_graph_scene_get_size (const OwbGraphScene *scene, double *width, double *height);
/* Graphs of more than collapse_threshold ops whose node names carry no scopes are cut into
 * blocks at their narrowest points (residual blocks, layers), grouped into "blocks 1–19" and so
 * on, and open collapsed like scoped models: the number of those blocks, 0 when the scopes come
 * from the names (or there are none). */
guint owb_graph_scene_get_n_blocks (const OwbGraphScene *scene);

/* Appends (as guint) the indices of nodes and edges whose bounds meet the rectangle, nodes in
 * drawing order; either array may be NULL. Uses a spatial index: cost grows with what is found,
 * not with the graph. */
void owb_graph_scene_query (const OwbGraphScene *scene, double x, double y, double width, double height,
                            GArray *node_indices, GArray *edge_indices);
/* The topmost node under a point, or -1; the edge within tolerance of a point, or -1. */
int owb_graph_scene_hit_node (const OwbGraphScene *scene, double x, double y);
int owb_graph_scene_hit_edge (const OwbGraphScene *scene, double x, double y, double tolerance);
/* The line of node `index` under a point (for clicks on initializer lines), or -1. */
int owb_graph_scene_hit_line (const OwbGraphScene *scene, guint index, double x, double y);

/* The visible scene node that shows `node`: its own box, or the collapsed group holding it; -1 if
 * the node is not in this graph. */
int owb_graph_scene_find_op (const OwbGraphScene *scene, const OwbNode *node);
int owb_graph_scene_find_group (const OwbGraphScene *scene, const char *scope);

/* Expands or collapses a scope. Only that group's content is laid out anew (and cached), then the
 * levels above it are re-placed; every other group keeps its inner layout. Scene node and edge
 * indices change: look nodes up again afterwards. */
gboolean owb_graph_scene_set_expanded (OwbGraphScene *scene, const char *scope, gboolean expanded,
                                       GCancellable *cancellable, GError **error);
/* Expands every group that holds `node`, so that it has a box of its own. */
gboolean owb_graph_scene_reveal (OwbGraphScene *scene, const OwbNode *node, GCancellable *cancellable,
                                 GError **error);

/* Shows `graph` in place of the graph the scene was built from, keeping its layout and indices:
 * for the same graph prepared (the same nodes and values, maybe in another order, now claimed by
 * providers). The boxes take the new nodes and their providers; node_map (may be NULL) gets each
 * old node -> its new one. FALSE, with the scene unchanged, when the graphs differ. With `graph`
 * the scene's own graph, only the providers are read again. */
gboolean owb_graph_scene_rebind (OwbGraphScene *scene, const OwbGraph *graph, GHashTable *node_map);

/* Nodes (const OwbNode *, in graph order) whose name, op type, or an input or output value name
 * contains `query`, ignoring case. Members of collapsed groups are found too. */
GPtrArray *owb_graph_scene_find (const OwbGraphScene *scene, const char *query);

/* Finding inside subgraphs. A step goes from a node into one of its graph attributes. */
typedef struct {
  const OwbNode *owner;    /* the If/Loop/Scan node (borrowed) */
  const char *attribute;   /* "then_branch" (borrowed from the node) */
} OwbSceneStep;

typedef struct {
  const OwbNode *node;     /* the node found (borrowed) */
  guint depth;             /* 0: in the graph searched; otherwise reached through `steps` */
  OwbSceneStep *steps;
} OwbSceneMatch;

/* Nodes matched as owb_graph_scene_find does, in `graph` and in every subgraph below it (If
 * branches, Loop and Scan bodies, nested ones), each node followed by its bodies' matches.
 * A GPtrArray of OwbSceneMatch * that frees them. */
GPtrArray *owb_graph_find_nested (const OwbGraph *graph, const char *query);
void owb_scene_match_free (OwbSceneMatch *match);
/* "If_3 › then_branch" (the node's name, or its op type when it has none); caller frees. */
char *owb_scene_step_label (const OwbSceneStep *step);
/* The steps joined: "If_3 › then_branch › If_5 › else_branch"; "" at depth 0. Caller frees. */
char *owb_scene_match_dup_path (const OwbSceneMatch *match);

/* The values (not initializers) that `body`, a subgraph, reads from the graphs around it: names
 * its nodes (nested bodies included) and its outputs read that it does not define, in the order
 * they are first read. A GPtrArray of names borrowed from the graph. */
GPtrArray *owb_scene_dup_outer_values (const OwbGraph *body);

/* A value's type with its dimension names whole (boxes and edges shorten long ones): for
 * tooltips. NULL when nothing is known. */
char *owb_scene_format_type_full (const OwbValueType *type);

/* The colour of a provider ("cpu", "cuda"; NULL: unassigned), as 0..1 RGB, the same for the
 * canvas, its legend and the SVG export. */
void owb_scene_provider_color (const char *provider, double rgb[3]);

/* The whole scene as a standalone SVG document; caller frees. */
char *owb_graph_scene_to_svg (const OwbGraphScene *scene);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbGraphScene, owb_graph_scene_free)

G_END_DECLS
