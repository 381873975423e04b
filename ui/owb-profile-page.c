/* owb-profile-page.c: the Profile page. A profile runs in a worker thread on a session of its own
 * (the thread count is the page's, the level and providers the window's), records every node
 * through the profiler's recorder, stores the run in the profile database and hands it to the
 * timeline and the tables; stored runs of the same model load in a worker thread too. The widgets
 * are owb-profile-page.ui's; the rows of the tables are made here. */
#include "owb-profile-page.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <math.h>

#include "owb-page-util.h"
#include "owb-page.h"

#define WARMUP_RUNS 2
#define SLOWEST_NODES 15

struct _OwbProfilePage
{
  OwbPage parent_instance;

  GtkWidget *scroller;         /* the template's child */
  GtkSpinButton *iterations_spin;
  GtkSpinButton *threads_spin;
  GtkButton *profile_button;
  GtkButton *cancel_button;
  GtkProgressBar *progress;
  GtkLabel *summary_label;
  GtkToggleButton *graph_button; /* shows the time of each node on the Graph page */
  GtkLabel *error_label;
  OwbTimeline *timeline;
  GtkListBox *ops_list;
  GtkListBox *nodes_list;
  GtkListBox *runs_list;
  GtkWidget *compare_box;
  GtkLabel *compare_label;
  GtkListBox *compare_list;

  char *db_path;
  GPtrArray *stored;          /* of OwbProfRunSummary *: the runs in runs_list */
  guint n_op_rows;
  gboolean loading_for_compare; /* the stored run being loaded is compared with the one shown */
  guint n_compare_rows;
  char *model_hash;           /* of the document's file, once hash_model_async has read it */
  GCancellable *hash_cancellable;
  GHashTable *time_shares;    /* node name -> double *: its share of the shown run's node time */
  GHashTable *compare_deltas; /* node name -> double *: B's ms less A's, in the comparison shown */
  GtkToggleButton *compare_graph_button;
  GtkButton *export_button;
  GtkFileChooserNative *chooser;
  GSettings *settings;        /* profile-database; NULL without the schema */
  GtkLabel *db_label;         /* which database, and why that one */
  GtkButton *db_button;
  GtkButton *db_default_button;
  char *db_resolved;          /* what get_database_path returned last */
};

G_DEFINE_FINAL_TYPE (OwbProfilePage, owb_profile_page, OWB_TYPE_PAGE)

static gboolean
is_busy (OwbProfilePage *self)
{
  return owb_page_get_busy (OWB_PAGE (self));
}

/* Which database the page uses, and why: a path set on the page, $OWB_PROFILE_DB, the
 * profile-database setting, or the default in the user's data folder. */
static char *
resolve_database (OwbProfilePage *self, const char **why)
{
  const char *env = g_getenv ("OWB_PROFILE_DB");
  g_autofree char *setting = self->settings ? g_settings_get_string (self->settings, "profile-database") : NULL;
  if (self->db_path)
    {
      *why = NULL;
      return g_strdup (self->db_path);
    }
  if (env && env[0])
    {
      *why = _("from $OWB_PROFILE_DB");
      return g_strdup (env);
    }
  if (setting && setting[0])
    {
      *why = _("chosen");
      return g_steal_pointer (&setting);
    }
  *why = _("the default");
  return g_build_filename (g_get_user_data_dir (), "onnx-workbench", "profiles.sqlite", NULL);
}

const char *
owb_profile_page_get_database_path (OwbProfilePage *self)
{
  g_return_val_if_fail (OWB_IS_PROFILE_PAGE (self), NULL);
  const char *why;
  char *path = resolve_database (self, &why);
  if (g_strcmp0 (path, self->db_resolved) != 0)
    {
      g_free (self->db_resolved);
      self->db_resolved = path;
    }
  else
    g_free (path);
  return self->db_resolved;
}

static void
update_database_label (OwbProfilePage *self)
{
  const char *why;
  g_autofree char *path = resolve_database (self, &why);
  g_autofree char *text = why ? g_strdup_printf (_("Runs are stored in %s (%s)"), path, why)
                              : g_strdup_printf (_("Runs are stored in %s"), path);
  gtk_label_set_text (self->db_label, text);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->db_label), path);
  const char *env = g_getenv ("OWB_PROFILE_DB");
  gboolean env_wins = env && env[0];
  /* the setting decides only where neither the page nor the environment does */
  gboolean can_choose = self->settings && !self->db_path && !env_wins;
  gtk_widget_set_sensitive (GTK_WIDGET (self->db_button), can_choose);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->db_button),
                               env_wins ? _("$OWB_PROFILE_DB is set: it decides the database")
                                        : _("Store and list runs in another profile database"));
  g_autofree char *setting = self->settings ? g_settings_get_string (self->settings, "profile-database") : NULL;
  gtk_widget_set_visible (GTK_WIDGET (self->db_default_button), can_choose && setting && setting[0]);
}

static void refresh_stored_runs (OwbProfilePage *self);
static void hash_model_async (OwbProfilePage *self);
static void compare_clicked_cb (GtkButton *button, OwbProfilePage *self);

/* Another database: the stored runs of this model are listed from it. */
static void
database_changed (OwbProfilePage *self)
{
  update_database_label (self);
  if (!self->model_hash)
    hash_model_async (self);
  refresh_stored_runs (self);
}

void
owb_profile_page_set_database_path (OwbProfilePage *self, const char *path)
{
  g_return_if_fail (OWB_IS_PROFILE_PAGE (self));
  g_free (self->db_path);
  self->db_path = g_strdup (path);
  database_changed (self);
}

gboolean
owb_profile_page_choose_database (OwbProfilePage *self, const char *path, GError **error)
{
  g_return_val_if_fail (OWB_IS_PROFILE_PAGE (self), FALSE);
  if (!self->settings)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s",
                   _("The workbench's settings schema is not installed: the database cannot be remembered"));
      return FALSE;
    }
  if (path && path[0])
    {
      /* only a profile database (opening one migrates its schema); a new file is made on the first run */
      g_autoptr (OwbProfDb) db = g_file_test (path, G_FILE_TEST_EXISTS) ? owb_prof_db_open (path, FALSE, error) : NULL;
      if (g_file_test (path, G_FILE_TEST_EXISTS) && !db)
        {
          g_prefix_error (error, _("“%s” is not a profile database: "), path);
          return FALSE;
        }
    }
  g_settings_set_string (self->settings, "profile-database", path ? path : ""); /* "changed" lists its runs */
  return TRUE;
}

static void
db_response_cb (GtkNativeDialog *dialog, int response, OwbProfilePage *self)
{
  g_autoptr (GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)) : NULL;
  g_autofree char *path = file ? g_file_get_path (file) : NULL;
  owb_page_close_file_chooser (&self->chooser);
  g_autoptr (GError) error = NULL;
  if (path && !owb_profile_page_choose_database (self, path, &error))
    owb_page_show_error (OWB_PAGE (self), error->message);
}

static void
db_button_clicked_cb (OwbProfilePage *self)
{
  owb_page_close_file_chooser (&self->chooser);
  self->chooser = owb_page_new_file_chooser (GTK_WIDGET (self), _("Choose Profile Database"),
                                             GTK_FILE_CHOOSER_ACTION_OPEN, _("_Choose"));
  owb_page_add_file_filter (self->chooser, _("Profile databases"), "*.sqlite", "*.db", NULL);
  owb_page_add_file_filter (self->chooser, _("All files"), "*", NULL);
  g_signal_connect (self->chooser, "response", G_CALLBACK (db_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
db_default_clicked_cb (OwbProfilePage *self)
{
  owb_profile_page_choose_database (self, NULL, NULL);
}

static void
update_sensitivity (OwbProfilePage *self)
{
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  OwbPrepared *prepared = document ? owb_document_get_prepared (document) : NULL;
  gboolean can = prepared && !owb_prepared_is_pending (prepared) && owb_prepared_get_session (prepared);
  gtk_widget_set_sensitive (GTK_WIDGET (self->profile_button), can && !is_busy (self));
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), is_busy (self));
  gtk_widget_set_visible (GTK_WIDGET (self->progress), is_busy (self));
  gtk_widget_set_sensitive (GTK_WIDGET (self->runs_list), !is_busy (self));
}

static void
update (OwbPage *page)
{
  update_sensitivity (OWB_PROFILE_PAGE (page));
}

/* ---- Tables ---- */

/* A row of name, detail and time, read out as one line. */
static GtkWidget *
table_row (const char *name, const char *detail, const char *value)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  GtkWidget *left = gtk_label_new (name);
  gtk_label_set_xalign (GTK_LABEL (left), 0);
  gtk_label_set_ellipsize (GTK_LABEL (left), PANGO_ELLIPSIZE_MIDDLE);
  /* a short name ("#3") is shown whole; the detail gives way first */
  gtk_label_set_width_chars (GTK_LABEL (left), MIN ((int) g_utf8_strlen (name, -1), 12));
  gtk_widget_set_hexpand (left, TRUE);
  gtk_box_append (GTK_BOX (box), left);
  if (detail)
    {
      GtkWidget *mid = gtk_label_new (detail);
      gtk_widget_add_css_class (mid, "dim-label");
      gtk_label_set_ellipsize (GTK_LABEL (mid), PANGO_ELLIPSIZE_END);
      gtk_label_set_xalign (GTK_LABEL (mid), 1);
      gtk_box_append (GTK_BOX (box), mid);
    }
  GtkWidget *right = gtk_label_new (value);
  gtk_widget_add_css_class (right, "numeric");
  gtk_box_append (GTK_BOX (box), right);
  GtkWidget *row = gtk_list_box_row_new ();
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  gtk_widget_set_margin_start (box, 6);
  gtk_widget_set_margin_end (box, 6);
  gtk_widget_set_margin_top (box, 3);
  gtk_widget_set_margin_bottom (box, 3);
  g_autofree char *a11y = g_strdup_printf ("%s %s %s", name, detail ? detail : "", value);
  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
  return row;
}

static void
add_share (GHashTable *shares, const char *name, double share)
{
  double *v = g_hash_table_lookup (shares, name);
  if (!v)
    {
      v = g_new0 (double, 1);
      g_hash_table_insert (shares, g_strdup (name), v);
    }
  *v += share;
}

/* Each main-graph node's share of the run's node time, under its own name and, for a node the
 * optimizer made, split evenly over the model's nodes it replaced: the Graph page may show the
 * file as it is or the optimized graph, and both find their nodes. */
static void
collect_time_shares (OwbProfilePage *self, const OwbProfRun *run, GArray *stats)
{
  g_clear_pointer (&self->time_shares, g_hash_table_unref);
  if (!run)
    return;
  self->time_shares = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr (GHashTable) own = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < stats->len; i++)
    {
      const OwbProfStat *s = &g_array_index (stats, OwbProfStat, i);
      if (s->node >= run->nodes->len || (s->graph_path && s->graph_path[0]))
        continue;
      const OwbProfNode *node = g_ptr_array_index (run->nodes, s->node);
      add_share (self->time_shares, node->name, s->share);
      g_hash_table_add (own, node->name);
      guint n_origins = node->origins ? g_strv_length (node->origins) : 0;
      for (guint k = 0; k < n_origins; k++)
        if (strcmp (node->origins[k], node->name) != 0)
          add_share (self->time_shares, node->origins[k], s->share / n_origins);
    }
}

/* What the time and difference layers colour by: a value per node name (a share of the time, or
 * milliseconds gained or lost) and the largest magnitude among them. */
typedef struct {
  GHashTable *values; /* name -> double * */
  double max_abs;
} NodeValues;

static NodeValues *
node_values_new (GHashTable *values)
{
  NodeValues *v = g_new0 (NodeValues, 1);
  v->values = g_hash_table_ref (values);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init (&it, values);
  while (g_hash_table_iter_next (&it, NULL, &value))
    v->max_abs = MAX (v->max_abs, fabs (*(double *) value));
  return v;
}

static void
node_values_free (NodeValues *v)
{
  g_hash_table_unref (v->values);
  g_free (v);
}

static const double *
node_value (const NodeValues *v, const OwbNode *node)
{
  return node->name ? g_hash_table_lookup (v->values, node->name) : NULL;
}

/* Pale yellow for a node that takes little of the time, through orange to red for the slowest. */
static gboolean
time_color (const OwbNode *node, GdkRGBA *color, gpointer user_data)
{
  const NodeValues *t = user_data;
  const double *share = node_value (t, node);
  if (!share)
    return FALSE;
  double x = t->max_abs > 0 ? sqrt (CLAMP (*share / t->max_abs, 0, 1)) : 0;
  color->red = 1.0;
  color->green = (float) (0.95 - 0.75 * x);
  color->blue = (float) (0.75 - 0.70 * x);
  color->alpha = 1.0;
  return TRUE;
}

static char *
time_badge (const OwbNode *node, gpointer user_data)
{
  const double *share = node_value (user_data, node);
  if (!share || *share < 0.001)
    return NULL;
  return g_strdup_printf (_("%.1f %%"), 100 * *share);
}

OwbGraphLayer *
owb_profile_page_dup_time_layer (OwbProfilePage *self)
{
  if (!self->time_shares)
    return NULL;
  return owb_graph_layer_new (_("Time"), time_color, time_badge, node_values_new (self->time_shares),
                              (GDestroyNotify) node_values_free);
}

static gboolean
has_suffix (const char *path, const char *suffix)
{
  g_autofree char *lower = g_ascii_strdown (path, -1);
  return g_str_has_suffix (lower, suffix);
}

gboolean
owb_profile_page_export_timeline (OwbProfilePage *self, const char *path, GError **error)
{
  if (!owb_timeline_get_run (self->timeline))
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s", _("No run is shown: profile the model first"));
      return FALSE;
    }
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autofree char *checked = owb_page_check_save_target (owb_page_get_document (OWB_PAGE (self)), file, error);
  if (checked == NULL)
    return FALSE;
  if (has_suffix (checked, ".svg"))
    return owb_timeline_export_svg (self->timeline, checked, error);
  return owb_page_save_widget_png (GTK_WIDGET (self->timeline), checked, error);
}

static void
export_response_cb (GtkNativeDialog *dialog, int response, OwbProfilePage *self)
{
  g_autoptr (GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)) : NULL;
  g_autofree char *path = file ? g_file_get_path (file) : NULL;
  /* a name without .png or .svg takes the format of the filter chosen */
  if (path && !has_suffix (path, ".png") && !has_suffix (path, ".svg"))
    {
      GtkFileFilter *filter = gtk_file_chooser_get_filter (GTK_FILE_CHOOSER (dialog)); /* borrowed */
      gboolean svg = filter && g_strcmp0 (g_object_get_data (G_OBJECT (filter), "owb-suffix"), ".svg") == 0;
      char *named = g_strconcat (path, svg ? ".svg" : ".png", NULL);
      g_free (path);
      path = named;
    }
  owb_page_close_file_chooser (&self->chooser);
  if (!path)
    return;
  g_autoptr (GError) error = NULL;
  if (!owb_profile_page_export_timeline (self, path, &error))
    owb_page_show_error (OWB_PAGE (self), error->message);
}

static void
export_clicked_cb (OwbProfilePage *self)
{
  owb_page_close_file_chooser (&self->chooser);
  self->chooser = owb_page_new_file_chooser (GTK_WIDGET (self), _("Export Timeline"), GTK_FILE_CHOOSER_ACTION_SAVE,
                                             _("_Export"));
  const char *names[] = { N_("PNG images"), N_("SVG images") }, *suffixes[] = { ".png", ".svg" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
      gtk_file_filter_set_name (filter, _(names[i]));
      g_autofree char *pattern = g_strconcat ("*", suffixes[i], NULL);
      gtk_file_filter_add_pattern (filter, pattern);
      g_object_set_data (G_OBJECT (filter), "owb-suffix", (gpointer) suffixes[i]);
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), filter);
    }
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->chooser), "timeline.png");
  g_signal_connect (self->chooser, "response", G_CALLBACK (export_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

void
owb_profile_page_set_time_on_graph (OwbProfilePage *self, gboolean show)
{
  gtk_toggle_button_set_active (self->graph_button, show);
}

static void
graph_button_toggled_cb (GtkToggleButton *button, OwbProfilePage *self)
{
  g_autoptr (OwbGraphLayer) layer = gtk_toggle_button_get_active (button) ? owb_profile_page_dup_time_layer (self) : NULL;
  if (layer && self->compare_graph_button && gtk_toggle_button_get_active (self->compare_graph_button))
    gtk_toggle_button_set_active (self->compare_graph_button, FALSE);
  owb_page_show_layer (OWB_PAGE (self), layer);
}

/* Red for slower in the run compared with, green for faster, stronger with the change; a node
 * that moved less than timer noise keeps its own colour. */
static gboolean
delta_color (const OwbNode *node, GdkRGBA *color, gpointer user_data)
{
  const NodeValues *d = user_data;
  const double *ms = node_value (d, node);
  if (!ms || fabs (*ms) < 0.002 || d->max_abs <= 0)
    return FALSE;
  double x = 0.25 + 0.75 * sqrt (MIN (fabs (*ms) / d->max_abs, 1.0));
  if (*ms > 0)
    *color = (GdkRGBA){ 1.0f, (float) (0.92 - 0.62 * x), (float) (0.90 - 0.65 * x), 1.0f };
  else
    *color = (GdkRGBA){ (float) (0.90 - 0.65 * x), (float) (0.97 - 0.30 * x), (float) (0.90 - 0.62 * x), 1.0f };
  return TRUE;
}

static char *
delta_badge (const OwbNode *node, gpointer user_data)
{
  const double *ms = node_value (user_data, node);
  if (!ms || fabs (*ms) < 0.002)
    return NULL;
  return g_strdup_printf (_("%+.3f ms"), *ms);
}

OwbGraphLayer *
owb_profile_page_dup_compare_layer (OwbProfilePage *self)
{
  if (!self->compare_deltas)
    return NULL;
  return owb_graph_layer_new (_("Time Difference"), delta_color, delta_badge, node_values_new (self->compare_deltas),
                              (GDestroyNotify) node_values_free);
}

static void
compare_graph_button_toggled_cb (GtkToggleButton *button, OwbProfilePage *self)
{
  g_autoptr (OwbGraphLayer) layer = gtk_toggle_button_get_active (button) ? owb_profile_page_dup_compare_layer (self)
                                                                          : NULL;
  if (gtk_toggle_button_get_active (button) && gtk_toggle_button_get_active (self->graph_button))
    gtk_toggle_button_set_active (self->graph_button, FALSE); /* one layer on the graph at a time */
  owb_page_show_layer (OWB_PAGE (self), layer);
}

static void
show_run_tables (OwbProfilePage *self, const OwbProfRun *run)
{
  owb_page_list_clear (self->ops_list);
  owb_page_list_clear (self->nodes_list);
  self->n_op_rows = 0;
  if (!run)
    {
      collect_time_shares (self, NULL, NULL);
      gtk_label_set_text (self->summary_label, "");
      return;
    }
  g_autoptr (GArray) ops = owb_prof_run_dup_op_stats (run);
  for (guint i = 0; i < ops->len; i++)
    {
      const OwbProfStat *s = &g_array_index (ops, OwbProfStat, i);
      g_autofree char *detail = g_strdup_printf (_("%.0f×, %.1f %%"), s->calls, 100 * s->share);
      g_autofree char *value = g_strdup_printf (_("%.3f ms"), s->mean_ms);
      gtk_list_box_append (self->ops_list, table_row (s->op_type, detail, value));
      self->n_op_rows++;
    }
  g_autoptr (GArray) nodes = owb_prof_run_dup_node_stats (run);
  collect_time_shares (self, run, nodes);
  for (guint i = 0; i < MIN (nodes->len, SLOWEST_NODES); i++)
    {
      const OwbProfStat *s = &g_array_index (nodes, OwbProfStat, i);
      g_autofree char *detail = g_strdup_printf ("%s, %.1f %%", s->op_type, 100 * s->share);
      g_autofree char *value = g_strdup_printf (_("%.3f ms"), s->median_ms);
      GtkWidget *row = table_row (s->name, detail, value);
      g_object_set_data_full (G_OBJECT (row), "owb-node-name", g_strdup (s->name), g_free);
      gtk_list_box_append (self->nodes_list, row);
    }
  OwbProfWallSplit split;
  owb_prof_run_get_wall_split (run, &split);
  g_autoptr (GString) text = g_string_new (NULL);
  g_autofree char *title = owb_prof_run_dup_title (run);
  double wall = split.wall_ms > 0 ? split.wall_ms : 1;
  g_string_append_printf (text, _("%s: %u iterations, median %.3f ms; mean per run %.3f ms in nodes (%.1f %%), %.3f ms between them"),
                          title, run->iterations->len, owb_prof_run_get_median_ms (run), split.nodes_ms,
                          100 * split.nodes_ms / wall, split.gaps_ms);
  for (guint t = 0; t < split.thread_busy_ms->len; t++)
    g_string_append_printf (text, t == 0 ? _("; busy: thread %u %.1f %%") : ", %u %.1f %%", t,
                            100 * g_array_index (split.thread_busy_ms, double, t) / wall);
  gtk_label_set_text (self->summary_label, text->str);
  owb_prof_wall_split_clear (&split);
}

static void
show_run (OwbProfilePage *self, OwbProfRun *run)
{
  show_run_tables (self, run);
  owb_timeline_take_run (self->timeline, run);
  gtk_widget_set_sensitive (GTK_WIDGET (self->graph_button), self->time_shares != NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (self->export_button), run != NULL);
  /* A new run replaces what the Graph page shows, or takes it away. */
  if (gtk_toggle_button_get_active (self->graph_button))
    {
      if (self->time_shares)
        graph_button_toggled_cb (self->graph_button, self);
      else
        gtk_toggle_button_set_active (self->graph_button, FALSE); /* emits "show-layer" with NULL */
    }
}

static double
abs_delta (const OwbProfDelta *d)
{
  return isnan (d->a_ms) || isnan (d->b_ms) ? -1 : fabs (d->b_ms - d->a_ms);
}

static int
by_abs_delta (gconstpointer a, gconstpointer b)
{
  double x = abs_delta (*(const OwbProfDelta *const *) a), y = abs_delta (*(const OwbProfDelta *const *) b);
  return (x < y) - (x > y);
}

/* The shown run (A) against another (B): the op types, then the nodes that moved most. */
static void
show_comparison (OwbProfilePage *self, const OwbProfRun *b)
{
  owb_page_list_clear (self->compare_list);
  self->n_compare_rows = 0;
  const OwbProfRun *a = owb_timeline_get_run (self->timeline);
  gtk_widget_set_visible (self->compare_box, a && b);
  g_clear_pointer (&self->compare_deltas, g_hash_table_unref);
  if (!a || !b)
    {
      if (gtk_toggle_button_get_active (self->compare_graph_button))
        gtk_toggle_button_set_active (self->compare_graph_button, FALSE);
      return;
    }
  g_autoptr (GPtrArray) nodes = owb_prof_compare_nodes (a, b);
  self->compare_deltas = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; i < nodes->len; i++)
    {
      const OwbProfDelta *d = g_ptr_array_index (nodes, i);
      if (d->name && !isnan (d->a_ms) && !isnan (d->b_ms))
        add_share (self->compare_deltas, d->name, d->b_ms - d->a_ms);
    }
  if (gtk_toggle_button_get_active (self->compare_graph_button))
    compare_graph_button_toggled_cb (self->compare_graph_button, self);
  g_autoptr (GPtrArray) ops = owb_prof_compare_ops (a, b);
  g_autofree char *ta = owb_prof_run_dup_title (a), *tb = owb_prof_run_dup_title (b);
  g_autofree char *heading = g_strdup_printf (_("%s against %s: median %.3f ms and %.3f ms, %u of %u nodes matched"), ta, tb,
                                              owb_prof_run_get_median_ms (a), owb_prof_run_get_median_ms (b),
                                              owb_prof_deltas_count_matched (nodes), nodes->len);
  gtk_label_set_text (self->compare_label, heading);
  g_ptr_array_sort (nodes, by_abs_delta);
  GPtrArray *parts[] = { ops, nodes };
  for (guint p = 0; p < G_N_ELEMENTS (parts); p++)
    for (guint i = 0; i < MIN (parts[p]->len, p == 0 ? 8 : SLOWEST_NODES); i++)
      {
        const OwbProfDelta *d = g_ptr_array_index (parts[p], i);
        g_autofree char *a_ms = isnan (d->a_ms) ? g_strdup ("–") : g_strdup_printf ("%.3f", d->a_ms);
        g_autofree char *b_ms = isnan (d->b_ms) ? g_strdup ("–") : g_strdup_printf ("%.3f", d->b_ms);
        g_autofree char *value = isnan (d->a_ms) || isnan (d->b_ms)
                                   ? g_strdup_printf (_("%s → %s ms"), a_ms, b_ms)
                                   : g_strdup_printf (_("%s → %s ms (%+.3f)"), a_ms, b_ms, d->b_ms - d->a_ms);
        GtkWidget *row = table_row (p == 0 ? d->op_type : d->name, p == 0 ? _("op type") : d->op_type, value);
        /* slower in B: warm; faster: cool; not for a few microseconds, which timer noise makes */
        double moved = fabs (d->b_ms - d->a_ms);
        if (!isnan (d->a_ms) && !isnan (d->b_ms) && moved > 0.05 * d->a_ms && moved > 0.002)
          gtk_widget_add_css_class (row, d->b_ms > d->a_ms ? "error" : "success");
        gtk_list_box_append (self->compare_list, row);
        self->n_compare_rows++;
      }
}

/* The model file's hash, to list only its runs; NULL until hash_model_async has read the file. */
static char *
document_model_hash (OwbProfilePage *self)
{
  return g_strdup (self->model_hash);
}

/* Hashing reads the whole file (seconds for a large model): a worker thread does it, and the
 * stored runs are listed when it is done. */
static void
hash_model_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  g_autoptr (OwbProfRun) probe = owb_prof_run_new ();
  GError *error = NULL;
  if (!owb_prof_run_set_model (probe, task_data, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, g_strdup (probe->model_hash), g_free);
}

static void
hash_model_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  /* NULL when cancelled (the document changed, or the page went) or unreadable */
  g_autofree char *hash = g_task_propagate_pointer (G_TASK (result), NULL);
  if (!hash)
    return;
  OwbProfilePage *self = OWB_PROFILE_PAGE (source);
  g_free (self->model_hash);
  self->model_hash = g_steal_pointer (&hash);
  refresh_stored_runs (self);
}

static void
hash_model_async (OwbProfilePage *self)
{
  if (self->hash_cancellable)
    g_cancellable_cancel (self->hash_cancellable);
  g_clear_object (&self->hash_cancellable);
  g_clear_pointer (&self->model_hash, g_free);
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  GFile *file = document ? owb_document_get_file (document) : NULL;
  /* without a database there are no stored runs to list: a run of this model brings its hash */
  if (!file || !g_file_test (owb_profile_page_get_database_path (self), G_FILE_TEST_EXISTS))
    return;
  char *path = g_file_get_path (file);
  if (!path)
    return;
  self->hash_cancellable = g_cancellable_new ();
  g_autoptr (GTask) task = owb_document_new_job (document, self, self->hash_cancellable, NULL, hash_model_done, NULL);
  g_task_set_task_data (task, path, g_free);
  owb_document_run_job (document, task, hash_model_thread);
}

static void
refresh_stored_runs (OwbProfilePage *self)
{
  owb_page_list_clear (self->runs_list);
  g_clear_pointer (&self->stored, g_ptr_array_unref);
  g_autofree char *hash = document_model_hash (self);
  const char *path = owb_profile_page_get_database_path (self);
  if (!hash || !g_file_test (path, G_FILE_TEST_EXISTS))
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (OwbProfDb) db = owb_prof_db_open (path, FALSE, &error);
  self->stored = db ? owb_prof_db_list_runs (db, hash, &error) : NULL;
  if (!self->stored)
    {
      owb_page_show_error (OWB_PAGE (self), error->message);
      return;
    }
  for (guint i = self->stored->len; i-- > 0;)
    {
      const OwbProfRunSummary *s = g_ptr_array_index (self->stored, i);
      g_autofree char *date = g_strndup (s->date, 19);
      g_strdelimit (date, "T", ' ');
      g_autofree char *name = s->label[0] ? g_strdup_printf ("#%" G_GINT64_FORMAT " %s", s->id, s->label)
                                          : g_strdup_printf ("#%" G_GINT64_FORMAT, s->id);
      g_autofree char *detail = g_strdup_printf (_("%s, %s, %d threads, %s"), date, s->optimize, s->threads, s->source);
      g_autofree char *value = g_strdup_printf (_("%.3f ms"), s->median_ms);
      GtkWidget *row = table_row (name, detail, value);
      g_object_set_data (G_OBJECT (row), "owb-stored-index", GUINT_TO_POINTER (i));
      GtkWidget *compare = gtk_button_new_from_icon_name ("view-dual-symbolic");
      gtk_widget_add_css_class (compare, "flat");
      g_autofree char *compare_name = g_strdup_printf (_("Compare %s With the Run Shown"), name);
      gtk_widget_set_tooltip_text (compare, compare_name);
      gtk_accessible_update_property (GTK_ACCESSIBLE (compare), GTK_ACCESSIBLE_PROPERTY_LABEL, compare_name, -1);
      g_object_set_data (G_OBJECT (compare), "owb-stored-index", GUINT_TO_POINTER (i));
      g_signal_connect (compare, "clicked", G_CALLBACK (compare_clicked_cb), self);
      gtk_box_append (GTK_BOX (gtk_list_box_row_get_child (GTK_LIST_BOX_ROW (row))), compare);
      gtk_list_box_append (self->runs_list, row);
    }
}

/* ---- Profiling in a worker thread ---- */

typedef struct {
  OwbModel *model;
  OwbOptimizeLevel level;
  char *providers;
  int threads;
  int iterations;
  char *model_path;
  char *db_path;
} ProfileJob;

static void
profile_job_free (ProfileJob *job)
{
  owb_model_unref (job->model);
  g_free (job->providers);
  g_free (job->model_path);
  g_free (job->db_path);
  g_free (job);
}

/* The job's reports, on the main context (owb_job_report). */
static void
progress_cb (gpointer source, double fraction, const char *text)
{
  OwbProfilePage *self = source;
  if (!owb_page_get_disposed (OWB_PAGE (self)) && is_busy (self))
    gtk_progress_bar_set_fraction (self->progress, fraction);
}

/* Seeded values for each feed input (symbolic dims 1), from the engine's one helper: the same
 * values, and the same refusals (no declared rank, no type), as `owb profile --random`. */
static GPtrArray *
random_inputs (OwbSession *session, GError **error)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (0);
  GPtrArray *inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) owb_tensor_unref);
  for (guint i = 0; i < owb_session_get_n_inputs (session); i++)
    {
      OwbTensor *t = owb_tensor_new_random_for_input (owb_session_get_input (session, i), NULL, rand, NULL, error);
      if (!t)
        {
          g_ptr_array_unref (inputs);
          return NULL;
        }
      g_ptr_array_add (inputs, t);
    }
  return inputs;
}

static void
profile_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  ProfileJob *job = task_data;
  GError *error = NULL;
  OwbSessionOptions options;
  owb_session_options_init (&options);
  options.providers = owb_providers_new_from_list (job->providers, &error);
  if (!options.providers)
    {
      g_task_return_error (task, error);
      return;
    }
  options.n_threads = job->threads;
  options.optimize = job->level;
  g_autoptr (OwbSession) session = owb_session_new (job->model, &options, &error);
  g_ptr_array_unref (options.providers);
  if (!session)
    {
      g_task_return_error (task, error);
      return;
    }
  g_autoptr (GPtrArray) inputs = random_inputs (session, &error);
  if (!inputs)
    {
      g_task_return_error (task, error);
      return;
    }
  guint n_in = inputs->len, n_out = owb_session_get_n_outputs (session);
  g_autofree const char **names = g_new0 (const char *, n_in + 1);
  g_autofree OwbTensor **outputs = g_new0 (OwbTensor *, n_out + 1);
  for (guint i = 0; i < n_in; i++)
    names[i] = owb_session_get_input (session, i)->name;

  g_autoptr (OwbProfRun) run = owb_prof_run_new ();
  g_autoptr (OwbProfRecorder) recorder = owb_prof_recorder_new (run, session);
  OwbRunOptions profiled, plain;
  owb_run_options_init (&plain);
  plain.cancellable = cancellable;
  profiled = plain;
  profiled.hooks = owb_prof_recorder_get_hooks (recorder);
  int total = WARMUP_RUNS + job->iterations;
  for (int it = -WARMUP_RUNS; it < job->iterations; it++)
    {
      gboolean ok = owb_session_run_with_options (session, it >= 0 ? &profiled : &plain, n_in, names,
                                                  (OwbTensor *const *) inputs->pdata, n_out, NULL, outputs, NULL, &error);
      for (guint o = 0; o < n_out; o++)
        g_clear_pointer (&outputs[o], owb_tensor_unref);
      if (!ok)
        {
          g_task_return_error (task, error);
          return;
        }
      owb_job_report (task, (double) (it + WARMUP_RUNS + 1) / (total + 1), NULL);
    }
  if (!owb_prof_run_set_model (run, job->model_path, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  owb_prof_run_set_host (run);
  g_free (run->optimize);
  run->optimize = g_strdup (owb_optimize_level_to_string (job->level));
  g_free (run->providers);
  run->providers = g_strdup (job->providers);
  g_free (run->engine_version);
  run->engine_version = g_strdup (OWB_VERSION);
  g_autofree char *folder = g_path_get_dirname (job->db_path);
  g_mkdir_with_parents (folder, 0755);
  g_autoptr (OwbProfDb) db = owb_prof_db_open (job->db_path, TRUE, &error);
  if (!db || !owb_prof_db_store_run (db, run, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, g_steal_pointer (&run), (GDestroyNotify) owb_prof_run_free);
}

static void
run_done_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  OwbProfilePage *self = OWB_PROFILE_PAGE (source);
  g_autoptr (GError) error = NULL;
  OwbProfRun *run = g_task_propagate_pointer (G_TASK (result), &error);
  owb_page_set_busy (OWB_PAGE (self), NULL);
  if (owb_page_get_disposed (OWB_PAGE (self)))
    {
      owb_prof_run_free (run);
      return;
    }
  if (!run)
    {
      self->loading_for_compare = FALSE;
      owb_page_show_error (OWB_PAGE (self), owb_error_is_cancelled (error) ? _("Cancelled") : error->message);
      return;
    }
  owb_page_show_error (OWB_PAGE (self), NULL);
  if (self->loading_for_compare)
    {
      self->loading_for_compare = FALSE;
      show_comparison (self, run);
      owb_prof_run_free (run);
      return;
    }
  /* a run of this document carries its model's hash: no need to wait for hash_model_async */
  if (!self->model_hash && run->model_hash)
    self->model_hash = g_strdup (run->model_hash);
  show_comparison (self, NULL);
  show_run (self, run);
  refresh_stored_runs (self);
}

void
owb_profile_page_profile (OwbProfilePage *self, int iterations, int threads)
{
  g_return_if_fail (OWB_IS_PROFILE_PAGE (self));
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  OwbPrepared *prepared = document ? owb_document_get_prepared (document) : NULL;
  GFile *file = document ? owb_document_get_file (document) : NULL;
  g_autofree char *path = file ? g_file_get_path (file) : NULL;
  if (is_busy (self) || !prepared || !owb_prepared_get_session (prepared) || !path)
    return;
  ProfileJob *job = g_new0 (ProfileJob, 1);
  job->model = owb_model_ref (owb_document_get_model (document));
  job->level = owb_prepared_get_level (prepared);
  job->providers = g_strdup (owb_prepared_get_providers (prepared));
  job->threads = threads;
  job->iterations = MAX (iterations, 1);
  job->model_path = g_steal_pointer (&path);
  job->db_path = g_strdup (owb_profile_page_get_database_path (self));
  owb_page_show_error (OWB_PAGE (self), NULL);
  gtk_progress_bar_set_fraction (self->progress, 0);
  owb_page_set_busy (OWB_PAGE (self), g_cancellable_new ());
  g_autoptr (GTask) task = owb_document_new_job (document, self, owb_page_get_cancellable (OWB_PAGE (self)), progress_cb,
                                                 run_done_cb, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) profile_job_free);
  owb_document_run_job (document, task, profile_thread);
}

/* ---- Stored runs ---- */

typedef struct {
  char *db_path;
  gint64 id;
} LoadJob;

static void
load_job_free (LoadJob *job)
{
  g_free (job->db_path);
  g_free (job);
}

static void
load_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  LoadJob *job = task_data;
  GError *error = NULL;
  g_autoptr (OwbProfDb) db = owb_prof_db_open (job->db_path, FALSE, &error);
  OwbProfRun *run = db ? owb_prof_db_load_run (db, job->id, &error) : NULL;
  if (!run)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, run, (GDestroyNotify) owb_prof_run_free);
}

void
owb_profile_page_show_stored_run (OwbProfilePage *self, guint index)
{
  g_return_if_fail (OWB_IS_PROFILE_PAGE (self));
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  if (is_busy (self) || !document || !self->stored || index >= self->stored->len)
    return;
  LoadJob *job = g_new0 (LoadJob, 1);
  job->db_path = g_strdup (owb_profile_page_get_database_path (self));
  job->id = ((OwbProfRunSummary *) g_ptr_array_index (self->stored, index))->id;
  owb_page_set_busy (OWB_PAGE (self), g_cancellable_new ());
  g_autoptr (GTask) task = owb_document_new_job (document, self, owb_page_get_cancellable (OWB_PAGE (self)), NULL,
                                                 run_done_cb, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) load_job_free);
  owb_document_run_job (document, task, load_thread);
}

void
owb_profile_page_compare_stored_run (OwbProfilePage *self, guint index)
{
  g_return_if_fail (OWB_IS_PROFILE_PAGE (self));
  if (!owb_timeline_get_run (self->timeline))
    return;
  owb_profile_page_show_stored_run (self, index);
  if (is_busy (self))
    self->loading_for_compare = TRUE;
}

guint
owb_profile_page_get_n_comparison_rows (OwbProfilePage *self)
{
  g_return_val_if_fail (OWB_IS_PROFILE_PAGE (self), 0);
  return self->n_compare_rows;
}

static void
compare_clicked_cb (GtkButton *button, OwbProfilePage *self)
{
  owb_profile_page_compare_stored_run (self, GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (button), "owb-stored-index")));
}

static void
run_row_activated_cb (GtkListBox *list, GtkListBoxRow *row, OwbProfilePage *self)
{
  owb_profile_page_show_stored_run (self, GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (row), "owb-stored-index")));
}

static void
timeline_node_activated_cb (OwbTimeline *timeline, const char *name, gboolean reveal, OwbProfilePage *self)
{
  owb_page_activate_node (OWB_PAGE (self), name, reveal);
}

static void
node_row_activated_cb (GtkListBox *list, GtkListBoxRow *row, OwbProfilePage *self)
{
  const char *name = g_object_get_data (G_OBJECT (row), "owb-node-name");
  if (name)
    owb_page_activate_node (OWB_PAGE (self), name, TRUE);
}

static void
profile_clicked_cb (OwbProfilePage *self)
{
  owb_profile_page_profile (self, gtk_spin_button_get_value_as_int (self->iterations_spin),
                            gtk_spin_button_get_value_as_int (self->threads_spin));
}

static void
cancel_clicked_cb (OwbProfilePage *self)
{
  owb_page_cancel (OWB_PAGE (self));
}

/* ---- Document ---- */

static void
document_changed (OwbPage *page)
{
  OwbProfilePage *self = OWB_PROFILE_PAGE (page);
  show_comparison (self, NULL);
  show_run (self, NULL);
  owb_page_show_error (OWB_PAGE (self), NULL);
  hash_model_async (self); /* lists the stored runs when done */
  refresh_stored_runs (self);
  update_sensitivity (self);
}

OwbTimeline *
owb_profile_page_get_timeline (OwbProfilePage *self)
{
  g_return_val_if_fail (OWB_IS_PROFILE_PAGE (self), NULL);
  return self->timeline;
}

guint
owb_profile_page_get_n_op_rows (OwbProfilePage *self)
{
  g_return_val_if_fail (OWB_IS_PROFILE_PAGE (self), 0);
  return self->n_op_rows;
}

guint
owb_profile_page_get_n_stored_runs (OwbProfilePage *self)
{
  g_return_val_if_fail (OWB_IS_PROFILE_PAGE (self), 0);
  return self->stored ? self->stored->len : 0;
}

/* ---- Widget ---- */

static void
owb_profile_page_init (OwbProfilePage *self)
{
  g_type_ensure (OWB_TYPE_TIMELINE);
  gtk_widget_init_template (GTK_WIDGET (self));
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->profile_button));
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->db_button));
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->db_default_button));

  /* Without the schema (an uninstalled build run without GSETTINGS_SCHEMA_DIR) the page still
   * works, with $OWB_PROFILE_DB or the default database. */
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchema) schema = source ? g_settings_schema_source_lookup (source, OWB_APP_ID, TRUE) : NULL;
  if (schema && g_settings_schema_has_key (schema, "profile-database"))
    {
      self->settings = g_settings_new (OWB_APP_ID);
      g_signal_connect_swapped (self->settings, "changed::profile-database", G_CALLBACK (database_changed), self);
    }
  owb_page_set_error_label (OWB_PAGE (self), self->error_label);
  update_database_label (self);
  update_sensitivity (self);
}

static void
owb_profile_page_dispose (GObject *object)
{
  OwbProfilePage *self = OWB_PROFILE_PAGE (object);
  if (self->hash_cancellable)
    g_cancellable_cancel (self->hash_cancellable);
  owb_page_close_file_chooser (&self->chooser);
  if (self->settings)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  g_clear_object (&self->settings);
  gtk_widget_dispose_template (GTK_WIDGET (self), OWB_TYPE_PROFILE_PAGE);
  G_OBJECT_CLASS (owb_profile_page_parent_class)->dispose (object);
}

static void
owb_profile_page_finalize (GObject *object)
{
  OwbProfilePage *self = OWB_PROFILE_PAGE (object);
  g_clear_object (&self->hash_cancellable);
  g_free (self->model_hash);
  g_clear_pointer (&self->time_shares, g_hash_table_unref);
  g_clear_pointer (&self->compare_deltas, g_hash_table_unref);
  g_clear_pointer (&self->stored, g_ptr_array_unref);
  g_free (self->db_path);
  g_free (self->db_resolved);
  G_OBJECT_CLASS (owb_profile_page_parent_class)->finalize (object);
}

static void
owb_profile_page_class_init (OwbProfilePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  OwbPageClass *page_class = OWB_PAGE_CLASS (klass);
  object_class->dispose = owb_profile_page_dispose;
  object_class->finalize = owb_profile_page_finalize;
  page_class->document_changed = document_changed;
  page_class->prepared_changed = update;
  page_class->update = update;
  gtk_widget_class_set_template_from_resource (widget_class, "/org/onnxworkbench/Workbench/owb-profile-page.ui");
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, scroller);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, iterations_spin);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, threads_spin);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, profile_button);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, progress);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, error_label);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, summary_label);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, graph_button);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, export_button);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, timeline);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, ops_list);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, nodes_list);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, runs_list);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, db_label);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, db_button);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, db_default_button);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, compare_box);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, compare_label);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, compare_graph_button);
  gtk_widget_class_bind_template_child (widget_class, OwbProfilePage, compare_list);
  gtk_widget_class_bind_template_callback (widget_class, profile_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, cancel_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, graph_button_toggled_cb);
  gtk_widget_class_bind_template_callback (widget_class, export_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, timeline_node_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, node_row_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, run_row_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, compare_graph_button_toggled_cb);
  gtk_widget_class_bind_template_callback (widget_class, db_button_clicked_cb);
  gtk_widget_class_bind_template_callback (widget_class, db_default_clicked_cb);
  gtk_widget_class_set_css_name (widget_class, "profilepage");
}

GtkWidget *
owb_profile_page_new (void)
{
  return g_object_new (OWB_TYPE_PROFILE_PAGE, NULL);
}
