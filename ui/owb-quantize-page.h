/* owb-quantize-page.h: the Quantize page: calibrate (a sample folder, or seeded random samples),
 * quantize to QDQ INT8 and compare with the float model off the main thread, show the accuracy per
 * output, the worst tensors and the sensitivity map on the float graph; keep nodes in float and
 * re-quantize with the calibration kept, recover accuracy to a target, save the result. */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb-quant.h>
#include "owb-document.h"
#include "owb-graph-view.h"

G_BEGIN_DECLS

#define OWB_TYPE_QUANTIZE_PAGE (owb_quantize_page_get_type ())
G_DECLARE_FINAL_TYPE (OwbQuantizePage, owb_quantize_page, OWB, QUANTIZE_PAGE, GtkWidget)

/* Samples calibrated on when no folder is chosen (seeded, so runs repeat). */
#define OWB_QUANTIZE_RANDOM_SAMPLES 16

GtkWidget *owb_quantize_page_new (void);
void owb_quantize_page_set_document (OwbQuantizePage *self, OwbDocument *document);

/* The calibration folder (the ONNX test-data layout: subfolders of input_K.pb / .npy); NULL: seeded
 * random samples. A change drops the calibration kept. */
void owb_quantize_page_set_calibration_dir (OwbQuantizePage *self, const char *dir);
const char *owb_quantize_page_get_calibration_dir (OwbQuantizePage *self);
/* At most this many samples of the folder (0: all). */
void owb_quantize_page_set_max_samples (OwbQuantizePage *self, guint n);

/* What "Quantize Model" does: prepare, calibrate (unless the calibration is kept), quantize and
 * compare in a worker thread; "busy" (a boolean property) is TRUE until the page shows the result. */
void owb_quantize_page_quantize (OwbQuantizePage *self);
gboolean owb_quantize_page_get_busy (OwbQuantizePage *self);
void owb_quantize_page_cancel (OwbQuantizePage *self);
/* The error the page shows, or NULL. */
const char *owb_quantize_page_get_error (OwbQuantizePage *self);
/* Calibrations run so far (a re-quantization that reuses the calibration adds none). */
guint owb_quantize_page_get_n_calibrations (OwbQuantizePage *self);
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

/* Saves the quantized model (synchronously); refuses the document's input file. */
gboolean owb_quantize_page_save_to (OwbQuantizePage *self, GFile *file, GError **error);

/* The float graph with the sensitivity map. */
OwbGraphView *owb_quantize_page_get_graph_view (OwbQuantizePage *self);
/* The SQNR (dB) the map paints on a node of the float graph; FALSE when it has none. */
gboolean owb_quantize_page_get_node_sqnr (OwbQuantizePage *self, const char *node_name, double *sqnr_db);

/* Signal "node-activated" (const char *node_name, gboolean reveal), as the Profile page's: a worst
 * tensor's row was selected (reveal FALSE) or activated (TRUE). */

G_END_DECLS
