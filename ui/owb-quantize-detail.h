/* owb-quantize-detail.h: the Quantize page's node detail. For the node selected in the sensitivity
 * map or in Worst Tensors: its output's float and quantized statistics (min, max, mean, std), SQNR,
 * cosine and largest error, a histogram of the error (quantized − float), the scale and zero point
 * of the QuantizeLinear that quantizes it and of its quantized weights, and Keep in Float.
 * Accessible name "Node Detail". */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb-quant.h>
#include "owb-histogram.h"

G_BEGIN_DECLS

#define OWB_TYPE_QUANTIZE_DETAIL (owb_quantize_detail_get_type ())
G_DECLARE_FINAL_TYPE (OwbQuantizeDetail, owb_quantize_detail, OWB, QUANTIZE_DETAIL, GtkWidget)

GtkWidget *owb_quantize_detail_new (void);

/* Shows `node` (a node of the float graph, by name) from `comparison` and the `quantized` model it
 * compared (both borrowed for the call only); kept_in_float: the result keeps it in float. A NULL
 * node (or no comparison) shows what to do instead. */
void owb_quantize_detail_show (OwbQuantizeDetail *self, const char *node, const OwbModel *float_model,
                               const OwbQuantComparison *comparison, const OwbModel *quantized,
                               gboolean kept_in_float);

/* The Keep in Float button (borrowed): the page connects it and sets its sensitivity. */
GtkButton *owb_quantize_detail_get_keep_button (OwbQuantizeDetail *self);

/* What is shown, for tests and the accessibility tree: the tensor compared ("" for none); the
 * statistics, one line per row ("Float: min …"); the quantization lines; the error histogram. */
const char *owb_quantize_detail_get_tensor (OwbQuantizeDetail *self);
const char *owb_quantize_detail_get_statistics_text (OwbQuantizeDetail *self);
const char *owb_quantize_detail_get_quantization_text (OwbQuantizeDetail *self);
OwbHistogram *owb_quantize_detail_get_histogram (OwbQuantizeDetail *self);

G_END_DECLS
