/* owb-optimize-page.h: the Optimize page: choose a level, switch passes off, optimize off the main
 * thread, compare the optimized graph with the original (diff per pass, provenance highlighted),
 * save the result (never over the input file). */
#pragma once

#include <gtk/gtk.h>
#include "owb-page.h"

G_BEGIN_DECLS

#define OWB_TYPE_OPTIMIZE_PAGE (owb_optimize_page_get_type ())
G_DECLARE_FINAL_TYPE (OwbOptimizePage, owb_optimize_page, OWB, OPTIMIZE_PAGE, OwbPage)

GtkWidget *owb_optimize_page_new (void);

/* What the Optimize button does: optimizes a copy of the document's model in a worker thread;
 * "busy" (a boolean property) is TRUE until the page shows the result. */
void owb_optimize_page_run (OwbOptimizePage *self);
/* Saves the optimized model (synchronously); refuses the document's input file. */
gboolean owb_optimize_page_save_to (OwbOptimizePage *self, GFile *file, GError **error);

void owb_optimize_page_set_level (OwbOptimizePage *self, OwbOptimizeLevel level);
/* The last result (borrowed; NULL before the first run). */
const OwbOptimizeReport *owb_optimize_page_get_report (OwbOptimizePage *self);
OwbModel *owb_optimize_page_get_optimized_model (OwbOptimizePage *self);
/* The original node names a node of the optimized graph replaced, following chains of passes;
 * NULL when no pass created it. */
char **owb_optimize_page_dup_origins (OwbOptimizePage *self, const char *node_name);

G_END_DECLS
