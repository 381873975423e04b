/* owb-ir-private.h: IR helpers shared inside the engine. */
#pragma once

#include <owb/owb-graph.h>

/* Adds to `refs` (a set of const char *) every name that `graph` or its nested subgraphs read
 * without defining: the values they take from outer scopes. */
void _owb_graph_collect_outer_refs (const OwbGraph *graph, GHashTable *refs);
