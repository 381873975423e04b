/* owb-graph-view-labels.h: where the graph canvas writes each edge's label (its inferred type and
 * shape), placed once per scene so that labels of edges meeting at a box do not overwrite each
 * other, and so that every tile draws a label the same way. */
#pragma once

#include "owb-graph-scene.h"

G_BEGIN_DECLS

typedef struct _OwbEdgeLabels OwbEdgeLabels;

/* Places the labels of `scene`'s edges (read now, not kept), measured with `measure` in
 * OWB_SCENE_FONT_LABEL, each line_height tall. */
OwbEdgeLabels *_owb_edge_labels_new (const OwbGraphScene *scene, OwbSceneMeasureFunc measure, gpointer measure_data,
                                     double line_height);
void _owb_edge_labels_free (OwbEdgeLabels *labels);
/* The most a label reaches left or right of its edge, in scene units. */
double _owb_edge_labels_get_reach (const OwbEdgeLabels *labels);
/* The top-left corner of edge `index`'s label; FALSE when it has none (no label, or the place is
 * labelled already by an edge of the same value: edges that leave one output share their first
 * segment, and a label drawn twice would look bold). */
gboolean _owb_edge_labels_get (const OwbEdgeLabels *labels, guint index, double *x, double *y);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbEdgeLabels, _owb_edge_labels_free)

G_END_DECLS
