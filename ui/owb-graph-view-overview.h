/* owb-graph-view-overview.h: the graph canvas far out: the scene as a density image (where the
 * boxes are, in their colours, and the edges between them) at halving sizes, drawn as one texture
 * where tiles of render nodes would each hold thousands of boxes, and where cairo fails (tiles
 * below 1/1024 overflowed its stack). */
#pragma once

#include <gtk/gtk.h>

#include "owb-graph-scene.h"

G_BEGIN_DECLS

typedef struct _OwbOverview OwbOverview;

/* The colour a box is drawn in (the canvas's plain colour for it). */
typedef GdkRGBA (*OwbOverviewColorFunc) (const OwbSceneNode *node, gpointer user_data);

/* Rasterizes `scene` (read now, not kept) at the largest scale up to max_scale pixels per scene
 * unit that keeps the image within max_pixels pixels and max_side pixels a side. */
OwbOverview *_owb_overview_new (const OwbGraphScene *scene, double max_scale, double max_pixels, int max_side,
                                OwbOverviewColorFunc color, gpointer user_data, const GdkRGBA *edge_color);
void _owb_overview_free (OwbOverview *overview);
/* Pixels per scene unit of the largest image. */
double _owb_overview_get_scale (const OwbOverview *overview);
/* The smallest image that is at least width × height pixels (or fills one of them), for a
 * minimap; borrowed. It spans extent_x × extent_y scene units from the scene's origin (the scene
 * and a little more); either may be NULL. */
GdkTexture *_owb_overview_get_texture (const OwbOverview *overview, int width, int height, double *extent_x,
                                       double *extent_y);
/* Appends the image fit for `zoom` (the least one at least as sharp as the screen), with the
 * scene's origin at pixel (x, y) of the snapshot. */
void _owb_overview_append (const OwbOverview *overview, GtkSnapshot *snapshot, double zoom, double x, double y);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbOverview, _owb_overview_free)

G_END_DECLS
