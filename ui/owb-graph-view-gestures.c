/* owb-graph-view-gestures.c: the graph canvas's viewport (zoom, scroll, fit, where a new scene
 * opens) and the input that moves it: clicks, drags, the wheel, pinch zoom, keys and actions, and
 * tooltips. */
#include "owb-graph-view-private.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

/* ---- view geometry ---- */

static void
clamp_scroll (OwbGraphView *self)
{
  if (!self->scene)
    return;
  double sw, sh;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  double vw = gtk_widget_get_width (GTK_WIDGET (self)) / self->zoom;
  double vh = gtk_widget_get_height (GTK_WIDGET (self)) / self->zoom;
  /* Keep at least a quarter of the view on the graph, so it cannot be lost off screen. */
  double mx = vw * 0.75, my = vh * 0.75;
  self->scroll_x = CLAMP (self->scroll_x, -mx, MAX (sw - vw + mx, -mx));
  self->scroll_y = CLAMP (self->scroll_y, -my, MAX (sh - vh + my, -my));
}

/* The least zoom: the graph at half the size that fits the view (further out it would only
 * shrink to nothing), or 1/4 for graphs that fit at that; at most MIN_ZOOM. */
static double
least_zoom (OwbGraphView *self)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self)), height = gtk_widget_get_height (GTK_WIDGET (self));
  if (!self->scene || width <= 1 || height <= 1)
    return MIN_ZOOM;
  double sw, sh;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  double fits = MIN (width / MAX (sw, 1.0), height / MAX (sh, 1.0));
  return MAX (MIN_ZOOM, MIN (LEAST_ZOOM_LIMIT, fits / 2));
}

void
_owb_graph_view_set_view (OwbGraphView *self, double zoom, double scroll_x, double scroll_y)
{
  zoom = CLAMP (zoom, least_zoom (self), MAX_ZOOM);
  gboolean zoom_changed = zoom != self->zoom;
  self->zoom = zoom;
  self->scroll_x = scroll_x;
  self->scroll_y = scroll_y;
  clamp_scroll (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  if (zoom_changed)
    g_object_notify_by_pspec (G_OBJECT (self), _owb_graph_view_properties[PROP_ZOOM]);
  g_signal_emit (self, _owb_graph_view_signals[VIEWPORT_CHANGED], 0);
}

/* Zooms keeping the scene point under widget point (px, py) where it is. */
static void
zoom_at (OwbGraphView *self, double zoom, double px, double py)
{
  zoom = CLAMP (zoom, least_zoom (self), MAX_ZOOM);
  double sx = self->scroll_x + px / self->zoom;
  double sy = self->scroll_y + py / self->zoom;
  _owb_graph_view_set_view (self, zoom, sx - px / zoom, sy - py / zoom);
}

void
_owb_graph_view_center_on (OwbGraphView *self, double x, double y)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  if (width <= 1 || height <= 1)
    {
      self->center_pending = TRUE;
      self->center_x = x;
      self->center_y = y;
      return;
    }
  _owb_graph_view_set_view (self, self->zoom, x - width / (2 * self->zoom), y - height / (2 * self->zoom));
}

void
_owb_graph_view_fit (OwbGraphView *self)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  if (!self->scene || width <= 1 || height <= 1)
    {
      self->fit_pending = TRUE;
      return;
    }
  self->fit_pending = FALSE;
  double sw, sh;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  double zoom = MIN ((width - 2 * FIT_MARGIN) / MAX (sw, 1.0), (height - 2 * FIT_MARGIN) / MAX (sh, 1.0));
  zoom = CLAMP (zoom, MIN_ZOOM, FIT_MAX_ZOOM);
  _owb_graph_view_set_view (self, zoom, sw / 2 - width / (2 * zoom), sh / 2 - height / (2 * zoom));
}

/* A new scene opens whole when it can be read whole; otherwise at a readable zoom on its top
 * (where the inputs are), since a graph shown as specks tells nothing until zoomed. */
void
_owb_graph_view_place_initially (OwbGraphView *self)
{
  int width = gtk_widget_get_width (GTK_WIDGET (self));
  int height = gtk_widget_get_height (GTK_WIDGET (self));
  if (!self->scene || width <= 1 || height <= 1)
    {
      self->place_pending = TRUE;
      return;
    }
  self->place_pending = FALSE;
  _owb_graph_view_fit (self);
  if (self->zoom >= READABLE_ZOOM)
    return;
  /* On the first nodes: the boxes of the top rank (as far down as the top box is tall), centred
   * when they fit across, else from the leftmost. The middle of the whole graph's top was empty
   * in graphs whose wide part is further down (detection heads, a U-Net), and the view blank. */
  double top = G_MAXDOUBLE, row = 0;
  guint n = owb_graph_scene_get_n_nodes (self->scene);
  for (guint i = 0; i < n; i++)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, i);
      if (node->kind != OWB_SCENE_GROUP && node->y < top)
        {
          top = node->y;
          row = node->height;
        }
    }
  double sw, sh;
  owb_graph_scene_get_size (self->scene, &sw, &sh);
  double view_width = width / READABLE_ZOOM;
  double x = sw / 2 - view_width / 2;
  if (top < G_MAXDOUBLE)
    {
      double left = G_MAXDOUBLE, right = -G_MAXDOUBLE;
      for (guint i = 0; i < n; i++)
        {
          const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, i);
          if (node->kind != OWB_SCENE_GROUP && node->y <= top + row)
            {
              left = MIN (left, node->x);
              right = MAX (right, node->x + node->width);
            }
        }
      x = right - left + 2 * FIT_MARGIN / READABLE_ZOOM <= view_width ? (left + right) / 2 - view_width / 2
                                                                       : left - FIT_MARGIN / READABLE_ZOOM;
    }
  _owb_graph_view_set_view (self, READABLE_ZOOM, x, MIN (top, 0) - FIT_MARGIN / READABLE_ZOOM);
}

void
owb_graph_view_center_on (OwbGraphView *self, double x, double y)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  self->fit_pending = self->place_pending = FALSE;
  _owb_graph_view_center_on (self, x, y);
}

/* ---- zoom ---- */

double
owb_graph_view_get_zoom (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 1.0);
  return self->zoom;
}

void
owb_graph_view_set_zoom (OwbGraphView *self, double zoom)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  self->fit_pending = self->place_pending = FALSE;
  zoom_at (self, zoom, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0, gtk_widget_get_height (GTK_WIDGET (self)) / 2.0);
}

void
owb_graph_view_zoom_in (OwbGraphView *self)
{
  owb_graph_view_set_zoom (self, self->zoom * ZOOM_STEP);
}

void
owb_graph_view_zoom_out (OwbGraphView *self)
{
  owb_graph_view_set_zoom (self, self->zoom / ZOOM_STEP);
}

void
owb_graph_view_zoom_to_fit (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  self->place_pending = FALSE;
  _owb_graph_view_fit (self);
}

void
owb_graph_view_get_scroll (OwbGraphView *self, double *x, double *y)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (x)
    *x = self->scroll_x;
  if (y)
    *y = self->scroll_y;
}

void
owb_graph_view_scroll_by (OwbGraphView *self, double dx, double dy)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  _owb_graph_view_set_view (self, self->zoom, self->scroll_x + dx / self->zoom, self->scroll_y + dy / self->zoom);
}

/* ---- input ---- */

static void
toggle_group (OwbGraphView *self, int index, double px, double py)
{
  const OwbSceneNode *group = owb_graph_scene_get_node (self->scene, index);
  g_autofree char *scope = g_strdup (group->scope);
  gboolean expand = !group->expanded;
  /* Keep the point of the group under the pointer where it is. */
  double offset_x = self->scroll_x + px / self->zoom - group->x;
  double offset_y = self->scroll_y + py / self->zoom - group->y;
  g_autoptr (GError) error = NULL;
  if (!owb_graph_scene_set_expanded (self->scene, scope, expand, NULL, &error))
    {
      g_signal_emit (self, _owb_graph_view_signals[LAYOUT_FAILED], 0, error);
      return;
    }
  int after = owb_graph_scene_find_group (self->scene, scope);
  _owb_graph_view_scene_changed (self);
  if (after < 0)
    return;
  const OwbSceneNode *moved = owb_graph_scene_get_node (self->scene, after);
  /* Collapsing shrinks the box: clamp so the point stays inside it. */
  offset_x = MIN (offset_x, moved->width);
  offset_y = MIN (offset_y, moved->height);
  _owb_graph_view_set_view (self, self->zoom, moved->x + offset_x - px / self->zoom, moved->y + offset_y - py / self->zoom);
}

static gboolean
node_has_subgraph (const OwbNode *node)
{
  for (int i = 0; node && i < node->n_attributes; i++)
    if (node->attributes[i].type == OWB_ATTR_GRAPH && node->attributes[i].g)
      return TRUE;
  return FALSE;
}

static void
click_pressed (GtkGestureClick *gesture, int n_press, double x, double y, OwbGraphView *self)
{
  gtk_widget_grab_focus (GTK_WIDGET (self));
  owb_graph_view_click (self, x, y, n_press);
}

void
owb_graph_view_click (OwbGraphView *self, double x, double y, int n_press)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->scene)
    return;
  double sx = self->scroll_x + x / self->zoom, sy = self->scroll_y + y / self->zoom;
  int index = owb_graph_scene_hit_node (self->scene, sx, sy);
  const OwbSceneNode *node = index >= 0 ? owb_graph_scene_get_node (self->scene, index) : NULL;

  if (n_press == 2 && node)
    {
      if (node->kind == OWB_SCENE_GROUP)
        toggle_group (self, index, x, y);
      else if (node->kind == OWB_SCENE_OP && node_has_subgraph (node->node))
        {
          /* A branch's own line opens that branch; elsewhere, a node with several asks which. */
          int line = owb_graph_scene_hit_line (self->scene, index, sx, sy);
          if (line >= 0 && (guint) line < node->n_lines && node->lines[line].subgraph)
            owb_graph_view_open_subgraph (self, node->node, node->lines[line].subgraph);
          else if (_owb_graph_view_count_graph_attributes (node->node) > 1)
            _owb_graph_view_choose_subgraph (self, node->node, x, y);
          else
            owb_graph_view_open_subgraph (self, node->node, NULL);
        }
      return;
    }
  if (n_press != 1)
    return;
  if (node && node->kind == OWB_SCENE_OP)
    {
      int line = owb_graph_scene_hit_line (self->scene, index, sx, sy);
      if (line >= 0 && (guint) line < node->n_lines && node->lines[line].tensor)
        _owb_graph_view_select_internal (self, NULL, node->lines[line].tensor, node->node);
      else
        _owb_graph_view_select_internal (self, node->node, NULL, NULL);
      return;
    }
  if (node && (node->kind == OWB_SCENE_INPUT || node->kind == OWB_SCENE_OUTPUT))
    {
      _owb_graph_view_select_internal (self, NULL, node->value, NULL);
      return;
    }
  int edge = owb_graph_scene_hit_edge (self->scene, sx, sy, CLICK_TOLERANCE / self->zoom);
  if (edge >= 0)
    _owb_graph_view_select_internal (self, NULL, owb_graph_scene_get_edge (self->scene, edge)->tensor, NULL);
  else if (!node)
    _owb_graph_view_select_internal (self, NULL, NULL, NULL);
}

/* A value's type with long dimension names whole (the box shortens them). */
static char *
dup_full_type (OwbGraphView *self, const char *name)
{
  /* A subgraph's values from outside are typed in the graphs around it. */
  for (const OwbGraph *g = owb_graph_scene_get_graph (self->scene); g; g = g->parent)
    {
      const OwbValueInfo *info = owb_graph_find_value_info (g, name);
      if (info && info->has_type)
        return owb_scene_format_type_full (&info->type);
    }
  return NULL;
}

/* Hovering tells what a box or edge is in full: names are often ellipsized in the box. */
gboolean
_owb_graph_view_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  if (!self->scene || keyboard)
    return FALSE;
  double sx = self->scroll_x + x / self->zoom, sy = self->scroll_y + y / self->zoom;
  int index = owb_graph_scene_hit_node (self->scene, sx, sy);
  g_autofree char *text = NULL;
  if (index >= 0)
    {
      const OwbSceneNode *node = owb_graph_scene_get_node (self->scene, index);
      switch (node->kind)
        {
        case OWB_SCENE_OP:
          {
            g_autofree char *described = owb_node_describe (node->node);
            text = node->provider ? g_strdup_printf (_("%s\nRuns on %s"), described, node->provider)
                                  : g_strdup (described);
            if (node_has_subgraph (node->node))
              {
                int line = owb_graph_scene_hit_line (self->scene, index, sx, sy);
                const char *subgraph = line >= 0 && (guint) line < node->n_lines ? node->lines[line].subgraph : NULL;
                g_autofree char *hint = subgraph ? g_strdup_printf (_("Double-click to open %s"), subgraph)
                                        : _owb_graph_view_count_graph_attributes (node->node) > 1
                                          ? g_strdup (_("Double-click to choose a subgraph to open"))
                                          : g_strdup (_("Double-click to open its subgraph"));
                char *more = g_strdup_printf ("%s\n%s", text, hint);
                g_free (text);
                text = more;
              }
          }
          break;
        case OWB_SCENE_GROUP:
          text = g_strdup_printf ("%s (%s)\n%s", node->scope, node->subtitle,
                                  node->expanded ? _("Double-click to collapse") : _("Double-click to expand"));
          break;
        case OWB_SCENE_INPUT:
          {
            g_autofree char *type = dup_full_type (self, node->value);
            text = g_strdup_printf (_("Graph input %s: %s"), node->value, type ? type : node->subtitle);
          }
          break;
        case OWB_SCENE_OUTPUT:
          {
            g_autofree char *type = dup_full_type (self, node->value);
            text = g_strdup_printf (_("Graph output %s: %s"), node->value, type ? type : node->subtitle);
          }
          break;
        }
    }
  else
    {
      int edge_index = owb_graph_scene_hit_edge (self->scene, sx, sy, CLICK_TOLERANCE / self->zoom);
      if (edge_index < 0)
        return FALSE;
      const OwbSceneEdge *edge = owb_graph_scene_get_edge (self->scene, edge_index);
      text = edge->n_tensors > 1
                 ? g_strdup_printf (ngettext ("%s and %u more value", "%s and %u more values", edge->n_tensors - 1),
                                    edge->tensor, edge->n_tensors - 1)
                 : g_strdup (edge->tensor);
      g_autofree char *type = edge->tensor ? dup_full_type (self, edge->tensor) : NULL;
      if (type || edge->label)
        {
          char *more = g_strdup_printf ("%s\n%s", text, type ? type : edge->label);
          g_free (text);
          text = more;
        }
    }
  if (!text)
    return FALSE;
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
drag_begin (GtkGestureDrag *gesture, double x, double y, OwbGraphView *self)
{
  self->drag_scroll_x = self->scroll_x;
  self->drag_scroll_y = self->scroll_y;
  self->dragging = FALSE;
}

static void
drag_update (GtkGestureDrag *gesture, double dx, double dy, OwbGraphView *self)
{
  /* A press that hardly moves is a click, not a pan. */
  if (!self->dragging && !gtk_drag_check_threshold (GTK_WIDGET (self), 0, 0, (int) dx, (int) dy))
    return;
  if (!self->dragging)
    {
      self->dragging = TRUE;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
    }
  self->fit_pending = FALSE;
  _owb_graph_view_set_view (self, self->zoom, self->drag_scroll_x - dx / self->zoom, self->drag_scroll_y - dy / self->zoom);
}

static void
drag_end (GtkGestureDrag *gesture, double dx, double dy, OwbGraphView *self)
{
  self->dragging = FALSE;
  gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
}

static gboolean
scrolled (GtkEventControllerScroll *controller, double dx, double dy, OwbGraphView *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  gboolean smooth = gtk_event_controller_scroll_get_unit (controller) == GDK_SCROLL_UNIT_SURFACE;
  self->fit_pending = FALSE;
  if (state & GDK_CONTROL_MASK)
    {
      double px = self->has_pointer ? self->pointer_x : gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
      double py = self->has_pointer ? self->pointer_y : gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;
      double factor = smooth ? exp (-dy * 0.01) : pow (ZOOM_STEP, -dy);
      zoom_at (self, self->zoom * factor, px, py);
      return TRUE;
    }
  if (state & GDK_SHIFT_MASK && dx == 0)
    {
      dx = dy;
      dy = 0;
    }
  double step = smooth ? 1.0 : SCROLL_STEP;
  owb_graph_view_scroll_by (self, dx * step, dy * step);
  return TRUE;
}

static void
motion (GtkEventControllerMotion *controller, double x, double y, OwbGraphView *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  self->has_pointer = TRUE;
}

static void
leave (GtkEventControllerMotion *controller, OwbGraphView *self)
{
  self->has_pointer = FALSE;
}

static void
zoom_begin (GtkGesture *gesture, GdkEventSequence *sequence, OwbGraphView *self)
{
  self->gesture_zoom = self->zoom;
  gtk_gesture_get_bounding_box_center (gesture, &self->gesture_x, &self->gesture_y);
}

static void
zoom_scale_changed (GtkGestureZoom *gesture, double scale, OwbGraphView *self)
{
  double x, y;
  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &x, &y))
    {
      x = self->gesture_x;
      y = self->gesture_y;
    }
  self->fit_pending = FALSE;
  zoom_at (self, self->gesture_zoom * scale, x, y);
}

static gboolean
pan_key (GtkWidget *widget, GVariant *args, gpointer user_data)
{
  double dx, dy;
  g_variant_get (args, "(dd)", &dx, &dy);
  owb_graph_view_scroll_by (OWB_GRAPH_VIEW (widget), dx * SCROLL_STEP, dy * SCROLL_STEP);
  return TRUE;
}

static void
view_action (GtkWidget *widget, const char *name, GVariant *parameter)
{
  OwbGraphView *self = OWB_GRAPH_VIEW (widget);
  if (g_str_equal (name, "graph.zoom-in"))
    owb_graph_view_zoom_in (self);
  else if (g_str_equal (name, "graph.zoom-out"))
    owb_graph_view_zoom_out (self);
  else if (g_str_equal (name, "graph.zoom-fit"))
    owb_graph_view_zoom_to_fit (self);
  else if (g_str_equal (name, "graph.find-next"))
    owb_graph_view_find_next (self);
  else if (g_str_equal (name, "graph.find-previous"))
    owb_graph_view_find_previous (self);
}

/* ---- setting up ---- */

void
_owb_graph_view_class_init_gestures (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "graph.zoom-in", NULL, view_action);
  gtk_widget_class_install_action (widget_class, "graph.zoom-out", NULL, view_action);
  gtk_widget_class_install_action (widget_class, "graph.zoom-fit", NULL, view_action);
  gtk_widget_class_install_action (widget_class, "graph.find-next", NULL, view_action);
  gtk_widget_class_install_action (widget_class, "graph.find-previous", NULL, view_action);

  const guint zoom_in_keys[] = { GDK_KEY_plus, GDK_KEY_equal, GDK_KEY_KP_Add };
  const guint zoom_out_keys[] = { GDK_KEY_minus, GDK_KEY_KP_Subtract };
  const guint fit_keys[] = { GDK_KEY_0, GDK_KEY_KP_0 };
  for (guint i = 0; i < G_N_ELEMENTS (zoom_in_keys); i++)
    gtk_widget_class_add_binding_action (widget_class, zoom_in_keys[i], 0, "graph.zoom-in", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (zoom_out_keys); i++)
    gtk_widget_class_add_binding_action (widget_class, zoom_out_keys[i], 0, "graph.zoom-out", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (fit_keys); i++)
    gtk_widget_class_add_binding_action (widget_class, fit_keys[i], 0, "graph.zoom-fit", NULL);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Left, 0, pan_key, "(dd)", -1.0, 0.0);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Right, 0, pan_key, "(dd)", 1.0, 0.0);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Up, 0, pan_key, "(dd)", 0.0, -1.0);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Down, 0, pan_key, "(dd)", 0.0, 1.0);
}

void
_owb_graph_view_init_gestures (OwbGraphView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);

  GtkGesture *click = gtk_gesture_click_new ();
  g_signal_connect (click, "pressed", G_CALLBACK (click_pressed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (click));

  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));

  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (scrolled), self);
  gtk_widget_add_controller (widget, scroll);

  GtkEventController *pointer = gtk_event_controller_motion_new ();
  g_signal_connect (pointer, "motion", G_CALLBACK (motion), self);
  g_signal_connect (pointer, "enter", G_CALLBACK (motion), self);
  g_signal_connect (pointer, "leave", G_CALLBACK (leave), self);
  gtk_widget_add_controller (widget, pointer);

  GtkGesture *zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (zoom_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (zoom_scale_changed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (zoom));
}
