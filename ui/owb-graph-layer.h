/* owb-graph-layer.h: an overlay for the graph view from outside it (a sensitivity map, a time heat
 * map): a layer colours op nodes and may give each a short badge; the view asks it while drawing
 * instead of knowing every overlay itself. */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb.h>

G_BEGIN_DECLS

typedef struct _OwbGraphLayer OwbGraphLayer;

/* The colour of `node` on this layer; FALSE leaves the node as the view draws it (its provider
 * colour). Called on the main thread while drawing. */
typedef gboolean (*OwbGraphLayerColorFunc) (const OwbNode *node, GdkRGBA *color, gpointer user_data);
/* A short text drawn on the node's box ("12.3 dB"), newly allocated, or NULL for none. */
typedef char *(*OwbGraphLayerBadgeFunc) (const OwbNode *node, gpointer user_data);

/* name: what the layer shows ("Sensitivity"); badge may be NULL. */
OwbGraphLayer *owb_graph_layer_new (const char *name, OwbGraphLayerColorFunc color, OwbGraphLayerBadgeFunc badge,
                                    gpointer user_data, GDestroyNotify destroy);
OwbGraphLayer *owb_graph_layer_ref (OwbGraphLayer *layer);
void owb_graph_layer_unref (OwbGraphLayer *layer);
const char *owb_graph_layer_get_name (const OwbGraphLayer *layer);
gboolean owb_graph_layer_get_color (const OwbGraphLayer *layer, const OwbNode *node, GdkRGBA *color);
char *owb_graph_layer_dup_badge (const OwbGraphLayer *layer, const OwbNode *node);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbGraphLayer, owb_graph_layer_unref)

G_END_DECLS
