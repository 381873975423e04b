/* owb-optimize-page.c: the Optimize page: level and pass switches, the optimizer run in a worker
 * thread, a per-pass diff, the two graphs side by side with provenance, and saving the result. */
#include "owb-optimize-page.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "owb-graph-pane.h"
#include "owb-graph-view.h"
#include "owb-page-util.h"
#include "owb-page.h"

/* Original names listed in a created-node row's title; the rest are counted. */
#define MAX_ORIGINS_SHOWN 4

struct _OwbOptimizePage
{
  OwbPage parent_instance;

  GtkPaned *paned;
  GtkDropDown *level_dropdown;
  AdwActionRow *level_row;
  GtkSwitch *portable_switch;
  AdwExpanderRow *passes_row;
  GtkButton *optimize_button;
  GtkButton *cancel_button;
  GtkButton *save_button;
  GtkWidget *progress_box;
  GtkSpinner *spinner;
  GtkLabel *progress_label;
  GtkLabel *status_label;
  GtkLabel *summary_label;
  GtkListBox *results_list;
  OwbGraphPane *original_pane;
  OwbGraphPane *optimized_pane;
  OwbGraphView *original_view;   /* the panes' views */
  OwbGraphView *optimized_view;
  GtkStack *optimized_stack;

  /* The document model the original view shows, to notice when the document loads another. */
  OwbModel *original;

  GPtrArray *pass_rows; /* of AdwActionRow *, one per pass, "owb-pass" data the OwbPassInfo */
  GPtrArray *pass_switches; /* of GtkSwitch *, same order */
  GPtrArray *result_rows; /* of GtkWidget *, the rows in results_list */
  guint results_serial;   /* bumped when the rows go, so pending fills stop */

  OwbModel *optimized;
  OwbOptimizeReport *report;
  /* The report's created nodes flattened in the order they were made, for provenance lookups. */
  GPtrArray *created; /* of OwbOptimizeCreated *, borrowed from report */
  GHashTable *created_index; /* node name (borrowed) -> GArray of guint positions in created */

  GtkWidget *save_dialog;  /* the Save As dialog while it is open */
};

G_DEFINE_FINAL_TYPE (OwbOptimizePage, owb_optimize_page, OWB_TYPE_PAGE)

/* The dropdown lists the levels that do something, from basic up. */
static OwbOptimizeLevel
selected_level (OwbOptimizePage *self)
{
  guint i = gtk_drop_down_get_selected (self->level_dropdown);
  return i == GTK_INVALID_LIST_POSITION ? OWB_OPTIMIZE_EXTENDED : (OwbOptimizeLevel) (OWB_OPTIMIZE_BASIC + i);
}

static const char *
level_label (OwbOptimizeLevel level)
{
  switch (level)
    {
    case OWB_OPTIMIZE_DISABLED: return C_("optimization level", "Disabled");
    case OWB_OPTIMIZE_BASIC: return C_("optimization level", "Basic");
    case OWB_OPTIMIZE_EXTENDED: return C_("optimization level", "Extended");
    case OWB_OPTIMIZE_LAYOUT: return C_("optimization level", "Layout");
    case OWB_OPTIMIZE_ALL: return C_("optimization level", "All");
    default: return "?";
    }
}

/* What the page shows while it works (optimizing or saving) and after. */
static void
update (OwbPage *page)
{
  OwbOptimizePage *self = OWB_OPTIMIZE_PAGE (page);
  gboolean busy = owb_page_get_busy (page);
  OwbDocument *document = owb_page_get_document (page);
  gtk_widget_set_visible (self->progress_box, busy);
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), busy);
  gtk_spinner_set_spinning (self->spinner, busy);
  if (!busy)
    gtk_label_set_text (self->progress_label, "");
  gtk_widget_set_sensitive (GTK_WIDGET (self->optimize_button),
                            !busy && document != NULL && owb_document_get_model (document) != NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (self->save_button), !busy && self->optimized != NULL);
}

/* Starts a piece of work (a run or a save) that message describes; returns its cancellable. */
static GCancellable *
start_work (OwbOptimizePage *self, const char *message)
{
  gtk_label_set_text (self->progress_label, message);
  owb_page_set_busy (OWB_PAGE (self), g_cancellable_new ());
  return owb_page_get_cancellable (OWB_PAGE (self));
}

static void
show_status (OwbOptimizePage *self, const char *message, gboolean is_error)
{
  gtk_label_set_text (self->status_label, message != NULL ? message : "");
  gtk_widget_set_visible (GTK_WIDGET (self->status_label), message != NULL);
  if (is_error)
    gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->status_label), "error");
}

static void
clear_results (OwbOptimizePage *self)
{
  for (guint i = 0; i < self->result_rows->len; i++)
    gtk_list_box_remove (self->results_list, g_ptr_array_index (self->result_rows, i));
  g_ptr_array_set_size (self->result_rows, 0);
  self->results_serial++;
  gtk_widget_set_visible (GTK_WIDGET (self->results_list), FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->summary_label), FALSE);
  g_ptr_array_set_size (self->created, 0);
  g_hash_table_remove_all (self->created_index);
  g_clear_pointer (&self->report, owb_optimize_report_free);
  g_clear_pointer (&self->optimized, owb_model_unref);
  if (!owb_page_get_disposed (OWB_PAGE (self)))
    {
      owb_graph_view_set_graph (self->optimized_view, NULL, NULL, NULL);
      owb_graph_view_set_highlight (self->original_view, NULL);
      gtk_stack_set_visible_child_name (self->optimized_stack, "empty");
      gtk_widget_set_sensitive (GTK_WIDGET (self->save_button), FALSE);
    }
}

/* ---- Provenance ---- */

/* The position of the latest creation before `before` that made a node called `name`, or -1.
 * created_index maps each name to the ascending positions of its creations. */
static int
creation_before (OwbOptimizePage *self, const char *name, guint before)
{
  GArray *positions = g_hash_table_lookup (self->created_index, name);
  if (positions == NULL)
    return -1;
  for (guint i = positions->len; i-- > 0;)
    if (g_array_index (positions, guint, i) < before)
      return (int) g_array_index (positions, guint, i);
  return -1;
}

/* Appends to `out` the original names behind `name` as it stood before the created[before]'th
 * creation: a name that an earlier creation made stands for that creation's sources, followed back
 * until names of the original graph remain. Passes often reuse names ("conv1" fused with bn1, then
 * with relu1), so the search is by position, not by name alone. `visited` holds the creations
 * already followed: shared ancestry (a layout pass rewrites every node of a fused chain) would
 * otherwise be walked once per path, exponentially. */
static void
collect_origins (OwbOptimizePage *self, const char *name, guint before, GPtrArray *out, GHashTable *seen,
                 GHashTable *visited)
{
  int j = creation_before (self, name, before);
  if (j >= 0)
    {
      if (!g_hash_table_add (visited, GINT_TO_POINTER (j + 1)))
        return;
      const OwbOptimizeCreated *c = g_ptr_array_index (self->created, j);
      for (guint k = 0; k < c->from->len; k++)
        collect_origins (self, g_ptr_array_index (c->from, k), (guint) j, out, seen, visited);
      return;
    }
  if (g_hash_table_add (seen, (gpointer) name))
    g_ptr_array_add (out, (gpointer) name);
}

/* The original names behind created[index] (borrowed strings, NULL-terminated array). */
static GPtrArray *
origins_of_creation (OwbOptimizePage *self, guint index)
{
  GPtrArray *out = g_ptr_array_new ();
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) visited = g_hash_table_new (g_direct_hash, g_direct_equal);
  const OwbOptimizeCreated *c = g_ptr_array_index (self->created, index);
  for (guint k = 0; k < c->from->len; k++)
    collect_origins (self, g_ptr_array_index (c->from, k), index, out, seen, visited);
  g_ptr_array_add (out, NULL);
  return out;
}

/* The index of the creation that made the node now named `name`, or -1 if no pass made it. */
static int
last_creation_of (OwbOptimizePage *self, const char *name)
{
  if (name == NULL || *name == '\0')
    return -1;
  return creation_before (self, name, G_MAXUINT);
}

static void
index_creations (OwbOptimizePage *self)
{
  for (guint p = 0; p < self->report->passes->len; p++)
    {
      const OwbPassReport *pass = g_ptr_array_index (self->report->passes, p);
      for (guint i = 0; i < pass->created->len; i++)
        {
          const OwbOptimizeCreated *c = g_ptr_array_index (pass->created, i);
          guint position = self->created->len;
          g_ptr_array_add (self->created, (gpointer) c);
          if (c->node == NULL)
            continue;
          GArray *positions = g_hash_table_lookup (self->created_index, c->node);
          if (positions == NULL)
            {
              positions = g_array_new (FALSE, FALSE, sizeof (guint));
              g_hash_table_insert (self->created_index, c->node, positions);
            }
          g_array_append_val (positions, position);
        }
    }
}

static void
show_provenance (OwbOptimizePage *self, guint creation)
{
  g_autoptr (GPtrArray) origins = origins_of_creation (self, creation);
  owb_graph_view_set_highlight (self->original_view, (const char *const *) origins->pdata);
  for (guint i = 0; origins->pdata[i] != NULL; i++)
    {
      const OwbNode *node
        = owb_graph_find_node (self->original != NULL ? self->original->graph : NULL, origins->pdata[i]);
      if (node != NULL)
        {
          owb_graph_view_select_node (self->original_view, node);
          break;
        }
    }
}

static void
optimized_selection_changed_cb (OwbOptimizePage *self)
{
  if (self->report == NULL)
    return;
  const OwbNode *node = owb_graph_view_get_selected_node (self->optimized_view);
  if (node == NULL)
    {
      owb_graph_view_set_highlight (self->original_view, NULL);
      return;
    }
  int creation = last_creation_of (self, node->name);
  if (creation >= 0)
    {
      show_provenance (self, (guint) creation);
      return;
    }
  /* A node no pass made is the original one: point at it. */
  owb_graph_view_set_highlight (self->original_view, NULL);
  const OwbNode *same = owb_graph_find_node (self->original != NULL ? self->original->graph : NULL, node->name);
  if (same != NULL)
    owb_graph_view_select_node (self->original_view, same);
}

/* ---- Results ---- */

static gboolean
pass_did_something (const OwbPassReport *pass)
{
  return pass->removed->len > 0 || pass->created->len > 0 || pass->n_removed_initializers > 0;
}

static char *
pass_summary (const OwbPassReport *pass)
{
  g_autofree char *changes = NULL;
  if (pass_did_something (pass))
    changes = g_strdup_printf (_("removed %u, created %u"), pass->removed->len, pass->created->len);
  else
    changes = g_strdup (_("no change"));
  g_autofree char *initializers = NULL;
  if (pass->n_removed_initializers > 0)
    initializers = g_strdup_printf (ngettext ("%u initializer removed", "%u initializers removed",
                                              pass->n_removed_initializers),
                                    pass->n_removed_initializers);
  g_autofree char *ms = g_strdup_printf (_("%.2f ms"), pass->ms);
  if (initializers != NULL)
    return g_strjoin (" · ", level_label (pass->level), changes, initializers, ms, NULL);
  return g_strjoin (" · ", level_label (pass->level), changes, ms, NULL);
}

static void
created_clicked_cb (GtkButton *button, OwbOptimizePage *self)
{
  guint index = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "owb-creation"));
  if (self->report != NULL && index < self->created->len)
    show_provenance (self, index);
}

/* Created-node and near-miss rows are plain list rows with one label: a model's layout pass
 * creates hundreds, and AdwActionRows (several boxes and wrapping labels each) made opening
 * such a list stall the window for seconds. */
static GtkWidget *
new_created_row (OwbOptimizePage *self, const OwbOptimizeCreated *c, guint creation)
{
  g_autoptr (GPtrArray) origins = origins_of_creation (self, creation);
  guint n_origins = origins->len - 1;
  g_autofree char *all = g_strjoinv (", ", (char **) origins->pdata);
  /* Long lists (an attention fusion replaces a dozen scoped names) are cut; the tooltip, the
   * accessible name and the highlight on the original graph give them all. */
  g_autofree char *from = NULL;
  if (n_origins > MAX_ORIGINS_SHOWN)
    {
      char *kept = origins->pdata[MAX_ORIGINS_SHOWN];
      origins->pdata[MAX_ORIGINS_SHOWN] = NULL;
      g_autofree char *first = g_strjoinv (", ", (char **) origins->pdata);
      origins->pdata[MAX_ORIGINS_SHOWN] = kept;
      from = g_strdup_printf (ngettext ("%s and %u more", "%s and %u more", n_origins - MAX_ORIGINS_SHOWN), first,
                              n_origins - MAX_ORIGINS_SHOWN);
    }
  else
    from = g_strdup (all);
  /* Translators: a node an optimizer pass created and the original nodes it replaced:
   * "FusedConv 'conv1' ← conv1, bn1, relu1" */
  g_autofree char *text = g_strdup_printf (_("%s ‘%s’ ← %s"), c->op_type, c->node, from);
  g_autofree char *full = g_strdup_printf (_("%s ‘%s’ ← %s"), c->op_type, c->node, all);

  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  /* Row text, not a button caption: buttons' labels are bold in Adwaita. */
  PangoAttrList *attrs = pango_attr_list_new ();
  pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_NORMAL));
  gtk_label_set_attributes (GTK_LABEL (label), attrs);
  pango_attr_list_unref (attrs);
  GtkWidget *button = gtk_button_new ();
  gtk_button_set_child (GTK_BUTTON (button), label);
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_margin_start (button, 6);
  gtk_widget_set_margin_end (button, 6);
  gtk_widget_set_margin_top (button, 3);
  gtk_widget_set_margin_bottom (button, 3);
  gtk_widget_set_tooltip_text (button, full);
  gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, full,
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                  _("Shows the nodes it replaced in the original graph"), -1);
  g_object_set_data (G_OBJECT (button), "owb-creation", GUINT_TO_POINTER (creation));
  g_signal_connect (button, "clicked", G_CALLBACK (created_clicked_cb), self);
  owb_page_keep_own_accessible_name (button);

  GtkWidget *row = gtk_list_box_row_new ();
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), button);
  return row;
}

static GtkWidget *
new_near_miss_row (const char *miss)
{
  /* Translators: a fusion that almost fired, and why it did not */
  g_autofree char *text = g_strdup_printf (_("Near miss: %s"), miss);
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_widget_add_css_class (label, "dim-label");
  gtk_widget_set_margin_start (label, 12);
  gtk_widget_set_margin_end (label, 12);
  gtk_widget_set_margin_top (label, 8);
  gtk_widget_set_margin_bottom (label, 8);
  GtkWidget *row = gtk_list_box_row_new ();
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), label);
  return row;
}

/* A pass's created nodes and near misses become rows when its row is first expanded, a batch
 * per main-loop turn: a layout pass on a real model creates hundreds, and building them all at
 * once held the main loop for a third of a second. */
#define FILL_BATCH 24

typedef struct
{
  OwbOptimizePage *self;
  AdwExpanderRow *row;
  const OwbPassReport *pass; /* borrowed from self->report, alive while results_serial holds */
  guint first_creation;
  guint next;
  guint serial;
} Fill;

static void
fill_free (Fill *fill)
{
  g_object_unref (fill->row);
  g_object_unref (fill->self);
  g_free (fill);
}

static gboolean
fill_step (gpointer data)
{
  Fill *fill = data;
  OwbOptimizePage *self = fill->self;
  if (owb_page_get_disposed (OWB_PAGE (self)) || fill->serial != self->results_serial)
    return G_SOURCE_REMOVE;
  const OwbPassReport *pass = fill->pass;
  guint total = pass->created->len + pass->near_misses->len;
  for (guint n = 0; n < FILL_BATCH && fill->next < total; n++, fill->next++)
    {
      if (fill->next < pass->created->len)
        adw_expander_row_add_row (fill->row, new_created_row (self, g_ptr_array_index (pass->created, fill->next),
                                                              fill->first_creation + fill->next));
      else
        adw_expander_row_add_row (
          fill->row, new_near_miss_row (g_ptr_array_index (pass->near_misses, fill->next - pass->created->len)));
    }
  return fill->next < total ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void
result_row_expanded_cb (AdwExpanderRow *row, GParamSpec *pspec, OwbOptimizePage *self)
{
  if (!adw_expander_row_get_expanded (row) || g_object_get_data (G_OBJECT (row), "owb-filled") != NULL)
    return;
  g_object_set_data (G_OBJECT (row), "owb-filled", GINT_TO_POINTER (TRUE));
  Fill *fill = g_new0 (Fill, 1);
  fill->self = g_object_ref (self);
  fill->row = g_object_ref (row);
  fill->pass = g_object_get_data (G_OBJECT (row), "owb-pass-report");
  fill->first_creation = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (row), "owb-first-creation"));
  fill->serial = self->results_serial;
  /* The first batch at once, so a short list is there as soon as the row opens. */
  if (fill_step (fill) == G_SOURCE_CONTINUE)
    g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, fill_step, fill, (GDestroyNotify) fill_free);
  else
    fill_free (fill);
}

static GtkWidget *
new_pass_result_row (OwbOptimizePage *self, const OwbPassReport *pass, guint first_creation)
{
  AdwExpanderRow *row = ADW_EXPANDER_ROW (adw_expander_row_new ());
  g_autofree char *title = g_markup_escape_text (pass->pass, -1);
  g_autofree char *summary = pass_summary (pass);
  g_autofree char *subtitle = g_markup_escape_text (summary, -1);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_expander_row_set_subtitle (row, subtitle);
  g_autofree char *a11y = g_strdup_printf (_("Pass %s: %s"), pass->pass, summary);
  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
  owb_page_keep_own_accessible_name (GTK_WIDGET (row));
  if (pass->created->len == 0 && pass->near_misses->len == 0)
    adw_expander_row_set_enable_expansion (row, FALSE);
  g_object_set_data (G_OBJECT (row), "owb-pass-report", (gpointer) pass);
  g_object_set_data (G_OBJECT (row), "owb-first-creation", GUINT_TO_POINTER (first_creation));
  g_signal_connect (row, "notify::expanded", G_CALLBACK (result_row_expanded_cb), self);
  return GTK_WIDGET (row);
}

static void
show_results (OwbOptimizePage *self)
{
  const OwbOptimizeReport *report = self->report;
  g_autofree char *before = g_strdup_printf (ngettext ("%u node", "%u nodes", report->nodes_before),
                                             report->nodes_before);
  g_autofree char *after = g_strdup_printf (ngettext ("%u node", "%u nodes", report->nodes_after),
                                            report->nodes_after);
  /* Translators: "65 nodes → 52 nodes" */
  g_autofree char *summary = g_strdup_printf (_("%s → %s"), before, after);
  gtk_label_set_text (self->summary_label, summary);
  gtk_widget_set_visible (GTK_WIDGET (self->summary_label), TRUE);

  guint first_creation = 0;
  guint shown = 0;
  for (guint p = 0; p < report->passes->len; p++)
    {
      const OwbPassReport *pass = g_ptr_array_index (report->passes, p);
      if (pass_did_something (pass) || pass->near_misses->len > 0)
        {
          GtkWidget *row = new_pass_result_row (self, pass, first_creation);
          gtk_list_box_append (self->results_list, row);
          g_ptr_array_add (self->result_rows, row);
          shown++;
        }
      first_creation += pass->created->len;
    }
  if (shown == 0)
    {
      GtkWidget *row = adw_action_row_new ();
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _("No pass changed the graph"));
      gtk_list_box_append (self->results_list, row);
      g_ptr_array_add (self->result_rows, row);
    }
  gtk_widget_set_visible (GTK_WIDGET (self->results_list), TRUE);
}

/* ---- Optimizing ---- */

typedef struct
{
  OwbModel *source;
  OwbOptimizeLevel level;
  gboolean portable;
  char **disabled;
  char *providers;
} OptimizeJob;

typedef struct
{
  OwbModel *model;
  OwbOptimizeReport *report;
} OptimizeResult;

static void
optimize_job_free (OptimizeJob *job)
{
  owb_model_unref (job->source);
  g_strfreev (job->disabled);
  g_free (job->providers);
  g_free (job);
}

static void
optimize_result_free (OptimizeResult *result)
{
  g_clear_pointer (&result->model, owb_model_unref);
  g_clear_pointer (&result->report, owb_optimize_report_free);
  g_free (result);
}

static void
optimize_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  OptimizeJob *job = task_data;
  GError *error = NULL;

  if (g_task_return_error_if_cancelled (task))
    return;
  g_autoptr (GPtrArray) providers = owb_providers_new_from_list (job->providers, &error);
  if (providers == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  g_autoptr (OwbModel) model = owb_model_dup (job->source);
  OwbOptimizeOptions options;
  owb_optimize_options_init (&options);
  options.level = job->level;
  options.portable = job->portable;
  options.disabled_passes = (const char *const *) job->disabled;
  options.providers = providers;
  OwbOptimizeReport *report = NULL;
  if (!owb_model_optimize (model, &options, &report, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  /* The optimizer cannot be interrupted; a cancelled run's result is dropped here. */
  if (g_task_return_error_if_cancelled (task))
    {
      owb_optimize_report_free (report);
      return;
    }
  OptimizeResult *result = g_new0 (OptimizeResult, 1);
  result->model = g_steal_pointer (&model);
  result->report = report;
  g_task_return_pointer (task, result, (GDestroyNotify) optimize_result_free);
}

static void
optimize_done_cb (GObject *source, GAsyncResult *res, gpointer user_data)
{
  OwbOptimizePage *self = OWB_OPTIMIZE_PAGE (source);
  g_autoptr (GError) error = NULL;
  OptimizeResult *result = g_task_propagate_pointer (G_TASK (res), &error);

  /* A run that a newer one or the document replaced: only the newest updates the page. */
  if (owb_page_get_disposed (OWB_PAGE (self))
      || g_task_get_cancellable (G_TASK (res)) != owb_page_get_cancellable (OWB_PAGE (self)))
    {
      g_clear_pointer (&result, optimize_result_free);
      return;
    }
  owb_page_set_busy (OWB_PAGE (self), NULL);
  if (result == NULL)
    {
      if (owb_error_is_cancelled (error))
        show_status (self, _("Optimization cancelled"), FALSE);
      else
        {
          g_autofree char *message = g_strdup_printf (_("Could not optimize: %s"), error->message);
          show_status (self, message, TRUE);
          owb_page_toast (GTK_WIDGET (self), message, 0);
        }
      return;
    }

  clear_results (self);
  self->optimized = g_steal_pointer (&result->model);
  self->report = g_steal_pointer (&result->report);
  optimize_result_free (result);
  index_creations (self);
  show_status (self, NULL, FALSE);
  show_results (self);
  owb_graph_view_set_graph (self->optimized_view, self->optimized->graph, owb_model_ref (self->optimized),
                            (GDestroyNotify) owb_model_unref);
  gtk_stack_set_visible_child_name (self->optimized_stack, "graph");
  owb_page_update (OWB_PAGE (self));
}

/**
 * owb_optimize_page_run:
 *
 * Optimizes a copy of the document's model at the chosen level with the passes left on, in a
 * worker thread; the page shows the result when done ("busy" goes back to FALSE).
 */
void
owb_optimize_page_run (OwbOptimizePage *self)
{
  g_return_if_fail (OWB_IS_OPTIMIZE_PAGE (self));
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  if (owb_page_get_busy (OWB_PAGE (self)) || document == NULL || owb_document_get_model (document) == NULL)
    return;

  OptimizeJob *job = g_new0 (OptimizeJob, 1);
  job->source = owb_model_ref (owb_document_get_model (document));
  job->level = selected_level (self);
  job->portable = gtk_switch_get_active (self->portable_switch);
  job->providers = g_strdup (owb_document_get_providers (document) != NULL ? owb_document_get_providers (document)
                                                                              : "cpu");
  g_autoptr (GStrvBuilder) disabled = g_strv_builder_new ();
  for (guint i = 0; i < self->pass_switches->len; i++)
    {
      GtkSwitch *sw = g_ptr_array_index (self->pass_switches, i);
      const OwbPassInfo *info = g_object_get_data (G_OBJECT (sw), "owb-pass");
      if (!gtk_switch_get_active (sw))
        g_strv_builder_add (disabled, info->name);
    }
  job->disabled = g_strv_builder_end (disabled);

  g_autofree char *message = g_strdup_printf (_("Optimizing at level %s…"), level_label (job->level));
  show_status (self, NULL, FALSE);
  GCancellable *cancellable = start_work (self, message);

  g_autoptr (GTask) task = owb_document_new_job (document, self, cancellable, NULL, optimize_done_cb, NULL);
  g_task_set_source_tag (task, owb_optimize_page_run);
  g_task_set_task_data (task, job, (GDestroyNotify) optimize_job_free);
  owb_document_run_job (document, task, optimize_thread);
}

static void
optimize_clicked_cb (OwbOptimizePage *self)
{
  owb_optimize_page_run (self);
}

/* The optimizer itself cannot be interrupted: the page lets go of the run at once (its result
 * is dropped when it arrives) rather than keep the user waiting for it. */
static void
cancel_clicked_cb (OwbOptimizePage *self)
{
  if (!owb_page_get_busy (OWB_PAGE (self)))
    return;
  owb_page_cancel (OWB_PAGE (self));
  owb_page_set_busy (OWB_PAGE (self), NULL);
  show_status (self, _("Optimization cancelled"), FALSE);
}

/* ---- Saving ---- */

/* Everything that can refuse a save before any byte is written; returns the local path. */
static char *
check_save_target (OwbOptimizePage *self, GFile *file, GError **error)
{
  if (self->optimized == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("There is no optimized model to save yet: optimize first"));
      return NULL;
    }
  return owb_page_check_save_target (owb_page_get_document (OWB_PAGE (self)), file, error);
}

static gboolean
uses_workbench_ops (const OwbModel *model)
{
  for (guint i = 0; i < model->graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (model->graph->nodes, i);
      if (g_strcmp0 (node->domain, OWB_DOMAIN) == 0)
        return TRUE;
    }
  return FALSE;
}

static void
report_saved (OwbOptimizePage *self, GFile *file, const OwbModel *model)
{
  g_autofree char *name = g_file_get_parse_name (file);
  g_autofree char *message = NULL;
  if (uses_workbench_ops (model))
    message = g_strdup_printf (_("Saved to %s. It uses fused ops of the ai.onnx.workbench domain, "
                                 "which only ONNX Workbench runs; switch on “Standard Ops Only” for a "
                                 "model any runtime loads."), name);
  else
    message = g_strdup_printf (_("Saved to %s"), name);
  show_status (self, message, FALSE);
  g_autofree char *short_message = g_strdup_printf (_("Saved to %s"), name);
  owb_page_toast (GTK_WIDGET (self), short_message, 0);
}

static void
report_save_error (OwbOptimizePage *self, const GError *error)
{
  g_autofree char *message = g_strdup_printf (_("Could not save: %s"), error->message);
  show_status (self, message, TRUE);
  owb_page_toast (GTK_WIDGET (self), message, 0);
}

/**
 * owb_optimize_page_save_to:
 *
 * Saves the optimized model to `file` (synchronously; the Save As… button does the same in a
 * worker thread). Refuses the document's own input file, whatever the path's spelling.
 */
gboolean
owb_optimize_page_save_to (OwbOptimizePage *self, GFile *file, GError **error)
{
  g_return_val_if_fail (OWB_IS_OPTIMIZE_PAGE (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  GError *local_error = NULL;
  g_autofree char *path = check_save_target (self, file, &local_error);
  if (path == NULL || !owb_model_save_file (self->optimized, path, NULL, &local_error))
    {
      report_save_error (self, local_error);
      g_propagate_error (error, local_error);
      return FALSE;
    }
  report_saved (self, file, self->optimized);
  return TRUE;
}

static void
save_done_cb (GObject *source, GAsyncResult *res, gpointer user_data)
{
  OwbOptimizePage *self = OWB_OPTIMIZE_PAGE (source);
  g_autoptr (GFile) file = user_data;
  g_autoptr (GError) error = NULL;
  OwbModel *model = NULL;
  gboolean ok = owb_document_save_model_finish (res, &model, NULL, &error);
  if (owb_page_get_disposed (OWB_PAGE (self)))
    return;
  /* The document may have changed meanwhile (and a new run begun): the file is written either
   * way, but only the current job's end makes the page idle. */
  if (g_task_get_cancellable (G_TASK (res)) == owb_page_get_cancellable (OWB_PAGE (self)))
    owb_page_set_busy (OWB_PAGE (self), NULL);
  if (ok)
    report_saved (self, file, model);
  else
    report_save_error (self, error);
}

static void
save_in_thread (OwbOptimizePage *self, GFile *file)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = check_save_target (self, file, &error);
  if (path == NULL)
    {
      report_save_error (self, error);
      return;
    }
  /* Saving cannot be interrupted halfway (it renames a finished temporary file), so the
   * cancellable only keeps this run apart from newer ones. */
  GCancellable *cancellable = start_work (self, _("Saving…"));
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), FALSE);
  owb_document_save_model_async (owb_page_get_document (OWB_PAGE (self)), self, self->optimized, path, cancellable,
                                 save_done_cb, g_object_ref (file));
}

/* The chosen file is checked when the dialog returns, before it asks whether to replace it. */
static gboolean
save_dialog_check (GFile *file, GError **error, gpointer data)
{
  g_autofree char *path = check_save_target (data, file, error);
  return path != NULL;
}

static void
save_dialog_chosen (GFile *file, gpointer data)
{
  save_in_thread (data, file);
}

static void
save_clicked_cb (OwbOptimizePage *self)
{
  if (self->optimized == NULL || self->save_dialog != NULL)
    return;
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  GFile *input = owb_document_get_file (document);
  g_autofree char *suggested = owb_page_dup_model_file_name (document, "-optimized.onnx");
  g_autoptr (GFile) folder = input != NULL ? g_file_get_parent (input) : NULL;
  self->save_dialog = owb_page_new_save_dialog (GTK_WIDGET (self), _("Save Optimized Model"), folder, suggested,
                                                save_dialog_check, save_dialog_chosen, self);
  g_object_add_weak_pointer (G_OBJECT (self->save_dialog), (gpointer *) &self->save_dialog);
  gtk_window_present (GTK_WINDOW (self->save_dialog));
}

/* ---- Document ---- */

static void
show_original (OwbOptimizePage *self)
{
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  OwbModel *model = document != NULL ? owb_document_get_model (document) : NULL;
  if (model == self->original)
    return;
  /* Another model: results of the previous one no longer apply. */
  owb_page_cancel (OWB_PAGE (self));
  owb_page_set_busy (OWB_PAGE (self), NULL);
  clear_results (self);
  show_status (self, NULL, FALSE);
  g_clear_pointer (&self->original, owb_model_unref);
  if (model != NULL)
    {
      self->original = owb_model_ref (model);
      owb_graph_view_set_graph (self->original_view, model->graph, owb_model_ref (model),
                                (GDestroyNotify) owb_model_unref);
    }
  else
    owb_graph_view_set_graph (self->original_view, NULL, NULL, NULL);
  owb_page_update (OWB_PAGE (self));
}

/* What the level chosen here does, and how it relates to the header's level: the Graph page
 * shows the header's (Disabled by default: the file as it is), this page compares. */
static void
update_level_subtitle (OwbOptimizePage *self)
{
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  OwbOptimizeLevel shown = document ? owb_document_get_level (document) : OWB_OPTIMIZE_DISABLED;
  g_autofree char *subtitle =
    g_strdup_printf (_("%s. The Graph page shows level %s (the header's)."),
                     owb_page_describe_level (selected_level (self)), level_label (shown));
  adw_action_row_set_subtitle (self->level_row, subtitle);
}

static void
prepared_changed (OwbPage *page)
{
  OwbOptimizePage *self = OWB_OPTIMIZE_PAGE (page);
  show_original (self);
  update_level_subtitle (self);
}

static void
document_changed (OwbPage *page)
{
  OwbOptimizePage *self = OWB_OPTIMIZE_PAGE (page);
  OwbDocument *document = owb_page_get_document (page);
  if (document != NULL)
    {
      /* Start from the level the window shows when it fuses anything; below that, from
       * extended, the first level whose result differs visibly from the file. */
      OwbOptimizeLevel level = MAX (owb_document_get_level (document), OWB_OPTIMIZE_EXTENDED);
      if (level <= OWB_OPTIMIZE_ALL)
        gtk_drop_down_set_selected (self->level_dropdown, level - OWB_OPTIMIZE_BASIC);
    }
  show_original (self);
}

/* ---- Pass list ---- */

static void
update_pass_sensitivity (OwbOptimizePage *self)
{
  OwbOptimizeLevel level = selected_level (self);
  for (guint i = 0; i < self->pass_rows->len; i++)
    {
      GtkWidget *row = g_ptr_array_index (self->pass_rows, i);
      const OwbPassInfo *info = g_object_get_data (G_OBJECT (row), "owb-pass");
      gtk_widget_set_sensitive (row, info->level <= level);
    }
}

static void
build_pass_list (OwbOptimizePage *self)
{
  guint n = 0;
  const OwbPassInfo *passes = owb_optimize_list_passes (&n);
  for (guint i = 0; i < n; i++)
    {
      const OwbPassInfo *info = &passes[i];
      GtkWidget *row = adw_action_row_new ();
      g_autofree char *title = g_markup_escape_text (info->name, -1);
      g_autofree char *subtitle = g_markup_escape_text (info->description != NULL ? info->description : "", -1);
      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
      adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 3);

      GtkWidget *level = gtk_label_new (level_label (info->level));
      gtk_widget_add_css_class (level, "dim-label");
      gtk_widget_add_css_class (level, "caption");
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), level);

      GtkWidget *sw = gtk_switch_new ();
      gtk_switch_set_active (GTK_SWITCH (sw), TRUE);
      gtk_widget_set_valign (sw, GTK_ALIGN_CENTER);
      g_autofree char *a11y = g_strdup_printf (_("Pass %s"), info->name);
      gtk_accessible_update_property (GTK_ACCESSIBLE (sw), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), sw);
      adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), sw);
      owb_page_keep_own_accessible_name (sw);

      g_object_set_data (G_OBJECT (row), "owb-pass", (gpointer) info);
      g_object_set_data (G_OBJECT (sw), "owb-pass", (gpointer) info);
      adw_expander_row_add_row (self->passes_row, row);
      g_ptr_array_add (self->pass_rows, row);
      g_ptr_array_add (self->pass_switches, sw);
    }
  update_pass_sensitivity (self);
}

/* ---- GObject ---- */

static void
owb_optimize_page_dispose (GObject *object)
{
  OwbOptimizePage *self = OWB_OPTIMIZE_PAGE (object);
  if (self->save_dialog)
    gtk_window_destroy (GTK_WINDOW (self->save_dialog));
  gtk_widget_dispose_template (GTK_WIDGET (self), OWB_TYPE_OPTIMIZE_PAGE);
  G_OBJECT_CLASS (owb_optimize_page_parent_class)->dispose (object);
}

static void
owb_optimize_page_finalize (GObject *object)
{
  OwbOptimizePage *self = OWB_OPTIMIZE_PAGE (object);
  g_ptr_array_unref (self->created);
  g_hash_table_unref (self->created_index);
  g_clear_pointer (&self->report, owb_optimize_report_free);
  g_clear_pointer (&self->optimized, owb_model_unref);
  g_clear_pointer (&self->original, owb_model_unref);
  g_ptr_array_unref (self->pass_rows);
  g_ptr_array_unref (self->pass_switches);
  g_ptr_array_unref (self->result_rows);
  G_OBJECT_CLASS (owb_optimize_page_parent_class)->finalize (object);
}

static void
owb_optimize_page_class_init (OwbOptimizePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  OwbPageClass *page_class = OWB_PAGE_CLASS (klass);

  object_class->dispose = owb_optimize_page_dispose;
  object_class->finalize = owb_optimize_page_finalize;
  page_class->document_changed = document_changed;
  page_class->prepared_changed = prepared_changed;
  page_class->update = update;

  g_type_ensure (OWB_TYPE_GRAPH_VIEW);
  g_type_ensure (OWB_TYPE_GRAPH_PANE);
  gtk_widget_class_set_template_from_resource (widget_class, "/org/onnxworkbench/Workbench/owb-optimize-page.ui");
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, paned);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, level_dropdown);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, level_row);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, portable_switch);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, passes_row);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, optimize_button);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, save_button);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, progress_box);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, spinner);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, progress_label);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, status_label);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, summary_label);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, results_list);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, original_pane);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, optimized_pane);
  gtk_widget_class_bind_template_child (widget_class, OwbOptimizePage, optimized_stack);
  gtk_widget_class_bind_template_callback (widget_class, optimize_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, cancel_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, save_clicked_cb);

  gtk_widget_class_set_css_name (widget_class, "optimizepage");
}

static void
owb_optimize_page_init (OwbOptimizePage *self)
{
  self->pass_rows = g_ptr_array_new ();
  self->pass_switches = g_ptr_array_new ();
  self->result_rows = g_ptr_array_new ();
  self->created = g_ptr_array_new ();
  self->created_index = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_array_unref);
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Optimize"), -1);
  self->original_view = owb_graph_pane_get_view (self->original_pane);
  self->optimized_view = owb_graph_pane_get_view (self->optimized_pane);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->original_view), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Original Graph"), -1);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->optimized_view), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Optimized Graph"), -1);
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->optimize_button));
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->cancel_button));
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->save_button));
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->portable_switch));
  build_pass_list (self);
  g_signal_connect_swapped (self->level_dropdown, "notify::selected", G_CALLBACK (update_pass_sensitivity), self);
  g_signal_connect_swapped (self->level_dropdown, "notify::selected", G_CALLBACK (update_level_subtitle), self);
  update_level_subtitle (self);
  g_signal_connect_swapped (self->optimized_view, "selection-changed",
                            G_CALLBACK (optimized_selection_changed_cb), self);
  show_status (self, _("Open a model to optimize it"), FALSE);
}

GtkWidget *
owb_optimize_page_new (void)
{
  return g_object_new (OWB_TYPE_OPTIMIZE_PAGE, NULL);
}

/* ---- For tests and the window ---- */

const OwbOptimizeReport *
owb_optimize_page_get_report (OwbOptimizePage *self)
{
  g_return_val_if_fail (OWB_IS_OPTIMIZE_PAGE (self), NULL);
  return self->report;
}

OwbModel *
owb_optimize_page_get_optimized_model (OwbOptimizePage *self)
{
  g_return_val_if_fail (OWB_IS_OPTIMIZE_PAGE (self), NULL);
  return self->optimized;
}

void
owb_optimize_page_set_level (OwbOptimizePage *self, OwbOptimizeLevel level)
{
  g_return_if_fail (OWB_IS_OPTIMIZE_PAGE (self));
  g_return_if_fail (level >= OWB_OPTIMIZE_BASIC && level <= OWB_OPTIMIZE_ALL);
  gtk_drop_down_set_selected (self->level_dropdown, level - OWB_OPTIMIZE_BASIC);
}

char **
owb_optimize_page_dup_origins (OwbOptimizePage *self, const char *node_name)
{
  g_return_val_if_fail (OWB_IS_OPTIMIZE_PAGE (self), NULL);
  int creation = last_creation_of (self, node_name);
  if (creation < 0)
    return NULL;
  g_autoptr (GPtrArray) origins = origins_of_creation (self, (guint) creation);
  GStrvBuilder *builder = g_strv_builder_new ();
  for (guint i = 0; origins->pdata[i] != NULL; i++)
    g_strv_builder_add (builder, origins->pdata[i]);
  char **result = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);
  return result;
}
