/* owb-histogram.h: a bar chart of a tensor's value distribution (bins over [min, max]), drawn with
 * GtkSnapshot, with the range written under the bars. Accessible name "Histogram". */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define OWB_TYPE_HISTOGRAM (owb_histogram_get_type ())
G_DECLARE_FINAL_TYPE (OwbHistogram, owb_histogram, OWB, HISTOGRAM, GtkWidget)

GtkWidget *owb_histogram_new (void);

/* Copies n_bins counts; the bins cover [min, max] in equal widths. n_bins 0 clears the chart. */
void owb_histogram_set_bins (OwbHistogram *self, const guint64 *bins, guint n_bins, double min, double max);
/* Borrowed counts and their number, for tests and tooltips. */
const guint64 *owb_histogram_get_bins (OwbHistogram *self, guint *n_bins);

G_END_DECLS
