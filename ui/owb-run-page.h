/* owb-run-page.h: the Run page: run the model once on random inputs, typed scalars or tensor files
 * (.pb, .npy), off the main thread, and show each output's shape, statistics, values (exported,
 * or compared with a reference file) and, for classifier-like outputs, the top 5; on request the
 * run keeps every intermediate value for the inspector. */
#pragma once

#include <gtk/gtk.h>
#include "owb-page.h"
#include "owb-output-values.h"
#include <owb/owb-tensor-stats.h>

G_BEGIN_DECLS

#define OWB_TYPE_RUN_PAGE (owb_run_page_get_type ())
G_DECLARE_FINAL_TYPE (OwbRunPage, owb_run_page, OWB, RUN_PAGE, OwbPage)

GtkWidget *owb_run_page_new (void);

/* What the Run button does: one run in a worker thread; "busy" (a boolean property) is TRUE until
 * the page shows the outputs or the error. */
void owb_run_page_run (OwbRunPage *self);
/* What "Choose File…" does once a file is chosen: loads it in a worker thread ("busy" meanwhile)
 * and checks it against the input's type. file NULL goes back to random values. */
void owb_run_page_set_input_file (OwbRunPage *self, const char *input_name, GFile *file);

/* The last run's outputs (borrowed) and the statistics the page shows for them. */
guint owb_run_page_get_n_outputs (OwbRunPage *self);
const OwbTensor *owb_run_page_get_output (OwbRunPage *self, guint index);
gboolean owb_run_page_get_output_stats (OwbRunPage *self, guint index, OwbTensorStats *stats);
/* The values list, export and comparison of output index (NULL for an output that is no tensor). */
OwbOutputValues *owb_run_page_get_output_values (OwbRunPage *self, guint index);
/* What typing in a scalar input's entry does: its value for the next runs ("" or NULL: random). */
void owb_run_page_set_input_value (OwbRunPage *self, const char *input_name, const char *text);
/* What the Keep Intermediate Values switch does: the next runs keep every value of the main graph
 * (inputs and every node's outputs). */
void owb_run_page_set_keep_values (OwbRunPage *self, gboolean keep);
/* A value of the last run (borrowed): any value it kept, else a graph output; NULL when graph is
 * not the graph of the session it ran. "run-values-changed" is emitted when these come or go. */
OwbTensor *owb_run_page_get_run_value (OwbRunPage *self, const OwbGraph *graph, const char *name);
/* The error the page shows (a failed run, an unusable file, the model that cannot run), or NULL. */
const char *owb_run_page_get_error (OwbRunPage *self);

G_END_DECLS
