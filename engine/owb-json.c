/* owb-json.c: the one JSON string and number writer of the engine, the tools and the libraries
 * over it: names come from model files, so anything may be in them. */
#include <owb/owb-json.h>

#include <math.h>
#include <string.h>

void
owb_json_append_string (GString *out, const char *s)
{
  g_autofree char *valid = g_utf8_make_valid (s != NULL ? s : "", -1);
  g_string_append_c (out, '"');
  for (const char *p = valid; *p; p++)
    {
      unsigned char c = (unsigned char) *p;
      switch (c)
        {
        case '"': g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        default:
          /* Control characters, and DEL, which terminals act on. */
          if (c < 0x20 || c == 0x7f)
            g_string_append_printf (out, "\\u%04x", c);
          else
            g_string_append_c (out, (char) c);
        }
    }
  g_string_append_c (out, '"');
}

/* v in the C locale with printf's conversion ('g' or 'f') at the given precision; JSON has no
 * NaN or infinity, so those are null. */
static void
append_formatted (GString *out, double v, char conversion, int precision)
{
  if (!isfinite (v))
    {
      g_string_append (out, "null");
      return;
    }
  char format[8], buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_snprintf (format, sizeof format, "%%.%d%c", precision, conversion);
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, format, v));
}

void
owb_json_append_number (GString *out, double v, int digits)
{
  append_formatted (out, v, 'g', CLAMP (digits, 1, 17));
}

void
owb_json_append_separator (GString *out)
{
  if (out->len > 0 && strchr ("{[:,", out->str[out->len - 1]) == NULL)
    g_string_append_c (out, ',');
}

void
owb_json_append_key (GString *out, const char *key)
{
  owb_json_append_separator (out);
  owb_json_append_string (out, key);
  g_string_append_c (out, ':');
}

void
owb_json_append_member_string (GString *out, const char *key, const char *value)
{
  owb_json_append_key (out, key);
  owb_json_append_string (out, value);
}

void
owb_json_append_member_string_or_null (GString *out, const char *key, const char *value)
{
  owb_json_append_key (out, key);
  if (value != NULL)
    owb_json_append_string (out, value);
  else
    g_string_append (out, "null");
}

void
owb_json_append_member_int (GString *out, const char *key, gint64 value)
{
  owb_json_append_key (out, key);
  g_string_append_printf (out, "%" G_GINT64_FORMAT, value);
}

void
owb_json_append_member_uint (GString *out, const char *key, guint64 value)
{
  owb_json_append_key (out, key);
  g_string_append_printf (out, "%" G_GUINT64_FORMAT, value);
}

void
owb_json_append_member_number (GString *out, const char *key, double value, int digits)
{
  owb_json_append_key (out, key);
  owb_json_append_number (out, value, digits);
}

void
owb_json_append_member_fixed (GString *out, const char *key, double value, int decimals)
{
  owb_json_append_key (out, key);
  append_formatted (out, value, 'f', CLAMP (decimals, 0, 17));
}

/* key NULL: an array item; otherwise a member. */
static void
begin (GString *out, const char *key, char open)
{
  if (key != NULL)
    owb_json_append_key (out, key);
  else
    owb_json_append_separator (out);
  g_string_append_c (out, open);
}

void
owb_json_begin_object (GString *out, const char *key)
{
  begin (out, key, '{');
}

void
owb_json_begin_array (GString *out, const char *key)
{
  begin (out, key, '[');
}
