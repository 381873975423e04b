/* owb-graph-layer-providers.c: provider colours as a layer, so the view draws them as it draws
 * any map: one way to colour a box, whichever layer decides. */
#include "owb-graph-layer-providers.h"

#include <glib/gi18n-lib.h>

#include "owb-graph-scene.h"

static gboolean
provider_color (const char *provider, GdkRGBA *color, gpointer user_data)
{
  double rgb[3];
  owb_scene_provider_color (provider, rgb);
  *color = (GdkRGBA){ (float) rgb[0], (float) rgb[1], (float) rgb[2], 1.0f };
  return TRUE;
}

OwbGraphLayer *
owb_graph_layer_providers_new (void)
{
  return owb_graph_layer_new_for_providers (_("Providers"), provider_color, NULL, NULL);
}
