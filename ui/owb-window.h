/* owb-window.h: a workbench window: the welcome page, then one model (graph, inspector, pages). */
#pragma once

#include <adwaita.h>
#include "owb-document.h"

G_BEGIN_DECLS

#define OWB_TYPE_WINDOW (owb_window_get_type ())
G_DECLARE_FINAL_TYPE (OwbWindow, owb_window, OWB, WINDOW, AdwApplicationWindow)

OwbWindow *owb_window_new (GtkApplication *application);

/* Opens `file` in this window, or in a new window of the same application when this one already
 * shows (or is loading) a model. Returns the window that opens it (borrowed). */
OwbWindow *owb_window_open_file (OwbWindow *self, GFile *file);

/* The document shown, NULL on the welcome, loading and error pages (borrowed). */
OwbDocument *owb_window_get_document (OwbWindow *self);

G_END_DECLS
