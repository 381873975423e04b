/* owb-json.c: the one JSON string and number writer of the engine, the tools and the libraries
 * over it: names come from model files, so anything may be in them. */
#include <owb/owb-json.h>

#include <math.h>

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

void
owb_json_append_number (GString *out, double v, int digits)
{
  if (!isfinite (v))
    {
      g_string_append (out, "null");
      return;
    }
  char format[8], buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_snprintf (format, sizeof format, "%%.%dg", CLAMP (digits, 1, 17));
  g_string_append (out, g_ascii_formatd (buf, sizeof buf, format, v));
}
