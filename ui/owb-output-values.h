/* owb-output-values.h: one output of a run on the Run page: its values a page at a time, export
 * as .npy or .pb, and a comparison with a reference file at rtol/atol as `owb check` makes it
 * (owb_tensor_compare), with the largest absolute and relative errors. File work runs as a job of
 * the run's document; the boolean property "busy" is TRUE meanwhile. */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb.h>
#include "owb-document.h"

G_BEGIN_DECLS

#define OWB_TYPE_OUTPUT_VALUES (owb_output_values_get_type ())
G_DECLARE_FINAL_TYPE (OwbOutputValues, owb_output_values, OWB, OUTPUT_VALUES, GtkWidget)

/* An output of a run of document's model: the tensor is referenced; name is the output's (saved in
 * .pb files, and in accessible names). Export refuses to write over the document's model or its
 * external data (owb_page_check_save_target). */
GtkWidget *owb_output_values_new (OwbDocument *document, OwbTensor *tensor, const char *name);
/* What Export… does once a file is chosen: .npy by that extension, TensorProto .pb otherwise,
 * written to a temporary file and renamed. */
void owb_output_values_export (OwbOutputValues *self, GFile *file);
/* What Compare with Reference… does once a file (.pb or .npy) is chosen, at the tolerance in the
 * page's rtol and atol fields. */
void owb_output_values_compare (OwbOutputValues *self, GFile *file);
void owb_output_values_set_tolerance (OwbOutputValues *self, double rtol, double atol);
gboolean owb_output_values_get_busy (OwbOutputValues *self);
/* The last export's or comparison's outcome as shown ("Saved …", "Passed …", an error), or NULL. */
const char *owb_output_values_get_status (OwbOutputValues *self);
/* TRUE once a comparison finished with the reference read: *passed and *comparison say how it went. */
gboolean owb_output_values_get_comparison (OwbOutputValues *self, gboolean *passed, OwbTensorComparison *comparison);

G_END_DECLS
