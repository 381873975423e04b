/* owb-inspector.h: the side panel. Shows the selected node (op, domain, opset, attributes, inputs
 * and outputs with inferred types, the provider that claimed it and why the others declined), an
 * initializer (shape, type, statistics, histogram, export as .npy), a value, or the model
 * summary. Accessible name "Inspector". Everything shown is copied (tensors referenced) at the
 * call, so the graph may go away afterwards. */
#pragma once

#include <gtk/gtk.h>
#include <owb/owb.h>

#include "owb-document.h"

G_BEGIN_DECLS

#define OWB_TYPE_INSPECTOR (owb_inspector_get_type ())
G_DECLARE_FINAL_TYPE (OwbInspector, owb_inspector, OWB, INSPECTOR, GtkWidget)

GtkWidget *owb_inspector_new (void);

/* The model: IR version, producer, opsets, metadata, inputs/outputs, op histogram, parameter count
 * and bytes. graph is the graph on screen (it may be an optimized one); NULL uses model->graph. */
void owb_inspector_show_model (OwbInspector *self, OwbModel *model, const OwbGraph *graph);
/* The same for a subgraph on screen, titled by its path ("If_3 › then_branch"; NULL: as
 * show_model), with the values it reads from the graphs around it listed after its inputs. */
void owb_inspector_show_subgraph (OwbInspector *self, OwbModel *model, const OwbGraph *graph, const char *path);
void owb_inspector_show_node (OwbInspector *self, const OwbGraph *graph, const OwbNode *node);
/* An initializer (searched in graph and its outer scopes) or any other value of the graph. */
void owb_inspector_show_tensor (OwbInspector *self, const OwbGraph *graph, const char *name);
void owb_inspector_clear (OwbInspector *self);
/* Adds, below the tensor on show, the value it had in a run (statistics and its values a page
 * at a time); the value is referenced. */
void owb_inspector_show_run_value (OwbInspector *self, const char *name, OwbTensor *value);

/* Signals: "tensor-activated" (const char *name) when an input, output or consumer value row is
 * activated; "node-activated" (gpointer: const OwbNode *) when a producer or consumer node row is
 * activated; the node belongs to the graph last passed in, valid as long as that graph is;
 * "subgraph-activated" (gpointer: const OwbNode *, const char *attribute) when a node's graph
 * attribute row (an If's then_branch, a Loop's body) is activated. */

/* Writes the initializer on show as a .npy file (what "Export as NPY…" does after its file
 * chooser). FALSE with an error when no initializer is shown or the file cannot be written. */
gboolean owb_inspector_export_tensor (OwbInspector *self, GFile *file, GError **error);
/* The document whose jobs compute statistics and write exports (the window's, so that closing
 * it cancels them); without one the panel makes one of its own. */
void owb_inspector_set_document (OwbInspector *self, OwbDocument *document);
/* TRUE while statistics of a large initializer are computed in a thread. */
gboolean owb_inspector_get_busy (OwbInspector *self);

G_END_DECLS
