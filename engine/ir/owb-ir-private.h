/* owb-ir-private.h: IR helpers shared inside the engine. */
#pragma once

#include <owb/owb-graph.h>

/* Adds to `refs` (a set of const char *) every name that `graph` or its nested subgraphs read
 * without defining: the values they take from outer scopes. */
void _owb_graph_collect_outer_refs (const OwbGraph *graph, GHashTable *refs);

/* Removes, in one sweep, every initializer for which `unused (name, user_data)` is TRUE (the
 * predicate sees the graph before any removal). Returns how many went. Removing them one by one
 * re-indexes the rest each time. */
guint _owb_graph_remove_initializers_if (OwbGraph *graph, gboolean (*unused) (const char *name, gpointer user_data),
                                         gpointer user_data);
