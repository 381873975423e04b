/* owb-page.h: what every document page (Optimize, Run, Profile, Quantize) is: a widget that
 * follows the window's document, runs one piece of work at a time ("busy"), shows its last error,
 * and may point the window at a node or colour the Graph page. Each page keeps only its own logic. */
#pragma once

#include <gtk/gtk.h>
#include "owb-document.h"

G_BEGIN_DECLS

#define OWB_TYPE_PAGE (owb_page_get_type ())
G_DECLARE_DERIVABLE_TYPE (OwbPage, owb_page, OWB, PAGE, GtkWidget)

struct _OwbPageClass
{
  GtkWidgetClass parent_class;

  /* The page holds another document (never called while the page is disposed). */
  void (*document_changed) (OwbPage *self);
  /* The document's prepared session changed (its notify::prepared). */
  void (*prepared_changed) (OwbPage *self);
  /* Brings the page's controls in line with its state; called when the work in flight changes. */
  void (*update) (OwbPage *self);
  /* Whether the page is busy: by default, while it has work in flight. */
  gboolean (*get_busy) (OwbPage *self);
};

/* The document the page follows (borrowed; NULL: none). Setting another one calls
 * document_changed; the page follows its notify::prepared with prepared_changed. */
OwbDocument *owb_page_get_document (OwbPage *self);
void owb_page_set_document (OwbPage *self, OwbDocument *document);

/* The "busy" property (read-only): get_busy, TRUE while work is in flight unless the page says
 * otherwise. */
gboolean owb_page_get_busy (OwbPage *self);
/* The work in flight (borrowed; NULL: idle). A job's callback compares its task's cancellable with
 * it to know whether it is still the page's work. */
GCancellable *owb_page_get_cancellable (OwbPage *self);
/* Makes cancellable (taken; NULL: idle) the work in flight, letting go of the one before; unless
 * the page is being disposed, then calls update and notifies "busy". */
void owb_page_set_busy (OwbPage *self, GCancellable *cancellable);
/* Calls update and notifies "busy" (for a page whose get_busy also counts other work); nothing
 * once the page is being disposed. */
void owb_page_update (OwbPage *self);
/* Cancels the work in flight, if any; its callback still comes and ends it. */
void owb_page_cancel (OwbPage *self);
/* TRUE from the moment the page is disposed: a job's callback that comes later leaves the
 * controls alone. */
gboolean owb_page_get_disposed (OwbPage *self);

/* The page's error label (borrowed, set once at init) and the message it shows: message NULL
 * hides it. get_error returns the message shown (NULL: none). */
void owb_page_set_error_label (OwbPage *self, GtkLabel *label);
void owb_page_show_error (OwbPage *self, const char *message);
const char *owb_page_get_error (OwbPage *self);

/* Emits "node-activated" (name, reveal): the window selects the node in the graph and the
 * inspector; reveal shows the Graph page. */
void owb_page_activate_node (OwbPage *self, const char *name, gboolean reveal);
/* Emits "show-layer" (an OwbGraphLayer *, or NULL): what the Graph page colours its nodes by. */
void owb_page_show_layer (OwbPage *self, gpointer layer);

G_END_DECLS
