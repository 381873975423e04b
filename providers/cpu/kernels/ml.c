/* ml.c: CPU kernels of the ml op family: the string ops of ai.onnx (StringNormalizer, RegexFullMatch,
 * StringConcat, StringSplit, TfIdfVectorizer) and the classic-ML ops of ai.onnx.ml (linear, SVM and
 * tree-ensemble models, scalers, encoders). Model scores are computed in double and stored as float. */
#include "../cpu-kernels-private.h"

#include <math.h>
#include <string.h>

/* Prepare-time errors name the node (no kernel context exists yet); FALSE, for `return ...`. */
#define prepare_error _owb_cpu_node_error

/* ---- helpers ---- */

static OwbTensor *
require_output (OwbKernelContext *ctx, int i, GError **error)
{
  if (i < ctx->n_outputs && !ctx->outputs[i])
    owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the shape of output %d is not known", i);
  return i < ctx->n_outputs ? ctx->outputs[i] : NULL;
}


/* The tensor's numbers as doubles (a new array, NULL with an error if it cannot be allocated). */
static double *
to_doubles (OwbKernelContext *ctx, const OwbTensor *t, GError **error)
{
  double *d = g_try_malloc_n (MAX (t->nelems, 1), sizeof (double));
  if (!d)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_NOMEM, "cannot allocate %" G_GINT64_FORMAT " doubles", t->nelems);
      return NULL;
    }
  switch (t->dtype)
    {
#define CONVERT(T, N)                                                                                                 \
  case OWB_TYPE_##N:                                                                                                  \
    {                                                                                                                 \
      const T *s = t->data;                                                                                           \
      for (int64_t i = 0; i < t->nelems; i++)                                                                         \
        d[i] = (double) s[i];                                                                                         \
    }                                                                                                                 \
    break;
      OWB_CPU_FOR_ALL (CONVERT)
#undef CONVERT
    default:
      for (int64_t i = 0; i < t->nelems; i++)
        d[i] = owb_tensor_get_double (t, i);
      break;
    }
  return d;
}

/* Rows and features of a [N, F] or [F] input. */
static gboolean
rows_features (OwbKernelContext *ctx, const OwbTensor *x, int64_t *n, int64_t *f, GError **error)
{
  if (x->rank == 1)
    {
      *n = 1;
      *f = x->dims[0];
      return TRUE;
    }
  if (x->rank == 2)
    {
      *n = x->dims[0];
      *f = x->dims[1];
      return TRUE;
    }
  owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have shape [N, F] or [F], not rank %d", x->rank);
  return FALSE;
}

/* Checks an allocated [N, E] output against what the kernel computes (both come from the same attributes). */
static gboolean
check_columns (OwbKernelContext *ctx, const OwbTensor *z, int64_t n, int64_t e, GError **error)
{
  if (!z || (z->rank == 2 && z->dims[0] == n && z->dims[1] == e))
    return TRUE;
  g_autofree char *shape = owb_tensor_shape_to_string (z);
  owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "scores output has shape %s, expected [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                        shape, n, e);
  return FALSE;
}

static void
set_string (OwbTensor *t, int64_t i, const char *s)
{
  char **d = t->data;
  g_free (d[i]);
  d[i] = g_strdup (s);
}

static const char *
get_string (const OwbTensor *t, int64_t i)
{
  const char *s = ((char *const *) t->data)[i];
  return s ? s : "";
}

static const char *
attr_string (const OwbNode *node, const char *name, const char *def)
{
  return owb_node_get_string (node, name, def);
}

/* A copy of a list attribute (NULL and 0 when absent or of another type). */
static double *
attr_doubles (const OwbNode *node, const char *name, int *n)
{
  const float *f = owb_node_get_floats (node, name, n);
  if (!f)
    {
      *n = 0;
      return NULL;
    }
  double *d = g_new (double, MAX (*n, 1));
  for (int i = 0; i < *n; i++)
    d[i] = f[i];
  return d;
}

/* `name`_as_tensor (a double or float tensor, opset >= 3) or else the float list `name`. */
static gboolean
attr_doubles_or_tensor (const OwbNode *node, const char *name, double **out, int *n, GError **error)
{
  char *tname = g_strconcat (name, "_as_tensor", NULL);
  const OwbAttribute *t = owb_node_get_attribute (node, tname);
  g_free (tname);
  if (t)
    {
      if (t->type != OWB_ATTR_TENSOR || !t->t || (t->t->dtype != OWB_TYPE_DOUBLE && t->t->dtype != OWB_TYPE_FLOAT)
          || t->t->nelems > G_MAXINT32)
        return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "%s_as_tensor must be a double tensor", name);
      *n = (int) t->t->nelems;
      *out = g_new (double, MAX (*n, 1));
      for (int i = 0; i < *n; i++)
        (*out)[i] = owb_tensor_get_double (t->t, i);
      return TRUE;
    }
  *out = attr_doubles (node, name, n);
  return TRUE;
}

static const int64_t *
attr_ints (const OwbNode *node, const char *name, int *n)
{
  const int64_t *v = owb_node_get_ints (node, name, n);
  if (!v)
    *n = 0;
  return v;
}

static char **
attr_strings (const OwbNode *node, const char *name, int *n)
{
  const OwbAttribute *a = owb_node_get_attribute (node, name);
  if (!a || a->type != OWB_ATTR_STRINGS)
    {
      *n = 0;
      return NULL;
    }
  *n = a->n;
  return a->strings;
}

/* ---- post transforms (shared by the classifiers and regressors) ---- */

enum { POST_NONE, POST_SOFTMAX, POST_LOGISTIC, POST_SOFTMAX_ZERO, POST_PROBIT };

static int
parse_post (const OwbNode *node)
{
  static const char *const names[] = { "NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT" };
  const char *s = attr_string (node, "post_transform", "NONE");
  for (int i = 0; i < (int) G_N_ELEMENTS (names); i++)
    if (strcmp (s, names[i]) == 0)
      return i;
  return -1;
}

static double
logistic (double v)
{
  double e = 1.0 / (1.0 + exp (-fabs (v)));
  return v < 0 ? 1.0 - e : e;
}

/* The closed-form approximation of erf^-1 that ONNX Runtime and the ONNX reference use, so that
 * PROBIT scores agree with theirs. */
static double
erf_inv (double x)
{
  double sgn = x < 0 ? -1.0 : 1.0;
  double l = log ((1.0 - x) * (1.0 + x));
  double v = 2.0 / (G_PI * 0.147) + 0.5 * l;
  double v2 = l / 0.147;
  return sgn * sqrt (-v + sqrt (v * v - v2));
}

static double
probit (double v)
{
  return G_SQRT2 * erf_inv (2.0 * v - 1.0);
}

static void
softmax (double *v, int n)
{
  double mx = -INFINITY, sum = 0.0;
  for (int i = 0; i < n; i++)
    mx = MAX (mx, v[i]);
  for (int i = 0; i < n; i++)
    sum += (v[i] = exp (v[i] - mx));
  for (int i = 0; i < n; i++)
    v[i] /= sum;
}

/* Softmax that leaves (near-)zero scores at zero weight. */
static void
softmax_zero (double *v, int n)
{
  double mx = -INFINITY, sum = 0.0;
  for (int i = 0; i < n; i++)
    mx = MAX (mx, v[i]);
  double exp_neg_max = exp (-mx);
  for (int i = 0; i < n; i++)
    {
      v[i] = (v[i] > 1e-7 || v[i] < -1e-7) ? exp (v[i] - mx) : v[i] * exp_neg_max;
      sum += v[i];
    }
  for (int i = 0; i < n; i++)
    v[i] = sum == 0.0 ? 0.5 : v[i] / sum;
}

static void
transform (double *v, int n, int post)
{
  switch (post)
    {
    case POST_SOFTMAX:
      softmax (v, n);
      break;
    case POST_SOFTMAX_ZERO:
      softmax_zero (v, n);
      break;
    case POST_LOGISTIC:
      for (int i = 0; i < n; i++)
        v[i] = logistic (v[i]);
      break;
    case POST_PROBIT:
      for (int i = 0; i < n; i++)
        v[i] = probit (v[i]);
      break;
    default:
      break;
    }
}

static int
argmax (const double *v, int n)
{
  int best = 0;
  for (int i = 1; i < n; i++)
    if (v[i] > v[best])
      best = i;
  return best;
}

/* ---- class labels ---- */

typedef struct {
  int n;
  int64_t *ints;   /* owned, or NULL */
  char **strings;  /* owned, NULL-terminated, or NULL */
} Labels;

static void
labels_init (Labels *l, const OwbNode *node, const char *ints_name)
{
  int ni, ns;
  const int64_t *ints = attr_ints (node, ints_name, &ni);
  char **strings = attr_strings (node, "classlabels_strings", &ns);
  memset (l, 0, sizeof *l);
  if (ns > 0)
    {
      l->n = ns;
      l->strings = g_strdupv (strings);
    }
  else if (ni > 0)
    {
      l->n = ni;
      l->ints = g_memdup2 (ints, sizeof (int64_t) * ni);
    }
}

static void
labels_clear (Labels *l)
{
  g_free (l->ints);
  g_strfreev (l->strings);
}

/* Writes label k (or k itself when there are no labels) to y[row]; y is int64 or string. */
static void
write_label (OwbTensor *y, int64_t row, const Labels *l, int k)
{
  if (y->dtype == OWB_TYPE_STRING)
    {
      if (l->strings && k < l->n)
        set_string (y, row, l->strings[k]);
      else
        {
          char buf[24];
          g_snprintf (buf, sizeof buf, "%d", k);
          set_string (y, row, buf);
        }
    }
  else
    ((int64_t *) y->data)[row] = l->ints && k < l->n ? l->ints[k] : k;
}

/* ================================================================================================ */
/* ---- StringNormalizer ---- */

typedef struct {
  GHashTable *stopwords; /* keys compared as given, or case-folded */
  gboolean case_sensitive;
  int action;            /* 0 none, 1 lower, 2 upper */
} NormalizerParams;

static char *
fold (const char *s)
{
  return g_utf8_validate (s, -1, NULL) ? g_utf8_casefold (s, -1) : g_ascii_strdown (s, -1);
}

static void
normalizer_free (void *state)
{
  NormalizerParams *p = state;
  if (p->stopwords)
    g_hash_table_unref (p->stopwords);
  g_free (p);
}

/* The locale attribute is ignored: case changes follow Unicode's locale-independent rules. */
static gboolean
normalizer_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  NormalizerParams *p = g_new0 (NormalizerParams, 1);
  const char *action = attr_string (node, "case_change_action", "NONE");
  p->action = strcmp (action, "LOWER") == 0 ? 1 : strcmp (action, "UPPER") == 0 ? 2 : 0;
  p->case_sensitive = owb_node_get_int (node, "is_case_sensitive", 0) != 0;
  p->stopwords = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  int n;
  char **words = attr_strings (node, "stopwords", &n);
  for (int i = 0; i < n; i++)
    g_hash_table_add (p->stopwords, p->case_sensitive ? g_strdup (words[i]) : fold (words[i]));
  *state = p;
  return TRUE;
}

static char *
change_case (const char *s, int action)
{
  gboolean utf8 = g_utf8_validate (s, -1, NULL);
  if (action == 1)
    return utf8 ? g_utf8_strdown (s, -1) : g_ascii_strdown (s, -1);
  if (action == 2)
    return utf8 ? g_utf8_strup (s, -1) : g_ascii_strup (s, -1);
  return g_strdup (s);
}

static gboolean
compute_string_normalizer (OwbKernelContext *ctx, GError **error)
{
  const NormalizerParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  if (x->rank != 1 && !(x->rank == 2 && x->dims[0] == 1))
    {
      g_autofree char *shape = owb_tensor_shape_to_string (x);
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input must have shape [C] or [1, C], not %s", shape);
      return FALSE;
    }
  GPtrArray *kept = g_ptr_array_new_with_free_func (g_free);
  for (int64_t i = 0; i < x->nelems; i++)
    {
      const char *s = get_string (x, i);
      gboolean stop;
      if (p->case_sensitive)
        stop = g_hash_table_contains (p->stopwords, s);
      else
        {
          char *f = fold (s);
          stop = g_hash_table_contains (p->stopwords, f);
          g_free (f);
        }
      if (!stop)
        g_ptr_array_add (kept, change_case (s, p->action));
    }
  /* All dropped: one empty string, as the spec asks. */
  if (kept->len == 0)
    g_ptr_array_add (kept, g_strdup (""));
  int64_t dims[2] = { 1, kept->len };
  OwbTensor *y = owb_kernel_context_new_output (ctx, 0, OWB_TYPE_STRING, x->rank, x->rank == 2 ? dims : dims + 1, error);
  if (!y)
    {
      g_ptr_array_unref (kept);
      return FALSE;
    }
  /* The output takes the strings over. */
  char **d = y->data;
  g_ptr_array_set_free_func (kept, NULL);
  for (guint i = 0; i < kept->len; i++)
    d[i] = g_ptr_array_index (kept, i);
  g_ptr_array_unref (kept);
  return TRUE;
}

/* ---- RegexFullMatch ---- */

/* GRegex (PCRE2) stands in for RE2. The pattern is wrapped as (?:pattern)\z and matched anchored, so a
 * match must cover the whole string whatever the alternation order. Differences from RE2: PCRE also
 * accepts backreferences, lookaround, atomic groups and possessive quantifiers (RE2 refuses them);
 * PCRE backtracks, so a pathological pattern can hit GRegex's match limit (reported as an error) where
 * RE2 runs in linear time; strings that are not valid UTF-8 never match (RE2 would match bytes). */
static gboolean
regex_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  const char *pattern = attr_string (node, "pattern", NULL);
  if (!pattern)
    return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute pattern is required");
  char *wrapped = g_strdup_printf ("(?:%s)\\z", pattern);
  GError *local = NULL;
  GRegex *re = g_regex_new (wrapped, G_REGEX_OPTIMIZE | G_REGEX_DOLLAR_ENDONLY, G_REGEX_MATCH_ANCHORED, &local);
  g_free (wrapped);
  if (!re)
    {
      prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "pattern '%s' is not a valid regular expression: %s", pattern,
                     local->message);
      g_error_free (local);
      return FALSE;
    }
  *state = re;
  return TRUE;
}

static void
regex_free (void *state)
{
  g_regex_unref (state);
}

static gboolean
compute_regex_full_match (OwbKernelContext *ctx, GError **error)
{
  GRegex *re = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y)
    return FALSE;
  uint8_t *out = y->data;
  for (int64_t i = 0; i < x->nelems; i++)
    {
      const char *s = get_string (x, i);
      GError *local = NULL;
      out[i] = g_utf8_validate (s, -1, NULL) && g_regex_match_full (re, s, -1, 0, 0, NULL, &local);
      if (local)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "matching element %" G_GINT64_FORMAT ": %s", i,
                                local->message);
          g_error_free (local);
          return FALSE;
        }
    }
  return TRUE;
}

/* ---- StringConcat ---- */

static gboolean
compute_string_concat (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  OwbTensor *z = require_output (ctx, 0, error);
  if (!z)
    return FALSE;
  if (z->nelems == 0)
    return TRUE;
  int rank = z->rank;
  int64_t sa[OWB_MAX_RANK], sb[OWB_MAX_RANK], idx[OWB_MAX_RANK] = { 0 };
  _owb_cpu_broadcast_strides (a->rank, a->dims, rank, z->dims, sa);
  _owb_cpu_broadcast_strides (b->rank, b->dims, rank, z->dims, sb);
  int64_t oa = 0, ob = 0;
  char **out = z->data;
  for (int64_t i = 0; i < z->nelems; i++)
    {
      g_free (out[i]);
      out[i] = g_strconcat (get_string (a, oa), get_string (b, ob), NULL);
      /* Odometer step over the output index, moving both input offsets by their strides. */
      for (int d = rank - 1; d >= 0; d--)
        {
          oa += sa[d];
          ob += sb[d];
          if (++idx[d] < z->dims[d])
            break;
          oa -= sa[d] * z->dims[d];
          ob -= sb[d] * z->dims[d];
          idx[d] = 0;
        }
    }
  return TRUE;
}

/* ---- StringSplit ---- */

typedef struct {
  char *delimiter; /* NULL: split on runs of whitespace */
  int64_t maxsplit; /* < 0: no limit */
} SplitParams;

static gboolean
split_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  SplitParams *p = g_new0 (SplitParams, 1);
  const char *d = attr_string (node, "delimiter", "");
  p->delimiter = d[0] ? g_strdup (d) : NULL;
  p->maxsplit = owb_node_get_attribute (node, "maxsplit") ? owb_node_get_int (node, "maxsplit", -1) : -1;
  *state = p;
  return TRUE;
}

static void
split_free (void *state)
{
  SplitParams *p = state;
  g_free (p->delimiter);
  g_free (p);
}

/* Python's str.isspace for the characters that matter in text. */
static gboolean
is_space_at (const char *s, const char **next)
{
  gunichar c = g_utf8_get_char_validated (s, -1);
  if (c == (gunichar) -1 || c == (gunichar) -2)
    {
      *next = s + 1;
      return FALSE;
    }
  *next = g_utf8_next_char (s);
  return g_unichar_isspace (c) || (c >= 0x1c && c <= 0x1f) || c == 0x85;
}

/* Splits like Python's str.split (sep, maxsplit): pieces are appended to `out`. */
static void
split_one (const char *s, const SplitParams *p, GPtrArray *out)
{
  int64_t splits = 0;
  if (p->delimiter)
    {
      gsize dl = strlen (p->delimiter);
      const char *start = s;
      const char *hit;
      while ((p->maxsplit < 0 || splits < p->maxsplit) && (hit = strstr (start, p->delimiter)))
        {
          g_ptr_array_add (out, g_strndup (start, hit - start));
          start = hit + dl;
          splits++;
        }
      g_ptr_array_add (out, g_strdup (start));
      return;
    }
  const char *c = s, *next;
  for (;;)
    {
      /* Skip a run of whitespace; stop at the end. */
      while (*c && is_space_at (c, &next))
        c = next;
      if (!*c)
        return;
      if (p->maxsplit >= 0 && splits >= p->maxsplit)
        {
          /* The rest, with leading whitespace already stripped and trailing whitespace kept. */
          g_ptr_array_add (out, g_strdup (c));
          return;
        }
      const char *start = c;
      while (*c && !is_space_at (c, &next))
        c = next;
      g_ptr_array_add (out, g_strndup (start, c - start));
      splits++;
    }
}

static gboolean
compute_string_split (OwbKernelContext *ctx, GError **error)
{
  const SplitParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  if (x->rank >= OWB_MAX_RANK)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input rank %d is too large", x->rank);
      return FALSE;
    }
  /* All pieces in one array; starts[i] is where element i's begin. */
  GPtrArray *pieces = g_ptr_array_new_with_free_func (g_free);
  int64_t *starts = g_new (int64_t, x->nelems + 1);
  int64_t most = 0;
  for (int64_t i = 0; i < x->nelems; i++)
    {
      starts[i] = pieces->len;
      split_one (get_string (x, i), p, pieces);
      most = MAX (most, (int64_t) pieces->len - starts[i]);
    }
  starts[x->nelems] = pieces->len;
  int64_t dims[OWB_MAX_RANK];
  memcpy (dims, x->dims, sizeof (int64_t) * x->rank);
  dims[x->rank] = most;
  OwbTensor *y = owb_kernel_context_new_output (ctx, 0, OWB_TYPE_STRING, x->rank + 1, dims, error);
  if (!y)
    {
      g_ptr_array_unref (pieces);
      g_free (starts);
      return FALSE;
    }
  OwbTensor *z = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  /* The output takes the strings over; short rows are padded with "". */
  g_ptr_array_set_free_func (pieces, NULL);
  char **out = y->data;
  for (int64_t i = 0; i < x->nelems; i++)
    {
      int64_t count = starts[i + 1] - starts[i];
      char **row = out + i * most;
      for (int64_t k = 0; k < count; k++)
        row[k] = g_ptr_array_index (pieces, starts[i] + k);
      for (int64_t k = count; k < most; k++)
        row[k] = g_strdup ("");
      if (z)
        ((int64_t *) z->data)[i] = count;
    }
  g_ptr_array_unref (pieces);
  g_free (starts);
  return TRUE;
}

/* ---- TfIdfVectorizer ---- */

/* The pool's n-grams as a trie: node 0 is the root; an edge (parent, item) leads to a child. A node
 * whose path spells a pool n-gram records the n-gram's output column. */
typedef struct {
  int parent;
  int64_t item;      /* integer pools */
  const char *text;  /* string pools (points into the params' copy of the pool) */
} TrieKey;

typedef struct {
  int column;        /* output column of the n-gram ending here, or -1 */
  gboolean has_children;
} TrieNode;

typedef struct {
  gboolean strings;
  int mode;          /* 0 TF, 1 IDF, 2 TFIDF */
  int64_t min_gram, max_gram, max_skip;
  int64_t out_size;
  double *weights;   /* by output column, or NULL */
  GHashTable *edges; /* TrieKey * -> child index + 1 */
  GArray *nodes;     /* of TrieNode */
  TrieKey *keys;     /* storage of the hash keys */
  char **pool;       /* owned copy of pool_strings */
} TfIdfParams;

static guint
trie_hash (gconstpointer k)
{
  const TrieKey *key = k;
  guint h = key->text ? g_str_hash (key->text) : (guint) (key->item ^ (key->item >> 32));
  return h * 31u + (guint) key->parent;
}

static gboolean
trie_equal (gconstpointer a, gconstpointer b)
{
  const TrieKey *x = a, *y = b;
  if (x->parent != y->parent)
    return FALSE;
  if (x->text || y->text)
    return x->text && y->text && strcmp (x->text, y->text) == 0;
  return x->item == y->item;
}

static int
trie_child (const TfIdfParams *p, int parent, int64_t item, const char *text)
{
  TrieKey key = { parent, item, text };
  return GPOINTER_TO_INT (g_hash_table_lookup (p->edges, &key)) - 1;
}

static void
tfidf_free (void *state)
{
  TfIdfParams *p = state;
  if (p->edges)
    g_hash_table_unref (p->edges);
  if (p->nodes)
    g_array_unref (p->nodes);
  g_free (p->keys);
  g_free (p->weights);
  g_strfreev (p->pool);
  g_free (p);
}

static gboolean
tfidf_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  TfIdfParams *p = g_new0 (TfIdfParams, 1);
  const char *mode = attr_string (node, "mode", "TF");
  p->mode = strcmp (mode, "IDF") == 0 ? 1 : strcmp (mode, "TFIDF") == 0 ? 2 : 0;
  p->min_gram = owb_node_get_int (node, "min_gram_length", 1);
  p->max_gram = owb_node_get_int (node, "max_gram_length", 1);
  p->max_skip = owb_node_get_int (node, "max_skip_count", 0);
  int n_idx, n_counts, n_ints, n_strings;
  const int64_t *idx = attr_ints (node, "ngram_indexes", &n_idx);
  const int64_t *counts = attr_ints (node, "ngram_counts", &n_counts);
  const int64_t *ints = attr_ints (node, "pool_int64s", &n_ints);
  char **strings = attr_strings (node, "pool_strings", &n_strings);
  p->strings = n_strings > 0;
  int pool_len = p->strings ? n_strings : n_ints;
  if (p->min_gram < 1 || p->max_gram < p->min_gram || p->max_skip < 0 || p->max_skip > G_MAXINT32)
    {
      prepare_error (node, error, OWB_ERROR_INVALID_MODEL,
                     "need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0 (got %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                     ", %" G_GINT64_FORMAT ")",
                     p->min_gram, p->max_gram, p->max_skip);
      goto fail;
    }
  for (int i = 0; i < n_idx; i++)
    p->out_size = MAX (p->out_size, idx[i] + 1);
  int n_w;
  double *w = attr_doubles (node, "weights", &n_w);
  if (n_w > 0 && p->mode != 0)
    {
      /* Weights scale output columns (as ONNX Runtime and the reference read them). */
      if (n_w < p->out_size)
        {
          g_free (w);
          prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "%d weights for %" G_GINT64_FORMAT " output columns", n_w,
                         p->out_size);
          goto fail;
        }
      p->weights = w;
    }
  else
    g_free (w);

  p->pool = p->strings ? g_strdupv (strings) : NULL;
  p->nodes = g_array_new (FALSE, FALSE, sizeof (TrieNode));
  p->keys = g_new0 (TrieKey, MAX (pool_len, 1));
  p->edges = g_hash_table_new (trie_hash, trie_equal);
  TrieNode root = { -1, FALSE };
  g_array_append_val (p->nodes, root);
  int n_keys = 0;
  int64_t ngram_id = 0;
  for (int i = 0; i < n_counts; i++)
    {
      int64_t n = i + 1;
      int64_t start = counts[i], end = i + 1 < n_counts ? counts[i + 1] : pool_len;
      if (start < 0 || end < start || end > pool_len)
        {
          prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "ngram_counts[%d] = %" G_GINT64_FORMAT " is out of order or past the pool",
                         i, start);
          goto fail;
        }
      int64_t grams = (end - start) / n;
      gboolean wanted = n >= p->min_gram && n <= p->max_gram;
      for (int64_t g = 0; g < grams; g++, ngram_id++)
        {
          if (!wanted)
            continue;
          if (ngram_id >= n_idx)
            {
              prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "the pool holds more n-grams than ngram_indexes (%d)", n_idx);
              goto fail;
            }
          int cur = 0;
          for (int64_t k = 0; k < n; k++)
            {
              int64_t pos = start + g * n + k;
              const char *text = p->strings ? p->pool[pos] : NULL;
              int64_t item = p->strings ? 0 : ints[pos];
              int child = trie_child (p, cur, item, text);
              if (child < 0)
                {
                  TrieNode fresh = { -1, FALSE };
                  g_array_append_val (p->nodes, fresh);
                  child = p->nodes->len - 1;
                  TrieKey *key = &p->keys[n_keys++];
                  *key = (TrieKey) { cur, item, text };
                  g_hash_table_insert (p->edges, key, GINT_TO_POINTER (child + 1));
                  g_array_index (p->nodes, TrieNode, cur).has_children = TRUE;
                }
              cur = child;
            }
          g_array_index (p->nodes, TrieNode, cur).column = (int) idx[ngram_id];
        }
    }
  *state = p;
  return TRUE;
fail:
  tfidf_free (p);
  return FALSE;
}

typedef struct {
  const TfIdfParams *p;
  const OwbTensor *x;
  int64_t cols;
  float *out;
  gboolean ok;
} TfIdfJob;

static void
tfidf_rows (int64_t begin, int64_t end, gpointer data)
{
  TfIdfJob *job = data;
  const TfIdfParams *p = job->p;
  const OwbTensor *x = job->x;
  const TrieNode *nodes = (const TrieNode *) p->nodes->data;
  uint32_t *freq = g_new (uint32_t, MAX (p->out_size, 1));
  for (int64_t r = begin; r < end; r++)
    {
      memset (freq, 0, sizeof (uint32_t) * p->out_size);
      int64_t row0 = r * job->cols, row_end = job->cols;
      int64_t start_size = p->min_gram;
      for (int64_t skip = 1; skip <= p->max_skip + 1; skip++)
        {
          for (int64_t s = 0; s < row_end; s++)
            {
              if (s + skip * (start_size - 1) >= row_end)
                break;
              int cur = 0;
              int64_t size = 1;
              for (int64_t item = s; nodes[cur].has_children && size <= p->max_gram && item < row_end; item += skip, size++)
                {
                  int64_t at = row0 + item;
                  int child;
                  if (p->strings)
                    child = trie_child (p, cur, 0, get_string (x, at));
                  else
                    child = trie_child (p, cur, x->dtype == OWB_TYPE_INT32 ? ((const int32_t *) x->data)[at]
                                                                           : ((const int64_t *) x->data)[at], NULL);
                  if (child < 0)
                    break;
                  if (size >= start_size && nodes[child].column >= 0)
                    freq[nodes[child].column]++;
                  cur = child;
                }
            }
          /* Unigrams do not depend on the skip: count them on the first pass only. */
          if (start_size == 1)
            {
              start_size = 2;
              if (start_size > p->max_gram)
                break;
            }
        }
      float *y = job->out + r * p->out_size;
      for (int64_t c = 0; c < p->out_size; c++)
        {
          double w = p->weights ? p->weights[c] : 1.0;
          if (p->mode == 0)
            y[c] = (float) freq[c];
          else if (p->mode == 1)
            y[c] = freq[c] > 0 ? (float) w : 0.0f;
          else
            y[c] = (float) (w * freq[c]);
        }
    }
  g_free (freq);
}

static gboolean
compute_tfidf (OwbKernelContext *ctx, GError **error)
{
  const TfIdfParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y)
    return FALSE;
  if ((x->dtype == OWB_TYPE_STRING) != p->strings)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "input type %s does not match the pool", owb_data_type_name (x->dtype));
      return FALSE;
    }
  int64_t rows = x->rank == 2 ? x->dims[0] : 1;
  int64_t cols = x->rank == 2 ? x->dims[1] : x->rank == 1 ? x->dims[0] : 1;
  if (y->nelems != rows * p->out_size)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output has %" G_GINT64_FORMAT " elements, expected %" G_GINT64_FORMAT,
                            y->nelems, rows * p->out_size);
      return FALSE;
    }
  TfIdfJob job = { p, x, cols, y->data, TRUE };
  owb_parallel_for (ctx->pool, rows, 1, tfidf_rows, &job);
  return TRUE;
}

/* ================================================================================================ */
/* ---- LinearClassifier, LinearRegressor ---- */

typedef struct {
  double *coef;
  int n_coef;
  double *intercepts;
  int n_intercepts;
  int post;
  int64_t targets;   /* LinearRegressor */
  Labels labels;     /* LinearClassifier */
} LinearParams;

static void
linear_free (void *state)
{
  LinearParams *p = state;
  g_free (p->coef);
  g_free (p->intercepts);
  labels_clear (&p->labels);
  g_free (p);
}

static gboolean
linear_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state, GError **error)
{
  LinearParams *p = g_new0 (LinearParams, 1);
  p->coef = attr_doubles (node, "coefficients", &p->n_coef);
  p->intercepts = attr_doubles (node, "intercepts", &p->n_intercepts);
  p->post = parse_post (node);
  p->targets = owb_node_get_int (node, "targets", 1);
  labels_init (&p->labels, node, "classlabels_ints");
  if (p->post < 0 || p->n_coef == 0 || p->targets < 1)
    {
      linear_free (p);
      return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "bad post_transform, coefficients or targets");
    }
  *state = p;
  return TRUE;
}

/* scores[n, k] = x[n, :] . coef[k, :] + intercept[k], in double, in a new buffer; NULL with an
 * error when x cannot be read as doubles. */
static double *
linear_scores_new (OwbKernelContext *ctx, const LinearParams *p, const OwbTensor *xt, int64_t n, int64_t f, int64_t k,
                   GError **error)
{
  g_autofree double *x = to_doubles (ctx, xt, error);
  if (!x)
    return NULL;
  double *scores = g_new (double, MAX (n * k, 1));
  for (int64_t r = 0; r < n; r++)
    for (int64_t j = 0; j < k; j++)
      {
        const double *w = p->coef + j * f, *xr = x + r * f;
        double s = p->n_intercepts > 0 ? p->intercepts[j] : 0.0;
        for (int64_t i = 0; i < f; i++)
          s += xr[i] * w[i];
        scores[r * k + j] = s;
      }
  return scores;
}

static gboolean
compute_linear_classifier (OwbKernelContext *ctx, GError **error)
{
  const LinearParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  int64_t n, f;
  if (!rows_features (ctx, x, &n, &f, error))
    return FALSE;
  if (f == 0 || p->n_coef % f != 0 || (p->n_intercepts > 0 && p->n_intercepts != p->n_coef / f))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%d coefficients and %d intercepts do not fit %" G_GINT64_FORMAT " features",
                            p->n_coef, p->n_intercepts, f);
      return FALSE;
    }
  int64_t k = p->n_coef / f;
  gboolean binary = k == 1 && p->labels.n == 2;
  int64_t e = binary ? 2 : k;
  OwbTensor *y = require_output (ctx, 0, error);
  OwbTensor *z = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  if (!y || !check_columns (ctx, z, n, e, error))
    return FALSE;
  double *scores = linear_scores_new (ctx, p, x, n, f, k, error);
  if (!scores)
    return FALSE;
  double *row = g_new (double, MAX (e, 1));
  for (int64_t r = 0; r < n; r++)
    {
      const double *s = scores + r * k;
      if (k == 1)
        {
          /* One score: positive means the second label (or 1 when there are not two labels). */
          gboolean positive = s[0] > 0;
          if (p->labels.n == 2)
            write_label (y, r, &p->labels, positive ? 1 : 0);
          else if (y->dtype == OWB_TYPE_STRING)
            set_string (y, r, positive ? "1" : "0");
          else
            ((int64_t *) y->data)[r] = positive ? 1 : 0;
          if (binary)
            row[0] = -s[0], row[1] = s[0];
          else
            row[0] = s[0];
        }
      else
        {
          memcpy (row, s, sizeof (double) * k);
          write_label (y, r, &p->labels, argmax (s, (int) k));
        }
      if (z)
        {
          transform (row, (int) e, p->post);
          float *zr = (float *) z->data + r * e;
          for (int64_t j = 0; j < e; j++)
            zr[j] = (float) row[j];
        }
    }
  g_free (row);
  g_free (scores);
  return TRUE;
}

static gboolean
compute_linear_regressor (OwbKernelContext *ctx, GError **error)
{
  const LinearParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  int64_t n, f, k = p->targets;
  if (!rows_features (ctx, x, &n, &f, error))
    return FALSE;
  if (p->n_coef != k * f || (p->n_intercepts > 0 && p->n_intercepts != k))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "%d coefficients and %d intercepts do not fit %" G_GINT64_FORMAT
                            " targets of %" G_GINT64_FORMAT " features", p->n_coef, p->n_intercepts, k, f);
      return FALSE;
    }
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y || !check_columns (ctx, y, n, k, error))
    return FALSE;
  double *scores = linear_scores_new (ctx, p, x, n, f, k, error);
  if (!scores)
    return FALSE;
  float *out = y->data;
  for (int64_t r = 0; r < n; r++)
    {
      transform (scores + r * k, (int) k, p->post);
      for (int64_t j = 0; j < k; j++)
        out[r * k + j] = (float) scores[r * k + j];
    }
  g_free (scores);
  return TRUE;
}

/* ---- SVMClassifier, SVMRegressor ---- */

enum { KERNEL_LINEAR, KERNEL_POLY, KERNEL_RBF, KERNEL_SIGMOID };

typedef struct {
  int kernel;
  double gamma, coef0;
  int degree;
  int post;
  double *coef, *sv, *rho, *prob_a, *prob_b;
  int n_coef, n_sv, n_rho, n_prob;
  int64_t *vpc;       /* vectors per class */
  int64_t *first;     /* first support vector of each class */
  int64_t vectors;    /* total support vectors (0: linear mode) */
  int64_t features;
  int classes;
  Labels labels;
  gboolean one_class; /* SVMRegressor */
} SvmParams;

static void
svm_free (void *state)
{
  SvmParams *p = state;
  g_free (p->coef);
  g_free (p->sv);
  g_free (p->rho);
  g_free (p->prob_a);
  g_free (p->prob_b);
  g_free (p->vpc);
  g_free (p->first);
  labels_clear (&p->labels);
  g_free (p);
}

static SvmParams *
svm_parse_common (const OwbNode *node, GError **error)
{
  SvmParams *p = g_new0 (SvmParams, 1);
  const char *k = attr_string (node, "kernel_type", "LINEAR");
  p->kernel = strcmp (k, "POLY") == 0 ? KERNEL_POLY : strcmp (k, "RBF") == 0 ? KERNEL_RBF
            : strcmp (k, "SIGMOID") == 0 ? KERNEL_SIGMOID : KERNEL_LINEAR;
  int n_params;
  double *params = attr_doubles (node, "kernel_params", &n_params);
  if (n_params >= 3)
    {
      p->gamma = params[0];
      p->coef0 = params[1];
      /* A float attribute: converted only when it fits (out of range it is undefined in C). */
      if (!(params[2] >= -1024 && params[2] <= 1024))
        {
          g_free (params);
          svm_free (p);
          prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "kernel_params[2] (the degree) is not in [-1024, 1024]");
          return NULL;
        }
      p->degree = (int) params[2];
    }
  g_free (params);
  p->post = parse_post (node);
  p->coef = attr_doubles (node, "coefficients", &p->n_coef);
  p->sv = attr_doubles (node, "support_vectors", &p->n_sv);
  p->rho = attr_doubles (node, "rho", &p->n_rho);
  if (p->post < 0 || p->n_rho == 0)
    {
      svm_free (p);
      prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "bad post_transform, or rho is missing");
      return NULL;
    }
  return p;
}

static gboolean
svm_classifier_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                        GError **error)
{
  SvmParams *p = svm_parse_common (node, error);
  if (!p)
    return FALSE;
  labels_init (&p->labels, node, "classlabels_ints");
  p->classes = MAX (p->labels.n, 1);
  int n_vpc, n_pb;
  const int64_t *vpc = attr_ints (node, "vectors_per_class", &n_vpc);
  p->prob_a = attr_doubles (node, "prob_a", &p->n_prob);
  p->prob_b = attr_doubles (node, "prob_b", &n_pb);
  for (int i = 0; i < n_vpc; i++)
    p->vectors += vpc[i];
  int64_t pairs = (int64_t) p->classes * (p->classes - 1) / 2;
  const char *bad = NULL;
  if (p->vectors > 0)
    {
      p->vpc = g_memdup2 (vpc, sizeof (int64_t) * n_vpc);
      p->first = g_new (int64_t, n_vpc);
      for (int i = 0, at = 0; i < n_vpc; at += vpc[i], i++)
        p->first[i] = at;
      p->features = p->n_sv / p->vectors;
      if (n_vpc != p->classes)
        bad = "vectors_per_class must have one entry per class";
      else if (p->features * p->vectors != p->n_sv)
        bad = "support_vectors do not split into vectors_per_class vectors";
      else if (p->n_coef != (p->classes - 1) * p->vectors)
        bad = "coefficients must hold (classes - 1) x vectors values";
      else if (p->n_rho < pairs)
        bad = "rho must hold one value per pair of classes";
      else if (p->n_prob > 0 && (p->n_prob < pairs || n_pb != p->n_prob))
        bad = "prob_a and prob_b must hold one value per pair of classes";
    }
  else
    {
      p->features = p->n_coef / p->classes;
      if (p->features * p->classes != p->n_coef)
        bad = "coefficients do not split into one row per class";
    }
  if (bad)
    {
      svm_free (p);
      return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "%s", bad);
    }
  *state = p;
  return TRUE;
}

static gboolean
svm_regressor_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                       GError **error)
{
  SvmParams *p = svm_parse_common (node, error);
  if (!p)
    return FALSE;
  p->vectors = owb_node_get_int (node, "n_supports", 0);
  p->one_class = owb_node_get_int (node, "one_class", 0) != 0;
  const char *bad = NULL;
  if (p->vectors < 0)
    bad = "n_supports is negative";
  else if (p->vectors > 0)
    {
      p->features = p->n_sv / p->vectors;
      if (p->features * p->vectors != p->n_sv || p->n_coef < p->vectors)
        bad = "support_vectors or coefficients do not fit n_supports";
    }
  else
    p->features = p->n_coef;
  if (bad)
    {
      svm_free (p);
      return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "%s", bad);
    }
  *state = p;
  return TRUE;
}

static double
svm_kernel (const SvmParams *p, const double *a, const double *b, int64_t f)
{
  double s = 0.0;
  if (p->kernel == KERNEL_RBF)
    {
      for (int64_t i = 0; i < f; i++)
        {
          double d = a[i] - b[i];
          s += d * d;
        }
      return exp (-p->gamma * s);
    }
  for (int64_t i = 0; i < f; i++)
    s += a[i] * b[i];
  switch (p->kernel)
    {
    case KERNEL_POLY:
      return pow (p->gamma * s + p->coef0, p->degree);
    case KERNEL_SIGMOID:
      return tanh (p->gamma * s + p->coef0);
    default:
      return s;
    }
}

/* Pairwise coupling of libsvm (Wu, Lin and Weng 2004), in double as scikit-learn runs it: r[i*k+j] is
 * the probability of class i against class j; p receives the class probabilities. */
static void
multiclass_probability (int k, const double *r, double *p, double *q, double *qp)
{
  int max_iter = MAX (100, k);
  double eps = 0.005 / k;
  for (int t = 0; t < k; t++)
    {
      p[t] = 1.0 / k;
      q[t * k + t] = 0;
      for (int j = 0; j < t; j++)
        {
          q[t * k + t] += r[j * k + t] * r[j * k + t];
          q[t * k + j] = q[j * k + t];
        }
      for (int j = t + 1; j < k; j++)
        {
          q[t * k + t] += r[j * k + t] * r[j * k + t];
          q[t * k + j] = -r[j * k + t] * r[t * k + j];
        }
    }
  for (int iter = 0; iter < max_iter; iter++)
    {
      double pqp = 0;
      for (int t = 0; t < k; t++)
        {
          qp[t] = 0;
          for (int j = 0; j < k; j++)
            qp[t] += q[t * k + j] * p[j];
          pqp += p[t] * qp[t];
        }
      double max_error = 0;
      for (int t = 0; t < k; t++)
        max_error = MAX (max_error, fabs (qp[t] - pqp));
      if (max_error < eps)
        break;
      for (int t = 0; t < k; t++)
        {
          double diff = (-qp[t] + pqp) / q[t * k + t];
          p[t] += diff;
          pqp = (pqp + diff * (diff * q[t * k + t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
          for (int j = 0; j < k; j++)
            {
              qp[j] = (qp[j] + diff * q[t * k + j]) / (1 + diff);
              p[j] /= (1 + diff);
            }
        }
    }
}

typedef struct {
  const SvmParams *p;
  const double *x;
  int64_t f, e;
  OwbTensor *labels;
  float *scores;      /* NULL when the scores output is not wanted */
  int64_t n, slices;  /* rows, split into this many slices of about n / slices rows */
  double *scratch;    /* one block of slice_doubles per slice */
  int64_t slice_doubles;
} SvmJob;

/* Doubles one slice of rows needs: the kernel values and pairwise scores of a support-vector
 * model, votes, and the k x k pairwise-coupling matrices only when probabilities are asked for.
 * The class count comes from the model (a 400 KB list of 50,000 labels asks for 2.5e9 pairs), so
 * the sum saturates at -1 for _owb_cpu_scratch_new to refuse. */
static int64_t
svm_slice_doubles (const SvmParams *p)
{
  int64_t k = p->classes, pairs = k * (k - 1) / 2; /* classes < 2^31: no overflow in 64 bits */
  gboolean svc = p->vectors > 0, proba = svc && p->n_prob > 0;
  int64_t kk = proba ? k * k : 0, probs = proba ? k : 0;
  int64_t parts[] = { svc ? MAX (p->vectors, 1) : 0, MAX (MAX (svc ? pairs : 0, k), 2), svc ? k : 0, kk, kk, probs, probs };
  int64_t sum = 0;
  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      if (parts[i] > G_MAXINT64 - sum)
        return -1;
      sum += parts[i];
    }
  return sum;
}

static void
svm_classifier_rows (int64_t begin, int64_t end, double *scratch, const SvmJob *job)
{
  const SvmParams *p = job->p;
  int64_t f = job->f;
  int k = p->classes;
  int64_t pairs = (int64_t) k * (k - 1) / 2;
  gboolean svc = p->vectors > 0, proba = svc && p->n_prob > 0;
  double *kern = scratch, *scores = kern + (svc ? MAX (p->vectors, 1) : 0);
  double *votes = scores + MAX (MAX (svc ? pairs : 0, k), 2);
  double *r = votes + (svc ? k : 0), *q = r + (proba ? (int64_t) k * k : 0), *qp = q + (proba ? (int64_t) k * k : 0);
  double *prob = qp + (proba ? k : 0);
  for (int64_t row = begin; row < end; row++)
    {
      const double *xr = job->x + row * f;
      int label;
      int ns;
      if (svc)
        {
          for (int64_t j = 0; j < p->vectors; j++)
            kern[j] = svm_kernel (p, xr, p->sv + j * f, f);
          memset (votes, 0, sizeof (double) * k);
          int at = 0;
          for (int i = 0; i < k; i++)
            for (int j = i + 1; j < k; j++, at++)
              {
                /* Class i's vectors weigh with coefficient row j-1, class j's with row i. */
                double s = p->rho[at];
                const double *ci = p->coef + (j - 1) * p->vectors, *cj = p->coef + i * p->vectors;
                for (int64_t v = p->first[i]; v < p->first[i] + p->vpc[i]; v++)
                  s += ci[v] * kern[v];
                for (int64_t v = p->first[j]; v < p->first[j] + p->vpc[j]; v++)
                  s += cj[v] * kern[v];
                scores[at] = s;
                votes[s > 0 ? i : j] += 1;
              }
          label = argmax (votes, k);
          ns = pairs;
          if (proba)
            {
              at = 0;
              for (int i = 0; i < k; i++)
                for (int j = i + 1; j < k; j++, at++)
                  {
                    /* libsvm's sigmoid_predict, clipped as libsvm does. */
                    double v = 1.0 - logistic (scores[at] * p->prob_a[at] + p->prob_b[at]);
                    v = CLAMP (v, 1e-7, 1 - 1e-7);
                    r[i * k + j] = v;
                    r[j * k + i] = 1 - v;
                  }
              if (k == 2)
                prob[0] = r[1], prob[1] = r[2];
              else
                multiclass_probability (k, r, prob, q, qp);
              memcpy (scores, prob, sizeof (double) * k);
              ns = k;
            }
          else if (pairs == 1)
            {
              scores[1] = scores[0];
              scores[0] = -scores[0];
              ns = 2;
            }
        }
      else
        {
          for (int j = 0; j < k; j++)
            {
              const double *w = p->coef + j * f;
              double s = p->n_rho >= k ? p->rho[j] : p->rho[0];
              for (int64_t i = 0; i < f; i++)
                s += xr[i] * w[i];
              scores[j] = s;
            }
          label = argmax (scores, k);
          ns = k;
        }
      write_label (job->labels, row, &p->labels, label);
      if (job->scores)
        {
          transform (scores, ns, p->post);
          float *zr = job->scores + row * job->e;
          for (int j = 0; j < ns; j++)
            zr[j] = (float) scores[j];
        }
    }
}

/* Slice i of the rows, with slice i's block of the scratch: the scratch is allocated once, before
 * the workers start, so that its size fails the run cleanly instead of aborting in a worker. */
static void
svm_classifier_slices (int64_t begin, int64_t end, gpointer data)
{
  const SvmJob *job = data;
  for (int64_t i = begin; i < end; i++)
    svm_classifier_rows (job->n * i / job->slices, job->n * (i + 1) / job->slices,
                         job->scratch + i * job->slice_doubles, job);
}

/* x as [n, f] rows of the features the SVM was trained on. */
static gboolean
svm_rows_features (OwbKernelContext *ctx, const SvmParams *p, const OwbTensor *x, int64_t *n, int64_t *f, GError **error)
{
  if (!rows_features (ctx, x, n, f, error))
    return FALSE;
  if (*f != p->features)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input has %" G_GINT64_FORMAT " features, the model %" G_GINT64_FORMAT,
                            *f, p->features);
      return FALSE;
    }
  return TRUE;
}

static gboolean
compute_svm_classifier (OwbKernelContext *ctx, GError **error)
{
  const SvmParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  int64_t n, f;
  if (!svm_rows_features (ctx, p, x, &n, &f, error))
    return FALSE;
  int k = p->classes;
  int64_t pairs = (int64_t) k * (k - 1) / 2;
  gboolean svc = p->vectors > 0, proba = svc && p->n_prob > 0;
  int64_t e = !svc ? k : proba ? k : pairs == 1 ? 2 : pairs;
  OwbTensor *y = require_output (ctx, 0, error);
  OwbTensor *z = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  if (!y || !check_columns (ctx, z, n, e, error))
    return FALSE;
  if (n == 0)
    return TRUE;
  /* One slice per thread, or fewer where rows are few and cheap. */
  int64_t work = MAX (1, (p->vectors + k) * f), grain = MAX (1, 16384 / work);
  int threads = _owb_cpu_pool_threads (ctx->pool);
  int64_t slices = MIN (threads, (n + grain - 1) / grain), per = svm_slice_doubles (p);
  g_autofree double *scratch
    = _owb_cpu_scratch_new (ctx, per < 0 || per > G_MAXINT64 / slices ? -1 : per * slices, sizeof (double),
                            "SVM scores and pairwise-coupling terms", error);
  if (!scratch)
    return FALSE;
  double *xd = to_doubles (ctx, x, error);
  if (!xd)
    return FALSE;
  SvmJob job = { p, xd, f, e, y, z ? z->data : NULL, n, slices, scratch, per };
  owb_parallel_for (ctx->pool, slices, 1, svm_classifier_slices, &job);
  g_free (xd);
  return TRUE;
}

static gboolean
compute_svm_regressor (OwbKernelContext *ctx, GError **error)
{
  const SvmParams *p = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  int64_t n, f;
  if (!svm_rows_features (ctx, p, x, &n, &f, error))
    return FALSE;
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y || !check_columns (ctx, y, n, 1, error))
    return FALSE;
  double *xd = to_doubles (ctx, x, error);
  if (!xd)
    return FALSE;
  float *out = y->data;
  for (int64_t row = 0; row < n; row++)
    {
      const double *xr = xd + row * f;
      double s = p->rho[0];
      if (p->vectors > 0)
        for (int64_t j = 0; j < p->vectors; j++)
          s += p->coef[j] * svm_kernel (p, xr, p->sv + j * f, f);
      else
        for (int64_t i = 0; i < f; i++)
          s += xr[i] * p->coef[i];
      if (p->one_class)
        s = s > 0 ? 1.0 : -1.0;
      transform (&s, 1, p->post);
      out[row] = (float) s;
    }
  g_free (xd);
  return TRUE;
}

/* ================================================================================================ */
/* ---- TreeEnsembleClassifier, TreeEnsembleRegressor, TreeEnsemble ---- */

/* One array of nodes for all trees, whatever the attribute layout the op uses. */
enum { MODE_LEQ, MODE_LT, MODE_GTE, MODE_GT, MODE_EQ, MODE_NEQ, MODE_MEMBER, MODE_LEAF };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX };

typedef struct {
  double value;          /* threshold */
  int32_t feature;
  uint8_t mode;
  uint8_t missing_true;  /* a NaN feature takes the true branch */
  int32_t true_child, false_child;
  int32_t first, count;  /* leaves: weights [first, first+count); MEMBER: members [first, first+count) */
} TreeNode;

typedef struct {
  TreeNode *nodes;
  int n_nodes;
  int32_t *roots;
  int n_trees;
  int32_t *w_target;
  double *w_value;
  double *members;       /* sorted per node */
  int n_targets;
  int max_feature;
  int aggregate;
  int post;
  double *base;
  int n_base;
  gboolean double_output; /* TreeEnsemble: output as the input type */
  /* classifiers */
  gboolean classifier;
  Labels labels;
  gboolean binary;       /* two labels, weights for one class only */
  int binary_class;
} Trees;

static void
trees_free (void *state)
{
  Trees *t = state;
  g_free (t->nodes);
  g_free (t->roots);
  g_free (t->w_target);
  g_free (t->w_value);
  g_free (t->members);
  g_free (t->base);
  labels_clear (&t->labels);
  g_free (t);
}

static int
parse_mode (const char *s)
{
  static const char *const names[] = { "BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ",
                                       "BRANCH_MEMBER", "LEAF" };
  for (int i = 0; i < (int) G_N_ELEMENTS (names); i++)
    if (strcmp (s, names[i]) == 0)
      return i;
  return -1;
}

/* Checks that each tree is a tree (no interior node reached twice: no cycles) and records the
 * largest feature an interior node reads. */
static gboolean
trees_check (const OwbNode *node, Trees *t, GError **error)
{
  int32_t *seen = g_new0 (int32_t, MAX (t->n_nodes, 1));
  /* Each interior node is expanded once per tree, pushing two: the stack never holds more than this. */
  int32_t *stack = g_new (int32_t, 2 * (gsize) t->n_nodes + 2);
  gboolean ok = TRUE;
  t->max_feature = -1;
  for (int tr = 0; ok && tr < t->n_trees; tr++)
    {
      int sp = 0;
      stack[sp++] = t->roots[tr];
      while (ok && sp > 0)
        {
          int32_t i = stack[--sp];
          TreeNode *nd = &t->nodes[i];
          if (nd->mode == MODE_LEAF)
            continue;
          if (seen[i] == tr + 1)
            {
              ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "tree %d reaches node %d twice (a cycle?)", tr, i);
              break;
            }
          seen[i] = tr + 1;
          if (nd->feature < 0)
            ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "node %d has a negative feature id", i);
          t->max_feature = MAX (t->max_feature, nd->feature);
          stack[sp++] = nd->true_child;
          stack[sp++] = nd->false_child;
        }
    }
  g_free (seen);
  g_free (stack);
  return ok;
}

/* The TreeEnsembleClassifier/Regressor layout: nodes_* tuples keyed by (tree id, node id), and
 * weights (target_* or class_*) that point at leaves by the same key. */
static gboolean
trees_parse_legacy (const OwbNode *node, Trees *t, const char *wprefix, GError **error)
{
  int n, n_nodeids, n_feat, n_modes, n_true, n_false, n_values, n_missing;
  const int64_t *treeids = attr_ints (node, "nodes_treeids", &n);
  const int64_t *nodeids = attr_ints (node, "nodes_nodeids", &n_nodeids);
  const int64_t *feat = attr_ints (node, "nodes_featureids", &n_feat);
  char **modes = attr_strings (node, "nodes_modes", &n_modes);
  const int64_t *truen = attr_ints (node, "nodes_truenodeids", &n_true);
  const int64_t *falsen = attr_ints (node, "nodes_falsenodeids", &n_false);
  const int64_t *missing = attr_ints (node, "nodes_missing_value_tracks_true", &n_missing);
  double *values = NULL;
  if (!attr_doubles_or_tensor (node, "nodes_values", &values, &n_values, error))
    return FALSE;
  if (n == 0 || n_nodeids != n || n_feat != n || n_modes != n || n_true != n || n_false != n || n_values != n
      || (n_missing != 0 && n_missing != n))
    {
      g_free (values);
      return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "the nodes_* attributes must all have the same, non-zero length");
    }
  GHashTable *index = g_hash_table_new (g_int64_hash, g_int64_equal);
  GHashTable *trees_seen = g_hash_table_new (g_int64_hash, g_int64_equal);
  int64_t *keys = g_new (int64_t, n);
  gboolean ok = TRUE;
  t->n_nodes = n;
  t->nodes = g_new0 (TreeNode, n);
  t->roots = g_new (int32_t, n);
  for (int i = 0; ok && i < n; i++)
    {
      if (treeids[i] < 0 || treeids[i] > G_MAXINT32 || nodeids[i] < 0 || nodeids[i] > G_MAXINT32)
        {
          ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "node %d has a tree or node id out of range", i);
          break;
        }
      keys[i] = (treeids[i] << 32) | nodeids[i];
      if (g_hash_table_contains (index, &keys[i]))
        {
          ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "tree %" G_GINT64_FORMAT " has node id %" G_GINT64_FORMAT " twice",
                              treeids[i], nodeids[i]);
          break;
        }
      g_hash_table_insert (index, &keys[i], GINT_TO_POINTER (i + 1));
      /* A tree's root is its first node in the list. */
      if (!g_hash_table_contains (trees_seen, &treeids[i]))
        {
          g_hash_table_add (trees_seen, (gpointer) &treeids[i]);
          t->roots[t->n_trees++] = i;
        }
      TreeNode *nd = &t->nodes[i];
      int mode = parse_mode (modes[i]);
      if (mode < 0 || mode == MODE_MEMBER || feat[i] > G_MAXINT32)
        {
          ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "node %d: bad mode '%s' or feature id", i, modes[i]);
          break;
        }
      nd->mode = (uint8_t) mode;
      nd->feature = mode == MODE_LEAF ? 0 : (int32_t) feat[i];
      nd->value = values[i];
      nd->missing_true = n_missing && missing[i] != 0;
    }
  for (int i = 0; ok && i < n; i++)
    {
      TreeNode *nd = &t->nodes[i];
      if (nd->mode == MODE_LEAF)
        continue;
      int64_t kt = (treeids[i] << 32) | (truen[i] & 0xffffffff), kf = (treeids[i] << 32) | (falsen[i] & 0xffffffff);
      int ti = GPOINTER_TO_INT (g_hash_table_lookup (index, &kt)) - 1;
      int fi = GPOINTER_TO_INT (g_hash_table_lookup (index, &kf)) - 1;
      if (truen[i] < 0 || falsen[i] < 0 || ti < 0 || fi < 0)
        {
          ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "node %d: a child is not a node of tree %" G_GINT64_FORMAT, i,
                              treeids[i]);
          break;
        }
      nd->true_child = ti;
      nd->false_child = fi;
    }

  /* Weights, grouped by leaf. */
  char *name;
  int nw, n_wnode, n_wid, n_wval;
  name = g_strconcat (wprefix, "_treeids", NULL);
  const int64_t *wtree = attr_ints (node, name, &nw);
  g_free (name);
  name = g_strconcat (wprefix, "_nodeids", NULL);
  const int64_t *wnode = attr_ints (node, name, &n_wnode);
  g_free (name);
  name = g_strconcat (wprefix, "_ids", NULL);
  const int64_t *wid = attr_ints (node, name, &n_wid);
  g_free (name);
  double *wval = NULL;
  name = g_strconcat (wprefix, "_weights", NULL);
  if (ok && !attr_doubles_or_tensor (node, name, &wval, &n_wval, error))
    ok = FALSE;
  g_free (name);
  if (ok && (n_wnode != nw || n_wid != nw || n_wval != nw))
    ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "the %s_* attributes must all have the same length", wprefix);
  int32_t *leaf_of = g_new (int32_t, MAX (nw, 1));
  for (int i = 0; ok && i < nw; i++)
    {
      int64_t k = ((wtree[i] & 0x7fffffff) << 32) | (wnode[i] & 0xffffffff);
      int li = wtree[i] < 0 || wnode[i] < 0 ? -1 : GPOINTER_TO_INT (g_hash_table_lookup (index, &k)) - 1;
      if (li < 0 || t->nodes[li].mode != MODE_LEAF)
        ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "%s %d points at tree %" G_GINT64_FORMAT " node %" G_GINT64_FORMAT
                            ", which is not a leaf", wprefix, i, wtree[i], wnode[i]);
      else if (wid[i] < 0 || wid[i] >= t->n_targets)
        ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "%s_ids[%d] = %" G_GINT64_FORMAT " is not below %d", wprefix, i,
                            wid[i], t->n_targets);
      else
        {
          leaf_of[i] = li;
          t->nodes[li].count++;
        }
    }
  if (ok)
    {
      int at = 0;
      for (int i = 0; i < n; i++)
        {
          t->nodes[i].first = at;
          at += t->nodes[i].count;
          t->nodes[i].count = 0;
        }
      t->w_target = g_new (int32_t, MAX (nw, 1));
      t->w_value = g_new (double, MAX (nw, 1));
      for (int i = 0; i < nw; i++)
        {
          TreeNode *leaf = &t->nodes[leaf_of[i]];
          int slot = leaf->first + leaf->count++;
          t->w_target[slot] = (int32_t) wid[i];
          t->w_value[slot] = wval[i];
        }
      if (t->classifier && nw > 0)
        {
          gboolean one = TRUE;
          for (int i = 1; i < nw; i++)
            one &= wid[i] == wid[0];
          t->binary = one && t->n_targets == 2;
          t->binary_class = (int) wid[0];
        }
    }
  g_free (leaf_of);
  g_free (wval);
  g_free (values);
  g_free (keys);
  g_hash_table_unref (index);
  g_hash_table_unref (trees_seen);
  return ok && trees_check (node, t, error);
}

static gboolean
trees_base_values (const OwbNode *node, Trees *t, GError **error)
{
  if (!attr_doubles_or_tensor (node, "base_values", &t->base, &t->n_base, error))
    return FALSE;
  if (t->n_base != 0 && t->n_base != t->n_targets && !(t->binary && t->n_base <= 2) && !(t->n_targets == 1))
    return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "%d base_values for %d targets", t->n_base, t->n_targets);
  if (t->n_targets == 1 && t->n_base > 1)
    return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "%d base_values for one target", t->n_base);
  return TRUE;
}

static gboolean
tree_classifier_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                         GError **error)
{
  Trees *t = g_new0 (Trees, 1);
  t->classifier = TRUE;
  t->aggregate = AGG_SUM;
  t->post = parse_post (node);
  labels_init (&t->labels, node, "classlabels_int64s");
  t->n_targets = t->labels.n;
  if (t->post < 0 || t->n_targets == 0)
    {
      trees_free (t);
      return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "bad post_transform or no class labels");
    }
  if (!trees_parse_legacy (node, t, "class", error) || !trees_base_values (node, t, error))
    {
      trees_free (t);
      return FALSE;
    }
  *state = t;
  return TRUE;
}

static int
parse_aggregate (const char *s)
{
  static const char *const names[] = { "AVERAGE", "SUM", "MIN", "MAX" };
  for (int i = 0; i < (int) G_N_ELEMENTS (names); i++)
    if (strcmp (s, names[i]) == 0)
      return i;
  return -1;
}

static int64_t
targets_attr (const OwbNode *node, const char *ids_name)
{
  if (owb_node_get_attribute (node, "n_targets"))
    return owb_node_get_int (node, "n_targets", 1);
  int n;
  const int64_t *ids = attr_ints (node, ids_name, &n);
  int64_t t = 1;
  for (int i = 0; i < n; i++)
    t = MAX (t, ids[i] + 1);
  return t;
}

static gboolean
tree_regressor_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                        GError **error)
{
  Trees *t = g_new0 (Trees, 1);
  t->aggregate = parse_aggregate (attr_string (node, "aggregate_function", "SUM"));
  t->post = parse_post (node);
  int64_t targets = targets_attr (node, "target_ids");
  if (t->post < 0 || t->aggregate < 0 || targets < 1 || targets > G_MAXINT32)
    {
      trees_free (t);
      return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "bad post_transform, aggregate_function or n_targets");
    }
  t->n_targets = (int) targets;
  if (!trees_parse_legacy (node, t, "target", error) || !trees_base_values (node, t, error))
    {
      trees_free (t);
      return FALSE;
    }
  *state = t;
  return TRUE;
}

static int
compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* A tensor attribute as doubles; NULL with *n = 0 when absent. */
static gboolean
tensor_attr_doubles (const OwbNode *node, const char *name, gboolean required, double **out, int *n, GError **error)
{
  const OwbAttribute *a = owb_node_get_attribute (node, name);
  *out = NULL;
  *n = 0;
  if (!a)
    return !required || prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute %s is required", name);
  if (a->type != OWB_ATTR_TENSOR || !a->t || a->t->dtype == OWB_TYPE_STRING || a->t->nelems > G_MAXINT32)
    return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "attribute %s must be a numeric tensor", name);
  *n = (int) a->t->nelems;
  *out = g_new (double, MAX (*n, 1));
  for (int i = 0; i < *n; i++)
    (*out)[i] = owb_tensor_get_double (a->t, i);
  return TRUE;
}

/* TreeEnsemble (ai.onnx.ml 5): interior nodes by index, children flagged as leaves or nodes, one
 * weight per leaf. Leaves become nodes appended after the interior ones. */
static gboolean
tree_ensemble_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                       GError **error)
{
  Trees *t = g_new0 (Trees, 1);
  int64_t agg = owb_node_get_int (node, "aggregate_function", 1), post = owb_node_get_int (node, "post_transform", 0);
  int64_t targets = targets_attr (node, "leaf_targetids");
  t->double_output = input_types[0] && input_types[0]->dtype == OWB_TYPE_DOUBLE;
  double *splits = NULL, *modes = NULL, *weights = NULL, *members = NULL;
  int n, n_feat, n_splits, n_modes, n_true, n_false, n_tl, n_fl, n_missing, n_roots, n_leaves, n_lt, n_members;
  const int64_t *feat = attr_ints (node, "nodes_featureids", &n_feat);
  const int64_t *truen = attr_ints (node, "nodes_truenodeids", &n_true);
  const int64_t *falsen = attr_ints (node, "nodes_falsenodeids", &n_false);
  const int64_t *tleaf = attr_ints (node, "nodes_trueleafs", &n_tl);
  const int64_t *fleaf = attr_ints (node, "nodes_falseleafs", &n_fl);
  const int64_t *missing = attr_ints (node, "nodes_missing_value_tracks_true", &n_missing);
  const int64_t *roots = attr_ints (node, "tree_roots", &n_roots);
  const int64_t *ltarget = attr_ints (node, "leaf_targetids", &n_lt);
  gboolean ok = TRUE;
  if (agg < 0 || agg > 3 || post < 0 || post > 4 || targets < 1 || targets > G_MAXINT32)
    ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "bad aggregate_function, post_transform or n_targets");
  ok = ok && tensor_attr_doubles (node, "nodes_splits", TRUE, &splits, &n_splits, error)
       && tensor_attr_doubles (node, "nodes_modes", TRUE, &modes, &n_modes, error)
       && tensor_attr_doubles (node, "leaf_weights", TRUE, &weights, &n_leaves, error)
       && tensor_attr_doubles (node, "membership_values", FALSE, &members, &n_members, error);
  n = n_feat;
  if (ok && (n == 0 || n_splits != n || n_modes != n || n_true != n || n_false != n || n_tl != n || n_fl != n
             || (n_missing != 0 && n_missing != n) || n_lt != n_leaves || n_roots == 0))
    ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL,
                        "the nodes_* attributes (and the leaf_* ones) must have equal lengths, with at least one tree");
  if (!ok)
    goto out;
  t->aggregate = (int) agg;
  t->post = (int) post;
  t->n_targets = (int) targets;
  t->n_nodes = n + n_leaves;
  t->nodes = g_new0 (TreeNode, t->n_nodes);
  t->w_target = g_new (int32_t, MAX (n_leaves, 1));
  t->w_value = g_new (double, MAX (n_leaves, 1));
  t->members = g_new (double, MAX (n_members, 1));
  int member_at = 0;
  for (int i = 0; ok && i < n; i++)
    {
      TreeNode *nd = &t->nodes[i];
      int mode = (int) modes[i];
      if (modes[i] < 0 || modes[i] > MODE_MEMBER || feat[i] < 0 || feat[i] > G_MAXINT32)
        {
          ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "node %d: bad mode or feature id", i);
          break;
        }
      nd->mode = (uint8_t) mode;
      nd->feature = (int32_t) feat[i];
      nd->value = splits[i];
      nd->missing_true = n_missing && missing[i] != 0;
      int64_t tc = truen[i], fc = falsen[i];
      if (tc < 0 || fc < 0 || tc >= (tleaf[i] ? n_leaves : n) || fc >= (fleaf[i] ? n_leaves : n))
        {
          ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "node %d: a child index is out of range", i);
          break;
        }
      nd->true_child = (int32_t) (tleaf[i] ? n + tc : tc);
      nd->false_child = (int32_t) (fleaf[i] ? n + fc : fc);
      if (mode == MODE_MEMBER)
        {
          /* This node's set: the next run of membership_values up to a NaN. */
          nd->first = member_at;
          while (member_at < n_members && !isnan (members[member_at]))
            t->members[member_at] = members[member_at], member_at++;
          nd->count = member_at - nd->first;
          if (member_at >= n_members)
            {
              ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "membership_values has no set (ended by NaN) for node %d", i);
              break;
            }
          member_at++;
          qsort (t->members + nd->first, nd->count, sizeof (double), compare_doubles);
        }
    }
  for (int i = 0; ok && i < n_leaves; i++)
    {
      if (ltarget[i] < 0 || ltarget[i] >= targets)
        {
          ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "leaf_targetids[%d] = %" G_GINT64_FORMAT " is out of range", i,
                              ltarget[i]);
          break;
        }
      TreeNode *leaf = &t->nodes[n + i];
      leaf->mode = MODE_LEAF;
      leaf->first = i;
      leaf->count = 1;
      t->w_target[i] = (int32_t) ltarget[i];
      t->w_value[i] = weights[i];
    }
  t->roots = g_new (int32_t, n_roots);
  for (int i = 0; ok && i < n_roots; i++)
    {
      if (roots[i] < 0 || roots[i] >= n)
        ok = prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "tree_roots[%d] = %" G_GINT64_FORMAT " is out of range", i, roots[i]);
      else
        t->roots[t->n_trees++] = (int32_t) roots[i];
    }
  ok = ok && trees_check (node, t, error);
out:
  g_free (splits);
  g_free (modes);
  g_free (weights);
  g_free (members);
  if (!ok)
    {
      trees_free (t);
      return FALSE;
    }
  *state = t;
  return TRUE;
}

static gboolean
is_member (const double *set, int n, double v)
{
  int lo = 0, hi = n;
  while (lo < hi)
    {
      int mid = (lo + hi) / 2;
      if (set[mid] < v)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < n && set[lo] == v;
}

/* The leaf a row reaches from node i. A NaN feature fails every comparison (BRANCH_NEQ aside) and
 * takes the true branch only where missing_value_tracks_true says so, as in ONNX Runtime. */
static inline const TreeNode *
find_leaf (const Trees *t, const double *x, int32_t i)
{
  const TreeNode *nodes = t->nodes;
  for (;;)
    {
      const TreeNode *nd = &nodes[i];
      if (nd->mode == MODE_LEAF)
        return nd;
      double v = x[nd->feature];
      gboolean r;
      switch (nd->mode)
        {
        case MODE_LEQ:
          r = v <= nd->value;
          break;
        case MODE_LT:
          r = v < nd->value;
          break;
        case MODE_GTE:
          r = v >= nd->value;
          break;
        case MODE_GT:
          r = v > nd->value;
          break;
        case MODE_EQ:
          r = v == nd->value;
          break;
        case MODE_NEQ:
          r = v != nd->value;
          break;
        default:
          r = is_member (t->members + nd->first, nd->count, v);
          break;
        }
      if (!r && nd->missing_true && isnan (v))
        r = TRUE;
      i = r ? nd->true_child : nd->false_child;
    }
}

typedef struct {
  const Trees *t;
  const double *x;
  int64_t f;
  int64_t cols;          /* score columns of the output */
  void *scores;          /* float, or double for TreeEnsemble on doubles */
  OwbTensor *labels;     /* classifiers */
} TreeJob;

/* Sums (or averages, min, max) the leaf weights a row reaches into score[] and adds the base values. */
static void
tree_aggregate (const Trees *t, const double *x, double *score, uint8_t *has)
{
  int k = t->n_targets;
  memset (score, 0, sizeof (double) * k);
  memset (has, 0, k);
  for (int tr = 0; tr < t->n_trees; tr++)
    {
      const TreeNode *leaf = find_leaf (t, x, t->roots[tr]);
      for (int w = leaf->first; w < leaf->first + leaf->count; w++)
        {
          int c = t->w_target[w];
          double v = t->w_value[w];
          switch (t->aggregate)
            {
            case AGG_MIN:
              score[c] = has[c] && score[c] <= v ? score[c] : v;
              break;
            case AGG_MAX:
              score[c] = has[c] && score[c] >= v ? score[c] : v;
              break;
            default:
              score[c] += v;
              break;
            }
          has[c] = 1;
        }
    }
  if (t->aggregate == AGG_AVERAGE)
    for (int c = 0; c < k; c++)
      score[c] /= t->n_trees;
  if (t->classifier && t->binary)
    return;
  for (int c = 0; c < k && t->n_base > 0; c++)
    score[c] += t->n_base == k ? t->base[c] : t->base[0];
}

static void
tree_rows (int64_t begin, int64_t end, gpointer data)
{
  TreeJob *job = data;
  const Trees *t = job->t;
  int k = t->n_targets;
  double *score = g_new (double, MAX (k, 2));
  uint8_t *has = g_new (uint8_t, MAX (k, 1));
  for (int64_t r = begin; r < end; r++)
    {
      tree_aggregate (t, job->x + r * job->f, score, has);
      int ns = k;
      if (t->classifier)
        {
          int label;
          if (t->binary)
            {
              /* Weights for one class only: its score s stands for the positive class, and the pair is
               * [1 - s, s] for probabilities (no transform or PROBIT), [-s, s] for margins. */
              double s = score[t->binary_class];
              if (t->n_base > 0)
                s += t->n_base == 2 ? t->base[t->binary_class] : t->base[0];
              gboolean prob = t->post == POST_NONE || t->post == POST_PROBIT;
              score[0] = prob ? 1.0 - s : -s;
              score[1] = s;
              ns = 2;
              transform (score, 2, t->post);
              label = argmax (score, 2);
            }
          else
            {
              label = argmax (score, k);
              transform (score, k, t->post);
            }
          write_label (job->labels, r, &t->labels, label);
        }
      else
        transform (score, k, t->post);
      if (!job->scores)
        continue;
      if (t->double_output)
        {
          double *out = (double *) job->scores + r * job->cols;
          for (int c = 0; c < ns; c++)
            out[c] = score[c];
        }
      else
        {
          float *out = (float *) job->scores + r * job->cols;
          for (int c = 0; c < ns; c++)
            out[c] = (float) score[c];
        }
    }
  g_free (score);
  g_free (has);
}

static gboolean
compute_trees (OwbKernelContext *ctx, GError **error)
{
  const Trees *t = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  int64_t n, f;
  if (!rows_features (ctx, x, &n, &f, error))
    return FALSE;
  if (t->max_feature >= f)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the trees read feature %d but the input has %" G_GINT64_FORMAT,
                            t->max_feature, f);
      return FALSE;
    }
  TreeJob job = { t, NULL, f, t->n_targets, NULL, NULL };
  OwbTensor *scores;
  if (t->classifier)
    {
      job.labels = require_output (ctx, 0, error);
      scores = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
      if (!job.labels)
        return FALSE;
    }
  else if (!(scores = require_output (ctx, 0, error)))
    return FALSE;
  if (!check_columns (ctx, scores, n, t->n_targets, error))
    return FALSE;
  if (scores && scores->dtype != (t->double_output ? OWB_TYPE_DOUBLE : OWB_TYPE_FLOAT))
    return _owb_cpu_unsupported_type (ctx, scores->dtype, error);
  job.scores = scores ? scores->data : NULL;
  double *xd = to_doubles (ctx, x, error);
  if (!xd)
    return FALSE;
  job.x = xd;
  /* Labels may be strings (g_strdup per row): fine from several threads. */
  owb_parallel_for (ctx->pool, n, MAX (1, 2048 / MAX (t->n_trees, 1)), tree_rows, &job);
  g_free (xd);
  return TRUE;
}

/* ================================================================================================ */
/* ---- Scaler, Normalizer, Binarizer, Imputer ---- */

/* Length of the last axis (1 for scalars): what per-feature attributes index. */
static int64_t
last_dim (const OwbTensor *x)
{
  return x->rank > 0 ? x->dims[x->rank - 1] : 1;
}

static gboolean
compute_scaler (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y)
    return FALSE;
  int n_off, n_scale;
  const float *off = owb_node_get_floats (ctx->node, "offset", &n_off);
  const float *scale = owb_node_get_floats (ctx->node, "scale", &n_scale);
  int64_t f = last_dim (x);
  if ((n_off > 1 && n_off != f) || (n_scale > 1 && n_scale != f))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "offset (%d) and scale (%d) must have 1 or %" G_GINT64_FORMAT " values",
                            n_off, n_scale, f);
      return FALSE;
    }
  double *xd = to_doubles (ctx, x, error);
  if (!xd)
    return FALSE;
  float *out = y->data;
  for (int64_t i = 0, j = 0; i < x->nelems; i++)
    {
      double o = n_off == 0 ? 0.0 : off[n_off == 1 ? 0 : j];
      double s = n_scale == 0 ? 1.0 : scale[n_scale == 1 ? 0 : j];
      out[i] = (float) ((xd[i] - o) * s);
      if (++j == f)
        j = 0;
    }
  g_free (xd);
  return TRUE;
}

/* Each row divided by its largest magnitude (MAX, as scikit-learn's Normalizer), its L1 or its L2
 * norm; a row whose divisor is zero is copied. */
static gboolean
compute_normalizer (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = require_output (ctx, 0, error);
  int64_t n, c;
  if (!y || !rows_features (ctx, x, &n, &c, error))
    return FALSE;
  const char *norm = attr_string (ctx->node, "norm", "MAX");
  int kind = strcmp (norm, "L1") == 0 ? 1 : strcmp (norm, "L2") == 0 ? 2 : 0;
  double *xd = to_doubles (ctx, x, error);
  if (!xd)
    return FALSE;
  float *out = y->data;
  for (int64_t r = 0; r < n; r++)
    {
      const double *row = xd + r * c;
      double d = 0.0;
      for (int64_t i = 0; i < c; i++)
        d = kind == 0 ? MAX (d, fabs (row[i])) : kind == 1 ? d + fabs (row[i]) : d + row[i] * row[i];
      if (kind == 2)
        d = sqrt (d);
      for (int64_t i = 0; i < c; i++)
        out[r * c + i] = (float) (d == 0.0 ? row[i] : row[i] / d);
    }
  g_free (xd);
  return TRUE;
}

static gboolean
compute_binarizer (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y)
    return FALSE;
  double th = owb_node_get_float (ctx->node, "threshold", 0.0f);
  switch (x->dtype)
    {
#define BINARIZE(T, N)                                                                                                \
  case OWB_TYPE_##N:                                                                                                  \
    {                                                                                                                 \
      const T *in = x->data;                                                                                          \
      T *out = y->data;                                                                                               \
      for (int64_t i = 0; i < x->nelems; i++)                                                                         \
        out[i] = (double) in[i] > th ? (T) 1 : (T) 0;                                                                 \
    }                                                                                                                 \
    break;
      OWB_CPU_FOR_NUMERIC (BINARIZE)
#undef BINARIZE
    default:
      return _owb_cpu_unsupported_type (ctx, x->dtype, error);
    }
  return TRUE;
}

static gboolean
compute_imputer (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y)
    return FALSE;
  int64_t f = last_dim (x);
  gboolean floats = x->dtype == OWB_TYPE_FLOAT || x->dtype == OWB_TYPE_DOUBLE;
  int n_fv, n_iv;
  const float *fv = owb_node_get_floats (ctx->node, "imputed_value_floats", &n_fv);
  const int64_t *iv = owb_node_get_ints (ctx->node, "imputed_value_int64s", &n_iv);
  int nv = floats ? n_fv : n_iv;
  if (nv != 1 && nv != f)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL, "imputed_value_%s must have 1 or %" G_GINT64_FORMAT " values, not %d",
                            floats ? "floats" : "int64s", f, nv);
      return FALSE;
    }
  switch (x->dtype)
    {
#define IMPUTE_FLOAT(T, N)                                                                                            \
  case OWB_TYPE_##N:                                                                                                  \
    {                                                                                                                 \
      const T *in = x->data;                                                                                          \
      T *out = y->data;                                                                                               \
      T rep = (T) owb_node_get_float (ctx->node, "replaced_value_float", 0.0f);                                        \
      gboolean nan_rep = isnan (rep);                                                                                 \
      for (int64_t i = 0, j = 0; i < x->nelems; i++)                                                                  \
        {                                                                                                             \
          out[i] = (nan_rep ? isnan (in[i]) : in[i] == rep) ? (T) fv[nv == 1 ? 0 : j] : in[i];                        \
          if (++j == f)                                                                                               \
            j = 0;                                                                                                    \
        }                                                                                                             \
    }                                                                                                                 \
    break;
      OWB_CPU_FOR_FLOATS (IMPUTE_FLOAT)
#undef IMPUTE_FLOAT
#define IMPUTE_INT(T, N)                                                                                              \
  case OWB_TYPE_##N:                                                                                                  \
    {                                                                                                                 \
      const T *in = x->data;                                                                                          \
      T *out = y->data;                                                                                               \
      int64_t rep = owb_node_get_int (ctx->node, "replaced_value_int64", 0);                                           \
      for (int64_t i = 0, j = 0; i < x->nelems; i++)                                                                  \
        {                                                                                                             \
          out[i] = (int64_t) in[i] == rep ? (T) iv[nv == 1 ? 0 : j] : in[i];                                          \
          if (++j == f)                                                                                               \
            j = 0;                                                                                                    \
        }                                                                                                             \
    }                                                                                                                 \
    break;
      IMPUTE_INT (int32_t, INT32)
      IMPUTE_INT (int64_t, INT64)
#undef IMPUTE_INT
    default:
      return _owb_cpu_unsupported_type (ctx, x->dtype, error);
    }
  return TRUE;
}

/* ---- OneHotEncoder ---- */

static gboolean
compute_one_hot_encoder (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y)
    return FALSE;
  gboolean zeros = owb_node_get_int (ctx->node, "zeros", 1) != 0;
  int n_int, n_str;
  const int64_t *cats = attr_ints (ctx->node, "cats_int64s", &n_int);
  char **scats = attr_strings (ctx->node, "cats_strings", &n_str);
  int64_t k = x->dtype == OWB_TYPE_STRING ? n_str : n_int;
  if (y->nelems != x->nelems * k)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output has %" G_GINT64_FORMAT " elements, expected %" G_GINT64_FORMAT,
                            y->nelems, x->nelems * k);
      return FALSE;
    }
  GHashTable *index = x->dtype == OWB_TYPE_STRING ? g_hash_table_new (g_str_hash, g_str_equal)
                                                  : g_hash_table_new (g_int64_hash, g_int64_equal);
  /* Later duplicates lose to the first category, as a forward search would find it. */
  for (int i = k - 1; i >= 0; i--)
    g_hash_table_insert (index, x->dtype == OWB_TYPE_STRING ? (gpointer) scats[i] : (gpointer) &cats[i],
                         GINT_TO_POINTER (i + 1));
  float *out = y->data;
  memset (out, 0, sizeof (float) * y->nelems);
  gboolean ok = TRUE;
  for (int64_t i = 0; i < x->nelems; i++)
    {
      int hit;
      if (x->dtype == OWB_TYPE_STRING)
        hit = GPOINTER_TO_INT (g_hash_table_lookup (index, get_string (x, i))) - 1;
      else
        {
          /* Floats are cast to integers, as the spec says; NaN and out-of-range values match nothing. */
          int64_t v = 0;
          gboolean valid = TRUE;
          if (x->dtype == OWB_TYPE_INT64)
            v = ((const int64_t *) x->data)[i];
          else
            {
              double d = owb_tensor_get_double (x, i);
              valid = d > -9.2e18 && d < 9.2e18;
              v = valid ? (int64_t) d : 0;
            }
          hit = valid ? GPOINTER_TO_INT (g_hash_table_lookup (index, &v)) - 1 : -1;
        }
      if (hit >= 0)
        out[i * k + hit] = 1.0f;
      else if (!zeros)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "element %" G_GINT64_FORMAT " is not a known category (zeros=0)",
                                i);
          ok = FALSE;
          break;
        }
    }
  g_hash_table_unref (index);
  return ok;
}

/* ---- LabelEncoder, CategoryMapper ---- */

/* A map from keys (strings, integers, or floating-point values compared by bits with every NaN
 * alike) to indexes into a value table of the output type. */
typedef struct {
  OwbDataType key_type, value_type;
  GHashTable *index;     /* key -> value index + 1 */
  int64_t *int_keys;
  double *float_keys;
  char **string_keys;
  OwbTensor *values;     /* n values, then the default at [n] */
  int n;
} LabelMap;

static guint
double_bits_hash (gconstpointer p)
{
  double d = *(const double *) p;
  uint64_t b;
  if (isnan (d))
    d = NAN;
  memcpy (&b, &d, sizeof b);
  return (guint) (b ^ (b >> 32));
}

static gboolean
double_bits_equal (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  if (isnan (x) || isnan (y))
    return isnan (x) && isnan (y);
  return memcmp (&x, &y, sizeof x) == 0;
}

static void
label_map_free (void *state)
{
  LabelMap *m = state;
  if (m->index)
    g_hash_table_unref (m->index);
  g_free (m->int_keys);
  g_free (m->float_keys);
  g_strfreev (m->string_keys);
  owb_tensor_unref (m->values);
  g_free (m);
}

static gboolean
is_float_kind (OwbDataType t)
{
  return t == OWB_TYPE_FLOAT || t == OWB_TYPE_DOUBLE;
}

/* One side of the map from an attribute list or a 1-D tensor, as a tensor of `n` (+ room) elements. */
static OwbTensor *
side_tensor (const OwbNode *node, const char *side, int extra, GError **error)
{
  const char *suffixes[] = { "strings", "int64s", "floats", "tensor" };
  for (guint s = 0; s < G_N_ELEMENTS (suffixes); s++)
    {
      char *name = g_strdup_printf ("%s_%s", side, suffixes[s]);
      const OwbAttribute *a = owb_node_get_attribute (node, name);
      g_free (name);
      if (!a)
        continue;
      if (a->type == OWB_ATTR_TENSOR)
        {
          if (!a->t || a->t->nelems > G_MAXINT32)
            break;
          int64_t n = a->t->nelems + extra;
          OwbTensor *t = owb_tensor_new (a->t->dtype, 1, &n, error);
          if (!t)
            return NULL;
          for (int64_t i = 0; i < a->t->nelems; i++)
            {
              if (t->dtype == OWB_TYPE_STRING)
                set_string (t, i, get_string (a->t, i));
              else
                memcpy ((char *) t->data + i * owb_data_type_size (t->dtype),
                        (const char *) a->t->data + i * owb_data_type_size (t->dtype), owb_data_type_size (t->dtype));
            }
          return t;
        }
      int64_t n = a->n + extra;
      OwbDataType type = a->type == OWB_ATTR_STRINGS ? OWB_TYPE_STRING : a->type == OWB_ATTR_INTS ? OWB_TYPE_INT64 : OWB_TYPE_FLOAT;
      OwbTensor *t = owb_tensor_new (type, 1, &n, error);
      if (!t)
        return NULL;
      for (int i = 0; i < a->n; i++)
        {
          if (type == OWB_TYPE_STRING)
            set_string (t, i, a->strings[i]);
          else if (type == OWB_TYPE_INT64)
            ((int64_t *) t->data)[i] = a->ints[i];
          else
            ((float *) t->data)[i] = a->floats[i];
        }
      return t;
    }
  prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "a valid %s_* attribute is required", side);
  return NULL;
}

/* Fills the hash index from a keys tensor; later keys win. */
static void
label_map_index (LabelMap *m, const OwbTensor *keys)
{
  m->key_type = keys->dtype;
  if (keys->dtype == OWB_TYPE_STRING)
    {
      m->string_keys = g_new0 (char *, m->n + 1);
      m->index = g_hash_table_new (g_str_hash, g_str_equal);
      for (int i = 0; i < m->n; i++)
        {
          m->string_keys[i] = g_strdup (get_string (keys, i));
          g_hash_table_insert (m->index, m->string_keys[i], GINT_TO_POINTER (i + 1));
        }
    }
  else if (is_float_kind (keys->dtype))
    {
      m->float_keys = g_new (double, MAX (m->n, 1));
      m->index = g_hash_table_new (double_bits_hash, double_bits_equal);
      for (int i = 0; i < m->n; i++)
        {
          m->float_keys[i] = owb_tensor_get_double (keys, i);
          g_hash_table_insert (m->index, &m->float_keys[i], GINT_TO_POINTER (i + 1));
        }
    }
  else
    {
      m->int_keys = g_new (int64_t, MAX (m->n, 1));
      m->index = g_hash_table_new (g_int64_hash, g_int64_equal);
      for (int i = 0; i < m->n; i++)
        {
          m->int_keys[i] = owb_tensor_get_int64 (keys, i);
          g_hash_table_insert (m->index, &m->int_keys[i], GINT_TO_POINTER (i + 1));
        }
    }
}

/* Writes the default (the slot after the n values) from the typed default_* attribute. */
static void
label_map_default (LabelMap *m, const OwbNode *node)
{
  OwbTensor *v = m->values;
  const OwbAttribute *dt = owb_node_get_attribute (node, "default_tensor");
  if (dt && dt->type == OWB_ATTR_TENSOR && dt->t && dt->t->nelems == 1 && dt->t->dtype == v->dtype)
    {
      if (v->dtype == OWB_TYPE_STRING)
        set_string (v, m->n, get_string (dt->t, 0));
      else
        memcpy ((char *) v->data + m->n * owb_data_type_size (v->dtype), dt->t->data, owb_data_type_size (v->dtype));
      return;
    }
  if (v->dtype == OWB_TYPE_STRING)
    set_string (v, m->n, attr_string (node, "default_string", "_Unused"));
  else if (is_float_kind (v->dtype))
    owb_tensor_set_double (v, m->n, owb_node_get_float (node, "default_float", -0.0f));
  else
    owb_tensor_set_double (v, m->n, (double) owb_node_get_int (node, "default_int64", -1));
}

static gboolean
label_encoder_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                       GError **error)
{
  LabelMap *m = g_new0 (LabelMap, 1);
  if (opset < 2)
    {
      /* classes_strings: strings map to their index, integers to the string at their index. */
      int n;
      char **classes = attr_strings (node, "classes_strings", &n);
      OwbDataType in = input_types[0] ? input_types[0]->dtype : OWB_TYPE_STRING;
      m->n = n;
      int64_t len = n + 1;
      OwbTensor *keys = owb_tensor_new (in == OWB_TYPE_STRING ? OWB_TYPE_STRING : OWB_TYPE_INT64, 1, &len, error);
      m->values = keys ? owb_tensor_new (in == OWB_TYPE_STRING ? OWB_TYPE_INT64 : OWB_TYPE_STRING, 1, &len, error) : NULL;
      if (!m->values)
        {
          owb_tensor_unref (keys);
          label_map_free (m);
          return FALSE;
        }
      for (int i = 0; i < n; i++)
        {
          if (in == OWB_TYPE_STRING)
            {
              set_string (keys, i, classes[i]);
              ((int64_t *) m->values->data)[i] = i;
            }
          else
            {
              ((int64_t *) keys->data)[i] = i;
              set_string (m->values, i, classes[i]);
            }
        }
      label_map_index (m, keys);
      owb_tensor_unref (keys);
      label_map_default (m, node);
      *state = m;
      return TRUE;
    }
  OwbTensor *keys = side_tensor (node, "keys", 0, error);
  if (!keys)
    {
      label_map_free (m);
      return FALSE;
    }
  m->values = side_tensor (node, "values", 1, error);
  if (!m->values || m->values->nelems - 1 != keys->nelems)
    {
      if (m->values)
        prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "keys (%" G_GINT64_FORMAT ") and values (%" G_GINT64_FORMAT ") differ in length",
                       keys->nelems, m->values->nelems - 1);
      owb_tensor_unref (keys);
      label_map_free (m);
      return FALSE;
    }
  m->n = (int) keys->nelems;
  label_map_index (m, keys);
  owb_tensor_unref (keys);
  label_map_default (m, node);
  *state = m;
  return TRUE;
}

static gboolean
category_mapper_prepare (const OwbNode *node, int opset, const OwbValueType *const *input_types, void **state,
                         GError **error)
{
  int ni, ns;
  const int64_t *ints = attr_ints (node, "cats_int64s", &ni);
  char **strings = attr_strings (node, "cats_strings", &ns);
  if (ni != ns)
    return prepare_error (node, error, OWB_ERROR_INVALID_MODEL, "cats_int64s and cats_strings differ in length");
  gboolean from_strings = !input_types[0] || input_types[0]->dtype == OWB_TYPE_STRING;
  LabelMap *m = g_new0 (LabelMap, 1);
  m->n = ni;
  int64_t len = ni + 1;
  OwbTensor *ikeys = owb_tensor_new (OWB_TYPE_INT64, 1, &len, error);
  OwbTensor *skeys = ikeys ? owb_tensor_new (OWB_TYPE_STRING, 1, &len, error) : NULL;
  if (!skeys)
    {
      owb_tensor_unref (ikeys);
      label_map_free (m);
      return FALSE;
    }
  for (int i = 0; i < ni; i++)
    {
      ((int64_t *) ikeys->data)[i] = ints[i];
      set_string (skeys, i, strings[i]);
    }
  label_map_index (m, from_strings ? skeys : ikeys);
  m->values = owb_tensor_ref (from_strings ? ikeys : skeys);
  owb_tensor_unref (ikeys);
  owb_tensor_unref (skeys);
  label_map_default (m, node);
  *state = m;
  return TRUE;
}

static gboolean
compute_label_map (OwbKernelContext *ctx, GError **error)
{
  const LabelMap *m = ctx->state;
  const OwbTensor *x = ctx->inputs[0];
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y)
    return FALSE;
  gboolean x_float = is_float_kind (x->dtype), k_float = is_float_kind (m->key_type);
  if ((x->dtype == OWB_TYPE_STRING) != (m->key_type == OWB_TYPE_STRING) || x_float != k_float
      || y->dtype != m->values->dtype)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_TYPE, "input %s / output %s do not match the map (%s to %s)",
                            owb_data_type_name (x->dtype), owb_data_type_name (y->dtype), owb_data_type_name (m->key_type),
                            owb_data_type_name (m->values->dtype));
      return FALSE;
    }
  gsize es = owb_data_type_size (y->dtype);
  for (int64_t i = 0; i < x->nelems; i++)
    {
      int hit;
      if (x->dtype == OWB_TYPE_STRING)
        hit = GPOINTER_TO_INT (g_hash_table_lookup (m->index, get_string (x, i)));
      else if (x_float)
        {
          double v = owb_tensor_get_double (x, i);
          hit = GPOINTER_TO_INT (g_hash_table_lookup (m->index, &v));
        }
      else
        {
          int64_t v = owb_tensor_get_int64 (x, i);
          hit = GPOINTER_TO_INT (g_hash_table_lookup (m->index, &v));
        }
      int at = hit > 0 ? hit - 1 : m->n;
      if (y->dtype == OWB_TYPE_STRING)
        set_string (y, i, get_string (m->values, at));
      else
        memcpy ((char *) y->data + i * es, (const char *) m->values->data + at * es, es);
    }
  return TRUE;
}

/* ---- ArrayFeatureExtractor ---- */

static gboolean
compute_array_feature_extractor (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0], *idx = ctx->inputs[1];
  OwbTensor *z = require_output (ctx, 0, error);
  if (!z)
    return FALSE;
  int64_t f = last_dim (x), k = idx->nelems;
  int64_t rows = f == 0 ? 0 : x->nelems / f;
  const int64_t *ix = idx->data;
  for (int64_t j = 0; j < k; j++)
    if (ix[j] < 0 || ix[j] >= f)
      {
        owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_ARGUMENT, "index %" G_GINT64_FORMAT " is out of range for %" G_GINT64_FORMAT
                              " features", ix[j], f);
        return FALSE;
      }
  if (z->nelems != rows * k)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "output has %" G_GINT64_FORMAT " elements, expected %" G_GINT64_FORMAT,
                            z->nelems, rows * k);
      return FALSE;
    }
  if (x->dtype == OWB_TYPE_STRING)
    {
      for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < k; j++)
          set_string (z, r * k + j, get_string (x, r * f + ix[j]));
      return TRUE;
    }
  gsize es = owb_data_type_size (x->dtype);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < k; j++)
      memcpy ((char *) z->data + (r * k + j) * es, (const char *) x->data + (r * f + ix[j]) * es, es);
  return TRUE;
}

/* ---- FeatureVectorizer ---- */

static gboolean
compute_feature_vectorizer (OwbKernelContext *ctx, GError **error)
{
  OwbTensor *y = require_output (ctx, 0, error);
  if (!y)
    return FALSE;
  int n_dims;
  const int64_t *dims = attr_ints (ctx->node, "inputdimensions", &n_dims);
  int64_t n = y->dims[0], total = y->dims[1], at = 0;
  float *out = y->data;
  memset (out, 0, sizeof (float) * y->nelems);
  for (int i = 0; i < ctx->n_inputs && i < n_dims; i++)
    {
      const OwbTensor *x = ctx->inputs[i];
      int64_t rows = x->rank == 1 ? 1 : x->dims[0];
      int64_t c = rows == 0 ? 0 : x->nelems / rows;
      if (rows != n)
        {
          owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "input %d has %" G_GINT64_FORMAT " rows, expected %" G_GINT64_FORMAT, i,
                                rows, n);
          return FALSE;
        }
      double *xd = to_doubles (ctx, x, error);
      if (!xd)
        return FALSE;
      /* Each input gives inputdimensions[i] columns: truncated or zero-padded. */
      int64_t take = MIN (c, dims[i]);
      for (int64_t r = 0; r < n; r++)
        for (int64_t j = 0; j < take; j++)
          out[r * total + at + j] = (float) xd[r * c + j];
      at += dims[i];
      g_free (xd);
    }
  return TRUE;
}

/* ---- ZipMap ---- */

/* One map per row of X, all sharing one keys tensor (maps are read-only once made). */
static gboolean
compute_zipmap (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *x = ctx->inputs[0];
  int ni, ns;
  const int64_t *int_labels = attr_ints (ctx->node, "classlabels_int64s", &ni);
  char **str_labels = attr_strings (ctx->node, "classlabels_strings", &ns);
  int64_t c = ni > 0 ? ni : ns;
  if ((ni > 0) == (ns > 0))
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_INVALID_MODEL,
                            "exactly one of classlabels_int64s and classlabels_strings must be set");
      return FALSE;
    }
  if (x->rank != 1 && x->rank != 2)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE, "the input must be 1-D or 2-D, not of rank %d", x->rank);
      return FALSE;
    }
  int64_t n = x->rank == 1 ? 1 : x->dims[0], cols = x->dims[x->rank - 1];
  if (cols != c)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_SHAPE,
                            "the input has %" G_GINT64_FORMAT " columns but %" G_GINT64_FORMAT " class labels", cols, c);
      return FALSE;
    }
  OwbTensor *keys = owb_tensor_new_uninit (ni > 0 ? OWB_TYPE_INT64 : OWB_TYPE_STRING, 1, &c, error);
  if (!keys)
    return FALSE;
  if (ni > 0)
    memcpy (keys->data, int_labels, sizeof (int64_t) * c);
  else
    for (int64_t j = 0; j < c; j++)
      ((char **) keys->data)[j] = g_strdup (str_labels[j]);
  OwbTensor *seq = owb_tensor_new_sequence (OWB_TYPE_FLOAT);
  const float *xd = x->data;
  for (int64_t r = 0; r < n; r++)
    {
      OwbTensor *values = owb_tensor_new_uninit (OWB_TYPE_FLOAT, 1, &c, error);
      if (!values)
        {
          owb_tensor_unref (keys);
          owb_tensor_unref (seq);
          return FALSE;
        }
      if (c)
        memcpy (values->data, xd + r * c, sizeof (float) * c);
      g_ptr_array_add (seq->sequence, owb_tensor_new_map (owb_tensor_ref (keys), values));
    }
  owb_tensor_unref (keys);
  owb_tensor_unref (ctx->outputs[0]);
  ctx->outputs[0] = seq;
  return TRUE;
}

#define ML "ai.onnx.ml"
#define T_BIT(t) OWB_TYPE_BIT (OWB_TYPE_##t)
#define ML_NUMBERS (T_BIT (FLOAT) | T_BIT (DOUBLE) | T_BIT (INT32) | T_BIT (INT64))

const OwbKernelDef _owb_cpu_kernels_ml[] = {
  { "StringNormalizer", "", 10, 0, T_BIT (STRING), 0, normalizer_prepare, normalizer_free, compute_string_normalizer },
  { "RegexFullMatch", "", 20, 0, T_BIT (STRING), 0, regex_prepare, regex_free, compute_regex_full_match },
  { "StringConcat", "", 20, 0, T_BIT (STRING), 0, NULL, NULL, compute_string_concat },
  { "StringSplit", "", 20, 0, T_BIT (STRING), 0, split_prepare, split_free, compute_string_split },
  { "TfIdfVectorizer", "", 9, 0, T_BIT (STRING) | T_BIT (INT32) | T_BIT (INT64), 0, tfidf_prepare, tfidf_free, compute_tfidf },
  { "LinearClassifier", ML, 1, 0, ML_NUMBERS, 0, linear_prepare, linear_free, compute_linear_classifier },
  { "LinearRegressor", ML, 1, 0, ML_NUMBERS, 0, linear_prepare, linear_free, compute_linear_regressor },
  { "SVMClassifier", ML, 1, 0, ML_NUMBERS, 0, svm_classifier_prepare, svm_free, compute_svm_classifier },
  { "SVMRegressor", ML, 1, 0, ML_NUMBERS, 0, svm_regressor_prepare, svm_free, compute_svm_regressor },
  { "TreeEnsembleClassifier", ML, 1, 0, ML_NUMBERS, 0, tree_classifier_prepare, trees_free, compute_trees },
  { "TreeEnsembleRegressor", ML, 1, 0, ML_NUMBERS, 0, tree_regressor_prepare, trees_free, compute_trees },
  { "TreeEnsemble", ML, 5, 0, T_BIT (FLOAT) | T_BIT (DOUBLE), 0, tree_ensemble_prepare, trees_free, compute_trees },
  { "Scaler", ML, 1, 0, ML_NUMBERS, 0, NULL, NULL, compute_scaler },
  { "Normalizer", ML, 1, 0, ML_NUMBERS, 0, NULL, NULL, compute_normalizer },
  { "Binarizer", ML, 1, 0, ML_NUMBERS, 0, NULL, NULL, compute_binarizer },
  { "Imputer", ML, 1, 0, ML_NUMBERS, 0, NULL, NULL, compute_imputer },
  { "OneHotEncoder", ML, 1, 0, ML_NUMBERS | T_BIT (STRING), 0, NULL, NULL, compute_one_hot_encoder },
  { "LabelEncoder", ML, 1, 0, ML_NUMBERS | T_BIT (STRING) | T_BIT (INT16), 0, label_encoder_prepare, label_map_free,
    compute_label_map },
  { "CategoryMapper", ML, 1, 0, T_BIT (STRING) | T_BIT (INT64), 0, category_mapper_prepare, label_map_free,
    compute_label_map },
  { "ArrayFeatureExtractor", ML, 1, 0, ML_NUMBERS | T_BIT (STRING), 0, NULL, NULL, compute_array_feature_extractor },
  { "FeatureVectorizer", ML, 1, 0, ML_NUMBERS, 0, NULL, NULL, compute_feature_vectorizer },
  { "ZipMap", ML, 1, 0, T_BIT (FLOAT), 0, NULL, NULL, compute_zipmap },
  { NULL }
};
