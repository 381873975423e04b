/* owb-graph-pane.h: the graph canvas with its bar (breadcrumb, zoom buttons, provider legend), its
 * find bar (entry "Find", match count, previous/next) and a busy overlay (progress, "Cancel Layout").
 * The window embeds one pane per document and talks to the canvas through owb_graph_pane_get_view. */
#pragma once

#include <gtk/gtk.h>
#include "owb-graph-minimap.h"
#include "owb-graph-view.h"

G_BEGIN_DECLS

#define OWB_TYPE_GRAPH_PANE (owb_graph_pane_get_type ())
G_DECLARE_FINAL_TYPE (OwbGraphPane, owb_graph_pane, OWB, GRAPH_PANE, GtkWidget)

GtkWidget *owb_graph_pane_new (void);

/* The canvas inside the pane (borrowed; lives as long as the pane). Set the graph, select, find,
 * export through it; the pane follows its signals (busy, progress, path, selection). */
OwbGraphView *owb_graph_pane_get_view (OwbGraphPane *self);

/* Shows or hides the find bar; showing it focuses the "Find" entry. Hiding it clears the find
 * highlight. Property "find-visible" follows the bar (also when the user closes it with Escape). */
void owb_graph_pane_set_find_visible (OwbGraphPane *self, gboolean visible);
gboolean owb_graph_pane_get_find_visible (OwbGraphPane *self);
void owb_graph_pane_toggle_find (OwbGraphPane *self);

/* "Preparing…" with a spinner in the bar while a session is prepared behind the graph on screen;
 * `description` (its tooltip and accessible description) says what changes when it is ready.
 * NULL hides it. */
void owb_graph_pane_set_preparing (OwbGraphPane *self, const char *description);
gboolean owb_graph_pane_get_preparing (OwbGraphPane *self);

/* The minimap in the canvas's corner (borrowed), shown while the graph does not fit the view. */
OwbGraphMinimap *owb_graph_pane_get_minimap (OwbGraphPane *self);
/* The find bar's list of every match with the subgraph it is in (filled from the view's matches
 * now; the pane fills it again each time it opens). Activating a row shows that match. */
GtkListBox *owb_graph_pane_get_match_list (OwbGraphPane *self);

G_END_DECLS
