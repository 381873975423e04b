/* owb-welcome-page.h: the page of a window without a model: open one, the sample, or a recent one. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define OWB_TYPE_WELCOME_PAGE (owb_welcome_page_get_type ())
G_DECLARE_FINAL_TYPE (OwbWelcomePage, owb_welcome_page, OWB, WELCOME_PAGE, GtkWidget)

GtkWidget *owb_welcome_page_new (void);

/* The recently used ONNX models (GtkRecentInfo *, referenced), newest first, at most `max`. Also
 * used by the window's recent menu. */
GPtrArray *owb_welcome_page_dup_recent_models (guint max);

G_END_DECLS
