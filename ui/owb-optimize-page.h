/* owb-optimize-page.h: the Optimize page: choose a level, switch passes off, optimize off the main
 * thread, compare the optimized graph with the original (diff per pass, provenance highlighted),
 * save the result (never over the input file). */
#pragma once

#include <gtk/gtk.h>
#include "owb-document.h"

G_BEGIN_DECLS

#define OWB_TYPE_OPTIMIZE_PAGE (owb_optimize_page_get_type ())
G_DECLARE_FINAL_TYPE (OwbOptimizePage, owb_optimize_page, OWB, OPTIMIZE_PAGE, GtkWidget)

GtkWidget *owb_optimize_page_new (void);
void owb_optimize_page_set_document (OwbOptimizePage *self, OwbDocument *document);

G_END_DECLS
