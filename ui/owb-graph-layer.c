/* owb-graph-layer.c: the layer object the graph view consults for box colours and badges. */
#include "owb-graph-layer.h"

struct _OwbGraphLayer {
  gatomicrefcount ref_count;
  char *name;
  OwbGraphLayerColorFunc color;                   /* an overlay's, or NULL */
  OwbGraphLayerProviderColorFunc provider_color;  /* a provider layer's, or NULL */
  OwbGraphLayerBadgeFunc badge;
  gpointer user_data;
  GDestroyNotify destroy;
};

/* A layer without its colour function; the constructors set the one of their kind. */
static OwbGraphLayer *
layer_new (const char *name, gpointer user_data, GDestroyNotify destroy)
{
  OwbGraphLayer *layer = g_new0 (OwbGraphLayer, 1);
  g_atomic_ref_count_init (&layer->ref_count);
  layer->name = g_strdup (name ? name : "");
  layer->user_data = user_data;
  layer->destroy = destroy;
  return layer;
}

OwbGraphLayer *
owb_graph_layer_new (const char *name, OwbGraphLayerColorFunc color, OwbGraphLayerBadgeFunc badge,
                     gpointer user_data, GDestroyNotify destroy)
{
  g_return_val_if_fail (color != NULL, NULL);
  OwbGraphLayer *layer = layer_new (name, user_data, destroy);
  layer->color = color;
  layer->badge = badge;
  return layer;
}

OwbGraphLayer *
owb_graph_layer_new_for_providers (const char *name, OwbGraphLayerProviderColorFunc color, gpointer user_data,
                                   GDestroyNotify destroy)
{
  g_return_val_if_fail (color != NULL, NULL);
  OwbGraphLayer *layer = layer_new (name, user_data, destroy);
  layer->provider_color = color;
  return layer;
}

OwbGraphLayer *
owb_graph_layer_ref (OwbGraphLayer *layer)
{
  g_return_val_if_fail (layer != NULL, NULL);
  g_atomic_ref_count_inc (&layer->ref_count);
  return layer;
}

void
owb_graph_layer_unref (OwbGraphLayer *layer)
{
  if (layer == NULL || !g_atomic_ref_count_dec (&layer->ref_count))
    return;
  if (layer->destroy)
    layer->destroy (layer->user_data);
  g_free (layer->name);
  g_free (layer);
}

const char *
owb_graph_layer_get_name (const OwbGraphLayer *layer)
{
  return layer->name;
}

gboolean
owb_graph_layer_get_color (const OwbGraphLayer *layer, const OwbNode *node, GdkRGBA *color)
{
  if (layer && layer->provider_color)
    return node && layer->provider_color (node->provider, color, layer->user_data);
  return layer && node && layer->color (node, color, layer->user_data);
}

gboolean
owb_graph_layer_get_box_color (const OwbGraphLayer *layer, const OwbNode *node, const char *provider, GdkRGBA *color)
{
  if (layer && layer->provider_color)
    return layer->provider_color (provider, color, layer->user_data);
  return layer && node && layer->color (node, color, layer->user_data);
}

gboolean
owb_graph_layer_get_tints_box (const OwbGraphLayer *layer)
{
  return layer && layer->color != NULL;
}

char *
owb_graph_layer_dup_badge (const OwbGraphLayer *layer, const OwbNode *node)
{
  return layer && node && layer->badge ? layer->badge (node, layer->user_data) : NULL;
}
