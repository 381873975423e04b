/* owb-quantize-page.c: the Quantize page. One job at a time runs in a worker thread over
 * libowb-quant, as `owb quantize` chains it: prepare → plan → calibrate → quantize_static, then the
 * float and quantized models compared on the calibration samples, their sizes and latencies. The
 * page keeps the prepared model and the calibration, so Keep in Float and Recover Accuracy
 * re-quantize without calibrating again. The calibration folder is samples (the ONNX test-data
 * layout) or images (normalized as chosen), with a labels.txt giving the task accuracy; the
 * settings of a successful run are saved for the model file (owb-quantize-settings.c). */
#include "owb-quantize-page.h"

#include <adwaita.h>
#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "owb-page-util.h"
#include "owb-page.h"
#include "owb-quantize-detail.h"
#include "owb-qdq-display.h"

#define WORST_TENSORS 20
#define LATENCY_RUNS 5
/* The colour scale of the sensitivity map, in dB of SQNR. */
#define SCALE_LOW_DB 10.0
#define SCALE_HIGH_DB 40.0

typedef enum {
  JOB_QUANTIZE,
  JOB_RECOVER,
} JobKind;

struct _OwbQuantizePage
{
  OwbPage parent_instance;

  GtkWidget *paned;
  AdwActionRow *data_row;
  GtkButton *choose_button;
  GtkButton *random_button;
  GtkSpinButton *samples_spin;
  GtkDropDown *method_drop;
  GtkSwitch *per_channel_switch;
  GtkDropDown *activation_drop;
  GtkDropDown *weight_drop;
  GtkEntry *exclude_ops_entry;
  GtkWidget *normalization_row, *custom_row, *bgr_row;
  GtkDropDown *normalization_drop;
  GtkEntry *mean_entry, *std_entry;
  GtkSwitch *bgr_switch;
  GtkButton *quantize_button;
  GtkButton *cancel_button;
  GtkButton *save_button;
  GtkProgressBar *progress;
  GtkLabel *error_label;
  GtkLabel *summary_label;
  GtkWidget *results_box;
  GtkListBox *comparison_list;
  GtkListBox *worst_list;
  GtkButton *keep_button;        /* the detail's */
  OwbQuantizeDetail *detail;
  GtkListBox *excluded_list;
  GtkSpinButton *target_spin;
  GtkDropDown *target_kind_drop;   /* SQNR at least / accuracy drop at most (with labels only) */
  GtkWidget *target_kind_row;
  GtkLabel *target_unit_label;
  gboolean has_labels;             /* a labels.txt in the calibration folder */
  double target_values[2];         /* the spin's value for each kind, kept across switches */
  GtkButton *recover_button;
  GtkLabel *fallback_label;
  GtkWidget *legend;
  OwbGraphView *graph_view;
  GtkToggleButton *quantized_graph_button; /* the map shows the quantized graph instead */
  GtkToggleButton *graph_page_button;      /* the sensitivity also on the Graph page */
  GtkCheckButton *collapse_button;         /* the quantized graph with its QDQ pairs as badges */
  GtkStack *graph_stack;

  OwbModel *source;              /* the document's model the results are of */
  char *data_dir;                /* NULL: random samples */
  gboolean data_images;          /* data_dir is an image folder */
  char **kept_ops;               /* the op types the result keeps in float */
  guint n_images;
  char *accuracy_text, *labels_message;
  guint max_samples;
  OwbModel *prepared;            /* the quantizer's float model (BatchNorm folded, opset 13) */
  OwbQuantCalibration *calibration;
  guint n_calibrations;
  GPtrArray *excluded;           /* of char *, NULL-terminated view kept by excluded_strv () */
  OwbModel *quantized;
  OwbQdqDisplay *qdq_display;    /* the quantized graph as shown collapsed, made on first use */
  OwbQuantComparison *comparison;
  GHashTable *node_sqnr;         /* node name -> double * (the worst of its outputs) */
  char *selected_node;
  GtkFileChooserNative *chooser;
  double last_seconds;
  guint n_comparison_rows, n_worst_rows;
  gboolean selecting;            /* a row selected from code: not the user's choice to echo */
};

G_DEFINE_FINAL_TYPE (OwbQuantizePage, owb_quantize_page, OWB_TYPE_PAGE)


static void start_job (OwbQuantizePage *self, JobKind kind, double target_sqnr_db, double max_accuracy_drop);
static void drop_calibration (OwbQuantizePage *self);
static void show_data_choice (OwbQuantizePage *self);

static gboolean
is_busy (OwbQuantizePage *self)
{
  return owb_page_get_busy (OWB_PAGE (self));
}

/* ---- Calibration folders ---- */

static gboolean
holds_sample (const char *dir)
{
  g_autofree char *pb = g_build_filename (dir, "input_0.pb", NULL);
  g_autofree char *npy = g_build_filename (dir, "input_0.npy", NULL);
  return g_file_test (pb, G_FILE_TEST_IS_REGULAR) || g_file_test (npy, G_FILE_TEST_IS_REGULAR);
}

/* An image folder: image files and no sample (the folder itself, or a subfolder, of input_0.pb or
 * .npy files), which the sample layout would take first. */
static gboolean
folder_holds_images (const char *dir, guint *n_images)
{
  *n_images = 0;
  if (!dir || holds_sample (dir))
    return FALSE;
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  if (!d)
    return FALSE;
  guint n = 0;
  const char *entry;
  while ((entry = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (dir, entry, NULL);
      if (owb_quant_is_image_file_name (entry))
        n += g_file_test (path, G_FILE_TEST_IS_REGULAR);
      else if (g_file_test (path, G_FILE_TEST_IS_DIR) && holds_sample (path))
        return FALSE;
    }
  *n_images = n;
  return n > 0;
}

/* "0.5" or "0.485, 0.456, 0.406" (the C locale's decimal point, as the presets are written). */
static gboolean
parse_channels (const char *text, float out[3], gboolean positive)
{
  g_auto (GStrv) words = g_strsplit_set (text ? text : "", ", \t;/", -1);
  double v[3];
  guint n = 0;
  for (char **w = words; *w; w++)
    {
      if (!**w)
        continue;
      char *end;
      double x = g_ascii_strtod (*w, &end);
      if (*end || n == 3 || !isfinite (x) || (positive && x <= 0))
        return FALSE;
      v[n++] = x;
    }
  if (n != 1 && n != 3)
    return FALSE;
  for (int c = 0; c < 3; c++)
    out[c] = (float) v[n == 1 ? 0 : c];
  return TRUE;
}

static char *
format_channels (const float v[3])
{
  if (v[0] == v[1] && v[1] == v[2])
    return g_strdup_printf ("%g", v[0]);
  return g_strdup_printf ("%g, %g, %g", v[0], v[1], v[2]);
}

/* Op types from "Softmax, Add" (commas or spaces between). */
static char **
parse_op_types (const char *text)
{
  g_auto (GStrv) words = g_strsplit_set (text ? text : "", ", \t;", -1);
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (char **w = words; *w; w++)
    if (**w && g_hash_table_add (seen, *w))
      g_strv_builder_add (builder, *w);
  return g_strv_builder_end (builder);
}

static gboolean
is_excluded (OwbQuantizePage *self, const char *node)
{
  for (guint i = 0; i + 1 < self->excluded->len; i++)
    if (g_strcmp0 (g_ptr_array_index (self->excluded, i), node) == 0)
      return TRUE;
  return FALSE;
}

static void
update_sensitivity (OwbQuantizePage *self)
{
  gboolean busy = is_busy (self);
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  gboolean has_model = document && owb_document_get_model (document);
  gtk_widget_set_sensitive (GTK_WIDGET (self->quantize_button), has_model && !busy);
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), busy);
  gtk_widget_set_visible (GTK_WIDGET (self->progress), busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->save_button), !busy && self->quantized);
  gtk_widget_set_sensitive (GTK_WIDGET (self->keep_button), !busy && self->calibration && self->selected_node
                                                             && self->selected_node[0]
                                                             && !is_excluded (self, self->selected_node));
  gtk_widget_set_sensitive (GTK_WIDGET (self->recover_button), !busy && has_model);
  gtk_widget_set_sensitive (GTK_WIDGET (self->excluded_list), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->choose_button), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->random_button), !busy && self->data_dir);
}

static void
update (OwbPage *page)
{
  update_sensitivity (OWB_QUANTIZE_PAGE (page));
}

/* ---- Lists ---- */

/* A row of cells: the first takes the room left and ellipsizes, the others keep their width.
 * Read out as one line. */
static GtkWidget *
cells_row (const char *const *cells, const int *width_chars, guint n, gboolean header)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 10);
  g_autoptr (GString) a11y = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    {
      GtkWidget *label = gtk_label_new (cells[i]);
      gtk_label_set_xalign (GTK_LABEL (label), i == 0 ? 0 : 1);
      if (i == 0)
        {
          gtk_widget_set_hexpand (label, TRUE);
          gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
          gtk_label_set_width_chars (GTK_LABEL (label), MIN ((int) g_utf8_strlen (cells[i], -1), width_chars[i]));
          gtk_widget_set_tooltip_text (label, cells[i]);
        }
      else
        {
          gtk_label_set_width_chars (GTK_LABEL (label), width_chars[i]);
          gtk_widget_add_css_class (label, "numeric");
        }
      if (header)
        gtk_widget_add_css_class (label, "dim-label");
      gtk_box_append (GTK_BOX (box), label);
      g_string_append_printf (a11y, i ? ", %s" : "%s", cells[i]);
    }
  gtk_widget_set_margin_start (box, 8);
  gtk_widget_set_margin_end (box, 8);
  gtk_widget_set_margin_top (box, 4);
  gtk_widget_set_margin_bottom (box, 4);
  GtkWidget *row = gtk_list_box_row_new ();
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, a11y->str, -1);
  if (header)
    {
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
      gtk_list_box_row_set_selectable (GTK_LIST_BOX_ROW (row), FALSE);
    }
  return row;
}

static char *
format_db (double db)
{
  if (isinf (db) && db > 0)
    return g_strdup (_("exact"));
  if (isnan (db))
    return g_strdup ("–");
  return g_strdup_printf (_("%.1f dB"), db);
}

static char *
format_bytes (guint64 bytes)
{
  return g_format_size_full (bytes, G_FORMAT_SIZE_DEFAULT);
}

/* ---- The sensitivity map ---- */

typedef struct {
  GHashTable *sqnr;     /* node name -> double *; borrowed from the page's table, which it refs */
  GHashTable *kept;     /* node names kept in float */
} SensitivityMap;

static void
sensitivity_map_free (SensitivityMap *map)
{
  g_hash_table_unref (map->sqnr);
  g_hash_table_unref (map->kept);
  g_free (map);
}

/* Red (at SCALE_LOW_DB and below) through yellow to green (at SCALE_HIGH_DB and above). */
static GdkRGBA
sqnr_color (double db)
{
  double t = isinf (db) ? 1 : CLAMP ((db - SCALE_LOW_DB) / (SCALE_HIGH_DB - SCALE_LOW_DB), 0, 1);
  static const double stops[3][3] = { { 0.86, 0.20, 0.16 }, { 0.93, 0.72, 0.10 }, { 0.20, 0.66, 0.32 } };
  int k = t < 0.5 ? 0 : 1;
  double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  GdkRGBA c = { (float) (stops[k][0] + (stops[k + 1][0] - stops[k][0]) * u),
                (float) (stops[k][1] + (stops[k + 1][1] - stops[k][1]) * u),
                (float) (stops[k][2] + (stops[k + 1][2] - stops[k][2]) * u), 1 };
  return c;
}

static const GdkRGBA kept_float_color = { 0.36f, 0.55f, 0.95f, 1 };

static gboolean
sensitivity_color (const OwbNode *node, GdkRGBA *color, gpointer user_data)
{
  SensitivityMap *map = user_data;
  if (!node->name)
    return FALSE;
  if (g_hash_table_contains (map->kept, node->name))
    {
      *color = kept_float_color;
      return TRUE;
    }
  const double *db = g_hash_table_lookup (map->sqnr, node->name);
  if (!db)
    return FALSE;
  *color = sqnr_color (*db);
  return TRUE;
}

static char *
sensitivity_badge (const OwbNode *node, gpointer user_data)
{
  SensitivityMap *map = user_data;
  if (!node->name)
    return NULL;
  if (g_hash_table_contains (map->kept, node->name))
    return g_strdup (_("float"));
  const double *db = g_hash_table_lookup (map->sqnr, node->name);
  return db ? format_db (*db) : NULL;
}

/* The quantized graph's own layer: QuantizeLinear and DequantizeLinear pale grey with their
 * integer type, the nodes that read dequantized values (the ones that run on integers once fused)
 * badged with what they read. */
static gboolean
qdq_color (const OwbNode *node, GdkRGBA *color, gpointer user_data)
{
  if (strcmp (node->op_type, "QuantizeLinear") == 0 || strcmp (node->op_type, "DequantizeLinear") == 0
      || strcmp (node->op_type, "DynamicQuantizeLinear") == 0)
    {
      *color = (GdkRGBA){ 0.88f, 0.88f, 0.90f, 1.0f };
      return TRUE;
    }
  return FALSE;
}

static char *
qdq_badge (const OwbNode *node, gpointer user_data)
{
  const OwbModel *model = user_data;
  const OwbGraph *g = model->graph;
  if (strcmp (node->op_type, "QuantizeLinear") == 0 || strcmp (node->op_type, "DequantizeLinear") == 0)
    {
      const char *zp = owb_node_get_input (node, 2);
      const char *q = owb_node_get_input (node, 0);
      const OwbTensor *z = zp ? owb_graph_get_initializer (g, zp) : NULL;
      const OwbTensor *c = q && strcmp (node->op_type, "DequantizeLinear") == 0 ? owb_graph_get_initializer (g, q) : NULL;
      OwbDataType t = z ? z->dtype : c ? c->dtype : OWB_TYPE_UNDEFINED;
      return t != OWB_TYPE_UNDEFINED ? g_strdup (owb_data_type_name (t)) : NULL;
    }
  return NULL;
}

/* The collapsed quantized graph's layer: the nodes a pair wrapped (badged with what they read and
 * write quantized, "u8, s8 ← / → u8") in the colour of the nodes that run on integers once fused. */
static gboolean
collapsed_color (const OwbNode *node, GdkRGBA *color, gpointer user_data)
{
  if (!owb_qdq_display_get_badge (user_data, node))
    return FALSE;
  *color = (GdkRGBA){ 0.80f, 0.86f, 0.96f, 1.0f };
  return TRUE;
}

static void
show_collapsed_graph (OwbQuantizePage *self)
{
  if (!self->qdq_display)
    self->qdq_display = owb_qdq_display_new (self->quantized);
  const OwbGraph *graph = owb_qdq_display_get_model (self->qdq_display)->graph;
  if (owb_graph_view_get_graph (self->graph_view) != graph)
    owb_graph_view_set_graph (self->graph_view, graph, owb_qdq_display_ref (self->qdq_display),
                              (GDestroyNotify) owb_qdq_display_unref);
  /* the badge is a line of each box (the scene makes room for it), not the layer's */
  g_autoptr (OwbGraphLayer) layer = owb_graph_layer_new (_("Quantized Graph"), collapsed_color, NULL,
                                                         owb_qdq_display_ref (self->qdq_display),
                                                         (GDestroyNotify) owb_qdq_display_unref);
  owb_graph_view_set_layer (self->graph_view, layer);
  gtk_widget_set_visible (self->legend, FALSE);
}

static void
show_quantized_graph (OwbQuantizePage *self)
{
  if (gtk_check_button_get_active (self->collapse_button))
    {
      show_collapsed_graph (self);
      return;
    }
  if (owb_graph_view_get_graph (self->graph_view) != self->quantized->graph)
    owb_graph_view_set_graph (self->graph_view, self->quantized->graph, owb_model_ref (self->quantized),
                              (GDestroyNotify) owb_model_unref);
  g_autoptr (OwbGraphLayer) layer = owb_graph_layer_new (_("Quantized Graph"), qdq_color, qdq_badge,
                                                         owb_model_ref (self->quantized),
                                                         (GDestroyNotify) owb_model_unref);
  owb_graph_view_set_layer (self->graph_view, layer);
  gtk_widget_set_visible (self->legend, FALSE);
}

static void
update_map (OwbQuantizePage *self)
{
  gtk_widget_set_sensitive (GTK_WIDGET (self->quantized_graph_button), self->quantized != NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->collapse_button), gtk_toggle_button_get_active (self->quantized_graph_button));
  gtk_widget_set_sensitive (GTK_WIDGET (self->collapse_button), self->quantized != NULL);
  if (self->quantized && gtk_toggle_button_get_active (self->quantized_graph_button))
    {
      show_quantized_graph (self);
      return;
    }
  /* back to the float graph the map colours */
  if (self->prepared && owb_graph_view_get_graph (self->graph_view) != self->prepared->graph)
    owb_graph_view_set_graph (self->graph_view, self->prepared->graph, owb_model_ref (self->prepared),
                              (GDestroyNotify) owb_model_unref);
  if (!self->node_sqnr)
    {
      owb_graph_view_set_layer (self->graph_view, NULL);
      gtk_widget_set_visible (self->legend, FALSE);
      return;
    }
  SensitivityMap *map = g_new0 (SensitivityMap, 1);
  map->sqnr = g_hash_table_ref (self->node_sqnr);
  map->kept = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i + 1 < self->excluded->len; i++)
    g_hash_table_add (map->kept, g_strdup (g_ptr_array_index (self->excluded, i)));
  /* and those the result kept in float by their op type */
  for (guint i = 0; self->prepared && self->kept_ops && i < self->prepared->graph->nodes->len; i++)
    {
      const OwbNode *node = g_ptr_array_index (self->prepared->graph->nodes, i);
      if (node->name && g_strv_contains ((const char *const *) self->kept_ops, node->op_type))
        g_hash_table_add (map->kept, g_strdup (node->name));
    }
  g_autoptr (OwbGraphLayer) layer = owb_graph_layer_new (_("Sensitivity"), sensitivity_color, sensitivity_badge, map,
                                                         (GDestroyNotify) sensitivity_map_free);
  owb_graph_view_set_layer (self->graph_view, layer);
  gtk_widget_set_visible (self->legend, TRUE);
  /* The same layer on the Graph page: its nodes are the file's, named as the float graph here
   * (pre-processing keeps names; a BatchNormalization folded into its Conv is left uncoloured). */
  if (gtk_toggle_button_get_active (self->graph_page_button))
    owb_page_show_layer (OWB_PAGE (self), layer);
}

static void
graph_page_toggled_cb (GtkToggleButton *button, OwbQuantizePage *self)
{
  if (gtk_toggle_button_get_active (button))
    update_map (self); /* emits the layer */
  else
    owb_page_show_layer (OWB_PAGE (self), NULL);
}

void
owb_quantize_page_set_show_on_graph_page (OwbQuantizePage *self, gboolean show)
{
  gtk_toggle_button_set_active (self->graph_page_button, show);
}

static void
legend_draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  cairo_pattern_t *pattern = cairo_pattern_create_linear (0, 0, width, 0);
  for (int i = 0; i <= 10; i++)
    {
      GdkRGBA c = sqnr_color (SCALE_LOW_DB + (SCALE_HIGH_DB - SCALE_LOW_DB) * i / 10.0);
      cairo_pattern_add_color_stop_rgb (pattern, i / 10.0, c.red, c.green, c.blue);
    }
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_set_source (cr, pattern);
  cairo_fill (cr);
  cairo_pattern_destroy (pattern);
}

static void
swatch_draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  gdk_cairo_set_source_rgba (cr, &kept_float_color);
  cairo_rectangle (cr, 0, 0, width, height);
  cairo_fill (cr);
}

static GtkWidget *
legend_new (void)
{
  /* The explanation above the scale, wrapped: the scale itself stays whole in a narrow pane. */
  GtkWidget *outer = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  gtk_widget_set_margin_start (outer, 8);
  gtk_widget_set_margin_end (outer, 8);
  gtk_widget_set_margin_bottom (outer, 6);
  GtkWidget *title = gtk_label_new (_("SQNR of each node’s output, quantized against float:"));
  gtk_label_set_wrap (GTK_LABEL (title), TRUE);
  gtk_label_set_justify (GTK_LABEL (title), GTK_JUSTIFY_CENTER);
  gtk_widget_add_css_class (title, "dim-label");
  gtk_box_append (GTK_BOX (outer), title);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_halign (box, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (outer), box);
  g_autofree char *low = g_strdup_printf (_("≤ %.0f dB"), SCALE_LOW_DB);
  g_autofree char *high = g_strdup_printf (_("≥ %.0f dB"), SCALE_HIGH_DB);
  gtk_box_append (GTK_BOX (box), gtk_label_new (low));
  GtkWidget *bar = gtk_drawing_area_new ();
  gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (bar), 140);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (bar), 12);
  gtk_widget_set_valign (bar, GTK_ALIGN_CENTER);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (bar), legend_draw, NULL, NULL);
  gtk_box_append (GTK_BOX (box), bar);
  gtk_box_append (GTK_BOX (box), gtk_label_new (high));
  GtkWidget *swatch = gtk_drawing_area_new ();
  gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (swatch), 12);
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (swatch), 12);
  gtk_widget_set_valign (swatch, GTK_ALIGN_CENTER);
  gtk_widget_set_margin_start (swatch, 12);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (swatch), swatch_draw, NULL, NULL);
  gtk_box_append (GTK_BOX (box), swatch);
  gtk_box_append (GTK_BOX (box), gtk_label_new (_("kept in float")));
  g_autofree char *a11y = g_strdup_printf (_("Sensitivity: nodes coloured by the SQNR of their output, red at %.0f dB "
                                             "or less, green at %.0f dB or more; blue: kept in float"),
                                           SCALE_LOW_DB, SCALE_HIGH_DB);
  gtk_accessible_update_property (GTK_ACCESSIBLE (outer), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Sensitivity"),
                                  GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, a11y, -1);
  gtk_widget_set_tooltip_text (outer, a11y);
  return outer;
}

/* ---- Showing results ---- */

static void
show_excluded (OwbQuantizePage *self);

static void
remove_excluded_clicked_cb (GtkButton *button, OwbQuantizePage *self)
{
  owb_quantize_page_remove_excluded (self, g_object_get_data (G_OBJECT (button), "owb-node-name"));
}

static void
show_excluded (OwbQuantizePage *self)
{
  owb_page_list_clear (self->excluded_list);
  if (self->excluded->len <= 1)
    {
      GtkWidget *none = gtk_label_new (_("None: every node that can be is quantized"));
      gtk_widget_add_css_class (none, "dim-label");
      gtk_label_set_wrap (GTK_LABEL (none), TRUE);
      gtk_widget_set_margin_top (none, 6);
      gtk_widget_set_margin_bottom (none, 6);
      gtk_list_box_append (self->excluded_list, none);
      return;
    }
  for (guint i = 0; i + 1 < self->excluded->len; i++)
    {
      const char *name = g_ptr_array_index (self->excluded, i);
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      GtkWidget *label = gtk_label_new (name);
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_MIDDLE);
      gtk_widget_set_hexpand (label, TRUE);
      gtk_box_append (GTK_BOX (box), label);
      GtkWidget *remove = gtk_button_new_from_icon_name ("list-remove-symbolic");
      gtk_widget_add_css_class (remove, "flat");
      g_autofree char *remove_name = g_strdup_printf (_("Quantize %s Again"), name);
      gtk_widget_set_tooltip_text (remove, remove_name);
      gtk_accessible_update_property (GTK_ACCESSIBLE (remove), GTK_ACCESSIBLE_PROPERTY_LABEL, remove_name, -1);
      g_object_set_data_full (G_OBJECT (remove), "owb-node-name", g_strdup (name), g_free);
      g_signal_connect (remove, "clicked", G_CALLBACK (remove_excluded_clicked_cb), self);
      gtk_box_append (GTK_BOX (box), remove);
      gtk_widget_set_margin_start (box, 8);
      gtk_widget_set_margin_end (box, 4);
      GtkWidget *row = gtk_list_box_row_new ();
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
      gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
      gtk_list_box_append (self->excluded_list, row);
    }
}

static const int comparison_widths[] = { 14, 9, 8, 9, 8 };
static const int worst_widths[] = { 16, 9, 8, 8 };

typedef struct {
  guint64 float_bytes, quantized_bytes;
  double float_ms, quantized_ms;  /* NAN when not measured */
  char *latency_error;
  gboolean random;
  guint n_samples;
  char *source;
  gboolean calibrated;            /* this job calibrated (else it reused the calibration) */
  double calibrate_s, total_s;
  const char *method;
  gboolean per_channel;
  OwbDataType activation_type, weight_type;
  gboolean images;                /* an image folder */
  char *normalization;            /* its normalization, said for the summary */
  gboolean bgr;
  char *exclude_ops;              /* "Softmax, Add", or NULL */
  char *labels_message;           /* why labels.txt was not used, or NULL */
  guint n_labels;
  char *settings_error;           /* the settings could not be saved */
} JobFacts;

/* A row of one wrapped line: a message in the table, read out as it is. */
static GtkWidget *
message_row (const char *text, const char *css_class)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_set_margin_start (label, 8);
  gtk_widget_set_margin_end (label, 8);
  gtk_widget_set_margin_top (label, 4);
  gtk_widget_set_margin_bottom (label, 4);
  if (css_class)
    gtk_widget_add_css_class (label, css_class);
  GtkWidget *row = gtk_list_box_row_new ();
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), label);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
  return row;
}

static void
show_comparison (OwbQuantizePage *self, const JobFacts *facts)
{
  owb_page_list_clear (self->comparison_list);
  owb_page_list_clear (self->worst_list);
  self->n_comparison_rows = self->n_worst_rows = 0;
  g_clear_pointer (&self->accuracy_text, g_free);
  g_clear_pointer (&self->labels_message, g_free);
  const OwbQuantComparison *c = self->comparison;
  gtk_widget_set_visible (self->results_box, c != NULL);
  if (!c)
    {
      gtk_label_set_text (self->summary_label, "");
      return;
    }
  const char *head[] = { _("Output"), _("SQNR"), _("Cosine"), _("Max Error"), _("Top-1") };
  gtk_list_box_append (self->comparison_list, cells_row (head, comparison_widths, 5, TRUE));
  for (guint i = 0; i < c->outputs->len; i++)
    {
      const OwbQuantOutputDiff *d = g_ptr_array_index (c->outputs, i);
      g_autofree char *sqnr = format_db (d->sqnr_db);
      g_autofree char *cosine = g_strdup_printf ("%.5f", d->cosine);
      g_autofree char *max_abs = g_strdup_printf ("%.3g", d->max_abs);
      g_autofree char *top1 = d->classifier ? g_strdup_printf (_("%.1f %%"), 100 * d->top1_agreement) : g_strdup ("–");
      const char *cells[] = { d->name, sqnr, cosine, max_abs, top1 };
      GtkWidget *row = cells_row (cells, comparison_widths, 5, FALSE);
      if (!isinf (d->sqnr_db) && d->sqnr_db < 20)
        gtk_widget_add_css_class (row, "error");
      gtk_list_box_append (self->comparison_list, row);
      self->n_comparison_rows++;
    }
  /* task accuracy against labels.txt: the library computes it for the first classifier output */
  g_autoptr (GString) accuracy = g_string_new (NULL);
  for (guint i = 0; i < c->outputs->len; i++)
    {
      const OwbQuantOutputDiff *d = g_ptr_array_index (c->outputs, i);
      if (!d->has_accuracy)
        continue;
      if (accuracy->len)
        g_string_append_c (accuracy, '\n');
      g_string_append_printf (accuracy, _("Accuracy: float %.1f %%, quantized %.1f %% (output %s, against labels.txt)"),
                              100 * d->accuracy_a, 100 * d->accuracy_b, d->name);
    }
  if (accuracy->len)
    {
      self->accuracy_text = g_strdup (accuracy->str);
      gtk_list_box_append (self->comparison_list, message_row (accuracy->str, NULL));
    }
  if (facts && facts->labels_message)
    {
      self->labels_message = g_strdup (facts->labels_message);
      gtk_list_box_append (self->comparison_list, message_row (facts->labels_message, "warning"));
    }
  if (facts)
    {
      g_autofree char *fb = format_bytes (facts->float_bytes), *qb = format_bytes (facts->quantized_bytes);
      g_autofree char *size = g_strdup_printf (_("%s → %s"), fb, qb);
      g_autofree char *ratio = facts->quantized_bytes
                                 ? g_strdup_printf (_("%.2f× smaller"), (double) facts->float_bytes / facts->quantized_bytes)
                                 : g_strdup ("");
      const char *size_cells[] = { _("Model size (weights)"), size, ratio };
      static const int two_widths[] = { 14, 20, 12 };
      gtk_list_box_append (self->comparison_list, cells_row (size_cells, two_widths, 3, FALSE));
      g_autofree char *latency = NULL, *speed = NULL;
      if (isnan (facts->float_ms) || isnan (facts->quantized_ms))
        {
          latency = g_strdup (facts->latency_error ? facts->latency_error : _("not measured"));
          speed = g_strdup ("");
        }
      else
        {
          latency = g_strdup_printf (_("%.3f → %.3f ms"), facts->float_ms, facts->quantized_ms);
          speed = facts->quantized_ms <= facts->float_ms
                    ? g_strdup_printf (_("%.2f× faster"), facts->float_ms / MAX (facts->quantized_ms, 1e-6))
                    : g_strdup_printf (_("%.2f× slower"), facts->quantized_ms / MAX (facts->float_ms, 1e-6));
        }
      const char *latency_cells[] = { _("Latency (median, this machine)"), latency, speed };
      gtk_list_box_append (self->comparison_list, cells_row (latency_cells, two_widths, 3, FALSE));

      g_autofree char *samples = NULL;
      if (facts->random)
        samples = g_strdup_printf (ngettext ("%u random sample (seeded: ranges say little about real data)",
                                             "%u random samples (seeded: ranges say little about real data)",
                                             facts->n_samples), facts->n_samples);
      else if (facts->images)
        {
          g_autofree char *images = g_strdup_printf (ngettext ("%u image from %s, %s normalization",
                                                               "%u images from %s, %s normalization", facts->n_samples),
                                                     facts->n_samples, facts->source, facts->normalization);
          samples = facts->bgr ? g_strdup_printf (_("%s, BGR channel order"), images) : g_steal_pointer (&images);
        }
      else
        samples = g_strdup_printf (ngettext ("%u sample from %s", "%u samples from %s", facts->n_samples),
                                   facts->n_samples, facts->source);
      g_autofree char *calibration = facts->calibrated
                                       ? g_strdup_printf (_("calibrated in %.2f s"), facts->calibrate_s)
                                       : g_strdup (_("calibration reused"));
      const char *act = facts->activation_type == OWB_TYPE_INT8 ? "s8" : "u8";
      const char *weight = facts->weight_type == OWB_TYPE_UINT8 ? "u8" : "s8";
      g_autoptr (GString) summary = g_string_new (NULL);
      g_string_printf (summary, _("%s, %s %s weights, %s activations, on %s; %s; %.2f s in all"), facts->method,
                       facts->per_channel ? _("per-channel") : _("per-tensor"), weight, act, samples, calibration,
                       facts->total_s);
      if (facts->exclude_ops)
        {
          g_string_append (summary, "; ");
          g_string_append_printf (summary, _("op types kept in float: %s"), facts->exclude_ops);
        }
      if (facts->n_labels)
        {
          g_string_append (summary, "; ");
          g_string_append_printf (summary, ngettext ("%u label from labels.txt", "%u labels from labels.txt",
                                                     facts->n_labels), facts->n_labels);
        }
      if (facts->settings_error)
        {
          g_string_append_c (summary, '\n');
          g_string_append_printf (summary, _("The settings were not saved: %s"), facts->settings_error);
        }
      gtk_label_set_text (self->summary_label, summary->str);
    }

  const char *whead[] = { _("Node"), _("Op"), _("SQNR"), _("Cosine") };
  gtk_list_box_append (self->worst_list, cells_row (whead, worst_widths, 4, TRUE));
  for (guint i = 0; i < c->tensors->len && self->n_worst_rows < WORST_TENSORS; i++)
    {
      const OwbQuantTensorDiff *d = g_ptr_array_index (c->tensors, i);
      /* a graph input has no node to keep in float; a tensor equal in both lost nothing */
      if (!d->node || !d->node[0] || (isinf (d->sqnr_db) && d->sqnr_db > 0))
        continue;
      g_autofree char *sqnr = format_db (d->sqnr_db);
      g_autofree char *cosine = g_strdup_printf ("%.5f", d->cosine);
      const char *cells[] = { d->node, d->op_type ? d->op_type : "", sqnr, cosine };
      GtkWidget *row = cells_row (cells, worst_widths, 4, FALSE);
      g_autofree char *tip = g_strdup_printf (_("Node %s, output %s"), d->node, d->name);
      gtk_widget_set_tooltip_text (row, tip);
      g_object_set_data_full (G_OBJECT (row), "owb-node-name", g_strdup (d->node), g_free);
      gtk_list_box_append (self->worst_list, row);
      self->n_worst_rows++;
    }
}

static void
build_node_sqnr (OwbQuantizePage *self)
{
  g_clear_pointer (&self->node_sqnr, g_hash_table_unref);
  if (!self->comparison)
    return;
  self->node_sqnr = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; i < self->comparison->tensors->len; i++)
    {
      const OwbQuantTensorDiff *d = g_ptr_array_index (self->comparison->tensors, i);
      if (!d->node || !d->node[0] || d->count == 0)
        continue;
      double *db = g_hash_table_lookup (self->node_sqnr, d->node);
      if (!db)
        {
          db = g_new (double, 1);
          *db = d->sqnr_db;
          g_hash_table_insert (self->node_sqnr, g_strdup (d->node), db);
        }
      else
        *db = MIN (*db, d->sqnr_db);
    }
}

/* The node detail of the selected node: is it kept in float by the result (by name or op type)? */
static void
update_detail (OwbQuantizePage *self)
{
  const OwbNode *node
    = self->selected_node ? owb_graph_find_node (self->prepared ? self->prepared->graph : NULL, self->selected_node) : NULL;
  gboolean kept = self->selected_node
                  && (is_excluded (self, self->selected_node)
                      || (node && self->kept_ops && g_strv_contains ((const char *const *) self->kept_ops, node->op_type)));
  owb_quantize_detail_show (self->detail, self->selected_node, self->prepared, self->comparison, self->quantized, kept);
}

static void
clear_results (OwbQuantizePage *self)
{
  g_clear_pointer (&self->comparison, owb_quant_comparison_free);
  g_clear_pointer (&self->quantized, owb_model_unref);
  g_clear_pointer (&self->qdq_display, owb_qdq_display_unref);
  g_clear_pointer (&self->node_sqnr, g_hash_table_unref);
  g_clear_pointer (&self->selected_node, g_free);
  g_clear_pointer (&self->kept_ops, g_strfreev);
  update_detail (self);
  gtk_label_set_text (self->fallback_label, "");
  gtk_widget_set_visible (GTK_WIDGET (self->fallback_label), FALSE);
  show_comparison (self, NULL);
  update_map (self);
}

/* ---- The job ---- */

typedef struct {
  JobKind kind;
  GTask *task;                  /* for progress (borrowed: the job is the task's data) */
  OwbModel *source;
  OwbModel *prepared;           /* in: kept from before, or NULL; out: the one used */
  OwbQuantCalibration *calibration; /* likewise */
  char *data_dir;
  guint max_samples;
  OwbQuantMethod method;
  gboolean per_channel;
  OwbDataType activation_type, weight_type;
  char **exclude_ops;
  gboolean images;
  OwbQuantImageOptions image_options;
  OwbQuantizeSettings settings; /* as the job ran, saved for the model when it succeeds */
  char *model_path;
  char **excluded;
  double target_sqnr_db;         /* Recover Accuracy's target: an SQNR (> 0) */
  double max_accuracy_drop;      /* or an accuracy drop, a fraction (>= 0; with labels) */
  /* results */
  OwbModel *quantized;
  OwbQuantComparison *comparison;
  OwbQuantFallbackResult *fallback;
  JobFacts facts;
  gint64 start;
} QuantJob;

static void
quant_job_free (QuantJob *job)
{
  g_clear_pointer (&job->source, owb_model_unref);
  g_clear_pointer (&job->prepared, owb_model_unref);
  g_clear_pointer (&job->calibration, owb_quant_calibration_free);
  g_free (job->data_dir);
  g_strfreev (job->exclude_ops);
  owb_quantize_settings_clear (&job->settings);
  g_free (job->model_path);
  g_strfreev (job->excluded);
  g_clear_pointer (&job->quantized, owb_model_unref);
  g_clear_pointer (&job->comparison, owb_quant_comparison_free);
  g_clear_pointer (&job->fallback, owb_quant_fallback_result_free);
  g_free (job->facts.source);
  g_free (job->facts.latency_error);
  g_free (job->facts.normalization);
  g_free (job->facts.exclude_ops);
  g_free (job->facts.labels_message);
  g_free (job->facts.settings_error);
  g_free (job);
}

/* The job's reports, on the main context (owb_job_report): text, and a fraction or a pulse (< 0). */
static void
progress_cb (gpointer source, double fraction, const char *text)
{
  OwbQuantizePage *self = source;
  if (owb_page_get_disposed (OWB_PAGE (self)) || !is_busy (self))
    return;
  gtk_progress_bar_set_text (self->progress, text);
  if (fraction < 0)
    gtk_progress_bar_pulse (self->progress);
  else
    gtk_progress_bar_set_fraction (self->progress, fraction);
}

/* Takes text. */
static void
report (QuantJob *job, double fraction, char *text)
{
  owb_job_report (job->task, fraction, text);
  g_free (text);
}

typedef struct {
  QuantJob *job;
  const char *phase; /* "Calibrating", translated, with %u of %u */
  guint every;
} PhaseProgress;

static void
phase_progress (guint done, guint total, gpointer user_data)
{
  PhaseProgress *pp = user_data;
  /* a hundred updates at most: the main loop need not redraw per sample */
  if (done != total && total > 100 && done % MAX (1u, total / 100) != 0)
    return;
  report (pp->job, total ? (double) done / total : -1, g_strdup_printf (pp->phase, done, total));
}

static guint64
initializer_bytes (const OwbModel *model)
{
  guint64 bytes = 0;
  for (guint i = 0; i < model->graph->initializers->len; i++)
    bytes += ((const OwbTensor *) g_ptr_array_index (model->graph->initializers, i))->nbytes;
  return bytes;
}

/* Median ms of LATENCY_RUNS runs of each model on one sample, alternating, after a warm-up, both
 * through the engine at level all (the QDQ pairs fused into integer ops where it can). */
static gboolean
measure_latency (QuantJob *job, OwbQuantDataset *dataset, GCancellable *cancellable, GError **error)
{
  g_autoptr (GPtrArray) names = NULL, tensors = NULL;
  if (!owb_quant_dataset_load_sample (dataset, 0, job->prepared, &names, &tensors, error))
    return FALSE;
  OwbModel *models[2] = { job->prepared, job->quantized };
  OwbSession *sessions[2] = { NULL, NULL };
  gboolean ok = TRUE;
  for (int m = 0; m < 2 && ok; m++)
    {
      OwbSessionOptions options;
      owb_session_options_init (&options);
      options.providers = owb_providers_new_from_list ("cpu", error);
      options.optimize = OWB_OPTIMIZE_ALL;
      ok = options.providers && (sessions[m] = owb_session_new (models[m], &options, error)) != NULL;
      g_clear_pointer (&options.providers, g_ptr_array_unref);
    }
  g_autoptr (GArray) float_times = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) quantized_times = g_array_new (FALSE, FALSE, sizeof (double));
  GArray *times[2] = { float_times, quantized_times };
  for (int r = 0; ok && r < LATENCY_RUNS + 1; r++)
    for (int m = 0; ok && m < 2; m++)
      {
        guint n_out = owb_session_get_n_outputs (sessions[m]);
        g_autofree OwbTensor **outputs = g_new0 (OwbTensor *, n_out);
        gint64 t0 = g_get_monotonic_time ();
        ok = owb_session_run (sessions[m], names->len, (const char *const *) names->pdata,
                              (OwbTensor *const *) tensors->pdata, n_out, NULL, outputs, NULL, cancellable, error);
        double ms = (g_get_monotonic_time () - t0) / 1000.0;
        for (guint k = 0; k < n_out; k++)
          if (outputs[k])
            owb_tensor_unref (outputs[k]);
        if (ok && r > 0)
          g_array_append_val (times[m], ms);
      }
  for (int m = 0; m < 2; m++)
    if (sessions[m])
      owb_session_free (sessions[m]);
  if (!ok)
    return FALSE;
  for (int m = 0; m < 2; m++)
    owb_stats_sort_doubles ((double *) times[m]->data, times[m]->len);
  job->facts.float_ms = owb_stats_quantile ((const double *) times[0]->data, times[0]->len, 0.5);
  job->facts.quantized_ms = owb_stats_quantile ((const double *) times[1]->data, times[1]->len, 0.5);
  return TRUE;
}

static gboolean
check_cancelled (GTask *task, GCancellable *cancellable)
{
  GError *error = NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    {
      g_task_return_error (task, error);
      return TRUE;
    }
  return FALSE;
}

static void
quant_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  QuantJob *job = task_data;
  GError *error = NULL;
  OwbQuantOptions options;
  owb_quant_options_init (&options);
  options.range.method = job->method;
  options.per_channel = job->per_channel;
  options.activation_type = job->activation_type;
  options.weight_type = job->weight_type;
  options.exclude_nodes = (const char *const *) job->excluded;
  options.exclude_ops = job->exclude_ops && job->exclude_ops[0] ? (const char *const *) job->exclude_ops : NULL;

  if (!job->prepared)
    {
      report (job, -1, g_strdup (_("Preparing the model (folding constants and batch normalization)")));
      job->prepared = owb_quant_prepare (job->source, &options, NULL, &error);
      if (!job->prepared)
        {
          g_task_return_error (task, error);
          return;
        }
    }
  if (check_cancelled (task, cancellable))
    return;

  g_autoptr (OwbQuantDataset) dataset = NULL;
  if (!job->data_dir)
    dataset = owb_quant_dataset_new_random (OWB_QUANTIZE_RANDOM_SAMPLES, 0);
  else if (job->images)
    dataset = owb_quant_dataset_new_from_images (job->data_dir, &job->image_options, &error);
  else
    dataset = owb_quant_dataset_new_from_dir (job->data_dir, &error);
  if (!dataset)
    {
      g_task_return_error (task, error);
      return;
    }
  guint n_all = owb_quant_dataset_get_n_samples (dataset);
  if (job->data_dir && job->max_samples > 0)
    owb_quant_dataset_truncate (dataset, job->max_samples);
  job->facts.images = job->images;

  /* labels.txt of the folder, one line per sample: for the comparison's task accuracy. One that
   * does not fit is said in the results and left out; the run goes on. */
  g_autoptr (GPtrArray) labels = NULL;
  g_autofree char *labels_path = job->data_dir ? g_build_filename (job->data_dir, "labels.txt", NULL) : NULL;
  if (labels_path && g_file_test (labels_path, G_FILE_TEST_IS_REGULAR))
    {
      labels = owb_quant_read_labels (labels_path, &error);
      if (!labels)
        {
          job->facts.labels_message = g_strdup_printf (_("labels.txt not used: %s"), error->message);
          g_clear_error (&error);
        }
      else if (labels->len != n_all)
        {
          job->facts.labels_message = g_strdup_printf (ngettext ("labels.txt not used: it has %u line for %u samples "
                                                                 "(one line per sample, in the folder’s order)",
                                                                 "labels.txt not used: it has %u lines for %u samples "
                                                                 "(one line per sample, in the folder’s order)",
                                                                 labels->len),
                                                       labels->len, n_all);
          g_clear_pointer (&labels, g_ptr_array_unref);
        }
      else
        g_ptr_array_set_size (labels, owb_quant_dataset_get_n_samples (dataset));
    }
  job->facts.random = job->data_dir == NULL;
  job->facts.n_samples = owb_quant_dataset_get_n_samples (dataset);
  job->facts.source = g_strdup (owb_quant_dataset_get_source (dataset));
  job->facts.method = owb_quant_method_to_string (job->method);
  job->facts.per_channel = job->per_channel;
  job->facts.activation_type = job->activation_type;
  job->facts.float_ms = job->facts.quantized_ms = NAN;

  if (!job->calibration)
    {
      /* What every exclusion set needs: planned with none, so that quantizing a node again later
       * finds its tensors calibrated. */
      OwbQuantOptions plan_options = options;
      plan_options.exclude_nodes = NULL;
      plan_options.exclude_ops = NULL;
      g_auto (GStrv) tensors = owb_quant_plan_tensors (job->prepared, &plan_options, &error);
      if (!tensors)
        {
          g_task_return_error (task, error);
          return;
        }
      OwbQuantCalibrateOptions co;
      owb_quant_calibrate_options_init (&co);
      co.tensors = (const char *const *) tensors;
      co.cancellable = cancellable;
      PhaseProgress pp = { job, _("Calibrating: sample %u of %u"), 0 };
      co.progress = phase_progress;
      co.user_data = &pp;
      gint64 t0 = g_get_monotonic_time ();
      job->calibration = owb_quant_calibrate (job->prepared, dataset, &co, &error);
      job->facts.calibrate_s = (g_get_monotonic_time () - t0) / 1e6;
      job->facts.calibrated = TRUE;
      if (!job->calibration)
        {
          g_task_return_error (task, error);
          return;
        }
    }
  if (check_cancelled (task, cancellable))
    return;

  if (job->kind == JOB_RECOVER)
    {
      OwbQuantFallbackOptions fo;
      owb_quant_fallback_options_init (&fo);
      fo.target_sqnr_db = job->target_sqnr_db;
      fo.max_accuracy_drop = job->max_accuracy_drop;
      if (job->max_accuracy_drop >= 0)
        {
          if (!labels)
            {
              g_task_return_new_error (task, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s",
                                       job->facts.labels_message
                                         ? job->facts.labels_message
                                         : _("An accuracy-drop target needs a labels.txt in the calibration folder"));
              return;
            }
          fo.labels = labels;
        }
      fo.eval = dataset;
      fo.cancellable = cancellable;
      PhaseProgress pp = { job, _("Recovering accuracy: trial %u of %u"), 0 };
      fo.progress = phase_progress;
      fo.user_data = &pp;
      report (job, -1, g_strdup (_("Ranking the nodes by sensitivity")));
      g_autoptr (OwbModel) chosen = owb_quant_quantize_with_fallback (job->prepared, job->calibration, &options, &fo,
                                                                      &job->fallback, &error);
      if (!chosen)
        {
          g_task_return_error (task, error);
          return;
        }
      /* The user's exclusions and the fallback's, as the excluded list the page shows. */
      g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
      for (char **p = job->excluded; p && *p; p++)
        g_strv_builder_add (builder, *p);
      for (guint i = 0; i < job->fallback->kept_float->len; i++)
        {
          const char *node = g_ptr_array_index (job->fallback->kept_float, i);
          if (!job->excluded || !g_strv_contains ((const char *const *) job->excluded, node))
            g_strv_builder_add (builder, node);
        }
      g_strfreev (job->excluded);
      job->excluded = g_strv_builder_end (builder);
      job->quantized = g_steal_pointer (&chosen);
    }
  else
    {
      report (job, -1, g_strdup (_("Inserting QuantizeLinear and DequantizeLinear pairs")));
      job->quantized = owb_quant_quantize_static (job->prepared, job->calibration, &options, NULL, &error);
      if (!job->quantized)
        {
          g_task_return_error (task, error);
          return;
        }
    }
  if (check_cancelled (task, cancellable))
    return;

  OwbQuantCompareOptions cmp;
  owb_quant_compare_options_init (&cmp);
  cmp.per_tensor = TRUE;
  cmp.cancellable = cancellable;
  PhaseProgress pp = { job, _("Comparing float and quantized: sample %u of %u"), 0 };
  cmp.progress = phase_progress;
  cmp.user_data = &pp;
  cmp.labels = labels;
  job->comparison = owb_quant_compare (job->prepared, job->quantized, dataset, &cmp, &error);
  if (!job->comparison && labels && !g_cancellable_is_cancelled (cancellable))
    {
      /* labels that do not parse, or a model with no classifier output: compared without them */
      job->facts.labels_message = g_strdup_printf (_("labels.txt not used: %s"), error->message);
      g_clear_error (&error);
      g_clear_pointer (&labels, g_ptr_array_unref);
      cmp.labels = NULL;
      job->comparison = owb_quant_compare (job->prepared, job->quantized, dataset, &cmp, &error);
    }
  if (!job->comparison)
    {
      g_task_return_error (task, error);
      return;
    }
  job->facts.n_labels = labels ? labels->len : 0;
  job->facts.float_bytes = initializer_bytes (job->prepared);
  job->facts.quantized_bytes = initializer_bytes (job->quantized);
  report (job, -1, g_strdup (_("Measuring the latency of both models")));
  GError *latency_error = NULL;
  if (!measure_latency (job, dataset, cancellable, &latency_error))
    {
      if (owb_error_is_cancelled (latency_error))
        {
          g_task_return_error (task, latency_error);
          return;
        }
      /* The comparison stands without it; the table says why. */
      job->facts.latency_error = g_strdup (latency_error->message);
      g_error_free (latency_error);
    }
  job->facts.total_s = (g_get_monotonic_time () - job->start) / 1e6;
  g_task_return_boolean (task, TRUE);
}

static char *
format_fallback (const OwbQuantFallbackResult *r, double target, double max_accuracy_drop)
{
  const OwbQuantTrial *first = &g_array_index (r->trials, OwbQuantTrial, 0);
  const OwbQuantTrial *chosen = &g_array_index (r->trials, OwbQuantTrial, r->chosen_trial);
  g_autoptr (GString) s = g_string_new (NULL);
  g_autofree char *first_db = format_db (first->sqnr_db), *chosen_db = format_db (chosen->sqnr_db);
  g_autofree char *nodes = g_strdup_printf (ngettext ("%u node", "%u nodes", r->kept_float->len), r->kept_float->len);
  if (max_accuracy_drop >= 0)
    {
      /* accuracies in percent, against the float model's on the same labels */
      double fa = 100 * r->float_accuracy, qa0 = 100 * first->accuracy, qa = 100 * chosen->accuracy;
      if (r->target_met)
        g_string_append_printf (s, ngettext ("Accuracy drop at most %.1f %% met after %u trial: float %.1f %%, "
                                             "%.1f %% with everything quantized, %.1f %% with %s in float",
                                             "Accuracy drop at most %.1f %% met after %u trials: float %.1f %%, "
                                             "%.1f %% with everything quantized, %.1f %% with %s in float",
                                             r->trials->len),
                                100 * max_accuracy_drop, r->trials->len, fa, qa0, qa, nodes);
      else
        g_string_append_printf (s, ngettext ("Accuracy drop at most %.1f %% not met in %u trial: float %.1f %%, "
                                             "the closest, %.1f %%, keeps %s in float (%.1f %% with everything "
                                             "quantized)",
                                             "Accuracy drop at most %.1f %% not met in %u trials: float %.1f %%, "
                                             "the closest, %.1f %%, keeps %s in float (%.1f %% with everything "
                                             "quantized)",
                                             r->trials->len),
                                100 * max_accuracy_drop, r->trials->len, fa, qa, nodes, qa0);
    }
  else if (r->target_met)
    g_string_append_printf (s, ngettext ("Target %.0f dB met after %u trial: worst output %s with everything quantized, %s with %s in float",
                                         "Target %.0f dB met after %u trials: worst output %s with everything quantized, %s with %s in float",
                                         r->trials->len),
                            target, r->trials->len, first_db, chosen_db, nodes);
  else
    g_string_append_printf (s, ngettext ("Target %.0f dB not met in %u trial: the closest, %s, keeps %s in float (worst output %s with everything quantized)",
                                         "Target %.0f dB not met in %u trials: the closest, %s, keeps %s in float (worst output %s with everything quantized)",
                                         r->trials->len),
                            target, r->trials->len, chosen_db, nodes, first_db);
  /* why: each one kept, with its own cost measured alone */
  for (guint i = 0; i < r->kept_float->len && i < 12; i++)
    {
      const char *node = g_ptr_array_index (r->kept_float, i);
      const OwbQuantSensitivity *sens = NULL;
      for (guint k = 0; k < r->ranking->len && !sens; k++)
        if (g_strcmp0 (((const OwbQuantSensitivity *) g_ptr_array_index (r->ranking, k))->node, node) == 0)
          sens = g_ptr_array_index (r->ranking, k);
      if (sens)
        {
          g_autofree char *db = format_db (sens->local_sqnr_db);
          g_string_append_printf (s, _("\n• %s (%s): %s when quantized alone"), node, sens->op_type, db);
        }
      else
        g_string_append_printf (s, "\n• %s", node);
    }
  if (r->kept_float->len > 12)
    g_string_append_printf (s, _("\n… and %u more"), r->kept_float->len - 12);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static void
set_excluded (OwbQuantizePage *self, char **names)
{
  g_ptr_array_set_size (self->excluded, 0);
  for (char **p = names; p && *p; p++)
    g_ptr_array_add (self->excluded, g_strdup (*p));
  g_ptr_array_add (self->excluded, NULL);
}

static void
job_done_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  OwbQuantizePage *self = OWB_QUANTIZE_PAGE (source);
  QuantJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);
  /* Not the current job (the document changed meanwhile): its results are of another model. */
  if (g_task_get_cancellable (G_TASK (result)) != owb_page_get_cancellable (OWB_PAGE (self)))
    return;
  owb_page_set_busy (OWB_PAGE (self), NULL);
  if (owb_page_get_disposed (OWB_PAGE (self)))
    return;
  /* What was prepared and calibrated stays, even when a later step failed or was cancelled. */
  if (job->source == self->source)
    {
      if (job->prepared && job->prepared != self->prepared)
        {
          g_clear_pointer (&self->prepared, owb_model_unref);
          self->prepared = owb_model_ref (job->prepared);
          owb_graph_view_set_graph (self->graph_view, self->prepared->graph, owb_model_ref (self->prepared),
                                    (GDestroyNotify) owb_model_unref);
          gtk_stack_set_visible_child_name (self->graph_stack, "graph");
        }
      if (job->calibration)
        {
          g_clear_pointer (&self->calibration, owb_quant_calibration_free);
          self->calibration = g_steal_pointer (&job->calibration);
          if (job->facts.calibrated)
            self->n_calibrations++;
        }
    }
  self->last_seconds = (g_get_monotonic_time () - job->start) / 1e6;
  if (!ok)
    {
      owb_page_show_error (OWB_PAGE (self), owb_error_is_cancelled (error) ? _("Cancelled") : error->message);
      update_sensitivity (self);
      return;
    }
  owb_page_show_error (OWB_PAGE (self), NULL);
  if (job->kind == JOB_RECOVER)
    set_excluded (self, job->excluded);
  if (job->model_path && job->source == self->source)
    {
      g_strfreev (job->settings.kept_float);
      job->settings.kept_float = g_strdupv (job->excluded);
      g_autoptr (GError) settings_error = NULL;
      if (!owb_quantize_settings_save (job->model_path, &job->settings, &settings_error))
        job->facts.settings_error = g_strdup (settings_error->message);
    }
  g_clear_pointer (&self->quantized, owb_model_unref);
  g_clear_pointer (&self->qdq_display, owb_qdq_display_unref);
  self->quantized = g_steal_pointer (&job->quantized);
  g_clear_pointer (&self->comparison, owb_quant_comparison_free);
  self->comparison = g_steal_pointer (&job->comparison);
  g_strfreev (self->kept_ops);
  self->kept_ops = g_strdupv (job->exclude_ops);
  build_node_sqnr (self);
  /* the node just kept in float stays selected: its detail now says so */
  if (self->selected_node && !owb_graph_find_node (self->prepared ? self->prepared->graph : NULL, self->selected_node))
    g_clear_pointer (&self->selected_node, g_free);
  show_comparison (self, &job->facts);
  show_excluded (self);
  update_map (self);
  update_detail (self);
  if (job->kind == JOB_RECOVER)
    {
      g_autofree char *text = format_fallback (job->fallback, job->target_sqnr_db, job->max_accuracy_drop);
      gtk_label_set_text (self->fallback_label, text);
      gtk_widget_set_visible (GTK_WIDGET (self->fallback_label), TRUE);
    }
  update_sensitivity (self);
}

static const char *
normalization_name (OwbQuantizeNormalization normalization)
{
  switch (normalization)
    {
    case OWB_QUANTIZE_NORMALIZATION_IMAGENET:
      return "ImageNet";
    case OWB_QUANTIZE_NORMALIZATION_SYMMETRIC:
      return "[-1, 1]";
    case OWB_QUANTIZE_NORMALIZATION_CUSTOM:
      return _("Custom");
    case OWB_QUANTIZE_NORMALIZATION_UNIT:
    default:
      return "[0, 1]";
    }
}

/* The settings as the widgets have them; FALSE with a message when the custom normalization does
 * not parse. */
static gboolean
collect_settings (OwbQuantizePage *self, OwbQuantizeSettings *settings, char **message)
{
  memset (settings, 0, sizeof *settings);
  settings->folder = g_strdup (self->data_dir);
  settings->max_samples = self->max_samples;
  settings->method = owb_quantize_page_get_method (self);
  settings->per_channel = gtk_switch_get_active (self->per_channel_switch);
  settings->activation_type = owb_quantize_page_get_activation_type (self);
  settings->weight_type = owb_quantize_page_get_weight_type (self);
  settings->normalization = owb_quantize_page_get_normalization (self);
  settings->bgr = gtk_switch_get_active (self->bgr_switch);
  settings->exclude_ops = parse_op_types (gtk_editable_get_text (GTK_EDITABLE (self->exclude_ops_entry)));
  settings->kept_float = g_strdupv ((char **) self->excluded->pdata);
  gboolean mean_ok = parse_channels (gtk_editable_get_text (GTK_EDITABLE (self->mean_entry)), settings->mean, FALSE);
  gboolean std_ok = parse_channels (gtk_editable_get_text (GTK_EDITABLE (self->std_entry)), settings->std, TRUE);
  if (!mean_ok)
    for (int c = 0; c < 3; c++)
      settings->mean[c] = 0;
  if (!std_ok)
    for (int c = 0; c < 3; c++)
      settings->std[c] = 1;
  if (settings->normalization == OWB_QUANTIZE_NORMALIZATION_CUSTOM && (!mean_ok || !std_ok))
    {
      if (message)
        *message = g_strdup (_("Custom normalization: give the mean and the std as one number or three separated "
                               "by commas, such as 0.5 or 0.485, 0.456, 0.406; the std above 0"));
      return FALSE;
    }
  return TRUE;
}

static char *
model_path_of (OwbDocument *document)
{
  GFile *file = document ? owb_document_get_file (document) : NULL;
  return file ? g_file_get_path (file) : NULL;
}

static void
start_job (OwbQuantizePage *self, JobKind kind, double target_sqnr_db, double max_accuracy_drop)
{
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  OwbModel *model = document ? owb_document_get_model (document) : NULL;
  if (is_busy (self) || !model)
    return;
  OwbQuantizeSettings settings;
  g_autofree char *settings_message = NULL;
  if (!collect_settings (self, &settings, &settings_message))
    {
      owb_quantize_settings_clear (&settings);
      owb_page_show_error (OWB_PAGE (self), settings_message);
      return;
    }
  /* the folder read again: it may have changed since it was chosen */
  guint n_images = 0;
  gboolean images = folder_holds_images (self->data_dir, &n_images);
  if (images != self->data_images || n_images != self->n_images)
    {
      if (images != self->data_images)
        drop_calibration (self);
      self->data_images = images;
      self->n_images = n_images;
      show_data_choice (self);
    }
  /* A job takes the calibration (and gives it back): nothing reads it on this thread meanwhile. */
  QuantJob *job = g_new0 (QuantJob, 1);
  job->kind = kind;
  job->start = g_get_monotonic_time ();
  job->source = owb_model_ref (model);
  job->prepared = self->prepared ? owb_model_ref (self->prepared) : NULL;
  job->calibration = g_steal_pointer (&self->calibration);
  job->data_dir = g_strdup (self->data_dir);
  job->max_samples = self->max_samples;
  guint method = gtk_drop_down_get_selected (self->method_drop);
  job->method = method <= OWB_QUANT_MSE ? (OwbQuantMethod) method : OWB_QUANT_MINMAX;
  job->per_channel = gtk_switch_get_active (self->per_channel_switch);
  job->activation_type = settings.activation_type;
  job->weight_type = settings.weight_type;
  job->exclude_ops = g_strdupv (settings.exclude_ops);
  if (settings.exclude_ops && settings.exclude_ops[0])
    job->facts.exclude_ops = g_strjoinv (", ", settings.exclude_ops);
  job->facts.weight_type = settings.weight_type;
  job->images = images;
  if (images)
    {
      /* size and layout 0: the model input's own */
      owb_quant_image_options_init (&job->image_options);
      owb_quantize_normalization_values (settings.normalization, &settings, job->image_options.mean,
                                         job->image_options.std);
      job->image_options.bgr = settings.bgr;
      job->facts.bgr = settings.bgr;
      if (settings.normalization == OWB_QUANTIZE_NORMALIZATION_CUSTOM)
        {
          g_autofree char *mean = format_channels (job->image_options.mean);
          g_autofree char *std = format_channels (job->image_options.std);
          job->facts.normalization = g_strdup_printf (_("custom (mean %s, std %s)"), mean, std);
        }
      else
        job->facts.normalization = g_strdup (normalization_name (settings.normalization));
    }
  job->settings = settings;
  job->model_path = model_path_of (document);
  job->excluded = g_strdupv ((char **) self->excluded->pdata);
  job->target_sqnr_db = target_sqnr_db;
  job->max_accuracy_drop = max_accuracy_drop;
  owb_page_show_error (OWB_PAGE (self), NULL);
  gtk_progress_bar_set_fraction (self->progress, 0);
  gtk_progress_bar_set_text (self->progress, _("Starting"));
  owb_page_set_busy (OWB_PAGE (self), g_cancellable_new ());
  g_autoptr (GTask) task = owb_document_new_job (document, self, owb_page_get_cancellable (OWB_PAGE (self)), progress_cb,
                                                 job_done_cb, NULL);
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, job, (GDestroyNotify) quant_job_free);
  job->task = task;
  owb_document_run_job (document, task, quant_thread);
}

/* ---- Public ---- */

void
owb_quantize_page_quantize (OwbQuantizePage *self)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  start_job (self, JOB_QUANTIZE, 0, -1);
}

void
owb_quantize_page_recover_accuracy (OwbQuantizePage *self, double target_sqnr_db)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  start_job (self, JOB_RECOVER, target_sqnr_db > 0 ? target_sqnr_db : 30, -1);
}

void
owb_quantize_page_recover_accuracy_drop (OwbQuantizePage *self, double max_drop_percent)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  start_job (self, JOB_RECOVER, 0, CLAMP (max_drop_percent, 0, 100) / 100.0);
}

gboolean
owb_quantize_page_get_has_labels (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), FALSE);
  return self->has_labels;
}

gboolean
owb_quantize_page_set_recover_target (OwbQuantizePage *self, OwbQuantizeTarget kind, double value)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), FALSE);
  if (kind == OWB_QUANTIZE_TARGET_ACCURACY_DROP && !self->has_labels)
    return FALSE;
  gtk_drop_down_set_selected (self->target_kind_drop, kind);
  gtk_spin_button_set_value (self->target_spin, value);
  return TRUE;
}

const char *
owb_quantize_page_get_fallback_text (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return gtk_widget_get_visible (GTK_WIDGET (self->fallback_label)) ? gtk_label_get_text (self->fallback_label) : NULL;
}

guint
owb_quantize_page_get_n_calibrations (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), 0);
  return self->n_calibrations;
}

double
owb_quantize_page_get_last_seconds (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), 0);
  return self->last_seconds;
}

const OwbQuantComparison *
owb_quantize_page_get_comparison (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return self->comparison;
}

OwbModel *
owb_quantize_page_get_quantized_model (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return self->quantized;
}

guint
owb_quantize_page_get_n_comparison_rows (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), 0);
  return self->n_comparison_rows;
}

guint
owb_quantize_page_get_n_worst_rows (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), 0);
  return self->n_worst_rows;
}

const char *const *
owb_quantize_page_get_excluded (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return (const char *const *) self->excluded->pdata;
}

const char *
owb_quantize_page_get_selected_node (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return self->selected_node;
}

OwbGraphView *
owb_quantize_page_get_graph_view (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return self->graph_view;
}

gboolean
owb_quantize_page_get_node_sqnr (OwbQuantizePage *self, const char *node_name, double *sqnr_db)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), FALSE);
  const double *db = self->node_sqnr && node_name ? g_hash_table_lookup (self->node_sqnr, node_name) : NULL;
  if (db && sqnr_db)
    *sqnr_db = *db;
  return db != NULL;
}

/* The node Keep in Float acts on: from a worst tensor's row or a click on the map. */
static void
select_node (OwbQuantizePage *self, const char *name, gboolean from_view)
{
  if (g_strcmp0 (self->selected_node, name) != 0)
    {
      g_free (self->selected_node);
      self->selected_node = g_strdup (name);
    }
  update_sensitivity (self);
  update_detail (self);
  if (!name)
    return;
  if (!from_view)
    {
      /* in the graph shown: the float one, or the quantized one (collapsed or not) */
      const OwbGraph *shown = owb_graph_view_get_graph (self->graph_view);
      const OwbNode *node = NULL;
      for (guint i = 0; shown && i < shown->nodes->len && !node; i++)
        if (g_strcmp0 (((const OwbNode *) g_ptr_array_index (shown->nodes, i))->name, name) == 0)
          node = g_ptr_array_index (shown->nodes, i);
      if (node && owb_graph_view_get_selected_node (self->graph_view) != node)
        {
          self->selecting = TRUE;
          owb_graph_view_select_node (self->graph_view, node);
          self->selecting = FALSE;
        }
    }
  owb_page_activate_node (OWB_PAGE (self), name, FALSE);
}

void
owb_quantize_page_select_worst (OwbQuantizePage *self, guint index)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  /* row 0 is the header */
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (self->worst_list, (int) index + 1);
  if (row)
    gtk_list_box_select_row (self->worst_list, row);
}

void
owb_quantize_page_keep_selected_in_float (OwbQuantizePage *self)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  if (is_busy (self) || !self->selected_node || !self->selected_node[0] || is_excluded (self, self->selected_node))
    return;
  g_ptr_array_insert (self->excluded, (int) self->excluded->len - 1, g_strdup (self->selected_node));
  show_excluded (self);
  start_job (self, JOB_QUANTIZE, 0, -1);
}

void
owb_quantize_page_remove_excluded (OwbQuantizePage *self, const char *node_name)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  if (is_busy (self))
    return;
  for (guint i = 0; i + 1 < self->excluded->len; i++)
    if (g_strcmp0 (g_ptr_array_index (self->excluded, i), node_name) == 0)
      {
        g_ptr_array_remove_index (self->excluded, i);
        show_excluded (self);
        if (self->quantized)
          start_job (self, JOB_QUANTIZE, 0, -1);
        return;
      }
}

static void
drop_calibration (OwbQuantizePage *self)
{
  g_clear_pointer (&self->calibration, owb_quant_calibration_free);
}

static void
show_data_choice (OwbQuantizePage *self)
{
  g_autofree char *text = NULL;
  if (self->data_dir)
    {
      g_autofree char *base = g_path_get_basename (self->data_dir);
      text = self->data_images ? g_strdup_printf (ngettext ("%s: %u image, resized to the model input",
                                                            "%s: %u images, resized to the model input", self->n_images),
                                                  base, self->n_images)
                               : g_strdup (base);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->data_row), self->data_dir);
    }
  else
    {
      text = g_strdup_printf (ngettext ("%u random sample (seeded)", "%u random samples (seeded)",
                                        OWB_QUANTIZE_RANDOM_SAMPLES), OWB_QUANTIZE_RANDOM_SAMPLES);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->data_row),
                                   _("No folder chosen: calibrates on seeded random values, which say little about "
                                     "the ranges of real data"));
    }
  adw_action_row_set_subtitle (self->data_row, text);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->choose_button), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
  /* an accuracy-drop target needs labels: offered only with a labels.txt */
  g_autofree char *labels = self->data_dir ? g_build_filename (self->data_dir, "labels.txt", NULL) : NULL;
  self->has_labels = labels && g_file_test (labels, G_FILE_TEST_IS_REGULAR);
  if (!self->has_labels)
    gtk_drop_down_set_selected (self->target_kind_drop, OWB_QUANTIZE_TARGET_SQNR);
  gtk_widget_set_visible (self->target_kind_row, self->has_labels);
  gtk_widget_set_sensitive (GTK_WIDGET (self->samples_spin), self->data_dir != NULL);
  gtk_widget_set_visible (self->normalization_row, self->data_images);
  gtk_widget_set_visible (self->bgr_row, self->data_images);
  gtk_widget_set_visible (self->custom_row, self->data_images
                                              && gtk_drop_down_get_selected (self->normalization_drop)
                                                   == OWB_QUANTIZE_NORMALIZATION_CUSTOM);
  update_sensitivity (self);
}

void
owb_quantize_page_set_calibration_dir (OwbQuantizePage *self, const char *dir)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  if (g_strcmp0 (dir, self->data_dir) == 0)
    return;
  g_free (self->data_dir);
  self->data_dir = g_strdup (dir);
  self->data_images = folder_holds_images (dir, &self->n_images);
  drop_calibration (self);
  show_data_choice (self);
}

const char *
owb_quantize_page_get_calibration_dir (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return self->data_dir;
}

void
owb_quantize_page_set_max_samples (OwbQuantizePage *self, guint n)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_spin_button_set_value (self->samples_spin, n);
}

guint
owb_quantize_page_get_max_samples (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), 0);
  return self->max_samples;
}

gboolean
owb_quantize_page_get_calibration_images (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), FALSE);
  return self->data_images;
}

void
owb_quantize_page_set_normalization (OwbQuantizePage *self, OwbQuantizeNormalization normalization)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_drop_down_set_selected (self->normalization_drop, MIN ((guint) normalization, OWB_QUANTIZE_NORMALIZATION_CUSTOM));
}

OwbQuantizeNormalization
owb_quantize_page_get_normalization (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), OWB_QUANTIZE_NORMALIZATION_UNIT);
  guint i = gtk_drop_down_get_selected (self->normalization_drop);
  return i <= OWB_QUANTIZE_NORMALIZATION_CUSTOM ? (OwbQuantizeNormalization) i : OWB_QUANTIZE_NORMALIZATION_UNIT;
}

void
owb_quantize_page_set_custom_normalization (OwbQuantizePage *self, const char *mean, const char *std)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_editable_set_text (GTK_EDITABLE (self->mean_entry), mean ? mean : "");
  gtk_editable_set_text (GTK_EDITABLE (self->std_entry), std ? std : "");
}

void
owb_quantize_page_set_bgr (OwbQuantizePage *self, gboolean bgr)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_switch_set_active (self->bgr_switch, bgr);
}

gboolean
owb_quantize_page_get_bgr (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), FALSE);
  return gtk_switch_get_active (self->bgr_switch);
}

void
owb_quantize_page_set_method (OwbQuantizePage *self, OwbQuantMethod method)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_drop_down_set_selected (self->method_drop, MIN ((guint) method, (guint) OWB_QUANT_MSE));
}

OwbQuantMethod
owb_quantize_page_get_method (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), OWB_QUANT_MINMAX);
  guint method = gtk_drop_down_get_selected (self->method_drop);
  return method <= OWB_QUANT_MSE ? (OwbQuantMethod) method : OWB_QUANT_MINMAX;
}

void
owb_quantize_page_set_per_channel (OwbQuantizePage *self, gboolean per_channel)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_switch_set_active (self->per_channel_switch, per_channel);
}

gboolean
owb_quantize_page_get_per_channel (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), TRUE);
  return gtk_switch_get_active (self->per_channel_switch);
}

/* The type drop-downs: u8 first for activations (the default), s8 first for weights. */
void
owb_quantize_page_set_activation_type (OwbQuantizePage *self, OwbDataType type)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_drop_down_set_selected (self->activation_drop, type == OWB_TYPE_INT8 ? 1 : 0);
}

OwbDataType
owb_quantize_page_get_activation_type (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), OWB_TYPE_UINT8);
  return gtk_drop_down_get_selected (self->activation_drop) == 1 ? OWB_TYPE_INT8 : OWB_TYPE_UINT8;
}

void
owb_quantize_page_set_weight_type (OwbQuantizePage *self, OwbDataType type)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_drop_down_set_selected (self->weight_drop, type == OWB_TYPE_UINT8 ? 1 : 0);
}

OwbDataType
owb_quantize_page_get_weight_type (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), OWB_TYPE_INT8);
  return gtk_drop_down_get_selected (self->weight_drop) == 1 ? OWB_TYPE_UINT8 : OWB_TYPE_INT8;
}

void
owb_quantize_page_set_exclude_ops (OwbQuantizePage *self, const char *op_types)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_editable_set_text (GTK_EDITABLE (self->exclude_ops_entry), op_types ? op_types : "");
}

const char *
owb_quantize_page_get_exclude_ops (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return gtk_editable_get_text (GTK_EDITABLE (self->exclude_ops_entry));
}

const char *
owb_quantize_page_get_summary (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return gtk_label_get_text (self->summary_label);
}

const char *
owb_quantize_page_get_accuracy_text (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return self->accuracy_text;
}

const char *
owb_quantize_page_get_labels_message (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return self->labels_message;
}

/* The saved settings of the document's model file onto the widgets; a folder gone since, or nodes
 * the model no longer has, are left out. */
static void
restore_settings (OwbQuantizePage *self)
{
  g_autofree char *path = model_path_of (owb_page_get_document (OWB_PAGE (self)));
  if (!path || !self->source)
    return;
  OwbQuantizeSettings settings;
  collect_settings (self, &settings, NULL);
  if (owb_quantize_settings_load (path, &settings))
    {
      if (!settings.folder || g_file_test (settings.folder, G_FILE_TEST_IS_DIR))
        owb_quantize_page_set_calibration_dir (self, settings.folder);
      owb_quantize_page_set_max_samples (self, settings.max_samples);
      owb_quantize_page_set_method (self, settings.method);
      owb_quantize_page_set_per_channel (self, settings.per_channel);
      owb_quantize_page_set_activation_type (self, settings.activation_type);
      owb_quantize_page_set_weight_type (self, settings.weight_type);
      g_autofree char *mean = format_channels (settings.mean), *std = format_channels (settings.std);
      owb_quantize_page_set_custom_normalization (self, mean, std);
      owb_quantize_page_set_normalization (self, settings.normalization);
      owb_quantize_page_set_bgr (self, settings.bgr);
      g_autofree char *ops = settings.exclude_ops ? g_strjoinv (", ", settings.exclude_ops) : g_strdup ("");
      owb_quantize_page_set_exclude_ops (self, ops);
      g_autoptr (GStrvBuilder) kept = g_strv_builder_new ();
      for (char **p = settings.kept_float; p && *p; p++)
        if (owb_graph_find_node (self->source ? self->source->graph : NULL, *p))
          g_strv_builder_add (kept, *p);
      g_auto (GStrv) names = g_strv_builder_end (kept);
      set_excluded (self, names);
      show_excluded (self);
    }
  owb_quantize_settings_clear (&settings);
}

/* ---- Saving ---- */

/* Everything that can refuse a save before a byte is written; returns the local path. */
static char *
check_save_target (OwbQuantizePage *self, GFile *file, GError **error)
{
  if (!self->quantized)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("There is no quantized model to save yet: quantize first"));
      return NULL;
    }
  return owb_page_check_save_target (owb_page_get_document (OWB_PAGE (self)), file, error);
}

gboolean
owb_quantize_page_save_to (OwbQuantizePage *self, GFile *file, GError **error)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  g_autofree char *path = check_save_target (self, file, error);
  return path && owb_model_save_file (self->quantized, path, NULL, error);
}

static void
save_done_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  OwbQuantizePage *self = OWB_QUANTIZE_PAGE (source);
  g_autoptr (GError) error = NULL;
  const char *path = NULL;
  gboolean ok = owb_document_save_model_finish (result, NULL, &path, &error);
  if (owb_page_get_disposed (OWB_PAGE (self)))
    return;
  if (ok)
    {
      g_autofree char *message = g_strdup_printf (_("Saved to %s"), path);
      owb_page_show_error (OWB_PAGE (self), NULL);
      owb_page_toast (GTK_WIDGET (self), message, 0);
    }
  else
    {
      g_autofree char *message = g_strdup_printf (_("Could not save: %s"), error->message);
      owb_page_show_error (OWB_PAGE (self), message);
    }
}

static void
save_response_cb (GtkNativeDialog *dialog, int response, OwbQuantizePage *self)
{
  g_autoptr (GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog)) : NULL;
  owb_page_close_file_chooser (&self->chooser);
  if (!file)
    return;
  g_autoptr (GError) error = NULL;
  char *path = check_save_target (self, file, &error);
  if (!path)
    {
      g_autofree char *message = g_strdup_printf (_("Could not save: %s"), error->message);
      owb_page_show_error (OWB_PAGE (self), message);
      return;
    }
  /* A large model takes a while to write: a worker thread does it (the file is renamed into place
   * only when complete, so there is nothing to cancel halfway). */
  owb_document_save_model_async (owb_page_get_document (OWB_PAGE (self)), self, self->quantized, path, NULL, save_done_cb,
                                 NULL);
  g_free (path);
}

static void
save_clicked_cb (OwbQuantizePage *self)
{
  if (!self->quantized || self->chooser)
    return;
  self->chooser = owb_page_new_file_chooser (GTK_WIDGET (self), _("Save Quantized Model"), GTK_FILE_CHOOSER_ACTION_SAVE,
                                             _("_Save"));
  owb_page_add_file_filter (self->chooser, _("ONNX Models"), "*.onnx", NULL);
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  GFile *input = document ? owb_document_get_file (document) : NULL;
  g_autofree char *suggested = owb_page_dup_model_file_name (document, "-int8.onnx");
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->chooser), suggested);
  if (input)
    {
      g_autoptr (GFile) folder = g_file_get_parent (input);
      if (folder)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (self->chooser), folder, NULL);
    }
  g_signal_connect (self->chooser, "response", G_CALLBACK (save_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
folder_response_cb (GtkNativeDialog *dialog, int response, OwbQuantizePage *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) folder = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = folder ? g_file_get_path (folder) : NULL;
      if (path)
        owb_quantize_page_set_calibration_dir (self, path);
    }
  owb_page_close_file_chooser (&self->chooser);
}

static void
choose_clicked_cb (OwbQuantizePage *self)
{
  if (self->chooser)
    return;
  self->chooser = owb_page_new_file_chooser (GTK_WIDGET (self), _("Choose a Calibration Folder"),
                                             GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER, _("_Choose"));
  OwbDocument *document = owb_page_get_document (OWB_PAGE (self));
  GFile *input = document ? owb_document_get_file (document) : NULL;
  if (input)
    {
      g_autoptr (GFile) folder = g_file_get_parent (input);
      if (folder)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (self->chooser), folder, NULL);
    }
  g_signal_connect (self->chooser, "response", G_CALLBACK (folder_response_cb), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

/* ---- Callbacks ---- */

static void
random_clicked_cb (OwbQuantizePage *self)
{
  owb_quantize_page_set_calibration_dir (self, NULL);
}

static void
samples_changed_cb (OwbQuantizePage *self)
{
  guint n = (guint) gtk_spin_button_get_value_as_int (self->samples_spin);
  if (n == self->max_samples)
    return;
  self->max_samples = n;
  if (self->data_dir)
    drop_calibration (self);
}

/* What the images become changed: their statistics are of other values. */
static void
image_options_changed_cb (OwbQuantizePage *self)
{
  if (self->data_images)
    drop_calibration (self);
  show_data_choice (self);
}

static void
custom_normalization_changed_cb (OwbQuantizePage *self)
{
  if (owb_quantize_page_get_normalization (self) == OWB_QUANTIZE_NORMALIZATION_CUSTOM)
    image_options_changed_cb (self);
}

static void
quantize_clicked_cb (OwbQuantizePage *self)
{
  owb_quantize_page_quantize (self);
}

static void
cancel_clicked_cb (OwbQuantizePage *self)
{
  owb_page_cancel (OWB_PAGE (self));
}

static void
keep_clicked_cb (OwbQuantizePage *self)
{
  owb_quantize_page_keep_selected_in_float (self);
}

static void
recover_clicked_cb (OwbQuantizePage *self)
{
  owb_quantize_page_recover (self);
}

void
owb_quantize_page_recover (OwbQuantizePage *self)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  if (gtk_drop_down_get_selected (self->target_kind_drop) == OWB_QUANTIZE_TARGET_ACCURACY_DROP)
    owb_quantize_page_recover_accuracy_drop (self, gtk_spin_button_get_value (self->target_spin));
  else
    owb_quantize_page_recover_accuracy (self, gtk_spin_button_get_value (self->target_spin));
}

/* The spin's range, unit and name follow the target's kind. */
static void
target_kind_changed_cb (OwbQuantizePage *self)
{
  guint kind = gtk_drop_down_get_selected (self->target_kind_drop);
  gboolean drop = kind == OWB_QUANTIZE_TARGET_ACCURACY_DROP;
  if (drop)
    {
      gtk_spin_button_set_range (self->target_spin, 0, 100);
      gtk_spin_button_set_increments (self->target_spin, 0.5, 5);
      gtk_spin_button_set_digits (self->target_spin, 1);
    }
  else
    {
      gtk_spin_button_set_range (self->target_spin, 1, 120);
      gtk_spin_button_set_increments (self->target_spin, 1, 10);
      gtk_spin_button_set_digits (self->target_spin, 0);
    }
  gtk_spin_button_set_value (self->target_spin, self->target_values[drop]);
  gtk_label_set_text (self->target_unit_label, drop ? "%" : _("dB"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->target_spin), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  drop ? _("Maximum Accuracy Drop (%)") : _("Target SQNR (dB)"), -1);
}

static void
target_value_changed_cb (OwbQuantizePage *self)
{
  guint kind = gtk_drop_down_get_selected (self->target_kind_drop);
  self->target_values[kind == OWB_QUANTIZE_TARGET_ACCURACY_DROP] = gtk_spin_button_get_value (self->target_spin);
}

static void
worst_selected_cb (GtkListBox *list, GtkListBoxRow *row, OwbQuantizePage *self)
{
  const char *name = row ? g_object_get_data (G_OBJECT (row), "owb-node-name") : NULL;
  if (name)
    select_node (self, name, FALSE);
}

static void
worst_activated_cb (GtkListBox *list, GtkListBoxRow *row, OwbQuantizePage *self)
{
  const char *name = g_object_get_data (G_OBJECT (row), "owb-node-name");
  if (name)
    owb_page_activate_node (OWB_PAGE (self), name, TRUE);
}

static void
view_selection_changed_cb (OwbQuantizePage *self)
{
  if (self->selecting)
    return;
  const OwbNode *node = owb_graph_view_get_selected_node (self->graph_view);
  if (node && node->name && node->name[0])
    {
      gtk_list_box_unselect_all (self->worst_list);
      select_node (self, node->name, TRUE);
    }
}

/* ---- Document ---- */

static void
document_changed (OwbPage *page)
{
  OwbQuantizePage *self = OWB_QUANTIZE_PAGE (page);
  OwbDocument *document = owb_page_get_document (page);
  OwbModel *model = document ? owb_document_get_model (document) : NULL;
  if (model != self->source)
    {
      owb_page_cancel (page);
      if (is_busy (self))
        owb_page_set_busy (page, NULL);
      g_clear_pointer (&self->source, owb_model_unref);
      self->source = model ? owb_model_ref (model) : NULL;
      g_clear_pointer (&self->prepared, owb_model_unref);
      drop_calibration (self);
      set_excluded (self, NULL);
      clear_results (self);
      show_excluded (self);
      owb_page_show_error (OWB_PAGE (self), NULL);
      owb_graph_view_set_graph (self->graph_view, NULL, NULL, NULL);
      gtk_stack_set_visible_child_name (self->graph_stack, "empty");
      restore_settings (self);
    }
  update_sensitivity (self);
}

/* ---- Widget ---- */

static GtkWidget *
heading (const char *text)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_widget_add_css_class (label, "heading");
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  return label;
}

static GtkListBox *
named_list (const char *name, GtkSelectionMode mode)
{
  GtkWidget *list = gtk_list_box_new ();
  gtk_widget_add_css_class (list, "boxed-list");
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), mode);
  gtk_accessible_update_property (GTK_ACCESSIBLE (list), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  return GTK_LIST_BOX (list);
}

static GtkWidget *
action_row (GtkWidget *group, const char *title, const char *subtitle, GtkWidget *suffix)
{
  GtkWidget *row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  gtk_widget_set_valign (suffix, GTK_ALIGN_CENTER);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), suffix);
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), row);
  return row;
}

static GtkButton *
named_button (const char *mnemonic, const char *name)
{
  GtkWidget *button = gtk_button_new_with_mnemonic (mnemonic);
  gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  owb_page_keep_own_accessible_name (button);
  return GTK_BUTTON (button);
}

static GtkDropDown *
named_drop_down (const char *name, const char *const *items, guint selected)
{
  GtkWidget *drop = gtk_drop_down_new_from_strings (items);
  gtk_drop_down_set_selected (GTK_DROP_DOWN (drop), selected);
  gtk_accessible_update_property (GTK_ACCESSIBLE (drop), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  return GTK_DROP_DOWN (drop);
}

static void
owb_quantize_page_init (OwbQuantizePage *self)
{
  self->excluded = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (self->excluded, NULL);
  self->max_samples = 128;

  self->paned = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_paned_set_position (GTK_PANED (self->paned), 560);
  gtk_paned_set_resize_start_child (GTK_PANED (self->paned), FALSE);
  gtk_paned_set_shrink_start_child (GTK_PANED (self->paned), FALSE);
  gtk_widget_set_parent (self->paned, GTK_WIDGET (self));

  GtkWidget *scroller = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_widget_set_size_request (scroller, 420, -1);
  gtk_accessible_update_property (GTK_ACCESSIBLE (scroller), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Quantization Settings and Results"), -1);
  gtk_paned_set_start_child (GTK_PANED (self->paned), scroller);
  GtkWidget *content = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_margin_start (content, 12);
  gtk_widget_set_margin_end (content, 12);
  gtk_widget_set_margin_top (content, 12);
  gtk_widget_set_margin_bottom (content, 12);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), content);

  /* settings */
  GtkWidget *group = adw_preferences_group_new ();
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (group), _("Static INT8 Quantization (QDQ)"));
  gtk_box_append (GTK_BOX (content), group);

  GtkWidget *data_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->choose_button = named_button (_("C_hoose…"), _("Choose Calibration Folder"));
  g_signal_connect_swapped (self->choose_button, "clicked", G_CALLBACK (choose_clicked_cb), self);
  gtk_box_append (GTK_BOX (data_box), GTK_WIDGET (self->choose_button));
  self->random_button = GTK_BUTTON (gtk_button_new_from_icon_name ("edit-clear-symbolic"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->random_button), _("Use Random Samples"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->random_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Use Random Samples"), -1);
  g_signal_connect_swapped (self->random_button, "clicked", G_CALLBACK (random_clicked_cb), self);
  gtk_box_append (GTK_BOX (data_box), GTK_WIDGET (self->random_button));
  GtkWidget *data_row = action_row (group, _("Calibration Data"), NULL, data_box);
  gtk_widget_set_tooltip_text (data_row, _("A folder of samples (subfolders of input_0.pb or .npy files, as in the "
                                           "ONNX test-data layout) or of images (PNG, JPEG, BMP, PNM); a labels.txt "
                                           "in it, one line per sample, gives the task accuracy"));
  /* What is chosen is the row's second line: a folder's name, or the random samples said as such. */
  self->data_row = ADW_ACTION_ROW (data_row);

  /* an image folder's preprocessing: shown only for one */
  const char *normalizations[] = { "[0, 1]", "ImageNet", "[-1, 1]", _("Custom"), NULL };
  self->normalization_drop = named_drop_down (_("Normalization"), normalizations, OWB_QUANTIZE_NORMALIZATION_UNIT);
  g_signal_connect_swapped (self->normalization_drop, "notify::selected", G_CALLBACK (image_options_changed_cb), self);
  self->normalization_row = action_row (group, _("Normalization"),
                                        _("Of the pixels scaled to [0, 1]: (x − mean) / std; the size and layout are "
                                          "the model input’s"),
                                        GTK_WIDGET (self->normalization_drop));
  gtk_widget_set_tooltip_text (self->normalization_row,
                               _("[0, 1]: as scaled; ImageNet: mean 0.485, 0.456, 0.406, std 0.229, 0.224, 0.225; "
                                 "[-1, 1]: mean 0.5, std 0.5"));
  GtkWidget *custom_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->mean_entry = GTK_ENTRY (gtk_entry_new ());
  self->std_entry = GTK_ENTRY (gtk_entry_new ());
  GtkEntry *custom_entries[] = { self->mean_entry, self->std_entry };
  const char *custom_names[] = { _("Mean"), _("Std") };
  for (int i = 0; i < 2; i++)
    {
      gtk_editable_set_width_chars (GTK_EDITABLE (custom_entries[i]), 8);
      gtk_entry_set_placeholder_text (custom_entries[i], custom_names[i]);
      gtk_editable_set_text (GTK_EDITABLE (custom_entries[i]), i ? "1" : "0");
      gtk_widget_set_tooltip_text (GTK_WIDGET (custom_entries[i]), custom_names[i]);
      gtk_accessible_update_property (GTK_ACCESSIBLE (custom_entries[i]), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      custom_names[i], -1);
      g_signal_connect_swapped (custom_entries[i], "changed", G_CALLBACK (custom_normalization_changed_cb), self);
      gtk_box_append (GTK_BOX (custom_box), GTK_WIDGET (custom_entries[i]));
    }
  self->custom_row = action_row (group, _("Mean and Std"), _("One number, or three separated by commas"), custom_box);
  self->bgr_switch = GTK_SWITCH (gtk_switch_new ());
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->bgr_switch), GTK_ACCESSIBLE_PROPERTY_LABEL, _("BGR"), -1);
  g_signal_connect_swapped (self->bgr_switch, "notify::active", G_CALLBACK (image_options_changed_cb), self);
  self->bgr_row = action_row (group, _("BGR"), _("Channels in BGR order, as OpenCV reads images"),
                              GTK_WIDGET (self->bgr_switch));
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (self->bgr_row), GTK_WIDGET (self->bgr_switch));

  self->samples_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (0, 100000, 1));
  gtk_spin_button_set_value (self->samples_spin, self->max_samples);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->samples_spin), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Samples at Most"), -1);
  g_signal_connect_swapped (self->samples_spin, "value-changed", G_CALLBACK (samples_changed_cb), self);
  action_row (group, _("Samples at Most"), _("Of the folder; 0: all"), GTK_WIDGET (self->samples_spin));

  const char *methods[] = { "MinMax", _("Entropy (KL)"), _("Percentile"), "MSE", NULL };
  /* The library's default method, as `owb quantize` uses it. */
  OwbQuantRangeOptions defaults;
  owb_quant_range_options_init (&defaults);
  self->method_drop = named_drop_down (_("Calibration Method"), methods, defaults.method);
  action_row (group, _("Method"), _("How each activation’s range is chosen; changing it needs no recalibration"),
              GTK_WIDGET (self->method_drop));

  self->per_channel_switch = GTK_SWITCH (gtk_switch_new ());
  gtk_switch_set_active (self->per_channel_switch, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->per_channel_switch), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Per-Channel Weights"), -1);
  GtkWidget *row = action_row (group, _("Per-Channel Weights"), _("A scale per output channel, not per tensor"),
                               GTK_WIDGET (self->per_channel_switch));
  adw_action_row_set_activatable_widget (ADW_ACTION_ROW (row), GTK_WIDGET (self->per_channel_switch));

  const char *types[] = { _("u8 (uint8)"), _("s8 (int8)"), NULL };
  self->activation_drop = named_drop_down (_("Activation Type"), types, 0);
  action_row (group, _("Activation Type"), _("Of the tensors between nodes"), GTK_WIDGET (self->activation_drop));
  const char *weight_types[] = { _("s8 (int8)"), _("u8 (uint8)"), NULL };
  self->weight_drop = named_drop_down (_("Weight Type"), weight_types, 0);
  action_row (group, _("Weight Type"), _("Of the Conv, MatMul and Gemm weights"), GTK_WIDGET (self->weight_drop));

  self->exclude_ops_entry = GTK_ENTRY (gtk_entry_new ());
  gtk_entry_set_placeholder_text (self->exclude_ops_entry, "Softmax, Add");
  gtk_editable_set_width_chars (GTK_EDITABLE (self->exclude_ops_entry), 16);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->exclude_ops_entry), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Exclude Op Types"), -1);
  action_row (group, _("Exclude Op Types"), _("Kept in float; comma-separated"), GTK_WIDGET (self->exclude_ops_entry));

  /* actions */
  GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->quantize_button = named_button (_("_Quantize Model"), _("Quantize Model"));
  gtk_widget_add_css_class (GTK_WIDGET (self->quantize_button), "suggested-action");
  g_signal_connect_swapped (self->quantize_button, "clicked", G_CALLBACK (quantize_clicked_cb), self);
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (self->quantize_button));
  self->cancel_button = named_button (_("_Cancel"), _("Cancel Quantization"));
  g_signal_connect_swapped (self->cancel_button, "clicked", G_CALLBACK (cancel_clicked_cb), self);
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (self->cancel_button));
  self->save_button = named_button (_("_Save As…"), _("Save Quantized Model"));
  gtk_widget_set_hexpand (GTK_WIDGET (self->save_button), TRUE);
  gtk_widget_set_halign (GTK_WIDGET (self->save_button), GTK_ALIGN_END);
  g_signal_connect_swapped (self->save_button, "clicked", G_CALLBACK (save_clicked_cb), self);
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (self->save_button));
  gtk_box_append (GTK_BOX (content), buttons);

  self->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_progress_bar_set_show_text (self->progress, TRUE);
  gtk_progress_bar_set_ellipsize (self->progress, PANGO_ELLIPSIZE_END);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->progress), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Quantizing"), -1);
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (self->progress));

  self->error_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_widget_add_css_class (GTK_WIDGET (self->error_label), "error");
  gtk_label_set_wrap (self->error_label, TRUE);
  gtk_label_set_wrap_mode (self->error_label, PANGO_WRAP_WORD_CHAR);
  gtk_label_set_xalign (self->error_label, 0);
  gtk_label_set_selectable (self->error_label, TRUE);
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (self->error_label));

  /* results */
  self->results_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_box_append (GTK_BOX (content), self->results_box);
  self->summary_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->summary_label, TRUE);
  gtk_label_set_xalign (self->summary_label, 0);
  gtk_label_set_selectable (self->summary_label, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->summary_label), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Quantization Summary"), -1);
  gtk_box_append (GTK_BOX (self->results_box), GTK_WIDGET (self->summary_label));
  gtk_box_append (GTK_BOX (self->results_box), heading (_("Accuracy Comparison")));
  self->comparison_list = named_list (_("Accuracy Comparison"), GTK_SELECTION_NONE);
  gtk_box_append (GTK_BOX (self->results_box), GTK_WIDGET (self->comparison_list));

  GtkWidget *worst_title = heading (_("Worst Tensors"));
  gtk_widget_set_margin_top (worst_title, 6);
  gtk_box_append (GTK_BOX (self->results_box), worst_title);
  self->worst_list = named_list (_("Worst Tensors"), GTK_SELECTION_SINGLE);
  gtk_list_box_set_activate_on_single_click (self->worst_list, FALSE);
  g_signal_connect (self->worst_list, "row-selected", G_CALLBACK (worst_selected_cb), self);
  g_signal_connect (self->worst_list, "row-activated", G_CALLBACK (worst_activated_cb), self);
  gtk_box_append (GTK_BOX (self->results_box), GTK_WIDGET (self->worst_list));
  /* the selected node, float against quantized, with Keep in Float beside it */
  self->detail = OWB_QUANTIZE_DETAIL (owb_quantize_detail_new ());
  gtk_widget_set_margin_top (GTK_WIDGET (self->detail), 6);
  self->keep_button = owb_quantize_detail_get_keep_button (self->detail);
  g_signal_connect_swapped (self->keep_button, "clicked", G_CALLBACK (keep_clicked_cb), self);
  gtk_box_append (GTK_BOX (self->results_box), GTK_WIDGET (self->detail));

  GtkWidget *kept_title = heading (_("Kept in Float"));
  gtk_widget_set_margin_top (kept_title, 6);
  gtk_box_append (GTK_BOX (content), kept_title);
  self->excluded_list = named_list (_("Kept in Float"), GTK_SELECTION_NONE);
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (self->excluded_list));

  GtkWidget *recover_group = adw_preferences_group_new ();
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (recover_group), _("Recover Accuracy"));
  adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (recover_group),
                                         _("Keeps the most harmful nodes in float until every output reaches the "
                                           "target, reusing the calibration"));
  gtk_box_append (GTK_BOX (content), recover_group);
  GtkWidget *recover_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  /* a row of its own: "Genauigkeitsverlust höchstens" beside the value would crowd the row */
  const char *target_kinds[] = { _("SQNR at least"), _("Accuracy drop at most"), NULL };
  self->target_kind_drop = named_drop_down (_("Target Kind"), target_kinds, OWB_QUANTIZE_TARGET_SQNR);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->target_kind_drop),
                               _("The SQNR of every output against float, or the task accuracy against labels.txt"));
  self->target_kind_row = action_row (recover_group, _("Target Kind"), NULL, GTK_WIDGET (self->target_kind_drop));
  self->target_values[0] = 30;
  self->target_values[1] = 1;
  self->target_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (1, 120, 1));
  gtk_spin_button_set_value (self->target_spin, 30);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->target_spin), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Target SQNR (dB)"), -1);
  g_signal_connect_swapped (self->target_spin, "value-changed", G_CALLBACK (target_value_changed_cb), self);
  gtk_box_append (GTK_BOX (recover_box), GTK_WIDGET (self->target_spin));
  self->target_unit_label = GTK_LABEL (gtk_label_new (_("dB")));
  gtk_box_append (GTK_BOX (recover_box), GTK_WIDGET (self->target_unit_label));
  g_signal_connect_swapped (self->target_kind_drop, "notify::selected", G_CALLBACK (target_kind_changed_cb), self);
  action_row (recover_group, _("Target"), _("Every output against float, or accuracy against labels.txt"),
              recover_box);
  self->recover_button = named_button (_("_Recover Accuracy"), _("Recover Accuracy"));
  gtk_widget_set_halign (GTK_WIDGET (self->recover_button), GTK_ALIGN_END);
  g_signal_connect_swapped (self->recover_button, "clicked", G_CALLBACK (recover_clicked_cb), self);
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (self->recover_button));
  self->fallback_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->fallback_label, TRUE);
  gtk_label_set_wrap_mode (self->fallback_label, PANGO_WRAP_WORD_CHAR);
  gtk_label_set_xalign (self->fallback_label, 0);
  gtk_label_set_selectable (self->fallback_label, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->fallback_label), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Recover Accuracy Result"), -1);
  gtk_box_append (GTK_BOX (content), GTK_WIDGET (self->fallback_label));

  /* the map */
  GtkWidget *map_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_size_request (map_box, 240, -1);
  GtkWidget *map_title = heading (_("Sensitivity Map"));
  gtk_widget_set_margin_top (map_title, 6);
  gtk_widget_set_margin_bottom (map_title, 6);
  gtk_widget_set_halign (map_title, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (map_box), map_title);
  self->legend = legend_new ();
  gtk_widget_set_halign (self->legend, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (map_box), self->legend);
  self->quantized_graph_button = GTK_TOGGLE_BUTTON (gtk_toggle_button_new_with_mnemonic (_("Show the _Quantized Graph")));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->quantized_graph_button),
                               _("The model as quantized, with its QuantizeLinear and DequantizeLinear nodes, instead "
                                 "of the float graph coloured by sensitivity"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->quantized_graph_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Show the Quantized Graph"), -1);
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->quantized_graph_button));
  gtk_widget_set_halign (GTK_WIDGET (self->quantized_graph_button), GTK_ALIGN_CENTER);
  gtk_widget_set_margin_top (GTK_WIDGET (self->quantized_graph_button), 4);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self->quantized_graph_button), 4);
  gtk_widget_set_sensitive (GTK_WIDGET (self->quantized_graph_button), FALSE);
  g_signal_connect_swapped (self->quantized_graph_button, "toggled", G_CALLBACK (update_map), self);
  self->graph_page_button = GTK_TOGGLE_BUTTON (gtk_toggle_button_new_with_mnemonic (_("Show on the _Graph Page")));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->graph_page_button),
                               _("Colour the Graph page's nodes by their sensitivity too"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->graph_page_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Show on the Graph Page"), -1);
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->graph_page_button));
  g_signal_connect (self->graph_page_button, "toggled", G_CALLBACK (graph_page_toggled_cb), self);
  GtkWidget *map_buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_halign (map_buttons, GTK_ALIGN_CENTER);
  gtk_widget_set_margin_top (GTK_WIDGET (self->quantized_graph_button), 0);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self->quantized_graph_button), 0);
  gtk_widget_set_margin_top (map_buttons, 4);
  gtk_widget_set_margin_bottom (map_buttons, 4);
  gtk_box_append (GTK_BOX (map_buttons), GTK_WIDGET (self->quantized_graph_button));
  gtk_box_append (GTK_BOX (map_buttons), GTK_WIDGET (self->graph_page_button));
  self->collapse_button = GTK_CHECK_BUTTON (gtk_check_button_new_with_mnemonic (_("_Collapse QDQ Pairs")));
  gtk_check_button_set_active (self->collapse_button, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->collapse_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Collapse QDQ Pairs"), -1);
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->collapse_button));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->collapse_button),
                               _("Hide the QuantizeLinear and DequantizeLinear pairs: each node says what it reads "
                                 "and writes quantized instead (u8 ← / → u8)"));
  g_signal_connect_swapped (self->collapse_button, "toggled", G_CALLBACK (update_map), self);
  gtk_box_append (GTK_BOX (map_box), map_buttons);
  /* in the legend's place while the quantized graph is shown (the legend is hidden then), so the
   * row of buttons above stays as wide as it was in every language */
  gtk_widget_set_halign (GTK_WIDGET (self->collapse_button), GTK_ALIGN_CENTER);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self->collapse_button), 4);
  gtk_box_append (GTK_BOX (map_box), GTK_WIDGET (self->collapse_button));
  self->graph_stack = GTK_STACK (gtk_stack_new ());
  gtk_widget_set_vexpand (GTK_WIDGET (self->graph_stack), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->graph_stack), TRUE);
  GtkWidget *empty = adw_status_page_new ();
  adw_status_page_set_icon_name (ADW_STATUS_PAGE (empty), "applications-science-symbolic");
  adw_status_page_set_title (ADW_STATUS_PAGE (empty), _("Not Quantized Yet"));
  adw_status_page_set_description (ADW_STATUS_PAGE (empty),
                                   _("Press Quantize Model: the float graph appears here, each node coloured by how "
                                     "much quantizing costs its output"));
  gtk_stack_add_named (self->graph_stack, empty, "empty");
  self->graph_view = OWB_GRAPH_VIEW (owb_graph_view_new ());
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->graph_view), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Sensitivity Map"), -1);
  g_signal_connect_swapped (self->graph_view, "selection-changed", G_CALLBACK (view_selection_changed_cb), self);
  gtk_stack_add_named (self->graph_stack, GTK_WIDGET (self->graph_view), "graph");
  gtk_box_append (GTK_BOX (map_box), GTK_WIDGET (self->graph_stack));
  gtk_paned_set_end_child (GTK_PANED (self->paned), map_box);

  show_data_choice (self);
  show_excluded (self);
  show_comparison (self, NULL);
  update_map (self);
  owb_page_set_error_label (OWB_PAGE (self), self->error_label);
  gtk_widget_set_visible (GTK_WIDGET (self->fallback_label), FALSE);
  update_sensitivity (self);
}

static void
owb_quantize_page_dispose (GObject *object)
{
  OwbQuantizePage *self = OWB_QUANTIZE_PAGE (object);
  owb_page_close_file_chooser (&self->chooser);
  g_clear_pointer (&self->paned, gtk_widget_unparent);
  G_OBJECT_CLASS (owb_quantize_page_parent_class)->dispose (object);
}

static void
owb_quantize_page_finalize (GObject *object)
{
  OwbQuantizePage *self = OWB_QUANTIZE_PAGE (object);
  g_clear_pointer (&self->source, owb_model_unref);
  g_clear_pointer (&self->prepared, owb_model_unref);
  g_clear_pointer (&self->calibration, owb_quant_calibration_free);
  g_clear_pointer (&self->quantized, owb_model_unref);
  g_clear_pointer (&self->qdq_display, owb_qdq_display_unref);
  g_clear_pointer (&self->comparison, owb_quant_comparison_free);
  g_clear_pointer (&self->node_sqnr, g_hash_table_unref);
  g_clear_pointer (&self->excluded, g_ptr_array_unref);
  g_free (self->selected_node);
  g_free (self->data_dir);
  g_free (self->accuracy_text);
  g_free (self->labels_message);
  g_strfreev (self->kept_ops);
  G_OBJECT_CLASS (owb_quantize_page_parent_class)->finalize (object);
}

static void
owb_quantize_page_class_init (OwbQuantizePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  OwbPageClass *page_class = OWB_PAGE_CLASS (klass);
  object_class->dispose = owb_quantize_page_dispose;
  object_class->finalize = owb_quantize_page_finalize;
  /* The sensitivity map follows the document's model; a new session of the same model changes nothing. */
  page_class->document_changed = document_changed;
  page_class->prepared_changed = document_changed;
  page_class->update = update;
  gtk_widget_class_set_css_name (widget_class, "quantizepage");
}

GtkWidget *
owb_quantize_page_new (void)
{
  return g_object_new (OWB_TYPE_QUANTIZE_PAGE, NULL);
}

void
owb_quantize_page_set_show_quantized_graph (OwbQuantizePage *self, gboolean show)
{
  gtk_toggle_button_set_active (self->quantized_graph_button, show);
}

void
owb_quantize_page_set_collapse_qdq (OwbQuantizePage *self, gboolean collapse)
{
  g_return_if_fail (OWB_IS_QUANTIZE_PAGE (self));
  gtk_check_button_set_active (self->collapse_button, collapse);
}

gboolean
owb_quantize_page_get_collapse_qdq (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), FALSE);
  return gtk_check_button_get_active (self->collapse_button);
}

OwbQuantizeDetail *
owb_quantize_page_get_detail (OwbQuantizePage *self)
{
  g_return_val_if_fail (OWB_IS_QUANTIZE_PAGE (self), NULL);
  return self->detail;
}
