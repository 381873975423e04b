/* owb-tensor-compare.c: one comparison of an expected value with a computed one, within rtol and
 * atol, for `owb check`, the conformance test and the app's Run page; and the largest absolute
 * and relative errors a person reads when deciding how far apart they are. */
#include <owb/owb-tensor-compare.h>

#include "owb-tensor-private.h"

#include <math.h>
#include <string.h>



static char *
index_text (const OwbTensor *t, int64_t flat)
{
  GString *s = g_string_new (NULL);
  int64_t idx[OWB_MAX_RANK];

  g_string_append_printf (s, "%" G_GINT64_FORMAT, (gint64) flat);
  if (t->rank > 1)
    {
      for (int d = t->rank - 1; d >= 0; d--)
        {
          idx[d] = t->dims[d] > 0 ? flat % t->dims[d] : 0;
          flat = t->dims[d] > 0 ? flat / t->dims[d] : 0;
        }
      g_string_append (s, " [");
      for (int d = 0; d < t->rank; d++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "," : "", (gint64) idx[d]);
      g_string_append_c (s, ']');
    }
  return g_string_free (s, FALSE);
}

static char *
shape_text (const OwbTensor *t)
{
  GString *s = g_string_new ("[");
  for (int d = 0; d < t->rank; d++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "," : "", (gint64) t->dims[d]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

static const char *
kind_text (OwbValueKind kind)
{
  switch (kind)
    {
    case OWB_VALUE_TENSOR: return "a tensor";
    case OWB_VALUE_SEQUENCE: return "a sequence";
    case OWB_VALUE_OPTIONAL: return "an optional";
    case OWB_VALUE_MAP: return "a map";
    case OWB_VALUE_SPARSE_TENSOR: return "a sparse tensor";
    default: return "a value of unknown kind";
    }
}

static gboolean
close_enough (double e, double g, double rtol, double atol)
{
  if (isnan (e) || isnan (g))
    return isnan (e) && isnan (g);
  if (e == g) /* also equal infinities */
    return TRUE;
  /* With an infinite expected value the tolerance would be infinite too. */
  if (isinf (e) || isinf (g))
    return FALSE;
  return fabs (g - e) <= atol + rtol * fabs (e);
}

typedef struct {
  int64_t n_bad;
  int64_t first;
  double max_diff;
} Mismatch;

static void
note_bad (Mismatch *m, int64_t i, double diff)
{
  if (m->n_bad++ == 0)
    m->first = i;
  if (!isnan (diff) && diff > m->max_diff)
    m->max_diff = diff;
}

/* Real-valued elements read through the tensor API (float16, bfloat16 included). */
static void
compare_reals (const OwbTensor *e, const OwbTensor *g, double rtol, double atol, Mismatch *m)
{
  if (e->dtype == OWB_TYPE_FLOAT)
    {
      const float *a = e->data, *b = g->data;
      for (int64_t i = 0; i < e->nelems; i++)
        if (!close_enough (a[i], b[i], rtol, atol))
          note_bad (m, i, fabs ((double) b[i] - a[i]));
    }
  else if (e->dtype == OWB_TYPE_DOUBLE)
    {
      const double *a = e->data, *b = g->data;
      for (int64_t i = 0; i < e->nelems; i++)
        if (!close_enough (a[i], b[i], rtol, atol))
          note_bad (m, i, fabs (b[i] - a[i]));
    }
  else
    for (int64_t i = 0; i < e->nelems; i++)
      {
        double a = owb_tensor_get_double (e, i), b = owb_tensor_get_double (g, i);
        if (!close_enough (a, b, rtol, atol))
          note_bad (m, i, fabs (b - a));
      }
}

static gboolean
is_integer_type (OwbDataType t)
{
  switch (t)
    {
    case OWB_TYPE_UINT8: case OWB_TYPE_INT8: case OWB_TYPE_UINT16: case OWB_TYPE_INT16:
    case OWB_TYPE_INT32: case OWB_TYPE_INT64: case OWB_TYPE_UINT32: case OWB_TYPE_UINT64:
    case OWB_TYPE_BOOL:
      return TRUE;
    default:
      return FALSE;
    }
}

static char *
element_text (const OwbTensor *t, int64_t i)
{
  if (t->dtype == OWB_TYPE_STRING)
    {
      const char *s = ((char *const *) t->data)[i];
      g_autofree char *escaped = g_strescape (s != NULL ? s : "", NULL);
      return g_strdup_printf ("\"%s\"", escaped);
    }
  if (_owb_data_type_is_float (t->dtype))
    return g_strdup_printf ("%.9g", owb_tensor_get_double (t, i));
  if (t->dtype == OWB_TYPE_COMPLEX64)
    {
      const float *p = (const float *) t->data + 2 * i;
      return g_strdup_printf ("(%.9g%+.9gi)", p[0], p[1]);
    }
  if (t->dtype == OWB_TYPE_COMPLEX128)
    {
      const double *p = (const double *) t->data + 2 * i;
      return g_strdup_printf ("(%.17g%+.17gi)", p[0], p[1]);
    }
  if (t->dtype == OWB_TYPE_UINT64)
    return g_strdup_printf ("%" G_GUINT64_FORMAT, ((const guint64 *) t->data)[i]);
  if (is_integer_type (t->dtype))
    return g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) owb_tensor_get_int64 (t, i));
  if (owb_data_type_size (t->dtype) == 1)
    return g_strdup_printf ("0x%02x", ((const guint8 *) t->data)[i]);
  return g_strdup ("?");
}

static gboolean
compare_tensors (const OwbTensor *e, const OwbTensor *g, double rtol, double atol, char **message)
{
  Mismatch m = { 0, -1, 0 };

  if (e->dtype != g->dtype)
    {
      *message = g_strdup_printf ("expected %s values, got %s", owb_data_type_name (e->dtype),
                                  owb_data_type_name (g->dtype));
      return FALSE;
    }
  if (!owb_tensor_same_shape (e, g) || e->rank != g->rank || e->nelems != g->nelems)
    {
      g_autofree char *es = shape_text (e), *gs = shape_text (g);
      *message = g_strdup_printf ("expected shape %s, got %s", es, gs);
      return FALSE;
    }
  if (e->nelems == 0)
    return TRUE;
  if ((e->data == NULL || g->data == NULL) && e->nbytes > 0)
    {
      *message = g_strdup ("a tensor has no data");
      return FALSE;
    }

  if (_owb_data_type_is_float (e->dtype))
    compare_reals (e, g, rtol, atol, &m);
  else if (e->dtype == OWB_TYPE_COMPLEX64 || e->dtype == OWB_TYPE_COMPLEX128)
    {
      for (int64_t i = 0; i < e->nelems; i++)
        for (int c = 0; c < 2; c++)
          {
            double a = e->dtype == OWB_TYPE_COMPLEX64 ? ((const float *) e->data)[2 * i + c]
                                                      : ((const double *) e->data)[2 * i + c];
            double b = e->dtype == OWB_TYPE_COMPLEX64 ? ((const float *) g->data)[2 * i + c]
                                                      : ((const double *) g->data)[2 * i + c];
            if (!close_enough (a, b, rtol, atol))
              {
                note_bad (&m, i, fabs (b - a));
                break;
              }
          }
    }
  else if (e->dtype == OWB_TYPE_STRING)
    {
      char *const *a = e->data, *const *b = g->data;
      for (int64_t i = 0; i < e->nelems; i++)
        if (g_strcmp0 (a[i] != NULL ? a[i] : "", b[i] != NULL ? b[i] : "") != 0)
          note_bad (&m, i, NAN);
    }
  else if (is_integer_type (e->dtype))
    {
      gsize size = owb_data_type_size (e->dtype);
      const guint8 *a = e->data, *b = g->data;
      if (e->dtype == OWB_TYPE_BOOL)
        {
          for (int64_t i = 0; i < e->nelems; i++)
            if ((a[i] != 0) != (b[i] != 0))
              note_bad (&m, i, NAN);
        }
      else
        for (int64_t i = 0; i < e->nelems; i++)
          if (memcmp (a + i * size, b + i * size, size) != 0)
            note_bad (&m, i, NAN);
    }
  else
    {
      /* float8 and 4-bit types: exact bytes (their NaNs have one encoding). */
      gsize n = MIN (e->nbytes, g->nbytes);
      gsize size = owb_data_type_size (e->dtype);
      const guint8 *a = e->data, *b = g->data;
      if (e->nbytes != g->nbytes)
        {
          *message = g_strdup_printf ("expected %" G_GSIZE_FORMAT " bytes of %s data, got %" G_GSIZE_FORMAT, e->nbytes,
                                      owb_data_type_name (e->dtype), g->nbytes);
          return FALSE;
        }
      for (gsize i = 0; i < n; i++)
        if (a[i] != b[i])
          note_bad (&m, size == 1 ? (int64_t) i : (int64_t) (i * 2), NAN);
      if (size != 1 && m.n_bad > 0)
        {
          *message = g_strdup_printf ("packed %s data differs at byte %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT
                                      " of %" G_GSIZE_FORMAT " bytes differ)", owb_data_type_name (e->dtype),
                                      (gint64) (m.first / 2), (gint64) m.n_bad, e->nbytes);
          return FALSE;
        }
    }

  if (m.n_bad == 0)
    return TRUE;

  {
    g_autofree char *where = index_text (e, m.first);
    g_autofree char *ev = element_text (e, m.first);
    g_autofree char *gv = element_text (g, m.first);
    GString *s = g_string_new (NULL);
    g_string_append_printf (s, "at index %s: expected %s, got %s (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                            " elements differ", where, ev, gv, (gint64) m.n_bad, (gint64) e->nelems);
    if (_owb_data_type_is_float (e->dtype) || e->dtype == OWB_TYPE_COMPLEX64 || e->dtype == OWB_TYPE_COMPLEX128)
      g_string_append_printf (s, ", largest difference %.3g, rtol %g atol %g", m.max_diff, rtol, atol);
    g_string_append_c (s, ')');
    *message = g_string_free (s, FALSE);
  }
  return FALSE;
}

static gboolean
compare_values (const OwbTensor *expected, const OwbTensor *got, double rtol, double atol, char **message)
{
  if (got == NULL)
    {
      *message = g_strdup ("no value was produced");
      return FALSE;
    }
  if (expected->kind != got->kind)
    {
      *message = g_strdup_printf ("expected %s, got %s", kind_text (expected->kind), kind_text (got->kind));
      return FALSE;
    }
  if (expected->kind == OWB_VALUE_SEQUENCE || expected->kind == OWB_VALUE_OPTIONAL)
    {
      guint ne = expected->sequence ? expected->sequence->len : 0;
      guint ng = got->sequence ? got->sequence->len : 0;
      if (ne != ng)
        {
          if (expected->kind == OWB_VALUE_OPTIONAL)
            *message = g_strdup_printf ("expected an optional %s, got one %s", ne ? "with a value" : "without a value",
                                        ng ? "with a value" : "without a value");
          else
            *message = g_strdup_printf ("expected %u sequence elements, got %u", ne, ng);
          return FALSE;
        }
      for (guint i = 0; i < ne; i++)
        {
          g_autofree char *inner = NULL;
          if (!compare_values (expected->sequence->pdata[i], got->sequence->pdata[i], rtol, atol, &inner))
            {
              *message = g_strdup_printf ("element %u: %s", i, inner);
              return FALSE;
            }
        }
      return TRUE;
    }
  if (expected->kind == OWB_VALUE_MAP)
    {
      /* Same keys in the same order (exactly), then the values within tolerance. */
      if (!expected->sequence || expected->sequence->len != 2 || !got->sequence || got->sequence->len != 2)
        {
          *message = g_strdup ("a map value is malformed");
          return FALSE;
        }
      g_autofree char *inner = NULL;
      if (!compare_tensors (expected->sequence->pdata[0], got->sequence->pdata[0], 0, 0, &inner))
        {
          *message = g_strdup_printf ("map keys: %s", inner);
          return FALSE;
        }
      if (!compare_tensors (expected->sequence->pdata[1], got->sequence->pdata[1], rtol, atol, &inner))
        {
          *message = g_strdup_printf ("map values: %s", inner);
          return FALSE;
        }
      return TRUE;
    }
  if (expected->kind != OWB_VALUE_TENSOR)
    {
      *message = g_strdup_printf ("cannot compare %s", kind_text (expected->kind));
      return FALSE;
    }
  return compare_tensors (expected, got, rtol, atol, message);
}

/* Largest errors over the pairs that are both finite; integers and bools count as reals. A pair
 * where expected is 0 and got is not has an infinite relative error, as numpy reports it. */
static void
accumulate_errors (const OwbTensor *e, const OwbTensor *g, OwbTensorComparison *result)
{
  if (!_owb_data_type_is_float (e->dtype) && !is_integer_type (e->dtype))
    return;
  for (int64_t i = 0; i < e->nelems; i++)
    {
      double a = owb_tensor_get_double (e, i), b = owb_tensor_get_double (g, i);
      if (!isfinite (a) || !isfinite (b))
        continue;
      double diff = fabs (b - a);
      double rel = diff == 0 ? 0 : a != 0 ? diff / fabs (a) : INFINITY;
      if (diff > result->max_abs_error)
        result->max_abs_error = diff;
      if (rel > result->max_rel_error)
        result->max_rel_error = rel;
    }
}

static void
accumulate (const OwbTensor *e, const OwbTensor *g, OwbTensorComparison *result)
{
  if (e == NULL || g == NULL || e->kind != g->kind)
    return;
  if (e->kind == OWB_VALUE_TENSOR)
    {
      if (e->dtype != g->dtype || e->nelems != g->nelems || !owb_tensor_same_shape (e, g)
          || (e->nelems > 0 && (e->data == NULL || g->data == NULL)))
        return;
      result->n_elements += e->nelems;
      accumulate_errors (e, g, result);
      return;
    }
  guint ne = e->sequence ? e->sequence->len : 0, ng = g->sequence ? g->sequence->len : 0;
  for (guint i = 0; i < MIN (ne, ng); i++)
    accumulate (e->sequence->pdata[i], g->sequence->pdata[i], result);
}

gboolean
owb_tensor_compare (const OwbTensor *expected, const OwbTensor *got, double rtol, double atol,
                    OwbTensorComparison *result, char **message)
{
  g_return_val_if_fail (expected != NULL, FALSE);
  char *why = NULL;
  gboolean same = compare_values (expected, got, rtol, atol, &why);

  if (result != NULL)
    {
      memset (result, 0, sizeof *result);
      accumulate (expected, got, result);
    }
  if (message != NULL)
    *message = why;
  else
    g_free (why);
  return same;
}
