/* owb-graph-layer.h: what colours the graph view's boxes, from outside it: the provider colours
 * (the view's default layer, owb-graph-layer-providers.c), a sensitivity map, a time heat map. A
 * layer colours boxes and may give each a short badge; the view asks it while drawing instead of
 * knowing every overlay itself. */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb.h>

G_BEGIN_DECLS

typedef struct _OwbGraphLayer OwbGraphLayer;

/* The colour of `node` on this layer; FALSE leaves the node as the view's default layer draws it
 * (its provider colour). Called on the main thread while drawing. */
typedef gboolean (*OwbGraphLayerColorFunc) (const OwbNode *node, GdkRGBA *color, gpointer user_data);
/* A short text drawn on the node's box ("12.3 dB"), newly allocated, or NULL for none. */
typedef char *(*OwbGraphLayerBadgeFunc) (const OwbNode *node, gpointer user_data);

/* The colour of a box by the provider the view shows it claimed by (NULL: none, as for inputs,
 * outputs and groups). The view's copy of the claim, not node->provider, which partitioning again
 * may replace while the graph is drawn. */
typedef gboolean (*OwbGraphLayerProviderColorFunc) (const char *provider, GdkRGBA *color, gpointer user_data);

/* An overlay: name is what it shows ("Sensitivity"); badge may be NULL. Its colour tints the
 * whole of an op's box: the colour is the point of the map. */
OwbGraphLayer *owb_graph_layer_new (const char *name, OwbGraphLayerColorFunc color, OwbGraphLayerBadgeFunc badge,
                                    gpointer user_data, GDestroyNotify destroy);
/* A layer that colours boxes by their provider; its colour marks only the stripe down the box's
 * left side (and fills boxes too small for text), the box keeps its own fill. As the view's
 * default layer it colours every box; set on the view, op boxes (like an overlay). */
OwbGraphLayer *owb_graph_layer_new_for_providers (const char *name, OwbGraphLayerProviderColorFunc color,
                                                  gpointer user_data, GDestroyNotify destroy);
OwbGraphLayer *owb_graph_layer_ref (OwbGraphLayer *layer);
void owb_graph_layer_unref (OwbGraphLayer *layer);
const char *owb_graph_layer_get_name (const OwbGraphLayer *layer);
gboolean owb_graph_layer_get_color (const OwbGraphLayer *layer, const OwbNode *node, GdkRGBA *color);
/* What the view asks for a box: its op node (NULL for inputs, outputs and groups) and the provider
 * the view shows for it. An overlay colours op boxes only; FALSE also for a NULL layer. */
gboolean owb_graph_layer_get_box_color (const OwbGraphLayer *layer, const OwbNode *node, const char *provider,
                                        GdkRGBA *color);
/* TRUE for an overlay (its colour tints the whole box), FALSE for a provider layer (the stripe). */
gboolean owb_graph_layer_get_tints_box (const OwbGraphLayer *layer);
char *owb_graph_layer_dup_badge (const OwbGraphLayer *layer, const OwbNode *node);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbGraphLayer, owb_graph_layer_unref)

G_END_DECLS
