/* owb-timeline.h: a profiling run drawn as a timeline: one lane per thread, each node event a span
 * coloured by its op type, zoom and pan (scroll, pinch, drag, keys), spans too small to see merged. */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb-profiler.h>

G_BEGIN_DECLS

#define OWB_TYPE_TIMELINE (owb_timeline_get_type ())
G_DECLARE_FINAL_TYPE (OwbTimeline, owb_timeline, OWB, TIMELINE, GtkWidget)

GtkWidget *owb_timeline_new (void);
/* Shows run (taken; NULL shows nothing), the whole of it. */
void owb_timeline_take_run (OwbTimeline *self, OwbProfRun *run);
/* Borrowed; NULL when none. */
const OwbProfRun *owb_timeline_get_run (OwbTimeline *self);

/* The visible time range, in ns from the run's first iteration; set_range clamps to the run. */
void owb_timeline_get_range (OwbTimeline *self, gint64 *start_ns, gint64 *end_ns);
void owb_timeline_set_range (OwbTimeline *self, gint64 start_ns, gint64 end_ns);
/* Zooms by factor (> 1: in) around the time at x (widget coordinates). */
void owb_timeline_zoom (OwbTimeline *self, double factor, double x);
void owb_timeline_zoom_to_fit (OwbTimeline *self);

/* The rectangles the last snapshot (or SVG) drew: spans, and merged blocks standing for several. */
void owb_timeline_get_drawn (OwbTimeline *self, guint *n_spans, guint *n_merged);
/* The event index under (x, y), or -1. */
int owb_timeline_event_at (OwbTimeline *self, double x, double y);

/* The timeline as shown now (range, selection) as SVG drawn from the run: lane stripes, one
 * <rect class="span"> per span and <rect class="merged"> per merged block in its op's colour,
 * the node names, the time axis and the lanes' names; width 0: the widget's width. */
char *owb_timeline_dup_svg (OwbTimeline *self, int width);
/* That SVG written to path through a temporary file renamed over it. */
gboolean owb_timeline_export_svg (OwbTimeline *self, const char *path, GError **error);

/* Signal "node-activated" (const char *node_name, gboolean reveal): a span was clicked (reveal
 * FALSE: select the node where it is shown), double-clicked or activated with Enter (TRUE: show it). */

G_END_DECLS
