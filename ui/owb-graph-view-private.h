/* owb-graph-view-private.h: what the files of the graph canvas share (not for other widgets).
 * The view is split by concern, as gnome-text-editor splits its window:
 *   owb-graph-view.c           the widget: graphs and their owners, the layout thread, selection,
 *                              highlight and layers, compact scenes
 *   owb-graph-view-draw.c      text metrics, the palette, level of detail, drawing a region
 *   owb-graph-view-tiles.c     the tile cache, the overlays drawn over it, the overview image,
 *                              the snapshot
 *   owb-graph-view-gestures.c  the viewport (zoom, scroll, fit) and the pointer, keys and
 *                              gestures that move it, clicks and tooltips
 *   owb-graph-view-find.c      find, the breadcrumb of subgraphs opened in place, the chooser
 *   owb-graph-view-export.c    the whole graph as PNG or SVG
 * Functions here are prefixed _owb_graph_view_ and run on the main thread. */
#pragma once

#include "owb-graph-view.h"
#include "owb-graph-view-labels.h"
#include "owb-graph-view-overview.h"

G_BEGIN_DECLS

#define TILE_PIXELS 512.0      /* a tile's size on screen at its bucket's zoom */
#define TILE_OVERLAP 2.0       /* pixels a tile draws past its right and bottom sides */
#define MAX_TILES 384          /* cached tiles before the cache is trimmed */
#define TILE_MIN_ZOOM (1.0 / 1024.0)  /* further out, cairo 1.16 overflowed its stack painting tiles */
#define MIN_ZOOM (1.0 / 1048576.0)   /* below TILE_MIN_ZOOM the overview image is drawn */
#define LEAST_ZOOM_LIMIT 0.25        /* every graph can be zoomed out to this (see least_zoom) */
/* Far out the view draws the scene's overview image (owb-graph-view-overview.c): from this zoom
 * (boxes of a few pixels) down, where the image is as sharp as the screen, and always below
 * TILE_MIN_ZOOM. Its size is bounded (16 MiB, and a side the GL renderer can take). */
#define OVERVIEW_ZOOM (1.0 / 16.0)
#define OVERVIEW_MAX_PIXELS 4.0e6
#define OVERVIEW_MAX_SIDE 8192
#define MAX_ZOOM 8.0
#define ZOOM_STEP 1.25
#define FIT_MAX_ZOOM 1.25      /* small graphs are not blown up past this by "fit" */
#define FIT_MARGIN 24.0        /* pixels around the graph when fitting */
#define READABLE_ZOOM 0.75     /* the least zoom a new scene opens at when it does not fit */
#define SCROLL_STEP 48.0       /* pixels per wheel notch or arrow key */
#define CLICK_TOLERANCE 5.0    /* pixels: how close a click must be to an edge */
#define STRIPE 4.0             /* scene units: the provider stripe at a box's left, inside the padding */
#define RADIUS 6.0
/* Paths are filled or stroked every PATH_CHUNK shapes: one fill of tens of thousands of boxes
 * overflowed the stack inside cairo (it recurses on sorted boxes), one fill per box makes a
 * recording of tens of thousands of commands. */
#define PATH_CHUNK 512

/* Level of detail, chosen from the zoom bucket so a cached tile always has one. */
typedef enum {
  LOD_PLAIN = 0,   /* coloured rectangles, straight edges */
  LOD_TITLES,      /* rounded boxes, titles only, routed edges */
  LOD_FULL,        /* everything but edge labels */
  LOD_LABELS,      /* everything, edge labels too */
} Lod;

/* Glyph widths measured on the main thread, so the scene can measure text in its thread
 * (owb-graph-view-draw.c). */
typedef struct _Metrics Metrics;

/* Whoever keeps the graph alive (owb-graph-view.c). */
typedef struct _OwnerHold OwnerHold;

/* One level of the breadcrumb: the main graph, or a subgraph opened in place. */
typedef struct {
  const OwbGraph *graph;
  char *label;
  OwbGraphScene *scene;  /* NULL while it is being built, or if that failed */
  double zoom, scroll_x, scroll_y;
  gboolean placed;       /* zoom and scroll hold a view to return to */
  const OwbNode *owner;  /* a subgraph: the node whose attribute it is (in the frame below) */
  char *attribute;       /* and that attribute's name; NULL for the main graph */
  /* What was selected here when a subgraph was opened above, shown again on coming back. */
  const OwbNode *selected_node, *selected_line_node;
  char *selected_tensor;
} Frame;

typedef struct {
  GdkRGBA background, fg, dim, box, box_border, group_fill, group_border, input, output, edge,
          accent, accent_fill, highlight, highlight_fill, match, current_match;
  gboolean dark;
} Palette;

struct _OwbGraphView {
  GtkWidget parent_instance;

  OwnerHold *owner;
  GPtrArray *frames;        /* of Frame *, the path; the last one is on screen */
  OwbGraphScene *scene;     /* the last frame's scene, borrowed; NULL while building */

  Metrics *metrics;
  OwbSceneStyle style;

  GCancellable *cancellable;
  guint build_serial;
  gboolean busy;
  /* A view that is not on screen (a page not shown) lays out when it is mapped, so that hidden
   * views do not take the cores from the one being looked at. */
  gboolean build_deferred;
  gint64 build_started;
  guint build_n_nodes;
  gboolean first_draw_pending;  /* a new scene not drawn yet: its first frame is timed */
  guint progress_source;

  double zoom, scroll_x, scroll_y;
  gboolean fit_pending;
  gboolean place_pending;
  gboolean center_pending;
  double center_x, center_y;

  GHashTable *tiles;        /* TileKey * -> GskRenderNode * */
  OwbOverview *overview;    /* built when first drawn far out; NULL when the scene changed */
  OwbEdgeLabels *labels;    /* where edge labels go, placed when first drawn */
  const OwbGraphScene *labels_scene;  /* the scene they were placed on; NULL when it changed */
  Palette palette;
  gboolean palette_valid;
  PangoLayout *layout;      /* reused for every text while building a tile */
  double draw_zoom;         /* the zoom the region being drawn is for */
  gboolean compact;         /* scenes leave Constants and weight chains out (OwbSceneStyle) */

  /* interaction */
  double drag_scroll_x, drag_scroll_y;
  gboolean dragging;
  double pointer_x, pointer_y;
  gboolean has_pointer;
  double gesture_zoom, gesture_x, gesture_y;

  /* selection, highlight, find */
  const OwbNode *selected_node;
  char *selected_tensor;
  const OwbNode *selected_line_node; /* the node whose initializer line was clicked */
  OwbGraphLayer *default_layer; /* the provider colours, where `layer` leaves a box */
  GHashTable *highlight;    /* node names */
  OwbGraphLayer *layer;     /* colours op boxes instead of their provider; NULL: none */
  GPtrArray *matches;       /* of OwbSceneMatch *, relative to the frame find_level */
  int match_index;
  guint find_level;
  char *find_query;
  const OwbNode *pending_select; /* selected once the subgraph being laid out is drawn */
  GtkWidget *branch_popover;     /* asks which subgraph of a node to open; NULL until needed */

  /* scene indices of what the overlays draw; recomputed when the scene or the sets change */
  gboolean overlays_valid;
  int ov_selected, ov_line_node, ov_current;
  GArray *ov_highlight, *ov_matches, *ov_edges;
};


enum { PROP_0, PROP_BUSY, PROP_ZOOM, PROP_MATCH_INDEX, PROP_N_MATCHES, N_PROPS };
extern GParamSpec *_owb_graph_view_properties[N_PROPS];

enum { LAYOUT_PROGRESS, LAYOUT_FAILED, SELECTION_CHANGED, PATH_CHANGED, SCENE_CHANGED, VIEWPORT_CHANGED, N_SIGNALS };
extern guint _owb_graph_view_signals[N_SIGNALS];

/* owb-graph-view.c: frames, building, selection */
Frame *_owb_graph_view_frame_new (const OwbGraph *graph, const char *label);
/* The frame on screen (the last of the path); NULL without a graph. */
Frame *_owb_graph_view_top_frame (OwbGraphView *self);
/* Lays out the top frame's graph in a worker thread (deferred until mapped). */
void _owb_graph_view_start_build (OwbGraphView *self);
void _owb_graph_view_set_busy (OwbGraphView *self, gboolean busy);
/* Another scene is shown, or the scene's content changed (expand, collapse). */
void _owb_graph_view_scene_changed (OwbGraphView *self);
void _owb_graph_view_clear_selection (OwbGraphView *self, gboolean notify);
/* Selects a node, or a value (tensor), or the initializer line of line_node; emits
 * "selection-changed" when that changes. */
void _owb_graph_view_select_internal (OwbGraphView *self, const OwbNode *node, const char *tensor,
                                      const OwbNode *line_node);
int _owb_graph_view_reader_box (OwbGraphView *self, const OwbNode *node);

/* owb-graph-view-draw.c */
void _owb_graph_view_ensure_metrics (OwbGraphView *self);
void _owb_graph_view_metrics_free (Metrics *metrics);
void _owb_graph_view_ensure_palette (OwbGraphView *self);
Lod _owb_graph_view_lod_for_zoom (double zoom);
void _owb_graph_view_draw_region (OwbGraphView *self, GtkSnapshot *snapshot, OwbGraphScene *scene,
                                  const graphene_rect_t *rect, double zoom);
void _owb_graph_view_append_outline (GtkSnapshot *snapshot, const graphene_rect_t *rect, double radius, double width,
                                     const GdkRGBA *color);
void _owb_graph_view_append_rounded_fill (GtkSnapshot *snapshot, const graphene_rect_t *rect, double radius,
                                          const GdkRGBA *color);
void _owb_graph_view_append_edges (GtkSnapshot *snapshot, OwbGraphScene *scene, const graphene_rect_t *pixels,
                                   const guint *indices, guint n, Lod lod, double zoom, double offset_x,
                                   double offset_y, const GdkRGBA *color, double width_px);
double _owb_graph_view_box_text_top (const OwbGraphView *self, const OwbSceneNode *node);
GdkRGBA _owb_graph_view_plain_color (const OwbGraphView *self, const OwbSceneNode *node);

/* owb-graph-view-tiles.c */
/* A table of cached tiles (TileKey -> GskRenderNode) for a new view. */
GHashTable *_owb_graph_view_tiles_new (void);
/* Drops cached tiles, the overview image and edge label places, and redraws. */
void _owb_graph_view_invalidate_tiles (OwbGraphView *self);
void _owb_graph_view_ensure_overlays (OwbGraphView *self);
void _owb_graph_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot);

/* owb-graph-view-gestures.c */
void _owb_graph_view_set_view (OwbGraphView *self, double zoom, double scroll_x, double scroll_y);
void _owb_graph_view_center_on (OwbGraphView *self, double x, double y);
void _owb_graph_view_fit (OwbGraphView *self);
void _owb_graph_view_place_initially (OwbGraphView *self);
gboolean _owb_graph_view_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip);
/* The view's actions and key bindings; its pointer, scroll and zoom controllers. */
void _owb_graph_view_class_init_gestures (GtkWidgetClass *widget_class);
void _owb_graph_view_init_gestures (OwbGraphView *self);

/* owb-graph-view-find.c */
void _owb_graph_view_clear_find (OwbGraphView *self);
gboolean _owb_graph_view_has_nested_matches (OwbGraphView *self);
gboolean _owb_graph_view_match_on_screen (OwbGraphView *self, const OwbSceneMatch *match);
guint _owb_graph_view_count_graph_attributes (const OwbNode *node);
void _owb_graph_view_choose_subgraph (OwbGraphView *self, const OwbNode *node, double x, double y);

G_END_DECLS
