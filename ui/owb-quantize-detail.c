/* owb-quantize-detail.c: the node detail of the Quantize page (see the header). Everything shown
 * comes from the library: the statistics and the error histogram are streamed by owb_quant_compare
 * over every sample, the scales and zero points are read from the quantized model by
 * owb_quant_find_qdq_params; the histogram is the inspector's widget. */
#include "owb-quantize-detail.h"
#include "owb-page-util.h"
#include "owb-qdq-display.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

struct _OwbQuantizeDetail
{
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkLabel *title_label;       /* node, op and output tensor, or what to do */
  GtkWidget *stats_grid;
  GtkLabel *cells[2][4];       /* float / quantized × min, max, mean, std */
  GtkLabel *metrics_label;     /* SQNR, cosine, max error */
  GtkWidget *histogram_title;
  OwbHistogram *histogram;
  GtkLabel *quantization_label;
  GtkButton *keep_button;

  char *tensor;
  char *statistics_text;
  char *quantization_text;
};

G_DEFINE_FINAL_TYPE (OwbQuantizeDetail, owb_quantize_detail, GTK_TYPE_WIDGET)

static char *
format_value (double v)
{
  return isnan (v) ? g_strdup ("–") : g_strdup_printf ("%.4g", v);
}

/* "u8, scale 0.0123, zero point 128" or "s8 per channel (axis 0): 64 scales 0.0012 – 0.0087, zero
 * point 0". */
static char *
format_params (const OwbQuantQdqParams *p)
{
  g_autofree char *zp = p->zero_point_min == p->zero_point_max
                          ? g_strdup_printf ("%" G_GINT64_FORMAT, p->zero_point_min)
                          : g_strdup_printf ("%" G_GINT64_FORMAT " – %" G_GINT64_FORMAT, p->zero_point_min,
                                             p->zero_point_max);
  if (p->axis < 0)
    return g_strdup_printf (_("%s, scale %.4g, zero point %s"), owb_qdq_display_short_type (p->type), p->scale_min, zp);
  return g_strdup_printf (ngettext ("%s per channel (axis %d): %u scale %.4g – %.4g, zero point %s",
                                    "%s per channel (axis %d): %u scales %.4g – %.4g, zero point %s", p->n_scales),
                          owb_qdq_display_short_type (p->type), p->axis, p->n_scales, p->scale_min, p->scale_max, zp);
}

/* Whether `name` is a DequantizeLinear's output in `model`. */
static gboolean
is_dequantized (const OwbModel *model, const char *name)
{
  for (guint i = 0; i < model->graph->nodes->len; i++)
    {
      const OwbNode *n = g_ptr_array_index (model->graph->nodes, i);
      if (strcmp (n->op_type, "DequantizeLinear") == 0 && g_strcmp0 (owb_node_get_output (n, 0), name) == 0)
        return TRUE;
    }
  return FALSE;
}

/* The worst compared output of `node` (the one the map colours it by). */
static const OwbQuantTensorDiff *
worst_output (const OwbQuantComparison *c, const char *node)
{
  const OwbQuantTensorDiff *worst = NULL;
  for (guint i = 0; c && i < c->tensors->len; i++)
    {
      const OwbQuantTensorDiff *d = g_ptr_array_index (c->tensors, i);
      if (d->count > 0 && g_strcmp0 (d->node, node) == 0 && (!worst || d->sqnr_db < worst->sqnr_db))
        worst = d;
    }
  return worst;
}

static void
set_statistics (OwbQuantizeDetail *self, const OwbQuantTensorDiff *d)
{
  double v[2][4] = { { d ? d->min_a : NAN, d ? d->max_a : NAN, d ? d->mean_a : NAN, d ? d->std_a : NAN },
                     { d ? d->min_b : NAN, d ? d->max_b : NAN, d ? d->mean_b : NAN, d ? d->std_b : NAN } };
  g_autoptr (GString) text = g_string_new (NULL);
  const char *rows[] = { _("Float"), _("Quantized") };
  for (int r = 0; r < 2; r++)
    {
      g_string_append_printf (text, "%s%s:", r ? "\n" : "", rows[r]);
      for (int c = 0; c < 4; c++)
        {
          g_autofree char *s = format_value (v[r][c]);
          gtk_label_set_text (self->cells[r][c], s);
          static const char *keys[] = { "min", "max", "mean", "std" };
          g_string_append_printf (text, " %s %s", keys[c], s);
        }
    }
  g_free (self->statistics_text);
  self->statistics_text = d ? g_strdup (text->str) : g_strdup ("");
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->stats_grid), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                  self->statistics_text, -1);
}

void
owb_quantize_detail_show (OwbQuantizeDetail *self, const char *node_name, const OwbModel *float_model,
                          const OwbQuantComparison *comparison, const OwbModel *quantized, gboolean kept_in_float)
{
  g_return_if_fail (OWB_IS_QUANTIZE_DETAIL (self));
  const OwbQuantTensorDiff *d = node_name ? worst_output (comparison, node_name) : NULL;
  const OwbNode *node = owb_graph_find_node (float_model ? float_model->graph : NULL, node_name);
  g_free (self->tensor);
  self->tensor = g_strdup (d ? d->name : "");

  g_autofree char *title = NULL;
  if (!node_name || !comparison)
    title = g_strdup (_("Select a node in the map or in Worst Tensors to see its output float against quantized"));
  else if (!d)
    title = g_strdup_printf (_("%s (%s): no float output of it was compared"), node_name,
                             node ? node->op_type : "?");
  else
    title = g_strdup_printf (_("%s (%s), output %s"), node_name, d->op_type, d->name);
  gtk_label_set_text (self->title_label, title);

  gboolean shown = d != NULL;
  gtk_widget_set_visible (self->stats_grid, shown);
  gtk_widget_set_visible (GTK_WIDGET (self->metrics_label), shown);
  gtk_widget_set_visible (self->histogram_title, shown && d->n_error_bins > 0);
  gtk_widget_set_visible (GTK_WIDGET (self->histogram), shown && d->n_error_bins > 0);
  gtk_widget_set_visible (GTK_WIDGET (self->quantization_label), node_name && comparison);
  set_statistics (self, d);
  if (d)
    {
      g_autofree char *sqnr = isinf (d->sqnr_db) && d->sqnr_db > 0 ? g_strdup (_("exact"))
                                                                    : g_strdup_printf (_("%.1f dB"), d->sqnr_db);
      g_autofree char *metrics = g_strdup_printf (_("SQNR %s · cosine %.5f · max error %.4g"), sqnr, d->cosine,
                                                  d->max_abs);
      gtk_label_set_text (self->metrics_label, metrics);
      owb_histogram_set_bins (self->histogram, d->error_bins, d->n_error_bins, d->error_lo, d->error_hi);
    }
  else
    owb_histogram_set_bins (self->histogram, NULL, 0, 0, 0);

  /* how its output is quantized, and its weights */
  g_autoptr (GString) q = g_string_new (NULL);
  if (kept_in_float)
    g_string_append (q, _("Kept in float: it reads and computes float values"));
  else if (d && quantized)
    {
      OwbQuantQdqParams p;
      gboolean found = owb_quant_find_qdq_params (quantized, d->matched, &p, NULL)
                       || owb_quant_find_qdq_params (quantized, d->name, &p, NULL);
      if (found)
        {
          g_autofree char *params = format_params (&p);
          g_string_append_printf (q, _("QuantizeLinear %s: %s"), p.quantize_node ? p.quantize_node : d->matched,
                                  params);
          owb_quant_qdq_params_clear (&p);
        }
      else
        g_string_append (q, _("Its output is not quantized: its readers take it in float"));
    }
  const OwbNode *qnode
    = quantized && node_name && !kept_in_float ? owb_graph_find_node (quantized->graph, node_name) : NULL;
  /* what it reads quantized: activations (their error comes in with them) and weights */
  for (int i = 0; qnode && i < qnode->n_inputs; i++)
    {
      const char *in = owb_node_get_input (qnode, i);
      OwbQuantQdqParams p;
      /* only a DequantizeLinear's output: a float input a QuantizeLinear also reads is read float */
      if (!in || !is_dequantized (quantized, in) || !owb_quant_find_qdq_params (quantized, in, &p, NULL))
        continue;
      g_autofree char *params = format_params (&p);
      const char *float_name = node && i < node->n_inputs ? node->inputs[i] : in;
      if (q->len)
        g_string_append_c (q, '\n');
      g_string_append_printf (q, _("Input %d (%s): %s"), i, float_name, params);
      owb_quant_qdq_params_clear (&p);
    }
  g_free (self->quantization_text);
  self->quantization_text = g_strdup (q->str);
  gtk_label_set_text (self->quantization_label, q->str);
}

GtkButton *
owb_quantize_detail_get_keep_button (OwbQuantizeDetail *self)
{
  return self->keep_button;
}

const char *
owb_quantize_detail_get_tensor (OwbQuantizeDetail *self)
{
  return self->tensor ? self->tensor : "";
}

const char *
owb_quantize_detail_get_statistics_text (OwbQuantizeDetail *self)
{
  return self->statistics_text ? self->statistics_text : "";
}

const char *
owb_quantize_detail_get_quantization_text (OwbQuantizeDetail *self)
{
  return self->quantization_text ? self->quantization_text : "";
}

OwbHistogram *
owb_quantize_detail_get_histogram (OwbQuantizeDetail *self)
{
  return self->histogram;
}

static GtkLabel *
grid_label (GtkWidget *grid, const char *text, int column, int row, gboolean dim)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), column == 0 ? 0 : 1);
  gtk_widget_set_hexpand (label, column > 0);
  if (column > 0)
    gtk_widget_add_css_class (label, "numeric");
  if (dim)
    gtk_widget_add_css_class (label, "dim-label");
  gtk_grid_attach (GTK_GRID (grid), label, column, row, 1, 1);
  return GTK_LABEL (label);
}

static GtkLabel *
wrapped_label (const char *name)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_selectable (GTK_LABEL (label), TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (label), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  return GTK_LABEL (label);
}

static void
owb_quantize_detail_init (OwbQuantizeDetail *self)
{
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));

  GtkWidget *head = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *heading = gtk_label_new (_("Node Detail"));
  gtk_widget_add_css_class (heading, "heading");
  gtk_label_set_xalign (GTK_LABEL (heading), 0);
  gtk_label_set_wrap (GTK_LABEL (heading), TRUE);
  gtk_widget_set_hexpand (heading, TRUE);
  gtk_box_append (GTK_BOX (head), heading);
  self->keep_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Keep in Float")));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->keep_button), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Keep in Float"), -1);
  owb_page_keep_own_accessible_name (GTK_WIDGET (self->keep_button));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->keep_button),
                               _("Keep the selected node in float and quantize again with the same calibration"));
  gtk_widget_set_valign (GTK_WIDGET (self->keep_button), GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (head), GTK_WIDGET (self->keep_button));
  gtk_box_append (GTK_BOX (self->box), head);

  self->title_label = wrapped_label (_("Selected Node"));
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->title_label));

  /* float and quantized side by side, so the shift of the mean or the clipped range shows */
  self->stats_grid = gtk_grid_new ();
  gtk_grid_set_column_spacing (GTK_GRID (self->stats_grid), 12);
  gtk_grid_set_row_spacing (GTK_GRID (self->stats_grid), 2);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->stats_grid), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Float and Quantized Statistics"), -1);
  const char *columns[] = { _("Min"), _("Max"), _("Mean"), _("Std") };
  for (int c = 0; c < 4; c++)
    grid_label (self->stats_grid, columns[c], c + 1, 0, TRUE);
  const char *rows[] = { _("Float"), _("Quantized") };
  for (int r = 0; r < 2; r++)
    {
      grid_label (self->stats_grid, rows[r], 0, r + 1, TRUE);
      for (int c = 0; c < 4; c++)
        self->cells[r][c] = grid_label (self->stats_grid, "–", c + 1, r + 1, FALSE);
    }
  gtk_box_append (GTK_BOX (self->box), self->stats_grid);

  self->metrics_label = wrapped_label (_("Output Error"));
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->metrics_label));

  self->histogram_title = gtk_label_new (_("Error (quantized − float), every sample"));
  gtk_widget_add_css_class (self->histogram_title, "dim-label");
  gtk_label_set_xalign (GTK_LABEL (self->histogram_title), 0);
  gtk_label_set_wrap (GTK_LABEL (self->histogram_title), TRUE);
  gtk_box_append (GTK_BOX (self->box), self->histogram_title);
  self->histogram = OWB_HISTOGRAM (owb_histogram_new ());
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->histogram), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Error Histogram"), -1);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->histogram));

  self->quantization_label = wrapped_label (_("Scale and Zero Point"));
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->quantization_label));

  owb_quantize_detail_show (self, NULL, NULL, NULL, NULL, FALSE);
}

static void
owb_quantize_detail_dispose (GObject *object)
{
  OwbQuantizeDetail *self = OWB_QUANTIZE_DETAIL (object);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (owb_quantize_detail_parent_class)->dispose (object);
}

static void
owb_quantize_detail_finalize (GObject *object)
{
  OwbQuantizeDetail *self = OWB_QUANTIZE_DETAIL (object);
  g_free (self->tensor);
  g_free (self->statistics_text);
  g_free (self->quantization_text);
  G_OBJECT_CLASS (owb_quantize_detail_parent_class)->finalize (object);
}

static void
owb_quantize_detail_class_init (OwbQuantizeDetailClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = owb_quantize_detail_dispose;
  object_class->finalize = owb_quantize_detail_finalize;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "quantizedetail");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

GtkWidget *
owb_quantize_detail_new (void)
{
  GtkWidget *detail = g_object_new (OWB_TYPE_QUANTIZE_DETAIL, NULL);
  gtk_accessible_update_property (GTK_ACCESSIBLE (detail), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Node Detail"), -1);
  return detail;
}
