/* owb-optimizer.h: graph optimization by levels (as ONNX Runtime defines them), pass by pass, with
 * a report of what each pass did and which nodes every created node replaced. */
#pragma once

#include <owb/owb-api.h>
#include <owb/owb-session.h>

G_BEGIN_DECLS

/* A node a pass created, and the names of the nodes it replaced (its provenance). */
typedef struct {
  char *node;
  char *op_type;
  char *domain;
  GPtrArray *from; /* of char * */
} OwbOptimizeCreated;

typedef struct {
  char *pass;
  OwbOptimizeLevel level;
  GPtrArray *removed;     /* of char *: names of nodes the pass removed */
  GPtrArray *created;     /* of OwbOptimizeCreated * */
  GPtrArray *near_misses; /* of char *: why a fusion did not fire ("node 'bn1' ...: has 2 consumers") */
  guint n_removed_initializers;
  double ms;       /* the pass and the shape inference after it */
  double infer_ms; /* of which the shape inference */
  /* Nodes, values and initializers the pass's graph helpers walked (index builds, sweeps, pruning):
   * grows in proportion to the graph for a linear pass. */
  guint64 nodes_visited;
} OwbPassReport;

typedef struct {
  OwbOptimizeLevel level;
  guint nodes_before, nodes_after;
  GPtrArray *passes; /* of OwbPassReport *, in the order they ran */
} OwbOptimizeReport;

typedef struct {
  OwbOptimizeLevel level;
  const char *const *disabled_passes; /* NULL-terminated names; may be NULL */
  gboolean portable;                  /* create only standard ONNX ops (no ai.onnx.workbench ones) */
  GPtrArray *providers;               /* used by constant folding to evaluate nodes; required */
  gsize fold_max_bytes;               /* constant folding leaves outputs larger than this (0: 16 MiB) */
} OwbOptimizeOptions;

OWB_API void owb_optimize_options_init (OwbOptimizeOptions *options);

/* Optimizes the model's main graph in place (the caller owns a copy if it wants the original).
 * On success *report (if report != NULL) receives what every pass did. */
OWB_API gboolean owb_model_optimize (OwbModel *model, const OwbOptimizeOptions *options, OwbOptimizeReport **report,
                                     GError **error);

OWB_API void owb_optimize_report_free (OwbOptimizeReport *report);
/* The whole report as a JSON object; caller frees. */
OWB_API char *owb_optimize_report_to_json (const OwbOptimizeReport *report);

/* Level names: "disabled", "basic", "extended", "layout", "all". */
OWB_API const char *owb_optimize_level_to_string (OwbOptimizeLevel level);
OWB_API gboolean owb_optimize_level_from_string (const char *name, OwbOptimizeLevel *level);

/* Every pass: its name, level and one-line description, for listings and the UI. */
typedef struct {
  const char *name;
  OwbOptimizeLevel level;
  const char *description;
} OwbPassInfo;
OWB_API const OwbPassInfo *owb_optimize_list_passes (guint *n);

/* The report of the optimization a session ran (NULL at level disabled). */
OWB_API const OwbOptimizeReport *owb_session_get_optimize_report (const OwbSession *session);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbOptimizeReport, owb_optimize_report_free)

G_END_DECLS
