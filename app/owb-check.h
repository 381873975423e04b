/* owb-check.h: running ONNX test-layout cases (model.onnx + test_data_set_N/input_K.pb,
 * output_K.pb) and comparing outputs; shared by `owb check` and the conformance test. Also the
 * skip/tolerance list of tests/conformance/skip.txt. */
#pragma once

#include <owb/owb.h>

G_BEGIN_DECLS

typedef enum {
  OWB_CHECK_PASSED,
  OWB_CHECK_FAILED,
  OWB_CHECK_SKIPPED
} OwbCheckStatus;

typedef struct {
  double rtol;               /* |got - expected| <= atol + rtol * |expected| */
  double atol;
  const char *providers;     /* comma-separated provider names; NULL: CPU only */
  int n_threads;             /* 0: all cores */
  OwbOptimizeLevel optimize;
} OwbCheckOptions;

/* rtol 1e-3, atol 1e-5, CPU, one thread, optimization disabled. */
void owb_check_options_init (OwbCheckOptions *options);

/* Runs every test_data_set_N of the case in `dir`. *message (may be NULL) receives why the case
 * failed or was skipped (a case without data sets is skipped), NULL when it passed. */
OwbCheckStatus owb_check_case (const char *dir, const OwbCheckOptions *options, char **message);

/* Outputs are compared by owb_tensor_compare (owb/owb-tensor-compare.h), the one comparison the
 * Run page uses too. */

/* The test-layout cases under `path`: `path` itself when it holds model.onnx, otherwise its
 * subdirectories that do, sorted by name. Returns full paths (owned). */
GPtrArray *owb_check_find_cases (const char *path);

/* The skip list: lines `CASE_OR_GLOB  REASON` skip the matching cases; lines
 * `CASE_OR_GLOB  rtol=R atol=A REASON` run them with another tolerance (either of rtol/atol may
 * be left out). '#' starts a comment line. Every entry must give a reason. */
typedef struct _OwbCheckSkipList OwbCheckSkipList;

OwbCheckSkipList *owb_check_skip_list_load (const char *path, GError **error);
OwbCheckSkipList *owb_check_skip_list_parse (const char *text, const char *path, GError **error);
void owb_check_skip_list_free (OwbCheckSkipList *list);
/* The reason when the case named `name` is skipped, NULL otherwise (borrowed). */
const char *owb_check_skip_list_get_skip (const OwbCheckSkipList *list, const char *name);
/* TRUE when a tolerance entry matches `name`; updates *rtol and *atol with what it sets. */
gboolean owb_check_skip_list_get_tolerance (const OwbCheckSkipList *list, const char *name, double *rtol,
                                            double *atol, const char **reason);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (OwbCheckSkipList, owb_check_skip_list_free)

G_END_DECLS
