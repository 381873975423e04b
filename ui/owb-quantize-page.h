/* owb-quantize-page.h: the Quantize page: calibrate (a sample folder, an image folder, or seeded
 * random samples), quantize to QDQ INT8 and compare with the float model off the main thread, show
 * the accuracy per output, the worst tensors and the sensitivity map on the float graph; keep nodes
 * in float and re-quantize with the calibration kept, recover accuracy to a target, save the
 * result. The settings are remembered per model file. */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb-quant.h>
#include "owb-page.h"
#include "owb-graph-view.h"
#include "owb-quantize-settings.h"
#include "owb-quantize-detail.h"

G_BEGIN_DECLS

#define OWB_TYPE_QUANTIZE_PAGE (owb_quantize_page_get_type ())
G_DECLARE_FINAL_TYPE (OwbQuantizePage, owb_quantize_page, OWB, QUANTIZE_PAGE, OwbPage)

/* Samples calibrated on when no folder is chosen (seeded, so runs repeat). */
#define OWB_QUANTIZE_RANDOM_SAMPLES 16

GtkWidget *owb_quantize_page_new (void);

/* The calibration folder (the ONNX test-data layout: subfolders of input_K.pb / .npy, or a folder
 * of images); NULL: seeded random samples. A labels.txt in it (one line per sample) gives the
 * comparison's task accuracy. A change drops the calibration kept. */
void owb_quantize_page_set_calibration_dir (OwbQuantizePage *self, const char *dir);
const char *owb_quantize_page_get_calibration_dir (OwbQuantizePage *self);
/* At most this many samples of the folder (0: all). */
void owb_quantize_page_set_max_samples (OwbQuantizePage *self, guint n);
guint owb_quantize_page_get_max_samples (OwbQuantizePage *self);
/* Whether the calibration folder is read as an image folder: image files (PNG, JPEG, BMP, PNM)
 * and no sample subfolders. Each image is resized to the model input's size and layout, scaled to
 * [0, 1], then normalized: (x - mean) / std per channel. */
gboolean owb_quantize_page_get_calibration_images (OwbQuantizePage *self);
void owb_quantize_page_set_normalization (OwbQuantizePage *self, OwbQuantizeNormalization normalization);
OwbQuantizeNormalization owb_quantize_page_get_normalization (OwbQuantizePage *self);
/* The custom normalization's mean and std as typed: one number, or three separated by commas. */
void owb_quantize_page_set_custom_normalization (OwbQuantizePage *self, const char *mean, const char *std);
void owb_quantize_page_set_bgr (OwbQuantizePage *self, gboolean bgr);
gboolean owb_quantize_page_get_bgr (OwbQuantizePage *self);

/* The settings (the widgets' values). */
void owb_quantize_page_set_method (OwbQuantizePage *self, OwbQuantMethod method);
OwbQuantMethod owb_quantize_page_get_method (OwbQuantizePage *self);
void owb_quantize_page_set_per_channel (OwbQuantizePage *self, gboolean per_channel);
gboolean owb_quantize_page_get_per_channel (OwbQuantizePage *self);
/* OWB_TYPE_UINT8 or OWB_TYPE_INT8. */
void owb_quantize_page_set_activation_type (OwbQuantizePage *self, OwbDataType type);
OwbDataType owb_quantize_page_get_activation_type (OwbQuantizePage *self);
void owb_quantize_page_set_weight_type (OwbQuantizePage *self, OwbDataType type);
OwbDataType owb_quantize_page_get_weight_type (OwbQuantizePage *self);
/* Op types kept in float, comma-separated ("Softmax, Add"); the entry's text (borrowed). */
void owb_quantize_page_set_exclude_ops (OwbQuantizePage *self, const char *op_types);
const char *owb_quantize_page_get_exclude_ops (OwbQuantizePage *self);

/* The settings are saved per model file (owb-quantize-settings.h) after each successful
 * quantization, and restored when the page gets a document of that file. */

/* What "Quantize Model" does: prepare, calibrate (unless the calibration is kept), quantize and
 * compare in a worker thread; "busy" (a boolean property) is TRUE until the page shows the result. */
void owb_quantize_page_quantize (OwbQuantizePage *self);
/* Calibrations run so far (a re-quantization that reuses the calibration adds none). */
guint owb_quantize_page_get_n_calibrations (OwbQuantizePage *self);
/* The results' first line: the settings and the data used ("128 images from DIR, ImageNet
 * normalization"); borrowed, "" before a result. */
const char *owb_quantize_page_get_summary (OwbQuantizePage *self);
/* With a labels.txt in the calibration folder: "Accuracy: float X, quantized Y …" as the Accuracy
 * Comparison shows it, or NULL; and why the labels were not used (a line count that does not match
 * the samples), or NULL. */
const char *owb_quantize_page_get_accuracy_text (OwbQuantizePage *self);
const char *owb_quantize_page_get_labels_message (OwbQuantizePage *self);
/* Seconds from the start of the last job to its result. */
double owb_quantize_page_get_last_seconds (OwbQuantizePage *self);

/* The last result (borrowed; NULL before the first). */
const OwbQuantComparison *owb_quantize_page_get_comparison (OwbQuantizePage *self);
OwbModel *owb_quantize_page_get_quantized_model (OwbQuantizePage *self);
guint owb_quantize_page_get_n_comparison_rows (OwbQuantizePage *self);
guint owb_quantize_page_get_n_worst_rows (OwbQuantizePage *self);

/* Selects row `index` of Worst Tensors (its node is selected in the graphs: "node-activated"). */
void owb_quantize_page_select_worst (OwbQuantizePage *self, guint index);
/* The node Keep in Float would exclude, or NULL. */
const char *owb_quantize_page_get_selected_node (OwbQuantizePage *self);
/* What "Keep in Float" does: excludes the selected node and re-quantizes with the calibration kept. */
void owb_quantize_page_keep_selected_in_float (OwbQuantizePage *self);
/* Quantizes that node again (drops it from the excluded nodes) and re-quantizes. */
void owb_quantize_page_remove_excluded (OwbQuantizePage *self, const char *node_name);
/* The nodes kept in float, NULL-terminated (borrowed). */
const char *const *owb_quantize_page_get_excluded (OwbQuantizePage *self);
/* What "Recover Accuracy" does: the accuracy-aware fallback to target_sqnr_db on every output. */
void owb_quantize_page_recover_accuracy (OwbQuantizePage *self, double target_sqnr_db);
/* The same to an accuracy drop against labels.txt: float accuracy minus quantized accuracy at most
 * max_drop_percent points. Needs a labels.txt in the calibration folder (the page says so otherwise). */
void owb_quantize_page_recover_accuracy_drop (OwbQuantizePage *self, double max_drop_percent);
/* Whether the calibration folder has a labels.txt (the accuracy-drop target is offered only then). */
gboolean owb_quantize_page_get_has_labels (OwbQuantizePage *self);
typedef enum {
  OWB_QUANTIZE_TARGET_SQNR = 0,          /* "SQNR at least X dB" */
  OWB_QUANTIZE_TARGET_ACCURACY_DROP = 1, /* "accuracy drop at most Y %" */
} OwbQuantizeTarget;
/* Sets Recover Accuracy's target as the user would (kind and value); FALSE for an accuracy drop
 * without labels. */
gboolean owb_quantize_page_set_recover_target (OwbQuantizePage *self, OwbQuantizeTarget kind, double value);
/* What the Recover Accuracy button does: the fallback to the target set. */
void owb_quantize_page_recover (OwbQuantizePage *self);
/* What the last Recover Accuracy found (the nodes kept and why), or NULL. */
const char *owb_quantize_page_get_fallback_text (OwbQuantizePage *self);

/* Saves the quantized model (synchronously); refuses the document's input file. */
gboolean owb_quantize_page_save_to (OwbQuantizePage *self, GFile *file, GError **error);

/* The float graph with the sensitivity map. */
OwbGraphView *owb_quantize_page_get_graph_view (OwbQuantizePage *self);
/* The SQNR (dB) the map paints on a node of the float graph; FALSE when it has none. */
gboolean owb_quantize_page_get_node_sqnr (OwbQuantizePage *self, const char *node_name, double *sqnr_db);

/* Signal "node-activated" (const char *node_name, gboolean reveal), as the Profile page's: a worst
 * tensor's row was selected (reveal FALSE) or activated (TRUE). */

/* "Show the Quantized Graph": the map shows the quantized model (its QDQ nodes grey, badged with
 * their integer type) instead of the float graph coloured by sensitivity. */
void owb_quantize_page_set_show_quantized_graph (OwbQuantizePage *self, gboolean show);
/* "Collapse QDQ Pairs" (default on): the quantized graph without its QuantizeLinear /
 * DequantizeLinear pairs, each node badged with what it reads and writes quantized ("u8 ← / → u8"),
 * from a display copy (owb-qdq-display.h); off: the pairs as nodes. */
void owb_quantize_page_set_collapse_qdq (OwbQuantizePage *self, gboolean collapse);
gboolean owb_quantize_page_get_collapse_qdq (OwbQuantizePage *self);
/* The node detail of the selected node (owb-quantize-detail.h), borrowed. */
OwbQuantizeDetail *owb_quantize_page_get_detail (OwbQuantizePage *self);
/* "Show on the Graph Page": the sensitivity layer handed to the window ("show-layer" signal) to
 * colour the Graph page too, again after each quantization; NULL when switched off. */
void owb_quantize_page_set_show_on_graph_page (OwbQuantizePage *self, gboolean show);

G_END_DECLS
