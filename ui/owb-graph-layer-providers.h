/* owb-graph-layer-providers.h: the graph view's default layer: each box's stripe in the colour of
 * the provider that runs its node, grey where none claims it; the same colours as the legend and
 * the SVG export (owb_scene_provider_color). */
#pragma once

#include "owb-graph-layer.h"

G_BEGIN_DECLS

/* Named "Providers". */
OwbGraphLayer *owb_graph_layer_providers_new (void);

G_END_DECLS
