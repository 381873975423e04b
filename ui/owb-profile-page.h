/* owb-profile-page.h: the Profile page: profile the model (iterations, threads; the window's level
 * and providers) off the main thread, store the run, and show its timeline, the time per op type,
 * the slowest nodes and the runs of the model stored before, any of which can be shown again. */
#pragma once

#include <gtk/gtk.h>
#include "owb-page.h"
#include "owb-timeline.h"
#include "owb-graph-layer.h"

G_BEGIN_DECLS

#define OWB_TYPE_PROFILE_PAGE (owb_profile_page_get_type ())
G_DECLARE_FINAL_TYPE (OwbProfilePage, owb_profile_page, OWB, PROFILE_PAGE, OwbPage)

GtkWidget *owb_profile_page_new (void);

/* Where runs are stored: a path set on this page with set_database_path (NULL: none), else
 * $OWB_PROFILE_DB if set, else the profile-database setting if not empty, else
 * $XDG_DATA_HOME/onnx-workbench/profiles.sqlite. The page follows changes of the setting. */
const char *owb_profile_page_get_database_path (OwbProfilePage *self);
void owb_profile_page_set_database_path (OwbProfilePage *self, const char *path);
/* What "Choose Database…" does with the file chosen: sets the profile-database setting to path
 * (NULL or "": back to the default, as "Use Default Database" does). FALSE with an error when
 * path is a file but not a profile database, or the settings schema is not installed. */
gboolean owb_profile_page_choose_database (OwbProfilePage *self, const char *path, GError **error);

/* What "Profile Model" does: warm-up runs, then `iterations` profiled runs at `threads` (0: all
 * cores) in a worker thread, then the run is stored and shown. "busy" is TRUE until then. */
void owb_profile_page_profile (OwbProfilePage *self, int iterations, int threads);

OwbTimeline *owb_profile_page_get_timeline (OwbProfilePage *self);
/* Rows of the op table and of the stored runs list. */
guint owb_profile_page_get_n_op_rows (OwbProfilePage *self);
guint owb_profile_page_get_n_stored_runs (OwbProfilePage *self);
/* Shows stored run `index` (oldest first; the list shows the newest at the top) again, loaded in a worker thread ("busy"). */
void owb_profile_page_show_stored_run (OwbProfilePage *self, guint index);
/* Compares the run shown (A) with stored run `index` (B), loaded in a worker thread ("busy"):
 * op types and the nodes that moved most, slower ones marked. */
void owb_profile_page_compare_stored_run (OwbProfilePage *self, guint index);
guint owb_profile_page_get_n_comparison_rows (OwbProfilePage *self);

/* A graph layer colouring each node by its share of the shown run's node time (badge "12.3 %"),
 * found by the node's name or, for a node the optimizer made, by the model's nodes it replaced;
 * NULL when no run is shown. "Show Time on Graph" emits "show-layer" with it (NULL when switched
 * off): the window sets it on the Graph page. */
OwbGraphLayer *owb_profile_page_dup_time_layer (OwbProfilePage *self);
/* The comparison shown as a layer: each matched node red where the run compared with (B) took
 * longer, green where shorter (badge "+0.123 ms"); NULL without a comparison. "Show Differences
 * on Graph" hands it to the window like the time layer (one of the two at a time). */
OwbGraphLayer *owb_profile_page_dup_compare_layer (OwbProfilePage *self);

/* "Export Timeline…": the timeline as drawn now, through a temporary file: SVG drawn from the run
 * (path ending in .svg, any case) or a PNG of the widget (anything else). */
gboolean owb_profile_page_export_timeline (OwbProfilePage *self, const char *path, GError **error);

/* What the "Show Time on Graph" button does (it stays off while no run is shown). */
void owb_profile_page_set_time_on_graph (OwbProfilePage *self, gboolean show);

/* Signal "node-activated" (const char *node_name, gboolean reveal): a span of the timeline was
 * clicked (reveal FALSE), double-clicked or activated, or a slowest node's row activated (TRUE):
 * the window selects the node in the graph and the inspector, and with reveal shows the graph. */

G_END_DECLS
