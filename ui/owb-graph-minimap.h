/* owb-graph-minimap.h: a small picture of the whole graph in a corner of the canvas, with the part
 * on screen framed; a click or a drag there moves the view. Shown only while the graph does not
 * fit the view. Accessible name "Minimap". */
#pragma once

#include <gtk/gtk.h>

#include "owb-graph-view.h"

G_BEGIN_DECLS

#define OWB_TYPE_GRAPH_MINIMAP (owb_graph_minimap_get_type ())
G_DECLARE_FINAL_TYPE (OwbGraphMinimap, owb_graph_minimap, OWB, GRAPH_MINIMAP, GtkWidget)

GtkWidget *owb_graph_minimap_new (void);

/* The canvas it follows (not owned; NULL: none). */
void owb_graph_minimap_set_view (OwbGraphMinimap *self, OwbGraphView *view);
/* Centres the view on the scene point under minimap point (x, y). For tests and keyboard-less
 * use; the minimap's gestures call it. */
void owb_graph_minimap_move_to (OwbGraphMinimap *self, double x, double y);

G_END_DECLS
