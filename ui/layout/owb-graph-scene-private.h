/* owb-graph-scene-private.h: what the scene's three files share: box text (owb-scene-text.c),
 * geometry of the rows inside a box, and the style the SVG export draws with. */
#pragma once

#include "owb-graph-scene.h"

/* ui/layout/meson.build does not pass the one ui/meson.build uses; the same name keeps one catalogue. */
#ifndef GETTEXT_PACKAGE
#define GETTEXT_PACKAGE "onnx-workbench"
#endif
#include <glib/gi18n-lib.h>

G_BEGIN_DECLS

/* Rows of an OP/INPUT/OUTPUT box, top to bottom, as the scene sizes them (and the canvas and
 * the SVG export draw them): `padding`, the title row (`title_height`), the subtitle row
 * (`line_height`, only when the subtitle is not empty), then one `line_height` row per line,
 * then `padding`. A GROUP box: `padding`, the title row, then (collapsed) the subtitle row, or
 * (expanded) `padding` and its members; `padding` on the other three sides. An expanded group is
 * wide enough for a title_height square (the expander) before its title. */
double _owb_scene_measure (const OwbSceneStyle *style, const char *text, OwbSceneFont font);

/* "float32 1×64×56×56", "int64 batch×128", "float32 scalar"; NULL when nothing is known.
 * Symbolic dimensions longer than OWB_SCENE_MAX_DIM_CHARS are shortened (_owb_scene_short_dim):
 * PaddlePaddle's "p2o.DynamicDimension.0" widened an input box to 700 pixels. */
char *_owb_scene_format_type (const OwbValueType *type);
#define OWB_SCENE_MAX_DIM_CHARS 16
/* "p2o.DynamicDimension.0" → "p2o…0"; a name of at most OWB_SCENE_MAX_DIM_CHARS characters as it is. */
char *_owb_scene_short_dim (const char *param);
/* "64×3×7×7" for a tensor's shape; "scalar" for rank 0. */
char *_owb_scene_format_tensor_shape (const OwbTensor *tensor);

/* The detail lines of an op box: key attributes, then its initializer inputs ("W ⟨64×3×7×7⟩",
 * "B = 0.5"), capped at style->max_lines plus a "…" line. Returns the number of lines. folded
 * (value name -> the const OwbNode * without a box that makes it; may be NULL): such inputs are
 * shown like initializers too. */
guint _owb_scene_node_lines (const OwbNode *node, const OwbGraph *graph, const OwbSceneStyle *style,
                             GHashTable *folded, OwbSceneLine **lines);
/* The initializer `name` seen from `graph` (searching outer scopes too), or NULL. */
OwbTensor *_owb_scene_find_initializer (const OwbGraph *graph, const char *name);

/* owb-scene-blocks.c: scopes for graphs whose node names have none. */
typedef struct {
  guint min_block;   /* nodes a block has at least (the last one may have fewer) */
  guint max_block;   /* nodes after which a block ends at its narrowest cut */
  guint fan_out;     /* members of a group of blocks, and groups at the top, at most */
} OwbSceneBlockOptions;

typedef struct {
  GPtrArray *paths;       /* of char *: each block's scope path ("/blocks 1–32/block 7") */
  guint *block_of_node;   /* by node index: the block the node is in */
  guint n_blocks;
} OwbSceneBlocks;

/* Cuts `graph` (nodes in topological order) into blocks at its narrowest cuts and groups them;
 * FALSE (blocks left empty) when there is nothing to cut. Linear in the graph's size. */
gboolean _owb_scene_find_blocks (const OwbGraph *graph, const OwbSceneBlockOptions *options,
                                 OwbSceneBlocks *blocks);
void _owb_scene_blocks_clear (OwbSceneBlocks *blocks);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (OwbSceneBlocks, _owb_scene_blocks_clear)

const OwbSceneStyle *_owb_graph_scene_get_style (const OwbGraphScene *scene);
/* How many levels the scene has laid out since it was built (for tests: expanding a group
 * must lay out that group and the levels above it, nothing else). */
guint _owb_graph_scene_get_n_layouts (const OwbGraphScene *scene);

G_END_DECLS
