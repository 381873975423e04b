/* owb-quant-overrides.c: per-tensor quantization choices from a JSON file (mixed precision): the
 * file is small and user-written, so a strict little reader with errors that give the line. */
#include "owb-quant-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *p, *start;
  const char *path;
} Reader;

static int
line_of (const Reader *r)
{
  int line = 1;
  for (const char *q = r->start; q < r->p; q++)
    line += *q == '\n';
  return line;
}

static gboolean
fail (Reader *r, GError **error, const char *what)
{
  g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s:%d: %s", r->path, line_of (r), what);
  return FALSE;
}

static void
skip_space (Reader *r)
{
  while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
    r->p++;
}

static gboolean
expect (Reader *r, char c, GError **error)
{
  skip_space (r);
  if (*r->p != c)
    {
      g_autofree char *msg = g_strdup_printf ("expected '%c'", c);
      return fail (r, error, msg);
    }
  r->p++;
  return TRUE;
}

static char *
read_string (Reader *r, GError **error)
{
  skip_space (r);
  if (*r->p != '"')
    {
      fail (r, error, "expected a string");
      return NULL;
    }
  r->p++;
  GString *s = g_string_new (NULL);
  while (*r->p && *r->p != '"')
    {
      if (*r->p == '\\')
        {
          r->p++;
          switch (*r->p)
            {
            case '"': case '\\': case '/': g_string_append_c (s, *r->p); break;
            case 'n': g_string_append_c (s, '\n'); break;
            case 't': g_string_append_c (s, '\t'); break;
            case 'r': g_string_append_c (s, '\r'); break;
            case 'b': g_string_append_c (s, '\b'); break;
            case 'f': g_string_append_c (s, '\f'); break;
            case 'u':
              {
                char hex[5] = { 0 };
                for (int i = 0; i < 4; i++)
                  {
                    if (!g_ascii_isxdigit (r->p[1 + i]))
                      {
                        g_string_free (s, TRUE);
                        fail (r, error, "bad \\u escape");
                        return NULL;
                      }
                    hex[i] = r->p[1 + i];
                  }
                g_string_append_unichar (s, (gunichar) strtoul (hex, NULL, 16));
                r->p += 4;
                break;
              }
            default:
              g_string_free (s, TRUE);
              fail (r, error, "bad escape in a string");
              return NULL;
            }
          r->p++;
        }
      else
        g_string_append_c (s, *r->p++);
    }
  if (*r->p != '"')
    {
      g_string_free (s, TRUE);
      fail (r, error, "unterminated string");
      return NULL;
    }
  r->p++;
  return g_string_free (s, FALSE);
}

static gboolean
read_number (Reader *r, double *v, GError **error)
{
  skip_space (r);
  char *end;
  errno = 0;
  *v = g_ascii_strtod (r->p, &end);
  if (end == r->p || errno == ERANGE)
    return fail (r, error, "expected a number");
  r->p = end;
  return TRUE;
}

static gboolean
parse_type (const char *name, OwbDataType *type)
{
  static const struct { const char *name; OwbDataType type; } types[] = {
    { "u8", OWB_TYPE_UINT8 }, { "uint8", OWB_TYPE_UINT8 }, { "s8", OWB_TYPE_INT8 }, { "int8", OWB_TYPE_INT8 },
    { "u16", OWB_TYPE_UINT16 }, { "uint16", OWB_TYPE_UINT16 }, { "s16", OWB_TYPE_INT16 }, { "int16", OWB_TYPE_INT16 },
    { "float", OWB_TYPE_UNDEFINED }, { "float32", OWB_TYPE_UNDEFINED },
  };
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    if (strcmp (name, types[i].name) == 0)
      {
        *type = types[i].type;
        return TRUE;
      }
  return FALSE;
}

/* {"type": "u16", "range": [lo, hi]} */
static gboolean
read_override (Reader *r, OwbDataType default_type, OwbQuantOverride *o, GError **error)
{
  o->type = default_type;
  o->has_range = FALSE;
  if (!expect (r, '{', error))
    return FALSE;
  skip_space (r);
  if (*r->p == '}')
    {
      r->p++;
      return TRUE;
    }
  for (;;)
    {
      g_autofree char *key = read_string (r, error);
      if (key == NULL || !expect (r, ':', error))
        return FALSE;
      if (strcmp (key, "type") == 0)
        {
          g_autofree char *t = read_string (r, error);
          if (t == NULL)
            return FALSE;
          if (!parse_type (t, &o->type))
            return fail (r, error, "\"type\": expected u8, s8, u16, s16 or float");
        }
      else if (strcmp (key, "range") == 0)
        {
          double lo, hi;
          if (!expect (r, '[', error) || !read_number (r, &lo, error) || !expect (r, ',', error)
              || !read_number (r, &hi, error) || !expect (r, ']', error))
            return FALSE;
          if (!(lo <= hi))
            return fail (r, error, "\"range\": [lo, hi] with lo <= hi");
          o->has_range = TRUE;
          o->lo = (float) lo;
          o->hi = (float) hi;
        }
      else
        {
          g_autofree char *msg = g_strdup_printf ("unknown key \"%s\" (expected \"type\" or \"range\")", key);
          return fail (r, error, msg);
        }
      skip_space (r);
      if (*r->p == ',')
        {
          r->p++;
          continue;
        }
      return expect (r, '}', error);
    }
}

GHashTable *
owb_quant_overrides_load (const char *path, OwbDataType default_type, GError **error)
{
  g_autofree char *text = NULL;
  gsize len;
  if (!g_file_get_contents (path, &text, &len, error))
    return NULL;
  if (strlen (text) != len)
    {
      g_set_error (error, OWB_ERROR, OWB_ERROR_INVALID_ARGUMENT, "%s: a NUL byte in a JSON file", path);
      return NULL;
    }
  Reader r = { text, text, path };
  g_autoptr (GHashTable) table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  if (!expect (&r, '{', error))
    return NULL;
  skip_space (&r);
  if (*r.p == '}')
    r.p++;
  else
    for (;;)
      {
        char *name = read_string (&r, error);
        if (name == NULL)
          return NULL;
        OwbQuantOverride *o = g_new0 (OwbQuantOverride, 1);
        g_hash_table_replace (table, name, o);
        if (!expect (&r, ':', error) || !read_override (&r, default_type, o, error))
          return NULL;
        skip_space (&r);
        if (*r.p == ',')
          {
            r.p++;
            continue;
          }
        if (!expect (&r, '}', error))
          return NULL;
        break;
      }
  skip_space (&r);
  if (*r.p)
    {
      fail (&r, error, "text after the JSON object");
      return NULL;
    }
  return g_steal_pointer (&table);
}
