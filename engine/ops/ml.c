/* ml.c: schemas and shape inference of the ml op family: the string ops of ai.onnx (StringNormalizer,
 * RegexFullMatch, StringConcat, StringSplit, TfIdfVectorizer) and the classic-ML ops of ai.onnx.ml. */
#include "owb-ops-private.h"

#include <owb/owb-error.h>

#include <string.h>

#define ML "ai.onnx.ml"

/* ---- helpers ---- */

/* Element count of an attribute of the given list type; 0 when absent or of another type. */
static int
attr_len (OwbInferContext *ctx, const char *name, OwbAttributeType type)
{
  const OwbAttribute *a = owb_node_get_attribute (ctx->node, name);
  return a && a->type == type ? a->n : 0;
}

static gboolean
has_attr (OwbInferContext *ctx, const char *name)
{
  return owb_node_get_attribute (ctx->node, name) != NULL;
}

static gboolean
is_ml_number (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT || t == OWB_TYPE_DOUBLE || t == OWB_TYPE_INT64 || t == OWB_TYPE_INT32
         || t == OWB_TYPE_FLOAT16;
}

/* OneHotEncoder and ArrayFeatureExtractor also take strings. */
static gboolean
is_ml_number_or_string (OwbDataType t)
{
  return is_ml_number (t) || t == OWB_TYPE_STRING;
}

/* Input i is a number type the ML ops read (float16 is read as float). */
static gboolean
check_number_input (OwbInferContext *ctx, int i, GError **error)
{
  return _owb_infer_check_input_type (ctx, i, is_ml_number, "float, double, int32 or int64", error);
}

/* Output 0: float scores [n, cols]. */
static void
set_float_rows (OwbInferContext *ctx, OwbDim n, OwbDim cols)
{
  _owb_infer_set_tensor (&ctx->outputs[0], OWB_TYPE_FLOAT, 2);
  ctx->outputs[0].dims[0] = n;
  ctx->outputs[0].dims[1] = cols;
}

static gboolean
is_string (OwbDataType t)
{
  return t == OWB_TYPE_STRING;
}

/* One of the strings in `allowed` (NULL-terminated); error naming the attribute otherwise. */
static gboolean
check_enum (OwbInferContext *ctx, const char *name, const char *def, const char *const *allowed, GError **error)
{
  const char *v = owb_node_get_string (ctx->node, name, def);
  for (int i = 0; allowed[i]; i++)
    if (strcmp (v, allowed[i]) == 0)
      return TRUE;
  char *list = g_strjoinv (", ", (char **) allowed);
  owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s '%s' is not one of %s", name, v, list);
  g_free (list);
  return FALSE;
}

static const char *const post_transforms[] = { "NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT", NULL };

/* The batch and feature dims of a [N, F] or [F] input (unknown while the rank is); FALSE with an
 * error for other ranks. */
static gboolean
batch_features (OwbInferContext *ctx, OwbDim *n, OwbDim *f, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  *n = OWB_DIM_UNKNOWN;
  *f = OWB_DIM_UNKNOWN;
  if (x->rank < 0)
    return TRUE;
  if (x->rank == 1)
    {
      *n = OWB_DIM_VALUE (1);
      *f = x->dims[0];
      return TRUE;
    }
  if (x->rank == 2)
    {
      *n = x->dims[0];
      *f = x->dims[1];
      return TRUE;
    }
  owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have shape [N, F] or [F], not rank %d", x->rank);
  return FALSE;
}

/* Sets outputs for the classifiers: labels [N] and scores [N, E]. */
static void
set_classifier_outputs (OwbInferContext *ctx, OwbDim n, OwbDim e, OwbDataType label_type)
{
  _owb_infer_set_tensor (&ctx->outputs[0], label_type, 1);
  ctx->outputs[0].dims[0] = n;
  if (ctx->n_outputs > 1)
    {
      _owb_infer_set_tensor (&ctx->outputs[1], OWB_TYPE_FLOAT, 2);
      ctx->outputs[1].dims[0] = n;
      ctx->outputs[1].dims[1] = e;
    }
}

/* The label type and count of classlabels_<ints_name> / classlabels_strings. */
static gboolean
class_labels (OwbInferContext *ctx, const char *ints_name, OwbDataType *type, int *count, GError **error)
{
  int ni = attr_len (ctx, ints_name, OWB_ATTR_INTS), ns = attr_len (ctx, "classlabels_strings", OWB_ATTR_STRINGS);
  if (ni > 0 && ns > 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "both %s and classlabels_strings are set", ints_name);
      return FALSE;
    }
  *type = ns > 0 ? OWB_TYPE_STRING : OWB_TYPE_INT64;
  *count = ns > 0 ? ns : ni;
  return TRUE;
}

/* ---- StringNormalizer ---- */

static gboolean
infer_string_normalizer (OwbInferContext *ctx, GError **error)
{
  static const char *const actions[] = { "NONE", "LOWER", "UPPER", NULL };
  if (!_owb_infer_check_input_type (ctx, 0, is_string, "string", error)
      || !check_enum (ctx, "case_change_action", "NONE", actions, error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  if (x->rank >= 0 && x->rank != 1 && x->rank != 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have shape [C] or [1, C], not rank %d", x->rank);
      return FALSE;
    }
  if (x->rank == 2 && owb_dim_is_known (x->dims[0]) && x->dims[0].value != 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have shape [C] or [1, C], not [%" G_GINT64_FORMAT ", C]",
                           x->dims[0].value);
      return FALSE;
    }
  /* How many strings survive the stop words is known only once they are read. */
  _owb_infer_set_tensor (&ctx->outputs[0], OWB_TYPE_STRING, x->rank);
  if (x->rank == 2)
    ctx->outputs[0].dims[0] = OWB_DIM_VALUE (1);
  return TRUE;
}

/* ---- RegexFullMatch ---- */

static gboolean
infer_regex_full_match (OwbInferContext *ctx, GError **error)
{
  const OwbAttribute *p = owb_node_get_attribute (ctx->node, "pattern");
  if (!p || p->type != OWB_ATTR_STRING)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute pattern (a string) is required");
      return FALSE;
    }
  if (!_owb_infer_check_input_type (ctx, 0, is_string, "string", error))
    return FALSE;
  owb_infer_copy (ctx, 0, 0);
  ctx->outputs[0].dtype = OWB_TYPE_BOOL;
  return TRUE;
}

/* ---- StringConcat ---- */

static gboolean
infer_string_concat (OwbInferContext *ctx, GError **error)
{
  if (!_owb_infer_check_input_type (ctx, 0, is_string, "string", error) || !_owb_infer_check_input_type (ctx, 1, is_string, "string", error))
    return FALSE;
  if (!owb_infer_broadcast (ctx, 2, ctx->inputs, &ctx->outputs[0], error))
    return FALSE;
  ctx->outputs[0].dtype = OWB_TYPE_STRING;
  return TRUE;
}

/* ---- StringSplit ---- */

static gboolean
infer_string_split (OwbInferContext *ctx, GError **error)
{
  if (!_owb_infer_check_input_type (ctx, 0, is_string, "string", error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0];
  if (x->rank >= OWB_MAX_RANK)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input rank %d leaves no room for the substrings axis", x->rank);
      return FALSE;
    }
  OwbValueType *y = &ctx->outputs[0];
  if (x->rank < 0)
    _owb_infer_set_tensor (y, OWB_TYPE_STRING, -1);
  else
    {
      /* The substrings axis is as long as the longest split: data-dependent. */
      _owb_infer_set_tensor (y, OWB_TYPE_STRING, x->rank + 1);
      for (int i = 0; i < x->rank; i++)
        y->dims[i] = x->dims[i];
    }
  if (ctx->n_outputs > 1)
    {
      owb_infer_copy (ctx, 1, 0);
      ctx->outputs[1].dtype = OWB_TYPE_INT64;
    }
  return TRUE;
}

/* ---- TfIdfVectorizer ---- */

static gboolean
is_tfidf_input (OwbDataType t)
{
  return t == OWB_TYPE_STRING || t == OWB_TYPE_INT32 || t == OWB_TYPE_INT64;
}

static gboolean
infer_tfidf (OwbInferContext *ctx, GError **error)
{
  static const char *const modes[] = { "TF", "IDF", "TFIDF", NULL };
  if (!_owb_infer_check_input_type (ctx, 0, is_tfidf_input, "string, int32 or int64", error))
    return FALSE;
  if (!has_attr (ctx, "mode"))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute mode is required");
      return FALSE;
    }
  if (!check_enum (ctx, "mode", "TF", modes, error))
    return FALSE;
  int n_idx;
  const int64_t *idx = owb_node_get_ints (ctx->node, "ngram_indexes", &n_idx);
  if (n_idx == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute ngram_indexes is required");
      return FALSE;
    }
  int64_t out_size = 0;
  for (int i = 0; i < n_idx; i++)
    {
      if (idx[i] < 0 || idx[i] >= G_MAXINT32)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "ngram_indexes[%d] = %" G_GINT64_FORMAT " is out of range",
                               i, idx[i]);
          return FALSE;
        }
      out_size = MAX (out_size, idx[i] + 1);
    }
  const OwbValueType *x = ctx->inputs[0];
  if (x->dtype != OWB_TYPE_UNDEFINED)
    {
      gboolean strings = attr_len (ctx, "pool_strings", OWB_ATTR_STRINGS) > 0;
      gboolean ints = attr_len (ctx, "pool_int64s", OWB_ATTR_INTS) > 0;
      if (strings == ints || strings != (x->dtype == OWB_TYPE_STRING))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                               "exactly one of pool_strings and pool_int64s must be set, matching the %s input",
                               owb_data_type_name (x->dtype));
          return FALSE;
        }
    }
  if (x->rank > 2)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have shape [C] or [N, C], not rank %d", x->rank);
      return FALSE;
    }
  OwbValueType *y = &ctx->outputs[0];
  if (x->rank < 0)
    _owb_infer_set_tensor (y, OWB_TYPE_FLOAT, -1);
  else if (x->rank == 2)
    {
      _owb_infer_set_tensor (y, OWB_TYPE_FLOAT, 2);
      y->dims[0] = x->dims[0];
      y->dims[1] = OWB_DIM_VALUE (out_size);
    }
  else
    {
      _owb_infer_set_tensor (y, OWB_TYPE_FLOAT, 1);
      y->dims[0] = OWB_DIM_VALUE (out_size);
    }
  return TRUE;
}

/* What a classifier's schema checks first: a number input [N, F] or [F], post_transform, and
 * the class labels (from `ints_attr` or classlabels_strings). */
static gboolean
check_classifier (OwbInferContext *ctx, const char *ints_attr, OwbDataType *label_type, int *n_labels, OwbDim *n,
                  OwbDim *f, GError **error)
{
  return check_number_input (ctx, 0, error) && check_enum (ctx, "post_transform", "NONE", post_transforms, error)
         && class_labels (ctx, ints_attr, label_type, n_labels, error) && batch_features (ctx, n, f, error);
}

/* ---- LinearClassifier, LinearRegressor ---- */

static gboolean
infer_linear_classifier (OwbInferContext *ctx, GError **error)
{
  OwbDim n, f;
  OwbDataType label_type;
  int n_labels;
  if (!check_classifier (ctx, "classlabels_ints", &label_type, &n_labels, &n, &f, error))
    return FALSE;
  int n_coef = attr_len (ctx, "coefficients", OWB_ATTR_FLOATS);
  int n_intercepts = attr_len (ctx, "intercepts", OWB_ATTR_FLOATS);
  if (n_coef == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "attribute coefficients is required");
      return FALSE;
    }
  OwbDim e = OWB_DIM_UNKNOWN;
  int64_t raw = -1;
  if (owb_dim_is_known (f))
    {
      if (f.value == 0 || n_coef % f.value != 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "%d coefficients do not split into rows of %" G_GINT64_FORMAT " features",
                               n_coef, f.value);
          return FALSE;
        }
      raw = n_coef / f.value;
    }
  else if (n_intercepts > 0)
    raw = n_intercepts;
  if (raw >= 0 && n_intercepts > 0 && n_intercepts != raw)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%d intercepts for %" G_GINT64_FORMAT " classes", n_intercepts, raw);
      return FALSE;
    }
  if (raw > 1 && n_labels > 0 && n_labels != raw)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%d class labels for %" G_GINT64_FORMAT " classes", n_labels, raw);
      return FALSE;
    }
  if (raw >= 0)
    e = OWB_DIM_VALUE (raw == 1 && n_labels == 2 ? 2 : raw);
  set_classifier_outputs (ctx, n, e, label_type);
  return TRUE;
}

static gboolean
infer_linear_regressor (OwbInferContext *ctx, GError **error)
{
  OwbDim n, f;
  if (!check_number_input (ctx, 0, error)
      || !check_enum (ctx, "post_transform", "NONE", post_transforms, error) || !batch_features (ctx, &n, &f, error))
    return FALSE;
  int64_t targets = owb_node_get_int (ctx->node, "targets", 1);
  int n_coef = attr_len (ctx, "coefficients", OWB_ATTR_FLOATS);
  int n_intercepts = attr_len (ctx, "intercepts", OWB_ATTR_FLOATS);
  if (targets < 1 || targets > G_MAXINT32)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "targets = %" G_GINT64_FORMAT " is out of range", targets);
      return FALSE;
    }
  if (n_intercepts > 0 && n_intercepts != targets)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%d intercepts for %" G_GINT64_FORMAT " targets", n_intercepts,
                           targets);
      return FALSE;
    }
  if (owb_dim_is_known (f) && n_coef != targets * f.value)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE,
                           "%d coefficients, expected targets (%" G_GINT64_FORMAT ") x features (%" G_GINT64_FORMAT ")", n_coef,
                           targets, f.value);
      return FALSE;
    }
  set_float_rows (ctx, n, OWB_DIM_VALUE (targets));
  return TRUE;
}

/* ---- SVMClassifier, SVMRegressor ---- */

static gboolean
check_kernel (OwbInferContext *ctx, GError **error)
{
  static const char *const kernels[] = { "LINEAR", "POLY", "RBF", "SIGMOID", NULL };
  if (!check_enum (ctx, "kernel_type", "LINEAR", kernels, error)
      || !check_enum (ctx, "post_transform", "NONE", post_transforms, error))
    return FALSE;
  int n_params = attr_len (ctx, "kernel_params", OWB_ATTR_FLOATS);
  if (n_params != 0 && n_params != 3)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "kernel_params must hold 3 values (gamma, coef0, degree), not %d",
                           n_params);
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_svm_classifier (OwbInferContext *ctx, GError **error)
{
  OwbDim n, f;
  OwbDataType label_type;
  int n_labels;
  if (!check_number_input (ctx, 0, error) || !check_kernel (ctx, error)
      || !class_labels (ctx, "classlabels_ints", &label_type, &n_labels, error) || !batch_features (ctx, &n, &f, error))
    return FALSE;
  int64_t classes = MAX (n_labels, 1);
  int n_vpc;
  const int64_t *vpc = owb_node_get_ints (ctx->node, "vectors_per_class", &n_vpc);
  int64_t vectors = 0;
  for (int i = 0; i < n_vpc; i++)
    {
      if (vpc[i] < 0 || vpc[i] > G_MAXINT32)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "vectors_per_class[%d] = %" G_GINT64_FORMAT " is out of range",
                               i, vpc[i]);
          return FALSE;
        }
      vectors += vpc[i];
    }
  if (vectors > 0 && n_vpc != classes)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "vectors_per_class has %d entries for %" G_GINT64_FORMAT " classes",
                           n_vpc, classes);
      return FALSE;
    }
  int64_t e;
  if (vectors > 0)
    {
      gboolean proba = attr_len (ctx, "prob_a", OWB_ATTR_FLOATS) > 0;
      int64_t pairs = classes * (classes - 1) / 2;
      e = proba ? classes : (pairs == 1 ? 2 : pairs);
    }
  else
    e = classes;
  set_classifier_outputs (ctx, n, OWB_DIM_VALUE (e), label_type);
  return TRUE;
}

static gboolean
infer_svm_regressor (OwbInferContext *ctx, GError **error)
{
  OwbDim n, f;
  if (!check_number_input (ctx, 0, error) || !check_kernel (ctx, error)
      || !batch_features (ctx, &n, &f, error))
    return FALSE;
  set_float_rows (ctx, n, OWB_DIM_VALUE (1));
  return TRUE;
}

/* ---- TreeEnsembleClassifier, TreeEnsembleRegressor, TreeEnsemble ---- */

static gboolean
infer_tree_classifier (OwbInferContext *ctx, GError **error)
{
  OwbDim n, f;
  OwbDataType label_type;
  int n_labels;
  if (!check_classifier (ctx, "classlabels_int64s", &label_type, &n_labels, &n, &f, error))
    return FALSE;
  if (n_labels == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "one of classlabels_int64s and classlabels_strings is required");
      return FALSE;
    }
  set_classifier_outputs (ctx, n, OWB_DIM_VALUE (n_labels), label_type);
  return TRUE;
}

/* n_targets, or when absent one more than the largest target id. */
static gboolean
tree_targets (OwbInferContext *ctx, const char *ids_name, int64_t *targets, GError **error)
{
  *targets = owb_node_get_int (ctx->node, "n_targets", -1);
  if (*targets < 0 && !has_attr (ctx, "n_targets"))
    {
      int n_ids;
      const int64_t *ids = owb_node_get_ints (ctx->node, ids_name, &n_ids);
      *targets = 1;
      for (int i = 0; i < n_ids; i++)
        *targets = MAX (*targets, ids[i] + 1);
    }
  if (*targets < 1 || *targets > G_MAXINT32)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "n_targets = %" G_GINT64_FORMAT " is out of range", *targets);
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_tree_regressor (OwbInferContext *ctx, GError **error)
{
  static const char *const aggregates[] = { "AVERAGE", "SUM", "MIN", "MAX", NULL };
  OwbDim n, f;
  int64_t targets;
  if (!check_number_input (ctx, 0, error)
      || !check_enum (ctx, "post_transform", "NONE", post_transforms, error)
      || !check_enum (ctx, "aggregate_function", "SUM", aggregates, error) || !batch_features (ctx, &n, &f, error)
      || !tree_targets (ctx, "target_ids", &targets, error))
    return FALSE;
  set_float_rows (ctx, n, OWB_DIM_VALUE (targets));
  return TRUE;
}

static gboolean
is_tree_input (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT || t == OWB_TYPE_DOUBLE || t == OWB_TYPE_FLOAT16;
}

static gboolean
infer_tree_ensemble (OwbInferContext *ctx, GError **error)
{
  OwbDim n, f;
  int64_t targets;
  if (!_owb_infer_check_input_type (ctx, 0, is_tree_input, "float, double or float16", error) || !batch_features (ctx, &n, &f, error)
      || !tree_targets (ctx, "leaf_targetids", &targets, error))
    return FALSE;
  int64_t post = owb_node_get_int (ctx->node, "post_transform", 0);
  int64_t agg = owb_node_get_int (ctx->node, "aggregate_function", 1);
  if (post < 0 || post > 4 || agg < 0 || agg > 3)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "post_transform %" G_GINT64_FORMAT " (0 to 4) or aggregate_function %" G_GINT64_FORMAT " (0 to 3) is out of range",
                           post, agg);
      return FALSE;
    }
  _owb_infer_set_tensor (&ctx->outputs[0], ctx->inputs[0]->dtype, 2);
  ctx->outputs[0].dims[0] = n;
  ctx->outputs[0].dims[1] = OWB_DIM_VALUE (targets);
  return TRUE;
}

/* ---- Scaler, Normalizer, Binarizer, Imputer ---- */

/* Binarizer, Imputer: a number input, the output its type and shape. */
static gboolean
infer_same (OwbInferContext *ctx, GError **error)
{
  if (!check_number_input (ctx, 0, error))
    return FALSE;
  owb_infer_copy (ctx, 0, 0);
  return TRUE;
}

/* Scaler: the input's shape, as float. */
static gboolean
infer_scaler (OwbInferContext *ctx, GError **error)
{
  if (!infer_same (ctx, error))
    return FALSE;
  ctx->outputs[0].dtype = OWB_TYPE_FLOAT;
  return TRUE;
}

static gboolean
infer_normalizer (OwbInferContext *ctx, GError **error)
{
  static const char *const norms[] = { "MAX", "L1", "L2", NULL };
  OwbDim n, f;
  return check_number_input (ctx, 0, error) && check_enum (ctx, "norm", "MAX", norms, error)
         && batch_features (ctx, &n, &f, error) && infer_scaler (ctx, error);
}

/* ---- OneHotEncoder ---- */


static gboolean
infer_one_hot_encoder (OwbInferContext *ctx, GError **error)
{
  if (!_owb_infer_check_input_type (ctx, 0, is_ml_number_or_string, "string, float, double, int32 or int64", error))
    return FALSE;
  int ni = attr_len (ctx, "cats_int64s", OWB_ATTR_INTS), ns = attr_len (ctx, "cats_strings", OWB_ATTR_STRINGS);
  if ((ni > 0) == (ns > 0))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "exactly one of cats_int64s and cats_strings must be set");
      return FALSE;
    }
  const OwbValueType *x = ctx->inputs[0];
  if (x->dtype != OWB_TYPE_UNDEFINED && (x->dtype == OWB_TYPE_STRING) != (ns > 0))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "%s input needs cats_%s", owb_data_type_name (x->dtype),
                           x->dtype == OWB_TYPE_STRING ? "strings" : "int64s");
      return FALSE;
    }
  OwbValueType *y = &ctx->outputs[0];
  if (x->rank < 0)
    {
      _owb_infer_set_tensor (y, OWB_TYPE_FLOAT, -1);
      return TRUE;
    }
  if (x->rank + 1 > OWB_MAX_RANK)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input rank %d leaves no room for the categories axis", x->rank);
      return FALSE;
    }
  *y = *x;
  y->dtype = OWB_TYPE_FLOAT;
  y->rank = x->rank + 1;
  y->dims[x->rank] = OWB_DIM_VALUE (ni > 0 ? ni : ns);
  return TRUE;
}

/* ---- LabelEncoder, CategoryMapper ---- */

static gboolean
is_label_type (OwbDataType t)
{
  return t == OWB_TYPE_STRING || t == OWB_TYPE_INT64 || t == OWB_TYPE_FLOAT || t == OWB_TYPE_INT32
         || t == OWB_TYPE_INT16 || t == OWB_TYPE_DOUBLE;
}

/* The element type of the keys_* (or values_*) attribute set; UNDEFINED if none. At most one may be set. */
static gboolean
label_encoder_side (OwbInferContext *ctx, const char *side, OwbDataType *type, GError **error)
{
  static const struct {
    const char *suffix;
    OwbAttributeType kind;
    OwbDataType type;
  } lists[] = {
    { "strings", OWB_ATTR_STRINGS, OWB_TYPE_STRING },
    { "int64s", OWB_ATTR_INTS, OWB_TYPE_INT64 },
    { "floats", OWB_ATTR_FLOATS, OWB_TYPE_FLOAT },
    { "tensor", OWB_ATTR_TENSOR, OWB_TYPE_UNDEFINED },
  };
  int found = 0;
  *type = OWB_TYPE_UNDEFINED;
  for (guint i = 0; i < G_N_ELEMENTS (lists); i++)
    {
      char *name = g_strdup_printf ("%s_%s", side, lists[i].suffix);
      const OwbAttribute *a = owb_node_get_attribute (ctx->node, name);
      g_free (name);
      if (!a)
        continue;
      if (a->type != lists[i].kind)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "%s_%s has the wrong attribute type", side, lists[i].suffix);
          return FALSE;
        }
      if (lists[i].kind == OWB_ATTR_TENSOR)
        {
          if (ctx->opset < 4 || !a->t || a->t->rank != 1 || !is_label_type (a->t->dtype))
            {
              owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                                   "%s_tensor must be a 1-D tensor of string, int64, int32, int16, float or double (opset 4)", side);
              return FALSE;
            }
          *type = a->t->dtype;
        }
      else
        *type = lists[i].type;
      found++;
    }
  if (found > 1)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "only one of the %s_* attributes may be set", side);
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_label_encoder (OwbInferContext *ctx, GError **error)
{
  const OwbValueType *x = ctx->inputs[0];
  OwbDataType out;
  if (ctx->opset < 2)
    {
      if (x->dtype != OWB_TYPE_UNDEFINED && x->dtype != OWB_TYPE_STRING && x->dtype != OWB_TYPE_INT64)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input must be string or int64, not %s", owb_data_type_name (x->dtype));
          return FALSE;
        }
      out = x->dtype == OWB_TYPE_STRING ? OWB_TYPE_INT64 : x->dtype == OWB_TYPE_INT64 ? OWB_TYPE_STRING : OWB_TYPE_UNDEFINED;
    }
  else
    {
      OwbDataType keys, values;
      if (!label_encoder_side (ctx, "keys", &keys, error) || !label_encoder_side (ctx, "values", &values, error))
        return FALSE;
      if (keys == OWB_TYPE_UNDEFINED || values == OWB_TYPE_UNDEFINED)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "one keys_* and one values_* attribute are required");
          return FALSE;
        }
      if (x->dtype != OWB_TYPE_UNDEFINED && x->dtype != keys)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "input is %s but the keys are %s", owb_data_type_name (x->dtype),
                               owb_data_type_name (keys));
          return FALSE;
        }
      const OwbAttribute *d = owb_node_get_attribute (ctx->node, "default_tensor");
      if (d && (d->type != OWB_ATTR_TENSOR || !d->t || d->t->nelems != 1 || d->t->dtype != values))
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "default_tensor must hold one %s value",
                               owb_data_type_name (values));
          return FALSE;
        }
      out = values;
    }
  owb_infer_copy (ctx, 0, 0);
  ctx->outputs[0].dtype = out;
  return TRUE;
}

static gboolean
is_string_or_int64 (OwbDataType t)
{
  return t == OWB_TYPE_STRING || t == OWB_TYPE_INT64;
}

static gboolean
infer_category_mapper (OwbInferContext *ctx, GError **error)
{
  if (!_owb_infer_check_input_type (ctx, 0, is_string_or_int64, "string or int64", error))
    return FALSE;
  if (attr_len (ctx, "cats_int64s", OWB_ATTR_INTS) != attr_len (ctx, "cats_strings", OWB_ATTR_STRINGS))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "cats_int64s and cats_strings must have the same length");
      return FALSE;
    }
  OwbDataType x = ctx->inputs[0]->dtype;
  owb_infer_copy (ctx, 0, 0);
  ctx->outputs[0].dtype = x == OWB_TYPE_STRING ? OWB_TYPE_INT64 : x == OWB_TYPE_INT64 ? OWB_TYPE_STRING : OWB_TYPE_UNDEFINED;
  return TRUE;
}

/* ---- ArrayFeatureExtractor ---- */

static gboolean
is_int64 (OwbDataType t)
{
  return t == OWB_TYPE_INT64;
}

static gboolean
infer_array_feature_extractor (OwbInferContext *ctx, GError **error)
{
  if (!_owb_infer_check_input_type (ctx, 0, is_ml_number_or_string, "float, double, int32, int64 or string", error)
      || !_owb_infer_check_input_type (ctx, 1, is_int64, "int64", error))
    return FALSE;
  const OwbValueType *x = ctx->inputs[0], *idx = ctx->inputs[1];
  if (x->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have at least one axis");
      return FALSE;
    }
  OwbDim count = _owb_infer_element_count (idx);
  OwbValueType *z = &ctx->outputs[0];
  if (x->rank < 0)
    _owb_infer_set_tensor (z, x->dtype, -1);
  else if (x->rank == 1)
    {
      /* As ONNX Runtime does: a vector gives one row. */
      _owb_infer_set_tensor (z, x->dtype, 2);
      z->dims[0] = OWB_DIM_VALUE (1);
      z->dims[1] = count;
    }
  else
    {
      *z = *x;
      z->dims[x->rank - 1] = count;
    }
  return TRUE;
}

/* ---- FeatureVectorizer ---- */

static gboolean
infer_feature_vectorizer (OwbInferContext *ctx, GError **error)
{
  int n_dims;
  const int64_t *dims = owb_node_get_ints (ctx->node, "inputdimensions", &n_dims);
  if (n_dims != ctx->n_inputs)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "inputdimensions has %d entries for %d inputs", n_dims,
                           ctx->n_inputs);
      return FALSE;
    }
  int64_t total = 0;
  for (int i = 0; i < n_dims; i++)
    {
      if (dims[i] < 0 || dims[i] > G_MAXINT32 || total + dims[i] > G_MAXINT32)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "inputdimensions[%d] = %" G_GINT64_FORMAT " is out of range", i,
                               dims[i]);
          return FALSE;
        }
      total += dims[i];
    }
  OwbDim n = OWB_DIM_UNKNOWN;
  for (int i = 0; i < ctx->n_inputs; i++)
    {
      if (!ctx->inputs[i] || !check_number_input (ctx, i, error))
        {
          if (!ctx->inputs[i])
            owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "input %d is missing", i);
          return FALSE;
        }
      const OwbValueType *x = ctx->inputs[i];
      if (x->rank == 0)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d is a scalar", i);
          return FALSE;
        }
      OwbDim ni = x->rank < 0 ? OWB_DIM_UNKNOWN : x->rank == 1 ? OWB_DIM_VALUE (1) : x->dims[0];
      if (owb_dim_is_known (ni) && owb_dim_is_known (n) && ni.value != n.value)
        {
          owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d has %" G_GINT64_FORMAT " rows, input 0 has %" G_GINT64_FORMAT, i,
                               ni.value, n.value);
          return FALSE;
        }
      if (owb_dim_is_known (ni) || (!owb_dim_is_known (n) && ni.param))
        n = ni;
    }
  set_float_rows (ctx, n, OWB_DIM_VALUE (total));
  return TRUE;
}

/* ---- ZipMap ---- */

static gboolean
infer_zipmap (OwbInferContext *ctx, GError **error)
{
  int ni = attr_len (ctx, "classlabels_int64s", OWB_ATTR_INTS), ns = attr_len (ctx, "classlabels_strings", OWB_ATTR_STRINGS);
  if ((ni > 0) == (ns > 0))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                           "exactly one of classlabels_int64s and classlabels_strings must be set");
      return FALSE;
    }
  const OwbValueType *x = ctx->inputs[0];
  if (x->kind == OWB_VALUE_TENSOR && x->dtype != OWB_TYPE_UNDEFINED && x->dtype != OWB_TYPE_FLOAT)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_TYPE, "the input must be float32, not %s", owb_data_type_name (x->dtype));
      return FALSE;
    }
  if (x->rank > 2 || x->rank == 0)
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "the input must be 1-D or 2-D, not of rank %d", x->rank);
      return FALSE;
    }
  if (x->rank > 0 && owb_dim_is_known (x->dims[x->rank - 1]) && x->dims[x->rank - 1].value != (ni > 0 ? ni : ns))
    {
      owb_infer_set_error (ctx, error, OWB_ERROR_SHAPE, "the input has %" G_GINT64_FORMAT " columns but %d class labels",
                           x->dims[x->rank - 1].value, ni > 0 ? ni : ns);
      return FALSE;
    }
  /* A sequence of float maps, one per row. */
  OwbValueType *z = &ctx->outputs[0];
  owb_value_type_init_unknown (z);
  z->kind = OWB_VALUE_SEQUENCE;
  z->elem_kind = OWB_VALUE_MAP;
  z->dtype = OWB_TYPE_FLOAT;
  z->key_dtype = ns > 0 ? OWB_TYPE_STRING : OWB_TYPE_INT64;
  return TRUE;
}

const OwbOpSchema _owb_ops_ml[] = {
  /* ai.onnx string ops */
  { "StringNormalizer", "", 10, 1, 1, 1, 1, infer_string_normalizer },
  { "RegexFullMatch", "", 20, 1, 1, 1, 1, infer_regex_full_match },
  { "StringConcat", "", 20, 2, 2, 1, 1, infer_string_concat },
  { "StringSplit", "", 20, 1, 1, 1, 2, infer_string_split },
  { "TfIdfVectorizer", "", 9, 1, 1, 1, 1, infer_tfidf },
  /* ai.onnx.ml; versions that changed attributes branch on ctx->opset */
  { "LinearClassifier", ML, 1, 1, 1, 1, 2, infer_linear_classifier },
  { "LinearRegressor", ML, 1, 1, 1, 1, 1, infer_linear_regressor },
  { "SVMClassifier", ML, 1, 1, 1, 1, 2, infer_svm_classifier },
  { "SVMRegressor", ML, 1, 1, 1, 1, 1, infer_svm_regressor },
  { "TreeEnsembleClassifier", ML, 1, 1, 1, 1, 2, infer_tree_classifier },
  { "TreeEnsembleRegressor", ML, 1, 1, 1, 1, 1, infer_tree_regressor },
  { "TreeEnsemble", ML, 5, 1, 1, 1, 1, infer_tree_ensemble },
  { "Scaler", ML, 1, 1, 1, 1, 1, infer_scaler },
  { "Normalizer", ML, 1, 1, 1, 1, 1, infer_normalizer },
  { "Binarizer", ML, 1, 1, 1, 1, 1, infer_same },
  { "Imputer", ML, 1, 1, 1, 1, 1, infer_same },
  { "OneHotEncoder", ML, 1, 1, 1, 1, 1, infer_one_hot_encoder },
  { "LabelEncoder", ML, 1, 1, 1, 1, 1, infer_label_encoder },
  { "CategoryMapper", ML, 1, 1, 1, 1, 1, infer_category_mapper },
  { "ArrayFeatureExtractor", ML, 1, 2, 2, 1, 1, infer_array_feature_extractor },
  { "FeatureVectorizer", ML, 1, 1, -1, 1, 1, infer_feature_vectorizer },
  { "ZipMap", ML, 1, 1, 1, 1, 1, infer_zipmap },
  { NULL }
};
