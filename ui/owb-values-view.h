/* owb-values-view.h: a tensor's values a page at a time, each with its flat index and its
 * coordinates, with Previous / Next and a jump to any element: only one page is ever formatted,
 * so an output of millions of elements shows as fast as one of ten. */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb.h>

G_BEGIN_DECLS

#define OWB_VALUES_VIEW_PAGE_SIZE 20

#define OWB_TYPE_VALUES_VIEW (owb_values_view_get_type ())
G_DECLARE_FINAL_TYPE (OwbValuesView, owb_values_view, OWB, VALUES_VIEW, GtkWidget)

/* name is the value's name, for the controls' accessible names; n_columns 1 (a narrow panel) or
 * 2. The tensor is referenced. */
GtkWidget *owb_values_view_new (OwbTensor *tensor, const char *name, guint n_columns);
/* Shows the page that holds element `index` (clamped to the tensor). */
void owb_values_view_show_element (OwbValuesView *self, int64_t index);
/* The flat index of the first element on show. */
int64_t owb_values_view_get_first (OwbValuesView *self);
/* "[0, 2, 1]: 0.25" style text of element i, as the view shows it (for tests and copying). */
char *owb_values_view_format_element (const OwbTensor *tensor, int64_t i);

G_END_DECLS
