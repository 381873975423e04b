/* owb-graph-view-find.c: find in the graph canvas (in the graph on screen and every subgraph below
 * it), the breadcrumb of subgraphs opened in place, and the popover that asks which one to open. */
#include "owb-graph-view-private.h"

#include <glib/gi18n-lib.h>
#include <string.h>

/* ---- find ---- */

void
_owb_graph_view_clear_find (OwbGraphView *self)
{
  gboolean had = self->matches && self->matches->len;
  g_clear_pointer (&self->matches, g_ptr_array_unref);
  g_clear_pointer (&self->find_query, g_free);
  self->match_index = -1;
  self->overlays_valid = FALSE;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.find-next", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.find-previous", FALSE);
  if (had)
    {
      g_object_notify_by_pspec (G_OBJECT (self), _owb_graph_view_properties[PROP_N_MATCHES]);
      g_object_notify_by_pspec (G_OBJECT (self), _owb_graph_view_properties[PROP_MATCH_INDEX]);
    }
}

static void push_frame (OwbGraphView *self, const OwbNode *node, const OwbAttribute *attr);
static void pop_to (OwbGraphView *self, guint index);

static const OwbAttribute *
graph_attribute (const OwbNode *node, const char *name)
{
  for (int i = 0; node && i < node->n_attributes; i++)
    if (node->attributes[i].type == OWB_ATTR_GRAPH && node->attributes[i].g &&
        (!name || strcmp (node->attributes[i].name, name) == 0))
      return &node->attributes[i];
  return NULL;
}

/* Shows the current match: on screen it is selected; inside a subgraph, the path from the find's
 * level down to it is opened (what is already open of it stays) and it is selected once drawn. */
static void
find_moved (OwbGraphView *self)
{
  self->overlays_valid = FALSE;
  g_object_notify_by_pspec (G_OBJECT (self), _owb_graph_view_properties[PROP_MATCH_INDEX]);
  const OwbSceneMatch *match = self->match_index >= 0 ? g_ptr_array_index (self->matches, self->match_index) : NULL;
  if (match && _owb_graph_view_match_on_screen (self, match))
    owb_graph_view_select_node (self, match->node);
  else if (match)
    {
      guint keep = 0;
      while (keep < match->depth && self->find_level + 1 + keep < self->frames->len)
        {
          const Frame *frame = g_ptr_array_index (self->frames, self->find_level + 1 + keep);
          if (frame->owner != match->steps[keep].owner ||
              g_strcmp0 (frame->attribute, match->steps[keep].attribute) != 0)
            break;
          keep++;
        }
      if (self->find_level + 1 + keep < self->frames->len)
        pop_to (self, self->find_level + keep);
      for (guint k = keep; k < match->depth; k++)
        push_frame (self, match->steps[k].owner, graph_attribute (match->steps[k].owner, match->steps[k].attribute));
      if (self->scene)
        owb_graph_view_select_node (self, match->node);
      else
        self->pending_select = match->node;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
_owb_graph_view_has_nested_matches (OwbGraphView *self)
{
  for (guint i = 0; self->matches && i < self->matches->len; i++)
    if (((const OwbSceneMatch *) self->matches->pdata[i])->depth > 0)
      return TRUE;
  return FALSE;
}

guint
owb_graph_view_find (OwbGraphView *self, const char *query)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 0);
  _owb_graph_view_clear_find (self);
  if (!self->scene || !query || !*query)
    {
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return 0;
    }
  /* Inside subgraphs too: the matches are relative to the level on screen now. */
  self->find_level = self->frames->len - 1;
  self->find_query = g_strdup (query);
  self->matches = owb_graph_find_nested (_owb_graph_view_top_frame (self)->graph, query);
  guint n = self->matches ? self->matches->len : 0;
  self->match_index = n ? 0 : -1;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.find-next", n > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "graph.find-previous", n > 0);
  g_object_notify_by_pspec (G_OBJECT (self), _owb_graph_view_properties[PROP_N_MATCHES]);
  find_moved (self);
  return n;
}

void
owb_graph_view_find_next (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->matches || self->matches->len == 0)
    return;
  self->match_index = (self->match_index + 1) % (int) self->matches->len;
  find_moved (self);
}

void
owb_graph_view_find_previous (OwbGraphView *self)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->matches || self->matches->len == 0)
    return;
  self->match_index = (self->match_index + (int) self->matches->len - 1) % (int) self->matches->len;
  find_moved (self);
}

const OwbSceneMatch *
owb_graph_view_get_match (OwbGraphView *self, guint index)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  if (!self->matches || index >= self->matches->len)
    return NULL;
  return g_ptr_array_index (self->matches, index);
}

void
owb_graph_view_set_match_index (OwbGraphView *self, guint index)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (!self->matches || index >= self->matches->len)
    return;
  self->match_index = (int) index;
  find_moved (self);
}

int
owb_graph_view_get_match_index (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), -1);
  return self->match_index;
}

guint
owb_graph_view_get_n_matches (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 0);
  return self->matches ? self->matches->len : 0;
}

/* ---- subgraphs ---- */

static void
save_view (OwbGraphView *self)
{
  Frame *frame = _owb_graph_view_top_frame (self);
  if (!frame)
    return;
  frame->zoom = self->zoom;
  frame->scroll_x = self->scroll_x;
  frame->scroll_y = self->scroll_y;
  frame->placed = TRUE;
  frame->selected_node = self->selected_node;
  frame->selected_line_node = self->selected_line_node;
  g_free (frame->selected_tensor);
  frame->selected_tensor = g_strdup (self->selected_tensor);
}

/* The subgraph `attr` of `node` (a node of the graph on screen) opens above it. The selection
 * changes too: nothing is selected in the subgraph, and whoever shows it (the inspector) now
 * describes the subgraph. */
static void
push_frame (OwbGraphView *self, const OwbNode *node, const OwbAttribute *attr)
{
  save_view (self);
  OwbSceneStep step = { node, attr->name };
  g_autofree char *label = owb_scene_step_label (&step);
  Frame *frame = _owb_graph_view_frame_new (attr->g, label);
  frame->owner = node;
  frame->attribute = g_strdup (attr->name);
  g_ptr_array_add (self->frames, frame);
  self->scene = NULL;
  self->pending_select = NULL;
  _owb_graph_view_clear_selection (self, FALSE);
  _owb_graph_view_invalidate_tiles (self);
  _owb_graph_view_start_build (self);
  g_signal_emit (self, _owb_graph_view_signals[PATH_CHANGED], 0);
  g_signal_emit (self, _owb_graph_view_signals[SCENE_CHANGED], 0);
  g_signal_emit (self, _owb_graph_view_signals[SELECTION_CHANGED], 0);
}

/* Back to frame `index`, with the view and the selection it had when a subgraph was opened. */
static void
pop_to (OwbGraphView *self, guint index)
{
  if (self->busy)
    {
      g_cancellable_cancel (self->cancellable);
      self->build_serial++;
      _owb_graph_view_set_busy (self, FALSE);
    }
  g_ptr_array_set_size (self->frames, index + 1);
  Frame *frame = _owb_graph_view_top_frame (self);
  self->scene = frame->scene;
  self->pending_select = NULL;
  _owb_graph_view_clear_selection (self, FALSE);
  self->selected_node = frame->selected_node;
  self->selected_line_node = frame->selected_line_node;
  self->selected_tensor = g_strdup (frame->selected_tensor);
  _owb_graph_view_scene_changed (self);
  if (frame->placed)
    _owb_graph_view_set_view (self, frame->zoom, frame->scroll_x, frame->scroll_y);
  else
    _owb_graph_view_place_initially (self);
  if (!self->scene)
    _owb_graph_view_start_build (self);
  g_signal_emit (self, _owb_graph_view_signals[PATH_CHANGED], 0);
  g_signal_emit (self, _owb_graph_view_signals[SELECTION_CHANGED], 0);
}

void
owb_graph_view_open_subgraph (OwbGraphView *self, const OwbNode *node, const char *attribute)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  g_return_if_fail (node != NULL);
  const OwbAttribute *attr = graph_attribute (node, attribute);
  if (!attr || self->busy)
    return;
  if (self->branch_popover)
    gtk_popover_popdown (GTK_POPOVER (self->branch_popover));
  /* Matches found from this level or below stay valid: the path keeps the find's level. */
  push_frame (self, node, attr);
}

guint
owb_graph_view_get_path_length (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), 0);
  return self->frames->len;
}

const char *
owb_graph_view_get_path_label (OwbGraphView *self, guint index)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  if (index >= self->frames->len)
    return NULL;
  return ((Frame *) g_ptr_array_index (self->frames, index))->label;
}

char *
owb_graph_view_dup_path_title (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  if (self->frames->len < 2)
    return NULL;
  GString *s = g_string_new (NULL);
  for (guint i = 1; i < self->frames->len; i++)
    {
      if (i > 1)
        g_string_append (s, " › ");
      g_string_append (s, ((Frame *) g_ptr_array_index (self->frames, i))->label);
    }
  return g_string_free (s, FALSE);
}

void
owb_graph_view_go_to_path (OwbGraphView *self, guint index)
{
  g_return_if_fail (OWB_IS_GRAPH_VIEW (self));
  if (index + 1 >= self->frames->len)
    return;
  /* Above the level the find started from, its matches mean nothing. */
  if (self->matches && index < self->find_level)
    _owb_graph_view_clear_find (self);
  pop_to (self, index);
}

/* ---- choosing a subgraph ---- */

guint
_owb_graph_view_count_graph_attributes (const OwbNode *node)
{
  guint n = 0;
  for (int i = 0; node && i < node->n_attributes; i++)
    if (node->attributes[i].type == OWB_ATTR_GRAPH && node->attributes[i].g)
      n++;
  return n;
}

static void
branch_chosen (GtkButton *button, OwbGraphView *self)
{
  const OwbNode *node = g_object_get_data (G_OBJECT (button), "owb-node");
  const char *attribute = g_object_get_data (G_OBJECT (button), "owb-attribute");
  gtk_popover_popdown (GTK_POPOVER (self->branch_popover));
  owb_graph_view_open_subgraph (self, node, attribute);
}

/* A double-click on an If asks which branch: a button per graph attribute, at the pointer. */
void
_owb_graph_view_choose_subgraph (OwbGraphView *self, const OwbNode *node, double x, double y)
{
  if (!self->branch_popover)
    {
      self->branch_popover = gtk_popover_new ();
      gtk_widget_set_parent (self->branch_popover, GTK_WIDGET (self));
      gtk_accessible_update_property (GTK_ACCESSIBLE (self->branch_popover), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      _("Open Subgraph"), -1);
    }
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  for (int i = 0; i < node->n_attributes; i++)
    {
      const OwbAttribute *attr = &node->attributes[i];
      if (attr->type != OWB_ATTR_GRAPH || !attr->g)
        continue;
      guint n = attr->g->nodes->len;
      g_autofree char *text = g_strdup_printf (ngettext ("%s (%u node)", "%s (%u nodes)", n), attr->name, n);
      GtkWidget *button = gtk_button_new_with_label (text);
      gtk_widget_add_css_class (button, "flat");
      gtk_widget_set_halign (gtk_button_get_child (GTK_BUTTON (button)), GTK_ALIGN_START);
      g_autofree char *name = g_strdup_printf (_("Open %s"), attr->name);
      gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
      g_object_set_data (G_OBJECT (button), "owb-node", (gpointer) node);
      g_object_set_data_full (G_OBJECT (button), "owb-attribute", g_strdup (attr->name), g_free);
      g_signal_connect (button, "clicked", G_CALLBACK (branch_chosen), self);
      gtk_box_append (GTK_BOX (box), button);
    }
  gtk_popover_set_child (GTK_POPOVER (self->branch_popover), box);
  gtk_popover_set_pointing_to (GTK_POPOVER (self->branch_popover), &(GdkRectangle) { (int) x, (int) y, 1, 1 });
  gtk_popover_popup (GTK_POPOVER (self->branch_popover));
}

GtkWidget *
owb_graph_view_get_subgraph_chooser (OwbGraphView *self)
{
  g_return_val_if_fail (OWB_IS_GRAPH_VIEW (self), NULL);
  return self->branch_popover;
}
