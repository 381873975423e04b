/* owb-graph-minimap.c: the whole graph small, from the canvas's overview image, with the part on
 * screen framed (see the header). */
#include "owb-graph-minimap.h"

#include <glib/gi18n-lib.h>
#include <math.h>

#include "owb-graph-scene.h"

#define MINIMAP_WIDTH 180
#define MINIMAP_HEIGHT 140
#define INSET 6.0          /* pixels between the card's edge and the picture */
#define MIN_VIEW_WIDTH 480 /* narrower canvases have no room for it */

struct _OwbGraphMinimap {
  GtkWidget parent_instance;

  OwbGraphView *view;  /* weak */
  gulong viewport_handler;
  guint visible_idle;
  double drag_x, drag_y;
};

G_DEFINE_FINAL_TYPE (OwbGraphMinimap, owb_graph_minimap, GTK_TYPE_WIDGET)

/* Where the scene is drawn: scene point (x, y) is at (ox + x * scale, oy + y * scale). */
static gboolean
get_geometry (OwbGraphMinimap *self, double *scale, double *ox, double *oy, double *sw, double *sh)
{
  const OwbGraphScene *scene = self->view ? owb_graph_view_get_scene (self->view) : NULL;
  if (!scene)
    return FALSE;
  owb_graph_scene_get_size (scene, sw, sh);
  *sw = MAX (*sw, 1);
  *sh = MAX (*sh, 1);
  double width = gtk_widget_get_width (GTK_WIDGET (self)), height = gtk_widget_get_height (GTK_WIDGET (self));
  *scale = MIN ((width - 2 * INSET) / *sw, (height - 2 * INSET) / *sh);
  if (*scale <= 0)
    return FALSE;
  *ox = (width - *sw * *scale) / 2;
  *oy = (height - *sh * *scale) / 2;
  return TRUE;
}

static gboolean
update_visible (gpointer data)
{
  OwbGraphMinimap *self = data;
  self->visible_idle = 0;
  gboolean visible = FALSE;
  const OwbGraphScene *scene = self->view ? owb_graph_view_get_scene (self->view) : NULL;
  if (scene)
    {
      double sw, sh, zoom = owb_graph_view_get_zoom (self->view);
      owb_graph_scene_get_size (scene, &sw, &sh);
      int vw = gtk_widget_get_width (GTK_WIDGET (self->view)), vh = gtk_widget_get_height (GTK_WIDGET (self->view));
      /* Only while some of the graph is off screen, and the canvas has room to spare. */
      visible = vw >= MIN_VIEW_WIDTH && vh >= 2 * MINIMAP_HEIGHT && (sw * zoom > vw + 1 || sh * zoom > vh + 1);
    }
  if (gtk_widget_get_visible (GTK_WIDGET (self)) != visible)
    gtk_widget_set_visible (GTK_WIDGET (self), visible);
  return G_SOURCE_REMOVE;
}

static void
viewport_changed (OwbGraphMinimap *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
  /* The view reports changes while it is allocated (fit on first show): showing the minimap then
   * would leave it unallocated for the frame being drawn, so it is decided after. */
  if (!self->visible_idle)
    self->visible_idle = g_idle_add_full (G_PRIORITY_HIGH_IDLE, update_visible, self, NULL);
}

static void
owb_graph_minimap_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  OwbGraphMinimap *self = OWB_GRAPH_MINIMAP (widget);
  double scale, ox, oy, sw, sh;
  if (!get_geometry (self, &scale, &ox, &oy, &sw, &sh))
    return;
  double extent_w, extent_h;
  GdkTexture *texture = owb_graph_view_get_overview (self->view, (int) ceil (sw * scale), (int) ceil (sh * scale),
                                                     &extent_w, &extent_h);
  if (texture)
    {
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (ox, oy, sw * scale, sh * scale));
      gtk_snapshot_append_texture (snapshot, texture, &GRAPHENE_RECT_INIT (ox, oy, extent_w * scale, extent_h * scale));
      gtk_snapshot_pop (snapshot);
    }

  /* The part of the graph on screen. */
  double sx, sy, zoom = owb_graph_view_get_zoom (self->view);
  owb_graph_view_get_scroll (self->view, &sx, &sy);
  double vw = gtk_widget_get_width (GTK_WIDGET (self->view)) / zoom;
  double vh = gtk_widget_get_height (GTK_WIDGET (self->view)) / zoom;
  graphene_rect_t frame = GRAPHENE_RECT_INIT (ox + sx * scale, oy + sy * scale, MAX (vw * scale, 3), MAX (vh * scale, 3));
  graphene_rect_t bounds = GRAPHENE_RECT_INIT (1, 1, gtk_widget_get_width (widget) - 2, gtk_widget_get_height (widget) - 2);
  if (!graphene_rect_intersection (&frame, &bounds, &frame))
    return;
  GdkRGBA accent = { 0.21, 0.52, 0.89, 1 }, fill = { 0.21, 0.52, 0.89, 0.16 };
  gtk_snapshot_append_color (snapshot, &fill, &frame);
  GskRoundedRect outline;
  gsk_rounded_rect_init_from_rect (&outline, &frame, 2);
  float widths[4] = { 1.5, 1.5, 1.5, 1.5 };
  GdkRGBA colors[4] = { accent, accent, accent, accent };
  gtk_snapshot_append_border (snapshot, &outline, widths, colors);
}

void
owb_graph_minimap_move_to (OwbGraphMinimap *self, double x, double y)
{
  g_return_if_fail (OWB_IS_GRAPH_MINIMAP (self));
  double scale, ox, oy, sw, sh;
  if (!get_geometry (self, &scale, &ox, &oy, &sw, &sh))
    return;
  owb_graph_view_center_on (self->view, CLAMP ((x - ox) / scale, 0, sw), CLAMP ((y - oy) / scale, 0, sh));
}

static void
drag_begin (GtkGestureDrag *gesture, double x, double y, OwbGraphMinimap *self)
{
  self->drag_x = x;
  self->drag_y = y;
  owb_graph_minimap_move_to (self, x, y);
}

static void
drag_update (GtkGestureDrag *gesture, double dx, double dy, OwbGraphMinimap *self)
{
  owb_graph_minimap_move_to (self, self->drag_x + dx, self->drag_y + dy);
}

static void
view_gone (gpointer data, GObject *where_the_view_was)
{
  OwbGraphMinimap *self = data;
  self->view = NULL;
  self->viewport_handler = 0;
}

void
owb_graph_minimap_set_view (OwbGraphMinimap *self, OwbGraphView *view)
{
  g_return_if_fail (OWB_IS_GRAPH_MINIMAP (self));
  if (self->view == view)
    return;
  if (self->view)
    {
      g_clear_signal_handler (&self->viewport_handler, self->view);
      g_object_weak_unref (G_OBJECT (self->view), view_gone, self);
    }
  self->view = view;
  if (view)
    {
      g_object_weak_ref (G_OBJECT (view), view_gone, self);
      self->viewport_handler = g_signal_connect_swapped (view, "viewport-changed", G_CALLBACK (viewport_changed), self);
    }
  viewport_changed (self);
}

static void
owb_graph_minimap_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                           int *minimum_baseline, int *natural_baseline)
{
  *minimum = *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? MINIMAP_WIDTH : MINIMAP_HEIGHT;
}

static void
owb_graph_minimap_dispose (GObject *object)
{
  OwbGraphMinimap *self = OWB_GRAPH_MINIMAP (object);
  owb_graph_minimap_set_view (self, NULL);
  g_clear_handle_id (&self->visible_idle, g_source_remove);
  G_OBJECT_CLASS (owb_graph_minimap_parent_class)->dispose (object);
}

static void
owb_graph_minimap_class_init (OwbGraphMinimapClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = owb_graph_minimap_dispose;
  widget_class->snapshot = owb_graph_minimap_snapshot;
  widget_class->measure = owb_graph_minimap_measure;
  gtk_widget_class_set_css_name (widget_class, "graphminimap");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
owb_graph_minimap_init (OwbGraphMinimap *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  gtk_widget_set_visible (widget, FALSE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);
  gtk_widget_add_css_class (widget, "card");
  gtk_widget_set_cursor_from_name (widget, "pointer");
  gtk_widget_set_tooltip_text (widget, _("The whole graph: click or drag to show a part of it"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Minimap"),
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                  _("The whole graph: click or drag to show a part of it"), -1);
  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));
}

GtkWidget *
owb_graph_minimap_new (void)
{
  return g_object_new (OWB_TYPE_GRAPH_MINIMAP, NULL);
}
