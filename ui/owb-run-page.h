/* owb-run-page.h: the Run page: run the model once on random inputs or tensor files (.pb, .npy),
 * off the main thread, and show each output's shape, statistics and, for classifier-like
 * outputs, the top 5. */
#pragma once

#include <gtk/gtk.h>
#include "owb-document.h"

G_BEGIN_DECLS

#define OWB_TYPE_RUN_PAGE (owb_run_page_get_type ())
G_DECLARE_FINAL_TYPE (OwbRunPage, owb_run_page, OWB, RUN_PAGE, GtkWidget)

GtkWidget *owb_run_page_new (void);
void owb_run_page_set_document (OwbRunPage *self, OwbDocument *document);

G_END_DECLS
