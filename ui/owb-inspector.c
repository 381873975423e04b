/* owb-inspector.c: the side panel describing the selected node, tensor or the whole model. */
#include "owb-inspector.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "owb-graph-scene.h"
#include "owb-histogram.h"
#include "owb-page-util.h"
#include "owb-resources.h"
#include <owb/owb-tensor-stats.h>
#include "owb-values-view.h"

#define HISTOGRAM_BINS 64
/* Up to this many elements the statistics are computed at once: a thread costs more than that. */
#define SYNC_STATS_LIMIT 65536
/* Lists longer than this are cut short ("… 120 more") so a row stays readable. */
#define LIST_PREVIEW 16
/* Tensors up to this many elements show their values. */
#define TINY_TENSOR 16

struct _OwbInspector {
  GtkWidget parent_instance;

  GtkStack *stack;
  AdwStatusPage *empty_page;
  GtkScrolledWindow *scroller;
  GtkLabel *title_label;
  GtkLabel *subtitle_label;
  GtkBox *sections;

  /* Bumped by every show/clear so results of work started for an earlier item are dropped. */
  guint generation;
  /* Cancelled when the panel goes away. */
  GCancellable *cancellable;
  /* Runs the statistics and exports as its jobs: the window's, or one of the panel's own. */
  OwbDocument *document;
  /* One statistics thread at a time: clicking through twenty large weights must not start twenty
   * passes over them. An item shown while the thread works on an older one waits for it. */
  gboolean stats_running;

  /* The initializer on show (referenced, so it outlives the graph) and its statistics widgets. */
  OwbTensor *tensor;
  char *tensor_name;
  AdwPreferencesGroup *stats_group;
  GtkWidget *stats_pending_row;
  GtkLabel *export_status;
  GtkWidget *export_button;
  GtkFileChooserNative *chooser;
};

G_DEFINE_FINAL_TYPE (OwbInspector, owb_inspector, GTK_TYPE_WIDGET)

enum {
  SIGNAL_TENSOR_ACTIVATED,
  SIGNAL_NODE_ACTIVATED,
  SIGNAL_SUBGRAPH_ACTIVATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* ---- text helpers ---- */

static const char *
domain_name (const char *domain)
{
  return domain && domain[0] ? domain : "ai.onnx";
}

/* "1×3×224×224", or "scalar" for rank 0. */
static char *
format_dims (int rank, const int64_t *dims)
{
  if (rank == 0)
    return g_strdup (_("scalar"));
  GString *s = g_string_new (NULL);
  for (int i = 0; i < rank; i++)
    {
      if (i)
        g_string_append (s, "×");
      g_string_append_printf (s, "%" G_GINT64_FORMAT, dims[i]);
    }
  return g_string_free (s, FALSE);
}

static char *
format_tensor_type (const OwbTensor *t)
{
  g_autofree char *dims = format_dims (t->rank, t->dims);
  if (t->kind == OWB_VALUE_SEQUENCE)
    return g_strdup_printf (_("sequence of %u %s"), t->sequence ? t->sequence->len : 0,
                            owb_data_type_name (t->dtype));
  if (t->kind == OWB_VALUE_MAP)
    return g_strdup_printf (_("map of %s"), owb_data_type_name (t->dtype));
  return g_strdup_printf ("%s %s", owb_data_type_name (t->dtype), dims);
}

static char *
format_double (double v)
{
  if (isnan (v))
    return g_strdup ("NaN");
  if (isinf (v))
    return g_strdup (v > 0 ? "inf" : "-inf");
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  /* g_ascii_formatd: the same text in every locale, as ONNX tools print numbers. */
  return g_strdup (g_ascii_formatd (buf, sizeof buf, "%.6g", v));
}

static char *
format_count (guint64 n)
{
  return g_strdup_printf ("%" G_GUINT64_FORMAT, n);
}

/* Printable text of a byte string attribute: invalid UTF-8 repaired and long text cut short. */
static char *
printable_string (const char *s, gsize len)
{
  g_autofree char *valid = g_utf8_make_valid (s ? s : "", s ? (gssize) len : 0);
  if (g_utf8_strlen (valid, -1) > 200)
    {
      g_autofree char *head = g_utf8_substring (valid, 0, 200);
      return g_strconcat (head, "…", NULL);
    }
  return g_steal_pointer (&valid);
}

static void
append_more (GString *s, int shown, int n)
{
  if (n > shown)
    g_string_append_printf (s, ngettext (", … %d more", ", … %d more", n - shown), n - shown);
}

/* "[1, 2, 3]"; a scalar without brackets. */
static char *
format_tensor_values (const OwbTensor *t)
{
  GString *s = g_string_new (t->rank ? "[" : "");
  for (int64_t i = 0; i < t->nelems; i++)
    {
      if (i)
        g_string_append (s, ", ");
      if (t->dtype == OWB_TYPE_STRING)
        {
          const char *str = ((char **) t->data)[i];
          g_autofree char *p = printable_string (str, str ? strlen (str) : 0);
          g_string_append_printf (s, "\"%s\"", p);
        }
      else
        {
          g_autofree char *v = format_double (owb_tensor_get_double (t, i));
          g_string_append (s, v);
        }
    }
  if (t->rank)
    g_string_append (s, "]");
  return g_string_free (s, FALSE);
}

static gboolean
is_plain_numeric (OwbDataType dtype)
{
  return ((OWB_TYPES_NUMERIC | OWB_TYPE_BIT (OWB_TYPE_BFLOAT16) | OWB_TYPE_BIT (OWB_TYPE_BOOL)
           | OWB_TYPE_BIT (OWB_TYPE_STRING))
          & OWB_TYPE_BIT (dtype))
         != 0;
}

static char *
format_attribute (const OwbAttribute *a)
{
  GString *s;
  switch (a->type)
    {
    case OWB_ATTR_FLOAT:
      return format_double (a->f);
    case OWB_ATTR_INT:
      return g_strdup_printf ("%" G_GINT64_FORMAT, a->i);
    case OWB_ATTR_STRING:
      return printable_string (a->s, a->s_len);
    case OWB_ATTR_INTS:
      s = g_string_new ("[");
      for (int i = 0; i < MIN (a->n, LIST_PREVIEW); i++)
        g_string_append_printf (s, i ? ", %" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, a->ints[i]);
      append_more (s, LIST_PREVIEW, a->n);
      g_string_append (s, "]");
      return g_string_free (s, FALSE);
    case OWB_ATTR_FLOATS:
      s = g_string_new ("[");
      for (int i = 0; i < MIN (a->n, LIST_PREVIEW); i++)
        {
          g_autofree char *v = format_double (a->floats[i]);
          g_string_append_printf (s, i ? ", %s" : "%s", v);
        }
      append_more (s, LIST_PREVIEW, a->n);
      g_string_append (s, "]");
      return g_string_free (s, FALSE);
    case OWB_ATTR_STRINGS:
      s = g_string_new ("[");
      for (int i = 0; i < MIN (a->n, LIST_PREVIEW) && a->strings[i]; i++)
        {
          g_autofree char *v = printable_string (a->strings[i], strlen (a->strings[i]));
          g_string_append_printf (s, i ? ", \"%s\"" : "\"%s\"", v);
        }
      append_more (s, LIST_PREVIEW, a->n);
      g_string_append (s, "]");
      return g_string_free (s, FALSE);
    case OWB_ATTR_TENSOR:
      if (!a->t)
        return g_strdup (_("tensor"));
      {
        g_autofree char *type = format_tensor_type (a->t);
        if (a->t->kind == OWB_VALUE_TENSOR && a->t->nelems <= TINY_TENSOR && a->t->nelems > 0
            && is_plain_numeric (a->t->dtype) && a->t->data)
          {
            g_autofree char *values = format_tensor_values (a->t);
            return g_strdup_printf ("%s = %s", type, values);
          }
        return g_steal_pointer (&type);
      }
    case OWB_ATTR_TENSORS:
      return g_strdup_printf (ngettext ("%d tensor", "%d tensors", a->n), a->n);
    case OWB_ATTR_GRAPH:
      {
        guint n = a->g ? a->g->nodes->len : 0;
        return g_strdup_printf (ngettext ("%u node", "%u nodes", n), n);
      }
    case OWB_ATTR_GRAPHS:
      return g_strdup_printf (ngettext ("%d graph", "%d graphs", a->n), a->n);
    case OWB_ATTR_SPARSE_TENSOR:
      return g_strdup (_("sparse tensor"));
    case OWB_ATTR_SPARSE_TENSORS:
      return g_strdup_printf (ngettext ("%d sparse tensor", "%d sparse tensors", a->n), a->n);
    case OWB_ATTR_TYPE_PROTO:
      return owb_value_type_to_string (&a->tp);
    case OWB_ATTR_TYPE_PROTOS:
      return g_strdup_printf (ngettext ("%d type", "%d types", a->n), a->n);
    case OWB_ATTR_UNDEFINED:
    default:
      return g_strdup (_("undefined"));
    }
}

/* ---- graph look-ups (along the outer scopes, as a subgraph sees its values) ---- */

static OwbTensor *
find_initializer (const OwbGraph *graph, const char *name, const OwbGraph **owner)
{
  for (const OwbGraph *g = graph; g; g = g->parent)
    {
      OwbTensor *t = owb_graph_get_initializer (g, name);
      if (t)
        {
          if (owner)
            *owner = g;
          return t;
        }
    }
  return NULL;
}

static const OwbValueInfo *
find_value_info (const OwbGraph *graph, const char *name)
{
  for (const OwbGraph *g = graph; g; g = g->parent)
    {
      const OwbValueInfo *info = owb_graph_find_value_info (g, name);
      if (info && info->has_type)
        return info;
    }
  return NULL;
}

static gboolean
list_has_name (GPtrArray *infos, const char *name)
{
  for (guint i = 0; infos && i < infos->len; i++)
    if (g_strcmp0 (((OwbValueInfo *) infos->pdata[i])->name, name) == 0)
      return TRUE;
  return FALSE;
}

/* "float[1,3,224,224]", "initializer, float 64×3×7×7" or "type unknown". */
static char *
describe_value (const OwbGraph *graph, const char *name)
{
  OwbTensor *init = find_initializer (graph, name, NULL);
  if (init)
    {
      g_autofree char *type = format_tensor_type (init);
      return g_strdup_printf (_("initializer, %s"), type);
    }
  const OwbValueInfo *info = find_value_info (graph, name);
  if (info)
    return owb_value_type_to_string (&info->type);
  return g_strdup (_("type unknown"));
}

static char *
node_title (const OwbNode *node)
{
  return g_strdup (node->name && node->name[0] ? node->name : node->op_type);
}

/* ---- building the sections ---- */

static AdwPreferencesGroup *
add_group (OwbInspector *self, const char *title)
{
  GtkWidget *group = adw_preferences_group_new ();
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), title);
  gtk_accessible_update_property (GTK_ACCESSIBLE (group), GTK_ACCESSIBLE_PROPERTY_LABEL, title, -1);
  gtk_box_append (self->sections, group);
  return ADW_PREFERENCES_GROUP (group);
}

static AdwActionRow *
new_row (const char *title, const char *subtitle)
{
  GtkWidget *row = adw_action_row_new ();
  /* Names and values come from the model file: never parse them as markup. */
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  g_autofree char *label = subtitle ? g_strdup_printf ("%s: %s", title, subtitle) : g_strdup (title);
  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
  return ADW_ACTION_ROW (row);
}

/* A key and its value, the value selectable so names and numbers can be copied. */
static AdwActionRow *
add_property (AdwPreferencesGroup *group, const char *key, const char *value)
{
  AdwActionRow *row = new_row (key, NULL);
  GtkWidget *label = gtk_label_new (value);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  /* Selectable labels select all their text when focused; the row takes keyboard focus instead
   * (and reads key and value), the mouse can still select and copy. */
  gtk_widget_set_focusable (label, FALSE);
  gtk_label_set_xalign (GTK_LABEL (label), 1);
  gtk_label_set_justify (GTK_LABEL (label), GTK_JUSTIFY_RIGHT);
  /* Short values stay on one line (a wrapping label would be squeezed to a column by the
   * expanding title); long ones wrap, but never narrower than a readable width. */
  if (g_utf8_strlen (value, -1) > 24)
    {
      gtk_label_set_wrap (GTK_LABEL (label), TRUE);
      gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
      gtk_label_set_width_chars (GTK_LABEL (label), 16);
      gtk_label_set_max_width_chars (GTK_LABEL (label), 28);
    }
  gtk_widget_set_margin_top (label, 6);
  gtk_widget_set_margin_bottom (label, 6);
  adw_action_row_add_suffix (row, label);
  g_autofree char *a11y = g_strdup_printf ("%s: %s", key, value);
  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y, -1);
  adw_preferences_group_add (group, GTK_WIDGET (row));
  return row;
}

static void
add_property_take (AdwPreferencesGroup *group, const char *key, char *value)
{
  add_property (group, key, value);
  g_free (value);
}

static AdwActionRow *
add_text_row (AdwPreferencesGroup *group, const char *title, const char *subtitle)
{
  AdwActionRow *row = new_row (title, subtitle);
  adw_action_row_set_subtitle_lines (row, 0);
  adw_preferences_group_add (group, GTK_WIDGET (row));
  return row;
}

static void
make_activatable (AdwActionRow *row)
{
  GtkWidget *arrow = gtk_image_new_from_icon_name ("go-next-symbolic");
  gtk_accessible_update_property (GTK_ACCESSIBLE (arrow), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Show"), -1);
  adw_action_row_add_suffix (row, arrow);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
}

static void
tensor_row_activated (AdwActionRow *row, OwbInspector *self)
{
  const char *name = g_object_get_data (G_OBJECT (row), "owb-tensor-name");
  g_signal_emit (self, signals[SIGNAL_TENSOR_ACTIVATED], 0, name);
}

static void
node_row_activated (AdwActionRow *row, OwbInspector *self)
{
  gpointer node = g_object_get_data (G_OBJECT (row), "owb-node");
  g_signal_emit (self, signals[SIGNAL_NODE_ACTIVATED], 0, node);
}

/* A node's input or output, its schema's name for it ("W") before its type. */
static void
add_named_value_row (OwbInspector *self, AdwPreferencesGroup *group, const OwbGraph *graph, const char *name,
                     const char *role)
{
  g_autofree char *described = describe_value (graph, name);
  g_autofree char *type = role ? g_strdup_printf ("%s · %s", role, described) : g_strdup (described);
  AdwActionRow *row = add_text_row (group, name, type);
  make_activatable (row);
  g_object_set_data_full (G_OBJECT (row), "owb-tensor-name", g_strdup (name), g_free);
  g_signal_connect (row, "activated", G_CALLBACK (tensor_row_activated), self);
}

static void
add_value_row (OwbInspector *self, AdwPreferencesGroup *group, const OwbGraph *graph, const char *name)
{
  add_named_value_row (self, group, graph, name, NULL);
}

static void
add_node_row (OwbInspector *self, AdwPreferencesGroup *group, const OwbNode *node)
{
  g_autofree char *title = node_title (node);
  AdwActionRow *row = add_text_row (group, title, node->op_type);
  make_activatable (row);
  g_object_set_data (G_OBJECT (row), "owb-node", (gpointer) node);
  g_signal_connect (row, "activated", G_CALLBACK (node_row_activated), self);
}

static void
subgraph_row_activated (AdwActionRow *row, OwbInspector *self)
{
  gpointer node = g_object_get_data (G_OBJECT (row), "owb-node");
  const char *attribute = g_object_get_data (G_OBJECT (row), "owb-attribute");
  g_signal_emit (self, signals[SIGNAL_SUBGRAPH_ACTIVATED], 0, node, attribute);
}

/* A branch or body row ("then_branch: 6 nodes") opens the subgraph it names. */
static void
add_subgraph_row (OwbInspector *self, AdwPreferencesGroup *group, const OwbNode *node, const OwbAttribute *attr)
{
  g_autofree char *count = format_attribute (attr);
  AdwActionRow *row = add_text_row (group, attr->name, count);
  make_activatable (row);
  gtk_widget_set_tooltip_text (GTK_WIDGET (row), _("Open this subgraph"));
  g_object_set_data (G_OBJECT (row), "owb-node", (gpointer) node);
  g_object_set_data_full (G_OBJECT (row), "owb-attribute", g_strdup (attr->name), g_free);
  g_signal_connect (row, "activated", G_CALLBACK (subgraph_row_activated), self);
}

/* What an If/Loop/Scan node's bodies read from around them (its implicit inputs, which the
 * graph draws as edges into it), weights left out; nothing for other nodes. */
static void
add_body_reads (OwbInspector *self, const OwbGraph *graph, const OwbNode *node)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  AdwPreferencesGroup *group = NULL;
  for (int a = 0; a < node->n_attributes; a++)
    {
      const OwbAttribute *attr = &node->attributes[a];
      if (attr->type != OWB_ATTR_GRAPH || !attr->g)
        continue;
      g_autoptr (GPtrArray) reads = owb_scene_dup_outer_values (attr->g);
      for (guint i = 0; i < reads->len; i++)
        {
          if (!g_hash_table_add (seen, reads->pdata[i]))
            continue;
          if (!group)
            group = add_group (self, _("Read by Its Subgraphs"));
          add_value_row (self, group, graph, reads->pdata[i]);
        }
    }
}

/* ---- state ---- */

static void
reset (OwbInspector *self)
{
  self->generation++;
  g_clear_pointer (&self->tensor, owb_tensor_unref);
  g_clear_pointer (&self->tensor_name, g_free);
  self->stats_group = NULL;
  self->stats_pending_row = NULL;
  self->export_status = NULL;
  self->export_button = NULL;
  if (self->chooser)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
      g_clear_object (&self->chooser);
    }
  GtkWidget *child;
  while (self->sections && (child = gtk_widget_get_first_child (GTK_WIDGET (self->sections))))
    gtk_box_remove (self->sections, child);
}

static void
begin (OwbInspector *self, const char *title, const char *subtitle)
{
  reset (self);
  gtk_label_set_text (self->title_label, title);
  gtk_label_set_text (self->subtitle_label, subtitle);
  gtk_stack_set_visible_child_name (self->stack, "content");
  gtk_adjustment_set_value (gtk_scrolled_window_get_vadjustment (self->scroller), 0);
}

/* ---- node ---- */

void
owb_inspector_show_node (OwbInspector *self, const OwbGraph *graph, const OwbNode *node)
{
  g_return_if_fail (OWB_IS_INSPECTOR (self));
  g_return_if_fail (node != NULL);
  if (!graph)
    graph = node->graph;

  g_autofree char *title = node_title (node);
  /* TRANSLATORS: the inspector's subtitle for a node, e.g. "Conv node" */
  g_autofree char *subtitle = g_strdup_printf (_("%s node"), node->op_type);
  begin (self, title, subtitle);

  AdwPreferencesGroup *group = add_group (self, _("Node"));
  add_property (group, _("Name"), node->name && node->name[0] ? node->name : _("(unnamed)"));
  add_property (group, _("Op type"), node->op_type);
  add_property (group, _("Domain"), domain_name (node->domain));
  int64_t opset = node->opset;
  if (opset <= 0 && graph && graph->model)
    opset = owb_model_get_opset (graph->model, node->domain);
  add_property_take (group, _("Opset"), opset > 0 ? g_strdup_printf ("%" G_GINT64_FORMAT, opset) : g_strdup (_("unknown")));
  if (node->doc_string && node->doc_string[0])
    add_text_row (group, _("Documentation"), node->doc_string);

  group = add_group (self, _("Attributes"));
  if (node->n_attributes == 0)
    adw_preferences_group_set_description (group, _("None"));
  for (int i = 0; i < node->n_attributes; i++)
    {
      const OwbAttribute *attr = &node->attributes[i];
      if (attr->type == OWB_ATTR_GRAPH && attr->g)
        add_subgraph_row (self, group, node, attr);
      else
        add_property_take (group, attr->name, format_attribute (attr));
    }

  group = add_group (self, _("Inputs"));
  if (node->n_inputs == 0)
    adw_preferences_group_set_description (group, _("None"));
  const OwbOpSchema *schema = owb_op_schema_lookup (node->domain, node->op_type, opset > 0 ? (int) opset : G_MAXINT);
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i][0])
      add_named_value_row (self, group, graph, node->inputs[i],
                           owb_op_schema_is_input_variadic (schema, i) ? NULL : owb_op_schema_get_input_name (schema, i));
    else
      {
        const char *role = owb_op_schema_get_input_name (schema, i);
        g_autofree char *which = role ? g_strdup (role) : g_strdup_printf (_("Optional input %d"), i + 1);
        add_text_row (group, _("(not given)"), which);
      }
  add_body_reads (self, graph, node);

  group = add_group (self, _("Outputs"));
  for (int i = 0; i < node->n_outputs; i++)
    if (node->outputs[i][0])
      add_named_value_row (self, group, graph, node->outputs[i],
                           owb_op_schema_is_output_variadic (schema, i) ? NULL : owb_op_schema_get_output_name (schema, i));
    else
      {
        g_autofree char *which = g_strdup_printf (_("Optional output %d"), i + 1);
        add_text_row (group, _("(unused)"), which);
      }

  group = add_group (self, _("Provider"));
  guint n_declines = node->declines ? node->declines->len : 0;
  if (node->provider)
    {
      g_autofree char *runs = g_strdup_printf (_("Runs on %s"), node->provider);
      add_text_row (group, runs, NULL);
    }
  else
    add_text_row (group, _("No provider claimed this node"),
                  n_declines ? NULL : _("Providers are assigned when the model is prepared to run"));
  for (guint i = 0; i < n_declines; i++)
    {
      const OwbDecline *d = node->declines->pdata[i];
      g_autofree char *who = g_strdup_printf (_("Declined by %s"), d->provider);
      add_text_row (group, who, d->reason && d->reason[0] ? d->reason : _("No reason given"));
    }
}

/* ---- tensors and values ---- */

typedef struct {
  OwbTensor *tensor;
  guint generation;
  OwbTensorStats stats;
  guint64 bins[HISTOGRAM_BINS];
} StatsJob;

static void
stats_job_free (gpointer data)
{
  StatsJob *job = data;
  owb_tensor_unref (job->tensor);
  g_free (job);
}

static void
show_stats (OwbInspector *self, const OwbTensorStats *s, const guint64 *bins)
{
  AdwPreferencesGroup *group = self->stats_group;
  if (self->stats_pending_row)
    {
      adw_preferences_group_remove (group, self->stats_pending_row);
      self->stats_pending_row = NULL;
    }
  add_property_take (group, _("Min"), format_double (s->min));
  add_property_take (group, _("Max"), format_double (s->max));
  add_property_take (group, _("Mean"), format_double (s->mean));
  add_property_take (group, _("Std"), format_double (s->std));
  add_property_take (group, _("NaN"), format_count (s->n_nan));
  add_property_take (group, _("Inf"), format_count (s->n_inf));
  if (s->count > s->n_nan + s->n_inf)
    {
      GtkWidget *histogram = owb_histogram_new ();
      gtk_widget_set_margin_top (histogram, 12);
      owb_histogram_set_bins (OWB_HISTOGRAM (histogram), bins, HISTOGRAM_BINS, s->min, s->max);
      adw_preferences_group_add (group, histogram);
    }
}

/* The engine's messages are English; the two reasons it has are said here in the user's language. */
static void
show_stats_error (OwbInspector *self, const OwbTensor *tensor, const GError *error)
{
  if (self->stats_pending_row)
    {
      adw_preferences_group_remove (self->stats_group, self->stats_pending_row);
      self->stats_pending_row = NULL;
    }
  g_autofree char *reason = NULL;
  if (!g_error_matches (error, OWB_ERROR, OWB_ERROR_TYPE))
    reason = g_strdup (error->message);
  else if (tensor->kind != OWB_VALUE_TENSOR)
    reason = g_strdup (_("Statistics need a tensor, not a sequence or map"));
  else
    reason = g_strdup_printf (_("No statistics for tensors of type %s"), owb_data_type_name (tensor->dtype));
  add_text_row (self->stats_group, _("No statistics"), reason);
}

static OwbDocument *
get_document (OwbInspector *self)
{
  if (!self->document)
    self->document = owb_document_new ();
  return self->document;
}

static void
stats_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  StatsJob *job = data;
  GError *error = NULL;
  if (g_task_return_error_if_cancelled (task))
    return;
  if (owb_tensor_stats_compute (job->tensor, &job->stats, HISTOGRAM_BINS, job->bins, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void launch_stats (OwbInspector *self);

static void
stats_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  OwbInspector *self = OWB_INSPECTOR (source);
  StatsJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);
  self->stats_running = FALSE;
  if (owb_error_is_cancelled (error))
    return;
  if (job->generation != self->generation)
    {
      /* The panel moved on while the thread ran: drop the result, and start on the item now on
       * show if it waits for statistics. */
      if (self->stats_pending_row && self->tensor)
        launch_stats (self);
      return;
    }
  if (ok)
    show_stats (self, &job->stats, job->bins);
  else
    show_stats_error (self, job->tensor, error);
}

static void
launch_stats (OwbInspector *self)
{
  StatsJob *job = g_new0 (StatsJob, 1);
  job->tensor = owb_tensor_ref (self->tensor);
  job->generation = self->generation;
  OwbDocument *document = get_document (self);
  g_autoptr (GTask) task = owb_document_new_job (document, self, self->cancellable, NULL, stats_done, NULL);
  g_task_set_source_tag (task, launch_stats);
  /* The job holds its own reference: the graph and the panel's tensor may go meanwhile. */
  g_task_set_task_data (task, job, stats_job_free);
  self->stats_running = TRUE;
  owb_document_run_job (document, task, stats_thread);
}

static void
start_stats (OwbInspector *self)
{
  OwbTensor *t = self->tensor;
  if (t->nelems <= SYNC_STATS_LIMIT)
    {
      OwbTensorStats s;
      guint64 bins[HISTOGRAM_BINS];
      g_autoptr (GError) error = NULL;
      if (owb_tensor_stats_compute (t, &s, HISTOGRAM_BINS, bins, &error))
        show_stats (self, &s, bins);
      else
        show_stats_error (self, t, error);
      return;
    }

  GtkWidget *spinner = gtk_spinner_new ();
  gtk_spinner_start (GTK_SPINNER (spinner));
  gtk_accessible_update_property (GTK_ACCESSIBLE (spinner), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Computing statistics"), -1);
  AdwActionRow *row = add_text_row (self->stats_group, _("Computing statistics…"), NULL);
  adw_action_row_add_prefix (row, spinner);
  self->stats_pending_row = GTK_WIDGET (row);
  if (!self->stats_running)
    launch_stats (self);
}

static void
report_export (OwbInspector *self, const char *message, gboolean is_error)
{
  if (owb_page_toast (GTK_WIDGET (self), message, 0))
    {
      if (self->export_status)
        gtk_widget_set_visible (GTK_WIDGET (self->export_status), FALSE);
      return;
    }
  if (!self->export_status)
    return;
  gtk_label_set_text (self->export_status, message);
  if (is_error)
    gtk_widget_add_css_class (GTK_WIDGET (self->export_status), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->export_status), "error");
  gtk_widget_set_visible (GTK_WIDGET (self->export_status), TRUE);
}

/* user_data: the generation the export was started in. */
static void
export_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  OwbInspector *self = OWB_INSPECTOR (source);
  guint generation = GPOINTER_TO_UINT (user_data);
  g_autoptr (GError) error = NULL;
  const char *path;
  gboolean ok = owb_document_save_tensor_finish (result, &path, &error);
  if (self->export_button && generation == self->generation)
    gtk_widget_set_sensitive (self->export_button, TRUE);
  if (owb_error_is_cancelled (error))
    return;
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *message = ok ? g_strdup_printf (_("Exported “%s”"), base)
                                : g_strdup_printf (_("Could not export “%s”: %s"), base, error->message);
  /* The file was written (or not) whatever the panel shows now; say so only if it still shows it. */
  if (generation == self->generation || gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY))
    report_export (self, message, !ok);
}

static char *
local_path (GFile *file, GError **error)
{
  char *path = g_file_get_path (file);
  if (!path)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("Cannot write to “%s”: not a local file"), uri);
    }
  return path;
}

gboolean
owb_inspector_export_tensor (OwbInspector *self, GFile *file, GError **error)
{
  g_return_val_if_fail (OWB_IS_INSPECTOR (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  if (!self->tensor)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, _("No initializer is shown"));
      return FALSE;
    }
  g_autofree char *path = local_path (file, error);
  if (!path)
    return FALSE;
  return owb_tensor_save_npy_file (self->tensor, path, error);
}

static void
chooser_response (GtkNativeDialog *dialog, int response, OwbInspector *self)
{
  g_autoptr (GFile) file = NULL;
  if (response == GTK_RESPONSE_ACCEPT)
    file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
  gtk_native_dialog_destroy (dialog);
  g_clear_object (&self->chooser);
  if (!file || !self->tensor)
    return;

  g_autoptr (GError) error = NULL;
  g_autofree char *path = local_path (file, &error);
  if (!path)
    {
      report_export (self, error->message, TRUE);
      return;
    }
  /* Writing hundreds of megabytes takes a while: do it off the main thread. */
  if (self->export_button)
    gtk_widget_set_sensitive (self->export_button, FALSE);
  owb_document_save_tensor_async (get_document (self), self, self->tensor, self->tensor_name, path, TRUE, NULL,
                                  export_done, GUINT_TO_POINTER (self->generation));
}

static void
export_clicked (GtkButton *button, OwbInspector *self)
{
  if (!self->tensor || self->chooser)
    return;
  self->chooser = owb_page_new_file_chooser (GTK_WIDGET (self), _("Export Tensor"), GTK_FILE_CHOOSER_ACTION_SAVE,
                                             _("_Export"));
  g_autofree char *name = owb_page_dup_value_file_name (self->tensor_name, "tensor", ".npy");
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->chooser), name);
  owb_page_add_file_filter (self->chooser, _("NumPy arrays"), "*.npy", NULL);
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
add_consumers (OwbInspector *self, const OwbGraph *graph, const char *name)
{
  AdwPreferencesGroup *group = add_group (self, _("Consumers"));
  guint n = 0;
  for (guint i = 0; graph && i < graph->nodes->len; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      for (int j = 0; j < node->n_inputs; j++)
        if (strcmp (node->inputs[j], name) == 0)
          {
            add_node_row (self, group, node);
            n++;
            break;
          }
    }
  if (graph && list_has_name (graph->outputs, name))
    {
      add_text_row (group, _("Graph output"), NULL);
      n++;
    }
  if (n == 0)
    adw_preferences_group_set_description (group, _("Nothing in this graph uses it"));
}

static void
show_initializer (OwbInspector *self, const OwbGraph *graph, const char *name, OwbTensor *t,
                  const OwbGraph *owner)
{
  begin (self, name, owner == graph ? _("Initializer") : _("Initializer of an outer graph"));
  self->tensor = owb_tensor_ref (t);
  self->tensor_name = g_strdup (name);

  AdwPreferencesGroup *group = add_group (self, _("Tensor"));
  add_property (group, _("Name"), name);
  add_property (group, _("Type"), owb_data_type_name (t->dtype));
  add_property_take (group, _("Shape"), t->kind == OWB_VALUE_TENSOR ? format_dims (t->rank, t->dims) : format_tensor_type (t));
  add_property_take (group, _("Elements"), format_count ((guint64) t->nelems));
  add_property_take (group, _("Size"), g_format_size (t->nbytes));
  if (t->kind == OWB_VALUE_TENSOR && t->nelems > 0 && t->nelems <= TINY_TENSOR && t->data
      && is_plain_numeric (t->dtype))
    add_property_take (group, _("Values"), format_tensor_values (t));

  self->export_button = gtk_button_new_with_mnemonic (_("E_xport as NPY…"));
  gtk_widget_set_halign (self->export_button, GTK_ALIGN_START);
  gtk_widget_set_margin_top (self->export_button, 12);
  gtk_widget_set_tooltip_text (self->export_button, _("Save this tensor as a NumPy .npy file"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->export_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Export as NPY"), -1);
  g_signal_connect (self->export_button, "clicked", G_CALLBACK (export_clicked), self);
  adw_preferences_group_add (group, self->export_button);
  GtkWidget *status = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (status), TRUE);
  gtk_label_set_xalign (GTK_LABEL (status), 0);
  gtk_label_set_selectable (GTK_LABEL (status), TRUE);
  gtk_widget_set_margin_top (status, 6);
  gtk_widget_set_visible (status, FALSE);
  self->export_status = GTK_LABEL (status);
  adw_preferences_group_add (group, status);

  self->stats_group = add_group (self, _("Statistics"));
  start_stats (self);

  add_consumers (self, graph, name);
}

static void
show_value (OwbInspector *self, const OwbGraph *graph, const char *name)
{
  begin (self, name, _("Value"));

  AdwPreferencesGroup *group = add_group (self, _("Value"));
  add_property (group, _("Name"), name);
  const OwbValueInfo *info = find_value_info (graph, name);
  add_property_take (group, _("Type"), info ? owb_value_type_to_string (&info->type) : g_strdup (_("unknown")));

  group = add_group (self, _("Producer"));
  const OwbNode *producer = NULL;
  for (guint i = 0; graph && i < graph->nodes->len && !producer; i++)
    {
      const OwbNode *node = graph->nodes->pdata[i];
      for (int j = 0; j < node->n_outputs; j++)
        if (strcmp (node->outputs[j], name) == 0)
          {
            producer = node;
            break;
          }
    }
  if (producer)
    add_node_row (self, group, producer);
  else if (graph && list_has_name (graph->inputs, name))
    add_text_row (group, _("Graph input"), NULL);
  else if (graph && graph->parent)
    add_text_row (group, _("Outer graph"), _("Produced outside this subgraph"));
  else
    adw_preferences_group_set_description (group, _("No node produces it"));

  add_consumers (self, graph, name);
}

void
owb_inspector_show_tensor (OwbInspector *self, const OwbGraph *graph, const char *name)
{
  g_return_if_fail (OWB_IS_INSPECTOR (self));
  g_return_if_fail (name != NULL);
  const OwbGraph *owner = NULL;
  OwbTensor *t = graph ? find_initializer (graph, name, &owner) : NULL;
  if (t)
    show_initializer (self, graph, name, t, owner);
  else
    show_value (self, graph, name);
}

/* ---- a value of the last run ---- */

/* Up to this many elements a run value's statistics are computed here, on the main thread
 * (about 20 ms); larger ones show their values only. */
#define RUN_VALUE_STATS_LIMIT (8 * 1024 * 1024)

void
owb_inspector_show_run_value (OwbInspector *self, const char *name, OwbTensor *value)
{
  g_return_if_fail (OWB_IS_INSPECTOR (self));
  g_return_if_fail (name != NULL && value != NULL);
  AdwPreferencesGroup *group = add_group (self, _("Last Run"));
  adw_preferences_group_set_description (group, _("The value this tensor had in the last run of the Run page"));
  add_property_take (group, _("Value"), format_tensor_type (value));
  if (value->kind != OWB_VALUE_TENSOR)
    return;
  OwbTensorStats s;
  if (value->nelems <= RUN_VALUE_STATS_LIMIT && owb_tensor_stats_compute (value, &s, 0, NULL, NULL))
    {
      add_property_take (group, _("Min"), format_double (s.min));
      add_property_take (group, _("Max"), format_double (s.max));
      add_property_take (group, _("Mean"), format_double (s.mean));
      add_property_take (group, _("Std"), format_double (s.std));
      add_property_take (group, _("NaN / Inf"), g_strdup_printf ("%" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT,
                                                                 s.n_nan, s.n_inf));
    }
  GtkWidget *values = owb_values_view_new (value, name, 1);
  gtk_widget_set_margin_top (values, 12);
  adw_preferences_group_add (group, values);
}

/* ---- model ---- */

void
owb_inspector_show_model (OwbInspector *self, OwbModel *model, const OwbGraph *graph)
{
  owb_inspector_show_subgraph (self, model, graph, NULL);
}

void
owb_inspector_show_subgraph (OwbInspector *self, OwbModel *model, const OwbGraph *graph, const char *path)
{
  g_return_if_fail (OWB_IS_INSPECTOR (self));
  g_return_if_fail (model != NULL);
  if (!graph)
    graph = model->graph;

  const char *title = path ? path : graph && graph->name && graph->name[0] ? graph->name : _("Model");
  begin (self, title, path ? _("Subgraph") : _("Model"));

  AdwPreferencesGroup *group = add_group (self, _("Model"));
  add_property_take (group, _("IR version"), g_strdup_printf ("%" G_GINT64_FORMAT, model->ir_version));
  const char *producer = model->producer_name && model->producer_name[0] ? model->producer_name : NULL;
  if (producer)
    add_property_take (group, _("Producer"),
                       model->producer_version && model->producer_version[0]
                         ? g_strdup_printf ("%s %s", producer, model->producer_version)
                         : g_strdup (producer));
  else
    add_property (group, _("Producer"), _("unknown"));
  if (model->domain && model->domain[0])
    add_property (group, _("Domain"), model->domain);
  add_property_take (group, _("Model version"), g_strdup_printf ("%" G_GINT64_FORMAT, model->model_version));
  if (model->doc_string && model->doc_string[0])
    add_text_row (group, _("Documentation"), model->doc_string);

  group = add_group (self, _("Opsets"));
  for (guint i = 0; model->opset_imports && i < model->opset_imports->len; i++)
    {
      const OwbOpsetImport *imp = &g_array_index (model->opset_imports, OwbOpsetImport, i);
      add_property_take (group, domain_name (imp->domain), g_strdup_printf ("%" G_GINT64_FORMAT, imp->version));
    }

  if (model->metadata && model->metadata->len)
    {
      group = add_group (self, _("Metadata"));
      for (guint i = 0; i < model->metadata->len; i++)
        {
          const OwbStringPair *pair = &g_array_index (model->metadata, OwbStringPair, i);
          add_property (group, pair->key ? pair->key : "", pair->value ? pair->value : "");
        }
    }

  if (!graph)
    return;

  group = add_group (self, _("Inputs"));
  guint n_inputs = 0;
  for (guint i = 0; i < graph->inputs->len; i++)
    {
      const OwbValueInfo *info = graph->inputs->pdata[i];
      /* IR < 4 lists initializers as inputs too; they are weights, not what the caller feeds. */
      if (owb_graph_get_initializer (graph, info->name))
        continue;
      add_value_row (self, group, graph, info->name);
      n_inputs++;
    }
  /* A body's inputs are also the values it reads from the graphs around it (ONNX's implicit
   * inputs): an If branch has no inputs of its own. */
  g_autoptr (GPtrArray) outer = graph->parent ? owb_scene_dup_outer_values (graph) : NULL;
  if (n_inputs == 0)
    adw_preferences_group_set_description (group, outer && outer->len > 0 ? _("None of its own") : _("None"));
  if (outer && outer->len > 0)
    {
      group = add_group (self, _("From the Outer Graph"));
      for (guint i = 0; i < outer->len; i++)
        add_value_row (self, group, graph, outer->pdata[i]);
    }
  group = add_group (self, _("Outputs"));
  for (guint i = 0; i < graph->outputs->len; i++)
    add_value_row (self, group, graph, ((OwbValueInfo *) graph->outputs->pdata[i])->name);

  group = add_group (self, _("Operators"));
  guint n_nodes = graph->nodes->len;
  add_property_take (group, _("Nodes"), format_count (n_nodes));
  if (model->graph && graph != model->graph)
    {
      add_property_take (group, _("Optimized"), g_strdup_printf (ngettext ("%u node", "%u nodes", n_nodes), n_nodes));
      guint orig = model->graph->nodes->len;
      add_property_take (group, _("Original"), g_strdup_printf (ngettext ("%u node", "%u nodes", orig), orig));
    }
  guint nested;
  g_autoptr (GArray) ops = owb_graph_count_ops (graph, &nested);
  if (nested)
    add_property_take (group, _("Nodes in subgraphs"), format_count (nested));

  guint top = ops->len ? g_array_index (ops, OwbOpCount, 0).count : 0;
  for (guint i = 0; i < ops->len; i++)
    {
      const OwbOpCount *c = &g_array_index (ops, OwbOpCount, i);
      g_autofree char *count = format_count (c->count);
      AdwActionRow *row = add_property (group, c->op, count);
      /* A bar beside each count makes the op histogram readable at a glance. */
      GtkWidget *bar = gtk_level_bar_new_for_interval (0, top);
      gtk_level_bar_set_value (GTK_LEVEL_BAR (bar), c->count);
      /* Plain bars in the accent colour, not the low/high/full warning colours of a gauge. */
      gtk_level_bar_remove_offset_value (GTK_LEVEL_BAR (bar), GTK_LEVEL_BAR_OFFSET_LOW);
      gtk_level_bar_remove_offset_value (GTK_LEVEL_BAR (bar), GTK_LEVEL_BAR_OFFSET_HIGH);
      gtk_level_bar_remove_offset_value (GTK_LEVEL_BAR (bar), GTK_LEVEL_BAR_OFFSET_FULL);
      gtk_widget_set_size_request (bar, 64, -1);
      gtk_widget_set_valign (bar, GTK_ALIGN_CENTER);
      gtk_accessible_update_property (GTK_ACCESSIBLE (bar), GTK_ACCESSIBLE_PROPERTY_LABEL, c->op, -1);
      adw_action_row_add_suffix (row, bar);
    }

  group = add_group (self, _("Parameters"));
  guint64 n_params = 0, n_bytes = 0;
  for (guint i = 0; i < graph->initializers->len; i++)
    {
      const OwbTensor *t = graph->initializers->pdata[i];
      n_params += (guint64) t->nelems;
      n_bytes += t->nbytes;
    }
  g_autofree char *params = format_count (n_params);
  if (n_params >= 1000000)
    /* TRANSLATORS: a parameter count and the same in millions, e.g. "11689512 (11.7 million)" */
    add_property_take (group, _("Parameters"), g_strdup_printf (_("%s (%.1f million)"), params, n_params / 1e6));
  else
    add_property (group, _("Parameters"), params);
  add_property_take (group, _("Size"), g_format_size (n_bytes));
  add_property_take (group, _("Initializers"), format_count (graph->initializers->len));
}

void
owb_inspector_clear (OwbInspector *self)
{
  g_return_if_fail (OWB_IS_INSPECTOR (self));
  reset (self);
  gtk_label_set_text (self->title_label, "");
  gtk_label_set_text (self->subtitle_label, "");
  gtk_stack_set_visible_child_name (self->stack, "empty");
}

void
owb_inspector_set_document (OwbInspector *self, OwbDocument *document)
{
  g_return_if_fail (OWB_IS_INSPECTOR (self));
  g_return_if_fail (document == NULL || OWB_IS_DOCUMENT (document));
  g_set_object (&self->document, document);
}

gboolean
owb_inspector_get_busy (OwbInspector *self)
{
  g_return_val_if_fail (OWB_IS_INSPECTOR (self), FALSE);
  return self->stats_pending_row != NULL;
}

/* ---- GObject ---- */

static void
owb_inspector_dispose (GObject *object)
{
  OwbInspector *self = OWB_INSPECTOR (object);
  g_cancellable_cancel (self->cancellable);
  reset (self);
  gtk_widget_dispose_template (GTK_WIDGET (self), OWB_TYPE_INSPECTOR);
  G_OBJECT_CLASS (owb_inspector_parent_class)->dispose (object);
}

static void
owb_inspector_finalize (GObject *object)
{
  OwbInspector *self = OWB_INSPECTOR (object);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->document);
  G_OBJECT_CLASS (owb_inspector_parent_class)->finalize (object);
}

static void
owb_inspector_class_init (OwbInspectorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = owb_inspector_dispose;
  object_class->finalize = owb_inspector_finalize;

  signals[SIGNAL_TENSOR_ACTIVATED] =
    g_signal_new ("tensor-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_NODE_ACTIVATED] =
    g_signal_new ("node-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_SUBGRAPH_ACTIVATED] =
    g_signal_new ("subgraph-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_POINTER, G_TYPE_STRING);

  /* Referencing the resource links its object file out of the static library, and its
   * constructor registers the templates, in the app and in tests alike. */
  (void) owb_ui_get_resource ();
  g_type_ensure (ADW_TYPE_STATUS_PAGE);
  gtk_widget_class_set_template_from_resource (widget_class, "/org/onnxworkbench/Workbench/owb-inspector.ui");
  gtk_widget_class_bind_template_child (widget_class, OwbInspector, stack);
  gtk_widget_class_bind_template_child (widget_class, OwbInspector, empty_page);
  gtk_widget_class_bind_template_child (widget_class, OwbInspector, scroller);
  gtk_widget_class_bind_template_child (widget_class, OwbInspector, title_label);
  gtk_widget_class_bind_template_child (widget_class, OwbInspector, subtitle_label);
  gtk_widget_class_bind_template_child (widget_class, OwbInspector, sections);
  gtk_widget_class_set_css_name (widget_class, "inspector");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
owb_inspector_init (OwbInspector *self)
{
  self->cancellable = g_cancellable_new ();
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_stack_set_visible_child_name (self->stack, "empty");
}

GtkWidget *
owb_inspector_new (void)
{
  return g_object_new (OWB_TYPE_INSPECTOR, NULL);
}
